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

__all__ = ["all_reduce", "all_gather"]


def _reduce_kernel(*xs, reduction, n):
    return tuple(get_communicator().allreduce(list(xs), reduction))


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


def all_reduce(values: list, reduction: str = "sum") -> list:
    """Reduces each tensor over all ranks (``"sum"`` or ``"mean"``) with one fused collective."""
    ts = [v if type(v) is Tensor else t(v) for v in values]
    if not ts:
        return []
    if state.plain:  # eager, no tape: straight to the communicator (the small-message latency is Python's)
        comm = communicator._COMM or get_communicator()
        return [Tensor(o) for o in comm.allreduce([x._value for x in ts], reduction)]
    return execute(COLLECTIVE_REDUCE, tuple(ts), {"reduction": reduction, "n": len(ts)})


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
