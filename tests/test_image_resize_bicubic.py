"""tf.image.resize(method="bicubic" and "area"). Bicubic is TF 2.21's ResizeBicubic with half-pixel centres
(Keys' cubic with a=-0.5 from its 1024-step table, out-of-image taps dropped, the weights renormalized); area
is ResizeArea (no gradient, as TF). Values and gradients pinned from TF (equal to float32 rounding)."""

import logging

import numpy as np
import pytest

import tapeflow as tf

X = np.arange(1, 13, dtype="float32").reshape(1, 3, 4, 1)


def test_bicubic_values_and_gradient_as_tf():
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.image.resize(x, (5, 3), method="bicubic")
        loss = tf.reduce_sum(y * tf.constant(np.arange(15, dtype="float32").reshape(1, 5, 3, 1)))
    np.testing.assert_allclose(y.numpy().ravel(), [
        0.8009793758392334, 2.197897434234619, 3.594815492630005, 2.3285341262817383, 3.725452184677124,
        5.122370719909668, 5.103081226348877, 6.5, 7.896917819976807, 7.877629280090332, 9.274547576904297,
        10.671465873718262, 9.405182838439941, 10.802101135253906, 12.199020385742188], rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(loss, x).numpy().ravel(), [
        1.165505051612854, 1.9516923427581787, 2.408573627471924, 4.141361236572266, 8.005104064941406,
        7.548521041870117, 7.994936466217041, 10.912788391113281, 15.220076560974121, 13.499311447143555,
        13.956193923950195, 18.195932388305664], rtol=1e-6)
    ones = tf.image.resize(np.ones((4, 4, 2), "float32"), (2, 6), method="bicubic").numpy()[0, :, 0]
    assert ones.tolist() == [0.9999999403953552, 1.0, 1.0, 1.0, 1.0, 0.9999999403953552]  # TF's rounding


def test_bicubic_inside_tf_function(caplog):
    x = np.random.default_rng(0).random((2, 4, 4, 3)).astype("float32")
    eager = tf.image.resize(x, (8, 8), method="bicubic").numpy()
    traced = tf.function(lambda a: tf.image.resize(a, (8, 8), method="bicubic"))(tf.constant(x))
    np.testing.assert_array_equal(traced.numpy(), eager)
    # with run-time image sizes tf.function falls back to one trace per shape (and logs why)
    f = tf.function(lambda a: tf.image.resize(a, (8, 8), method="bicubic"),
                    input_signature=[tf.TensorSpec((None, None, None, 3))])
    with caplog.at_level(logging.WARNING):
        np.testing.assert_array_equal(f(tf.constant(x)).numpy(), eager)
    assert "sizes known only at run time" in caplog.text


def test_area_values_as_tf_and_no_gradient_as_tf():
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.image.resize(x, (2, 3), method="area")
        loss = tf.reduce_sum(y)
    assert y.dtype == tf.float32 and y.numpy().ravel().tolist() == [
        2.5833334922790527, 3.8333334922790527, 5.0833330154418945, 7.9166669845581055, 9.166666984558105,
        10.416666030883789]  # TF 2.21's
    with pytest.raises(LookupError, match="gradient registry has no entry for: ResizeArea"):
        tape.gradient(loss, x)
    traced = tf.function(lambda a: tf.image.resize(a, (2, 3), method="area"))(x)
    np.testing.assert_array_equal(traced.numpy(), y.numpy())
    u8 = np.arange(30, dtype=np.uint8).reshape(5, 6, 1)
    assert tf.image.resize(u8, (2, 3), method="area").dtype == tf.float32


def test_kernel_filter_resizes_and_antialias_as_tf():
    x = tf.constant(np.arange(1, 13, dtype="float32").reshape(1, 3, 4, 1))
    want = {  # TF 2.21's (ScaleAndTranslate), to float32 rounding
        ("lanczos3", False): [1.4125678539276123, 1.722689151763916, 2.402404546737671],
        ("mitchellcubic", False): [1.8638265132904053, 2.1974568367004395, 2.8110649585723877],
        ("bilinear", True): [2.5, 2.8571431636810303, 3.428571939468384],
        ("lanczos5", True): [1.9088470935821533, 2.331634283065796, 2.9565389156341553]}
    for (method, aa), first in want.items():
        y = tf.image.resize(x, (2, 7), method=method, antialias=aa)
        assert y.dtype == tf.float32 and y.shape == (1, 2, 7, 1)
        np.testing.assert_allclose(y.numpy()[0, 0, :3, 0], first, rtol=2e-6, err_msg=method)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(tf.image.resize(x, (2, 7), method="lanczos3", antialias=True))
    assert tape.gradient(loss, x).shape == (1, 3, 4, 1)
    assert tf.image.resize(x, (10, 10), preserve_aspect_ratio=True).shape == (1, 8, 10, 1)  # as TF (3x4 -> 7.5x10)
    assert tf.image.resize(np.ones((5, 7, 1), "float32"), (3, 100), "nearest", True).shape == (3, 4, 1)
