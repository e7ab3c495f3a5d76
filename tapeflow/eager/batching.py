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

Two refinements keep the stack cheap: batched values are computed lazily
(a gradient the backward pass computes but never uses, such as the one for a
constant weight matrix, costs nothing), and the initial one-hot stack of
``tape.jacobian`` stays symbolic (``diag(d)``) through elementwise scaling,
reshapes and matrix-vector products, so the Jacobian of ``tanh(W x)`` is
O(n^2) work instead of an ``n x n x n`` product.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from tapeflow.framework.context import state
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, new_id
from tapeflow.ops import batch_rules, registry
# The per-op rules live with the ops (tapeflow/ops/batch_rules.py); _warned: ops already warned about.
from tapeflow.ops.batch_rules import _loop_rule, _reshape, _warned, batch_rule_for, register_batch_rule  # noqa: F401

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
    """A tensor of logical shape ``_value.shape`` standing for a stack of
    ``interp.size`` such tensors (see the module docstring).

    The stack is computed lazily: ``_phys`` (batch axis first) is built on
    first use, so gradients the backward pass computes but never uses (e.g.
    w.r.t. a constant weight matrix) cost nothing. A *diagonal* stack
    (``_diag`` set: row ``i`` is one-hot at flat index ``i`` times
    ``_diag``) is kept symbolic through elementwise scaling and reshapes, so
    the Jacobian of ``tanh(W x)`` needs no ``n x n x n`` product.
    """

    __slots__ = ("_p", "_interp", "_thunk", "_index", "_diag")

    def __init__(self, interp: BatchInterpreter, shape: tuple, dtype: Any, phys: Tensor | None = None,
                 thunk: _Thunk | None = None, index: int = -1, diag: Tensor | None = None) -> None:
        self._value = _Spec(shape, dtype)
        self._id = new_id()
        self._interp = interp
        self._p = phys
        self._thunk = thunk
        self._index = index
        self._diag = diag

    @property
    def _phys(self) -> Tensor:
        p = self._p
        if p is None:
            if self._diag is not None:
                p = _lowered(self._interp, _materialize_diag, self)
            else:
                res = _force(self._thunk)
                p = res if self._index < 0 else res[self._index]
            self._p = p
        return p

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
        return f"<BatchedTensor logical shape={self._value.shape} batch={self._interp.size}>"


class _Thunk:
    """A batched op not yet run: its rule, inputs and attrs."""

    __slots__ = ("interp", "op", "rule", "args", "flags", "attrs", "result")

    def __init__(self, interp, op, rule, args, flags, attrs) -> None:
        self.interp = interp
        self.op = op
        self.rule = rule
        self.args = args
        self.flags = flags
        self.attrs = attrs
        self.result = None

    def run(self) -> None:
        args = [a._phys if f else a for a, f in zip(self.args, self.flags)]
        interp = self.interp
        st = state
        saved = st._graph
        _set_graph(st, interp.prev)
        try:
            if self.rule is None:
                out = _loop_rule(self.op, interp.size, args, self.flags, self.attrs)
            else:
                out = self.rule(interp.size, args, self.flags, self.attrs)
        finally:
            _set_graph(st, saved)
        self.result = out
        self.args = None  # free the inputs


def _force(thunk: _Thunk):
    """Runs ``thunk`` after the thunks it depends on (iteratively: chains of
    lazy ops can be long)."""
    if thunk.result is not None:
        return thunk.result
    stack = [thunk]
    while stack:
        th = stack[-1]
        if th.result is not None:
            stack.pop()
            continue
        deps = [a._thunk for a, f in zip(th.args, th.flags)
                if f and a._p is None and a._diag is None and a._thunk.result is None]
        if deps:
            stack.extend(deps)
            continue
        stack.pop()
        th.run()
    return thunk.result


def _set_graph(st, g) -> None:
    # Cheaper than the ``graph`` property (no flag recomputation per op).
    st._graph = g
    st.plain = g is None and not st.recording
    st.lane = None


