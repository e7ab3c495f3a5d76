"""Learning-rate schedules, as ``tf.keras.optimizers.schedules``.

A schedule is called with the optimizer's ``iterations`` and returns the
learning rate for that step (a float32 tensor for float initial rates). The
formulas and their float32 operation order are Keras 3's.
"""

from __future__ import annotations

import math
from typing import Any

from tapeflow.framework.tensor import convert_to_tensor

__all__ = [
    "LearningRateSchedule", "ExponentialDecay", "PiecewiseConstantDecay", "PolynomialDecay", "InverseTimeDecay",
    "CosineDecay", "CosineDecayRestarts", "serialize", "deserialize",
]


def _ops():
    from tapeflow.ops import math_ops

    return math_ops


class LearningRateSchedule:
    """Base class: subclasses implement ``__call__(step)`` and ``get_config``."""

    def __call__(self, step: Any):
        raise NotImplementedError(f"Learning rate schedule '{type(self).__name__}' must override "
                                  "`__call__(self, step)`.")

    def get_config(self) -> dict:
        raise NotImplementedError(f"Learning rate schedule '{type(self).__name__}' must override `get_config()` "
                                  "in order to be serializable.")

    @classmethod
    def from_config(cls, config: dict) -> LearningRateSchedule:
        return cls(**config)


def _check_decay_steps(decay_steps: Any) -> None:
    if decay_steps <= 0:
        raise ValueError(f"Argument `decay_steps` must be > 0. Received: decay_steps={decay_steps}")


class _RateDecay(LearningRateSchedule):
    """The arguments and the step/decay_steps progress that ExponentialDecay
    and InverseTimeDecay share."""

    def __init__(self, initial_learning_rate: Any, decay_steps: Any, decay_rate: Any, staircase: bool = False,
                 name: str | None = None) -> None:
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.decay_rate = decay_rate
        self.staircase = staircase
        self.name = type(self).__name__ if name is None else name
        _check_decay_steps(decay_steps)

    def _progress(self, step: Any):
        """(ops, lr0, dtype, step / decay_steps floored when staircase)."""
        m = _ops()
        lr0 = convert_to_tensor(self.initial_learning_rate)
        dt = lr0.dtype
        p = m.cast(step, dt) / m.cast(self.decay_steps, dt)
        if self.staircase:
            p = m.floor(p)
        return m, lr0, dt, p

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate, "staircase": self.staircase, "name": self.name}


class ExponentialDecay(_RateDecay):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)`` (the
    exponent floored when ``staircase``)."""

    def __call__(self, step: Any):
        m, lr0, dt, p = self._progress(step)
        return m.multiply(lr0, m.pow(m.cast(self.decay_rate, dt), p))


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` while ``step <= boundaries[0]``, ``values[1]`` while
    ``step <= boundaries[1]``, ..., ``values[-1]`` after the last boundary."""

    def __init__(self, boundaries: list, values: list, name: str = "PiecewiseConstant") -> None:
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                "The length of boundaries should be 1 less than the length of values. Received: "
                f"boundaries={boundaries} of length {len(boundaries)}, and values={values} of length {len(values)}."
            )
        self.boundaries = boundaries
        self.values = values
        self.name = name

    def __call__(self, step: Any):
        m = _ops()
        step = convert_to_tensor(step)
        bounds = [m.cast(convert_to_tensor(b), step.dtype) for b in self.boundaries]
        values = [convert_to_tensor(v) for v in self.values]
        dt = values[0].dtype
        result = m.cast(step <= bounds[0], dt) * values[0]
        result = result + m.cast(step > bounds[-1], dt) * values[-1]
        for low, high, value in zip(bounds[:-1], bounds[1:], values[1:-1]):
            result = result + m.cast(m.logical_and(step > low, step <= high), dt) * value
        return result

    def get_config(self) -> dict:
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class PolynomialDecay(LearningRateSchedule):
    """``(lr0 - end) * (1 - step / decay_steps) ** power + end``; with
    ``cycle`` the horizon grows to the next multiple of ``decay_steps``."""

    def __init__(self, initial_learning_rate: Any, decay_steps: Any, end_learning_rate: Any = 0.0001,
                 power: Any = 1.0, cycle: bool = False, name: str = "PolynomialDecay") -> None:
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.end_learning_rate = end_learning_rate
        self.power = power
        self.cycle = cycle
        self.name = name
        _check_decay_steps(decay_steps)

    def __call__(self, step: Any):
        m = _ops()
        lr0 = convert_to_tensor(self.initial_learning_rate)
        dt = lr0.dtype
        end = m.cast(self.end_learning_rate, dt)
        power = m.cast(self.power, dt)
        s = m.cast(step, dt)
        horizon = m.cast(self.decay_steps, dt)
        if self.cycle:
            mult = m.where(m.equal(s, 0), m.cast(1.0, dt), m.ceil(s / m.cast(self.decay_steps, dt)))
            horizon = horizon * mult
        else:
            s = m.minimum(s, horizon)
        p = s / horizon
        return (lr0 - end) * m.pow(1 - p, power) + end

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "end_learning_rate": self.end_learning_rate, "power": self.power, "cycle": self.cycle,
                "name": self.name}


