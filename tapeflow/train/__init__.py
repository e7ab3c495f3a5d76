"""``tf.train``: checkpoints (``Checkpoint``, ``CheckpointManager``,
``latest_checkpoint``, ``list_variables``, ``load_variable``)."""

from tapeflow.train.checkpoint import (
    Checkpoint, CheckpointLoadStatus, CheckpointManager, CheckpointReader, latest_checkpoint, list_variables,
    load_checkpoint, load_variable,
)

__all__ = ["Checkpoint", "CheckpointLoadStatus", "CheckpointManager", "CheckpointReader", "latest_checkpoint",
           "list_variables", "load_checkpoint", "load_variable"]
