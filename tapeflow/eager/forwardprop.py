"""``tf.autodiff.ForwardAccumulator``: forward-mode autodiff (JVPs).

While the accumulator is active, ``record_operation`` hands it every executed
op (``_process``) and every variable read (``_process_read``). For an op with
a tangent on some input it computes the output tangents right away, with:

* the op's JVP rule ``registry.get_op(name).jvp`` when one is written (the
  common ops below: fast, one or two ops each), else
* the *double-VJP trick*, as TF: the gradient rule ``u -> VJP(u)`` is linear
  in the cotangent ``u``, so differentiating ``<VJP(u), tangent>`` w.r.t.
  ``u`` with a small internal tape gives ``J @ tangent`` for any op that has
  a gradient rule (custom gradients included).

Tangent computations are ordinary ops: tapes entered *before* the
accumulator record them (backward-over-forward, e.g. a Hessian-vector
product by ``tape.gradient(acc.jvp(y), x)``) and so do accumulators entered
before it (forward-over-forward); the accumulator itself, and the tapes and
accumulators entered inside it, do not see them (as in TF). An accumulator watching
a tape's backward pass gives forward-over-backward Hessian-vector products.
"""

from __future__ import annotations

import weakref
from typing import Any

from tapeflow.eager import tape as tape_lib
from tapeflow.eager.backprop import UnconnectedGradients, _unconnected, aggregate, op_gradients
from tapeflow.eager.tape import OpRecord
from tapeflow.framework import nest
from tapeflow.framework import variables as variables_mod
from tapeflow.framework.context import state
from tapeflow.framework.execute import execute
from tapeflow.framework.indexed_slices import IndexedSlices
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import array_ops, math_ops, registry

__all__ = ["ForwardAccumulator"]


