"""Specs for the dynamic-shape ops (tapeflow/ops/shape_ops.py), run eagerly
with their shape arguments as int tensors (what a traced graph feeds them)."""

import numpy as np

import tapeflow as tf
from tapeflow.framework.execute import execute
from tapeflow.ops import shape_ops
from tests.op_specs import Arg, OpSpec


def _i(v):
    return tf.constant(np.asarray(v, dtype=np.int32))


SPECS = [
    OpSpec("DynamicReshape", lambda x: shape_ops.dynamic_reshape(x * x, _i([2, -1])), [Arg((3, 4))]),
    OpSpec("DynamicReshape", lambda x: shape_ops.dynamic_reshape(x * x, [_i(4), 3]), [Arg((3, 4))],
           name="list"),
    OpSpec("DynamicBroadcastTo", lambda x: shape_ops.dynamic_broadcast_to(x * x, _i([3, 4])), [Arg((4,))]),
    OpSpec("DynamicBroadcastTo", lambda x: shape_ops.dynamic_broadcast_to(x * x, _i([2, 3, 4])), [Arg((3, 1))],
           name="inner"),
    OpSpec("DynamicFill", lambda v: shape_ops.dynamic_fill(_i([2, 3]), v * v), [Arg(())]),
    OpSpec("DynamicTile", lambda x: shape_ops.dynamic_tile(x * x, _i([2, 3])), [Arg((2, 3))]),
    OpSpec("DynamicSplitV", lambda x: shape_ops.dynamic_split(x * x, _i([1, 3]), 1, 2), [Arg((2, 4))]),
    OpSpec("DynamicSplitV", lambda x: shape_ops.dynamic_split(x * x, None, 0, 2)[1], [Arg((4, 3))], name="equal"),
    OpSpec("SumToShape", lambda x: shape_ops.sum_to_shape(x * x, _i([1, 4])), [Arg((3, 4))]),
    OpSpec("SumToShape", lambda x: shape_ops.sum_to_shape(x * x, _i([4])), [Arg((2, 3, 4))], name="lead"),
    OpSpec("DynamicStridedSliceGrad",
           lambda dy: shape_ops.strided_slice_grad(dy * dy, tf.zeros((3, 4), tf.float64), (3, 4),
                                                   (("s", 1, None, None),)), [Arg((2, 4))]),
    OpSpec("DynamicGatherGrad", lambda g: shape_ops.gather_grad(g * g, _i([[2, 0], [1, 2]]), tf.zeros((2, 3, 4)),
                                                                1, 1), [Arg((2, 2, 4))]),
    OpSpec("DynamicGatherGrad", lambda g: shape_ops.gather_grad(g * g, _i([0, 0, 2]), tf.zeros((3, 2)), 0, 0),
           [Arg((3, 2))], name="rows"),
    OpSpec("DynamicGatherGrad", lambda g: shape_ops.gather_grad(g * g, _i([[1], [0]]), tf.zeros((2, 3, 2)), 1, 0),
           [Arg((2, 2, 1, 2))], name="axis1"),
]
SPECS += [  # img11: Slice (run-time begin/size), its gradient op, DynamicPadV2
    OpSpec("Slice", lambda x: shape_ops.dynamic_slice(x * x, _i([1, 0]), _i([2, -1])), [Arg((3, 4))]),
    OpSpec("Slice", lambda x: shape_ops.dynamic_slice(x * x, [_i(1), 0], [2, _i(3)]), [Arg((3, 4))], name="list"),
    OpSpec("SliceGrad", lambda dy: execute(shape_ops.SLICE_GRAD, (dy * dy, _i([3, 4]), _i([1, 0])),
                                           {"static": (3, 4)}), [Arg((2, 3))]),
    OpSpec("DynamicPadV2", lambda x: shape_ops.dynamic_pad(x * x, _i([[1, 0], [2, 1]]), 3.0), [Arg((2, 3))]),
]

from tapeflow.ops import array_extras as _ax  # noqa: E402 - the top-level extras (tf.reverse_sequence ...)

SPECS += [
    OpSpec("ReverseSequence", lambda x: _ax.reverse_sequence(x * x, [2, 3, 0], seq_axis=1, batch_axis=0),
           [Arg((3, 4))]),
    OpSpec("EnsureShape", lambda x: _ax.ensure_shape(x * x, [None, 4]), [Arg((3, 4))]),
]
SPECS.append(OpSpec("DynamicStitch", lambda a, b: _ax.dynamic_stitch([_i([0, 2]), _i([1, 3])], [a * a, b * a]),
                    [Arg((2, 3)), Arg((2, 3))]))  # distinct rows: TF's rule is exact there
