"""Writes the fixtures of tests/test_keras_feature_space.py with real Keras 3.15 (TF backend):

    /opt/tfvenv/bin/python tools/keras_feature_space/make_fixture.py

A FeatureSpace of every feature kind and two crosses, adapted on a small table: saved as
tests/fixtures/keras/feature_space/space.keras; its serialized config, its encodings of a batch and of one
row, and a dict-mode space's encodings, in feature_space/expected_keras315.json."""

import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures", "keras",
                   "feature_space")
FS = keras.utils.FeatureSpace

DATA = {
    "f": [0.5, 1.5, -2.0, 3.0, 0.0, 1.0],
    "fn": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    "fr": [10.0, 20.0, 30.0, 40.0, 50.0, 60.0],
    "fd": [0.1, 0.4, 0.35, 0.8, 0.9, 0.2],
    "ic": [1, 2, 2, 3, 5, 1],
    "sc": ["a", "b", "a", "c", "b", "a"],
    "sh": ["x", "y", "z", "x", "w", "y"],
    "ih": [10, 20, 30, 10, 40, 50],
}
DTYPES = {"f": "float32", "fn": "float32", "fr": "float32", "fd": "float32", "ic": "int32", "sc": None, "sh": None,
          "ih": "int32"}


def arrays(rows=slice(None)):
    return {k: np.array(v, DTYPES[k])[rows] for k, v in DATA.items()}


def main():
    os.makedirs(OUT, exist_ok=True)
    keras.utils.set_random_seed(1)
    fs = FS(features={"f": "float", "fn": "float_normalized", "fr": FS.float_rescaled(scale=0.1, offset=1.0),
                      "fd": FS.float_discretized(num_bins=3), "ic": "integer_categorical",
                      "sc": FS.string_categorical(num_oov_indices=0), "sh": FS.string_hashed(num_bins=4),
                      "ih": FS.integer_hashed(num_bins=3)},
            crosses=[FS.cross(("ic", "sc"), crossing_dim=5), ("sc", "sh")], crossing_dim=7, output_mode="concat")
    fs.adapt(tf.data.Dataset.from_tensor_slices(arrays()).batch(4))
    fs.save(os.path.join(OUT, "space.keras"))
    dict_space = FS(features={"ic": "integer_categorical", "sc": "string_categorical", "f": "float"},
                    crosses=[("ic", "sc")], output_mode="dict")
    dict_space.adapt({k: DATA[k] for k in ("ic", "sc", "f")})
    batch = {k: v[:3] for k, v in arrays().items()}
    expected = {
        "config": json.loads(json.dumps(keras.saving.serialize_keras_object(fs))),
        "batch": np.asarray(fs(batch)).tolist(),
        "row": np.asarray(fs({k: v[3] for k, v in arrays().items()})).tolist(),
        "dict": {k: np.asarray(v).tolist()
                 for k, v in dict_space({k: arrays()[k][:2] for k in ("ic", "sc", "f")}).items()},
        "inputs": {k: [list(v.shape), v.dtype] for k, v in fs.get_inputs().items()},
        "encoded_shape": list(fs.get_encoded_features().shape),
    }
    with open(os.path.join(OUT, "expected_keras315.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
