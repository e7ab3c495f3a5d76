"""``tf.debugging.explain_gradient``: why a gradient is None, as data and text.

The explanation is built from two sources. The tape itself (always
available) says whether a source was watched and whether recorded ops connect
it to the target. The debug-mode op log (``set_source_tracking(True)`` or
``TAPEFLOW_DEBUG=1``) holds *every* op, including the ones the tape did not
record, so it can find the path the user meant and name the step that broke
it, with the user's file:line.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Any

from tapeflow.debugging import _instrument
from tapeflow.debugging._instrument import REGISTRY, Entry
from tapeflow.framework import nest
from tapeflow.ops import registry as op_registry

# Cause codes (stable strings: tests and tools match on them).
CONNECTED = "connected"
ZERO_GRADIENT = "zero_gradient"
RULE_RETURNED_NONE = "gradient_rule_returned_none"
NOT_WATCHED = "not_watched"
NON_TRAINABLE_VARIABLE = "non_trainable_variable"
INTEGER_SOURCE = "integer_source"
INTEGER_CAST = "integer_cast"
STOP_GRADIENT = "stop_gradient"
NON_DIFFERENTIABLE_OP = "non_differentiable_op"
STOP_RECORDING = "stop_recording"
LEFT_VIA_NUMPY = "left_via_numpy"
VARIABLE_ASSIGN = "variable_assign"
AFTER_EXIT = "computed_after_exit"
BEFORE_ENTER = "computed_before_tape"
TAPE_CONSUMED = "tape_consumed"
TAPE_EMPTY = "tape_empty"
WATCH_ACCESSED_OFF = "watch_accessed_variables_off"
VARIABLE_NOT_READ = "variable_not_read"
UNCONNECTED = "unconnected"
NOT_RECORDED = "path_not_recorded"
TARGET_NOT_FLOAT = "target_not_float"

TRACKING_HINT = (
    "Source lines and the exact op that cut the path are recorded only in debug mode: call "
    "tf.debugging.set_source_tracking(True) (or set the environment variable TAPEFLOW_DEBUG=1) before "
    "running the code, then explain again."
)


class NoneGradientError(ValueError):
    """Raised in strict mode when ``gradient`` would return None for a
    requested source. ``.explanation`` holds the ``GradientExplanation``."""

    def __init__(self, message: str, explanation: GradientExplanation) -> None:
        super().__init__(message)
        self.explanation = explanation


@dataclasses.dataclass
class Snapshot:
    """What a tape held when ``gradient`` consumed it (debug mode)."""

    tape: Any  # the low-level tapeflow.eager.tape.Tape
    records: list
    site: str | None
    none_ids: set | None = None  # ids of the sources that call returned None for


@dataclasses.dataclass
class SourceExplanation:
    """Why one source's gradient is (or is not) None."""

    index: int
    label: str
    cause: str
    summary: str
    remedy: str = ""
    op: str | None = None  # the op that broke the path, by TF name
    site: str | None = None  # the user's file:line of that op (debug mode)
    details: list = dataclasses.field(default_factory=list)
    path: list = dataclasses.field(default_factory=list)  # op-log entries, source -> target
    cut: Entry | None = None

    @property
    def is_none(self) -> bool:
        return self.cause not in (CONNECTED, ZERO_GRADIENT)

    @property
    def is_zero(self) -> bool:
        return self.cause == ZERO_GRADIENT

    def __str__(self) -> str:
        status = "gradient is None" if self.is_none else "gradient is zero" if self.is_zero else "connected"
        lines = [f"{self.label}: {status} [{self.cause}]",
                 f"  {self.summary}"]
        if self.op:
            lines.append(f"  op: {self.op}" + (f" at {self.site}" if self.site else ""))
        lines += [f"  {d}" for d in self.details]
        if self.remedy:
            lines.append(f"  fix: {self.remedy}")
        return "\n".join(lines)


