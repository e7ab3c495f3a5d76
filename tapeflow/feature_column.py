"""``tf.feature_column`` (also ``tf.compat.v1.feature_column``): TF's deprecated column descriptions.

In TF 2.21 with Keras 3 the columns feed only estimators (removed in TF 2.16) and TF 1 graphs; the Keras
replacement is ``tf.keras.utils.FeatureSpace`` and the preprocessing layers (``tf.keras.layers.DenseFeatures`` is
gone too). tapeflow has the column descriptions as TF's namedtuples, with TF's checks, names, ``num_buckets`` and
``parse_example_spec`` (numeric, bucketized, hashed, vocabulary-list, identity, indicator, embedding, crossed and
weighted columns) and ``make_parse_example_spec``; the other column kinds raise ``NotImplementedError`` naming
them.
"""

from __future__ import annotations

import collections
import math
from typing import Any

import numpy as np

from tapeflow.framework import dtypes

__all__ = ["numeric_column", "bucketized_column", "categorical_column_with_hash_bucket",
           "categorical_column_with_vocabulary_list", "categorical_column_with_identity", "indicator_column",
           "embedding_column", "crossed_column", "weighted_categorical_column", "make_parse_example_spec"]

_NOT_HERE = frozenset({
    "categorical_column_with_vocabulary_file", "sequence_categorical_column_with_hash_bucket",
    "sequence_categorical_column_with_identity", "sequence_categorical_column_with_vocabulary_file",
    "sequence_categorical_column_with_vocabulary_list", "sequence_numeric_column", "shared_embeddings",
    "input_layer", "linear_model", "shared_embedding_columns",
})


class FeatureColumn:
    """What every column is (TF's ``FeatureColumn``); ``DenseColumn`` and ``CategoricalColumn`` below."""

    __slots__ = ()


class DenseColumn(FeatureColumn):
    __slots__ = ()


class CategoricalColumn(FeatureColumn):
    __slots__ = ()


def _var_len(dtype: Any) -> Any:
    from tapeflow.io import VarLenFeature

    return VarLenFeature(dtype)


class _KeyedCategorical(CategoricalColumn):
    """A categorical column of one raw feature ``key``: named after it, parsed as a VarLenFeature of its dtype."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return self.key

    @property
    def parse_example_spec(self) -> dict:
        return {self.key: _var_len(self._parse_dtype)}

    @property
    def _parse_dtype(self) -> Any:
        return self.dtype


class NumericColumn(DenseColumn, collections.namedtuple("NumericColumn",
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


class BucketizedColumn(DenseColumn, CategoricalColumn,
                       collections.namedtuple("BucketizedColumn", ("source_column", "boundaries"))):
    """A numeric column's values bucketed by ``boundaries``."""

    @property
    def name(self) -> str:
        return f"{self.source_column.name}_bucketized"

    @property
    def parse_example_spec(self) -> dict:
        return self.source_column.parse_example_spec

    @property
    def variable_shape(self) -> Any:
        from tapeflow.framework.tensor_shape import TensorShape

        return TensorShape(tuple(self.source_column.shape) + (len(self.boundaries) + 1,))

    @property
    def num_buckets(self) -> int:
        return (len(self.boundaries) + 1) * self.source_column.shape[0]


class HashedCategoricalColumn(_KeyedCategorical, collections.namedtuple(
        "HashedCategoricalColumn", ("key", "hash_bucket_size", "dtype"))):
    """Strings or integers hashed into ``hash_bucket_size`` buckets."""

    @property
    def num_buckets(self) -> int:
        return self.hash_bucket_size


class VocabularyListCategoricalColumn(_KeyedCategorical, collections.namedtuple(
        "VocabularyListCategoricalColumn", ("key", "vocabulary_list", "dtype", "default_value", "num_oov_buckets"))):
    """Strings or integers looked up in an in-memory vocabulary."""

    @property
    def num_buckets(self) -> int:
        return len(self.vocabulary_list) + self.num_oov_buckets


