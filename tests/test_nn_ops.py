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


@pytest.mark.parametrize("fn", [tf.nn.elu, tf.nn.selu, tf.nn.softsign, tf.nn.gelu, tf.nn.softmax])
def test_float_only_activations_reject_integers(fn):
    with pytest.raises(tf.errors.InvalidArgumentError, match="int32"):
        fn(tf.constant([-1, 3, 9]))


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
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected to be a float32 tensor but is a float64"):
        tf.nn.conv2d(tf.ones([1, 5, 5, 3]), tf.ones([3, 3, 3, 2], tf.float64), 1, "SAME")
    with pytest.raises(tf.errors.InvalidArgumentError, match="attr 'padding'"):
        tf.nn.conv2d(tf.ones([1, 5, 5, 3]), tf.ones([3, 3, 3, 2]), 1, "FOO")
    with pytest.raises(ValueError, match="4-dimensional"):
        tf.nn.conv2d(tf.ones([5, 5, 3]), tf.ones([3, 3, 3, 2]), 1, "SAME")
    with pytest.raises(tf.errors.InvalidArgumentError, match="negative"):
        tf.nn.conv2d(tf.ones([1, 2, 2, 3]), tf.ones([3, 3, 3, 2]), 1, "VALID")


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
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices contains 7, which is not in \[0, 4\)"):
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
