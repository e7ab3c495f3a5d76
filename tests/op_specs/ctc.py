"""The CTC losses: CTCLossDense (dense labels; float32 inside, so wide steps) and CTCLoss (sparse labels, in
float64). TF's gradients of both are first order only (a saved gradient output; CTCLoss's behind
PreventGradient)."""

import numpy as np

import tapeflow as tf
from tests.op_specs import Arg, OpSpec

LABELS = [[1, 2, 2], [3, 1, 0]]


def _dense(x):
    loss = tf.nn.ctc_loss(LABELS, tf.cast(x, tf.float32), [3, 2], [6, 5])
    return tf.cast(loss, tf.float64)


def _sparse(x):
    labels = tf.SparseTensor(np.array([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]], np.int64), [1, 2, 2, 3, 1], [2, 3])
    return tf.nn.ctc_loss(labels, x, None, [6, 5], blank_index=0)


SPECS = [
    OpSpec("CTCLossDense", _dense, [Arg((6, 2, 5))], order=1, eps=1e-3, rtol=2e-3, atol=2e-3),
    OpSpec("CTCLoss", _sparse, [Arg((6, 2, 5))], order=1),
]
