"""``tf.distribute`` strategies.

``Strategy`` (TF's default strategy), ``OneDeviceStrategy`` and
``MirroredStrategy`` have one replica in one process, as on a CPU-only TF.
``MultiWorkerMirroredStrategy`` has one replica per process of an MPI job
(``mpirun -n 4 python train.py``): ``num_replicas_in_sync`` is the world size
and every cross-replica reduction is an MPI collective (see
``communicator`` and ``collective_ops``). Started without ``mpirun`` it has
one replica and behaves like the default strategy, as TF's does with no
``TF_CONFIG``.

With one local replica per process, ``strategy.run`` returns this rank's
values as plain tensors (TF does the same with one device per worker);
``strategy.reduce``/``gather`` combine them over all ranks.
"""

from __future__ import annotations

import contextlib
import enum
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from tapeflow.distribute import collective_ops, local_replicas
from tapeflow.distribute.cluster_resolver import resolve_mpi_cluster
from tapeflow.distribute.communicator import get_communicator, install_abort_on_exception, set_collective_timeout
from tapeflow.distribute.input_lib import DistributedDataset, InputContext
from tapeflow.framework import distribution_hooks as hooks
from tapeflow.framework import nest
from tapeflow.framework.context import state
from tapeflow.framework.tensor import Tensor

__all__ = [
    "ReduceOp",
    "InputContext",
    "ReplicaContext",
    "Strategy",
    "OneDeviceStrategy",
    "MirroredStrategy",
    "MultiWorkerMirroredStrategy",
    "get_strategy",
    "has_strategy",
    "in_cross_replica_context",
    "get_replica_context",
]


class ReduceOp(enum.Enum):
    """How values are combined across replicas: ``SUM`` or ``MEAN``."""

    SUM = "SUM"
    MEAN = "MEAN"


_SUM, _MEAN = ReduceOp.SUM, ReduceOp.MEAN


def _reduction(reduce_op: Any) -> str:
    """``"sum"`` or ``"mean"`` for a ReduceOp or its name (identity checks first: the per-call path)."""
    if reduce_op is _SUM:
        return "sum"
    if reduce_op is _MEAN:
        return "mean"
    how = _NAMES.get(reduce_op) if type(reduce_op) is str else None
    return how or ("sum" if _op(reduce_op) is _SUM else "mean")


_NAMES = {"SUM": "sum", "MEAN": "mean", "sum": "sum", "mean": "mean"}


def _op(reduce_op: Any) -> ReduceOp:
    if type(reduce_op) is ReduceOp:
        return reduce_op
    if isinstance(reduce_op, str):
        try:
            return ReduceOp(reduce_op.upper())
        except ValueError:
            raise ValueError(f"{reduce_op!r} is not a valid ReduceOp") from None
    return ReduceOp(reduce_op)


class ReplicaContext:
    """The context of one replica inside ``strategy.run``."""

    def __init__(self, strategy: Strategy, replica_id: int | None = None) -> None:
        self.strategy = strategy
        self._replica_id = 0 if replica_id is None else replica_id
        self._in_run = replica_id is not None  # one of several local replicas (see local_replicas)
        # one replica per process, several processes: an eager tensor's all_reduce is one MPI Allreduce
        self._reduce_one = getattr(strategy, "_reduce_one", None) if replica_id is None else None
        self._eager_reduce = strategy.reduce  # (under MPI: the lean eager reduce of collective_ops.eager_reducers)

    @property
    def num_replicas_in_sync(self) -> int:
        return self.strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self) -> Any:
        from tapeflow.framework.tensor import constant

        if self._in_run:
            return constant(self._replica_id)
        return constant(self.strategy._comm.rank if self.strategy._multi else 0)

    def all_reduce(self, reduce_op: Any, value: Any, options: Any = None) -> Any:
        """Sums or averages ``value`` (a nest of tensors) over all replicas, in one fused collective."""
        if self._reduce_one is not None and type(value) is Tensor and (reduce_op is _SUM or reduce_op is _MEAN):
            return self._eager_reduce(reduce_op, value, None)  # one tensor over all replicas: strategy.reduce's
        how = _reduction(reduce_op)
        run = local_replicas.current_run()
        if run is not None:
            return run[0].meet(run[1], value, lambda vals: _combine_local(vals, _op(reduce_op)))
        if not self.strategy._multi:
            return value
        if type(value) is Tensor:
            return collective_ops.all_reduce_one(value, how)
        return nest.pack_sequence_as(value, collective_ops.all_reduce(nest.flatten(value), how))

    def merge_call(self, merge_fn: Callable, args: tuple = (), kwargs: dict | None = None) -> Any:
        """Calls ``merge_fn(strategy, *args)`` once in cross-replica context (under several local replicas:
        when every replica has reached it, with each argument a ``PerReplica`` of the replicas' values)."""
        run = local_replicas.current_run()
        if run is not None:
            def combine(vals: list) -> Any:
                a, kw = local_replicas.regroup(vals)
                return merge_fn(self.strategy, *a, **kw)

            return run[0].meet(run[1], (tuple(args), dict(kwargs or {})), combine)
        return merge_fn(self.strategy, *args, **(kwargs or {}))


