"""tf.io.decode_image / decode_png / decode_jpeg / decode_gif / decode_bmp: TF 2.21's pixels, channel
conversions, dtypes, shapes and errors (checksums pinned from TF 2.21). JPEG pixels are TF's with simplejpeg
installed; Pillow's accurate IDCT comes within a few levels."""

import os

import numpy as np
import pytest

import tapeflow as tf

PIL = pytest.importorskip("PIL.Image")
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "images")


def checksum(a):
    a = np.asarray(a, np.float64).ravel()
    return float(a @ (np.arange(a.size) % 7 + 1))


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    d = tmp_path_factory.mktemp("images")
    yy, xx = np.mgrid[0:9, 0:11]
    rgb = np.stack([(xx * 23 + yy * 5) % 256, (yy * 29 + xx) % 256, (xx * yy * 7) % 256], -1).astype(np.uint8)
    PIL.fromarray(rgb).save(d / "rgb.png")
    PIL.fromarray(np.dstack([rgb, (xx * 20).astype(np.uint8)])).save(d / "rgba.png")
    PIL.fromarray(rgb[..., 0].astype(np.uint16) * 251).save(d / "g16.png")
    PIL.fromarray(rgb).save(d / "rgb.bmp")
    p = PIL.fromarray((xx % 4 + 4 * (yy % 2)).astype(np.uint8), "P")
    p.putpalette([v for i in range(8) for v in (i * 30, 255 - i * 20, (i * 77) % 256)])
    p.save(d / "pal.gif")
    return d, rgb


PINNED = {
    "rgb.png 0": 134137.0,
    "rgb.png 1": 47165.0,
    "rgb.png 3": 134137.0,
    "rgb.png 4": 234493.0,
    "rgba.png 0": 173073.0,
    "rgba.png 1": 47165.0,
    "rgba.png 3": 134137.0,
    "rgba.png 4": 173073.0,
    "g16.png 0": 48997.0,
    "g16.png 1": 48997.0,
    "g16.png 3": 146870.0,
    "g16.png 4": 248053.0,
    "rgb.bmp 0": 134137.0,
    "rgb.bmp 3": 134137.0,
    "rgb.bmp 4": 234493.0,
    "pal.gif 0": 155329.0,
    "pal.gif 3": 155329.0,
}


@pytest.mark.parametrize("key", sorted(PINNED))
def test_decode_image_channels_are_tfs(images, key):
    d, _ = images
    name, ch = key.split()
    img = tf.image.decode_image(tf.io.read_file(str(d / name)), channels=int(ch), expand_animations=False)
    assert img.dtype == tf.uint8 and img.shape.rank == 3
    assert checksum(img) == PINNED[key]


def test_decode_png_pixels_dtypes_and_shapes(images):
    d, rgb = images
    raw = tf.io.read_file(str(d / "rgb.png"))
    np.testing.assert_array_equal(tf.io.decode_png(raw).numpy(), rgb)
    assert checksum(tf.image.decode_image(raw, dtype=tf.float32)) == 526.0274607967585  # (v * 257) / 65535
    assert checksum(tf.image.decode_image(raw, dtype=tf.uint16)) == 34473209.0
    f64 = tf.image.decode_image(raw, dtype=tf.float64)
    np.testing.assert_array_equal(f64.numpy(), rgb.astype(np.float64) * 257 * (1 / 65535))
    assert checksum(tf.io.decode_png(tf.io.read_file(str(d / "g16.png")), dtype=tf.uint16)) == 12590662.0
    gif = tf.io.decode_gif(tf.io.read_file(str(d / "pal.gif")))
    assert gif.shape == (1, 9, 11, 3) and tf.image.decode_image(tf.io.read_file(str(d / "pal.gif"))).shape.rank == 4

    seen = []

    @tf.function(input_signature=[tf.TensorSpec([], tf.string)])
    def shapes(b):
        seen.extend(
            [
                tf.image.decode_image(b, channels=3, expand_animations=False).shape,
                tf.image.decode_image(b, expand_animations=False).shape,
                tf.image.decode_image(b).shape,
                tf.io.decode_jpeg(b, channels=1).shape,
                tf.io.decode_gif(b).shape,
            ]
        )
        return b

    shapes.get_concrete_function()
    assert [s.as_list() if s.rank is not None else None for s in seen] == [
        [None, None, 3],
        [None, None, None],
        None,
        [None, None, 1],
        [None, None, None, 3],
    ]


