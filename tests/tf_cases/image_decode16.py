"""Cases of tf.io.decode_png / decode_image on 16-bit PNGs (colour, grey, alpha; libpng's own files and files
written here with each of PNG's five row filters, interlaced too) at each output dtype, each ``fn(tf)``;
recorded from real TF by tools/tf_api/record.py, replayed by tests/test_tf_cases.py."""

import base64
import struct
import zlib

import numpy as np

# written by TF 2.21's tf.io.encode_png (libpng) from seeded uint16 images
RGB16 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAYAAAAFEAIAAAC5qtbyAAAAqUlEQVQImWP8////////3QT9z3HXnTPalqeUuPfDIta9Zzbs/srDf8PqMtuE"
    "ySuZGIgAzFPFzlr9We7wWKr86LtDyq+mv5zgnKbCZuC1RpBX5ivj08xrPhHPGc8J/5ZI1HiY80PRNUZj/l5Wvq09RQZn8mIMF99Yue3OJ68V"
    "GeW/mVnt/gd3fAgLik5wuLl67i/l27yyLEvuvGZQ/SCz5c22xFUtj2bsBgAPSksRmRxC2AAAAABJRU5ErkJggg==")
RGBA16 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAQAAAADEAYAAADkZHKFAAAARUlEQVQImWP+DwXmoQpcve+mMbMqtT1JSN9vp7j3svH0uBolJgZC4L+K0cVP"
    "/uLW8zumTHim6FP+7N0a9scfjYUZGCEQANwxHgfK3Pv7AAAAAElFTkSuQmCC")
GRAYA16 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAMAAAAEEAQAAACxtJHPAAAAM0lEQVQImWP+////f2YRpb4m77khTAzIgOdgzu1PDPOORTb828cwq//TWxa9"
    "0qMMjAyMANzzEfxOVE9LAAAAAElFTkSuQmCC")

_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


def _chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def _filter_rows(img, first_filter):
    """Big-endian 16-bit rows, row y filtered with PNG filter (first_filter + y) % 5."""
    h, w, c = img.shape
    bpp = 2 * c
    data = img.astype(">u2").view(np.uint8).reshape(h, w * bpp).astype(np.int64)
    out, prev = b"", np.zeros(w * bpp, np.int64)
    for y in range(h):
        kind, cur = (first_filter + y) % 5, data[y]
        left = np.concatenate([np.zeros(bpp, np.int64), cur[:-bpp]])
        ul = np.concatenate([np.zeros(bpp, np.int64), prev[:-bpp]])
        if kind == 0:
            f = cur
        elif kind == 1:
            f = cur - left
        elif kind == 2:
            f = cur - prev
        elif kind == 3:
            f = cur - (left + prev) // 2
        else:
            p = left + prev - ul
            pa, pb, pc = np.abs(p - left), np.abs(p - prev), np.abs(p - ul)
            f = cur - np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prev, ul))
        out += bytes([kind]) + (f % 256).astype(np.uint8).tobytes()
        prev = cur
    return out


def _png(img, interlace=False):
    h, w, c = img.shape
    color = {1: 0, 2: 4, 3: 2, 4: 6}[c]
    if interlace:
        raw = b"".join(_filter_rows(img[y0::dy, x0::dx], i) for i, (x0, y0, dx, dy) in enumerate(_ADAM7)
                       if img[y0::dy, x0::dx].size)
    else:
        raw = _filter_rows(img, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, color, 0, 0, int(interlace)))
            + _chunk(b"IDAT", zlib.compress(raw)) + _chunk(b"IEND", b""))


_RNG = np.random.default_rng(12)
_IMG = _RNG.integers(0, 65536, size=(11, 9, 3)).astype(np.uint16)
_IMG[3:6] = np.cumsum(_IMG[3:6] // 64, axis=1, dtype=np.uint16)  # smooth rows
FILTERED = _png(_IMG)
FILTERED_RGBA = _png(np.concatenate([_IMG, _IMG[..., :1] // 3], -1))
FILTERED_GRAY = _png(_IMG[..., :1])
INTERLACED = _png(_IMG, interlace=True)


def _decode(data, dtype="uint16", channels=0, fn="decode_png"):
    def case(tf):
        return getattr(tf.io, fn)(data, channels=channels, dtype=getattr(tf, dtype))
    return case


CASES = {
    "rgb16_uint16": _decode(RGB16),
    "rgb16_uint8": _decode(RGB16, "uint8"),
    "rgb16_gray": _decode(RGB16, channels=1),
    "rgb16_rgba": _decode(RGB16, channels=4),
    "rgba16_uint16": _decode(RGBA16),
    "rgba16_rgb": _decode(RGBA16, channels=3),
    "graya16_uint16": _decode(GRAYA16),
    "graya16_rgba": _decode(GRAYA16, channels=4),
    "filtered_uint16": _decode(FILTERED),
    "filtered_uint8": _decode(FILTERED, "uint8"),
    "filtered_rgba": _decode(FILTERED_RGBA),
    "filtered_gray": _decode(FILTERED_GRAY),
    "interlaced_uint16": _decode(INTERLACED),
    "decode_image_uint16": _decode(FILTERED, fn="decode_image"),
    "decode_image_float32": _decode(RGB16, "float32", fn="decode_image"),
    "decode_image_float16": _decode(RGB16, "float16", fn="decode_image"),
    "decode_image_uint8": _decode(RGBA16, "uint8", fn="decode_image"),
}

_IMG8 = (np.arange(4 * 5 * 3).reshape(4, 5, 3) * 13 % 256).astype(np.uint8)


def _gif_and_bmp(fmt):
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(_IMG8).save(buf, format=fmt)
    return buf.getvalue()


def _decode8(kind, dtype, fn="decode_image", empty=False):
    def case(tf):
        data = tf.io.encode_png(_IMG8) if kind == "png" else (
            tf.io.encode_jpeg(_IMG8) if kind == "jpeg" else _gif_and_bmp(kind))
        out = getattr(tf.io, fn)(data, dtype=getattr(tf, dtype)) if fn != "decode_jpeg" else tf.io.decode_jpeg(data)
        return out[:0] if empty else out  # a JPEG's pixels depend on the decoder: its dtype and shape only
    return case


CASES.update({
    f"{kind}_{fn}_{dtype}": _decode8(kind, dtype, fn, kind == "jpeg")
    for kind, fn, dtype in [("png", "decode_image", "uint16"), ("png", "decode_image", "float32"),
                            ("png", "decode_image", "float64"), ("png", "decode_image", "int32"),
                            ("png", "decode_png", "uint16"), ("png", "decode_image", "int8"),
                            ("bmp", "decode_image", "uint16"), ("bmp", "decode_image", "float32"),
                            ("gif", "decode_image", "uint16"), ("gif", "decode_image", "float16"),
                            ("jpeg", "decode_image", "uint16"), ("jpeg", "decode_image", "float32"),
                            ("jpeg", "decode_jpeg", "uint8")]})