def _combine_local(values: list, op: ReduceOp) -> Any:
    from tapeflow.framework.tensor import convert_to_tensor
    from tapeflow.ops import math_ops

    flats = [[convert_to_tensor(v) for v in nest.flatten(x)] for x in values]
    out = []
    for leaves in zip(*flats):
        total = math_ops.add_n(list(leaves))
        out.append(total if op is ReduceOp.SUM else math_ops.divide_(total, math_ops.cast(len(leaves), total.dtype)))
    return nest.pack_sequence_as(values[0], out)


_local = threading.local()


class _Extended:
    def __init__(self, strategy: Strategy) -> None:
        self._strategy = strategy

    @property
    def should_checkpoint(self) -> bool:
        return self._strategy._comm.rank == 0

    @property
    def should_save_summary(self) -> bool:
        return self._strategy._comm.rank == 0

    @property
    def should_init(self) -> bool:
        return True

    @property
    def experimental_should_init(self) -> bool:
        return True

    @property
    def experimental_between_graph(self) -> bool:
        """True for ``MultiWorkerMirroredStrategy`` (each worker runs its own program), as TF."""
        return isinstance(self._strategy, MultiWorkerMirroredStrategy)

    @property
    def experimental_require_static_shapes(self) -> bool:
        return False

    def _in_multi_worker_mode(self) -> bool:
        return self._strategy._multi

    @property
    def worker_devices(self) -> tuple:
        resolver = getattr(self._strategy, "cluster_resolver", None)  # (MultiWorkerMirroredStrategy's: this task)
        if resolver is not None and resolver.task_type is not None:
            return (f"/job:{resolver.task_type}/replica:0/task:{resolver.task_id}/device:CPU:0",)
        return ("/job:localhost/replica:0/task:0/device:CPU:0",)

    @property
    def parameter_devices(self) -> tuple:
        return self.worker_devices


