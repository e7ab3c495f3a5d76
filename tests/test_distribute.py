"""tf.distribute in one process (no MPI): TF 2.21's MultiWorkerMirroredStrategy with no TF_CONFIG,
reductions, InputContext, compute_average_loss, Dataset.shard/rebatch, and the collective op's place in
tf.function. Expected values were read from TensorFlow 2.21."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.distribute import collective_ops, communicator


def test_multi_worker_strategy_without_mpi_is_one_replica_like_tf_without_tf_config():
    s = tf.distribute.MultiWorkerMirroredStrategy()
    assert s.num_replicas_in_sync == 1
    cr = s.cluster_resolver
    assert (cr.task_type, cr.task_id, cr.cluster_spec().as_dict(), cr.rpc_layer) == (None, None, {}, None)
    assert s.extended.should_checkpoint and s.extended.should_save_summary
    assert not s.extended._in_multi_worker_mode()
    with s.scope():
        v = tf.Variable(1.0)
        assert tf.distribute.get_strategy() is s
        assert tf.distribute.has_strategy() and tf.distribute.in_cross_replica_context()
    assert v.numpy() == 1.0
    assert tf.distribute.get_strategy() is not s


def test_run_all_reduce_reduce_gather_local_results():
    s = tf.distribute.MultiWorkerMirroredStrategy()

    def fn(x):
        ctx = tf.distribute.get_replica_context()
        assert ctx.num_replicas_in_sync == 1
        assert ctx.replica_id_in_sync_group.dtype == tf.int32 and int(ctx.replica_id_in_sync_group) == 0
        assert not tf.distribute.in_cross_replica_context()
        return ctx.all_reduce("SUM", x), x * 2

    summed, doubled = s.run(fn, args=(tf.constant([1.0, 2.0, 3.0]),))
    assert isinstance(doubled, tf.Tensor)  # one local replica: plain tensors, as TF prints them
    np.testing.assert_array_equal(summed, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(s.reduce("SUM", doubled, axis=None), [2.0, 4.0, 6.0])
    assert float(s.reduce("MEAN", doubled, axis=0)) == 4.0
    assert float(s.reduce(tf.distribute.ReduceOp.SUM, doubled, axis=0)) == 12.0
    np.testing.assert_array_equal(s.gather(doubled, axis=0), [2.0, 4.0, 6.0])
    assert s.experimental_local_results(doubled) == (doubled,)
    with pytest.raises(ValueError, match="'MAX' is not a valid ReduceOp"):
        s.reduce("MAX", tf.constant(1.0), axis=None)
    assert str(tf.distribute.ReduceOp.SUM) == "ReduceOp.SUM"
    assert repr(tf.distribute.ReduceOp.MEAN) == "<ReduceOp.MEAN: 'MEAN'>"


def test_compute_average_loss_and_scale_regularization_loss():
    assert float(tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 3.0]))) == 2.0
    assert float(tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 3.0]), global_batch_size=6)) == 1.0
    weighted = tf.nn.compute_average_loss(
        tf.constant([1.0, 2.0, 3.0]), sample_weight=tf.constant([1.0, 0.0, 2.0]), global_batch_size=4
    )
    assert float(weighted) == 1.75
    assert float(tf.nn.compute_average_loss(tf.constant([[1.0, 2.0], [3.0, 4.0]]), global_batch_size=4)) == 2.5
    assert float(tf.nn.scale_regularization_loss(tf.constant(3.0))) == 3.0
    assert float(tf.nn.scale_regularization_loss([tf.constant(3.0), tf.constant(1.0)])) == 4.0
    s = tf.distribute.MultiWorkerMirroredStrategy()
    with s.scope():
        with pytest.raises(RuntimeError, match="calling `compute_average_loss` in cross replica context"):
            tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 3.0]))
        assert float(s.run(lambda: tf.nn.compute_average_loss(tf.constant([1.0, 2.0, 3.0])))) == 2.0
        assert float(s.run(lambda: tf.nn.scale_regularization_loss(tf.constant(3.0)))) == 3.0


def test_compute_average_loss_of_no_example_is_zero_and_the_batch_size_is_checked():
    # TF's div_no_nan: a replica left without examples by a short last batch adds 0 to the summed loss
    assert float(tf.nn.compute_average_loss(tf.zeros([0]))) == 0.0
    assert float(tf.function(tf.nn.compute_average_loss)(tf.zeros([0]))) == 0.0
    assert float(tf.nn.compute_average_loss(tf.zeros([0]), global_batch_size=0)) == 0.0
    assert float(tf.function(lambda x, n: tf.nn.compute_average_loss(x, global_batch_size=n))(
        tf.ones([3]), tf.constant(4))) == 0.75
    with pytest.raises(TypeError, match="global_batch_size must be an integer"):
        tf.nn.compute_average_loss(tf.ones([3]), global_batch_size=2.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="global_batch_size must be non-negative"):
        tf.nn.compute_average_loss(tf.ones([3]), global_batch_size=-2)


def test_input_context_and_datasets_from_function():
    ic = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=1, num_replicas_in_sync=4)
    assert (ic.num_input_pipelines, ic.input_pipeline_id, ic.num_replicas_in_sync) == (2, 1, 4)
    assert ic.get_per_replica_batch_size(8) == 2
    with pytest.raises(ValueError, match="The `global_batch_size` 7 is not divisible by `num_replicas_in_sync` 4"):
        ic.get_per_replica_batch_size(7)
    s = tf.distribute.MultiWorkerMirroredStrategy()
    got = []

    def dataset_fn(ctx):
        got.append(
            (
                ctx.num_input_pipelines,
                ctx.input_pipeline_id,
                ctx.num_replicas_in_sync,
                ctx.get_per_replica_batch_size(8),
            )
        )
        return tf.data.Dataset.range(4).batch(2)

    batches = [b.numpy().tolist() for b in s.distribute_datasets_from_function(dataset_fn)]
    assert got == [(1, 0, 1, 8)] and batches == [[0, 1], [2, 3]]
    dist = [b.numpy().tolist() for b in s.experimental_distribute_dataset(tf.data.Dataset.range(10).batch(4))]
    assert dist == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_dataset_shard():
    assert [int(x) for x in tf.data.Dataset.range(10).shard(3, 1)] == [1, 4, 7]
    assert int(tf.data.Dataset.range(10).shard(3, 1).cardinality()) == 3
    assert int(tf.data.Dataset.range(10).shard(3, 0).cardinality()) == 4
    xs = np.arange(12.0).reshape(6, 2)
    shard = tf.data.Dataset.from_tensor_slices((xs, np.arange(6))).shuffle(6, seed=1).shard(2, 1)
    assert len(list(shard)) == 3
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Index must be between 0 and 2 \(currently index = 3\)"):
        tf.data.Dataset.range(10).shard(3, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Number of shards must be greater than zero"):
        tf.data.Dataset.range(10).shard(0, 0)


def test_dataset_rebatch():
    ds = tf.data.Dataset.range(10).batch(4)
    assert [b.tolist() for b in ds.rebatch(3).as_numpy_iterator()] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert [b.tolist() for b in ds.rebatch(3, drop_remainder=True).as_numpy_iterator()] == [
        [0, 1, 2],
        [3, 4, 5],
        [6, 7, 8],
    ]
    assert [b.tolist() for b in ds.rebatch([2, 3]).as_numpy_iterator()] == [[0, 1], [2, 3, 4], [5, 6], [7, 8, 9]]
    assert int(ds.rebatch(3).cardinality()) == -2
    pairs = tf.data.Dataset.from_tensor_slices((np.arange(5.0), np.arange(5))).batch(2).rebatch(4)
    assert [(a.tolist(), b.tolist()) for a, b in pairs.as_numpy_iterator()] == [
        ([0.0, 1.0, 2.0, 3.0], [0, 1, 2, 3]),
        ([4.0], [4]),
    ]


class _CountingCommunicator(communicator.LocalCommunicator):
    calls = 0

    def allreduce(self, arrays, op="sum"):
        type(self).calls += 1
        return [np.asarray(a) * 1 for a in arrays]


def test_collective_in_tf_function_runs_every_call_in_order(monkeypatch):
    monkeypatch.setattr(communicator, "_COMM", _CountingCommunicator())

    @tf.function
    def f():
        a, b = collective_ops.all_reduce([tf.constant(1.0), tf.constant([2.0, 3.0])])  # constant inputs: never folded
        c = collective_ops.all_reduce([a + 1.0])[0]
        return c, b

    for _ in range(3):
        c, b = f()
    assert float(c) == 2.0 and b.numpy().tolist() == [2.0, 3.0]
    assert _CountingCommunicator.calls == 6  # two collectives per call, none folded at trace time
    graph = f.get_concrete_function().graph
    types = [op.type for op in graph.operations]
    assert types.count("CollectiveReduceV2") == 2


def test_tf_config_cluster_of_workers_is_not_implemented(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 0}}')
    with pytest.raises(NotImplementedError, match="mpirun -n 2 python train.py"):
        tf.distribute.MultiWorkerMirroredStrategy()


def test_tf_config_of_one_worker_in_one_process_is_that_worker(monkeypatch):
    # as TF: task_type/task_id and the cluster are TF_CONFIG's (the tutorials' single-worker run)
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["localhost:1"]}, "task": {"type": "worker", "index": 0}}')
    s = tf.distribute.MultiWorkerMirroredStrategy()
    r = s.cluster_resolver
    assert (r.task_type, r.task_id, s.num_replicas_in_sync) == ("worker", 0, 1)
    assert r.cluster_spec().as_dict() == {"worker": ["localhost:1"]}
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["localhost:1"]}, "task": {"type": "worker", "index": 1}}')
    with pytest.raises(
        ValueError, match="the task worker:1, but under mpirun process 0 is the cluster's task worker:0"
    ):
        tf.distribute.MultiWorkerMirroredStrategy()
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["a:1"], "ps": ["b:2"]}, "task": {"type": "worker"}}')
    with pytest.raises(NotImplementedError, match=r"names the job\(s\) \['ps'\]"):
        tf.distribute.MultiWorkerMirroredStrategy()
    monkeypatch.setenv("TF_CONFIG", "{not json")
    with pytest.raises(ValueError, match="TF_CONFIG is not valid JSON"):
        tf.distribute.MultiWorkerMirroredStrategy()


class _FakeWorld:
    """What ``resolve_mpi_cluster`` sees of an MPI job: one rank, and every rank's (type, index) when gathered."""

    is_mpi = True

    def __init__(self, rank: int, tasks: list) -> None:
        self.rank, self.size, self._tasks = rank, len(tasks), tasks

    def allgather_object(self, obj):
        return self._tasks


