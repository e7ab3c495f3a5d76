"""Reshaping layers: Permute, RepeatVector, ZeroPadding2D, UpSampling2D, Cropping2D; and Identity,
ActivityRegularization."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework.tensor import Tensor
from tapeflow.keras.layers.base import Layer
from tapeflow.keras.saving.serialization import base_config
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo

__all__ = ["Permute", "RepeatVector", "ZeroPadding2D", "UpSampling2D", "Cropping2D", "Identity",
           "ActivityRegularization"]


def _pair(v: Any, what: str) -> tuple:
    if isinstance(v, int):
        return ((v, v), (v, v)) if what == "pad" else (v, v)
    v = tuple(v)
    if what == "pad" and all(isinstance(p, int) for p in v):
        return ((v[0], v[0]), (v[1], v[1]))
    return tuple(tuple(p) for p in v) if what == "pad" else v


def _channels_last(data_format: Any) -> None:
    if data_format not in (None, "channels_last"):
        raise NotImplementedError(f"data_format={data_format!r}: tapeflow's Keras supports channels_last only")


class Permute(Layer):
    """Permutes the non-batch axes: ``Permute((2, 1))`` swaps axes 1 and 2."""

    def __init__(self, dims: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Invalid permutation argument `dims` for Permute Layer. The set of indices in `dims` "
                             f"must be consecutive and start from 1. Received dims={dims}")

    def call(self, inputs: Tensor) -> Tensor:
        return ao.transpose(inputs, (0,) + self.dims)

    def get_config(self) -> dict:
        return {**base_config(self), "dims": self.dims}


class RepeatVector(Layer):
    """``(batch, features)`` -> ``(batch, n, features)``."""

    def __init__(self, n: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.n = int(n)

    def get_config(self) -> dict:
        return {**base_config(self), "n": self.n}

    def call(self, inputs: Tensor) -> Tensor:
        if len(inputs._shape_tuple()) != 2:
            raise ValueError(f"Input 0 with name 'None' of layer '{self.name}'"
                             f" is incompatible with the layer: expected ndim=2, "
                             f"found ndim={len(inputs._shape_tuple())}")
        return ao.tile(ao.expand_dims(inputs, 1), [1, self.n, 1])


class ZeroPadding2D(Layer):
    """Pads rows and columns of NHWC images with zeros: ``padding`` int, (rows, cols) or
    ((top, bottom), (left, right))."""

    def __init__(self, padding: Any = (1, 1), data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _channels_last(data_format)
        self.padding = _pair(padding, "pad")

    def get_config(self) -> dict:
        return {**base_config(self), "padding": self.padding, "data_format": "channels_last"}

    def call(self, inputs: Tensor) -> Tensor:
        from tapeflow.ops.indexing_ops import pad

        (t, b), (lft, rgt) = self.padding
        return pad(inputs, [[0, 0], [t, b], [lft, rgt], [0, 0]])


class Cropping2D(Layer):
    """Crops rows and columns of NHWC images: ``cropping`` int, (rows, cols) or ((top, bottom), (left, right))."""

    def __init__(self, cropping: Any = ((0, 0), (0, 0)), data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _channels_last(data_format)
        self.cropping = _pair(cropping, "pad")

    def get_config(self) -> dict:
        return {**base_config(self), "cropping": self.cropping, "data_format": "channels_last"}

    def call(self, inputs: Tensor) -> Tensor:
        (t, b), (lft, rgt) = self.cropping
        h, w = inputs._shape_tuple()[1:3]
        if h is None or w is None:
            raise NotImplementedError("Cropping2D: images of unknown height/width are not supported")
        return inputs[:, t:h - b, lft:w - rgt, :]


class UpSampling2D(Layer):
    """Repeats rows and columns of NHWC images ``size`` times (``interpolation="nearest"``), or resizes them to
    ``size`` times their size with ``tf.image.resize`` (``"bilinear"``, ``"bicubic"``, ``"lanczos3"``, ...)."""

    def __init__(self, size: Any = (2, 2), data_format: Any = None, interpolation: str = "nearest",
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _channels_last(data_format)
        self.size, self.interpolation = _pair(size, "size"), interpolation.lower()

    def get_config(self) -> dict:
        return {**base_config(self), "size": self.size, "data_format": "channels_last",
                "interpolation": self.interpolation}

    def call(self, inputs: Tensor) -> Tensor:
        from tapeflow.ops.indexing_ops import repeat

        if self.interpolation != "nearest":  # Keras: tf.image.resize to size times the image (no antialias)
            from tapeflow.keras.layers.preprocessing import _RESIZE_INTERPOLATIONS
            from tapeflow.ops import image_transform_ops, shape_ops

            if self.interpolation not in _RESIZE_INTERPOLATIONS:
                raise ValueError(f"Invalid value for argument `interpolation`. Expected of one "
                                 f"{_RESIZE_INTERPOLATIONS}. Received: interpolation={self.interpolation}")
            h, w = inputs._shape_tuple()[1:3]
            size = ((h * self.size[0], w * self.size[1]) if None not in (h, w)
                    else shape_ops.shape_of(inputs)[1:3] * np.array(self.size, np.int32))
            return mo.cast(image_transform_ops.resize(inputs, size, method=self.interpolation), inputs.dtype)
        return repeat(repeat(inputs, self.size[0], axis=1), self.size[1], axis=2)


class Identity(Layer):
    _keras_built_at_init = True  # Keras writes no build_config for it

    def call(self, inputs: Any) -> Any:
        return inputs


class ActivityRegularization(Layer):
    """Passes inputs through, adding ``l1 * sum(|x|) + l2 * sum(x**2)`` (over the batch mean) to ``losses``."""

    _keras_built_at_init = True  # Keras writes no build_config for it

    def __init__(self, l1: float = 0.0, l2: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.l1, self.l2 = l1, l2

    def call(self, inputs: Tensor) -> Tensor:
        loss = 0.0
        if self.l1:
            loss += self.l1 * mo.reduce_sum(mo.abs(inputs))
        if self.l2:
            loss += self.l2 * mo.reduce_sum(mo.square(inputs))
        n = inputs._shape_tuple()[0]
        batch = mo.cast(ao.shape(inputs)[0], inputs.dtype) if n is None else float(n)
        if self.l1 or self.l2:
            self.add_loss(loss / batch)
        return inputs
