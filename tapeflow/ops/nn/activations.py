"""Activation ops of ``tf.nn``: relu6, leaky_relu, elu, selu, softsign, gelu, silu, log_sigmoid,
softmax and log_softmax, crelu, zero_fraction. Each op: ``defop`` (NumPy kernel + shape rule),
``defgrad`` (gradient rule written with tapeflow ops), then the public function."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import array_ops, math_ops, shapes
from tapeflow.ops._helpers import check_float, pair, t
from tapeflow.ops.math_ops import (
    add, cast, exp, less, multiply, negative, reduce_mean, reduce_sum, sigmoid, softplus, square, subtract, tanh, where,
)
from tapeflow.ops.nn._common import _err, _float_input
from tapeflow.ops.registry import defgrad, defop
from tapeflow.ops.special_ops import _erfc_vec as _erfc  # SciPy's erfc when installed, else math.erfc


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
    # d/dx of dy * (Phi(x) + x pdf(x)) = dy pdf(x) (2 - x^2), summed in the order TF's
    # composite (0.5 x erfc(-x / sqrt 2)) differentiates it: exp(-x^2/2) multiplies before
    # the x^2 factor, so a huge |x| gives 0 as in TF (not 0 * inf = NaN).
    dy, x = op.inputs
    gdy = multiply(g, dy)
    pdf = multiply(exp(multiply(square(x), -0.5)), _INV_SQRT_2PI)
    gx = subtract(multiply(multiply(gdy, pdf), 2.0), multiply(multiply(multiply(gdy, x), pdf), x))
    return gelu_grad(g, x), gx


def gelu_grad(dy: Any, x: Any) -> Tensor:
    """The GeluGrad op: ``dy * d gelu(x) / dx`` (exact gelu)."""
    dy, x = pair(dy, x, "GeluGrad")
    return execute(GELU_GRAD, (dy, x))


def gelu(features: Any, approximate: bool = False, name: str | None = None) -> Tensor:
    """Gaussian error linear unit: x * Phi(x); ``approximate=True`` uses the
    tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    x = t(features)
    if not x.dtype.is_floating:
        raise ValueError(f"`features.dtype` must be a floating point tensor.Received:features.dtype={x.dtype!r}")
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

# (The array methods, not np.max/np.sum: the same reductions without their Python wrappers' ~1 us a
# call, which a small training step feels.)
def _softmax_kernel(x, axis):
    m = x.max(axis=axis, keepdims=True) if x.size else 0
    e = np.exp(x - m)
    return (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype, copy=False)


def _log_softmax_kernel(x, axis):
    m = x.max(axis=axis, keepdims=True) if x.size else 0
    shifted = x - m
    return (shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))).astype(x.dtype, copy=False)


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


def crelu(features: Any, name: str | None = None, axis: int = -1) -> Tensor:
    """concat([relu(x), relu(-x)], axis): keeps both signs of the activation."""
    x = t(features)
    return array_ops.concat([math_ops.relu(x), math_ops.relu(negative(x))], axis=axis)


def zero_fraction(value: Any, name: str | None = None) -> Tensor:
    """The fraction of zeros in ``value``, as float32."""
    x = t(value)
    return reduce_mean(cast(math_ops.equal(x, array_ops.zeros_like(x)), dtypes.float32))
