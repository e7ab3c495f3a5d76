"""``tf.linalg``: decompositions, solves, diagonals and norms.

``tf.linalg.einsum`` and ``tf.linalg.tensordot`` are the top-level ``tf.einsum`` / ``tf.tensordot``
(defined with the indexing ops); ``tf.linalg.l2_normalize`` is ``tf.nn.l2_normalize``.
"""

from tapeflow.ops.array_ops import eye  # noqa: F401
from tapeflow.ops.indexing_ops import einsum, tensordot  # noqa: F401
from tapeflow.ops.linalg_ops import (  # noqa: F401
    adjoint, band_part, cholesky, cholesky_solve, cross, det, diag, diag_part, eigh, eigvalsh, global_norm, inv, logdet,
    lstsq, matrix_rank, matrix_transpose, matvec, norm, normalize, pinv, qr, set_diag, slogdet, solve, svd, trace,
    triangular_solve,
)
from tapeflow.ops.math_ops import matmul  # noqa: F401
from tapeflow.ops.nn.normalization import l2_normalize  # noqa: F401
