"""``tf.GradientTape``: recording ops and computing gradients from the records.

The low-level ``Tape`` and the reverse walk live in ``tape.py``; this module
adds TF's semantics (watching, variables, nested structures, persistence,
unconnected gradients) and the math glue: calling gradient rules, filling
zeros for outputs without a gradient, unbroadcasting once, aggregating.
"""

from __future__ import annotations

import contextlib
import enum
import logging
from itertools import chain, compress, count
from operator import attrgetter, itemgetter
from typing import Any

import numpy as np

from tapeflow.eager import tape as tape_lib
from tapeflow.eager.tape import OpRecord, RecordMeta
from tapeflow.framework import execute as execute_mod
from tapeflow.framework import nest
from tapeflow.framework import variables as variables_mod
from tapeflow.framework.composite_tensor import CompositeTensor
from tapeflow.framework.context import state
from tapeflow.framework.indexed_slices import IndexedSlices
from tapeflow.framework.tensor import AbstractValue, Tensor, convert_to_tensor
from tapeflow.framework.variables import Variable
from tapeflow.ops import registry

_log = logging.getLogger("tapeflow")


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


def _unconnected(value: Any) -> UnconnectedGradients:
    if type(value) is UnconnectedGradients:
        return value
    try:
        return UnconnectedGradients(value)
    except ValueError:
        raise ValueError(f"Unknown value for unconnected_gradients: {value!r}") from None


# -- recording ---------------------------------------------------------------

_GRADS = registry._GRADS
_FLOAT_KINDS = ("f", "c")


def record_operation(op, inputs: tuple, attrs: dict | None, outputs: tuple) -> None:
    """Called by ``execute`` for every op while something is recording."""
    st = state
    tapes = st.tapes
    if tapes:
        if len(tapes) == 1 and len(outputs) == 1:
            # The hottest case, inline (what _follow does): one tape recording along its template, an op
            # with one or two inputs and one output, no accumulator or debug hook. Anything else, and
            # any departure from the template, takes the general path below.
            tp = tapes[0]
            lazy = tp.lazy
            if lazy and op in lazy and inputs and st._debug_hook is None:
                # Following lazily (tape.Lane): keep the op, check it at gradient time.
                w = tp.watched
                a = inputs[0]._id
                n = len(inputs)
                if n == 1:
                    ids = None if a not in w else (a,)
                elif n == 2:
                    b = inputs[1]._id
                    ids = None if a not in w and b not in w else (a, b)
                else:  # (a function call: its saved tensors)
                    ids = tuple([t._id for t in inputs])
                    if w.isdisjoint(ids):
                        ids = None
                if ids is not None:
                    o = outputs[0]
                    if not attrs or o._value.dtype.kind in _FLOAT_KINDS:  # (else not recorded)
                        oid = o._id
                        w.add(oid)
                        tp.light.append(
                            (op, inputs, o, attrs, (a, oid) if n == 1 else (a, b, oid) if n == 2 else (*ids, oid))
                        )
                if st.accumulators:
                    for acc in st.accumulators:
                        acc._process(op, inputs, attrs, outputs)
                elif st._graph is None:
                    st.lane = tp  # (execute1/execute2 hand it their ops directly from now on)
                return
            tpl = tp.tpl
            if tpl is not None and tpl is not _UNDECIDED and st._debug_hook is None and not st.accumulators:
                light = tp.light
                k = len(light)
                fast = tpl.fast
                n = len(inputs)
                if k < len(fast) and (n == 1 or n == 2):
                    f = fast[k]
                    if f is not None and f[1] == op.name:
                        espec, _, oshape, odtype, akey, tattrs, ein, save_in, save_out = f
                        w = tp.watched
                        a = inputs[0]._id
                        if n == 1:
                            if a not in w:
                                return  # no watched input: not recorded (the template goes on)
                            ids = (a,)
                        else:
                            b = inputs[1]._id
                            if a not in w and b not in w:
                                return
                            ids = (a, b)
                        if _GRADS.get(op.name) is espec and (
                            not attrs if akey is None else attrs and _attrs_match(attrs, tattrs, akey)
                        ):
                            o = outputs[0]
                            v = o._value
                            d = v.dtype
                            if v.shape == oshape and (d is odtype or d == odtype) and type(v) is not AbstractValue:
                                pos = tp.pos
                                p = pos.get(a)
                                if p is None:
                                    p = _seen(pos, ids, inputs, tpl.ops[k][2], 0)
                                if p == ein[0]:
                                    if n == 2:
                                        p = pos.get(b)
                                        if p is None:
                                            p = _seen(pos, ids, inputs, tpl.ops[k][2], 1)
                                    if n == 1 or p == ein[1]:
                                        oid = o._id
                                        pos[oid] = len(pos)
                                        w.add(oid)
                                        tp.sync = None  # (recorded on this tape alone)
                                        light.append(
                                            (ids, (oid,), inputs if save_in else None, outputs if save_out else None,
                                             attrs)
                                        )
                                        return
        spec = _GRADS.get(op.name)
        if spec is not None and spec.fn is not None:
            n = len(inputs)
            input_ids = (
                (inputs[0]._id,)
                if n == 1
                else (inputs[0]._id, inputs[1]._id)
                if n == 2
                else tuple([t._id for t in inputs])
            )
            if len(tapes) == 1:
                tp = tapes[0]
                if (
                    tp.tpl is not None
                    and st._debug_hook is None
                    and (
                        _follow_any(tp, op, spec, input_ids, inputs, attrs, outputs)
                        if tp.lazy
                        else _follow(tp, spec, op.name, input_ids, inputs, attrs, outputs, op)
                    )
                ):
                    if not st.accumulators:
                        return
                    tapes = ()  # (accumulators still see the op, below)
            elif st._debug_hook is None:  # (each tape may record along its template)
                rest = _follow_tapes(tapes, op, spec, input_ids, inputs, attrs, outputs)
                if not rest:
                    if not st.accumulators:
                        if tapes[-1].lazy and st.lane is None and st._graph is None:
                            _peers_lane(st)
                        return
                tapes = rest
            rec = None
            for tp in tapes:
                if tp.tpl is not None:  # (a debug hook is on: record as usual)
                    tape_lib.materialize(tp)
                w = tp.watched
                for i in input_ids:
                    if i in w:
                        break
                else:
                    continue
                if rec is None:  # one record, shared by every tape that watches an input
                    # The common record (one or two inputs, one float output, a meta seen
                    # before) is made right here: one call less per op on the hottest path.
                    m = None
                    if (n == 1 or n == 2) and len(outputs) == 1:
                        o = outputs[0]
                        ov = o._value
                        odt = ov.dtype
                        if odt.kind in _FLOAT_KINDS and type(ov) is not AbstractValue:
                            a = inputs[0]._value
                            if n == 1:
                                m = _METAS.get((spec, a.shape, a.dtype, ov.shape, odt))
                            else:
                                b = inputs[1]._value
                                m = _METAS.get((spec, a.shape, a.dtype, b.shape, b.dtype, ov.shape, odt))
                    if m is not None:
                        rec = OpRecord(
                            op.name,
                            attrs or _NO_ATTRS,
                            input_ids,
                            (o._id,),
                            inputs if spec.save_inputs else None,
                            outputs if spec.save_outputs else None,
                            m.input_shapes,
                            m.input_dtypes,
                            m.output_shapes,
                            m.output_dtypes,
                            spec.fn,
                            m if m.replayable else None,
                        )
                    else:
                        rec = _make_record(op.name, attrs, input_ids, inputs, outputs, spec)
                        if rec is None:  # no float output: nothing to differentiate
                            break
                    oids = rec.output_ids
                    first = tp
                else:
                    first.shared = tp.shared = True
                rec.holders += 1
                if len(oids) == 1:
                    w.add(oids[0])
                else:
                    w.update(oids)
                tp._records.append(rec)
    if st.accumulators:
        for acc in st.accumulators:
            acc._process(op, inputs, attrs, outputs)
    if st._debug_hook is not None:
        st._debug_hook(op, inputs, attrs, outputs)


_NO_ATTRS = tape_lib._NO_ATTRS  # shared: rules only read attrs
# Interned record metas, keyed by (rule spec, shapes and dtypes): building the
# key costs about what building the records' shape/dtype tuples did.
_METAS: dict = {}
_MAX_METAS = 1 << 16  # (a program with ever-new shapes: start afresh)


