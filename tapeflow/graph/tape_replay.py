"""Replaying a tape's backward pass as compiled code when its ops repeat.

A training loop, a Hessian or nested tapes record the *same* op sequence on
every call. Walking those records op by op costs Python per op (rule
dispatch, pending gradients), and an outer tape then records every op of the
walk. Instead, once a tape's structure has been seen twice, its backward pass
is traced once — the same records, the same rules and walk (``tape.backward``)
with placeholders for the saved tensors — into a graph, and compiled to
straight-line code by the ``tf.function`` compiler. Later gradients with that
structure call it: with nothing recording, as one call on the NumPy values;
under an outer tape, as one function-call op (``StatefulPartitionedCall``)
whose own gradient is the compiled function's backward, built lazily and
cached with it, so derivatives of any order recurse. ``tape.jacobian``'s
vectorized pass is replayed the same way (``jacobian``): the batching
interpreter's walk is traced once per structure and batch size, so a Hessian
(the jacobian of a replayed gradient) is straight-line code too.

The structure key holds everything the trace depends on: each record's op
type, gradient rule, attrs, shapes and dtypes, which tensors it saved, how the
records connect, the targets and the sources. Records the trace cannot
reproduce (custom gradients, integer tensors a rule reads, sparse gradients,
unhashable attrs) make a tape ineligible; it is walked as before.

It lives in the graph layer because it traces and compiles; importing it plugs
it into the eager layer's ``GradientTape.gradient`` (``backprop.replay``), as
``execute.record_hook`` plugs the tape into op execution.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from itertools import chain, compress, count
from operator import attrgetter, itemgetter
from typing import Any

import numpy as np

from tapeflow.eager import backprop
from tapeflow.eager import tape as tape_lib
from tapeflow.eager.tape import OpRecord
from tapeflow.framework import execute as execute_mod
from tapeflow.framework.execute import execute
from tapeflow.framework.indexed_slices import IndexedSlices
from tapeflow.framework.tensor import Tensor, _wrap, convert_to_tensor
from tapeflow.graph.function import GraphFunction
from tapeflow.graph.functional_ops import CALL, call_function
from tapeflow.graph.graph import FuncGraph, SymbolicTensor, graph_scope

# False: every gradient walks its records (tests compare the two).
enabled = True
# A structure is compiled once it has been walked this many times.
MIN_REPEATS = 2
# Bounds on what is kept (the oldest structures go first).
_MAX_ENTRIES = 4096
_MAX_OPS = 2_000_000  # graph ops over all compiled replays

_SEEN: OrderedDict = OrderedDict()  # key -> walks so far (not yet compiled)
_CACHE: OrderedDict = OrderedDict()  # key -> _Entry, or None when the trace failed (oldest first)
_ops = 0  # graph ops held by _CACHE
_SIMPLE = (int, str, bool, float, type(None), bytes)


class _Key:
    """A structure key that hashes its (long) tuple once."""

    __slots__ = ("key", "hash")

    def __init__(self, key: tuple) -> None:
        self.key = key
        self.hash = hash(key)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other) -> bool:
        return self.hash == other.hash and self.key == other.key


class _Entry:
    __slots__ = ("fn", "out_index", "keep", "size", "pick", "template", "call_attrs")

    def __init__(self, fn, out_index: list, keep: list) -> None:
        self.size = len(fn.graph.operations)
        self.fn = fn  # GraphFunction: (saved..., output grads...) -> source grads
        self.out_index = out_index  # local index of the source each output belongs to
        self.keep = keep  # attrs objects the key names by id (kept alive so ids stay unique)
        self.pick = None  # takes the distinct saved tensors from the records' (see _dedup)
        self.template = None  # for tapes to record along (tape.Template), made on first use
        self.call_attrs = {"f": fn, "saved": False}  # the attrs of every call of fn as one op (never changed)


_BOOL_KEYS = {id(True): (bool, "True"), id(False): (bool, "False"), id(None): (type(None), "None")}
# Types whose attrs the key names by identity (a GraphFunction, a Variable): learnt as they are met, so later
# keys skip the checks below. Never NumPy types, whose small values are keyed by content.
_ID_TYPES: set = set()
_NUMPY_TYPES = (np.ndarray, np.generic, np.dtype)


def _all_int(t: tuple) -> bool:
    for x in t:
        if type(x) is not int:
            return False
    return True


def _attr_key(v: Any, keep: list):
    t = type(v)
    if t is str or t is int:
        return v
    if t is dict:  # (an op's attrs: a flat run of names and their keys)
        out = [dict]
        for k, x in v.items():
            tx = type(x)
            out.append(k)
            if tx is str or tx is int:
                out.append(x)
            elif tx is bool or x is None:
                out.append(_BOOL_KEYS[id(x)])
            elif tx is tuple and _all_int(x):  # (a shape, axes): as the tuple branch below keys it
                out.append((tuple, x))
            elif tx in _ID_TYPES:  # (a call op's function)
                keep.append(x)
                out.append(("id", id(x)))
            else:
                out.append(_attr_key(x, keep))
        return tuple(out)
    k = _BOOL_KEYS.get(id(v))  # (most attrs are flags)
    if k is not None:
        return k
    if t in _ID_TYPES:
        keep.append(v)
        return ("id", id(v))
    if t in _SIMPLE:
        return (t, repr(v))  # (1, 1.0, True and -0.0/0.0 stay distinct)
    if t is tuple or t is list:
        return (t, tuple([_attr_key(x, keep) for x in v]))
    if t is slice:
        return (slice, _attr_key(v.start, keep), _attr_key(v.stop, keep), _attr_key(v.step, keep))
    if isinstance(v, np.dtype):
        return ("dtype", v.str)
    if isinstance(v, np.generic):
        return ("scalar", v.dtype.str, v.tobytes())
    if t is np.ndarray and v.size <= 64:
        return ("array", v.dtype.str, v.shape, v.tobytes())
    if not issubclass(t, _NUMPY_TYPES):
        _ID_TYPES.add(t)
    keep.append(v)
    return ("id", id(v))


_META = attrgetter("meta")
_ATTRS = attrgetter("attrs")
_IN_IDS = attrgetter("input_ids")
_OUT_IDS = attrgetter("output_ids")
_SAVED_IN = attrgetter("inputs")
_SAVED_OUT = attrgetter("outputs")
_VALUE = attrgetter("_value")


def signature(records: list, initial: dict, source_ids: set):
    """(key, saved tensors (with repeats), initial grads in key order, keep,
    local) or None when the records cannot be replayed.

    Each record contributes its interned meta (op, rule, shapes, dtypes, what
    it saved: ``RecordMeta``) and its attrs; how records connect is the
    first position at which each input/output id occurs. Everything is
    gathered by C-level ``map``s, never a Python loop over the records.
    """
    metas = tuple(map(_META, records))
    if not all(metas):
        return None  # a custom gradient, an integer tensor a rule reads, a traced record
    keep: list = []
    attrs = list(map(_ATTRS, records))
    akey = tuple([(i, _attr_key(attrs[i], keep)) for i in compress(range(len(attrs)), attrs)])
    ids = list(chain.from_iterable(map(_IN_IDS, records)))
    ids += chain.from_iterable(map(_OUT_IDS, records))
    targets = []
    grads = []
    for tid, gl in initial.items():
        ids.append(tid)
        specs = []
        for g in gl:
            if type(g) is not Tensor:
                return None
            v = g._value
            specs.append((v.shape, v.dtype))
            grads.append(g)
        targets.append(tuple(specs))
    local: dict[int, int] = {}  # id -> its first position in ``ids``
    canon = tuple(map(local.setdefault, ids, count()))
    lget = local.get
    sources = sorted([k for k in map(lget, source_ids) if k is not None])
    saved = list(chain.from_iterable(filter(None, map(_SAVED_IN, records))))
    saved += chain.from_iterable(filter(None, map(_SAVED_OUT, records)))
    try:
        key = _Key((metas, canon, akey, tuple(targets), tuple(sources)))
    except TypeError:  # an unhashable attr
        return None
    return key, saved, grads, keep, local


def _dedup(saved: list) -> tuple[list, Any]:
    """The distinct saved tensors (first occurrences) and the picker that
    takes them from a list of saved tensors (None: nothing repeats)."""
    first: dict[int, int] = {}
    pick = [i for i, x in enumerate(saved) if first.setdefault(x._id, i) == i]
    if len(pick) == len(saved):
        return saved, None
    if len(pick) == 1:
        j = pick[0]
        return [saved[j]], lambda s: [s[j]]
    return [saved[i] for i in pick], itemgetter(*pick)


def _picked(entry, saved: list) -> list:
    # (One structure repeats the same tensors at the same positions.)
    return saved if entry.pick is None else list(entry.pick(saved))


def _build(records: list, saved: list, grads: list, initial: dict, source_ids: set, local: dict, keep: list):
    """Traces the walk over ``records`` into a compiled GraphFunction."""
    g = FuncGraph("tape_backward")
    try:
        return _trace(g, records, saved, grads, initial, source_ids, local, keep)
    except BaseException:
        _dispose(g)
        raise


def _symbolic_records(g, records: list, saved: list) -> tuple[dict, list]:
    """Placeholders for the saved tensors, and copies of ``records`` that
    hold them instead of the values."""
    phs = {x._id: g.add_placeholder(x._value.shape, x._value.dtype) for x in saved}
    sym = []
    for rec in records:
        ins = None if rec.inputs is None else tuple([phs[x._id] for x in rec.inputs])
        outs = None if rec.outputs is None else tuple([phs[x._id] for x in rec.outputs])
        sym.append(
            OpRecord(
                rec.type,
                rec.attrs,
                rec.input_ids,
                rec.output_ids,
                ins,
                outs,
                rec.input_shapes,
                rec.input_dtypes,
                rec.output_shapes,
                rec.output_dtypes,
                rec.grad_fn,
            )
        )
    return phs, sym


def _trace(g, records, saved, grads, initial, source_ids, local, keep):
    with graph_scope(g):
        phs, sym = _symbolic_records(g, records, saved)
        gphs = [g.add_placeholder(x._value.shape, x._value.dtype) for x in grads]
        it = iter(gphs)
        sym_initial = {tid: [next(it) for _ in gl] for tid, gl in initial.items()}
        found = tape_lib.backward(sym, sym_initial, set(source_ids), backprop.op_gradients, backprop.aggregate, False)
        outputs, out_index = [], []
        for sid in sorted(found, key=local.__getitem__):
            v = found[sid]
            if isinstance(v, IndexedSlices) or not isinstance(v, Tensor):
                _dispose(g)
                return None
            outputs.append(v)
            out_index.append(local[sid])
    if g.captures:
        _dispose(g)
        return None  # a rule reached for a tensor outside the records
    inputs = list(phs.values()) + gphs
    if any(op.type == "StatefulPartitionedCall" for op in g.operations):
        try:
            flat, inputs, outputs = _inlined(g, inputs, outputs)
        except _NoInlineError:
            pass
        else:
            _dispose(g)
            g = flat
    fn = GraphFunction(g, inputs, outputs, "tape_backward")
    fn.compiled()
    return _Entry(fn, out_index, keep)


def _dispose(g) -> None:
    """Breaks a discarded graph's reference cycles (op <-> tensors <-> graph)
    so it is freed at once, not left to the garbage collector."""
    for op in g.operations:
        op.outputs = []
        op.graph = None
    g.operations = []


class _NoInlineError(Exception):
    pass


def _inlined(g, inputs: list, outputs: list):
    """``g`` with its function calls (earlier replays' backward functions)
    inlined, so the compiler's CSE and dead-code pass see one flat graph:
    the recomputations nested tapes need then share their common parts."""

    flat = FuncGraph(g.name)
    try:
        with graph_scope(flat):
            phs = [flat.add_placeholder(x._value.shape, x._value.dtype) for x in inputs]
            m = _inline_ops(g, {x._id: p for x, p in zip(inputs, phs)})
            outs = [m.get(o._id, o) for o in outputs]
    except BaseException:
        _dispose(flat)
        raise
    return flat, phs, outs


def _inline_ops(graph, m: dict) -> dict:

    def mapped(x):
        if isinstance(x, SymbolicTensor):
            y = m.get(x._id)
            if y is None:
                raise _NoInlineError  # a tensor not fed in (a capture, a variable)
            return y
        return x

    for op in graph.operations:
        if op.type == "Placeholder":
            continue
        ins = [mapped(x) for x in op.inputs]
        if op.type == "StatefulPartitionedCall":
            f = op.attrs["f"]
            if f.read_vars or f.graph.custom_gradients:
                raise _NoInlineError
            sub = _inline_ops(f.graph, {p._id: x for p, x in zip(f.inputs, ins[: f.num_inputs])})
            results = f.outputs + (f.saved_tensors() if op.attrs["saved"] else [])
            outs = [sub.get(o._id, o) if isinstance(o, SymbolicTensor) else o for o in results]
            if any(isinstance(o, SymbolicTensor) and o._graph is f.graph for o in outs):
                raise _NoInlineError
        elif op.opdef is None or op.stateful:
            raise _NoInlineError
        else:
            outs = execute(op.opdef, tuple(ins), op.attrs)
            outs = outs if isinstance(outs, list) else [outs]
        for o, n in zip(op.outputs, outs):
            m[o._id] = n
    return m


def gradient(tp, initial: dict, source_ids: set, plain: bool):
    """The sources' gradients by a compiled replay of ``tp``'s backward, or
    None when this tape is walked instead (first sightings, ineligible)."""
    if tp.tpl is not None and tp.tpl is not tape_lib.UNDECIDED:  # (recorded along a template: no key to build)
        grads = [g for gl in initial.values() for g in gl]
        found = _followed(tp, lambda pos: _grad_use(initial, source_ids, pos), grads, plain, source_ids)
        if found is not None:
            return found
    records = tp.records
    if not records:
        return None
    sig = signature(records, initial, source_ids)
    if sig is None:
        return None
    key, all_saved, grads, keep, local = sig
    entry = _entry(key, all_saved, lambda saved: _build(records, saved, grads, initial, source_ids, local, keep))
    if entry is None:
        return None
    found = _run(entry, [*_picked(entry, all_saved), *grads], plain, local, source_ids)
    if not tp.persistent and tp.ctx is not None:
        _remember(tp.ctx, entry, records, lambda pos: _grad_use(initial, source_ids, pos), local)
    return found


# -- recording along a template (tape.Template) ----------------------------------------


def _sources_use(source_ids: set, pos: dict) -> tuple:
    return tuple(sorted([p for p in map(pos.get, source_ids) if p is not None]))


def _grad_use(initial: dict, source_ids: set, pos: dict):
    """How a gradient is asked, by position (the key's targets and sources); None: not by a template."""
    if len(initial) == 1 and len(source_ids) == 1:  # (one target and one source: the same key, fewer steps)
        ((tid, gl),) = initial.items()
        p = pos.get(tid)
        if p is None:
            return None
        if len(gl) == 1:
            g = gl[0]
            if type(g) is not Tensor:
                return None
            v = g._value
            (sid,) = source_ids
            sp = pos.get(sid)
            return ("gradient", ((p, ((v.shape, v.dtype),)),), () if sp is None else (sp,))
    targets = []
    for tid, gl in initial.items():
        p = pos.get(tid)
        if p is None:
            return None
        specs = []
        for g in gl:
            if type(g) is not Tensor:
                return None
            v = g._value
            specs.append((v.shape, v.dtype))
        targets.append((p, tuple(specs)))
    return ("gradient", tuple(targets), _sources_use(source_ids, pos))


def _jacobian_use(tid: int, cot: Tensor, diag: bool, size: int, source_ids: set, pos: dict):
    p = pos.get(tid)
    if p is None or tid in source_ids:
        return None
    v = cot._value
    return ("jacobian", p, v.shape, v.dtype, diag, size, _sources_use(source_ids, pos))


def _remember(ctx: tuple, entry: _Entry, records: list, use, local: dict) -> None:
    """Lets later tapes with this structure record along it (``tape.Template``)."""
    if not tape_lib.templates:
        return
    tpl = entry.template
    if tpl is False:
        return
    templates = backprop._TEMPLATES
    if tpl is None:
        made = _template_ops(records)
        u = None if made is None else use(made[1])
        if u is None:
            entry.template = False
            return
        ops, pos, keep, attrs = made
        by_local = {k: i for i, k in local.items()}
        out_pos = [pos.get(by_local[k]) for k in entry.out_index]
        if None in out_pos:
            entry.template = False
            return
        tpl = templates.get((ops[0][0], ops[0][2], ctx))
        if tpl is None or tpl.ops != ops:
            tpl = tape_lib.Template(ops, keep, attrs)
            tpl.lane = backprop.make_lane(ops, attrs)
        tpl.uses[u] = (entry, out_pos)
        entry.template = tpl
    first = tpl.ops[0]
    if len(templates) >= _MAX_ENTRIES:
        templates.clear()
        tape_lib._ENTRIES.clear()
    templates[(first[0], first[2], ctx)] = tpl


def _template_ops(records: list):
    """(template ops, positions of the ids, keep) of ``records``, or None when a tape cannot follow them."""
    pos: dict[int, int] = {}
    ops = []
    keep: list = []
    attrs: list = []
    grads = backprop._GRADS
    for rec in records:
        spec = backprop._READ_SPEC if rec.type == "ReadVariableOp" else grads.get(rec.type)
        if spec is None or spec.fn is not rec.grad_fn or rec.meta is None:
            return None
        ein = []
        for i in rec.input_ids:
            p = pos.get(i)
            if p is None:
                p = pos[i] = len(pos)
            ein.append(p)
        for o in rec.output_ids:
            if o in pos:
                return None  # (an output that is not a new tensor)
            pos[o] = len(pos)
        ops.append((spec, rec.type, rec.meta, _attr_key(rec.attrs, keep) if rec.attrs else None, tuple(ein)))
        attrs.append(rec.attrs)
    return ops, pos, keep, attrs


_SAVED_IN_L = itemgetter(2)
_SAVED_OUT_L = itemgetter(3)


def _followed(tp, use, extra: list, plain: bool, source_ids: set):
    """The compiled replay for a tape that recorded along its whole template
    and is asked as ``use(positions)`` says, on its saved tensors and
    ``extra`` (output gradients or cotangents); None when there is none
    (the tape then makes its records, and the replay goes on as usual)."""
    tpl = tp.tpl
    if len(tp.light) != len(tpl.ops):
        return None
    if tp.lazy:  # (nothing checked yet: all of it now)
        pos = backprop.lazy_check(tp)
        if pos is None:
            return None
    else:
        pos = tp.pos
    u = use(pos)
    got = None if u is None else tpl.uses.get(u)
    if got is None:
        return None
    entry, out_pos = got
    if tp.lazy:
        saved = backprop.lazy_saved(tp)
    else:
        light = tp.light
        saved = list(chain.from_iterable(filter(None, map(_SAVED_IN_L, light))))
        saved += chain.from_iterable(filter(None, map(_SAVED_OUT_L, light)))
    fn = entry.fn
    args = [*_picked(entry, saved), *extra]
    if plain:
        outs = [Tensor(v) for v in fn.compiled()(*map(_VALUE, args))]
    else:
        outs = call_function(fn, args, saved=False)
    by_pos = dict(zip(out_pos, outs))
    found = {}
    for sid in source_ids:
        p = pos.get(sid)
        if p is not None and p in by_pos:
            found[sid] = by_pos[p]
    return found


def template_gradient(tp, target: Tensor, source: Tensor, og: Tensor | None, plain: bool):
    """``tp.gradient(target, source, output_gradients=og)`` for a tape that recorded along its whole
    template (checking as it went), by the compiled replay its template has for this use: what
    ``gradient`` gives through ``_followed``, in fewer steps. ``backprop._NOT_FOUND`` when there is
    none, or for anything the general path does otherwise; then nothing has changed."""
    missing = backprop._NOT_FOUND
    tpl = tp.tpl
    light = tp.light
    if len(light) != len(tpl.ops) or tp.shared:
        return missing
    lazy = tp.lazy
    if lazy:  # (nothing checked yet: all of it now)
        pos = backprop.lazy_check(tp)
        if pos is None:
            return missing
    else:
        pos = tp.pos
    tid = target._id
    sid = source._id
    p = pos.get(tid)
    if p is None or tid == sid:
        return missing
    v = target._value
    d = v.dtype
    if og is None:
        if d.kind not in "fc":
            return missing
        og = Tensor(d.type(1) if isinstance(v, np.generic) else np.ones_like(v))
    else:
        g = og._value
        if g.dtype != d or g.shape != v.shape:  # (converted, or refused, by the general path)
            return missing
    sp = pos.get(sid) if sid in tp.watched else None
    g = og._value
    got = tpl.uses.get(("gradient", ((p, ((g.shape, g.dtype),)),), () if sp is None else (sp,)))
    if got is None:
        return missing
    entry, out_pos = got
    if lazy:
        saved = backprop.lazy_saved(tp)
    else:
        saved = list(chain.from_iterable(filter(None, map(_SAVED_IN_L, light))))
        saved += chain.from_iterable(filter(None, map(_SAVED_OUT_L, light)))
    if entry.pick is not None:
        saved = list(entry.pick(saved))
    saved.append(og)
    fn = entry.fn
    if plain:
        outs = fn.compiled()(*map(_VALUE, saved))
    elif fn.read_vars:
        outs = call_function(fn, saved, saved=False)
    else:  # (what call_function does eagerly: the call is one op on the tapes and accumulators)
        outs = tuple([_wrap(o) for o in fn.compiled()(*map(_VALUE, saved))])
        execute_mod.record_hook(CALL, tuple(saved), entry.call_attrs, outs)
    if sp is None or sp not in out_pos:
        return None
    out = outs[out_pos.index(sp)]
    return Tensor(out) if plain else out


def template_gradients(tp, target: Tensor, sources: list, plain: bool):
    """``tp.gradient(target, sources)`` for a flat list of variables and tensors (a training step's) on a
    tape that recorded along its whole template, checking as it went: the list of gradients by the
    compiled replay its template has for this use, what ``_gradient`` gives through ``_followed``, in
    fewer steps. ``backprop._NOT_FOUND`` for anything the general path does otherwise (nothing has
    changed then)."""
    missing = backprop._NOT_FOUND
    tpl = tp.tpl
    light = tp.light
    if len(light) != len(tpl.ops) or tp.shared or tp.lazy:
        return missing
    pos = tp.pos
    tid = target._id
    p = pos.get(tid)
    if p is None:
        return missing
    v = target._value
    d = v.dtype
    if d.kind not in "fc":
        return missing
    w = tp.watched
    sids = [s._id for s in sources]
    if tid in sids:  # (the target as a source: d(x)/d(x), the general path's)
        return missing
    got = tpl.uses.get(
        ("gradient", ((p, ((v.shape, d),)),), tuple(sorted({pos[i] for i in sids if i in w and i in pos})))
    )
    if got is None:
        return missing
    entry, out_pos = got
    saved = list(chain.from_iterable(filter(None, map(_SAVED_IN_L, light))))
    saved += chain.from_iterable(filter(None, map(_SAVED_OUT_L, light)))
    if entry.pick is not None:
        saved = list(entry.pick(saved))
    saved.append(Tensor(d.type(1) if isinstance(v, np.generic) else np.ones_like(v)))
    fn = entry.fn
    if plain:
        outs = [Tensor(o) for o in fn.compiled()(*map(_VALUE, saved))]
    else:
        outs = call_function(fn, saved, saved=False)
    by_pos = dict(zip(out_pos, outs))
    return [by_pos.get(pos.get(i)) if i in w else None for i in sids]


def _entry(key, all_saved, make):
    """The compiled entry for ``key`` (None while it is not compiled): ``make(saved)`` builds it over the
    distinct saved tensors, and the entry keeps how to pick them from a later tape's."""

    def build():
        saved, pick = _dedup(all_saved)
        entry = make(saved)
        if entry is not None:
            entry.pick = pick
        return entry

    entry = _cached(key, build)
    return None if entry is False else entry


def _run(entry, args: list, plain: bool, local: dict, source_ids: set) -> dict:
    """Calls the compiled function on ``args``: {source id: its result}."""
    fn = entry.fn
    if plain:
        outs = [Tensor(v) for v in fn.compiled()(*map(_VALUE, args))]
    else:
        outs = call_function(fn, args, saved=False)
    by_local = dict(zip(entry.out_index, outs))
    found = {}
    for sid in source_ids:
        k = local.get(sid)
        if k is not None and k in by_local:
            found[sid] = by_local[k]
    return found


def _cached(key, build):
    """The compiled entry for ``key``: False while the structure has been
    seen fewer than MIN_REPEATS times, None when its trace failed."""
    global _ops
    entry = _CACHE.get(key, False)
    if entry is not False:
        return entry
    n = _SEEN.get(key, 0) + 1
    if n < MIN_REPEATS:
        _SEEN[key] = n
        if len(_SEEN) > _MAX_ENTRIES:
            _SEEN.popitem(last=False)
        return False
    _SEEN.pop(key, None)
    try:
        entry = build()
    except Exception:  # noqa: BLE001 - anything the trace cannot do: walk as before
        entry = None
    _CACHE[key] = entry
    _ops += 0 if entry is None else entry.size
    while len(_CACHE) > _MAX_ENTRIES or _ops > _MAX_OPS:
        _, old = _CACHE.popitem(last=False)
        _ops -= 0 if old is None else old.size
        if old is not None and old.template:  # (a template no longer calls what the cache let go)
            uses = old.template.uses
            for u in [u for u, (e, _) in uses.items() if e is old]:
                del uses[u]
    return entry


# -- vectorized Jacobians ---------------------------------------------------------


def jacobian(tp, tid: int, cot: Tensor, diag: bool, size: int, source_ids: set, plain: bool):
    """``tape.jacobian``'s vectorized backward pass (eager/jacobians.py) by a
    compiled replay: the batching interpreter's walk over ``tp``'s records,
    traced once per structure into straight-line code. ``cot`` is the stack
    of cotangents for tensor ``tid`` (batch axis first), or with ``diag`` the
    values of its diagonal (the one-hot stack scaled by them). Returns
    {source id: batched gradient (batch axis first)}, or None when the walk
    runs instead (first sightings, ineligible records)."""
    if tp.tpl is not None and tp.tpl is not tape_lib.UNDECIDED:
        found = _followed(
            tp, lambda pos: _jacobian_use(tid, cot, diag, size, source_ids, pos), [cot], plain, source_ids
        )
        if found is not None:
            return found
    records = tp.records
    if not records or tid in source_ids:
        return None
    initial = {tid: [cot]}
    sig = signature(records, initial, source_ids)
    if sig is None:
        return None
    key, all_saved, grads, keep, local = sig
    key = _Key(("jacobian", key, diag, size))
    entry = _entry(
        key, all_saved, lambda saved: _build_jacobian(records, saved, cot, tid, diag, size, source_ids, local, keep)
    )
    if entry is None:
        return None
    found = _run(entry, _picked(entry, all_saved) + [cot], plain, local, source_ids)
    if not tp.persistent and tp.ctx is not None:
        _remember(tp.ctx, entry, records, lambda pos: _jacobian_use(tid, cot, diag, size, source_ids, pos), local)
    return found


def _build_jacobian(records, saved, cot, tid, diag, size, source_ids, local, keep):
    from tapeflow.eager import batching
    from tapeflow.ops import array_ops

    g = FuncGraph("tape_jacobian")
    try:
        with graph_scope(g):
            phs, sym = _symbolic_records(g, records, saved)
            cph = g.add_placeholder(cot._value.shape, cot._value.dtype)
            with batching.BatchInterpreter(size) as interp:
                c = interp.diagonal(cph) if diag else interp.wrap(cph)
                found = tape_lib.backward(
                    sym, {tid: [c]}, set(source_ids), backprop.op_gradients, backprop.aggregate, False
                )
                found = {sid: convert_to_tensor(v) if isinstance(v, IndexedSlices) else v for sid, v in found.items()}
            outputs, out_index = [], []
            for sid in sorted(found, key=local.__getitem__):
                v = found[sid]
                if type(v) is batching.BatchedTensor and v._interp is interp:
                    v = v._phys
                elif isinstance(v, Tensor):
                    # A gradient that does not depend on the cotangent: the same for every row.
                    shape = tuple(v._shape_tuple())
                    v = array_ops.broadcast_to(batching._reshape(v, (1,) + shape), (size,) + shape)
                else:
                    raise TypeError(f"not a tensor: {v!r}")
                outputs.append(v)
                out_index.append(local[sid])
        if g.captures or any(not isinstance(v, SymbolicTensor) or v._graph is not g for v in outputs):
            raise TypeError("the trace reached outside its inputs")
        fn = GraphFunction(g, list(phs.values()) + [cph], outputs, "tape_jacobian")
        fn.compiled()
    except BaseException:
        _dispose(g)
        raise
    return _Entry(fn, out_index, keep)


def clear() -> None:
    """Forgets every compiled replay (e.g. after gradient rules changed)."""
    global _ops
    _SEEN.clear()
    _CACHE.clear()
    backprop._TEMPLATES.clear()
    tape_lib._ENTRIES.clear()  # (templates' interned entries hold their records' attrs)
    _ops = 0


backprop.replay = sys.modules[__name__]  # GradientTape.gradient asks it first
