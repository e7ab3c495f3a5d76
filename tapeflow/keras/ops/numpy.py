"""``keras.ops.numpy`` (also flat in ``keras.ops``): NumPy-style functions with Keras 3's dtype rules
(its promotion lattice, Python scalars weak), on tensors or, in a functional model, on KerasTensors."""

from __future__ import annotations

import builtins
import math as _math
from typing import Any

import numpy as np

from tapeflow.keras import backend as _backend
from tapeflow.keras.ops._base import convert, dtype_of, float_of, keras_op, result_type, tf

_std = _backend.standardize_dtype


def _axes(axis: Any) -> Any:
    return list(axis) if isinstance(axis, tuple) else axis


def _promoted(x1: Any, x2: Any, *extra: Any) -> tuple:
    dtype = result_type(dtype_of(x1), dtype_of(x2), *extra)
    return convert(x1, dtype), convert(x2, dtype), dtype


def _floated(x: Any) -> Any:
    x = convert(x)
    return tf().cast(x, float_of(x))


# ---- elementwise, one argument


def _float_unary(name: str, cls: str, fn: Any) -> Any:
    def impl(x: Any) -> Any:
        return fn(_floated(x))

    impl.__name__ = name
    impl.__doc__ = f"``keras.ops.{name}``: elementwise, computed in a float type (integers: ``floatx()``)."
    return keras_op(cls)(impl)


def _m() -> Any:
    return tf().math


sin = _float_unary("sin", "Sin", lambda x: _m().sin(x))
cos = _float_unary("cos", "Cos", lambda x: _m().cos(x))
tan = _float_unary("tan", "Tan", lambda x: _m().tan(x))
arcsin = _float_unary("arcsin", "Arcsin", lambda x: _m().asin(x))
arccos = _float_unary("arccos", "Arccos", lambda x: _m().acos(x))
arctan = _float_unary("arctan", "Arctan", lambda x: _m().atan(x))
sinh = _float_unary("sinh", "Sinh", lambda x: _m().sinh(x))
cosh = _float_unary("cosh", "Cosh", lambda x: _m().cosh(x))
tanh = _float_unary("tanh", "Tanh", lambda x: _m().tanh(x))
arcsinh = _float_unary("arcsinh", "Arcsinh", lambda x: _m().asinh(x))
arccosh = _float_unary("arccosh", "Arccosh", lambda x: _m().acosh(x))
arctanh = _float_unary("arctanh", "Arctanh", lambda x: _m().atanh(x))
exp = _float_unary("exp", "Exp", lambda x: _m().exp(x))
expm1 = _float_unary("expm1", "Expm1", lambda x: _m().expm1(x))
exp2 = _float_unary("exp2", "Exp2", lambda x: _m().pow(tf().cast(2, x.dtype), x))
log = _float_unary("log", "Log", lambda x: _m().log(x))
log1p = _float_unary("log1p", "Log1p", lambda x: _m().log1p(x))
log2 = _float_unary("log2", "Log2", lambda x: _m().log(x) / tf().cast(_math.log(2.0), x.dtype))
log10 = _float_unary("log10", "Log10", lambda x: _m().log(x) / tf().cast(_math.log(10.0), x.dtype))
sqrt = _float_unary("sqrt", "Sqrt", lambda x: _m().sqrt(x))
floor = _float_unary("floor", "Floor", lambda x: _m().floor(x))
ceil = _float_unary("ceil", "Ceil", lambda x: _m().ceil(x))
fabs = _float_unary("fabs", "Fabs", lambda x: _m().abs(x))
deg2rad = _float_unary("deg2rad", "Deg2rad", lambda x: x * tf().cast(np.pi / 180.0, x.dtype))
rad2deg = _float_unary("rad2deg", "Rad2deg", lambda x: x * tf().cast(180.0 / np.pi, x.dtype))


@keras_op("Cbrt")
def cbrt(x: Any) -> Any:
    x = _floated(x)
    return _m().sign(x) * _m().pow(_m().abs(x), tf().cast(1.0 / 3.0, x.dtype))


@keras_op("Trunc")
def trunc(x: Any) -> Any:
    x = convert(x)
    if "int" in _std(x.dtype) or _std(x.dtype) == "bool":
        return x
    return _m().sign(x) * _m().floor(_m().abs(x))


@keras_op("Absolute")
def absolute(x: Any) -> Any:
    """``keras.ops.absolute`` (and ``abs``); unsigned and bool values come back as they are."""
    x = convert(x)
    if "uint" in _std(x.dtype) or _std(x.dtype) == "bool":
        return x
    return _m().abs(x)


abs = absolute  # noqa: A001 - Keras's name


@keras_op("Negative")
def negative(x: Any) -> Any:
    return _m().negative(convert(x))


@keras_op("Square")
def square(x: Any) -> Any:
    x = convert(x)
    if _std(x.dtype) == "bool":
        x = tf().cast(x, "int32")
    return _m().square(x)


@keras_op("Sign")
def sign(x: Any) -> Any:
    return _m().sign(convert(x))


@keras_op("Reciprocal")
def reciprocal(x: Any) -> Any:
    return _m().reciprocal(convert(x))


@keras_op("Round")
def round(x: Any, decimals: int = 0) -> Any:  # noqa: A001
    x = convert(x)
    if decimals == 0:
        return _m().round(x)
    if "int" in _std(x.dtype):
        if decimals > 0:
            return x
        factor = tf().cast(10.0 ** decimals, _backend.floatx())
        return tf().cast(_m().round(tf().cast(x, _backend.floatx()) * factor) / factor, x.dtype)
    factor = tf().cast(10.0 ** decimals, x.dtype)
    return _m().round(x * factor) / factor


@keras_op("Isfinite")
def isfinite(x: Any) -> Any:
    x = convert(x)
    return _m().is_finite(x) if "float" in _std(x.dtype) else tf().ones_like(x, dtype="bool")


@keras_op("Isinf")
def isinf(x: Any) -> Any:
    x = convert(x)
    return _m().is_inf(x) if "float" in _std(x.dtype) else tf().zeros_like(x, dtype="bool")


@keras_op("Isnan")
def isnan(x: Any) -> Any:
    x = convert(x)
    return _m().is_nan(x) if "float" in _std(x.dtype) else tf().zeros_like(x, dtype="bool")


@keras_op("LogicalNot")
def logical_not(x: Any) -> Any:
    return _m().logical_not(tf().cast(convert(x), "bool"))


@keras_op("NanToNum")
def nan_to_num(x: Any, nan: float = 0.0, posinf: Any = None, neginf: Any = None) -> Any:
    x = convert(x)
    if "float" not in _std(x.dtype):
        return x
    info = np.finfo(_std(x.dtype))
    x = tf().where(_m().is_nan(x), tf().cast(nan, x.dtype), x)
    x = tf().where(x == np.inf, tf().cast(info.max if posinf is None else posinf, x.dtype), x)
    return tf().where(x == -np.inf, tf().cast(info.min if neginf is None else neginf, x.dtype), x)


# ---- elementwise, two arguments


def _binary(name: str, cls: str, fn: Any, bool_as: str | None = None, floats: bool = False) -> Any:
    def impl(x1: Any, x2: Any) -> Any:
        a, b, dtype = _promoted(x1, x2, *((float,) if floats else ()))
        if bool_as and dtype == "bool":
            a, b = tf().cast(a, bool_as), tf().cast(b, bool_as)
        return fn(a, b)

    impl.__name__ = name
    impl.__doc__ = f"``keras.ops.{name}``: elementwise, both arguments promoted by Keras's rules."
    return keras_op(cls, tensors=2)(impl)


add = _binary("add", "Add", lambda a, b: _m().add(a, b) if a.dtype != "bool" else _m().logical_or(a, b))
subtract = _binary("subtract", "Subtract", lambda a, b: _m().subtract(a, b))
multiply = _binary("multiply", "Multiply",
                   lambda a, b: _m().multiply(a, b) if a.dtype != "bool" else _m().logical_and(a, b))
maximum = _binary("maximum", "Maximum", lambda a, b: _m().maximum(a, b), bool_as="int32")
minimum = _binary("minimum", "Minimum", lambda a, b: _m().minimum(a, b), bool_as="int32")
mod = _binary("mod", "Mod", lambda a, b: _m().floormod(a, b), bool_as="int32")
floor_divide = _binary("floor_divide", "FloorDivide", lambda a, b: _m().floordiv(a, b))
power = _binary("power", "Power", lambda a, b: _m().pow(a, b) if a.dtype.is_floating or not a.dtype.is_unsigned
                else tf().cast(_m().pow(tf().cast(a, "int32"), tf().cast(b, "int32")), a.dtype))  # TF: no unsigned pow
divide = _binary("divide", "Divide", lambda a, b: _m().divide(a, b), floats=True)
true_divide = _binary("true_divide", "TrueDivide", lambda a, b: _m().divide(a, b), floats=True)
divide_no_nan = _binary("divide_no_nan", "DivideNoNan", lambda a, b: _m().divide_no_nan(a, b), floats=True)
arctan2 = _binary("arctan2", "Arctan2", lambda a, b: _m().atan2(a, b), floats=True)
hypot = _binary("hypot", "Hypot", lambda a, b: _m().sqrt(a * a + b * b), floats=True)
logaddexp = _binary("logaddexp", "Logaddexp", lambda a, b: _m().maximum(a, b) + _m().log1p(
    _m().exp(-_m().abs(a - b))), floats=True)
