"""tf.Module and tf.name_scope (collection order and names pinned against TF 2.21)."""

import pytest

import tapeflow as tf


class Dense(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        with self.name_scope:
            self.w = tf.Variable(1.0, name="w")
            self.b = tf.Variable(2.0, name="b", trainable=False)


class Outer(tf.Module):
    def __init__(self):
        super().__init__()
        self.z = [Dense(name="d1"), {"b": Dense(), "a": tf.Variable(3.0)}]
        self.a = tf.Variable(0.0)


def test_collection_order_and_names_match_tf():
    m = Outer()
    # TF 2.21: own attributes sorted by name (lists in order, dicts by key), then submodules depth first
    assert [float(v.numpy()) for v in m.variables] == [0.0, 3.0, 2.0, 1.0, 2.0, 1.0]
    assert [v.name for v in m.variables] == ["Variable:0", "Variable:0", "d1/b:0", "d1/w:0", "dense/b:0", "dense/w:0"]
    assert [v.name for v in m.trainable_variables] == ["Variable:0", "Variable:0", "d1/w:0", "dense/w:0"]
    assert [s.name for s in m.submodules] == ["d1", "dense"]
    assert m.name == "outer"


def test_shared_variables_and_cycles_are_collected_once():
    a = Dense(name="a")
    holder = tf.Module()
    holder.x, holder.y = a, a
    holder.v = [a.w, a.w]
    holder.me = holder  # a cycle
    assert len(holder.variables) == 2 and len(holder.submodules) == 1


def test_invalid_module_name_raises():
    with pytest.raises(ValueError, match="valid Python identifiers"):
        tf.Module(name="not valid")


def test_name_scope_prefixes_variables_and_nests():
    with tf.name_scope("outer") as scope:
        assert scope == "outer/"
        with tf.name_scope("inner"):
            v = tf.Variable(1.0, name="v")
    assert v.name == "outer/inner/v:0"
    assert tf.Variable(1.0, name="u").name == "u:0"


def test_with_name_scope_decorator():
    class M(tf.Module):
        @tf.Module.with_name_scope
        def make(self):
            return tf.Variable(1.0, name="k")

    assert M(name="blk").make().name == "blk/k:0"


def test_module_gradients_through_trainable_variables():
    d = Dense(name="g")
    with tf.GradientTape() as tape:
        y = d.w * d.b * 3.0
    (g,) = tape.gradient(y, d.trainable_variables)
    assert float(g) == 6.0


def test_trackable_children_for_checkpoints():
    m = Outer()
    kids = m._trackable_children()
    assert set(kids) == {"a", "z"}
