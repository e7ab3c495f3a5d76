"""Keras 3.15's lookup and text layers: StringLookup, IntegerLookup, TextVectorization.

Every literal here was printed by real Keras 3.15.1 / TF 2.21 for the same calls (vocabularies in
Keras's order: count, then ties by the token, both descending). tests/fixtures/keras/text.keras
(with text_io.npz: inputs, Keras's predictions, token ids and TF-IDF rows) was written by real Keras:
a functional model TextVectorization(int, 6) -> Embedding -> pooling, concatenated with a
TextVectorization(tf_idf, ngrams=2) of a second input, -> Dense. Files tapeflow writes were loaded
by real Keras 3.15.1 when these tests were written (same outputs); their layout is pinned here."""

from __future__ import annotations

import os
import re
import string
import zipfile

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras")
TEXTS = ["The cat sat on the mat.", "The dog ate my HOMEWORK!", "a cat, a dog; a <br /> bird?", "Ünïcode café, naïve"]


def test_string_lookup_adapt_orders_by_count_then_token_descending():
    layer = L.StringLookup()
    layer.adapt(["b", "a", "c", "a", "b", "d", "b", "zz", "a"])
    assert layer.get_vocabulary() == ["[UNK]", "b", "a", "zz", "d", "c"]
    assert layer.vocabulary_size() == 6
    out = layer(tf.constant([["a", "q"], ["zz", "b"]]))
    assert out.dtype == tf.int64 and out.numpy().tolist() == [[2, 0], [3, 1]]
    assert layer(["a", "d"]).numpy().tolist() == [2, 4]
    assert layer(tf.constant("a")).numpy() == 2  # a scalar stays a scalar


@pytest.mark.parametrize(
    "mode, expected",
    [
        ("multi_hot", [[0, 1, 0, 0, 1], [1, 0, 0, 1, 0]]),
        ("count", [[0, 2, 0, 0, 1], [1, 0, 0, 2, 0]]),
        (
            "one_hot",
            [[[0, 1, 0, 0, 0], [0, 0, 0, 0, 1], [0, 1, 0, 0, 0]], [[1, 0, 0, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 1, 0]]],
        ),
    ],
)
def test_string_lookup_encoded_outputs_are_int64(mode, expected):
    layer = L.StringLookup(output_mode=mode)
    layer.adapt(tf.constant([["a", "b", "a"], ["c", "a", "d"]]))
    assert layer.get_vocabulary() == ["[UNK]", "a", "d", "c", "b"]
    out = layer(tf.constant([["a", "b", "a"], ["x", "c", "c"]]))
    assert out.dtype == tf.int64 and out.numpy().tolist() == expected


def test_string_lookup_tf_idf_weights_as_keras():
    layer = L.StringLookup(output_mode="tf_idf")
    layer.adapt(tf.constant([["a", "b", "a"], ["c", "a", "d"]]))
    np.testing.assert_allclose(
        layer.idf_weights_const.numpy(),
        [0.6475667953491211, 0.5108256340026855, 0.6931471824645996, 0.6931471824645996, 0.6931471824645996],
        rtol=1e-6,
    )
    out = layer(tf.constant([["a", "b", "a"], ["x", "c", "c"]]))
    assert out.dtype == tf.float32
    np.testing.assert_allclose(
        out.numpy(), [[0, 1.0216513, 0, 0, 0.6931472], [0.6475668, 0, 0, 1.3862944, 0]], rtol=1e-6
    )


def test_string_lookup_mask_several_oov_buckets_and_invert():
    layer = L.StringLookup(num_oov_indices=2, mask_token="", vocabulary=["x", "y"])
    assert layer.get_vocabulary() == ["", "[UNK]", "[UNK]", "x", "y"]
    assert layer(tf.constant(["x", "", "q", "r", "hello", "y"])).numpy().tolist() == [3, 0, 2, 2, 1, 4]
    inv = L.StringLookup(vocabulary=["x", "y"], invert=True)
    assert inv(tf.constant([[0, 1, 2, 5]])).numpy().tolist() == [[b"[UNK]", b"x", b"y", b"[UNK]"]]
    inv = L.StringLookup(vocabulary=["x", "y"], invert=True, mask_token="[M]")
    assert inv.get_vocabulary() == ["[M]", "[UNK]", "x", "y"]
    assert inv(tf.constant([[0, 1, 2, 3, 5]])).numpy().tolist() == [[b"[M]", b"[UNK]", b"x", b"y", b"[UNK]"]]