@dataclasses.dataclass
class GradientExplanation:
    """The report of ``explain_gradient``: one ``SourceExplanation`` per
    flattened source, plus notes. ``print()`` it, or read ``.sources``."""

    sources: list
    tracking: bool
    notes: list = dataclasses.field(default_factory=list)

    @property
    def causes(self) -> list:
        return [s.cause for s in self.sources]

    def __getitem__(self, i: int) -> SourceExplanation:
        return self.sources[i]

    def __len__(self) -> int:
        return len(self.sources)

    def __str__(self) -> str:
        n_none = sum(s.is_none for s in self.sources)
        n_zero = sum(s.is_zero for s in self.sources)
        head = f"Gradient explanation: {n_none} of {len(self.sources)} source(s) get None"
        head += f", {n_zero} get zeros." if n_zero else "."
        parts = [head] + [str(s) for s in self.sources]
        parts += [f"note: {n}" for n in self.notes]
        if not self.tracking and n_none:
            parts.append(f"note: {TRACKING_HINT}")
        return "\n".join(parts)

    __repr__ = __str__


def explain_gradient(tape: Any, target: Any, sources: Any) -> GradientExplanation:
    """Explains, per source, why ``tape.gradient(target, sources)`` is None.

    Causes named: never watched (and where the value was created), a
    non-trainable variable, an integer dtype (and the cast that made the path
    integer), ``tf.stop_gradient`` or another non-differentiable op, a
    ``stop_recording`` region, a value that left through ``.numpy()`` and came
    back, a variable assigned from a watched value, a target computed after the
    ``with`` block, a tape already consumed. With source tracking on (see
    ``set_source_tracking``) each cause names the op and the user's file:line.

    >>> x = tf.constant(3.0)
    >>> with tf.GradientTape() as tape:
    ...     y = x * x
    >>> print(tf.debugging.explain_gradient(tape, y, x))  # doctest: +SKIP
    Gradient explanation: 1 of 1 source(s) get None.
    source (float32[]): gradient is None [not_watched]
      the tensor was never watched by this tape (created at ...)
    """
    from tapeflow.eager.backprop import GradientTape

    if not isinstance(tape, GradientTape):
        raise TypeError(f"explain_gradient() needs a tf.GradientTape, got {type(tape).__name__}.")
    notes = []
    tp, records, none_ids = tape._tape, None, None
    if tp is not None:
        records = tp.records
    else:
        snap = REGISTRY.snapshots.get(tape)
        if snap is not None:
            tp, records, none_ids = snap.tape, snap.records, snap.none_ids
            notes.append(f"this non-persistent tape was consumed by gradient() at {snap.site}; "
                         "explaining from the records it held then.")
    return _explain(tape, tp, records, target, sources, notes, none_ids)


def _label(s: Any, i: int, n: int) -> str:
    from tapeflow.framework.variables import Variable

    base = f"sources[{i}]" if n > 1 else "source"
    if isinstance(s, Variable):
        return f"{base} (Variable '{s.name}', {s.dtype.name}{list(s.shape.as_list())})"
    try:
        return f"{base} ({s.dtype.name}{list(s._shape_tuple())})"
    except AttributeError:
        return base


