"""Recurrent, attention and transposed-convolution layers: numerical gradients, the While op under
tf.function, dynamic shapes, masks, and bad input (values against Keras are pinned in
tests/tf_programs/keras_rnn.py, keras_attention.py, keras_conv_more.py and keras_misc_layers.py)."""

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers


def _det(layer, scale=0.4):
    layer.set_weights(
        [(np.sin(np.arange(w.size) * 0.61 + i) * scale).reshape(w.shape) for i, w in enumerate(layer.get_weights())]
    )


def _check_grads(layer, x, weights=True):
    """Theoretical vs numerical Jacobians of sum(layer(x) * c) w.r.t. x and (optionally) each weight."""
    y0 = tf.nest.flatten(layer(x))
    c = [tf.constant(np.cos(np.arange(int(np.prod(y.shape)))).reshape(y.shape)) for y in y0]

    def f(inp):
        return tf.add_n([tf.reduce_sum(y * k) for y, k in zip(tf.nest.flatten(layer(inp)), c)])

    theo, num = tf.test.compute_gradient(f, [x])
    np.testing.assert_allclose(theo[0], num[0], rtol=1e-5, atol=1e-6)
    if weights:
        for w in layer.trainable_weights:
            with tf.GradientTape() as tape:
                loss = f(x)
            g = tape.gradient(loss, w).numpy().reshape(-1)
            base = w.numpy().copy()
            flat = base.reshape(-1)
            eps = 1e-6
            for j in range(0, flat.size, max(1, flat.size // 5)):
                for sign, store in ((1, "p"), (-1, "m")):
                    pert = flat.copy()
                    pert[j] += sign * eps
                    w.assign(pert.reshape(base.shape))
                    val = float(f(x))
                    if store == "p":
                        up = val
                    else:
                        down = val
                w.assign(base)
                np.testing.assert_allclose(g[j], (up - down) / (2 * eps), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize(
    "code",
    [
        "LSTM(3, return_sequences=True, dtype='float64')",
        "GRU(3, return_state=True, dtype='float64')",
        "GRU(2, reset_after=False, go_backwards=True, dtype='float64')",
        "SimpleRNN(2, return_sequences=True, dtype='float64')",
        "Bidirectional(L.LSTM(2, dtype='float64'), dtype='float64')",
    ],
)
def test_recurrent_layer_gradients_match_finite_differences(code):
    layer = eval("L." + code)
    x = tf.constant(np.sin(np.arange(2 * 4 * 3).reshape(2, 4, 3) * 0.7))
    layer(x)
    _det(layer)
    _check_grads(layer, x)


@pytest.mark.parametrize(
    "code,shape",
    [
        ("Conv2DTranspose(2, 3, strides=2, padding='same', dtype='float64')", (1, 3, 3, 2)),
        ("Conv1DTranspose(2, 3, strides=2, dtype='float64')", (1, 4, 2)),
        ("Conv3DTranspose(1, 2, strides=2, dtype='float64')", (1, 2, 2, 2, 1)),
        ("SeparableConv2D(2, 2, dtype='float64')", (1, 4, 4, 2)),
        ("Conv2D(4, 2, groups=2, dtype='float64')", (1, 4, 4, 2)),
        ("MultiHeadAttention(2, 2, dtype='float64')", (2, 3, 4)),
        ("AdditiveAttention(dtype='float64')", (2, 3, 4)),
        ("PReLU(dtype='float64')", (2, 3, 4)),
    ],
)
def test_conv_and_attention_gradients_match_finite_differences(code, shape):
    layer = eval("L." + code)
    x = tf.constant(np.sin(np.arange(int(np.prod(shape))).reshape(shape) * 0.7) - 0.1)
    if "MultiHead" in code:
        run = layer
        layer = type(
            "SelfAttention",
            (tf.keras.layers.Layer,),
            {
                "__init__": lambda self, inner: (
                    tf.keras.layers.Layer.__init__(self, dtype="float64"),
                    setattr(self, "inner", inner),
                )[0],
                "call": lambda self, t: self.inner(t, t),
            },
        )(run)
    elif "Attention" in code:
        run = layer
        layer = type(
            "SelfAttention2",
            (tf.keras.layers.Layer,),
            {
                "__init__": lambda self, inner: (
                    tf.keras.layers.Layer.__init__(self, dtype="float64"),
                    setattr(self, "inner", inner),
                )[0],
                "call": lambda self, t: self.inner([t, t * 0.5]),
            },
        )(run)
    layer(x)
    _det(layer)
    _check_grads(layer, x)


def _op_types(fn, *specs):
    return {op.type for op in tf.function(fn).get_concrete_function(*specs).graph.operations}


def test_rnn_time_loop_is_one_fused_op_or_a_while_op_in_tf_function_and_unrolled_with_unroll():
    spec = tf.TensorSpec([2, 5, 4], tf.float32)

    def types(layer):
        layer(tf.zeros([2, 5, 4]))
        return _op_types(lambda t: layer(t), spec)

    fused = types(L.LSTM(3, return_sequences=True))
    assert "LSTMSequence" in fused and "While" not in fused
    assert "GRUSequence" in types(L.GRU(3))
    assert "SimpleRNNSequence" in types(L.SimpleRNN(3, unroll=True))
    # other activations, GRU(reset_after=False) and user cells: one While op over the steps
    assert "While" in types(L.LSTM(3, activation="relu"))
    assert "While" in types(L.GRU(3, reset_after=False))
    assert "While" not in types(L.SimpleRNN(3, activation="relu", unroll=True))


def test_rnn_under_tf_function_with_unknown_batch_and_time_matches_eager():
    model = tf.keras.Sequential(
        [
            tf.keras.Input((None,), dtype="int32"),
            L.Embedding(20, 4, mask_zero=True),
            L.Bidirectional(L.LSTM(3, return_sequences=True)),
            L.GRU(2),
        ]
    )
    f = tf.function(lambda t: model(t), input_signature=[tf.TensorSpec([None, None], tf.int32)])
    for tokens in ([[1, 2, 0], [3, 4, 5]], [[1, 0, 0, 0, 0], [3, 4, 5, 6, 7], [2, 2, 2, 0, 0]]):
        tokens = np.array(tokens, "int32")
        np.testing.assert_allclose(f(tokens).numpy(), model(tokens).numpy(), rtol=1e-6, atol=1e-6)
    assert model.layers[1].output.shape == (None, None, 6)


def test_gradients_through_the_while_loop_equal_eager_ones():
    gru = L.GRU(3)
    x = tf.constant(np.sin(np.arange(2 * 6 * 2).reshape(2, 6, 2)).astype("float32"))

    def grads(t):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(gru(t) ** 2)
        return tape.gradient(loss, gru.trainable_weights)

    eager = grads(x)
    graph = tf.function(grads)(x)
    for a, b in zip(eager, graph):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_masks_propagate_and_are_readable_as_keras_mask():
    tokens = np.array([[3, 1, 0], [2, 0, 0]], "int32")
    e = L.Embedding(5, 2, mask_zero=True)(tokens)
    np.testing.assert_array_equal(e._keras_mask.numpy(), tokens != 0)
    d = L.Dense(3)(e)  # Dense passes the mask on
    np.testing.assert_array_equal(d._keras_mask.numpy(), tokens != 0)
    seq = L.LSTM(2, return_sequences=True)(d)
    np.testing.assert_array_equal(seq._keras_mask.numpy(), tokens != 0)
    assert getattr(L.LSTM(2)(d), "_keras_mask", None) is None
    assert getattr(L.Flatten()(e), "_keras_mask", None) is None  # Flatten does not support masking
    # a masked step leaves the state unchanged: the last output is the one of the last real step
    lstm = L.LSTM(2, return_sequences=True)
    full = lstm(e)
    np.testing.assert_allclose(full[1, 2].numpy(), full[1, 0].numpy())


def test_stateful_rnn_keeps_and_resets_its_state():
    rnn = L.SimpleRNN(2, stateful=True)
    x = np.ones((3, 4, 2), "float32")
    a = rnn(x).numpy()
    b = rnn(x).numpy()
    assert not np.allclose(a, b)
    rnn.reset_states()
    np.testing.assert_allclose(rnn(x).numpy(), a)


def test_dropout_masks_are_one_per_sequence_and_off_at_inference():
    tf.random.set_seed(3)
    cell_layer = L.SimpleRNN(4, dropout=0.5, recurrent_dropout=0.5, return_sequences=True)
    x = np.ones((2, 5, 3), "float32")
    inference = cell_layer(x).numpy()
    np.testing.assert_allclose(cell_layer(x, training=False).numpy(), inference)
    assert not np.allclose(cell_layer(x, training=True).numpy(), inference)
    assert cell_layer.cell._dropout_mask is None  # reset after the call


def test_bad_inputs_raise_keras_errors():
    with pytest.raises(ValueError, match="expected ndim=3"):
        L.LSTM(2)(np.ones((2, 3), "float32"))
    with pytest.raises(ValueError, match="batch size must be static"):
        L.GRU(2, stateful=True).build((None, 4, 3))
    with pytest.raises(ValueError, match="Strides must be greater than output padding"):
        L.Conv2DTranspose(2, 3, strides=1, output_padding=1)
    with pytest.raises(ValueError, match="evenly divisible by the number of groups"):
        L.Conv2D(4, 3, groups=3)(np.ones((1, 5, 5, 4), "float32"))
    with pytest.raises(ValueError, match="list of inputs"):
        L.Attention()(np.ones((1, 2, 2), "float32"))
    with pytest.raises(ValueError, match="merge mode"):
        L.Bidirectional(L.LSTM(2), merge_mode="max")
    with pytest.raises(NotImplementedError, match="use_gate"):
        L.MultiHeadAttention(2, 2, use_gate=True)


def test_layers_rebuild_from_their_config():
    for layer in (
        L.LSTM(3, return_sequences=True, go_backwards=True),
        L.GRU(2, reset_after=False),
        L.Bidirectional(L.SimpleRNN(2), merge_mode="sum"),
        L.TimeDistributed(L.Dense(2)),
        L.RNN([L.LSTMCell(2), L.GRUCell(3)]),
        L.Conv2DTranspose(3, 2, strides=2, output_padding=1),
        L.MultiHeadAttention(2, 4, value_dim=3),
        L.SeparableConv1D(2, 3),
        L.PReLU(shared_axes=[1]),
    ):
        clone = type(layer).from_config(layer.get_config())
        cfg_a = {k: v for k, v in layer.get_config().items() if k != "name"}
        cfg_b = {k: v for k, v in clone.get_config().items() if k != "name"}
        assert repr(cfg_a) == repr(cfg_b).replace(clone.name, layer.name) or set(cfg_a) == set(cfg_b)
