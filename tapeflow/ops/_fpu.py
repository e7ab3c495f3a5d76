"""Subnormal floats flushed to zero around a kernel, as TensorFlow runs its kernels.

TF sets the CPU's flush-to-zero and denormals-are-zero modes on the threads that run its ops
(``tensorflow/core/platform/denormal.h``, ``ScopedFlushDenormal``): a subnormal result becomes a zero of
its sign, a subnormal input counts as zero (``tf.constant(1e-30) * 1e-10`` is 0.0 in TF). NumPy keeps
subnormals, and on x86 every operation that meets one runs ~30x slower in microcode. Where a kernel's
state decays into them step after step -- Adam's momentum of a weight whose gradient stays 0 (an
always-black pixel, a dead ReLU unit) sinks into the subnormals and sticks there a few ulps above
zero -- the kernel runs inside ``flush_denormals()``: its values are then TF's and it keeps its speed.

The modes live in the MXCSR register of each thread (x86-64; set through glibc's ``fegetenv``/``fesetenv``,
whose ``fenv_t`` holds MXCSR at byte 28). Elsewhere ``flush_denormals()`` does nothing.
"""

from __future__ import annotations

import ctypes
import platform
import sys
import threading
from typing import Any

_FTZ_DAZ = 0x8040  # MXCSR bits: flush to zero (15), denormals are zero (6)
_MXCSR = slice(28, 32)  # where glibc's x86-64 fenv_t keeps it
_local = threading.local()
_libc: Any = None


def _load() -> Any:
    global _libc
    if _libc is None:
        _libc = False
        if sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64") \
                and platform.libc_ver()[0] == "glibc":
            try:
                libc = ctypes.CDLL(None)
                libc.fegetenv, libc.fesetenv  # noqa: B018 - both must exist
                _libc = libc
            except (OSError, AttributeError):
                _libc = False
    return _libc


class flush_denormals:  # noqa: N801 - used like a function: ``with flush_denormals():``
    """Runs its block with subnormals flushed to zero on this thread (a no-op off x86-64 glibc Linux, or
    when the modes are already on); the thread's previous modes come back on exit."""

    __slots__ = ("old",)

    def __enter__(self) -> None:
        self.old = None
        libc = _libc if _libc is not None else _load()
        if not libc:
            return
        env = getattr(_local, "env", None)
        if env is None:
            env = _local.env = (ctypes.c_ubyte * 32)()
        if libc.fegetenv(env):
            return
        mxcsr = int.from_bytes(bytes(env[_MXCSR]), "little")
        if mxcsr & _FTZ_DAZ == _FTZ_DAZ:
            return
        env[_MXCSR] = (mxcsr | _FTZ_DAZ).to_bytes(4, "little")
        if not libc.fesetenv(env):
            self.old = mxcsr

    def __exit__(self, *exc: Any) -> None:
        if self.old is not None:
            env = _local.env
            env[_MXCSR] = self.old.to_bytes(4, "little")
            _libc.fesetenv(env)
