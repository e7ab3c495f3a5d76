"""Winograd F(2x2, 3x3) for the 3x3 stride-1 convolutions with enough channels that the product, not
the memory passes, dominates.

Each 2x2 block of outputs is computed from the 4x4 input tile around it as
``Y = A^T [(G g G^T) * (B^T d B)] A``: 16 products per tile and channel pair instead of the direct
convolution's 36, the 16 transform points being 16 independent (tiles, Ci) @ (Ci, Co) matrix products
(Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", 2015). The input and output
transforms are additions only (the filter's carries halves), so float32 rounding stays that of a
short sum: measured 3e-7 of the largest output against a float64 direct convolution, where the
im2col product measured 7e-7.

Inside the transforms a chunk of images is laid out (H, W, image, channel), so every NumPy pass runs
over runs of images x channels contiguous floats instead of one pixel's channels. Chunks depend on the
shape only (never on the thread count), and each chunk's results are its own: the same bits on any
number of intra-op threads.
"""

from __future__ import annotations

import threading

import numpy as np

from tapeflow.ops import threads

MIN_WORK = 12_000_000  # multiply-adds of the direct product: below this the ~25 NumPy calls a chunk cost more
CHANNEL_RATIO = 16  # Ci * Co >= CHANNEL_RATIO * (Ci + Co): the product outweighs the transforms
_CHUNK_BYTES = 2_800_000  # one chunk's transformed input + products: measured best at 9 images of 14x14x(32+64)


def applies(k_hw, strides, dilations, ci: int, co: int, work: float) -> bool:
    """Whether a convolution runs as Winograd F(2x2, 3x3): a 3x3 filter, stride 1, dilation 1, enough
    channels that the product outweighs the transforms (whose passes grow with Ci + Co, the product
    with Ci * Co: Ci * Co >= 16 (Ci + Co)), and at least MIN_WORK multiply-adds of the direct product.
    Measured on a 2-vCPU AMD EPYC, one thread, forward / input / filter gradient against im2col:
    32x14x14x32 -> 64 0.75-0.85x the time, 8x14x14x32 -> 64 0.8x, 4x14x14x32 -> 64 0.9x, 2x14x14x32 -> 64
    1.1-1.2x, 1x56x56x64 -> 64 0.65-0.75x; 16x28x28x16 -> 16 1.0-1.1x; and 28x28x1 -> 32 has one input
    channel."""
    return (tuple(k_hw) == (3, 3) and tuple(strides) == (1, 1) and tuple(dilations) == (1, 1)
            and ci * co >= CHANNEL_RATIO * (ci + co) and work >= MIN_WORK)


def filter_transform(w: np.ndarray) -> np.ndarray:
    """``G g G^T`` of a (3, 3, Ci, Co) filter: (16, Ci, Co), one matrix per transform point."""
    g0, g1, g2 = w[0], w[1], w[2]
    r = np.stack([g0, 0.5 * (g0 + g1 + g2), 0.5 * (g0 - g1 + g2), g2])  # (4, 3, Ci, Co)
    h0, h1, h2 = r[:, 0], r[:, 1], r[:, 2]
    u = np.stack([h0, 0.5 * (h0 + h1 + h2), 0.5 * (h0 - h1 + h2), h2], axis=1)  # (4, 4, Ci, Co)
    return np.ascontiguousarray(u.reshape((16,) + w.shape[2:]))


def _input_transform(x, pads, th, tw, dtype):
    """``B^T d B`` of every 4x4 tile of the padded chunk x (nb, H, W, C): (16, th*tw*nb, C), the tiles
    ordered (tile row, tile column, image)."""
    nb, h, wd, c = x.shape
    (pt, _), (pl, _) = pads
    hp, wp = 2 * th + 2, 2 * tw + 2
    xp = np.empty((hp, wp, nb, c), dtype)
    xp[:pt] = 0
    xp[pt + h:] = 0
    xp[pt:pt + h, :pl] = 0
    xp[pt:pt + h, pl + wd:] = 0
    np.copyto(xp[pt:pt + h, pl:pl + wd], x.transpose(1, 2, 0, 3), casting="unsafe")
    rows = np.empty((4, th, wp, nb, c), dtype)
    r0, r1, r2, r3 = (xp[k:k + 2 * th - 1:2] for k in range(4))
    np.subtract(r0, r2, out=rows[0])
    np.add(r1, r2, out=rows[1])
    np.subtract(r2, r1, out=rows[2])
    np.subtract(r1, r3, out=rows[3])
    v = np.empty((4, 4, th, tw, nb, c), dtype)
    q0, q1, q2, q3 = (rows[:, :, k:k + 2 * tw - 1:2] for k in range(4))  # (all four rows at once)
    np.subtract(q0, q2, out=v[:, 0])
    np.add(q1, q2, out=v[:, 1])
    np.subtract(q2, q1, out=v[:, 2])
    np.subtract(q1, q3, out=v[:, 3])
    return v.reshape(16, th * tw * nb, c)


