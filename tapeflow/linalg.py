"""``tf.linalg``: decompositions, solves, diagonals and norms.

``tf.linalg.einsum`` and ``tf.linalg.tensordot`` are the top-level ``tf.einsum`` / ``tf.tensordot``
(defined with the indexing ops); ``tf.linalg.l2_normalize`` is ``tf.nn.l2_normalize``.
"""

from tapeflow.ops.array_ops import eye  # noqa: F401
from tapeflow.ops.indexing_ops import einsum, tensordot  # noqa: F401
from tapeflow.ops.linalg_ops import (  # noqa: F401
    adjoint, band_part, cholesky, cholesky_solve, cross, det, diag, diag_part, eigh, eigvalsh, global_norm, inv, logdet,
    lstsq, matrix_rank, matrix_transpose, matvec, norm, normalize, pinv, qr, set_diag, slogdet, solve, svd, tensor_diag,
    tensor_diag_part, trace, triangular_solve,
)
from tapeflow.ops.math_ops import matmul  # noqa: F401
from tapeflow.ops.nn.normalization import l2_normalize  # noqa: F401


def _pade(matrix, b: list, order: int):
    """TF's Pade approximant of ``exp(matrix)`` of ``order`` (3, 5, 7, 9, 13): the pair ``(U, V)``."""
    from tapeflow.ops import array_ops, math_ops

    b = [math_ops.cast(x, matrix.dtype) for x in b]
    shape = array_ops.shape(matrix)
    ident = eye(shape[-2], batch_shape=shape[:-2], dtype=matrix.dtype)
    m2 = matmul(matrix, matrix)
    if order == 3:
        return matmul(matrix, m2 + b[1] * ident), b[2] * m2 + b[0] * ident
    m4 = matmul(m2, m2)
    if order == 5:
        return matmul(matrix, m4 + b[3] * m2 + b[1] * ident), b[4] * m4 + b[2] * m2 + b[0] * ident
    m6 = matmul(m4, m2)
    if order == 7:
        u = matmul(matrix, m6 + b[5] * m4 + b[3] * m2 + b[1] * ident)
        return u, b[6] * m6 + b[4] * m4 + b[2] * m2 + b[0] * ident
    if order == 9:
        m8 = matmul(m6, m2)
        u = matmul(matrix, m8 + b[7] * m6 + b[5] * m4 + b[3] * m2 + b[1] * ident)
        return u, b[8] * m8 + b[6] * m6 + b[4] * m4 + b[2] * m2 + b[0] * ident
    tmp_u = matmul(m6, m6 + b[11] * m4 + b[9] * m2) + b[7] * m6 + b[5] * m4 + b[3] * m2 + b[1] * ident
    tmp_v = b[12] * m6 + b[10] * m4 + b[8] * m2
    return matmul(matrix, tmp_u), matmul(m6, tmp_v) + b[6] * m6 + b[4] * m4 + b[2] * m2 + b[0] * ident


_PADE = {
    3: [120.0, 60.0, 12.0],
    5: [30240.0, 15120.0, 3360.0, 420.0, 30.0],
    7: [17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0],
    9: [17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0, 110880.0, 3960.0, 90.0],
    13: [64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
         10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0],
}


