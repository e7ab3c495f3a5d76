"""Image ops (``tf.image``): AdjustContrastv2, AdjustSaturation and AdjustHue (TF's CPU kernels), and the
functions TF builds from other ops (colour conversions, random adjustments, flips, rotations, crops, pads).

TF registers no gradient for ``AdjustContrastv2``, ``AdjustSaturation`` or ``AdjustHue``: differentiating
through ``tf.image.adjust_contrast`` raises TF's ``LookupError`` (the autodiff guide's own example), here as
there. The ``stateless_random_*`` functions draw with TF's stateless Philox, so a seed gives TF's image.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops, random_ops, shape_ops, shapes, special_ops
from tapeflow.ops.indexing_ops import pad, reverse, tensordot
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


# --- AdjustSaturation / AdjustHue: TF's CPU kernels (per pixel through HSV, float32) --------------------------

def _rgb_to_hsv(r: np.ndarray, g: np.ndarray, b: np.ndarray) -> tuple:
    """TF's ``rgb_to_hsv`` of adjust_saturation_op.cc, in float32."""
    f = np.float32
    v = np.maximum(r, np.maximum(g, b))
    rng = v - np.minimum(r, np.minimum(g, b))
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(v > 0, rng / np.where(v > 0, v, f(1)), f(0)).astype(f)
        norm = f(1) / (f(6) * rng)
        # TF adds the double constants 2.0 / 6.0 and 4.0 / 6.0: those sums are rounded once, from double
        h = np.where(r == v, norm * (g - b),
                     np.where(g == v, ((norm * (b - r)).astype(np.float64) + 2.0 / 6.0).astype(f),
                              ((norm * (r - g)).astype(np.float64) + 4.0 / 6.0).astype(f)))
    h = np.where(rng <= 0, f(0), h)
    h = np.where(h < 0, h + f(1), h)
    return h.astype(f), s, v


def _hsv_to_rgb(h: np.ndarray, s: np.ndarray, v: np.ndarray) -> tuple:
    """TF's ``hsv_to_rgb`` of adjust_saturation_op.cc, in float32."""
    f = np.float32
    c = s * v
    m = v - c
    dh = h * f(6)
    cat = dh.astype(np.int32)  # static_cast<int>: truncation
    fmodu = np.mod(dh, f(2))  # TF's while loops: fmodu in (0, 2], stepping by 2 (exact in float32 here)
    fmodu = np.where(fmodu <= 0, fmodu + f(2), fmodu)
    fmodu = np.where(fmodu >= 2, fmodu - f(2), fmodu)
    x = c * (f(1) - np.abs(fmodu - f(1)))
    z = np.zeros_like(c)
    table = {0: (c, x, z), 1: (x, c, z), 2: (z, c, x), 3: (z, x, c), 4: (x, z, c), 5: (c, z, x)}
    out = [np.zeros_like(c) for _ in range(3)]
    for k, vals in table.items():
        sel = cat == k
        for i in range(3):
            out[i] = np.where(sel, vals[i], out[i])
    return tuple((o + m).astype(f) for o in out)


def _check_rgb(images: np.ndarray, op: str) -> None:
    if images.ndim < 3:
        raise InvalidArgumentError(None, None, f"input must be at least 3-D, got shape{list(images.shape)} [Op:{op}]")
    if images.shape[-1] != 3:
        raise InvalidArgumentError(None, None, f"input must have 3 channels but instead has {images.shape[-1]} "
                                   f"channels. [Op:{op}]")


def _adjust_saturation_kernel(images, scale):
    _check_rgb(images, "AdjustSaturation")
    x = images.astype(np.float32)
    h, s, v = _rgb_to_hsv(x[..., 0], x[..., 1], x[..., 2])
    s = np.minimum(np.float32(1), np.maximum(np.float32(0), s * np.float32(scale)))
    return np.stack(_hsv_to_rgb(h, s, v), -1).astype(images.dtype)


def _rgb_to_hv_range(r, g, b) -> tuple:
    """TF's ``rgb_to_hv_range`` of adjust_hue_op.cc: hue in [0, 6) and the value range."""
    f = np.float32
    rg, bl_r, bg_g, gb, br = r < g, b < r, b > g, b < g, b > r
    cat = np.where(rg, np.where(bl_r, 1, np.where(bg_g, 3, 2)), np.where(gb, 0, np.where(br, 4, 5)))
    vmax = np.where(rg, np.where(bl_r, g, np.where(bg_g, b, g)), np.where(gb, r, np.where(br, b, r)))
    vmid = np.where(rg, np.where(bl_r, r, np.where(bg_g, g, b)), np.where(gb, g, np.where(br, r, b)))
    vmin = np.where(rg, np.where(bl_r, b, r), np.where(gb, b, g))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (vmid - vmin) / (vmax - vmin)
    h = np.where(cat % 2 == 0, cat + ratio, cat + (f(1) - ratio))
    return np.where(vmax == vmin, f(0), h).astype(f), vmin, vmax


