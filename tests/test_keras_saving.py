"""Keras 3's file formats: ``.keras`` archives and ``.weights.h5`` files, both ways with real Keras.

The fixtures in tests/fixtures/keras/ were written by Keras 3.15.1 / TF 2.21 (``model.save``; rnn.keras:
LSTM(return_sequences) -> Bidirectional(GRU) -> Dense, Adam after one step; timedist.keras: TimeDistributed(Dense)
-> SimpleRNN, uncompiled), each
with an input batch and the predictions real Keras made for it after loading the file
(``*_io.npz``). Files tapeflow writes were loaded by real Keras 3.15.1 when these tests were written
(predictions equal to the last bit); here their structure is pinned against the fixtures."""

from __future__ import annotations

import json
import os
import sys
import zipfile

import numpy as np
import pytest

import tapeflow as tf

h5py = pytest.importorskip("h5py")
K = tf.keras
L = tf.keras.layers
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras")


def fixture(name: str) -> str:
    return os.path.join(FIXTURES, name)


def io_of(name: str) -> tuple[np.ndarray, np.ndarray]:
    data = np.load(fixture(f"{name}_io.npz"))
    return data["x"], data["y"]


@K.saving.register_keras_serializable(package="MyPkg")
class MyModel(K.Model):
    """The subclassed model of the fixture sub.keras (same package and name as in real Keras)."""

    def __init__(self, units=3, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.d1 = L.Dense(units)
        self.out = L.Dense(1)

    def call(self, x):
        return self.out(tf.nn.relu(self.d1(x)))

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def h5_tree(f) -> dict:
    """{path: (shape, dtype)} of every dataset, {path/: "name"} of every vars group (whose ``name``
    attribute is the object's name, an auto-name that depends on the session)."""
    out = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            out[name] = (obj.shape, str(obj.dtype))
        elif name.endswith("vars"):
            out[name + "/"] = "name" if isinstance(obj.attrs.get("name"), str) else None

    f.visititems(visit)
    return out


def archive_parts(path: str) -> tuple[dict, dict, dict]:
    with zipfile.ZipFile(path) as z:
        config = json.loads(z.read("config.json"))
        meta = json.loads(z.read("metadata.json"))
        import io

        with h5py.File(io.BytesIO(z.read("model.weights.h5")), "r") as f:
            tree = h5_tree(f)
    return config, meta, tree


# -- Keras -> tapeflow ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, kind, n_opt",
    [
        ("seq", "Sequential", 10),
        ("func", "Functional", 2),
        ("conv", "Sequential", 8),
        ("sub", "MyModel", 2),
        ("rnn", "Sequential", 24),
        ("timedist", "Functional", None),
    ],
)
def test_keras_saved_models_load_and_predict_the_same(name, kind, n_opt):
    model = K.models.load_model(fixture(f"{name}.keras"))
    assert type(model).__name__ == kind
    x, y = io_of(name)
    np.testing.assert_allclose(model.predict(x, verbose=0), y, rtol=1e-6, atol=1e-6)
    if n_opt is None:  # saved uncompiled
        assert model.optimizer is None
        return
    # compile state and optimizer variables come back too
    assert model.optimizer is not None and len(model.optimizer.variables) == n_opt
    _, _, tree = archive_parts(fixture(f"{name}.keras"))
    opt_path = "optimizer/vars/"
    with zipfile.ZipFile(fixture(f"{name}.keras")) as z:
        import io

        with h5py.File(io.BytesIO(z.read("model.weights.h5")), "r") as f:
            for i, v in enumerate(model.optimizer.variables):
                np.testing.assert_array_equal(np.asarray(v.numpy()), f[f"{opt_path}{i}"][()])
    assert len([k for k in tree if k.startswith(opt_path) and not k.endswith("/")]) == n_opt


def test_keras_fixture_compile_state_is_restored():
    model = K.models.load_model(fixture("conv.keras"))
    assert type(model.optimizer).__name__ == "RMSprop"
    assert model.optimizer.get_config()["learning_rate"] == pytest.approx(1e-3)
    assert int(model.optimizer.iterations.numpy()) == 1
    x, _ = io_of("conv")
    logs = model.evaluate(x, np.array([0, 1, 0, 1, 1]), verbose=0, return_dict=True)
    assert set(logs) == {"loss", "accuracy"}
    uncompiled = K.models.load_model(fixture("conv.keras"), compile=False)
    assert uncompiled.optimizer is None


def test_functional_fixture_rebuilds_the_graph():
    model = K.models.load_model(fixture("func.keras"))
    assert [x.name for x in model.layers] == ["x", "dense", "concatenate", "dense_1"]
    assert model.layers[-1].kernel.shape == (7, 1)  # dense_1 reads concatenate([dense(x), x])


def test_subclassed_model_needs_its_class_registered():
    from tapeflow.keras.saving import serialization

    key = "MyPkg>MyModel"
    saved = serialization._GLOBAL_CUSTOM_OBJECTS.pop(key)
    try:
        with pytest.raises(TypeError, match="Could not locate class 'MyModel'"):
            K.models.load_model(fixture("sub.keras"))
        model = K.models.load_model(fixture("sub.keras"), custom_objects={"MyPkg>MyModel": MyModel})
        assert model.units == 3
    finally:
        serialization._GLOBAL_CUSTOM_OBJECTS[key] = saved


