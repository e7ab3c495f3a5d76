"""``tf.keras.preprocessing``: Keras 3.15's legacy preprocessing namespace. ``image`` (``ImageDataGenerator``
and the image helpers) is here; the rest says it is not implemented."""

from __future__ import annotations

import importlib as _importlib

from tapeflow.keras._missing import module_getattr as _module_getattr

__all__ = ["image", "image_dataset_from_directory", "text_dataset_from_directory"]

_missing_getattr = _module_getattr(
    "tf.keras.preprocessing",
    frozenset(
        (
            "sequence",
            "text",
            "timeseries_dataset_from_array",
        )
    ),
)


def __getattr__(name: str):
    if name == "image":  # loaded on first use (it is Pillow's and NumPy's work, not the core's)
        mod = _importlib.import_module("tapeflow.keras.preprocessing.image")
        globals()[name] = mod
        return mod
    if name == "image_dataset_from_directory":
        from tapeflow.keras.preprocessing.image_dataset import image_dataset_from_directory

        return image_dataset_from_directory
    if name == "text_dataset_from_directory":
        from tapeflow.keras.dataset_utils import text_dataset_from_directory

        return text_dataset_from_directory
    return _missing_getattr(name)
