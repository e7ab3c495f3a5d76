"""MirroredStrategy over logical CPUs: several replicas in one process, pinned against TF 2.21."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import config


@pytest.fixture
def three_cpus():
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 3)
    yield cpu
    config.set_logical_device_configuration(cpu, None)


def test_logical_devices(three_cpus):
    assert [d.name for d in tf.config.list_logical_devices("CPU")] == ["/device:CPU:0", "/device:CPU:1",
                                                                        "/device:CPU:2"]
    assert repr(tf.config.LogicalDeviceConfiguration()) == (
        "LogicalDeviceConfiguration(memory_limit=None, experimental_priority=None, experimental_device_ordinal=None)")
    assert len(tf.config.get_logical_device_configuration(three_cpus)) == 3
    assert tf.distribute.MirroredStrategy().num_replicas_in_sync == 3
    assert tf.config.experimental.VirtualDeviceConfiguration is tf.config.LogicalDeviceConfiguration


def test_run_gives_per_replica_values_printed_as_tf():
    s = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    assert s.num_replicas_in_sync == 2
    assert s.extended.worker_devices == ("/job:localhost/replica:0/task:0/device:CPU:0",
                                         "/job:localhost/replica:0/task:0/device:CPU:1")

    def f():
        return tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group, tf.float32) + 1.0

    r = s.run(f)
    assert str(r) == ("PerReplica:{\n  0: tf.Tensor(1.0, shape=(), dtype=float32),\n"
                      "  1: tf.Tensor(2.0, shape=(), dtype=float32)\n}")
    assert repr(r).startswith("PerReplica:{\n  0: <tf.Tensor: shape=(), dtype=float32, numpy=1.0>,")
    assert [float(v) for v in s.experimental_local_results(r)] == [1.0, 2.0]
    assert float(s.reduce(tf.distribute.ReduceOp.SUM, r, axis=None)) == 3.0
    assert float(s.reduce("MEAN", r, axis=None)) == 1.5
    both = s.run(lambda: (tf.constant(1), tf.constant(2.0)))
    assert isinstance(both, tuple) and str(both[1]).startswith("PerReplica:{")
    assert s.gather(s.run(lambda: tf.constant([1, 2])), axis=0).numpy().tolist() == [1, 2, 1, 2]
    assert [float(v) for v in s.experimental_local_results(s.run(lambda x: x * 2, args=(tf.constant(3.0),)))] == [
        6.0, 6.0]

    @tf.function
    def step():
        return s.run(f)

    assert [float(v) for v in s.experimental_local_results(step())] == [1.0, 2.0]


def test_all_reduce_and_distributed_dataset_split_batches():
    s = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    out = s.run(lambda: tf.distribute.get_replica_context().all_reduce("SUM", tf.constant(2.0)))
    assert [float(v) for v in s.experimental_local_results(out)] == [4.0, 4.0]
    batches = list(s.experimental_distribute_dataset(tf.data.Dataset.range(8).batch(4)))
    assert str(batches[0]) == ("PerReplica:{\n  0: tf.Tensor([0 1], shape=(2,), dtype=int64),\n"
                               "  1: tf.Tensor([2 3], shape=(2,), dtype=int64)\n}")
    sums = [int(s.reduce("SUM", s.run(tf.reduce_sum, args=(b,)), axis=None)) for b in batches]
    assert sums == [6, 22]


def test_apply_gradients_sums_replicas_and_updates_once():
    s = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with s.scope():
        w = tf.Variable(1.0)
        opt = tf.keras.optimizers.SGD(0.1)

    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(w * x)
        opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
        return loss

    for b in s.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices([1.0, 2.0, 3.0, 4.0]).batch(4)):
        losses = s.run(step, args=(b,))
    # both replicas saw w = 1 (losses 3 and 7); the summed gradient 10 was applied once
    assert [float(v) for v in s.experimental_local_results(losses)] == [3.0, 7.0]
    np.testing.assert_allclose(w.numpy(), 0.0, atol=1e-6)


def test_generator_per_replica_streams_as_tf():
    g = tf.random.Generator.from_seed(1)
    s = tf.distribute.MirroredStrategy(["cpu:0", "cpu:1"])
    with s.scope():
        outside = s.run(lambda: g.normal([]))  # made outside the scope: one shared stream
        g2 = tf.random.Generator.from_seed(1)
        a = s.run(lambda: g2.normal([]))
        b = s.run(lambda: g2.normal([]))
    assert [float(v) for v in s.experimental_local_results(outside)] == [np.float32(0.4384227395057678),
                                                                         np.float32(1.6272374391555786)]
    assert [float(v) for v in s.experimental_local_results(a)] == [np.float32(-0.87930447),
                                                                   np.float32(0.020661574)]
    assert [float(v) for v in s.experimental_local_results(b)] == [np.float32(-1.5822568), np.float32(0.77539235)]


def test_a_failing_replica_raises_in_the_caller():
    s = tf.distribute.MirroredStrategy(["cpu:0", "cpu:1"])

    def f():
        if int(tf.distribute.get_replica_context().replica_id_in_sync_group) == 1:
            raise ValueError("replica one failed")
        return tf.distribute.get_replica_context().all_reduce("SUM", tf.constant(1.0))

    with pytest.raises(ValueError, match="replica one failed"):
        s.run(f)


def test_per_replica_arguments_to_tf_function_and_element_spec_signature():
    # TF's distributed input tutorial: a tf.function over a distributed batch, and one with its element_spec
    s = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    dist = s.experimental_distribute_dataset(tf.data.Dataset.from_tensors(([1.0], [1.0])).repeat(10).batch(4))
    assert repr(dist.element_spec) == (
        "(PerReplicaSpec(TensorSpec(shape=(None, 1), dtype=tf.float32, name=None), TensorSpec(shape=(None, 1), "
        "dtype=tf.float32, name=None)), PerReplicaSpec(TensorSpec(shape=(None, 1), dtype=tf.float32, name=None), "
        "TensorSpec(shape=(None, 1), dtype=tf.float32, name=None)))")

    @tf.function
    def summed(x):
        return s.reduce("SUM", s.run(lambda v: v[0] * 2, args=(x,)), axis=0)

    @tf.function(input_signature=[dist.element_spec])
    def doubled(inputs):
        return s.run(lambda v: 2 * v, args=(inputs,))

    batches = list(dist)
    assert [summed(b).numpy().tolist() for b in batches] == [[8.0], [8.0], [4.0]]
    out = doubled(batches[-1])  # (2 * a tuple repeats it: four PerReplica values, as TF prints)
    assert len(out) == 4 and [v.numpy().tolist() for v in s.experimental_local_results(out[2])] == [[[1.0]], [[1.0]]]
