"""``tf.experimental.Optional``: a value that may be absent (what ``iterator.get_next_as_optional()`` returns)."""

from __future__ import annotations

from typing import Any

from tapeflow.framework import errors

__all__ = ["Optional"]


class Optional:
    """A structure of tensors, or nothing. ``has_value()`` is a bool tensor; ``get_value()`` the structure
    (eagerly, ``InvalidArgumentError`` when there is none). Made by ``Optional.from_value``,
    ``Optional.empty(element_spec)`` or an iterator's ``get_next_as_optional()``."""

    def __init__(self, has_value: Any, value: Any, element_spec: Any) -> None:
        self._has_value, self._value, self._element_spec = has_value, value, element_spec

    @staticmethod
    def from_value(value: Any) -> Optional:
        from tapeflow.framework import nest
        from tapeflow.framework.tensor import constant, convert_to_tensor
        from tapeflow.framework.tensor_spec import TensorSpec

        value = nest.map_structure(convert_to_tensor, value)
        spec = nest.map_structure(lambda t: TensorSpec(t.shape, t.dtype), value)
        return Optional(constant(True), value, spec)

    @staticmethod
    def empty(element_spec: Any) -> Optional:
        from tapeflow.framework.tensor import constant

        return Optional(constant(False), None, element_spec)

    @property
    def element_spec(self) -> Any:
        return self._element_spec

    def has_value(self, name: str | None = None) -> Any:
        return self._has_value

    def get_value(self, name: str | None = None) -> Any:
        # (inside tf.function the value is the element when there is one, zeros of its spec when not: read it
        # under `if optional.has_value():`, as TF's programs do)
        from tapeflow.framework.context import state

        if self._value is None or (state.graph is None and not bool(self._has_value)):
            raise errors.InvalidArgumentError("The optional does not have a value [Op:OptionalGetValue]")
        return self._value

    def __repr__(self) -> str:
        return f"<tf.experimental.Optional element_spec={self._element_spec}>"
