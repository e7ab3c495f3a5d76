"""``tf.keras.activations``: activation functions by name or callable."""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow import nn
from tapeflow.ops import math_ops as mo

__all__ = ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "linear", "softplus", "elu", "selu", "gelu",
           "swish", "silu", "exponential", "get", "serialize"]


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
    from tapeflow import math as tfmath

    return 0.5 * x * (1.0 + tfmath.erf(x * 0.7071067811865476))


def swish(x: Any) -> Tensor:
    x = _t(x)
    return x * mo.sigmoid(x)


silu = swish


def exponential(x: Any) -> Tensor:
    return mo.exp(_t(x))


_BY_NAME: dict[str, Callable] = {
    "relu": relu, "sigmoid": sigmoid, "tanh": tanh, "softmax": softmax, "log_softmax": log_softmax,
    "linear": linear, "softplus": softplus, "elu": elu, "selu": selu, "gelu": gelu, "swish": swish,
    "silu": silu, "exponential": exponential, "hard_sigmoid": hard_sigmoid,
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
