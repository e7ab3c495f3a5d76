"""``tf.math``."""

from tapeflow.ops.array_ops import argmax, argmin  # noqa: F401
from tapeflow.ops.math_ops import (  # noqa: F401
    abs, add, add_n, ceil, cos, cumprod, cumsum, divide, equal, exp, expm1, floor, floordiv, floormod, greater,
    greater_equal, is_finite, is_inf, is_nan, less, less_equal, log, log1p, logical_and, logical_not, logical_or,
    logical_xor, maximum, minimum, mod, multiply, negative, not_equal, pow, realdiv, reciprocal, reduce_all,
    reduce_any, reduce_logsumexp, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum, round, rsqrt,
    saturate_cast, scalar_mul, sigmoid, sign, sin, softplus, sqrt, square, squared_difference, subtract, tan, tanh,
    truediv, unsorted_segment_sum,
)
from tapeflow.ops.math_ops import floor_div  # noqa: F401
