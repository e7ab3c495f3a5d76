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

``TrainingDoctor`` is the Keras callback: it runs the doctor on the first
batch of ``fit`` and again on the batch where the loss first becomes NaN/Inf.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from typing import Any
from collections.abc import Callable

import numpy as np

from tapeflow.framework import nest

# The kinds of finding (stable strings: tests and tools match on them).
NONE_GRADIENT = "none_gradient"
ZERO_GRADIENT = "zero_gradient"
NONFINITE_GRADIENT = "nonfinite_gradient"
EXPLODING_GRADIENT = "exploding_gradient"
VANISHING_GRADIENT = "vanishing_gradient"
NOT_IN_VAR_LIST = "not_in_var_list"
FOREIGN_VARIABLE = "foreign_variable"
ZERO_LEARNING_RATE = "zero_learning_rate"
LOSS_NOT_CONNECTED = "loss_not_connected"
SUM_REDUCTION = "sum_reduction"
GRADIENT_MISMATCH = "gradient_mismatch"

KINDS = (
    NONE_GRADIENT,
    ZERO_GRADIENT,
    NONFINITE_GRADIENT,
    EXPLODING_GRADIENT,
    VANISHING_GRADIENT,
    NOT_IN_VAR_LIST,
    FOREIGN_VARIABLE,
    ZERO_LEARNING_RATE,
    LOSS_NOT_CONNECTED,
    SUM_REDUCTION,
    GRADIENT_MISMATCH,
)

ERROR = "error"
WARNING = "warning"

# Thresholds (documented in the messages that use them).
EXPLODING_RATIO = 1e3  # global gradient norm / global weight norm above this: exploding
VANISHING_RATIO = 1e-10  # a variable's gradient norm / its weight norm below this: vanishing
SUM_RATIO = 1.5  # gradient norm on the batch repeated twice / on the batch, above this: a sum
FD_RTOL = 0.03  # autodiff vs central difference, relative (where the loss is smooth at the step size)


@dataclasses.dataclass
class Finding:
    """One problem the doctor found.

    ``kind`` is one of ``KINDS``; ``variables`` names the variables concerned
    (their Keras paths, e.g. ``"dense_1/kernel"``); ``message`` says what is
    wrong and why; ``fix`` what to change; ``severity`` is ``"error"`` (the
    step is broken) or ``"warning"`` (likely a problem). ``op`` names the op
    involved where one is known; ``details`` holds supporting lines."""

    kind: str
    variables: list
    message: str
    fix: str
    severity: str = ERROR
    op: str | None = None
    details: list = dataclasses.field(default_factory=list)

    def __str__(self) -> str:
        head = f"{self.kind} ({self.severity})"
        if self.variables:
            shown = ", ".join(self.variables[:8]) + (
                f", ... ({len(self.variables)} in all)" if len(self.variables) > 8 else ""
            )
            head += f": {shown}"
        lines = [head, f"  {self.message}"]
        lines += [f"  {d}" for d in self.details]
        lines.append(f"  fix: {self.fix}")
        return "\n".join(lines)


