"""Neural-network ops (``tf.nn``): activations, softmax and cross-entropies,
convolutions, pooling, normalization, dropout, embeddings.

Each op: ``defop`` (NumPy kernel + shape rule), ``defgrad`` (gradient rule
written with tapeflow ops), then the public function. Convolutions are im2col
(a strided view of the padded input) plus one BLAS matmul; their gradients are
ops too (Conv2DBackpropInput / Conv2DBackpropFilter, as TF) whose own
gradients are convolutions again, so every order of derivative works.
Spatial attrs (strides, dilations, padding) are Python constants; the padding
*amounts* are worked out by the kernel from the real input shape, so graphs
traced with unknown sizes still run.
"""

from __future__ import annotations

import itertools
import math
import threading
from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError, UnimplementedError
from tapeflow.framework.execute import describe, execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import array_ops, math_ops, shapes
from tapeflow.ops._helpers import as_int_tuple, axis_list, check_float, normalize_axis, pair, t
from tapeflow.ops.math_ops import (
    add, cast, exp, greater, less, log1p, multiply, negative, reduce_mean, reduce_sum, rsqrt,
    sigmoid, softplus, square, subtract, tanh, where,
)
from tapeflow.ops.registry import NotDifferentiable, defgrad, defop


def _err(op: str, msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"{msg} [Op:{op}]")


def _dims(shape) -> str:
    """TF's way of printing a shape in messages: [2,3]."""
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _zeros(x: Tensor) -> Tensor:
    return array_ops.zeros_like(x)


def _float_input(x: Any, op: str) -> Tensor:
    x = t(x)
    check_float(x, op)
    return x


# ============================================================================
# Activations
# ============================================================================

def _relu6_kernel(x):
    return np.clip(x, 0, 6).astype(x.dtype, copy=False)


RELU6 = defop("Relu6", _relu6_kernel, shape=shapes.same)


@defgrad("Relu6", inputs=True)
def _relu6_grad(op, g):
    # Zero gradient at both kinks (x == 0 and x == 6), as TF's Relu6Grad.
    # Written with ReluGrad so the second order is zeros (not None), as TF.
    x = op.inputs[0]
    return math_ops.relu_grad(math_ops.relu_grad(g, x), subtract(6, x))


def relu6(features: Any, name: str | None = None) -> Tensor:
    """min(max(features, 0), 6)."""
    x = t(features)
    math_ops.check_numeric(x, "Relu6")
    return execute(RELU6, (x,))


def _leaky_relu_kernel(x, alpha):
    return np.where(x > 0, x, x * np.asarray(alpha, x.dtype)).astype(x.dtype, copy=False)


LEAKY_RELU = defop("LeakyRelu", _leaky_relu_kernel, shape=shapes.same)


@defgrad("LeakyRelu", inputs=True)
def _leaky_relu_grad(op, g):
    # At x == 0 the slope is alpha, as TF's LeakyReluGrad (x > 0 ? g : alpha*g).
    # Written with ReluGrad so the second order is zeros (not None), as TF.
    x = op.inputs[0]
    alpha = op.get_attr("alpha")
    return add(math_ops.relu_grad(multiply(g, 1.0 - alpha), x), multiply(g, alpha))


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> Tensor:
    """features where positive, alpha * features elsewhere."""
    x = t(features)
    if x._value.dtype.kind in "iu":
        x = cast(x, dtypes.float32)  # TF converts integer features to float32
    check_float(x, "LeakyRelu")
    return execute(LEAKY_RELU, (x,), {"alpha": float(alpha)})


def _elu_kernel(x):
    return np.where(x < 0, np.expm1(np.minimum(x, 0)), x).astype(x.dtype, copy=False)


ELU = defop("Elu", _elu_kernel, shape=shapes.same)


@defgrad("Elu", inputs=True, outputs=True)
def _elu_grad(op, g):
    # exp(x) = y + 1 on the negative side; slope 1 at x == 0, as TF's EluGrad.
    y = op.outputs[0]
    return where(less(op.inputs[0], 0), multiply(g, add(y, 1.0)), g)


def elu(features: Any, name: str | None = None) -> Tensor:
    """x if x >= 0 else exp(x) - 1."""
    return execute(ELU, (_float_input(features, "Elu"),))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _selu_kernel(x):
    neg = (_SELU_SCALE * _SELU_ALPHA) * np.expm1(np.minimum(x, 0))
    return np.where(x < 0, neg, _SELU_SCALE * x).astype(x.dtype, copy=False)


SELU = defop("Selu", _selu_kernel, shape=shapes.same)


@defgrad("Selu", inputs=True, outputs=True)
def _selu_grad(op, g):
    y = op.outputs[0]
    neg = multiply(g, add(y, _SELU_SCALE * _SELU_ALPHA))
    return where(less(op.inputs[0], 0), neg, multiply(g, _SELU_SCALE))


def selu(features: Any, name: str | None = None) -> Tensor:
    """scale * (x if x >= 0 else alpha * (exp(x) - 1)), Klambauer et al.'s constants."""
    return execute(SELU, (_float_input(features, "Selu"),))


def _softsign_kernel(x):
    return (x / (1 + np.abs(x))).astype(x.dtype, copy=False)


SOFTSIGN = defop("Softsign", _softsign_kernel, shape=shapes.same)


@defgrad("Softsign", inputs=True)
def _softsign_grad(op, g):
    d = add(math_ops.abs(op.inputs[0]), 1.0)
    return math_ops.divide_(g, square(d))


def softsign(features: Any, name: str | None = None) -> Tensor:
    """x / (1 + |x|)."""
    return execute(SOFTSIGN, (_float_input(features, "Softsign"),))


# -- gelu --------------------------------------------------------------------
# The exact gelu needs erfc. Rather than depend on an Erfc op, Gelu and its
# GeluGrad are ops whose rules close over each other and elementwise ops:
# d/dx gelu = Phi(x) + x phi(x) = GeluGrad(1, x), and
# d/dx GeluGrad(dy, x) = dy * phi(x) * (2 - x^2).

_SQRT1_2 = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327
_erfc_np = None


def _erfc(x):
    # SciPy's vectorized erfc when installed, else math.erfc per element.
    # Looked up on first use: importing scipy.special costs ~0.3 s, which
    # `import tapeflow` must not pay.
    global _erfc_np
    if _erfc_np is None:
        try:
            from scipy.special import erfc as _erfc_np
        except ImportError:  # pragma: no cover - depends on the environment
            _erfc_np = np.vectorize(math.erfc, otypes=[np.float64])
    return np.asarray(_erfc_np(x)).astype(x.dtype, copy=False)


def _gelu_kernel(x):
    return (0.5 * x * _erfc(-x * np.asarray(_SQRT1_2, x.dtype))).astype(x.dtype, copy=False)


def _gelu_grad_kernel(dy, x):
    cdf = 0.5 * _erfc(-x * np.asarray(_SQRT1_2, x.dtype))
    pdf = _INV_SQRT_2PI * np.exp(-0.5 * x * x)
    return (dy * (cdf + x * pdf)).astype(x.dtype, copy=False)


GELU = defop("Gelu", _gelu_kernel, shape=shapes.same)
GELU_GRAD = defop("GeluGrad", _gelu_grad_kernel, shape=shapes.broadcast)


@defgrad("Gelu", inputs=True)
def _gelu_grad(op, g):
    return gelu_grad(g, op.inputs[0])


@defgrad("GeluGrad", inputs=True)
def _gelu_grad_grad(op, g):
    dy, x = op.inputs
    pdf = multiply(exp(multiply(square(x), -0.5)), _INV_SQRT_2PI)
    gx = multiply(multiply(g, dy), multiply(pdf, subtract(2.0, square(x))))
    return gelu_grad(g, x), gx


def gelu_grad(dy: Any, x: Any) -> Tensor:
    """The GeluGrad op: ``dy * d gelu(x) / dx`` (exact gelu)."""
    dy, x = pair(dy, x, "GeluGrad")
    return execute(GELU_GRAD, (dy, x))


def gelu(features: Any, approximate: bool = False, name: str | None = None) -> Tensor:
    """Gaussian error linear unit: x * Phi(x); ``approximate=True`` uses the
    tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    x = _float_input(features, "Gelu")
    if approximate:
        coeff = math.sqrt(2.0 / math.pi)
        inner = multiply(add(x, multiply(multiply(x, square(x)), 0.044715)), coeff)
        return multiply(multiply(x, 0.5), add(tanh(inner), 1.0))
    return execute(GELU, (x,))


def silu(features: Any, beta: float = 1.0, name: str | None = None) -> Tensor:
    """x * sigmoid(beta * x) (swish)."""
    x = _float_input(features, "Silu")
    if isinstance(beta, (int, float)) and beta == 1.0:
        return multiply(x, sigmoid(x))
    b = convert_to_tensor(beta, dtype=x.dtype)
    return multiply(x, sigmoid(multiply(b, x)))


swish = silu


def log_sigmoid(x: Any, name: str | None = None) -> Tensor:
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    x = _float_input(x, "LogSigmoid")
    return negative(softplus(negative(x)))


# ============================================================================
# Softmax and cross-entropies
# ============================================================================

def _softmax_kernel(x, axis):
    m = np.max(x, axis=axis, keepdims=True) if x.size else 0
    e = np.exp(x - m)
    return (e / np.sum(e, axis=axis, keepdims=True)).astype(x.dtype, copy=False)


def _log_softmax_kernel(x, axis):
    m = np.max(x, axis=axis, keepdims=True) if x.size else 0
    shifted = x - m
    return (shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))).astype(x.dtype, copy=False)


SOFTMAX = defop("Softmax", _softmax_kernel, shape=shapes.same)
LOG_SOFTMAX = defop("LogSoftmax", _log_softmax_kernel, shape=shapes.same)


@defgrad("Softmax", inputs=False, outputs=True)
def _softmax_grad(op, g):
    y = op.outputs[0]
    axis = op.get_attr("axis")
    return multiply(subtract(g, reduce_sum(multiply(g, y), axis=axis, keepdims=True)), y)


@defgrad("LogSoftmax", inputs=False, outputs=True)
def _log_softmax_grad(op, g):
    y = op.outputs[0]
    axis = op.get_attr("axis")
    return subtract(g, multiply(reduce_sum(g, axis=axis, keepdims=True), exp(y)))


def _softmax_like(op, logits, axis):
    x = _float_input(logits, op.name)
    nd = len(x._shape_tuple())
    if nd == 0:
        raise _err(op.name, f"logits must have >= 1 dimension, got shape {list(x._shape_tuple())}")
    a = -1 if axis is None else int(axis)
    if not -nd <= a < nd:
        raise _err(op.name, f"`dim` must be in the range [{-nd}, {nd}) where {nd} is the number of dimensions in "
                   f"the input. Received: dim={a}")
    return execute(op, (x,), {"axis": a % nd})


def softmax(logits: Any, axis: int | None = None, name: str | None = None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``axis`` (default -1), computed stably.

    >>> tf.nn.softmax([[1000.0, 0.0]]).numpy()
    array([[1., 0.]], dtype=float32)
    """
    return _softmax_like(SOFTMAX, logits, axis)


def log_softmax(logits: Any, axis: int | None = None, name: str | None = None) -> Tensor:
    """x - log(sum(exp(x))) along ``axis`` (default -1), computed stably."""
    return _softmax_like(LOG_SOFTMAX, logits, axis)


def _xent_kernel(logits, labels):
    lsm = _log_softmax_kernel(logits, -1)
    # 0 * -inf would be nan: entries with zero labels contribute nothing.
    prod = np.where(labels == 0, np.zeros((), logits.dtype), labels * lsm)
    loss = -np.sum(prod, axis=-1)
    return loss.astype(logits.dtype, copy=False), (np.exp(lsm) - labels).astype(logits.dtype, copy=False)


def _xent_shape(specs, **attrs):
    (s, dt), _ = specs
    return [(None if s is None else tuple(s[:-1]), dt), (s, dt)]


XENT = defop("SoftmaxCrossEntropyWithLogits", _xent_kernel, shape=_xent_shape, num_outputs=2)


def _xent_logits_grad(op, grad_loss, grad_backprop):
    # d loss / d logits = softmax - labels, which the op already returned as its
    # second output. A second-order pass sends a gradient into that output;
    # its adjoint through softmax is (gg - <gg, s>) s.
    g = multiply(array_ops.expand_dims(grad_loss, -1), op.outputs[1])
    if 1 in (getattr(op, "zero_output_grads", None) or ()):
        return g  # first order: no gradient reached the backprop output
    logits = op.inputs[0]
    s = softmax(logits)
    gg = multiply(subtract(grad_backprop, reduce_sum(multiply(grad_backprop, s), axis=-1, keepdims=True)), s)
    return add(g, gg)


@defgrad("SoftmaxCrossEntropyWithLogits", inputs=True, outputs=True)
def _xent_grad(op, grad_loss, grad_backprop):
    # One fused op with its own rule because the composite -sum(labels *
    # log_softmax) would differentiate through exp/log of shifted logits;
    # the fused backprop (softmax - labels) is exact and never overflows.
    g_logits = _xent_logits_grad(op, grad_loss, grad_backprop)
    if 1 in (getattr(op, "skip_input_indices", None) or ()):
        return g_logits, None  # nobody asked for the labels' gradient
    lsm = log_softmax(op.inputs[0])
    # The labels get -log_softmax (as TF) and, at second order, -gg from the
    # "- labels" term of the backprop output (which TF's rule drops).
    g_labels = subtract(multiply(array_ops.expand_dims(grad_loss, -1), negative(lsm)), grad_backprop)
    return g_logits, g_labels


def _to_last_axis_2d(x: Tensor, axis: int):
    """Moves ``axis`` last and flattens the rest; returns (x2d, perm, shape)."""
    nd = len(x._shape_tuple())
    perm = None
    if axis != nd - 1:
        perm = [i for i in range(nd) if i != axis] + [axis]
        x = array_ops.transpose(x, perm)
    shape = x._shape_tuple()
    if nd != 2:
        if shape[-1] is None and None not in shape[:-1]:  # traced: only the class dim unknown
            return array_ops.reshape(x, (int(np.prod(shape[:-1], dtype=np.int64)), -1)), perm, shape
        if shape[-1] is None:  # traced with several unknown dims
            from tapeflow.ops import shape_ops

            last = array_ops.getitem(shape_ops.shape_of(x), -1)
            return shape_ops.dynamic_reshape(x, [-1, last], static=(None, None)), perm, shape
        x = array_ops.reshape(x, (-1, shape[-1] if shape[-1] is not None else -1))
    return x, perm, shape


