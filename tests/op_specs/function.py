"""Specs for the function-call op (tapeflow/ops/functional_ops.py): a
tf.function called under a tape is one StatefulPartitionedCall op whose
gradient is its backward function (2nd order: the full backward)."""

import tapeflow as tf
from tests.op_specs import Arg, OpSpec


@tf.function
def _f(x, y):
    return tf.sin(x) * y + x * x


@tf.function
def _pair(x):
    return tf.tanh(x), tf.reduce_sum(x * x)


SPECS = [
    OpSpec("StatefulPartitionedCall", _f, [Arg((3, 4)), Arg((4,))], name="broadcast"),
    OpSpec("StatefulPartitionedCall", lambda x: list(_pair(x)), [Arg((2, 3))], name="two_outputs"),
]
