"""TFRecord files, tf.train.Example and tf.io.parse_example: bytes and values pinned against TF 2.21
(the fixtures below were written by TF itself)."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

# tf.train.Example(b=[b"hi", b"there"], f=[1.5, -2.0], i=[3, -1, 2**40]).SerializeToString(deterministic=True)
EXAMPLE = (b"\nC\n\x12\n\x01b\x12\r\n\x0b\n\x02hi\n\x05there\n\x11\n\x01f\x12\x0c\x12\n\n\x08\x00\x00\xc0?\x00"
           b"\x00\x00\xc0\n\x1a\n\x01i\x12\x15\x1a\x13\n\x11\x03\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x80\x80"
           b"\x80\x80\x80 ")
# tf.io.TFRecordWriter: EXAMPLE, b"abc", b""
TFRECORD = (b"E\x00\x00\x00\x00\x00\x00\x00\xeb\xe6h\xb0" + EXAMPLE + b"\x92^n\xe2\x03\x00\x00\x00\x00\x00\x00\x00"
            b"\xb0\x99I\x0eabcnW\xf1!\x00\x00\x00\x00\x00\x00\x00\x00)\x03\x98\x07\xd8\xea\x82\xa2")
# the same writer with options "GZIP": b"zz", b"abc"
TFRECORD_GZ = (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03cb\x80\x80\nun\x93\xaa\xaa\x7f\xc7>\xfcb\x86\x8al\x98\xe9"
               b"\xc9\x97\x98\x94\x9c\x17\xfeQ\x11\x00.\xb3[d%\x00\x00\x00")


def _example():
    F = tf.train.Feature  # noqa: N806
    return tf.train.Example(features=tf.train.Features(feature={
        "b": F(bytes_list=tf.train.BytesList(value=[b"hi", b"there"])),
        "f": F(float_list=tf.train.FloatList(value=[1.5, -2.0])),
        "i": F(int64_list=tf.train.Int64List(value=[3, -1, 2**40])),
    }))


def test_example_messages_serialize_as_tf():
    pytest.importorskip("google.protobuf")
    ex = _example()
    assert ex.SerializeToString(deterministic=True) == EXAMPLE
    assert tf.train.Example.FromString(EXAMPLE) == ex
    assert repr(ex.features.feature["i"]) == "int64_list {\n  value: 3\n  value: -1\n  value: 1099511627776\n}\n"
    assert list(tf.train.Example.FromString(EXAMPLE).features.feature["f"].float_list.value) == [1.5, -2.0]
    assert tf.train.Feature(int64_list=tf.train.Int64List(value=[1])).SerializeToString() == b"\x1a\x03\n\x01\x01"


def test_tfrecord_writer_bytes_and_dataset_as_tf(tmp_path):
    path = str(tmp_path / "x.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        w.write(EXAMPLE)
        w.write(b"abc")
        w.write(tf.constant(b""))
    assert open(path, "rb").read() == TFRECORD
    ds = tf.data.TFRecordDataset([path])
    assert repr(ds) == "<TFRecordDatasetV2 element_spec=TensorSpec(shape=(), dtype=tf.string, name=None)>"
    assert list(ds.as_numpy_iterator()) == [EXAMPLE, b"abc", b""]
    gz = str(tmp_path / "x.tfrecord.gz")
    with tf.io.TFRecordWriter(gz, tf.io.TFRecordOptions(compression_type="GZIP")) as w:
        w.write(b"zz")
        w.write(b"abc")
    assert open(gz, "rb").read() == TFRECORD_GZ
    assert list(tf.data.TFRecordDataset(gz, compression_type="GZIP").as_numpy_iterator()) == [b"zz", b"abc"]
    (tmp_path / "bad.tfrecord").write_bytes(TFRECORD[:-3])
    with pytest.raises(tf.errors.DataLossError):
        list(tf.data.TFRecordDataset(str(tmp_path / "bad.tfrecord")))


SPEC = {"f": tf.io.FixedLenFeature([2], tf.float32), "b": tf.io.VarLenFeature(tf.string),
        "i": tf.io.FixedLenFeature([3], tf.int64), "missing": tf.io.FixedLenFeature([], tf.int64, default_value=7)}


def test_parse_single_example_and_parse_example():
    p = tf.io.parse_single_example(EXAMPLE, SPEC)
    assert list(p) == ["b", "f", "i", "missing"]
    assert p["f"].numpy().tolist() == [1.5, -2.0] and p["i"].numpy().tolist() == [3, -1, 1099511627776]
    assert int(p["missing"]) == 7 and p["missing"].dtype == tf.int64
    assert isinstance(p["b"], tf.SparseTensor) and p["b"].values.numpy().tolist() == [b"hi", b"there"]
    assert p["b"].indices.numpy().tolist() == [[0], [1]] and p["b"].dense_shape.numpy().tolist() == [2]
    pe = tf.io.parse_example([EXAMPLE, EXAMPLE], SPEC)
    assert pe["f"].shape == (2, 2) and pe["missing"].numpy().tolist() == [7, 7]
    assert pe["b"].indices.numpy().tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert pe["b"].dense_shape.numpy().tolist() == [2, 2]
    assert repr(tf.io.FixedLenFeature([2], tf.float32)) == (
        "FixedLenFeature(shape=[2], dtype=tf.float32, default_value=None)")
    assert repr(tf.io.VarLenFeature(tf.string)) == "VarLenFeature(dtype=tf.string)"


def test_parse_errors_as_tf():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Feature: z \(data type: int64\) is required but could not be found"):
        tf.io.parse_single_example(EXAMPLE, {"z": tf.io.FixedLenFeature([], tf.int64)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Some float_list slice was not parsed"):
        tf.io.parse_single_example(EXAMPLE, {"f": tf.io.FixedLenFeature([3], tf.float32)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Data type: float but expected type: int64"):
        tf.io.parse_single_example(EXAMPLE, {"f": tf.io.FixedLenFeature([2], tf.int64)})


def test_parse_example_inside_dataset_map_is_traced_with_its_spec(tmp_path):
    path = str(tmp_path / "x.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for _ in range(3):
            w.write(EXAMPLE)

    def parse(eg):
        ex = tf.io.parse_example(eg[tf.newaxis], {"i": tf.io.FixedLenFeature([3], tf.int64),
                                                  "b": tf.io.FixedLenFeature([2], tf.string)})
        return ex["i"][0], ex["b"][0]

    decoded = tf.data.TFRecordDataset(path).map(parse)
    assert repr(decoded.element_spec) == ("(TensorSpec(shape=(3,), dtype=tf.int64, name=None), "
                                          "TensorSpec(shape=(2,), dtype=tf.string, name=None))")
    i, b = next(iter(decoded.batch(10)))
    assert i.shape == (3, 3) and b.numpy()[0].tolist() == [b"hi", b"there"]
    np.testing.assert_array_equal(i.numpy()[:, 2], [2**40] * 3)


def test_map_traces_at_construction_so_type_errors_surface_there_as_tf():
    with pytest.raises(TypeError, match="Input 'serialized' of 'ParseExampleV2' Op has type int64"):
        tf.data.Dataset.range(3).map(lambda x: tf.io.parse_single_example(x, SPEC))


def test_ragged_feature_parse_example():
    def ex(colors, lengths):
        f = {}
        if colors is not None:
            f["colors"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=colors))
        f["lengths"] = tf.train.Feature(int64_list=tf.train.Int64List(value=lengths))
        return tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()

    batch = [ex([b"red", b"blue"], [7]), ex(None, []), ex([b"x"], [1, 3])]  # the second ends in a NUL byte
    spec = {"colors": tf.io.RaggedFeature(tf.string), "lengths": tf.io.RaggedFeature(tf.int64)}
    out = tf.io.parse_example(batch, spec)
    assert str(out["colors"]) == "<tf.RaggedTensor [[b'red', b'blue'], [], [b'x']]>"
    assert str(out["lengths"]) == "<tf.RaggedTensor [[7], [], [1, 3]]>"
    assert out["lengths"].row_splits.dtype == tf.int32
    one = tf.io.parse_single_example(batch[0], spec)
    assert repr(one["lengths"]) == "<tf.Tensor: shape=(1,), dtype=int64, numpy=array([7])>"
    assert repr(tf.io.RaggedFeature(tf.int64)) == ("RaggedFeature(dtype=tf.int64, value_key=None, partitions=(), "
                                                   "row_splits_dtype=tf.int32, validate=False)")
    out = tf.io.parse_example(batch, {"l": tf.io.RaggedFeature(tf.int64, value_key="lengths",
                                                                row_splits_dtype=tf.int64)})
    assert out["l"].to_list() == [[7], [], [1, 3]] and out["l"].row_splits.dtype == tf.int64
    assert tf.constant([b"a\x00", b"b"]).numpy().tolist() == [b"a\x00", b"b"]  # trailing NULs are kept, as TF


def test_parse_example_of_numbers_in_eager_is_tf_value_error():
    spec = {"a": tf.io.FixedLenFeature([], tf.int64)}
    with pytest.raises(ValueError, match="Tensor conversion requested dtype string for Tensor with dtype int64"):
        tf.io.parse_example(tf.constant([1, 2], tf.int64), spec)
    with pytest.raises(ValueError, match="requested dtype string for Tensor with dtype int32"):
        tf.io.parse_example([1, 2], spec)