class ForwardAccumulator:
    """Computes Jacobian-vector products with forward-mode autodiff.

    >>> x = tf.constant([1.0, 2.0])
    >>> with tf.autodiff.ForwardAccumulator(primals=x, tangents=tf.constant([3.0, 4.0])) as acc:
    ...     y = x * x
    >>> acc.jvp(y)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 6., 16.], dtype=float32)>

    ``primals`` (tensors or variables, any nested structure) get the
    matching ``tangents``; only ops run inside the ``with`` block are
    tracked.
    """

    def __init__(self, primals: Any, tangents: Any) -> None:
        self._tangents: dict[int, Tensor] = {}
        # Tangents of op outputs are dropped once their primal is garbage
        # (swept when the table doubles), so a long loop inside the context
        # does not keep every intermediate tangent alive.
        self._refs: dict[int, Any] = {}
        self._sweep_at = 1024
        self._recording = False
        self._outer_tapes: tuple = ()
        nest.assert_same_structure(primals, tangents)
        for p, t in zip(nest.flatten(primals), nest.flatten(tangents)):
            self._watch(p, t)

    def _watch(self, primal: Any, tangent: Any) -> None:
        if isinstance(primal, variables_mod.Variable):
            key, dtype, shape = primal._id, primal.dtype, tuple(primal._shape_tuple())
        elif isinstance(primal, Tensor):
            key, dtype, shape = primal._id, primal.dtype, tuple(primal._shape_tuple())
        else:
            raise TypeError(
                f"ForwardAccumulator primals must be tf.Tensor or tf.Variable objects, got {type(primal).__name__}"
            )
        t = convert_to_tensor(tangent, dtype=dtype)
        tshape = tuple(t._shape_tuple())
        if tshape != shape and None not in tshape + shape:
            raise ValueError(
                f"ForwardAccumulator: the tangent's shape {list(tshape)} does not match its primal's shape "
                f"{list(shape)}; pass one tangent of the primal's shape and dtype per primal."
            )
        if not (dtype.is_floating or dtype.is_complex):
            return  # integer primals have no tangent, as in TF
        self._tangents[key] = t

    # context management
    def __enter__(self) -> ForwardAccumulator:
        if self._recording:
            raise ValueError("Accumulator is already recording.")
        self._outer_tapes = tuple(state.tapes)  # the tapes that will see its tangent computations (as TF)
        state.accumulators.append(self)
        state.update_recording()
        self._recording = True
        return self

    def __exit__(self, typ, value, traceback) -> None:
        if self._recording:
            accs = state.accumulators
            for i in range(len(accs) - 1, -1, -1):
                if accs[i] is self:
                    del accs[i]
                    break
            state.update_recording()
            self._recording = False

    # results
    def jvp(self, primals: Any, unconnected_gradients: Any = UnconnectedGradients.NONE) -> Any:
        """The tangent of each of ``primals`` (any nested structure): None if
        it does not depend on the watched primals, or zeros with
        ``unconnected_gradients=tf.UnconnectedGradients.ZERO``."""
        unconnected = _unconnected(unconnected_gradients)
        out = []
        for p in nest.flatten(primals):
            if p is None:
                out.append(None)
                continue
            t = self._tangents.get(p._id)
            if t is None and unconnected is UnconnectedGradients.ZERO:
                t = array_ops.zeros_like(p)
            out.append(t)
        return nest.pack_sequence_as(primals, out)

    # hooks called by the engine
    def _process_read(self, var, value: Tensor) -> None:
        t = self._tangents.get(var._id)
        if t is not None:
            self._set(value, t)

    def _process(self, op, inputs: tuple, attrs: dict | None, outputs: tuple) -> None:
        tans = self._tangents
        tin = None
        for i, x in enumerate(inputs):
            t = tans.get(x._id)
            if t is not None:
                if tin is None:
                    tin = [None] * len(inputs)
                tin[i] = t
        if tin is None:
            return
        spec = registry._GRADS.get(op.name)
        if spec is None or spec.fn is None:
            return  # not differentiable (StopGradient, comparisons...): no tangent
        with _Paused(self):
            if op.jvp is not None:
                touts = op.jvp(op, inputs, attrs or {}, outputs, tin)
            else:
                rec = _record_for(op.name, attrs, inputs, outputs, spec.fn)
                touts = _jvp_by_double_vjp(rec, inputs, outputs, tin)
        self._store(outputs, touts)

    def _process_custom(self, rec: OpRecord, inputs: tuple, outputs: tuple) -> None:
        """A custom-gradient call recorded as one op: JVP by double VJP of
        its gradient function, for outputs the forward ops left without one."""
        tans = self._tangents
        tin = [tans.get(x._id) for x in inputs]
        if all(t is None for t in tin):
            return
        # As TF: outputs that already got a tangent from the forward ops keep it.
        missing = [o._id not in tans for o in outputs]
        if not any(missing):
            return
        with _Paused(self):
            touts = _jvp_by_double_vjp(rec, inputs, outputs, tin)
        self._store(outputs, [t if m else None for t, m in zip(touts, missing)])

    def _store(self, outputs: tuple, touts: Any) -> None:
        if type(touts) is Tensor and len(outputs) == 1:  # (the common one-output case)
            o = outputs[0]
            ov = o._value
            if ov.dtype.kind in "fc" and touts._value.shape == ov.shape:
                self._set(o, touts)
                return
        if not isinstance(touts, (list, tuple)):
            touts = (touts,)
        for o, t in zip(outputs, touts):
            if t is None or o._value.dtype.kind not in "fc":
                continue
            if isinstance(t, IndexedSlices):
                t = convert_to_tensor(t)
            oshape = o._shape_tuple()
            if t._shape_tuple() != oshape:
                t = array_ops.broadcast_to(t, oshape)
            self._set(o, t)

    def _set(self, primal: Tensor, tangent: Tensor) -> None:
        key = primal._id
        self._tangents[key] = tangent
        self._refs[key] = weakref.ref(primal)
        if len(self._refs) >= self._sweep_at:
            dead = [k for k, r in self._refs.items() if r() is None]
            for k in dead:
                del self._refs[k]
                self._tangents.pop(k, None)
            self._sweep_at = max(1024, 2 * len(self._refs))


