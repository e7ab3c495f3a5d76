"""``tf.experimental.numpy`` (``tnp``): NumPy's API on tensors, with NumPy's dtype rules, as TF 2.21's.

``tnp.ndarray`` is ``tf.Tensor``; every function takes tensors, NumPy arrays or Python values and returns a
tensor (differentiable where the TF op is). Types follow NumPy: a Python int is int64, a Python float
float64 (float32 after ``experimental_enable_numpy_behavior(prefer_float32=True)``), mixed operands promote
by ``np.result_type``. ``experimental_enable_numpy_behavior()`` also gives tensors NumPy's promotion in their
operators (``int32 + float32`` is float64), methods (``.T``, ``.reshape(2, 3)``, ``.astype``, ``.ravel``,
``.mean()`` ...) and indexing (boolean and integer-array indices).

>>> import tapeflow.experimental.numpy as tnp
>>> tnp.experimental_enable_numpy_behavior()
>>> tnp.ones([2, 3]).T.shape
TensorShape([3, 2])
"""

from __future__ import annotations

import math as _math
import numbers
from typing import Any

import numpy as np

from tapeflow.experimental.numpy import random  # noqa: F401 - tnp.random
from tapeflow.experimental.numpy._core import (  # noqa: F401
    _promote_binary,
    asarray,
    array,
    default_float_type,
    experimental_enable_numpy_behavior,
    result_type,
)
from tapeflow.framework import dtypes as _dtypes
from tapeflow.framework.tensor import Tensor
from tapeflow.ops import array_ops as _ao
from tapeflow.ops import indexing_ops as _io
from tapeflow.ops import math_ops as _mo
from tapeflow.ops import special_ops as _so

ndarray = Tensor
newaxis = None
pi, e, inf, nan = np.pi, np.e, np.inf, np.nan
bool_, int8, int16, int32, int64 = np.bool_, np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64, complex64, complex128 = np.float16, np.float32, np.float64, np.complex64, np.complex128
int_, float_, complex_, object_, string_, unicode_ = np.int_, np.float64, np.complex128, np.object_, np.bytes_, np.str_
inexact, iinfo, issubdtype = np.inexact, np.iinfo, np.issubdtype


# -- creation --------------------------------------------------------------------------------------------------
def zeros(shape: Any, dtype: Any = float) -> Tensor:
    return _ao.zeros(shape, dtype=result_type(dtype) if dtype else default_float_type())


def ones(shape: Any, dtype: Any = float) -> Tensor:
    return _ao.ones(shape, dtype=result_type(dtype) if dtype else default_float_type())


def empty(shape: Any, dtype: Any = float) -> Tensor:
    return zeros(shape, dtype)


def _unary_dtype(a: Any, dtype: Any) -> Any:
    if dtype:
        return result_type(dtype)
    return result_type(a)


def zeros_like(a: Any, dtype: Any = None) -> Tensor:
    return _ao.zeros_like(asarray(a), dtype=_unary_dtype(a, dtype))


def ones_like(a: Any, dtype: Any = None) -> Tensor:
    return _ao.ones_like(asarray(a), dtype=_unary_dtype(a, dtype))


def empty_like(a: Any, dtype: Any = None) -> Tensor:
    return zeros_like(a, dtype)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    shape = np.atleast_1d(np.asarray(shape, dtype=np.int64))
    return _ao.broadcast_to(asarray(fill_value, dtype=dtype), shape)


def full_like(a: Any, fill_value: Any, dtype: Any = None) -> Tensor:
    a = asarray(a)
    return _ao.broadcast_to(asarray(fill_value, dtype=dtype or result_type(a)), a._shape_tuple())


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = float) -> Tensor:
    dtype = result_type(dtype) if dtype else default_float_type()
    return asarray(np.eye(int(N), int(M) if M else None, int(k)), dtype=dtype)


def identity(n: int, dtype: Any = float) -> Tensor:
    return eye(n, dtype=dtype)


def copy(a: Any) -> Tensor:
    return array(a, copy=True)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> Tensor:
    if not step:
        raise ValueError("step must be non-zero.")
    if dtype:
        dtype = result_type(dtype)
    else:
        dtype = result_type(start, step) if stop is None else result_type(start, step, stop)
    if step > 0 and ((stop is not None and start > stop) or (stop is None and start < 0)):
        return array([], dtype=dtype)
    if step < 0 and ((stop is not None and start < stop) or (stop is None and start > 0)):
        return array([], dtype=dtype)
    return _mo.cast(_ao.range_(start, stop, step), dtype)


def linspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = float,
    axis: int = 0,
) -> Any:
    dtype = result_type(dtype) if dtype else default_float_type()
    out, step = np.linspace(
        np.asarray(start, np.float64),
        np.asarray(stop, np.float64),
        int(num),
        endpoint=endpoint,
        retstep=True,
        axis=axis,
    )
    out = asarray(out, dtype=dtype)
    return (out, step) if retstep else out


# -- elementwise math ------------------------------------------------------------------------------------------
def _unary(fn, promote_to_float: bool = False):
    def op(x: Any) -> Tensor:
        x = asarray(x)
        if promote_to_float and not x.dtype.is_floating and not x.dtype.is_complex:
            x = _mo.cast(x, default_float_type())
        return fn(x)

    return op


exp = _unary(_mo.exp, True)
expm1 = _unary(_mo.expm1, True)
log = _unary(_mo.log, True)
log1p = _unary(_mo.log1p, True)
sqrt = _unary(_mo.sqrt, True)
sin = _unary(_mo.sin, True)
cos = _unary(_mo.cos, True)
tan = _unary(_mo.tan, True)
tanh = _unary(_mo.tanh, True)
arctan = _unary(_so.atan, True)
arcsin = _unary(_so.asin, True)
arccos = _unary(_so.acos, True)
sinh = _unary(_so.sinh, True)
cosh = _unary(_so.cosh, True)
floor = _unary(_mo.floor, True)
ceil = _unary(_mo.ceil, True)
reciprocal = _unary(_mo.reciprocal, True)
negative = _unary(_mo.negative)
square = _unary(_mo.square)
abs = absolute = _unary(_mo.abs)
sign = _unary(_mo.sign)


def _binary(fn, bool_fn=None):
    def op(x1: Any, x2: Any) -> Tensor:
        a, b = _promote_binary(x1, x2)
        if bool_fn is not None and a.dtype == _dtypes.bool:
            return bool_fn(a, b)
        return fn(a, b)

    return op


add = _binary(_mo.add_op, _mo.logical_or)
subtract = _binary(_mo.subtract)
multiply = _binary(_mo.multiply, _mo.logical_and)
maximum = _binary(_mo.maximum, _mo.logical_or)
minimum = _binary(_mo.minimum, _mo.logical_and)
floor_divide = _binary(_mo.floordiv)
mod = remainder = _binary(_mo.floormod)
power = _binary(_mo.pow)
equal = _binary(_mo.equal)
not_equal = _binary(_mo.not_equal)
less = _binary(_mo.less)
less_equal = _binary(_mo.less_equal)
greater = _binary(_mo.greater)
greater_equal = _binary(_mo.greater_equal)
logical_and = _binary(_mo.logical_and)
logical_or = _binary(_mo.logical_or)
arctan2 = _binary(_so.atan2)


def true_divide(x1: Any, x2: Any) -> Tensor:
    a, b = _promote_binary(x1, x2)
    if a.dtype == _dtypes.bool:
        a, b = _mo.cast(a, default_float_type()), _mo.cast(b, default_float_type())
    if a.dtype == b.dtype and a.dtype in (_dtypes.int32, _dtypes.int64):  # TF NumPy divides integers in float64
        a, b = _mo.cast(a, _dtypes.float64), _mo.cast(b, _dtypes.float64)
    return _mo.divide(a, b)


divide = true_divide


