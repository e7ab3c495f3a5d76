"""``tf.keras.datasets.cifar100`` (Krizhevsky's CIFAR-100: 60000 32x32 colour images, 100 fine / 20 coarse
classes)."""

from __future__ import annotations

import os

import numpy as np

ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
FILE_HASH = "85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7"  # sha256 of the archive


def load_data(label_mode: str = "fine") -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``(x_train, y_train), (x_test, y_test)``: uint8 images (50000, 32, 32, 3) / (10000, 32, 32, 3) and int64
    labels (n, 1) of the ``"fine"`` (100) or ``"coarse"`` (20) classes, as Keras 3."""
    from tapeflow.keras.datasets._npz import load_cifar_batch
    from tapeflow.keras.file_utils import get_file

    if label_mode not in ["fine", "coarse"]:
        raise ValueError(f'`label_mode` must be one of `"fine"`, `"coarse"`. Received: label_mode={label_mode}.')
    path = get_file(fname="cifar-100-python-target", origin=ORIGIN, extract=True, file_hash=FILE_HASH)
    path = os.path.join(path, "cifar-100-python")
    key = f"{label_mode}_labels"
    x_train, y_train = load_cifar_batch(os.path.join(path, "train"), label_key=key)
    x_test, y_test = load_cifar_batch(os.path.join(path, "test"), label_key=key)
    y_train = np.reshape(y_train, (len(y_train), 1))  # a list of Python ints: int64, as Keras's
    y_test = np.reshape(y_test, (len(y_test), 1))
    return (x_train.transpose(0, 2, 3, 1), y_train), (x_test.transpose(0, 2, 3, 1), y_test)
