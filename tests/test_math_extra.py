"""tf.math extras (tapeflow/ops/special_ops.py): values, gradients and
errors pinned against TensorFlow 2.21 (numbers below were printed by TF)."""

import warnings

import numpy as np
import pytest

import tapeflow as tf

X = np.array([0.1, 0.5, 1.5, -2.0, 3.0, -2.5, 1e-8, 30.0])


def _grads(f, *xs):
    ts = [tf.constant(x) for x in xs]
    with tf.GradientTape() as tape:
        for x in ts:
            tape.watch(x)
        y = f(*ts)
    return [None if g is None else tf.convert_to_tensor(g).numpy() for g in tape.gradient(y, ts)]


# -- special functions -----------------------------------------------------------

TF_VALUES = {
    "erf": [1.1246291601828490e-01, 5.2049987781304663e-01, 9.6610514647531076e-01, -9.9532226501895282e-01,
            9.9997790950300136e-01, -9.9959304798255499e-01, 1.1283791670955126e-08, 1.0],
    "erfc": [8.8753708398171516e-01, 4.7950012218695337e-01, 3.3894853524689267e-02, 1.9953222650189528e+00,
             2.2090496998585441e-05, 1.9995930479825550e+00, 9.9999998871620832e-01, 0.0],
    "lgamma": [2.2527126517342055e+00, 5.7236494292470008e-01, -1.2078223763524522e-01, np.inf,
               6.9314718055994529e-01, -5.6243716497674068e-02, 1.8420680738180209e+01, 7.1257038967168015e+01],
    "digamma": [-1.0423754940411076e+01, -1.9635100260214227e+00, 3.6489973978576451e-02, np.nan,
                9.2278433509846747e-01, 1.1031566406452433e+00, -1.0000000057721566e+08, 3.3844381326855251e+00],
}


@pytest.mark.parametrize("name", sorted(TF_VALUES))
def test_special_function_values_match_tf(name):
    out = getattr(tf.math, name)(tf.constant(X)).numpy()
    np.testing.assert_allclose(out, TF_VALUES[name], rtol=1e-12, atol=1e-300)


def test_special_functions_keep_float32():
    x = tf.constant([0.5, -0.5, 100.0])
    for f in (tf.math.erf, tf.math.erfc, tf.math.lgamma, tf.math.digamma):
        assert f(x).dtype == tf.float32
    np.testing.assert_allclose(tf.math.digamma(x).numpy(), [-1.9635108, 0.036489964, 4.600162], rtol=1e-6)


def test_lgamma_large_and_poles():
    out = tf.math.lgamma(tf.constant([1e5, -0.5, 0.0], tf.float64)).numpy()
    np.testing.assert_allclose(out[:2], [1.0512877089736569e+06, 1.2655121234846454e+00], rtol=1e-13)
    assert out[2] == np.inf


def test_polygamma_matches_tf():
    out = tf.math.polygamma(tf.constant([1.0, 2.0, 3.0, 0.0, 1.5, -1.0], tf.float64),
                            tf.constant([0.5, 2.0, 3.5, 2.0, 1.0, 1.0], tf.float64)).numpy()
    np.testing.assert_allclose(out[:4], [4.93480220054468, -0.4041138063191886, 0.07030584881725205,
                                         0.42278433509846747], rtol=1e-12)
    assert np.isnan(out[4:]).all()  # non-integer and negative orders
    out = tf.math.polygamma(tf.constant([1.0, 1.0], tf.float64), tf.constant([0.0, -1.5], tf.float64)).numpy()
    assert out[0] == np.inf
    np.testing.assert_allclose(out[1], 9.379246644989124, rtol=1e-12)


def test_special_function_gradients_match_tf():
    np.testing.assert_allclose(_grads(tf.math.lgamma, np.array([0.5, 2.5, -1.5]))[0],
                               [-1.9635100260214227, 0.7031566406452434, 0.7031566406452434], rtol=1e-12)
    np.testing.assert_allclose(_grads(tf.math.digamma, np.array([0.5, 2.5, -1.5]))[0],
                               [4.93480220054468, 0.4903577561002349, 9.379246644989124], rtol=1e-12)
    np.testing.assert_allclose(_grads(tf.math.erf, np.array([0.5, -1.0]))[0],
                               [0.8787825789354448, 0.4151074974205947], rtol=1e-14)


