"""Cases of tf.image's box ops (NMS family, crop_and_resize and its gradients), each ``fn(tf)``: run by real
TF to record tests/fixtures/tf_api/image_boxes.json (tools/tf_api/record.py), replayed on tapeflow by
tests/test_tf_cases.py."""

import numpy as np

BOXES = np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11], [0, 10.1, 1, 11.1],
                  [0, 100, 1, 101]], np.float32)
SCORES = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3], np.float32)
FLIPPED = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [0.5, 0.5, 0.5, 0.9]], np.float32)
OVERLAPS = np.array([[1.0, 0.6, 0.1], [0.6, 1.0, 0.4], [0.1, 0.4, 1.0]], np.float32)
S3 = np.array([0.9, 0.8, 0.7], np.float32)
CB = np.array([[[[0, 0, 1, 1]], [[0, 0.1, 1, 1.1]], [[0, 0.5, 1, 1.5]], [[0.2, 0.2, 0.4, 0.4]]]], np.float32)
CS = np.array([[[0.9, 0.1], [0.8, 0.7], [0.3, 0.75], [0.05, 0.6]]], np.float32)
CBQ = np.concatenate([CB, CB[:, ::-1]], 2)
IMG = np.arange(2 * 4 * 5 * 2, dtype=np.float32).reshape(2, 4, 5, 2)
IMG = np.sin(IMG) * 3 + IMG * np.float32(0.1)
CROPS = np.array([[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 1.0], [-0.2, 0.3, 0.6, 1.4], [0.7, 0.6, 0.2, 0.1]], np.float32)
IDX = np.array([0, 1, 1, 0], np.int32)


def _nms(*args, **kw):
    return lambda tf: tf.image.non_max_suppression(*args, **kw)


def _soft(*args, **kw):
    return lambda tf: tf.image.non_max_suppression_with_scores(*args, **kw)


def _combined(*args, **kw):
    return lambda tf: tuple(tf.image.combined_non_max_suppression(*args, **kw))


def _padded(boxes, *args, **kw):
    return lambda tf: tf.image.non_max_suppression_padded(tf.constant(boxes), *args, **kw)


def _crop(*args, **kw):
    return lambda tf: tf.image.crop_and_resize(*args, **kw)


def _crop_grad(method, size=(3, 4)):
    def fn(tf):
        x, b = tf.constant(IMG), tf.constant(CROPS)
        with tf.GradientTape() as t:
            t.watch([x, b])
            y = tf.image.crop_and_resize(x, b, IDX, size, method=method)
            loss = tf.reduce_sum(y * tf.cos(y))
        return t.gradient(loss, [x, b])
    return fn


def _crop_grad2(tf):
    x = tf.constant(IMG)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t:
            t.watch(x)
            loss = tf.reduce_sum(tf.image.crop_and_resize(x, CROPS, IDX, [3, 4]) ** 2)
        g = t.gradient(loss, x)
    return t2.gradient(g, x)


def _crop_grad_u8(tf):
    b = tf.constant(CROPS)
    with tf.GradientTape() as t:
        t.watch(b)
        y = tf.image.crop_and_resize(tf.constant(IMG.astype(np.uint8)), b, IDX, [2, 2])
    return t.gradient(y, b)


def _soft_scores_grad(tf):
    s = tf.constant(SCORES)
    with tf.GradientTape() as t:
        t.watch(s)
        _, out = tf.image.non_max_suppression_with_scores(BOXES, s, 3)
    return t.gradient(out, s)


def _combined_grad(tf):
    s = tf.constant(CS)
    with tf.GradientTape() as t:
        t.watch(s)
        r = tf.image.combined_non_max_suppression(CB, s, 2, 3)
    return t.gradient(r.nmsed_scores, s)