def _lowered(interp, fn, *args):
    """Runs ``fn`` with ``interp.prev`` (eager, or an outer graph) as the
    execution context, restoring whatever was current."""
    st = state
    saved = st._graph
    _set_graph(st, interp.prev)
    try:
        return fn(*args)
    finally:
        _set_graph(st, saved)


# Build batched values only when used (see BatchedTensor).
LAZY = True


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
        v = phys._value
        return BatchedTensor(self, tuple(v.shape[1:]), v.dtype, phys=phys)

    def diagonal(self, diag: Tensor) -> BatchedTensor:
        """The stack of one-hot rows scaled by ``diag`` (batch = diag's size)."""
        v = diag._value
        return BatchedTensor(self, tuple(v.shape), v.dtype, diag=diag)

    def read_variable(self, var) -> Tensor:
        return _lowered(self, var.value)

    def add_op(self, op, inputs: tuple, attrs: dict):
        flags = None
        diag = False
        for i, x in enumerate(inputs):
            if type(x) is BatchedTensor and x._interp is self:
                if flags is None:
                    flags = [False] * len(inputs)
                flags[i] = True
                if x._diag is not None:
                    diag = True
        if flags is None:
            return _lowered(self, execute, op, inputs, attrs)
        inline = op.extra.get("batch_inline")  # a tf.function call: graph/functional_ops.py
        if inline is not None:
            out = inline(op, inputs, attrs)
            if out is not None:
                return out
        if diag:
            rule = _DIAG_RULES.get(op.name)
            if rule is not None:
                out = _lowered(self, rule, self, inputs, flags, attrs)
                if out is not None:
                    return out
        rule = op.batch or batch_rule_for(op, attrs, inputs)
        specs = None
        if LAZY and op.shape is not None:
            try:
                specs = op.shape([(x._value.shape, x._value.dtype) for x in inputs], **attrs)
            except Exception:  # noqa: BLE001 - any trouble: run it now instead
                specs = None
            if specs is not None and any(sh is None or None in sh for sh, _ in specs):
                specs = None
        thunk = _Thunk(self, op, rule, list(inputs), flags, attrs)
        if specs is None:
            _force(thunk)
            res = thunk.result
            if isinstance(res, (list, tuple)):
                return [BatchedTensor(self, tuple(r._shape_tuple()[1:]), r._value.dtype, phys=r) for r in res]
            return BatchedTensor(self, tuple(res._shape_tuple()[1:]), res._value.dtype, phys=res)
        if len(specs) == 1 and not callable(op.num_outputs) and op.num_outputs == 1:
            sh, dt = specs[0]
            return BatchedTensor(self, tuple(sh), _np_dtype(dt), thunk=thunk)
        return [BatchedTensor(self, tuple(sh), _np_dtype(dt), thunk=thunk, index=i)
                for i, (sh, dt) in enumerate(specs)]


def _np_dtype(dt: Any) -> np.dtype:
    if isinstance(dt, np.dtype):
        return dt
    return np.dtype(getattr(dt, "_np", dt))


# -- diagonal (one-hot) stacks -------------------------------------------------

def _materialize_diag(bt: BatchedTensor) -> Tensor:
    from tapeflow.ops import math_ops

    d = bt._diag
    shape = tuple(d._shape_tuple())
    n = int(np.prod(shape, dtype=np.int64))
    eye = Tensor(np.eye(n, dtype=d._value.dtype))
    full = math_ops.multiply(eye, _reshape(d, (n,))) if n else eye
    return _reshape(full, (n,) + shape)


def _diag_scale(interp, inputs, flags, attrs, fn):
    """``diag(d) (*) u`` for elementwise ``fn`` linear in the batched input,
    when ``u`` broadcasts to the diagonal's own shape."""
    (a, fa), (b, fb) = zip(inputs, flags)
    if fa and fb:
        return None
    bt, other = (a, b) if fa else (b, a)
    shape = bt._value.shape
    oshape = other._shape_tuple()
    if len(oshape) > len(shape) or any(o != 1 and o != s for o, s in zip(oshape[::-1], shape[::-1])):
        return None
    d = fn(bt._diag, other) if fa else fn(other, bt._diag)
    if d is None or tuple(d._shape_tuple()) != tuple(shape):
        return None
    return interp.diagonal(d)