class IdentityCategoricalColumn(_KeyedCategorical, collections.namedtuple(
        "IdentityCategoricalColumn", ("key", "number_buckets", "default_value"))):
    """Integer ids used as they are, in ``[0, num_buckets)``."""

    _parse_dtype = dtypes.int64  # (its ids are parsed as int64, as TF)

    @property
    def num_buckets(self) -> int:
        return self.number_buckets


class IndicatorColumn(DenseColumn, collections.namedtuple("IndicatorColumn", ("categorical_column",))):
    """A categorical column as a multi-hot vector."""

    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_indicator"

    @property
    def parse_example_spec(self) -> dict:
        return self.categorical_column.parse_example_spec

    @property
    def variable_shape(self) -> Any:
        from tapeflow.framework.tensor_shape import TensorShape

        return TensorShape([1, self.categorical_column.num_buckets])


class EmbeddingColumn(DenseColumn, collections.namedtuple("EmbeddingColumn", (
        "categorical_column", "dimension", "combiner", "initializer", "ckpt_to_load_from", "tensor_name_in_ckpt",
        "max_norm", "trainable", "use_safe_embedding_lookup"))):
    """A categorical column embedded in ``dimension`` dense values."""

    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_embedding"

    @property
    def parse_example_spec(self) -> dict:
        return self.categorical_column.parse_example_spec

    @property
    def variable_shape(self) -> Any:
        from tapeflow.framework.tensor_shape import TensorShape

        return TensorShape([self.dimension])


def _leaf_keys(column: Any) -> list:
    out = []
    for key in column.keys:
        out.extend(_leaf_keys(key) if isinstance(key, CrossedColumn) else [key])
    return out


class CrossedColumn(CategoricalColumn, collections.namedtuple("CrossedColumn", ("keys", "hash_bucket_size",
                                                                              "hash_key"))):
    """The hashed cross of string features and categorical columns."""

    @property
    def name(self) -> str:
        return "_X_".join(sorted(k.name if isinstance(k, FeatureColumn) else k for k in _leaf_keys(self)))

    @property
    def parse_example_spec(self) -> dict:
        config: dict = {}
        for key in self.keys:
            config.update(key.parse_example_spec if isinstance(key, FeatureColumn) else {key: _var_len(dtypes.string)})
        return config

    @property
    def num_buckets(self) -> int:
        return self.hash_bucket_size


class WeightedCategoricalColumn(CategoricalColumn, collections.namedtuple(
        "WeightedCategoricalColumn", ("categorical_column", "weight_feature_key", "dtype"))):
    """A categorical column whose ids are weighted by the feature ``weight_feature_key``."""

    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_weighted_by_{self.weight_feature_key}"

    @property
    def parse_example_spec(self) -> dict:
        config = dict(self.categorical_column.parse_example_spec)
        if self.weight_feature_key in config:
            raise ValueError(f"Parse config {config[self.weight_feature_key]} already exists for "
                             f"{self.weight_feature_key}.")
        config[self.weight_feature_key] = _var_len(self.dtype)
        return config

    @property
    def num_buckets(self) -> int:
        return self.categorical_column.num_buckets


class TruncatedNormalV1:
    """TF 1's ``tf.compat.v1.truncated_normal_initializer`` (``init_ops.TruncatedNormal``, ``embedding_column``'s
    default): a ``dtype`` of its own; values beyond two standard deviations are redrawn."""

    def __init__(self, mean: float = 0.0, stddev: float = 1.0, seed: int | None = None, dtype: Any = None) -> None:
        self.mean, self.stddev, self.seed = mean, stddev, seed
        self.dtype = dtypes.as_dtype(dtype or dtypes.float32)
        if not self.dtype.is_floating:
            raise ValueError(f"Expected floating point type, got {self.dtype}.")

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        from tapeflow.ops import random_ops

        return random_ops.truncated_normal(shape, self.mean, self.stddev, dtype=dtypes.as_dtype(dtype or self.dtype),
                                           seed=self.seed)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed, "dtype": self.dtype.name}

    @classmethod
    def from_config(cls, config: dict) -> TruncatedNormalV1:
        return cls(**config)


TruncatedNormalV1.__name__ = TruncatedNormalV1.__qualname__ = "TruncatedNormal"  # TF's class name