def _new_meta(key, name: str, spec, in_shapes, in_dtypes, out_shapes, out_dtypes) -> RecordMeta:
    if len(_METAS) >= _MAX_METAS:
        _METAS.clear()
    m = _METAS[key] = RecordMeta(
        name, spec.fn, in_shapes, in_dtypes, out_shapes, out_dtypes, spec.save_inputs, spec.save_outputs
    )
    return m


# Templates by their first record's (rule spec, meta): a new tape picks one at its first op.
_TEMPLATES: dict = {}
_UNDECIDED = tape_lib.UNDECIDED


def _first_meta(spec, inputs, outputs):
    """The meta of a one-output op with one or two inputs (None for others: no template then)."""
    if len(outputs) != 1 or len(inputs) > 2:
        return None
    ov = outputs[0]._value
    if type(ov) is AbstractValue:
        return None
    if spec is _READ_SPEC:
        return _METAS.get((_read_grad, ov.shape, ov.dtype))
    a = inputs[0]._value
    if len(inputs) == 1:
        return _METAS.get((spec, a.shape, a.dtype, ov.shape, ov.dtype))
    b = inputs[1]._value
    return _METAS.get((spec, a.shape, a.dtype, b.shape, b.dtype, ov.shape, ov.dtype))


def _follow_tapes(tapes: list, op, spec, input_ids: tuple, inputs: tuple, attrs, outputs: tuple) -> list:
    """Records an op on nested ``tapes`` along their templates: the tapes that record it as usual.

    What ``_follow`` does per tape, inline for the common op (one float output, a tape checking as it
    goes): what the op is (its rule, output shape and dtype) is read once for all the tapes, then each
    tape checks its own template entry and positions, or, for tapes in step with one checked before
    (``Tape.sync``: the same entries and positions so far, and the same next template entry), takes
    that tape's result. Anything else goes through ``_follow``."""
    o = outputs[0]
    v = o._value
    d = v.dtype
    if len(outputs) != 1 or d.kind not in _FLOAT_KINDS or type(v) is AbstractValue:
        return [
            tp
            for tp in tapes
            if tp.tpl is None
            or not (
                _follow_any(tp, op, spec, input_ids, inputs, attrs, outputs)
                if tp.lazy
                else _follow(tp, spec, op.name, input_ids, inputs, attrs, outputs, op)
            )
        ]
    name = op.name
    shape = v.shape
    oid = o._id
    t0 = tapes[0]
    sync = t0.sync
    if sync is not None and sync.stack is tapes:
        # Every tape on the stack in step (a Hessian's, a 4th derivative's), each watching an input: the
        # first tape's check, its entry appended to all (what the loop below does for them, in fewer steps).
        # Anything else, or a departure, takes the loop (nothing has changed on the others then).
        light = t0.light
        k = len(light)
        tpl = t0.tpl
        fast = tpl.fast
        f = fast[k] if k < len(fast) else None
        if f is not None and f[0] is spec and f[1] == name:
            for tp in tapes:
                if tp.sync is not sync or len(tp.light) != k or tp.tpl.fast[k] is not f \
                        or tp.watched.isdisjoint(input_ids):
                    break
            else:
                _, _, oshape, odtype, akey, tattrs, ein, save_in, save_out = f
                if (
                    shape == oshape
                    and (d is odtype or d == odtype)
                    and (not attrs if akey is None else attrs and _attrs_match(attrs, tattrs, akey))
                ):
                    pos = t0.pos
                    new = ()
                    m = None
                    for q, i in enumerate(input_ids):
                        p = pos.get(i)
                        if p is None:
                            if m is None:
                                m = tpl.ops[k][2]
                            p = _seen(pos, input_ids, inputs, m, q)
                            if p >= 0:
                                new += (i,)
                        if p != ein[q]:
                            break
                    else:
                        entry = (input_ids, (oid,), inputs if save_in else None, outputs if save_out else None,
                                 attrs)
                        pos[oid] = len(pos)
                        t0.watched.add(oid)
                        light.append(entry)
                        for j in range(1, len(tapes)):
                            tp = tapes[j]
                            pos = tp.pos
                            for i in new:
                                pos[i] = len(pos)
                            pos[oid] = len(pos)
                            tp.watched.add(oid)
                            tp.light.append(entry)
                        return []
    rest = None
    first = _MISSING  # the op's meta, for tapes picking their template at this op
    lazy_entry = None  # the op's entry for lazily following tapes that pick their templates at it
    done = None  # sync token -> (entries before, template entry, ids first seen, the entry appended)
    for j, tp in enumerate(tapes):
        sync = tp.sync
        if sync is not None and done is not None:
            got = done.get(sync)
            if got is not None and sync.stack is tapes:
                # In step with a tape that has just recorded this op: the same check, the same entry.
                k, f, new, entry = got
                w = tp.watched
                light = tp.light
                fast = tp.tpl.fast
                if len(light) == k and k < len(fast) and fast[k] is f:
                    for i in input_ids:
                        if i in w:
                            break
                    else:
                        tp.sync = None  # (not recorded here, but on its peers)
                        continue
                    pos = tp.pos
                    for i in new:
                        pos[i] = len(pos)
                    pos[oid] = len(pos)
                    w.add(oid)
                    light.append(entry)
                    continue
            tp.sync = None
        tpl = tp.tpl
        if tpl is None:
            if rest is None:
                rest = [tp]
            else:
                rest.append(tp)
            continue
        w = tp.watched
        for i in input_ids:
            if i in w:
                break
        else:
            tp.sync = None  # (not recorded here, maybe on its peers)
            continue  # no watched input: not recorded
        if tp.lazy:
            ok = _follow_any(tp, op, spec, input_ids, inputs, attrs, outputs)
        else:
            ok = False
            if tpl is _UNDECIDED:
                if first is _MISSING:
                    first = _first_meta(spec, inputs, outputs)
                ctx = (len(tapes), j)
                t = _TEMPLATES.get((spec, first, ctx))
                if t is not None and t.lane is not None and op in t.lane.ops:
                    # Following lazily from this op on (what _follow and _follow_lazy do): one entry for all.
                    tp.ctx = ctx
                    tp.tpl = t
                    tp.lazy = t.lane.ops
                    if lazy_entry is None:
                        lazy_entry = (op, inputs, o, attrs, (*input_ids, oid))
                    tp.light = [lazy_entry]
                    w.add(oid)
                    continue
                if t is not None and t.lane is None:
                    tp.ctx = ctx
                    tp.tpl = tpl = t
                    tp.light = []
                    tp.pos = {}
                    # (picked at this op: in step with a tape that picked its template here, if the entry agrees)
                    tp.sync = (done.get(_NEW) if done is not None else None) or _Step(tapes)
            sync = tp.sync
            if sync is None:
                pass
            elif sync.stack is not tapes:  # (recording on a subset of the tapes in step)
                tp.sync = sync = None
            elif done is not None:
                got = done.get(sync)
                if got is not None:  # (picked its template at this op, with a tape that did)
                    k, f, new, entry = got
                    light = tp.light
                    fast = tpl.fast
                    if len(light) == k and k < len(fast) and fast[k] is f:
                        pos = tp.pos
                        for i in new:
                            pos[i] = len(pos)
                        pos[oid] = len(pos)
                        w.add(oid)
                        light.append(entry)
                        continue
                    tp.sync = sync = None
            if tpl is not _UNDECIDED:
                light = tp.light
                k = len(light)
                fast = tpl.fast
                f = fast[k] if k < len(fast) else None
                if f is not None and f[0] is spec and f[1] == name:
                    _, _, oshape, odtype, akey, tattrs, ein, save_in, save_out = f
                    if (
                        shape == oshape
                        and (d is odtype or d == odtype)
                        and (not attrs if akey is None else attrs and _attrs_match(attrs, tattrs, akey))
                    ):
                        pos = tp.pos
                        new = ()
                        m = None
                        for q, i in enumerate(input_ids):
                            p = pos.get(i)
                            if p is None:
                                if m is None:
                                    m = tpl.ops[k][2]
                                p = _seen(pos, input_ids, inputs, m, q)
                                if p >= 0:
                                    new += (i,)
                            if p != ein[q]:
                                break
                        else:
                            pos[oid] = len(pos)
                            w.add(oid)
                            entry = (input_ids, (oid,), inputs if save_in else None, outputs if save_out else None,
                                     attrs)
                            light.append(entry)
                            ok = True
                            if sync is not None:
                                if done is None:
                                    done = {}
                                if k == 0:  # (tapes picking their templates later in this call may join it)
                                    done[_NEW] = sync
                                done[sync] = (k, f, new, entry)
            if not ok:  # (a departure, or a template to pick lazily: _follow's own way)
                tp.sync = None
                ok = _follow(tp, spec, name, input_ids, inputs, attrs, outputs, op)
        if not ok:
            if rest is None:
                rest = [tp]
            else:
                rest.append(tp)
    return rest or []


