"""Cases of tf.linalg.expm (TF's Pade orders by the 1-norm, scaling and squaring; float32 and float64, batches,
gradients, tf.function), each ``fn(tf)``; recorded from real TF by tools/tf_api/record.py, replayed by
tests/test_tf_cases.py. float32 matmuls and solves sum in another order than TF's: a few ulps apart."""

import numpy as np

TOLERANCE = {"rtol": 2e-5, "atol": 1e-5}

_RNG = np.random.default_rng(0)
_A = {s: _RNG.normal(size=(2, 3, 3)) * s for s in (0.01, 0.3, 1.5, 10.0)}


def _grad(tf):
    x = tf.constant(_A[0.3][0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(tf.linalg.expm(x * 2.0) * tf.reshape(tf.range(9.0, dtype=tf.float64), [3, 3]))
    return t.gradient(y, x)


CASES = {
    **{f"expm_float32_{s}": (lambda a: lambda tf: tf.linalg.expm(a.astype(np.float32)))(a) for s, a in _A.items()},
    **{f"expm_float64_{s}": (lambda a: lambda tf: tf.linalg.expm(a))(a) for s, a in _A.items()},
    "expm_gradient": _grad,
    "expm_empty": lambda tf: tf.linalg.expm(tf.zeros([0, 0])),
    "expm_in_function": lambda tf: tf.function(lambda z: tf.linalg.expm(z), input_signature=[
        tf.TensorSpec([None, 2, 2], tf.float64)])(tf.ones([3, 2, 2], tf.float64) * 4.0),
    "expm_int": lambda tf: tf.linalg.expm(tf.constant([[1, 0], [0, 1]])),
}
