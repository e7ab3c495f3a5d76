"""tf.config and the one-replica tf.distribute strategies."""

import numpy as np
import pytest

import tapeflow as tf


def test_run_functions_eagerly_runs_python_each_call():
    calls = []

    @tf.function
    def f(x):
        calls.append(1)
        return x * 2

    f(tf.constant(1.0))
    f(tf.constant(2.0))
    assert len(calls) == 1
    tf.config.run_functions_eagerly(True)
    try:
        assert tf.config.functions_run_eagerly()
        assert float(f(tf.constant(3.0))) == 6.0
        f(tf.constant(4.0))
    finally:
        tf.config.run_functions_eagerly(False)
    assert len(calls) == 3


def test_devices():
    assert tf.config.list_physical_devices("GPU") == []
    assert tf.config.list_physical_devices()[0].device_type == "CPU"
    with pytest.raises(ValueError):
        tf.config.set_visible_devices([tf.config.PhysicalDevice("/physical_device:GPU:0", "GPU")])


def test_default_and_mirrored_strategy_training_step():
    assert not tf.distribute.has_strategy()
    assert tf.distribute.get_strategy().num_replicas_in_sync == 1
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        assert tf.distribute.get_strategy() is strategy
        w = tf.Variable(2.0)
    assert tf.distribute.get_strategy() is not strategy

    def step(x):
        with tf.GradientTape() as t:
            loss = tf.reduce_mean(tf.square(w * x))
        g = t.gradient(loss, w)
        ctx = tf.distribute.get_replica_context()
        g = ctx.all_reduce(tf.distribute.ReduceOp.SUM, g)
        w.assign_sub(0.1 * g)
        return loss

    per_replica = strategy.run(step, args=(tf.constant([1.0, 2.0]),))
    total = strategy.reduce("SUM", per_replica, axis=None)
    np.testing.assert_allclose(float(total), 10.0)
    np.testing.assert_allclose(w.numpy(), 2.0 - 0.1 * 10.0)
    np.testing.assert_allclose(strategy.reduce(tf.distribute.ReduceOp.MEAN, tf.constant([1.0, 3.0]), axis=0), 2.0)
    with pytest.raises(ValueError, match="CPU only"):
        tf.distribute.OneDeviceStrategy("/gpu:0")
