"""``tf.data.Dataset``: an input pipeline of in-memory tensors, in Python.

Elements are nested structures (tuples, dicts, single tensors) of NumPy
arrays inside the pipeline, and tapeflow Tensors when iterated. A pipeline is
lazy: each ``iter()`` runs it from the start (so ``shuffle`` reshuffles per
epoch and ``repeat`` re-runs its input).

Speed: the common pipeline ``from_tensor_slices(...).shuffle(n).batch(b)``
never touches elements one by one. Datasets whose elements are rows of
arrays (slices, range, and shuffle/take/skip/repeat/prefetch over them) keep
a *gather plan*: an iterator of row indices; ``batch`` then gathers each
batch with one fancy-indexing call per array.

``map``/``filter`` functions are traced once into a graph for the element
spec, as TF does (tracing.py), and the compiled graph runs per element;
elements with ragged/sparse components run the function eagerly.

Differences from TF (documented): ``num_parallel_calls``, ``deterministic``
and ``prefetch`` are accepted and change nothing. ``shuffle``, ``random``,
``sample_from_datasets`` and ``rejection_resample`` draw TF's Philox words, so seeded orders are TF's.
"""

from __future__ import annotations

import itertools
from typing import Any
from collections.abc import Callable, Iterator

import numpy as np

from tapeflow.data import composite
from tapeflow.data.composite import CompositeLeaf
from tapeflow.framework import dtypes, errors
from tapeflow.framework.composite_tensor import CompositeTensor
from tapeflow.framework.tensor import Tensor, convert_to_tensor

__all__ = ["Dataset", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


# -- element structures ---------------------------------------------------------
def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _to_arrays(value: Any) -> Any:
    """A structure of NumPy arrays from tuples/dicts of tensor-likes (a list
    is one tensor, as in TF)."""
    t = type(value)
    if t is np.ndarray:
        if value.dtype.kind in "US" or (value.dtype.kind == "O" and value.size and isinstance(value.flat[0], str)):
            return convert_to_tensor(value)._value  # NumPy/Python str (a pandas column): TF's strings are bytes
        return value
    if t is Tensor:
        v = value._value
        return v if type(v) is np.ndarray else np.asarray(v)
    if t is tuple:
        return tuple([_to_arrays(v) for v in value])
    if isinstance(value, dict):
        return _same_dict(value, {k: _to_arrays(v) for k, v in value.items()})
    if _is_namedtuple(value):
        return type(value)(*[_to_arrays(v) for v in value])
    if isinstance(value, tuple):
        return tuple(_to_arrays(v) for v in value)
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, CompositeTensor):  # ragged/sparse: see tapeflow/data/composite.py
        return CompositeLeaf.of(value)
    if isinstance(value, (CompositeLeaf, Dataset)):
        return value
    if hasattr(value, "_value") and not isinstance(value._value, np.ndarray | np.generic):
        raise TypeError("tf.data.Dataset: symbolic tensors (inside tf.function) cannot feed a dataset; build the "
                        "dataset eagerly, outside the function.")
    a = np.asarray(convert_to_tensor(value)._value)
    if a.dtype.kind == "U" or a.dtype == object:
        a = _encode_strings(a.astype(object))
    return a


def _map(fn: Callable, s: Any) -> Any:
    # Exact-type checks first: this runs per element on the per-element paths.
    t = type(s)
    if t is np.ndarray:
        return fn(s)
    if t is tuple:
        return tuple([_map(fn, v) for v in s])
    if isinstance(s, dict):
        return _same_dict(s, {k: _map(fn, v) for k, v in s.items()})
    if _is_namedtuple(s):
        return type(s)(*[_map(fn, v) for v in s])
    if isinstance(s, tuple):
        return tuple(_map(fn, v) for v in s)
    return fn(s)


def _flatten(s: Any) -> list:
    t = type(s)
    if t is np.ndarray:
        return [s]
    if t is tuple and all(type(v) is np.ndarray for v in s):
        return list(s)
    if isinstance(s, dict):
        return [x for k in s for x in _flatten(s[k])]
    if isinstance(s, tuple):
        return [x for v in s for x in _flatten(v)]
    return [s]


def _same_dict(like: dict, d: dict) -> dict:
    """``d`` as the same dict type as ``like`` (an OrderedDict stays one, as TF's nest keeps it)."""
    return d if type(like) is dict else type(like)(d)


def _pack(template: Any, leaves: Iterator) -> Any:
    if isinstance(template, dict):
        return _same_dict(template, {k: _pack(v, leaves) for k, v in template.items()})
    if _is_namedtuple(template):
        return type(template)(*[_pack(v, leaves) for v in template])
    if isinstance(template, tuple):
        return tuple(_pack(v, leaves) for v in template)
    return next(leaves)


def _zip_map(fn: Callable, template: Any, items: list) -> Any:
    """``fn(list_of_leaves)`` leafwise over elements of the same structure."""
    if type(template) is tuple and all(type(v) is np.ndarray for v in template):
        return tuple([fn(list(col)) for col in zip(*items)])
    flats = [_flatten(x) for x in items]
    return _pack(template, iter([fn([f[i] for f in flats]) for i in range(len(flats[0]))]))


def _tensor(a: Any) -> Any:
    if type(a) is np.ndarray:
        return Tensor(a)
    if isinstance(a, CompositeLeaf):
        return a.value
    if isinstance(a, Dataset):
        return a
    return Tensor(a)


def _row(a: Any, i: int) -> Any:
    """Row ``i`` of a component (a string row stays a 0-d object array, not a bare ``bytes``)."""
    r = a[i]
    if type(r) is bytes or type(r) is str:
        return np.asarray(r, dtype=object)
    return r


def _snapshot(a: Any) -> Any:
    return a if isinstance(a, (CompositeLeaf, Dataset)) else np.copy(a)


def _to_tensors(s: Any) -> Any:
    return _map(_tensor, s)


def _from_user(value: Any) -> Any:
    """A map/filter/generator result back to arrays (lists become tuples when
    they hold tensors, as TF's map does)."""
    if type(value) is tuple or type(value) is Tensor:
        return _to_arrays(value)
    if isinstance(value, list) and value and any(isinstance(v, Tensor) for v in value):
        value = tuple(value)
    if hasattr(value, "_value") and not isinstance(value, Tensor) and not isinstance(value._value, np.ndarray):
        value = convert_to_tensor(value)
    return _to_arrays(value)


def _call(fn: Callable, element: Any) -> Any:
    # TF unpacks a tuple element into positional arguments.
    if isinstance(element, tuple) and not _is_namedtuple(element):
        return fn(*element)
    return fn(element)


def _spec_of(s: Any, batch_unknown: bool = False) -> Any:
    from tapeflow.framework.tensor_spec import TensorSpec

    def one(a: np.ndarray):
        if isinstance(a, CompositeLeaf):
            return a.spec(batch_unknown)
        if isinstance(a, Dataset):
            from tapeflow.data.nested import DatasetSpec

            return DatasetSpec(a.element_spec)
        shape = list(a.shape)
        if batch_unknown and shape:
            shape[0] = None
        return TensorSpec(shape, dtypes.as_dtype(a.dtype))

    return _map(one, s)


def _same_structure_str(s: Any) -> str:
    return repr(_map(lambda a: f"{a.dtype}{list(a.shape)}", s))


