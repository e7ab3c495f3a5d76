"""Keras 3's GroupNormalization and RMSNormalization, and the 3-D global poolings."""

from __future__ import annotations

from typing import Any

from tapeflow.framework import dtypes
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow import nn
from tapeflow.keras import constraints, initializers, regularizers
from tapeflow.keras.layers.base import Layer
from tapeflow.keras.layers.conv import _channels_last
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo

__all__ = ["GroupNormalization", "RMSNormalization", "GlobalAveragePooling3D", "GlobalMaxPooling3D", "AlphaDropout",
           "CenterCrop"]


class GroupNormalization(Layer):
    """Normalizes over groups of ``groups`` channels along ``axis`` (each sample's mean and variance over the
    group's channels and all other non-batch axes), then scales by ``gamma`` and shifts by ``beta`` per channel;
    ``groups=-1`` is instance normalization (one channel per group)."""

    _supports_masking = True
    _autocast = False  # Keras: computed in at least float32, returned in the compute dtype

    def __init__(self, groups: int = 32, axis: int = -1, epsilon: float = 0.001, center: bool = True,
                 scale: bool = True, beta_initializer: Any = "zeros", gamma_initializer: Any = "ones",
                 beta_regularizer: Any = None, gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, **kwargs: Any) -> None:
        if not isinstance(groups, int) or (groups <= 0 and groups != -1):
            raise ValueError("Received an invalid value for argument `groups`, expected a positive integer (or `-1` "
                             f"for instance normalization). Received: groups={groups}")
        super().__init__(**kwargs)
        self.groups, self.axis, self.epsilon, self.center, self.scale = groups, axis, epsilon, center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)

    def build(self, input_shape: Any) -> None:
        dim = input_shape[self.axis]
        if dim is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined dimension but the layer "
                             f"received an input with shape {tuple(input_shape)}.")
        if self.groups == -1:
            self.groups = dim
        if dim < self.groups:
            raise ValueError(f"Number of groups ({self.groups}) cannot be more than the number of channels ({dim}).")
        if dim % self.groups != 0:
            raise ValueError(f"Number of groups ({self.groups}) must be a multiple of the number of channels "
                             f"({dim}).")
        self.gamma = self.add_weight(shape=(dim,), name="gamma", initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer, constraint=self.gamma_constraint,
                                     autocast=False) if self.scale else None
        self.beta = self.add_weight(shape=(dim,), name="beta", initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer, constraint=self.beta_constraint,
                                    autocast=False) if self.center else None
        self.built = True

    def call(self, inputs: Tensor) -> Tensor:
        shape = inputs._shape_tuple()
        rank = len(shape)
        axis = self.axis % rank
        dynamic = ao.shape(inputs)
        group_shape = [-1] + [d if d is not None else dynamic[i + 1] for i, d in enumerate(shape[1:])]
        group_shape[axis] = shape[axis] // self.groups
        group_shape.insert(axis, self.groups)
        x = ao.reshape(inputs, ao.stack(group_shape) if any(isinstance(d, Tensor) for d in group_shape)
                       else group_shape)
        in_dtype = x.dtype
        if in_dtype == dtypes.float16:
            x = mo.cast(x, dtypes.float32)
        reduce_axes = [a for a in range(1, rank + 1) if a != axis]  # every axis but the batch and the groups
        mean, var = nn.moments(x, reduce_axes, keepdims=True)
        inv = mo.rsqrt(var + self.epsilon)
        bshape = [1] * (rank + 1)
        bshape[axis], bshape[axis + 1] = self.groups, shape[axis] // self.groups
        if self.gamma is not None:
            inv = inv * mo.cast(ao.reshape(self.gamma.value(), bshape), x.dtype)
        shift = -mean * inv
        if self.beta is not None:
            shift = shift + mo.cast(ao.reshape(self.beta.value(), bshape), x.dtype)
        out = mo.cast(x * inv + shift, in_dtype) if x.dtype != in_dtype else x * inv + shift
        out = ao.reshape(out, dynamic)
        return out if out.dtype == self._compute else mo.cast(out, self._compute)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape


class RMSNormalization(Layer):
    """``x * rsqrt(mean(x**2 over axis) + epsilon) * scale`` (Zhang and Sennrich's RMSNorm)."""

    def __init__(self, axis: Any = -1, epsilon: float = 1e-06, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis, self.epsilon = axis, epsilon

    def build(self, input_shape: Any) -> None:
        if isinstance(self.axis, (list, tuple)):
            self.axis = sorted(self.axis)
            shape = tuple(input_shape[a] for a in self.axis)
        else:
            shape = (input_shape[self.axis],)
            self.axis = [self.axis]
        self.scale = self.add_weight(name="scale", shape=shape, initializer="ones")
        self.built = True

    def call(self, x: Tensor) -> Tensor:
        in_dtype = x.dtype
        if in_dtype == dtypes.float16:
            x = mo.cast(x, dtypes.float32)
        rrms = mo.rsqrt(mo.reduce_mean(mo.square(x), axis=self.axis, keepdims=True) + self.epsilon)
        out = x * rrms * mo.cast(self.scale.value(), x.dtype)
        return out if out.dtype == in_dtype else mo.cast(out, in_dtype)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape


def _check_ndim5(layer: Any, inputs: Any) -> None:
    shape = inputs._shape_tuple()
    if len(shape) != 5:
        raise ValueError(f"Input 0 with name 'None' of layer '{layer.name}'"
                         f" is incompatible with the layer: expected ndim=5, "
                         f"found ndim={len(shape)}. Full shape received: {tuple(shape)}")


class _GlobalPool3D(Layer):
    _keras_built_at_init = True  # Keras writes no build_config for it

    def __init__(self, data_format: Any = None, keepdims: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _channels_last(data_format)
        self.keepdims = keepdims


class GlobalAveragePooling3D(_GlobalPool3D):
    """The mean over the three spatial axes of (batch, d1, d2, d3, channels) inputs."""

    def call(self, inputs: Tensor) -> Tensor:
        _check_ndim5(self, inputs)
        return mo.reduce_mean(inputs, axis=[1, 2, 3], keepdims=self.keepdims)


class GlobalMaxPooling3D(_GlobalPool3D):
    """The maximum over the three spatial axes of (batch, d1, d2, d3, channels) inputs."""

    def call(self, inputs: Tensor) -> Tensor:
        _check_ndim5(self, inputs)
        return mo.reduce_max(inputs, axis=[1, 2, 3], keepdims=self.keepdims)


class AlphaDropout(Layer):
    """Dropout that keeps SELU's self-normalization: in training, dropped units become SELU's negative
    saturation ``-alpha * scale`` and the result is rescaled by Keras's ``a * x + b`` so mean and variance stay.
    As tf.keras's (Keras 3.15's legacy layer): ``rate`` is not validated, the config holds ``rate`` and ``seed``."""

    _keras_built_at_init = True  # Keras writes no build_config for it
    _keras_module = "keras._legacy.layers"
    _supports_masking = True

    def __init__(self, rate: float, noise_shape: Any = None, seed: int | None = None, **kwargs: Any) -> None:
        from tapeflow.keras.layers.extra import _keras_seed_draw

        super().__init__(**kwargs)
        self.rate, self.seed, self.noise_shape = rate, seed, noise_shape
        if seed is None:  # (its SeedGenerator draws a seed whatever the rate)
            _keras_seed_draw()

    def call(self, inputs: Tensor, training: Any = None) -> Tensor:
        if not (training and self.rate > 0):
            return inputs
        from tapeflow.keras.layers.extra import _dyn_shape, _noise_draw

        shape = _dyn_shape(inputs) if self.noise_shape is None else self.noise_shape
        alpha_p = -1.6732632423543772 * 1.0507009873554805
        kept = mo.cast(mo.greater_equal(_noise_draw("uniform", shape, inputs.dtype, self.seed), self.rate),
                       inputs.dtype)
        a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        return a * (inputs * kept + alpha_p * (1.0 - kept)) + b

    def get_config(self) -> dict:
        from tapeflow.keras.saving.serialization import base_config

        return {**base_config(self), "rate": self.rate, "seed": self.seed}

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape


class ThresholdedReLU(Layer):
    """``x`` where ``x > theta``, else 0 (tf.keras's legacy layer, as Keras 3.15 keeps it: ``theta`` is a
    tensor of the compute dtype, the config holds it as a float)."""

    _keras_module = "keras._legacy.layers"
    _supports_masking = True

    def __init__(self, theta: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if theta is None:
            raise ValueError(f"Theta of a Thresholded ReLU layer cannot be None, expecting a float. Received: {theta}")
        if theta < 0:
            raise ValueError(f"The theta value of a Thresholded ReLU layer should be >=0. Received: {theta}")
        self.theta = convert_to_tensor(theta, dtype=self.compute_dtype)

    def call(self, inputs: Tensor) -> Tensor:
        return inputs * mo.cast(mo.greater(inputs, self.theta), self.compute_dtype)

    def get_config(self) -> dict:
        from tapeflow.keras.saving.serialization import base_config

        return {**base_config(self), "theta": float(self.theta)}

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape


class CenterCrop(Layer):
    """The central ``height`` x ``width`` window of (batch,) height, width, channels images, in the compute dtype;
    images smaller than the target are not implemented (Keras resizes them with ``smart_resize``)."""

    _data_layer = True  # Keras 3 DataLayer: in a TF graph, inputs in the compute dtype first
    _keras_built_at_init = True

    def __init__(self, height: int, width: int, data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _channels_last(data_format)
        self.height, self.width, self.data_format = height, width, "channels_last"

    def call(self, inputs: Tensor) -> Tensor:
        x = mo.cast(inputs, self._compute) if inputs.dtype != self._compute else inputs
        shape = x._shape_tuple()
        if len(shape) not in (3, 4):
            raise ValueError(f"CenterCrop expects 3D (unbatched) or 4D (batched) images. Received: shape={shape}")
        h, w = shape[-3], shape[-2]
        if h is None or w is None:
            from tapeflow.framework.errors import NotImplementedInTapeflowError

            raise NotImplementedInTapeflowError("CenterCrop of images of unknown height/width is not implemented "
                                                "in tapeflow")
        dh, dw = h - self.height, w - self.width
        if dh < 0 or dw < 0:
            from tapeflow.framework.errors import NotImplementedInTapeflowError

            raise NotImplementedInTapeflowError(
                f"CenterCrop({self.height}, {self.width}) of {h}x{w} images (smaller than the target: Keras resizes "
                "them) is not implemented in tapeflow")
        hs, ws = dh // 2, dw // 2
        if len(shape) == 4:
            return x[:, hs:hs + self.height, ws:ws + self.width, :]
        return x[hs:hs + self.height, ws:ws + self.width, :]

    def compute_output_shape(self, input_shape: Any) -> Any:
        shape = list(input_shape)
        if len(shape) not in (3, 4):
            raise ValueError("`input_shape` must be a non-nested tuple or list of rank-1 with size 3 (unbatched) or 4 "
                             "(batched). ")
        shape[-3], shape[-2] = self.height, self.width
        return tuple(shape)


def _triple(v: Any, name: str) -> tuple:
    t = (int(v),) * 3 if isinstance(v, int) else tuple(int(e) for e in v)
    if len(t) != 3:
        raise ValueError(f"The `{name}` argument must be a tuple of 3 integers. Received {name}={v}")
    return t


class _Pool3D(Layer):
    _keras_built_at_init = True  # Keras writes no build_config for it
    _kind = "max"

    def __init__(self, pool_size: Any = (2, 2, 2), strides: Any = None, padding: str = "valid",
                 data_format: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _channels_last(data_format)
        self.pool_size = _triple(pool_size, "pool_size")
        self.strides = self.pool_size if strides is None else _triple(strides, "strides")
        padding = str(padding).lower()
        if padding not in ("valid", "same"):
            raise ValueError(f"The `padding` argument must be a list/tuple or one of `valid`, `same`, or `causal`. "
                             f"Received: {padding}")
        self.padding, self.data_format = padding, "channels_last"

    def call(self, inputs: Tensor) -> Tensor:
        _check_ndim5(self, inputs)
        fn = nn.max_pool3d if self._kind == "max" else nn.avg_pool3d
        return fn(inputs, ksize=self.pool_size, strides=self.strides, padding=self.padding.upper())

    def get_config(self) -> dict:
        from tapeflow.keras.saving.serialization import base_config

        return {**base_config(self), "pool_size": self.pool_size, "padding": self.padding, "strides": self.strides,
                "data_format": "channels_last"}


class MaxPooling3D(_Pool3D):
    """Max over ``pool_size`` windows of (batch, d1, d2, d3, channels) inputs (stride defaults to the pool size)."""

    _kind = "max"


class AveragePooling3D(_Pool3D):
    """Mean over ``pool_size`` windows of (batch, d1, d2, d3, channels) inputs; 'same' padding averages the real
    elements only."""

    _kind = "avg"

    def __init__(self, pool_size: Any, strides: Any = None, padding: str = "valid", data_format: Any = None,
                 **kwargs: Any) -> None:  # pool_size has no default here (Keras 3)
        super().__init__(pool_size, strides, padding, data_format, **kwargs)
