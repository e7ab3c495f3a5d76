"""The low-level tape: records of executed ops and the backward walk.

This module knows nothing about what ops mean. A record holds an op's type
and attrs, the ids of its inputs and outputs, the tensors its gradient rule
said it needs, and the shapes/dtypes of everything (for unbroadcasting and
for zero-filling outputs that received no gradient). ``backward`` walks the
records in reverse and calls back into ``backprop`` for the math.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable, Iterable
from operator import attrgetter

import numpy as np

from tapeflow.framework.context import state

_ARRAYS = (np.ndarray, np.generic)


class OpRecord:
    """One recorded op. Also the ``op`` a gradient rule receives."""

    __slots__ = (
        "type",
        "attrs",
        "input_ids",
        "output_ids",
        "inputs",
        "outputs",
        "input_shapes",
        "input_dtypes",
        "output_shapes",
        "output_dtypes",
        "_grad_fn",
        "source_info",
        "skip_input_indices",
        "holders",
        "zero_output_grads",
        "meta",
    )

    def __init__(
        self,
        type,
        attrs,
        input_ids,
        output_ids,
        inputs,
        outputs,
        input_shapes,
        input_dtypes,
        output_shapes,
        output_dtypes,
        grad_fn,
        meta=None,
    ):
        self.type = type
        self.attrs = attrs
        self.input_ids = input_ids
        self.output_ids = output_ids
        self.inputs = inputs
        self.outputs = outputs
        self.input_shapes = input_shapes
        self.input_dtypes = input_dtypes
        self.output_shapes = output_shapes
        self.output_dtypes = output_dtypes
        self._grad_fn = grad_fn
        self.source_info = None
        # Inputs whose gradient nobody asked for (TF's name): rules may skip them.
        self.skip_input_indices = ()
        self.holders = 0  # tapes holding this record (nested tapes share one)
        # Outputs that received no gradient (the engine passed zeros): rules may
        # skip terms that would only multiply those zeros.
        self.zero_output_grads = ()
        # The record's interned static part (op, rule, shapes, dtypes, what it
        # saved) when the compiled replay may key on it; None otherwise.
        self.meta = meta

    def _set_grad_fn(self, fn) -> None:
        # A rule swapped on one record (tests, debugging) is that record's
        # own: the interned meta no longer describes it, so it is not replayed.
        self._grad_fn = fn
        self.meta = None

    grad_fn = property(attrgetter("_grad_fn"), _set_grad_fn, doc="The gradient rule the walk calls.")

    @property
    def name(self) -> str:
        return self.type

    def get_attr(self, name: str) -> Any:
        try:
            return self.attrs[name]
        except KeyError:
            raise ValueError(f"Operation '{self.type}' has no attr named '{name}'.") from None

    @property
    def num_inputs(self) -> int:
        return len(self.input_ids)

    def release(self) -> None:
        """One holding tape is done with the saved tensors; free them when
        no tape needs them any more."""
        self.holders -= 1
        if self.holders <= 0:
            self.inputs = self.outputs = None

    def __repr__(self) -> str:
        return f"<OpRecord {self.type} in={self.input_ids} out={self.output_ids}>"


class RecordMeta:
    """A record's static part: op type, rule, what it saved, shapes and dtypes.

    Interned by the recorder (one object per distinct content), so records
    share their shape/dtype tuples and a tape's structure key (the compiled
    replay's, ``graph/tape_replay.py``) compares and hashes records by
    identity instead of walking their fields.
    """

    __slots__ = (
        "type",
        "grad_fn",
        "input_shapes",
        "input_dtypes",
        "output_shapes",
        "output_dtypes",
        "keeps_inputs",
        "keeps_outputs",
        "replayable",
    )

    def __init__(
        self,
        type,
        grad_fn,
        input_shapes,
        input_dtypes,
        output_shapes,
        output_dtypes,
        keeps_inputs: bool,
        keeps_outputs: bool,
    ) -> None:
        self.type = type
        self.grad_fn = grad_fn
        self.input_shapes = input_shapes
        self.input_dtypes = input_dtypes
        self.output_shapes = output_shapes
        self.output_dtypes = output_dtypes
        self.keeps_inputs = keeps_inputs
        self.keeps_outputs = keeps_outputs
        # A rule may read the value of an integer tensor it saved: the replay's
        # placeholders (float only) cannot stand in for it.
        self.replayable = not (
            (keeps_inputs and any(d.kind not in "fc" for d in input_dtypes))
            or (keeps_outputs and any(d.kind not in "fc" for d in output_dtypes))
        )


class Template:
    """A structure whose backward is compiled (``graph/tape_replay.py``), for a
    new tape to record along: each op is checked against the next entry and
    keeps only what changes per call (ids, saved tensors, attrs), so no
    ``OpRecord`` is made and the structure key is known when ``gradient`` comes.

    ``ops``: per record (rule spec, op name, meta, attrs key or None, the
    positions of its inputs), where positions number ids in order of first
    appearance (inputs, then outputs, record by record). ``uses``: what the
    replay compiled for this structure, by how it was asked (gradient or
    Jacobian, targets and sources by position).
    """

    __slots__ = ("ops", "uses", "keep", "fast", "lane")

    def __init__(self, ops: list, keep: list, attrs: list | None = None) -> None:
        self.ops = ops
        self.uses: dict = {}
        self.keep = keep  # attrs objects the keys name by identity
        self.lane: Lane | None = None  # set by backprop when a tape may follow this template lazily
        # Per op, what following it checks, flat: (spec, name, output shape, output dtype, attrs key, the
        # record's attrs, input positions, saves inputs, saves outputs); None for a several-output op.
        fast = []
        for j, (spec, name, m, akey, ein) in enumerate(ops):
            if len(m.output_shapes) != 1:
                fast.append(None)
                continue
            a = attrs[j] if attrs is not None else None
            fast.append(_entry((spec, name, m, akey, ein), (
                spec, name, m.output_shapes[0], m.output_dtypes[0], akey, a if akey is not None else None, ein,
                spec.save_inputs, spec.save_outputs)))
        self.fast = fast


# Templates' per-op entries, one object per distinct op entry (rule, name, meta, attrs key, input positions),
# so that tapes in step (``Tape.sync``) tell by identity that the next op's check is the same for each.
_ENTRIES: dict = {}


def _entry(key: tuple, entry: tuple) -> tuple:
    try:
        got = _ENTRIES.get(key)
    except TypeError:  # (an unhashable attrs key: not shared)
        return entry
    if got is None:
        if len(_ENTRIES) >= 1 << 16:  # (also cleared with the templates: graph/tape_replay.py)
            _ENTRIES.clear()
        got = _ENTRIES[key] = entry
    return got


# A fresh non-persistent tape: it may follow a template from its first op.
UNDECIDED = Template([], [])


class Lane:
    """A template's checks, precomputed for a tape that follows it *lazily*: such a tape keeps one
    tuple per op, ``(op, inputs, output, attrs, ids)`` (``ids``: the inputs' then the output's), and
    checks nothing while recording beyond what ordinary recording checks (a watched input); the
    whole sequence is compared with the template when ``gradient``/``jacobian`` comes, by C-level
    list comparisons over these fields (``backprop._lazy_check``).

    ``ops``: the op objects the lane takes (others make the tape check as it goes); ``opdefs``: the
    op of each record; ``rules``: (op name, gradient spec) pairs the records used; ``shapes`` /
    ``types``: each record's output shape and value type (a NumPy scalar type for rank 0, else
    ``np.ndarray``); ``arrays`` / ``array_dtypes``: which outputs are arrays (None: none is) and their
    dtypes; ``attrs``: (record index, its attrs, attrs key) for records with attrs; ``canon``: for
    each id in ``ids`` order, the index of its first occurrence (an array); ``out_flat`` /
    ``fs_flat``: the indices of the outputs / of the inputs no earlier record produced, whose
    (record, input, shape, dtype) ``first_seen`` lists; ``dense``: first-occurrence index -> the
    template's position of the id; ``save_in`` / ``save_out``: per record, whether its rule saves its
    inputs / output; ``arity``: per record, the length of its ``ids``.
    """

    __slots__ = ("ops", "opdefs", "rules", "shapes", "types", "arrays", "array_dtypes", "attrs", "canon", "out_flat",
                 "fs_flat", "dense", "first_seen", "save_in", "save_out", "arity", "canon_list", "by_dict")

    def __init__(self, **fields) -> None:
        for k, v in fields.items():
            setattr(self, k, v)


class Tape:
    """Watched ids plus the op records made while they were watched.

    While the tape follows a ``Template`` (``tpl``), its records are kept as
    ``light`` tuples (input ids, output ids, saved inputs, saved outputs,
    attrs) and ``pos`` maps ids to positions; reading ``records`` turns them
    into ``OpRecord``s first, so every other reader sees an ordinary tape.
    """

    __slots__ = (
        "watched",
        "_records",
        "persistent",
        "watch_accessed_variables",
        "variables",
        "shared",
        "tpl",
        "ctx",
        "pos",
        "light",
        "lazy",
        "sync",
        "__weakref__",
    )

    # What ``state.lane`` holds is a lazily following tape (its ops come straight from ``execute``) or a
    # ``backprop._Peers`` of nested ones; a tape is the lane alone.
    peers = None

    def __init__(self, persistent: bool, watch_accessed_variables: bool) -> None:
        self.watched: set[int] = set()
        self._records: list[OpRecord] = []
        # Whether another tape holds some of these records (nested tapes share
        # one record per op); if not, dropping ``records`` frees them.
        self.shared = False
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self.variables: dict[int, Any] = {}  # id -> watched Variable, in watch order
        self.tpl: Template | None = None if persistent or not templates else UNDECIDED
        self.pos: dict[int, int] | None = None
        self.ctx: tuple | None = None  # (tapes recording, this one's place) at the first op it followed
        self.light: list | None = None
        # While following lazily (see Lane): the ops its lane takes (light holds lazy entries, checked only at
        # gradient time); False otherwise.
        self.lazy: frozenset | bool = False
        # Nested tapes that picked their templates at the same op and recorded every op since together share
        # a token here (their light entries and positions are equal): an op checked for one of them is
        # copied to the others. Recording an op on the tape alone clears it.
        self.sync: object | None = None

    @property
    def records(self) -> list[OpRecord]:
        if self.tpl is not None:
            materialize(self)
        return self._records

    @records.setter
    def records(self, value: list) -> None:
        if self.lazy:
            leave_lane(self)
        self.tpl = None
        self.pos = self.light = None
        self.lazy = False
        self.sync = None
        self._records = value

    def should_record(self, input_ids: Iterable[int]) -> bool:
        w = self.watched
        for i in input_ids:
            if i in w:
                return True
        return False


# False: tapes never follow templates (every op makes its OpRecord).
templates = True


def leave_lane(tp: Tape) -> None:
    """``tp`` stops following lazily: nested tapes that took ops together with it (``state.lane``) stop."""
    lane = state.lane
    if lane is not None and lane.peers is not None and tp in lane.peers:
        state.lane = None


def materialize(tp: Tape) -> None:
    """Ends ``tp``'s following of its template: its light records become
    the ``OpRecord``s ordinary recording would have made."""
    tpl = tp.tpl
    tp.tpl = None
    tp.sync = None
    light = tp.light
    if tp.lazy:
        leave_lane(tp)
        tp.lazy = False
        tp.pos = tp.light = None
        rebuild_lazy(tp, light)
        return
    if tpl is UNDECIDED or not light:
        tp.pos = tp.light = None
        return
    recs = tp._records
    for (_, name, m, _, _), (ids, oids, si, so, attrs) in zip(tpl.ops, light):
        rec = OpRecord(
            name,
            attrs or _NO_ATTRS,
            ids,
            oids,
            si,
            so,
            m.input_shapes,
            m.input_dtypes,
            m.output_shapes,
            m.output_dtypes,
            m.grad_fn,
            m,
        )
        rec.holders = 1
        recs.append(rec)
    tp.pos = tp.light = None


_NO_ATTRS: dict = {}  # (backprop's: rules only read attrs)
# Set by backprop: ``rebuild_lazy(tp, light)`` appends the OpRecords ordinary recording would have made
# from a lazily followed tape's entries (and corrects ``tp.watched``).
rebuild_lazy = None


def backward(
    records: list[OpRecord],
    output_grads: dict[int, list],
    source_ids: set[int],
    op_grads: Callable[[OpRecord, list], list],
    aggregate: Callable[[list], Any],
    release: bool,
) -> dict[int, Any]:
    """Reverse-mode walk. Returns the aggregated gradient of each source id.

    ``output_grads`` maps target ids to lists of incoming gradients. Records
    are processed newest first (a valid reverse topological order since they
    were appended as ops ran); only records on a path from a source are
    visited, and a record with no incoming gradient is skipped.
    """
    # Forward pass over ids: which records depend on a source at all? An
    # input's reachability is final when its record is visited (producers come
    # first), so the inputs nobody asked about (skip_input_indices) fall out too.
    relevant = _relevant(records, source_ids)
    pending = output_grads
    get, pop = pending.get, pending.pop
    for rec in reversed(relevant):
        oids = rec.output_ids
        if len(oids) == 1:
            oid = oids[0]
            gl = get(oid) if oid in source_ids else pop(oid, None)
            if gl is None:
                continue
            outs = [gl[0] if len(gl) == 1 else aggregate(gl)]
        else:
            outs = []
            for oid in oids:
                gl = get(oid) if oid in source_ids else pop(oid, None)
                outs.append(None if gl is None else gl[0] if len(gl) == 1 else aggregate(gl))
            if all(g is None for g in outs):
                continue
        in_grads = op_grads(rec, outs)
        if release:
            rec.release()
        skip = rec.skip_input_indices
        for k, (iid, g) in enumerate(zip(rec.input_ids, in_grads)):
            if g is not None and not (skip and k in skip):
                gl = get(iid)
                if gl is None:
                    pending[iid] = [g]
                else:
                    gl.append(g)
    return _sources_grads(pending, source_ids, aggregate)


def _sources_grads(pending: dict, source_ids, aggregate) -> dict:
    """Each source's gradient: its one pending gradient, or their aggregate."""
    result = {}
    for sid in source_ids:
        gl = pending.get(sid)
        if gl is not None:
            result[sid] = gl[0] if len(gl) == 1 else aggregate(gl)
    return result


