"""Image decoding ops: ``DecodeImage``, ``DecodeJpeg``, ``DecodePng``, ``DecodeGif``, ``DecodeBmp``
(``tf.io.decode_image`` and friends), not differentiable.

One kernel serves them all, as TF's ``DecodeImageV2Op`` does: the format comes from the file's first
bytes, the channel conversions are TF's (PNG to grayscale with libpng's ``(9797 R + 19234 G + 3737 B) >> 15``,
alpha stripped or set to 255, grey replicated; rounded for 16-bit samples), 16-bit PNGs keep their depth for
``uint16`` and give their high byte for ``uint8``, and ``float32`` is the ``uint16`` image times ``1 / 65535`` in
float32, as TF. Files are read with Pillow, except 16-bit PNGs (Pillow reads 16-bit colour as 8 bits), which are
decoded here: zlib, PNG's five row filters and Adam7 interlacing.
JPEG decoding is TF's only with ``simplejpeg`` installed (libjpeg-turbo's fast
integer IDCT, TF's default ``dct_method``); Pillow's libjpeg decodes with the accurate IDCT, whose pixels can
differ from TF's by a few levels.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops.registry import NotDifferentiable, defop

__all__ = ["decode_and_crop_jpeg", "decode_bmp", "decode_gif", "decode_image", "decode_jpeg", "decode_png",
           "extract_jpeg_shape"]

_FORMATS = "JPEG, JPEG XL, PNG, GIF, BMP, WebP"
_WRONG_OP_HINT = {
    "bmp": "decode_bmp",
    "png": "decode_png",
    "gif": "decode_gif",
    "jpeg": "decode_jpeg",
    "webp": "decode_webp",
}


def _error(op: str, message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"{message} [Op:{op}]")


def _format(data: bytes) -> str | None:
    if data[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "png"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if data[:2] == b"BM":
        return "bmp"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def _pil(op: str, data: bytes, fmt: str, draft: str | None = None) -> Any:
    try:
        from PIL import Image
    except ImportError:
        raise ImportError(f"{op}: decoding images needs Pillow (`pip install pillow`)") from None
    try:
        img = Image.open(io.BytesIO(data))
        if draft:
            img.draft(draft, img.size)
        img.load()
    except Exception as e:  # Pillow's own error types vary by format
        raise _error(op, f"Invalid {fmt.upper()} data, size {len(data)}") from e
    return img


def _jpeg(op: str, data: bytes, channels: int) -> np.ndarray:
    if channels == 4:
        raise _error(op, "JPEG does not support 4 channels")
    try:
        import simplejpeg
    except ImportError:
        simplejpeg = None
    if simplejpeg is not None:
        try:
            native = simplejpeg.decode_jpeg_header(data)[2]
            gray = channels == 1 or (channels == 0 and native == "Gray")
            a = simplejpeg.decode_jpeg(data, colorspace="GRAY" if gray else "RGB", fastdct=True, fastupsample=False)
        except ValueError as e:
            raise _error(op, f"Invalid JPEG data or crop window, data size {len(data)}") from e
    else:
        img = _pil(op, data, "jpeg", draft="L" if channels == 1 else None)  # libjpeg's own grayscale, as TF's
        if channels == 1 and img.mode != "L":
            img = img.convert("L")
        elif channels == 3 or (channels == 0 and img.mode != "L"):
            img = img.convert("RGB")
        a = np.asarray(img)
    return a[..., None] if a.ndim == 2 else a


# -- 16-bit PNGs: Pillow reads 16-bit colour PNGs as 8 bits, so these are decoded here (zlib + PNG's filters)
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))
_PNG_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}


def _png_chunks(data: bytes) -> tuple:
    import struct

    pos, header, idat = 8, None, []
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body[:13])
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    return header, b"".join(idat)


def _unfilter(raw: np.ndarray, height: int, stride: int, bpp: int) -> np.ndarray:
    """PNG's five scanline filters undone (None, Sub, Up, Average, Paeth), row by row."""
    rows = raw[: height * (stride + 1)].reshape(height, stride + 1)
    out = np.zeros((height, stride), np.uint8)
    prev = np.zeros(stride, np.int64)
    for y in range(height):
        kind, line = int(rows[y, 0]), rows[y, 1:].astype(np.int64)
        if kind in (0, 2):
            cur = (line + (prev if kind == 2 else 0)) % 256
        elif kind == 1:
            cur = (np.cumsum(line.reshape(-1, bpp), axis=0) % 256).reshape(-1)
        else:
            cur = line.copy()
            for x in range(0, stride, bpp):
                left = cur[x - bpp:x] if x else np.zeros(bpp, np.int64)
                up = prev[x:x + bpp]
                if kind == 3:
                    cur[x:x + bpp] = (cur[x:x + bpp] + (left + up) // 2) % 256
                else:
                    ul = prev[x - bpp:x] if x else np.zeros(bpp, np.int64)
                    p = left + up - ul
                    pa, pb, pc = np.abs(p - left), np.abs(p - up), np.abs(p - ul)
                    pred = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, up, ul))
                    cur[x:x + bpp] = (cur[x:x + bpp] + pred) % 256
        out[y] = cur
        prev = cur
    return out


