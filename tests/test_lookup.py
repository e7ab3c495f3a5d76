"""``tf.lookup``'s static tables; every literal was printed by TF 2.21 for the same calls."""

from __future__ import annotations

import pytest

import tapeflow as tf


def _vocab_init():
    return tf.lookup.KeyValueTensorInitializer(
        ["", "a", "b", "c"], tf.range(4, dtype=tf.int64), key_dtype=tf.string, value_dtype=tf.int64
    )


def test_static_vocabulary_table_hashes_oov_keys_as_tf():
    table = tf.lookup.StaticVocabularyTable(_vocab_init(), 1)
    assert table.lookup(tf.constant(["", "a", "d", "zz"])).numpy().tolist() == [0, 1, 4, 4]
    assert int(table.size()) == 5
    table = tf.lookup.StaticVocabularyTable(_vocab_init(), 3)
    assert table.lookup(tf.constant(["d", "e", "f", "a"])).numpy().tolist() == [6, 5, 4, 1]
    ints = tf.lookup.StaticVocabularyTable(
        tf.lookup.KeyValueTensorInitializer(tf.constant([10, 20], tf.int64), tf.constant([0, 1], tf.int64)), 2
    )
    assert ints.lookup(tf.constant([10, 7, 8, 20], tf.int64)).numpy().tolist() == [0, 2, 3, 1]


def test_static_hash_table_lookup_ragged_function_and_dataset():
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer([1, 2], ["x", "y"]), "?")
    assert table.lookup(tf.constant([1, 5, 2])).numpy().tolist() == [b"x", b"?", b"y"]
    assert table[tf.constant([2])].numpy().tolist() == [b"y"]
    assert (table.key_dtype, table.value_dtype, table.default_value.numpy()) == (tf.int32, tf.string, b"?")
    assert table.lookup(tf.ragged.constant([[1], [5, 2]])).to_list() == [[b"x"], [b"?", b"y"]]
    vocab = tf.lookup.StaticVocabularyTable(_vocab_init(), 1)
    assert tf.function(lambda x: vocab.lookup(x))(tf.constant(["b", "q"])).numpy().tolist() == [2, 4]
    ds = tf.data.Dataset.from_tensor_slices(["a", "b", "nope"]).map(vocab.lookup)
    assert list(ds.as_numpy_iterator()) == [1, 2, 4]


def test_text_file_initializer(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("apple\t3\nbanana\t5\ncherry\t7\n")
    table = tf.lookup.StaticHashTable(
        tf.lookup.TextFileInitializer(str(path), tf.string, 0, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER), -1
    )
    assert table.lookup(tf.constant(["banana", "kiwi"])).numpy().tolist() == [1, -1] and int(table.size()) == 3
    table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(str(path), tf.string, 0, tf.int64, 1), -1)
    assert table.lookup(tf.constant(["banana", "kiwi"])).numpy().tolist() == [5, -1]


def test_lookup_errors_as_tf():
    with pytest.raises(
        TypeError,
        match=r"Invalid `key_dtype`, expected one of \(tf.int64, tf.string\), but got "
        r"<dtype: 'int32'>.",
    ):
        tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer([10, 20], [0, 1], value_dtype=tf.int64), 2)
    table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer([1, 2], ["x", "y"]), "?")
    with pytest.raises(
        TypeError, match="Dtype of argument `keys` must be <dtype: 'int32'>, received: <dtype: 'string'>"
    ):
        table.lookup(tf.constant(["a"]))
    with pytest.raises(ValueError, match="`num_oov_buckets` must be > 0; use StaticHashTable."):
        tf.lookup.StaticVocabularyTable(_vocab_init(), 0)
    with pytest.raises(NotImplementedError, match="tf.lookup.experimental.MutableHashTable"):
        tf.lookup.experimental.MutableHashTable  # noqa: B018


def test_the_text_tutorials_vocab_table_layer():
    class MyVocabTable(tf.keras.layers.Layer):  # tensorflow/docs site/en/tutorials/load_data/text.ipynb
        def __init__(self, vocab):
            super().__init__()
            self.keys = [""] + vocab
            self.values = range(len(self.keys))
            self.init = tf.lookup.KeyValueTensorInitializer(
                self.keys, self.values, key_dtype=tf.string, value_dtype=tf.int64
            )
            self.table = tf.lookup.StaticVocabularyTable(self.init, 1)

        def call(self, x):
            return self.table.lookup(x)

    out = MyVocabTable(["a", "b", "c"])(tf.constant([""] + list("abcdefghi")))
    assert out.numpy().tolist() == [0, 1, 2, 3, 4, 4, 4, 4, 4, 4]
