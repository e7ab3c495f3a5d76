"""SciPy's ``scipy.ndimage.affine_transform`` for spline orders 0 and 1, in NumPy.

Keras's ``ImageDataGenerator`` moves every pixel through ``scipy.ndimage.affine_transform`` (order 1 by
default). tapeflow does not require SciPy, so this is the same computation written with NumPy arrays,
step for step as SciPy's C code (``NI_GeometricTransform`` in ``ni_interpolation.c``) does it: the
coordinate of an output pixel is ``shift + o0 * m[0, 0] + o1 * m[0, 1]`` in float64, a coordinate outside
the input is mapped by the boundary mode (SciPy's ``map_coordinate``), the neighbours at an edge by the
mode's spline boundary, the linear weights are ``1 - x`` and ``1 - (1 - x)``, and the products are summed
in SciPy's order, so the results are bit-for-bit SciPy's.
"""

from __future__ import annotations

import numpy as np

MODES = ("constant", "nearest", "reflect", "grid-mirror", "mirror", "wrap", "grid-wrap", "grid-constant")


def _map_coordinate(c: np.ndarray, n: int, mode: str) -> np.ndarray:
    """SciPy's ``map_coordinate``: float64 coordinates outside ``[0, n - 1]`` folded back by ``mode``
    (-1 marks a point that takes ``cval`` in mode ``constant``)."""
    c = np.array(c, dtype=np.float64)
    lo, hi = c < 0, c > n - 1
    if not (lo.any() or hi.any()) or mode == "grid-constant":
        return c
    if mode == "nearest":
        c[lo], c[hi] = 0.0, n - 1.0
        return c
    if mode == "constant":
        c[lo | hi] = -1.0
        return c
    if n <= 1:
        c[lo | hi] = 0.0
        return c
    v, w = c[lo], c[hi]
    if mode == "mirror":
        s2 = 2 * n - 2
        v = s2 * np.trunc(-v / s2) + v
        v = np.where(v <= 1 - n, v + s2, -v)
        w = w - s2 * np.trunc(w / s2)
        w = np.where(w >= n, s2 - w, w)
    elif mode in ("reflect", "grid-mirror"):
        s2 = 2 * n
        v = np.where(v < -s2, s2 * np.trunc(-v / s2) + v, v)
        # SciPy's guard: -v - 1 must not become exactly -1 (the constant marker) for a tiny negative v
        v = np.where(v < -n, v + s2, np.where(v > -1e-15, 1e-15, -v) - 1)
        w = w - s2 * np.trunc(w / s2)
        w = np.where(w >= n, s2 - w - 1, w)
    elif mode == "wrap":  # SciPy's "wrap" has period n - 1 (the first and last samples coincide)
        s = n - 1
        v = v + s * (np.trunc(-v / s) + 1)
        w = w - s * np.trunc(w / s)
    elif mode == "grid-wrap":
        v = v + n * (np.trunc((-1 - v) / n) + 1)
        w = w - n * np.trunc(w / n)
    c[lo], c[hi] = v, w
    return c


def _cast(t: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """SciPy's store of a float64 result into the output type (integers rounded half away from zero, clipped)."""
    if dtype.kind in "fc" or dtype.kind == "b":
        return t.astype(dtype)
    info = np.iinfo(dtype)
    if dtype.kind == "u":
        t = np.where(t > 0, t + 0.5, 0.0)
    else:
        t = np.where(t > 0, t + 0.5, t - 0.5)
    return np.trunc(np.clip(t, info.min, info.max)).astype(dtype)


def affine_transform(
    images: np.ndarray,
    matrix: np.ndarray,
    offset: np.ndarray,
    order: int = 1,
    mode: str = "constant",
    cval: float = 0.0,
) -> np.ndarray:
    """``scipy.ndimage.affine_transform(img, matrix, offset, order=order, mode=mode, cval=cval)`` applied to
    each 2-D image ``images[k]`` of a ``(K, H, W)`` stack (all take the same transform): output pixel ``o``
    samples the input at ``matrix @ o + offset``."""
    images = np.asarray(images)
    if order not in (0, 1):
        raise NotImplementedError(
            f"affine_transform: spline order {order} (SciPy's prefiltered splines) is not "
            "implemented in tapeflow; orders 0 and 1 are"
        )
    if mode not in MODES:
        raise RuntimeError("boundary mode not supported")  # SciPy's message and type
    if images.ndim != 3:
        raise ValueError(f"affine_transform: expected a (K, H, W) stack of images, got shape {images.shape}")
    m = np.asarray(matrix, dtype=np.float64)
    off = np.asarray(offset, dtype=np.float64)
    k, h, w = images.shape
    rows, cols = np.meshgrid(np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64), indexing="ij")
    spline_mode = "mirror" if mode in ("constant", "wrap") else mode
    valid = np.ones((h, w), bool)
    index, weights, outside = [], [], []
    for axis, n in enumerate((h, w)):
        cc = (off[axis] + rows * m[axis, 0]) + cols * m[axis, 1]
        if mode not in ("grid-constant", "nearest"):
            cc = _map_coordinate(cc, n, mode)
        if mode not in ("grid-constant", "nearest"):
            valid &= cc > -1.0
        cc = np.where(valid, cc, 0.0)
        start = np.floor(cc) if order == 1 else np.floor(cc + 0.5)
        idx = [start + j for j in range(order + 1)]
        if mode == "grid-constant":
            outside.append([(i < 0) | (i >= n) for i in idx])
            idx = [np.clip(i, 0, n - 1) for i in idx]
        else:
            idx = [np.trunc(_map_coordinate(i, n, spline_mode)) for i in idx]
        index.append([i.astype(np.intp) for i in idx])
        if order == 1:
            w0 = 1.0 - (cc - start)
            weights.append([w0, 1.0 - w0])  # SciPy makes the weights sum to one this way
    t = np.zeros((k, h, w), np.float64)
    for a in range(order + 1):
        for b in range(order + 1):
            coeff = images[:, index[0][a], index[1][b]].astype(np.float64)
            if outside:
                coeff = np.where(outside[0][a] | outside[1][b], float(cval), coeff)
            if order == 1:
                coeff = coeff * weights[0][a] * weights[1][b]
            t = t + coeff
    t = np.where(valid, t, float(cval))
    return _cast(t, images.dtype)