def _hv_range_to_rgb(h, vmin, vmax) -> tuple:
    f = np.float32
    cat = h.astype(np.int32)
    ratio = h - cat.astype(f)
    ratio = np.where(cat % 2 == 0, ratio, f(1) - ratio)
    vmid = vmin + ratio * (vmax - vmin)
    table = {0: (vmax, vmid, vmin), 1: (vmid, vmax, vmin), 2: (vmin, vmax, vmid), 3: (vmin, vmid, vmax),
             4: (vmid, vmin, vmax)}
    out = [vmax, vmin, vmid]  # case 5 and default
    for k, vals in table.items():
        sel = cat == k
        out = [np.where(sel, v, o) for v, o in zip(vals, out)]
    return tuple(o.astype(f) for o in out)


def _adjust_hue_kernel(images, delta):
    _check_rgb(images, "AdjustHue")
    x = images.astype(np.float32)
    h, vmin, vmax = _rgb_to_hv_range(x[..., 0], x[..., 1], x[..., 2])
    h = h + np.float32(delta) * np.float32(6)
    h = np.where(h < 0, h + np.float32(6) * np.ceil(-h / np.float32(6)), h).astype(np.float32)
    h = np.where(h >= 6, h - np.float32(6) * np.floor(h / np.float32(6)), h).astype(np.float32)
    h = np.where(h >= 6, h - np.float32(6), np.where(h < 0, h + np.float32(6), h)).astype(np.float32)
    return np.stack(_hv_range_to_rgb(h, vmin, vmax), -1).astype(images.dtype)


ADJUST_SATURATION = defop("AdjustSaturation", _adjust_saturation_kernel, shape=shapes.same)
ADJUST_HUE = defop("AdjustHue", _adjust_hue_kernel, shape=shapes.same)
NoGradientRegistered("AdjustSaturation")  # as TF: no gradient registered (tape.gradient is a LookupError)
NoGradientRegistered("AdjustHue")


def _through_float(image: Any, op: Any, factor: Any) -> Tensor:
    """TF's pattern for the HSV kernels: float16/float32 as they are, other dtypes through float32 and back."""
    image = _image(image)
    orig = image.dtype
    flt = image if orig in (dtypes.float16, dtypes.float32) else convert_image_dtype(image, dtypes.float32)
    f = factor if isinstance(factor, Tensor) else convert_to_tensor(factor, dtype=dtypes.float32)
    return convert_image_dtype(execute(op, (flt, cast(f, dtypes.float32))), orig)


def adjust_saturation(image: Any, saturation_factor: Any, name: Any = None) -> Tensor:
    """``tf.image.adjust_saturation``: each RGB pixel's HSV saturation times ``saturation_factor``, clipped
    to [0, 1] (integer images through float32 and back)."""
    return _through_float(image, ADJUST_SATURATION, saturation_factor)


def adjust_hue(image: Any, delta: Any, name: Any = None) -> Tensor:
    """``tf.image.adjust_hue``: each RGB pixel's hue rotated by ``delta`` (in [-1, 1], a fraction of the
    colour wheel)."""
    return _through_float(image, ADJUST_HUE, delta)


# --- colour conversions and per-image adjustments (TF's compositions of other ops) ---------------------------

def rgb_to_grayscale(images: Any, name: Any = None) -> Tensor:
    """``tf.image.rgb_to_grayscale``: ``[..., 3]`` to ``[..., 1]`` with TF's weights (0.2989, 0.5870, 0.1140),
    computed in float32 and converted back to the image's dtype."""
    images = _image(images)
    orig = images.dtype
    flt = convert_image_dtype(images, dtypes.float32)
    gray = tensordot(flt, convert_to_tensor([0.2989, 0.5870, 0.1140], dtype=dtypes.float32), [[-1], [-1]])
    return convert_image_dtype(ao.expand_dims(gray, -1), orig)


