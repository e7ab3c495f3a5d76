"""The training doctor's checks, one function per kind of finding (see ``doctor.py``)."""

from __future__ import annotations

import re

import numpy as np

from tapeflow.framework import nest
from tapeflow.debugging._doctor_passes import (
    _Numerics, _dense, _forward, _loss, _norm, _repeat_batch, _run_pass, _value, _var_name,
)
from tapeflow.debugging._doctor_report import (
    EXPLODING_GRADIENT, EXPLODING_RATIO, FD_RTOL, FOREIGN_VARIABLE, Finding, GRADIENT_MISMATCH, LOSS_NOT_CONNECTED,
    NONE_GRADIENT, NONFINITE_GRADIENT, NOT_IN_VAR_LIST, SUM_RATIO, SUM_REDUCTION, VANISHING_GRADIENT, VANISHING_RATIO,
    WARNING, ZERO_GRADIENT, ZERO_LEARNING_RATE,
)

def _compute_eps(reg, start: int) -> float:
    """The machine epsilon of the least precise floating dtype the pass computed in (from the op log): mixed
    precision computes in float16 even when the variables and the loss are float32."""
    eps = 0.0
    for e in reversed(reg.producers.values()):
        if e.seq <= start:
            break
        for spec in e.out_specs:
            dt = spec[1]
            if getattr(dt, "kind", "") == "f":
                eps = max(eps, float(np.finfo(dt).eps))
    return eps


def _is_layer_variable(v) -> bool:
    """A variable created by a Keras layer (has a layer path): a model weight,
    even when the model does not track the layer."""
    path = getattr(v, "path", None)
    return isinstance(path, str) and "/" in path


def _site_text(cause) -> str:
    if cause.site and cause.site in cause.summary:
        return ""
    if cause.op and cause.site:
        return f" (op {cause.op} at {cause.site})"
    if cause.op:
        return f" (op {cause.op})"
    return ""


def _loss_not_connected(ex, p) -> Finding:
    if not p.preds:
        return Finding(
            LOSS_NOT_CONNECTED,
            [],
            "the model's output has no floating-point tensor (it is integer or bool, e.g. the result of tf.argmax "
            "or a cast), so the loss cannot depend on it through a gradient.",
            "return the model's floating-point output (logits or probabilities) and do the argmax only for "
            "metrics or predictions.",
        )
    expl = ex.explain_gradient(p.tape, p.loss, p.preds[0])[0]
    cause = expl.summary if expl.cause not in (ex.CONNECTED,) else "the loss does not use it."
    return Finding(
        LOSS_NOT_CONNECTED,
        [],
        "the loss does not depend on the model's output y_pred, so no variable of the model gets a gradient. "
        f"Cause [{expl.cause}]: {cause}{_site_text(expl)}",
        expl.remedy
        or "compute the loss from y_pred with differentiable tapeflow ops (a tf.keras.losses loss on "
        "the logits/probabilities), not from argmax/round/NumPy values of it.",
        op=expl.op,
        details=list(expl.details),
    )


def _none_gradient(ex, p, none_vars) -> list:
    expl = ex.explain_gradient(p.tape, p.loss, none_vars)
    groups: dict = {}
    for v, s in zip(none_vars, expl.sources):
        key = (s.cause, s.op, s.site, s.summary.split(" (created at")[0])
        groups.setdefault(key, (s, []))[1].append(_var_name(v))
    out = []
    for (cause, _op, _site, _), (s, names) in groups.items():
        hint = "" if ex.REGISTRY.tracking else " " + ex.TRACKING_HINT
        msg = (
            f"tape.gradient returns None for {len(names)} variable(s) in var_list, so the optimizer will not "
            f"update them (Keras warns 'Gradients do not exist for variables'). Cause [{cause}]: "
            f"{s.summary}{_site_text(s)}"
        )
        out.append(
            Finding(
                NONE_GRADIENT,
                names,
                msg,
                (s.remedy or "make the loss depend on these variables through tapeflow ops.") + hint,
                op=s.op,
                details=[d for d in s.details if d],
            )
        )
    return out