def test_tf_config_under_mpirun_agrees_with_the_ranks(monkeypatch):
    from tapeflow.distribute.cluster_resolver import resolve_mpi_cluster

    cluster = {"chief": ["h:0"], "worker": ["h:1", "h:2"]}
    same = [("worker", 0)] * 3  # mpirun -x TF_CONFIG: one task entry for all; the ranks decide
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 0}}))
    got = [resolve_mpi_cluster(_FakeWorld(r, same)) for r in range(3)]
    assert [(g.task_type, g.task_id) for g in got] == [("chief", 0), ("worker", 0), ("worker", 1)]
    assert got[2].cluster_spec().as_dict() == cluster
    own = [("chief", 0), ("worker", 0), ("worker", 1)]  # one TF_CONFIG per rank, each its rank's task: fine
    assert resolve_mpi_cluster(_FakeWorld(1, own)).task_id == 0
    swapped = [("chief", 0), ("worker", 1), ("worker", 0)]
    with pytest.raises(
        ValueError,
        match="makes MPI process 1 the task worker:1, but under mpirun process 1 is the cluster's task worker:0",
    ):
        resolve_mpi_cluster(_FakeWorld(0, swapped))
    with pytest.raises(ValueError, match="describes a cluster of 3 training task.* but mpirun started 2 processes"):
        resolve_mpi_cluster(_FakeWorld(0, same[:2]))
    monkeypatch.delenv("TF_CONFIG")
    no_config = resolve_mpi_cluster(_FakeWorld(1, [(None, None)] * 2))
    assert (no_config.task_type, no_config.task_id) == ("worker", 1)
    given = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec({"worker": ["a:1", "b:2"]}), task_type="worker", task_id=1
    )
    assert resolve_mpi_cluster(_FakeWorld(1, [("worker", 0), ("worker", 1)]), given).task_id == 1
    monkeypatch.setenv(
        "TF_CONFIG",
        json.dumps({"cluster": {"worker": ["a:1"], "evaluator": ["e:1"]}, "task": {"type": "evaluator", "index": 0}}),
    )
    with pytest.raises(NotImplementedError, match="the 'evaluator' task"):
        resolve_mpi_cluster(_FakeWorld(0, [("evaluator", 0)]))


