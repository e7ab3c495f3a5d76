"""keras.ops.image: resize, extract_patches, rgb_to_grayscale, rgb_to_hsv/hsv_to_rgb (Keras 3.15 / TF 2.21 results
pinned)."""

import os

import numpy as np
import pytest

import tapeflow as tf

ops = tf.keras.ops


def _x():
    return np.random.RandomState(0).rand(2, 8, 10, 3).astype("float32")


def test_extract_patches_resize_grayscale_values():
    x = _x()
    p = ops.image.extract_patches(x, 4)
    assert p.shape == (2, 2, 2, 48)
    np.testing.assert_allclose(float(ops.sum(p)), 188.61763, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(p)[0, 1, 1, :6], x[0, 4, 4:6].ravel())  # rows, columns, channels
    p = ops.image.extract_patches(x[0], (2, 3), strides=(1, 2), padding="same")
    assert p.shape == (8, 5, 18)
    np.testing.assert_allclose(float(ops.sum(p)), 313.17908, rtol=1e-6)
    np.testing.assert_allclose(float(ops.sum(ops.image.resize(x, (5, 7)))), 102.76003, rtol=1e-6)
    np.testing.assert_allclose(float(ops.sum(ops.image.resize(x, (6, 6), crop_to_aspect_ratio=True))), 105.59438,
                               rtol=1e-6)
    np.testing.assert_allclose(float(ops.sum(ops.image.resize(x, (6, 6), pad_to_aspect_ratio=True, fill_value=1.0))),
                               134.41582, rtol=1e-6)
    ri = ops.image.resize((x * 255).astype("uint8"), (5, 7))
    assert ri.dtype == "uint8" and int(ops.sum(ops.cast(ri, "int32"))) == 26095
    g = ops.image.rgb_to_grayscale(x)
    assert g.shape == (2, 8, 10, 1)
    np.testing.assert_allclose(float(ops.sum(g)), 79.48764, rtol=1e-6)


def test_image_ops_in_a_functional_model_and_errors(tmp_path):
    inp = tf.keras.Input((8, 10, 3))
    out = ops.image.extract_patches(inp, 2)
    out2 = ops.image.resize(inp, (4, 4))
    assert out.shape == (None, 4, 5, 12) and out2.shape == (None, 4, 4, 3)
    model = tf.keras.Model(inp, [out, out2])
    path = os.path.join(tmp_path, "m.keras")
    model.save(path)
    again = tf.keras.models.load_model(path)
    for a, b in zip(model.predict(_x(), verbose=0), again.predict(_x(), verbose=0)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match=r"Expected `size` to be a tuple of 2 integers. Received: size=\(5,\)"):
        ops.image.resize(_x(), (5,))
    with pytest.raises(ValueError, match="Invalid images rank: expected rank 3"):
        ops.image.resize(_x()[0, 0], (5, 5))
    with pytest.raises(TypeError, match="Invalid `size` argument. Expected an int or a tuple."):
        ops.image.extract_patches(_x(), "a")
    with pytest.raises(ValueError, match=r"Invalid channel size: expected 3 \(RGB\) or 1 \(Grayscale\)"):
        ops.image.rgb_to_grayscale(_x()[..., :2])
    with pytest.raises(NotImplementedError, match="affine_transform"):
        ops.image.affine_transform(_x(), np.zeros((2, 8)))


_HSV_X = np.array([[[0.1, 0.5, 0.9], [0.9, 0.9, 0.9]], [[0.3, 0.2, 0.1], [0.0, 0.0, 0.0]]], "float32")


def test_rgb_to_hsv_and_back_values_and_channels_first():
    # Keras 3.15 (TF backend): tf.image's RGBToHSV / HSVToRGB kernels
    np.testing.assert_array_equal(ops.image.rgb_to_hsv(_HSV_X).numpy(), np.array(
        [[[0.5833334, 0.88888884, 0.9], [0.0, 0.0, 0.9]], [[0.08333333, 0.6666667, 0.3], [0.0, 0.0, 0.0]]],
        "float32"))
    np.testing.assert_array_equal(ops.image.hsv_to_rgb(_HSV_X).numpy(), np.array(
        [[[0.9, 0.71999997, 0.45], [0.9, 0.09000002, 0.5760003]], [[0.084, 0.1, 0.080000006], [0.0, 0.0, 0.0]]],
        "float32"))
    cf = ops.image.rgb_to_hsv(np.transpose(_HSV_X[None], (0, 3, 1, 2)), data_format="channels_first")
    np.testing.assert_array_equal(cf.numpy(), np.transpose(ops.image.rgb_to_hsv(_HSV_X).numpy()[None], (0, 3, 1, 2)))
    assert ops.image.rgb_to_hsv(_HSV_X.astype("float64")).dtype == tf.float64
    x = tf.constant(_HSV_X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(ops.image.rgb_to_hsv(x)[..., 2])  # value = max channel: its gradient picks it
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[[0, 0, 1], [1, 0, 0]], [[1, 0, 0], [1, 0, 0]]])


def test_rgb_to_hsv_errors_and_functional_model(tmp_path):
    with pytest.raises(ValueError, match=r"Received input with shape: images.shape=\(3,\)"):
        ops.image.rgb_to_hsv(_HSV_X[0, 0])
    with pytest.raises(ValueError, match="Invalid images dtype: expected float dtype. Received: images.dtype=int32"):
        ops.image.hsv_to_rgb(_HSV_X.astype("int32"))
    with pytest.raises(tf.errors.FailedPreconditionError, match="input must have 3 channels but input only has 2"):
        ops.image.rgb_to_hsv(_HSV_X[..., :2])
    with pytest.raises(ValueError, match="Input images must have 3 channels, but received images with 2 channels."):
        ops.image.rgb_to_hsv(tf.keras.Input((4, 5, 2)))
    with pytest.raises(ValueError, match="Invalid images dtype: expected float dtype. Received: images.dtype=int32"):
        ops.image.rgb_to_hsv(tf.keras.Input((4, 5, 3), dtype="int32"))
    inp = tf.keras.Input((2, 2, 3))
    out = ops.image.hsv_to_rgb(ops.image.rgb_to_hsv(inp))
    assert out.shape == (None, 2, 2, 3)
    model = tf.keras.Model(inp, out)
    path = os.path.join(tmp_path, "hsv.keras")
    model.save(path)
    again = tf.keras.models.load_model(path)
    np.testing.assert_allclose(again.predict(_HSV_X[None], verbose=0)[0], _HSV_X, atol=1e-6)
