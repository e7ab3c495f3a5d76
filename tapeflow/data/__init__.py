"""``tf.data``: ``Dataset`` input pipelines over in-memory tensors."""

from types import SimpleNamespace

from tapeflow.data.dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset


def _cardinality(dataset: Dataset):
    return dataset.cardinality()


experimental = SimpleNamespace(
    AUTOTUNE=AUTOTUNE, INFINITE_CARDINALITY=INFINITE_CARDINALITY, UNKNOWN_CARDINALITY=UNKNOWN_CARDINALITY,
    cardinality=_cardinality,
)

__all__ = ["Dataset", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "experimental"]
