"""tf.keras.layers.RandomFlip against flips pinned from Keras 3.15 (TF backend)."""

import numpy as np
import pytest

import tapeflow as tf

X = np.arange(4 * 2 * 3 * 1, dtype="float32").reshape(4, 2, 3, 1)


def rows(y):
    return np.asarray(y)[..., 0].reshape(4, -1).tolist()


def test_unseeded_after_set_random_seed_flips_keras_images_and_call_defaults_to_training():
    tf.keras.utils.set_random_seed(11)
    layer = tf.keras.layers.RandomFlip()
    assert layer._seed_state.numpy().tolist() == [485738844, 0]
    assert rows(layer(X)) == [[5, 4, 3, 2, 1, 0], [11, 10, 9, 8, 7, 6], [12, 13, 14, 15, 16, 17],
                              [23, 22, 21, 20, 19, 18]]
    assert rows(layer(X, training=True)) == [[5, 4, 3, 2, 1, 0], [11, 10, 9, 8, 7, 6], [17, 16, 15, 14, 13, 12],
                                             [18, 19, 20, 21, 22, 23]]
    np.testing.assert_array_equal(layer(X, training=False).numpy(), X)


def test_seeded_horizontal_and_vertical_modes_are_keras():
    layer = tf.keras.layers.RandomFlip("horizontal", seed=5)
    assert rows(layer(X, training=True)) == [[2, 1, 0, 5, 4, 3], [6, 7, 8, 9, 10, 11], [12, 13, 14, 15, 16, 17],
                                             [20, 19, 18, 23, 22, 21]]
    assert layer._seed_state.numpy().tolist() == [5, 1]
    layer = tf.keras.layers.RandomFlip("vertical", seed=5)
    assert rows(layer(X, training=True)) == [[3, 4, 5, 0, 1, 2], [6, 7, 8, 9, 10, 11], [12, 13, 14, 15, 16, 17],
                                             [21, 22, 23, 18, 19, 20]]


def test_tf_function_calls_draw_the_eager_sequence():
    eager, traced = tf.keras.layers.RandomFlip(seed=8), tf.keras.layers.RandomFlip(seed=8)
    step = tf.function(lambda x: traced(x, training=True))
    for _ in range(3):
        np.testing.assert_array_equal(step(tf.constant(X)).numpy(), eager(X, training=True).numpy())


def test_unbatched_int_image_becomes_float32():
    out = tf.keras.layers.RandomFlip(seed=2)(np.arange(6, dtype="int32").reshape(2, 3, 1), training=True)
    assert out.dtype == tf.float32 and out.numpy()[..., 0].tolist() == [[0, 1, 2], [3, 4, 5]]


def test_predict_does_not_flip_and_config_is_keras():
    model = tf.keras.Sequential([tf.keras.Input((2, 3, 1)), tf.keras.layers.RandomFlip(seed=9)])
    np.testing.assert_array_equal(model.predict(X, verbose=0), X)
    layer = tf.keras.layers.RandomFlip(seed=3)
    config = layer.get_config()
    assert {k: config[k] for k in ("data_format", "seed", "mode")} == {
        "data_format": "channels_last", "seed": 3, "mode": "horizontal_and_vertical"}
    assert tf.keras.layers.RandomFlip.from_config(config).get_config() == config
    assert layer.compute_output_shape((None, 4, 4, 3)) == (None, 4, 4, 3)


def test_random_contrast_draws_keras_factors():
    # values from Keras 3.15 (TF backend) on the same images and seeds
    x = (np.arange(2 * 3 * 3 * 2).reshape(2, 3, 3, 2) * 7 % 256).astype("float32")
    tf.keras.utils.set_random_seed(5)
    a = tf.keras.layers.RandomContrast(0.5)  # one number a means factors in [1, 1 + a], as Keras 3.15
    assert a.get_config()["factor"] == (0, 0.5) and a.get_config()["value_range"] == (0, 255)
    np.testing.assert_allclose(np.asarray(a(x)).ravel()[:8], [0, 0, 0, 5.4362, 17.6242, 24.6242, 36.8121, 43.8121],
                               atol=1e-4)
    np.testing.assert_allclose(np.asarray(a(x)).ravel()[:4], [0, 0, 0, 0.8713], atol=1e-4)  # the counter moved on
    b = tf.keras.layers.RandomContrast((0.2, 0.9), value_range=(0, 100), seed=11)
    np.testing.assert_allclose(np.asarray(b(x)).ravel()[:8], [0, 0, 0, 0, 7.2955, 14.2955, 31.6477, 38.6477],
                               atol=1e-4)
    single = b(x[0])  # an unbatched image
    assert single.shape == (3, 3, 2)
    np.testing.assert_allclose(np.asarray(single).ravel()[:4], [4.6476, 11.6476, 17.4857, 24.4857], atol=1e-4)
    np.testing.assert_array_equal(np.asarray(b(x, training=False)), x)
    with pytest.raises(ValueError, match=r"in the range \[0, 1\]. Received: factor=1.5"):
        tf.keras.layers.RandomContrast(1.5)
