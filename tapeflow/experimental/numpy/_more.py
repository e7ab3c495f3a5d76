"""The rest of TF 2.21's ``tf.experimental.numpy``: more elementwise math, NaN reductions, stacking and
splitting, flips and rolls, triangles and diagonals, sorting, padding, polynomials and index helpers —
composed of tapeflow ops (so they trace and differentiate where the ops do), with TF's NumPy dtype rules
(integers promoted to the default float type where NumPy gives a float, ``np.result_type`` for mixed operands).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from tapeflow.experimental.numpy import _core
from tapeflow.experimental.numpy._core import _promote_binary, asarray, default_float_type, result_type
from tapeflow.framework import dtypes as _dtypes
from tapeflow.framework.tensor import Tensor
from tapeflow.ops import array_ops as _ao
from tapeflow.ops import indexing_ops as _io
from tapeflow.ops import math_ops as _mo
from tapeflow.ops import linalg_ops as _lo
from tapeflow.ops import special_ops as _so

__all__ = [
    "angle", "append", "arccosh", "arcsinh", "arctanh", "argsort", "array_equal", "asanyarray", "ascontiguousarray",
    "atleast_1d", "atleast_2d", "atleast_3d", "average", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor",
    "broadcast_arrays", "cbrt", "compress", "conj", "conjugate", "count_nonzero", "cross", "deg2rad", "diag",
    "diag_indices", "diagflat", "diagonal", "diff", "divmod", "dsplit", "dstack", "einsum", "exp2", "fabs", "finfo",
    "fix", "flip", "fliplr", "flipud", "float_power", "gcd", "geomspace", "heaviside", "hsplit", "hstack", "hypot",
    "imag", "inner", "iscomplex", "iscomplexobj", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "isreal",
    "isrealobj", "ix_", "kron", "lcm", "log10", "log2", "logaddexp", "logaddexp2", "logical_not", "logical_xor",
    "logspace", "meshgrid", "moveaxis", "nanmean", "nanprod", "nansum", "nextafter", "outer", "pad", "polyval",
    "positive", "promote_types", "ptp", "rad2deg", "real", "repeat", "roll", "rot90", "select", "signbit", "sinc",
    "sort", "split", "take_along_axis", "tensordot", "tile", "trace", "tri", "tril", "triu", "vander", "vdot",
    "vsplit", "vstack",
]


def _tnp():
    import tapeflow.experimental.numpy as tnp  # the package's own functions (defined before this module loads)

    return tnp


def _float(x: Any) -> Tensor:
    """``x`` as a tensor, integers and bools cast to the default float type (TF's ``_scalar(..., True)``)."""
    x = asarray(x)
    if not x.dtype.is_floating and not x.dtype.is_complex:
        x = _mo.cast(x, default_float_type())
    return x


def _const(value: Any, like: Tensor) -> Tensor:
    return asarray(value, dtype=like.dtype)


# -- elementwise ---------------------------------------------------------------------------------------------
def arccosh(x: Any) -> Tensor:
    return _so.acosh(_float(x))


def arcsinh(x: Any) -> Tensor:
    return _so.asinh(_float(x))


def arctanh(x: Any) -> Tensor:
    return _so.atanh(_float(x))


def angle(z: Any, deg: bool = False) -> Tensor:
    x = _float(z)
    if x.dtype.is_complex:
        y = _mo.angle(x)
    else:  # (TF's: float32 whatever the input's float type, the where of two Python floats)
        y = _mo.where(_mo.less(x, _const(0, x)), asarray(np.pi, np.float32), asarray(0.0, np.float32))
    return rad2deg(y) if deg else y


def cbrt(x: Any) -> Tensor:
    x = _float(x)
    rt = _mo.pow(_mo.abs(x), _const(1.0 / 3, x))
    return _mo.where(_mo.less(x, _const(0, x)), _mo.negative(rt), rt)


def exp2(x: Any) -> Tensor:
    x = _float(x)
    return _mo.pow(_const(2, x), x)


def deg2rad(x: Any) -> Tensor:
    x = _float(x)
    return _mo.multiply(x, _const(np.pi / 180.0, x))


def rad2deg(x: Any) -> Tensor:
    return asarray(x) * (180.0 / np.pi)  # the tensor operators: NumPy's promotion only with numpy behavior on, as TF


def fix(x: Any) -> Tensor:
    x = _float(x)
    return _mo.where(_mo.less(x, _const(0, x)), _mo.ceil(x), _mo.floor(x))


def fabs(x: Any) -> Tensor:
    return _mo.abs(asarray(x))


def positive(x: Any) -> Tensor:
    return asarray(x)


def conj(x: Any) -> Tensor:
    x = asarray(x)
    return _mo.conj(x) if x.dtype.is_complex else x


conjugate = conj


def real(val: Any) -> Tensor:
    x = asarray(val)
    return _mo.real(x) if x.dtype.is_complex else x


def imag(val: Any) -> Tensor:
    x = asarray(val)
    return _mo.imag(x) if x.dtype.is_complex else _mo.zeros_like_(x)


def iscomplex(x: Any) -> Tensor:
    x = asarray(x)
    if x.dtype.is_complex:
        return _mo.not_equal(_mo.imag(x), asarray(0, dtype=x.dtype.real_dtype))
    return _mo.cast(_mo.zeros_like_(x), _dtypes.bool)


def isreal(x: Any) -> Tensor:
    return _mo.logical_not(iscomplex(x))


def iscomplexobj(x: Any) -> bool:
    return asarray(x).dtype.is_complex


def isrealobj(x: Any) -> bool:
    return not iscomplexobj(x)


def isfinite(x: Any) -> Tensor:
    return _mo.is_finite(_float(x))


def isnan(x: Any) -> Tensor:
    return _mo.is_nan(_float(x))


def isinf(x: Any) -> Any:
    x = asarray(x)
    return _mo.is_inf(x) if x.dtype.is_floating else False


def isposinf(x: Any) -> Any:
    x = asarray(x)
    return _mo.equal(x, _const(np.inf, x)) if x.dtype.is_floating else False


def isneginf(x: Any) -> Any:
    x = asarray(x)
    return _mo.equal(x, _const(-np.inf, x)) if x.dtype.is_floating else False


def signbit(x: Any) -> Tensor:
    x = asarray(x)
    if x.dtype == _dtypes.bool:
        return _mo.cast(_mo.zeros_like_(x), _dtypes.bool)
    return _mo.less(x, _const(0, x))  # (TF's: -0.0 is not negative here, unlike NumPy's)


def sinc(x: Any) -> Tensor:
    x = _float(x)
    pi_x = _mo.multiply(x, _const(np.pi, x))
    return _mo.where(_mo.equal(x, _const(0, x)), _mo.ones_like_(x), _mo.divide(_mo.sin(pi_x), pi_x))


def log2(x: Any) -> Tensor:
    return _tnp().log(x) / np.log(2)  # (operator rules, as TF: float64 with numpy behavior on, else x's type)


def log10(x: Any) -> Tensor:
    return _tnp().log(x) / np.log(10)


def logical_not(x: Any) -> Tensor:
    return _mo.logical_not(asarray(x, dtype=np.bool_))


def logical_xor(x1: Any, x2: Any) -> Tensor:
    return _mo.not_equal(asarray(x1, dtype=np.bool_), asarray(x2, dtype=np.bool_))


def _bitwise(fn_name: str, bool_fn):
    def op(x1: Any, x2: Any) -> Tensor:
        a, b = _promote_binary(x1, x2)
        if a.dtype == _dtypes.bool:
            return bool_fn(a, b)
        if not a.dtype.is_integer:
            raise TypeError(f"tnp.{fn_name}: integer or bool operands needed, got {a.dtype.name}")
        return getattr(_mo, fn_name)(a, b)

    op.__name__ = fn_name
    return op


def _bool_xor(a: Tensor, b: Tensor) -> Tensor:
    return _mo.not_equal(a, b)


bitwise_and = _bitwise("bitwise_and", lambda a, b: _mo.logical_and(a, b))
bitwise_or = _bitwise("bitwise_or", lambda a, b: _mo.logical_or(a, b))
bitwise_xor = _bitwise("bitwise_xor", _bool_xor)


def bitwise_not(x: Any) -> Tensor:
    x = asarray(x)
    if x.dtype == _dtypes.bool:
        return _mo.logical_not(x)
    return _mo.invert(x)


def hypot(x1: Any, x2: Any) -> Tensor:
    tnp = _tnp()
    return tnp.sqrt(tnp.add(tnp.square(x1), tnp.square(x2)))


def heaviside(x1: Any, x2: Any) -> Tensor:
    a, b = _promote_binary(x1, x2)
    b = _ao.broadcast_to(b, _broadcast_shape(a, b))
    y = _mo.where(_mo.less(a, _const(0, a)), _mo.zeros_like_(b),
                  _mo.where(_mo.greater(a, _const(0, a)), _mo.ones_like_(b), b))
    return y if y.dtype.is_floating else _mo.cast(y, default_float_type())


def _broadcast_shape(*xs: Tensor) -> tuple:
    return tuple(np.broadcast_shapes(*[tuple(x._shape_tuple()) for x in xs]))


def float_power(x1: Any, x2: Any) -> Tensor:
    return _tnp().power(x1, x2)  # (TF 2.21's is power itself: integer operands stay integers)


def nextafter(x1: Any, x2: Any) -> Tensor:
    a, b = _promote_binary(x1, x2)
    return _so.nextafter(a, b)


def gcd(x1: Any, x2: Any) -> Tensor:
    a, b = _promote_binary(x1, x2)
    if not a.dtype.is_integer:
        raise ValueError("Arguments to gcd must be integers.")
    return _gcd(a, b)


def _gcd(a: Tensor, b: Tensor) -> Tensor:
    shape = _broadcast_shape(a, b)
    a, b = _ao.broadcast_to(_mo.abs(a), shape), _ao.broadcast_to(_mo.abs(b), shape)
    # Euclid's steps, elementwise, until every b is 0: eagerly it stops there; a traced one unrolls the 94 steps
    # 64-bit operands can need
    for _ in range(94):
        if _all_zero(b):
            break
        nz = _mo.not_equal(b, _const(0, b))
        safe = _mo.where(nz, b, _mo.ones_like_(b))
        a, b = _mo.where(nz, b, a), _mo.where(nz, _mo.floormod(a, safe), b)
    return a


def _all_zero(b: Tensor) -> bool:
    try:
        return not np.any(b.numpy())
    except (AttributeError, NotImplementedError):  # a graph tensor: not known yet
        return False


def lcm(x1: Any, x2: Any) -> Tensor:
    a, b = _promote_binary(x1, x2)
    if not a.dtype.is_integer:
        raise ValueError("Arguments to lcm must be integers.")
    g = _gcd(a, b)
    zero = _mo.logical_or(_mo.equal(a, _const(0, a)), _mo.equal(b, _const(0, b)))
    safe = _mo.where(zero, _mo.ones_like_(g), g)
    return _mo.where(zero, _mo.zeros_like_(g), _mo.abs(_mo.multiply(_mo.floordiv(a, safe), b)))


def logaddexp(x1: Any, x2: Any) -> Tensor:
    tnp = _tnp()
    amax, delta = tnp.maximum(x1, x2), tnp.subtract(x1, x2)
    return tnp.where(isnan(delta), tnp.add(x1, x2), tnp.add(amax, tnp.log1p(tnp.exp(tnp.negative(tnp.abs(delta))))))


def logaddexp2(x1: Any, x2: Any) -> Tensor:
    tnp = _tnp()
    amax, delta = tnp.maximum(x1, x2), tnp.subtract(x1, x2)
    tail = tnp.log1p(exp2(tnp.negative(tnp.abs(delta)))) / np.log(2)
    return tnp.where(isnan(delta), tnp.add(x1, x2), tnp.add(amax, tail))


def divmod(x1: Any, x2: Any) -> tuple:  # noqa: A001 - NumPy's name
    tnp = _tnp()
    return tnp.floor_divide(x1, x2), tnp.mod(x1, x2)


# -- reductions -------------------------------------------------------------------------------------------------
def _nan_fill(a: Any, fill: float) -> Tensor:
    a = asarray(a)
    if not a.dtype.is_floating:
        return a
    return _mo.where(_mo.is_nan(a), _ao.broadcast_to(_const(fill, a), tuple(a._shape_tuple())), a)


def nansum(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tensor:
    return _tnp().sum(_nan_fill(a, 0), axis=axis, dtype=dtype, keepdims=keepdims)


def nanprod(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Tensor:
    return _tnp().prod(_nan_fill(a, 1), axis=axis, dtype=dtype, keepdims=keepdims)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, keepdims: Any = None) -> Tensor:
    tnp = _tnp()
    a = asarray(a)
    if a.dtype == _dtypes.bool or a.dtype.is_integer:
        return tnp.mean(a, axis=axis, dtype=dtype, keepdims=keepdims)
    dtype = dtype or a.dtype.as_numpy_dtype
    kept = tnp.sum(logical_not(isnan(a)), axis=axis, dtype=dtype, keepdims=keepdims)
    return tnp.true_divide(nansum(a, axis=axis, dtype=dtype, keepdims=keepdims), kept)


def count_nonzero(a: Any, axis: Any = None) -> Tensor:
    a = asarray(a)
    return _mo.reduce_sum(_mo.cast(_mo.not_equal(a, _mo.zeros_like_(a)), _dtypes.int64), axis=axis)


def ptp(a: Any, axis: Any = None, keepdims: Any = None) -> Tensor:
    tnp = _tnp()
    return tnp.subtract(tnp.amax(a, axis=axis, keepdims=keepdims), tnp.amin(a, axis=axis, keepdims=keepdims))


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False) -> Any:
    tnp = _tnp()
    a = asarray(a)
    if weights is None:
        avg = tnp.mean(a, axis=axis)
        if not returned:
            return avg
        n = np.prod([a._shape_tuple()[i] for i in _axes(axis, a.ndim)], dtype=np.int64)
        return avg, asarray(n, dtype=avg.dtype)
    w = asarray(weights)
    out_type = result_type(a.dtype, w.dtype)
    if not out_type.is_floating:
        out_type = result_type(out_type, float)
    a, w = _mo.cast(a, out_type), _mo.cast(w, out_type)
    if w.ndim != a.ndim:  # 1-D weights along ``axis``
        shape = [1] * a.ndim
        shape[int(axis) % a.ndim] = -1
        w = _ao.reshape(w, shape)
        w = _ao.broadcast_to(w, tuple(a._shape_tuple()))
    wsum = _mo.reduce_sum(w, axis=axis)
    avg = _mo.divide(_mo.reduce_sum(_mo.multiply(a, w), axis=axis), wsum)
    return (avg, wsum) if returned else avg


def _axes(axis: Any, ndim: int) -> list:
    if axis is None:
        return list(range(ndim))
    axes = [axis] if isinstance(axis, numbers.Integral) else list(axis)
    return [int(x) % ndim for x in axes]


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None) -> Tensor:
    d = diagonal(a, offset, axis1, axis2)
    if dtype is not None:
        d = _mo.cast(d, result_type(dtype))
    return _mo.reduce_sum(d, axis=-1)


