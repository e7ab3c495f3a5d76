"""``tf.TensorSpec``: the type of a tensor argument (shape with unknown dims, dtype), shared by
``tf.function`` signatures, the composite tensors' component specs and ``tf.data``."""

from __future__ import annotations

from typing import Any

from tapeflow.framework import dtypes
from tapeflow.framework.tensor import convert_to_tensor
from tapeflow.framework.tensor_shape import TensorShape


class TensorSpec:
    """Describes a tensor argument: shape (dims may be None) and dtype, as ``tf.TensorSpec``.

    >>> tf.TensorSpec(shape=[None, 3], dtype=tf.float32)
    TensorSpec(shape=(None, 3), dtype=tf.float32, name=None)
    """

    def __init__(self, shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> None:
        self.shape = TensorShape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, tensor: Any, name: str | None = None) -> TensorSpec:
        t = convert_to_tensor(tensor)
        return cls(t.shape, t.dtype, name)

    def _dims(self) -> tuple | None:
        return None if self.shape.rank is None else tuple(self.shape.as_list())

    def is_compatible_with(self, other: Any) -> bool:
        if isinstance(other, TensorSpec):
            return self.dtype is other.dtype and self.shape.is_compatible_with(other.shape)
        try:
            t = convert_to_tensor(other)
        except (TypeError, ValueError):
            return False
        return t.dtype is self.dtype and self.shape.is_compatible_with(t.shape)

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, TensorSpec) and self.dtype is other.dtype and self._dims() == other._dims()
                and self.name == other.name)

    def __hash__(self) -> int:
        return hash((self._dims(), self.dtype.name, self.name))

    def __repr__(self) -> str:
        name = "None" if self.name is None else repr(self.name)
        return f"TensorSpec(shape={self.shape}, dtype=tf.{self.dtype.name}, name={name})"
