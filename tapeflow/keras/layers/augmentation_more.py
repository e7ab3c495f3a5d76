"""Keras 3's colour augmentation layers: ``RandomGrayscale``, ``RandomInvert``, ``Solarization``,
``RandomPosterization``, ``AutoContrast``, ``RandomColorDegeneration``, ``RandomSharpness``,
``RandomSaturation``, ``RandomHue`` and ``RandomColorJitter``.

Each works as Keras 3.15's ``BaseImagePreprocessingLayer``: ``layer(images, training=True)`` on a batch
``(batch, height, width, channels)`` or one image (``channels_first`` with ``data_format``), casting to the
layer's compute dtype; a call without ``training`` counts as training, and ``training=False`` returns the
images unchanged (``AutoContrast``, which is not random, always applies). The random part is split out as in
Keras: ``get_random_transformation(images)`` draws the per-image parameters from the layer's seed stream and
``transform_images(images, transformation)`` applies them, so a given transformation gives Keras's pixels.
Dicts of images, labels, bounding boxes and segmentation masks are not supported (pass the images).
"""

from __future__ import annotations

from typing import Any

from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.keras import backend as _backend
from tapeflow.keras.layers.base import Layer
from tapeflow.keras.layers.image_augmentation import _factor_pair as _factor  # Keras's _set_factor
from tapeflow.keras.layers.image_augmentation import _next_seed, _seed_state
from tapeflow.keras.saving.serialization import base_config
from tapeflow.ops import array_ops as ao
from tapeflow.ops import indexing_ops
from tapeflow.ops import math_ops as mo
from tapeflow.ops import random_ops
from tapeflow.ops.image_hsv_ops import hsv_to_rgb, rgb_to_hsv

__all__ = ["AutoContrast", "RandomColorDegeneration", "RandomColorJitter", "RandomGrayscale", "RandomHue",
           "RandomInvert", "RandomPosterization", "RandomSaturation", "RandomSharpness", "Solarization"]

_VALUE_RANGE_ERROR = "The `value_range` argument should be a list of two numbers. "


def _value_range(value_range: Any) -> list:
    if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
        raise ValueError(_VALUE_RANGE_ERROR + f"Received: value_range={value_range}")
    return sorted(value_range)


def _to_range(images: Tensor, original: Any, target: Any, dtype: str) -> Tensor:
    """Keras's ``_transform_value_range``: a linear map of ``original`` onto ``target`` (computed in ``dtype``)."""
    if original[0] == target[0] and original[1] == target[1]:
        return images
    images = mo.cast(images, dtype)
    lo, hi = mo.cast(original[0], dtype), mo.cast(original[1], dtype)
    tlo, thi = mo.cast(target[0], dtype), mo.cast(target[1], dtype)
    return (images - lo) / (hi - lo) * (thi - tlo) + tlo


def _channels_last(images: Tensor, data_format: str) -> Tensor:
    if data_format != "channels_first":
        return images
    return ao.transpose(images, (0, 2, 3, 1) if len(images._shape_tuple()) == 4 else (1, 2, 0))


def _channels_back(images: Tensor, data_format: str) -> Tensor:
    if data_format != "channels_first":
        return images
    return ao.transpose(images, (0, 3, 1, 2) if len(images._shape_tuple()) == 4 else (2, 0, 1))


def rgb_to_grayscale(images: Tensor, data_format: str = "channels_last") -> Tensor:
    """Keras's ``ops.image.rgb_to_grayscale``: TF's weights (0.2989, 0.5870, 0.1140); one channel as it is."""
    axis = -1 if data_format == "channels_last" else -3
    channels = images._shape_tuple()[axis]
    if channels not in (1, 3):
        raise ValueError("Invalid channel size: expected 3 (RGB) or 1 (Grayscale). Received input with shape: "
                         f"images.shape={tuple(images._shape_tuple())}")
    if channels == 1:
        return images
    dtype = images.dtype.name if images.dtype.is_floating else "float32"
    x = mo.cast(images, dtype)
    weights = convert_to_tensor([0.2989, 0.5870, 0.1140], dtype=dtype)
    gray = indexing_ops.tensordot(x, weights, [[axis], [-1]])
    return mo.cast(ao.expand_dims(gray, axis), images.dtype)


