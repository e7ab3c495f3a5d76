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


# -- tf.train.Checkpoint in TF's format -----------------------------------------------------------------------
import tapeflow as tf  # noqa: E402


class Net(tf.Module):
    """The tf.Module of tools/tf_checkpoints/make_fixtures.py, zeroed."""

    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.zeros((2, 3), np.float32), name="w")
        self.b = tf.Variable(np.zeros(3, np.float32), name="bias")
        self.steps = tf.Variable(np.int64(0))
        self.flags = tf.Variable([False, False, False])
        self.small = tf.Variable(np.zeros(3, np.int8))
        self.half = tf.Variable(np.zeros(2, np.float16))
        self.wide = tf.Variable(np.zeros(2, np.float64))
        self.z = tf.Variable(np.zeros(2, np.complex64))
        self.words = tf.Variable(["", "", ""])
        self.layers = [tf.Variable(np.zeros(4, np.int32)), tf.Variable(0.0)]
        self.table = {"alpha": tf.Variable(np.zeros((2, 2), np.float32)), "scope/b.c": tf.Variable(0.0)}


def _keras_model():
    return tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(4), tf.keras.layers.BatchNormalization(),
                                tf.keras.layers.Dense(2)])


def test_restores_a_tf_module_checkpoint_and_writes_tf_s_bytes_back(tmp_path):
    net = Net()
    ckpt = tf.train.Checkpoint(net=net)
    ckpt.restore(fixture("module")).assert_consumed()
    want = tf_values("module")
    np.testing.assert_array_equal(net.w.numpy(), want["net/w/.ATTRIBUTES/VARIABLE_VALUE"])
    np.testing.assert_array_equal(net.z.numpy(), want["net/z/.ATTRIBUTES/VARIABLE_VALUE"])
    assert net.words.numpy().tolist() == [b"hello", b"", "checkpoint ✓".encode()]
    assert net.table["scope/b.c"].numpy() == -1.0 and int(ckpt.save_counter.numpy()) == 1
    # saved again (as save number 1) the two files are TF's, byte for byte: keys, object graph, data order
    ckpt.save_counter.assign(0)
    path = ckpt.save(str(tmp_path / "ckpt"))
    for suffix in (".index", ".data-00000-of-00001"):
        with open(path + suffix, "rb") as mine, open(fixture("module") + suffix, "rb") as tfs:
            assert mine.read() == tfs.read(), suffix
    assert (tmp_path / "checkpoint").read_text().splitlines() == [
        'model_checkpoint_path: "ckpt-1"', 'all_model_checkpoint_paths: "ckpt-1"']


def test_restores_a_keras_sequential_and_adam_checkpoint():
    want = tf_values("keras_adam")
    model, opt = _keras_model(), tf.keras.optimizers.Adam(0.01)
    opt.build(model.trainable_variables)
    tf.train.Checkpoint(model=model, optimizer=opt).restore(fixture("keras_adam")).assert_consumed()
    np.testing.assert_array_equal(model.layers[0].kernel.numpy(),
                                  want["optimizer/_trainable_variables/0/.ATTRIBUTES/VARIABLE_VALUE"])
    np.testing.assert_array_equal(model.layers[1].moving_mean.numpy(),
                                  want["model/_functional/_operations/2/moving_mean/.ATTRIBUTES/VARIABLE_VALUE"])
    assert int(opt.iterations.numpy()) == 1
    for i, v in enumerate(opt.variables):
        key = f"optimizer/_variables/{i}/.ATTRIBUTES/VARIABLE_VALUE"
        if key in want:
            np.testing.assert_array_equal(v.numpy(), want[key])


def test_keras_checkpoint_restores_into_unbuilt_model_and_optimizer():
    want = tf_values("keras_adam")
    model = tf.keras.Sequential([tf.keras.layers.Dense(4), tf.keras.layers.BatchNormalization(),
                                 tf.keras.layers.Dense(2)])
    opt = tf.keras.optimizers.Adam(0.01)
    status = tf.train.Checkpoint(model=model, optimizer=opt).restore(fixture("keras_adam"))
    model(np.ones((1, 3), np.float32))
    opt.build(model.trainable_variables)
    status.assert_consumed()
    np.testing.assert_array_equal(model.layers[2].kernel.numpy(),
                                  want["optimizer/_trainable_variables/4/.ATTRIBUTES/VARIABLE_VALUE"])
    np.testing.assert_array_equal(opt.variables[13].numpy(), want["optimizer/_variables/13/.ATTRIBUTES/VARIABLE_VALUE"])