def _png16(op: str, data: bytes) -> np.ndarray | None:
    """A 16-bit PNG's ``[h, w, c]`` uint16 pixels (None for other PNGs, which Pillow reads exactly)."""
    import zlib

    header, idat = _png_chunks(data)
    if header is None:
        return None
    width, height, depth, color, _, _, interlace = header
    if depth != 16 or color not in _PNG_CHANNELS:
        return None
    c = _PNG_CHANNELS[color]
    try:
        raw = np.frombuffer(zlib.decompress(idat), np.uint8)
    except zlib.error as e:
        raise _error(op, f"Invalid PNG data, size {len(data)}") from e
    bpp = 2 * c
    out = np.zeros((height, width, c), np.uint16)
    passes = _ADAM7 if interlace else ((0, 0, 1, 1),)
    pos = 0
    for x0, y0, dx, dy in passes:
        w, h = (width - x0 + dx - 1) // dx, (height - y0 + dy - 1) // dy
        if w <= 0 or h <= 0:
            continue
        n = h * (w * bpp + 1)
        if raw.size < pos + n:
            raise _error(op, f"Invalid PNG data, size {len(data)}")
        rows = _unfilter(raw[pos:pos + n], h, w * bpp, bpp)
        pos += n
        pairs = rows.reshape(h, w, c, 2).astype(np.uint16)
        out[y0::dy, x0::dx] = (pairs[..., 0] << 8) | pairs[..., 1]  # big-endian samples
    return out


def _native(op: str, data: bytes, fmt: str) -> np.ndarray:
    """The image's own channels (1-4) and depth (uint8, or uint16 for 16-bit PNGs)."""
    if fmt == "png":
        deep = _png16(op, data)
        if deep is not None:
            return deep
    img = _pil(op, data, fmt)
    mode = img.mode
    if mode in ("I;16", "I;16B", "I;16L", "I"):
        a = np.asarray(img).astype(np.uint16)
    elif mode in ("L", "LA", "RGB", "RGBA"):
        a = np.asarray(img)
    elif mode == "P" or mode == "PA":
        a = np.asarray(img.convert("RGBA" if "transparency" in img.info or mode == "PA" else "RGB"))
    elif mode == "1":
        a = np.asarray(img.convert("L"))
    else:
        a = np.asarray(img.convert("RGBA" if "A" in mode else "RGB"))
    return a[..., None] if a.ndim == 2 else a


