"""Specs for the tf.nn ops (tapeflow/ops/nn/)."""

import numpy as np

import tapeflow as tf
from tapeflow.framework.execute import execute
from tapeflow.ops.nn import activations, conv, pooling
from tests.op_specs import Arg, OpSpec

_rng = np.random.default_rng(7)


def _away(shape, kinks, gap=0.15, low=-2.0, high=2.0):
    """Uniform values at least ``gap`` away from every kink."""
    x = _rng.uniform(low, high, shape)
    for k in kinks:
        near = np.abs(x - k) < gap
        x = np.where(near, k + np.where(x >= k, gap, -gap) * 1.5, x)
    return x


def _distinct(shape, scale=0.37):
    """Values with no ties (gaps >= 0.05), so max pooling is smooth there."""
    n = int(np.prod(shape))
    return (_rng.permutation(n) * scale * 0.2 + _rng.uniform(0, 0.02, n) - n * scale * 0.1).reshape(shape)


# Small NHWC shapes keep the whole file fast.
X = (2, 5, 5, 3)
W = (3, 3, 3, 4)

_P = {"strides": (1, 1), "dilations": (1, 1), "padding": "SAME"}
_P2 = {"strides": (2, 2), "dilations": (1, 1), "padding": "SAME"}
_PD = {"strides": (1, 1), "dilations": (2, 1), "padding": ((1, 0), (0, 2))}


def _bi(input_sizes, w, dy, attrs):
    return conv._conv2d_backprop_input(input_sizes, w, dy, attrs)


def _bf(x, filter_sizes, dy, attrs):
    return conv._conv2d_backprop_filter(x, filter_sizes, dy, attrs)


def _pool(op, x, **attrs):
    return execute(op, (x,), attrs)


_POOL = {"ksize": (2, 2), "strides": (2, 2), "padding": "SAME"}
_POOL3 = {"ksize": (3, 3), "strides": (2, 2), "padding": "SAME"}
_POOL2V = {"ksize": (2, 2), "strides": (2, 2), "padding": "VALID"}  # tiled windows: the fast path
_POOL3D = {"ksize": (2, 2, 2), "strides": (2, 1, 2), "padding": "SAME"}
_P3 = {"strides": (2, 1, 1), "dilations": (1, 1, 1), "padding": "SAME"}


def _max_pool_grad(x, g, attrs=_POOL3, op=pooling.MAX_POOL_GRAD):
    y = execute(pooling.MAX_POOL, (x,), attrs)
    return execute(op, (x, y, g * g), attrs)


def _max_pool_grad_grad(x, gg, attrs=_POOL3):
    y = execute(pooling.MAX_POOL, (x,), attrs)
    return execute(pooling.MAX_POOL_GRAD_GRAD, (x, y, gg * gg), attrs)


def _normalized(labels, axis):
    # TF's fused backprop (softmax - labels) assumes each label row sums to 1.
    return labels / tf.reduce_sum(labels, axis=axis, keepdims=True)


