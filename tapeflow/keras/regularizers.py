"""``tf.keras.regularizers``: weight penalties added to the training loss.

A layer built with ``kernel_regularizer=...`` reports ``regularizer(kernel)``
in ``layer.losses`` (recomputed from the current weights at each access, as
Keras 3 does), and ``fit`` adds them to the loss.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tapeflow.framework.tensor import Tensor
from tapeflow.ops import math_ops as mo

__all__ = ["Regularizer", "L1", "L2", "L1L2", "l1", "l2", "l1_l2", "get"]


class Regularizer:
    """Base class: ``regularizer(weight) -> scalar penalty``."""

    def __call__(self, x: Any) -> Tensor:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__}.__call__(x) must be implemented")

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> Regularizer:
        return cls(**config)


def _validate_float_arg(value: Any, name: str) -> float:
    """Keras's check: a finite non-negative Python number."""
    if not isinstance(value, (float, int)) or math.isinf(value) or math.isnan(value) or value < 0:
        raise ValueError(f"Invalid value for argument {name}: expected a non-negative float.Received: {name}={value}")
    return float(value)


def _value(x: Any) -> Tensor:
    return x.value() if hasattr(x, "value") and not isinstance(x, Tensor) else x


class L1(Regularizer):
    """``l1 * sum(|x|)``."""

    def __init__(self, l1: float = 0.01) -> None:
        # Keras keeps l1 as a float32 tensor: the factor (and the config) is l1 rounded to float32
        l1 = _validate_float_arg(0.01 if l1 is None else l1, "l1")
        self.l1 = float(np.float32(l1))

    def __call__(self, x: Any) -> Tensor:
        return self.l1 * mo.reduce_sum(mo.abs(_value(x)))

    def get_config(self) -> dict:
        return {"l1": self.l1}


class L2(Regularizer):
    """``l2 * sum(x**2)`` (no factor 1/2, as Keras)."""

    def __init__(self, l2: float = 0.01) -> None:
        self.l2 = _validate_float_arg(0.01 if l2 is None else l2, "l2")

    def __call__(self, x: Any) -> Tensor:
        return self.l2 * mo.reduce_sum(mo.square(_value(x)))

    def get_config(self) -> dict:
        return {"l2": self.l2}


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x**2)``."""

    def __init__(self, l1: float = 0.0, l2: float = 0.0) -> None:
        self.l1 = _validate_float_arg(0.0 if l1 is None else l1, "l1")
        self.l2 = _validate_float_arg(0.0 if l2 is None else l2, "l2")

    def __call__(self, x: Any) -> Tensor:
        x = _value(x)
        out = self.l1 * mo.reduce_sum(mo.abs(x)) if self.l1 else None
        if self.l2:
            sq = self.l2 * mo.reduce_sum(mo.square(x))
            out = sq if out is None else out + sq
        return out if out is not None else mo.reduce_sum(x) * 0.0

    def get_config(self) -> dict:
        return {"l1": self.l1, "l2": self.l2}


l1, l2 = L1, L2


def l1_l2(l1: float = 0.01, l2: float = 0.01) -> L1L2:  # noqa: D103 - Keras' helper
    return L1L2(l1=l1, l2=l2)


def get(identifier: Any) -> Regularizer | None:
    """A regularizer from a name (``"l2"``), a serialized dict, an instance or a callable."""
    if identifier is None or isinstance(identifier, Regularizer):
        return identifier
    if isinstance(identifier, dict):  # Keras's serialized form
        from tapeflow.keras.saving.serialization import deserialize_keras_object

        return deserialize_keras_object(identifier)
    if isinstance(identifier, str):
        table = {"l1": L1, "l2": L2, "l1_l2": L1L2, "L1": L1, "L2": L2, "L1L2": L1L2}
        if identifier not in table:
            raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}")
        return table[identifier]()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}")
