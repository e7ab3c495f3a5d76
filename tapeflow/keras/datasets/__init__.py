"""``tf.keras.datasets``: ``mnist``, ``fashion_mnist``, ``cifar10``, ``cifar100``, ``imdb``, ``reuters``,
``boston_housing`` and ``california_housing`` with Keras 3.15's ``load_data()`` (same origins, file names, checksums,
arrays, dtypes, shuffles and splits).

``mnist``/``fashion_mnist`` look, in order, in Keras's cache (``~/.keras/datasets/``, Keras's file names, or
``$KERAS_HOME/datasets``), in the folder where Debian's ``dataset-fashion-mnist`` / ``dataset-mnist`` packages install
the files (``/usr/share/datasets/...``), and otherwise download from the origin Keras uses (progress bar, checksum,
atomic write into Keras's cache). The others use ``tf.keras.utils.get_file`` exactly as Keras does: a file already in
Keras's cache with the right checksum is used, otherwise it is downloaded there.
"""

from __future__ import annotations

from tapeflow.keras.datasets import (boston_housing, california_housing, cifar10, cifar100, fashion_mnist, imdb, mnist,
                                     reuters)

__all__ = ["mnist", "fashion_mnist", "cifar10", "cifar100", "imdb", "reuters", "boston_housing", "california_housing"]
