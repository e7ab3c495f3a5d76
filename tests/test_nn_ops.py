"""tf.nn behaviour pinned against TensorFlow 2.21 (values, kinks, ties, edge
cases, errors). Gradients to second order are checked registry-wide in
tests/test_op_gradients.py (specs in tests/op_specs/nn.py)."""

import numpy as np
import pytest

import tapeflow as tf

KINKS = np.array([[-1.0, 0.0, 3.0, 6.0, 7.0]], np.float32)


def _value_and_grad(fn, x):
    x = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    return y.numpy(), tape.gradient(y, x).numpy()


# -- activations: values and the gradient at the kinks, as TF -----------------

@pytest.mark.parametrize("fn, value, grad", [
    (tf.nn.relu6, [0, 0, 3, 6, 6], [0, 0, 1, 0, 0]),
    (tf.nn.leaky_relu, [-0.2, 0, 3, 6, 7], [0.2, 0.2, 1, 1, 1]),
    (tf.nn.elu, [-0.63212055, 0, 3, 6, 7], [0.36787945, 1, 1, 1, 1]),
    (tf.nn.selu, [-1.1113307, 0, 3.152103, 6.304206, 7.354907], [0.64676857, 1.050701, 1.050701, 1.050701, 1.050701]),
    (tf.nn.softsign, [-0.5, 0, 0.75, 0.85714287, 0.875], [0.25, 1, 0.0625, 0.02040816, 0.015625]),
    (tf.nn.silu, [-0.26894143, 0, 2.8577223, 5.985164, 6.993623], [0.07232948, 0.5, 1.0881041, 1.0123265, 1.0054606]),
    (lambda x: tf.nn.gelu(x, approximate=True), [-0.158808, 0, 2.9963627, 6, 7],
     [-0.08296409, 0.5, 1.0115842, 1, 1]),
])
def test_activation_values_and_kink_gradients_match_tf(fn, value, grad):
    y, g = _value_and_grad(fn, KINKS)
    assert y.dtype == np.float32
    np.testing.assert_allclose(y[0], value, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(g[0], grad, rtol=2e-6, atol=1e-7)


def test_gelu_exact_matches_tf_and_its_derivative():
    y, g = _value_and_grad(tf.nn.gelu, KINKS)
    np.testing.assert_allclose(y[0], [-0.15865526, 0, 2.9959502, 6, 7], rtol=2e-6)
    # Phi(x) + x phi(x)
    x = KINKS[0].astype(np.float64)
    from math import erf, exp, pi, sqrt

    expected = [0.5 * (1 + erf(v / sqrt(2))) + v * exp(-v * v / 2) / sqrt(2 * pi) for v in x]
    np.testing.assert_allclose(g[0], expected, rtol=1e-6, atol=1e-7)


def test_leaky_relu_alpha_and_integer_input():
    np.testing.assert_allclose(tf.nn.leaky_relu(tf.constant([-1.0, 3.0]), alpha=2.0).numpy(), [-2.0, 3.0])
    y = tf.nn.leaky_relu(tf.constant([-1, 3, 9]))
    assert y.dtype == tf.float32
    np.testing.assert_allclose(y.numpy(), [-0.2, 3, 9])


def test_relu6_keeps_integer_dtype():
    y = tf.nn.relu6(tf.constant([-1, 3, 9]))
    assert y.dtype == tf.int32 and y.numpy().tolist() == [0, 3, 6]


def test_swish_beta_and_log_sigmoid_are_stable():
    np.testing.assert_allclose(tf.nn.swish(tf.constant(KINKS), beta=2.0).numpy()[0],
                               [-0.11920292, 0, 2.992582, 5.9999633, 6.9999943], rtol=2e-6)
    # TF flushes the denormal exp(-100) to 0; NumPy keeps it: equal to 1e-30.
    np.testing.assert_allclose(tf.nn.log_sigmoid(tf.constant([-100.0, 100.0])).numpy(), [-100.0, -0.0], atol=1e-30)


@pytest.mark.parametrize("fn", [tf.nn.elu, tf.nn.selu, tf.nn.softsign, tf.nn.softmax])
def test_float_only_activations_reject_integers(fn):
    with pytest.raises(tf.errors.InvalidArgumentError, match="int32"):
        fn(tf.constant([-1, 3, 9]))


def test_gelu_rejects_integers_with_value_error():
    # TF's Python wrapper checks the dtype before any kernel.
    with pytest.raises(ValueError, match="must be a floating point tensor"):
        tf.nn.gelu(tf.constant([-1, 3, 9]))


# -- softmax -------------------------------------------------------------------

def test_softmax_any_axis_and_stable():
    np.testing.assert_allclose(tf.nn.softmax(tf.constant([[1.0, 2], [3, 5]]), axis=0).numpy(),
                               [[0.11920291, 0.04742587], [0.880797, 0.95257413]], rtol=1e-6)
    np.testing.assert_array_equal(tf.nn.softmax(tf.constant([1000.0, 0])).numpy(), [1.0, 0.0])
    np.testing.assert_array_equal(tf.nn.log_softmax(tf.constant([1000.0, 0])).numpy(), [0.0, -1000.0])
    np.testing.assert_array_equal(tf.nn.softmax(tf.constant([-np.inf, 0.0])).numpy(), [0.0, 1.0])
    np.testing.assert_array_equal(tf.nn.log_softmax(tf.constant([-np.inf, 0.0])).numpy(), [-np.inf, 0.0])
    assert np.isnan(tf.nn.softmax(tf.constant([-np.inf, -np.inf])).numpy()).all()


def test_softmax_bad_axis_is_invalid_argument():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"`dim` must be in the range \[-1, 1\)"):
        tf.nn.softmax(tf.constant([1.0, 2.0]), axis=2)


def test_softmax_gradient_sums_to_zero_along_axis():
    x = tf.constant(np.random.default_rng(0).standard_normal((3, 4)))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.softmax(x, axis=0) * tf.constant(np.arange(12.0).reshape(3, 4))
    g = tape.gradient(y, x).numpy()
    np.testing.assert_allclose(g.sum(axis=0), 0, atol=1e-12)


# -- cross-entropies -------------------------------------------------------------

def test_softmax_cross_entropy_values_and_gradient_into_labels():
    labels, logits = tf.constant([[0.2, 0.8, 0.0]]), tf.constant([[1.0, 2, 3]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([labels, logits])
        loss = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    np.testing.assert_allclose(loss.numpy(), [1.6076059], rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(loss, labels).numpy(), [[2.407606, 1.4076059, 0.40760595]], rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(loss, logits).numpy(), [[-0.10996943, -0.5552715, 0.66524094]],
                               rtol=1e-6)


def test_softmax_cross_entropy_axis0():
    loss = tf.nn.softmax_cross_entropy_with_logits(labels=tf.constant([[0.2, 0.8], [0.8, 0.2]]),
                                                   logits=tf.constant([[1.0, 2], [3, 4]]), axis=0)
    np.testing.assert_allclose(loss.numpy(), [0.52692807, 1.7269281], rtol=1e-6)


def test_softmax_cross_entropy_shape_mismatch():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"logits_size=\[2, 3\] labels_size=\[2, 4\]"):
        tf.nn.softmax_cross_entropy_with_logits(labels=tf.ones([2, 4]), logits=tf.ones([2, 3]))


def test_sparse_softmax_cross_entropy_values_rank3_and_grad():
    logits = tf.reshape(tf.range(6.0), [1, 2, 3])
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([[0, 1]]), logits=logits)
    assert loss.shape == (1, 2)
    np.testing.assert_allclose(loss.numpy(), [[2.407606, 1.4076059]], rtol=1e-6)
    lg = tf.constant([[1.0, 2.0, 3.0]])
    with tf.GradientTape() as tape:
        tape.watch(lg)
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([1]), logits=lg)
    softmax = np.exp([1.0, 2, 3]) / np.exp([1.0, 2, 3]).sum()
    np.testing.assert_allclose(tape.gradient(loss, lg).numpy()[0], softmax - [0, 1, 0], rtol=1e-6)


@pytest.mark.parametrize("labels, bad", [([0, 5], 5), ([0, -1], -1)])
def test_sparse_softmax_cross_entropy_out_of_range_label(labels, bad):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=rf"Received a label value of {bad} which is outside the valid range of \[0, 3\)"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant(labels), logits=tf.ones([2, 3]))