def array_equal(a1: Any, a2: Any) -> Tensor:
    a, b = _promote_binary(a1, a2)
    if tuple(a._shape_tuple()) != tuple(b._shape_tuple()):
        return asarray(False)
    return _mo.reduce_all(_mo.equal(a, b))


# -- creation and stacking -----------------------------------------------------------------------------------
def asanyarray(a: Any, dtype: Any = None) -> Tensor:
    return asarray(a, dtype)


def ascontiguousarray(a: Any, dtype: Any = None) -> Tensor:
    return _core.array(a, dtype=dtype, ndmin=1)


def _atleast(n: int, arys: tuple) -> Any:
    out = []
    for x in arys:
        x = asarray(x)
        if x.ndim < n:
            if n == 3 and x.ndim == 2:
                x = _ao.expand_dims(x, -1)
            elif n == 3 and x.ndim == 1:
                x = _ao.reshape(x, [1, -1, 1])
            else:
                x = _ao.reshape(x, [1] * (n - x.ndim) + list(x._shape_tuple()))
        out.append(x)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys: Any) -> Any:
    return _atleast(1, arys)


def atleast_2d(*arys: Any) -> Any:
    return _atleast(2, arys)


def atleast_3d(*arys: Any) -> Any:
    return _atleast(3, arys)


