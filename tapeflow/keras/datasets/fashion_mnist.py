"""``tf.keras.datasets.fashion_mnist`` (Zalando's Fashion-MNIST, MIT license)."""

from __future__ import annotations

import numpy as np

from tapeflow.keras.datasets import _fetch

# The origin's files (Zalando's originals; md5 as published with the data set).
FILES = {
    "train-labels-idx1-ubyte.gz": "25c81989df183df01b3e8a0aad5dffbe",
    "train-images-idx3-ubyte.gz": "8d4fb7e6c68d591d4c3dfef9ec88bf0d",
    "t10k-labels-idx1-ubyte.gz": "bb300cfdad3c16e7a12a480ee83cd310",
    "t10k-images-idx3-ubyte.gz": "bef4ecab320f06d8554ea6380940ec79",
}
SYSTEM_DIRS = ["/usr/share/datasets/fashion-mnist"]


def load_data() -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``(x_train, y_train), (x_test, y_test)``: uint8 images (60000, 28, 28) / (10000, 28, 28) and uint8 labels,
    as Keras 3. Classes: 0 T-shirt/top, 1 Trouser, 2 Pullover, 3 Dress, 4 Coat, 5 Sandal, 6 Shirt, 7 Sneaker,
    8 Bag, 9 Ankle boot."""
    from tapeflow.datasets import load_idx

    paths = _fetch.find_or_fetch("fashion_mnist.load_data()", FILES, "fashion-mnist", SYSTEM_DIRS, "md5",
                                 "dataset-fashion-mnist")
    y_train, x_train, y_test, x_test = (_uint8(load_idx(paths[f])) for f in (
        "train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz",
        "t10k-images-idx3-ubyte.gz"))
    return (x_train, y_train), (x_test, y_test)


def _uint8(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.uint8)