def grayscale_to_rgb(images: Any, name: Any = None) -> Tensor:
    """``tf.image.grayscale_to_rgb``: the one channel repeated three times."""
    images = _image(images)
    shape = images.shape
    if shape.rank is not None and (shape.rank < 2 or shape[-1] not in (1, None)):
        if shape.rank < 2:
            raise ValueError(f"'image' (shape {shape}) must be at least two-dimensional.")
        raise ValueError(f"Last dimension of a grayscale image should be size 1, got shape {shape}")
    return ao.tile(images, [1] * (shape.rank - 1) + [3])


def adjust_gamma(image: Any, gamma: Any = 1, gain: Any = 1) -> Tensor:
    """``tf.image.adjust_gamma``: ``gain * image ** gamma`` (integer images through float32 and back,
    saturating)."""
    image = _image(image)
    orig = image.dtype
    flt = image if orig in (dtypes.float16, dtypes.float32) else convert_image_dtype(image, dtypes.float32)
    if not isinstance(gamma, Tensor) and gamma < 0:
        raise ValueError("Gamma should be a non-negative real number.")
    out = cast(gain, flt.dtype) * math_ops.pow(flt, cast(gamma, flt.dtype))
    return convert_image_dtype(out, orig, saturate=True)


def per_image_standardization(image: Any) -> Tensor:
    """``tf.image.per_image_standardization``: each image to zero mean and unit variance (float32), the
    standard deviation kept at least ``1 / sqrt(num_pixels * channels)``."""
    image = _image(image)
    _check_image(image, "per_image_standardization")
    x = cast(image, dtypes.float32)
    num = math_ops.reduce_prod(ao.shape(x)[-3:])
    mean = math_ops.reduce_mean(x, axis=[-1, -2, -3], keepdims=True)
    std = special_ops.reduce_std(x, axis=[-1, -2, -3], keepdims=True)
    adjusted = math_ops.maximum(std, math_ops.rsqrt(cast(num, dtypes.float32)))
    return math_ops.divide(x - mean, adjusted)


# --- random colour adjustments: TF's draws (stateless ones bit-equal to TF's Philox) -------------------------

def _check_delta(max_delta: Any) -> None:
    if not isinstance(max_delta, Tensor) and max_delta < 0:
        raise ValueError("max_delta must be non-negative.")


def _check_bounds(lower: Any, upper: Any) -> None:
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")


def random_brightness(image: Any, max_delta: Any, seed: Any = None) -> Tensor:
    """``tf.image.random_brightness``: ``adjust_brightness`` by a delta drawn from [-max_delta, max_delta)."""
    _check_delta(max_delta)
    return adjust_brightness(image, random_ops.uniform([], -max_delta, max_delta, seed=seed))


def stateless_random_brightness(image: Any, max_delta: Any, seed: Any) -> Tensor:
    """``tf.image.stateless_random_brightness``: as ``random_brightness``, the delta a stateless draw of
    ``seed`` (shape [2]), TF's number for the same seed."""
    _check_delta(max_delta)
    return adjust_brightness(image, random_ops.stateless_uniform([], seed, -max_delta, max_delta))


def random_contrast(image: Any, lower: Any, upper: Any, seed: Any = None) -> Tensor:
    """``tf.image.random_contrast``: ``adjust_contrast`` by a factor drawn from [lower, upper)."""
    _check_bounds(lower, upper)
    return adjust_contrast(image, random_ops.uniform([], lower, upper, seed=seed))


def stateless_random_contrast(image: Any, lower: Any, upper: Any, seed: Any) -> Tensor:
    """``tf.image.stateless_random_contrast``: the factor a stateless draw of ``seed``."""
    _check_bounds(lower, upper)
    return adjust_contrast(image, random_ops.stateless_uniform([], seed, lower, upper))


def random_saturation(image: Any, lower: Any, upper: Any, seed: Any = None) -> Tensor:
    """``tf.image.random_saturation``: ``adjust_saturation`` by a factor drawn from [lower, upper)."""
    _check_bounds(lower, upper)
    return adjust_saturation(image, random_ops.uniform([], lower, upper, seed=seed))


def stateless_random_saturation(image: Any, lower: Any, upper: Any, seed: Any = None) -> Tensor:
    """``tf.image.stateless_random_saturation``: the factor a stateless draw of ``seed``."""
    _check_bounds(lower, upper)
    return adjust_saturation(image, random_ops.stateless_uniform([], seed, lower, upper))


def _check_hue_delta(max_delta: Any) -> None:
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")


