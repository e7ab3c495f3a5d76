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