def _output_transform(m, nb, th, tw, out):
    """``A^T M A`` of the (16, th*tw*nb, Co) products into out (nb, OH, OW, Co), OH <= 2*th, OW <= 2*tw."""
    co = m.shape[-1]
    m = m.reshape(4, 4, th * tw * nb, co)
    s = np.empty((2, 4, th * tw * nb, co), m.dtype)
    np.add(m[1], m[2], out=s[0])
    s[0] += m[0]
    np.subtract(m[1], m[2], out=s[1])
    s[1] -= m[3]
    oh, ow = out.shape[1:3]
    even = (oh, ow) == (2 * th, 2 * tw)
    y = out if even else np.empty((nb, 2 * th, 2 * tw, co), m.dtype)
    y6 = y.reshape(nb, th, 2, tw, 2, co).transpose(2, 1, 3, 4, 0, 5)  # (2, th, tw, 2, nb, Co)
    s6 = s.reshape(2, 4, th, tw, nb, co)
    y0, y1 = y6[:, :, :, 0], y6[:, :, :, 1]
    np.add(s6[:, 1], s6[:, 2], out=y0)
    y0 += s6[:, 0]
    np.subtract(s6[:, 1], s6[:, 2], out=y1)
    y1 -= s6[:, 3]
    if not even:
        np.copyto(out, y[:, :oh, :ow])


