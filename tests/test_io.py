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


# TF 2.21's serialize_tensor bytes (TensorProto, AsProtoTensorContent) and make_tensor_proto's
_TF_BYTES = [
    (np.float32(1.5), "0801120022040000c03f"), (np.array([1, 2], np.int32), "080312041202080222080100000002000000"),
    (np.array([[True, False]]), "080a1208120208011202080222020100"),
    (np.array([b"ab", b""], object), "0807120412020802420261624200"), (np.array(b"x", object), "08071200420178"),
    (np.zeros((0, 3), np.float32), "08011206120012020803"), (np.array([1.5], np.float16), "08131204120208012202003e"),
    (np.array([1 + 2j], np.complex64), "080812041202080122080000803f00000040"),
    (np.array([-1], np.int64), "08091204120208012208ffffffffffffffff"),
]


@pytest.mark.parametrize("value,hexbytes", _TF_BYTES)
def test_serialize_tensor_writes_tfs_tensor_proto_bytes(value, hexbytes):
    t = tf.constant(value)
    assert tf.io.serialize_tensor(t).numpy().hex() == hexbytes
    back = tf.io.parse_tensor(bytes.fromhex(hexbytes), t.dtype)
    assert back.shape == t.shape
    np.testing.assert_array_equal(back.numpy(), t.numpy())


def test_parse_tensor_reads_typed_value_fields_and_tfs_errors():
    # make_tensor_proto's *_val forms (a scalar, a value filling a shape) parse as in TF
    assert tf.io.parse_tensor(bytes.fromhex("080312003a0103"), tf.int32).numpy() == 3
    np.testing.assert_array_equal(tf.io.parse_tensor(bytes.fromhex("08011204120208032a040000c03f"),
                                                     tf.float32).numpy(), [1.5, 1.5, 1.5])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Could not parse `serialized` as TensorProto, "
                       r"base64: Z2FyYmFnZQ== \[Op:ParseTensor\]"):
        tf.io.parse_tensor(b"garbage", tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"parsed tensor \(float\) and dtype \(double\)"):
        tf.io.parse_tensor(tf.io.serialize_tensor(tf.constant([1.0])), tf.float64)


def test_make_tensor_proto_and_make_ndarray_as_tf():
    pytest.importorskip("google.protobuf")
    p = tf.make_tensor_proto([1.0, 2.0])
    assert type(p).__name__ == "TensorProto" and p.DESCRIPTOR.full_name == "tensorflow.TensorProto"
    assert str(p) == ('dtype: DT_FLOAT\ntensor_shape {\n  dim {\n    size: 2\n  }\n}\n'
                      'tensor_content: "\\000\\000\\200?\\000\\000\\000@"\n')
    cases = [((3,), {}, "080312003a0103"), (("s",), {}, "08071200420173"),
             (([[1, 2]],), {"dtype": tf.float32, "shape": [2, 1]}, "08011208120208021202080122080000803f00000040"),
             ((np.float32(2.0),), {}, "080112002a0400000040"), ((True,), {}, "080a12005a0101"),
             ((1.5,), {"shape": [3]}, "08011204120208032a040000c03f"),
             ((np.array([1, 2], np.int64),), {}, "0809120412020802221001000000000000000200000000000000"),
             ((np.float16(1.5),), {}, "081312006a02807c"),
             (([1 + 2j],), {}, "08121204120208016210000000000000f03f0000000000000040"),
             ((["a", "bc"],), {}, "080712041202080242016142026263"), (([],), {}, "080112021200"),
             ((np.uint8(3),), {}, "080412003a0103"), ((2**40,), {}, "080912005206808080808020")]
    for args, kw, hexbytes in cases:
        proto = tf.make_tensor_proto(*args, **kw)
        assert proto.SerializeToString().hex() == hexbytes, (args, kw)
        np.testing.assert_array_equal(tf.make_ndarray(proto), tf.io.parse_tensor(
            bytes.fromhex(hexbytes), tf.as_dtype(tf.make_ndarray(proto).dtype)).numpy())
    np.testing.assert_array_equal(tf.make_ndarray(tf.make_tensor_proto(tf.constant([[1, 2], [3, 4]]))),
                                  [[1, 2], [3, 4]])


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
    with pytest.raises(NotImplementedError, match="tf.io.parse_sequence_example"):
        tf.io.parse_sequence_example