class Strategy:
    """A one-replica distribution strategy (TF's default strategy)."""

    _multi = False

    def __init__(self) -> None:
        from tapeflow.distribute.communicator import LocalCommunicator

        self._comm = LocalCommunicator()
        self.extended = _Extended(self)

    @property
    def num_replicas_in_sync(self) -> int:
        return self._comm.size if self._multi else 1

    @contextlib.contextmanager
    def scope(self):
        """Variables created inside belong to this strategy (under MPI: start as rank 0's)."""
        stack = _stack()
        stack.append(self)
        prev_hook = hooks.on_variable_created
        if self._multi:
            hooks.on_variable_created = self._broadcast_initial_value
        try:
            yield self
        finally:
            hooks.on_variable_created = prev_hook
            stack.pop()

    def run(self, fn: Callable, args: tuple = (), kwargs: dict | None = None, options: Any = None) -> Any:
        """Runs ``fn(*args, **kwargs)`` as this process's replica; returns its (local) results."""
        prev = getattr(_local, "replica", None)
        _local.replica = ReplicaContext(self)
        try:
            with self.scope():
                return fn(*args, **(kwargs or {}))
        finally:
            _local.replica = prev

    def reduce(self, reduce_op: Any, value: Any, axis: Any = None) -> Any:
        """Combines every replica's ``value`` (SUM or MEAN); with ``axis``, also over that axis of each
        (MEAN then divides by the total length of ``axis`` over all replicas)."""
        if axis is None and type(value) is Tensor and self._multi:  # the common case, kept short
            return collective_ops.all_reduce_one(value, _reduction(reduce_op))
        op = _op(reduce_op)
        if axis is None and self is _DEFAULT:  # TF's default strategy gives the value back as it is
            return value
        from tapeflow.framework.tensor import convert_to_tensor
        from tapeflow.ops import array_ops, math_ops

        flat = [convert_to_tensor(v) for v in nest.flatten(value)]
        if axis is None:
            out = flat
            if self._multi:
                out = collective_ops.all_reduce(flat, "sum" if op is ReduceOp.SUM else "mean")
            return nest.pack_sequence_as(value, out)
        sums = [math_ops.reduce_sum(v, axis=axis) for v in flat]
        if op is ReduceOp.MEAN:
            counts = [math_ops.cast(array_ops.shape(v)[axis], v.dtype) for v in flat]
        if self._multi:
            both = collective_ops.all_reduce(sums + (counts if op is ReduceOp.MEAN else []), "sum")
            sums, counts = both[: len(sums)], both[len(sums) :]
        if op is ReduceOp.SUM:
            return nest.pack_sequence_as(value, sums)
        return nest.pack_sequence_as(value, [math_ops.divide_(s, c) for s, c in zip(sums, counts)])

    def gather(self, value: Any, axis: int) -> Any:
        """Every replica's ``value`` concatenated along ``axis`` (replica order)."""
        if not self._multi:
            return value
        from tapeflow.framework.tensor import convert_to_tensor
        from tapeflow.ops import array_ops

        def one(v):
            v = convert_to_tensor(v)
            rank = len(v._shape_tuple())
            if axis == 0 or axis == -rank:
                return collective_ops.all_gather(v)
            a = axis % rank
            perm = [a] + [i for i in range(rank) if i != a]
            inv = [perm.index(i) for i in range(rank)]
            return array_ops.transpose(collective_ops.all_gather(array_ops.transpose(v, perm)), inv)

        return nest.map_structure(one, value)

    def experimental_distribute_dataset(self, dataset: Any, options: Any = None) -> Any:
        """Under MPI: this rank's slice of each global batch (see ``input_lib``)."""
        if not self._multi:
            return dataset
        return DistributedDataset(dataset, self)

    def distribute_datasets_from_function(self, dataset_fn: Callable, options: Any = None) -> Any:
        """``dataset_fn(InputContext)``: the function shards and batches per replica itself."""
        n = self.num_replicas_in_sync
        return dataset_fn(InputContext(n, self._comm.rank if self._multi else 0, n))

    def experimental_local_results(self, value: Any) -> tuple:
        return (value,)

    def experimental_distribute_values_from_function(self, value_fn: Callable) -> Any:
        """``value_fn(tf.distribute.experimental.ValueContext)`` for this process's replica (under MPI: its rank)."""
        from tapeflow.distribute.input_lib import ValueContext

        return value_fn(ValueContext(self._comm.rank if self._multi else 0, self.num_replicas_in_sync))

    def _set_batch_share(self, local: int, total: int, start: int | None = None) -> None:
        pass


class CrossDeviceOps:
    """``tf.distribute.CrossDeviceOps``: how ``MirroredStrategy`` combines its replicas' values (a hint here:
    the replicas of one process are summed in memory whichever is chosen)."""


class HierarchicalCopyAllReduce(CrossDeviceOps):
    _name = "HierarchicalCopy"

    def __init__(self, num_packs: int = 1) -> None:
        if num_packs < 0:
            raise ValueError(f"{self._name} requires num_packs >= 0, but {num_packs} is specified")
        self.num_packs = num_packs


class NcclAllReduce(HierarchicalCopyAllReduce):
    _name = "NCCL all-reduce"


class ReductionToOneDevice(CrossDeviceOps):
    def __init__(self, reduce_to_device: str | None = None, accumulation_fn: Callable | None = None) -> None:
        self.reduce_to_device = reduce_to_device
        self.accumulation_fn = accumulation_fn


class OneDeviceStrategy(Strategy):
    def __init__(self, device: str = "/cpu:0") -> None:
        super().__init__()
        if "gpu" in device.lower() or "tpu" in device.lower():
            raise ValueError(f"OneDeviceStrategy({device!r}): tapeflow computes on the CPU only; use '/cpu:0'.")
        self.device = device


def _canonical_cpu(device: Any) -> str:
    text = str(getattr(device, "name", device)).strip().lower()
    index = text.rsplit(":", 1)[-1] if ":" in text else "0"
    if "gpu" in text or "tpu" in text or not index.isdigit():
        raise ValueError(f"MirroredStrategy device {device!r}: tapeflow computes on the CPU only (use '/cpu:0', "
                         "'/cpu:1', ... after tf.config.set_logical_device_configuration).")
    return f"/job:localhost/replica:0/task:0/device:CPU:{int(index)}"


