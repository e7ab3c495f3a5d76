"""Window geometry shared by convolutions and pooling: output sizes and padding amounts, padded
inputs, strided window views and im2col, and the parsing of strides / dilations / ksize /
padding arguments. Spatial attrs (strides, dilations, padding) are Python constants; the
padding *amounts* are worked out by the kernels from the real input shape, so graphs traced
with unknown sizes still run."""

from __future__ import annotations

import itertools
import threading
from typing import Any

import numpy as np

from tapeflow.framework.dtypes import type_string
from tapeflow.framework.errors import UnimplementedError
from tapeflow.framework.execute import describe
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import array_ops
from tapeflow.ops._helpers import t
from tapeflow.ops.nn._common import _err


# ============================================================================
# Convolution geometry (shared by conv and pooling)
# ============================================================================

def _out_and_pads(size, k, stride, dilation, padding):
    """Output length and (before, after) padding along one spatial axis.
    ``padding`` is "SAME", "VALID" or an explicit (before, after) pair."""
    if k is None:  # a filter dim of unknown (None) size, in a traced graph: known at run time
        return None, (padding if isinstance(padding, tuple) else None)
    eff = (k - 1) * dilation + 1
    if isinstance(padding, tuple):
        before, after = padding
        if size is None:
            return None, (before, after)
        return (size + before + after - eff) // stride + 1, (before, after)
    if size is None:
        return None, None
    if padding == "VALID":
        # TF: (size - eff + stride) / stride, truncated: 0 (an empty output) when
        # the window is at most stride - 1 longer than the input, negative (an error) beyond.
        return int((size - eff + stride) / stride), (0, 0)
    out = -(-size // stride)
    total = max((out - 1) * stride + eff - size, 0)
    return out, (total // 2, total - total // 2)  # extra padding at the end, as TF


def _geometry(in_hw, k_hw, strides, dilations, padding):
    outs, pads = [], []
    for i in range(2):
        pad = padding if isinstance(padding, str) else padding[i]
        o, p = _out_and_pads(in_hw[i], k_hw[i], strides[i], dilations[i], pad)
        outs.append(o)
        pads.append(p)
    return tuple(outs), tuple(pads)


def _pad_hw(x, pads, value=0):
    if pads == ((0, 0), (0, 0)):
        return x
    (t0, b0), (l0, r0) = pads
    if value == 0:
        out = np.zeros((x.shape[0], x.shape[1] + t0 + b0, x.shape[2] + l0 + r0, x.shape[3]), dtype=x.dtype)
    else:
        out = np.full((x.shape[0], x.shape[1] + t0 + b0, x.shape[2] + l0 + r0, x.shape[3]), value, dtype=x.dtype)
    out[:, t0:t0 + x.shape[1], l0:l0 + x.shape[2], :] = x
    return out


def _windows(xp, k_hw, out_hw, strides, dilations):
    """A (N, OH, OW, KH, KW, C) strided view of the padded NHWC input."""
    n, _, _, c = xp.shape
    s0, s1, s2, s3 = xp.strides
    return np.lib.stride_tricks.as_strided(
        xp, shape=(n, out_hw[0], out_hw[1], k_hw[0], k_hw[1], c),
        strides=(s0, s1 * strides[0], s2 * strides[1], s1 * dilations[0], s2 * dilations[1], s3),
        writeable=False)


def _scatter_windows(cols, in_shape, pads, strides, dilations):
    """The adjoint of _windows: adds (N, OH, OW, KH, KW, C) window values back
    into an (N, H, W, C) array (crops the padding)."""
    n, oh, ow, kh, kw, c = cols.shape
    (t0, b0), (l0, r0) = pads
    h, w = in_shape[1], in_shape[2]
    xp = np.zeros((n, h + t0 + b0, w + l0 + r0, c), dtype=cols.dtype)
    sh, sw = strides
    for i in range(kh):
        hi = i * dilations[0]
        for j in range(kw):
            wj = j * dilations[1]
            xp[:, hi:hi + (oh - 1) * sh + 1:sh, wj:wj + (ow - 1) * sw + 1:sw, :] += cols[:, :, :, i, j, :]
    return xp[:, t0:t0 + h, l0:l0 + w, :]


# im2col matrices are big (k*k times the input) and live only inside one
# kernel call: each thread reuses one scratch buffer for them instead of
# mapping fresh pages every call (which costs as much as the copy itself).
_SCRATCH = threading.local()
_SCRATCH_MAX_BYTES = 1 << 27  # 128 MiB: larger im2col matrices are allocated per call


def _im2col(win, dtype):
    """Copies a (N, OH, OW, KH, KW, C) window view into a (N*OH*OW, KH*KW*C)
    matrix of ``dtype``, in the thread's scratch buffer when it fits."""
    n, oh, ow, kh, kw, c = win.shape
    shape = (n * oh * ow, kh * kw * c)
    nbytes = shape[0] * shape[1] * np.dtype(dtype).itemsize
    if nbytes > _SCRATCH_MAX_BYTES:
        return win.reshape(shape).astype(dtype, copy=False)
    buf = getattr(_SCRATCH, "buf", None)
    if buf is None or buf.nbytes < nbytes:
        buf = _SCRATCH.buf = np.empty(nbytes, np.uint8)
    cols = buf[:nbytes].view(dtype).reshape(win.shape)
    np.copyto(cols, win, casting="unsafe")
    return cols.reshape(shape)


_NARROW_CHANNELS = 4  # inputs with at most this many channels (images) use the transposed layout below


def _im2col_t(xp, k_hw, out_hw, strides, dilations, dtype):
    """The transpose of _im2col for an input with few channels: a (KH*KW*C,
    N*OH*OW) matrix built by one strided slice copy per (i, j, channel) -- the
    row-major im2col copies C-element runs, slow when C is 1 or 3."""
    n, _, _, c = xp.shape
    (oh, ow), (kh, kw) = out_hw, k_hw
    sh, sw = strides
    cols = np.empty((kh, kw, c, n, oh, ow), dtype)
    for i in range(kh):
        hi = i * dilations[0]
        for j in range(kw):
            wj = j * dilations[1]
            win = xp[:, hi:hi + (oh - 1) * sh + 1:sh, wj:wj + (ow - 1) * sw + 1:sw, :]
            for ch in range(c):
                cols[i, j, ch] = win[..., ch]
    return cols.reshape(kh * kw * c, n * oh * ow)


def _compute_dtype(dt):
    # Half precision convolves in float32 (as TF's CPU kernels accumulate).
    return np.float32 if dt in (np.float16,) or dt.name == "bfloat16" else dt


# -- argument parsing ----------------------------------------------------------

def _spatial(v: Any, n: int, name: str, op: str, data_format: str, allow_full: bool = True) -> tuple:
    """strides/dilations/ksize: an int, a list of 1, n or n+2 ints -> n ints."""
    if isinstance(v, Tensor):
        v = v.numpy()
    vals = [int(a) for a in np.asarray(v).reshape(-1)]
    if len(vals) == 1:
        vals = vals * n
    elif len(vals) == n + 2 and allow_full:
        c_axis = 1 if data_format.startswith("NC") else n + 1
        if vals[0] != 1 or vals[c_axis] != 1:
            if op in ("MaxPool", "AvgPool"):
                raise UnimplementedError(None, None, f"Pooling is not yet supported on the batch dimension (or depth "
                                         f"dimension): {name}={vals} [Op:{op}]")
            if name == "strides":
                raise UnimplementedError(None, None, f"Current implementation does not yet support strides in the "
                                         f"batch and depth dimensions: strides={vals} [Op:{op}]")
            raise _err(op, f"{name} in the batch and depth dimensions must be 1, got {vals}. "
                       f"Pass [1, {', '.join(['s'] * n)}, 1] or a single int")
        vals = [vals[i] for i in range(n + 2) if i != 0 and i != c_axis]
    elif len(vals) != n:
        raise ValueError(f"{name} should be of length 1, {n} or {n + 2}. Received: {name}={v} of length "
                         f"{len(vals)}")
    if any(a <= 0 for a in vals):
        raise _err(op, f"{name} must be positive, got {vals}")
    return tuple(vals)


def _padding(padding: Any, n: int, op: str, data_format: str) -> Any:
    """"SAME"/"VALID", or explicit [[0,0],[t,b],[l,r],[0,0]] -> tuple of pairs."""
    if isinstance(padding, str):
        p = padding.upper()
        if p not in ("SAME", "VALID"):
            raise _err(op, f"Value for attr 'padding' of {padding!r} is not in the list of allowed values: "
                       "\"SAME\", \"VALID\", \"EXPLICIT\" (pass a list of [before, after] pairs for explicit padding)")
        return p
    try:
        pairs = [tuple(int(a) for a in pr) for pr in padding]
    except (TypeError, ValueError):
        raise ValueError(f"explicit padding must be a list of [before, after] pairs, got {padding!r}") from None
    if len(pairs) != n + 2 or any(len(pr) != 2 for pr in pairs):
        raise ValueError(f"When padding is explicit, it must be a list of {n + 2} [before, after] pairs (one per "
                         f"dimension), got {padding!r}")
    c_axis = 1 if data_format.startswith("NC") else n + 1
    if pairs[0] != (0, 0) or pairs[c_axis] != (0, 0):
        raise ValueError(f"Explicit padding of the batch and channel dimensions must be zero, got {padding!r}")
    if any(a < 0 for pr in pairs for a in pr):
        raise _err(op, f"All elements of explicit_paddings must be nonnegative, got {padding!r}")
    return tuple(pairs[i] for i in range(n + 2) if i != 0 and i != c_axis)


def _check_rank(x: Tensor, rank: int, op: str, what: str = "input") -> tuple:
    s = x._shape_tuple()
    if len(s) != rank:
        raise ValueError(f"{op}: {what} must be {rank}-dimensional, got shape {list(s)} ({describe(x)})")
    return s


def _conv_inputs(input: Any, filters: Any, op: str) -> tuple:
    x = t(input)
    w = convert_to_tensor(filters, dtype_hint=x.dtype)
    if x._value.dtype != w._value.dtype:
        raise _err(op, f"cannot compute {op} as input #1(zero-based) was expected to be a "
                   f"{type_string(x.dtype)} tensor but is a {type_string(w.dtype)} tensor. Cast the filter (or the "
                   "input) so both match")
    if x._value.dtype.kind != "f" and not (op == "Conv2D" and x._value.dtype == np.int32):
        raise _err(op, f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed values: half, bfloat16, "
                   "float, double. Cast the input to a float dtype")
    return x, w


def _nchw_to_nhwc(x: Tensor) -> Tensor:
    return array_ops.transpose(x, (0, 2, 3, 1))


def _nhwc_to_nchw(x: Tensor) -> Tensor:
    return array_ops.transpose(x, (0, 3, 1, 2))


def _check_out(op: str, out_hw, sx, sw, padding):
    if any(o is not None and o < 0 for o in out_hw):
        raise _err(op, f"Computed output size would be negative: input {list(sx)}, filter {list(sw)}, padding "
                   f"{padding!r}. Use padding='SAME' or a smaller filter")


def _geometry_nd(in_sp, k_sp, strides, dilations, padding):
    outs, pads = [], []
    for i in range(len(k_sp)):
        pad = padding if isinstance(padding, str) else padding[i]
        o, p = _out_and_pads(in_sp[i], k_sp[i], strides[i], dilations[i], pad)
        outs.append(o)
        pads.append(p)
    return tuple(outs), tuple(pads)


def _pad_nd(x, pads, value=0):
    if all(p == (0, 0) for p in pads):
        return x
    out = np.full((x.shape[0],) + tuple(d + a + b for d, (a, b) in zip(x.shape[1:-1], pads)) + (x.shape[-1],),
                  value, dtype=x.dtype)
    out[(slice(None),) + tuple(slice(a, a + d) for d, (a, _) in zip(x.shape[1:-1], pads))] = x
    return out


def _windows_nd(xp, k_sp, out_sp, strides, dilations):
    """A (N, *out, *k, C) strided view of the padded channels-last input."""
    st = xp.strides
    sp = st[1:-1]
    return np.lib.stride_tricks.as_strided(
        xp, shape=(xp.shape[0],) + tuple(out_sp) + tuple(k_sp) + (xp.shape[-1],),
        strides=(st[0],) + tuple(a * b for a, b in zip(sp, strides)) + tuple(a * b for a, b in zip(sp, dilations))
        + (st[-1],), writeable=False)


def _offsets_nd(k_sp, out_sp, strides, dilations):
    """(flat offset index, slice of the padded input) per filter offset."""
    for flat, offs in enumerate(itertools.product(*[range(k) for k in k_sp])):
        yield flat, offs, (slice(None),) + tuple(
            slice(o * d, o * d + (n - 1) * s + 1, s) for o, d, n, s in zip(offs, dilations, out_sp, strides))


def _crop_nd(xp, in_shape, pads):
    return xp[(slice(None),) + tuple(slice(a, a + d) for d, (a, _) in zip(in_shape[1:-1], pads))]
