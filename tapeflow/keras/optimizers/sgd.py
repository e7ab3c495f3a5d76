"""``tf.keras.optimizers.SGD``: gradient descent with optional (Nesterov)
momentum, Keras 3's rule: ``m = momentum * m - lr * g``, then ``w += m``
(Nesterov: ``w += momentum * m - lr * g``)."""

from __future__ import annotations

from typing import Any

from tapeflow.keras.optimizers.optimizer import Optimizer, _Sparse


class SGD(Optimizer):
    """Stochastic gradient descent (``learning_rate=0.01``, ``momentum=0.0``).

    A sparse (``IndexedSlices``) gradient without momentum updates only its
    rows of the variable (repeated rows one slice after the other, as Keras's
    ``scatter_sub``); with momentum the slices times ``lr`` are summed per row.
    """

    _fast_arrays = True
    _supports_sparse = True

    def __init__(self, learning_rate: Any = 0.01, momentum: float = 0.0, nesterov: bool = False,
                 weight_decay: float | None = None, clipnorm: float | None = None, clipvalue: float | None = None,
                 global_clipnorm: float | None = None, use_ema: bool = False, ema_momentum: float = 0.99,
                 ema_overwrite_frequency: int | None = None, loss_scale_factor: float | None = None,
                 gradient_accumulation_steps: int | None = None, name: str | None = None, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, name=name, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, use_ema=use_ema,
                         ema_momentum=ema_momentum, ema_overwrite_frequency=ema_overwrite_frequency,
                         loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, **kwargs)
        if not isinstance(momentum, float) or momentum < 0 or momentum > 1:
            raise ValueError("`momentum` must be a float between [0, 1].")
        self.momentum = momentum
        self.nesterov = nesterov

    def build(self, var_list: list) -> None:
        if self.built:
            return
        super().build(var_list)
        self.momentums = []
        if self.momentum != 0:
            self.momentums = self.add_optimizer_variables(var_list, "momentum")

    def update_step(self, gradient: Any, variable: Any, learning_rate: Any) -> None:
        K = self._k
        lr = K.cast(learning_rate, variable.dtype)
        if isinstance(gradient, _Sparse):
            g_lr = gradient.with_values(K.cast(gradient.values, variable.dtype) * lr)
            if self.momentum == 0:
                self.assign_sub(variable, g_lr)
                return
            g_lr = g_lr.dense()
        else:
            g_lr = K.cast(gradient, variable.dtype) * lr
        if self.momentum != 0:
            m = self.momentums[self._get_variable_index(variable)]
            momentum = K.cast(self.momentum, variable.dtype)
            m_new = self.assign(m, K.read(m) * momentum - g_lr)
            if self.nesterov:
                self.assign_add(variable, m_new * momentum - g_lr)
            else:
                self.assign_add(variable, m_new)
        else:
            self.assign_sub(variable, g_lr)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"momentum": self.momentum, "nesterov": self.nesterov})
        return config