@dataclasses.dataclass
class TrainingReport:
    """What ``diagnose_training_step`` found: ``print()`` it, or read
    ``.findings`` (``Finding`` objects); ``.ok`` is True when no finding is an
    error. ``.loss`` is the loss of the diagnosed step, ``.notes`` says which
    checks were skipped and why, ``.stats`` holds the norms measured."""

    findings: list
    loss: float | None
    notes: list = dataclasses.field(default_factory=list)
    stats: dict = dataclasses.field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(f.severity == ERROR for f in self.findings)

    @property
    def kinds(self) -> list:
        return [f.kind for f in self.findings]

    def __getitem__(self, i: int) -> Finding:
        return self.findings[i]

    def __len__(self) -> int:
        return len(self.findings)

    def __str__(self) -> str:
        n_err = sum(f.severity == ERROR for f in self.findings)
        n_warn = len(self.findings) - n_err
        loss = "?" if self.loss is None else f"{self.loss:.6g}"
        nv = self.stats.get("variables", 0)
        if not self.findings:
            head = f"Training-step report: no problems found (loss {loss}, {nv} variable(s) in var_list"
            if "gradient_norm" in self.stats:
                head += (
                    f", gradient norm {self.stats['gradient_norm']:.3g}, weight norm {self.stats['weight_norm']:.3g}"
                )
            head += ")."
        else:
            parts = []
            if n_err:
                parts.append(f"{n_err} error(s)")
            if n_warn:
                parts.append(f"{n_warn} warning(s)")
            head = f"Training-step report: {', '.join(parts)} (loss {loss}, {nv} variable(s) in var_list)."
        out = [head]
        for k, f in enumerate(self.findings, 1):
            text = str(f).replace("\n", "\n ")
            out.append(f"{k}. {text}")
        out += [f"note: {n}" for n in self.notes]
        return "\n".join(out)

    __repr__ = __str__


# -- helpers ------------------------------------------------------------------------------------------------------


def _var_name(v: Any) -> str:
    path = getattr(v, "path", None)
    if isinstance(path, str) and path:
        return path
    name = getattr(v, "name", "variable")
    return name[:-2] if name.endswith(":0") else name


def _unique(vs) -> list:
    seen, out = set(), []
    for v in vs:
        if id(v) not in seen:
            seen.add(id(v))
            out.append(v)
    return out


def _value(v: Any) -> np.ndarray:
    return np.asarray(v.numpy())


def _dense(g: Any, v: Any) -> np.ndarray | None:
    """A gradient as a dense NumPy array (IndexedSlices scattered)."""
    from tapeflow.framework.indexed_slices import IndexedSlices

    if g is None:
        return None
    if isinstance(g, IndexedSlices):
        out = np.zeros(tuple(v.shape.as_list()), dtype=np.asarray(g.values.numpy()).dtype)
        np.add.at(out, np.asarray(g.indices.numpy()), np.asarray(g.values.numpy()))
        return out
    return np.asarray(g.numpy())


def _norm(a: np.ndarray) -> float:
    return float(np.sqrt(np.sum(np.square(a.astype(np.float64)))))


def _is_float_var(v: Any) -> bool:
    return bool(v.dtype.is_floating or v.dtype.is_complex)


def _describe_batch(x: Any) -> str:
    parts = []
    for t in nest.flatten(x):
        shape = getattr(t, "shape", None)
        dt = getattr(t, "dtype", None)
        if shape is None:
            parts.append(type(t).__name__)
        else:
            shape = tuple(shape.as_list()) if hasattr(shape, "as_list") else tuple(shape)
            parts.append(f"{getattr(dt, 'name', dt)}{list(shape)}")
    return ", ".join(parts) or type(x).__name__


class _StateGuard:
    """Copies of every variable the doctor may touch, restored at the end
    (and before each finite-difference evaluation)."""

    def __init__(self) -> None:
        self.saved: dict[int, tuple] = {}

    def remember(self, variables) -> None:
        for v in variables:
            if id(v) not in self.saved:
                self.saved[id(v)] = (v, _value(v).copy())

    def restore(self) -> None:
        for v, val in self.saved.values():
            cur = _value(v)
            if cur.shape != val.shape or not np.array_equal(cur, val, equal_nan=cur.dtype.kind in "fc"):
                v.assign(val)


