"""tf.train.Checkpoint / CheckpointManager (TF's checkpoint format) and save_weights (safetensors)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import optimizers
from tapeflow.train import checkpoint as ckpt_mod

pytest.importorskip("safetensors")


class Net:
    """A minimal trackable object (tf.Module implements the same protocol)."""

    def __init__(self, n_in=3, n_out=2, seed=0):
        rng = np.random.default_rng(seed)
        self.kernel = tf.Variable(rng.normal(size=(n_in, n_out)).astype(np.float32), name="kernel")
        self.bias = tf.Variable(np.zeros(n_out, np.float32), name="bias")

    def _trackable_children(self, save_type="checkpoint", **kwargs):
        return {"kernel": self.kernel, "bias": self.bias}

    @property
    def variables(self):
        return [self.kernel, self.bias]

    def __call__(self, x):
        return x @ self.kernel + self.bias


def _train(net, opt, steps):
    x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(net(x) - 1.0))
        opt.apply_gradients(zip(tape.gradient(loss, net.variables), net.variables))


def _values(objs):
    return [np.array(v.numpy(), copy=True) for v in objs]


def test_save_restore_round_trip_with_optimizer_slots(tmp_path):
    net, opt = Net(), optimizers.Adam(learning_rate=0.1)
    _train(net, opt, 3)
    ck = tf.train.Checkpoint(model=net, optimizer=opt)
    path = ck.save(str(tmp_path / "ckpt"))
    assert path == str(tmp_path / "ckpt-1")
    assert os.path.isfile(path + ".index") and os.path.isfile(path + ".data-00000-of-00001")
    _train(net, opt, 2)  # the reference continues training
    expected = _values(net.variables)

    net2, opt2 = Net(seed=5), optimizers.Adam(learning_rate=0.1)
    status = tf.train.Checkpoint(model=net2, optimizer=opt2).restore(path)
    assert int(opt2.iterations.numpy()) == 3  # restored before the slots exist: deferred
    _train(net2, opt2, 2)
    status.assert_consumed()
    for a, b in zip(expected, _values(net2.variables)):
        np.testing.assert_array_equal(a, b)


def _paths(path) -> dict:
    """list_variables without TF's suffix (the object paths tapeflow stores)."""
    return {k.removesuffix("/.ATTRIBUTES/VARIABLE_VALUE"): shape for k, shape in tf.train.list_variables(path)
            if k != "_CHECKPOINTABLE_OBJECT_GRAPH"}


def test_keys_are_object_paths(tmp_path):
    net = Net()
    opt = optimizers.SGD(momentum=0.9)
    _train(net, opt, 1)
    path = tf.train.Checkpoint(model=net, optimizer=opt, extra=[tf.Variable(1.0)]).save(str(tmp_path / "c"))
    names = _paths(path)
    # TF 2.21 with a Keras 3 optimizer: its slots under _variables/<i>, iterations and learning rate by name
    assert names == {"model/kernel": [3, 2], "model/bias": [2], "optimizer/_iterations": [],
                     "optimizer/_learning_rate": [], "optimizer/_variables/2": [3, 2], "optimizer/_variables/3": [2],
                     "extra/0": [], "save_counter": []}
    np.testing.assert_array_equal(tf.train.load_variable(path, "model/kernel"), net.kernel.numpy())
    assert tf.train.load_variable(str(tmp_path), "save_counter") == 1


def test_shared_variable_is_stored_once(tmp_path):
    v = tf.Variable([1.0, 2.0])
    path = tf.train.Checkpoint(a=v, b=[v]).write(str(tmp_path / "w"))
    assert list(_paths(path)) == ["a"]  # write() stores no save_counter (TF 2.21)
    assert tf.train.list_variables(path) == [("_CHECKPOINTABLE_OBJECT_GRAPH", []),
                                             ("a/.ATTRIBUTES/VARIABLE_VALUE", [2])]  # TF's names


