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

from tapeflow.distribute import communicator
from tapeflow.distribute.communicator import get_communicator
from tapeflow.framework.context import state
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor
from tapeflow.ops._helpers import t
from tapeflow.ops.registry import NotDifferentiable, defgrad, defop

__all__ = ["all_reduce", "all_reduce_one", "all_gather"]


def _reduce_kernel(*xs, reduction, n):
    # Under tf.function the outputs are views of the communicator's fused buffer; the compiled graph drops
    # them after their last use, so the next call reduces in the same buffer.
    return (communicator._COMM or get_communicator()).allreduce(xs, reduction)


def _reduce_shape(specs, reduction, n):
    return [(s, dt) for s, dt in specs]


COLLECTIVE_REDUCE = defop(
    "CollectiveReduceV2", _reduce_kernel, shape=_reduce_shape, num_outputs=lambda attrs: attrs["n"]
)
COLLECTIVE_REDUCE.extra["stateful"] = True  # a collective: ordered, never folded or merged


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
    return list(execute(COLLECTIVE_REDUCE, ts, {"reduction": reduction, "n": len(ts)}))


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


def all_gather(value: Any) -> Tensor:
    """Every rank's ``value`` concatenated along axis 0, in rank order."""
    return execute(COLLECTIVE_GATHER, (t(value),))
