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


# TF's tf.linalg names tapeflow does not build: looking one up says so.
_NOT_BUILT = frozenset({
    "LinearOperator", "LinearOperatorAdjoint", "LinearOperatorBlockDiag", "LinearOperatorBlockLowerTriangular",
    "LinearOperatorCirculant", "LinearOperatorCirculant2D", "LinearOperatorCirculant3D", "LinearOperatorComposition",
    "LinearOperatorDiag", "LinearOperatorFullMatrix", "LinearOperatorHouseholder", "LinearOperatorIdentity",
    "LinearOperatorInversion", "LinearOperatorKronecker", "LinearOperatorLowRankUpdate",
    "LinearOperatorLowerTriangular",
    "LinearOperatorPermutation", "LinearOperatorScaledIdentity", "LinearOperatorToeplitz", "LinearOperatorTridiag",
    "LinearOperatorZeros", "banded_triangular_solve", "eig", "eigh_tridiagonal", "eigvals", "experimental", "expm",
    "logm", "lu", "lu_matrix_inverse", "lu_reconstruct", "lu_solve", "sqrtm", "tridiagonal_matmul",
    "tridiagonal_solve",
})


def __getattr__(name: str):
    if name in _NOT_BUILT:
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError(f"tf.linalg.{name} is not implemented in tapeflow")
    raise AttributeError(f"module 'tapeflow.linalg' has no attribute '{name}'")
