"""``tf.keras.optimizers.RMSprop`` (Keras 3's rule).

    v = rho * v + (1 - rho) * g^2
    centered: a = rho * a + (1 - rho) * g;  denom = v - a^2 + epsilon
    else:     denom = v + epsilon
    inc = lr * g / sqrt(denom)
    momentum > 0: mom = momentum * mom + inc; w -= mom   else: w -= inc
"""

from __future__ import annotations

from typing import Any

from tapeflow.keras.optimizers.optimizer import Optimizer, _Sparse


class RMSprop(Optimizer):
    """RMSprop (``learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
    centered=False``). Without momentum a sparse gradient updates only its
    rows of the variable (the accumulators decay everywhere, as dense)."""

    _fast_arrays = True
    _supports_sparse = True

    def __init__(self, learning_rate: Any = 0.001, rho: float = 0.9, momentum: float = 0.0,
                 epsilon: float = 1e-7, centered: bool = False, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.rho = rho
        self.momentum = momentum
        self.epsilon = epsilon
        self.centered = centered

    def build(self, var_list: list) -> None:
        if self.built:
            return
        super().build(var_list)
        self._velocities = self.add_optimizer_variables(var_list, "velocity")
        self._momentums = []
        if self.momentum > 0:
            self._momentums = self.add_optimizer_variables(var_list, "momentum")
        self._average_gradients = []
        if self.centered:
            self._average_gradients = self.add_optimizer_variables(var_list, "average_gradient")

    def update_step(self, gradient: Any, variable: Any, learning_rate: Any) -> None:
        K = self._k
        dt = variable.dtype
        lr = K.cast(learning_rate, dt)
        i = self._get_variable_index(variable)
        velocity = self._velocities[i]
        rho = self.rho
        if isinstance(gradient, _Sparse):
            self._sparse_step(gradient, variable, lr, i)
            return
        g = K.cast(gradient, dt)
        v_new = self.assign(velocity, rho * K.read(velocity) + (1 - rho) * K.square(g))
        if self.centered:
            avg = self._average_gradients[i]
            a_new = self.assign(avg, rho * K.read(avg) + (1 - rho) * g)
            denominator = v_new - K.square(a_new) + self.epsilon
        else:
            denominator = v_new + self.epsilon
        increment = (lr * g) / K.sqrt(denominator)
        if self.momentum > 0:
            mom = self._momentums[i]
            mom_new = self.assign(mom, self.momentum * K.read(mom) + increment)
            self.assign_sub(variable, mom_new)
        else:
            self.assign_sub(variable, increment)

    def _sparse_step(self, grad: _Sparse, variable: Any, lr: Any, i: int) -> None:
        # As Keras on IndexedSlices: the accumulators decay everywhere and add
        # each slice's term summed per row; the increment is computed slice by
        # slice (divided by its row's denominator) and scattered one slice
        # after the other, or summed per row into the momentum.
        K = self._k
        vals = K.cast(grad.values, variable.dtype)
        rho = self.rho
        velocity = self._velocities[i]
        v_new = self.assign(velocity, grad.add_to(rho * K.read(velocity), (1 - rho) * K.square(vals)))
        if self.centered:
            avg = self._average_gradients[i]
            a_new = self.assign(avg, grad.add_to(rho * K.read(avg), (1 - rho) * vals))
            if self.epsilon == 0:
                self._check_sparse_divisor(v_new - K.square(a_new), K)
            denominator = grad.gather(v_new) - K.square(grad.gather(a_new)) + self.epsilon
        else:
            if self.epsilon == 0:
                self._check_sparse_divisor(v_new, K)
            denominator = grad.gather(v_new) + self.epsilon
        increment = (lr * vals) / K.sqrt(denominator)
        if self.momentum > 0:
            mom = self._momentums[i]
            mom_new = self.assign(mom, self.momentum * K.read(mom) + grad.densify(increment))
            self.assign_sub(variable, mom_new)
        else:
            self.assign_sub(variable, grad.with_values(increment))

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"rho": self.rho, "momentum": self.momentum, "epsilon": self.epsilon,
                       "centered": self.centered})
        return config
