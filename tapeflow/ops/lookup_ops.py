"""Table lookups and the ragged kernels the Keras lookup layers need.

``StaticHashTable`` is an immutable key -> value table (TF's ``StaticHashTable``
filled by a ``KeyValueTensorInitializer``): a lookup op takes the table as an
attribute, so a traced function keeps the table it saw, as TF's captured
table resource. Replacing a layer's vocabulary builds a new table.

``RaggedTensorToTensor`` pads the rows of a ragged batch into a dense tensor
and ``RaggedBincount`` counts each row's values: both read only the flat
values and the row splits, so they work on symbolic tensors inside
``tf.function`` and ``Dataset.map``. None of these ops is differentiable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops.registry import NotDifferentiable, defop

__all__ = ["StaticHashTable", "lookup", "ragged_to_dense", "ragged_bincount", "bucketize"]

_OBJ = np.dtype(object)


def _as_bytes(x: Any) -> bytes:
    return x.encode("utf-8") if isinstance(x, str) else bytes(x)


class StaticHashTable:
    """An immutable table from ``keys`` to ``values`` with ``default_value`` for missing keys.

    String keys are looked up through a dict, integer keys by binary search over the sorted keys."""

    def __init__(self, keys: Any, values: Any, default_value: Any, key_dtype: Any, value_dtype: Any) -> None:
        self.key_dtype = dtypes.as_dtype(key_dtype)
        self.value_dtype = dtypes.as_dtype(value_dtype)
        self._keys = self._column(keys, self.key_dtype)
        self._values = self._column(values, self.value_dtype)
        if self._keys.shape != self._values.shape:
            raise ValueError(f"StaticHashTable: {self._keys.size} keys but {self._values.size} values")
        self.default_value = self._scalar(default_value, self.value_dtype)
        if self.key_dtype == dtypes.string:
            self._dict = dict(zip(self._keys.tolist(), self._values.tolist()))
        else:
            order = np.argsort(self._keys, kind="stable")
            self._sorted_keys, self._sorted_values = self._keys[order], self._values[order]

    @staticmethod
    def _column(x: Any, dtype: dtypes.DType) -> np.ndarray:
        a = np.asarray(x.numpy() if isinstance(x, Tensor) else x).reshape(-1)
        if dtype == dtypes.string:
            out = np.empty(a.shape, _OBJ)
            out[:] = [_as_bytes(v) for v in a.tolist()]
            return out
        return a.astype(dtype.as_numpy_dtype)

    @staticmethod
    def _scalar(x: Any, dtype: dtypes.DType) -> Any:
        if dtype == dtypes.string:
            return _as_bytes(x)
        return dtype.as_numpy_dtype(x)

    def size(self) -> int:
        return int(self._keys.size)

    def export(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys, values) in insertion order."""
        return self._keys, self._values

    def find(self, a: np.ndarray) -> np.ndarray:
        a = np.asarray(a)
        flat = a.reshape(-1)
        if self.key_dtype == dtypes.string:
            get, default = self._dict.get, self.default_value
            if self.value_dtype == dtypes.string:
                out = np.empty(flat.shape, _OBJ)
                out[:] = [get(x, default) for x in flat.tolist()]
            else:
                out = np.fromiter(
                    (get(x, default) for x in flat.tolist()), self.value_dtype.as_numpy_dtype, count=flat.size
                )
            return out.reshape(a.shape)
        keys = flat.astype(self.key_dtype.as_numpy_dtype)
        sk = self._sorted_keys
        if not sk.size:
            found = np.zeros(keys.shape, bool)
            pos = np.zeros(keys.shape, np.int64)
        else:
            pos = np.minimum(np.searchsorted(sk, keys), sk.size - 1)
            found = sk[pos] == keys
        if self.value_dtype == dtypes.string:
            out = np.empty(flat.shape, _OBJ)
            out[:] = self.default_value
            out[found] = self._sorted_values[pos[found]]
        else:
            out = np.where(found, self._sorted_values[pos] if sk.size else 0, self.default_value).astype(
                self.value_dtype.as_numpy_dtype
            )
        return out.reshape(a.shape)


LOOKUP_FIND = defop(
    "LookupTableFindV2",
    lambda keys, table: table.find(keys),
    shape=lambda specs, table: [(specs[0][0], np.dtype(table.value_dtype.as_numpy_dtype))],
)
NotDifferentiable("LookupTableFindV2")


def lookup(table: StaticHashTable, keys: Any) -> Tensor:
    """``table.lookup(keys)``: the value of each key (``default_value`` where it is missing)."""
    k = keys if isinstance(keys, Tensor) else convert_to_tensor(keys, dtype=table.key_dtype)
    if k.dtype != table.key_dtype:
        if not (k.dtype.is_integer and table.key_dtype.is_integer):
            raise InvalidArgumentError(
                None, None, f"Key must be type {table.key_dtype.name} but got {k.dtype.name} [Op:LookupTableFindV2]"
            )
        from tapeflow.ops import math_ops

        k = math_ops.cast(k, table.key_dtype)
    return execute(LOOKUP_FIND, (k,), {"table": table})


