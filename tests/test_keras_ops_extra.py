"""``tf.keras.ops`` names added for issue 11 beyond the fixture's value checks: gradients through the
composites (built from differentiable tapeflow ops), graph mode, and errors of Keras's types."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tapeflow as tf

OPS = tf.keras.ops


def test_nan_reductions_differentiate_and_give_nan_entries_no_gradient():
    x = tf.Variable([[0.5, np.nan, 2.0], [1.0, 3.0, np.nan]], dtype="float64")
    with tf.GradientTape() as tape:
        y = OPS.sum(OPS.nanmean(x, axis=1)) + OPS.nanstd(x) + OPS.sum(OPS.nanmax(x, axis=0))
    g = tape.gradient(y, x).numpy()
    valid = ~np.isnan(x.numpy())
    assert np.all(g[~valid] == 0) and np.all(np.isfinite(g))
    # nanmean's share: 1/2 per valid entry of each row
    with tf.GradientTape() as tape:
        y = OPS.sum(OPS.nanmean(x, axis=1))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.where(valid, 0.5, 0.0))


def test_i0_derivative_is_i1():
    x = tf.Variable([-9.0, -2.5, 0.0, 1.0, 7.5, 8.5, 15.0], dtype="float64")
    with tf.GradientTape() as tape:
        y = OPS.sum(OPS.i0(x))
    # I1 by its series, to 1e-12 over this range
    xs = x.numpy()
    i1 = sum((xs / 2) ** (2 * k + 1) / (math.factorial(k) * math.factorial(k + 1)) for k in range(60))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), i1, rtol=1e-10)
    np.testing.assert_allclose(OPS.i0(x).numpy(), np.i0(xs), rtol=1e-14)


def test_gcd_lcm_and_windows_run_inside_tf_function():
    @tf.function
    def f(a, b):
        return OPS.gcd(a, b), OPS.lcm(a, b), OPS.logaddexp2(tf.cast(a, "float32"), 1.0)

    g, l, e = f(tf.constant([12, -18, 0, 7]), tf.constant([8, 12, 5, 0]))
    np.testing.assert_array_equal(g.numpy(), [4, 6, 5, 7])
    np.testing.assert_array_equal(l.numpy(), [24, 36, 0, 0])
    np.testing.assert_allclose(e.numpy(), np.logaddexp2([12.0, -18.0, 0.0, 7.0], 1.0), rtol=1e-6)
    np.testing.assert_allclose(OPS.hanning(7).numpy(), np.hanning(7), atol=1e-7)
    np.testing.assert_allclose(OPS.kaiser(7, 5.0).numpy(), np.kaiser(7, 5.0), atol=1e-6)


def test_bad_inputs_raise_keras_errors():
    with pytest.raises(TypeError, match="gcd must be integers"):
        OPS.gcd(tf.constant([1.5]), tf.constant([2.0]))
    with pytest.raises(TypeError, match="ldexp exponent must be an integer"):
        OPS.ldexp(tf.constant([1.5]), tf.constant([2.0]))
    with pytest.raises(ValueError, match="1-dimensional"):
        OPS.histogram(tf.ones((2, 2)))
    with pytest.raises(tf.errors.InvalidArgumentError):
        OPS.nanmedian(tf.constant([[1, 2]]), axis=0)


def test_unfold_and_fold_are_adjoint_and_differentiate():
    rng = np.random.default_rng(0)
    x = tf.Variable(rng.normal(size=(2, 3, 7, 6)))
    y = tf.constant(rng.normal(size=(2, 3 * 3 * 2, 4 * 6)))
    args = dict(kernel_size=(3, 2), dilation=(1, 2), padding=1, stride=(2, 1))
    with tf.GradientTape() as tape:
        inner = OPS.sum(OPS.unfold(x, **args) * y)
    # d<unfold(x), y>/dx = fold(y): the gradient of one is the other
    np.testing.assert_allclose(tape.gradient(inner, x).numpy(), OPS.fold(y, (7, 6), **args).numpy(), rtol=1e-12)


def test_conv_transpose_is_the_adjoint_of_conv():
    rng = np.random.default_rng(1)
    for x_shape, k_shape, kw in (((2, 4, 4, 3), (3, 3, 2, 3), dict(strides=2, padding="same")),
                                 ((1, 5, 3), (3, 4, 3), dict(strides=2)),
                                 ((1, 3, 4, 3, 2), (2, 2, 3, 3, 2), dict(strides=(2, 1, 2), padding="same"))):
        x = tf.Variable(rng.normal(size=x_shape))
        w = tf.constant(rng.normal(size=k_shape))
        with tf.GradientTape() as tape:
            out = OPS.conv_transpose(x, w, **kw)
            y = tf.constant(rng.normal(size=out.shape))
            inner = OPS.sum(out * y)
        # <conv_transpose(x, w), y> = <x, conv(y, w)>
        np.testing.assert_allclose(tape.gradient(inner, x).numpy(), OPS.conv(y, w, **kw).numpy(), rtol=1e-10)


def test_ctc_loss_gradient_is_tfs():
    # TF 2.21 / Keras 3.15: keras.ops.ctc_loss and its gradient (TF's custom one) for these logits
    logits = tf.Variable((np.sin(np.arange(2 * 4 * 3) * 0.9) * 1.5).reshape(2, 4, 3).astype("float32"))
    with tf.GradientTape() as tape:
        loss = OPS.ctc_loss(np.array([[1, 2], [2, 0]]), logits, np.array([2, 1]), np.array([4, 3]))
    np.testing.assert_allclose(loss.numpy(), [1.5509386, 1.4014276], rtol=1e-6)
    want = [[[0.052965, -0.557128, 0.504163], [0.047835, -0.048442, 0.000607], [0.052047, 0.207294, -0.259341],
             [-0.229888, 0.279334, -0.049445]],
            [[-0.008397, 0.199268, -0.190871], [-0.155501, 0.452408, -0.296907], [-0.27035, 0.218683, 0.051667],
             [0.0, 0.0, 0.0]]]
    np.testing.assert_allclose(tape.gradient(loss, logits).numpy(), want, atol=2e-6)


def test_ctc_decode_runs_inside_tf_function():
    logits = np.sin(np.arange(2 * 5 * 4) * 1.7).reshape(2, 5, 4).astype("float32")
    lengths = np.array([5, 3], "int32")
    eager = OPS.ctc_decode(logits, lengths, strategy="beam_search", beam_width=3, top_paths=2)
    traced = tf.function(lambda x, n: OPS.ctc_decode(x, n, strategy="beam_search", beam_width=3, top_paths=2))(
        tf.constant(logits), tf.constant(lengths))
    for e, g in zip(eager, traced):
        np.testing.assert_array_equal(e.numpy(), g.numpy())
    assert traced[0].shape == (2, 2, 5) and traced[1].shape == (2, 2)


def test_jvp_as_keras():
    # values from Keras 3.15 (TF backend) for the same calls on tensors
    c = tf.constant
    p, t = OPS.jvp(lambda x, y: OPS.sin(x) * y, (c([0.1, 0.5]), c([2.0, 3.0])), (c([1.0, 0.0]), c([0.5, 1.0])))
    np.testing.assert_allclose(p.numpy(), [0.19966684, 1.4382766], rtol=1e-6)
    np.testing.assert_allclose(t.numpy(), [2.039925, 0.47942555], rtol=1e-6)
    p, t, aux = OPS.jvp(lambda x: ({"a": x * x, "b": OPS.exp(x)}, x + 1), (c([1.0, 2.0]),), (c([1, 1]),),
                        has_aux=True)
    np.testing.assert_allclose(t["a"].numpy(), [2.0, 4.0])
    np.testing.assert_allclose(t["b"].numpy(), [2.7182817, 7.389056], rtol=1e-6)
    np.testing.assert_allclose(aux.numpy(), [2.0, 3.0])


def test_associative_scan_differentiates_and_lu_factor_matches_finite_differences():
    x = tf.Variable([1.0, 2.0, 0.5, -1.0, 3.0], dtype="float64")
    with tf.GradientTape() as tape:
        y = OPS.sum(OPS.associative_scan(lambda a, b: a * b, x))
    # d/dx_i of sum_k prod_{j<=k} x_j
    xs, eps = x.numpy(), 1e-6
    f = lambda v: np.cumprod(v).sum()  # noqa: E731
    fd = [(f(xs + eps * np.eye(5)[i]) - f(xs - eps * np.eye(5)[i])) / (2 * eps) for i in range(5)]
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), fd, rtol=1e-7)
    a = np.array([[2.0, 1.0, 0.5], [4.0, -1.0, 2.0], [1.0, 3.0, 1.0]])
    w = np.arange(9.0).reshape(3, 3)
    v = tf.Variable(a)
    with tf.GradientTape() as tape:
        y = OPS.sum(OPS.lu_factor(v)[0] * w)
    h = lambda m: float(np.sum(OPS.lu_factor(m)[0].numpy() * w))  # noqa: E731
    fd = np.array([[(h(a + eps * np.eye(9)[3 * i + j].reshape(3, 3)) - h(a - eps * np.eye(9)[3 * i + j].reshape(3, 3)))
                    / (2 * eps) for j in range(3)] for i in range(3)])
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), fd, rtol=1e-6, atol=1e-8)


def test_keras_ctc_loss_class_as_keras():
    # Keras 3.15 (TF backend): CTC()(y, p), reduction None, and the function
    y = np.array([[1, 2, 2, 0], [3, 0, 0, 0]])
    p = (np.sin(np.arange(2 * 6 * 5) * 0.7) * 2).reshape(2, 6, 5).astype("float32")
    np.testing.assert_allclose(tf.keras.losses.CTC()(y, p).numpy(), 7.8544083, rtol=1e-6)
    np.testing.assert_allclose(tf.keras.losses.get("ctc")(y, p).numpy(), [8.829721, 6.8790946], rtol=1e-6)
    assert tf.keras.losses.CTC().get_config() == {"name": "ctc", "reduction": "sum_over_batch_size"}
