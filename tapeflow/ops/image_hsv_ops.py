"""``RGBToHSV`` and ``HSVToRGB`` (``tf.image.rgb_to_hsv`` / ``hsv_to_rgb``): TF's colorspace kernels
(colorspace_op.h) in the image's float dtype; hue, saturation and value in [0, 1].

``RGBToHSV``'s gradient is TF's rule (image_grad.py): the partial derivatives of value, saturation and hue on
each branch of which channel is largest and smallest, with ``div_no_nan`` reciprocals; written with tapeflow ops,
so it differentiates again. TF declares ``HSVToRGB`` not differentiable, and so does tapeflow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import FailedPreconditionError, InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import shapes
from tapeflow.ops.registry import NotDifferentiable, defgrad, defop

__all__ = ["rgb_to_hsv", "hsv_to_rgb"]


def _check(images: np.ndarray, op: str) -> None:
    if images.ndim < 1:
        raise InvalidArgumentError(None, None, f"input must be at least 1D{list(images.shape)} [Op:{op}]")
    if images.shape[-1] != 3:
        raise FailedPreconditionError(None, None, f"input must have 3 channels but input only has "
                                   f"{images.shape[-1]} channels. [Op:{op}]")


def _rgb_to_hsv_kernel(images):
    _check(images, "RGBToHSV")
    t = images.dtype.type
    r, g, b = images[..., 0], images[..., 1], images[..., 2]
    v = np.maximum(np.maximum(r, g), b)
    rng = v - np.minimum(np.minimum(r, g), b)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(v > 0, rng / v, t(0))
        norm = (t(1) / rng) * (t(1) / t(6))
        h = np.where(r == v, norm * (g - b), np.where(g == v, norm * (b - r) + t(2) / t(6),
                                                      norm * (r - g) + t(4) / t(6)))
    h = np.where(rng > 0, h, t(0))
    h = np.where(h < 0, h + t(1), h)
    return np.stack([h, s, v], axis=-1).astype(images.dtype)


def _hsv_to_rgb_kernel(images):
    _check(images, "HSVToRGB")
    t = images.dtype.type
    h, s, v = images[..., 0], images[..., 1], images[..., 2]
    dh = h * t(6)
    dr = np.clip(np.abs(dh - t(3)) - t(1), t(0), t(1))
    dg = np.clip(-np.abs(dh - t(2)) + t(2), t(0), t(1))
    db = np.clip(-np.abs(dh - t(4)) + t(2), t(0), t(1))
    one_s = -s + t(1)
    return np.stack([(one_s + s * dr) * v, (one_s + s * dg) * v, (one_s + s * db) * v], axis=-1).astype(images.dtype)


RGB_TO_HSV = defop("RGBToHSV", _rgb_to_hsv_kernel, shape=shapes.same)
HSV_TO_RGB = defop("HSVToRGB", _hsv_to_rgb_kernel, shape=shapes.same)
NotDifferentiable("HSVToRGB")  # as TF


@defgrad("RGBToHSV", inputs=True, outputs=True)
def _rgb_to_hsv_grad(op, grad):
    from tapeflow.ops import array_ops as ao
    from tapeflow.ops import math_ops as mo
    from tapeflow.ops.special_ops import divide_no_nan

    x, out = op.inputs[0], op.outputs[0]
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    sat, val = out[..., 1], out[..., 2]
    dt = x.dtype

    def f(cond: Any) -> Tensor:
        return mo.cast(cond, dt)

    def inv(v: Tensor) -> Tensor:
        return divide_no_nan(mo.cast(1.0, dt), v)

    r_big, g_big, b_big = f((r >= b) & (r >= g)), f((g > r) & (g >= b)), f((b > r) & (b > g))
    r_small, g_small, b_small = f((r < b) & (r < g)), f((g <= r) & (g < b)), f((b <= r) & (b <= g))
    rp, gp, bp = f(r > 0), f(g > 0), f(b > 0)
    ds_dr = rp * (r_big * (g_small * g + b_small * b) * inv(r * r) - r_small * inv(g_big * g + b_big * b))
    ds_dg = gp * (g_big * (r_small * r + b_small * b) * inv(g * g) - g_small * inv(r_big * r + b_big * b))
    ds_db = bp * (b_big * (g_small * g + r_small * r) * inv(b * b) - b_small * inv(g_big * g + r_big * r))
    sv2 = inv(sat * sat) * inv(val * val)
    dh_dr = 60 * (rp * r_big * -1 * (g - b) * sv2
                  + gp * g_big * r_small * (b - g) * inv((r - g) * (r - g))
                  + gp * g_big * b_small * -1 * inv(g - b)
                  + bp * b_big * r_small * (b - g) * inv((b - r) * (b - r))
                  + bp * b_big * g_small * inv(b - g)) / 360
    dh_dg = 60 * (gp * g_big * -1 * (b - r) * sv2
                  + rp * r_big * g_small * (r - b) * inv((r - g) * (r - g))
                  + rp * r_big * b_small * inv(r - b)
                  + bp * b_big * g_small * (r - b) * inv((b - g) * (b - g))
                  + bp * b_big * r_small * -1 * inv(b - r)) / 360
    dh_db = 60 * (bp * b_big * -1 * (r - g) * sv2
                  + rp * r_big * b_small * (g - r) * inv((r - b) * (r - b))
                  + rp * r_big * g_small * -1 * inv(r - g)
                  + gp * g_big * b_small * (g - r) * inv((g - b) * (g - b))
                  + gp * g_big * r_small * inv(g - r)) / 360
    gh, gs, gv = grad[..., 0], grad[..., 1], grad[..., 2]
    return ao.stack([gv * r_big + gs * ds_dr + gh * dh_dr, gv * g_big + gs * ds_dg + gh * dh_dg,
                     gv * b_big + gs * ds_db + gh * dh_db], axis=-1)


def _float_image(images: Any, op: str) -> Tensor:
    # (TF's wrapper converts a non-tensor to the op's default type, float32)
    images = images if isinstance(images, Tensor) else convert_to_tensor(images, dtype=dtypes.float32)
    if images.dtype.name not in ("float16", "float32", "float64", "bfloat16"):
        raise InvalidArgumentError(None, None, f"Value for attr 'T' of {images.dtype.name} is not in the list of "
                                   f"allowed values: half, bfloat16, float, double [Op:{op}]. Convert the image "
                                   "with tf.image.convert_image_dtype(image, tf.float32) first.")
    return images


def rgb_to_hsv(images: Any, name: Any = None) -> Tensor:
    """``tf.image.rgb_to_hsv``: RGB images (float, last dimension 3, values in [0, 1]) to HSV, each of hue,
    saturation and value in [0, 1]."""
    return execute(RGB_TO_HSV, (_float_image(images, "RGBToHSV"),))


def hsv_to_rgb(images: Any, name: Any = None) -> Tensor:
    """``tf.image.hsv_to_rgb``: HSV images (float, last dimension 3, values in [0, 1]) to RGB."""
    return execute(HSV_TO_RGB, (_float_image(images, "HSVToRGB"),))