def _convert_channels(a: np.ndarray, channels: int) -> np.ndarray:
    c = a.shape[-1]
    if channels in (0, c):
        return a
    color = np.repeat(a[..., :1], 3, -1) if c <= 2 else a[..., :3]
    if channels == 1:
        if c <= 2:
            return a[..., :1]
        rgb = color.astype(np.int64)
        # libpng's rgb_to_gray: truncated for 8-bit samples, rounded for 16-bit ones
        half = 16384 if a.dtype == np.uint16 else 0
        gray = (9797 * rgb[..., 0] + 19234 * rgb[..., 1] + 3737 * rgb[..., 2] + half) >> 15
        return gray.astype(a.dtype)[..., None]
    if channels == 3:
        return color
    alpha = a[..., c - 1 :] if c in (2, 4) else np.full(a.shape[:-1] + (1,), np.iinfo(a.dtype).max, a.dtype)
    return np.concatenate([color, alpha], -1)


def _frames(op: str, data: bytes) -> np.ndarray:
    img = _pil(op, data, "gif")
    frames = []
    for i in range(getattr(img, "n_frames", 1)):
        img.seek(i)
        frames.append(np.asarray(img.convert("RGB")))
    return np.stack(frames)


def _to_dtype(a: np.ndarray, dtype: Any, png: bool) -> np.ndarray:
    """TF's output types: libpng expands 8 bits to 16 (``v * 257``) and a float32 PNG is that over 65535;
    the other formats decode to 8 bits, then ``v << 8`` for uint16 and ``v * (1 / 255)`` for float32."""
    if dtype == dtypes.uint8:
        return a if a.dtype == np.uint8 else (a >> 8).astype(np.uint8)
    if not png:
        if dtype == dtypes.uint16:
            return a.astype(np.uint16) << np.uint16(8)
        return a.astype(np.float32) * np.float32(1 / 255)
    wide = a if a.dtype == np.uint16 else a.astype(np.uint16) * np.uint16(257)
    if dtype == dtypes.uint16:
        return wide
    return wide.astype(np.float32) * np.float32(1 / 65535)


def _decode_kernel(contents, *, op, channels, dtype, expand_animations):
    if np.ndim(contents) != 0:
        dims = ",".join(map(str, np.shape(contents)))
        raise _error(op, f"`contents` must be scalar but got shape[{dims}]")
    v = np.asarray(contents)[()]
    data = v.encode("utf-8") if isinstance(v, str) else bytes(v)
    if channels not in (0, 1, 3, 4):
        raise _error(op, f"`channels` must be 0, 1, 3 or 4 but got {channels}")
    if not data:
        raise _error(op, "Input is empty.")
    fmt = _format(data)
    if fmt is None:
        raise _error(op, f"Unknown image file format. One of {_FORMATS} required.")
    wrong = {
        "DecodeJpeg": ("bmp", "webp"),
        "DecodePng": ("bmp", "webp"),
        "DecodeGif": ("bmp", "webp"),
        "DecodeBmp": ("jpeg", "png", "gif", "webp"),
    }.get(op, ())
    if fmt in wrong:
        if op == "DecodeBmp":
            raise _error(
                op,
                f"Trying to decode {fmt.upper()} format using DecodeBmp op. Use "
                f"`{_WRONG_OP_HINT[fmt]}` or `decode_image` instead.",
            )
        raise _error(
            op,
            f"Trying to decode {fmt.upper() if fmt != 'webp' else 'WebP'} format using a wrong op. Use "
            f"`{_WRONG_OP_HINT[fmt]}` or `decode_image` instead. Op used: {op}",
        )
    if fmt == "gif":
        if channels not in (0, 3):
            raise _error(op, f"channels must be 0 or 3 for GIF, got {channels}")
        frames = _frames(op, data)
        out = (
            frames if (expand_animations or op == "DecodeGif") and op not in ("DecodeJpeg", "DecodePng") else frames[0]
        )
        return _to_dtype(out, dtype, False)
    if fmt == "bmp" and channels == 1:
        raise _error(op, f"`channels` must be 0, 3 or 4 for BMP, but got {channels}")
    a = _jpeg(op, data, channels) if fmt == "jpeg" else _convert_channels(_native(op, data, fmt), channels)
    if op == "DecodeGif":
        a = a[None]
    return _to_dtype(a, dtype, fmt == "png")


