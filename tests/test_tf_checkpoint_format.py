"""TensorFlow's checkpoint format (tensor bundle: the ``.index`` SSTable and the ``.data`` shard).

The fixtures under tests/fixtures/tf_checkpoints were written by TF 2.21 / Keras 3.15
(tools/tf_checkpoints/make_fixtures.py); ``values.npz`` holds what TF's reader gave for every key."""

import os
import struct

import numpy as np
import pytest

from tapeflow.framework import errors
from tapeflow.train import tensor_bundle as tb

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "tf_checkpoints")


def fixture(name: str) -> str:
    return os.path.join(FIXTURES, name, "ckpt-1")


def tf_values(name: str) -> dict:
    with np.load(os.path.join(FIXTURES, name, "values.npz")) as f:
        return {k.replace("|", "/"): f[k] for k in f.files}


# -- CRC32C ---------------------------------------------------------------------------------------------
def test_crc32c_known_values():
    # RFC 3720's check values, and the usual "123456789" check
    assert tb.crc32c(b"123456789") == 0xE3069283
    assert tb.crc32c(bytes(32)) == 0x8A9136AA
    assert tb.crc32c(b"\xff" * 32) == 0x62A8AB43
    assert tb.crc32c(bytes(range(32))) == 0x46DD794E
    assert tb.crc32c(b"") == 0


@pytest.mark.parametrize("n", [4096, 4099, 65537, 300007, (1 << 20) + 12])
def test_crc32c_numpy_lanes_match_the_bytewise_loop(n):
    data = np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8).tobytes()
    want = tb._register_py(0xFFFFFFFF, data) ^ 0xFFFFFFFF
    assert tb._crc32c_builtin(data) == want
    cut = n // 3
    assert tb._crc32c_builtin(data[cut:], tb._crc32c_builtin(data[:cut])) == want  # Extend


def test_mask_round_trips():
    for crc in (0, 1, 0xFFFFFFFF, 0xE3069283):
        assert tb.unmask(tb.mask(crc)) == crc
    assert tb.mask(0) == 0xA282EAD8


# -- reading TF's files -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["module", "keras_adam", "containers"])
def test_reads_every_tensor_tf_wrote(name):
    reader = tb.BundleReader(fixture(name))
    want = tf_values(name)
    assert sorted(reader.keys()) == sorted(want)
    for key in reader.keys():
        got = reader.get(key)
        if key == "_CHECKPOINTABLE_OBJECT_GRAPH":
            assert got.shape == () and got[()] == want[key].tobytes()
            continue
        expected = want[key]
        assert reader.shape(key) == list(expected.shape)
        if expected.dtype.kind == "S":
            assert got.dtype == object and [bytes(x) for x in got.reshape(-1)] == list(expected.reshape(-1))
        else:
            assert got.dtype == expected.dtype, key
            np.testing.assert_array_equal(got, expected)


def test_reads_strings_and_every_dtype_of_the_module_fixture():
    reader = tb.BundleReader(fixture("module"))
    dtypes = {k[4:-len("/.ATTRIBUTES/VARIABLE_VALUE")]: reader.dtype_name(k) for k in reader.keys()
              if k.startswith("net/")}
    assert dtypes == {"w": "float32", "b": "float32", "steps": "int64", "flags": "bool", "small": "int8",
                      "half": "float16", "wide": "float64", "z": "complex64", "words": "string",
                      "layers/0": "int32", "layers/1": "float32", "table/alpha": "float32",
                      "table/scope.Sb..c": "float32"}
    words = reader.get("net/words/.ATTRIBUTES/VARIABLE_VALUE")
    assert list(words) == [b"hello", b"", "checkpoint ✓".encode()]


@pytest.mark.parametrize("name", ["module", "keras_adam", "containers"])
def test_rewriting_tf_files_gives_tf_bytes(name):
    # tapeflow's writer, given TF's tensors in TF's order, writes TF's two files byte for byte
    prefix = fixture(name)
    reader = tb.BundleReader(prefix)
    order = sorted(reader.keys(), key=lambda k: reader._entries[k].offset)
    out = {}
    tb.write_bundle("x", {k: reader.get(k) for k in order}, out.__setitem__)
    with open(tb.index_file(prefix), "rb") as f:
        assert out["x.index"] == f.read()
    with open(tb.data_file(prefix), "rb") as f:
        assert out["x.data-00000-of-00001"] == f.read()


# -- the table -------------------------------------------------------------------------------------------
def test_table_with_many_blocks_round_trips():
    items = [(f"key/{i:05d}/{'x' * (i % 7)}".encode(), bytes([i % 251]) * (i % 50)) for i in range(3000)]
    data = tb.build_table(items, block_size=1024)
    assert struct.unpack("<Q", data[-8:])[0] == 0xDB4775248B80FB57
    assert list(tb.read_table(data)) == items


def test_separators_are_leveldb_s():
    assert tb._separator(b"abcd", b"abzz") == b"abd"
    assert tb._separator(b"abc", b"abcd") == b"abc"  # a prefix: unchanged
    assert tb._separator(b"ab\xff", b"ac") == b"ab\xff"
    assert tb._successor(b"abc") == b"b"
    assert tb._successor(b"\xff\xffa") == b"\xff\xffb"


def test_corrupt_index_raises_data_loss(tmp_path):
    reader = tb.BundleReader(fixture("containers"))
    tensors = {k: reader.get(k) for k in reader.keys()}
    prefix = str(tmp_path / "c")

    def write(path, data):
        with open(path, "wb") as f:
            f.write(data)

    tb.write_bundle(prefix, tensors, write)
    with open(tb.index_file(prefix), "r+b") as f:
        f.seek(20)
        byte = f.read(1)
        f.seek(20)
        f.write(bytes([byte[0] ^ 1]))
    with pytest.raises(errors.DataLossError, match="checksum"):
        tb.BundleReader(prefix)


def test_corrupt_data_raises_data_loss_naming_the_tensor(tmp_path):
    prefix = str(tmp_path / "c")

    def write(path, data):
        with open(path, "wb") as f:
            f.write(data)

    tb.write_bundle(prefix, {"a": np.arange(6, dtype=np.float32), "s": np.array([b"xy", b"z"], dtype=object)},
                    write)
    reader = tb.BundleReader(prefix)
    np.testing.assert_array_equal(reader.get("a"), np.arange(6, dtype=np.float32))
    with open(tb.data_file(prefix), "r+b") as f:
        f.seek(3)
        f.write(b"\x7f")
        f.seek(6 * 4 + 6)
        f.write(b"Q")
    reader = tb.BundleReader(prefix)
    with pytest.raises(errors.DataLossError, match="tensor 'a'"):
        reader.get("a")
    with pytest.raises(errors.DataLossError, match="tensor 's'"):
        reader.get("s")


def test_truncated_index_raises_data_loss(tmp_path):
    path = tmp_path / "t.index"
    path.write_bytes(b"\x00" * 30)
    with pytest.raises(errors.DataLossError, match="magic"):
        tb.BundleReader(str(tmp_path / "t"))
