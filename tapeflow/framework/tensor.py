"""The eager ``tf.Tensor`` and conversion of Python/NumPy values to tensors.

A Tensor wraps a NumPy array (or NumPy scalar, for rank 0) and an integer id
that tapes use to refer to it. Operators (``+``, ``@``, ``[]`` ...) are
attached by ``tapeflow.ops.tensor_operators`` once the ops exist.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from tapeflow.framework import context as _context
from tapeflow.framework import dtypes
from tapeflow.framework.tensor_shape import TensorShape

_next_id = itertools.count(1).__next__


def new_id() -> int:
    return _next_id()


class Tensor:
    """A multi-dimensional array with a fixed dtype, as ``tf.Tensor``.

    >>> import tapeflow as tf
    >>> tf.constant([1.0, 2.0]) * 3
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([3., 6.], dtype=float32)>
    """

    __slots__ = ("_value", "_id", "__weakref__")
    # NumPy binary operators defer to ours (np.float32(2) * t gives a Tensor).
    __array_priority__ = 100

    def __init__(self, value: Any) -> None:
        self._value = value
        self._id = _next_id()

    # -- value access -----------------------------------------------------
    def numpy(self):
        """The value as a NumPy array (a NumPy scalar for rank 0)."""
        v = self._value
        if isinstance(v, np.ndarray) and v.ndim == 0:
            return v[()]
        return v

    def __array__(self, dtype=None, copy=None):
        v = np.asarray(self._value)
        if dtype is not None and v.dtype != dtype:
            return v.astype(dtype)
        if copy:
            return v.copy()
        return v

    @property
    def dtype(self) -> dtypes.DType:
        return dtypes.from_numpy(self._value.dtype)

    @property
    def shape(self) -> TensorShape:
        return TensorShape(self._value.shape)

    def _shape_tuple(self) -> tuple:
        """The shape as a plain tuple (``None`` for unknown dims in graphs)."""
        return self._value.shape

    def get_shape(self) -> TensorShape:
        return self.shape

    def set_shape(self, shape: Any) -> None:
        if not self.shape.is_compatible_with(shape):
            raise ValueError(f"Tensor's shape {self.shape} is not compatible with supplied shape {TensorShape(shape)}.")

    @property
    def ndim(self) -> int:
        return self._value.ndim

    @property
    def device(self) -> str:
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    @property
    def name(self):
        raise AttributeError("Tensor.name is undefined when eager execution is enabled.")

    @property
    def graph(self):
        raise AttributeError("Tensor.graph is undefined when eager execution is enabled.")

    def ref(self) -> Reference:
        """A hashable reference to this tensor (tensors themselves are not)."""
        return Reference(self)

    experimental_ref = ref

    # -- Python protocol --------------------------------------------------
    def __hash__(self):
        raise TypeError("Tensor is unhashable. Instead, use tensor.ref() as the key.")

    def __bool__(self) -> bool:
        v = self._value
        if v.size != 1 and v.ndim != 0:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. "
                "Use a.any() or a.all()"
            )
        return bool(v)

    def __float__(self) -> float:
        # TF's float(self._numpy()): NumPy decides (NumPy 2.4 rejects a shape-(1,) tensor with a TypeError)
        return float(self._value)

    def __int__(self) -> int:
        return int(_scalar(self._value))  # op arguments given as one-element tensors (axis=[1]) use it

    def __index__(self) -> int:
        # TF's errors (it calls NumPy's __index__ on the value): a non-integer scalar's NumPy type has none
        if self._value.ndim != 0:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        if self._value.dtype.kind not in "iu":
            raise AttributeError(f"'numpy.{type(self._value[()]).__name__}' object has no attribute '__index__'")
        return int(self._value)

    def __complex__(self) -> complex:
        return complex(self._value)

    def __len__(self) -> int:
        if self._value.ndim == 0:
            raise TypeError("Scalar tensor has no `len()`")
        return self._value.shape[0]

    def __copy__(self) -> Tensor:
        return self

    def __deepcopy__(self, memo) -> Tensor:
        return self

    def __reduce__(self):
        return convert_to_tensor, (self.numpy(),)

    def __repr__(self) -> str:
        text = _numpy_repr(self)
        sep = "\n" if "\n" in text else ""
        return f"<tf.Tensor: shape={_shape_str(self._value.shape)}, dtype={self.dtype.name}, numpy={sep}{text}>"

    def __str__(self) -> str:
        v = self.numpy()
        if self._value.ndim:
            text = np.array2string(np.asarray(self._value))
        else:
            text = repr(bytes(v)) if isinstance(v, bytes) else str(v)
        sep = "\n" if "\n" in text else ""
        return f"tf.Tensor({sep}{text}, shape={_shape_str(self._value.shape)}, dtype={self.dtype.name})"

    def __format__(self, spec: str) -> str:
        # As TF: the NumPy value's format ("{}".format(t) prints like NumPy)
        return format(self.numpy() if self._value.ndim == 0 else np.asarray(self._value), spec)

    # NumPy-style conveniences TF has on EagerTensor.
    def eval(self, *args, **kwargs):
        raise NotImplementedError("Tensor.eval() is graph-mode (TF1) only; use .numpy() in eager mode.")


def _scalar(v):
    """The single element of ``v`` (tapeflow's ops take one-element tensors where TF takes a single value)."""
    if v.ndim == 0:
        return v
    if v.size != 1:
        raise TypeError(f"only size-1 tensors can be converted to Python scalars, got shape {list(v.shape)}")
    return v.reshape(-1)[0]


def _shape_str(shape: tuple) -> str:
    return str(TensorShape(shape))


def _numpy_repr(t: Tensor) -> str:
    v = t.numpy()
    if isinstance(v, np.ndarray):
        return repr(v)
    if isinstance(v, np.generic):
        return repr(v.item())  # TF shows the Python value: 1000.6931762695312
    return repr(v)


class AbstractValue:
    """What a symbolic tensor knows: shape (dims may be None), dtype, rank."""

    __slots__ = ("shape", "dtype", "ndim")

    def __init__(self, shape: tuple | None, dtype: Any) -> None:
        self.shape = None if shape is None else tuple(None if d is None else int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.ndim = None if shape is None else len(shape)

    @property
    def size(self):
        if self.shape is None or None in self.shape:
            return None
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self) -> str:
        return f"AbstractValue({self.shape}, {self.dtype})"


class Reference:
    """What ``tensor.ref()`` returns: hashable by identity, deref() to get back."""

    __slots__ = ("_obj",)

    def __init__(self, obj: Any) -> None:
        self._obj = obj

    def deref(self):
        return self._obj

    def __hash__(self) -> int:
        return id(self._obj)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Reference) and other._obj is self._obj

    def __repr__(self) -> str:
        return f"<Reference wrapping {self._obj!r}>"