def random_hue(image: Any, max_delta: Any, seed: Any = None) -> Tensor:
    """``tf.image.random_hue``: ``adjust_hue`` by a delta drawn from [-max_delta, max_delta) (at most 0.5)."""
    _check_hue_delta(max_delta)
    return adjust_hue(image, random_ops.uniform([], -max_delta, max_delta, seed=seed))


def stateless_random_hue(image: Any, max_delta: Any, seed: Any) -> Tensor:
    """``tf.image.stateless_random_hue``: the delta a stateless draw of ``seed``."""
    _check_hue_delta(max_delta)
    return adjust_hue(image, random_ops.stateless_uniform([], seed, -max_delta, max_delta))


# --- geometry: flips, rotations, crops and pads --------------------------------------------------------------

def _rank34(image: Tensor) -> int:
    _check_image(image, "")
    rank = image.shape.rank
    if rank not in (3, 4):
        raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")
    return rank


def _random_flip(image: Any, axis: int, draw: Any) -> Tensor:
    """TF's ``_random_flip``: one draw (< 0.5 flips) for an image, ``round(draw)`` per image for a batch."""
    image = _image(image)
    if _rank34(image) == 3:
        return math_ops.where(math_ops.less(draw([]), 0.5), reverse(image, [axis]), image)
    u = draw(ao.shape(image)[:1])
    flips = cast(ao.reshape(math_ops.round(u), [-1, 1, 1, 1]), image.dtype)
    return flips * reverse(image, [axis + 1]) + (1 - flips) * image


def random_flip_left_right(image: Any, seed: Any = None) -> Tensor:
    """``tf.image.random_flip_left_right``: flips (each image of a batch) with probability 1/2."""
    return _random_flip(image, 1, lambda shape: random_ops.uniform(shape, 0, 1.0, seed=seed))


def random_flip_up_down(image: Any, seed: Any = None) -> Tensor:
    """``tf.image.random_flip_up_down``: flips (each image of a batch) upside down with probability 1/2."""
    return _random_flip(image, 0, lambda shape: random_ops.uniform(shape, 0, 1.0, seed=seed))


def stateless_random_flip_left_right(image: Any, seed: Any) -> Tensor:
    """``tf.image.stateless_random_flip_left_right``: the flips TF makes for ``seed``."""
    return _random_flip(image, 1, lambda shape: random_ops.stateless_uniform(shape, seed, 0, 1.0))


def stateless_random_flip_up_down(image: Any, seed: Any) -> Tensor:
    """``tf.image.stateless_random_flip_up_down``: the flips TF makes for ``seed``."""
    return _random_flip(image, 0, lambda shape: random_ops.stateless_uniform(shape, seed, 0, 1.0))


def transpose(image: Any, name: Any = None) -> Tensor:
    """``tf.image.transpose``: swaps height and width (``[h, w, c]`` or ``[batch, h, w, c]``)."""
    image = _image(image)
    return ao.transpose(image, [1, 0, 2] if _rank34(image) == 3 else [0, 2, 1, 3])


def rot90(image: Any, k: Any = 1, name: Any = None) -> Tensor:
    """``tf.image.rot90``: rotates counter-clockwise by ``k`` quarter turns (``k`` a Python or eager int;
    a ``k`` known only when a graph runs raises ``NotImplementedError``)."""
    image = _image(image)
    rank = _rank34(image)
    kt = k if isinstance(k, Tensor) else convert_to_tensor(k, dtype=dtypes.int32)
    if kt.shape.rank not in (0, None):
        raise ValueError(f"Shape {kt.shape} must have rank 0")
    if shape_ops.is_symbolic(kt):
        value = shape_ops.partial_value(kt)
        if not isinstance(value, int):
            raise NotImplementedError("tf.image.rot90 with a k known only when the graph runs is not implemented "
                                      "in tapeflow")
    else:
        value = int(kt._value)
    h, w = (0, 1) if rank == 3 else (1, 2)
    perm = list(range(rank))
    perm[h], perm[w] = w, h
    turns = value % 4
    if turns == 1:
        return ao.transpose(reverse(image, [w]), perm)
    if turns == 2:
        return reverse(image, [h, w])
    if turns == 3:
        return reverse(ao.transpose(image, perm), [w])
    return image


