"""``tf.keras.datasets.california_housing`` (Pace and Barry's 1990 census blocks: 20640 samples, 8 features)."""

from __future__ import annotations

import numpy as np

from tapeflow.keras.datasets import _split

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/california_housing.npz"
FILE_HASH = "1a2e3a52e0398de6463aebe6f4a8da34fb21fbb6b934cf88c3425e766f2a1a6f"


def load_data(version: str = "large", path: str = "california_housing.npz", test_split: float = 0.2,
              seed: int = 113) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``(x_train, y_train), (x_test, y_test)``: the ``"large"`` set (20640 samples) or the ``"small"`` one (its
    first 600), shuffled with ``np.random.RandomState(seed)`` and split at ``test_split``, as Keras 3."""
    from tapeflow.keras.file_utils import get_file

    _split.check_test_split(test_split)
    path = get_file(path, origin=ORIGIN, file_hash=FILE_HASH)
    with np.load(path, allow_pickle=False) as f:
        x, y = f["x"], f["y"]
    if version == "small":
        x, y = x[:600], y[:600]
    elif version != "large":
        raise ValueError(f"Argument `version` must be one of 'small', 'large'. Received: version={version}")
    return _split.shuffle_split(x, y, test_split, seed)