def test_sparse_softmax_cross_entropy_bad_labels():
    with pytest.raises(ValueError, match="must equal `logits.shape` except for the last dimension"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([0, 1, 1]), logits=tf.ones([2, 3]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Tlabels"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([0.0, 1.0]), logits=tf.ones([2, 3]))


def test_sigmoid_cross_entropy_is_stable_and_checks_shapes():
    loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.constant([0.0, 1, 0.5]),
                                                   logits=tf.constant([-100.0, 3, 100]))
    np.testing.assert_allclose(loss.numpy(), [0.0, 4.8587352e-02, 50.0], rtol=1e-6, atol=1e-30)
    with pytest.raises(ValueError, match=r"must have the same shape, received \(\(3,\) vs \(2,\)\)"):
        tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.constant([0.0, 1]), logits=tf.constant([-100.0, 3, 100]))


# -- losses and normalization ---------------------------------------------------------

def test_l2_loss_and_l2_normalize():
    assert tf.nn.l2_loss(tf.constant([1.0, 2, 3])).numpy() == 7.0
    np.testing.assert_allclose(tf.nn.l2_normalize(tf.constant([[3.0, 4], [0, 0]]), axis=1).numpy(),
                               [[0.6, 0.8], [0, 0]])
    np.testing.assert_allclose(tf.nn.l2_normalize(tf.constant([[3e-7, 4e-7]]), axis=1, epsilon=1e-12).numpy(),
                               [[0.3, 0.4]], rtol=1e-6)
    np.testing.assert_allclose(tf.nn.l2_normalize(tf.constant([[3.0, 4], [0, 0]])).numpy(), [[0.6, 0.8], [0, 0]])


def test_moments_axes_keepdims_and_integers():
    mean, var = tf.nn.moments(tf.constant([[1.0, 2], [3, 5]]), axes=[0])
    np.testing.assert_allclose(mean.numpy(), [2.0, 3.5])
    np.testing.assert_allclose(var.numpy(), [1.0, 2.25])
    mean, var = tf.nn.moments(tf.constant([[1.0, 2], [3, 5]]), axes=[0, 1], keepdims=True)
    assert mean.shape == (1, 1) and var.shape == (1, 1)
    np.testing.assert_allclose([mean.numpy()[0, 0], var.numpy()[0, 0]], [2.75, 2.1875])
    mean, var = tf.nn.moments(tf.constant([[1, 2], [3, 5]]), axes=[0])
    assert mean.dtype == tf.int32 and mean.numpy().tolist() == [2, 3] and var.numpy().tolist() == [1, 2]


def test_batch_normalization():
    np.testing.assert_allclose(tf.nn.batch_normalization(tf.constant([1.0, 2]), 1.0, 4.0, 0.5, 2.0, 1e-3).numpy(),
                               [0.5, 1.4998751], rtol=1e-6)
    np.testing.assert_allclose(tf.nn.batch_normalization(tf.constant([1.0, 2]), 1.0, 4.0, None, None, 1e-3).numpy(),
                               [0.0, 0.49993753], rtol=1e-6)


