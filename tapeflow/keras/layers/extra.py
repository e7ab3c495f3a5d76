"""Smaller Keras layers the tutorials construct: ``Masking``; the noise layers ``GaussianNoise``,
``GaussianDropout``, ``SpatialDropout1D/2D/3D``; ``Cropping1D/3D``, ``ZeroPadding1D/3D``,
``UpSampling1D/3D``; the activation layers ``ELU`` and ``PReLU``."""

from __future__ import annotations

from typing import Any


from tapeflow.framework.tensor import Tensor
from tapeflow.keras.layers.base import Layer
from tapeflow.ops import math_ops as mo

__all__ = ["Masking"]


class Masking(Layer):
    """Masks the time steps whose features all equal ``mask_value`` (and zeroes them): the
    following RNN / attention / pooling layers skip them."""

    _supports_masking = True

    def __init__(self, mask_value: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mask_value = mask_value

    def compute_mask(self, inputs: Any, mask: Any = None) -> Tensor:
        return mo.reduce_any(mo.not_equal(inputs, self.mask_value), axis=-1)

    def call(self, inputs: Tensor) -> Tensor:
        keep = mo.reduce_any(mo.not_equal(inputs, self.mask_value), axis=-1, keepdims=True)
        return inputs * mo.cast(keep, inputs.dtype)

    def get_config(self) -> dict:
        return {**super().get_config(), "mask_value": self.mask_value}