class _Paused:
    """Hides ``acc``, the accumulators entered after it and the tapes entered
    after it while it computes tangents: as in TF, only outer accumulators
    and tapes see those ops (a tape inside the accumulator records the
    primal computation, not its tangents)."""

    __slots__ = ("acc", "saved_accs", "saved_tapes")

    def __init__(self, acc: ForwardAccumulator) -> None:
        self.acc = acc

    def __enter__(self) -> None:
        st = state
        accs = st.accumulators
        self.saved_accs = accs
        if accs[0] is self.acc:  # (the usual one accumulator: nothing outside it)
            st.accumulators = []
        else:
            idx = next((i for i, a in enumerate(accs) if a is self.acc), len(accs))
            st.accumulators = accs[:idx]
        tapes = self.saved_tapes = st.tapes
        if tapes:
            outer = self.acc._outer_tapes
            st.tapes = [tp for tp in tapes if tp in outer]
        st.update_recording()

    def __exit__(self, *exc) -> None:
        st = state
        st.accumulators = self.saved_accs
        st.tapes = self.saved_tapes
        st.update_recording()


def _record_for(name: str, attrs, inputs: tuple, outputs: tuple, fn) -> OpRecord:
    return OpRecord(
        name, attrs or {}, tuple(t._id for t in inputs), tuple(o._id for o in outputs), inputs, outputs,
        tuple(t._shape_tuple() for t in inputs), tuple(t._value.dtype for t in inputs),
        tuple(o._shape_tuple() for o in outputs), tuple(o._value.dtype for o in outputs), fn,
    )


def _jvp_by_double_vjp(rec: OpRecord, inputs: tuple, outputs: tuple, tin: list) -> list:
    """``J @ t`` from the gradient rule: d/du <VJP(u), t> with u a dummy
    cotangent (the rule is linear in u, so its value does not matter)."""
    us = []
    for o in outputs:
        if o._value.dtype.kind in "fc":
            # Ones, not zeros: any value works (the rule is linear in u), and
            # rules that shortcut all-zero upstream gradients (a function
            # call skipping its saved intermediates) would cut the tangent.
            us.append(array_ops.ones(o._shape_tuple(), dtype=o.dtype))
        else:
            us.append(None)
    tp = tape_lib.Tape(persistent=False, watch_accessed_variables=False)
    tp.watched.update(u._id for u in us if u is not None)
    state.tapes.append(tp)
    state.update_recording()
    try:
        grads = op_gradients(rec, list(us))
        # Densify sparse gradients while the tape still records (the
        # conversion must link them to u).
        grads = [convert_to_tensor(g) if isinstance(g, IndexedSlices) else g for g in grads]
    finally:
        state.tapes.remove(tp)
        state.update_recording()
    initial: dict[int, list] = {}
    for g, t in zip(grads, tin):
        if g is None or t is None:
            continue
        initial.setdefault(g._id, []).append(t)
    if not initial:
        return [None] * len(outputs)
    u_ids = {u._id for u in us if u is not None}
    found = tape_lib.backward(tp.records, initial, u_ids, op_gradients, aggregate, True)
    return [None if u is None else found.get(u._id) for u in us]


# -- fast JVP rules for common ops (``op.jvp``) ----------------------------------

def _linear(op, inputs, attrs, outputs, tin):
    # Ops linear in their only differentiable input: apply the op to the tangent.
    return execute(op, (tin[0],) + tuple(inputs[1:]), attrs or None)


def _linear_all(op, inputs, attrs, outputs, tin):
    # Ops linear in every input jointly (AddN, ConcatV2, Pack): zeros for the rest.
    ts = tuple(array_ops.zeros_like(x) if t is None else t for x, t in zip(inputs, tin))
    return execute(op, ts, attrs or None)


def _add_jvp(op, inputs, attrs, outputs, tin):
    mo = math_ops
    a, b = tin
    if a is None:
        return b
    if b is None:
        return a
    return mo.add(a, b)


def _sub_jvp(op, inputs, attrs, outputs, tin):
    mo = math_ops
    a, b = tin
    if b is None:
        return a
    if a is None:
        return mo.negative(b)
    return mo.subtract(a, b)