def test_decode_errors_are_tfs(images):
    d, _ = images
    raw = tf.io.read_file(str(d / "rgb.png"))
    cases = [
        (
            lambda: tf.image.decode_image(tf.constant(b"hello")),
            r"^Unknown image file format. One of JPEG, JPEG XL, PNG, GIF, BMP, WebP required. \[Op:DecodeImage\]$",
        ),
        (lambda: tf.image.decode_image(tf.constant(b"")), r"^Input is empty. \[Op:DecodeImage\]$"),
        (lambda: tf.image.decode_image(raw, channels=2), r"`channels` must be 0, 1, 3 or 4 but got 2"),
        (
            lambda: tf.image.decode_image(tf.io.read_file(str(d / "rgb.bmp")), channels=1),
            r"`channels` must be 0, 3 or 4 for BMP, but got 1",
        ),
        (
            lambda: tf.image.decode_image(tf.io.read_file(str(d / "pal.gif")), channels=1),
            r"channels must be 0 or 3 for GIF, got 1",
        ),
        (
            lambda: tf.io.decode_bmp(raw),
            r"Trying to decode PNG format using DecodeBmp op. Use `decode_png` or "
            r"`decode_image` instead.",
        ),
        (
            lambda: tf.io.decode_jpeg(tf.io.read_file(str(d / "rgb.bmp"))),
            r"Trying to decode BMP format using a wrong op. Use `decode_bmp` or `decode_image` instead. Op used: "
            r"DecodeJpeg",
        ),
        (lambda: tf.image.decode_image(tf.stack([raw, raw])), r"`contents` must be scalar but got shape\[2\]"),
        (
            lambda: tf.image.decode_image(tf.constant(open(d / "rgb.png", "rb").read()[:60])),
            r"Invalid PNG data, size 60",
        ),
        (
            lambda: tf.image.decode_image(tf.io.read_file(os.path.join(FIXTURES, "small_rgb.jpg")), channels=4),
            r"JPEG does not support 4 channels",
        ),
    ]
    for fn, pattern in cases:
        with pytest.raises(tf.errors.InvalidArgumentError, match=pattern):
            fn()
    with pytest.raises(tf.errors.InvalidArgumentError, match="allowed values: uint8, uint16"):
        tf.io.decode_png(raw, dtype=tf.float32)


JPEG = {
    "small_rgb.jpg 0": 273567.0,
    "small_rgb.jpg 1": 89643.0,
    "small_rgb.jpg 3": 273567.0,
    "small_gray.jpg 0": 87758.0,
    "small_gray.jpg 1": 87758.0,
    "small_gray.jpg 3": 264436.0,
}


def test_decode_jpeg_is_tfs():
    try:
        import simplejpeg  # noqa: F401

        rtol = 0  # libjpeg-turbo's fast IDCT: TF's pixels
    except ImportError:
        rtol = 0.015  # Pillow's accurate IDCT: within a few levels
    for key, expected in JPEG.items():
        name, ch = key.split()
        img = tf.image.decode_image(tf.io.read_file(os.path.join(FIXTURES, name)), channels=int(ch))
        assert img.shape[:2] == (12, 16) and img.shape[2] == (int(ch) or (1 if "gray" in name else 3))
        assert checksum(img) == pytest.approx(expected, rel=rtol, abs=0)
    raw = tf.io.read_file(os.path.join(FIXTURES, "small_rgb.jpg"))
    assert checksum(tf.image.decode_image(raw, dtype=tf.float32)) == pytest.approx(1072.81182413036, rel=rtol or 1e-12)
    assert checksum(tf.image.decode_image(raw, dtype=tf.uint16)) == pytest.approx(70033152.0, rel=rtol, abs=0)