def append(arr: Any, values: Any, axis: int | None = None) -> Tensor:
    tnp = _tnp()
    if axis is None:
        return tnp.concatenate([tnp.ravel(arr), tnp.ravel(values)], 0)
    return tnp.concatenate([arr, values], axis)


def hstack(tup: Any) -> Tensor:
    arrs = atleast_1d(*tup)
    arrs = arrs if isinstance(arrs, list) else [arrs]
    return _tnp().concatenate(arrs, 0 if arrs[0].ndim == 1 else 1)


def vstack(tup: Any) -> Tensor:
    arrs = atleast_2d(*tup)
    return _tnp().concatenate(arrs if isinstance(arrs, list) else [arrs], 0)


def dstack(tup: Any) -> Tensor:
    arrs = atleast_3d(*tup)
    return _tnp().concatenate(arrs if isinstance(arrs, list) else [arrs], 2)


def broadcast_arrays(*args: Any, **kwargs: Any) -> list:
    xs = [asarray(x) for x in args]
    shape = _broadcast_shape(*xs)
    return [_ao.broadcast_to(x, shape) for x in xs]


def meshgrid(*xi: Any, **kwargs: Any) -> list:
    indexing = kwargs.get("indexing", "xy")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for `indexing` are 'xy' and 'ij'. Got: {indexing}")
    xs = [_ao.reshape(asarray(x), [-1]) for x in xi]
    n = len(xs)
    sizes = [x._shape_tuple()[0] for x in xs]
    if indexing == "xy" and n > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for k, x in enumerate(xs):
        shape = [1] * n
        pos = (1 - k if k < 2 else k) if indexing == "xy" and n > 1 else k
        shape[pos] = -1
        out.append(_ao.broadcast_to(_ao.reshape(x, shape), sizes))
    return out


