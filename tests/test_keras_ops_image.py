"""keras.ops.image: resize, extract_patches, rgb_to_grayscale (Keras 3.15 / TF 2.21 results pinned)."""

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
