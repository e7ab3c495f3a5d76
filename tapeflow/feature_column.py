"""``tf.feature_column`` (also ``tf.compat.v1.feature_column``): TF's deprecated column descriptions.

In TF 2.21 with Keras 3 the columns feed only estimators (removed in TF 2.16) and TF 1 graphs; the Keras
replacement is ``tf.keras.utils.FeatureSpace`` and the preprocessing layers. tapeflow has ``numeric_column``
(the description, with TF's checks and repr); the other column kinds raise ``NotImplementedError`` naming them.
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np

from tapeflow.framework import dtypes

__all__ = ["NumericColumn", "numeric_column"]

_NOT_HERE = frozenset({
    "bucketized_column", "categorical_column_with_hash_bucket", "categorical_column_with_identity",
    "categorical_column_with_vocabulary_file", "categorical_column_with_vocabulary_list", "crossed_column",
    "embedding_column", "indicator_column", "make_parse_example_spec", "sequence_categorical_column_with_hash_bucket",
    "sequence_categorical_column_with_identity", "sequence_categorical_column_with_vocabulary_file",
    "sequence_categorical_column_with_vocabulary_list", "sequence_numeric_column", "shared_embeddings",
    "weighted_categorical_column", "input_layer", "linear_model", "shared_embedding_columns",
})


class NumericColumn(collections.namedtuple("NumericColumn",
                                           ("key", "shape", "default_value", "dtype", "normalizer_fn"))):
    """A dense numeric feature ``key`` of a fixed ``shape`` (as TF's)."""

    @property
    def name(self) -> str:
        return self.key

    @property
    def parse_example_spec(self) -> dict:
        from tapeflow.io import FixedLenFeature

        return {self.key: FixedLenFeature(self.shape, self.dtype, self.default_value)}

    @property
    def variable_shape(self) -> Any:
        from tapeflow.framework.tensor_shape import TensorShape

        return TensorShape(self.shape)

    def __repr__(self) -> str:
        return (f"NumericColumn(key={self.key!r}, shape={self.shape!r}, default_value={self.default_value!r}, "
                f"dtype=tf.{self.dtype.name}, normalizer_fn={self.normalizer_fn!r})")


def _nested_tuple(a: Any) -> Any:
    return tuple(_nested_tuple(x) for x in a) if isinstance(a, np.ndarray) and a.ndim else a


def numeric_column(key: str, shape: Any = (1,), default_value: Any = None, dtype: Any = dtypes.float32,
                   normalizer_fn: Any = None) -> NumericColumn:
    """As ``tf.feature_column.numeric_column``: the description of a dense numeric feature."""
    if not isinstance(key, str):
        raise ValueError(f"key must be a string. Got: type {type(key)}. Given key: {key}.")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if any(d < 1 for d in shape):
        raise ValueError(f"shape dimensions must be greater than 0. shape: {shape}, key: {key}")
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype}, key: {key}")
    if default_value is not None:
        py = int if dtype.is_integer else float
        if np.ndim(default_value) == 0:
            full = np.empty(shape, dtype=object)
            full.fill(py(default_value))
            default_value = _nested_tuple(full)
        else:
            arr = np.asarray(default_value)
            if arr.shape != shape:
                raise ValueError(f"The shape of default_value must be equal to given shape. default_value: "
                                 f"{default_value}, shape: {shape}, key: {key}")
            default_value = _nested_tuple(np.vectorize(py, otypes=[object])(arr))
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    return NumericColumn(key, shape, default_value, dtype, normalizer_fn)


def __getattr__(name: str) -> Any:
    if name in _NOT_HERE:
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError(f"tf.feature_column.{name} is not implemented in tapeflow "
                                            "(tf.feature_column is deprecated in TF; use tf.keras.utils.FeatureSpace "
                                            "or Keras preprocessing layers)")
    raise AttributeError(f"module 'tapeflow.feature_column' has no attribute '{name}'")
