"""tf.keras.layers.Resizing (Keras 3.15 with the TF backend: dtypes, crop/pad to aspect ratio, config,
errors) and a Sequential built from a first layer that has an input shape; values pinned from TF 2.21."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import layers

X = (np.arange(2 * 5 * 7 * 3) % 251).reshape(2, 5, 7, 3).astype(np.uint8)


def test_resizing_dtypes_and_values():
    r = layers.Resizing(3, 4)
    y = r(X)
    assert y.dtype == tf.uint8 and y.shape == (2, 3, 4, 3)  # integer images stay integer (rounded)
    assert y.numpy()[0, :, :, 0].tolist() == [[8, 13, 19, 24], [43, 48, 54, 59], [78, 83, 89, 94]]
    assert r(X[0]).shape == (3, 4, 3)
    y = r(X.astype(np.float64))
    assert y.dtype == tf.float32  # floats take the compute dtype
    np.testing.assert_array_equal(y.numpy()[1, :, :, 1], [[114.125, 119.375, 124.625, 129.875],
                                                          [149.125, 154.375, 159.625, 164.875],
                                                          [184.125, 189.375, 194.625, 199.875]])
    y = layers.Resizing(3, 4, interpolation="nearest")(X.astype(np.float32))
    assert y.numpy()[0, :, :, 2].tolist() == [[2.0, 8.0, 14.0, 20.0], [44.0, 50.0, 56.0, 62.0],
                                              [86.0, 92.0, 98.0, 104.0]]
    assert layers.Resizing(3, 4, dtype="float64")(X).dtype == tf.uint8
    assert layers.Resizing(3, 4, dtype="float64")(X.astype(np.float32)).dtype == tf.float64


def test_resizing_to_aspect_ratio():
    y = layers.Resizing(4, 4, crop_to_aspect_ratio=True)(X.astype(np.float32))
    np.testing.assert_allclose(y.numpy()[0, :, :, 0], [[6.0, 9.75, 13.5, 17.25], [32.25, 36.0, 39.75, 43.5],
                                                       [58.5, 62.25, 66.0, 69.75], [84.75, 88.5, 92.25, 96.0]],
                               atol=1e-4)
    y = layers.Resizing(4, 4, pad_to_aspect_ratio=True, fill_value=7.0)(X.astype(np.float32))
    np.testing.assert_allclose(y.numpy()[0, :, :, 0],
                               [[4.7969, 6.7656, 8.7344, 10.7031], [24.75, 30.0, 35.25, 40.5],
                                [61.5, 66.75, 72.0, 77.25], [36.2969, 38.2656, 40.2344, 42.2031]], atol=1e-4)
    y = layers.Resizing(6, 3, pad_to_aspect_ratio=True)(X[0].astype(np.float32))
    np.testing.assert_allclose(y.numpy()[:, :, 0], [[0, 0, 0], [0, 0, 0], [21.25, 28.25, 35.25],
                                                    [66.75, 73.75, 80.75], [0, 0, 0], [0, 0, 0]], atol=1e-4)
    # in a tf.data map the image size is known only at run time
    ds = tf.data.Dataset.from_generator(lambda: iter([X[0].astype(np.float32)]),
                                        output_signature=tf.TensorSpec([None, None, 3]))
    crop = layers.Resizing(4, 4, crop_to_aspect_ratio=True)
    out = next(iter(ds.map(crop)))
    np.testing.assert_array_equal(out, crop(X[0].astype(np.float32)))


def test_resizing_config_shapes_and_errors():
    r = layers.Resizing(3, 4)
    assert not r.built
    assert r.get_config() == {
        "name": r.name, "trainable": True, "dtype": {"module": "keras", "class_name": "DTypePolicy",
                                                     "config": {"name": "float32"}, "registered_name": None},
        "data_format": "channels_last", "height": 3, "width": 4, "interpolation": "bilinear",
        "crop_to_aspect_ratio": False, "pad_to_aspect_ratio": False, "fill_mode": "constant", "fill_value": 0.0,
        "antialias": False}
    assert r.compute_output_shape((None, 9, 9, 3)) == (None, 3, 4, 3)
    assert r.compute_output_shape((9, 9, 3)) == (3, 4, 3)
    m = tf.keras.Sequential([tf.keras.Input((5, 7, 3)), layers.Resizing(3, 4)])
    assert m.output_shape == (None, 3, 4, 3)
    x = X.astype(np.float32)
    with pytest.raises(ValueError, match="Invalid value for argument `interpolation`"):
        layers.Resizing(3, 4, interpolation="cubic")(x)
    with pytest.raises(ValueError, match="Only `'constant'` is supported"):
        layers.Resizing(3, 4, fill_mode="reflect", pad_to_aspect_ratio=True)(x)
    with pytest.raises(ValueError, match="Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio`"):
        layers.Resizing(3, 4, crop_to_aspect_ratio=True, pad_to_aspect_ratio=True)(x)


def test_sequential_builds_from_a_first_layer_with_an_input_shape():
    aug = tf.keras.Sequential([layers.RandomFlip("horizontal", input_shape=(8, 8, 3)), layers.RandomRotation(0.1)])
    m = tf.keras.Sequential([aug, layers.Conv2D(2, 3), layers.Flatten(), layers.Dense(3)])
    assert m.built and m.input_shape == (None, 8, 8, 3) and m.output_shape == (None, 3)
    assert m.count_params() == 275
    assert not tf.keras.Sequential([aug]).built  # a single layer: Keras does not build
    m3 = tf.keras.Sequential()
    m3.add(aug)
    assert not m3.built
    m3.add(layers.Dense(2))
    assert m3.built and m3.output_shape == (None, 8, 8, 2)
    i = tf.keras.Input((5,))
    f = tf.keras.Model(i, layers.Dense(4)(i))
    m4 = tf.keras.Sequential([f, layers.Dense(2)])
    assert m4.built and m4.input_shape == (None, 5) and len(m4.weights) == 4
