"""``tf.keras.utils.PyDataset`` (also ``tf.keras.utils.Sequence``): a dataset written in Python, batch ``i``
from ``ds[i]``, ``len(ds)`` batches an epoch, as Keras 3. ``model.fit`` reads it as Keras's
``PyDatasetAdapter`` does (see ``trainer._PyDatasetBatches``). tapeflow reads batches in the calling thread:
``workers``/``use_multiprocessing`` are kept for Keras's API and do not start workers."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

__all__ = ["PyDataset"]


class PyDataset:
    """Base class of a Python dataset: implement ``__getitem__`` (a batch: ``x``, ``(x,)``, ``(x, y)`` or
    ``(x, y, sample_weight)``) and ``__len__`` (or ``num_batches``, ``None`` for an endless one); optionally
    ``on_epoch_begin``/``on_epoch_end``."""

    def __init__(self, workers: int = 1, use_multiprocessing: bool = False, max_queue_size: int = 10) -> None:
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    def _warn_if_super_not_called(self) -> None:
        warn = False
        for attr, default in (("_workers", 1), ("_use_multiprocessing", False), ("_max_queue_size", 10)):
            if not hasattr(self, attr):
                setattr(self, attr, default)
                warn = True
        if warn:
            warnings.warn(
                "Your `PyDataset` class should call `super().__init__(**kwargs)` in its constructor. "
                "`**kwargs` can include `workers`, `use_multiprocessing`, `max_queue_size`. Do not pass "
                "these arguments to `fit()`, as they will be ignored.",
                stacklevel=2,
            )

    @property
    def workers(self) -> int:
        self._warn_if_super_not_called()
        return self._workers

    @workers.setter
    def workers(self, value: int) -> None:
        self._workers = value

    @property
    def use_multiprocessing(self) -> bool:
        self._warn_if_super_not_called()
        return self._use_multiprocessing

    @use_multiprocessing.setter
    def use_multiprocessing(self, value: bool) -> None:
        self._use_multiprocessing = value

    @property
    def max_queue_size(self) -> int:
        self._warn_if_super_not_called()
        return self._max_queue_size

    @max_queue_size.setter
    def max_queue_size(self, value: int) -> None:
        self._max_queue_size = value

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError

    def __iter__(self):
        index_range = None
        try:
            num_batches = self.num_batches
            if num_batches is not None:
                index_range = range(num_batches)
        except NotImplementedError:
            pass
        for index in index_range if index_range is not None else itertools.count():
            yield self[index]

    @property
    def num_batches(self) -> int | None:
        """Batches per epoch (``len(self)``), or ``None`` for an endless dataset."""
        if hasattr(self, "__len__"):
            return len(self)
        raise NotImplementedError(
            "You need to implement the `num_batches` property:\n\n@property\ndef num_batches(self):\n  return ..."
        )

    def on_epoch_begin(self) -> None:
        """Called at the start of every epoch."""

    def on_epoch_end(self) -> None:
        """Called at the end of every epoch."""
