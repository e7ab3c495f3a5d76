"""``tf.train``: checkpoints (``Checkpoint``, ``CheckpointManager``,
``latest_checkpoint``, ``list_variables``, ``load_variable``)."""

from tapeflow.train.checkpoint import (
    Checkpoint, CheckpointLoadStatus, CheckpointManager, latest_checkpoint, list_variables, load_variable,
)

__all__ = ["Checkpoint", "CheckpointLoadStatus", "CheckpointManager", "latest_checkpoint", "list_variables",
           "load_variable"]
