"""``tf.keras.preprocessing.sequence``: ``pad_sequences`` (``keras.utils``'s) and, as ``tf.keras`` (Keras 3.15's
``keras._tf_keras``) keeps them, the legacy word2vec helpers ``make_sampling_table`` and ``skipgrams``."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from tapeflow.keras._missing import module_getattr as _module_getattr
from tapeflow.keras.sequence_utils import pad_sequences

__all__ = ["make_sampling_table", "pad_sequences", "skipgrams"]

__getattr__ = _module_getattr("tf.keras.preprocessing.sequence", frozenset(("TimeseriesGenerator",)))


def make_sampling_table(size: int, sampling_factor: float = 1e-5) -> np.ndarray:
    """word2vec's probability of keeping the word of each frequency rank, from Zipf's law (float64 ``[size]``)."""
    gamma = 0.577
    rank = np.arange(size)
    rank[0] = 1
    inv_fq = rank * (np.log(rank) + gamma) + 0.5 - 1.0 / (12.0 * rank)
    f = sampling_factor * inv_fq
    return np.minimum(1.0, f / np.sqrt(f))


def skipgrams(sequence: Any, vocabulary_size: int, window_size: int = 4, negative_samples: float = 1.0,
              shuffle: bool = True, categorical: bool = False, sampling_table: Any = None,
              seed: int | None = None) -> tuple[list, list]:
    """``(couples, labels)``: ``[word, context]`` pairs within ``window_size`` (label 1) and ``negative_samples``
    times as many random ones (label 0); index 0 is no word. Draws from Python's ``random``, as Keras's, so a
    seeded program gets Keras's pairs."""
    couples: list = []
    labels: list = []
    for i, wi in enumerate(sequence):
        if not wi:
            continue
        if sampling_table is not None and sampling_table[wi] < random.random():
            continue
        for j in range(max(0, i - window_size), min(len(sequence), i + window_size + 1)):
            if j != i:
                wj = sequence[j]
                if not wj:
                    continue
                couples.append([wi, wj])
                labels.append([0, 1] if categorical else 1)
    if negative_samples > 0:
        num_negative = int(len(labels) * negative_samples)
        words = [c[0] for c in couples]
        random.shuffle(words)
        couples += [[words[i % len(words)], random.randint(1, vocabulary_size - 1)] for i in range(num_negative)]
        labels += [[1, 0] if categorical else 0] * num_negative
    if shuffle:
        if seed is None:
            seed = random.randint(0, int(10e6))  # Keras passes 10e6 (Python 3.12 takes ints only)
        random.seed(seed)
        random.shuffle(couples)
        random.seed(seed)
        random.shuffle(labels)
    return couples, labels