def test_load_weights_reads_a_keras_weights_h5(tmp_path):
    with zipfile.ZipFile(fixture("seq.keras")) as z:
        (tmp_path / "k.weights.h5").write_bytes(z.read("model.weights.h5"))
    model = K.Sequential([K.Input((4,)), L.Dense(3, activation="relu"), L.Dense(2)])
    model.load_weights(str(tmp_path / "k.weights.h5"))
    x, y = io_of("seq")
    np.testing.assert_allclose(model.predict(x, verbose=0), y, rtol=1e-6, atol=1e-6)
    # the weights of a .keras archive load the same way
    again = K.Sequential([K.Input((4,)), L.Dense(3, activation="relu"), L.Dense(2)])
    again.load_weights(fixture("seq.keras"))
    np.testing.assert_allclose(again.predict(x, verbose=0), y, rtol=1e-6, atol=1e-6)


# -- tapeflow -> Keras: the files have Keras' structure -------------------------------------------
def _fresh(name: str):
    tf.keras.utils.set_random_seed(1)
    tf.keras.backend.clear_session()
    if name == "seq":
        model = K.Sequential([K.Input((4,)), L.Dense(3, activation="relu"), L.Dense(2)])
        model.compile(optimizer=K.optimizers.Adam(0.01), loss="mse", metrics=["mae"])
        x, y = np.random.rand(8, 4).astype("float32"), np.random.rand(8, 2).astype("float32")
    elif name == "func":
        i = K.Input((4,), name="x")
        h = L.Dense(3, activation="tanh")(i)
        model = K.Model(i, L.Dense(1)(L.Concatenate()([h, i])))
        model.compile("sgd", "mse")
        x, y = np.random.rand(8, 4).astype("float32"), np.random.rand(8, 1).astype("float32")
    elif name == "rnn":
        model = K.Sequential([K.Input((5, 3)), L.LSTM(4, return_sequences=True), L.Bidirectional(L.GRU(2)), L.Dense(1)])
        model.compile("adam", "mse")
        x, y = np.random.rand(2, 5, 3).astype("float32"), np.zeros((2, 1), "float32")
    else:
        model = K.Sequential(
            [
                K.Input((6, 6, 1)),
                L.Conv2D(2, 3, activation="relu"),
                L.MaxPooling2D(),
                L.Flatten(),
                L.BatchNormalization(),
                L.Dropout(0.1),
                L.Dense(2, activation="softmax"),
            ]
        )
        model.compile(K.optimizers.RMSprop(1e-3), "sparse_categorical_crossentropy", metrics=["accuracy"])
        x, y = np.random.rand(8, 6, 6, 1).astype("float32"), np.random.randint(0, 2, 8)
    model.fit(x, y, epochs=1, verbose=0)
    return model, x


def _same_classes(keras_cfg, tf_cfg, path=""):
    """module/class_name/registered_name agree at every level; Keras' config keys are all written
    (except the few Keras-only options tapeflow's layers lack)."""
    keras_only_ok = {"shared_object_id"}  # Keras's marker of an object written twice in one file
    if isinstance(keras_cfg, dict) and isinstance(tf_cfg, dict):
        for key in ("module", "class_name", "registered_name"):
            if key in keras_cfg:
                assert tf_cfg.get(key) == keras_cfg[key], f"{path}/{key}"
        missing = set(keras_cfg) - set(tf_cfg) - keras_only_ok
        if path.endswith(("/layer", "/backward_layer")):  # a wrapper's inner layer: Keras rebuilds it from the wrapper
            missing.discard("build_config")
        assert not missing, f"{path}: tapeflow does not write {missing}"
        for key in set(keras_cfg) & set(tf_cfg):
            if key not in ("name", "keras_history"):
                _same_classes(keras_cfg[key], tf_cfg[key], f"{path}/{key}")
    elif isinstance(keras_cfg, list) and isinstance(tf_cfg, list):
        assert len(keras_cfg) == len(tf_cfg), path
        for i, (a, b) in enumerate(zip(keras_cfg, tf_cfg)):
            _same_classes(a, b, f"{path}[{i}]")


def _without_ids(config, names=True):
    """A config.json without Keras's shared_object_id markers (and, for the conv fixture, whose script had
    made other layers first, without the auto-generated dense layer's name)."""
    if isinstance(config, dict):
        out = {k: _without_ids(v, names) for k, v in config.items() if k != "shared_object_id"}
        if not names and str(out.get("name", "")).startswith("dense"):
            out["name"] = "dense"
        return out
    if isinstance(config, list):
        return [_without_ids(v, names) for v in config]
    return config


@pytest.mark.parametrize("name", ["seq", "func", "conv", "rnn"])
def test_tapeflow_archives_have_keras_structure(tmp_path, name):
    model, x = _fresh(name)
    path = str(tmp_path / f"{name}.keras")
    model.save(path)
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["config.json", "metadata.json", "model.weights.h5"]
    config, meta, tree = archive_parts(path)
    k_config, k_meta, k_tree = archive_parts(fixture(f"{name}.keras"))
    assert set(meta) == set(k_meta) and meta["keras_version"].startswith("3.")
    assert tree == k_tree  # same groups, names, datasets, shapes and dtypes (optimizer state included)
    _same_classes(k_config, config)
    assert _without_ids(config) == _without_ids(k_config, names=name != "conv")  # every config value is Keras's
    assert config["compile_config"].keys() == k_config["compile_config"].keys()
    assert config["compile_config"]["loss"] == k_config["compile_config"]["loss"]
    assert config["compile_config"]["metrics"] == k_config["compile_config"]["metrics"]
    # ... and tapeflow reads it back: same predictions, same optimizer state
    again = K.models.load_model(path)
    np.testing.assert_array_equal(again.predict(x, verbose=0), model.predict(x, verbose=0))
    for a, b in zip(again.optimizer.variables, model.optimizer.variables):
        np.testing.assert_array_equal(np.asarray(a.numpy()), np.asarray(b.numpy()))


