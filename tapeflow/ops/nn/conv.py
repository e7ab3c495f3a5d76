"""Convolutions of ``tf.nn`` (1-D, 2-D, depthwise, 3-D, transposed) and bias_add.

Convolutions are im2col (a strided view of the padded input) plus one BLAS matmul; their gradients
are ops too (Conv2DBackpropInput / Conv2DBackpropFilter, as TF) whose own gradients are
convolutions again, so every order of derivative works."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework.dtypes import type_string
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import array_ops, threads
from tapeflow.ops._helpers import as_int_tuple, t
from tapeflow.ops.math_ops import reduce_sum
from tapeflow.ops.nn import _exact_conv as exact
from tapeflow.ops.nn import _winograd as winograd
from tapeflow.ops.nn._common import _dims, _err
from tapeflow.ops.nn._geometry import (
    _NARROW_CHANNELS, _check_out, _check_rank, _compute_dtype, _conv_inputs, _crop_nd, _geometry, _geometry_nd, _im2col,
    _im2col_t, _nchw_to_nhwc, _nhwc_to_nchw, _offsets_nd, _pad_hw, _pad_nd, _padding, _spatial,
    _windows, _windows_nd,
)
from tapeflow.ops.registry import defgrad, defop


# -- bias_add ----------------------------------------------------------------

def _bias_axis(ndim: int, data_format: str) -> int:
    return 1 if data_format.startswith("NC") else ndim - 1


def _bias_add_kernel(x, b, data_format):
    axis = _bias_axis(x.ndim, data_format)
    return x + b.reshape((-1,) + (1,) * (x.ndim - 1 - axis))


BIAS_ADD = defop("BiasAdd", _bias_add_kernel, shape=lambda specs, **a: [specs[0]])


@defgrad("BiasAdd", inputs=False)
def _bias_add_grad(op, g):
    nd = len(op.input_shapes[0])
    axis = _bias_axis(nd, op.get_attr("data_format"))
    return g, reduce_sum(g, axis=[i for i in range(nd) if i != axis])


def bias_add(value: Any, bias: Any, data_format: str | None = None, name: str | None = None) -> Tensor:
    """Adds a 1-D ``bias`` along the channel axis (last, or 1 for "NC..." formats)."""
    x = t(value)
    b = convert_to_tensor(bias, dtype_hint=x.dtype)
    data_format = data_format or "NHWC"
    if data_format not in ("NHWC", "NCHW", "NWC", "NCW", "NDHWC", "NCDHW", "N..C", "NC.."):
        raise ValueError(f"data_format must be of the form `N...C` or `NC...`, got {data_format!r}")
    sx, sb = x._shape_tuple(), b._shape_tuple()
    if x._value.dtype.kind == "b":
        raise _err("BiasAdd", "Value for attr 'T' of bool is not in the list of allowed values: BiasAdd takes "
                   "numbers; cast with tf.cast first")
    if x._value.dtype != b._value.dtype:
        raise _err("BiasAdd", f"cannot compute BiasAdd as input #1(zero-based) was expected to be a "
                   f"{type_string(x.dtype)} tensor but is a {type_string(b.dtype)} tensor")
    if len(sb) != 1:
        raise _err("BiasAdd", f"Biases must be 1D: {_dims(sb)}")
    if len(sx) < 2:
        raise _err("BiasAdd", f"Input tensor must be at least 2D: {_dims(sx)}")
    axis = _bias_axis(len(sx), data_format)
    if sx[axis] is not None and sb[0] is not None and sx[axis] != sb[0]:
        where_ = "last" if axis == len(sx) - 1 else "channel"
        raise _err("BiasAdd", f"Must provide as many biases as the {where_} dimension of the input tensor: "
                   f"{_dims(sb)} vs. {_dims(sx)}")
    return execute(BIAS_ADD, (x, b), {"data_format": "NC" if data_format.startswith("NC") else "NHWC"})


# ============================================================================
# Conv2D and its two backprop ops
# ============================================================================

def _conv_attrs_geom(x_shape, w_shape, strides, dilations, padding):
    return _geometry(x_shape[1:3], w_shape[:2], strides, dilations, padding)


def _conv2d_kernel(x, w, strides, dilations, padding, bias=None, keep=True):
    out_hw, pads = _conv_attrs_geom(x.shape, w.shape, strides, dilations, padding)
    cdt = _compute_dtype(x.dtype)
    n = x.shape[0]
    kh, kw, ci, co = w.shape
    if min(out_hw) <= 0 or n == 0:
        return _bias_relu(np.zeros((n, max(out_hw[0], 0), max(out_hw[1], 0), co), dtype=x.dtype), bias)
    if exact.needs_exact(w):  # inf/NaN in the filter must not meet the padding zeros
        return _bias_relu(exact.conv(x, w, out_hw, strides, dilations, pads, cdt).astype(x.dtype, copy=False), bias)
    if (kh, kw) == (1, 1) and strides == (1, 1) and pads == ((0, 0), (0, 0)):
        out = x.reshape(-1, ci).astype(cdt, copy=False) @ w.reshape(ci, co).astype(cdt, copy=False)
        return _bias_relu(out.reshape(n, out_hw[0], out_hw[1], co).astype(x.dtype, copy=False), bias)
    if winograd.applies((kh, kw), strides, dilations, ci, co, 9.0 * n * out_hw[0] * out_hw[1] * ci * co):
        after = None if bias is None else (lambda y: _bias_relu(y, bias))
        out, finite = winograd.conv(x, winograd.filter_transform(w.astype(cdt, copy=False)), out_hw, pads, cdt,
                                    after, keep)  # (keep: the transform of x, for the filter gradient)
        if finite:  # (else the direct product below: a non-finite input stays in the windows that read it)
            return out.astype(x.dtype, copy=False)
    wm = w.reshape(kh * kw * ci, co).astype(cdt, copy=False)
    rows = out_hw[0] * out_hw[1]
    out = np.empty((n * rows, co), dtype=cdt)
    narrow = ci <= _NARROW_CHANNELS
    # (the output block counts too: the bias and ReLU of a fused call go over it while it is in cache)
    per_image = rows * (kh * kw * ci + co) * np.dtype(cdt).itemsize
    bounds = _chunks(n, per_image, _FORWARD_CHUNK_BYTES // (2 if narrow else 1))

    def chunk(k):
        a, b = bounds[k]
        xp = _pad_hw(x[a:b], pads)  # (per chunk: the padding copies run in parallel too)
        if narrow:
            cols = _im2col_t(xp, (kh, kw), out_hw, strides, dilations, cdt).T
        else:
            cols = _im2col(_windows(xp, (kh, kw), out_hw, strides, dilations), cdt)
        np.matmul(cols, wm, out=out[a * rows:b * rows])
        if bias is not None:  # (cdt is x's dtype here: _conv2d_bias_relu_kernel)
            _bias_relu(out[a * rows:b * rows], bias)

    threads.parallel_for(len(bounds), chunk, float(out.size) * wm.shape[0])
    return out.reshape(n, out_hw[0], out_hw[1], co).astype(x.dtype, copy=False)


def _bias_relu(y, bias):
    """``Relu(AddV2(y, bias))`` in place, as those two kernels compute it (``bias`` None: ``y``)."""
    if bias is not None:
        np.add(y, bias, out=y)
        np.maximum(y, np.zeros((), y.dtype), out=y)
    return y


def _conv2d_bias_relu_kernel(x, w, bias, strides, dilations, padding):
    """``Relu(AddV2(Conv2D(x, w), bias))`` -- the compiled graph's fusion of a conv layer (as TF's
    grappler makes a _FusedConv2D of it): the bias and the ReLU go over each chunk of the product
    while it is in cache instead of two more passes over the whole output, with the same values."""
    return _conv2d_kernel(x, w, strides, dilations, padding, bias=bias)


def _conv2d_bias_relu_pool_kernel(x, w, bias, strides, dilations, padding, pool_ksize, pool_strides,
                                  pool_padding):
    """``MaxPool(Relu(AddV2(Conv2D(x, w), bias)))`` where the ReLU output has no other use (a conv layer
    and its pooling in a forward-only graph: ``predict``, ``evaluate``). Adding a per-channel bias and the
    ReLU are monotone, and float rounding keeps them so, so the window maxima of the raw product plus the
    bias, through the ReLU, are bitwise the same values: the two passes go over the pooled quarter. A
    window maximum that is NaN, -inf or the lowest float (where max pooling's own rules for NaN and -inf
    apply), or a non-finite bias, takes the three ops in order."""
    from tapeflow.ops.nn.pooling import _max_pool_kernel

    conv = _conv2d_kernel(x, w, strides, dilations, padding, keep=False)  # (forward-only graphs)
    pooled = _max_pool_kernel(conv, pool_ksize, pool_strides, pool_padding)
    if pooled.size and not (pooled.min() > np.finfo(pooled.dtype).min and np.isfinite(bias).all()):
        return _max_pool_kernel(_bias_relu(conv, bias), pool_ksize, pool_strides, pool_padding)
    return _bias_relu(pooled, bias)


_CHUNK_BYTES = 2 << 20  # an im2col block this size stays in cache between its copy and its product
_FORWARD_CHUNK_BYTES = 1 << 20  # Conv2D: im2col + output block


def _chunks(n: int, per_image: int, target: int | None = None):
    """Image ranges [a, b) whose im2col blocks are about _CHUNK_BYTES: building and multiplying
    the patch matrix a few images at a time, while it is in cache, measured 15-22% faster on a
    32x14x14x32 3x3 convolution (forward, input and filter gradients) than one whole-batch matrix."""
    step = max(1, (target or _CHUNK_BYTES) // max(per_image, 1))
    return [(a, min(n, a + step)) for a in range(0, n, step)]


def _conv2d_backprop_input_kernel(w, dy, input_sizes, strides, dilations, padding):
    in_shape = (dy.shape[0],) + tuple(input_sizes[1:])
    _, pads = _conv_attrs_geom(in_shape, w.shape, strides, dilations, padding)
    kh, kw, ci, co = w.shape
    n, oh, ow, _ = dy.shape
    cdt = _compute_dtype(dy.dtype)
    if n == 0 or oh == 0 or ow == 0:
        return np.zeros(in_shape, dtype=dy.dtype)
    if exact.needs_exact(w):
        return exact.conv_backprop_input(w, dy, in_shape, strides, dilations, pads, cdt).astype(dy.dtype, copy=False)
    if winograd.applies((kh, kw), strides, dilations, ci, co, 9.0 * dy.size * ci):
        dx, finite = winograd.input_grad(dy, winograd.filter_transform(w.astype(cdt, copy=False)), in_shape[1:3],
                                         pads, cdt)
        if finite:
            return dx.astype(dy.dtype, copy=False)
    # One product gives every tap's contribution (N*OH*OW, KH*KW*Ci); each tap's block is then added
    # where it came from (clipped to the real input: no padded buffer, no crop). Faster than the
    # flipped-filter correlation of the padded dy, whose im2col matrix is KH*KW*Co wide.
    # (A few images at a time, so each block of the product is still in cache when it is added.)
    dy2 = dy.reshape(n, oh * ow, co)
    dx = np.empty(in_shape, dtype=cdt)
    shifts = _flat_shift_plan((kh, kw), in_shape, (oh, ow), strides, dilations, pads)
    if shifts is not None:
        w9 = w.reshape(kh * kw * ci, co).astype(cdt, copy=False)
        bounds = _chunks(n, oh * ow * kh * kw * ci * np.dtype(cdt).itemsize)
        dx2 = dx.reshape(n, oh * ow, ci)

        def flat_chunk(k):
            a, b = bounds[k]
            _flat_shift_taps(w9, dy2[a:b].astype(cdt, copy=False).reshape(-1, co), shifts, (kh, kw, ci),
                             (b - a, oh, ow), dx2[a:b].reshape(-1, ci))

        threads.parallel_for(len(bounds), flat_chunk, float(dy.size) * w9.shape[0])
        return dx.astype(dy.dtype, copy=False)
    wt = w.reshape(kh * kw * ci, co).astype(cdt, copy=False).T
    plan = _tap_plan((kh, kw), in_shape, (oh, ow), strides, dilations, pads)
    bounds = _chunks(n, oh * ow * kh * kw * ci * np.dtype(cdt).itemsize)

    def chunk(k):
        a, b = bounds[k]
        colg = dy2[a:b].astype(cdt, copy=False).reshape(-1, co) @ wt
        _add_taps(colg.reshape(b - a, oh, ow, kh, kw, ci), plan, dx[a:b])

    threads.parallel_for(len(bounds), chunk, float(dy.size) * wt.shape[1])
    return dx.astype(dy.dtype, copy=False)


def _flat_shift_plan(k_hw, in_shape, out_hw, strides, dilations, pads):
    """For a stride-1 convolution whose output grid is its input's (SAME), the plan of _flat_shift_taps:
    (first tap, [(tap, flat shift)], [(i, rows to zero)], [(j, columns to zero)]), or None where the
    geometry does not fit (a tap of shift 0 that reads every position must exist, every tap's offset
    smaller than the image)."""
    if tuple(strides) != (1, 1) or tuple(out_hw) != tuple(in_shape[1:3]):
        return None
    (oh, ow), (t0, l0) = out_hw, (pads[0][0], pads[1][0])
    off_h = [t0 - i * dilations[0] for i in range(k_hw[0])]  # output row = input row + off
    off_w = [l0 - j * dilations[1] for j in range(k_hw[1])]
    if any(abs(o) >= oh for o in off_h) or any(abs(o) >= ow for o in off_w) or 0 not in off_h or 0 not in off_w:
        return None
    first = (off_h.index(0), off_w.index(0))
    taps = [((i, j), off_h[i] * ow + off_w[j]) for i in range(k_hw[0]) for j in range(k_hw[1]) if (i, j) != first]
    # Output positions whose input position (row - off) lies outside the image: zeroed before the shifted adds.
    rows = [(i, (max(0, o), min(oh, oh + o))) for i, o in enumerate(off_h) if o]
    cols = [(j, (max(0, o), min(ow, ow + o))) for j, o in enumerate(off_w) if o]
    return first, taps, rows, cols


def _flat_shift_taps(w9, dy, plan, k_shape, grid, dx):
    """dx (N*H*W, Ci) of a stride-1 SAME convolution from dy (N*OH*OW, Co) and the (KH*KW*Ci, Co) filter:
    the product is taken channel-major, ``P = w9 @ dy.T`` (KH*KW*Ci, N*OH*OW), so that each tap's block,
    flattened, meets dx at one constant flat offset: the tap adds are nine 1-D adds of whole blocks (NumPy's
    fastest loop; a 2-D slice of the same elements runs ~3x slower) into the first tap's block, which is then
    transposed into dx. The positions whose flat shift would wrap into another row, image or channel are the
    ones outside the tap's real input: they are zeroed first. Same products and order of sums as _add_taps."""
    kh, kw, ci = k_shape
    nb, oh, ow = grid
    m = nb * oh * ow
    p = np.matmul(w9, dy.T)
    first, taps, rows, cols = plan
    p6 = p.reshape(kh, kw, ci, nb, oh, ow)
    for i, (lo, hi) in rows:  # valid rows are [lo, hi): zero the rest
        p6[i, :, :, :, :lo, :] = 0
        p6[i, :, :, :, hi:, :] = 0
    for j, (lo, hi) in cols:
        p6[:, j, :, :, :, :lo] = 0
        p6[:, j, :, :, :, hi:] = 0
    flat = p.reshape(kh, kw, ci * m)
    acc = flat[first]
    size = ci * m
    for (i, j), s in taps:
        lo, hi = max(0, s), min(size, size + s)  # acc[f - s] += tap[f]
        acc[lo - s:hi - s] += flat[i, j, lo:hi]
    np.copyto(dx, acc.reshape(ci, m).T)


