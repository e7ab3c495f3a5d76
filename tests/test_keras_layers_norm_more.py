"""Keras 3.15's GroupNormalization, RMSNormalization and the 3-D global poolings, forward values pinned from
real Keras on fixed inputs and weights (tests never import TF)."""

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers
X = np.random.RandomState(0).randn(2, 3, 4, 6).astype(np.float32)


def test_group_normalization_matches_keras():
    g = L.GroupNormalization(groups=3, name="gn")
    g(X)
    g.set_weights([np.linspace(0.5, 1.5, 6).astype(np.float32), np.linspace(-1, 1, 6).astype(np.float32)])
    y = g(X).numpy()
    np.testing.assert_allclose(y.ravel()[:12], [-0.26101, -0.44202, 0.92103, 2.98831, 2.98915, -0.6093,
                               -0.63469, -0.79648, -0.07362, 0.93179, 0.69673, 3.12244], rtol=1e-4, atol=1e-5)
    assert float(np.sum(y ** 2)) == pytest.approx(230.55419921875, rel=1e-5)
    cfg = {k: v for k, v in g.get_config().items() if k != "dtype"}
    assert cfg == {'name': 'gn',
         'trainable': True,
         'groups': 3,
         'axis': -1,
         'epsilon': 0.001,
         'center': True,
         'scale': True,
         'beta_initializer': {'module': 'keras.initializers',
                              'class_name': 'Zeros',
                              'config': {},
                              'registered_name': None},
         'gamma_initializer': {'module': 'keras.initializers',
                               'class_name': 'Ones',
                               'config': {},
                               'registered_name': None},
         'beta_regularizer': None,
         'gamma_regularizer': None,
         'beta_constraint': None,
         'gamma_constraint': None}
    gi = L.GroupNormalization(groups=-1, axis=1, epsilon=0.01, center=False, name="gi")
    weighted = float(np.sum(gi(X).numpy() * np.arange(X.size).reshape(X.shape)))
    assert weighted == pytest.approx(-28.262440223246813, rel=2e-5)
    assert [w.shape[0] for w in gi.weights] == [3]
    with pytest.raises(ValueError, match=r"Number of groups \(4\) must be a multiple of the number of channels \(6\)"):
        L.GroupNormalization(groups=4)(X)
    with pytest.raises(ValueError, match="Received an invalid value for argument `groups`"):
        L.GroupNormalization(groups=0)
    with pytest.raises(ValueError, match=r"Number of groups \(12\) cannot be more than the number of channels"):
        L.GroupNormalization(groups=12)(X)


def test_group_normalization_gradients_numerically():
    g = L.GroupNormalization(groups=2, dtype="float64")
    x = tf.constant(np.random.RandomState(1).randn(2, 3, 4).astype(np.float64))
    g.build((None, 3, 4))
    w = tf.constant(np.random.RandomState(2).randn(2, 3, 4))
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(tf.cast(g(x), tf.float64) * w)
    grad = tape.gradient(loss, x).numpy()
    x0, eps, num = x.numpy(), 1e-6, np.zeros(x.shape)
    for i in np.ndindex(*x0.shape):
        d = np.zeros_like(x0)
        d[i] = eps
        num[i] = (float(tf.reduce_sum(tf.cast(g(x0 + d), tf.float64) * w))
                  - float(tf.reduce_sum(tf.cast(g(x0 - d), tf.float64) * w))) / (2 * eps)
    np.testing.assert_allclose(grad, num, rtol=1e-3, atol=1e-4)


def test_rms_normalization_matches_keras():
    r = L.RMSNormalization(name="rn")
    r.build(X.shape)
    r.set_weights([np.linspace(0.5, 2, 6).astype(np.float32)])
    np.testing.assert_allclose(r(X).numpy().ravel()[:12], [0.58383, 0.2119, 0.71263, 2.0766, 2.10149, -1.29376,
                               0.6464, -0.16476, -0.1545, 0.7822, 0.33321, 3.95773], rtol=1e-4, atol=1e-5)
    r2 = L.RMSNormalization(axis=[2, 3], epsilon=0.1, name="rn2")
    weighted = float(np.sum(r2(X).numpy() * np.arange(X.size).reshape(X.shape)))
    assert weighted == pytest.approx(965.8868574909866, rel=1e-5)
    assert list(r2.weights[0].shape) == [4, 6]
    cfg = {k: v for k, v in r2.get_config().items() if k != "dtype"}
    assert cfg == {"name": "rn2", "trainable": True, "axis": [2, 3], "epsilon": 0.1}


def test_global_3d_poolings_and_aliases():
    v = np.random.RandomState(0).randn(2, 3, 4, 5, 6).astype(np.float32)
    np.testing.assert_allclose(L.GlobalAveragePooling3D()(v).numpy(), v.mean(axis=(1, 2, 3)), rtol=1e-5, atol=1e-6)
    assert L.GlobalMaxPool3D(keepdims=True)(v).shape == (2, 1, 1, 1, 6)
    assert L.GlobalAvgPool3D is L.GlobalAveragePooling3D and L.GlobalMaxPool2D is L.GlobalMaxPooling2D
    np.testing.assert_allclose(L.GlobalMaxPool2D()(X).numpy(), X.max(axis=(1, 2)))
    with pytest.raises(ValueError, match="expected ndim=5, found ndim=4"):
        L.GlobalMaxPooling3D()(X)
    m = tf.keras.Sequential([tf.keras.Input((4, 6)), L.GroupNormalization(2), L.RMSNormalization()])
    assert m(X[0]).shape == (3, 4, 6)


