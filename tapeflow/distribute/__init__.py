"""``tf.distribute``: TF's strategy API; multi-process training on MPI.

See ``strategies`` (the API), ``communicator`` (MPI through mpi4py, or one
process), ``collective_ops`` (collectives as graph ops) and ``input_lib``
(each rank's part of the input).
"""

from tapeflow.distribute import cluster_resolver, experimental
from tapeflow.distribute.input_lib import InputContext, InputOptions, InputReplicationMode
from tapeflow.distribute.strategies import (
    CrossDeviceOps,
    HierarchicalCopyAllReduce,
    MirroredStrategy,
    MultiWorkerMirroredStrategy,
    NcclAllReduce,
    OneDeviceStrategy,
    ReduceOp,
    ReductionToOneDevice,
    ReplicaContext,
    Strategy,
    get_replica_context,
    get_strategy,
    has_strategy,
    in_cross_replica_context,
)

__all__ = [
    "CrossDeviceOps",
    "HierarchicalCopyAllReduce",
    "InputContext",
    "InputOptions",
    "InputReplicationMode",
    "MirroredStrategy",
    "MultiWorkerMirroredStrategy",
    "NcclAllReduce",
    "OneDeviceStrategy",
    "ReduceOp",
    "ReductionToOneDevice",
    "ReplicaContext",
    "Strategy",
    "get_replica_context",
    "get_strategy",
    "has_strategy",
    "in_cross_replica_context",
    "cluster_resolver",
    "experimental",
]

from tapeflow.framework.missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(
    "tf.distribute",
    frozenset(
        "ParameterServerStrategy TPUStrategy Server StrategyExtended RunOptions DistributedDataset DistributedIterator "
        "DistributedValues experimental_set_strategy coordinator".split()
    ),
)