def _tap_plan(k_hw, in_shape, out_hw, strides, dilations, pads):
    """(first, taps) for _add_taps: per filter tap, the output and input slices where it meets real
    input; ``first`` is (tap, output slices) of a tap that reads every input position once (the centre
    of a SAME stride-1 filter), or None."""
    taps = []
    for i in range(k_hw[0]):
        for j in range(k_hw[1]):
            sl = exact._tap_slices((i, j), in_shape[1:3], out_hw, strides, dilations, pads)
            if sl is not None:
                taps.append(((i, j), sl))
    whole = (slice(None), slice(0, in_shape[1], 1), slice(0, in_shape[2], 1))
    first = next((k for k, (_, (o_sl, i_sl)) in enumerate(taps) if i_sl == whole
                  and o_sl[1] == slice(0, in_shape[1]) and o_sl[2] == slice(0, in_shape[2])), None)
    return (None if first is None else (taps[first][0], taps[first][1][0])), [t for k, t in enumerate(taps)
                                                                                 if k != first]


def _add_taps(colg, plan, dx):
    """The adjoint of im2col: adds each tap's (N, OH, OW, Ci) block of ``colg`` into ``dx`` at the
    input positions it read; the plan's ``first`` tap fills dx with a copy instead of zeros plus an add."""
    first, taps = plan
    if first is None:
        dx.fill(0)
    else:  # (its output rows and columns only: an output larger than the input has more)
        (i, j), o_sl = first
        np.copyto(dx, colg[o_sl + (i, j)])
    for (i, j), (o_sl, i_sl) in taps:
        dx[i_sl] += colg[o_sl + (i, j)]


