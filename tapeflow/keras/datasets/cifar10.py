"""``tf.keras.datasets.cifar10`` (Krizhevsky's CIFAR-10: 60000 32x32 colour images in 10 classes)."""

from __future__ import annotations

import os

import numpy as np

ORIGIN = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
FILE_HASH = "6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce"  # sha256 of the archive


def load_data() -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``(x_train, y_train), (x_test, y_test)``: uint8 images (50000, 32, 32, 3) / (10000, 32, 32, 3) and uint8
    labels (50000, 1) / (10000, 1), as Keras 3 (archive in ``~/.keras/datasets/cifar-10-batches-py-target_archive``,
    extracted next to it)."""
    from tapeflow.keras.datasets._npz import load_cifar_batch
    from tapeflow.keras.file_utils import get_file

    path = get_file(fname="cifar-10-batches-py-target", origin=ORIGIN, extract=True, file_hash=FILE_HASH)
    path = os.path.join(path, "cifar-10-batches-py")
    batches = [load_cifar_batch(os.path.join(path, f"data_batch_{i}")) for i in range(1, 6)]
    x_train = np.concatenate([x for x, _ in batches]).astype(np.uint8)
    y_train = np.concatenate([np.asarray(y) for _, y in batches]).astype(np.uint8).reshape(-1, 1)
    x_test, y_test = load_cifar_batch(os.path.join(path, "test_batch"))
    y_test = np.asarray(y_test).astype(np.uint8).reshape(-1, 1)
    return (x_train.transpose(0, 2, 3, 1), y_train), (x_test.astype(np.uint8).transpose(0, 2, 3, 1), y_test)
