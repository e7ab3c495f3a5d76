"""Cases of tf.image.sample_distorted_bounding_box (seeded: TF's boxes, the stream continuing call after call and
in tf.function), stateless_sample_distorted_bounding_box, extract_glimpse and ssim_multiscale, each ``fn(tf)``;
recorded from real TF by tools/tf_api/record.py, replayed by tests/test_tf_cases.py."""

import numpy as np

BOXES = np.array([[[0.1, 0.2, 0.5, 0.9], [0.3, 0.3, 0.8, 0.6]]], np.float32)
X = np.arange(2 * 5 * 6 * 2, dtype=np.float32).reshape(2, 5, 6, 2)


def _stateless(size=(100, 200, 3), boxes=BOXES, seed=(1, 2), **kw):
    return lambda tf: list(tf.image.stateless_sample_distorted_bounding_box(size, boxes, seed=seed, **kw))


def _stateful(calls=3, **kw):
    def fn(tf):
        tf.random.set_seed(5)
        return [t for _ in range(calls) for t in tf.image.sample_distorted_bounding_box(
            [100, 200, 3], BOXES, seed=9, **kw)]
    return fn


def _stateful_function(tf):
    tf.random.set_seed(3)
    f = tf.function(lambda: tf.image.sample_distorted_bounding_box([64, 48, 3], BOXES, seed=4, min_object_covered=0.2))
    return list(f()) + list(f())


def _glimpse(offsets, centered, normalized, size=(3, 4)):
    return lambda tf: tf.image.extract_glimpse(X, size, offsets, centered=centered, normalized=normalized,
                                               noise="zero")


_RNG = np.random.default_rng(3)
A = _RNG.uniform(0, 1, (2, 180, 181, 2)).astype(np.float32)
B = np.clip(A + _RNG.normal(0, 0.1, A.shape), 0, 1).astype(np.float32)


def _msssim_grad(tf):
    a = tf.constant(A[:1])
    with tf.GradientTape() as t:
        t.watch(a)
        s = tf.image.ssim_multiscale(a, B[:1], 1.0)
    return t.gradient(s, a)[0, 80:84, 80:84]


CASES = {
    "stateless": _stateless(),
    "stateless_covered": _stateless(seed=(7, 11), min_object_covered=0.5),
    "stateless_ranges": _stateless(seed=(123, 456), area_range=(0.3, 0.9), aspect_ratio_range=(0.5, 2.0)),
    "stateless_few_attempts": _stateless(seed=(-5, 3), min_object_covered=0.9, max_attempts=5),
    "stateless_int64": _stateless(size=np.array([480, 640, 3], np.int64), seed=np.array([3, 4], np.int64)),
    "stateless_no_boxes": _stateless(size=(37, 53, 3), boxes=np.zeros((1, 0, 4), np.float32), seed=(4, 4),
                                     use_image_if_no_bounding_boxes=True),
    "stateless_no_boxes_error": _stateless(boxes=np.zeros((1, 0, 4), np.float32)),
    "stateless_bad_area": _stateless(area_range=(0.1, 1.5)),
    "stateless_bad_box": _stateless(boxes=np.array([[[0.1, 0.2, 1.5, 0.9]]], np.float32)),
    "stateless_bad_boxes_rank": _stateless(boxes=BOXES[0]),
    "stateless_bad_seed": _stateless(seed=(1, 2, 3)),
    "stateless_bad_size": _stateless(size=(100, 200)),
    "stateful": _stateful(),
    "stateful_again": _stateful(),
    "stateful_ranges": _stateful(2, area_range=(0.1, 0.5), min_object_covered=0.0),
    "stateful_in_function": _stateful_function,
    "glimpse_centered_normalized": _glimpse([[0.0, 0.0], [0.3, -0.4]], True, True),
    "glimpse_corner_normalized": _glimpse([[0.3, 0.5], [0.9, 0.1]], False, True),
    "glimpse_centered_pixels": _glimpse([[1.2, 2.7], [-0.5, 3.9]], True, False),
    "glimpse_pixels": _glimpse([[1.2, 2.7], [-0.5, 3.9]], False, False),
    "glimpse_outside": _glimpse([[0.95, 0.95], [-0.99, -0.99]], True, True),
    "glimpse_doc": lambda tf: tf.image.extract_glimpse(
        [[[[0.0], [1.0], [2.0]], [[3.0], [4.0], [5.0]], [[6.0], [7.0], [8.0]]]], size=(2, 2), offsets=[[1, 1]],
        centered=False, normalized=False),
    "glimpse_inside_uniform": lambda tf: tf.image.extract_glimpse(X, [2, 2], [[0.0, 0.0], [0.1, 0.1]]),
    "glimpse_int_input": lambda tf: tf.image.extract_glimpse(X.astype(np.int32), [2, 2], [[0.0, 0.0], [0.1, 0.1]]),
    "glimpse_bad_noise": lambda tf: tf.image.extract_glimpse(X, [2, 2], [[0.0, 0.0], [0.1, 0.1]], noise="pink"),
    "glimpse_bad_offsets": lambda tf: tf.image.extract_glimpse(X, [2, 2], [[0.0, 0.0]]),
    "glimpse_bad_rank": lambda tf: tf.image.extract_glimpse(X[0], [2, 2], [[0.0, 0.0]]),
    "glimpse_bad_size": lambda tf: tf.image.extract_glimpse(X, [2, 2, 1], [[0.0, 0.0], [0.1, 0.1]]),
    "glimpse_gradient": lambda tf: _glimpse_grad(tf),
    "ssim_multiscale": lambda tf: tf.image.ssim_multiscale(A, B, 1.0),
    "ssim_multiscale_uint8": lambda tf: tf.image.ssim_multiscale((A * 255).astype(np.uint8),
                                                                 (B * 255).astype(np.uint8), 255),
    "ssim_multiscale_weights": lambda tf: tf.image.ssim_multiscale(A[:, :100, :90], B[:, :100, :90], 1.0,
                                                                   power_factors=(0.5, 0.3, 0.2), filter_size=7),
    "ssim_multiscale_same": lambda tf: tf.image.ssim_multiscale(A, A, 1.0),
    "ssim_multiscale_grad": _msssim_grad,
}


def _glimpse_grad(tf):
    x = tf.constant(X)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.image.extract_glimpse(x, [2, 2], [[0.0, 0.0], [0.1, 0.1]])
    return t.gradient(y, x)