def test_erf_rejects_integers():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Erf"):
        tf.math.erf(tf.constant([1, 2]))


# -- trig -----------------------------------------------------------------------

def test_inverse_trig_domain_edges_match_tf():
    np.testing.assert_allclose(tf.math.asin(tf.constant([0.5, 1.5], tf.float64)).numpy(),
                               [0.5235987755982989, np.nan], rtol=1e-15)
    np.testing.assert_allclose(tf.math.atanh(tf.constant([1.0, -1.0, 0.5], tf.float64)).numpy(),
                               [np.inf, -np.inf, 0.5493061443340548], rtol=1e-15)


def test_trig_top_level_names():
    for name in ("atan", "asin", "acos", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh"):
        assert getattr(tf, name) is getattr(tf.math, name)


def test_atan2_and_acosh_gradients_match_tf():
    gy, gx = _grads(tf.math.atan2, np.array([1.0, -2.0]), np.array([0.5, 3.0]))
    np.testing.assert_allclose(gy, [0.4, 0.23076923076923078], rtol=1e-15)
    np.testing.assert_allclose(gx, [-0.8, 0.15384615384615385], rtol=1e-15)
    np.testing.assert_allclose(_grads(tf.math.acosh, np.array([1.5, 3.0]))[0],
                               [0.8944271909999159, 0.3535533905932738], rtol=1e-14)


def test_acosh_rejects_integers():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Acosh"):
        tf.math.acosh(tf.constant([1, 2]))


# -- safe divisions ----------------------------------------------------------------

def test_safe_division_values_match_tf():
    np.testing.assert_array_equal(tf.math.xlogy(tf.constant([0.0, 1.0]), tf.constant([0.0, 0.0])).numpy(),
                                  [0.0, -np.inf])
    np.testing.assert_array_equal(tf.math.xdivy(tf.constant([0.0, 1.0]), tf.constant([0.0, 0.0])).numpy(),
                                  [0.0, np.inf])
    np.testing.assert_array_equal(tf.math.divide_no_nan(tf.constant([1.0, 1.0]), tf.constant([0.0, 2.0])).numpy(),
                                  [0.0, 0.5])


def test_safe_division_gradients_match_tf():
    x, y = np.array([0.0, 0.0, 2.0]), np.array([0.0, 3.0, 0.5])
    gx, gy = _grads(tf.math.xlogy, x, y)
    np.testing.assert_allclose(gx, [0.0, 0.0, -0.6931471805599453])
    np.testing.assert_allclose(gy, [0.0, 0.0, 4.0])
    gx, gy = _grads(tf.math.xdivy, x, y)
    np.testing.assert_allclose(gx, [0.0, 0.0, 2.0])
    np.testing.assert_allclose(gy, [0.0, 0.0, -8.0])
    gx, gy = _grads(tf.math.divide_no_nan, np.array([1.0, 0.0, 2.0]), y)
    np.testing.assert_allclose(gx, [0.0, 0.3333333333333333, 2.0])
    np.testing.assert_allclose(gy, [0.0, 0.0, -8.0])


def test_xlogy_refuses_mixed_dtypes():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Xlogy"):
        tf.math.xlogy(tf.constant([1.0]), tf.constant([1.0], tf.float64))


# -- reductions --------------------------------------------------------------------

def test_variance_std_euclidean_norm_match_tf():
    x = tf.constant([[1.0, 2.0], [3.0, 5.0]])
    np.testing.assert_allclose(tf.math.reduce_variance(x, axis=0).numpy(), [1.0, 2.25])
    np.testing.assert_allclose(tf.math.reduce_std(x, axis=1, keepdims=True).numpy(), [[0.5], [1.0]])
    np.testing.assert_allclose(tf.math.reduce_euclidean_norm(x, axis=0).numpy(), [3.1622777, 5.3851647],
                               rtol=1e-6)
    out = tf.math.reduce_euclidean_norm(tf.constant([3, 4]))
    assert out.dtype == tf.int32 and int(out) == 5
    assert float(tf.math.reduce_std(tf.constant([1.0, 2.0, 4.0]))) == pytest.approx(1.2472192)


def test_reduce_std_gradient_and_norm_gradient_at_zero():
    np.testing.assert_allclose(_grads(tf.math.reduce_std, np.array([1.0, 2.0, 4.0]))[0],
                               [-0.3563483225498992, -0.0890870806374748, 0.445435403187374], rtol=1e-14)
    g = _grads(lambda x: tf.math.reduce_euclidean_norm(x * 0.0), np.ones(4))[0]
    assert np.isnan(g).all()  # as TF: 0/0


def test_reduce_std_rejects_integers():
    with pytest.raises(TypeError, match="real or complex"):
        tf.math.reduce_std(tf.constant([1, 2]))


def test_count_nonzero_is_int64():
    out = tf.math.count_nonzero(tf.constant([[1.0, 0.0], [3.0, 5.0]]), axis=0)
    assert out.dtype == tf.int64
    np.testing.assert_array_equal(out.numpy(), [2, 1])


# -- top_k, sort, argsort --------------------------------------------------------

def test_top_k_ties_go_to_lower_index():
    values, indices = tf.math.top_k(tf.constant([[1.0, 3.0, 3.0, 2.0]]), 3)
    np.testing.assert_array_equal(values.numpy(), [[3.0, 3.0, 2.0]])
    np.testing.assert_array_equal(indices.numpy(), [[1, 2, 3]])
    assert indices.dtype == tf.int32
    res = tf.math.top_k(tf.constant([[1, 3, 3, 2]]), 2)
    np.testing.assert_array_equal(res.indices.numpy(), [[1, 2]])
    assert tf.math.top_k(tf.constant([1.0, 2.0]), 1, index_type=tf.int64).indices.dtype == tf.int64


def test_top_k_skips_nan_as_tf():
    res = tf.math.top_k(tf.constant([[1.0, 3.0, 3.0, np.nan, 2.0]]), 3)
    np.testing.assert_array_equal(res.values.numpy(), [[3.0, 3.0, 2.0]])
    np.testing.assert_array_equal(res.indices.numpy(), [[1, 2, 4]])


def test_top_k_gradient_matches_tf():
    g = _grads(lambda x: tf.reduce_sum(tf.math.top_k(x, 2).values * tf.constant([1.0, 10.0], tf.float64)),
               np.array([[1.0, 3.0, 3.0, 2.0], [4.0, 0.0, 5.0, -1.0]]))[0]
    np.testing.assert_array_equal(g, [[0.0, 1.0, 10.0, 0.0], [10.0, 0.0, 1.0, 0.0]])


def test_top_k_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="at least k columns. Had 2, needed 3"):
        tf.math.top_k(tf.constant([1.0, 2.0]), 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match=">= 1-D"):
        tf.math.top_k(tf.constant(3.0), 1)