class _Peers:
    """``state.lane`` for nested tapes that all follow their templates lazily: ``execute`` hands each op
    they all take (``lazy``) to every one of them that watches an input, one entry for all."""

    __slots__ = ("peers", "lazy")

    def __init__(self, peers: tuple, lazy: frozenset) -> None:
        self.peers = peers
        self.lazy = lazy


def _peers_lane(st) -> None:
    # Nested tapes, every one following lazily: from now on their ops come straight from execute.
    tapes = st.tapes
    lazy = None
    for tp in tapes:
        ops = tp.lazy
        if not ops:
            return
        lazy = ops if lazy is None or lazy is ops else lazy & ops
    if lazy:
        st.lane = _Peers(tuple(tapes), lazy)


class _Step:
    """The token of tapes in step (``Tape.sync``), valid on the tape stack it was made on."""

    __slots__ = ("stack",)

    def __init__(self, stack: list) -> None:
        self.stack = stack


_MISSING = object()
_NEW = object()  # (_follow_tapes: the token of the tapes that picked their templates at this op)
_NOT_FOUND = object()  # (what replay.template_gradient answers when it has no compiled replay to call)


def _follow_any(tp, op, spec, input_ids, inputs, attrs, outputs) -> bool:
    # _follow, or _follow_lazy for a tape that follows its template lazily.
    if tp.lazy and _follow_lazy(tp, op, input_ids, inputs, attrs, outputs):
        return True
    return tp.tpl is not None and _follow(tp, spec, op.name, input_ids, inputs, attrs, outputs, op)


def _follow(tp, spec, name, input_ids, inputs, attrs, outputs, op=None) -> bool:
    """Records an op on ``tp`` along its template; False when the op departs
    from it (``tp`` then holds ordinary records and the caller records the op)."""
    w = tp.watched
    for i in input_ids:
        if i in w:
            break
    else:
        return True  # no watched input: not recorded
    tpl = tp.tpl
    if tpl is _UNDECIDED:
        if not any(o._value.dtype.kind in _FLOAT_KINDS for o in outputs):
            return True
        ts = state.tapes
        tp.ctx = (len(ts), ts.index(tp))  # (nested tapes share their first op: where a tape sits tells them apart)
        tpl = _TEMPLATES.get((spec, _first_meta(spec, inputs, outputs), tp.ctx))
        if tpl is None:
            tp.tpl = None
            return False
        tp.tpl = tpl
        tp.light = []
        if tpl.lane is not None and op is not None:
            tp.lazy = tpl.lane.ops
            if _follow_lazy(tp, op, input_ids, inputs, attrs, outputs):
                return True
            if tp.tpl is None:
                return False
            tpl = tp.tpl  # (checking op by op from here)
        else:
            tp.pos = {}
    light = tp.light
    k = len(light)
    fast = tpl.fast
    f = fast[k] if k < len(fast) else None
    if f is not None:
        espec, ename, oshape, odtype, akey, tattrs, ein, save_in, save_out = f
        if (
            espec is spec
            and ename == name
            and len(outputs) == 1
            and (not attrs if akey is None else attrs and _attrs_match(attrs, tattrs, akey))
        ):
            o = outputs[0]
            v = o._value
            # (A recorded op's output is float: a non-float one is not recorded, below.)
            d = v.dtype
            if v.shape == oshape and (d is odtype or d == odtype) and type(v) is not AbstractValue:
                pos = tp.pos
                n = len(input_ids)
                if n == 1:
                    p = pos.get(input_ids[0])
                    ok = (_seen(pos, input_ids, inputs, tpl.ops[k][2], 0) if p is None else p) == ein[0]
                elif n == 2:
                    p = pos.get(input_ids[0])
                    ok = (_seen(pos, input_ids, inputs, tpl.ops[k][2], 0) if p is None else p) == ein[0]
                    if ok:
                        p = pos.get(input_ids[1])
                        ok = (_seen(pos, input_ids, inputs, tpl.ops[k][2], 1) if p is None else p) == ein[1]
                else:
                    ok = _inputs_follow(pos, input_ids, inputs, tpl.ops[k][2], ein)
                if ok:
                    oid = o._id
                    pos[oid] = len(pos)
                    w.add(oid)
                    tp.sync = None  # (recorded on this tape alone)
                    light.append(
                        (input_ids, (oid,), inputs if save_in else None, outputs if save_out else None, attrs)
                    )
                    return True
    elif k < len(fast):  # (an op with several outputs)
        espec, ename, m, akey, ein = tpl.ops[k]
        if (
            espec is spec
            and ename == name
            and (akey is None and not attrs or attrs and akey == replay._attr_key(attrs, []))
            and _follow_many(tp, spec, m, ein, input_ids, inputs, attrs, outputs)
        ):
            return True
    if not any(o._value.dtype.kind in _FLOAT_KINDS for o in outputs):
        return True  # no float output: not recorded (the template goes on)
    tape_lib.materialize(tp)
    return False


# -- following a template lazily (tape.Lane) ------------------------------------------

# Templates whose records' tensors (outputs, and inputs of rules that save none) exceed this many bytes are
# followed with checks per op: a lazy tape keeps every op's inputs and output until gradient(), ordinary
# recording only what the rules save.
LAZY_MAX_BYTES = 1 << 18
# ... and templates of fewer records too: the check at gradient time costs a few microseconds however short the
# tape (more with attrs to compare), about what checking this many ops as they come costs.
LAZY_MIN_OPS = 16
# How records connect is checked with NumPy arrays for longer tapes (a fixed ~15 us, then ~60 ns an id), with a
# dict for shorter ones (~60 ns an id, no fixed cost).
LAZY_DICT_IDS = 160
_E0, _E1, _E2, _E3, _E4 = (itemgetter(i) for i in range(5))
_SHAPE = attrgetter("shape")
_DTYPE = attrgetter("dtype")


def make_lane(ops: list, attrs: list) -> tape_lib.Lane | None:
    """The lane of a template's ``ops`` (``tape.Template``) and its records' ``attrs``; None when its tapes
    check as they go (several-output ops, variable reads, an op not in the registry, large tensors)."""
    opdefs, rules, shapes, dtypes, with_attrs, canon, first_seen, save_in, save_out, arity = ([] for _ in range(10))
    out_flat, fs_flat = [], []
    if len(ops) < LAZY_MIN_OPS:
        return None
    first: dict = {}  # template position -> first index in the ids order
    nbytes = 0
    f = 0
    for k, (spec, name, m, akey, ein) in enumerate(ops):
        op = registry._OPS.get(name)
        if op is None or spec is _READ_SPEC or len(m.output_shapes) != 1 or _GRADS.get(name) is not spec:
            return None
        opdefs.append(op)
        rules.append((name, spec))
        shapes.append(m.output_shapes[0])
        dtypes.append(m.output_dtypes[0])
        if akey is not None:
            with_attrs.append((k, attrs[k], akey))
        for j, p in enumerate(ein):
            if p == len(first):
                first[p] = f
                first_seen.append((k, j, m.input_shapes[j], m.input_dtypes[j]))
                fs_flat.append(f)
            canon.append(first[p])
            f += 1
            if not spec.save_inputs:
                nbytes += int(np.prod(m.input_shapes[j])) * m.input_dtypes[j].itemsize
        first[len(first)] = f
        canon.append(f)
        out_flat.append(f)
        f += 1
        nbytes += int(np.prod(m.output_shapes[0])) * m.output_dtypes[0].itemsize
        save_in.append(spec.save_inputs)
        save_out.append(spec.save_outputs)
        arity.append(len(ein) + 1)
    if nbytes > LAZY_MAX_BYTES:
        return None
    # (A rank-0 value is a NumPy scalar, whose type says its dtype; an array's dtype is compared on its own.)
    arrays = [s != () for s in shapes]
    return tape_lib.Lane(
        ops=frozenset(opdefs), opdefs=opdefs, rules=tuple(set(rules)), shapes=shapes,
        types=[np.ndarray if a else d.type for a, d in zip(arrays, dtypes)], arrays=arrays if any(arrays) else None,
        array_dtypes=[d for a, d in zip(arrays, dtypes) if a], attrs=with_attrs, canon=np.array(canon, np.intp),
        canon_list=canon, by_dict=len(canon) <= LAZY_DICT_IDS,
        out_flat=np.array(out_flat, np.intp), fs_flat=fs_flat, dense={i: p for p, i in first.items()},
        first_seen=first_seen, save_in=save_in, save_out=save_out, arity=arity,
    )


