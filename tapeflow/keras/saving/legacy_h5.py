"""Keras's legacy whole-model HDF5 file (``model.save("m.h5")``, ``load_model("m.h5")``), as Keras 3
writes and reads it, via h5py.

The file's root attributes hold ``model_config`` (JSON: the model's class and config, each layer
entry without ``module``/``registered_name``/``build_config``), ``training_config`` (loss, metrics
and ``optimizer_config``) and the versions. Group ``model_weights`` lists ``layer_names`` and has a
group per layer whose ``weight_names`` attribute orders its variables (trainable, then
non-trainable), each stored as a dataset at its variable path; group ``optimizer_weights`` does the
same for the optimizer's variables. Loading matches layers by order, not by name, as Keras does.
Files written by Keras 2 (tf.keras) load too where their configs use names tapeflow knows.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any

import numpy as np

from tapeflow.keras.saving.serialization import CustomObjectScope, deserialize_keras_object, serialize_keras_object

__all__ = ["save_model_to_hdf5", "load_model_from_hdf5", "load_weights_from_hdf5"]

_ENTRY_KEYS = ("module", "registered_name", "build_config", "compile_config")


def _legacy_entries(config: dict) -> dict:
    """A model config with each layer entry (recursively, for nested models) in the legacy form."""
    out = dict(config)
    if isinstance(out.get("layers"), list):
        out["layers"] = [
            {k: (_legacy_entries(v) if k == "config" and isinstance(v, dict) else v)
             for k, v in entry.items() if k not in _ENTRY_KEYS}
            for entry in out["layers"]
        ]
    return out


def _legacy_object(value: Any) -> Any:
    """``{"class_name", "config"}`` for a serialized loss/metric/optimizer (strings stay strings)."""
    if isinstance(value, list):
        return [_legacy_object(v) for v in value]
    if isinstance(value, dict) and "class_name" in value and "config" in value:
        if value["class_name"] == "function":
            return value["config"]
        return {"class_name": value.get("registered_name") or value["class_name"], "config": value["config"]}
    return value


def _weights(layer: Any) -> list:
    return list(layer.trainable_weights) + list(layer.non_trainable_weights)


def _write_group(group: Any, variables: list) -> None:
    names = [str(v.path) for v in variables]
    group.attrs["weight_names"] = np.asarray([n.encode("utf8") for n in names]) if names else np.asarray([])
    for name, v in zip(names, variables):
        group.create_dataset(name, data=np.asarray(v.numpy()))


def save_model_to_hdf5(model: Any, filepath: str, include_optimizer: bool = True) -> None:
    """``model.save("m.h5")``: Keras 3's legacy HDF5 layout, written atomically."""
    import io

    from tapeflow.keras.saving.saving_lib import KERAS_VERSION
    from tapeflow.keras.saving.weights_h5 import h5py_module
    from tapeflow.train.checkpoint import _atomic_write

    h5py = h5py_module()
    full = serialize_keras_object(model)
    compile_config = full.get("compile_config")
    model_config = {"class_name": full["class_name"], "config": _legacy_entries(full["config"])}
    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        f.attrs["keras_version"] = KERAS_VERSION
        f.attrs["backend"] = "tensorflow"
        f.attrs["model_config"] = json.dumps(model_config).encode("utf8")
        optimizer = getattr(model, "optimizer", None)
        if include_optimizer and compile_config and optimizer is not None:
            training = {k: (_legacy_object(v) if k in ("loss", "metrics", "weighted_metrics", "loss_weights")
                            else v) for k, v in compile_config.items() if k != "optimizer"}
            training["optimizer_config"] = _legacy_object(compile_config["optimizer"])
            f.attrs["training_config"] = json.dumps(training).encode("utf8")
        weights = f.create_group("model_weights")
        weights.attrs["layer_names"] = np.asarray([layer.name.encode("utf8") for layer in model.layers])
        weights.attrs["backend"] = b"tensorflow"
        weights.attrs["keras_version"] = KERAS_VERSION.encode("utf8")
        for layer in sorted(model.layers, key=lambda x: x.name):
            _write_group(weights.create_group(layer.name), _weights(layer))
        in_layers = {id(v) for layer in model.layers for v in layer.weights}
        _write_group(weights.create_group("top_level_model_weights"),
                     [v for v in _weights(model) if id(v) not in in_layers])
        if include_optimizer and optimizer is not None and list(optimizer.variables):
            _write_group(f.create_group("optimizer_weights"), list(optimizer.variables))
    _atomic_write(filepath, buf.getvalue())