CASES = {
    "nms": _nms(BOXES, SCORES, 3, 0.5),
    "nms_all": _nms(BOXES, SCORES, 10, 0.5),
    "nms_default_iou": _nms(BOXES, SCORES, 10),
    "nms_score_threshold": _nms(BOXES, SCORES, 10, 0.5, score_threshold=0.55),
    "nms_iou_one": _nms(BOXES, SCORES, 10, 1.0),
    "nms_float16": _nms(BOXES.astype(np.float16), SCORES.astype(np.float16), 10, 0.5),
    "nms_float64": _nms(BOXES.astype(np.float64), SCORES.astype(np.float64), 10, 0.5),
    "nms_flipped_corners_zero_area": _nms(FLIPPED, S3, 3, 0.5),
    "nms_ties_lower_index_first": _nms(BOXES, np.full(6, 0.5, np.float32), 10, 0.5),
    "nms_empty": _nms(np.zeros((0, 4), np.float32), np.zeros((0,), np.float32), 3, 0.5),
    "nms_zero_outputs": _nms(BOXES, SCORES, 0),
    "nms_bad_iou": _nms(BOXES, SCORES, 10, 1.5),
    "nms_bad_columns": _nms(BOXES[:, :3], SCORES, 10, 0.5),
    "nms_bad_rank": _nms(BOXES[0], SCORES, 10, 0.5),
    "nms_bad_scores": _nms(BOXES, SCORES[:4], 10, 0.5),
    "nms_negative_size": _nms(BOXES, SCORES, -1, 0.5),
    "nms_size_vector": _nms(BOXES, SCORES, [3], 0.5),
    "nms_size_float": _nms(BOXES, SCORES, 3.0, 0.5),
    "nms_size_int64": lambda tf: tf.image.non_max_suppression(BOXES, SCORES, tf.constant(3, tf.int64)),
    "nms_float64_tensors": lambda tf: tf.image.non_max_suppression(tf.constant(BOXES, tf.float64),
                                                                   tf.constant(SCORES, tf.float64), 3),
    "nms_mixed_dtypes": lambda tf: tf.image.non_max_suppression(BOXES, tf.constant(SCORES, tf.float16), 3),
    "nms_int_boxes": lambda tf: tf.image.non_max_suppression(tf.constant(BOXES.astype(np.int32)), SCORES, 3),
    "nms_iou_float64": lambda tf: tf.image.non_max_suppression(BOXES, SCORES, 3, tf.constant(0.5, tf.float64)),
    "nms_float16_tensors": lambda tf: tf.image.non_max_suppression(tf.constant(BOXES, tf.float16),
                                                                   tf.constant(SCORES, tf.float16), 3),
    "with_scores_float16_arrays": _soft(BOXES.astype(np.float16), SCORES.astype(np.float16), 3),
    "with_scores_float16_tensors": lambda tf: tf.image.non_max_suppression_with_scores(
        tf.constant(BOXES, tf.float16), tf.constant(SCORES, tf.float16), 3, soft_nms_sigma=0.5),
    "with_scores": _soft(BOXES, SCORES, 10, 0.5),
    "soft_nms": _soft(BOXES, SCORES, 10, 0.5, soft_nms_sigma=0.5),
    "soft_nms_threshold": _soft(BOXES, SCORES, 10, 0.5, score_threshold=0.4, soft_nms_sigma=0.5),
    "soft_nms_iou_unused": _soft(BOXES, SCORES, 10, 0.0, soft_nms_sigma=0.5),
    "soft_nms_float64": _soft(BOXES.astype(np.float64), SCORES.astype(np.float64), 4, soft_nms_sigma=0.25),
    "soft_nms_negative_sigma": _soft(BOXES, SCORES, 10, 0.5, soft_nms_sigma=-0.5),
    "soft_nms_scores_grad": _soft_scores_grad,
    "overlaps": lambda tf: tf.image.non_max_suppression_overlaps(OVERLAPS, S3, 3, 0.5),
    "overlaps_score_threshold": lambda tf: tf.image.non_max_suppression_overlaps(OVERLAPS, S3, 3, 0.5, 0.75),
    "overlaps_float64_tensor": lambda tf: tf.image.non_max_suppression_overlaps(
        tf.constant(OVERLAPS, tf.float64), S3, 3),
    "overlaps_not_square": lambda tf: tf.image.non_max_suppression_overlaps(OVERLAPS[:2], S3, 3, 0.5),
    "padded": _padded(BOXES, SCORES, 4, 0.5),
    "padded_pad": _padded(BOXES, SCORES, 4, 0.5, pad_to_max_output_size=True),
    "padded_batch": _padded(np.stack([BOXES, BOXES[::-1]]), np.stack([SCORES, SCORES]), 4, 0.5,
                            pad_to_max_output_size=True),
    "padded_score_threshold": _padded(BOXES, SCORES, 5, 0.5, score_threshold=0.55, pad_to_max_output_size=True),
    "padded_small_tiles": _padded(np.tile(BOXES, (3, 1)), np.linspace(1, 0.1, 18).astype(np.float32), 7, 0.5,
                                  pad_to_max_output_size=True, tile_size=4),
    "padded_batch_unpadded": _padded(np.stack([BOXES, BOXES]), np.stack([SCORES, SCORES]), 4, 0.5),
    "combined": _combined(CB, CS, 2, 3),
    "combined_no_clip": _combined(CB, CS, 2, 10, clip_boxes=False),
    "combined_pad_per_class": _combined(CB, CS, 2, 10, pad_per_class=True),
    "combined_score_threshold": _combined(CB, CS, 3, 10, 0.5, 0.5),
    "combined_boxes_per_class": _combined(CBQ, CS, 3, 5),
    "combined_float64": _combined(CB.astype(np.float64), CS.astype(np.float64), 3, 5),
    "combined_float64_tensor": lambda tf: tuple(tf.image.combined_non_max_suppression(tf.constant(CB, tf.float64),
                                                                                      CS, 3, 5)),
    "combined_bad_q": _combined(np.concatenate([CBQ, CB], 2), CS, 3, 5),
    "combined_bad_rank": _combined(CB[0], CS, 3, 5),
    "combined_scores_grad": _combined_grad,
    "crop": _crop(IMG, CROPS, IDX, [3, 4]),
    "crop_nearest": _crop(IMG, CROPS, IDX, [3, 4], method="nearest"),
    "crop_extrapolation": _crop(IMG, CROPS, IDX, [3, 4], extrapolation_value=-1.0),
    "crop_1x1": _crop(IMG, CROPS, IDX, [1, 1]),
    "crop_uint8": _crop(IMG.astype(np.uint8), CROPS, IDX, [2, 2]),
    "crop_float64": _crop(IMG.astype(np.float64), CROPS, IDX, [2, 2]),
    "crop_boxes_float64_array": _crop(IMG, CROPS.astype(np.float64), IDX, [2, 2]),
    "crop_boxes_float64_tensor": lambda tf: tf.image.crop_and_resize(IMG, tf.constant(CROPS, tf.float64), IDX,
                                                                     [2, 2]),
    "crop_no_boxes": _crop(IMG, np.zeros((0, 4), np.float32), np.zeros((0,), np.int32), [2, 2]),
    "crop_bad_index": _crop(IMG, CROPS, [0, 1, 2, 0], [2, 2]),
    "crop_bad_columns": _crop(IMG, CROPS[:, :3], IDX, [2, 2]),
    "crop_bad_boxes_rank": _crop(IMG, CROPS[0], IDX, [2, 2]),
    "crop_bad_indices": _crop(IMG, CROPS, IDX[:3], [2, 2]),
    "crop_bad_image": _crop(IMG[0], CROPS, IDX, [2, 2]),
    "crop_bad_size": _crop(IMG, CROPS, IDX, [2, 2, 2]),
    "crop_zero_size": _crop(IMG, CROPS, IDX, [0, 2]),
    "crop_bad_method": _crop(IMG, CROPS, IDX, [2, 2], method="area"),
    "crop_grad": _crop_grad("bilinear"),
    "crop_grad_nearest": _crop_grad("nearest"),
    "crop_grad_1x1": _crop_grad("bilinear", (1, 1)),
    "crop_grad_uint8_image": _crop_grad_u8,
    "crop_second_order": _crop_grad2,
}