def _decode_shape(specs, *, op, channels, dtype, expand_animations):
    np_dtype = np.dtype(dtype._np)
    if op == "DecodeGif":
        return [((None, None, None, 3), np_dtype)]
    if op == "DecodeImage" and expand_animations:
        return [(None, np_dtype)]
    return [((None, None, channels or None), np_dtype)]


_OPS = {}
for _name in ("DecodeImage", "DecodeJpeg", "DecodePng", "DecodeGif", "DecodeBmp"):
    _OPS[_name] = defop(_name, _decode_kernel, shape=_decode_shape)
    NotDifferentiable(_name)


def _decode(op: str, contents: Any, channels: int, dtype: Any, expand_animations: bool) -> Tensor:
    t = contents if isinstance(contents, Tensor) else convert_to_tensor(contents, dtype=dtypes.string)
    if t.dtype != dtypes.string:
        raise InvalidArgumentError(
            None,
            None,
            f"cannot compute {op} as input #0(zero-based) was expected to be a "
            f"string tensor but is a {t.dtype.name} tensor [Op:{op}]",
        )
    attrs = {"op": op, "channels": int(channels or 0), "dtype": dtype, "expand_animations": bool(expand_animations)}
    return execute(_OPS[op], (t,), attrs)


def decode_image(
    contents: Any,
    channels: int | None = None,
    dtype: Any = dtypes.uint8,
    name: Any = None,
    expand_animations: bool = True,
) -> Tensor:
    """``tf.io.decode_image``: a JPEG, PNG, GIF, BMP or WebP file's bytes as a ``[h, w, c]`` image (GIFs
    ``[frames, h, w, 3]`` unless ``expand_animations=False``), ``channels`` 0 (the file's own), 1, 3 or 4;
    ``dtype`` uint8, uint16, float32 (in [0, 1]) or any other through ``convert_image_dtype`` as TF."""
    from tapeflow.ops.image_ops import convert_image_dtype

    dtype = dtypes.as_dtype(dtype)
    decode_dtype = dtype if dtype in (dtypes.float32, dtypes.uint8, dtypes.uint16) else dtypes.uint16
    image = _decode("DecodeImage", contents, channels, decode_dtype, expand_animations)
    return convert_image_dtype(image, dtype) if decode_dtype != dtype else image


def decode_jpeg(
    contents: Any,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction: float = 1,
    dct_method: str = "",
    name: Any = None,
) -> Tensor:
    """``tf.io.decode_jpeg`` (also decodes PNGs and a GIF's first frame, as TF): a uint8 ``[h, w, c]`` image."""
    if (
        ratio != 1
        or not fancy_upscaling
        or try_recover_truncated
        or acceptable_fraction != 1
        or dct_method not in ("", "INTEGER_FAST")
    ):
        raise NotImplementedError(
            "tf.io.decode_jpeg: ratio, fancy_upscaling=False, try_recover_truncated, "
            "acceptable_fraction and dct_method='INTEGER_ACCURATE' are not implemented in "
            "tapeflow"
        )
    return _decode("DecodeJpeg", contents, channels, dtypes.uint8, False)


def decode_png(contents: Any, channels: int = 0, dtype: Any = dtypes.uint8, name: Any = None) -> Tensor:
    """``tf.io.decode_png``: a uint8 or uint16 ``[h, w, c]`` image (also JPEGs and a GIF's first frame)."""
    dtype = dtypes.as_dtype(dtype)
    if dtype not in (dtypes.uint8, dtypes.uint16):
        raise InvalidArgumentError(
            None,
            None,
            f"Value for attr 'dtype' of {dtype.name} is not in the list of "
            "allowed values: uint8, uint16 [Op:DecodePng]",
        )
    return _decode("DecodePng", contents, channels, dtype, False)


def decode_gif(contents: Any, name: Any = None) -> Tensor:
    """``tf.io.decode_gif``: every frame, a uint8 ``[frames, h, w, 3]`` tensor."""
    return _decode("DecodeGif", contents, 0, dtypes.uint8, True)