def _explain(gtape, tp, records, target, sources, notes, none_ids=None) -> GradientExplanation:
    from tapeflow.framework.tensor import Tensor
    from tapeflow.framework.variables import Variable

    reg = REGISTRY
    flat_sources = nest.flatten(sources)
    for s in flat_sources:
        if not isinstance(s, (Tensor, Variable)):
            raise TypeError(f"explain_gradient() sources must be tf.Tensor or tf.Variable objects (or nested "
                            f"structures of them), got {type(s).__name__}: {s!r}")
    flat_targets = [t for t in nest.flatten(target) if isinstance(t, (Tensor, Variable))]
    n = len(flat_sources)
    out = []
    for i, s in enumerate(flat_sources):
        label = _label(s, i, n)
        if tp is None:
            if gtape._used:
                # The records are gone; what the source itself says still holds.
                early = _source_only(s, i, label)
                out.append(early or SourceExplanation(
                    i, label, TAPE_CONSUMED,
                    "the tape was already consumed: a non-persistent GradientTape gives one set of gradients "
                    "(one gradient() or jacobian() call) and then frees its records, so there is nothing left "
                    "to explain (and a second gradient() call raises RuntimeError).",
                    remedy="create the tape with tf.GradientTape(persistent=True) to call gradient() (or "
                    "explain_gradient()) several times, compute all gradients in one call "
                    "(tape.gradient(loss, [a, b])), or turn on tf.debugging.set_source_tracking(True), which "
                    "keeps a consumed tape's records for explain_gradient().",
                ))
            else:
                out.append(SourceExplanation(
                    i, label, TAPE_EMPTY, "the tape never recorded anything (it was never entered with `with`).",
                    remedy="compute the target inside `with tf.GradientTape() as tape:`.",
                ))
            continue
        out.append(_explain_source(reg, gtape, tp, records, s, i, label, flat_targets, none_ids))
    return GradientExplanation(out, reg.tracking, notes)


def _source_only(s, i, label) -> SourceExplanation | None:
    """Causes visible from the source alone (used when the tape is gone)."""
    from tapeflow.framework.variables import Variable

    if not (s.dtype.is_floating or s.dtype.is_complex):
        return SourceExplanation(
            i, label, INTEGER_SOURCE,
            f"the source has dtype {s.dtype.name}: tapes only watch floating-point (and complex) values, so "
            "integer sources always get None.",
            remedy="make the source floating-point, e.g. tf.cast(x, tf.float32) before watching it.")
    if isinstance(s, Variable) and not s.trainable:
        return SourceExplanation(
            i, label, NON_TRAINABLE_VARIABLE,
            "the variable is not trainable (trainable=False), so the tape does not watch it when it is read.",
            remedy="create it with trainable=True, or call tape.watch(v) inside the block.")
    return None


def _site_of(reg, oid: int) -> str | None:
    site = reg.created.get(oid)
    if site is None:
        e = reg.producers.get(oid)
        if e is not None:
            site = e.site
    return site