def test_keras_checkpoint_keys_are_tf_s(tmp_path):
    model, opt = _keras_model(), tf.keras.optimizers.Adam(0.01)
    opt.build(model.trainable_variables)
    path = tf.train.Checkpoint(model=model, optimizer=opt).save(str(tmp_path / "ckpt"))
    assert [k for k, _ in tf.train.list_variables(path)] == sorted(tf_values("keras_adam"))


def test_keras_layer_names_are_keras_3_s(tmp_path):
    # TF 2.21 / Keras 3.15: Dense, Conv and Embedding keep their weights in private attributes, a functional
    # model lists its operations (InputLayer and Dropout included), an LSTM its cell, MHA its EinsumDenses
    x = np.ones((2, 3), np.float32)

    class Sub(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.l1 = tf.keras.layers.Dense(3)
            self.emb = tf.keras.layers.Embedding(5, 2)
            self.norm = tf.keras.layers.LayerNormalization()
            self.conv = tf.keras.layers.Conv2D(2, 3)
            self.lstm = tf.keras.layers.LSTM(2)
            self.mha = tf.keras.layers.MultiHeadAttention(1, 2)

        def call(self, x):
            return self.l1(x)

    s = Sub()
    s(x)
    s.emb(np.array([1]))
    s.norm(x)
    s.conv(np.ones((1, 4, 4, 1), np.float32))
    s.lstm(np.ones((1, 2, 3), np.float32))
    s.mha(np.ones((1, 2, 3), np.float32), np.ones((1, 2, 3), np.float32))
    inp = tf.keras.Input((3,))
    out = tf.keras.layers.Dense(1)(tf.keras.layers.Dropout(0.1)(tf.keras.layers.Dense(4)(inp)))
    path = tf.train.Checkpoint(model=s, functional=tf.keras.Model(inp, out)).write(str(tmp_path / "k"))
    keys = [k.removesuffix("/.ATTRIBUTES/VARIABLE_VALUE") for k, _ in tf.train.list_variables(path)]
    assert keys == ["_CHECKPOINTABLE_OBJECT_GRAPH", "functional/_operations/1/_kernel", "functional/_operations/1/bias",
                    "functional/_operations/3/_kernel", "functional/_operations/3/bias", "model/conv/_kernel",
                    "model/conv/bias", "model/emb/_embeddings", "model/l1/_kernel", "model/l1/bias",
                    "model/lstm/cell/bias", "model/lstm/cell/kernel", "model/lstm/cell/recurrent_kernel",
                    "model/mha/_key_dense/_kernel", "model/mha/_key_dense/bias", "model/mha/_output_dense/_kernel",
                    "model/mha/_output_dense/bias", "model/mha/_query_dense/_kernel", "model/mha/_query_dense/bias",
                    "model/mha/_value_dense/_kernel", "model/mha/_value_dense/bias", "model/norm/beta",
                    "model/norm/gamma"]


def test_restores_containers_written_by_tf_write():
    ckpt = tf.train.Checkpoint(vs=[tf.Variable(0.0), tf.Variable([0.0, 0.0])],
                               d={"b": tf.Variable(np.int32(0)), "a": [tf.Variable(0.0)]},
                               step=tf.Variable(np.int64(0)))
    ckpt.read(fixture("containers")).assert_consumed()
    assert ckpt.vs[1].numpy().tolist() == [2.0, 3.0] and ckpt.d["a"][0].numpy() == 5.0
    assert int(ckpt.d["b"].numpy()) == 4 and int(ckpt.step.numpy()) == 3


def test_values_for_objects_created_later_wait_for_them():
    ckpt = tf.train.Checkpoint()
    status = ckpt.read(fixture("containers"))
    ckpt.vs = [tf.Variable(0.0)]
    ckpt.vs.append(tf.Variable([0.0, 0.0]))
    ckpt.d = {"b": tf.Variable(np.int32(0))}
    assert ckpt.vs[1].numpy().tolist() == [2.0, 3.0] and int(ckpt.d["b"].numpy()) == 4
    with pytest.raises(AssertionError, match="Unresolved"):
        status.assert_consumed()  # d/a/0 and step never came
    status.expect_partial()


def test_reader_api_on_tf_files():
    reader = tf.train.load_checkpoint(os.path.join(FIXTURES, "keras_adam"))  # a folder: its latest checkpoint
    shapes = reader.get_variable_to_shape_map()
    assert shapes["optimizer/_variables/2/.ATTRIBUTES/VARIABLE_VALUE"] == [3, 4]
    assert reader.get_variable_to_dtype_map()["save_counter/.ATTRIBUTES/VARIABLE_VALUE"] == tf.int64
    assert reader.get_variable_to_dtype_map()["_CHECKPOINTABLE_OBJECT_GRAPH"] == tf.string
    counter = reader.get_tensor("save_counter/.ATTRIBUTES/VARIABLE_VALUE")
    assert counter == 1 and isinstance(counter, np.int64)  # a NumPy scalar, as TF's reader
    assert isinstance(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"), bytes)
    assert reader.has_tensor("optimizer/_iterations") and not reader.has_tensor("nope")
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found in checkpoint"):
        reader.get_tensor("nope")
    assert tf.train.latest_checkpoint(os.path.join(FIXTURES, "keras_adam")).endswith("ckpt-1")
    assert tf.train.list_variables(fixture("containers"))[0] == ("_CHECKPOINTABLE_OBJECT_GRAPH", [])
    np.testing.assert_array_equal(tf.train.load_variable(fixture("containers"), "vs/1"), [2.0, 3.0])


def test_older_safetensors_checkpoints_still_restore(tmp_path):
    pytest.importorskip("safetensors")
    v = tf.Variable([1.0, 2.0])
    ckpt = tf.train.Checkpoint(v=v, l=[tf.Variable(3.0)])
    ckpt.save_counter.assign(4)
    ckpt.write(str(tmp_path / "ckpt-4.safetensors"))  # what tapeflow wrote before: one file per checkpoint
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "ckpt-4"\nall_model_checkpoint_paths: "ckpt-4"\n')
    w, x = tf.Variable([0.0, 0.0]), tf.Variable(0.0)
    new = tf.train.Checkpoint(v=w, l=[x])
    new.restore(tf.train.latest_checkpoint(str(tmp_path))).assert_consumed()
    assert w.numpy().tolist() == [1.0, 2.0] and x.numpy() == 3.0 and int(new.save_counter.numpy()) == 4
    manager = tf.train.CheckpointManager(new, str(tmp_path), max_to_keep=1)
    assert manager.checkpoints == [str(tmp_path / "ckpt-4")]
    assert manager.save() == str(tmp_path / "ckpt-5")  # the new one in TF's format; the old file removed
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-5.data-00000-of-00001", "ckpt-5.index"]
    assert tf.train.load_checkpoint(str(tmp_path)).get_tensor("l/0/.ATTRIBUTES/VARIABLE_VALUE") == 3.0


def test_name_based_saver_writes_tf_s_format(tmp_path):
    v = tf.Variable([1.0, 2.0], name="weights")
    saver = tf.compat.v1.train.Saver([v])
    path = saver.save(None, str(tmp_path / "model"), global_step=3)
    assert os.path.isfile(path + ".index")
    assert tf.train.list_variables(path) == [("weights", [2])]  # keys are names, no object graph
    w = tf.Variable([0.0, 0.0], name="weights")
    tf.compat.v1.train.Saver([w]).restore(None, path)
    assert w.numpy().tolist() == [1.0, 2.0]
    u = tf.Variable([0.0, 0.0], name="weights")
    tf.train.Checkpoint(model=u).restore(path)  # TF 2 restores a name-based checkpoint by variable names
    assert u.numpy().tolist() == [1.0, 2.0]


def test_a_cycle_of_modules_is_saved_once(tmp_path):
    a, b = tf.Module(), tf.Module()
    a.b, b.a, a.v = b, a, tf.Variable(1.0)
    path = tf.train.Checkpoint(m=a).write(str(tmp_path / "c"))
    assert [k for k, _ in tf.train.list_variables(path)] == ["_CHECKPOINTABLE_OBJECT_GRAPH",
                                                            "m/v/.ATTRIBUTES/VARIABLE_VALUE"]  # as TF 2.21
    c, d = tf.Module(), tf.Module()
    c.b, d.a, c.v = d, c, tf.Variable(0.0)
    tf.train.Checkpoint(m=c).read(path).assert_consumed()
    assert c.v.numpy() == 1.0
