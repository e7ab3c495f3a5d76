"""Image resampling ops: ``ImageProjectiveTransformV3`` (Keras's ``affine_transform``), ``ResizeBilinear`` and
``ResizeNearestNeighbor`` (``tf.image.resize``), with their gradient ops.

The kernels follow TF's CPU kernels step by step in float32 (coordinate maps, lerp order), so outputs are
TF's bit for bit. Gradients are TF's: the resize gradients are the exact adjoints (``ResizeBilinearGrad``,
``ResizeNearestNeighborGrad``, each differentiable by the forward op again); the projective transform's is
TF's approximation, the inverse transform applied to the incoming gradient (exact for permutations).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops.registry import NoGradientRegistered, defgrad, defop

__all__ = ["image_projective_transform_v3", "resize"]

_F = np.float32


# --- ImageProjectiveTransformV3 ---------------------------------------------------------------------------------

def _map_reflect(c: np.ndarray, n: int) -> np.ndarray:
    if n <= 1:
        return np.zeros_like(c)
    sz2 = 2 * n
    c = c.copy()
    neg, big = c < 0, c > n - 1
    cn = c[neg]
    cn = _F(sz2) * np.trunc(-cn / _F(sz2)).astype(_F) + cn
    c[neg] = np.where(cn < -n, cn + _F(sz2), -cn - _F(1))
    cb = c[big]
    cb = cb - _F(sz2) * np.trunc(cb / _F(sz2)).astype(_F)
    c[big] = np.where(cb >= n, _F(sz2) - cb - _F(1), cb)
    return np.clip(c, _F(0), _F(n - 1))


def _map_wrap(c: np.ndarray, n: int) -> np.ndarray:
    if n <= 1:
        return np.zeros_like(c)
    sz = n - 1
    c = c.copy()
    neg, big = c < 0, c > n - 1
    c[neg] = c[neg] + _F(n) * (np.trunc(-c[neg] / _F(sz)) + 1).astype(_F)
    c[big] = c[big] - _F(n) * np.trunc(c[big] / _F(sz)).astype(_F)
    return np.clip(c, _F(0), _F(n - 1))


_MAPS = {
    "REFLECT": _map_reflect, "WRAP": _map_wrap, "CONSTANT": lambda c, n: c,
    "NEAREST": lambda c, n: np.clip(c, _F(0), _F(n - 1)),
}


def _read(images: np.ndarray, b: np.ndarray, y: np.ndarray, x: np.ndarray, fill: np.float32) -> np.ndarray:
    """``images[b, y, x, :]`` where ``(y, x)`` lies inside, else ``fill`` (float32, shape ``y.shape + (C,)``)."""
    _, h, w, _ = images.shape
    inside = (y >= 0) & (y < h) & (x >= 0) & (x < w)
    vals = images[b, np.clip(y, 0, h - 1), np.clip(x, 0, w - 1)].astype(_F)
    return np.where(inside[..., None], vals, fill)


def _projective_kernel(images, transforms, output_shape, fill_value, interpolation, fill_mode, static_shape=None):
    if images.ndim != 4:
        raise InvalidArgumentError(None, None, "Input images must have rank 4 [Op:ImageProjectiveTransformV3]")
    n, h, w, _ = images.shape
    t = np.asarray(transforms, _F)
    if t.ndim != 2 or t.shape[1] != 8 or t.shape[0] not in (1, n):
        raise InvalidArgumentError(None, None, "Input transform should be num_images x 8 or 1 x 8 "
                                   "[Op:ImageProjectiveTransformV3]")
    oh, ow = (int(v) for v in np.asarray(output_shape).reshape(-1))
    t = np.broadcast_to(t, (n, 8))
    x = np.arange(ow, dtype=np.int64).astype(_F)[None, None, :]
    y = np.arange(oh, dtype=np.int64).astype(_F)[None, :, None]
    a = [t[:, k][:, None, None] for k in range(8)]
    with np.errstate(divide="ignore", invalid="ignore"):
        proj = a[6] * x + a[7] * y + _F(1)
        in_x = (a[0] * x + a[1] * y + a[2]) / proj
        in_y = (a[3] * x + a[4] * y + a[5]) / proj
    in_x, in_y = np.broadcast_to(in_x, (n, oh, ow)), np.broadcast_to(in_y, (n, oh, ow))
    mapper = _MAPS[fill_mode]
    xm, ym = mapper(in_x, w), mapper(in_y, h)
    fill = _F(fill_value)
    b = np.arange(n)[:, None, None]
    with np.errstate(invalid="ignore"):
        if interpolation == "NEAREST":
            def rnd(v):  # std::round: half away from zero
                return (np.sign(v) * np.floor(np.abs(v) + _F(0.5))).astype(np.int64)
            out = _read(images, b, rnd(ym), rnd(xm), fill)
        else:
            yf, xf = np.floor(ym), np.floor(xm)
            yc, xc = yf + _F(1), xf + _F(1)
            yfi, xfi, yci, xci = (v.astype(np.int64) for v in (yf, xf, yc, xc))
            wx0, wx1 = (xc - xm)[..., None], (xm - xf)[..., None]
            top = wx0 * _read(images, b, yfi, xfi, fill) + wx1 * _read(images, b, yfi, xci, fill)
            bottom = wx0 * _read(images, b, yci, xfi, fill) + wx1 * _read(images, b, yci, xci, fill)
            out = (yc - ym)[..., None] * top + (ym - yf)[..., None] * bottom
    out = np.where((proj == 0)[..., None] if proj.shape[0] == n else np.broadcast_to(proj == 0, (n, oh, ow))[..., None],
                   fill, out)
    if images.dtype.kind in "iu":
        with np.errstate(invalid="ignore"):
            return np.trunc(out).astype(images.dtype)
    return out.astype(images.dtype)


def _projective_shape(specs, interpolation, fill_mode, static_shape=None):
    s, dt = specs[0]
    if s is None:
        return [(None, dt)]
    hw = tuple(static_shape) if static_shape is not None else (None, None)
    return [((s[0],) + hw + (s[3],), dt)]


IMAGE_PROJECTIVE_TRANSFORM = defop("ImageProjectiveTransformV3", _projective_kernel, shape=_projective_shape)


@defgrad("ImageProjectiveTransformV3", inputs=True)
def _projective_grad(op, grad):
    from tapeflow.ops import array_ops as ao
    from tapeflow.ops import linalg_ops
    from tapeflow.ops import math_ops as mo

    images, transforms = op.inputs[0], op.inputs[1]
    m = ao.reshape(ao.concat([transforms, mo.cast(ao.ones_like(transforms[:, :1]), transforms.dtype)], 1),
                   [-1, 3, 3])
    inv = ao.reshape(linalg_ops.inv(m), [-1, 9])
    inv = mo.divide(inv, inv[:, 8:9])[:, :8]
    out = execute(IMAGE_PROJECTIVE_TRANSFORM,
                  (grad, inv, ao.shape(images)[1:3], convert_to_tensor(np.float32(0))),
                  {"interpolation": op.get_attr("interpolation"), "fill_mode": op.get_attr("fill_mode"),
                   "static_shape": op.input_shapes[0][1:3] if op.input_shapes[0] is not None else None})
    return [out, None, None, None]


_INTERPOLATIONS = ("NEAREST", "BILINEAR")
_FILL_MODES = ("REFLECT", "WRAP", "CONSTANT", "NEAREST")


def image_projective_transform_v3(images: Any, transforms: Any, output_shape: Any, fill_value: Any = 0.0,
                                  interpolation: str = "BILINEAR", fill_mode: str = "CONSTANT",
                                  name: Any = None) -> Tensor:
    """``tf.raw_ops.ImageProjectiveTransformV3``: each output pixel ``(x, y)`` samples the input at
    ``((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)``, ``k = c0 x + c1 y + 1``, with one
    ``[a0, a1, a2, b0, b1, b2, c0, c1]`` row per image (or one for all), points outside mapped by
    ``fill_mode`` (``REFLECT``/``WRAP``/``CONSTANT``/``NEAREST``) and sampled ``NEAREST`` or ``BILINEAR``."""
    images = images if isinstance(images, Tensor) else convert_to_tensor(images)
    transforms = convert_to_tensor(transforms, dtype=dtypes.float32)
    if interpolation not in _INTERPOLATIONS:
        raise InvalidArgumentError(None, None, f"Invalid interpolation {interpolation}. Supported types: "
                                   "NEAREST, BILINEAR [Op:ImageProjectiveTransformV3]")
    if fill_mode not in _FILL_MODES:
        raise InvalidArgumentError(None, None, f"Invalid fill_mode {fill_mode}. Supported types: REFLECT, WRAP, "
                                   "CONSTANT, NEAREST [Op:ImageProjectiveTransformV3]")
    static = None
    if not isinstance(output_shape, Tensor):
        static = tuple(int(v) for v in np.asarray(output_shape).reshape(-1))
    output_shape = convert_to_tensor(output_shape, dtype=dtypes.int32)
    fill_value = convert_to_tensor(fill_value, dtype=dtypes.float32)
    return execute(IMAGE_PROJECTIVE_TRANSFORM, (images, transforms, output_shape, fill_value),
                   {"interpolation": interpolation, "fill_mode": fill_mode, "static_shape": static})


# --- ResizeBilinear / ResizeNearestNeighbor ------------------------------------------------------------------

def _scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    if align_corners and out_size > 1:
        return _F(in_size - 1) / _F(out_size - 1)
    return _F(in_size) / _F(out_size)


def _bilinear_weights(in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool):
    scale = _scale(in_size, out_size, align_corners)
    o = np.arange(out_size, dtype=np.int64).astype(_F)
    src = (o + _F(0.5)) * scale - _F(0.5) if half_pixel_centers else o * scale
    src_f = np.floor(src)
    lower = np.maximum(src_f.astype(np.int64), 0)
    upper = np.minimum(np.ceil(src).astype(np.int64), in_size - 1)
    return lower, upper, (src - src_f).astype(_F)


def _nearest_index(in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool):
    scale = _scale(in_size, out_size, align_corners)
    o = np.arange(out_size, dtype=np.int64).astype(_F)
    src = (o + _F(0.5)) * scale if half_pixel_centers else o * scale
    idx = (np.sign(src) * np.floor(np.abs(src) + _F(0.5)) if align_corners else np.floor(src)).astype(np.int64)
    idx = np.minimum(idx, in_size - 1)
    return np.maximum(idx, 0) if half_pixel_centers else idx


def _check_resize(images, size, op):
    if images.ndim != 4:
        raise InvalidArgumentError(None, None, f"input must be 4-dimensional{list(images.shape)} [Op:{op}]")
    oh, ow = (int(v) for v in np.asarray(size).reshape(-1))
    if oh <= 0 or ow <= 0:
        raise InvalidArgumentError(None, None, f"output dimensions must be positive [Op:{op}]")
    return oh, ow


def _resize_bilinear_kernel(images, size, align_corners=False, half_pixel_centers=False, static_shape=None):
    oh, ow = _check_resize(images, size, "ResizeBilinear")
    _, h, w, _ = images.shape
    yl, yu, ylerp = _bilinear_weights(h, oh, align_corners, half_pixel_centers)
    xl, xu, xlerp = _bilinear_weights(w, ow, align_corners, half_pixel_centers)
    x = images.astype(_F)
    top, bottom = x[:, yl], x[:, yu]
    tl, tr, bl, br = top[:, :, xl], top[:, :, xu], bottom[:, :, xl], bottom[:, :, xu]
    xlerp = xlerp[None, None, :, None]
    t = tl + (tr - tl) * xlerp
    b = bl + (br - bl) * xlerp
    return (t + (b - t) * ylerp[None, :, None, None]).astype(_F)


def _resize_bilinear_grad_kernel(grads, original, align_corners=False, half_pixel_centers=False):
    n, h, w, c = original.shape
    _, oh, ow, _ = grads.shape
    yl, yu, ylerp = _bilinear_weights(h, oh, align_corners, half_pixel_centers)
    xl, xu, xlerp = _bilinear_weights(w, ow, align_corners, half_pixel_centers)
    g = grads.astype(_F)
    # along width, then height: the transposes of the two lerps
    gw = np.zeros((n, oh, w, c), _F)
    np.add.at(gw, (slice(None), slice(None), xl), g * (_F(1) - xlerp)[None, None, :, None])
    np.add.at(gw, (slice(None), slice(None), xu), g * xlerp[None, None, :, None])
    out = np.zeros((n, h, w, c), _F)
    np.add.at(out, (slice(None), yl), gw * (_F(1) - ylerp)[None, :, None, None])
    np.add.at(out, (slice(None), yu), gw * ylerp[None, :, None, None])
    return out.astype(original.dtype)


def _resize_nearest_kernel(images, size, align_corners=False, half_pixel_centers=False, static_shape=None):
    oh, ow = _check_resize(images, size, "ResizeNearestNeighbor")
    _, h, w, _ = images.shape
    yi = _nearest_index(h, oh, align_corners, half_pixel_centers)
    xi = _nearest_index(w, ow, align_corners, half_pixel_centers)
    return np.ascontiguousarray(images[:, yi][:, :, xi])


def _resize_nearest_grad_kernel(grads, size, align_corners=False, half_pixel_centers=False):
    h, w = (int(v) for v in np.asarray(size).reshape(-1))
    n, oh, ow, c = grads.shape
    yi = _nearest_index(h, oh, align_corners, half_pixel_centers)
    xi = _nearest_index(w, ow, align_corners, half_pixel_centers)
    gw = np.zeros((n, oh, w, c), grads.dtype)
    np.add.at(gw, (slice(None), slice(None), xi), grads)
    out = np.zeros((n, h, w, c), grads.dtype)
    np.add.at(out, (slice(None), yi), gw)
    return out


def _resize_shape(out_dtype):
    def rule(specs, align_corners=False, half_pixel_centers=False, static_shape=None):
        s, dt = specs[0]
        dt = out_dtype or dt
        if s is None:
            return [(None, dt)]
        hw = tuple(static_shape) if static_shape is not None else (None, None)
        return [((s[0],) + hw + (s[3],), dt)]
    return rule


def _grad_shape(specs, align_corners=False, half_pixel_centers=False):
    return [(specs[1][0], specs[1][1])]


def _nn_grad_shape(specs, align_corners=False, half_pixel_centers=False):
    s = specs[0][0]
    return [(None if s is None else (s[0], None, None, s[3]), specs[0][1])]


RESIZE_BILINEAR = defop("ResizeBilinear", _resize_bilinear_kernel, shape=_resize_shape(np.dtype(np.float32)))
RESIZE_BILINEAR_GRAD = defop("ResizeBilinearGrad", _resize_bilinear_grad_kernel, shape=_grad_shape)
RESIZE_NEAREST = defop("ResizeNearestNeighbor", _resize_nearest_kernel, shape=_resize_shape(None))
RESIZE_NEAREST_GRAD = defop("ResizeNearestNeighborGrad", _resize_nearest_grad_kernel, shape=_nn_grad_shape)


def _attrs(op):
    return {"align_corners": op.get_attr("align_corners"), "half_pixel_centers": op.get_attr("half_pixel_centers")}


@defgrad("ResizeBilinear", inputs=True)
def _resize_bilinear_grad(op, grad):
    images = op.inputs[0]
    g = execute(RESIZE_BILINEAR_GRAD, (grad, images), _attrs(op))
    return [g if images.dtype.is_floating else None, None]


@defgrad("ResizeBilinearGrad", inputs=True)
def _resize_bilinear_grad_grad(op, grad):
    from tapeflow.ops import array_ops as ao
    from tapeflow.ops import math_ops as mo

    grads = op.inputs[0]
    gg = execute(RESIZE_BILINEAR, (grad, ao.shape(grads)[1:3]),
                 {**_attrs(op), "static_shape": None if op.input_shapes[0] is None else op.input_shapes[0][1:3]})
    return [mo.cast(gg, grads.dtype), None]


@defgrad("ResizeNearestNeighbor", inputs=True)
def _resize_nearest_grad(op, grad):
    from tapeflow.ops import array_ops as ao

    g = execute(RESIZE_NEAREST_GRAD, (grad, ao.shape(op.inputs[0])[1:3]), _attrs(op))
    return [g, None]


@defgrad("ResizeNearestNeighborGrad", inputs=True)
def _resize_nearest_grad_grad(op, grad):
    from tapeflow.ops import array_ops as ao

    g = execute(RESIZE_NEAREST, (grad, ao.shape(op.inputs[0])[1:3]), {**_attrs(op), "static_shape": None})
    return [g, None]


_METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")


# --- bicubic (TF 2's ResizeBicubic with half-pixel centres: Keys' cubic, a = -0.5) ----------------------------
_TABLE_SIZE = 1024
_KEYS_TABLE: list = []


def _keys_table() -> np.ndarray:
    """TF's table of Keys-cubic coefficients at 1/1024 steps (float32, as its kernel computes them)."""
    if not _KEYS_TABLE:
        a = _F(-0.5)
        x = (np.arange(_TABLE_SIZE + 1) / _TABLE_SIZE).astype(_F)
        near = ((a + _F(2)) * x - (a + _F(3))) * x * x + _F(1)
        x1 = x + _F(1)
        far = ((a * x1 - _F(5) * a) * x1 + _F(8) * a) * x1 - _F(4) * a
        table = np.empty(2 * (_TABLE_SIZE + 1), _F)
        table[0::2], table[1::2] = near, far
        _KEYS_TABLE.append(table)
    return _KEYS_TABLE[0]


def _bicubic_taps(in_size: int, out_size: int) -> tuple:
    """For each output position, its 4 input indices (clamped) and weights (0 for taps outside the image,
    then renormalized to sum 1), TF's float32 arithmetic."""
    table = _keys_table()
    scale = _F(in_size) / _F(out_size)
    loc = (np.arange(out_size).astype(_F) + _F(0.5)) * scale - _F(0.5)
    base = np.floor(loc)
    offset = np.rint((loc - base) * _F(_TABLE_SIZE)).astype(np.int64)
    base = base.astype(np.int64)
    coeff = [table[offset * 2 + 1], table[offset * 2], table[(_TABLE_SIZE - offset) * 2],
             table[(_TABLE_SIZE - offset) * 2 + 1]]
    idx, w = [], []
    for k in range(4):
        raw = base - 1 + k
        clamped = np.clip(raw, 0, in_size - 1)
        idx.append(clamped)
        w.append(np.where(clamped == raw, coeff[k], _F(0)).astype(_F))
    total = ((w[0] + w[1]) + w[2]) + w[3]
    ok = np.abs(total) >= _F(1000) * np.finfo(_F).tiny
    inv = np.where(ok, _F(1) / np.where(ok, total, _F(1)), _F(1)).astype(_F)
    return idx, [np.where(ok, wk * inv, wk).astype(_F) for wk in w]


def _area_weights(in_size: int, out_size: int) -> np.ndarray:
    """[out, in]: how much of input cell i output cell o covers (TF's ResizeArea: cells past the edge count as
    the last one)."""
    scale = _F(in_size) / _F(out_size)
    w = np.zeros((out_size, in_size), _F)
    for o in range(out_size):
        lo, hi = _F(o) * scale, _F(o + 1) * scale
        for i in range(int(np.floor(lo)), int(np.ceil(hi))):
            w[o, min(i, in_size - 1)] += _F(min(_F(i + 1), hi) - max(_F(i), lo))
    return w


def _resize_area_kernel(images, size, align_corners=False, half_pixel_centers=False, static_shape=None):
    """The mean over each output cell's area of the input (TF's ResizeArea), as two weighted sums: equal to
    TF's to float32 rounding."""
    oh, ow = _check_resize(images, size, "ResizeArea")
    _, h, w, _ = images.shape
    x = images.astype(_F, copy=False)
    out = np.einsum("xj,byjc->byxc", _area_weights(w, ow), np.einsum("yi,bijc->byjc", _area_weights(h, oh), x))
    return (out * (_F(1.0) / ((_F(h) / _F(oh)) * (_F(w) / _F(ow))))).astype(_F)


RESIZE_AREA = defop("ResizeArea", _resize_area_kernel, shape=_resize_shape(np.dtype(np.float32)))
NoGradientRegistered("ResizeArea")  # TF registers none: differentiating it is TF's LookupError


# --- ScaleAndTranslate: the kernel-filter resizes (lanczos, gaussian, mitchellcubic; antialias=True) ---------
def _k_triangle(x):
    return np.where(x < _F(1), _F(1) - x, _F(0))


def _k_keyscubic(x):
    far = ((_F(-0.5) * x + _F(2.5)) * x - _F(4)) * x + _F(2)
    return np.where(x >= _F(2), _F(0), np.where(x >= _F(1), far, ((_F(1.5) * x - _F(2.5)) * x) * x + _F(1)))


def _k_mitchell(x):
    far = (((_F(-7.0 / 18.0)) * x + _F(2)) * x - _F(10.0 / 3.0)) * x + _F(16.0 / 9.0)
    near = (((_F(7.0 / 6.0)) * x - _F(2)) * x) * x + _F(8.0 / 9.0)
    return np.where(x >= _F(2), _F(0), np.where(x >= _F(1), far, near))


def _k_lanczos(radius):
    def k(x):
        pi = _F(3.14159265359)
        with np.errstate(divide="ignore", invalid="ignore"):
            v = _F(radius) * np.sin(pi * x) * np.sin(pi * x / _F(radius)) / (pi * pi * x * x)
        return np.where(x > _F(radius), _F(0), np.where(x <= _F(1e-3), _F(1), v)).astype(_F)
    return k


def _k_gaussian(x):
    radius, sigma = _F(1.5), _F(1.5) / _F(3)
    return np.where(x >= radius, _F(0), np.exp(-x * x / (_F(2) * sigma * sigma))).astype(_F)


_FILTERS = {"triangle": (_k_triangle, 1.0), "keyscubic": (_k_keyscubic, 2.0), "mitchellcubic": (_k_mitchell, 2.0),
            "lanczos3": (_k_lanczos(3), 3.0), "lanczos5": (_k_lanczos(5), 5.0), "gaussian": (_k_gaussian, 1.5)}


def _filter_weights(kernel: str, in_size: int, out_size: int, antialias: bool) -> np.ndarray:
    """[out, in] weights of TF's ScaleAndTranslate spans (scale out/in, no translation): the kernel centred on
    each output's sampling point, widened by 1/scale when ``antialias`` and downsampling, normalized."""
    fn, radius = _FILTERS[kernel]
    scale = _F(out_size) / _F(in_size)
    inv = _F(1.0) / scale
    kscale = max(inv, _F(1.0)) if antialias else _F(1.0)
    w = np.zeros((out_size, in_size), _F)
    for o in range(out_size):
        sample = (_F(o) + _F(0.5)) * inv
        if sample < 0 or sample > in_size:
            continue
        lo = int(np.clip(np.ceil(sample - _F(radius) * kscale - _F(0.5)), 0, in_size - 1))
        hi = int(np.clip(np.floor(sample + _F(radius) * kscale - _F(0.5)), 0, in_size - 1)) + 1
        src = np.arange(lo, hi).astype(_F)
        taps = fn(np.abs((src + _F(0.5) - sample) / kscale).astype(_F)).astype(_F)
        total = _F(0)
        for t in taps:  # (sequentially, as TF's)
            total = _F(total + t)
        if abs(total) >= _F(1000) * np.finfo(_F).tiny:
            w[o, lo:hi] = taps * (_F(1) / total)
    return w


def _resize_filtered(x: Tensor, out_h: int, out_w: int, kernel: str, antialias: bool) -> Tensor:
    """TF's ScaleAndTranslate resize as two weighted sums (equal to TF's to float32 rounding); differentiable
    to the images, as TF's ScaleAndTranslateGrad."""
    from tapeflow.ops import indexing_ops, math_ops as mo

    in_h, in_w = x.shape.as_list()[1:3]
    x = mo.cast(x, dtypes.float32) if x.dtype != dtypes.float32 else x
    wy, wx = _filter_weights(kernel, in_h, out_h, antialias), _filter_weights(kernel, in_w, out_w, antialias)
    rows = indexing_ops.einsum("yi,bijc->byjc", convert_to_tensor(wy), x)
    return indexing_ops.einsum("xj,byjc->byxc", convert_to_tensor(wx), rows)


def _resize_bicubic(x: Tensor, out_h: int, out_w: int) -> Tensor:
    """Rows first (each needed column of the 4 input rows), then columns, in TF's order of float32 sums;
    composed of gathers and products, so its gradients (any order) are theirs."""
    from tapeflow.ops import array_ops as ao
    from tapeflow.ops import math_ops as mo

    in_h, in_w = x.shape.as_list()[1:3]
    x = mo.cast(x, dtypes.float32) if x.dtype != dtypes.float32 else x
    out = x
    for axis, n_in, n_out in ((1, in_h, out_h), (2, in_w, out_w)):
        idx, w = _bicubic_taps(n_in, n_out)
        shape = [1, 1, 1, 1]
        shape[axis] = n_out
        acc = None
        for k in range(4):
            term = mo.multiply(convert_to_tensor(w[k].reshape(shape)), ao.gather(out, convert_to_tensor(idx[k]),
                                                                                 axis=axis))
            acc = term if acc is None else mo.add_op(acc, term)
        out = acc
    return out


def resize(images: Any, size: Any, method: str = "bilinear", preserve_aspect_ratio: bool = False,
           antialias: bool = False, name: Any = None) -> Tensor:
    """``tf.image.resize`` (every TF 2 method: ``bilinear``, ``nearest``, ``bicubic``, ``area``, ``lanczos3``/``5``,
    ``gaussian``, ``mitchellcubic``): ``[h, w, c]`` or ``[batch, h, w, c]`` images to ``size = [new_height,
    new_width]``; nearest keeps the dtype, the others give float32. ``antialias`` filters when downsampling
    (TF's ScaleAndTranslate); ``preserve_aspect_ratio`` fits the image inside ``size``."""
    method = getattr(method, "value", method)
    if method not in _METHODS:
        raise NotImplementedError(f"tf.image.resize(method={method!r}) is not implemented in tapeflow "
                                  "(bilinear, nearest, bicubic, area, lanczos3, lanczos5, gaussian and mitchellcubic "
                                  "are)")
    images = images if isinstance(images, Tensor) else convert_to_tensor(images)
    rank = images.shape.rank
    if rank not in (3, 4):
        raise ValueError("'images' must have either 3 or 4 dimensions.")
    static = None
    if not isinstance(size, Tensor):
        static = tuple(int(v) for v in np.asarray(size).reshape(-1))
        if len(static) != 2:
            raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
    if preserve_aspect_ratio:  # the largest size within ``size`` keeping the image's aspect ratio (TF's rounding)
        hw = images.shape.as_list()[rank - 3:rank - 1]
        if static is None or None in hw:
            raise NotImplementedError("tf.image.resize(preserve_aspect_ratio=True) with sizes known only at run "
                                      "time is not implemented in tapeflow")
        factor = min(_F(static[0]) / _F(hw[0]), _F(static[1]) / _F(hw[1]))
        static = tuple(int(np.round(_F(factor * _F(d)))) for d in hw)
        size = static
    size_t = convert_to_tensor(size, dtype=dtypes.int32)
    from tapeflow.ops import array_ops as ao

    x = ao.expand_dims(images, 0) if rank == 3 else images
    kernel = {"lanczos3": "lanczos3", "lanczos5": "lanczos5", "gaussian": "gaussian",
              "mitchellcubic": "mitchellcubic"}.get(method)
    if antialias and method in ("bilinear", "bicubic"):  # TF: these become filters of their own kernel
        kernel = "triangle" if method == "bilinear" else "keyscubic"
    if method == "bicubic" or kernel is not None:
        if static is None or None in x.shape.as_list()[1:3]:
            raise NotImplementedError(f"tf.image.resize(method='{method}') with sizes known only at run time is "
                                      "not implemented in tapeflow; give the images' and the target size statically")
        if min(static) <= 0:
            raise InvalidArgumentError(None, None, "output dimensions must be positive")
        out = _resize_bicubic(x, *static) if kernel is None else _resize_filtered(x, *static, kernel, antialias)
        return ao.squeeze(out, [0]) if rank == 3 else out
    attrs = {"align_corners": False, "half_pixel_centers": True, "static_shape": static}
    if method == "area":
        out = execute(RESIZE_AREA, (x, size_t), {"align_corners": False, "static_shape": static})
        return ao.squeeze(out, [0]) if rank == 3 else out
    out = execute(RESIZE_BILINEAR if method == "bilinear" else RESIZE_NEAREST, (x, size_t), attrs)
    return ao.squeeze(out, [0]) if rank == 3 else out
