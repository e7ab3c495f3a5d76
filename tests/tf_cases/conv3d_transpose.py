"""Cases of tf.nn.conv3d_transpose (and tf.nn.conv_transpose of 5-D inputs): values, NCDHW, dilations, gradients
each ``fn(tf)``; recorded from real TF by tools/tf_api/record.py, replayed by
tests/test_tf_cases.py."""

import numpy as np

TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}

_RNG = np.random.default_rng(5)
X = _RNG.normal(size=(2, 3, 4, 3, 2)).astype(np.float32)
W = _RNG.normal(size=(2, 3, 2, 4, 2)).astype(np.float32)


def _grads(tf):
    x, w = tf.constant(X), tf.constant(W)
    with tf.GradientTape() as t:
        t.watch([x, w])
        y = tf.nn.conv3d_transpose(x, w, [2, 6, 8, 6, 4], [1, 2, 2, 2, 1], "SAME")
        loss = tf.reduce_sum(y * tf.cos(y))
    return t.gradient(loss, [x, w])


CASES = {
    "same_stride2": lambda tf: tf.nn.conv3d_transpose(X, W, [2, 6, 8, 6, 4], [1, 2, 2, 2, 1], "SAME"),
    "valid_stride1": lambda tf: tf.nn.conv3d_transpose(X, W, [2, 4, 6, 4, 4], 1, "VALID"),
    "valid_stride2": lambda tf: tf.nn.conv3d_transpose(X, W, [2, 6, 9, 6, 4], [2, 2, 2], "VALID"),
    "ncdhw": lambda tf: tf.transpose(tf.nn.conv3d_transpose(
        np.transpose(X, (0, 4, 1, 2, 3)), W, [2, 4, 3, 4, 3], 1, "SAME", data_format="NCDHW"), (0, 2, 3, 4, 1)),
    "dilated": lambda tf: tf.nn.conv3d_transpose(X, W, [2, 5, 8, 5, 4], 1, "VALID", dilations=[1, 2, 2, 2, 1]),
    "conv_transpose_5d": lambda tf: tf.nn.conv_transpose(X, W, [2, 6, 8, 6, 4], 2, "SAME"),
    "gradients": _grads,
}