def test_cluster_spec_and_resolvers_as_tf(monkeypatch):
    spec = tf.train.ClusterSpec({"worker": ["localhost:12345", "localhost:23456"], "chief": ["localhost:1"]})
    assert spec.as_dict() == {"worker": ["localhost:12345", "localhost:23456"], "chief": ["localhost:1"]}
    assert (spec.jobs, spec.num_tasks("worker"), spec.task_indices("worker")) == (["worker", "chief"], 2, [0, 1])
    assert spec.task_address("worker", 1) == "localhost:23456" and bool(spec) and not tf.train.ClusterSpec({})
    assert repr(spec) == ("ClusterSpec({'chief': ['localhost:1'], 'worker': ['localhost:12345', 'localhost:23456']})")
    with pytest.raises(ValueError, match="No such job in cluster: 'ps'"):
        spec.num_tasks("ps")
    with pytest.raises(ValueError, match="No task with index 5 in job 'worker'"):
        spec.task_address("worker", 5)
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": spec.as_dict(), "task": {"type": "worker", "index": 1}}))
    r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    assert (r.task_type, r.task_id, r.rpc_layer, r.environment) == ("worker", 1, None, None)
    assert r.master() == "localhost:23456" and r.cluster_spec() == spec and dict(r.num_accelerators()) == {}
    monkeypatch.delenv("TF_CONFIG")
    assert (r.task_type, r.task_id, r.cluster_spec().as_dict(), r.master()) == (None, None, {}, "")