# -- the base class --------------------------------------------------------------
class _Failed:
    """An element whose making raised, in an ``_elements_or_errors`` stream."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


class Dataset:
    """A sequence of elements, built with ``from_tensor_slices``, ``range``
    ... and transformed with ``map``, ``shuffle``, ``batch``:

    >>> ds = tf.data.Dataset.from_tensor_slices(([1, 2, 3, 4], [0, 1, 0, 1]))
    >>> [(x.numpy(), y.numpy()) for x, y in ds.batch(2)]
    [(array([1, 2], dtype=int32), array([0, 1], dtype=int32)), (array([3, 4], dtype=int32), array([0, 1], ...))]
    """

    # -- what subclasses provide ------------------------------------------
    def _elements(self) -> Iterator:
        raise NotImplementedError

    def _elements_or_errors(self) -> Iterator:
        """The elements, with a ``_Failed`` in place of one whose making raised: the stream ``ignore_errors``
        reads. A dataset ends at its first error, as TF's batch and generator datasets do; those that go on
        after one, as TF's do (map, filter, shuffle, take, interleave, the CSV reader), override this."""
        try:
            yield from self._elements()
        except Exception as e:  # TF turns every failure into an error status, which ignore_errors drops
            yield _Failed(e)

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    def _plan(self) -> _Plan | None:
        """A gather plan (rows of arrays), or None."""
        return None

    def _template(self) -> Any:
        """One element's structure (NumPy arrays), used for specs."""
        for e in self._elements():
            return e
        raise ValueError("tf.data: cannot infer the element structure of an empty dataset.")

    # -- iteration -----------------------------------------------------------
    def _iterator_inputs(self) -> list:
        """The input datasets whose iterators TF creates together with this dataset's iterator: all of them,
        unless the dataset says otherwise (a shuffle and a concatenation's second input start later)."""
        inputs = []
        for v in vars(self).values():
            if isinstance(v, Dataset):
                inputs.append(v)
            elif isinstance(v, (tuple, list, dict)):
                inputs.extend(d for d in _flatten_datasets(v) if isinstance(d, Dataset))
        return inputs

    def _draw_iterator_seeds(self, seeds: dict) -> None:
        """What TF's iterator draws when it is created (a reshuffling shuffle's seeds), into ``seeds`` by dataset
        id: ``iter(ds)`` draws them even if the iterator is never read (Keras's fit makes such iterators)."""
        for d in self._iterator_inputs():
            d._draw_iterator_seeds(seeds)

    def __iter__(self) -> Iterator:
        from tapeflow.framework.context import state

        if state.graph is not None:  # a pass that starts each time the function runs; next() pulls at run time
            from tapeflow.data.iterator_ops import GraphIterator

            return GraphIterator(self)
        return OwnedIterator(self)

    def _autograph_for_stmt(self, body_fn: Callable, state: tuple, names: tuple, brk_index: int,
                            while_stmt: Callable, as_bool: Callable) -> tuple:
        """``for x in dataset`` in a traced function (AutoGraph): a While loop pulling elements at run time."""
        from tapeflow.data.iterator_ops import dataset_for_stmt

        return dataset_for_stmt(self, body_fn, state, names, brk_index, while_stmt, as_bool)

    def as_numpy_iterator(self) -> NumpyIterator:
        """Iterates elements as NumPy arrays (same structure; read-only, as TF's)."""
        from tapeflow.framework.context import state

        if state.graph is not None:
            raise RuntimeError("`tf.data.Dataset.as_numpy_iterator()` is only supported in eager mode.")
        return NumpyIterator(self)

    def __len__(self) -> int:
        n = self._cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self) -> bool:
        return True

    def cardinality(self) -> Tensor:
        """The number of elements (int64 tensor); -1 infinite, -2 unknown."""
        return Tensor(np.asarray(self._cardinality(), dtype=np.int64))

    @property
    def element_spec(self) -> Any:
        """The ``tf.TensorSpec`` structure of one element."""
        return _spec_of(self._template())

    def __repr__(self) -> str:
        try:
            spec = self.element_spec
        except Exception:  # noqa: BLE001 - repr must not fail
            spec = "?"
        name = type(self).__name__
        name = getattr(self, "_tf_name", None) or _TF_CLASS_NAMES.get(name, name)
        return f"<{name} element_spec={spec}>"

    # -- sources ---------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors: Any, name: str | None = None) -> Dataset:
        """One element per row of ``tensors`` (a tensor, or a tuple/dict of
        tensors with the same first dimension)."""
        return _TensorSlices(_map(_snapshot, _to_arrays(tensors)))  # a snapshot, as TF

    @staticmethod
    def from_tensors(tensors: Any, name: str | None = None) -> Dataset:
        """One element: ``tensors`` itself."""
        return _FromTensors(_map(_snapshot, _to_arrays(tensors)))

    @staticmethod
    def range(*args: int, output_type: Any = dtypes.int64, name: str | None = None) -> Dataset:
        """``range(stop)``, ``range(start, stop[, step])`` as int64 scalars."""
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Dataset.range takes 1 to 3 positional arguments (start, stop, step), got {len(args)}.")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
        if step == 0:
            raise errors.InvalidArgumentError("step must be a non-zero integer. [Op:RangeDataset]")
        return _Range(int(start), int(stop), int(step), dtypes.as_dtype(output_type))

    @staticmethod
    def from_generator(generator: Callable, output_types: Any = None, output_shapes: Any = None,
                       args: Any = None, output_signature: Any = None, name: str | None = None) -> Dataset:
        """Elements from calling ``generator(*args)`` (again for each epoch)."""
        if not callable(generator):
            raise TypeError("`generator` must be a Python callable.")
        if output_signature is not None and (output_types is not None or output_shapes is not None):
            raise TypeError("`output_types` and `output_shapes` cannot be used together with `output_signature`.")
        if output_shapes is not None and output_types is None:
            raise TypeError("The `output_types` argument can not be None when `output_shapes` is set.")
        if output_signature is None and output_types is None:
            raise TypeError("The `output_signature` argument must be set (or, deprecated, `output_types`).")
        ds = _FromGenerator(generator, tuple(args or ()), output_types, output_signature)
        ds._shapes = output_shapes
        return ds

    @staticmethod
    def zip(*datasets: Any, name: str | None = None) -> Dataset:
        """Elements of several datasets side by side (stops at the shortest)."""
        if len(datasets) == 1 and not isinstance(datasets[0], Dataset):
            datasets = datasets[0]
        return _Zip(datasets)

    # -- transformations -----------------------------------------------------
    def map(self, map_func: Callable, num_parallel_calls: Any = None, deterministic: Any = None,
            name: str | None = None) -> Dataset:
        """``map_func(element)`` (a tuple element is unpacked into arguments)."""
        ds = _Map(self, map_func)
        ds._tracer()  # traced now, as TF: errors in map_func surface here
        return ds

    def filter(self, predicate: Callable, name: str | None = None) -> Dataset:
        """Keeps the elements for which ``predicate`` returns a true scalar."""
        ds = _Filter(self, predicate)
        ds._tracer()
        return ds

    def batch(self, batch_size: int, drop_remainder: bool = False, num_parallel_calls: Any = None,
              deterministic: Any = None, name: str | None = None) -> Dataset:
        """Stacks ``batch_size`` consecutive elements (the last batch may be
        smaller unless ``drop_remainder``)."""
        batch_size = int(np.asarray(batch_size))
        if batch_size <= 0:
            raise errors.InvalidArgumentError(f"Batch size must be greater than zero, got {batch_size}. "
                                              "[Op:BatchDatasetV2]")
        return _Batch(self, batch_size, bool(drop_remainder))

    def padded_batch(self, batch_size: int, padded_shapes: Any = None, padding_values: Any = None,
                     drop_remainder: bool = False, name: str | None = None) -> Dataset:
        """Batches elements of different shapes, padding each component to
        ``padded_shapes`` (``None`` / -1 dims: the batch's longest) with
        ``padding_values`` (default 0)."""
        batch_size = int(np.asarray(batch_size))
        if batch_size <= 0:
            raise errors.InvalidArgumentError(f"Batch size must be greater than zero, got {batch_size}. "
                                              "[Op:PaddedBatchDatasetV2]")
        return _PaddedBatch(self, batch_size, padded_shapes, padding_values, bool(drop_remainder))

    def ragged_batch(self, batch_size: int, drop_remainder: bool = False, row_splits_dtype: Any = dtypes.int64,
                     name: str | None = None) -> Dataset:
        """Batches elements whose shapes differ into RaggedTensors."""
        return _Map(self, lambda *e: e[0] if len(e) == 1 else e, ragged=True).batch(batch_size, drop_remainder)

    def unbatch(self, name: str | None = None) -> Dataset:
        """Splits each element into its rows (the inverse of ``batch``)."""
        return _Unbatch(self)

    def shuffle(self, buffer_size: int, seed: int | None = None, reshuffle_each_iteration: bool = True,
                name: str | None = None) -> Dataset:
        """Randomly shuffles with a buffer of ``buffer_size`` elements (a full
        shuffle when it is at least the dataset size)."""
        buffer_size = int(np.asarray(buffer_size))
        if buffer_size <= 0 and buffer_size != AUTOTUNE:
            raise errors.InvalidArgumentError(f"buffer_size must be greater than zero, got {buffer_size}. "
                                              "[Op:ShuffleDatasetV3]")
        return _Shuffle(self, buffer_size, seed, reshuffle_each_iteration)

    def repeat(self, count: int | None = None, name: str | None = None) -> Dataset:
        """Repeats ``count`` times (forever when ``None`` or -1)."""
        count = -1 if count is None else int(np.asarray(count))
        return _Repeat(self, count)

    def take(self, count: int, name: str | None = None) -> Dataset:
        """The first ``count`` elements (all when -1)."""
        return _Take(self, int(np.asarray(count)))

    def skip(self, count: int, name: str | None = None) -> Dataset:
        """All but the first ``count`` elements (-1 skips everything)."""
        return _Skip(self, int(np.asarray(count)))

    def shard(self, num_shards: int, index: int, name: str | None = None) -> Dataset:
        """Every ``num_shards``-th element, starting at ``index`` (one worker's part of the data)."""
        num_shards, index = int(np.asarray(num_shards)), int(np.asarray(index))
        if num_shards <= 0:
            raise errors.InvalidArgumentError(f"Number of shards must be greater than zero (currently num_shards "
                                              f"= {num_shards}). [Op:ShardDataset]")
        if not 0 <= index < num_shards:
            raise errors.InvalidArgumentError(f"Index must be between 0 and {num_shards - 1} (currently index = "
                                              f"{index}). [Op:ShardDataset]")
        return _Shard(self, num_shards, index)

    def rebatch(self, batch_size: Any, drop_remainder: bool = False, name: str | None = None) -> Dataset:
        """Re-cuts a batched dataset's rows into batches of ``batch_size`` (a vector of sizes is used
        round-robin), as ``unbatch().batch(batch_size)`` would."""
        sizes = [int(b) for b in np.atleast_1d(np.asarray(batch_size))]
        if not sizes or any(b <= 0 for b in sizes):
            raise errors.InvalidArgumentError(f"rebatch: batch sizes must be greater than zero, got {sizes}. "
                                              "[Op:RebatchDatasetV2]")
        return _Rebatch(self, sizes, bool(drop_remainder))

    def prefetch(self, buffer_size: int, name: str | None = None) -> Dataset:
        """Accepted for compatibility; elements are produced on demand."""
        return _Passthrough(self)

    def cache(self, filename: str = "", name: str | None = None) -> Dataset:
        """Keeps the elements of the first full pass in memory, or with ``filename`` in files that later
        iterators and later runs read instead of the input (TF's semantics, tapeflow's format: see
        tapeflow/data/persist.py)."""
        if isinstance(filename, str) and not filename:
            return _Cache(self)
        from tapeflow.data import persist

        return persist.cache_to_file(self, filename)

    def save(self, path: str, compression: str | None = None, shard_func: Callable | None = None,
             checkpoint_args: Any = None) -> None:
        """Writes the elements to the directory ``path`` (tapeflow's format; read it with ``Dataset.load``)."""
        from tapeflow.data import persist

        persist.save(self, path, compression, shard_func, checkpoint_args)

    @staticmethod
    def load(path: str, element_spec: Any = None, compression: str | None = None,
             reader_func: Callable | None = None, wait: bool = False) -> Dataset:
        """The dataset ``Dataset.save`` wrote to ``path``; ``reader_func`` gets the dataset of its shards."""
        from tapeflow.data import persist

        return persist.load(path, element_spec, compression, reader_func, wait)

    def snapshot(self, path: str, compression: str | None = "AUTO", reader_func: Callable | None = None,
                 shard_func: Callable | None = None, name: str | None = None) -> Dataset:
        """The first complete pass is written under ``path``; later passes and runs of the same pipeline read it."""
        from tapeflow.data import persist

        return persist.snapshot(self, path, compression, reader_func, shard_func)

    def enumerate(self, start: int = 0, name: str | None = None) -> Dataset:
        """``(index, element)`` pairs, the index an int64 counting from ``start``."""
        return _Zip((Dataset.range(int(start), np.iinfo(np.int64).max), self))

    def concatenate(self, dataset: Dataset, name: str | None = None) -> Dataset:
        """This dataset's elements, then ``dataset``'s (same structure)."""
        return _Concatenate(self, dataset)

    def reduce(self, initial_state: Any, reduce_func: Callable, name: str | None = None) -> Any:
        """Folds ``reduce_func(state, element)`` over the dataset."""
        state = _map(Tensor, _to_arrays(initial_state))
        for e in self:
            state = reduce_func(state, e)  # (a tuple element stays one argument, as TF)
        return state

    def window(self, size: int, shift: int | None = None, stride: int = 1, drop_remainder: bool = False,
               name: str | None = None) -> Dataset:
        """Windows of ``size`` elements, each a nested dataset (a tuple/dict of them for tuple/dict
        elements); window ``i`` starts at element ``i * shift`` and takes every ``stride``-th element.
        ``ds.window(n).flat_map(lambda w: w.batch(n))`` gives the windows as tensors."""
        from tapeflow.data import nested

        return nested.window(self, size, shift, stride, drop_remainder)

    def flat_map(self, map_func: Callable, name: str | None = None) -> Dataset:
        """``map_func(element)`` returns a dataset; their elements one after the other."""
        from tapeflow.data import nested

        return nested._FlatMap(self, map_func)

    def interleave(self, map_func: Callable, cycle_length: int | None = None, block_length: int | None = None,
                   num_parallel_calls: Any = None, deterministic: Any = None, name: str | None = None) -> Dataset:
        """Elements of the datasets ``map_func`` returns, ``block_length`` at a time from ``cycle_length``
        of them in turn (TF's order; ``cycle_length`` defaults to the number of CPU cores, as TF)."""
        from tapeflow.data import nested

        ds = nested.interleave(self, map_func, cycle_length, block_length, num_parallel_calls)
        ds._tf_name = "_ParallelInterleaveDataset" if num_parallel_calls is not None else "_InterleaveDataset"
        return ds

    def group_by_window(self, key_func: Callable, reduce_func: Callable, window_size: int | None = None,
                        window_size_func: Callable | None = None, name: str | None = None) -> Dataset:
        """Groups elements by ``key_func``; each full window of a key (and what is left at the end, in key
        order) goes through ``reduce_func(key, window_dataset)``."""
        from tapeflow.data import nested

        return nested.group_by_window(self, key_func, reduce_func, window_size, window_size_func)

    def bucket_by_sequence_length(self, element_length_func: Callable, bucket_boundaries: list,
                                  bucket_batch_sizes: list, padded_shapes: Any = None, padding_values: Any = None,
                                  pad_to_bucket_boundary: bool = False, no_padding: bool = False,
                                  drop_remainder: bool = False, name: str | None = None) -> Dataset:
        """Padded batches of elements of similar length (``group_by_window`` over length buckets)."""
        from tapeflow.data import nested

        return nested.bucket_by_sequence_length(self, element_length_func, bucket_boundaries, bucket_batch_sizes,
                                                padded_shapes, padding_values, pad_to_bucket_boundary, no_padding,
                                                drop_remainder)

    def scan(self, initial_state: Any, scan_func: Callable, name: str | None = None) -> Dataset:
        """``scan_func(state, element) -> (new_state, output)`` carried across the elements."""
        from tapeflow.data import nested

        return nested._Scan(self, initial_state, scan_func)

    def take_while(self, predicate: Callable, name: str | None = None) -> Dataset:
        """Elements up to the first one for which ``predicate`` is false."""
        from tapeflow.data import nested

        return nested._TakeWhile(self, predicate)

    def ignore_errors(self, log_warning: bool = False, name: str | None = None) -> Dataset:
        """The elements, dropping those whose making raised (a failing ``map`` function, a bad CSV record),
        as ``tf.data.Dataset.ignore_errors``; ``log_warning`` prints each dropped error to stderr."""
        from tapeflow.data import nested

        return nested._IgnoreErrors(self, bool(log_warning))

    def unique(self, name: str | None = None) -> Dataset:
        """Each distinct element once, in first-seen order (int32/int64/string elements)."""
        from tapeflow.data import nested

        return nested._Unique(self)

    def get_single_element(self, name: str | None = None) -> Any:
        """The only element (``InvalidArgumentError`` if the dataset has none or several)."""
        from tapeflow.data import nested

        return nested.get_single_element(self)

    @staticmethod
    def counter(start: int = 0, step: int = 1, dtype: Any = dtypes.int64, name: str | None = None) -> Dataset:
        """``start, start + step, ...`` forever."""
        from tapeflow.data import nested

        return nested.counter(start, step, dtype)

    def rejection_resample(self, class_func: Callable, target_dist: Any, initial_dist: Any = None,
                           seed: int | None = None, name: str | None = None) -> Dataset:
        """``(class, element)`` pairs resampled towards ``target_dist`` (TF's mix of the original stream and a
        per-class rejection sampler)."""
        from tapeflow.data import sampling

        return sampling.rejection_resample(self, class_func, target_dist, initial_dist, seed)

    @staticmethod
    def sample_from_datasets(datasets: list, weights: Any = None, seed: int | None = None,
                             stop_on_empty_dataset: bool = False, rerandomize_each_iteration: Any = None) -> Dataset:
        """Elements drawn at random from ``datasets`` with probabilities ``weights``."""
        from tapeflow.data import sampling

        return sampling.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset, rerandomize_each_iteration)

    @staticmethod
    def random(seed: int | None = None, rerandomize_each_iteration: bool | None = None,
               name: str | None = None) -> Dataset:
        """An infinite dataset of pseudorandom int64 scalars (TF's Philox words, in [0, 2**32))."""
        from tapeflow.data import sampling

        return sampling.random(seed, rerandomize_each_iteration)

    @staticmethod
    def choose_from_datasets(datasets: list, choice_dataset: Dataset, stop_on_empty_dataset: bool = True) -> Dataset:
        """Element ``i`` comes from ``datasets[choice_i]`` (``choice_dataset`` holds int64 scalars)."""
        from tapeflow.data import sampling

        return sampling.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)

    @staticmethod
    def list_files(file_pattern: Any, shuffle: bool | None = None, seed: int | None = None,
                   name: str | None = None) -> Dataset:
        """The file names matching ``file_pattern`` (a glob, or a list of them), shuffled unless
        ``shuffle=False`` (then sorted)."""
        from tapeflow.data import readers

        return readers.list_files(file_pattern, shuffle, seed)

    def apply(self, transformation_func: Callable) -> Dataset:
        return transformation_func(self)

    def options(self) -> Any:
        """The ``tf.data.Options`` of this dataset: its inputs' merged, then any ``with_options`` above them."""
        from tapeflow.data.options import merge_options

        return merge_options(*[d.options() for d in self._input_datasets()])

    def _input_datasets(self) -> list:
        found = []
        for v in vars(self).values():
            if isinstance(v, Dataset):
                found.append(v)
            elif isinstance(v, (list, tuple)):
                found.extend(d for d in v if isinstance(d, Dataset))
        return found

    def with_options(self, options: Any, name: str | None = None) -> Dataset:
        """This dataset with ``options`` (a ``tf.data.Options``) merged over the ones it has."""
        from tapeflow.data.options import Options

        if not isinstance(options, Options):
            raise TypeError(f"Dataset.with_options: `options` must be a `tf.data.Options`; got {type(options)}.")
        return _WithOptions(self, options)