class _RngState:
    """The random streams a forward pass may draw from (Dropout masks, random
    ops): saved once and put back before each evaluation, so every pass of
    the doctor sees the same masks."""

    def __init__(self, *objects: Any) -> None:
        from tapeflow.keras import initializers
        from tapeflow.ops import random_ops

        self._rops = random_ops
        self._init = initializers
        self.gens: list = []
        seen: set = set()
        for obj in objects:
            for gen in _generators_of(obj):
                if id(gen) not in seen:
                    seen.add(id(gen))
                    self.gens.append(gen)
        self.gen_states = [g.bit_generator.state for g in self.gens]
        st = random_ops._state
        _ = st.fresh  # make sure the unseeded stream exists, so it can be restored
        self.fresh_state = st.fresh.bit_generator.state
        self.streams = dict(st.streams)
        self.stream_states = {k: g.bit_generator.state for k, g in st.streams.items()}
        self.op_seeds = st.op_seeds.getstate() if st.op_seeds is not None else None
        self.global_rng = initializers._global_rng.bit_generator.state

    def restore(self) -> None:
        st = self._rops._state
        for g, s in zip(self.gens, self.gen_states):
            g.bit_generator.state = s
        st.fresh.bit_generator.state = self.fresh_state
        st.streams.clear()
        st.streams.update(self.streams)
        for k, s in self.stream_states.items():
            st.streams[k].bit_generator.state = s
        if self.op_seeds is not None and st.op_seeds is not None:
            st.op_seeds.setstate(self.op_seeds)
        self._init._global_rng.bit_generator.state = self.global_rng


def _generators_of(obj: Any) -> list:
    """NumPy generators held by the model's layers (e.g. a seeded Dropout)."""
    found: list = []
    stack, seen = [obj], set()
    while stack and len(seen) < 10_000:
        o = stack.pop()
        if id(o) in seen or o is None:
            continue
        seen.add(id(o))
        attrs = getattr(o, "__dict__", None)
        if not attrs:
            continue
        for val in attrs.values():
            if isinstance(val, np.random.Generator):
                found.append(val)
            elif _is_layerish(val):
                stack.append(val)
            elif isinstance(val, (list, tuple)):
                stack.extend(x for x in val if _is_layerish(x))
            elif isinstance(val, dict):
                stack.extend(x for x in val.values() if _is_layerish(x))
    return found


def _is_layerish(o: Any) -> bool:
    from tapeflow.module import Module

    return isinstance(o, Module) or hasattr(o, "trainable_variables")


class _Numerics:
    """Switches strict gradients and check-numerics off (or numerics on) for
    the doctor's own passes, restoring the user's settings afterwards."""

    def __init__(self, numerics: bool = False) -> None:
        self.numerics = numerics

    def __enter__(self):
        from tapeflow.debugging._instrument import REGISTRY

        self.reg = REGISTRY
        self.prev = (REGISTRY.strict, REGISTRY.numerics)
        REGISTRY.strict = False
        REGISTRY.numerics = self.numerics
        if self.numerics:
            REGISTRY.reported.clear()
        REGISTRY.refresh()
        return self

    def __exit__(self, *exc) -> None:
        self.reg.strict, self.reg.numerics = self.prev
        if self.numerics:
            self.reg.reported.clear()
        self.reg.refresh()


def _model_caller(model: Any) -> Callable:
    """``call(x, training)`` for a Keras model, a tf.Module or a callable."""
    accepts_training = False
    try:
        target = model.call if hasattr(model, "call") else model.__call__ if not inspect.isfunction(model) else model
        params = inspect.signature(target).parameters
        accepts_training = "training" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
    except (TypeError, ValueError):
        accepts_training = False

    def call(x, training):
        if accepts_training:
            return model(x, training=training)
        return model(x)

    return call


def _model_variables(model: Any) -> list | None:
    for attr in ("variables", "weights"):
        vs = getattr(model, attr, None)
        if vs is not None and not callable(vs):
            return list(vs)
    return None


def _trainable(model: Any) -> list:
    vs = getattr(model, "trainable_variables", None)
    if vs is None or callable(vs):
        return []
    return list(vs)


def _repeat_batch(a: Any) -> Any:
    from tapeflow.framework.tensor import Tensor
    from tapeflow.ops import array_ops

    if isinstance(a, Tensor) or hasattr(a, "_snapshot"):
        return array_ops.concat([a, a], axis=0)
    arr = np.asarray(a)
    return np.concatenate([arr, arr], axis=0)


