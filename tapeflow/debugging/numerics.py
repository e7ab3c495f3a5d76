"""``tf.debugging.enable_check_numerics``: stop at the op that *creates* a NaN/Inf.

Forward: every eager op's float outputs are checked; the first op whose
output is non-finite while its inputs are finite raises, naming the op, the
user's line and its input statistics. Backward: the gradient rules run inside
``checked_op_gradients`` (installed as the core's ``debug_op_gradients``), so
an op created by a rule names the *forward* op whose gradient produced it and
that op's line, and the ``tf.where`` trap (a NaN/Inf gradient from the branch
not taken) is recognised and the double-where fix is shown.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.debugging import _instrument
from tapeflow.debugging._instrument import REGISTRY, user_site
from tapeflow.framework.errors import InvalidArgumentError

# Ops whose output leaves the finite range for some finite inputs; a hint
# about the tf.where trap is useful when one of them creates a NaN/Inf.
_DOMAIN_OPS = frozenset({"Log", "Log1p", "Sqrt", "Rsqrt", "RealDiv", "Div", "Reciprocal", "Pow", "Xlogy", "Acos",
                         "Asin", "Atanh", "Acosh", "Lgamma", "Digamma", "Tan", "Exp", "Expm1", "SqrtGrad",
                         "RsqrtGrad", "FloorDiv", "DivNoNan"})

_WHERE_FIX = (
    "tf.where evaluates both branches, and the gradient of the branch not taken is 0 * (its NaN/Inf "
    "derivative) = NaN. Fix it with the double-where pattern: make the unsafe op's input safe first, e.g.\n"
    "    safe_x = tf.where(x > 0, x, tf.ones_like(x))\n"
    "    y = tf.where(x > 0, tf.sqrt(safe_x), tf.zeros_like(x))"
)


def _describe(arr: Any) -> str:
    a = np.asarray(arr)
    dt = a.dtype
    head = f"{dt.name}{list(a.shape)}"
    if dt.kind not in "fc" or a.size == 0:
        return head
    if dt.kind == "c":
        a = np.abs(a)
    finite = a[np.isfinite(a)]
    n_nan = int(np.isnan(a).sum())
    n_pinf = int(np.isposinf(a).sum())
    n_ninf = int(np.isneginf(a).sum())
    stats = "no finite values"
    if finite.size:
        stats = f"min={finite.min():.6g} max={finite.max():.6g} mean={finite.mean():.6g}"
    zeros = int((a == 0).sum())
    extra = f" #zeros={zeros}" if zeros else ""
    bad = ""
    if n_nan or n_pinf or n_ninf:
        bad = f" #NaN={n_nan} #+Inf={n_pinf} #-Inf={n_ninf}"
    return f"{head} {stats}{extra}{bad}"


def _kinds(a: np.ndarray) -> str:
    # TF's wording: "Inf", "-Inf", "NaN", joined with "and".
    if a.dtype.kind == "c":
        a = np.abs(a)
    pos, neg, nan = bool(np.isposinf(a).any()), bool(np.isneginf(a).any()), bool(np.isnan(a).any())
    parts = (["Inf"] if pos else []) + (["-Inf"] if neg else []) + (["NaN"] if nan else [])
    return " and ".join(parts)


def _non_finite(v) -> bool:
    kind = v.dtype.kind
    if kind not in "fc":
        return False
    return not np.isfinite(v).all()


def check_op(reg, op, inputs, attrs, outputs) -> None:
    """The forward check, called by the debug hook for every eager op."""
    bad = None
    for k, o in enumerate(outputs):
        if _non_finite(o._value):
            bad = k
            break
    if bad is None:
        return
    out = outputs[bad]
    reported = reg.reported
    bad_inputs = [j for j, x in enumerate(inputs) if _non_finite(x._value)]
    if bad_inputs and all(inputs[j]._id in reported for j in bad_inputs):
        # Passed on from a value already reported: not the creator.
        reported.add(out._id)
        return
    reported.add(out._id)
    if len(reported) > 100_000:
        reported.clear()
    if not bad_inputs and attrs and hasattr(attrs.get("f"), "graph"):
        # A tf.function call: find the op inside its graph that created it.
        inner = _locate_in_function(reg, attrs["f"], inputs)
        if inner is not None:
            raise inner
    raise InvalidArgumentError(None, None, _message(reg, op, inputs, attrs, outputs, bad, bad_inputs))


def _locate_in_function(reg, f, inputs) -> InvalidArgumentError | None:
    """Replays the function's graph eagerly (tapes paused, no side effects)
    so the check stops at the inner op; returns that error, or None."""
    from tapeflow.framework.context import state
    from tapeflow.graph.function import replay

    phs = list(getattr(f, "inputs", ()))
    mapping = {ph._id: x for ph, x in zip(phs, inputs)}
    stack = reg.local.fn_stack
    saved = state.tapes, state.accumulators
    state.tapes, state.accumulators = [], []
    state.update_recording()
    stack.append(f.graph.name)
    try:
        replay(f.graph, mapping, side_effects=False)
    except InvalidArgumentError as e:
        return e
    except Exception:  # noqa: BLE001 - a failed replay just means: report the call op itself
        return None
    finally:
        stack.pop()
        state.tapes, state.accumulators = saved
        state.update_recording()
    return None


def _message(reg, op, inputs, attrs, outputs, k, bad_inputs) -> str:
    out = np.asarray(outputs[k]._value)
    site = user_site(3)
    bw = reg.local.bw_stack
    lines = ["", ""]
    if bw:
        rec, out_grads = bw[-1]
        fwd_site = rec.source_info or "unknown (turn on tf.debugging.set_source_tracking(True) to record it)"
        lines.append(f"!!! Detected Infinity or NaN in output {k} of op \"{op.name}\" run by the GRADIENT of "
                     f"forward op \"{rec.type}\" (backward pass) !!!")
        lines.append(f"  forward op \"{rec.type}\" was created at: {fwd_site}")
        lines.append(f"  backward pass started at: {site}")
    else:
        lines.append(f"!!! Detected Infinity or NaN in output {k} of eagerly-executing op \"{op.name}\" "
                     f"(# of outputs: {len(outputs)}) !!!")
        lines.append(f"  created at: {site}")
    if reg.local.fn_stack:
        lines.append("  inside tf.function " + " -> ".join(f"'{n}'" for n in reg.local.fn_stack)
                     + " (found by replaying its graph op by op)")
    lines.append(f"  output {k}: {_describe(out)}")
    if attrs:
        shown = {a: v for a, v in attrs.items() if not isinstance(v, np.ndarray) or v.size < 10}
        if shown:
            lines.append("  attrs: " + ", ".join(f"{a}={v!r}" for a, v in sorted(shown.items())))
    if bad_inputs:
        lines.append(f"  input(s) {bad_inputs} already held NaN/Inf that no checked op created (a constant, a "
                     "variable, NumPy data, or a value computed before enable_check_numerics()).")
    else:
        lines.append("  all inputs are finite, so this op created the non-finite value:")
    for j, x in enumerate(inputs):
        lines.append(f"    input {j}: {_describe(x._value)}")
    if bw:
        rec, out_grads = bw[-1]
        for j, g in enumerate(out_grads):
            if g is not None:
                lines.append(f"    upstream gradient {j} of \"{rec.type}\": {_describe(g._value)}")
        trap = _where_trap(reg, rec, out_grads, out)
        if trap:
            lines.append(f"  This is the tf.where trap: the output of \"{rec.type}\" feeds the {trap} branch of a "
                         "tf.where, and the upstream gradient is 0 exactly where this NaN/Inf appears.")
            lines.append("  " + _WHERE_FIX.replace("\n", "\n  "))
    elif op.name in _DOMAIN_OPS:
        lines.append(f"  hint: if a tf.where later discards these values, the gradient of \"{op.name}\" will still "
                     "be NaN there (the tf.where trap): use the double-where pattern, e.g. "
                     "tf.where(ok, tf.sqrt(tf.where(ok, x, 1.0)), 0.0).")
    lines.append("")
    return "\n".join(lines) + f" : Tensor had {_kinds(out)} values [Op:CheckNumericsV2]"


def _where_trap(reg, rec, out_grads, created: np.ndarray) -> str | None:
    branches = reg.select_branches
    for k, oid in enumerate(rec.output_ids):
        hit = branches.get(oid)
        if hit is None:
            continue
        g = out_grads[k] if k < len(out_grads) else None
        if g is None:
            return hit[0]
        gv = np.asarray(g._value)
        if gv.shape == created.shape:
            mask = ~np.isfinite(created)
            if (gv[mask] == 0).all():
                return hit[0]
        elif (gv == 0).any():
            return hit[0]
    return None


def checked_op_gradients(rec, out_grads: list) -> list:
    """``backprop.op_gradients`` run with the forward op on a stack, so the
    forward check can say whose gradient created a NaN/Inf."""
    from tapeflow.eager.backprop import op_gradients

    stack = REGISTRY.local.bw_stack
    stack.append((rec, out_grads))
    try:
        grads = op_gradients(rec, out_grads)
    finally:
        stack.pop()
    return grads


# plugged into the debug registry (_instrument)
_instrument.EXT.check_op = check_op
_instrument.EXT.checked_op_gradients = checked_op_gradients