def test_communication_options_and_cross_device_ops_as_tf():
    e = tf.distribute.experimental
    o = e.CommunicationOptions()
    assert str(o) == "Options(bytes_per_pack=0,timeout_seconds=None, implementation=CommunicationImplementation.AUTO)"
    m = o.merge(e.CommunicationOptions(bytes_per_pack=8, implementation="ring"))
    assert (m.bytes_per_pack, m.timeout_seconds, m.implementation) == (8, None, e.CommunicationImplementation.RING)
    assert e.CollectiveCommunication is e.CommunicationImplementation
    with pytest.raises(ValueError, match="Argument `bytes_per_pack` must be >=0, Received -1."):
        e.CommunicationOptions(bytes_per_pack=-1)
    with pytest.raises(ValueError, match="must be instance of"):
        e.CommunicationOptions(implementation=3)
    s = tf.distribute.MultiWorkerMirroredStrategy(communication_options=e.CommunicationOptions(implementation="NCCL"))
    assert s.num_replicas_in_sync == 1
    legacy = e.MultiWorkerMirroredStrategy(e.CollectiveCommunication.RING)
    assert isinstance(legacy, tf.distribute.MultiWorkerMirroredStrategy)
    with pytest.raises(NotImplementedError, match="tf.distribute.experimental.ParameterServerStrategy"):
        e.ParameterServerStrategy
    assert (
        tf.distribute.MirroredStrategy(cross_device_ops=tf.distribute.HierarchicalCopyAllReduce()).num_replicas_in_sync
        == 1
    )
    with pytest.raises(ValueError, match="HierarchicalCopy requires num_packs >= 0, but -1 is specified"):
        tf.distribute.HierarchicalCopyAllReduce(-1)
    with pytest.raises(ValueError, match="NCCL all-reduce requires num_packs >= 0"):
        tf.distribute.NcclAllReduce(-1)
    assert repr(tf.distribute.InputOptions()) == (
        "InputOptions(experimental_fetch_to_device=True, experimental_replication_mode=<InputReplicationMode."
        "PER_WORKER: 'PER_WORKER'>, experimental_place_dataset_on_device=False, experimental_per_replica_buffer_size=1)"
    )


