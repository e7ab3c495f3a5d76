"""Pooling ops of ``tf.nn``: max / average pooling in 1-D, 2-D and 3-D, max_pool_with_argmax and
pool; each pooling gradient is an op whose own gradient is again a pooling op."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor
from tapeflow.ops import array_ops, threads
from tapeflow.ops._helpers import check_float, t
from tapeflow.ops.nn._common import _dims, _err, _zeros
from tapeflow.ops.nn._geometry import (
    _crop_nd, _geometry, _geometry_nd, _nchw_to_nhwc, _nhwc_to_nchw, _offsets_nd, _pad_hw, _pad_nd, _padding,
    _scatter_windows, _spatial, _windows, _windows_nd,
)
from tapeflow.ops.registry import defgrad, defop


# ============================================================================
# Pooling
# ============================================================================

def _pool_geom(x_shape, ksize, strides, padding):
    return _geometry(x_shape[1:3], ksize, strides, (1, 1), padding)


def _pool_windows(x, ksize, strides, padding, fill):
    out_hw, pads = _pool_geom(x.shape, ksize, strides, padding)
    return _windows(_pad_hw(x, pads, fill), ksize, out_hw, strides, (1, 1)), out_hw, pads


def _lowest(dt):
    return np.finfo(dt).min if dt.kind == "f" else np.iinfo(dt).min


def _tf_max_input(x):
    """As TF's max pooling, which starts from the lowest finite value and
    takes only larger ones: NaN and -inf count as that lowest value."""
    if x.dtype.kind != "f":
        return x
    low = np.finfo(x.dtype).min
    return np.where(np.isnan(x) | (x < low), low, x).astype(x.dtype, copy=False)


def _tiles(x, ksize, strides, padding):
    """The (N, OH, KH, OW, KW, C) view of ``x`` when the windows tile it
    without padding or overlap (stride == window, the usual 2x2/2 pooling;
    VALID drops the rows and columns no window covers), else None. Pooling
    then works on KH*KW whole-array slices instead of a 6-D window view."""
    if tuple(strides) != tuple(ksize):
        return None
    (oh, ow), pads = _pool_geom(x.shape, ksize, strides, padding)
    if pads != ((0, 0), (0, 0)) or oh is None or ow is None:
        return None
    kh, kw = ksize
    n, _, _, c = x.shape
    return x[:, :oh * kh, :ow * kw, :].reshape(n, oh, kh, ow, kw, c)


def _tile_max(v, fn):
    kh, kw = v.shape[2], v.shape[4]
    offsets = [(i, j) for i in range(kh) for j in range(kw)]
    if len(offsets) == 1:
        return v[:, :, 0, :, 0, :].copy()
    y = fn(v[:, :, 0, :, 0, :], v[:, :, offsets[1][0], :, offsets[1][1], :])  # no separate copy
    for i, j in offsets[2:]:
        fn(y, v[:, :, i, :, j, :], out=y)
    return y


def _tile_first_max_masks(v):
    """[((i, j), mask)] as _first_max_masks, for a tiled view ``v``: the
    argmax is the first offset equal to the window's maximum (ties, e.g. the
    zeros after a ReLU, go to the first). None when a window holds a NaN
    (np.maximum propagates it), whose argmax rules only the general path has."""
    found = _tile_max_and_masks(v)
    return None if found is None else found[1]


def _tile_max_and_masks(v):
    """(window maxima, _tile_first_max_masks's masks), or None."""
    if v is None or not v.size:
        return None
    m = _tile_max(v, np.maximum)
    if m.dtype.kind == "f" and m.size and np.isnan(m.min()) or m.dtype.kind == "c" and np.isnan(m).any():
        return None  # (np.minimum propagates NaN: one reduction instead of an isnan pass)
    masks, free = [], None  # free: outputs whose maximum has not been placed yet
    offsets = [(i, j) for i in range(v.shape[2]) for j in range(v.shape[4])]
    for k, (i, j) in enumerate(offsets):
        hit = v[:, :, i, :, j, :] == m
        if free is None:
            free = ~hit
        else:
            hit &= free
            if k + 1 < len(offsets):
                free ^= hit  # hit lies within free
        masks.append(((i, j), hit))
    return m, masks


_SPLIT_ELEMENTS = 1 << 18  # a tiled pooling (or its gradient) of a batch this large runs in image chunks
_CHUNK_ELEMENTS = 1 << 17  # input elements a chunk


def _in_image_chunks(fn, x, out_shape, dtype, always=False):
    """``fn(a, b, out)`` (writes, or returns, the result for images a..b) for chunks of a few images on
    the intra-op threads, into one output, or None when the batch is small or only one thread may run:
    max pooling and its gradients are a few passes of short (C-element) runs each, bound by NumPy's
    per-run cost rather than memory, so they scale with the threads. Windows never cross images, so
    the values are the whole batch's. ``always``: in chunks on one thread too (the gradients: their
    five or so passes over a chunk stay in cache, 20-30% faster on a CNN's 32x28x28x32 ReLU output
    than whole-batch passes; the forward's three passes gained nothing)."""
    n = x.shape[0]
    if n < 2 or x.size < _SPLIT_ELEMENTS or x.dtype.kind != "f" or (
            not always and threads.workers(float("inf")) < 2):
        return None
    step = max(1, _CHUNK_ELEMENTS // max(x[0].size, 1))
    bounds = [(a, min(n, a + step)) for a in range(0, n, step)]
    out = np.empty(out_shape, dtype)

    def chunk(k):
        a, b = bounds[k]
        o = out[a:b]
        part = fn(a, b, o)
        if part is not o:
            o[...] = part

    threads.parallel_for(len(bounds), chunk)
    return out


def _max_pool_kernel(x, ksize, strides, padding):
    v = _tiles(x, ksize, strides, padding)
    if v is not None and v.size:
        out = _in_image_chunks(lambda a, b, _: _max_pool_kernel(x[a:b], ksize, strides, padding), x,
                               (v.shape[0], v.shape[1], v.shape[3], v.shape[5]), x.dtype)
        if out is not None:
            return out
    if v is not None and v.size:
        if x.dtype.kind != "f":
            return _tile_max(v, np.maximum)
        y = _tile_max(v, np.fmax)  # NaN only where a whole window is NaN
        low = np.finfo(x.dtype).min
        if not y.min() >= low:  # NaN and -inf count as the lowest value (as TF); one reduction to check
            y[~(y >= low)] = low
        return y
    x = _tf_max_input(x)
    win, _, _ = _pool_windows(x, ksize, strides, padding, _lowest(x.dtype))
    return win.max(axis=(3, 4))


def _first_max_masks(x, y, ksize, strides, padding):
    """Yields (slices, mask) per window offset (i, j): ``mask`` marks the
    outputs whose argmax sits at that offset; ``slices`` index the matching
    strided view of the padded input. The argmax is TF's: the window's first
    element, replaced only by strictly larger ones (the first maximum; a
    leading NaN keeps it, a later NaN is skipped)."""
    out_hw, pads = _pool_geom(x.shape, ksize, strides, padding)
    n, h, w, c = x.shape
    xp = _pad_hw(x, pads, _lowest(x.dtype))
    valid = _pad_hw(np.ones((1, h, w, 1), dtype=bool), pads, False)
    oh, ow = out_hw
    sh, sw = strides
    cur = np.full(y.shape, _lowest(x.dtype), dtype=x.dtype)
    winner = np.zeros(y.shape, dtype=np.int32)
    started = np.zeros((1, oh, ow, 1), dtype=bool)
    slices = []
    for i in range(ksize[0]):
        for j in range(ksize[1]):
            sl = (slice(None), slice(i, i + (oh - 1) * sh + 1, sh), slice(j, j + (ow - 1) * sw + 1, sw))
            v, ok = xp[sl], valid[sl]
            take = ok & (~started | (v > cur))
            np.copyto(cur, v, where=take)
            np.copyto(winner, len(slices), where=take)
            started |= ok
            slices.append(sl)
    for k, sl in enumerate(slices):
        yield sl, winner == k
    return pads


def _tile_scatter(x, v, masks, g):
    """dx of a tiled max pooling: ``g`` at each window's mask, 0 elsewhere."""
    n, oh, kh, ow, kw, c = v.shape
    dx = np.zeros(x.shape, dtype=g.dtype) if oh * kh != x.shape[1] or ow * kw != x.shape[2] else None
    dv = (np.empty(x.shape, dtype=g.dtype) if dx is None else dx)[:, :oh * kh, :ow * kw, :]
    dv = dv.reshape(n, oh, kh, ow, kw, c)
    for (i, j), hit in masks:
        np.multiply(g, hit, out=dv[:, :, i, :, j, :])
    return dv.reshape(x.shape) if dx is None else dx


def _tile_scatter_first(x, v, y, r, out=None):
    """dx of a tiled max pooling whose output ``y`` came from ``x`` (MaxPoolGradRelu: the forward's own
    output) when ``x`` and ``r`` are all finite, so ``y`` is each window's maximum: ``r`` goes to the
    first offset equal to it. Offset by offset, what a hit takes is subtracted from ``r`` (r - r is 0, r - 0 is r), so
    the last offset gets what no earlier one took without a comparison. Float masks: multiplying by a
    bool mask casts it on every pass. ~25% faster than the masks of _tile_max_and_masks. ``out``: the
    array of x's shape to write dx into (a new one when None)."""
    n, oh, kh, ow, kw, c = v.shape
    full = np.empty(x.shape, dtype=r.dtype) if out is None else out
    if oh * kh != x.shape[1] or ow * kw != x.shape[2]:
        full.fill(0)  # (the rows and columns no window covers get nothing)
    dv = full[:, :oh * kh, :ow * kw, :]
    dv = dv.reshape(n, oh, kh, ow, kw, c)
    offsets = [(i, j) for i in range(kh) for j in range(kw)]
    hit = np.empty(y.shape, dtype=r.dtype)
    for i, j in offsets[:-1]:
        np.equal(v[:, :, i, :, j, :], y, out=hit, casting="unsafe")
        hit *= r
        dv[:, :, i, :, j, :] = hit
        r -= hit
    i, j = offsets[-1]
    dv[:, :, i, :, j, :] = r
    return full


def _max_pool_grad_kernel(x, y, g, ksize, strides, padding):
    if g.size == 0:  # an empty output sends nothing back
        return np.zeros(x.shape, dtype=g.dtype)
    v = _tiles(x, ksize, strides, padding)
    if v is not None:
        out = _in_image_chunks(lambda a, b, _: _max_pool_grad_kernel(x[a:b], y[a:b], g[a:b], ksize, strides, padding),
                               x, x.shape, g.dtype, always=True)
        if out is not None:
            return out
    masks = _tile_first_max_masks(v)
    if masks is not None:
        return _tile_scatter(x, v, masks, g)
    _, pads = _pool_geom(x.shape, ksize, strides, padding)
    (t0, b0), (l0, r0) = pads
    n, h, w, c = x.shape
    hp, wp = h + t0 + b0, w + l0 + r0
    overlap = strides[0] < ksize[0] or strides[1] < ksize[1]
    tiled = not overlap and y.shape[1] * ksize[0] == hp and y.shape[2] * ksize[1] == wp and strides == ksize
    # Disjoint windows that tile the input write every element exactly once.
    dxp = (np.empty if tiled else np.zeros)((n, hp, wp, c), dtype=g.dtype)
    for sl, hit in _first_max_masks(x, y, ksize, strides, padding):
        view = dxp[sl]
        if overlap:
            view += g * hit  # (ufunc where= is several times slower on strided views)
        else:
            np.multiply(g, hit, out=view)
    return dxp[:, t0:t0 + h, l0:l0 + w, :]


def _max_pool_grad_relu_kernel(x, y, g, ksize, strides, padding, out=None):
    """ReluGrad(MaxPoolGrad(x, y, g), x): with tiled windows (no NaN) the ReLU mask is taken on the
    pooled grid (the window maxima > 0: where the gradient lands, x is the maximum), a quarter of
    the full pass. ``out``: where the tiled path may write its result (an image chunk's slice)."""
    if g.size:
        tiled = _tiles(x, ksize, strides, padding) is not None
        found = _in_image_chunks(
            lambda a, b, o: _max_pool_grad_relu_kernel(x[a:b], y[a:b], g[a:b], ksize, strides, padding, o), x,
            x.shape, g.dtype, always=True) if tiled and out is None else None
        if found is not None:
            return found
        v = _tiles(x, ksize, strides, padding)
        if v is not None and x.dtype.kind == "f" and g.dtype.kind == "f" and np.isfinite(x.min()):
            r = g * (y > 0)
            if np.isfinite(r.sum()):  # (inf - inf would spoil the subtraction below; an overflowing sum just
                return _tile_scatter_first(x, v, y, r, out)  # takes the masks)
        found = _tile_max_and_masks(v)
        if found is not None:
            m, masks = found
            return _tile_scatter(x, _tiles(x, ksize, strides, padding), masks, g * (m > 0))
    dx = _max_pool_grad_kernel(x, y, g, ksize, strides, padding)
    return dx * (x > 0)  # (a leading NaN keeps a window's gradient: there x is NaN, not the maximum)


def _max_pool_grad_grad_kernel(x, y, gg, ksize, strides, padding):
    masks = _tile_first_max_masks(_tiles(x, ksize, strides, padding))
    if masks is not None:
        gv = _tiles(gg, ksize, strides, padding)
        out = np.zeros(y.shape, dtype=gg.dtype)
        for (i, j), hit in masks:
            np.copyto(out, gv[:, :, i, :, j, :], where=hit)
        return out
    _, pads = _pool_geom(x.shape, ksize, strides, padding)
    ggp = _pad_hw(gg, pads)
    out = np.zeros(y.shape, dtype=gg.dtype)
    for sl, hit in _first_max_masks(x, y, ksize, strides, padding):
        np.copyto(out, ggp[sl], where=hit)
    return out


def _pool_shape(specs, ksize, strides, padding):
    s, dt = specs[0]
    if s is None:
        return [(None, dt)]
    out_hw, _ = _geometry(s[1:3], ksize, strides, (1, 1), padding)
    return [((s[0],) + out_hw + (s[3],), dt)]


MAX_POOL = defop("MaxPool", _max_pool_kernel, shape=_pool_shape)
MAX_POOL_GRAD = defop("MaxPoolGrad", _max_pool_grad_kernel, shape=lambda specs, **a: [specs[0]])
MAX_POOL_GRAD_GRAD = defop("MaxPoolGradGrad", _max_pool_grad_grad_kernel, shape=lambda specs, **a: [specs[1]])
MAX_POOL_GRAD_RELU = defop("MaxPoolGradRelu", _max_pool_grad_relu_kernel, shape=lambda specs, **a: [specs[0]])


def _pool_attrs(op) -> dict:
    return {"ksize": op.get_attr("ksize"), "strides": op.get_attr("strides"), "padding": op.get_attr("padding")}


@defgrad("MaxPool", inputs=True, outputs=True)
def _max_pool_grad(op, g):
    # The whole gradient goes to the first maximum of each window (as TF).
    return execute(MAX_POOL_GRAD, (op.inputs[0], op.outputs[0], g), _pool_attrs(op))


def relu_through_max_pool_grad(pool_grad, y):
    """``ReluGrad(MaxPoolGrad(y, p, g), y)`` for ``y = relu(...)`` as one MaxPoolGradRelu op: the
    pooling gradient is g at each window's first maximum and 0 elsewhere, and there ``y`` is the
    maximum, so the ReLU mask is taken on the pooled grid instead of a pass over the full one
    (ReLU -> max pooling, every CNN). The Relu gradient rule calls this while tracing, when its
    incoming gradient is a MaxPoolGrad of its output; None otherwise."""
    x, p, g = pool_grad.inputs
    if x._id != y._id:
        return None
    return execute(MAX_POOL_GRAD_RELU, (x, p, g), _pool_attrs(pool_grad))


@defgrad("MaxPoolGrad", inputs=True)
def _max_pool_grad_grad(op, g):
    x, y, _ = op.inputs
    return _zeros(x), _zeros(y), execute(MAX_POOL_GRAD_GRAD, (x, y, g), _pool_attrs(op))


@defgrad("MaxPoolGradRelu", inputs=True)
def _max_pool_grad_relu_grad(op, g):
    # Linear in g: the adjoint of (ReLU mask) o (scatter to the argmax) is gather o mask.
    from tapeflow.ops.math_ops import relu_grad

    x, y, _ = op.inputs
    return _zeros(x), _zeros(y), execute(MAX_POOL_GRAD_GRAD, (x, y, relu_grad(g, x)), _pool_attrs(op))


@defgrad("MaxPoolGradGrad", inputs=True)
def _max_pool_grad_grad_grad(op, g):
    x, y, _ = op.inputs
    return _zeros(x), _zeros(y), execute(MAX_POOL_GRAD, (x, y, g), _pool_attrs(op))


def _avg_counts(in_hw, ksize, strides, padding, dtype):
    """How many real (unpadded) elements each output window covers."""
    ones = np.ones((1,) + tuple(in_hw) + (1,), dtype=dtype)
    win, _, _ = _pool_windows(ones, ksize, strides, padding, 0)
    return win.sum(axis=(3, 4))  # (1, OH, OW, 1)


def _avg_pool_kernel(x, ksize, strides, padding):
    win, _, _ = _pool_windows(x, ksize, strides, padding, 0)
    counts = _avg_counts(x.shape[1:3], ksize, strides, padding, x.dtype)
    return (win.sum(axis=(3, 4)) / counts).astype(x.dtype, copy=False)


def _avg_pool_grad_kernel(g, orig_input_shape, ksize, strides, padding):
    in_shape = (g.shape[0],) + tuple(orig_input_shape[1:])
    if g.size == 0:
        return np.zeros(in_shape, dtype=g.dtype)
    _, pads = _pool_geom(in_shape, ksize, strides, padding)
    counts = _avg_counts(in_shape[1:3], ksize, strides, padding, g.dtype)
    share = g / counts
    n, oh, ow, c = g.shape
    cols = np.broadcast_to(share[:, :, :, None, None, :], (n, oh, ow, ksize[0], ksize[1], c))
    return _scatter_windows(cols, in_shape, pads, strides, (1, 1)).astype(g.dtype, copy=False)


AVG_POOL = defop("AvgPool", _avg_pool_kernel, shape=_pool_shape)
def _avg_pool_grad_shape(specs, orig_input_shape, **attrs):
    s, dt = specs[0]
    return [((None if s is None else s[0],) + tuple(orig_input_shape[1:]), dt)]


AVG_POOL_GRAD = defop("AvgPoolGrad", _avg_pool_grad_kernel, shape=_avg_pool_grad_shape)


@defgrad("AvgPool", inputs=False)
def _avg_pool_grad(op, g):
    if None in op.input_shapes[0][1:]:
        return _dyn_avg_pool_grad("AvgPool", op, g)
    return execute(AVG_POOL_GRAD, (g,), {"orig_input_shape": tuple(op.input_shapes[0]), **_pool_attrs(op)})


@defgrad("AvgPoolGrad", inputs=False)
def _avg_pool_grad_grad(op, g):
    # AvgPoolGrad is the adjoint of the (linear) AvgPool, and vice versa.
    return execute(AVG_POOL, (g,), _pool_attrs(op))


def _pool(op, name, input, ksize, strides, padding, data_format, n_spatial=2):
    x = t(input)
    data_format = data_format or ("NHWC" if n_spatial == 2 else "NWC")
    if data_format not in ("NHWC", "NCHW", "NWC", "NCW"):
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    s = x._shape_tuple()
    if len(s) != n_spatial + 2:
        raise _err(op.name, f"Input must be 4 or 5-dimensional ({name} needs {n_spatial + 2} dims), got shape "
                   f"{_dims(s)}")
    if op is AVG_POOL:
        check_float(x, "AvgPool")
        if not isinstance(padding, str):
            raise TypeError(f"Expected string for argument 'padding' not {padding!r}. (AvgPool takes 'SAME' or "
                            "'VALID' only; pad with tf.pad first for explicit padding.)")
    elif x._value.dtype.kind not in "iuf":
        raise _err("MaxPool", f"MaxPool does not support {x.dtype.name} inputs")
    ks = _spatial(ksize, n_spatial, "ksize", op.name, data_format)
    st = _spatial(strides, n_spatial, "strides", op.name, data_format)
    pad = _padding(padding, n_spatial, op.name, data_format)
    if n_spatial == 1:
        # 1-D pooling runs as 2-D pooling of height 1.
        x = array_ops.expand_dims(x, 1 if data_format == "NWC" else 2)
        ks, st = (1,) + ks, (1,) + st
        pad = pad if isinstance(pad, str) else ((0, 0),) + pad
        data_format = "NHWC" if data_format == "NWC" else "NCHW"
    if data_format == "NCHW":
        x = _nchw_to_nhwc(x)
    sx = x._shape_tuple()
    out_hw, _ = _geometry(sx[1:3], ks, st, (1, 1), pad)
    if any(o is not None and o < 0 for o in out_hw):
        raise _err(op.name, f"Computed output size would be negative: input {list(s)}, ksize {list(ks)}, "
                   f"padding {padding!r}. Use padding='SAME' or a smaller window")
    if not isinstance(pad, str) and any(p >= k for pr, k in zip(pad, ks) for p in pr):
        raise _err(op.name, f"explicit padding {padding!r} must be smaller than the window size {list(ks)}")
    y = execute(op, (x,), {"ksize": ks, "strides": st, "padding": pad})
    if data_format == "NCHW":
        y = _nhwc_to_nchw(y)
    if n_spatial == 1:
        y = array_ops.squeeze(y, [1 if data_format == "NHWC" else 2])
    return y


def max_pool2d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NHWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """Max over ``ksize`` windows (int or list of 1, 2 or 4 ints); SAME pads
    with -inf so the padding never wins. A tie sends the gradient to the first
    maximum (row-major within the window).

    >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    >>> tf.nn.max_pool2d(x, ksize=2, strides=2, padding="VALID")[0, :, :, 0].numpy()
    array([[ 5.,  7.],
           [13., 15.]], dtype=float32)
    """
    return _pool(MAX_POOL, "max_pool2d", input, ksize, strides, padding, data_format)


def avg_pool2d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NHWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """Mean over ``ksize`` windows; at SAME-padded edges only the real
    elements are counted."""
    return _pool(AVG_POOL, "avg_pool2d", input, ksize, strides, padding, data_format)


def _pool_nd(op, name, input, ksize, strides, padding, data_format):
    x = t(input)
    nd = len(x._shape_tuple())
    if nd == 4:
        return _pool(op, name, x, ksize, strides, padding, data_format)
    if nd == 3:
        return _pool(op, name, x, ksize, strides, padding, data_format, n_spatial=1)
    if nd == 5:
        return _pool3d(MAX_POOL3D if op is MAX_POOL else AVG_POOL3D, name, x, ksize, strides, padding, data_format)
    raise ValueError(f"`input.shape.rank` must be 3, 4 or 5. Received: input.shape={list(x._shape_tuple())} of rank "
                     f"{nd}")


def max_pool(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str | None = None,  # noqa: A002
             name: str | None = None) -> Tensor:
    """Max pooling of a rank-3 (NWC) or rank-4 (NHWC) input."""
    return _pool_nd(MAX_POOL, "max_pool", input, ksize, strides, padding, data_format)


def avg_pool(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str | None = None,  # noqa: A002
             name: str | None = None) -> Tensor:
    """Average pooling of a rank-3 (NWC) or rank-4 (NHWC) input."""
    return _pool_nd(AVG_POOL, "avg_pool", input, ksize, strides, padding, data_format)


def max_pool1d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    return _pool(MAX_POOL, "max_pool1d", input, ksize, strides, padding, data_format, n_spatial=1)


def avg_pool1d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    return _pool(AVG_POOL, "avg_pool1d", input, ksize, strides, padding, data_format, n_spatial=1)


def _argmax_kernel(x, ksize, strides, padding, include_batch_in_index, output_dtype):
    # As TF's kernel: start from each window's first element, then take only
    # strictly larger ones (a leading NaN stays, a later NaN is skipped).
    out_hw, pads = _pool_geom(x.shape, ksize, strides, padding)
    n, h, w, c = x.shape
    oh, ow = out_hw
    xp = _pad_hw(x, pads, _lowest(x.dtype))
    valid = _pad_hw(np.ones((1, h, w, 1), dtype=bool), pads, False)
    rows = np.arange(oh).reshape(1, oh, 1, 1) * strides[0] - pads[0][0]
    cols = np.arange(ow).reshape(1, 1, ow, 1) * strides[1] - pads[1][0]
    chan = np.arange(c).reshape(1, 1, 1, c)
    batch = np.arange(n).reshape(n, 1, 1, 1) * (h * w * c) if include_batch_in_index else 0
    y = np.full((n, oh, ow, c), _lowest(x.dtype), dtype=x.dtype)
    idx = np.zeros(y.shape, dtype=output_dtype)
    started = np.zeros((1, oh, ow, 1), dtype=bool)
    sh, sw = strides
    for i in range(ksize[0]):
        for j in range(ksize[1]):
            sl = (slice(None), slice(i, i + (oh - 1) * sh + 1, sh), slice(j, j + (ow - 1) * sw + 1, sw))
            v, ok = xp[sl], valid[sl]
            take = ok & (~started | (v > y))
            np.copyto(y, v, where=take)
            np.copyto(idx, ((rows + i) * w + (cols + j)) * c + chan + batch, where=take, casting="unsafe")
            started |= ok
    return y, idx


def _argmax_shape(specs, ksize, strides, padding, include_batch_in_index, output_dtype):
    (y_spec,) = _pool_shape(specs, ksize, strides, padding)
    return [y_spec, (y_spec[0], np.dtype(output_dtype))]


MAX_POOL_WITH_ARGMAX = defop("MaxPoolWithArgmax", _argmax_kernel, shape=_argmax_shape, num_outputs=2)


@defgrad("MaxPoolWithArgmax", inputs=True, outputs=True)
def _max_pool_with_argmax_grad(op, g, _):
    # The argmax is the first maximum, exactly where MaxPoolGrad sends g.
    return execute(MAX_POOL_GRAD, (op.inputs[0], op.outputs[0], g), _pool_attrs(op))


def max_pool_with_argmax(input: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NHWC",  # noqa: A002
                         output_dtype: Any = dtypes.int64, include_batch_in_index: bool = False,
                         name: str | None = None) -> tuple:
    """max_pool2d plus the flat index of each maximum: ``(y * width + x) *
    channels + c`` (plus ``b * height * width * channels`` when
    ``include_batch_in_index``)."""
    x = t(input)
    if data_format != "NHWC":
        raise ValueError(f"max_pool_with_argmax supports only data_format='NHWC', got {data_format!r}")
    s = x._shape_tuple()
    if len(s) != 4:
        raise _err("MaxPoolWithArgmax", f"input must be 4-dimensional, got shape {_dims(s)}")
    if x._value.dtype.kind not in "iuf":
        raise _err("MaxPoolWithArgmax", f"MaxPoolWithArgmax does not support {x.dtype.name} inputs")
    out_dt = dtypes.as_dtype(output_dtype)
    if out_dt not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"output_dtype must be int32 or int64, got {out_dt.name}")
    ks = _spatial(ksize, 2, "ksize", "MaxPool", "NHWC")
    st = _spatial(strides, 2, "strides", "MaxPool", "NHWC")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise _err("MaxPoolWithArgmax", f"padding must be 'SAME' or 'VALID', got {padding!r}")
    out_hw, _ = _geometry(s[1:3], ks, st, (1, 1), padding.upper())
    if any(o is not None and o < 0 for o in out_hw):
        raise _err("MaxPoolWithArgmax", f"Computed output size would be negative: input {_dims(s)}, ksize "
                   f"{list(ks)}")
    y, idx = execute(MAX_POOL_WITH_ARGMAX, (x,), {
        "ksize": ks, "strides": st, "padding": padding.upper(),
        "include_batch_in_index": bool(include_batch_in_index), "output_dtype": np.dtype(out_dt.as_numpy_dtype)})
    return y, idx


def _first_max_masks_nd(x, y, ksize, strides, padding, first=True):
    out_sp, pads = _geometry_nd(x.shape[1:-1], ksize, strides, (1,) * len(ksize), padding)
    xp = _pad_nd(_tf_max_input(x), pads, _lowest(x.dtype))
    taken = np.zeros(y.shape, dtype=bool)
    for _, _, sl in _offsets_nd(ksize, out_sp, strides, (1,) * len(ksize)):
        hit = xp[sl] == y
        if first:
            hit &= ~taken
            taken |= hit
        yield sl, hit


def _max_pool3d_kernel(x, ksize, strides, padding):
    out_sp, pads = _geometry_nd(x.shape[1:-1], ksize, strides, (1, 1, 1), padding)
    win = _windows_nd(_pad_nd(_tf_max_input(x), pads, _lowest(x.dtype)), ksize, out_sp, strides, (1, 1, 1))
    return win.max(axis=(4, 5, 6))


def _max_pool3d_grad_kernel(x, y, g, ksize, strides, padding):
    _, pads = _geometry_nd(x.shape[1:-1], ksize, strides, (1, 1, 1), padding)
    dxp = np.zeros((x.shape[0],) + tuple(d + a + b for d, (a, b) in zip(x.shape[1:-1], pads)) + (x.shape[-1],),
                   dtype=g.dtype)
    # As TF's MaxPool3DGrad: every element within 1e-5 of its window's max gets the gradient (ties
    # and near-ties); an inf or NaN max (inf - inf is NaN) sends it nowhere.
    out_sp = y.shape[1:-1]
    xp = _pad_nd(x, pads, np.nan)
    with np.errstate(invalid="ignore"):
        for _, _, sl in _offsets_nd(ksize, out_sp, strides, (1, 1, 1)):
            dxp[sl] += np.where(np.abs(xp[sl] - y) < 1e-5, g, 0)
    return _crop_nd(dxp, x.shape, pads)


def _max_pool3d_grad_grad_kernel(x, y, gg, ksize, strides, padding):
    if y.size == 0:  # TF's MaxPool3DGradGrad refuses an empty output
        raise _err("MaxPool3DGradGrad", f"received empty tensor tensor_out of shape {list(y.shape)}")
    _, pads = _geometry_nd(x.shape[1:-1], ksize, strides, (1, 1, 1), padding)
    ggp = _pad_nd(gg, pads)
    out = np.zeros(y.shape, dtype=gg.dtype)
    for sl, hit in _first_max_masks_nd(x, y, ksize, strides, padding):
        np.copyto(out, ggp[sl], where=hit)
    return out


def _avg_counts_nd(in_sp, ksize, strides, padding, dtype):
    out_sp, pads = _geometry_nd(in_sp, ksize, strides, (1, 1, 1), padding)
    ones = _pad_nd(np.ones((1,) + tuple(in_sp) + (1,), dtype=dtype), pads)
    return _windows_nd(ones, ksize, out_sp, strides, (1, 1, 1)).sum(axis=(4, 5, 6))


def _avg_pool3d_kernel(x, ksize, strides, padding):
    out_sp, pads = _geometry_nd(x.shape[1:-1], ksize, strides, (1, 1, 1), padding)
    win = _windows_nd(_pad_nd(x, pads), ksize, out_sp, strides, (1, 1, 1))
    counts = _avg_counts_nd(x.shape[1:-1], ksize, strides, padding, x.dtype)
    return (win.sum(axis=(4, 5, 6)) / counts).astype(x.dtype, copy=False)


def _avg_pool3d_grad_kernel(g, orig_input_shape, ksize, strides, padding):
    in_shape = (g.shape[0],) + tuple(orig_input_shape[1:])
    _, pads = _geometry_nd(in_shape[1:-1], ksize, strides, (1, 1, 1), padding)
    share = g / _avg_counts_nd(in_shape[1:-1], ksize, strides, padding, g.dtype)
    dxp = np.zeros((in_shape[0],) + tuple(d + a + b for d, (a, b) in zip(in_shape[1:-1], pads)) + (in_shape[-1],),
                   dtype=g.dtype)
    for _, _, sl in _offsets_nd(ksize, g.shape[1:-1], strides, (1, 1, 1)):
        dxp[sl] += share
    return _crop_nd(dxp, in_shape, pads).astype(g.dtype, copy=False)


def _pool3d_shape(specs, ksize, strides, padding):
    s, dt = specs[0]
    if s is None:
        return [(None, dt)]
    out_sp, _ = _geometry_nd(s[1:4], ksize, strides, (1, 1, 1), padding)
    return [((s[0],) + out_sp + (s[4],), dt)]


MAX_POOL3D = defop("MaxPool3D", _max_pool3d_kernel, shape=_pool3d_shape)
MAX_POOL3D_GRAD = defop("MaxPool3DGrad", _max_pool3d_grad_kernel, shape=lambda specs, **a: [specs[0]])
MAX_POOL3D_GRAD_GRAD = defop("MaxPool3DGradGrad", _max_pool3d_grad_grad_kernel, shape=lambda specs, **a: [specs[1]])
AVG_POOL3D = defop("AvgPool3D", _avg_pool3d_kernel, shape=_pool3d_shape)
AVG_POOL3D_GRAD = defop("AvgPool3DGrad", _avg_pool3d_grad_kernel, shape=_avg_pool_grad_shape)


@defgrad("MaxPool3D", inputs=True, outputs=True)
def _max_pool3d_grad(op, g):
    return execute(MAX_POOL3D_GRAD, (op.inputs[0], op.outputs[0], g), _pool_attrs(op))


@defgrad("MaxPool3DGrad", inputs=True)
def _max_pool3d_grad_grad(op, g):
    x, y, _ = op.inputs
    return _zeros(x), _zeros(y), execute(MAX_POOL3D_GRAD_GRAD, (x, y, g), _pool_attrs(op))


@defgrad("MaxPool3DGradGrad", inputs=True)
def _max_pool3d_grad_grad_grad(op, g):
    x, y, _ = op.inputs
    return _zeros(x), _zeros(y), execute(MAX_POOL3D_GRAD, (x, y, g), _pool_attrs(op))


@defgrad("AvgPool3D", inputs=False)
def _avg_pool3d_grad(op, g):
    if None in op.input_shapes[0][1:]:
        return _dyn_avg_pool_grad("AvgPool3D", op, g)
    return execute(AVG_POOL3D_GRAD, (g,), {"orig_input_shape": tuple(op.input_shapes[0]), **_pool_attrs(op)})


@defgrad("AvgPool3DGrad", inputs=False)
def _avg_pool3d_grad_grad(op, g):
    return execute(AVG_POOL3D, (g,), _pool_attrs(op))


# AvgPool's gradient for an input of unknown (None) static shape: the input
# itself is a second input, only its run-time shape is read.
_DYN_AVG_KINDS = {"AvgPool": (_avg_pool_grad_kernel, AVG_POOL), "AvgPool3D": (_avg_pool3d_grad_kernel, AVG_POOL3D)}


def _dyn_avg_pool_grad_kernel(g, x, kind, ksize, strides, padding):
    return _DYN_AVG_KINDS[kind][0](g, x.shape, ksize, strides, padding)


DYNAMIC_AVG_POOL_GRAD = defop("DynamicAvgPoolGrad", _dyn_avg_pool_grad_kernel,
                              shape=lambda specs, kind, **attrs: [(specs[1][0], specs[0][1])])


@defgrad("DynamicAvgPoolGrad", inputs=False)
def _dyn_avg_pool_grad_grad(op, g):
    return execute(_DYN_AVG_KINDS[op.get_attr("kind")][1], (g,), _pool_attrs(op)), None


def _dyn_avg_pool_grad(kind: str, op, g: Tensor) -> Tensor:
    if op.inputs is None:
        raise NotImplementedError(f"{kind} gradient for an input of unknown shape outside a traced graph")
    return execute(DYNAMIC_AVG_POOL_GRAD, (g, op.inputs[0]), {"kind": kind, **_pool_attrs(op)})


def _pool3d(op, name, input, ksize, strides, padding, data_format):
    x = t(input)
    data_format = data_format or "NDHWC"
    if data_format not in ("NDHWC", "NCDHW"):
        raise ValueError(f"data_format must be 'NDHWC' or 'NCDHW', got {data_format!r}")
    s = x._shape_tuple()
    if len(s) != 5:
        raise _err(op.name, f"Input must be 5-dimensional ({name}), got shape {_dims(s)}")
    if op is AVG_POOL3D:
        check_float(x, "AvgPool3D")
    else:
        check_float(x, "MaxPool3D")
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise TypeError(f"Expected string for argument 'padding' not {padding!r} ('SAME' or 'VALID').")
    pad = padding.upper()
    pool_op = "MaxPool" if op is MAX_POOL3D else "AvgPool"
    ks = _spatial(ksize, 3, "ksize", pool_op, data_format)
    st = _spatial(strides, 3, "strides", pool_op, data_format)
    if data_format == "NCDHW":
        x = array_ops.transpose(x, (0, 2, 3, 4, 1))
    out_sp, _ = _geometry_nd(x._shape_tuple()[1:4], ks, st, (1, 1, 1), pad)
    if any(o is not None and o < 0 for o in out_sp):
        raise _err(op.name, f"Computed output size would be negative: input {_dims(s)}, ksize {list(ks)}")
    y = execute(op, (x,), {"ksize": ks, "strides": st, "padding": pad})
    return array_ops.transpose(y, (0, 4, 1, 2, 3)) if data_format == "NCDHW" else y


def max_pool3d(input: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NDHWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """Max pooling of an NDHWC input (the gradient goes to the first maximum)."""
    return _pool3d(MAX_POOL3D, "max_pool3d", input, ksize, strides, padding, data_format)


def avg_pool3d(input: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NDHWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """Average pooling of an NDHWC input (edges count only real elements)."""
    return _pool3d(AVG_POOL3D, "avg_pool3d", input, ksize, strides, padding, data_format)


def pool(input: Any, window_shape: Any, pooling_type: str, strides: Any = None, padding: str = "VALID",  # noqa: A002
         data_format: str | None = None, dilations: Any = None, name: str | None = None) -> Tensor:
    """Max or average pooling ("MAX"/"AVG") over 1 or 2 spatial dims."""
    if dilations is not None and any(int(d) != 1 for d in np.asarray(dilations).reshape(-1)):
        raise NotImplementedError("tf.nn.pool with dilation_rate > 1 is not implemented in tapeflow yet.")
    kind = str(pooling_type).upper()
    if kind not in ("MAX", "AVG"):
        raise ValueError(f"pooling_type must be 'MAX' or 'AVG', got {pooling_type!r}")
    fn = max_pool if kind == "MAX" else avg_pool
    return fn(input, window_shape, 1 if strides is None else strides, padding, data_format)