def softmax_cross_entropy_with_logits(labels: Any, logits: Any, axis: int = -1, name: str | None = None) -> Tensor:
    """Cross-entropy between ``labels`` (a distribution along ``axis``) and
    softmax(``logits``); one loss per example. Gradients flow into both."""
    lg = _float_input(logits, "SoftmaxCrossEntropyWithLogits")
    lb = convert_to_tensor(labels, dtype_hint=lg.dtype)
    if lb._value.dtype != lg._value.dtype:
        lb = cast(lb, lg.dtype)  # TF casts the labels to the logits' dtype
    sl, sg = lb._shape_tuple(), lg._shape_tuple()
    if len(sg) == 0:
        raise _err("SoftmaxCrossEntropyWithLogits", "logits must have at least 1 dimension, got a scalar")
    try:
        full = shapes.broadcast_shape(sl, sg, "SoftmaxCrossEntropyWithLogits")
    except InvalidArgumentError:
        raise _err("SoftmaxCrossEntropyWithLogits",
                   f"logits and labels must be broadcastable: logits_size={list(sg)} labels_size={list(sl)}") from None
    if full != tuple(sg) and None not in full:
        lg = array_ops.broadcast_to(lg, full)
    if full != tuple(sl) and None not in full:
        lb = array_ops.broadcast_to(lb, full)
    nd = len(full)
    a = normalize_axis(axis, nd, "SoftmaxCrossEntropyWithLogits")
    lg2, _, moved_shape = _to_last_axis_2d(lg, a)
    lb2, _, _ = _to_last_axis_2d(lb, a)
    loss = execute(XENT, (lg2, lb2))[0]
    if nd != 2:
        if sum(d is None for d in moved_shape[:-1]) > 1:  # traced with several unknown dims
            from tapeflow.ops import shape_ops

            lead = array_ops.getitem(shape_ops.shape_of(lg if a == nd - 1 else array_ops.transpose(
                lg, [i for i in range(nd) if i != a] + [a])), slice(None, -1))
            return shape_ops.dynamic_reshape(loss, lead, static=moved_shape[:-1])
        loss = array_ops.reshape(loss, tuple(-1 if d is None else d for d in moved_shape[:-1]))
    return loss


def _sparse_xent_kernel(logits, labels):
    n_classes = logits.shape[-1]
    bad = (labels < 0) | (labels >= n_classes)
    if bad.any():
        raise InvalidArgumentError(
            None, None,
            f"Received a label value of {int(labels[bad][0])} which is outside the valid range of "
            f"[0, {n_classes}).  Label values: {' '.join(str(int(v)) for v in labels.reshape(-1))} "
            "[Op:SparseSoftmaxCrossEntropyWithLogits]")
    lsm = _log_softmax_kernel(logits, -1)
    rows = np.arange(logits.shape[0])
    loss = -lsm[rows, labels]
    backprop = np.exp(lsm)
    backprop[rows, labels] -= 1
    return loss.astype(logits.dtype, copy=False), backprop.astype(logits.dtype, copy=False)


SPARSE_XENT = defop("SparseSoftmaxCrossEntropyWithLogits", _sparse_xent_kernel, shape=_xent_shape, num_outputs=2)


@defgrad("SparseSoftmaxCrossEntropyWithLogits", inputs=True, outputs=True)
def _sparse_xent_grad(op, grad_loss, grad_backprop):
    # Fused for the same reason as the dense op; integer labels get None.
    return _xent_logits_grad(op, grad_loss, grad_backprop), None


def sparse_softmax_cross_entropy_with_logits(labels: Any, logits: Any, name: str | None = None) -> Tensor:
    """Cross-entropy of integer class ``labels`` (shape = logits.shape[:-1])
    against softmax(``logits``). A label outside [0, num_classes) is an
    InvalidArgumentError."""
    lg = _float_input(logits, "SparseSoftmaxCrossEntropyWithLogits")
    lb = convert_to_tensor(labels)
    if lb._value.dtype.kind not in "iu":
        raise _err("SparseSoftmaxCrossEntropyWithLogits",
                   f"Value for attr 'Tlabels' of {lb.dtype.name} is not in the list of allowed values: int32, int64. "
                   "Cast the labels with tf.cast(labels, tf.int32)")
    sl, sg = lb._shape_tuple(), lg._shape_tuple()
    if len(sg) == 0:
        raise ValueError(f"Logits cannot be scalars - received shape {list(sg)}.")
    if len(sl) != len(sg) - 1 or any(a is not None and b is not None and a != b for a, b in zip(sl, sg[:-1])):
        raise ValueError(f"`labels.shape` must equal `logits.shape` except for the last dimension. Received: "
                         f"labels.shape={tuple(sl)} and logits.shape={tuple(sg)}")
    if len(sg) == 2:
        return execute(SPARSE_XENT, (lg, lb))[0]
    if sg[-1] is None:  # an unknown class count: the logits' run-time last dim
        from tapeflow.ops import shape_ops

        lg2 = shape_ops.dynamic_reshape(lg, [-1, shape_ops.shape_of(lg)[-1]])
    else:
        lg2 = array_ops.reshape(lg, (-1, sg[-1]))
    lb2 = array_ops.reshape(lb, (-1,))
    loss = execute(SPARSE_XENT, (lg2, lb2))[0]
    if sum(d is None for d in sl) > 1:  # traced with several unknown dims: the labels' run-time shape
        from tapeflow.ops import shape_ops

        return shape_ops.dynamic_reshape(loss, shape_ops.shape_of(lb), static=sl)
    return array_ops.reshape(loss, tuple(-1 if d is None else d for d in sl))


def sigmoid_cross_entropy_with_logits(labels: Any = None, logits: Any = None, name: str | None = None) -> Tensor:
    """Elementwise logistic loss, in the overflow-free form
    max(x, 0) - x * z + log(1 + exp(-|x|))."""
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    x = _float_input(logits, "SigmoidCrossEntropyWithLogits")
    z = convert_to_tensor(labels, dtype_hint=x.dtype)
    if z._value.dtype != x._value.dtype:
        raise _err("SigmoidCrossEntropyWithLogits",
                   f"labels ({z.dtype.name}) and logits ({x.dtype.name}) must have the same dtype")
    sx, sz = x._shape_tuple(), z._shape_tuple()
    if len(sx) != len(sz) or any(a is not None and b is not None and a != b for a, b in zip(sx, sz)):
        raise ValueError(f"`logits` and `labels` must have the same shape, received ({tuple(sx)} vs {tuple(sz)}).")
    nonneg = math_ops.greater_equal(x, 0)
    zeros = _zeros(x)
    relu_logits = where(nonneg, x, zeros)
    neg_abs = where(nonneg, negative(x), x)
    return add(subtract(relu_logits, multiply(x, z)), log1p(exp(neg_abs)))


# ============================================================================
# Losses and normalization
# ============================================================================

def _l2_loss_kernel(x):
    return (np.sum(np.square(x)) / 2).astype(x.dtype)


L2_LOSS = defop("L2Loss", _l2_loss_kernel, shape=lambda specs, **a: [((), specs[0][1])])


@defgrad("L2Loss", inputs=True)
def _l2_loss_grad(op, g):
    return multiply(op.inputs[0], g)


def l2_loss(t_: Any, name: str | None = None) -> Tensor:
    """sum(t ** 2) / 2."""
    return execute(L2_LOSS, (_float_input(t_, "L2Loss"),))


def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, name: str | None = None, dim: Any = None) -> Tensor:
    """x / sqrt(max(sum(x ** 2, axis), epsilon))."""
    x = _float_input(x, "L2Normalize")
    if dim is not None:
        axis = dim
    square_sum = reduce_sum(square(x), axis=axis, keepdims=True)
    inv_norm = rsqrt(math_ops.maximum(square_sum, convert_to_tensor(epsilon, dtype=x.dtype)))
    return multiply(x, inv_norm)


def moments(x: Any, axes: Any, shift: Any = None, keepdims: bool = False, name: str | None = None) -> tuple:
    """Mean and variance of ``x`` over ``axes``."""
    x = t(x)
    axes = axis_list(axes)
    if x._value.dtype == np.float16:
        y = cast(x, dtypes.float32)
    else:
        y = x
    mean = reduce_mean(y, axis=axes, keepdims=True)
    # TF wraps the mean in stop_gradient here; that leaves the first
    # derivative unchanged (deviations sum to zero) but drops the -1/n
    # coupling from the second, so the mean stays differentiable.
    variance = reduce_mean(math_ops.squared_difference(y, mean), axis=axes, keepdims=True)
    if not keepdims:
        mean = array_ops.squeeze(mean, axes)
        variance = array_ops.squeeze(variance, axes)
    if y is not x:
        return cast(mean, x.dtype), cast(variance, x.dtype)
    return mean, variance


def batch_normalization(x: Any, mean: Any, variance: Any, offset: Any, scale: Any, variance_epsilon: Any,
                        name: str | None = None) -> Tensor:
    """(x - mean) * scale / sqrt(variance + epsilon) + offset (offset and
    scale may be None)."""
    x = t(x)
    inv = rsqrt(add(convert_to_tensor(variance, dtype_hint=x.dtype), variance_epsilon))
    if scale is not None:
        inv = multiply(inv, convert_to_tensor(scale, dtype_hint=x.dtype))
    shift = negative(multiply(convert_to_tensor(mean, dtype_hint=x.dtype), inv))
    if offset is not None:
        shift = add(convert_to_tensor(offset, dtype_hint=x.dtype), shift)
    return add(multiply(x, inv), shift)


# -- bias_add ----------------------------------------------------------------

def _bias_axis(ndim: int, data_format: str) -> int:
    return 1 if data_format.startswith("NC") else ndim - 1


def _bias_add_kernel(x, b, data_format):
    axis = _bias_axis(x.ndim, data_format)
    return x + b.reshape((-1,) + (1,) * (x.ndim - 1 - axis))


BIAS_ADD = defop("BiasAdd", _bias_add_kernel, shape=lambda specs, **a: [specs[0]])


@defgrad("BiasAdd", inputs=False)
def _bias_add_grad(op, g):
    nd = len(op.input_shapes[0])
    axis = _bias_axis(nd, op.get_attr("data_format"))
    return g, reduce_sum(g, axis=[i for i in range(nd) if i != axis])


def bias_add(value: Any, bias: Any, data_format: str | None = None, name: str | None = None) -> Tensor:
    """Adds a 1-D ``bias`` along the channel axis (last, or 1 for "NC..." formats)."""
    x = t(value)
    b = convert_to_tensor(bias, dtype_hint=x.dtype)
    data_format = data_format or "NHWC"
    if data_format not in ("NHWC", "NCHW", "NWC", "NCW", "NDHWC", "NCDHW", "N..C", "NC.."):
        raise ValueError(f"data_format must be of the form `N...C` or `NC...`, got {data_format!r}")
    sx, sb = x._shape_tuple(), b._shape_tuple()
    if x._value.dtype.kind == "b":
        raise _err("BiasAdd", "Value for attr 'T' of bool is not in the list of allowed values: BiasAdd takes "
                   "numbers; cast with tf.cast first")
    if x._value.dtype != b._value.dtype:
        raise _err("BiasAdd", f"cannot compute BiasAdd as input #1(zero-based) was expected to be a {x.dtype.name} "
                   f"tensor but is a {b.dtype.name} tensor")
    if len(sb) != 1:
        raise _err("BiasAdd", f"Biases must be 1D: {_dims(sb)}")
    if len(sx) < 2:
        raise _err("BiasAdd", f"Input tensor must be at least 2D: {_dims(sx)}")
    axis = _bias_axis(len(sx), data_format)
    if sx[axis] is not None and sb[0] is not None and sx[axis] != sb[0]:
        where_ = "last" if axis == len(sx) - 1 else "channel"
        raise _err("BiasAdd", f"Must provide as many biases as the {where_} dimension of the input tensor: "
                   f"{_dims(sb)} vs. {_dims(sx)}")
    return execute(BIAS_ADD, (x, b), {"data_format": "NC" if data_format.startswith("NC") else "NHWC"})


# ============================================================================
# Convolution geometry (shared by conv and pooling)
# ============================================================================