equal = _binary("equal", "Equal", lambda a, b: _m().equal(a, b))
not_equal = _binary("not_equal", "NotEqual", lambda a, b: _m().not_equal(a, b))
less = _binary("less", "Less", lambda a, b: _m().less(a, b))
less_equal = _binary("less_equal", "LessEqual", lambda a, b: _m().less_equal(a, b))
greater = _binary("greater", "Greater", lambda a, b: _m().greater(a, b))
greater_equal = _binary("greater_equal", "GreaterEqual", lambda a, b: _m().greater_equal(a, b))


def _logical(name: str, cls: str, fn: Any) -> Any:
    def impl(x1: Any, x2: Any) -> Any:
        return fn(tf().cast(convert(x1), "bool"), tf().cast(convert(x2), "bool"))

    impl.__name__ = name
    return keras_op(cls, tensors=2)(impl)


logical_and = _logical("logical_and", "LogicalAnd", lambda a, b: _m().logical_and(a, b))
logical_or = _logical("logical_or", "LogicalOr", lambda a, b: _m().logical_or(a, b))
logical_xor = _logical("logical_xor", "LogicalXor", lambda a, b: _m().logical_xor(a, b))


@keras_op("Isclose", tensors=4)
def isclose(x1: Any, x2: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Any:
    a, b, dtype = _promoted(x1, x2)
    if "float" not in dtype:
        return _m().equal(a, b)
    close = _m().abs(a - b) <= (tf().cast(atol, dtype) + tf().cast(rtol, dtype) * _m().abs(b))
    close = _m().logical_or(close, _m().equal(a, b))  # equal infinities
    if equal_nan:
        close = _m().logical_or(close, _m().logical_and(_m().is_nan(a), _m().is_nan(b)))
    return close


@keras_op("AllClose", tensors=2)
def allclose(x1: Any, x2: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Any:
    return tf().reduce_all(isclose(x1, x2, rtol=rtol, atol=atol, equal_nan=equal_nan))


@keras_op("Clip")
def clip(x: Any, x_min: Any, x_max: Any) -> Any:
    x = convert(x)
    if _std(x.dtype) == "bool":
        x = tf().cast(x, "int32")
    return tf().clip_by_value(x, tf().cast(x_min, x.dtype), tf().cast(x_max, x.dtype))


@keras_op("Where", tensors=3)
def where(condition: Any, x1: Any = None, x2: Any = None) -> Any:
    """``keras.ops.where``: ``x1`` where ``condition`` holds, else ``x2`` (promoted); with neither,
    the indices of the true elements, one tensor per dimension."""
    condition = tf().cast(convert(condition), "bool")
    if x1 is None and x2 is None:
        return nonzero(condition)
    if x1 is None or x2 is None:
        raise ValueError("`x1` and `x2` either both should be `None` or both should have non-None value.")
    a, b, _ = _promoted(x1, x2)
    return tf().where(condition, a, b)


# ---- matrix products


@keras_op("Matmul", tensors=2)
def matmul(x1: Any, x2: Any) -> Any:
    a, b, dtype = _promoted(x1, x2)
    if dtype in ("bool", "int8", "int16", "uint8", "uint16"):
        return tf().cast(tf().matmul(tf().cast(a, "int32"), tf().cast(b, "int32")), "int32")
    if a.shape.rank == 1 or b.shape.rank == 1:
        return tensordot(a, b, axes=[[a.shape.rank - 1], [0 if b.shape.rank == 1 else b.shape.rank - 2]])
    return tf().matmul(a, b)


@keras_op("Dot", tensors=2)
def dot(x1: Any, x2: Any) -> Any:
    a, b, _ = _promoted(x1, x2)
    if a.shape.rank == 0 or b.shape.rank == 0:
        return a * b
    if b.shape.rank == 1:
        return tensordot(a, b, axes=[[a.shape.rank - 1], [0]])
    return tensordot(a, b, axes=[[a.shape.rank - 1], [b.shape.rank - 2]])


@keras_op("Tensordot", tensors=2)
def tensordot(x1: Any, x2: Any, axes: Any = 2) -> Any:
    a, b, _ = _promoted(x1, x2)
    return tf().tensordot(a, b, axes=axes)


@keras_op("Outer", tensors=2)
def outer(x1: Any, x2: Any) -> Any:
    a, b, _ = _promoted(x1, x2)
    return tf().reshape(a, [-1, 1]) * tf().reshape(b, [1, -1])


@keras_op("Inner", tensors=2)
def inner(x1: Any, x2: Any) -> Any:
    a, b, _ = _promoted(x1, x2)
    if a.shape.rank == 0 or b.shape.rank == 0:
        return a * b
    return tf().tensordot(a, b, axes=[[a.shape.rank - 1], [b.shape.rank - 1]])


@keras_op("Einsum", tensors=("operands",))
def einsum(subscripts: str, *operands: Any) -> Any:
    dtype = result_type(*[dtype_of(o) for o in operands])
    return tf().einsum(subscripts, *[convert(o, dtype) for o in operands])


@keras_op("Cross", tensors=2)
def cross(x1: Any, x2: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: Any = None) -> Any:
    a, b, _ = _promoted(x1, x2)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    shape = np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    out = tf().linalg.cross(tf().broadcast_to(a, shape), tf().broadcast_to(b, shape))
    return moveaxis(out, -1, axisc)


# ---- reductions


def _sum_dtype(name: str) -> str:
    return {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32", "uint16": "uint32"}.get(name, name)


@keras_op("Sum")
def sum(x: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    x = convert(x)
    x = tf().cast(x, _sum_dtype(_std(x.dtype)))
    return tf().reduce_sum(x, axis=_axes(axis), keepdims=keepdims)


@keras_op("Prod")
def prod(x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Any:
    x = convert(x)
    x = tf().cast(x, _std(dtype) if dtype is not None else _sum_dtype(_std(x.dtype)))
    return tf().reduce_prod(x, axis=_axes(axis), keepdims=keepdims)


@keras_op("Mean")
def mean(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    x = convert(x)
    name = _std(x.dtype)
    compute = result_type(name, "float32")
    out_dtype = compute if ("int" in name or name == "bool") else name
    out = tf().reduce_mean(tf().cast(x, compute), axis=_axes(axis), keepdims=keepdims)
    return tf().cast(out, out_dtype)


@keras_op("Var")
def var(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    x = convert(x)
    compute, out = result_type(_std(x.dtype), "float32"), result_type(_std(x.dtype), float)
    return tf().cast(tf().math.reduce_variance(tf().cast(x, compute), axis=_axes(axis), keepdims=keepdims), out)


@keras_op("Std")
def std(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    x = convert(x)
    if "int" in _std(x.dtype) or _std(x.dtype) == "bool":
        x = tf().cast(x, _backend.floatx())
    return tf().math.reduce_std(x, axis=_axes(axis), keepdims=keepdims)


def _extreme(reduce: Any, pick: Any, what: str) -> Any:
    def impl(x: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> Any:
        x = convert(x)
        if initial is not None:
            if _std(x.dtype) == "bool":
                out = tf().cast(reduce(tf().cast(x, "int32"), axis=_axes(axis), keepdims=keepdims), "int32")
                return tf().cast(pick(out, tf().cast(initial, "int32")), "bool")
            return pick(reduce(x, axis=_axes(axis), keepdims=keepdims), tf().cast(initial, x.dtype))
        if int(np.prod(x.shape.as_list() if x.shape.rank is not None else [1])) == 0 and x.shape.is_fully_defined():
            raise ValueError(f"Cannot compute the {what} of an empty tensor.")
        if _std(x.dtype) == "bool":
            return tf().cast(reduce(tf().cast(x, "int32"), axis=_axes(axis), keepdims=keepdims), "bool")
        return reduce(x, axis=_axes(axis), keepdims=keepdims)

    return impl


def _max_impl(x: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> Any:
    return _extreme(lambda *a, **k: tf().reduce_max(*a, **k), lambda a, b: tf().maximum(a, b), "max")(
        x, axis, keepdims, initial)


def _min_impl(x: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> Any:
    return _extreme(lambda *a, **k: tf().reduce_min(*a, **k), lambda a, b: tf().minimum(a, b), "min")(
        x, axis, keepdims, initial)


_max_impl.__name__, _min_impl.__name__ = "max", "min"
max = keras_op("Max")(_max_impl)  # noqa: A001
min = keras_op("Min")(_min_impl)  # noqa: A001


@keras_op("Amax")
def amax(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _max_impl(x, axis, keepdims)


@keras_op("Amin")
def amin(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _min_impl(x, axis, keepdims)


@keras_op("All")
def all(x: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    return tf().reduce_all(tf().cast(convert(x), "bool"), axis=_axes(axis), keepdims=keepdims)


@keras_op("Any")
def any(x: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    return tf().reduce_any(tf().cast(convert(x), "bool"), axis=_axes(axis), keepdims=keepdims)


def _arg(fn: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    x = convert(x)
    flat = tf().reshape(x, [-1]) if axis is None else x
    out = fn(flat, axis=0 if axis is None else axis, output_type="int32")
    if keepdims:
        if axis is None:
            return tf().reshape(out, [1] * x.shape.rank)
        return tf().expand_dims(out, axis)
    return out


@keras_op("Argmax")
def argmax(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _arg(lambda *a, **k: tf().argmax(*a, **k), x, axis, keepdims)


@keras_op("Argmin")
def argmin(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _arg(lambda *a, **k: tf().argmin(*a, **k), x, axis, keepdims)


@keras_op("CountNonzero")
def count_nonzero(x: Any, axis: Any = None) -> Any:
    x = convert(x)
    return tf().cast(tf().math.count_nonzero(x, axis=_axes(axis)), "int32")


@keras_op("Cumsum")
def cumsum(x: Any, axis: Any = None, dtype: Any = None) -> Any:
    x = convert(x, dtype)
    if _std(x.dtype) == "bool":
        x = tf().cast(x, "int32")
    if axis is None:
        x, axis = tf().reshape(x, [-1]), 0
    return tf().math.cumsum(x, axis=axis)


@keras_op("Cumprod")
def cumprod(x: Any, axis: Any = None, dtype: Any = None) -> Any:
    x = convert(x, dtype)
    if _std(x.dtype) == "bool":
        x = tf().cast(x, "int32")
    if axis is None:
        x, axis = tf().reshape(x, [-1]), 0
    return tf().math.cumprod(x, axis=axis)


@keras_op("Average", kw=("weights",))
def average(x: Any, axis: Any = None, weights: Any = None) -> Any:
    x = convert(x)
    if weights is None:
        return mean(x, axis=axis)
    w = convert(weights)
    dtype = result_type(_std(x.dtype), _std(w.dtype), float)
    x, w = tf().cast(x, dtype), tf().cast(w, dtype)
    if axis is not None and w.shape.rank == 1 and x.shape.rank > 1:
        shape = [1] * x.shape.rank
        shape[axis] = -1
        w = tf().reshape(w, shape)
    w = w * tf().ones_like(x)
    return tf().reduce_sum(x * w, axis=axis) / tf().reduce_sum(w, axis=axis)


@keras_op("Median")
def median(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return quantile(x, 0.5, axis=axis, keepdims=keepdims)


@keras_op("Quantile", tensors=2)
def quantile(x: Any, q: Any, axis: Any = None, method: str = "linear", keepdims: bool = False) -> Any:
    x = convert(x)
    dtype = result_type(_std(x.dtype), float)
    q_np = np.asarray(q.numpy() if hasattr(q, "numpy") else q, dtype=np.float64)
    out = np.quantile(x.numpy().astype(np.float64), q_np, axis=tuple(axis) if isinstance(axis, (list, tuple))
                      else axis, method=method, keepdims=keepdims)
    return convert(np.asarray(out), dtype)


@keras_op("Percentile", tensors=2)
def percentile(x: Any, q: Any, axis: Any = None, method: str = "linear", keepdims: bool = False) -> Any:
    return quantile(x, np.asarray(q, dtype=np.float64) / 100.0, axis=axis, method=method, keepdims=keepdims)


@keras_op("Ptp")
def ptp(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _max_impl(x, axis, keepdims) - _min_impl(x, axis, keepdims)


# ---- creation


@keras_op("Zeros", tensors=0)
def zeros(shape: Any, dtype: Any = None) -> Any:
    return tf().zeros(shape, dtype=_std(dtype or _backend.floatx()))


@keras_op("Ones", tensors=0)
def ones(shape: Any, dtype: Any = None) -> Any:
    return tf().ones(shape, dtype=_std(dtype or _backend.floatx()))


@keras_op("Empty", tensors=0)
def empty(shape: Any, dtype: Any = None) -> Any:
    return zeros(shape, dtype)


@keras_op("Full", tensors=("fill_value",))
def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    dtype = _std(dtype or _backend.floatx())
    return tf().broadcast_to(convert(fill_value, dtype), shape)


@keras_op("ZerosLike")
def zeros_like(x: Any, dtype: Any = None) -> Any:
    x = convert(x)
    return tf().zeros_like(x, dtype=_std(dtype or x.dtype))


@keras_op("OnesLike")
def ones_like(x: Any, dtype: Any = None) -> Any:
    x = convert(x)
    return tf().ones_like(x, dtype=_std(dtype or x.dtype))


@keras_op("EmptyLike")
def empty_like(x: Any, dtype: Any = None) -> Any:
    return zeros_like(x, dtype)


@keras_op("FullLike", tensors=2)
def full_like(x: Any, fill_value: Any, dtype: Any = None) -> Any:
    x = convert(x)
    dtype = _std(dtype or x.dtype)
    return tf().broadcast_to(convert(fill_value, dtype), tf().shape(x))


@keras_op("Arange", tensors=2, kw=("step",))
def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Any:
    if dtype is None:
        dtype = result_type(*[dtype_of(v) for v in (start, stop, step) if v is not None])
    return tf().range(start, stop, 1 if step is None else step, dtype=_std(dtype))


@keras_op("Linspace", tensors=2)
def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype: Any = None, axis: int = 0) -> Any:
    if num < 0:
        raise ValueError(f"`num` must be a non-negative integer. Received: num={num}")
    dtype = _std(dtype) if dtype is not None else result_type(dtype_of(start), dtype_of(stop), float)
    a, b = convert(start, dtype), convert(stop, dtype)
    div = (num - 1) if endpoint else num
    step = (b - a) / tf().cast(builtins.max(div, 1), dtype)
    out = tf().cast(tf().linspace(tf().cast(a, "float64"), tf().cast(b, "float64") if endpoint else
                                  tf().cast(a + step * num, "float64"), num + (0 if endpoint else 1), axis=axis), dtype)
    if not endpoint:
        out = tf().gather(out, tf().range(num), axis=axis)
    return (out, step) if retstep else out


@keras_op("Logspace", tensors=2)
def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: float = 10, dtype: Any = None,
             axis: int = 0) -> Any:
    dtype = _std(dtype) if dtype is not None else result_type(dtype_of(start), dtype_of(stop), float)
    exps = linspace(start, stop, num=num, endpoint=endpoint, dtype=dtype, axis=axis)
    return tf().cast(_m().pow(tf().cast(base, dtype), exps), dtype)


@keras_op("Eye", tensors=0)
def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:  # noqa: N803 - Keras's names
    return convert(np.eye(N, M, k), _std(dtype or _backend.floatx()))


@keras_op("Identity", tensors=0)
def identity(n: int, dtype: Any = None) -> Any:
    return eye(n, dtype=dtype)


@keras_op("Tri", tensors=0)
def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:  # noqa: N803
    return convert(np.tri(N, M, k), _std(dtype or _backend.floatx()))


@keras_op("Array")
def array(x: Any, dtype: Any = None) -> Any:
    return convert(x, dtype)


# ---- shape and layout


@keras_op("Reshape")
def reshape(x: Any, newshape: Any) -> Any:
    return tf().reshape(convert(x), [newshape] if isinstance(newshape, int) else newshape)


@keras_op("Transpose")
def transpose(x: Any, axes: Any = None) -> Any:
    return tf().transpose(convert(x), perm=axes)


@keras_op("ExpandDims")
def expand_dims(x: Any, axis: Any) -> Any:
    x = convert(x)
    for a in sorted(axis if isinstance(axis, (list, tuple)) else [axis]):
        x = tf().expand_dims(x, a)
    return x


@keras_op("Squeeze")
def squeeze(x: Any, axis: Any = None) -> Any:
    x = convert(x)
    if isinstance(axis, int):
        axis = [axis]
    if axis is not None:
        for a in axis:
            if x.shape[a] is not None and x.shape[a] != 1:
                raise ValueError(f"Cannot squeeze axis {a}, because the dimension is not 1.")
    return tf().squeeze(x, axis=axis)


@keras_op("Ravel")
def ravel(x: Any) -> Any:
    return tf().reshape(convert(x), [-1])


@keras_op("Moveaxis")
def moveaxis(x: Any, source: Any, destination: Any) -> Any:
    x = convert(x)
    n = x.shape.rank
    src = [s % n for s in (source if isinstance(source, (list, tuple)) else [source])]
    dst = [d % n for d in (destination if isinstance(destination, (list, tuple)) else [destination])]
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return tf().transpose(x, order)


@keras_op("Swapaxes")
def swapaxes(x: Any, axis1: int, axis2: int) -> Any:
    x = convert(x)
    perm = list(range(x.shape.rank))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return tf().transpose(x, perm)


@keras_op("BroadcastTo")
def broadcast_to(x: Any, shape: Any) -> Any:
    return tf().broadcast_to(convert(x), shape)


@keras_op("Concatenate")
def concatenate(xs: Any, axis: int = 0) -> Any:
    dtype = result_type(*[dtype_of(x) for x in xs])
    return tf().concat([convert(x, dtype) for x in xs], axis=axis)


append = None  # defined below (needs concatenate)


@keras_op("Append", tensors=2)
def append(x1: Any, x2: Any, axis: Any = None) -> Any:  # noqa: F811
    a, b, _ = _promoted(x1, x2)
    if axis is None:
        return tf().concat([tf().reshape(a, [-1]), tf().reshape(b, [-1])], axis=0)
    return tf().concat([a, b], axis=axis)


@keras_op("Stack")
def stack(x: Any, axis: int = 0) -> Any:
    dtype = result_type(*[dtype_of(v) for v in x])
    return tf().stack([convert(v, dtype) for v in x], axis=axis)


@keras_op("Hstack")
def hstack(xs: Any) -> Any:
    dtype = result_type(*[dtype_of(x) for x in xs])
    xs = [convert(x, dtype) for x in xs]
    return tf().concat(xs, axis=0 if xs[0].shape.rank == 1 else 1)


@keras_op("Vstack")
def vstack(xs: Any) -> Any:
    dtype = result_type(*[dtype_of(x) for x in xs])
    xs = [convert(x, dtype) for x in xs]
    return tf().concat([tf().reshape(x, [1, -1]) if x.shape.rank == 1 else x for x in xs], axis=0)


@keras_op("Split")
def split(x: Any, indices_or_sections: Any, axis: int = 0) -> Any:
    x = convert(x)
    if isinstance(indices_or_sections, int):
        return tf().split(x, indices_or_sections, axis=axis)
    bounds = [0, *indices_or_sections, x.shape[axis]]
    return [tf().gather(x, tf().range(a, b), axis=axis) for a, b in zip(bounds[:-1], bounds[1:])]


@keras_op("Tile")
def tile(x: Any, repeats: Any) -> Any:
    x = convert(x)
    reps = [repeats] if isinstance(repeats, int) else list(repeats)
    if len(reps) < x.shape.rank:
        reps = [1] * (x.shape.rank - len(reps)) + reps
    elif len(reps) > x.shape.rank:
        x = tf().reshape(x, [1] * (len(reps) - x.shape.rank) + x.shape.as_list())
    return tf().tile(x, reps)


@keras_op("Repeat")
def repeat(x: Any, repeats: Any, axis: Any = None) -> Any:
    return tf().repeat(convert(x), repeats, axis=axis)


@keras_op("Flip")
def flip(x: Any, axis: Any = None) -> Any:
    x = convert(x)
    axes = list(range(x.shape.rank)) if axis is None else (list(axis) if isinstance(axis, (list, tuple)) else [axis])
    return tf().reverse(x, axes)


@keras_op("Roll")
def roll(x: Any, shift: Any, axis: Any = None) -> Any:
    x = convert(x)
    if axis is None:
        return tf().reshape(tf().roll(tf().reshape(x, [-1]), shift, 0), tf().shape(x))
    return tf().roll(x, shift, axis)


@keras_op("Pad", kw=("constant_values",))
def pad(x: Any, pad_width: Any, mode: str = "constant", constant_values: Any = None) -> Any:
    x = convert(x)
    width = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.shape.rank, 2)).tolist()
    if constant_values is not None and mode != "constant":
        raise ValueError(f"Argument `constant_values` can only be provided when `mode == 'constant'`. "
                         f"Received: mode={mode}")
    if mode == "constant":
        return tf().pad(x, width, constant_values=0 if constant_values is None else constant_values)
    return tf().pad(x, width, mode=mode.upper())


@keras_op("Take", tensors=2)
def take(x: Any, indices: Any, axis: Any = None) -> Any:
    x = convert(x)
    idx = convert(indices)
    if "float" in _std(idx.dtype):
        idx = tf().cast(idx, "int32")
    if axis is None:
        x, axis = tf().reshape(x, [-1]), 0
    n = x.shape[axis]
    if n is not None:
        idx = tf().where(idx < 0, idx + tf().cast(n, idx.dtype), idx)
    return tf().gather(x, idx, axis=axis)


@keras_op("TakeAlongAxis", tensors=2)
def take_along_axis(x: Any, indices: Any, axis: Any = None) -> Any:
    x, idx = convert(x), convert(indices)
    if axis is None:
        x, axis = tf().reshape(x, [-1]), 0
    out = np.take_along_axis(x.numpy(), np.asarray(idx.numpy()), axis=axis)
    return convert(out, x.dtype)


@keras_op("Diagonal")
def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    x = convert(x)
    return convert(np.diagonal(x.numpy(), offset, axis1, axis2).copy(), x.dtype)


@keras_op("Diag")
def diag(x: Any, k: int = 0) -> Any:
    x = convert(x)
    return convert(np.diag(x.numpy(), k), x.dtype)


@keras_op("Trace")
def trace(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    x = convert(x)
    d = _sum_dtype(_std(x.dtype))
    return convert(np.trace(x.numpy(), offset, axis1, axis2).astype(d), d)


def _tri_mask(x: Any, k: int, lower: bool) -> Any:
    rows, cols = x.shape[-2], x.shape[-1]
    mask = np.tri(rows, cols, k, dtype=bool) if lower else ~np.tri(rows, cols, k - 1, dtype=bool)
    return tf().where(convert(mask), x, tf().zeros_like(x))


@keras_op("Tril")
def tril(x: Any, k: int = 0) -> Any:
    return _tri_mask(convert(x), k, True)


@keras_op("Triu")
def triu(x: Any, k: int = 0) -> Any:
    return _tri_mask(convert(x), k, False)


@keras_op("Diff")
def diff(a: Any, n: int = 1, axis: int = -1) -> Any:
    x = convert(a)
    for _ in range(n):
        size = x.shape[axis]
        x = tf().gather(x, tf().range(1, size), axis=axis) - tf().gather(x, tf().range(0, size - 1), axis=axis)
    return x


@keras_op("Sort")
def sort(x: Any, axis: int = -1) -> Any:
    return tf().sort(convert(x), axis=axis)


@keras_op("Argsort")
def argsort(x: Any, axis: int = -1) -> Any:
    x = convert(x)
    if x.shape.rank == 0:
        return convert(0, "int32")
    return tf().argsort(x, axis=axis, stable=True)


@keras_op("Nonzero")
def nonzero(x: Any) -> Any:
    x = convert(x)
    idx = np.nonzero(x.numpy())
    return tuple(convert(i.astype(np.int32), "int32") for i in idx)


@keras_op("Meshgrid", tensors=("x",))
def meshgrid(*x: Any, indexing: str = "xy") -> Any:
    return tf().meshgrid(*[convert(v) for v in x], indexing=indexing)


@keras_op("Unique", tensors=1)
def unique(x: Any, sorted: bool = True, return_index: bool = False, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, axis: Any = None, size: int | None = None, fill_value: Any = None) -> Any:
    """``keras.ops.unique`` of the flattened ``x``: the distinct values (sorted unless ``sorted=False``:
    then in order of first appearance), with the first index of each, the inverse map (``x``'s shape)
    and the counts when asked; ``size`` truncates or pads (with ``fill_value``, else 0) to that length."""
    if axis is not None:
        raise NotImplementedError("keras.ops.unique with `axis` is not implemented in tapeflow")
    t = tf()
    x = convert(x)
    shape = t.shape(x)
    flat = t.reshape(x, [-1])
    y, inverse = t.unique(flat)
    n = t.shape(y)[0]
    ones = t.ones_like(inverse)
    counts = t.math.unsorted_segment_sum(ones, inverse, n)
    first = t.math.unsorted_segment_min(t.range(t.shape(flat)[0], dtype="int32"), inverse, n)
    if sorted:
        order = t.argsort(y)
        y, first, counts = t.gather(y, order), t.gather(first, order), t.gather(counts, order)
        inverse = t.gather(t.math.invert_permutation(order), inverse)
    if size is not None:
        keep = t.minimum(n, size)
        y, first, counts = (v[:keep] for v in (y, first, counts))
        pad = [[0, t.maximum(0, size - n)]]
        y = t.pad(y, pad, constant_values=t.cast(0 if fill_value is None else fill_value, y.dtype))
        first, counts = t.pad(first, pad, constant_values=1), t.pad(counts, pad)
    results = [y] + [first] * return_index + [t.reshape(inverse, shape)] * return_inverse + [counts] * return_counts
    return tuple(results) if len(results) > 1 else y


@keras_op("Size")
def size(x: Any) -> Any:
    return tf().size(convert(x), out_type="int32")


@keras_op("Ndim")
def ndim(x: Any) -> int:
    return convert(x).shape.rank


@keras_op("Copy")
def copy(x: Any) -> Any:
    return tf().identity(convert(x))


@keras_op("Real")
def real(x: Any) -> Any:
    x = convert(x)
    return tf().math.real(x) if "complex" in _std(x.dtype) else x


@keras_op("Imag")
def imag(x: Any) -> Any:
    x = convert(x)
    return tf().math.imag(x) if "complex" in _std(x.dtype) else tf().zeros_like(x)


@keras_op("Conjugate")
def conjugate(x: Any) -> Any:
    x = convert(x)
    return tf().math.conj(x) if "complex" in _std(x.dtype) else x


conj = conjugate


@keras_op("GetItem", tensors=2)
def get_item(x: Any, key: Any) -> Any:
    return convert(x)[key]


@keras_op("Vdot", tensors=2)
def vdot(x1: Any, x2: Any) -> Any:
    a, b, _ = _promoted(x1, x2)
    return tf().reduce_sum(tf().reshape(a, [-1]) * tf().reshape(b, [-1]))


@keras_op("Kron", tensors=2)
def kron(x1: Any, x2: Any) -> Any:
    a, b, dtype = _promoted(x1, x2)
    return convert(np.kron(a.numpy(), b.numpy()), dtype)


@keras_op("Correlate", tensors=2)
def correlate(x1: Any, x2: Any, mode: str = "valid") -> Any:
    a, b, dtype = _promoted(x1, x2)
    dtype = result_type(dtype, "float32") if "int" in dtype or dtype == "bool" else dtype
    return convert(np.correlate(a.numpy(), b.numpy(), mode=mode), dtype)


@keras_op("Digitize", tensors=2)
def digitize(x: Any, bins: Any) -> Any:
    return convert(np.digitize(convert(x).numpy(), np.asarray(bins)).astype(np.int32), "int32")


@keras_op("Bincount")
def bincount(x: Any, weights: Any = None, minlength: int = 0, sparse: bool = False) -> Any:
    x = convert(x)
    w = None if weights is None else convert(weights)
    dtype = "int32" if w is None else result_type(_std(w.dtype))
    out = np.bincount(x.numpy().reshape(-1), None if w is None else w.numpy().reshape(-1), minlength=minlength)
    return convert(out.astype(dtype), dtype)


@keras_op("SearchSorted", tensors=2)
def searchsorted(sorted_sequence: Any, values: Any, side: str = "left") -> Any:
    seq, vals = convert(sorted_sequence), convert(values)
    return convert(np.searchsorted(seq.numpy(), vals.numpy(), side=side).astype(np.int32), "int32")


@keras_op("Heaviside", tensors=2)
def heaviside(x1: Any, x2: Any) -> Any:
    a, b, dtype = _promoted(x1, x2)
    if dtype in ("bool", "int8", "int16", "uint8", "uint16", "int32", "uint32"):
        a, b = tf().cast(a, _backend.floatx()), tf().cast(b, _backend.floatx())
    elif dtype == "int64":
        a, b = tf().cast(a, "float64"), tf().cast(b, "float64")
    zero = tf().zeros_like(a)
    return tf().where(a < zero, zero, tf().where(a > zero, tf().ones_like(a), b))


@keras_op("Signbit")
def signbit(x: Any) -> Any:
    x = convert(x)
    if _std(x.dtype) == "bool":
        return tf().zeros_like(x, dtype="bool")
    return convert(np.signbit(x.numpy()))


@keras_op("Sinc")
def sinc(x: Any) -> Any:
    x = _floated(x)
    px = x * tf().cast(np.pi, x.dtype)
    safe = tf().where(x == 0, tf().ones_like(px), px)
    return tf().where(x == 0, tf().ones_like(x), _m().sin(safe) / safe)


# ---- bitwise (integers; Keras promotes both arguments first)


def _bitwise(name: str, cls: str, fn: Any) -> Any:
    def impl(x: Any, y: Any) -> Any:
        a, b, _ = _promoted(x, y)
        return fn(a, b)

    impl.__name__ = name
    impl.__doc__ = f"``keras.ops.{name}``: elementwise on integers, both arguments promoted by Keras's rules."
    return keras_op(cls, tensors=2)(impl)


bitwise_and = _bitwise("bitwise_and", "BitwiseAnd", lambda a, b: tf().bitwise.bitwise_and(a, b))
bitwise_or = _bitwise("bitwise_or", "BitwiseOr", lambda a, b: tf().bitwise.bitwise_or(a, b))
bitwise_xor = _bitwise("bitwise_xor", "BitwiseXor", lambda a, b: tf().bitwise.bitwise_xor(a, b))
bitwise_left_shift = _bitwise("bitwise_left_shift", "BitwiseLeftShift", lambda a, b: tf().bitwise.left_shift(a, b))
bitwise_right_shift = _bitwise("bitwise_right_shift", "BitwiseRightShift",
                               lambda a, b: tf().bitwise.right_shift(a, b))
left_shift = _bitwise("left_shift", "LeftShift", lambda a, b: tf().bitwise.left_shift(a, b))
right_shift = _bitwise("right_shift", "RightShift", lambda a, b: tf().bitwise.right_shift(a, b))


@keras_op("BitwiseInvert")
def bitwise_invert(x: Any) -> Any:
    """``keras.ops.bitwise_invert``: ``~x`` on integers."""
    return tf().bitwise.invert(convert(x))


@keras_op("BitwiseNot")
def bitwise_not(x: Any) -> Any:
    """``keras.ops.bitwise_not``: ``~x`` on integers (``bitwise_invert``)."""
    return tf().bitwise.invert(convert(x))


# ---- more shape functions


@keras_op("Fliplr")
def fliplr(x: Any) -> Any:
    """``keras.ops.fliplr``: reversed along axis 1."""
    x = convert(x)
    if x.shape.rank < 2:
        raise ValueError(f"Input must be >= 2-d. Received: input.shape={tuple(x.shape)}")
    return tf().reverse(x, [1])


@keras_op("Flipud")
def flipud(x: Any) -> Any:
    """``keras.ops.flipud``: reversed along axis 0."""
    x = convert(x)
    if x.shape.rank < 1:
        raise ValueError(f"Input must be >= 1-d. Received: input.shape={tuple(x.shape)}")
    return tf().reverse(x, [0])


@keras_op("Rot90")
def rot90(array: Any, k: int = 1, axes: tuple = (0, 1)) -> Any:
    """``keras.ops.rot90``: rotated by 90 degrees ``k`` times in the plane of ``axes``."""
    x = convert(array)
    if x.shape.rank < 2:
        raise ValueError(f"Input array must have at least 2 dimensions. Received: array.ndim={x.shape.rank}")
    if len(axes) != 2 or axes[0] == axes[1]:
        raise ValueError(f"Invalid axes: {axes}. Axes must be a tuple of two different dimensions.")
    a0, a1 = (a % x.shape.rank for a in axes)
    k %= 4
    perm = list(range(x.shape.rank))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return tf().transpose(tf().reverse(x, [a1]), perm)
    if k == 2:
        return tf().reverse(x, [a0, a1])
    if k == 3:
        return tf().reverse(tf().transpose(x, perm), [a1])
    return x


def _split_along(name: str, axis: int, min_rank: int) -> Any:
    def impl(x: Any, indices_or_sections: Any) -> Any:
        x = convert(x)
        if x.shape.rank < min_rank:
            raise ValueError(f"`{name}` only works on arrays of {min_rank} or more dimensions. "
                             f"Received: x.shape={tuple(x.shape)}")
        return split(x, indices_or_sections, axis=0 if name == "hsplit" and x.shape.rank == 1 else axis)

    impl.__name__ = name
    impl.__doc__ = f"``keras.ops.{name}``: ``split`` along axis {axis}."
    return keras_op(name[0].upper() + name[1:])(impl)


hsplit = _split_along("hsplit", 1, 1)
vsplit = _split_along("vsplit", 0, 2)
dsplit = _split_along("dsplit", 2, 3)


@keras_op("ArraySplit")
def array_split(x: Any, indices_or_sections: int, axis: int = 0) -> list:
    """``keras.ops.array_split``: ``indices_or_sections`` nearly equal parts (the first ones one longer)."""
    x = convert(x)
    if not isinstance(indices_or_sections, int) or indices_or_sections <= 0:
        raise ValueError("Argument `indices_or_sections` must be of type `int` and greater than 0. "
                         f"Received: indices_or_sections={indices_or_sections}")
    n = x.shape[axis]
    q, r = divmod(n, indices_or_sections)
    sizes = [q + 1] * r + [q] * (indices_or_sections - r)
    return tf().split(x, sizes, axis=axis)


@keras_op("Dstack")
def dstack(xs: Any) -> Any:
    """``keras.ops.dstack``: stacked along a third axis (1-D and 2-D inputs are raised to 3-D)."""
    dtype = result_type(*[dtype_of(x) for x in xs])
    xs = [convert(x, dtype) for x in xs]
    xs = [tf().reshape(x, [1, -1, 1]) if x.shape.rank == 1 else tf().expand_dims(x, -1) if x.shape.rank == 2 else x
          for x in xs]
    return tf().concat(xs, axis=2)


# ---- more predicates


@keras_op("IsIn", tensors=2)
def isin(x1: Any, x2: Any, assume_unique: bool = False, invert: bool = False) -> Any:
    """``keras.ops.isin``: whether each element of ``x1`` occurs in ``x2``."""
    t = tf()
    a, b, _ = _promoted(x1, x2)
    flat_a, flat_b = t.reshape(a, [-1]), t.reshape(b, [-1])
    if not assume_unique:
        flat_b = t.unique(flat_b)[0]
    if not int(t.size(flat_a)) or not int(t.size(flat_b)):
        return t.zeros(t.shape(a), dtype="bool")
    out = t.reduce_any(t.equal(t.expand_dims(flat_a, 1), t.expand_dims(flat_b, 0)), axis=1)
    return t.reshape(t.logical_not(out) if invert else out, t.shape(a))


def _inf_test(name: str, cls: str, sign: float) -> Any:
    def impl(x: Any) -> Any:
        x = convert(x)
        if "float" not in _std(x.dtype):
            return tf().zeros_like(x, dtype="bool")
        return _m().equal(x, tf().constant(sign * float("inf"), x.dtype))

    impl.__name__ = name
    impl.__doc__ = f"``keras.ops.{name}``: elementwise test for {'+' if sign > 0 else '-'}inf."
    return keras_op(cls)(impl)


isposinf = _inf_test("isposinf", "Isposinf", 1.0)
isneginf = _inf_test("isneginf", "Isneginf", -1.0)


@keras_op("Isreal")
def isreal(x: Any) -> Any:
    """``keras.ops.isreal``: True where the imaginary part is 0 (everywhere for real dtypes)."""
    x = convert(x)
    if x.dtype.is_complex:
        return _m().equal(_m().imag(x), tf().cast(0, _m().imag(x).dtype))
    return tf().ones_like(x, dtype="bool")


@keras_op("Select", tensors=3)
def select(condlist: list, choicelist: list, default: Any = 0) -> Any:
    """``keras.ops.select``: from the first ``choicelist`` entry whose condition holds, else ``default``."""
    if len(condlist) != len(choicelist):
        raise ValueError("condlist and choicelist must have the same length. Received: "
                         f"len(condlist)={len(condlist)}, len(choicelist)={len(choicelist)}")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible.")
    dtype = result_type(*[dtype_of(c) for c in choicelist], dtype_of(default))
    out = convert(default, dtype)
    for cond, choice in zip(reversed(condlist), reversed(choicelist)):
        out = tf().where(tf().cast(convert(cond), "bool"), convert(choice, dtype), out)
    return out


# ---- NaN-aware reductions, window functions and the other NumPy names of Keras 3.15 (kops11, issue 11),
# each computed as Keras's TensorFlow backend does it (so its dtypes and its edge cases come out alike)


def _where_nan(x: Any, value: float) -> Any:
    return tf().where(_m().is_nan(x), tf().cast(value, x.dtype), x)


@keras_op("Nansum")
def nansum(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``keras.ops.nansum``: the sum treating NaNs as zero (small integers sum in int32/uint32)."""
    x = convert(x)
    name = _std(x.dtype)
    if "float" in name:
        x = _where_nan(x, 0.0)
    return tf().reduce_sum(tf().cast(x, _sum_dtype(name)), axis=_axes(axis), keepdims=keepdims)


@keras_op("Nanprod")
def nanprod(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``keras.ops.nanprod``: the product treating NaNs as one."""
    x = convert(x)
    if "float" in _std(x.dtype):
        x = _where_nan(x, 1.0)
    return prod(x, axis=axis, keepdims=keepdims)


@keras_op("Nanmean")
def nanmean(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``keras.ops.nanmean``: the mean of the values that are not NaN (all NaN: NaN)."""
    x = convert(x)
    if axis == () or axis == []:
        return x
    if "float" not in _std(x.dtype):
        return tf().reduce_mean(tf().cast(x, "float32"), axis=_axes(axis), keepdims=keepdims)
    dtype = result_type(_std(x.dtype), float)
    total = tf().cast(nansum(x, axis=axis, keepdims=keepdims), dtype)
    count = tf().reduce_sum(tf().cast(_m().logical_not(_m().is_nan(x)), dtype), axis=_axes(axis), keepdims=keepdims)
    return total / count


@keras_op("Nanvar")
def nanvar(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``keras.ops.nanvar``: the (population) variance of the values that are not NaN."""
    x = convert(x)
    x = tf().cast(x, result_type(_std(x.dtype), float))
    valid = _m().logical_not(_m().is_nan(x))
    centered = tf().where(valid, x - nanmean(x, axis=axis, keepdims=True), tf().zeros_like(x))
    count = tf().reduce_sum(tf().cast(valid, x.dtype), axis=_axes(axis), keepdims=keepdims)
    return tf().reduce_sum(_m().square(centered), axis=_axes(axis), keepdims=keepdims) / count


@keras_op("Nanstd")
def nanstd(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``keras.ops.nanstd``: the standard deviation of the values that are not NaN."""
    return _m().sqrt(nanvar(x, axis=axis, keepdims=keepdims))


def _nan_extreme(x: Any, axis: Any, keepdims: bool, high: bool) -> Any:
    x = convert(x)
    name = _std(x.dtype)
    reduce = tf().reduce_max if high else tf().reduce_min
    if "float" not in name:
        if name == "bool":
            return (tf().reduce_any if high else tf().reduce_all)(x, axis=_axes(axis), keepdims=keepdims)
        return reduce(x, axis=_axes(axis), keepdims=keepdims)
    nan = _m().is_nan(x)
    clean = _where_nan(x, -np.inf if high else np.inf)
    return tf().where(tf().reduce_all(nan, axis=_axes(axis), keepdims=keepdims), tf().cast(np.nan, x.dtype),
                      reduce(clean, axis=_axes(axis), keepdims=keepdims))


@keras_op("Nanmax")
def nanmax(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``keras.ops.nanmax``: the maximum ignoring NaNs (all NaN: NaN)."""
    return _nan_extreme(x, axis, keepdims, True)


@keras_op("Nanmin")
def nanmin(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``keras.ops.nanmin``: the minimum ignoring NaNs (all NaN: NaN)."""
    return _nan_extreme(x, axis, keepdims, False)


def _nan_arg(x: Any, axis: Any, keepdims: bool, high: bool) -> Any:
    x = convert(x)
    pick = argmax if high else argmin
    if "float" not in _std(x.dtype):
        return pick(x, axis=axis, keepdims=keepdims)
    nan = _m().is_nan(x)
    all_nan = tf().reduce_all(nan, axis=axis, keepdims=keepdims)
    if keepdims and axis is None:
        all_nan = tf().reshape(all_nan, [1] * x.shape.rank)
    return tf().where(all_nan, tf().constant(-1, "int32"),
                      pick(_where_nan(x, -np.inf if high else np.inf), axis=axis, keepdims=keepdims))


@keras_op("Nanargmax")
def nanargmax(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``keras.ops.nanargmax``: the index of the maximum ignoring NaNs (all NaN: -1)."""
    return _nan_arg(x, axis, keepdims, True)


@keras_op("Nanargmin")
def nanargmin(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``keras.ops.nanargmin``: the index of the minimum ignoring NaNs (all NaN: -1)."""
    return _nan_arg(x, axis, keepdims, False)


@keras_op("Nancumsum")
def nancumsum(x: Any, axis: Any = None, dtype: Any = None) -> Any:
    """``keras.ops.nancumsum``: the running sum with NaNs as zero (as Keras: infinities become the
    dtype's largest values, through ``nan_to_num``)."""
    return cumsum(nan_to_num(x), axis=axis, dtype=dtype)


@keras_op("Nancumprod")
def nancumprod(x: Any, axis: Any = None, dtype: Any = None) -> Any:
    """``keras.ops.nancumprod``: the running product with NaNs as one."""
    return cumprod(nan_to_num(x, nan=1.0), axis=axis, dtype=dtype)


@keras_op("Nanquantile", tensors=2)
def nanquantile(x: Any, q: Any, axis: Any = None, method: str = "linear", keepdims: bool = False) -> Any:
    """``keras.ops.nanquantile``: ``quantile`` of the values that are not NaN (all NaN: NaN)."""
    import warnings

    from tapeflow.framework.errors import InvalidArgumentError

    x = convert(x)
    dtype = result_type(_std(x.dtype), float)
    q_np = np.asarray(q.numpy() if hasattr(q, "numpy") else q, dtype=np.float64)
    # Keras's TensorFlow backend maps its 1-D nanquantile over the kept axes, declaring x's dtype and
    # q's shape for each result: integer inputs and (q a vector) an all-NaN slice fail there
    if axis is not None and "float" not in _std(x.dtype):
        raise InvalidArgumentError(None, None, f"TensorArray dtype is {_std(x.dtype)} but Op is trying to write "
                                   f"dtype {dtype}")
    if axis is not None and q_np.ndim and np.isnan(x.numpy()).all(axis=axis).any():
        raise ValueError(f"Incompatible shape for value (()), expected ({q_np.shape})")
    with warnings.catch_warnings():  # an all-NaN slice is NaN, as in Keras, without NumPy's warning
        warnings.simplefilter("ignore", RuntimeWarning)
        out = np.nanquantile(x.numpy().astype(np.float64), q_np, axis=tuple(axis) if isinstance(axis, (list, tuple))
                             else axis, method=method, keepdims=keepdims)
    return convert(np.asarray(out), dtype)


@keras_op("Nanpercentile", tensors=2)
def nanpercentile(x: Any, q: Any, axis: Any = None, method: str = "linear", keepdims: bool = False) -> Any:
    """``keras.ops.nanpercentile``: ``nanquantile`` at ``q / 100``."""
    q = np.asarray(q.numpy() if hasattr(q, "numpy") else q, dtype=np.float32) / np.float32(100.0)
    return nanquantile(x, q, axis=axis, method=method, keepdims=keepdims)


@keras_op("Nanmedian")
def nanmedian(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``keras.ops.nanmedian``: the median of the values that are not NaN."""
    if axis == () or axis == []:
        return convert(x)
    return nanquantile(x, 0.5, axis=axis, keepdims=keepdims)


def _window_length(x: Any) -> int:
    n = convert(x).numpy()
    if n.ndim != 0:
        raise ValueError(f"A window length must be a scalar. Received: x with shape {n.shape}")
    return int(n)


def bartlett(x: Any) -> Any:
    """``keras.ops.bartlett``: the triangular window of ``x`` points, in ``floatx()``."""
    n = _window_length(x)
    if n == 0:
        return tf().constant([], "float32")
    if n == 1:
        return tf().ones([1])
    k = tf().range(n, dtype=_backend.floatx())
    half = (n - 1) / 2
    return tf().where(k <= half, 2.0 * k / (n - 1), 2.0 - 2.0 * k / (n - 1))


def _cosine_window(n: int, coeffs: tuple, dtype: str) -> Any:
    # sum_i (-1)^i a_i cos(2 pi i k / (n - 1)), k = 0..n-1 (a symmetric window); one point gives 1
    if n <= 1:
        return tf().ones([n], dtype)
    k = tf().range(n, dtype=dtype)
    out = tf().zeros([n], dtype) + coeffs[0]
    for i, a in enumerate(coeffs[1:], 1):
        out = out + ((-1) ** i * a) * _m().cos(k * tf().cast(2.0 * np.pi * i / (n - 1), dtype))
    return out


def hamming(x: Any) -> Any:
    """``keras.ops.hamming``: the symmetric Hamming window (TF's ``hamming_window``, float32)."""
    return _cosine_window(_window_length(x), (0.54, 0.46), "float32")


def hanning(x: Any) -> Any:
    """``keras.ops.hanning``: the symmetric Hann window (TF's ``hann_window``, float32)."""
    return _cosine_window(_window_length(x), (0.5, 0.5), "float32")


def blackman(x: Any) -> Any:
    """``keras.ops.blackman``: the Blackman window, in ``floatx()``."""
    return _cosine_window(_window_length(x), (0.42, 0.5, 0.08), _backend.floatx())


def kaiser(x: Any, beta: Any) -> Any:
    """``keras.ops.kaiser``: the Kaiser window (TF's ``kaiser_window``: ``i0(beta sqrt(1 - r^2)) / i0(beta)``,
    float32)."""
    n = _window_length(x)
    if n == 0:  # TF's kaiser_window ranges over [-(n-1)/2, (n-1)/2]
        from tapeflow.framework.errors import InvalidArgumentError

        raise InvalidArgumentError(None, None, "Requires start <= limit when delta > 0: 0.5/-0.4 [Op:Range]")
    if n == 1:
        return tf().ones([1], "float32")
    beta = tf().cast(convert(beta), "float32")
    r = 2.0 * tf().range(n, dtype="float32") / float(n - 1) - 1.0
    arg = beta * _m().sqrt(_m().maximum(1.0 - r * r, 0.0))
    return _bessel_i0e(arg) * _m().exp(arg - _m().abs(beta)) / _bessel_i0e(beta)


# Cephes's Chebyshev coefficients for exp(-|x|) I0(x) (as NumPy's and Eigen's i0): |x| <= 8, then 8 < |x|
_I0_A = (-4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16, 1.715391285555133e-15,
         -1.1685332877993451e-14, 7.676185498604936e-14, -4.856446783111929e-13, 2.95505266312964e-12,
         -1.726826291441556e-11, 9.675809035373237e-11, -5.189795601635263e-10, 2.6598237246823866e-09,
         -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07, 1.1173875391201037e-06,
         -4.4167383584587505e-06, 1.6448448070728896e-05, -5.754195010082104e-05, 0.00018850288509584165,
         -0.0005763755745385824, 0.0016394756169413357, -0.004324309995050576, 0.010546460394594998,
         -0.02373741480589947, 0.04930528423967071, -0.09490109704804764, 0.17162090152220877,
         -0.3046826723431984, 0.6767952744094761)
_I0_B = (-7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17, 3.461222867697461e-17,
         -2.8276239805165836e-16, -3.425485619677219e-16, 1.7725601330565263e-15, 3.8116806693526224e-15,
         -9.554846698828307e-15, -4.150569347287222e-14, 1.54008621752141e-14, 3.8527783827421426e-13,
         7.180124451383666e-13, -1.7941785315068062e-12, -1.3215811840447713e-11, -3.1499165279632416e-11,
         1.1889147107846439e-11, 4.94060238822497e-10, 3.3962320257083865e-09, 2.266668990498178e-08,
         2.0489185894690638e-07, 2.8913705208347567e-06, 6.889758346916825e-05, 0.0033691164782556943,
         0.8044904110141088)


def _chebyshev(x: Any, coeffs: tuple) -> Any:
    b0, b1, b2 = tf().zeros_like(x) + coeffs[0], tf().zeros_like(x), tf().zeros_like(x)
    for c in coeffs[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def _bessel_i0e(x: Any) -> Any:
    """exp(-|x|) I0(x), built from tapeflow ops (so it differentiates)."""
    a = _m().abs(x)
    small = _chebyshev(a / 2.0 - 2.0, _I0_A)
    safe = _m().maximum(a, 8.0)  # keeps the unused branch finite (and its gradient)
    large = _chebyshev(32.0 / safe - 2.0, _I0_B) / _m().sqrt(safe)
    return tf().where(a <= 8.0, small, large)


@keras_op("I0")
def i0(x: Any) -> Any:
    """``keras.ops.i0``: the modified Bessel function of the first kind, order 0 (int64/float64: float64,
    float16/bfloat16 kept, others ``floatx()``)."""
    x = convert(x)
    name = _std(x.dtype)
    dtype = "float64" if name in ("int64", "float64") else name if name in ("bfloat16", "float16") \
        else _backend.floatx()
    compute = "float64" if dtype == "float64" else "float32"
    x = tf().cast(x, compute)
    return tf().cast(_bessel_i0e(x) * _m().exp(_m().abs(x)), dtype)


@keras_op("Fmax", tensors=2)
def fmax(x1: Any, x2: Any) -> Any:
    """``keras.ops.fmax``: the elementwise maximum, a NaN losing to a number."""
    a, b, dtype = _promoted(x1, x2)
    out = _m().maximum(a, b)
    if "float" not in dtype:
        return out
    na, nb = _m().is_nan(a), _m().is_nan(b)
    out = tf().where(_m().logical_and(na, _m().logical_not(nb)), b, out)
    return tf().where(_m().logical_and(nb, _m().logical_not(na)), a, out)


@keras_op("Fmin", tensors=2)
def fmin(x1: Any, x2: Any) -> Any:
    """``keras.ops.fmin``: the elementwise minimum, a NaN losing to a number."""
    a, b, dtype = _promoted(x1, x2)
    out = _m().minimum(a, b)
    if "float" not in dtype:
        return out
    na, nb = _m().is_nan(a), _m().is_nan(b)
    out = tf().where(_m().logical_and(na, _m().logical_not(nb)), b, out)
    return tf().where(_m().logical_and(nb, _m().logical_not(na)), a, out)


@keras_op("Fmod", tensors=2)
def fmod(x1: Any, x2: Any) -> Any:
    """``keras.ops.fmod``: the remainder with the sign of the dividend (C's ``fmod``)."""
    dtype = result_type(dtype_of(x1), dtype_of(x2))
    dtype = "int32" if dtype == "bool" else dtype
    compute = "int32" if dtype in ("uint8", "uint16", "uint32") else dtype
    a, b = convert(x1, compute), convert(x2, compute)
    return tf().cast(_m().sign(a) * _m().floormod(_m().abs(a), _m().abs(b)), dtype)


def _integer_pair(x1: Any, x2: Any) -> tuple:
    a, b = convert(x1), convert(x2)
    dtype = result_type(_std(a.dtype), _std(b.dtype))
    return tf().cast(a, dtype), tf().cast(b, dtype), dtype


@keras_op("Gcd", tensors=2)
def gcd(x1: Any, x2: Any) -> Any:
    """``keras.ops.gcd``: the elementwise greatest common divisor of integers (Euclid's algorithm)."""
    a, b, dtype = _integer_pair(x1, x2)
    if not _is_int(dtype):
        raise TypeError("Arguments to gcd must be integers.")
    shape = np.broadcast_shapes(tuple(a.shape.as_list()), tuple(b.shape.as_list()))
    a, b = tf().broadcast_to(a, shape), tf().broadcast_to(b, shape)
    if not dtype.startswith("uint"):
        a, b = _m().abs(a), _m().abs(b)

    def body(a: Any, b: Any) -> tuple:
        nonzero = _m().not_equal(b, 0)
        rem = _m().floormod(a, tf().where(nonzero, b, tf().ones_like(b)))
        return tf().where(nonzero, b, a), tf().where(nonzero, rem, tf().zeros_like(b))

    out, _ = tf().while_loop(lambda a, b: tf().reduce_any(_m().not_equal(b, 0)), body, [a, b])
    return out


def _is_int(dtype: str) -> bool:
    return "int" in dtype


@keras_op("Lcm", tensors=2)
def lcm(x1: Any, x2: Any) -> Any:
    """``keras.ops.lcm``: the elementwise least common multiple of integers (0 where either is 0)."""
    a, b = convert(x1), convert(x2)
    if not (_is_int(_std(a.dtype)) and _is_int(_std(b.dtype))):
        raise TypeError(f"Arguments to lcm must be integers. Received: x1.dtype={_std(a.dtype)}, "
                        f"x2.dtype={_std(b.dtype)}")
    a, b, dtype = _integer_pair(a, b)
    if not dtype.startswith("uint"):
        a, b = _m().abs(a), _m().abs(b)
    divisor = gcd(a, b)
    zero = _m().equal(divisor, 0)
    out = a * _m().floordiv(b, tf().where(zero, tf().ones_like(divisor), divisor))
    return tf().where(zero, tf().zeros_like(out), out)


@keras_op("Ldexp", tensors=2)
def ldexp(x1: Any, x2: Any) -> Any:
    """``keras.ops.ldexp``: ``x1 * 2**x2`` for integer ``x2``."""
    a, b = convert(x1), convert(x2)
    dtype = result_type(_std(a.dtype), _std(b.dtype), float)
    if not _is_int(_std(b.dtype)):
        raise TypeError(f"ldexp exponent must be an integer type. Received: x2 dtype={b.dtype!r}")
    a = tf().cast(a, dtype)
    out = a * _m().pow(tf().cast(2.0, dtype), tf().cast(b, dtype))
    return tf().where(_m().logical_or(_m().is_inf(a), _m().equal(a, 0)), a, out)


@keras_op("Logaddexp2", tensors=2)
def logaddexp2(x1: Any, x2: Any) -> Any:
    """``keras.ops.logaddexp2``: ``log2(2**x1 + 2**x2)``, computed stably."""
    a, b = convert(x1), convert(x2)
    dtype = result_type(_std(a.dtype), _std(b.dtype), float)
    a, b = tf().cast(a, dtype), tf().cast(b, dtype)
    delta = a - b
    log2 = tf().cast(_math.log(2.0), dtype)
    return tf().where(_m().is_nan(delta), a + b,
                      _m().maximum(a, b) + _m().log1p(_m().exp(-_m().abs(delta) * log2)) / log2)


@keras_op("Nextafter", tensors=2)
def nextafter(x1: Any, x2: Any) -> Any:
    """``keras.ops.nextafter``: the next float64 after ``x1`` towards ``x2``, cast to the promoted dtype."""
    a, b = convert(x1), convert(x2)
    dtype = result_type(_std(a.dtype), _std(b.dtype), float)
    return tf().cast(_m().nextafter(tf().cast(a, "float64"), tf().cast(b, "float64")), dtype)


@keras_op("Geomspace", tensors=2)
def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None, axis: int = 0) -> Any:
    """``keras.ops.geomspace``: ``num`` numbers from ``start`` to ``stop`` spaced evenly on a log scale."""
    start, stop = convert(start), convert(stop)
    compute = _std(dtype) if dtype is not None else _backend.floatx()
    log_start = _m().log(tf().cast(_m().abs(start), compute))
    log_stop = _m().log(tf().cast(_m().abs(stop), compute))
    log_base = _m().log(tf().constant(10.0, log_start.dtype))
    out = logspace(log_start / log_base, log_stop / log_base, num=num, endpoint=endpoint, base=10, dtype=dtype,
                   axis=axis)
    return out * tf().cast(_m().sign(tf().cast(start, log_start.dtype)), out.dtype)


@keras_op("Diagflat")
def diagflat(x: Any, k: int = 0) -> Any:
    """``keras.ops.diagflat``: a matrix with the flattened ``x`` on its ``k``-th diagonal."""
    x = convert(x)
    return tf().linalg.diag(tf().reshape(x, [-1]), k=k)


@keras_op("Trapezoid")
def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Any:
    """``keras.ops.trapezoid``: the integral of ``y`` along ``axis`` by the trapezoidal rule."""
    y = convert(y)
    dtype = result_type(_std(y.dtype), float)
    y = tf().cast(y, dtype)
    if x is None:
        step = tf().cast(dx, dtype)
    else:
        step = moveaxis(diff(convert(x, dtype), axis=axis), axis, -1)
    y = moveaxis(y, axis, -1)
    return tf().reduce_sum(0.5 * (y[..., 1:] + y[..., :-1]) * step, axis=-1)


@keras_op("Vander")
def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:  # noqa: N803 - Keras's name
    """``keras.ops.vander``: the Vandermonde matrix of the 1-D ``x``, ``N`` columns."""
    x = convert(x)
    if x.shape.rank != 1:
        raise ValueError(f"`x` must be a 1-D tensor. Received: x.shape={tuple(x.shape.as_list())}")
    n = x.shape[0] if N is None else N
    powers = tf().range(n) if increasing else tf().range(n - 1, -1, -1)
    compute = result_type(_std(x.dtype), "float32")
    out = _m().pow(tf().cast(tf().expand_dims(x, -1), compute), tf().cast(powers, compute))
    return tf().cast(out, x.dtype)


@keras_op("Corrcoef")
def corrcoef(x: Any) -> Any:
    """``keras.ops.corrcoef``: the Pearson correlation matrix of the rows of ``x``, clipped to [-1, 1]."""
    x = convert(x)
    name = _std(x.dtype)
    if name in ("bool", "int8", "int16", "int32", "uint8", "uint16", "uint32"):
        x = tf().cast(x, _backend.floatx())
    elif name == "int64":
        x = tf().cast(x, "float64")
    if x.shape.rank == 0:
        return tf().constant(np.nan, _backend.floatx())
    centered = x - tf().reduce_mean(x, axis=-1, keepdims=True)
    n = tf().cast(tf().shape(x)[-1], x.dtype)
    cov = tf().matmul(centered, centered, transpose_b=True) / (n - 1)
    std = _m().sqrt(tf().linalg.diag_part(cov))
    return tf().clip_by_value(cov / (std[:, None] * std[None, :]), -1.0, 1.0)


@keras_op("Slogdet")
def slogdet(x: Any) -> Any:
    """``keras.ops.slogdet``: (sign, log |det|) of square matrices."""
    return tuple(tf().linalg.slogdet(convert(x)))


@keras_op("UnravelIndex")
def unravel_index(indices: Any, shape: Any) -> Any:
    """``keras.ops.unravel_index``: flat indices as a tuple of coordinate arrays in ``shape``."""
    indices = convert(indices)
    if None in tuple(shape):
        raise ValueError(f"`shape` argument cannot contain `None`. Received: shape={shape}")
    coords = []
    if indices.shape.rank == 1:
        for dim in reversed(tuple(shape)):
            coords.append(tf().cast(_m().floormod(indices, dim), indices.dtype))
            indices = _m().floordiv(indices, dim)
        return tuple(reversed(coords))
    # other ranks: as Keras's TensorFlow backend, which divides by the dimensions first to last here
    # (so its coordinates differ from NumPy's unless the shape reads the same both ways)
    for dim in tuple(shape):
        coords.append(tf().cast(_m().floormod(indices, dim), indices.dtype))
        indices = _m().floordiv(indices, dim)
    return tuple(reversed(coords))


@keras_op("Argpartition")
def argpartition(x: Any, kth: int, axis: int = -1) -> Any:
    """``keras.ops.argpartition``: indices that partition ``x`` around its ``kth`` smallest value, by the
    TensorFlow backend's algorithm: it computes on ``x`` cast to int32, and puts the ``kth + 1``
    smallest first (by ``top_k``), then the largest of the rest after zeroing those (so, as in Keras,
    negative inputs and several rows give indices that differ from NumPy's)."""
    x = convert(x, "int32")
    kth = int(kth)
    if axis is None:
        x, axis, flat = tf().reshape(x, [-1]), 0, True
    else:
        flat = False
    x = swapaxes(x, axis, -1)
    n = x.shape[-1]
    k = builtins.min(builtins.max(kth, 0), n - 1)
    bottom = tf().math.top_k(-x, k + 1).indices
    mask = tf().reduce_sum(tf().one_hot(bottom, n, dtype="int32"), axis=0)
    where = tf().where(mask)
    masked = tf().tensor_scatter_nd_update(x, where, tf().zeros([where.shape[0]], "int32"))
    out = tf().concat([bottom, tf().math.top_k(masked, n - k - 1).indices], axis=-1)
    return out if flat else swapaxes(out, -1, axis)


@keras_op("Histogram")
def histogram(x: Any, bins: int = 10, range: Any = None) -> tuple:  # noqa: A002 - Keras's name
    """``keras.ops.histogram``: (counts, bin edges) of the 1-D ``x``, both in ``x``'s dtype."""
    if not isinstance(bins, int):
        raise TypeError(f"Argument `bins` must be of type `int`. Received: bins={bins}")
    if bins < 0:
        raise ValueError(f"Argument `bins` should be a non-negative integer. Received: bins={bins}")
    if range:
        if len(range) < 2 or not isinstance(range, tuple):
            raise ValueError(f"Argument `range` must be a tuple of two elements. Received: range={range}")
        if range[1] < range[0]:
            raise ValueError(f"The second element of `range` must be greater than the first. Received: range={range}")
    x = convert(x)
    if x.shape.rank is not None and x.shape.rank > 1:
        raise ValueError("Input tensor must be 1-dimensional")
    low, high = (tf().reduce_min(x), tf().reduce_max(x)) if range is None else range
    x = tf().boolean_mask(x, _m().logical_and(x >= low, x <= high))
    edges = tf().cast(tf().linspace(low, high, bins + 1), x.dtype)
    index = searchsorted(edges[1:-1], x, side="right")
    counts = tf().scatter_nd(tf().expand_dims(index, -1), tf().ones_like(index, dtype=x.dtype), [bins])
    return counts, edges
@keras_op("Angle")
def angle(x: Any) -> Any:
    """``keras.ops.angle``: the argument of complex numbers (0 or pi for reals), as Keras's TF backend (sig11)."""
    x = convert(x)
    dtype = _backend.floatx() if _backend.standardize_dtype(x.dtype) == "int64" else result_type(x.dtype, float)
    return tf().math.angle(tf().cast(x, dtype))


def _einops_axes(pattern: str) -> tuple:
    import re

    source, target = re.split(r"\s*->\s*", pattern)
    return re.findall(r"\w+|\(.*?\)", source), re.findall(r"\w+|\(.*?\)", target)


def _einops_groups(axes: list) -> list:
    import re

    out = []
    for axis in axes:
        group = re.match(r"\(([\w\s]+)\)", axis)
        out.append(group.group(1).split() if group else [axis])
    return out


@keras_op("Rearrange", "einops", tensors=("tensor", "pattern"), kw=("axes_lengths",))
def rearrange(tensor: Any, pattern: str, **axes_lengths: Any) -> Any:
    """``keras.ops.rearrange`` (einops's): reorder, split and merge axes by a pattern such as
    ``"b (h h1) w c -> b h (w h1) c"``, ``h1=2``; as Keras's (reshape, transpose, reshape)."""
    x = convert(tensor)
    source, target = _einops_axes(pattern)
    sizes, lengths = {}, dict(axes_lengths)
    for axis, dim, group in zip(source, tuple(x.shape), _einops_groups(source)):
        if axis.startswith("("):
            inferred = [a for a in group if a not in lengths]
            if inferred:
                known = int(np.prod([lengths[a] for a in group if a in lengths]))
                lengths[inferred[0]] = dim // known
            sizes.update({a: lengths[a] for a in group})
        else:
            sizes[axis] = dim
    split = [sizes[a] for group in _einops_groups(source) for a in group]
    if split != list(x.shape):
        x = tf().reshape(x, split)
    flat_source = [a for group in _einops_groups(source) for a in group]
    groups = _einops_groups(target)
    x = tf().transpose(x, [flat_source.index(a) for group in groups for a in group])
    return tf().reshape(x, [int(np.prod([sizes[a] for a in group])) for group in groups])


@keras_op("View")
def view(x: Any, dtype: Any = None) -> Any:
    """``keras.ops.view``: the same bytes read as ``dtype`` (TF's ``bitcast``; a smaller item size grows
    the last axis, a larger one shrinks it). Not differentiable, as TF's ``Bitcast``."""
    x = convert(x)
    old = np.dtype(_std(x.dtype))
    new = np.dtype(_std(dtype if dtype else x.dtype))
    shape = list(x.shape)
    last = shape[-1] if shape else -1
    if old.itemsize != new.itemsize and (last == -1 or last * old.itemsize % new.itemsize != 0):
        raise ValueError(f"Cannot view array of shape {tuple(shape)} and dtype {x.dtype!r} as dtype "
                         f"{_backend_dtype(new)!r} because the total number of bytes is not divisible by the new "
                         "itemsize.")
    if shape:
        shape[-1] = last * old.itemsize // new.itemsize
    out = tf().numpy_function(lambda a: np.ascontiguousarray(a).view(new), [x], [new.name])[0]
    out.set_shape(shape)
    return out


def _backend_dtype(d: Any) -> Any:
    return tf().as_dtype(d.name)
