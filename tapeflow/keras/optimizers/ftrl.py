"""``tf.keras.optimizers.Ftrl`` (Keras 3's rule: FTRL-Proximal with L1, L2
and L2-shrinkage regularization). A sparse gradient enters summed per row,
and the accumulator gets the per-row sum of its squared slices."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.keras.optimizers.optimizer import Optimizer, _Sparse


class Ftrl(Optimizer):
    """FTRL (``learning_rate=0.001, learning_rate_power=-0.5,
    initial_accumulator_value=0.1``, regularization strengths 0, ``beta=0``)."""

    _fast_arrays = True
    _supports_sparse = True

    def __init__(self, learning_rate: Any = 0.001, learning_rate_power: float = -0.5,
                 initial_accumulator_value: float = 0.1, l1_regularization_strength: float = 0.0,
                 l2_regularization_strength: float = 0.0, l2_shrinkage_regularization_strength: float = 0.0,
                 beta: float = 0.0, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        for arg, value in (("initial_accumulator_value", initial_accumulator_value),
                           ("l1_regularization_strength", l1_regularization_strength),
                           ("l2_regularization_strength", l2_regularization_strength),
                           ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength)):
            if value < 0.0:
                raise ValueError(f"`{arg}` needs to be positive or zero. Received: {arg}={value}.")
        if learning_rate_power > 0.0:
            raise ValueError(f"`learning_rate_power` needs to be negative or zero. Received: "
                             f"learning_rate_power={learning_rate_power}.")
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta

    def build(self, var_list: list) -> None:
        if self.built:
            return
        super().build(var_list)
        value = self.initial_accumulator_value
        self._accumulators, self._linears = self.add_optimizer_variables(
            var_list, ["accumulator", "linear"],
            initializer=[lambda shape, dt: np.full(shape, value, dt.as_numpy_dtype), "zeros"])

    def update_step(self, gradient: Any, variable: Any, learning_rate: Any) -> None:
        K = self._k
        dt = variable.dtype
        lr = K.cast(learning_rate, dt)
        if isinstance(gradient, _Sparse):
            vals = K.cast(gradient.values, dt)
            g, g_sq = gradient.densify(vals), gradient.densify(K.square(vals))
        else:
            g = K.cast(gradient, dt)
            g_sq = K.square(g)
        i = self._get_variable_index(variable)
        accum, linear = self._accumulators[i], self._linears[i]
        lr_power = self.learning_rate_power
        l2_reg = self.l2_regularization_strength + self.beta / (2.0 * lr)
        w = K.read(variable)
        acc_val = K.read(accum)
        grad_to_use = g + 2 * self.l2_shrinkage_regularization_strength * w
        new_accum = acc_val + g_sq
        lin = self.assign_add(
            linear, grad_to_use - ((K.pow(new_accum, -lr_power) - K.pow(acc_val, -lr_power)) / lr) * w)
        quadratic = K.pow(new_accum, -lr_power) / lr + 2 * l2_reg
        l1 = self.l1_regularization_strength
        clipped = K.minimum(K.maximum(lin, -l1), l1)
        self.assign(variable, (clipped - lin) / quadratic)
        self.assign(accum, new_accum)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({
            "learning_rate_power": self.learning_rate_power,
            "initial_accumulator_value": self.initial_accumulator_value,
            "l1_regularization_strength": self.l1_regularization_strength,
            "l2_regularization_strength": self.l2_regularization_strength,
            "l2_shrinkage_regularization_strength": self.l2_shrinkage_regularization_strength,
            "beta": self.beta,
        })
        return config
