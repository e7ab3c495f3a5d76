"""``tf.keras.optimizers.Adagrad`` (Keras 3's rule):
``acc += g^2;  w -= lr * g / sqrt(acc + epsilon)``."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.keras.optimizers.optimizer import Optimizer, _Sparse


class Adagrad(Optimizer):
    """Adagrad (``learning_rate=0.001, initial_accumulator_value=0.1,
    epsilon=1e-7``). A sparse gradient updates only its rows of the variable
    and of the accumulator."""

    _fast_arrays = True
    _supports_sparse = True

    def __init__(self, learning_rate: Any = 0.001, initial_accumulator_value: float = 0.1,
                 epsilon: float = 1e-7, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.initial_accumulator_value = initial_accumulator_value
        self.epsilon = epsilon

    def build(self, var_list: list) -> None:
        if self.built:
            return
        super().build(var_list)
        value = self.initial_accumulator_value
        self._accumulators = self.add_optimizer_variables(
            var_list, "accumulator", initializer=lambda shape, dt: np.full(shape, value, dt.as_numpy_dtype))

    def update_step(self, gradient: Any, variable: Any, learning_rate: Any) -> None:
        K = self._k
        dt = variable.dtype
        lr = K.cast(learning_rate, dt)
        acc = self._accumulators[self._get_variable_index(variable)]
        if isinstance(gradient, _Sparse):
            # Keras's scatter_add / scatter_sub of the slices, one after the other.
            g = K.cast(gradient.values, dt)
            acc_new = self.assign_add(acc, gradient.with_values(K.square(g)))
            if self.epsilon == 0:
                self._check_sparse_divisor(acc_new, K)
            self.assign_sub(variable, gradient.with_values((lr * g) / K.sqrt(gradient.gather(acc_new) + self.epsilon)))
            return
        g = K.cast(gradient, dt)
        acc_new = self.assign_add(acc, K.square(g))
        self.assign_sub(variable, (lr * g) / K.sqrt(acc_new + self.epsilon))

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"initial_accumulator_value": self.initial_accumulator_value, "epsilon": self.epsilon})
        return config