def _explain_source(reg, gtape, tp, records, s, i, label, targets, none_ids=None) -> SourceExplanation:
    from tapeflow.framework.variables import Variable

    sid = s._id
    watched = tp.watched
    tracking = reg.tracking
    created = _site_of(reg, sid) if tracking else None
    where = f" (created at {created})" if created else ""
    target_ids = [t._id for t in targets]
    for t in targets:
        if t._id == sid:
            return SourceExplanation(i, label, CONNECTED, "the source is the target itself: its gradient is ones.")
    if targets and all(not (t.dtype.is_floating or t.dtype.is_complex) for t in targets):
        return SourceExplanation(
            i, label, TARGET_NOT_FLOAT,
            f"the target has dtype {targets[0].dtype.name}: integer and bool targets have no gradient.",
            remedy="differentiate a floating-point target (compute the loss in float32/float64).")
    is_var = isinstance(s, Variable)
    if not (s.dtype.is_floating or s.dtype.is_complex):
        return SourceExplanation(
            i, label, INTEGER_SOURCE,
            f"the source has dtype {s.dtype.name}: tapes only watch floating-point (and complex) values, so "
            f"integer sources always get None{where}.",
            site=created, remedy="make the source floating-point, e.g. tf.cast(x, tf.float32) before watching it, "
            "or create the variable with a float initial value (tf.Variable(1.0)).")
    if sid not in watched:
        if is_var and not s.trainable:
            return SourceExplanation(
                i, label, NON_TRAINABLE_VARIABLE,
                f"the variable is not trainable (trainable=False), so the tape does not watch it when it is "
                f"read{where}.",
                site=created, remedy="create it with trainable=True, or call tape.watch(v) inside the block.")
        if is_var and not tp.watch_accessed_variables:
            return SourceExplanation(
                i, label, WATCH_ACCESSED_OFF,
                f"the tape was created with watch_accessed_variables=False and this variable was never passed to "
                f"tape.watch(){where}.",
                site=created, remedy="call tape.watch(v) inside the block.")
        if not is_var:
            found = _path_explanation(reg, gtape, tp, s, i, label, target_ids) if tracking else None
            if found is not None and found.cause not in (UNCONNECTED, NOT_RECORDED):
                # e.g. the block had already exited when the tensor was used.
                return found
            return SourceExplanation(
                i, label, NOT_WATCHED,
                f"the tensor was never watched by this tape{where}: tapes record only ops on watched tensors and "
                "trainable variables.",
                site=created, remedy="call tape.watch(x) inside the `with` block before using x, or make it a "
                "tf.Variable.")
        # A trainable variable the tape never saw being read.
        if tracking:
            found = _path_explanation(reg, gtape, tp, s, i, label, target_ids)
            if found is not None and found.cause not in (UNCONNECTED, NOT_RECORDED):
                return found
        return SourceExplanation(
            i, label, VARIABLE_NOT_READ,
            f"the variable was never read while this tape was recording{where}, so the target cannot depend on "
            "it through the tape.",
            site=created, remedy="use the variable inside the `with tf.GradientTape()` block.")
    # Watched: do recorded ops connect it to the target?
    if _connected(records, sid, set(target_ids)):
        if tp is gtape._tape:  # live tape: its saved tensors allow a trial backward pass
            zero = _zero_analysis(tp, s, i, label, targets)
            if zero is not None:
                return zero
        if tp is gtape._tape:
            return SourceExplanation(
                i, label, CONNECTED,
                "recorded ops connect this source to the target, and a trial backward pass gives a non-zero "
                "gradient.")
        # A consumed tape: its saved tensors are gone, so no trial pass.
        reach = _reach(records, sid)
        details = [d for rec in records if any(iid in reach for iid in rec.input_ids)
                   for d in _inside_function(rec)]
        if none_ids is not None and sid in none_ids:
            return SourceExplanation(
                i, label, RULE_RETURNED_NONE,
                "recorded ops connect this source to the target, yet gradient() returned None: a gradient rule "
                "on the path returned None (a tf.custom_gradient or RegisterGradient rule, or a cut inside a "
                "tf.function).", details=details,
                remedy="explain_gradient() before gradient(), or with a persistent tape, names the op.")
        return SourceExplanation(
            i, label, CONNECTED,
            "recorded ops connect this source to the target, so the gradient is normally not None; if it was, a "
            "gradient rule on the path returned None (a tf.custom_gradient rule, or a cut inside a tf.function).",
            details=details,
            remedy="to check with a trial backward pass, call explain_gradient() before gradient(), or use "
                   "tf.GradientTape(persistent=True).")
    if tracking:
        found = _path_explanation(reg, gtape, tp, s, i, label, target_ids)
        if found is not None:
            return found
    tgt_recorded = any(tid in watched for tid in target_ids)
    details = []
    if not tgt_recorded:
        details.append("the target itself was not recorded on this tape: it was computed outside the block "
                       "(after it exited, or inside stop_recording()), or only from unwatched values.")
    details.append("possible causes: tf.stop_gradient or another non-differentiable op (argmax, round, "
                   "comparisons), a cast to an integer dtype, a stop_recording() region, a value that left through "
                   ".numpy() and came back, a Variable.assign, or math done after the `with` block.")
    return SourceExplanation(
        i, label, NOT_RECORDED,
        "the source is watched, but no recorded op connects it to the target.",
        details=details, remedy=TRACKING_HINT)


def _is_zero(g) -> bool:
    import numpy as np

    from tapeflow.framework.indexed_slices import IndexedSlices

    if isinstance(g, IndexedSlices):
        g = g.values
    return not np.any(np.asarray(g._value) != 0)