def _conv2d_backprop_filter_kernel(x, dy, filter_sizes, strides, dilations, padding):
    kh, kw, ci, co = filter_sizes
    out_hw, pads = _conv_attrs_geom(x.shape, filter_sizes, strides, dilations, padding)
    cdt = _compute_dtype(x.dtype)
    if x.shape[0] == 0 or min(out_hw) <= 0:
        return np.zeros(filter_sizes, dtype=x.dtype)
    if winograd.applies((kh, kw), strides, dilations, ci, co, 9.0 * dy.size * ci):
        dw, finite = winograd.filter_grad(x, dy, pads, cdt)
        if finite:
            return dw.astype(x.dtype, copy=False)
    if ci <= _NARROW_CHANNELS:  # (one product over the whole batch: its sum is not split)
        threads.before_blas(0.0)
        dw = _im2col_t(_pad_hw(x, pads), (kh, kw), out_hw, strides, dilations, cdt) @ \
            dy.reshape(-1, co).astype(cdt, copy=False)
    else:
        rows = out_hw[0] * out_hw[1]
        dy2 = dy.reshape(x.shape[0], rows, co)
        bounds = _chunks(x.shape[0], rows * kh * kw * ci * np.dtype(cdt).itemsize)
        parts: list = [None] * len(bounds)

        def chunk(k):
            a, b = bounds[k]
            cols = _im2col(_windows(_pad_hw(x[a:b], pads), (kh, kw), out_hw, strides, dilations), cdt)
            parts[k] = cols.T @ dy2[a:b].reshape(-1, co).astype(cdt, copy=False)

        threads.parallel_for(len(bounds), chunk, float(dy.size) * kh * kw * ci)
        dw = parts[0]  # summed in chunk order: the same result on any number of threads
        for part in parts[1:]:
            dw += part
    # A non-finite dy always leaves a non-finite dw (x * inf is inf or NaN), so the small result is
    # checked instead of the whole dy; only then may the padding zeros have made a NaN of an inf.
    if dw.dtype.kind == "f" and not np.isfinite(dw).all() and exact.needs_exact(dy):
        return exact.conv_backprop_filter(x, dy, filter_sizes, strides, dilations, pads, cdt).astype(x.dtype)
    return dw.reshape(filter_sizes).astype(x.dtype, copy=False)


def _conv2d_shape(specs, strides, dilations, padding):
    (sx, dt), (sw, _) = specs
    if sx is None or sw is None:
        return [(None, dt)]
    out_hw, _ = _geometry(sx[1:3], sw[:2], strides, dilations, padding)
    return [((sx[0],) + out_hw + (sw[3],), dt)]


def _conv2d_bi_shape(specs, input_sizes, **attrs):
    (_, dt), (sdy, _) = specs
    n = sdy[0] if sdy is not None else None
    return [((n,) + tuple(input_sizes[1:]), dt)]


def _conv2d_bf_shape(specs, filter_sizes, **attrs):
    return [(tuple(filter_sizes), specs[0][1])]


CONV2D = defop("Conv2D", _conv2d_kernel, shape=_conv2d_shape)
# Compiled graphs run Relu(AddV2(Conv2D(x, w), bias)) as one call when the conv's and the add's outputs
# have no other use (graph/compiler.py); float32/float64 only, where the conv computes in x's dtype.
CONV2D.extra["bias_relu"] = _conv2d_bias_relu_kernel
CONV2D.extra["bias_relu_pool"] = _conv2d_bias_relu_pool_kernel  # ... and a MaxPool, the ReLU's only use
CONV2D_BACKPROP_INPUT = defop("Conv2DBackpropInput", _conv2d_backprop_input_kernel, shape=_conv2d_bi_shape)
CONV2D_BACKPROP_FILTER = defop("Conv2DBackpropFilter", _conv2d_backprop_filter_kernel, shape=_conv2d_bf_shape)


def _geom_attrs(op) -> dict:
    return {"strides": op.get_attr("strides"), "dilations": op.get_attr("dilations"),
            "padding": op.get_attr("padding")}


