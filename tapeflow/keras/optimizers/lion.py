"""``tf.keras.optimizers.Lion`` (Keras 3's rule):
``w -= lr * sign(beta_1 * m + (1 - beta_1) * g)``, then
``m = beta_2 * m + (1 - beta_2) * g`` (a sparse gradient's slices are
scaled one by one, then summed per row, as Keras does)."""

from __future__ import annotations

from typing import Any

from tapeflow.keras.optimizers.optimizer import Optimizer, _Sparse


class Lion(Optimizer):
    """Lion (``learning_rate=0.001, beta_1=0.9, beta_2=0.99``)."""

    _fast_arrays = True
    _supports_sparse = True

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9, beta_2: float = 0.99,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        if beta_1 <= 0 or beta_1 > 1:
            raise ValueError("Argument `beta_1` must be in the [0, 1] range. Otherwise, the optimizer degenerates "
                             f"to SignSGD. Received: beta_1={beta_1}.")

    def build(self, var_list: list) -> None:
        if self.built:
            return
        super().build(var_list)
        self._momentums = self.add_optimizer_variables(var_list, "momentum")

    def update_step(self, gradient: Any, variable: Any, learning_rate: Any) -> None:
        K = self._k
        dt = variable.dtype
        lr = K.cast(learning_rate, dt)
        beta_1 = K.cast(self.beta_1, dt)
        beta_2 = K.cast(self.beta_2, dt)
        if isinstance(gradient, _Sparse):
            vals = K.cast(gradient.values, dt)
            g_1, g_2 = gradient.densify(vals * (1.0 - beta_1)), gradient.densify(vals * (1.0 - beta_2))
        else:
            g = K.cast(gradient, dt)
            g_1, g_2 = g * (1.0 - beta_1), g * (1.0 - beta_2)
        m = self._momentums[self._get_variable_index(variable)]
        m_val = K.read(m)
        self.assign_sub(variable, lr * K.sign(m_val * beta_1 + g_1))
        self.assign(m, m_val * beta_2 + g_2)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2})
        return config
