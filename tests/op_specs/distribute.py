"""Specs for the collective ops (tapeflow/distribute/collective_ops.py): in one process the
fused all-reduce is the identity on each input, so its gradient rule (the all-reduce of the
incoming gradients) is checked to the 2nd order here; under MPI tests/test_distribute_mpi.py
checks the values."""

from tapeflow.distribute import collective_ops
from tests.op_specs import Arg, OpSpec

SPECS = [
    OpSpec(
        "CollectiveReduceV2",
        lambda a, b: collective_ops.all_reduce([a * b, b], "sum"),
        [Arg((3, 2)), Arg((2,))],
        name="fused",
    ),
    OpSpec("CollectiveReduceV2", lambda a: collective_ops.all_reduce([a * a], "mean")[0], [Arg((4,))], name="mean"),
]
