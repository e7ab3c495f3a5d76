"""``tf.distribute``: TF's strategy API; multi-process training on MPI.

See ``strategies`` (the API), ``communicator`` (MPI through mpi4py, or one
process), ``collective_ops`` (collectives as graph ops) and ``input_lib``
(each rank's part of the input).
"""

from tapeflow.distribute.input_lib import InputContext
from tapeflow.distribute.strategies import (
    MirroredStrategy,
    MultiWorkerMirroredStrategy,
    OneDeviceStrategy,
    ReduceOp,
    ReplicaContext,
    Strategy,
    get_replica_context,
    get_strategy,
    has_strategy,
    in_cross_replica_context,
)

__all__ = [
    "InputContext",
    "MirroredStrategy",
    "MultiWorkerMirroredStrategy",
    "OneDeviceStrategy",
    "ReduceOp",
    "ReplicaContext",
    "Strategy",
    "get_replica_context",
    "get_strategy",
    "has_strategy",
    "in_cross_replica_context",
]
