"""``tf.keras.preprocessing.image``: Keras 3.15's legacy image API (``ImageDataGenerator`` and its iterators,
the ``random_*``/``apply_*`` transforms) and the image helpers ``load_img``, ``img_to_array``,
``array_to_img``, ``save_img``, ``smart_resize``.

As in Keras, every random parameter is drawn from NumPy's global ``np.random`` with the same calls in the
same order, so a seeded program draws Keras's rotations, shifts, flips and shuffles. The affine warp is
``scipy.ndimage.affine_transform`` as Keras calls it, computed by tapeflow's NumPy port (``ndimage.py``,
SciPy's results bit for bit); images are read and written with Pillow, which these functions need, as Keras.

>>> gen = tf.keras.preprocessing.image.ImageDataGenerator(rescale=1. / 255, rotation_range=20)
>>> x_batch, y_batch = next(gen.flow(x, y, batch_size=32, seed=0))
"""

from __future__ import annotations

import io
import math
import os
import pathlib
import threading
import warnings
from typing import Any

import numpy as np

from tapeflow.keras import backend
from tapeflow.keras.preprocessing import ndimage
from tapeflow.keras.io_utils import print_msg
from tapeflow.keras.py_dataset import PyDataset

__all__ = [
    "DirectoryIterator",
    "ImageDataGenerator",
    "Iterator",
    "NumpyArrayIterator",
    "apply_affine_transform",
    "apply_brightness_shift",
    "apply_channel_shift",
    "array_to_img",
    "img_to_array",
    "load_img",
    "random_brightness",
    "random_channel_shift",
    "random_rotation",
    "random_shear",
    "random_shift",
    "random_zoom",
    "save_img",
    "smart_resize",
]


# --- Pillow images <-> arrays (keras.src.utils.image_utils) ---------------------------------------------------


def _pil_image():
    try:
        from PIL import Image
    except ImportError:
        return None
    return Image


def _interpolations() -> dict:
    resampling = getattr(_pil_image(), "Resampling", _pil_image())
    return {
        "nearest": resampling.NEAREST,
        "bilinear": resampling.BILINEAR,
        "bicubic": resampling.BICUBIC,
        "hamming": resampling.HAMMING,
        "box": resampling.BOX,
        "lanczos": resampling.LANCZOS,
    }


def array_to_img(x: Any, data_format: str | None = None, scale: bool = True, dtype: Any = None) -> Any:
    """A 3-D array (one image) as a Pillow image; ``scale`` maps its range to [0, 255] first."""
    data_format = backend.standardize_data_format(data_format)
    dtype = dtype or backend.floatx()
    image = _pil_image()
    if image is None:
        raise ImportError("Could not import PIL.Image. The use of `array_to_img` requires PIL.")
    x = np.asarray(x, dtype=dtype)
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array with shape: {x.shape}")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        x_max = np.max(x)
        if x_max != 0:
            x /= x_max
        x *= 255
    if x.shape[2] == 4:
        return image.fromarray(x.astype("uint8"), "RGBA")
    if x.shape[2] == 3:
        return image.fromarray(x.astype("uint8"), "RGB")
    if x.shape[2] == 1:
        if np.max(x) > 255:
            return image.fromarray(x[:, :, 0].astype("int32"), "I")
        return image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {x.shape[2]}")


def img_to_array(img: Any, data_format: str | None = None, dtype: Any = None) -> np.ndarray:
    """A Pillow image as a 3-D float array (``(h, w, c)`` for channels_last)."""
    data_format = backend.standardize_data_format(data_format)
    x = np.asarray(img, dtype=dtype or backend.floatx())
    if x.ndim == 3:
        if data_format == "channels_first":
            x = x.transpose(2, 0, 1)
    elif x.ndim == 2:
        x = x.reshape((1,) + x.shape if data_format == "channels_first" else x.shape + (1,))
    else:
        raise ValueError(f"Unsupported image shape: {x.shape}")
    return x


def save_img(
    path: Any, x: Any, data_format: str | None = None, file_format: str | None = None, scale: bool = True, **kwargs: Any
) -> None:
    """Writes an image array to ``path`` (the format from the suffix unless ``file_format`` says)."""
    data_format = backend.standardize_data_format(data_format)
    if file_format is None and isinstance(path, (str, pathlib.Path)):
        file_format = pathlib.Path(path).suffix[1:].lower()
    if file_format and file_format.lower() == "jpg":
        file_format = "jpeg"
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and file_format == "jpeg":
        warnings.warn("The JPEG format does not support RGBA images, converting to RGB.", stacklevel=2)
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


