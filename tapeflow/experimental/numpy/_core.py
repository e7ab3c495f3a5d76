"""TF NumPy's dtype rules (``np_utils.result_type``, ``np_dtypes``), ``array``/``asarray`` and
``experimental_enable_numpy_behavior``: NumPy promotion in tensor operators, NumPy methods and indexing."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework import nest
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.framework.variables import Variable
from tapeflow.ops import array_ops, math_ops

_STATE = {"prefer_float32": False, "enabled": False}


def default_float_type() -> Any:
    """float64, or float32 when ``prefer_float32`` is on."""
    return np.float32 if _STATE["prefer_float32"] else np.float64


def _maybe_np_dtype(x: Any) -> Any:
    if isinstance(x, numbers.Real) and not isinstance(x, np.generic):
        return x  # a Python scalar: weak in np.result_type
    if isinstance(x, (Tensor, Variable)):
        return x.dtype._np
    if isinstance(x, dtypes.DType):
        return x._np
    if isinstance(x, (list, tuple)):
        raise ValueError(
            "Cannot find dtype for type inference from argument `x` of a sequence type "
            f"{type(x)}. For sequences, please call this function on each element individually."
        )
    return x


def result_type(*arrays_and_dtypes: Any) -> dtypes.DType:
    """``np.result_type`` of the arguments (tensors count by dtype, Python scalars are weak), as a TF dtype;
    a Python float is float32 when ``prefer_float32`` is on."""
    args = [_maybe_np_dtype(x) for x in nest.flatten(list(arrays_and_dtypes))]
    if not args:
        args = [np.asarray([])]
    if _STATE["prefer_float32"]:
        args = [
            np.float32(x) if isinstance(x, float) else np.complex64(x) if isinstance(x, complex) else x for x in args
        ]
    return dtypes.as_dtype(np.result_type(*args))


def _unary_result_type(a: Any, dtype: Any) -> dtypes.DType:
    if dtype:
        return result_type(dtype)
    if isinstance(a, str):
        return dtypes.as_dtype(np.str_)
    if isinstance(a, bytes):
        return dtypes.as_dtype(np.bytes_)
    return result_type(a)


def array(val: Any, dtype: Any = None, copy: bool = True, ndmin: int = 0) -> Tensor:
    """``tnp.array``: a tensor of ``val`` with NumPy's dtype inference (Python int: int64, float: float64)."""
    if dtype:
        dtype = result_type(dtype)
    if isinstance(val, Variable):
        val = val.value()
    if not isinstance(val, Tensor):
        dtype = _unary_result_type(val, dtype)
        result = convert_to_tensor(np.asarray(val, dtype=dtype._np) if dtype != dtypes.string else val, dtype=dtype)
    elif dtype and dtype != val.dtype:
        result = math_ops.cast(val, dtype)
    else:
        result = array_ops.identity(val) if copy else val
    if ndmin > 32:
        raise ValueError(f"ndmin bigger than allowable number of dimensions: {32}.")
    if result.ndim < ndmin:
        result = array_ops.reshape(result, [1] * (ndmin - result.ndim) + list(result._shape_tuple()))
    return result


def asarray(a: Any, dtype: Any = None) -> Tensor:
    """``tnp.asarray``: ``a`` itself when it is a tensor of ``dtype`` already."""
    if dtype:
        dtype = result_type(dtype)
    if isinstance(a, Tensor) and (not dtype or dtype == a.dtype):
        return a
    return array(a, dtype, copy=False)


def _promote_binary(x1: Any, x2: Any) -> tuple:
    if not isinstance(x1, Tensor) or not isinstance(x2, Tensor) or x1.dtype != x2.dtype:
        dtype = result_type(x1, x2)
        return asarray(x1, dtype), asarray(x2, dtype)
    return x1, x2


# -- experimental_enable_numpy_behavior -------------------------------------------------------------------------
_PROMOTED = (
    "__add__",
    "__radd__",
    "__sub__",
    "__rsub__",
    "__mul__",
    "__rmul__",
    "__truediv__",
    "__rtruediv__",
    "__floordiv__",
    "__rfloordiv__",
    "__mod__",
    "__rmod__",
    "__pow__",
    "__rpow__",
    "__matmul__",
    "__rmatmul__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__eq__",
    "__ne__",
    "__and__",
    "__rand__",
    "__or__",
    "__ror__",
    "__xor__",
    "__rxor__",
)


def _promoting(fn):
    def op(self, other):
        if other is None or not isinstance(other, (Tensor, Variable, numbers.Number, np.ndarray, np.generic)):
            return fn(self, other)
        this = self.value() if isinstance(self, Variable) else self
        if isinstance(other, (Tensor, Variable)) and this.dtype == other.dtype:
            return fn(self, other)
        dtype = result_type(this, other)
        return fn(asarray(this, dtype), asarray(other.value() if isinstance(other, Variable) else other, dtype))

    op.__name__ = getattr(fn, "__name__", "op")
    return op


