"""``tf.keras.preprocessing.sequence``: ``pad_sequences`` (``keras.utils``'s) and, as ``tf.keras`` (Keras 3.15's
``keras._tf_keras``) keeps them, the legacy word2vec helpers ``make_sampling_table`` and ``skipgrams`` and the
``TimeseriesGenerator``."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from tapeflow.keras.py_dataset import PyDataset
from tapeflow.keras.sequence_utils import pad_sequences

__all__ = ["TimeseriesGenerator", "make_sampling_table", "pad_sequences", "skipgrams"]


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


class TimeseriesGenerator(PyDataset):
    """Batches of windows over a time series (Keras 1's generator, a ``PyDataset``): sample ``k`` of a batch is
    ``data[row - length:row:sampling_rate]`` with target ``targets[row]``, rows ``stride`` apart from
    ``start_index + length`` to ``end_index`` (or drawn at random with ``shuffle``, NumPy's global generator).
    (New code uses ``timeseries_dataset_from_array``.)"""

    def __init__(self, data: Any, targets: Any, length: int, sampling_rate: int = 1, stride: int = 1,
                 start_index: int = 0, end_index: int | None = None, shuffle: bool = False, reverse: bool = False,
                 batch_size: int = 128, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if len(data) != len(targets):
            raise ValueError(f"Data and targets have to be of same length. Data length is {len(data)} while target "
                             f"length is {len(targets)}")
        self.data, self.targets, self.length = data, targets, length
        self.sampling_rate, self.stride = sampling_rate, stride
        self.start_index = start_index + length
        self.end_index = len(data) - 1 if end_index is None else end_index
        self.shuffle, self.reverse, self.batch_size = shuffle, reverse, batch_size
        if self.start_index > self.end_index:
            raise ValueError(f"`start_index+length={self.start_index} > end_index={self.end_index}` is disallowed, "
                             "as no part of the sequence would be left to be used as current step.")

    def __len__(self) -> int:
        span = self.batch_size * self.stride
        return (self.end_index - self.start_index + span) // span

    def __getitem__(self, index: int) -> tuple:
        if self.shuffle:
            rows = np.random.randint(self.start_index, self.end_index + 1, size=self.batch_size)
        else:
            first = self.start_index + self.batch_size * self.stride * index
            rows = np.arange(first, min(first + self.batch_size * self.stride, self.end_index + 1), self.stride)
        samples = np.array([self.data[row - self.length:row:self.sampling_rate] for row in rows])
        targets = np.array([self.targets[row] for row in rows])
        return (samples[:, ::-1, ...], targets) if self.reverse else (samples, targets)

    def get_config(self) -> dict:
        # Keras 3.15's calls PyDataset.get_config, which does not exist: the same error here
        raise AttributeError("'super' object has no attribute 'get_config'")

    def to_json(self, **kwargs: Any) -> str:
        return self.get_config()
