"""Distributed input: each rank's part of every global batch.

``experimental_distribute_dataset`` keeps the dataset's own batching: every
rank walks the same pipeline and takes its contiguous slice of each global
batch (the first ``B % N`` ranks one example more), so a step's examples
across all ranks are exactly the single-process step's batch, in order, and
uneven or short last batches are split the same way. While a rank iterates,
the strategy knows the share of the global batch it holds, which Keras'
mean-reduced losses use so the summed gradient equals the global mean's.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from tapeflow.framework import nest
from tapeflow.framework.tensor import Tensor

__all__ = ["DistributedDataset", "split_bounds", "InputContext"]


class InputContext:
    """What ``distribute_datasets_from_function``'s ``dataset_fn`` is told
    about the input pipelines: one per process (``input_pipeline_id`` = rank)."""

    def __init__(self, num_input_pipelines: int = 1, input_pipeline_id: int = 0, num_replicas_in_sync: int = 1) -> None:
        self._num_input_pipelines = num_input_pipelines
        self._input_pipeline_id = input_pipeline_id
        self._num_replicas_in_sync = num_replicas_in_sync

    @property
    def num_input_pipelines(self) -> int:
        return self._num_input_pipelines

    @property
    def input_pipeline_id(self) -> int:
        return self._input_pipeline_id

    @property
    def num_replicas_in_sync(self) -> int:
        return self._num_replicas_in_sync

    def get_per_replica_batch_size(self, global_batch_size: int) -> int:
        """``global_batch_size // num_replicas_in_sync``; it must divide evenly (TF's ValueError)."""
        if global_batch_size % self._num_replicas_in_sync != 0:
            raise ValueError(
                f"The `global_batch_size` {global_batch_size!r} is not divisible by "
                f"`num_replicas_in_sync` {self._num_replicas_in_sync!r} "
            )
        return global_batch_size // self._num_replicas_in_sync


def split_bounds(n: int, size: int, rank: int) -> tuple[int, int]:
    """Rows ``[start, stop)`` of a batch of ``n`` that rank ``rank`` of ``size`` holds."""
    base, extra = divmod(n, size)
    start = rank * base + min(rank, extra)
    return start, start + base + (1 if rank < extra else 0)


def _batch_rows(element: Any) -> int:
    for leaf in nest.flatten(element):
        shape = leaf._shape_tuple() if isinstance(leaf, Tensor) else np.shape(leaf)
        if not shape:
            raise ValueError(
                "experimental_distribute_dataset: the dataset's elements must be batches "
                "(call dataset.batch(global_batch_size) first); got an element of shape ()."
            )
        return int(shape[0])
    raise ValueError("experimental_distribute_dataset: the dataset yields empty elements.")


def _slice(element: Any, start: int, stop: int) -> Any:
    return nest.map_structure(lambda v: v[start:stop], element)


class DistributedDataset:
    """This rank's slice of each global batch of ``dataset``."""

    def __init__(self, dataset: Any, strategy: Any) -> None:
        self._dataset = dataset
        self._strategy = strategy

    def __iter__(self) -> Iterator:
        size, rank = self._strategy._comm.size, self._strategy._comm.rank
        for element in self._dataset:
            n = _batch_rows(element)
            start, stop = split_bounds(n, size, rank)
            self._strategy._set_batch_share(stop - start, n)
            yield _slice(element, start, stop)

    def __len__(self) -> int:
        return len(self._dataset)

    def cardinality(self) -> Any:
        return self._dataset.cardinality()

    @property
    def element_spec(self) -> Any:
        return self._dataset.element_spec

    def __repr__(self) -> str:
        return f"<DistributedDataset of {self._dataset!r}>"


class SplitBatches:
    """Keras ``fit``'s batches (``(x, y, sample_weight)`` per global batch), this rank's slice of each."""

    def __init__(self, data: Any, strategy: Any) -> None:
        self._data = data
        self._strategy = strategy

    @property
    def steps(self) -> Any:
        return self._data.steps

    @steps.setter
    def steps(self, value: Any) -> None:
        self._data.steps = value

    def epoch(self) -> Iterator:
        size, rank = self._strategy._comm.size, self._strategy._comm.rank
        for xb, yb, swb in self._data.epoch():
            n = _batch_rows(xb)
            start, stop = split_bounds(n, size, rank)
            self._strategy._set_batch_share(stop - start, n)
            yield tuple(None if v is None else _slice(v, start, stop) for v in (xb, yb, swb))
