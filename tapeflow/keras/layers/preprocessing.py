"""Preprocessing layers: Normalization (``adapt``), Rescaling, Resizing."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.keras.saving.serialization import base_config
from tapeflow.keras.layers.base import Layer
from tapeflow.ops import math_ops as mo

__all__ = ["Normalization", "Rescaling", "Resizing"]

_EPSILON = 1e-7  # keras.backend.epsilon()


class Normalization(Layer):
    """``(inputs - mean) / max(sqrt(variance), 1e-7)`` per position of ``axis`` (Keras 3), with
    ``mean``/``variance`` given or computed by ``adapt(data)``; ``invert=True`` undoes it."""

    _data_layer = True  # Keras 3 DataLayer: in a TF graph, inputs in the compute dtype first
    _allow_non_tensor_positional_args = True  # a Keras 3 TFDataLayer: Python lists are fine

    def __init__(self, axis: Any = -1, mean: Any = None, variance: Any = None, invert: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = () if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
        self.input_mean, self.input_variance, self.invert = mean, variance, invert
        self._build_input_shape = None
        self.mean = self.variance = None
        if (mean is not None) != (variance is not None):
            raise ValueError("When setting values directly, both `mean` and `variance` must be set. "
                             f"Received: mean={mean} and variance={variance}")
        if mean is not None and np.shape(mean) != np.shape(variance):
            raise ValueError("When setting values directly, `mean` and `variance` must have the same shape. "
                             f"Received: mean shape {np.shape(mean)} and variance shape {np.shape(variance)}")

    def build(self, input_shape: Any) -> None:
        input_shape = tuple(input_shape)
        ndim = len(input_shape)
        self._build_input_shape = input_shape
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise ValueError(f"All `axis` values must be in the range [-ndim, ndim). Received inputs with "
                             f"ndim={ndim}, while axis={self.axis}")
        self._keep_axis = tuple(sorted(d if d >= 0 else d + ndim for d in self.axis))
        for d in self._keep_axis:
            if input_shape[d] is None:
                raise ValueError(f"All `axis` values to be kept must have a known shape. Received axis={self.axis},"
                                 f" inputs.shape={input_shape}, with unknown axis at index {d}")
        self._reduce_axis = tuple(d for d in range(ndim) if d not in self._keep_axis)
        self._broadcast_shape = [input_shape[d] if d in self._keep_axis else 1 for d in range(ndim)]
        self._mean_and_var_shape = tuple(input_shape[d] for d in self._keep_axis)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(name="mean", shape=self._mean_and_var_shape, initializer="zeros",
                                              trainable=False)
            self.adapt_variance = self.add_weight(name="variance", shape=self._mean_and_var_shape,
                                                  initializer="ones", trainable=False)
            self.count = self.add_weight(name="count", shape=(), dtype="int64", initializer="zeros",
                                         trainable=False)
            self.built = True
            self.finalize_state()
        else:
            mean = np.asarray(self.input_mean, np.float32)
            variance = np.asarray(self.input_variance, np.float32)
            if mean.ndim:
                expanded = [1] * ndim
                for i in range(1, mean.ndim + 1):
                    expanded[self._keep_axis[-i]] = mean.shape[-i]
                mean, variance = mean.reshape(expanded), variance.reshape(expanded)
            self.mean = convert_to_tensor(np.broadcast_to(mean, self._broadcast_shape).copy())
            self.variance = convert_to_tensor(np.broadcast_to(variance, self._broadcast_shape).copy())
            self.built = True

    def adapt(self, data: Any) -> None:
        """Sets the mean and variance from ``data``: an array or tensor, or a batched ``tf.data.Dataset``
        or iterable of batches (combined batch by batch, as Keras)."""
        from tapeflow.data.dataset import Dataset

        if hasattr(data, "to_numpy") and type(data).__module__.startswith("pandas"):
            data = data.to_numpy()
        if isinstance(data, (list, tuple)):
            data = np.asarray(data)
        if isinstance(data, (Tensor, np.ndarray)):
            arr = np.asarray(data.numpy() if isinstance(data, Tensor) else data)
            if not self.built:
                self.build(arr.shape)
                # summary() of a model not yet called shows adapt's shape, as Keras
                self._built_output_shape, self._shape_provisional = tuple(arr.shape), True
            total_mean = np.mean(arr, axis=self._reduce_axis)
            total_var = np.var(arr, axis=self._reduce_axis)
        else:
            if isinstance(data, Dataset) and len(data.element_spec.shape if not isinstance(data.element_spec, tuple)
                                                 else data.element_spec[0].shape) == 1:
                data = data.batch(128)
            total_mean = total_var = None
            total_count = 0
            for batch in data:
                batch = batch[0] if isinstance(batch, tuple) else batch
                batch = np.asarray(batch.numpy() if hasattr(batch, "numpy") else batch, np.float32)
                if not self.built:
                    self.build((None,) + batch.shape[1:])
                if total_mean is None:
                    total_mean = np.zeros(self._mean_and_var_shape, np.float32)
                    total_var = np.zeros(self._mean_and_var_shape, np.float32)
                batch_mean = np.mean(batch, axis=self._reduce_axis)
                batch_var = np.var(batch, axis=self._reduce_axis)
                batch_count = int(np.prod([batch.shape[d] for d in self._reduce_axis])) if self._reduce_axis else 1
                total_count += batch_count
                batch_weight = float(batch_count) / total_count
                existing_weight = 1.0 - batch_weight
                new_total_mean = total_mean * existing_weight + batch_mean * batch_weight
                total_var = (total_var + (total_mean - new_total_mean) ** 2) * existing_weight + \
                    (batch_var + (batch_mean - new_total_mean) ** 2) * batch_weight
                total_mean = new_total_mean
            if total_mean is None:
                raise ValueError("adapt() received an empty iterable (no batches).")
        if self.input_mean is not None:
            raise ValueError("Normalization: adapt() cannot change a `mean`/`variance` given to the constructor.")
        self.adapt_mean.assign(np.asarray(total_mean, np.float32))
        self.adapt_variance.assign(np.asarray(total_var, np.float32))
        self.finalize_state()

    def finalize_state(self) -> None:
        if self.input_mean is not None or not self.built:
            return
        from tapeflow.ops import array_ops as ao

        self.mean = ao.reshape(self.adapt_mean.value(), self._broadcast_shape)
        self.variance = ao.reshape(self.adapt_variance.value(), self._broadcast_shape)

    def call(self, inputs: Tensor) -> Tensor:
        if self.mean is None:
            raise ValueError("You must call `.build(input_shape)` on the layer before using it.")
        if inputs.dtype != self._dtype:
            inputs = mo.cast(inputs, self._dtype)
        std = mo.maximum(mo.sqrt(self.variance), _EPSILON)
        if self.invert:
            return self.mean + inputs * std
        return (inputs - self.mean) / std

    def get_config(self) -> dict:
        return {**base_config(self), "axis": self.axis, "invert": self.invert,
                "mean": np.array(self.input_mean).tolist(), "variance": np.array(self.input_variance).tolist()}


class Rescaling(Layer):
    """``inputs * scale + offset`` (e.g. ``Rescaling(1./255)`` for images)."""

    _data_layer = True  # Keras 3 DataLayer: in a TF graph, inputs in the compute dtype first
    _allow_non_tensor_positional_args = True  # a Keras 3 TFDataLayer: Python lists are fine

    def __init__(self, scale: Any, offset: Any = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset

    def call(self, inputs: Tensor) -> Tensor:
        if inputs.dtype != self._dtype:
            inputs = mo.cast(inputs, self._dtype)
        return inputs * mo.cast(self.scale, self._dtype) + mo.cast(self.offset, self._dtype)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"scale": self.scale, "offset": self.offset})
        return config


_RESIZE_INTERPOLATIONS = ("bilinear", "nearest", "lanczos3", "lanczos5", "bicubic", "area")


def resize_images(x: Tensor, size: tuple, interpolation: str = "bilinear", antialias: bool = False,
                  crop_to_aspect_ratio: bool = False, pad_to_aspect_ratio: bool = False, fill_mode: str = "constant",
                  fill_value: float = 0.0, data_format: str = "channels_last") -> Tensor:
    """Keras 3's image resize (TF backend), shared by ``Resizing`` and ``keras.ops.image.resize``: an optional
    central crop or even pad to the target's aspect ratio, ``tf.image.resize``, and integer images rounded and
    saturated back to their dtype."""
    from tapeflow.ops import array_ops as ao
    from tapeflow.ops import image_transform_ops

    if interpolation not in _RESIZE_INTERPOLATIONS:
        raise ValueError(f"Invalid value for argument `interpolation`. Expected of one {_RESIZE_INTERPOLATIONS}. "
                         f"Received: interpolation={interpolation}")
    if fill_mode != "constant":
        raise ValueError("Invalid value for argument `fill_mode`. Only `'constant'` is supported. Received: "
                         f"fill_mode={fill_mode}")
    if pad_to_aspect_ratio and crop_to_aspect_ratio:
        raise ValueError("Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be `True`.")
    rank = x.shape.rank
    if rank not in (3, 4):
        raise ValueError("Invalid images rank: expected rank 3 (single image) or rank 4 (batch of images). "
                         f"Received input with shape: images.shape={x.shape}")
    if data_format == "channels_first":
        x = ao.transpose(x, (0, 2, 3, 1) if rank == 4 else (1, 2, 0))
    if crop_to_aspect_ratio or pad_to_aspect_ratio:
        x = _to_aspect_ratio(x, rank, size, crop_to_aspect_ratio, fill_value)
    out = image_transform_ops.resize(x, tuple(size), method=interpolation, antialias=antialias)
    if data_format == "channels_first":
        out = ao.transpose(out, (0, 3, 1, 2) if rank == 4 else (2, 0, 1))
    if out.dtype == x.dtype:
        return out
    if x.dtype.is_integer:  # Keras's round then _saturate_cast
        return mo.saturate_cast(mo.round(out), x.dtype)
    return mo.cast(out, x.dtype)


def _to_aspect_ratio(x: Tensor, rank: int, size: tuple, crop: bool, fill_value: float) -> Tensor:
    """Keras's crop/pad to the target aspect ratio, in its int32/float32 arithmetic (works on unknown sizes)."""
    from tapeflow.ops import array_ops as ao
    from tapeflow.ops import indexing_ops

    height, width = size
    shape = ao.shape(x)
    h, w = shape[-3], shape[-2]

    def scaled(a: Tensor, num: int, den: int) -> Tensor:  # int32(float32(a * num) / den)
        return mo.cast(mo.cast(a * num, "float32") / float(den), "int32")

    def half(a: Tensor) -> Tensor:
        return mo.cast(mo.cast(a, "float32") / 2.0, "int32")

    lead = [slice(None)] * (rank - 3)
    if crop:
        ch = mo.maximum(mo.minimum(h, scaled(w, height, width)), 1)
        cw = mo.maximum(mo.minimum(w, scaled(h, width, height)), 1)
        hs, ws = half(h - ch), half(w - cw)
        return x[tuple(lead + [slice(hs, hs + ch), slice(ws, ws + cw), slice(None)])]
    ph = mo.maximum(h, scaled(w, height, width))
    pw = mo.maximum(w, scaled(h, width, height))
    hs, ws = half(ph - h), half(pw - w)
    zero = mo.cast(0, "int32")
    pads = ao.stack([ao.stack([zero, zero])] * (rank - 3) + [ao.stack([hs, hs]), ao.stack([ws, ws]),
                                                             ao.stack([zero, zero])])
    return indexing_ops.pad(x, pads, constant_values=mo.cast(fill_value, x.dtype))


