"""Keras 3's ``Wrapper`` base class, ``UnitNormalization`` and the adaptive poolings (1-D, 2-D, 3-D)."""

from __future__ import annotations

from typing import Any

from tapeflow.framework.tensor import Tensor
from tapeflow.keras import backend as _backend
from tapeflow.keras.layers.base import Layer

__all__ = ["Wrapper", "UnitNormalization", "AdaptiveAveragePooling1D", "AdaptiveAveragePooling2D",
           "AdaptiveAveragePooling3D", "AdaptiveMaxPooling1D", "AdaptiveMaxPooling2D", "AdaptiveMaxPooling3D"]


class Wrapper(Layer):
    """``keras.layers.Wrapper``: the base class of layers that wrap another ``layer`` (subclass it and
    write ``call``). ``build`` builds the wrapped layer; the config holds it serialized."""

    def __init__(self, layer: Layer, **kwargs: Any) -> None:
        if not isinstance(layer, Layer):
            raise ValueError(f"Layer {layer} supplied to Wrapper isn't a supported layer type. Please ensure "
                             "wrapped layer is a valid Keras layer.")
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape: Any = None) -> None:
        if not self.layer.built:
            self.layer.build(input_shape)
            self.layer.built = True
        self.built = True

    def get_config(self) -> dict:
        from tapeflow.keras.saving.serialization import serialize_keras_object

        return {**super().get_config(), "layer": serialize_keras_object(self.layer)}

    @classmethod
    def from_config(cls, config: dict, custom_objects: dict | None = None) -> Wrapper:
        from tapeflow.keras.saving.serialization import deserialize_keras_object

        config = dict(config)
        layer = deserialize_keras_object(config.pop("layer"), custom_objects=custom_objects)
        return cls(layer, **config)


class UnitNormalization(Layer):
    """Scales each input to unit L2 norm across ``axis`` (an int or a list of ints; ``x / max(||x||, 1e-12)``)."""

    _supports_masking = True
    _keras_built_at_init = True  # Keras builds it in __init__: no build_config

    def __init__(self, axis: Any = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            self.axis = list(axis)
        elif isinstance(axis, int):
            self.axis = axis
        else:
            raise TypeError("Invalid value for `axis` argument: expected an int or a list/tuple of ints. "
                            f"Received: axis={axis}")

    def call(self, inputs: Tensor) -> Tensor:
        from tapeflow.keras import ops

        return ops.normalize(inputs, axis=self.axis, order=2, epsilon=1e-12)

    def compute_output_shape(self, input_shape: Any) -> Any:
        for a in (self.axis if isinstance(self.axis, list) else [self.axis]):
            if a >= len(input_shape) or a < -len(input_shape):
                raise ValueError(f"Axis {self.axis} is out of bounds for input shape {input_shape}.")
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis}


def _output_size(output_size: Any, n: int) -> tuple:
    """Keras's per-rank ``output_size`` check: an int, or a tuple/list of ``n`` ints."""
    if isinstance(output_size, int):
        return (output_size,) * n
    if isinstance(output_size, (tuple, list)):
        if len(output_size) == n:
            return tuple(output_size)
        if n == 1:
            raise ValueError(f"For 1D input, `output_size` tuple must have length 1. Received: {output_size}")
    what = {1: "an integer or tuple of 1 integer", 2: "an integer or (height, width) tuple",
            3: "an integer or (depth, height, width) tuple"}[n]
    raise TypeError(f"`output_size` must be {what}. Received: {output_size} of type {type(output_size)}")


class _AdaptivePooling(Layer):
    _rank = 0
    _kind = ""

    def __init__(self, output_size: Any, data_format: Any = None, **kwargs: Any) -> None:
        output_size = _output_size(output_size, self._rank)
        super().__init__(**kwargs)
        self.output_size = output_size
        self.data_format = data_format or _backend.image_data_format()
        if self.data_format not in {"channels_first", "channels_last"}:
            raise ValueError(f"Invalid data_format: {self.data_format}. "
                             "Expected 'channels_first' or 'channels_last'.")

    def call(self, inputs: Tensor) -> Tensor:
        from tapeflow.keras import ops

        pool = ops.adaptive_average_pool if self._kind == "avg" else ops.adaptive_max_pool
        return pool(inputs, output_size=self.output_size, data_format=self.data_format)

    def compute_output_shape(self, input_shape: Any) -> Any:
        if self.data_format == "channels_last":
            return (input_shape[0], *self.output_size, input_shape[-1])
        return (input_shape[0], input_shape[1], *self.output_size)

    def get_config(self) -> dict:
        return {**super().get_config(), "output_size": self.output_size, "data_format": self.data_format}


class AdaptiveAveragePooling1D(_AdaptivePooling):
    """Average pooling of ``(batch, length, channels)`` inputs to ``output_size`` steps, whatever the length."""

    _rank, _kind = 1, "avg"


class AdaptiveAveragePooling2D(_AdaptivePooling):
    """Average pooling of 2-D images to ``output_size`` (an int or ``(height, width)``), whatever their size."""

    _rank, _kind = 2, "avg"


class AdaptiveAveragePooling3D(_AdaptivePooling):
    """Average pooling of 3-D volumes to ``output_size`` (an int or 3 ints), whatever their size."""

    _rank, _kind = 3, "avg"


class AdaptiveMaxPooling1D(_AdaptivePooling):
    """Max pooling of ``(batch, length, channels)`` inputs to ``output_size`` steps, whatever the length."""

    _rank, _kind = 1, "max"


class AdaptiveMaxPooling2D(_AdaptivePooling):
    """Max pooling of 2-D images to ``output_size`` (an int or ``(height, width)``), whatever their size."""

    _rank, _kind = 2, "max"


class AdaptiveMaxPooling3D(_AdaptivePooling):
    """Max pooling of 3-D volumes to ``output_size`` (an int or 3 ints), whatever their size."""

    _rank, _kind = 3, "max"