def _plan(n, oh, ow, ci, co, dtype):
    """(th, tw, image chunks) of a convolution: the chunks depend on the shapes only, the same for the
    forward and the filter gradient of one convolution (which may then share the input's transform)."""
    th, tw = -(-oh // 2), -(-ow // 2)
    per_image = 16 * th * tw * (ci + co) * np.dtype(dtype).itemsize
    step = max(1, _CHUNK_BYTES // per_image)
    step = -(-n // -(-n // step))  # as many chunks, of even sizes (32 images: 4 of 8, not 9, 9, 9 and 5)
    return th, tw, tuple((a, min(n, a + step)) for a in range(0, n, step))


# The input transforms of the last few forward convolutions, for their filter gradients: a training step's
# Conv2DBackpropFilter reads the very array its Conv2D read (the same object: tensors are immutable), so
# its tiles' transform is the forward's; taken once (a second gradient recomputes it). Entries hold their
# input, so an id is never reused while cached.
_KEPT: list = []  # [(x, key, [transform of each chunk])], the most recent last
_KEPT_MAX, _KEPT_MAX_BYTES = 4, 64 << 20
_KEPT_LOCK = threading.Lock()


def _keep(x, key, vs) -> None:
    size = sum(v.nbytes for v in vs)
    with _KEPT_LOCK:
        _KEPT[:] = [e for e in _KEPT if e[0] is not x][-(_KEPT_MAX - 1):]
        while _KEPT and size + sum(sum(v.nbytes for v in e[2]) for e in _KEPT) > _KEPT_MAX_BYTES:
            _KEPT.pop(0)
        if size <= _KEPT_MAX_BYTES:
            _KEPT.append((x, key, vs))


def _kept(x, key):
    with _KEPT_LOCK:
        return _take(x, key)


def _take(x, key):
    for i, e in enumerate(_KEPT):
        if e[0] is x and e[1] == key:
            del _KEPT[i]
            return e[2]
    return None


_PENDING: list = []  # [(dy, key, threading.Event)]: a transform of dy under way


def _dy_transforms(dy, th, tw, bounds, ci, dtype) -> list:
    """``A dy A^T`` of each chunk, computed once for the two gradients of one convolution: the first to
    ask computes and keeps it, the second takes it, waiting if it is under way (a compiled step may run
    the filter gradient on the inter-op thread beside the input gradient)."""
    key = ("dy", ci, np.dtype(dtype), bounds)
    with _KEPT_LOCK:
        found = _take(dy, key)
        if found is not None:
            return found
        pending = next((p for p in _PENDING if p[0] is dy and p[1] == key), None)
        if pending is None:
            pending = (dy, key, threading.Event())
            _PENDING.append(pending)
            mine = True
        else:
            mine = False
    if not mine:
        pending[2].wait()
        found = _kept(dy, key)
    dms: list = [None] * len(bounds)

    def chunk(k):
        a, b = bounds[k]
        with np.errstate(invalid="ignore", over="ignore"):
            dms[k] = _dy_transform(dy[a:b], th, tw, dtype)

    try:
        if mine or found is None:
            threads.parallel_for(len(bounds), chunk, 16.0 * dy.size)
    finally:
        if mine:
            with _KEPT_LOCK:
                _PENDING.remove(pending)
            if all(d is not None for d in dms):
                _keep(dy, key, dms)
            pending[2].set()
    return dms if found is None else found


def conv(x: np.ndarray, u: np.ndarray, out_hw, pads, dtype, after=None, keep: bool = False
         ) -> tuple[np.ndarray, bool]:
    """The (N, OH, OW, Co) stride-1 correlation of x (N, H, W, Ci) with the filter whose transform is
    ``u`` (filter_transform), the padding ``pads`` ((top, bottom), (left, right)), computed in ``dtype``;
    ``after(chunk)`` runs on each chunk of images' outputs while they are in cache; ``keep``: x's
    transform is kept for filter_grad. Also returns whether every output is finite (a non-finite input
    spreads over its whole tile here, where the direct convolution keeps it to the windows that read
    it: the caller then takes the direct one)."""
    n = x.shape[0]
    ci, co = u.shape[1:]
    th, tw, bounds = _plan(n, out_hw[0], out_hw[1], ci, co, dtype)
    out = np.empty((n,) + tuple(out_hw) + (co,), dtype)
    finite = [True] * len(bounds)
    vs: list = [None] * len(bounds)

    def chunk(k):
        a, b = bounds[k]
        with np.errstate(invalid="ignore", over="ignore"):  # (a non-finite input: see the return value)
            v = vs[k] = _input_transform(x[a:b], pads, th, tw, dtype)
            m = np.matmul(v, u)
            _output_transform(m, b - a, th, tw, out[a:b])
            finite[k] = bool(np.isfinite(np.add.reduce(out[a:b], axis=None)))
        if after is not None and finite[k]:
            after(out[a:b])

    threads.parallel_for(len(bounds), chunk, 36.0 * th * tw * n * ci * co)  # (the direct product's work)
    if keep and all(finite):
        _keep(x, (tuple(out_hw), pads, co, np.dtype(dtype), bounds), vs)
    return out, all(finite)


def _dy_transform(dy, th, tw, dtype):
    """``A dy A^T`` of every 2x2 block of the output gradient chunk dy (nb, OH, OW, Co) (zeros past an odd
    edge), with A's -1 column taken as +1 (filter_grad flips those signs in the small result):
    (16, th*tw*nb, Co), the tiles ordered as _input_transform's."""
    nb, oh, ow, co = dy.shape
    dy = dy.astype(dtype, copy=False)
    if (oh, ow) != (2 * th, 2 * tw):
        padded = np.zeros((nb, 2 * th, 2 * tw, co), dtype)
        padded[:, :oh, :ow] = dy
        dy = padded
    y = dy.transpose(1, 2, 0, 3).reshape(th, 2, tw, 2, nb, co)  # (H-major, as the tiles)
    e = np.empty((4, th, tw, 2, nb, co), dtype)
    np.copyto(e[0], y[:, 0], casting="unsafe")
    np.add(y[:, 0], y[:, 1], out=e[1])
    np.subtract(y[:, 0], y[:, 1], out=e[2])
    np.copyto(e[3], y[:, 1], casting="unsafe")
    d = np.empty((4, 4, th, tw, nb, co), dtype)
    f0, f1 = e[:, :, :, 0], e[:, :, :, 1]
    np.copyto(d[:, 0], f0)
    np.add(f0, f1, out=d[:, 1])
    np.subtract(f0, f1, out=d[:, 2])
    np.copyto(d[:, 3], f1)
    return d.reshape(16, th * tw * nb, co)


# G with its last row negated: the sign _dy_transform left out of A's last column
_G_FLIPPED = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, -1.0]])


