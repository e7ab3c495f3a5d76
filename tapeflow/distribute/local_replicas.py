"""Several replicas in one process: ``MirroredStrategy`` over logical (virtual) CPUs.

``MirroredStrategy(["/cpu:0", "/cpu:1"])`` (or, after
``tf.config.set_logical_device_configuration``, ``MirroredStrategy()``) has
one replica per device. As TF's, ``strategy.run(fn)`` calls ``fn`` once per
replica, each in its own thread, and returns ``PerReplica`` values; here the
threads take turns (replica 0, 1, ... up to the next synchronisation point,
then again in order), so runs are deterministic and need no locks in the
library. The points where replicas meet: ``ReplicaContext.all_reduce``,
``merge_call`` and an optimizer's ``apply_gradients`` (which sums the
replicas' gradients and updates the variables once — variables have one
copy, shared by all replicas, where TF keeps one mirrored copy per device).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tapeflow.distribute.input_lib import DistributedDataset, _batch_rows, _slice, split_bounds
from tapeflow.framework import nest
from tapeflow.framework.composite_tensor import CompositeTensor, TypeSpec
from tapeflow.framework.tensor import Tensor

__all__ = ["PerReplica", "ReplicaRun", "LocalDistributedDataset", "current_run"]


class PerReplicaSpec(TypeSpec):
    """The spec of a ``PerReplica``: one spec per replica's value (``tf.function`` takes and gives back a
    ``PerReplica`` as its replicas' tensors; a distributed dataset's ``element_spec`` is made of these)."""

    def __init__(self, *value_specs: Any) -> None:
        self._value_specs = tuple(value_specs)

    def _to_components(self, value: Any) -> tuple:
        return tuple(value._values)

    def _from_components(self, components: Any) -> Any:
        return PerReplica(tuple(components))

    @property
    def _component_specs(self) -> tuple:
        return self._value_specs

    def _serialize(self) -> tuple:
        return self._value_specs

    def is_compatible_with(self, spec_or_value: Any) -> bool:
        other = spec_or_value if isinstance(spec_or_value, TypeSpec) else getattr(spec_or_value, "_type_spec", None)
        return type(other) is PerReplicaSpec and len(other._value_specs) == len(self._value_specs) and all(
            a.is_compatible_with(b) for a, b in zip(self._value_specs, other._value_specs))

    def __repr__(self) -> str:
        return f"PerReplicaSpec({', '.join(map(repr, self._value_specs))})"


class PerReplica(CompositeTensor):
    """One value per replica (what ``strategy.run`` returns under several local replicas), printed as TF's."""

    __slots__ = ("_values",)

    def __init__(self, values: tuple) -> None:
        self._values = tuple(values)

    @property
    def _type_spec(self) -> PerReplicaSpec:
        from tapeflow.framework.tensor import convert_to_tensor
        from tapeflow.framework.tensor_spec import TensorSpec

        return PerReplicaSpec(*(TensorSpec.from_tensor(convert_to_tensor(v)) for v in self._values))

    @property
    def values(self) -> tuple:
        return self._values

    # tf.function takes a PerReplica argument as its replicas' tensors (a placeholder each)
    def _trace_split(self) -> tuple:
        from tapeflow.framework.tensor import convert_to_tensor

        return ("PerReplica", len(self._values)), [convert_to_tensor(v) for v in self._values]

    def _trace_rebuild(self, dynamic: list) -> PerReplica:
        return PerReplica(tuple(dynamic))

    def _text(self, fmt: Callable) -> str:
        body = ",\n".join(f"  {i}: {fmt(v)}" for i, v in enumerate(self._values))
        return "PerReplica:{\n" + body + "\n}"

    def __str__(self) -> str:
        return self._text(str)

    def __repr__(self) -> str:
        return self._text(repr)


def regroup(results: list) -> Any:
    """Replica results (one structure each) as one structure of ``PerReplica`` leaves."""
    first = results[0]
    if first is None:
        return None
    flats = [nest.flatten(r) for r in results]
    leaves = [PerReplica(tuple(f[i] for f in flats)) for i in range(len(flats[0]))]
    return nest.pack_sequence_as(first, leaves)


def select(value: Any, replica: int) -> Any:
    """``value`` as replica ``replica`` sees it (each ``PerReplica`` leaf replaced by its value there)."""
    if isinstance(value, PerReplica):
        return value._values[replica]
    if isinstance(value, (list, tuple, dict)) and not isinstance(value, Tensor):
        return nest.map_structure(lambda v: v._values[replica] if isinstance(v, PerReplica) else v, value)
    return value


_local = threading.local()


def current_run() -> tuple[ReplicaRun, int] | None:
    """``(run, replica id)`` inside one replica of a local multi-replica ``strategy.run``, else None."""
    return getattr(_local, "run", None)


class _AbortedError(Exception):
    pass


