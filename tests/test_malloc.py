"""glibc malloc settings made at import (tapeflow.ops._malloc)."""

import os
import platform
import resource
import subprocess
import sys

import numpy as np
import pytest

import tapeflow  # noqa: F401 - applies the settings
from tapeflow.ops import _malloc

glibc = pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")


@glibc
def test_large_temporaries_reuse_their_pages():
    if not _malloc.applied:
        pytest.skip("the user's environment chose malloc settings")
    a = np.ones((1 << 20,), np.float32)  # 4 MB, 1,024 pages
    arrays = [a * 2 for _ in range(16)]  # a step's worth of temporaries: 64 MB
    del arrays
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(3):
        arrays = [a * 2 for _ in range(16)]  # glibc's defaults: ~8,000 fresh pages each time (measured)
        del arrays
    assert resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before < 2000


@glibc
@pytest.mark.parametrize("var", ["MALLOC_TRIM_THRESHOLD_", "TAPEFLOW_MALLOC"])
def test_the_users_environment_wins(var):
    env = dict(os.environ, **{var: "0" if var == "TAPEFLOW_MALLOC" else "131072"})
    out = subprocess.run([sys.executable, "-c", "import tapeflow; from tapeflow.ops import _malloc; "
                          "print(_malloc.applied)"], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.strip() == "False", out.stderr[-2000:]