def _relevant(records: list[OpRecord], source_ids) -> list[OpRecord]:
    """The records on a path from a source, oldest first; sets each one's
    ``skip_input_indices`` (inputs no source reaches)."""
    reachable = set(source_ids)
    relevant = []
    keep, reach = relevant.append, reachable.update
    for rec in records:
        ids = rec.input_ids
        if len(ids) == 1:
            if ids[0] in reachable:
                rec.skip_input_indices = ()
                reach(rec.output_ids)
                keep(rec)
            continue
        skip = ()
        for k, i in enumerate(ids):
            if i not in reachable:
                skip += (k,)
        if len(skip) < len(ids):
            rec.skip_input_indices = skip
            reach(rec.output_ids)
            keep(rec)
    return relevant


def backward_raw(
    records: list[OpRecord],
    output_grads: dict[int, list],
    source_ids: set[int],
    raw_rules: dict,
    generic: Callable[[OpRecord, list], list],
    aggregate: Callable[[list], Any],
    release: bool,
) -> dict[int, Any]:
    """``backward`` for a walk nothing records: gradients stay NumPy values.

    ``output_grads`` holds NumPy values (or IndexedSlices). A record whose
    rule has an array-level twin in ``raw_rules`` (keyed by the rule) runs it
    on the values; any other record goes through ``generic(rec, out_grads)``,
    which wraps and unwraps (so custom and rare rules behave exactly as in
    ``backward``). ``aggregate`` sums a list of values. Returns values.
    """
    relevant = _relevant(records, source_ids)
    pending = output_grads
    get, pop = pending.get, pending.pop
    raw_get = raw_rules.get
    arrays = _ARRAYS
    unbroadcast = unbroadcast_raw
    for rec in reversed(relevant):
        oids = rec.output_ids
        if len(oids) == 1:
            oid = oids[0]
            gl = get(oid) if oid in source_ids else pop(oid, None)
            if gl is None:
                continue
            g = gl[0] if len(gl) == 1 else aggregate(gl)
            raw = raw_get(rec.grad_fn)
            if raw is not None and isinstance(g, arrays):  # (an IndexedSlices: the rule knows what to do)
                in_grads = raw(rec, g)
            else:
                in_grads = NotImplemented
            if in_grads is NotImplemented:
                in_grads = generic(rec, [g])
                raw = None
        else:
            outs = []
            for oid in oids:
                gl = get(oid) if oid in source_ids else pop(oid, None)
                outs.append(None if gl is None else gl[0] if len(gl) == 1 else aggregate(gl))
            if all(g is None for g in outs):
                continue
            raw = raw_get(rec.grad_fn)
            in_grads = NotImplemented
            if raw is not None:
                for g in outs:
                    if g is not None and not isinstance(g, arrays):
                        break
                else:
                    in_grads = raw(rec, *outs)
            if in_grads is NotImplemented:
                in_grads = generic(rec, outs)
                raw = None
        if raw is None:  # the rule's own gradients (already fit to the inputs' shapes)
            pass
        elif type(in_grads) is not tuple and type(in_grads) is not list:
            # A twin's one gradient (a one-input op): fit it to the input's shape.
            shape = rec.input_shapes[0]
            if in_grads is not None and in_grads.shape != shape:
                in_grads = unbroadcast(in_grads, shape)
            in_grads = (in_grads,)
        else:
            shapes = rec.input_shapes
            for i, g in enumerate(in_grads):
                if g is not None and g.shape != shapes[i]:
                    in_grads = list(in_grads)
                    in_grads[i] = unbroadcast(g, shapes[i])
        if release:
            rec.release()
        iids = rec.input_ids
        if len(iids) == 1:
            g = in_grads[0]
            if g is not None:
                iid = iids[0]
                gl = get(iid)
                if gl is None:
                    pending[iid] = [g]
                else:
                    gl.append(g)
            continue
        skip = rec.skip_input_indices
        for k, (iid, g) in enumerate(zip(iids, in_grads)):
            if g is not None and not (skip and k in skip):
                gl = get(iid)
                if gl is None:
                    pending[iid] = [g]
                else:
                    gl.append(g)
    return _sources_grads(pending, source_ids, aggregate)


# Set by backprop: unbroadcast of a NumPy value (sum back to an input's shape).
unbroadcast_raw: Callable | None = None
