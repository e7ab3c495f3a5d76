"""``keras.Variable``: Keras 3's variable (with the TF backend, a ``tf.Variable`` carrying Keras's ``path``).

A layer's weights (``add_weight``) are the same kind of object, so ``isinstance(layer.kernel, keras.Variable)``
holds; a plain ``tf.Variable`` is not a Keras variable, as in Keras.
"""

from __future__ import annotations

from typing import Any

from tapeflow.framework import dtypes
from tapeflow.framework import namespaces as _namespaces
from tapeflow.framework.tensor import convert_to_tensor
from tapeflow.framework.variables import Variable as _TFVariable
from tapeflow.keras.layers import base as _base

__all__ = ["Variable", "device", "name_scope"]


class _KerasVariableType(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, _TFVariable) and "path" in obj.__dict__


class Variable(metaclass=_KerasVariableType):
    """``keras.Variable(initializer, shape=None, dtype=None, trainable=True, autocast=True, name=None)``: from a
    value (array-like, tensor) or from an initializer (an instance, a callable or its name) and a ``shape``;
    auto-named ``variable``, ``variable_1``...; its ``path`` includes the enclosing ``keras.name_scope``."""

    def __new__(cls, initializer: Any, shape: Any = None, dtype: Any = None, trainable: bool = True,
                autocast: bool = True, aggregation: str = "none", synchronization: str = "auto",
                name: str | None = None) -> Any:
        from tapeflow.keras import config, initializers

        name = name or _base.unique_name("variable")
        if not isinstance(name, str) or "/" in name:
            raise ValueError(f"Argument `name` must be a string and cannot contain character `/`. Received: "
                             f"name={name}")
        if isinstance(initializer, str) or callable(initializer):
            init = initializers.get(initializer)
            if shape is None:
                raise ValueError("When creating a Variable from an initializer, the `shape` argument should be "
                                 f"specified. Received: initializer={init} and shape={shape}")
            value = init(tuple(shape), dtype=dtypes.as_dtype(dtype or config.floatx()))
        else:
            value = convert_to_tensor(initializer, dtype=None if dtype is None else dtypes.as_dtype(dtype))
            if shape is not None and tuple(value.shape.as_list()) != tuple(shape):
                raise ValueError(f"Initial value has shape {tuple(value.shape.as_list())} but the variable has "
                                 f"shape {tuple(shape)}.")
        return _base.keras_variable(value, name, trainable, dtypes.as_dtype(value.dtype), autocast)


def name_scope(name: str, caller: Any = None) -> Any:
    """``keras.name_scope``: the scope Keras variables made inside it carry in their ``path``."""
    if not isinstance(name, str) or "/" in name:
        raise ValueError(f"Argument `name` must be a string and cannot contain character `/`. Received: name={name}")
    return _base.name_scope(name, caller)


def device(device_name: str) -> Any:
    """``keras.device``: ``tf.device`` (tapeflow places every op on the CPU)."""
    return _namespaces.get("tapeflow").device(device_name)
