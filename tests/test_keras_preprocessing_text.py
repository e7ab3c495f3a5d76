"""tf.keras.preprocessing.text (Tokenizer and the Keras 1 text helpers) and
tf.keras.preprocessing.sequence.TimeseriesGenerator, pinned against TF 2.21 / Keras 3.15."""

import collections

import numpy as np
import pytest

import tapeflow as tf

T = tf.keras.preprocessing.text
TEXTS = ["The cat sat on the mat.", "The dog ate my homework!", "cat and dog", "A cat; a dog."]


def test_text_to_word_sequence():
    assert T.text_to_word_sequence("Hello, World! It's a   test.\tTabs") == ["hello", "world", "it's", "a", "test",
                                                                            "tabs"]


def test_tokenizer_vocabulary_sequences_and_texts_as_keras():
    tok = T.Tokenizer(num_words=5, oov_token="<OOV>")
    tok.fit_on_texts(TEXTS)
    assert tok.word_index == {"<OOV>": 1, "the": 2, "cat": 3, "dog": 4, "a": 5, "sat": 6, "on": 7, "mat": 8,
                              "ate": 9, "my": 10, "homework": 11, "and": 12}
    assert list(tok.word_index) == ["<OOV>", "the", "cat", "dog", "a", "sat", "on", "mat", "ate", "my", "homework",
                                    "and"]  # ties keep their first-seen order
    assert tok.word_counts == collections.OrderedDict([("the", 3), ("cat", 3), ("sat", 1), ("on", 1), ("mat", 1),
                                                       ("dog", 3), ("ate", 1), ("my", 1), ("homework", 1),
                                                       ("and", 1), ("a", 2)])
    assert isinstance(tok.word_counts, collections.OrderedDict)
    assert tok.document_count == 4
    assert dict(sorted(tok.index_docs.items())) == {2: 2, 3: 3, 4: 3, 5: 1, 6: 1, 7: 1, 8: 1, 9: 1, 10: 1, 11: 1,
                                                    12: 1}
    assert tok.texts_to_sequences(["the cat ate a fish", "unknown words here"]) == [[2, 3, 1, 1, 1], [1, 1, 1]]
    assert tok.sequences_to_texts([[1, 2, 3, 4, 7], [9]]) == ["<OOV> the cat dog <OOV>", "<OOV>"]


def test_tokenizer_matrices_as_keras():
    tok = T.Tokenizer(num_words=5, oov_token="<OOV>")
    tok.fit_on_texts(TEXTS)
    assert tok.texts_to_matrix(["the cat ate a fish"], mode="count").tolist() == [[0.0, 3.0, 1.0, 1.0, 0.0]]
    want = {"binary": [[0.0, 1.0, 1.0, 1.0, 0.0], [0.0, 1.0, 1.0, 0.0, 1.0]],
            "freq": [[0.0, 0.5, 0.333333, 0.166667, 0.0], [0.0, 0.6, 0.2, 0.0, 0.2]],
            "tfidf": [[0.0, 3.377586, 1.4346, 0.693147, 0.0], [0.0, 3.377586, 0.847298, 0.0, 0.693147]]}
    for mode, m in want.items():
        assert np.round(tok.texts_to_matrix(TEXTS[:2], mode=mode), 6).tolist() == m
    with pytest.raises(ValueError, match="Unknown vectorization mode"):
        tok.texts_to_matrix(["x"], mode="bad")
    with pytest.raises(ValueError, match=r"Specify a dimension \(`num_words` argument\), or fit on some text"):
        T.Tokenizer().sequences_to_matrix([[1]])


def test_tokenizer_json_round_trip_char_level_and_token_lists():
    tok = T.Tokenizer(num_words=5, oov_token="<OOV>")
    tok.fit_on_texts(TEXTS)
    assert sorted(tok.get_config()) == ["char_level", "document_count", "filters", "index_docs", "index_word",
                                        "lower", "num_words", "oov_token", "split", "word_counts", "word_docs",
                                        "word_index"]
    t2 = T.tokenizer_from_json(tok.to_json())
    assert t2.word_index == tok.word_index and t2.texts_to_sequences(["the dog"]) == [[2, 4]] and t2.num_words == 5
    assert type(t2.word_counts) is dict and t2.index_word[3] == "cat"
    tc = T.Tokenizer(char_level=True)
    tc.fit_on_texts(["abca", "bcd"])
    assert tc.word_index == {"a": 1, "b": 2, "c": 3, "d": 4} and tc.texts_to_sequences(["dab"]) == [[4, 1, 2]]
    tl = T.Tokenizer()
    tl.fit_on_texts([["Hello", "World"], ["hello"]])
    assert tl.word_index == {"hello": 1, "world": 2}
    with pytest.raises(TypeError, match=r"Unrecognized keyword arguments: \{'foo': 1\}"):
        T.Tokenizer(foo=1)
    with pytest.warns(UserWarning, match="renamed `num_words`"):
        assert T.Tokenizer(nb_words=3).num_words == 3


def test_hashing_trick_and_one_hot():
    assert T.hashing_trick("a b c a", 10, hash_function="md5") == [2, 5, 8, 2]
    idx = T.one_hot("a b c", 7)
    assert len(idx) == 3 and all(1 <= v < 7 for v in idx)


def test_timeseries_generator_as_keras():
    G = tf.keras.preprocessing.sequence.TimeseriesGenerator
    data, targets = np.arange(50).reshape(25, 2).astype("float32"), np.arange(25)
    g = G(data, targets, length=4, sampling_rate=2, stride=3, batch_size=3, start_index=1, end_index=20)
    assert len(g) == 2 and isinstance(g, tf.keras.utils.PyDataset)
    x, y = g[0]
    assert x.tolist() == [[[2.0, 3.0], [6.0, 7.0]], [[8.0, 9.0], [12.0, 13.0]], [[14.0, 15.0], [18.0, 19.0]]]
    assert y.tolist() == [5, 8, 11] and g[1][1].tolist() == [14, 17, 20]
    g2 = G(data, targets, length=5, reverse=True, batch_size=4)
    assert len(g2) == 5 and g2[1][1].tolist() == [9, 10, 11, 12]
    assert g2[1][0][0].tolist() == [[16.0, 17.0], [14.0, 15.0], [12.0, 13.0], [10.0, 11.0], [8.0, 9.0]]
    m = tf.keras.Sequential([tf.keras.Input((5, 2)), tf.keras.layers.Flatten(),
                             tf.keras.layers.Dense(1, kernel_initializer="ones")])
    m.compile("sgd", "mse")
    assert m.evaluate(g2, verbose=0) == pytest.approx(60623.5)
    with pytest.raises(ValueError, match="Data and targets have to be of same length. Data length is 25 while "
                                         "target length is 3"):
        G(data, targets[:3], length=2)
    with pytest.raises(ValueError, match=r"`start_index\+length=30 > end_index=24` is disallowed"):
        G(data, targets, length=30)
    with pytest.raises(AttributeError):  # Keras 3.15's get_config calls a PyDataset.get_config that is not there
        g.get_config()