def _key_is_string(key: Any) -> None:
    if not isinstance(key, str):
        raise ValueError(f"key must be a string. Got: type {type(key)}. Given key: {key}.")


def _string_or_int(dtype: Any, prefix: str) -> None:
    if dtype != dtypes.string and not dtype.is_integer:
        raise ValueError(f"{prefix} dtype must be string or integer. dtype: {dtype}.")


def bucketized_column(source_column: Any, boundaries: Any) -> BucketizedColumn:
    """As ``tf.feature_column.bucketized_column``: ``source_column`` (a ``numeric_column``) bucketed by the
    sorted ``boundaries`` (a list or tuple)."""
    if not isinstance(source_column, NumericColumn):
        raise ValueError(f"source_column must be a column generated with numeric_column(). Given: {source_column}")
    if len(source_column.shape) > 1:
        raise ValueError(f"source_column must be one-dimensional column. Given: {source_column}")
    if not boundaries:  # a NumPy array raises NumPy's ambiguous-truth ValueError here, as in TF
        raise ValueError("boundaries must not be empty.")
    if not isinstance(boundaries, (list, tuple)):
        raise ValueError("boundaries must be a sorted list.")
    for i in range(len(boundaries) - 1):
        if boundaries[i] >= boundaries[i + 1]:
            raise ValueError("boundaries must be a sorted list.")
    return BucketizedColumn(source_column, tuple(boundaries))


def categorical_column_with_hash_bucket(key: str, hash_bucket_size: int,
                                        dtype: Any = dtypes.string) -> HashedCategoricalColumn:
    """As ``tf.feature_column.categorical_column_with_hash_bucket``."""
    if hash_bucket_size is None:
        raise ValueError(f"hash_bucket_size must be set. key: {key}")
    if hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be at least 1. hash_bucket_size: {hash_bucket_size}, key: {key}")
    _key_is_string(key)
    dtype = dtypes.as_dtype(dtype)
    _string_or_int(dtype, f"column_name: {key}")
    return HashedCategoricalColumn(key, hash_bucket_size, dtype)


def categorical_column_with_vocabulary_list(key: str, vocabulary_list: Any, dtype: Any = None,
                                            default_value: int = -1,
                                            num_oov_buckets: int = 0) -> VocabularyListCategoricalColumn:
    """As ``tf.feature_column.categorical_column_with_vocabulary_list``: the vocabulary's dtype (strings or
    integers) unless ``dtype`` is given; ``num_oov_buckets`` hash buckets or ``default_value`` for the rest."""
    if vocabulary_list is None or len(vocabulary_list) < 1:
        raise ValueError(f"vocabulary_list {vocabulary_list} must be non-empty, column_name: {key}")
    if len(set(vocabulary_list)) != len(vocabulary_list):
        raise ValueError(f"Duplicate keys in vocabulary_list {vocabulary_list}, column_name: {key}")
    vocabulary_dtype = dtypes.as_dtype(np.array(vocabulary_list).dtype)
    if num_oov_buckets:
        if default_value != -1:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    _string_or_int(vocabulary_dtype, f"column_name: {key} vocabulary")
    if dtype is None:
        dtype = vocabulary_dtype
    else:
        dtype = dtypes.as_dtype(dtype)
        if dtype.is_integer != vocabulary_dtype.is_integer:
            raise ValueError(f"dtype {dtype} and vocabulary dtype {vocabulary_dtype} do not match, column_name: "
                             f"{key}")
    _string_or_int(dtype, f"column_name: {key}")
    _key_is_string(key)
    return VocabularyListCategoricalColumn(key, tuple(vocabulary_list), dtype, default_value, num_oov_buckets)


def categorical_column_with_identity(key: str, num_buckets: int,
                                     default_value: int | None = None) -> IdentityCategoricalColumn:
    """As ``tf.feature_column.categorical_column_with_identity``: integer ids in ``[0, num_buckets)``."""
    if num_buckets < 1:
        raise ValueError(f"num_buckets {num_buckets} < 1, column_name {key}")
    if default_value is not None and (default_value < 0 or default_value >= num_buckets):
        raise ValueError(f"default_value {default_value} not in range [0, {num_buckets}), column_name {key}")
    _key_is_string(key)
    return IdentityCategoricalColumn(key, num_buckets, default_value)


