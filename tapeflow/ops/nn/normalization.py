"""Normalization in ``tf.nn``: l2_normalize, moments and their sufficient statistics,
batch_normalization, local_response_normalization (composites of core ops, so every order
of gradient comes from those ops' rules)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import array_ops, math_ops
from tapeflow.ops._helpers import axis_list, t
from tapeflow.ops.math_ops import add, cast, multiply, negative, reduce_mean, reduce_sum, rsqrt, square, subtract
from tapeflow.ops.nn._common import _dims, _err, _float_input
from tapeflow.ops.special_ops import divide_no_nan


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
    half = x._value.dtype == np.float16
    if half:  # as TF: float16 is computed in float32
        x = cast(x, dtypes.float32)
    fw = cast(convert_to_tensor(frequency_weights, dtype_hint=x.dtype), x.dtype)
    full_w = add(fw, array_ops.zeros_like(x))  # broadcast the weights to x's shape
    sum_w = reduce_sum(full_w, axis=axes, keepdims=True)
    # TF's div_no_nan: zero total weight (or an empty reduction) gives 0, not NaN
    mean = divide_no_nan(reduce_sum(multiply(fw, x), axis=axes, keepdims=True), sum_w)
    variance = divide_no_nan(
        reduce_sum(multiply(fw, math_ops.squared_difference(x, mean)), axis=axes, keepdims=True), sum_w)
    if not keepdims:
        mean = array_ops.squeeze(mean, axes)
        variance = array_ops.squeeze(variance, axes)
    if half:
        return cast(mean, dtypes.float16), cast(variance, dtypes.float16)
    return mean, variance


def batch_norm_with_global_normalization(input: Any, mean: Any, variance: Any, beta: Any, gamma: Any,  # noqa: A002
                                         variance_epsilon: Any, scale_after_normalization: bool,
                                         name: str | None = None) -> Tensor:
    """``tf.nn.batch_norm_with_global_normalization`` (deprecated in TF): :func:`batch_normalization` with
    ``offset=beta`` and ``scale=gamma`` when ``scale_after_normalization``."""
    return batch_normalization(input, mean, variance, beta, gamma if scale_after_normalization else None,
                               variance_epsilon)