# -- conversion ----------------------------------------------------------------

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
# Conversion functions registered for non-Tensor types (Variable, IndexedSlices).
_conversion_registry: dict[type, Any] = {}


def register_tensor_conversion_function(base_type: type, conversion_func: Any, priority: int = 100) -> None:
    """As ``tf.register_tensor_conversion_function``: teach convert_to_tensor a type."""
    if not isinstance(base_type, type):
        raise TypeError(f"Argument `base_type` must be a type or a tuple of types. Obtained: {base_type}")
    if not callable(conversion_func):
        raise TypeError("Argument `conversion_func` must be callable. Received {conversion_func}.")
    _conversion_registry[base_type] = conversion_func


def _python_to_numpy(value: Any, dtype: dtypes.DType | None) -> np.ndarray:
    """Python scalars/lists follow TF's inference: float -> float32, int -> int32."""
    if isinstance(value, (list, tuple)) and _contains_tensor(value):
        value = _materialize(value)
    try:
        arr = np.asarray(value)
    except ValueError as e:
        if "inhomogeneous" in str(e):  # TF's text, verbatim
            raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") from None
        if not isinstance(value, (list, tuple)):  # the object's own __array__ refused (a KerasTensor)
            raise
        raise ValueError(f"Can't convert non-rectangular Python sequence to Tensor: {e}") from None
    kind = arr.dtype.kind
    if kind in "US" and arr.size:  # NumPy's fixed-width strings drop trailing NULs; TF's strings keep every byte
        arr = np.array(value, dtype=object).reshape(arr.shape)
    if dtype is not None:
        target = dtype._np
        if arr.size == 0 and kind == "f":  # [] infers float64: any dtype takes no elements
            return arr.astype(target)
        if kind == "f" and target.kind in "iub":
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
        if kind == "c" and target.kind != "c":
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
        if kind in "iu" and target.kind in "iu" and arr.size:
            info = np.iinfo(target)
            if arr.min() < info.min or arr.max() > info.max:
                raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
        if kind in "iu" and target.kind == "b":  # (bools convert to numbers: True -> 1.0, as TF)
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
        if kind in "US" and target.kind != "O":
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
        if kind in "US" and target.kind == "O":  # Python str -> bytes elements, as tf.constant("a")
            return _to_bytes(arr)
        if kind in "biuf" and target.kind == "O":  # a number never becomes a string (TF: TypeError)
            raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
        return arr.astype(target)
    if kind == "f":
        return arr.astype(np.float32)
    if kind in "iu":
        if arr.size and (arr.min() < _INT32_MIN or arr.max() > _INT32_MAX):
            return arr.astype(np.int64)
        return arr.astype(np.int32)
    if kind in "US":
        return _to_bytes(arr)
    if kind == "O":
        if arr.ndim == 0:
            raise ValueError(
                f"Attempt to convert a value ({value!r}) with an unsupported type ({type(value)}) to a Tensor."
            )
        raise TypeError(f"Failed to convert elements of {value!r} to Tensor.")
    return arr


