"""BatchNormalization and LayerNormalization."""

from __future__ import annotations

from typing import Any

from tapeflow.framework import dtypes
from tapeflow.framework.tensor import Tensor
from tapeflow import nn
from tapeflow.keras import constraints, initializers, regularizers
from tapeflow.keras.layers.base import Layer
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo

__all__ = ["BatchNormalization", "LayerNormalization"]


def _axes(axis: Any, ndim: int) -> list[int]:
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"Invalid axis: {a} for an input of rank {ndim}")
        out.append(a % ndim)
    return sorted(out)



def _synchronized_moments(x: Tensor, axes: list, ctx: Any) -> tuple:
    """Keras' ``_compute_moments_sync``: the sums all-reduced in one fused collective (Keras makes three; the
    same sums). ``ctx`` is the replica context, or None inside a strategy's scope (tapeflow's Keras fit)."""
    from tapeflow.distribute import ReduceOp, collective_ops, strategies
    from tapeflow.framework import distribution_hooks as hooks
    from tapeflow.ops.special_ops import divide_no_nan

    local = [mo.reduce_sum(x, axis=axes, keepdims=True), mo.reduce_sum(mo.square(x), axis=axes, keepdims=True),
             mo.reduce_sum(ao.ones_like(x), axis=axes, keepdims=True)]
    if ctx is not None:
        total, squares, count = ctx.all_reduce(ReduceOp.SUM, local)
    elif hooks.strategy is not None and strategies.get_strategy() is hooks.strategy:  # several processes
        total, squares, count = collective_ops.all_reduce(local, "sum")
    else:
        total, squares, count = local
    mean = divide_no_nan(total, count)
    var = mo.maximum(divide_no_nan(squares, count) - mo.square(mean), 0.0)
    return mean, var


def _to(t: Tensor, dtype: dtypes.DType) -> Tensor:
    return t if t.dtype == dtype else mo.cast(t, dtype)

class BatchNormalization(Layer):
    """Normalizes with the batch's statistics when ``training=True`` (and
    updates the moving mean/variance: ``moving = moving * momentum + batch *
    (1 - momentum)``), with the moving statistics otherwise."""

    _supports_masking = True

    def __init__(self, axis: int = -1, momentum: float = 0.99, epsilon: float = 1e-3, center: bool = True,
                 scale: bool = True, beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 moving_mean_initializer: Any = "zeros", moving_variance_initializer: Any = "ones",
                 beta_regularizer: Any = None, gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, synchronized: bool = False, renorm: bool = False,
                 renorm_clipping: Any = None, renorm_momentum: float = 0.99, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if renorm:
            raise NotImplementedError("BatchNormalization(renorm=True) (batch renormalization) is not implemented "
                                      "in tapeflow")
        self.renorm, self.renorm_clipping, self.renorm_momentum = renorm, renorm_clipping, renorm_momentum
        self.synchronized = synchronized
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)
        self.axis, self.momentum, self.epsilon = axis, float(momentum), float(epsilon)
        self.center, self.scale = center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)

    def build(self, input_shape: Any) -> None:
        ndim = len(input_shape)
        self._feature_axes = _axes(self.axis, ndim)
        self._reduce_axes = [i for i in range(ndim) if i not in self._feature_axes]
        shape = tuple(input_shape[a] for a in self._feature_axes)
        if None in shape:
            raise ValueError(f"BatchNormalization '{self.name}': axis {self.axis} of input shape {input_shape} "
                             f"must be known.")
        # broadcast shape of the parameters against the input
        self._bshape = tuple(input_shape[i] if i in self._feature_axes else 1 for i in range(ndim))
        self.gamma = self.add_weight(shape, self.gamma_initializer, name="gamma", autocast=False,
                                     regularizer=self.gamma_regularizer,
                                     constraint=self.gamma_constraint) if self.scale else None
        self.beta = self.add_weight(shape, self.beta_initializer, name="beta", autocast=False,
                                    regularizer=self.beta_regularizer,
                                    constraint=self.beta_constraint) if self.center else None
        self.moving_mean = self.add_weight(name="moving_mean", shape=shape, initializer=self.moving_mean_initializer,
                                           trainable=False, autocast=False)
        self.moving_variance = self.add_weight(name="moving_variance", shape=shape,
                                               initializer=self.moving_variance_initializer, trainable=False,
                                               autocast=False)
        self.built = True

    def _moments(self, inputs: Tensor) -> tuple:
        """The batch's mean and variance; with ``synchronized=True``, over every replica's batch (Keras' TF
        backend: sums of x, x**2 and counts all-reduced, variance ``max(E[x**2] - E[x]**2, 0)``)."""
        if self.synchronized:
            from tapeflow.distribute import strategies

            ctx = strategies.get_replica_context()
            if ctx is not None or strategies.has_strategy():  # (Keras' fit runs the step in a replica context)
                return _synchronized_moments(inputs, self._reduce_axes, ctx)
        return nn.moments(inputs, self._reduce_axes, keepdims=True)

    def _param(self, v: Any) -> Tensor:
        t = v.value()
        return t if len(self._feature_axes) == 1 and self._feature_axes[0] == len(self._bshape) - 1 \
            else ao.reshape(t, self._bshape)

    def call(self, inputs: Tensor, training: Any = None, mask: Any = None) -> Tensor:
        # As Keras: float16 inputs are normalized in float32 (BN overflows in
        # float16), the result cast back to the compute dtype.
        if inputs.dtype == dtypes.float16:
            return _to(self._normalize(mo.cast(inputs, "float32"), training), self._compute)
        return _to(self._normalize(inputs, training), self._compute)

    def _normalize(self, inputs: Tensor, training: Any) -> Tensor:
        shape = inputs._shape_tuple()
        if len(shape) != len(self._bshape):
            raise ValueError(f"Input 0 with name 'None' of layer '{self.name}'"
                             f" is incompatible with the layer: expected "
                             f"ndim={len(self._bshape)}, found ndim={len(shape)}. Full shape received: {shape}")
        for a in self._feature_axes:
            if shape[a] is not None and shape[a] != self._bshape[a]:
                raise ValueError(f"Input 0 with name 'None' of layer '{self.name}'"
                                 f" is incompatible with the layer: expected axis "
                                 f"{a - len(shape)} of input shape to have value {self._bshape[a]}, but received "
                                 f"input with shape {shape}")
        if training and self.trainable:
            mean, var = self._moments(inputs)
            m = self.momentum
            for moving, batch in ((self.moving_mean, mean), (self.moving_variance, var)):
                batch = ao.reshape(ao.stop_gradient(batch), moving.shape.as_list())
                moving.assign(moving.value() * m + batch * (1.0 - m))
        else:
            mean, var = self._param(self.moving_mean), self._param(self.moving_variance)
        inv = mo.rsqrt(var + self.epsilon)
        if self.gamma is not None:
            inv = inv * self._param(self.gamma)
        out = inputs * inv
        shift = -mean * inv
        if self.beta is not None:
            shift = shift + self._param(self.beta)
        return out + shift


