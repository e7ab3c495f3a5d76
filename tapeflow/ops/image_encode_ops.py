"""Image encoding ops: ``EncodePng`` and ``EncodeJpeg`` (``tf.io.encode_png`` / ``tf.image.encode_png`` and
``encode_jpeg``), not differentiable.

PNG is written here (zlib at TF's ``compression`` level, -1 meaning zlib's default; rows unfiltered), so it needs
nothing installed; the bytes differ from libpng's (which picks a filter per row) but decode to the same pixels.
JPEG is encoded with Pillow (``pip install pillow``) at TF's settings (quality, progressive, optimize_size,
chroma_downsampling, density); it is lossy, so its pixels are close to, not equal to, TF's.
"""

from __future__ import annotations

import io
import struct
import zlib
from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops.registry import NotDifferentiable, defop

__all__ = ["encode_png", "encode_jpeg"]


def _err(op: str, message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"{message} [Op:{op}]")


def _dims(shape: Any) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


_COLOR_TYPE = {1: 0, 2: 4, 3: 2, 4: 6}


def _png(image: np.ndarray, level: int) -> bytes:
    h, w, c = image.shape
    depth = 16 if image.dtype == np.uint16 else 8
    pixels = image.astype(">u2" if depth == 16 else np.uint8).reshape(h, -1).view(np.uint8).reshape(h, -1)
    raw = np.concatenate([np.zeros((h, 1), np.uint8), pixels], axis=1).tobytes()  # filter 0 on every row
    header = struct.pack(">IIBBBBB", w, h, depth, _COLOR_TYPE[c], 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, level))
            + _chunk(b"IEND", b""))


def _encode_png_kernel(image, compression=-1):
    op = "EncodePng"
    if image.ndim < 3:
        raise _err(op, f"images must be at least rank 3{_dims(image.shape)}")
    if image.shape[-1] not in (1, 2, 3, 4):
        raise _err(op, f"image must have 1, 2, 3, or 4 channels, got {image.shape[-1]}")
    if not -1 <= compression <= 9:
        raise _err(op, f"compression should be in [-1,9], got {compression}")
    level = 6 if compression == -1 else compression
    flat = image.reshape((-1,) + image.shape[-3:])
    out = np.array([_png(x, level) for x in flat], dtype=object).reshape(image.shape[:-3])
    return out


_JPEG_FORMATS = {"": None, "grayscale": 1, "rgb": 3}


def _encode_jpeg_kernel(image, format="", quality=95, progressive=False, optimize_size=False,  # noqa: A002
                        chroma_downsampling=True, density_unit="in", x_density=300, y_density=300,
                        xmp_metadata=""):
    op = "EncodeJpeg"
    if image.ndim != 3:
        raise _err(op, f"image must be 3-dimensional{_dims(image.shape)}")
    if format not in _JPEG_FORMATS:
        raise _err(op, f"Value for attr 'format' of \"{format}\" is not in the list of allowed values: \"\", "
                   "\"grayscale\", \"rgb\"")
    want = _JPEG_FORMATS[format]
    if want is not None and image.shape[2] != want:
        raise _err(op, f"format {format} expects {want} channels, got {_dims(image.shape)}")
    if image.shape[2] not in (1, 3):
        raise _err(op, f"image must have 1 or 3 channels, got {_dims(image.shape)}")
    if not 0 <= quality <= 100:
        raise _err(op, f"quality must be in [0,100], got {quality}")
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("EncodeJpeg: encoding JPEG needs Pillow (`pip install pillow`)") from None
    pil = Image.fromarray(image[..., 0] if image.shape[2] == 1 else image)
    buf = io.BytesIO()
    dpi = (x_density, y_density) if density_unit == "in" else (x_density * 2.54, y_density * 2.54)
    options = {"quality": quality, "progressive": progressive, "optimize": optimize_size,
               "subsampling": 2 if chroma_downsampling else 0, "dpi": dpi}
    if xmp_metadata:
        options["xmp"] = xmp_metadata.encode() if isinstance(xmp_metadata, str) else xmp_metadata
    pil.save(buf, "JPEG", **options)
    return np.array(buf.getvalue(), dtype=object)


def _string_shape(specs, **attrs):
    s = specs[0][0]
    return [(None if s is None else tuple(s[:-3]), np.dtype(object))]


ENCODE_PNG = defop("EncodePng", _encode_png_kernel, shape=_string_shape)
ENCODE_JPEG = defop("EncodeJpeg", _encode_jpeg_kernel, shape=lambda specs, **attrs: [((), np.dtype(object))])
NotDifferentiable("EncodePng")
NotDifferentiable("EncodeJpeg")


def _image(image: Any, allowed: tuple, op: str) -> Tensor:
    if not isinstance(image, Tensor):
        arr = np.asarray(image)
        image = convert_to_tensor(arr if arr.dtype.kind in "iu" else arr, dtype=None)
    if image.dtype.name not in allowed:
        raise _err(op, f"Value for attr 'T' of {dtypes.type_string(image.dtype)} is not in the list of allowed "
                   f"values: {', '.join(allowed)}")
    return image


def encode_png(image: Any, compression: int = -1, name: Any = None) -> Tensor:
    """``tf.io.encode_png`` / ``tf.image.encode_png``: a uint8 or uint16 image ``[height, width, channels]``
    (1 grey, 2 grey + alpha, 3 RGB, 4 RGBA; leading batch dimensions give one string each) as PNG bytes.

    >>> png = tf.io.encode_png(tf.zeros([2, 3, 3], tf.uint8))
    >>> tf.io.decode_png(png).shape
    TensorShape([2, 3, 3])
    """
    return execute(ENCODE_PNG, (_image(image, ("uint8", "uint16"), "EncodePng"),), {"compression": int(compression)})


def encode_jpeg(image: Any, format: str = "", quality: int = 95, progressive: bool = False,  # noqa: A002
                optimize_size: bool = False, chroma_downsampling: bool = True, density_unit: str = "in",
                x_density: int = 300, y_density: int = 300, xmp_metadata: str = "", name: Any = None) -> Tensor:
    """``tf.io.encode_jpeg`` / ``tf.image.encode_jpeg``: a uint8 image ``[height, width, 1 or 3]`` as JPEG bytes
    (with Pillow), at TF's default quality 95 and 4:2:0 chroma subsampling."""
    attrs = {"format": format, "quality": int(quality), "progressive": bool(progressive),
             "optimize_size": bool(optimize_size), "chroma_downsampling": bool(chroma_downsampling),
             "density_unit": density_unit, "x_density": int(x_density), "y_density": int(y_density),
             "xmp_metadata": xmp_metadata}
    return execute(ENCODE_JPEG, (_image(image, ("uint8",), "EncodeJpeg"),), attrs)
