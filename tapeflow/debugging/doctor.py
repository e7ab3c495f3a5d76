"""``tf.debugging.diagnose_training_step``: why does my model not learn?

One call runs one training step the way a custom training loop would
(forward under a ``GradientTape``, the loss, the gradients of ``var_list``)
and goes through the questions people ask when a model does not learn:

* does every variable in ``var_list`` get a gradient (``none_gradient``, with
  ``explain_gradient``'s cause: NumPy round trip, ``stop_gradient``, ...)?
* is a gradient exactly zero (``zero_gradient``: a dead ReLU layer), NaN/Inf
  (``nonfinite_gradient``: the op that created it), far larger or smaller than
  the weights (``exploding_gradient`` / ``vanishing_gradient``)?
* does ``var_list`` leave out variables the loss depends on
  (``not_in_var_list``), or hold variables that are not the model's, such as
  the input batch (``foreign_variable``)?
* is the learning rate 0 (``zero_learning_rate``)? does the loss depend on the
  model's output (``loss_not_connected``)? is it a sum where a mean was meant
  (``sum_reduction``)? does autodiff agree with a finite difference
  (``gradient_mismatch``)?

The model's weights (including BatchNormalization statistics and the Dropout
random streams) and the optimizer's state are restored afterwards: the doctor
never takes a training step.

``tf.keras.callbacks.TrainingDoctor`` (keras/training_doctor.py) runs it from
``fit``: on the first batch and on the batch where the loss first becomes NaN/Inf.

The findings and report types are in ``_doctor_report.py``, the passes and state guards in
``_doctor_passes.py``, one function per check in ``_doctor_checks.py``.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

import numpy as np

from tapeflow.debugging._doctor_checks import (
    _compute_eps, _finite_difference, _foreign, _is_layer_variable, _loss_not_connected, _none_gradient, _nonfinite,
    _norms, _not_in_var_list, _sum_reduction, _zero_gradient, _zero_lr,
)
from tapeflow.debugging._doctor_passes import (
    _Numerics, _RngState, _StateGuard, _dense, _forward, _is_float_var, _lr_of, _model_caller, _model_variables,
    _run_pass, _trainable, _unique, _value,
)
from tapeflow.debugging._doctor_report import (  # noqa: F401 - the report types and kinds, as doctor.*
    ERROR, EXPLODING_GRADIENT, EXPLODING_RATIO, FD_RTOL, FOREIGN_VARIABLE, Finding, GRADIENT_MISMATCH, KINDS,
    LOSS_NOT_CONNECTED, NONE_GRADIENT, NONFINITE_GRADIENT, NOT_IN_VAR_LIST, SUM_RATIO, SUM_REDUCTION, TrainingReport,
    VANISHING_GRADIENT, VANISHING_RATIO, WARNING, ZERO_GRADIENT, ZERO_LEARNING_RATE,
)
from tapeflow.framework import nest

# -- the doctor -----------------------------------------------------------------------------------------------------


def diagnose_training_step(
    model: Any,
    loss_fn: Callable,
    optimizer: Any,
    x: Any,
    y: Any,
    var_list: Any = None,
    *,
    finite_difference_entries: int = 12,
    seed: int = 0,
) -> TrainingReport:
    """Runs one training step's forward and backward pass and reports why the
    model may not learn (a tapeflow extension).

    ``model`` is a Keras model, a callable ``tf.Module`` or a function of
    ``x``; ``loss_fn(y_true, y_pred)`` returns the scalar loss; ``var_list``
    is what the training step passes to ``optimizer.apply_gradients``
    (default: ``model.trainable_variables``). Nothing is changed: the model's
    variables (BatchNormalization statistics included), the random streams and
    the optimizer's state are as before the call. The cost is about six
    training steps plus ``4 * finite_difference_entries`` forward passes.

    Each finding has a ``kind`` (see ``KINDS``), the ``variables`` concerned,
    a ``message`` and a ``fix``:

    >>> model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    >>> opt = tf.keras.optimizers.SGD(learning_rate=0.0)
    >>> report = tf.debugging.diagnose_training_step(model, tf.keras.losses.MeanSquaredError(), opt,
    ...                                              np.ones((4, 3), "float32"), np.ones((4, 1), "float32"))
    >>> report.kinds
    ['zero_learning_rate']
    """
    from tapeflow.debugging import source_tracking
    from tapeflow.framework.variables import Variable

    if not callable(model):
        raise TypeError(
            f"diagnose_training_step: model must be a Keras model, a callable tf.Module or a function "
            f"of x, got {type(model).__name__}."
        )
    if not callable(loss_fn):
        raise TypeError(
            f"diagnose_training_step: loss_fn must be a callable loss_fn(y_true, y_pred) (e.g. "
            f"tf.keras.losses.MeanSquaredError()), got {type(loss_fn).__name__}: {loss_fn!r}. A string "
            "loss name works in model.compile, not here."
        )
    if optimizer is not None and not hasattr(optimizer, "apply_gradients"):
        raise TypeError(
            f"diagnose_training_step: optimizer must be a tf.keras.optimizers.Optimizer instance (or "
            f"None to skip the learning-rate check), got {type(optimizer).__name__}: {optimizer!r}."
        )
    if x is None:
        raise ValueError("diagnose_training_step: x is None; pass one batch of inputs.")
    if finite_difference_entries < 0:
        raise ValueError(f"finite_difference_entries must be >= 0, got {finite_difference_entries}.")

    call = _model_caller(model)
    guard = _StateGuard()
    opt_vars = list(getattr(optimizer, "variables", None) or []) if optimizer is not None else []
    guard.remember(opt_vars)
    guard.remember(_model_variables(model) or [])
    if getattr(model, "built", True) is False:
        # Build the model the way the first training step would (inference call: no statistics updated).
        _forward(call, loss_fn, x, y, False)
        guard.remember(_model_variables(model) or [])
    if var_list is None:
        var_list = _trainable(model)
        if not var_list:
            raise ValueError(
                f"diagnose_training_step: the model ({type(model).__name__}) has no trainable "
                "variables; pass var_list explicitly (what your training step gives the optimizer)."
            )
    else:
        if isinstance(var_list, Variable) or not isinstance(var_list, (list, tuple)):
            var_list = (
                nest.flatten(var_list)
                if isinstance(var_list, dict)
                else ([var_list] if isinstance(var_list, Variable) else list(var_list))
            )
        for k, v in enumerate(var_list):
            if not isinstance(v, Variable):
                raise TypeError(
                    f"diagnose_training_step: var_list[{k}] is a {type(v).__name__}, not a tf.Variable; "
                    "var_list is the list of variables your step passes to the optimizer "
                    "(e.g. model.trainable_variables)."
                )
        if not var_list:
            raise ValueError(
                "diagnose_training_step: var_list is empty: the optimizer would update nothing. Pass "
                "model.trainable_variables (and build the model first)."
            )
    var_list = _unique(var_list)
    guard.remember(var_list)
    guard.remember(
        getattr(loss_fn, "variables", None) or [] if not callable(getattr(loss_fn, "variables", None)) else []
    )
    opt_before = [(v, _value(v).copy()) for v in opt_vars]
    rng = _RngState(model, loss_fn)
    findings: list = []
    notes: list = []
    stats: dict = {"variables": len(var_list)}
    try:
        report = _diagnose(
            model,
            call,
            loss_fn,
            optimizer,
            x,
            y,
            var_list,
            guard,
            rng,
            findings,
            notes,
            stats,
            finite_difference_entries,
            seed,
            source_tracking,
        )
    finally:
        guard.restore()
        rng.restore()
    for v, val in opt_before:  # the doctor never steps: check it did not
        if not np.array_equal(_value(v), val):  # pragma: no cover - a bug in the doctor
            v.assign(val)
    return report


def _diagnose(
    model,
    call,
    loss_fn,
    optimizer,
    x,
    y,
    var_list,
    guard,
    rng,
    findings,
    notes,
    stats,
    fd_entries,
    seed,
    source_tracking,
) -> TrainingReport:
    from tapeflow.debugging import explain as ex

    model_vars = _model_variables(model)
    model_ids = {id(v) for v in model_vars} if model_vars is not None else None
    loss_vars = getattr(loss_fn, "variables", None)
    if loss_vars is not None and not callable(loss_vars):
        loss_ids = {id(v) for v in loss_vars}
    else:
        loss_ids = set()
    in_list = {id(v) for v in var_list}

    # 1. The step itself, with source tracking on so explanations name ops and lines.
    with source_tracking(True), _Numerics(False):
        rng.restore()
        start = ex.REGISTRY.seq()
        p = _run_pass(call, loss_fn, x, y, var_list, training=True)
        guard.remember(p.watched)
        stats["compute_eps"] = _compute_eps(ex.REGISTRY, start)
        loss_val = float(np.asarray(p.loss.numpy()))
        grads = {id(v): g for v, g in zip(p.sources, p.grads)}
        dense = {id(v): _dense(grads.get(id(v)), v) for v in p.sources}

        # loss_not_connected
        pred_grads = p.tape.gradient(p.loss, p.preds) if p.preds else []
        disconnected = not p.preds or all(g is None for g in pred_grads)
        if disconnected:
            findings.append(_loss_not_connected(ex, p))

        # foreign_variable
        foreign_ids = set()
        if model_ids is not None:
            foreign = [
                v for v in var_list if id(v) not in model_ids and id(v) not in loss_ids and not _is_layer_variable(v)
            ]
            if foreign:
                foreign_ids = {id(v) for v in foreign}
                findings.extend(_foreign(foreign, x, y, dense))
        else:
            notes.append(
                "the model has no .variables, so var_list could not be compared with the model's weights "
                "(foreign_variable and the model side of not_in_var_list were skipped)."
            )

        # none_gradient
        none_vars = [v for v in var_list if grads.get(id(v)) is None and id(v) not in foreign_ids]
        if none_vars and not disconnected:
            findings.extend(_none_gradient(ex, p, none_vars))

        # not_in_var_list
        left_out = [
            v
            for v in p.sources
            if id(v) not in in_list and grads.get(id(v)) is not None and getattr(v, "trainable", False)
        ]
        if left_out:
            findings.extend(_not_in_var_list(left_out, model_ids))

        finite = np.isfinite(loss_val)
        bad_grads = [v for v in var_list if dense.get(id(v)) is not None and not np.isfinite(dense[id(v)]).all()]
        zero_vars = [
            v
            for v in var_list
            if dense.get(id(v)) is not None and np.isfinite(dense[id(v)]).all() and not np.any(dense[id(v)])
        ]
        if finite and zero_vars:
            findings.extend(_zero_gradient(ex, p, zero_vars))
    p.tape = None

    # nonfinite_gradient: replay with check-numerics on to name the op that created it.
    if not finite or bad_grads:
        findings.append(_nonfinite(call, loss_fn, x, y, var_list, guard, rng, loss_val, bad_grads, source_tracking))

    # zero_learning_rate
    if optimizer is not None:
        lr, how = _lr_of(optimizer)
        if lr is None:
            notes.append("the optimizer's learning rate could not be read; zero_learning_rate was not checked.")
        elif lr == 0.0:
            findings.append(_zero_lr(optimizer, how))
        stats["learning_rate"] = lr

    healthy = finite and not bad_grads and not disconnected
    graded = [v for v in var_list if dense.get(id(v)) is not None and _is_float_var(v)]
    if healthy and graded:
        findings.extend(_norms(graded, dense, stats, {id(v) for v in zero_vars}))
        guard.restore()
        rng.restore()
        sr = _sum_reduction(call, loss_fn, x, y, graded, guard, rng, notes, stats)
        if sr is not None:
            findings.append(sr)
        if fd_entries:
            findings.extend(
                _finite_difference(
                    call, loss_fn, x, y, graded, dense, loss_val, guard, rng, notes, stats, fd_entries, seed
                )
            )
    elif not graded and not disconnected:
        notes.append("no variable in var_list has a gradient, so the gradient checks were skipped.")
    elif not healthy:
        notes.append(
            "the gradient-size, reduction and finite-difference checks were skipped: they need a finite, "
            "connected loss."
        )
    order = {k: i for i, k in enumerate(KINDS)}
    findings.sort(key=lambda f: (f.severity != ERROR, order.get(f.kind, 99)))
    return TrainingReport(findings, loss_val, notes, stats)
