"""Keras 3's random image augmentation layers, seeded and drawn as Keras 3 with the TF backend."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.keras import initializers
from tapeflow.keras.layers.base import Layer
from tapeflow.keras.saving.serialization import base_config
from tapeflow.ops import array_ops as ao
from tapeflow.ops import indexing_ops
from tapeflow.ops import math_ops as mo
from tapeflow.ops import random_ops

__all__ = ["RandomBrightness", "RandomContrast", "RandomCrop", "RandomFlip", "RandomHeight", "RandomRotation",
           "RandomTranslation", "RandomWidth", "RandomZoom"]


def _seed_state(layer: Layer, seed: int | None) -> None:
    """Keras 3's ``SeedGenerator(seed)``: a ``[seed, counter]`` state, an unseeded one taking a Python-random
    seed now."""
    from tapeflow.framework.variables import Variable

    start = initializers._default_seed() if seed is None else int(seed)
    object.__setattr__(layer, "_seed_state", Variable(np.array([start, 0], np.int64), trainable=False,
                                                      name="seed_generator_state"))


def _next_seed(layer: Layer) -> Tensor:
    """The state's current seed as Keras's TF backend draws with it, then the counter advanced. A layer whose
    draws a policy layer (``RandAugment``, ``AugMix``) directs to its own generator (Keras's
    ``get_random_transformation(data, seed=generator)``) draws from that layer's state."""
    layer = layer.__dict__.get("_seed_source") or layer
    seed = layer._seed_state.value()
    layer._seed_state.assign_add(np.array([0, 1], np.int64))
    return mo.cast(mo.floormod(seed, np.int64(2**31 - 2)), "int32")  # Keras's _cast_seed


