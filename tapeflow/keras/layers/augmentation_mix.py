"""Keras 3's batch-mixing augmentation layers ``MixUp`` and ``CutMix``: each image mixed with another of the
batch (Keras's permutation of it), and its one-hot label by the same weight, when called on
``{"images": ..., "labels": ...}`` (or on images alone), when training.

As Keras 3.15 with the TF backend: the layer's ``SeedGenerator`` state draws the permutation (the argsort of a
``stateless_uniform``) and the weights (``keras.random.beta``: two ``stateless_gamma`` draws), so after
``tf.keras.utils.set_random_seed`` or with ``seed=`` the same images mix with the same weights."""

from __future__ import annotations

from typing import Any

from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.keras import backend as _backend
from tapeflow.keras.layers.augmentation_more import _factor, _ImagePreprocessing
from tapeflow.keras.layers.augmentation_regions import box_masks
from tapeflow.keras.layers.image_augmentation import _next_seed
from tapeflow.ops import array_ops as ao
from tapeflow.ops import indexing_ops
from tapeflow.ops import math_ops as mo
from tapeflow.ops import random_ops

__all__ = ["CutMix", "MixUp"]


def _vector(batch: Any) -> Any:
    """The shape ``[batch]`` of a static or a dynamic batch size."""
    return [batch] if isinstance(batch, int) else ao.reshape(batch, [1])


def _shuffled_range(layer: Any, batch: Any, dtype: str) -> Tensor:
    """Keras's ``random.shuffle(arange(batch))``: the argsort of one uniform draw."""
    from tapeflow.ops.special_ops import argsort

    order = argsort(random_ops.stateless_uniform(_vector(batch), _next_seed(layer)))
    return mo.cast(order, dtype)


def _beta(layer: Any, shape: Any, alpha: Any, dtype: str) -> Tensor:
    from tapeflow.keras.random import beta_of_seed

    return beta_of_seed(shape, alpha, alpha, dtype, _next_seed(layer))


class MixUp(_ImagePreprocessing):
    """MixUp (Zhang et al. 2018): each image (and label) becomes ``w * x + (1 - w) * x[perm]`` with ``w`` drawn
    from Beta(alpha, alpha) per image, when training. Call it on ``{"images": images, "labels": one_hot}``."""

    def __init__(self, alpha: float = 0.2, data_format: str | None = None, seed: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.alpha = alpha
        self._setup(data_format, seed)

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> dict:
        images = data["images"] if isinstance(data, dict) else convert_to_tensor(data)
        batch = 1 if len(images._shape_tuple()) == 3 else self._batch_size(images)
        order = _shuffled_range(self, batch, "int64")
        return {"mix_weight": _beta(self, _vector(batch), self.alpha, _backend.floatx()),
                "permutation_order": order}

    def _transform(self, images: Tensor, transformation: dict) -> Tensor:
        weight = mo.cast(ao.reshape(transformation["mix_weight"], [-1, 1, 1, 1]), self.compute_dtype)
        mixed = mo.cast(ao.gather(images, transformation["permutation_order"], axis=0), self.compute_dtype)
        return weight * images + (1.0 - weight) * mixed

    def transform_labels(self, labels: Any, transformation: Any = None, training: bool = True) -> Tensor:
        if not training:
            return labels
        labels = convert_to_tensor(labels)
        weight = ao.reshape(transformation["mix_weight"], [-1, 1])
        return weight * labels + (1.0 - weight) * ao.gather(labels, transformation["permutation_order"], axis=0)

    def get_config(self) -> dict:
        return self._config(alpha=self.alpha, seed=self.seed)


class CutMix(_ImagePreprocessing):
    """CutMix (Yun et al. 2019): a box of each image is replaced by the same box of another image of the batch,
    its size from a weight drawn from Beta(a, a) (``a`` drawn in ``factor``), and the label mixed by the area
    kept, when training. Single images pass unchanged. Call it on ``{"images": images, "labels": one_hot}``."""

    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor: Any = 1.0, seed: int | None = None, data_format: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factor = _factor(factor, self._FACTOR_BOUNDS)
        self._setup(data_format, seed)
        first = self.data_format == "channels_first"
        self.height_axis, self.width_axis, self.channel_axis = (-2, -1, -3) if first else (-3, -2, -1)

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Any:
        if not training:
            return None
        images = data["images"] if isinstance(data, dict) else convert_to_tensor(data)
        shape = images._shape_tuple()
        if len(shape) == 3:
            return None
        dynamic = ao.shape(images)
        batch = self._batch_size(images)
        height = shape[self.height_axis] if shape[self.height_axis] is not None else dynamic[self.height_axis]
        width = shape[self.width_axis] if shape[self.width_axis] is not None else dynamic[self.width_axis]
        dtype = self.compute_dtype
        alpha = self._uniform([], self.factor[0], self.factor[1], dtype) + 1e-6
        weight = _beta(self, _vector(batch), alpha, dtype)
        ratio = mo.sqrt(1.0 - weight)
        x0, x1 = self._crop_bounds(batch, width, ratio)
        y0, y1 = self._crop_bounds(batch, height, ratio)
        masks = box_masks(height, width, x0, x1, y0, y1, dtype, self.data_format)
        channels = shape[self.channel_axis] if shape[self.channel_axis] is not None else dynamic[self.channel_axis]
        masks = indexing_ops.repeat(masks, channels, axis=self.channel_axis % 4)
        x0, x1, y0, y1 = (ao.reshape(v, [-1, 1, 1, 1]) for v in (x0, x1, y0, y1))  # (the weight's shape: Keras's)
        weight = 1.0 - (x1 - x0) * (y1 - y0) / mo.cast(width * height, dtype)
        order = _shuffled_range(self, batch, "int32")
        return {"permutation_order": order, "batch_masks": masks, "mix_weight": weight}

    def _crop_bounds(self, batch: Any, length: Any, ratio: Tensor) -> tuple:
        dtype = self.compute_dtype
        crop = mo.cast(ratio * mo.cast(length, ratio.dtype), dtype)
        start = self._uniform(_vector(batch), 0, 1, dtype) * (mo.cast(length, dtype) - crop)
        return start, start + crop

    def transform_images(self, images: Any, transformation: Any = None, training: bool = True) -> Tensor:
        images = mo.cast(convert_to_tensor(images), self.compute_dtype)
        if training and transformation is not None:
            shuffled = ao.gather(images, transformation["permutation_order"], axis=0)
            images = mo.where(transformation["batch_masks"], shuffled, images)
        return images

    def transform_labels(self, labels: Any, transformation: Any = None, training: bool = True) -> Tensor:
        labels = convert_to_tensor(labels)
        if training and transformation is not None:
            weight = ao.reshape(transformation["mix_weight"], [-1, 1])
            cut = ao.gather(labels, transformation["permutation_order"], axis=0)
            labels = weight * labels + (1.0 - weight) * cut
        return labels

    def get_config(self) -> dict:
        return self._config(factor=self.factor, seed=self.seed)
