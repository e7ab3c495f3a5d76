"""The package's layering: the op registry is complete, and its BLAS-heavy kernels wrapped, once
``tapeflow`` is imported."""

import subprocess
import sys


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_blas_heavy_kernels_are_wrapped_after_import():
    out = _run("import tapeflow\nfrom tapeflow.ops import threads\nfrom tapeflow.ops import registry\n"
               "print(sorted(n for n in threads._WORK if not hasattr(registry._OPS[n].kernel, '__wrapped__')))")
    assert out == "[]"