def test_subclassed_archive_has_keras_structure(tmp_path):
    model = MyModel()
    model(np.zeros((1, 4), "float32"))
    model.compile("adam", "mse")
    model.save(str(tmp_path / "sub.keras"))
    config, _, tree = archive_parts(str(tmp_path / "sub.keras"))
    k_config, _, k_tree = archive_parts(fixture("sub.keras"))
    assert tree == k_tree  # d1/vars, layers/dense_1/vars (the `out` attribute, reached via `layers`), ...
    assert config["registered_name"] == "MyPkg>MyModel" and config["config"]["units"] == 3
    assert config["build_config"] == k_config["build_config"] == {"input_shape": [1, 4]}
    again = K.models.load_model(str(tmp_path / "sub.keras"))
    x = np.random.rand(3, 4).astype("float32")
    np.testing.assert_array_equal(again(x).numpy(), model(x).numpy())


def test_save_weights_writes_keras_hdf5(tmp_path):
    model, x = _fresh("seq")
    path = str(tmp_path / "w.weights.h5")
    model.save_weights(path)
    with h5py.File(path, "r") as f:
        tree = h5_tree(f)
    assert tree == archive_parts(fixture("seq.keras"))[2]
    assert tree["layers/dense/vars/0"] == ((4, 3), "float32") and tree["optimizer/vars/0"] == ((), "int64")
    other = K.Sequential([K.Input((4,)), L.Dense(3, activation="relu"), L.Dense(2)])
    other.compile(K.optimizers.Adam(0.01), "mse")
    other.load_weights(path)
    np.testing.assert_array_equal(other.predict(x, verbose=0), model.predict(x, verbose=0))
    assert int(other.optimizer.iterations.numpy()) == 1  # the optimizer state came too


def test_safetensors_stays_available_under_its_suffix(tmp_path):
    model, x = _fresh("seq")
    path = str(tmp_path / "w.safetensors")
    model.save_weights(path)
    assert open(path, "rb").read(8) != b"\x89HDF\r\n\x1a\n"
    other = K.Sequential([K.Input((4,)), L.Dense(3, activation="relu"), L.Dense(2)])
    other.load_weights(path)
    np.testing.assert_array_equal(other.predict(x, verbose=0), model.predict(x, verbose=0))


# -- bad files and names ------------------------------------------------------------------------
def test_bad_weight_files_get_clear_errors(tmp_path):
    model, _ = _fresh("seq")
    with pytest.raises(ValueError, match=r"The filename must end in `.weights.h5`. Received: filepath=.*w.h5"):
        model.save_weights(str(tmp_path / "w.h5"))
    # an old tapeflow file: safetensors under the .weights.h5 name
    model.save_weights(str(tmp_path / "old.safetensors"))
    os.rename(tmp_path / "old.safetensors", tmp_path / "old.weights.h5")
    with pytest.raises(ValueError, match="not an HDF5 file: it holds a safetensors file"):
        model.load_weights(str(tmp_path / "old.weights.h5"))
    (tmp_path / "junk.weights.h5").write_bytes(b"hello world, not a weights file")
    with pytest.raises(ValueError, match="not an HDF5 file"):
        model.load_weights(str(tmp_path / "junk.weights.h5"))
    # a real HDF5 file of another model: the layer and shapes are named, nothing is changed
    big = K.Sequential([K.Input((4,)), L.Dense(5), L.Dense(2)])
    big.save_weights(str(tmp_path / "big.weights.h5"))
    before = model.get_weights()
    with pytest.raises(ValueError, match=r"variable.shape=\(4, 3\), Received: value.shape=\(4, 5\)"):
        model.load_weights(str(tmp_path / "big.weights.h5"))
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)
    short = K.Sequential([K.Input((4,)), L.Dense(3, activation="relu")])
    short.save_weights(str(tmp_path / "short.weights.h5"))
    with pytest.raises(ValueError, match="Layer 'dense_1' expected 2 variables, but received 0 variables"):
        model.load_weights(str(tmp_path / "short.weights.h5"))
    with h5py.File(str(tmp_path / "legacy.h5"), "w") as f:  # Keras 2's layout
        f.attrs["layer_names"] = [b"dense"]
    with pytest.raises(ValueError, match="lists layers \\['dense'\\] in 'layer_names' but has no group"):
        model.load_weights(str(tmp_path / "legacy.h5"))


def test_bad_archives_get_keras_errors(tmp_path):
    with pytest.raises(ValueError, match="File not found: filepath=.*nothing.keras"):
        K.models.load_model(str(tmp_path / "nothing.keras"))
    (tmp_path / "m.txt").write_text("x")
    with pytest.raises(ValueError, match="File format not supported"):
        K.models.load_model(str(tmp_path / "m.txt"))
    (tmp_path / "bad.keras").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a zip file"):
        K.models.load_model(str(tmp_path / "bad.keras"))
    with zipfile.ZipFile(tmp_path / "empty.keras", "w") as z:
        z.writestr("other.txt", "x")
    with pytest.raises(ValueError, match="has no config.json"):
        K.models.load_model(str(tmp_path / "empty.keras"))
    model, _ = _fresh("seq")
    with pytest.raises(ValueError, match="save_format` argument is deprecated"):
        model.save(str(tmp_path / "m.keras"), save_format="keras")


def test_missing_h5py_names_the_extra(tmp_path, monkeypatch):
    model, _ = _fresh("seq")
    monkeypatch.setitem(sys.modules, "h5py", None)
    with pytest.raises(ImportError, match=r"pip install 'tapeflow\[keras\]'"):
        model.save_weights(str(tmp_path / "w.weights.h5"))
    with pytest.raises(ImportError, match="h5py"):
        model.save(str(tmp_path / "m.keras"))


