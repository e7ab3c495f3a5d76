"""``tf.SparseTensor``: ``values[i]`` sits at ``indices[i]`` of a ``dense_shape``
tensor; every other element is zero.

Components: ``indices`` (int64 ``[N, rank]``), ``values`` (``[N]``) and
``dense_shape`` (int64 ``[rank]``). Ops on it (``tf.sparse``) compute the
values with tapeflow ops, so gradients flow to ``values``.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.composite_tensor import CompositeTensor, TypeSpec, register_composite
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.framework.tensor_shape import TensorShape


def _int64(x: Any, what: str) -> Tensor:
    if isinstance(x, Tensor):
        if x._value.dtype != np.int64:
            if x._value.dtype.kind not in "iu":
                raise TypeError(f"SparseTensor {what} must be int64, got {x.dtype.name}")
            if not isinstance(x._value, np.ndarray):  # a traced tensor: TF's error (it never casts)
                raise ValueError(f"{what}: Tensor conversion requested dtype int64 for Tensor with dtype "
                                 f"{x.dtype.name}: {x!r}")
            return convert_to_tensor(np.asarray(x.numpy(), np.int64))
        return x
    arr = np.asarray(x.numpy() if hasattr(x, "numpy") else x)
    if arr.size and arr.dtype.kind not in "iu":
        raise TypeError(f"SparseTensor {what} must be integers, got {arr.dtype}")
    return convert_to_tensor(arr.astype(np.int64))


# What tracing knows of a symbolic dense_shape (TensorShape), installed by the op layer (tapeflow.ops.sparse).
_partial_shape: Callable | None = None


class SparseTensor(CompositeTensor):
    """A sparse tensor, as ``tf.sparse.SparseTensor``.

    >>> st = tf.SparseTensor(indices=[[0, 3], [2, 4]], values=[10, 20], dense_shape=[3, 10])
    >>> tf.sparse.to_dense(st).shape
    TensorShape([3, 10])
    """

    __slots__ = ("_indices", "_values", "_dense_shape", "_static_shape")

    def __init__(self, indices: Any, values: Any, dense_shape: Any) -> None:
        self._indices = _int64(indices, "indices")
        if hasattr(values, "value") and hasattr(values, "assign"):
            values = values.value()
        self._values = values if isinstance(values, Tensor) else convert_to_tensor(values)
        self._dense_shape = _int64(dense_shape, "dense_shape")
        self._static_shape: TensorShape | None = None  # what tracing knows of a symbolic dense_shape
        ishape = self._indices._shape_tuple()
        if len(ishape) != 2:
            raise ValueError(f"SparseTensor indices must be a matrix [N, rank], got shape {list(ishape)}")
        vshape = self._values._shape_tuple()
        if len(vshape) != 1 or (ishape[0] is not None and vshape[0] is not None and vshape[0] != ishape[0]):
            raise ValueError(
                f"SparseTensor values must be a vector with one value per index row: indices "
                f"{list(ishape)}, values {list(vshape)}"
            )

    @classmethod
    def from_value(cls, sparse_tensor_value: Any) -> SparseTensor:
        return cls(sparse_tensor_value.indices, sparse_tensor_value.values, sparse_tensor_value.dense_shape)

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def dense_shape(self) -> Tensor:
        return self._dense_shape

    @property
    def dtype(self) -> dtypes.DType:
        return self._values.dtype

    @property
    def shape(self) -> TensorShape:
        ds = self._dense_shape
        if isinstance(ds._value, np.ndarray):
            return TensorShape([int(d) for d in ds._value.reshape(-1)])
        if self._static_shape is not None:
            return self._static_shape
        if _partial_shape is not None:
            return _partial_shape(ds)
        n = ds._shape_tuple()[0]
        return TensorShape(None if n is None else [None] * n)

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def ndim(self) -> int | None:
        return self.shape.rank

    @property
    def device(self) -> str:
        return self._values.device

    @property
    def _type_spec(self) -> SparseTensorSpec:
        return SparseTensorSpec(self.shape, self.dtype)

    def _trace_split(self) -> tuple:
        static = (np.asarray(self._indices.numpy()).tobytes(), np.asarray(self._dense_shape.numpy()).tobytes())
        return ("SparseTensor", static), [self._values]

    def _trace_rebuild(self, dynamic: list) -> SparseTensor:
        return SparseTensor(self._indices, dynamic[0], self._dense_shape)

    def with_values(self, new_values: Any) -> SparseTensor:
        return SparseTensor(self._indices, new_values, self._dense_shape)

    def __str__(self) -> str:
        return f"SparseTensor(indices={self._indices!s}, values={self._values!s}, dense_shape={self._dense_shape!s})"

    __repr__ = __str__

    def __hash__(self):
        raise TypeError("SparseTensor is unhashable. Instead, use tensor.ref() as the key.")

    def __bool__(self) -> bool:
        raise TypeError("SparseTensor may not be used as a boolean.")

    # *, /, unary - and + with a dense or sparse operand are ops: the op layer installs them
    # (tapeflow.ops.tensor_operators).

    def consumers(self):
        raise NotImplementedError("SparseTensor.consumers() (graph mode only in TF)")

    def eval(self, *a, **k):
        raise NotImplementedError("SparseTensor.eval() is TF1 graph mode only")


register_composite(SparseTensor)


class SparseTensorSpec(TypeSpec):
    """The type of a SparseTensor: its dense shape and dtype."""

    value_type = SparseTensor

    def __init__(self, shape: Any = None, dtype: Any = dtypes.float32) -> None:
        self._shape = TensorShape(shape)
        self._dtype = dtypes.as_dtype(dtype)

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    def _serialize(self) -> tuple:
        return (self._shape, self._dtype)

    @property
    def _component_specs(self) -> tuple:
        from tapeflow.framework.tensor_spec import TensorSpec

        rank = self._shape.rank
        return (
            TensorSpec([None, rank], dtypes.int64),
            TensorSpec([None], self._dtype),
            TensorSpec([rank], dtypes.int64),
        )

    def _to_components(self, value: SparseTensor) -> tuple:
        return (value.indices, value.values, value.dense_shape)

    def _from_components(self, components: Any) -> SparseTensor:
        i, v, s = components
        return SparseTensor(i, v, s)

    @classmethod
    def from_value(cls, value: SparseTensor) -> SparseTensorSpec:
        return value._type_spec

    def __repr__(self) -> str:
        return f"SparseTensorSpec({self._shape!r}, {self._dtype!r})"