def _not_in_var_list(left_out, model_ids) -> list:
    out = []
    in_model = [v for v in left_out if model_ids is not None and id(v) in model_ids]
    untracked = [v for v in left_out if model_ids is None or id(v) not in model_ids]
    if in_model:
        out.append(
            Finding(
                NOT_IN_VAR_LIST,
                [_var_name(v) for v in in_model],
                f"the loss depends on {len(in_model)} trainable variable(s) of the model that var_list leaves out: the "
                "optimizer will never update them (the layer is not registered with the optimizer).",
                "pass model.trainable_variables to tape.gradient and optimizer.apply_gradients (build the list after "
                "all layers are created, or recompute it each step).",
            )
        )
    if untracked:
        out.append(
            Finding(
                NOT_IN_VAR_LIST,
                [_var_name(v) for v in untracked],
                f"the loss depends on {len(untracked)} trainable variable(s) that are not in var_list and that the "
                "model "
                "does not track (they are missing from model.trainable_variables): a layer kept in a plain Python "
                "dict, a global, or created inside call() is invisible to the model, so it is never trained or saved.",
                "create the layer in __init__ and assign it to an attribute of the model (self.head = Dense(...)), or "
                "to "
                "a list/dict attribute of the model, so model.trainable_variables includes it; create layers once, "
                "not inside call().",
            )
        )
    return out


def _foreign(foreign, x, y, dense) -> list:
    batch = [
        np.asarray(t)
        for t in nest.flatten(x) + nest.flatten(y)
        if t is not None and not callable(getattr(t, "assign", None))
    ]
    batch_vars = {id(t) for t in nest.flatten(x) + nest.flatten(y) if callable(getattr(t, "assign", None))}
    data_like, other = [], []
    for v in foreign:
        val = _value(v)
        is_data = id(v) in batch_vars or any(b.shape == val.shape and np.array_equal(b, val) for b in batch)
        (data_like if is_data else other).append(v)
    out = []
    if data_like:
        out.append(
            Finding(
                FOREIGN_VARIABLE,
                [_var_name(v) for v in data_like],
                "var_list holds variable(s) that hold the training batch (x or y wrapped in a tf.Variable), not "
                "weights of the model: the optimizer would change the input data (train the pixels) instead of only "
                "the model.",
                "pass the batch as a tensor (tf.constant or a NumPy array), not a tf.Variable, and give the optimizer "
                "only model.trainable_variables.",
            )
        )
    if other:
        out.append(
            Finding(
                FOREIGN_VARIABLE,
                [_var_name(v) for v in other],
                "var_list holds variable(s) that are not weights of the model (not in model.variables): the optimizer "
                "will update them too.",
                "if they are meant to be trained, make them part of the model (an attribute of a tf.Module / Keras "
                "model, or self.add_weight); otherwise remove them from var_list.",
                severity=WARNING,
            )
        )
    return out


def _zero_gradient(ex, p, zero_vars) -> list:
    expl = ex.explain_gradient(p.tape, p.loss, zero_vars)
    groups: dict = {}
    for v, s in zip(zero_vars, expl.sources):
        groups.setdefault((s.op, s.site), (s, []))[1].append(_var_name(v))
    out = []
    for (op, _site), (s, names) in groups.items():
        where = f"{op}{' at ' + s.site if s.site else ''}" if op else ""
        msg = (
            f"the gradient of {len(names)} variable(s) is exactly zero everywhere, so they do not learn"
            + (f": {where} turned a non-zero upstream gradient into zeros" if op else "")
            + " (e.g. a dead ReLU layer whose inputs are all <= 0, a saturated clip, a multiplication by 0)."
        )
        out.append(
            Finding(
                ZERO_GRADIENT,
                names,
                msg,
                "check the inputs of that op: standardize the inputs, use a smaller learning rate or "
                "bias initial value so ReLU units are not dead (or use LeakyReLU / ELU), and look for a "
                "factor that is 0.",
                op=op,
                details=[d for d in s.details if d][:4],
            )
        )
    return out


