"""``tf.keras.optimizers.Adamax`` (Keras 3's rule).

    m += (g - m) * (1 - beta_1);  u = max(beta_2 * u, |g|)
    w -= lr * m / ((1 - beta_1^t) * (u + epsilon))

A sparse gradient enters ``m`` summed per row and ``u`` as the per-row sum
of its slices' absolute values (Keras's ``ops.abs`` on the slices).
"""

from __future__ import annotations

from typing import Any

from tapeflow.keras.optimizers.optimizer import Optimizer, _Sparse


class Adamax(Optimizer):
    """Adamax (``learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7``)."""

    _fast_arrays = True
    _supports_sparse = True

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon

    def build(self, var_list: list) -> None:
        if self.built:
            return
        super().build(var_list)
        self._m, self._u = self.add_optimizer_variables(var_list, ["momentum", "norm"])

    def update_step(self, gradient: Any, variable: Any, learning_rate: Any) -> None:
        K = self._k
        dt = variable.dtype
        lr = K.cast(learning_rate, dt)
        if isinstance(gradient, _Sparse):
            vals = K.cast(gradient.values, dt)
            g, g_abs = gradient.densify(vals), gradient.densify(K.abs(vals))
        else:
            g = K.cast(gradient, dt)
            g_abs = K.abs(g)
        t = K.cast(self._read_iterations(K) + 1, dt)
        beta_1_power = K.pow(K.cast(self.beta_1, dt), t)
        i = self._get_variable_index(variable)
        m, u = self._m[i], self._u[i]
        m_new = self.assign_add(m, (g - K.read(m)) * (1 - self.beta_1))
        u_new = self.assign(u, K.maximum(self.beta_2 * K.read(u), g_abs))
        self.assign_sub(variable, (lr * m_new) / ((1 - beta_1_power) * (u_new + self.epsilon)))

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon})
        return config
