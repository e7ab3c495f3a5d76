"""Specs for the core math and array ops (tapeflow/ops/math_ops.py, array_ops.py)."""

import numpy as np

import tapeflow as tf
from tapeflow.framework.execute import execute
from tapeflow.ops import array_ops, math_ops
from tests.op_specs import Arg, OpSpec

P = dict(low=0.5, high=2.0)  # positive domain
A, B = (3, 4), (4,)  # a broadcasting pair


def _binary(op, fn, a=P, b=P, **kw):
    return [
        OpSpec(op, fn, [Arg(A, **a), Arg(A, **b)], name="same", **kw),
        OpSpec(op, fn, [Arg(A, **a), Arg(B, **b)], name="broadcast", **kw),
        OpSpec(op, fn, [Arg((), **a), Arg(A, **b)], name="scalar", **kw),
    ]


def _away_from(x, kinks, gap=0.2):
    # values in [-2, 2] at least `gap` from every kink
    for k in kinks:
        x = np.where(np.abs(x - k) < gap, k + gap * np.sign(x - k + 1e-12) * 1.5, x)
    return x


_rng = np.random.default_rng(1)
_nokink = _away_from(_rng.uniform(-2, 2, (3, 4)), [0.0])
_distinct = np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::-1] * 0.3 + _rng.uniform(0, 0.1, (3, 4))
_a2 = _rng.uniform(-2, 2, (3, 4))
_b2 = _a2 + np.where(_rng.uniform(size=(3, 4)) > 0.5, 0.5, -0.5)  # never tied