class InverseTimeDecay(_RateDecay):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)``."""

    def __call__(self, step: Any):
        m, lr0, dt, p = self._progress(step)
        return lr0 / (m.cast(1, dt) + m.cast(self.decay_rate, dt) * p)


class CosineDecay(LearningRateSchedule):
    """Cosine decay from ``initial_learning_rate`` (or, after a linear warmup
    of ``warmup_steps`` to ``warmup_target``, from ``warmup_target``) to
    ``alpha`` times it over ``decay_steps``."""

    def __init__(self, initial_learning_rate: Any, decay_steps: Any, alpha: Any = 0.0, name: str = "CosineDecay",
                 warmup_target: Any = None, warmup_steps: Any = 0) -> None:
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps = decay_steps
        self.alpha = alpha
        self.name = name
        self.warmup_steps = warmup_steps
        self.warmup_target = warmup_target
        _check_decay_steps(decay_steps)

    def _decay(self, step: Any, decay_steps: Any, decay_from: Any, dt: Any):
        m = _ops()
        fraction = step / decay_steps
        cosine = 0.5 * (1.0 + m.cos(m.cast(math.pi, dt) * fraction))
        decayed = (1 - self.alpha) * cosine + self.alpha
        return decay_from * decayed

    def __call__(self, step: Any):
        m = _ops()
        lr0 = convert_to_tensor(self.initial_learning_rate)
        dt = lr0.dtype
        decay_steps = m.cast(self.decay_steps, dt)
        s = m.cast(step, dt)
        if self.warmup_target is None:
            return self._decay(m.minimum(s, decay_steps), decay_steps, lr0, dt)
        target = m.cast(self.warmup_target, dt)
        warmup_steps = m.cast(self.warmup_steps, dt)
        s = m.minimum(s, decay_steps + warmup_steps)
        warm = (target - lr0) * (s / warmup_steps) + lr0
        decay = self._decay(s - warmup_steps, decay_steps, target, dt)
        # Both branches are cheap scalars; `where` keeps this graph friendly.
        return m.where(s < warmup_steps, warm, decay)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "alpha": self.alpha, "name": self.name, "warmup_target": self.warmup_target,
                "warmup_steps": self.warmup_steps}


class CosineDecayRestarts(LearningRateSchedule):
    """SGDR: cosine decay restarted every period, periods growing by
    ``t_mul`` and peaks shrinking by ``m_mul``."""

    def __init__(self, initial_learning_rate: Any, first_decay_steps: Any, t_mul: float = 2.0,
                 m_mul: float = 1.0, alpha: float = 0.0, name: str = "SGDRDecay") -> None:
        if first_decay_steps <= 0:
            raise ValueError(f"Argument `first_decay_steps` must be > 0. Received: "
                             f"first_decay_steps={first_decay_steps}")
        self.initial_learning_rate = initial_learning_rate
        self.first_decay_steps = first_decay_steps
        self._t_mul = t_mul
        self._m_mul = m_mul
        self.alpha = alpha
        self.name = name

    def __call__(self, step: Any):
        m = _ops()
        lr0 = convert_to_tensor(self.initial_learning_rate)
        dt = lr0.dtype
        first = m.cast(self.first_decay_steps, dt)
        alpha = m.cast(self.alpha, dt)
        t_mul = m.cast(self._t_mul, dt)
        m_mul = m.cast(self._m_mul, dt)
        fraction = m.cast(step, dt) / first
        if self._t_mul == 1.0:
            i_restart = m.floor(fraction)
            fraction = fraction - i_restart
        else:
            i_restart = m.floor(m.log(1.0 - fraction * (1.0 - t_mul)) / m.log(t_mul))
            sum_r = (1.0 - m.pow(t_mul, i_restart)) / (1.0 - t_mul)
            fraction = (fraction - sum_r) / m.pow(t_mul, i_restart)
        m_fac = m.pow(m_mul, i_restart)
        cosine = 0.5 * m_fac * (1.0 + m.cos(m.cast(math.pi, dt) * fraction))
        return lr0 * ((1 - alpha) * cosine + alpha)

    def get_config(self) -> dict:
        return {"initial_learning_rate": self.initial_learning_rate,
                "first_decay_steps": self.first_decay_steps, "t_mul": self._t_mul, "m_mul": self._m_mul,
                "alpha": self.alpha, "name": self.name}


_BY_NAME = {c.__name__: c for c in (ExponentialDecay, PiecewiseConstantDecay, PolynomialDecay, InverseTimeDecay,
                                     CosineDecay, CosineDecayRestarts)}


def serialize(schedule: LearningRateSchedule) -> dict:
    """Keras 3's ``{"module": "keras.optimizers.schedules", "class_name", "config", "registered_name"}``."""
    from tapeflow.keras.saving.serialization import serialize_keras_object

    return serialize_keras_object(schedule)


def deserialize(config: dict, custom_objects: dict | None = None) -> LearningRateSchedule:
    """Rebuilds a schedule from ``serialize``'s dict."""
    name = config.get("class_name")
    cls = (custom_objects or {}).get(name) or _BY_NAME.get(name)
    if cls is None:
        raise ValueError(f"Unknown learning rate schedule: {name!r}. Known: {sorted(_BY_NAME)}.")
    return cls.from_config(config.get("config", {}))