def central_crop(image: Any, central_fraction: Any) -> Tensor:
    """``tf.image.central_crop``: the central ``central_fraction`` (in (0, 1]) of the height and width, the
    offsets TF's ``int((size - size * fraction) / 2)``."""
    image = _image(image)
    fraction = float(central_fraction._value) if isinstance(central_fraction, Tensor) else float(central_fraction)
    if fraction <= 0.0 or fraction > 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    if fraction == 1.0:
        return image
    _check_image(image, "central_crop")
    rank = image.shape.rank
    if rank not in (3, 4):
        raise ValueError(f"`image` should either be a Tensor with rank = 3 or rank = 4. Had rank = {rank}.")
    hw = image.shape.as_list()[-3:-1]
    dyn = ao.shape(image)
    begin, size = [0] * rank, [-1] * rank
    for i, d in enumerate(hw):
        axis = rank - 3 + i
        if d is None:  # TF's float64 arithmetic on the run-time size
            n = cast(dyn[axis], dtypes.float64)
            start = cast((n - n * fraction) / 2, dtypes.int32)
            begin[axis], size[axis] = start, dyn[axis] - start * 2
        else:
            start = int((float(d) - float(d) * fraction) / 2)
            begin[axis], size[axis] = start, d - start * 2
    return ao.slice_(image, begin, size)


def _batched(image: Any, what: str) -> tuple[Tensor, bool]:
    image = _image(image)
    rank = image.shape.rank
    if rank == 3:
        return ao.expand_dims(image, 0), False
    if rank != 4:
        raise ValueError(f"'image' (shape {image.shape}) must have either 3 or 4 dimensions.")
    return image, True


def _dims(image: Tensor) -> list:
    """Static dims where known, else the run-time ``tf.shape`` entry (TF's ``_ImageDimensions``)."""
    static = image.shape.as_list()
    dyn = ao.shape(image) if None in static else None
    return [d if d is not None else dyn[i] for i, d in enumerate(static)]


def _static_check(cond: Any, message: str) -> None:
    """TF's ``_assert`` for Python values (tensors are not checked, as TF's graph asserts are not here)."""
    if not isinstance(cond, Tensor) and not cond:
        raise ValueError(message)


def crop_to_bounding_box(image: Any, offset_height: Any, offset_width: Any, target_height: Any,
                         target_width: Any) -> Tensor:
    """``tf.image.crop_to_bounding_box``: ``image[offset_height:offset_height + target_height,
    offset_width:offset_width + target_width]`` (of each image of a batch)."""
    x, batched = _batched(image, "crop_to_bounding_box")
    _, height, width, _ = _dims(x)
    _static_check(offset_width >= 0, "offset_width must be >= 0.")
    _static_check(offset_height >= 0, "offset_height must be >= 0.")
    _static_check(target_width > 0, "target_width must be > 0.")
    _static_check(target_height > 0, "target_height must be > 0.")
    _static_check(width >= target_width + offset_width, "width must be >= target + offset.")
    _static_check(height >= target_height + offset_height, "height must be >= target + offset.")
    out = ao.slice_(x, [0, offset_height, offset_width, 0], [-1, target_height, target_width, -1])
    return out if batched else ao.squeeze(out, [0])


def pad_to_bounding_box(image: Any, offset_height: Any, offset_width: Any, target_height: Any,
                        target_width: Any) -> Tensor:
    """``tf.image.pad_to_bounding_box``: zeros around the image, ``offset_height`` rows above and
    ``offset_width`` columns left, to ``target_height`` x ``target_width``."""
    x, batched = _batched(image, "pad_to_bounding_box")
    _, height, width, _ = _dims(x)
    after_w, after_h = target_width - offset_width - width, target_height - offset_height - height
    _static_check(offset_height >= 0, "offset_height must be >= 0")
    _static_check(offset_width >= 0, "offset_width must be >= 0")
    _static_check(after_w >= 0, "width must be <= target - offset")
    _static_check(after_h >= 0, "height must be <= target - offset")
    out = pad(x, [[0, 0], [offset_height, after_h], [offset_width, after_w], [0, 0]])
    return out if batched else ao.squeeze(out, [0])