class RandomFlip(Layer):
    """Flips images ``(..., height, width, channels)`` left-right and/or top-bottom, each image with
    probability 1/2, when training (a call without ``training`` counts as training, as Keras 3).

    ``mode`` is ``"horizontal"``, ``"vertical"`` or ``"horizontal_and_vertical"`` (one draw per image flips
    both axes). The draws are Keras 3's: ``tf.random.stateless_uniform`` of the layer's ``[seed, counter]``
    state, so after ``tf.keras.utils.set_random_seed`` the same images flip as in Keras. The output has the
    layer's compute dtype.
    """

    _data_layer = True  # Keras 3 DataLayer: in a TF graph, inputs in the compute dtype first

    def __init__(self, mode: str = "horizontal_and_vertical", seed: int | None = None, data_format: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seed, self.mode = seed, mode
        self.data_format = "channels_last" if data_format is None else data_format
        _seed_state(self, seed)

    def call(self, inputs: Any, training: Any = None) -> Tensor:
        images = mo.cast(convert_to_tensor(inputs), self.compute_dtype)
        if training is None:
            training = True  # Keras's preprocessing layers default to training=True
        if not training:
            return images
        unbatched = len(images._shape_tuple()) == 3
        if unbatched:
            images = ao.expand_dims(images, 0)
        flips_shape = ao.stack([ao.shape(images)[0], 1, 1, 1]) if not unbatched else [1, 1, 1, 1]
        seed = _next_seed(self)
        flips = mo.less_equal(random_ops.stateless_uniform(flips_shape, seed, 0.0, 1.0, dtype="float32"), 0.5)
        width_axis, height_axis = (-2, -3) if self.data_format == "channels_last" else (-1, -2)
        out = images
        if self.mode in ("horizontal", "horizontal_and_vertical"):
            out = mo.where(flips, indexing_ops.reverse(out, [width_axis]), out)
        if self.mode in ("vertical", "horizontal_and_vertical"):
            out = mo.where(flips, indexing_ops.reverse(out, [height_axis]), out)
        return ao.squeeze(out, [0]) if unbatched else out

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        return {**base_config(self),
                "data_format": self.data_format, "seed": self.seed, "mode": self.mode}


class RandomContrast(Layer):
    """Scales each channel's deviation from its mean by a random factor per image, when training (a call
    without ``training`` counts as training, as Keras 3): ``(x - mean) * f + mean``, clipped to
    ``value_range``.

    ``factor`` is a number in [0, 1] or a pair ``(lower, upper)``; ``f`` is drawn uniformly from
    ``[1 - lower, 1 + upper]``. As Keras 3.15, a single number ``a`` means ``(0, a)``: the contrast only grows.
    The draws are Keras's (``tf.random.stateless_uniform`` of the layer's ``[seed, counter]`` state).
    """

    _data_layer = True  # Keras 3 DataLayer: in a TF graph, inputs in the compute dtype first

    def __init__(self, factor: Any, value_range: Any = (0, 255), seed: int | None = None,
                 data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        msg = (f"The `factor` argument should be a number (or a list of two numbers) in the range [0, 1]. "
               f"Received: factor={factor}")
        if isinstance(factor, (tuple, list)):
            if len(factor) != 2 or factor[0] > 1 or factor[1] < 0:
                raise ValueError(msg)
            lower, upper = sorted(factor)
        elif isinstance(factor, (int, float)) and not isinstance(factor, bool):
            if not 0 <= factor <= 1:
                raise ValueError(msg)
            lower, upper = max(-abs(factor), 0), abs(factor)
        else:
            raise ValueError(msg)
        self.factor = (lower, upper)
        self.value_range, self.seed = value_range, seed
        self.data_format = "channels_last" if data_format is None else data_format
        _seed_state(self, seed)

    def call(self, inputs: Any, training: Any = None) -> Tensor:
        images = convert_to_tensor(inputs)
        if training is None:
            training = True
        if not training:
            return images
        if images._value.dtype.kind != "f":  # Keras 3.15 fails on integer images; compute in its float dtype
            images = mo.cast(images, self.compute_dtype)
        return self.transform_images(images, self.get_random_transformation(images))

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> dict:
        """Keras's draw: a contrast factor per image."""
        images = convert_to_tensor(data)
        rank = len(images._shape_tuple())
        if rank not in (3, 4):
            raise ValueError(f"Expected the input image to be rank 3 or 4. Received inputs.shape="
                             f"{tuple(images._shape_tuple())}")
        shape = [1, 1, 1] if rank == 3 else ao.stack([ao.shape(images)[0], 1, 1, 1])
        if not training:
            return {"contrast_factor": ao.zeros(shape)}
        return {"contrast_factor": random_ops.stateless_uniform(shape, _next_seed(self), 1.0 - self.factor[0],
                                                                1.0 + self.factor[1], dtype=self.compute_dtype)}

    def transform_images(self, images: Any, transformation: dict, training: bool = True) -> Tensor:
        """``(x - mean) * f + mean`` per channel, clipped to ``value_range``."""
        images = convert_to_tensor(images)
        if not training:
            return images
        h, w = (-3, -2) if self.data_format == "channels_last" else (-2, -1)
        mean = mo.reduce_mean(mo.reduce_mean(images, axis=h, keepdims=True), axis=w, keepdims=True)
        f = mo.cast(transformation["contrast_factor"], images.dtype)
        out = mo.add(mo.multiply(mo.subtract(images, mean), f), mean)
        return mo.clip_by_value(out, self.value_range[0], self.value_range[1])

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        return {**base_config(self),
                "data_format": self.data_format, "factor": self.factor, "value_range": self.value_range,
                "seed": self.seed}


def _uniform(layer: Layer, shape: Any, minval: float, maxval: float) -> Tensor:
    """Keras's ``keras.random.uniform(shape, minval, maxval, seed=layer's SeedGenerator)`` (float32)."""
    return random_ops.stateless_uniform(shape, _next_seed(layer), mo.cast(minval, "float32"),
                                        mo.cast(maxval, "float32"), dtype="float32")


def _check_choice(value: str, supported: tuple, what: str) -> None:
    if value not in supported:
        raise NotImplementedError(f"Unknown `{what}` {value}. Expected of one {supported}.")


def _image_rank(images: Tensor) -> int:
    rank = len(images._shape_tuple())
    if rank not in (3, 4):
        raise ValueError("Expected image tensor to have rank 3 (single image) or 4 (batch of images). "
                         f"Received: data.shape={tuple(images._shape_tuple())}")
    return rank


def _dim(images: Tensor, axis: int) -> Any:
    """A static dimension as a Python int, else the dynamic one (a scalar int32 tensor)."""
    d = images._shape_tuple()[axis]
    return d if d is not None else ao.shape(images)[axis]


def _affine_transform(images: Tensor, transform: Tensor, interpolation: str, fill_mode: str, fill_value: float,
                      data_format: str) -> Tensor:
    """Keras's TF-backend ``keras.ops.image.affine_transform`` on a batch (rank 4) of images."""
    from tapeflow.ops.image_transform_ops import image_projective_transform_v3

    if data_format == "channels_first":
        images = ao.transpose(images, (0, 2, 3, 1))
    shape = images._shape_tuple()
    out_hw = list(shape[1:3]) if None not in shape[1:3] else ao.shape(images)[1:3]
    out = image_projective_transform_v3(images, transform, out_hw, fill_value, interpolation.upper(),
                                        fill_mode.upper())
    if data_format == "channels_first":
        out = ao.transpose(out, (0, 3, 1, 2))
    return out


class _AffineLayer(Layer):
    """The shared call of Keras 3's affine augmentation layers: images cast to the compute dtype, unchanged
    when not training (a call without ``training`` counts as training, as Keras 3), else one random affine
    transform per image (``transform(images, batch, height, width)``) applied as Keras's
    ``affine_transform`` (TF's ``ImageProjectiveTransformV3``)."""

    _data_layer = True  # Keras 3 DataLayer: in a TF graph, inputs in the compute dtype first
    _SUPPORTED_FILL_MODE = ("reflect", "wrap", "constant", "nearest")
    _SUPPORTED_INTERPOLATION = ("nearest", "bilinear")

    def _setup(self, fill_mode: str, interpolation: str, seed: Any, fill_value: float,
               data_format: str | None) -> None:
        _check_choice(fill_mode, self._SUPPORTED_FILL_MODE, "fill_mode")
        _check_choice(interpolation, self._SUPPORTED_INTERPOLATION, "interpolation")
        self.fill_mode, self.interpolation, self.fill_value, self.seed = fill_mode, interpolation, fill_value, seed
        self.data_format = "channels_last" if data_format is None else data_format
        _seed_state(self, seed)

    def call(self, inputs: Any, training: Any = None) -> Tensor:
        if isinstance(inputs, dict):
            raise NotImplementedError(f"{type(self).__name__} on a dict of images, bounding boxes, labels and "
                                      "segmentation masks is not implemented in tapeflow (pass the images)")
        images = mo.cast(convert_to_tensor(inputs), self.compute_dtype)
        _image_rank(images)
        if training is None:
            training = True
        if not training:
            return images
        return self.transform_images(images, self.get_random_transformation(images))

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Any:
        """Keras's draws: one affine transform per image (``{"transform": [batch, 8]}``)."""
        if not training:
            return None
        images = convert_to_tensor(data)
        rank = _image_rank(images)
        batched = images if rank == 4 else ao.expand_dims(images, 0)
        h_axis, w_axis = (1, 2) if self.data_format == "channels_last" else (2, 3)
        batch = _dim(batched, 0) if rank == 4 else 1
        return {"transform": self._transform(batch, _dim(batched, h_axis), _dim(batched, w_axis))}

    def transform_images(self, images: Any, transformation: Any, training: bool = True) -> Tensor:
        """The images under their transforms (Keras's ``affine_transform``), in the compute dtype."""
        images = mo.cast(convert_to_tensor(images), self.compute_dtype)
        if not training or transformation is None:
            return images
        rank = _image_rank(images)
        batched = images if rank == 4 else ao.expand_dims(images, 0)
        out = _affine_transform(batched, transformation["transform"], self.interpolation, self.fill_mode,
                                self.fill_value, self.data_format)
        return out if rank == 4 else ao.squeeze(out, [0])

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def _base_config(self) -> dict:
        return {**base_config(self), "data_format": self.data_format}


def _factor_pair(factor: Any, bounds: tuple) -> tuple:
    """Keras's ``BaseImagePreprocessingLayer._set_factor``: a number ``a`` is ``(-|a|, |a|)`` (within the
    bounds), a pair is sorted."""
    msg = (f"The `factor` argument should be a number (or a list of two numbers) in the range "
           f"[{bounds[0]}, {bounds[1]}]. Received: factor={factor}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or factor[0] > bounds[1] or factor[1] < bounds[0]:
            raise ValueError(msg)
        return tuple(sorted(factor))
    if isinstance(factor, (int, float)):
        if factor < bounds[0] or factor > bounds[1]:
            raise ValueError(msg)
        factor = abs(factor)
        return (max(-factor, bounds[0]), factor)
    raise ValueError(msg)


class RandomRotation(_AffineLayer):
    """Rotates each image by a random angle in ``[factor[0], factor[1]] * 360`` degrees about its centre
    (counter-clockwise positive), when training, filling by ``fill_mode`` and sampling by ``interpolation``
    exactly as Keras 3.15 with the TF backend (same draws after ``tf.keras.utils.set_random_seed``/``seed=``,
    same pixels)."""

    def __init__(self, factor: Any, fill_mode: str = "reflect", interpolation: str = "bilinear",
                 seed: int | None = None, fill_value: float = 0.0, data_format: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factor = _factor_pair(factor or 0.0, (-1, 1))
        self._setup(fill_mode, interpolation, seed, fill_value, data_format)

    def _transform(self, batch: Any, height: Any, width: Any) -> Tensor:
        angle = _uniform(self, [batch], self.factor[0] * 360.0, self.factor[1] * 360.0)
        angle = mo.multiply(angle, convert_to_tensor(math.pi / 180.0))
        cx = mo.multiply(0.5, mo.subtract(mo.cast(width, "float32"), 1.0))
        cy = mo.multiply(0.5, mo.subtract(mo.cast(height, "float32"), 1.0))
        cos, sin = mo.cos(angle), mo.sin(angle)
        zero = mo.multiply(angle, 0.0)  # tan(0 degrees) shear, as Keras
        a0 = mo.multiply(1.0, mo.add(cos, mo.multiply(zero, sin)))
        a1 = mo.multiply(1.0, mo.add(mo.negative(sin), mo.multiply(zero, cos)))
        a2 = mo.subtract(mo.subtract(mo.add(zero, cx), mo.multiply(cx, a0)), mo.multiply(cy, a1))
        b0 = mo.multiply(1.0, mo.add(mo.multiply(zero, cos), sin))
        b1 = mo.multiply(1.0, mo.add(mo.multiply(zero, mo.negative(sin)), cos))
        b2 = mo.subtract(mo.subtract(mo.add(zero, cy), mo.multiply(cx, b0)), mo.multiply(cy, b1))
        return ao.stack([a0, a1, a2, b0, b1, b2, zero, zero], axis=1)

    def get_config(self) -> dict:
        return {**self._base_config(), "factor": self.factor, "fill_mode": self.fill_mode,
                "fill_value": self.fill_value, "interpolation": self.interpolation, "seed": self.seed}


def _signed_pair(factor: Any, name: str, error: str, check: Any) -> tuple:
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise ValueError(error + f"Received: {name}={factor}")
        check(factor[0])
        check(factor[1])
        return tuple(sorted(factor))
    if isinstance(factor, (int, float)):
        check(factor)
        factor = abs(factor)
        return (-factor, factor)
    raise ValueError(error + f"Received: {name}={factor}")


class RandomZoom(_AffineLayer):
    """Zooms each image by random factors (``1 + height_factor``, ``1 + width_factor``; a negative factor
    zooms in) about its centre, when training, as Keras 3.15 (draws, fill modes and pixels). Without
    ``width_factor`` the aspect ratio is kept (the height draw is used for both)."""

    _ERROR = ("The `height_factor` and `width_factor` arguments should be a number (or a list of two numbers) "
              "in the range (-1.0, 1.0]. ")

    def __init__(self, height_factor: Any, width_factor: Any = None, fill_mode: str = "reflect",
                 interpolation: str = "bilinear", seed: int | None = None, fill_value: float = 0.0,
                 data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)

        def check(v: float) -> None:
            if v > 1.0 or v <= -1.0:
                raise ValueError(self._ERROR + f"Received: input_number={v}")

        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_lower, self.height_upper = _signed_pair(height_factor, "height_factor", self._ERROR, check)
        if width_factor is not None:
            self.width_lower, self.width_upper = _signed_pair(width_factor, "width_factor", self._ERROR, check)
        self._setup(fill_mode, interpolation, seed, fill_value, data_format)

    def _transform(self, batch: Any, height: Any, width: Any) -> Tensor:
        shape = [batch, 1]
        hz = _uniform(self, shape, 1.0 + self.height_lower, 1.0 + self.height_upper)
        wz = hz if self.width_factor is None else _uniform(self, shape, 1.0 + self.width_lower,
                                                           1.0 + self.width_upper)
        x_off = mo.multiply(mo.divide(mo.subtract(mo.cast(width, "float32"), 1.0), 2.0), mo.subtract(1.0, wz))
        y_off = mo.multiply(mo.divide(mo.subtract(mo.cast(height, "float32"), 1.0), 2.0), mo.subtract(1.0, hz))
        zero = ao.zeros_like(hz)
        return ao.concat([wz, zero, x_off, zero, hz, y_off, zero, zero], axis=1)

    def get_config(self) -> dict:
        return {**self._base_config(), "height_factor": self.height_factor, "width_factor": self.width_factor,
                "fill_mode": self.fill_mode, "interpolation": self.interpolation, "seed": self.seed,
                "fill_value": self.fill_value}


class RandomTranslation(_AffineLayer):
    """Shifts each image by random fractions of its height and width (``height_factor``, ``width_factor``,
    each a number ``a`` for ``[-a, a]`` or a pair, in [-1, 1]), when training, as Keras 3.15."""

    _ERROR = "The `factor` argument should be a number (or a list of two numbers) in the range [-1.0, 1.0]. "

    def __init__(self, height_factor: Any, width_factor: Any, fill_mode: str = "reflect",
                 interpolation: str = "bilinear", seed: int | None = None, fill_value: float = 0.0,
                 data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)

        def check(v: float) -> None:
            if v > 1.0 or v < -1.0:
                raise ValueError(self._ERROR + f"Received: input_number={v}")

        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_lower, self.height_upper = _signed_pair(height_factor, "height_factor", self._ERROR, check)
        self.width_lower, self.width_upper = _signed_pair(width_factor, "width_factor", self._ERROR, check)
        self._setup(fill_mode, interpolation, seed, fill_value, data_format)

    def _transform(self, batch: Any, height: Any, width: Any) -> Tensor:
        ht = mo.multiply(_uniform(self, [batch, 1], self.height_lower, self.height_upper),
                         mo.cast(height, "float32"))
        wt = mo.multiply(_uniform(self, [batch, 1], self.width_lower, self.width_upper), mo.cast(width, "float32"))
        one, zero = ao.ones_like(ht), ao.zeros_like(ht)
        return ao.concat([one, zero, mo.negative(wt), zero, one, mo.negative(ht), zero, zero], axis=1)

    def get_config(self) -> dict:
        return {**self._base_config(), "height_factor": self.height_factor, "width_factor": self.width_factor,
                "fill_mode": self.fill_mode, "interpolation": self.interpolation, "seed": self.seed,
                "fill_value": self.fill_value}


class RandomCrop(Layer):
    """Crops a random ``height`` x ``width`` window of each batch (one window for the whole batch, as Keras
    3.15), when training; an image not larger than the window on both axes is centre-cropped to the window's
    aspect ratio and resized (bilinear). Not training, the images pass unchanged (Keras 3.15)."""

    _data_layer = True  # Keras 3 DataLayer: in a TF graph, inputs in the compute dtype first
    _allow_non_tensor_positional_args = True

    def __init__(self, height: int, width: int, seed: int | None = None, data_format: str | None = None,
                 name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self.height, self.width = height, width
        _seed_state(self, seed)
        self.seed = seed if seed is not None else int(self._seed_state.numpy()[0])
        self.data_format = "channels_last" if data_format is None else data_format
        self.height_axis, self.width_axis = (-3, -2) if self.data_format == "channels_last" else (-2, -1)

    def call(self, inputs: Any, training: Any = None) -> Tensor:
        if isinstance(inputs, dict):
            raise NotImplementedError("RandomCrop on a dict of images, bounding boxes, labels and segmentation "
                                      "masks is not implemented in tapeflow (pass the images)")
        images = convert_to_tensor(inputs)
        if training is None:
            training = True
        shape = images._shape_tuple()
        ih, iw = shape[self.height_axis], shape[self.width_axis]
        if ih is None or iw is None:
            raise ValueError(f"RandomCrop requires the input to have a fully defined height and width. "
                             f"Received: images.shape={tuple(shape)}")
        if not training:
            return images
        if ih > self.height and iw > self.width:
            h0 = mo.cast(_uniform(self, [], 0, float(ih - self.height + 1)), "int32")
            w0 = mo.cast(_uniform(self, [], 0, float(iw - self.width + 1)), "int32")
            ch, cw = self.height, self.width
        else:
            ch = max(min(ih, int(float(iw * self.height) / self.width)), 1)
            cw = max(min(iw, int(float(ih * self.width) / self.height)), 1)
            h0, w0 = int(float(ih - ch) / 2), int(float(iw - cw) / 2)
            # as Keras: the slice is window-sized from the centred start, clipped by the image
            ch, cw = min(self.height, ih - h0), min(self.width, iw - w0)
        images = mo.cast(images, self.compute_dtype)
        rank = len(shape)
        begin = [0] * rank
        size = [-1] * rank
        begin[self.height_axis], begin[self.width_axis] = h0, w0
        size[self.height_axis], size[self.width_axis] = ch, cw
        out = ao.slice_(images, ao.stack([mo.cast(b, "int32") for b in begin]), size)
        if (ch, cw) != (self.height, self.width):
            from tapeflow.ops.image_transform_ops import resize

            if self.data_format == "channels_first":
                perm = (0, 2, 3, 1) if rank == 4 else (1, 2, 0)
                out = ao.transpose(resize(ao.transpose(out, perm), [self.height, self.width]),
                                   (0, 3, 1, 2) if rank == 4 else (2, 0, 1))
            else:
                out = resize(out, [self.height, self.width])
            out = mo.cast(out, self.compute_dtype)
        return out

    def compute_output_shape(self, input_shape: Any) -> Any:
        shape = list(input_shape)
        shape[self.height_axis], shape[self.width_axis] = self.height, self.width
        return tuple(shape)

    def get_config(self) -> dict:
        return {**base_config(self),
                "data_format": self.data_format, "height": self.height, "width": self.width, "seed": self.seed}


class RandomBrightness(Layer):
    """Adds a random ``delta * (value_range[1] - value_range[0])``, ``delta`` uniform in ``factor`` (a number
    ``a`` is ``[-a, a]``, within [-1, 1]), to each image when training, clipped to ``value_range``; as Keras
    3.15, integer images keep their dtype (the delta is cast to it)."""

    _data_layer = True  # Keras 3 DataLayer: in a TF graph, inputs in the compute dtype first
    _allow_non_tensor_positional_args = True

    def __init__(self, factor: Any, value_range: Any = (0, 255), seed: int | None = None,
                 data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factor = _factor_pair(factor or 0.0, (-1, 1))
        if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
            raise ValueError("The `value_range` argument should be a list of two numbers. "
                             f"Received: value_range={value_range}")
        self.value_range = sorted(value_range)
        self.seed = seed
        self.data_format = "channels_last" if data_format is None else data_format
        _seed_state(self, seed)

    def call(self, inputs: Any, training: Any = None) -> Tensor:
        images = convert_to_tensor(inputs)
        if images.dtype.is_floating:
            images = mo.cast(images, self.compute_dtype)
        rank = len(images._shape_tuple())
        if rank not in (3, 4):
            raise ValueError(f"Expected the input image to be rank 3 or 4. Received inputs.shape="
                             f"{tuple(images._shape_tuple())}")
        if training is None:
            training = True
        if not training:
            return images
        return self.transform_images(images, self.get_random_transformation(images))

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> dict:
        """Keras's draw: a brightness delta per image (in ``value_range`` units)."""
        images = convert_to_tensor(data)
        shape = [1, 1, 1] if len(images._shape_tuple()) == 3 else [_dim(images, 0), 1, 1, 1]
        if not training:
            return {"rgb_delta": ao.zeros(shape)}
        return {"rgb_delta": mo.multiply(_uniform(self, shape, self.factor[0], self.factor[1]),
                                         float(self.value_range[1] - self.value_range[0]))}

    def transform_images(self, images: Any, transformation: dict, training: bool = True) -> Tensor:
        """The images plus their deltas, clipped to ``value_range``."""
        images = convert_to_tensor(images)
        if not training:
            return images
        out = mo.add(images, mo.cast(transformation["rgb_delta"], images.dtype))
        return mo.clip_by_value(out, mo.cast(self.value_range[0], out.dtype), mo.cast(self.value_range[1], out.dtype))

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        return {**base_config(self),
                "data_format": self.data_format, "factor": self.factor, "value_range": self.value_range,
                "seed": self.seed}


class _RandomSize(Layer):
    """Keras 3's legacy ``RandomHeight``/``RandomWidth``: when training, resizes the images' height (or
    width) by a random factor in ``[1 + lower, 1 + upper]`` (one draw per call), with ``tf.image.resize``."""

    _keras_module = "keras._legacy.layers"  # where Keras 3.15 keeps them (its .keras files name this module)

    _axis = -3
    _word = "height"

    def __init__(self, factor: Any, interpolation: str = "bilinear", seed: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factor = factor
        lower, upper = (factor[0], factor[1]) if isinstance(factor, (tuple, list)) else (-factor, factor)
        if upper < lower:
            raise ValueError("`factor` argument cannot have an upper bound "
                             f"{'lesser' if self._word == 'height' else 'less'} than the lower bound. "
                             f"Received: factor={factor}")
        if lower < -1.0 or upper < -1.0:
            raise ValueError(f"`factor` argument must have values larger than -1. Received: factor={factor}")
        self.lower, self.upper = lower, upper
        self.interpolation, self.seed = interpolation, seed
        _seed_state(self, seed)

    def call(self, inputs: Any, training: Any = None) -> Tensor:
        from tapeflow.ops.image_transform_ops import resize

        images = convert_to_tensor(inputs, dtype=self.compute_dtype)
        if training is None:
            training = True
        if not training:
            return images
        f = _uniform(self, [], 1.0 + self.lower, 1.0 + self.upper)
        dims = [_dim(images, -3), _dim(images, -2)]
        axis = 0 if self._axis == -3 else 1
        dims[axis] = mo.cast(mo.multiply(f, mo.cast(dims[axis], "float32")), "int32")
        out = resize(images, ao.stack([mo.cast(d, "int32") for d in dims]), method=self.interpolation)
        return mo.cast(out, self.compute_dtype)

    def compute_output_shape(self, input_shape: Any) -> Any:
        shape = list(input_shape)
        shape[self._axis] = None
        return tuple(shape)

    def get_config(self) -> dict:
        return {**base_config(self),
                "factor": self.factor, "interpolation": self.interpolation, "seed": self.seed}


class RandomHeight(_RandomSize):
    """``tf.keras.layers.RandomHeight`` (Keras 3's legacy layer): a random height per call, when training."""


class RandomWidth(_RandomSize):
    """``tf.keras.layers.RandomWidth`` (Keras 3's legacy layer): a random width per call, when training."""

    _axis = -2
    _word = "width"
