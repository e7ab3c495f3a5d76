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

    def __init__(self, learning_rate: Any = 0.001, rho: float = 0.9, momentum: float = 0.0,
                 epsilon: float = 1e-7, centered: bool = False, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.rho = rho
        self.momentum = momentum
        self.epsilon = epsilon
        self.centered = centered
        self._supports_sparse = not momentum > 0

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
        # Eager only (sparse gradients are densified while tracing).
        K = self._k
        rows = grad.indices
        g = K.cast(grad.values, variable.dtype)
        rho = self.rho
        velocity = self._velocities[i]
        v_new = rho * velocity._value
        v_new[rows] += (1 - rho) * K.square(g)
        self.assign(velocity, v_new)
        if self.centered:
            avg = self._average_gradients[i]
            a_new = rho * avg._value
            a_new[rows] += (1 - rho) * g
            self.assign(avg, a_new)
            denominator = v_new[rows] - K.square(a_new[rows]) + self.epsilon
        else:
            denominator = v_new[rows] + self.epsilon
        self.assign_sub(variable, _Sparse((lr * g) / K.sqrt(denominator), rows, grad.dense_shape))

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"rho": self.rho, "momentum": self.momentum, "epsilon": self.epsilon,
                       "centered": self.centered})
        return config
