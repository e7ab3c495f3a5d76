"""Keras 3.15's Wrapper, UnitNormalization and adaptive poolings: values, configs and errors pinned from real
Keras on fixed inputs (tests never import TF)."""

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers
X1 = (np.arange(2 * 7 * 3, dtype="float32").reshape(2, 7, 3) * 0.37) % 1.3 - 0.5
X2 = (np.arange(2 * 5 * 7 * 3, dtype="float32").reshape(2, 5, 7, 3) * 0.29) % 1.1 - 0.4
X3 = (np.arange(1 * 5 * 4 * 6 * 2, dtype="float32").reshape(1, 5, 4, 6, 2) * 0.23) % 0.9 - 0.3

# (class, input, output_size, output shape, first 8 values, sum): real Keras 3.15
POOLS = [
    ("AdaptiveAveragePooling1D", X1, 3, (2, 3, 3),
     [0.176667, 0.113333, 0.05, 0.23, 0.6, 0.103334, -0.15, 0.22], 4.030006408691406),
    ("AdaptiveMaxPooling1D", X1, 4, (2, 4, 3), [0.61, -0.13, 0.24, 0.61, 0.79, 0.05, 0.23, 0.6], 8.71000862121582),
    ("AdaptiveAveragePooling2D", X2, (2, 3), (2, 2, 3, 3),
     [0.082222, 0.127777, 0.051111, 0.111111, 0.278889, 0.202222, 0.139999, 0.063333], 5.54661226272583),
    ("AdaptiveMaxPooling2D", X2, 3, (2, 3, 3, 3),
     [0.47, 0.53, 0.54, 0.6, 0.659999, 0.59, 0.65, 0.659999], 32.74991989135742),
    ("AdaptiveAveragePooling3D", X3, (2, 3, 4), (1, 2, 3, 4, 2),
     [0.050001, 0.130001, 0.060001, 0.140001, 0.080001, 0.16, 0.090001, 0.170001], 7.455056667327881),
    ("AdaptiveMaxPooling3D", X3, 2, (1, 2, 2, 2, 2),
     [0.460001, 0.49, 0.500001, 0.510001, 0.580001, 0.590001, 0.560001, 0.590001], 8.680018424987793),
]


@pytest.mark.parametrize("cls,x,size,shape,head,total", POOLS, ids=[p[0] for p in POOLS])
def test_adaptive_pooling_matches_keras(cls, x, size, shape, head, total):
    layer = getattr(L, cls)(size)
    y = layer(x).numpy()
    assert y.shape == shape
    np.testing.assert_allclose(y.ravel()[:8], head, atol=2e-6)
    assert float(y.sum()) == pytest.approx(total, rel=1e-6)
    cfg = layer.get_config()
    assert cfg["output_size"] == shape[1:-1] and cfg["data_format"] == "channels_last"
    again = getattr(L, cls).from_config(cfg)
    np.testing.assert_array_equal(again(x).numpy(), y)


def test_adaptive_pooling_channels_first_and_functional():
    y = L.AdaptiveAveragePooling2D(2, data_format="channels_first")(X2).numpy()
    assert y.shape == (2, 5, 2, 2) and float(y.sum()) == pytest.approx(5.999940872192383, rel=1e-6)
    inp = tf.keras.Input((7, 3))
    out = L.AdaptiveMaxPooling1D(2)(inp)
    assert tuple(out.shape) == (None, 2, 3)
    assert tf.keras.Model(inp, out).output_shape == (None, 2, 3)


def test_unit_normalization_matches_keras():
    u = L.UnitNormalization(axis=[1, 2])
    y = u(X2).numpy()
    np.testing.assert_allclose(y.ravel()[:6], [-0.187843, -0.054095, 0.090107, 0.220716, -0.167202, -0.02503],
                               atol=2e-6)
    assert float((y ** 2).sum()) == pytest.approx(6.0, rel=1e-6)
    assert u.get_config()["axis"] == [1, 2] and "build_config" not in tf.keras.layers.serialize(u)
    assert L.UnitNormalization()(np.zeros((1, 3), "float32")).numpy().tolist() == [[0.0, 0.0, 0.0]]
    x = tf.constant(X1)
    with tf.GradientTape() as tape:
        tape.watch(x)
        s = tf.reduce_sum(L.UnitNormalization()(x) * tf.constant([1.0, 2.0, 3.0]))
    g = tape.gradient(s, x).numpy()
    eps = 1e-3
    xp = X1.copy()
    xp[0, 0, 1] += eps
    num = (np.sum(L.UnitNormalization()(xp).numpy() * [1, 2, 3]) - float(s)) / eps
    assert g[0, 0, 1] == pytest.approx(num, rel=1e-2)


def test_wrapper_subclass_matches_keras():
    class W(L.Wrapper):
        def call(self, x):
            return self.layer(x) * 2.0

    w = W(L.Dense(2, kernel_initializer="ones", name="d"), name="w")
    assert w(np.ones((1, 3), "float32")).numpy().tolist() == [[6.0, 6.0]]
    assert [v.path for v in w.weights] == ["w/d/kernel", "w/d/bias"]
    cfg = w.get_config()
    assert sorted(cfg) == ["dtype", "layer", "name", "trainable"] and cfg["layer"]["class_name"] == "Dense"
    w2 = W.from_config(cfg)
    assert w2.layer.units == 2 and w2.layer.name == "d"


@pytest.mark.parametrize("make,err,msg", [
    (lambda: L.AdaptiveAveragePooling1D((2, 3)), ValueError,
     r"For 1D input, `output_size` tuple must have length 1. Received: \(2, 3\)"),
    (lambda: L.AdaptiveAveragePooling2D((2, 3, 4)), TypeError,
     r"`output_size` must be an integer or \(height, width\) tuple. Received: \(2, 3, 4\) of type <class 'tuple'>"),
    (lambda: L.AdaptiveMaxPooling3D("a"), TypeError,
     r"`output_size` must be an integer or \(depth, height, width\) tuple. Received: a of type <class 'str'>"),
    (lambda: L.UnitNormalization(axis="x"), TypeError,
     "Invalid value for `axis` argument: expected an int or a list/tuple of ints. Received: axis=x"),
    (lambda: L.AdaptiveMaxPooling2D(2, data_format="nhwc"), ValueError,
     "Invalid data_format: nhwc. Expected 'channels_first' or 'channels_last'."),
    (lambda: L.Wrapper(3), ValueError, "Layer 3 supplied to Wrapper isn't a supported layer type"),
])
def test_errors_match_keras(make, err, msg):
    with pytest.raises(err, match=msg):
        make()
