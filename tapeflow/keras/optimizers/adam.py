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

import numpy as np

from tapeflow.framework.execute import execute
from tapeflow.keras.optimizers.optimizer import Optimizer, _Sparse
from tapeflow.ops import threads
from tapeflow.ops._fpu import flush_denormals
from tapeflow.ops.registry import NotDifferentiable, defop

_BLOCK = 32768  # elements per block: the step's temporaries stay in cache between its passes


def _adam_kernel(g, m, v, w, alpha, one_minus_beta_1, one_minus_beta_2, epsilon):
    """One dense Adam step, Keras 3's operations in Keras's order (so the same float32 numbers as
    the op-by-op rule): m + (g - m) * (1 - beta_1), v + (g * g - v) * (1 - beta_2), then
    w - m * alpha / (sqrt(v) + epsilon). Returns new (m, v, w) arrays (the old ones are left as
    they are: a value read from a variable before the step keeps it). Worked through in blocks
    with reused temporaries: on a CNN's 400k-weight Dense kernel 0.83 ms where the twelve
    separate ops took 1.35 ms. Subnormals are flushed to zero, as in TF's kernels: the momentum
    of a weight whose gradient stays 0 otherwise sinks into them and sticks (8% of the Fashion-MNIST
    tutorial's first kernel after one epoch, which made its update 0.58 instead of 0.22 ms)."""
    dt = w.dtype
    b1, b2, eps = dt.type(one_minus_beta_1), dt.type(one_minus_beta_2), dt.type(epsilon)
    alpha = np.asarray(alpha, dtype=dt)
    g = np.asarray(g, dtype=dt)
    mn, vn, wn = np.empty(w.shape, dt), np.empty(w.shape, dt), np.empty(w.shape, dt)
    gf, mf, vf, wf = g.reshape(-1), m.reshape(-1), v.reshape(-1), w.reshape(-1)
    mo, vo, wo = mn.reshape(-1), vn.reshape(-1), wn.reshape(-1)
    n = wf.size

    def block(k):
        a, b = k * _BLOCK, min(n, (k + 1) * _BLOCK)
        gg, mm, vv, o1, o2, o3, t = gf[a:b], mf[a:b], vf[a:b], mo[a:b], vo[a:b], wo[a:b], np.empty(b - a, dt)
        with flush_denormals():  # (per block: a helper thread's own mode)
            np.subtract(gg, mm, out=o1)
            o1 *= b1
            o1 += mm
            np.multiply(gg, gg, out=o2)
            o2 -= vv
            o2 *= b2
            o2 += vv
            np.sqrt(o2, out=t)
            t += eps
            np.multiply(o1, alpha, out=o3)
            o3 /= t
            np.subtract(wf[a:b], o3, out=o3)

    # (blocks on the intra-op threads when the weight is large: each writes only its own slices)
    with flush_denormals():  # (on this thread once: each block's then finds the mode set)
        threads.parallel_for(-(-n // _BLOCK), block, 12.0 * n)
    return mn, vn, wn


def _adam_shape(specs, **attrs):
    return [specs[1], specs[2], specs[3]]


ADAM_UPDATE = defop("KerasAdamUpdate", _adam_kernel, shape=_adam_shape, num_outputs=3)
NotDifferentiable("KerasAdamUpdate")


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
        if not self.amsgrad and not isinstance(gradient, _Sparse) and dt.as_numpy_dtype in (np.float32, np.float64) \
                and self._fused_update:
            return self._fused_step(K.cast(gradient, dt), variable, learning_rate)
        if isinstance(gradient, _Sparse):
            vals = K.cast(gradient.values, dt)
            g, g_sq = gradient.densify(vals), gradient.densify(K.square(vals))
        else:
            g = K.cast(gradient, dt)
            g_sq = K.square(g)

        alpha = self._alpha(dt, learning_rate)
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

    def _alpha(self, dt: Any, learning_rate: Any) -> Any:
        """Keras's bias-corrected step size lr * sqrt(1 - beta_2^t) / (1 - beta_1^t), once per step and dtype."""
        K = self._k

        def step_size():
            lr = K.cast(learning_rate, dt)
            t = K.cast(self._read_iterations(K) + 1, dt)
            beta_1_power = K.pow(K.cast(self.beta_1, dt), t)
            beta_2_power = K.pow(K.cast(self.beta_2, dt), t)
            return lr * K.sqrt(1 - beta_2_power) / (1 - beta_1_power)

        return self._per_step(dt, step_size)

    _fused_update = True  # AdamW's weight decay runs before update_step, so it shares the fused step

    def _fused_step(self, g: Any, variable: Any, learning_rate: Any) -> None:
        K = self._k
        dt = variable.dtype

        alpha = self._alpha(dt, learning_rate)
        i = self._get_variable_index(variable)
        m, v = self._momentums[i], self._velocities[i]
        consts = (1 - self.beta_1, 1 - self.beta_2, self.epsilon)
        if K.eager:
            m_new, v_new, w_new = _adam_kernel(g, m._value, v._value, variable._value, alpha, *consts)
        else:
            m_new, v_new, w_new = execute(ADAM_UPDATE, (g, K.read(m), K.read(v), K.read(variable), alpha), dict(
                zip(("one_minus_beta_1", "one_minus_beta_2", "epsilon"), (float(c) for c in consts))))
        self.assign(m, m_new)
        self.assign(v, v_new)
        self.assign(variable, w_new)

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
