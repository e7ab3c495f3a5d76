"""``tf.keras.optimizers``: Keras 3's optimizers with TF's exact update rules.

>>> opt = tf.keras.optimizers.get("adam")
>>> opt.learning_rate.numpy()
np.float32(0.001)
"""

from __future__ import annotations

from typing import Any

from tapeflow.keras.optimizers import schedules
from tapeflow.keras.optimizers.adadelta import Adadelta
from tapeflow.keras.optimizers.adafactor import Adafactor
from tapeflow.keras.optimizers.adagrad import Adagrad
from tapeflow.keras.optimizers.adam import Adam, AdamW
from tapeflow.keras.optimizers.adamax import Adamax
from tapeflow.keras.optimizers.ftrl import Ftrl
from tapeflow.keras.optimizers.lamb import Lamb
from tapeflow.keras.optimizers.lion import Lion
from tapeflow.keras.optimizers.loss_scale_optimizer import LossScaleOptimizer
from tapeflow.keras.optimizers.nadam import Nadam
from tapeflow.keras.optimizers.optimizer import Optimizer
from tapeflow.keras.optimizers.rmsprop import RMSprop
from tapeflow.keras.optimizers.sgd import SGD

__all__ = [
    "Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "Nadam", "Lion", "Lamb", "Ftrl",
    "Adafactor", "LossScaleOptimizer",
    "schedules",
    "get", "serialize", "deserialize",
]

_ALL = {c.__name__.lower(): c for c in (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, Nadam, Lion, Lamb,
                                        Ftrl, Adafactor)}


def serialize(optimizer: Optimizer) -> dict:
    """Keras 3's ``{"module": "keras.optimizers", "class_name", "config", "registered_name"}``."""
    from tapeflow.keras.saving.serialization import serialize_keras_object

    return serialize_keras_object(optimizer)


def deserialize(config: dict, custom_objects: dict | None = None) -> Optimizer:
    """Builds an optimizer from ``serialize``'s dict (class names are case
    insensitive, as Keras's)."""
    name = config.get("class_name", "")
    cls = (custom_objects or {}).get(name) or _ALL.get(str(name).lower())
    if cls is None:
        raise ValueError(f"Could not interpret optimizer identifier: {name!r}. Known optimizers: "
                         f"{sorted(c.__name__ for c in _ALL.values())}.")
    return cls.from_config(config.get("config", {}))


def get(identifier: Any) -> Optimizer | None:
    """An optimizer from a name (``"adam"``), a config dict, or an instance."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        obj = deserialize(identifier)
    elif isinstance(identifier, str):
        obj = deserialize({"class_name": identifier, "config": {}})
    else:
        obj = identifier
    if isinstance(obj, Optimizer):
        return obj
    raise ValueError(f"Could not interpret optimizer identifier: {identifier}")