def _conv2d_backprop_input(input_sizes, w, dy, attrs, x=None):
    if x is not None and None in tuple(input_sizes)[1:]:
        return _dyn_backprop_input("Conv2D", w, dy, x, attrs)
    return execute(CONV2D_BACKPROP_INPUT, (w, dy), {"input_sizes": tuple(input_sizes), **attrs})


def _conv2d_backprop_filter(x, filter_sizes, dy, attrs, w=None):
    if w is not None and None in filter_sizes:
        return _dyn_backprop_filter("Conv2D", x, dy, w, attrs)
    return execute(CONV2D_BACKPROP_FILTER, (x, dy), {"filter_sizes": tuple(filter_sizes), **attrs})


@defgrad("Conv2D", inputs=True)
def _conv2d_grad(op, g):
    x, w = op.inputs
    attrs = _geom_attrs(op)
    return (_conv2d_backprop_input(op.input_shapes[0], w, g, attrs, x),
            _conv2d_backprop_filter(x, op.input_shapes[1], g, attrs, w))


@defgrad("Conv2DBackpropInput", inputs=True)
def _conv2d_backprop_input_grad(op, g):
    # out = A(w) dy is bilinear: d/d dy = conv(g, w); d/dw = filter-backprop(g, dy).
    w, dy = op.inputs
    attrs = _geom_attrs(op)
    return (_conv2d_backprop_filter(g, op.input_shapes[0], dy, attrs, w),
            execute(CONV2D, (g, w), attrs))


@defgrad("Conv2DBackpropFilter", inputs=True)
def _conv2d_backprop_filter_grad(op, g):
    x, dy = op.inputs
    attrs = _geom_attrs(op)
    return (_conv2d_backprop_input(op.input_shapes[0], g, dy, attrs, x),
            execute(CONV2D, (x, g), attrs))


def conv2d(input: Any, filters: Any, strides: Any, padding: Any, data_format: str = "NHWC",  # noqa: A002
           dilations: Any = None, name: str | None = None) -> Tensor:
    """2-D convolution (cross-correlation) of an NHWC ``input`` with an HWIO
    ``filters`` tensor. ``padding`` is "SAME" (TF's asymmetric padding: the
    extra row/column goes at the bottom/right), "VALID", or explicit
    ``[[0, 0], [top, bottom], [left, right], [0, 0]]``.

    >>> x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    >>> tf.nn.conv2d(x, tf.ones([2, 2, 1, 1]), strides=1, padding="SAME")[0, :, :, 0].numpy()
    array([[10., 14., 18., 10.],
           [26., 30., 34., 18.],
           [42., 46., 50., 26.],
           [25., 27., 29., 15.]], dtype=float32)
    """
    x, w = _conv_inputs(input, filters, "Conv2D")
    data_format = data_format or "NHWC"
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    sx = _check_rank(x, 4, "Conv2D")
    sw = _check_rank(w, 4, "Conv2D", "filter")
    st = _spatial(strides, 2, "strides", "Conv2D", data_format)
    dl = _spatial(1 if dilations is None else dilations, 2, "dilations", "Conv2D", data_format)
    pad = _padding(padding, 2, "Conv2D", data_format)
    if data_format == "NCHW":
        x = _nchw_to_nhwc(x)
        sx = x._shape_tuple()
    if sx[3] is not None and sw[2] is not None and sx[3] != sw[2]:
        raise _err("Conv2D", f"input depth must be evenly divisible by filter depth: {sx[3]} vs {sw[2]} (input "
                   f"{list(sx)}, filter {list(sw)}; grouped convolutions are not supported: the filter's third "
                   "dimension must equal the input channels)")
    out_hw, _ = _geometry(sx[1:3], sw[:2], st, dl, pad)
    _check_out("Conv2D", out_hw, sx, sw, padding)
    y = execute(CONV2D, (x, w), {"strides": st, "dilations": dl, "padding": pad})
    return _nhwc_to_nchw(y) if data_format == "NCHW" else y


def conv1d(input: Any, filters: Any, stride: Any, padding: Any, data_format: str = "NWC",  # noqa: A002
           dilations: Any = None, name: str | None = None) -> Tensor:
    """1-D convolution of an NWC ``input`` with a WIO filter, run as a
    conv2d of height 1 (as TF)."""
    x, w = _conv_inputs(input, filters, "Conv2D")
    data_format = data_format or "NWC"
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"data_format must be 'NWC' or 'NCW', got {data_format!r}")
    _check_rank(x, 3, "conv1d")
    _check_rank(w, 3, "conv1d", "filter")
    fmt2 = "NHWC" if data_format == "NWC" else "NCHW"
    s = _spatial(stride, 1, "stride", "Conv2D", data_format)[0]
    d = _spatial(1 if dilations is None else dilations, 1, "dilations", "Conv2D", data_format)[0]
    if not isinstance(padding, str):
        pairs = _padding(padding, 1, "Conv2D", data_format)
        padding = [[0, 0], [0, 0], list(pairs[0]), [0, 0]]
        if fmt2 == "NCHW":
            padding = [[0, 0], [0, 0], [0, 0], padding[2]]
    x4 = array_ops.expand_dims(x, 1 if data_format == "NWC" else 2)
    w4 = array_ops.expand_dims(w, 0)
    y = conv2d(x4, w4, [1, s], padding, data_format=fmt2, dilations=[1, d])
    return array_ops.squeeze(y, [1 if data_format == "NWC" else 2])


def _run_time_output_shape(output_shape: Any) -> tuple:
    # Traced: only the batch may be unknown; the kernel takes it from the input.
    from tapeflow.ops import shape_ops

    if not shape_ops.is_symbolic(output_shape) and not (
            isinstance(output_shape, (list, tuple)) and any(shape_ops.is_symbolic(d) for d in output_shape)):
        raise TypeError(f"output_shape must be a list of integers or an int tensor, got {output_shape!r}")
    _, known = shape_ops.shape_vector(output_shape, "output_shape")
    if known is None or len(known) != 4 or None in known[1:]:
        raise NotImplementedError(
            f"conv2d_transpose: an output_shape known only at run time must still have known spatial and channel "
            f"dims (only the batch may be unknown), got {known}")
    return tuple(known)


def _check_channels(out_shape: tuple, sx: tuple, sw: tuple) -> None:
    """A transposed convolution's channels: the result's must be the filter's out-channels (its second-to-last
    dimension), the input's its in-channels (its last)."""
    nth = {4: "third", 5: "fourth"}[len(sw)]
    if sw[-2] is not None and out_shape[-1] != sw[-2]:
        raise ValueError(f"output_shape's channel dimension {out_shape[-1]} must equal the filter's {nth} dimension "
                         f"{sw[-2]} (filter {list(sw)})")
    if sx[-1] is not None and sx[-1] != sw[-1]:
        raise ValueError(f"input channels {sx[-1]} must equal the filter's last dimension {sw[-1]} (input "
                         f"{list(sx)}, filter {list(sw)})")


