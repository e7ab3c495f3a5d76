"""tf.keras.utils.FeatureSpace as Keras 3.15: every feature kind, crosses, adapt on tf.data or a dict, concat and
dict outputs, symbolic inputs/encodings for models, get_config and .keras files both ways (a file real Keras
wrote, pinned in tests/fixtures/keras/feature_space/ by tools/keras_feature_space/make_fixture.py)."""

import json
import os

import numpy as np
import pytest

import tapeflow as tf

keras = tf.keras
FS = keras.utils.FeatureSpace
HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras", "feature_space")
with open(os.path.join(HERE, "expected_keras315.json")) as _f:
    EXPECTED = json.load(_f)

DATA = {  # make_fixture.py's table
    "f": [0.5, 1.5, -2.0, 3.0, 0.0, 1.0], "fn": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    "fr": [10.0, 20.0, 30.0, 40.0, 50.0, 60.0], "fd": [0.1, 0.4, 0.35, 0.8, 0.9, 0.2], "ic": [1, 2, 2, 3, 5, 1],
    "sc": ["a", "b", "a", "c", "b", "a"], "sh": ["x", "y", "z", "x", "w", "y"], "ih": [10, 20, 30, 10, 40, 50],
}
DTYPES = {"f": "float32", "fn": "float32", "fr": "float32", "fd": "float32", "ic": "int32", "sc": None, "sh": None,
          "ih": "int32"}


def _arrays():
    return {k: np.array(v, DTYPES[k]) for k, v in DATA.items()}


def _space():
    tf.keras.backend.clear_session()
    fs = FS(features={"f": "float", "fn": "float_normalized", "fr": FS.float_rescaled(scale=0.1, offset=1.0),
                      "fd": FS.float_discretized(num_bins=3), "ic": "integer_categorical",
                      "sc": FS.string_categorical(num_oov_indices=0), "sh": FS.string_hashed(num_bins=4),
                      "ih": FS.integer_hashed(num_bins=3)},
            crosses=[FS.cross(("ic", "sc"), crossing_dim=5), ("sc", "sh")], crossing_dim=7, output_mode="concat")
    fs.adapt(tf.data.Dataset.from_tensor_slices(_arrays()).batch(4))
    return fs


def _without_shared_ids(value):
    if isinstance(value, dict):
        return {k: _without_shared_ids(v) for k, v in value.items() if k != "shared_object_id"}
    if isinstance(value, list):
        return [_without_shared_ids(v) for v in value]
    return value


def test_encodings_inputs_and_config_equal_keras():
    fs = _space()
    batch = {k: v[:3] for k, v in _arrays().items()}
    np.testing.assert_array_equal(fs(batch).numpy(), EXPECTED["batch"])
    row = fs({k: v[3] for k, v in _arrays().items()})  # one row of scalars: one vector
    assert row.shape == (33,)
    np.testing.assert_array_equal(row.numpy(), EXPECTED["row"])
    assert {k: [v.shape.as_list() if hasattr(v.shape, "as_list") else list(v.shape), v.dtype]
            for k, v in fs.get_inputs().items()} == EXPECTED["inputs"]
    assert list(fs.get_encoded_features().shape) == EXPECTED["encoded_shape"]
    config = json.loads(json.dumps(tf.keras.saving.serialize_keras_object(fs)))
    assert config == _without_shared_ids(EXPECTED["config"])
    dict_space = FS(features={"ic": "integer_categorical", "sc": "string_categorical", "f": "float"},
                    crosses=[("ic", "sc")], output_mode="dict")
    dict_space.adapt({k: DATA[k] for k in ("ic", "sc", "f")})  # a dict of lists: Keras slices it
    out = dict_space({k: _arrays()[k][:2] for k in ("ic", "sc", "f")})
    assert {k: v.numpy().tolist() for k, v in out.items()} == EXPECTED["dict"]


