"""Specs for the sparse ops (tapeflow/ops/sparse)."""

import numpy as np

import tapeflow as tf
from tests.op_specs import Arg, OpSpec

_IDX = tf.constant(np.array([[0, 0], [1, 2], [2, 1], [2, 2]], np.int64))
_SHAPE = tf.constant(np.array([3, 3], np.int64))


def _spmm(values, b, adjoint_a=False, adjoint_b=False):
    st = tf.sparse.SparseTensor(_IDX, values * values, _SHAPE)
    return tf.sparse.sparse_dense_matmul(st, b * b, adjoint_a=adjoint_a, adjoint_b=adjoint_b)


SPECS = [
    OpSpec("SparseTensorDenseMatMul", _spmm, [Arg((4,)), Arg((3, 2))]),
    OpSpec(
        "SparseTensorDenseMatMul", lambda v, b: _spmm(v, b, adjoint_a=True), [Arg((4,)), Arg((3, 2))], name="adjoint_a"
    ),
    OpSpec(
        "SparseTensorDenseMatMul", lambda v, b: _spmm(v, b, adjoint_b=True), [Arg((4,)), Arg((2, 3))], name="adjoint_b"
    ),
]
