"""``tf.keras.config``: Keras 3's global settings (float type, epsilon, image layout, dtype policy,
traceback filtering)."""

from __future__ import annotations

from typing import Any

from tapeflow.keras.backend import (  # noqa: F401 - re-exported
    backend, epsilon, floatx, image_data_format, set_epsilon, set_floatx, set_image_data_format,
)
from tapeflow.keras.layers import base as _base
from tapeflow.keras.mixed_precision import global_policy as dtype_policy  # noqa: F401
from tapeflow.keras.mixed_precision import set_global_policy as set_dtype_policy  # noqa: F401

__all__ = ["backend", "epsilon", "floatx", "image_data_format", "set_epsilon", "set_floatx", "set_image_data_format",
           "dtype_policy", "set_dtype_policy", "enable_traceback_filtering", "disable_traceback_filtering",
           "is_traceback_filtering_enabled"]


def enable_traceback_filtering() -> None:
    """Exceptions raised in a layer's ``call`` name the layer and its arguments (the default)."""
    _base._traceback_filtering[0] = True


def disable_traceback_filtering() -> None:
    """Exceptions raised in a layer's ``call`` pass through unchanged."""
    _base._traceback_filtering[0] = False


def is_traceback_filtering_enabled() -> bool:
    return _base._traceback_filtering[0]


def enable_unsafe_deserialization() -> None:
    """Lets ``load_model`` and ``from_config`` read serialized Python lambdas (Keras's safe mode off)."""
    from tapeflow.keras.saving import serialization

    serialization.enable_unsafe_deserialization()


_UNSUPPORTED = frozenset(("enable_interactive_logging", "disable_interactive_logging",
                          "is_interactive_logging_enabled", "set_max_epochs", "max_epochs", "set_max_steps_per_epoch",
                          "max_steps_per_epoch", "enable_flash_attention", "disable_flash_attention",
                          "is_flash_attention_enabled", "set_backend", "is_nnx_enabled"))


def __getattr__(name: str) -> Any:
    if name in _UNSUPPORTED:
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError(f"tf.keras.config.{name} is not implemented in tapeflow")
    raise AttributeError(f"module 'tapeflow.keras.config' has no attribute '{name}'")
