"""Cases of tf.io / tf.image encode_png and encode_jpeg, each ``fn(tf)``: PNG round trips (the bytes are
libpng's in TF, tapeflow's own here: the pixels are what both must agree on), JPEG's dtype and shape, and TF's
errors; recorded from real TF by tools/tf_api/record.py, replayed by tests/test_tf_cases.py."""

import numpy as np

IMG = (np.arange(4 * 5 * 3).reshape(4, 5, 3) * 7 % 256).astype(np.uint8)


def _png_roundtrip(image, **kw):
    return lambda tf: tf.io.decode_png(tf.io.encode_png(image, **kw), dtype=tf.as_dtype(image.dtype))


CASES = {
    "png_rgb": _png_roundtrip(IMG),
    "png_gray": _png_roundtrip(IMG[..., :1]),
    "png_rgba": _png_roundtrip(np.concatenate([IMG, IMG[..., :1]], -1)),
    "png_gray_16": _png_roundtrip(IMG[..., :1].astype(np.uint16) * 257),
    "png_compression_9": _png_roundtrip(IMG, compression=9),
    "png_batch_shape": lambda tf: tf.shape(tf.image.encode_png(np.stack([IMG, IMG]))),
    "png_bad_rank": lambda tf: tf.image.encode_png(IMG[0]),
    "png_bad_channels": lambda tf: tf.image.encode_png(np.zeros((2, 2, 5), np.uint8)),
    "png_bad_compression": lambda tf: tf.image.encode_png(IMG, compression=10),
    "png_float": lambda tf: tf.image.encode_png(tf.constant(IMG, tf.float32)),
    "jpeg_dtype_shape": lambda tf: tf.shape(tf.io.decode_jpeg(tf.io.encode_jpeg(IMG))),
    "jpeg_bad_channels": lambda tf: tf.image.encode_jpeg(np.zeros((2, 2, 4), np.uint8)),
    "jpeg_bad_rank": lambda tf: tf.image.encode_jpeg(np.zeros((2, 2), np.uint8)),
    "jpeg_bad_quality": lambda tf: tf.image.encode_jpeg(IMG, quality=101),
    "jpeg_bad_format": lambda tf: tf.image.encode_jpeg(IMG, format="grayscale"),
}
