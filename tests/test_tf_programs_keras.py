"""TF2 tutorial-style programs (tests/tf_programs/keras_*.py) run on tapeflow and compared with
real TensorFlow 2.21 / Keras 3.15's outputs, pinned in tests/tf_programs/expected/<name>.json.

To re-pin after changing a program (needs TensorFlow, never imported here):
    cd tests/tf_programs && /opt/tfvenv/bin/python _run.py keras_quickstart tf > expected/keras_quickstart.json
"""
import importlib
import json
import math
import os
import sys

import numpy as np
import pytest

import tapeflow as tf

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_programs")
PROGRAMS = sorted(f[:-5] for f in os.listdir(os.path.join(HERE, "expected"))
                  if f.startswith("keras_") and f.endswith(".json"))


def _diffs(want, got, path=""):
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(want) != set(got):
            return [f"{path}: keys {sorted(want) if isinstance(want, dict) else want} != "
                    f"{sorted(got) if isinstance(got, dict) else got}"]
        return [d for k in want for d in _diffs(want[k], got[k], f"{path}/{k}")]
    if isinstance(want, list):
        if not isinstance(got, list) or len(want) != len(got):
            return [f"{path}: {want!r} != {got!r}"]
        return [d for i, (a, b) in enumerate(zip(want, got)) for d in _diffs(a, b, f"{path}[{i}]")]
    if isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        ok = math.isclose(want, got, rel_tol=2e-4, abs_tol=2e-4) or (math.isnan(want) and math.isnan(got))
        return [] if ok else [f"{path}: TF {want!r} != tapeflow {got!r}"]
    return [] if want == got else [f"{path}: TF {want!r} != tapeflow {got!r}"]


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_matches_tensorflow(name):
    sys.path.insert(0, HERE)
    try:
        prog = importlib.import_module(name)
    finally:
        sys.path.remove(HERE)
    with open(os.path.join(HERE, "expected", name + ".json")) as f:
        want = json.load(f)
    got = json.loads(json.dumps(prog.run(tf)))
    diffs = _diffs(want, got)
    assert not diffs, "\n".join(diffs[:20])


def test_global_pooling_1d_matches_keras():
    # values from TF 2.21 / Keras 3.15
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    mask = np.array([[1, 1, 0], [1, 0, 0]], bool)
    np.testing.assert_allclose(tf.keras.layers.GlobalAveragePooling1D()(x, mask=mask).numpy(),
                               [[2.0, 3.0, 4.0, 5.0], [12.0, 13.0, 14.0, 15.0]])
    assert tf.keras.layers.GlobalAveragePooling1D(keepdims=True)(x).shape == (2, 1, 4)
    np.testing.assert_allclose(tf.keras.layers.GlobalMaxPooling1D()(x).numpy(),
                               [[8.0, 9.0, 10.0, 11.0], [20.0, 21.0, 22.0, 23.0]])


def test_functional_model_is_functional_and_takes_dict_by_input_name():
    tf.keras.backend.clear_session()
    a = tf.keras.Input((2,), name="a")
    b = tf.keras.Input((1,), name="b")
    m = tf.keras.Model([a, b], tf.keras.layers.concatenate([a, tf.keras.layers.Dense(1, kernel_initializer="ones")(b)]))
    assert type(m).__name__ == "Functional" and isinstance(m, tf.keras.Model)
    out = m({"b": np.ones((1, 1), "float32"), "a": np.zeros((1, 2), "float32")})
    np.testing.assert_allclose(out.numpy(), [[0.0, 0.0, 1.0]])
    assert [layer.name for layer in m.layers] == ["b", "a", "dense", "concatenate"]  # Keras 3 order


def test_wrong_input_shape_in_fit_raises_without_fallback_warning():
    import warnings

    m = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    m.compile("sgd", "mse")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the eager retry fails too: only the user's ValueError, as TF
        with pytest.raises(ValueError, match="incompatible"):
            m.fit(np.ones((8, 4), "float32"), np.ones((8, 1), "float32"), verbose=0)


def test_sequential_built_by_its_first_call_has_that_calls_shapes():
    # TF 2.21 / Keras 3.15: a Sequential without Input builds for the first call's shape, batch included
    s = tf.keras.Sequential([tf.keras.layers.Dense(2), tf.keras.layers.Dense(5)])
    with pytest.raises(AttributeError):
        s.input_shape
    s(np.ones((4, 3), "float32"))
    assert s.input_shape == (4, 3) and s.output_shape == (4, 5)


def test_dataset_methods_tapeflow_lacks_raise_not_implemented():
    ds = tf.data.Dataset.range(4)
    with pytest.raises(NotImplementedError, match="fingerprint"):
        ds.fingerprint()


def test_keras_names_tapeflow_lacks_raise_not_implemented_and_hasattr_is_false():
    assert not hasattr(tf.keras.layers, "Flatten3D")
    with pytest.raises(NotImplementedError, match="Flatten3D"):
        tf.keras.layers.Flatten3D()
    with pytest.raises(NotImplementedError, match="Circle"):
        tf.keras.losses.Circle()
    with pytest.raises(AttributeError):
        tf.keras.losses.NoSuchLoss  # noqa: B018
