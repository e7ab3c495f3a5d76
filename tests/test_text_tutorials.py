"""What tensorflow/text's tutorials (word2vec, text_classification_rnn, warmstart_embedding_matrix) need beyond
the ops' own tests: the candidate samplers, the legacy skip-gram helpers and Keras 3's input checks. Values,
messages and exception types pinned from TF 2.21 / Keras 3.15."""

from __future__ import annotations

import random

import numpy as np
import pytest

import tapeflow as tf


def _lists(r):
    return [x.numpy().tolist() for x in r]


def test_log_uniform_candidate_sampler_is_tfs_stream():
    tf.random.set_seed(0)
    # one kernel per op and attrs (TF's eager kernel cache): each call reads on in its Philox stream
    a = _lists(tf.random.log_uniform_candidate_sampler([[3]], 1, 4, True, 8, seed=42))
    b = _lists(tf.random.log_uniform_candidate_sampler([[3]], 1, 4, True, 8, seed=42))
    assert a == [[2, 0, 7, 3], [[0.40622803568840027]],
                 [0.5237190127372742, 1.2618595361709595, 0.21442148089408875, 0.40622803568840027]]
    assert b[0] == [0, 1, 2, 4]
    s, t, e = tf.random.log_uniform_candidate_sampler([[3], [5]], 1, 6, False, 100, seed=42)
    assert s.dtype == tf.int64 and t.dtype == tf.float32 and t.shape == (2, 1) and e.shape == (6,)
    assert s.numpy().tolist() == [13, 1, 98, 24, 53, 44]  # not unique: expected counts are p * num_sampled
    assert np.allclose(t.numpy().ravel(), [0.2901031970977783, 0.20040735602378845], rtol=0, atol=0)
    tf.random.set_seed(1)
    r = _lists(tf.random.log_uniform_candidate_sampler([[1], [2]], 1, 5, True, 10, seed=42))
    assert r == [[5, 1, 4, 7, 2], [[0.6709079742431641], [0.5355095863342285]],
                 [0.32878872752189636, 0.6709079742431641, 0.37779146432876587, 0.260809987783432, 0.5355095863342285]]
    r = _lists(tf.random.uniform_candidate_sampler([[1]], 1, 4, False, 7, seed=3))
    assert r == [[1, 6, 4, 5], [[0.5714285969734192]], [0.5714285969734192] * 4]

    @tf.function
    def f():
        return tf.random.log_uniform_candidate_sampler([[3]], 1, 3, True, 50, seed=1)[0]

    tf.random.set_seed(5)
    assert f().numpy().tolist() == [0, 3, 2] and f().numpy().tolist() == [9, 1, 0]


def test_candidate_sampler_errors():
    err = tf.errors.InvalidArgumentError
    with pytest.raises(err, match="true_classes must have num_true columns, expected: 1 was: 2"):
        tf.random.log_uniform_candidate_sampler([[3]], 2, 4, True, 8, seed=42)
    with pytest.raises(err, match="Sampler's range is too small"):
        tf.random.log_uniform_candidate_sampler([[3]], 1, 9, True, 8, seed=42)
    with pytest.raises(err, match="true_classes must be a matrix"):
        tf.random.log_uniform_candidate_sampler([3], 1, 4, True, 8, seed=42)
    with pytest.raises(err, match="expected to be a int64 tensor but is a int32 tensor"):
        tf.random.log_uniform_candidate_sampler(tf.constant([[3]]), 1, 4, True, 8, seed=42)
    with pytest.raises(err, match="'num_sampled' of 0 must be at least minimum 1"):
        tf.random.log_uniform_candidate_sampler([[3]], 1, 0, True, 8, seed=42)


def test_skipgrams_and_sampling_table_as_keras():
    seq = tf.keras.preprocessing.sequence
    random.seed(3)
    assert seq.skipgrams([1, 2, 0, 3, 4], vocabulary_size=6, window_size=2, negative_samples=0) == (
        [[4, 3], [3, 2], [1, 2], [2, 3], [3, 4], [2, 1]], [1] * 6)
    random.seed(3)
    couples, labels = seq.skipgrams([1, 2, 3, 4], vocabulary_size=6, window_size=1, categorical=True)
    assert couples == [[4, 1], [2, 3], [1, 5], [2, 1], [2, 1], [1, 2], [3, 4], [4, 3], [3, 5], [3, 2], [3, 4],
                       [2, 3]]
    assert labels[:5] == [[1, 0], [1, 0], [1, 0], [1, 0], [0, 1]]
    random.seed(4)
    assert seq.skipgrams([1, 2, 3, 4, 5], 6, window_size=1, sampling_table=seq.make_sampling_table(6),
                         shuffle=False) == ([], [])
    assert seq.skipgrams([1, 2, 3], vocabulary_size=4, window_size=1, negative_samples=0.5, seed=7) == (
        [[1, 1], [1, 2], [2, 1], [3, 2], [2, 1], [2, 3]], [0, 1, 0, 1, 1, 1])
    table = seq.make_sampling_table(4)
    assert table.dtype == np.float64 and table.tolist() == [
        0.0031522478751942504, 0.0031522478751942504, 0.0054759726939176976, 0.007415564097374219]
    assert issubclass(seq.TimeseriesGenerator, tf.keras.utils.PyDataset)


