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

    The common case, a training step's gradients again, is one pass (``_eager_step``): while the
    communicator's last fused buffer and its result tensors are free, each array of the shape and dtype of
    its view there is copied into it, one in-place ``Allreduce``, and the buffer's own tensors come back."""
    comm = communicator._COMM or get_communicator()
    fused = comm._last
    if fused is not None:
        step = fused.eager
        if step is None and fused.free():  # (its baselines are taken while nobody holds its results)
            step = fused.eager = _eager_step(fused, comm)
        if step:
            out = step(values, reduction)
            if out is not None:
                return out
    arrays = []
    for v in values:
        if type(v) is not Tensor:
            return None
        arrays.append(v._value)
    return list(map(Tensor, comm.allreduce(arrays, reduction)))


def eager_gradient_sum(comm: Any, general: Callable) -> Callable:
    """``aggregate(grads)``: the sum over all ranks of a step's eager dense gradients, by the communicator's last
    fused buffer's step when it can (see ``plain_all_reduce``), else ``general(grads)``."""

    def aggregate(grads: list) -> list:
        if state.plain:
            fused = comm._last
            step = fused.eager if fused is not None else None
            if step:
                out = step(grads, "sum")
                if out is not None:
                    return out
            out = plain_all_reduce(grads, "sum")
            if out is not None:
                return out
        return general(grads)

    return aggregate


def eager_gradient_arrays(comm: Any) -> Callable:
    """``total(arrays, variables)``: the sum over all ranks of a step's dense gradient arrays, as the optimizer's
    eager update takes them (already checked against ``variables``: each array has its variable's shape).

    The gradients of the same variables again (the common case) are copied into one flat buffer kept for those
    variables, reduced in place by one ``Allreduce``, and come back as the buffer's views: per call a reference
    count (is a previous step's result still held?), a dtype check and a copy per array, nothing
    allocated. Other variables, several dtypes or a held buffer take a new buffer (the communicator's
    ``allreduce`` for several dtypes); variables whose shape may change (``shape=None``) always the latter."""
    from tapeflow.distribute.communicator import _FusedBuffer

    Allreduce, IN_PLACE, op_sum = comm._Allreduce, comm._IN_PLACE, comm._ops["sum"]
    key: list = []
    buf = dtype = None
    views: tuple = ()
    held: tuple = ()
    held_refs = 0

    def total(arrays: list, variables: list) -> list:
        nonlocal key, buf, dtype, views, held, held_refs
        # (a list compare: the same variable objects in the same order; each array has its variable's shape)
        if variables == key and sum(map(getrefcount, held)) <= held_refs:
            for view, a in zip(views, arrays):
                if a.dtype is not dtype:  # (an array or a NumPy scalar: the optimizer's checked gradients)
                    break  # (what was copied is scratch in a free buffer)
                view[...] = a
            else:
                Allreduce(IN_PLACE, buf, op_sum)
                return list(views)  # a new list: holding it (or a view) keeps the buffer from being reused
        arrays = [np.asarray(a) for a in arrays]
        if not arrays or any(a.dtype != arrays[0].dtype for a in arrays) or any(
                None in v._shape_tuple() for v in variables):
            return comm.allreduce(arrays, "sum")
        fused = _FusedBuffer(tuple(a.shape for a in arrays), arrays[0].dtype)
        for view, a in zip(fused.views, arrays):
            view[...] = a
        Allreduce(IN_PLACE, fused.buf, op_sum)
        key, buf, dtype, views = list(variables), fused.buf, fused.dtype, fused.views
        del fused
        held = (buf, *views)  # (the tuple of views never leaves this function)
        held_refs = sum(map(getrefcount, held))
        return list(views)

    return total