SPECS = [
    *_binary("AddV2", tf.add, {}, {}),
    *_binary("Sub", tf.subtract, {}, {}),
    *_binary("Mul", tf.multiply, {}, {}),
    *_binary("RealDiv", tf.truediv),
    *_binary("Pow", tf.pow, P, dict(low=-1.5, high=1.5)),
    *_binary("SquaredDifference", tf.math.squared_difference, {}, {}),
    OpSpec("FloorMod", tf.math.floormod, [Arg(A, low=0.1, high=0.9), Arg(A, low=1.1, high=1.9)]),
    OpSpec("Maximum", tf.maximum, [Arg(value=_a2), Arg(value=_b2)]),
    OpSpec("Maximum", tf.maximum, [Arg(value=_a2), Arg(value=np.full((4,), 0.01))], name="broadcast"),
    OpSpec("Minimum", tf.minimum, [Arg(value=_a2), Arg(value=_b2)]),
    OpSpec("AddN", lambda a, b, c: tf.add_n([a, b, c]), [Arg(A), Arg(A), Arg(A)]),
    OpSpec("Neg", tf.negative, [Arg(A)]),
    OpSpec("Abs", tf.abs, [Arg(value=_nokink)]),
    OpSpec("Sign", lambda x: tf.sign(x) * x, [Arg(value=_nokink)]),
    OpSpec("Reciprocal", tf.math.reciprocal, [Arg(A, **P)]),
    OpSpec("Square", tf.square, [Arg(A)]),
    OpSpec("Sqrt", tf.sqrt, [Arg(A, **P)]),
    OpSpec("SqrtGrad", math_ops.sqrt_grad, [Arg(A, **P), Arg(A)]),
    OpSpec("Rsqrt", tf.math.rsqrt, [Arg(A, **P)]),
    OpSpec("Exp", tf.exp, [Arg(A)]),
    OpSpec("Expm1", tf.math.expm1, [Arg(A)]),
    OpSpec("Log", tf.math.log, [Arg(A, **P)]),
    OpSpec("Log1p", tf.math.log1p, [Arg(A, **P)]),
    OpSpec("Sin", tf.sin, [Arg(A)]),
    OpSpec("Cos", tf.cos, [Arg(A)]),
    OpSpec("Tan", tf.tan, [Arg(A, low=-1.2, high=1.2)]),
    OpSpec("Tanh", tf.tanh, [Arg(A)]),
    OpSpec("Sigmoid", tf.sigmoid, [Arg(A, low=-6, high=6)]),
    OpSpec("Softplus", tf.math.softplus, [Arg(A, low=-6, high=6)]),
    OpSpec("Relu", tf.nn.relu, [Arg(value=_nokink)]),
    OpSpec("ReluGrad", lambda g, y: math_ops.relu_grad(g * g, y), [Arg(A), Arg(value=_nokink, diff=False)]),
    OpSpec("Cast", lambda x: tf.cast(tf.cast(x, tf.float32), tf.float64) * x, [Arg(A)], rtol=1e-3, atol=1e-4,
           eps=1e-3),
    OpSpec("SelectV2", lambda x, y: tf.where(x > 0, x * x, y), [Arg(value=_nokink), Arg(B)]),
    # (tf.clip_by_value is maximum(minimum(...)) as in TF; the op itself backs saturate_cast.)
    OpSpec("ClipByValue", lambda x, lo, hi: execute(math_ops.CLIP, (x, lo, hi)),
           [Arg(value=_away_from(_rng.uniform(-2, 2, (3, 4)), [-1.0, 1.0])), Arg(value=-1.0), Arg(value=1.0)]),
    OpSpec("Sum", lambda x: tf.reduce_sum(x, axis=1), [Arg((2, 3, 4))]),
    OpSpec("Sum", lambda x: tf.reduce_sum(x * x, axis=[0, 2], keepdims=True), [Arg((2, 3, 4))], name="keepdims"),
    OpSpec("Sum", lambda x: tf.reduce_sum(x * x), [Arg((2, 3))], name="all"),
    OpSpec("Mean", lambda x: tf.reduce_mean(x * x, axis=-1), [Arg((2, 3, 4))]),
    OpSpec("Max", lambda x: tf.reduce_max(x * x, axis=0), [Arg(value=_distinct)]),
    OpSpec("Min", lambda x: tf.reduce_min(x * x, axis=1, keepdims=True), [Arg(value=_distinct)]),
    OpSpec("Prod", lambda x: tf.reduce_prod(x, axis=1), [Arg((2, 3, 4), **P)]),
    OpSpec("Prod", lambda x: tf.reduce_prod(x), [Arg((2, 3), **P)], name="all"),
    OpSpec("Cumsum", lambda x: tf.cumsum(x * x, axis=1), [Arg((3, 4))]),
    OpSpec("Cumsum", lambda x: tf.cumsum(x * x, axis=0, exclusive=True, reverse=True), [Arg((3, 4))],
           name="exclusive-reverse"),
    OpSpec("Cumprod", lambda x: tf.math.cumprod(x, axis=1), [Arg((3, 4), **P)]),
    OpSpec("Cumprod", lambda x: tf.math.cumprod(x, axis=0, exclusive=True, reverse=True), [Arg((3, 4), **P)],
           name="exclusive-reverse"),
    OpSpec("BatchMatMulV2", tf.matmul, [Arg((3, 4)), Arg((4, 5))]),
    OpSpec("BatchMatMulV2", lambda a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True),
           [Arg((4, 3)), Arg((5, 4))], name="transposed"),
    OpSpec("BatchMatMulV2", lambda a, b: tf.matmul(a, b, transpose_a=True), [Arg((4, 3)), Arg((4, 5))],
           name="transpose_a"),
    OpSpec("BatchMatMulV2", lambda a, b: tf.matmul(a, b, transpose_b=True), [Arg((3, 4)), Arg((5, 4))],
           name="transpose_b"),
    OpSpec("BatchMatMulV2", tf.matmul, [Arg((2, 3, 4)), Arg((4, 5))], name="broadcast-batch"),
    OpSpec("UnsortedSegmentSum", lambda d, i: tf.math.unsorted_segment_sum(d * d, i, 3),
           [Arg((5, 2)), Arg(value=np.array([0, 2, 0, -1, 1]), diff=False)]),
    OpSpec("Identity", lambda x: tf.identity(x * x), [Arg(A)]),
    OpSpec("Reshape", lambda x: tf.reshape(x * x, (2, -1)), [Arg(A)]),
    OpSpec("Transpose", lambda x: tf.transpose(x * x, [1, 2, 0]), [Arg((2, 3, 4))]),
    OpSpec("ConcatV2", lambda x, y: tf.concat([x * x, y], axis=1), [Arg((2, 3)), Arg((2, 2))]),
    OpSpec("Pack", lambda x, y: tf.stack([x * x, y], axis=1), [Arg((2, 3)), Arg((2, 3))]),
    OpSpec("Unpack", lambda x: tf.unstack(x * x, axis=1)[0:2], [Arg((2, 3))]),
    OpSpec("SplitV", lambda x: tf.split(x * x, [1, 3], axis=1), [Arg((2, 4))]),
    OpSpec("SplitV", lambda x: tf.split(x * x, 2, axis=0)[1], [Arg((2, 4))], name="equal"),
    OpSpec("Tile", lambda x: tf.tile(x * x, [2, 3]), [Arg((2, 3))]),
    OpSpec("BroadcastTo", lambda x: tf.broadcast_to(x * x, (2, 3, 4)), [Arg((3, 1))]),
    OpSpec("GatherV2", lambda p: tf.convert_to_tensor(tf.gather(p * p, [2, 0, 2])), [Arg((3, 4))]),
    OpSpec("GatherV2", lambda p: tf.gather(p * p, [[1, 0], [1, 1]], axis=1), [Arg((2, 3, 4))], name="axis1"),
    OpSpec("StridedSlice", lambda x: (x * x)[1:, ::-2, None, 1], [Arg((3, 4, 2))]),
    OpSpec("StridedSlice", lambda x: (x * x)[..., 0], [Arg((3, 4, 2))], name="ellipsis"),
    OpSpec("RankFreeStridedSlice", lambda x: execute(array_ops.RANK_FREE_SLICE, (x * x,), {
        "key": (("s", 1, None, None), ("s", None, None, -2), ("n",), ("i", 1))}), [Arg((3, 4, 2))]),
    OpSpec("RankFreeStridedSliceGrad", lambda g, x: execute(array_ops.RANK_FREE_SLICE_GRAD, (g * g, x), {
        "key": (("e",), ("i", 0))}), [Arg((3, 4)), Arg((3, 4, 2), diff=False)]),
    OpSpec("RankFreeStridedSlice", lambda x: execute(array_ops.RANK_FREE_SLICE, (x * x, tf.constant(2)), {
        "key": (("t", 0), ("s", None, None, -1))}), [Arg((3, 4))], name="run_time_index"),
    OpSpec("StridedSliceGrad", lambda dy: array_ops.strided_slice_grad(dy, (3, 4), (("s", 1, None, None),)),
           [Arg((2, 4))]),
    OpSpec("Fill", lambda v: tf.fill([2, 3], v * v), [Arg(())]),
]
