"""TensorFlow's dtypes on top of NumPy's (``tf.float32`` ...)."""

from __future__ import annotations

import builtins as _builtins
from typing import Any

import numpy as np


class DType:
    """A tensor element type: a NumPy dtype with TensorFlow's name and rules."""

    __slots__ = ("_np", "_name")

    def __init__(self, np_dtype: Any, name: str) -> None:
        self._np = np.dtype(np_dtype)
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def as_numpy_dtype(self) -> type:
        return self._np.type

    @property
    def is_floating(self) -> bool:
        return self._np.kind == "f"

    @property
    def is_integer(self) -> bool:
        return self._np.kind in "iu"

    @property
    def is_unsigned(self) -> bool:
        return self._np.kind == "u"

    @property
    def is_complex(self) -> bool:
        return self._np.kind == "c"

    @property
    def is_bool(self) -> bool:
        return self._np.kind == "b"

    @property
    def is_numeric(self) -> bool:
        return self._np.kind in "iufc"

    @property
    def size(self) -> int:
        return self._np.itemsize

    @property
    def base_dtype(self) -> DType:
        return self

    @property
    def real_dtype(self) -> DType:
        if self is complex64:
            return float32
        if self is complex128:
            return float64
        return self

    @property
    def min(self):
        if self.is_floating:
            return np.finfo(self._np).min
        if self.is_integer:
            return np.iinfo(self._np).min
        raise TypeError(f"Cannot find minimum value of {self._name}.")

    @property
    def max(self):
        if self.is_floating:
            return np.finfo(self._np).max
        if self.is_integer:
            return np.iinfo(self._np).max
        raise TypeError(f"Cannot find maximum value of {self._name}.")

    def is_compatible_with(self, other: Any) -> bool:
        return self is as_dtype(other)

    def __repr__(self) -> str:
        return f"tf.{self._name}"

    def __str__(self) -> str:
        # TF: print(tf.float32) shows <dtype: 'float32'>; repr stays tf.float32.
        return f"<dtype: '{self._name}'>"

    def __eq__(self, other: Any) -> bool:
        if other is self:
            return True
        if other is None:
            return False
        try:
            return as_dtype(other) is self
        except TypeError:
            return False

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self._name)

    def __reduce__(self):
        return as_dtype, (self._name,)


float16 = DType(np.float16, "float16")
half = float16
float32 = DType(np.float32, "float32")
float64 = DType(np.float64, "float64")
double = float64
int8 = DType(np.int8, "int8")
int16 = DType(np.int16, "int16")
int32 = DType(np.int32, "int32")
int64 = DType(np.int64, "int64")
uint8 = DType(np.uint8, "uint8")
uint16 = DType(np.uint16, "uint16")
uint32 = DType(np.uint32, "uint32")
uint64 = DType(np.uint64, "uint64")
bool = DType(np.bool_, "bool")  # noqa: A001 - TF's name
complex64 = DType(np.complex64, "complex64")
complex128 = DType(np.complex128, "complex128")
string = DType(np.object_, "string")

_ALL = [float16, float32, float64, int8, int16, int32, int64, uint8, uint16,
        uint32, uint64, bool, complex64, complex128, string]
# numpy dtype -> DType; np.dtype objects hash by value, so any equal dtype hits.
NP_TO_DTYPE: dict = {d._np: d for d in _ALL}
NP_TO_DTYPE.update({np.dtype("U"): string, np.dtype("S"): string})
_BY_NAME = {d._name: d for d in _ALL}
_BY_NAME.update({"half": float16, "double": float64, "float": float32})


_TYPE_STRINGS = {"float16": "half", "float32": "float", "float64": "double"}


def type_string(dtype: Any) -> str:
    """TF's ``DataTypeString``: a dtype's name in kernel error messages ("float" for float32, "double",
    "half"; the others as their names). Takes a DType or a dtype name."""
    name = dtype if isinstance(dtype, str) else as_dtype(dtype).name
    return _TYPE_STRINGS.get(name, name)


_ENUM_NAMES = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8", 7: "string",
               8: "complex64", 9: "int64", 10: "bool", 11: "qint8", 12: "quint8", 13: "qint32", 14: "bfloat16",
               15: "qint16", 16: "quint16", 17: "uint16", 18: "complex128", 19: "float16", 20: "resource",
               21: "variant", 22: "uint32", 23: "uint64"}


def as_dtype(type_value: Any) -> DType:
    """Converts ``type_value`` (a DType, NumPy dtype/type or name) to a DType."""
    if isinstance(type_value, DType):
        return type_value
    if type_value is None:  # np.dtype(None) would silently mean float64
        raise TypeError("Cannot convert the argument `type_value`: None to a TensorFlow DType.")
    if isinstance(type_value, str):
        try:
            return _BY_NAME[type_value]
        except KeyError:
            raise TypeError(f"Cannot convert value {type_value!r} to a TensorFlow DType.") from None
    if isinstance(type_value, (int, np.integer)) and not isinstance(type_value, _builtins.bool):
        # TF's DataType enum values (types.proto): tf.zeros(1, 1) is tf.zeros(shape=1, dtype=tf.float32)
        name = _ENUM_NAMES.get(int(type_value))
        if name is None or name not in _BY_NAME:
            raise TypeError(f"Cannot convert the argument `type_value`: {type_value!r} to a TensorFlow DType.")
        return _BY_NAME[name]
    if type_value is float:
        return float32
    if type_value is int:
        return int32
    if type_value is _builtins.bool:
        return bool
    try:
        npd = np.dtype(type_value)
    except TypeError:
        raise TypeError(f"Cannot convert value {type_value!r} to a TensorFlow DType.") from None
    d = NP_TO_DTYPE.get(npd)
    if d is None:
        if npd.kind in "US":
            return string
        raise TypeError(f"Cannot convert value {type_value!r} to a TensorFlow DType.")
    return d


def from_numpy(npd: np.dtype) -> DType:
    """Fast path: the DType of a NumPy dtype object."""
    d = NP_TO_DTYPE.get(npd)
    if d is None:
        return as_dtype(npd)
    return d


FLOATING = frozenset(d for d in _ALL if d.is_floating or d.is_complex)