def test_save_numbering_state_file_and_latest(tmp_path):
    ck = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0]))
    p1 = ck.save(str(tmp_path / "ckpt"))
    p2 = ck.save(str(tmp_path / "ckpt"))
    assert (p1, p2) == (str(tmp_path / "ckpt-1"), str(tmp_path / "ckpt-2"))
    assert tf.train.latest_checkpoint(str(tmp_path)) == p2
    state = (tmp_path / "checkpoint").read_text()
    assert state.splitlines()[:3] == ['model_checkpoint_path: "ckpt-2"', 'all_model_checkpoint_paths: "ckpt-1"',
                                      'all_model_checkpoint_paths: "ckpt-2"']
    assert tf.train.latest_checkpoint(str(tmp_path / "nothing")) is None
    # write(): exact prefix, no counter, no state change
    assert ck.write(str(tmp_path / "exact")) == str(tmp_path / "exact")
    assert int(ck.save_counter.numpy()) == 2
    assert tf.train.latest_checkpoint(str(tmp_path)) == p2


def test_restore_none_and_missing_path(tmp_path):
    ck = tf.train.Checkpoint(v=tf.Variable(1.0))
    ck.restore(None).assert_consumed()
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        ck.restore(str(tmp_path / "nope-1"))


def test_non_trackable_object_is_rejected():
    with pytest.raises(ValueError, match="expecting v to be a trackable object"):
        tf.train.Checkpoint(v=3)


def test_different_shape_raises_and_changes_nothing(tmp_path):
    path = tf.train.Checkpoint(model=Net()).save(str(tmp_path / "c"))
    other = Net(n_in=4, seed=3)
    before = _values(other.variables)
    with pytest.raises(ValueError, match=r"incompatible tensor with shape \(3, 2\).*shape \(4, 2\)"):
        tf.train.Checkpoint(model=other).restore(path)
    for a, b in zip(before, _values(other.variables)):
        np.testing.assert_array_equal(a, b)  # the bias (same shape) was not assigned either