def _zero_analysis(tp, s, i, label, targets) -> SourceExplanation | None:
    """Runs the backward pass without freeing the tape; if the source's
    gradient is exactly zero, names the op (nearest the target) whose rule
    turned a non-zero upstream gradient into zeros along the path."""
    from tapeflow.debugging.numerics import _describe
    from tapeflow.eager import backprop
    from tapeflow.framework.context import state

    log = []
    inner = backprop.debug_op_gradients or backprop.op_gradients

    def recording_op_gradients(rec, out_grads):
        ins = inner(rec, out_grads)
        log.append((rec, list(out_grads), ins))
        return ins

    saved_hook, saved_wrapper = state.debug_hook, backprop.debug_op_gradients
    state.debug_hook = None  # the trial pass is not user code: no op log, no numerics check
    state.update_recording()
    backprop.debug_op_gradients = recording_op_gradients
    try:
        g = backprop._gradient(tp, list(targets), s, None, backprop.UnconnectedGradients.NONE, release=False)
    except Exception:  # noqa: BLE001 - an explanation must not fail where gradient() would
        return None
    finally:
        backprop.debug_op_gradients = saved_wrapper
        state.debug_hook = saved_hook
        state.update_recording()
    if g is not None and not _is_zero(g):
        return None
    reach = {s._id}
    for rec in tp.records:
        if any(iid in reach for iid in rec.input_ids):
            reach.update(rec.output_ids)
    for rec, outs, ins in log:  # backward order: nearest the target first
        if not any(o is not None and not _is_zero(o) for o in outs):
            continue
        on_path = [k for k, iid in enumerate(rec.input_ids) if iid in reach]
        if g is None and on_path and all(ins[k] is None for k in on_path):
            return SourceExplanation(
                i, label, RULE_RETURNED_NONE,
                f"the tape connects the source to the target, but the gradient rule of {rec.type} returned None "
                "for the input on the path (a tf.custom_gradient or RegisterGradient rule returning None, or a "
                "tf.function whose graph cuts the path inside).",
                op=rec.type, site=rec.source_info,
                remedy="make that rule return a gradient for this input, or find the cut inside the function.",
                details=_inside_function(rec))
        if g is not None and on_path and all(ins[k] is None or _is_zero(ins[k]) for k in on_path):
            details = []
            for k, x in enumerate(rec.inputs or ()):
                if x is not None:
                    details.append(f"input {k}: {_describe(x._value)}")
            return SourceExplanation(
                i, label, ZERO_GRADIENT,
                f"the source is connected, but its gradient is exactly zero: {rec.type} turned a non-zero upstream "
                "gradient into zeros (e.g. Relu with every input <= 0, a saturated clip, the losing side of "
                "Maximum/Minimum, or a multiplication by zero).",
                op=rec.type, site=rec.source_info, details=details,
                remedy="check the inputs of that op at this point (dead units, saturation, a zero factor).")
    if g is None:
        return None
    return SourceExplanation(
        i, label, ZERO_GRADIENT, "the source is connected, but its gradient is exactly zero.")


def _inside_function(rec) -> list:
    """For a tf.function call op: the ops inside its graph that cut gradients."""
    fn = rec.attrs.get("f") if isinstance(rec.attrs, dict) else None
    graph = getattr(fn, "graph", None)
    ops = getattr(graph, "operations", None)
    if not ops:
        return []
    skip = {"Placeholder", "ReadVariableOp", "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp",
            "PrintV2"}
    cuts = [f"{op.type} ('{op.name}')" for op in ops
            if op.type not in skip and not op_registry.is_differentiable(op.type)]
    if not cuts:
        return []
    return [f"inside the function '{graph.name}', these ops have no gradient: {', '.join(cuts)}"]


def _reach(records, sid: int) -> set:
    reach = {sid}
    for rec in records:
        for iid in rec.input_ids:
            if iid in reach:
                reach.update(rec.output_ids)
                break
    return reach