def _mul_jvp(op, inputs, attrs, outputs, tin):
    mo = math_ops
    x, y = inputs
    tx, ty = tin
    terms = []
    if tx is not None:
        terms.append(mo.multiply(tx, y))
    if ty is not None:
        terms.append(mo.multiply(x, ty))
    return terms[0] if len(terms) == 1 else mo.add(terms[0], terms[1])


def _div_jvp(op, inputs, attrs, outputs, tin):
    mo = math_ops
    x, y = inputs
    tx, ty = tin
    z = outputs[0]
    if ty is None:
        return mo.divide_(tx, y)
    num = mo.multiply(mo.negative(z), ty) if tx is None else mo.subtract(tx, mo.multiply(z, ty))
    return mo.divide_(num, y)


def _matmul_jvp(op, inputs, attrs, outputs, tin):
    mo = math_ops
    a, b = inputs
    ta, tb = tin
    terms = []
    if ta is not None:
        terms.append(execute(op, (ta, b), attrs))
    if tb is not None:
        terms.append(execute(op, (a, tb), attrs))
    return terms[0] if len(terms) == 1 else mo.add(terms[0], terms[1])


def _unary(fn):
    def rule(op, inputs, attrs, outputs, tin):
        return fn(inputs[0], outputs[0], tin[0])

    return rule


def _tanh(x, y, t):
    mo = math_ops
    return mo.multiply(t, mo.subtract(1.0, mo.square(y)))


def _sigmoid(x, y, t):
    mo = math_ops
    return mo.multiply(t, mo.multiply(y, mo.subtract(1.0, y)))


def _exp(x, y, t):
    mo = math_ops
    return mo.multiply(t, y)


def _log(x, y, t):
    mo = math_ops
    return mo.divide_(t, x)


def _sin(x, y, t):
    mo = math_ops
    return mo.multiply(t, mo.cos(x))


def _cos(x, y, t):
    mo = math_ops
    return mo.negative(mo.multiply(t, mo.sin(x)))


def _square(x, y, t):
    mo = math_ops
    return mo.multiply(t, mo.multiply(x, 2.0))


def _sqrt(x, y, t):
    mo = math_ops
    return mo.divide_(mo.multiply(t, 0.5), y)


def _neg(x, y, t):
    mo = math_ops
    return mo.negative(t)


def _relu(x, y, t):
    mo = math_ops
    return mo.where(mo.greater(y, 0), t, array_ops.zeros_like(t))


def _select_jvp(op, inputs, attrs, outputs, tin):
    c, x, y = inputs
    _, tx, ty = tin
    tx = array_ops.zeros_like(x) if tx is None else tx
    ty = array_ops.zeros_like(y) if ty is None else ty
    return execute(op, (c, tx, ty))


def _cast_jvp(op, inputs, attrs, outputs, tin):
    if outputs[0]._value.dtype.kind not in "fc":
        return None
    return execute(op, (tin[0],), attrs)


def _install() -> None:
    rules = {
        "AddV2": _add_jvp, "Sub": _sub_jvp, "Mul": _mul_jvp, "RealDiv": _div_jvp, "BatchMatMulV2": _matmul_jvp,
        "Tanh": _unary(_tanh), "Sigmoid": _unary(_sigmoid), "Exp": _unary(_exp), "Log": _unary(_log),
        "Sin": _unary(_sin), "Cos": _unary(_cos), "Square": _unary(_square), "Sqrt": _unary(_sqrt),
        "Neg": _unary(_neg), "Relu": _unary(_relu), "SelectV2": _select_jvp, "Cast": _cast_jvp,
        "AddN": _linear_all, "ConcatV2": _linear_all, "Pack": _linear_all,
    }
    for name in ("Identity", "Reshape", "Transpose", "Sum", "Mean", "Cumsum", "StridedSlice", "StridedSliceGrad",
                 "Tile", "BroadcastTo", "Unpack", "SplitV", "GatherV2", "UnsortedSegmentSum"):
        rules[name] = _linear
    for name, rule in rules.items():
        try:
            op = registry.get_op(name)
        except LookupError:
            continue
        if op.jvp is None:
            op.jvp = rule


_install()
