"""``tf.keras.optimizers.Adadelta`` (Keras 3's rule).

    acc_g = rho * acc_g + (1 - rho) * g^2
    delta = -sqrt(acc_d + eps) * g / sqrt(acc_g + eps)
    acc_d = rho * acc_d + (1 - rho) * delta^2
    w += lr * delta
"""

from __future__ import annotations

from typing import Any

from tapeflow.keras.optimizers.optimizer import Optimizer, _Sparse


class Adadelta(Optimizer):
    """Adadelta (``learning_rate=0.001, rho=0.95, epsilon=1e-7``). A sparse
    gradient updates only its rows of the variable."""

    _fast_arrays = True
    _supports_sparse = True

    def __init__(self, learning_rate: Any = 0.001, rho: float = 0.95, epsilon: float = 1e-7,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def build(self, var_list: list) -> None:
        if self.built:
            return
        super().build(var_list)
        self._accumulated_grads, self._accumulated_delta_vars = self.add_optimizer_variables(
            var_list, ["accumulated_grad", "accumulated_delta_var"])

    def update_step(self, gradient: Any, variable: Any, learning_rate: Any) -> None:
        K = self._k
        dt = variable.dtype
        lr = K.cast(learning_rate, dt)
        rho = self.rho
        i = self._get_variable_index(variable)
        acc_g, acc_d = self._accumulated_grads[i], self._accumulated_delta_vars[i]
        if isinstance(gradient, _Sparse):
            # As Keras on IndexedSlices: slice by slice, summed per row into the
            # accumulators, scattered one slice after the other into the variable.
            g = K.cast(gradient.values, dt)
            ag = self.assign(acc_g, gradient.add_to(rho * K.read(acc_g), (1 - rho) * K.square(g)))
            if self.epsilon == 0:
                self._check_sparse_divisor(ag, K)
            delta = -((K.sqrt(gradient.gather(K.read(acc_d)) + self.epsilon) * g)
                      / K.sqrt(gradient.gather(ag) + self.epsilon))
            self.assign(acc_d, gradient.add_to(rho * K.read(acc_d), (1 - rho) * K.square(delta)))
            self.assign_add(variable, gradient.with_values(lr * delta))
            return
        g = K.cast(gradient, dt)
        ag = self.assign(acc_g, rho * K.read(acc_g) + (1 - rho) * K.square(g))
        delta = -((K.sqrt(K.read(acc_d) + self.epsilon) * g) / K.sqrt(ag + self.epsilon))
        self.assign(acc_d, rho * K.read(acc_d) + (1 - rho) * K.square(delta))
        self.assign_add(variable, lr * delta)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"rho": self.rho, "epsilon": self.epsilon})
        return config
