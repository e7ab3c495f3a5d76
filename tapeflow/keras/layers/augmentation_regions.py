"""Keras 3's ``RandomGaussianBlur`` and ``RandomErasing``, split into ``get_random_transformation`` and
``transform_images`` as Keras 3.15 (see ``augmentation_more``)."""

from __future__ import annotations

from typing import Any

from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.keras.layers.augmentation_more import _factor, _ImagePreprocessing
from tapeflow.keras.layers.image_augmentation import _next_seed
from tapeflow.ops import array_ops as ao
from tapeflow.ops import indexing_ops
from tapeflow.ops import math_ops as mo
from tapeflow.ops import random_ops

__all__ = ["RandomErasing", "RandomGaussianBlur"]


def _named_factor(factor: Any, name: str, bounds: tuple) -> tuple:
    """Keras's ``_set_factor_by_name`` (its message names the argument but prints ``factor=``)."""
    msg = (f"The `{name}` argument should be a number (or a list of two numbers) in the range "
           f"[{bounds[0]}, {bounds[1]}]. Received: factor={factor}")
    try:
        return _factor(factor, bounds)
    except ValueError:
        raise ValueError(msg) from None


def gaussian_blur(images: Tensor, kernel_size: tuple, sigma: Tensor, data_format: str) -> Tensor:
    """Keras's TF-backend ``ops.image.gaussian_blur`` of a batch: a separable Gaussian kernel
    (``kernel_size``, ``sigma`` per axis) applied per channel with ``SAME`` padding."""
    from tapeflow.ops.nn import conv as nn_conv

    dtype = images.dtype.name
    sigma = mo.cast(convert_to_tensor(sigma), dtype)

    def kernel1d(size: int, s: Tensor) -> Tensor:
        x = mo.cast(ao.range_(0, size, 1), dtype) - (size - 1) / 2
        k = mo.exp(-0.5 * mo.square(x / s))
        return k / mo.reduce_sum(k)

    k2 = indexing_ops.tensordot(kernel1d(kernel_size[1], sigma[1]), kernel1d(kernel_size[0], sigma[0]), 0)
    if data_format == "channels_first":
        images = ao.transpose(images, (0, 2, 3, 1))
    channels = images._shape_tuple()[-1]
    kernel = ao.tile(ao.reshape(k2, [kernel_size[0], kernel_size[1], 1, 1]), [1, 1, channels, 1])
    out = nn_conv.depthwise_conv2d(images, mo.cast(kernel, dtype), [1, 1, 1, 1], "SAME")
    return ao.transpose(out, (0, 3, 1, 2)) if data_format == "channels_first" else out


def box_masks(height: Any, width: Any, x0: Tensor, x1: Tensor, y0: Tensor, y1: Tensor, dtype: Any,
              data_format: str) -> Tensor:
    """[batch, h, w, 1] (or [batch, 1, h, w]) booleans: where ``x0 <= x < x1`` and ``y0 <= y < y1``, one box per
    image (RandomErasing's and CutMix's patches)."""
    rows = ao.reshape(mo.cast(ao.range_(0, height, 1), dtype), [-1, 1])
    cols = ao.reshape(mo.cast(ao.range_(0, width, 1), dtype), [1, -1])
    grid_y, grid_x = rows + 0 * cols, cols + 0 * rows
    if data_format == "channels_last":
        grid_y, grid_x = grid_y[None, :, :, None], grid_x[None, :, :, None]
    else:
        grid_y, grid_x = grid_y[None, None, :, :], grid_x[None, None, :, :]
    x0, x1, y0, y1 = (ao.reshape(v, [-1, 1, 1, 1]) for v in (x0, x1, y0, y1))
    return mo.logical_and(mo.logical_and(grid_x >= x0, grid_x < x1), mo.logical_and(grid_y >= y0, grid_y < y1))


