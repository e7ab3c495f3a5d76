"""How many threads NumPy's BLAS may use, per kernel call.

OpenBLAS starts one busy-waiting thread per core and uses them all on every
large product. On a machine where another process is busy that is a disaster
(threads spin against the neighbour and each product waits for the slowest:
a CNN step can run 10x slower), and for small products waking threads costs
more than it saves. TensorFlow's own pool does not have that problem, so
tapeflow chooses for the user, as TF does without being asked:

* a product below ``SMALL_WORK`` multiply-adds runs on one thread;
* a larger one that cannot be split uses
  ``tf.config.threading.set_intra_op_parallelism_threads``'s count when set,
  otherwise the CPUs this process may run on, less the other processes
  currently running (``/proc/loadavg``, sampled at most every ``SAMPLE_S``
  seconds and smoothed), never fewer than one;
* a large matmul or 2-D convolution instead runs in chunks (row blocks, groups
  of images) on Python threads, each with a one-thread BLAS (``parallel_for``
  below), so OpenBLAS's own spinning workers stay idle: the intra-op count of
  threads when set, otherwise one per CPU, however busy the machine (as TF:
  see ``workers``). Chunks are handed out one at a time, so a thread the
  machine does not schedule takes none, and results do not depend on the
  thread count.

Nothing changes when the user already chose: an ``OPENBLAS_NUM_THREADS``/
``OMP_NUM_THREADS``/``MKL_NUM_THREADS`` environment variable disables the
automatic choice, and a limit set from outside (``threadpoolctl``'s
``threadpool_limits``, NumPy's BLAS calls) is kept while it is in force.
The BLAS is reached through ``threadpoolctl`` when installed, else through
the OpenBLAS that NumPy bundles (``ctypes``); with neither nothing is set.
"""

from __future__ import annotations

import os
import threading
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
        self.inter = 0  # the same for inter-op threads (spawn below)
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
        if work < SMALL_WORK or _INFLIGHT[0] or getattr(_IN_PART, "on", False):
            return 1  # (also beside an inter-op task, and inside a chunk: one BLAS thread each)
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


_WORK = {"BatchMatMulV2": _matmul_work}


# -- kernels run in chunks on a small pool of threads -------------------------------------
#
# A convolution's im2col copy and product are independent per image, so a large one runs its
# chunks of images (and a large matmul its row blocks) on a few Python threads (NumPy releases
# the GIL for both), each with a one-thread BLAS: the copies run in parallel too (OpenBLAS's own
# threads share only the product), and a waiting thread blocks instead of spinning. The BLAS then
# never runs more than one thread of its own: after each multi-threaded call OpenBLAS's workers
# busy-wait for the next one, and beside the Python threads they took a whole CPU (a CNN fit
# measured 3x the CPU seconds of one thread, no faster, when only its dense products used two BLAS
# threads).
#
# Chunks are handed out one at a time (parallel_for): the calling thread takes them too, so a helper
# the machine does not schedule soon (a busy neighbour, an oversubscribed machine) just takes fewer
# or none, and the call waits only for a chunk a helper has already started. A static split into
# one part per thread waited for its slowest part: beside a CPU-bound neighbour every call waited
# for a time slice. Chunk boundaries never depend on the thread count, so results do not either.

_POOL: Any = None
_POOL_PID = 0
_POOL_LOCK = threading.Lock()
_IN_PART = threading.local()


class _Job:
    __slots__ = ("fn", "n", "next", "busy", "cond", "error")

    def __init__(self, fn: Callable[[int], Any], n: int) -> None:
        self.fn, self.n, self.next, self.busy, self.error = fn, n, 0, 0, None
        self.cond = threading.Condition(threading.Lock())


def _take(job: _Job, helper: bool) -> None:
    """Runs chunks of ``job`` until none is left; a helper counts itself busy while it runs one."""
    cond = job.cond
    while True:
        with cond:
            i = job.next
            if i >= job.n:
                return
            job.next = i + 1
            if helper:
                job.busy += 1
        try:
            job.fn(i)
        except BaseException as e:  # noqa: BLE001 - re-raised by the calling thread
            with cond:
                job.error = job.error or e
                job.next = job.n
        finally:
            if helper:
                with cond:
                    job.busy -= 1
                    if not job.busy:
                        cond.notify_all()