# -- gather plans ---------------------------------------------------------------
# TF's class names, as the repr shows them
_TF_CLASS_NAMES = {
    "_TensorSlices": "_TensorSliceDataset", "_FromTensors": "_TensorDataset", "_Range": "_RangeDataset",
    "_FromGenerator": "_FlatMapDataset", "_Zip": "_ZipDataset", "_Map": "_MapDataset", "_Filter": "_FilterDataset",
    "_Batch": "_BatchDataset", "_PaddedBatch": "_PaddedBatchDataset", "_Unbatch": "_UnbatchDataset",
    "_Shuffle": "_ShuffleDataset", "_Repeat": "_RepeatDataset", "_Take": "_TakeDataset", "_Skip": "_SkipDataset",
    "_Passthrough": "_PrefetchDataset", "_Cache": "CacheDataset", "_Concatenate": "_ConcatenateDataset",
    "_Window": "_WindowDataset", "_ListDataset": "_VariantDataset", "_FlatMap": "_FlatMapDataset",
    "_GroupByWindow": "_GroupByWindowDataset", "_Scan": "_ScanDataset", "_TakeWhile": "_TakeWhileDataset",
    "_Unique": "_UniqueDataset", "_Counter": "_ScanDataset", "_Shard": "_ShardDataset",
    "_Choose": "_DirectedInterleaveDataset", "_Sample": "_DirectedInterleaveDataset", "_WithOptions": "_OptionsDataset",
}


