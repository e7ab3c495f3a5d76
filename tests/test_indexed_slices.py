"""tf.IndexedSlices: sparse gradients of gathers, their aggregation on the
tape, densification, and sparse variable updates. Expected values were
printed by TensorFlow 2.21."""

import sys

import numpy as np
import pytest

import tapeflow as tf


def _table():
    return tf.Variable(tf.reshape(tf.range(12.0), (4, 3)))


def test_gather_gradient_is_indexed_slices_with_repeats():
    x = tf.constant(np.arange(12.0).reshape(4, 3))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.gather(x, [1, 1, 3]))
    g = tape.gradient(y, x)
    assert isinstance(g, tf.IndexedSlices)
    np.testing.assert_array_equal(g.indices.numpy(), [1, 1, 3])
    np.testing.assert_array_equal(g.dense_shape.numpy(), [4, 3])
    assert g.dense_shape.dtype == tf.int32 and g.indices.dtype == tf.int32
    assert g.shape == (4, 3) and g.dtype == tf.float64
    np.testing.assert_array_equal(tf.convert_to_tensor(g).numpy(), [[0, 0, 0], [2, 2, 2], [0, 0, 0], [1, 1, 1]])


def test_two_gathers_concatenate_in_forward_order():
    table = _table()
    with tf.GradientTape() as tape:
        a = tf.gather(table, [0, 2])
        c = tf.gather(table, [1])
        y = tf.reduce_sum(a) + 2 * tf.reduce_sum(c)
    g = tape.gradient(y, table)
    assert isinstance(g, tf.IndexedSlices)
    np.testing.assert_array_equal(g.indices.numpy(), [0, 2, 1])  # TF's order
    np.testing.assert_array_equal(g.values.numpy(), [[1, 1, 1], [1, 1, 1], [2, 2, 2]])
    np.testing.assert_array_equal(tf.convert_to_tensor(g).numpy(), [[1, 1, 1], [2, 2, 2], [1, 1, 1], [0, 0, 0]])


def test_mixed_index_dtypes_aggregate_as_int64():
    table = _table()
    with tf.GradientTape() as tape:
        a = tf.gather(table, [0, 2])
        b = tf.gather(table, tf.constant([2, 3], tf.int64))
        y = tf.reduce_sum(a) + tf.reduce_sum(b * b)
    g = tape.gradient(y, table)
    assert g.indices.dtype == tf.int64
    np.testing.assert_array_equal(g.indices.numpy(), [0, 2, 2, 3])
    np.testing.assert_array_equal(g.values.numpy(), [[1, 1, 1], [1, 1, 1], [12, 14, 16], [18, 20, 22]])


def test_gather_plus_dense_use_gives_dense_sum():
    table = _table()
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.gather(table, [0, 2])) + tf.reduce_sum(table * table)
    g = tape.gradient(y, table)
    assert isinstance(g, tf.Tensor)
    np.testing.assert_array_equal(g.numpy(), [[1, 3, 5], [6, 8, 10], [13, 15, 17], [18, 20, 22]])


def test_sparse_passes_identity_but_not_other_ops():
    table = _table()
    with tf.GradientTape(persistent=True) as tape:
        y_id = tf.reduce_sum(tf.gather(tf.identity(table), [0]))
        y_mul = tf.reduce_sum(tf.gather(table * 1.0, [0]))
        y_axis1 = tf.reduce_sum(tf.gather(table, [0], axis=1))
    assert isinstance(tape.gradient(y_id, table), tf.IndexedSlices)
    assert isinstance(tape.gradient(y_mul, table), tf.Tensor)
    assert isinstance(tape.gradient(y_axis1, table), tf.Tensor)


def test_convert_and_segment_sum_densify_alike():
    s = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([1, 1]), tf.constant([3, 2]))
    dense = tf.convert_to_tensor(s)
    np.testing.assert_array_equal(dense.numpy(), [[0, 0], [4, 6], [0, 0]])
    np.testing.assert_array_equal(tf.math.unsorted_segment_sum(s.values, s.indices, 3).numpy(), dense.numpy())
    assert float(tf.reduce_sum(s)) == 10.0  # ops densify their IndexedSlices inputs
    np.testing.assert_array_equal(tf.add(s, 1.0).numpy(), [[1, 1], [5, 7], [1, 1]])


def test_negation_and_unsupported_arithmetic():
    s = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]), tf.constant([3, 2]))
    n = -s
    assert isinstance(n, tf.IndexedSlices)
    np.testing.assert_array_equal(n.values.numpy(), [[-1.0, -2.0]])
    with pytest.raises(TypeError):
        s * 2  # noqa: B018 - TF has no IndexedSlices.__mul__ either


def test_missing_dense_shape_cannot_densify():
    s = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]))
    with pytest.raises(ValueError, match="without dense_shape"):
        tf.convert_to_tensor(s)


def test_second_order_through_a_sparse_gradient():
    x = tf.constant(np.arange(6.0).reshape(3, 2))
    w = tf.constant(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.reduce_sum(tf.gather(x, [0, 2, 2]) ** 3)
        g = inner.gradient(y, x)
        assert isinstance(g, tf.IndexedSlices)
        z = tf.reduce_sum(tf.convert_to_tensor(g) * w)
    h = outer.gradient(z, x)
    # d/dx sum_w(3 x^2 * count) = 6 x * count * w
    counts = np.array([[1.0], [0.0], [2.0]])
    np.testing.assert_allclose(tf.convert_to_tensor(h).numpy(), 6 * x.numpy() * counts * w.numpy())


def test_scatter_sub_with_indexed_slices_applies_sgd_step():
    table = _table()
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.gather(table, [1, 1, 3]))
    g = tape.gradient(y, table)
    table.scatter_sub(tf.IndexedSlices(g.values * 0.5, g.indices, g.dense_shape))
    np.testing.assert_array_equal(table.numpy(), [[0, 1, 2], [2, 3, 4], [6, 7, 8], [8.5, 9.5, 10.5]])
    table.scatter_add(tf.IndexedSlices(tf.ones((1, 3)), tf.constant([0])))
    np.testing.assert_array_equal(table.numpy()[0], [1, 2, 3])


def test_scatter_keeps_earlier_reads_and_updates_in_place_otherwise():
    v = tf.Variable(np.zeros((5, 2)))
    read = v.value()
    v.scatter_add(tf.IndexedSlices(tf.constant(np.ones((1, 2))), tf.constant([1])))
    np.testing.assert_array_equal(read.numpy()[1], [0.0, 0.0])  # the read is a snapshot
    del read
    before = id(v._value)
    v.scatter_add(tf.IndexedSlices(tf.constant(np.ones((1, 2))), tf.constant([1])))
    assert id(v._value) == before  # nothing else holds it: O(rows) in-place update
    assert sys.getrefcount(v._value) >= 2
    np.testing.assert_array_equal(v.numpy()[1], [2.0, 2.0])


def test_scatter_index_out_of_range():
    v = tf.Variable(np.zeros((3, 2)))
    with pytest.raises(tf.errors.InvalidArgumentError):
        v.scatter_sub(tf.IndexedSlices(tf.constant(np.ones((1, 2))), tf.constant([3])))
    np.testing.assert_array_equal(v.numpy(), np.zeros((3, 2)))