class _Pass:
    """One forward/backward: the loss, the predictions and the gradients."""

    loss: Any
    preds: list
    tape: Any
    grads: list  # aligned with sources


def _loss_value(loss: Any) -> Any:
    from tapeflow.framework.tensor import Tensor

    if not isinstance(loss, Tensor):
        from tapeflow.framework.tensor import convert_to_tensor

        try:
            loss = convert_to_tensor(loss)
        except Exception as e:  # noqa: BLE001 - re-raised with context
            raise TypeError(
                f"diagnose_training_step: loss_fn(y, y_pred) must return a scalar tensor, got "
                f"{type(loss).__name__}: {loss!r}"
            ) from e
    shape = loss._shape_tuple()
    if shape is None or len(shape) != 0:
        raise ValueError(
            f"diagnose_training_step: loss_fn(y, y_pred) returned a tensor of shape {list(shape or [])}; a training "
            "step needs a scalar loss (tape.gradient would silently sum it). Reduce it, e.g. "
            "tf.reduce_mean(per_example_loss), or use a tf.keras.losses object such as "
            "tf.keras.losses.MeanSquaredError(), which averages over the batch."
        )
    if not loss.dtype.is_floating:
        raise ValueError(
            f"diagnose_training_step: loss_fn(y, y_pred) returned a {loss.dtype.name} tensor; a loss "
            "must be floating-point to have a gradient."
        )
    return loss


def _reraise_numerics(e: Exception) -> None:
    """The doctor's check-numerics replay wants the error itself."""
    from tapeflow.debugging._instrument import REGISTRY
    from tapeflow.framework.errors import InvalidArgumentError

    if REGISTRY.numerics and isinstance(e, InvalidArgumentError):
        raise e


def _forward(call, loss_fn, x, y, training):
    try:
        y_pred = call(x, training)
    except Exception as e:  # noqa: BLE001 - re-raised with context
        _reraise_numerics(e)
        raise ValueError(
            f"diagnose_training_step: calling the model on x ({_describe_batch(x)}) failed with "
            f"{type(e).__name__}: {e}\nCheck that x is one batch of the model's input (the first dimension is the "
            "batch)."
        ) from e
    return y_pred


def _loss(loss_fn, y, y_pred):
    try:
        loss = loss_fn(y, y_pred)
    except Exception as e:  # noqa: BLE001 - re-raised with context
        _reraise_numerics(e)
        raise ValueError(
            f"diagnose_training_step: loss_fn(y, y_pred) failed with {type(e).__name__}: {e}\n(y: "
            f"{_describe_batch(y)}; y_pred: {_describe_batch(y_pred)}). The loss is called as loss_fn(y_true, "
            "y_pred), like a tf.keras.losses function."
        ) from e
    return _loss_value(loss)


def _run_pass(call, loss_fn, x, y, sources, training, persistent=True) -> _Pass:
    from tapeflow.eager.backprop import GradientTape
    from tapeflow.framework.tensor import Tensor

    p = _Pass()
    with GradientTape(persistent=persistent) as tape:
        y_pred = _forward(call, loss_fn, x, y, training)
        preds = [t for t in nest.flatten(y_pred) if isinstance(t, Tensor) and t.dtype.is_floating]
        for t in preds:
            tape.watch(t)
        loss = _loss(loss_fn, y, y_pred)
    p.loss, p.preds, p.tape, p.y_pred = loss, preds, tape, y_pred
    p.watched = list(tape.watched_variables())
    p.sources = _unique(list(sources) + [v for v in p.watched if getattr(v, "trainable", False)])
    p.grads = tape.gradient(loss, p.sources) if p.sources else []
    return p


