"""``keras.ops.image``: Keras 3's image functions (TF backend's arithmetic): ``resize``, ``extract_patches``
(2-D), ``rgb_to_grayscale``, ``rgb_to_hsv``, ``hsv_to_rgb``, ``map_coordinates``, ``gaussian_blur`` and
``elastic_transform``; the others raise ``NotImplementedError`` naming themselves."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from tapeflow.keras import backend as _backend
from tapeflow.keras.ops._base import convert, keras_op, tf


def _rank_check(images: Any) -> None:
    if len(images.shape) not in (3, 4):
        raise ValueError("Invalid images rank: expected rank 3 (single image) or rank 4 (batch of images). "
                         f"Received input with shape: images.shape={images.shape}")


@keras_op("Resize", "image")
def resize(images: Any, size: Any, interpolation: str = "bilinear", antialias: bool = False,
           crop_to_aspect_ratio: bool = False, pad_to_aspect_ratio: bool = False, fill_mode: str = "constant",
           fill_value: float = 0.0, data_format: str | None = None) -> Any:
    """Resizes images to ``size`` (height, width), optionally cropping or padding to its aspect ratio first;
    integer images come back rounded in their dtype (``keras.ops.image.resize``)."""
    from tapeflow.keras.layers.preprocessing import resize_images

    if len(size) != 2:
        raise ValueError(f"Expected `size` to be a tuple of 2 integers. Received: size={size}")
    if size[0] <= 0 or size[1] <= 0:
        raise ValueError(f"`size` must have positive height and width. Received: size={size}")
    images = convert(images)
    _rank_check(images)
    if pad_to_aspect_ratio and crop_to_aspect_ratio:
        raise ValueError("Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be `True`.")
    return resize_images(images, tuple(size), interpolation, antialias, crop_to_aspect_ratio, pad_to_aspect_ratio,
                         fill_mode, fill_value, _backend.standardize_data_format(data_format))


@keras_op("ExtractPatches", "image")
def extract_patches(images: Any, size: Any, strides: Any = None, dilation_rate: Any = 1, padding: str = "valid",
                    data_format: str | None = None) -> Any:
    """Each ``size`` patch flattened (row, column, channel) into the channel axis: Keras's convolution with an
    identity kernel (``keras.ops.image.extract_patches``; 2-D patches)."""
    from tapeflow.keras.ops.nn import conv

    if not isinstance(size, int):
        if not isinstance(size, (tuple, list)):
            raise TypeError("Invalid `size` argument. Expected an int or a tuple. "
                            f"Received: size={size} of type {type(size).__name__}")
        if len(size) not in (2, 3):
            raise ValueError(f"Invalid `size` argument. Expected a tuple of length 2 or 3. Received: size={size} "
                             f"with length {len(size)}")
        if len(size) == 3:
            raise NotImplementedError("keras.ops.image.extract_patches of 3-D patches is not implemented in tapeflow")
    images = convert(images)
    ph, pw = (size, size) if isinstance(size, int) else (size[0], size[1])
    data_format = _backend.standardize_data_format(data_format)
    channels = images.shape[-1] if data_format == "channels_last" else images.shape[-3]
    out_dim = ph * pw * channels
    kernel = np.eye(out_dim, dtype=images.dtype.as_numpy_dtype).reshape(ph, pw, channels, out_dim)
    unbatched = len(images.shape) == 3
    if unbatched:
        images = tf().expand_dims(images, 0)
    patches = conv(images, kernel, strides=strides or size, padding=padding, data_format=data_format,
                   dilation_rate=dilation_rate)
    return tf().squeeze(patches, 0) if unbatched else patches


@keras_op("RGBToGrayscale", "image")
def rgb_to_grayscale(images: Any, data_format: str | None = None) -> Any:
    """Luma ``0.2989 R + 0.5870 G + 0.1140 B`` in one channel, in the images' dtype
    (``keras.ops.image.rgb_to_grayscale``)."""
    t = tf()
    images = convert(images)
    axis = -1 if _backend.standardize_data_format(data_format) == "channels_last" else -3
    _rank_check(images)
    if images.shape[axis] not in (1, 3):
        raise ValueError("Invalid channel size: expected 3 (RGB) or 1 (Grayscale). Received input with shape: "
                         f"images.shape={images.shape}")
    if images.shape[axis] == 1:
        return t.identity(images)
    dtype = images.dtype
    x = t.cast(images, _backend.result_type(dtype.name, float))
    x = t.tensordot(x, t.constant([0.2989, 0.5870, 0.1140], dtype=x.dtype), axes=(axis % len(x.shape), 0))
    return t.cast(t.expand_dims(x, axis), dtype)


def _hsv(images: Any, data_format: str | None, kernel: Any) -> Any:
    """Keras's TF backend ``rgb_to_hsv``/``hsv_to_rgb``: its checks, then tf.image's kernel on channels-last."""
    t = tf()
    images = convert(images)
    data_format = _backend.standardize_data_format(data_format)
    _rank_check(images)
    if not images.dtype.is_floating:
        raise ValueError(f"Invalid images dtype: expected float dtype. Received: images.dtype={images.dtype.name}")
    first = data_format == "channels_first"
    rank = len(images.shape)
    if first:
        images = t.transpose(images, (0, 2, 3, 1) if rank == 4 else (1, 2, 0))
    images = kernel(images)
    if first:
        images = t.transpose(images, (0, 3, 1, 2) if rank == 4 else (2, 0, 1))
    return images


def _symbolic_hsv_checks(fn: Any) -> Any:
    """Keras's ``compute_output_spec`` checks of ``RGBToHSV``/``HSVToRGB`` on a KerasTensor, before the node."""
    from tapeflow.keras.layers.base import KerasTensor

    @functools.wraps(fn)
    def checked(images: Any, data_format: str | None = None) -> Any:
        if isinstance(images, KerasTensor):
            shape = list(images.shape)
            if len(shape) not in (3, 4):
                raise ValueError("Invalid images rank: expected rank 3 (single image) or rank 4 (batch of images). "
                                 f"Received: images.shape={shape}")
            dtype = _backend.standardize_dtype(images.dtype)
            if not _backend.is_float_dtype(dtype):
                raise ValueError(f"Invalid images dtype: expected float dtype. Received: images.dtype={dtype}")
            axis = -1 if _backend.standardize_data_format(data_format) == "channels_last" else -3
            if shape[axis] is not None and shape[axis] != 3:
                raise ValueError(f"Input images must have 3 channels, but received images with {shape[axis]} "
                                 "channels.")
        return fn(images, data_format=data_format)

    return checked


