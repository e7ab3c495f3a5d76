"""``tf.keras.utils.text_dataset_from_directory`` and the directory indexing behind it (Keras 3.15's
``dataset_utils``): files listed class folder by class folder in sorted order, shuffled with
``np.random.RandomState(seed)``, split into training/validation, then a ``tf.data`` pipeline of
(file contents, label) pairs shuffled with ``seed`` and batched, so the batches are Keras's."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from tapeflow.keras.io_utils import print_msg

__all__ = ["text_dataset_from_directory", "audio_dataset_from_directory", "split_dataset"]


def _check_validation_split_arg(validation_split: Any, subset: Any, shuffle: bool, seed: Any) -> None:
    if validation_split and not 0 < validation_split < 1:
        raise ValueError(f"`validation_split` must be between 0 and 1, received: {validation_split}")
    if (validation_split or subset) and not (validation_split and subset):
        raise ValueError("If `subset` is set, `validation_split` must be set, and inversely.")
    if subset not in ("training", "validation", "both", None):
        raise ValueError(f'`subset` must be either "training", "validation" or "both", received: {subset}')
    if validation_split and shuffle and seed is None:
        raise ValueError(
            "If using `validation_split` and shuffling the data, you must provide a `seed` argument, to "
            "make sure that there is no overlap between the training and validation subset."
        )


def _index_subdirectory(directory: str, class_index: int, follow_links: bool, formats: tuple) -> tuple[list, list]:
    dirname = os.path.basename(directory)
    filenames, labels = [], []
    for root, _, files in sorted(os.walk(directory, followlinks=follow_links), key=lambda x: x[0]):
        for fname in sorted(files):
            if fname.lower().endswith(formats):
                labels.append(class_index)
                filenames.append(os.path.join(dirname, os.path.relpath(os.path.join(root, fname), directory)))
    return filenames, labels


def index_directory(
    directory: str,
    labels: Any,
    formats: tuple,
    class_names: Any = None,
    shuffle: bool = True,
    seed: Any = None,
    follow_links: bool = False,
    verbose: bool = True,
) -> tuple[list, Any, Any]:
    """(file paths, integer labels, class names) of the files in ``directory`` (Keras's ``index_directory``)."""
    if labels == "inferred":
        subdirs = [
            d
            for d in sorted(os.listdir(directory))
            if os.path.isdir(os.path.join(directory, d)) and not d.startswith(".")
        ]
        if class_names is not None:
            if not set(class_names).issubset(set(subdirs)):
                raise ValueError(
                    "The `class_names` passed did not match the names of the subdirectories of the "
                    f"target directory. Expected: {subdirs} (or a subset of it), but received: "
                    f"class_names={class_names}"
                )
            subdirs = class_names
    else:
        subdirs = [""]
        if class_names is not None:
            if labels is None:
                raise ValueError("When `labels=None` (no labels), argument `class_names` cannot be specified.")
            raise ValueError(
                "When argument `labels` is specified, argument `class_names` cannot be specified (the "
                "`class_names` will be the sorted list of labels)."
            )
    class_names = subdirs
    filenames: list = []
    label_parts = []
    for i, subdir in enumerate(subdirs):
        names, part = _index_subdirectory(
            os.path.join(directory, subdir), i if labels == "inferred" else 0, follow_links, formats
        )
        filenames += names
        label_parts.append(part)
    if labels == "inferred":
        labels = np.asarray([x for part in label_parts for x in part], dtype="int32")
    elif labels is None:
        class_names = None
    else:
        if len(labels) != len(filenames):
            raise ValueError(
                "Expected the lengths of `labels` to match the number of files in the target directory. "
                f"len(labels) is {len(labels)} while we found {len(filenames)} files in directory "
                f"{directory}."
            )
        class_names = [str(label) for label in sorted(set(labels))]
    if verbose:
        if labels is None:
            print_msg(f"Found {len(filenames)} files.")
        else:
            print_msg(f"Found {len(filenames)} files belonging to {len(class_names)} classes.")
    file_paths = [os.path.join(directory, fname) for fname in filenames]
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(file_paths)
        if labels is not None:
            np.random.RandomState(seed).shuffle(labels)
    return file_paths, labels, class_names


def get_training_or_validation_split(samples: list, labels: Any, validation_split: Any, subset: Any) -> tuple:
    if not validation_split:
        return samples, labels
    num_val_samples = int(validation_split * len(samples))
    if subset == "training":
        print_msg(f"Using {len(samples) - num_val_samples} files for training.")
        samples = samples[:-num_val_samples]
        labels = None if labels is None else labels[:-num_val_samples]
    elif subset == "validation":
        print_msg(f"Using {num_val_samples} files for validation.")
        samples = samples[-num_val_samples:]
        labels = None if labels is None else labels[-num_val_samples:]
    else:
        raise ValueError(f'`subset` must be either "training" or "validation", received: {subset}')
    return samples, labels


def _labels_to_dataset(labels: Any, label_mode: str, num_classes: int) -> Any:
    from tapeflow.data.dataset import Dataset
    from tapeflow.ops import array_ops, indexing_ops, math_ops

    label_ds = Dataset.from_tensor_slices(labels)
    if label_mode == "binary":
        label_ds = label_ds.map(lambda x: array_ops.expand_dims(math_ops.cast(x, "float32"), axis=-1))
    elif label_mode == "categorical":
        label_ds = label_ds.map(lambda x: indexing_ops.one_hot(x, num_classes))
    return label_ds


def _paths_and_labels_to_dataset(
    file_paths: list,
    labels: Any,
    label_mode: Any,
    num_classes: int,
    max_length: Any,
    shuffle: bool = False,
    shuffle_buffer_size: Any = None,
    seed: Any = None,
) -> Any:
    from tapeflow.data.dataset import Dataset
    from tapeflow.ops.io_ops import read_file
    from tapeflow.ops import string_ops

    def contents(path: Any) -> Any:
        txt = read_file(path)
        return txt if max_length is None else string_ops.substr(txt, 0, max_length)

    ds = Dataset.from_tensor_slices(file_paths)
    if label_mode:
        ds = Dataset.zip((ds, _labels_to_dataset(labels, label_mode, num_classes)))
    if shuffle:
        ds = ds.shuffle(buffer_size=shuffle_buffer_size or 1024, seed=seed)
    if label_mode:
        return ds.map(lambda x, y: (contents(x), y))
    return ds.map(contents)


def _check_label_args(labels: Any, class_names: Any, label_mode: Any, kind: str, lead: str,
                      samples: str | None = None) -> None:
    """Keras's checks of ``labels``/``class_names``/``label_mode`` for the ``*_dataset_from_directory`` functions
    (``kind`` names the files, ``samples`` what a label-less dataset holds, "<kind> samples" unless given;
    Keras's text starts "The" for some of them: ``lead``)."""
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple)):
            raise ValueError(
                f"{lead}`labels` argument should be a list/tuple of integer labels, of the same size as the number of "
                f"{kind} files in the target directory. If you wish to infer the labels from the subdirectory names "
                'in the target directory, pass `labels="inferred"`. If you wish to get a dataset that only contains '
                f"{samples or kind + ' samples'} (no labels), pass `labels=None`. Received: labels={labels}"
            )
        if class_names:
            raise ValueError(
                'You can only pass `class_names` if `labels="inferred"`. '
                f"Received: labels={labels}, and class_names={class_names}"
            )
    if label_mode not in {"int", "categorical", "binary", None}:
        raise ValueError(
            '`label_mode` argument must be one of "int", "categorical", "binary", or None. '
            f"Received: label_mode={label_mode}"
        )