class LayerNormalization(Layer):
    """Normalizes each sample over ``axis`` (default: the last axis)."""

    _supports_masking = True

    def __init__(self, axis: Any = -1, epsilon: float = 1e-3, center: bool = True, scale: bool = True,
                 rms_scaling: bool = False, beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 beta_regularizer: Any = None, gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if rms_scaling:
            raise NotImplementedError("LayerNormalization(rms_scaling=True) is not implemented in tapeflow")
        self.axis, self.epsilon, self.center, self.scale = axis, float(epsilon), center, scale
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)

    def build(self, input_shape: Any) -> None:
        ndim = len(input_shape)
        self._axes = _axes(self.axis, ndim)
        shape = tuple(input_shape[a] for a in self._axes)
        self._bshape = tuple(input_shape[i] if i in self._axes else 1 for i in range(ndim))
        self.gamma = self.add_weight(shape, self.gamma_initializer, name="gamma", autocast=False,
                                     regularizer=self.gamma_regularizer,
                                     constraint=self.gamma_constraint) if self.scale else None
        self.beta = self.add_weight(shape, self.beta_initializer, name="beta", autocast=False,
                                    regularizer=self.beta_regularizer,
                                    constraint=self.beta_constraint) if self.center else None
        self.built = True

    _autocast = False  # Keras: inputs keep their dtype, math in float32 for float16

    def call(self, inputs: Tensor) -> Tensor:
        if inputs.dtype == dtypes.float16:
            inputs = mo.cast(inputs, "float32")
        return _to(self._normalize(inputs), self._compute)

    def _normalize(self, inputs: Tensor) -> Tensor:
        mean, var = nn.moments(inputs, self._axes, keepdims=True)
        inv = mo.rsqrt(var + self.epsilon)
        out = (inputs - mean) * inv
        if self.gamma is not None:
            out = out * ao.reshape(self.gamma.value(), self._bshape)
        if self.beta is not None:
            out = out + ao.reshape(self.beta.value(), self._bshape)
        return out
