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


_MC_X = np.arange(20, dtype="float32").reshape(4, 5)
_MC_C = np.array([[[0.5, 3.7, -1.2], [2.0, 4.5, 1.1]], [[1.5, 0.2, 4.8], [-0.7, 2.5, 3.3]]], "float32")


@pytest.mark.parametrize("mode, order, expected", [  # Keras 3.15 (TF backend), fill_value=-1
    ("constant", 1, [[4.0, 3.859999418258667, -1.0], [2.299999952316284, -1.0, 8.80000114440918]]),
    ("constant", 0, [[2.0, -1.0, -1.0], [-1.0, -1.0, 8.0]]),
    ("reflect", 1, [[4.0, 15.200000762939453, 10.0], [10.699999809265137, 15.0, 8.80000114440918]]),
    ("nearest", 1, [[4.0, 15.200000762939453, 4.0], [10.0, 17.5, 8.80000114440918]]),
    ("wrap", 0, [[2.0, 0.0, 15.0], [14.0, 2.0, 8.0]]),
])
def test_map_coordinates_is_keras(mode, order, expected):
    out = ops.image.map_coordinates(_MC_X, _MC_C, order, fill_mode=mode, fill_value=-1.0)
    assert out.numpy().tolist() == expected


def test_map_coordinates_ints_gradients_errors_and_gaussian_blur():
    assert ops.image.map_coordinates(_MC_X.astype("int32"), _MC_C, 1).numpy().tolist() == [[4, 5, 0], [3, 0, 9]]
    x, c = tf.constant(_MC_X), tf.constant(_MC_C)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, c])
        y = tf.reduce_sum(ops.image.map_coordinates(x, c, 1, fill_mode="nearest"))
    assert float(tf.reduce_sum(tape.gradient(y, x))) == 6.0  # each sample's weights sum to one
    assert tape.gradient(y, c).shape == (2, 2, 3)
    with pytest.raises(ValueError, match=r"First dim of `coordinates` must be the same as the rank of `inputs`"):
        ops.image.map_coordinates(_MC_X, _MC_C[:1], 1)
    with pytest.raises(NotImplementedError, match="map_coordinates currently requires order<=1"):
        ops.image.map_coordinates(_MC_X, _MC_C, 2)
    img = np.random.RandomState(0).rand(2, 6, 5, 3).astype("float32")
    blurred = ops.image.gaussian_blur(img, (3, 5), (0.8, 1.3))  # Keras: sum 63.57496535778046
    np.testing.assert_allclose(blurred.numpy().ravel()[:4], [0.22055180370807648, 0.2604513466358185,
                                                             0.2950857877731323, 0.2571399509906769], rtol=1e-6)
    np.testing.assert_allclose(float(np.sum(blurred.numpy(), dtype=np.float64)), 63.57496535778046, rtol=1e-6)
    assert ops.image.gaussian_blur(np.transpose(img[0], (2, 0, 1)), (5, 3), data_format="channels_first").shape == (
        3, 6, 5)
    assert ops.image.gaussian_blur(tf.keras.Input((6, 5, 3))).shape == (None, 6, 5, 3)


def test_elastic_transform_is_keras():
    img = (np.random.RandomState(3).rand(2, 9, 8, 2) * 255).astype("float32")
    out = ops.image.elastic_transform(img, alpha=3.0, sigma=1.5, seed=7).numpy()  # Keras 3.15, TF backend
    assert float(out.astype("float64").sum()) == 37489.99928855896
    assert out.ravel()[:4].tolist() == [68.35113525390625, 105.36058044433594, 95.72581481933594, 126.45846557617188]
    one = ops.image.elastic_transform(img[0], alpha=2.0, sigma=1.0, interpolation="nearest", fill_mode="constant",
                                      fill_value=5.0, seed=3).numpy()
    assert one.shape == (9, 8, 2) and float(one.astype("float64").sum()) == 17189.721384048462
    with pytest.raises(ValueError, match=r"Expected of one \('nearest', 'bilinear'\). Received: interpolation=cubic"):
        ops.image.elastic_transform(img, interpolation="cubic")
    with pytest.raises(ValueError, match=r"Received: fill_mode=bad"):
        ops.image.elastic_transform(img, fill_mode="bad")
