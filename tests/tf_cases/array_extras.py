"""Cases of tf.space_to_batch(_nd), tf.batch_to_space, tf.edit_distance and tf.fingerprint, each ``fn(tf)``;
recorded from real TF by tools/tf_api/record.py, replayed by tests/test_tf_cases.py."""

import numpy as np

X = np.arange(2 * 4 * 6 * 3, dtype=np.float32).reshape(2, 4, 6, 3)


def _s2b(*args):
    return lambda tf: tf.space_to_batch(*args)


def _s2b_nd(*args):
    return lambda tf: tf.space_to_batch_nd(*args)


def _b2s(*args):
    return lambda tf: tf.batch_to_space(*args)


def _sparse(tf, indices, values, shape):
    return tf.SparseTensor(np.array(indices, np.int64), values, shape)


def _edit(normalize=True, truth=None):
    def fn(tf):
        hyp = _sparse(tf, [[0, 0, 0], [1, 0, 0], [1, 0, 1], [1, 1, 0]], ["a", "b", "c", "a"], [2, 2, 2])
        tru = _sparse(tf, [[0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 1], [1, 1, 0]], ["a", "b", "d", "a", "b"],
                      [2, 2, 2]) if truth is None else truth(tf)
        return tf.edit_distance(hyp, tru, normalize=normalize)
    return fn


def _s2b_grad(tf):
    x = tf.constant(X)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.space_to_batch(x, [2, 3], [[0, 2], [1, 2]])
        loss = tf.reduce_sum(y * tf.cos(y))
    return t.gradient(loss, x)


CASES = {
    "space_to_batch": _s2b(X, [2, 3], [[0, 0], [0, 0]]),
    "space_to_batch_padded": _s2b(X, [2, 3], [[0, 2], [1, 2]]),
    "space_to_batch_1d": _s2b(X[:, :, 0, :], [2], [[1, 1]]),
    "space_to_batch_nd_trailing": _s2b_nd(X, [2], [[0, 0]]),
    "space_to_batch_int": _s2b(X.astype(np.int64), [2, 2], [[0, 0], [0, 0]]),
    "space_to_batch_bad_block": _s2b(X, [3, 3], [[0, 0], [0, 0]]),
    "space_to_batch_bad_paddings": _s2b(X, [2, 3], [[0, 0]]),
    "space_to_batch_grad": _s2b_grad,
    "batch_to_space": _b2s(X.reshape(12, 2, 2, 3), [2, 3], [[0, 0], [0, 0]]),
    "batch_to_space_cropped": _b2s(X.reshape(12, 2, 2, 3), [2, 3], [[1, 1], [0, 2]]),
    "batch_to_space_bad_batch": _b2s(X.reshape(8, 3, 2, 3), [2, 3], [[0, 0], [0, 0]]),
    "edit_distance": _edit(),
    "edit_distance_unnormalized": _edit(False),
    "edit_distance_ints": lambda tf: tf.edit_distance(
        _sparse(tf, [[0, 0], [0, 1], [1, 0]], [1, 2, 3], [2, 3]),
        _sparse(tf, [[0, 0], [0, 1], [0, 2]], [1, 3, 3], [2, 3])),
    "edit_distance_empty_cells": lambda tf: tf.edit_distance(
        _sparse(tf, [[0, 0, 0]], [1], [3, 2, 2]), _sparse(tf, [[0, 0, 0], [2, 1, 0]], [2, 1], [3, 2, 2])),
    "edit_distance_dtype_mismatch": lambda tf: tf.edit_distance(
        _sparse(tf, [[0, 0]], [1], [1, 1]), _sparse(tf, [[0, 0]], [1.0], [1, 1])),
    "edit_distance_rank_mismatch": lambda tf: tf.edit_distance(
        _sparse(tf, [[0, 0]], [1], [1, 1]), _sparse(tf, [[0, 0, 0]], [1], [1, 1, 1])),
    "fingerprint_strings": lambda tf: tf.fingerprint(tf.constant(["hello", "", "tapeflow"])),
    "fingerprint_string_rows": lambda tf: tf.fingerprint(tf.constant([["a", "bc"], ["", "d"]])),
    "fingerprint_ints": lambda tf: tf.fingerprint(tf.constant([[1, 2], [3, 4]], tf.int32)),
    "fingerprint_floats_3d": lambda tf: tf.fingerprint(tf.constant(X[:, :2, :2, 0])),
    "fingerprint_scalar": lambda tf: tf.fingerprint(tf.constant(3)),
    "fingerprint_bad_method": lambda tf: tf.fingerprint(tf.constant([1]), method="md5"),
}
