"""keras.applications.MobileNet (v1) as Keras 3.15 builds it: names, parameter counts, weight paths and
predictions on patterned weights pinned from Keras 3.15.1."""

import numpy as np
import pytest

import tapeflow as tf


def _patterned(model):
    pat = []
    for i, w in enumerate(model.weights):
        v = np.sin(np.arange(int(np.prod(w.shape)), dtype=np.float64) * 0.37 + i).reshape(w.shape) * 0.2
        pat.append((np.abs(v) + 0.5 if "moving_variance" in w.path else v).astype(np.float32))
    model.set_weights(pat)


@pytest.mark.parametrize("alpha, shape, top, classes, name, params, out, first", [
    (0.25, (64, 64, 3), False, 1000, "mobilenet_0.25_64", 218544, 256,
     [0.07479386031627655, 0.12704958021640778, 0.1580413579940796, 0.17427191138267517]),
    (0.5, (96, 96, 3), True, 7, "mobilenet_0.50_96", 833127, 7,
     [0.1336326152086258, 0.12814655900001526, 0.1279098093509674, 0.1329265981912613]),
])
def test_mobilenet_matches_keras(alpha, shape, top, classes, name, params, out, first):
    m = tf.keras.applications.MobileNet(input_shape=shape, alpha=alpha, include_top=top, weights=None,
                                        pooling=None if top else "avg", classes=classes)
    assert (m.name, m.count_params(), len(m.layers)) == (name, params, 91 if top else 87)
    names = [layer.name for layer in m.layers]
    assert names[1:8] == ["conv1", "conv1_bn", "conv1_relu", "conv_dw_1", "conv_dw_1_bn", "conv_dw_1_relu",
                          "conv_pw_1"]
    if top:
        assert names[-4:] == ["dropout", "conv_preds", "reshape_2", "predictions"]
    _patterned(m)
    x = (np.cos(np.arange(int(np.prod(shape)), dtype=np.float64) * 0.11).reshape((1,) + shape) * 0.5)
    y = m(x.astype(np.float32), training=False).numpy()
    assert y.shape == (1, out)
    np.testing.assert_allclose(y.ravel()[:4], first, rtol=1e-5)
    if not top:
        np.testing.assert_allclose(y.sum(), 20.53369140625, rtol=1e-5)


def test_mobilenet_default_and_preprocess_input():
    m = tf.keras.applications.MobileNet(weights=None)
    assert (m.name, m.count_params()) == ("mobilenet_1.00_224", 4253864)
    x = np.array([[[0.0, 127.5, 255.0]]], np.float32)
    np.testing.assert_allclose(tf.keras.applications.mobilenet.preprocess_input(x), [[[-1.0, 0.0, 1.0]]])
