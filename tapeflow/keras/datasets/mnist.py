"""``tf.keras.datasets.mnist`` (LeCun and Cortes's MNIST, CC BY-SA 3.0)."""

from __future__ import annotations

import os

import numpy as np

from tapeflow.keras.datasets import _fetch

SHA256 = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"
IDX_FILES = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"]
SYSTEM_DIRS = ["/usr/share/datasets/mnist"]


def load_data(path: str = "mnist.npz") -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``(x_train, y_train), (x_test, y_test)``: uint8 images (60000, 28, 28) / (10000, 28, 28) and uint8 labels,
    as Keras 3 (``path``: the file name in Keras's cache, ``~/.keras/datasets/mnist.npz``)."""
    from tapeflow.datasets import load_mnist

    cached = os.path.join(_fetch.keras_cache_dir(), path)
    if not os.path.isfile(cached):
        for folder in SYSTEM_DIRS:  # IDX files, gzipped or not
            try:
                (x_tr, y_tr), (x_te, y_te) = load_mnist(folder)
            except FileNotFoundError:
                continue
            return (_u8(x_tr), _u8(y_tr)), (_u8(x_te), _u8(y_te))
        cached = _fetch.find_or_fetch("mnist.load_data()", {path: SHA256}, "", SYSTEM_DIRS, "sha256",
                                      "dataset-mnist")[path]
    with np.load(cached, allow_pickle=False) as f:
        return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])


def _u8(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.uint8)
