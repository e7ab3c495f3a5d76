"""``tf.keras.utils.legacy``: Keras 2's ``{"class_name", "config"}`` serialization, which libraries built on Keras
(keras_tuner's hyperparameters, older custom objects) still call with their own ``module_objects`` tables."""

from __future__ import annotations

import inspect
from typing import Any

from tapeflow.keras.saving.serialization import CustomObjectScope, get_registered_name, get_registered_object

__all__ = ["deserialize_keras_object", "serialize_keras_object"]


def serialize_keras_object(instance: Any) -> Any:
    """``{"class_name": registered name, "config": get_config()}`` (config items that are objects serialized the same
    way and marked ``__passive_serialization__``), a function's registered name, or None."""
    instance = inspect.unwrap(instance) if callable(instance) else instance
    if instance is None:
        return None
    if hasattr(instance, "get_config"):
        config = {}
        for key, item in instance.get_config().items():
            if isinstance(item, str):
                config[key] = item
                continue
            try:
                out = serialize_keras_object(item)
                if isinstance(out, dict) and not isinstance(item, dict):
                    out["__passive_serialization__"] = True
                config[key] = out
            except ValueError:
                config[key] = item
        return {"class_name": get_registered_name(instance.__class__), "config": config}
    if hasattr(instance, "__name__"):
        return get_registered_name(instance)
    raise ValueError(f"Cannot serialize {instance} because it doesn't implement `get_config()`.")


def _unknown(what: str, name: str) -> ValueError:
    return ValueError(f"Unknown {what}: '{name}'. Please ensure you are using a `keras.utils.custom_object_scope` "
                      "and that this object is included in the scope. See "
                      "https://www.tensorflow.org/guide/keras/save_and_serialize#registering_the_custom_object for "
                      "details.")


def deserialize_keras_object(identifier: Any, module_objects: dict | None = None, custom_objects: dict | None = None,
                             printable_module_name: str = "object") -> Any:
    """The object a Keras 2 config describes, its class looked up in the registry, ``custom_objects`` and
    ``module_objects``; a name gives that function, or an instance of that class made with no arguments."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        if "class_name" not in identifier or "config" not in identifier:
            raise ValueError(f"Improper config format for {identifier}. Expecting python dict contains `class_name` "
                             "and `config` as keys")
        name = identifier["class_name"]
        cls = get_registered_object(name, custom_objects, module_objects)
        if cls is None:
            raise _unknown(printable_module_name, name)
        config = identifier["config"]
        if isinstance(config, dict):
            for key, item in list(config.items()):
                if key == "name":
                    continue
                if isinstance(item, dict) and "__passive_serialization__" in item:
                    config[key] = deserialize_keras_object(item, module_objects, custom_objects, "config_item")
                elif isinstance(item, str) and inspect.isfunction(
                        found := get_registered_object(item, custom_objects, module_objects)):
                    config[key] = found
        with CustomObjectScope(custom_objects or {}):
            if not hasattr(cls, "from_config"):
                return cls(**config)
            if "custom_objects" in inspect.signature(cls.from_config).parameters:
                return cls.from_config(config, custom_objects=custom_objects or {})
            return cls.from_config(config)
    if isinstance(identifier, str):
        obj = get_registered_object(identifier, custom_objects, module_objects)
        if obj is None:
            raise _unknown(printable_module_name, identifier)
        return obj() if inspect.isclass(obj) else obj
    if inspect.isfunction(identifier):
        return identifier
    raise ValueError(f"Could not interpret serialized {printable_module_name}: {identifier}")
