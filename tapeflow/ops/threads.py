"""How many threads NumPy's BLAS may use, per kernel call.

OpenBLAS starts one busy-waiting thread per core and uses them all on every
large product. On a machine where another process is busy that is a disaster
(threads spin against the neighbour and each product waits for the slowest:
a CNN step can run 10x slower), and for small products waking threads costs
more than it saves. TensorFlow's own pool does not have that problem, so
tapeflow chooses for the user, as TF does without being asked:

* a product below ``SMALL_WORK`` multiply-adds runs on one thread;
* a larger one uses ``tf.config.threading.set_intra_op_parallelism_threads``'s
  count when set, otherwise the CPUs this process may run on, less the other
  processes currently running (``/proc/loadavg``, sampled at most every
  ``SAMPLE_S`` seconds and smoothed), never fewer than one.

Nothing changes when the user already chose: an ``OPENBLAS_NUM_THREADS``/
``OMP_NUM_THREADS``/``MKL_NUM_THREADS`` environment variable disables the
automatic choice, and a limit set from outside (``threadpoolctl``'s
``threadpool_limits``, NumPy's BLAS calls) is kept while it is in force.
The BLAS is reached through ``threadpoolctl`` when installed, else through
the OpenBLAS that NumPy bundles (``ctypes``); with neither nothing is set.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from tapeflow.ops import registry

SMALL_WORK = 1 << 22  # multiply-adds: below this one thread is faster (wake-up costs ~10-50 us)
SAMPLE_S = 0.2

_ENV_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "GOTO_NUM_THREADS", "BLIS_NUM_THREADS")


class _Blas:
    def __init__(self) -> None:
        self.ready = False
        self.get: Callable[[], int] | None = None
        self.set: Callable[[int], Any] | None = None
        self.last: int | None = None  # what we last set (or found at start)
        self.intra = 0  # tf.config.threading's request; 0: automatic
        self.auto = not any(v in os.environ for v in _ENV_VARS)
        try:
            self.ncpu = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            self.ncpu = os.cpu_count() or 1
        self.others = 0.0  # smoothed count of other running processes
        self.sampled = 0.0

    def load(self) -> None:
        self.ready = True
        try:
            from threadpoolctl import ThreadpoolController

            libs = ThreadpoolController().select(user_api="blas").lib_controllers
            if libs:
                lib = libs[0]
                self.get, self.set = lib.get_num_threads, lib.set_num_threads
        except Exception:  # noqa: BLE001 - optional: fall back to ctypes below
            self.get = None
        if self.get is None:
            self._load_ctypes()
        if self.get is not None:
            try:
                self.last = int(self.get())
            except Exception:  # noqa: BLE001 - an unusable library: leave BLAS alone
                self.get = self.set = None

    def _load_ctypes(self) -> None:
        import ctypes
        import glob

        import numpy as np

        libdir = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
        for path in sorted(glob.glob(os.path.join(libdir, "*openblas*.so*"))):
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for prefix, suffix in (
                ("scipy_openblas", "64_"),
                ("scipy_openblas", ""),
                ("openblas", "64_"),
                ("openblas", ""),
            ):
                get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                set_ = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if get is not None and set_ is not None:
                    get.restype = ctypes.c_int
                    set_.argtypes = [ctypes.c_int]
                    self.get, self.set = get, set_
                    return

    def free_cpus(self) -> int:
        now = time.monotonic()
        if now - self.sampled >= SAMPLE_S:
            self.sampled = now
            others = _other_running()
            if others is not None:
                self.others = others if self.others == 0.0 else 0.5 * self.others + 0.5 * others
        return max(1, self.ncpu - int(self.others + 0.5))

    def want(self, work: float) -> int | None:
        if work < SMALL_WORK:
            return 1
        if self.intra > 0:
            return self.intra
        if not self.auto:
            return None
        return self.free_cpus()


_blas = _Blas()


def _other_running() -> int | None:
    """Runnable threads on the machine that are not this process's."""
    try:
        with open("/proc/loadavg") as f:
            running = int(f.read().split()[3].split("/")[0])
        mine = 0
        for tid in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{tid}/stat") as f:
                    if f.read().rpartition(")")[2].split()[0] == "R":
                        mine += 1
            except OSError:
                continue
        return max(0, running - max(mine, 1))
    except (OSError, ValueError, IndexError):
        return None


def before_blas(work: float) -> None:
    """Sets the BLAS thread count for a kernel of ``work`` multiply-adds."""
    b = _blas
    if not b.ready:
        b.load()
    if b.set is None or (not b.auto and b.intra <= 0):
        return
    n = b.want(work)
    if n is None or n == b.last:
        return
    if int(b.get()) != b.last:
        return  # someone else set a limit (threadpool_limits): keep it while it lasts
    b.set(n)
    b.last = n


def set_intra_op_threads(n: int) -> None:
    """``tf.config.threading.set_intra_op_parallelism_threads``: 0 chooses automatically."""
    _blas.intra = max(0, int(n))


def blas_threads() -> int | None:
    """The BLAS's current thread count (None when it cannot be reached)."""
    b = _blas
    if not b.ready:
        b.load()
    return None if b.get is None else int(b.get())


def _matmul_work(a, b, transpose_a=False, transpose_b=False) -> float:
    sb = b.shape
    if a.ndim < 2 or len(sb) < 2:
        return 0.0
    return float(a.size) * (sb[-2] if transpose_b else sb[-1])  # batch x m x k x n (a's batch)


def _conv_work(x, w, **attrs) -> float:  # Conv2D: output elements x kh*kw*ci
    return float(x.size) * w.size / max(w.shape[-2], 1)


def _conv_input_work(w, dy, **attrs) -> float:  # Conv2DBackpropInput
    return float(dy.size) * w.size / max(w.shape[-1], 1)


def _conv_filter_work(x, dy, filter_sizes, **attrs) -> float:  # Conv2DBackpropFilter
    k = 1
    for d in tuple(filter_sizes)[:-1]:
        k *= int(d)
    return float(dy.size) * k


_WORK = {
    "BatchMatMulV2": _matmul_work,
    "Conv2D": _conv_work,
    "Conv2DBackpropInput": _conv_input_work,
    "Conv2DBackpropFilter": _conv_filter_work,
}


def _threaded(kernel: Callable, work: Callable) -> Callable:
    def run(*args, **attrs):
        before_blas(work(*args, **attrs))
        return kernel(*args, **attrs)

    run.__wrapped__ = kernel
    run.__name__ = getattr(kernel, "__name__", "kernel")
    return run


def install() -> None:
    """Wraps the BLAS-heavy kernels of the registry (once, at import)."""
    for name, work in _WORK.items():
        op = registry._OPS.get(name)
        if op is not None and not hasattr(op.kernel, "__wrapped__"):
            op.kernel = _threaded(op.kernel, work)
