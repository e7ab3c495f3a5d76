"""Cases of small names of tf.errors, tf.config, tf.debugging, tf.data, tf.linalg and tf.nn, each ``fn(tf)``;
recorded from real TF by tools/tf_api/record.py, replayed by tests/test_tf_cases.py (a Python value by its
repr)."""

import numpy as np

from tests.tf_cases import raises as _err


def _bool_in_graph(tf):
    seen = []

    @tf.function(autograph=False)
    def f(x):
        try:
            bool(x > 0)
        except tf.errors.OperatorNotAllowedInGraphError as e:
            seen.append((type(e).__name__, isinstance(e, TypeError)))
        return x

    f(tf.constant(1.0))
    return repr(seen)


def _tensor_diag_grad(tf):
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(tf.linalg.tensor_diag(x) * tf.reshape(tf.range(16.0), [2, 2, 2, 2]))
    return t.gradient(y, x)


def _tensor_diag_part_grad(tf):
    x = tf.reshape(tf.range(16.0), [2, 2, 2, 2])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(tf.linalg.tensor_diag_part(x) * tf.constant([[1.0, -2.0], [3.0, 0.5]]))
    return t.gradient(y, x)


_X = np.arange(12.0, dtype=np.float32).reshape(3, 4)


def _bn(scale):
    return lambda tf: tf.nn.batch_norm_with_global_normalization(
        _X, tf.ones([4]), tf.ones([4]) * 2, tf.ones([4]) * 0.5, tf.ones([4]) * 3, 1e-3, scale)


CASES = {
    "operator_not_allowed_in_graph": _bool_in_graph,
    "operator_not_allowed_is_type_error": lambda tf: repr(issubclass(tf.errors.OperatorNotAllowedInGraphError,
                                                                     TypeError)),
    "experimental_functions_run_eagerly": lambda tf: repr(tf.config.experimental_functions_run_eagerly()),
    "experimental_run_functions_eagerly": lambda tf: repr((tf.config.experimental_run_functions_eagerly(True),
                                                           tf.config.functions_run_eagerly(),
                                                           tf.config.run_functions_eagerly(False),
                                                           tf.config.functions_run_eagerly())),
    "assert_same_float_dtype": lambda tf: repr((tf.debugging.assert_same_float_dtype([tf.constant(1.0),
                                                                                      tf.constant(2.0)]),
                                                tf.debugging.assert_same_float_dtype(None, tf.float64),
                                                tf.debugging.assert_same_float_dtype())),
    "assert_same_float_dtype_mismatch": _err(lambda tf: tf.debugging.assert_same_float_dtype(
        [tf.constant(1.0), tf.constant(2.0, tf.float64)])),
    "assert_same_float_dtype_int": _err(lambda tf: tf.debugging.assert_same_float_dtype([tf.constant(1)])),
    "assert_same_float_dtype_expected": _err(lambda tf: tf.debugging.assert_same_float_dtype([tf.constant(1.0)],
                                                                                             tf.float64)),
    "assert_proper_iterable": lambda tf: repr(tf.debugging.assert_proper_iterable([1, 2])),
    "assert_proper_iterable_string": _err(lambda tf: tf.debugging.assert_proper_iterable("abc")),
    "assert_proper_iterable_int": _err(lambda tf: tf.debugging.assert_proper_iterable(3)),
    "traceback_filtering": lambda tf: repr((tf.debugging.is_traceback_filtering_enabled(),
                                            tf.debugging.disable_traceback_filtering(),
                                            tf.debugging.is_traceback_filtering_enabled(),
                                            tf.debugging.enable_traceback_filtering(),
                                            tf.debugging.is_traceback_filtering_enabled())),
    "get_log_device_placement": lambda tf: repr(tf.debugging.get_log_device_placement()),
    "data_iterator_types": lambda tf: repr((isinstance(iter(tf.data.Dataset.range(3)), tf.data.Iterator),
                                            isinstance(tf.data.Dataset.range(3).as_numpy_iterator(),
                                                       tf.data.NumpyIterator),
                                            isinstance([], tf.data.Iterator))),
    "tensor_diag": lambda tf: tf.linalg.tensor_diag([[1, 2], [3, 4]]),
    "tensor_diag_vector": lambda tf: tf.linalg.tensor_diag([1.0, 2.0, 3.0]),
    "tensor_diag_scalar": lambda tf: tf.linalg.tensor_diag(3.0),
    "tensor_diag_part": lambda tf: tf.linalg.tensor_diag_part(tf.reshape(tf.range(16.0), [2, 2, 2, 2])),
    "tensor_diag_part_mismatch": lambda tf: tf.linalg.tensor_diag_part(tf.zeros([2, 3])),
    "tensor_diag_part_odd_rank": lambda tf: tf.linalg.tensor_diag_part(tf.zeros([2, 2, 2])),
    "tensor_diag_grad": _tensor_diag_grad,
    "tensor_diag_part_grad": _tensor_diag_part_grad,
    "batch_norm_global_scaled": _bn(True),
    "batch_norm_global_unscaled": _bn(False),
}