def test_reads_keras_file_and_writes_one_it_reads_back(tmp_path):
    batch = {k: v[:3] for k, v in _arrays().items()}
    loaded = tf.keras.saving.load_model(os.path.join(HERE, "space.keras"))  # written by real Keras
    assert type(loaded) is FS
    np.testing.assert_array_equal(loaded(batch).numpy(), EXPECTED["batch"])
    path = os.path.join(tmp_path, "space.keras")
    _space().save(path)
    again = tf.keras.saving.load_model(path)
    np.testing.assert_array_equal(again(batch).numpy(), EXPECTED["batch"])
    import zipfile

    with zipfile.ZipFile(path) as z, zipfile.ZipFile(os.path.join(HERE, "space.keras")) as k:
        assert sorted(z.namelist()) == sorted(k.namelist())  # Keras's layout: vocabularies under assets/
        assert json.loads(z.read("config.json")) == _without_shared_ids(json.loads(k.read("config.json")))


def test_keras_io_structured_data_workflow(tmp_path):
    rng = np.random.RandomState(0)
    n = 24
    data = {"sex": rng.randint(0, 2, n).astype("int64"), "thal": rng.choice(["normal", "fixed", "reversible"], n),
            "age": rng.uniform(30, 70, n).astype("float32"), "ca": rng.randint(0, 4, n).astype("int64")}
    ds = tf.data.Dataset.from_tensor_slices((data, rng.randint(0, 2, n).astype("float32"))).batch(8)
    fs = FS(features={"sex": FS.integer_categorical(num_oov_indices=0), "ca": FS.integer_categorical(num_oov_indices=0),
                      "thal": FS.string_categorical(num_oov_indices=0), "age": FS.float_discretized(num_bins=5)},
            crosses=[FS.cross(feature_names=("sex", "age"), crossing_dim=8),
                     FS.cross(feature_names=("thal", "ca"), crossing_dim=4)], output_mode="concat")
    fs.adapt(ds.map(lambda x, _: x))
    pre = ds.map(lambda x, y: (fs(x), y))
    assert next(iter(pre))[0].shape == (8, 2 + 4 + 3 + 5 + 8 + 4)
    encoded = fs.get_encoded_features()
    out = keras.layers.Dense(1, activation="sigmoid")(keras.layers.Dense(4, activation="relu")(encoded))
    training_model = keras.Model(inputs=encoded, outputs=out)
    training_model.compile(optimizer="adam", loss="binary_crossentropy")
    training_model.fit(pre, epochs=1, verbose=0, shuffle=False)
    inference_model = keras.Model(inputs=fs.get_inputs(), outputs=out)
    sample = {k: tf.convert_to_tensor([v[0]]) for k, v in data.items()}
    p = inference_model.predict(sample, verbose=0)
    np.testing.assert_allclose(p, training_model.predict(fs(sample), verbose=0), rtol=1e-6)
    path = os.path.join(tmp_path, "inference.keras")
    inference_model.save(path)
    np.testing.assert_allclose(keras.models.load_model(path).predict(sample, verbose=0), p, rtol=1e-6)


def test_errors_are_keras():
    with pytest.raises(ValueError, match="The `features` argument cannot be None or empty."):
        FS({})
    with pytest.raises(ValueError, match="Invalid feature type: bogus"):
        FS({"a": "bogus"})
    with pytest.raises(ValueError, match="Received unknown features: \\('a', 'z'\\)"):
        FS({"a": "float"}, crosses=[("a", "z")])
    with pytest.raises(ValueError, match="Expected one of {'dict', 'concat'}. Received: output_mode=x"):
        FS({"a": "float"}, output_mode="x")
    with pytest.raises(ValueError, match=r"You need to call `.adapt\(dataset\)` on the FeatureSpace"):
        FS({"a": "float_normalized"})({"a": [1.0]})
    fs = FS({"a": "float"})  # nothing to adapt: usable at once
    np.testing.assert_array_equal(fs({"a": [1.0, 2.0]}).numpy(), [[1.0], [2.0]])
    with pytest.raises(ValueError, match="A FeatureSpace can only be called with a dict."):
        fs([1.0])
    with pytest.raises(ValueError, match="Cannot concatenate features because feature 'c' has not been encoded"):
        FS({"c": FS.integer_categorical(output_mode="int")}).adapt({"c": [1, 2]})
