"""``tf.distribute``, single-process: the default strategy and its
one-replica variants, so TF code written against a Strategy runs as is.

tapeflow computes on the CPU in one process; every strategy here has exactly
one replica, and the cross-replica reductions are identities (MEAN/SUM over
one replica). Multi-worker training is not implemented.
"""

from __future__ import annotations

import contextlib
import enum
import threading
from typing import Any
from collections.abc import Callable

from tapeflow.framework import nest


class ReduceOp(enum.Enum):
    SUM = "SUM"
    MEAN = "MEAN"


class InputContext:
    def __init__(self) -> None:
        self.num_input_pipelines = 1
        self.input_pipeline_id = 0
        self.num_replicas_in_sync = 1

    def get_per_replica_batch_size(self, global_batch_size: int) -> int:
        return global_batch_size


class ReplicaContext:
    def __init__(self, strategy: Strategy) -> None:
        self.strategy = strategy
        self.num_replicas_in_sync = 1
        self.replica_id_in_sync_group = 0

    def all_reduce(self, reduce_op: Any, value: Any, options: Any = None) -> Any:
        _op(reduce_op)
        return value  # one replica: SUM and MEAN are the value itself

    def merge_call(self, merge_fn: Callable, args: tuple = (), kwargs: dict | None = None) -> Any:
        return merge_fn(self.strategy, *args, **(kwargs or {}))


def _op(reduce_op: Any) -> ReduceOp:
    if isinstance(reduce_op, str):
        return ReduceOp(reduce_op.upper())
    return ReduceOp(reduce_op)


_local = threading.local()


class Strategy:
    """A one-replica distribution strategy (TF's default strategy)."""

    def __init__(self) -> None:
        self.extended = self

    @property
    def num_replicas_in_sync(self) -> int:
        return 1

    @contextlib.contextmanager
    def scope(self):
        stack = _stack()
        stack.append(self)
        try:
            yield self
        finally:
            stack.pop()

    def run(self, fn: Callable, args: tuple = (), kwargs: dict | None = None, options: Any = None) -> Any:
        prev = getattr(_local, "replica", None)
        _local.replica = ReplicaContext(self)
        try:
            return fn(*args, **(kwargs or {}))
        finally:
            _local.replica = prev

    def reduce(self, reduce_op: Any, value: Any, axis: Any = None) -> Any:
        """Reduces per-replica values; with ``axis``, also over that axis of each."""
        op = _op(reduce_op)
        if axis is None:
            return value
        from tapeflow.ops import math_ops

        fn = math_ops.reduce_sum if op is ReduceOp.SUM else math_ops.reduce_mean
        return nest.map_structure(lambda v: fn(v, axis=axis), value)

    def experimental_distribute_dataset(self, dataset: Any, options: Any = None) -> Any:
        return dataset

    def distribute_datasets_from_function(self, dataset_fn: Callable, options: Any = None) -> Any:
        return dataset_fn(InputContext())

    def experimental_local_results(self, value: Any) -> tuple:
        return (value,)

    def gather(self, value: Any, axis: int) -> Any:
        return value


class OneDeviceStrategy(Strategy):
    def __init__(self, device: str = "/cpu:0") -> None:
        super().__init__()
        if "gpu" in device.lower() or "tpu" in device.lower():
            raise ValueError(f"OneDeviceStrategy({device!r}): tapeflow computes on the CPU only; use '/cpu:0'.")
        self.device = device


class MirroredStrategy(Strategy):
    """With no accelerators TF's MirroredStrategy uses the one CPU; so does this."""

    def __init__(self, devices: Any = None, cross_device_ops: Any = None) -> None:
        super().__init__()
        for d in devices or []:
            if "gpu" in str(d).lower() or "tpu" in str(d).lower():
                raise ValueError(f"MirroredStrategy device {d!r}: tapeflow computes on the CPU only.")


_DEFAULT = Strategy()


def _stack() -> list:
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def get_strategy() -> Strategy:
    stack = _stack()
    return stack[-1] if stack else _DEFAULT


def has_strategy() -> bool:
    return bool(_stack())


def in_cross_replica_context() -> bool:
    return getattr(_local, "replica", None) is None


def get_replica_context() -> ReplicaContext | None:
    r = getattr(_local, "replica", None)
    if r is not None:
        return r
    return None if has_strategy() else ReplicaContext(_DEFAULT)