class DatasetIterator:
    """``tf.data.Iterator``: the base of the iterators ``iter(dataset)`` returns (``isinstance`` checks);
    ``element_spec``, ``get_next()`` and ``get_next_as_optional()``."""

    @property
    def element_spec(self) -> Any:
        raise NotImplementedError("Iterator.element_spec")

    def get_next(self) -> Any:
        raise NotImplementedError("Iterator.get_next")

    def get_next_as_optional(self) -> Any:
        raise NotImplementedError("Iterator.get_next_as_optional")


class OwnedIterator(DatasetIterator):
    """What ``iter(dataset)`` returns: the elements in order, as tensors. ``tf.train.Checkpoint``
    tracks its position (as TF tracks an iterator's state); a restore replays the dataset up to the
    saved position, so the next element is the one that followed the save (for a dataset whose
    order is reproducible: unshuffled, or shuffled with a seed)."""

    def __init__(self, dataset: Dataset) -> None:
        self._dataset = dataset
        self._seeds: dict = {}
        draw = getattr(dataset, "_draw_iterator_seeds", None)  # (duck-typed datasets may have none)
        if draw is not None:
            draw(self._seeds)
        self._stream = iter(dataset._elements())
        self._position = 0
        self._state_var: Any = None
        self._synced: Any = None

    @property
    def element_spec(self) -> Any:
        return self._dataset.element_spec

    def __iter__(self) -> OwnedIterator:
        return self

    def _next_raw(self) -> Any:
        var = self._state_var
        if var is not None and var._value is not self._synced:  # restored from a checkpoint
            self._seek(int(np.asarray(var._value).reshape(-1)[0]))
        if self._seeds:  # seeds drawn at creation, not yet taken by their datasets: visible while pulling
            _ITERATOR_SEEDS.append(self._seeds)
            try:
                element = next(self._stream)
            finally:
                _ITERATOR_SEEDS.pop()
        else:
            element = next(self._stream)
        self._position += 1
        return element

    def __next__(self) -> Any:
        from tapeflow.framework.context import state

        if state.graph is not None:  # inside tf.function: an op that takes the next element when the function runs
            from tapeflow.data.iterator_ops import traced_next

            return traced_next(self, self._dataset.element_spec)
        return _to_tensors(self._next_raw())

    def get_next_as_optional(self) -> Any:
        """A ``tf.experimental.Optional`` of the next element (empty at the end); inside tf.function, taken
        when the function runs."""
        from tapeflow.data.iterator_ops import get_next_as_optional

        return get_next_as_optional(self, self._dataset.element_spec)

    def get_next(self) -> Any:
        """The next element; ``tf.errors.OutOfRangeError`` at the end (TF's behaviour)."""
        from tapeflow.framework.context import state

        if state.graph is not None:
            return next(self)
        try:
            return next(self)
        except StopIteration:
            raise errors.OutOfRangeError("End of sequence") from None

    def _seek(self, position: int) -> None:
        self._stream = iter(self._dataset._elements())
        for _ in range(position):
            next(self._stream)
        self._position = position
        self._synced = self._state_var._value

    def _trackable_children(self, *args: Any, **kwargs: Any) -> dict:
        from tapeflow.framework.variables import Variable

        var = self._state_var
        if var is not None and var._value is not self._synced:
            self._seek(int(np.asarray(var._value).reshape(-1)[0]))
        arr = np.asarray([self._position], np.int64)
        if var is None:
            var = self._state_var = Variable(arr, trainable=False, name="iterator_state")
        var._value = arr
        self._synced = var._value
        return {"_iterator_state": var}


def _read_only_numpy(a: Any) -> Any:
    if type(a) is np.ndarray:
        if a.ndim == 0:
            return a[()]
        a = a.view()  # the dataset's own arrays (cache(), from_tensor_slices' rows) stay writable
        a.setflags(write=False)
        return a
    if isinstance(a, CompositeLeaf):  # a RaggedTensor row: its numpy() (a dense row when it has no ragged dim)
        return a.value.numpy()
    return a


class NumpyIterator:
    """What ``Dataset.as_numpy_iterator()`` returns (TF's ``NumpyIterator``): the elements as read-only
    NumPy arrays (0-d ones as NumPy scalars), with ``next()`` beside ``__next__``."""

    def __init__(self, dataset: Dataset) -> None:
        self._dataset = dataset
        self._iterator = OwnedIterator(dataset)  # its seeds and position, as iter(dataset)

    def __repr__(self) -> str:
        return f"NumpyIterator(iterator={self._iterator})"

    def __iter__(self) -> NumpyIterator:
        return self

    def __next__(self) -> Any:
        return _map(_read_only_numpy, self._iterator._next_raw())

    def next(self) -> Any:
        return self.__next__()


class _Plan:
    """Rows ``indices`` of a source: ``gather(idx_array)`` builds a batch,
    ``row(i)`` one element, ``indices()`` a fresh index iterator per epoch."""

    def __init__(self, gather: Callable, row: Callable, indices: Callable) -> None:
        self.gather = gather
        self.row = row
        self.indices = indices


