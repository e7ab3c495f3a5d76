"""Elementwise math, reductions, matmul and casts (``tf.math`` core).

Each op: ``defop`` (kernel + shape rule), ``defgrad`` (gradient rule written
with tapeflow ops), then the public function. Binary rules return gradients
of the broadcast shape; the engine unbroadcasts them.
"""

from __future__ import annotations

import operator
from sys import getrefcount
from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute, execute1, execute2
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.framework.variables import Variable
from tapeflow.ops import shapes
from tapeflow.ops._helpers import _like, axis_list, check_float, check_numeric, pair, scalar_int, t, traced_name
from tapeflow.ops.registry import NotDifferentiable, defgrad, defop, get_op

# ----------------------------------------------------------------------------
# Binary arithmetic
# ----------------------------------------------------------------------------

def _binary(op, x, y):
    """Converts (see ``pair``) and runs a binary elementwise op; two tensors
    of one dtype (the common case) take the fast path, and so do a float tensor with a Python number
    (``0.01 * g``: the number takes the tensor's dtype, as ``pair`` would) or a variable (``h + b``)."""
    tx, ty = type(x), type(y)
    if tx is Tensor:
        if ty is not Tensor:
            if ty is float or ty is int:
                if x._value.dtype.kind == "f":
                    return execute2(op, x, _like(y, x))
            elif isinstance(y, Variable):
                y = y.value()  # (read once: pair below takes the Tensor)
                ty = type(y)
        if ty is Tensor:
            xd, yd = x._value.dtype, y._value.dtype
            if (xd is yd or xd == yd) and xd.kind != "b":
                return execute2(op, x, y)
    elif (tx is float or tx is int) and ty is Tensor and y._value.dtype.kind == "f":
        return execute2(op, _like(x, y), y)
    x, y = pair(x, y, op.name)
    if x._value.dtype.kind == "b" and op.name not in _BOOL_OK:
        _reject_bool(op.name, x)
    return execute2(op, x, y)


_BOOL_OK = frozenset({"Equal", "NotEqual"})


def _reject_bool(name: str, x: Tensor) -> None:
    raise InvalidArgumentError(
        None, None, f"Value for attr 'T' of bool is not in the list of allowed values [Op:{name}]. "
        "Cast to a numeric dtype first (tf.cast(x, tf.int32)), or use tf.math.logical_* for bools.")


def _same_dtype_or_type_error(x: Tensor, y: Tensor, what: str) -> None:
    # TF checks these Python-level wrappers' dtypes before any kernel: TypeError.
    if x._value.dtype != y._value.dtype:
        raise TypeError(f"`x` and `y` must have the same dtype, got tf.{x.dtype.name} != tf.{y.dtype.name}.")
    if x._value.dtype.kind == "b":
        raise TypeError(f"Invalid dtype tf.bool in {what}. Expected a numeric dtype; cast with tf.cast first.")


ADD = defop("AddV2", operator.add, shape=shapes.broadcast)  # a + b: fast on NumPy scalars


@defgrad("AddV2", inputs=False)
def _add_grad(op, g):
    return g, g


def add_op(x: Any, y: Any) -> Tensor:
    """x + y with a Python operand taking the other's dtype (the ``+`` operators)."""
    r = _binary(ADD, x, y)  # object (string) tensors concatenate elementwise
    if type(r._value) is bytes:  # b"a" + b"b" on 0-d object arrays gives bare bytes
        r._value = np.asarray(r._value, dtype=object)
    return r


def _python_left(x: Any, y: Any) -> bool:
    return type(x) in (int, float, bool, list, tuple) and isinstance(y, (Tensor, Variable))