def load_img(
    path: Any,
    color_mode: str = "rgb",
    target_size: Any = None,
    interpolation: str = "nearest",
    keep_aspect_ratio: bool = False,
) -> Any:
    """Reads an image file as a Pillow image in ``color_mode``, resized to ``target_size = (h, w)`` if given
    (``keep_aspect_ratio`` crops the centre to the target's aspect ratio first)."""
    image = _pil_image()
    if image is None:
        raise ImportError("Could not import PIL.Image. The use of `load_img` requires PIL.")
    if isinstance(path, io.BytesIO):
        img = image.open(path)
    elif isinstance(path, (pathlib.Path, bytes, str)):
        if isinstance(path, pathlib.Path):
            path = str(path.resolve())
        with open(path, "rb") as f:
            img = image.open(io.BytesIO(f.read()))
    else:
        raise TypeError(f"path should be path-like or io.BytesIO, not {type(path)}")
    if color_mode == "grayscale":
        if img.mode not in ("L", "I;16", "I"):
            img = img.convert("L")
    elif color_mode == "rgba":
        if img.mode != "RGBA":
            img = img.convert("RGBA")
    elif color_mode == "rgb":
        if img.mode != "RGB":
            img = img.convert("RGB")
    else:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    if target_size is not None:
        width_height = (target_size[1], target_size[0])
        if img.size != width_height:
            methods = _interpolations()
            if interpolation not in methods:
                raise ValueError(
                    f"Invalid interpolation method {interpolation} specified. Supported methods are "
                    f"{', '.join(methods)}"
                )
            resample = methods[interpolation]
            if keep_aspect_ratio:
                width, height = img.size
                target_width, target_height = width_height
                crop_height = min(height, (width * target_height) // target_width)
                crop_width = min(width, (height * target_width) // target_height)
                h0, w0 = (height - crop_height) // 2, (width - crop_width) // 2
                img = img.resize(width_height, resample, box=[w0, h0, w0 + crop_width, h0 + crop_height])
            else:
                img = img.resize(width_height, resample)
    return img


def smart_resize(
    x: Any, size: Any, interpolation: str = "bilinear", data_format: str = "channels_last", **kwargs: Any
) -> Any:
    """Crops the largest centred window of ``size``'s aspect ratio, then resizes it to ``size`` (a NumPy
    array in gives a NumPy array out)."""
    from tapeflow.framework.tensor import convert_to_tensor
    from tapeflow.ops.image_transform_ops import resize

    if kwargs:
        raise TypeError(f"smart_resize() got unexpected keyword arguments: {list(kwargs.keys())}")
    if len(size) != 2:
        raise ValueError(f"Expected `size` to be a tuple of 2 integers, but got: {size}.")
    img = convert_to_tensor(x)
    shape = tuple(img.shape)
    if len(shape) < 3 or len(shape) > 4:
        raise ValueError(
            "Expected an image array with shape `(height, width, channels)`, or `(batch_size, "
            f"height, width, channels)`, but got input with incorrect rank, of shape {img.shape}."
        )
    if data_format != "channels_last":
        raise NotImplementedError("smart_resize(data_format='channels_first') is not implemented in tapeflow")
    height, width = shape[-3], shape[-2]
    target_height, target_width = size
    crop_height = max(min(height, int(float(width * target_height) / target_width)), 1)
    crop_width = max(min(width, int(float(height * target_width) / target_height)), 1)
    h0, w0 = int(float(height - crop_height) / 2), int(float(width - crop_width) / 2)
    img = img[..., h0 : h0 + crop_height, w0 : w0 + crop_width, :]
    out = resize(img, size, method=interpolation)
    return out.numpy() if isinstance(x, np.ndarray) else out


# --- the transforms (keras.src.legacy.preprocessing.image) -----------------------------------------------------


def transform_matrix_offset_center(matrix: np.ndarray, x: int, y: int) -> np.ndarray:
    o_x, o_y = float(x) / 2 - 0.5, float(y) / 2 - 0.5
    offset_matrix = np.array([[1, 0, o_x], [0, 1, o_y], [0, 0, 1]])
    reset_matrix = np.array([[1, 0, -o_x], [0, 1, -o_y], [0, 0, 1]])
    return np.dot(np.dot(offset_matrix, matrix), reset_matrix)


def apply_affine_transform(
    x: np.ndarray,
    theta: float = 0,
    tx: float = 0,
    ty: float = 0,
    shear: float = 0,
    zx: float = 1,
    zy: float = 1,
    row_axis: int = 1,
    col_axis: int = 2,
    channel_axis: int = 0,
    fill_mode: str = "nearest",
    cval: float = 0.0,
    order: int = 1,
) -> np.ndarray:
    """Rotates (``theta`` degrees), shifts (``tx`` rows, ``ty`` columns), shears (degrees) and zooms one 3-D
    image about its centre, as Keras (SciPy's ``affine_transform`` of each channel, ``fill_mode`` outside)."""
    if np.unique([row_axis, col_axis, channel_axis]).size != 3:
        raise ValueError("'row_axis', 'col_axis', and 'channel_axis' must be distinct")
    valid, actual = {0, 1, 2}, {row_axis, col_axis, channel_axis}
    if actual != valid:
        raise ValueError(f"Invalid axis' indices: {actual - valid}")
    if x.ndim != 3:
        raise ValueError("Input arrays must be multi-channel 2D images.")
    if channel_axis not in [0, 2]:
        raise ValueError("Channels are allowed and the first and last dimensions.")
    transform_matrix = None
    if theta != 0:
        theta = np.deg2rad(theta)
        transform_matrix = np.array([[np.cos(theta), -np.sin(theta), 0], [np.sin(theta), np.cos(theta), 0], [0, 0, 1]])
    if tx != 0 or ty != 0:
        shift_matrix = np.array([[1, 0, tx], [0, 1, ty], [0, 0, 1]])
        transform_matrix = shift_matrix if transform_matrix is None else np.dot(transform_matrix, shift_matrix)
    if shear != 0:
        shear = np.deg2rad(shear)
        shear_matrix = np.array([[1, -np.sin(shear), 0], [0, np.cos(shear), 0], [0, 0, 1]])
        transform_matrix = shear_matrix if transform_matrix is None else np.dot(transform_matrix, shear_matrix)
    if zx != 1 or zy != 1:
        zoom_matrix = np.array([[zx, 0, 0], [0, zy, 0], [0, 0, 1]])
        transform_matrix = zoom_matrix if transform_matrix is None else np.dot(transform_matrix, zoom_matrix)
    if transform_matrix is not None:
        h, w = x.shape[row_axis], x.shape[col_axis]
        transform_matrix = transform_matrix_offset_center(transform_matrix, h, w)
        x = np.rollaxis(x, channel_axis, 0)
        # the matrix is built for (x, y) coordinates; arrays index (row, col): swap both axes, as Keras
        if col_axis > row_axis:
            transform_matrix[:, [0, 1]] = transform_matrix[:, [1, 0]]
            transform_matrix[[0, 1]] = transform_matrix[[1, 0]]
        x = ndimage.affine_transform(
            x, transform_matrix[:2, :2], transform_matrix[:2, 2], order=order, mode=fill_mode, cval=cval
        )
        x = np.rollaxis(x, 0, channel_axis + 1)
    return x


def random_rotation(
    x: np.ndarray,
    rg: float,
    row_axis: int = 1,
    col_axis: int = 2,
    channel_axis: int = 0,
    fill_mode: str = "nearest",
    cval: float = 0.0,
    interpolation_order: int = 1,
) -> np.ndarray:
    theta = np.random.uniform(-rg, rg)
    return apply_affine_transform(
        x,
        theta=theta,
        row_axis=row_axis,
        col_axis=col_axis,
        channel_axis=channel_axis,
        fill_mode=fill_mode,
        cval=cval,
        order=interpolation_order,
    )


def random_shift(
    x: np.ndarray,
    wrg: float,
    hrg: float,
    row_axis: int = 1,
    col_axis: int = 2,
    channel_axis: int = 0,
    fill_mode: str = "nearest",
    cval: float = 0.0,
    interpolation_order: int = 1,
) -> np.ndarray:
    h, w = x.shape[row_axis], x.shape[col_axis]
    tx = np.random.uniform(-hrg, hrg) * h
    ty = np.random.uniform(-wrg, wrg) * w
    return apply_affine_transform(
        x,
        tx=tx,
        ty=ty,
        row_axis=row_axis,
        col_axis=col_axis,
        channel_axis=channel_axis,
        fill_mode=fill_mode,
        cval=cval,
        order=interpolation_order,
    )


def random_shear(
    x: np.ndarray,
    intensity: float,
    row_axis: int = 1,
    col_axis: int = 2,
    channel_axis: int = 0,
    fill_mode: str = "nearest",
    cval: float = 0.0,
    interpolation_order: int = 1,
) -> np.ndarray:
    shear = np.random.uniform(-intensity, intensity)
    return apply_affine_transform(
        x,
        shear=shear,
        row_axis=row_axis,
        col_axis=col_axis,
        channel_axis=channel_axis,
        fill_mode=fill_mode,
        cval=cval,
        order=interpolation_order,
    )


def random_zoom(
    x: np.ndarray,
    zoom_range: Any,
    row_axis: int = 1,
    col_axis: int = 2,
    channel_axis: int = 0,
    fill_mode: str = "nearest",
    cval: float = 0.0,
    interpolation_order: int = 1,
) -> np.ndarray:
    if len(zoom_range) != 2:
        raise ValueError(f"`zoom_range` should be a tuple or list of two floats. Received: {zoom_range}")
    if zoom_range[0] == 1 and zoom_range[1] == 1:
        zx, zy = 1, 1
    else:
        zx, zy = np.random.uniform(zoom_range[0], zoom_range[1], 2)
    return apply_affine_transform(
        x,
        zx=zx,
        zy=zy,
        row_axis=row_axis,
        col_axis=col_axis,
        channel_axis=channel_axis,
        fill_mode=fill_mode,
        cval=cval,
        order=interpolation_order,
    )


def apply_channel_shift(x: np.ndarray, intensity: float, channel_axis: int = 0) -> np.ndarray:
    """Adds ``intensity`` to every channel, clipped to the image's own range."""
    x = np.rollaxis(x, channel_axis, 0)
    min_x, max_x = np.min(x), np.max(x)
    x = np.stack([np.clip(x_channel + intensity, min_x, max_x) for x_channel in x], axis=0)
    return np.rollaxis(x, 0, channel_axis + 1)


def random_channel_shift(x: np.ndarray, intensity_range: float, channel_axis: int = 0) -> np.ndarray:
    intensity = np.random.uniform(-intensity_range, intensity_range)
    return apply_channel_shift(x, intensity, channel_axis=channel_axis)


def apply_brightness_shift(x: np.ndarray, brightness: float, scale: bool = True) -> np.ndarray:
    """Pillow's ``ImageEnhance.Brightness(img).enhance(brightness)`` of the image (as Keras, through uint8)."""
    try:
        from PIL import ImageEnhance
    except ImportError:
        raise ImportError("apply_brightness_shift requires Pillow (PIL): `pip install pillow`") from None
    x_min, x_max = np.min(x), np.max(x)
    local_scale = (x_min < 0) or (x_max > 255)
    img = array_to_img(x, scale=local_scale or scale)
    x = img_to_array(ImageEnhance.Brightness(img).enhance(brightness))
    if not scale and local_scale:
        x = x / 255 * (x_max - x_min) + x_min
    return x


def random_brightness(x: np.ndarray, brightness_range: Any, scale: bool = True) -> np.ndarray:
    if len(brightness_range) != 2:
        raise ValueError(f"`brightness_range should be tuple or list of two floats. Received: {brightness_range}")
    u = np.random.uniform(brightness_range[0], brightness_range[1])
    return apply_brightness_shift(x, u, scale)


def flip_axis(x: np.ndarray, axis: int) -> np.ndarray:
    x = np.asarray(x).swapaxes(axis, 0)
    return x[::-1, ...].swapaxes(0, axis)


# --- iterators ---------------------------------------------------------------------------------------------------


class Iterator(PyDataset):
    """Batches of ``n`` samples (``batch_size`` each, reshuffled per epoch if ``shuffle``): index ``i``
    (``it[i]``, as ``model.fit`` reads it) or ``next(it)`` (endless, as ``for x, y in it``). With a ``seed``,
    NumPy's global generator is reseeded with ``seed + batches_seen`` before each batch, as Keras."""

    white_list_formats = ("png", "jpg", "jpeg", "bmp", "ppm", "tif", "tiff")

    def __init__(self, n: int, batch_size: int, shuffle: bool, seed: int | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.n = n
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle = shuffle
        self.batch_index = 0
        self.total_batches_seen = 0
        self.lock = threading.Lock()
        self.index_array = None
        self.index_generator = self._flow_index()

    def _set_index_array(self) -> None:
        self.index_array = np.arange(self.n)
        if self.shuffle:
            self.index_array = np.random.permutation(self.n)

    def __getitem__(self, idx: int) -> Any:
        if idx >= len(self):
            raise ValueError(f"Asked to retrieve element {idx}, but the Sequence has length {len(self)}")
        if self.seed is not None:
            np.random.seed(self.seed + self.total_batches_seen)
        self.total_batches_seen += 1
        if self.index_array is None:
            self._set_index_array()
        index_array = self.index_array[self.batch_size * idx : self.batch_size * (idx + 1)]
        return self._get_batches_of_transformed_samples(index_array)

    def __len__(self) -> int:
        return (self.n + self.batch_size - 1) // self.batch_size  # round up

    def on_epoch_end(self) -> None:
        self._set_index_array()

    def reset(self) -> None:
        self.batch_index = 0

    def _flow_index(self):
        self.reset()
        while 1:
            if self.seed is not None:
                np.random.seed(self.seed + self.total_batches_seen)
            if self.batch_index == 0:
                self._set_index_array()
            current_index = 0 if self.n == 0 else (self.batch_index * self.batch_size) % self.n
            if self.n > current_index + self.batch_size:
                self.batch_index += 1
            else:
                self.batch_index = 0
            self.total_batches_seen += 1
            yield self.index_array[current_index : current_index + self.batch_size]

    def __iter__(self):
        return self

    def __next__(self) -> Any:
        with self.lock:
            index_array = next(self.index_generator)
        return self._get_batches_of_transformed_samples(index_array)

    def _get_batches_of_transformed_samples(self, index_array: np.ndarray) -> Any:
        raise NotImplementedError


def _iter_valid_files(directory: str, white_list_formats: tuple, follow_links: bool):
    for root, _, files in sorted(os.walk(directory, followlinks=follow_links), key=lambda x: x[0]):
        for fname in sorted(files):
            if fname.lower().endswith(".tiff"):
                warnings.warn(
                    'Using ".tiff" files with multiple bands will cause distortion. Please verify your output.',
                    stacklevel=2,
                )
            if fname.lower().endswith(white_list_formats):
                yield root, fname


def _list_valid_filenames_in_directory(
    directory: str, white_list_formats: tuple, split: Any, class_indices: dict, follow_links: bool
) -> tuple[list, list]:
    """The class index and the path relative to ``directory``'s parent of each image file below it
    (``split = (lo, hi)`` keeps that fraction of them, in sorted order)."""
    dirname = os.path.basename(directory)
    valid_files: Any = _iter_valid_files(directory, white_list_formats, follow_links)
    if split:
        all_files = list(valid_files)
        start, stop = int(split[0] * len(all_files)), int(split[1] * len(all_files))
        valid_files = all_files[start:stop]
    classes, filenames = [], []
    for root, fname in valid_files:
        classes.append(class_indices[dirname])
        filenames.append(os.path.join(dirname, os.path.relpath(os.path.join(root, fname), directory)))
    return classes, filenames


class BatchFromFilesMixin:
    """Turns image files into augmented batches (shared by ``DirectoryIterator`` and ``DataFrameIterator``)."""

    def set_processing_attrs(
        self,
        image_data_generator: Any,
        target_size: Any,
        color_mode: str,
        data_format: str,
        save_to_dir: Any,
        save_prefix: str,
        save_format: str,
        subset: Any,
        interpolation: str,
        keep_aspect_ratio: bool,
    ) -> None:
        self.image_data_generator = image_data_generator
        self.target_size = tuple(target_size)
        self.keep_aspect_ratio = keep_aspect_ratio
        if color_mode not in {"rgb", "rgba", "grayscale"}:
            raise ValueError(f'Invalid color mode: {color_mode}; expected "rgb", "rgba", or "grayscale".')
        self.color_mode = color_mode
        self.data_format = data_format
        channels = {"rgba": 4, "rgb": 3, "grayscale": 1}[color_mode]
        self.image_shape = (
            self.target_size + (channels,) if data_format == "channels_last" else (channels,) + self.target_size
        )
        self.save_to_dir, self.save_prefix, self.save_format = save_to_dir, save_prefix, save_format
        self.interpolation = interpolation
        split = None
        if subset is not None:
            validation_split = self.image_data_generator._validation_split
            if subset == "validation":
                split = (0, validation_split)
            elif subset == "training":
                split = (validation_split, 1)
            else:
                raise ValueError(f'Invalid subset name: {subset};expected "training" or "validation"')
        self.split, self.subset = split, subset

    def _get_batches_of_transformed_samples(self, index_array: np.ndarray) -> Any:
        batch_x = np.zeros((len(index_array),) + self.image_shape, dtype=self.dtype)
        filepaths = self.filepaths
        for i, j in enumerate(index_array):
            img = load_img(
                filepaths[j],
                color_mode=self.color_mode,
                target_size=self.target_size,
                interpolation=self.interpolation,
                keep_aspect_ratio=self.keep_aspect_ratio,
            )
            x = img_to_array(img, data_format=self.data_format)
            if hasattr(img, "close"):
                img.close()
            if self.image_data_generator:
                params = self.image_data_generator.get_random_transform(x.shape)
                x = self.image_data_generator.apply_transform(x, params)
                x = self.image_data_generator.standardize(x)
            batch_x[i] = x
        if self.save_to_dir:
            for i, j in enumerate(index_array):
                img = array_to_img(batch_x[i], self.data_format, scale=True)
                fname = f"{self.save_prefix}_{j}_{np.random.randint(1e7)}.{self.save_format}"
                img.save(os.path.join(self.save_to_dir, fname))
        if self.class_mode == "input":
            batch_y = batch_x.copy()
        elif self.class_mode in {"binary", "sparse"}:
            batch_y = np.empty(len(batch_x), dtype=self.dtype)
            for i, n_observation in enumerate(index_array):
                batch_y[i] = self.classes[n_observation]
        elif self.class_mode == "categorical":
            batch_y = np.zeros((len(batch_x), len(self.class_indices)), dtype=self.dtype)
            for i, n_observation in enumerate(index_array):
                batch_y[i, self.classes[n_observation]] = 1.0  # (a list of classes: several ones)
        elif self.class_mode == "multi_output":
            batch_y = [output[index_array] for output in self.labels]
        elif self.class_mode == "raw":
            batch_y = self.labels[index_array]
        else:
            return batch_x
        if self.sample_weight is None:
            return batch_x, batch_y
        return batch_x, batch_y, self.sample_weight[index_array]


class DirectoryIterator(BatchFromFilesMixin, Iterator):
    """Batches of the image files in ``directory``'s class subfolders (``flow_from_directory``)."""

    allowed_class_modes = {"categorical", "binary", "sparse", "input", None}

    def __init__(
        self,
        directory: Any,
        image_data_generator: Any,
        target_size: Any = (256, 256),
        color_mode: str = "rgb",
        classes: Any = None,
        class_mode: str | None = "categorical",
        batch_size: int = 32,
        shuffle: bool = True,
        seed: int | None = None,
        data_format: str | None = None,
        save_to_dir: str | None = None,
        save_prefix: str = "",
        save_format: str = "png",
        follow_links: bool = False,
        subset: str | None = None,
        interpolation: str = "nearest",
        keep_aspect_ratio: bool = False,
        dtype: Any = None,
    ) -> None:
        data_format = data_format or backend.image_data_format()
        self.dtype = dtype or backend.floatx()
        self.set_processing_attrs(
            image_data_generator,
            target_size,
            color_mode,
            data_format,
            save_to_dir,
            save_prefix,
            save_format,
            subset,
            interpolation,
            keep_aspect_ratio,
        )
        self.directory = directory
        if class_mode not in self.allowed_class_modes:
            raise ValueError(f"Invalid class_mode: {class_mode}; expected one of: {self.allowed_class_modes}")
        self.class_mode = class_mode
        if not classes:
            classes = [d for d in sorted(os.listdir(directory)) if os.path.isdir(os.path.join(directory, d))]
        self.num_classes = len(classes)
        self.class_indices = dict(zip(classes, range(len(classes))))
        self.filenames: list = []
        labels: list = []
        for subdir in classes:
            cls, names = _list_valid_filenames_in_directory(
                os.path.join(directory, subdir), self.white_list_formats, self.split, self.class_indices, follow_links
            )
            labels += cls
            self.filenames += names
        self.samples = len(self.filenames)
        self.classes = np.asarray(labels, dtype="int32").reshape(self.samples)
        print_msg(f"Found {self.samples} images belonging to {self.num_classes} classes.")
        self._filepaths = [os.path.join(self.directory, fname) for fname in self.filenames]
        super().__init__(self.samples, batch_size, shuffle, seed)

    @property
    def filepaths(self) -> list:
        return self._filepaths

    @property
    def labels(self) -> np.ndarray:
        return self.classes

    @property
    def sample_weight(self) -> None:
        return None


def validate_filename(filename: str, white_list_formats: tuple) -> bool:
    return filename.lower().endswith(white_list_formats) and os.path.isfile(filename)


class DataFrameIterator(BatchFromFilesMixin, Iterator):
    """Batches of the image files a pandas DataFrame lists (``flow_from_dataframe``): paths in ``x_col``
    (relative to ``directory``), labels in ``y_col``, optional weights in ``weight_col``."""

    allowed_class_modes = {"binary", "categorical", "input", "multi_output", "raw", "sparse", None}

    def __init__(
        self,
        dataframe: Any,
        directory: Any = None,
        image_data_generator: Any = None,
        x_col: str = "filename",
        y_col: Any = "class",
        weight_col: Any = None,
        target_size: Any = (256, 256),
        color_mode: str = "rgb",
        classes: Any = None,
        class_mode: str | None = "categorical",
        batch_size: int = 32,
        shuffle: bool = True,
        seed: int | None = None,
        data_format: str = "channels_last",
        save_to_dir: str | None = None,
        save_prefix: str = "",
        save_format: str = "png",
        subset: str | None = None,
        interpolation: str = "nearest",
        keep_aspect_ratio: bool = False,
        dtype: Any = "float32",
        validate_filenames: bool = True,
    ) -> None:
        self.set_processing_attrs(
            image_data_generator,
            target_size,
            color_mode,
            data_format,
            save_to_dir,
            save_prefix,
            save_format,
            subset,
            interpolation,
            keep_aspect_ratio,
        )
        df = dataframe.copy()
        self.directory = directory or ""
        self.class_mode = class_mode
        self.dtype = dtype
        self._check_params(df, x_col, y_col, weight_col, classes)
        if validate_filenames:
            df = self._filter_valid_filepaths(df, x_col)
        if class_mode not in ["input", "multi_output", "raw", None]:
            df, classes = self._filter_classes(df, y_col, classes)
            num_classes = len(classes)
            self.class_indices = dict(zip(classes, range(len(classes))))
        if self.split:
            num_files = len(df)
            df = df.iloc[int(self.split[0] * num_files) : int(self.split[1] * num_files), :]
        if class_mode not in ["input", "multi_output", "raw", None]:
            self.classes = self.get_classes(df, y_col)
        self.filenames = df[x_col].tolist()
        self._sample_weight = df[weight_col].values if weight_col else None
        if class_mode == "multi_output":
            self._targets = [np.array(df[col].tolist()) for col in y_col]
        if class_mode == "raw":
            self._targets = df[y_col].values
        self.samples = len(self.filenames)
        validated = "validated" if validate_filenames else "non-validated"
        if class_mode in ["input", "multi_output", "raw", None]:
            print_msg(f"Found {self.samples} {validated} image filenames.")
        else:
            print_msg(f"Found {self.samples} {validated} image filenames belonging to {num_classes} classes.")
        self._filepaths = [os.path.join(self.directory, fname) for fname in self.filenames]
        super().__init__(self.samples, batch_size, shuffle, seed)

    def _check_params(self, df: Any, x_col: str, y_col: Any, weight_col: Any, classes: Any) -> None:
        if self.class_mode not in self.allowed_class_modes:
            raise ValueError(f"Invalid class_mode: {self.class_mode}; expected one of: {self.allowed_class_modes}")
        if self.class_mode == "multi_output" and not isinstance(y_col, list):
            raise TypeError(
                f'If class_mode="{self.class_mode}", y_col must be a list. Received {type(y_col).__name__}.'
            )
        if not all(df[x_col].apply(lambda x: isinstance(x, str))):
            raise TypeError(f"All values in column x_col={x_col} must be strings.")
        if self.class_mode in {"binary", "sparse"} and not all(df[y_col].apply(lambda x: isinstance(x, str))):
            raise TypeError(f'If class_mode="{self.class_mode}", y_col="{y_col}" column values must be strings.')
        if self.class_mode == "binary":
            if classes:
                if len(set(classes)) != 2:
                    raise ValueError(
                        f'If class_mode="binary" there must be 2 classes. {len(set(classes))} class/es were given.'
                    )
            elif df[y_col].nunique() != 2:
                raise ValueError(
                    f'If class_mode="binary" there must be 2 classes. Found {df[y_col].nunique()} classes.'
                )
        if self.class_mode == "categorical" and not all(df[y_col].apply(lambda x: isinstance(x, (str, list, tuple)))):
            raise TypeError(
                f'If class_mode="{self.class_mode}", y_col="{y_col}" column values must be type string, list or tuple.'
            )
        if classes and self.class_mode in {"input", "multi_output", "raw", None}:
            warnings.warn(f'`classes` will be ignored given the class_mode="{self.class_mode}"', stacklevel=3)
        if weight_col and not issubclass(df[weight_col].dtype.type, np.number):
            raise TypeError(f"Column weight_col={weight_col} must be numeric.")

    def get_classes(self, df: Any, y_col: str) -> list:
        return [
            [self.class_indices[lbl] for lbl in label]
            if isinstance(label, (list, tuple))
            else self.class_indices[label]
            for label in df[y_col]
        ]

    @staticmethod
    def _filter_classes(df: Any, y_col: str, classes: Any) -> tuple:
        df = df.copy()

        def remove_classes(labels: Any, classes: list) -> Any:
            if isinstance(labels, (list, tuple)):
                return [cls for cls in labels if cls in classes] or None
            if isinstance(labels, str):
                return labels if labels in classes else None
            raise TypeError(f"Expect string, list or tuple but found {type(labels)} in {y_col} column ")

        if classes:
            classes = list(dict.fromkeys(classes).keys())
            df[y_col] = df[y_col].apply(lambda x: remove_classes(x, classes))
        else:
            found: set = set()
            for v in df[y_col]:
                if isinstance(v, (list, tuple)):
                    found.update(v)
                else:
                    found.add(v)
            classes = sorted(found)
        return df.dropna(subset=[y_col]), classes

    def _filter_valid_filepaths(self, df: Any, x_col: str) -> Any:
        filepaths = df[x_col].map(lambda fname: os.path.join(self.directory, fname))
        mask = filepaths.apply(validate_filename, args=(self.white_list_formats,))
        n_invalid = (~mask).sum()
        if n_invalid:
            warnings.warn(
                f'Found {n_invalid} invalid image filename(s) in x_col="{x_col}". These filename(s) will be ignored.',
                stacklevel=3,
            )
        return df[mask]

    @property
    def filepaths(self) -> list:
        return self._filepaths

    @property
    def labels(self) -> Any:
        return self._targets if self.class_mode in {"multi_output", "raw"} else self.classes

    @property
    def sample_weight(self) -> Any:
        return self._sample_weight


class NumpyArrayIterator(Iterator):
    """Batches of in-memory images ``x`` (rank 4) with labels ``y`` (``ImageDataGenerator.flow``)."""

    def __init__(
        self,
        x: Any,
        y: Any,
        image_data_generator: Any,
        batch_size: int = 32,
        shuffle: bool = False,
        sample_weight: Any = None,
        seed: int | None = None,
        data_format: str | None = None,
        save_to_dir: str | None = None,
        save_prefix: str = "",
        save_format: str = "png",
        subset: str | None = None,
        ignore_class_split: bool = False,
        dtype: Any = None,
    ) -> None:
        data_format = data_format or backend.image_data_format()
        self.dtype = dtype or backend.floatx()
        if isinstance(x, (tuple, list)):
            x_misc = [np.asarray(x[1])] if not isinstance(x[1], list) else [np.asarray(xx) for xx in x[1]]
            x = x[0]
            for xx in x_misc:
                if len(x) != len(xx):
                    raise ValueError(
                        "All of the arrays in `x` should have the same length. Found a pair with: "
                        f"len(x[0]) = {len(x)}, len(x[?]) = {len(xx)}"
                    )
        else:
            x_misc = []
        if y is not None and len(x) != len(y):
            raise ValueError(
                "`x` (images tensor) and `y` (labels) should have the same length. Found: x.shape = "
                f"{np.asarray(x).shape}, y.shape = {np.asarray(y).shape}"
            )
        if sample_weight is not None and len(x) != len(sample_weight):
            raise ValueError(
                "`x` (images tensor) and `sample_weight` should have the same length. Found: x.shape = "
                f"{np.asarray(x).shape}, sample_weight.shape = {np.asarray(sample_weight).shape}"
            )
        if subset is not None:
            if subset not in {"training", "validation"}:
                raise ValueError(f'Invalid subset name: {subset}; expected "training" or "validation".')
            split_idx = int(len(x) * image_data_generator._validation_split)
            if (
                y is not None
                and not ignore_class_split
                and not np.array_equal(np.unique(y[:split_idx]), np.unique(y[split_idx:]))
            ):
                raise ValueError(
                    "Training and validation subsets have different number of classes after the "
                    "split. If your numpy arrays are sorted by the label, you might want to shuffle "
                    "them."
                )
            part = slice(None, split_idx) if subset == "validation" else slice(split_idx, None)
            x = x[part]
            x_misc = [np.asarray(xx[part]) for xx in x_misc]
            if y is not None:
                y = y[part]
        self.x = np.asarray(x, dtype=self.dtype)
        self.x_misc = x_misc
        if self.x.ndim != 4:
            raise ValueError(
                f"Input data in `NumpyArrayIterator` should have rank 4. You passed an array with shape {self.x.shape}"
            )
        channels_axis = 3 if data_format == "channels_last" else 1
        if self.x.shape[channels_axis] not in {1, 3, 4}:
            warnings.warn(
                f'NumpyArrayIterator is set to use the data format convention "{data_format}" (channels '
                f"on axis {channels_axis}), i.e. expected either 1, 3, or 4 channels on axis "
                f"{channels_axis}. However, it was passed an array with shape {self.x.shape} "
                f"({self.x.shape[channels_axis]} channels).",
                stacklevel=2,
            )
        self.y = np.asarray(y) if y is not None else None
        self.sample_weight = np.asarray(sample_weight) if sample_weight is not None else None
        self.image_data_generator = image_data_generator
        self.data_format = data_format
        self.save_to_dir, self.save_prefix, self.save_format = save_to_dir, save_prefix, save_format
        super().__init__(self.x.shape[0], batch_size, shuffle, seed)

    def _get_batches_of_transformed_samples(self, index_array: np.ndarray) -> Any:
        batch_x = np.zeros((len(index_array),) + self.x.shape[1:], dtype=self.dtype)
        gen = self.image_data_generator
        for i, j in enumerate(index_array):
            x = self.x[j]
            params = gen.get_random_transform(x.shape)
            x = gen.apply_transform(x.astype(self.dtype), params)
            batch_x[i] = gen.standardize(x)
        if self.save_to_dir:
            for i, j in enumerate(index_array):
                img = array_to_img(batch_x[i], self.data_format, scale=True)
                fname = f"{self.save_prefix}_{j}_{np.random.randint(1e4)}.{self.save_format}"
                img.save(os.path.join(self.save_to_dir, fname))
        batch_x_miscs = [xx[index_array] for xx in self.x_misc]
        output: tuple = (batch_x if not batch_x_miscs else [batch_x] + batch_x_miscs,)
        if self.y is None:
            return output[0]
        output += (self.y[index_array],)
        if self.sample_weight is not None:
            output += (self.sample_weight[index_array],)
        return output


# --- ImageDataGenerator ------------------------------------------------------------------------------------------


class ImageDataGenerator:
    """Keras's (deprecated) real-time image augmentation: random rotations, shifts, shears, zooms, channel
    shifts, brightness, flips, then ``preprocessing_function``, ``rescale`` and the sample-/feature-wise
    normalizations (feature-wise statistics and ZCA from ``fit``); ``flow`` and ``flow_from_directory``
    give the batches."""

    def __init__(
        self,
        featurewise_center: bool = False,
        samplewise_center: bool = False,
        featurewise_std_normalization: bool = False,
        samplewise_std_normalization: bool = False,
        zca_whitening: bool = False,
        zca_epsilon: float = 1e-6,
        rotation_range: float = 0,
        width_shift_range: Any = 0.0,
        height_shift_range: Any = 0.0,
        brightness_range: Any = None,
        shear_range: float = 0.0,
        zoom_range: Any = 0.0,
        channel_shift_range: float = 0.0,
        fill_mode: str = "nearest",
        cval: float = 0.0,
        horizontal_flip: bool = False,
        vertical_flip: bool = False,
        rescale: Any = None,
        preprocessing_function: Any = None,
        data_format: str | None = None,
        validation_split: float = 0.0,
        interpolation_order: int = 1,
        dtype: Any = None,
    ) -> None:
        data_format = data_format or backend.image_data_format()
        self.featurewise_center = featurewise_center
        self.samplewise_center = samplewise_center
        self.featurewise_std_normalization = featurewise_std_normalization
        self.samplewise_std_normalization = samplewise_std_normalization
        self.zca_whitening = zca_whitening
        self.zca_epsilon = zca_epsilon
        self.rotation_range = rotation_range
        self.width_shift_range = width_shift_range
        self.height_shift_range = height_shift_range
        self.shear_range = shear_range
        self.zoom_range = zoom_range
        self.channel_shift_range = channel_shift_range
        self.fill_mode = fill_mode
        self.cval = cval
        self.horizontal_flip = horizontal_flip
        self.vertical_flip = vertical_flip
        self.rescale = rescale
        self.preprocessing_function = preprocessing_function
        self.dtype = dtype or backend.floatx()
        self.interpolation_order = interpolation_order
        if data_format not in {"channels_last", "channels_first"}:
            raise ValueError(
                '`data_format` should be `"channels_last"` (channel after row and column) or '
                f'`"channels_first"` (channel before row and column). Received: {data_format}'
            )
        self.data_format = data_format
        self.channel_axis, self.row_axis, self.col_axis = (1, 2, 3) if data_format == "channels_first" else (3, 1, 2)
        if validation_split and not 0 < validation_split < 1:
            raise ValueError(f"`validation_split` must be strictly between 0 and 1.  Received: {validation_split}")
        self._validation_split = validation_split
        self.mean = self.std = self.zca_whitening_matrix = None
        if isinstance(zoom_range, (float, int)):
            self.zoom_range = [1 - zoom_range, 1 + zoom_range]
        elif len(zoom_range) == 2 and all(isinstance(val, (float, int)) for val in zoom_range):
            self.zoom_range = [zoom_range[0], zoom_range[1]]
        else:
            raise ValueError(f"`zoom_range` should be a float or a tuple or list of two floats. Received: {zoom_range}")
        if zca_whitening:
            if not featurewise_center:
                self.featurewise_center = True
                warnings.warn(
                    "This ImageDataGenerator specifies `zca_whitening`, which overrides setting of "
                    "`featurewise_center`.",
                    stacklevel=2,
                )
            if featurewise_std_normalization:
                self.featurewise_std_normalization = False
                warnings.warn(
                    "This ImageDataGenerator specifies `zca_whitening` which overrides setting "
                    "of`featurewise_std_normalization`.",
                    stacklevel=2,
                )
        if featurewise_std_normalization and not featurewise_center:
            self.featurewise_center = True
            warnings.warn(
                "This ImageDataGenerator specifies `featurewise_std_normalization`, which overrides "
                "setting of `featurewise_center`.",
                stacklevel=2,
            )
        if samplewise_std_normalization and not samplewise_center:
            self.samplewise_center = True
            warnings.warn(
                "This ImageDataGenerator specifies `samplewise_std_normalization`, which overrides "
                "setting of `samplewise_center`.",
                stacklevel=2,
            )
        if brightness_range is not None and (
            not isinstance(brightness_range, (tuple, list)) or len(brightness_range) != 2
        ):
            raise ValueError(f"`brightness_range should be tuple or list of two floats. Received: {brightness_range}")
        self.brightness_range = brightness_range

    def flow(
        self,
        x: Any,
        y: Any = None,
        batch_size: int = 32,
        shuffle: bool = True,
        sample_weight: Any = None,
        seed: int | None = None,
        save_to_dir: str | None = None,
        save_prefix: str = "",
        save_format: str = "png",
        ignore_class_split: bool = False,
        subset: str | None = None,
    ) -> NumpyArrayIterator:
        """Augmented batches of the arrays ``x`` (rank 4) and ``y``."""
        return NumpyArrayIterator(
            x,
            y,
            self,
            batch_size=batch_size,
            shuffle=shuffle,
            sample_weight=sample_weight,
            seed=seed,
            data_format=self.data_format,
            save_to_dir=save_to_dir,
            save_prefix=save_prefix,
            save_format=save_format,
            ignore_class_split=ignore_class_split,
            subset=subset,
            dtype=self.dtype,
        )

    def flow_from_directory(
        self,
        directory: Any,
        target_size: Any = (256, 256),
        color_mode: str = "rgb",
        classes: Any = None,
        class_mode: str | None = "categorical",
        batch_size: int = 32,
        shuffle: bool = True,
        seed: int | None = None,
        save_to_dir: str | None = None,
        save_prefix: str = "",
        save_format: str = "png",
        follow_links: bool = False,
        subset: str | None = None,
        interpolation: str = "nearest",
        keep_aspect_ratio: bool = False,
    ) -> DirectoryIterator:
        """Augmented batches of the images in ``directory``'s subfolders (one class each, sorted by name)."""
        return DirectoryIterator(
            directory,
            self,
            target_size=target_size,
            color_mode=color_mode,
            keep_aspect_ratio=keep_aspect_ratio,
            classes=classes,
            class_mode=class_mode,
            data_format=self.data_format,
            batch_size=batch_size,
            shuffle=shuffle,
            seed=seed,
            save_to_dir=save_to_dir,
            save_prefix=save_prefix,
            save_format=save_format,
            follow_links=follow_links,
            subset=subset,
            interpolation=interpolation,
            dtype=self.dtype,
        )

    def flow_from_dataframe(
        self,
        dataframe: Any,
        directory: Any = None,
        x_col: str = "filename",
        y_col: Any = "class",
        weight_col: Any = None,
        target_size: Any = (256, 256),
        color_mode: str = "rgb",
        classes: Any = None,
        class_mode: str | None = "categorical",
        batch_size: int = 32,
        shuffle: bool = True,
        seed: int | None = None,
        save_to_dir: str | None = None,
        save_prefix: str = "",
        save_format: str = "png",
        subset: str | None = None,
        interpolation: str = "nearest",
        validate_filenames: bool = True,
        **kwargs: Any,
    ) -> DataFrameIterator:
        """Augmented batches of the image files a pandas DataFrame lists."""
        for key, message in (
            ("has_ext", "has_ext is deprecated, filenames in the dataframe have to match the exact filenames in disk."),
            (
                "sort",
                "sort is deprecated, batches will be created in thesame order than the "
                "filenames provided if `shuffle`is set to `False`.",
            ),
            (
                "drop_duplicates",
                "drop_duplicates is deprecated, you can drop duplicates by using the "
                "pandas.DataFrame.drop_duplicates method.",
            ),
        ):
            if key in kwargs:
                warnings.warn(message, DeprecationWarning, stacklevel=2)
        if class_mode == "other":
            warnings.warn(
                '`class_mode="other"` is deprecated, please use `class_mode="raw"`.', DeprecationWarning, stacklevel=2
            )
            class_mode = "raw"
        return DataFrameIterator(
            dataframe,
            directory,
            self,
            x_col=x_col,
            y_col=y_col,
            weight_col=weight_col,
            target_size=target_size,
            color_mode=color_mode,
            classes=classes,
            class_mode=class_mode,
            data_format=self.data_format,
            batch_size=batch_size,
            shuffle=shuffle,
            seed=seed,
            save_to_dir=save_to_dir,
            save_prefix=save_prefix,
            save_format=save_format,
            subset=subset,
            interpolation=interpolation,
            validate_filenames=validate_filenames,
            dtype=self.dtype,
        )

    def standardize(self, x: np.ndarray) -> np.ndarray:
        """``preprocessing_function``, ``rescale``, then the normalizations, in place where Keras does."""
        if self.preprocessing_function:
            x = self.preprocessing_function(x)
        if self.rescale:
            x *= self.rescale
        if self.samplewise_center:
            x -= np.mean(x, keepdims=True)
        if self.samplewise_std_normalization:
            x /= np.std(x, keepdims=True) + 1e-6
        unfit = (
            "This ImageDataGenerator specifies `{}`, but it hasn't been fit on any training data. Fit it "
            "first by calling `.fit(numpy_data)`."
        )
        if self.featurewise_center:
            if self.mean is not None:
                x -= self.mean
            else:
                warnings.warn(unfit.format("featurewise_center"), stacklevel=2)
        if self.featurewise_std_normalization:
            if self.std is not None:
                x /= self.std + 1e-6
            else:
                warnings.warn(unfit.format("featurewise_std_normalization"), stacklevel=2)
        if self.zca_whitening:
            if self.zca_whitening_matrix is not None:
                flat_x = x.reshape(-1, math.prod(x.shape[-3:]))
                x = np.reshape(flat_x @ self.zca_whitening_matrix, x.shape)
            else:
                warnings.warn(unfit.format("zca_whitening"), stacklevel=2)
        return x

    def get_random_transform(self, img_shape: Any, seed: int | None = None) -> dict:
        """Draws one image's transform parameters from ``np.random`` (Keras's calls, in Keras's order)."""
        img_row_axis, img_col_axis = self.row_axis - 1, self.col_axis - 1
        if seed is not None:
            np.random.seed(seed)
        theta = np.random.uniform(-self.rotation_range, self.rotation_range) if self.rotation_range else 0
        tx = self._draw_shift(self.height_shift_range, img_shape[img_row_axis])
        ty = self._draw_shift(self.width_shift_range, img_shape[img_col_axis])
        shear = np.random.uniform(-self.shear_range, self.shear_range) if self.shear_range else 0
        if self.zoom_range[0] == 1 and self.zoom_range[1] == 1:
            zx, zy = 1, 1
        else:
            zx, zy = np.random.uniform(self.zoom_range[0], self.zoom_range[1], 2)
        flip_horizontal = (np.random.random() < 0.5) * self.horizontal_flip
        flip_vertical = (np.random.random() < 0.5) * self.vertical_flip
        channel_shift_intensity = None
        if self.channel_shift_range != 0:
            channel_shift_intensity = np.random.uniform(-self.channel_shift_range, self.channel_shift_range)
        brightness = None
        if self.brightness_range is not None:
            brightness = np.random.uniform(self.brightness_range[0], self.brightness_range[1])
        return {
            "theta": theta,
            "tx": tx,
            "ty": ty,
            "shear": shear,
            "zx": zx,
            "zy": zy,
            "flip_horizontal": flip_horizontal,
            "flip_vertical": flip_vertical,
            "channel_shift_intensity": channel_shift_intensity,
            "brightness": brightness,
        }

    @staticmethod
    def _draw_shift(shift_range: Any, size: int) -> Any:
        if not shift_range:
            return 0
        try:  # a 1-D array-like or an int: one of its values, with a random sign
            t = np.random.choice(shift_range)
            t *= np.random.choice([-1, 1])
        except ValueError:  # a float
            t = np.random.uniform(-shift_range, shift_range)
        if np.max(shift_range) < 1:
            t *= size
        return t

    def apply_transform(self, x: np.ndarray, transform_parameters: dict) -> np.ndarray:
        """Applies the parameters of ``get_random_transform`` to one 3-D image."""
        img_row_axis, img_col_axis, img_channel_axis = self.row_axis - 1, self.col_axis - 1, self.channel_axis - 1
        p = transform_parameters
        x = apply_affine_transform(
            x,
            p.get("theta", 0),
            p.get("tx", 0),
            p.get("ty", 0),
            p.get("shear", 0),
            p.get("zx", 1),
            p.get("zy", 1),
            row_axis=img_row_axis,
            col_axis=img_col_axis,
            channel_axis=img_channel_axis,
            fill_mode=self.fill_mode,
            cval=self.cval,
            order=self.interpolation_order,
        )
        if p.get("channel_shift_intensity") is not None:
            x = apply_channel_shift(x, p["channel_shift_intensity"], img_channel_axis)
        if p.get("flip_horizontal", False):
            x = flip_axis(x, img_col_axis)
        if p.get("flip_vertical", False):
            x = flip_axis(x, img_row_axis)
        if p.get("brightness") is not None:
            x = apply_brightness_shift(x, p["brightness"], False)
        return x

    def random_transform(self, x: np.ndarray, seed: int | None = None) -> np.ndarray:
        """One random transform of the 3-D image ``x``."""
        return self.apply_transform(x, self.get_random_transform(x.shape, seed))

    def fit(self, x: Any, augment: bool = False, rounds: int = 1, seed: int | None = None) -> None:
        """Computes the feature-wise mean/std (and the ZCA matrix) of the sample images ``x`` (rank 4), after
        ``rescale`` and, with ``augment``, ``rounds`` random transforms of each."""
        x = np.asarray(x, dtype=self.dtype)
        if x.ndim != 4:
            raise ValueError("Input to `.fit()` should have rank 4. Got array with shape: " + str(x.shape))
        if x.shape[self.channel_axis] not in {1, 3, 4}:
            warnings.warn(
                "Expected input to be images (as Numpy array) following the data format convention "
                f'"{self.data_format}" (channels on axis {self.channel_axis}), i.e. expected either 1, 3 '
                f"or 4 channels on axis {self.channel_axis}. However, it was passed an array with shape "
                f"{x.shape} ({x.shape[self.channel_axis]} channels).",
                stacklevel=2,
            )
        if seed is not None:
            np.random.seed(seed)
        x = np.copy(x)
        if self.rescale:
            x *= self.rescale
        if augment:
            ax = np.zeros((rounds * x.shape[0],) + x.shape[1:], dtype=self.dtype)
            for r in range(rounds):
                for i in range(x.shape[0]):
                    ax[i + r * x.shape[0]] = self.random_transform(x[i])
            x = ax
        broadcast_shape = [1, 1, 1]
        broadcast_shape[self.channel_axis - 1] = x.shape[self.channel_axis]
        if self.featurewise_center:
            self.mean = np.reshape(np.mean(x, axis=(0, self.row_axis, self.col_axis)), broadcast_shape)
            x -= self.mean
        if self.featurewise_std_normalization:
            self.std = np.reshape(np.std(x, axis=(0, self.row_axis, self.col_axis)), broadcast_shape)
            x /= self.std + 1e-6
        if self.zca_whitening:
            n = len(x)
            flat_x = np.reshape(x, (n, -1))
            u, s, _ = np.linalg.svd(flat_x.T, full_matrices=False)
            s_inv = np.sqrt(n) / (s + self.zca_epsilon)
            self.zca_whitening_matrix = (u * s_inv).dot(u.T)