def _eager_step(fused: Any, comm: Any) -> Any:
    """The eager reduction in ``fused``: ``step(values, reduction)`` -> the buffer's own result tensors (fresh
    ids), or None (the general path) unless every value is a tensor of its view's shape and dtype and nobody
    holds the buffer, its views or its tensors. False for a buffer it cannot serve."""
    from weakref import getweakrefcount

    from tapeflow.framework.tensor import _next_id

    views = fused.views
    if not comm.is_mpi or any(v.size == 0 for v in views):
        return False
    buf, dtype, n, tensors = fused.buf, fused.dtype, len(views), tuple(Tensor(v) for v in views)
    # Everything a result could be held through, in one tuple: one sum of reference counts per step tells
    # whether nobody holds any of them (each count only grows above its baseline while someone does).
    held = (buf, *views, *tensors)
    fused.attach_tensors(tensors)  # (the baselines count this function's own references, taken just above)
    held_refs = sum(map(getrefcount, held))
    # each view's (ndim, size): an array of that ndim and size whose copy into the view succeeds (it broadcasts)
    # has the view's shape (equal sizes, and each dim equal or 1), and is cheaper to check than the shape
    checks = tuple((v.ndim, v.size) for v in views)
    Allreduce, IN_PLACE, ops, size = comm._Allreduce, comm._IN_PLACE, comm._ops, comm.size
    op_sum = ops["sum"]
    divide = communicator._divide_in_place

    def step(values: list | tuple, reduction: str) -> list | None:
        if len(values) != n or sum(map(getrefcount, held)) > held_refs:
            return None
        for view, v, (nd, sz) in zip(views, values, checks):
            if type(v) is not Tensor or (a := v._value).dtype is not dtype or a.ndim != nd or a.size != sz:
                return None  # (what was copied is scratch in a free buffer)
            view[...] = a
        op = op_sum if reduction == "sum" else ops.get(reduction)
        if op is None:
            return None
        Allreduce(IN_PLACE, buf, op)
        if reduction == "mean":
            divide(buf, size)
        if any(map(getweakrefcount, tensors)):  # (a weak reference, as a Keras mask, would follow the object)
            return list(map(Tensor, views))
        for r in tensors:
            r._id = _next_id()
        return list(tensors)  # a new list: holding it (or any of them) keeps the buffer from being reused

    return step


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
    # The kept result (its tensor and array) and what an input must be to be reduced into it: its type (an
    # array, or the NumPy scalar a 0-d tensor holds), dtype, ndim and size; for ndim >= 2 also its shape and C
    # order (ndim and size fix a 0-d or 1-d shape, and a strided 1-d array is mpi4py's BufferError).
    result = out = kind = dtype = shape = None
    ndim = nelems = -1
    flat = True
    result_refs = out_refs = 0

    def reduce_one(value: Tensor, mean: bool) -> Tensor | None:
        nonlocal result, out, kind, dtype, shape, ndim, nelems, flat, result_refs, out_refs
        a = value._value
        k = type(a)
        if k is not np.ndarray and not isinstance(a, np.generic):
            return None
        if k is np.ndarray and not a.flags.c_contiguous:  # (mpi4py would send Fortran order as is)
            return None
        if k is kind and a.dtype is dtype and a.shape == shape and getrefcount(result) <= result_refs \
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
        out, result, kind, dtype, shape = o, Tensor(o if o.ndim else o[()]), k, a.dtype, a.shape
        ndim, nelems, flat = o.ndim, o.size, o.ndim < 2
        del o
        result_refs, out_refs = getrefcount(result), getrefcount(out)
        return result

    def reduce(reduce_op: Any, value: Any, axis: Any = None) -> Any:
        if axis is None and type(value) is Tensor and state.plain:
            if reduce_op is sum_op:  # the common case inline: reduce_one's, with the cheapest checks
                a = value._value
                if type(a) is kind and a.dtype is dtype and a.ndim == ndim and a.size == nelems \
                        and (flat or a.shape == shape and a.flags.c_contiguous) \
                        and getrefcount(result) <= result_refs and getrefcount(out) <= out_refs \
                        and not getweakrefcount(result):
                    try:
                        Allreduce(a, out, op_sum)
                    except BufferError:  # a strided 1-d array: from a copy
                        Allreduce(np.ascontiguousarray(a), out, op_sum)
                    if not ndim:
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
