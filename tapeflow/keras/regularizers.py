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

__all__ = ["Regularizer", "L1", "L2", "L1L2", "OrthogonalRegularizer", "l1", "l2", "l1_l2", "orthogonal_regularizer",
           "get", "serialize", "deserialize"]


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


class OrthogonalRegularizer(Regularizer):
    """``factor * 0.5 * sum(|off-diagonal of N N^T|) / (n (n - 1) / 2)``, ``N`` the L2-normalized rows
    (``mode="rows"``) or columns (``"columns"``) of a rank-2 weight: pushes them towards orthogonality."""

    def __init__(self, factor: float = 0.01, mode: str = "rows") -> None:
        self.factor = float(np.float32(_validate_float_arg(factor, "factor")))  # Keras keeps a float32 tensor
        if mode not in {"rows", "columns"}:
            raise ValueError('Invalid value for argument `mode`. Expected one of {"rows", "columns"}. '
                             f"Received: mode={mode}")
        self.mode = mode

    def __call__(self, x: Any) -> Tensor:
        from tapeflow.ops import array_ops as ao

        x = _value(x)
        shape = x._shape_tuple() if isinstance(x, Tensor) else np.shape(x)
        if len(shape) != 2:
            raise ValueError(f"Inputs to OrthogonalRegularizer must have rank 2. Received: inputs.shape={shape}")
        if not isinstance(x, Tensor):
            from tapeflow.framework.tensor import convert_to_tensor

            x = convert_to_tensor(x)
        axis = 1 if self.mode == "rows" else 0
        inv = mo.minimum(mo.rsqrt(mo.reduce_sum(mo.square(x), axis=axis, keepdims=True)), 1.0 / 1e-7)
        n = x * inv
        nt = ao.transpose(n)
        product = mo.matmul(n, nt) if self.mode == "rows" else mo.matmul(nt, n)
        size = shape[0] if self.mode == "rows" else shape[1]
        off = product * (1.0 - np.eye(size, dtype=x.dtype.as_numpy_dtype))
        return self.factor * 0.5 * mo.reduce_sum(mo.abs(off)) / (size * (size - 1.0) / 2.0)

    def get_config(self) -> dict:
        return {"factor": self.factor, "mode": self.mode}


orthogonal_regularizer = OrthogonalRegularizer

_BY_NAME = {"l1": L1, "l2": L2, "l1_l2": L1L2, "L1": L1, "L2": L2, "L1L2": L1L2,
            "OrthogonalRegularizer": OrthogonalRegularizer, "orthogonal_regularizer": OrthogonalRegularizer,
            "Regularizer": Regularizer, "regularizer": Regularizer}


def serialize(regularizer: Regularizer) -> dict:
    """Keras 3's ``{"module": "keras.regularizers", "class_name", "config", "registered_name"}``."""
    from tapeflow.keras.saving.serialization import serialize_keras_object

    return serialize_keras_object(regularizer)


def deserialize(config: Any, custom_objects: dict | None = None) -> Any:
    """The regularizer a name (a new instance) or a ``serialize`` dict describes."""
    if isinstance(config, str):
        found = (custom_objects or {}).get(config) or _BY_NAME.get(config)
        if found is None:
            raise ValueError(f"Could not interpret regularizer identifier: {config!r}")
        return found() if isinstance(found, type) else found
    from tapeflow.keras.saving.serialization import deserialize_keras_object

    return deserialize_keras_object(config, custom_objects)


def get(identifier: Any) -> Regularizer | None:
    """A regularizer from a name (``"l2"``), a serialized dict, an instance or a callable."""
    if identifier is None or isinstance(identifier, Regularizer):
        return identifier
    if isinstance(identifier, dict):  # Keras's serialized form
        from tapeflow.keras.saving.serialization import deserialize_keras_object

        return deserialize_keras_object(identifier)
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}")
        return _BY_NAME[identifier]()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}")
