"""Keras 3's ``Pipeline``: a plain layer that applies a list of layers in turn."""

from __future__ import annotations

from typing import Any

from tapeflow.keras.layers.base import Layer

__all__ = ["Pipeline"]


class Pipeline(Layer):
    """Applies ``layers`` one after the other (Keras 3's ``Pipeline``), passing ``training`` to those that
    take it; unlike a ``Sequential`` it is a layer, not a model, and fits in ``tf.data.Dataset.map``:

    >>> augment = tf.keras.layers.Pipeline([tf.keras.layers.RandomFlip(), tf.keras.layers.RandomRotation(0.1)])
    >>> ds = ds.map(lambda x, y: (augment(x), y))

    Its config is Keras's (``{"layers": [...], "name": ...}``) and its weights file groups the layers under
    ``layers``, as Keras writes them.
    """

    _allow_non_tensor_positional_args = True
    _supports_masking = True

    def __init__(self, layers: list, name: str | None = None) -> None:
        super().__init__(name=name)
        self._pipeline_layers = list(layers)
        # Keras walks the public ``layers`` property into the weights file; the list sits under that name in
        # the instance's attributes so tapeflow's weights walk finds the same group
        self.__dict__["layers"] = self._pipeline_layers

    @property
    def layers(self) -> list:
        return self._pipeline_layers

    def call(self, inputs: Any, training: Any = True, mask: Any = None) -> Any:
        from tapeflow.keras.layers.base import _call_flags

        outputs = inputs
        for layer in self._pipeline_layers:
            kwargs = {}
            if _call_flags(layer)[0] and training is not None:
                kwargs["training"] = training
            outputs = layer(inputs, **kwargs)
            inputs = outputs
        return outputs

    def compute_output_shape(self, input_shape: Any) -> Any:
        for layer in self._pipeline_layers:
            input_shape = layer.compute_output_shape(input_shape)
        return input_shape

    def get_config(self) -> dict:
        from tapeflow.keras.saving.serialization import serialize_keras_object

        return {"layers": [serialize_keras_object(layer) for layer in self._pipeline_layers], "name": self.name}

    @classmethod
    def from_config(cls, config: dict) -> Pipeline:
        from tapeflow.keras.saving.serialization import deserialize_keras_object

        layers = config.get("layers")
        if not isinstance(layers, (list, tuple)):
            raise ValueError("`Pipeline` config must contain a `layers` key mapping to a list of serialized "
                             f"layers. Received config with layers={layers}.")
        return cls(**{**config, "layers": [deserialize_keras_object(x) for x in layers]})
