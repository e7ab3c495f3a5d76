"""``tf.experimental.RowPartition`` and ``tf.experimental.DynamicRaggedShape`` (eager values).

A ``DynamicRaggedShape`` is the shape of a ragged tensor: its row partitions (one per ragged dimension,
outermost first) and the ``inner_shape`` of its flat values. ``tf.shape(rt)`` returns one; ``tf.reshape``,
``tf.zeros``, ``tf.ones`` and ``tf.fill`` accept one and build a RaggedTensor.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.composite_tensor import CompositeTensor, TypeSpec
from tapeflow.framework.tensor import Tensor, convert_to_tensor

__all__ = ["DynamicRaggedShape", "RowPartition"]


def _int_dtype(dtype: Any, default: dtypes.DType = dtypes.int64) -> dtypes.DType:
    d = default if dtype is None else dtypes.as_dtype(dtype)
    if d not in (dtypes.int32, dtypes.int64):
        raise ValueError(f"dtype must be tf.int32 or tf.int64, got {d}")
    return d


def _ints(x: Any) -> np.ndarray:
    v = getattr(x, "_value", x)
    if isinstance(x, Tensor) and not isinstance(v, np.ndarray | np.generic):  # a traced (symbolic) partition
        raise NotImplementedError(
            "tf.experimental.DynamicRaggedShape holds row partition values: tf.shape of a RaggedTensor traced "
            "from a RaggedTensorSpec is not implemented in tapeflow; call the function with a RaggedTensor "
            "(it is traced per row partition) instead.")
    return np.asarray(v).reshape(-1).astype(np.int64)


class RowPartition:
    """How a flat list of values is split into rows: TF's ``RowPartition`` (row splits; lengths derived)."""

    def __init__(self, row_splits: np.ndarray, dtype: dtypes.DType, uniform_row_length: int | None = None) -> None:
        self._splits = row_splits
        self._dtype = dtype
        self._uniform = uniform_row_length

    @classmethod
    def from_row_splits(cls, row_splits: Any, validate: bool = True, dtype: Any = None,
                        dtype_hint: Any = None) -> RowPartition:
        s = _ints(row_splits)
        if validate and (s.size == 0 or s[0] != 0 or np.any(np.diff(s) < 0)):
            raise ValueError("row_splits must be a non-empty, sorted vector starting at 0")
        return cls(s, _int_dtype(dtype, _int_dtype(dtype_hint)))

    @classmethod
    def from_row_lengths(cls, row_lengths: Any, validate: bool = True, dtype: Any = None,
                         dtype_hint: Any = None) -> RowPartition:
        n = _ints(row_lengths)
        if validate and np.any(n < 0):
            raise ValueError("row_lengths must be non-negative")
        return cls(np.concatenate([[0], np.cumsum(n)]).astype(np.int64), _int_dtype(dtype, _int_dtype(dtype_hint)))

    @classmethod
    def from_uniform_row_length(cls, uniform_row_length: Any, nvals: Any, nrows: Any = None, validate: bool = True,
                                dtype: Any = None, dtype_hint: Any = None) -> RowPartition:
        k, nv = int(_ints(uniform_row_length)[0]), int(_ints(nvals)[0])
        rows = int(_ints(nrows)[0]) if nrows is not None else (nv // k if k else 0)
        return cls(np.arange(rows + 1, dtype=np.int64) * k, _int_dtype(dtype, _int_dtype(dtype_hint)), k)

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    def _t(self, a: Any) -> Tensor:
        return convert_to_tensor(np.asarray(a, self._dtype.as_numpy_dtype))

    def row_splits(self) -> Tensor:
        return self._t(self._splits)

    def row_lengths(self) -> Tensor:
        return self._t(np.diff(self._splits))

    def row_starts(self) -> Tensor:
        return self._t(self._splits[:-1])

    def row_limits(self) -> Tensor:
        return self._t(self._splits[1:])

    def value_rowids(self) -> Tensor:
        return self._t(np.repeat(np.arange(len(self._splits) - 1), np.diff(self._splits)))

    def nrows(self) -> Tensor:
        return self._t(len(self._splits) - 1)

    def nvals(self) -> Tensor:
        return self._t(self._splits[-1])

    def uniform_row_length(self) -> Tensor | None:
        return None if self._uniform is None else self._t(self._uniform)

    def is_uniform(self) -> bool:
        return self._uniform is not None

    def with_dtype(self, dtype: Any) -> RowPartition:
        return RowPartition(self._splits, _int_dtype(dtype), self._uniform)

    def __repr__(self) -> str:
        return f"tf.RowPartition(row_splits={np.asarray(self._splits, self._dtype.as_numpy_dtype)})"


class DynamicRaggedShape(CompositeTensor):
    """The shape of a (possibly ragged) tensor: ``row_partitions`` and the flat values' ``inner_shape``."""

    def __init__(self, row_partitions: Any, inner_shape: Any, dtype: Any = None, validate: bool = False,
                 static_inner_shape: Any = None) -> None:
        parts = list(row_partitions)
        if dtype is None:
            dtype = parts[0].dtype if parts else (inner_shape.dtype if isinstance(inner_shape, Tensor)
                                                  else dtypes.int64)
        self._dtype = _int_dtype(dtype)
        self._parts = tuple(p.with_dtype(self._dtype) for p in parts)
        self._inner = _ints(inner_shape)
        if self._inner.size == 0 and self._parts:
            raise ValueError("inner_shape must have at least one dimension when there are row partitions")
        for outer, inner in zip(self._parts, self._parts[1:] + (None,)):
            nvals = int(outer._splits[-1])
            want = len(inner._splits) - 1 if inner is not None else int(self._inner[0])
            if nvals != want:
                raise ValueError(f"row partitions do not match: {nvals} values, but the next dimension has {want}")

    # -- constructors -----------------------------------------------------
    @classmethod
    def from_lengths(cls, lengths: Any, num_row_partitions: int | None = None, dtype: Any = dtypes.int64
                     ) -> DynamicRaggedShape:
        """From a list of lengths: an int is a uniform dimension, a tuple/list the row lengths of a ragged one."""
        lengths = list(lengths)
        if not lengths:
            return cls([], [], dtype=dtype)
        ragged_at = [i for i, n in enumerate(lengths) if isinstance(n, (tuple, list))]
        if ragged_at and ragged_at[0] == 0:
            raise ValueError("the first dimension of a DynamicRaggedShape must be uniform")
        count = (max(ragged_at) if ragged_at else 0) if num_row_partitions is None else int(num_row_partitions)
        parts: list = []
        size = int(lengths[0])
        for i in range(1, count + 1):
            n = lengths[i]
            if isinstance(n, (tuple, list)):
                if len(n) != size:
                    raise ValueError(f"lengths[{i}] has {len(n)} row lengths for {size} rows")
                p = RowPartition.from_row_lengths(n, dtype=dtype)
            else:
                p = RowPartition.from_uniform_row_length(int(n), size * int(n), nrows=size, dtype=dtype)
            parts.append(p)
            size = int(p._splits[-1])
        return cls(parts, [size] + [int(n) for n in lengths[count + 1:]], dtype=dtype)

    @classmethod
    def from_tensor(cls, t: Any, dtype: Any = None) -> DynamicRaggedShape:
        from tapeflow.ops.ragged.ragged_tensor import RaggedTensor

        d = _int_dtype(dtype, dtypes.int64 if isinstance(t, RaggedTensor) else dtypes.int32)
        if isinstance(t, RaggedTensor):
            parts = []
            v: Any = t
            while isinstance(v, RaggedTensor):
                k = v._uniform_row_length
                parts.append(RowPartition(_ints(v.row_splits), d, None if k is None else int(k)))
                v = v.values
            return cls(parts, list(convert_to_tensor(v).shape), dtype=d)
        return cls([], list(convert_to_tensor(t).shape), dtype=d)

    # -- properties -------------------------------------------------------
    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def row_partitions(self) -> tuple:
        return self._parts

    @property
    def num_row_partitions(self) -> int:
        return len(self._parts)

    @property
    def rank(self) -> int:
        return len(self._parts) + len(self._inner)

    @property
    def inner_shape(self) -> Tensor:
        return convert_to_tensor(np.asarray(self._inner, self._dtype.as_numpy_dtype))

    def _lengths(self) -> list:
        if not self._parts:
            return [int(n) for n in self._inner]
        out: list = [len(self._parts[0]._splits) - 1]
        for p in self._parts:
            out.append(p._uniform if p._uniform is not None else tuple(int(n) for n in np.diff(p._splits)))
        return out + [int(n) for n in self._inner[1:]]

    def static_lengths(self, ragged_lengths: bool = True) -> list:
        lengths = self._lengths()
        return lengths if ragged_lengths else [None if isinstance(n, tuple) else n for n in lengths]

    def is_uniform(self, axis: int) -> bool:
        axis = axis + self.rank if axis < 0 else axis
        return axis == 0 or not isinstance(self._lengths()[axis], tuple)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            if index.step not in (None, 1) or index.start not in (None, 0):
                raise NotImplementedError("slicing a DynamicRaggedShape other than [:stop] in tapeflow")
            return self._prefix(self.rank if index.stop is None else
                                (index.stop + self.rank if index.stop < 0 else min(index.stop, self.rank)))
        i = int(index)
        if i < 0:
            i += self.rank
        if not 0 <= i < self.rank:
            raise ValueError(f"Index {index} is out of range for a shape of rank {self.rank}")
        n = self._lengths()[i]
        if isinstance(n, tuple):
            raise ValueError(f"Index {index} is not uniform")
        return convert_to_tensor(np.asarray(n, self._dtype.as_numpy_dtype))

    def _prefix(self, k: int) -> DynamicRaggedShape:
        if k <= 0:
            return DynamicRaggedShape([], [], dtype=self._dtype)
        if k - 1 < len(self._parts):
            nvals = int(self._parts[k - 2]._splits[-1]) if k >= 2 else len(self._parts[0]._splits) - 1
            return DynamicRaggedShape(self._parts[:k - 1], [nvals], dtype=self._dtype)
        return DynamicRaggedShape(self._parts, self._inner[:k - len(self._parts)], dtype=self._dtype)

    def __repr__(self) -> str:
        lengths = ", ".join(str(n) for n in self._lengths())
        return f"<DynamicRaggedShape lengths=[{lengths}] num_row_partitions={len(self._parts)}>"

    __str__ = __repr__

    def with_dtype(self, dtype: Any) -> DynamicRaggedShape:
        return DynamicRaggedShape(self._parts, self._inner, dtype=dtype)

    def _num_elements(self) -> int:
        return int(np.prod(self._inner)) if self._inner.size else 1

    def _build(self, flat: Any) -> Any:
        """``flat`` (the flat values, shaped ``inner_shape``) under these row partitions."""
        from tapeflow.ops.ragged.ragged_tensor import RaggedTensor

        out = flat
        for p in reversed(self._parts):
            out = RaggedTensor.from_row_splits(out, np.asarray(p._splits, np.int64), validate=False)
            if p._uniform is not None:
                out._uniform_row_length = p._uniform
        return out

    # A tf.function argument: as a RaggedTensor's row partition, its values are part of the cache key.
    def _trace_split(self) -> tuple:
        parts = tuple((np.asarray(p._splits).tobytes(), p._uniform) for p in self._parts)
        return ("DynamicRaggedShape", parts, self._inner.tobytes(), self._dtype.name), []

    def _trace_rebuild(self, dynamic: list) -> DynamicRaggedShape:
        return self

    @property
    def _type_spec(self) -> DynamicRaggedShapeSpec:
        return DynamicRaggedShapeSpec(tuple(p._uniform for p in self._parts), len(self._inner), self._dtype)


class DynamicRaggedShapeSpec(TypeSpec):
    """A DynamicRaggedShape's type, as TF's ``DynamicRaggedShape.Spec``: its components are each row
    partition's row splits and the inner shape (a tf.function returns one as these tensors)."""

    value_type = DynamicRaggedShape

    def __init__(self, uniform_lengths: tuple, inner_rank: int, dtype: Any = dtypes.int64) -> None:
        self._uniform, self._inner_rank, self._dtype = tuple(uniform_lengths), int(inner_rank), dtypes.as_dtype(dtype)

    def _serialize(self) -> tuple:
        return (self._uniform, self._inner_rank, self._dtype)

    @property
    def _component_specs(self) -> tuple:
        from tapeflow.framework.tensor_spec import TensorSpec

        return tuple(TensorSpec([None], self._dtype) for _ in self._uniform) + (
            TensorSpec([self._inner_rank], self._dtype),)

    def _to_components(self, value: DynamicRaggedShape) -> tuple:
        return tuple(p.row_splits() for p in value._parts) + (value.inner_shape,)

    def _from_components(self, components: Any) -> DynamicRaggedShape:
        *splits, inner = components
        parts = [RowPartition(_ints(s), self._dtype, k) for s, k in zip(splits, self._uniform)]
        return DynamicRaggedShape(parts, _ints(inner), dtype=self._dtype)

    def __repr__(self) -> str:
        return f"DynamicRaggedShape.Spec(uniform_row_lengths={self._uniform}, inner_rank={self._inner_rank}, " \
               f"dtype={self._dtype!r})"


# -- the dense ops that take one (registered with dispatch_for) -------------

def _inner(shape: DynamicRaggedShape) -> list:
    return [int(n) for n in shape._inner]


def reshape(tensor: Any, shape: Any, name: Any = None) -> Any:
    from tapeflow.ops import array_ops

    if not isinstance(shape, DynamicRaggedShape):
        return NotImplemented
    flat = getattr(tensor, "flat_values", tensor)  # a RaggedTensor's values in row-major order, as TF's
    return shape._build(array_ops.reshape(flat, _inner(shape)))


def zeros(shape: Any, dtype: Any = dtypes.float32, name: Any = None) -> Any:
    from tapeflow.ops import array_ops

    if not isinstance(shape, DynamicRaggedShape):
        return NotImplemented
    return shape._build(array_ops.zeros(_inner(shape), dtype))


def ones(shape: Any, dtype: Any = dtypes.float32, name: Any = None) -> Any:
    from tapeflow.ops import array_ops

    if not isinstance(shape, DynamicRaggedShape):
        return NotImplemented
    return shape._build(array_ops.ones(_inner(shape), dtype))


def fill(dims: Any, value: Any, name: Any = None) -> Any:
    from tapeflow.ops import array_ops

    if not isinstance(dims, DynamicRaggedShape):
        return NotImplemented
    return dims._build(array_ops.fill(_inner(dims), value))