def text_dataset_from_directory(
    directory: Any,
    labels: Any = "inferred",
    label_mode: Any = "int",
    class_names: Any = None,
    batch_size: Any = 32,
    max_length: Any = None,
    shuffle: bool = True,
    seed: Any = None,
    validation_split: Any = None,
    subset: Any = None,
    follow_links: bool = False,
    format: str = "tf",  # noqa: A002
    verbose: bool = True,
) -> Any:
    """A ``tf.data.Dataset`` of (text, label) batches from ``directory/<class name>/*.txt`` (Keras 3's
    ``text_dataset_from_directory``): labels inferred from the folders (``label_mode`` ``"int"``,
    ``"binary"``, ``"categorical"`` or ``None``), ``validation_split`` with ``subset`` ``"training"``,
    ``"validation"`` or ``"both"``; the dataset's ``class_names`` lists the folders."""
    from tapeflow.data.dataset import AUTOTUNE

    directory = os.fspath(directory)
    _check_label_args(labels, class_names, label_mode, "text", "")
    if format != "tf":
        if format == "grain":
            raise NotImplementedError('text_dataset_from_directory(format="grain") in tapeflow')
        raise ValueError(f'`format` should be either "tf" or "grain". Received: format={format}')
    if labels is None or label_mode is None:
        labels = label_mode = None
    _check_validation_split_arg(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    file_paths, labels, class_names = index_directory(
        directory,
        labels,
        formats=(".txt",),
        class_names=class_names,
        shuffle=shuffle,
        seed=seed,
        follow_links=follow_links,
        verbose=verbose,
    )
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError(
            'When passing `label_mode="binary"`, there must be exactly 2 class_names. '
            f"Received: class_names={class_names}"
        )
    shuffle_buffer_size = batch_size * 8 if batch_size is not None else 1024
    num_classes = len(class_names) if class_names else 0

    def finish(ds: Any) -> Any:
        if batch_size is not None:
            ds = ds.batch(batch_size)
        ds = ds.prefetch(AUTOTUNE)
        ds.class_names = class_names
        return ds

    if subset == "both":
        train = get_training_or_validation_split(file_paths, labels, validation_split, "training")
        val = get_training_or_validation_split(file_paths, labels, validation_split, "validation")
        if not train[0]:
            raise ValueError(f"No training text files found in directory {directory}. Allowed format: .txt")
        if not val[0]:
            raise ValueError(f"No validation text files found in directory {directory}. Allowed format: .txt")
        return [
            finish(
                _paths_and_labels_to_dataset(
                    *train, label_mode, num_classes, max_length, shuffle, shuffle_buffer_size, seed
                )
            ),
            finish(_paths_and_labels_to_dataset(*val, label_mode, num_classes, max_length, False)),
        ]
    file_paths, labels = get_training_or_validation_split(file_paths, labels, validation_split, subset)
    if not file_paths:
        raise ValueError(f"No text files found in directory {directory}. Allowed format: .txt")
    return finish(
        _paths_and_labels_to_dataset(
            file_paths, labels, label_mode, num_classes, max_length, shuffle, shuffle_buffer_size, seed
        )
    )


# -- audio (sig11) -------------------------------------------------------------------------------------------

def _audio_dataset(file_paths: list, labels: Any, label_mode: Any, num_classes: int, output_sequence_length: Any,
                   ragged: bool, shuffle: bool = False, shuffle_buffer_size: Any = None, seed: Any = None) -> Any:
    from tapeflow.data.dataset import AUTOTUNE, Dataset
    from tapeflow.ops.audio_ops import decode_wav
    from tapeflow.ops.io_ops import read_file

    def read(path: Any) -> Any:
        audio, _ = decode_wav(read_file(path), desired_samples=-1 if output_sequence_length is None
                              else output_sequence_length)
        if ragged:
            from tapeflow.ops.ragged import RaggedTensor

            return RaggedTensor.from_tensor(audio)
        return audio

    ds = Dataset.from_tensor_slices(file_paths)
    if label_mode:
        ds = Dataset.zip((ds, _labels_to_dataset(labels, label_mode, num_classes)))
    if shuffle:
        ds = ds.shuffle(buffer_size=shuffle_buffer_size or 1024, seed=seed)
    if label_mode:
        return ds.map(lambda x, y: (read(x), y), num_parallel_calls=AUTOTUNE)
    return ds.map(read, num_parallel_calls=AUTOTUNE)


def audio_dataset_from_directory(
    directory: Any,
    labels: Any = "inferred",
    label_mode: Any = "int",
    class_names: Any = None,
    batch_size: Any = 32,
    sampling_rate: Any = None,
    output_sequence_length: Any = None,
    ragged: bool = False,
    shuffle: bool = True,
    seed: Any = None,
    validation_split: Any = None,
    subset: Any = None,
    follow_links: bool = False,
    verbose: bool = True,
) -> Any:
    """A ``tf.data.Dataset`` of (audio, label) batches from ``directory/<class name>/*.wav`` (Keras 3's
    ``audio_dataset_from_directory``): each file decoded with ``tf.audio.decode_wav`` to float32
    ``[samples, channels]``, cut or zero-padded to ``output_sequence_length`` (else batches are padded to
    their longest file, or ``ragged``); labels and ``validation_split``/``subset`` as
    ``text_dataset_from_directory``. ``sampling_rate`` (resampling, tensorflow-io in Keras) raises
    ``NotImplementedError``."""
    from tapeflow.data.dataset import AUTOTUNE

    directory = os.fspath(directory)
    _check_label_args(labels, class_names, label_mode, "audio", "The ")
    if ragged and output_sequence_length is not None:
        raise ValueError("Cannot set both `ragged` and `output_sequence_length`")
    if sampling_rate is not None:
        if not isinstance(sampling_rate, int):
            raise ValueError(f"`sampling_rate` should have an integer value. Received: sampling_rate={sampling_rate}")
        if sampling_rate <= 0:
            raise ValueError(f"`sampling_rate` should be higher than 0. Received: sampling_rate={sampling_rate}")
        raise NotImplementedError("audio_dataset_from_directory(sampling_rate=...) (resampling) is not implemented "
                                  "in tapeflow")
    if labels is None or label_mode is None:
        labels = label_mode = None
    _check_validation_split_arg(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    shuffle_buffer_size = batch_size * 8 if batch_size is not None else 1024
    file_paths, labels, class_names = index_directory(
        directory, labels, formats=(".wav",), class_names=class_names, shuffle=shuffle, seed=seed,
        follow_links=follow_links, verbose=verbose,
    )
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError(
            'When passing `label_mode="binary"`, there must be exactly 2 class_names. '
            f"Received: class_names={class_names}"
        )
    num_classes = len(class_names) if class_names else 0
    allowed = "('.wav',)"

    def finish(ds: Any) -> Any:
        ds = ds.prefetch(AUTOTUNE)
        if batch_size is not None:
            ds = ds.padded_batch(batch_size) if output_sequence_length is None and not ragged else ds.batch(batch_size)
        ds.class_names = class_names
        return ds

    if subset == "both":
        train = get_training_or_validation_split(file_paths, labels, validation_split, "training")
        if not train[0]:
            raise ValueError(f"No training audio files found in directory {directory}. Allowed format(s): {allowed}")
        val = get_training_or_validation_split(file_paths, labels, validation_split, "validation")
        if not val[0]:
            raise ValueError(f"No validation audio files found in directory {directory}. "
                             f"Allowed format(s): {allowed}")
        return (
            finish(_audio_dataset(*train, label_mode, num_classes, output_sequence_length, ragged, shuffle,
                                  shuffle_buffer_size, seed)),
            finish(_audio_dataset(*val, label_mode, num_classes, output_sequence_length, ragged, False)),
        )
    file_paths, labels = get_training_or_validation_split(file_paths, labels, validation_split, subset)
    if not file_paths:
        raise ValueError(f"No audio files found in directory {directory}. Allowed format(s): {allowed}")
    return finish(_audio_dataset(file_paths, labels, label_mode, num_classes, output_sequence_length, ragged, shuffle,
                                 shuffle_buffer_size, seed))


# -- split_dataset ----------------------------------------------------------------------------------------------


def _split_sizes(left_size: Any, right_size: Any, total: int) -> tuple:
    """Keras's _rescale_dataset_split_sizes: int counts or float fractions to two counts (its checks, texts)."""
    lt, rt = type(left_size), type(right_size)
    if (left_size is not None and lt not in (int, float)) and (right_size is not None and rt not in (int, float)):
        raise TypeError("Invalid `left_size` and `right_size` Types. Expected: integer or float or None, Received: "
                        f"type(left_size)={lt} and type(right_size)={rt}")
    if left_size is not None and lt not in (int, float):
        raise TypeError(f"Invalid `left_size` Type. Expected: int or float or None, Received: type(left_size)={lt}.  ")
    if right_size is not None and rt not in (int, float):
        raise TypeError(f"Invalid `right_size` Type. Expected: int or float or None,Received: type(right_size)={rt}.")
    if left_size == 0 and right_size == 0:
        raise ValueError("Both `left_size` and `right_size` are zero. At least one of the split sizes must be "
                         "non-zero.")
    if lt is int and (left_size <= 0 or left_size >= total) or lt is float and (left_size <= 0 or left_size >= 1):
        raise ValueError(f"`left_size` should be either a positive integer smaller than {total}, or a float within "
                         f"the range `[0, 1]`. Received: left_size={left_size}")
    if rt is int and (right_size <= 0 or right_size >= total) or rt is float and (right_size <= 0 or right_size >= 1):
        raise ValueError(f"`right_size` should be either a positive integer and smaller than {total} or a float "
                         f"within the range `[0, 1]`. Received: right_size={right_size}")
    if rt is lt is float and right_size + left_size > 1:
        raise ValueError("The sum of `left_size` and `right_size` is greater than 1. It must be less than or equal "
                         "to 1.")
    left = round(left_size * total) if lt is float else float(left_size) if lt is int else None
    right = round(right_size * total) if rt is float else float(right_size) if rt is int else None
    if left is None:
        left = total - right
    elif right is None:
        right = total - left
    if left + right > total:
        raise ValueError(f"The sum of `left_size` and `right_size` should be smaller than the {total}. Received: "
                         f"left_size + right_size = {left + right}and total_length = {total}")
    for split, side in ((left, "left"), (right, "right")):
        if split == 0:
            raise ValueError(f"With `dataset` of length={total}, `left_size`={left} and `right_size`={right}."
                             f"Resulting {side} side dataset split will be empty. Adjust any of the aforementioned "
                             "parameters")
    return int(left), int(right)


def split_dataset(dataset: Any, left_size: Any = None, right_size: Any = None, shuffle: bool = False,
                  seed: Any = None, preferred_backend: Any = None) -> tuple:
    """Two ``tf.data.Dataset``s of a dataset's samples (arrays, a tuple/list of arrays, or a Dataset), as
    ``keras.utils.split_dataset``: ``left_size``/``right_size`` are counts or fractions, ``shuffle`` draws
    Python's ``random`` with ``seed``, and a batched Dataset's splits are batched as it was."""
    import random

    from tapeflow.data.dataset import Dataset, _Batch
    from tapeflow.framework import nest

    if isinstance(dataset, (tuple, list)):
        kind = type(dataset)
        if not dataset:
            raise ValueError("Received an empty list dataset. Please provide a non-empty list of arrays.")
        first = None
        for i, element in enumerate(dataset):
            if not isinstance(element, np.ndarray):
                raise ValueError(f"Expected a {kind.__name__} of `numpy.ndarray` objects,Received: {type(element)} "
                                 f"at index {i}.")
            if first is None:
                first = element.shape
            elif element.shape[0] != first[0]:
                raise ValueError(f"Received a {kind.__name__} of NumPy arrays with different lengths.Mismatch found at "
                                 f"index {i}, Expected shape={first} Received shape={element.shape}.Please provide a "
                                 f"{kind.__name__} of NumPy arrays of the same length.")
        samples = list(zip(*dataset))
    elif isinstance(dataset, np.ndarray):
        samples = list(dataset)
    elif isinstance(dataset, Dataset):
        batched = isinstance(dataset, _Batch)
        samples = [nest.map_structure(lambda t: t.numpy(), e) for e in (dataset.unbatch() if batched else dataset)]
    else:
        raise TypeError(f"Unsupported dataset type: {type(dataset)}")  # Keras's backend inference says it first
    if right_size is None and left_size is None:
        raise ValueError("At least one of the `left_size` or `right_size` must be specified. Received: left_size=None "
                         "and right_size=None")
    if not samples:
        raise ValueError("Received an empty dataset. Argument `dataset` must be a non-empty list/tuple of "
                         "`numpy.ndarray` objects or `tf.data.Dataset` objects.")
    if shuffle:
        if seed is None:
            seed = random.randint(0, int(1e6))
        random.seed(seed)
        random.shuffle(samples)
    left, right = _split_sizes(left_size, right_size, len(samples))

    def restore(part: list) -> Any:
        if isinstance(dataset, np.ndarray):
            return np.array(part)
        flat = [nest.flatten(s) for s in part]
        cols = [np.array(c) for c in zip(*flat)]
        return nest.pack_sequence_as(part[0], cols) if nest.is_nested(part[0]) else cols[0]

    def tuples(x: Any) -> Any:
        return tuple(tuples(v) for v in x) if isinstance(x, (list, tuple)) else x

    out = []
    for part in (samples[:left], samples[-right:]):
        ds = Dataset.from_tensor_slices(tuples(restore(part)))
        if isinstance(dataset, _Batch):
            ds = ds.batch(dataset._size)
        out.append(ds.prefetch(-1))
    return tuple(out)