class _TensorSlices(Dataset):
    def __init__(self, arrays: Any) -> None:
        leaves = _flatten(arrays)
        for a in leaves:
            if a.ndim == 0:
                raise ValueError(
                    f"Unbatching a tensor is only supported for rank >= 1, got a scalar ({a.dtype}) in "
                    "from_tensor_slices; use from_tensors for single elements."
                )
        sizes = {a.shape[0] for a in leaves}
        if len(sizes) > 1:
            a, b = sorted(sizes, reverse=True)[:2]
            raise ValueError(
                f"Dimensions {a} and {b} are not compatible: from_tensor_slices needs every component to have "
                f"the same first dimension, got {_same_structure_str(arrays)}."
            )
        self._arrays = arrays
        self._n = leaves[0].shape[0]

    def _cardinality(self) -> int:
        return self._n

    def _plan(self) -> _Plan:
        arrays = self._arrays
        return _Plan(lambda idx: _map(lambda a: a[idx], arrays), lambda i: _map(lambda a: _row(a, i), arrays),
                     lambda: iter(range(self._n)))

    def _elements(self) -> Iterator:
        arrays = self._arrays
        if type(arrays) is tuple and all(type(a) is np.ndarray for a in arrays):
            for i in range(self._n):  # the common (x, y) case, without the generic walk
                yield tuple([_row(a, i) for a in arrays])
            return
        for i in range(self._n):
            yield _map(lambda a, i=i: _row(a, i), arrays)

    def _template(self) -> Any:
        return _map(lambda a: _row(a, 0) if a.shape[0] else np.zeros(a.shape[1:], a.dtype), self._arrays)


class _FromTensors(Dataset):
    def __init__(self, arrays: Any) -> None:
        self._arrays = arrays

    def _cardinality(self) -> int:
        return 1

    def _elements(self) -> Iterator:
        yield self._arrays


class _Range(Dataset):
    def __init__(self, start: int, stop: int, step: int, dtype: dtypes.DType) -> None:
        self._start, self._stop, self._step = start, stop, step
        self._dtype = dtype.as_numpy_dtype
        self._n = max(0, len(range(start, stop, step)))

    def _cardinality(self) -> int:
        return self._n

    def _plan(self) -> _Plan:
        s, st, dt = self._start, self._step, self._dtype
        return _Plan(lambda idx: (s + np.asarray(idx, np.int64) * st).astype(dt), lambda i: np.asarray(s + i * st, dt),
                     lambda: iter(range(self._n)))

    def _elements(self) -> Iterator:
        dt = self._dtype
        for v in range(self._start, self._stop, self._step):
            yield np.asarray(v, dt)

    def _template(self) -> Any:
        return np.asarray(0, self._dtype)


class _FromGenerator(Dataset):
    def __init__(self, gen: Callable, args: tuple, output_types: Any, signature: Any) -> None:
        self._gen, self._args = gen, args
        self._types, self._signature = output_types, signature

    _shapes: Any = None

    def _elements(self) -> Iterator:
        spec = self.element_spec if (self._signature is not None or self._types is not None) else None
        try:
            it = iter(self._gen(*self._args))
        except Exception as e:  # noqa: BLE001 - re-raised as TF's py_func error
            raise _py_func_error(e) from e
        while True:
            try:
                value = next(it)
            except StopIteration:
                return
            except Exception as e:  # noqa: BLE001
                raise _py_func_error(e) from e
            if self._signature is not None:
                value = _generated_cast(value, self._signature, lambda s: s.dtype)
            elif self._types is not None:
                value = _generated_cast(value, self._types, lambda t: t)
            value = _from_user(value)
            if spec is not None:
                _check_generated(value, spec)
            yield value

    def _template(self) -> Any:
        if self._signature is not None:
            return _map_spec_zeros(self._signature)
        return super()._template()

    @property
    def element_spec(self) -> Any:
        """From ``output_signature`` (or ``output_types``/``output_shapes``), ``None`` dims kept, as TF."""
        from tapeflow.framework.tensor_spec import TensorSpec

        if self._signature is not None:
            return _as_tuples(self._signature)
        if self._types is not None:
            return _specs_from_types(_as_tuples(self._types), _as_tuples(self._shapes), TensorSpec)
        return super().element_spec


def _as_tuples(x: Any) -> Any:
    """A user structure of specs/types with lists as tuples (TF's nest)."""
    if isinstance(x, dict):
        return {k: _as_tuples(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)) and not _is_namedtuple(x):
        return tuple(_as_tuples(v) for v in x)
    return x


def _specs_from_types(types: Any, shapes: Any, spec_cls: type) -> Any:
    if isinstance(types, dict):
        return {k: _specs_from_types(t, None if shapes is None else shapes[k], spec_cls) for k, t in types.items()}
    if isinstance(types, tuple):
        return tuple(_specs_from_types(t, None if shapes is None else shapes[i], spec_cls)
                     for i, t in enumerate(types))
    if shapes is not None and isinstance(shapes, tuple) and any(isinstance(d, tuple) for d in shapes):
        raise ValueError(f"output_shapes {shapes} do not match the structure of output_types.")
    return spec_cls(shapes, dtypes.as_dtype(types))


def _check_generated(value: Any, spec: Any) -> None:
    for a, sp in zip(_flatten(value), _flatten(spec)):
        dims = None if sp.shape.rank is None else sp.shape.as_list()
        if dims is not None and (a.ndim != len(dims) or any(d is not None and d != n for d, n in zip(dims, a.shape))):
            raise errors.InvalidArgumentError(
                f"`generator` yielded an element of shape {_shape_str(a.shape)} where an element of shape "
                f"{_shape_str(dims)} was expected. [Op:PyFunc]")


def _shape_str(dims: Any) -> str:
    dims = ["?" if d is None else str(d) for d in dims]
    return "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"


def _py_func_error(e: BaseException) -> BaseException:
    """A Python exception raised by a generator as TF's PyFunc kernel reports it: ``ValueError``/``TypeError``
    become ``InvalidArgumentError``, other exceptions ``UnknownError`` (tf.errors pass through), the message
    ``"ExceptionType: message"`` followed by the Python traceback."""
    import traceback

    if isinstance(e, errors.OpError):
        return e
    cls = errors.InvalidArgumentError if isinstance(e, (ValueError, TypeError)) else errors.UnknownError
    tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    return cls(None, None, f"{type(e).__name__}: {e}\n{tb}\n\t [[{{{{node PyFunc}}}}]] [Op:IteratorGetNext]")


def _generated_cast(value: Any, types: Any, get: Callable) -> Any:
    try:
        return _cast_like(value, types, get)
    except (TypeError, ValueError) as e:
        first = _flatten(value)[0] if isinstance(value, (tuple, dict)) else value
        want = _flatten(types)[0] if isinstance(types, (tuple, dict)) else types
        err = TypeError("`generator` yielded an element that could not be converted to the expected type. The "
                        f"expected type was {dtypes.as_dtype(get(want)).name}, but the yielded element was {first}.")
        raise _py_func_error(err) from e


def _cast_like(value: Any, types: Any, get: Callable) -> Any:
    if isinstance(types, dict):
        return {k: _cast_like(value[k], types[k], get) for k in types}
    if isinstance(types, (tuple, list)):
        return tuple(_cast_like(v, t, get) for v, t in zip(value, types))
    dt = dtypes.as_dtype(get(types))
    if dt == dtypes.string:
        return _encode_strings(np.asarray(getattr(value, "_value", value), dtype=object))
    return np.asarray(value, dtype=dt.as_numpy_dtype)


def _encode_strings(a: np.ndarray) -> np.ndarray:
    """A string component as TF holds it: ``bytes`` (Python ``str`` encoded as UTF-8)."""
    if a.size and any(isinstance(x, str) for x in a.reshape(-1)):
        return np.vectorize(lambda x: x.encode("utf-8") if isinstance(x, str) else x, otypes=[object])(a)
    return a


def _map_spec_zeros(sig: Any) -> Any:
    if isinstance(sig, dict):
        return {k: _map_spec_zeros(v) for k, v in sig.items()}
    if isinstance(sig, (tuple, list)):
        return tuple(_map_spec_zeros(v) for v in sig)
    shape = [0 if d is None else d for d in sig.shape.as_list()] if sig.shape.rank is not None else []
    return np.zeros(shape, sig.dtype.as_numpy_dtype)


class _Zip(Dataset):
    def __init__(self, datasets: Any) -> None:
        if isinstance(datasets, list):
            raise TypeError("Invalid input to `zip`. Inputs are expected to be (nested) structures of "
                            "`tf.data.Dataset` objects. Python `list` is not supported and you should use `tuple` "
                            "instead.")
        for d in _flatten_datasets(datasets):
            if not isinstance(d, Dataset):
                raise TypeError(f"Dataset.zip expects datasets (or a tuple/dict of them), got {type(d).__name__}.")
        self._datasets = datasets

    def _cardinality(self) -> int:
        cards = [d._cardinality() for d in _flatten_datasets(self._datasets)]
        finite = [c for c in cards if c >= 0]
        if finite:
            return min(finite)
        return UNKNOWN_CARDINALITY if UNKNOWN_CARDINALITY in cards else INFINITE_CARDINALITY

    def _elements(self) -> Iterator:
        flat = _flatten_datasets(self._datasets)
        for values in zip(*[d._elements() for d in flat]):
            yield _pack_datasets(self._datasets, iter(values))


