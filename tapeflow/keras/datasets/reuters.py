"""``tf.keras.datasets.reuters`` (the Reuters-21578 newswires: 11228 articles as word indices, 46 topics)."""

from __future__ import annotations

import json

import numpy as np

from tapeflow.keras.datasets import _split

_ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
FILE_HASH = "d6586e694ee56d7a4e65172e12b3e987c03096cb01eab99753921ef915959916"
WORD_INDEX_HASH = "4d44cc38712099c9e383dc6e5f11a921"  # md5


def load_data(path: str = "reuters.npz", num_words: int | None = None, skip_top: int = 0, maxlen: int | None = None,
              test_split: float = 0.2, seed: int = 113, start_char: int | None = 1, oov_char: int | None = 2,
              index_from: int = 3) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``(x_train, y_train), (x_test, y_test)``: object arrays of word-index lists (as ``imdb.load_data``) and int64
    topic labels, shuffled with ``np.random.RandomState(seed)`` and split at ``test_split``, as Keras 3."""
    from tapeflow.keras.datasets._npz import load_npz
    from tapeflow.keras.file_utils import get_file

    path = get_file(fname=path, origin=_ORIGIN + "reuters.npz", file_hash=FILE_HASH)
    f = load_npz(path)
    xs, labels = f["x"], f["y"]
    idx = np.arange(len(xs))
    np.random.RandomState(seed).shuffle(idx)
    xs, labels = xs[idx], labels[idx]
    xs = _split.index_words(xs, start_char, index_from)
    if maxlen:
        xs, labels = _split.remove_long_seq(maxlen, xs, labels)
    xs = _split.limit_words(xs, num_words, skip_top, oov_char)
    n = int(len(xs) * (1 - test_split))
    return ((np.array(xs[:n], dtype="object"), np.array(labels[:n])),
            (np.array(xs[n:], dtype="object"), np.array(labels[n:])))


def get_word_index(path: str = "reuters_word_index.json") -> dict:
    """``{word: index}`` of the newswires' vocabulary (before ``index_from`` is added)."""
    from tapeflow.keras.file_utils import get_file

    path = get_file(path, origin=_ORIGIN + "reuters_word_index.json", file_hash=WORD_INDEX_HASH)
    with open(path) as f:
        return json.load(f)


def get_label_names() -> tuple:
    """The 46 topics, in label order."""
    return ("cocoa", "grain", "veg-oil", "earn", "acq", "wheat", "copper", "housing", "money-supply", "coffee",
            "sugar", "trade", "reserves", "ship", "cotton", "carcass", "crude", "nat-gas", "cpi", "money-fx",
            "interest", "gnp", "meal-feed", "alum", "oilseed", "gold", "tin", "strategic-metal", "livestock",
            "retail", "ipi", "iron-steel", "rubber", "heat", "jobs", "lei", "bop", "zinc", "orange", "pet-chem",
            "dlr", "gas", "silver", "wpi", "hog", "lead")