def resize_with_crop_or_pad(image: Any, target_height: Any, target_width: Any) -> Tensor:
    """``tf.image.resize_with_crop_or_pad``: centrally crops and/or zero-pads to the target size (TF's
    offsets: ``max(-diff // 2, 0)`` cropped, ``max(diff // 2, 0)`` padded)."""
    x, batched = _batched(image, "resize_with_crop_or_pad")
    _static_check(target_width > 0, "target_width must be > 0.")
    _static_check(target_height > 0, "target_height must be > 0.")
    _, height, width, _ = _dims(x)

    def max_(a, b):
        return math_ops.maximum(a, b) if isinstance(a, Tensor) or isinstance(b, Tensor) else max(a, b)

    def min_(a, b):
        return math_ops.minimum(a, b) if isinstance(a, Tensor) or isinstance(b, Tensor) else min(a, b)

    wd, hd = target_width - width, target_height - height
    cropped = crop_to_bounding_box(x, max_(-hd // 2, 0), max_(-wd // 2, 0), min_(target_height, height),
                                   min_(target_width, width))
    out = pad_to_bounding_box(cropped, max_(hd // 2, 0), max_(wd // 2, 0), target_height, target_width)
    return out if batched else ao.squeeze(out, [0])


def _crop(value: Any, size: Any, draw: Any, op: str) -> Tensor:
    """TF's ``random_crop``: offsets ``draw(int32 in [0, int32 max)) % (shape - size + 1)``."""
    value = _image(value)
    size_t = size if isinstance(size, Tensor) else convert_to_tensor(size, dtype=dtypes.int32)
    size_t = cast(size_t, dtypes.int32)
    shape = ao.shape(value)
    static = value.shape.as_list()
    if not shape_ops.is_symbolic(size_t) and None not in static:
        sz = [int(v) for v in np.asarray(size_t._value).reshape(-1)]
        if len(sz) != len(static) or any(s > d for s, d in zip(sz, static)):
            raise InvalidArgumentError(None, None, "Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. "
                                       "Summarized data: b'Need value.shape >= size, got '\n"
                                       f"{', '.join(map(str, static))}\n{', '.join(map(str, sz))}")
    limit = shape - size_t + 1
    offset = math_ops.floormod(draw(ao.shape(shape)), limit)
    return ao.slice_(value, offset, size_t)


def random_crop(value: Any, size: Any, seed: Any = None, name: Any = None) -> Tensor:
    """``tf.image.random_crop``: a ``size`` window of ``value`` at a uniformly random offset."""
    return _crop(value, size, lambda shape: random_ops.uniform(shape, 0, dtypes.int32.max, dtype=dtypes.int32,
                                                               seed=seed), "RandomCrop")


def stateless_random_crop(value: Any, size: Any, seed: Any, name: Any = None) -> Tensor:
    """``tf.image.stateless_random_crop``: the window TF crops for ``seed`` (shape [2])."""
    return _crop(value, size, lambda shape: random_ops.stateless_uniform(shape, seed, 0, dtypes.int32.max,
                                                                         dtype=dtypes.int32), "StatelessRandomCrop")


# -- edges, variation and image quality: compositions of differentiable ops, as TF builds them -------------------


def total_variation(images: Any, name: Any = None) -> Tensor:
    """Sum of absolute differences of neighbouring pixels: a scalar for one ``[h, w, c]`` image, one per image
    for a ``[batch, h, w, c]`` batch (``tf.image.total_variation``)."""
    images = convert_to_tensor(images)
    ndims = images.shape.rank
    if ndims == 3:
        dif1, dif2, axis = images[1:, :, :] - images[:-1, :, :], images[:, 1:, :] - images[:, :-1, :], None
    elif ndims == 4:
        dif1, dif2 = images[:, 1:, :, :] - images[:, :-1, :, :], images[:, :, 1:, :] - images[:, :, :-1, :]
        axis = [1, 2, 3]
    else:
        raise ValueError("'images' must be either 3 or 4-dimensional.")
    return math_ops.reduce_sum(math_ops.abs(dif1), axis=axis) + math_ops.reduce_sum(math_ops.abs(dif2), axis=axis)


def image_gradients(image: Any) -> tuple:
    """``(dy, dx)``: forward differences along height and width of a ``[batch, h, w, d]`` batch, the last row /
    column zero (``tf.image.image_gradients``)."""
    image = convert_to_tensor(image)
    if image.shape.rank != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not {image.shape}.")
    b, h, w, d = (int(v) for v in image.shape.as_list()) if image.shape.is_fully_defined() else ao.unstack(
        shape_ops.shape(image))
    dy = ao.concat([image[:, 1:, :, :] - image[:, :-1, :, :], ao.zeros(ao.stack([b, 1, w, d]), image.dtype)], 1)
    dx = ao.concat([image[:, :, 1:, :] - image[:, :, :-1, :], ao.zeros(ao.stack([b, h, 1, d]), image.dtype)], 2)
    return dy, dx


def sobel_edges(image: Any) -> Tensor:
    """``[batch, h, w, d, 2]``: each channel's Sobel responses (dy, dx) with reflected borders
    (``tf.image.sobel_edges``)."""
    from tapeflow.ops.nn.conv import depthwise_conv2d

    image = convert_to_tensor(image)
    kernels = np.transpose(np.asarray([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]], [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]]),
                           (1, 2, 0))[:, :, None, :]
    kernels = ao.tile(convert_to_tensor(kernels.astype(image.dtype.as_numpy_dtype)), [1, 1, image.shape[-1], 1])
    padded = pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    out = depthwise_conv2d(padded, kernels, [1, 1, 1, 1], "VALID")
    return ao.reshape(out, image.shape.as_list() + [2])


def _yuv_like(images: Any, kernel: list) -> Tensor:
    images = convert_to_tensor(images)
    k = convert_to_tensor(np.asarray(kernel, images.dtype.as_numpy_dtype))
    return tensordot(images, k, axes=[[images.shape.rank - 1], [0]])


def rgb_to_yuv(images: Any) -> Tensor:
    """RGB in [0, 1] to YUV (``tf.image.rgb_to_yuv``)."""
    return _yuv_like(images, [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
                              [0.114, 0.43601035, -0.10001026]])


def yuv_to_rgb(images: Any) -> Tensor:
    """YUV to RGB (``tf.image.yuv_to_rgb``)."""
    return _yuv_like(images, [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]])


