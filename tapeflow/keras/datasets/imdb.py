"""``tf.keras.datasets.imdb`` (Maas et al.'s IMDB movie reviews: 25000 + 25000 reviews as word indices,
labelled 0 negative / 1 positive)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from tapeflow.keras.datasets import _split

_ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
FILE_HASH = "69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f"
WORD_INDEX_HASH = "bfafd718b763782e994055a2d397834f"  # md5


def load_data(path: str = "imdb.npz", num_words: int | None = None, skip_top: int = 0, maxlen: int | None = None,
              seed: int = 113, start_char: int | None = 1, oov_char: int | None = 2, index_from: int = 3,
              **kwargs: Any) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``(x_train, y_train), (x_test, y_test)``: object arrays of word-index lists (index ``i`` is the ``i``-th most
    frequent word, shifted by ``index_from``; ``start_char`` starts each review, words outside
    ``[skip_top, num_words)`` become ``oov_char``; reviews of ``maxlen`` words or more are dropped) and int64 labels,
    each split shuffled with ``np.random.RandomState(seed)``, as Keras 3."""
    from tapeflow.keras.datasets._npz import load_npz
    from tapeflow.keras.file_utils import get_file

    path = get_file(fname=path, origin=_ORIGIN + "imdb.npz", file_hash=FILE_HASH)
    f = load_npz(path)
    x_train, labels_train, x_test, labels_test = f["x_train"], f["y_train"], f["x_test"], f["y_test"]
    rng = np.random.RandomState(seed)  # one generator: the test split's order follows the train split's draw
    idx = np.arange(len(x_train))
    rng.shuffle(idx)
    x_train, labels_train = x_train[idx], labels_train[idx]
    idx = np.arange(len(x_test))
    rng.shuffle(idx)
    x_test, labels_test = x_test[idx], labels_test[idx]
    x_train = _split.index_words(x_train, start_char, index_from)
    x_test = _split.index_words(x_test, start_char, index_from)
    if maxlen:
        x_train, labels_train = _split.remove_long_seq(maxlen, x_train, labels_train)
        x_test, labels_test = _split.remove_long_seq(maxlen, x_test, labels_test)
        if not x_train or not x_test:
            raise ValueError(f"After filtering for sequences shorter than maxlen={maxlen}, no sequence was kept. "
                             "Increase maxlen.")
    xs = _split.limit_words(x_train + x_test, num_words, skip_top, oov_char)
    labels = np.concatenate([labels_train, labels_test])
    n = len(x_train)
    return (np.array(xs[:n], dtype="object"), labels[:n]), (np.array(xs[n:], dtype="object"), labels[n:])


def get_word_index(path: str = "imdb_word_index.json") -> dict:
    """``{word: index}`` of the reviews' vocabulary (before ``index_from`` is added)."""
    from tapeflow.keras.file_utils import get_file

    path = get_file(fname=path, origin=_ORIGIN + "imdb_word_index.json", file_hash=WORD_INDEX_HASH)
    with open(path) as f:
        return json.load(f)