def _connected(records, sid: int, target_ids: set) -> bool:
    reach = {sid}
    for rec in records:
        for iid in rec.input_ids:
            if iid in reach:
                reach.update(rec.output_ids)
                break
    return bool(reach & target_ids)


def _find_path(reg, source_id: int, target_ids: list) -> list | None:
    """Shortest chain of op-log entries from ``source_id`` to a target, as
    ``(in_id, entry, out_id)`` steps in forward order."""
    producers, assigns = reg.producers, reg.assigns
    for tid in target_ids:
        parent: dict = {}
        seen = {tid}
        queue = collections.deque([tid])
        while queue and len(seen) < 500_000:
            nid = queue.popleft()
            if nid == source_id:
                steps = []
                node = source_id
                while node != tid:
                    e, nxt = parent[node]
                    steps.append((node, e, nxt))
                    node = nxt
                return steps
            preds = []
            e = producers.get(nid)
            if e is not None:
                preds.append(e)
            preds.extend(assigns.get(nid, ()))
            for e in preds:
                for iid in e.input_ids:
                    if iid not in seen:
                        seen.add(iid)
                        parent[iid] = (e, nid)
                        queue.append(iid)
    return None


def _path_explanation(reg, gtape, tp, s, i, label, target_ids) -> SourceExplanation | None:
    steps = _find_path(reg, s._id, target_ids)
    if steps is None:
        return SourceExplanation(
            i, label, UNCONNECTED,
            "the target does not depend on this source at all (no op, recorded or not, leads from it to the "
            "target).",
            remedy="check that the target is computed from this source.")
    path = [e for _, e, _ in steps]
    watched = tp.watched
    for in_id, e, out_id in steps:
        # Assignments and NumPy round trips are never recorded (a variable id
        # may be watched for its reads, but not through its assign).
        if e.kind in ("op", "read") and out_id in watched:
            continue
        return _classify(reg, tp, e, in_id, out_id, i, label, path)
    return None


def _fmt_entry(e: Entry) -> str:
    outs = ", ".join(_fmt_spec(sp) for sp in e.out_specs)
    return f"{e.type} -> {outs}" if outs else e.type


def _fmt_spec(spec) -> str:
    shape, dt = spec
    from tapeflow.framework import dtypes

    try:
        name = dtypes.from_numpy(dt).name
    except Exception:  # noqa: BLE001 - only for messages
        name = str(dt)
    if shape is None:
        return f"{name}[?]"
    return f"{name}[{','.join('?' if d is None else str(d) for d in shape)}]"


