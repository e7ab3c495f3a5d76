"""``tf.lookup``: immutable tables (``StaticHashTable``, ``StaticVocabularyTable``) filled by a
``KeyValueTensorInitializer`` or a ``TextFileInitializer``.

A table is built once, eagerly, and looked up by a ``LookupTableFindV2`` op that holds it
(see ``tapeflow/ops/lookup_ops.py``): lookups work eagerly, inside ``tf.function`` and in
``Dataset.map``, on tensors and on the values of ragged and sparse tensors. Mutable and dense
tables (``tf.lookup.experimental``) are not implemented.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import lookup_ops

__all__ = [
    "KeyValueTensorInitializer",
    "TextFileInitializer",
    "TextFileIndex",
    "StaticHashTable",
    "StaticVocabularyTable",
    "experimental",
]


class KeyValueTensorInitializer:
    """Table contents from a tensor of keys and a tensor of values (same length)."""

    def __init__(
        self, keys: Any, values: Any, key_dtype: Any = None, value_dtype: Any = None, name: str | None = None
    ) -> None:
        self._keys = convert_to_tensor(keys, dtype=key_dtype)
        self._values = convert_to_tensor(values, dtype=value_dtype)
        self._name = name

    @property
    def key_dtype(self) -> dtypes.DType:
        return self._keys.dtype

    @property
    def value_dtype(self) -> dtypes.DType:
        return self._values.dtype

    def _contents(self) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(self._keys.numpy()).reshape(-1), np.asarray(self._values.numpy()).reshape(-1)


class TextFileIndex:
    """Which part of a line is a key or value: the whole line, the line number, or a column (>= 0)."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


class TextFileInitializer:
    """Table contents from a text file, a line per entry: keys and values each the whole line
    (``TextFileIndex.WHOLE_LINE``), its number (``LINE_NUMBER``) or a ``delimiter``-separated column."""

    def __init__(
        self,
        filename: Any,
        key_dtype: Any,
        key_index: int,
        value_dtype: Any,
        value_index: int,
        vocab_size: int | None = None,
        delimiter: str = "\t",
        name: str | None = None,
        value_index_offset: int = 0,
    ) -> None:
        self._filename = filename.numpy().decode() if isinstance(filename, Tensor) else str(filename)
        self._key_dtype = dtypes.as_dtype(key_dtype)
        self._value_dtype = dtypes.as_dtype(value_dtype)
        for what, index, dt in (("key", key_index, self._key_dtype), ("value", value_index, self._value_dtype)):
            if index < -2:
                raise ValueError(f"`{what}_index` should be >= -2, received: {index}.")
            if index == TextFileIndex.LINE_NUMBER and dt != dtypes.int64:
                raise ValueError(f"`{what}_dtype` must be int64 if `{what}_index` is {index}, received: {dt}.")
            if index == TextFileIndex.WHOLE_LINE and dt != dtypes.string and not dt.is_integer:
                raise ValueError(
                    f"`{what}_dtype` should be either integer or string for `{what}_index` {index}, received: {dt}."
                )
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"`vocab_size` should be > 0, received: {vocab_size}.")
        self._key_index, self._value_index = key_index, value_index
        self._vocab_size, self._delimiter, self._offset = vocab_size, delimiter, value_index_offset
        self._name = name

    @property
    def key_dtype(self) -> dtypes.DType:
        return self._key_dtype

    @property
    def value_dtype(self) -> dtypes.DType:
        return self._value_dtype

    def _contents(self) -> tuple[np.ndarray, np.ndarray]:
        with open(self._filename, "rb") as f:
            lines = f.read().splitlines()
        if self._vocab_size is not None:
            lines = lines[: self._vocab_size]

        def column(index: int, dtype: dtypes.DType, offset: int) -> list:
            if index == TextFileIndex.LINE_NUMBER:
                return [i + offset for i in range(len(lines))]
            cells = (
                lines
                if index == TextFileIndex.WHOLE_LINE
                else [line.split(self._delimiter.encode())[index] for line in lines]
            )
            return cells if dtype == dtypes.string else [int(c) if dtype.is_integer else float(c) for c in cells]

        return (
            np.asarray(column(self._key_index, self._key_dtype, 0), dtype=object),
            np.asarray(column(self._value_index, self._value_dtype, self._offset), dtype=object),
        )


def _values_of(keys: Any) -> tuple[Any, Any]:
    """(the tensor of keys to look up, how to put results back) for a tensor, ragged or sparse tensor."""
    if hasattr(keys, "flat_values"):
        return keys.flat_values, keys.with_flat_values
    if not isinstance(keys, Tensor) and hasattr(keys, "indices") and hasattr(keys, "dense_shape"):
        from tapeflow.framework.sparse_tensor import SparseTensor

        return keys.values, lambda v: SparseTensor(keys.indices, v, keys.dense_shape)
    return keys, lambda v: v


def _check_key_dtype(keys: Any, key_dtype: dtypes.DType) -> Any:
    if not isinstance(keys, Tensor) and not hasattr(keys, "flat_values") and not hasattr(keys, "indices"):
        keys = convert_to_tensor(keys, dtype=key_dtype)
    if keys.dtype != key_dtype:
        raise TypeError(f"Dtype of argument `keys` must be {key_dtype}, received: {keys.dtype}")
    return keys