def _to_bytes(arr: np.ndarray) -> np.ndarray:
    """TF strings are bytes: an object array of ``bytes``."""
    out = np.empty(arr.shape, dtype=object)
    flat = out.reshape(-1)
    for i, s in enumerate(arr.reshape(-1).tolist()):
        flat[i] = s.encode() if isinstance(s, str) else s
    return out


def _contains_tensor(seq) -> bool:
    for item in seq:
        if isinstance(item, (list, tuple)):
            if _contains_tensor(item):
                return True
        elif not isinstance(item, (int, float, complex, bool, np.generic, str, bytes)):
            return True
    return False


def _is_array_like(value: Any) -> bool:
    # pandas DataFrame/Series (and other array containers): NumPy's conversion and dtype, as TF
    return hasattr(value, "__array__") and hasattr(value, "to_numpy") and not isinstance(value, (list, tuple))


# Set by the op layer (array_ops): packs a nested list holding tensors with Pack ops.
_pack_hook = None
# Set by the op layer (tensor_operators): tf.cast, for constant(tensor, dtype=...).
_cast_hook = None


def _materialize(seq):
    out = []
    for item in seq:
        if isinstance(item, (list, tuple)):
            out.append(_materialize(item))
        elif isinstance(item, (int, float, complex, bool, np.generic, str, bytes)):
            out.append(item)
        else:
            out.append(convert_to_tensor(item).numpy())
    return out


