"""Cases of tf.image's resize_with_pad, draw_bounding_boxes and extract_patches, each ``fn(tf)``; recorded from
real TF by tools/tf_api/record.py, replayed by tests/test_tf_cases.py."""

import numpy as np

IMG = (np.arange(2 * 5 * 7 * 3, dtype=np.float32).reshape(2, 5, 7, 3) % 11) / np.float32(10)
BOXES = np.array([[[0.1, 0.1, 0.6, 0.8], [0.5, 0.3, 1.2, 0.6]], [[0.0, 0.0, 1.0, 1.0], [0.4, 0.4, 0.45, 0.5]]],
                 np.float32)
COLORS = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 0.5, 1.0, 1.0]], np.float32)
PATCH_IMG = np.arange(2 * 6 * 5 * 2, dtype=np.float32).reshape(2, 6, 5, 2)


def _pad(*args, **kw):
    return lambda tf: tf.image.resize_with_pad(*args, **kw)


def _draw(*args):
    return lambda tf: tf.image.draw_bounding_boxes(*args)


def _patches(images, sizes, strides, rates, padding):
    return lambda tf: tf.image.extract_patches(images, sizes, strides, rates, padding)


def _patches_grad(padding):
    def fn(tf):
        x = tf.constant(PATCH_IMG)
        with tf.GradientTape() as t:
            t.watch(x)
            p = tf.image.extract_patches(x, [1, 3, 2, 1], [1, 2, 2, 1], [1, 1, 2, 1], padding)
            loss = tf.reduce_sum(p * tf.sin(p))
        return t.gradient(loss, x)
    return fn


CASES = {
    "resize_with_pad_wide": _pad(IMG, 10, 10),
    "resize_with_pad_tall": _pad(IMG[0], 4, 12),
    "resize_with_pad_nearest": _pad(IMG, 8, 9, method="nearest"),
    "resize_with_pad_uint8": _pad((IMG * 200).astype(np.uint8), 6, 6),
    "resize_with_pad_bad_rank": _pad(IMG[0, 0], 6, 6),
    "draw_boxes": _draw(IMG, BOXES, COLORS),
    "draw_boxes_default_colors": _draw(IMG, BOXES, None),
    "draw_boxes_uint8": _draw((IMG * 200).astype(np.uint8), BOXES, COLORS),
    "draw_boxes_one_channel": _draw(IMG[..., :1], BOXES, COLORS),
    "draw_boxes_bad_rank": _draw(IMG[0], BOXES, COLORS),
    "draw_boxes_bad_boxes": _draw(IMG, BOXES[..., :3], COLORS),
    "patches_valid": _patches(PATCH_IMG, [1, 3, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
    "patches_same": _patches(PATCH_IMG, [1, 3, 2, 1], [1, 2, 3, 1], [1, 1, 1, 1], "SAME"),
    "patches_rates": _patches(PATCH_IMG, [1, 2, 2, 1], [1, 1, 1, 1], [1, 2, 2, 1], "VALID"),
    "patches_rates_same": _patches(PATCH_IMG, [1, 3, 2, 1], [1, 2, 2, 1], [1, 1, 2, 1], "SAME"),
    "patches_int": _patches(PATCH_IMG.astype(np.int32), [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
    "patches_grad_valid": _patches_grad("VALID"),
    "patches_grad_same": _patches_grad("SAME"),
    "patches_bad_sizes": _patches(PATCH_IMG, [2, 3, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
    "patches_bad_padding": _patches(PATCH_IMG, [1, 3, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "FULL"),
    "patches_bad_rank": _patches(PATCH_IMG[0], [1, 3, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
    "patches_too_big": _patches(PATCH_IMG, [1, 7, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID"),
}
