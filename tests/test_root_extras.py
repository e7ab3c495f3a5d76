"""TF's remaining top-level names (tf.searchsorted, tf.control_dependencies, tf.ensure_shape, ...):
values and errors pinned from TF 2.21."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf


def test_array_extras_values():
    np.testing.assert_array_equal(tf.searchsorted([[1, 3, 5], [2, 4, 6]], [[3, 6], [1, 5]]), [[1, 3], [0, 2]])
    r = tf.searchsorted([1.0, 3.0, 5.0], [3.0, 4.0], side="right", out_type=tf.int64)
    assert r.dtype == tf.int64 and r.numpy().tolist() == [2, 2]
    u = tf.unique_with_counts([1, 1, 2, 4, 4, 4, 7, 8, 8])
    assert [u.y.numpy().tolist(), u.idx.numpy().tolist(), u.count.numpy().tolist()] == [
        [1, 2, 4, 7, 8], [0, 0, 1, 2, 2, 2, 3, 4, 4], [2, 1, 3, 1, 2]]
    assert tf.unique_with_counts(["a", "b", "a"], out_idx=tf.int64).count.dtype == tf.int64
    np.testing.assert_array_equal(tf.unravel_index([5, 7], [3, 4]), [[1, 1], [1, 3]])
    np.testing.assert_array_equal(tf.unravel_index(5, [3, 4]), [1, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="index is out of bound as with dims"):
        tf.unravel_index([12], [3, 4])
    np.testing.assert_array_equal(tf.reverse_sequence([[1, 2, 3, 4], [5, 6, 7, 8]], [2, 3], seq_axis=1, batch_axis=0),
                                  [[2, 1, 3, 4], [7, 6, 5, 8]])
    parts = tf.dynamic_partition([10, 20, 30, 40, 50], [0, 1, 0, 2, 1], 3)
    assert [p.numpy().tolist() for p in parts] == [[10, 30], [20, 50], [40]]
    np.testing.assert_array_equal(tf.dynamic_stitch([[0, 2], [1, 3]], [[10.0, 30.0], [20.0, 40.0]]), [10, 20, 30, 40])
    np.testing.assert_array_equal(tf.dynamic_stitch([tf.constant(1), [0, 2]], [tf.constant([7, 8]), [[1, 2], [3, 4]]]),
                                  [[1, 2], [7, 8], [3, 4]])
    v = [-1.0, 0.0, 1.5, 2.0, 5.0, 15.0]
    assert tf.histogram_fixed_width(v, [0.0, 5.0], nbins=5).numpy().tolist() == [2, 1, 1, 0, 2]
    assert tf.histogram_fixed_width_bins(v, [0.0, 5.0], nbins=5).numpy().tolist() == [0, 0, 1, 2, 4, 4]
    assert tf.truncatediv([-7, 7, -7], [5, -5, -5]).numpy().tolist() == [-1, -1, 1]
    assert tf.truncatediv([-7.5, 7.5], [2.0, 2.0]).numpy().tolist() == [-3.0, 3.0]
    assert tf.truncatemod([-7, 7, -7], [5, -5, -5]).numpy().tolist() == [-2, 2, -2]
    assert tf.truncatemod([-7.5, 7.5], [2.0, -2.0]).numpy().tolist() == [-1.5, 1.5]
    assert tf.broadcast_static_shape(tf.TensorShape([1, 3]), tf.TensorShape([2, 1])) == tf.TensorShape([2, 3])
    with pytest.raises(ValueError, match=r"Received: \(2, 3\) and \(4, 1\)"):
        tf.broadcast_static_shape(tf.TensorShape([2, 3]), tf.TensorShape([4, 1]))
    assert tf.broadcast_dynamic_shape([1, 3], [2, 1]).numpy().tolist() == [2, 3]
    assert tf.get_static_value(tf.constant([1, 2])).tolist() == [1, 2] and tf.get_static_value(3) == 3
    assert [x.numpy().tolist() for x in tf.shape_n([tf.ones((2, 3)), tf.ones(4)], out_type=tf.int64)] == [[2, 3], [4]]
    assert tf.timestamp().dtype == tf.float64


def test_gradients_of_partition_stitch_and_reverse_sequence():
    x = tf.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with tf.GradientTape(persistent=True) as t:
        a = tf.reduce_sum(tf.reverse_sequence(x, [2, 3], seq_axis=1, batch_axis=0) * [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        p = tf.dynamic_partition(x, [0, 1], 2)
        b = tf.reduce_sum(p[0] * 3.0) + tf.reduce_sum(p[1])
        s = tf.reduce_sum(tf.dynamic_stitch([[0, 1], [1]], [x, x[:1] * 2]) * [[1.0], [10.0]])
        d = tf.reduce_sum(tf.truncatediv(x, 2.0))
    np.testing.assert_array_equal(t.gradient(a, x), [[2, 1, 3], [6, 5, 4]])
    np.testing.assert_array_equal(t.gradient(b, x), [[3, 3, 3], [1, 1, 1]])
    np.testing.assert_array_equal(t.gradient(s, x), [[21, 21, 21], [10, 10, 10]])
    assert t.gradient(d, x) is None  # TF: TruncateDiv has None gradients


def test_ensure_shape_eager_and_traced():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Shape of tensor input \[2,3\] is not compatible with expected shape \[2,4\]"):
        tf.ensure_shape(tf.ones((2, 3)), [2, 4])
    seen = []

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def f(x):
        y = tf.ensure_shape(x, [2, None])
        seen.append(y.shape.as_list())
        return y

    assert f(tf.ones((2, 5))).shape == (2, 5) and seen == [[2, None]]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"not compatible with expected shape \[2,\?\]"):
        f(tf.ones((3,)))

    @tf.function
    def g(x):
        return tf.ensure_shape(x, [None, 3])

    with pytest.raises(ValueError, match="Dimension 1 in both shapes must be equal, but are 3 and 4"):
        g(tf.ones((2, 4)))


def test_control_dependencies_group_no_op_tuple():
    assert tf.no_op() is None and tf.group(tf.constant(1)) is None
    assert [x.numpy() for x in tf.tuple([tf.constant(1), tf.constant(2.0)])] == [1, 2.0]
    v = tf.Variable(1.0)
    kinds = []

    @tf.function
    def step(x):
        with tf.control_dependencies([v.assign_add(1.0)]):
            y = tf.identity(x)
        g = tf.group(v.assign_add(10.0), v.assign_add(100.0))
        kinds.append((type(g).__name__, g.type, type(tf.no_op()).__name__))
        with tf.control_dependencies([g]):
            return y + v.read_value()

    assert float(step(tf.constant(1.0))) == 113.0 and kinds == [("Operation", "NoOp", "Operation")]
    with tf.control_dependencies([v.assign(0.0)]):
        assert float(v.read_value()) == 0.0
    assert not tf.inside_function() and bool(tf.function(lambda: tf.constant(tf.inside_function()))())
    assert not tf.is_symbolic_tensor(tf.constant(1))
    with tf.name_scope("outer"), tf.name_scope("inner"):
        assert tf.get_current_name_scope() == "outer/inner"
    assert tf.get_current_name_scope() == ""
    tf.get_logger().setLevel("ERROR")
    tf.get_logger().setLevel("NOTSET")
    assert tf.assert_equal(1, 1) is None and tf.Assert(True, [1]) is None
    with pytest.raises(tf.errors.InvalidArgumentError, match="Condition x < y did not hold"):
        tf.assert_less(2, 1)
    assert tf.as_string([1.5]).numpy().tolist() == [b"1.500000"]
    assert tf.AggregationMethod.ADD_N == tf.AggregationMethod.DEFAULT == 0