def _wrap(arr: Any) -> Tensor:
    # Rank-0 values are kept as NumPy scalars: NumPy ops on them are faster.
    if isinstance(arr, np.ndarray) and arr.ndim == 0 and arr.dtype.kind != "O":
        arr = arr[()]
    elif type(arr) is bytes:  # a string scalar (a kernel's element): kept as a 0-d object array, as constants
        arr = np.array(arr, dtype=object)
    return Tensor(arr)


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str | None = None) -> Tensor:
    """Creates a constant tensor, as ``tf.constant``.

    Python floats become float32 and ints int32; NumPy arrays keep their dtype
    unless ``dtype`` is given. ``shape`` reshapes, or broadcasts a scalar.

    >>> tf.constant([[1, 2], [3, 4]]).dtype
    tf.int32
    """
    if value is None:
        raise ValueError("Attempt to convert a value (None) with an unsupported type (<class 'NoneType'>) to a Tensor.")
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    if isinstance(value, Tensor) or type(value) in _conversion_registry:
        t = convert_to_tensor(value)
        if dtype is not None and t.dtype is not dtype:
            t = _cast_hook(t, dtype)
        arr = t._value
    elif isinstance(value, (np.ndarray, np.generic)) or _is_array_like(value):
        arr = np.array(value, dtype=dtype._np if dtype is not None else None, copy=True)
        if arr.dtype.kind in "US" or (arr.dtype.kind == "O" and arr.size and isinstance(arr.flat[0], str)):
            arr = _to_bytes(arr)  # also an object array of Python str (a pandas column): TF's strings are bytes
    else:
        arr = _python_to_numpy(value, dtype)
    if dtype is dtypes.string and arr.dtype.kind == "O":  # dtype=tf.string given: str elements become bytes too
        arr = _to_bytes(arr)
    if shape is not None:
        shape = tuple(TensorShape(shape).as_list())
        arr = np.asarray(arr)
        if arr.size == 1 and int(np.prod(shape)) != 1:
            arr = np.full(shape, arr.reshape(()), dtype=arr.dtype)
        elif arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        else:
            raise TypeError(
                f"Eager execution of tf.constant with unsupported shape: the value has {arr.size} "
                f"elements but `shape` {shape} has {int(np.prod(shape))}. Pass a scalar to fill "
                "the shape, or a value with that many elements."
            )
    t = _wrap(arr)
    graph = _context.state._graph
    if graph is not None and name is not _IMPLICIT and hasattr(graph, "note_constant"):
        graph.note_constant(t, name or "Const")  # traced: TF's graph has a Const node for it
    return t


# convert_to_tensor's name for the constants it makes: not a tf.constant node of a traced graph (the op
# taking the value names it for its argument, ``add/y``)
_IMPLICIT = "<converted>"


def convert_to_tensor(value: Any, dtype: Any = None, dtype_hint: Any = None, name: str | None = None) -> Tensor:
    """Converts a Tensor, Variable, NumPy array or Python value to a Tensor.

    A Tensor is returned as is (a ``dtype`` that differs is an error, as in
    TF); other values follow ``tf.constant``'s rules, using ``dtype_hint``
    when it fits.
    """
    if isinstance(value, Tensor):
        if dtype is not None:
            dtype = dtypes.as_dtype(dtype)
            if value.dtype is not dtype:
                raise ValueError(
                    f"Tensor conversion requested dtype {dtype.name} for Tensor with dtype "
                    f"{value.dtype.name}: {value!r}"
                )
        return value
    conv = _conversion_registry.get(type(value))
    if conv is None:
        for base, fn in _conversion_registry.items():
            if isinstance(value, base):
                conv = fn
                break
    if conv is not None:
        t = conv(value, dtype=dtypes.as_dtype(dtype) if dtype is not None else None)
        return convert_to_tensor(t, dtype=dtype)
    if _pack_hook is not None and isinstance(value, (list, tuple)) and _contains_tensor(value):
        # TF's auto-packing: a list holding tensors becomes Pack ops (tapes and
        # traced functions see through it; numbers take the tensors' dtype).
        return _pack_hook(value, dtypes.as_dtype(dtype) if dtype is not None else None)
    if dtype is None and dtype_hint is not None:
        try:
            return constant(value, dtype=dtype_hint, name=_IMPLICIT)
        except (TypeError, ValueError):
            return constant(value, name=_IMPLICIT)
    return constant(value, dtype=dtype, name=_IMPLICIT)


def is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)
