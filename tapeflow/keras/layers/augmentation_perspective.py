"""Keras 3's ``RandomPerspective``, split into ``get_random_transformation`` and ``transform_images`` as Keras
3.15: the image corners move by random fractions of the image size, and the homography that maps them back
(solved from the four point pairs) samples the image through TF's ``ImageProjectiveTransformV3`` kernel."""

from __future__ import annotations

from typing import Any

from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.keras.layers.augmentation_more import _factor, _ImagePreprocessing
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo

__all__ = ["RandomPerspective"]


def homography(start: Tensor, end: Tensor) -> Tensor:
    """Keras's ``compute_homography_matrix``: the 8 projective coefficients, per batch item, that map each
    ``end`` point onto its ``start`` point (``(batch, 4, 2)`` each)."""
    from tapeflow.ops.linalg_ops import solve

    rows = []
    for k in range(4):
        sx, sy, ex, ey = start[:, k, 0], start[:, k, 1], end[:, k, 0], end[:, k, 1]
        one, zero = ao.ones_like(ex), ao.zeros_like(ex)
        rows.append(ao.stack([ex, ey, one, zero, zero, zero, -sx * ex, -sx * ey], axis=-1))
        rows.append(ao.stack([zero, zero, zero, ex, ey, one, -sy * ex, -sy * ey], axis=-1))
    coefficients = ao.stack(rows, axis=1)
    target = ao.expand_dims(ao.stack([start[:, k, i] for k in range(4) for i in range(2)], axis=-1), -1)
    return ao.reshape(solve(coefficients, target), [-1, 8])


class RandomPerspective(_ImagePreprocessing):
    """Warps each image (with a probability drawn in ``factor``) by moving its four corners by up to
    ``scale / 2`` of the image size each way, filling outside pixels with ``fill_value``, when training."""

    _FACTOR_BOUNDS = (0, 1)
    _SUPPORTED_INTERPOLATION = ("nearest", "bilinear")

    def __init__(self, factor: Any = 1.0, scale: float = 1.0, interpolation: str = "bilinear",
                 fill_value: float = 0.0, seed: int | None = None, data_format: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factor = _factor(factor, self._FACTOR_BOUNDS)
        self.scale, self.fill_value, self.interpolation = scale, fill_value, interpolation
        self._setup(data_format, seed)
        if scale < 0.0 or scale > 1.0:
            raise ValueError(f"The `scale` argument should be a number in the range [0,1]. Received: scale={scale}")
        if interpolation not in self._SUPPORTED_INTERPOLATION:
            raise NotImplementedError(f"Unknown `interpolation` {interpolation}. Expected of one "
                                      f"{self._SUPPORTED_INTERPOLATION}.")
        self.height_axis, self.width_axis = (-2, -1) if self.data_format == "channels_first" else (-3, -2)

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Any:
        if not training:
            return None
        images = convert_to_tensor(data)
        batch = self._batch_size(images)
        shape = images._shape_tuple()
        height, width = shape[self.height_axis], shape[self.width_axis]
        probability = self._uniform([batch], self.factor[0], self.factor[1])
        threshold = self._uniform([batch], 0.0, 1.0)
        dtype = self.compute_dtype
        factor = self._uniform([batch, 4, 2], -0.5 * self.scale, 0.5 * self.scale, dtype)
        start = convert_to_tensor([[[0.0, 0.0], [width - 1, 0.0], [0.0, height - 1], [width - 1, height - 1]]],
                                  dtype=dtype)
        start = ao.tile(start, [batch, 1, 1])
        return {"apply_perspective": threshold < probability, "start_points": start,
                "end_points": start + start * factor, "input_shape": ao.shape(images)}

    def _transform(self, images: Tensor, transformation: Any) -> Tensor:
        if transformation is None:
            return images
        from tapeflow.ops.image_transform_ops import image_projective_transform_v3

        start = mo.cast(convert_to_tensor(transformation["start_points"]), "float32")
        end = mo.cast(convert_to_tensor(transformation["end_points"]), "float32")
        x = ao.transpose(images, (0, 2, 3, 1)) if self.data_format == "channels_first" else images
        shape = x._shape_tuple()
        out_hw = list(shape[1:3]) if None not in shape[1:3] else ao.shape(x)[1:3]
        out = image_projective_transform_v3(x, homography(start, end), out_hw, self.fill_value,
                                            self.interpolation.upper(), "CONSTANT")
        if self.data_format == "channels_first":
            out = ao.transpose(out, (0, 3, 1, 2))
        apply = ao.reshape(convert_to_tensor(transformation["apply_perspective"]), [-1, 1, 1, 1])
        return mo.cast(mo.where(apply, out, images), self.compute_dtype)

    def get_config(self) -> dict:
        return self._config(factor=self.factor, scale=self.scale, interpolation=self.interpolation,
                            fill_value=self.fill_value, seed=self.seed)