def _classify(reg, tp, e: Entry, in_id, out_id, i, label, path) -> SourceExplanation:
    mk = dict(index=i, label=label, op=e.type, site=e.site, path=path, cut=e)
    if e.kind == "numpy":
        return SourceExplanation(
            cause=LEFT_VIA_NUMPY,
            summary=f"the value left the tape through .numpy() (at {e.extra}) and came back as a new constant "
                    f"(at {e.site}); the tape cannot follow NumPy math.",
            remedy="keep the computation in tapeflow ops (tf.math.*, operators on tensors) instead of NumPy.",
            **mk)
    if e.kind == "assign":
        return SourceExplanation(
            cause=VARIABLE_ASSIGN,
            summary=f"a variable was assigned from a watched value ({e.type} at {e.site}); assignment is not "
                    "differentiable, so what is read back from the variable has no gradient to the source.",
            remedy="use the value directly instead of storing it in a variable and reading it back.",
            **mk)
    tid = id(tp)
    if tid not in e.tapes:
        for start, end, psite in reg.pauses.get(tid, ()):
            if start < e.seq and (end is None or e.seq < end):
                return SourceExplanation(
                    cause=STOP_RECORDING,
                    summary=f"{e.type} ran inside `with tape.stop_recording():` (entered at {psite}), so the tape "
                            "did not record it.",
                    remedy="move the computation out of the stop_recording() block.",
                    **mk)
        exits = [x for x in reg.exits.get(tid, ()) if x[0] < e.seq]
        if exits:
            return SourceExplanation(
                cause=AFTER_EXIT,
                summary=f"{e.type} ran after the `with tf.GradientTape()` block (at {exits[-1][1]}) had exited, "
                        "so the tape did not record it.",
                remedy="compute the target inside the `with` block (indent it).",
                **mk)
        if e.kind == "op" and op_registry.is_differentiable(e.type):
            return SourceExplanation(
                cause=BEFORE_ENTER,
                summary=f"{e.type} ran while this tape was not recording (before the block was entered, or after "
                        "gradient() consumed it).",
                remedy="compute the target inside the `with tf.GradientTape()` block.",
                **mk)
    if e.kind == "read":
        var = e.extra
        if var is not None and not var.trainable:
            return SourceExplanation(
                cause=NON_TRAINABLE_VARIABLE,
                summary=f"the path goes through the non-trainable variable '{var.name}', which the tape does not "
                        "watch.", remedy="make it trainable or tape.watch() it.", **mk)
    if e.kind == "op":
        if e.type == "StopGradient":
            return SourceExplanation(
                cause=STOP_GRADIENT,
                summary="tf.stop_gradient cut the path: its output has no gradient by design.",
                remedy="remove tf.stop_gradient from the path if the gradient should flow.", **mk)
        k = e.output_ids.index(out_id) if out_id in e.output_ids else 0
        out_dtype = e.out_specs[k][1] if e.out_specs else None
        in_k = e.input_ids.index(in_id) if in_id in e.input_ids else 0
        in_dtype = e.in_specs[in_k][1] if e.in_specs else None
        int_out = out_dtype is not None and out_dtype.kind not in "fc"
        if int_out and (e.type == "Cast" or op_registry.is_differentiable(e.type)):
            return SourceExplanation(
                cause=INTEGER_CAST,
                summary=f"{_fmt_entry(e)} made the path {_fmt_spec(e.out_specs[k]).split('[')[0]} (from "
                        f"{_fmt_spec(e.in_specs[in_k]) if in_dtype is not None else '?'}); integer values have no "
                        "gradient.",
                remedy="keep the path floating-point: a cast to an integer dtype has no gradient, and casting "
                       "back to float does not restore it.",
                **mk)
        if not op_registry.is_differentiable(e.type):
            extra = (f" (its output is {_fmt_spec(e.out_specs[k]).split('[')[0]})" if int_out else "")
            return SourceExplanation(
                cause=NON_DIFFERENTIABLE_OP,
                summary=f"{e.type} is not differentiable{extra}: it is registered with NotDifferentiable or has no "
                        "gradient rule, so the tape does not record it and the path is cut.",
                remedy=f"use a differentiable alternative (e.g. tf.nn.softmax instead of tf.argmax), or register "
                       f"a rule with @tf.RegisterGradient('{e.type}').",
                **mk)
    return SourceExplanation(
        cause=NOT_RECORDED, summary=f"{_fmt_entry(e)} was not recorded on this tape.", **mk)


def enforce_strict(gtape, snap, target, sources, result, unconnected) -> None:
    """Strict mode: raise instead of returning None for a requested source."""
    from tapeflow.eager.backprop import UnconnectedGradients

    try:
        if UnconnectedGradients(unconnected) is UnconnectedGradients.ZERO:
            return
    except ValueError:
        return
    flat = nest.flatten(result) if not isinstance(result, type(None)) else [None]
    if not any(g is None for g in flat):
        return
    if snap is None:
        return
    expl = _explain(gtape, snap.tape, snap.records, target, sources, [], snap.none_ids)
    raise NoneGradientError(
        "tf.debugging strict mode: gradient() would return None for a requested source.\n" + str(expl)
        + "\n(Strict mode is on: tf.debugging.disable_strict_gradients() restores TF's None.)",
        expl)


# plugged into the debug registry (_instrument)
_instrument.EXT.snapshot = Snapshot
_instrument.EXT.enforce_strict = enforce_strict