def _out_and_pads(size, k, stride, dilation, padding):
    """Output length and (before, after) padding along one spatial axis.
    ``padding`` is "SAME", "VALID" or an explicit (before, after) pair."""
    if k is None:  # a filter dim of unknown (None) size, in a traced graph: known at run time
        return None, (padding if isinstance(padding, tuple) else None)
    eff = (k - 1) * dilation + 1
    if isinstance(padding, tuple):
        before, after = padding
        if size is None:
            return None, (before, after)
        return (size + before + after - eff) // stride + 1, (before, after)
    if size is None:
        return None, None
    if padding == "VALID":
        # TF: (size - eff + stride) / stride, truncated: 0 (an empty output) when
        # the window is at most stride - 1 longer than the input, negative (an error) beyond.
        return int((size - eff + stride) / stride), (0, 0)
    out = -(-size // stride)
    total = max((out - 1) * stride + eff - size, 0)
    return out, (total // 2, total - total // 2)  # extra padding at the end, as TF


def _geometry(in_hw, k_hw, strides, dilations, padding):
    outs, pads = [], []
    for i in range(2):
        pad = padding if isinstance(padding, str) else padding[i]
        o, p = _out_and_pads(in_hw[i], k_hw[i], strides[i], dilations[i], pad)
        outs.append(o)
        pads.append(p)
    return tuple(outs), tuple(pads)


def _pad_hw(x, pads, value=0):
    if pads == ((0, 0), (0, 0)):
        return x
    (t0, b0), (l0, r0) = pads
    if value == 0:
        out = np.zeros((x.shape[0], x.shape[1] + t0 + b0, x.shape[2] + l0 + r0, x.shape[3]), dtype=x.dtype)
    else:
        out = np.full((x.shape[0], x.shape[1] + t0 + b0, x.shape[2] + l0 + r0, x.shape[3]), value, dtype=x.dtype)
    out[:, t0:t0 + x.shape[1], l0:l0 + x.shape[2], :] = x
    return out


def _windows(xp, k_hw, out_hw, strides, dilations):
    """A (N, OH, OW, KH, KW, C) strided view of the padded NHWC input."""
    n, _, _, c = xp.shape
    s0, s1, s2, s3 = xp.strides
    return np.lib.stride_tricks.as_strided(
        xp, shape=(n, out_hw[0], out_hw[1], k_hw[0], k_hw[1], c),
        strides=(s0, s1 * strides[0], s2 * strides[1], s1 * dilations[0], s2 * dilations[1], s3),
        writeable=False)


def _scatter_windows(cols, in_shape, pads, strides, dilations):
    """The adjoint of _windows: adds (N, OH, OW, KH, KW, C) window values back
    into an (N, H, W, C) array (crops the padding)."""
    n, oh, ow, kh, kw, c = cols.shape
    (t0, b0), (l0, r0) = pads
    h, w = in_shape[1], in_shape[2]
    xp = np.zeros((n, h + t0 + b0, w + l0 + r0, c), dtype=cols.dtype)
    sh, sw = strides
    for i in range(kh):
        hi = i * dilations[0]
        for j in range(kw):
            wj = j * dilations[1]
            xp[:, hi:hi + (oh - 1) * sh + 1:sh, wj:wj + (ow - 1) * sw + 1:sw, :] += cols[:, :, :, i, j, :]
    return xp[:, t0:t0 + h, l0:l0 + w, :]


# im2col matrices are big (k*k times the input) and live only inside one
# kernel call: each thread reuses one scratch buffer for them instead of
# mapping fresh pages every call (which costs as much as the copy itself).
_SCRATCH = threading.local()
_SCRATCH_MAX_BYTES = 1 << 27  # 128 MiB: larger im2col matrices are allocated per call


def _im2col(win, dtype):
    """Copies a (N, OH, OW, KH, KW, C) window view into a (N*OH*OW, KH*KW*C)
    matrix of ``dtype``, in the thread's scratch buffer when it fits."""
    n, oh, ow, kh, kw, c = win.shape
    shape = (n * oh * ow, kh * kw * c)
    nbytes = shape[0] * shape[1] * np.dtype(dtype).itemsize
    if nbytes > _SCRATCH_MAX_BYTES:
        return win.reshape(shape).astype(dtype, copy=False)
    buf = getattr(_SCRATCH, "buf", None)
    if buf is None or buf.nbytes < nbytes:
        buf = _SCRATCH.buf = np.empty(nbytes, np.uint8)
    cols = buf[:nbytes].view(dtype).reshape(win.shape)
    np.copyto(cols, win, casting="unsafe")
    return cols.reshape(shape)


def _compute_dtype(dt):
    # Half precision convolves in float32 (as TF's CPU kernels accumulate).
    return np.float32 if dt in (np.float16,) or dt.name == "bfloat16" else dt


# ============================================================================
# Conv2D and its two backprop ops
# ============================================================================

def _conv_attrs_geom(x_shape, w_shape, strides, dilations, padding):
    return _geometry(x_shape[1:3], w_shape[:2], strides, dilations, padding)


def _conv2d_kernel(x, w, strides, dilations, padding):
    out_hw, pads = _conv_attrs_geom(x.shape, w.shape, strides, dilations, padding)
    cdt = _compute_dtype(x.dtype)
    n = x.shape[0]
    kh, kw, ci, co = w.shape
    if min(out_hw) <= 0 or n == 0:
        return np.zeros((n, max(out_hw[0], 0), max(out_hw[1], 0), co), dtype=x.dtype)
    if (kh, kw) == (1, 1) and strides == (1, 1) and pads == ((0, 0), (0, 0)):
        out = x.reshape(-1, ci).astype(cdt, copy=False) @ w.reshape(ci, co).astype(cdt, copy=False)
    else:
        cols = _im2col(_windows(_pad_hw(x, pads), (kh, kw), out_hw, strides, dilations), cdt)
        out = cols @ w.reshape(kh * kw * ci, co).astype(cdt, copy=False)
    return out.reshape(n, out_hw[0], out_hw[1], co).astype(x.dtype, copy=False)


def _conv2d_backprop_input_kernel(w, dy, input_sizes, strides, dilations, padding):
    in_shape = (dy.shape[0],) + tuple(input_sizes[1:])
    _, pads = _conv_attrs_geom(in_shape, w.shape, strides, dilations, padding)
    kh, kw, ci, co = w.shape
    n, oh, ow, _ = dy.shape
    cdt = _compute_dtype(dy.dtype)
    if n == 0 or oh == 0 or ow == 0:
        return np.zeros(in_shape, dtype=dy.dtype)
    full = [(k - 1) * d for k, d in zip((kh, kw), dilations)]
    flip_pads = tuple((f - p[0], f - p[1] + (size + p[0] + p[1] - f - 1 - (o - 1)))
                      for f, p, size, o in zip(full, pads, in_shape[1:3], (oh, ow)))
    if strides == (1, 1) and all(a >= 0 and b >= 0 for a, b in flip_pads):
        # Stride 1: dx is the correlation of the padded dy with the flipped,
        # transposed filter -- one im2col + matmul instead of a col2im scatter.
        w_flip = np.ascontiguousarray(w[::-1, ::-1].transpose(0, 1, 3, 2))
        return _conv2d_kernel(dy, w_flip, (1, 1), dilations, flip_pads)
    colg = dy.reshape(-1, co).astype(cdt, copy=False) @ w.reshape(kh * kw * ci, co).astype(cdt, copy=False).T
    colg = colg.reshape(n, oh, ow, kh, kw, ci)
    return _scatter_windows(colg, in_shape, pads, strides, dilations).astype(dy.dtype, copy=False)


def _conv2d_backprop_filter_kernel(x, dy, filter_sizes, strides, dilations, padding):
    kh, kw, ci, co = filter_sizes
    out_hw, pads = _conv_attrs_geom(x.shape, filter_sizes, strides, dilations, padding)
    cdt = _compute_dtype(x.dtype)
    if x.shape[0] == 0 or min(out_hw) <= 0:
        return np.zeros(filter_sizes, dtype=x.dtype)
    cols = _im2col(_windows(_pad_hw(x, pads), (kh, kw), out_hw, strides, dilations), cdt)
    dw = cols.T @ dy.reshape(-1, co).astype(cdt, copy=False)
    return dw.reshape(filter_sizes).astype(x.dtype, copy=False)


def _conv2d_shape(specs, strides, dilations, padding):
    (sx, dt), (sw, _) = specs
    if sx is None or sw is None:
        return [(None, dt)]
    out_hw, _ = _geometry(sx[1:3], sw[:2], strides, dilations, padding)
    return [((sx[0],) + out_hw + (sw[3],), dt)]


def _conv2d_bi_shape(specs, input_sizes, **attrs):
    (_, dt), (sdy, _) = specs
    n = sdy[0] if sdy is not None else None
    return [((n,) + tuple(input_sizes[1:]), dt)]


def _conv2d_bf_shape(specs, filter_sizes, **attrs):
    return [(tuple(filter_sizes), specs[0][1])]


CONV2D = defop("Conv2D", _conv2d_kernel, shape=_conv2d_shape)
CONV2D_BACKPROP_INPUT = defop("Conv2DBackpropInput", _conv2d_backprop_input_kernel, shape=_conv2d_bi_shape)
CONV2D_BACKPROP_FILTER = defop("Conv2DBackpropFilter", _conv2d_backprop_filter_kernel, shape=_conv2d_bf_shape)


def _geom_attrs(op) -> dict:
    return {"strides": op.get_attr("strides"), "dilations": op.get_attr("dilations"),
            "padding": op.get_attr("padding")}


def _conv2d_backprop_input(input_sizes, w, dy, attrs, x=None):
    if x is not None and None in tuple(input_sizes)[1:]:
        return _dyn_backprop_input("Conv2D", w, dy, x, attrs)
    return execute(CONV2D_BACKPROP_INPUT, (w, dy), {"input_sizes": tuple(input_sizes), **attrs})


def _conv2d_backprop_filter(x, filter_sizes, dy, attrs, w=None):
    if w is not None and None in filter_sizes:
        return _dyn_backprop_filter("Conv2D", x, dy, w, attrs)
    return execute(CONV2D_BACKPROP_FILTER, (x, dy), {"filter_sizes": tuple(filter_sizes), **attrs})


@defgrad("Conv2D", inputs=True)
def _conv2d_grad(op, g):
    x, w = op.inputs
    attrs = _geom_attrs(op)
    return (_conv2d_backprop_input(op.input_shapes[0], w, g, attrs, x),
            _conv2d_backprop_filter(x, op.input_shapes[1], g, attrs, w))


@defgrad("Conv2DBackpropInput", inputs=True)
def _conv2d_backprop_input_grad(op, g):
    # out = A(w) dy is bilinear: d/d dy = conv(g, w); d/dw = filter-backprop(g, dy).
    w, dy = op.inputs
    attrs = _geom_attrs(op)
    return (_conv2d_backprop_filter(g, op.input_shapes[0], dy, attrs, w),
            execute(CONV2D, (g, w), attrs))


@defgrad("Conv2DBackpropFilter", inputs=True)
def _conv2d_backprop_filter_grad(op, g):
    x, dy = op.inputs
    attrs = _geom_attrs(op)
    return (_conv2d_backprop_input(op.input_shapes[0], g, dy, attrs, x),
            execute(CONV2D, (x, g), attrs))


# -- argument parsing ----------------------------------------------------------

def _spatial(v: Any, n: int, name: str, op: str, data_format: str, allow_full: bool = True) -> tuple:
    """strides/dilations/ksize: an int, a list of 1, n or n+2 ints -> n ints."""
    if isinstance(v, Tensor):
        v = v.numpy()
    vals = [int(a) for a in np.asarray(v).reshape(-1)]
    if len(vals) == 1:
        vals = vals * n
    elif len(vals) == n + 2 and allow_full:
        c_axis = 1 if data_format.startswith("NC") else n + 1
        if vals[0] != 1 or vals[c_axis] != 1:
            if op in ("MaxPool", "AvgPool"):
                raise UnimplementedError(None, None, f"Pooling is not yet supported on the batch dimension (or depth "
                                         f"dimension): {name}={vals} [Op:{op}]")
            if name == "strides":
                raise UnimplementedError(None, None, f"Current implementation does not yet support strides in the "
                                         f"batch and depth dimensions: strides={vals} [Op:{op}]")
            raise _err(op, f"{name} in the batch and depth dimensions must be 1, got {vals}. "
                       f"Pass [1, {', '.join(['s'] * n)}, 1] or a single int")
        vals = [vals[i] for i in range(n + 2) if i != 0 and i != c_axis]
    elif len(vals) != n:
        raise ValueError(f"{name} should be of length 1, {n} or {n + 2}. Received: {name}={v} of length "
                         f"{len(vals)}")
    if any(a <= 0 for a in vals):
        raise _err(op, f"{name} must be positive, got {vals}")
    return tuple(vals)


def _padding(padding: Any, n: int, op: str, data_format: str) -> Any:
    """"SAME"/"VALID", or explicit [[0,0],[t,b],[l,r],[0,0]] -> tuple of pairs."""
    if isinstance(padding, str):
        p = padding.upper()
        if p not in ("SAME", "VALID"):
            raise _err(op, f"Value for attr 'padding' of {padding!r} is not in the list of allowed values: "
                       "\"SAME\", \"VALID\", \"EXPLICIT\" (pass a list of [before, after] pairs for explicit padding)")
        return p
    try:
        pairs = [tuple(int(a) for a in pr) for pr in padding]
    except (TypeError, ValueError):
        raise ValueError(f"explicit padding must be a list of [before, after] pairs, got {padding!r}") from None
    if len(pairs) != n + 2 or any(len(pr) != 2 for pr in pairs):
        raise ValueError(f"When padding is explicit, it must be a list of {n + 2} [before, after] pairs (one per "
                         f"dimension), got {padding!r}")
    c_axis = 1 if data_format.startswith("NC") else n + 1
    if pairs[0] != (0, 0) or pairs[c_axis] != (0, 0):
        raise ValueError(f"Explicit padding of the batch and channel dimensions must be zero, got {padding!r}")
    if any(a < 0 for pr in pairs for a in pr):
        raise _err(op, f"All elements of explicit_paddings must be nonnegative, got {padding!r}")
    return tuple(pairs[i] for i in range(n + 2) if i != 0 and i != c_axis)


def _check_rank(x: Tensor, rank: int, op: str, what: str = "input") -> tuple:
    s = x._shape_tuple()
    if len(s) != rank:
        raise ValueError(f"{op}: {what} must be {rank}-dimensional, got shape {list(s)} ({describe(x)})")
    return s


def _conv_inputs(input: Any, filters: Any, op: str) -> tuple:
    x = t(input)
    w = convert_to_tensor(filters, dtype_hint=x.dtype)
    if x._value.dtype != w._value.dtype:
        raise _err(op, f"cannot compute {op} as input #1(zero-based) was expected to be a {x.dtype.name} tensor "
                   f"but is a {w.dtype.name} tensor. Cast the filter (or the input) so both match")
    if x._value.dtype.kind != "f" and not (op == "Conv2D" and x._value.dtype == np.int32):
        raise _err(op, f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed values: half, bfloat16, "
                   "float, double. Cast the input to a float dtype")
    return x, w


def _nchw_to_nhwc(x: Tensor) -> Tensor:
    return array_ops.transpose(x, (0, 2, 3, 1))


def _nhwc_to_nchw(x: Tensor) -> Tensor:
    return array_ops.transpose(x, (0, 3, 1, 2))


def _check_out(op: str, out_hw, sx, sw, padding):
    if any(o is not None and o < 0 for o in out_hw):
        raise _err(op, f"Computed output size would be negative: input {list(sx)}, filter {list(sw)}, padding "
                   f"{padding!r}. Use padding='SAME' or a smaller filter")


def conv2d(input: Any, filters: Any, strides: Any, padding: Any, data_format: str = "NHWC",  # noqa: A002
           dilations: Any = None, name: str | None = None) -> Tensor:
    """2-D convolution (cross-correlation) of an NHWC ``input`` with an HWIO
    ``filters`` tensor. ``padding`` is "SAME" (TF's asymmetric padding: the
    extra row/column goes at the bottom/right), "VALID", or explicit
    ``[[0, 0], [top, bottom], [left, right], [0, 0]]``.

    >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    >>> tf.nn.conv2d(x, tf.ones([2, 2, 1, 1]), strides=1, padding="SAME")[0, :, :, 0].numpy()
    array([[10., 14., 18., 10.],
           [26., 30., 34., 18.],
           [42., 46., 50., 26.],
           [25., 27., 29., 15.]], dtype=float32)
    """
    x, w = _conv_inputs(input, filters, "Conv2D")
    data_format = data_format or "NHWC"
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    sx = _check_rank(x, 4, "Conv2D")
    sw = _check_rank(w, 4, "Conv2D", "filter")
    st = _spatial(strides, 2, "strides", "Conv2D", data_format)
    dl = _spatial(1 if dilations is None else dilations, 2, "dilations", "Conv2D", data_format)
    pad = _padding(padding, 2, "Conv2D", data_format)
    if data_format == "NCHW":
        x = _nchw_to_nhwc(x)
        sx = x._shape_tuple()
    if sx[3] is not None and sw[2] is not None and sx[3] != sw[2]:
        raise _err("Conv2D", f"input depth must be evenly divisible by filter depth: {sx[3]} vs {sw[2]} (input "
                   f"{list(sx)}, filter {list(sw)}; grouped convolutions are not supported: the filter's third "
                   "dimension must equal the input channels)")
    out_hw, _ = _geometry(sx[1:3], sw[:2], st, dl, pad)
    _check_out("Conv2D", out_hw, sx, sw, padding)
    y = execute(CONV2D, (x, w), {"strides": st, "dilations": dl, "padding": pad})
    return _nhwc_to_nchw(y) if data_format == "NCHW" else y


def conv1d(input: Any, filters: Any, stride: Any, padding: Any, data_format: str = "NWC",  # noqa: A002
           dilations: Any = None, name: str | None = None) -> Tensor:
    """1-D convolution of an NWC ``input`` with a WIO filter, run as a
    conv2d of height 1 (as TF)."""
    x, w = _conv_inputs(input, filters, "Conv2D")
    data_format = data_format or "NWC"
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"data_format must be 'NWC' or 'NCW', got {data_format!r}")
    _check_rank(x, 3, "conv1d")
    _check_rank(w, 3, "conv1d", "filter")
    fmt2 = "NHWC" if data_format == "NWC" else "NCHW"
    s = _spatial(stride, 1, "stride", "Conv2D", data_format)[0]
    d = _spatial(1 if dilations is None else dilations, 1, "dilations", "Conv2D", data_format)[0]
    if not isinstance(padding, str):
        pairs = _padding(padding, 1, "Conv2D", data_format)
        padding = [[0, 0], [0, 0], list(pairs[0]), [0, 0]]
        if fmt2 == "NCHW":
            padding = [[0, 0], [0, 0], [0, 0], padding[2]]
    x4 = array_ops.expand_dims(x, 1 if data_format == "NWC" else 2)
    w4 = array_ops.expand_dims(w, 0)
    y = conv2d(x4, w4, [1, s], padding, data_format=fmt2, dilations=[1, d])
    return array_ops.squeeze(y, [1 if data_format == "NWC" else 2])


def _run_time_output_shape(output_shape: Any) -> tuple:
    # Traced: only the batch may be unknown; the kernel takes it from the input.
    from tapeflow.ops import shape_ops

    if not shape_ops.is_symbolic(output_shape) and not (
            isinstance(output_shape, (list, tuple)) and any(shape_ops.is_symbolic(d) for d in output_shape)):
        raise TypeError(f"output_shape must be a list of integers or an int tensor, got {output_shape!r}")
    _, known = shape_ops.shape_vector(output_shape, "output_shape")
    if known is None or len(known) != 4 or None in known[1:]:
        raise NotImplementedError(
            f"conv2d_transpose: an output_shape known only at run time must still have known spatial and channel "
            f"dims (only the batch may be unknown), got {known}")
    return tuple(known)


def conv2d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any, padding: Any = "SAME",  # noqa: A002
                     data_format: str = "NHWC", dilations: Any = None, name: str | None = None) -> Tensor:
    """The transpose (gradient) of conv2d: ``filters`` is [h, w, out_channels,
    in_channels] and ``output_shape`` the shape of the result."""
    x, w = _conv_inputs(input, filters, "Conv2DBackpropInput")
    data_format = data_format or "NHWC"
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    sx = _check_rank(x, 4, "Conv2DBackpropInput")
    sw = _check_rank(w, 4, "Conv2DBackpropInput", "filter")
    try:
        out_shape = tuple(int(a) for a in np.asarray(
            output_shape.numpy() if isinstance(output_shape, Tensor) else output_shape).reshape(-1))
    except (AttributeError, NotImplementedError, TypeError):
        out_shape = _run_time_output_shape(output_shape)  # graph tensors, e.g. tf.shape(x)[0]
    if len(out_shape) != 4:
        raise ValueError(f"output_shape must have shape (4,), got {list(out_shape)}")
    st = _spatial(strides, 2, "strides", "Conv2DBackpropInput", data_format)
    dl = _spatial(1 if dilations is None else dilations, 2, "dilations", "Conv2DBackpropInput", data_format)
    pad = _padding(padding, 2, "Conv2DBackpropInput", data_format)
    if data_format == "NCHW":
        x = _nchw_to_nhwc(x)
        sx = x._shape_tuple()
        out_shape = (out_shape[0], out_shape[2], out_shape[3], out_shape[1])
    if sw[2] is not None and out_shape[3] != sw[2]:
        raise ValueError(f"output_shape's channel dimension {out_shape[3]} must equal the filter's third dimension "
                         f"{sw[2]} (filter {list(sw)})")
    if sx[3] is not None and sx[3] != sw[3]:
        raise ValueError(f"input channels {sx[3]} must equal the filter's last dimension {sw[3]} (input {list(sx)}, "
                         f"filter {list(sw)})")
    out_hw, _ = _geometry(out_shape[1:3], sw[:2], st, dl, pad)
    if any(a is not None and b is not None and a != b for a, b in zip(out_hw, sx[1:3])) or (
            None not in (sx[0], out_shape[0]) and sx[0] != out_shape[0]):
        raise _err("Conv2DBackpropInput",
                   f"Conv2DCustomBackpropInput: Size of out_backprop doesn't match computed: actual = "
                   f"{list(sx[1:3])}, computed = {list(out_hw)} (output_shape {list(out_shape)}, filter {list(sw)}, "
                   f"strides {list(st)}, padding {padding!r})")
    y = _conv2d_backprop_input(out_shape, w, x, {"strides": st, "dilations": dl, "padding": pad})
    return _nhwc_to_nchw(y) if data_format == "NCHW" else y


