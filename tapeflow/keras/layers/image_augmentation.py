"""Keras 3's random image augmentation layers, seeded and drawn as Keras 3 with the TF backend."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.keras import initializers
from tapeflow.keras.layers.base import Layer
from tapeflow.ops import array_ops as ao
from tapeflow.ops import indexing_ops
from tapeflow.ops import math_ops as mo
from tapeflow.ops import random_ops

__all__ = ["RandomContrast", "RandomFlip"]


def _seed_state(layer: Layer, seed: int | None) -> None:
    """Keras 3's ``SeedGenerator(seed)``: a ``[seed, counter]`` state, an unseeded one taking a Python-random
    seed now."""
    from tapeflow.framework.variables import Variable

    start = initializers._default_seed() if seed is None else int(seed)
    object.__setattr__(layer, "_seed_state", Variable(np.array([start, 0], np.int64), trainable=False,
                                                      name="seed_generator_state"))


def _next_seed(layer: Layer) -> Tensor:
    """The state's current seed as Keras's TF backend draws with it, then the counter advanced."""
    seed = layer._seed_state.value()
    layer._seed_state.assign_add(np.array([0, 1], np.int64))
    return mo.cast(mo.floormod(seed, np.int64(2**31 - 2)), "int32")  # Keras's _cast_seed


class RandomFlip(Layer):
    """Flips images ``(..., height, width, channels)`` left-right and/or top-bottom, each image with
    probability 1/2, when training (a call without ``training`` counts as training, as Keras 3).

    ``mode`` is ``"horizontal"``, ``"vertical"`` or ``"horizontal_and_vertical"`` (one draw per image flips
    both axes). The draws are Keras 3's: ``tf.random.stateless_uniform`` of the layer's ``[seed, counter]``
    state, so after ``tf.keras.utils.set_random_seed`` the same images flip as in Keras. The output has the
    layer's compute dtype.
    """

    def __init__(self, mode: str = "horizontal_and_vertical", seed: int | None = None, data_format: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seed, self.mode = seed, mode
        self.data_format = "channels_last" if data_format is None else data_format
        _seed_state(self, seed)

    def call(self, inputs: Any, training: Any = None) -> Tensor:
        images = mo.cast(convert_to_tensor(inputs), self.compute_dtype)
        if training is None:
            training = True  # Keras's preprocessing layers default to training=True
        if not training:
            return images
        unbatched = len(images._shape_tuple()) == 3
        if unbatched:
            images = ao.expand_dims(images, 0)
        flips_shape = ao.stack([ao.shape(images)[0], 1, 1, 1]) if not unbatched else [1, 1, 1, 1]
        seed = _next_seed(self)
        flips = mo.less_equal(random_ops.stateless_uniform(flips_shape, seed, 0.0, 1.0, dtype="float32"), 0.5)
        width_axis, height_axis = (-2, -3) if self.data_format == "channels_last" else (-1, -2)
        out = images
        if self.mode in ("horizontal", "horizontal_and_vertical"):
            out = mo.where(flips, indexing_ops.reverse(out, [width_axis]), out)
        if self.mode in ("vertical", "horizontal_and_vertical"):
            out = mo.where(flips, indexing_ops.reverse(out, [height_axis]), out)
        return ao.squeeze(out, [0]) if unbatched else out

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        return {"name": self.name, "trainable": self.trainable, "dtype": self.dtype_policy.name,
                "data_format": self.data_format, "seed": self.seed, "mode": self.mode}


class RandomContrast(Layer):
    """Scales each channel's deviation from its mean by a random factor per image, when training (a call
    without ``training`` counts as training, as Keras 3): ``(x - mean) * f + mean``, clipped to
    ``value_range``.

    ``factor`` is a number in [0, 1] or a pair ``(lower, upper)``; ``f`` is drawn uniformly from
    ``[1 - lower, 1 + upper]``. As Keras 3.15, a single number ``a`` means ``(0, a)``: the contrast only grows.
    The draws are Keras's (``tf.random.stateless_uniform`` of the layer's ``[seed, counter]`` state).
    """

    def __init__(self, factor: Any, value_range: Any = (0, 255), seed: int | None = None,
                 data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        msg = (f"The `factor` argument should be a number (or a list of two numbers) in the range [0, 1]. "
               f"Received: factor={factor}")
        if isinstance(factor, (tuple, list)):
            if len(factor) != 2 or factor[0] > 1 or factor[1] < 0:
                raise ValueError(msg)
            lower, upper = sorted(factor)
        elif isinstance(factor, (int, float)) and not isinstance(factor, bool):
            if not 0 <= factor <= 1:
                raise ValueError(msg)
            lower, upper = max(-abs(factor), 0), abs(factor)
        else:
            raise ValueError(msg)
        self.factor = (lower, upper)
        self.value_range, self.seed = value_range, seed
        self.data_format = "channels_last" if data_format is None else data_format
        _seed_state(self, seed)

    def call(self, inputs: Any, training: Any = None) -> Tensor:
        images = convert_to_tensor(inputs)
        if training is None:
            training = True
        if not training:
            return images
        if images._value.dtype.kind != "f":  # Keras 3.15 fails on integer images; compute in its float dtype
            images = mo.cast(images, self.compute_dtype)
        rank = len(images._shape_tuple())
        if rank not in (3, 4):
            raise ValueError(f"Expected the input image to be rank 3 or 4. Received inputs.shape="
                             f"{tuple(images._shape_tuple())}")
        shape = [1, 1, 1] if rank == 3 else ao.stack([ao.shape(images)[0], 1, 1, 1])
        f = random_ops.stateless_uniform(shape, _next_seed(self), 1.0 - self.factor[0], 1.0 + self.factor[1],
                                         dtype=self.compute_dtype)
        h, w = (-3, -2) if self.data_format == "channels_last" else (-2, -1)
        mean = mo.reduce_mean(mo.reduce_mean(images, axis=h, keepdims=True), axis=w, keepdims=True)
        out = mo.add(mo.multiply(mo.subtract(images, mean), mo.cast(f, images.dtype)), mean)
        return mo.clip_by_value(out, self.value_range[0], self.value_range[1])

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        return {"name": self.name, "trainable": self.trainable, "dtype": self.dtype_policy.name,
                "data_format": self.data_format, "factor": self.factor, "value_range": self.value_range,
                "seed": self.seed}