class _DictPos:
    """``_LanePos`` of a short tape: a dict of each id's first occurrence."""

    __slots__ = ("first", "dense")

    def __init__(self, first: dict, dense: dict) -> None:
        self.first = first
        self.dense = dense

    def get(self, i, default=None):
        f = self.first.get(i)
        return default if f is None else self.dense.get(f, default)

    def items(self) -> dict:
        """{id: position} of every id."""
        dense = self.dense
        return {i: dense[f] for i, f in self.first.items() if f in dense}


class _LanePos:
    """A lazily followed tape's positions of ids (what ``tp.pos`` is to a tape that checks as it goes): its
    outputs' ids (growing) and where they occur first, the first occurrences of the other ids, and the
    template's position of each first occurrence."""

    __slots__ = ("outs", "out_flat", "others", "dense")

    def __init__(self, outs, out_flat, others: dict, dense: dict) -> None:
        self.outs = outs
        self.out_flat = out_flat
        self.others = others
        self.dense = dense

    def get(self, i, default=None):
        f = self.others.get(i)
        if f is None:
            outs = self.outs
            at = int(np.searchsorted(outs, i))
            if at == len(outs) or outs[at] != i:
                return default
            f = int(self.out_flat[at])
        return self.dense.get(f, default)

    def items(self) -> dict:
        """{id: position} of every id."""
        got = {i: self.dense[f] for i, f in self.others.items()}
        got.update(zip(self.outs.tolist(), [self.dense[f] for f in self.out_flat[: len(self.outs)].tolist()]))
        return got


def lazy_check(tp, whole: bool = True):
    """Whether ``tp``'s lazy entries are its template's records (all of them, or with ``whole=False`` the
    first ones): the positions of their ids (``_LanePos``), or None when they depart from it.

    Everything per record is compared by C-level ``map``s and list or array comparisons: the ops, their
    output values' types (a NumPy scalar's type is its dtype; an array's dtype is compared too) and shapes,
    the rules, the attrs, and how records connect: each id equals the id at the first occurrence the
    template has for it, outputs are new tensors (their ids grow), and no input the template has as new
    is one seen before.
    """
    light = tp.light
    lane = tp.tpl.lane
    n = len(light)
    if n != len(lane.opdefs):
        if whole or n > len(lane.opdefs):
            return None
        whole = False
    cut = (lambda xs: xs) if whole else (lambda xs: xs[:n])
    if list(map(_E0, light)) != cut(lane.opdefs):
        return None
    vals = list(map(_VALUE_OF, map(_E2, light)))
    if list(map(type, vals)) != cut(lane.types):
        return None
    if list(map(_SHAPE, vals)) != cut(lane.shapes):
        return None
    arrays = lane.arrays
    if arrays and list(map(_DTYPE, compress(vals, arrays))) != (
        lane.array_dtypes if whole else lane.array_dtypes[: sum(arrays[:n])]
    ):
        return None
    for name, spec in lane.rules:
        if _GRADS.get(name) is not spec:
            return None
    attrs = list(map(_E3, light))
    for k, tattrs, akey in lane.attrs:
        if k >= n:
            break
        a = attrs[k]
        if not a or not _attrs_match(a, tattrs, akey):
            return None
        attrs[k] = None
    if any(attrs):
        return None
    id_runs = list(map(_E4, light))
    if list(map(len, id_runs)) != cut(lane.arity):
        return None
    if lane.by_dict:  # (a short tape: the exact pattern of repeats, by a dict of first occurrences)
        first: dict = {}
        got = list(map(first.setdefault, chain.from_iterable(id_runs), count()))
        if got != (lane.canon_list if whole else lane.canon_list[: len(got)]):
            return None
        for k, j, shape, dtype in lane.first_seen:
            if k >= n:
                break
            v = light[k][1][j]._value
            if type(v) is AbstractValue or v.shape != shape or v.dtype != dtype:
                return None
        return _DictPos(first, lane.dense)
    canon = lane.canon
    m = len(canon) if whole else sum(lane.arity[:n])
    ids = np.fromiter(chain.from_iterable(id_runs), np.int64, m)
    if not whole:
        canon = canon[:m]
    if not np.array_equal(ids[canon], ids):
        return None
    outs = ids[lane.out_flat if whole else lane.out_flat[lane.out_flat < m]]
    if len(outs) > 1 and not (outs[1:] > outs[:-1]).all():
        return None
    fs = {}
    for (k, j, shape, dtype), f in zip(lane.first_seen, lane.fs_flat):
        if k >= n:
            break
        v = light[k][1][j]._value
        if type(v) is AbstractValue or v.shape != shape or v.dtype != dtype:
            return None
        i = int(ids[f])
        if i in fs:
            return None
        fs[i] = f
        at = int(np.searchsorted(outs, i))
        if at < len(outs) and outs[at] == i:
            return None
    return _LanePos(outs, lane.out_flat, fs, lane.dense)


def lazy_saved(tp) -> list:
    """The tensors a lazily followed tape's rules save, in the order ordinary records give them."""
    light = tp.light
    lane = tp.tpl.lane
    saved = list(chain.from_iterable(compress(map(_E1, light), lane.save_in)))
    saved += compress(map(_E2, light), lane.save_out)
    return saved


def _promote(tp) -> None:
    """A lazily followed tape meets what its lane does not take (a variable read, an op with several
    outputs, another tape...): it checks what it kept so far and goes on checking op by op (or, if what it
    kept departs from the template, makes its records)."""
    tape_lib.leave_lane(tp)
    pos = lazy_check(tp, whole=False)
    if pos is None:
        tape_lib.materialize(tp)
        return
    tpl = tp.tpl
    tp.pos = pos.items()
    tp.light = [
        (ids[:-1], ids[-1:], inputs if tpl.lane.save_in[k] else None, (out,) if tpl.lane.save_out[k] else None,
         attrs)
        for k, (_, inputs, out, attrs, ids) in enumerate(tp.light)
    ]
    tp.lazy = False


def _rebuild_lazy(tp, light: list) -> None:
    # tape.materialize of a lazy tape: ordinary recording, op by op, over what the tape kept. A lazy tape
    # watched each output it kept, some of which ordinary recording would not have recorded (no rule, no
    # float output): the watched ids are worked out again from those the tape had at the start.
    w = tp.watched
    w.difference_update(map(_E4_LAST, light))
    recs = tp._records
    for op, inputs, out, attrs, ids in light:
        spec = _GRADS.get(op.name)
        if spec is None or spec.fn is None:
            continue
        input_ids = ids[:-1]
        for i in input_ids:
            if i in w:
                break
        else:
            continue
        rec = _make_record(op.name, attrs, input_ids, inputs, (out,), spec)
        if rec is None:
            continue
        rec.holders = 1
        recs.append(rec)
        w.add(ids[-1])


def _E4_LAST(e):
    return e[4][-1]


_VALUE_OF = attrgetter("_value")
tape_lib.rebuild_lazy = _rebuild_lazy


def _follow_lazy(tp, op, input_ids, inputs, attrs, outputs) -> bool:
    """Records an op on a lazily following ``tp`` (False: ``tp`` now checks op by op, or holds records)."""
    w = tp.watched
    for i in input_ids:
        if i in w:
            break
    else:
        return True  # no watched input: not recorded
    if len(outputs) == 1:
        o = outputs[0]
        if o._value.dtype.kind not in _FLOAT_KINDS:
            return True  # no float output: not recorded (the template goes on)
    elif not any(o._value.dtype.kind in _FLOAT_KINDS for o in outputs):
        return True
    if len(outputs) == 1 and op in tp.lazy:
        w.add(o._id)
        tp.light.append((op, inputs, o, attrs, (*input_ids, o._id)))
        return True
    _promote(tp)
    return False


def _attrs_match(attrs: dict, tattrs: dict | None, akey: tuple) -> bool:
    """Whether ``attrs`` have the attrs key ``akey`` (those of the template's record, ``tattrs``): most
    attrs are flags, ints, strings and int tuples, compared here without building the key."""
    if attrs is tattrs:  # (one attrs dict for every call of a compiled replay, tape_replay._Entry)
        return True
    if tattrs is None or len(attrs) != len(tattrs):
        return akey == replay._attr_key(attrs, [])
    for (k, x), (tk, y) in zip(attrs.items(), tattrs.items()):
        if k != tk:
            return False
        if x is y and (x is None or x is True or x is False):
            continue
        tx = type(x)
        if tx is not type(y):
            return akey == replay._attr_key(attrs, [])
        if tx is str or tx is int:
            if x != y:
                return False
        elif tx is tuple and _all_int(x) and _all_int(y):
            if x != y:
                return False
        elif tx in replay._ID_TYPES:  # (keyed by identity)
            if x is not y:
                return False
        else:
            return akey == replay._attr_key(attrs, [])
    return True