def ix_(*args: Any) -> list:
    n = len(args)
    out = []
    for k, a in enumerate(args):
        a = asarray(a)
        if a.ndim != 1:
            raise ValueError(f"Arguments must be 1-d, got arg {k} of rank {a.ndim}")
        if a.dtype == _dtypes.bool:
            a = _tnp().nonzero(a)[0]
        shape = [1] * n
        shape[k] = -1
        out.append(_ao.reshape(a, shape))
    return out


def diag_indices(n: int, ndim: int = 2) -> tuple:
    idx = asarray(np.arange(n, dtype=np.int32))
    return (idx,) * ndim


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Tensor:  # noqa: N803 - NumPy's names
    M = N if M is None else M
    dtype = result_type(dtype if dtype is not None else float)
    return asarray(np.tri(N, M, k), dtype=dtype)


def _tri_mask(m: Tensor, k: int, lower: bool) -> Tensor:
    shape = tuple(m._shape_tuple())
    rows, cols = shape[-2], shape[-1]
    keep = np.tri(rows, cols, k, dtype=bool) if lower else ~np.tri(rows, cols, k - 1, dtype=bool)
    return _mo.where(asarray(np.broadcast_to(keep, shape)), m, _mo.zeros_like_(m))


def tril(m: Any, k: int = 0) -> Tensor:
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError("Argument to tril should have equal or more than 2 dimensions.")
    return _tri_mask(m, k, True)