def test_different_dtype_raises(tmp_path):
    path = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0])).write(str(tmp_path / "c"))
    w = tf.Variable(np.array([0.0, 0.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected dtype float64 does not equal original dtype"):
        tf.train.Checkpoint(v=w).read(path)
    assert w.numpy().tolist() == [0.0, 0.0]


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "empty", "flip index", "truncate index"])
def test_corrupt_file_raises_data_loss_and_changes_nothing(tmp_path, damage):
    path = tf.train.Checkpoint(model=Net()).write(str(tmp_path / "c"))
    file = path + (".index" if "index" in damage else ".data-00000-of-00001")
    damage = damage.split()[0]
    data = bytearray(open(file, "rb").read())
    if damage == "flip":
        data[len(data) // 3] ^= 0xFF  # inside a tensor's bytes (or a table block)
    elif damage == "truncate":
        data = data[: len(data) - 5]
    elif damage == "garbage":
        data = bytearray(b"not a checkpoint at all" * 3)
    else:
        data = bytearray()
    open(file, "wb").write(bytes(data))
    net = Net(seed=9)
    before = _values(net.variables)
    with pytest.raises(tf.errors.DataLossError, match="corrupt|truncated|not an sstable"):
        tf.train.Checkpoint(model=net).restore(path)
    for a, b in zip(before, _values(net.variables)):
        np.testing.assert_array_equal(a, b)


def test_interrupted_save_keeps_previous_checkpoint(tmp_path, monkeypatch):
    net = Net()
    ck = tf.train.Checkpoint(model=net)
    path = ck.write(str(tmp_path / "c"))
    saved = net.kernel.numpy().copy()
    net.kernel.assign(net.kernel * 2.0)

    def crash(f, data):
        f.write(data[: len(data) // 2])
        raise KeyboardInterrupt("simulated crash mid-write")

    monkeypatch.setattr(ckpt_mod, "_write_bytes", crash)
    with pytest.raises(KeyboardInterrupt):
        ck.write(path)
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == ["c.data-00000-of-00001", "c.index"]  # temp files cleaned up
    fresh = Net(seed=4)
    tf.train.Checkpoint(model=fresh).restore(path)
    np.testing.assert_array_equal(fresh.kernel.numpy(), saved)


def test_process_killed_mid_save_keeps_previous_checkpoint(tmp_path):
    # A real crash: the process dies (os._exit) halfway through writing.
    script = textwrap.dedent(f"""
        import os, numpy as np, tapeflow as tf
        from tapeflow.train import checkpoint as m
        ck = tf.train.Checkpoint(v=tf.Variable(np.arange(1000, dtype=np.float32)))
        ck.write({str(tmp_path / 'c')!r})
        ck.v.assign(ck.v * 0.0)
        def die(f, data):
            f.write(data[: len(data) // 2]); f.flush(); os._exit(3)
        m._write_bytes = die
        ck.write({str(tmp_path / 'c')!r})
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert r.returncode == 3, r.stderr.decode()
    v = tf.Variable(np.zeros(1000, np.float32))
    tf.train.Checkpoint(v=v).read(str(tmp_path / "c"))
    np.testing.assert_array_equal(v.numpy(), np.arange(1000, dtype=np.float32))


def test_checkpoint_manager_keeps_newest(tmp_path):
    v = tf.Variable(0.0)
    ck = tf.train.Checkpoint(v=v)
    mgr = tf.train.CheckpointManager(ck, str(tmp_path / "m"), max_to_keep=2)
    assert mgr.latest_checkpoint is None
    paths = []
    for i in range(3):
        v.assign(float(i))
        paths.append(mgr.save())
    assert paths == [str(tmp_path / "m" / f"ckpt-{i}") for i in (1, 2, 3)]
    assert mgr.checkpoints == paths[1:]
    assert sorted(os.listdir(tmp_path / "m")) == ["checkpoint", "ckpt-2.data-00000-of-00001", "ckpt-2.index",
                                                  "ckpt-3.data-00000-of-00001", "ckpt-3.index"]
    again = tf.train.CheckpointManager(tf.train.Checkpoint(v=tf.Variable(5.0)), str(tmp_path / "m"), max_to_keep=2)
    assert again.checkpoints == paths[1:] and again.latest_checkpoint == paths[2]
    assert again.restore_or_initialize() == paths[2]
    assert float(again.checkpoint.v.numpy()) == 2.0
    assert mgr.save(checkpoint_number=10).endswith("ckpt-10")
    assert tf.train.latest_checkpoint(str(tmp_path / "m")).endswith("ckpt-10")
    called = []
    empty = tf.train.CheckpointManager(ck, str(tmp_path / "e"), max_to_keep=1, init_fn=lambda: called.append(1))
    assert empty.restore_or_initialize() is None and called == [1]


def test_manager_checkpoint_interval(tmp_path):
    step = tf.Variable(0, dtype=tf.int64)
    mgr = tf.train.CheckpointManager(tf.train.Checkpoint(step=step), str(tmp_path), max_to_keep=None,
                                     step_counter=step, checkpoint_interval=5)
    assert mgr.save() is not None
    step.assign(3)
    assert mgr.save() is None
    step.assign(5)
    assert mgr.save() is not None


def test_status_assertions(tmp_path):
    path = tf.train.Checkpoint(v=tf.Variable(1.0)).save(str(tmp_path / "c"))
    status = tf.train.Checkpoint(w=tf.Variable(1.0)).restore(path)
    with pytest.raises(AssertionError, match="not bound to checkpointed values"):
        status.assert_existing_objects_matched()
    with pytest.raises(AssertionError):
        status.assert_consumed()
    status.expect_partial()


def test_save_and_load_weights(tmp_path):
    net = Net()
    file = str(tmp_path / "net.weights.safetensors")
    ckpt_mod.save_weights(net, file)
    other = Net(seed=1)
    ckpt_mod.load_weights(other, file)
    np.testing.assert_array_equal(other.kernel.numpy(), net.kernel.numpy())

    class Bigger(Net):
        def __init__(self):
            super().__init__()
            self.extra = tf.Variable(1.0)

        def _trackable_children(self, save_type="checkpoint", **kwargs):
            return {**super()._trackable_children(), "extra": self.extra}

    big = Bigger()
    before = big.kernel.numpy().copy()
    with pytest.raises(ValueError, match="no values for 1 variable"):
        ckpt_mod.load_weights(big, file)
    np.testing.assert_array_equal(big.kernel.numpy(), before)
    ckpt_mod.load_weights(big, file, skip_mismatch=True)
    np.testing.assert_array_equal(big.kernel.numpy(), net.kernel.numpy())


def test_missing_safetensors_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    with pytest.raises(ImportError, match="pip install safetensors"):
        ckpt_mod._safetensors()


def test_string_variable_round_trips_and_safetensors_refuses_it(tmp_path):
    path = tf.train.Checkpoint(s=tf.Variable(["text", "ü"])).write(str(tmp_path / "s"))
    s = tf.Variable(["", ""])
    tf.train.Checkpoint(s=s).read(path).assert_consumed()
    assert s.numpy().tolist() == [b"text", "ü".encode()]
    with pytest.raises(TypeError, match="Cannot checkpoint variable"):
        tf.train.Checkpoint(s=tf.Variable("text")).write(str(tmp_path / "s.safetensors"))


def test_tf_module_and_optimizer_round_trip(tmp_path):
    class Block(tf.Module):
        def __init__(self, n):
            super().__init__()
            self.layers = [Net(n, n, seed=i) for i in range(2)]
            self.scale = tf.Variable(1.0)

    m = Block(3)
    opt = optimizers.SGD(momentum=0.5)
    variables = [m.scale] + [v for layer in m.layers for v in layer.variables]
    opt.apply_gradients([(tf.ones_like(v), v) for v in variables])
    path = tf.train.Checkpoint(model=m, optimizer=opt).save(str(tmp_path / "ck"))
    keys = list(_paths(path))
    # breadth first, as TF: a variable the optimizer also tracks is stored under its shorter path
    assert "model/scale" in keys and "optimizer/_trainable_variables/1" in keys, keys
    m2, opt2 = Block(3), optimizers.SGD(momentum=0.5)
    for layer in m2.layers:
        layer.kernel.assign(layer.kernel * 0.0)
    tf.train.Checkpoint(model=m2, optimizer=opt2).restore(path)
    np.testing.assert_array_equal(m2.layers[1].kernel.numpy(), m.layers[1].kernel.numpy())
    variables2 = [m2.scale] + [v for layer in m2.layers for v in layer.variables]
    opt2.build(variables2)  # the deferred slot values land when the slots are created
    np.testing.assert_array_equal(opt2.momentums[1].numpy(), opt.momentums[1].numpy())


def test_attributes_assigned_later_are_tracked(tmp_path):
    ck = tf.train.Checkpoint(v=tf.Variable(1.0))
    ck.step = tf.Variable(7, dtype=tf.int64)
    path = ck.save(str(tmp_path / "c"))
    assert "step" in _paths(path)
    ck2 = tf.train.Checkpoint(v=tf.Variable(0.0), step=tf.Variable(0, dtype=tf.int64))
    ck2.restore(path).assert_consumed()
    assert int(ck2.step.numpy()) == 7 and float(ck2.v.numpy()) == 1.0


def test_restore_into_unbuilt_keras_models_is_deferred_until_built(tmp_path):
    # TF's deferred restoration: values for variables not created yet are applied when the layers build,
    # before the first call uses them (the distributed custom-training tutorial restores into a fresh model).
    def make():
        return tf.keras.Sequential([tf.keras.layers.Dense(3, activation="relu"), tf.keras.layers.Dense(2)])

    class Sub(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = tf.keras.layers.Dense(4)
            self.out = tf.keras.layers.Dense(1)

        def call(self, x):
            return self.out(self.hidden(x))

    x = np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5)
    m, s, opt = make(), Sub(), tf.keras.optimizers.Adam()
    expected, expected_s = m(x).numpy(), s(x).numpy()
    path = tf.train.Checkpoint(model=m, sub=s, optimizer=opt).save(str(tmp_path / "c"))
    m2, s2 = make(), Sub()
    status = tf.train.Checkpoint(model=m2, sub=s2, optimizer=tf.keras.optimizers.Adam()).restore(path)
    np.testing.assert_array_equal(m2(x), expected)  # the first call already sees the saved weights
    np.testing.assert_array_equal(s2(x), expected_s)
    status.assert_existing_objects_matched()

    @tf.function
    def run(v):
        return m3(v)

    m3 = make()
    tf.train.Checkpoint(model=m3).restore(path).expect_partial()
    np.testing.assert_array_equal(run(x), expected)