def _all_int(t: tuple) -> bool:
    for x in t:
        if type(x) is not int:
            return False
    return True


def _seen(pos: dict, input_ids: tuple, inputs: tuple, m, j: int) -> int:
    """The position of an input seen for the first time (-1 when its shape or dtype is not the template's)."""
    v = inputs[j]._value
    if type(v) is AbstractValue or v.shape != m.input_shapes[j] or v.dtype != m.input_dtypes[j]:
        return -1
    p = pos[input_ids[j]] = len(pos)
    return p


def _inputs_follow(pos: dict, input_ids: tuple, inputs: tuple, m, ein: tuple) -> bool:
    for j, i in enumerate(input_ids):
        p = pos.get(i)
        if (_seen(pos, input_ids, inputs, m, j) if p is None else p) != ein[j]:
            return False
    return True


def _follow_many(tp, spec, m, ein, input_ids, inputs, attrs, outputs) -> bool:
    # _follow for an op with several outputs.
    if len(outputs) != len(m.output_shapes):
        return False
    for j, o in enumerate(outputs):
        v = o._value
        if type(v) is AbstractValue or v.shape != m.output_shapes[j] or v.dtype != m.output_dtypes[j]:
            return False
    pos = tp.pos
    if not _inputs_follow(pos, input_ids, inputs, m, ein):
        return False
    oids = tuple([o._id for o in outputs])
    for oid in oids:
        pos[oid] = len(pos)
    tp.watched.update(oids)
    tp.sync = None  # (recorded on this tape alone)
    tp.light.append(
        (input_ids, oids, inputs if spec.save_inputs else None, outputs if spec.save_outputs else None, attrs)
    )
    return True


def _make_record(name, attrs, input_ids, inputs, outputs, spec) -> OpRecord | None:
    n = len(inputs)
    if len(outputs) == 1:
        o = outputs[0]
        ov = o._value
        odt = ov.dtype
        if odt.kind not in _FLOAT_KINDS:
            return None
        out_ids = (o._id,)
        if type(ov) is AbstractValue:
            return _traced_record(name, attrs, input_ids, out_ids, inputs, outputs, spec)
        if n == 1:
            a = inputs[0]._value
            key = (spec, a.shape, a.dtype, ov.shape, odt)
            m = _METAS.get(key)
            if m is None:
                m = _new_meta(key, name, spec, (a.shape,), (a.dtype,), (ov.shape,), (odt,))
        elif n == 2:
            a, b = inputs[0]._value, inputs[1]._value
            key = (spec, a.shape, a.dtype, b.shape, b.dtype, ov.shape, odt)
            m = _METAS.get(key)
            if m is None:
                m = _new_meta(key, name, spec, (a.shape, b.shape), (a.dtype, b.dtype), (ov.shape,), (odt,))
        else:
            vals = [t._value for t in inputs]
            key = (spec, tuple([v.shape for v in vals]), tuple([v.dtype for v in vals]), ov.shape, odt)
            m = _METAS.get(key)
            if m is None:
                m = _new_meta(key, name, spec, key[1], key[2], (ov.shape,), (odt,))
    else:
        if not any(o._value.dtype.kind in _FLOAT_KINDS for o in outputs):
            return None
        out_ids = tuple([o._id for o in outputs])
        if type(outputs[0]._value) is AbstractValue:
            return _traced_record(name, attrs, input_ids, out_ids, inputs, outputs, spec)
        vals = [t._value for t in inputs]
        key = (
            spec,
            tuple([v.shape for v in vals]),
            tuple([v.dtype for v in vals]),
            tuple([o._value.shape for o in outputs]),
            tuple([o._value.dtype for o in outputs]),
        )
        m = _METAS.get(key)
        if m is None:
            m = _new_meta(key, name, spec, *key[1:])
    return OpRecord(
        name,
        attrs or _NO_ATTRS,
        input_ids,
        out_ids,
        inputs if spec.save_inputs else None,
        outputs if spec.save_outputs else None,
        m.input_shapes,
        m.input_dtypes,
        m.output_shapes,
        m.output_dtypes,
        spec.fn,
        m if m.replayable else None,
    )


def _traced_record(name, attrs, input_ids, out_ids, inputs, outputs, spec) -> OpRecord:
    # While tracing a graph the tensors live in the graph anyway: keep them,
    # so rules and unbroadcast can read shapes with unknown dims at run time.
    return OpRecord(
        name,
        attrs or _NO_ATTRS,
        input_ids,
        out_ids,
        inputs,
        outputs,
        tuple([t._value.shape for t in inputs]),
        tuple([t._value.dtype for t in inputs]),
        tuple([o._value.shape for o in outputs]),
        tuple([o._value.dtype for o in outputs]),
        spec.fn,
    )


def _may_broadcast(in_shapes) -> bool:
    """Whether some input has an unknown dim that another input's dim
    (unknown, or known and not 1) may broadcast it along at run time."""
    if any(s is None for s in in_shapes):
        return True
    if not any(None in s for s in in_shapes):
        return False
    n = max(len(s) for s in in_shapes)
    padded = [(1,) * (n - len(s)) + tuple(s) for s in in_shapes]
    for j in range(n):
        col = [s[j] for s in padded]
        if None in col and sum(1 for d in col if d != 1) > 1:
            return True
    return False


execute_mod.record_hook = record_operation
# The compiled replay of repeated tapes (graph/tape_replay.py) plugs in here from
# the graph layer: it traces and compiles backward passes, which eager cannot.
replay = None


def _read_grad(op, grad):
    return grad


_READ_SPEC = registry.GradSpec(_read_grad, False, False, __name__)  # a variable read's rule, for its meta


def record_variable_read(var, value: Tensor) -> None:
    """Links a read of ``var`` to the tensor it produced on active tapes."""
    st = state
    tapes = st.tapes
    if len(tapes) == 1 and st._debug_hook is None and not st.accumulators:
        # The training step's read (one tape checking along its template as it goes): what the general
        # code below and _follow do for it, inline. Anything else, or a departure, takes that code.
        tp = tapes[0]
        tpl = tp.tpl
        if tpl is not None and tpl is not _UNDECIDED and not tp.lazy:
            vid = var._id
            w = tp.watched
            if vid not in w and tp.watch_accessed_variables and var.trainable:
                _watch_variable(tp, var)
            if vid not in w:
                return  # not watched: not recorded (the template goes on)
            light = tp.light
            k = len(light)
            fast = tpl.fast
            f = fast[k] if k < len(fast) else None
            if f is not None and f[0] is _READ_SPEC:
                v = value._value
                d = v.dtype
                if v.shape == f[2] and (d is f[3] or d == f[3]) and type(v) is not AbstractValue:
                    pos = tp.pos
                    p = pos.get(vid)
                    if p is None:
                        p = _seen(pos, (vid,), (var,), tpl.ops[k][2], 0)
                    if p == f[6][0]:
                        oid = value._id
                        pos[oid] = len(pos)
                        w.add(oid)
                        tp.sync = None  # (recorded on this tape alone)
                        light.append(((vid,), (oid,), None, None, None))
                        return
    if st._debug_hook is None:  # (tapes may record along templates)
        following = [tp for tp in tapes if tp.tpl is not None]
        if following:
            for tp in following:
                if tp.lazy:
                    _promote(tp)
            for tp in following:
                if tp.watch_accessed_variables and var.trainable and var._id not in tp.watched:
                    _watch_variable(tp, var)
            tapes = [
                tp
                for tp in tapes
                if tp.tpl is None or not _follow(tp, _READ_SPEC, "ReadVariableOp", (var._id,), (var,), None, (value,))
            ]
    rec = None
    for tp in tapes:
        if tp.tpl is not None:
            tape_lib.materialize(tp)
        if tp.watch_accessed_variables and var.trainable and var._id not in tp.watched:
            _watch_variable(tp, var)
        if var._id in tp.watched:
            if rec is None:  # one record, shared by every watching tape (as for ops)
                v = value._value
                m = None
                if type(v) is not AbstractValue:
                    key = (_read_grad, v.shape, v.dtype)
                    m = _METAS.get(key)
                    if m is None:
                        m = _new_meta(key, "ReadVariableOp", _READ_SPEC, (v.shape,), (v.dtype,), (v.shape,), (v.dtype,))
                    shapes, dts = m.input_shapes, m.input_dtypes
                else:
                    shapes, dts = (v.shape,), (v.dtype,)
                rec = OpRecord(
                    "ReadVariableOp",
                    _NO_ATTRS,
                    (var._id,),
                    (value._id,),
                    None,
                    None,
                    shapes,
                    dts,
                    shapes,
                    dts,
                    _read_grad,
                    m,
                )
                first = tp
            else:
                first.shared = tp.shared = True
            rec.holders += 1
            tp.watched.add(value._id)
            tp._records.append(rec)
    for acc in st.accumulators:
        acc._process_read(var, value)
    if st._debug_hook is not None:
        st._debug_hook(None, (var,), None, (value,))