def test_string_lookup_ragged_and_dataset_adapt():
    layer = L.StringLookup()
    layer.adapt(tf.data.Dataset.from_tensor_slices([["p", "q"], ["q", "r"]]).batch(1))
    assert layer.get_vocabulary() == ["[UNK]", "q", "r", "p"]
    out = layer(tf.ragged.constant([["p"], ["q", "zz", "r"]]))
    assert isinstance(out, tf.RaggedTensor) and out.to_list() == [[3], [1, 0, 2]]


def test_integer_lookup_as_keras():
    layer = L.IntegerLookup()
    layer.adapt(np.array([12, 1138, 42, 42, 1000, 12, 12, 7, 7]))
    assert layer.get_vocabulary() == [-1, 12, 42, 7, 1138, 1000]
    assert layer(np.array([[12, 1138, 42], [42, 1000, 36]])).numpy().tolist() == [[1, 4, 2], [2, 5, 0]]
    layer = L.IntegerLookup(num_oov_indices=3, vocabulary=[12, 36, 1138])  # OOV buckets: floormod
    assert layer.get_vocabulary() == [-1, -1, -1, 12, 36, 1138]
    assert layer(np.array([12, 5, 6, 7, 8, 36])).numpy().tolist() == [3, 2, 0, 1, 2, 4]
    inv = L.IntegerLookup(mask_token=0, vocabulary=[12, 36], invert=True)
    assert inv.get_vocabulary() == [0, -1, 12, 36]
    assert inv(np.array([0, 1, 2, 3, 4])).numpy().tolist() == [0, -1, 12, 36, -1]
    hot = L.IntegerLookup(output_mode="multi_hot", max_tokens=5, pad_to_max_tokens=True, vocabulary=[12, 36])
    assert hot(np.array([[12, 36, 5]])).numpy().tolist() == [[1, 1, 1, 0, 0]]
    config = hot.get_config()
    assert {k: config[k] for k in ("vocabulary", "vocabulary_size", "oov_token", "output_mode")} == {
        "vocabulary": [12, 36],
        "vocabulary_size": 3,
        "oov_token": -1,
        "output_mode": "multi_hot",
    }
    capped = L.IntegerLookup(max_tokens=3)
    capped.adapt([[1, 2, 2, 3, 3, 3, 4, 4, 4, 4]])
    assert capped.get_vocabulary() == [-1, 4, 3]


