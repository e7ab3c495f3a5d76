"""Convolutions summed over the real filter taps only, for inputs holding inf or NaN.

The fast kernels (im2col of a zero-padded input, the flipped-filter correlation of a padded ``dy``) multiply
padding zeros by the filter: ``0 * inf`` is NaN there. TF's float32 CPU kernels (oneDNN) never touch the
padding, so an infinite filter entry gives ``+-inf``, not NaN, at the border. The kernels in conv.py call
these only when the float32 operand that meets the padding (the filter, or ``dy`` for the filter gradient) is
not all finite; the result then has TF's NaN/inf pattern.
All arrays are channels-last with one spatial axis per stride.
"""

from __future__ import annotations

import itertools

import numpy as np


def needs_exact(a: np.ndarray) -> bool:
    """Whether the float32 operand that meets the padding zeros holds inf or NaN."""
    return a.dtype == np.float32 and a.size > 0 and not np.isfinite(a).all()


def _tap_slices(tap, in_sp, out_sp, strides, dilations, pads):
    """(output slices, input slices) of the positions where filter tap ``tap`` meets real input."""
    o_sl, i_sl = [slice(None)], [slice(None)]
    for t, n_in, n_out, s, d, (lo, _) in zip(tap, in_sp, out_sp, strides, dilations, pads):
        off = t * d - lo  # input index = output index * s + off
        first = max(0, (s - 1 - off) // s)  # ceil(-off / s)
        last = min(n_out - 1, (n_in - 1 - off) // s)
        if last < first:
            return None
        o_sl.append(slice(first, last + 1))
        i_sl.append(slice(first * s + off, last * s + off + 1, s))
    return tuple(o_sl), tuple(i_sl)


def _taps(k_sp):
    return itertools.product(*[range(k) for k in k_sp])


def conv(x, w, out_sp, strides, dilations, pads, cdt):
    """out[n, o, :] = sum over taps of x[n, o * s + tap * d - pad, :] @ w[tap] (x: N,*S,Ci; w: *K,Ci,Co)."""
    nd = w.ndim - 2
    out = np.zeros((x.shape[0],) + tuple(out_sp) + (w.shape[-1],), dtype=cdt)
    with np.errstate(invalid="ignore", over="ignore"):
        for tap in _taps(w.shape[:nd]):
            sl = _tap_slices(tap, x.shape[1:-1], out_sp, strides, dilations, pads)
            if sl is not None:
                out[sl[0]] += x[sl[1]].astype(cdt, copy=False) @ w[tap].astype(cdt, copy=False)
    return out


def conv_backprop_input(w, dy, in_shape, strides, dilations, pads, cdt):
    """dx of ``conv``: each dy[o] @ w[tap].T added at the input position it came from."""
    nd = w.ndim - 2
    dx = np.zeros(tuple(in_shape), dtype=cdt)
    with np.errstate(invalid="ignore", over="ignore"):
        for tap in _taps(w.shape[:nd]):
            sl = _tap_slices(tap, in_shape[1:-1], dy.shape[1:-1], strides, dilations, pads)
            if sl is not None:
                dx[sl[1]] += dy[sl[0]].astype(cdt, copy=False) @ w[tap].astype(cdt, copy=False).T
    return dx


def conv_backprop_filter(x, dy, filter_sizes, strides, dilations, pads, cdt):
    """dw of ``conv``: per tap, the real input positions against dy."""
    nd = len(filter_sizes) - 2
    dw = np.zeros(tuple(filter_sizes), dtype=cdt)
    ci, co = filter_sizes[-2], filter_sizes[-1]
    with np.errstate(invalid="ignore", over="ignore"):
        for tap in _taps(filter_sizes[:nd]):
            sl = _tap_slices(tap, x.shape[1:-1], dy.shape[1:-1], strides, dilations, pads)
            if sl is not None:
                dw[tap] = x[sl[1]].reshape(-1, ci).astype(cdt, copy=False).T @ \
                    dy[sl[0]].reshape(-1, co).astype(cdt, copy=False)
    return dw


def depthwise(x, w, out_sp, strides, dilations, pads, cdt):
    """Depthwise ``conv`` (w: KH,KW,C,M; out channel c*M + m)."""
    c, m = w.shape[2], w.shape[3]
    out = np.zeros((x.shape[0],) + tuple(out_sp) + (c, m), dtype=cdt)
    with np.errstate(invalid="ignore", over="ignore"):
        for tap in _taps(w.shape[:2]):
            sl = _tap_slices(tap, x.shape[1:-1], out_sp, strides, dilations, pads)
            if sl is not None:
                out[sl[0]] += x[sl[1]].astype(cdt, copy=False)[..., None] * w[tap].astype(cdt, copy=False)
    return out.reshape(out.shape[:-2] + (c * m,))


def depthwise_backprop_filter(x, dy, filter_sizes, strides, dilations, pads, cdt):
    c, m = filter_sizes[2], filter_sizes[3]
    dw = np.zeros(tuple(filter_sizes), dtype=cdt)
    dy5 = dy.reshape(dy.shape[:-1] + (c, m))
    with np.errstate(invalid="ignore", over="ignore"):
        for tap in _taps(filter_sizes[:2]):
            sl = _tap_slices(tap, x.shape[1:-1], dy.shape[1:-1], strides, dilations, pads)
            if sl is not None:
                xs = x[sl[1]].astype(cdt, copy=False).reshape(-1, c)
                dw[tap] = np.einsum("pc,pcm->cm", xs, dy5[sl[0]].astype(cdt, copy=False).reshape(-1, c, m))
    return dw
