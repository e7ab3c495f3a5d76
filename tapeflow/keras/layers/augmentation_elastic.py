"""Keras 3's ``RandomElasticTransform`` and its TF-backend image functions ``map_coordinates`` (order 0 or 1)
and ``elastic_transform``, as Keras 3.15 computes them: the same draws for the same seed and the same pixels.

``elastic_transform`` draws one normal field per image from the seed (Keras's TF backend uses that one field
for both the x and the y displacement), smooths it with a Gaussian of ``sigma`` (kernel ``6 * int(sigma) | 1``)
and samples every channel at the displaced coordinates with ``map_coordinates``."""

from __future__ import annotations

import itertools
from typing import Any

from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.keras.layers.augmentation_more import _ImagePreprocessing
from tapeflow.keras.layers.augmentation_regions import _named_factor
from tapeflow.keras.layers.image_augmentation import _factor_pair
from tapeflow.ops import array_ops as ao
from tapeflow.ops import indexing_ops
from tapeflow.ops import math_ops as mo
from tapeflow.ops import random_ops

__all__ = ["RandomElasticTransform", "elastic_transform", "map_coordinates_nd"]

MAP_COORDINATES_FILL_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


def _nodes(coordinate: Tensor, order: int) -> list:
    """Keras's ``_nearest_indices_and_weights`` / ``_linear_indices_and_weights``."""
    if order == 0:
        c = coordinate if coordinate.dtype.is_integer else mo.round(coordinate)
        return [(mo.cast(c, "int32"), mo.cast(1, coordinate.dtype))]
    lower = mo.floor(coordinate)
    upper_weight = coordinate - lower
    index = mo.cast(lower, "int32")
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def _fix_index(index: Tensor, size: Any, fill_mode: str) -> tuple:
    """Keras's ``process_coordinates``: the index kept inside ``[0, size)`` by ``fill_mode``, and whether it
    was inside (``constant``)."""
    if fill_mode == "constant":
        return mo.clip_by_value(index, 0, size - 1), mo.logical_and(index >= 0, index < size)
    if fill_mode == "nearest":
        return mo.clip_by_value(index, 0, size - 1), None
    if fill_mode in ("mirror", "reflect"):
        index = mo.abs(index)
        mod = mo.floormod(index, size * 2)
        under = mod < size
        index = mo.where(under, mod, size * 2 - mod)
        if fill_mode == "reflect":
            index = mo.where(mo.logical_not(under), index - 1, index)
        return index, None
    return mo.floormod(index, size), None  # wrap


def map_coordinates_nd(inputs: Tensor, coordinates: list, sizes: list, order: int, fill_mode: str,
                       fill_value: Any, batch_dims: int = 0) -> Tensor:
    """Keras's TF-backend ``map_coordinates``: ``inputs`` sampled at ``coordinates`` (one float tensor per
    axis after the first ``batch_dims``), each interpolation node's index kept in range by ``fill_mode``, the
    nodes' values weighted and summed in Keras's order. With ``batch_dims=1`` every row of the batch is
    sampled at its own coordinates (a trailing channel axis of ``inputs`` comes along)."""
    per_axis = [[_fix_index(i, size, fill_mode) + (w,) for i, w in _nodes(c, order)]
                for c, size in zip(coordinates, sizes)]
    dtype = per_axis[0][0][2].dtype
    total = None
    lead = []
    if batch_dims:
        shape = ao.shape(coordinates[0])
        lead = [ao.broadcast_to(ao.reshape(ao.range_(0, shape[0], 1), [-1] + [1] * (len(
            coordinates[0]._shape_tuple()) - 1)), shape)]
    for items in itertools.product(*per_axis):
        indices, valid, weights = zip(*items)
        gathered = mo.cast(indexing_ops.gather_nd(inputs, ao.stack(lead + list(indices), axis=-1)), dtype)
        weight = weights[0]
        for w in weights[1:]:
            weight = weight * w
        extra = len(gathered._shape_tuple()) - len(coordinates[0]._shape_tuple())  # a trailing channel axis
        if extra and weight._shape_tuple():
            weight = ao.reshape(weight, ao.concat([ao.shape(weight), [1] * extra], 0))
        if fill_mode == "constant":
            ok = valid[0]
            for v in valid[1:]:
                ok = mo.logical_and(ok, v)
            if extra:
                ok = ao.reshape(ok, ao.concat([ao.shape(ok), [1] * extra], 0))
            gathered = mo.where(ok, gathered, mo.cast(convert_to_tensor(fill_value, dtype=inputs.dtype), dtype))
        term = weight * gathered
        total = term if total is None else total + term
    if inputs.dtype.is_integer:
        total = mo.round(total)
    return mo.cast(total, inputs.dtype)