def _diag_mul(interp, inputs, flags, attrs):
    from tapeflow.ops import math_ops

    return _diag_scale(interp, inputs, flags, attrs, math_ops.multiply)


def _diag_div(interp, inputs, flags, attrs):
    from tapeflow.ops import math_ops

    if flags[1]:
        return None  # u / diag is not diagonal
    return _diag_scale(interp, inputs, flags, attrs, math_ops.divide_)


def _diag_unary(fn_name):
    def rule(interp, inputs, flags, attrs):
        from tapeflow.ops import array_ops, math_ops

        fn = {"neg": math_ops.negative, "id": array_ops.identity, "zeros": array_ops.zeros_like}[fn_name]
        return interp.diagonal(fn(inputs[0]._diag))

    return rule


def _diag_reshape(interp, inputs, flags, attrs):

    return interp.diagonal(_reshape(inputs[0]._diag, attrs["shape"]))


def _diag_cast(interp, inputs, flags, attrs):
    return interp.diagonal(execute(registry.get_op("Cast"), (inputs[0]._diag,), attrs))


def _diag_select(interp, inputs, flags, attrs):
    c, x, y = inputs
    if flags[0] or not (flags[1] and flags[2]) or x._diag is None or y._diag is None:
        return None
    if tuple(c._shape_tuple()) != tuple(x._value.shape) or x._value.shape != y._value.shape:
        return None
    return interp.diagonal(execute(registry.get_op("SelectV2"), (c, x._diag, y._diag)))


def _diag_add(interp, inputs, flags, attrs):
    # diag + diag stays diagonal (several paths from one target element).
    if not all(flags) or any(x._diag is None for x in inputs):
        return None
    if len({x._value.shape for x in inputs}) != 1:
        return None
    return interp.diagonal(execute(registry.get_op("AddN"), tuple(x._diag for x in inputs))
                           if len(inputs) > 2 else execute(registry.get_op("AddV2"), tuple(x._diag for x in inputs)))


def _diag_matmul(interp, inputs, flags, attrs):
    """``a @ diag`` with a column-vector diagonal, or ``diag @ b`` with a
    row-vector one (the matvec cases): an outer-product scaling, O(n^2)."""
    from tapeflow.ops import array_ops, math_ops

    a, b = inputs
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    if flags[0] == flags[1]:
        return None
    if (flags[1] and b._diag is not None and not tb and len(a._shape_tuple()) == 2 and len(b._value.shape) == 2
            and b._value.shape[1] == 1):
        k = b._value.shape[0]
        at = a if ta else array_ops.transpose(a)  # (k, m): row p is column p of A'
        out = math_ops.multiply(_reshape(b._diag, (k, 1)), at)
        m = out._shape_tuple()[1]
        return interp.wrap(_reshape(out, (k, m, 1)))
    if (flags[0] and a._diag is not None and not ta and len(b._shape_tuple()) == 2 and len(a._value.shape) == 2
            and a._value.shape[0] == 1):
        n2 = a._value.shape[1]
        bp = array_ops.transpose(b) if tb else b  # (n2, r)
        out = math_ops.multiply(_reshape(a._diag, (n2, 1)), bp)
        return interp.wrap(_reshape(out, (n2, 1, out._shape_tuple()[1])))
    return None


_DIAG_RULES = {
    "Mul": _diag_mul, "RealDiv": _diag_div, "Neg": _diag_unary("neg"), "Identity": _diag_unary("id"),
    "ZerosLike": _diag_unary("zeros"), "Reshape": _diag_reshape, "Cast": _diag_cast, "SelectV2": _diag_select,
    "AddV2": _diag_add, "AddN": _diag_add, "BatchMatMulV2": _diag_matmul,
}


batch_rules.install()  # the ops get their rules when the interpreter is first needed (as before the move)
