"""``tf.keras.export``: Keras 3's ``ExportArchive`` and ``Model.export(format="tf_saved_model")`` (TF backend).

An archive holds the tracked layers' variables and ``tf.function`` endpoints and writes them with
``tf.saved_model.save`` — tapeflow's own SavedModel format (see the README), which ``tf.saved_model.load``
reloads without the model's Python code: each endpoint is a callable attribute, and ``signatures`` holds
them with ``serving_default`` (the first endpoint unless one has that name), as Keras writes them.
"""

from __future__ import annotations

from typing import Any

from tapeflow.framework import namespaces as _namespaces
from tapeflow.framework.variables import Variable
from tapeflow.keras.io_utils import print_msg
from tapeflow.module import Module

__all__ = ["ExportArchive"]

DEFAULT_ENDPOINT_NAME = "serve"


def _tf() -> Any:
    return _namespaces.get("tapeflow")


class _Trackable(Module):
    """The archive's object graph: endpoints and variable lists as plain attributes (Keras's AutoTrackable)."""

    variables = trainable_variables = non_trainable_variables = None  # (attributes here, not Module's properties)


class ExportArchive:
    """Collects layers (``track``), serving functions (``add_endpoint``) and variable collections, then writes
    one SavedModel (``write_out``)."""

    def __init__(self) -> None:
        self._endpoint_names: list = []
        self._endpoint_signatures: dict = {}
        self.tensorflow_version = "2.21.0"  # the TF whose Keras this follows
        self._tf_trackable = _Trackable()
        self._tf_trackable.variables = []
        self._tf_trackable.trainable_variables = []
        self._tf_trackable.non_trainable_variables = []
        self._tracked: list = []

    @property
    def variables(self) -> list:
        return self._tf_trackable.variables

    @property
    def trainable_variables(self) -> list:
        return self._tf_trackable.trainable_variables

    @property
    def non_trainable_variables(self) -> list:
        return self._tf_trackable.non_trainable_variables

    def track(self, resource: Any) -> None:
        """Adds a built layer's or model's variables (or a ``tf.Module``'s) to the archive."""
        from tapeflow.keras.layers.base import Layer

        if isinstance(resource, Layer):
            if not resource.built:
                raise ValueError("The layer provided has not yet been built. It must be built before export.")
            self._tracked.append(resource)
            known = {id(v) for v in self._tf_trackable.variables}
            for kind, vs in (("trainable_variables", resource.trainable_variables),
                             ("non_trainable_variables", resource.non_trainable_variables)):
                for v in vs:
                    if id(v) not in known:
                        known.add(id(v))
                        self._tf_trackable.variables.append(v)
                        getattr(self._tf_trackable, kind).append(v)
        elif isinstance(resource, Module):
            self._tracked.append(resource)
            setattr(self._tf_trackable, f"_tracked_{len(self._tracked)}", resource)
        else:
            raise ValueError("Invalid resource type. Expected a Keras `Layer` or `Model` or a TensorFlow `Trackable` "
                             f"object. Received object {resource} of type '{type(resource)}'. ")

    def add_endpoint(self, name: str, fn: Any, input_signature: Any = None, **kwargs: Any) -> Any:
        """Registers ``fn`` (a ``tf.function`` already called, or any callable with ``input_signature``) as the
        endpoint ``name``; returns the ``tf.function``."""
        if name in self._endpoint_names:
            raise ValueError(f"Endpoint name '{name}' is already taken.")
        if "jax2tf_kwargs" in kwargs or "is_static" in kwargs:
            raise ValueError("'jax2tf_kwargs' and 'is_static' are only supported with the jax backend. Current "
                             "backend: tensorflow")
        tf = _tf()
        if input_signature is None:
            if not isinstance(fn, tf.types.experimental.GenericFunction):
                raise ValueError(
                    "If the `fn` argument provided is not a `tf.function`, you must provide an `input_signature` "
                    "argument to specify the shape and dtype of the function arguments. Example:\n\n"
                    "export_archive.add_endpoint(\n    name='call',\n    fn=model.call,\n    input_signature=[\n"
                    "        keras.InputSpec(\n            shape=(None, 224, 224, 3),\n            dtype='float32',\n"
                    "        )\n    ],\n)")
            if not fn._concrete_functions():
                raise ValueError(f"The provided tf.function '{fn}' has never been called. To specify the expected "
                                 "shape and dtype of the function's arguments, you must either provide a function "
                                 "that has been called at least once, or alternatively pass an `input_signature` "
                                 "argument in `add_endpoint()`.")
            decorated = fn
        else:
            input_signature = tf.nest.map_structure(_to_spec, input_signature)
            decorated = tf.function(fn, input_signature=input_signature, autograph=False)
        self._endpoint_signatures[name] = input_signature
        setattr(self._tf_trackable, name, decorated)
        self._endpoint_names.append(name)
        return decorated

    def track_and_add_endpoint(self, name: str, resource: Any, input_signature: Any, **kwargs: Any) -> Any:
        """``track(resource)``, then its ``__call__`` as the endpoint ``name``."""
        self.track(resource)
        return self.add_endpoint(name, resource.__call__, input_signature, **kwargs)

    def add_variable_collection(self, name: str, variables: Any) -> None:
        """Saves ``variables`` under ``name`` (a list attribute of the reloaded object)."""
        if not isinstance(variables, (list, tuple, set)):
            raise ValueError(f"Expected `variables` to be a list/tuple/set. Received instead object of type "
                             f"'{type(variables)}'.")
        if not all(isinstance(v, Variable) for v in variables):
            raise ValueError("Expected all elements in `variables` to be `tf.Variable` instances. Found instead the "
                             f"following types: {list({type(v) for v in variables})}")
        setattr(self._tf_trackable, name, list(variables))

    def write_out(self, filepath: Any, options: Any = None, verbose: bool = True) -> None:
        """Writes the SavedModel (endpoints, ``serving_default``, variables) to ``filepath``."""
        if not self._endpoint_names:
            raise ValueError("No endpoints have been set yet. Call add_endpoint().")
        signatures = {name: self._concrete(name) for name in self._endpoint_names}
        if "serving_default" not in signatures:
            signatures["serving_default"] = self._concrete(self._endpoint_names[0])
        _tf().saved_model.save(self._tf_trackable, str(filepath), signatures=dict(sorted(signatures.items())),
                               options=options)
        if verbose:
            endpoints = "\n\n".join(self._printed(name) for name in self._endpoint_names)
            print_msg(f"Saved artifact at '{filepath}'. The following endpoints are available:\n\n{endpoints}")

    def _concrete(self, name: str) -> Any:
        fn = getattr(self._tf_trackable, name)
        if self._endpoint_signatures.get(name) is not None:
            return fn.get_concrete_function()
        return fn._concrete_functions()[0]

    def _printed(self, name: str) -> str:
        lines = self._concrete(name).pretty_printed_signature(verbose=True).split("\n")
        return "\n".join([f"* Endpoint '{name}'"] + lines[1:])