def _check_transpose_size(out_shape: tuple, sx: tuple, sw: tuple, computed: tuple, st: Any, padding: Any, op: str,
                          kernel: str) -> None:
    """The input must have the size a convolution of ``output_shape`` gives (TF's message of ``kernel``)."""
    actual = list(sx[1:-1])
    if any(a is not None and b is not None and a != b for a, b in zip(computed, actual)) or (
            None not in (sx[0], out_shape[0]) and sx[0] != out_shape[0]):
        raise _err(op, f"{kernel}: Size of out_backprop doesn't match computed: actual = {actual}, computed = "
                       f"{list(computed)} (output_shape {list(out_shape)}, filter {list(sw)}, strides {list(st)}, "
                       f"padding {padding!r})")


def conv2d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any, padding: Any = "SAME",  # noqa: A002
                     data_format: str = "NHWC", dilations: Any = None, name: str | None = None) -> Tensor:
    """The transpose (gradient) of conv2d: ``filters`` is [h, w, out_channels,
    in_channels] and ``output_shape`` the shape of the result."""
    x, w = _conv_inputs(input, filters, "Conv2DBackpropInput")
    data_format = data_format or "NHWC"
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    sx = _check_rank(x, 4, "Conv2DBackpropInput")
    sw = _check_rank(w, 4, "Conv2DBackpropInput", "filter")
    try:
        out_shape = tuple(int(a) for a in np.asarray(
            output_shape.numpy() if isinstance(output_shape, Tensor) else output_shape).reshape(-1))
    except (AttributeError, NotImplementedError, TypeError):
        out_shape = _run_time_output_shape(output_shape)  # graph tensors, e.g. tf.shape(x)[0]
    if len(out_shape) != 4:
        raise ValueError(f"output_shape must have shape (4,), got {list(out_shape)}")
    st = _spatial(strides, 2, "strides", "Conv2DBackpropInput", data_format)
    dl = _spatial(1 if dilations is None else dilations, 2, "dilations", "Conv2DBackpropInput", data_format)
    pad = _padding(padding, 2, "Conv2DBackpropInput", data_format)
    if data_format == "NCHW":
        x = _nchw_to_nhwc(x)
        sx = x._shape_tuple()
        out_shape = (out_shape[0], out_shape[2], out_shape[3], out_shape[1])
    _check_channels(out_shape, sx, sw)
    out_hw, _ = _geometry(out_shape[1:3], sw[:2], st, dl, pad)
    _check_transpose_size(out_shape, sx, sw, out_hw, st, padding, "Conv2DBackpropInput", "Conv2DCustomBackpropInput")
    y = _conv2d_backprop_input(out_shape, w, x, {"strides": st, "dilations": dl, "padding": pad})
    return _nhwc_to_nchw(y) if data_format == "NCHW" else y


# ============================================================================
# Depthwise convolution
# ============================================================================

def _offset_slices(k_hw, out_hw, strides, dilations):
    """For each filter offset (i, j): the slice of the padded input that it
    meets across all output positions."""
    sh, sw = strides
    for i in range(k_hw[0]):
        hi = i * dilations[0]
        for j in range(k_hw[1]):
            wj = j * dilations[1]
            yield i, j, (slice(None), slice(hi, hi + (out_hw[0] - 1) * sh + 1, sh),
                         slice(wj, wj + (out_hw[1] - 1) * sw + 1, sw))


def _depthwise_kernel(x, w, strides, dilations, padding):
    # One multiply-add per filter offset and multiplier over the whole batch,
    # channels innermost (a depthwise conv has too little work per output
    # for an im2col matmul).
    out_hw, pads = _conv_attrs_geom(x.shape, w.shape, strides, dilations, padding)
    kh, kw, c, m = w.shape
    n = x.shape[0]
    cdt = _compute_dtype(x.dtype)
    if exact.needs_exact(w):
        return exact.depthwise(x, w, out_hw, strides, dilations, pads, cdt).astype(x.dtype, copy=False)
    xp = _pad_hw(x, pads).astype(cdt, copy=False)
    wc = w.astype(cdt, copy=False)
    out = np.zeros((m, n, out_hw[0], out_hw[1], c), dtype=cdt)
    tmp = np.empty(out.shape[1:], dtype=cdt)
    # float32: TF's CPU kernel accumulates the taps in filter order with fused multiply-adds; the exact
    # float32 product plus the sum, rounded once (in float64, then to float32), gives its bits
    fused = np.dtype(cdt) == np.float32
    wide = np.empty(out.shape[1:], dtype=np.float64) if fused else None
    for i, j, sl in _offset_slices((kh, kw), out_hw, strides, dilations):
        window = xp[sl]
        for k in range(m):
            if fused:
                np.multiply(window, wc[i, j, :, k].astype(np.float64), out=wide)
                wide += out[k]
                out[k] = wide
                continue
            np.multiply(window, wc[i, j, :, k], out=tmp)
            out[k] += tmp
    out = np.moveaxis(out, 0, -1) if m > 1 else out[0][..., None]
    return np.ascontiguousarray(out).reshape(n, out_hw[0], out_hw[1], c * m).astype(x.dtype, copy=False)


def _depthwise_backprop_input_kernel(w, dy, input_sizes, strides, dilations, padding):
    in_shape = (dy.shape[0],) + tuple(input_sizes[1:])
    _, pads = _conv_attrs_geom(in_shape, w.shape, strides, dilations, padding)
    kh, kw, c, m = w.shape
    n, oh, ow, _ = dy.shape
    cdt = _compute_dtype(dy.dtype)
    (t0, b0), (l0, r0) = pads
    h, wd = in_shape[1], in_shape[2]
    dxp = np.zeros((n, h + t0 + b0, wd + l0 + r0, c), dtype=cdt)
    dy5 = dy.reshape(n, oh, ow, c, m).astype(cdt, copy=False)
    wc = w.astype(cdt, copy=False)
    tmp = np.empty((n, oh, ow, c), dtype=cdt)
    for i, j, sl in _offset_slices((kh, kw), (oh, ow), strides, dilations):
        if m == 1:
            np.multiply(dy5[..., 0], wc[i, j, :, 0], out=tmp)
        else:
            np.einsum("nhwcm,cm->nhwc", dy5, wc[i, j], out=tmp)
        dxp[sl] += tmp
    return dxp[:, t0:t0 + h, l0:l0 + wd, :].astype(dy.dtype, copy=False)


def _depthwise_backprop_filter_kernel(x, dy, filter_sizes, strides, dilations, padding):
    kh, kw, c, m = filter_sizes
    out_hw, pads = _conv_attrs_geom(x.shape, filter_sizes, strides, dilations, padding)
    cdt = _compute_dtype(x.dtype)
    if exact.needs_exact(dy):
        return exact.depthwise_backprop_filter(x, dy, filter_sizes, strides, dilations, pads, cdt).astype(x.dtype)
    cols = _windows(_pad_hw(x, pads), (kh, kw), out_hw, strides, dilations)
    dy5 = dy.reshape(dy.shape[0], out_hw[0], out_hw[1], c, m).astype(cdt, copy=False)
    dw = np.empty((kh, kw, c, m), dtype=cdt)
    for i in range(kh):
        for j in range(kw):
            dw[i, j] = np.einsum("nhwc,nhwcm->cm", cols[:, :, :, i, j, :].astype(cdt, copy=False), dy5)
    return dw.astype(x.dtype, copy=False)