def test_keras_string_inputs_as_keras3():
    assert tf.keras.layers.Embedding(10, 4, mask_zero=True).supports_masking
    assert not tf.keras.layers.Embedding(10, 4).supports_masking
    enc = tf.keras.layers.TextVectorization(max_tokens=10, output_sequence_length=3)
    enc.adapt(["a b c", "b c"])
    model = tf.keras.Sequential([enc, tf.keras.layers.Embedding(10, 4, mask_zero=True),
                                 tf.keras.layers.GlobalAveragePooling1D()])
    # NumPy str/bytes arrays are no Keras dtype (object arrays of strings are)
    with pytest.raises(ValueError, match="Invalid dtype: str96"):
        model.predict(np.array(["a b"]), verbose=0)
    with pytest.raises(ValueError, match="Invalid dtype: bytes24"):
        model.predict(np.array([b"a b"]), verbose=0)
    assert model.predict(np.array(["a b"], dtype=object), verbose=0).shape == (1, 4)
    # a Sequential nested first in a Sequential takes a float32 Input: strings fail TF's Cast
    outer = tf.keras.Sequential([tf.keras.Sequential([enc, tf.keras.layers.Embedding(10, 4)]),
                                 tf.keras.layers.GlobalAveragePooling1D()])
    with pytest.raises(tf.errors.UnimplementedError, match="Cast string to float is not supported"):
        outer(tf.constant(["a b"]))
    with pytest.raises(tf.errors.UnimplementedError, match="Cast string to int64 is not supported"):
        tf.keras.Sequential([tf.keras.layers.Hashing(4)])(tf.constant([["a"]]))
    assert tf.keras.Sequential([tf.keras.layers.StringLookup(vocabulary=["a"])])(tf.constant([["a"]])).dtype == \
        tf.int64