def triu(m: Any, k: int = 0) -> Tensor:
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError("Argument to triu should have equal or more than 2 dimensions.")
    return _tri_mask(m, k, False)


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    a = asarray(a)
    axis1, axis2 = axis1 % a.ndim, axis2 % a.ndim
    rest = [i for i in range(a.ndim) if i not in (axis1, axis2)]
    a = _ao.transpose(a, rest + [axis1, axis2])
    rows, cols = a._shape_tuple()[-2], a._shape_tuple()[-1]
    i = np.arange(max(0, min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols)))
    r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
    flat = _ao.reshape(a, [-1, rows * cols]) if rest else _ao.reshape(a, [1, rows * cols])
    out = _ao.gather(flat, asarray((r * cols + c).astype(np.int64)), axis=1)
    lead = [a._shape_tuple()[j] for j in range(len(rest))]
    return _ao.reshape(out, lead + [len(i)])


def diag(v: Any, k: int = 0) -> Tensor:
    v = asarray(v)
    if v.ndim == 1:
        m = v._shape_tuple()[0]
        n = m + abs(k)
        where_from = np.zeros((n, n), dtype=np.int64)  # 0: a zero; i + 1: v[i]
        i = np.arange(m)
        r, c = (i, i + k) if k >= 0 else (i - k, i)
        where_from[r, c] = i + 1
        padded = _ao.concat([_mo.zeros_like_(_ao.reshape(v[:1], [1]) if m else _ao.zeros([1], v.dtype)), v], 0)
        return _ao.reshape(_ao.gather(padded, asarray(where_from.reshape(-1))), [n, n])
    if v.ndim == 2:
        return diagonal(v, k)
    raise ValueError("Input to diag should be 1 or 2 dimensional.")


