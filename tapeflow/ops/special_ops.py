"""``tf.math`` extras: special functions, inverse/hyperbolic trig, safe
divisions, sorting, segment reductions, bincount and polyval.

Kernels use NumPy and Python's ``math`` module only (no SciPy): erf/erfc/
lgamma come from the C library through ``math``; digamma and polygamma use
a recurrence shift and an asymptotic (Euler-Maclaurin) series accurate to
~1e-14 in float64. Each op: ``defop`` + ``defgrad`` + public function.
"""

from __future__ import annotations

import collections
import math
from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import array_ops, shapes
from tapeflow.ops import math_ops as m
from tapeflow.ops._helpers import check_float, check_numeric, pair, scalar_int, t
from tapeflow.ops.registry import NotDifferentiable, defgrad, defop


def _err(op: str, msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"{msg} [Op:{op}]")


def _unary(op, x, float_only: bool = True) -> Tensor:
    x = t(x)
    (check_float if float_only else check_numeric)(x, op.name)
    return execute(op, (x,))


def _check_real(x: Tensor, op: str) -> None:
    if x._value.dtype.kind != "f":
        raise InvalidArgumentError(None, None, f"Value for attr 'T' of {x.dtype.name} is not in the list of "
                                   f"allowed values: half, float, double [Op:{op}]. Cast to a real float first.")


def _unary_real(op, x) -> Tensor:
    x = t(x)
    _check_real(x, op.name)
    return execute(op, (x,))


_SCIPY: dict = {}


def _scipy_special(name: str):
    """``scipy.special.<name>`` when SciPy is installed (NumPy has no erf), else None; looked up on first use,
    as importing scipy.special costs ~0.3 s that ``import tapeflow`` must not pay."""
    if name not in _SCIPY:
        try:
            import scipy.special

            _SCIPY[name] = getattr(scipy.special, name)
        except ImportError:  # pragma: no cover - depends on the environment
            _SCIPY[name] = None
    return _SCIPY[name]


def _elementwise(fn, scipy_name: str | None = None):
    """A float kernel from a scalar ``math`` function: computed in float64
    and returned in the input's dtype (by SciPy's vectorized twin when installed:
    the per-element Python call costs ~100 ns)."""
    vec = np.frompyfunc(fn, 1, 1)

    def kernel(x):
        fast = _scipy_special(scipy_name) if scipy_name else None
        if fast is not None:
            return np.asarray(fast(np.asarray(x, dtype=np.float64))).astype(x.dtype, copy=False)
        out = vec(np.asarray(x, dtype=np.float64))
        return np.asarray(out, dtype=np.float64).astype(x.dtype, copy=False)

    return kernel


def _safe(fn):
    # math.lgamma raises at poles; TF returns inf there.
    def wrapped(v):
        try:
            return fn(v)
        except (ValueError, OverflowError):
            return math.inf

    return wrapped


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

# ----------------------------------------------------------------------------
# erf, erfc, lgamma, digamma, polygamma
# ----------------------------------------------------------------------------

_erf_vec = _elementwise(math.erf, "erf")
_erfc_vec = _elementwise(math.erfc, "erfc")
ERF = defop("Erf", _erf_vec, shape=shapes.same)


@defgrad("Erf", inputs=True)
def _erf_grad(op, g):
    x = op.inputs[0]
    return m.multiply(g, m.multiply(m.exp(m.negative(m.square(x))), _TWO_OVER_SQRT_PI))


def erf(x: Any, name: str | None = None) -> Tensor:
    """The Gauss error function."""
    return _unary_real(ERF, x)


ERFC = defop("Erfc", _erfc_vec, shape=shapes.same)


@defgrad("Erfc", inputs=True)
def _erfc_grad(op, g):
    x = op.inputs[0]
    return m.multiply(g, m.multiply(m.exp(m.negative(m.square(x))), -_TWO_OVER_SQRT_PI))


def erfc(x: Any, name: str | None = None) -> Tensor:
    """1 - erf(x), accurate for large x."""
    return _unary_real(ERFC, x)


LGAMMA = defop("Lgamma", _elementwise(_safe(math.lgamma)), shape=shapes.same)


@defgrad("Lgamma", inputs=True)
def _lgamma_grad(op, g):
    return m.multiply(g, digamma(op.inputs[0]))


def lgamma(x: Any, name: str | None = None) -> Tensor:
    """log|Gamma(x)|."""
    return _unary_real(LGAMMA, x)