def matmul(x1: Any, x2: Any) -> Tensor:
    a, b = _promote_binary(x1, x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("Input arrays must have at least one dimension; use tnp.multiply for scalars.")
    if b.ndim == 1:
        return _ao.squeeze(
            _mo.matmul(a if a.ndim > 1 else _ao.expand_dims(a, 0), _ao.expand_dims(b, -1)),
            [-1] if a.ndim > 1 else [-2, -1],
        )
    if a.ndim == 1:
        return _ao.squeeze(_mo.matmul(_ao.expand_dims(a, 0), b), [-2])
    return _mo.matmul(a, b)


def dot(a: Any, b: Any) -> Tensor:
    a, b = _promote_binary(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return _mo.multiply(a, b)
    if b.ndim == 1:
        return _io.tensordot(a, b, [[a.ndim - 1], [0]])
    return _io.tensordot(a, b, [[a.ndim - 1], [b.ndim - 2]])


def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    condition = asarray(condition, dtype=np.bool_)
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("Both x and y must be ndarrays, or both must be None.")
    x, y = _promote_binary(x, y)
    return _mo.where(condition, x, y)


def nonzero(a: Any) -> tuple:
    v = np.nonzero(np.asarray(asarray(a)))
    return tuple(asarray(i) for i in v)


def clip(a: Any, a_min: Any, a_max: Any) -> Tensor:
    if a_min is None and a_max is None:
        raise ValueError("Not more than one of `a_min` and `a_max` may be `None`.")
    if a_min is None:
        return minimum(a, a_max)
    if a_max is None:
        return maximum(a, a_min)
    a, a_min, a_max = _promote_all(a, a_min, a_max)
    return _mo.clip_by_value(*_broadcast_all(a, a_min, a_max))


def around(a: Any, decimals: int = 0) -> Tensor:
    a = asarray(a)
    dtype = a.dtype
    factor = _math.pow(10, decimals)
    if dtype.is_floating:
        return _mo.divide(_mo.round(_mo.multiply(a, asarray(factor, dtype=dtype))), asarray(factor, dtype=dtype))
    if decimals >= 0:
        return a
    fa = _mo.cast(a, _dtypes.float64)
    return _mo.cast(_mo.divide(_mo.round(_mo.multiply(fa, asarray(factor))), asarray(factor)), dtype)


round_ = round = around


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    return all(isclose(a, b, rtol, atol, equal_nan))


def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    a, b = _promote_binary(a, b)
    if not a.dtype.is_floating:
        return _mo.equal(a, b)
    diff = _mo.abs(_mo.subtract(a, b))
    close = _mo.less_equal(
        diff, _mo.add_op(asarray(atol, dtype=a.dtype), _mo.multiply(asarray(rtol, dtype=a.dtype), _mo.abs(b)))
    )
    close = _mo.logical_or(close, _mo.equal(a, b))
    if equal_nan:
        close = _mo.logical_or(close, _mo.logical_and(_mo.is_nan(a), _mo.is_nan(b)))
    return close


def _promote_all(*xs: Any) -> list:
    dtype = result_type(*xs)
    return [asarray(x, dtype=dtype) for x in xs]


def _broadcast_all(*xs: Tensor) -> list:
    shape = np.broadcast_shapes(*[tuple(x._shape_tuple()) for x in xs])
    return [_ao.broadcast_to(x, shape) for x in xs]


# -- reductions ------------------------------------------------------------------------------------------------
def _reduce(fn, a: Any, axis: Any, dtype: Any, keepdims: Any, promote_int: str | None, bool_fn=None) -> Tensor:
    if dtype:
        dtype = result_type(dtype)
    a = asarray(a, dtype=dtype)
    if dtype is None and promote_int is not None and (a.dtype.is_integer or a.dtype == _dtypes.bool):
        if promote_int == "int":
            if a.dtype == _dtypes.bool or np.promote_types(a.dtype._np, int) != a.dtype._np:
                a = _mo.cast(a, np.promote_types(a.dtype._np if a.dtype != _dtypes.bool else np.int64, int))
        else:
            a = _mo.cast(a, default_float_type())
    if bool_fn is not None and a.dtype == _dtypes.bool:
        fn = bool_fn
    return fn(a, axis=axis, keepdims=bool(keepdims))


def sum(a: Any, axis: Any = None, dtype: Any = None, keepdims: Any = None) -> Tensor:
    return _reduce(_mo.reduce_sum, a, axis, dtype, keepdims, "int", _mo.reduce_any)


def prod(a: Any, axis: Any = None, dtype: Any = None, keepdims: Any = None) -> Tensor:
    return _reduce(_mo.reduce_prod, a, axis, dtype, keepdims, "int", _mo.reduce_all)


def mean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = None) -> Tensor:
    if out is not None:
        raise ValueError("Setting out is not supported.")
    return _reduce(_mo.reduce_mean, a, axis, dtype, keepdims, "float")


def amax(a: Any, axis: Any = None, out: Any = None, keepdims: Any = None) -> Tensor:
    return _reduce(_mo.reduce_max, a, axis, None, keepdims, None, _mo.reduce_any)


def amin(a: Any, axis: Any = None, out: Any = None, keepdims: Any = None) -> Tensor:
    return _reduce(_mo.reduce_min, a, axis, None, keepdims, None, _mo.reduce_all)


max, min = amax, amin


def all(a: Any, axis: Any = None, keepdims: Any = None) -> Tensor:
    return _mo.reduce_all(asarray(a, dtype=np.bool_), axis=axis, keepdims=bool(keepdims))


def any(a: Any, axis: Any = None, keepdims: Any = None) -> Tensor:
    return _mo.reduce_any(asarray(a, dtype=np.bool_), axis=axis, keepdims=bool(keepdims))


def var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0, keepdims: Any = None) -> Tensor:
    a = asarray(a, dtype=result_type(dtype) if dtype else None)
    if not a.dtype.is_floating:
        a = _mo.cast(a, default_float_type())
    mu = _mo.reduce_mean(a, axis=axis, keepdims=True)
    sq = _mo.square(_mo.subtract(a, mu))
    n = np.prod([a._shape_tuple()[i] for i in _axes(axis, a.ndim)], dtype=np.int64)
    out_ = _mo.reduce_sum(sq, axis=axis, keepdims=bool(keepdims))
    return _mo.divide(out_, asarray(float(n - ddof), dtype=a.dtype))


