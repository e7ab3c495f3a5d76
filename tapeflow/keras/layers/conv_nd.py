"""More convolution layers (channels_last, Keras 3's arguments, weight names and shapes):
``Conv3D``, ``Conv1DTranspose``/``Conv2DTranspose``/``Conv3DTranspose``,
``DepthwiseConv1D``/``DepthwiseConv2D`` and ``SeparableConv1D``/``SeparableConv2D``.

1-D layers run as their 2-D versions on a height-1 image; transposed convolutions run the
``Conv2DBackpropInput``/``Conv3DBackpropInputV2`` ops (the gradients of a convolution), as TF does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow import nn
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor
from tapeflow.keras import activations, constraints, initializers, regularizers
from tapeflow.keras.saving.serialization import base_config
from tapeflow.keras.layers.base import Layer
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo
from tapeflow.ops.nn import conv as nn_conv

__all__ = [
    "Conv3D",
    "Conv1DTranspose",
    "Conv2DTranspose",
    "Conv3DTranspose",
    "DepthwiseConv1D",
    "DepthwiseConv2D",
    "SeparableConv1D",
    "SeparableConv2D",
]


def serialize(obj: Any) -> Any:
    """Keras-style config value of an initializer / regularizer / constraint (None stays None)."""
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if hasattr(obj, "get_config"):
        from tapeflow.keras.saving.serialization import serialize_keras_object

        return serialize_keras_object(obj)
    return obj


def ntuple(v: Any, n: int, what: str, allow_zero: bool = False) -> tuple:
    """An int or n ints as an n-tuple of positive ints, with Keras' error for anything else."""
    given = v
    try:
        v = (int(v),) * n if isinstance(v, (int, np.integer)) else tuple(int(a) for a in v)
    except (TypeError, ValueError):
        raise ValueError(f"The `{what}` argument must be a tuple of {n} integers. Received: {what}={given!r}") from None
    if len(v) != n:
        raise ValueError(f"The `{what}` argument must be a tuple of {n} integers. Received: {what}={given!r}")
    bad = {a for a in v if a < 0 or (a == 0 and not allow_zero)}
    if bad:
        cond = "value >= 0" if allow_zero else "value > 0"
        raise ValueError(
            f"The `{what}` argument must be a tuple of {n} integers. Received {what}={given}, "
            f"including values {bad} that do not satisfy `{cond}`"
        )
    return v


def check_ndim(layer: Layer, shape: Any, ndim: int, minimum: bool = False) -> None:
    """Keras's input-spec check of the rank (``minimum``: a convolution's ``min_ndim``, reported when
    the input has fewer dimensions)."""
    shape = tuple(shape)
    if len(shape) != ndim:
        kind = "min_ndim" if minimum and len(shape) < ndim else "ndim"
        raise ValueError(
            f"Input 0 with name 'None' of layer '{layer.name}' is incompatible with the layer: expected {kind}={ndim}, "
            f"found ndim={len(shape)}. Full shape received: {shape}"
        )


def _check_channels(layer: Layer, inputs: Tensor, cin: int) -> None:
    if inputs._shape_tuple()[-1] not in (None, cin):
        raise ValueError(
            f"Input 0 with name 'None' of layer '{layer.name}' is incompatible with the layer: expected axis -1 of "
            f"input shape to have value {cin}, but received input with shape {inputs.shape}"
        )


def _padding(p: Any, allow_causal: bool = False) -> str:
    p = str(p).lower()
    allowed = ("valid", "same", "causal") if allow_causal else ("valid", "same")
    if p not in allowed:
        raise ValueError(
            f"The `padding` argument must be one of {', '.join(map(repr, allowed))}. Received: padding={p}"
        )
    return p


def _channels_last(data_format: Any) -> str:
    if data_format not in (None, "channels_last"):
        raise NotImplementedError(f"data_format={data_format!r}: tapeflow's Keras supports channels_last only")
    return "channels_last"