class ReplicaRun:
    """One ``strategy.run``: a thread per replica, taking turns in replica order (see the module docstring)."""

    def __init__(self, strategy: Any, n: int, make_context: Callable, swap_context: Callable,
                 strategy_stack: Callable) -> None:
        # (the strategy module's replica-context constructor, thread-local context swap and scope stack)
        self.strategy = strategy
        self.n = n
        self._make_context, self._swap, self._stack = make_context, swap_context, strategy_stack
        self.cv = threading.Condition()
        self.turn = 0
        self.done = [False] * n
        self.failed = False
        self.arrived: list = []  # (replica, value) at the current meeting point
        self.result: Any = None
        self.generation = 0

    def _next_turn(self, rid: int) -> None:
        for k in range(1, self.n + 1):
            r = (rid + k) % self.n
            if not self.done[r]:
                self.turn = r
                break
        self.cv.notify_all()

    def _wait_turn(self, rid: int) -> None:
        while self.turn != rid and not self.failed:
            self.cv.wait()
        if self.failed:
            raise _AbortedError()

    def meet(self, rid: int, value: Any, combine: Callable[[list], Any]) -> Any:
        """Waits for every replica to reach this point with its ``value``; returns ``combine(values)``
        (computed once, by the last replica to arrive, in cross-replica context)."""
        with self.cv:
            gen = self.generation
            self.arrived.append((rid, value))
            if len(self.arrived) == self.n:
                values = [v for _, v in sorted(self.arrived, key=lambda x: x[0])]
                prev = getattr(_local, "run", None)
                saved = self._swap(None)
                _local.run = None
                try:
                    self.result = combine(values)
                except BaseException:
                    self.failed = True
                    self.cv.notify_all()
                    raise
                finally:
                    _local.run = prev
                    self._swap(saved)
                self.arrived = []
                self.generation += 1
            self._next_turn(rid)
            while (self.generation == gen or self.turn != rid) and not self.failed:
                self.cv.wait()
            if self.failed:
                raise _AbortedError()
            return self.result

    def run(self, fn: Callable, args: tuple, kwargs: dict) -> Any:
        from tapeflow.framework.context import state

        parent_graph, parent_tapes, parent_acc = state.graph, list(state.tapes), list(state.accumulators)
        parent_stack = list(self._stack())
        results: list = [None] * self.n
        errors: list = [None] * self.n

        def replica(rid: int) -> None:
            state.tapes, state.accumulators = list(parent_tapes), list(parent_acc)
            state.graph = parent_graph
            self._stack()[:] = parent_stack
            _local.run = (self, rid)
            self._swap(self._make_context(rid))
            with self.cv:
                try:
                    self._wait_turn(rid)
                except _AbortedError:
                    return
            try:
                with self.strategy.scope():
                    results[rid] = fn(*select(args, rid), **select(kwargs, rid))
            except _AbortedError:
                pass
            except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
                errors[rid] = e
                with self.cv:
                    self.failed = True
                    self.cv.notify_all()
            finally:
                with self.cv:
                    self.done[rid] = True
                    if self.arrived and not self.failed:
                        self.failed = True  # others wait at a meeting point this replica never reached
                        errors[rid] = errors[rid] or RuntimeError(
                            f"strategy.run: replica {rid} returned while the others wait in all_reduce / merge_call / "
                            "apply_gradients; every replica must make the same calls.")
                    self._next_turn(rid)

        threads = [threading.Thread(target=replica, args=(r,), name=f"replica_{r}", daemon=True)
                   for r in range(self.n)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        for e in errors:
            if e is not None:
                raise e
        return regroup(results)


def sum_gradients(per_replica: list) -> list:
    """Per variable, the sum of the replicas' gradients (None where no replica has one)."""
    from tapeflow.framework.indexed_slices import IndexedSlices
    from tapeflow.framework.tensor import convert_to_tensor
    from tapeflow.ops import array_ops, math_ops

    out = []
    for gs in zip(*per_replica):
        present = [g for g in gs if g is not None]
        if not present:
            out.append(None)
        elif len(present) == 1:
            out.append(present[0])
        elif all(isinstance(g, IndexedSlices) for g in present):
            out.append(IndexedSlices(array_ops.concat([g.values for g in present], 0),
                                     array_ops.concat([g.indices for g in present], 0), present[0].dense_shape))
        else:
            dense = [convert_to_tensor(g) if isinstance(g, IndexedSlices) else g for g in present]
            out.append(math_ops.add_n(dense))
    return out


class LocalDistributedDataset(DistributedDataset):
    """``experimental_distribute_dataset`` under local replicas: each global batch split into one
    ``PerReplica`` slice per replica (rows as even as possible, the first replicas taking the extra rows)."""

    @property
    def element_spec(self) -> Any:
        """TF's: each component a ``PerReplicaSpec`` of the replicas' parts (batch dimension unknown)."""
        n = self._strategy.num_replicas_in_sync
        return nest.map_structure(lambda spec: PerReplicaSpec(*[spec] * n), super().element_spec)

    def __iter__(self):
        n = self._strategy.num_replicas_in_sync
        for element in self._dataset:
            rows = _batch_rows(element)
            parts = [_slice(element, *split_bounds(rows, n, r)) for r in range(n)]
            yield regroup(parts)