# ============================================================================
# Depthwise convolution
# ============================================================================

def _offset_slices(k_hw, out_hw, strides, dilations):
    """For each filter offset (i, j): the slice of the padded input that it
    meets across all output positions."""
    sh, sw = strides
    for i in range(k_hw[0]):
        hi = i * dilations[0]
        for j in range(k_hw[1]):
            wj = j * dilations[1]
            yield i, j, (slice(None), slice(hi, hi + (out_hw[0] - 1) * sh + 1, sh),
                         slice(wj, wj + (out_hw[1] - 1) * sw + 1, sw))


def _depthwise_kernel(x, w, strides, dilations, padding):
    # One multiply-add per filter offset and multiplier over the whole batch,
    # channels innermost (a depthwise conv has too little work per output
    # for an im2col matmul).
    out_hw, pads = _conv_attrs_geom(x.shape, w.shape, strides, dilations, padding)
    kh, kw, c, m = w.shape
    n = x.shape[0]
    cdt = _compute_dtype(x.dtype)
    xp = _pad_hw(x, pads).astype(cdt, copy=False)
    wc = w.astype(cdt, copy=False)
    out = np.zeros((m, n, out_hw[0], out_hw[1], c), dtype=cdt)
    tmp = np.empty(out.shape[1:], dtype=cdt)
    for i, j, sl in _offset_slices((kh, kw), out_hw, strides, dilations):
        window = xp[sl]
        for k in range(m):
            np.multiply(window, wc[i, j, :, k], out=tmp)
            out[k] += tmp
    out = np.moveaxis(out, 0, -1) if m > 1 else out[0][..., None]
    return np.ascontiguousarray(out).reshape(n, out_hw[0], out_hw[1], c * m).astype(x.dtype, copy=False)


def _depthwise_backprop_input_kernel(w, dy, input_sizes, strides, dilations, padding):
    in_shape = (dy.shape[0],) + tuple(input_sizes[1:])
    _, pads = _conv_attrs_geom(in_shape, w.shape, strides, dilations, padding)
    kh, kw, c, m = w.shape
    n, oh, ow, _ = dy.shape
    cdt = _compute_dtype(dy.dtype)
    (t0, b0), (l0, r0) = pads
    h, wd = in_shape[1], in_shape[2]
    dxp = np.zeros((n, h + t0 + b0, wd + l0 + r0, c), dtype=cdt)
    dy5 = dy.reshape(n, oh, ow, c, m).astype(cdt, copy=False)
    wc = w.astype(cdt, copy=False)
    tmp = np.empty((n, oh, ow, c), dtype=cdt)
    for i, j, sl in _offset_slices((kh, kw), (oh, ow), strides, dilations):
        if m == 1:
            np.multiply(dy5[..., 0], wc[i, j, :, 0], out=tmp)
        else:
            np.einsum("nhwcm,cm->nhwc", dy5, wc[i, j], out=tmp)
        dxp[sl] += tmp
    return dxp[:, t0:t0 + h, l0:l0 + wd, :].astype(dy.dtype, copy=False)


def _depthwise_backprop_filter_kernel(x, dy, filter_sizes, strides, dilations, padding):
    kh, kw, c, m = filter_sizes
    out_hw, pads = _conv_attrs_geom(x.shape, filter_sizes, strides, dilations, padding)
    cdt = _compute_dtype(x.dtype)
    cols = _windows(_pad_hw(x, pads), (kh, kw), out_hw, strides, dilations)
    dy5 = dy.reshape(dy.shape[0], out_hw[0], out_hw[1], c, m).astype(cdt, copy=False)
    dw = np.empty((kh, kw, c, m), dtype=cdt)
    for i in range(kh):
        for j in range(kw):
            dw[i, j] = np.einsum("nhwc,nhwcm->cm", cols[:, :, :, i, j, :].astype(cdt, copy=False), dy5)
    return dw.astype(x.dtype, copy=False)


def _depthwise_shape(specs, strides, dilations, padding):
    (sx, dt), (sw, _) = specs
    if sx is None or sw is None:
        return [(None, dt)]
    out_hw, _ = _geometry(sx[1:3], sw[:2], strides, dilations, padding)
    ch = None if sw[2] is None or sw[3] is None else sw[2] * sw[3]
    return [((sx[0],) + out_hw + (ch,), dt)]


DEPTHWISE = defop("DepthwiseConv2dNative", _depthwise_kernel, shape=_depthwise_shape)
DEPTHWISE_BACKPROP_INPUT = defop("DepthwiseConv2dNativeBackpropInput", _depthwise_backprop_input_kernel,
                                 shape=_conv2d_bi_shape)
DEPTHWISE_BACKPROP_FILTER = defop("DepthwiseConv2dNativeBackpropFilter", _depthwise_backprop_filter_kernel,
                                  shape=_conv2d_bf_shape)


def _dw_backprop_input(input_sizes, w, dy, attrs, x=None):
    if x is not None and None in tuple(input_sizes)[1:]:
        return _dyn_backprop_input("Depthwise", w, dy, x, attrs)
    return execute(DEPTHWISE_BACKPROP_INPUT, (w, dy), {"input_sizes": tuple(input_sizes), **attrs})


def _dw_backprop_filter(x, filter_sizes, dy, attrs, w=None):
    if w is not None and None in filter_sizes:
        return _dyn_backprop_filter("Depthwise", x, dy, w, attrs)
    return execute(DEPTHWISE_BACKPROP_FILTER, (x, dy), {"filter_sizes": tuple(filter_sizes), **attrs})


@defgrad("DepthwiseConv2dNative", inputs=True)
def _depthwise_grad(op, g):
    x, w = op.inputs
    attrs = _geom_attrs(op)
    return (_dw_backprop_input(op.input_shapes[0], w, g, attrs, x),
            _dw_backprop_filter(x, op.input_shapes[1], g, attrs, w))


@defgrad("DepthwiseConv2dNativeBackpropInput", inputs=True)
def _depthwise_backprop_input_grad(op, g):
    w, dy = op.inputs
    attrs = _geom_attrs(op)
    return _dw_backprop_filter(g, op.input_shapes[0], dy, attrs, w), execute(DEPTHWISE, (g, w), attrs)


@defgrad("DepthwiseConv2dNativeBackpropFilter", inputs=True)
def _depthwise_backprop_filter_grad(op, g):
    x, dy = op.inputs
    attrs = _geom_attrs(op)
    return _dw_backprop_input(op.input_shapes[0], g, dy, attrs, x), execute(DEPTHWISE, (x, g), attrs)


def depthwise_conv2d(input: Any, filter: Any, strides: Any, padding: Any, data_format: str | None = None,  # noqa: A002
                     dilations: Any = None, name: str | None = None) -> Tensor:
    """Per-channel convolution: ``filter`` [h, w, in_channels, multiplier]
    gives in_channels * multiplier output channels. ``strides`` is
    [1, s, s, 1]."""
    x, w = _conv_inputs(input, filter, "DepthwiseConv2dNative")
    data_format = data_format or "NHWC"
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    sx = _check_rank(x, 4, "DepthwiseConv2dNative")
    sw = _check_rank(w, 4, "DepthwiseConv2dNative", "filter")
    st_raw = [int(a) for a in np.asarray(strides).reshape(-1)]
    if len(st_raw) != 4:
        raise TypeError(f"strides must be a list of 4 ints [1, stride_h, stride_w, 1], got {strides!r}")
    st = _spatial(st_raw, 2, "strides", "DepthwiseConv2dNative", data_format)
    dl = _spatial(1 if dilations is None else dilations, 2, "dilations", "DepthwiseConv2dNative", data_format)
    pad = _padding(padding, 2, "DepthwiseConv2dNative", data_format)
    if data_format == "NCHW":
        x = _nchw_to_nhwc(x)
        sx = x._shape_tuple()
    if st != (1, 1) and dl != (1, 1):
        raise ValueError(f"strides > 1 are not supported in conjunction with dilations > 1 (strides {list(st)}, "
                         f"dilations {list(dl)})")
    if sx[3] is not None and sw[2] is not None and sx[3] != sw[2]:
        raise _err("DepthwiseConv2dNative", f"input and filter must have the same depth: {sx[3]} vs {sw[2]} (input "
                   f"{list(sx)}, filter {list(sw)})")
    out_hw, _ = _geometry(sx[1:3], sw[:2], st, dl, pad)
    _check_out("DepthwiseConv2dNative", out_hw, sx, sw, padding)
    y = execute(DEPTHWISE, (x, w), {"strides": st, "dilations": dl, "padding": pad})
    return _nhwc_to_nchw(y) if data_format == "NCHW" else y


# ============================================================================
# Pooling
# ============================================================================

def _pool_geom(x_shape, ksize, strides, padding):
    return _geometry(x_shape[1:3], ksize, strides, (1, 1), padding)


def _pool_windows(x, ksize, strides, padding, fill):
    out_hw, pads = _pool_geom(x.shape, ksize, strides, padding)
    return _windows(_pad_hw(x, pads, fill), ksize, out_hw, strides, (1, 1)), out_hw, pads


def _lowest(dt):
    return np.finfo(dt).min if dt.kind == "f" else np.iinfo(dt).min