@keras_op("RGBToHSV", "image")
def rgb_to_hsv(images: Any, data_format: str | None = None) -> Any:
    """RGB images (float, values in ``[0, 1]``) to HSV, each of hue, saturation and value in ``[0, 1]``
    (``keras.ops.image.rgb_to_hsv``: tf.image's kernel and gradient)."""
    from tapeflow.ops.image_hsv_ops import rgb_to_hsv as kernel

    return _hsv(images, data_format, kernel)


rgb_to_hsv = _symbolic_hsv_checks(rgb_to_hsv)


@keras_op("HSVToRGB", "image")
def hsv_to_rgb(images: Any, data_format: str | None = None) -> Any:
    """HSV images (float, values in ``[0, 1]``) to RGB (``keras.ops.image.hsv_to_rgb``: tf.image's kernel
    and gradient)."""
    from tapeflow.ops.image_hsv_ops import hsv_to_rgb as kernel

    return _hsv(images, data_format, kernel)


hsv_to_rgb = _symbolic_hsv_checks(hsv_to_rgb)


@keras_op("MapCoordinates", "image", tensors=2)
def map_coordinates(inputs: Any, coordinates: Any, order: int, fill_mode: str = "constant",
                    fill_value: Any = 0) -> Any:
    """``inputs`` sampled at ``coordinates`` (one row of coordinates per input axis) by nearest (``order=0``)
    or linear (``order=1``) interpolation, out-of-range points by ``fill_mode`` (``keras.ops.image.
    map_coordinates``: Keras's TF backend, with its gradients with respect to both)."""
    from tapeflow.keras.layers.augmentation_elastic import MAP_COORDINATES_FILL_MODES, map_coordinates_nd

    inputs, coordinates = convert(inputs), convert(coordinates)
    cshape = tuple(coordinates.shape)
    if cshape[0] != len(inputs.shape):
        raise ValueError("First dim of `coordinates` must be the same as the rank of `inputs`. Received inputs "
                         f"with shape: {inputs.shape} and coordinate leading dim of {cshape[0]}")
    if len(cshape) < 2:
        raise ValueError(f"Invalid coordinates rank: expected at least rank 2. Received input with shape: {cshape}")
    if fill_mode not in MAP_COORDINATES_FILL_MODES:
        raise ValueError(f"Invalid value for argument `fill_mode`. Expected one of {set(MAP_COORDINATES_FILL_MODES)}. "
                         f"Received: fill_mode={fill_mode}")
    if order not in (0, 1):
        raise NotImplementedError("map_coordinates currently requires order<=1")
    sizes = [d if d is not None else tf().shape(inputs)[i] for i, d in enumerate(inputs.shape)]
    return map_coordinates_nd(inputs, tf().unstack(coordinates, axis=0), sizes, order, fill_mode, fill_value)