def _depthwise_shape(specs, strides, dilations, padding):
    (sx, dt), (sw, _) = specs
    if sx is None or sw is None:
        return [(None, dt)]
    out_hw, _ = _geometry(sx[1:3], sw[:2], strides, dilations, padding)
    ch = None if sw[2] is None or sw[3] is None else sw[2] * sw[3]
    return [((sx[0],) + out_hw + (ch,), dt)]


DEPTHWISE = defop("DepthwiseConv2dNative", _depthwise_kernel, shape=_depthwise_shape)
DEPTHWISE_BACKPROP_INPUT = defop("DepthwiseConv2dNativeBackpropInput", _depthwise_backprop_input_kernel,
                                 shape=_conv2d_bi_shape)
DEPTHWISE_BACKPROP_FILTER = defop("DepthwiseConv2dNativeBackpropFilter", _depthwise_backprop_filter_kernel,
                                  shape=_conv2d_bf_shape)


def _dw_backprop_input(input_sizes, w, dy, attrs, x=None):
    if x is not None and None in tuple(input_sizes)[1:]:
        return _dyn_backprop_input("Depthwise", w, dy, x, attrs)
    return execute(DEPTHWISE_BACKPROP_INPUT, (w, dy), {"input_sizes": tuple(input_sizes), **attrs})


def _dw_backprop_filter(x, filter_sizes, dy, attrs, w=None):
    if w is not None and None in filter_sizes:
        return _dyn_backprop_filter("Depthwise", x, dy, w, attrs)
    return execute(DEPTHWISE_BACKPROP_FILTER, (x, dy), {"filter_sizes": tuple(filter_sizes), **attrs})


@defgrad("DepthwiseConv2dNative", inputs=True)
def _depthwise_grad(op, g):
    x, w = op.inputs
    attrs = _geom_attrs(op)
    return (_dw_backprop_input(op.input_shapes[0], w, g, attrs, x),
            _dw_backprop_filter(x, op.input_shapes[1], g, attrs, w))


@defgrad("DepthwiseConv2dNativeBackpropInput", inputs=True)
def _depthwise_backprop_input_grad(op, g):
    w, dy = op.inputs
    attrs = _geom_attrs(op)
    return _dw_backprop_filter(g, op.input_shapes[0], dy, attrs, w), execute(DEPTHWISE, (g, w), attrs)


@defgrad("DepthwiseConv2dNativeBackpropFilter", inputs=True)
def _depthwise_backprop_filter_grad(op, g):
    x, dy = op.inputs
    attrs = _geom_attrs(op)
    return _dw_backprop_input(op.input_shapes[0], g, dy, attrs, x), execute(DEPTHWISE, (x, g), attrs)


def depthwise_conv2d(input: Any, filter: Any, strides: Any, padding: Any, data_format: str | None = None,  # noqa: A002
                     dilations: Any = None, name: str | None = None) -> Tensor:
    """Per-channel convolution: ``filter`` [h, w, in_channels, multiplier]
    gives in_channels * multiplier output channels. ``strides`` is
    [1, s, s, 1]."""
    x, w = _conv_inputs(input, filter, "DepthwiseConv2dNative")
    data_format = data_format or "NHWC"
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    sx = _check_rank(x, 4, "DepthwiseConv2dNative")
    sw = _check_rank(w, 4, "DepthwiseConv2dNative", "filter")
    st_raw = [int(a) for a in np.asarray(strides).reshape(-1)]
    if len(st_raw) != 4:
        raise TypeError(f"strides must be a list of 4 ints [1, stride_h, stride_w, 1], got {strides!r}")
    st = _spatial(st_raw, 2, "strides", "DepthwiseConv2dNative", data_format)
    dl = _spatial(1 if dilations is None else dilations, 2, "dilations", "DepthwiseConv2dNative", data_format)
    pad = _padding(padding, 2, "DepthwiseConv2dNative", data_format)
    if data_format == "NCHW":
        x = _nchw_to_nhwc(x)
        sx = x._shape_tuple()
    if st != (1, 1) and dl != (1, 1):
        raise ValueError(f"strides > 1 are not supported in conjunction with dilations > 1 (strides {list(st)}, "
                         f"dilations {list(dl)})")
    if sx[3] is not None and sw[2] is not None and sx[3] != sw[2]:
        raise _err("DepthwiseConv2dNative", f"input and filter must have the same depth: {sx[3]} vs {sw[2]} (input "
                   f"{list(sx)}, filter {list(sw)})")
    out_hw, _ = _geometry(sx[1:3], sw[:2], st, dl, pad)
    _check_out("DepthwiseConv2dNative", out_hw, sx, sw, padding)
    y = execute(DEPTHWISE, (x, w), {"strides": st, "dilations": dl, "padding": pad})
    return _nhwc_to_nchw(y) if data_format == "NCHW" else y


def conv1d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any, padding: str = "SAME",  # noqa: A002
                     data_format: str = "NWC", dilations: Any = None, name: str | None = None) -> Tensor:
    """The transpose (gradient) of conv1d: ``filters`` is [w, out_channels,
    in_channels]; run as a conv2d_transpose of height 1."""
    x = t(input)
    if data_format not in ("NWC", "NCW"):
        raise ValueError(f"data_format must be 'NWC' or 'NCW', got {data_format!r}")
    out = list(as_int_tuple(output_shape, "conv1d_transpose: output_shape"))
    if len(out) != 3:
        raise ValueError(f"output_shape must have 3 entries, got {out}")
    s = _spatial(strides, 1, "strides", "Conv2DBackpropInput", data_format)[0]
    d = _spatial(1 if dilations is None else dilations, 1, "dilations", "Conv2DBackpropInput", data_format)[0]
    if data_format == "NWC":
        y = conv2d_transpose(array_ops.expand_dims(x, 1), array_ops.expand_dims(filters, 0),
                             [out[0], 1, out[1], out[2]], [1, s], padding, dilations=[1, d])
        return array_ops.squeeze(y, [1])
    y = conv2d_transpose(array_ops.expand_dims(x, 2), array_ops.expand_dims(filters, 0),
                         [out[0], out[1], 1, out[2]], [1, 1, 1, s], padding, data_format="NCHW",
                         dilations=[1, 1, 1, d])
    return array_ops.squeeze(y, [2])


def conv_transpose(input: Any, filters: Any, output_shape: Any, strides: Any, padding: str = "SAME",  # noqa: A002
                   data_format: str | None = None, dilations: Any = None, name: str | None = None) -> Tensor:
    """conv1d_transpose or conv2d_transpose, by the input's rank."""
    nd = len(t(input)._shape_tuple())
    if nd == 3:
        return conv1d_transpose(input, filters, output_shape, strides, padding, data_format or "NWC", dilations)
    if nd == 4:
        return conv2d_transpose(input, filters, output_shape, strides, padding, data_format or "NHWC", dilations)
    if nd == 5:
        return conv3d_transpose(input, filters, output_shape, strides, padding, data_format or "NDHWC", dilations)
    raise ValueError(f"`input` must be 3-, 4- or 5-D (conv1d/2d/3d_transpose), got rank {nd}")


