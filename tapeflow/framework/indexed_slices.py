"""``tf.IndexedSlices``: a sparse gradient, rows ``indices`` of a dense tensor.

The gradient of a gather (embedding lookup) w.r.t. its params is an
IndexedSlices, so a 100k-row table's gradient costs only the gathered rows.
"""

from __future__ import annotations

from typing import Any

from tapeflow.framework import tensor as tensor_mod
from tapeflow.framework.tensor_shape import TensorShape


class IndexedSlices:
    """``values[i]`` is row ``indices[i]`` of a dense tensor of ``dense_shape``;
    repeated indices add up."""

    def __init__(self, values: Any, indices: Any, dense_shape: Any = None) -> None:
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self):
        return self._values

    @property
    def indices(self):
        return self._indices

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def shape(self) -> TensorShape:
        ds = self._dense_shape
        if ds is None:
            return TensorShape(None)
        if isinstance(ds, tensor_mod.Tensor):
            try:
                return TensorShape([int(d) for d in ds.numpy()])
            except Exception:  # noqa: BLE001 - symbolic dense shape
                return TensorShape(None)
        return TensorShape(ds)

    def _shape_tuple(self) -> tuple:
        return tuple(self.shape.as_list())

    @property
    def device(self) -> str:
        return self._values.device

    def __neg__(self) -> IndexedSlices:
        from tapeflow.ops import math_ops

        return IndexedSlices(math_ops.negative(self._values), self._indices, self._dense_shape)

    def __repr__(self) -> str:
        return (
            f"IndexedSlices(indices={self._indices!r}, values={self._values!r}, "
            f"dense_shape={self._dense_shape!r})"
        )


def to_dense(s: IndexedSlices):
    """Densifies with a differentiable segment sum (repeated rows add)."""
    from tapeflow.ops import math_ops

    if s.dense_shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices without dense_shape: {s!r}")
    n = s._shape_tuple()[0]
    return math_ops.unsorted_segment_sum(s.values, s.indices, n)


def _convert(value: IndexedSlices, dtype=None):
    return to_dense(value)


tensor_mod.register_tensor_conversion_function(IndexedSlices, _convert)
