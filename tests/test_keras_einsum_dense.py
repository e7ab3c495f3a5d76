"""tf.keras.layers.EinsumDense against numbers pinned from Keras 3.15 (TF backend)."""

import os

import numpy as np
import pytest

import tapeflow as tf

layers = tf.keras.layers


def test_initial_kernel_after_set_random_seed_is_keras():
    tf.keras.utils.set_random_seed(7)
    dense = layers.EinsumDense("ab,bc->ac", output_shape=4, bias_axes="c")
    dense.build((None, 3))
    np.testing.assert_array_equal(dense.kernel.numpy().ravel()[:6], np.float32(
        [-0.3380742073059082, 0.4256371259689331, 0.8404884338378906, -0.3156418204307556, -0.20789051055908203,
         0.031118690967559814]))
    np.testing.assert_array_equal(dense.bias.numpy(), np.zeros(4, "float32"))


def test_initial_3d_kernel_uses_the_einsum_fans_as_keras():
    # Keras clones glorot_uniform with input_axes=[0], output_axes=[1, 2]: fan_in 4, fan_out 6 (not 8 and 12)
    tf.keras.utils.set_random_seed(7)
    layers.EinsumDense("ab,bc->ac", output_shape=4, bias_axes="c")  # takes the first default seed, as in Keras
    dense = layers.EinsumDense("abc,cde->abde", output_shape=(None, 2, 3), bias_axes="de", activation="relu")
    dense.build((None, 5, 4))
    assert [w.name for w in dense.weights] == ["kernel", "bias"]
    assert [tuple(w.shape) for w in dense.weights] == [(4, 2, 3), (2, 3)]
    np.testing.assert_array_equal(dense.kernel.numpy().ravel()[:6], np.float32(
        [0.6637932062149048, 0.5874707698822021, -0.4953825771808624, 0.08387976884841919, 0.588666558265686,
         -0.26933181285858154]))


def test_he_normal_kernel_after_set_random_seed_is_keras():
    tf.keras.utils.set_random_seed(3)
    dense = layers.EinsumDense("ab,bc->ac", output_shape=4, kernel_initializer="he_normal")
    dense.build((None, 3))
    assert dense.bias is None and len(dense.weights) == 1
    np.testing.assert_array_equal(dense.kernel.numpy().ravel()[:4], np.float32(
        [0.10951242595911026, 1.0906888246536255, 0.31655508279800415, 0.49320080876350403]))


def test_forward_on_pinned_weights_is_keras():
    dense = layers.EinsumDense("abc,cde->abde", output_shape=(None, 2, 3), bias_axes="de", activation="relu")
    x = np.arange(2 * 5 * 4, dtype="float32").reshape(2, 5, 4) / 10 - 1
    k = (np.arange(4 * 2 * 3, dtype="float32").reshape(4, 2, 3) - 10) / 7
    b = np.array([[0.5, -1, 0.25], [1, 2, -3]], dtype="float32")
    dense.build((None, 5, 4))
    dense.set_weights([k, b])
    y = dense(x).numpy()
    assert y.shape == (2, 5, 2, 3)
    np.testing.assert_allclose(y.ravel()[:8], [1.414285659790039, 0.0, 0.19285720586776733, 0.45714282989501953,
                                               0.9714285135269165, 0.0, 1.1857142448425293, 0.0], rtol=1e-6)
    np.testing.assert_allclose(y.sum(), 92.45713806152344, rtol=1e-6)


def test_gradients_reach_kernel_and_bias():
    dense = layers.EinsumDense("abc,cd->abd", output_shape=(None, 3), bias_axes="d")
    x = tf.constant(np.ones((2, 5, 4), "float32"))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(dense(x))
    gk, gb = tape.gradient(loss, [dense.kernel, dense.bias])
    np.testing.assert_allclose(gk.numpy(), np.full((4, 3), 10.0))
    np.testing.assert_allclose(gb.numpy(), np.full((3,), 10.0))


