"""Batching rules: how each op runs on inputs that carry a leading batch axis, for the vectorizing
interpreter of ``tape.jacobian`` (``tapeflow/eager/batching.py``, which documents the contract).

A rule is ``rule(size, args, batched, attrs) -> Tensor | list`` written with ops, so it lives in the op
layer beside the kernels and gradient rules; ``install`` gives the ops below theirs (an op family may
also set ``op.batch`` itself, which ``install`` keeps).
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np

from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor
from tapeflow.ops import registry, shapes

_log = logging.getLogger("tapeflow")

_warned: set[str] = set()  # ops whose missing rule was already warned about


def _reshape(x: Tensor, shape: tuple) -> Tensor:
    """Reshape straight to the op when the shape is fully known (recorded
    like any op); the public function otherwise (graph dims may be None)."""
    if None in shape:
        from tapeflow.ops import array_ops

        return array_ops.reshape(x, [-1 if d is None else d for d in shape])
    return execute(registry.get_op("Reshape"), (x,), {"shape": tuple(int(d) for d in shape)})


def _ops():
    from tapeflow.ops import array_ops, math_ops

    return array_ops, math_ops


def _lrank(a: Tensor, batched: bool) -> int:
    n = len(a._shape_tuple())
    return n - 1 if batched else n


def _lift(a: Tensor, batched: bool, rank: int) -> Tensor:
    """A batched ``a`` padded with unit axes after the batch axis up to
    logical ``rank`` (so NumPy broadcasting lines up the logical axes)."""
    if not batched:
        return a
    s = a._shape_tuple()
    r = len(s) - 1
    if r >= rank:
        return a
    array_ops, _ = _ops()
    return _reshape(a, (s[0],) + (1,) * (rank - r) + tuple(s[1:]))


def materialize(a: Tensor, batched: bool, size: int) -> Tensor:
    """``a`` with the batch axis present (an unbatched value is repeated)."""
    if batched:
        return a
    array_ops, _ = _ops()
    s = a._shape_tuple()
    return array_ops.broadcast_to(_reshape(a, (1,) + tuple(s)), (size,) + tuple(s))


def _generic(op):
    rule = _GENERIC.get(op.name)
    if rule is not None:
        return rule

    def rule(size, args, batched, attrs):
        ranks = [len(a._shape_tuple()) - b for a, b in zip(args, batched)]
        rank = max(ranks)
        if all(r == rank for r in ranks):
            return execute(op, tuple(args), attrs)
        return execute(op, tuple(_lift(a, b, rank) for a, b in zip(args, batched)), attrs)

    _GENERIC[op.name] = rule
    return rule


_GENERIC: dict = {}


_ELEMENTWISE_SHAPES = (shapes.same, shapes.broadcast, shapes.broadcast_bool)


def _is_structural(v: Any) -> bool:
    # Attrs that index axes or give shapes change meaning under a batch axis.
    if isinstance(v, bool) or v is None:
        return False
    return isinstance(v, (int, np.integer, tuple, list))


def batch_rule_for(op, attrs: dict | None, inputs: tuple = ()):
    """The generic elementwise rule for ``op`` if it qualifies (shape rule is
    same/broadcast, no attr names axes or shapes, no integer input such as
    indices), else ``None``."""
    if op.shape in _ELEMENTWISE_SHAPES and not any(_is_structural(v) for v in (attrs or {}).values()) \
            and all(x._value.dtype.kind in "fcb" for x in inputs):
        return _generic(op)
    return None


def register_batch_rule(name: str, rule) -> None:
    registry.get_op(name).batch = rule


def _loop_rule(op, size, args, batched, attrs):
    """No batching rule: run ``op`` once per row and stack (warned once)."""
    if op.name not in _warned:
        _warned.add(op.name)
        msg = (f"Op '{op.name}' has no batching rule (for these batched inputs), so the vectorized jacobian "
               f"runs it once per row "
               f"({size} rows) and stacks the results. Register one with "
               f"tapeflow.eager.batching.register_batch_rule('{op.name}', rule) to vectorize it.")
        _log.warning(msg)
        warnings.warn(msg, RuntimeWarning, stacklevel=2)
    array_ops, _ = _ops()
    rows = []
    for i in range(size):
        row = [execute(registry.get_op("StridedSlice"), (a,), {"spec": (("i", i),)}) if b else a
               for a, b in zip(args, batched)]
        rows.append(execute(op, tuple(row), attrs))
    if isinstance(rows[0], (list, tuple)):
        return [array_ops.stack([r[k] for r in rows], axis=0) for k in range(len(rows[0]))]
    return array_ops.stack(rows, axis=0)


# -- explicit rules ----------------------------------------------------------

def _shift_axis_rule(op_name: str, key: str = "axis"):
    def rule(size, args, batched, attrs):
        a = dict(attrs)
        a[key] = attrs[key] + 1
        return execute(registry.get_op(op_name), (args[0],), a)

    return rule


def _reduce_rule(op_name: str):
    def rule(size, args, batched, attrs):
        axis = attrs["axis"]
        r = len(args[0]._shape_tuple()) - 1
        new = tuple(range(1, r + 1)) if axis is None else tuple(i + 1 for i in axis)
        return execute(registry.get_op(op_name), (args[0],), {"axis": new, "keepdims": attrs["keepdims"]})

    return rule


def _reshape_rule(size, args, batched, attrs):
    return execute(registry.get_op("Reshape"), (args[0],), {"shape": (size,) + tuple(attrs["shape"])})


def _transpose_rule(size, args, batched, attrs):
    perm = (0,) + tuple(p + 1 for p in attrs["perm"])
    return execute(registry.get_op("Transpose"), (args[0],), {"perm": perm})


def _concat_like_rule(op_name: str):
    def rule(size, args, batched, attrs):
        xs = tuple(materialize(a, b, size) for a, b in zip(args, batched))
        return execute(registry.get_op(op_name), xs, {"axis": attrs["axis"] + 1})

    return rule


def _unpack_rule(size, args, batched, attrs):
    return execute(registry.get_op("Unpack"), (args[0],), {"num": attrs["num"], "axis": attrs["axis"] + 1})


def _split_rule(size, args, batched, attrs):
    return execute(registry.get_op("SplitV"), (args[0],), {"sizes": attrs["sizes"], "axis": attrs["axis"] + 1})


def _tile_rule(size, args, batched, attrs):
    return execute(registry.get_op("Tile"), (args[0],), {"multiples": (1,) + tuple(attrs["multiples"])})


def _broadcast_to_rule(size, args, batched, attrs):
    shape = tuple(attrs["shape"])
    x = _lift(args[0], True, len(shape))
    return execute(registry.get_op("BroadcastTo"), (x,), {"shape": (size,) + shape})


def _fill_rule(size, args, batched, attrs):
    array_ops, _ = _ops()
    shape = tuple(attrs["shape"])
    x = _reshape(args[0], (size,) + (1,) * len(shape))
    return array_ops.broadcast_to(x, (size,) + shape)


def _slice_spec(spec):
    return (("s", None, None, None),) + tuple(spec)


def _strided_slice_rule(size, args, batched, attrs):
    return execute(registry.get_op("StridedSlice"), (args[0],), {"spec": _slice_spec(attrs["spec"])})


def _strided_slice_grad_rule(size, args, batched, attrs):
    return execute(registry.get_op("StridedSliceGrad"), (args[0],),
                   {"shape": (size,) + tuple(attrs["shape"]), "spec": _slice_spec(attrs["spec"])})


def _gather_rule(size, args, batched, attrs):
    array_ops, _ = _ops()
    params, indices = args
    axis, bd = attrs["axis"], attrs["batch_dims"]
    if batched[0] and not batched[1] and bd == 0:
        return execute(registry.get_op("GatherV2"), (params, indices), {"axis": axis + 1, "batch_dims": 0})
    if batched[1] and not batched[0] and bd == 0:
        out = execute(registry.get_op("GatherV2"), (params, indices), {"axis": axis, "batch_dims": 0})
        nd = len(out._shape_tuple())
        perm = (axis,) + tuple(i for i in range(nd) if i != axis)
        return array_ops.transpose(out, perm)
    if batched[0] and batched[1]:
        return execute(registry.get_op("GatherV2"), (params, indices), {"axis": axis + 1, "batch_dims": bd + 1})
    return _loop_rule(registry.get_op("GatherV2"), size, args, batched, attrs)


def _segment_sum_rule(size, args, batched, attrs):
    array_ops, _ = _ops()
    data, ids = args
    if batched[1]:
        return _loop_rule(registry.get_op("UnsortedSegmentSum"), size, args, batched, attrs)
    k = len(ids._shape_tuple())
    nd = len(data._shape_tuple())
    moved = array_ops.transpose(data, tuple(range(1, k + 1)) + (0,) + tuple(range(k + 1, nd)))
    out = execute(registry.get_op("UnsortedSegmentSum"), (moved, ids), attrs)
    return array_ops.transpose(out, (1, 0) + tuple(range(2, len(out._shape_tuple()))))


def _matmul_rule(size, args, batched, attrs):
    from tapeflow.ops import array_ops

    a, b = args
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    mm = registry.get_op("BatchMatMulV2")
    ra, rb = _lrank(a, batched[0]), _lrank(b, batched[1])
    if batched[0] and not batched[1] and ra == 2 and rb == 2:
        # Fold the batch into the rows: one BLAS call instead of a stack.
        if ta:
            a = array_ops.transpose(a, (0, 2, 1))
        _, m, k = a._shape_tuple()
        out = execute(mm, (_reshape(a, (size * m, k)), b), {"transpose_a": False, "transpose_b": tb})
        return _reshape(out, (size, m, out._shape_tuple()[-1]))
    if batched[1] and not batched[0] and ra == 2 and rb == 2:
        # out[i] = A' B'_i  <=>  out[i]^T = B'_i^T A'^T: fold the batch into B^T's rows.
        bt = b if tb else array_ops.transpose(b, (0, 2, 1))
        _, n, k = bt._shape_tuple()
        out = execute(mm, (_reshape(bt, (size * n, k)), a), {"transpose_a": False, "transpose_b": not ta})
        m = out._shape_tuple()[-1]
        return array_ops.transpose(_reshape(out, (size, n, m)), (0, 2, 1))
    rank = max(ra, rb)
    return execute(mm, (_lift(a, batched[0], rank), _lift(b, batched[1], rank)), attrs)


def _axes_rule(op_name: str):
    # ReverseV2 / Roll: a tuple of axes, all shifted past the batch axis.
    def rule(size, args, batched, attrs):
        a = dict(attrs)
        a["axis"] = tuple(int(i) + 1 for i in attrs["axis"])
        return execute(registry.get_op(op_name), (args[0],), a)

    return rule


def _leading_batch_rule(op_name: str):
    # Matrix ops act on the trailing two axes and accept any leading batch
    # axes: give every input the batch axis and run the op as is.
    def rule(size, args, batched, attrs):
        ranks = [_lrank(a, b) for a, b in zip(args, batched)]
        xs = tuple(materialize(a, b, size) for a, b in zip(args, batched))
        if len(set(ranks)) != 1:
            return _loop_rule(registry.get_op(op_name), size, args, batched, attrs)
        return execute(registry.get_op(op_name), xs, attrs)

    return rule


def _mirror_pad_rule(op_name: str):
    def rule(size, args, batched, attrs):
        a = dict(attrs)
        a["paddings"] = ((0, 0),) + tuple(tuple(p) for p in attrs["paddings"])
        return execute(registry.get_op(op_name), (args[0],), a)

    return rule


def _einsum_rule(size, args, batched, attrs):
    eq = attrs["equation"].replace(" ", "")
    if "->" not in eq:
        return _loop_rule(registry.get_op("Einsum"), size, args, batched, attrs)
    lhs, out = eq.split("->")
    free = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in eq)
    terms = [free + t if b else t for t, b in zip(lhs.split(","), batched)]
    return execute(registry.get_op("Einsum"), tuple(args), {**attrs, "equation": f"{','.join(terms)}->{free}{out}"})


def _fold_n_rule(op_name: str, data_index: int, sizes_attr: str | None = None):
    # Convolutions over NHWC data: fold the batch axis into N (the filter
    # must be unbatched), run once, unfold.
    def rule(size, args, batched, attrs):
        if any(b for i, b in enumerate(batched) if i != data_index):
            return _loop_rule(registry.get_op(op_name), size, args, batched, attrs)
        x = args[data_index]
        s = x._shape_tuple()
        xs = list(args)
        xs[data_index] = _reshape(x, (s[0] * s[1],) + tuple(s[2:]))
        a = dict(attrs)
        if sizes_attr is not None:
            n = tuple(attrs[sizes_attr])
            a[sizes_attr] = (size * n[0],) + n[1:]
        out = execute(registry.get_op(op_name), tuple(xs), a)
        o = out._shape_tuple()
        return _reshape(out, (size, o[0] // size) + tuple(o[1:]))

    return rule


def _fold_all_rule(op_name: str, sizes_attr: str | None = None):
    # Pooling ops over NHWC: every input gets the batch axis, folded into N.
    def rule(size, args, batched, attrs):
        xs = []
        for a, b in zip(args, batched):
            a = materialize(a, b, size)
            s = a._shape_tuple()
            xs.append(_reshape(a, (s[0] * s[1],) + tuple(s[2:])))
        a = dict(attrs)
        if sizes_attr is not None:
            n = tuple(attrs[sizes_attr])
            a[sizes_attr] = (size * n[0],) + n[1:]
        out = execute(registry.get_op(op_name), tuple(xs), a)
        o = out._shape_tuple()
        return _reshape(out, (size, o[0] // size) + tuple(o[1:]))

    return rule


def _channels_fold(t: Tensor, size: int) -> Tensor:
    """(B, ..., C) -> (..., B*C): the batch folded into the last axis."""
    from tapeflow.ops import array_ops

    s = t._shape_tuple()
    nd = len(s)
    moved = array_ops.transpose(t, tuple(range(1, nd - 1)) + (0, nd - 1))
    return _reshape(moved, tuple(s[1:-1]) + (size * s[-1],))


def _channels_unfold(t: Tensor, size: int) -> Tensor:
    """(..., B*C) -> (B, ..., C)."""
    from tapeflow.ops import array_ops

    s = t._shape_tuple()
    nd = len(s)
    split = _reshape(t, tuple(s[:-1]) + (size, s[-1] // size))
    return array_ops.transpose(split, (nd - 1,) + tuple(range(nd - 1)) + (nd,))


def _conv2d_rule(size, args, batched, attrs):
    if batched[0] and not batched[1]:
        return _fold_n_rule("Conv2D", 0)(size, args, batched, attrs)
    if batched[1] and not batched[0]:
        # A batch of filters: fold it into the output channels.
        return _channels_unfold(execute(registry.get_op("Conv2D"), (args[0], _channels_fold(args[1], size)), attrs),
                                size)
    return _loop_rule(registry.get_op("Conv2D"), size, args, batched, attrs)


def _conv2d_backprop_filter_rule(size, args, batched, attrs):
    x, dy = args
    if batched[1] and not batched[0]:
        a = dict(attrs)
        fs = tuple(attrs["filter_sizes"])
        a["filter_sizes"] = fs[:-1] + (size * fs[-1],)
        out = execute(registry.get_op("Conv2DBackpropFilter"), (x, _channels_fold(dy, size)), a)
        return _channels_unfold(out, size)
    return _loop_rule(registry.get_op("Conv2DBackpropFilter"), size, args, batched, attrs)


def _conv2d_backprop_input_rule(size, args, batched, attrs):
    w, dy = args
    if batched[1] and not batched[0]:
        return _fold_n_rule("Conv2DBackpropInput", 1, "input_sizes")(size, args, batched, attrs)
    if batched[0] and not batched[1]:
        # A batch of filters (B, kh, kw, ci, co): fold B into ci, the output channels here.
        from tapeflow.ops import array_ops

        s = w._shape_tuple()
        wf = _reshape(array_ops.transpose(w, (1, 2, 0, 3, 4)), (s[1], s[2], size * s[3], s[4]))
        a = dict(attrs)
        ins = tuple(attrs["input_sizes"])
        a["input_sizes"] = ins[:-1] + (size * ins[-1],)
        return _channels_unfold(execute(registry.get_op("Conv2DBackpropInput"), (wf, dy), a), size)
    return _loop_rule(registry.get_op("Conv2DBackpropInput"), size, args, batched, attrs)


def _gather_nd_rule(size, args, batched, attrs):
    # params (B, d0..dk-1, rest) -> (d0..dk-1, B, rest), gather, move B back to the front.
    from tapeflow.ops import array_ops

    params, indices = args
    if batched[1]:
        return _loop_rule(registry.get_op("GatherNd"), size, args, batched, attrs)
    depth = indices._shape_tuple()[-1]
    nd = len(params._shape_tuple())
    moved = array_ops.transpose(params, tuple(range(1, depth + 1)) + (0,) + tuple(range(depth + 1, nd)))
    out = execute(registry.get_op("GatherNd"), (moved, indices))
    k = len(indices._shape_tuple()) - 1
    on = len(out._shape_tuple())
    return array_ops.transpose(out, (k,) + tuple(range(k)) + tuple(range(k + 1, on)))


def _scatter_nd_rule(size, args, batched, attrs):
    # updates (B, idx..., rest) -> (idx..., B, rest); output (d0..dk-1, B, rest) -> B first.
    from tapeflow.ops import array_ops

    indices, updates = args
    if batched[0]:
        return _loop_rule(registry.get_op("ScatterNd"), size, args, batched, attrs)
    k = len(indices._shape_tuple()) - 1
    depth = indices._shape_tuple()[-1]
    un = len(updates._shape_tuple())
    moved = array_ops.transpose(updates, tuple(range(1, k + 1)) + (0,) + tuple(range(k + 1, un)))
    shape = tuple(attrs["shape"])
    out = execute(registry.get_op("ScatterNd"), (indices, moved), {**attrs, "shape": shape[:depth] + (size,) +
                                                                   shape[depth:]})
    on = len(out._shape_tuple())
    return array_ops.transpose(out, (depth,) + tuple(range(depth)) + tuple(range(depth + 1, on)))


def _sparse_xent_rule(size, args, batched, attrs):
    # The kernel takes logits (N, C) and labels (N,): fold the batch into N, unfold both outputs.
    logits, labels = (materialize(a, b, size) for a, b in zip(args, batched))
    ls = logits._shape_tuple()
    loss, backprop = execute(registry.get_op("SparseSoftmaxCrossEntropyWithLogits"),
                             (_reshape(logits, (size * ls[1], ls[2])), _reshape(labels, (size * ls[1],))), attrs)
    return [_reshape(loss, (size, ls[1])), _reshape(backprop, ls)]


def _last_axis_rule(op_name: str):
    # Ops over the last axis of equally shaped inputs (the dense cross-entropy): every input gets the batch axis.
    def rule(size, args, batched, attrs):
        return execute(registry.get_op(op_name), tuple(materialize(a, b, size) for a, b in zip(args, batched)), attrs)

    return rule


def _softmax_rule(op_name: str):
    # (Log)Softmax over its ``axis`` attr: a non-negative axis shifts past the batch axis.
    def rule(size, args, batched, attrs):
        axis = attrs["axis"]
        return execute(registry.get_op(op_name), (args[0],), dict(attrs, axis=axis + 1 if axis >= 0 else axis))

    return rule


# Elementwise ops also batched generically for integer inputs (batch_rule_for takes only float/bool ones, as
# an integer input may be indices): arithmetic, comparisons, bitwise ops.
_INTEGER_ELEMENTWISE = (
    "AddV2", "Sub", "Mul", "FloorDiv", "FloorMod", "TruncateDiv", "TruncateMod", "Maximum", "Minimum", "Neg", "Abs",
    "Sign", "Square", "Pow", "Less", "LessEqual", "Greater", "GreaterEqual", "Equal", "NotEqual", "BitwiseAnd",
    "BitwiseOr", "BitwiseXor", "Invert", "LeftShift", "RightShift", "ZerosLike", "OnesLike", "Identity",
)


def install() -> None:
    """Sets the rules below on their ops (keeping any an op family set itself)."""
    rules = {
        "Sum": _reduce_rule("Sum"), "Mean": _reduce_rule("Mean"), "Max": _reduce_rule("Max"),
        "Min": _reduce_rule("Min"), "Prod": _reduce_rule("Prod"), "All": _reduce_rule("All"),
        "Any": _reduce_rule("Any"),
        "Cumsum": _shift_axis_rule("Cumsum"), "Cumprod": _shift_axis_rule("Cumprod"),
        "Reshape": _reshape_rule, "Transpose": _transpose_rule,
        "ConcatV2": _concat_like_rule("ConcatV2"), "Pack": _concat_like_rule("Pack"),
        "Unpack": _unpack_rule, "SplitV": _split_rule, "Tile": _tile_rule, "BroadcastTo": _broadcast_to_rule,
        "Fill": _fill_rule, "StridedSlice": _strided_slice_rule, "StridedSliceGrad": _strided_slice_grad_rule,
        "GatherV2": _gather_rule, "UnsortedSegmentSum": _segment_sum_rule, "BatchMatMulV2": _matmul_rule,
    }
    rules.update({
        "ReverseV2": _axes_rule("ReverseV2"), "Roll": _axes_rule("Roll"), "Einsum": _einsum_rule,
        "MirrorPad": _mirror_pad_rule("MirrorPad"), "MirrorPadGrad": _mirror_pad_rule("MirrorPadGrad"),
        "Conv2D": _conv2d_rule, "Conv2DBackpropInput": _conv2d_backprop_input_rule,
        "Conv2DBackpropFilter": _conv2d_backprop_filter_rule,
        "MaxPool": _fold_all_rule("MaxPool"), "AvgPool": _fold_all_rule("AvgPool"),
        "MaxPoolGrad": _fold_all_rule("MaxPoolGrad"), "MaxPoolGradGrad": _fold_all_rule("MaxPoolGradGrad"),
        "AvgPoolGrad": _fold_all_rule("AvgPoolGrad", "orig_input_shape"),
        "GatherNd": _gather_nd_rule, "ScatterNd": _scatter_nd_rule,
        "DepthwiseConv2dNative": _fold_n_rule("DepthwiseConv2dNative", 0),
        "DepthwiseConv2dNativeBackpropInput": _fold_n_rule("DepthwiseConv2dNativeBackpropInput", 1, "input_sizes"),
        "SparseSoftmaxCrossEntropyWithLogits": _sparse_xent_rule,
        "SoftmaxCrossEntropyWithLogits": _last_axis_rule("SoftmaxCrossEntropyWithLogits"),
        "Softmax": _softmax_rule("Softmax"), "LogSoftmax": _softmax_rule("LogSoftmax"),
    })
    for name in ("MatrixBandPart", "MatrixDiagPartV3", "MatrixDiagV3", "MatrixSetDiagV3", "MatrixSolve",
                 "MatrixTriangularSolve"):
        rules[name] = _leading_batch_rule(name)
    for name, rule in rules.items():
        try:
            op = registry.get_op(name)
        except LookupError:
            continue
        if op.batch is None:
            op.batch = rule
    # Elementwise ops whose shape rule is not one of the generic ones.
    for name in ("Cast", "IsNan", "IsInf", "IsFinite", "SelectV2") + _INTEGER_ELEMENTWISE:
        try:
            op = registry.get_op(name)
        except LookupError:
            continue
        if op.batch is None:
            op.batch = _generic(op)
