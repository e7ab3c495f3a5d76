"""``keras.Variable`` and ``keras.name_scope`` (values from Keras 3.15.1 with TF 2.21)."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras


def test_keras_variable_from_values_and_initializers():
    K.backend.clear_session()
    v = K.Variable([1.0, 2.0])
    assert repr(v) == "<Variable path=variable, shape=(2,), dtype=float32, value=[1. 2.]>"
    assert (v.name, v.path, v.trainable) == ("variable", "variable", True)
    assert repr(K.Variable(3)) == "<Variable path=variable_1, shape=(), dtype=int32, value=3>"
    assert repr(K.Variable(tf.constant([1.0, 2.0], tf.float64))).startswith("<Variable path=variable_2, shape=(2,), "
                                                                          "dtype=float64")
    ones = K.Variable(initializer="ones", shape=(2, 2), trainable=False)
    assert ones.numpy().tolist() == [[1.0, 1.0], [1.0, 1.0]] and not ones.trainable
    assert K.Variable(K.initializers.Constant(3.0), shape=(2,), dtype="float64").dtype == tf.float64
    with K.name_scope("blk"):
        w = K.Variable(1.0, name="w")
    assert (w.path, w.name) == ("blk/w", "w")
    with pytest.raises(ValueError, match="When creating a Variable from an initializer, the `shape` argument"):
        K.Variable("ones")
    with pytest.raises(ValueError) as e:
        K.Variable([1.0], name="a/b")
    assert str(e.value) == "Argument `name` must be a string and cannot contain character `/`. Received: name=a/b"
    v.assign(v * 2)
    assert v.numpy().tolist() == [2.0, 4.0] and (v + 1).numpy().tolist() == [3.0, 5.0]


def test_layer_weights_are_keras_variables_and_attributes_are_tracked():
    dense = K.layers.Dense(2)
    dense.build((None, 2))
    assert isinstance(dense.kernel, K.Variable) and not isinstance(tf.Variable(1.0), K.Variable)

    class L(K.layers.Layer):
        def __init__(self):
            super().__init__()
            self.v = tf.Variable(np.ones((2,), "float32"), name="tfv")  # not tracked, as Keras
            self.k = K.Variable(np.ones((2,), "float32"), name="kv", trainable=False)
            self.vs = [K.Variable(1.0, name="inlist")]

        def build(self, shape):
            self.w = self.add_weight(shape=(2,), name="w")

        def call(self, x):
            return x * self.v

    layer = L()
    layer(np.ones((1, 2), "float32"))
    assert [w.path for w in layer.weights] == ["inlist", "l/w", "kv"]  # trainable first, in tracking order
    assert (len(layer.trainable_weights), len(layer.non_trainable_weights)) == (2, 1)


def test_name_scope_at_build_time_checks_its_name_and_device_places_on_the_cpu():
    with K.name_scope("outer"):
        layer, later = K.layers.Dense(2, name="d"), K.layers.Dense(2, name="e")
        layer.build((None, 3))
        assert layer.kernel.path == "outer/d/kernel"
    later.build((None, 3))  # the scope at build time counts, as Keras
    assert later.kernel.path == "e/kernel"
    for bad in ("a/b", 3):
        with pytest.raises(ValueError, match="Argument `name` must be a string and cannot contain character `/`"):
            K.name_scope(bad)
    with K.device("cpu"):
        assert tf.constant(1.0).device == "/job:localhost/replica:0/task:0/device:CPU:0"