_LOG_FIX = (
    "the log of a value that reached 0: compute the loss from logits with a Keras loss "
    "(e.g. SparseCategoricalCrossentropy(from_logits=True)), or clip first: tf.math.log(tf.clip_by_value(p, "
    "1e-7, 1.0))."
)
_SQRT_FIX = (
    "the derivative of sqrt is infinite at 0: add an epsilon, tf.sqrt(x + 1e-12), or use the squared "
    "distance; for a norm use tf.norm only where it is non-zero (the double-where pattern)."
)
_DIV_FIX = "a division by zero: add an epsilon to the denominator, or use tf.math.divide_no_nan."
_NONFINITE_FIX = {
    "Log": _LOG_FIX,
    "Log1p": _LOG_FIX,
    "Xlogy": _LOG_FIX,
    "Sqrt": _SQRT_FIX,
    "SqrtGrad": _SQRT_FIX,
    "Rsqrt": _SQRT_FIX,
    "RsqrtGrad": _SQRT_FIX,
    "Pow": _SQRT_FIX,
    "RealDiv": _DIV_FIX,
    "Div": _DIV_FIX,
    "Reciprocal": _DIV_FIX,
}
_DOMAIN_FIX_OPS = frozenset(_NONFINITE_FIX)
_OVERFLOW_FIX = (
    "an overflow: the values grew past the dtype's range. Normalize the inputs and targets, lower the "
    "learning rate or clip gradients (clipnorm=1.0); in float16 keep the loss in float32 "
    "(mixed precision with loss scaling)."
)
_GENERIC_NONFINITE_FIX = (
    "keep the values in the op's domain: clip probabilities before log (or use tf.keras.losses.*(from_logits=True) "
    "on logits), add an epsilon inside sqrt/divisions, use the double-where pattern for tf.where, normalize the "
    "inputs and lower the learning rate if the weights diverged; check the batch with "
    "tf.debugging.assert_all_finite."
)

_OP_RE = re.compile(r'(?:forward op|eagerly-executing op|of op) "([^"]+)"')


def _nonfinite(call, loss_fn, x, y, var_list, guard, rng, loss_val, bad_grads, source_tracking) -> Finding:
    from tapeflow.framework.errors import InvalidArgumentError

    names = [_var_name(v) for v in (bad_grads or [])]
    what = (
        f"the loss is {loss_val}"
        if not np.isfinite(loss_val)
        else f"the gradient of {len(names)} variable(s) holds NaN/Inf (the loss itself, {loss_val:.6g}, is finite)"
    )
    guard.restore()
    rng.restore()
    located, op, details = None, None, []
    with source_tracking(True), _Numerics(True):
        try:
            _run_pass(call, loss_fn, x, y, var_list, training=True, persistent=False)
        except InvalidArgumentError as e:
            located = str(getattr(e, "message", None) or e)
    guard.restore()
    if located:
        ops = _OP_RE.findall(located)
        op = ops[-1] if ops else None
        lines = [ln.strip() for ln in located.splitlines() if ln.strip()]
        details = [ln for ln in lines if not ln.startswith("!!!")][:8]
        head = next((ln for ln in lines if ln.startswith("!!!")), "")
        msg = f"{what}. {head.strip('! ')}." if head else f"{what}."
    else:
        msg = (
            f"{what}; replaying the step with tf.debugging.enable_check_numerics() found no op that creates it "
            "(the variables or the batch may already hold NaN/Inf, or a random op gave a different value)."
        )
    fix = _NONFINITE_FIX.get(
        op or "",
        _OVERFLOW_FIX
        if located and "all inputs are finite" in located and op not in _DOMAIN_FIX_OPS
        else _GENERIC_NONFINITE_FIX,
    )
    weights = [float(np.max(np.abs(val))) for v, val in guard.saved.values() if val.dtype.kind == "f" and val.size]
    if weights and (not np.isfinite(max(weights)) or max(weights) > 1e6):
        details.append(
            f"the weights themselves are huge or non-finite (largest |weight| {max(weights):.3g}): "
            "training had already diverged before this step."
        )
    return Finding(NONFINITE_GRADIENT, names, msg, fix, op=op, details=details)


