"""tf.Variable behaviour, pinned against TensorFlow 2.21."""

import numpy as np
import pytest

import tapeflow as tf


def test_creation_and_properties():
    v = tf.Variable([1.0, 2.0])
    assert v.dtype == tf.float32 and v.shape == (2,) and v.trainable and v.name == "Variable:0"
    assert repr(v) == "<tf.Variable 'Variable:0' shape=(2,) dtype=float32, numpy=array([1., 2.], dtype=float32)>"
    assert repr(tf.Variable(1.0, name="w")) == "<tf.Variable 'w:0' shape=() dtype=float32, numpy=1.0>"
    assert tf.Variable(lambda: tf.ones([2])).shape == (2,)
    assert tf.Variable(np.zeros(3)).dtype == tf.float64
    assert tf.Variable(1, dtype=tf.float32).dtype == tf.float32
    assert not tf.Variable(1.0, trainable=False).trainable
    with pytest.raises(ValueError):
        tf.Variable(None)


def test_assign_ops_and_values():
    v = tf.Variable([1.0, 2.0])
    # TF 2.21: an eager assign returns an _UnreadVariable, the same variable printed as 'UnreadVariable'
    unread = v.assign([3.0, 4.0])
    assert unread is not v and isinstance(unread, tf.Variable)
    assert repr(unread) == ("<tf.Variable 'UnreadVariable' shape=(2,) dtype=float32, "
                            "numpy=array([3., 4.], dtype=float32)>")
    unread.assign_add([1.0, 1.0])
    assert v.numpy().tolist() == [4.0, 5.0]
    v.assign_sub([1.0, 1.0])
    assert v.assign_add([1.0, 1.0]).numpy().tolist() == [4.0, 5.0]
    assert v.assign_sub([1.0, 1.0]).numpy().tolist() == [3.0, 4.0]
    assert v.read_value().numpy().tolist() == [3.0, 4.0]
    assert v.value().numpy().tolist() == [3.0, 4.0]
    assert (v + 1).numpy().tolist() == [4.0, 5.0]
    assert (v * v).numpy().tolist() == [9.0, 16.0]
    assert v[0].numpy() == 3.0
    assert np.asarray(v).tolist() == [3.0, 4.0]
    assert tf.convert_to_tensor(v).numpy().tolist() == [3.0, 4.0]


def test_bad_assign_raises_and_leaves_variable_unchanged():
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match="Shape mismatch"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="requested dtype float32"):
        v.assign(tf.constant([1.0, 2.0], tf.float64))
    with pytest.raises(ValueError, match="Shape mismatch"):
        v.assign_add([1.0, 2.0, 3.0])
    iv = tf.Variable([1, 2])
    with pytest.raises(TypeError, match="Cannot convert"):
        iv.assign([1.5, 2.0])
    assert v.numpy().tolist() == [1.0, 2.0]
    assert iv.numpy().tolist() == [1, 2]


def test_saved_values_survive_later_assignments():
    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as t:
        y = v * v
        v.assign([10.0, 20.0])
    assert t.gradient(y, v).numpy().tolist() == [2.0, 4.0]


def test_unknown_shape_variable_accepts_new_shapes():
    v = tf.Variable([1.0], shape=tf.TensorShape(None))
    v.assign([1.0, 2.0, 3.0])
    assert v.numpy().tolist() == [1.0, 2.0, 3.0]


def test_variables_are_unhashable_with_ref():
    v = tf.Variable(1.0)
    with pytest.raises(TypeError, match="Variable is unhashable"):
        hash(v)
    assert {v.ref(): 1}[v.ref()] == 1


def test_sparse_scatter_updates():
    v = tf.Variable(np.zeros((4, 2), np.float32))
    v.scatter_add(tf.IndexedSlices(tf.ones([3, 2]), tf.constant([0, 2, 0]), tf.constant([4, 2])))
    assert v.numpy()[:, 0].tolist() == [2.0, 0.0, 1.0, 0.0]
    v.scatter_sub(tf.IndexedSlices(tf.ones([1, 2]), tf.constant([2])))
    assert v.numpy()[2].tolist() == [0.0, 0.0]


def test_in_place_updates_never_change_values_others_hold():
    v = tf.Variable(np.ones(3, np.float32))
    v.assign_sub(np.ones(3, np.float32))
    snapshot = v.value()  # a tensor sharing the array
    held = v.numpy()
    v.assign_add(np.full(3, 5.0, np.float32))
    assert snapshot.numpy().tolist() == [0.0, 0.0, 0.0]
    assert held.tolist() == [0.0, 0.0, 0.0]
    assert v.numpy().tolist() == [5.0, 5.0, 5.0]
    assert v.initial_value.numpy().tolist() == [1.0, 1.0, 1.0]
    del snapshot, held
    before = id(v._value)
    v.assign_sub(np.ones(3, np.float32))  # now solely owned: updated in place
    assert id(v._value) == before and v.numpy().tolist() == [4.0, 4.0, 4.0]


def test_a_slice_of_a_variable_assigns_into_the_variable_as_tf():
    # TF 2.21: v[key] is a tensor with .assign (ResourceStridedSliceAssign) returning the variable; plain tensors'
    # slices have none; eager, in tf.function and under a tape alike
    v = tf.Variable([[1., 2.], [3., 4.]])
    r = v[0, 1].assign(9.0)
    assert r.numpy().tolist() == [[1.0, 9.0], [3.0, 4.0]] and "UnreadVariable" in repr(r)
    v[1].assign([5., 6.])
    assert v[0:1, ::-1].assign([[7., 8.]]).numpy().tolist() == [[8.0, 7.0], [5.0, 6.0]]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Cannot broadcast input shape \[3\] into final shape"):
        v[0].assign([1., 2., 3.])
    assert v.numpy().tolist() == [[8.0, 7.0], [5.0, 6.0]]
    assert not hasattr(tf.constant([1., 2.])[0], "assign")

    @tf.function
    def g():
        v[0, 0].assign(100.)
        v[:, 1].assign(tf.constant([-1., -2.]))
        return v.read_value()

    assert g().numpy().tolist() == [[100.0, -1.0], [5.0, -2.0]]
    with tf.GradientTape() as t:
        y = tf.reduce_sum(v[0] * 3.0)
    assert t.gradient(y, v).numpy().tolist() == [[3.0, 3.0], [0.0, 0.0]]
    assert v[..., 0].assign(0.).numpy().tolist() == [[0.0, -1.0], [0.0, -2.0]]
    assert v[:, tf.newaxis, 1].assign([[5.], [6.]]).numpy().tolist() == [[0.0, 5.0], [0.0, 6.0]]
    assert type(v[0]).__name__ == type(tf.constant(1.0)).__name__  # the slice still prints as a tensor
