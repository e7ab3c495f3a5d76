"""``tf.keras.datasets.boston_housing`` (Harrison and Rubinfeld's Boston house prices: 506 samples, 13 features)."""

from __future__ import annotations

import numpy as np

from tapeflow.keras.datasets import _split

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/boston_housing.npz"
FILE_HASH = "f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5"


def load_data(path: str = "boston_housing.npz", test_split: float = 0.2,
              seed: int = 113) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``(x_train, y_train), (x_test, y_test)``: float64 features (404, 13) / (102, 13) and prices in k$, shuffled
    with ``np.random.RandomState(seed)`` and split at ``test_split``, as Keras 3."""
    from tapeflow.keras.file_utils import get_file

    _split.check_test_split(test_split)
    path = get_file(path, origin=ORIGIN, file_hash=FILE_HASH)
    with np.load(path, allow_pickle=False) as f:
        x, y = f["x"], f["y"]
    return _split.shuffle_split(x, y, test_split, seed)