# -- reading -------------------------------------------------------------------------------------
def _names(group: Any, key: str) -> list[str]:
    """An attribute list of names; long lists are split over ``key0``, ``key1``, ... as Keras writes them."""
    if key in group.attrs:
        raw = list(group.attrs[key])
    else:
        raw, i = [], 0
        while f"{key}{i}" in group.attrs:
            raw += list(group.attrs[f"{key}{i}"])
            i += 1
    return [n.decode("utf8") if hasattr(n, "decode") else str(n) for n in raw]


_MODULE_OF_KEY = (("initializer", "keras.initializers"), ("regularizer", "keras.regularizers"),
                  ("constraint", "keras.constraints"))


def _with_modules(value: Any, module: str | None = None) -> Any:
    """Gives each module-less serialized object in a legacy config the Keras namespace its key implies
    (layers in ``layers`` lists and wrapper ``layer``/``cell`` slots, initializers, regularizers)."""
    if isinstance(value, list):
        return [_with_modules(v, module) for v in value]
    if not isinstance(value, dict):
        return value
    if "class_name" in value and "config" in value and module and "module" not in value:
        value = {**value, "module": module}
    out = {}
    for k, v in value.items():
        if k in ("layers", "layer", "cell", "backward_layer", "forward_layer"):
            sub = "keras.layers"
        else:
            sub = next((m for suffix, m in _MODULE_OF_KEY if k.endswith(suffix)), None)
        out[k] = _with_modules(v, sub) if sub or k == "config" else v
    return out


def _loss_functions(config: Any) -> Any:
    """Keras's legacy compile arguments: a loss named by a string is deserialized (``model.loss`` of a loaded
    model is the function ``sparse_categorical_crossentropy``), in nested lists and dicts too."""
    from tapeflow.keras import losses

    if isinstance(config, str):
        return losses.deserialize(config)
    if isinstance(config, dict) and "class_name" not in config:
        return {k: _loss_functions(v) for k, v in config.items()}
    if isinstance(config, (list, tuple)):
        return [_loss_functions(v) for v in config]
    return config


def _operations(config: dict) -> dict:
    """Marks operator nodes (``x * 2.0``) among a legacy functional config's layers: Keras writes them
    without a module, so ``Multiply`` could be the layer; an operator node's call has more than one
    positional argument or a non-tensor one."""
    from tapeflow.keras.layers.base import _BY_CLASS

    def is_tensor(a: Any) -> bool:
        return isinstance(a, dict) and a.get("class_name") == "__keras_tensor__"

    for entry in config.get("layers", []):
        nodes = entry.get("inbound_nodes") or []
        if entry.get("class_name") in _BY_CLASS and nodes and isinstance(nodes[0], dict):
            args = nodes[0].get("args", [])
            if len(args) != 1 or not (is_tensor(args[0]) or isinstance(args[0], list)):
                entry["module"] = "keras.src.ops.numpy"
    return config


def _assign(variables: list, values: list, what: str) -> None:
    if len(values) != len(variables):
        raise ValueError(f"Weight count mismatch for {what}: it expects {len(variables)} weight(s), "
                         f"the file holds {len(values)}.")
    for v, arr in zip(variables, values):
        if tuple(v.shape.as_list()) != tuple(arr.shape):
            raise ValueError(f"Shape mismatch in {what} for weight {v.path}. Weight expects shape "
                             f"{tuple(v.shape.as_list())}. Received saved weight with shape {tuple(arr.shape)}")
    for v, arr in zip(variables, values):
        v.assign(arr.astype(v.dtype.as_numpy_dtype, copy=False))


