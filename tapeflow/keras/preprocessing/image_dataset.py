"""``tf.keras.utils.image_dataset_from_directory`` as Keras 3.15 (``format="tf"``): the image files of
``directory`` (one subfolder per class, sorted by name), shuffled with NumPy's ``RandomState(seed)``, split,
and read by a ``tf.data`` pipeline (``read_file``, ``decode_image``, ``resize``) in Keras's order."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.keras import backend
from tapeflow.keras.dataset_utils import (
    _check_label_args,
    _check_validation_split_arg,
    _labels_to_dataset,
    get_training_or_validation_split,
    index_directory,
)

__all__ = ["image_dataset_from_directory"]

ALLOWLIST_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
_INTERPOLATIONS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")


def _load_image(
    path: Any, image_size: tuple, num_channels: int, interpolation: str, data_format: str, crop_to_aspect_ratio: bool
) -> Any:
    from tapeflow.ops import array_ops, image_decode_ops, io_ops, math_ops
    from tapeflow.ops.image_transform_ops import resize

    img = image_decode_ops.decode_image(io_ops.read_file(path), channels=num_channels, expand_animations=False)
    if crop_to_aspect_ratio:  # Keras's smart_resize with TF's dynamic shapes
        shape = array_ops.shape(img)
        height, width = shape[0], shape[1]
        th, tw = image_size

        def crop(n, other, t_num, t_den):
            size = math_ops.cast(math_ops.cast(other * t_num, "float32") / t_den, "int32")
            return math_ops.cast(math_ops.maximum(math_ops.minimum(n, size), 1), "int32")

        crop_h, crop_w = crop(height, width, th, tw), crop(width, height, tw, th)
        h0 = math_ops.cast(math_ops.cast(height - crop_h, "float32") / 2, "int32")
        w0 = math_ops.cast(math_ops.cast(width - crop_w, "float32") / 2, "int32")
        # the window's rows and columns (tapeflow's slice takes static bounds only)
        img = array_ops.gather(img, array_ops.range_(h0, h0 + crop_h), axis=0)
        img = array_ops.gather(img, array_ops.range_(w0, w0 + crop_w), axis=1)
    img = resize(img, image_size, method=interpolation)
    if data_format == "channels_first":
        img = array_ops.transpose(img, (2, 0, 1))
        img.set_shape((num_channels, image_size[0], image_size[1]))
    else:
        img.set_shape((image_size[0], image_size[1], num_channels))
    return img


def _paths_and_labels_to_dataset(
    image_paths: list,
    image_size: tuple,
    num_channels: int,
    labels: Any,
    label_mode: Any,
    num_classes: int,
    interpolation: str,
    data_format: str,
    crop_to_aspect_ratio: bool,
    shuffle: bool = False,
    shuffle_buffer_size: int | None = None,
    seed: int | None = None,
) -> Any:
    from tapeflow.data import Dataset

    ds = Dataset.from_tensor_slices(image_paths)
    if label_mode:
        ds = Dataset.zip((ds, _labels_to_dataset(labels, label_mode, num_classes)))
    if shuffle:
        ds = ds.shuffle(buffer_size=shuffle_buffer_size or 1024, seed=seed)
    args = (image_size, num_channels, interpolation, data_format, crop_to_aspect_ratio)
    if label_mode:
        return ds.map(lambda x, y: (_load_image(x, *args), y), num_parallel_calls=-1)
    return ds.map(lambda x: _load_image(x, *args), num_parallel_calls=-1)


def image_dataset_from_directory(
    directory: Any,
    labels: Any = "inferred",
    label_mode: str | None = "int",
    class_names: Any = None,
    color_mode: str = "rgb",
    batch_size: int | None = 32,
    image_size: Any = (256, 256),
    shuffle: bool = True,
    seed: int | None = None,
    validation_split: float | None = None,
    subset: str | None = None,
    interpolation: str = "bilinear",
    follow_links: bool = False,
    crop_to_aspect_ratio: bool = False,
    pad_to_aspect_ratio: bool = False,
    data_format: str | None = None,
    format: str = "tf",
    verbose: bool = True,
) -> Any:
    """A ``tf.data.Dataset`` of ``(images, labels)`` batches from ``directory``'s class subfolders
    (``labels="inferred"``), with ``class_names`` and ``file_paths`` attributes; ``subset="both"`` gives the
    training and validation datasets."""
    _check_label_args(labels, class_names, label_mode, "image", "", samples="images")
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    channels = {"rgb": 3, "rgba": 4, "grayscale": 1}
    if color_mode not in channels:
        raise ValueError(
            f'`color_mode` must be one of {{"rgb", "rgba", "grayscale"}}. Received: color_mode={color_mode}'
        )
    num_channels = channels[color_mode]
    if isinstance(image_size, int):
        image_size = (image_size, image_size)
    elif not isinstance(image_size, (list, tuple)) or not len(image_size) == 2:
        raise ValueError(
            f"Invalid `image_size` value. Expected a tuple of 2 integers. Received: image_size={image_size}"
        )
    image_size = tuple(image_size)
    interpolation = interpolation.lower()
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(
            f"Argument `interpolation` should be one of {_INTERPOLATIONS}. Received: interpolation={interpolation}"
        )
    if format not in ("tf", "grain"):
        raise ValueError(f'`format` should be either "tf" or "grain". Received: format={format}')
    if format == "grain":
        raise NotImplementedError("image_dataset_from_directory(format='grain') is not implemented in tapeflow")
    if pad_to_aspect_ratio:
        if crop_to_aspect_ratio:
            raise ValueError("Only one of `pad_to_aspect_ratio`, `crop_to_aspect_ratio` can be set to `True`.")
        raise NotImplementedError(
            "image_dataset_from_directory(pad_to_aspect_ratio=True) (tf.image.resize_with_pad) "
            "is not implemented in tapeflow"
        )
    _check_validation_split_arg(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    image_paths, labels, class_names = index_directory(
        directory,
        labels,
        formats=ALLOWLIST_FORMATS,
        class_names=class_names,
        shuffle=shuffle,
        seed=seed,
        follow_links=follow_links,
        verbose=verbose,
    )
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError(
            'When passing `label_mode="binary"`, there must be exactly 2 class_names. Received: '
            f"class_names={class_names}"
        )
    data_format = backend.standardize_data_format(data_format)
    shuffle_buffer_size = batch_size * 8 if batch_size is not None else 1024
    common = dict(
        image_size=image_size,
        num_channels=num_channels,
        label_mode=label_mode,
        num_classes=len(class_names) if class_names else 0,
        interpolation=interpolation,
        data_format=data_format,
        crop_to_aspect_ratio=crop_to_aspect_ratio,
    )

    def finish(ds: Any, paths: list) -> Any:
        if batch_size is not None:
            ds = ds.batch(batch_size)
        ds = ds.prefetch(-1)
        ds.class_names = class_names
        ds.file_paths = paths
        return ds

    if subset == "both":
        paths_train, labels_train = get_training_or_validation_split(image_paths, labels, validation_split, "training")
        paths_val, labels_val = get_training_or_validation_split(image_paths, labels, validation_split, "validation")
        if not paths_train:
            raise ValueError(f"No training images found in directory {directory}. Allowed formats: {ALLOWLIST_FORMATS}")
        if not paths_val:
            raise ValueError(
                f"No validation images found in directory {directory}. Allowed formats: {ALLOWLIST_FORMATS}"
            )
        train = _paths_and_labels_to_dataset(
            paths_train,
            labels=labels_train,
            shuffle=shuffle,
            shuffle_buffer_size=shuffle_buffer_size,
            seed=seed,
            **common,
        )
        val = _paths_and_labels_to_dataset(paths_val, labels=labels_val, shuffle=False, **common)
        return [finish(train, paths_train), finish(val, paths_val)]
    image_paths, labels = get_training_or_validation_split(image_paths, labels, validation_split, subset)
    if not image_paths:
        raise ValueError(f"No images found in directory {directory}. Allowed formats: {ALLOWLIST_FORMATS}")
    ds = _paths_and_labels_to_dataset(
        image_paths, labels=labels, shuffle=shuffle, shuffle_buffer_size=shuffle_buffer_size, seed=seed, **common
    )
    return finish(ds, image_paths)
