"""``tf.keras.constraints``: projections applied to a weight after each optimizer step.

A layer built with ``kernel_constraint=...`` gives its variable that constraint, and the optimizer
assigns ``constraint(variable)`` after every update (Keras 3's order). The classes, their arguments,
math (norms over ``axis`` with Keras's ``epsilon()`` of 1e-7) and configs are Keras 3.15's.
"""

from __future__ import annotations

import inspect
from typing import Any

from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import math_ops as mo

__all__ = ["Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "UnitNorm", "get", "serialize", "deserialize"]

_EPSILON = 1e-7  # keras.backend.epsilon()


def _value(w: Any) -> Tensor:
    return w.value() if hasattr(w, "value") and not isinstance(w, Tensor) else convert_to_tensor(w)


def _norms(w: Tensor, axis: Any) -> Tensor:
    return mo.sqrt(mo.reduce_sum(mo.square(w), axis=axis, keepdims=True))


class Constraint:
    """Base class: ``constraint(w)`` returns the projected weight (the base class returns ``w``)."""

    def __call__(self, w: Any) -> Any:
        return w

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> Constraint:
        return cls(**config)


class MaxNorm(Constraint):
    """Rescales the weights whose norm along ``axis`` exceeds ``max_value``."""

    def __init__(self, max_value: float = 2, axis: Any = 0) -> None:
        self.max_value, self.axis = max_value, axis

    def __call__(self, w: Any) -> Tensor:
        w = _value(w)
        norms = _norms(w, self.axis)
        desired = mo.clip_by_value(norms, mo.cast(0, norms.dtype), mo.cast(self.max_value, norms.dtype))
        return w * (desired / (_EPSILON + norms))

    def get_config(self) -> dict:
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """Sets negative weights to zero."""

    def __call__(self, w: Any) -> Tensor:
        w = _value(w)
        return mo.maximum(w, mo.cast(0, w.dtype))


class UnitNorm(Constraint):
    """Divides the weights by their norm along ``axis``."""

    def __init__(self, axis: Any = 0) -> None:
        self.axis = axis

    def __call__(self, w: Any) -> Tensor:
        w = _value(w)
        return w / (_EPSILON + _norms(w, self.axis))

    def get_config(self) -> dict:
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """Moves the norm along ``axis`` towards ``[min_value, max_value]``:
    ``rate * clip(norm, min_value, max_value) + (1 - rate) * norm``."""

    def __init__(self, min_value: float = 0.0, max_value: float = 1.0, rate: float = 1.0, axis: Any = 0) -> None:
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w: Any) -> Tensor:
        w = _value(w)
        norms = _norms(w, self.axis)
        clipped = mo.clip_by_value(norms, mo.cast(self.min_value, norms.dtype), mo.cast(self.max_value, norms.dtype))
        desired = self.rate * clipped + (1 - self.rate) * norms
        return w * (desired / (_EPSILON + norms))

    def get_config(self) -> dict:
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate, "axis": self.axis}


# Keras's lower-case aliases
max_norm, non_neg, unit_norm, min_max_norm = MaxNorm, NonNeg, UnitNorm, MinMaxNorm

_BY_NAME = {c.__name__: c for c in (Constraint, MaxNorm, MinMaxNorm, NonNeg, UnitNorm)}
_BY_NAME.update({"constraint": Constraint, "max_norm": MaxNorm, "min_max_norm": MinMaxNorm, "non_neg": NonNeg,
                 "unit_norm": UnitNorm})


def serialize(constraint: Any) -> Any:
    """Keras 3's ``{"module": "keras.constraints", "class_name", "config", "registered_name"}``."""
    from tapeflow.keras.saving.serialization import serialize_keras_object

    return serialize_keras_object(constraint)


def deserialize(config: Any, custom_objects: dict | None = None) -> Any:
    from tapeflow.keras.saving.serialization import deserialize_keras_object

    return deserialize_keras_object(config, custom_objects)


def get(identifier: Any) -> Any:
    """A constraint from None, a name (``"non_neg"``, ``"MaxNorm"``), a config dict, a class or a callable."""
    if identifier is None:
        return None
    obj = deserialize(identifier) if isinstance(identifier, dict) else (
        _BY_NAME.get(identifier) if isinstance(identifier, str) else identifier)
    if callable(obj):
        return obj() if inspect.isclass(obj) else obj
    raise ValueError(f"Could not interpret constraint identifier: {identifier}")
