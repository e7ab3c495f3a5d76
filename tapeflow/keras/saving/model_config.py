"""The configs of ``Sequential`` and functional models, in Keras 3's layout (its ``config.json``):
a Sequential lists its layers; a functional model lists each layer with its ``inbound_nodes``
(the calls that connect it, tensors written as ``__keras_tensor__`` with their
``keras_history``: layer name, node index, tensor index)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import nest
from tapeflow.framework.tensor import convert_to_tensor
from tapeflow.keras.saving.serialization import (
    _dtype_policy,
    _shape_list,
    deserialize_keras_object,
    serialize_keras_object,
)


def sequential_config(model: Any) -> dict:
    layers = []
    if model._input_layer_obj is not None:
        layers.append(serialize_keras_object(model._input_layer_obj))
    layers += [serialize_keras_object(layer) for layer in model._layers]
    config = {"name": model.name, "trainable": model.trainable, "dtype": _dtype_policy(model.dtype), "layers": layers}
    shape = (
        model._input_layer_obj.batch_shape
        if model._input_layer_obj is not None
        else getattr(model, "_called_input_shape", None)
    )
    if shape is not None:
        config["build_input_shape"] = _shape_list(shape)
    return config


def sequential_from_config(cls: type, config: dict, custom_objects: dict | None = None) -> Any:
    layers = [deserialize_keras_object(c, custom_objects) for c in config.get("layers", [])]
    model = cls(layers, name=config.get("name"), trainable=config.get("trainable", True))
    shape = config.get("build_input_shape")
    if model._input_tensor is None and shape is not None:
        model.build(tuple(shape))
    return model


def _history(model: Any, kt: Any) -> list:
    layer, node = kt._keras_history
    if node is None:
        return [layer.name, 0, 0]
    mine = [n for n in layer._inbound_nodes if any(n is m for m in model._nodes)]
    node_index = next(i for i, n in enumerate(mine) if n is node)
    tensor_index = next(i for i, t in enumerate(nest.flatten(node.outputs)) if t is kt)
    return [layer.name, node_index, tensor_index]


def functional_config(model: Any) -> dict:
    from tapeflow.keras.layers.base import InputLayer, KerasTensor, _OpLayer

    def tensor(x: Any) -> Any:
        if isinstance(x, KerasTensor):
            return {
                "class_name": "__keras_tensor__",
                "config": {
                    "shape": _shape_list(x.shape.as_list() if hasattr(x.shape, "as_list") else x.shape),
                    "dtype": x._dtype.name,
                    "keras_history": _history(model, x),
                },
            }
        return serialize_keras_object(x)

    layers = []
    for layer in model._summary_layers():
        if isinstance(layer, _OpLayer):  # an operator node, saved as Keras saves its keras.ops operation
            layers.append({
                "module": layer._op_module, "class_name": layer._op_class, "config": layer.get_config(),
                "registered_name": layer._op_class, "name": layer.name,
                "inbound_nodes": [{"args": tuple(_op_arg(a, tensor) for a in layer._args),
                                   "kwargs": {k: _op_arg(v, tensor) for k, v in layer._kwargs.items()}}],
            })
            continue
        entry = serialize_keras_object(layer)
        entry["name"] = layer.name
        nodes = []
        if not isinstance(layer, InputLayer):
            for node in layer._inbound_nodes:
                if not any(node is m for m in model._nodes):
                    continue
                kwargs = dict(node.kwargs)  # an explicit training= stays, as Keras (MC dropout keeps it on)
                nodes.append(
                    {
                        "args": tuple(nest.map_structure(tensor, a) for a in node.args),
                        "kwargs": nest.map_structure(tensor, kwargs),
                    }
                )
        entry["inbound_nodes"] = nodes
        layers.append(entry)

    def io(structure: Any) -> Any:  # Keras's tree.map_structure: a dict of outputs stays a dict
        return nest.map_structure(lambda kt: _history(model, kt), structure)

    return {
        "name": model.name,
        "trainable": model.trainable,
        "layers": layers,
        "input_layers": io(model._inputs_struct),
        "output_layers": io(model._outputs_struct),
    }


def functional_from_config(cls: type, config: dict, custom_objects: dict | None = None) -> Any:
    from tapeflow.keras.layers.base import InputLayer
    from tapeflow.keras.models import Functional, Model

    created: dict[str, Any] = {}
    outputs_of: dict[tuple, list] = {}  # (layer name, node index) -> flat outputs
    pending: list[tuple[str, Any, list]] = []
    for entry in config["layers"]:
        if str(entry.get("module", "")).startswith("keras.src.ops"):
            layer = _Operation(entry)
        else:
            layer = deserialize_keras_object(
                {k: v for k, v in entry.items() if k not in ("inbound_nodes", "name")}, custom_objects
            )
        name = entry.get("name", layer.name)
        created[name] = layer
        if isinstance(layer, InputLayer):
            outputs_of[(name, 0)] = [layer.output_tensor]
        else:
            # keyed by the config's name: a custom layer whose get_config() drops `name` is renamed when
            # rebuilt, but the nodes still refer to it by the saved name (as Keras's created_layers)
            pending.append((name, layer, list(entry.get("inbound_nodes", []))))

    def ready(value: Any) -> bool:
        return all(
            (h["config"]["keras_history"][0], h["config"]["keras_history"][1]) in outputs_of
            for h in _tensor_refs(value)
        )

    def resolve(value: Any) -> Any:
        if isinstance(value, dict) and value.get("class_name") == "__keras_tensor__":
            from tapeflow.keras.layers.base import unique_name

            unique_name("keras_tensor")  # Keras deserializes the reference into a KerasTensor (an auto-name) first
            name, node, index = value["config"]["keras_history"]
            return outputs_of[(name, node)][index]
        if isinstance(value, dict) and value.get("class_name") in _SPECIAL:
            return _SPECIAL[value["class_name"]](value["config"], resolve)
        if isinstance(value, list):
            return [resolve(v) for v in value]
        if isinstance(value, dict):
            return {k: resolve(v) for k, v in value.items()}
        return value

    while pending:
        progressed = False
        for item in list(pending):
            name, layer, nodes = item
            while nodes and ready(nodes[0]):
                node = nodes.pop(0)
                args = [resolve(a) for a in node.get("args", [])]
                kwargs = {k: resolve(v) for k, v in node.get("kwargs", {}).items()}
                out = layer(*args, **kwargs)
                index = sum(1 for k in outputs_of if k[0] == name and k != (name, -1))
                outputs_of[(name, index)] = nest.flatten(out)
                progressed = True
            if not nodes:
                pending.remove(item)
        if not progressed:
            raise ValueError(
                f"The functional config of '{config.get('name')}' cannot be rebuilt: the inputs of "
                f"{[x[0] for x in pending]} are never produced."
            )

    def io(spec: Any) -> Any:  # Keras's map_tensors: [name, node, index] leaves in lists, tuples and dicts
        if isinstance(spec, list) and len(spec) == 3 and isinstance(spec[0], str):
            return outputs_of[(spec[0], spec[1])][spec[2]]
        if isinstance(spec, dict):
            return {k: io(v) for k, v in spec.items()}
        if isinstance(spec, tuple):
            return tuple(io(s) for s in spec)
        return [io(s) for s in spec]

    target = cls if cls is not Model else Functional
    if target is Functional:
        return Model(
            inputs=io(config["input_layers"]),
            outputs=io(config["output_layers"]),
            name=config.get("name"),
            trainable=config.get("trainable", True),
        )
    return target(inputs=io(config["input_layers"]), outputs=io(config["output_layers"]), name=config.get("name"))


def _tensor_refs(value: Any) -> list:
    if isinstance(value, dict) and value.get("class_name") == "__keras_tensor__":
        return [value]
    if isinstance(value, dict):
        return [r for v in value.values() for r in _tensor_refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _tensor_refs(v)]
    return []


# Operator nodes (``x * 2``, ``x[:, 0]``): Keras 3 writes their arguments with these markers.
_SPECIAL = {
    "__numpy__": lambda c, r: np.array(c["value"], dtype=c["dtype"]),
    "__tensor__": lambda c, r: convert_to_tensor(np.array(c["value"], dtype=c["dtype"])),  # saved again as one
    "__slice__": lambda c, r: slice(r(c["start"]), r(c["stop"]), r(c["step"])),
    "__ellipsis__": lambda c, r: Ellipsis,
    "__bytes__": lambda c, r: c["value"].encode("utf-8"),
}


def _op_arg(value: Any, tensor: Any) -> Any:
    """One argument of an operator node in Keras 3's JSON form."""
    from tapeflow.keras.layers.base import KerasTensor

    if isinstance(value, KerasTensor):
        return tensor(value)
    if isinstance(value, (list, tuple)):
        return [_op_arg(v, tensor) for v in value]
    if isinstance(value, slice):
        return {"class_name": "__slice__", "config": {k: _op_arg(getattr(value, k), tensor)
                                                       for k in ("start", "stop", "step")}}
    if value is Ellipsis:
        return {"class_name": "__ellipsis__", "config": {}}
    if isinstance(value, np.ndarray) and value.ndim > 0:
        return {"class_name": "__numpy__", "config": {"value": value.tolist(), "dtype": value.dtype.name}}
    if hasattr(value, "numpy") and hasattr(value, "dtype"):  # a tensor or variable
        return {"class_name": "__tensor__", "config": {"value": np.asarray(value.numpy()).tolist(),
                                                        "dtype": value.dtype.name}}
    return serialize_keras_object(value)


