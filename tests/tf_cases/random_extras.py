"""Cases of tf.random.gamma and tf.random.poisson (seeded: TF's numbers, the op's stream continuing call after
call and per op in tf.function), each ``fn(tf)``, each setting the global seed first; recorded from real TF by
tools/tf_api/record.py, replayed by tests/test_tf_cases.py."""

TOLERANCE = {"rtol": 1e-6, "atol": 0}


def _twice(fn, global_seed=1):
    def case(tf):
        tf.random.set_seed(global_seed)
        return [fn(tf), fn(tf)]
    return case


def _in_function(fn, global_seed=3):
    def case(tf):
        tf.random.set_seed(global_seed)
        f = tf.function(lambda: fn(tf))
        return [f(), f()]
    return case


def _gamma_grad(tf):
    tf.random.set_seed(4)
    a = tf.constant([0.5, 2.0])
    with tf.GradientTape() as t:
        t.watch(a)
        y = tf.random.gamma([3], alpha=a, seed=3)
    return t.gradient(y, a)


CASES = {
    "gamma": _twice(lambda tf: tf.random.gamma([3], alpha=[0.5, 2.0], seed=3)),
    "gamma_beta_float64": _twice(lambda tf: tf.random.gamma([2, 2], alpha=[[1.0], [3.0]], beta=[1.0, 2.0], seed=5,
                                                            dtype=tf.float64)),
    "gamma_small_alpha": _twice(lambda tf: tf.random.gamma([6], alpha=[0.05, 0.3], seed=8)),
    "gamma_float16": _twice(lambda tf: tf.random.gamma([4], alpha=2.5, seed=2, dtype=tf.float16)),
    "gamma_global_seed_only": _twice(lambda tf: tf.random.gamma([2], alpha=5.0), global_seed=9),
    "gamma_in_function": _in_function(lambda tf: tf.random.gamma([4], alpha=0.3, seed=7)),
    "gamma_empty": _twice(lambda tf: tf.random.gamma([0], alpha=[1.0, 2.0], seed=1)),
    "gamma_bad_dtype": lambda tf: tf.random.gamma([2], alpha=1.0, dtype=tf.int32),
    "poisson": _twice(lambda tf: tf.random.poisson([4], lam=[0.5, 3.0, 12.0, 150.0], seed=3)),
    "poisson_int64_float64_rate": _twice(lambda tf: tf.random.poisson(
        [3, 2], lam=tf.constant([2.5, 40.0], tf.float64), seed=5, dtype=tf.int64)),
    "poisson_in_function": _in_function(lambda tf: tf.random.poisson([5], lam=25.0, seed=7, dtype=tf.int32)),
    "poisson_many": _twice(lambda tf: tf.reduce_sum(tf.random.poisson(
        [300], lam=[1000.0, 0.01, 9.99, 10.0], seed=11), axis=0)),
    "poisson_float16": _twice(lambda tf: tf.random.poisson([3], lam=tf.constant([4.0, 20.0], tf.float16), seed=2,
                                                           dtype=tf.float16)),
    "poisson_int_rate": _twice(lambda tf: tf.random.poisson([3], lam=tf.constant([4, 30]), seed=6)),
    "poisson_bad_dtype": lambda tf: tf.random.poisson([2], lam=1.0, dtype=tf.uint8),
    "stateless_poisson": lambda tf: tf.random.stateless_poisson([4, 2], seed=[1, 2], lam=[2.0, 30.0]),
}

CASES.update({
    "stateless_poisson_float": lambda tf: tf.random.stateless_poisson([3, 3], seed=[7, 8], lam=[0.5, 12.0, 100.0],
                                                                      dtype=tf.float32),
    "stateless_poisson_bad_shape": lambda tf: tf.random.stateless_poisson([3, 2], seed=[7, 8], lam=[0.5, 12.0, 1.0]),
})
