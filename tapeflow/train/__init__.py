"""``tf.train``: checkpoints (``Checkpoint``, ``CheckpointManager``,
``latest_checkpoint``, ``list_variables``, ``load_variable``) and ``ClusterSpec``."""

from tapeflow.distribute.cluster_resolver import ClusterSpec
from tapeflow.train.checkpoint import (
    Checkpoint, CheckpointLoadStatus, CheckpointManager, CheckpointReader, CheckpointState, get_checkpoint_state,
    latest_checkpoint, list_variables, load_checkpoint, load_variable,
)
from tapeflow.train.moving_averages import ExponentialMovingAverage

__all__ = ["ClusterSpec", "Checkpoint", "CheckpointLoadStatus", "CheckpointManager", "CheckpointReader",
           "CheckpointState", "get_checkpoint_state", "latest_checkpoint", "list_variables", "load_checkpoint",
           "load_variable", "ExponentialMovingAverage"]

# TF names tapeflow lacks: NotImplementedError (also an AttributeError, for hasattr)
from tapeflow.framework.missing import module_getattr as _module_getattr  # noqa: E402

_missing_getattr = _module_getattr("tf.train", frozenset((
    "Saver Server Coordinator MonitoredTrainingSession checkpoints_iterator "
    "summary_iterator CheckpointOptions CheckpointView TrackableView ClusterDef JobDef ServerDef experimental"
).split()))
_EXAMPLE_MESSAGES = frozenset(("BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList",
                               "FeatureLists", "Example", "SequenceExample"))


def __getattr__(name: str):
    if name in _EXAMPLE_MESSAGES:  # TF's protobuf messages (tapeflow/train/example.py), built on first use
        from tapeflow.train.example import message_class

        return message_class(name)
    return _missing_getattr(name)