def load_weights_from_hdf5(group: Any, model: Any) -> None:
    """Keras's topological legacy weight loading: the k-th layer with weights gets the k-th saved
    layer group with weights."""
    layers = [layer for layer in model.layers if _weights(layer)]
    listed = _names(group, "layer_names")
    missing = [name for name in listed if name not in group]
    if missing:
        raise ValueError(f"The legacy HDF5 file lists layers {missing} in 'layer_names' but has no group for "
                         f"them: it is corrupt or truncated; save the model again.")
    saved = [name for name in listed if _names(group[name], "weight_names")]
    if len(saved) != len(layers):
        raise ValueError(f"Layer count mismatch when loading weights from file. Model expected {len(layers)} "
                         f"layers, found {len(saved)} saved layers.")
    for k, (name, layer) in enumerate(zip(saved, layers)):
        g = group[name]
        _assign(_weights(layer), [np.asarray(g[n]) for n in _names(g, "weight_names")],
                f"layer #{k} (named {layer.name} in the current model, {name} in the save file)")
    if "top_level_model_weights" in group:
        g = group["top_level_model_weights"]
        in_layers = {id(v) for layer in model.layers for v in layer.weights}
        _assign([v for v in _weights(model) if id(v) not in in_layers],
                [np.asarray(g[n]) for n in _names(g, "weight_names")], "the top-level model")


def _decode(value: Any) -> Any:
    return json.loads(value.decode("utf-8") if hasattr(value, "decode") else value)


def load_model_from_hdf5(filepath: str, custom_objects: dict | None = None, compile: bool = True) -> Any:  # noqa: A002
    """``load_model("m.h5")``: a model saved in the legacy HDF5 format (by Keras 3, tf.keras, or tapeflow)."""
    from tapeflow.keras.saving.saving_lib import compile_from_config
    from tapeflow.keras.saving.weights_h5 import _open_h5

    filepath = os.fspath(filepath)
    if not os.path.exists(filepath):
        raise FileNotFoundError(f"No such file or directory: '{filepath}'")
    with _open_h5(filepath) as f:
        if "model_config" not in f.attrs:
            raise ValueError(f"No model config found in the file at {filepath}.")
        config = _decode(f.attrs["model_config"])
        inner = _operations(_with_modules(config.get("config", {})))
        with CustomObjectScope(custom_objects or {}):
            model = deserialize_keras_object(
                {"module": "keras", "class_name": config["class_name"], "config": inner}, custom_objects)
        load_weights_from_hdf5(f["model_weights"], model)
        if not compile:
            return model
        if "training_config" not in f.attrs:
            warnings.warn("No training configuration found in the save file, so the model was *not* compiled. "
                          "Compile it manually.", stacklevel=3)
            return model
        training = _decode(f.attrs["training_config"])
        modules = {"loss": "keras.losses", "metrics": "keras.metrics", "weighted_metrics": "keras.metrics"}
        compile_config = {k: _with_modules(v, modules.get(k)) for k, v in training.items() if k != "optimizer_config"}
        compile_config["optimizer"] = {**training["optimizer_config"], "module": "keras.optimizers"}
        compile_config["loss"] = _loss_functions(compile_config.get("loss"))
        compile_from_config(model, compile_config, custom_objects)
        if "optimizer_weights" in f:
            g = f["optimizer_weights"]
            values = [np.asarray(g[n]) for n in _names(g, "weight_names")]
            optimizer = model.optimizer
            if not getattr(optimizer, "built", False):
                # Keras 3.15 builds it for model._trainable_variables, the model's OWN variables (none for a
                # Functional or Sequential model): only iterations and learning_rate take saved values, and
                # fit() on the loaded model raises "Unknown variable", as in TF
                optimizer.build(list(getattr(model, "_own_trainable", ())))
            variables = list(optimizer.variables)
            try:  # Keras's optimizer.set_weights: pairwise (zip), shapes checked
                _assign(variables, values[:len(variables)], f"optimizer '{optimizer.name}'")
            except ValueError:
                warnings.warn("Error in loading the saved optimizer state. As a result, your model is starting "
                              "with a freshly initialized optimizer.", stacklevel=3)
    return model