def _flatten_datasets(ds: Any) -> list:
    """The datasets of a (nested) tuple/list/dict of datasets, in order (TF 2's zip takes any nesting)."""
    if isinstance(ds, dict):
        return [d for v in ds.values() for d in _flatten_datasets(v)]
    if isinstance(ds, (tuple, list)):
        return [d for v in ds for d in _flatten_datasets(v)]
    return [ds]


def _pack_datasets(structure: Any, values: Iterator) -> Any:
    """``values`` (one element per dataset, in ``_flatten_datasets`` order) in the datasets' nesting."""
    if isinstance(structure, dict):
        return {k: _pack_datasets(v, values) for k, v in structure.items()}
    if isinstance(structure, (tuple, list)):
        return tuple(_pack_datasets(v, values) for v in structure)
    return next(values)


_UNSET = object()

# The seed dicts of the OwnedIterators being pulled (innermost last); see Dataset._draw_iterator_seeds.
_ITERATOR_SEEDS: list = []


class _Traced(Dataset):
    """A transformation whose function is traced once for the parent's element spec (see tracing.py)."""

    _parent: Dataset
    _fn: Callable
    _traced: Any = _UNSET

    def _tracer(self) -> Any:
        if self._traced is _UNSET:
            from tapeflow.data import tracing

            self._traced = None
            try:
                spec = self._parent.element_spec
            except ValueError:  # an empty dataset of unknown structure
                return None
            try:
                self._traced = tracing.trace_or_none(self._fn, spec)
            except NotImplementedError:
                self._traced = None  # an op tapeflow cannot trace: run the function eagerly per element
        return self._traced

    def _apply(self, e: Any) -> Any:
        traced = self._tracer()
        if traced is not None:
            return traced(e)
        return _call(self._fn, _to_tensors(e))


class _Map(_Traced):
    def __init__(self, parent: Dataset, fn: Callable, ragged: bool = False) -> None:
        self._parent, self._fn, self._ragged = parent, fn, ragged
        if ragged:
            self._traced = None

    def _cardinality(self) -> int:
        return self._parent._cardinality()

    def _mapper(self) -> Callable:
        traced = self._tracer()
        if traced is not None:  # the compiled graph gives arrays in the element's structure already
            return traced
        fn = self._fn
        flags = self._ragged_flags() if self._ragged else None

        def apply(e: Any) -> Any:
            out = _from_user(_call(fn, _to_tensors(e)))
            if flags is not None:
                out = _pack(out, iter([composite.to_ragged_row(v) if f else v for v, f in zip(_flatten(out), flags)]))
            return out

        return apply

    def _elements(self) -> Iterator:
        yield from map(self._mapper(), self._parent._elements())

    def _elements_or_errors(self) -> Iterator:
        apply = self._mapper()
        for e in self._parent._elements_or_errors():
            if type(e) is not _Failed:
                try:
                    e = apply(e)
                except Exception as x:
                    e = _Failed(x)
            yield e

    def _ragged_flags(self) -> list:
        # TF's dense_to_ragged: a component whose spec is fully defined (scalars too) or of unknown rank stays dense
        from tapeflow.framework.tensor_spec import TensorSpec

        def ragged(spec: Any) -> bool:
            if not isinstance(spec, TensorSpec):
                return True
            return spec.shape.rank is not None and not spec.shape.is_fully_defined()

        return [ragged(spec) for spec in _flatten(self._parent.element_spec)]

    @property
    def element_spec(self) -> Any:
        traced = self._tracer()
        if traced is not None:
            return traced.output_spec
        return super().element_spec


class _Filter(_Traced):
    def __init__(self, parent: Dataset, predicate: Callable) -> None:
        self._parent, self._fn = parent, predicate

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY  # even over an infinite input, as TF

    def _keep(self, e: Any) -> bool:
        keep = self._apply(e)
        arr = np.asarray(keep._value if hasattr(keep, "_value") else keep)
        if arr.shape != () or arr.dtype != np.bool_:
            raise ValueError(
                "Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor, but its return type "
                f"is TensorSpec(shape={arr.shape}, dtype=tf.{dtypes.as_dtype(arr.dtype).name}, name=None)."
            )
        return bool(arr)

    def _elements(self) -> Iterator:
        return filter(self._keep, self._parent._elements())

    def _elements_or_errors(self) -> Iterator:
        for e in self._parent._elements_or_errors():
            if type(e) is not _Failed:
                try:
                    if not self._keep(e):
                        continue
                except Exception as x:
                    e = _Failed(x)
            yield e

    def _template(self) -> Any:
        return self._parent._template()

    @property
    def element_spec(self) -> Any:
        return self._parent.element_spec


class _Batch(Dataset):
    def __init__(self, parent: Dataset, size: int, drop: bool) -> None:
        self._parent, self._size, self._drop = parent, size, drop

    def _cardinality(self) -> int:
        c = self._parent._cardinality()
        if c < 0:
            return c
        return c // self._size if self._drop else -(-c // self._size)

    def _elements(self) -> Iterator:
        size, drop = self._size, self._drop
        plan = self._parent._plan()
        if plan is not None:
            it = plan.indices()
            while True:
                idx = list(itertools.islice(it, size))
                if not idx or (drop and len(idx) < size):
                    return
                yield plan.gather(np.asarray(idx, dtype=np.int64))
        buf: list = []
        for e in self._parent._elements():
            buf.append(e)
            if len(buf) == size:
                yield _stack(buf)
                buf = []
        if buf and not drop:
            yield _stack(buf)

    def _template(self) -> Any:
        return _map(lambda a: np.zeros((0,) + a.shape, a.dtype), self._parent._template())

    @property
    def element_spec(self) -> Any:
        parent = self._parent.element_spec
        n = self._size if self._drop else None
        if _all_tensor_specs(parent):
            return _map(lambda s: _prepend_dim(s, n), parent)
        from tapeflow.framework.tensor_spec import TensorSpec
        from tapeflow.ops.ragged.ragged_tensor import RaggedTensorSpec

        leaves = _flatten(parent)
        if all(type(x) in (TensorSpec, RaggedTensorSpec) and x.shape.rank is not None for x in leaves):
            # a ragged component batches into one more ragged dimension (TF's RaggedTensorSpec._batch)
            return _pack(parent, iter([
                _prepend_dim(x, n) if type(x) is TensorSpec else
                RaggedTensorSpec([n] + x.shape.as_list(), x.dtype, x.ragged_rank + 1, x.row_splits_dtype)
                for x in leaves]))
        spec = _spec_of(self._template(), batch_unknown=True)
        if self._drop:
            return _map(lambda s: type(s)([self._size] + s.shape.as_list()[1:], s.dtype), spec)
        return spec


def _all_tensor_specs(spec: Any) -> bool:
    from tapeflow.framework.tensor_spec import TensorSpec

    return all(type(x) is TensorSpec for x in _flatten(spec))


def _prepend_dim(s: Any, n: int | None) -> Any:
    from tapeflow.framework.tensor_spec import TensorSpec

    return TensorSpec(None if s.shape.rank is None else [n] + s.shape.as_list(), s.dtype)


def _drop_dim(s: Any) -> Any:
    from tapeflow.framework.tensor_spec import TensorSpec

    if s.shape.rank == 0:
        raise ValueError("Cannot unbatch an input with scalar components.")
    return TensorSpec(None if s.shape.rank is None else s.shape.as_list()[1:], s.dtype)


def _common_spec(a: Any, b: Any) -> Any:
    """The most specific spec both ``a`` and ``b`` fit (differing dims become None), as TF's concatenate."""
    from tapeflow.framework.tensor_spec import TensorSpec

    def one(x: Any, y: Any) -> Any:
        if type(x) is not TensorSpec or type(y) is not TensorSpec or x.dtype != y.dtype:
            return x
        if x.shape.rank is None or y.shape.rank is None or x.shape.rank != y.shape.rank:
            return TensorSpec(None, x.dtype)
        return TensorSpec([d if d == e else None for d, e in zip(x.shape.as_list(), y.shape.as_list())], x.dtype)

    fa, fb = _flatten(a), _flatten(b)
    if len(fa) != len(fb):
        return a
    return _pack(a, iter([one(x, y) for x, y in zip(fa, fb)]))