def std(a: Any, axis: Any = None, keepdims: Any = None) -> Tensor:
    return _mo.sqrt(var(a, axis=axis, keepdims=keepdims))


def _axes(axis: Any, ndim: int) -> list:
    if axis is None:
        return list(range(ndim))
    axes = [axis] if isinstance(axis, numbers.Integral) else list(axis)
    return [int(a) % ndim for a in axes]


def argmax(a: Any, axis: int | None = None) -> Tensor:
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    return _ao.argmax(a, axis=axis, output_type=_dtypes.int64)


def argmin(a: Any, axis: int | None = None) -> Tensor:
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    return _ao.argmin(a, axis=axis, output_type=_dtypes.int64)


def cumsum(a: Any, axis: int | None = None, dtype: Any = None) -> Tensor:
    a = _cum_input(a, dtype)
    if axis is None:
        a, axis = ravel(a), 0
    return _mo.cumsum(a, axis)


def cumprod(a: Any, axis: int | None = None, dtype: Any = None) -> Tensor:
    a = _cum_input(a, dtype)
    if axis is None:
        a, axis = ravel(a), 0
    return _mo.cumprod(a, axis)


def _cum_input(a: Any, dtype: Any) -> Tensor:
    a = asarray(a, dtype=result_type(dtype) if dtype else None)
    if dtype is None and (a.dtype.is_integer or a.dtype == _dtypes.bool):
        out = np.promote_types(a.dtype._np if a.dtype != _dtypes.bool else np.int64, int)
        if out != a.dtype._np:
            a = _mo.cast(a, out)
    return a


# -- shapes ----------------------------------------------------------------------------------------------------
def reshape(a: Any, newshape: Any, order: str = "C") -> Tensor:
    if order != "C":
        raise NotImplementedError("tnp.reshape(order=...) other than 'C' is not implemented in tapeflow")
    return _ao.reshape(asarray(a), [newshape] if isinstance(newshape, numbers.Integral) else list(newshape))


def ravel(a: Any) -> Tensor:
    return _ao.reshape(asarray(a), [-1])


def transpose(a: Any, axes: Any = None) -> Tensor:
    a = asarray(a)
    return _ao.transpose(a, list(axes) if axes is not None else list(range(a.ndim))[::-1])


def swapaxes(a: Any, axis1: int, axis2: int) -> Tensor:
    a = asarray(a)
    perm = list(range(a.ndim))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return _ao.transpose(a, perm)


def expand_dims(a: Any, axis: int) -> Tensor:
    return _ao.expand_dims(asarray(a), axis)


def squeeze(a: Any, axis: Any = None) -> Tensor:
    return _ao.squeeze(asarray(a), axis)


def concatenate(arys: Any, axis: int = 0) -> Tensor:
    if not isinstance(arys, (list, tuple)):
        arys = list(arys)
    if not arys:
        raise ValueError("Need at least one array to concatenate.")
    return _ao.concat(_promote_all(*arys), axis)


def stack(arrays: Any, axis: int = 0) -> Tensor:
    return _ao.stack(_promote_all(*arrays), axis)


def broadcast_to(array: Any, shape: Any) -> Tensor:
    return _ao.broadcast_to(asarray(array), shape)


def take(a: Any, indices: Any, axis: int | None = None) -> Tensor:
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    return _ao.gather(a, asarray(indices), axis=axis)


def shape(a: Any) -> tuple:
    return tuple(asarray(a)._shape_tuple())


def ndim(a: Any) -> int:
    return asarray(a).ndim


def size(x: Any, axis: int | None = None) -> int:
    s = shape(x)
    return int(np.prod(s, dtype=np.int64)) if axis is None else s[axis]


def isscalar(num: Any) -> bool:
    return ndim(num) == 0


def flatten(a: Any, order: str = "C") -> Tensor:
    return reshape(a, [-1], order)


from tapeflow.experimental.numpy._more import *  # noqa: E402, F403 - the rest of TF's tnp names
