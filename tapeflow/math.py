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
from tapeflow.ops.math_ops import angle, conj, imag, real  # noqa: F401 - complex numbers
from tapeflow.ops.special_ops import (  # noqa: F401
    accumulate_n, acos, acosh, asin, asinh, atan, atan2, atanh, bincount, confusion_matrix, cosh, count_nonzero,
    cumulative_logsumexp, digamma, divide_no_nan, erf, erfc, erfcinv, erfinv, in_top_k, invert_permutation,
    is_non_decreasing, is_strictly_increasing, lbeta, lgamma, multiply_no_nan, ndtri, nextafter, polygamma, polyval,
    reciprocal_no_nan, reduce_euclidean_norm, reduce_std, reduce_variance, rint, segment_max, segment_mean, segment_min,
    segment_prod, segment_sum, sinh, top_k, unsorted_segment_max, unsorted_segment_mean, unsorted_segment_min,
    unsorted_segment_prod, unsorted_segment_sqrt_n, xdivy, xlog1py, xlogy, zero_fraction, zeta,
)

# tf.math aliases of activations that live in tf.nn (tapeflow/ops/nn/),
# resolved on first use so this module does not depend on the nn family.
_FROM_NN = ("log_sigmoid", "softmax", "log_softmax", "l2_normalize", "softsign")


# TF's tf.math names tapeflow does not build: looking one up says so.
_NOT_BUILT = frozenset({
    "approx_max_k", "approx_min_k", "bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "betainc", "igamma",
    "igammac", "sobol_sample", "special",
})


def __getattr__(name: str):
    if name in _FROM_NN:
        from tapeflow.ops import nn

        value = getattr(nn, name)
        globals()[name] = value
        return value
    if name in _NOT_BUILT:
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError(f"tf.math.{name} is not implemented in tapeflow")
    raise AttributeError(f"module 'tapeflow.math' has no attribute '{name}'")
