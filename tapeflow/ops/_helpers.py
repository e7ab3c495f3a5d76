"""Input conversion and checks shared by the op modules (the hot path)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.context import state
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.framework.variables import Variable


def traced_name(scope: str, fn: Any, *args: Any) -> Any:
    """``fn(*args)``; while tracing, under the name scope TF's Python wrapper opens, so the op making the
    result is named ``scope`` (``tf.add`` -> ``Add``, ``tf.matmul`` -> ``MatMul``), as in TF's graph."""
    graph = state._graph
    if state.plain or graph is None or not hasattr(graph, "op_scope"):
        return fn(*args)
    return graph.op_scope(scope, fn, *args)


def t(x: Any) -> Tensor:
    """Converts an op input to a Tensor (free for Tensors)."""
    if isinstance(x, Tensor):
        return x
    return convert_to_tensor(x)


# Python scalars (1.0 in ``1.0 - y * y``) converted to tensors, by value, type
# and dtype: gradient rules use a few constants over and over, and tensors are
# immutable, so one tensor per constant serves every op.
_SCALARS: dict = {}
_SCALAR_TYPES = (float, int, bool)


def _like(v: Any, t: Tensor) -> Tensor:
    if type(v) in _SCALAR_TYPES and v == v:  # (NaN never equals itself as a key)
        dtype = t._value.dtype
        key = (type(v), v, dtype)
        c = _SCALARS.get(key)
        if c is None:
            c = convert_to_tensor(v, dtype_hint=t.dtype)
            if len(_SCALARS) < 4096:
                _SCALARS[key] = c
        return c
    return convert_to_tensor(v, dtype_hint=t.dtype)


def pair(x: Any, y: Any, op_name: str) -> tuple[Tensor, Tensor]:
    """Converts the inputs of a binary op: a non-tensor takes the other's
    dtype (``x + 1.0``); two tensors must already agree (no promotion)."""
    py = None  # a Python operand converted to the other's dtype
    py_left = False
    if not isinstance(x, Tensor) and isinstance(x, Variable):
        x = x.value()
    if not isinstance(y, Tensor) and isinstance(y, Variable):
        y = y.value()
    if isinstance(x, Tensor):
        if not isinstance(y, Tensor):
            py, want, y = y, x.dtype, _like(y, x)
    elif isinstance(y, Tensor):
        py, want, x = x, y.dtype, _like(x, y)
        py_left = True
    else:
        x = convert_to_tensor(x)
        y = convert_to_tensor(y, dtype_hint=x.dtype)
    if x._value.dtype != y._value.dtype:
        if type(py) in (int, float, complex, list, tuple) and (op_name not in _MISMATCH_IS_OP_ERROR or py_left):
            # As TF: `int_tensor * 0.5` fails converting 0.5 to the tensor's dtype.
            raise TypeError(f"Cannot convert {py!r} to EagerTensor of dtype {want.name}")
        raise dtype_mismatch(op_name, x, y)
    return x, y


# Ops whose wrong-dtype Python operand on the right TF reports from the kernel
# (InvalidArgumentError), not from the conversion (TypeError); on the left
# (``0.5 + int_tensor``) it is the conversion's TypeError, as for other ops.
_MISMATCH_IS_OP_ERROR = frozenset({"AddV2", "MatMul"})


def dtype_mismatch(op_name: str, x: Tensor, y: Tensor) -> InvalidArgumentError:
    want, got = dtypes.type_string(x.dtype), dtypes.type_string(y.dtype)
    return InvalidArgumentError(
        None, None,
        f"cannot compute {op_name} as input #1(zero-based) was expected to be a {want} tensor but is a {got} "
        f"tensor [Op:{op_name}]. tapeflow, like TensorFlow, never converts dtypes implicitly: use "
        f"tf.cast(y, tf.{x.dtype.name}) (or cast x to tf.{y.dtype.name}) so both match.",
    )


_FLOAT_KINDS = "fc"


def check_float(x: Tensor, op_name: str) -> None:
    if x._value.dtype.kind not in _FLOAT_KINDS:
        raise InvalidArgumentError(
            None, None,
            f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed values: "
            f"half, float, double, complex64, complex128 [Op:{op_name}]. "
            f"Cast the input to a floating dtype first, e.g. tf.cast(x, tf.float32).",
        )


def check_numeric(x: Tensor, op_name: str) -> None:
    if x._value.dtype.kind not in "iufc":
        raise InvalidArgumentError(
            None, None,
            f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed values for {op_name}: "
            f"a numeric dtype is required [Op:{op_name}].",
        )


def scalar_axis(axis: Any, op_name: str) -> int:
    """An axis given as a tensor, array or NumPy number: TF's errors for a
    non-scalar (InvalidArgumentError) or non-integer (TypeError) one."""
    value = axis.numpy() if isinstance(axis, Tensor) else axis
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{op_name}: axis must be an integer, got {value!r} [Op:{op_name}]")
    if arr.size != 1:
        raise InvalidArgumentError(None, None, f"axis tensor should be a scalar integer, but got shape "
                                   f"{list(arr.shape)} [Op:{op_name}]")
    return int(arr.reshape(-1)[0])


def normalize_axis(axis: Any, ndim: int, op_name: str) -> int:
    a = axis if type(axis) is int else scalar_axis(axis, op_name)
    if not -ndim <= a < ndim:
        raise InvalidArgumentError(
            None, None,
            f"Invalid axis {a} for {op_name}: expected axis in range [{-ndim}, {ndim}) for an input "
            f"of rank {ndim} [Op:{op_name}].",
        )
    return a % ndim if ndim else 0


def axis_list(axis: Any) -> Any:
    """Python/tensor axis argument -> None or a list of ints."""
    if axis is None:
        return None
    if isinstance(axis, Tensor):
        axis = axis.numpy()
    if hasattr(axis, "_value"):
        axis = axis.numpy()
    arr = np.asarray(axis)
    if arr.dtype.kind not in "iu" and arr.size:  # (axis=[] is an empty list of axes: a no-op)
        raise TypeError(f"axis must be an integer or a list of integers, got {axis!r}")
    return [int(a) for a in arr.reshape(-1)]


def as_int_tuple(v: Any, what: str) -> tuple:
    if isinstance(v, Tensor):
        v = v.numpy()
    elif hasattr(v, "numpy") and not isinstance(v, np.ndarray):
        v = v.numpy()
    try:
        arr = np.asarray(v)
        if arr.dtype.kind not in "iu" and arr.size:
            raise TypeError
        return tuple(int(a) for a in arr.reshape(-1))
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a list of integers, got {v!r}") from None


def scalar_int(v: Any, what: str, op: str) -> int:
    """A Python int from an argument TF requires to be a scalar (``depth``,
    ``num_segments``...): TF's InvalidArgumentError naming the op for a
    tensor of higher rank, TypeError for a non-numeric value."""
    if isinstance(v, Tensor):
        v = v.numpy()
    arr = np.asarray(v)
    if arr.ndim != 0:
        raise InvalidArgumentError(None, None, f"{what} must be a scalar, got shape {list(arr.shape)} [Op:{op}]")
    if arr.dtype.kind not in "iufb":
        raise TypeError(f"{op}: {what} must be an integer scalar, got {v!r}")
    return int(arr)


def result_dtype(x: Tensor) -> dtypes.DType:
    return dtypes.from_numpy(x._value.dtype)