def diagflat(v: Any, k: int = 0) -> Tensor:
    return diag(_tnp().ravel(v), k)


# -- splitting -------------------------------------------------------------------------------------------------
def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    a = asarray(ary)
    n = a._shape_tuple()[axis]
    if isinstance(indices_or_sections, numbers.Integral):
        if n % indices_or_sections:
            raise ValueError("array split does not result in an equal division")
        sizes = [n // indices_or_sections] * int(indices_or_sections)
    else:
        cuts = [0] + [min(max(int(i), 0), n) for i in indices_or_sections] + [n]
        sizes = [max(b - a_, 0) for a_, b in zip(cuts[:-1], cuts[1:])]
    return list(_ao.split(a, sizes, axis=axis))


def hsplit(ary: Any, indices_or_sections: Any) -> list:
    return split(ary, indices_or_sections, 1 if asarray(ary).ndim > 1 else 0)


def vsplit(ary: Any, indices_or_sections: Any) -> list:
    return split(ary, indices_or_sections, 0)


def dsplit(ary: Any, indices_or_sections: Any) -> list:
    return split(ary, indices_or_sections, 2)


def compress(condition: Any, a: Any, axis: int | None = None) -> Tensor:
    c = np.asarray(asarray(condition, dtype=np.bool_))
    a = asarray(a)
    if axis is None:
        a, axis = _tnp().ravel(a), 0
    return _ao.gather(a, asarray(np.nonzero(c)[0].astype(np.int64)), axis=axis)


def select(condlist: Any, choicelist: Any, default: Any = 0) -> Tensor:
    tnp = _tnp()
    if len(condlist) != len(choicelist):
        raise ValueError("condlist and choicelist must have the same length")
    out = asarray(default)
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        out = tnp.where(cond, choice, out)
    return out


# -- reordering ------------------------------------------------------------------------------------------------
def flip(m: Any, axis: Any = None) -> Tensor:
    m = asarray(m)
    axes = list(range(m.ndim)) if axis is None else _axes(axis, m.ndim)
    return _io.reverse(m, axes)


def fliplr(m: Any) -> Tensor:
    return flip(m, 1)


def flipud(m: Any) -> Tensor:
    return flip(m, 0)


def rot90(m: Any, k: int = 1, axes: tuple = (0, 1)) -> Tensor:
    m = asarray(m)
    k %= 4
    a0, a1 = axes
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    if k == 1:
        return _ao.transpose(flip(m, a1), perm)
    return flip(_ao.transpose(m, perm), a1)


def roll(a: Any, shift: Any, axis: Any = None) -> Tensor:
    a = asarray(a)
    if axis is None:
        flat = _tnp().ravel(a)
        return _ao.reshape(_io.roll(flat, shift, 0), list(a._shape_tuple()))
    return _io.roll(a, shift, axis)


def moveaxis(a: Any, source: Any, destination: Any) -> Tensor:
    a = asarray(a)
    src = _axes(source, a.ndim)
    dst = _axes(destination, a.ndim)
    order = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _ao.transpose(a, order)


def repeat(a: Any, repeats: Any, axis: int | None = None) -> Tensor:
    a = asarray(a)
    if axis is None:
        a, axis = _tnp().ravel(a), 0
    return _io.repeat(a, repeats, axis=axis)


def tile(a: Any, reps: Any) -> Tensor:
    a = asarray(a)
    reps = [int(reps)] if isinstance(reps, numbers.Integral) else [int(r) for r in reps]
    if len(reps) < a.ndim:
        reps = [1] * (a.ndim - len(reps)) + reps
    elif len(reps) > a.ndim:
        a = _ao.reshape(a, [1] * (len(reps) - a.ndim) + list(a._shape_tuple()))
    return _ao.tile(a, reps)


def _sort_input(a: Any, axis: Any, kind: str, order: Any) -> tuple:
    if kind not in ("quicksort", "stable"):
        raise ValueError("Only 'quicksort' and 'stable' arguments are supported.")
    if order is not None:
        raise ValueError("'order' argument to sort is not supported.")
    a = asarray(a)
    return (_tnp().ravel(a), -1) if axis is None else (a, axis)


def sort(a: Any, axis: int | None = -1, kind: str = "quicksort", order: Any = None) -> Tensor:
    a, axis = _sort_input(a, axis, kind, order)
    return _so.sort(a, axis=axis)


def argsort(a: Any, axis: int = -1, kind: str = "quicksort", order: Any = None) -> Tensor:
    a, axis = _sort_input(a, axis, kind, order)
    return _mo.cast(_so.argsort(a, axis=axis, stable=True), _dtypes.int64)


def take_along_axis(arr: Any, indices: Any, axis: int) -> Tensor:
    arr, idx = asarray(arr), asarray(indices)
    if idx.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis %= arr.ndim
    n = arr._shape_tuple()[axis]
    idx = _mo.where(_mo.less(idx, _mo.zeros_like_(idx)), _mo.add_op(idx, asarray(n, dtype=idx.dtype)), idx)
    order = [i for i in range(arr.ndim) if i != axis] + [axis]
    a, i = _ao.transpose(arr, order), _ao.transpose(idx, order)
    lead = _broadcast_shape(_ao.reshape(a[..., :1], list(a._shape_tuple()[:-1]) + [1]),
                            _ao.reshape(i[..., :1], list(i._shape_tuple()[:-1]) + [1]))[:-1]
    a = _ao.broadcast_to(a, lead + (n,))
    i = _ao.broadcast_to(i, lead + (i._shape_tuple()[-1],))
    out = _ao.gather(a, i, axis=arr.ndim - 1, batch_dims=arr.ndim - 1)
    return _ao.transpose(out, [order.index(k) for k in range(arr.ndim)])


# -- products and polynomials ---------------------------------------------------------------------------------
def einsum(subscripts: str, *operands: Any, **kwargs: Any) -> Tensor:
    return _io.einsum(subscripts, *_tnp()._promote_all(*operands))


def tensordot(a: Any, b: Any, axes: Any = 2) -> Tensor:
    a, b = _promote_binary(a, b)
    return _io.tensordot(a, b, axes)


def inner(a: Any, b: Any) -> Tensor:
    a, b = _promote_binary(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return _mo.multiply(a, b)
    return _io.tensordot(a, b, [[a.ndim - 1], [b.ndim - 1]])


def outer(a: Any, b: Any) -> Tensor:
    a, b = _promote_binary(a, b)
    return _mo.multiply(_ao.reshape(a, [-1, 1]), _ao.reshape(b, [1, -1]))


def vdot(a: Any, b: Any) -> Tensor:
    a, b = _promote_binary(a, b)
    return _io.tensordot(_ao.reshape(conj(a), [-1]), _ao.reshape(b, [-1]), 1)


def kron(a: Any, b: Any) -> Tensor:
    a, b = _promote_binary(a, b)
    nd = max(a.ndim, b.ndim)
    a = _ao.reshape(a, [1] * (nd - a.ndim) + list(a._shape_tuple()))
    b = _ao.reshape(b, [1] * (nd - b.ndim) + list(b._shape_tuple()))
    sa, sb = a._shape_tuple(), b._shape_tuple()
    inter = []
    for i in range(nd):
        inter += [sa[i], 1]
    x = _ao.reshape(a, inter)
    inter_b = []
    for i in range(nd):
        inter_b += [1, sb[i]]
    y = _ao.reshape(b, inter_b)
    return _ao.reshape(_mo.multiply(x, y), [sa[i] * sb[i] for i in range(nd)])


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None) -> Tensor:
    a, b = _promote_binary(a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    if a._shape_tuple()[-1] != 3 or b._shape_tuple()[-1] != 3:
        raise NotImplementedError("tnp.cross of 2-element vectors is not implemented in tapeflow")
    out = _lo.cross(*(_ao.broadcast_to(x, _broadcast_shape(a, b)) for x in (a, b)))
    return moveaxis(out, -1, axisc)


def polyval(p: Any, x: Any) -> Tensor:
    p, x = _promote_binary(p, x)
    coeffs = _ao.reshape(p, [-1])
    n = coeffs._shape_tuple()[0]
    y = _mo.zeros_like_(x)
    for i in range(n):  # Horner's scheme, as tf.math.polyval
        y = _mo.add_op(_mo.multiply(y, x), coeffs[i])
    return y


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803 - NumPy's name
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = x._shape_tuple()[0] if N is None else int(N)
    powers = np.arange(n) if increasing else np.arange(n)[::-1]
    return _mo.pow(_ao.reshape(x, [-1, 1]), asarray(powers.astype(x.dtype.as_numpy_dtype))[None, :])


def diff(a: Any, n: int = 1, axis: int = -1) -> Tensor:
    a = asarray(a)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    axis %= a.ndim
    for _ in range(n):
        size = a._shape_tuple()[axis]
        hi = [slice(None)] * a.ndim
        lo = [slice(None)] * a.ndim
        hi[axis], lo[axis] = slice(1, size), slice(0, size - 1)
        a = _mo.subtract(a[tuple(hi)], a[tuple(lo)]) if a.dtype != _dtypes.bool else \
            _mo.not_equal(a[tuple(hi)], a[tuple(lo)])
    return a


# -- padding, ranges, types --------------------------------------------------------------------------------------
def pad(array: Any, pad_width: Any, mode: str, **kwargs: Any) -> Tensor:
    a = asarray(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (a.ndim, 2)).tolist()
    mode = mode.lower()
    if mode == "constant":
        return _io.pad(a, widths, constant_values=kwargs.get("constant_values", 0))
    if mode in ("reflect", "symmetric"):
        return _io.pad(a, widths, mode=mode.upper())
    raise ValueError(f"Unsupported padding mode: {mode}")


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Tensor:
    tnp = _tnp()
    dtype = result_type(dtype) if dtype is not None else result_type(start, stop, float(num), np.zeros((), dtype))
    logs = tnp.linspace(tnp.log10(start), tnp.log10(stop), num=num, endpoint=endpoint)
    out = tnp.power(asarray(10.0, dtype=logs.dtype), logs)
    if axis:
        out = moveaxis(out, 0, axis)
    return _mo.cast(out, dtype)


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: float = 10.0, dtype: Any = None,
             axis: int = 0) -> Tensor:
    tnp = _tnp()
    dtype = result_type(dtype) if dtype is not None else result_type(start, stop, float(num), np.zeros((), dtype))
    exps = tnp.linspace(start, stop, num=num, endpoint=endpoint, dtype=dtype, axis=axis)
    return _mo.cast(tnp.power(asarray(base, dtype=exps.dtype), exps), dtype)


def promote_types(type1: Any, type2: Any) -> Any:
    return np.promote_types(_np_dtype(type1), _np_dtype(type2))


def _np_dtype(t: Any) -> Any:
    return t.as_numpy_dtype if isinstance(t, _dtypes.DType) else t


def finfo(dtype: Any) -> np.finfo:
    return np.finfo(_np_dtype(result_type(dtype)))