class MirroredStrategy(Strategy):
    """Synchronous replicas in one process, one per (logical) CPU device, as TF's on CPUs.

    ``MirroredStrategy()`` uses every logical CPU (one, unless
    ``tf.config.set_logical_device_configuration`` made more); with a device list, one replica per
    device. With several replicas ``run`` returns ``PerReplica`` values, ``experimental_distribute_dataset``
    splits each batch, and ``reduce``/``gather``/``experimental_local_results`` combine them (see
    ``local_replicas``). Keras ``fit`` under it trains as one replica on the whole batch (the same numbers).
    """

    def __init__(self, devices: Any = None, cross_device_ops: Any = None) -> None:
        super().__init__()
        if devices is None:
            from tapeflow import config

            devices = [d.name for d in config.list_logical_devices("CPU")]
        self._devices = tuple(_canonical_cpu(d) for d in devices)
        self._local_replicas = max(1, len(self._devices))
        self.extended = _MirroredExtended(self)

    @property
    def num_replicas_in_sync(self) -> int:
        return self._local_replicas

    def run(self, fn: Callable, args: tuple = (), kwargs: dict | None = None, options: Any = None) -> Any:
        """Calls ``fn`` once per replica (``PerReplica`` arguments give each replica its value); returns
        ``PerReplica`` results (plain values with one replica)."""
        if self._local_replicas == 1:
            return super().run(fn, args, kwargs, options)
        run = local_replicas.ReplicaRun(self, self._local_replicas, lambda rid: ReplicaContext(self, rid),
                                        _swap_replica, _stack)
        return run.run(fn, tuple(args), dict(kwargs or {}))

    def _local_values(self, value: Any) -> list:
        return [local_replicas.select(value, r) for r in range(self._local_replicas)]

    def reduce(self, reduce_op: Any, value: Any, axis: Any = None) -> Any:
        if self._local_replicas == 1:
            return super().reduce(reduce_op, value, axis)
        op = _op(reduce_op)
        from tapeflow.framework.tensor import convert_to_tensor
        from tapeflow.ops import array_ops, math_ops

        per = self._local_values(value)
        if axis is None:
            return _combine_local(per, op)
        flats = [[convert_to_tensor(v) for v in nest.flatten(x)] for x in per]
        out = []
        for leaves in zip(*flats):
            total = math_ops.add_n([math_ops.reduce_sum(v, axis=axis) for v in leaves])
            if op is ReduceOp.MEAN:
                count = math_ops.add_n([math_ops.cast(array_ops.shape(v)[axis], v.dtype) for v in leaves])
                total = math_ops.divide_(total, count)
            out.append(total)
        return nest.pack_sequence_as(per[0], out)

    def gather(self, value: Any, axis: int) -> Any:
        if self._local_replicas == 1:
            return super().gather(value, axis)
        from tapeflow.framework.tensor import convert_to_tensor
        from tapeflow.ops import array_ops

        per = self._local_values(value)
        flats = [[convert_to_tensor(v) for v in nest.flatten(x)] for x in per]
        return nest.pack_sequence_as(per[0], [array_ops.concat(list(leaves), axis) for leaves in zip(*flats)])

    def experimental_local_results(self, value: Any) -> tuple:
        if self._local_replicas == 1:
            return (value,)
        return tuple(self._local_values(value))

    def experimental_distribute_values_from_function(self, value_fn: Callable) -> Any:
        """A ``PerReplica`` of ``value_fn(ValueContext(replica_id, n))`` for each replica (the value with one)."""
        if self._local_replicas == 1:
            return super().experimental_distribute_values_from_function(value_fn)
        from tapeflow.distribute.input_lib import ValueContext

        n = self._local_replicas
        return local_replicas.regroup([value_fn(ValueContext(r, n)) for r in range(n)])

    def experimental_distribute_dataset(self, dataset: Any, options: Any = None) -> Any:
        if self._local_replicas == 1:
            return dataset
        return local_replicas.LocalDistributedDataset(dataset, self)

    def distribute_datasets_from_function(self, dataset_fn: Callable, options: Any = None) -> Any:
        if self._local_replicas == 1:
            return super().distribute_datasets_from_function(dataset_fn, options)
        n = self._local_replicas
        return _PerReplicaDatasets(dataset_fn(InputContext(1, 0, n)), n)

    def __repr__(self) -> str:
        return f"<tapeflow.distribute.MirroredStrategy object at {id(self):#x}>"


