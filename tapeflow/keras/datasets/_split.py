"""The shuffle-and-split Keras's regression data sets share (``np.random.RandomState(seed)``)."""

from __future__ import annotations

import numpy as np


def check_test_split(test_split: float) -> None:
    if not 0 <= test_split < 1:
        raise ValueError(f"Invalid `test_split` argument: {test_split}. It must be between 0 and 1 (exclusive of 1).")


def shuffle_split(x: np.ndarray, y: np.ndarray, test_split: float, seed: int) -> tuple:
    idx = np.arange(len(x))
    np.random.RandomState(seed).shuffle(idx)
    x, y = x[idx], y[idx]
    n = int(len(x) * (1 - test_split))
    return (np.array(x[:n]), np.array(y[:n])), (np.array(x[n:]), np.array(y[n:]))


def remove_long_seq(maxlen: int, seq: list, label: np.ndarray) -> tuple[list, list]:
    """Keeps the sequences shorter than ``maxlen`` (and their labels)."""
    kept = [(x, y) for x, y in zip(seq, label) if len(x) < maxlen]
    return [x for x, _ in kept], [y for _, y in kept]


def index_words(xs: list, start_char: int | None, index_from: int) -> list:
    """Keras's imdb/reuters indices: every word shifted by ``index_from``, ``start_char`` prepended."""
    if start_char is not None:
        xs = [[start_char] + [w + index_from for w in x] for x in xs]
    elif index_from:
        xs = [[w + index_from for w in x] for x in xs]
    else:
        xs = [list(x) for x in xs]
    return xs


def limit_words(xs: list, num_words: int | None, skip_top: int, oov_char: int | None) -> list:
    """Words outside ``[skip_top, num_words)`` (``num_words``: by default the largest index) become ``oov_char``,
    or are dropped when it is None."""
    if not num_words:
        num_words = max(max(x) for x in xs)
    if oov_char is not None:
        return [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    return [[w for w in x if skip_top <= w < num_words] for x in xs]
