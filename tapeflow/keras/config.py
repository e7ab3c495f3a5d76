"""``tf.keras.config``: Keras 3's global settings (float type, epsilon, image layout, dtype policy,
traceback filtering, interactive logging)."""

from __future__ import annotations

import os
from typing import Any

from tapeflow.keras.backend import (  # noqa: F401 - re-exported
    backend, epsilon, floatx, image_data_format, set_epsilon, set_floatx, set_image_data_format,
)
from tapeflow.keras.io_utils import (  # noqa: F401 - re-exported
    disable_interactive_logging, enable_interactive_logging, is_interactive_logging_enabled,
)
from tapeflow.keras.layers import base as _base
from tapeflow.keras.mixed_precision import global_policy as dtype_policy  # noqa: F401
from tapeflow.keras.mixed_precision import set_global_policy as set_dtype_policy  # noqa: F401

__all__ = ["backend", "epsilon", "floatx", "image_data_format", "set_epsilon", "set_floatx", "set_image_data_format",
           "dtype_policy", "set_dtype_policy", "enable_traceback_filtering", "disable_traceback_filtering",
           "is_traceback_filtering_enabled", "max_epochs", "set_max_epochs", "max_steps_per_epoch",
           "set_max_steps_per_epoch", "enable_interactive_logging", "disable_interactive_logging",
           "is_interactive_logging_enabled"]

# Keras's debugging caps on fit's epochs and on the steps of each fit/evaluate/predict epoch; Keras reads
# KERAS_MAX_EPOCHS / KERAS_MAX_STEPS_PER_EPOCH once, when it is imported.
_limits: dict = {
    "max_epochs": int(os.environ["KERAS_MAX_EPOCHS"]) if "KERAS_MAX_EPOCHS" in os.environ else None,
    "max_steps_per_epoch": (int(os.environ["KERAS_MAX_STEPS_PER_EPOCH"])
                            if "KERAS_MAX_STEPS_PER_EPOCH" in os.environ else None),
}


def set_max_epochs(max_epochs: int | None) -> None:
    """Caps the epochs of every ``fit`` (``None``: no cap); for debugging runs, as ``KERAS_MAX_EPOCHS``."""
    _limits["max_epochs"] = max_epochs


def max_epochs() -> int | None:
    """The cap ``set_max_epochs`` (or ``KERAS_MAX_EPOCHS``) put on ``fit``'s epochs, or ``None``."""
    return _limits["max_epochs"]


def set_max_steps_per_epoch(max_steps_per_epoch: int | None) -> None:
    """Caps the steps of each epoch of ``fit``/``evaluate``/``predict`` (``None``: no cap); for debugging
    runs, as ``KERAS_MAX_STEPS_PER_EPOCH``."""
    _limits["max_steps_per_epoch"] = max_steps_per_epoch


def max_steps_per_epoch() -> int | None:
    """The cap ``set_max_steps_per_epoch`` (or ``KERAS_MAX_STEPS_PER_EPOCH``) put on each epoch's steps."""
    return _limits["max_steps_per_epoch"]


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


_UNSUPPORTED = frozenset(("enable_flash_attention", "disable_flash_attention",
                          "is_flash_attention_enabled", "set_backend", "is_nnx_enabled"))


def __getattr__(name: str) -> Any:
    if name in _UNSUPPORTED:
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError(f"tf.keras.config.{name} is not implemented in tapeflow")
    raise AttributeError(f"module 'tapeflow.keras.config' has no attribute '{name}'")