class _Pool:
    """Helper threads that take chunks of the jobs put on their queue."""

    def __init__(self, n: int) -> None:
        import queue

        self.size = n
        self.queue: Any = queue.SimpleQueue()
        for k in range(n):
            threading.Thread(target=self._loop, name=f"tapeflow-intra-{k}", daemon=True).start()

    def _loop(self) -> None:
        _IN_PART.on = True
        while True:
            job = self.queue.get()
            if job is None:
                return
            _take(job, True)


def _pool(n: int) -> _Pool:
    """A pool of at least ``n`` helper threads (a new one after fork: the parent's threads are gone)."""
    global _POOL, _POOL_PID
    with _POOL_LOCK:
        if _POOL is None or _POOL.size < n or _POOL_PID != os.getpid():
            if _POOL is not None and _POOL_PID == os.getpid():
                for _ in range(_POOL.size):
                    _POOL.queue.put(None)
            _POOL = _Pool(n)
            _POOL_PID = os.getpid()
        return _POOL


def workers(work: float) -> int:
    """How many threads a kernel of ``work`` multiply-adds (or element passes) may run its chunks on:
    1 below SMALL_WORK, inside a chunk, under an outside BLAS limit or a user's BLAS environment
    variable; else the intra-op count when set, otherwise one per CPU this process may run on, busy
    machine or not, as TF's pools. The scheduler shares the CPUs among groups of processes (sessions)
    and then among their threads, so a one-thread process beside a CPU-bound neighbour of its own
    group gets little: the CNN fit ran 8-16 steps/s on one thread there and 15-54 on two (five runs,
    load 6-7, 2026-12-02 18:17-18:31 UTC; bench_fashion's neighbour rounds 12 -> 19-20 steps/s). The
    cost: with the load in other groups only, one thread measured 0-30% faster (load 6-9), since a
    call that waits for a helper gives up its CPU. (Choosing per window of calls by measured time,
    or per call site, was tried and left out: the noise of a shared machine swamped it.)"""
    b = _blas
    if not b.ready:
        b.load()
    if work < SMALL_WORK or getattr(_IN_PART, "on", False):
        return 1
    n = min(b.intra, 8) if b.intra > 0 else min(b.ncpu, 8) if b.auto else 1
    # (asked only when it matters: reading the BLAS's count costs ~10 us through threadpoolctl)
    if n > 1 and b.set is not None and b.last is not None and int(b.get()) != b.last:
        return 1  # an outside limit (threadpool_limits) is in force: keep to one thread
    return n


def parallel_for(n: int, fn: Callable[[int], Any], work: float = float("inf")) -> None:
    """Calls ``fn(i)`` for every ``i`` in ``range(n)``, on up to ``workers(work)`` threads (this one
    among them), each chunk once, with a one-thread BLAS; returns when all are done and re-raises the
    first exception a chunk raised. ``fn`` must write only its own chunk's results."""
    k = min(workers(work), n) if n > 1 else 1
    before_blas(0.0)  # one BLAS thread per chunk
    if k <= 1:
        for i in range(n):
            fn(i)
        return
    job = _Job(fn, n)
    pool = _pool(k - 1)
    for _ in range(k - 1):
        pool.queue.put(job)
    _IN_PART.on = True
    try:
        _take(job, False)
    finally:
        _IN_PART.on = False
        with job.cond:
            while job.busy:
                job.cond.wait()
    if job.error is not None:
        raise job.error


def _parts(batch: int) -> int:
    """How many parts a large product is split into: one per CPU this process may use (at most 8), however
    many threads then run them, so that its bits never depend on the thread count (OpenBLAS's sgemm rounds
    a row block's products differently by the block's height: a 32-row product split in two halves is not
    the same bits as the whole)."""
    b = _blas
    if not b.ready:
        b.load()
    return max(1, min(b.ncpu, 8, batch))