# -- configs: get_config / from_config / JSON / clone ----------------------------------------------
@pytest.mark.parametrize(
    "layer",
    [
        lambda: L.Dense(4, activation="relu", use_bias=False, kernel_initializer="he_normal"),
        lambda: L.Conv2D(3, (2, 2), strides=2, padding="same", activation="tanh"),
        lambda: L.BatchNormalization(momentum=0.9, epsilon=1e-4),
        lambda: L.Dropout(0.25, seed=3),
        lambda: L.MaxPooling2D(pool_size=3),
        lambda: L.LeakyReLU(negative_slope=0.2),
        lambda: L.Embedding(10, 4, mask_zero=True),
        lambda: L.Reshape((2, 3)),
    ],
)
def test_any_layer_round_trips_through_its_config(layer):
    first = layer()
    config = first.get_config()
    second = type(first).from_config(json.loads(json.dumps(K.saving.serialize_keras_object(first)))["config"])
    assert K.saving.serialize_keras_object(second)["config"] == K.saving.serialize_keras_object(first)["config"]
    assert config["name"] == first.name == second.name


def test_custom_layer_with_get_config_and_registration(tmp_path):
    @K.saving.register_keras_serializable(package="Test")
    class Scale(L.Layer):
        def __init__(self, factor=2.0, **kwargs):
            super().__init__(**kwargs)
            self.factor = factor

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")

        def call(self, x):
            return x * self.w * self.factor

    assert K.saving.get_registered_name(Scale) == "Test>Scale"
    model = K.Sequential([K.Input((3,)), Scale(3.0), L.Dense(1)])
    model.layers[0].w.assign([1.0, 2.0, 3.0])
    path = str(tmp_path / "m.keras")
    model.save(path)
    again = K.models.load_model(path)
    assert type(again.layers[0]) is Scale and again.layers[0].factor == 3.0
    x = np.ones((2, 3), "float32")
    np.testing.assert_array_equal(again(x).numpy(), model(x).numpy())


def test_to_json_model_from_json_and_clone_model():
    model, x = _fresh("func")
    text = model.to_json()
    assert json.loads(text)["class_name"] == "Functional"
    rebuilt = K.models.model_from_json(text)
    assert [type(v).__name__ for v in rebuilt.layers] == [type(v).__name__ for v in model.layers]
    assert [w.shape for w in rebuilt.weights] == [w.shape for w in model.weights]
    clone = K.models.clone_model(model)
    assert clone is not model and [w.shape for w in clone.weights] == [w.shape for w in model.weights]
    assert not np.array_equal(clone.weights[0].numpy(), model.weights[0].numpy())  # fresh weights
    clone.set_weights(model.get_weights())
    np.testing.assert_array_equal(clone.predict(x, verbose=0), model.predict(x, verbose=0))
    seq = K.Sequential([K.Input((2,)), L.Dense(3)])
    config = seq.get_config()
    again = K.Sequential.from_config(config)
    assert [w.shape for w in again.weights] == [w.shape for w in seq.weights]


def test_saving_namespace_and_save_model(tmp_path):
    model, x = _fresh("seq")
    K.saving.save_model(model, str(tmp_path / "a.keras"))
    again = K.saving.load_model(str(tmp_path / "a.keras"))
    np.testing.assert_array_equal(again.predict(x, verbose=0), model.predict(x, verbose=0))
    K.models.save_model(model, str(tmp_path / "b.keras"))
    assert K.models.load_model(str(tmp_path / "b.keras")).count_params() == model.count_params()
    assert K.utils.register_keras_serializable is K.saving.register_keras_serializable


def test_adapted_normalization_predicts_the_same_after_loading(tmp_path):
    # as Keras's Normalization.load_own_variables: the loaded mean/variance reach the layer's call (the
    # regression tutorial's reloaded dnn_model); both the archive and load_weights
    x = np.arange(24, dtype=np.float32).reshape(8, 3) * [1.0, 10.0, -3.0]
    norm = L.Normalization()
    norm.adapt(x)
    model = K.Sequential([K.Input((3,)), norm, L.Dense(2)])
    want = model.predict(x, verbose=0)
    model.save(str(tmp_path / "n.keras"))
    again = K.models.load_model(str(tmp_path / "n.keras"))
    np.testing.assert_allclose(again.predict(x, verbose=0), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(again.layers[0].mean), np.mean(x, 0, keepdims=True), rtol=1e-6)
    model.save_weights(str(tmp_path / "n.weights.h5"))
    fresh = K.Sequential([K.Input((3,)), L.Normalization(), L.Dense(2)])
    fresh.load_weights(str(tmp_path / "n.weights.h5"))
    np.testing.assert_allclose(fresh.predict(x, verbose=0), want, rtol=1e-6)


# -- callbacks that write files ---------------------------------------------------------------------
def _cb_data():
    rng = np.random.default_rng(0)
    x = rng.random((32, 3)).astype("float32")
    return x, (x @ np.array([[1.0], [2.0], [-1.0]], "float32")).astype("float32")


def _cb_model():
    m = K.Sequential([K.Input((3,)), L.Dense(1, kernel_initializer="ones")])
    m.compile(K.optimizers.SGD(0.05), "mse", metrics=["mae"])
    return m