# Bernoulli numbers B_2k / (2k) for the digamma asymptotic series.
_DIGAMMA_COEF = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def _digamma_np(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    # Reflection for x < 0.5: psi(x) = psi(1 - x) - pi / tan(pi x).
    refl = x < 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        refl_term = np.where(refl, np.pi / np.tan(np.pi * np.where(refl, x, 0.25)), 0.0)
    z = np.where(refl, 1.0 - x, x)
    # Shift z up to >= 10 with psi(z) = psi(z + 1) - 1/z.
    shift = np.zeros_like(z)
    for _ in range(10):
        small = z < 10
        if not small.any():
            break
        shift = shift - np.where(small, 1.0 / np.where(small, z, 1.0), 0.0)
        z = np.where(small, z + 1, z)
    inv2 = 1.0 / (z * z)
    series = 0.0
    for c in reversed(_DIGAMMA_COEF):
        series = (series + c) * inv2
    out = np.log(z) - 0.5 / z - series + shift
    out = np.where(refl, out - refl_term, out)
    # Poles at 0, -1, -2, ...: TF returns nan there.
    return np.where((x <= 0) & (x == np.floor(x)), np.nan, out)


def _digamma_kernel(x):
    return _digamma_np(x).astype(x.dtype, copy=False)


DIGAMMA = defop("Digamma", _digamma_kernel, shape=shapes.same)


@defgrad("Digamma", inputs=True)
def _digamma_grad(op, g):
    x = op.inputs[0]
    return m.multiply(g, polygamma(m.cast(1, x.dtype), x))


def digamma(x: Any, name: str | None = None) -> Tensor:
    """The derivative of lgamma (psi)."""
    return _unary_real(DIGAMMA, x)


# Bernoulli numbers B_2, B_4, ... B_20 for the Hurwitz zeta tail.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330)


def _hurwitz_zeta(s: np.ndarray, q: np.ndarray) -> np.ndarray:
    """zeta(s, q) = sum_k (q + k)^-s for s > 1 (shift to q >= 12, then
    Euler-Maclaurin)."""
    s = np.asarray(s, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    s, q = np.broadcast_arrays(s, q)
    total = np.zeros(s.shape)
    # Shift every q to >= 12 (negative q need more steps) before the tail series.
    # (A far-negative q would need millions of steps: it gives NaN instead.)
    far = q < -1e4
    n = np.maximum(12, np.ceil(12 - np.nan_to_num(np.where(far, 0.0, q), nan=0.0, posinf=0.0, neginf=0.0)))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for k in range(int(n.max()) if n.size else 0):
            total = total + np.where(k < n, np.power(q + k, -s), 0.0)
        a = q + n
        total = total + np.power(a, 1 - s) / (s - 1) + 0.5 * np.power(a, -s)
        # sum_j B_2j / (2j)! * s (s+1) ... (s+2j-2) * a^(-s-2j+1)
        term = s * np.power(a, -s - 1)  # j = 1 factor without B_2/2!
        fact = 2.0
        for j, b in enumerate(_BERNOULLI, start=1):
            total = total + b / fact * term
            term = term * (s + 2 * j - 1) * (s + 2 * j) / (a * a)
            fact *= (2 * j + 1) * (2 * j + 2)
    return np.where(far, np.nan, total)


def _eigen_zeta(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """zeta(x, q) in float64 with the special cases of Eigen's zeta (TF's kernel):
    inf at x == 1, nan for x < 1; for q <= 0 an integer q gives inf when x is an
    even integer (nan otherwise) and a non-integer q needs an integer x."""
    x, q = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(q, dtype=np.float64))
    with np.errstate(all="ignore"):
        out = _hurwitz_zeta(x, q)
        # x = inf: every (q + k)^-inf is 0, 1 or inf: 1 at q == 1, inf once some |q + k| < 1
        out = np.where(x == np.inf, np.where(q > 1, 0.0, np.where(q == 1, 1.0, np.where(q < 1, np.inf, np.nan))), out)
        x_int = x == np.floor(x)
        big = ~(np.abs(x) < 2.0**63)  # C's long(x) is INT64_MIN there: even
        x_even = big | (np.fmod(np.where(big, 0.0, x), 2.0) == 0)
        q_neg, q_int = q <= 0, q == np.floor(q)
    out = np.where(q_neg & q_int, np.where(x_int & x_even, np.inf, np.nan), out)
    out = np.where(q_neg & ~q_int & ~x_int, np.nan, out)
    return np.where(x == 1, np.inf, np.where(x < 1, np.nan, out))


_lgamma_vec = np.vectorize(_safe(math.lgamma), otypes=[np.float64])


def _polygamma_kernel(a, x):
    # Eigen's polygamma: nan unless a is a non-negative integer, digamma at a == 0,
    # else (-1)^(a+1) * exp(lgamma(a+1)) * zeta(a+1, x), multiplied in that order.
    n, x64 = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(x, dtype=np.float64))
    with np.errstate(all="ignore"):
        bad = (np.floor(n) != n) | (n < 0)
        n1 = np.where(bad, 1.0, n) + 1
        out = np.power(-1.0, n1) * np.exp(_lgamma_vec(n1)) * _eigen_zeta(n1, x64)
    out = np.where(n == 0, _digamma_np(x64), out)
    out = np.where(bad, np.nan, out)
    return out.astype(np.result_type(a, x), copy=False)


POLYGAMMA = defop("Polygamma", _polygamma_kernel, shape=shapes.broadcast)


@defgrad("Polygamma", inputs=True)
def _polygamma_grad(op, g):
    a, x = op.inputs
    return None, m.multiply(g, polygamma(m.add(a, 1), x))


def polygamma(a: Any, x: Any, name: str | None = None) -> Tensor:
    """The a-th derivative of digamma (``a`` a non-negative integer, as float)."""
    a, x = pair(a, x, "Polygamma")
    _check_real(x, "Polygamma")
    return execute(POLYGAMMA, (a, x))




def _giles_init(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Giles' single-precision erfinv approximation, ``w = -log((1-x)(1+x))``;
    only a starting point for the Halley steps below."""
    ws = w - 2.5
    p1 = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
              0.246640727, 1.50140941):
        p1 = c + p1 * ws
    wl = np.sqrt(np.maximum(w, 0.0)) - 3.0
    p2 = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
              1.00167406, 2.83297682):
        p2 = c + p2 * wl
    return np.where(w < 5.0, p1, p2) * x


def _halley(z: np.ndarray, resid, deriv_sign: float, steps: int = 3) -> np.ndarray:
    # f(z) = resid(z), f'(z) = sign * 2/sqrt(pi) exp(-z^2), f'' = -2 z f': step f / (f' + z f).
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for _ in range(steps):
            f = resid(z)
            fp = deriv_sign * _TWO_OVER_SQRT_PI * np.exp(-z * z)
            step = f / (fp + z * f)
            z = np.where(np.isfinite(step), z - step, z)
    return z


def _erfcinv_np(c: np.ndarray) -> np.ndarray:
    """u with erfc(u) = c, accurate for tiny c (c in [0, 2])."""
    c = np.asarray(c, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -np.log(c * (2.0 - c))
    z = _giles_init(1.0 - c, w)
    z = _halley(z, lambda u: _erfc_vec(u) - c, -1.0)
    z = np.where(c == 0, np.inf, np.where(c == 2, -np.inf, z))
    return np.where((c < 0) | (c > 2) | np.isnan(c), np.nan, z)


def _erfinv_np(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64)
    a = np.abs(y)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -np.log((1.0 - a) * (1.0 + a))
    small = a < 0.5
    z_small = _halley(_giles_init(a, w), lambda z: _erf_vec(z) - a, 1.0)
    # |y| >= 0.5: solve erfc(z) = 1 - |y| (exact), so the tails keep full precision.
    z_big = _erfcinv_np(np.where(small, 0.5, 1.0 - a))
    z = np.sign(y) * np.where(small, z_small, z_big)
    return np.where(a > 1, np.nan, z)


ERFINV = defop("Erfinv", lambda y: _erfinv_np(y).astype(y.dtype, copy=False), shape=shapes.same)


@defgrad("Erfinv", inputs=False, outputs=True)
def _erfinv_grad(op, g):
    z = op.outputs[0]
    return m.multiply(g, m.multiply(m.exp(m.square(z)), math.sqrt(math.pi) / 2))


def erfinv(x: Any, name: str | None = None) -> Tensor:
    """The inverse of erf on (-1, 1) (+-inf at +-1, nan outside)."""
    return _unary_real(ERFINV, x)


_ERFC = np.frompyfunc(math.erfc, 1, 1)


def _ndtri_tail(q: np.ndarray) -> np.ndarray:
    """x < 0 with ndtr(x) = q for 0 < q <= 0.5: Newton on log ndtr(x) = log q
    (concave, so from the guess -sqrt(-2 log q), left of the root, every step
    stays left and converges), exact down to the smallest float64."""
    q = np.clip(np.nan_to_num(q, nan=0.5), 1e-320, 0.5)
    lq = np.log(q)
    x = -np.sqrt(-2.0 * lq)
    for _ in range(60):
        c = 0.5 * _ERFC(-x / np.sqrt(2.0)).astype(np.float64)
        pdf = np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)
        step = (np.log(c) - lq) * c / pdf
        x = x - step
        if np.all(np.abs(step) <= 1e-15 * np.maximum(1.0, np.abs(x))):
            break
    return x


def _ndtri_np(p: np.ndarray) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64)
    mid = (p > 0.25) & (p < 0.75)
    # Tails by Newton on log ndtr (of p, or of 1 - p), the middle through erfinv(2p - 1).
    with np.errstate(all="ignore"):
        low = np.where(p <= 0, -np.inf, _ndtri_tail(np.where((p <= 0.5) & ~mid, p, 0.5)))
        high = np.where(p >= 1, np.inf, -_ndtri_tail(np.where((p > 0.5) & ~mid, 1.0 - p, 0.5)))
        low = np.where((p < 0) | np.isnan(p), np.nan, low)
        high = np.where(p > 1, np.nan, high)
    middle = np.sqrt(2.0) * _erfinv_np(np.where(mid, 2.0 * p - 1.0, 0.0))
    return np.where(np.isnan(p), np.nan, np.where(mid, middle, np.where(p <= 0.5, low, high)))


NDTRI = defop("Ndtri", lambda p: _ndtri_np(p).astype(p.dtype, copy=False), shape=shapes.same)


@defgrad("Ndtri", inputs=False, outputs=True)
def _ndtri_grad(op, g):
    z = op.outputs[0]
    return m.multiply(g, m.multiply(m.exp(m.multiply(m.square(z), 0.5)), math.sqrt(2 * math.pi)))


def ndtri(x: Any, name: str | None = None) -> Tensor:
    """The inverse of the standard normal CDF (the probit function)."""
    return _unary_real(NDTRI, x)


def _zeta_kernel(x, q):
    return _eigen_zeta(x, q).astype(np.result_type(x, q), copy=False)


ZETA = defop("Zeta", _zeta_kernel, shape=shapes.broadcast)


@defgrad("Zeta", inputs=True)
def _zeta_grad(op, g):
    # d/dq zeta(x, q) = -x zeta(x + 1, q); TF gives no gradient for x.
    x, q = op.inputs
    return None, m.multiply(g, m.negative(m.multiply(x, zeta(m.add(x, 1.0), q))))


def zeta(x: Any, q: Any, name: str | None = None) -> Tensor:
    """The Hurwitz zeta function sum_k (q + k)^-x (x > 1)."""
    x, q = pair(x, q, "Zeta")
    _check_real(x, "Zeta")
    return execute(ZETA, (x, q))


def _log_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # TF's LogSumReducer: max + log1p(exp(min - max)), and -inf while the max is -inf
    # (so inf + inf is NaN there, as TF: inf - inf inside).
    hi, lo = np.maximum(a, b), np.minimum(a, b)
    return np.where(hi < np.finfo(a.dtype).min, hi, np.log1p(np.exp(lo - hi)) + hi)


def _cumulative_logsumexp_kernel(x, axis, exclusive, reverse):
    a = np.moveaxis(x, axis, 0)
    if reverse:
        a = a[::-1]
    out = np.empty_like(a)
    acc = np.full(a.shape[1:], -np.inf, dtype=a.dtype)
    with np.errstate(all="ignore"):
        for i in range(a.shape[0]):
            nxt = _log_sum(acc, a[i]) if i else a[i]
            out[i] = acc if exclusive else nxt
            acc = nxt
    if reverse:
        out = out[::-1]
    return np.ascontiguousarray(np.moveaxis(out, 0, axis))


CUMULATIVE_LOGSUMEXP = defop("CumulativeLogsumexp", _cumulative_logsumexp_kernel, shape=shapes.same)


@defgrad("CumulativeLogsumexp", inputs=True, outputs=True)
def _cumulative_logsumexp_grad(op, g):
    # TF's rule: the gradient's positive and negative parts go through log space separately.
    x, out = op.inputs[0], op.outputs[0]
    axis, exclusive, reverse = op.get_attr("axis"), op.get_attr("exclusive"), op.get_attr("reverse")
    lowest = m.cast(np.finfo(x._value.dtype).min, x.dtype)
    log_pos = m.where(m.greater(g, m.cast(0, g.dtype)), m.log(g), lowest)
    log_neg = m.where(m.less(g, m.cast(0, g.dtype)), m.log(m.negative(g)), lowest)
    pos = m.exp(m.add(cumulative_logsumexp(m.subtract(log_pos, out), axis, exclusive, not reverse), x))
    neg = m.exp(m.add(cumulative_logsumexp(m.subtract(log_neg, out), axis, exclusive, not reverse), x))
    return m.subtract(pos, neg)


def cumulative_logsumexp(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False,
                         name: str | None = None) -> Tensor:
    """log(cumsum(exp(x))) along ``axis``, as TF's kernel: a running
    ``max + log1p(exp(min - max))`` (exact for entries far below the running
    max); an exclusive start is -inf."""
    x = t(x)
    check_float(x, "CumulativeLogsumexp")
    nd = len(x._shape_tuple())
    a = scalar_int(axis, "axis", "CumulativeLogsumexp")
    if not -nd <= a < nd:
        raise _err("CumulativeLogsumexp", f"axis must be in the range [{-nd}, {nd}), got {a}")
    return execute(CUMULATIVE_LOGSUMEXP, (x,), {"axis": a % nd, "exclusive": bool(exclusive),
                                                "reverse": bool(reverse)})


# ----------------------------------------------------------------------------
# Inverse and hyperbolic trig
# ----------------------------------------------------------------------------

ATAN = defop("Atan", np.arctan, shape=shapes.same)


@defgrad("Atan", inputs=True)
def _atan_grad(op, g):
    x = m._c(op.inputs[0])
    return m.divide_(g, m.add(m.square(x), 1.0))


def atan(x: Any, name: str | None = None) -> Tensor:
    return _unary(ATAN, x)


ASIN = defop("Asin", np.arcsin, shape=shapes.same)


@defgrad("Asin", inputs=True)
def _asin_grad(op, g):
    x = m._c(op.inputs[0])
    return m.multiply(g, m.rsqrt(m.subtract(1.0, m.square(x))))


def asin(x: Any, name: str | None = None) -> Tensor:
    return _unary(ASIN, x)


ACOS = defop("Acos", np.arccos, shape=shapes.same)


@defgrad("Acos", inputs=True)
def _acos_grad(op, g):
    x = m._c(op.inputs[0])
    return m.negative(m.multiply(g, m.rsqrt(m.subtract(1.0, m.square(x)))))


def acos(x: Any, name: str | None = None) -> Tensor:
    return _unary(ACOS, x)


SINH = defop("Sinh", np.sinh, shape=shapes.same)


@defgrad("Sinh", inputs=True)
def _sinh_grad(op, g):
    return m.multiply(g, cosh(m._c(op.inputs[0])))


def sinh(x: Any, name: str | None = None) -> Tensor:
    return _unary(SINH, x)


COSH = defop("Cosh", np.cosh, shape=shapes.same)


@defgrad("Cosh", inputs=True)
def _cosh_grad(op, g):
    return m.multiply(g, sinh(m._c(op.inputs[0])))


def cosh(x: Any, name: str | None = None) -> Tensor:
    return _unary(COSH, x)


ASINH = defop("Asinh", np.arcsinh, shape=shapes.same)


@defgrad("Asinh", inputs=False, outputs=True)
def _asinh_grad(op, g):
    return m.divide_(g, cosh(m._c(op.outputs[0])))


def asinh(x: Any, name: str | None = None) -> Tensor:
    return _unary(ASINH, x)


ACOSH = defop("Acosh", np.arccosh, shape=shapes.same)


@defgrad("Acosh", inputs=False, outputs=True)
def _acosh_grad(op, g):
    return m.divide_(g, sinh(m._c(op.outputs[0])))


def acosh(x: Any, name: str | None = None) -> Tensor:
    return _unary(ACOSH, x)


ATANH = defop("Atanh", np.arctanh, shape=shapes.same)


@defgrad("Atanh", inputs=True)
def _atanh_grad(op, g):
    x = m._c(op.inputs[0])
    return m.divide_(g, m.subtract(1.0, m.square(x)))


def atanh(x: Any, name: str | None = None) -> Tensor:
    return _unary(ATANH, x)


ATAN2 = defop("Atan2", np.arctan2, shape=shapes.broadcast)


@defgrad("Atan2", inputs=True)
def _atan2_grad(op, g):
    y, x = op.inputs
    scale = m.divide_(g, m.add(m.square(x), m.square(y)))
    return m.multiply(x, scale), m.negative(m.multiply(y, scale))


def atan2(y: Any, x: Any, name: str | None = None) -> Tensor:
    """The angle of the point (x, y), in [-pi, pi]."""
    y, x = pair(y, x, "Atan2")
    _check_real(y, "Atan2")
    return execute(ATAN2, (y, x))


# ----------------------------------------------------------------------------
# Safe divisions and x*log(y)
# ----------------------------------------------------------------------------

def _xlogy_kernel(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x * np.log(y)
    return np.where(x == 0, np.zeros((), x.dtype), out).astype(x.dtype, copy=False)


XLOGY = defop("Xlogy", _xlogy_kernel, shape=shapes.broadcast)


@defgrad("Xlogy", inputs=True)
def _xlogy_grad(op, g):
    x, y = op.inputs
    not_zero_x = m.cast(m.not_equal(x, m.cast(0, x.dtype)), x.dtype)
    return m.multiply(g, xlogy(not_zero_x, y)), m.multiply(g, xdivy(x, y))


def xlogy(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x * log(y), and 0 where x == 0 (even if y is 0 or nan)."""
    x, y = pair(x, y, "Xlogy")
    check_float(x, "Xlogy")
    return execute(XLOGY, (x, y))


def _xlog1py_kernel(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x * np.log1p(y)
    return np.where(x == 0, np.zeros((), x.dtype), out).astype(x.dtype, copy=False)


XLOG1PY = defop("Xlog1py", _xlog1py_kernel, shape=shapes.broadcast)


@defgrad("Xlog1py", inputs=True)
def _xlog1py_grad(op, g):
    x, y = op.inputs
    not_zero_x = m.cast(m.not_equal(x, m.cast(0, x.dtype)), x.dtype)
    return m.multiply(g, xlog1py(not_zero_x, y)), m.multiply(g, xdivy(x, m.add(y, 1.0)))


def xlog1py(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x * log1p(y), and 0 where x == 0."""
    x, y = pair(x, y, "Xlog1py")
    check_float(x, "Xlog1py")
    return execute(XLOG1PY, (x, y))


NEXTAFTER = defop("NextAfter", np.nextafter, shape=shapes.broadcast)


@defgrad("NextAfter", inputs=False)
def _nextafter_grad(op, g):
    # As TF: the step is treated as locally constant in x1; x2 gets zeros.
    return g, array_ops.zeros_like(g)


def nextafter(x1: Any, x2: Any, name: str | None = None) -> Tensor:
    """The next representable float after x1 in the direction of x2."""
    x1, x2 = pair(x1, x2, "NextAfter")
    _check_real(x1, "NextAfter")
    return execute(NEXTAFTER, (x1, x2))


def _xdivy_kernel(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x / y
    return np.where(x == 0, np.zeros((), x.dtype), out).astype(x.dtype, copy=False)


XDIVY = defop("Xdivy", _xdivy_kernel, shape=shapes.broadcast)


@defgrad("Xdivy", inputs=True)
def _xdivy_grad(op, g):
    x, y = op.inputs
    not_zero_x = m.cast(m.not_equal(x, m.cast(0, x.dtype)), x.dtype)
    return m.multiply(g, xdivy(not_zero_x, y)), m.multiply(g, xdivy(m.negative(x), m.square(y)))


def xdivy(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x / y, and 0 where x == 0."""
    x, y = pair(x, y, "Xdivy")
    check_float(x, "Xdivy")
    return execute(XDIVY, (x, y))


def _div_no_nan_kernel(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = x / y
    return np.where(y == 0, np.zeros((), x.dtype), out).astype(x.dtype, copy=False)


DIV_NO_NAN = defop("DivNoNan", _div_no_nan_kernel, shape=shapes.broadcast)


@defgrad("DivNoNan", inputs=True)
def _div_no_nan_grad(op, g):
    x, y = m._c(op.inputs[0]), m._c(op.inputs[1])
    return divide_no_nan(g, y), m.multiply(g, divide_no_nan(divide_no_nan(m.negative(x), y), y))


def divide_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x / y, and 0 where y == 0 (integers are first cast to float, as truediv)."""
    if isinstance(x, Tensor) and isinstance(y, Tensor):
        m._same_dtype_or_type_error(x, y, "tf.math.divide_no_nan")
    x, y = pair(x, y, "DivNoNan")
    target = m._TRUEDIV_INT.get(x._value.dtype)
    if target is not None:
        x, y = m.cast(x, target), m.cast(y, target)
    check_float(x, "DivNoNan")
    return execute(DIV_NO_NAN, (x, y))


def erfcinv(x: Any, name: str | None = None) -> Tensor:
    """The inverse of erfc on (0, 2): -ndtri(x / 2) / sqrt(2), as TF."""
    x = t(x)  # an integer x fails converting 0.5 to its dtype (TypeError), as TF
    return m.multiply(ndtri(m.multiply(x, 0.5)), -math.sqrt(0.5))


def _mul_no_nan_kernel(x, y):
    with np.errstate(invalid="ignore", over="ignore"):
        out = x * y
    return np.where(y == 0, np.zeros((), out.dtype), out).astype(x.dtype, copy=False)


MUL_NO_NAN = defop("MulNoNan", _mul_no_nan_kernel, shape=shapes.broadcast)


@defgrad("MulNoNan", inputs=True)
def _mul_no_nan_grad(op, g):
    x, y = op.inputs
    return multiply_no_nan(g, y), multiply_no_nan(x, g)


def multiply_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x * y, and 0 where y == 0 (even if x is inf or nan).

    As TF, ``x`` is converted first and ``y`` must have its dtype: a tensor
    ``y`` of another dtype raises ValueError.
    """
    x = t(x)
    if isinstance(y, Tensor) and y.dtype != x.dtype:
        raise ValueError(f"y: Tensor conversion requested dtype {x.dtype.name} for Tensor with dtype "
                         f"{y.dtype.name} [Op:MulNoNan]. Cast y with tf.cast(y, tf.{x.dtype.name}).")
    x, y = pair(x, y, "MulNoNan")
    check_float(x, "MulNoNan")
    return execute(MUL_NO_NAN, (x, y))


def reciprocal_no_nan(x: Any, name: str | None = None) -> Tensor:
    """1 / x, and 0 where x == 0."""
    x = t(x)
    check_float(x, "DivNoNan")  # TF: no integer kernel (unlike divide_no_nan, which casts)
    return divide_no_nan(array_ops.ones_like(x), x)


RINT = defop("Rint", np.rint, shape=shapes.same)
NotDifferentiable("Rint")


def rint(x: Any, name: str | None = None) -> Tensor:
    """Rounds to the nearest integer, halves to even (no gradient, as TF)."""
    return _unary(RINT, x)


def lbeta(x: Any, name: str | None = None) -> Tensor:
    """log of the multivariate Beta function over the last axis."""
    x = t(x)
    check_float(x, "Lgamma")
    return m.subtract(m.reduce_sum(lgamma(x), axis=-1), lgamma(m.reduce_sum(x, axis=-1)))


def zero_fraction(value: Any, name: str | None = None) -> Tensor:
    """The fraction of zeros in ``value`` (float32)."""
    x = t(value)
    zero = b"" if x._value.dtype.kind in "OSU" else m.cast(0, x.dtype)
    return m.reduce_mean(m.cast(m.equal(x, zero), dtypes.float32))


def _invert_permutation_kernel(x):
    n = x.shape[0]
    if sorted(x.tolist()) != list(range(n)):
        raise InvalidArgumentError(None, None, f"x is not a valid permutation of 0..{n - 1}: {x.tolist()} "
                                   "[Op:InvertPermutation]")
    out = np.empty_like(x)
    out[x] = np.arange(n, dtype=x.dtype)
    return out


INVERT_PERMUTATION = defop("InvertPermutation", _invert_permutation_kernel, shape=shapes.same)
NotDifferentiable("InvertPermutation")


def invert_permutation(x: Any, name: str | None = None) -> Tensor:
    """y with y[x[i]] = i."""
    x = t(x)
    if x._value.dtype.kind not in "iu" or len(x._shape_tuple()) != 1:
        raise _err("InvertPermutation", f"x must be a 1-D int32 or int64 tensor, got {x.dtype.name} of shape "
                   f"{list(x._shape_tuple())}")
    return execute(INVERT_PERMUTATION, (x,))


def _adjacent(x: Any, strict: bool) -> Tensor:
    x = t(x)
    if x._value.dtype.kind not in "iuf":
        raise TypeError(f"Expected x to be numeric, instead found: {x}")
    x = array_ops.reshape(x, (-1,))
    n = x._shape_tuple()[0]
    if not n or n < 2:
        return convert_to_tensor(True)
    a, b = x[:-1], x[1:]
    return m.reduce_all(m.less(a, b) if strict else m.less_equal(a, b))


def is_non_decreasing(x: Any, name: str | None = None) -> Tensor:
    """True if x[i] <= x[i + 1] for the flattened x."""
    return _adjacent(x, strict=False)


def is_strictly_increasing(x: Any, name: str | None = None) -> Tensor:
    """True if x[i] < x[i + 1] for the flattened x."""
    return _adjacent(x, strict=True)


def accumulate_n(inputs: Any, shape: Any = None, tensor_dtype: Any = None, name: str | None = None) -> Tensor:
    """The sum of a list of same-shaped tensors (tf.math.add_n)."""
    return m.add_n(inputs)


# ----------------------------------------------------------------------------
# Reductions built from core ops
# ----------------------------------------------------------------------------

def reduce_variance(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Tensor:
    """The (biased) variance over ``axis``."""
    x = t(input_tensor)
    if not x.dtype.is_floating:
        m.reduce_mean(x, axis=axis, keepdims=True)  # as TF: a bad axis is Mean's InvalidArgumentError first
        raise TypeError(f"Input must be either real or complex. Received integer type {x.dtype!r}.")
    means = m.reduce_mean(x, axis=axis, keepdims=True)
    return m.reduce_mean(m.square(m.subtract(x, means)), axis=axis, keepdims=keepdims)


def reduce_std(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Tensor:
    """The (biased) standard deviation over ``axis``."""
    x = t(input_tensor)
    if not x.dtype.is_floating:
        m.reduce_mean(x, axis=axis, keepdims=True)
        raise TypeError(f"Input must be either real or complex. Received integer type {x.dtype!r}.")
    return m.sqrt(reduce_variance(x, axis=axis, keepdims=keepdims))


def _euclidean_norm_kernel(x, axis, keepdims):
    if x.dtype.kind in "iu":
        s = np.sum(x.astype(np.int64) ** 2, axis=axis, keepdims=keepdims)
        return np.sqrt(s).astype(x.dtype)
    return np.sqrt(np.sum(np.square(x), axis=axis, keepdims=keepdims, dtype=x.dtype))


EUCLIDEAN_NORM = defop("EuclideanNorm", _euclidean_norm_kernel, shape=m._reduce_shape)


@defgrad("EuclideanNorm", inputs=True, outputs=True)
def _euclidean_norm_grad(op, g):
    x = op.inputs[0]
    y = op.outputs[0]
    if not op.get_attr("keepdims"):
        kd = m._keepdims_shape(op.input_shapes[0], op.get_attr("axis"))
        if None in kd:  # unknown dims: keep y's and g's own run-time dims
            from tapeflow.ops import shape_ops

            y, g = shape_ops.reshape_keeping(y, kd), shape_ops.reshape_keeping(g, kd)
        else:
            y = array_ops.reshape(y, kd)
            g = array_ops.reshape(g, kd)
    return m.multiply(m.divide_(x, y), g)


def reduce_euclidean_norm(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                          name: str | None = None) -> Tensor:
    """sqrt(sum(x**2)) over ``axis``."""
    return m._reduce(EUCLIDEAN_NORM, input_tensor, axis, keepdims, name)


# ----------------------------------------------------------------------------
# top_k, sort, argsort
# ----------------------------------------------------------------------------

def _descending_order(x: np.ndarray) -> np.ndarray:
    """Stable descending argsort on the last axis: ties keep the lower index."""
    if x.dtype.kind in "iub":
        # -x overflows (or is meaningless) for integers: a stable ascending sort of
        # the reversed row, reversed back, is descending with ties to the lower index.
        n = x.shape[-1]
        rev = np.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1]
        return (n - 1 - rev).astype(np.int64)
    if np.isnan(x).any():
        return _nan_aware(x)
    return np.argsort(-x, axis=-1, kind="stable")


def _nan_aware(x: np.ndarray) -> np.ndarray:
    # NaN never wins (it comes after every number, as TF's top_k); lexsort is stable.
    isn = np.isnan(x)
    return np.lexsort((np.where(isn, 0.0, -x), isn), axis=-1)


def _top_k_kernel(x, k, index_type):
    order = _descending_order(x)[..., :k]
    return np.take_along_axis(x, order, axis=-1), order.astype(index_type)


def _top_k_shape(specs, k, index_type):
    s, dt = specs[0]
    out = None if s is None else tuple(s[:-1]) + (k,)
    return [(out, dt), (out, index_type)]


TOPK = defop("TopKV2", _top_k_kernel, shape=_top_k_shape, num_outputs=2)


@defgrad("TopKV2", inputs=False, outputs=True)
def _top_k_grad(op, g, _g_indices):
    # Scatter the values' gradient back to the selected positions of each row.
    in_shape = op.input_shapes[0]
    indices = op.outputs[1]
    if in_shape is None or None in in_shape:
        return _top_k_grad_dynamic(op, g, in_shape, indices)
    n = in_shape[-1]
    if n == 0:  # TF's rule builds range(0, size, n): an empty last axis raises
        raise InvalidArgumentError(None, None, "Requires delta != 0: 0 [Op:Range] (the gradient of top_k/sort over "
                                   "an empty last axis, as TF)")
    rows = int(np.prod(in_shape[:-1], dtype=np.int64))
    k = op.get_attr("k")
    offsets = array_ops.reshape(
        convert_to_tensor(np.arange(rows, dtype=np.int64) * n), (rows, 1))
    flat_idx = array_ops.reshape(m.add(m.cast(array_ops.reshape(indices, (rows, k)), dtypes.int64), offsets), (-1,))
    dense = m.unsorted_segment_sum(array_ops.reshape(g, (-1,)), flat_idx, rows * n)
    return array_ops.reshape(dense, in_shape)


def _top_k_grad_dynamic(op, g, in_shape, indices):
    # Unknown dims: values = gather(x, indices, axis=-1, batch_dims=rank-1), so
    # the gradient is that gather's, scattered into x's run-time shape.
    from tapeflow.ops import shape_ops

    if in_shape is None:
        raise NotImplementedError("top_k/sort gradient of an input of unknown rank is not implemented in tapeflow.")
    values, k, r = op.outputs[0], op.get_attr("k"), len(in_shape) - 1
    if op.inputs is not None:  # a traced graph keeps the input
        shape = shape_ops.shape_of(op.inputs[0])
    elif k is None:  # a whole-row sort: the input has the values' shape
        shape = shape_ops.shape_of(values)
    elif in_shape[-1] is not None:
        shape = array_ops.concat([shape_ops.shape_of(values)[:-1], convert_to_tensor([in_shape[-1]])], 0)
    else:
        raise NotImplementedError("top_k gradient with a fixed k over a last axis of unknown size is not "
                                  "implemented in tapeflow.")
    return execute(shape_ops.DYNAMIC_GATHER_GRAD, (g, indices, shape),
                   {"axis": r, "batch_dims": r, "static": tuple(in_shape)})


def _top_k_all(x: Tensor) -> tuple:
    """top_k over a whole last axis (sort, argsort); k=None (a full row) when
    that axis's size is unknown."""
    n = x._shape_tuple()[-1]
    if n is not None:
        return top_k(x, n)
    return TopKV2(*execute(TOPK, (x,), {"k": None, "index_type": np.dtype(np.int32)}))


def top_k(input: Any, k: Any = 1, sorted: bool = True, index_type: Any = dtypes.int32,  # noqa: A002
          name: str | None = None) -> list:
    """The k largest entries of the last axis (values, indices); ties go to
    the lower index."""
    x = t(input)
    _check_sortable(x, "TopKV2")
    if isinstance(k, Tensor) and not isinstance(k._value, (np.ndarray, np.generic)):  # a graph tensor
        from tapeflow.ops import shape_ops

        kv = shape_ops.partial_value(k)
        if not isinstance(kv, int):
            raise NotImplementedError("top_k with a k known only at run time (a graph tensor) is not implemented "
                                      "in tapeflow; pass a Python int.")
        k = kv
    k = int(k.numpy() if isinstance(k, Tensor) else k)
    s = x._shape_tuple()
    if len(s) < 1:
        raise _err("TopKV2", f"input must be >= 1-D, got shape {list(s)}")
    if k < 0:
        raise _err("TopKV2", f"Need k >= 0, got {k}")
    if s[-1] is not None and s[-1] < k:
        raise _err("TopKV2", f"input must have at least k columns. Had {s[-1]}, needed {k}")
    values, indices = execute(TOPK, (x,), {"k": k, "index_type": dtypes.as_dtype(index_type)._np})
    return TopKV2(values, indices)


TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def _check_sortable(x: Tensor, op: str) -> None:
    if x._value.dtype.kind not in "iuf":
        raise InvalidArgumentError(None, None, f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed "
                                   f"values: real numeric types [Op:{op}]. Cast to a number first.")


def _move_last(x: Tensor, axis: Any, op: str) -> tuple[Tensor, list | None]:
    nd = len(x._shape_tuple())
    if nd == 0:
        raise _err(op, "input must be at least rank 1, got a scalar")
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{op}: axis must be a constant scalar int, got {axis!r}")
    if not -nd <= int(axis) < nd:
        raise _err(op, f"axis {int(axis)} is out of range for an input of rank {nd}")
    a = int(axis) % nd
    if a == nd - 1:
        return x, None
    perm = list(range(nd))
    perm[a], perm[-1] = perm[-1], perm[a]
    return array_ops.transpose(x, perm), perm


def _check_direction(direction: str, op: str) -> None:
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"Argument `direction` should be one of ASCENDING, DESCENDING. Received: "
                         f"direction={direction}")


def _order_reversing(x: Tensor) -> Tensor:
    """A map that reverses the order of ``x`` exactly (so ascending sorts are
    descending top_k, ties still to the lower index): -x for floats, -1 - x
    for signed ints (no overflow), max - x for unsigned ints."""
    kind = x._value.dtype.kind
    if kind == "f":
        return m.negative(x)
    if kind == "i":
        return m.subtract(m.cast(-1, x.dtype), x)
    return m.subtract(m.cast(np.iinfo(x._value.dtype).max, x.dtype), x)


def sort(values: Any, axis: int = -1, direction: str = "ASCENDING", name: str | None = None) -> Tensor:
    """Sorts along ``axis`` (differentiable through the values)."""
    _check_direction(direction, "sort")
    x = t(values)
    _check_sortable(x, "TopKV2")
    xt, perm = _move_last(x, axis, "sort")
    if direction == "DESCENDING":
        out = _top_k_all(xt).values
    else:
        out = _order_reversing(_top_k_all(_order_reversing(xt)).values)
    return out if perm is None else array_ops.transpose(out, perm)


def argsort(values: Any, axis: int = -1, direction: str = "ASCENDING", stable: bool = False,
            name: str | None = None) -> Tensor:
    """The int32 indices that sort ``values`` along ``axis`` (ties keep the
    lower index, so the sort is always stable)."""
    _check_direction(direction, "argsort")
    x = t(values)
    _check_sortable(x, "TopKV2")
    xt, perm = _move_last(x, axis, "argsort")
    idx = _top_k_all(xt if direction == "DESCENDING" else _order_reversing(xt)).indices
    return idx if perm is None else array_ops.transpose(idx, perm)


# ----------------------------------------------------------------------------
# Segment reductions
# ----------------------------------------------------------------------------

def _check_ids(ids: Tensor, op: str) -> None:
    if ids._value.dtype.kind not in "iu":
        raise TypeError(f"{op}: segment_ids must be an integer tensor (int32 or int64), got {ids.dtype.name}")


def _sorted_segment_kernel(kind):
    def kernel(data, ids):
        op = f"Segment{kind}"
        ids = np.asarray(ids)
        if ids.ndim != 1 or ids.shape[0] != data.shape[0]:
            raise InvalidArgumentError(None, None, f"segment_ids should be the same size as dimension 0 of input: "
                                       f"segment_ids shape {list(ids.shape)}, data shape {list(data.shape)} "
                                       f"[Op:{op}]")
        if ids.size and (np.any(np.diff(ids) < 0) or ids[0] < 0):
            raise InvalidArgumentError(None, None, "segment ids are not increasing (segment_ids must be sorted and "
                                       f"non-negative; use the unsorted_segment_* ops otherwise) [Op:{op}]")
        n = int(ids[-1]) + 1 if ids.size else 0
        if kind in ("Sum", "Mean"):
            out = np.zeros((n,) + data.shape[1:], dtype=data.dtype)
            np.add.at(out, ids, data)
            if kind == "Mean":
                counts = np.bincount(ids, minlength=n).reshape((n,) + (1,) * (data.ndim - 1))
                # Empty segments stay 0; integer means round toward zero, as TF.
                safe = np.maximum(counts, 1)
                # Integer means truncate toward zero, as TF (-3 // 2 would floor to -2).
                out = (np.trunc(out / safe) if data.dtype.kind in "iu" else out / safe).astype(data.dtype)
            return out
        if kind == "Prod":
            out = np.ones((n,) + data.shape[1:], dtype=data.dtype)
            np.multiply.at(out, ids, data)
            return out
        # Max/Min: empty segments are 0, as TF.
        ufunc = np.maximum if kind == "Max" else np.minimum
        out = np.zeros((n,) + data.shape[1:], dtype=data.dtype)
        starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]]) if ids.size else np.zeros(0, np.int64)
        if ids.size:
            if data.dtype.kind == "f":  # a NaN never wins (TF compares with < / >)
                data = np.where(np.isnan(data), -np.inf if kind == "Max" else np.inf, data).astype(data.dtype)
            out[ids[starts]] = ufunc.reduceat(data, starts, axis=0)
        return out

    return kernel


def _sorted_segment_shape(specs):
    s, dt = specs[0]
    return [(None if s is None else (None,) + tuple(s[1:]), dt)]


SEGMENT_OPS = {k: defop(f"Segment{k}", _sorted_segment_kernel(k), shape=_sorted_segment_shape)
               for k in ("Sum", "Mean", "Max", "Min", "Prod")}
SEGMENT_SUM = SEGMENT_OPS["Sum"]


@defgrad("SegmentSum", inputs=True)
def _segment_sum_grad(op, g):
    return array_ops.gather(g, op.inputs[1]), None


def _rows_like(v: Tensor, data_rank: int) -> Tensor:
    """Reshapes a per-segment vector [n] to [n, 1, ...] to broadcast over rows."""
    if data_rank <= 1:
        return v
    n = v._shape_tuple()[0]
    return array_ops.reshape(v, (-1 if n is None else n,) + (1,) * (data_rank - 1))


@defgrad("SegmentMean", inputs=True)
def _segment_mean_grad(op, g):
    data, ids = op.inputs
    ids_shape = op.input_shapes[1]
    ones = (array_ops.ones_like(ids, dtype=g.dtype) if ids_shape is None or None in ids_shape
            else array_ops.ones(ids_shape, dtype=g.dtype))
    counts = _rows_like(segment_sum(ones, ids), len(op.input_shapes[0]))
    return array_ops.gather(divide_no_nan(g, counts), ids), None


def _segment_min_max_sorted_grad(op, g):
    data, ids = op.inputs
    gathered = array_ops.gather(op.outputs[0], ids)
    is_selected = m.equal(data, gathered)
    num_selected = segment_sum(m.cast(is_selected, g.dtype), ids)
    weighted = divide_no_nan(g, num_selected)
    return m.where(is_selected, array_ops.gather(weighted, ids), array_ops.zeros_like(data)), None


defgrad("SegmentMax", inputs=True, outputs=True)(_segment_min_max_sorted_grad)
defgrad("SegmentMin", inputs=True, outputs=True)(_segment_min_max_sorted_grad)


@defgrad("SegmentProd", inputs=True, outputs=True)
def _segment_prod_grad(op, g):
    # Product of the other elements of the segment, without dividing by zeros.
    data, ids = op.inputs
    zero = m.cast(0, data.dtype)
    is_zero = m.equal(data, zero)
    num_zeros = segment_sum(m.cast(is_zero, data.dtype), ids)
    g = m.where(m.greater(num_zeros, 1.0), array_ops.zeros_like(g), g)
    non_zero_data = m.where(is_zero, array_ops.ones_like(data), data)
    non_zero_prod = segment_prod(non_zero_data, ids)
    gathered_prod = array_ops.gather(op.outputs[0], ids)
    gathered_non_zero_prod = array_ops.gather(non_zero_prod, ids)
    partial = m.where(is_zero, gathered_non_zero_prod, m.divide_(gathered_prod, non_zero_data))
    return m.multiply(array_ops.gather(g, ids), partial), None


def _sorted_segment(kind: str, data: Any, segment_ids: Any) -> Tensor:
    op = SEGMENT_OPS[kind]
    data, ids = t(data), t(segment_ids)
    _check_ids(ids, op.name)
    check_numeric(data, op.name)
    if len(ids._shape_tuple()) != 1:
        raise _err(op.name, f"segment_ids should be a vector, got shape {list(ids._shape_tuple())}")
    return execute(op, (data, ids))


def segment_sum(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """Sums rows of ``data`` by sorted ``segment_ids``; the output has
    ``max(segment_ids) + 1`` rows (empty segments are 0)."""
    return _sorted_segment("Sum", data, segment_ids)


def segment_mean(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """The mean of the rows of each sorted segment (0 for empty segments)."""
    return _sorted_segment("Mean", data, segment_ids)


def segment_max(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """The max of each sorted segment (0 for empty segments, as TF)."""
    return _sorted_segment("Max", data, segment_ids)


def segment_min(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """The min of each sorted segment (0 for empty segments, as TF)."""
    return _sorted_segment("Min", data, segment_ids)


def segment_prod(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """The product of each sorted segment (1 for empty segments)."""
    return _sorted_segment("Prod", data, segment_ids)


def _num_segments(num_segments: Any) -> int:
    return scalar_int(num_segments, "num_segments", "UnsortedSegmentReduction")


def unsorted_segment_mean(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """The mean of the rows of each segment (0 for empty segments)."""
    data, ids = t(data), t(segment_ids)
    _check_ids(ids, "UnsortedSegmentMean")
    check_numeric(data, "UnsortedSegmentMean")
    n = _num_segments(num_segments)
    ones_shape = tuple(ids._shape_tuple()) + (1,) * (len(data._shape_tuple()) - len(ids._shape_tuple()))
    counts = m.unsorted_segment_sum(array_ops.ones(ones_shape, dtype=data.dtype), ids, n)
    total = m.unsorted_segment_sum(data, ids, n)
    # truediv: integer data gives a float mean (int32 -> float64), as TF.
    return m.truediv(total, m.maximum(counts, m.cast(1, data.dtype)))


def _segment_reduce_kernel(ufunc, ident_sign):
    def kernel(data, ids, num_segments):
        ids = np.asarray(ids)
        if ids.size and ids.max() >= num_segments:
            raise InvalidArgumentError(None, None, f"segment_ids[{int(np.argmax(ids))}] = {int(ids.max())} is out "
                                       f"of range [0, {num_segments})")
        if data.dtype.kind == "f":
            ident = ident_sign * np.finfo(data.dtype).max  # TF fills empty segments with lowest/highest
        else:
            info = np.iinfo(data.dtype)
            ident = info.min if ident_sign < 0 else info.max
        out = np.full((num_segments,) + data.shape[ids.ndim:], ident, dtype=data.dtype)
        valid = ids >= 0
        ufunc.at(out, ids[valid], data[valid])
        return out

    return kernel


SEG_MAX = defop("UnsortedSegmentMax", _segment_reduce_kernel(np.maximum, -1), shape=m._segment_sum_shape)
SEG_MIN = defop("UnsortedSegmentMin", _segment_reduce_kernel(np.minimum, 1), shape=m._segment_sum_shape)


def _segment_min_max_grad(op, g):
    data, ids = op.inputs
    out = op.outputs[0]
    n = op.get_attr("num_segments")
    valid = m.greater_equal(ids, m.cast(0, ids.dtype))
    safe_ids = m.where(valid, ids, array_ops.zeros_like(ids))
    gathered = array_ops.gather(out, safe_ids)
    valid_b = _expand_like(valid, data)
    is_selected = m.logical_and(m.equal(data, gathered), valid_b)
    num_selected = m.unsorted_segment_sum(m.cast(is_selected, g.dtype), ids, n)
    weighted = divide_no_nan(g, num_selected)
    return m.where(is_selected, array_ops.gather(weighted, safe_ids), array_ops.zeros_like(data)), None


def _expand_like(mask: Tensor, data: Tensor) -> Tensor:
    extra = len(data._shape_tuple()) - len(mask._shape_tuple())
    if extra and None in mask._shape_tuple():  # unknown dims: keep the mask's own run-time dims
        from tapeflow.ops import shape_ops

        mask = shape_ops.reshape_keeping(mask, tuple(mask._shape_tuple()) + (1,) * extra)
    elif extra:
        mask = array_ops.reshape(mask, tuple(mask._shape_tuple()) + (1,) * extra)
    return mask


defgrad("UnsortedSegmentMax", inputs=True, outputs=True)(_segment_min_max_grad)
defgrad("UnsortedSegmentMin", inputs=True, outputs=True)(_segment_min_max_grad)


def _unsorted_segment_reduce(op, data, segment_ids, num_segments):
    data, ids = t(data), t(segment_ids)
    _check_ids(ids, op.name)
    check_numeric(data, op.name)
    n = _num_segments(num_segments)
    sd, si = data._shape_tuple(), ids._shape_tuple()
    if len(sd) < len(si) or any(a is not None and b is not None and a != b for a, b in zip(sd, si)):
        raise _err(op.name, f"data.shape = {list(sd)} does not start with segment_ids.shape = {list(si)}")
    return execute(op, (data, ids), {"num_segments": n})


def unsorted_segment_max(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """Max of each segment; empty segments get the dtype's lowest value."""
    return _unsorted_segment_reduce(SEG_MAX, data, segment_ids, num_segments)


def unsorted_segment_min(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """Min of each segment; empty segments get the dtype's highest value."""
    return _unsorted_segment_reduce(SEG_MIN, data, segment_ids, num_segments)


def _segment_prod_kernel(data, ids, num_segments):
    ids = np.asarray(ids)
    if ids.size and ids.max() >= num_segments:
        raise InvalidArgumentError(None, None, f"segment_ids[{int(np.argmax(ids))}] = {int(ids.max())} is out "
                                   f"of range [0, {num_segments}) [Op:UnsortedSegmentProd]")
    out = np.ones((num_segments,) + data.shape[ids.ndim:], dtype=data.dtype)
    valid = ids >= 0
    np.multiply.at(out, ids[valid], data[valid])
    return out


SEG_PROD = defop("UnsortedSegmentProd", _segment_prod_kernel, shape=m._segment_sum_shape)


@defgrad("UnsortedSegmentProd", inputs=True, outputs=True)
def _unsorted_segment_prod_grad(op, g):
    # As TF: the product of the other elements, without dividing by zeros;
    # segments with two or more zeros get no gradient.
    data, ids = op.inputs
    n = op.get_attr("num_segments")
    is_zero = m.equal(data, m.cast(0, data.dtype))
    num_zeros = m.unsorted_segment_sum(m.cast(is_zero, data.dtype), ids, n)
    g = m.where(m.greater(num_zeros, 1.0), array_ops.zeros_like(g), g)
    non_zero_data = m.where(is_zero, array_ops.ones_like(data), data)
    non_zero_prod = unsorted_segment_prod(non_zero_data, ids, n)
    valid = m.greater_equal(ids, m.cast(0, ids.dtype))
    clipped = m.where(valid, ids, array_ops.zeros_like(ids))
    # TF divides by the raw data here (0/0 is masked by the where in the first order,
    # but its NaN reaches the second order, as in TF; SegmentProd divides by non_zero_data)
    partial = m.where(is_zero, array_ops.gather(non_zero_prod, clipped),
                      m.divide_(array_ops.gather(op.outputs[0], clipped), data))
    gathered = m.where(_expand_like(valid, data), array_ops.gather(g, clipped), array_ops.zeros_like(data))
    return m.multiply(gathered, partial), None


def unsorted_segment_prod(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """The product of each segment (1 for empty segments; negative ids are dropped)."""
    return _unsorted_segment_reduce(SEG_PROD, data, segment_ids, num_segments)


def unsorted_segment_sqrt_n(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """The sum of each segment divided by sqrt(its size) (0 for empty segments)."""
    data, ids = t(data), t(segment_ids)
    _check_ids(ids, "UnsortedSegmentSqrtN")
    check_float(data, "Sqrt")
    n = _num_segments(num_segments)
    ones_shape = tuple(ids._shape_tuple()) + (1,) * (len(data._shape_tuple()) - len(ids._shape_tuple()))
    counts = m.unsorted_segment_sum(array_ops.ones(ones_shape, dtype=data.dtype), ids, n)
    return m.divide_(m.unsorted_segment_sum(data, ids, n), m.sqrt(m.maximum(counts, 1.0)))


def in_top_k(targets: Any, predictions: Any, k: Any, name: str | None = None) -> Tensor:
    """Whether ``predictions[i, targets[i]]`` is among the ``k`` largest of
    row i (ties at the boundary count as in; out-of-range targets are False)."""
    targets, predictions = t(targets), t(predictions)
    if targets._value.dtype.kind not in "iu":
        raise TypeError(f"in_top_k: targets must be int32 or int64, got {targets.dtype.name}")
    sp = predictions._shape_tuple()
    if len(sp) != 2:
        raise _err("InTopKV2", f"predictions must be 2-dimensional, got shape {list(sp)}")
    st = targets._shape_tuple()
    if len(st) != 1 or (st[0] is not None and sp[0] is not None and st[0] != sp[0]):
        raise _err("InTopKV2", f"First dimension of predictions {sp[0]} must match length of targets "
                   f"{st[0] if len(st) == 1 else list(st)} (targets must be 1-D)")
    k = int(k.numpy() if isinstance(k, Tensor) else k)
    n_classes = sp[1]
    valid = m.logical_and(m.greater_equal(targets, m.cast(0, targets.dtype)),
                          m.less(targets, m.cast(n_classes, targets.dtype)))
    safe = m.where(valid, targets, array_ops.zeros_like(targets))
    target_value = array_ops.gather(predictions, array_ops.reshape(safe, (-1, 1)), axis=1, batch_dims=1)
    target_value = array_ops.reshape(target_value, (-1,))
    if k <= 0:
        return m.logical_and(valid, m.less(target_value, target_value))
    kth = array_ops.reshape(top_k(predictions, min(k, n_classes)).values[:, -1:], (-1,))
    return m.logical_and(valid, m.logical_and(m.greater_equal(target_value, kth),
                                              m.is_finite(target_value)))


def confusion_matrix(labels: Any, predictions: Any, num_classes: Any = None, weights: Any = None,
                     dtype: Any = dtypes.int32, name: str | None = None) -> Tensor:
    """``[num_classes, num_classes]`` counts (or summed ``weights``) of
    (label, prediction) pairs; rows are labels."""
    from tapeflow.ops import indexing_ops

    labels = m.cast(array_ops.reshape(t(labels), (-1,)), dtypes.int64)
    predictions = m.cast(array_ops.reshape(t(predictions), (-1,)), dtypes.int64)
    if labels._shape_tuple() != predictions._shape_tuple():
        raise ValueError(f"labels and predictions must have the same number of elements, got "
                         f"{labels._shape_tuple()[0]} and {predictions._shape_tuple()[0]}")
    lv, pv = labels._value, predictions._value
    if isinstance(lv, np.ndarray):  # eager: TF's value checks
        if (lv < 0).any():
            raise InvalidArgumentError(None, None, "`labels` contains negative values")
        if (pv < 0).any():
            raise InvalidArgumentError(None, None, "`predictions` contains negative values")
    if num_classes is None:
        if not isinstance(lv, np.ndarray) or not isinstance(pv, np.ndarray):
            raise NotImplementedError("tf.math.confusion_matrix without num_classes inside tf.function (an output "
                                      "shape that depends on the data) is not implemented in tapeflow; pass "
                                      "num_classes.")
        n = int(max(lv.max(initial=-1), pv.max(initial=-1))) + 1
    else:
        n = _num_segments(num_classes)
        if isinstance(lv, np.ndarray):
            if (lv >= n).any():
                raise InvalidArgumentError(None, None, "`labels` out of bound")
            if (pv >= n).any():
                raise InvalidArgumentError(None, None, "`predictions` out of bound")
    dt = dtypes.as_dtype(dtype)
    updates = array_ops.ones(labels._shape_tuple(), dtype=dt) if weights is None \
        else m.cast(array_ops.reshape(t(weights), (-1,)), dt)
    indices = array_ops.stack([labels, predictions], axis=1)
    return indexing_ops.scatter_nd(indices, updates, [n, n])


# ----------------------------------------------------------------------------
# bincount and polyval
# ----------------------------------------------------------------------------

def _bincount_kernel(arr, weights, minlength, maxlength, dtype, per_row, binary_output):
    a = np.asarray(arr)
    if a.size and a.min() < 0:
        raise InvalidArgumentError(None, None, f"Input arr must be non-negative! Got {int(a.min())} "
                                   "[Op:DenseBincount]")
    size = int(a.max()) + 1 if a.size else 0
    if minlength is not None:
        size = max(size, minlength)
    if maxlength is not None:
        size = min(size, maxlength)
    out_dtype = dtype if weights.size == 0 else weights.dtype
    rows = a.reshape(a.shape[0] if per_row else 1, -1)
    w_rows = None if weights.size == 0 else np.asarray(weights).reshape(rows.shape)
    out = np.zeros((rows.shape[0], size), dtype=np.float64 if w_rows is not None else np.int64)
    for r in range(rows.shape[0]):
        keep = rows[r] < size
        w = None if w_rows is None else w_rows[r][keep]
        out[r] = np.bincount(rows[r][keep], weights=w, minlength=size)[:size]
    if binary_output:
        out = (out > 0).astype(out.dtype)
    out = out.astype(out_dtype)
    return out if per_row else out[0]


def _bincount_shape(specs, minlength, maxlength, dtype, per_row, binary_output):
    size = maxlength if minlength is not None and minlength == maxlength else None  # TF: a constant size is known
    return [((specs[0][0][0] if specs[0][0] else None, size) if per_row else (size,),
             dtype if specs[1][0] == (0,) else specs[1][1])]


BINCOUNT = defop("DenseBincount", _bincount_kernel, shape=_bincount_shape)
NotDifferentiable("DenseBincount")


def bincount(arr: Any, weights: Any = None, minlength: Any = None, maxlength: Any = None,
             dtype: Any = dtypes.int32, name: str | None = None, axis: Any = None,
             binary_output: bool = False) -> Tensor:
    """Counts occurrences of each value of the non-negative int ``arr``
    (summing ``weights`` instead, if given); ``axis=-1`` counts each row of a
    2-D ``arr`` separately; ``binary_output`` marks presence (0/1)."""
    a = t(arr)
    if a._value.dtype.kind not in "iu":
        a = m.cast(a, dtypes.int32)  # TF converts arr to int32
    if axis not in (None, 0, -1):
        raise ValueError(f"Unsupported value for argument axis={axis}. Only 0 and -1 are currently supported.")
    if binary_output and weights is not None:
        raise ValueError("Arguments `binary_output` and `weights` are mutually exclusive. Please specify only one.")
    per_row = axis == -1
    if per_row and len(a._shape_tuple()) > 2:
        raise _err("DenseBincount", f"Shape must be at most rank 2 but is rank {len(a._shape_tuple())}")
    if weights is None:
        w = convert_to_tensor(np.zeros((0,), dtype=dtypes.as_dtype(dtype)._np))
    else:
        w = t(weights)
        if w._shape_tuple() != a._shape_tuple():
            raise _err("DenseBincount", f"weights shape {list(w._shape_tuple())} must equal arr shape "
                       f"{list(a._shape_tuple())}")
    mn = None if minlength is None else _num_segments(minlength)
    mx = None if maxlength is None else _num_segments(maxlength)
    return execute(BINCOUNT, (a, w), {"minlength": mn, "maxlength": mx, "dtype": dtypes.as_dtype(dtype)._np,
                                      "per_row": per_row and len(a._shape_tuple()) == 2,
                                      "binary_output": bool(binary_output)})


def polyval(coeffs: Any, x: Any, name: str | None = None) -> Tensor:
    """coeffs[0] * x**(n-1) + ... + coeffs[n-1], by Horner's rule."""
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError(f"Argument coeffs must be list type. Received type {type(coeffs)}.")
    x = t(x)
    if not coeffs:
        return array_ops.zeros_like(x)
    p = convert_to_tensor(coeffs[0], dtype_hint=x.dtype)
    for c in coeffs[1:]:
        p = m.add(m.multiply(p, x), convert_to_tensor(c, dtype_hint=x.dtype))
    return p


def count_nonzero(input: Any, axis: Any = None, keepdims: bool = False, dtype: Any = dtypes.int64,  # noqa: A002
                  name: str | None = None) -> Tensor:
    """The number of non-zero entries over ``axis`` (int64 by default)."""
    x = t(input)
    nz = m.not_equal(x, b"" if x._value.dtype.kind in "OSU" else m.cast(0, x.dtype)) \
        if x._value.dtype.kind != "b" else x
    return m.cast(m.reduce_sum(m.cast(nz, dtypes.int64), axis=axis, keepdims=keepdims), dtype)