class _MirroredExtended(_Extended):
    @property
    def worker_devices(self) -> tuple:
        return self._strategy._devices

    @property
    def parameter_devices(self) -> tuple:
        return self._strategy._devices


class _PerReplicaDatasets:
    """``distribute_datasets_from_function`` under local replicas: one input pipeline whose consecutive
    (per-replica) batches go to replicas 0, 1, ... in turn, as TF."""

    def __init__(self, dataset: Any, n: int) -> None:
        self._dataset = dataset
        self._n = n

    def __iter__(self):
        it = iter(self._dataset)
        while True:
            parts = []
            for _ in range(self._n):
                try:
                    parts.append(next(it))
                except StopIteration:
                    return
            yield local_replicas.regroup(parts)


class MultiWorkerMirroredStrategy(Strategy):
    """Synchronous data-parallel training, one replica per MPI process.

    Launch the unchanged program with ``mpirun -n 4 python train.py``.
    Variables created under ``scope()`` start as rank 0's values; the
    optimizer sums the gradients of all replicas with one fused allreduce
    per step (``IndexedSlices`` by all-gather); Keras ``fit`` splits every
    global batch across the ranks; checkpoints are written by rank 0 only.
    An uncaught exception on any rank aborts the whole job.
    """

    def __init__(self, cluster_resolver: Any = None, communication_options: Any = None) -> None:
        super().__init__()
        comm = get_communicator()
        self._comm = comm
        self._multi = comm.size > 1
        install_abort_on_exception(comm)
        if communication_options is None:
            from tapeflow.distribute.collective_util import CommunicationOptions

            communication_options = CommunicationOptions()
        self._communication_options = communication_options
        set_collective_timeout(communication_options.timeout_seconds)
        resolved = resolve_mpi_cluster(comm, cluster_resolver)
        agrees = cluster_resolver is not None and (cluster_resolver.task_type, cluster_resolver.task_id) == (
            resolved.task_type, resolved.task_id)
        self.cluster_resolver = cluster_resolver if agrees else resolved
        if self._multi:
            from tapeflow.framework.variables import Variable

            # This rank's share of the current global batch (Keras' mean losses scale by it).
            self._share = Variable(np.float64(1.0 / comm.size), trainable=False, name="replica_batch_share")
            # The rows [start, stop) of the current global batch of `total` this rank holds: Keras's Dropout
            # draws the global batch's mask and keeps these rows (the single-process masks)
            self._rows = Variable(np.zeros(3, np.int64), trainable=False, name="replica_batch_rows")
            # an eager tensor's reduce, as lean as raw mpi4py; the rest goes to Strategy.reduce
            self._reduce_one, self.reduce = collective_ops.eager_reducers(
                comm, _SUM, _MEAN, super().reduce)
            # a step's eager dense gradients: straight to the last fused buffer's step (no method layers)
            self._aggregate_gradients = collective_ops.eager_gradient_sum(comm, self._aggregate_gradients)
            # the optimizer's eager update: its checked dense gradient arrays, one fused allreduce, no tensors
            self._sum_gradient_arrays = collective_ops.eager_gradient_arrays(comm)
            hooks.strategy = self

    def _set_batch_share(self, local: int, total: int, start: int | None = None) -> None:
        """This rank holds ``local`` of the global batch's ``total`` examples: rows ``start`` on of it (None: a
        piece trained on as a batch of its own)."""
        if self._multi:
            self._share._value = np.asarray(local / total if total else 0.0, np.float64)
            self._rows._value = np.array([0, local, local] if start is None else [start, start + local, total],
                                         np.int64)

    def _broadcast_initial_value(self, value: np.ndarray) -> np.ndarray:
        return self._comm.broadcast([value], root=0)[0]

    def _whole_dataset_per_rank(self, dataset: Any) -> bool:
        """Whether Keras gives every rank the whole of ``dataset`` (its ``AutoShardPolicy.OFF``)."""
        from tapeflow.distribute.input_lib import auto_shard_policy

        return self._multi and auto_shard_policy(dataset) == -1

    def _split_batches(self, data: Any) -> Any:
        from tapeflow.distribute.input_lib import SplitBatches

        return SplitBatches(data, self)

    def _aggregate_gradients(self, grads: list) -> list:
        """Sums gradients over all replicas: the dense ones in one fused allreduce,
        the ``IndexedSlices`` by all-gathering their values and indices, all of them together (never densified)."""
        if state.plain:  # all dense and eager (the common case): one fused allreduce, nothing else
            out = _plain_all_reduce(grads, "sum")
            if out is not None:
                return out
        from tapeflow.framework.indexed_slices import IndexedSlices
        from tapeflow.framework.tensor import convert_to_tensor

        dense = [i for i, g in enumerate(grads) if g is not None and not isinstance(g, IndexedSlices)]
        out = list(grads)
        if dense:
            for i, r in zip(dense, collective_ops.all_reduce([convert_to_tensor(grads[i]) for i in dense], "sum")):
                out[i] = r
        sparse = [i for i, g in enumerate(grads) if isinstance(g, IndexedSlices)]
        if sparse:  # all of the step's sparse gradients in three collectives (row counts, values, indices)
            values, indices = collective_ops.all_gather_slices([grads[i].values for i in sparse],
                                                               [grads[i].indices for i in sparse])
            for i, v, ix in zip(sparse, values, indices):
                out[i] = IndexedSlices(v, ix, grads[i].dense_shape)
        return out

    def _synced_metric_result(self, metric: Any, result: Callable) -> Any:
        """``metric``'s result over all replicas: its variables summed (one allreduce), read, restored."""
        variables = list(getattr(metric, "_variables", []))
        if not variables:
            return result(metric)
        local = [v._value for v in variables]
        summed = self._comm.metrics.allreduce(local, "sum")
        metric._syncing = True
        try:
            for v, a in zip(variables, summed):
                v._value = a
            return result(metric)
        finally:
            for v, a in zip(variables, local):
                v._value = a
            metric._syncing = False

    def _synced_results(self, metrics: list) -> list:
        """Each metric's ``result()`` over all replicas, the variables of all of them summed in one allreduce
        (Keras' logs after a batch: one collective, however many metrics)."""
        synced = []
        for m in metrics:
            if getattr(m, "_sync_replicas", False):
                while not getattr(m, "_variables", None) and getattr(m, "_inner", None) is not None:
                    m = m._inner  # a metric that delegates (Keras' "accuracy" picks its metric at the first batch)
                if getattr(m, "_variables", None):
                    synced.append(m)
        variables = [v for m in synced for v in m._variables]
        if not variables:
            return [m.result() for m in metrics]
        local = [v._value for v in variables]
        summed = self._comm.metrics.allreduce(local, "sum")
        for m in synced:
            m._syncing = True
        try:
            for v, a in zip(variables, summed):
                v._value = a
            return [m.result() for m in metrics]
        finally:
            for v, a in zip(variables, local):
                v._value = a
            for m in synced:
                m._syncing = False

    def __repr__(self) -> str:
        return f"<tapeflow.distribute.MultiWorkerMirroredStrategy object at {id(self):#x}>"


