"""Specs for tf.linalg (tapeflow/ops/linalg_ops.py).

Decompositions are checked on well-conditioned inputs: SPD matrices for
Cholesky, distinct eigen/singular values for eigh/svd, and losses that do
not depend on the sign of singular/eigen vectors (``v * v``).
"""

import numpy as np

import tapeflow as tf
from tests.op_specs import Arg, OpSpec

_rng = np.random.default_rng(7)


def _well_conditioned(shape, shift=3.0):
    return _rng.uniform(-0.5, 0.5, shape) + shift * np.eye(shape[-2], shape[-1])


def _spd(x):
    n = x.shape[-1]
    return tf.matmul(x, x, transpose_b=True) + tf.constant(n * np.eye(n))


def _sym(x):
    return 0.5 * (x + tf.linalg.matrix_transpose(x))


_distinct = np.diag([1.0, 2.5, 4.0]) + _rng.uniform(-0.2, 0.2, (2, 3, 3))


def _eigh_loss(x):
    e, v = tf.linalg.eigh(_sym(x))
    return [e, v * v]


def _svd_loss(full=False):
    def fn(x):
        s, u, v = tf.linalg.svd(x, full_matrices=full)
        return [s, u * u, v * v]

    return fn


def _qr(full=False):
    def fn(x):
        q, r = tf.linalg.qr(x, full_matrices=full)
        return [q, r]

    return fn


SPECS = [
    OpSpec("MatrixDiagV3", lambda d: tf.linalg.diag(d * d), [Arg((2, 3))]),
    OpSpec("MatrixDiagV3", lambda d: tf.linalg.diag(d, k=1, num_rows=3, num_cols=4), [Arg((2, 3))], name="k"),
    OpSpec("MatrixDiagPartV3", lambda x: tf.linalg.diag_part(x * x), [Arg((2, 3, 4))]),
    OpSpec("MatrixDiagPartV3", lambda x: tf.linalg.diag_part(x * x, k=-1), [Arg((3, 4))], name="k"),
    OpSpec("MatrixSetDiagV3", lambda x, d: tf.linalg.set_diag(x * x, d * d), [Arg((2, 3, 4)), Arg((2, 3))]),
    OpSpec("MatrixSetDiagV3", lambda x, d: tf.linalg.set_diag(x * x, d * d, k=1), [Arg((3, 4)), Arg((3,))],
           name="k"),
    OpSpec("MatrixBandPart", lambda x: tf.linalg.band_part(x * x, 1, 0), [Arg((2, 4, 4))]),
    OpSpec("MatrixBandPart", lambda x: tf.linalg.band_part(x * x, -1, 1), [Arg((3, 4))], name="upper"),
    OpSpec("MatrixInverse", tf.linalg.inv, [Arg(value=_well_conditioned((2, 3, 3)))]),
    OpSpec("MatrixInverse", lambda x: tf.linalg.inv(x, adjoint=True), [Arg(value=_well_conditioned((3, 3)))],
           name="adjoint"),
    OpSpec("MatrixDeterminant", tf.linalg.det, [Arg(value=_well_conditioned((2, 3, 3)))]),
    OpSpec("LogMatrixDeterminant", lambda x: tf.linalg.slogdet(x)[1], [Arg(value=-_well_conditioned((2, 3, 3)))]),
    OpSpec("MatrixSolve", tf.linalg.solve, [Arg(value=_well_conditioned((2, 3, 3))), Arg((2, 3, 2))]),
    OpSpec("MatrixSolve", lambda a, b: tf.linalg.solve(a, b, adjoint=True),
           [Arg(value=_well_conditioned((3, 3))), Arg((3, 2))], name="adjoint"),
    OpSpec("MatrixTriangularSolve", tf.linalg.triangular_solve,
           [Arg(value=_well_conditioned((2, 3, 3))), Arg((2, 3, 2))]),
    OpSpec("MatrixTriangularSolve", lambda a, b: tf.linalg.triangular_solve(a, b, lower=False, adjoint=True),
           [Arg(value=_well_conditioned((3, 3))), Arg((2, 3, 2))], name="upper-adjoint-broadcast"),
    OpSpec("Cholesky", lambda x: tf.linalg.cholesky(_spd(x)), [Arg((2, 3, 3))]),
    OpSpec("Qr", _qr(), [Arg(value=_well_conditioned((2, 4, 3)))], name="deep"),
    OpSpec("Qr", _qr(), [Arg(value=_well_conditioned((3, 3)))], name="square"),
    OpSpec("Qr", _qr(), [Arg(value=_well_conditioned((3, 3))[:, :] @ np.array(
        [[1.0, 0.2, 0.1, 0.5], [0.0, 1.0, 0.3, -0.4], [0.0, 0.0, 1.0, 0.7]]))], name="wide"),
    OpSpec("Qr", _qr(full=True), [Arg(value=_well_conditioned((3, 3)) @ np.array(
        [[1.0, 0.2, 0.1, 0.5], [0.0, 1.0, 0.3, -0.4], [0.0, 0.0, 1.0, 0.7]]))], name="wide-full"),
    OpSpec("Svd", _svd_loss(), [Arg(value=_distinct)], name="square"),
    OpSpec("Svd", _svd_loss(), [Arg(value=np.concatenate([_distinct[0], [[0.3, -0.2, 0.5]]]))], name="tall"),
    OpSpec("Svd", _svd_loss(), [Arg(value=np.concatenate([_distinct[1], [[0.3, -0.2, 0.5]]]).T)], name="wide"),
    OpSpec("Svd", _svd_loss(full=True), [Arg(value=np.concatenate([_distinct[0], [[0.3, -0.2, 0.5]]]))],
           name="tall-full"),
    OpSpec("Svd", lambda x: tf.linalg.svd(x, compute_uv=False), [Arg(value=_distinct)], name="values"),
    OpSpec("SelfAdjointEigV2", _eigh_loss, [Arg(value=_distinct)]),
    OpSpec("SelfAdjointEigV2", lambda x: tf.linalg.eigvalsh(_sym(x)), [Arg(value=_distinct)], name="values"),
    OpSpec("Cross", tf.linalg.cross, [Arg((2, 3)), Arg((2, 3))]),
]