def _zero_lr(optimizer, how) -> Finding:
    raw = getattr(optimizer, "_learning_rate", None)
    if callable(raw):  # a LearningRateSchedule (or a callable learning rate)
        fix = (
            "the schedule has decayed to 0: use a schedule that ends above 0 (e.g. CosineDecay(alpha=0.01), "
            "PolynomialDecay(end_learning_rate=1e-5)) or longer decay_steps than the training run, and check "
            "optimizer.iterations when resuming."
        )
    else:
        fix = (
            "set a positive learning rate, e.g. tf.keras.optimizers.Adam(learning_rate=1e-3); check the "
            "arithmetic that computed it (integer division, a decay that underflowed)."
        )
    return Finding(
        ZERO_LEARNING_RATE,
        [],
        f"the learning rate is 0 ({how}): apply_gradients will leave every weight unchanged, so the "
        "model cannot learn whatever the gradients are.",
        fix,
    )


def _norms(graded, dense, stats, zero_ids) -> list:
    out = []
    g2 = w2 = 0.0
    per = []
    for v in graded:
        g = dense[id(v)]
        gn, wn = _norm(g), _norm(_value(v))
        g2 += gn * gn
        w2 += wn * wn
        per.append((v, gn, wn))
    G, W = np.sqrt(g2), np.sqrt(w2)
    stats["gradient_norm"], stats["weight_norm"] = float(G), float(W)
    if W > 0 and G > EXPLODING_RATIO * W:
        worst = sorted(per, key=lambda t: -t[1])[:3]
        out.append(
            Finding(
                EXPLODING_GRADIENT,
                [_var_name(v) for v, _, _ in worst],
                f"the gradient norm ({G:.3g}) is more than {EXPLODING_RATIO:g} times the weight norm ({W:.3g}): one "
                "step "
                "would throw the weights far from where they are, and the loss will jump or become NaN.",
                "normalize the inputs and the targets (e.g. scale pixels to [0, 1], standardize regression targets), "
                "lower the learning rate, or clip gradients (optimizer clipnorm=1.0 / global_clipnorm).",
                details=[f"{_var_name(v)}: gradient norm {gn:.3g}, weight norm {wn:.3g}" for v, gn, wn in worst],
            )
        )
    vanishing = [(v, gn, wn) for v, gn, wn in per if id(v) not in zero_ids and wn > 0 and gn < VANISHING_RATIO * wn]
    if vanishing:
        out.append(
            Finding(
                VANISHING_GRADIENT,
                [_var_name(v) for v, _, _ in vanishing],
                f"the gradient norm of {len(vanishing)} variable(s) is below {VANISHING_RATIO:g} times their weight "
                "norm: a step changes them by almost nothing, so they practically do not learn (typical of deep "
                "stacks of sigmoid/tanh layers, or an output scaled down by a tiny factor).",
                "use ReLU-family activations with He initialization, add BatchNormalization or residual connections, "
                "and remove tiny scale factors from the path.",
                severity=WARNING,
                details=[
                    f"{_var_name(v)}: gradient norm {gn:.3g}, weight norm {wn:.3g}" for v, gn, wn in vanishing[:4]
                ],
            )
        )
    return out


def _grad_norm(call, loss_fn, x, y, graded, training) -> float:
    p = _run_pass(call, loss_fn, x, y, graded, training=training, persistent=False)
    total = 0.0
    for v, g in zip(p.sources, p.grads):
        d = _dense(g, v)
        if d is not None and id(v) in {id(w) for w in graded}:
            total += _norm(d) ** 2
    return float(np.sqrt(total))


