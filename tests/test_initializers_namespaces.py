"""TF2's top-level initializers, and TF namespaces tapeflow does not have."""

import numpy as np
import pytest

import tapeflow as tf


def test_top_level_initializers():
    np.testing.assert_array_equal(tf.zeros_initializer()(shape=[2]).numpy(), [0.0, 0.0])
    assert tf.zeros_initializer()(shape=[2]).dtype == tf.float32
    c = tf.constant_initializer(3.0)(shape=[2], dtype=tf.float64)
    assert c.dtype == tf.float64 and c.numpy().tolist() == [3.0, 3.0]
    assert tf.ones_initializer()([2], tf.int32).numpy().tolist() == [1, 1]
    a = tf.random_normal_initializer(0.0, 1.0, seed=1)(shape=[3, 2])
    b = tf.random_normal_initializer(0.0, 1.0, seed=1)(shape=[3, 2])
    assert a.shape == (3, 2) and a.dtype == tf.float32
    u = tf.random_uniform_initializer(-1.0, 1.0, seed=2)(shape=[100])
    assert -1.0 <= float(tf.reduce_min(u)) and float(tf.reduce_max(u)) < 1.0
    v = tf.Variable(a)
    np.testing.assert_array_equal(v.numpy(), a.numpy())
    del b


def test_unsupported_namespaces_say_so():
    assert not hasattr(tf, "lite")
    with pytest.raises(NotImplementedError, match="tf.lite is not implemented in tapeflow"):
        tf.lite  # noqa: B018
    with pytest.raises(AttributeError):
        tf.not_a_tf_name  # noqa: B018


def test_tf_initializers_is_keras_initializers():
    # TF 2.21's tf.initializers is Keras 3's keras.initializers (time_series uses tf.initializers.zeros())
    assert tf.initializers.zeros is tf.keras.initializers.Zeros
    assert tf.initializers.zeros()(shape=(2,)).numpy().tolist() == [0.0, 0.0]
    assert tf.initializers.zeros().get_config() == {}
    assert tf.initializers.GlorotUniform is tf.keras.initializers.GlorotUniform


def test_star_import_of_keras_brings_keras_3s_top_level_names():
    # keras_tuner and others do `from keras import *`: the lazy namespaces and classes come too, as in Keras 3
    ns: dict = {}
    exec("from tapeflow.keras import *", ns)
    for name in ("applications", "random", "layers", "ops", "tree", "Model", "Sequential", "Input", "Layer",
                 "KerasTensor", "InputSpec", "Loss", "Metric", "Optimizer", "Initializer", "Regularizer"):
        assert name in ns, name
    import tapeflow as tf

    assert ns["applications"] is tf.keras.applications and ns["Optimizer"] is tf.keras.optimizers.Optimizer
