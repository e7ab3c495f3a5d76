"""``tf.keras.optimizers.Nadam`` (Keras 3's rule, with the momentum schedule
``u_t = beta_1 * (1 - 0.5 * 0.96^t)`` and its running product). A sparse
gradient enters ``m`` summed per row, ``v`` as the per-row sum of its squared
slices, and ``m_hat``'s gradient term slice by slice, then summed per row."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.keras.optimizers.optimizer import Optimizer, _Sparse


class Nadam(Optimizer):
    """Nadam (``learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7``)."""

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
        dt = var_list[0].dtype if var_list else dtypes.float32
        super().build(var_list)
        self._momentums, self._velocities = self.add_optimizer_variables(var_list, ["momentum", "velocity"])
        self._u_product = self.add_variable((), initializer=lambda s, d: np.ones(s, d.as_numpy_dtype), dtype=dt,
                                            name="variable")

    def _update_all(self, grads: list, variables: list, learning_rate: Any, K) -> None:
        # The running product of u_t is advanced once per step, before the
        # per-variable updates read it.
        up = self._u_product
        dt = up.dtype
        t = K.cast(self._read_iterations(K) + 1, dt)
        self.assign(up, K.read(up) * self.beta_1 * (1.0 - 0.5 * K.pow(K.const(0.96, dt), t)))
        super()._update_all(grads, variables, learning_rate, K)

    def update_step(self, gradient: Any, variable: Any, learning_rate: Any) -> None:
        K = self._k
        dt = variable.dtype
        sparse = gradient if isinstance(gradient, _Sparse) else None
        if sparse is not None:
            vals = K.cast(sparse.values, dt)
            g, g_sq = sparse.densify(vals), sparse.densify(K.square(vals))
        else:
            g = K.cast(gradient, dt)
            g_sq = K.square(g)

        def coefficients():
            it = self._read_iterations(K)
            local_step = K.cast(it + 1, dt)
            next_step = K.cast(it + 2, dt)
            decay = K.cast(0.96, dt)
            beta_1 = K.cast(self.beta_1, dt)
            beta_2 = K.cast(self.beta_2, dt)
            u_t = beta_1 * (1.0 - 0.5 * K.pow(decay, local_step))
            u_t_1 = beta_1 * (1.0 - 0.5 * K.pow(decay, next_step))
            u_product_t = K.cast(K.read(self._u_product), dt)
            u_product_t_1 = u_product_t * u_t_1
            beta_2_power = K.pow(beta_2, local_step)
            return K.cast(learning_rate, dt), beta_1, beta_2, u_t, u_t_1, u_product_t, u_product_t_1, beta_2_power

        lr, beta_1, beta_2, u_t, u_t_1, u_product_t, u_product_t_1, beta_2_power = self._per_step(dt, coefficients)
        i = self._get_variable_index(variable)
        m, v = self._momentums[i], self._velocities[i]
        m_new = self.assign_add(m, (g - K.read(m)) * (1 - beta_1))
        v_new = self.assign_add(v, (g_sq - K.read(v)) * (1 - beta_2))
        if sparse is not None:
            g_term = sparse.densify(((1 - u_t) * vals) / (1 - u_product_t))
        else:
            g_term = ((1 - u_t) * g) / (1 - u_product_t)
        m_hat = (u_t_1 * m_new) / (1 - u_product_t_1) + g_term
        v_hat = v_new / (1 - beta_2_power)
        self.assign_sub(variable, (m_hat * lr) / (K.sqrt(v_hat) + self.epsilon))

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon})
        return config
