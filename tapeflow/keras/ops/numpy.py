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
