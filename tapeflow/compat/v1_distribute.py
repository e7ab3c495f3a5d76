"""``tf.compat.v1.distribute``: TF 2's strategies and replica-context functions under their TF 1 names (the
TF 1-only strategy methods such as ``make_dataset_iterator`` and ``experimental_run`` raise
``NotImplementedError``), and ``get_loss_reduction``."""

from __future__ import annotations

from typing import Any

from tapeflow.distribute import (
    CrossDeviceOps, HierarchicalCopyAllReduce, InputContext, InputReplicationMode, MirroredStrategy, NcclAllReduce,
    OneDeviceStrategy, ReduceOp, ReductionToOneDevice, ReplicaContext, Strategy, cluster_resolver, experimental,
    get_replica_context, get_strategy, has_strategy, in_cross_replica_context,
)
from tapeflow.framework.errors import NotImplementedInTapeflowError

__all__ = ["CrossDeviceOps", "HierarchicalCopyAllReduce", "InputContext", "InputReplicationMode", "MirroredStrategy",
           "NcclAllReduce", "OneDeviceStrategy", "ReduceOp", "ReductionToOneDevice", "ReplicaContext", "Strategy",
           "cluster_resolver", "experimental", "get_loss_reduction", "get_replica_context", "get_strategy",
           "has_strategy", "in_cross_replica_context"]


def get_loss_reduction() -> ReduceOp:
    """The reduction a strategy applies to TF 1 losses: ``ReduceOp.SUM`` (TF 2.21's answer when no TF 1 loss
    with a mean reduction was made in the graph)."""
    return ReduceOp.SUM


def __getattr__(name: str) -> Any:
    if name in ("RunOptions", "Server", "StrategyExtended", "experimental_set_strategy"):
        raise NotImplementedInTapeflowError(f"tf.compat.v1.distribute.{name} is not implemented in tapeflow")
    raise AttributeError(f"module 'tensorflow.compat.v1.distribute' has no attribute '{name}'")