def _conv3d_kernel(x, w, strides, dilations, padding):
    out_sp, pads = _geometry_nd(x.shape[1:-1], w.shape[:3], strides, dilations, padding)
    cdt = _compute_dtype(x.dtype)
    ci, co = w.shape[3], w.shape[4]
    if min(out_sp) <= 0 or x.shape[0] == 0:
        return np.zeros((x.shape[0],) + tuple(max(o, 0) for o in out_sp) + (co,), dtype=x.dtype)
    if exact.needs_exact(w):
        return exact.conv(x, w, out_sp, strides, dilations, pads, cdt).astype(x.dtype, copy=False)
    win = _windows_nd(_pad_nd(x, pads), w.shape[:3], out_sp, strides, dilations)
    cols = win.reshape(-1, int(np.prod(w.shape[:3])) * ci).astype(cdt, copy=False)  # the im2col copy
    out = cols @ w.reshape(-1, co).astype(cdt, copy=False)
    return out.reshape((x.shape[0],) + out_sp + (co,)).astype(x.dtype, copy=False)


def _conv3d_backprop_input_kernel(w, dy, input_sizes, strides, dilations, padding):
    in_shape = (dy.shape[0],) + tuple(input_sizes[1:])
    _, pads = _geometry_nd(in_shape[1:-1], w.shape[:3], strides, dilations, padding)
    cdt = _compute_dtype(dy.dtype)
    ci, co = w.shape[3], w.shape[4]
    out_sp = dy.shape[1:-1]
    if dy.size == 0:
        return np.zeros(in_shape, dtype=dy.dtype)
    dxp = np.zeros((in_shape[0],) + tuple(d + a + b for d, (a, b) in zip(in_shape[1:-1], pads)) + (ci,), dtype=cdt)
    dyf = dy.reshape(-1, co).astype(cdt, copy=False)
    wc = w.astype(cdt, copy=False)
    for _, offs, sl in _offsets_nd(w.shape[:3], out_sp, strides, dilations):
        dxp[sl] += (dyf @ wc[offs].T).reshape(dy.shape[:-1] + (ci,))
    return _crop_nd(dxp, in_shape, pads).astype(dy.dtype, copy=False)


def _conv3d_backprop_filter_kernel(x, dy, filter_sizes, strides, dilations, padding):
    out_sp, pads = _geometry_nd(x.shape[1:-1], filter_sizes[:3], strides, dilations, padding)
    cdt = _compute_dtype(x.dtype)
    ci, co = filter_sizes[3], filter_sizes[4]
    if exact.needs_exact(dy) and x.shape[0] and min(out_sp) > 0:
        return exact.conv_backprop_filter(x, dy, filter_sizes, strides, dilations, pads, cdt).astype(x.dtype)
    win = _windows_nd(_pad_nd(x, pads), filter_sizes[:3], out_sp, strides, dilations)
    cols = win.reshape(-1, int(np.prod(filter_sizes[:3])) * ci).astype(cdt, copy=False)
    dw = cols.T @ dy.reshape(-1, co).astype(cdt, copy=False)
    return dw.reshape(filter_sizes).astype(x.dtype, copy=False)


def _conv3d_shape(specs, strides, dilations, padding):
    (sx, dt), (sw, _) = specs
    if sx is None or sw is None:
        return [(None, dt)]
    out_sp, _ = _geometry_nd(sx[1:4], sw[:3], strides, dilations, padding)
    return [((sx[0],) + out_sp + (sw[4],), dt)]


CONV3D = defop("Conv3D", _conv3d_kernel, shape=_conv3d_shape)
CONV3D_BACKPROP_INPUT = defop("Conv3DBackpropInputV2", _conv3d_backprop_input_kernel, shape=_conv2d_bi_shape)
CONV3D_BACKPROP_FILTER = defop("Conv3DBackpropFilterV2", _conv3d_backprop_filter_kernel, shape=_conv2d_bf_shape)


def _c3_bi(input_sizes, w, dy, attrs, x=None):
    if x is not None and None in tuple(input_sizes)[1:]:
        return _dyn_backprop_input("Conv3D", w, dy, x, attrs)
    return execute(CONV3D_BACKPROP_INPUT, (w, dy), {"input_sizes": tuple(input_sizes), **attrs})


def _c3_bf(x, filter_sizes, dy, attrs, w=None):
    if w is not None and None in filter_sizes:
        return _dyn_backprop_filter("Conv3D", x, dy, w, attrs)
    return execute(CONV3D_BACKPROP_FILTER, (x, dy), {"filter_sizes": tuple(filter_sizes), **attrs})


@defgrad("Conv3D", inputs=True)
def _conv3d_grad(op, g):
    x, w = op.inputs
    attrs = _geom_attrs(op)
    return _c3_bi(op.input_shapes[0], w, g, attrs, x), _c3_bf(x, op.input_shapes[1], g, attrs, w)


@defgrad("Conv3DBackpropInputV2", inputs=True)
def _conv3d_backprop_input_grad(op, g):
    w, dy = op.inputs
    attrs = _geom_attrs(op)
    return _c3_bf(g, op.input_shapes[0], dy, attrs, w), execute(CONV3D, (g, w), attrs)


@defgrad("Conv3DBackpropFilterV2", inputs=True)
def _conv3d_backprop_filter_grad(op, g):
    x, dy = op.inputs
    attrs = _geom_attrs(op)
    return _c3_bi(op.input_shapes[0], g, dy, attrs, x), execute(CONV3D, (x, g), attrs)


# -- gradients for a filter or input of unknown (None) static shape ---------
# The *BackpropFilter / *BackpropInput ops take the filter's / input's size as
# an attr; in a graph traced with unknown dims it is known only at run time.
# These ops take the filter / input itself as a third input (only its shape is
# read) and run the family's backprop kernel with it.

_DYN_BF_KINDS = {
    "Conv2D": (_conv2d_backprop_filter_kernel, _conv2d_backprop_input, CONV2D),
    "Depthwise": (_depthwise_backprop_filter_kernel, _dw_backprop_input, DEPTHWISE),
    "Conv3D": (_conv3d_backprop_filter_kernel, _c3_bi, CONV3D),
}


def _dyn_bf_kernel(x, dy, w, kind, strides, dilations, padding):
    return _DYN_BF_KINDS[kind][0](x, dy, w.shape, strides, dilations, padding)


DYNAMIC_BACKPROP_FILTER = defop("DynamicConvBackpropFilter", _dyn_bf_kernel,
                                shape=lambda specs, kind, **attrs: [(specs[2][0], specs[0][1])])


@defgrad("DynamicConvBackpropFilter", inputs=True)
def _dyn_bf_grad(op, g):
    x, dy, _ = op.inputs
    attrs = _geom_attrs(op)
    _, backprop_input, forward = _DYN_BF_KINDS[op.get_attr("kind")]
    return backprop_input(op.input_shapes[0], g, dy, attrs, x), execute(forward, (x, g), attrs), None


def _dyn_backprop_filter(kind: str, x: Tensor, dy: Tensor, w: Tensor, attrs: dict) -> Tensor:
    return execute(DYNAMIC_BACKPROP_FILTER, (x, dy, w), {"kind": kind, **attrs})