def test_decode_csv_types_defaults_quotes_and_errors():
    a, b, c = tf.io.decode_csv(["1,2.5,a", '3,,"b,c"'], record_defaults=[[0], [1.0], ["x"]])
    assert a.dtype == tf.int32 and a.numpy().tolist() == [1, 3]
    assert b.dtype == tf.float32 and b.numpy().tolist() == [2.5, 1.0]
    assert c.dtype == tf.string and c.numpy().tolist() == [b"a", b"b,c"]
    x, y = tf.io.decode_csv("4;5", record_defaults=[tf.constant([], tf.int64), [0.0]], field_delim=";")
    assert x.dtype == tf.int64 and x.shape == () and int(x) == 4 and float(y) == 5.0
    x, y = tf.io.decode_csv(["1,2,3"], record_defaults=[[0], [0]], select_cols=[0, 2])
    assert x.numpy().tolist() == [1] and y.numpy().tolist() == [3]
    assert tf.io.decode_csv(["NA,2"], record_defaults=[[0], [0]], na_value="NA")[0].numpy().tolist() == [0]
    x, _ = tf.io.decode_csv([["1,2"], ["3,4"]], record_defaults=[[0], [0]])
    assert x.shape == (2, 1) and x.numpy().tolist() == [[1], [3]]
    assert tf.io.decode_csv(['a"b,c'], record_defaults=[[""], [""]], use_quote_delim=False)[0].numpy() == [b'a"b']
    assert tf.io.decode_csv(['" x ",1'], record_defaults=[[""], [0]])[0].numpy() == [b" x "]
    assert tf.io.decode_csv(["1.5,1e2"], record_defaults=[[0.0], [tf.constant(0, tf.float64)]])[1].dtype == tf.float64
    for recs, defaults, msg in [
        (["1"], [[0], [0]], "Expect 2 fields but have 1 in record 0"),
        ([","], [tf.constant([], tf.int32), [0]], "Field 0 is required but missing in record 0!"),
        (["x"], [[0]], "Field 0 in record 0 is not a valid int32: x"),
    ]:
        with pytest.raises(tf.errors.InvalidArgumentError, match=msg):
            tf.io.decode_csv(recs, record_defaults=defaults)


def test_decode_csv_inside_tf_function():
    @tf.function
    def parse(lines):
        return tf.io.decode_csv(lines, [[0], [""]])

    n, s = parse(tf.constant(["1,a", "2,b"]))
    assert n.numpy().tolist() == [1, 2] and s.numpy().tolist() == [b"a", b"b"]


def test_decode_raw_as_tf():
    # values pinned from TF 2.21
    out = tf.io.decode_raw(tf.constant("Duck"), tf.uint8)
    assert out.dtype == tf.uint8 and out.numpy().tolist() == [68, 117, 99, 107]
    assert tf.io.decode_raw(tf.constant(["Duck", "abcd"]), tf.int16).numpy().tolist() == [[30020, 27491],
                                                                                         [25185, 25699]]
    big = tf.io.decode_raw(tf.constant(["Duck", "abcd"]), tf.int16, little_endian=False)
    assert big.numpy().tolist() == [[17525, 25451], [24930, 25444]]
    assert tf.io.decode_raw(tf.constant([["Du", "ab"]]), tf.uint8).shape == (1, 2, 2)
    padded = tf.io.decode_raw(tf.constant(["Duck", "ab"]), tf.uint8, fixed_length=3)
    assert padded.numpy().tolist() == [[68, 117, 99], [97, 98, 0]]
    assert tf.io.decode_raw(["Duck", "ab"], tf.int16, fixed_length=4).numpy().tolist() == [[30020, 27491],
                                                                                           [25185, 0]]
    assert tf.io.decode_raw(tf.constant([], tf.string), tf.float32).shape == (0, 0)
    np.testing.assert_array_equal(tf.io.decode_raw(np.float32([1.5, -2]).tobytes(), tf.float32), [1.5, -2])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"^DecodeRaw requires input strings to all be the "
                       r"same size, but element 1 has size 4 != 2 \[Op:DecodeRaw\]$"):
        tf.io.decode_raw(tf.constant(["Duck", "ab"]), tf.uint8)
    with pytest.raises(tf.errors.InvalidArgumentError, match="length 3 that is not a multiple of 2, the size of int16"):
        tf.io.decode_raw(tf.constant("Duc"), tf.int16)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"fixed_length \(3\) must be a multiple of the size "
                       r"of out_type \(2\) \[Op:DecodePaddedRaw\]"):
        tf.io.decode_raw(tf.constant(["Duck"]), tf.int16, fixed_length=3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="'out_type' of string is not in the list"):
        tf.io.decode_raw(tf.constant("Duck"), tf.string)
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected to be a string tensor but is a float tensor"):
        tf.io.decode_raw(tf.constant([1.0]), tf.uint8)

    @tf.function
    def f(x):
        return tf.io.decode_raw(x, tf.int16)

    assert f(tf.constant(["abcd"])).numpy().tolist() == [[25185, 25699]]