def test_lookup_errors_as_keras():
    with pytest.raises(ValueError, match="Cannot adapt layer"):
        L.StringLookup(vocabulary=["a"]).adapt(["a"])
    with pytest.raises(ValueError, match="repeated term"):
        L.StringLookup(vocabulary=["a", "a"])
    with pytest.raises(RuntimeError, match="you must set the layer's vocabulary"):
        L.StringLookup(output_mode="multi_hot")(["a"])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r'found OOV values \["z"\], consider'):
        L.StringLookup(vocabulary=["a"], num_oov_indices=0)(tf.constant(["a", "z"]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"found OOV values \[5\], consider"):
        tf.function(L.IntegerLookup(vocabulary=[1], num_oov_indices=0))(tf.constant([1, 5]))


def test_text_vectorization_int_as_keras():
    tv = L.TextVectorization(max_tokens=12, output_sequence_length=5)
    tv.adapt(TEXTS)
    assert tv.get_vocabulary() == ["", "[UNK]", "the", "a", "dog", "cat", "Ünïcode", "sat", "on", "naïve", "my", "mat"]
    assert tv(TEXTS).numpy().tolist() == [[2, 5, 7, 8, 2], [2, 4, 1, 10, 1], [3, 5, 3, 4, 3], [6, 1, 9, 0, 0]]
    out = tv(tf.constant([["the cat"], ["zebra dog dog dog dog dog dog"]]))
    assert out.dtype == tf.int64 and out.numpy().tolist() == [[2, 5, 0, 0, 0], [1, 4, 4, 4, 4]]
    tv.set_vocabulary(["dog", "bird"])
    assert tv.get_vocabulary() == ["", "[UNK]", "dog", "bird"]
    assert tv(["the dog and bird"]).numpy().tolist() == [[1, 2, 1, 3, 0]]


def test_text_vectorization_ngrams_multi_hot_tf_idf_and_characters():
    tv = L.TextVectorization(output_mode="multi_hot", ngrams=2)
    tv.adapt(TEXTS)
    assert tv.get_vocabulary()[:12] == [
        "[UNK]",
        "the",
        "a",
        "dog",
        "cat",
        "Ünïcode café",
        "Ünïcode",
        "the mat",
        "the dog",
        "the cat",
        "sat on",
        "sat",
    ]
    assert tv(TEXTS[:1]).numpy().tolist() == [
        [0, 1, 0, 0, 1, 0, 0, 1, 0, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    ]
    tv = L.TextVectorization(output_mode="tf_idf", max_tokens=8, pad_to_max_tokens=True)
    tv.adapt(TEXTS)
    np.testing.assert_allclose(
        tv(TEXTS[:2]).numpy(),
        [
            [0.9909062, 1.6945957, 0, 0, 0.84729785, 0, 1.0986123, 1.0986123],
            [2.9727185, 0.84729785, 0, 0.84729785, 0, 0, 0, 0],
        ],
        rtol=1e-6,
    )
    tv = L.TextVectorization(output_mode="count", split="character", standardize="lower")
    tv.adapt(TEXTS)
    assert tv.get_vocabulary()[:8] == ["[UNK]", " ", "a", "t", "e", "o", "h", "d"]
    assert tv(TEXTS[1:2]).numpy().tolist() == [
        [0, 4, 1, 2, 3, 3, 2, 1, 0, 1, 0, 2, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    ]


def _custom_standardization(input_data):  # the text-classification tutorial's
    lowercase = tf.strings.lower(input_data)
    stripped_html = tf.strings.regex_replace(lowercase, "<br />", " ")
    return tf.strings.regex_replace(stripped_html, f"[{re.escape(string.punctuation)}]", "")


def test_text_vectorization_in_dataset_map_as_the_tutorial():
    tv = L.TextVectorization(standardize=_custom_standardization, max_tokens=20, output_sequence_length=8)
    ds = tf.data.Dataset.from_tensor_slices(TEXTS).batch(2)
    tv.adapt(ds)
    assert tv.get_vocabulary()[-4:] == ["homework", "café", "bird", "ate"]
    mapped = ds.map(lambda text: tv(tf.expand_dims(text, -1)))
    assert str(mapped.element_spec) == "TensorSpec(shape=(None, 8), dtype=tf.int64, name=None)"
    assert [b.numpy().tolist() for b in mapped] == [
        [[2, 5, 7, 8, 2, 11, 0, 0], [2, 4, 15, 10, 12, 0, 0, 0]],
        [[3, 5, 3, 4, 3, 14, 0, 0], [6, 13, 9, 0, 0, 0, 0, 0]],
    ]


def test_text_vectorization_ragged_split_none_and_callable_split():
    tv = L.TextVectorization(ragged=True, vocabulary=["cat", "dog", "the"])
    assert tv(TEXTS[:2]).to_list() == [[4, 2, 1, 1, 4, 1], [4, 3, 1, 1, 1]]
    tv = L.TextVectorization(
        split=None, vocabulary=["the cat sat on the mat", "x"], output_sequence_length=3, standardize=None
    )
    assert tv(tf.constant(["x", "y"])).numpy().tolist() == [3, 1, 0]
    tv = L.TextVectorization(split=lambda x: tf.strings.split(x, sep=","), standardize=None)
    tv.adapt(["a,b,c", "b,c", "c"])
    assert tv.get_vocabulary() == ["", "[UNK]", "c", "b", "a"]
    assert tv(["c,a,q"]).numpy().tolist() == [[2, 4, 1]]


def test_text_vectorization_trains_in_a_functional_model():
    tf.keras.utils.set_random_seed(0)
    texts = tf.constant(
        [["good movie great"], ["bad movie awful"], ["great fun good"], ["awful bad boring"], ["good good"], ["bad"]]
    )
    labels = np.array([1, 0, 1, 0, 1, 0], np.float32)
    tv = L.TextVectorization(max_tokens=20, output_sequence_length=4)
    tv.adapt(texts)
    inp = tf.keras.Input(shape=(1,), dtype="string")
    x = tv(inp)
    assert x.shape == (None, 4) and x.dtype == "int64"
    out = L.Dense(1, activation="sigmoid")(L.GlobalAveragePooling1D()(L.Embedding(20, 3)(x)))
    model = tf.keras.Model(inp, out)
    model.compile(optimizer="adam", loss="binary_crossentropy")
    history = model.fit(texts, labels, epochs=3, verbose=0, batch_size=2)
    np.testing.assert_allclose(
        history.history["loss"], [0.6886568069458008, 0.6872207522392273, 0.6861098408699036], rtol=1e-6
    )  # Keras's
    np.testing.assert_allclose(
        model.predict(tf.constant([["good fun"], ["awful"]]), verbose=0), [[0.49896482], [0.49730885]], rtol=1e-6
    )


def test_text_vectorization_config_round_trip():
    tv = L.TextVectorization(max_tokens=12, output_sequence_length=5, ngrams=(1, 2))
    tv.adapt(TEXTS)
    config = tv.get_config()
    assert {k: config[k] for k in ("max_tokens", "ngrams", "vocabulary", "vocabulary_size", "split")} == {
        "max_tokens": 12,
        "ngrams": (1, 2),
        "vocabulary": None,
        "vocabulary_size": 12,
        "split": "whitespace",
    }
    again = L.TextVectorization.from_config(config)
    again.set_vocabulary(tv.get_vocabulary())
    assert again(TEXTS).numpy().tolist() == tv(TEXTS).numpy().tolist()


def test_keras_file_with_text_layers_from_real_keras():
    model = tf.keras.models.load_model(os.path.join(FIXTURES, "text.keras"))
    data = np.load(os.path.join(FIXTURES, "text_io.npz"))
    x = tf.constant(data["x"].astype(object).astype(bytes))
    assert model.get_layer("vec").get_vocabulary()[:6] == ["", "[UNK]", "the", "dogs", "dog", "cats"]
    np.testing.assert_array_equal(model.get_layer("vec")(x).numpy(), data["ids"])
    np.testing.assert_allclose(model.get_layer("tfidf")(x[:, 0]).numpy(), data["tfidf"], rtol=1e-6)
    np.testing.assert_allclose(model.predict([x, x[:, 0]], verbose=0), data["y"], rtol=1e-5, atol=1e-6)


def test_keras_file_with_text_layers_round_trip(tmp_path):
    tv = L.TextVectorization(max_tokens=20, output_sequence_length=6)
    tv.adapt(["The cat sat on the mat.", "the dog ate my homework!", "a cat, a dog"])
    tfidf = L.TextVectorization(output_mode="tf_idf")
    tfidf.adapt(["The cat sat on the mat.", "the dog ate my homework!", "a cat, a dog"])
    inp = tf.keras.Input(shape=(1,), dtype="string")
    model = tf.keras.Model(inp, [tv(inp), tfidf(inp)])
    path = str(tmp_path / "tv.keras")
    model.save(path)
    with zipfile.ZipFile(path) as z:  # Keras's layout: the vocabulary as an asset of each lookup layer
        assert sorted(n for n in z.namelist() if n.startswith("assets/")) == [
            "assets/layers/text_vectorization/_lookup_layer/vocabulary.txt",
            "assets/layers/text_vectorization/vocabulary.txt",
            "assets/layers/text_vectorization_1/_lookup_layer/vocabulary.txt",
            "assets/layers/text_vectorization_1/vocabulary.txt",
        ]
        assert (
            z.read("assets/layers/text_vectorization/vocabulary.txt")
            == b"\n[UNK]\nthe\ndog\ncat\na\nsat\non\nmy\nmat\nhomework\nate"
        )
    loaded = tf.keras.models.load_model(path)
    ids, weights = loaded(tf.constant([["the cat ate my dog"], ["zzz mat"]]))
    assert ids.numpy().tolist() == [[2, 4, 11, 8, 3, 0], [1, 9, 0, 0, 0, 0]]
    np.testing.assert_allclose(weights.numpy()[1], [0.84935, 0, 0, 0, 0, 0, 0, 0, 0.91629, 0, 0], atol=1e-5)


def test_strings_ngrams_as_tf():
    rt = tf.ragged.constant([["a", "b", "c", "d"], ["e"], []])
    assert tf.strings.ngrams(rt, 2).to_list() == [[b"a b", b"b c", b"c d"], [], []]
    assert tf.strings.ngrams(rt, (1, 3)).to_list() == [[b"a", b"b", b"c", b"d", b"a b c", b"b c d"], [b"e"], []]
    assert tf.strings.ngrams(rt, 2, pad_values="#").to_list() == [
        [b"# a", b"a b", b"b c", b"c d", b"d #"],
        [b"# e", b"e #"],
        [b"# #"],
    ]
    assert tf.strings.ngrams(rt, 3, preserve_short_sequences=True).to_list() == [[b"a b c", b"b c d"], [b"e"], []]
    assert tf.strings.ngrams(tf.constant([["a", "b", "c"], ["d", "e", "f"]]), (1, 2)).numpy().tolist() == [
        [b"a", b"b", b"c", b"a b", b"b c"],
        [b"d", b"e", b"f", b"d e", b"e f"],
    ]


# -- CategoryEncoding, Hashing, Discretization (literals from real Keras 3.15) ------------------------


def test_category_encoding_as_keras():
    ce = L.CategoryEncoding(num_tokens=4, output_mode="one_hot")
    out = ce([3, 2, 0, 1])
    assert out.dtype == tf.float32 and out.numpy().tolist() == [[0, 0, 0, 1], [0, 0, 1, 0], [1, 0, 0, 0], [0, 1, 0, 0]]
    ce = L.CategoryEncoding(num_tokens=4, output_mode="multi_hot")
    assert ce([[0, 1], [0, 0], [1, 2], [3, 1]]).numpy().tolist() == [
        [1, 1, 0, 0],
        [1, 0, 0, 0],
        [0, 1, 1, 0],
        [0, 1, 0, 1],
    ]
    ce = L.CategoryEncoding(num_tokens=4, output_mode="count")
    np.testing.assert_allclose(
        ce(
            [[0, 1], [0, 0], [1, 2], [3, 1]], count_weights=np.array([[0.1, 0.2], [0.1, 0.1], [0.2, 0.3], [0.4, 0.2]])
        ).numpy(),
        [[0.1, 0.2, 0, 0], [0.2, 0, 0, 0], [0, 0.2, 0.3, 0], [0, 0.2, 0, 0.4]],
        rtol=1e-6,
    )
    assert ce(np.array([1, 1, 3])).numpy().tolist() == [0, 2, 0, 1]
    assert L.CategoryEncoding(num_tokens=3, output_mode="one_hot")(np.array([[1], [2]])).numpy().tolist() == [
        [0, 1, 0],
        [0, 0, 1],
    ]
    inp = tf.keras.Input(shape=(2,), dtype="int64")
    out = L.CategoryEncoding(num_tokens=3)(inp)
    assert out.shape == (None, 3) and out.dtype == "float32"


def test_hashing_as_keras():
    def ids(layer, x):
        out = layer(x)
        assert out.dtype == tf.int64
        return out.numpy().tolist()

    five = [["A"], ["B"], ["C"], ["D"], ["E"]]
    assert ids(L.Hashing(num_bins=3), five) == [[1], [0], [1], [1], [2]]
    assert ids(L.Hashing(num_bins=3, mask_value=""), [["A"], ["B"], [""], ["C"], ["D"]]) == [[1], [1], [0], [2], [2]]
    assert ids(L.Hashing(num_bins=3, salt=133), five) == [[0], [0], [2], [1], [0]]
    assert ids(L.Hashing(num_bins=3, salt=[133, 137]), five) == [[1], [2], [1], [0], [2]]
    assert ids(L.Hashing(num_bins=5), np.array([[1, 2], [3, 400]])) == [[4, 4], [1, 3]]
    assert ids(L.Hashing(num_bins=5), np.array([1.5, 2.7])) == [4, 4]
    assert L.Hashing(num_bins=4, output_mode="multi_hot")(tf.constant([["A", "B"], ["C", "A"]])).numpy().tolist() == [
        [1, 0, 0, 0],
        [1, 0, 0, 1],
    ]
    assert L.Hashing(num_bins=4, output_mode="one_hot")(tf.constant([["A"], ["C"]])).numpy().tolist() == [
        [1, 0, 0, 0],
        [0, 0, 0, 1],
    ]
    assert L.Hashing(num_bins=3, output_mode="one_hot")(tf.keras.Input(shape=(1,), dtype="string")).shape == (None, 3)


def test_discretization_as_keras():
    x = np.array([[-1.5, 1.0, 3.4, 0.5], [0.0, 3.0, 1.3, 0.0]])
    d = L.Discretization(bin_boundaries=[0.0, 1.0, 2.0])
    out = d(x)
    assert out.dtype == tf.int32 and out.numpy().tolist() == [[0, 2, 3, 1], [1, 3, 2, 1]]
    d = L.Discretization(num_bins=4, epsilon=0.01)
    d.adapt(x)
    assert d.bin_boundaries == [0.0, 0.5, 1.2999999523162842]
    assert d(x).numpy().tolist() == [[0, 2, 3, 2], [1, 3, 3, 1]]
    data = np.random.RandomState(0).randn(1000, 1).astype("float32")
    d = L.Discretization(num_bins=5)
    d.adapt(tf.data.Dataset.from_tensor_slices(data).batch(64))
    np.testing.assert_allclose(d.bin_boundaries, [-0.841619, -0.294818, 0.242961, 0.804838], atol=1e-6)
    d = L.Discretization(num_bins=5)
    d.adapt(data)
    np.testing.assert_allclose(d.bin_boundaries, [-0.864046, -0.311977, 0.196557, 0.786328], atol=1e-6)
    d = L.Discretization(num_bins=3, output_mode="multi_hot")
    d.adapt(data)
    assert d(np.array([[-2.0, 0.0]], "float32")).numpy().tolist() == [[1, 1, 0]]
    assert d.get_config()["bin_boundaries"] == [-0.46301084756851196, 0.3639637529850006]
    assert L.Discretization(bin_boundaries=[0.0, 1.0], output_mode="count")(
        np.array([[-2.0, 0.5, 0.7]], "float32")
    ).numpy().tolist() == [[1, 2, 0]]


def test_object_arrays_of_python_str_become_tf_strings():
    column = np.array(["Cat", "Dog"], dtype=object)  # what a pandas column's to_numpy() gives
    assert tf.constant(column).numpy().tolist() == [b"Cat", b"Dog"]
    ds = tf.data.Dataset.from_tensor_slices({"Type": column[:, None]}).batch(2)
    assert next(iter(ds))["Type"].numpy().tolist() == [[b"Cat"], [b"Dog"]]
    lookup = L.StringLookup()
    lookup.adapt(ds.map(lambda x: x["Type"]))
    assert lookup(column).numpy().tolist() == [2, 1]


def test_text_dataset_from_directory_gives_keras_batches(tmp_path, capsys):
    tf.keras.utils.set_random_seed(7)  # tf.data's shuffle order depends on the global seed too, as TF's
    for label in ("neg", "pos"):
        (tmp_path / label).mkdir()
        for i in range(7):
            (tmp_path / label / f"{i}.txt").write_text(f"{label} review {i}")
    (tmp_path / "pos" / "skip.md").write_text("not text")
    train, val = tf.keras.utils.text_dataset_from_directory(
        str(tmp_path), batch_size=4, validation_split=0.3, subset="both", seed=3
    )
    assert capsys.readouterr().out == (
        "Found 14 files belonging to 2 classes.\nUsing 10 files for training.\nUsing 4 files for validation.\n"
    )
    assert train.class_names == ["neg", "pos"]
    assert [(x.numpy().tolist(), y.numpy().tolist()) for x, y in train] == [  # Keras's order (seed 3)
        ([b"pos review 5", b"neg review 0", b"neg review 2", b"pos review 4"], [1, 0, 0, 1]),
        ([b"neg review 5", b"neg review 1", b"pos review 0", b"neg review 6"], [0, 0, 1, 0]),
        ([b"pos review 6", b"neg review 4"], [1, 0]),
    ]
    assert [(x.numpy().tolist(), y.numpy().tolist()) for x, y in val] == [
        ([b"neg review 3", b"pos review 2", b"pos review 1", b"pos review 3"], [0, 1, 1, 1])
    ]
    ds = tf.keras.utils.text_dataset_from_directory(
        str(tmp_path), batch_size=5, label_mode="binary", shuffle=False, max_length=5
    )
    assert str(ds.element_spec) == (
        "(TensorSpec(shape=(None,), dtype=tf.string, name=None), "
        "TensorSpec(shape=(None, 1), dtype=tf.float32, name=None))"
    )
    x, y = next(iter(ds))
    assert x.numpy().tolist() == [b"neg r"] * 5 and y.numpy().tolist() == [[0.0]] * 5
    ds = tf.keras.utils.text_dataset_from_directory(str(tmp_path), batch_size=None, label_mode="categorical", seed=1)
    assert [(x.numpy(), y.numpy().tolist()) for x, y in ds.take(2)] == [
        (b"pos review 1", [0.0, 1.0]),
        (b"neg review 2", [1.0, 0.0]),
    ]
    with pytest.raises(ValueError, match="you must provide a `seed` argument"):
        tf.keras.utils.text_dataset_from_directory(str(tmp_path), validation_split=0.2, subset="training")


def test_multi_hot_text_vectorization_feeds_dense_in_fit():
    tf.keras.utils.set_random_seed(0)
    texts = tf.constant(["def import self", "public static void", "def print list", "class string jvm"])
    labels = np.array([0, 1, 0, 1])
    tv = L.TextVectorization(output_mode="binary")
    tv.adapt(texts)
    model = tf.keras.Sequential([tv, L.Dense(2)])  # Dense takes the int64 counts (Keras's matmul promotes them)
    model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer="adam")
    model.fit(texts, labels, epochs=1, verbose=0)
    assert model.predict(tf.constant(["def list"]), verbose=0).shape == (1, 2)
    assert model.layers[0].output_shape == (None, 12)  # [UNK] and 11 tokens


def test_vocabulary_files_idf_weights_and_argument_errors(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("the\ncat\nsat\n")
    tv = L.TextVectorization(vocabulary=str(path))
    assert tv.get_vocabulary() == ["", "[UNK]", "the", "cat", "sat"] and tv.get_config()["vocabulary"] is None
    assert tv(["the cat sat on mat"]).numpy().tolist() == [[2, 3, 4, 1, 1]]
    tv = L.TextVectorization(output_mode="tf_idf", vocabulary=["a", "b"], idf_weights=[0.5, 0.25])
    assert tv(["a b b c"]).numpy().tolist() == [[0.375, 0.5, 0.5]]  # the OOV slot weighs the mean idf
    tv = L.TextVectorization(output_mode="tf_idf", vocabulary=["[UNK]", "a", "b"], idf_weights=[0.9, 0.5, 0.25])
    np.testing.assert_allclose(tv(["a b b c"]).numpy(), [[0.9, 0.5, 0.5]])
    with pytest.raises(
        ValueError,
        match=r"Unknown value for `standardize` argument of TextVectorization. Allowed "
        r"values are: \('lower_and_strip_punctuation', 'lower', 'strip_punctuation'\)"
        r". Received: standardize=upper",
    ):
        L.TextVectorization(standardize="upper")
    with pytest.raises(ValueError, match="the input rank must be 1 or the last shape dimension must be 1"):
        L.TextVectorization()(tf.constant([["a", "b"]]))
    with pytest.raises(ValueError, match="larger than the maximum vocab size. Received vocabulary size is 3; "):
        L.StringLookup(vocabulary=["a", "b"], max_tokens=2)
    tv = L.TextVectorization(output_mode="count")
    tv.adapt(["a b", "c"])
    with pytest.raises(RuntimeError, match="Old vocab size is 4, new vocab size is 6"):
        tv.adapt(["a b c d e"])
    lookup = L.StringLookup()
    lookup.adapt([["a", "b"], ["b", "[UNK]"]])  # the OOV token is never learned
    assert lookup.get_vocabulary() == ["[UNK]", "b", "a"]


def test_layers_as_dataset_map_functions():
    tv = L.TextVectorization(output_sequence_length=4)
    tv.adapt(["a b c", "b c", "c"])
    batched = tf.data.Dataset.from_tensor_slices(["a b", "c a x z q"]).batch(2)
    unbatched = tf.data.Dataset.from_tensor_slices(["a b", "c a x z q"])
    assert [b.numpy().tolist() for b in batched.map(tv)] == [[[4, 3, 0, 0], [2, 4, 1, 1]]]
    mapped = unbatched.map(tv)  # one string: its tokens padded to 4 (unknown length while traced)
    assert str(mapped.element_spec) == "TensorSpec(shape=(4,), dtype=tf.int64, name=None)"
    assert [b.numpy().tolist() for b in mapped] == [[4, 3, 0, 0], [2, 4, 1, 1]]
    mapped = batched.map(L.TextVectorization(ragged=True, vocabulary=["a", "b"]))
    assert str(mapped.element_spec) == "RaggedTensorSpec(TensorShape([None, None]), tf.int64, 1, tf.int64)"
    assert [b.to_list() for b in mapped] == [[[2, 3], [1, 2, 1, 1, 1]]]
    mapped = batched.map(L.TextVectorization(output_mode="multi_hot", vocabulary=["a", "b"]))
    assert str(mapped.element_spec) == "TensorSpec(shape=(None, 3), dtype=tf.int64, name=None)"
    assert [b.numpy().tolist() for b in mapped] == [[[0, 1, 1], [1, 1, 0]]]


def test_predict_on_a_python_list_of_strings_is_keras_value_error():
    tv = L.TextVectorization(output_mode="binary", vocabulary=["sort", "list"])
    model = tf.keras.Sequential([tv, L.Dense(4)])
    with pytest.raises(ValueError, match=r"Unrecognized data type: x=\['How do you sort a list\?'\] \(of type "):
        model.predict(["How do you sort a list?"])  # the text tutorial's cell: Keras 3 wants an array or a tensor
    assert model.predict(tf.constant(["How do you sort a list?"]), verbose=0).shape == (1, 4)


def test_saved_configs_are_keras_configs(tmp_path):
    import json

    tv = L.TextVectorization(max_tokens=20, output_sequence_length=6, name="tv")
    tv.adapt(["a b c", "b c"])
    inp = tf.keras.Input(shape=(1,), dtype="string", name="a")
    path = str(tmp_path / "m.keras")
    tf.keras.Model(inp, [tv(inp), L.StringLookup(vocabulary=["x"], name="sl")(inp)]).save(path)
    layers = json.loads(zipfile.ZipFile(path).read("config.json"))["config"]["layers"]
    by_name = {layer["name"]: layer for layer in layers}
    assert by_name["tv"]["build_config"] == {"input_shape": [None, 1]}  # Keras 3.15's
    assert by_name["sl"]["build_config"] == {}  # IndexLookup.get_build_config
    assert by_name["sl"]["config"]["dtype"] == {"module": "keras", "class_name": "DTypePolicy",
                                                "config": {"name": "float32"}, "registered_name": None}
    assert by_name["tv"]["config"]["vocabulary_size"] == 5 and by_name["sl"]["config"]["vocabulary"] == ["x"]
