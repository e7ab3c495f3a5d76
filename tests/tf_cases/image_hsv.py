"""Cases of tf.image.rgb_to_hsv / hsv_to_rgb and rgb_to_hsv's gradient (TF's rule), each ``fn(tf)``; recorded from
real TF by tools/tf_api/record.py, replayed by tests/test_tf_cases.py."""

import numpy as np

RGB = np.random.default_rng(3).uniform(0.05, 0.95, size=(2, 3, 4, 3)).astype(np.float32)
EDGES = np.array([[0, 0, 0], [1, 1, 1], [0.5, 0.5, 0.2], [0.2, 0.5, 0.5], [0.5, 0.2, 0.5], [1, 0, 0], [0, 1, 0],
                  [0, 0, 1], [0.3, 0.2, 0.25]], np.float32)


def _grad(images, weights=(1.0, 1.0, 1.0)):
    def fn(tf):
        x = tf.constant(images)
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(tf.image.rgb_to_hsv(x) * tf.constant(weights, x.dtype))
        return t.gradient(y, x)
    return fn


CASES = {
    "rgb_to_hsv": lambda tf: tf.image.rgb_to_hsv(RGB),
    "rgb_to_hsv_edges": lambda tf: tf.image.rgb_to_hsv(EDGES),
    "rgb_to_hsv_float64": lambda tf: tf.image.rgb_to_hsv(RGB.astype(np.float64)),
    "hsv_to_rgb": lambda tf: tf.image.hsv_to_rgb(RGB),
    "hsv_to_rgb_edges": lambda tf: tf.image.hsv_to_rgb(EDGES),
    "roundtrip": lambda tf: tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(RGB)),
    "rgb_to_hsv_grad": _grad(RGB),
    "rgb_to_hsv_grad_hue": _grad(RGB, (1.0, 0.0, 0.0)),
    "rgb_to_hsv_grad_edges": _grad(EDGES, (0.5, 2.0, 1.0)),
    "rgb_to_hsv_int": lambda tf: tf.image.rgb_to_hsv(tf.constant([[1, 2, 3]])),
    "rgb_to_hsv_bad_channels": lambda tf: tf.image.rgb_to_hsv(RGB[..., :2]),
    "hsv_to_rgb_grad": lambda tf: _hsv_grad(tf),
}


def _hsv_grad(tf):
    x = tf.constant(RGB)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.image.hsv_to_rgb(x)
    return t.gradient(y, x)