def _stack(items: list) -> Any:
    def stack(leaves: list) -> np.ndarray:
        if type(leaves[0]) is not np.ndarray and isinstance(leaves[0], CompositeLeaf):
            return composite.stack(leaves)
        try:
            return np.stack(leaves)
        except ValueError:
            shapes = sorted({tuple(a.shape) for a in leaves})
            raise errors.InvalidArgumentError(
                f"Cannot batch tensors with different shapes in component 0. First element had shape "
                f"{list(shapes[0])} and element {len(leaves) - 1} had shape {list(shapes[-1])}. Use "
                "padded_batch, or map the elements to one shape first."
            ) from None

    return _zip_map(stack, items[0], items)


class _PaddedBatch(Dataset):
    def __init__(self, parent: Dataset, size: int, shapes: Any, values: Any, drop: bool) -> None:
        self._parent, self._size, self._shapes, self._values, self._drop = parent, size, shapes, values, drop

    def _cardinality(self) -> int:
        return _Batch(self._parent, self._size, self._drop)._cardinality()

    def _elements(self) -> Iterator:
        buf: list = []
        for e in self._parent._elements():
            buf.append(e)
            if len(buf) == self._size:
                yield self._pad(buf)
                buf = []
        if buf and not self._drop:
            yield self._pad(buf)

    @property
    def element_spec(self) -> Any:
        from tapeflow.framework.tensor_spec import TensorSpec

        parent = self._parent.element_spec
        if not _all_tensor_specs(parent):
            return super().element_spec
        leaves = _flatten(parent)
        shapes = _flatten_like(self._shapes, parent, len(leaves))
        out = []
        for sp, shape in zip(leaves, shapes):
            if shape is None:
                dims = sp.shape.as_list() if sp.shape.rank is not None else None
            else:
                dims = [None if d is None or int(d) < 0 else int(d) for d in
                        (shape.as_list() if hasattr(shape, "as_list") else list(np.atleast_1d(shape)))]
            out.append(TensorSpec(None if dims is None else [self._size if self._drop else None] + dims, sp.dtype))
        return _pack(parent, iter(out))

    def _pad(self, items: list) -> Any:
        template = items[0]
        n_leaves = len(_flatten(template))
        shapes = _flatten_like(self._shapes, template, n_leaves)
        values = _flatten_like(self._values, template, n_leaves)
        columns = list(zip(*[_flatten(x) for x in items]))
        out = []
        for col, shape, value in zip(columns, shapes, values):
            longest = [max(a.shape[d] for a in col) for d in range(col[0].ndim)]
            if shape is not None:
                dims = [int(d) if d is not None else -1 for d in
                        (shape.as_list() if hasattr(shape, "as_list") else list(np.atleast_1d(shape)))]
                if len(dims) != col[0].ndim:
                    raise ValueError(f"padded_batch: padded shape {dims} does not match an element of rank "
                                     f"{col[0].ndim}.")
                for d, (want, have) in enumerate(zip(dims, longest)):
                    if want >= 0 and have > want:
                        raise errors.DataLossError(  # TF's (surprising) type for this
                            f"Attempted to pad to a smaller size than the input element: dimension {d} of an "
                            f"element is {have}, the padded shape {dims} asks for {want}.")
                longest = [w if w >= 0 else h for w, h in zip(dims, longest)]
            fill = 0 if value is None else np.asarray(getattr(value, "_value", value))
            batch = np.full([len(col)] + longest, fill, dtype=col[0].dtype)
            for i, a in enumerate(col):
                batch[(i,) + tuple(slice(0, k) for k in a.shape)] = a
            out.append(batch)
        return _pack(template, iter(out))


def _flatten_like(spec: Any, template: Any, n: int) -> list:
    if spec is None:
        return [None] * n
    if isinstance(template, (tuple, dict)):
        flat = _flatten(_map(lambda x: x, spec)) if isinstance(spec, (tuple, dict)) else None
        if flat is None:
            return [spec] * n
        return flat
    return [spec]


class _Unbatch(Dataset):
    def __init__(self, parent: Dataset) -> None:
        self._parent = parent

    def _elements(self) -> Iterator:
        for e in self._parent._elements():
            leaves = _flatten(e)
            if any(a.ndim == 0 for a in leaves):
                raise ValueError("Cannot unbatch an input with scalar components.")
            n = leaves[0].shape[0]
            for i in range(n):
                yield _map(lambda a, i=i: _row(a, i), e)

    def _template(self) -> Any:
        return _map(lambda a: np.zeros(a.shape[1:], a.dtype), self._parent._template())

    @property
    def element_spec(self) -> Any:
        parent = self._parent.element_spec
        if _all_tensor_specs(parent):
            return _map(_drop_dim, parent)
        return super().element_spec


class _Shuffle(Dataset):
    """TF's ShuffleDataset: a ring buffer of ``buffer_size`` elements; each output is a uniformly drawn buffer
    element (``word % filled``, one Philox word per output) swapped with the oldest slot, which the next input
    element refills. Each iterator's Philox seeds come from TF's seed generator: with
    ``reshuffle_each_iteration`` the next two words of a stream seeded by the dataset's ``(seed, seed2)``,
    otherwise ``(seed, seed2)`` themselves; both seeds unset (0, 0) is a fresh random pair, as TF."""

    def __init__(self, parent: Dataset, buffer_size: int, seed: int | None, reshuffle: bool) -> None:
        from tapeflow.ops import philox, random_ops

        self._parent = parent
        self._buffer = buffer_size
        self._reshuffle = reshuffle
        g, o = random_ops.get_seed(seed)
        if g is None:  # tf.data's get_seed gives (0, 0): the kernel draws a random pair
            g, o = (int(v) for v in np.random.SeedSequence().generate_state(2, np.uint64))
        self._seeds = (int(g), int(o))
        self._pairs = philox.seed_pairs(*self._seeds) if reshuffle else None

    def _cardinality(self) -> int:
        return self._parent._cardinality()

    def _iterator_inputs(self) -> list:
        return []  # TF's shuffle iterator creates its input's iterator on the first element

    def _draw_iterator_seeds(self, seeds: dict) -> None:
        if self._reshuffle:
            seeds[id(self)] = next(self._pairs)

    def _pass_seeds(self) -> tuple:
        """This pass's seeds: those its iterator drew when it was created, else the next pair (a pass that
        starts later, as an input re-created by ``repeat``)."""
        if not self._reshuffle:
            return self._seeds
        for seeds in reversed(_ITERATOR_SEEDS):
            if id(self) in seeds:
                return seeds.pop(id(self))
        return next(self._pairs)

    def _stream(self) -> Callable[[], int]:
        from tapeflow.ops import philox

        return philox.WordStream(*self._pass_seeds())

    def _shuffled(self, items: Iterator, word: Callable[[], int]) -> Iterator:
        size = self._buffer
        if size == AUTOTUNE:
            size = 1 << 62
        ring: dict | list = {} if size > 1 << 20 else [None] * size
        start = end = 0
        items = iter(items)
        for x in items:  # fill the buffer
            if type(x) is _Failed:  # an input's error passes at once (an _elements_or_errors stream)
                yield x
                continue
            ring[end] = x
            end += 1
            if end == size:
                break
        while start < end:
            i = (start + word() % (end - start)) % size
            yield ring[i]
            ring[i] = ring[start % size]
            start += 1
            for x in items:  # refill the freed slot (lazily, on the next call, as TF)
                if type(x) is _Failed:
                    yield x
                    continue
                ring[end % size] = x
                end += 1
                break

    def _plan(self) -> _Plan | None:
        plan = self._parent._plan()
        if plan is None:
            return None
        return _Plan(plan.gather, plan.row, lambda: self._index_stream(plan))

    def _index_stream(self, plan: _Plan) -> Iterator:
        from tapeflow.ops import philox

        n = self._parent._cardinality()
        if 0 <= n <= self._buffer or self._buffer == AUTOTUNE and n >= 0:
            # The buffer holds everything: the same draws are a forward Fisher-Yates on consecutive words.
            seed, seed2 = self._pass_seeds()
            order = philox.permutation((int(seed2) & (2**64 - 1)) << 64, seed, n)
            indices = list(plan.indices())
            yield from (indices[int(j)] for j in order)
            return
        yield from self._shuffled(plan.indices(), self._stream())

    def _elements(self) -> Iterator:
        plan = self._plan()
        if plan is not None:
            for i in plan.indices():
                yield plan.row(i)
            return
        yield from self._shuffled(self._parent._elements(), self._stream())

    def _elements_or_errors(self) -> Iterator:
        if self._plan() is not None:  # rows of arrays: nothing to fail
            return self._elements()
        return self._shuffled(self._parent._elements_or_errors(), self._stream())

    def _template(self) -> Any:
        return self._parent._template()

    @property
    def element_spec(self) -> Any:
        return self._parent.element_spec