def test_sort_and_argsort_match_tf():
    np.testing.assert_array_equal(tf.sort(tf.constant([3, 1, 2])).numpy(), [1, 2, 3])
    np.testing.assert_array_equal(tf.sort(tf.constant([3, 1, 3, 2]), direction="DESCENDING").numpy(), [3, 3, 2, 1])
    np.testing.assert_array_equal(tf.sort(tf.constant([[3.0, 1.0], [0.0, 2.0]]), axis=0).numpy(),
                                  [[0.0, 1.0], [3.0, 2.0]])
    np.testing.assert_array_equal(tf.argsort(tf.constant([3.0, 1.0, 1.0, 2.0])).numpy(), [1, 2, 3, 0])
    np.testing.assert_array_equal(tf.argsort(tf.constant([3.0, 1.0, 1.0, 2.0]), direction="DESCENDING").numpy(),
                                  [0, 3, 1, 2])
    np.testing.assert_array_equal(tf.argsort(tf.constant([3, 1, 3, 2]), direction="DESCENDING").numpy(),
                                  [0, 2, 3, 1])
    np.testing.assert_array_equal(tf.argsort(tf.constant([[3, 1], [0, 2]]), axis=0).numpy(), [[1, 0], [0, 1]])
    assert tf.argsort(tf.constant([1.0])).dtype == tf.int32