def _lr_of(optimizer: Any) -> tuple[float | None, str]:
    """(learning rate now, how it was obtained)."""
    from tapeflow.keras.optimizers.schedules import LearningRateSchedule

    raw = getattr(optimizer, "_learning_rate", None)
    try:
        lr = optimizer.learning_rate
    except Exception:  # noqa: BLE001 - a broken schedule is reported as unknown
        return None, ""
    try:
        value = float(np.asarray(lr.numpy() if hasattr(lr, "numpy") else lr))
    except (TypeError, ValueError):
        return None, ""
    if isinstance(raw, LearningRateSchedule):
        step = int(np.asarray(optimizer.iterations.numpy()))
        return value, f"the schedule {type(raw).__name__} at step {step} (optimizer.iterations)"
    return value, "optimizer.learning_rate"


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
    from tapeflow.keras.optimizers.schedules import LearningRateSchedule

    raw = getattr(optimizer, "_learning_rate", None)
    if isinstance(raw, LearningRateSchedule):
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


# -- the Keras callback -------------------------------------------------------------------------------------------


def _callback_base():
    from tapeflow.keras.callbacks import Callback

    return Callback


class TrainingDoctor(_callback_base()):
    """``tf.keras.callbacks.TrainingDoctor()`` (a tapeflow extension): runs
    ``tf.debugging.diagnose_training_step`` on the first batch of ``fit`` and
    again on the first batch whose loss is NaN/Inf (diagnosing that batch with
    the weights from before its step), printing the report.

    ``print_fn`` receives the report text (default ``print``); the reports
    are kept in ``.reports``. With ``stop_on_error=True`` training stops after
    a report with errors.

    >>> model.fit(x, y, callbacks=[tf.keras.callbacks.TrainingDoctor()])  # doctest: +SKIP
    """

    def __init__(
        self,
        print_fn: Callable | None = print,
        on_nonfinite: bool = True,
        stop_on_error: bool = False,
        finite_difference_entries: int = 12,
    ) -> None:
        super().__init__()
        self.print_fn = print_fn
        self.on_nonfinite = on_nonfinite
        self.stop_on_error = stop_on_error
        self.finite_difference_entries = finite_difference_entries
        self.reports: list = []
        self._first_done = False
        self._nonfinite_done = False
        self._before: list | None = None

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._first_done = False
        self._nonfinite_done = False

    def _batch(self):
        return getattr(self.model, "_current_train_batch", None)

    def on_train_batch_begin(self, batch: int, logs: dict | None = None) -> None:
        model = self.model
        if not self._first_done:
            self._first_done = True
            self._run("first batch")
        if self.on_nonfinite and not self._nonfinite_done:
            self._before = [(v, _value(v).copy()) for v in model.variables]

    def on_train_batch_end(self, batch: int, logs: dict | None = None) -> None:
        loss = (logs or {}).get("loss")
        if not self.on_nonfinite or self._nonfinite_done or loss is None or np.isfinite(loss):
            return
        self._nonfinite_done = True
        after = [(v, _value(v).copy()) for v in self.model.variables]
        for v, val in self._before or []:
            v.assign(val)
        try:
            self._run(f"batch {batch}: the loss became {loss}")
        finally:
            for v, val in after:
                v.assign(val)

    def _run(self, when: str) -> None:
        model = self.model
        data = self._batch()
        if data is None or model is None or getattr(model, "optimizer", None) is None:
            return
        xb, yb = data[0], data[1] if len(data) > 1 else None
        if yb is None:
            return

        def loss_fn(y_true, y_pred):
            return model.compute_loss(y=y_true, y_pred=y_pred)

        report = diagnose_training_step(
            model, loss_fn, model.optimizer, xb, yb, finite_difference_entries=self.finite_difference_entries
        )
        self.reports.append(report)
        if self.print_fn is not None:
            self.print_fn(f"TrainingDoctor ({when}):\n{report}")
        if self.stop_on_error and not report.ok:
            model.stop_training = True
