"""Vectorizing interpreter: runs ops on values that carry a leading batch axis.

``tape.jacobian`` needs one backward pass per output element; run naively
that is N passes. Instead the backward pass runs *once* with a stack of N
cotangents. A stacked value is a :class:`BatchedTensor`: to the code that
handles it (gradient rules, public op functions, the engine) it looks like
one per-example tensor of its *logical* shape, while the array really
computed (``_phys``) has the batch axis in front. While a
:class:`BatchInterpreter` is installed as ``state.graph`` (the same op
interceptor ``tf.function`` tracing uses), every ``execute`` call lands in
``add_op``: ops with no batched input simply run; ops with one are rewritten
by their *batching rule* (``registry.get_op(name).batch``) into ordinary ops
on the physical arrays (e.g. ``Sum(axis=0)`` becomes ``Sum(axis=1)``). The
rewritten ops execute normally, so outer tapes record them and a jacobian
can itself be differentiated.

A batching rule is ``rule(size, args, batched, attrs) -> Tensor | list``:
``args`` are the physical inputs (batch axis first where ``batched[i]``),
and every output it returns must carry the batch axis first. Elementwise
ops get a generic rule; an op with no rule falls back to a per-row loop for
that op only, after a one-time warning naming it.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np

from tapeflow.framework.context import state
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, new_id
from tapeflow.ops import registry, shapes

_log = logging.getLogger("tapeflow")

__all__ = ["BatchedTensor", "BatchInterpreter", "register_batch_rule", "batch_rule_for"]


class _Spec:
    """The logical (per-example) shape and dtype of a batched value; it
    stands in for ``Tensor._value`` as graph tracing's abstract values do."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple, dtype: Any) -> None:
        self.shape = shape
        self.dtype = dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


class BatchedTensor(Tensor):
    """A tensor of logical shape ``_phys.shape[1:]`` standing for a stack of
    ``_phys.shape[0]`` such tensors (see the module docstring)."""

    __slots__ = ("_phys", "_interp")

    def __init__(self, phys: Tensor, interp: BatchInterpreter) -> None:
        v = phys._value
        self._value = _Spec(tuple(v.shape[1:]), v.dtype)
        self._id = new_id()
        self._phys = phys
        self._interp = interp

    def numpy(self):
        raise NotImplementedError(
            "A batched tensor (inside a vectorized jacobian) has no single value; a gradient rule must use "
            "tapeflow ops, not .numpy(), to be vectorizable (or pass experimental_use_pfor=False)."
        )

    def __array__(self, dtype=None, copy=None):
        return self.numpy()

    def __bool__(self) -> bool:
        raise TypeError("The truth value of a batched tensor inside a vectorized jacobian is not defined.")

    def __repr__(self) -> str:
        return f"<BatchedTensor logical shape={self._value.shape} batch={self._phys._value.shape[0]}>"


_warned: set[str] = set()


class BatchInterpreter:
    """The op interceptor installed as ``state.graph`` during a vectorized
    backward pass. ``prev`` is the context it lowers to (eager, or an outer
    graph/interpreter)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.prev = None

    def __enter__(self) -> BatchInterpreter:
        self.prev = state.graph
        state.graph = self
        return self

    def __exit__(self, *exc) -> None:
        state.graph = self.prev

    def wrap(self, phys: Tensor) -> BatchedTensor:
        return BatchedTensor(phys, self)

    def read_variable(self, var) -> Tensor:
        st = state
        st.graph = self.prev
        try:
            return var.value()
        finally:
            st.graph = self

    def add_op(self, op, inputs: tuple, attrs: dict):
        flags = [type(x) is BatchedTensor and x._interp is self for x in inputs]
        st = state
        st.graph = self.prev
        try:
            if True not in flags:
                return execute(op, inputs, attrs)
            args = [x._phys if f else x for x, f in zip(inputs, flags)]
            rule = op.batch or batch_rule_for(op, attrs)
            if rule is None:
                out = _loop_rule(op, self.size, args, flags, attrs)
            else:
                out = rule(self.size, args, flags, attrs)
        finally:
            st.graph = self
        if isinstance(out, (list, tuple)):
            return [BatchedTensor(o, self) for o in out]
        return BatchedTensor(out, self)


# -- helpers used by rules (all are tapeflow ops, so outer tapes record them) --

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
    return array_ops.reshape(a, (s[0],) + (1,) * (rank - r) + tuple(s[1:]))


def materialize(a: Tensor, batched: bool, size: int) -> Tensor:
    """``a`` with the batch axis present (an unbatched value is repeated)."""
    if batched:
        return a
    array_ops, _ = _ops()
    s = a._shape_tuple()
    return array_ops.broadcast_to(array_ops.reshape(a, (1,) + tuple(s)), (size,) + tuple(s))


def _generic(op):
    def rule(size, args, batched, attrs):
        rank = max(_lrank(a, b) for a, b in zip(args, batched))
        return execute(op, tuple(_lift(a, b, rank) for a, b in zip(args, batched)), attrs)

    return rule


_ELEMENTWISE_SHAPES = (shapes.same, shapes.broadcast, shapes.broadcast_bool)


def _is_structural(v: Any) -> bool:
    # Attrs that index axes or give shapes change meaning under a batch axis.
    if isinstance(v, bool) or v is None:
        return False
    return isinstance(v, (int, np.integer, tuple, list))


def batch_rule_for(op, attrs: dict | None):
    """The generic elementwise rule for ``op`` if it qualifies (shape rule is
    same/broadcast and no attr names axes or shapes), else ``None``."""
    if op.shape in _ELEMENTWISE_SHAPES and not any(_is_structural(v) for v in (attrs or {}).values()):
        return _generic(op)
    return None


def register_batch_rule(name: str, rule) -> None:
    registry.get_op(name).batch = rule


def _loop_rule(op, size, args, batched, attrs):
    """No batching rule: run ``op`` once per row and stack (warned once)."""
    if op.name not in _warned:
        _warned.add(op.name)
        msg = (f"Op '{op.name}' has no batching rule, so the vectorized jacobian runs it once per row "
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
    x = array_ops.reshape(args[0], (size,) + (1,) * len(shape))
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
        out = execute(mm, (array_ops.reshape(a, (size * m, k)), b), {"transpose_a": False, "transpose_b": tb})
        return array_ops.reshape(out, (size, m, out._shape_tuple()[-1]))
    if batched[1] and not batched[0] and ra == 2 and rb == 2:
        # out[i] = A' B'_i  <=>  out[i]^T = B'_i^T A'^T: fold the batch into B^T's rows.
        bt = b if tb else array_ops.transpose(b, (0, 2, 1))
        _, n, k = bt._shape_tuple()
        out = execute(mm, (array_ops.reshape(bt, (size * n, k)), a), {"transpose_a": False, "transpose_b": not ta})
        m = out._shape_tuple()[-1]
        return array_ops.transpose(array_ops.reshape(out, (size, n, m)), (0, 2, 1))
    rank = max(ra, rb)
    return execute(mm, (_lift(a, batched[0], rank), _lift(b, batched[1], rank)), attrs)


def _install() -> None:
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
    for name, rule in rules.items():
        try:
            op = registry.get_op(name)
        except LookupError:
            continue
        if op.batch is None:
            op.batch = rule
    # Elementwise ops whose shape rule is not one of the generic ones.
    for name in ("Cast", "IsNan", "IsInf", "IsFinite", "SelectV2"):
        try:
            op = registry.get_op(name)
        except LookupError:
            continue
        if op.batch is None:
            op.batch = _generic(op)


_install()