def filter_grad(x: np.ndarray, dy: np.ndarray, pads, dtype) -> tuple[np.ndarray, bool]:
    """The (3, 3, Ci, Co) filter gradient of a stride-1 3x3 convolution of x (N, H, W, Ci), padding
    ``pads``, whose output gradient is dy (N, OH, OW, Co): ``G^T [sum over tiles (B^T d B) (A dy A^T)] G``,
    16 (Ci, tiles) @ (tiles, Co) products per chunk of images, the chunks' sums added in order (the same
    bits on any number of threads). Also returns whether the result is finite (else the caller takes the
    direct product, whose NaN/inf follow the windows)."""
    n, _, _, ci = x.shape
    oh, ow, co = dy.shape[1:]
    th, tw, bounds = _plan(n, oh, ow, ci, co, dtype)
    parts: list = [None] * len(bounds)
    vs = _kept(x, ((oh, ow), pads, co, np.dtype(dtype), bounds))
    ds = _dy_transforms(dy, th, tw, bounds, ci, dtype)

    def chunk(k):
        a, b = bounds[k]
        with np.errstate(invalid="ignore", over="ignore"):
            v = _input_transform(x[a:b], pads, th, tw, dtype) if vs is None else vs[k]
            parts[k] = np.matmul(v.transpose(0, 2, 1), ds[k])

    threads.parallel_for(len(bounds), chunk, 36.0 * th * tw * n * ci * co)  # (the direct product's work)
    g = _G_FLIPPED.astype(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        du = parts[0]
        for part in parts[1:]:
            du += part
        dw = np.tensordot(g, np.tensordot(g, du.reshape(4, 4, ci, co), axes=([0], [1])), axes=([0], [1]))
    return dw, bool(np.isfinite(dw).all())


_SIGNS = np.array([1.0, 1.0, 1.0, -1.0])
_SIGNS16 = np.outer(_SIGNS, _SIGNS).reshape(16, 1, 1)  # the signs _dy_transform left out, per point


def _input_transform_adjoint(v, pads, th, tw, out):
    """The adjoint of _input_transform: the (16, th*tw*nb, C) tile gradients added back where their tiles
    overlap (each padded row and column but the outer ones belongs to two tiles), cropped to out
    (nb, H, W, C)."""
    nb, h, wd, c = out.shape
    (pt, _), (pl, _) = pads
    v = v.reshape(4, 4, th, tw, nb * c)
    rows = np.empty((4, th, 2 * tw + 2, nb * c), v.dtype)
    even, odd = rows[:, :, 0::2], rows[:, :, 1::2]  # (4, th, tw + 1, L)
    v0, v1, v2, v3 = v[:, 0], v[:, 1], v[:, 2], v[:, 3]
    np.copyto(even[:, :, :tw], v0)  # column 2t: q0 of tile t and q2 of tile t - 1
    even[:, :, tw] = 0
    t = np.add(v1, v2)
    t -= v0
    even[:, :, 1:] += t
    np.subtract(v1, v2, out=odd[:, :, :tw])  # column 2t + 1: q1 of tile t and q3 of tile t - 1
    odd[:, :, :tw] += v3
    odd[:, :, tw] = 0
    odd[:, :, 1:] -= v3
    xp = np.empty((2 * th + 2, 2 * tw + 2, nb * c), v.dtype)
    even, odd = xp[0::2], xp[1::2]  # (th + 1, W + 2, L)
    r0, r1, r2, r3 = rows
    np.copyto(even[:th], r0)
    even[th] = 0
    t = np.add(r1, r2)
    t -= r0
    even[1:] += t
    np.subtract(r1, r2, out=odd[:th])
    odd[:th] += r3
    odd[th] = 0
    odd[1:] -= r3
    np.copyto(out, xp.reshape(2 * th + 2, 2 * tw + 2, nb, c)[pt:pt + h, pl:pl + wd].transpose(2, 0, 1, 3),
              casting="unsafe")


def input_grad(dy: np.ndarray, u: np.ndarray, in_hw, pads, dtype) -> tuple[np.ndarray, bool]:
    """The (N, H, W, Ci) input gradient of a stride-1 3x3 convolution, padding ``pads``, of the filter whose
    transform is ``u`` (filter_transform), from dy (N, OH, OW, Co): the adjoint of conv, ``B [(A dy A^T)
    (G g G^T)] B^T`` added back over the overlapping tiles. ``A dy A^T`` is filter_grad's (whichever of the
    two runs first keeps it for the other). Also returns whether every value is finite."""
    n, oh, ow, co = dy.shape
    ci = u.shape[1]
    th, tw, bounds = _plan(n, oh, ow, ci, co, dtype)
    ut = np.ascontiguousarray((u * _SIGNS16.astype(dtype)).transpose(0, 2, 1))  # (16, Co, Ci)
    ds = _dy_transforms(dy, th, tw, bounds, ci, dtype)
    dx = np.empty((n,) + tuple(in_hw) + (ci,), dtype)
    finite = [True] * len(bounds)

    def chunk(k):
        a, b = bounds[k]
        with np.errstate(invalid="ignore", over="ignore"):
            _input_transform_adjoint(np.matmul(ds[k], ut), pads, th, tw, dx[a:b])
            finite[k] = bool(np.isfinite(np.add.reduce(dx[a:b], axis=None)))

    threads.parallel_for(len(bounds), chunk, 36.0 * th * tw * n * ci * co)  # (the direct product's work)
    return dx, all(finite)