class _ImagePreprocessing(Layer):
    """The call of Keras 3's ``BaseImagePreprocessingLayer`` for images (see the module docstring)."""

    _data_layer = True  # Keras 3 DataLayer: in a TF graph, inputs in the compute dtype first
    _allow_non_tensor_positional_args = True
    _FACTOR_BOUNDS = (-1, 1)

    def _setup(self, data_format: Any, seed: Any, seeded: bool = True) -> None:
        self.data_format = _backend.image_data_format() if data_format is None else data_format
        if self.data_format not in ("channels_first", "channels_last"):
            raise ValueError("The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
                             f"Received: data_format={data_format}")
        if seeded:  # Keras's SeedGenerator (the layers that draw nothing make none, nor take a Python seed)
            self.seed = seed
            _seed_state(self, seed)

    def _uniform(self, shape: Any, minval: Any = 0.0, maxval: Any = 1.0, dtype: str = "float32") -> Tensor:
        """Keras's ``keras.random.uniform(shape, minval, maxval, seed=the layer's generator)``."""
        return random_ops.stateless_uniform(shape, _next_seed(self), mo.cast(minval, dtype), mo.cast(maxval, dtype),
                                            dtype=dtype)

    @staticmethod
    def _batch_size(images: Tensor) -> Any:
        rank = len(images._shape_tuple())
        if rank not in (3, 4):
            raise ValueError(f"Expected the input image to be rank 3 or 4. Received: inputs.shape="
                             f"{tuple(images._shape_tuple())}")
        if rank == 3:
            return 1
        d = images._shape_tuple()[0]
        return d if d is not None else ao.shape(images)[0]

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Any:
        return None

    def transform_images(self, images: Any, transformation: Any = None, training: bool = True) -> Tensor:
        images = mo.cast(convert_to_tensor(images), self.compute_dtype)
        if training:
            images = self._transform(images, transformation)
        return images

    def transform_labels(self, labels: Any, transformation: Any = None, training: bool = True) -> Tensor:
        return labels

    def call(self, data: Any, training: Any = True) -> Any:
        if training is None:
            training = True
        if isinstance(data, dict):  # Keras's dict of images and labels: the dict, its entries transformed
            extra = sorted({"bounding_boxes", "segmentation_masks"} & set(data))
            if extra:
                raise NotImplementedError(f"{type(self).__name__} on a dict with {', '.join(extra)} is not "
                                          "implemented in tapeflow (pass images, or images and labels)")
            images = self._check_rank(convert_to_tensor(data["images"]))
            transformation = self.get_random_transformation(images, training=training)
            batched = len(images._shape_tuple()) == 4
            data["images"] = self._each(self.transform_images, images, transformation, training, batched)
            if "labels" in data:
                data["labels"] = self._each(self.transform_labels, convert_to_tensor(data["labels"]),
                                            transformation, training, batched)
            return data
        images = self._check_rank(convert_to_tensor(data))
        transformation = self.get_random_transformation(images, training=training)
        return self._each(self.transform_images, images, transformation, training,
                          len(images._shape_tuple()) == 4)

    @staticmethod
    def _check_rank(images: Tensor) -> Tensor:
        if len(images._shape_tuple()) not in (3, 4):
            raise ValueError("Expected image tensor to have rank 3 (single image) or 4 (batch of images). "
                             f"Received: data.shape={tuple(images._shape_tuple())}")
        return images

    @staticmethod
    def _each(transform: Any, values: Tensor, transformation: Any, training: bool, batched: bool) -> Tensor:
        """A batch as it is; one image (or label) as a batch of one (Keras's ``transform_single_*``)."""
        if batched:
            return transform(values, transformation, training=training)
        return ao.squeeze(transform(ao.expand_dims(values, 0), transformation, training=training), [0])

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def _config(self, **entries: Any) -> dict:
        return {**base_config(self), "data_format": self.data_format, **entries}