def test_values_from_function_and_extended_flags_as_tf():
    s = tf.distribute.MultiWorkerMirroredStrategy()
    got = s.experimental_distribute_values_from_function(lambda ctx: (ctx.replica_id_in_sync_group,
                                                                      ctx.num_replicas_in_sync))
    assert got == (0, 1)
    assert s.extended.experimental_between_graph
    assert not tf.distribute.get_strategy().extended.experimental_between_graph
    assert s.extended.experimental_should_init and not s.extended.experimental_require_static_shapes
    assert str(tf.distribute.experimental.ValueContext(1, 2)) == (
        "tf.distribute.ValueContext(replica id 1,  total replicas in sync: 2)")


def test_get_next_as_optional_eager_and_in_tf_function():
    it = iter(tf.data.Dataset.range(3))
    first = it.get_next_as_optional()
    assert bool(first.has_value()) and int(first.get_value()) == 0 and first.element_spec == tf.TensorSpec([], tf.int64)
    it.get_next(), it.get_next()
    end = it.get_next_as_optional()
    assert not bool(end.has_value())
    with pytest.raises(tf.errors.InvalidArgumentError, match="The optional does not have a value"):
        end.get_value()
    assert int(tf.experimental.Optional.from_value(tf.constant(3)).get_value()) == 3
    assert not bool(tf.experimental.Optional.empty(tf.TensorSpec([], tf.int32)).has_value())

    @tf.function
    def total(iterator):  # the distributed input tutorial's loop: stop when the optional is empty
        out, i = tf.constant(0, tf.int64), tf.constant(0)
        while i < 5:
            i += 1
            optional = iterator.get_next_as_optional()
            if not optional.has_value():
                break
            out += tf.reduce_sum(optional.get_value())
        return out

    eager_iterator = iter(tf.data.Dataset.range(9).batch(4))
    assert [int(total(eager_iterator)), int(total(eager_iterator))] == [36, 0]  # pulled when the function runs

    @tf.function
    def tutorial_loop(iterator, steps_per_loop=5):  # as written there: a tf.range loop with a tensor break
        out = tf.constant(0, tf.int64)
        for _ in tf.range(steps_per_loop):
            optional = iterator.get_next_as_optional()
            if not optional.has_value():
                break
            out += tf.reduce_sum(optional.get_value())
        return out

    assert int(tutorial_loop(iter(tf.data.Dataset.range(9).batch(4)))) == 36
    assert int(tutorial_loop(iter(tf.data.Dataset.range(9).batch(4)), 2)) == 28

    @tf.function
    def first_of(dataset):
        optional = iter(dataset).get_next_as_optional()
        return optional.has_value(), optional.get_value()

    has, value = first_of(tf.data.Dataset.range(9).batch(4))
    assert bool(has) and value.numpy().tolist() == [0, 1, 2, 3]


def test_dataset_options_as_tf():
    o = tf.data.Options()
    assert o.experimental_distribute.auto_shard_policy == tf.data.experimental.AutoShardPolicy.AUTO == 0
    assert o.experimental_distribute.num_devices is None and o.deterministic is None
    assert list(tf.data.experimental.AutoShardPolicy) == [-1, 0, 1, 2, 3]
    with pytest.raises(AttributeError, match="Cannot set the property foo on Options."):
        o.foo = 1
    with pytest.raises(
        TypeError,
        match="Property \"auto_shard_policy\" must be of type <enum 'AutoShardPolicy'>, "
        "got: 5 \\(type: <class 'int'>\\)",
    ):
        o.experimental_distribute.auto_shard_policy = 5
    with pytest.raises(TypeError, match="Property \"deterministic\" must be of type <class 'bool'>"):
        o.deterministic = 3
    assert tf.data.Dataset.range(3).options() == tf.data.Options()
    off = tf.data.Options()
    off.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
    ds = tf.data.Dataset.range(3).with_options(o).batch(2).with_options(off)
    assert ds.options().experimental_distribute.auto_shard_policy == -1 and ds.options().deterministic is None
    assert repr(ds).startswith("<_OptionsDataset element_spec=") and [list(b) for b in ds.as_numpy_iterator()] == [
        [0, 1],
        [2],
    ]
    no, yes = tf.data.Options(), tf.data.Options()
    no.deterministic, yes.deterministic = False, True
    assert tf.data.Dataset.range(2).with_options(no).with_options(yes).options().deterministic is True  # the last wins
    assert tf.data.Dataset.range(2).with_options(no).map(lambda x: x).options().deterministic is False  # downstream
    assert (
        tf.data.Dataset.zip((tf.data.Dataset.range(2).with_options(no), tf.data.Dataset.range(2)))
        .options()
        .deterministic
        is False
    )
    assert o.threading is o.experimental_threading


