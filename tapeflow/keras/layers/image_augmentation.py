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

__all__ = ["RandomFlip"]


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
        from tapeflow.framework.variables import Variable

        start = initializers._default_seed() if seed is None else int(seed)  # Keras's SeedGenerator(seed)
        object.__setattr__(self, "_seed_state", Variable(np.array([start, 0], np.int64), trainable=False,
                                                         name="seed_generator_state"))

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
        seed = self._seed_state.value()
        self._seed_state.assign_add(np.array([0, 1], np.int64))
        seed = mo.cast(mo.floormod(seed, np.int64(2**31 - 2)), "int32")  # Keras's _cast_seed
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