@keras_op("GaussianBlur", "image")
def gaussian_blur(images: Any, kernel_size: Any = (3, 3), sigma: Any = (1.0, 1.0),
                  data_format: str | None = None) -> Any:
    """Each channel convolved with a separable Gaussian (``kernel_size`` and ``sigma`` per axis, ``SAME``
    padding): ``keras.ops.image.gaussian_blur``, Keras's TF-backend kernel."""
    from tapeflow.keras.layers.augmentation_regions import gaussian_blur as blur

    images = convert(images)
    _rank_check(images)
    single = len(images.shape) == 3
    if single:
        images = tf().expand_dims(images, 0)
    out = blur(images, tuple(int(k) for k in kernel_size), sigma, _backend.standardize_data_format(data_format))
    return tf().squeeze(out, [0]) if single else out


@keras_op("ElasticTransform", "image")
def elastic_transform(images: Any, alpha: float = 20.0, sigma: float = 5.0, interpolation: str = "bilinear",
                      fill_mode: str = "reflect", fill_value: float = 0.0, seed: Any = None,
                      data_format: str | None = None) -> Any:
    """Each image resampled along a random displacement field (a normal draw of ``seed``, smoothed by a
    Gaussian of ``sigma``, scaled by ``alpha``): ``keras.ops.image.elastic_transform``, Keras's TF backend
    (the same field for x and y, as Keras's)."""
    from tapeflow.keras import random as krandom
    from tapeflow.keras.layers.augmentation_elastic import elastic_transform as transform

    if interpolation not in ("nearest", "bilinear"):
        raise ValueError("Invalid value for argument `interpolation`. Expected of one ('nearest', 'bilinear'). "
                         f"Received: interpolation={interpolation}")
    if fill_mode not in ("constant", "nearest", "wrap", "reflect"):
        raise ValueError("Invalid value for argument `fill_mode`. Expected of one ('constant', 'nearest', 'wrap', "
                         f"'reflect'). Received: fill_mode={fill_mode}")
    images = convert(images)
    _rank_check(images)
    return transform(images, alpha, sigma, interpolation, fill_mode, fill_value, krandom.draw_seed(seed),
                     _backend.standardize_data_format(data_format))


_UNSUPPORTED = frozenset(("affine_transform", "crop_images", "extract_patches_3d",
                          "pad_images", "perspective_transform",
                          "scale_and_translate", "sobel_edges", "ssim"))


def __getattr__(name: str) -> Any:
    if name in _UNSUPPORTED:
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError(f"tf.keras.ops.image.{name} is not implemented in tapeflow")
    raise AttributeError(f"module 'tapeflow.keras.ops.image' has no attribute '{name}'")