def _to_spec(x: Any) -> Any:
    """A ``tf.TensorSpec`` for a ``keras.InputSpec``, ``KerasTensor`` or tensor (specs pass through)."""
    tf = _tf()
    from tapeflow.keras.layers import InputSpec
    from tapeflow.keras.layers.base import KerasTensor

    if isinstance(x, tf.TensorSpec):
        return x
    if isinstance(x, KerasTensor):
        return tf.TensorSpec(x.shape, x.dtype, name=x.name)
    if isinstance(x, InputSpec):
        return tf.TensorSpec(x.shape, x.dtype or "float32", name=getattr(x, "name", None))
    if isinstance(x, tf.Tensor):
        return tf.TensorSpec(x.shape, x.dtype)
    return x


def get_input_signature(model: Any) -> list:
    """The model's inputs as specs (a functional model's input structure; else its built input shape)."""
    if not model.built:
        raise ValueError("The model provided has not yet been built. It must be built before export.")
    inputs = getattr(model, "_inputs_struct", None)
    if inputs is None and getattr(model, "inputs", None):
        inputs = model.inputs if len(model.inputs) > 1 else model.inputs[0]
    if inputs is not None:
        return [_tf().nest.map_structure(_to_spec, inputs)]
    shape = getattr(model, "_build_input_shape", None)  # a subclassed model: the shape it was built with
    if shape is None:
        raise ValueError("Unable to infer the model's input signature: pass `input_signature` to `export()`.")
    return [_tf().TensorSpec((None,) + tuple(shape)[1:], "float32", name="args_0")]  # any batch size, as Keras


def export_saved_model(model: Any, filepath: Any, verbose: bool | None = None, input_signature: Any = None,
                       **kwargs: Any) -> None:
    """``model.export(filepath)``: one ``serve`` endpoint, the model's forward pass."""
    archive = ExportArchive()
    if input_signature is None:
        input_signature = get_input_signature(model)
    archive.track_and_add_endpoint(DEFAULT_ENDPOINT_NAME, model, input_signature, **kwargs)
    archive.write_out(filepath, verbose=True if verbose is None else verbose)


from tapeflow.keras.layers.base import Layer  # noqa: E402 - after the archive: layers import nothing from here


class TFSMLayer(Layer):
    """A layer that calls an exported SavedModel's endpoint (``call_endpoint``, an attribute of the reloaded
    object or one of its ``signatures``; ``call_training_endpoint`` when training); its weights are the
    reloaded variables, trainable as they were saved (Keras 3.15's, TF backend)."""

    def __init__(self, filepath: Any, call_endpoint: str = "serve", call_training_endpoint: str | None = None,
                 trainable: bool = True, name: str | None = None, dtype: Any = None) -> None:
        super().__init__(trainable=trainable, name=name, dtype=dtype)
        self._reloaded_obj = _tf().saved_model.load(str(filepath))
        self.filepath = filepath
        self.call_endpoint = call_endpoint
        self.call_training_endpoint = call_training_endpoint
        self.call_endpoint_fn = self._endpoint(call_endpoint, True)
        if call_training_endpoint:
            self.call_training_endpoint_fn = self._endpoint(call_training_endpoint, False)
        for v in self._reloaded_obj.variables:
            (self._own_trainable if v.trainable else self._own_non_trainable).append(v)
        self.built = True

    def _endpoint(self, name: str, hint: bool) -> Any:
        if hasattr(self._reloaded_obj, name):
            return getattr(self._reloaded_obj, name)
        if name in self._reloaded_obj.signatures:
            return self._reloaded_obj.signatures[name]
        select = "Select another endpoint via the `call_endpoint` argument. " if hint else ""
        raise ValueError(f"The endpoint '{name}' is neither an attribute of the reloaded SavedModel, nor an entry in "
                         f"the `signatures` field of the reloaded SavedModel. {select}Available endpoints for this "
                         f"SavedModel: {list(self._reloaded_obj.signatures.keys())}")

    def call(self, inputs: Any, training: Any = False, **kwargs: Any) -> Any:
        if training and self.call_training_endpoint:
            return self.call_training_endpoint_fn(inputs, **kwargs)
        return self.call_endpoint_fn(inputs, **kwargs)

    def get_config(self) -> dict:
        from tapeflow.keras.saving.serialization import base_config

        return {**base_config(self), "filepath": self.filepath, "call_endpoint": self.call_endpoint,
                "call_training_endpoint": self.call_training_endpoint}
