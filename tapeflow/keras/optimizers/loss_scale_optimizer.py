"""``tf.keras.mixed_precision.LossScaleOptimizer``: Keras 3's dynamic loss scaling.

The loss is multiplied by ``dynamic_scale`` (``scale_loss``) before the
gradients are taken; ``apply`` divides the gradients by it and, when all are
finite, lets the inner optimizer update the variables. A non-finite gradient
skips the step and halves the scale; ``dynamic_growth_steps`` finite steps in a
row double it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import distribution_hooks as dist_hooks
from tapeflow.framework.context import state
from tapeflow.framework.indexed_slices import IndexedSlices
from tapeflow.framework.variables import Variable
from tapeflow.keras.optimizers.optimizer import Optimizer

_BASE_DEFAULTS = {"weight_decay": None, "clipnorm": None, "global_clipnorm": None, "clipvalue": None,
                  "use_ema": False, "ema_momentum": 0.99, "ema_overwrite_frequency": None,
                  "loss_scale_factor": None, "gradient_accumulation_steps": None}


class LossScaleOptimizer(Optimizer):
    """Wraps ``inner_optimizer`` with dynamic loss scaling (Keras 3).

    >>> opt = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
    >>> with tf.GradientTape() as tape:
    ...     loss = ...
    ...     scaled = opt.scale_loss(loss)
    >>> opt.apply(tape.gradient(scaled, variables), variables)   # unscales, skips non-finite steps
    """

    def __init__(self, inner_optimizer: Optimizer, initial_scale: float = 2.0**15, dynamic_growth_steps: int = 2000,
                 name: str | None = None, **kwargs: Any) -> None:
        if not kwargs.pop("dynamic", True):
            raise ValueError("LossScaleOptimizer no longer supports `dynamic=False`. Instead, simply set "
                             "`loss_scale_factor` directly on the `inner_optimizer`.")
        for arg, default in _BASE_DEFAULTS.items():
            if arg in kwargs:
                value = kwargs.pop(arg)
                if (default is None and value is not None) or value != default:
                    raise ValueError(f"LossScaleOptimizer does not support `{arg}`. Instead, set `{arg}` on the "
                                     "`inner_optimizer`.")
        if kwargs:
            raise ValueError(f"LossScaleOptimizer does not support arguments: `{'`, `'.join(kwargs)}`.")
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError(f"LossScaleOptimizer wraps a Keras optimizer; got {type(inner_optimizer).__name__}")
        super().__init__(learning_rate=0.0, name=name)
        self.inner_optimizer = inner_optimizer
        self.initial_scale = initial_scale
        self.dynamic_growth_steps = dynamic_growth_steps
        self.inner_optimizer.loss_scale_factor = None
        self._user_unscaled = False  # get_unscaled_gradients() was used for the next apply

    def build(self, var_list: list) -> None:
        self.step_counter = self.add_variable((), initializer="zeros", dtype="int64", name="step_counter")
        self.dynamic_scale = self.add_variable((), initializer=lambda s, d: np.full(s, self.initial_scale, "float32"),
                                               dtype="float32", name="dynamic_scale")
        self.inner_optimizer.build(var_list)
        self.inner_optimizer.built = True
        super().build(var_list)

    @property
    def variables(self) -> list:
        return list(self._variables) + list(self.inner_optimizer.variables)

    @property
    def iterations(self) -> Variable:
        return self.inner_optimizer.iterations

    @iterations.setter
    def iterations(self, value: Any) -> None:
        self.inner_optimizer.iterations = value

    @property
    def learning_rate(self) -> Any:
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value: Any) -> None:
        self.inner_optimizer.learning_rate = value

    # -- scaling ------------------------------------------------------------------
    def scale_loss(self, loss: Any) -> Any:
        """``loss * dynamic_scale`` (the initial scale before the first step)."""
        from tapeflow.ops import math_ops as mo

        scale = self.dynamic_scale.value() if self.built else self.initial_scale
        if self.built and getattr(loss, "dtype", None) is not None and loss.dtype.name != "float32":
            scale = mo.cast(scale, loss.dtype)
        return mo.multiply(loss, scale)

    def get_scaled_loss(self, loss: Any) -> Any:
        """TF-Keras 2's name for ``scale_loss`` (TF's mixed precision guide calls it)."""
        return self.scale_loss(loss)

    def get_unscaled_gradients(self, grads: list) -> list:
        """TF-Keras 2's API: gradients divided by the loss scale. The next ``apply``
        then does not divide again (as TF-Keras 2), so the guide's loop
        ``get_scaled_loss`` → ``get_unscaled_gradients`` → ``apply_gradients`` is right."""
        self._user_unscaled = True
        return [None if g is None else self._divide(g) for g in grads]

    def _divide(self, g: Any) -> Any:
        from tapeflow.ops import math_ops as mo

        scale = self.dynamic_scale.value() if self.built else self.initial_scale
        if isinstance(g, IndexedSlices):
            return IndexedSlices(mo.divide(g.values, mo.cast(scale, g.values.dtype)), g.indices, g.dense_shape)
        return mo.divide(g, mo.cast(scale, g.dtype) if self.built else scale)

    # -- applying -------------------------------------------------------------------
    def apply(self, grads: list, trainable_variables: list | None = None, _aggregate: bool = True) -> None:
        grads = list(grads)
        variables = None if trainable_variables is None else list(trainable_variables)
        if not self.built:
            if variables is None:
                raise ValueError("When passing `grads` without `variables`, the optimizer must already be built on "
                                 "a list of variables. Call `optimizer.build(trainable_variables)` first. ")
            self.build(variables)
            self.built = True
        user_unscaled, self._user_unscaled = self._user_unscaled, False
        if dist_hooks.strategy is not None and _aggregate:
            # several processes: sum first, so every rank judges the same gradients finite (or skips alike)
            grads, _aggregate = dist_hooks.strategy._aggregate_gradients(grads), False
        if state.graph is None:
            if self._finite_now(grads):
                self._finite_step(grads, variables, user_unscaled, _aggregate)
            else:
                self._skip_step()
            return
        from tapeflow.graph.control_flow import cond

        def finite_branch():
            self._finite_step(grads, variables, user_unscaled, _aggregate)
            return 0

        def skip_branch():
            self._skip_step()
            return 0

        cond(self._finite_tensor(grads), finite_branch, skip_branch)

    @staticmethod
    def _values(grads: list) -> list:
        return [g.values if isinstance(g, IndexedSlices) else g for g in grads if g is not None]

    def _finite_now(self, grads: list) -> bool:
        return all(bool(np.isfinite(np.asarray(getattr(g, "_value", g))).all()) for g in self._values(grads))

    def _finite_tensor(self, grads: list) -> Any:
        from tapeflow.ops import math_ops as mo
        from tapeflow.ops.math_ops import is_finite

        checks = [mo.reduce_all(is_finite(g)) for g in self._values(grads)]
        if not checks:
            from tapeflow.framework.tensor import constant

            return constant(True)
        out = checks[0]
        for c in checks[1:]:
            out = mo.logical_and(out, c)
        return out

    def _finite_step(self, grads: list, variables: list | None, user_unscaled: bool, aggregate: bool) -> None:
        unscaled = grads if user_unscaled else [None if g is None else self._divide(g) for g in grads]
        self.inner_optimizer.apply(unscaled, variables, _aggregate=aggregate)
        if state.graph is None:
            if int(self.step_counter.numpy()) == self.dynamic_growth_steps - 1:
                self.step_counter.assign(0)
                self.dynamic_scale.assign(self.dynamic_scale.numpy() * np.float32(2.0))
            else:
                self.step_counter.assign_add(1)
            return
        from tapeflow.graph.control_flow import cond
        from tapeflow.ops import math_ops as mo

        def upscale():
            self.step_counter.assign(0)
            self.dynamic_scale.assign(self.dynamic_scale.value() * 2.0)
            return 0

        def increment():
            self.step_counter.assign_add(1)
            return 0

        cond(mo.equal(self.step_counter.value(), self.dynamic_growth_steps - 1), upscale, increment)

    def _skip_step(self) -> None:
        self.step_counter.assign(0)
        if state.graph is None:
            self.dynamic_scale.assign(self.dynamic_scale.numpy() * np.float32(0.5))
        else:
            self.dynamic_scale.assign(self.dynamic_scale.value() * 0.5)

    def finalize_variable_values(self, var_list: list) -> None:
        self.inner_optimizer.finalize_variable_values(var_list)

    def get_config(self) -> dict:
        from tapeflow.keras import optimizers

        return {"name": self.name, "inner_optimizer": optimizers.serialize(self.inner_optimizer),
                "initial_scale": self.initial_scale, "dynamic_growth_steps": self.dynamic_growth_steps}

    @classmethod
    def from_config(cls, config: dict, custom_objects: Any = None) -> LossScaleOptimizer:
        from tapeflow.keras import optimizers

        config = dict(config)
        inner = optimizers.deserialize(config.pop("inner_optimizer"))
        return cls(inner, **config)
