"""Specs for the extra array/indexing ops (tapeflow/ops/indexing_ops.py)."""

import numpy as np

import tapeflow as tf
from tapeflow.ops import indexing_ops as ix
from tests.op_specs import Arg, OpSpec

_rng = np.random.default_rng(3)
_x = _rng.uniform(-2, 2, (3, 4))
_y = _rng.uniform(-2, 2, (3, 4))
_ypos = np.round(_x, 1) + np.where(_rng.uniform(size=(3, 4)) > 0.5, 0.5, -0.5)  # never tied with x
_idx2 = tf.constant([[0, 1], [2, 3], [1, 0]])
_rows = tf.constant([[2], [0]])


def _mirror_grad(g):
    # MirrorPadGrad is the adjoint of MirrorPad; exercise it directly.
    from tapeflow.framework.execute import execute

    return execute(ix.MIRROR_PAD_GRAD, (g,), {"paddings": ((1, 2), (2, 1)), "mode": "REFLECT"})


def _dyn_roll(x, shift, axis):
    from tapeflow.framework.execute import execute

    return execute(ix.DYNAMIC_ROLL, (x, tf.constant(shift)), {"axis": axis})


SPECS = [
    OpSpec("PadV2", lambda x: ix.pad(x * x, [[1, 2], [0, 1]]), [Arg((3, 4))]),
    OpSpec("PadV2", lambda x, c: ix.pad(x, [[1, 0], [2, 1]], constant_values=c), [Arg((3, 4)), Arg((), diff=False)],
           name="constant_values"),  # TF gives constant_values no gradient (None); so do we
    OpSpec("MirrorPad", lambda x: ix.pad(x * x, [[2, 1], [1, 3]], mode="REFLECT"), [Arg((3, 4))]),
    OpSpec("MirrorPad", lambda x: ix.pad(x * x, [[3, 1], [0, 4]], mode="SYMMETRIC"), [Arg((3, 4))],
           name="symmetric"),
    OpSpec("MirrorPadGrad", lambda g: _mirror_grad(g * g), [Arg((6, 7))]),
    OpSpec("GatherNd", lambda x: ix.gather_nd(x * x, _idx2), [Arg((3, 4))]),
    OpSpec("GatherNd", lambda x: ix.gather_nd(x * x, _rows), [Arg((3, 4))], name="rows-sparse"),
    OpSpec("GatherNd", lambda x: ix.gather_nd(x * x, tf.constant([[[1], [0]], [[2], [2]]]), batch_dims=1),
           [Arg((2, 3, 4))], name="batch_dims"),
    OpSpec("ScatterNd", lambda u: ix.scatter_nd(tf.constant([[1], [3], [1]]), u * u, [5, 2]), [Arg((3, 2))]),
    OpSpec("TensorScatterAdd", lambda x, u: ix.tensor_scatter_nd_add(x * x, _idx2, u * u), [Arg((3, 4)), Arg((3,))]),
    OpSpec("TensorScatterSub", lambda x, u: ix.tensor_scatter_nd_sub(x * x, _rows, u * u),
           [Arg((3, 4)), Arg((2, 4))]),
    OpSpec("TensorScatterUpdate", lambda x, u: ix.tensor_scatter_nd_update(x * x, _idx2, u * u),
           [Arg((3, 4)), Arg((3,))]),
    OpSpec("TensorScatterMax", lambda x, u: ix.tensor_scatter_nd_max(x, _idx2, u),
           [Arg(value=_x), Arg(value=np.array([_x[0, 1] + 0.5, _x[2, 3] - 0.5, _x[1, 0] + 0.3]))]),
    OpSpec("TensorScatterMin", lambda x, u: ix.tensor_scatter_nd_min(x, _idx2, u),
           [Arg(value=_x), Arg(value=np.array([_x[0, 1] + 0.5, _x[2, 3] - 0.5, _x[1, 0] - 0.3]))]),
    OpSpec("ReverseV2", lambda x: ix.reverse(x * x, [0, -1]), [Arg((3, 4))]),
    OpSpec("Roll", lambda x: ix.roll(x * x, [1, -2, 1], [0, 1, 0]), [Arg((3, 4))]),
    OpSpec("DynamicRoll", lambda x: _dyn_roll(x * x, [1, -2, 1], (0, 1, 0)), [Arg((3, 4))]),
    OpSpec("Einsum", lambda a, b: ix.einsum("ij,jk->ik", a, b), [Arg((2, 3)), Arg((3, 4))]),
    OpSpec("Einsum", lambda a, b: ix.einsum("...ij,...jk->...ik", a, b), [Arg((2, 1, 2, 3)), Arg((5, 3, 4))],
           name="ellipsis-broadcast"),
    OpSpec("Einsum", lambda a: ix.einsum("ii->i", a), [Arg((3, 3))], name="diagonal"),
    OpSpec("Einsum", lambda a, b: ix.einsum("iij,k", a, b), [Arg((3, 3, 2)), Arg((4,))], name="implicit-trace"),
    OpSpec("Einsum", lambda a, b, c: ix.einsum("ab,bc,cd->ad", a, b, c), [Arg((2, 3)), Arg((3, 4)), Arg((4, 2))],
           name="three"),
    OpSpec("Einsum", lambda a: ix.einsum("ijk->j", a), [Arg((2, 3, 4))], name="sum-only"),
    OpSpec("Einsum", lambda a, b: ix.tensordot(a, b, [[1, 2], [1, 0]]), [Arg((2, 3, 4)), Arg((4, 3))],
           name="tensordot"),
    OpSpec("GatherV2", lambda x: ix.boolean_mask(x * x, tf.constant([[True, False, True, True]] * 2 +
                                                                      [[False] * 4])), [Arg((3, 4))],
           name="boolean_mask"),
    OpSpec("GatherV2", lambda x: ix.repeat(x * x, [2, 0, 1, 3], axis=1), [Arg((3, 4))], name="repeat"),
    OpSpec("GatherV2", lambda x: tf.gather(x * x, tf.constant([[1, 3, 3], [0, 2, 0]]), axis=2, batch_dims=1),
           [Arg((2, 3, 4, 2))], name="batch_dims"),
    OpSpec("GatherV2", lambda x: tf.gather(x * x, tf.constant([[[1, 3], [0, 0], [2, 2]], [[3, 3], [1, 0], [0, 1]]]),
                                           axis=2, batch_dims=2), [Arg((2, 3, 4, 2))], name="batch_dims2"),
    OpSpec("BroadcastTo", lambda a, b: ix.meshgrid(a, b)[0] * ix.meshgrid(a, b, indexing="ij")[1],
           [Arg((3,)), Arg((3,))], name="meshgrid"),
]