def indicator_column(categorical_column: Any) -> IndicatorColumn:
    """As ``tf.feature_column.indicator_column``: a categorical column as multi-hot values."""
    if not isinstance(categorical_column, CategoricalColumn):
        raise ValueError(f"Unsupported input type. Input must be a CategoricalColumn. Given: {categorical_column}")
    return IndicatorColumn(categorical_column)


def embedding_column(categorical_column: Any, dimension: int, combiner: str = "mean", initializer: Any = None,
                     ckpt_to_load_from: str | None = None, tensor_name_in_ckpt: str | None = None,
                     max_norm: float | None = None, trainable: bool = True,
                     use_safe_embedding_lookup: bool = True) -> EmbeddingColumn:
    """As ``tf.feature_column.embedding_column``; the default initializer is TF 1's truncated normal with
    standard deviation ``1/sqrt(dimension)``."""
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or none of them.")
    if initializer is not None and not callable(initializer):
        raise ValueError(f"initializer must be callable if specified. Embedding of column_name: "
                         f"{categorical_column.name}")
    if initializer is None:
        initializer = TruncatedNormalV1(mean=0.0, stddev=1 / math.sqrt(dimension))
    return EmbeddingColumn(categorical_column, dimension, combiner, initializer, ckpt_to_load_from,
                           tensor_name_in_ckpt, max_norm, trainable, use_safe_embedding_lookup)


def crossed_column(keys: Any, hash_bucket_size: int, hash_key: int | None = None) -> CrossedColumn:
    """As ``tf.feature_column.crossed_column``: feature names (strings) and categorical columns (not hashed
    ones) crossed into ``hash_bucket_size`` buckets."""
    if not hash_bucket_size or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be > 1. hash_bucket_size: {hash_bucket_size}")
    if not keys or len(keys) < 2:
        raise ValueError(f"keys must be a list with length > 1. Given: {keys}")
    for key in keys:
        if not isinstance(key, (str, CategoricalColumn)):
            raise ValueError("Unsupported key type. All keys must be either string, or categorical column except "
                             f"HashedCategoricalColumn. Given: {key}")
        if isinstance(key, HashedCategoricalColumn):
            raise ValueError("categorical_column_with_hash_bucket is not supported for crossing. Hashing before "
                             "crossing will increase probability of collision. Instead, use the feature name as a "
                             f"string. Given: {key}")
    return CrossedColumn(tuple(keys), hash_bucket_size, hash_key)


def weighted_categorical_column(categorical_column: Any, weight_feature_key: str,
                                dtype: Any = dtypes.float32) -> WeightedCategoricalColumn:
    """As ``tf.feature_column.weighted_categorical_column``: ids weighted by the feature ``weight_feature_key``."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if dtype is None or not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype {dtype} is not convertible to float.")
    return WeightedCategoricalColumn(categorical_column, weight_feature_key, dtype)


def make_parse_example_spec(feature_columns: Any) -> dict:
    """As ``tf.feature_column.make_parse_example_spec``: the ``tf.io.parse_example`` features of the columns."""
    result: dict = {}
    for column in feature_columns:
        if not isinstance(column, FeatureColumn):
            raise ValueError(f"All feature_columns must be FeatureColumn instances. Given: {column}")
        config = column.parse_example_spec
        for key, value in config.items():
            if key in result and value != result[key]:
                raise ValueError(f"feature_columns contain different parse_spec for key {key}. Given {value} and "
                                 f"{result[key]}")
        result.update(config)
    return result


def __getattr__(name: str) -> Any:
    if name in _NOT_HERE:
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError(f"tf.feature_column.{name} is not implemented in tapeflow "
                                            "(tf.feature_column is deprecated in TF; use tf.keras.utils.FeatureSpace "
                                            "or Keras preprocessing layers)")
    raise AttributeError(f"module 'tapeflow.feature_column' has no attribute '{name}'")
