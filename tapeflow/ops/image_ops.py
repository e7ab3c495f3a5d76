"""Image ops (``tf.image``): AdjustContrastv2 and the functions built from other ops.

TF registers no gradient for ``AdjustContrastv2``: differentiating through
``tf.image.adjust_contrast`` raises TF's ``LookupError`` (the autodiff guide's own
example), here as there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import shapes
from tapeflow.ops.indexing_ops import reverse
from tapeflow.ops.math_ops import cast, multiply, saturate_cast
from tapeflow.ops.registry import NoGradientRegistered, defop


def _adjust_contrast_kernel(images, contrast_factor):
    if images.ndim < 3:
        dims = ",".join(map(str, images.shape))
        raise InvalidArgumentError(None, None, f"input must be at least 3-D, got shape[{dims}] [Op:AdjustContrastv2]")
    if np.ndim(contrast_factor) != 0:
        raise InvalidArgumentError(None, None, "contrast_factor must be scalar: "
                                   f"{list(np.shape(contrast_factor))} [Op:AdjustContrastv2]")
    x = images.astype(np.float32)
    h, w, c = x.shape[-3:]
    # TF's CPU kernel: a running float sum over the pixels, times 1 / (h * w)
    flat = x.reshape(x.shape[:-3] + (h * w, c))
    total = np.cumsum(flat, axis=-2, dtype=np.float32)[..., -1:, :] if h * w else np.zeros_like(flat[..., :1, :])
    mean = (total * np.float32(1.0 / (h * w) if h * w else 0.0)).reshape(x.shape[:-3] + (1, 1, c))
    return ((x - mean) * np.float32(contrast_factor) + mean).astype(images.dtype)


ADJUST_CONTRAST = defop("AdjustContrastv2", _adjust_contrast_kernel, shape=shapes.same)
NoGradientRegistered("AdjustContrastv2")  # as TF: tape.gradient through it is a LookupError


def _image(images: Any) -> Tensor:
    return images if isinstance(images, Tensor) else convert_to_tensor(images)


def convert_image_dtype(image: Any, dtype: Any, saturate: bool = False, name: Any = None) -> Tensor:
    """``tf.image.convert_image_dtype``: integers map to [0, MAX], floats to [0, 1), rescaled as TF does."""
    image = _image(image)
    dtype = dtypes.as_dtype(dtype)
    src = image.dtype
    if not (src.is_floating or src.is_integer) or not (dtype.is_floating or dtype.is_integer):
        raise AttributeError(f"`image` dtype {src.name} and `dtype` {dtype.name} must be floating or integer")
    if src == dtype:
        return image
    if src.is_integer and dtype.is_integer:
        scale_in, scale_out = src.max, dtype.max
        if scale_in > scale_out:
            return cast(image // ((scale_in + 1) // (scale_out + 1)), dtype)
        scale = (scale_out + 1) // (scale_in + 1)
        return multiply(cast(image, dtype), cast(scale, dtype))
    if src.is_floating and dtype.is_floating:
        return cast(image, dtype)
    # the Python scale becomes a tensor of the float dtype itself (a float32 constant would round it)
    if src.is_integer:
        return multiply(cast(image, dtype), convert_to_tensor(1.0 / src.max, dtype=dtype))
    scaled = multiply(image, convert_to_tensor(dtype.max + 0.5, dtype=src))
    return saturate_cast(scaled, dtype) if saturate else cast(scaled, dtype)


def adjust_contrast(images: Any, contrast_factor: Any) -> Tensor:
    """``tf.image.adjust_contrast``: ``(x - mean) * contrast_factor + mean`` per channel, the mean over the
    height and width of each image (integer images go through float32 and back, saturating)."""
    images = _image(images)
    orig = images.dtype
    flt = images if orig in (dtypes.float16, dtypes.float32) else convert_image_dtype(images, dtypes.float32)
    factor = contrast_factor if isinstance(contrast_factor, Tensor) else convert_to_tensor(contrast_factor,
                                                                                           dtype=dtypes.float32)
    out = execute(ADJUST_CONTRAST, (flt, factor))
    return convert_image_dtype(out, orig, saturate=True)


def adjust_brightness(image: Any, delta: Any) -> Tensor:
    """``tf.image.adjust_brightness``: ``image + delta`` (integer images through float32 and back, saturating)."""
    image = _image(image)
    orig = image.dtype
    flt = image if orig.is_floating else convert_image_dtype(image, dtypes.float32)
    out = flt + cast(delta, flt.dtype)
    return convert_image_dtype(out, orig, saturate=True)


def _check_image(image: Tensor, op: str) -> None:
    rank = image.shape.rank
    if rank is not None and rank < 3:
        raise ValueError(f"'image' (shape {image.shape}) must be at least three-dimensional.")


def flip_left_right(image: Any) -> Tensor:
    """``tf.image.flip_left_right``: reverses the width axis (``[h, w, c]`` or ``[batch, h, w, c]``)."""
    image = _image(image)
    _check_image(image, "flip_left_right")
    return reverse(image, [image.shape.rank - 2])


def flip_up_down(image: Any) -> Tensor:
    """``tf.image.flip_up_down``: reverses the height axis (``[h, w, c]`` or ``[batch, h, w, c]``)."""
    image = _image(image)
    _check_image(image, "flip_up_down")
    return reverse(image, [image.shape.rank - 3])