SPECS = [
    # -- activations (values kept away from the kinks) --
    OpSpec("Relu6", lambda x: tf.nn.relu6(x) * x, [Arg(value=_away((3, 4), [0.0, 6.0], low=-2, high=8))]),
    OpSpec("LeakyRelu", lambda x: tf.nn.leaky_relu(x) * x, [Arg(value=_away((3, 4), [0.0]))]),
    OpSpec("LeakyRelu", lambda x: tf.nn.leaky_relu(x, alpha=1.5) * x, [Arg(value=_away((3, 4), [0.0]))],
           name="alpha"),
    OpSpec("Elu", tf.nn.elu, [Arg(value=_away((3, 4), [0.0]))]),
    OpSpec("Selu", tf.nn.selu, [Arg(value=_away((3, 4), [0.0]))]),
    OpSpec("Softsign", tf.nn.softsign, [Arg(value=_away((3, 4), [0.0]))]),
    OpSpec("Gelu", tf.nn.gelu, [Arg((3, 4), low=-3, high=3)]),
    OpSpec("GeluGrad", activations.gelu_grad, [Arg((3, 4)), Arg((3, 4), low=-3, high=3)]),
    OpSpec("Tanh", lambda x: tf.nn.gelu(x, approximate=True), [Arg((3, 4), low=-3, high=3)], name="gelu-approx"),
    OpSpec("Sigmoid", lambda x: tf.nn.silu(x, beta=1.5), [Arg((3, 4))], name="silu"),
    OpSpec("Softplus", tf.nn.log_sigmoid, [Arg((3, 4), low=-5, high=5)], name="log-sigmoid"),
    # -- softmax family --
    OpSpec("Softmax", tf.nn.softmax, [Arg((3, 4))]),
    OpSpec("Softmax", lambda x: tf.nn.softmax(x, axis=1), [Arg((2, 3, 4))], name="axis1"),
    OpSpec("LogSoftmax", tf.nn.log_softmax, [Arg((3, 4))]),
    OpSpec("LogSoftmax", lambda x: tf.nn.log_softmax(x, axis=0), [Arg((3, 4))], name="axis0"),
    OpSpec("SoftmaxCrossEntropyWithLogits",
           lambda lab, lg: tf.nn.softmax_cross_entropy_with_logits(labels=_normalized(lab, -1), logits=lg),
           [Arg((3, 4), low=0.1, high=1), Arg((3, 4))]),
    OpSpec("SoftmaxCrossEntropyWithLogits",
           lambda lab, lg: tf.nn.softmax_cross_entropy_with_logits(labels=_normalized(lab, 0), logits=lg, axis=0),
           [Arg((3, 2, 4), low=0.1, high=1), Arg((3, 2, 4))], name="axis0-3d"),
    OpSpec("SparseSoftmaxCrossEntropyWithLogits",
           lambda lab, lg: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=lab, logits=lg),
           [Arg(value=np.array([0, 3, 1], np.int32), dtype=None), Arg((3, 4))]),
    OpSpec("SparseSoftmaxCrossEntropyWithLogits",
           lambda lab, lg: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=lab, logits=lg),
           [Arg(value=np.array([[0, 2], [1, 1]], np.int64), dtype=None), Arg((2, 2, 3))], name="3d"),
    OpSpec("Log1p", lambda z, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
           [Arg((3, 4), low=0, high=1), Arg(value=_away((3, 4), [0.0], low=-4, high=4))], name="sigmoid-xent"),
    # -- losses and normalization --
    OpSpec("L2Loss", tf.nn.l2_loss, [Arg((3, 4))]),
    OpSpec("Rsqrt", lambda x: tf.nn.l2_normalize(x, axis=1), [Arg((3, 4))], name="l2-normalize"),
    OpSpec("Mean", lambda x: tf.add_n(list(tf.nn.moments(x, axes=[0, 2]))), [Arg((3, 2, 4))], name="moments"),
    OpSpec("Rsqrt", lambda x, m, v, o, s: tf.nn.batch_normalization(x, m, v, o, s, 1e-3),
           [Arg((3, 4)), Arg((4,)), Arg((4,), low=0.5, high=2), Arg((4,)), Arg((4,))], name="batch-norm"),
    OpSpec("BiasAdd", lambda x, b: tf.nn.bias_add(x, b) * x, [Arg((2, 3, 4)), Arg((4,))]),
    OpSpec("BiasAdd", lambda x, b: tf.nn.bias_add(x, b, data_format="NCHW") * x, [Arg((2, 3, 2, 2)), Arg((3,))],
           name="nchw"),
    # -- convolutions: forward and both backprops, each to second order --
    OpSpec("Conv2D", lambda x, w: tf.nn.conv2d(x, w, 1, "SAME"), [Arg(X), Arg(W)]),
    OpSpec("Conv2D", lambda x, w: tf.nn.conv2d(x, w, 2, "VALID"), [Arg((1, 6, 6, 2)), Arg((2, 2, 2, 3))],
           name="stride2-valid"),
    OpSpec("Conv2D", lambda x, w: tf.nn.conv2d(x, w, 1, [[0, 0], [1, 0], [0, 2], [0, 0]], dilations=[2, 1]),
           [Arg((1, 5, 4, 2)), Arg((2, 2, 2, 3))], name="explicit-dilated"),
    OpSpec("Conv2D", lambda x, w: tf.nn.conv2d(x, w, 2, "SAME", dilations=2), [Arg((1, 6, 5, 2)), Arg((2, 2, 2, 3))],
           name="strided-dilated"),
    OpSpec("Conv2D", lambda x, w: tf.nn.conv1d(x, w, 2, "SAME"), [Arg((2, 7, 3)), Arg((3, 3, 2))], name="conv1d"),
    OpSpec("Conv2DBackpropInput", lambda w, dy: _bi((2, 5, 5, 3), w, dy, _P2), [Arg(W), Arg((2, 3, 3, 4))]),
    OpSpec("Conv2DBackpropInput", lambda w, dy: _bi((1, 5, 4, 2), w, dy, _PD), [Arg((2, 2, 2, 3)),
                                                                                 Arg((1, 4, 5, 3))], name="dilated"),
    OpSpec("Conv2DBackpropInput",
           lambda x, w: tf.nn.conv2d_transpose(x, w, [1, 6, 6, 2], 2, "SAME"), [Arg((1, 3, 3, 3)),
                                                                               Arg((3, 3, 2, 3))], name="transpose"),
    OpSpec("Conv2DBackpropFilter", lambda x, dy: _bf(x, (3, 3, 3, 4), dy, _P2), [Arg(X), Arg((2, 3, 3, 4))]),
    OpSpec("Conv2DBackpropFilter", lambda x, dy: _bf(x, (2, 2, 2, 3), dy, _PD), [Arg((1, 5, 4, 2)),
                                                                                 Arg((1, 4, 5, 3))], name="dilated"),
    OpSpec("DepthwiseConv2dNative", lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"),
           [Arg((2, 4, 4, 3)), Arg((3, 3, 3, 2))]),
    OpSpec("DepthwiseConv2dNative", lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "VALID"),
           [Arg((1, 5, 5, 2)), Arg((2, 2, 2, 1))], name="stride2"),
    OpSpec("DepthwiseConv2dNativeBackpropInput",
           lambda w, dy: conv._dw_backprop_input((2, 5, 5, 3), w, dy, _P2), [Arg((3, 3, 3, 2)),
                                                                               Arg((2, 3, 3, 6))]),
    OpSpec("DepthwiseConv2dNativeBackpropFilter",
           lambda x, dy: conv._dw_backprop_filter(x, (3, 3, 3, 2), dy, _P2), [Arg((2, 5, 5, 3)),
                                                                                Arg((2, 3, 3, 6))]),
    # -- 3-D --
    OpSpec("Conv3D", lambda x, w: tf.nn.conv3d(x, w, [1, 2, 1, 1, 1], "SAME"), [Arg((1, 4, 3, 3, 2)),
                                                                              Arg((2, 2, 2, 2, 2))]),
    OpSpec("Conv3DBackpropInputV2", lambda w, dy: conv._c3_bi((1, 4, 3, 3, 2), w, dy, _P3),
           [Arg((2, 2, 2, 2, 2)), Arg((1, 2, 3, 3, 2))]),
    OpSpec("Conv3DBackpropFilterV2", lambda x, dy: conv._c3_bf(x, (2, 2, 2, 2, 2), dy, _P3),
           [Arg((1, 4, 3, 3, 2)), Arg((1, 2, 3, 3, 2))]),
    # A filter's gradient when its static shape has unknown dims (only the filter's run-time shape is read).
    OpSpec("DynamicConvBackpropFilter",
           lambda x, dy: conv._dyn_backprop_filter("Conv2D", x, dy, tf.zeros(W, tf.float64), _P2),
           [Arg(X), Arg((2, 3, 3, 4))]),
    OpSpec("DynamicConvBackpropFilter",
           lambda x, dy: conv._dyn_backprop_filter("Depthwise", x, dy, tf.zeros((3, 3, 3, 2), tf.float64), _P2),
           [Arg((2, 5, 5, 3)), Arg((2, 3, 3, 6))], name="depthwise"),
    OpSpec("DynamicConvBackpropFilter",
           lambda x, dy: conv._dyn_backprop_filter("Conv3D", x, dy, tf.zeros((2, 2, 2, 2, 2), tf.float64), _P3),
           [Arg((1, 4, 3, 3, 2)), Arg((1, 2, 3, 3, 2))], name="conv3d"),
    OpSpec("MaxPool3D", lambda x: tf.nn.max_pool3d(x, 2, [1, 2, 1, 2, 1], "SAME") ** 2,
           [Arg(value=_distinct((1, 3, 3, 4, 2)))]),
    OpSpec("MaxPool3DGrad", lambda x, g: execute(pooling.MAX_POOL3D_GRAD, (
        x, execute(pooling.MAX_POOL3D, (x,), _POOL3D), g * g), _POOL3D),
        [Arg(value=_distinct((1, 3, 4, 3, 2)), diff=False), Arg((1, 2, 4, 2, 2))]),
    OpSpec("MaxPool3DGradGrad", lambda x, gg: execute(pooling.MAX_POOL3D_GRAD_GRAD, (
        x, execute(pooling.MAX_POOL3D, (x,), _POOL3D), gg * gg), _POOL3D),
        [Arg(value=_distinct((1, 3, 4, 3, 2)), diff=False), Arg((1, 3, 4, 3, 2))]),
    OpSpec("AvgPool3D", lambda x: tf.nn.avg_pool3d(x, 2, [1, 2, 1, 2, 1], "SAME") ** 2, [Arg((1, 3, 3, 4, 2))]),
    OpSpec("AvgPool3DGrad", lambda g: execute(pooling.AVG_POOL3D_GRAD, (g * g,), {"orig_input_shape": (1, 3, 4, 3, 2),
                                                                               **_POOL3D}),
           [Arg((1, 2, 4, 2, 2))]),
    # -- pooling --
    OpSpec("MaxPool", lambda x: tf.nn.max_pool2d(x, 2, 2, "SAME") ** 2, [Arg(value=_distinct((2, 5, 5, 2)))]),
    OpSpec("MaxPool", lambda x: tf.nn.max_pool2d(x, 3, 1, "VALID") ** 2, [Arg(value=_distinct((1, 5, 4, 2)))],
           name="overlap"),
    OpSpec("MaxPool", lambda x: tf.nn.max_pool(x, 2, 1, "SAME") ** 2, [Arg(value=_distinct((2, 5, 2)))],
           name="1d"),
    OpSpec("MaxPoolWithArgmax", lambda x: tf.nn.max_pool_with_argmax(x, 3, 2, "SAME")[0] ** 2,
           [Arg(value=_distinct((2, 5, 5, 2)))]),
    OpSpec("MaxPoolGrad", _max_pool_grad, [Arg(value=_distinct((1, 5, 5, 2)), diff=False), Arg((1, 3, 3, 2))]),
    OpSpec("MaxPoolGradGrad", _max_pool_grad_grad, [Arg(value=_distinct((1, 5, 5, 2)), diff=False),
                                                     Arg((1, 5, 5, 2))]),
    OpSpec("MaxPool", lambda x: tf.nn.max_pool2d(x, 2, 2, "VALID") ** 2, [Arg(value=_distinct((2, 4, 5, 2)))],
           name="tiled"),
    OpSpec("MaxPoolGrad", lambda x, g: _max_pool_grad(x, g, _POOL2V),
           [Arg(value=_distinct((1, 4, 5, 2)), diff=False), Arg((1, 2, 2, 2))], name="tiled"),
    OpSpec("MaxPoolGradGrad", lambda x, gg: _max_pool_grad_grad(x, gg, _POOL2V),
           [Arg(value=_distinct((1, 4, 5, 2)), diff=False), Arg((1, 4, 5, 2))], name="tiled"),
    OpSpec("MaxPoolGradRelu", lambda x, g: _max_pool_grad(x, g, _POOL2V, pooling.MAX_POOL_GRAD_RELU),
           [Arg(value=_distinct((1, 4, 5, 2)), diff=False), Arg((1, 2, 2, 2))], name="tiled"),
    OpSpec("MaxPoolGradRelu", lambda x, g: _max_pool_grad(x, g, _POOL3, pooling.MAX_POOL_GRAD_RELU),
           [Arg(value=_distinct((1, 5, 5, 2)), diff=False), Arg((1, 3, 3, 2))]),
    OpSpec("AvgPool", lambda x: tf.nn.avg_pool2d(x, 3, 2, "SAME") ** 2, [Arg((2, 5, 5, 2))]),
    OpSpec("AvgPool", lambda x: tf.nn.avg_pool2d(x, [2, 3], [1, 2], "VALID", data_format="NCHW") ** 2,
           [Arg((1, 2, 5, 6))], name="nchw"),
    OpSpec("AvgPoolGrad",
           lambda g: execute(pooling.AVG_POOL_GRAD, (g * g,), {"orig_input_shape": (2, 5, 5, 2), **_POOL3}),
           [Arg((2, 3, 3, 2))]),
    # An input of unknown static shape (only the input's run-time shape is read).
    OpSpec("DynamicAvgPoolGrad", lambda g: execute(pooling.DYNAMIC_AVG_POOL_GRAD, (g * g, tf.zeros((2, 5, 5, 2))),
                                                   {"kind": "AvgPool", **_POOL3}), [Arg((2, 3, 3, 2))]),
    OpSpec("DynamicAvgPoolGrad", lambda g: execute(pooling.DYNAMIC_AVG_POOL_GRAD, (g * g, tf.zeros((1, 3, 4, 3, 2))),
                                                   {"kind": "AvgPool3D", **_POOL3D}), [Arg((1, 2, 4, 2, 2))],
           name="3d"),
    OpSpec("DynamicConvBackpropInput",
           lambda w, dy: conv._dyn_backprop_input("Conv2D", w, dy, tf.zeros((2, 5, 5, 3)), _P2),
           [Arg(W), Arg((2, 3, 3, 4))]),
    OpSpec("DynamicConvBackpropInput",
           lambda w, dy: conv._dyn_backprop_input("Depthwise", w, dy, tf.zeros((2, 5, 5, 3)), _P2),
           [Arg((3, 3, 3, 2)), Arg((2, 3, 3, 6))], name="depthwise"),
    OpSpec("DynamicConvBackpropInput",
           lambda w, dy: conv._dyn_backprop_input("Conv3D", w, dy, tf.zeros((1, 4, 3, 3, 2)), _P3),
           [Arg((2, 2, 2, 2, 2)), Arg((1, 2, 3, 3, 2))], name="conv3d"),
]