def add(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x + y elementwise, with broadcasting.

    As TF, ``x`` is converted first on its own (a Python float is float32) and
    ``y`` takes its dtype only as a hint: ``tf.add(3.0, float64_tensor)`` raises
    InvalidArgumentError (``3.0 + float64_tensor`` works).
    """
    return traced_name(name or "Add", _add, x, y)


def _add(x: Any, y: Any) -> Tensor:
    if _python_left(x, y):
        x = convert_to_tensor(x)
    return add_op(x, y)


SUB = defop("Sub", operator.sub, shape=shapes.broadcast)


@defgrad("Sub", inputs=False)
def _sub_grad(op, g):
    return g, negative(g)


def subtract(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary(SUB, x, y)


MUL = defop("Mul", operator.mul, shape=shapes.broadcast)


def _skip(op) -> tuple:
    """Input indices whose gradient is not needed (TF's ``skip_input_indices``)."""
    return getattr(op, "skip_input_indices", None) or ()


def _c(x: Tensor) -> Tensor:
    """``conj(x)`` for a complex ``x``, else ``x``: TF's gradient w.r.t. a complex input is
    dL/dre + i dL/dim, so a holomorphic op's rule multiplies by the conjugate of its derivative."""
    return execute1(CONJ, x) if x.dtype.is_complex else x


@defgrad("Mul", inputs=True)
def _mul_grad(op, g):
    x, y = op.inputs
    skip = _skip(op)
    return (None if 0 in skip else multiply(g, _c(y))), (None if 1 in skip else multiply(_c(x), g))


def multiply(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary(MUL, x, y)


def _realdiv_kernel(x, y):
    if x.dtype.kind in "iu":
        if np.any(y == 0):
            raise InvalidArgumentError(None, None, "Integer division by zero [Op:RealDiv]")
        return (x // y).astype(x.dtype)
    return np.true_divide(x, y)


REALDIV = defop("RealDiv", _realdiv_kernel, shape=shapes.broadcast)


@defgrad("RealDiv", inputs=True)
def _realdiv_grad(op, g):
    x, y = op.inputs
    x, y = _c(x), _c(y)
    skip = _skip(op)
    return (None if 0 in skip else divide_(g, y)), \
        (None if 1 in skip else multiply(g, divide_(divide_(negative(x), y), y)))


def realdiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``tf.realdiv``: floating division only (TF has no integer RealDiv kernel)."""
    x, y = pair(x, y, "RealDiv")
    if x._value.dtype.kind not in "fc":
        from tapeflow.framework.errors import NotFoundError

        raise NotFoundError(
            None, None, f"Could not find a kernel for RealDiv with T={x.dtype.name} [Op:RealDiv]. "
            "Use tf.math.truediv (casts integers to floats) or tf.math.floordiv.")
    return execute2(REALDIV, x, y)


def divide_(x: Any, y: Any, name: str | None = None) -> Tensor:
    """The RealDiv op: x / y in the inputs' dtype."""
    return _binary(REALDIV, x, y)



_TRUEDIV_INT = {np.dtype(np.int8): dtypes.float32, np.dtype(np.uint8): dtypes.float32,
                np.dtype(np.int16): dtypes.float32, np.dtype(np.uint16): dtypes.float32,
                np.dtype(np.int32): dtypes.float64, np.dtype(np.uint32): dtypes.float64,
                np.dtype(np.int64): dtypes.float64, np.dtype(np.uint64): dtypes.float64}


def truediv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x / y; integer inputs are first cast to float (int32 -> float64), as TF.

    ``x`` is converted on its own first: ``tf.math.truediv(3.0, float64_tensor)``
    raises TypeError (float32 != float64), as TF; ``3.0 / t`` and ``tf.divide``
    convert the Python operand to the tensor's dtype.
    """
    if _python_left(x, y):
        x = convert_to_tensor(x)
        y = convert_to_tensor(y)  # a Variable's value: the dtype check below is TF's TypeError
    return divide(x, y)


def divide(x: Any, y: Any, name: str | None = None) -> Tensor:
    """x / y; a Python ``x`` takes ``y``'s dtype; integers are cast to float as ``truediv``."""
    if isinstance(x, Tensor) and isinstance(y, Tensor):
        _same_dtype_or_type_error(x, y, "__truediv__")
    x, y = pair(x, y, "truediv")
    if x._value.dtype.kind == "b":
        _same_dtype_or_type_error(x, y, "__truediv__")
    target = _TRUEDIV_INT.get(x._value.dtype)
    if target is not None:
        x, y = cast(x, target), cast(y, target)
    return execute(REALDIV, (x, y))


def _floordiv_kernel(x, y):
    if x.dtype.kind in "iu" and np.any(y == 0):
        raise InvalidArgumentError(None, None, "Integer division by zero [Op:FloorDiv]")
    if x.dtype.kind == "f":  # TF: floor(x / y) (inf // 0.5 is inf, 0.5 // inf is 0)
        return np.floor(np.true_divide(x, y))
    return np.floor_divide(x, y)


FLOORDIV = defop("FloorDiv", _floordiv_kernel, shape=shapes.broadcast)
NotDifferentiable("FloorDiv")


def floordiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary(FLOORDIV, x, y)


floor_div = floordiv


def _floormod_kernel(x, y):
    if x.dtype.kind in "iu" and np.any(y == 0):
        raise InvalidArgumentError(None, None, "Integer division by zero [Op:FloorMod]")
    return np.mod(x, y)


FLOORMOD = defop("FloorMod", _floormod_kernel, shape=shapes.broadcast)


@defgrad("FloorMod", inputs=True)
def _floormod_grad(op, g):
    x, y = op.inputs
    return g, multiply(negative(g), floor(divide_(x, y)))


def floormod(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary(FLOORMOD, x, y)


mod = floormod


def _pow_kernel(x, y):
    if x.dtype.kind in "iu" and np.any(y < 0):
        raise InvalidArgumentError(None, None, "Integers to negative integer powers are not allowed [Op:Pow]")
    return np.power(x, y)


POW = defop("Pow", _pow_kernel, shape=shapes.broadcast)


@defgrad("Pow", inputs=True, outputs=True)
def _pow_grad(op, g):
    x, y = _c(op.inputs[0]), _c(op.inputs[1])
    z = _c(op.outputs[0])
    # TF's order of multiplication ((g * y) * x^(y-1)): it decides inf * 0 in the second order
    gx = multiply(multiply(g, y), pow(x, subtract(y, 1)))
    mask = not_equal(x, 0) if x.dtype.is_complex else greater(x, 0)  # (real(x) < 0 is fine for complex x)
    safe_log = where(mask, log(where(mask, x, ones_like_(x))), zeros_like_(x))
    gy = multiply(multiply(g, z), safe_log)
    return gx, gy


def _no_unsigned(name: str, x: Any) -> None:
    if isinstance(x, Tensor) and x._value.dtype.kind == "u":
        raise InvalidArgumentError(
            None, None, f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed values [Op:{name}]: "
            "TF has no unsigned kernel; cast to a signed or float dtype first.")


def pow(x: Any, y: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    _no_unsigned("Pow", x)
    return _binary(POW, x, y)


MAXIMUM = defop("Maximum", np.maximum, shape=shapes.broadcast)


@defgrad("Maximum", inputs=True)
def _maximum_grad(op, g):
    x, y = op.inputs
    xmask = greater_equal(x, y)  # ties go to x, as TF
    zeros = zeros_like_(g)
    return where(xmask, g, zeros), where(xmask, zeros, g)


def maximum(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary(MAXIMUM, x, y)


MINIMUM = defop("Minimum", np.minimum, shape=shapes.broadcast)


@defgrad("Minimum", inputs=True)
def _minimum_grad(op, g):
    x, y = op.inputs
    xmask = less_equal(x, y)
    zeros = zeros_like_(g)
    return where(xmask, g, zeros), where(xmask, zeros, g)


def minimum(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _binary(MINIMUM, x, y)


SQDIFF = defop("SquaredDifference", lambda x, y: np.square(x - y), shape=shapes.broadcast)


@defgrad("SquaredDifference", inputs=True)
def _sqdiff_grad(op, g):
    x, y = op.inputs
    gx = multiply(g, multiply(subtract(x, y), 2.0 if x.dtype.is_floating else 2))
    return gx, negative(gx)


def squared_difference(x: Any, y: Any, name: str | None = None) -> Tensor:
    _no_unsigned("SquaredDifference", x)
    return _binary(SQDIFF, x, y)


def _add_n_kernel(*xs):
    out = xs[0]
    for x in xs[1:]:
        out = out + x
    return out


ADDN = defop("AddN", _add_n_kernel, shape=shapes.broadcast)


@defgrad("AddN", inputs=False)
def _addn_grad(op, g):
    return [g] * len(op.input_ids)


def add_n(inputs: Any, name: str | None = None) -> Tensor:
    """Sums a list of tensors of the same shape and dtype."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a non-empty list of at least one Tensor with the same dtype and shape")
    ts = [t(x) for x in inputs]
    if len(ts) == 1:
        return ts[0]
    d = ts[0]._value.dtype
    for i, x in enumerate(ts):
        if x._value.dtype != d:
            raise InvalidArgumentError(
                None, None, f"AddN: input #{i} has dtype {x.dtype.name} but input #0 has {ts[0].dtype.name}; "
                "cast them to one dtype [Op:AddN]")
        if not _same_shape(x._shape_tuple(), ts[0]._shape_tuple()):
            raise InvalidArgumentError(
                None, None, f"Inputs to operation AddN must have the same size and shape. Input 0: "
                f"{list(ts[0]._shape_tuple())} != input {i}: {list(x._shape_tuple())} [Op:AddN]")
    return execute(ADDN, tuple(ts))


def _same_shape(a, b) -> bool:
    """Equal static shapes, an unknown dim (or rank) matching anything."""
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(p is None or q is None or p == q for p, q in zip(a, b))


# ----------------------------------------------------------------------------
# Unary elementwise
# ----------------------------------------------------------------------------

def _unary(op, x, name=None, float_only=True):
    if type(x) is not Tensor:
        x = t(x)
    if x._value.dtype.kind not in ("fc" if float_only else "fciu"):
        if float_only:
            check_float(x, op.name)
        else:
            check_numeric(x, op.name)
    return execute1(op, x)


NEG = defop("Neg", operator.neg, shape=shapes.same)


@defgrad("Neg", inputs=False)
def _neg_grad(op, g):
    return negative(g)


def negative(x: Any, name: str | None = None) -> Tensor:
    return _unary(NEG, x, float_only=False)


def _abs_kernel(x):
    return np.abs(x)


ABS = defop("Abs", _abs_kernel, shape=shapes.same)


@defgrad("Abs", inputs=True)
def _abs_grad(op, g):
    return multiply(g, sign(op.inputs[0]))


def abs(x: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    x = t(x)
    check_numeric(x, "Abs")
    if x._value.dtype.kind == "c":
        return complex_abs(x)
    return execute(ABS, (x,))


# ----------------------------------------------------------------------------
# Complex numbers (tf.complex, tf.math.real / imag / conj / angle, |z|)
# ----------------------------------------------------------------------------

_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}


def _complex_kernel(re, im, Tout):
    re, im = np.broadcast_arrays(re, im)
    out = np.empty(re.shape, Tout)
    out.real, out.imag = re, im  # (not re + 1j * im: inf * 1j would be nan + inf j)
    return out


def _complex_shape(specs, Tout):
    return [(shapes.broadcast_shape(specs[0][0], specs[1][0], "Complex"), Tout)]


COMPLEX = defop("Complex", _complex_kernel, shape=_complex_shape)


@defgrad("Complex", inputs=False)
def _complex_grad(op, g):
    return real(g), imag(g)


def complex(real: Any, imag: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """``tf.complex(real, imag)``: float32 parts give complex64, float64 parts complex128 (broadcasting)."""
    re, im = t(real), t(imag)
    rd, idt = re._value.dtype, im._value.dtype
    if rd != idt or rd not in _COMPLEX_OF:
        raise TypeError(f"The `real` and `imag` components have incorrect types: {re.dtype.name} {im.dtype.name}. "
                        "They must be consistent, and one of [tf.float32, tf.float64]")
    shapes.broadcast_shape(re._shape_tuple(), im._shape_tuple(), "Complex")
    return execute(COMPLEX, (re, im), {"Tout": _COMPLEX_OF[rd]})


def _part_shape(specs, **attrs):
    shape, dt = specs[0]
    return [(shape, np.dtype(dt).type(0).real.dtype)]


REAL = defop("Real", lambda x: np.real(x).copy(), shape=_part_shape)
IMAG = defop("Imag", lambda x: np.imag(x).copy(), shape=_part_shape)
CONJ = defop("Conj", np.conj, shape=shapes.same)
ANGLE = defop("Angle", np.angle, shape=_part_shape)
COMPLEX_ABS = defop("ComplexAbs", np.abs, shape=_part_shape)


@defgrad("Real", inputs=False)
def _real_grad(op, g):
    return complex(g, zeros_like_(g))


@defgrad("Imag", inputs=False)
def _imag_grad(op, g):
    return complex(zeros_like_(g), g)


@defgrad("Conj", inputs=False)
def _conj_grad(op, g):
    return conj(g)


@defgrad("Angle", inputs=True)
def _angle_grad(op, g):
    # d angle = (x dy - y dx) / |z|^2: as TF, -g / (im + i re)
    x = op.inputs[0]
    return negative(multiply(complex(g, zeros_like_(g)), reciprocal(complex(imag(x), real(x)))))


@defgrad("ComplexAbs", inputs=True, outputs=True)
def _complex_abs_grad(op, g):
    # g * z / |z|, and 0 at z == 0 (TF's div_no_nan)
    from tapeflow.ops.special_ops import divide_no_nan

    s = divide_no_nan(g, op.outputs[0])  # (real: TF's complex div_no_nan, with a rule that holds for reals)
    return multiply(complex(s, zeros_like_(s)), op.inputs[0])


def _numeric_or_type_error(x: Tensor, what: str) -> None:
    if x._value.dtype.kind not in "iufc":
        raise TypeError(f"{what}, but got tensor with dtype {x.dtype!r}")


def real(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """``tf.math.real``: the real part (float32 of complex64, float64 of complex128); a real input is
    returned as it is."""
    x = t(input)
    _numeric_or_type_error(x, "input must be a numeric tensor")
    return execute1(REAL, x) if x._value.dtype.kind == "c" else x


def imag(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """``tf.math.imag``: the imaginary part; zeros of a real input's dtype."""
    x = t(input)
    _numeric_or_type_error(x, "input must be a numeric tensor")
    return execute1(IMAG, x) if x._value.dtype.kind == "c" else zeros_like_(x)


def conj(x: Any, name: str | None = None) -> Tensor:
    """``tf.math.conj``: the complex conjugate; a real input is returned as it is."""
    x = t(x)
    if x._value.dtype.kind not in "iufc":
        raise TypeError(f"Expected numeric or variant tensor, got dtype {x.dtype!r}.")
    return execute1(CONJ, x) if x._value.dtype.kind == "c" else x


def angle(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """``tf.math.angle``: the argument of a complex number, in (-pi, pi]; of a real input, 0 where it is
    >= 0 and pi where it is negative (as TF)."""
    x = t(input)
    if x._value.dtype.kind == "c":
        return execute1(ANGLE, x)
    if x._value.dtype.kind != "f":
        raise TypeError(f"Cannot convert {np.pi!r} to EagerTensor of dtype {x.dtype.name}")
    return where(less(x, 0), multiply(ones_like_(x), np.pi), zeros_like_(x))


def complex_abs(x: Any) -> Tensor:
    """``|z|`` of a complex tensor (TF's ComplexAbs): float32 of complex64, float64 of complex128."""
    return execute1(COMPLEX_ABS, t(x))


SIGN = defop("Sign", np.sign, shape=shapes.same)


@defgrad("Sign", inputs=False)
def _sign_grad(op, g):
    return zeros_like_(g)


def sign(x: Any, name: str | None = None) -> Tensor:
    return _unary(SIGN, x, float_only=False)


RECIPROCAL = defop("Reciprocal", np.reciprocal, shape=shapes.same)


@defgrad("Reciprocal", inputs=False, outputs=True)
def _reciprocal_grad(op, g):
    y = _c(op.outputs[0])
    return multiply(negative(g), multiply(y, y))


def reciprocal(x: Any, name: str | None = None) -> Tensor:
    return _unary(RECIPROCAL, x)


SQUARE = defop("Square", np.square, shape=shapes.same)


@defgrad("Square", inputs=True)
def _square_grad(op, g):
    x = _c(op.inputs[0])
    return multiply(g, multiply(x, 2.0 if x.dtype.is_floating else 2))


def square(x: Any, name: str | None = None) -> Tensor:
    return _unary(SQUARE, x, float_only=False)


SQRT = defop("Sqrt", np.sqrt, shape=shapes.same)


@defgrad("Sqrt", inputs=False, outputs=True)
def _sqrt_grad(op, g):
    return sqrt_grad(op.outputs[0], g)


def sqrt(x: Any, name: str | None = None) -> Tensor:
    return _unary(SQRT, x)


def _sqrt_grad_kernel(y, dy):
    # TF's SqrtGrad: 0.5 * dy / y, and exactly 0 where dy is 0 (even at y == 0).
    if y.dtype.kind == "c":  # 0.5 * dy / conj(y), as TF's complex kernel
        y = np.conj(y)
    out = np.where(dy == 0, np.zeros_like(dy), 0.5 * dy / np.where(dy == 0, np.ones_like(y), y))
    return out.astype(y.dtype, copy=False)


SQRT_GRAD = defop("SqrtGrad", _sqrt_grad_kernel, shape=shapes.broadcast)


@defgrad("SqrtGrad", inputs=True, outputs=True)
def _sqrt_grad_grad(op, g):
    y, dy = op.inputs
    z = op.outputs[0]  # 0.5 * dy / conj(y)
    if y.dtype.is_complex:  # TF's rule: the output is antiholomorphic in y
        gy = divide_(g, y)
        return negative(multiply(_c(gy), z)), multiply(0.5, gy)
    gy = negative(multiply(g, divide_(z, y)))
    gdy = multiply(g, divide_(0.5, y))
    return gy, gdy


def sqrt_grad(y: Any, dy: Any) -> Tensor:
    y, dy = pair(y, dy, "SqrtGrad")
    return execute(SQRT_GRAD, (y, dy))


RSQRT = defop("Rsqrt", lambda x: 1 / np.sqrt(x), shape=shapes.same)


@defgrad("Rsqrt", inputs=False, outputs=True)
def _rsqrt_grad(op, g):
    y = _c(op.outputs[0])
    return multiply(multiply(g, -0.5), multiply(y, multiply(y, y)))


def rsqrt(x: Any, name: str | None = None) -> Tensor:
    return _unary(RSQRT, x)


EXP = defop("Exp", np.exp, shape=shapes.same)


@defgrad("Exp", inputs=False, outputs=True)
def _exp_grad(op, g):
    return multiply(g, _c(op.outputs[0]))


def exp(x: Any, name: str | None = None) -> Tensor:
    return _unary(EXP, x)


EXPM1 = defop("Expm1", np.expm1, shape=shapes.same)


@defgrad("Expm1", inputs=True)
def _expm1_grad(op, g):
    return multiply(g, exp(_c(op.inputs[0])))


def expm1(x: Any, name: str | None = None) -> Tensor:
    return _unary(EXPM1, x)


LOG = defop("Log", np.log, shape=shapes.same)


@defgrad("Log", inputs=True)
def _log_grad(op, g):
    return multiply(g, reciprocal(_c(op.inputs[0])))


def log(x: Any, name: str | None = None) -> Tensor:
    return _unary(LOG, x)


LOG1P = defop("Log1p", np.log1p, shape=shapes.same)


@defgrad("Log1p", inputs=True)
def _log1p_grad(op, g):
    return multiply(g, reciprocal(add(_c(op.inputs[0]), 1.0)))


def log1p(x: Any, name: str | None = None) -> Tensor:
    return _unary(LOG1P, x)


SIN = defop("Sin", np.sin, shape=shapes.same)


@defgrad("Sin", inputs=True)
def _sin_grad(op, g):
    return multiply(g, cos(_c(op.inputs[0])))


def sin(x: Any, name: str | None = None) -> Tensor:
    return _unary(SIN, x)


COS = defop("Cos", np.cos, shape=shapes.same)


@defgrad("Cos", inputs=True)
def _cos_grad(op, g):
    return negative(multiply(g, sin(_c(op.inputs[0]))))


def cos(x: Any, name: str | None = None) -> Tensor:
    return _unary(COS, x)


TAN = defop("Tan", np.tan, shape=shapes.same)


@defgrad("Tan", inputs=True)
def _tan_grad(op, g):
    secx = reciprocal(cos(_c(op.inputs[0])))
    return multiply(g, multiply(secx, secx))


def tan(x: Any, name: str | None = None) -> Tensor:
    return _unary(TAN, x)


_F32 = np.dtype(np.float32)
_TANH_NEAR_1 = 0.999999  # below NumPy's float32 tanh at 7.90738964 (0.99999976): only then can an |x| be past it


def _tanh_kernel(x):
    y = np.tanh(x)
    d = y.dtype
    if d is _F32 or d == _F32:
        # TF's float32 tanh (Eigen's rational approximation) is exactly +-1 for |x| > 7.90738964; NumPy's
        # stays at 1 - 2**-24 up to |x| ~ 9 (so a tanh output layer's max prints 1.0 in TF). The test on y
        # first: one comparison for a scalar, two reductions without temporaries for an array.
        if y.ndim == 0:
            if -_TANH_NEAR_1 < y < _TANH_NEAR_1:
                return y
        elif not y.size or (y.max() < _TANH_NEAR_1 and y.min() > -_TANH_NEAR_1):
            return y
        big = np.abs(x) > np.float32(7.90738964080810547)
        if big.any():
            y = np.where(big, np.sign(x).astype(np.float32), y)
    return y


TANH = defop("Tanh", _tanh_kernel, shape=shapes.same)


@defgrad("Tanh", inputs=False, outputs=True)
def _tanh_grad(op, g):
    y = _c(op.outputs[0])
    return multiply(g, subtract(1.0, multiply(y, y)))


def tanh(x: Any, name: str | None = None) -> Tensor:
    return _unary(TANH, x)


def _sigmoid_kernel(x):
    if x.dtype.kind == "c":
        return 1 / (1 + np.exp(-x))
    # Stable on both tails: exp of a non-positive number only.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


SIGMOID = defop("Sigmoid", _sigmoid_kernel, shape=shapes.same)


@defgrad("Sigmoid", inputs=False, outputs=True)
def _sigmoid_grad(op, g):
    y = _c(op.outputs[0])
    return multiply(g, multiply(y, subtract(1.0, y)))


def sigmoid(x: Any, name: str | None = None) -> Tensor:
    return _unary(SIGMOID, x)


def _softplus_kernel(x):
    return np.logaddexp(np.zeros((), x.dtype), x)


SOFTPLUS = defop("Softplus", _softplus_kernel, shape=shapes.same)


@defgrad("Softplus", inputs=True)
def _softplus_grad(op, g):
    return multiply(g, sigmoid(op.inputs[0]))


def softplus(features: Any, name: str | None = None) -> Tensor:
    return _unary(SOFTPLUS, features)


def _relu_kernel(x):
    return np.maximum(x, np.zeros((), x.dtype))


RELU = defop("Relu", _relu_kernel, shape=shapes.same)


@defgrad("Relu", inputs=False, outputs=True)
def _relu_grad(op, g):
    y = op.outputs[0]
    src = getattr(g, "_op", None)  # in a traced graph: the op that made g
    if src is not None and src.type == "MaxPoolGrad":
        from tapeflow.ops.nn.pooling import relu_through_max_pool_grad

        fused = relu_through_max_pool_grad(src, y)
        if fused is not None:
            return fused
    return relu_grad(g, y)


def _relu_grad_kernel(dy, y):
    return dy * (y > 0)  # one pass; bool * float keeps dy's dtype


RELU_GRAD = defop("ReluGrad", _relu_grad_kernel, shape=shapes.broadcast)


# In-place variants for compiled graphs (graph/compiler.py calls ``extra["inplace"]`` only where the
# first input is a temporary that dies at this op): hand-written NumPy's ``(g @ w.T) * (a > 0)``
# reuses the product's buffer by NumPy's temporary elision, and these do the same. Each writes into
# ``x`` only when nothing else can see it: an array owning its data (no view of another), referenced
# by the generated code's local, this parameter and getrefcount's argument alone (a view of ``x`` or
# any other holder adds a reference), of the result's shape and dtype; otherwise the plain kernel.
_INPLACE_REFS = 4  # (as _writable_temp sees them: those three and its own parameter)


def _writable_temp(x, y) -> bool:
    return type(x) is np.ndarray and type(y) is np.ndarray and x.base is None and x.shape == y.shape \
        and x.dtype.kind in "fc" and getrefcount(x) <= _INPLACE_REFS and x.flags.writeable


def _relu_grad_inplace(dy, y):
    if _writable_temp(dy, y):  # (the same multiply: bool * float keeps dy's dtype)
        return np.multiply(dy, y > 0, out=dy)
    return _relu_grad_kernel(dy, y)


def _binary_inplace(ufunc, kernel):
    def run(x, y):
        if _writable_temp(x, y) and x.dtype is y.dtype:
            return ufunc(x, y, out=x)
        return kernel(x, y)

    return run


RELU_GRAD.extra["inplace"] = _relu_grad_inplace
for _op, _ufunc in ((ADD, np.add), (SUB, np.subtract), (MUL, np.multiply)):
    _op.extra["inplace"] = _binary_inplace(_ufunc, _op.kernel)


@defgrad("ReluGrad", inputs=True)
def _relu_grad_grad(op, g):
    from tapeflow.ops import array_ops

    # Piecewise linear in y: a zero (not None) gradient w.r.t. y, as TF.
    return relu_grad(g, op.inputs[1]), array_ops.zeros_like(op.inputs[1])


def relu_grad(gradients: Any, features: Any) -> Tensor:
    """TF's ReluGrad: ``gradients`` where ``features > 0``, else 0."""
    gradients, features = pair(gradients, features, "ReluGrad")
    return execute2(RELU_GRAD, gradients, features)


def relu(features: Any, name: str | None = None) -> Tensor:
    return _unary(RELU, features, float_only=False)


# ----------------------------------------------------------------------------
# Non-differentiable elementwise: rounding, comparisons, logic
# ----------------------------------------------------------------------------

def _round_half_even(x):
    return np.round(x) if x.dtype.kind == "f" else x


for _name, _kernel in (("Round", _round_half_even), ("Floor", np.floor), ("Ceil", np.ceil)):
    defop(_name, _kernel, shape=shapes.same)
    NotDifferentiable(_name)

ROUND, FLOOR, CEIL = get_op("Round"), get_op("Floor"), get_op("Ceil")


def round(x: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """Rounds half to even (banker's rounding), as TF."""
    x = t(x)
    return execute(ROUND, (x,))


def floor(x: Any, name: str | None = None) -> Tensor:
    return _unary(FLOOR, x)


def ceil(x: Any, name: str | None = None) -> Tensor:
    return _unary(CEIL, x)


_COMPARISONS = {
    "Equal": np.equal, "NotEqual": np.not_equal, "Less": np.less, "LessEqual": np.less_equal,
    "Greater": np.greater, "GreaterEqual": np.greater_equal,
}
_CMP_OPS = {}
for _name, _kernel in _COMPARISONS.items():
    _CMP_OPS[_name] = defop(_name, _kernel, shape=shapes.broadcast_bool)
    NotDifferentiable(_name)


def _compare(name: str, x: Any, y: Any) -> Tensor:
    if name not in ("Equal", "NotEqual"):
        for v in (x, y):
            if isinstance(v, Tensor) and v._value.dtype.kind == "O":
                raise InvalidArgumentError(
                    None, None, f"Value for attr 'T' of string is not in the list of allowed values for {name} "
                    f"[Op:{name}]: strings can only be compared with == and !=.")
    return _binary(_CMP_OPS[name], x, y)


def equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _compare("Equal", x, y)


def not_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _compare("NotEqual", x, y)


def less(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _compare("Less", x, y)


def less_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _compare("LessEqual", x, y)


def greater(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _compare("Greater", x, y)


def greater_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    return _compare("GreaterEqual", x, y)


_LOGIC = {"LogicalAnd": np.logical_and, "LogicalOr": np.logical_or}
_LOGIC_OPS = {n: defop(n, k, shape=shapes.broadcast_bool) for n, k in _LOGIC.items()}
LOGICAL_NOT = defop("LogicalNot", np.logical_not, shape=shapes.same)
for _name in ("LogicalAnd", "LogicalOr", "LogicalNot"):
    NotDifferentiable(_name)


def _bool_inputs(name: str, *xs) -> tuple:
    out = tuple(convert_to_tensor(x, dtype_hint=dtypes.bool) for x in xs)
    for x in out:
        if x._value.dtype != np.bool_:
            raise InvalidArgumentError(
                None, None, f"{name} expects bool inputs, got {x.dtype.name} [Op:{name}]. "
                "Compare first (e.g. x > 0) or tf.cast(x, tf.bool).")
    return out


def logical_and(x: Any, y: Any, name: str | None = None) -> Tensor:
    return execute(_LOGIC_OPS["LogicalAnd"], _bool_inputs("LogicalAnd", x, y))


def logical_or(x: Any, y: Any, name: str | None = None) -> Tensor:
    return execute(_LOGIC_OPS["LogicalOr"], _bool_inputs("LogicalOr", x, y))


def logical_not(x: Any, name: str | None = None) -> Tensor:
    return execute(LOGICAL_NOT, _bool_inputs("LogicalNot", x))


def logical_xor(x: Any, y: Any, name: str | None = None) -> Tensor:
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)))


# Bitwise ops on integers (what ``&``, ``|``, ``^``, ``~`` mean on int tensors).
def _shift(kernel):
    # TF's shift kernels: a shift past the type's width (or negative) is defined, unlike C's: NumPy's is too
    def k(x, y):
        bits = x.dtype.itemsize * 8
        y = np.clip(y, 0, bits - 1)
        return kernel(x, y.astype(x.dtype))

    return k


_BITWISE = {"BitwiseAnd": np.bitwise_and, "BitwiseOr": np.bitwise_or, "BitwiseXor": np.bitwise_xor,
            "LeftShift": _shift(np.left_shift), "RightShift": _shift(np.right_shift)}
_BITWISE_OPS = {n: defop(n, k, shape=shapes.broadcast) for n, k in _BITWISE.items()}
INVERT = defop("Invert", np.invert, shape=shapes.same)
for _name in (*_BITWISE, "Invert"):
    NotDifferentiable(_name)


def _int_only(name: str, x: Tensor) -> None:
    if x._value.dtype.kind not in "iu":
        raise InvalidArgumentError(
            None, None, f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed values: int8, int16, "
            f"int32, int64, uint8, uint16, uint32, uint64 [Op:{name}]. Bitwise ops take integers; use "
            "tf.math.logical_* for bools.")


def _bitwise(name: str, x: Any, y: Any) -> Tensor:
    x, y = pair(x, y, name)
    _int_only(name, x)
    return execute2(_BITWISE_OPS[name], x, y)


def bitwise_and(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``tf.bitwise.bitwise_and``."""
    return _bitwise("BitwiseAnd", x, y)


def bitwise_or(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``tf.bitwise.bitwise_or``."""
    return _bitwise("BitwiseOr", x, y)


def bitwise_xor(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``tf.bitwise.bitwise_xor``."""
    return _bitwise("BitwiseXor", x, y)


def left_shift(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``tf.bitwise.left_shift``: ``x << y`` elementwise (a shift past the width gives 0)."""
    return _bitwise("LeftShift", x, y)


def right_shift(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``tf.bitwise.right_shift``: ``x >> y`` elementwise, arithmetic for signed integers."""
    return _bitwise("RightShift", x, y)


def invert(x: Any, name: str | None = None) -> Tensor:
    """``tf.bitwise.invert``."""
    x = convert_to_tensor(x)
    _int_only("Invert", x)
    return execute(INVERT, (x,))


def _bool_or_bitwise(logical, bitwise):
    def op(x: Any, y: Any) -> Tensor:
        # A tensor operand's dtype decides, as TF's operator overloads.
        if any(getattr(getattr(v, "dtype", None), "is_integer", False) for v in (x, y)):
            return bitwise(x, y)
        return logical(x, y)

    return op


operator_and = _bool_or_bitwise(logical_and, bitwise_and)


def operator_mul(x: Any, y: Any) -> Tensor:
    """``x * y``: on bool tensors TF's operator is logical_and."""
    if type(x) is Tensor and x._value.dtype.kind != "b":
        return _binary(MUL, x, y)
    if getattr(getattr(x, "dtype", None), "is_bool", False):
        return logical_and(x, y)
    return multiply(x, y)
operator_or = _bool_or_bitwise(logical_or, bitwise_or)
operator_xor = _bool_or_bitwise(logical_xor, bitwise_xor)


for _name, _kernel in (("IsNan", np.isnan), ("IsInf", np.isinf), ("IsFinite", np.isfinite)):
    defop(_name, _kernel, shape=lambda specs, **a: [(specs[0][0], np.dtype(bool))])
    NotDifferentiable(_name)


def is_nan(x: Any, name: str | None = None) -> Tensor:
    return _unary(get_op("IsNan"), x)


def is_inf(x: Any, name: str | None = None) -> Tensor:
    return _unary(get_op("IsInf"), x)


def is_finite(x: Any, name: str | None = None) -> Tensor:
    return _unary(get_op("IsFinite"), x)


# ----------------------------------------------------------------------------
# Cast, select, clip, identity
# ----------------------------------------------------------------------------

def _cast_kernel(x, DstT):
    if x.dtype == DstT:
        return x
    if DstT.kind in "iu" and x.dtype.kind == "f":
        # TF truncates toward zero; NaN/inf become the dtype's min, as on x86.
        with np.errstate(invalid="ignore"):
            return np.trunc(x).astype(DstT)
    if DstT.kind == "b":
        return x != 0
    if DstT.kind == "f" and x.dtype.kind == "c":
        return np.real(x).astype(DstT)
    return x.astype(DstT)


CAST = defop("Cast", _cast_kernel, shape=lambda specs, DstT: [(specs[0][0], DstT)])


@defgrad("Cast", inputs=False)
def _cast_grad(op, g):
    src = op.input_dtypes[0]
    if src.kind in "fc":
        return cast(g, dtypes.from_numpy(src))
    return None


def cast(x: Any, dtype: Any, name: str | None = None) -> Tensor:
    """Casts to ``dtype``; float->float is differentiable, casts to integers are not."""
    dtype = dtypes.as_dtype(dtype)
    from tapeflow.framework.indexed_slices import IndexedSlices

    if isinstance(x, IndexedSlices):
        return IndexedSlices(cast(x.values, dtype), x.indices, x.dense_shape)
    if not isinstance(x, Tensor):
        from tapeflow.framework.variables import Variable

        if isinstance(x, Variable):
            x = x.value()
        elif isinstance(x, (np.ndarray, np.generic)):
            x = convert_to_tensor(x)
        else:
            # TF converts first, as any tensor (a Python float is float32: tf.cast(0.1, tf.float64) is
            # 0.10000000149011612 there), then casts
            x = convert_to_tensor(x)
    if x._value.dtype == dtype._np:
        return x
    if x._value.dtype.kind == "O" or dtype is dtypes.string:
        from tapeflow.framework.errors import UnimplementedError

        tf_name = {"float32": "float", "float64": "double", "float16": "half"}  # TF's DataTypeString
        raise UnimplementedError(
            None, None, f"Cast {tf_name.get(x.dtype.name, x.dtype.name)} to {tf_name.get(dtype.name, dtype.name)} is "
            "not supported [Op:Cast]. Use tf.strings.to_number / tf.strings.as_string.")
    return execute(CAST, (x,), {"DstT": dtype._np})


def saturate_cast(value: Any, dtype: Any, name: str | None = None) -> Tensor:
    """Casts ``value`` to ``dtype``, clamping to the range both dtypes share
    (as TF: float16 inf -> 65504, float32 1e30 -> int32 2147483520)."""
    dtype = dtypes.as_dtype(dtype)
    value = t(value)
    src = value._value.dtype
    if src.kind not in "iuf" or dtype._np.kind not in "iuf":
        return cast(value, dtype)
    info_s = np.finfo(src) if src.kind == "f" else np.iinfo(src)
    info_d = np.finfo(dtype._np) if dtype._np.kind == "f" else np.iinfo(dtype._np)
    lo, hi = max(info_s.min, info_d.min), min(info_s.max, info_d.max)
    clamp = []
    for bound, toward in ((lo, np.inf), (hi, -np.inf)):
        b = np.asarray(bound).astype(src)
        if src.kind == "f" and dtype._np.kind in "iu" and float(b) != bound:
            b = np.nextafter(b, np.asarray(toward, src))  # rounded past the target's range: step back inside
        clamp.append(b)
    return cast(execute(CLIP, (value, constant_like(clamp[0], value), constant_like(clamp[1], value))), dtype)


def constant_like(a: np.ndarray, like: Tensor) -> Tensor:
    return convert_to_tensor(np.asarray(a, dtype=like._value.dtype))


def _select_kernel(c, x, y):
    return np.where(c, x, y)


def _select_shape(specs, **a):
    shape = shapes.broadcast_shape(shapes.broadcast_shape(specs[0][0], specs[1][0]), specs[2][0])
    return [(shape, specs[1][1])]


SELECT = defop("SelectV2", _select_kernel, shape=_select_shape)


@defgrad("SelectV2", inputs=True)
def _select_grad(op, g):
    c = op.inputs[0]
    zeros = zeros_like_(g)
    return None, where(c, g, zeros), where(c, zeros, g)


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """Picks from ``x`` where ``condition`` else ``y`` (broadcasting); with one
    argument, the coordinates of true elements (int64 [N, rank])."""
    c = convert_to_tensor(condition, dtype_hint=dtypes.bool)
    if x is None and y is None:
        from tapeflow.ops import array_ops

        return array_ops.where_indices(c)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    if c._value.dtype != np.bool_:
        raise InvalidArgumentError(
            None, None, f"SelectV2: condition must be bool, got {c.dtype.name} [Op:SelectV2]. "
            "Use a comparison (e.g. x > 0) or tf.cast(cond, tf.bool).")
    x, y = pair(x, y, "SelectV2")
    return execute(SELECT, (c, x, y))


where_v2 = where


def _clip_kernel(x, lo, hi):
    return np.minimum(np.maximum(x, lo), hi)


CLIP = defop("ClipByValue", _clip_kernel, shape=shapes.broadcast)


@defgrad("ClipByValue", inputs=True)
def _clip_grad(op, g):
    x, lo, hi = op.inputs
    zeros = zeros_like_(g)
    below = less(x, lo)
    above = greater(x, hi)
    gx = where(logical_or(below, above), zeros, g)
    return gx, where(below, g, zeros), where(above, g, zeros)


def clip_by_value(t_: Any, clip_value_min: Any, clip_value_max: Any, name: str | None = None) -> Tensor:
    """Clips to [min, max]; the gradient passes where min <= x <= max (bounds included)."""
    x = t(t_)
    lo = convert_to_tensor(clip_value_min, dtype_hint=x.dtype)
    hi = convert_to_tensor(clip_value_max, dtype_hint=x.dtype)
    for b in (lo, hi):
        if b._value.dtype != x._value.dtype:
            raise InvalidArgumentError(None, None, f"clip_by_value: the bounds ({b.dtype.name}) must have the "
                                       f"dtype of t ({x.dtype.name}) [Op:ClipByValue]")
    # As TF 2.21: maximum(minimum(t, max), min) (min wins when min > max; the
    # gradient follows Minimum's and Maximum's rules). The ClipByValue op is
    # what saturate_cast uses, as TF.
    return maximum(minimum(x, hi), lo)


# ----------------------------------------------------------------------------
# Reductions
# ----------------------------------------------------------------------------

def _norm_axes(x: Tensor, axis: Any, op_name: str):
    axes = axis_list(axis)
    shape = x._shape_tuple()
    if axes is None:
        return None
    if shape is None:  # unknown rank (e.g. a py_function's output): axes as given
        return tuple(sorted(set(axes)))
    ndim = len(shape)
    out = []
    for a in axes:
        if not -ndim <= a < max(ndim, 1):
            raise InvalidArgumentError(
                None, None, f"Invalid reduction dimension {a} for input with {ndim} dimensions "
                f"(shape {list(x._shape_tuple())}) [Op:{op_name}]. Use an axis in [{-ndim}, {ndim}).")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise InvalidArgumentError(
            None, None, f"Axes contains duplicate dimension: {axes} for input of shape {list(shape)} [Op:{op_name}]. "
            "List each axis once.")
    return tuple(sorted(out))


def _reduce_shape(specs, axis, keepdims):
    shape, dt = specs[0]
    if shape is None:
        return [(None, dt)]
    if axis is None:
        return [((1,) * len(shape) if keepdims else (), dt)]
    if keepdims:
        return [(tuple(1 if i in axis else d for i, d in enumerate(shape)), dt)]
    return [(tuple(d for i, d in enumerate(shape) if i not in axis), dt)]


# Reductions call the ufunc's reduce directly: np.sum & co. add ~1.3 us of
# Python dispatch per call, which small training steps feel.
def _sum_kernel(x, axis, keepdims):
    if type(axis) is tuple and x.size >= _GEMV_SUM_MIN and axis and axis[-1] == len(axis) - 1 < x.ndim - 1 \
            and x.dtype.char in "fd" and x.flags.c_contiguous:
        return _leading_sum(x, len(axis), keepdims)
    return np.add.reduce(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


_GEMV_SUM_MIN = 1 << 15
_ONES: dict = {}


def _leading_sum(x, k, keepdims):
    """A sum over the leading ``k`` axes of a large C-contiguous float array (the bias gradient of a
    conv layer: (N, H, W, C) -> C) as one BLAS product with a ones vector: 4-5x faster than
    np.add.reduce, which walks such an array row by row in runs of C, and more accurate (blocked
    partial sums instead of one running sum)."""
    from tapeflow.ops import threads

    rows = 1
    for d in x.shape[:k]:
        rows *= d
    ones = _ONES.get((rows, x.dtype.char))
    if ones is None:
        if len(_ONES) > 64:
            _ONES.clear()
        ones = _ONES[(rows, x.dtype.char)] = np.ones(rows, x.dtype)
    threads.before_blas(0.0)  # a memory-bound product: one BLAS thread
    out = ones @ x.reshape(rows, -1)
    return out.reshape(((1,) * k if keepdims else ()) + x.shape[k:])


SUM = defop("Sum", _sum_kernel, shape=_reduce_shape)


def _keepdims_shape(in_shape: tuple, axis) -> tuple:
    if axis is None:
        return (1,) * len(in_shape)
    return tuple(1 if i in axis else d for i, d in enumerate(in_shape))


def _broadcast_back(op, g):
    from tapeflow.ops import array_ops

    in_shape = op.input_shapes[0]
    if in_shape is None or None in in_shape:  # traced with unknown dims: the input's run-time shape
        return _broadcast_back_dynamic(op, g, in_shape)
    if not op.get_attr("keepdims"):
        g = array_ops.reshape(g, _keepdims_shape(in_shape, op.get_attr("axis")))
    return array_ops.broadcast_to(g, in_shape)


def _broadcast_back_dynamic(op, g, in_shape):
    from tapeflow.ops import shape_ops

    x = op.inputs[0]
    shape_ops._rank_of(x, f"{op.type} gradient")
    if not op.get_attr("keepdims"):
        g = shape_ops.reshape_keeping(g, _keepdims_shape(in_shape, op.get_attr("axis")))
    return shape_ops.dynamic_broadcast_to(g, shape_ops.shape_of(x), static=in_shape)


@defgrad("Sum", inputs=False)
def _sum_grad(op, g):
    return _broadcast_back(op, g)


def _reduce(op, input_tensor, axis, keepdims, name):
    if axis is None and type(input_tensor) is Tensor and input_tensor._value.dtype.kind in "fc":
        # (the common ``tf.reduce_mean(loss)``: a float tensor over all axes needs no checks)
        return execute(op, (input_tensor,), {"axis": None, "keepdims": bool(keepdims)})
    x = t(input_tensor)
    kind = x._value.dtype.kind
    if op.name in ("All", "Any"):
        if kind != "b":
            raise InvalidArgumentError(
                None, None, f"cannot compute {op.name} as input #0(zero-based) was expected to be a bool tensor but "
                f"is a {x.dtype.name} tensor [Op:{op.name}]. Compare first (e.g. x > 0) or tf.cast(x, tf.bool).")
    elif kind in "bOSU":
        raise InvalidArgumentError(
            None, None, f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed values for "
            f"{op.name}: a numeric dtype is required [Op:{op.name}]. Cast to a number first.")
    return execute(op, (x,), {"axis": _norm_axes(x, axis, op.name), "keepdims": bool(keepdims)})


def reduce_sum(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Tensor:
    """Sum over ``axis`` (an int, a list, or None for all axes)."""
    return _reduce(SUM, input_tensor, axis, keepdims, name)


def _mean_kernel(x, axis, keepdims):
    if x.dtype.kind in "iu":
        s = np.sum(x, axis=axis, keepdims=keepdims, dtype=np.int64)
        n = x.size // max(np.asarray(s).size, 1) if x.size else 1
        return (np.trunc(s / n) if n else s).astype(x.dtype)
    # np.add.reduce, then divide, as np.mean does, but called from here so a
    # NaN/inf warning stays under tapeflow's RuntimeWarning filter (np.mean
    # raises it from numpy's own module).
    s = np.add.reduce(x, axis=axis, dtype=x.dtype, keepdims=keepdims)
    q = s / np.intp(x.size // s.size if s.size else 1)  # np.mean's division: by an intp, then cast back
    return q.astype(x.dtype, copy=False) if isinstance(q, np.ndarray) else x.dtype.type(q)


MEAN = defop("Mean", _mean_kernel, shape=_reduce_shape)


@defgrad("Mean", inputs=False)
def _mean_grad(op, g):
    in_shape = op.input_shapes[0]
    axis = op.get_attr("axis")
    if in_shape is None or None in in_shape and any(
            in_shape[i] is None for i in (range(len(in_shape)) if axis is None else axis)):
        # Traced with unknown reduced dims: count them at run time.
        from tapeflow.ops import shape_ops

        sx = shape_ops.shape_of(op.inputs[0])
        axes = range(shape_ops._rank_of(op.inputs[0], "Mean gradient")) if axis is None else axis
        known = int(np.prod([in_shape[i] for i in axes if in_shape[i] is not None], dtype=np.int64))
        count = None
        for i in axes:  # an empty input has an empty gradient: no max(count, 1) needed
            if in_shape[i] is None:
                count = sx[i] if count is None else multiply(count, sx[i])
        count = cast(count, g.dtype)
        if known != 1:
            count = multiply(count, convert_to_tensor(known, dtype=g.dtype))
        return divide_(_broadcast_back(op, g), count)
    count = 1
    for i, d in enumerate(in_shape):
        if axis is None or i in axis:
            count *= d
    return divide_(_broadcast_back(op, g), max(count, 1))


def reduce_mean(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Tensor:
    return _reduce(MEAN, input_tensor, axis, keepdims, name)


def _max_kernel(x, axis, keepdims):
    if x.size == 0:
        return np.full(_reduce_shape([(x.shape, x.dtype)], axis, keepdims)[0][0], _lowest(x.dtype), x.dtype)
    return np.maximum.reduce(x, axis=axis, keepdims=keepdims)


def _min_kernel(x, axis, keepdims):
    if x.size == 0:
        highest = np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).max  # (INT32_MAX for int32, as TF)
        return np.full(_reduce_shape([(x.shape, x.dtype)], axis, keepdims)[0][0], highest, x.dtype)
    return np.minimum.reduce(x, axis=axis, keepdims=keepdims)


def _lowest(dt):
    return -np.inf if dt.kind == "f" else np.iinfo(dt).min


MAX = defop("Max", _max_kernel, shape=_reduce_shape)
MIN = defop("Min", _min_kernel, shape=_reduce_shape)


def _min_or_max_grad(op, g):
    from tapeflow.ops import array_ops

    x = op.inputs[0]
    y = op.outputs[0]
    in_shape = op.input_shapes[0]
    axis = op.get_attr("axis")
    if not op.get_attr("keepdims"):
        kd = _keepdims_shape(in_shape, axis)
        if None in kd:  # traced with unknown dims
            from tapeflow.ops import shape_ops

            y, g = shape_ops.reshape_keeping(y, kd), shape_ops.reshape_keeping(g, kd)
        else:
            y = array_ops.reshape(y, kd)
            g = array_ops.reshape(g, kd)
    indicators = cast(equal(y, x), g.dtype)
    num_selected = reduce_sum(indicators, axis=list(axis) if axis is not None else None, keepdims=True)
    return multiply(divide_(indicators, num_selected), g)


defgrad("Max", inputs=True, outputs=True)(_min_or_max_grad)
defgrad("Min", inputs=True, outputs=True)(_min_or_max_grad)


def reduce_max(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Tensor:
    """Max over ``axis``; the gradient is split evenly between tied maxima."""
    return _reduce(MAX, input_tensor, axis, keepdims, name)


def reduce_min(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Tensor:
    return _reduce(MIN, input_tensor, axis, keepdims, name)


def _prod_kernel(x, axis, keepdims):
    return np.multiply.reduce(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


PROD = defop("Prod", _prod_kernel, shape=_reduce_shape)


@defgrad("Prod", inputs=True)
def _prod_grad(op, g):
    # Product of all *other* elements via exclusive cumprods from both sides,
    # so zeros in the input are handled without dividing by them (as TF).
    from tapeflow.ops import array_ops

    x = _c(op.inputs[0])
    in_shape = op.input_shapes[0]
    nd = len(in_shape)
    axis = op.get_attr("axis")
    red = list(range(nd)) if axis is None else list(axis)
    kept = [i for i in range(nd) if i not in red]
    perm = kept + red
    xt = array_ops.transpose(x, perm)
    if None in in_shape:  # traced with unknown dims: flatten and restore at run time
        from tapeflow.ops import shape_ops

        st = shape_ops.shape_of(xt)
        kept_t = reduce_prod(st[:len(kept)]) if kept else 1
        red_t = reduce_prod(st[len(kept):]) if red else 1
        flat = shape_ops.dynamic_reshape(xt, [kept_t, red_t], static=(None, None))
        left = cumprod(flat, axis=1, exclusive=True)
        right = cumprod(flat, axis=1, exclusive=True, reverse=True)
        others = shape_ops.dynamic_reshape(multiply(left, right), st, static=tuple(in_shape[i] for i in perm))
        return multiply(array_ops.transpose(others, list(np.argsort(perm))), _broadcast_back(op, g))
    kept_n = int(np.prod([in_shape[i] for i in kept])) if kept else 1
    red_n = int(np.prod([in_shape[i] for i in red])) if red else 1
    flat = array_ops.reshape(xt, (kept_n, red_n))
    left = cumprod(flat, axis=1, exclusive=True)
    right = cumprod(flat, axis=1, exclusive=True, reverse=True)
    others = array_ops.reshape(multiply(left, right), [in_shape[i] for i in perm])
    inv = list(np.argsort(perm))
    others = array_ops.transpose(others, inv)
    return multiply(others, _broadcast_back(op, g))


def reduce_prod(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Tensor:
    return _reduce(PROD, input_tensor, axis, keepdims, name)


ALL = defop("All", lambda x, axis, keepdims: np.all(x, axis=axis, keepdims=keepdims), shape=_reduce_shape)
ANY = defop("Any", lambda x, axis, keepdims: np.any(x, axis=axis, keepdims=keepdims), shape=_reduce_shape)
NotDifferentiable("All")
NotDifferentiable("Any")


def reduce_all(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Tensor:
    return _reduce(ALL, convert_to_tensor(input_tensor, dtype_hint=dtypes.bool), axis, keepdims, name)


def reduce_any(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Tensor:
    return _reduce(ANY, convert_to_tensor(input_tensor, dtype_hint=dtypes.bool), axis, keepdims, name)


def reduce_logsumexp(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Tensor:
    """log(sum(exp(x))) computed stably (the max is subtracted first, as TF)."""
    from tapeflow.ops import array_ops

    x = t(input_tensor)
    check_float(x, "ReduceLogSumExp")
    raw_max = reduce_max(x, axis=axis, keepdims=True)
    my_max = array_ops.stop_gradient(where(is_finite(raw_max), raw_max, zeros_like_(raw_max)))
    result = log(reduce_sum(exp(subtract(x, my_max)), axis=axis, keepdims=keepdims))
    if not keepdims:
        my_max = array_ops.reshape(my_max, result._shape_tuple()) if None not in result._shape_tuple() \
            else reduce_max(my_max, axis=axis, keepdims=False)
    return add(result, my_max)


# ----------------------------------------------------------------------------
# Cumulative ops (needed by reduce_prod's gradient)
# ----------------------------------------------------------------------------

def _cum_kernel(fn, ident):
    def kernel(x, axis, exclusive, reverse):
        if reverse:
            x = np.flip(x, axis)
        out = fn(x, axis=axis, dtype=x.dtype)
        if exclusive and out.shape[axis]:  # (an empty axis stays empty)
            pad = np.full_like(np.take(out, [0], axis=axis), ident)
            out = np.concatenate([pad, np.take(out, np.arange(out.shape[axis] - 1), axis=axis)], axis=axis)
        if reverse:
            out = np.flip(out, axis)
        return np.ascontiguousarray(out)

    return kernel


CUMSUM = defop("Cumsum", _cum_kernel(np.cumsum, 0), shape=shapes.same)
CUMPROD = defop("Cumprod", _cum_kernel(np.cumprod, 1), shape=shapes.same)


@defgrad("Cumsum", inputs=False)
def _cumsum_grad(op, g):
    return cumsum(g, axis=op.get_attr("axis"), exclusive=op.get_attr("exclusive"),
                  reverse=not op.get_attr("reverse"))


@defgrad("Cumprod", inputs=True, outputs=True)
def _cumprod_grad(op, g):
    x = _c(op.inputs[0])  # (TF 2.21 forgets the conjugates: its complex gradient is wrong)
    prod = _c(op.outputs[0])
    out = cumsum(multiply(prod, g), axis=op.get_attr("axis"), exclusive=op.get_attr("exclusive"),
                 reverse=not op.get_attr("reverse"))
    from tapeflow.ops import special_ops

    return execute2(special_ops.DIV_NO_NAN, out, x)  # as TF: 0 where x == 0


def _cum(op, x, axis, exclusive, reverse):
    x = t(x)
    check_numeric(x, op.name)
    nd = len(x._shape_tuple())
    if nd == 0:
        raise InvalidArgumentError(None, None, f"{op.name}: input must be at least rank 1 [Op:{op.name}]")
    a = int(axis.numpy() if isinstance(axis, Tensor) else axis)
    if not -nd <= a < nd:
        raise InvalidArgumentError(None, None, f"{op.name}: axis {a} is out of range for an input of rank {nd} "
                                   f"[Op:{op.name}]")
    return execute(op, (x,), {"axis": a % nd, "exclusive": bool(exclusive), "reverse": bool(reverse)})


def cumsum(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None) -> Tensor:
    return _cum(CUMSUM, x, axis, exclusive, reverse)


def cumprod(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None) -> Tensor:
    return _cum(CUMPROD, x, axis, exclusive, reverse)


# ----------------------------------------------------------------------------
# Matrix multiplication
# ----------------------------------------------------------------------------

def _matmul_kernel(a, b, transpose_a, transpose_b):
    if transpose_a:
        a = a.swapaxes(-1, -2)  # (the method: np.swapaxes's wrapper costs a microsecond)
    if transpose_b:
        b = b.swapaxes(-1, -2)
    return np.matmul(a, b)


def _matmul_shape(specs, transpose_a, transpose_b):
    (sa, dt), (sb, _) = specs
    if sa is None or sb is None:
        return [(None, dt)]
    m = sa[-1] if transpose_a else sa[-2]
    n = sb[-2] if transpose_b else sb[-1]
    batch = shapes.broadcast_shape(sa[:-2], sb[:-2], "BatchMatMulV2")
    return [(tuple(batch) + (m, n), dt)]


MATMUL = defop("BatchMatMulV2", _matmul_kernel, shape=_matmul_shape)


@defgrad("BatchMatMulV2", inputs=True)
def _matmul_grad(op, g):
    a, b = op.inputs
    a, b = _c(a), _c(b)  # complex: the adjoints
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    skip = _skip(op)
    if not ta and not tb:
        ga = lambda: matmul(g, b, transpose_b=True)  # noqa: E731
        gb = lambda: matmul(a, g, transpose_a=True)  # noqa: E731
    elif ta and not tb:
        ga = lambda: matmul(b, g, transpose_b=True)  # noqa: E731
        gb = lambda: matmul(a, g)  # noqa: E731
    elif not ta and tb:
        ga = lambda: matmul(g, b)  # noqa: E731
        gb = lambda: matmul(g, a, transpose_a=True)  # noqa: E731
    else:
        ga = lambda: matmul(b, g, transpose_a=True, transpose_b=True)  # noqa: E731
        gb = lambda: matmul(g, a, transpose_a=True, transpose_b=True)  # noqa: E731
    # Skipping an unneeded input's product saves a whole matmul (the first layer's dx).
    return (None if 0 in skip else ga()), (None if 1 in skip else gb())


def matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False, adjoint_a: bool = False,
           adjoint_b: bool = False, a_is_sparse: bool = False, b_is_sparse: bool = False,
           output_type: Any = None, grad_a: bool = False, grad_b: bool = False, name: str | None = None) -> Tensor:
    """Matrix product of the last two axes, batching (and broadcasting) the rest."""
    return traced_name(name or "MatMul", _matmul, a, b, transpose_a, transpose_b, adjoint_a, adjoint_b)


def _matmul(a: Any, b: Any, transpose_a: bool, transpose_b: bool, adjoint_a: bool, adjoint_b: bool) -> Tensor:
    if type(a) is Tensor and not (transpose_a or adjoint_a or transpose_b or adjoint_b):
        # The common ``tf.matmul(h, w)`` of two real float matrices (w a variable or a tensor) whose inner
        # dimensions agree: straight to the op, without the general checks below.
        if type(b) is not Tensor and isinstance(b, Variable):
            b = b.value()  # (read once: pair below takes the Tensor)
        if type(b) is Tensor:
            av, bv = a._value, b._value
            if type(av) is np.ndarray and type(bv) is np.ndarray and av.ndim == 2 and bv.ndim == 2 \
                    and av.dtype is bv.dtype and av.dtype.kind == "f" and av.shape[1] == bv.shape[0]:
                return execute(MATMUL, (a, b), {"transpose_a": False, "transpose_b": False})
    a, b = pair(a, b, "MatMul")
    if adjoint_a and a.dtype.is_complex:
        a = conj(a)
    if adjoint_b and b.dtype.is_complex:
        b = conj(b)
    transpose_a = transpose_a or adjoint_a
    transpose_b = transpose_b or adjoint_b
    sa, sb = a._shape_tuple(), b._shape_tuple()
    if len(sa) < 2 or len(sb) < 2:
        raise InvalidArgumentError(
            None, None, f"Matrix size-incompatible: In[0]: {list(sa)}, In[1]: {list(sb)} [Op:MatMul]. "
            "tf.matmul needs inputs of rank >= 2; use tf.linalg.matvec or tf.tensordot for vectors.")
    ka = sa[-2] if transpose_a else sa[-1]
    kb = sb[-1] if transpose_b else sb[-2]
    if ka is not None and kb is not None and ka != kb:
        raise InvalidArgumentError(
            None, None, f"Matrix size-incompatible: In[0]: {list(sa)}, In[1]: {list(sb)} "
            f"(transpose_a={transpose_a}, transpose_b={transpose_b}): the contracted dimensions {ka} and {kb} "
            "must match [Op:MatMul]")
    if a._value.dtype.kind == "b":
        raise InvalidArgumentError(None, None, "MatMul does not support bool inputs [Op:MatMul]")
    return execute(MATMUL, (a, b), {"transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b)})


# ----------------------------------------------------------------------------
# Segment sums (the dense form of sparse gradients)
# ----------------------------------------------------------------------------

def _segment_sum_kernel(data, segment_ids, num_segments):
    ids = np.asarray(segment_ids)
    if ids.size and (ids.max() >= num_segments):
        raise InvalidArgumentError(
            None, None, f"segment_ids[{int(np.argmax(ids))}] = {int(ids.max())} is out of range [0, {num_segments})"
            " [Op:UnsortedSegmentSum]")
    out = np.zeros((num_segments,) + data.shape[ids.ndim:], dtype=data.dtype)
    valid = ids >= 0  # negative ids are dropped, as TF
    if valid.all():
        np.add.at(out, ids, data)
    else:
        np.add.at(out, ids[valid], data[valid])
    return out


def _segment_sum_shape(specs, num_segments):
    (sd, dt), (si, _) = specs
    if sd is None or si is None:
        return [(None, dt)]
    return [((num_segments,) + tuple(sd[len(si):]), dt)]


SEGSUM = defop("UnsortedSegmentSum", _segment_sum_kernel, shape=_segment_sum_shape)


@defgrad("UnsortedSegmentSum", inputs=True)
def _segment_sum_grad(op, g):
    from tapeflow.ops import array_ops

    ids = op.inputs[1]
    # Dropped (negative) ids get zero gradient: gather from a zero-padded row.
    padded = array_ops.concat([g, zeros_like_(array_ops.gather(g, [0]))], axis=0)
    safe = where(less(ids, 0), add(zeros_like_(ids), op.get_attr("num_segments")), ids)
    return array_ops.gather(padded, safe), None


def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    data = t(data)
    ids = t(segment_ids)
    if ids._value.dtype.kind not in "iu":
        raise TypeError(f"segment_ids must be an integer tensor, got {ids.dtype.name}")
    n = scalar_int(num_segments, "num_segments", "UnsortedSegmentSum")
    sd, si = data._shape_tuple(), ids._shape_tuple()
    if len(sd) < len(si) or any(a != b and a is not None and b is not None for a, b in zip(sd, si)):
        raise InvalidArgumentError(
            None, None, f"data.shape = {list(sd)} does not start with segment_ids.shape = {list(si)} "
            "[Op:UnsortedSegmentSum]")
    return execute(SEGSUM, (data, ids), {"num_segments": n})


# ----------------------------------------------------------------------------
# Small helpers used by gradient rules (unrecorded-free constants)
# ----------------------------------------------------------------------------

def zeros_like_(x: Tensor) -> Tensor:
    from tapeflow.ops import array_ops

    return array_ops.zeros_like(x)


def ones_like_(x: Tensor) -> Tensor:
    from tapeflow.ops import array_ops

    return array_ops.ones_like(x)


def scalar_mul(scalar: Any, x: Any, name: str | None = None) -> Tensor:
    """``scalar * x`` for a 0-D ``scalar``, as ``tf.math.scalar_mul``."""
    if np.ndim(scalar.numpy() if isinstance(scalar, Tensor) else scalar) != 0:
        raise ValueError(f"The input scalar must be a 0-D value, got shape {np.shape(scalar)}.")
    return multiply(scalar, x)