def _sum_reduction(call, loss_fn, x, y, graded, guard, rng, notes, stats) -> Finding | None:
    # Inference mode: deterministic (no Dropout masks), BatchNormalization uses its moving statistics.
    with _Numerics(False):
        try:
            g1 = _grad_norm(call, loss_fn, x, y, graded, training=False)
            guard.restore()
            rng.restore()
            x2 = nest.map_structure(_repeat_batch, x)
            y2 = nest.map_structure(_repeat_batch, y) if y is not None else None
            g2 = _grad_norm(call, loss_fn, x2, y2, graded, training=False)
        except Exception as e:  # noqa: BLE001 - a model with a fixed batch size cannot take a doubled batch
            notes.append(
                f"sum_reduction was not checked: the model or loss could not run on the batch repeated "
                f"twice ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})."
            )
            return None
        finally:
            guard.restore()
            rng.restore()
    if g1 == 0 or not np.isfinite(g1) or not np.isfinite(g2):
        return None
    ratio = g2 / g1
    stats["batch_doubling_gradient_ratio"] = ratio
    if ratio <= SUM_RATIO:
        return None
    return Finding(
        SUM_REDUCTION,
        [],
        f"the loss grows with the batch size: on the same batch repeated twice the gradient norm is {ratio:.3g} "
        f"times larger (a mean gives 1, a sum 2; threshold {SUM_RATIO:g}). The loss is a sum where a mean was meant, "
        "so the effective learning rate scales with the batch size.",
        "average over the batch: tf.reduce_mean instead of tf.reduce_sum, or the default reduction of "
        "tf.keras.losses (reduction='sum_over_batch_size') instead of reduction='sum'. (If you divide by a fixed "
        "global batch size on purpose, as tf.nn.compute_average_loss does, this is expected.)",
        severity=WARNING,
    )


