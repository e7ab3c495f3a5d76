"""``tf.keras.utils``: seeding and label helpers."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.keras.saving.serialization import (  # noqa: F401 - tf.keras.utils re-exports them, as TF's
    CustomObjectScope, custom_object_scope, deserialize_keras_object, get_custom_objects, get_registered_name,
    get_registered_object, register_keras_serializable, serialize_keras_object,
)

__all__ = ["set_random_seed", "to_categorical", "register_keras_serializable", "get_registered_name",
           "get_registered_object", "get_custom_objects", "custom_object_scope", "CustomObjectScope",
           "serialize_keras_object", "deserialize_keras_object"]


def set_random_seed(seed: int) -> None:
    """Seeds Python, NumPy, tf.random and the Keras initializers/shuffling at once."""
    import random

    from tapeflow.keras import initializers

    random.seed(seed)
    np.random.seed(seed)
    initializers.set_seed(seed)
    try:
        import tapeflow.random as tfr

        tfr.set_seed(seed)
    except (ImportError, AttributeError):
        pass


def to_categorical(x: Any, num_classes: int | None = None) -> np.ndarray:
    """One-hot encodes integer labels (float32, as Keras)."""
    x = np.asarray(x.numpy() if hasattr(x, "numpy") else x).astype("int64")
    shape = x.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    x = x.reshape(-1)
    n = num_classes or int(x.max()) + 1
    out = np.zeros((x.size, n), np.float32)
    out[np.arange(x.size), x] = 1
    return out.reshape(shape + (n,))