def _tf_max_input(x):
    """As TF's max pooling, which starts from the lowest finite value and
    takes only larger ones: NaN and -inf count as that lowest value."""
    if x.dtype.kind != "f":
        return x
    low = np.finfo(x.dtype).min
    return np.where(np.isnan(x) | (x < low), low, x).astype(x.dtype, copy=False)


def _max_pool_kernel(x, ksize, strides, padding):
    x = _tf_max_input(x)
    win, _, _ = _pool_windows(x, ksize, strides, padding, _lowest(x.dtype))
    return win.max(axis=(3, 4))


def _first_max_masks(x, y, ksize, strides, padding):
    """Yields (slices, mask) per window offset (i, j): ``mask`` marks the
    outputs whose argmax sits at that offset; ``slices`` index the matching
    strided view of the padded input. The argmax is TF's: the window's first
    element, replaced only by strictly larger ones (the first maximum; a
    leading NaN keeps it, a later NaN is skipped)."""
    out_hw, pads = _pool_geom(x.shape, ksize, strides, padding)
    n, h, w, c = x.shape
    xp = _pad_hw(x, pads, _lowest(x.dtype))
    valid = _pad_hw(np.ones((1, h, w, 1), dtype=bool), pads, False)
    oh, ow = out_hw
    sh, sw = strides
    cur = np.full(y.shape, _lowest(x.dtype), dtype=x.dtype)
    winner = np.zeros(y.shape, dtype=np.int32)
    started = np.zeros((1, oh, ow, 1), dtype=bool)
    slices = []
    for i in range(ksize[0]):
        for j in range(ksize[1]):
            sl = (slice(None), slice(i, i + (oh - 1) * sh + 1, sh), slice(j, j + (ow - 1) * sw + 1, sw))
            v, ok = xp[sl], valid[sl]
            take = ok & (~started | (v > cur))
            np.copyto(cur, v, where=take)
            np.copyto(winner, len(slices), where=take)
            started |= ok
            slices.append(sl)
    for k, sl in enumerate(slices):
        yield sl, winner == k
    return pads


def _max_pool_grad_kernel(x, y, g, ksize, strides, padding):
    _, pads = _pool_geom(x.shape, ksize, strides, padding)
    (t0, b0), (l0, r0) = pads
    n, h, w, c = x.shape
    hp, wp = h + t0 + b0, w + l0 + r0
    overlap = strides[0] < ksize[0] or strides[1] < ksize[1]
    tiled = not overlap and y.shape[1] * ksize[0] == hp and y.shape[2] * ksize[1] == wp and strides == ksize
    # Disjoint windows that tile the input write every element exactly once.
    dxp = (np.empty if tiled else np.zeros)((n, hp, wp, c), dtype=g.dtype)
    for sl, hit in _first_max_masks(x, y, ksize, strides, padding):
        view = dxp[sl]
        if overlap:
            view += g * hit  # (ufunc where= is several times slower on strided views)
        else:
            np.multiply(g, hit, out=view)
    return dxp[:, t0:t0 + h, l0:l0 + w, :]


def _max_pool_grad_grad_kernel(x, y, gg, ksize, strides, padding):
    _, pads = _pool_geom(x.shape, ksize, strides, padding)
    ggp = _pad_hw(gg, pads)
    out = np.zeros(y.shape, dtype=gg.dtype)
    for sl, hit in _first_max_masks(x, y, ksize, strides, padding):
        np.copyto(out, ggp[sl], where=hit)
    return out


def _pool_shape(specs, ksize, strides, padding):
    s, dt = specs[0]
    if s is None:
        return [(None, dt)]
    out_hw, _ = _geometry(s[1:3], ksize, strides, (1, 1), padding)
    return [((s[0],) + out_hw + (s[3],), dt)]


MAX_POOL = defop("MaxPool", _max_pool_kernel, shape=_pool_shape)
MAX_POOL_GRAD = defop("MaxPoolGrad", _max_pool_grad_kernel, shape=lambda specs, **a: [specs[0]])
MAX_POOL_GRAD_GRAD = defop("MaxPoolGradGrad", _max_pool_grad_grad_kernel, shape=lambda specs, **a: [specs[1]])


def _pool_attrs(op) -> dict:
    return {"ksize": op.get_attr("ksize"), "strides": op.get_attr("strides"), "padding": op.get_attr("padding")}


@defgrad("MaxPool", inputs=True, outputs=True)
def _max_pool_grad(op, g):
    # The whole gradient goes to the first maximum of each window (as TF).
    return execute(MAX_POOL_GRAD, (op.inputs[0], op.outputs[0], g), _pool_attrs(op))


@defgrad("MaxPoolGrad", inputs=True)
def _max_pool_grad_grad(op, g):
    x, y, _ = op.inputs
    return _zeros(x), _zeros(y), execute(MAX_POOL_GRAD_GRAD, (x, y, g), _pool_attrs(op))


@defgrad("MaxPoolGradGrad", inputs=True)
def _max_pool_grad_grad_grad(op, g):
    x, y, _ = op.inputs
    return _zeros(x), _zeros(y), execute(MAX_POOL_GRAD, (x, y, g), _pool_attrs(op))


def _avg_counts(in_hw, ksize, strides, padding, dtype):
    """How many real (unpadded) elements each output window covers."""
    ones = np.ones((1,) + tuple(in_hw) + (1,), dtype=dtype)
    win, _, _ = _pool_windows(ones, ksize, strides, padding, 0)
    return win.sum(axis=(3, 4))  # (1, OH, OW, 1)


def _avg_pool_kernel(x, ksize, strides, padding):
    win, _, _ = _pool_windows(x, ksize, strides, padding, 0)
    counts = _avg_counts(x.shape[1:3], ksize, strides, padding, x.dtype)
    return (win.sum(axis=(3, 4)) / counts).astype(x.dtype, copy=False)


def _avg_pool_grad_kernel(g, orig_input_shape, ksize, strides, padding):
    in_shape = (g.shape[0],) + tuple(orig_input_shape[1:])
    _, pads = _pool_geom(in_shape, ksize, strides, padding)
    counts = _avg_counts(in_shape[1:3], ksize, strides, padding, g.dtype)
    share = g / counts
    n, oh, ow, c = g.shape
    cols = np.broadcast_to(share[:, :, :, None, None, :], (n, oh, ow, ksize[0], ksize[1], c))
    return _scatter_windows(cols, in_shape, pads, strides, (1, 1)).astype(g.dtype, copy=False)


AVG_POOL = defop("AvgPool", _avg_pool_kernel, shape=_pool_shape)
def _avg_pool_grad_shape(specs, orig_input_shape, **attrs):
    s, dt = specs[0]
    return [((None if s is None else s[0],) + tuple(orig_input_shape[1:]), dt)]


AVG_POOL_GRAD = defop("AvgPoolGrad", _avg_pool_grad_kernel, shape=_avg_pool_grad_shape)


@defgrad("AvgPool", inputs=False)
def _avg_pool_grad(op, g):
    if None in op.input_shapes[0][1:]:
        return _dyn_avg_pool_grad("AvgPool", op, g)
    return execute(AVG_POOL_GRAD, (g,), {"orig_input_shape": tuple(op.input_shapes[0]), **_pool_attrs(op)})


@defgrad("AvgPoolGrad", inputs=False)
def _avg_pool_grad_grad(op, g):
    # AvgPoolGrad is the adjoint of the (linear) AvgPool, and vice versa.
    return execute(AVG_POOL, (g,), _pool_attrs(op))


def _pool(op, name, input, ksize, strides, padding, data_format, n_spatial=2):
    x = t(input)
    data_format = data_format or ("NHWC" if n_spatial == 2 else "NWC")
    if data_format not in ("NHWC", "NCHW", "NWC", "NCW"):
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    s = x._shape_tuple()
    if len(s) != n_spatial + 2:
        raise _err(op.name, f"Input must be 4 or 5-dimensional ({name} needs {n_spatial + 2} dims), got shape "
                   f"{_dims(s)}")
    if op is AVG_POOL:
        check_float(x, "AvgPool")
        if not isinstance(padding, str):
            raise TypeError(f"Expected string for argument 'padding' not {padding!r}. (AvgPool takes 'SAME' or "
                            "'VALID' only; pad with tf.pad first for explicit padding.)")
    elif x._value.dtype.kind not in "iuf":
        raise _err("MaxPool", f"MaxPool does not support {x.dtype.name} inputs")
    ks = _spatial(ksize, n_spatial, "ksize", op.name, data_format)
    st = _spatial(strides, n_spatial, "strides", op.name, data_format)
    pad = _padding(padding, n_spatial, op.name, data_format)
    if n_spatial == 1:
        # 1-D pooling runs as 2-D pooling of height 1.
        x = array_ops.expand_dims(x, 1 if data_format == "NWC" else 2)
        ks, st = (1,) + ks, (1,) + st
        pad = pad if isinstance(pad, str) else ((0, 0),) + pad
        data_format = "NHWC" if data_format == "NWC" else "NCHW"
    if data_format == "NCHW":
        x = _nchw_to_nhwc(x)
    sx = x._shape_tuple()
    out_hw, _ = _geometry(sx[1:3], ks, st, (1, 1), pad)
    if any(o is not None and o < 0 for o in out_hw):
        raise _err(op.name, f"Computed output size would be negative: input {list(s)}, ksize {list(ks)}, "
                   f"padding {padding!r}. Use padding='SAME' or a smaller window")
    if not isinstance(pad, str) and any(p >= k for pr, k in zip(pad, ks) for p in pr):
        raise _err(op.name, f"explicit padding {padding!r} must be smaller than the window size {list(ks)}")
    y = execute(op, (x,), {"ksize": ks, "strides": st, "padding": pad})
    if data_format == "NCHW":
        y = _nhwc_to_nchw(y)
    if n_spatial == 1:
        y = array_ops.squeeze(y, [1 if data_format == "NHWC" else 2])
    return y


def max_pool2d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NHWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """Max over ``ksize`` windows (int or list of 1, 2 or 4 ints); SAME pads
    with -inf so the padding never wins. A tie sends the gradient to the first
    maximum (row-major within the window).

    >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    >>> tf.nn.max_pool2d(x, ksize=2, strides=2, padding="VALID")[0, :, :, 0].numpy()
    array([[ 5.,  7.],
           [13., 15.]], dtype=float32)
    """
    return _pool(MAX_POOL, "max_pool2d", input, ksize, strides, padding, data_format)


def avg_pool2d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NHWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """Mean over ``ksize`` windows; at SAME-padded edges only the real
    elements are counted."""
    return _pool(AVG_POOL, "avg_pool2d", input, ksize, strides, padding, data_format)


def _pool_nd(op, name, input, ksize, strides, padding, data_format):
    x = t(input)
    nd = len(x._shape_tuple())
    if nd == 4:
        return _pool(op, name, x, ksize, strides, padding, data_format)
    if nd == 3:
        return _pool(op, name, x, ksize, strides, padding, data_format, n_spatial=1)
    if nd == 5:
        return _pool3d(MAX_POOL3D if op is MAX_POOL else AVG_POOL3D, name, x, ksize, strides, padding, data_format)
    raise ValueError(f"`input.shape.rank` must be 3, 4 or 5. Received: input.shape={list(x._shape_tuple())} of rank "
                     f"{nd}")


def max_pool(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str | None = None,  # noqa: A002
             name: str | None = None) -> Tensor:
    """Max pooling of a rank-3 (NWC) or rank-4 (NHWC) input."""
    return _pool_nd(MAX_POOL, "max_pool", input, ksize, strides, padding, data_format)


def avg_pool(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str | None = None,  # noqa: A002
             name: str | None = None) -> Tensor:
    """Average pooling of a rank-3 (NWC) or rank-4 (NHWC) input."""
    return _pool_nd(AVG_POOL, "avg_pool", input, ksize, strides, padding, data_format)


def max_pool1d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    return _pool(MAX_POOL, "max_pool1d", input, ksize, strides, padding, data_format, n_spatial=1)


def avg_pool1d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    return _pool(AVG_POOL, "avg_pool1d", input, ksize, strides, padding, data_format, n_spatial=1)


def _argmax_kernel(x, ksize, strides, padding, include_batch_in_index, output_dtype):
    # As TF's kernel: start from each window's first element, then take only
    # strictly larger ones (a leading NaN stays, a later NaN is skipped).
    out_hw, pads = _pool_geom(x.shape, ksize, strides, padding)
    n, h, w, c = x.shape
    oh, ow = out_hw
    xp = _pad_hw(x, pads, _lowest(x.dtype))
    valid = _pad_hw(np.ones((1, h, w, 1), dtype=bool), pads, False)
    rows = np.arange(oh).reshape(1, oh, 1, 1) * strides[0] - pads[0][0]
    cols = np.arange(ow).reshape(1, 1, ow, 1) * strides[1] - pads[1][0]
    chan = np.arange(c).reshape(1, 1, 1, c)
    batch = np.arange(n).reshape(n, 1, 1, 1) * (h * w * c) if include_batch_in_index else 0
    y = np.full((n, oh, ow, c), _lowest(x.dtype), dtype=x.dtype)
    idx = np.zeros(y.shape, dtype=output_dtype)
    started = np.zeros((1, oh, ow, 1), dtype=bool)
    sh, sw = strides
    for i in range(ksize[0]):
        for j in range(ksize[1]):
            sl = (slice(None), slice(i, i + (oh - 1) * sh + 1, sh), slice(j, j + (ow - 1) * sw + 1, sw))
            v, ok = xp[sl], valid[sl]
            take = ok & (~started | (v > y))
            np.copyto(y, v, where=take)
            np.copyto(idx, ((rows + i) * w + (cols + j)) * c + chan + batch, where=take, casting="unsafe")
            started |= ok
    return y, idx


def _argmax_shape(specs, ksize, strides, padding, include_batch_in_index, output_dtype):
    (y_spec,) = _pool_shape(specs, ksize, strides, padding)
    return [y_spec, (y_spec[0], np.dtype(output_dtype))]


MAX_POOL_WITH_ARGMAX = defop("MaxPoolWithArgmax", _argmax_kernel, shape=_argmax_shape, num_outputs=2)


@defgrad("MaxPoolWithArgmax", inputs=True, outputs=True)
def _max_pool_with_argmax_grad(op, g, _):
    # The argmax is the first maximum, exactly where MaxPoolGrad sends g.
    return execute(MAX_POOL_GRAD, (op.inputs[0], op.outputs[0], g), _pool_attrs(op))