def _finite_difference(call, loss_fn, x, y, graded, dense, loss_val, guard, rng, notes, stats, n_entries, seed) -> list:
    rs = np.random.default_rng(seed)
    cands = [v for v in graded if v.dtype.name in ("float32", "float64") and v.shape.num_elements()]
    skipped = [v for v in graded if v.dtype.name not in ("float32", "float64")]
    if skipped:
        notes.append(
            f"gradient_mismatch was not checked for {len(skipped)} variable(s) of dtype "
            f"{skipped[0].dtype.name}: a finite difference is too imprecise in that precision."
        )
    compute_eps = stats.get("compute_eps", 0.0)
    if cands and compute_eps > 1e-6:
        notes.append(
            "gradient_mismatch was not checked: the forward pass computes in a half-precision dtype (float16 or "
            "bfloat16, e.g. mixed precision), where a finite difference is too imprecise."
        )
        return []
    if not cands:
        return []
    picks: list = []  # (variable, flat index)
    per_var = max(1, min(3, n_entries // max(1, len(cands))))
    order = list(rs.permutation(len(cands)))
    for k in order:
        v = cands[k]
        g = dense[id(v)].reshape(-1)
        sample = rs.choice(g.size, size=min(64, g.size), replace=False)
        best = int(sample[np.argmax(np.abs(g[sample]))])
        chosen = [best] + [int(i) for i in sample if int(i) != best][: per_var - 1]
        for idx in chosen:
            if len(picks) < n_entries:
                picks.append((v, idx))
    mismatches: list = []
    compared = 0
    with _Numerics(False):
        try:
            l0 = _loss_at(call, loss_fn, x, y, guard, rng)
            for v, idx in picks:
                r = _check_entry(
                    call, loss_fn, x, y, v, idx, dense[id(v)].reshape(-1)[idx], l0, guard, rng, compute_eps
                )
                if r is not False:
                    compared += 1
                if r:
                    mismatches.append(r)
        finally:
            guard.restore()
            rng.restore()
    stats["finite_difference_entries"] = f"{compared} of {len(picks)} compared"
    if not mismatches:
        return []
    by_var: dict = {}
    for v, idx, ad, fd in mismatches:
        by_var.setdefault(id(v), (v, []))[1].append((idx, ad, fd))
    details = []
    for v, entries in by_var.values():
        for idx, ad, fd in entries:
            pos = np.unravel_index(idx, tuple(v.shape.as_list()))
            details.append(f"{_var_name(v)}{list(int(i) for i in pos)}: autodiff {ad:.6g}, central difference {fd:.6g}")
    return [
        Finding(
            GRADIENT_MISMATCH,
            [_var_name(v) for v, _ in by_var.values()],
            f"autodiff disagrees with a central finite difference of the loss on {len(mismatches)} of {len(picks)} "
            f"checked weight entries (relative tolerance {FD_RTOL:g}): the gradient is wrong. Either a gradient "
            "rule on the path is wrong (a tf.custom_gradient or tf.RegisterGradient whose grad function forgets "
            "the upstream gradient or a term of the derivative), or part of the forward computation is invisible "
            "to the tape: a value computed in NumPy from a tensor (e.g. x / np.linalg.norm(x.numpy())) or through "
            "tf.stop_gradient is treated as a constant, although the loss really depends on it.",
            "compute every part of the forward pass with tapeflow ops (tf.norm, tf.math.l2_normalize, ...), and "
            "check each custom gradient with tf.test.compute_gradient on small inputs: grad(upstream) must return "
            "upstream * d(output)/d(input) for every input.",
            details=details,
        )
    ]


def _loss_at(call, loss_fn, x, y, guard, rng) -> float:
    guard.restore()
    rng.restore()
    return float(
        np.asarray(_loss(loss_fn, y, _forward(call, loss_fn, x, y, True)).numpy()),
    )


def _check_entry(call, loss_fn, x, y, v, idx, ad, l0, guard, rng, compute_eps=0.0):
    """(v, idx, autodiff, fd) when they disagree, None when they agree, False
    when the difference quotients are unreliable there (no verdict).

    The loss is evaluated at w +- h and w +- h/2. Only where the function is
    smooth at that scale (the forward and backward one-sided quotients agree at
    both steps: no ReLU kink or BatchNormalization jump nearby, round-off small)
    is autodiff compared with the central difference."""
    base = guard.saved[id(v)][1]
    eps = max(float(np.finfo(base.dtype).eps), compute_eps)  # a float64 weight used in float32 math: float32's
    w = float(base.reshape(-1)[idx])
    unit = max(abs(w), 1.0)
    # The step: small (kinks, curvature), but large enough that the loss's round-off, divided by the step, stays
    # below 0.5% of the gradient entry (a summed loss is large, so its round-off is too).
    h_min = (1e-3 if eps > 1e-10 else 1e-5) * unit
    want = 8 * eps * abs(l0) / (0.005 * max(abs(float(ad)), 1e-30))
    h = float(np.clip(want, h_min, max(h_min, 0.01 * unit)))

    def loss_with(delta):
        pert = base.copy()
        pert.reshape(-1)[idx] = w + delta
        guard.saved[id(v)] = (v, pert)
        try:
            return _loss_at(call, loss_fn, x, y, guard, rng)
        finally:
            guard.saved[id(v)] = (v, base)

    lp, lm, lp2, lm2 = loss_with(h), loss_with(-h), loss_with(h / 2), loss_with(-h / 2)
    if not all(np.isfinite(t) for t in (lp, lm, lp2, lm2)):
        return False
    noise = 8 * eps * max(abs(l0), 1e-30) / h  # round-off of the loss, divided by the step
    fd1, fd2 = (lp - lm) / (2 * h), (lp2 - lm2) / h
    sides = [(lp - l0) / h, (l0 - lm) / h, (lp2 - l0) / (h / 2), (l0 - lm2) / (h / 2)]
    scale = max(abs(t) for t in sides + [fd1, fd2])
    if max(sides) - min(sides) > 0.05 * scale + 4 * noise:
        return False  # a kink or jump within the step, or round-off: no verdict
    ad = float(ad)
    if abs(fd2 - ad) > FD_RTOL * max(abs(fd2), abs(ad)) + 4 * noise:
        return v, idx, ad, fd2
    return None