def test_sort_gradient_matches_tf():
    g = _grads(lambda x: tf.reduce_sum(tf.sort(x) * tf.constant([1.0, 2.0, 3.0], tf.float64)),
               np.array([3.0, 1.0, 2.0]))[0]
    np.testing.assert_array_equal(g, [3.0, 1.0, 2.0])


def test_sort_errors():
    with pytest.raises(ValueError, match="direction=UP"):
        tf.sort(tf.constant([1.0, 2.0]), direction="UP")
    with pytest.raises(tf.errors.InvalidArgumentError, match="bool"):
        tf.sort(tf.constant([True, False]))


# -- segments, bincount, polyval ----------------------------------------------

def test_segment_ops_match_tf():
    data = tf.constant([1.0, 2.0, 3.0])
    ids = tf.constant([0, 0, 2])
    np.testing.assert_array_equal(tf.math.segment_sum(data, ids).numpy(), [3.0, 0.0, 3.0])
    np.testing.assert_array_equal(tf.math.unsorted_segment_mean(data, ids, 4).numpy(), [1.5, 0.0, 3.0, 0.0])
    lowest = np.finfo(np.float32).min
    np.testing.assert_array_equal(tf.math.unsorted_segment_max(data, ids, 4).numpy(), [2.0, lowest, 3.0, lowest])
    np.testing.assert_array_equal(tf.math.unsorted_segment_min(tf.constant([1.0, 2.0]), [0, 0], 2).numpy(),
                                  [1.0, np.finfo(np.float32).max])
    out = tf.math.unsorted_segment_max(tf.constant([1, 2, 3]), tf.constant([0, -1, 2]), 4).numpy()
    np.testing.assert_array_equal(out, [1, -2147483648, 3, -2147483648])
    assert tf.math.unsorted_segment_sum is not None


def test_segment_gradients_match_tf():
    w = tf.constant([1.0, 2.0, 3.0], tf.float64)
    g = _grads(lambda x: tf.reduce_sum(tf.math.segment_sum(x, [0, 0, 2]) * w), np.array([1.0, 2.0, 3.0]))[0]
    np.testing.assert_array_equal(g, [1.0, 1.0, 3.0])
    g = _grads(lambda x: tf.reduce_sum(tf.math.unsorted_segment_mean(x, [0, 0, 2], 3) * w),
               np.array([1.0, 2.0, 3.0]))[0]
    np.testing.assert_array_equal(g, [0.5, 0.5, 3.0])
    # Tied maxima share the gradient, as TF.
    g = _grads(lambda x: tf.math.unsorted_segment_max(x, tf.constant([0, 0, 0, 1]), 2),
               np.array([1.0, 2.0, 2.0, 0.5]))[0]
    np.testing.assert_array_equal(g, [0.0, 0.5, 0.5, 1.0])