class _BaseConv(Layer):
    """Shared arguments of the N-D convolutions."""

    rank = 2

    def __init__(
        self,
        filters: int | None,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: Any = None,
        dilation_rate: Any = 1,
        activation: Any = None,
        use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None,
        bias_regularizer: Any = None,
        activity_regularizer: Any = None,
        kernel_constraint: Any = None,
        bias_constraint: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        n = self.rank
        if filters is not None and (not isinstance(filters, (int, np.integer)) or filters <= 0):
            raise ValueError(
                f"Invalid value for argument `filters`. Expected a strictly positive value. Received filters={filters}."
            )
        self.filters = None if filters is None else int(filters)
        self.kernel_size = ntuple(kernel_size, n, "kernel_size")
        self.strides = ntuple(strides, n, "strides")
        self.dilation_rate = ntuple(dilation_rate, n, "dilation_rate")
        self.padding = _padding(padding)
        self.data_format = _channels_last(data_format)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer) if kernel_regularizer else None
        self.bias_regularizer = regularizers.get(bias_regularizer) if bias_regularizer else None
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

    def _add_bias(self, units: int) -> None:
        self.bias = (
            self.add_weight(
                name="bias",
                shape=(units,),
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
            if self.use_bias
            else None
        )

    def _finish(self, y: Tensor) -> Tensor:
        if self.bias is not None:
            y = mo.add(y, self.bias.value())
        return self.activation(y)

    def get_config(self) -> dict:
        return {
            **base_config(self),
            "filters": self.filters,
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "data_format": self.data_format,
            "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": serialize(self.kernel_initializer),
            "bias_initializer": serialize(self.bias_initializer),
            "kernel_regularizer": serialize(self.kernel_regularizer),
            "bias_regularizer": serialize(self.bias_regularizer),
            "activity_regularizer": serialize(self.activity_regularizer),
            "kernel_constraint": serialize(self.kernel_constraint),
            "bias_constraint": serialize(self.bias_constraint),
        }


class Conv3D(_BaseConv):
    """3-D convolution over ``(batch, d, h, w, channels)``; kernel ``(kd, kh, kw, in // groups, filters)``."""

    rank = 3

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = (1, 1, 1),
        padding: str = "valid",
        data_format: Any = None,
        dilation_rate: Any = (1, 1, 1),
        groups: int = 1,
        **kwargs: Any,
    ) -> None:
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate, **kwargs)
        if groups != 1:
            raise NotImplementedError("Conv3D(groups > 1) is not implemented in tapeflow")
        self.groups = 1

    def build(self, input_shape: Any) -> None:
        check_ndim(self, input_shape, 5, minimum=True)
        self.kernel = self.add_weight(
            name="kernel",
            shape=self.kernel_size + (input_shape[-1], self.filters),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self._add_bias(self.filters)
        self.built = True

    def call(self, inputs: Tensor) -> Tensor:
        check_ndim(self, inputs._shape_tuple(), 5, minimum=True)
        _check_channels(self, inputs, self.kernel._shape_tuple()[3])
        y = nn.conv3d(
            inputs,
            self.kernel.value(),
            strides=(1,) + self.strides + (1,),
            padding=self.padding.upper(),
            dilations=(1,) + self.dilation_rate + (1,),
        )
        return self._finish(y)

    def get_config(self) -> dict:
        config = super().get_config()
        i = list(config).index("dilation_rate") + 1  # Keras's place for groups
        items = list(config.items())
        return dict(items[:i] + [("groups", self.groups)] + items[i:])


def conv_transpose_length(
    size: int | None, k: int, padding: str, output_padding: int | None, stride: int, dilation: int
) -> int | None:
    """Keras' output length of a transposed convolution."""
    if size is None:
        return None
    k = k + (k - 1) * (dilation - 1)
    if output_padding is None:
        return size * stride + max(k - stride, 0) if padding == "valid" else size * stride
    pad = k // 2 if padding == "same" else 0
    return (size - 1) * stride + k - 2 * pad + output_padding


class _ConvTranspose(_BaseConv):
    """Transposed convolution: kernel ``(*kernel_size, filters, in_channels)``."""

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        output_padding: Any = None,
        data_format: Any = None,
        dilation_rate: Any = 1,
        **kwargs: Any,
    ) -> None:
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate, **kwargs)
        self.output_padding = (
            None if output_padding is None else ntuple(output_padding, self.rank, "output_padding", allow_zero=True)
        )
        if self.output_padding is not None:
            for p, s in zip(self.output_padding, self.strides):
                if p >= s:
                    raise ValueError(
                        f"Strides must be greater than output padding. Received strides="
                        f"{self.strides}, output_padding={self.output_padding}."
                    )

    def build(self, input_shape: Any) -> None:
        check_ndim(self, input_shape, self.rank + 2, minimum=True)
        if input_shape[-1] is None:
            raise ValueError(
                f"The channel dimension of the inputs to `{type(self).__name__}` should be defined. "
                f"Found input shape {tuple(input_shape)}."
            )
        self.kernel = self.add_weight(
            name="kernel",
            shape=self.kernel_size + (self.filters, input_shape[-1]),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self._add_bias(self.filters)
        self.built = True

    def _out_spatial(self, spatial: tuple) -> tuple:
        op = self.output_padding or (None,) * self.rank
        return tuple(
            conv_transpose_length(s, k, self.padding, p, st, d)
            for s, k, p, st, d in zip(spatial, self.kernel_size, op, self.strides, self.dilation_rate)
        )

    def call(self, inputs: Tensor) -> Tensor:
        check_ndim(self, inputs._shape_tuple(), self.rank + 2, minimum=True)
        _check_channels(self, inputs, self.kernel._shape_tuple()[-1])
        x, w = inputs, self.kernel.value()
        strides, dilations, ksize = self.strides, self.dilation_rate, self.kernel_size
        if self.rank == 1:  # as a 2-D transposed convolution of height 1
            x, w = ao.expand_dims(x, 1), ao.expand_dims(w, 0)
            strides, dilations, ksize = (1,) + strides, (1,) + dilations, (1,) + ksize
        spatial = tuple(x._shape_tuple()[1:-1])
        if None in spatial:
            raise NotImplementedError(
                f"{type(self).__name__}: inputs of unknown spatial size {inputs.shape} are "
                f"not supported in tapeflow (only the batch may be unknown)"
            )
        out_sp = (1,) + self._out_spatial(spatial[1:]) if self.rank == 1 else self._out_spatial(spatial)
        pad = self.padding.upper()
        op = nn_conv.CONV2D_BACKPROP_INPUT if len(spatial) == 2 else nn_conv.CONV3D_BACKPROP_INPUT
        y = execute(
            op,
            (w, x),
            {
                "input_sizes": (-1,) + out_sp + (self.filters,),
                "strides": strides,
                "dilations": dilations,
                "padding": pad,
            },
        )
        if self.rank == 1:
            y = ao.squeeze(y, [1])
        return self._finish(y)

    def get_config(self) -> dict:
        config = super().get_config()
        config["output_padding"] = self.output_padding
        keys = ["name", "trainable", "dtype", "filters", "kernel_size", "strides", "padding", "output_padding"]
        return {k: config[k] for k in keys} | {k: v for k, v in config.items() if k not in keys}


class Conv1DTranspose(_ConvTranspose):
    """Transposed 1-D convolution (``(batch, steps, channels)``); kernel ``(k, filters, in)``."""

    rank = 1


class Conv2DTranspose(_ConvTranspose):
    """Transposed 2-D convolution ("deconvolution", the upsampling layer of DCGAN generators and
    decoders); kernel ``(kh, kw, filters, in)``; output size ``in * stride`` with ``padding="same"``."""

    rank = 2

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = (1, 1),
        padding: str = "valid",
        output_padding: Any = None,
        data_format: Any = None,
        dilation_rate: Any = (1, 1),
        **kwargs: Any,
    ) -> None:
        super().__init__(filters, kernel_size, strides, padding, output_padding, data_format, dilation_rate, **kwargs)