def _gaussian_blur_1c(field: Tensor, size: Tensor, sigma: Tensor) -> Tensor:
    """Keras's TF-backend ``gaussian_blur`` of a one-channel batch (``[batch, h, w, 1]``), a square kernel of
    ``size`` (a float scalar, possibly drawn) and standard deviation ``sigma``, ``SAME`` padding."""
    from tapeflow.ops.nn import conv as nn_conv

    dtype = field.dtype.name
    x = ao.range_(mo.cast(0, dtype), size, mo.cast(1, dtype)) - (size - 1) / 2
    k = mo.exp(-0.5 * (x / sigma) ** 2)
    k = k / mo.reduce_sum(k)
    n = mo.cast(size, "int32")
    kernel = ao.reshape(indexing_ops.tensordot(k, k, 0), ao.stack([n, n, 1, 1]))
    return nn_conv.depthwise_conv2d(field, kernel, [1, 1, 1, 1], "SAME")


def elastic_transform(images: Tensor, alpha: Any, sigma: Any, interpolation: str, fill_mode: str,
                      fill_value: Any, seed: Tensor, data_format: str) -> Tensor:
    """Keras's TF-backend ``keras.ops.image.elastic_transform`` of a batch (or one image) with an int ``[2]``
    seed already drawn."""
    images = convert_to_tensor(images)
    dtype = images.dtype
    alpha = mo.cast(alpha, dtype)
    sigma = mo.cast(sigma, dtype)
    factor = mo.cast(sigma, "int32")
    size = mo.cast(mo.bitwise_or(6 * factor, 1), dtype)
    single = len(images._shape_tuple()) == 3
    if single:
        images = ao.expand_dims(images, 0)
    if data_format == "channels_first":
        images = ao.transpose(images, (0, 2, 3, 1))
    shape = ao.shape(images)
    batch, height, width = shape[0], shape[1], shape[2]
    static = images._shape_tuple()
    noise = random_ops.stateless_normal(ao.stack([batch, height, width]), seed, dtype=dtype) * sigma
    field = ao.squeeze(_gaussian_blur_1c(ao.expand_dims(noise, -1), size, sigma), [-1])
    x, y = indexing_ops.meshgrid(ao.range_(mo.cast(0, dtype), mo.cast(width, dtype), mo.cast(1, dtype)),
                                 ao.range_(mo.cast(0, dtype), mo.cast(height, dtype), mo.cast(1, dtype)),
                                 indexing="xy")
    moved_x = ao.expand_dims(x, 0) + alpha * field
    moved_y = ao.expand_dims(y, 0) + alpha * field  # Keras's dx and dy come from the same seed: one field
    order = ("nearest", "bilinear").index(interpolation)
    sizes = [static[1] if static[1] is not None else height, static[2] if static[2] is not None else width]
    out = map_coordinates_nd(images, [moved_y, moved_x], sizes, order, fill_mode, fill_value, batch_dims=1)
    if data_format == "channels_first":
        out = ao.transpose(out, (0, 3, 1, 2))
    return ao.squeeze(out, [0]) if single else out


