"""``tf.keras.optimizers.Lamb`` (Keras 3's rule): Adam's bias-corrected
update, scaled per variable by the trust ratio ``||w|| / ||update||``. A
sparse gradient enters ``m`` summed per row and ``v`` as the per-row sum of
its squared slices, as Keras's ops do on IndexedSlices."""

from __future__ import annotations

from typing import Any

from tapeflow.keras.optimizers.optimizer import Optimizer, _Sparse


class Lamb(Optimizer):
    """LAMB (``learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7``)."""

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
        self._momentums, self._velocities = self.add_optimizer_variables(var_list, ["momentum", "velocity"])

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
        t = K.cast(self._read_iterations(K) + 1, dt)
        beta_1_power = K.pow(K.cast(self.beta_1, dt), t)
        beta_2_power = K.pow(K.cast(self.beta_2, dt), t)
        i = self._get_variable_index(variable)
        m, v = self._momentums[i], self._velocities[i]
        m_new = self.assign_add(m, (g - K.read(m)) * (1 - self.beta_1))
        v_new = self.assign_add(v, (g_sq - K.read(v)) * (1 - self.beta_2))
        m_hat = m_new / (1.0 - beta_1_power)
        v_sqrt = K.sqrt(v_new / (1.0 - beta_2_power)) + self.epsilon
        update = m_hat / v_sqrt
        w_norm = K.sqrt(K.sum_squares(K.read(variable)))
        g_norm = K.sqrt(K.sum_squares(update))
        one = K.const(1.0, dt)
        ratio = K.where(w_norm > 0, K.where(g_norm > 0, w_norm / g_norm, one), one)
        self.assign_sub(variable, ratio * lr * update)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon})
        return config