class _Operation:
    """A saved operator node being rebuilt: called with its resolved arguments, it applies the
    operator again under its saved name."""

    def __init__(self, entry: dict) -> None:
        import tapeflow.keras.ops  # noqa: F401 - registers the keras.ops operations
        from tapeflow.keras.layers.base import _BY_CLASS

        self.name = entry.get("name") or entry["config"]["name"]
        self._op = _BY_CLASS.get(entry["class_name"])
        if self._op is None:
            raise NotImplementedError(
                f"Loading a functional model that applies the Keras operation {entry['module']}."
                f"{entry['class_name']} ('{self.name}') is not implemented in tapeflow: tapeflow rebuilds the "
                f"operations of Python operators on Keras tensors and of the keras.ops functions it implements."
            )
        config = {k: v for k, v in entry.get("config", {}).items() if k != "name"}
        self._decimals = config.pop("decimals", 0) if self._op == "round" else 0
        self._config = config or None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from tapeflow.keras.layers.base import _OpLayer

        if self._op == "get_item" and isinstance(args[1], list) and any(
                isinstance(k, slice) or k is Ellipsis or k is None for k in args[1]):
            args = (args[0], tuple(args[1]))  # Keras wrote the index tuple as a JSON list
        return _OpLayer(self._op, tuple(args), name=self.name, decimals=self._decimals, config=self._config,
                        kwargs=kwargs)()