def rgb_to_yiq(images: Any) -> Tensor:
    """RGB in [0, 1] to YIQ (``tf.image.rgb_to_yiq``)."""
    return _yuv_like(images, [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617],
                              [0.114, -0.32134392, 0.31119955]])


def yiq_to_rgb(images: Any) -> Tensor:
    """YIQ to RGB (``tf.image.yiq_to_rgb``)."""
    return _yuv_like(images, [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021],
                              [0.6208248, -0.64720424, 1.70423049]])


def _check_compatible(a: Tensor, b: Tensor) -> None:
    # TF's _verify_compatible_image_shapes, on static shapes
    s1, s2 = a.shape, b.shape
    for s in (s1, s2):
        if s.rank is not None and s.rank < 3:
            raise ValueError(f"Shape {s} must have rank at least 3")
    if not s1[-3:].is_compatible_with(s2[-3:]):
        raise ValueError(f"Shapes {s1[-3:]} and {s2[-3:]} are incompatible")
    for d1, d2 in zip(reversed(s1.as_list()[:-3]), reversed(s2.as_list()[:-3])):
        if not (d1 == 1 or d2 == 1 or d1 is None or d2 is None or d1 == d2):
            raise ValueError(f"Two images are not compatible: {s1} and {s2}")


def psnr(a: Any, b: Any, max_val: Any, name: Any = None) -> Tensor:
    """Peak signal-to-noise ratio over the last three axes, in dB (``tf.image.psnr``)."""
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    max_val = convert_image_dtype(cast(max_val, a.dtype), dtypes.float32)
    a, b = convert_image_dtype(a, dtypes.float32), convert_image_dtype(b, dtypes.float32)
    mse = math_ops.reduce_mean(math_ops.squared_difference(a, b), [-3, -2, -1])
    _check_compatible(a, b)  # after the difference, as TF (whose broadcasting error comes first)
    return math_ops.subtract(20 * math_ops.log(max_val) / math_ops.log(10.0),
                             np.float32(10 / np.log(10)) * math_ops.log(mse))


