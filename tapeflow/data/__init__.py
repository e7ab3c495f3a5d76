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


def _shuffle_and_repeat(buffer_size: Any, count: Any = None, seed: Any = None) -> Callable:
    """``tf.data.experimental.shuffle_and_repeat`` (deprecated): ``shuffle(buffer_size, seed).repeat(count)``."""
    return lambda dataset: dataset.shuffle(buffer_size, seed).repeat(count)


def _map_and_batch(map_func: Callable, batch_size: Any, num_parallel_batches: Any = None, drop_remainder: bool = False,
                   num_parallel_calls: Any = None) -> Callable:
    """``tf.data.experimental.map_and_batch`` (deprecated): ``map(map_func).batch(batch_size, drop_remainder)``."""
    return lambda dataset: dataset.map(map_func).batch(batch_size, drop_remainder=drop_remainder)


def _parallel_interleave(map_func: Callable, cycle_length: Any, block_length: Any = 1, sloppy: bool = False,
                         buffer_output_elements: Any = None, prefetch_input_elements: Any = None) -> Callable:
    """``tf.data.experimental.parallel_interleave`` (deprecated): ``interleave(map_func, cycle_length,
    block_length)`` (deterministic order, as TF's with ``sloppy=False``)."""
    return lambda dataset: dataset.interleave(map_func, cycle_length=cycle_length, block_length=block_length)


class _TFRecordWriter:
    """``tf.data.experimental.TFRecordWriter(filename, compression_type)``: ``write(dataset)`` writes a dataset of
    scalar strings as a TFRecord file."""

    def __init__(self, filename: Any, compression_type: Any = None) -> None:
        self._filename, self._compression = filename, compression_type

    def write(self, dataset: Dataset) -> None:
        from tapeflow.framework import dtypes
        from tapeflow.io import TFRecordWriter

        spec = dataset.element_spec
        if getattr(spec, "dtype", None) != dtypes.string or spec.shape.rank != 0:
            raise TypeError("Invalid `dataset`. Expected a`dataset` that produces scalar `tf.string` elements, but "
                            f"got a dataset which produces elements with shapes {spec.shape} and types "
                            f"<dtype: '{spec.dtype.name}'>.")
        with TFRecordWriter(self._filename, self._compression) as w:
            for record in dataset:
                w.write(record.numpy())


class _Experimental(SimpleNamespace):
    """``tf.data.experimental``; its names tapeflow does not build raise ``NotImplementedError``."""

    _NOT_BUILT = frozenset({
        "AutotuneAlgorithm", "AutotuneOptions", "DatasetInitializer", "DistributeOptions", "OptimizationOptions",
        "RandomDataset", "Reducer", "SHARD_HINT", "ServiceOptions", "SqlDataset", "assert_cardinality", "at",
        "copy_to_device", "dense_to_sparse_batch", "distributed_save", "enable_debug_mode", "from_list",
        "from_variant", "get_model_proto", "group_by_reducer", "index_table_from_dataset",
        "make_batched_features_dataset", "make_saveable_from_iterator", "pad_to_cardinality", "parse_example_dataset",
        "prefetch_to_device", "service", "table_from_dataset", "to_variant",
    })

    def __getattr__(self, name: str) -> Any:
        if name in _Experimental._NOT_BUILT:
            from tapeflow.framework.errors import NotImplementedInTapeflowError

            raise NotImplementedInTapeflowError(f"tf.data.experimental.{name} is not implemented in tapeflow")
        raise AttributeError(f"module 'tf.data.experimental' has no attribute '{name}'")


def _optional() -> Any:
    from tapeflow.experimental.optional import Optional

    return Optional


experimental = _Experimental(
    AUTOTUNE=AUTOTUNE, INFINITE_CARDINALITY=INFINITE_CARDINALITY, UNKNOWN_CARDINALITY=UNKNOWN_CARDINALITY,
    cardinality=_cardinality, dense_to_ragged_batch=_dense_to_ragged_batch,
    CsvDataset=CsvDataset, make_csv_dataset=make_csv_dataset, Counter=_counter, DatasetSpec=DatasetSpec,
    sample_from_datasets=Dataset.sample_from_datasets, choose_from_datasets=Dataset.choose_from_datasets,
    rejection_resample=_transformation("rejection_resample"), group_by_window=_transformation("group_by_window"),
    bucket_by_sequence_length=_transformation("bucket_by_sequence_length"), scan=_transformation("scan"),
    unbatch=_transformation("unbatch"), unique=_transformation("unique"), take_while=_transformation("take_while"),
    ignore_errors=_transformation("ignore_errors"),
    get_single_element=lambda dataset: dataset.get_single_element(),
    AutoShardPolicy=AutoShardPolicy, ExternalStatePolicy=ExternalStatePolicy, ThreadingOptions=ThreadingOptions,
    enumerate_dataset=_transformation("enumerate"), shuffle_and_repeat=_shuffle_and_repeat,
    map_and_batch=_map_and_batch, parallel_interleave=_parallel_interleave, snapshot=_transformation("snapshot"),
    get_structure=lambda dataset_or_iterator: dataset_or_iterator.element_spec,
    get_next_as_optional=lambda iterator: iterator.get_next_as_optional(),
    save=lambda dataset, path, compression=None, shard_func=None, checkpoint_args=None: dataset.save(
        path, compression=compression, shard_func=shard_func),
    load=Dataset.load, TFRecordWriter=_TFRecordWriter, Optional=_optional(),
)

__all__ = ["Dataset", "DatasetSpec", "Options", "ThreadingOptions",
           "TextLineDataset", "TFRecordDataset", "FixedLengthRecordDataset",
           "Iterator", "NumpyIterator", "AUTOTUNE", "INFINITE_CARDINALITY",
           "UNKNOWN_CARDINALITY", "experimental"]


from tapeflow.framework.missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("tf.data", frozenset({"IteratorSpec"}))
