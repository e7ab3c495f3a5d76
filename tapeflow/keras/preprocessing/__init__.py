"""``tf.keras.preprocessing``: Keras 3.15's legacy preprocessing namespace. ``image`` (``ImageDataGenerator``
and the image helpers), ``sequence.pad_sequences`` and the dataset helpers are here."""

from __future__ import annotations

import importlib as _importlib

from tapeflow.keras._missing import module_getattr as _module_getattr

__all__ = ["image", "image_dataset_from_directory", "sequence", "text_dataset_from_directory",
           "timeseries_dataset_from_array"]

_missing_getattr = _module_getattr(
    "tf.keras.preprocessing",
    frozenset(
        (
            "text",
        )
    ),
)


def __getattr__(name: str):
    if name in ("image", "sequence"):  # loaded on first use (image is Pillow's and NumPy's work, not the core's)
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
    return _missing_getattr(name)
