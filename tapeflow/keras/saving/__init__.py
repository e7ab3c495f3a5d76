"""``tf.keras.saving``: Keras 3's ``.keras`` archives and ``.weights.h5`` files (readable by real
Keras and back), object configs, and the registry of custom classes.

>>> model.save("model.keras")
>>> again = tf.keras.models.load_model("model.keras")
>>> model.save_weights("model.weights.h5")
"""

from __future__ import annotations

from typing import Any

from tapeflow.keras.saving.saving_lib import load_model, save_model
from tapeflow.keras.saving.serialization import (
    CustomObjectScope,
    custom_object_scope,
    deserialize_keras_object,
    get_custom_objects,
    get_registered_name,
    get_registered_object,
    register_keras_serializable,
    serialize_keras_object,
)

__all__ = [
    "save_model",
    "load_model",
    "save_weights",
    "load_weights",
    "register_keras_serializable",
    "get_registered_name",
    "get_registered_object",
    "get_custom_objects",
    "custom_object_scope",
    "CustomObjectScope",
    "serialize_keras_object",
    "deserialize_keras_object",
]


def save_weights(model: Any, filepath: Any, overwrite: bool = True, **kwargs: Any) -> None:
    """``model.save_weights(filepath)``."""
    model.save_weights(filepath, overwrite=overwrite, **kwargs)


def load_weights(model: Any, filepath: Any, skip_mismatch: bool = False, **kwargs: Any) -> Any:
    """``model.load_weights(filepath)``."""
    return model.load_weights(filepath, skip_mismatch=skip_mismatch, **kwargs)