def test_bias_add_formats_and_errors():
    y = tf.nn.bias_add(tf.zeros([1, 2, 3, 3]), tf.constant([1.0, 2]), data_format="NCHW")
    np.testing.assert_array_equal(y.numpy()[0, :, 0, 0], [1.0, 2.0])
    x, b = tf.constant(np.ones((2, 3))), tf.constant([1.0, 2.0, 3.0], dtype=tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(b)
        y = tf.nn.bias_add(x, b)
    np.testing.assert_array_equal(tape.gradient(y, b).numpy(), [2.0, 2.0, 2.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"last dimension of the input tensor: \[4\] vs. \[2,3\]"):
        tf.nn.bias_add(tf.ones([2, 3]), tf.ones([4]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"at least 2D: \[2\]"):
        tf.nn.bias_add(tf.zeros([2]), tf.constant([1.0, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Biases must be 1D: \[1,2\]"):
        tf.nn.bias_add(tf.zeros([2, 2]), tf.constant([[1.0, 2]]))


# -- convolutions --------------------------------------------------------------------

def _naive_conv2d(x, w, stride, pads, dilation):
    """Direct loops, independent of the im2col kernel."""
    x = np.pad(x, ((0, 0), pads[0], pads[1], (0, 0)))
    n, h, wd, _ = x.shape
    kh, kw, _, co = w.shape
    eh, ew = (kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1
    oh, ow = (h - eh) // stride[0] + 1, (wd - ew) // stride[1] + 1
    out = np.zeros((n, oh, ow, co))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride[0]:i * stride[0] + eh:dilation[0], j * stride[1]:j * stride[1] + ew:dilation[1]]
            out[:, i, j] = np.tensordot(patch, w, axes=3)
    return out


@pytest.mark.parametrize("shape, k, stride, padding, pads, dilation", [
    ((2, 6, 5, 3), 3, 1, "SAME", ((1, 1), (1, 1)), 1),
    ((2, 6, 5, 3), 2, 1, "SAME", ((0, 1), (0, 1)), 1),  # asymmetric: the extra row/col at the bottom/right
    ((2, 7, 6, 3), 3, 2, "SAME", ((1, 1), (0, 1)), 1),
    ((2, 6, 6, 3), 2, 2, "SAME", ((0, 0), (0, 0)), 1),
    ((2, 7, 6, 3), 3, 2, "VALID", ((0, 0), (0, 0)), 1),
    ((1, 7, 7, 2), 2, 1, "SAME", ((1, 1), (1, 1)), 2),
    ((1, 5, 5, 2), 2, 2, [[0, 0], [1, 0], [0, 2], [0, 0]], ((1, 0), (0, 2)), 1),
])
def test_conv2d_matches_direct_loops(shape, k, stride, padding, pads, dilation):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    w = rng.standard_normal((k, k, shape[3], 4))
    y = tf.nn.conv2d(tf.constant(x), tf.constant(w), stride, padding, dilations=dilation)
    np.testing.assert_allclose(y.numpy(), _naive_conv2d(x, w, (stride, stride), pads, (dilation, dilation)),
                               rtol=1e-10, atol=1e-10)


def test_conv2d_pinned_tf_values():
    x5 = tf.reshape(tf.range(25.0), [1, 5, 5, 1])
    np.testing.assert_array_equal(
        tf.nn.conv2d(x5, tf.ones([2, 2, 1, 1]), 2, [[0, 0], [1, 0], [0, 2], [0, 0]]).numpy().ravel(),
        [1, 5, 4, 32, 40, 23, 72, 80, 43])
    np.testing.assert_array_equal(
        tf.nn.conv2d(tf.reshape(tf.range(16.0), [1, 4, 4, 1]), tf.ones([2, 2, 1, 1]), 1, "SAME").numpy().ravel(),
        [10, 14, 18, 10, 26, 30, 34, 18, 42, 46, 50, 26, 25, 27, 29, 15])
    y = tf.nn.conv2d(tf.reshape(tf.range(49.0), [1, 7, 7, 1]), tf.ones([2, 2, 1, 1]), 1, "SAME", dilations=2)
    np.testing.assert_array_equal(y.numpy().ravel()[:8], [8, 16, 18, 20, 22, 24, 12, 16])
    yi = tf.nn.conv2d(tf.ones([1, 5, 5, 3], tf.int32), tf.ones([3, 3, 3, 2], tf.int32), 1, "SAME")
    assert yi.dtype == tf.int32 and yi.numpy()[0, :, 0, 0].tolist() == [12, 18, 18, 18, 12]


def test_conv2d_nchw_and_strides_list():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 5, 5, 3)), rng.standard_normal((3, 3, 3, 4))
    nhwc = tf.nn.conv2d(tf.constant(x), tf.constant(w), [1, 2, 2, 1], "SAME")
    nchw = tf.nn.conv2d(tf.constant(x.transpose(0, 3, 1, 2)), tf.constant(w), [1, 1, 2, 2], "SAME",
                        data_format="NCHW")
    assert nchw.shape == (2, 4, 3, 3)
    np.testing.assert_allclose(nchw.numpy().transpose(0, 2, 3, 1), nhwc.numpy(), rtol=1e-12)


def test_conv2d_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="evenly divisible by filter depth: 3 vs 4"):
        tf.nn.conv2d(tf.ones([1, 5, 5, 3]), tf.ones([3, 3, 4, 2]), 1, "SAME")
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected to be a float tensor but is a double"):
        tf.nn.conv2d(tf.ones([1, 5, 5, 3]), tf.ones([3, 3, 3, 2], tf.float64), 1, "SAME")
    with pytest.raises(tf.errors.InvalidArgumentError, match="attr 'padding'"):
        tf.nn.conv2d(tf.ones([1, 5, 5, 3]), tf.ones([3, 3, 3, 2]), 1, "FOO")
    with pytest.raises(ValueError, match="4-dimensional"):
        tf.nn.conv2d(tf.ones([5, 5, 3]), tf.ones([3, 3, 3, 2]), 1, "SAME")
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative"):
        tf.nn.conv2d(tf.ones([1, 1, 1, 3]), tf.ones([3, 3, 3, 2]), 1, "VALID")
    # TF's size rule (in - k + stride) / stride: 0 here, an empty output (not an error).
    assert tf.nn.conv2d(tf.ones([1, 2, 2, 3]), tf.ones([3, 3, 3, 2]), 1, "VALID").shape == (1, 0, 0, 2)


def test_conv2d_gradients_match_direct_adjoints():
    rng = np.random.default_rng(2)
    x, w = tf.constant(rng.standard_normal((2, 7, 6, 3))), tf.constant(rng.standard_normal((3, 3, 3, 4)))
    dy = tf.constant(rng.standard_normal((2, 4, 3, 4)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, w])
        y = tf.nn.conv2d(x, w, 2, "SAME")
    dx, dw = tape.gradient(y, [x, w], output_gradients=dy)
    # <conv(x, w), dy> is bilinear, so its gradients are exact linear maps.
    total = float(np.sum(y.numpy() * dy.numpy()))
    assert abs(float(np.sum(dx.numpy() * x.numpy())) - total) < 1e-9
    assert abs(float(np.sum(dw.numpy() * w.numpy())) - total) < 1e-9


def test_conv1d_pinned_and_ncw():
    y = tf.nn.conv1d(tf.reshape(tf.range(10.0), [1, 5, 2]), tf.ones([3, 2, 1]), 2, "SAME")
    assert y.shape == (1, 3, 1)
    np.testing.assert_array_equal(y.numpy().ravel(), [6, 27, 30])
    assert tf.nn.conv1d(tf.ones([1, 2, 5]), tf.ones([3, 2, 1]), 1, "SAME", data_format="NCW").shape == (1, 1, 5)


def test_conv2d_transpose_pinned_and_is_the_conv_gradient():
    y = tf.nn.conv2d_transpose(tf.reshape(tf.range(4.0), [1, 2, 2, 1]), tf.ones([3, 3, 2, 1]), [1, 4, 4, 2], 2,
                               "SAME")
    np.testing.assert_array_equal(y.numpy()[0, :, :, 0], [[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 6, 4], [2, 2, 5, 3]])
    y = tf.nn.conv2d_transpose(tf.ones([1, 2, 2, 1]), tf.ones([3, 3, 2, 1]), [1, 5, 5, 2], 2, "VALID")
    np.testing.assert_array_equal(y.numpy()[0, :, :, 0], [[1, 1, 2, 1, 1], [1, 1, 2, 1, 1], [2, 2, 4, 2, 2],
                                                          [1, 1, 2, 1, 1], [1, 1, 2, 1, 1]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Size of out_backprop doesn't match computed"):
        tf.nn.conv2d_transpose(tf.ones([1, 2, 2, 1]), tf.ones([3, 3, 2, 1]), [1, 5, 5, 2], 1, "SAME")


def test_depthwise_conv2d_pinned_and_shapes():
    y = tf.nn.depthwise_conv2d(tf.reshape(tf.range(32.0), [1, 4, 4, 2]), tf.reshape(tf.range(16.0), [2, 2, 2, 2]),
                               [1, 1, 1, 1], "SAME")
    np.testing.assert_array_equal(y.numpy().ravel()[:12], [192, 212, 264, 288, 240, 268, 328, 360, 288, 324, 392, 432])
    assert tf.nn.depthwise_conv2d(tf.ones([1, 4, 4, 2]), tf.ones([2, 2, 2, 2]), [1, 2, 2, 1], "VALID").shape == \
        (1, 2, 2, 4)
    assert tf.nn.depthwise_conv2d(tf.ones([1, 5, 5, 2]), tf.ones([2, 2, 2, 2]), [1, 1, 1, 1], "VALID",
                                  dilations=[2, 2]).shape == (1, 3, 3, 4)
    with pytest.raises(TypeError):
        tf.nn.depthwise_conv2d(tf.ones([1, 4, 4, 2]), tf.ones([2, 2, 2, 2]), 2, "VALID")


# -- pooling ----------------------------------------------------------------------------

def test_max_pool_tie_goes_to_first_maximum():
    x = tf.ones([1, 2, 2, 1])
    _, g = _value_and_grad(lambda v: tf.nn.max_pool2d(v, 2, 2, "VALID"), x)
    np.testing.assert_array_equal(g.ravel(), [1, 0, 0, 0])
    x = np.array([1, 3, 3, 2, 3, 0, 1, 3, 3], np.float32).reshape(1, 3, 3, 1)
    y, g = _value_and_grad(lambda v: tf.nn.max_pool2d(v, 2, 1, "SAME"), x)
    np.testing.assert_array_equal(y.ravel(), [3] * 9)
    np.testing.assert_array_equal(g.ravel(), [0, 2, 1, 0, 2, 0, 0, 2, 2])  # TF's numbers


def test_tiled_max_pool_nan_inf_and_ties_as_tf():
    # stride == window, no padding: the whole-slice path; NaN windows, -inf and ties pinned against TF 2.21.
    nan, inf = np.nan, np.inf
    x = np.array([[nan, 1, 0, 0, 5], [2, 1, 0, 0, 5], [nan, nan, -inf, -inf, 7], [nan, nan, -inf, 3, 7],
                  [1, 1, 1, 1, 1]], np.float32).reshape(1, 5, 5, 1)
    w = tf.constant(np.arange(1, 5, dtype=np.float32).reshape(1, 2, 2, 1))
    y, g = _value_and_grad(lambda v: tf.reduce_sum(tf.nn.max_pool2d(v, 2, 2, "VALID") * w), x)
    np.testing.assert_array_equal(tf.nn.max_pool2d(x, 2, 2, "VALID").numpy().ravel(),
                                  [2, 0, np.finfo(np.float32).min, 3])
    want = np.zeros(25)
    want[[0, 2, 10, 18]] = [1, 2, 3, 4]
    np.testing.assert_array_equal(g.ravel(), want)
    np.testing.assert_array_equal(tf.nn.max_pool2d(tf.reshape(tf.range(32), [1, 4, 4, 2]), 2, 2, "VALID").numpy()
                                  .ravel(), [10, 11, 14, 15, 26, 27, 30, 31])


def test_relu_then_max_pool_gradient_traced_masks_the_pooled_grid():
    # Traced, ReluGrad(MaxPoolGrad(...)) is one MaxPoolGradRelu op: the same numbers as the eager tape (ties
    # of positive values and of the ReLU's zeros, NaN and inf in the input and in g).
    rng = np.random.default_rng(5)
    x = rng.integers(-2, 3, (2, 6, 6, 3)).astype(np.float32)
    x[0, 0, 0, 0], x[0, 0, 1, 1], x[1, 2, 2, 2], x[1, 4, 4, 0] = np.nan, np.inf, -np.inf, np.nan
    w = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    w[0, 1, 1, 0], w[1, 0, 0, 2] = np.inf, np.nan

    def grads(v, pad):
        with tf.GradientTape() as tape:
            tape.watch(v)
            loss = tf.reduce_sum(tf.nn.max_pool2d(tf.nn.relu(v * 1.0), 2, 2, pad) * w)
        return tape.gradient(loss, v)

    xs = tf.constant(x)
    for pad in ("VALID", "SAME"):
        eager = grads(xs, pad).numpy()
        f = tf.function(lambda v, pad=pad: grads(v, pad))
        np.testing.assert_array_equal(f(xs).numpy(), eager)
        ran = f.get_concrete_function(xs)._gf.compiled().line_ops.values()  # what runs, after dead-code elimination
        assert [op.type for op in ran if "Grad" in op.type] == ["MaxPoolGradRelu"]


def test_tiled_max_pool_matches_window_by_window_reference():
    rng = np.random.default_rng(3)
    x = np.maximum(rng.integers(-3, 3, (2, 6, 7, 3)), 0).astype(np.float64)  # many ties (ReLU zeros)
    x[0, 0, :2, 0] = -np.inf
    x[1, :2, :2, 1] = -np.inf
    gy = rng.standard_normal((2, 3, 3, 3))
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = tf.nn.max_pool2d(xt, 2, 2, "VALID")
        loss = tf.reduce_sum(y * gy)
    dx = tape.gradient(loss, xt)
    want_y, want_dx = np.zeros(y.shape), np.zeros(x.shape)
    for n, a, b, c in np.ndindex(*y.shape):
        win = x[n, 2 * a:2 * a + 2, 2 * b:2 * b + 2, c].ravel()
        k = 0
        for i in range(1, 4):
            if win[i] > win[k]:
                k = i
        want_y[n, a, b, c] = max(win.max(), np.finfo(np.float64).min)
        want_dx[n, 2 * a + k // 2, 2 * b + k % 2, c] = gy[n, a, b, c]
    np.testing.assert_array_equal(y.numpy(), want_y)
    np.testing.assert_array_equal(dx.numpy(), want_dx)


def test_avg_pool_counts_only_real_elements_at_edges():
    x = tf.reshape(tf.range(25.0), [1, 5, 5, 1])
    np.testing.assert_array_equal(tf.nn.avg_pool2d(x, 2, 2, "SAME").numpy().ravel(),
                                  [3, 5, 6.5, 13, 15, 16.5, 20.5, 22.5, 24])
    np.testing.assert_array_equal(tf.nn.avg_pool2d(x, 3, 2, "SAME").numpy().ravel(),
                                  [3, 4.5, 6, 10.5, 12, 13.5, 18, 19.5, 21])
    np.testing.assert_array_equal(tf.nn.max_pool2d(-x, 3, 2, "SAME").numpy().ravel(),
                                  [0, -1, -3, -5, -6, -8, -15, -16, -18])
    _, g = _value_and_grad(lambda v: tf.nn.avg_pool2d(v, 2, 2, "SAME"), x)
    np.testing.assert_array_equal(g[0, :, :, 0], [[0.25, 0.25, 0.25, 0.25, 0.5]] * 4 + [[0.5, 0.5, 0.5, 0.5, 1]])


def test_pool_ksize_forms_formats_and_ranks():
    x = tf.ones([1, 4, 4, 1])
    assert tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID").shape == (1, 2, 2, 1)
    assert tf.nn.max_pool(x, [2, 2], [2], "VALID").shape == (1, 2, 2, 1)
    assert tf.nn.max_pool(tf.ones([1, 4, 1]), 2, 2, "VALID").shape == (1, 2, 1)
    assert tf.nn.avg_pool2d(tf.ones([1, 1, 4, 4]), 2, 2, "VALID", data_format="NCHW").shape == (1, 1, 2, 2)
    assert tf.nn.max_pool2d(x, 2, 2, [[0, 0], [1, 1], [1, 1], [0, 0]]).shape == (1, 3, 3, 1)
    assert tf.nn.max_pool2d(tf.ones([1, 4, 4, 1], tf.int32), 2, 2, "VALID").dtype == tf.int32


def test_pool_errors():
    x = tf.ones([1, 4, 4, 1])
    with pytest.raises(ValueError, match=r"ksize should be of length 1, 2 or 4. Received: ksize=\[2, 2, 2\]"):
        tf.nn.max_pool2d(x, [2, 2, 2], 2, "VALID")
    with pytest.raises(tf.errors.UnimplementedError, match="batch dimension"):
        tf.nn.max_pool2d(x, [2, 2, 2, 1], 2, "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input must be 4 or 5-dimensional"):
        tf.nn.max_pool2d(tf.ones([4, 4, 1]), 2, 2, "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match="int32"):
        tf.nn.avg_pool2d(tf.ones([1, 4, 4, 1], tf.int32), 2, 2, "VALID")


# -- dropout ------------------------------------------------------------------------------

def test_dropout_scales_kept_values_and_zero_rate_is_identity():
    x = tf.ones([1000])
    assert tf.nn.dropout(x, rate=0.0) is x
    y = tf.nn.dropout(x, rate=0.25, seed=3).numpy()
    assert set(np.unique(y).tolist()) <= {0.0, np.float32(1 / 0.75)}
    assert 0.65 < np.mean(y > 0) < 0.85
    y = tf.nn.dropout(x, rate=tf.constant(0.5)).numpy()
    assert set(np.unique(y).tolist()) <= {0.0, 2.0}


def test_dropout_noise_shape_shares_the_draw_and_gradient_uses_the_mask():
    x = tf.constant(np.arange(1.0, 41.0).reshape(4, 10))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.dropout(x, rate=0.5, noise_shape=[1, 10], seed=1)
    kept = y.numpy() != 0
    assert (kept == kept[0]).all()
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), kept * 2.0)


def test_dropout_errors():
    with pytest.raises(ValueError, match=r"in the range \[0, 1\). Received: rate=1.0"):
        tf.nn.dropout(tf.ones([3]), rate=1.0)
    with pytest.raises(ValueError, match=r"Received: rate=-0.1"):
        tf.nn.dropout(tf.ones([3]), rate=-0.1)
    with pytest.raises(ValueError, match="must be a floating point tensor"):
        tf.nn.dropout(tf.ones([3], tf.int32), rate=0.5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="noise_shape"):
        tf.nn.dropout(tf.ones([2, 4]), rate=0.5, noise_shape=[3, 4])


# -- embeddings ---------------------------------------------------------------------------

def test_embedding_lookup_gradient_is_indexed_slices():
    params = tf.Variable(tf.reshape(tf.range(12.0), [4, 3]))
    with tf.GradientTape() as tape:
        rows = tf.nn.embedding_lookup(params, tf.constant([[0, 2], [2, 3]]))
    assert rows.shape == (2, 2, 3)
    g = tape.gradient(rows, params)
    assert isinstance(g, tf.IndexedSlices)
    assert g.indices.numpy().tolist() == [0, 2, 2, 3]
    assert g.values.shape == (4, 3) and g.dense_shape.numpy().tolist() == [4, 3]
    np.testing.assert_array_equal(tf.convert_to_tensor(g).numpy()[:, 0], [1, 0, 2, 1])


def test_embedding_lookup_max_norm_shards_and_errors():
    params = tf.Variable(tf.reshape(tf.range(12.0), [4, 3]))
    np.testing.assert_allclose(tf.nn.embedding_lookup(params, [1], max_norm=1.0).numpy(),
                               [[0.42426407, 0.56568545, 0.70710677]], rtol=1e-6)
    np.testing.assert_array_equal(tf.nn.embedding_lookup([params, params], [1, 5]).numpy(), [[3, 4, 5], [3, 4, 5]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = 7 is not in \[0, 4\)"):
        tf.nn.embedding_lookup(params, [7])


def test_reexports():
    for name in ("relu", "sigmoid", "tanh", "softplus", "swish", "silu", "max_pool", "avg_pool"):
        assert callable(getattr(tf.nn, name))


# -- graph mode ------------------------------------------------------------------------------

def test_conv_pool_softmax_in_tf_function_with_unknown_batch():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((2, 6, 6, 3)).astype(np.float32))
    w = tf.Variable(rng.standard_normal((3, 3, 3, 4)).astype(np.float32))

    def step(x):
        with tf.GradientTape() as tape:
            y = tf.nn.max_pool2d(tf.nn.relu(tf.nn.conv2d(x, w, 2, "SAME")), 2, 1, "SAME")
            z = tf.nn.log_softmax(tf.nn.avg_pool2d(y, 2, 2, "VALID"))
            loss = tf.nn.l2_loss(z) + tf.nn.l2_loss(tf.nn.depthwise_conv2d(x, tf.ones([2, 2, 3, 1]), [1, 1, 1, 1],
                                                                           "SAME"))
        return loss, tape.gradient(loss, w)

    traced = tf.function(step, input_signature=[tf.TensorSpec([None, 6, 6, 3], tf.float32)])
    for batch in (x, tf.concat([x, x[:1]], 0)):
        (lg, gg), (le, ge) = traced(batch), step(batch)
        np.testing.assert_allclose(lg.numpy(), le.numpy(), rtol=1e-6)
        np.testing.assert_allclose(gg.numpy(), ge.numpy(), rtol=1e-5, atol=1e-6)


def test_dropout_draws_a_new_mask_on_every_tf_function_call():
    f = tf.function(lambda x: tf.nn.dropout(x, rate=0.5, seed=5))
    x = tf.ones([200])
    assert not np.array_equal(f(x).numpy(), f(x).numpy())


# -- the smaller tf.nn functions ----------------------------------------------------------------

def test_small_nn_functions_match_tf():
    np.testing.assert_allclose(
        tf.nn.weighted_cross_entropy_with_logits(labels=tf.constant([0.0, 1, 0.5]), logits=tf.constant([-2.0, 3, 1]),
                                                 pos_weight=2.0).numpy(), [0.12692809, 0.0971747, 0.9698925], rtol=1e-6)
    np.testing.assert_array_equal(tf.nn.crelu(tf.constant([[-1.0, 2]])).numpy(), [[0, 2, 1, 0]])
    np.testing.assert_array_equal(tf.nn.crelu(tf.constant([[-1.0, 2]]), axis=0).numpy(), [[0, 2], [1, 0]])
    np.testing.assert_allclose(tf.nn.log_poisson_loss(tf.constant([0.0, 1, 3]), tf.constant([0.5, 1.0, 2.0]),
                                                      compute_full_loss=True).numpy(),
                               [1.6487212, 1.7182817, 3.1531377], rtol=1e-6)
    mean, var = tf.nn.weighted_moments(tf.constant([[1.0, 2], [3, 5]]), axes=[0],
                                       frequency_weights=tf.constant([[1.0], [3.0]]))
    np.testing.assert_allclose([mean.numpy(), var.numpy()], [[2.5, 4.25], [0.75, 1.6875]])
    mean, var = tf.nn.normalize_moments(4.0, tf.constant([2.0, 4]), tf.constant([10.0, 20]), tf.constant(1.0))
    np.testing.assert_allclose([mean.numpy(), var.numpy()], [[1.5, 2.0], [2.25, 4.0]])
    count, m_ss, v_ss, shift = tf.nn.sufficient_statistics(tf.constant([[1.0, 2], [3, 5]]), axes=[0])
    assert count.numpy() == 2.0 and m_ss.numpy().tolist() == [4, 7] and v_ss.numpy().tolist() == [10, 29]
    assert shift is None
    z = tf.nn.zero_fraction(tf.constant([0, 1, 0, 3]))
    assert z.dtype == tf.float32 and z.numpy() == 0.5
    assert tf.nn.compute_average_loss(tf.constant([1.0, 2, 3, 4])).numpy() == 2.5
    assert tf.nn.compute_average_loss(tf.constant([1.0, 2, 3, 4]), global_batch_size=8).numpy() == 1.25
    assert tf.nn.scale_regularization_loss([tf.constant(1.0), tf.constant(2.0)]).numpy() == 3.0
    assert tf.nn.in_top_k(tf.constant([1, 0]), tf.constant([[0.1, 0.9], [0.5, 0.5]]), 1).numpy().tolist() == [True,
                                                                                                               True]


def test_convolution_wrappers_match_tf():
    x = tf.reshape(tf.range(2 * 5 * 5 * 3, dtype=tf.float32) / 10.0, [2, 5, 5, 3])
    dw = tf.reshape(tf.range(3 * 3 * 3 * 2, dtype=tf.float32) / 20.0 - 0.5, [3, 3, 3, 2])
    pw = tf.reshape(tf.range(6 * 4, dtype=tf.float32) / 10.0 - 1.0, [1, 1, 6, 4])
    np.testing.assert_allclose(tf.nn.separable_conv2d(x, dw, pw, [1, 2, 2, 1], "SAME").numpy().ravel()[:4],
                               [3.224, 7.5239987, 11.824, 16.123999], rtol=1e-5)
    assert tf.nn.separable_conv2d(x, dw, pw, [1, 1, 1, 1], "VALID", dilations=[2, 2]).shape == (2, 1, 1, 4)
    np.testing.assert_allclose(tf.nn.atrous_conv2d(x, tf.ones([2, 2, 3, 1]), 2, "SAME").numpy().ravel()[:4],
                               [5.7, 11.4, 13.2, 15.0], rtol=1e-6)
    np.testing.assert_array_equal(tf.nn.convolution(tf.ones([1, 5, 2]), tf.ones([3, 2, 1]), padding="SAME")
                                  .numpy().ravel(), [4, 6, 6, 6, 4])
    assert tf.nn.convolution(tf.ones([1, 5, 5, 2]), tf.ones([3, 3, 2, 1])).shape == (1, 3, 3, 1)
    x16 = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    np.testing.assert_array_equal(tf.nn.pool(x16, [2, 2], "MAX", strides=[2, 2], padding="VALID").numpy().ravel(),
                                  [5, 7, 13, 15])
    np.testing.assert_array_equal(tf.nn.pool(x16, [2, 2], "AVG", padding="SAME").numpy().ravel()[:5],
                                  [2.5, 3.5, 4.5, 5.0, 6.5])
    y = tf.nn.conv2d(tf.ones([1, 3, 3, 1], tf.float16), tf.ones([2, 2, 1, 1], tf.float16), 1, "SAME")
    assert y.dtype == tf.float16 and y.numpy().ravel().tolist() == [4, 4, 2, 4, 4, 2, 2, 2, 1]


def test_dropout_follows_tf_random_seed_rules():
    x = tf.ones([64])
    tf.random.set_seed(11)
    a1, a2 = tf.nn.dropout(x, 0.5, seed=2).numpy(), tf.nn.dropout(x, 0.5, seed=2).numpy()
    tf.random.set_seed(11)
    b1, b2 = tf.nn.dropout(x, 0.5, seed=2).numpy(), tf.nn.dropout(x, 0.5, seed=2).numpy()
    np.testing.assert_array_equal(a1, b1)  # set_seed restarts the stream
    np.testing.assert_array_equal(a2, b2)
    assert not np.array_equal(a1, a2)  # repeated calls continue it, as TF eager


# -- cross-check against TensorFlow: values and first-order gradients -------------------------
# Each case ran in TF 2.21 on these inputs (float32, rng seed 42 in this order);
# for y = f(*inputs) and the gradients of sum(y * weights) (weights: rng seed 1)
# we pin the shape, the sum, and a random projection (rng seed 5).

_rng_cases = np.random.default_rng(42)


def R(*s):
    return _rng_cases.standard_normal(s).astype(np.float32)


nn = tf.nn
_TF_CASES = [
 ("conv_same_s1", lambda x, w: nn.conv2d(x, w, 1, "SAME"), [R(2,7,6,3), R(3,3,3,4)]),
 ("conv_same_s2", lambda x, w: nn.conv2d(x, w, 2, "SAME"), [R(2,7,6,3), R(3,3,3,4)]),
 ("conv_same_s2_k2", lambda x, w: nn.conv2d(x, w, [1,2,3,1], "SAME"), [R(2,8,7,3), R(2,2,3,4)]),
 ("conv_valid_s2", lambda x, w: nn.conv2d(x, w, 2, "VALID"), [R(2,8,7,3), R(3,2,3,4)]),
 ("conv_dil", lambda x, w: nn.conv2d(x, w, 1, "SAME", dilations=[2,3]), [R(2,8,9,3), R(3,3,3,2)]),
 ("conv_expl", lambda x, w: nn.conv2d(x, w, 2, [[0,0],[2,1],[0,3],[0,0]]), [R(2,6,5,3), R(3,3,3,2)]),
 ("conv_nchw", lambda x, w: nn.conv2d(x, w, 1, "SAME", data_format="NCHW"), [R(2,3,5,5), R(3,3,3,2)]),
 ("conv1d", lambda x, w: nn.conv1d(x, w, 2, "SAME"), [R(2,9,3), R(4,3,2)]),
 ("convT_same", lambda x, w: nn.conv2d_transpose(x, w, [2,7,8,3], 2, "SAME"), [R(2,4,4,5), R(3,3,3,5)]),
 ("convT_valid", lambda x, w: nn.conv2d_transpose(x, w, [2,9,9,3], 2, "VALID"), [R(2,4,4,5), R(3,3,3,5)]),
 ("dw_same", lambda x, w: nn.depthwise_conv2d(x, w, [1,1,1,1], "SAME"), [R(2,6,5,3), R(3,3,3,2)]),
 ("dw_s2", lambda x, w: nn.depthwise_conv2d(x, w, [1,2,2,1], "SAME"), [R(2,7,6,3), R(3,3,3,2)]),
 ("dw_dil", lambda x, w: nn.depthwise_conv2d(x, w, [1,1,1,1], "VALID", dilations=[2,2]), [R(2,7,6,3), R(2,2,3,2)]),
 ("maxpool_same3s2", lambda x: nn.max_pool2d(x, 3, 2, "SAME"), [R(2,7,6,3)]),
 ("maxpool_valid2", lambda x: nn.max_pool2d(x, 2, 2, "VALID"), [R(2,7,6,3)]),
 ("maxpool_same2s1", lambda x: nn.max_pool2d(x, [2,3], 1, "SAME"), [R(2,5,6,3)]),
 ("avgpool_same3s2", lambda x: nn.avg_pool2d(x, 3, 2, "SAME"), [R(2,7,6,3)]),
 ("avgpool_valid", lambda x: nn.avg_pool2d(x, [2,3], [2,1], "VALID"), [R(2,7,6,3)]),
 ("avgpool_1d", lambda x: nn.avg_pool1d(x, 3, 2, "SAME"), [R(2,7,3)]),
 ("maxpool_1d", lambda x: nn.max_pool1d(x, 3, 2, "SAME"), [R(2,7,3)]),
 ("softmax_ax1", lambda x: nn.softmax(x, axis=1), [R(2,3,4)]),
 ("logsoftmax", lambda x: nn.log_softmax(x), [R(2,3,4)]),
 ("xent", lambda l, x: nn.softmax_cross_entropy_with_logits(labels=nn.softmax(l), logits=x), [R(3,4), R(3,4)]),
 ("xent_ax0", lambda l, x: nn.softmax_cross_entropy_with_logits(labels=nn.softmax(l, axis=0), logits=x, axis=0),
  [R(3,4), R(3,4)]),
 ("sxent", lambda x: nn.sparse_softmax_cross_entropy_with_logits(labels=[1,0,3], logits=x), [R(3,4)]),
 ("sigxent", lambda z, x: nn.sigmoid_cross_entropy_with_logits(labels=nn.sigmoid(z), logits=x),
  [R(3,4), R(3,4)*5]),
 ("gelu", lambda x: nn.gelu(x), [R(3,4)*2]),
 ("gelu_approx", lambda x: nn.gelu(x, approximate=True), [R(3,4)*2]),
 ("selu", lambda x: nn.selu(x), [R(3,4)]),
 ("elu", lambda x: nn.elu(x), [R(3,4)]),
 ("softsign", lambda x: nn.softsign(x), [R(3,4)]),
 ("l2norm", lambda x: nn.l2_normalize(x, axis=[0, 1]), [R(3,4)]),
 ("bn", lambda x, m, v: nn.batch_normalization(x, m, v*v, 0.3, 1.7, 1e-3), [R(3,4), R(4), R(4)]),
 ("moments", lambda x: nn.moments(x, axes=[0, 2])[1], [R(3,4,2)]),
 ("bias_nchw", lambda x, b: nn.bias_add(x, b, data_format="NCHW"), [R(2,3,2,2), R(3)]),
 ("sep", lambda x, d, p: nn.separable_conv2d(x, d, p, [1,1,1,1], "SAME"), [R(2,5,5,3), R(3,3,3,2), R(1,1,6,4)]),
 ("wce", lambda z, x: nn.weighted_cross_entropy_with_logits(labels=nn.sigmoid(z), logits=x, pos_weight=2.5),
  [R(3,4), R(3,4)*3]),
 ("l2loss", lambda x: nn.l2_loss(x), [R(3,4)]),
 ("silu", lambda x: nn.silu(x, beta=0.7), [R(3,4)]),
]

_TF_PINS = {
    "conv_same_s1/y": ((2, 7, 6, 4), -58.01996, -81.96239),
    "conv_same_s1/g0": ((2, 7, 6, 3), -167.9031, -92.54538),
    "conv_same_s1/g1": ((3, 3, 3, 4), -13.19754, 107.3907),
    "conv_same_s2/y": ((2, 4, 3, 4), -11.61563, 30.65683),
    "conv_same_s2/g0": ((2, 7, 6, 3), 26.48154, -5.762302),
    "conv_same_s2/g1": ((3, 3, 3, 4), -61.16906, 18.95021),
    "conv_same_s2_k2/y": ((2, 4, 3, 4), 25.52084, -18.68837),
    "conv_same_s2_k2/g0": ((2, 8, 7, 3), -47.19462, -9.719922),
    "conv_same_s2_k2/g1": ((2, 2, 3, 4), -40.44088, 40.43903),
    "conv_valid_s2/y": ((2, 3, 3, 4), -13.37695, -1.590489),
    "conv_valid_s2/g0": ((2, 8, 7, 3), -20.58235, 8.790958),
    "conv_valid_s2/g1": ((3, 2, 3, 4), 16.20532, -47.3964),
    "conv_dil/y": ((2, 8, 9, 2), 73.68613, -119.6219),
    "conv_dil/g0": ((2, 8, 9, 3), 128.4029, -62.80113),
    "conv_dil/g1": ((3, 3, 3, 2), 89.96706, -72.57612),
    "conv_expl/y": ((2, 4, 3, 2), -14.02137, 40.4715),
    "conv_expl/g0": ((2, 6, 5, 3), -0.3258281, -7.216687),
    "conv_expl/g1": ((3, 3, 3, 2), -5.142211, 20.85738),
    "conv_nchw/y": ((2, 2, 5, 5), -63.52006, -134.2661),
    "conv_nchw/g0": ((2, 3, 5, 5), 67.43334, -17.25151),
    "conv_nchw/g1": ((3, 3, 3, 2), -52.08168, 0.4611543),
    "conv1d/y": ((2, 5, 2), 6.762927, -12.68873),
    "conv1d/g0": ((2, 9, 3), 1.137951, -2.217391),
    "conv1d/g1": ((4, 3, 2), -6.691213, -16.71264),
    "convT_same/y": ((2, 7, 8, 3), -64.03286, -39.9736),
    "convT_same/g0": ((2, 4, 4, 5), 3.980894, 9.235609),
    "convT_same/g1": ((3, 3, 3, 5), -44.99992, 97.74549),
    "convT_valid/y": ((2, 9, 9, 3), -54.82262, 46.1045),
    "convT_valid/g0": ((2, 4, 4, 5), 35.2551, 2.637609),
    "convT_valid/g1": ((3, 3, 3, 5), 6.685058, -74.96004),
    "dw_same/y": ((2, 6, 5, 6), 36.40172, 54.64521),
    "dw_same/g0": ((2, 6, 5, 3), -11.22821, -17.71584),
    "dw_same/g1": ((3, 3, 3, 2), -53.41697, 0.3972522),
    "dw_s2/y": ((2, 4, 3, 6), -8.221908, -24.83994),
    "dw_s2/g0": ((2, 7, 6, 3), -51.17637, 19.19427),
    "dw_s2/g1": ((3, 3, 3, 2), -7.043376, 3.523397),
    "dw_dil/y": ((2, 5, 4, 6), 40.89136, -62.55579),
    "dw_dil/g0": ((2, 7, 6, 3), 69.95441, 43.44597),
    "dw_dil/g1": ((2, 2, 3, 2), 33.69, -25.35777),
    "maxpool_same3s2/y": ((2, 4, 3, 3), 93.87171, -5.973835),
    "maxpool_same3s2/g0": ((2, 7, 6, 3), -4.434032, -0.629362),
    "maxpool_valid2/y": ((2, 3, 3, 3), 56.64687, -20.47798),
    "maxpool_valid2/g0": ((2, 7, 6, 3), -2.071074, -1.879423),
    "maxpool_same2s1/y": ((2, 5, 6, 3), 205.3239, -10.6344),
    "maxpool_same2s1/g0": ((2, 5, 6, 3), -13.19156, 4.979198),
    "avgpool_same3s2/y": ((2, 4, 3, 3), -9.726962, -0.7427292),
    "avgpool_same3s2/g0": ((2, 7, 6, 3), -4.434032, 2.988132),
    "avgpool_valid/y": ((2, 3, 4, 3), -8.402879, 6.896161),
    "avgpool_valid/g0": ((2, 7, 6, 3), -4.434032, -1.695139),
    "avgpool_1d/y": ((2, 4, 3), -1.117493, -1.152855),
    "avgpool_1d/g0": ((2, 7, 3), 2.783073, 0.3484176),
    "maxpool_1d/y": ((2, 4, 3), 21.12962, -11.1592),
    "maxpool_1d/g0": ((2, 7, 3), 2.783073, 6.520214),
    "softmax_ax1/y": ((2, 3, 4), 8, -1.041862),
    "softmax_ax1/g0": ((2, 3, 4), -8.475035e-08, -0.4002982),
    "logsoftmax/y": ((2, 3, 4), -41.421, 11.18562),
    "logsoftmax/g0": ((2, 3, 4), -3.278255e-07, -3.451038),
    "xent/y": ((3,), 5.870344, -5.13823),
    "xent/g0": ((3, 4), 1.953449e-07, 0.03536794),
    "xent/g1": ((3, 4), 8.987263e-08, 0.6276568),
    "xent_ax0/y": ((4,), 5.846879, -2.799464),
    "xent_ax0/g0": ((3, 4), 1.164153e-10, -0.1388557),
    "xent_ax0/g1": ((3, 4), -2.174638e-07, -1.293044),
    "sxent/y": ((3,), 4.301127, -4.140363),
    "sxent/g0": ((3, 4), 7.357448e-08, -0.4121744),
    "sigxent/y": ((3, 4), 20.05545, 3.214321),
    "sigxent/g0": ((3, 4), -0.3587417, 0.8138737),
    "sigxent/g1": ((3, 4), 0.2364823, -0.5141067),
    "gelu/y": ((3, 4), 16.29537, 1.417329),
    "gelu/g0": ((3, 4), 3.659753, 0.550571),
    "gelu_approx/y": ((3, 4), 9.221627, -6.217233),
    "gelu_approx/g0": ((3, 4), 1.583176, -1.767112),
    "selu/y": ((3, 4), -1.449869, -0.8563489),
    "selu/g0": ((3, 4), 3.145734, -1.808099),
    "elu/y": ((3, 4), 7.912704, 1.642753),
    "elu/g0": ((3, 4), 3.275638, -0.8543646),
    "softsign/y": ((3, 4), 0.1665072, -0.2719921),
    "softsign/g0": ((3, 4), 1.95911, 0.1019447),
    "l2norm/y": ((3, 4), -0.3659642, -1.741636),
    "l2norm/g0": ((3, 4), 0.6957338, -0.4663169),
    "bn/y": ((3, 4), 6.433142, 6.264886),
    "bn/g0": ((3, 4), 7.582797, 0.7680293),
    "bn/g1": ((4,), -7.582796, 7.921061),
    "bn/g2": ((4,), 7.403626, -6.182884),
    "moments/y": ((4,), 2.628461, -0.9203563),
    "moments/g0": ((3, 4, 2), -4.842877e-08, 0.3385444),
    "bias_nchw/y": ((2, 3, 2, 2), 1.7939, 1.076644),
    "bias_nchw/g0": ((2, 3, 2, 2), 2.783073, -1.558707),
    "bias_nchw/g1": ((3,), 2.783073, -0.477592),
    "sep/y": ((2, 5, 5, 4), -29.36676, -127.3386),
    "sep/g0": ((2, 5, 5, 3), -47.86974, 55.60949),
    "sep/g1": ((3, 3, 3, 2), 82.87144, -73.19374),
    "sep/g2": ((1, 1, 6, 4), -27.79087, -126.0121),
    "wce/y": ((3, 4), 25.46559, -2.604445),
    "wce/g0": ((3, 4), 5.910225, 2.064961),
    "wce/g1": ((3, 4), -2.810923, 0.3169649),
    "l2loss/y": ((), 11.01546, -8.833644),
    "l2loss/g0": ((3, 4), 0.1263847, 2.715417),
    "silu/y": ((3, 4), 3.147074, -0.5736778),
    "silu/g0": ((3, 4), 1.444794, -1.017813),
}


def _pin(v):
    v = np.asarray(v, np.float64)
    p = np.random.default_rng(5).standard_normal(v.size).reshape(v.shape)
    return v.shape, float(np.sum(v)), float(np.sum(v * p))


@pytest.mark.parametrize("name, fn, inputs", _TF_CASES, ids=[c[0] for c in _TF_CASES])
def test_values_and_gradients_match_tensorflow(name, fn, inputs):
    ts = [tf.constant(a) for a in inputs]
    with tf.GradientTape() as tape:
        for x in ts:
            tape.watch(x)
        y = fn(*ts)
        weights = tf.constant(np.random.default_rng(1).standard_normal(y.shape).astype(np.float32))
        total = tf.reduce_sum(y * weights)
    grads = tape.gradient(total, ts)
    got = {"y": y, **{f"g{i}": g for i, g in enumerate(grads)}}
    for key, (shape, total_ref, proj_ref) in _TF_PINS.items():
        case, part = key.split("/")
        if case != name:
            continue
        assert got[part] is not None, f"{key}: TF has a gradient, tapeflow gives None"
        shape_, total_, proj_ = _pin(tf.convert_to_tensor(got[part]).numpy())
        assert shape_ == shape, key
        np.testing.assert_allclose([total_, proj_], [total_ref, proj_ref], rtol=1e-5, atol=2e-3, err_msg=key)


def test_tf_argument_conventions():
    # strides and dilations both > 1 work, as TF
    y = tf.nn.conv2d(tf.ones([1, 5, 5, 1]), tf.ones([2, 2, 1, 1]), 2, "SAME", dilations=2)
    np.testing.assert_array_equal(y.numpy()[0, :, :, 0], [[1, 2, 1], [2, 4, 2], [1, 2, 1]])
    with pytest.raises(tf.errors.UnimplementedError, match="strides in the batch and depth dimensions"):
        tf.nn.conv2d(tf.ones([1, 5, 5, 1]), tf.ones([2, 2, 1, 1]), [2, 1, 1, 1], "SAME")
    with pytest.raises(ValueError, match="strides should be of length 1, 2 or 4"):
        tf.nn.conv2d(tf.ones([1, 5, 5, 1]), tf.ones([2, 2, 1, 1]), [1, 2, 2], "SAME")
    # labels are cast to the logits' dtype; rank-1 logits work
    for labels in (tf.constant([[0, 1]]), tf.constant([[0.0, 1.0]], tf.float64), [[0.0, 1.0]]):
        loss = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=tf.constant([[1.0, 2.0]]))
        np.testing.assert_allclose(loss.numpy(), [0.31326166], rtol=1e-6)
    assert tf.nn.sparse_softmax_cross_entropy_with_logits(labels=1, logits=tf.constant([1.0, 2.0])).shape == ()
    # a tensor rate is not range-checked (TF): rate 1 drops everything
    np.testing.assert_array_equal(tf.nn.dropout(tf.ones([3]), rate=tf.constant(1.0)).numpy(), [0, 0, 0])
    with pytest.raises(TypeError, match="Expected string for argument 'padding'"):
        tf.nn.avg_pool2d(tf.ones([1, 4, 4, 1]), 2, 2, [[0, 0], [1, 1], [1, 1], [0, 0]])


def test_max_pool_with_argmax_lrn_and_transposed_1d_match_tf():
    xa = tf.constant(np.array([1, 3, 3, 2, 3, 0, 1, 3, 3, 5, 5, 1, 0, 0, 2, 2], np.float32).reshape(1, 4, 4, 1))
    y, idx = tf.nn.max_pool_with_argmax(xa, 2, 2, "VALID")
    assert y.numpy().ravel().tolist() == [3, 3, 5, 5] and idx.numpy().ravel().tolist() == [1, 2, 9, 10]
    assert idx.dtype == tf.int64
    x2 = tf.reshape(tf.range(2 * 4 * 4 * 2, dtype=tf.float32) % 5, [2, 4, 4, 2])
    _, idx = tf.nn.max_pool_with_argmax(x2, 2, 2, "SAME", include_batch_in_index=True, output_dtype=tf.int32)
    assert idx.dtype == tf.int32
    assert idx.numpy().ravel().tolist() == [8, 9, 4, 13, 24, 19, 28, 29, 34, 33, 44, 39, 48, 49, 54, 53]
    x = tf.reshape(tf.range(2 * 3 * 3 * 5, dtype=tf.float32) % 7 / 3.0, [2, 3, 3, 5])
    np.testing.assert_allclose(tf.nn.local_response_normalization(x).numpy().ravel()[:7],
                               [0, 0.16012816, 0.32025632, 0.48038447, 0.64051265, 0.57735026, 0.6928203], rtol=1e-6)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.lrn(x, depth_radius=1, bias=0.5, alpha=0.3, beta=0.6)
        total = tf.reduce_sum(y * tf.reshape(tf.range(90.0) / 90.0, x.shape))
    np.testing.assert_allclose(tape.gradient(total, x).numpy().ravel()[:7],
                               [0, 0.01144423, 0.01288985, 0.00089374, 0.01077781, 0.0011718, 0.00140617], rtol=1e-5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="float64"):
        tf.nn.local_response_normalization(tf.cast(x, tf.float64))
    y = tf.nn.conv1d_transpose(tf.reshape(tf.range(6.0), [1, 3, 2]), tf.ones([3, 4, 2]), [1, 6, 4], 2, "SAME")
    assert y.shape == (1, 6, 4)
    np.testing.assert_array_equal(y.numpy()[0, :, 0], [1, 1, 6, 5, 14, 9])


def test_dropout_with_a_traced_rate():
    f = tf.function(lambda x, r: tf.nn.dropout(x, rate=r, seed=4))
    x = tf.ones([4000])
    for rate in (0.25, 0.5):
        y = f(x, tf.constant(rate)).numpy()
        assert set(np.unique(y).tolist()) == {0.0, np.float32(1 / (1 - rate))}
        assert abs(np.mean(y == 0) - rate) < 0.05



# 3-D convolution and pooling, cross-checked the same way (inputs: rng seed 7).
_rng_3d = np.random.default_rng(7)


def R3(*s):
    return _rng_3d.standard_normal(s).astype(np.float32)


_TF_CASES_3D = [
    ("c3_same", lambda x, w: nn.conv3d(x, w, [1, 1, 1, 1, 1], "SAME"), [R3(2, 4, 5, 4, 3), R3(3, 2, 3, 3, 2)]),
    ("c3_s2", lambda x, w: nn.conv3d(x, w, [1, 2, 1, 2, 1], "SAME"), [R3(2, 5, 5, 4, 3), R3(3, 3, 2, 3, 2)]),
    ("c3_valid_dil", lambda x, w: nn.conv3d(x, w, [1, 1, 1, 1, 1], "VALID", dilations=[1, 2, 1, 2, 1]),
     [R3(1, 5, 6, 6, 2), R3(2, 2, 2, 2, 3)]),
    ("mp3_same", lambda x: nn.max_pool3d(x, 2, 2, "SAME"), [R3(2, 5, 4, 5, 3)]),
    ("mp3_overlap", lambda x: nn.max_pool3d(x, 3, [1, 2, 1, 2, 1], "SAME"), [R3(1, 5, 4, 5, 2)]),
    ("ap3_same", lambda x: nn.avg_pool3d(x, 3, 2, "SAME"), [R3(2, 5, 4, 5, 3)]),
    ("ap3_valid", lambda x: nn.avg_pool3d(x, [2, 2, 3], [1, 2, 1], "VALID"), [R3(1, 5, 4, 5, 2)]),
]
_TF_PINS.update({
    "c3_same/y": ((2, 4, 5, 4, 2), 329.5675, -20.46914),
    "c3_same/g0": ((2, 4, 5, 4, 3), 107.5779, -113.6888),
    "c3_same/g1": ((3, 2, 3, 3, 2), 127.7288, -41.68606),
    "c3_s2/y": ((2, 3, 5, 2, 2), -158.7851, 96.82583),
    "c3_s2/g0": ((2, 5, 5, 4, 3), -31.08414, 51.76044),
    "c3_s2/g1": ((3, 3, 2, 3, 2), -4.119703, 39.66024),
    "c3_valid_dil/y": ((1, 3, 5, 4, 3), -17.31989, 61.30996),
    "c3_valid_dil/g0": ((1, 5, 6, 6, 2), 12.29053, 75.55471),
    "c3_valid_dil/g1": ((2, 2, 2, 2, 3), -19.39578, 58.53832),
    "mp3_same/y": ((2, 3, 2, 3, 3), 127.1835, -31.51839),
    "mp3_same/g0": ((2, 5, 4, 5, 3), -7.394754, 0.2792363),
    "mp3_overlap/y": ((1, 3, 4, 3, 2), 126.1994, -29.58933),
    "mp3_overlap/g0": ((1, 5, 4, 5, 2), -4.434032, 0.1705307),
    "ap3_same/y": ((2, 3, 2, 3, 3), -0.9958646, 3.623099),
    "ap3_same/g0": ((2, 5, 4, 5, 3), -7.394754, -4.295918),
    "ap3_valid/y": ((1, 4, 2, 3, 2), 6.074732, -2.026214),
    "ap3_valid/g0": ((1, 5, 4, 5, 2), -3.288819, 0.7041615),
})


@pytest.mark.parametrize("name, fn, inputs", _TF_CASES_3D, ids=[c[0] for c in _TF_CASES_3D])
def test_3d_values_and_gradients_match_tensorflow(name, fn, inputs):
    test_values_and_gradients_match_tensorflow(name, fn, inputs)


def test_rank5_dispatch_and_3d_errors():
    x = tf.ones([1, 4, 4, 4, 2])
    assert tf.nn.max_pool(x, 2, 2, "VALID", data_format="NDHWC").shape == (1, 2, 2, 2, 2)
    assert tf.nn.convolution(x, tf.ones([2, 2, 2, 2, 3]), padding="SAME").shape == (1, 4, 4, 4, 3)
    assert tf.nn.conv3d(tf.ones([1, 2, 4, 4, 4]), tf.ones([2, 2, 2, 2, 3]), [1, 1, 1, 1, 1], "SAME",
                        data_format="NCDHW").shape == (1, 3, 4, 4, 4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="evenly divisible by filter depth: 2 vs 3"):
        tf.nn.conv3d(x, tf.ones([2, 2, 2, 3, 3]), [1, 1, 1, 1, 1], "SAME")


def test_second_order_through_a_tiny_cnn_matches_finite_differences():
    rng = np.random.default_rng(3)
    x = tf.constant(rng.standard_normal((2, 6, 6, 2)))
    w0 = rng.standard_normal((3, 3, 2, 3)) * 0.5
    d = rng.standard_normal(w0.shape)
    labels = tf.constant([1, 2])

    def loss(w):
        h = tf.nn.max_pool2d(tf.nn.elu(tf.nn.conv2d(x, w, 1, "SAME")), 2, 2, "VALID")
        logits = tf.reduce_mean(tf.nn.avg_pool2d(h, 3, 3, "SAME"), axis=[1, 2])
        return tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))

    def grad_dot(w_np):
        w = tf.constant(w_np)
        with tf.GradientTape() as tape:
            tape.watch(w)
            y = loss(w)
        return float(np.sum(tape.gradient(y, w).numpy() * d))

    w = tf.constant(w0)
    with tf.GradientTape() as outer:
        outer.watch(w)
        with tf.GradientTape() as inner:
            inner.watch(w)
            y = loss(w)
        g = inner.gradient(y, w)
        gd = tf.reduce_sum(g * tf.constant(d))
    hvp = float(np.sum(outer.gradient(gd, w).numpy() * d))  # d^T H d
    eps = 1e-5
    numeric = (grad_dot(w0 + eps * d) - grad_dot(w0 - eps * d)) / (2 * eps)
    np.testing.assert_allclose(hvp, numeric, rtol=1e-4, atol=1e-7)


def test_relu_then_max_pool_gradient_of_finite_inputs_with_ties_and_uncovered_rows():
    # The finite case's offset-by-offset path (the forward's maxima, subtracting what each offset takes):
    # the eager tape's numbers for ties of positive values and zeros, windows of 2x2 and 3x3, VALID rows and
    # columns no window covers, and an inf gradient (the masks' path).
    rng = np.random.default_rng(6)
    x = rng.integers(-2, 3, (3, 7, 8, 4)).astype(np.float32)
    for k, inf_g in ((2, False), (3, False), (2, True)):
        w = rng.standard_normal((3, 7 // k, 8 // k, 4)).astype(np.float32)
        if inf_g:
            w[1, 1, 1, 1] = np.inf

        def grads(v, k=k, w=w):
            with tf.GradientTape() as tape:
                tape.watch(v)
                loss = tf.reduce_sum(tf.nn.max_pool2d(tf.nn.relu(v * 1.0), k, k, "VALID") * w)
            return tape.gradient(loss, v)

        xs = tf.constant(x)
        np.testing.assert_array_equal(tf.function(grads)(xs).numpy(), grads(xs).numpy())


def test_depthwise_conv2d_float32_is_tfs_fused_multiply_adds():
    # TF 2.21's CPU kernel: acc = fma(x, w, acc) over the taps in filter order (Keras's RandomSharpness kernel)
    x = (np.arange(2 * 4 * 5 * 2, dtype=np.float32).reshape(2, 4, 5, 2) * 0.37) % 7.3
    a, b = 1 / 13.0, 5 / 13.0
    k = np.tile(np.array([[a, a, a], [a, b, a], [a, a, a]], np.float32).reshape(3, 3, 1, 1), [1, 1, 2, 1])
    out = tf.nn.depthwise_conv2d(x, k, [1, 1, 1, 1], "SAME").numpy().ravel()
    # TF's values where separately rounded products and sums differ (e.g. 1.42307710647583 at 2)
    assert out[[2, 3, 6, 13, 14, 18]].tolist() == [1.4230769872665405, 1.7076925039291382, 2.5615384578704834,
                                                   3.125384569168091, 3.495384931564331, 3.829230785369873]
