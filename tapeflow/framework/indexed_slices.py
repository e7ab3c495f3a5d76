"""``tf.IndexedSlices``: a sparse gradient, rows ``indices`` of a dense tensor.

The gradient of a gather (embedding lookup) w.r.t. its params is an
IndexedSlices, so a 100k-row table's gradient costs only the gathered rows.
The type lives here, with the framework's other types; its behaviours that are ops (``-slices``,
conversion to a dense tensor) are installed by the op layer (``tapeflow.ops.tensor_operators``).
"""

from __future__ import annotations

from typing import Any

from tapeflow.framework.tensor import Tensor
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
        if isinstance(ds, Tensor):
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

    def __repr__(self) -> str:
        return (
            f"IndexedSlices(indices={self._indices!r}, values={self._values!r}, "
            f"dense_shape={self._dense_shape!r})"
        )
