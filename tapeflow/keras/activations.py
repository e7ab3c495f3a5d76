"""``tf.keras.activations``: activation functions by name or callable."""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

import numpy as np

from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow import nn
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo

__all__ = ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "linear", "softplus", "elu", "selu", "gelu",
           "swish", "silu", "exponential", "get", "serialize", "deserialize", "leaky_relu", "relu6", "mish", "softsign",
           "log_sigmoid", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "celu", "glu", "sparsemax",
           "squareplus", "soft_shrink", "hard_shrink", "tanh_shrink", "threshold", "sparse_plus", "sparse_sigmoid"]


def _t(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def relu(x: Any, negative_slope: float = 0.0, max_value: float | None = None, threshold: float = 0.0) -> Tensor:
    """max(x, 0), with Keras' optional leak, cap and threshold."""
    x = _t(x)
    if negative_slope == 0.0 and max_value is None and threshold == 0.0:
        return mo.relu(x)
    if threshold != 0.0:
        y = mo.where(mo.greater(x, threshold), x, mo.zeros_like_(x)) if negative_slope == 0.0 else x
    else:
        y = mo.relu(x)
    if negative_slope != 0.0:
        y = mo.where(mo.greater_equal(x, threshold), x, negative_slope * (x - threshold))
    if max_value is not None:
        y = mo.minimum(y, max_value)
    return y


def linear(x: Any) -> Any:
    return x


def sigmoid(x: Any) -> Tensor:
    return mo.sigmoid(_t(x))


def tanh(x: Any) -> Tensor:
    return mo.tanh(_t(x))


def hard_sigmoid(x: Any) -> Tensor:
    """Keras 3's piecewise-linear sigmoid: ``relu6(x + 3) / 6``."""
    x = _t(x)
    return mo.minimum(mo.maximum(x / 6.0 + 0.5, 0.0), 1.0)


def softmax(x: Any, axis: int = -1) -> Tensor:
    return nn.softmax(_t(x), axis=axis)


def log_softmax(x: Any, axis: int = -1) -> Tensor:
    return nn.log_softmax(_t(x), axis=axis)


def softplus(x: Any) -> Tensor:
    return mo.softplus(_t(x))


def elu(x: Any, alpha: float = 1.0) -> Tensor:
    x = _t(x)
    return mo.where(mo.greater(x, 0.0), x, alpha * mo.expm1(mo.minimum(x, 0.0)))


def selu(x: Any) -> Tensor:
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def gelu(x: Any, approximate: bool = False) -> Tensor:
    x = _t(x)
    if approximate:
        c = 0.7978845608028654  # sqrt(2/pi)
        return 0.5 * x * (1.0 + mo.tanh(c * (x + 0.044715 * x * x * x)))
    from tapeflow.ops.nn.activations import gelu as nn_gelu

    return nn_gelu(x)  # Keras's TF backend: tf.nn.gelu, 0.5 x erfc(-x / sqrt(2))


def silu(x: Any) -> Tensor:
    """``x * sigmoid(x)``; ``swish`` is the same function (Keras 3 serializes both as ``"silu"``)."""
    x = _t(x)
    return x * mo.sigmoid(x)


swish = silu


def exponential(x: Any) -> Tensor:
    return mo.exp(_t(x))


# Keras 3's newer activations, composed of existing tapeflow ops (so their gradients are the ops' own)

def leaky_relu(x: Any, negative_slope: float = 0.2) -> Tensor:
    """x for x >= 0, ``negative_slope * x`` below (Keras 3's default slope is 0.2)."""
    return nn.leaky_relu(_t(x), alpha=negative_slope)


def relu6(x: Any) -> Tensor:
    """min(max(x, 0), 6)."""
    return nn.relu6(_t(x))


def softsign(x: Any) -> Tensor:
    """x / (|x| + 1)."""
    return nn.softsign(_t(x))


def log_sigmoid(x: Any) -> Tensor:
    """log(sigmoid(x)) = -softplus(-x)."""
    return -mo.softplus(-_t(x))


def mish(x: Any) -> Tensor:
    """x * tanh(softplus(x))."""
    x = _t(x)
    return x * mo.tanh(mo.softplus(x))


def hard_silu(x: Any) -> Tensor:
    """x * hard_sigmoid(x) (also ``hard_swish``)."""
    x = _t(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def hard_tanh(x: Any) -> Tensor:
    """x clipped to [-1, 1]."""
    return mo.clip_by_value(_t(x), -1.0, 1.0)


def celu(x: Any, alpha: float = 1.0) -> Tensor:
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    x = _t(x)
    return mo.relu(x) + alpha * mo.expm1(mo.minimum(x, 0.0) / alpha)


def glu(x: Any, axis: int = -1) -> Tensor:
    """a * sigmoid(b), where a and b are the two halves of ``x`` along ``axis``."""
    x = _t(x)
    n = x._shape_tuple()[axis]
    if n is not None and n % 2 != 0:
        raise ValueError(f"axis size must be divisible by 2. Received: x.shape={x._shape_tuple()} with axis={axis}")
    a, b = ao.split(x, 2, axis=axis)
    return a * mo.sigmoid(b)


def squareplus(x: Any, b: float = 4) -> Tensor:
    """(x + sqrt(x**2 + b)) / 2."""
    x = _t(x)
    return (x + mo.sqrt(x * x + float(b))) / 2.0


def soft_shrink(x: Any, threshold: float = 0.5) -> Tensor:
    """x - threshold above ``threshold``, x + threshold below ``-threshold``, else 0."""
    x = _t(x)
    zero = mo.zeros_like_(x)
    return mo.where(mo.greater(x, threshold), x - threshold,
                    mo.where(mo.less(x, -threshold), x + threshold, zero))


def hard_shrink(x: Any, threshold: float = 0.5) -> Tensor:
    """x where |x| > threshold, else 0."""
    x = _t(x)
    return mo.where(mo.greater(mo.abs(x), threshold), x, mo.zeros_like_(x))


def tanh_shrink(x: Any) -> Tensor:
    """x - tanh(x)."""
    x = _t(x)
    return x - mo.tanh(x)


def threshold(x: Any, threshold: float, default_value: float) -> Tensor:
    """x where x > threshold, else ``default_value``."""
    x = _t(x)
    return mo.where(mo.greater(x, threshold), x, mo.zeros_like_(x) + default_value)


def sparse_plus(x: Any) -> Tensor:
    """0 for x <= -1, (x + 1)**2 / 4 for -1 < x < 1, x for x >= 1."""
    x = _t(x)
    return mo.where(mo.less_equal(x, -1.0), mo.zeros_like_(x),
                    mo.where(mo.less(x, 1.0), 0.25 * mo.square(x + 1.0), x))


def sparse_sigmoid(x: Any) -> Tensor:
    """0 for x <= -1, (x + 1) / 2 for -1 < x < 1, 1 for x >= 1."""
    x = _t(x)
    return mo.where(mo.less_equal(x, -1.0), mo.zeros_like_(x),
                    mo.where(mo.greater_equal(x, 1.0), mo.ones_like_(x), 0.5 * (x + 1.0)))


def sparsemax(x: Any, axis: int = -1) -> Tensor:
    """Euclidean projection of ``x`` onto the probability simplex along ``axis`` (Martins & Astudillo 2016):
    max(x - tau, 0), with tau chosen so the result sums to 1."""
    x = _t(x)
    rank = len(x._shape_tuple())
    axis = axis % rank
    n = x._shape_tuple()[axis]
    if n is None:
        raise NotImplementedError("tf.keras.activations.sparsemax needs a static size along `axis` in tapeflow")
    from tapeflow.ops import special_ops

    srt = special_ops.sort(x, axis=axis, direction="DESCENDING")
    csum = mo.cumsum(srt, axis=axis)
    r_shape = [1] * rank
    r_shape[axis] = n
    r = convert_to_tensor(np.arange(1, n + 1, dtype=x.dtype.as_numpy_dtype).reshape(r_shape))
    support = mo.greater(srt - (csum - 1.0) / r, 0.0)
    k = mo.reduce_sum(mo.cast(support, x.dtype), axis=axis, keepdims=True)
    tau = (mo.reduce_sum(mo.where(support, csum, mo.zeros_like_(csum)), axis=axis, keepdims=True) - 1.0) / k
    return mo.maximum(x - tau, 0.0)


_BY_NAME: dict[str, Callable] = {
    "relu": relu, "sigmoid": sigmoid, "tanh": tanh, "softmax": softmax, "log_softmax": log_softmax,
    "linear": linear, "softplus": softplus, "elu": elu, "selu": selu, "gelu": gelu, "swish": swish,
    "silu": silu, "exponential": exponential, "hard_sigmoid": hard_sigmoid, "leaky_relu": leaky_relu,
    "relu6": relu6, "softsign": softsign, "log_sigmoid": log_sigmoid, "mish": mish, "hard_silu": hard_silu,
    "hard_swish": hard_silu, "hard_tanh": hard_tanh, "celu": celu, "glu": glu, "squareplus": squareplus,
    "soft_shrink": soft_shrink, "hard_shrink": hard_shrink, "tanh_shrink": tanh_shrink, "threshold": threshold,
    "sparse_plus": sparse_plus, "sparse_sigmoid": sparse_sigmoid, "sparsemax": sparsemax,
}


def get(identifier: Any) -> Callable:
    """The activation for a name (``"relu"``), a callable, or None (linear)."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        fn = _BY_NAME.get(identifier)
        if fn is None:
            raise ValueError(f"Could not interpret activation function identifier: {identifier!r}. "
                             f"Known: {', '.join(sorted(_BY_NAME))}")
        return fn
    if callable(identifier):
        return identifier
    raise TypeError(f"Could not interpret activation function identifier: {identifier!r}")


def serialize(activation: Callable) -> str:
    return getattr(activation, "__name__", str(activation))


def deserialize(config: Any, custom_objects: dict | None = None) -> Any:
    """The activation a name (``"relu"``) or a ``serialize_keras_object`` dict names; an unknown name comes
    back unchanged, as Keras 3.15 returns it."""
    if isinstance(config, str):
        found = (custom_objects or {}).get(config)
        if found is None:
            from tapeflow.keras.saving.serialization import get_registered_object

            found = _BY_NAME.get(config) or get_registered_object(config, custom_objects)
        return found if found is not None else config
    from tapeflow.keras.saving.serialization import deserialize_keras_object

    return deserialize_keras_object(config, custom_objects)