def max_pool_with_argmax(input: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NHWC",  # noqa: A002
                         output_dtype: Any = dtypes.int64, include_batch_in_index: bool = False,
                         name: str | None = None) -> tuple:
    """max_pool2d plus the flat index of each maximum: ``(y * width + x) *
    channels + c`` (plus ``b * height * width * channels`` when
    ``include_batch_in_index``)."""
    x = t(input)
    if data_format != "NHWC":
        raise ValueError(f"max_pool_with_argmax supports only data_format='NHWC', got {data_format!r}")
    s = x._shape_tuple()
    if len(s) != 4:
        raise _err("MaxPoolWithArgmax", f"input must be 4-dimensional, got shape {_dims(s)}")
    if x._value.dtype.kind not in "iuf":
        raise _err("MaxPoolWithArgmax", f"MaxPoolWithArgmax does not support {x.dtype.name} inputs")
    out_dt = dtypes.as_dtype(output_dtype)
    if out_dt not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"output_dtype must be int32 or int64, got {out_dt.name}")
    ks = _spatial(ksize, 2, "ksize", "MaxPool", "NHWC")
    st = _spatial(strides, 2, "strides", "MaxPool", "NHWC")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise _err("MaxPoolWithArgmax", f"padding must be 'SAME' or 'VALID', got {padding!r}")
    out_hw, _ = _geometry(s[1:3], ks, st, (1, 1), padding.upper())
    if any(o is not None and o < 0 for o in out_hw):
        raise _err("MaxPoolWithArgmax", f"Computed output size would be negative: input {_dims(s)}, ksize "
                   f"{list(ks)}")
    y, idx = execute(MAX_POOL_WITH_ARGMAX, (x,), {
        "ksize": ks, "strides": st, "padding": padding.upper(),
        "include_batch_in_index": bool(include_batch_in_index), "output_dtype": np.dtype(out_dt.as_numpy_dtype)})
    return y, idx


def local_response_normalization(input: Any, depth_radius: int = 5, bias: float = 1.0,  # noqa: A002
                                 alpha: float = 1.0, beta: float = 0.5, name: str | None = None) -> Tensor:
    """x / (bias + alpha * sum of x**2 over the 2*depth_radius+1 nearest
    channels) ** beta, on a 4-D input. (The windowed sum is a matmul with a
    banded 0/1 matrix, so every order of gradient comes from core ops.)"""
    x = t(input)
    s = x._shape_tuple()
    if x._value.dtype not in (np.float16, np.float32):
        raise _err("LRN", f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed values: half, "
                   "bfloat16, float")
    if len(s) != 4:
        raise _err("LRN", f"in must be 4-dimensional, got shape {_dims(s)}")
    c = s[3]
    r = int(depth_radius)
    ii = np.arange(c)
    band = (np.abs(ii[:, None] - ii[None, :]) <= r).astype(x._value.dtype)
    sqr_sum = math_ops.matmul(square(x), convert_to_tensor(band))
    denom = math_ops.pow(add(multiply(sqr_sum, float(alpha)), float(bias)), float(beta))
    return math_ops.divide_(x, denom)


lrn = local_response_normalization


def conv1d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any, padding: str = "SAME",  # noqa: A002
                     data_format: str = "NWC", dilations: Any = None, name: str | None = None) -> Tensor:
    """The transpose (gradient) of conv1d: ``filters`` is [w, out_channels,
    in_channels]; run as a conv2d_transpose of height 1."""
    x = t(input)
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"data_format must be 'NWC' or 'NCW', got {data_format!r}")
    out = list(as_int_tuple(output_shape, "conv1d_transpose: output_shape"))
    if len(out) != 3:
        raise ValueError(f"output_shape must have 3 entries, got {out}")
    s = _spatial(strides, 1, "strides", "Conv2DBackpropInput", data_format)[0]
    d = _spatial(1 if dilations is None else dilations, 1, "dilations", "Conv2DBackpropInput", data_format)[0]
    if data_format == "NWC":
        y = conv2d_transpose(array_ops.expand_dims(x, 1), array_ops.expand_dims(filters, 0),
                             [out[0], 1, out[1], out[2]], [1, s], padding, dilations=[1, d])
        return array_ops.squeeze(y, [1])
    y = conv2d_transpose(array_ops.expand_dims(x, 2), array_ops.expand_dims(filters, 0),
                         [out[0], out[1], 1, out[2]], [1, 1, 1, s], padding, data_format="NCHW",
                         dilations=[1, 1, 1, d])
    return array_ops.squeeze(y, [2])


def conv_transpose(input: Any, filters: Any, output_shape: Any, strides: Any, padding: str = "SAME",  # noqa: A002
                   data_format: str | None = None, dilations: Any = None, name: str | None = None) -> Tensor:
    """conv1d_transpose or conv2d_transpose, by the input's rank."""
    nd = len(t(input)._shape_tuple())
    if nd == 3:
        return conv1d_transpose(input, filters, output_shape, strides, padding, data_format or "NWC", dilations)
    if nd == 4:
        return conv2d_transpose(input, filters, output_shape, strides, padding, data_format or "NHWC", dilations)
    raise NotImplementedError("tf.nn.conv_transpose of 5-D inputs (conv3d_transpose) is not implemented in "
                              "tapeflow yet.")


# ============================================================================
# 3-D convolution and pooling (NDHWC), on N-D versions of the helpers above
# ============================================================================

def _geometry_nd(in_sp, k_sp, strides, dilations, padding):
    outs, pads = [], []
    for i in range(len(k_sp)):
        pad = padding if isinstance(padding, str) else padding[i]
        o, p = _out_and_pads(in_sp[i], k_sp[i], strides[i], dilations[i], pad)
        outs.append(o)
        pads.append(p)
    return tuple(outs), tuple(pads)


def _pad_nd(x, pads, value=0):
    if all(p == (0, 0) for p in pads):
        return x
    out = np.full((x.shape[0],) + tuple(d + a + b for d, (a, b) in zip(x.shape[1:-1], pads)) + (x.shape[-1],),
                  value, dtype=x.dtype)
    out[(slice(None),) + tuple(slice(a, a + d) for d, (a, _) in zip(x.shape[1:-1], pads))] = x
    return out


def _windows_nd(xp, k_sp, out_sp, strides, dilations):
    """A (N, *out, *k, C) strided view of the padded channels-last input."""
    st = xp.strides
    sp = st[1:-1]
    return np.lib.stride_tricks.as_strided(
        xp, shape=(xp.shape[0],) + tuple(out_sp) + tuple(k_sp) + (xp.shape[-1],),
        strides=(st[0],) + tuple(a * b for a, b in zip(sp, strides)) + tuple(a * b for a, b in zip(sp, dilations))
        + (st[-1],), writeable=False)


def _offsets_nd(k_sp, out_sp, strides, dilations):
    """(flat offset index, slice of the padded input) per filter offset."""
    for flat, offs in enumerate(itertools.product(*[range(k) for k in k_sp])):
        yield flat, offs, (slice(None),) + tuple(
            slice(o * d, o * d + (n - 1) * s + 1, s) for o, d, n, s in zip(offs, dilations, out_sp, strides))


def _crop_nd(xp, in_shape, pads):
    return xp[(slice(None),) + tuple(slice(a, a + d) for d, (a, _) in zip(in_shape[1:-1], pads))]


def _conv3d_kernel(x, w, strides, dilations, padding):
    out_sp, pads = _geometry_nd(x.shape[1:-1], w.shape[:3], strides, dilations, padding)
    cdt = _compute_dtype(x.dtype)
    ci, co = w.shape[3], w.shape[4]
    if min(out_sp) <= 0 or x.shape[0] == 0:
        return np.zeros((x.shape[0],) + tuple(max(o, 0) for o in out_sp) + (co,), dtype=x.dtype)
    win = _windows_nd(_pad_nd(x, pads), w.shape[:3], out_sp, strides, dilations)
    cols = win.reshape(-1, int(np.prod(w.shape[:3])) * ci).astype(cdt, copy=False)  # the im2col copy
    out = cols @ w.reshape(-1, co).astype(cdt, copy=False)
    return out.reshape((x.shape[0],) + out_sp + (co,)).astype(x.dtype, copy=False)


def _conv3d_backprop_input_kernel(w, dy, input_sizes, strides, dilations, padding):
    in_shape = (dy.shape[0],) + tuple(input_sizes[1:])
    _, pads = _geometry_nd(in_shape[1:-1], w.shape[:3], strides, dilations, padding)
    cdt = _compute_dtype(dy.dtype)
    ci, co = w.shape[3], w.shape[4]
    out_sp = dy.shape[1:-1]
    dxp = np.zeros((in_shape[0],) + tuple(d + a + b for d, (a, b) in zip(in_shape[1:-1], pads)) + (ci,), dtype=cdt)
    dyf = dy.reshape(-1, co).astype(cdt, copy=False)
    wc = w.astype(cdt, copy=False)
    for _, offs, sl in _offsets_nd(w.shape[:3], out_sp, strides, dilations):
        dxp[sl] += (dyf @ wc[offs].T).reshape(dy.shape[:-1] + (ci,))
    return _crop_nd(dxp, in_shape, pads).astype(dy.dtype, copy=False)


def _conv3d_backprop_filter_kernel(x, dy, filter_sizes, strides, dilations, padding):
    out_sp, pads = _geometry_nd(x.shape[1:-1], filter_sizes[:3], strides, dilations, padding)
    cdt = _compute_dtype(x.dtype)
    ci, co = filter_sizes[3], filter_sizes[4]
    win = _windows_nd(_pad_nd(x, pads), filter_sizes[:3], out_sp, strides, dilations)
    cols = win.reshape(-1, int(np.prod(filter_sizes[:3])) * ci).astype(cdt, copy=False)
    dw = cols.T @ dy.reshape(-1, co).astype(cdt, copy=False)
    return dw.reshape(filter_sizes).astype(x.dtype, copy=False)


def _conv3d_shape(specs, strides, dilations, padding):
    (sx, dt), (sw, _) = specs
    if sx is None or sw is None:
        return [(None, dt)]
    out_sp, _ = _geometry_nd(sx[1:4], sw[:3], strides, dilations, padding)
    return [((sx[0],) + out_sp + (sw[4],), dt)]


CONV3D = defop("Conv3D", _conv3d_kernel, shape=_conv3d_shape)
CONV3D_BACKPROP_INPUT = defop("Conv3DBackpropInputV2", _conv3d_backprop_input_kernel, shape=_conv2d_bi_shape)
CONV3D_BACKPROP_FILTER = defop("Conv3DBackpropFilterV2", _conv3d_backprop_filter_kernel, shape=_conv2d_bf_shape)


def _c3_bi(input_sizes, w, dy, attrs, x=None):
    if x is not None and None in tuple(input_sizes)[1:]:
        return _dyn_backprop_input("Conv3D", w, dy, x, attrs)
    return execute(CONV3D_BACKPROP_INPUT, (w, dy), {"input_sizes": tuple(input_sizes), **attrs})


def _c3_bf(x, filter_sizes, dy, attrs, w=None):
    if w is not None and None in filter_sizes:
        return _dyn_backprop_filter("Conv3D", x, dy, w, attrs)
    return execute(CONV3D_BACKPROP_FILTER, (x, dy), {"filter_sizes": tuple(filter_sizes), **attrs})


@defgrad("Conv3D", inputs=True)
def _conv3d_grad(op, g):
    x, w = op.inputs
    attrs = _geom_attrs(op)
    return _c3_bi(op.input_shapes[0], w, g, attrs, x), _c3_bf(x, op.input_shapes[1], g, attrs, w)


@defgrad("Conv3DBackpropInputV2", inputs=True)
def _conv3d_backprop_input_grad(op, g):
    w, dy = op.inputs
    attrs = _geom_attrs(op)
    return _c3_bf(g, op.input_shapes[0], dy, attrs, w), execute(CONV3D, (g, w), attrs)


@defgrad("Conv3DBackpropFilterV2", inputs=True)
def _conv3d_backprop_filter_grad(op, g):
    x, dy = op.inputs
    attrs = _geom_attrs(op)
    return _c3_bi(op.input_shapes[0], g, dy, attrs, x), execute(CONV3D, (x, g), attrs)


# -- gradients for a filter or input of unknown (None) static shape ---------
# The *BackpropFilter / *BackpropInput ops take the filter's / input's size as
# an attr; in a graph traced with unknown dims it is known only at run time.
# These ops take the filter / input itself as a third input (only its shape is
# read) and run the family's backprop kernel with it.

_DYN_BF_KINDS = {
    "Conv2D": (_conv2d_backprop_filter_kernel, _conv2d_backprop_input, CONV2D),
    "Depthwise": (_depthwise_backprop_filter_kernel, _dw_backprop_input, DEPTHWISE),
    "Conv3D": (_conv3d_backprop_filter_kernel, _c3_bi, CONV3D),
}


def _dyn_bf_kernel(x, dy, w, kind, strides, dilations, padding):
    return _DYN_BF_KINDS[kind][0](x, dy, w.shape, strides, dilations, padding)


DYNAMIC_BACKPROP_FILTER = defop("DynamicConvBackpropFilter", _dyn_bf_kernel,
                                shape=lambda specs, kind, **attrs: [(specs[2][0], specs[0][1])])


@defgrad("DynamicConvBackpropFilter", inputs=True)
def _dyn_bf_grad(op, g):
    x, dy, _ = op.inputs
    attrs = _geom_attrs(op)
    _, backprop_input, forward = _DYN_BF_KINDS[op.get_attr("kind")]
    return backprop_input(op.input_shapes[0], g, dy, attrs, x), execute(forward, (x, g), attrs), None


def _dyn_backprop_filter(kind: str, x: Tensor, dy: Tensor, w: Tensor, attrs: dict) -> Tensor:
    return execute(DYNAMIC_BACKPROP_FILTER, (x, dy, w), {"kind": kind, **attrs})


_DYN_BI_KINDS = {
    "Conv2D": (_conv2d_backprop_input_kernel, _conv2d_backprop_filter, CONV2D),
    "Depthwise": (_depthwise_backprop_input_kernel, _dw_backprop_filter, DEPTHWISE),
    "Conv3D": (_conv3d_backprop_input_kernel, _c3_bf, CONV3D),
}


def _dyn_bi_kernel(w, dy, x, kind, strides, dilations, padding):
    return _DYN_BI_KINDS[kind][0](w, dy, x.shape, strides, dilations, padding)


DYNAMIC_BACKPROP_INPUT = defop("DynamicConvBackpropInput", _dyn_bi_kernel,
                               shape=lambda specs, kind, **attrs: [(specs[2][0], specs[1][1])])


@defgrad("DynamicConvBackpropInput", inputs=True)
def _dyn_bi_grad(op, g):
    w, dy, _ = op.inputs
    attrs = _geom_attrs(op)
    _, backprop_filter, forward = _DYN_BI_KINDS[op.get_attr("kind")]
    return backprop_filter(g, op.input_shapes[0], dy, attrs, w), execute(forward, (g, w), attrs), None