def _split_run(kernel: Callable, args: tuple, attrs: dict, parts: int, slicer: Callable, combine: Callable):
    batch = slicer(args, None, **attrs)
    bounds = [batch * i // parts for i in range(parts + 1)]
    pieces = [slicer(args, (bounds[i], bounds[i + 1]), **attrs) for i in range(parts)]
    outs: list = [None] * parts

    def one(i):
        outs[i] = kernel(*pieces[i], **attrs)

    parallel_for(parts, one)
    return combine(outs)


def _matmul_rows(args, rng, transpose_a=False, **attrs):
    """BatchMatMulV2 split over the output's rows (a 2-D ``a``) or over a batch both operands share.
    (The transpose flags come as attributes or, from the tape's fast rules, positionally.)"""
    a, b, rest = args[0], args[1], args[2:]
    if rest:
        transpose_a = rest[0]
    if a.ndim == 2 and b.ndim == 2:
        if rng is None:
            return a.shape[1] if transpose_a else a.shape[0]
        return (a[:, rng[0]:rng[1]] if transpose_a else a[rng[0]:rng[1]], b) + rest
    if a.ndim >= 3 and (b.ndim == 2 or a.shape[:-2] == b.shape[:-2]):  # a's leading axis is the output's
        if rng is None:
            return a.shape[0]
        return (a[rng[0]:rng[1]], b if b.ndim == 2 else b[rng[0]:rng[1]]) + rest
    return 1 if rng is None else args  # broadcast batches: not split


def _concat(outs):
    import numpy as np

    return np.concatenate(outs, axis=0)


_SPLIT = {"BatchMatMulV2": (_matmul_rows, _concat)}  # (the 2-D convolutions run their own chunks: conv.py)


def _threaded(kernel: Callable, work: Callable, split: tuple | None = None) -> Callable:
    def run(*args, **attrs):
        w = work(*args, **attrs)
        if split is not None and w >= SMALL_WORK and args[0].dtype.kind == "f" and args[0].dtype.itemsize >= 4:
            batch = split[0](args, None, **attrs)
            parts = _parts(batch)
            if parts > 1:
                before_blas(0.0)  # one BLAS thread per part
                return _split_run(kernel, args, attrs, parts, *split)
        before_blas(w)
        return kernel(*args, **attrs)

    run.__wrapped__ = kernel
    run.__name__ = getattr(kernel, "__name__", "kernel")
    if work is _matmul_work:
        general = run

        def run(a, b, transpose_a=False, transpose_b=False):  # noqa: F811 - the matmul's own, leaner
            # A small product with the BLAS already on one thread (what before_blas would keep): the
            # kernel at once, without the general wrapper's keyword packing (a microsecond a call).
            # Any product, too, when the user's BLAS variable rules (its checks cost ~10 us a call).
            # A large one takes the general path even on one intra-op thread: its parts (see _parts).
            bl = _blas
            if bl.ready and bl.intra <= 0 and not bl.auto:
                return kernel(a, b, transpose_a, transpose_b)
            sb = b.shape
            if a.ndim >= 2 and len(sb) >= 2 and bl.last == 1 and bl.ready:
                if float(a.size) * (sb[-2] if transpose_b else sb[-1]) < SMALL_WORK:
                    return kernel(a, b, transpose_a, transpose_b)
            return general(a, b, transpose_a=transpose_a, transpose_b=transpose_b)

        run.__wrapped__ = kernel
        run.__name__ = general.__name__
    return run


def install() -> None:
    """Wraps the BLAS-heavy kernels of the registry (once, at import); also keeps glibc from
    returning the large arrays' pages to the kernel between steps (tapeflow.ops._malloc)."""
    from tapeflow.ops import _malloc

    _malloc.tune()
    for name, work in _WORK.items():
        op = registry._OPS.get(name)
        if op is not None and not hasattr(op.kernel, "__wrapped__"):
            op.kernel = _threaded(op.kernel, work, _SPLIT.get(name))


# -- inter-op: one kernel of a compiled graph beside the calling thread --------------------
#
# A compiled graph (graph/compiler.py) may hand a heavy op whose result is needed only later (a conv
# layer's filter gradient while the input gradient runs on, a Dense kernel's gradient and Adam update)
# to the inter-op thread and take its result where it is first needed, as TF's executor runs independent
# ops of a step at once. NumPy releases the GIL inside its loops and BLAS calls, so both run. A task runs
# its chunks alone (its kernels see one intra-op thread) and, while any task is in flight, the BLAS keeps
# to one thread of its own. ``tf.config.threading.set_inter_op_parallelism_threads(1)`` runs every op in
# order on the calling thread; 0 (the default) uses the inter-op thread on a machine of two or more CPUs
# unless a BLAS thread variable (OPENBLAS_NUM_THREADS, ...) is set. Results are the same either way: the
# ops are pure and each one's kernel is the same call.

_INTER: Any = None
_INTER_PID = 0
_INFLIGHT = [0]  # tasks spawned and not yet done
_COUNT_LOCK = threading.Lock()


def set_inter_op_threads(n: int) -> None:
    """``tf.config.threading.set_inter_op_parallelism_threads``: 1 runs ops one at a time; 0 chooses."""
    _blas.inter = max(0, int(n))


def inter_op_enabled() -> bool:
    """Whether a compiled graph may run an op on the inter-op thread now (see spawn)."""
    b = _blas
    if b.inter == 1 or getattr(_IN_PART, "on", False):
        return False
    return b.inter > 1 or (b.auto and b.ncpu > 1)


class _Task:
    """One kernel call handed to the inter-op thread; ``result()`` waits for it (and re-raises its error).
    A task the inter-op thread has not started when its result is wanted runs on the caller instead (a
    busy machine may not have scheduled that thread yet): whichever thread claims it first runs it."""

    __slots__ = ("fn", "args", "kw", "out", "error", "done", "claim")

    def __init__(self, fn: Callable, args: tuple, kw: dict) -> None:
        self.fn, self.args, self.kw, self.out, self.error = fn, args, kw, None, None
        self.done, self.claim = threading.Lock(), threading.Lock()
        self.done.acquire()

    def run(self) -> None:
        if not self.claim.acquire(False):
            return  # (taken back by the thread that wanted its result)
        try:
            args = self.args
            if any(type(a) in _FUTURES for a in args):  # (an earlier task's value: queued before this one)
                args = tuple(a.result() if type(a) in _FUTURES else a for a in args)
            self.out = self.fn(*args, **self.kw)
        except BaseException as e:  # noqa: BLE001 - re-raised by result()
            self.error = e
        finally:
            self.args = self.kw = None
            with _COUNT_LOCK:
                _INFLIGHT[0] -= 1
            self.done.release()

    def result(self) -> Any:
        self.run()
        self.done.acquire()
        self.done.release()
        if self.error is not None:
            raise self.error
        return self.out


class _Done:
    """A kernel already run on the calling thread (inter-op off)."""

    __slots__ = ("out",)

    def __init__(self, out: Any) -> None:
        self.out = out

    def result(self) -> Any:
        return self.out


_FUTURES = (_Task, _Done)


def _inter_loop(queue: Any) -> None:
    _IN_PART.on = True  # (its kernels run their chunks on this thread alone)
    while True:
        task = queue.get()
        if task is None:
            return
        task.run()


def spawn(fn: Callable, *args: Any, **kw: Any) -> Any:
    """``fn(*args, **kw)`` on the inter-op thread when inter_op_enabled(), else at once; the returned
    object's ``result()`` gives its value. ``fn`` must not change its arguments (a pure kernel)."""
    if not inter_op_enabled():
        if any(type(a) in _FUTURES for a in args):
            args = tuple(a.result() if type(a) in _FUTURES else a for a in args)
        return _Done(fn(*args, **kw))
    global _INTER, _INTER_PID
    if _INTER is None or _INTER_PID != os.getpid():
        import queue

        with _POOL_LOCK:
            if _INTER is None or _INTER_PID != os.getpid():
                q = queue.SimpleQueue()
                _INFLIGHT[0] = 0  # (after a fork: the parent's tasks are not this process's)
                threading.Thread(target=_inter_loop, args=(q,), name="tapeflow-inter-op", daemon=True).start()
                _INTER, _INTER_PID = q, os.getpid()
    task = _Task(fn, args, kw)
    with _COUNT_LOCK:
        _INFLIGHT[0] += 1
    _INTER.put(task)
    return task
