"""``tf.keras.Model`` (subclassed and functional) and ``tf.keras.Sequential``."""

from __future__ import annotations

from typing import Any

from tapeflow.framework import dtypes, nest
from tapeflow.keras.layers.base import (
    InputLayer,
    KerasTensor,
    Layer,
    Node,
    _keras_default_build,
    cast_input,
    unique_name,
)
from tapeflow.keras.layers import masking as _masking
from tapeflow.keras.trainer import Trainer
from tapeflow.framework.tensor import Tensor

__all__ = ["Model", "Sequential", "Functional"]


def _split_io(args: tuple, kwargs: dict) -> tuple[Any, Any, tuple, dict]:
    inputs, outputs = kwargs.pop("inputs", None), kwargs.pop("outputs", None)
    args = list(args)
    if inputs is None and args and _is_symbolic(args[0]):
        inputs = args.pop(0)
    if outputs is None and args and _is_symbolic(args[0]):
        outputs = args.pop(0)
    return inputs, outputs, tuple(args), kwargs


def _is_symbolic(x: Any) -> bool:
    leaves = nest.flatten(x)
    return bool(leaves) and all(isinstance(v, KerasTensor) for v in leaves)


class Model(Trainer, Layer):
    """A layer with training (``compile``/``fit``/``evaluate``/``predict``).

    Build it by subclassing (layers as attributes, ``call`` computes) or
    functionally: ``tf.keras.Model(inputs=x_in, outputs=y)``.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Model:
        if cls is Model and _split_io(args, dict(kwargs))[0] is not None:
            return Layer.__new__(Functional, *args, **kwargs)  # as Keras 3: Model(inputs, outputs) is a Functional
        return Layer.__new__(cls, *args, **kwargs)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        inputs, outputs, args, kwargs = _split_io(args, kwargs)
        if inputs is not None or outputs is not None:
            if inputs is None or outputs is None:
                raise ValueError("A functional Model needs both `inputs` and `outputs`.")
            name = kwargs.pop("name", None)
            name = name if name is not None else unique_name("functional")
            Layer.__init__(self, name=name, **{k: v for k, v in kwargs.items() if k in ("trainable", "dtype")})
            Trainer.__init__(self)
            self._init_graph(inputs, outputs)
            return
        if args:  # Keras 3's Layer.__init__ takes its arguments by keyword only
            raise TypeError(f"Layer.__init__() takes 1 positional argument but {len(args) + 1} were given")
        name = kwargs.pop("name", None)
        Layer.__init__(self, name=name, **kwargs)
        Trainer.__init__(self)
        self._functional = None

    # -- the functional graph ----------------------------------------------------
    def _init_graph(self, inputs: Any, outputs: Any) -> None:
        self._inputs_struct, self._outputs_struct = inputs, outputs
        self._input_tensors = nest.flatten(inputs)
        order: list[Node] = []
        seen: set[int] = set()
        input_ids = {id(t) for t in self._input_tensors}

        def visit(kt: KerasTensor) -> None:
            if id(kt) in input_ids:
                return
            hist = kt._keras_history
            if hist is None or hist[1] is None:
                raise ValueError(
                    f"Output tensor {kt} is not connected to the model's inputs: every path must start at "
                    f"one of the `inputs` passed to Model(inputs, outputs)."
                )
            node = hist[1]
            if id(node) in seen:
                return
            for t in node.input_tensors:
                visit(t)
            seen.add(id(node))
            order.append(node)

        for kt in nest.flatten(outputs):
            visit(kt)
        self._nodes = order
        input_layers = [t._keras_history[0] for t in self._input_tensors if t._keras_history]
        layers: list[Layer] = []
        for node in order:
            if not any(node.layer is x for x in layers):
                layers.append(node.layer)
        self._layer_order, self._sequential_like = _keras_layer_order(self._input_tensors, nest.flatten(outputs))
        order_key = self._layer_order
        self._input_layers = sorted(input_layers, key=lambda x: order_key.get(id(x), (0, 0)))
        self._functional = layers = sorted(layers, key=lambda x: order_key.get(id(x), (0, 0)))
        for layer in layers:
            if not any(layer is x for x in self._layers):
                self._layers.append(layer)
        self.output_names = self._output_names()  # Keras 3's Functional: its output layers' names
        self.built = True

    @property
    def inputs(self) -> list:
        return list(self._input_tensors) if self._functional is not None else None

    @property
    def outputs(self) -> list:
        return nest.flatten(self._outputs_struct) if self._functional is not None else None

    @property
    def input(self) -> Any:
        return self._inputs_struct if self._functional is not None else Layer.input.fget(self)

    @property
    def output(self) -> Any:
        return self._outputs_struct if self._functional is not None else Layer.output.fget(self)

    @property
    def input_shape(self) -> Any:
        if self._functional is None:
            raise AttributeError(f"Model {self.name} has no defined input shape: only a functional model has one.")
        shapes = [k.shape for k in nest.flatten(self._inputs_struct)]  # Keras's: flat, one input unwrapped
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def output_shape(self) -> Any:
        if self._functional is None:
            return Layer.output_shape.fget(self)
        shapes = [k.shape for k in nest.flatten(self._outputs_struct)]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def layers(self) -> list:
        if self._functional is not None:
            from tapeflow.keras.layers.base import _OpLayer

            return sorted([x for x in list(self._input_layers) + list(self._functional) if not isinstance(x, _OpLayer)],
                          key=lambda x: self._layer_order.get(id(x), (0, 0)))
        return list(self._layers)

    def _summary_layers(self) -> list:
        # summary() also shows the operations (x * 2.0) that model.layers leaves out, as Keras 3
        if self._functional is None:
            return self.layers
        return sorted(list(self._input_layers) + list(self._functional),
                      key=lambda x: self._layer_order.get(id(x), (0, 0)))

    def _run_graph(self, inputs: Any, training: Any) -> Any:
        flat = nest.flatten(inputs) if nest.is_nested(self._inputs_struct) or isinstance(inputs, (list, tuple)) \
            else [inputs]
        if isinstance(inputs, dict) and isinstance(self._inputs_struct, dict):
            flat = [inputs[k] for k in sorted(self._inputs_struct)]
        elif isinstance(inputs, dict):  # a dict for a list of Inputs: matched by the Inputs' names (as Keras)
            names = [t._keras_history[0].name if t._keras_history else None for t in self._input_tensors]
            if all(n in inputs for n in names):
                flat = [inputs[n] for n in names]
        if len(flat) != len(self._input_tensors):
            raise ValueError(f"Model '{self.name}' expects {len(self._input_tensors)} input(s), got {len(flat)}.")
        for i, (v, k) in enumerate(zip(flat, self._input_tensors)):
            _check_input_shape(self.name, i, v, k)
        flat = [_adjust_input_rank(v, k) for v, k in zip(flat, self._input_tensors)]
        values = {id(k): self._input_tensors[i]._keras_history[0]._convert(v) if self._input_tensors[i]._keras_history
                  else v for i, (k, v) in enumerate(zip(self._input_tensors, flat))}

        def sub(x):
            return values[id(x)] if isinstance(x, KerasTensor) else x

        for node in self._nodes:
            args = nest.map_structure(sub, node.args)
            kwargs = nest.map_structure(sub, node.kwargs)
            if training is not None:
                kwargs["training"] = training
            out = node.layer(*args, **kwargs)
            for kt, v in zip(nest.flatten(node.outputs), nest.flatten(out)):
                values[id(kt)] = v
        return nest.map_structure(sub, self._outputs_struct)

    def call(self, inputs: Any, training: Any = None, mask: Any = None, **kwargs: Any) -> Any:
        if self._functional is not None:
            return self._run_graph(inputs, training)
        raise NotImplementedError(
            f"Model '{self.name}' has no call(): subclass tf.keras.Model and define call(self, inputs, "
            f"training=None), or build it functionally with tf.keras.Model(inputs, outputs)."
        )

    @_keras_default_build  # Keras's Model keeps Layer's default build
    def build(self, input_shape: Any = None) -> None:
        # A subclassed model builds its sub-layers by running once on zeros (Keras does the same).
        if self._functional is None and input_shape is not None and not self.built \
                and type(self).call is not Model.call:
            import numpy as np

            from tapeflow.framework.tensor import constant

            shape = tuple(1 if d is None else d for d in input_shape)
            self.built = True
            self(constant(np.zeros(shape, np.float32)))
        self.built = True

    def _maybe_build(self, inputs: Any) -> None:
        if not self.built and getattr(self, "_build_input_shape", None) is None:  # Keras' build_config
            from tapeflow.keras.layers.base import _shape_of

            self._build_input_shape = nest.map_structure(_shape_of, inputs)
        self.built = True  # subclassed models build their layers lazily inside call

    def _trackable_children(self) -> dict:
        """Checkpoint protocol: Sequential and functional models name their
        layers ``layer_with_weights-<i>`` (as TF Keras checkpoints); a
        subclassed model uses its attribute names."""
        if self._functional is None and not isinstance(self, Sequential):
            return Layer._trackable_children(self)
        out: dict = {}
        for v in self._own_trainable + self._own_non_trainable:
            out[getattr(v, "_keras_name", v.name)] = v
        layers = self._sublayers()
        for i, layer in enumerate(x for x in layers if x.weights):
            out[f"layer_with_weights-{i}"] = layer
        return out

    def get_config(self) -> dict:
        """A functional model: its layers and how they connect (Keras 3's layout); a subclassed model:
        its constructor arguments (override it to add your own)."""
        if self._functional is not None and type(self) in (Model, Functional):
            from tapeflow.keras.saving.model_config import functional_config

            return functional_config(self)
        return Layer.get_config(self)

    @classmethod
    def from_config(cls, config: dict, custom_objects: dict | None = None) -> Model:
        if cls in (Model, Functional) and "input_layers" in config and "layers" in config:
            from tapeflow.keras.saving.model_config import functional_from_config

            return functional_from_config(cls, config, custom_objects)
        return super().from_config(config)

    def to_json(self, **kwargs: Any) -> str:
        """The model's architecture as JSON (``tf.keras.models.model_from_json`` rebuilds it)."""
        import json

        from tapeflow.keras.saving.serialization import serialize_keras_object

        return json.dumps(serialize_keras_object(self), **kwargs)  # build_config and compile_config too, as Keras

    def get_layer(self, name: str | None = None, index: int | None = None) -> Layer:
        if index is not None:
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: {[x.name for x in self.layers]}.")

    def summary(self, line_length: int | None = None, positions: Any = None, print_fn: Any = None,
                expand_nested: bool = False, show_trainable: bool = False, layer_range: Any = None) -> None:
        """Prints the layers, their output shapes and parameter counts."""
        from tapeflow.keras.io_utils import print_msg
        from tapeflow.keras.trainer import format_summary

        text = format_summary(self, expand_nested=expand_nested, show_trainable=show_trainable,
                              layer_range=layer_range)
        if print_fn is None:
            print_msg(text)
        else:
            print_fn(text + "\n")  # Keras hands print_fn the captured console text, which ends with a newline


def _keras_layer_order(inputs: list, outputs: list) -> tuple[dict, bool]:
    """``{id(layer): sort key}`` giving Keras' order of a functional model's layers (and so of its
    weights): deepest first (an input is deepest), ties in the order a depth-first walk from the
    outputs first meets them (Keras' ``functional.map_graph``)."""
    input_ids = {id(t) for t in inputs}
    index: dict[int, int] = {}
    layer_of: dict = {}
    parents: dict = {}
    post: list = []

    def key(kt: KerasTensor) -> Any:
        layer, node = kt._keras_history
        return ("input", id(layer)) if node is None or id(kt) in input_ids else id(node)

    def walk(kt: KerasTensor) -> None:
        k = key(kt)
        if k in parents:
            return
        layer, node = kt._keras_history
        index.setdefault(id(layer), len(index))
        layer_of[k] = layer
        parents[k] = []
        if not isinstance(k, tuple):
            for t in node.input_tensors:
                parents[k].append(key(t))
                walk(t)
        post.append(k)

    for kt in outputs:
        if kt._keras_history is not None:
            walk(kt)
    node_depth: dict = {}
    layer_depth: dict[int, int] = {}
    for k in reversed(post):
        d = max(node_depth.setdefault(k, 0), layer_depth.get(id(layer_of[k]), 0))
        layer_depth[id(layer_of[k])] = node_depth[k] = d
        for p in parents[k]:
            node_depth[p] = max(d + 1, node_depth.get(p, 0))
    for t in inputs:  # an input not connected to the outputs
        if t._keras_history is not None and id(t._keras_history[0]) not in layer_depth:
            layer_depth[id(t._keras_history[0])], index[id(t._keras_history[0])] = 0, -1
    # summary() draws a "Connected to" column unless the graph is a chain (Keras' sequential_like):
    # one node per depth, each with at most one input, each layer called once
    per_depth: dict[int, int] = {}
    for d in node_depth.values():
        per_depth[d] = per_depth.get(d, 0) + 1
    chain = all(n == 1 for n in per_depth.values()) and all(len(p) <= 1 for p in parents.values()) \
        and len({id(x) for x in layer_of.values()}) == len(layer_of) and len(inputs) <= 1
    return {i: (-layer_depth[i], index[i]) for i in layer_depth}, chain


class Functional(Model):
    """A model built from ``Input``s and layer calls (what ``Model(inputs, outputs)`` builds)."""


class Sequential(Model):
    """A linear stack of layers.

    >>> model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"), tf.keras.layers.Dense(1)])
    >>> model(tf.ones((2, 3))).shape
    TensorShape([2, 1])
    """

    _first_call_builds_nodes = True

    def __init__(self, layers: Any = None, trainable: bool = True, name: str | None = None) -> None:
        Layer.__init__(self, trainable=trainable, name=name if name is not None else unique_name("sequential"))
        Trainer.__init__(self)
        self._functional = None
        self._input_tensor: KerasTensor | None = None
        self._input_layer_obj: InputLayer | None = None
        for layer in layers or []:
            self.add(layer, rebuild=False)
        self._input_from_first_layer()
        if self._input_tensor is not None and self._layers:
            self._build_symbolic()

    def _input_from_first_layer(self) -> None:
        """Keras's ``_maybe_rebuild``: a first layer with an ``input_shape`` (a built Sequential or Functional,
        e.g. a data-augmentation block made with ``input_shape=``) gives the model its input."""
        if self._input_tensor is not None or len(self._layers) < 2:
            return
        try:
            shape = self._layers[0].input_shape
        except AttributeError:
            return
        dims = getattr(shape, "as_list", lambda: shape)()
        if isinstance(dims, (list, tuple)) and all(d is None or isinstance(d, int) for d in dims):
            self._input_layer_obj = InputLayer(batch_shape=tuple(dims))
            self._input_tensor = self._input_layer_obj.output_tensor

    def get_config(self) -> dict:
        from tapeflow.keras.saving.model_config import sequential_config

        return sequential_config(self)

    @classmethod
    def from_config(cls, config: dict, custom_objects: dict | None = None) -> Sequential:
        from tapeflow.keras.saving.model_config import sequential_from_config

        return sequential_from_config(cls, config, custom_objects)

    def add(self, layer: Any, rebuild: bool = True) -> None:
        """Appends a layer (or an ``Input``)."""
        if isinstance(layer, KerasTensor):
            layer = layer._keras_history[0]
        if isinstance(layer, InputLayer):
            if self._layers or self._input_layer_obj is not None:
                raise ValueError("Sequential: an Input / InputLayer can only be the first layer.")
            self._input_layer_obj = layer
            self._input_tensor = layer.output_tensor
            return
        if not isinstance(layer, Layer):
            raise TypeError(f"Only instances of `keras.Layer` can be added to a Sequential model. Received: {layer!r} "
                            f"(of type {type(layer)})")
        if any(layer.name == x.name for x in self._layers):
            raise ValueError(f"All layers added to a Sequential model should have unique names. Name '{layer.name}' "
                             f"is already the name of a layer in this model.")
        if not self._layers and self._input_tensor is None and layer._input_shape_arg is not None:
            self._input_layer_obj = InputLayer(batch_shape=layer._input_shape_arg)
            self._input_tensor = self._input_layer_obj.output_tensor
        self._layers.append(layer)
        if rebuild:
            self._input_from_first_layer()
        if rebuild and self._input_tensor is not None:
            self._build_symbolic()

    def pop(self, rebuild: bool = True) -> Layer:
        if not self._layers:
            raise TypeError("There are no layers in the model.")
        layer = self._layers.pop()
        self.built = False
        if rebuild and self._input_tensor is not None and self._layers:
            self._build_symbolic()
        return layer

    def _build_symbolic(self) -> None:
        unique_name("functional")  # each build makes a Functional in Keras 3, which takes an auto-name
        x = self._input_tensor
        with self._open_name_scope():  # Keras 3 builds inside the model's scope: sequential/dense/kernel
            for layer in self._layers:
                x = layer(x)
        self._symbolic_output = x
        self.built = True

    def build(self, input_shape: Any = None) -> None:
        if input_shape is not None and self._input_tensor is None:
            self._input_layer_obj = InputLayer(batch_shape=tuple(input_shape))
            self._input_tensor = self._input_layer_obj.output_tensor
        if self._input_tensor is None:
            raise ValueError("Sequential.build: pass an input_shape, or start the model with tf.keras.Input(shape=...)")
        self._build_symbolic()

    def _maybe_build(self, inputs: Any) -> None:
        if not self.built and self._input_tensor is None:
            # Keras 3 builds an InputLayer and a Functional on the first call, calling each layer on a KerasTensor:
            # the auto-names they take (KerasTensors printed later are numbered after them)
            unique_name("input_layer")
            unique_name("keras_tensor")  # its Input; call() takes the layers' names as it runs them
            self._names_as_built = True
            unique_name("functional")
            shape = getattr(inputs, "shape", None)
            # Keras 3 builds for the first call's shape, batch size included: input_shape (4, 3)
            self._called_input_shape = None if shape is None else tuple(shape)
        self.built = True

    @property
    def layers(self) -> list:
        return list(self._layers)

    @property
    def inputs(self) -> list | None:
        return None if self._input_tensor is None else [self._input_tensor]

    @property
    def outputs(self) -> list | None:
        out = getattr(self, "_symbolic_output", None)
        return None if out is None else [out]

    @property
    def input_shape(self) -> Any:
        if self._input_tensor is None:
            if getattr(self, "_called_input_shape", None) is not None:
                return self._called_input_shape
            raise AttributeError(f"Sequential model '{self.name}' has no defined input shape yet.")
        return self._input_tensor.shape

    @property
    def output_shape(self) -> Any:
        out = getattr(self, "_symbolic_output", None)
        if out is None:
            last = getattr(self._layers[-1], "_built_output_shape", None) if self._layers else None
            if getattr(self, "_called_input_shape", None) is not None and last is not None:
                return last
            raise AttributeError(f"Sequential model '{self.name}' has no defined output shape yet.")
        return nest.map_structure(lambda k: k.shape, out)

    def call(self, inputs: Any, training: Any = None, mask: Any = None, **kwargs: Any) -> Any:
        if not self._layers:
            raise ValueError(f"Sequential model '{self.name}' has no layers; add some with model.add(layer).")
        x = inputs if self._input_tensor is None else _adjust_input_rank(inputs, self._input_tensor)
        # Keras 3 runs a built Sequential as a Functional, whose input casts to the Input's dtype; one built on its
        # first call has an Input of the first layer's compute dtype
        if self._input_tensor is not None:
            x = cast_input(x, self._input_tensor.dtype)
        else:
            first = self._layers[0]
            dtype = getattr(first, "_keras_compute_dtype", first.compute_dtype)
            # strings fail the cast where Keras's build gives an Input a numeric dtype for sure: a nested model
            # (float32 whatever it takes) or an integer first layer (Hashing); other layers reject them themselves
            strict = isinstance(first, Model) or dtypes.as_dtype(dtype).is_integer
            x = cast_input(x, dtype, strings=strict)
        count = self.__dict__.pop("_names_as_built", False)
        for layer in self._layers:
            before = _masking.get_mask(x) if count else None
            x = layer(x, training=training)
            if count:  # the KerasTensors Keras's build made: each output, and each new mask
                unique_name("keras_tensor")
                after = _masking.get_mask(x) if isinstance(x, Tensor) else None
                if after is not None and not (before is not None and type(layer).compute_mask is Layer.compute_mask):
                    unique_name("keras_tensor")
        return x


def _check_input_shape(model: str, index: int, x: Any, ref: Any) -> None:
    """Keras 3's input spec of a functional model: each known dim of the input must be its ``Input``'s (a
    trailing axis of 1 on either side ignored), else the ValueError Keras raises before the call."""
    shape, spec = getattr(x, "shape", None), getattr(ref, "shape", None)
    if shape is None or spec is None or getattr(shape, "rank", 0) is None:
        return
    found, expected = tuple(shape), (None,) + tuple(spec)[1:]
    a, b = found[:-1] if found and found[-1] == 1 else found, expected[:-1] if expected[-1:] == (1,) else expected
    if any(e is not None and d is not None and e != d for e, d in zip(b, a)):
        name = ref._keras_history[0].name if ref._keras_history else None
        raise ValueError(f"Input {index} with name '{name}' of layer '{model}' is incompatible with the layer: "
                         f"expected shape={expected}, found shape={a}")


def _adjust_input_rank(x: Any, ref: Any) -> Any:
    """Keras 3's input rank adjustment: an input one rank short of its ``Input`` whose
    last dim is 1 gets that axis, one with an extra trailing axis of 1 loses it."""
    shape = getattr(x, "shape", None)
    ref_shape = getattr(ref, "shape", None)
    if shape is None or ref_shape is None or isinstance(x, (list, tuple, dict)):
        return x
    rank, ref_rank = len(shape), len(ref_shape)
    if rank == ref_rank:
        return x
    from tapeflow.ops import array_ops

    if rank == ref_rank + 1 and shape[-1] == 1:
        return array_ops.squeeze(x, axis=-1)
    if rank == ref_rank - 1 and ref_shape[-1] == 1:
        return array_ops.expand_dims(x, -1)
    raise ValueError(f"Invalid input shape for input {x!r} with name '{getattr(ref, 'name', '')}'. Expected shape "
                     f"{tuple(ref_shape)}, but input has incompatible shape {tuple(shape)}")


def load_model(filepath: Any, custom_objects: dict | None = None, compile: bool = True,  # noqa: A002
               safe_mode: bool = True) -> Model:
    """Loads a ``.keras`` file (written by ``model.save``, tapeflow's or real Keras 3's)."""
    from tapeflow.keras.saving import saving_lib

    return saving_lib.load_model(filepath, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode)


def save_model(model: Model, filepath: Any, overwrite: bool = True, zipped: bool | None = None, **kwargs: Any) -> None:
    """``model.save(filepath)``: Keras 3's ``.keras`` archive."""
    from tapeflow.keras.saving import saving_lib

    saving_lib.save_model(model, filepath, overwrite=overwrite, zipped=zipped, **kwargs)


def model_from_config(config: dict, custom_objects: dict | None = None) -> Model:
    """Rebuilds a model (new weights) from ``{"class_name": ..., "config": ...}``."""
    from tapeflow.keras.saving.serialization import deserialize_keras_object

    return deserialize_keras_object(config, custom_objects)


def model_from_json(json_string: str, custom_objects: dict | None = None) -> Model:
    """Rebuilds a model (new weights) from ``model.to_json()``."""
    import json

    return model_from_config(json.loads(json_string), custom_objects)


def clone_model(model: Model, input_tensors: Any = None, clone_function: Any = None, call_function: Any = None,
                recursive: bool = False, **kwargs: Any) -> Model:
    """A new model with the same architecture and freshly initialized weights (Keras' ``clone_model``)."""
    from tapeflow.keras.saving.serialization import deserialize_keras_object, serialize_keras_object

    if input_tensors is not None or call_function is not None or kwargs:
        raise NotImplementedError("clone_model(input_tensors=/call_function=) is not implemented in tapeflow")
    if clone_function is not None:
        if isinstance(model, Sequential):
            layers = [clone_function(x) for x in model._layers]
            if model._input_layer_obj is not None:
                layers = [InputLayer(batch_shape=model._input_layer_obj.batch_shape)] + layers
            return Sequential(layers, name=model.name)
        raise NotImplementedError("clone_model(clone_function=...) of a functional model is not implemented")
    config = serialize_keras_object(model)
    config.pop("compile_config", None)
    return deserialize_keras_object(config)


# Keras names tapeflow lacks: NotImplementedError (also an AttributeError, for hasattr)
from tapeflow.keras._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("tf.keras.models", frozenset())
