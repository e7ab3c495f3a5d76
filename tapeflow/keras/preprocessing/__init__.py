"""``tf.keras.preprocessing``: Keras 3.15's legacy preprocessing namespace: ``image`` (``ImageDataGenerator``
and the image helpers), ``sequence`` (``pad_sequences``, ``TimeseriesGenerator``, ...), ``text`` (``Tokenizer``,
...) and the dataset helpers."""

from __future__ import annotations

import importlib as _importlib

__all__ = ["image", "image_dataset_from_directory", "sequence", "text", "text_dataset_from_directory",
           "timeseries_dataset_from_array"]


def __getattr__(name: str):
    if name in ("image", "sequence", "text"):  # loaded on first use (image is Pillow's work, not the core's)
        mod = _importlib.import_module(f"tapeflow.keras.preprocessing.{name}")
        globals()[name] = mod
        return mod
    if name == "image_dataset_from_directory":
        from tapeflow.keras.preprocessing.image_dataset import image_dataset_from_directory

        return image_dataset_from_directory
    if name == "text_dataset_from_directory":
        from tapeflow.keras.dataset_utils import text_dataset_from_directory

        return text_dataset_from_directory
    if name == "timeseries_dataset_from_array":
        from tapeflow.keras.sequence_utils import timeseries_dataset_from_array

        return timeseries_dataset_from_array
    raise AttributeError(f"module 'tf.keras.preprocessing' has no attribute '{name}'")