def _dyn_backprop_input(kind: str, w: Tensor, dy: Tensor, x: Tensor, attrs: dict) -> Tensor:
    return execute(DYNAMIC_BACKPROP_INPUT, (w, dy, x), {"kind": kind, **attrs})


def conv3d(input: Any, filters: Any, strides: Any, padding: Any, data_format: str = "NDHWC",  # noqa: A002
           dilations: Any = None, name: str | None = None) -> Tensor:
    """3-D convolution of an NDHWC ``input`` with a [d, h, w, in, out] filter;
    ``strides`` and ``dilations`` are 5-element lists (or an int / 3 ints)."""
    x, w = _conv_inputs(input, filters, "Conv3D")
    data_format = data_format or "NDHWC"
    if data_format not in ("NDHWC", "NCDHW"):
        raise ValueError(f"data_format must be 'NDHWC' or 'NCDHW', got {data_format!r}")
    sx = _check_rank(x, 5, "Conv3D")
    sw = _check_rank(w, 5, "Conv3D", "filter")
    st = _spatial(strides, 3, "strides", "Conv3D", data_format)
    dl = _spatial(1 if dilations is None else dilations, 3, "dilations", "Conv3D", data_format)
    pad = _padding(padding, 3, "Conv3D", data_format)
    if data_format == "NCDHW":
        x = array_ops.transpose(x, (0, 2, 3, 4, 1))
        sx = x._shape_tuple()
    if sx[4] is not None and sw[3] is not None and sx[4] != sw[3]:
        raise _err("Conv3D", f"Input depth must be evenly divisible by filter depth: {sx[4]} vs {sw[3]} (input "
                   f"{_dims(sx)}, filter {_dims(sw)})")
    out_sp, _ = _geometry_nd(sx[1:4], sw[:3], st, dl, pad)
    _check_out("Conv3D", out_sp, sx, sw, padding)
    y = execute(CONV3D, (x, w), {"strides": st, "dilations": dl, "padding": pad})
    return array_ops.transpose(y, (0, 4, 1, 2, 3)) if data_format == "NCDHW" else y


def _first_max_masks_nd(x, y, ksize, strides, padding, first=True):
    out_sp, pads = _geometry_nd(x.shape[1:-1], ksize, strides, (1,) * len(ksize), padding)
    xp = _pad_nd(_tf_max_input(x), pads, _lowest(x.dtype))
    taken = np.zeros(y.shape, dtype=bool)
    for _, _, sl in _offsets_nd(ksize, out_sp, strides, (1,) * len(ksize)):
        hit = xp[sl] == y
        if first:
            hit &= ~taken
            taken |= hit
        yield sl, hit


def _max_pool3d_kernel(x, ksize, strides, padding):
    out_sp, pads = _geometry_nd(x.shape[1:-1], ksize, strides, (1, 1, 1), padding)
    win = _windows_nd(_pad_nd(_tf_max_input(x), pads, _lowest(x.dtype)), ksize, out_sp, strides, (1, 1, 1))
    return win.max(axis=(4, 5, 6))


def _max_pool3d_grad_kernel(x, y, g, ksize, strides, padding):
    _, pads = _geometry_nd(x.shape[1:-1], ksize, strides, (1, 1, 1), padding)
    dxp = np.zeros((x.shape[0],) + tuple(d + a + b for d, (a, b) in zip(x.shape[1:-1], pads)) + (x.shape[-1],),
                   dtype=g.dtype)
    # As TF's MaxPool3DGrad: every element equal to its window's max gets the gradient (ties too).
    for sl, hit in _first_max_masks_nd(x, y, ksize, strides, padding, first=False):
        dxp[sl] += g * hit
    return _crop_nd(dxp, x.shape, pads)


def _max_pool3d_grad_grad_kernel(x, y, gg, ksize, strides, padding):
    _, pads = _geometry_nd(x.shape[1:-1], ksize, strides, (1, 1, 1), padding)
    ggp = _pad_nd(gg, pads)
    out = np.zeros(y.shape, dtype=gg.dtype)
    for sl, hit in _first_max_masks_nd(x, y, ksize, strides, padding):
        np.copyto(out, ggp[sl], where=hit)
    return out


def _avg_counts_nd(in_sp, ksize, strides, padding, dtype):
    out_sp, pads = _geometry_nd(in_sp, ksize, strides, (1, 1, 1), padding)
    ones = _pad_nd(np.ones((1,) + tuple(in_sp) + (1,), dtype=dtype), pads)
    return _windows_nd(ones, ksize, out_sp, strides, (1, 1, 1)).sum(axis=(4, 5, 6))


def _avg_pool3d_kernel(x, ksize, strides, padding):
    out_sp, pads = _geometry_nd(x.shape[1:-1], ksize, strides, (1, 1, 1), padding)
    win = _windows_nd(_pad_nd(x, pads), ksize, out_sp, strides, (1, 1, 1))
    counts = _avg_counts_nd(x.shape[1:-1], ksize, strides, padding, x.dtype)
    return (win.sum(axis=(4, 5, 6)) / counts).astype(x.dtype, copy=False)


def _avg_pool3d_grad_kernel(g, orig_input_shape, ksize, strides, padding):
    in_shape = (g.shape[0],) + tuple(orig_input_shape[1:])
    _, pads = _geometry_nd(in_shape[1:-1], ksize, strides, (1, 1, 1), padding)
    share = g / _avg_counts_nd(in_shape[1:-1], ksize, strides, padding, g.dtype)
    dxp = np.zeros((in_shape[0],) + tuple(d + a + b for d, (a, b) in zip(in_shape[1:-1], pads)) + (in_shape[-1],),
                   dtype=g.dtype)
    for _, _, sl in _offsets_nd(ksize, g.shape[1:-1], strides, (1, 1, 1)):
        dxp[sl] += share
    return _crop_nd(dxp, in_shape, pads).astype(g.dtype, copy=False)


def _pool3d_shape(specs, ksize, strides, padding):
    s, dt = specs[0]
    if s is None:
        return [(None, dt)]
    out_sp, _ = _geometry_nd(s[1:4], ksize, strides, (1, 1, 1), padding)
    return [((s[0],) + out_sp + (s[4],), dt)]


MAX_POOL3D = defop("MaxPool3D", _max_pool3d_kernel, shape=_pool3d_shape)
MAX_POOL3D_GRAD = defop("MaxPool3DGrad", _max_pool3d_grad_kernel, shape=lambda specs, **a: [specs[0]])
MAX_POOL3D_GRAD_GRAD = defop("MaxPool3DGradGrad", _max_pool3d_grad_grad_kernel, shape=lambda specs, **a: [specs[1]])
AVG_POOL3D = defop("AvgPool3D", _avg_pool3d_kernel, shape=_pool3d_shape)
AVG_POOL3D_GRAD = defop("AvgPool3DGrad", _avg_pool3d_grad_kernel, shape=_avg_pool_grad_shape)


@defgrad("MaxPool3D", inputs=True, outputs=True)
def _max_pool3d_grad(op, g):
    return execute(MAX_POOL3D_GRAD, (op.inputs[0], op.outputs[0], g), _pool_attrs(op))


@defgrad("MaxPool3DGrad", inputs=True)
def _max_pool3d_grad_grad(op, g):
    x, y, _ = op.inputs
    return _zeros(x), _zeros(y), execute(MAX_POOL3D_GRAD_GRAD, (x, y, g), _pool_attrs(op))


@defgrad("MaxPool3DGradGrad", inputs=True)
def _max_pool3d_grad_grad_grad(op, g):
    x, y, _ = op.inputs
    return _zeros(x), _zeros(y), execute(MAX_POOL3D_GRAD, (x, y, g), _pool_attrs(op))


@defgrad("AvgPool3D", inputs=False)
def _avg_pool3d_grad(op, g):
    if None in op.input_shapes[0][1:]:
        return _dyn_avg_pool_grad("AvgPool3D", op, g)
    return execute(AVG_POOL3D_GRAD, (g,), {"orig_input_shape": tuple(op.input_shapes[0]), **_pool_attrs(op)})


@defgrad("AvgPool3DGrad", inputs=False)
def _avg_pool3d_grad_grad(op, g):
    return execute(AVG_POOL3D, (g,), _pool_attrs(op))


# AvgPool's gradient for an input of unknown (None) static shape: the input
# itself is a second input, only its run-time shape is read.
_DYN_AVG_KINDS = {"AvgPool": (_avg_pool_grad_kernel, AVG_POOL), "AvgPool3D": (_avg_pool3d_grad_kernel, AVG_POOL3D)}


def _dyn_avg_pool_grad_kernel(g, x, kind, ksize, strides, padding):
    return _DYN_AVG_KINDS[kind][0](g, x.shape, ksize, strides, padding)


DYNAMIC_AVG_POOL_GRAD = defop("DynamicAvgPoolGrad", _dyn_avg_pool_grad_kernel,
                              shape=lambda specs, kind, **attrs: [(specs[1][0], specs[0][1])])


@defgrad("DynamicAvgPoolGrad", inputs=False)
def _dyn_avg_pool_grad_grad(op, g):
    return execute(_DYN_AVG_KINDS[op.get_attr("kind")][1], (g,), _pool_attrs(op)), None


def _dyn_avg_pool_grad(kind: str, op, g: Tensor) -> Tensor:
    if op.inputs is None:
        raise NotImplementedError(f"{kind} gradient for an input of unknown shape outside a traced graph")
    return execute(DYNAMIC_AVG_POOL_GRAD, (g, op.inputs[0]), {"kind": kind, **_pool_attrs(op)})


def _pool3d(op, name, input, ksize, strides, padding, data_format):
    x = t(input)
    data_format = data_format or "NDHWC"
    if data_format not in ("NDHWC", "NCDHW"):
        raise ValueError(f"data_format must be 'NDHWC' or 'NCDHW', got {data_format!r}")
    s = x._shape_tuple()
    if len(s) != 5:
        raise _err(op.name, f"Input must be 5-dimensional ({name}), got shape {_dims(s)}")
    if op is AVG_POOL3D:
        check_float(x, "AvgPool3D")
    else:
        check_float(x, "MaxPool3D")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise TypeError(f"Expected string for argument 'padding' not {padding!r} ('SAME' or 'VALID').")
    pad = padding.upper()
    pool_op = "MaxPool" if op is MAX_POOL3D else "AvgPool"
    ks = _spatial(ksize, 3, "ksize", pool_op, data_format)
    st = _spatial(strides, 3, "strides", pool_op, data_format)
    if data_format == "NCDHW":
        x = array_ops.transpose(x, (0, 2, 3, 4, 1))
    out_sp, _ = _geometry_nd(x._shape_tuple()[1:4], ks, st, (1, 1, 1), pad)
    if any(o is not None and o < 0 for o in out_sp):
        raise _err(op.name, f"Computed output size would be negative: input {_dims(s)}, ksize {list(ks)}")
    y = execute(op, (x,), {"ksize": ks, "strides": st, "padding": pad})
    return array_ops.transpose(y, (0, 4, 1, 2, 3)) if data_format == "NCDHW" else y


