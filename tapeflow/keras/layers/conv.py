"""Convolution and pooling layers (channels_last, as Keras' default)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework.tensor import Tensor
from tapeflow import nn
from tapeflow.keras import activations, constraints, initializers, regularizers
from tapeflow.keras.layers.base import Layer
from tapeflow.keras.layers.conv_nd import check_ndim
from tapeflow.keras.saving.serialization import base_config, serialize_keras_object
from tapeflow.ops import math_ops as mo

__all__ = ["Conv2D", "MaxPooling2D", "AveragePooling2D", "GlobalAveragePooling2D", "GlobalMaxPooling2D"]


def _pair(v: Any, what: str) -> tuple[int, int]:
    given = v
    if isinstance(v, int):
        v = (v, v)
    else:
        try:
            v = tuple(int(a) for a in v)
        except (TypeError, ValueError):
            raise ValueError(f"The `{what}` argument must be a tuple of 2 integers. Received: {what}={given!r}") \
                from None
    if len(v) != 2:
        raise ValueError(f"The `{what}` argument must be a tuple of 2 integers. Received: {what}={v}")
    bad = {a for a in v if a <= 0}
    if bad:
        raise ValueError(f"The `{what}` argument must be a tuple of 2 integers. Received {what}={given}, "
                         f"including values {bad} that do not satisfy `value > 0`")
    return v


def _check_ndim4(layer: Any, inputs: Any) -> None:
    shape = inputs._shape_tuple()
    if len(shape) != 4:
        raise ValueError(f"Input 0 with name 'None' of layer '{layer.name}'"
                         f" is incompatible with the layer: expected ndim=4, "
                         f"found ndim={len(shape)}. Full shape received: {tuple(shape)}")


def _padding(p: str) -> str:
    p = p.lower()
    if p not in ("valid", "same"):
        raise ValueError(f"The `padding` argument must be one of 'valid', 'same'. Received: padding={p}")
    return p


def _channels_last(data_format: Any) -> None:
    if data_format not in (None, "channels_last"):
        raise NotImplementedError(f"data_format={data_format!r}: tapeflow's Keras supports channels_last only")


class Conv2D(Layer):
    """2-D convolution over NHWC inputs; kernel shape ``(kh, kw, in, filters)``."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                 data_format: Any = None, dilation_rate: Any = (1, 1), groups: int = 1, activation: Any = None,
                 use_bias: bool = True, kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None, **kwargs: Any) -> None:
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        _channels_last(data_format)
        if not isinstance(groups, (int, np.integer)) or groups <= 0:
            raise ValueError(f"The number of groups must be a positive integer. Received: groups={groups}.")
        self.groups = int(groups)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        if not isinstance(filters, (int, np.integer)) or filters <= 0:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. "
                             f"Received filters={filters}.")
        self.filters = int(filters)
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
        self.padding = _padding(padding)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

    def _config_geometry(self) -> dict:
        return {"kernel_size": self.kernel_size, "strides": self.strides, "padding": self.padding,
                "data_format": "channels_last", "dilation_rate": self.dilation_rate}

    def get_config(self) -> dict:
        ser = serialize_keras_object
        return {**base_config(self), "filters": self.filters, **self._config_geometry(), "groups": self.groups,
                "activation": activations.serialize(self.activation), "use_bias": self.use_bias,
                "kernel_initializer": ser(self.kernel_initializer), "bias_initializer": ser(self.bias_initializer),
                "kernel_regularizer": ser(self.kernel_regularizer), "bias_regularizer": ser(self.bias_regularizer),
                "activity_regularizer": ser(self.activity_regularizer),
                "kernel_constraint": ser(self.kernel_constraint), "bias_constraint": ser(self.bias_constraint)}

    def build(self, input_shape: Any) -> None:
        check_ndim(self, input_shape, 4, minimum=True)
        cin = self._group_channels(input_shape[-1])
        self.kernel = self.add_weight(name="kernel", shape=self.kernel_size + (cin, self.filters),
                                      initializer=self.kernel_initializer, constraint=self.kernel_constraint,
                                      regularizer=self.kernel_regularizer)
        self.bias = self.add_weight(name="bias", shape=(self.filters,), initializer=self.bias_initializer,
                                    constraint=self.bias_constraint, regularizer=self.bias_regularizer) \
            if self.use_bias else None
        self.built = True

    def _group_channels(self, cin: int) -> int:
        """Input channels per group (the kernel's second-to-last dim): ``cin // groups``."""
        if cin is not None and (cin % self.groups or self.filters % self.groups):
            raise ValueError(f"The number of input channels must be evenly divisible by the number of groups. "
                             f"Received groups={self.groups}, but the input has {cin} channels (full input "
                             f"shape is (None, {cin})); `filters` ({self.filters}) must be divisible too.")
        return cin // self.groups

    def _conv(self, x: Tensor, w: Tensor, **kw: Any) -> Tensor:
        """``nn.conv2d``, per group of channels when ``groups > 1`` (then concatenated)."""
        if self.groups == 1:
            return nn.conv2d(x, w, **kw)
        from tapeflow.ops import array_ops as ao

        xs = ao.split(x, self.groups, axis=-1)
        ws = ao.split(w, self.groups, axis=-1)
        return ao.concat([nn.conv2d(a, b, **kw) for a, b in zip(xs, ws)], axis=-1)

    def call(self, inputs: Tensor) -> Tensor:
        _check_ndim4(self, inputs)
        cin = self.kernel._shape_tuple()[2] * self.groups
        if inputs._shape_tuple()[-1] not in (None, cin):
            raise ValueError(f"Input 0 with name 'None' of layer '{self.name}'"
                             f" is incompatible with the layer: expected axis -1 of "
                             f"input shape to have value {cin}, but received input with shape {inputs.shape}")
        y = self._conv(inputs, self.kernel.value(), strides=self.strides, padding=self.padding.upper(),
                       dilations=self.dilation_rate)
        if self.bias is not None:
            y = mo.add(y, self.bias.value())
        return self.activation(y)