@pytest.mark.parametrize("equation, output_shape, bias_axes, input_shape, out, kernel, bias", [
    ("ab,bc->ac", 4, "c", (None, 3), (None, 4), (3, 4), (4,)),
    ("abc,cd->abd", (None, 6), "d", (2, 5, 4), (2, None, 6), (4, 6), (6,)),
    ("abc,cd->abd", (5, 6), "b", (None, 5, 4), (None, 5, 6), (4, 6), (5, 1)),
    ("abc,cde->abde", (None, 2, 3), "de", (None, 5, 4), (None, None, 2, 3), (4, 2, 3), (2, 3)),
    ("...x,xy->...y", 6, "y", (2, 7, 5, 4), (2, 5, 7, 6), (4, 6), (6,)),
    ("ab...,bc->ac...", 6, "c", (2, 3, 4, 5), (2, 6, 4, 5), (3, 6), (6, 1, 1)),
])
def test_output_and_weight_shapes_are_keras(equation, output_shape, bias_axes, input_shape, out, kernel, bias):
    dense = layers.EinsumDense(equation, output_shape=output_shape, bias_axes=bias_axes)
    assert dense.compute_output_shape(input_shape) == out
    if None not in kernel + bias:
        dense.build(tuple(5 if d is None else d for d in input_shape) if equation.startswith("...") else input_shape)
        assert tuple(dense.kernel.shape) == kernel and tuple(dense.bias.shape) == bias


def test_symbolic_output_and_summary_shape_come_from_output_shape():
    inputs = tf.keras.Input((5, 4))
    outputs = layers.EinsumDense("abc,cd->abd", (None, 6), bias_axes="d")(inputs)
    assert tuple(outputs.shape) == (None, None, 6)
    model = tf.keras.Model(inputs, outputs)
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert "(EinsumDense)" in text and "(None, None, 6)" in text and "30" in text


@pytest.mark.parametrize("equation, input_shape, message", [
    ("ab,bc", (None, 3), "Invalid einsum equation 'ab,bc'. Equations must be in the form [X],[Y]->[Z]"),
    ("a.b,bc->ac", (None, 3), "Invalid einsum equation 'a.b,bc->ac'"),
    ("ab,bc->ad", (None, 3), "Dimension 'd' was specified in the output 'ad' but has no corresponding dim"),
    ("abc,cd->abde", (None, 3, 3), "Dimension 'e' was specified in the output 'abde'"),
])
def test_bad_equation_raises_keras_value_error(equation, input_shape, message):
    with pytest.raises(ValueError) as err:
        layers.EinsumDense(equation, output_shape=3).build(input_shape)
    assert message in str(err.value)


def test_bias_axis_not_in_output_raises():
    with pytest.raises(ValueError, match="Bias dimension 'z' was requested, but is not part of the output spec 'ac'"):
        layers.EinsumDense("ab,bc->ac", output_shape=3, bias_axes="z").build((None, 3))


def test_get_config_is_keras_and_round_trips():
    dense = layers.EinsumDense("ab,bc->ac", output_shape=4, bias_axes="c", kernel_regularizer="l2")
    config = dense.get_config()
    assert config["output_shape"] == (4,) and config["equation"] == "ab,bc->ac" and config["bias_axes"] == "c"
    assert config["activation"] == "linear" and config["quantization_config"] is None
    assert config["kernel_initializer"] == {"module": "keras.initializers", "class_name": "GlorotUniform",
                                            "config": {"seed": None, "input_axes": None, "output_axes": None},
                                            "registered_name": None}
    assert config["bias_initializer"]["class_name"] == "Zeros"
    assert config["kernel_regularizer"] == {"module": "keras.regularizers", "class_name": "L2", "config": {"l2": 0.01},
                                            "registered_name": None}
    again = layers.EinsumDense.from_config(config)
    assert again.get_config() == config


def test_keras_file_round_trip(tmp_path):
    tf.keras.utils.set_random_seed(1)
    model = tf.keras.Sequential([tf.keras.Input((5, 4)), layers.EinsumDense(
        "abc,cde->abde", output_shape=(5, 2, 3), bias_axes="de", activation="tanh")])
    x = np.random.default_rng(0).random((2, 5, 4)).astype("float32")
    path = os.path.join(tmp_path, "m.keras")
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    assert type(loaded.layers[0]) is layers.EinsumDense and tuple(loaded.layers[0].bias.shape) == (2, 3)
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())


def test_lora_raises_not_implemented():
    with pytest.raises(NotImplementedError, match="EinsumDense: LoRA"):
        layers.EinsumDense("ab,bc->ac", output_shape=3, lora_rank=2)