def decode_bmp(contents: Any, channels: int = 0, name: Any = None) -> Tensor:
    """``tf.io.decode_bmp``: a uint8 ``[h, w, c]`` image (``channels`` 0, 3 or 4)."""
    return _decode("DecodeBmp", contents, channels, dtypes.uint8, False)


def _crop_kernel(contents, crop_window, *, channels):
    op = "DecodeAndCropJpeg"
    w = np.asarray(crop_window).reshape(-1)
    if w.shape[0] != 4:
        raise _error(op, f"crop_window must be shape [4], got shape [{w.shape[0]}]")
    image = _decode_kernel(contents, op="DecodeJpeg", channels=channels, dtype=dtypes.uint8, expand_animations=False)
    y, x, h, wd = (int(v) for v in w)
    if y < 0 or x < 0 or h <= 0 or wd <= 0 or y + h > image.shape[0] or x + wd > image.shape[1]:
        raise _error(op, "jpeg::Uncompress failed. Invalid JPEG data or crop window.")
    return np.ascontiguousarray(image[y:y + h, x:x + wd])


DECODE_AND_CROP = defop("DecodeAndCropJpeg", _crop_kernel, shape=lambda specs, channels: [
    ((None, None, channels or None), np.dtype(np.uint8))])
NotDifferentiable("DecodeAndCropJpeg")


def decode_and_crop_jpeg(contents: Any, crop_window: Any, channels: int = 0, ratio: int = 1,
                         fancy_upscaling: bool = True, try_recover_truncated: bool = False,
                         acceptable_fraction: float = 1, dct_method: str = "", name: Any = None) -> Tensor:
    """``tf.io.decode_and_crop_jpeg``: the ``crop_window`` (``[y, x, height, width]``) of a JPEG, as
    ``decode_jpeg(...)[y:y + height, x:x + width]`` (TF decodes only the window; the pixels are the same)."""
    if ratio != 1 or not fancy_upscaling or try_recover_truncated or acceptable_fraction != 1 or dct_method not in (
            "", "INTEGER_FAST"):
        raise NotImplementedError("tf.io.decode_and_crop_jpeg: ratio, fancy_upscaling=False, try_recover_truncated, "
                                  "acceptable_fraction and dct_method='INTEGER_ACCURATE' are not implemented in "
                                  "tapeflow")
    t = contents if isinstance(contents, Tensor) else convert_to_tensor(contents, dtype=dtypes.string)
    win = crop_window if isinstance(crop_window, Tensor) else convert_to_tensor(crop_window, dtype=dtypes.int32)
    return execute(DECODE_AND_CROP, (t, win), {"channels": int(channels or 0)})


def _jpeg_shape_kernel(contents, *, output_type):
    v = np.asarray(contents)[()]
    data = v.encode("utf-8") if isinstance(v, str) else bytes(v)
    if _format(data) != "jpeg":
        raise _error("ExtractJpegShape", f"Invalid JPEG data, size {len(data)}")
    img = _pil("ExtractJpegShape", data, "jpeg")
    width, height = img.size
    return np.asarray([height, width, len(img.getbands())], dtype=output_type)


EXTRACT_JPEG_SHAPE = defop("ExtractJpegShape", _jpeg_shape_kernel, shape=lambda specs, output_type: [
    ((3,), np.dtype(output_type))])
NotDifferentiable("ExtractJpegShape")


def extract_jpeg_shape(contents: Any, output_type: Any = dtypes.int32, name: Any = None) -> Tensor:
    """``tf.io.extract_jpeg_shape``: ``[height, width, channels]`` of a JPEG, from its header."""
    t = contents if isinstance(contents, Tensor) else convert_to_tensor(contents, dtype=dtypes.string)
    return execute(EXTRACT_JPEG_SHAPE, (t,), {"output_type": np.dtype(dtypes.as_dtype(output_type)._np)})