def _fake_mpi_communicator(size: int = 2) -> communicator.MPICommunicator:
    """The MPI communicator's own packing and buffer reuse, with ``Allreduce`` replaced by what ``size``
    ranks holding the same arrays would compute (no MPI needed)."""
    c = communicator.MPICommunicator.__new__(communicator.MPICommunicator)
    c.rank, c.size, c._fused, c._IN_PLACE = 0, size, {}, object()
    c._ops = {"sum": "sum", "mean": "sum", "max": "max", "min": "min"}
    c.calls = []

    def allreduce(sendbuf, recvbuf, op):
        if sendbuf is c._IN_PLACE:
            assert recvbuf.flags.c_contiguous and recvbuf.ndim <= 1 or recvbuf.ndim == 0
        else:  # as mpi4py: any contiguous buffer, taken in its memory order, byte for byte
            if not (sendbuf.flags.c_contiguous or sendbuf.flags.f_contiguous):
                raise BufferError("ndarray is not contiguous")
            assert sendbuf.nbytes == recvbuf.nbytes
            np.ravel(recvbuf, order="K").view(np.uint8)[...] = np.ravel(sendbuf, order="K").view(np.uint8)
        c.calls.append((recvbuf.dtype, recvbuf.size))
        if op == "sum":
            recvbuf *= size

    c._Allreduce = allreduce
    return c


def test_fused_allreduce_reuses_its_buffer_only_when_no_result_is_held():
    c = _fake_mpi_communicator(2)
    xs = [np.arange(6.0, dtype=np.float32).reshape(2, 3), np.float32(1.5), np.ones(4, np.float32)]
    first = c.allreduce(xs, "sum")
    assert c.calls == [(np.float32, 11)]  # one Allreduce on one buffer, in the arrays' dtype
    np.testing.assert_array_equal(first[0], xs[0] * 2)
    assert first[1].shape == () and float(first[1]) == 3.0 and [o.dtype for o in first] == [np.float32] * 3
    np.testing.assert_array_equal(xs[0], np.arange(6.0).reshape(2, 3))  # inputs left alone
    second = c.allreduce([x + 1 for x in xs], "sum")  # `first` still held: a new buffer
    np.testing.assert_array_equal(first[0], xs[0] * 2)
    np.testing.assert_array_equal(second[0], (xs[0] + 1) * 2)
    buf = id(second[0].base)  # (the cache keeps it alive: its id stays its own)
    del first, second
    third = c.allreduce(xs, "sum")
    assert id(third[0].base) == buf  # nothing held: the cached buffer is reused
    kept = third[2].reshape(2, 2)[0]  # a view of a view keeps the buffer busy too
    del third
    fourth = c.allreduce([x * 0 for x in xs], "sum")
    np.testing.assert_array_equal(kept, [2.0, 2.0])
    assert id(fourth[0].base) != buf


def test_fused_allreduce_keeps_each_dtype_and_averages_in_it():
    c = _fake_mpi_communicator(4)
    f32 = [np.ones((2, 2), np.float32), np.ones(3, np.float32)]
    c.allreduce(f32, "sum")
    f64 = c.allreduce([a.astype(np.float64) * 3 for a in f32], "mean")  # same shapes, another dtype
    assert [o.dtype for o in f64] == [np.float64, np.float64]
    np.testing.assert_array_equal(f64[1], [3.0, 3.0, 3.0])
    mixed = c.allreduce([np.array([7, 9], np.int64), np.array([0.5], np.float32), np.array([1, 2], np.int64)], "mean")
    assert [o.dtype for o in mixed] == [np.int64, np.float32, np.int64]
    np.testing.assert_array_equal(mixed[0], [7, 9])  # (4 * 7) // 4
    assert c.calls[-2:] == [(np.int64, 4), (np.float32, 1)]  # one buffer per dtype, first-seen order
    assert c.allreduce([], "sum") == []
    with pytest.raises(ValueError, match="unknown reduction 'prod'"):
        c.allreduce([np.ones(2), np.ones(3)], "prod")