class RandomElasticTransform(_ImagePreprocessing):
    """Distorts each image with a random elastic field, with a probability drawn in ``factor`` (a number ``a``
    for ``[0, a]``), of strength drawn in ``scale`` (the field's ``alpha`` is ``0.1 * scale`` of the longer
    side, its smoothing ``sigma`` ``0.05 * scale`` of the shorter), resampled by ``interpolation`` with
    ``fill_mode`` and clipped to ``value_range``, when training, as Keras 3.15."""

    _FACTOR_BOUNDS = (0, 1)
    _SUPPORTED_INTERPOLATION = ("nearest", "bilinear")
    _SUPPORTED_FILL_MODES = {"constant", "nearest", "wrap", "mirror", "reflect"}

    def __init__(self, factor: Any = 1.0, scale: Any = 1.0, interpolation: str = "bilinear",
                 fill_mode: str = "reflect", fill_value: float = 0.0, value_range: Any = (0, 255),
                 seed: int | None = None, data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factor = _factor_pair(factor, self._FACTOR_BOUNDS)
        self.scale = _named_factor(scale, "scale", self._FACTOR_BOUNDS)
        self.interpolation = interpolation
        self.fill_mode = fill_mode
        self.fill_value = fill_value
        self.value_range = value_range
        self._setup(data_format, seed)
        if interpolation not in self._SUPPORTED_INTERPOLATION:
            raise NotImplementedError(f"Unknown `interpolation` {interpolation}. Expected of one "
                                      f"{self._SUPPORTED_INTERPOLATION}.")
        if fill_mode not in self._SUPPORTED_FILL_MODES:
            raise NotImplementedError(f"Unknown `fill_mode` {fill_mode}. Expected of one "
                                      f"{self._SUPPORTED_FILL_MODES}.")
        first = self.data_format == "channels_first"
        self.height_axis, self.width_axis, self.channel_axis = (-2, -1, -3) if first else (-3, -2, -1)

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Any:
        if not training or self.scale[1] == 0 or self.factor[1] == 0:
            return None
        images = data["images"] if isinstance(data, dict) else convert_to_tensor(data)
        batch = 1 if len(images._shape_tuple()) == 3 else self._batch_size(images)
        probability = self._uniform([batch] if isinstance(batch, int) else ao.reshape(batch, [1]),
                                    self.factor[0], self.factor[1])
        threshold = self._uniform([batch] if isinstance(batch, int) else ao.reshape(batch, [1]), 0.0, 1.0)
        distortion = self._uniform([], self.scale[0], self.scale[1], self.compute_dtype)
        # Keras draws the field's seed when it transforms (from the same generator)
        return {"apply_transform": threshold < probability, "distortion_factor": distortion,
                "seed": self.__dict__.get("_seed_source") or self}

    def _transform(self, images: Tensor, transformation: Any) -> Tensor:
        if transformation is None:
            return images
        shape = images._shape_tuple()
        height, width = shape[self.height_axis], shape[self.width_axis]
        factor = transformation["distortion_factor"]
        alpha, sigma = max(height, width) * (0.1 * factor), min(height, width) * (0.05 * factor)
        source = transformation["seed"]
        state = source._seed_state.value()  # Keras's draw_seed: the int64 state, then the counter moves on
        source._seed_state.assign_add([0, 1])
        moved = elastic_transform(images, alpha, sigma, self.interpolation, self.fill_mode, self.fill_value,
                                  state, self.data_format)
        apply = ao.reshape(transformation["apply_transform"], [-1, 1, 1] if len(shape) == 3 else [-1, 1, 1, 1])
        images = mo.where(apply, moved, images)
        images = mo.clip_by_value(images, self.value_range[0], self.value_range[1])
        return mo.cast(images, self.compute_dtype)

    def get_config(self) -> dict:
        return self._config(factor=self.factor, scale=self.scale, interpolation=self.interpolation,
                            fill_mode=self.fill_mode, fill_value=self.fill_value, value_range=self.value_range,
                            seed=self.seed)
