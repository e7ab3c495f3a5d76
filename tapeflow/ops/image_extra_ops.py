"""``tf.image.resize_with_pad`` and ``tf.image.extract_patches``, built from other ops as functions.

``resize_with_pad`` follows TF's float32 arithmetic for the resized size and the padding. ``extract_patches``
(TF's ``ExtractImagePatches``) is a gather from the zero-padded image at indices worked out from the static
geometry (sizes, strides, rates, padding), so its gradient, the sum of each patch's gradient back into the
image, and higher orders come from ``Gather``'s.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tapeflow.framework.errors import InvalidArgumentError, UnimplementedError
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import array_ops as ao

__all__ = ["resize_with_pad", "extract_patches"]

_F = np.float32


def _size(v: Any) -> int:
    return int(v.numpy()) if isinstance(v, Tensor) else int(v)


def resize_with_pad(image: Any, target_height: Any, target_width: Any, method: str = "bilinear",
                    antialias: bool = False) -> Tensor:
    """``tf.image.resize_with_pad``: resizes ``image`` (``[h, w, c]`` or ``[batch, h, w, c]``) keeping its aspect
    ratio so that it fits ``target_height`` x ``target_width``, then zero-pads it (centred) to that size."""
    from tapeflow.ops.image_ops import pad_to_bounding_box
    from tapeflow.ops.image_transform_ops import resize

    image = image if isinstance(image, Tensor) else convert_to_tensor(image)
    rank = len(image.shape)
    if rank not in (3, 4):
        raise ValueError(f"'image' (shape {tuple(image.shape)}) must have either 3 or 4 dimensions.")
    th, tw = _size(target_height), _size(target_width)
    if tw <= 0:
        raise ValueError("target_width must be > 0.")
    if th <= 0:
        raise ValueError("target_height must be > 0.")
    height, width = image.shape[-3], image.shape[-2]
    if height is None or width is None:
        raise NotImplementedError("tf.image.resize_with_pad of images of unknown height or width is not "
                                  "implemented in tapeflow")
    fh, fw, fth, ftw = _F(height), _F(width), _F(th), _F(tw)
    ratio = max(fw / ftw, fh / fth)
    rh, rw = fh / ratio, fw / ratio
    ph = max(0, int(np.floor((fth - rh) / _F(2))))
    pw = max(0, int(np.floor((ftw - rw) / _F(2))))
    resized = resize(image, [int(np.floor(rh)), int(np.floor(rw))], method, antialias=antialias)
    return pad_to_bounding_box(resized, ph, pw, th, tw)


def _four(v: Any, what: str, op: str) -> list:
    vals = [int(x) for x in (v.numpy() if isinstance(v, Tensor) else np.asarray(v)).reshape(-1)]
    if len(vals) != 4:
        raise InvalidArgumentError(None, None, f"Sliding window {what} field must specify 4 dimensions [Op:{op}]")
    if vals[0] != 1 or vals[3] != 1:
        raise UnimplementedError(None, None, f"Only support {what} across space. [Op:{op}]")
    return vals[1:3]


def _window(size: int, k: int, stride: int, rate: int, padding: str) -> tuple[int, int]:
    """TF's output size and leading padding of one spatial dimension."""
    eff = k + (k - 1) * (rate - 1)
    if padding == "VALID":
        return max(0, math.ceil((size - eff + 1) / stride)), 0
    out = math.ceil(size / stride)
    return out, max((out - 1) * stride + eff - size, 0) // 2


def extract_patches(images: Any, sizes: Any, strides: Any, rates: Any, padding: str, name: Any = None) -> Tensor:
    """``tf.image.extract_patches``: the ``sizes[1] x sizes[2]`` patches of ``images`` ``[batch, h, w, depth]``
    every ``strides``, their pixels ``rates`` apart, with ``padding`` ``"VALID"`` or ``"SAME"`` (zeros); returns
    ``[batch, out_rows, out_cols, sizes[1] * sizes[2] * depth]``, each patch flattened row by row.

    >>> tf.image.extract_patches(tf.reshape(tf.range(16.), [1, 4, 4, 1]), [1, 2, 2, 1], [1, 2, 2, 1],
    ...                          [1, 1, 1, 1], "VALID").shape
    TensorShape([1, 2, 2, 4])
    """
    op = "ExtractImagePatches"
    images = images if isinstance(images, Tensor) else convert_to_tensor(images)
    if padding not in ("SAME", "VALID"):
        raise InvalidArgumentError(None, None, f"Value for attr 'padding' of \"{padding}\" is not in the list of "
                                   f"allowed values: \"SAME\", \"VALID\" [Op:{op}]")
    (kr, kc), (sr, sc), (rr, rc) = (_four(v, w, op) for v, w in ((sizes, "ksizes"), (strides, "strides"),
                                                                  (rates, "rates")))
    shape = images.shape
    if len(shape) != 4:
        dims = ",".join(str(d) for d in shape)
        raise InvalidArgumentError(None, None, f"input must be 4-dimensional[{dims}] [Op:{op}]")
    _, h, w, depth = shape
    if h is None or w is None:
        raise NotImplementedError("tf.image.extract_patches of images of unknown height or width is not "
                                  "implemented in tapeflow")
    out_r, pad_r = _window(h, kr, sr, rr, padding)
    out_c, pad_c = _window(w, kc, sc, rc, padding)
    # the input row/column of each output position and patch offset; outside the image -> the zero pixel h * w
    rows = (np.arange(out_r) * sr - pad_r)[:, None] + np.arange(kr)[None, :] * rr  # [out_r, kr]
    cols = (np.arange(out_c) * sc - pad_c)[:, None] + np.arange(kc)[None, :] * rc  # [out_c, kc]
    r4, c4 = rows[:, None, :, None], cols[None, :, None, :]
    inside = (r4 >= 0) & (r4 < h) & (c4 >= 0) & (c4 < w)
    index = np.where(inside, r4 * w + c4, h * w).astype(np.int32)  # [out_r, out_c, kr, kc]
    flat = ao.reshape(images, [-1, h * w, depth])
    flat = ao.concat([flat, ao.zeros_like(flat[:, :1])], axis=1)
    patches = ao.gather(flat, convert_to_tensor(index.reshape(out_r, out_c, kr * kc)), axis=1)
    return ao.reshape(patches, [-1, out_r, out_c, kr * kc * (depth if depth is not None else -1)])