variables_mod.read_hook = record_variable_read


def _watch_variable(tp, var) -> None:
    if var.dtype.is_floating or var.dtype.is_complex:
        tp.watched.add(var._id)
        tp.variables[var._id] = var


# -- the math of the backward walk --------------------------------------------


def zeros_for(shape: tuple, dtype) -> Tensor:
    from tapeflow.ops import array_ops

    return array_ops.zeros(shape, dtype=dtype)


def unbroadcast(grad, shape: tuple, like=None):
    """Sums ``grad`` back to ``shape`` after a broadcasting op (the one place
    this is done). ``like`` is the input tensor, needed only when a shape has
    unknown (None) dims while tracing: its shape is then read at run time."""
    from tapeflow.ops import array_ops, math_ops

    gshape = grad._shape_tuple()
    if gshape == shape:
        return grad
    if shape is None or gshape is None or None in shape:
        return _unbroadcast_dynamic(grad, shape, like)
    # (A known target is reached statically even if the gradient has None dims.)
    lead = len(gshape) - len(shape)
    if lead < 0 or any(g != s and s != 1 and g is not None for g, s in zip(gshape[lead:], shape)):
        # A rule returned something smaller (e.g. a scalar): broadcast it up.
        return array_ops.broadcast_to(grad, shape)
    axes = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1]
    if axes:
        grad = math_ops.reduce_sum(grad, axis=axes)
    if grad._shape_tuple() != shape:
        grad = array_ops.reshape(grad, shape)
    return grad


def _compatible(a, b) -> bool:
    """Shapes that may be equal at run time (unknown dims match anything)."""
    if a is None or b is None:
        return True
    return len(a) == len(b) and all(p == q or p is None or q is None for p, q in zip(a, b))


def _unbroadcast_dynamic(grad, shape, like):
    # Graph mode with unknown dims: sum to the input's run-time shape.
    from tapeflow.ops import shape_ops

    if like is None:
        raise NotImplementedError(
            f"unbroadcast: cannot sum a gradient of shape {grad._shape_tuple()} back to the partly unknown "
            f"shape {shape} without the input tensor (the gradient rule's record did not keep it)."
        )
    return shape_ops.sum_to_shape(grad, shape_ops.shape_of(like), static=shape)


def aggregate(grads: list):
    """Sums the gradients flowing into one tensor (dense and/or sparse)."""
    from tapeflow.ops import array_ops, math_ops

    if len(grads) == 2 and type(grads[0]) is Tensor and type(grads[1]) is Tensor:
        return math_ops.add(grads[0], grads[1])  # the common case, without add_n's checks
    sparse = [g for g in grads if isinstance(g, IndexedSlices)]
    if not sparse:
        return math_ops.add_n(grads)
    dense = [g for g in grads if not isinstance(g, IndexedSlices)]
    if dense:
        total = math_ops.add_n(dense) if len(dense) > 1 else dense[0]
        for s in sparse:
            total = math_ops.add(total, convert_to_tensor(s))
        return total
    # The walk collects gradients newest-op first; TF concatenates them in
    # forward order, and casts int32 indices to int64 when the two mix.
    sparse.reverse()
    indices = [s.indices for s in sparse]
    if len({i.dtype for i in indices}) > 1:
        indices = [math_ops.cast(i, "int64") for i in indices]
    return IndexedSlices(
        array_ops.concat([s.values for s in sparse], axis=0),
        array_ops.concat(indices, axis=0),
        sparse[0].dense_shape,
    )


# Set by tapeflow.debugging (check_numerics) to wrap ``op_gradients`` during
# the backward walk; chosen once per gradient() call, so no per-op cost.
debug_op_gradients = None

_PASS_SPARSE = frozenset({"ReadVariableOp", "Identity"})


def op_gradients(rec: OpRecord, out_grads: list) -> list:
    """Calls ``rec``'s gradient rule and unbroadcasts the result."""
    if len(out_grads) == 1:
        g = out_grads[0]
        if type(g) is not Tensor:
            out_grads = [_prepare_out_grad(rec, 0, g)]
    else:
        rec.zero_output_grads = tuple([i for i, g in enumerate(out_grads) if g is None])
        out_grads = [g if type(g) is Tensor else _prepare_out_grad(rec, i, g) for i, g in enumerate(out_grads)]
    grads = rec.grad_fn(rec, *out_grads)
    input_ids = rec.input_ids
    if type(grads) is Tensor and len(input_ids) == 1:  # the common one-input case
        if grads._value.shape != rec.input_shapes[0]:
            grads = unbroadcast(grads, rec.input_shapes[0], None if rec.inputs is None else rec.inputs[0])
        return (grads,)
    if type(grads) is not list and type(grads) is not tuple:
        grads = (grads,)
    if len(grads) != len(input_ids):
        raise ValueError(
            f"The gradient rule of op '{rec.type}' returned {len(grads)} gradients, but the op has "
            f"{len(input_ids)} inputs: return one gradient (or None) per input."
        )
    shapes = rec.input_shapes
    out = list(grads)
    for i, g in enumerate(out):
        if g is None:
            continue
        if type(g) is not Tensor:
            if isinstance(g, IndexedSlices):
                continue
            if not isinstance(g, Tensor):
                g = out[i] = convert_to_tensor(g, dtype=rec.input_dtypes[i])
        if g._value.shape != shapes[i]:
            out[i] = unbroadcast(g, shapes[i], None if rec.inputs is None else rec.inputs[i])
    if len(out) > 1 and type(out_grads[0]) is not Tensor:  # a graph's (symbolic) gradient
        _sum_equal_unknown(rec, out)
    return out


# Ops whose leading (batch) dims broadcast like elementwise ops'.
_BROADCASTING_BATCH_OPS = frozenset({"BatchMatMulV2", "Einsum", "SelectV2"})


def _sum_equal_unknown(rec: OpRecord, out: list) -> None:
    """Graph mode: equal static shapes such as (None, 3) and (None, 3) may
    still broadcast (1 vs n) at run time, so the gradient of such an input of
    a broadcasting op is summed to the input's run-time shape."""
    from tapeflow.ops import shape_ops, shapes as shape_rules

    in_shapes = rec.input_shapes
    # A matmul broadcasts only its batch dims, never the two matrix dims.
    dims = [s if s is None else s[:-2] for s in in_shapes] if rec.type == "BatchMatMulV2" else in_shapes
    if rec.inputs is None or not _may_broadcast(dims):
        return
    op = registry._OPS.get(rec.type)
    if op is None or (
        op.shape not in (shape_rules.broadcast, shape_rules.broadcast_bool) and rec.type not in _BROADCASTING_BATCH_OPS
    ):
        return
    for i, g in enumerate(out):
        s = in_shapes[i]
        if isinstance(g, Tensor) and (s is None or None in s) and g._shape_tuple() == s:
            out[i] = shape_ops.sum_to_shape(g, shape_ops.shape_of(rec.inputs[i]), static=s)


def _prepare_out_grad(rec: OpRecord, i: int, g):
    """Zeros for an output without gradient; dense form of a sparse one."""
    if g is None:
        shape = rec.output_shapes[i]
        if (shape is None or None in shape) and rec.outputs is not None and rec.outputs[i] is not None:
            # Graph mode, unknown dims: zeros shaped like the output at run time.
            from tapeflow.ops import array_ops

            return array_ops.zeros_like(rec.outputs[i])
        return zeros_for(shape, rec.output_dtypes[i])
    if isinstance(g, IndexedSlices) and rec.type not in _PASS_SPARSE:
        return convert_to_tensor(g)
    return g


# -- the walk on NumPy values (nothing records it) ---------------------------

