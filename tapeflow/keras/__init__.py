"""``tf.keras``: layers, models, losses, metrics, initializers, callbacks and
(``tf.keras.optimizers``) optimizers, with Keras 3's behaviour and numbers.

>>> model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(1)])
>>> model.compile(optimizer="adam", loss="mse")
>>> history = model.fit(x, y, epochs=3, verbose=0)
"""

from __future__ import annotations

import importlib as _importlib

from tapeflow.keras import activations, callbacks, initializers, layers, losses, metrics, regularizers
from tapeflow.keras.layers import Input, Layer
from tapeflow.keras.models import Model, Sequential

__all__ = ["activations", "callbacks", "initializers", "layers", "losses", "metrics", "optimizers", "models",
           "regularizers", "constraints", "utils", "backend", "saving", "mixed_precision", "datasets",
           "preprocessing", "ops", "config", "tree", "dtype_policies", "applications", "random", "export", "Input",
           "Layer", "Model", "Sequential", "KerasTensor", "InputSpec", "Loss", "Metric", "Optimizer", "Initializer",
           "Regularizer", "DTypePolicy", "FloatDTypePolicy", "Variable", "name_scope", "device", "version"]


__version__ = "3.15.1"  # the Keras whose behaviour this follows (libraries test `keras.version()` for Keras 3)


def version() -> str:
    """The Keras version whose behaviour ``tf.keras`` follows (Keras 3's ``keras.version()``)."""
    return __version__


def __getattr__(name: str):
    # optimizers (another package) and the small utility namespaces load on first use
    if name in ("optimizers", "models", "utils", "backend", "trainer", "saving", "mixed_precision", "datasets",
                "constraints", "preprocessing", "ops", "config", "applications", "random", "tree",
                "dtype_policies", "export"):
        mod = _importlib.import_module(f"tapeflow.keras.{name}")
        globals()[name] = mod
        return mod
    if name in _CLASSES:
        module, attr = _CLASSES[name]
        value = getattr(_importlib.import_module(f"tapeflow.keras.{module}"), attr)
        globals()[name] = value
        return value
    if name in _MISSING:
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError(f"tf.keras.{name} is not implemented in tapeflow")
    raise AttributeError(f"module 'tapeflow.keras' has no attribute '{name}'")


# Keras 3's top-level classes, from the namespaces that define them
_CLASSES = {
    "KerasTensor": ("layers.base", "KerasTensor"), "InputSpec": ("layers", "InputSpec"), "Loss": ("losses", "Loss"),
    "Metric": ("metrics", "Metric"), "Optimizer": ("optimizers", "Optimizer"),
    "Initializer": ("initializers", "Initializer"), "Regularizer": ("regularizers", "Regularizer"),
    "DTypePolicy": ("mixed_precision", "DTypePolicy"), "FloatDTypePolicy": ("dtype_policies", "FloatDTypePolicy"),
    "Variable": ("variables", "Variable"), "name_scope": ("variables", "name_scope"), "device": ("variables", "device"),
}

# Keras namespaces tapeflow lacks: NotImplementedError naming them (also an AttributeError, for hasattr)
_MISSING = frozenset(("quantizers", "visualization",
                      "wrappers", "distribution"))