class _Repeat(Dataset):
    def __init__(self, parent: Dataset, count: int) -> None:
        self._parent, self._count = parent, count

    def _cardinality(self) -> int:
        c = self._parent._cardinality()
        if self._count < 0:
            return 0 if c == 0 else INFINITE_CARDINALITY  # unknown input too, as TF
        return c if c < 0 else c * self._count

    def _epochs(self) -> Iterator:
        return itertools.count() if self._count < 0 else iter(range(self._count))

    def _plan(self) -> _Plan | None:
        plan = self._parent._plan()
        if plan is None:
            return None

        def indices() -> Iterator:
            for _ in self._epochs():
                any_ = False
                for i in plan.indices():
                    any_ = True
                    yield i
                if not any_:
                    return

        return _Plan(plan.gather, plan.row, indices)

    def _elements(self) -> Iterator:
        for _ in self._epochs():
            any_ = False
            for e in self._parent._elements():
                any_ = True
                yield e
            if not any_:
                return

    def _template(self) -> Any:
        return self._parent._template()

    @property
    def element_spec(self) -> Any:
        return self._parent.element_spec


class _Take(Dataset):
    def __init__(self, parent: Dataset, count: int) -> None:
        self._parent, self._count = parent, count

    def _cardinality(self) -> int:
        c = self._parent._cardinality()
        if self._count < 0:
            return c
        if c == UNKNOWN_CARDINALITY:
            return UNKNOWN_CARDINALITY
        return self._count if c == INFINITE_CARDINALITY else min(c, self._count)

    def _plan(self) -> _Plan | None:
        plan = self._parent._plan()
        if plan is None:
            return None
        if self._count < 0:
            return plan
        return _Plan(plan.gather, plan.row, lambda: itertools.islice(plan.indices(), self._count))

    def _elements(self) -> Iterator:
        it = self._parent._elements()
        return it if self._count < 0 else itertools.islice(it, self._count)

    def _elements_or_errors(self) -> Iterator:
        left = self._count
        if left == 0:
            return
        for e in self._parent._elements_or_errors():
            yield e
            if type(e) is not _Failed:  # as TF: an input's error does not count
                left -= 1
                if left == 0:
                    return

    def _template(self) -> Any:
        return self._parent._template()

    @property
    def element_spec(self) -> Any:
        return self._parent.element_spec


class _Skip(Dataset):
    def __init__(self, parent: Dataset, count: int) -> None:
        self._parent, self._count = parent, count

    def _cardinality(self) -> int:
        c = self._parent._cardinality()
        if c < 0:
            return c
        return 0 if self._count < 0 else max(0, c - self._count)

    def _plan(self) -> _Plan | None:
        plan = self._parent._plan()
        if plan is None:
            return None
        if self._count < 0:
            return _Plan(plan.gather, plan.row, lambda: iter(()))
        return _Plan(plan.gather, plan.row, lambda: itertools.islice(plan.indices(), self._count, None))

    def _elements(self) -> Iterator:
        if self._count < 0:
            return iter(())
        return itertools.islice(self._parent._elements(), self._count, None)

    def _template(self) -> Any:
        return self._parent._template()

    @property
    def element_spec(self) -> Any:
        return self._parent.element_spec


class _Passthrough(Dataset):
    def __init__(self, parent: Dataset) -> None:
        self._parent = parent

    def _cardinality(self) -> int:
        return self._parent._cardinality()

    def _plan(self) -> _Plan | None:
        return self._parent._plan()

    def _elements(self) -> Iterator:
        return self._parent._elements()

    def _elements_or_errors(self) -> Iterator:
        return self._parent._elements_or_errors()

    def _template(self) -> Any:
        return self._parent._template()

    @property
    def element_spec(self) -> Any:
        return self._parent.element_spec


class _WithOptions(_Passthrough):
    def __init__(self, parent: Dataset, options: Any) -> None:
        super().__init__(parent)
        self._own_options = options

    def options(self) -> Any:
        from tapeflow.data.options import merge_options

        return merge_options(self._parent.options(), self._own_options)


class _Cache(_Passthrough):
    def __init__(self, parent: Dataset) -> None:
        super().__init__(parent)
        self._cached: list | None = None

    def _plan(self) -> _Plan | None:
        return None

    def _elements(self) -> Iterator:
        if self._cached is not None:
            yield from self._cached
            return
        got = []
        for e in self._parent._elements():
            got.append(e)
            yield e
        self._cached = got  # only a complete pass is cached


class _Concatenate(Dataset):
    def __init__(self, a: Dataset, b: Dataset) -> None:
        self._a, self._b = a, b

    def _iterator_inputs(self) -> list:
        return [self._a]  # TF creates the second input's iterator when the first ends

    def _cardinality(self) -> int:
        ca, cb = self._a._cardinality(), self._b._cardinality()
        if INFINITE_CARDINALITY in (ca, cb):
            return INFINITE_CARDINALITY
        if UNKNOWN_CARDINALITY in (ca, cb):
            return UNKNOWN_CARDINALITY
        return ca + cb

    def _elements(self) -> Iterator:
        yield from self._a._elements()
        yield from self._b._elements()

    def _template(self) -> Any:
        return self._a._template()

    @property
    def element_spec(self) -> Any:
        return _common_spec(self._a.element_spec, self._b.element_spec)


class _Shard(Dataset):
    def __init__(self, parent: Dataset, num: int, index: int) -> None:
        self._parent, self._num, self._index = parent, num, index

    def _cardinality(self) -> int:
        c = self._parent._cardinality()
        if c < 0:
            return c
        return c // self._num + (1 if self._index < c % self._num else 0)

    def _plan(self) -> _Plan | None:
        plan = self._parent._plan()
        if plan is None:
            return None
        return _Plan(plan.gather, plan.row, lambda: itertools.islice(plan.indices(), self._index, None, self._num))

    def _elements(self) -> Iterator:
        return itertools.islice(self._parent._elements(), self._index, None, self._num)

    def _template(self) -> Any:
        return self._parent._template()

    @property
    def element_spec(self) -> Any:
        return self._parent.element_spec


class _Rebatch(Dataset):
    def __init__(self, parent: Dataset, sizes: list, drop: bool) -> None:
        self._parent, self._sizes, self._drop = parent, sizes, drop

    def _elements(self) -> Iterator:
        sizes = itertools.cycle(self._sizes)
        want = next(sizes)
        pending: list = []  # pieces (batched elements) not yet emitted
        have = 0
        for e in self._parent._elements():
            leaves = _flatten(e)
            if any(a.ndim == 0 for a in leaves):
                raise ValueError("rebatch: the input must be batched (it has scalar components).")
            n, start = leaves[0].shape[0], 0
            while start < n:
                take = min(want - have, n - start)
                pending.append(_map(lambda a, s=start, k=take: a[s:s + k], e))
                have += take
                start += take
                if have == want:
                    yield _concat_pieces(pending)
                    pending, have, want = [], 0, next(sizes)
        if pending and not self._drop:
            yield _concat_pieces(pending)

    def _template(self) -> Any:
        return self._parent._template()

    @property
    def element_spec(self) -> Any:
        spec = self._parent.element_spec
        if self._drop and len(set(self._sizes)) == 1:
            return _map(lambda s: type(s)([self._sizes[0]] + s.shape.as_list()[1:], s.dtype), spec)
        return _map(lambda s: type(s)([None] + s.shape.as_list()[1:], s.dtype), spec)


def _concat_pieces(pieces: list) -> Any:
    if len(pieces) == 1:
        return pieces[0]
    return _zip_map(lambda leaves: np.concatenate(leaves), pieces[0], pieces)


def _not_implemented(name: str) -> Callable:
    def method(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"tf.data.Dataset.{name} is not implemented in tapeflow")

    method.__name__ = name
    return staticmethod(method) if name in _STATIC_MISSING else method


# TF's Dataset API that tapeflow lacks: a clear NotImplementedError, not an AttributeError
_STATIC_MISSING = frozenset(("choose_from_datasets", "counter", "list_files", "load", "random",
                             "sample_from_datasets"))
for _name in ("bucket_by_sequence_length", "choose_from_datasets", "counter", "fingerprint", "flat_map",
              "get_single_element", "group_by_window", "ignore_errors", "interleave", "list_files", "load",
              "ragged_batch", "random", "rebatch", "rejection_resample", "sample_from_datasets", "save", "scan",
              "shard", "snapshot", "sparse_batch", "take_while", "unique", "window"):
    if not hasattr(Dataset, _name):
        setattr(Dataset, _name, _not_implemented(_name))