def test_model_checkpoint_modes_files_and_messages(tmp_path, capsys):
    x, y = _cb_data()
    out = str(tmp_path)
    cbs = [
        K.callbacks.ModelCheckpoint(
            os.path.join(out, "w-{epoch:02d}-{val_loss:.2f}.weights.h5"), save_weights_only=True, verbose=1
        ),
        K.callbacks.ModelCheckpoint(
            os.path.join(out, "best.keras"), monitor="val_loss", save_best_only=True, verbose=1
        ),
        K.callbacks.ModelCheckpoint(os.path.join(out, "b{batch}.weights.h5"), save_weights_only=True, save_freq=3),
        K.callbacks.CSVLogger(os.path.join(out, "log.csv")),
    ]
    m = _cb_model()
    m.fit(x, y, batch_size=16, epochs=3, verbose=0, validation_data=(x[:8], y[:8]), callbacks=cbs)
    val = m.history.history["val_loss"]
    # every 3 batches of 2 per epoch: after batch 2 of epoch 2 and batch 2 of epoch 3 (Keras' {batch} is 1-based)
    assert sorted(os.listdir(out)) == ["b1.weights.h5", "b2.weights.h5", "best.keras", "log.csv"] + [
        f"w-{e + 1:02d}-{v:.2f}.weights.h5" for e, v in enumerate(val)
    ]
    text = capsys.readouterr().out
    first = os.path.join(out, f"w-01-{val[0]:.2f}.weights.h5")
    best = os.path.join(out, "best.keras")
    assert text.startswith(
        f"\nEpoch 1: saving model to {first}\n\nEpoch 1: finished saving model to {first}\n"
        f"\nEpoch 1: val_loss improved from None to {val[0]:.5f}, saving model to {best}\n"
        f"\nEpoch 1: finished saving model to {best}\n"
    )
    assert f"\nEpoch 2: val_loss improved from {val[0]:.5f} to {val[1]:.5f}, saving model to {best}\n" in text
    assert K.models.load_model(best).count_params() == 4
    with open(os.path.join(out, "log.csv")) as f:
        rows = f.read().splitlines()
    assert rows[0] == "epoch,loss,mae,val_loss,val_mae" and rows[1].startswith("0,") and len(rows) == 4
    assert float(rows[3].split(",")[3]) == pytest.approx(val[2])


def test_model_checkpoint_best_only_skips_and_says_so(tmp_path, capsys):
    x, y = _cb_data()
    ck = K.callbacks.ModelCheckpoint(
        str(tmp_path / "m.keras"), monitor="loss", save_best_only=True, verbose=1, initial_value_threshold=0.0
    )
    _cb_model().fit(x, y, epochs=1, verbose=0, callbacks=[ck])
    assert capsys.readouterr().out == "\nEpoch 1: loss did not improve from 0.00000\n"
    assert not os.path.exists(tmp_path / "m.keras")


def test_model_checkpoint_suffix_errors_match_keras():
    with pytest.raises(
        ValueError,
        match=r"When using `save_weights_only=True` in `ModelCheckpoint`, the filepath "
        r"provided must end in `.weights.h5` \(Keras weights format\). Received: "
        r"filepath=a.h5",
    ):
        K.callbacks.ModelCheckpoint("a.h5", save_weights_only=True)
    with pytest.raises(
        ValueError,
        match=r"The filepath provided must end in `.keras` \(Keras model format\). "
        r"Received: filepath=a.weights",
    ):
        K.callbacks.ModelCheckpoint("a.weights")
    with pytest.raises(ValueError, match="Unrecognized save_freq: x. Expected save_freq are 'epoch' or integer"):
        K.callbacks.ModelCheckpoint("a.keras", save_freq="x")
    with pytest.raises(KeyError, match='Failed to format this callback filepath: "{nope}.keras"'):
        ck = K.callbacks.ModelCheckpoint("{nope}.keras")
        ck._file_path(0, None, {})


