"""The training doctor's machinery: state guards that restore the weights, random streams and
optimizer, the model / loss callers, and one forward + backward pass (see ``doctor.py``)."""

from __future__ import annotations

import inspect
from typing import Any
from collections.abc import Callable

import numpy as np

from tapeflow.framework import nest

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
        from tapeflow.ops import random_ops

        self._rops = random_ops
        self.gens: list = []
        self.seed_vars: list = []  # Keras SeedGenerator states (a Dropout's [seed, counter])
        seen: set = set()
        for obj in objects:
            for gen in _generators_of(obj):
                if id(gen) not in seen:
                    seen.add(id(gen))
                    (self.gens if isinstance(gen, np.random.Generator) else self.seed_vars).append(gen)
        self.gen_states = [g.bit_generator.state for g in self.gens]
        self.seed_var_values = [v._value.copy() for v in self.seed_vars]
        st = random_ops._state
        _ = st.fresh  # make sure the unseeded stream exists, so it can be restored
        self.fresh_state = st.fresh.bit_generator.state
        self.streams = dict(st.streams)
        self.stream_states = {k: g.bit_generator.state for k, g in st.streams.items()}
        self.op_seeds = st.op_seeds.getstate() if st.op_seeds is not None else None
        self.counters = dict(st.counters)
        self.external = [get() for get in st.external]
        self.external_states = [g.bit_generator.state for g in self.external]

    def restore(self) -> None:
        st = self._rops._state
        for g, s in zip(self.gens, self.gen_states):
            g.bit_generator.state = s
        for v, value in zip(self.seed_vars, self.seed_var_values):
            v._value = value.copy()
        st.fresh.bit_generator.state = self.fresh_state
        st.streams.clear()
        st.streams.update(self.streams)
        for k, s in self.stream_states.items():
            st.streams[k].bit_generator.state = s
        if self.op_seeds is not None and st.op_seeds is not None:
            st.op_seeds.setstate(self.op_seeds)
        st.counters.clear()
        st.counters.update(self.counters)
        for g, s in zip(self.external, self.external_states):
            g.bit_generator.state = s


def _generators_of(obj: Any) -> list:
    """NumPy generators and Keras seed-state variables (``_seed_state``) held by the model's layers."""
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
        seed_state = attrs.get("_seed_state")
        if seed_state is not None and hasattr(seed_state, "_value"):
            found.append(seed_state)
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
    raw = getattr(optimizer, "_learning_rate", None)
    try:
        lr = optimizer.learning_rate
    except Exception:  # noqa: BLE001 - a broken schedule is reported as unknown
        return None, ""
    try:
        value = float(np.asarray(lr.numpy() if hasattr(lr, "numpy") else lr))
    except (TypeError, ValueError):
        return None, ""
    if callable(raw):  # a LearningRateSchedule (or a callable learning rate)
        step = int(np.asarray(optimizer.iterations.numpy()))
        return value, f"the schedule {type(raw).__name__} at step {step} (optimizer.iterations)"
    return value, "optimizer.learning_rate"