class RandomGaussianBlur(_ImagePreprocessing):
    """Blurs each image, with a probability drawn in ``factor`` (a number ``a`` for ``[0, a]``), by a Gaussian
    kernel of ``kernel_size`` (odd) and a standard deviation drawn in ``sigma`` (one per axis, shared by the
    batch), clipped to ``value_range``, when training."""

    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor: Any = 1.0, kernel_size: Any = 3, sigma: Any = 1.0, value_range: Any = (0, 255),
                 data_format: str | None = None, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factor = _factor(factor, self._FACTOR_BOUNDS)
        self.kernel_size = self._kernel_size(kernel_size, "kernel_size")
        self.sigma = _named_factor(sigma, "sigma", self._FACTOR_BOUNDS)
        self.value_range = value_range
        self._setup(data_format, seed)

    @staticmethod
    def _kernel_size(size: Any, name: str) -> tuple:
        msg = f"{name} must be an odd number. Received: {name}={size}"
        if isinstance(size, (tuple, list)):
            if len(size) != 2:
                raise ValueError(f"The `{name}` argument should be a number (or a list of two numbers) "
                                 f"Received: {name}={size}")
            if size[0] % 2 == 0 or size[1] % 2 == 0:
                raise ValueError(msg)
            return (size[0], size[1])
        if isinstance(size, (int, float)):
            if size % 2 == 0:
                raise ValueError(msg)
            return (size, size)
        raise ValueError(msg)

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Any:
        if not training:
            return None
        batch = self._batch_size(data)
        probability = self._uniform([batch], self.factor[0], self.factor[1])
        threshold = self._uniform([batch], 0.0, 1.0)
        blur = self._uniform([2], self.sigma[0], self.sigma[1], self.compute_dtype) + 1e-6
        return {"should_apply_blur": threshold < probability, "blur_factor": blur}

    def _transform(self, images: Tensor, transformation: Any) -> Tensor:
        if transformation is None:
            return images
        blurred = gaussian_blur(images, tuple(int(k) for k in self.kernel_size), transformation["blur_factor"],
                                self.data_format)
        apply = ao.reshape(convert_to_tensor(transformation["should_apply_blur"]), [-1, 1, 1, 1])
        out = mo.where(apply, blurred, images)
        return mo.clip_by_value(out, mo.cast(self.value_range[0], out.dtype), mo.cast(self.value_range[1], out.dtype))

    def get_config(self) -> dict:
        return self._config(factor=self.factor, kernel_size=self.kernel_size, sigma=self.sigma,
                            value_range=self.value_range, seed=self.seed)


class RandomErasing(_ImagePreprocessing):
    """Erases one random rectangle of each image (with a probability drawn in ``factor``), its sides the
    square roots of fractions drawn in ``scale`` of the image's sides, filling it with ``fill_value`` (a
    number or 3 numbers; by default Gaussian noise times ``value_range[1]``), clipped to ``value_range``, when
    training."""

    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor: Any = 1.0, scale: Any = (0.02, 0.33), fill_value: Any = None,
                 value_range: Any = (0, 255), seed: int | None = None, data_format: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factor = _factor(factor, self._FACTOR_BOUNDS)
        self.scale = _named_factor(scale, "scale", self._FACTOR_BOUNDS)
        self.fill_value, self.value_range = fill_value, value_range
        self._setup(data_format, seed)
        self.height_axis, self.width_axis, self.channel_axis = ((-2, -1, -3) if self.data_format == "channels_first"
                                                                 else (-3, -2, -1))

    def _bounds(self, batch: Any, length: int, ratio: Tensor) -> tuple:
        dtype = self.compute_dtype
        crop = mo.cast(ratio * length, dtype)
        start = self._uniform([batch], 0, 1, dtype) * (length - crop)
        return start, start + crop

    def _fill(self, images: Tensor) -> Tensor:
        dtype = self.compute_dtype
        fill = self.fill_value
        if fill is None:
            fill = random_ops.stateless_normal(ao.shape(images), _next_seed(self), dtype=dtype) * self.value_range[1]
        elif isinstance(fill, (tuple, list)):
            if len(fill) != 3:
                raise ValueError("The `fill_value` argument should be a number (or a list of three numbers) ")
            fill = ao.ones_like(mo.cast(images, dtype)) * convert_to_tensor(list(fill), dtype=dtype)
        elif isinstance(fill, (int, float)):
            fill = ao.ones_like(mo.cast(images, dtype)) * float(fill)
        else:
            raise ValueError("The `fill_value` argument should be a number (or a list of three numbers) ")
        return mo.clip_by_value(fill, mo.cast(self.value_range[0], dtype), mo.cast(self.value_range[1], dtype))

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Any:
        if not training:
            return None
        images = convert_to_tensor(data)
        batch = self._batch_size(images)
        shape = images._shape_tuple()
        height, width = shape[self.height_axis], shape[self.width_axis]
        dtype = self.compute_dtype
        weight = mo.sqrt(self._uniform([batch, 2], self.scale[0], self.scale[1], dtype))
        x0, x1 = self._bounds(batch, width, weight[:, 0])
        y0, y1 = self._bounds(batch, height, weight[:, 1])
        masks = box_masks(height, width, x0, x1, y0, y1, dtype, self.data_format)
        reps = [1, 1, 1, 1]
        reps[self.channel_axis] = shape[self.channel_axis]
        masks = ao.tile(masks, reps)
        probability = self._uniform([batch], self.factor[0], self.factor[1])
        threshold = self._uniform([batch], 0.0, 1.0)
        return {"apply_erasing": threshold < probability, "batch_masks": masks, "fill_value": self._fill(images)}

    def _transform(self, images: Tensor, transformation: Any) -> Tensor:
        dtype = self.compute_dtype
        erased = mo.where(convert_to_tensor(transformation["batch_masks"]),
                          mo.cast(convert_to_tensor(transformation["fill_value"]), dtype), images)
        apply = ao.reshape(convert_to_tensor(transformation["apply_erasing"]), [-1, 1, 1, 1])
        return mo.where(apply, erased, images)

    def get_config(self) -> dict:
        return self._config(factor=self.factor, scale=self.scale, fill_value=self.fill_value,
                            value_range=self.value_range, seed=self.seed)