_RAW_RULES: dict | None = None
# False: every walk wraps values in Tensors (tests compare the two walks).
raw_walk = True
_ARRAYS = (np.ndarray, np.generic)


def _raw_rules() -> dict:
    global _RAW_RULES
    if _RAW_RULES is None:
        from tapeflow.eager import fast_rules

        _RAW_RULES = fast_rules.RAW
    return _RAW_RULES


def _wrap_raw(g):
    return Tensor(g) if isinstance(g, _ARRAYS) else g


def _unwrap(g):
    return g._value if type(g) is Tensor else g


def _generic_raw(rec: OpRecord, out_grads: list) -> list:
    """A record without an array-level twin: its rule on Tensors."""
    grads = op_gradients(rec, [None if g is None else _wrap_raw(g) for g in out_grads])
    return [_unwrap(g) for g in grads]


def _aggregate_raw(grads: list):
    for g in grads:
        if not isinstance(g, _ARRAYS):
            return _unwrap(aggregate([_wrap_raw(v) for v in grads]))
    # add (two) and add_n (more) both sum left to right with +.
    out = grads[0]
    for g in grads[1:]:
        out = out + g
    return out


def _unbroadcast_raw(g, shape: tuple):
    """``unbroadcast`` on a NumPy value, through the same kernels."""
    gshape = g.shape
    lead = len(gshape) - len(shape)
    if lead < 0 or any(a != b and b != 1 for a, b in zip(gshape[lead:], shape)):
        return _unwrap(unbroadcast(Tensor(g), shape))
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1)
    if axes:
        g = np.add.reduce(g, axis=axes, keepdims=False, dtype=g.dtype)  # the Sum kernel
    if g.shape != shape:
        g = np.reshape(g, shape)
    return g


tape_lib.unbroadcast_raw = _unbroadcast_raw


# -- GradientTape --------------------------------------------------------------


