"""``tf.nn.dropout`` and its keep-mask op."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import math_ops, shapes
from tapeflow.ops._helpers import t
from tapeflow.ops.math_ops import cast, multiply, subtract, where
from tapeflow.ops.nn._common import _dims, _err, _zeros
from tapeflow.ops.registry import NotDifferentiable, defop


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


def _float_input(x: Any) -> Tensor:
    x = t(x)
    if x._value.dtype.kind != "f":
        raise ValueError(f"`x.dtype` must be a floating point tensor as `x` will be scaled. Received: "
                         f"x_dtype=<dtype: '{x.dtype.name}'>")
    return x


def _rate(rate: Any, x: Tensor) -> Tensor | None:
    """``rate`` as a tensor of x's dtype, or None for a Python rate of 0 (x is returned as it is)."""
    if isinstance(rate, Tensor):
        # TF range-checks only Python rates; a tensor rate of 1 drops everything.
        return cast(rate, x.dtype) if rate._value.dtype != x._value.dtype else rate
    if not 0 <= float(rate) < 1:
        raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={rate}")
    return None if float(rate) == 0 else convert_to_tensor(float(rate), dtype=x.dtype)


def dropout(x: Any, rate: Any, noise_shape: Any = None, seed: int | None = None, name: str | None = None) -> Tensor:
    """Zeroes each element with probability ``rate`` and scales the kept ones
    by 1 / (1 - rate). ``noise_shape`` (broadcastable to x's shape) shares one
    draw along its size-1 dimensions. The draw follows ``tf.random.set_seed``
    and ``seed`` like every tf.random op.

    >>> y = tf.nn.dropout(tf.ones([1000]), rate=0.5, seed=1)
    >>> sorted(set(y.numpy().tolist()))
    [0.0, 2.0]
    """
    x = _float_input(x)
    rate_t = _rate(rate, x)
    if rate_t is None:
        return x
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


def stateless_dropout(x: Any, rate: Any, seed: Any, rng_alg: Any = None, noise_shape: Any = None,
                      name: str | None = None) -> Tensor:
    """``tf.nn.experimental.stateless_dropout``: dropout whose keep mask is
    ``tf.random.stateless_uniform(noise_shape, seed) >= rate`` (TF's numbers; the same ``seed`` gives the same
    mask), the kept values scaled by 1 / (1 - rate). Keras 3's ``Dropout`` draws with it."""
    from tapeflow.ops import array_ops, random_ops

    x = _float_input(x)
    rate_t = _rate(rate, x)
    if rate_t is None:
        return x
    if isinstance(rate, Tensor):
        ret = multiply(x, math_ops.reciprocal(subtract(1.0, rate_t)))
    else:
        ret = multiply(x, convert_to_tensor(1 / (1 - float(rate)), dtype=x.dtype))  # TF's Python-float scale
    if noise_shape is None:
        sx = x._shape_tuple()
        noise_shape = array_ops.shape(x) if None in sx else sx
    rnd = random_ops.stateless_uniform(noise_shape, seed=seed, dtype=x.dtype, alg=rng_alg or "auto_select")
    return where(math_ops.greater_equal(rnd, rate_t), ret, _zeros(x))
