"""``tf.keras.optimizers.Adafactor`` (Keras 3's rule): second moments of
matrices kept factored as row and column means (memory O(n + m), not n*m),
updates clipped by their RMS and scaled by the variable's RMS. A sparse
gradient enters the second moments as the per-row sum of its squared slices;
the update is computed slice by slice and scattered into the gradient's rows
only (repeated rows one slice after the other), as Keras's ops do on
IndexedSlices."""

from __future__ import annotations

from typing import Any


from tapeflow.keras.optimizers.optimizer import Optimizer, _Sparse


class Adafactor(Optimizer):
    """Adafactor (``learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30,
    epsilon_2=1e-3, clip_threshold=1.0, relative_step=True``)."""

    _fast_arrays = True
    _supports_sparse = True

    def __init__(self, learning_rate: Any = 0.001, beta_2_decay: float = -0.8, epsilon_1: float = 1e-30,
                 epsilon_2: float = 1e-3, clip_threshold: float = 1.0, relative_step: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_2_decay = beta_2_decay
        self.epsilon_1 = epsilon_1
        self.epsilon_2 = epsilon_2
        self.clip_threshold = clip_threshold
        self.relative_step = relative_step

    def build(self, var_list: list) -> None:
        if self.built:
            return
        super().build(var_list)
        self._r, self._c, self._v = [], [], []
        for var in var_list:
            shape = tuple(var._shape_tuple())
            name = var.name.replace("/", "_").replace(":", "_")
            if len(shape) < 2:
                # Not factored; placeholders keep the variables' order Keras's.
                self._r.append(self.add_variable((), dtype="int32", name=name))
                self._c.append(self.add_variable((), dtype="int32", name=name))
            else:
                self._r.append(self.add_variable(shape[:-1], dtype=var.dtype, name=name))
                self._c.append(self.add_variable(shape[:-2] + shape[-1:], dtype=var.dtype, name=name))
            self._v.append(self.add_variable_from_reference(var, name="velocity"))

    def update_step(self, gradient: Any, variable: Any, learning_rate: Any) -> None:
        K = self._k
        dt = variable.dtype
        lr = K.cast(learning_rate, dt)
        sparse = gradient if isinstance(gradient, _Sparse) else None
        if sparse is not None:
            g = K.cast(sparse.values, dt)
            grad_sq = sparse.densify(K.square(g)) + self.epsilon_1
        else:
            g = K.cast(gradient, dt)
            grad_sq = K.square(g) + self.epsilon_1
        epsilon_2 = K.cast(self.epsilon_2, dt)
        one = K.cast(1.0, dt)
        t = K.cast(self._read_iterations(K) + 1, dt)
        if not callable(self._learning_rate) and self.relative_step:
            lr = K.minimum(lr, 1 / K.sqrt(t))
        i = self._get_variable_index(variable)
        r, c, v = self._r[i], self._c[i], self._v[i]
        rho_t = K.minimum(lr, 1 / K.sqrt(t))
        alpha_t = K.maximum(epsilon_2, _rms(K, K.read(variable))) * rho_t
        beta_2_t = 1 - K.pow(t, K.const(self.beta_2_decay, dt))
        if len(tuple(variable._shape_tuple())) >= 2:
            r_new = self.assign(r, beta_2_t * K.read(r) + (1 - beta_2_t) * K.mean(grad_sq, axis=-1))
            c_new = self.assign(c, beta_2_t * K.read(c) + (1 - beta_2_t) * K.mean(grad_sq, axis=-2))
            v_new = self.assign(v, K.expand_dims(r_new / K.mean(r_new, axis=-1, keepdims=True), -1)
                                * K.expand_dims(c_new, -2))
        else:
            v_new = self.assign(v, beta_2_t * K.read(v) + (1 - beta_2_t) * grad_sq)
        if sparse is not None:
            u_t = g / sparse.gather(K.sqrt(v_new))
            rms_u = K.sqrt(K.mean(sparse.densify(K.square(u_t))))
            u_t_hat = u_t / K.maximum(one, rms_u / self.clip_threshold)
            self.assign_sub(variable, sparse.with_values(alpha_t * u_t_hat))
            return
        u_t = g / K.sqrt(v_new)
        u_t_hat = u_t / K.maximum(one, _rms(K, u_t) / self.clip_threshold)
        self.assign_sub(variable, alpha_t * u_t_hat)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"beta_2_decay": self.beta_2_decay, "epsilon_1": self.epsilon_1,
                       "epsilon_2": self.epsilon_2, "clip_threshold": self.clip_threshold,
                       "relative_step": self.relative_step})
        return config


def _rms(K: Any, x: Any):
    return K.sqrt(K.mean(K.square(x)))


