"""tf.linalg, tf.norm and the clipping functions: values, gradients and
errors pinned against TensorFlow 2.21 (values recorded from real TF)."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.ops import linalg_ops

A = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.1, 0.4, 4.0]])
X23 = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def grad(f, x):
    v = tf.Variable(np.asarray(x, dtype=np.float64))
    with tf.GradientTape() as tape:
        y = f(v)
    return tape.gradient(y, v).numpy()


# ---------------------------------------------------------------- values

def test_det_slogdet_logdet_inv_match_tf():
    m = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    assert tf.linalg.det(m).dtype == tf.float32
    close(tf.linalg.det(m), -2.0)
    sign, logabs = tf.linalg.slogdet(m)
    close(sign, -1.0)
    close(logabs, np.log(2.0))
    close(tf.linalg.logdet(tf.constant([[2.0, 1.0], [1.0, 2.0]])), 1.0986123)
    close(tf.linalg.inv(tf.constant([[2.0, 1.0], [1.0, 3.0]])), [[0.6, -0.2], [-0.2, 0.4]])
    close(tf.linalg.inv(tf.constant(A), adjoint=True), np.linalg.inv(A).T)


def test_batched_inverse_and_solve():
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (4, 3, 3)) + 3 * np.eye(3)
    b = rng.uniform(-1, 1, (4, 3, 2))
    close(tf.linalg.inv(a), np.linalg.inv(a))
    close(tf.linalg.solve(a, b), np.linalg.solve(a, b))
    close(tf.linalg.solve(a, b, adjoint=True), np.linalg.solve(np.swapaxes(a, -1, -2), b))
    close(tf.linalg.det(a), np.linalg.det(a))


def test_triangular_solve_reads_one_triangle_and_broadcasts():
    out = tf.linalg.triangular_solve(tf.constant(A), tf.ones((3, 1), tf.float64))
    close(out, np.linalg.solve(np.tril(A), np.ones((3, 1))))
    up = tf.linalg.triangular_solve(tf.constant(A), tf.ones((3, 1), tf.float64), lower=False, adjoint=True)
    close(up, np.linalg.solve(np.triu(A).T, np.ones((3, 1))))
    bc = tf.linalg.triangular_solve(tf.eye(2, batch_shape=[3]), tf.ones((2, 1)))
    assert bc.shape == (3, 2, 1)
    # A zero pivot gives inf, as TF (no error).
    close(tf.linalg.triangular_solve(tf.constant([[0.0, 0.0], [1.0, 1.0]]), tf.ones((2, 1))), [[np.inf], [-np.inf]])


def test_cholesky_and_cholesky_solve():
    spd = tf.constant([[2.0, 1.0], [1.0, 2.0]])
    chol = tf.linalg.cholesky(spd)
    close(chol, np.linalg.cholesky(spd.numpy()))
    close(tf.linalg.cholesky_solve(chol, tf.ones((2, 1))), [[0.33333334], [0.3333333]])


def test_cholesky_of_non_positive_definite_gives_nan_like_tf():
    out = tf.linalg.cholesky(tf.constant([[[1.0, 2.0], [2.0, 1.0]], [[4.0, 0.0], [0.0, 9.0]]]))
    assert np.isnan(out.numpy()[0][np.tril_indices(2)]).all() and out.numpy()[0, 0, 1] == 0
    close(out[1], [[2.0, 0.0], [0.0, 3.0]])


def test_svd_returns_s_u_v_with_v_not_transposed():
    s, u, v = tf.linalg.svd(tf.constant(X23))
    close(s, [9.525518, 0.51429987], 1e-5)
    assert u.shape == (3, 2) and v.shape == (2, 2)
    close(np.abs(u), np.abs([[0.22984774, -0.8834608], [0.52474487, -0.2407829], [0.81964207, 0.4018962]]), 1e-5)
    close(np.abs(v), np.abs([[0.61962956, 0.78489447], [0.78489447, -0.61962956]]), 1e-5)
    close(u.numpy() @ np.diag(s.numpy()) @ v.numpy().T, X23)
    s_full, u_full, v_full = tf.linalg.svd(tf.constant(X23), full_matrices=True)
    assert (u_full.shape, v_full.shape) == ((3, 3), (2, 2))
    close(tf.linalg.svd(tf.constant(X23), compute_uv=False), s)


def test_qr_matches_tf_sign_convention():
    q, r = tf.linalg.qr(tf.constant(X23, dtype=tf.float32))
    close(q, [[-0.16903079, 0.897085], [-0.5070925, 0.2760267], [-0.8451542, -0.34503305]], 1e-5)
    close(r, [[-5.91608, -7.437357], [0.0, 0.82807845]], 1e-5)
    qf, rf = tf.linalg.qr(tf.constant(X23), full_matrices=True)
    assert (qf.shape, rf.shape) == ((3, 3), (3, 2))


def test_eigh_ascending_and_reads_lower_triangle():
    e, v = tf.linalg.eigh(tf.constant([[2.0, 5.0], [1.0, 3.0]]))  # upper 5 is ignored
    close(e, [1.3819659, 3.6180334], 1e-5)
    close(np.abs(v), [[0.8506507, 0.52573115], [0.52573115, 0.8506507]], 1e-5)
    close(tf.linalg.eigvalsh(tf.constant([[2.0, 1.0], [1.0, 3.0]])), e)


NORM_X = [[1.0, -2.0], [3.0, 4.0]]
NORM_CASES = [
    ("euclidean", None, 5.477226), ("euclidean", 0, [3.1622777, 4.472136]), ("euclidean", -1, [2.236068, 5.0]),
    ("euclidean", (-2, -1), 5.477226), ("fro", [0, 1], 5.477226),
    (1, None, 10.0), (1, 0, [4.0, 6.0]), (1, -1, [3.0, 7.0]), (1, [0, 1], 6.0),
    (2, None, 5.477226), (2, 0, [3.1622777, 4.472136]), (2, [0, 1], 5.1166735),
    (np.inf, None, 4.0), (np.inf, 0, [3.0, 4.0]), (np.inf, -1, [2.0, 4.0]), (np.inf, [0, 1], 7.0),
    (3, None, 4.641589), (3, -1, [2.0800838, 4.4979415]), (0.5, None, 37.77657), (0.5, 0, [7.4641023, 11.656855]),
]


@pytest.mark.parametrize("ord_, axis, expected", NORM_CASES)
def test_norm_matches_tf(ord_, axis, expected):
    out = tf.norm(tf.constant(NORM_X), ord=ord_, axis=axis)
    assert out.dtype == tf.float32
    close(out, expected, 1e-5)


def test_norm_keepdims_and_batched_matrix_norm():
    assert tf.norm(tf.constant(NORM_X), axis=1, keepdims=True).shape == (2, 1)
    assert tf.norm(tf.constant(NORM_X), keepdims=True).shape == (1, 1)
    close(tf.norm(tf.reshape(tf.range(8.0), (2, 2, 2)), ord=1, axis=[1, 2]), [4.0, 12.0])
    assert tf.linalg.norm is tf.norm


@pytest.mark.parametrize("ord_, axis", [("fro", None), ("fro", 0), (0, None), (3, [0, 1]), (-1, [0, 1]),
                                        (0.5, [0, 1])])
def test_norm_rejects_bad_ord_with_value_error(ord_, axis):
    with pytest.raises(ValueError, match="'ord' must be a supported"):
        tf.norm(tf.constant(NORM_X), ord=ord_, axis=axis)


def test_norm_rejects_bad_axis_and_int_input():
    with pytest.raises(ValueError, match="'axis' must be None, an integer, or a tuple of 2 unique integers"):
        tf.norm(tf.constant(NORM_X), axis=[0, 1, 2])
    with pytest.raises(InvalidArgumentError):
        tf.norm(tf.constant([3, 4]))


def test_diagonals_bands_trace_matvec():
    m = tf.reshape(tf.range(6.0), (2, 3))
    close(tf.linalg.diag([1.0, 2.0]), [[1, 0], [0, 2]])
    close(tf.linalg.diag([1.0, 2.0], k=1), [[0, 1, 0], [0, 0, 2], [0, 0, 0]])
    close(tf.linalg.diag([1.0, 2.0], padding_value=9), [[1, 9], [9, 2]])
    close(tf.linalg.diag_part(m), [0.0, 4.0])
    close(tf.linalg.diag_part(m, k=1), [1.0, 5.0])
    close(tf.linalg.diag_part(m, k=-1), [3.0])
    close(tf.linalg.set_diag(tf.zeros((2, 3)), [1.0, 2.0]), [[1, 0, 0], [0, 2, 0]])
    close(tf.linalg.set_diag(tf.zeros((2, 3)), [1.0, 2.0], k=1), [[0, 1, 0], [0, 0, 2]])
    close(tf.linalg.band_part(tf.ones((3, 3)), 1, 0), [[1, 0, 0], [1, 1, 0], [0, 1, 1]])
    close(tf.linalg.trace(m), 4.0)
    close(tf.linalg.matvec(tf.ones((2, 3)), tf.ones((3,))), [3.0, 3.0])
    close(tf.linalg.matrix_transpose(tf.zeros((4, 2, 3))).shape, (4, 3, 2))


def test_diag_errors():
    with pytest.raises(InvalidArgumentError, match="MatrixDiagV3"):
        tf.linalg.diag([1.0, 2.0], num_rows=3, num_cols=4)
    with pytest.raises(InvalidArgumentError, match="MatrixSetDiagV3"):
        tf.linalg.set_diag(tf.zeros((2, 3)), [1.0, 2.0, 3.0])
    with pytest.raises(NotImplementedError, match="single integer diagonal"):
        tf.linalg.diag_part(tf.zeros((3, 3)), k=(0, 1))


def test_lstsq_and_pinv_match_tf():
    a = tf.constant([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    b = tf.constant([[1.0], [2.0], [2.0]])
    close(tf.linalg.lstsq(a, b), [[1.1666665], [0.50000006]], 1e-5)
    close(tf.linalg.lstsq(a, b, l2_regularizer=0.5), [[0.92682934], [0.58536583]], 1e-5)
    close(tf.linalg.lstsq(a, b, fast=False), [[1.1666665], [0.50000006]], 1e-5)
    wide = tf.constant([[1.0, 0.0, 2.0], [1.0, 1.0, 1.0]])
    close(tf.linalg.lstsq(wide, tf.constant([[1.0], [2.0]])), [[0.6666667], [1.1666666], [0.16666675]], 1e-5)
    close(tf.linalg.pinv(tf.constant([[1.0, 2.0], [2.0, 4.0]])), [[0.04, 0.08], [0.08, 0.16]], 1e-5)


def test_einsum_and_tensordot_resolve_to_top_level_when_defined():
    for name in ("einsum", "tensordot"):
        if hasattr(tf, name):
            assert getattr(tf.linalg, name) is getattr(tf, name)
    with pytest.raises(AttributeError):
        tf.linalg.no_such_function  # noqa: B018


# ---------------------------------------------------------------- clipping

def test_clip_by_norm_matches_tf():
    close(tf.clip_by_norm(tf.constant([3.0, 4.0]), 1.0), [0.6, 0.8])
    close(tf.clip_by_norm(tf.constant([[3.0, 4.0], [0.3, 0.4]]), 1.0, axes=[1]), [[0.6, 0.8], [0.3, 0.4]])
    close(tf.clip_by_norm(tf.zeros(2), 1.0), [0.0, 0.0])
    with pytest.raises(InvalidArgumentError):
        tf.clip_by_norm(tf.constant([3, 4]), 1)
    sl = tf.clip_by_norm(tf.IndexedSlices(tf.constant([[3.0, 4.0]]), tf.constant([1]), tf.constant([3, 2])), 1.0)
    assert isinstance(sl, tf.IndexedSlices)
    close(sl.values, [[0.6, 0.8]])


def test_clip_by_global_norm_matches_tf():
    clipped, norm = tf.clip_by_global_norm([tf.constant([3.0, 4.0]), None, tf.constant([12.0])], 5.0)
    close(norm, 13.0)
    assert clipped[1] is None and isinstance(clipped, list)
    close(clipped[0], [1.1538461, 1.5384616])
    close(clipped[2], [4.6153846])
    inf_clipped, inf_norm = tf.clip_by_global_norm([tf.constant([np.inf, 4.0])], 5.0)
    assert np.isinf(inf_norm.numpy()) and np.isnan(inf_clipped[0].numpy()).all()
    sl, n = tf.clip_by_global_norm([tf.IndexedSlices(tf.constant([[3.0, 4.0]]), tf.constant([0]),
                                                     tf.constant([3, 2]))], 1.0)
    close(n, 5.0)
    assert isinstance(sl[0], tf.IndexedSlices)
    close(sl[0].values, [[0.6, 0.8]])
    close(tf.clip_by_global_norm([tf.constant([3.0, 4.0])], 1.0, use_norm=tf.constant(10.0))[0][0], [0.3, 0.4])


def test_global_norm_and_its_errors():
    close(tf.linalg.global_norm([tf.constant([3.0, 4.0]), None]), 5.0)
    with pytest.raises(TypeError, match="should be a sequence of tensors"):
        tf.clip_by_global_norm(tf.constant([3.0, 4.0]), 5.0)
    with pytest.raises(InvalidArgumentError):
        tf.linalg.global_norm([tf.constant([3.0, 4.0]), tf.constant([1.0], tf.float64)])


def test_clip_by_average_norm_matches_tf_compat_v1():
    x = tf.constant([[3.0, 4.0], [1.0, 2.0]])
    close(tf.clip_by_average_norm(x, 0.5), [[1.0954452, 1.4605935], [0.36514837, 0.73029673]])
    close(tf.clip_by_average_norm(x, 5.0), x)


# ---------------------------------------------------------------- errors

def test_inverse_errors_match_tf():
    with pytest.raises(InvalidArgumentError, match=r"Input is not invertible.*\[Op:MatrixInverse\]"):
        tf.linalg.inv(tf.constant([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(InvalidArgumentError, match="Input matrix must be square"):
        tf.linalg.inv(tf.ones((2, 3)))
    with pytest.raises(InvalidArgumentError, match="rank >= 2"):
        tf.linalg.inv(tf.ones((2,)))
    with pytest.raises(InvalidArgumentError, match="int32 is not in the list of allowed values"):
        tf.linalg.det(tf.ones((2, 2), tf.int32))


def test_solve_errors_match_tf():
    with pytest.raises(InvalidArgumentError, match=r"not invertible.*\[Op:MatrixSolve\]"):
        tf.linalg.solve(tf.constant([[1.0, 2.0], [2.0, 4.0]]), tf.ones((2, 1)))
    with pytest.raises(InvalidArgumentError, match="same batch shape"):
        tf.linalg.solve(tf.eye(2, batch_shape=[3]), tf.ones((2, 1)))
    with pytest.raises(InvalidArgumentError, match="same number of rows"):
        tf.linalg.solve(tf.eye(2), tf.ones((3, 1)))
    with pytest.raises(InvalidArgumentError, match="float64"):
        tf.linalg.solve(tf.eye(2), tf.ones((2, 1), tf.float64))


# ---------------------------------------------------------------- gradients vs TF

GRAD_CASES = {
    "det": (lambda v: tf.linalg.det(v), [[2.0, 1.0], [1.0, 3.0]], [[3.0, -1.0], [-1.0, 2.0]]),
    "svd": (lambda v: tf.reduce_sum(tf.linalg.svd(v, compute_uv=False) ** 2 * [1.0, 2.0, 3.0]), A,
            [[9.2325133147, 1.4659537794, -0.4124197374], [1.7865832493, 11.10802426, -2.2666001063],
             [-1.7687854995, -1.5518295592, 9.8987089034]]),
    "eigvalsh": (lambda v: tf.reduce_sum(tf.linalg.eigvalsh(v) * [1.0, 2.0, 3.0]), A,
                 [[1.3462928011, 0.0, 0.0], [1.1301737577, 1.9359550628, 0.0], [0.3346426468, 0.8470629297,
                                                                                2.7177521361]]),
    "eigh-vectors-gauge": (lambda v: tf.reduce_sum(tf.linalg.eigh(v)[1] ** 2 * [1.0, 2.0, 3.0]), A, np.zeros((3, 3))),
    "cholesky": (lambda v: tf.reduce_sum(tf.linalg.cholesky(v) * [1.0, 2.0, 3.0]), A + A.T,
                 [[0.2673660635, -0.0234280146, -0.0376803743], [-0.0234280146, 0.4223029871, 0.4151768072],
                  [-0.0376803743, 0.4151768072, 0.5339464713]]),
    "qr": (lambda v: tf.reduce_sum(tf.linalg.qr(v)[1] * [1.0, 2.0, 3.0]), A,
           [[-1.0373370328, -1.0065036551, -1.2755182192], [-0.1313706815, -1.8453599183, -4.4077007217],
            [-0.3225818146, -6.1823862855, 2.4382837449]]),
    "triangular_solve": (lambda v: tf.reduce_sum(tf.linalg.triangular_solve(v, tf.ones((3, 1), tf.float64))), A,
                         [[-0.16875, 0.0, 0.0], [-0.15, -0.05, 0.0], [-0.125, -0.0416666667, -0.0552083333]]),
    "lstsq": (lambda v: tf.reduce_sum(tf.linalg.lstsq(v, tf.ones((3, 1), tf.float64), l2_regularizer=0.1)), A,
              [[-0.1278286429, -0.0813801244, -0.0856592676], [-0.0589058867, -0.0367325763, -0.0389718369],
               [-0.0630351582, -0.0395850932, -0.0418848137]]),
    "pinv": (lambda v: tf.reduce_sum(tf.linalg.pinv(v) * [1.0, 2.0, 3.0]), A,
             [[-0.0085184939, -0.2478476096, -0.2778651597], [-0.0036553239, -0.106352519, -0.1192331842],
              [-0.0040261539, -0.117141905, -0.1313293043]]),
    "norm-ord2": (lambda v: tf.norm(v, ord=2, axis=[0, 1]), A,
                  [[0.0919353965, 0.1516986966, 0.2832295952], [0.1163058447, 0.1919113391, 0.3583087536],
                   [0.2317324923, 0.3823719524, 0.7139089244]]),
    "norm-ord1": (lambda v: tf.norm(v, ord=1, axis=[0, 1]), A, [[0, 0, 1.0], [0, 0, 1.0], [0, 0, 1.0]]),
    "norm-p3": (lambda v: tf.norm(v, ord=3), A,
                [[1.8419536812e-01, 4.6048842029e-02, 1.1512210507e-02],
                 [4.6048842029e-02, 4.1443957826e-01, 1.8419536812e-03],
                 [4.6048842029e-04, 7.3678147247e-03, 7.3678147247e-01]]),
    "logdet": (lambda v: tf.linalg.logdet(v), A + A.T,
               [[0.3018246325, -0.0990876837, -0.0152052712], [-0.0990876837, 0.2004561581, -0.0076026356],
                [-0.0152052712, -0.0076026356, 0.126710593]]),
    "clip_by_norm": (lambda v: tf.reduce_sum(tf.clip_by_norm(v, 1.0) * [1.0, 2.0]), [3.0, 4.0], [-0.064, 0.048]),
    "clip_by_norm-zero": (lambda v: tf.reduce_sum(tf.clip_by_norm(v, 1.0)), [0.0, 0.0], [1.0, 1.0]),
    "clip_by_global_norm": (lambda v: tf.reduce_sum(tf.clip_by_global_norm([v, v * 2], 1.0)[0][1]), [3.0, 4.0],
                            [0.0286216701, -0.0214662526]),
}


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_gradient_matches_tf(case):
    f, x, expected = GRAD_CASES[case]
    close(grad(f, x), expected, 1e-7)


def test_norm_gradient_at_zero_is_nan_like_tf():
    assert np.isnan(grad(lambda v: tf.norm(v), [0.0, 0.0])).all()


def test_qr_full_matrices_tall_gradient_is_not_implemented():
    with pytest.raises(NotImplementedError, match="full_matrices"):
        grad(lambda v: tf.reduce_sum(tf.linalg.qr(v, full_matrices=True)[1]), X23)


# ---------------------------------------------------------------- shape rules (graph tracing)

def test_shape_rules_allow_unknown_dims():
    f64 = np.dtype(np.float64)
    assert linalg_ops.SVD.shape([((None, 5, 3), f64)], full_matrices=False, compute_uv=True) == [
        ((None, 3), f64), ((None, 5, 3), f64), ((None, 3, 3), f64)]
    assert linalg_ops.QR.shape([((2, 5, 3), f64)], full_matrices=True) == [((2, 5, 5), f64), ((2, 5, 3), f64)]
    assert linalg_ops.MATRIX_DETERMINANT.shape([((None, 3, 3), f64)]) == [((None,), f64)]
    assert linalg_ops.MATRIX_DIAG_PART.shape([((None, None, 4), f64)], k=0) == [((None, None), f64)]
    assert linalg_ops.MATRIX_TRIANGULAR_SOLVE.shape([((None, 3, 3), f64), ((3, 2), f64)], lower=True,
                                                    adjoint=False) == [((None, 3, 2), f64)]
    assert linalg_ops.SELF_ADJOINT_EIG.shape([((4, 3, 3), f64)], compute_v=True) == [((4, 3), f64),
                                                                                      ((4, 3, 3), f64)]


def test_half_precision_runs_through_float32_lapack():
    a = tf.constant([[2.0, 1.0], [1.0, 3.0]], tf.float16)
    assert tf.linalg.inv(a).dtype == tf.float16
    close(tf.linalg.det(a), 5.0, 1e-3)
    s, u, v = tf.linalg.svd(a)
    assert (s.dtype, u.dtype, v.dtype) == (tf.float16,) * 3


def test_complex_matrices_are_not_implemented():
    with pytest.raises(NotImplementedError, match="complex"):
        tf.linalg.inv(tf.constant([[1 + 1j, 0], [0, 1]]))


def test_normalize_returns_unit_tensor_and_norm():
    unit, n = tf.linalg.normalize(tf.constant([[3.0, 4.0], [6.0, 8.0]]), axis=1)
    close(unit, [[0.6, 0.8], [0.6, 0.8]])
    close(n, [[5.0], [10.0]])


def test_docstring_examples_run():
    import doctest

    assert doctest.testmod(linalg_ops, extraglobs={"tf": tf}).failed == 0


# ---------------------------------------------------------------- 1st and 2nd order vs TF, batched
# Each case: (input, expression of X). Pinned: <grad, c> and <H @ d, c> for the
# loss sum(f(X) * w), where c = cos(0, 1, 2, ...) and w, d are seeded draws;
# values recorded from TensorFlow 2.21 (float64, gauge-invariant losses).

_rng5 = np.random.default_rng(5)
_A = _rng5.normal(size=(2, 4, 4))
_SPD = _A @ np.swapaxes(_A, -1, -2) + 4 * np.eye(4)
_W = _rng5.normal(size=(2, 3, 5))
_T = _rng5.normal(size=(2, 5, 3))
_B = _rng5.normal(size=(2, 4, 2))
_INPUTS = {"A": _A, "SPD": _SPD, "W": _W, "T": _T}
_EYE4 = np.eye(4)

TF_HVP_CASES = {
    'qr_wide': ('W', 'tf.linalg.qr(X)[0] * 1.3 + 0', -2.597309725588583, 6.266069670307874),
    'qr_wide_r': ('W', 'tf.linalg.qr(X)[1]', 1.5373296029603474, -9.29743076079258),
    'qr_tall_q': ('T', 'tf.linalg.qr(X)[0]', -0.04552922645616216, -2.708362219279013),
    'qr_tall_r': ('T', 'tf.linalg.qr(X)[1]', -1.493428520306903, 13.299722695150418),
    'svd_wide_uu': ('W', 'tf.linalg.svd(X)[1] ** 2', 1.3644419653702813, 3.614762286676976),
    'svd_wide_vv': ('W', 'tf.linalg.svd(X)[2] ** 2', -0.12414326934771339, -0.6439831352239793),
    'svd_tall_full_uu': ('T', 'tf.linalg.svd(X[:, :4, :], full_matrices=True)[1] ** 2',
        -0.33139878046687016, -23.847103037610168),
    'svd_wide_full_vv': ('W', 'tf.linalg.svd(X[:, :, :4], full_matrices=True)[2] ** 2',
        -1.9110952746720253, 10.590423537313638),
    'svd_s': ('T', 'tf.linalg.svd(X, compute_uv=False)', -2.6032235910642227, 0.2725611947018859),
    'eigh_vv': ('SPD', 'tf.linalg.eigh(X)[1] ** 2', 0.236933439866231, 4.019156753465456),
    'eigh_e': ('SPD', 'tf.linalg.eigh(X)[0]', -0.5899597013672636, -0.26574351378183775),
    'chol': ('SPD', 'tf.linalg.cholesky(X)', 0.41607795314676044, -0.013885356754017933),
    'inv': ('SPD', 'tf.linalg.inv(X + _A)', -0.0991252656144272, 0.07103547112440478),
    'inv_adj': ('SPD', 'tf.linalg.inv(X + _A, adjoint=True)', -0.032730053508194704, 0.03258229719275732),
    'det': ('SPD', 'tf.linalg.det(X / 4.0)', -0.1762795595048906, 0.4108642247735682),
    'slogdet': ('A', 'tf.linalg.slogdet(X)[1]', -3.1754527842622062, 21.968755328350998),
    'solve_a': ('A', 'tf.linalg.solve(X + 3 * _EYE4, _B)', -0.8902189985570179, 0.8379158121847584),
    'solve_adj': ('A', 'tf.linalg.solve(X + 3 * _EYE4, _B, adjoint=True)', -0.5466848683235964, -0.549667894460469),
    'tri_lower': ('SPD', 'tf.linalg.triangular_solve(X, _B)', 0.06805463093954758, -0.0026616141589715144),
    'tri_upper_adj': ('SPD', 'tf.linalg.triangular_solve(X, _B, lower=False, adjoint=True)',
        0.12305655009097319, -0.025470302333828625),
    'chol_solve': ('SPD', 'tf.linalg.cholesky_solve(tf.linalg.cholesky(X), _B)',
        0.10509153481525357, 0.00365342305144236),
    'logdet': ('SPD', 'tf.linalg.logdet(X)', -0.0194131705244414, -0.06565272465369501),
    'pinv': ('W', 'tf.linalg.pinv(X)', 2.4386083081257204, -7.5745129806028615),
    'lstsq': ('T', 'tf.linalg.lstsq(X, _T[..., :2], l2_regularizer=0.2)', -0.20597822887200434, 8.8276597227039),
    'lstsq_wide': ('W', 'tf.linalg.lstsq(X, _W[..., :2])', -1.7670158555127855, 0.4612308402454427),
    'norm2': ('W', 'tf.norm(X, ord=2, axis=[1, 2])', 0.8484844643018283, 1.579129655912335),
    'normfro': ('W', 'tf.norm(X, axis=[1, 2])', 1.4346629980884649, 1.2761185395461494),
    'norminf': ('W', 'tf.norm(X, ord=np.inf, axis=[1, 2])', -1.6763856633827412, 0.0),
    'normp': ('W', 'tf.norm(X, ord=1.5, axis=-1)', 1.968056793488361, 0.8697576350980413),
    'vnorminf': ('W', 'tf.norm(X, ord=np.inf)', 0.654566959768554, 0.0),
    'clip_norm': ('W', 'tf.clip_by_norm(X, 1.0, axes=[2])', 1.1157672286933102, 0.8187279835957424),
    'clip_global': ('W', 'tf.clip_by_global_norm([X, X * 2.0], 2.0)[0][1]', 0.2856944078160892, 0.2922020424482351),
    'global_norm': ('W', 'tf.linalg.global_norm([X, X ** 2])', 4.184547370388771, 2.54051631596559),
    'diag_part': ('W', 'tf.linalg.diag_part(X, k=1) ** 2', -3.0367900575996463, 1.219194076911889),
    'set_diag': ('W', 'tf.linalg.set_diag(X, X[:, :, 0] ** 2)', 4.877498137187674, 1.769094663763508),
    'band': ('W', 'tf.linalg.band_part(X, 1, 2) ** 2', 3.5637328697367154, 6.519183017122835),
    'trace': ('A', 'tf.linalg.trace(X @ X)', 4.583166026801671, -6.36379720052139),
    'matvec': ('A', 'tf.linalg.matvec(X, X[:, 0, :])', -1.9705842594826484, 6.428352733667166),
    'normalize': ('W', 'tf.linalg.normalize(X, axis=-1)[0]', 1.1157672286933102, 0.8187279835957424),
}


@pytest.mark.parametrize("case", sorted(TF_HVP_CASES))
def test_first_and_second_order_match_tf(case):
    inp, expr, want_g, want_h = TF_HVP_CASES[case]
    x = tf.Variable(_INPUTS[inp])
    with tf.GradientTape(persistent=True) as outer:
        with tf.GradientTape() as inner:
            y = eval(expr, {"tf": tf, "np": np, "X": x, "_A": _A, "_B": _B, "_T": _T, "_W": _W, "_EYE4": _EYE4})  # noqa: S307
            w = tf.constant(np.random.default_rng(1).uniform(0.5, 1.5, size=tuple(y.shape)))
            loss = tf.reduce_sum(y * w)
        g = inner.gradient(loss, x)
        s = tf.reduce_sum(g * tf.constant(np.random.default_rng(2).normal(size=g.shape)))
    h = outer.gradient(s, x)
    c = np.cos(np.arange(g.numpy().size).reshape(g.shape))
    np.testing.assert_allclose(float(np.sum(g.numpy() * c)), want_g, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(float(np.sum(h.numpy() * c)), want_h, rtol=1e-6, atol=1e-9)


def test_edge_cases_match_tf():
    with pytest.raises(InvalidArgumentError, match="lower_diag_index is out of bound: 5"):
        tf.linalg.diag_part(tf.zeros((2, 3)), k=5)
    with pytest.raises(InvalidArgumentError, match=r"num_lower must be negative or less or equal to number of rows"):
        tf.linalg.band_part(tf.ones((2, 2)), 5, 5)
    s, u, v = tf.linalg.svd(tf.constant([[np.nan, 1.0], [1.0, 1.0]]))  # failed SVD: NaNs, no error
    assert np.isnan(s.numpy()).all() and np.isnan(u.numpy()).all()
    with pytest.raises(InvalidArgumentError, match="Self-adjoint eigen decomposition was not successful"):
        tf.linalg.eigh(tf.constant([[np.nan, 1.0], [1.0, 1.0]]))
    with pytest.raises(InvalidArgumentError, match="Input is not invertible"):
        tf.linalg.inv(tf.constant([[np.nan, 1.0], [1.0, 1.0]]))
    close(tf.linalg.det(tf.zeros((0, 0))), 1.0)
    assert np.isnan(tf.linalg.logdet(-tf.eye(2)).numpy())
    close(tf.clip_by_norm(tf.constant([3.0, 4.0]), -1.0), [0.0, 0.0])
    close(tf.clip_by_norm(tf.constant([3.0, 4.0], tf.float64), tf.constant(1.0)), [0.6, 0.8])
    gn = tf.linalg.global_norm([None])
    assert gn.dtype == tf.float32 and gn.numpy() == 0.0
    clipped, norm = tf.clip_by_global_norm([], 1.0)
    assert clipped == [] and norm.numpy() == 0.0


def test_vectorized_jacobians_need_no_per_row_loop():
    import warnings

    x = tf.constant(A + A.T + 4 * np.eye(3))
    b = tf.constant(np.ones((2, 3, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # the per-row fallback warns
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([x, b])
            ys = [tf.linalg.inv(x), tf.linalg.det(x), tf.linalg.slogdet(x)[1], tf.linalg.cholesky(x),
                  tf.linalg.qr(x)[1], tf.linalg.svd(x)[0], tf.linalg.eigh(x)[0], tf.linalg.eigvalsh(x),
                  tf.linalg.triangular_solve(x, b), tf.linalg.set_diag(x, tf.linalg.diag_part(x) ** 2),
                  tf.linalg.solve(x, b[0]), tf.linalg.band_part(x, 0, 1)]
        for y in ys:
            for src in (x, b):
                vec = tape.jacobian(y, src)
                loop = tape.jacobian(y, src, experimental_use_pfor=False)
                assert (vec is None) == (loop is None)
                if vec is not None:
                    close(vec, loop, 1e-10)


def test_cross_and_matrix_rank_match_tf():
    from tapeflow.framework.errors import FailedPreconditionError

    close(tf.linalg.cross(tf.constant([1.0, 0, 0]), tf.constant([0.0, 1, 0])), [0.0, 0.0, 1.0])
    with pytest.raises(FailedPreconditionError, match="only defined for 3-element vectors"):
        tf.linalg.cross(tf.ones(2), tf.ones(2))
    with pytest.raises(InvalidArgumentError, match=r"Both inputs must be of same shape: \[2,3\] vs. \[3\]"):
        tf.linalg.cross(tf.ones((2, 3)), tf.ones(3))
    rank = tf.linalg.matrix_rank(tf.constant([[1.0, 2.0], [2.0, 4.0]]))
    assert rank.dtype == tf.int32 and rank.numpy() == 1
    batch = tf.constant(np.stack([np.eye(3), np.diag([1.0, 1.0, 0.0])]))
    assert tf.linalg.matrix_rank(batch).numpy().tolist() == [3, 2]
