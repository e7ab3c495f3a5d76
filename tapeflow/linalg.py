"""``tf.linalg``: decompositions, solves, diagonals and norms.

``tf.linalg.einsum`` and ``tf.linalg.tensordot`` resolve to the top-level
``tf.einsum`` / ``tf.tensordot`` (defined with the array ops) on first use.
"""

from tapeflow.ops.array_ops import eye  # noqa: F401
from tapeflow.ops.linalg_ops import (  # noqa: F401
    adjoint, band_part, cholesky, cholesky_solve, cross, det, diag, diag_part, eigh, eigvalsh, global_norm, inv, logdet,
    lstsq, matrix_rank, matrix_transpose, matvec, norm, normalize, pinv, qr, set_diag, slogdet, solve, svd, trace,
    triangular_solve,
)
from tapeflow.ops.math_ops import matmul  # noqa: F401

_FROM_TOP_LEVEL = ("einsum", "tensordot", "l2_normalize")


def __getattr__(name: str):
    # Re-exports of ops that live with other families; looked up lazily so
    # this module does not depend on their import order.
    if name in _FROM_TOP_LEVEL:
        import tapeflow

        owner = tapeflow.nn if name == "l2_normalize" else tapeflow
        value = getattr(owner, name, None)
        if value is not None:
            return value
        raise AttributeError(f"tf.linalg.{name} is not available: tapeflow does not define tf.{name} yet")
    raise AttributeError(f"module 'tapeflow.linalg' has no attribute '{name}'")