class RandomGrayscale(_ImagePreprocessing):
    """Turns each image to grayscale (kept as 3 channels) with probability ``factor``, when training."""

    def __init__(self, factor: float = 0.5, data_format: str | None = None, seed: int | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if factor < 0 or factor > 1:
            raise ValueError(f"`factor` should be between 0 and 1. Received: factor={factor}")
        self.factor = factor
        self._setup(data_format, seed)

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Tensor:
        values = self._uniform([self._batch_size(data)])
        return ao.reshape(values < self.factor, [-1, 1, 1, 1])

    def _transform(self, images: Tensor, should_apply: Any) -> Tensor:
        if should_apply is None:
            should_apply = self.get_random_transformation(images)
        gray = rgb_to_grayscale(images, self.data_format)
        return mo.where(should_apply, gray, images)

    def get_config(self) -> dict:
        return self._config(factor=self.factor)


class RandomInvert(_ImagePreprocessing):
    """Inverts each image (``value_range[1] - x``) with a probability drawn in ``factor`` (a number ``a`` is
    ``[0, a]``), when training."""

    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor: Any = 1.0, value_range: Any = (0, 255), seed: int | None = None,
                 data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factor = _factor(factor, self._FACTOR_BOUNDS)
        self.value_range = value_range
        self._setup(data_format, seed)

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Any:
        if not training:
            return None
        batch = self._batch_size(data)
        probability = self._uniform([batch], self.factor[0], self.factor[1])
        threshold = self._uniform([batch], 0, 1)
        return {"apply_inversion": threshold < probability}

    def _transform(self, images: Tensor, transformation: dict) -> Tensor:
        apply = ao.reshape(convert_to_tensor(transformation["apply_inversion"]), [-1, 1, 1, 1])
        return mo.where(apply, mo.cast(self.value_range[1], images.dtype) - images, images)

    def get_config(self) -> dict:
        return self._config(factor=self.factor, value_range=self.value_range, seed=self.seed)


class Solarization(_ImagePreprocessing):
    """Adds a random ``addition`` then inverts (``255 - x``) the pixels above a random ``threshold``, in
    Keras's 0-255 scale (``value_range`` maps onto it), when training. Each factor is a number ``a`` for
    ``[0, a]`` or a pair in [0, 1]; as Keras 3.15 the draws are uniform in ``[factor[0], factor[1] * 255]``."""

    _FACTOR_ERROR = ("The `addition_factor` and `threshold_factor` arguments should be a number (or a list of two "
                     "numbers) in the range [0, 1]. ")

    def __init__(self, addition_factor: Any = 0.0, threshold_factor: Any = 0.0, value_range: Any = (0, 255),
                 seed: int | None = None, **kwargs: Any) -> None:
        data_format = kwargs.pop("data_format", None)
        super().__init__(**kwargs)
        self._setup(data_format, seed)
        self.addition_factor = self._set_factor(addition_factor, "addition_factor")
        self.threshold_factor = self._set_factor(threshold_factor, "threshold_factor")
        self.value_range = _value_range(value_range)

    def _set_factor(self, factor: Any, name: str) -> tuple:
        def check(v: float) -> None:
            if v > 1.0 or v < 0:
                raise ValueError(self._FACTOR_ERROR + f"Received: input_number={v}")

        if isinstance(factor, (tuple, list)):
            if len(factor) != 2:
                raise ValueError(self._FACTOR_ERROR + f"Received: {name}={factor}")
            check(factor[0])
            check(factor[1])
            return tuple(sorted(factor))
        if isinstance(factor, (int, float)):
            check(factor)
            return (0, factor)
        raise ValueError(self._FACTOR_ERROR + f"Received: {name}={factor}")

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> Any:
        if not training:
            return None
        shape = [self._batch_size(data), 1, 1, 1] if len(data._shape_tuple()) == 4 else [1, 1, 1]
        dtype = self.compute_dtype
        return {"additions": self._uniform(shape, self.addition_factor[0], self.addition_factor[1] * 255, dtype),
                "thresholds": self._uniform(shape, self.threshold_factor[0], self.threshold_factor[1] * 255, dtype)}

    def _transform(self, images: Tensor, transformation: Any) -> Tensor:
        if transformation is None:
            return images
        dtype = self.compute_dtype
        x = _to_range(images, self.value_range, (0, 255), dtype)
        x = mo.clip_by_value(x + mo.cast(transformation["additions"], dtype), 0.0, 255.0)
        x = mo.where(x < mo.cast(transformation["thresholds"], dtype), x, 255.0 - x)
        return _to_range(x, (0, 255), self.value_range, dtype)

    def get_config(self) -> dict:
        return self._config(value_range=self.value_range, addition_factor=self.addition_factor,
                            threshold_factor=self.threshold_factor, seed=self.seed)


class RandomPosterization(_ImagePreprocessing):
    """Keeps the top ``bits`` bits of each 8-bit colour value (``bits`` drawn in ``factor``, within [1, 8]; a
    number ``a`` is ``[1, a]``), in Keras's 0-255 scale, when training."""

    _FACTOR_BOUNDS = (1, 8)
    _MAX_FACTOR = 8

    def __init__(self, factor: Any, value_range: Any = (0, 255), data_format: str | None = None,
                 seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factor = _factor(factor, self._FACTOR_BOUNDS)
        self.value_range = _value_range(value_range)
        self._setup(data_format, seed)

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> dict:
        batch = self._batch_size(data)
        if self.factor[0] != self.factor[1]:
            factor = mo.cast(random_ops.stateless_uniform([batch], _next_seed(self), int(self.factor[0]),
                                                          int(self.factor[1]), dtype="int64"), "uint8")
        else:
            factor = mo.cast(ao.ones([batch], dtype="int32") * int(self.factor[0]), "uint8")
        return {"shift_factor": mo.subtract(mo.cast(self._MAX_FACTOR, "uint8"), factor)}

    def _transform(self, images: Tensor, transformation: dict) -> Tensor:
        shift = ao.reshape(mo.cast(transformation["shift_factor"], "uint8"), [-1, 1, 1, 1])
        x = mo.cast(_to_range(images, self.value_range, (0, 255), self.compute_dtype), "uint8")
        shift = ao.broadcast_to(shift, ao.shape(x))
        x = mo.left_shift(mo.right_shift(x, shift), shift)
        return _to_range(mo.cast(x, self.compute_dtype), (0, 255), self.value_range, self.compute_dtype)

    def get_config(self) -> dict:
        return self._config(factor=self.factor, value_range=self.value_range, seed=self.seed)


class AutoContrast(_ImagePreprocessing):
    """Stretches each image's channels to the full ``value_range`` (its min to the low end, its max to the
    high end); a flat channel stays as it is. Not random: it applies in training and inference alike."""

    def __init__(self, value_range: Any = (0, 255), **kwargs: Any) -> None:
        data_format = kwargs.pop("data_format", None)
        super().__init__(**kwargs)
        self._setup(data_format, None, seeded=False)
        self.value_range = _value_range(value_range)

    def transform_images(self, images: Any, transformation: Any = None, training: bool = True) -> Tensor:
        images = mo.cast(convert_to_tensor(images), self.compute_dtype)
        original = images
        x = _to_range(images, self.value_range, (0, 255), self.compute_dtype)
        low = mo.reduce_min(x, axis=[1, 2], keepdims=True)
        high = mo.reduce_max(x, axis=[1, 2], keepdims=True)
        scale = 255.0 / (high - low)
        x = mo.clip_by_value(x * scale + (-low * scale), 0.0, 255.0)
        x = _to_range(x, (0, 255), self.value_range, self.compute_dtype)
        return mo.where(mo.is_nan(x), original, x)

    def get_config(self) -> dict:
        config = self._config(value_range=self.value_range)
        return config


class RandomColorDegeneration(_ImagePreprocessing):
    """Blends each image towards its grayscale version by a random ``factor`` (``x + f * (gray - x)``),
    clipped to ``value_range``, when training."""

    def __init__(self, factor: Any, value_range: Any = (0, 255), data_format: str | None = None,
                 seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factor = _factor(factor, self._FACTOR_BOUNDS)
        self.value_range = _value_range(value_range)
        self._setup(data_format, seed)

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> dict:
        return {"factor": self._uniform([self._batch_size(data), 1, 1, 1], self.factor[0], self.factor[1])}

    def _transform(self, images: Tensor, transformation: dict) -> Tensor:
        factor = mo.cast(convert_to_tensor(transformation["factor"]), self.compute_dtype)
        gray = rgb_to_grayscale(images, self.data_format)
        out = images + factor * (gray - images)
        return mo.clip_by_value(out, mo.cast(self.value_range[0], out.dtype), mo.cast(self.value_range[1], out.dtype))

    def get_config(self) -> dict:
        return self._config(factor=self.factor, value_range=self.value_range, seed=self.seed)


class RandomSharpness(_ImagePreprocessing):
    """Blends each image with its 3x3 smoothed version: ``x + (1 - 2 f) * (smooth - x)`` (``f`` drawn in
    ``factor``, a number ``a`` for ``[0, a]``; ``f = 0.5`` leaves the image as it is, larger sharpens),
    clipped to ``value_range``, when training."""

    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor: Any, value_range: Any = (0, 255), data_format: str | None = None,
                 seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factor = _factor(factor, self._FACTOR_BOUNDS)
        self.value_range = _value_range(value_range)
        self._setup(data_format, seed)

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> dict:
        return {"factor": self._uniform([self._batch_size(data)], self.factor[0], self.factor[1])}

    def _transform(self, images: Tensor, transformation: dict) -> Tensor:
        from tapeflow.ops.nn import conv as nn_conv

        dtype = self.compute_dtype
        images = _channels_last(images, self.data_format)
        sharpness = ao.reshape(mo.cast(mo.multiply(convert_to_tensor(transformation["factor"]), 2), dtype),
                               [-1, 1, 1, 1])
        channels = images._shape_tuple()[-1]
        a, b = 1.0 / 13.0, 5.0 / 13.0
        kernel = ao.tile(ao.reshape(convert_to_tensor([[a, a, a], [a, b, a], [a, a, a]], dtype=dtype), [3, 3, 1, 1]),
                         [1, 1, channels, 1])
        smoothed = mo.cast(nn_conv.depthwise_conv2d(images, kernel, [1, 1, 1, 1], "SAME"), dtype)
        out = images + (1.0 - sharpness) * (smoothed - images)
        out = mo.clip_by_value(out, mo.cast(self.value_range[0], dtype), mo.cast(self.value_range[1], dtype))
        return _channels_back(out, self.data_format)

    def get_config(self) -> dict:
        return self._config(factor=self.factor, value_range=self.value_range, seed=self.seed)


class RandomSaturation(_ImagePreprocessing):
    """Scales each image's HSV saturation by ``f / (1 - f)`` (``f`` drawn in ``factor``: 0.5 keeps the image,
    0 makes it grayscale, 1 saturates it fully), when training. As Keras 3.15 the saturation is clipped to
    ``value_range`` and the HSV conversion is applied to the values as they are."""

    def __init__(self, factor: Any, value_range: Any = (0, 255), data_format: str | None = None,
                 seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factor = _factor(factor, self._FACTOR_BOUNDS)
        self.value_range = _value_range(value_range)
        self._setup(data_format, seed)

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> dict:
        f = self._uniform([self._batch_size(data)], self.factor[0], self.factor[1])
        return {"factor": f / (1.0 - f + _backend.epsilon())}

    def _transform(self, images: Tensor, transformation: dict) -> Tensor:
        factors = ao.reshape(mo.cast(convert_to_tensor(transformation["factor"]), self.compute_dtype), [-1, 1, 1])
        hsv = rgb_to_hsv(_channels_last(images, self.data_format))
        h, s, v = ao.unstack(hsv, num=3, axis=-1)
        s = mo.clip_by_value(s * factors, mo.cast(self.value_range[0], s.dtype), mo.cast(self.value_range[1], s.dtype))
        return _channels_back(hsv_to_rgb(ao.stack([h, s, v], axis=-1)), self.data_format)

    def get_config(self) -> dict:
        return self._config(factor=self.factor, value_range=self.value_range, seed=self.seed)


class RandomHue(_ImagePreprocessing):
    """Rotates each image's hue by a random ``±f / 2`` of the colour wheel (``f`` drawn in ``factor``, a number
    ``a`` for ``[0, a]``, the sign at random), when training."""

    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor: Any, value_range: Any = (0, 255), data_format: str | None = None,
                 seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factor = _factor(factor, self._FACTOR_BOUNDS)
        self.value_range = value_range
        self._setup(data_format, seed)

    def get_random_transformation(self, data: Any, training: bool = True, seed: Any = None) -> dict:
        batch = self._batch_size(data)
        invert = self._uniform([batch])
        invert = mo.where(invert > 0.5, -ao.ones_like(invert), ao.ones_like(invert))
        factor = self._uniform([batch], self.factor[0], self.factor[1])
        return {"factor": invert * factor * 0.5}

    def _transform(self, images: Tensor, transformation: dict) -> Tensor:
        x = _to_range(images, self.value_range, (0, 1), "float32")
        factors = ao.reshape(mo.cast(convert_to_tensor(transformation["factor"]), x.dtype), [-1, 1, 1])
        hsv = rgb_to_hsv(_channels_last(x, self.data_format))
        h, s, v = ao.unstack(hsv, num=3, axis=-1)
        h = h + factors
        h = mo.where(h > 1.0, h - 1.0, h)
        h = mo.where(h < 0.0, h + 1.0, h)
        rgb = _channels_back(hsv_to_rgb(ao.stack([h, s, v], axis=-1)), self.data_format)
        rgb = _to_range(mo.clip_by_value(rgb, 0.0, 1.0), (0, 1), self.value_range, "float32")
        return mo.cast(rgb, self.compute_dtype)

    def get_config(self) -> dict:
        return self._config(factor=self.factor, value_range=self.value_range, seed=self.seed)


class RandomColorJitter(_ImagePreprocessing):
    """Keras 3's colour jitter: when training, a random brightness shift, contrast scale, saturation and hue
    change in that order, each only when its factor is given (``brightness_factor`` as ``RandomBrightness``'s
    ``factor``, ``contrast_factor`` as ``RandomContrast``'s, ``saturation_factor``/``hue_factor`` as
    ``RandomSaturation``'s/``RandomHue``'s), all drawn from this layer's seed stream as Keras draws them."""

    def __init__(self, value_range: Any = (0, 255), brightness_factor: Any = None, contrast_factor: Any = None,
                 saturation_factor: Any = None, hue_factor: Any = None, seed: int | None = None,
                 data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        from tapeflow.keras.layers.image_augmentation import RandomBrightness, RandomContrast

        self.value_range = value_range
        self.brightness_factor, self.contrast_factor = brightness_factor, contrast_factor
        self.saturation_factor, self.hue_factor = saturation_factor, hue_factor
        self._setup(data_format, seed)
        self.random_brightness = self.random_contrast = self.random_saturation = self.random_hue = None
        if brightness_factor is not None:
            self.random_brightness = RandomBrightness(factor=brightness_factor, value_range=value_range, seed=seed)
        if contrast_factor is not None:
            self.random_contrast = RandomContrast(factor=contrast_factor, value_range=value_range, seed=seed)
        if saturation_factor is not None:
            self.random_saturation = RandomSaturation(factor=saturation_factor, value_range=value_range, seed=seed)
        if hue_factor is not None:
            self.random_hue = RandomHue(factor=hue_factor, value_range=value_range, seed=seed)

    def _transform(self, images: Tensor, transformation: Any) -> Tensor:
        dtype = self.compute_dtype
        batch = self._batch_size(images)
        low, high = self.value_range[0], self.value_range[1]
        if self.random_brightness is not None:
            lo, hi = self.random_brightness.factor
            delta = self._uniform([batch, 1, 1, 1], lo, hi) * float(high - low)
            images = mo.clip_by_value(images + mo.cast(delta, images.dtype), mo.cast(low, images.dtype),
                                      mo.cast(high, images.dtype))
        if self.random_contrast is not None:
            lo, hi = self.random_contrast.factor
            f = self._uniform([batch, 1, 1, 1], 1.0 - lo, 1.0 + hi, dtype)
            h_axis, w_axis = (-3, -2) if self.data_format == "channels_last" else (-2, -1)
            mean = mo.reduce_mean(mo.reduce_mean(images, axis=h_axis, keepdims=True), axis=w_axis, keepdims=True)
            images = mo.clip_by_value((images - mean) * mo.cast(f, images.dtype) + mean, mo.cast(low, images.dtype),
                                      mo.cast(high, images.dtype))
        if self.random_saturation is not None:
            lo, hi = self.random_saturation.factor
            f = self._uniform([batch], lo, hi)
            images = self.random_saturation._transform(images, {"factor": f / (1.0 - f + _backend.epsilon())})
        if self.random_hue is not None:
            lo, hi = self.random_hue.factor
            invert = self._uniform([batch])
            invert = mo.where(invert > 0.5, -ao.ones_like(invert), ao.ones_like(invert))
            images = self.random_hue._transform(images, {"factor": invert * self._uniform([batch], lo, hi) * 0.5})
        return mo.cast(images, dtype)

    def get_config(self) -> dict:
        return self._config(value_range=self.value_range, brightness_factor=self.brightness_factor,
                            contrast_factor=self.contrast_factor, saturation_factor=self.saturation_factor,
                            hue_factor=self.hue_factor, seed=self.seed)