def max_pool3d(input: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NDHWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """Max pooling of an NDHWC input (the gradient goes to the first maximum)."""
    return _pool3d(MAX_POOL3D, "max_pool3d", input, ksize, strides, padding, data_format)


def avg_pool3d(input: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NDHWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """Average pooling of an NDHWC input (edges count only real elements)."""
    return _pool3d(AVG_POOL3D, "avg_pool3d", input, ksize, strides, padding, data_format)


# ============================================================================
# Dropout
# ============================================================================

# The keep mask is a random op of its own (drawn at run time, also inside
# tf.function graphs) that follows tf.random's global/op seed rules: its seed
# attrs come from random_ops.seed_attrs and it draws from that stream.

def _dropout_mask_kernel(x, rate, noise_shape, seed, seed2, instance):
    # ``rate`` is a run-time input (a traced tensor rate is only known then).
    from tapeflow.ops import random_ops

    shape = tuple(x.shape[i - (len(noise_shape) - x.ndim)] if d is None else d
                  for i, d in enumerate(noise_shape)) if noise_shape is not None else x.shape
    return random_ops.stream(seed, seed2, instance).random(shape) >= rate


def _dropout_mask_shape(specs, noise_shape, **attrs):
    return [(specs[0][0] if noise_shape is None else tuple(noise_shape), np.dtype(bool))]


DROPOUT_MASK = defop("DropoutKeepMask", _dropout_mask_kernel, shape=_dropout_mask_shape)
DROPOUT_MASK.extra["stateful"] = True  # never folded or merged by graph compilation
NotDifferentiable("DropoutKeepMask")


def dropout(x: Any, rate: Any, noise_shape: Any = None, seed: int | None = None, name: str | None = None) -> Tensor:
    """Zeroes each element with probability ``rate`` and scales the kept ones
    by 1 / (1 - rate). ``noise_shape`` (broadcastable to x's shape) shares one
    draw along its size-1 dimensions. The draw follows ``tf.random.set_seed``
    and ``seed`` like every tf.random op.

    >>> y = tf.nn.dropout(tf.ones([1000]), rate=0.5, seed=1)
    >>> sorted(set(y.numpy().tolist()))
    [0.0, 2.0]
    """
    x = t(x)
    if x._value.dtype.kind != "f":
        raise ValueError(f"`x.dtype` must be a floating point tensor as `x` will be scaled. Received: "
                         f"x_dtype=<dtype: '{x.dtype.name}'>")
    if isinstance(rate, Tensor):
        # TF range-checks only Python rates; a tensor rate of 1 drops everything.
        rate_t = cast(rate, x.dtype) if rate._value.dtype != x._value.dtype else rate
    else:
        if not 0 <= float(rate) < 1:
            raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={rate}")
        if float(rate) == 0:
            return x
        rate_t = convert_to_tensor(float(rate), dtype=x.dtype)
    sx = x._shape_tuple()
    ns = None
    if noise_shape is not None:
        ns = tuple(None if d is None else int(d) for d in (
            noise_shape.numpy() if isinstance(noise_shape, Tensor) else noise_shape))
        try:
            shapes.broadcast_shape(sx, ns, "dropout")
        except InvalidArgumentError:
            raise _err("SelectV2", f"dropout: noise_shape {_dims(ns)} must be broadcastable to x's shape "
                       f"{_dims(sx)}") from None
        if len(ns) > len(sx):
            raise _err("SelectV2", f"dropout: noise_shape {_dims(ns)} has more dimensions than x {_dims(sx)}")
    from tapeflow.ops import random_ops

    keep = execute(DROPOUT_MASK, (x, rate_t), {"noise_shape": ns, **random_ops.seed_attrs(seed)})
    scaled = multiply(x, math_ops.reciprocal(subtract(1.0, rate_t)))  # x * (1 / (1 - rate)), as TF
    return where(keep, scaled, _zeros(x))


# ============================================================================
# Embeddings
# ============================================================================

def embedding_lookup(params: Any, ids: Any, max_norm: Any = None, name: str | None = None) -> Tensor:
    """Rows of ``params`` (a tensor or Variable) at ``ids``; the gradient with
    respect to ``params`` is a ``tf.IndexedSlices`` touching only those rows.

    >>> table = tf.Variable(tf.reshape(tf.range(6.0), [3, 2]))
    >>> with tf.GradientTape() as tape:
    ...     rows = tf.nn.embedding_lookup(table, [2, 0, 2])
    >>> grad = tape.gradient(rows, table)
    >>> type(grad).__name__, grad.indices.numpy().tolist()
    ('IndexedSlices', [2, 0, 2])
    """
    if isinstance(params, (list, tuple)):
        if not params:
            raise ValueError("Need at least one param")
        if len(params) == 1:
            params = params[0]
        else:
            # TF2's "div" partition strategy: shard i holds a contiguous block of
            # ids, so the shards in order are the concatenated table. (The
            # per-shard gradients are then dense slices, not IndexedSlices.)
            params = array_ops.concat([_read(p) for p in params], axis=0)
    rows = array_ops.gather(params, ids)
    if max_norm is None:
        return rows
    # Rows longer than max_norm are scaled down to it (clip_by_norm per row).
    nd_ids = len(t(ids)._shape_tuple()) if not isinstance(ids, Tensor) else len(ids._shape_tuple())
    nd = len(rows._shape_tuple())
    axes = list(range(nd_ids, nd))
    l2sum = reduce_sum(square(rows), axis=axes, keepdims=True)
    positive = greater(l2sum, 0)
    l2norm = where(positive, math_ops.sqrt(where(positive, l2sum, array_ops.ones_like(l2sum))), l2sum)
    clip = convert_to_tensor(max_norm, dtype=rows.dtype)
    return math_ops.divide_(multiply(rows, clip), math_ops.maximum(l2norm, clip))


def _read(p: Any) -> Tensor:
    from tapeflow.framework.variables import Variable

    return p.value() if isinstance(p, Variable) else t(p)


# ============================================================================
# Smaller tf.nn functions (composites of the ops above)
# ============================================================================

def convolution(input: Any, filters: Any, strides: Any = None, padding: str = "VALID",  # noqa: A002
                data_format: str | None = None, dilations: Any = None, name: str | None = None) -> Tensor:
    """N-D convolution, dispatched on the input's rank (1-D or 2-D here)."""
    nd = len(t(input)._shape_tuple())
    strides = 1 if strides is None else strides
    if nd == 3:
        return conv1d(input, filters, strides, padding, data_format or "NWC", dilations)
    if nd == 4:
        return conv2d(input, filters, strides, padding, data_format or "NHWC", dilations)
    if nd == 5:
        return conv3d(input, filters, strides, padding, data_format or "NDHWC", dilations)
    raise ValueError(f"`input` must have rank 3, 4 or 5 (one batch dim, 1-3 spatial dims, one channel dim); got "
                     f"shape {list(t(input)._shape_tuple())}")


def atrous_conv2d(value: Any, filters: Any, rate: int, padding: str, name: str | None = None) -> Tensor:
    """conv2d with ``dilations=rate`` (a dilated, "atrous" convolution)."""
    if int(rate) < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    return conv2d(value, filters, 1, padding, dilations=int(rate))


def separable_conv2d(input: Any, depthwise_filter: Any, pointwise_filter: Any, strides: Any,  # noqa: A002
                     padding: str, data_format: str | None = None, dilations: Any = None,
                     name: str | None = None) -> Tensor:
    """depthwise_conv2d followed by a 1x1 conv2d with ``pointwise_filter``."""
    y = depthwise_conv2d(input, depthwise_filter, strides, padding, data_format=data_format, dilations=dilations)
    return conv2d(y, pointwise_filter, 1, "VALID", data_format=data_format or "NHWC")


def pool(input: Any, window_shape: Any, pooling_type: str, strides: Any = None, padding: str = "VALID",  # noqa: A002
         data_format: str | None = None, dilations: Any = None, name: str | None = None) -> Tensor:
    """Max or average pooling ("MAX"/"AVG") over 1 or 2 spatial dims."""
    if dilations is not None and any(int(d) != 1 for d in np.asarray(dilations).reshape(-1)):
        raise NotImplementedError("tf.nn.pool with dilation_rate > 1 is not implemented in tapeflow yet.")
    kind = str(pooling_type).upper()
    if kind not in ("MAX", "AVG"):
        raise ValueError(f"pooling_type must be 'MAX' or 'AVG', got {pooling_type!r}")
    fn = max_pool if kind == "MAX" else avg_pool
    return fn(input, window_shape, 1 if strides is None else strides, padding, data_format)


def crelu(features: Any, name: str | None = None, axis: int = -1) -> Tensor:
    """concat([relu(x), relu(-x)], axis): keeps both signs of the activation."""
    x = t(features)
    return array_ops.concat([math_ops.relu(x), math_ops.relu(negative(x))], axis=axis)


def weighted_cross_entropy_with_logits(labels: Any, logits: Any, pos_weight: Any, name: str | None = None) -> Tensor:
    """sigmoid_cross_entropy_with_logits with the positive term weighted by
    ``pos_weight``, in the same overflow-free form."""
    x = _float_input(logits, "WeightedCrossEntropyWithLogits")
    z = convert_to_tensor(labels, dtype_hint=x.dtype)
    sx, sz = x._shape_tuple(), z._shape_tuple()
    if len(sx) != len(sz) or any(a is not None and b is not None and a != b for a, b in zip(sx, sz)):
        raise ValueError(f"`logits` and `labels` must have the same shape, received ({tuple(sx)} vs {tuple(sz)}).")
    log_weight = add(multiply(subtract(convert_to_tensor(pos_weight, dtype_hint=x.dtype), 1.0), z), 1.0)
    softplus_neg = add(log1p(exp(negative(math_ops.abs(x)))), math_ops.relu(negative(x)))
    return add(multiply(subtract(1.0, z), x), multiply(log_weight, softplus_neg))


def log_poisson_loss(targets: Any, log_input: Any, compute_full_loss: bool = False, name: str | None = None) -> Tensor:
    """exp(log_input) - log_input * targets (+ Stirling's term for targets > 1
    when ``compute_full_loss``)."""
    li = _float_input(log_input, "LogPoissonLoss")
    z = convert_to_tensor(targets, dtype_hint=li.dtype)
    result = subtract(exp(li), multiply(li, z))
    if not compute_full_loss:
        return result
    ones = array_ops.ones_like(z)
    safe = where(greater(z, 1.0), z, ones)
    stirling = add(subtract(multiply(safe, math_ops.log(safe)), safe),
                   multiply(math_ops.log(multiply(safe, 2.0 * math.pi)), 0.5))
    return add(result, where(greater(z, 1.0), stirling, array_ops.zeros_like(z)))


def sufficient_statistics(x: Any, axes: Any, shift: Any = None, keepdims: bool = False,
                          name: str | None = None) -> tuple:
    """(count, sum, sum of squares, shift) over ``axes``: the inputs of
    normalize_moments."""
    x = t(x)
    axes = axis_list(axes)
    shape = x._shape_tuple()
    count = 1
    for a in axes:
        count *= shape[a]
    counts = convert_to_tensor(float(count), dtype=x.dtype)
    if shift is not None:
        shift = convert_to_tensor(shift, dtype_hint=x.dtype)
        m_ss = reduce_sum(subtract(x, shift), axis=axes, keepdims=keepdims)
        v_ss = reduce_sum(math_ops.squared_difference(x, shift), axis=axes, keepdims=keepdims)
    else:
        m_ss = reduce_sum(x, axis=axes, keepdims=keepdims)
        v_ss = reduce_sum(square(x), axis=axes, keepdims=keepdims)
    return counts, m_ss, v_ss, shift


def normalize_moments(counts: Any, mean_ss: Any, variance_ss: Any, shift: Any, name: str | None = None) -> tuple:
    """Mean and variance from sufficient statistics."""
    m = t(mean_ss)
    divisor = math_ops.reciprocal(convert_to_tensor(counts, dtype_hint=m.dtype))
    shifted_mean = multiply(m, divisor)
    mean = shifted_mean if shift is None else add(shifted_mean, convert_to_tensor(shift, dtype_hint=m.dtype))
    variance = subtract(multiply(convert_to_tensor(variance_ss, dtype_hint=m.dtype), divisor), square(shifted_mean))
    return mean, variance


def weighted_moments(x: Any, axes: Any, frequency_weights: Any, keepdims: bool = False,
                     name: str | None = None) -> tuple:
    """Frequency-weighted mean and variance over ``axes``."""
    x = t(x)
    axes = axis_list(axes)
    fw = convert_to_tensor(frequency_weights, dtype_hint=x.dtype)
    weighted_sum = reduce_sum(multiply(fw, x), axis=axes, keepdims=True)
    full_w = add(fw, array_ops.zeros_like(x))  # broadcast the weights to x's shape
    divisor = math_ops.reciprocal(reduce_sum(full_w, axis=axes, keepdims=True))
    mean = multiply(weighted_sum, divisor)
    variance = multiply(reduce_sum(multiply(full_w, math_ops.squared_difference(x, mean)), axis=axes,
                                   keepdims=True), divisor)
    if not keepdims:
        mean = array_ops.squeeze(mean, axes)
        variance = array_ops.squeeze(variance, axes)
    return mean, variance


def zero_fraction(value: Any, name: str | None = None) -> Tensor:
    """The fraction of zeros in ``value``, as float32."""
    x = t(value)
    return reduce_mean(cast(math_ops.equal(x, array_ops.zeros_like(x)), dtypes.float32))


def _replicas_in_sync(fn_name: str) -> int:
    """The current strategy's replica count; a cross-replica call under a strategy's scope is TF's RuntimeError."""
    from tapeflow.distribute import strategies

    if strategies.has_strategy() and strategies.in_cross_replica_context():
        raise RuntimeError(f"You are calling `{fn_name}` in cross replica context, while it was expected to be "
                           "called in replica context.")
    return strategies.get_strategy().num_replicas_in_sync


def compute_average_loss(per_example_loss: Any, sample_weight: Any = None, global_batch_size: Any = None) -> Tensor:
    """``sum(per_example_loss * sample_weight) / global_batch_size``; the global batch size defaults to
    this replica's batch size times ``num_replicas_in_sync``. Summed over replicas (``strategy.reduce``
    or the optimizer's gradient allreduce) this is the mean over the global batch."""
    num_replicas = _replicas_in_sync("compute_average_loss")
    loss = t(per_example_loss)
    if sample_weight is not None:
        loss = multiply(loss, convert_to_tensor(sample_weight, dtype_hint=loss.dtype))
    if global_batch_size is None:
        shape = loss._shape_tuple()
        n = shape[0] if shape else 1
        if n is None:
            n = math_ops.cast(array_ops.shape(loss)[0], loss.dtype)
            return math_ops.divide_(reduce_sum(loss), n * float(num_replicas))
        global_batch_size = n * num_replicas
    return math_ops.divide_(reduce_sum(loss), convert_to_tensor(float(global_batch_size), dtype=loss.dtype))


def scale_regularization_loss(regularization_loss: Any) -> Tensor:
    """The summed regularization loss divided by ``num_replicas_in_sync`` (added once over all replicas)."""
    num_replicas = _replicas_in_sync("scale_regularization_loss")
    if isinstance(regularization_loss, (list, tuple)):
        regularization_loss = math_ops.add_n(list(regularization_loss))
    total = reduce_sum(t(regularization_loss))
    if num_replicas == 1:
        return total
    return math_ops.divide_(total, convert_to_tensor(float(num_replicas), dtype=total.dtype))


def _in_top_k_kernel(predictions, targets, k):
    n, classes = predictions.shape
    if targets.size and (targets.min() < 0 or targets.max() >= classes):
        bad = targets[(targets < 0) | (targets >= classes)][0]
        raise InvalidArgumentError(None, None, f"targets[...] = {int(bad)} is out of range [0, {classes}) "
                                   "[Op:InTopKV2]")
    target_vals = predictions[np.arange(n), targets]
    larger = (predictions > target_vals[:, None]).sum(axis=1)
    return np.isfinite(target_vals) & (larger < k)


IN_TOP_K = defop("InTopKV2", _in_top_k_kernel, shape=lambda specs, k: [(specs[1][0], np.dtype(bool))])
NotDifferentiable("InTopKV2")


def in_top_k(targets: Any, predictions: Any, k: int, name: str | None = None) -> Tensor:
    """Whether each target class is among the ``k`` largest predictions (ties
    count as in the top k)."""
    p = _float_input(predictions, "InTopKV2")
    tg = convert_to_tensor(targets)
    if tg._value.dtype.kind not in "iu":
        raise TypeError(f"targets must be int32 or int64, got {tg.dtype.name}")
    if len(p._shape_tuple()) != 2 or len(tg._shape_tuple()) != 1:
        raise _err("InTopKV2", f"predictions must be 2-D and targets 1-D, got {_dims(p._shape_tuple())} and "
                   f"{_dims(tg._shape_tuple())}")
    n_pred, n_tg = p._shape_tuple()[0], tg._shape_tuple()[0]
    if n_pred is not None and n_tg is not None and n_pred != n_tg:
        raise _err("InTopKV2", f"First dimension of predictions {n_pred} must match length of targets {n_tg}")
    return execute(IN_TOP_K, (p, tg), {"k": int(k)})


__all__ = [
    "relu6", "leaky_relu", "elu", "selu", "softsign", "gelu", "silu", "swish", "log_sigmoid", "softmax",
    "log_softmax", "softmax_cross_entropy_with_logits", "sparse_softmax_cross_entropy_with_logits",
    "sigmoid_cross_entropy_with_logits", "l2_loss", "l2_normalize", "moments", "batch_normalization", "bias_add",
    "conv1d", "conv2d", "conv2d_transpose", "depthwise_conv2d", "max_pool", "avg_pool", "max_pool1d", "avg_pool1d",
    "max_pool2d", "avg_pool2d", "dropout", "embedding_lookup", "convolution", "atrous_conv2d", "separable_conv2d",
    "pool", "crelu", "weighted_cross_entropy_with_logits", "log_poisson_loss", "sufficient_statistics",
    "normalize_moments", "weighted_moments", "zero_fraction", "compute_average_loss", "scale_regularization_loss",
    "in_top_k", "conv3d", "max_pool3d", "avg_pool3d", "max_pool_with_argmax", "local_response_normalization",
    "lrn", "conv1d_transpose", "conv_transpose",
]
