"""Keras 3's ``RandomShear``, split into ``get_random_transformation`` and ``transform_images`` as Keras 3.15,
sampled by TF's ``ImageProjectiveTransformV3`` kernel as Keras's TF backend does."""

from __future__ import annotations

from typing import Any

from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.keras.layers.augmentation_more import _ImagePreprocessing
from tapeflow.keras.layers.image_augmentation import _affine_transform, _check_choice
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo

__all__ = ["RandomShear"]


class RandomShear(_ImagePreprocessing):
    """Shears each image along x and y by random factors (``x_factor``/``y_factor``: a number ``a`` for
    ``[-a, a]`` or a pair, within [0, 1]; one random sign per image for both), when training, filling by
    ``fill_mode`` and sampling by ``interpolation`` as Keras 3.15."""

    _FACTOR_ERROR = "The `factor` argument should be a number (or a list of two numbers) in the range [0, 1.0]. "
    _SUPPORTED_FILL_MODE = ("reflect", "wrap", "constant", "nearest")
    _SUPPORTED_INTERPOLATION = ("nearest", "bilinear")

    def __init__(self, x_factor: Any = 0.0, y_factor: Any = 0.0, interpolation: str = "bilinear",
                 fill_mode: str = "reflect", fill_value: float = 0.0, data_format: str | None = None,
                 seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.x_factor = self._factor(x_factor, "x_factor")
        self.y_factor = self._factor(y_factor, "y_factor")
        _check_choice(fill_mode, self._SUPPORTED_FILL_MODE, "fill_mode")
        _check_choice(interpolation, self._SUPPORTED_INTERPOLATION, "interpolation")
        self.fill_mode, self.fill_value, self.interpolation = fill_mode, fill_value, interpolation
        self._setup(data_format, seed)

    def _factor(self, factor: Any, name: str) -> tuple:
        def check(v: float) -> None:
            if v > 1.0 or v < 0.0:
                raise ValueError(self._FACTOR_ERROR + f"Received: input_number={v}")

        if isinstance(factor, (tuple, list)):
            if len(factor) != 2:
                raise ValueError(self._FACTOR_ERROR + f"Received: {name}={factor}")
            check(factor[0])
            check(factor[1])
            return tuple(sorted(factor))
        if isinstance(factor, (int, float)):
            check(factor)
            return (-abs(factor), abs(factor))
        raise ValueError(self._FACTOR_ERROR + f"Received: {name}={factor}")

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Any:
        if not training:
            return None
        batch = self._batch_size(data)
        dtype = self.compute_dtype
        invert = self._uniform([batch, 1], 0, 1, dtype)
        invert = mo.where(invert > 0.5, -ao.ones_like(invert), ao.ones_like(invert))
        shear_y = self._uniform([batch, 1], self.y_factor[0], self.y_factor[1], dtype)
        shear_x = self._uniform([batch, 1], self.x_factor[0], self.x_factor[1], dtype)
        return {"shear_factor": ao.concat([shear_x, shear_y], axis=1) * invert, "input_shape": ao.shape(data)}

    def _transform(self, images: Tensor, transformation: Any) -> Tensor:
        if transformation is None:
            return images
        shear = mo.cast(convert_to_tensor(transformation["shear_factor"]), "float32")
        one, zero = ao.ones_like(shear[:, 0]), ao.zeros_like(shear[:, 0])
        matrix = ao.stack([one, shear[:, 0], zero, shear[:, 1], one, zero, zero, zero], axis=1)
        out = _affine_transform(images, matrix, self.interpolation, self.fill_mode, self.fill_value,
                                self.data_format)
        return mo.cast(out, self.compute_dtype)

    def get_config(self) -> dict:
        return self._config(x_factor=self.x_factor, y_factor=self.y_factor, fill_mode=self.fill_mode,
                            interpolation=self.interpolation, seed=self.seed, fill_value=self.fill_value)
