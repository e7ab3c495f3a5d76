"""tf.shape of a RaggedTensor: tf.experimental.DynamicRaggedShape and RowPartition (as TF 2.21 prints them)."""

import pytest

import tapeflow as tf


def test_shape_of_ragged_and_its_uses():
    rt = tf.ragged.constant([[1], [2, 3, 4], [], [5, 6]])
    s = tf.shape(rt)
    assert repr(s) == str(s) == "<DynamicRaggedShape lengths=[4, (1, 3, 0, 2)] num_row_partitions=1>"
    assert s.dtype == tf.int32 and s.rank == 2 and s.num_row_partitions == 1
    assert s.inner_shape.numpy().tolist() == [6]
    assert repr(s.row_partitions) == "(tf.RowPartition(row_splits=[0 1 4 4 6]),)"
    assert str(s[0]) == "tf.Tensor(4, shape=(), dtype=int32)"
    assert repr(s[:1]) == "<DynamicRaggedShape lengths=[4] num_row_partitions=0>"
    with pytest.raises(ValueError, match="Index 1 is not uniform"):
        s[1]
    x = tf.constant(["a", "b", "c", "d", "e", "f"])
    assert str(tf.reshape(x, s)) == "<tf.RaggedTensor [[b'a'], [b'b', b'c', b'd'], [], [b'e', b'f']]>"
    assert str(tf.zeros(s)) == "<tf.RaggedTensor [[0.0], [0.0, 0.0, 0.0], [], [0.0, 0.0]]>"
    assert str(tf.ones(s, tf.int32)) == "<tf.RaggedTensor [[1], [1, 1, 1], [], [1, 1]]>"
    assert str(tf.fill(s, "x")) == "<tf.RaggedTensor [[b'x'], [b'x', b'x', b'x'], [], [b'x', b'x']]>"
    assert str(tf.shape(rt, out_type=tf.int64)[0]) == "tf.Tensor(4, shape=(), dtype=int64)"
    nested = tf.shape(tf.ragged.constant([[[1, 2], [3]], [[4]]]))
    assert repr(nested) == "<DynamicRaggedShape lengths=[2, (2, 1), (2, 1, 1)] num_row_partitions=2>"
    inner = tf.shape(tf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1))
    assert repr(inner) == "<DynamicRaggedShape lengths=[2, (1, 2), 2] num_row_partitions=1>"


def test_constructors():
    d = tf.experimental.DynamicRaggedShape(
        row_partitions=[tf.experimental.RowPartition.from_row_lengths([5, 3, 2])], inner_shape=[10, 8])
    assert repr(d) == "<DynamicRaggedShape lengths=[3, (5, 3, 2), 8] num_row_partitions=1>"
    assert d.dtype == tf.int64 and str(d[2]) == "tf.Tensor(8, shape=(), dtype=int64)" and d.rank == 3
    assert d.static_lengths() == [3, (5, 3, 2), 8]
    e = tf.experimental.DynamicRaggedShape.from_lengths([4, (2, 1, 0, 8), 12])
    assert repr(e) == "<DynamicRaggedShape lengths=[4, (2, 1, 0, 8), 12] num_row_partitions=1>"
    assert e.inner_shape.numpy().tolist() == [11, 12] and e.dtype == tf.int64
    assert tf.zeros(e).shape.as_list() == [4, None, 12]
    assert repr(tf.experimental.RowPartition.from_row_lengths([5, 3, 2])) == "tf.RowPartition(row_splits=[ 0  5  8 10])"
    assert str(tf.shape(tf.zeros([2, 3]))) == "tf.Tensor([2 3], shape=(2,), dtype=int32)"
    with pytest.raises(NotImplementedError, match="tf.experimental.dlpack"):
        tf.experimental.dlpack
