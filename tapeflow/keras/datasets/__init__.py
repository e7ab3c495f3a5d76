"""``tf.keras.datasets``: ``mnist`` and ``fashion_mnist`` with Keras 3's ``load_data()``.

Each looks, in order, in Keras's cache (``~/.keras/datasets/``, Keras's file names, or ``$KERAS_HOME/datasets``),
in the folder where Debian's ``dataset-fashion-mnist`` / ``dataset-mnist`` packages install the files
(``/usr/share/datasets/...``), and otherwise downloads from the origin Keras uses (progress bar, checksum,
atomic write into Keras's cache).
"""

from __future__ import annotations

from tapeflow.keras.datasets import fashion_mnist, mnist

__all__ = ["mnist", "fashion_mnist"]