def expm(input, name=None):  # noqa: A002 - TF's name
    """``tf.linalg.expm``: the matrix exponential of each ``[..., M, M]`` matrix, TF's algorithm (Pade
    approximants chosen by the 1-norm, scaling and squaring; float32: orders 3/5/7, float64: 3/5/7/9/13), so the
    values are TF's and gradients flow through its ops.

    >>> tf.linalg.expm(tf.zeros([2, 2])).numpy()
    array([[1., 0.],
           [0., 1.]], dtype=float32)
    """
    from tapeflow.framework import dtypes
    from tapeflow.framework.tensor import convert_to_tensor
    from tapeflow.graph.control_flow import cond, while_loop
    from tapeflow.ops import array_ops, math_ops

    matrix = convert_to_tensor(input)
    if matrix.shape.as_list()[-2:] == [0, 0]:
        return matrix
    batch_shape = matrix.shape[:-2]
    static_batch = batch_shape.is_fully_defined()
    dyn_batch = None if static_batch else array_ops.shape(matrix)[:-2]
    matrix = array_ops.reshape(matrix, array_ops.concat([[-1], array_ops.shape(matrix)[-2:]], axis=0))
    l1_norm = math_ops.reduce_max(math_ops.reduce_sum(math_ops.abs(matrix), axis=1), axis=-1)[..., None, None]

    def const(x):
        return math_ops.cast(x, l1_norm.dtype)

    def nest_where(vals, cases):
        if len(vals) == 1:
            return math_ops.where(math_ops.less(l1_norm, const(vals[0])), cases[0], cases[1])
        return math_ops.where(math_ops.less(l1_norm, const(vals[0])), cases[0], nest_where(vals[1:], cases[1:]))

    if matrix.dtype in (dtypes.float16, dtypes.float32, dtypes.complex64):
        maxnorm, orders = 3.925724783138660, (3, 5, 7)
        conds = (4.258730016922831e-001, 1.880152677804762e+000)
    elif matrix.dtype in (dtypes.float64, dtypes.complex128):
        maxnorm, orders = 5.371920351148152, (3, 5, 7, 9, 13)
        conds = (1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001, 2.097847961257068e+000)
    else:
        raise ValueError(f"tf.linalg.expm does not support matrices of type <dtype: '{matrix.dtype.name}'>")
    squarings = math_ops.maximum(math_ops.floor(math_ops.log(l1_norm / const(maxnorm)) / math_ops.log(const(2.0))),
                                 const(0))
    pairs = [_pade(matrix, _PADE[k], k) for k in orders[:-1]]
    scaled = matrix / math_ops.cast(math_ops.pow(const(2.0), squarings), matrix.dtype)
    pairs.append(_pade(scaled, _PADE[orders[-1]], orders[-1]))
    u = nest_where(conds, [p[0] for p in pairs])
    v = nest_where(conds, [p[1] for p in pairs])
    is_finite = math_ops.is_finite(math_ops.reduce_max(l1_norm))
    result = cond(is_finite, lambda: solve(-u + v, u + v),
                  lambda: array_ops.fill(array_ops.shape(matrix), math_ops.cast(float("nan"), matrix.dtype)))
    max_squarings = math_ops.reduce_max(squarings)

    def keep_going(i, _):
        return math_ops.logical_and(is_finite, math_ops.less(i, max_squarings))

    def square(i, r):
        return i + 1, math_ops.where(math_ops.less(i, squarings), matmul(r, r), r)

    _, result = while_loop(keep_going, square, [const(0.0), result])
    tail = result.shape.as_list()[-2:]
    if static_batch:
        return array_ops.reshape(result, batch_shape.as_list() + tail)
    return array_ops.reshape(result, array_ops.concat([dyn_batch, array_ops.shape(result)[-2:]], axis=0))


# TF's tf.linalg names tapeflow does not build: looking one up says so.
_NOT_BUILT = frozenset({
    "LinearOperator", "LinearOperatorAdjoint", "LinearOperatorBlockDiag", "LinearOperatorBlockLowerTriangular",
    "LinearOperatorCirculant", "LinearOperatorCirculant2D", "LinearOperatorCirculant3D", "LinearOperatorComposition",
    "LinearOperatorDiag", "LinearOperatorFullMatrix", "LinearOperatorHouseholder", "LinearOperatorIdentity",
    "LinearOperatorInversion", "LinearOperatorKronecker", "LinearOperatorLowRankUpdate",
    "LinearOperatorLowerTriangular",
    "LinearOperatorPermutation", "LinearOperatorScaledIdentity", "LinearOperatorToeplitz", "LinearOperatorTridiag",
    "LinearOperatorZeros", "banded_triangular_solve", "eig", "eigh_tridiagonal", "eigvals", "experimental",
    "logm", "lu", "lu_matrix_inverse", "lu_reconstruct", "lu_solve", "sqrtm", "tridiagonal_matmul",
    "tridiagonal_solve",
})


def __getattr__(name: str):
    if name in _NOT_BUILT:
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError(f"tf.linalg.{name} is not implemented in tapeflow")
    raise AttributeError(f"module 'tapeflow.linalg' has no attribute '{name}'")