class Resizing(Layer):
    """Resizes ``(batch,) height, width, channels`` images to ``height`` x ``width`` with ``tf.image.resize``.

    As Keras 3 (TF backend): float inputs take the layer's compute dtype, integer images keep theirs
    (rounded, saturating); ``crop_to_aspect_ratio`` first crops the largest central window of the target's
    aspect ratio, ``pad_to_aspect_ratio`` pads the short side evenly with ``fill_value``. Every
    ``tf.image.resize`` interpolation and ``antialias`` work (the kernel-filter ones need static image sizes).

    >>> tf.keras.layers.Resizing(2, 3)(tf.ones((4, 5, 1))).shape
    TensorShape([2, 3, 1])
    """

    _data_layer = True  # Keras 3 DataLayer: in a TF graph, inputs in the compute dtype first
    _allow_non_tensor_positional_args = True  # a Keras 3 TFDataLayer: NumPy arrays are fine

    def __init__(self, height: int, width: int, interpolation: str = "bilinear", crop_to_aspect_ratio: bool = False,
                 pad_to_aspect_ratio: bool = False, fill_mode: str = "constant", fill_value: float = 0.0,
                 antialias: bool = False, data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.height, self.width, self.interpolation = height, width, interpolation
        self.data_format = "channels_last" if data_format is None else data_format
        if self.data_format not in ("channels_last", "channels_first"):
            raise ValueError("The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
                             f"Received: data_format={data_format}")
        self.crop_to_aspect_ratio, self.pad_to_aspect_ratio = crop_to_aspect_ratio, pad_to_aspect_ratio
        self.fill_mode, self.fill_value, self.antialias = fill_mode, fill_value, bool(antialias)

    def call(self, inputs: Any) -> Tensor:
        x = inputs if isinstance(inputs, Tensor) else convert_to_tensor(inputs)
        if x.dtype.is_floating and x.dtype != self._compute:
            x = mo.cast(x, self._compute)
        return resize_images(x, (self.height, self.width), self.interpolation, self.antialias,
                             self.crop_to_aspect_ratio, self.pad_to_aspect_ratio, self.fill_mode, self.fill_value,
                             self.data_format)

    def compute_output_shape(self, input_shape: Any) -> Any:
        shape = list(input_shape)
        if len(shape) == 4:
            i = 1 if self.data_format == "channels_last" else 2
        else:
            i = 0 if self.data_format == "channels_last" else 1
        shape[i], shape[i + 1] = self.height, self.width
        return tuple(shape)

    def get_config(self) -> dict:
        return {**base_config(self), "data_format": self.data_format, "height": self.height, "width": self.width,
                "interpolation": self.interpolation, "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
                "pad_to_aspect_ratio": self.pad_to_aspect_ratio, "fill_mode": self.fill_mode,
                "fill_value": self.fill_value, "antialias": self.antialias}
