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

import enum
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from tapeflow.framework import nest
from tapeflow.framework.tensor import Tensor

__all__ = ["DistributedDataset", "split_bounds", "InputContext", "InputOptions", "InputReplicationMode", "ValueContext"]


class ValueContext:
    """``tf.distribute.experimental.ValueContext``: which replica ``experimental_distribute_values_from_function``
    asks a value for."""

    def __init__(self, replica_id_in_sync_group: int = 0, num_replicas_in_sync: int = 1) -> None:
        self._replica_id_in_sync_group = replica_id_in_sync_group
        self._num_replicas_in_sync = num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self) -> int:
        return self._replica_id_in_sync_group

    @property
    def num_replicas_in_sync(self) -> int:
        return self._num_replicas_in_sync

    def __str__(self) -> str:
        return (f"tf.distribute.ValueContext(replica id {self._replica_id_in_sync_group},  total replicas in sync: "
                f"{self._num_replicas_in_sync})")


class InputReplicationMode(enum.Enum):
    """``PER_WORKER``: one input pipeline per worker (process); ``PER_REPLICA``: one per replica."""

    PER_WORKER = "PER_WORKER"
    PER_REPLICA = "PER_REPLICA"


class InputOptions(NamedTuple):
    """``tf.distribute.InputOptions``: how distributed datasets are fed (device placement hints, which
    choose nothing on tapeflow's CPU; the replication mode)."""

    experimental_fetch_to_device: bool | None = None
    experimental_replication_mode: InputReplicationMode = InputReplicationMode.PER_WORKER
    experimental_place_dataset_on_device: bool = False
    experimental_per_replica_buffer_size: int = 1

    def __repr__(self) -> str:
        fetch = True if self.experimental_fetch_to_device is None else self.experimental_fetch_to_device
        return (f"InputOptions(experimental_fetch_to_device={fetch}, experimental_replication_mode="
                f"{self.experimental_replication_mode!r}, experimental_place_dataset_on_device="
                f"{self.experimental_place_dataset_on_device}, experimental_per_replica_buffer_size="
                f"{self.experimental_per_replica_buffer_size})")


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


def piece_sizes(n: int, size: int, rank: int) -> list:
    """TF's ``batch_sizes_for_worker`` with one replica per worker: the sizes of the ``size`` pieces a batch
    of ``n`` is cut into on rank ``rank`` (``ceil``-sized pieces first on rank 0, rotated by the rank)."""
    base, extra = divmod(n, size)
    first = [base + 1] * extra + [base] * (size - extra)
    return first[rank:] + first[:rank]


# tf.data.experimental.AutoShardPolicy's values (tf.data is not imported here: it is a sibling layer)
_OFF, _AUTO, _FILE, _DATA, _HINT = -1, 0, 1, 2, 3


def auto_shard_policy(dataset: Any) -> int:
    """The dataset's ``options().experimental_distribute.auto_shard_policy`` (AUTO if it has no options)."""
    try:
        policy = int(dataset.options().experimental_distribute.auto_shard_policy)
    except (AttributeError, TypeError):
        return _AUTO
    if policy in (_FILE, _HINT):
        name = "FILE" if policy == _FILE else "HINT"
        raise NotImplementedError(
            f"MultiWorkerMirroredStrategy: auto_shard_policy=AutoShardPolicy.{name} is not implemented in "
            "tapeflow. Use AutoShardPolicy.DATA (or AUTO: each process takes its share of every global batch), "
            "AutoShardPolicy.OFF (every process gets the whole dataset), or shard the files yourself in "
            "strategy.distribute_datasets_from_function (dataset.shard(input_context.num_input_pipelines, "
            "input_context.input_pipeline_id)).")
    return policy


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


def _like(card: Any, n: int) -> Any:
    """``n`` as a cardinality of ``card``'s kind (an int64 tensor, or a Python int)."""
    if not hasattr(card, "numpy"):
        return n
    from tapeflow.framework.tensor import constant

    return constant(n, dtype=card.dtype)


def _slice(element: Any, start: int, stop: int) -> Any:
    return nest.map_structure(lambda v: v[start:stop], element)


class DistributedDataset:
    """This rank's slice of each global batch of ``dataset`` (``AutoShardPolicy.DATA``, or ``AUTO``).

    With ``AutoShardPolicy.OFF`` every rank gets the whole dataset, as TF's workers do: each global batch
    is cut into one piece per replica (TF's rebatch) and this rank takes all of them, one per step, so at
    each step every rank trains on the same examples and an epoch has as many steps as there are pieces.
    """

    def __init__(self, dataset: Any, strategy: Any) -> None:
        self._dataset = dataset
        self._strategy = strategy
        self._whole = auto_shard_policy(dataset) == _OFF

    def __iter__(self) -> Iterator:
        # tf.data's own iterator over this object's elements (duck-typed: ``_elements`` and ``element_spec``):
        # eagerly the tensors of this rank's part of each batch, checkpointable; inside tf.function a pass that
        # pulls them when the function runs, and next() an op (as for any dataset)
        return type(self._dataset).__iter__(self)

    def _draw_iterator_seeds(self, seeds: dict) -> None:
        """An iterator of this draws what one of the dataset's draws when it is created (shuffle seeds)."""
        draw = getattr(self._dataset, "_draw_iterator_seeds", None)
        if draw is not None:
            draw(seeds)

    def _autograph_for_stmt(self, *args: Any) -> tuple:
        """``for x in dist_dataset`` inside tf.function: the dataset's While loop over this rank's parts."""
        graph_for = getattr(type(self._dataset), "_autograph_for_stmt", None)
        if graph_for is None:
            raise NotImplementedError("Iterating a distributed dataset inside tf.function needs a tf.data.Dataset; "
                                      "iterate it outside the function and pass each element in.")
        return graph_for(self, *args)

    def _elements(self) -> Iterator:
        """This rank's part of each element (raw NumPy), the strategy told its share of the global batch."""
        size, rank = self._strategy._comm.size, self._strategy._comm.rank
        share = self._strategy._set_batch_share
        if self._whole:
            for element in self._dataset._elements():
                n = _batch_rows(element)
                start = 0
                for rows in piece_sizes(n, size, rank):
                    share(rows, n)  # the step's pieces over all ranks hold n examples (TF's rotated sizes)
                    yield _slice(element, start, start + rows)
                    start += rows
            return
        for element in self._dataset._elements():
            n = _batch_rows(element)
            start, stop = split_bounds(n, size, rank)
            share(stop - start, n, start)
            yield _slice(element, start, stop)

    def __len__(self) -> int:
        return len(self._dataset) * (self._strategy._comm.size if self._whole else 1)

    def cardinality(self) -> Any:
        card = self._dataset.cardinality()
        if not self._whole:
            return card
        n = int(card.numpy() if hasattr(card, "numpy") else card)
        return card if n < 0 else _like(card, n * self._strategy._comm.size)

    @property
    def element_spec(self) -> Any:
        """The dataset's, with the batch dimension unknown (this rank's part of a batch varies)."""
        from tapeflow.framework.tensor_spec import TensorSpec

        def part(spec: Any) -> Any:
            if type(spec) is not TensorSpec or spec.shape.rank is None or spec.shape.rank == 0:
                return spec
            return TensorSpec([None] + spec.shape.as_list()[1:], spec.dtype, spec.name)

        return nest.map_structure(part, self._dataset.element_spec)

    def options(self) -> Any:
        return self._dataset.options()

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
            self._strategy._set_batch_share(stop - start, n, start)
            yield tuple(None if v is None else _slice(v, start, stop) for v in (xb, yb, swb))