class StaticHashTable:
    """An immutable table, filled once by ``initializer``; missing keys give ``default_value``.

    >>> table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b"], [0, 1]), -1)
    >>> table.lookup(tf.constant(["b", "zz"]))  # [1, -1]
    """

    def __init__(
        self, initializer: Any, default_value: Any, name: str | None = None, experimental_is_anonymous: bool = False
    ) -> None:
        self._initializer = initializer
        self._key_dtype, self._value_dtype = initializer.key_dtype, initializer.value_dtype
        self._default_value = convert_to_tensor(default_value, dtype=self._value_dtype)
        keys, values = initializer._contents()
        self._table = lookup_ops.StaticHashTable(
            keys, values, self._default_value.numpy(), self._key_dtype, self._value_dtype
        )
        self._name = name or "hash_table"

    @property
    def key_dtype(self) -> dtypes.DType:
        return self._key_dtype

    @property
    def value_dtype(self) -> dtypes.DType:
        return self._value_dtype

    @property
    def default_value(self) -> Tensor:
        return self._default_value

    @property
    def name(self) -> str:
        return self._name

    def size(self, name: str | None = None) -> Tensor:
        """The number of entries (int64)."""
        return convert_to_tensor(np.int64(self._table.size()))

    def lookup(self, keys: Any, name: str | None = None) -> Any:
        """The value of each of ``keys`` (a tensor, ragged or sparse tensor), ``default_value`` if missing."""
        values, rebuild = _values_of(_check_key_dtype(keys, self._key_dtype))
        return rebuild(lookup_ops.lookup(self._table, values))

    def __getitem__(self, keys: Any) -> Any:
        return self.lookup(keys)

    def export(self, name: str | None = None) -> tuple[Tensor, Tensor]:
        """(keys, values) of every entry."""
        keys, values = self._table.export()
        return convert_to_tensor(keys, dtype=self._key_dtype), convert_to_tensor(values, dtype=self._value_dtype)


class StaticVocabularyTable:
    """A vocabulary (int64 ids from ``initializer``) with ``num_oov_buckets`` extra ids for the other keys,
    chosen by TF's FarmHash64 (``tf.strings.to_hash_bucket_fast``; integer keys by their decimal string)."""

    def __init__(
        self,
        initializer: Any,
        num_oov_buckets: int,
        lookup_key_dtype: Any = None,
        name: str | None = None,
        experimental_is_anonymous: bool = False,
    ) -> None:
        if num_oov_buckets <= 0:
            raise ValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        self._num_oov_buckets = int(num_oov_buckets)
        self._table = None
        if initializer is not None:
            lookup_key_dtype = initializer.key_dtype if lookup_key_dtype is None else dtypes.as_dtype(lookup_key_dtype)
            supported = (dtypes.int64, dtypes.string)
            if initializer.key_dtype not in supported:
                raise TypeError(
                    f"Invalid `key_dtype`, expected one of ({supported[0]!r}, {supported[1]!r}), but got "
                    f"{initializer.key_dtype}."
                )
            if initializer.key_dtype.is_integer != lookup_key_dtype.is_integer:
                kind = "integer" if lookup_key_dtype.is_integer else "non-integer"
                raise TypeError(f"Invalid `key_dtype`, expected {kind} but got {initializer.key_dtype}.")
            if initializer.value_dtype != dtypes.int64:
                raise TypeError(f"Invalid `value_dtype`, expected {dtypes.int64} but got {initializer.value_dtype}.")
            self._table = StaticHashTable(initializer, -1)
        self._key_dtype = dtypes.as_dtype(lookup_key_dtype) if lookup_key_dtype is not None else dtypes.string
        self._name = name or "hash_table"

    @property
    def key_dtype(self) -> dtypes.DType:
        return self._key_dtype

    @property
    def value_dtype(self) -> dtypes.DType:
        return dtypes.int64

    @property
    def name(self) -> str:
        return self._name

    def size(self, name: str | None = None) -> Tensor:
        """Vocabulary entries plus OOV buckets (int64)."""
        n = self._table._table.size() if self._table is not None else 0
        return convert_to_tensor(np.int64(n + self._num_oov_buckets))

    def lookup(self, keys: Any, name: str | None = None) -> Any:
        """The id of each key: its vocabulary id, else ``vocab_size + hash(key) % num_oov_buckets``."""
        from tapeflow.ops import math_ops, string_ops

        values, rebuild = _values_of(_check_key_dtype(keys, self._key_dtype))
        if self._table is not None and self._table.key_dtype == dtypes.int64 and values.dtype != dtypes.int64:
            values = math_ops.cast(values, dtypes.int64)
        hashed = string_ops.as_string(values) if values.dtype.is_integer else values
        buckets = string_ops.to_hash_bucket_fast(hashed, self._num_oov_buckets)
        if self._table is None:
            return rebuild(buckets)
        ids = lookup_ops.lookup(self._table._table, values)
        buckets = buckets + np.int64(self._table._table.size())
        return rebuild(math_ops.where(math_ops.not_equal(ids, np.int64(-1)), ids, buckets))

    def __getitem__(self, keys: Any) -> Any:
        return self.lookup(keys)


class _Experimental:
    """``tf.lookup.experimental``: not implemented in tapeflow."""

    def __getattr__(self, name: str) -> Any:
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        if name.startswith("__"):
            raise AttributeError(name)
        raise NotImplementedInTapeflowError(
            f"tf.lookup.experimental.{name} is not implemented in tapeflow (mutable and dense tables)"
        )


experimental = _Experimental()