class Conv3DTranspose(_ConvTranspose):
    """Transposed 3-D convolution; kernel ``(kd, kh, kw, filters, in)``."""

    rank = 3

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = (1, 1, 1),
        padding: str = "valid",
        output_padding: Any = None,
        data_format: Any = None,
        dilation_rate: Any = (1, 1, 1),
        **kwargs: Any,
    ) -> None:
        super().__init__(filters, kernel_size, strides, padding, output_padding, data_format, dilation_rate, **kwargs)


class _DepthwiseConv(_BaseConv):
    """Per-channel convolution: kernel ``(*kernel_size, in, depth_multiplier)``, bias ``in * multiplier``."""

    def __init__(
        self,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        depth_multiplier: int = 1,
        data_format: Any = None,
        dilation_rate: Any = 1,
        activation: Any = None,
        use_bias: bool = True,
        depthwise_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        depthwise_regularizer: Any = None,
        bias_regularizer: Any = None,
        activity_regularizer: Any = None,
        depthwise_constraint: Any = None,
        bias_constraint: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            None,
            kernel_size,
            strides,
            padding,
            data_format,
            dilation_rate,
            activation,
            use_bias,
            depthwise_initializer,
            bias_initializer,
            depthwise_regularizer,
            bias_regularizer,
            activity_regularizer,
            depthwise_constraint,
            bias_constraint,
            **kwargs,
        )
        if not isinstance(depth_multiplier, (int, np.integer)) or depth_multiplier <= 0:
            raise ValueError(
                f"Invalid value for argument `depth_multiplier`. Expected a strictly positive value. "
                f"Received depth_multiplier={depth_multiplier}."
            )
        self.depth_multiplier = int(depth_multiplier)

    def build(self, input_shape: Any) -> None:
        check_ndim(self, input_shape, self.rank + 2, minimum=True)
        cin = input_shape[-1]
        self.kernel = self.add_weight(
            name="kernel",
            shape=self.kernel_size + (cin, self.depth_multiplier),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self._add_bias(cin * self.depth_multiplier)
        self.built = True

    def call(self, inputs: Tensor) -> Tensor:
        check_ndim(self, inputs._shape_tuple(), self.rank + 2, minimum=True)
        _check_channels(self, inputs, self.kernel._shape_tuple()[-2])
        x, w, strides, dil = inputs, self.kernel.value(), self.strides, self.dilation_rate
        if self.rank == 1:
            x, w, strides, dil = ao.expand_dims(x, 1), ao.expand_dims(w, 0), (1,) + strides, (1,) + dil
        y = nn.depthwise_conv2d(x, w, strides=(1,) + strides + (1,), padding=self.padding.upper(), dilations=dil)
        if self.rank == 1:
            y = ao.squeeze(y, [1])
        return self._finish(y)

    def get_config(self) -> dict:
        c = super().get_config()
        return {
            "name": c["name"],
            "trainable": c["trainable"],
            "dtype": c["dtype"],
            "depth_multiplier": self.depth_multiplier,
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "data_format": self.data_format,
            "dilation_rate": self.dilation_rate,
            "activation": c["activation"],
            "use_bias": self.use_bias,
            "depthwise_initializer": c["kernel_initializer"],
            "bias_initializer": c["bias_initializer"],
            "depthwise_regularizer": c["kernel_regularizer"],
            "bias_regularizer": c["bias_regularizer"],
            "activity_regularizer": serialize(self.activity_regularizer),
            "depthwise_constraint": c["kernel_constraint"],
            "bias_constraint": c["bias_constraint"],
        }


class DepthwiseConv1D(_DepthwiseConv):
    """Per-channel 1-D convolution; kernel ``(k, in, depth_multiplier)``."""

    rank = 1


class DepthwiseConv2D(_DepthwiseConv):
    """Per-channel 2-D convolution; kernel ``(kh, kw, in, depth_multiplier)``."""

    rank = 2

    def __init__(
        self,
        kernel_size: Any,
        strides: Any = (1, 1),
        padding: str = "valid",
        depth_multiplier: int = 1,
        data_format: Any = None,
        dilation_rate: Any = (1, 1),
        **kwargs: Any,
    ) -> None:
        super().__init__(kernel_size, strides, padding, depth_multiplier, data_format, dilation_rate, **kwargs)


class _SeparableConv(_BaseConv):
    """A depthwise convolution then a 1x1 (pointwise) one: weights ``depthwise_kernel``
    ``(*kernel_size, in, depth_multiplier)``, ``pointwise_kernel`` ``(1.., in * multiplier, filters)``, ``bias``."""

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = 1,
        padding: str = "valid",
        data_format: Any = None,
        dilation_rate: Any = 1,
        depth_multiplier: int = 1,
        activation: Any = None,
        use_bias: bool = True,
        depthwise_initializer: Any = "glorot_uniform",
        pointwise_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        depthwise_regularizer: Any = None,
        pointwise_regularizer: Any = None,
        bias_regularizer: Any = None,
        activity_regularizer: Any = None,
        depthwise_constraint: Any = None,
        pointwise_constraint: Any = None,
        bias_constraint: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            filters,
            kernel_size,
            strides,
            padding,
            data_format,
            dilation_rate,
            activation,
            use_bias,
            depthwise_initializer,
            bias_initializer,
            depthwise_regularizer,
            bias_regularizer,
            activity_regularizer,
            depthwise_constraint,
            bias_constraint,
            **kwargs,
        )
        self.depth_multiplier = int(depth_multiplier)
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer) if pointwise_regularizer else None
        self.pointwise_constraint = constraints.get(pointwise_constraint)

    def build(self, input_shape: Any) -> None:
        check_ndim(self, input_shape, self.rank + 2, minimum=True)
        cin = input_shape[-1]
        self.depthwise_kernel = self.add_weight(
            name="depthwise_kernel",
            shape=self.kernel_size + (cin, self.depth_multiplier),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.pointwise_kernel = self.add_weight(
            name="pointwise_kernel",
            shape=(1,) * self.rank + (cin * self.depth_multiplier, self.filters),
            initializer=self.pointwise_initializer,
            regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint,
        )
        self._add_bias(self.filters)
        self.built = True

    def call(self, inputs: Tensor) -> Tensor:
        check_ndim(self, inputs._shape_tuple(), self.rank + 2, minimum=True)
        _check_channels(self, inputs, self.depthwise_kernel._shape_tuple()[-2])
        x, dw, pw = inputs, self.depthwise_kernel.value(), self.pointwise_kernel.value()
        strides, dil = self.strides, self.dilation_rate
        if self.rank == 1:
            x, dw, pw = ao.expand_dims(x, 1), ao.expand_dims(dw, 0), ao.expand_dims(pw, 0)
            strides, dil = (1,) + strides, (1,) + dil
        y = nn.separable_conv2d(x, dw, pw, strides=(1,) + strides + (1,), padding=self.padding.upper(), dilations=dil)
        if self.rank == 1:
            y = ao.squeeze(y, [1])
        return self._finish(y)

    def get_config(self) -> dict:
        c = super().get_config()
        return {
            "name": c["name"],
            "trainable": c["trainable"],
            "dtype": c["dtype"],
            "depth_multiplier": self.depth_multiplier,
            "filters": self.filters,
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "data_format": self.data_format,
            "dilation_rate": self.dilation_rate,
            "activation": c["activation"],
            "use_bias": self.use_bias,
            "depthwise_initializer": c["kernel_initializer"],
            "pointwise_initializer": serialize(self.pointwise_initializer),
            "bias_initializer": c["bias_initializer"],
            "depthwise_regularizer": c["kernel_regularizer"],
            "pointwise_regularizer": serialize(self.pointwise_regularizer),
            "bias_regularizer": c["bias_regularizer"],
            "activity_regularizer": serialize(self.activity_regularizer),
            "depthwise_constraint": c["kernel_constraint"],
            "pointwise_constraint": serialize(self.pointwise_constraint),
            "bias_constraint": c["bias_constraint"],
        }


class SeparableConv1D(_SeparableConv):
    """Depthwise-separable 1-D convolution."""

    rank = 1


class SeparableConv2D(_SeparableConv):
    """Depthwise-separable 2-D convolution."""

    rank = 2

    def __init__(
        self,
        filters: int,
        kernel_size: Any,
        strides: Any = (1, 1),
        padding: str = "valid",
        data_format: Any = None,
        dilation_rate: Any = (1, 1),
        **kwargs: Any,
    ) -> None:
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate, **kwargs)
