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

from collections.abc import Callable
from sys import getrefcount
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
        x = xs[0]
        try:
            if not x.flags.c_contiguous:  # (mpi4py takes a Fortran-ordered array as is: its memory order)
                x = np.ascontiguousarray(x)
            Allreduce(x, buf, op)
        except (BufferError, ValueError, TypeError, AttributeError):  # not an array, or not one mpi4py can send
            view[...] = x
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
        outs = plain_all_reduce(values, reduction)
        if outs is not None:
            return outs
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


def plain_all_reduce(values: list | tuple, reduction: str) -> list | None:
    """``all_reduce`` of eager tensors outside any tape or graph (check ``state.plain`` first): the
    communicator's fused allreduce of their arrays, new tensors on its results (views of its buffer). None when
    not all of ``values`` are tensors (the caller takes the general path).

    The common case, a training step's gradients again, is one pass: while the communicator's last fused
    buffer is free and each array has the shape and dtype of its view there, it is copied into its view (a
    mismatch leaves only scratch in the free buffer and takes the general path)."""
    comm = communicator._COMM or get_communicator()
    fused, op = comm._last, comm._ops.get(reduction) if comm.is_mpi else None
    if op is not None and fused is not None and len(values) == len(fused.views) \
            and getrefcount(fused.buf) <= fused._buf_refs \
            and sum(map(getrefcount, fused.views)) <= fused._view_refs:  # (fused.free(), inline)
        dtype = fused.dtype
        for view, v, shape in zip(fused.views, values, fused.shapes):
            if type(v) is not Tensor:
                return None
            a = v._value
            if a.dtype is not dtype or a.shape != shape:
                break
            view[...] = a
        else:
            comm._Allreduce(comm._IN_PLACE, fused.buf, op)
            if reduction == "mean":
                communicator._divide_in_place(fused.buf, comm.size)
            return list(map(Tensor, fused.views))
    arrays = []
    for v in values:
        if type(v) is not Tensor:
            return None
        arrays.append(v._value)
    return list(map(Tensor, comm.allreduce(arrays, reduction)))


def eager_reducers(comm: Any, sum_op: Any, mean_op: Any, general: Callable) -> tuple:
    """``strategy.reduce`` and ``reduce_one(value, mean)`` of one eager tensor as lean as raw mpi4py is: one
    ``Allreduce`` from the tensor's array into a result array. The result array and its tensor are kept and
    reused by the next call of the same shape and dtype while nobody holds either (their reference counts are
    back to this function's own and no weak reference is left), with a fresh tensor id: a loop that reads or
    drops each result (``total += strategy.reduce(SUM, loss, axis=None)``) allocates nothing.

    ``reduce(reduce_op, value, axis=None)`` is set as the strategy's own ``reduce`` (no method layer): it
    handles an eager tensor with ``sum_op``/``mean_op`` and no axis, and calls ``general(reduce_op, value,
    axis)`` for anything else. ``reduce_one`` returns None for a value it does not handle."""
    from sys import getrefcount
    from weakref import getweakrefcount

    from tapeflow.framework.tensor import _next_id

    Allreduce, op_sum, size = comm._Allreduce, comm._ops["sum"], comm.size
    divide = communicator._divide_in_place
    result = out = shape = dtype = None
    result_refs = out_refs = 0

    def reduce_one(value: Tensor, mean: bool) -> Tensor | None:
        nonlocal result, out, shape, dtype, result_refs, out_refs
        a = value._value
        if type(a) is not np.ndarray or not a.flags.c_contiguous:  # (mpi4py would send Fortran order as is)
            return None
        if a.dtype is dtype and a.shape == shape and getrefcount(result) <= result_refs \
                and getrefcount(out) <= out_refs and not getweakrefcount(result):
            Allreduce(a, out, op_sum)
            if mean:
                divide(out, size)
            if not shape:  # a 0-d result holds a NumPy scalar, as every op's
                result._value = out[()]
            result._id = _next_id()
            return result
        o = np.empty(a.shape, a.dtype)
        Allreduce(a, o, op_sum)
        if mean:
            divide(o, size)
        out, result, shape, dtype = o, Tensor(o if o.ndim else o[()]), a.shape, a.dtype
        del o
        result_refs, out_refs = getrefcount(result), getrefcount(out)
        return result

    def reduce(reduce_op: Any, value: Any, axis: Any = None) -> Any:
        if axis is None and type(value) is Tensor and state.plain:
            a = value._value
            if reduce_op is sum_op:  # the common case inline: the same as reduce_one's
                if type(a) is np.ndarray and a.dtype is dtype and a.shape == shape and a.flags.c_contiguous \
                        and getrefcount(result) <= result_refs and getrefcount(out) <= out_refs \
                        and not getweakrefcount(result):
                    Allreduce(a, out, op_sum)
                    if not shape:
                        result._value = out[()]
                    result._id = _next_id()
                    return result
                r = reduce_one(value, False)
            elif reduce_op is mean_op:
                r = reduce_one(value, True)
            else:
                r = None
            if r is not None:
                return r
        return general(reduce_op, value, axis)

    reduce.__doc__ = general.__doc__
    return reduce_one, reduce


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