def test_segment_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="segment ids are not increasing"):
        tf.math.segment_sum(tf.constant([1.0, 2.0, 3.0]), tf.constant([2, 0, 1]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"segment_ids\[1\] = 5 is out of range \[0, 2\)"):
        tf.math.unsorted_segment_sum(tf.constant([1.0, 2.0]), tf.constant([0, 5]), 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        tf.math.unsorted_segment_max(tf.constant([1.0, 2.0]), tf.constant([0, 5]), 2)


def test_bincount_matches_tf():
    np.testing.assert_array_equal(tf.math.bincount(tf.constant([1, 1, 3])).numpy(), [0, 2, 0, 1])
    assert tf.math.bincount(tf.constant([1, 1, 3])).dtype == tf.int32
    out = tf.math.bincount(tf.constant([1, 1, 3]), weights=tf.constant([0.5, 1.0, 2.0]))
    np.testing.assert_array_equal(out.numpy(), [0.0, 1.5, 0.0, 2.0])
    np.testing.assert_array_equal(tf.math.bincount(tf.constant([1, 1, 3]), minlength=6, maxlength=2).numpy(), [0, 2])
    np.testing.assert_array_equal(tf.math.bincount(tf.constant([[1, 1], [3, 0]])).numpy(), [1, 2, 0, 1])
    out = tf.math.bincount(tf.constant([1, 1, 3]), dtype=tf.float32)
    assert out.dtype == tf.float32
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be non-negative"):
        tf.math.bincount(tf.constant([-1, 1]))


def test_polyval_matches_tf():
    assert float(tf.math.polyval([1.0, 2.0, 3.0], tf.constant(2.0))) == 11.0
    assert float(tf.math.polyval([], tf.constant(2.0))) == 0.0
    g = _grads(lambda x: tf.math.polyval([tf.constant(1.0, tf.float64), tf.constant(2.0, tf.float64),
                                          tf.constant(3.0, tf.float64)], x), np.array([2.0, -1.0]))[0]
    np.testing.assert_array_equal(g, [6.0, 0.0])
    with pytest.raises(ValueError, match="coeffs must be list"):
        tf.math.polyval(tf.constant([1.0, 2.0]), 2.0)


def test_math_namespace_exports():
    for name in ("erf", "erfc", "lgamma", "digamma", "polygamma", "reduce_std", "reduce_variance",
                 "reduce_euclidean_norm", "xlogy", "xdivy", "divide_no_nan", "top_k", "segment_sum",
                 "unsorted_segment_sum", "unsorted_segment_mean", "unsorted_segment_max", "unsorted_segment_min",
                 "bincount", "polyval", "softplus", "log_sigmoid", "reduce_sum", "reduce_logsumexp"):
        assert callable(getattr(tf.math, name)), name


def test_polygamma_far_negative_matches_tf():
    out = tf.math.polygamma(tf.constant([1.0, 2.0], tf.float64),
                            tf.constant([-12.188463125736352, -11.755177848332918], tf.float64)).numpy()
    np.testing.assert_allclose(out, [31.609706462718965, -132.4415949914812], rtol=1e-13)


def test_integer_inputs_follow_tf_casting_rules():
    out = tf.math.unsorted_segment_mean(tf.constant([1, 2, 4]), [0, 0, 1], 2)
    assert out.dtype == tf.float64
    np.testing.assert_array_equal(out.numpy(), [1.5, 4.0])
    out = tf.math.divide_no_nan(tf.constant([1]), tf.constant([0]))
    assert out.dtype == tf.float64 and out.numpy()[0] == 0.0
    out = tf.math.bincount(tf.constant([1.0, 2.0]))  # arr is converted to int32
    assert out.dtype == tf.int32
    np.testing.assert_array_equal(out.numpy(), [0, 1, 1])
    assert int(tf.math.segment_sum(tf.constant([1, 2, 4]), [0, 0, 1])[0]) == 3
    with pytest.raises(tf.errors.InvalidArgumentError, match="Atan2"):
        tf.math.atan2(tf.constant([1]), tf.constant([0]))


def test_bincount_per_row_and_binary_output_match_tf():
    a = tf.constant([[1, 1, 3], [0, 2, 2]])
    np.testing.assert_array_equal(tf.math.bincount(a, axis=-1).numpy(), [[0, 2, 0, 1], [1, 0, 2, 0]])
    np.testing.assert_array_equal(tf.math.bincount(a, axis=-1, binary_output=True).numpy(),
                                  [[0, 1, 0, 1], [1, 0, 1, 0]])
    np.testing.assert_array_equal(tf.math.bincount(a, binary_output=True).numpy(), [1, 1, 1, 1])
    out = tf.math.bincount(a, axis=-1, weights=tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    assert out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), [[0, 3, 0, 3], [4, 0, 11, 0]])
    np.testing.assert_array_equal(tf.math.bincount(a, axis=-1, minlength=6, maxlength=3).numpy(),
                                  [[0, 2, 0], [1, 0, 2]])
    with pytest.raises(ValueError, match="mutually exclusive"):
        tf.math.bincount(a, weights=tf.ones((2, 3)), binary_output=True)
    with pytest.raises(ValueError, match="axis=1"):
        tf.math.bincount(a, axis=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="at most rank 2"):
        tf.math.bincount(tf.constant([[[1]]]), axis=-1)


def test_sorted_segment_reductions_match_tf():
    d, ids = tf.constant([1.0, 5.0, 2.0, 3.0]), tf.constant([0, 0, 2, 2])
    np.testing.assert_array_equal(tf.math.segment_mean(d, ids).numpy(), [3.0, 0.0, 2.5])
    np.testing.assert_array_equal(tf.math.segment_max(d, ids).numpy(), [5.0, 0.0, 3.0])  # empty -> 0
    np.testing.assert_array_equal(tf.math.segment_min(d, ids).numpy(), [1.0, 0.0, 2.0])
    np.testing.assert_array_equal(tf.math.segment_prod(d, ids).numpy(), [5.0, 1.0, 6.0])
    out = tf.math.segment_mean(tf.constant([1, 2, 4]), [0, 0, 1])
    assert out.dtype == tf.int32
    np.testing.assert_array_equal(out.numpy(), [1, 4])
    x = np.array([1.0, 5.0, 5.0, 3.0])
    np.testing.assert_array_equal(_grads(lambda v: tf.math.segment_max(v, ids), x)[0], [0, 1, 1, 0])
    np.testing.assert_array_equal(_grads(lambda v: tf.math.segment_mean(v, ids), x)[0], [0.5] * 4)
    np.testing.assert_array_equal(_grads(lambda v: tf.math.segment_prod(v, ids), x)[0], [5, 1, 3, 5])
    # A zero in a segment: its gradient is the product of the others, the others get 0.
    np.testing.assert_array_equal(_grads(lambda v: tf.math.segment_prod(v, ids), np.array([0.0, 5.0, 2.0, 3.0]))[0],
                                  [5, 0, 3, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="not increasing"):
        tf.math.segment_max(d, tf.constant([1, 0, 2, 2]))


def test_unsorted_prod_sqrt_n_in_top_k_confusion_matrix_match_tf():
    d, ids = tf.constant([1.0, 5.0, 2.0, 3.0]), tf.constant([0, 0, 2, 2])
    np.testing.assert_array_equal(tf.math.unsorted_segment_prod(d, ids, 4).numpy(), [5, 1, 6, 1])
    np.testing.assert_allclose(tf.math.unsorted_segment_sqrt_n(d, ids, 4).numpy(), [4.242641, 0, 3.535534, 0],
                               rtol=1e-6)
    np.testing.assert_array_equal(tf.math.unsorted_segment_prod(tf.constant([1, 5, 2]), [0, 0, -1], 2).numpy(), [5, 1])
    x = np.array([0.0, 5.0, 2.0, 3.0])
    np.testing.assert_array_equal(_grads(lambda v: tf.math.unsorted_segment_prod(v, ids, 3), x)[0], [5, 0, 3, 2])
    np.testing.assert_allclose(_grads(lambda v: tf.math.unsorted_segment_sqrt_n(v, ids, 3), x)[0],
                               [0.7071067811865475] * 4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Sqrt"):
        tf.math.unsorted_segment_sqrt_n(tf.constant([1, 2]), [0, 0], 1)
    out = tf.math.in_top_k([1, 0, 2], [[0.1, 0.5, 0.5], [0.3, 0.3, 0.4], [0.2, 0.2, 0.1]], 1)
    np.testing.assert_array_equal(out.numpy(), [True, False, False])  # ties at the boundary count
    out = tf.math.in_top_k(tf.constant([3, 0]), tf.constant([[0.1, 0.5, 0.5], [0.3, 0.3, 0.4]]), 2)
    np.testing.assert_array_equal(out.numpy(), [False, True])  # out-of-range target
    cm = tf.math.confusion_matrix([1, 2, 4], [2, 2, 4])
    assert cm.dtype == tf.int32 and cm.shape == (5, 5)
    assert cm.numpy()[1, 2] == 1 and cm.numpy()[2, 2] == 1 and cm.numpy()[4, 4] == 1 and cm.numpy().sum() == 3
    cm = tf.math.confusion_matrix([1, 2, 4], [2, 2, 4], num_classes=6, weights=[1.0, 2.0, 3.0], dtype=tf.float32)
    assert cm.shape == (6, 6) and cm.numpy()[2, 2] == 2.0 and cm.numpy()[4, 4] == 3.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of bound"):
        tf.math.confusion_matrix([1, 7], [0, 0], num_classes=3)


def test_erfinv_ndtri_zeta_cumulative_logsumexp_match_tf():
    y = np.array([-0.9, 0.0, 0.3, 1.0, -1.0, 1.5])
    out = tf.math.erfinv(tf.constant(y)).numpy()
    np.testing.assert_allclose(out[:3], [-1.1630871536766743, 0.0, 0.27246271472675443], rtol=1e-14)
    assert out[3] == np.inf and out[4] == -np.inf and np.isnan(out[5])
    # Deep in the tail we are more accurate than TF (3.458910737260051): mpmath gives 3.45891073727549878.
    np.testing.assert_allclose(tf.math.erfinv(tf.constant([0.999999], tf.float64)).numpy(), [3.45891073727549878],
                               rtol=1e-15)
    g = _grads(tf.math.erfinv, np.array([-0.9, 0.0, 0.3]))[0]
    np.testing.assert_allclose(g, [3.4280428114518418, 0.88622692545275794, 0.95452035884054931], rtol=1e-13)
    p = np.array([1e-10, 0.025, 0.5, 0.9, 1.0, 0.0])
    out = tf.math.ndtri(tf.constant(p)).numpy()
    np.testing.assert_allclose(out[:4], [-6.361340902404056, -1.9599639845400545, 0.0, 1.2815515655446004],
                               rtol=1e-14)
    assert out[4] == np.inf and out[5] == -np.inf
    np.testing.assert_allclose(_grads(tf.math.ndtri, p[:4])[0], [1.5357236981963818e+09, 17.110083080332725,
                                                                  2.5066282746310002, 5.6980598561170028],
                               rtol=1e-13)
    assert tf.math.erfinv(tf.constant([0.5])).dtype == tf.float32
    x, q = np.array([2.0, 3.0, 1.5, 4.0]), np.array([1.0, 0.5, 2.0, -1.5])
    np.testing.assert_allclose(tf.math.zeta(tf.constant(x), tf.constant(q)).numpy(),
                               [1.6449340668482266, 8.414398322117158, 1.6123753486854886, 32.4323793698646],
                               rtol=1e-14)
    gx, gq = _grads(tf.math.zeta, x, q)
    assert gx is None  # as TF
    np.testing.assert_allclose(gq, [-2.404113806319188, -48.70454551700121, -0.5122308858763756,
                                    -0.05229266658444346], rtol=1e-13)
    out = tf.math.zeta(tf.constant([1.0, 0.5], tf.float64), tf.constant([1.0, 1.0], tf.float64)).numpy()
    assert out[0] == np.inf and np.isnan(out[1])
    c = tf.constant([[1.0, 2.0, 3.0], [0.5, -1.0, 100.0]], tf.float64)
    np.testing.assert_allclose(tf.math.cumulative_logsumexp(c, axis=1).numpy(),
                               [[1.0, 2.313261687518223, 3.4076059644443806], [0.5, 0.7014132779827524, 100.0]],
                               rtol=1e-14)
    out = tf.math.cumulative_logsumexp(c, axis=1, exclusive=True, reverse=True).numpy()
    np.testing.assert_allclose(out[:, :2], [[3.313261687518223, 3.0], [100.0, 100.0]], rtol=1e-14)
    assert (out[:, 2] == -np.inf).all()


def test_small_tf_math_helpers_match_tf():
    np.testing.assert_array_equal(tf.math.rint(tf.constant([0.5, 1.5, -2.5, 2.6])).numpy(), [0, 2, -2, 3])
    np.testing.assert_array_equal(
        tf.math.multiply_no_nan(tf.constant([np.inf, np.nan, 2.0]), tf.constant([0.0, 0.0, 3.0])).numpy(), [0, 0, 6])
    gx, gy = _grads(tf.math.multiply_no_nan, np.array([1.0, 2.0]), np.array([0.0, 3.0]))
    np.testing.assert_array_equal(gx, [0.0, 3.0])
    np.testing.assert_array_equal(gy, [1.0, 2.0])
    assert _grads(lambda x: tf.math.rint(x * 1.3), np.array([1.0, 2.0]))[0] is None  # as TF
    np.testing.assert_array_equal(tf.math.reciprocal_no_nan(tf.constant([0.0, 2.0])).numpy(), [0.0, 0.5])
    np.testing.assert_allclose(tf.math.lbeta(tf.constant([[1.0, 2.0], [3.0, 4.5]], tf.float64)).numpy(),
                               [-0.69314718055994529, -4.38748049], rtol=1e-8)
    assert (tf.math.lbeta(tf.zeros((2, 0))).numpy() == -np.inf).all()
    assert float(tf.math.zero_fraction(tf.constant([0.0, 1.0, 0.0, 3.0]))) == 0.5
    np.testing.assert_array_equal(tf.math.invert_permutation([3, 4, 0, 2, 1]).numpy(), [2, 4, 3, 0, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="permutation"):
        tf.math.invert_permutation([0, 0])
    assert bool(tf.math.is_non_decreasing([1, 2, 2])) and not bool(tf.math.is_strictly_increasing([1, 2, 2]))
    assert bool(tf.math.is_strictly_increasing([]))
    np.testing.assert_allclose(tf.math.erfcinv(tf.constant([1e-10, 1.5])).numpy(), [4.572825, -0.4769363],
                               rtol=1e-6)
    np.testing.assert_array_equal(tf.math.accumulate_n([tf.ones(2), tf.ones(2)]).numpy(), [2.0, 2.0])


def test_xlog1py_nextafter_softsign_match_tf():
    np.testing.assert_allclose(tf.math.xlog1py(tf.constant([0.0, 0.0, 2.0]), tf.constant([-1.0, 3.0, 0.5])).numpy(),
                               [0.0, 0.0, 0.8109302], rtol=1e-6)
    gx, gy = _grads(tf.math.xlog1py, np.array([0.0, 0.0, 2.0]), np.array([-1.0, 3.0, 0.5]))
    np.testing.assert_allclose(gx, [0.0, 0.0, 0.4054651081081644])
    np.testing.assert_allclose(gy, [0.0, 0.0, 1.3333333333333333])
    assert tf.math.nextafter(tf.constant([1.0], tf.float64), tf.constant([2.0], tf.float64)).numpy()[0] == \
        np.nextafter(1.0, 2.0)
    ga, gb = _grads(lambda a, b: tf.math.nextafter(a, b) * 3.0, np.array([1.0]), np.array([2.0]))
    np.testing.assert_array_equal(ga, [3.0])
    np.testing.assert_array_equal(gb, [0.0])
    np.testing.assert_allclose(tf.math.softsign(tf.constant([1.0, -3.0])).numpy(), [0.5, -0.75])


def test_reduce_mean_of_inf_and_nan_warns_nothing():
    # TF prints no NumPy warning for a NaN mean; np.mean raised it from numpy's module, past tapeflow's filter.
    x = tf.constant([np.inf, -np.inf, 1.0], tf.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning, append=True)  # after tapeflow's own filter
        assert np.isnan(tf.reduce_mean(x).numpy())
        mean, var = tf.nn.moments(tf.reshape(x, [3, 1]), axes=[0])
        assert np.isnan(mean.numpy()).all() and np.isnan(var.numpy()).all()
        assert np.isnan(tf.reduce_mean(tf.zeros([0, 2]), axis=0).numpy()).all()
    assert [str(w.message) for w in caught] == []


def test_float32_tanh_saturates_where_tf_does():
    # TF's Eigen tanh is exactly 1 beyond |x| > 7.90738964 (pix2pix's generator output prints max 1.0)
    x = np.array([7.9, 7.9074, 8.0, 9.0, -8.5, 0.5], np.float32)
    y = tf.tanh(x).numpy()
    assert y[1:5].tolist() == [1.0, 1.0, 1.0, -1.0]
    np.testing.assert_allclose(y[[0, 5]], [0.9999998211860657, 0.46211713552474976], rtol=1e-6)
    np.testing.assert_allclose(tf.tanh(x.astype(np.float64)).numpy()[2], 0.999999774929676, rtol=1e-15)