def test_single_allreduce_returns_a_new_array_and_big_ones_reuse_a_buffer():
    c = _fake_mpi_communicator(2)
    x = np.arange(4.0)
    out = c.allreduce_one(x, "mean")
    assert out is not x and out.tolist() == [0.0, 1.0, 2.0, 3.0] and x.tolist() == [0.0, 1.0, 2.0, 3.0]
    s = c.allreduce_one(np.float32(2.0), "sum")
    assert s.shape == () and s.dtype == np.float32 and float(s) == 4.0
    assert c.allreduce_one(x[::2], "sum").tolist() == [0.0, 4.0]  # not contiguous
    m = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(c.allreduce_one(m.T, "sum"), 2 * m.T)  # Fortran-ordered
    np.testing.assert_array_equal(c.allreduce_one(m.T[::2], "sum"), 2 * m.T[::2])  # neither
    big = np.ones(1 << 18, np.float32)  # 1 MB: reduced in a cached buffer
    a = c.allreduce_one(big, "sum")
    b = c.allreduce_one(big * 2, "sum")
    assert a[0] == 2.0 and b[0] == 4.0 and a.base is not b.base
    base = id(b.base)
    del a, b
    assert id(c.allreduce_one(big, "sum").base) == base


def test_collective_results_returned_by_tf_function_are_not_overwritten(monkeypatch):
    monkeypatch.setattr(communicator, "_COMM", _fake_mpi_communicator(2))

    @tf.function
    def f(x):
        return collective_ops.all_reduce([x, x * 2.0])

    a = f(tf.constant([1.0, 2.0]))
    b = f(tf.constant([10.0, 20.0]))
    assert a[0].numpy().tolist() == [2.0, 4.0] and a[1].numpy().tolist() == [4.0, 8.0]
    assert b[0].numpy().tolist() == [20.0, 40.0]
    eager = collective_ops.all_reduce([tf.constant([1.0]), tf.constant(3.0)])
    again = collective_ops.all_reduce([tf.constant([5.0]), tf.constant(6.0)])
    assert float(eager[0][0]) == 2.0 and float(eager[1]) == 6.0 and float(again[1]) == 12.0
    assert eager[1].numpy().shape == () and isinstance(eager[1].numpy(), np.float32)


def test_collectives_in_tf_function_run_in_program_order_even_when_unused(monkeypatch):
    log = []

    class Recording(communicator.LocalCommunicator):
        def allreduce(self, arrays, op="sum"):
            log.append(tuple(int(np.size(a)) for a in arrays))
            return [np.array(a, copy=True) for a in arrays]

    monkeypatch.setattr(communicator, "_COMM", Recording())

    @tf.function
    def f(x):
        late = x * 2.0  # computed before the others, reduced after them
        a = collective_ops.all_reduce([tf.ones([3])])[0]
        collective_ops.all_reduce([tf.ones([5])])  # result unused: runs anyway (every rank must take part)
        collective_ops.all_reduce([x, late])  # independent of the two before: not moved ahead of them
        return a

    for _ in range(2):
        f(tf.ones([2]))
    assert log == [(3,), (5,), (2, 2)] * 2


def test_default_strategy_reduce_gives_the_value_back_and_central_storage_strategy():
    default = tf.distribute.get_strategy()
    assert default.reduce("SUM", 1.0, axis=None) == 1.0 and type(default.reduce("SUM", 1.0, axis=None)) is float
    assert default.reduce("SUM", {"a": 1.0}, axis=None) == {"a": 1.0}
    assert float(tf.distribute.MirroredStrategy().reduce("SUM", 1.0, axis=None).numpy()) == 1.0  # a tensor there
    central = tf.distribute.experimental.CentralStorageStrategy()
    assert central.num_replicas_in_sync == 1
    assert central.extended.worker_devices == ["/job:localhost/replica:0/task:0/device:CPU:0"]
    assert central.extended.parameter_devices == ("/job:localhost/replica:0/task:0/device:CPU:0",)
    with central.scope():
        v = tf.Variable(2.0)
    assert float(central.run(lambda: v * 2).numpy()) == 4.0
    assert float(central.reduce("SUM", 1.0, axis=None).numpy()) == 1.0
    with pytest.raises(NotImplementedError, match="several compute devices"):
        tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"])
