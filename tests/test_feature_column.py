"""``tf.feature_column``'s column descriptions: reprs, names, bucket counts, parse specs and errors (values from
TF 2.21)."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

fc = tf.feature_column
NUM_AGE = "NumericColumn(key='age', shape=(1,), default_value=None, dtype=tf.float32, normalizer_fn=None)"
VOCAB_T = ("VocabularyListCategoricalColumn(key='t', vocabulary_list=('Cat', 'Dog'), dtype=tf.string, "
           "default_value=-1, num_oov_buckets=0)")


def test_categorical_and_dense_columns_describe_themselves_as_tf():
    age = fc.numeric_column("age")
    b = fc.bucketized_column(age, boundaries=[1, 2, 3])
    assert repr(b) == f"BucketizedColumn(source_column={NUM_AGE}, boundaries=(1, 2, 3))"
    assert (b.name, b.num_buckets, str(b.variable_shape)) == ("age_bucketized", 4, "(1, 4)")
    h = fc.categorical_column_with_hash_bucket("breed", hash_bucket_size=10)
    assert repr(h) == "HashedCategoricalColumn(key='breed', hash_bucket_size=10, dtype=tf.string)"
    assert (h.name, h.num_buckets) == ("breed", 10)
    assert repr(h.parse_example_spec) == "{'breed': VarLenFeature(dtype=tf.string)}"
    v = fc.categorical_column_with_vocabulary_list("t", np.array(["Cat", "Dog"], dtype=object))
    assert repr(v) == VOCAB_T and v.num_buckets == 2 and type(v.vocabulary_list[0]) is str
    assert fc.categorical_column_with_vocabulary_list("s", ["a", "b"], num_oov_buckets=2).num_buckets == 4
    assert repr(fc.categorical_column_with_vocabulary_list("n", np.array([1, 2, 3]))) == (
        "VocabularyListCategoricalColumn(key='n', vocabulary_list=(np.int64(1), np.int64(2), np.int64(3)), "
        "dtype=tf.int64, default_value=-1, num_oov_buckets=0)")
    i = fc.categorical_column_with_identity("ids", num_buckets=20)
    assert repr(i) == "IdentityCategoricalColumn(key='ids', number_buckets=20, default_value=None)"
    assert (i.num_buckets, repr(i.parse_example_spec)) == (20, "{'ids': VarLenFeature(dtype=tf.int64)}")
    ind = fc.indicator_column(v)
    assert repr(ind) == f"IndicatorColumn(categorical_column={VOCAB_T})"
    assert (ind.name, str(ind.variable_shape)) == ("t_indicator", "(1, 2)")
    assert ind == fc.indicator_column(v) and hash(ind) == hash(fc.indicator_column(v))
    e = fc.embedding_column(v, dimension=8)
    assert (e.name, str(e.variable_shape), type(e.initializer).__name__) == ("t_embedding", "(8,)", "TruncatedNormal")
    assert e.initializer.get_config() == {"mean": 0.0, "stddev": 0.35355339059327373, "seed": None, "dtype": "float32"}
    assert tf.initializers is tf.keras.initializers  # making the v1 initializer leaves tf.initializers as it was
    c = fc.crossed_column([b, "t"], hash_bucket_size=100)
    assert repr(c) == f"CrossedColumn(keys=(BucketizedColumn(source_column={NUM_AGE}, boundaries=(1, 2, 3)), 't'), " \
        "hash_bucket_size=100, hash_key=None)"
    assert (c.name, c.num_buckets) == ("age_bucketized_X_t", 100)
    w = fc.weighted_categorical_column(i, "weights")
    assert (w.name, w.num_buckets) == ("ids_weighted_by_weights", 20)
    assert repr(w.parse_example_spec) == \
        "{'ids': VarLenFeature(dtype=tf.int64), 'weights': VarLenFeature(dtype=tf.float32)}"
    spec = fc.make_parse_example_spec([age, b, v, ind, c, w])
    assert repr(sorted(spec.items())) == (
        "[('age', FixedLenFeature(shape=(1,), dtype=tf.float32, default_value=None)), "
        "('ids', VarLenFeature(dtype=tf.int64)), ('t', VarLenFeature(dtype=tf.string)), "
        "('weights', VarLenFeature(dtype=tf.float32))]")
    assert tf.compat.v1.feature_column.indicator_column is fc.indicator_column


def test_column_arguments_are_checked_as_tf():
    age, h = fc.numeric_column("age"), fc.categorical_column_with_hash_bucket("breed", 10)
    v, i = fc.categorical_column_with_vocabulary_list("t", ["Cat"]), fc.categorical_column_with_identity("ids", 3)
    cases = [
        (lambda: fc.bucketized_column(h, [1]), "source_column must be a column generated with numeric_column(). "
         "Given: HashedCategoricalColumn(key='breed', hash_bucket_size=10, dtype=tf.string)"),
        (lambda: fc.bucketized_column(age, [2, 1]), "boundaries must be a sorted list."),
        (lambda: fc.bucketized_column(age, []), "boundaries must not be empty."),
        (lambda: fc.categorical_column_with_hash_bucket("x", 0),
         "hash_bucket_size must be at least 1. hash_bucket_size: 0, key: x"),
        (lambda: fc.categorical_column_with_hash_bucket("x", 3, dtype=tf.float32),
         "column_name: x dtype must be string or integer. dtype: <dtype: 'float32'>."),
        (lambda: fc.categorical_column_with_vocabulary_list("x", ["a", "a"]),
         "Duplicate keys in vocabulary_list ['a', 'a'], column_name: x"),
        (lambda: fc.categorical_column_with_vocabulary_list("x", []),
         "vocabulary_list [] must be non-empty, column_name: x"),
        (lambda: fc.categorical_column_with_vocabulary_list("x", ["a"], num_oov_buckets=1, default_value=0),
         "Can't specify both num_oov_buckets and default_value in x."),
        (lambda: fc.categorical_column_with_vocabulary_list("x", [1.5, 2.5]),
         "column_name: x vocabulary dtype must be string or integer. dtype: <dtype: 'float64'>."),
        (lambda: fc.categorical_column_with_vocabulary_list("x", ["a"], dtype=tf.int64),
         "dtype <dtype: 'int64'> and vocabulary dtype <dtype: 'string'> do not match, column_name: x"),
        (lambda: fc.categorical_column_with_identity("x", 0), "num_buckets 0 < 1, column_name x"),
        (lambda: fc.categorical_column_with_identity("x", 3, default_value=3),
         "default_value 3 not in range [0, 3), column_name x"),
        (lambda: fc.categorical_column_with_identity(1, 3),
         "key must be a string. Got: type <class 'int'>. Given key: 1."),
        (lambda: fc.indicator_column(age),
         f"Unsupported input type. Input must be a CategoricalColumn. Given: {NUM_AGE}"),
        (lambda: fc.embedding_column(v, 0), "Invalid dimension 0."),
        (lambda: fc.embedding_column(v, 2, initializer=3),
         "initializer must be callable if specified. Embedding of column_name: t"),
        (lambda: fc.crossed_column(["a"], 10), "keys must be a list with length > 1. Given: ['a']"),
        (lambda: fc.crossed_column(["a", age], 10), "Unsupported key type. All keys must be either string, or "
         f"categorical column except HashedCategoricalColumn. Given: {NUM_AGE}"),
        (lambda: fc.crossed_column(["a", "b"], 0), "hash_bucket_size must be > 1. hash_bucket_size: 0"),
        (lambda: fc.weighted_categorical_column(i, "w", dtype=tf.string), "dtype <dtype: 'string'> is not convertible "
         "to float."),
    ]
    for make, msg in cases:
        with pytest.raises(ValueError) as e:
            make()
        assert str(e.value) == msg
    with pytest.raises(ValueError, match="is not supported for crossing"):
        fc.crossed_column(["a", h], 10)
    with pytest.raises(AttributeError):
        tf.keras.layers.DenseFeatures  # noqa: B018 - Keras 3 has no DenseFeatures (TF 2.21's AttributeError)