def _getitem(base):
    def getitem(self, key):
        keys = key if isinstance(key, tuple) else (key,)
        basic = all(
            k is None
            or k is Ellipsis
            or isinstance(k, (slice, numbers.Integral))
            or (isinstance(k, Tensor) and k.ndim == 0 and k.dtype.is_integer)
            for k in keys
        )
        if basic:
            return base(self, key)
        # NumPy's advanced indexing: the flat positions NumPy picks, gathered (differentiable)
        shape = tuple(self._shape_tuple())
        if None in shape:
            raise NotImplementedError(
                "tnp: advanced indexing of a tensor with unknown dimensions is not implemented in tapeflow"
            )
        np_keys = tuple(np.asarray(k) if isinstance(k, (Tensor, list)) else k for k in keys)
        positions = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)[np_keys]
        flat = array_ops.reshape(self.value() if isinstance(self, Variable) else self, [-1])
        return array_ops.gather(flat, convert_to_tensor(positions))

    return getitem


def _matmul(a, b):
    from tapeflow.experimental import numpy as tnp

    return tnp.matmul(a, b)


def _reshape_method(self, *args, **kwargs):
    from tapeflow.experimental import numpy as tnp

    order = kwargs.pop("order", "C")
    if kwargs:
        raise ValueError(f"Unsupported arguments: {kwargs.keys()}")
    newshape = args[0] if len(args) == 1 and not isinstance(args[0], numbers.Integral) else args
    return tnp.reshape(self, newshape, order=order)


_SAVED: list = []  # (class, name, previous attribute or _ABSENT), to undo the install (tests)
_ABSENT = object()


def _set(cls: type, name: str, value: Any) -> None:
    _SAVED.append((cls, name, cls.__dict__.get(name, _ABSENT)))
    setattr(cls, name, value)


def _disable_numpy_behavior() -> None:
    """Undoes ``experimental_enable_numpy_behavior`` (TF has no public way; tapeflow's tests need one)."""
    for cls, name, old in reversed(_SAVED):
        if old is _ABSENT:
            delattr(cls, name)
        else:
            setattr(cls, name, old)
    _SAVED.clear()
    _STATE.update(prefer_float32=False, enabled=False)


def _install_methods() -> None:
    from tapeflow.experimental import numpy as tnp
    from tapeflow.ops import tensor_operators

    for cls in (Tensor, Variable):
        for name in _PROMOTED:
            base = (
                tensor_operators._OPERATORS.get(name)
                if name not in ("__eq__", "__ne__")
                else (tensor_operators._eq if name == "__eq__" else tensor_operators._ne)
            )
            current = cls.__dict__.get(name, base)
            if getattr(current, "_tnp_promoting", False):
                continue
            if name in ("__matmul__", "__rmatmul__"):  # NumPy's matmul (1-D operands too), as TF's wrapper
                current = _matmul if name == "__matmul__" else (lambda self, other: _matmul(other, self))
            wrapped = _promoting(current)
            wrapped._tnp_promoting = True
            _set(cls, name, wrapped)
        current = cls.__dict__.get("__getitem__")
        if current is not None and not getattr(current, "_tnp_getitem", False):
            gi = _getitem(current)
            gi._tnp_getitem = True
            _set(cls, "__getitem__", gi)
    # (assigning __eq__ resets __hash__: keep TF's message)
    _set(Tensor, "__hash__", tensor_operators._unhashable("Tensor", "tensor"))
    _set(Variable, "__hash__", tensor_operators._unhashable("Variable", "variable"))
    methods = {
        "T": property(lambda self: tnp.transpose(self)),
        "size": property(lambda self: np.int64(np.prod(self._shape_tuple(), dtype=np.int64))),
        "tolist": lambda self: np.asarray(self.numpy()).tolist(),
        "transpose": lambda self, *axes: tnp.transpose(
            self, axes[0] if len(axes) == 1 and not isinstance(axes[0], numbers.Integral) else axes or None
        ),
        "flatten": lambda self, order="C": tnp.flatten(self, order),
        "reshape": _reshape_method,
        "ravel": lambda self: tnp.ravel(self),
        "clip": lambda self, a_min, a_max: tnp.clip(self, a_min, a_max),
        "astype": lambda self, dtype: math_ops.cast(self, dtype),
        "__round__": lambda self, ndigits=None: tnp.around(self, ndigits or 0),
        "max": lambda self, axis=None, out=None, keepdims=None: tnp.amax(self, axis, out, keepdims),
        "min": lambda self, axis=None, out=None, keepdims=None: tnp.amin(self, axis, out, keepdims),
        "mean": lambda self, axis=None, dtype=None, out=None, keepdims=None: tnp.mean(self, axis, dtype, out, keepdims),
        "data": property(lambda self: self),
    }
    for name, value in methods.items():
        _set(Tensor, name, value)


def experimental_enable_numpy_behavior(prefer_float32: bool = False, dtype_conversion_mode: str = "legacy") -> None:
    """Gives tensors NumPy's behaviour, as TF's: NumPy dtype promotion in their operators (``int32 + float32``
    is float64), NumPy methods (``T``, ``reshape``, ``ravel``, ``astype``, ``clip``, ``max``/``min``/``mean``,
    ``tolist``, ``size``) and NumPy indexing; ``prefer_float32`` makes Python floats float32."""
    if dtype_conversion_mode not in ("legacy", "off"):
        raise NotImplementedError(
            f"experimental_enable_numpy_behavior(dtype_conversion_mode={dtype_conversion_mode!r})"
            " is not implemented in tapeflow ('legacy' is)"
        )
    _STATE["prefer_float32"] = bool(prefer_float32)
    if not _STATE["enabled"]:
        _install_methods()
        _STATE["enabled"] = True
