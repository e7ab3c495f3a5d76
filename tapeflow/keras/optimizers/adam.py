"""``tf.keras.optimizers.Adam`` and ``AdamW`` (Keras 3's rule).

    m += (g - m) * (1 - beta_1);  v += (g^2 - v) * (1 - beta_2)
    alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t)
    w -= m * alpha / (sqrt(v) + epsilon)      (amsgrad: v -> max(v_hat, v))

A sparse gradient (IndexedSlices) enters ``m`` summed per row and ``v`` as
the per-row sum of its squared slices (Keras's ``ops.square`` on the slices).

AdamW is Adam with decoupled weight decay ``w -= w * weight_decay * lr``
applied before each step (``weight_decay=0.004``).
"""

from __future__ import annotations

from typing import Any

from tapeflow.keras.optimizers.optimizer import Optimizer, _Sparse


class Adam(Optimizer):
    """Adam (``learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7``).

    Other keyword arguments (``weight_decay``, ``clipnorm``, ``clipvalue``,
    ``global_clipnorm``, ``use_ema``, ``loss_scale_factor``, ``name`` ...)
    are the base ``Optimizer``'s.
    """

    _fast_arrays = True
    _supports_sparse = True

    def __init__(self, learning_rate: Any = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7, amsgrad: bool = False, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.amsgrad = amsgrad

    def build(self, var_list: list) -> None:
        if self.built:
            return
        super().build(var_list)
        self._momentums, self._velocities = self.add_optimizer_variables(var_list, ["momentum", "velocity"])
        if self.amsgrad:
            self._velocity_hats = self.add_optimizer_variables(var_list, "velocity_hat")

    def update_step(self, gradient: Any, variable: Any, learning_rate: Any) -> None:
        K = self._k
        dt = variable.dtype
        if isinstance(gradient, _Sparse):
            vals = K.cast(gradient.values, dt)
            g, g_sq = gradient.densify(vals), gradient.densify(K.square(vals))
        else:
            g = K.cast(gradient, dt)
            g_sq = K.square(g)

        def step_size():
            lr = K.cast(learning_rate, dt)
            t = K.cast(self._read_iterations(K) + 1, dt)
            beta_1_power = K.pow(K.cast(self.beta_1, dt), t)
            beta_2_power = K.pow(K.cast(self.beta_2, dt), t)
            return lr * K.sqrt(1 - beta_2_power) / (1 - beta_1_power)

        alpha = self._per_step(dt, step_size)
        i = self._get_variable_index(variable)
        m, v = self._momentums[i], self._velocities[i]
        m_val = K.read(m)
        m_new = self.assign_add(m, (g - m_val) * (1 - self.beta_1))
        v_val = K.read(v)
        v_new = self.assign_add(v, (g_sq - v_val) * (1 - self.beta_2))
        if self.amsgrad:
            v_hat = self._velocity_hats[i]
            v_new = self.assign(v_hat, K.maximum(K.read(v_hat), v_new))
        self.assign_sub(variable, (m_new * alpha) / (K.sqrt(v_new) + self.epsilon))

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon,
                       "amsgrad": self.amsgrad})
        return config


class AdamW(Adam):
    """Adam with decoupled weight decay (``weight_decay=0.004``)."""

    def __init__(self, learning_rate: Any = 0.001, weight_decay: float = 0.004, beta_1: float = 0.9,
                 beta_2: float = 0.999, epsilon: float = 1e-7, amsgrad: bool = False, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon,
                         amsgrad=amsgrad, weight_decay=weight_decay, **kwargs)
        if self.weight_decay is None:
            raise ValueError("Argument `weight_decay` must be a float. Received: weight_decay=None")
