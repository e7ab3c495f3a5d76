"""Datasets of datasets and the transformations that open them, in TF's element orders.

``window`` yields nested datasets (``DatasetSpec`` elements); ``flat_map``,
``interleave`` and ``group_by_window`` (with ``bucket_by_sequence_length`` on
top) call a function that returns a dataset and take its elements. ``scan``,
``take_while``, ``unique`` and ``Counter`` live here too.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tapeflow.data.dataset import (
    INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset, _call, _Failed, _flatten, _from_user, _map, _pack,
    _spec_of, _to_arrays, _to_tensors,
)
from tapeflow.framework import dtypes, errors
from tapeflow.framework.tensor import Tensor


class DatasetSpec:
    """The spec of a nested dataset element (what ``window`` yields), as ``tf.data.DatasetSpec``."""

    def __init__(self, element_spec: Any, dataset_shape: Any = ()) -> None:
        from tapeflow.framework.tensor_shape import TensorShape

        self.element_spec = element_spec
        self.dataset_shape = TensorShape(dataset_shape)

    @property
    def value_type(self) -> type:
        return Dataset

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, DatasetSpec) and other.element_spec == self.element_spec

    def __hash__(self) -> int:
        return hash(repr(self))

    def __repr__(self) -> str:
        return f"DatasetSpec({self.element_spec!r}, {self.dataset_shape!r})"


class _ListDataset(Dataset):
    """The elements of one window (TF prints it as ``_VariantDataset``)."""

    def __init__(self, items: list, spec: Any) -> None:
        self._items, self._spec = items, spec

    def _cardinality(self) -> int:
        return len(self._items)

    def _elements(self) -> Iterator:
        return iter(self._items)

    @property
    def element_spec(self) -> Any:
        return self._spec


class _Window(Dataset):
    def __init__(self, parent: Dataset, size: int, shift: int, stride: int, drop: bool) -> None:
        self._parent, self._size, self._shift, self._stride, self._drop = parent, size, shift, stride, drop

    def _cardinality(self) -> int:
        n = self._parent._cardinality()
        if n < 0:
            return n
        if self._drop:
            span = (self._size - 1) * self._stride + 1
            return 0 if n < span else (n - span) // self._shift + 1
        return -(-n // self._shift)

    def _elements(self) -> Iterator:
        it = self._parent._elements()
        buf: list = []  # elements from position `base` on
        base, done = 0, False
        span = (self._size - 1) * self._stride + 1
        start = 0
        spec = self._parent.element_spec
        flat_spec = _flatten(spec)
        while True:
            while not done and base + len(buf) < start + span:
                try:
                    buf.append(next(it))
                except StopIteration:
                    done = True
            if start >= base + len(buf):
                return
            items = buf[start - base::self._stride][:self._size]
            if self._drop and len(items) < self._size:
                return
            flats = [_flatten(x) for x in items]
            parts = [_ListDataset([f[k] for f in flats], flat_spec[k]) for k in range(len(flat_spec))]
            yield _pack(spec, iter(parts))
            start += self._shift
            if start > base:
                del buf[:start - base]
                base = start

    @property
    def element_spec(self) -> Any:
        return _map(DatasetSpec, self._parent.element_spec)


def window(ds: Dataset, size: Any, shift: Any = None, stride: Any = 1, drop_remainder: bool = False) -> Dataset:
    size, stride = int(np.asarray(size)), int(np.asarray(stride))
    shift = size if shift is None else int(np.asarray(shift))
    for name, v in (("size", size), ("shift", shift), ("stride", stride)):
        if v <= 0:
            raise errors.InvalidArgumentError(
                f"Window {name} must be greater than zero, but got {v}. [Op:WindowDataset]")
    return _Window(ds, size, shift, stride, bool(drop_remainder))


def _as_dataset(result: Any, what: str) -> Dataset:
    if not isinstance(result, Dataset):
        raise TypeError(f"The `map_func` argument of `{what}` must return a `Dataset` object, got "
                        f"{type(result).__name__}.")
    return result


class _FlatMap(Dataset):
    def __init__(self, parent: Dataset, fn: Callable) -> None:
        self._parent, self._fn = parent, fn

    def _elements(self) -> Iterator:
        for e in self._parent._elements():
            yield from _as_dataset(_call(self._fn, _to_tensors(e)), "flat_map")._elements()

    @property
    def element_spec(self) -> Any:
        return _inner_spec(self._parent, self._fn, "flat_map")


def _inner_spec(parent: Dataset, fn: Callable, what: str) -> Any:
    """The element spec of the datasets ``fn`` returns (from ``fn`` of the parent's first element)."""
    for e in parent._elements():
        return _as_dataset(_call(fn, _to_tensors(e)), what).element_spec
    raise ValueError(f"tf.data: cannot infer the element structure of an empty {what} input.")


def _default_cycle_length() -> int:
    # TF's AUTOTUNE cycle length: the number of schedulable CPU cores
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


class _Interleave(Dataset):
    def __init__(self, parent: Dataset, fn: Callable, cycle: int, block: int, parallel: bool) -> None:
        self._parent, self._fn, self._cycle, self._block, self._parallel = parent, fn, cycle, block, parallel

    def _elements(self) -> Iterator:
        return self._interleaved(False)

    def _elements_or_errors(self) -> Iterator:
        return self._interleaved(True)

    def _interleaved(self, with_errors: bool) -> Iterator:
        # TF's InterleaveDatasetOp: `cycle` open iterators, `block` elements from each in turn; an exhausted
        # slot is refilled from the input the next time the cycle reaches it. With errors, an input's or an
        # inner dataset's failed element passes on and the interleave goes on, as TF's.
        inputs = self._parent._elements_or_errors() if with_errors else self._parent._elements()
        slots: list = [None] * self._cycle
        i, block, n_open, end = 0, 0, 0, False
        while not end or n_open > 0:
            cur = slots[i]
            if cur is not None:
                try:
                    x = next(cur)
                except StopIteration:
                    slots[i] = None
                    n_open -= 1
                    i, block = (i + 1) % self._cycle, 0
                    continue
                block += 1
                if block == self._block:
                    i, block = (i + 1) % self._cycle, 0
                yield x
            elif not end:
                try:
                    e = next(inputs)
                except StopIteration:
                    end = True
                    continue
                if not with_errors:
                    slots[i] = iter(_as_dataset(_call(self._fn, _to_tensors(e)), "interleave")._elements())
                elif type(e) is _Failed:
                    yield e
                    continue
                else:
                    try:
                        slots[i] = iter(_as_dataset(_call(self._fn, _to_tensors(e)), "interleave")
                                        ._elements_or_errors())
                    except Exception as x:
                        yield _Failed(x)
                        continue
                n_open += 1
            else:
                i, block = (i + 1) % self._cycle, 0

    @property
    def element_spec(self) -> Any:
        return _inner_spec(self._parent, self._fn, "interleave")


def interleave(ds: Dataset, map_func: Callable, cycle_length: Any = None, block_length: Any = None,
               num_parallel_calls: Any = None) -> Dataset:
    cycle = _default_cycle_length() if cycle_length is None or int(cycle_length) == -1 else int(cycle_length)
    block = 1 if block_length is None else int(block_length)
    if cycle <= 0 or block <= 0:
        raise errors.InvalidArgumentError(
            f"cycle_length and block_length must be greater than zero, got {cycle} and {block}. "
            "[Op:InterleaveDataset]")
    return _Interleave(ds, map_func, cycle, block, num_parallel_calls is not None)


def _scalar_int(v: Any, what: str) -> int:
    a = np.asarray(getattr(v, "_value", v))
    if a.shape != () or a.dtype.kind not in "iu":
        raise ValueError(f"`{what}` must return a scalar int64 tensor, got dtype {a.dtype} and shape {a.shape}.")
    return int(a)


class _GroupByWindow(Dataset):
    def __init__(self, parent: Dataset, key_func: Callable, reduce_func: Callable, size_func: Callable) -> None:
        self._parent, self._key, self._reduce, self._size = parent, key_func, reduce_func, size_func

    def _elements(self) -> Iterator:
        groups: dict[int, list] = {}
        sizes: dict[int, int] = {}
        spec = self._parent.element_spec
        for e in self._parent._elements():
            k = _scalar_int(_call(self._key, _to_tensors(e)), "key_func")
            if k not in sizes:
                sizes[k] = _scalar_int(self._size(Tensor(np.asarray(k, np.int64))), "window_size_func")
                if sizes[k] <= 0:
                    raise errors.InvalidArgumentError("Window size must be greater than zero, but got "
                                                      f"{sizes[k]}. [Op:GroupByWindowDataset]")
            group = groups.setdefault(k, [])
            group.append(e)
            if len(group) == sizes[k]:
                del groups[k]
                yield from self._window(k, group, spec)
        for k in sorted(groups):  # what is left, in key order (TF keeps groups in a std::map)
            yield from self._window(k, groups[k], spec)

    def _window(self, key: int, items: list, spec: Any) -> Iterator:
        out = self._reduce(Tensor(np.asarray(key, np.int64)), _ListDataset(items, spec))
        return _as_dataset(out, "group_by_window")._elements()

    @property
    def element_spec(self) -> Any:
        spec = self._parent.element_spec
        for e in self._parent._elements():
            k = _scalar_int(_call(self._key, _to_tensors(e)), "key_func")
            return _as_dataset(self._reduce(Tensor(np.asarray(k, np.int64)), _ListDataset([], spec)),
                               "group_by_window").element_spec
        raise ValueError("tf.data: cannot infer the element structure of an empty group_by_window input.")


def group_by_window(ds: Dataset, key_func: Callable, reduce_func: Callable, window_size: Any = None,
                    window_size_func: Callable | None = None) -> Dataset:
    if (window_size is None) == (window_size_func is None):
        raise ValueError("Either the `window_size` argument or the `window_size_func` argument must be specified.")
    if window_size is not None:
        n = int(np.asarray(getattr(window_size, "_value", window_size)))
        window_size_func = lambda key: Tensor(np.asarray(n, np.int64))  # noqa: E731
    return _GroupByWindow(ds, key_func, reduce_func, window_size_func)


def bucket_by_sequence_length(ds: Dataset, element_length_func: Callable, bucket_boundaries: list,
                              bucket_batch_sizes: list, padded_shapes: Any = None, padding_values: Any = None,
                              pad_to_bucket_boundary: bool = False, no_padding: bool = False,
                              drop_remainder: bool = False) -> Dataset:
    """TF's ``bucket_by_sequence_length``: ``group_by_window`` keyed by the bucket of each element's length."""
    boundaries = [int(b) for b in bucket_boundaries]
    sizes = [int(b) for b in bucket_batch_sizes]
    if len(sizes) != len(boundaries) + 1:
        raise ValueError(f"len(bucket_batch_sizes) must equal len(bucket_boundaries) + 1 but "
                         f"len(bucket_batch_sizes)={len(sizes)} and len(bucket_boundaries)={len(boundaries)}")
    if boundaries != sorted(boundaries):
        raise ValueError("bucket_boundaries must be sorted in increasing order")
    lo = [np.iinfo(np.int32).min] + boundaries
    hi = boundaries + [np.iinfo(np.int32).max]

    def key(*element: Any) -> Tensor:
        n = _scalar_int(element_length_func(*element), "element_length_func")
        return Tensor(np.asarray(min(b for b in range(len(lo)) if lo[b] <= n < hi[b]), np.int64))

    def reduce(bucket: Tensor, window_ds: Dataset) -> Dataset:
        b = int(bucket.numpy())
        if no_padding:
            return window_ds.batch(sizes[b], drop_remainder=drop_remainder)
        shapes = padded_shapes
        if pad_to_bucket_boundary:
            if b == len(boundaries):
                raise errors.InvalidArgumentError(
                    "bucket_by_sequence_length with pad_to_bucket_boundary=True: an element is longer than "
                    f"max(bucket_boundaries)={boundaries[-1]}; add a larger boundary.")
            fill = boundaries[b] - 1
            base = shapes if shapes is not None else _map(
                lambda s: [None] * (s.shape.rank or 0), window_ds.element_spec)
            shapes = _map_shapes(base, lambda d: fill if d is None or d == -1 else d)
        return window_ds.padded_batch(sizes[b], shapes, padding_values, drop_remainder=drop_remainder)

    return group_by_window(ds, key, reduce, window_size_func=lambda b: Tensor(np.asarray(sizes[int(b.numpy())],
                                                                                             np.int64)))


def _map_shapes(shapes: Any, fn: Callable) -> Any:
    if isinstance(shapes, dict):
        return {k: _map_shapes(v, fn) for k, v in shapes.items()}
    if isinstance(shapes, tuple):
        return tuple(_map_shapes(v, fn) for v in shapes)
    dims = shapes.as_list() if hasattr(shapes, "as_list") else list(shapes)
    return [fn(d) for d in dims]


class _Scan(Dataset):
    def __init__(self, parent: Dataset, initial_state: Any, fn: Callable) -> None:
        self._parent, self._init, self._fn = parent, _to_arrays(initial_state), fn

    def _cardinality(self) -> int:
        return self._parent._cardinality()

    def _step(self, state: Any, e: Any) -> tuple:
        out = self._fn(_to_tensors(state), _to_tensors(e))
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError("The scan function must return a pair comprising the new state and the output value.")
        new_state, value = _from_user(out[0]), _from_user(out[1])
        old, new = _flatten(state), _flatten(new_state)
        if len(old) != len(new) or any(a.dtype != b.dtype for a, b in zip(old, new)):
            raise TypeError(f"The element types for the new state must match the initial state. Expected "
                            f"{[str(a.dtype) for a in old]}; got {[str(b.dtype) for b in new]}.")
        return new_state, value

    def _elements(self) -> Iterator:
        state = self._init
        for e in self._parent._elements():
            state, value = self._step(state, e)
            yield value

    @property
    def element_spec(self) -> Any:
        for e in self._parent._elements():
            return _spec_of(self._step(self._init, e)[1])
        raise ValueError("tf.data: cannot infer the element structure of an empty scan input.")


class _TakeWhile(Dataset):
    def __init__(self, parent: Dataset, predicate: Callable) -> None:
        self._parent, self._pred = parent, predicate

    def _elements(self) -> Iterator:
        for e in self._parent._elements():
            keep = np.asarray(getattr(k := _call(self._pred, _to_tensors(e)), "_value", k))
            if keep.shape != () or keep.dtype != np.bool_:
                raise ValueError("`predicate` return type must be convertible to a scalar boolean tensor. Was "
                                 f"TensorSpec(shape={keep.shape}, dtype=tf.{dtypes.as_dtype(keep.dtype).name}, "
                                 "name=None).")
            if not keep:
                return
            yield e

    @property
    def element_spec(self) -> Any:
        return self._parent.element_spec


class _IgnoreErrors(Dataset):
    """TF's IgnoreErrorsDataset: the input's elements, less those whose making raised."""

    def __init__(self, parent: Dataset, log_warning: bool) -> None:
        self._parent, self._log = parent, log_warning

    def _elements(self) -> Iterator:
        for e in self._parent._elements_or_errors():
            if type(e) is _Failed:
                if self._log:
                    print(f"Error raised with error message {e.error}", file=sys.stderr)
                continue
            yield e

    @property
    def element_spec(self) -> Any:
        return self._parent.element_spec


class _Unique(Dataset):
    def __init__(self, parent: Dataset) -> None:
        spec = parent.element_spec
        from tapeflow.framework.tensor_spec import TensorSpec

        if type(spec) is not TensorSpec or spec.dtype not in (dtypes.int32, dtypes.int64, dtypes.string):
            raise TypeError("Dataset.unique() only supports single-component elements of type int32, int64 or "
                            f"string, got {spec}.")
        self._parent = parent

    def _elements(self) -> Iterator:
        seen: set = set()
        for e in self._parent._elements():
            key = e.tobytes() if e.dtype != object else e[()]
            key = (e.shape, key)
            if key not in seen:
                seen.add(key)
                yield e

    @property
    def element_spec(self) -> Any:
        return self._parent.element_spec


class _Counter(Dataset):
    def __init__(self, start: int, step: int, dtype: Any) -> None:
        self._start, self._step, self._dtype = start, step, dtypes.as_dtype(dtype).as_numpy_dtype

    def _cardinality(self) -> int:
        return INFINITE_CARDINALITY

    def _elements(self) -> Iterator:
        dt = self._dtype
        return (np.asarray(v, dt) for v in itertools.count(self._start, self._step))

    def _template(self) -> Any:
        return np.asarray(self._start, self._dtype)


def counter(start: int = 0, step: int = 1, dtype: Any = dtypes.int64) -> Dataset:
    return _Counter(int(start), int(step), dtype)


def get_single_element(ds: Dataset) -> Any:
    it = iter(ds._elements())
    try:
        first = next(it)
    except StopIteration:
        raise errors.InvalidArgumentError("Dataset was empty. [Op:DatasetToSingleElement]") from None
    for _ in it:
        raise errors.InvalidArgumentError("Dataset had more than one element. [Op:DatasetToSingleElement]")
    return _to_tensors(first)


__all__ = ["DatasetSpec", "UNKNOWN_CARDINALITY"]
