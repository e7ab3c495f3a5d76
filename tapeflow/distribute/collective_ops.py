"""Collective ops: all-reduce and all-gather across the processes of a run.

They are registered ops like any other, so one code path serves eager
execution and ``tf.function``: inside a traced function each is a node that
the graph compiler treats as stateful — kept in program order, never folded,
merged or removed — so every rank runs the same collectives in the same order.

``CollectiveReduceV2`` takes any number of tensors and reduces them all in
one fused MPI allreduce (one buffer per dtype). Its gradient is the same
all-reduce of the incoming gradients (the gradient of a sum over ranks).
``CollectiveGatherV2`` concatenates every rank's tensor along axis 0 (ranks
may hold different row counts); it is not differentiable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.distribute import communicator
from tapeflow.distribute.communicator import get_communicator
from tapeflow.framework.context import state
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor
from tapeflow.ops._helpers import t
from tapeflow.ops.registry import NotDifferentiable, defgrad, defop

__all__ = ["all_reduce", "all_reduce_one", "all_gather", "all_gather_slices"]


def _reduce_kernel(*xs, reduction, n, plan=None):
    # Under tf.function the outputs are views of a fused buffer; the compiled graph drops them after their last
    # use, so the next call reduces in the same buffer. A node whose inputs have static shapes carries its own
    # buffer (``plan``, made when it was traced): per call, the copies in, one in-place Allreduce, the views out.
    if plan is not None:
        out = plan.step(xs)
        if out is not None:
            return out
    return (communicator._COMM or get_communicator()).allreduce(xs, reduction)


def _reduce_shape(specs, reduction, n, plan=None):
    return [(s, dt) for s, dt in specs]


def _not_yet(xs: tuple) -> None:
    return None


class FusionPlan:
    """A traced ``CollectiveReduceV2`` node's own fused buffer (the node's inputs have static shapes and one
    dtype, known when it was traced). ``step(arrays)`` copies the arrays into it, reduces it in place with one
    ``MPI_Allreduce`` and returns its views, or returns None (then the communicator reduces them) while someone
    still holds the views of the previous step (a result kept across steps). The buffer is made at the node's
    first run under MPI."""

    __slots__ = ("shapes", "dtype", "reduction", "step", "fused")

    def __init__(self, shapes: tuple, dtype: Any, reduction: str) -> None:
        self.shapes, self.dtype, self.reduction = shapes, np.dtype(dtype), reduction
        self.fused = None
        self.step = self._first

    def _first(self, xs: tuple) -> None:
        self.step = _not_yet
        comm = communicator._COMM or get_communicator()
        op = comm._ops.get(self.reduction) if comm.is_mpi else None
        if op is None or tuple(np.shape(x) for x in xs) != self.shapes:
            return None
        self.fused = fused = communicator._FusedBuffer(self.shapes, self.dtype)
        self.step = _fused_step(fused, comm._Allreduce, comm._IN_PLACE, op, comm.size if self.reduction == "mean"
                                else 0)
        return self.step(xs)

    def __repr__(self) -> str:  # shown in printed graphs
        return f"FusionPlan({len(self.shapes)} x {self.dtype.name})"


def _fused_step(fused: Any, Allreduce: Any, IN_PLACE: Any, op: Any, mean_over: int) -> Any:
    """The node's step: ``step(arrays)`` -> the reduced views, or None while a view of the last step is held."""
    from sys import getrefcount

    buf, views = fused.buf, fused.views
    divide = communicator._divide_in_place
    if len(views) == 1:
        return _one_step(buf, views, Allreduce, IN_PLACE, op, mean_over, divide)

    def step(xs: tuple) -> tuple | None:
        # nobody else holds a view (a reference count only grows while someone does)
        if getrefcount(buf) > buf_refs or sum(map(getrefcount, views)) > view_refs:
            return None
        for view, x in zip(views, xs):  # the traced shapes and dtype: a plain copy each
            view[...] = x
        Allreduce(IN_PLACE, buf, op)
        if mean_over:
            divide(buf, mean_over)
        return views

    buf_refs, view_refs = getrefcount(buf), sum(map(getrefcount, views))
    return step


def _one_step(buf: Any, views: tuple, Allreduce: Any, IN_PLACE: Any, op: Any, mean_over: int, divide: Any) -> Any:
    from sys import getrefcount

    view = views[0]

    def step_one(xs: tuple) -> tuple | None:
        # one tensor: reduced from where it is straight into the buffer (no copy), as raw mpi4py would
        if getrefcount(buf) > buf_refs or getrefcount(view) > view_refs:
            return None
        try:
            Allreduce(xs[0], buf, op)
        except (BufferError, ValueError, TypeError):  # not a contiguous buffer (mpi4py checks before sending)
            view[...] = xs[0]
            Allreduce(IN_PLACE, buf, op)
        if mean_over:
            divide(buf, mean_over)
        return views

    buf_refs, view_refs = getrefcount(buf), getrefcount(view)
    return step_one