def test_center_crop():
    x = np.arange(2 * 7 * 6 * 2, dtype=np.int32).reshape(2, 7, 6, 2)
    c = L.CenterCrop(3, 4, name="cc")
    y = c(x)
    assert y.dtype == tf.float32 and y.shape == (2, 3, 4, 2)
    np.testing.assert_array_equal(y.numpy(), x[:, 2:5, 1:5, :])
    np.testing.assert_array_equal(L.CenterCrop(4, 3)(x[0].astype(np.float32)).numpy(), x[0, 1:5, 1:4, :])
    cfg = {k: v for k, v in c.get_config().items() if k != "dtype"}
    assert cfg == {"name": "cc", "trainable": True, "height": 3, "width": 4, "data_format": "channels_last"}
    assert tf.keras.Sequential([tf.keras.Input((7, 6, 2)), L.CenterCrop(5, 5)]).output_shape == (None, 5, 5, 2)
    with pytest.raises(NotImplementedError, match="smaller than the target"):
        L.CenterCrop(9, 2)(x)


def test_alpha_dropout():
    x = np.random.RandomState(0).randn(4, 5).astype(np.float32)
    a = L.AlphaDropout(0.3, seed=1, name="ad")
    np.testing.assert_array_equal(a(x).numpy(), x)  # inference: identity
    assert {k: v for k, v in a.get_config().items() if k != "dtype"} == {"name": "ad", "trainable": True,
                                                                          "rate": 0.3, "seed": 1}
    z = np.random.RandomState(0).randn(200000).astype(np.float32)
    out = L.AlphaDropout(0.4, seed=3)(z, training=True).numpy()
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1.0) < 0.02  # SELU's fixed point kept (Keras: 0.0, 1.0)
    rate, alpha_p = 0.4, -1.6732632423543772 * 1.0507009873554805
    a_, b_ = ((1 - rate) * (1 + rate * alpha_p ** 2)) ** -0.5, -((1 - rate) * (1 + rate * alpha_p ** 2)) ** -0.5 \
        * alpha_p * rate
    dropped = np.isclose(out, a_ * alpha_p + b_)
    assert abs(dropped.mean() - rate) < 0.01
    np.testing.assert_allclose(out[~dropped], a_ * z[~dropped] + b_, rtol=1e-5, atol=1e-6)


def test_3d_poolings_match_keras():
    v = np.random.RandomState(0).randn(2, 5, 4, 6, 3).astype(np.float32)
    ref = v[:, :4, :4, :6].reshape(2, 2, 2, 2, 2, 3, 2, 3).max(axis=(2, 4, 6))
    np.testing.assert_array_equal(L.MaxPooling3D()(v).numpy(), ref)
    assert L.MaxPooling3D((3, 2, 2), strides=(1, 2, 3), padding="same")(v).shape == (2, 5, 2, 2, 3)
    avg = L.AveragePooling3D((2, 3, 2), strides=1, padding="same")(v).numpy()
    assert float(np.sum(avg * np.arange(v.size).reshape(v.shape))) == pytest.approx(-29405.218238678644, rel=1e-5)
    cfg = {k: (list(x) if isinstance(x, tuple) else x) for k, x in L.AveragePooling3D(
        3, strides=(1, 2, 1), padding="same", name="a").get_config().items() if k != "dtype"}
    assert cfg == {"name": "a", "trainable": True, "pool_size": [3, 3, 3], "padding": "same", "strides": [1, 2, 1],
                   "data_format": "channels_last"}
    assert L.MaxPool3D is L.MaxPooling3D and L.AvgPool3D is L.AveragePooling3D


def test_batch_normalization_synchronized_fits_as_keras_on_one_process():
    # Keras' TF backend computes synchronized moments from all-reduced sums (var = E[x^2] - E[x]^2) even on one
    # replica; values pinned from TF 2.21 / Keras 3.15 (the same program, import tensorflow as tf)
    rng = np.random.default_rng(0)
    x = (rng.normal(size=(64, 5)) * 3 + 2).astype("float32")
    y = rng.normal(size=(64, 1)).astype("float32")
    tf.keras.utils.set_random_seed(0)
    m = tf.keras.Sequential([tf.keras.Input((5,)), tf.keras.layers.Dense(4),
                             tf.keras.layers.BatchNormalization(synchronized=True), tf.keras.layers.Dense(1)])
    m.compile(tf.keras.optimizers.SGD(0.1), "mse")
    h = m.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False)
    bn = m.layers[1]
    assert bn.synchronized and bn.get_config()["synchronized"] is True
    np.testing.assert_allclose(h.history["loss"], [1.2428331, 0.845296], rtol=1e-5)
    np.testing.assert_allclose(bn.moving_variance.numpy()[:3], [1.0803726, 1.6907942, 1.6985843], rtol=1e-5)
    np.testing.assert_allclose(m.layers[2].kernel.numpy()[:2, 0], [-0.09576973, -0.45853904], rtol=1e-5)
    out = bn(tf.constant(x[:8, :4]), training=True).numpy()[0]
    np.testing.assert_allclose(out, [0.58790755, -0.20598656, 1.0028234, 0.00390017], rtol=1e-5, atol=1e-6)