_DYN_BI_KINDS = {
    "Conv2D": (_conv2d_backprop_input_kernel, _conv2d_backprop_filter, CONV2D),
    "Depthwise": (_depthwise_backprop_input_kernel, _dw_backprop_filter, DEPTHWISE),
    "Conv3D": (_conv3d_backprop_input_kernel, _c3_bf, CONV3D),
}


def _dyn_bi_kernel(w, dy, x, kind, strides, dilations, padding):
    return _DYN_BI_KINDS[kind][0](w, dy, x.shape, strides, dilations, padding)


DYNAMIC_BACKPROP_INPUT = defop("DynamicConvBackpropInput", _dyn_bi_kernel,
                               shape=lambda specs, kind, **attrs: [(specs[2][0], specs[1][1])])


@defgrad("DynamicConvBackpropInput", inputs=True)
def _dyn_bi_grad(op, g):
    w, dy, _ = op.inputs
    attrs = _geom_attrs(op)
    _, backprop_filter, forward = _DYN_BI_KINDS[op.get_attr("kind")]
    return backprop_filter(g, op.input_shapes[0], dy, attrs, w), execute(forward, (g, w), attrs), None


def _dyn_backprop_input(kind: str, w: Tensor, dy: Tensor, x: Tensor, attrs: dict) -> Tensor:
    return execute(DYNAMIC_BACKPROP_INPUT, (w, dy, x), {"kind": kind, **attrs})


def conv3d(input: Any, filters: Any, strides: Any, padding: Any, data_format: str = "NDHWC",  # noqa: A002
           dilations: Any = None, name: str | None = None) -> Tensor:
    """3-D convolution of an NDHWC ``input`` with a [d, h, w, in, out] filter;
    ``strides`` and ``dilations`` are 5-element lists (or an int / 3 ints)."""
    x, w = _conv_inputs(input, filters, "Conv3D")
    data_format = data_format or "NDHWC"
    if data_format not in ("NDHWC", "NCDHW"):
        raise ValueError(f"data_format must be 'NDHWC' or 'NCDHW', got {data_format!r}")
    sx = _check_rank(x, 5, "Conv3D")
    sw = _check_rank(w, 5, "Conv3D", "filter")
    st = _spatial(strides, 3, "strides", "Conv3D", data_format)
    dl = _spatial(1 if dilations is None else dilations, 3, "dilations", "Conv3D", data_format)
    pad = _padding(padding, 3, "Conv3D", data_format)
    if data_format == "NCDHW":
        x = array_ops.transpose(x, (0, 2, 3, 4, 1))
        sx = x._shape_tuple()
    if sx[4] is not None and sw[3] is not None and sx[4] != sw[3]:
        raise _err("Conv3D", f"Input depth must be evenly divisible by filter depth: {sx[4]} vs {sw[3]} (input "
                   f"{_dims(sx)}, filter {_dims(sw)})")
    out_sp, _ = _geometry_nd(sx[1:4], sw[:3], st, dl, pad)
    _check_out("Conv3D", out_sp, sx, sw, padding)
    y = execute(CONV3D, (x, w), {"strides": st, "dilations": dl, "padding": pad})
    return array_ops.transpose(y, (0, 4, 1, 2, 3)) if data_format == "NCDHW" else y


def conv3d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any, padding: Any = "SAME",  # noqa: A002
                     data_format: str = "NDHWC", dilations: Any = None, name: str | None = None) -> Tensor:
    """The transpose (gradient) of conv3d: ``filters`` is [d, h, w, out_channels, in_channels] and
    ``output_shape`` the shape of the result (TF's ``Conv3DBackpropInputV2``, with its gradients)."""
    x, w = _conv_inputs(input, filters, "Conv3DBackpropInputV2")
    data_format = data_format or "NDHWC"
    if data_format not in ("NDHWC", "NCDHW"):
        raise ValueError(f"data_format must be 'NDHWC' or 'NCDHW', got {data_format!r}")
    sx = _check_rank(x, 5, "Conv3DBackpropInputV2")
    sw = _check_rank(w, 5, "Conv3DBackpropInputV2", "filter")
    try:
        out_shape = tuple(int(a) for a in np.asarray(
            output_shape.numpy() if isinstance(output_shape, Tensor) else output_shape).reshape(-1))
    except (AttributeError, NotImplementedError, TypeError):
        raise NotImplementedError("tf.nn.conv3d_transpose with an output_shape known only at run time is not "
                                  "implemented in tapeflow") from None
    if len(out_shape) != 5:
        raise ValueError(f"output_shape must have shape (5,), got {list(out_shape)}")
    st = _spatial(strides, 3, "strides", "Conv3DBackpropInputV2", data_format)
    dl = _spatial(1 if dilations is None else dilations, 3, "dilations", "Conv3DBackpropInputV2", data_format)
    pad = _padding(padding, 3, "Conv3DBackpropInputV2", data_format)
    if data_format == "NCDHW":
        x = array_ops.transpose(x, (0, 2, 3, 4, 1))
        sx = x._shape_tuple()
        out_shape = (out_shape[0],) + tuple(out_shape[2:]) + (out_shape[1],)
    _check_channels(out_shape, sx, sw)
    out_sp, _ = _geometry_nd(out_shape[1:4], sw[:3], st, dl, pad)
    _check_transpose_size(out_shape, sx, sw, out_sp, st, padding, "Conv3DBackpropInputV2", "Conv3DBackpropInputOp")
    y = _c3_bi(out_shape, w, x, {"strides": st, "dilations": dl, "padding": pad})
    return array_ops.transpose(y, (0, 4, 1, 2, 3)) if data_format == "NCDHW" else y


def convolution(input: Any, filters: Any, strides: Any = None, padding: str = "VALID",  # noqa: A002
                data_format: str | None = None, dilations: Any = None, name: str | None = None) -> Tensor:
    """N-D convolution, dispatched on the input's rank (1-D or 2-D here)."""
    nd = len(t(input)._shape_tuple())
    strides = 1 if strides is None else strides
    if nd == 3:
        return conv1d(input, filters, strides, padding, data_format or "NWC", dilations)
    if nd == 4:
        return conv2d(input, filters, strides, padding, data_format or "NHWC", dilations)
    if nd == 5:
        return conv3d(input, filters, strides, padding, data_format or "NDHWC", dilations)
    raise ValueError(f"`input` must have rank 3, 4 or 5 (one batch dim, 1-3 spatial dims, one channel dim); got "
                     f"shape {list(t(input)._shape_tuple())}")


def atrous_conv2d(value: Any, filters: Any, rate: int, padding: str, name: str | None = None) -> Tensor:
    """conv2d with ``dilations=rate`` (a dilated, "atrous" convolution)."""
    if int(rate) < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    return conv2d(value, filters, 1, padding, dilations=int(rate))


def separable_conv2d(input: Any, depthwise_filter: Any, pointwise_filter: Any, strides: Any,  # noqa: A002
                     padding: str, data_format: str | None = None, dilations: Any = None,
                     name: str | None = None) -> Tensor:
    """depthwise_conv2d followed by a 1x1 conv2d with ``pointwise_filter``."""
    y = depthwise_conv2d(input, depthwise_filter, strides, padding, data_format=data_format, dilations=dilations)
    return conv2d(y, pointwise_filter, 1, "VALID", data_format=data_format or "NHWC")