class GradientTape:
    """Records operations for automatic differentiation, as ``tf.GradientTape``.

    >>> x = tf.constant(3.0)
    >>> with tf.GradientTape() as g:
    ...     g.watch(x)
    ...     y = x * x
    >>> g.gradient(y, x)
    <tf.Tensor: shape=(), dtype=float32, numpy=6.0>

    Trainable variables read inside the block are watched automatically
    (unless ``watch_accessed_variables=False``). A non-persistent tape allows
    one ``gradient``/``jacobian`` call and then frees what it saved.
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._tape: tape_lib.Tape | None = None
        self._recording = False
        self._used = False

    # context management
    def __enter__(self) -> GradientTape:
        self._push_tape()
        return self

    def __exit__(self, typ, value, traceback) -> None:
        if self._recording:
            self._pop_tape()

    def _push_tape(self) -> None:
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to re-enter an already-active tape.")
        if self._tape is None:
            self._tape = tape_lib.Tape(self._persistent, self._watch_accessed_variables)
            self._used = False
        st = state
        tapes = st.tapes
        if not tapes:
            st.recording = True  # (what update_recording gives with a tape on the stack)
            st.plain = False
        st.lane = None
        tapes.append(self._tape)
        self._recording = True

    def _pop_tape(self) -> None:
        if not self._recording:
            raise ValueError("Tape is not recording.")
        self._tape.sync = None  # (off the stack: out of step with the tapes still recording)
        st = state
        tapes = st.tapes
        if tapes and tapes[-1] is self._tape:  # (the innermost tape: the usual case)
            tapes.pop()
        else:
            for i in range(len(tapes) - 1, -1, -1):
                if tapes[i] is self._tape:
                    del tapes[i]
                    break
        if tapes:  # (tapes still recording: recording and plain stay as they are)
            st.lane = None
        else:
            st.update_recording()
        self._recording = False

    # watching
    def watch(self, tensor: Any) -> None:
        """Ensures ``tensor`` (any nested structure of tensors/variables) is traced."""
        tp = self._tape
        if tp is None:
            tp = self._tape = tape_lib.Tape(self._persistent, self._watch_accessed_variables)
        elif tp.lazy and tp.light:  # (its watched ids are worked out from those it started with)
            tape_lib.materialize(tp)
        if type(tensor) is Tensor and tensor._value.dtype.kind in "fc":  # (the common case, without nest)
            tp.watched.add(tensor._id)
            return
        Variable = variables_mod.Variable  # noqa: N806 - the class
        for t in nest.flatten(tensor, expand_composites=True):  # (a RaggedTensor: its components)
            if isinstance(t, Variable):
                if not (t.dtype.is_floating or t.dtype.is_complex):
                    _warn_dtype(t)
                    continue
                _watch_variable(self._tape, t)
            elif isinstance(t, Tensor):
                if not (t.dtype.is_floating or t.dtype.is_complex):
                    _warn_dtype(t)
                    continue
                self._tape.watched.add(t._id)
            elif isinstance(t, IndexedSlices):
                self.watch(t.values)
            else:
                raise ValueError(
                    f"Passed in object {t!r} of type {type(t).__name__!r}, not tf.Tensor or tf.Variable "
                    "or ExtensionType. Convert it first with tf.constant(...) and watch the tensor."
                )

    @contextlib.contextmanager
    def stop_recording(self):
        """Temporarily stops recording ops on this tape."""
        if not self._recording:
            raise ValueError("Tape must be recording.")
        self._pop_tape()
        try:
            yield
        finally:
            self._push_tape()

    def reset(self) -> None:
        """Clears everything recorded so far; the tape keeps recording if it was."""
        recording = self._recording
        if recording:
            self._pop_tape()
        self._tape = None
        if recording:
            self._push_tape()

    def watched_variables(self) -> tuple:
        """The variables this tape watches, in creation order."""
        variables = getattr(self, "_consumed_variables", {}) if self._tape is None else self._tape.variables
        return tuple(sorted(variables.values(), key=_ID))

    # gradients
    def gradient(
        self,
        target: Any,
        sources: Any,
        output_gradients: Any = None,
        unconnected_gradients: Any = UnconnectedGradients.NONE,
    ) -> Any:
        """Gradient of ``target`` (summed over targets and their elements)
        w.r.t. each of ``sources``, in the structure of ``sources``."""
        if self._tape is None:
            raise RuntimeError(
                "A non-persistent GradientTape can only be used to compute one set of gradients "
                "(or jacobians). Create the tape with persistent=True to call gradient() more than once."
            )
        unconnected = _unconnected(unconnected_gradients)
        if self._recording:
            if not self._persistent:
                self._pop_tape()
            else:
                _log.warning(
                    "Calling GradientTape.gradient on a persistent tape inside its context is "
                    "significantly less efficient than calling it outside the context."
                )
        tp = self._tape
        tpl = tp.tpl
        if (
            tpl is not None
            and tpl is not _UNDECIDED
            and type(target) is Tensor
            and type(sources) is Tensor
            and (output_gradients is None or type(output_gradients) is Tensor)
            and unconnected is UnconnectedGradients.NONE
        ):
            # A tape that recorded along its template, asked for one tensor's gradient: its compiled replay
            # called straight away (what _gradient and replay.gradient do for it), else the general way.
            st = state
            rp = replay
            if (
                st._graph is None
                and st._debug_hook is None
                and debug_op_gradients is None
                and rp is not None
                and rp.enabled
            ):
                found = rp.template_gradient(tp, target, sources, output_gradients, st.plain)
                if found is not _NOT_FOUND:
                    self._consumed_variables = tp.variables
                    self._tape = None
                    self._used = True
                    tp.records = []
                    return found
        elif (
            tpl is not None
            and tpl is not _UNDECIDED
            and type(target) is Tensor
            and type(sources) is list
            and output_gradients is None
            and unconnected is UnconnectedGradients.NONE
            and _PLAIN_SOURCES.issuperset(map(type, sources))
        ):
            # ... or a flat list of variables and tensors (a training step's): the same, for all of them.
            st = state
            rp = replay
            if (
                st._graph is None
                and st._debug_hook is None
                and debug_op_gradients is None
                and rp is not None
                and rp.enabled
            ):
                found = rp.template_gradients(tp, target, sources, st.plain)
                if found is not _NOT_FOUND:
                    self._consumed_variables = tp.variables
                    self._tape = None
                    self._used = True
                    tp.records = []
                    return found
        try:
            result = _gradient(tp, target, sources, output_gradients, unconnected, release=not self._persistent)
        finally:
            if not self._persistent:
                self._consumed_variables = tp.variables  # TF still lists them after gradient()
                self._tape = None
                self._used = True
        return result

    def jacobian(
        self,
        target,
        sources,
        unconnected_gradients=UnconnectedGradients.NONE,
        parallel_iterations=None,
        experimental_use_pfor=True,
    ):
        return _jacobians().jacobian(
            self, target, sources, unconnected_gradients, parallel_iterations, experimental_use_pfor
        )

    def batch_jacobian(
        self,
        target,
        source,
        unconnected_gradients=UnconnectedGradients.NONE,
        parallel_iterations=None,
        experimental_use_pfor=True,
    ):
        return _jacobians().batch_jacobian(
            self, target, source, unconnected_gradients, parallel_iterations, experimental_use_pfor
        )


_JACOBIANS = None


def _jacobians():
    # Loaded on first use (import time); then a global, not an import per call.
    global _JACOBIANS
    if _JACOBIANS is None:
        from tapeflow.eager import jacobians

        _JACOBIANS = jacobians
    return _JACOBIANS


_ID = attrgetter("_id")


def _warn_dtype(t) -> None:
    # TF logs this (no Python warning); the gradient w.r.t. it will be None.
    _log.warning("The dtype of the watched tensor must be floating (e.g. tf.float32), got %r", t.dtype)


def _source_id(s: Any) -> int:
    if isinstance(s, (Tensor, Variable)):
        return s._id
    raise TypeError(
        f"gradient() sources must be tf.Tensor or tf.Variable objects (or nested structures of them), "
        f"got {type(s).__name__}: {s!r}"
    )


def _gradient(tp, target, sources, output_gradients, unconnected, release: bool):
    if type(sources) is Tensor and type(target) is Tensor and output_gradients is None:
        # The common call, gradient(tensor, tensor), set up in a few lines (what the general code below does).
        flat_sources, source_ids = [sources], [sources._id]
        v = target._value
        if v.dtype.kind in _FLOAT_KINDS and state._graph is None and state._debug_hook is None:
            initial = {target._id: [Tensor(v.dtype.type(1) if isinstance(v, np.generic) else np.ones_like(v))]}
        else:
            initial = None
        if initial is not None:
            sid_set = {sources._id} if sources._id in tp.watched else set()
            return _gradient_walk(tp, flat_sources, source_ids, initial, sid_set, sources, unconnected, release)
    if type(sources) is Tensor:  # (a single source: no structure to walk)
        flat_sources, source_ids = [sources], [sources._id]
    elif type(sources) is list and _PLAIN_SOURCES.issuperset(map(type, sources)):  # (a list of variables)
        flat_sources = sources
        source_ids = list(map(_ID, sources))
    else:
        flat_sources = nest.flatten(sources)
        for s in flat_sources:
            if isinstance(s, CompositeTensor):
                return _composite_gradient(tp, target, sources, output_gradients, unconnected, release)
        source_ids = [_source_id(s) for s in flat_sources]
    flat_targets = [target] if type(target) is Tensor else nest.flatten(target)
    if (
        output_gradients is None
        and type(target) is not Tensor
        and any(isinstance(t, CompositeTensor) for t in flat_targets)
    ):
        # A ragged/sparse target: its values are the targets (summed, as for a tensor).
        flat_targets = [
            c for t in flat_targets for c in (t._trace_split()[1] if isinstance(t, CompositeTensor) else [t])
        ]
    if output_gradients is not None:
        flat_out = nest.flatten(output_gradients)
        if len(flat_out) != len(flat_targets):
            raise ValueError(
                f"output_gradients has {len(flat_out)} entries but target has {len(flat_targets)}: "
                "pass one output gradient (or None) per target."
            )
    else:
        flat_out = [None] * len(flat_targets)
    initial: dict[int, list] = {}
    eager_ones = state._graph is None and state._debug_hook is None
    for t, og in zip(flat_targets, flat_out):
        if t is None:
            raise TypeError(
                "Argument `target` should be a list or nested structure of Tensors, Variables or CompositeTensors "
                f"to be differentiated, but received None (target={target!r}). Compute the target inside the "
                "tape's `with` block and pass the tensor."
            )
        if type(t) is Tensor:
            tid, tval = t._id, t
        elif isinstance(t, Variable):
            tid, tval = t._id, t._snapshot()
        elif isinstance(t, IndexedSlices):
            t = convert_to_tensor(t)
            tid, tval = t._id, t
        elif isinstance(t, Tensor):
            tid, tval = t._id, t
        else:
            raise TypeError(f"gradient() target must be a tf.Tensor or tf.Variable, got {type(t).__name__}")
        if og is None:
            if tval._value.dtype.kind not in "fc":
                continue
            # (Eagerly, with no debug hook to see it, OnesLike's kernel without the op.)
            if not eager_ones:
                og = _array_ops().ones_like(tval)
            else:
                v = tval._value
                og = Tensor(v.dtype.type(1) if isinstance(v, np.generic) else np.ones_like(v))
        else:
            og = convert_to_tensor(og, dtype=tval.dtype)
            if og._shape_tuple() != tval._shape_tuple() and not _compatible(og._shape_tuple(), tval._shape_tuple()):
                raise ValueError(
                    f"output_gradients shape {og._shape_tuple()} does not match target shape {tval._shape_tuple()}."
                )
        initial.setdefault(tid, []).append(og)
    watched = tp.watched
    sid_set = {sid for s, sid in zip(flat_sources, source_ids) if sid in watched}
    return _gradient_walk(tp, flat_sources, source_ids, initial, sid_set, sources, unconnected, release)


def _gradient_walk(tp, flat_sources, source_ids, initial, sid_set, sources, unconnected, release):
    st = state
    found = None
    rp = replay
    if rp is not None and rp.enabled and st._graph is None and st._debug_hook is None and debug_op_gradients is None:
        # A structure seen before: its backward compiled once, called as one function.
        found = rp.gradient(tp, initial, sid_set, st.plain)
        if found is not None and release and tp.shared:  # (records only this tape holds go with its list)
            for rec in tp.records:
                rec.release()
    if found is not None:
        pass
    elif raw_walk and st.plain and debug_op_gradients is None:
        # Nothing records the walk: run it on NumPy values (same kernels).
        raw_initial = {tid: [og._value for og in ogs] for tid, ogs in initial.items()}
        found = tape_lib.backward_raw(
            tp.records, raw_initial, sid_set, _raw_rules(), _generic_raw, _aggregate_raw, release
        )
        found = {sid: _wrap_raw(g) for sid, g in found.items()}
    else:
        op_grads = op_gradients if debug_op_gradients is None else debug_op_gradients
        found = tape_lib.backward(tp.records, initial, sid_set, op_grads, aggregate, release)
    if release:
        tp.records = []
    grads = []
    for s, sid in zip(flat_sources, source_ids):
        g = found.get(sid)
        if g is None and sid in initial:  # the target itself: d(x)/d(x) = 1, watched or not (TF)
            gl = initial[sid]
            g = gl[0] if len(gl) == 1 else aggregate(gl)
        if g is None and unconnected is UnconnectedGradients.ZERO:
            g = _array_ops().zeros_like(s)
        grads.append(g)
    if type(sources) is Tensor:
        return grads[0]
    if type(sources) is list and _PLAIN_SOURCES.issuperset(map(type, sources)):
        return grads  # (what pack_sequence_as gives for a flat list)
    return nest.pack_sequence_as(sources, grads)


_PLAIN_SOURCES = frozenset({Tensor, Variable})  # (leaves of nest.flatten, never composites)


def _array_ops():
    from tapeflow.ops import array_ops

    return array_ops


def _composite_gradient(tp, target, sources, output_gradients, unconnected, release: bool):
    """Gradients w.r.t. ragged/sparse sources: w.r.t. their values (flat_values,
    sparse values), returned as a composite with the same row partition."""
    from tapeflow.ops import array_ops

    flat_sources = nest.flatten(sources)
    parts = [s._trace_split()[1] if isinstance(s, CompositeTensor) else [s] for s in flat_sources]
    inner = _gradient(tp, target, [p for ps in parts for p in ps], output_gradients, unconnected, release)
    it = iter(inner)
    grads = []
    for s, ps in zip(flat_sources, parts):
        gs = [next(it) for _ in ps]
        if not isinstance(s, CompositeTensor):
            grads.append(gs[0])
        elif all(g is None for g in gs):
            grads.append(None)
        else:
            dense = [array_ops.zeros_like(p) if g is None else convert_to_tensor(g) for g, p in zip(gs, ps)]
            grads.append(s._trace_rebuild(dense))
    return nest.pack_sequence_as(sources, grads)


__all__ = ["GradientTape", "UnconnectedGradients", "record_operation", "record_variable_read", "np"]