class Conv1D(Conv2D):
    """1-D convolution over ``(batch, steps, channels)``; kernel shape ``(k, in, filters)``; padding
    "valid", "same" or "causal" (left-padded). Runs as a 2-D convolution of height 1."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: Any = None, dilation_rate: Any = 1, groups: int = 1, **kwargs: Any) -> None:
        one = (lambda v: int(v[0]) if isinstance(v, (tuple, list)) else int(v))
        causal = isinstance(padding, str) and padding.lower() == "causal"
        super().__init__(filters, (1, one(kernel_size)), strides=(1, one(strides)),
                         padding="valid" if causal else padding, data_format=data_format,
                         dilation_rate=(1, one(dilation_rate)), groups=groups, **kwargs)
        self.causal = causal

    def _config_geometry(self) -> dict:  # Keras's 1-tuples, not the 2-D convolution's (1, k) that runs it
        return {"kernel_size": self.kernel_size[1:], "strides": self.strides[1:],
                "padding": "causal" if self.causal else self.padding, "data_format": "channels_last",
                "dilation_rate": self.dilation_rate[1:]}

    def build(self, input_shape: Any) -> None:
        if len(input_shape) != 3:
            raise ValueError(f"Input 0 with name 'None' of layer '{self.name}'"
                             f" is incompatible with the layer: expected ndim=3, "
                             f"found ndim={len(input_shape)}. Full shape received: {tuple(input_shape)}")
        cin = self._group_channels(input_shape[-1])
        self.kernel = self.add_weight(name="kernel", shape=(self.kernel_size[1], cin, self.filters),
                                      initializer=self.kernel_initializer, constraint=self.kernel_constraint,
                                      regularizer=self.kernel_regularizer)
        self.bias = self.add_weight(name="bias", shape=(self.filters,), initializer=self.bias_initializer,
                                    constraint=self.bias_constraint, regularizer=self.bias_regularizer) \
            if self.use_bias else None
        self.built = True

    def call(self, inputs: Tensor) -> Tensor:
        from tapeflow.ops.indexing_ops import pad
        from tapeflow.ops import array_ops as ao

        check_ndim(self, inputs._shape_tuple(), 3, minimum=True)
        if self.causal:
            left = self.dilation_rate[1] * (self.kernel_size[1] - 1)
            inputs = pad(inputs, [[0, 0], [left, 0], [0, 0]])
        y = self._conv(ao.expand_dims(inputs, 1), ao.expand_dims(self.kernel.value(), 0), strides=self.strides,
                      padding=self.padding.upper(), dilations=self.dilation_rate)
        y = ao.squeeze(y, [1])
        if self.bias is not None:
            y = mo.add(y, self.bias.value())
        return self.activation(y)


class _Pool1D(Layer):
    _keras_built_at_init = True  # Keras writes no build_config for it
    _kind = "max"

    def __init__(self, pool_size: Any = 2, strides: Any = None, padding: str = "valid", data_format: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _channels_last(data_format)
        one = (lambda v: int(v[0]) if isinstance(v, (tuple, list)) else int(v))
        self.pool_size = one(pool_size)
        self.strides = self.pool_size if strides is None else one(strides)
        self.padding = _padding(padding)

    def get_config(self) -> dict:
        return {**base_config(self), "pool_size": (self.pool_size,), "padding": self.padding,
                "strides": (self.strides,), "data_format": "channels_last"}

    def call(self, inputs: Tensor) -> Tensor:
        from tapeflow.ops import array_ops as ao

        _check_ndim3(self, inputs)
        fn = nn.max_pool2d if self._kind == "max" else nn.avg_pool2d
        y = fn(ao.expand_dims(inputs, 1), ksize=(1, self.pool_size), strides=(1, self.strides),
               padding=self.padding.upper())
        return ao.squeeze(y, [1])


class MaxPooling1D(_Pool1D):
    _kind = "max"


class AveragePooling1D(_Pool1D):
    _kind = "avg"

    def __init__(self, pool_size: Any, strides: Any = None, padding: str = "valid", data_format: Any = None,
                 **kwargs: Any) -> None:  # pool_size has no default here (Keras 3)
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class _Pool2D(Layer):
    _keras_built_at_init = True  # Keras writes no build_config for it
    _kind = "max"

    def __init__(self, pool_size: Any = (2, 2), strides: Any = None, padding: str = "valid", data_format: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _channels_last(data_format)
        self.pool_size = _pair(pool_size, "pool_size")
        self.strides = self.pool_size if strides is None else _pair(strides, "strides")
        self.padding = _padding(padding)

    def get_config(self) -> dict:
        return {**base_config(self), "pool_size": self.pool_size, "padding": self.padding, "strides": self.strides,
                "data_format": "channels_last"}

    def call(self, inputs: Tensor) -> Tensor:
        if len(inputs._shape_tuple()) != 4:
            raise ValueError(f"Input 0 with name 'None' of layer '{self.name}'"
                             f" is incompatible with the layer: expected ndim=4, "
                             f"found ndim={len(inputs._shape_tuple())}. Full shape received: {inputs.shape}")
        fn = nn.max_pool2d if self._kind == "max" else nn.avg_pool2d
        return fn(inputs, ksize=self.pool_size, strides=self.strides, padding=self.padding.upper())


class MaxPooling2D(_Pool2D):
    """Max over ``pool_size`` windows (stride defaults to the pool size)."""

    _kind = "max"


class AveragePooling2D(_Pool2D):
    """Mean over ``pool_size`` windows; with 'same' padding, over the real elements only."""

    _kind = "avg"

    def __init__(self, pool_size: Any, strides: Any = None, padding: str = "valid", data_format: Any = None,
                 **kwargs: Any) -> None:  # pool_size has no default here (Keras 3)
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class GlobalAveragePooling2D(Layer):
    _keras_built_at_init = True  # Keras writes no build_config for it

    def __init__(self, data_format: Any = None, keepdims: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _channels_last(data_format)
        self.keepdims = keepdims

    def call(self, inputs: Tensor) -> Tensor:
        _check_ndim4(self, inputs)
        return mo.reduce_mean(inputs, axis=[1, 2], keepdims=self.keepdims)


class GlobalMaxPooling2D(Layer):
    _keras_built_at_init = True  # Keras writes no build_config for it

    def __init__(self, data_format: Any = None, keepdims: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _channels_last(data_format)
        self.keepdims = keepdims

    def call(self, inputs: Tensor) -> Tensor:
        _check_ndim4(self, inputs)
        return mo.reduce_max(inputs, axis=[1, 2], keepdims=self.keepdims)


def _check_ndim3(layer: Any, inputs: Any) -> None:
    shape = inputs._shape_tuple()
    if len(shape) != 3:
        raise ValueError(f"Input 0 with name 'None' of layer '{layer.name}'"
                         f" is incompatible with the layer: expected ndim=3, "
                         f"found ndim={len(shape)}. Full shape received: {tuple(shape)}")


class GlobalAveragePooling1D(Layer):
    """Mean over the steps axis of ``(batch, steps, features)``; a ``mask`` ``(batch, steps)`` averages
    the unmasked steps only (as Keras)."""

    _keras_built_at_init = True  # Keras writes no build_config for it

    def __init__(self, data_format: Any = None, keepdims: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _channels_last(data_format)
        self.keepdims = keepdims

    def call(self, inputs: Tensor, mask: Any = None) -> Tensor:
        _check_ndim3(self, inputs)
        if mask is None:
            return mo.reduce_mean(inputs, axis=1, keepdims=self.keepdims)
        from tapeflow.ops import array_ops

        m = array_ops.expand_dims(mo.cast(mask, inputs.dtype), -1)
        return mo.reduce_sum(inputs * m, axis=1, keepdims=self.keepdims) / \
            mo.reduce_sum(m, axis=1, keepdims=self.keepdims)


class GlobalMaxPooling1D(Layer):
    _keras_built_at_init = True  # Keras writes no build_config for it

    def __init__(self, data_format: Any = None, keepdims: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _channels_last(data_format)
        self.keepdims = keepdims

    def call(self, inputs: Tensor) -> Tensor:
        _check_ndim3(self, inputs)
        return mo.reduce_max(inputs, axis=1, keepdims=self.keepdims)


MaxPool2D, AvgPool2D = MaxPooling2D, AveragePooling2D
