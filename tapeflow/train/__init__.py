"""``tf.train``: checkpoints (``Checkpoint``, ``CheckpointManager``,
``latest_checkpoint``, ``list_variables``, ``load_variable``)."""

from tapeflow.train.checkpoint import (
    Checkpoint, CheckpointLoadStatus, CheckpointManager, CheckpointReader, CheckpointState, get_checkpoint_state,
    latest_checkpoint, list_variables, load_checkpoint, load_variable,
)

__all__ = ["Checkpoint", "CheckpointLoadStatus", "CheckpointManager", "CheckpointReader", "CheckpointState",
           "get_checkpoint_state", "latest_checkpoint", "list_variables", "load_checkpoint", "load_variable"]

# TF names tapeflow lacks: NotImplementedError (also an AttributeError, for hasattr)
from tapeflow.framework.missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("tf.train", frozenset((
    "Saver ExponentialMovingAverage ClusterSpec Server Coordinator MonitoredTrainingSession checkpoints_iterator "
    "summary_iterator Example Feature Features BytesList FloatList Int64List SequenceExample "
    "CheckpointOptions CheckpointView TrackableView"
).split()))