# -- ragged rows to dense, per-row counts -------------------------------------------------


def _row_positions(splits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    splits = np.asarray(splits, np.int64)
    rowids = np.repeat(np.arange(splits.size - 1, dtype=np.int64), np.diff(splits))
    return rowids, np.arange(splits[-1], dtype=np.int64) - splits[rowids]


def _to_dense_kernel(values, splits, default, width):
    rowids, pos = _row_positions(splits)
    nrows = np.asarray(splits).size - 1
    if width is None:
        width = int(np.diff(splits).max()) if nrows else 0
    values = np.asarray(values)
    out = np.empty((nrows, width), values.dtype)
    out[...] = default
    keep = pos < width
    out[rowids[keep], pos[keep]] = values[keep]
    return out


def _to_dense_shape(specs, default, width):
    n = specs[1][0][0] if specs[1][0] else None
    return [((None if n is None else n - 1, width), specs[0][1])]


RAGGED_TO_DENSE = defop("RaggedTensorToTensor", _to_dense_kernel, shape=_to_dense_shape)
NotDifferentiable("RaggedTensorToTensor")


def ragged_to_dense(rt: Any, default_value: Any, width: int | None = None) -> Tensor:
    """The rows of a ragged-rank-1 ``rt`` (1-D flat values) padded with ``default_value`` to ``width``
    (cut where longer; the longest row when ``None``): ``rt.to_tensor(shape=[None, width])``, also
    on symbolic tensors."""
    return rows_to_dense(rt.flat_values, rt.row_splits, default_value, width)


def rows_to_dense(values: Tensor, row_splits: Tensor, default_value: Any, width: int | None = None) -> Tensor:
    """``ragged_to_dense`` of the rows ``values[row_splits[i]:row_splits[i + 1]]``."""
    default = _as_bytes(default_value) if values.dtype == dtypes.string else default_value
    return execute(RAGGED_TO_DENSE, (values, row_splits), {"default": default, "width": width})


def _bincount_kernel(values, splits, size, binary_output, dtype):
    rowids, _ = _row_positions(splits)
    v = np.asarray(values).astype(np.int64).reshape(-1)
    keep = (v >= 0) & (v < size)  # TF's bincount drops values past maxlength (Keras's masked tokens)
    nrows = np.asarray(splits).size - 1
    counts = np.bincount(rowids[keep] * size + v[keep], minlength=nrows * size).reshape(nrows, size)
    if binary_output:
        counts = counts > 0
    return counts.astype(dtype)


RAGGED_BINCOUNT = defop(
    "RaggedBincount",
    _bincount_kernel,
    shape=lambda specs, size, binary_output, dtype: [
        ((None if not specs[1][0] or specs[1][0][0] is None else specs[1][0][0] - 1, size), np.dtype(dtype))
    ],
)
NotDifferentiable("RaggedBincount")


def ragged_bincount(values: Tensor, row_splits: Tensor, size: int, binary_output: bool, dtype: Any) -> Tensor:
    """Per-row counts (or presence with ``binary_output``) of the integers ``values`` in ``[0, size)``,
    rows given by ``row_splits``: a ``[nrows, size]`` tensor of ``dtype``."""
    return execute(
        RAGGED_BINCOUNT,
        (values, row_splits),
        {"size": int(size), "binary_output": bool(binary_output), "dtype": dtypes.as_dtype(dtype).as_numpy_dtype},
    )


# -- bucketing ---------------------------------------------------------------------------------


def _bucketize_kernel(a, boundaries):
    # TF's kernel: the upper bound of each value among the float32 boundaries
    return np.searchsorted(np.asarray(boundaries, np.float32), np.asarray(a), side="right").astype(np.int32)


BUCKETIZE = defop("Bucketize", _bucketize_kernel, shape=lambda specs, boundaries: [(specs[0][0], np.dtype(np.int32))])
NotDifferentiable("Bucketize")


def bucketize(x: Any, boundaries: Any) -> Any:
    """``tf.raw_ops.Bucketize``: for each value, the number of ``boundaries`` (sorted) that are <= it, as int32;
    a ragged ``x`` is bucketed value by value."""
    if hasattr(x, "flat_values"):
        return x.with_flat_values(bucketize(x.flat_values, boundaries))
    t = x if isinstance(x, Tensor) else convert_to_tensor(x)
    if t.dtype == dtypes.string or t.dtype == dtypes.bool:
        from tapeflow.ops import math_ops

        if t.dtype == dtypes.string:
            raise TypeError(f"Bucketize: expected a numeric tensor, got {t.dtype.name}")
        t = math_ops.cast(t, dtypes.int32)
    elif t.dtype in (dtypes.float16,):
        from tapeflow.ops import math_ops

        t = math_ops.cast(t, dtypes.float32)
    return execute(BUCKETIZE, (t,), {"boundaries": tuple(float(b) for b in boundaries)})
