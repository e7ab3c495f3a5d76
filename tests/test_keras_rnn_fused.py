"""The fused recurrent sequences (LSTMSequence / GRUSequence): the Keras layers give the numbers of their
step-by-step cells, with masks, go_backwards, states and dropout, eagerly and in tf.function, and their
second derivatives (through the step-by-step composite) match eager ones inside tf.function too."""

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers


def _tanh(x):  # not keras' tanh object: the layer takes its step-by-step loop
    return tf.tanh(x)


def _pair(cls, **kw):
    fused = cls(4, **kw)
    plain = cls(4, activation=_tanh, **kw)
    return fused, plain


_X = np.sin(np.arange(3 * 5 * 3).reshape(3, 5, 3) * 0.37).astype("float32")
_MASK = np.array([[1, 1, 1, 0, 0], [1, 0, 1, 1, 1], [0, 0, 0, 0, 1]], bool)


@pytest.mark.parametrize("cls", [L.LSTM, L.GRU, L.SimpleRNN])
@pytest.mark.parametrize(
    "kw,masked",
    [
        ({}, False),
        ({"return_sequences": True, "return_state": True}, False),
        ({"return_sequences": True, "go_backwards": True}, True),
        ({"return_sequences": True, "zero_output_for_mask": True}, True),
        ({"return_state": True}, True),
    ],
)
def test_fused_layer_equals_its_step_by_step_loop(cls, kw, masked):
    fused, plain = _pair(cls, **kw)
    x = tf.constant(_X)
    mask = tf.constant(_MASK) if masked else None
    fused(x)
    plain(x)
    plain.set_weights(fused.get_weights())
    for run in (lambda layer, t: layer(t, mask=mask), tf.function(lambda layer, t: layer(t, mask=mask))):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            a, b = tf.nest.flatten(run(fused, x)), tf.nest.flatten(run(plain, x))
            la = tf.add_n([tf.reduce_sum(t * t) for t in a])
            lb = tf.add_n([tf.reduce_sum(t * t) for t in b])
        for u, v in zip(a, b):
            np.testing.assert_allclose(u.numpy(), v.numpy(), rtol=1e-6, atol=1e-7)
        ga = tape.gradient(la, [x] + fused.trainable_weights)
        gb = tape.gradient(lb, [x] + plain.trainable_weights)
        for u, v in zip(ga, gb):
            np.testing.assert_allclose(u.numpy(), v.numpy(), rtol=1e-5, atol=1e-6)


def test_fused_ops_run_eagerly_and_in_fit():
    model = tf.keras.Sequential([tf.keras.Input((5, 3)), L.Bidirectional(L.LSTM(4, return_sequences=True)),
                                 L.GRU(2), L.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    graph_types = {op.type for op in tf.function(model).get_concrete_function(
        tf.TensorSpec([None, 5, 3], tf.float32)).graph.operations}
    assert {"LSTMSequence", "GRUSequence"} <= graph_types and "While" not in graph_types
    before = model.evaluate(_X, np.ones((3, 1), "float32"), verbose=0)
    model.fit(_X, np.ones((3, 1), "float32"), epochs=3, verbose=0)
    assert model.evaluate(_X, np.ones((3, 1), "float32"), verbose=0) < before


def test_recurrent_dropout_in_training_takes_the_step_by_step_loop():
    layer = L.LSTM(3, recurrent_dropout=0.5, seed=1)
    x = tf.constant(_X)
    graph = {op.type for op in tf.function(lambda t: layer(t, training=True)).get_concrete_function(
        tf.TensorSpec([3, 5, 3], tf.float32)).graph.operations}
    assert "While" in graph and "LSTMSequence" not in graph
    inference = {op.type for op in tf.function(lambda t: layer(t)).get_concrete_function(
        tf.TensorSpec([3, 5, 3], tf.float32)).graph.operations}
    assert "LSTMSequence" in inference
    layer(x, training=True)


@pytest.mark.parametrize("cls", [L.LSTM, L.GRU, L.SimpleRNN])
def test_second_order_gradients_in_tf_function_with_unknown_time_match_eager(cls):
    layer = cls(3, dtype="float64", return_sequences=True)
    x = tf.constant(np.sin(np.arange(2 * 4 * 3).reshape(2, 4, 3) * 0.5))
    layer(x)

    def hvp(t):
        with tf.GradientTape() as outer:
            outer.watch(t)
            with tf.GradientTape() as inner:
                inner.watch(t)
                y = tf.reduce_sum(layer(t) ** 2)
            g = inner.gradient(y, t)
            s = tf.reduce_sum(g * g)
        return outer.gradient(s, t)

    f = tf.function(hvp, input_signature=[tf.TensorSpec([None, None, 3], tf.float64)])
    from tapeflow.graph import function as function_mod

    old, function_mod.per_shape_fallback = function_mod.per_shape_fallback, False
    try:
        got = f(x).numpy()
    finally:
        function_mod.per_shape_fallback = old
    np.testing.assert_allclose(got, hvp(x).numpy(), rtol=1e-10, atol=1e-12)
