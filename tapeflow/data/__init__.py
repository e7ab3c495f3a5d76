"""``tf.data``: ``Dataset`` input pipelines over in-memory tensors."""

from types import SimpleNamespace

from tapeflow.data.dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset


def _cardinality(dataset: Dataset):
    return dataset.cardinality()


def _dense_to_ragged_batch(batch_size: int, drop_remainder: bool = False, row_splits_dtype=None):
    """``tf.data.experimental.dense_to_ragged_batch``: ``dataset.ragged_batch`` as a transformation."""
    return lambda dataset: dataset.ragged_batch(batch_size, drop_remainder)


experimental = SimpleNamespace(
    AUTOTUNE=AUTOTUNE, INFINITE_CARDINALITY=INFINITE_CARDINALITY, UNKNOWN_CARDINALITY=UNKNOWN_CARDINALITY,
    cardinality=_cardinality, dense_to_ragged_batch=_dense_to_ragged_batch,
)

__all__ = ["Dataset", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "experimental"]