def test_rnn_gradient_in_tf_function_keeps_no_copy_of_its_output_buffer_per_step():
    # text_generation's custom train_step: GRU(return_sequences) under tf.function + GradientTape. The While op
    # used to keep the (time, batch, units) output buffer at every step: 100 steps here would be 41 MB.
    import tracemalloc

    gru = tf.keras.layers.GRU(64, return_sequences=True)
    x = tf.random.normal((16, 100, 8))

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(gru(x) ** 2)
        return tape.gradient(loss, gru.trainable_variables)

    eager = [g.numpy() for g in step.python_function(x)]
    step(x)  # traced
    tracemalloc.start()
    try:
        grads = step(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20e6, peak  # (5 MB now)
    for a, b in zip(eager, grads):
        np.testing.assert_allclose(a, b.numpy(), rtol=1e-4, atol=1e-4)  # (float32 sums over 100 steps)


def test_ragged_to_tensor_inside_tf_function():
    # text_generation's OneStep.generate_one_step: unicode_split -> StringLookup -> to_tensor in a tf.function
    lookup = tf.keras.layers.StringLookup(vocabulary=list("abcde"), mask_token=None)

    @tf.function
    def ids(s):
        return lookup(tf.strings.unicode_split(s, "UTF-8")).to_tensor()

    out = ids(tf.constant(["abc", "d", "eeee"]))
    assert out.dtype == tf.int64 and out.numpy().tolist() == [[1, 2, 3, 0], [4, 0, 0, 0], [5, 5, 5, 5]]
    assert ids(tf.constant(["ab"])).numpy().tolist() == [[1, 2]]

    @tf.function
    def chars(s):
        return tf.strings.unicode_split(s, "UTF-8").to_tensor(default_value="-")

    assert chars(tf.constant(["ab", "c"])).numpy().tolist() == [[b"a", b"b"], [b"c", b"-"]]


def test_model_inputs_by_keyword_and_custom_step_epoch_logs():
    class M(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d = tf.keras.layers.Dense(2)

        def call(self, inputs, states=None, return_state=False):
            y = self.d(inputs)
            return (y, states) if return_state else y

    y, s = M()(inputs=tf.ones((1, 3)), states=tf.zeros((1,)), return_state=True)  # as Keras 3
    assert y.shape == (1, 2) and s.shape == (1,)

    class C(tf.keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                loss = self.loss(y, self(x, training=True))
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            return {"loss": loss}

        def test_step(self, data):
            x, y = data
            return {"loss": self.loss(y, self(x)), "other": 1.0}

    inp = tf.keras.Input((3,))
    c = C(inp, tf.keras.layers.Dense(1)(inp))
    c.compile(optimizer="sgd", loss=tf.keras.losses.MeanSquaredError())
    # Keras 3: the epoch's logs are the model's metrics when a custom step's keys are theirs (the loss tracker,
    # never updated here: 0), else the step's
    assert c.fit(np.ones((8, 3)), np.ones((8, 1)), epochs=2, verbose=0).history == {"loss": [0.0, 0.0]}
    out = c.evaluate(np.ones((8, 3)), np.ones((8, 1)), verbose=0, return_dict=True)
    assert set(out) == {"loss", "other"} and out["loss"] > 0 and out["other"] == 1.0


def test_a_loaded_functions_random_ops_start_their_streams_afresh(tmp_path):
    # as TF's kernels created by loading (text_generation's reloaded OneStep repeats the first generation)
    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([1, 4], tf.float32)])
        def f(self, logits):
            return tf.random.categorical(logits, 3)[0], tf.random.uniform([2])

    m = M()
    tf.random.set_seed(3)
    x = tf.zeros([1, 4])
    first = [m.f(x) for _ in range(3)]
    tf.saved_model.save(m, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    again = [loaded.f(x) for _ in range(3)]
    assert [v[0].numpy().tolist() for v in first] == [v[0].numpy().tolist() for v in again] == [
        [0, 0, 2], [2, 0, 3], [2, 2, 1]]
    assert again[0][1].numpy().tolist() == [0.7780691385269165, 0.5052884817123413]


def test_nmt_tutorial_basics():
    # RE2's rewrite: \0 is the whole match (Python's template would give a NUL), unmatched groups are empty, an
    # invalid escape ends the rewrite
    s = ["xa?b", "q"]
    out = {rw: tf.strings.regex_replace(s, r"(a)|(\?)", rw).numpy().tolist()
           for rw in (r" \0 ", r"\2", r"\q", r"[\1]", "a\\\\b")}
    assert out == {r" \0 ": [b"x a  ? b", b"q"], r"\2": [b"x?b", b"q"], r"\q": [b"xb", b"q"],
                   r"[\1]": [b"x[a][]b", b"q"], "a\\\\b": [b"xa\\ba\\bb", b"q"]}
    # NumPy str arrays become TF strings (UTF-8 bytes) in a dataset
    ds = tf.data.Dataset.from_tensor_slices((np.array(["Él", "b"]), np.array([1, 2])))
    first = next(iter(ds))[0]
    assert first.dtype == tf.string and first.numpy() == b"\xc3\x89l"

    @tf.function
    def fill(x):
        n = tf.shape(x)[0]
        return tf.zeros([n, 1], dtype=tf.bool), tf.ones([n], dtype=tf.bool)

    z, o = fill(tf.constant([1.0, 2.0]))
    assert z.numpy().tolist() == [[False], [False]] and o.numpy().tolist() == [True, True]


class _Stepper(tf.Module):
    def step(self, x, temperature=0.0):
        if temperature == 0.0:  # a tensor in the graph: AutoGraph must convert this method too
            y = x + 1.0
        else:
            y = x - 1.0
        return y


class _Runner(tf.Module):
    def __init__(self):
        super().__init__()
        self.inner = _Stepper()

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def run(self, x):
        return self.inner.step(x, tf.constant(0.0))  # no control flow here: still converted, as TF's AutoGraph


def test_autograph_converts_methods_called_through_self():
    # nmt_with_attention's Export.translate -> Translator.translate -> Decoder.get_next_token(temperature=tensor)
    assert _Runner().run(tf.constant([1.0, 2.0])).numpy().tolist() == [2.0, 3.0]


def test_multi_head_attention_deletes_the_masks_of_its_inputs():
    # Keras 3.15: MHA.call sets its query/value/key masks to None; a custom layer built by its first call (which
    # runs call once more) then attends unmasked (nmt_with_attention's CrossAttention: rows sum to 1)
    emb = tf.keras.layers.Embedding(10, 4, mask_zero=True)

    class Cross(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.mha = tf.keras.layers.MultiHeadAttention(key_dim=4, num_heads=1)

        def call(self, x, context):
            return self.mha(query=x, value=context, return_attention_scores=True)[1]

    x = emb(tf.constant([[1, 2, 0]]))
    ctx = emb(tf.constant([[3, 0]]))
    direct = tf.keras.layers.MultiHeadAttention(key_dim=4, num_heads=1)(query=x, value=ctx,
                                                                       return_attention_scores=True)[1]
    np.testing.assert_allclose(direct.numpy().sum(-1), [[[1.0, 1.0, 0.0]]], atol=1e-6)
    assert x._keras_mask is None and ctx._keras_mask is None
    x = emb(tf.constant([[1, 2, 0]]))
    ctx = emb(tf.constant([[3, 0]]))
    np.testing.assert_allclose(Cross()(x, ctx).numpy().sum(-1), [[[1.0, 1.0, 1.0]]], atol=1e-6)
