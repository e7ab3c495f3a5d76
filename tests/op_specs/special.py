"""Specs for tf.math extras (tapeflow/ops/special_ops.py)."""

import numpy as np

import tapeflow as tf
from tapeflow.ops import special_ops as sp
from tests.op_specs import Arg, OpSpec

A, B = (3, 4), (4,)  # a broadcasting pair
P = dict(low=0.5, high=2.0)
U = dict(low=-0.8, high=0.8)  # inside (-1, 1)

_rng = np.random.default_rng(7)
# Distinct values (no ties) so top_k/segment max have a unique winner.
_distinct = (np.arange(24, dtype=np.float64)[_rng.permutation(24)] * 0.25 + 0.05).reshape(4, 6)
_seg_data = (np.arange(15, dtype=np.float64)[_rng.permutation(15)] * 0.3).reshape(5, 3)
_seg_ids = np.array([0, 2, 0, 1, 2])
_nonzero = np.where(_rng.uniform(size=A) > 0.5, 1.0, -1.0) * _rng.uniform(0.5, 1.5, A)


def _binary(op, fn, a, b, **kw):
    return [
        OpSpec(op, fn, [Arg(A, **a), Arg(A, **b)], name="same", **kw),
        OpSpec(op, fn, [Arg(A, **a), Arg(B, **b)], name="broadcast", **kw),
    ]


SPECS = [
    OpSpec("Erf", tf.math.erf, [Arg(A)]),
    OpSpec("Erfc", tf.math.erfc, [Arg(A)]),
    OpSpec("Lgamma", tf.math.lgamma, [Arg(A, low=0.3, high=4.0)]),
    OpSpec("Lgamma", tf.math.lgamma, [Arg(A, low=-2.8, high=-2.2)], name="negative"),
    OpSpec("Digamma", tf.math.digamma, [Arg(A, low=0.3, high=4.0)]),
    OpSpec("Digamma", tf.math.digamma, [Arg(A, low=-1.8, high=-1.2)], name="negative"),
    OpSpec("Polygamma", lambda a, x: tf.math.polygamma(a, x), [Arg(value=2.0, diff=False), Arg(A, low=0.5, high=3.0)]),
    OpSpec("Erfinv", tf.math.erfinv, [Arg(A, low=-0.8, high=0.8)]),
    OpSpec("Ndtri", tf.math.ndtri, [Arg(A, low=0.1, high=0.9)]),
    OpSpec("Zeta", tf.math.zeta, [Arg(value=np.array([2.0, 3.5, 5.0, 2.5]), diff=False), Arg(A, low=0.5, high=3.0)]),
    OpSpec("CumulativeLogsumexp", lambda x: tf.math.cumulative_logsumexp(x, axis=1, reverse=True), [Arg(A)]),
    OpSpec("Atan", tf.math.atan, [Arg(A)]),
    OpSpec("Asin", tf.math.asin, [Arg(A, **U)]),
    OpSpec("Acos", tf.math.acos, [Arg(A, **U)]),
    OpSpec("Sinh", tf.math.sinh, [Arg(A)]),
    OpSpec("Cosh", tf.math.cosh, [Arg(A)]),
    OpSpec("Asinh", tf.math.asinh, [Arg(A)]),
    OpSpec("Acosh", tf.math.acosh, [Arg(A, low=1.3, high=3.0)]),
    OpSpec("Atanh", tf.math.atanh, [Arg(A, **U)]),
    *_binary("Atan2", tf.math.atan2, dict(low=0.5, high=2.0), {}),
    *_binary("Xlogy", tf.math.xlogy, {}, P),
    # Where x == 0 TF's x-gradient is 0 (not log y), so only y is checked there.
    OpSpec("Xlogy", tf.math.xlogy, [Arg(value=np.array([[0.0, 1.5], [-0.7, 0.0]]), diff=False), Arg((2, 2), **P)],
           name="zeros"),
    *_binary("Xdivy", tf.math.xdivy, {}, P),
    *_binary("Xlog1py", tf.math.xlog1py, {}, P),
    OpSpec("NextAfter", lambda x, y: tf.math.nextafter(x, y) * x, [Arg(A, **P), Arg(A, low=3.0, high=4.0)],
           order=1),
    *_binary("DivNoNan", tf.math.divide_no_nan, {}, P),
    *_binary("MulNoNan", tf.math.multiply_no_nan, {}, P),
    OpSpec("Lgamma", lambda x: tf.math.lbeta(x), [Arg(A, **P)], name="lbeta"),
    OpSpec("EuclideanNorm", lambda x: tf.math.reduce_euclidean_norm(x, axis=1), [Arg((2, 3, 4))]),
    OpSpec("EuclideanNorm", lambda x: tf.math.reduce_euclidean_norm(x, keepdims=True), [Arg(A)], name="all"),
    OpSpec("Mean", lambda x: tf.math.reduce_std(x, axis=0), [Arg(A)], name="reduce_std"),
    OpSpec("Mean", lambda x: tf.math.reduce_variance(x, axis=[0, 1]), [Arg((2, 3, 4))], name="reduce_variance"),
    OpSpec("TopKV2", lambda x: tf.math.top_k(x, 3).values, [Arg(value=_distinct)]),
    OpSpec("TopKV2", lambda x: tf.sort(x, axis=0), [Arg(value=_distinct)], name="sort-axis0"),
    OpSpec("TopKV2", lambda x: tf.sort(x, direction="DESCENDING"), [Arg(value=_distinct)], name="sort-desc"),
    OpSpec("SegmentSum", lambda x: tf.math.segment_sum(x * x, tf.constant([0, 0, 1, 3, 3])), [Arg((5, 3))]),
    OpSpec("SegmentMean", lambda x: tf.math.segment_mean(x * x, tf.constant([0, 0, 1, 3, 3])), [Arg((5, 3))]),
    OpSpec("SegmentMax", lambda x: tf.math.segment_max(x, tf.constant([0, 0, 1, 1, 3])), [Arg(value=_seg_data)]),
    OpSpec("SegmentMin", lambda x: tf.math.segment_min(x, tf.constant([0, 1, 1, 2, 2])), [Arg(value=_seg_data)]),
    OpSpec("SegmentProd", lambda x: tf.math.segment_prod(x, tf.constant([0, 0, 1, 3, 3])), [Arg((5, 3), **P)]),
    OpSpec("UnsortedSegmentProd", lambda x: tf.math.unsorted_segment_prod(x, tf.constant(_seg_ids), 3),
           [Arg((5, 3), **P)]),
    OpSpec("UnsortedSegmentProd", lambda x: tf.math.unsorted_segment_prod(x, tf.constant([0, -1, 0, 1, 1]), 2),
           [Arg((5, 2), **P)], name="dropped"),
    OpSpec("UnsortedSegmentMax", lambda x: sp.unsorted_segment_max(x, tf.constant(_seg_ids), 3),
           [Arg(value=_seg_data)]),
    OpSpec("UnsortedSegmentMin", lambda x: sp.unsorted_segment_min(x, tf.constant(_seg_ids), 3),
           [Arg(value=_seg_data)]),
    OpSpec("UnsortedSegmentSum", lambda x: tf.math.unsorted_segment_mean(x * x, tf.constant(_seg_ids), 4),
           [Arg((5, 3))], name="mean"),
    OpSpec("Mul", lambda c, x: tf.math.polyval([c, 2.0 * c, tf.constant(0.5, tf.float64)], x),
           [Arg(()), Arg(A)], name="polyval"),
]
