"""The package's layering: pyproject.toml's import-linter contracts hold (every import statement counts,
those inside functions too), and the op registry is complete, its BLAS-heavy kernels wrapped, once
``tapeflow`` is imported."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_blas_heavy_kernels_are_wrapped_after_import():
    out = _run("import tapeflow\nfrom tapeflow.ops import threads\nfrom tapeflow.ops import registry\n"
               "print(sorted(n for n in threads._WORK if not hasattr(registry._OPS[n].kernel, '__wrapped__')))")
    assert out == "[]"


def test_import_starts_no_subprocess():
    # (ctypes.util.find_library runs ldconfig: tens of milliseconds of every import, once)
    out = _run("import subprocess\ncalls = []\norig = subprocess.Popen.__init__\n"
               "def spy(self, *a, **k):\n    calls.append(a[:1])\n    orig(self, *a, **k)\n"
               "subprocess.Popen.__init__ = spy\nimport tapeflow\nprint(calls)")
    assert out == "[]"


def _lint_imports(root: str) -> subprocess.CompletedProcess:
    exe = os.path.join(os.path.dirname(sys.executable), "lint-imports")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    return subprocess.run([exe, "--no-cache"], cwd=root, env=env, capture_output=True, text=True)


def test_import_contracts_hold():
    out = _lint_imports(ROOT)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "3 kept, 0 broken" in out.stdout


def test_a_lazy_import_from_an_upper_layer_breaks_the_contract(tmp_path):
    # A copy of the package where a framework function imports Keras inside its body: lint-imports fails.
    import shutil

    shutil.copytree(os.path.join(ROOT, "tapeflow"), tmp_path / "tapeflow",
                    ignore=shutil.ignore_patterns("__pycache__", "*.npz", "*.gz"))
    shutil.copy(os.path.join(ROOT, "pyproject.toml"), tmp_path / "pyproject.toml")
    with open(tmp_path / "tapeflow" / "framework" / "missing.py", "a") as f:
        f.write("\n\ndef _late():\n    from tapeflow.keras import layers  # noqa: F401\n")
    out = _lint_imports(str(tmp_path))
    assert out.returncode != 0
    assert "tapeflow.framework.missing -> tapeflow.keras.layers" in out.stdout
