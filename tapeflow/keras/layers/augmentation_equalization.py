"""Keras 3's ``Equalization``: histogram equalization of each colour channel, as Keras 3.15 computes it."""

from __future__ import annotations

from typing import Any

from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.keras.layers.augmentation_more import _ImagePreprocessing, _value_range
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo

__all__ = ["Equalization"]


class Equalization(_ImagePreprocessing):
    """Equalizes the histogram of each channel (``bins`` bins over ``value_range``): a channel's values are
    mapped through its cumulative histogram onto the full range, as Keras 3.15. As Keras, one histogram per
    channel covers the whole batch, a channel with one occupied bin stays as it is, and the layer applies in
    training calls only (a call without ``training`` counts as training)."""

    def __init__(self, value_range: Any = (0, 255), bins: int = 256, data_format: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bins = bins
        self.value_range = _value_range(value_range)
        self._setup(data_format, None, seeded=False)

    @staticmethod
    def _scale(values: Tensor, source: Any, target: Any) -> Tensor:
        scale = (target[1] - target[0]) / (source[1] - source[0])
        return values * scale + (target[0] - source[0] * scale)

    def _equalize_channel(self, channel: Tensor) -> Tensor:
        from tapeflow.ops.special_ops import bincount, count_nonzero

        bins = self.bins
        channel = self._scale(channel, self.value_range, (0, 255))  # Keras scales always (a list is not (0, 255))
        scaled = mo.cast(channel, "float32") * (bins - 1) / 255.0
        indices = mo.clip_by_value(mo.cast(scaled, "int32"), 0, bins - 1)
        hist = bincount(ao.reshape(indices, [-1]), minlength=bins)
        cdf = mo.cumsum(hist)
        first = mo.reduce_min(mo.where(cdf > 0, ao.range_(0, bins, 1), ao.ones_like(cdf) * bins))
        cdf_min = ao.gather(cdf, first)
        denominator = cdf[-1] - cdf_min
        denominator = mo.where(mo.equal(denominator, 0), ao.ones_like(denominator), denominator)
        table = mo.cast(cdf - cdf_min, "float32") * 255.0 / mo.cast(denominator, "float32")
        table = mo.clip_by_value(mo.round(table), 0.0, 255.0)
        lookup = mo.cast(mo.clip_by_value(channel / 255.0 * (bins - 1), 0.0, float(bins - 1)), "int32")
        equalized = mo.cast(ao.gather(table, lookup), channel.dtype)
        equalized = mo.where(count_nonzero(hist) <= 1, channel, equalized)
        return self._scale(equalized, (0, 255), self.value_range)

    def transform_images(self, images: Any, transformation: Any = None, training: bool = True) -> Tensor:
        images = mo.cast(convert_to_tensor(images), self.compute_dtype)
        if not training:
            return images
        axis = -3 if self.data_format == "channels_first" else -1
        channels = ao.unstack(images, num=images._shape_tuple()[axis], axis=axis)
        return mo.cast(ao.stack([self._equalize_channel(c) for c in channels], axis=axis), self.compute_dtype)

    def get_config(self) -> dict:
        return self._config(bins=self.bins, value_range=self.value_range)
