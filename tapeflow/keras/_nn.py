"""The few ``tf.nn`` pieces Keras layers need, as composites of core ops.

Layers call these helpers; each prefers the real ``tf.nn`` op when the op
library provides it (``tapeflow.nn.conv2d`` ...) and otherwise builds the same
result from core ops (strided slices, concat, matmul, reductions), which keeps
the layers differentiable to any order either way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import tapeflow.nn as _tfnn
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.tensor import Tensor, constant
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo


def _native(name: str):
    return getattr(_tfnn, name, None)


def _pair(v: Any, what: str) -> tuple[int, int]:
    if isinstance(v, int):
        return v, v
    v = tuple(int(a) for a in v)
    if len(v) == 1:
        return v[0], v[0]
    if len(v) == 4:  # TF's NHWC form [1, sh, sw, 1]
        return v[1], v[2]
    if len(v) != 2:
        raise ValueError(f"{what} must be an int or a tuple of 2 ints, got {v!r}")
    return v


def _same_pads(size: int | None, k: int, s: int) -> tuple[int, int]:
    if size is None:
        raise NotImplementedError("padding='SAME' on an unknown spatial dimension (composite conv/pool)")
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return total // 2, total - total // 2


def _pad_hw(x: Tensor, pads: tuple, value: float) -> Tensor:
    """Pads H and W of an NHWC tensor with ``value`` (concat, so it is differentiable)."""
    (top, bottom), (left, right) = pads
    n, h, w, c = x._shape_tuple()
    dt = x._value.dtype

    def block(shape):
        # batch dim may be unknown in a graph: broadcast a constant against x's first row.
        z = constant(np.full((1,) + shape[1:], value, dt))
        return ao.broadcast_to(z, (n,) + shape[1:]) if n not in (None, 1) else z

    if n is None and (top or bottom or left or right):
        raise NotImplementedError("padding='SAME' with an unknown batch size (composite conv/pool)")
    if top or bottom:
        parts = ([block((n, top, w, c))] if top else []) + [x] + ([block((n, bottom, w, c))] if bottom else [])
        x = ao.concat(parts, axis=1)
        h = h + top + bottom
    if left or right:
        parts = ([block((n, h, left, c))] if left else []) + [x] + ([block((n, h, right, c))] if right else [])
        x = ao.concat(parts, axis=2)
    return x


def _windows(x: Tensor, kh: int, kw: int, sh: int, sw: int, dh: int = 1, dw: int = 1) -> list:
    """The kh*kw strided views of ``x`` (NHWC), one per window offset, row major."""
    _, h, w, _ = x._shape_tuple()
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (w - dw * (kw - 1) - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise InvalidArgumentError(
            None, None,
            f"Computed output size would be negative: input spatial size {h}x{w} is smaller than the "
            f"window {kh}x{kw} (dilation {dh}x{dw}). Use padding='same' or a smaller kernel.",
        )
    views = []
    for i in range(kh):
        for j in range(kw):
            r0, c0 = i * dh, j * dw
            views.append(x[:, r0:r0 + sh * (oh - 1) + 1:sh, c0:c0 + sw * (ow - 1) + 1:sw, :])
    return views


def conv2d(x: Tensor, kernel: Tensor, strides: Any = 1, padding: str = "VALID", dilations: Any = 1) -> Tensor:
    """NHWC 2-D convolution (cross-correlation), as ``tf.nn.conv2d``."""
    native = _native("conv2d")
    padding = padding.upper()
    if native is not None:
        return native(x, kernel, strides=strides, padding=padding, dilations=dilations)
    sh, sw = _pair(strides, "strides")
    dh, dw = _pair(dilations, "dilations")
    kh, kw, cin, cout = kernel._shape_tuple()
    if x._shape_tuple()[-1] != cin:
        raise InvalidArgumentError(
            None, None,
            f"Conv2D: input depth {x._shape_tuple()[-1]} does not match the kernel's input channels {cin} "
            f"(input {x.shape}, kernel {kernel.shape}) [Op:Conv2D]",
        )
    if padding == "SAME":
        _, h, w, _ = x._shape_tuple()
        x = _pad_hw(x, (_same_pads(h, dh * (kh - 1) + 1, sh), _same_pads(w, dw * (kw - 1) + 1, sw)), 0.0)
    views = _windows(x, kh, kw, sh, sw, dh, dw)
    patches = views[0] if len(views) == 1 else ao.concat(views, axis=-1)  # (N, OH, OW, kh*kw*cin)
    if isinstance(kernel, Tensor):
        k2 = ao.reshape(kernel, (kh * kw * cin, cout))
    else:
        k2 = ao.reshape(kernel.value(), (kh * kw * cin, cout))
    return mo.matmul(patches, k2)  # batched matmul over (N, OH) with the shared kernel


def _pool(x: Tensor, ksize: Any, strides: Any, padding: str, kind: str) -> Tensor:
    kh, kw = _pair(ksize, "ksize")
    sh, sw = _pair(strides, "strides")
    padding = padding.upper()
    _, h, w, _ = x._shape_tuple()
    count = None
    if padding == "SAME":
        pads = (_same_pads(h, kh, sh), _same_pads(w, kw, sw))
        if kind == "max":
            x = _pad_hw(x, pads, -np.inf)
        else:
            # average over the real (unpadded) elements only, as TF's AvgPool
            ones = np.ones((1, h, w, 1), x._value.dtype)
            ones = np.pad(ones, ((0, 0), pads[0], pads[1], (0, 0)))
            counts = sum(_windows_np(ones, kh, kw, sh, sw))
            count = constant(counts.astype(x._value.dtype))
            x = _pad_hw(x, pads, 0.0)
    # Non-overlapping windows tiling the input exactly: one reshape + one reduction.
    _, h, w, c = x._shape_tuple()
    if kh == sh and kw == sw and count is None and None not in (h, w) and h % kh == 0 and w % kw == 0:
        n = x._shape_tuple()[0]
        r = ao.reshape(x, (-1 if n is None else n, h // kh, kh, w // kw, kw, c))
        return mo.reduce_max(r, axis=[2, 4]) if kind == "max" else mo.reduce_mean(r, axis=[2, 4])
    st = ao.stack(_windows(x, kh, kw, sh, sw), axis=-1)
    if kind == "max":
        return mo.reduce_max(st, axis=-1)
    if count is None:
        return mo.reduce_mean(st, axis=-1)
    return mo.reduce_sum(st, axis=-1) / count


def _windows_np(a: np.ndarray, kh, kw, sh, sw) -> list:
    h, w = a.shape[1], a.shape[2]
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    return [a[:, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw, :] for i in range(kh) for j in range(kw)]


def max_pool2d(x: Tensor, ksize: Any, strides: Any, padding: str = "VALID") -> Tensor:
    native = _native("max_pool2d")
    if native is not None:
        return native(x, ksize=ksize, strides=strides, padding=padding.upper())
    return _pool(x, ksize, strides, padding, "max")


def avg_pool2d(x: Tensor, ksize: Any, strides: Any, padding: str = "VALID") -> Tensor:
    native = _native("avg_pool2d")
    if native is not None:
        return native(x, ksize=ksize, strides=strides, padding=padding.upper())
    return _pool(x, ksize, strides, padding, "avg")


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    native = _native("softmax")
    if native is not None:
        return native(x, axis=axis)
    e = mo.exp(x - ao.stop_gradient(mo.reduce_max(x, axis=axis, keepdims=True)))
    return e / mo.reduce_sum(e, axis=axis, keepdims=True)


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    native = _native("log_softmax")
    if native is not None:
        return native(x, axis=axis)
    return x - mo.reduce_logsumexp(x, axis=axis, keepdims=True)


def bias_add(x: Tensor, b: Any) -> Tensor:
    return mo.add(x, b)


def moments(x: Tensor, axes: list, keepdims: bool = False) -> tuple[Tensor, Tensor]:
    """Mean and (biased) variance over ``axes``, as ``tf.nn.moments``."""
    native = _native("moments")
    if native is not None:
        return native(x, axes, keepdims=keepdims)
    mean = mo.reduce_mean(x, axis=axes, keepdims=True)
    var = mo.reduce_mean(mo.squared_difference(x, ao.stop_gradient(mean)), axis=axes, keepdims=True)
    if not keepdims:
        mean, var = ao.squeeze(mean, axes), ao.squeeze(var, axes)
    return mean, var


def one_hot(indices: Tensor, depth: int, dtype: Any) -> Tensor:
    import tapeflow

    native = getattr(tapeflow, "one_hot", None)
    if native is not None:
        return native(indices, depth, dtype=dtype)
    rng = ao.range_(depth)
    idx = mo.cast(indices, rng.dtype)
    return mo.cast(mo.equal(ao.expand_dims(idx, -1), rng), dtype)


def sparse_softmax_cross_entropy_with_logits(labels: Tensor, logits: Tensor) -> Tensor:
    """-log softmax(logits)[label] per example (the fused op when available)."""
    native = _native("sparse_softmax_cross_entropy_with_logits")
    if native is not None:
        return native(labels=labels, logits=logits)
    depth = logits._shape_tuple()[-1]
    return -mo.reduce_sum(one_hot(labels, depth, logits.dtype) * log_softmax(logits), axis=-1)


def softmax_cross_entropy_with_logits(labels: Tensor, logits: Tensor, axis: int = -1) -> Tensor:
    native = _native("softmax_cross_entropy_with_logits")
    if native is not None:
        return native(labels=labels, logits=logits, axis=axis)
    return -mo.reduce_sum(labels * log_softmax(logits, axis=axis), axis=axis)