_plain_all_reduce = collective_ops.plain_all_reduce
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


def _swap_replica(ctx: ReplicaContext | None) -> ReplicaContext | None:
    """Sets this thread's replica context; returns the previous one."""
    prev = getattr(_local, "replica", None)
    _local.replica = ctx
    return prev


def in_cross_replica_context() -> bool:
    """True inside a strategy's ``scope()`` but outside its ``run`` (as TF: False with no strategy, where the
    default replica context is current)."""
    return getattr(_local, "replica", None) is None and has_strategy()


def get_replica_context() -> ReplicaContext | None:
    r = getattr(_local, "replica", None)
    if r is not None:
        return r
    return None if has_strategy() else ReplicaContext(_DEFAULT)


def _replicas_in_sync(fn_name: str) -> int:
    """The current strategy's replica count; a cross-replica call under a strategy's scope is TF's RuntimeError."""
    if has_strategy() and in_cross_replica_context():
        raise RuntimeError(f"You are calling `{fn_name}` in cross replica context, while it was expected to be "
                           "called in replica context.")
    return get_strategy().num_replicas_in_sync


def _local_replica_state() -> tuple:
    ctx = getattr(_local, "replica", None)
    if ctx is not None and ctx._in_run:
        return ctx.strategy, ctx._replica_id
    s = get_strategy() if has_strategy() else None
    return (s if getattr(s, "_local_replicas", 1) > 1 else None), None


hooks.local_replicas = _local_replica_state
hooks.replicas_in_sync = _replicas_in_sync  # tf.nn.compute_average_loss / scale_regularization_loss
