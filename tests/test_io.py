"""tf.io: read_file/write_file, serialize_tensor/parse_tensor and tf.io.gfile, as TensorFlow 2.21."""

from __future__ import annotations

import os

import numpy as np
import pytest

import tapeflow as tf


def test_write_then_read_file(tmp_path):
    p = str(tmp_path / "sub" / "a.txt")
    assert tf.io.write_file(p, "hi there") is None
    r = tf.io.read_file(p)
    assert r.dtype == tf.string and r.shape == () and r.numpy() == b"hi there"
    with pytest.raises(tf.errors.NotFoundError, match=r"nope; No such file or directory \[Op:ReadFile\]"):
        tf.io.read_file(str(tmp_path / "nope"))


@pytest.mark.parametrize("value", [
    np.array([[1.0, 2.0]], np.float32), np.array([[1, 2], [3, 4]], np.int64), np.zeros((0, 3), np.float16),
    np.array(True), np.array([1 + 2j], np.complex64), np.array([b"a", "bé".encode(), b""], object),
    np.arange(6, dtype=np.uint8).reshape(1, 2, 3),
])
def test_serialize_parse_round_trip_exact(value):
    t = tf.constant(value)
    s = tf.io.serialize_tensor(t)
    assert s.dtype == tf.string and s.shape == ()
    r = tf.io.parse_tensor(s, t.dtype)
    assert r.dtype == t.dtype and r.shape == t.shape
    np.testing.assert_array_equal(r.numpy(), t.numpy())


def test_parse_tensor_type_mismatch_and_garbage():
    s = tf.io.serialize_tensor(tf.constant([[1.0, 2.0]]))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Type mismatch between parsed tensor \(float\) and dtype \(int32\)"):
        tf.io.parse_tensor(s, tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="ParseTensor"):
        tf.io.parse_tensor(b"garbage", tf.float32)


def test_file_ops_inside_tf_function(tmp_path):
    path = str(tmp_path / "t.bin")

    @tf.function
    def save_load(t):
        tf.io.write_file(path, tf.io.serialize_tensor(t))
        return tf.io.parse_tensor(tf.io.read_file(path), tf.int64)

    out = save_load(tf.constant([[1, 2], [3, 4]], tf.int64))
    assert out.numpy().tolist() == [[1, 2], [3, 4]]
    out = save_load(tf.constant([[5, 6], [7, 8]], tf.int64))  # stateful: runs again at each call
    assert out.numpy().tolist() == [[5, 6], [7, 8]]


def test_gfile_basics(tmp_path):
    g = tf.io.gfile
    d = str(tmp_path)
    p = os.path.join(d, "a.txt")
    with g.GFile(p, "w") as f:
        f.write("abc")
    with g.GFile(p) as f:
        assert f.read() == "abc"
    with g.GFile(p, "rb") as f:
        assert f.read() == b"abc"
    assert g.exists(p) and not g.exists(p + "x") and g.isdir(d)
    g.makedirs(os.path.join(d, "x", "y"))
    assert sorted(g.listdir(d)) == ["a.txt", "x"]
    assert g.glob(os.path.join(d, "*.txt")) == [p]
    assert g.stat(p).length == 3
    with pytest.raises(tf.errors.NotFoundError, match="a.txtx; No such file or directory"):
        g.remove(p + "x")
    with pytest.raises(tf.errors.NotFoundError, match="Could not find directory"):
        g.listdir(p + "x")
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        g.GFile(p + "x").read()
    g.rmtree(os.path.join(d, "x"))
    assert g.listdir(d) == ["a.txt"]
    g.remove(p)
    assert not g.exists(p)


def test_unbuilt_io_features_raise_not_implemented():
    with pytest.raises(NotImplementedError, match="tf.io.TFRecordWriter"):
        tf.io.TFRecordWriter
