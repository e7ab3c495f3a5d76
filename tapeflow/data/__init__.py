"""``tf.data``: ``Dataset`` input pipelines over in-memory tensors and files."""

from types import SimpleNamespace
from typing import Any
from collections.abc import Callable

from tapeflow.data import iterator_ops as _iterator_ops  # noqa: F401 - registers the in-graph iterator ops
from tapeflow.data.dataset import (
    AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset, NumpyIterator,
)
from tapeflow.data.dataset import DatasetIterator as Iterator  # tf.data.Iterator
from tapeflow.data.nested import DatasetSpec
from tapeflow.data.options import AutoShardPolicy, ExternalStatePolicy, Options, ThreadingOptions
from tapeflow.data.readers import (
    CsvDataset, FixedLengthRecordDataset, TextLineDataset, TFRecordDataset, make_csv_dataset,
)


def _cardinality(dataset: Dataset):
    return dataset.cardinality()


def _dense_to_ragged_batch(batch_size: int, drop_remainder: bool = False, row_splits_dtype=None):
    """``tf.data.experimental.dense_to_ragged_batch``: ``dataset.ragged_batch`` as a transformation."""
    return lambda dataset: dataset.ragged_batch(batch_size, drop_remainder)


def _transformation(method: str) -> Callable:
    """``tf.data.experimental.X(...)``: ``dataset.X(...)`` as a function for ``dataset.apply``."""
    def make(*args: Any, **kwargs: Any) -> Callable:
        return lambda dataset: getattr(dataset, method)(*args, **kwargs)

    make.__name__ = method
    return make


def _counter(start: int = 0, step: int = 1, dtype: Any = None) -> Dataset:
    """``tf.data.experimental.Counter`` (deprecated alias of ``Dataset.counter``)."""
    from tapeflow.framework import dtypes

    return Dataset.counter(start, step, dtypes.int64 if dtype is None else dtype)


experimental = SimpleNamespace(
    AUTOTUNE=AUTOTUNE, INFINITE_CARDINALITY=INFINITE_CARDINALITY, UNKNOWN_CARDINALITY=UNKNOWN_CARDINALITY,
    cardinality=_cardinality, dense_to_ragged_batch=_dense_to_ragged_batch,
    CsvDataset=CsvDataset, make_csv_dataset=make_csv_dataset, Counter=_counter, DatasetSpec=DatasetSpec,
    sample_from_datasets=Dataset.sample_from_datasets, choose_from_datasets=Dataset.choose_from_datasets,
    rejection_resample=_transformation("rejection_resample"), group_by_window=_transformation("group_by_window"),
    bucket_by_sequence_length=_transformation("bucket_by_sequence_length"), scan=_transformation("scan"),
    unbatch=_transformation("unbatch"), unique=_transformation("unique"), take_while=_transformation("take_while"),
    ignore_errors=_transformation("ignore_errors"),
    get_single_element=lambda dataset: dataset.get_single_element(),
    AutoShardPolicy=AutoShardPolicy, ExternalStatePolicy=ExternalStatePolicy,
)

__all__ = ["Dataset", "DatasetSpec", "Options", "ThreadingOptions",
           "TextLineDataset", "TFRecordDataset", "FixedLengthRecordDataset",
           "Iterator", "NumpyIterator", "AUTOTUNE", "INFINITE_CARDINALITY",
           "UNKNOWN_CARDINALITY", "experimental"]