COLLECTIVE_REDUCE = defop(
    "CollectiveReduceV2", _reduce_kernel, shape=_reduce_shape, num_outputs=lambda attrs: attrs["n"]
)
COLLECTIVE_REDUCE.extra["stateful"] = True  # a collective: ordered, never folded or merged
# The compiled graph calls a node's ``plan.step(inputs)`` itself, and the kernel only when it returns None.
COLLECTIVE_REDUCE.extra["plan_step"] = True


@defgrad("CollectiveReduceV2", inputs=False)
def _collective_reduce_grad(op, *grads):
    # Every rank's output depends on every rank's input: d(sum over ranks)/dx is the summed gradient.
    return all_reduce(list(grads), op.get_attr("reduction"))


def all_reduce(values: list | tuple, reduction: str = "sum") -> list:
    """Reduces each tensor over all ranks (``"sum"`` or ``"mean"``) with one fused collective."""
    if state.plain:  # eager, no tape: straight to the communicator, no op dispatch
        for v in values:
            if type(v) is not Tensor:
                break
        else:
            if not values:
                return []
            outs = (communicator._COMM or get_communicator()).allreduce([v._value for v in values], reduction)
            return list(map(Tensor, outs))
    ts = tuple(v if type(v) is Tensor else t(v) for v in values)
    if not ts:
        return []
    attrs = {"reduction": reduction, "n": len(ts)}
    if state.graph is not None:  # traced: a node with static shapes and one dtype gets its own fused buffer
        shapes = tuple(x._shape_tuple() for x in ts)
        dtype = ts[0]._value.dtype
        if all(s is not None and None not in s for s in shapes) and all(x._value.dtype == dtype for x in ts):
            attrs["plan"] = FusionPlan(tuple(tuple(int(d) for d in s) for s in shapes), dtype, reduction)
    return list(execute(COLLECTIVE_REDUCE, ts, attrs))


def all_reduce_one(value: Tensor, reduction: str = "sum") -> Tensor:
    """``all_reduce([value], reduction)[0]``, with the least Python per call (``strategy.reduce``)."""
    if state.plain and type(value) is Tensor:
        o = (communicator._COMM or get_communicator()).allreduce_one(value._value, reduction)
        return Tensor(o) if o.ndim else Tensor(o[()])
    return all_reduce([value], reduction)[0]


def _gather_kernel(x):
    return get_communicator().allgather(x)


def _gather_shape(specs):
    s, dt = specs[0]
    return [(None if s is None else (None,) + tuple(s[1:]), dt)]


COLLECTIVE_GATHER = defop("CollectiveGatherV2", _gather_kernel, shape=_gather_shape)
COLLECTIVE_GATHER.extra["stateful"] = True
NotDifferentiable("CollectiveGatherV2")


def _gather_slices_kernel(*xs, k):
    values, indices = (communicator._COMM or get_communicator()).allgather_slices(list(xs[:k]), list(xs[k:]))
    return tuple(values) + tuple(indices)


def _gather_slices_shape(specs, k):
    return [(None if s is None else (None,) + tuple(s[1:]), dt) for s, dt in specs]


COLLECTIVE_GATHER_SLICES = defop("CollectiveGatherSlices", _gather_slices_kernel, shape=_gather_slices_shape,
                                 num_outputs=lambda attrs: 2 * attrs["k"])
COLLECTIVE_GATHER_SLICES.extra["stateful"] = True
NotDifferentiable("CollectiveGatherSlices")


def all_gather_slices(values: list, indices: list) -> tuple[list, list]:
    """Several ``IndexedSlices`` gathered over all ranks at once: for each, every rank's values and indices
    concatenated in rank order (three collectives in all; see ``MPICommunicator.allgather_slices``)."""
    k = len(values)
    if not k:
        return [], []
    out = list(execute(COLLECTIVE_GATHER_SLICES, tuple(t(v) for v in values) + tuple(t(i) for i in indices), {"k": k}))
    return out[:k], out[k:]


def all_gather(value: Any) -> Tensor:
    """Every rank's ``value`` concatenated along axis 0, in rank order."""
    return execute(COLLECTIVE_GATHER, (t(value),))