def _ssim_per_channel(img1: Tensor, img2: Tensor, max_val: Tensor, filter_size: int, filter_sigma: float, k1: float,
                      k2: float, return_index_map: bool) -> tuple:
    from tapeflow.ops.nn.activations import softmax
    from tapeflow.ops.nn.conv import depthwise_conv2d

    for img in (img1, img2):
        hw = img.shape.as_list()[-3:-1]
        if any(d is not None and d < filter_size for d in hw):
            raise InvalidArgumentError(f"ssim: the images' height and width {hw} must be at least filter_size "
                                       f"{filter_size}.")
    sigma = convert_to_tensor(filter_sigma, img1.dtype)
    coords = cast(ao.range_(filter_size), img1.dtype) - (filter_size - 1) / 2.0
    g = math_ops.square(coords) * (-0.5 / math_ops.square(sigma))
    g = ao.reshape(ao.reshape(g, [1, -1]) + ao.reshape(g, [-1, 1]), [1, -1])
    kernel = ao.tile(ao.reshape(softmax(g), [filter_size, filter_size, 1, 1]), [1, 1, img1.shape[-1], 1])

    def reducer(x: Tensor) -> Tensor:
        lead = x.shape.as_list()[:-3]
        y = depthwise_conv2d(ao.reshape(x, [-1] + x.shape.as_list()[-3:]), kernel, [1, 1, 1, 1], "VALID")
        return ao.reshape(y, (lead if None not in lead else [-1]) + y.shape.as_list()[1:])

    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mean0, mean1 = reducer(img1), reducer(img2)
    num0 = mean0 * mean1 * 2.0
    den0 = math_ops.square(mean0) + math_ops.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(img1 * img2) * 2.0
    den1 = reducer(math_ops.square(img1) + math_ops.square(img2))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    if return_index_map:
        return luminance * cs, cs
    return math_ops.reduce_mean(luminance * cs, [-3, -2]), math_ops.reduce_mean(cs, [-3, -2])


def ssim(img1: Any, img2: Any, max_val: Any, filter_size: int = 11, filter_sigma: float = 1.5, k1: float = 0.01,
         k2: float = 0.03, return_index_map: bool = False) -> Tensor:
    """Structural similarity of two images or batches (11x11 Gaussian window of width 1.5), one value per image
    (``tf.image.ssim``)."""
    img1, img2 = convert_to_tensor(img1), convert_to_tensor(img2)
    _check_compatible(img1, img2)
    max_val = convert_image_dtype(cast(max_val, img1.dtype), dtypes.float32)
    img1, img2 = convert_image_dtype(img1, dtypes.float32), convert_image_dtype(img2, dtypes.float32)
    per_channel, _ = _ssim_per_channel(img1, img2, max_val, int(filter_size), filter_sigma, k1, k2, return_index_map)
    return math_ops.reduce_mean(per_channel, [-1])


_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def ssim_multiscale(img1: Any, img2: Any, max_val: Any, power_factors: Any = _MSSSIM_WEIGHTS, filter_size: int = 11,
                    filter_sigma: float = 1.5, k1: float = 0.01, k2: float = 0.03) -> Tensor:
    """Multi-scale structural similarity (``tf.image.ssim_multiscale``): the contrast-structure terms of
    ``len(power_factors)`` scales (each a 2x2 average pool of the last, odd sizes padded symmetrically first) and
    the last scale's SSIM, relu'd, raised to ``power_factors`` and multiplied; one value per image. The images
    must be at least ``filter_size * 2 ** (len(power_factors) - 1)`` pixels high and wide (176 by default)."""
    from tapeflow.ops import indexing_ops
    from tapeflow.ops.math_ops import relu
    from tapeflow.ops.nn.pooling import avg_pool

    img1, img2 = convert_to_tensor(img1), convert_to_tensor(img2)
    _check_compatible(img1, img2)
    max_val = convert_image_dtype(cast(max_val, img1.dtype), dtypes.float32)
    imgs = [convert_image_dtype(img1, dtypes.float32), convert_image_dtype(img2, dtypes.float32)]
    heads = [x.shape.as_list()[:-3] for x in imgs]
    mcs = []
    for k in range(len(power_factors)):
        if k > 0:
            tail = imgs[0].shape.as_list()[-3:]
            flat = [ao.reshape(x, [-1] + x.shape.as_list()[-3:]) for x in imgs]
            rem_h, rem_w = tail[0] % 2, tail[1] % 2
            if rem_h or rem_w:
                flat = [indexing_ops.pad(x, [[0, 0], [0, rem_h], [0, rem_w], [0, 0]], mode="SYMMETRIC") for x in flat]
            down = [avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID") for x in flat]
            imgs = [ao.reshape(x, h + x.shape.as_list()[1:]) for x, h in zip(down, heads)]
        ssim_per_channel, cs = _ssim_per_channel(imgs[0], imgs[1], max_val, int(filter_size), filter_sigma, k1, k2,
                                                 False)
        mcs.append(relu(cs))
    mcs.pop()  # the last scale contributes its SSIM, l * cs
    stacked = ao.stack(mcs + [relu(ssim_per_channel)], axis=-1)
    weights = convert_to_tensor(np.asarray(power_factors, np.float32))
    ms_ssim = math_ops.reduce_prod(math_ops.pow(stacked, weights), [-1])
    return math_ops.reduce_mean(ms_ssim, [-1])