def test_backup_and_restore_resumes_where_training_stopped(tmp_path):
    x, y = _cb_data()
    backup = str(tmp_path / "backup")

    class Stop(K.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 1:
                raise RuntimeError("interrupted")

    m = _cb_model()
    with pytest.raises(RuntimeError):
        m.fit(x, y, epochs=5, verbose=0, shuffle=False, callbacks=[K.callbacks.BackupAndRestore(backup), Stop()])
    assert sorted(os.listdir(backup)) == ["latest.weights.h5", "training_metadata.json"]
    assert json.load(open(os.path.join(backup, "training_metadata.json"))) == {"epoch": 2, "batch": 0}
    resumed = _cb_model()
    h = resumed.fit(x, y, epochs=5, verbose=0, shuffle=False, callbacks=[K.callbacks.BackupAndRestore(backup)])
    assert h.epoch == [2, 3, 4] and not os.path.exists(backup)  # deleted at the end, as Keras
    assert int(resumed.optimizer.iterations.numpy()) == 5  # the optimizer state was restored too
    straight = _cb_model()
    straight.fit(x, y, epochs=5, verbose=0, shuffle=False)
    for a, b in zip(resumed.get_weights(), straight.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    with pytest.raises(ValueError, match="Empty `backup_dir` argument passed"):
        K.callbacks.BackupAndRestore("")


def test_csv_logger_appends_without_a_second_header(tmp_path):
    x, y = _cb_data()
    path = str(tmp_path / "log.csv")
    m = _cb_model()
    m.fit(x, y, epochs=2, verbose=0, callbacks=[K.callbacks.CSVLogger(path, separator=";")])
    m.fit(x, y, epochs=1, verbose=0, callbacks=[K.callbacks.CSVLogger(path, separator=";", append=True)])
    rows = open(path).read().splitlines()
    assert rows[0] == "epoch;loss;mae;val_loss;val_mae" and [r.split(";")[0] for r in rows[1:]] == ["0", "1", "0"]
    assert rows[1].split(";")[3:] == ["NA", "NA"]  # no validation: Keras still writes the val_ columns


def test_compiled_metric_objects_come_back_from_a_keras_file(tmp_path):
    """compile(metrics=[SparseCategoricalAccuracy()]) as the save-and-load tutorial: Metric.from_config."""
    m = K.Sequential([K.Input((4,)), L.Dense(3)])
    m.compile("adam", K.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=[K.metrics.SparseCategoricalAccuracy()])
    x, y = np.ones((4, 4), "float32"), np.array([0, 1, 2, 1])
    m.fit(x, y, verbose=0)
    m.save(str(tmp_path / "m.keras"))
    n = K.models.load_model(str(tmp_path / "m.keras"))
    assert n.evaluate(x, y, verbose=0) == m.evaluate(x, y, verbose=0)
    assert K.metrics.BinaryAccuracy(threshold=0.3).get_config() == {"name": "binary_accuracy", "dtype": "float32",
                                                                    "threshold": 0.3}
    assert K.metrics.BinaryAccuracy.from_config({"name": "b", "dtype": "float32", "threshold": 0.3}).get_config() \
        == {"name": "b", "dtype": "float32", "threshold": 0.3}


def test_multi_head_attention_archive_both_ways(tmp_path):
    # mha.keras: Keras 3.15.1 after set_random_seed(3), uncompiled:
    # Input((4, 5)) -> MultiHeadAttention(2, 3)(x, x) -> Dense(2). Keras names its projections' groups after
    # the public query_dense/... properties and writes build_config as a shapes_dict (query and value shapes)
    x, y = io_of("mha")
    loaded = K.models.load_model(fixture("mha.keras"))
    np.testing.assert_allclose(loaded.predict(x, verbose=0), y, rtol=1e-6, atol=1e-6)
    tf.keras.utils.set_random_seed(3)
    inp = K.Input((4, 5))
    out = L.MultiHeadAttention(2, 3)(inp, inp)
    model = K.Model(inp, L.Dense(2)(out))
    np.testing.assert_allclose(model.predict(x, verbose=0), y, rtol=1e-6, atol=1e-6)  # Keras's initial weights
    path = str(tmp_path / "mha.keras")
    model.save(path)
    config, _, tree = archive_parts(path)
    k_config, _, k_tree = archive_parts(fixture("mha.keras"))
    # Keras's softmax and dropout sublayers hold no variables: their groups are empty, in tapeflow's file too
    assert tree == k_tree
    _same_classes(k_config, config)
    mha_cfg = [c for c in config["config"]["layers"] if c["class_name"] == "MultiHeadAttention"][0]
    assert mha_cfg["build_config"] == {"shapes_dict": {"query_shape": [None, 4, 5], "value_shape": [None, 4, 5]}}
    np.testing.assert_array_equal(K.models.load_model(path).predict(x, verbose=0), model.predict(x, verbose=0))


def _ops_model(np_module=np):
    inp = K.Input((4,))
    x = L.Dense(4)(inp)
    parts = [x + 1, 1 - x, 2 * x, x / 2, -x, abs(x), x ** 2, 2 ** x, x // 2, x % 2, x[:, 1:3],
             x @ np.ones((4, 2), "float32"), round(x), x - np.arange(4, dtype="float32"), x[..., 0:1], x[:, None, 0]]
    yb = ((x > 0) & (x < 2)) | ~(x != 0) ^ (x <= -1)
    return K.Model(inp, [L.Concatenate()(parts), yb])


def test_python_operators_on_keras_tensors_save_as_keras_operations(tmp_path):
    # ops.keras: Keras 3.15.1 after set_random_seed(5), the model of _ops_model. Keras saves each operator as a
    # keras.src.ops.numpy operation whose inbound node holds the operator's arguments in call order (2 * x is
    # (2, x)), with numpy constants as __numpy__ and index keys as __slice__ / __ellipsis__ markers
    data = np.load(fixture("ops_io.npz"))
    loaded = K.models.load_model(fixture("ops.keras"))
    y, yb = loaded.predict(data["x"], verbose=0)
    np.testing.assert_allclose(y, data["y"], rtol=1e-6)
    np.testing.assert_array_equal(yb, data["yb"])
    assert [layer.name for layer in loaded.layers] == ["input_layer", "dense", "concatenate"]

    K.backend.clear_session()
    model = _ops_model()
    model.set_weights(loaded.get_weights())
    path = str(tmp_path / "ops.keras")
    model.save(path)
    config, _, _ = archive_parts(path)
    k_config, _, _ = archive_parts(fixture("ops.keras"))

    def operations(c):
        return {e["name"]: e for e in c["config"]["layers"] if e["module"] == "keras.src.ops.numpy"}

    assert operations(config) == operations(k_config)
    assert operations(config)["subtract"]["inbound_nodes"][0]["args"][0] == 1
    again = K.models.load_model(path)
    y2, yb2 = again.predict(data["x"], verbose=0)
    np.testing.assert_allclose(y2, data["y"], rtol=1e-6)
    np.testing.assert_array_equal(yb2, data["yb"])


def test_loading_an_unknown_keras_operation_names_it(tmp_path):
    K.backend.clear_session()
    inp = K.Input((4,))
    model = K.Model(inp, L.Dense(2)(inp) * 2.0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    config, _, _ = archive_parts(path)
    op = [e for e in config["config"]["layers"] if e["module"] == "keras.src.ops.numpy"][0]
    assert op["class_name"] == "Multiply" and op["inbound_nodes"][0]["args"][1] == 2.0
    op["class_name"] = op["registered_name"] = "NotAKerasOperation"
    with zipfile.ZipFile(path) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    parts["config.json"] = json.dumps(config).encode()
    with zipfile.ZipFile(path, "w") as z:
        for n, b in parts.items():
            z.writestr(n, b)
    with pytest.raises(NotImplementedError, match="keras.src.ops.numpy.NotAKerasOperation"):
        K.models.load_model(path)
    with pytest.raises(TypeError, match="cannot be used as a boolean"):
        bool(inp > 0)


def test_include_optimizer_false_still_saves_the_compile_state_in_keras_archives(tmp_path):
    # Keras 3 reads include_optimizer only in its legacy .h5 writer: a .keras archive keeps compile_config and
    # the optimizer's variables, and the loaded model is compiled (checked against Keras 3.15)
    m = K.Sequential([K.Input((2,)), L.Dense(1)])
    m.compile("adam", "mse")
    m.fit(np.ones((4, 2), "float32"), np.ones((4, 1), "float32"), verbose=0)
    path = str(tmp_path / "m.keras")
    m.save(path, include_optimizer=False)
    with zipfile.ZipFile(path) as z:
        assert json.loads(z.read("config.json"))["compile_config"]["loss"] == "mse"
    again = K.models.load_model(path)
    assert int(again.optimizer.iterations.numpy()) == 1
    assert repr(again.optimizer).startswith("<tapeflow.keras.optimizers.adam.Adam object at 0x")


# -- the legacy whole-model HDF5 file (model.save("m.h5")) ------------------------------------------------
def _h5_layout(path):
    """Root attributes (JSON decoded) and {dataset path: shape} / {group: weight_names} of a legacy .h5 file."""
    with h5py.File(path, "r") as f:
        attrs = {k: (json.loads(v) if k.endswith("_config") else (v.decode() if isinstance(v, bytes) else v))
                 for k, v in f.attrs.items()}
        tree = {}

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                tree[name] = obj.shape
            elif "weight_names" in obj.attrs:
                tree[name + "/"] = [n.decode() if isinstance(n, bytes) else n for n in obj.attrs["weight_names"]]

        f.visititems(visit)
        names = f["model_weights"].attrs["layer_names"]
        tree["layer_names"] = [n.decode() if isinstance(n, bytes) else n for n in names]
    return attrs, tree


def _legacy_model():
    return K.Sequential([K.Input((4,)), L.Dense(8, activation="relu"), L.Dropout(0.2), L.BatchNormalization(),
                         L.Dense(3)])


def test_legacy_h5_model_both_ways(tmp_path):
    # legacy.h5: Keras 3.15.1, the save-and-load tutorial's model.save('my_model.h5') on _legacy_model compiled
    # with Adam, SparseCategoricalCrossentropy(from_logits=True), SparseCategoricalAccuracy, after 2 steps
    data = np.load(fixture("legacy_io.npz"))
    loaded = K.models.load_model(fixture("legacy.h5"))
    np.testing.assert_allclose(loaded.predict(data["x"], verbose=0), data["y"], rtol=1e-6, atol=1e-6)
    assert int(loaded.optimizer.iterations.numpy()) == 2
    assert isinstance(loaded.loss, K.losses.SparseCategoricalCrossentropy) and loaded.loss.from_logits
    # Keras 3.15 builds the optimizer for the model's own variables (none): only iterations and learning_rate
    # are restored, and fit() on the loaded model raises (TF 2.21 does both)
    assert [v.path for v in loaded.optimizer.variables] == ["adam/iteration", "adam/learning_rate"]
    y = np.arange(8) % 3
    with pytest.raises(ValueError, match="Unknown variable: <Variable path=sequential/dense/kernel"):
        loaded.fit(data["x"], y, verbose=0)

    K.backend.clear_session()
    model = _legacy_model()
    model.compile(optimizer="adam", loss=K.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=[K.metrics.SparseCategoricalAccuracy()])
    model.fit(data["x"], y, epochs=2, verbose=0)
    path = str(tmp_path / "my_model.h5")
    model.save(path)
    attrs, tree = _h5_layout(path)
    k_attrs, k_tree = _h5_layout(fixture("legacy.h5"))
    assert tree == k_tree
    assert attrs["training_config"] == k_attrs["training_config"]
    assert [e["class_name"] for e in attrs["model_config"]["config"]["layers"]] == \
        [e["class_name"] for e in k_attrs["model_config"]["config"]["layers"]]
    assert not any(k in e for e in attrs["model_config"]["config"]["layers"] for k in ("module", "build_config"))
    again = K.models.load_model(path)
    np.testing.assert_array_equal(again.predict(data["x"], verbose=0), model.predict(data["x"], verbose=0))
    assert again.evaluate(data["x"], y, verbose=0) == model.evaluate(data["x"], y, verbose=0)
    # load_weights reads a legacy file too (by layer order, as Keras)
    fresh = _legacy_model()
    fresh.load_weights(path)
    np.testing.assert_array_equal(fresh.predict(data["x"], verbose=0), model.predict(data["x"], verbose=0))
    with pytest.raises(ValueError, match="Layer count mismatch"):
        K.Sequential([K.Input((4,)), L.Dense(3)]).load_weights(path)


def test_legacy_h5_functional_uncompiled_and_overwrite(tmp_path):
    K.backend.clear_session()
    inp = K.Input((4,), name="x")
    a = L.Dense(8, activation="relu")(inp)
    out = L.Dense(2)(L.Add()([a, L.BatchNormalization()(a)]) * 2.0)
    model = K.Model(inp, out)
    path = str(tmp_path / "f.hdf5")
    model.save(path, include_optimizer=False)
    with pytest.warns(UserWarning, match="No training configuration"):
        again = K.models.load_model(path)
    x = np.linspace(-1, 1, 8).reshape(2, 4).astype("float32")
    np.testing.assert_array_equal(again.predict(x, verbose=0), model.predict(x, verbose=0))
    with pytest.raises(FileExistsError):
        model.save(path, overwrite=False)
    with pytest.raises(ValueError, match="No model config"):
        with h5py.File(str(tmp_path / "empty.h5"), "w"):
            pass
        K.models.load_model(str(tmp_path / "empty.h5"))


def test_lambda_layers_save_their_bytecode_and_load_only_outside_safe_mode(tmp_path):
    # Keras 3 writes a Lambda's Python lambda as marshalled bytecode ("__lambda__") and refuses it in safe mode
    inp = tf.keras.Input((3,))
    m = tf.keras.Model(inp, tf.keras.layers.Lambda(lambda t, s=2.0: t * s + 1.0, name="lam")(inp))
    path = str(tmp_path / "lam.keras")
    m.save(path)
    cfg = m.get_layer("lam").get_config()["function"]
    assert cfg["class_name"] == "__lambda__" and set(cfg["config"]) == {"code", "defaults", "closure"}
    with pytest.raises(ValueError, match="Requested the deserialization of a `Lambda` layer whose `function` is a "
                                         "Python lambda. This carries a potential risk"):
        tf.keras.models.load_model(path)
    with pytest.raises(ValueError, match="safe_mode=False"):
        tf.keras.models.model_from_json(m.to_json())
    loaded = tf.keras.models.load_model(path, safe_mode=False)
    np.testing.assert_array_equal(loaded.predict(np.ones((1, 3), "float32"), verbose=0), [[3.0, 3.0, 3.0]])
    # a function that names `mask` gets the call's mask (Keras files record mask=None in the node's kwargs)
    seen = []
    layer = tf.keras.layers.Lambda(lambda t, mask=None: seen.append(mask) or t)
    layer(tf.ones((1, 2)), mask=None)
    assert seen == [None]
    with pytest.warns(UserWarning, match="The object being serialized includes a `lambda`"):
        entry = tf.keras.saving.serialize_keras_object(lambda x: x + 1)
    assert entry["class_name"] == "__lambda__"
    with pytest.raises(ValueError, match="Requested the deserialization of a Python lambda"):
        tf.keras.saving.deserialize_keras_object(entry)
    assert tf.keras.saving.deserialize_keras_object(entry, safe_mode=False)(1) == 2


def test_metric_add_weight_losses_get_and_layers_serialize_as_keras():
    class Total(tf.keras.metrics.Metric):  # a Keras 2-style metric: add_weight with an initializer
        def __init__(self, **kw):
            super().__init__(name="total", **kw)
            self.t = self.add_weight(name="t", initializer="ones")
            self.v = self.add_weight(shape=(2,), name="v", initializer=tf.keras.initializers.Constant(3.0))

        def update_state(self, x):
            self.t.assign_add(tf.reduce_sum(x))

        def result(self):
            return self.t

    m = Total()
    assert float(m.t.numpy()) == 1.0 and m.v.numpy().tolist() == [3.0, 3.0] and m.t.trainable is False
    m.update_state(tf.constant([2.0, 3.0]))
    assert float(m.result()) == 6.0
    assert tf.keras.losses.get("mse") is tf.keras.losses.mean_squared_error
    assert isinstance(tf.keras.losses.get("MeanSquaredError"), tf.keras.losses.MeanSquaredError)
    d = tf.keras.layers.serialize(tf.keras.layers.Dense(2, name="d"))
    assert d["class_name"] == "Dense" and d["config"]["units"] == 2
    assert isinstance(tf.keras.layers.deserialize(d), tf.keras.layers.Dense)
    with pytest.raises(ValueError, match="not a `keras.layers.Layer`"):
        tf.keras.layers.deserialize(tf.keras.losses.serialize(tf.keras.losses.MeanSquaredError()))


def test_functional_config_keeps_the_structure_of_inputs_and_outputs(tmp_path):
    # Keras's tree.map_structure / map_tensors (values from Keras 3.15.1): a dict of outputs stays a dict through
    # get_config, .keras files and load_model, so predict of the loaded model gives a dict too
    i1, i2 = K.Input((3,), name="a"), K.Input((2,), name="b")
    h = L.concatenate([i1, i2])
    m = K.Model({"a": i1, "b": i2}, {"y": L.Dense(1, name="y")(h), "z": L.Dense(2, name="z")(h)})
    c = m.get_config()
    assert c["input_layers"] == {"a": ["a", 0, 0], "b": ["b", 0, 0]}
    assert c["output_layers"] == {"y": ["y", 0, 0], "z": ["z", 0, 0]}
    m2 = K.Model([i1, i2], [L.Dense(1, name="y2")(h), (L.Dense(2, name="z2")(h),)])
    assert m2.get_config()["output_layers"] == [["y2", 0, 0], (["z2", 0, 0],)]
    m.save(str(tmp_path / "d.keras"))
    loaded = K.models.load_model(str(tmp_path / "d.keras"))
    x = {"a": np.ones((1, 3), "float32"), "b": np.ones((1, 2), "float32")}
    out = loaded.predict(x, verbose=0)
    assert isinstance(out, dict) and sorted(out) == ["y", "z"]
    np.testing.assert_allclose(out["z"], m.predict(x, verbose=0)["z"], rtol=1e-6)
    assert loaded.get_config()["output_layers"] == {"y": ["y", 0, 0], "z": ["z", 0, 0]}


def test_an_explicit_training_argument_is_saved_in_the_node_as_keras(tmp_path):
    # Keras 3.15.1 keeps `training=` in inbound_nodes' kwargs: Monte-Carlo dropout (Dropout(...)(x, training=True))
    # stays on after load_model when the model is called without `training`; predict still runs inference
    i = K.Input((100,))
    base = K.Sequential([K.Input((100,)), L.Dense(100, kernel_initializer="identity")], name="base")
    m = K.Model(i, L.Dropout(0.5)(base(i, training=False), training=True))
    kwargs = {e["name"]: [n["kwargs"] for n in e["inbound_nodes"]] for e in m.get_config()["layers"]}
    assert kwargs["base"] == [{"training": False}] and kwargs["dropout"] == [{"training": True}]
    m.save(str(tmp_path / "mc.keras"))
    back = K.models.load_model(str(tmp_path / "mc.keras"))
    x = np.ones((1, 100), "float32")
    assert int((back(x).numpy() == 0).sum()) > 10 and int((back.predict(x, verbose=0) == 0).sum()) == 0
