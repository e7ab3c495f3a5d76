"""``tf.keras.ops`` against real Keras 3.15: values, dtypes and shapes of every case in the fixture
(written by tools/keras_ops/make_fixture.py under Keras 3.15.1's TensorFlow backend), the operation
nodes a functional model records (module, class, config, inbound arguments), and files both ways."""

from __future__ import annotations

import json
import os
import zipfile

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras
OPS = K.ops
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras")
with open(os.path.join(FIXTURES, "ops_keras315.json")) as _f:
    DATA = json.load(_f)
CASES = {c[0]: c for c in DATA["cases"]}


def decode(v):
    if isinstance(v, dict):
        if "a" in v:
            return np.array(v["a"], dtype=v["dt"])
        if "t" in v:
            return tuple(decode(x) for x in v["t"])
        if "l" in v:
            return [decode(x) for x in v["l"]]
        return {k: decode(x) for k, x in v.items()}
    return v


def check(expected, got, label):
    if isinstance(expected, list):
        got = list(got) if isinstance(got, (tuple, list)) else got
        assert isinstance(got, list) and len(got) == len(expected), (label, got)
        for e, g in zip(expected, got):
            check(e, g, label)
        return
    if isinstance(expected, dict) and "a" in expected:
        assert hasattr(got, "dtype"), (label, got)
        assert got.dtype.name == expected["dt"], (label, got.dtype.name, expected["dt"])
        value = np.asarray(got)
        assert list(value.shape) == expected["shape"], (label, value.shape)
        want = np.array(expected["a"], dtype=value.dtype) if value.size else value
        if "eigh" in label:  # eigenvectors are defined up to their sign
            value, want = np.abs(value), np.abs(want)
        if value.dtype.kind in "fc":
            tol = 2e-3 if expected["dt"] in ("float16", "bfloat16") else 2e-6
            np.testing.assert_allclose(value, want, rtol=tol, atol=tol, err_msg=label)
        else:
            np.testing.assert_array_equal(value, want, err_msg=label)
        return
    assert got == expected, (label, got, expected)


@pytest.mark.parametrize("label", list(DATA["results"]))
def test_keras_ops_give_keras_values_and_dtypes(label):
    _, fn, args, kwargs = CASES[label]
    expected = DATA["results"][label]
    call = lambda: getattr(OPS, fn)(*[decode(a) for a in args], **{k: decode(v) for k, v in kwargs.items()})  # noqa: E731
    if "error" in expected:
        with pytest.raises(Exception) as info:
            call()
        assert type(info.value).__name__ == expected["error"]
        return
    check(expected["out"], call(), label)


def _symbolic(label):
    """The case applied to Inputs standing for its array arguments, as make_fixture.py does it."""
    _, fn, args, kwargs = CASES[label]
    K.backend.clear_session()
    inputs, values = [], []

    def sym(v):
        if isinstance(v, dict) and "a" in v:
            a = decode(v)
            inputs.append(K.Input(batch_shape=a.shape, dtype=v["dt"]))
            values.append(a)
            return inputs[-1]
        if isinstance(v, dict) and "l" in v:
            return [sym(x) for x in v["l"]]
        return decode(v)

    res = getattr(OPS, fn)(*[sym(a) for a in args], **{k: sym(v) for k, v in kwargs.items()})
    flat = list(res) if isinstance(res, (tuple, list)) else [res]
    return K.Model(inputs, flat), values


@pytest.mark.parametrize("label", [k for k, v in DATA["symbolic"].items() if isinstance(v, list)])
def test_keras_ops_on_keras_tensors_record_keras_operations(label):
    model, values = _symbolic(label)
    nodes = json.loads(json.dumps(
        [{k: e[k] for k in ("module", "class_name", "config", "inbound_nodes")}
         for e in model.get_config()["layers"] if e["module"].startswith("keras.src.ops")], default=repr))
    assert nodes == DATA["symbolic"][label]
    # the model computes what the function computes eagerly, and again once rebuilt from its config
    expected = DATA["results"][label]["out"]
    expected = expected if isinstance(expected, list) and not (expected and not isinstance(expected[0], dict)) \
        else [expected]
    if "eigh" in label or not all(isinstance(e, dict) for e in expected):
        return
    check(expected, model(values), label)
    rebuilt = K.Model.from_config(model.get_config())
    check(expected, rebuilt(values), label)


def test_a_model_of_keras_ops_saved_by_keras_loads_and_round_trips(tmp_path):
    # ops_fns.keras: tools/keras_ops/make_model_fixture.py under Keras 3.15.1 (set_random_seed(5)): 23 keras.ops
    # functions over a Dense layer's output, from keras.src.ops.numpy / nn / core / linalg / math
    data = np.load(os.path.join(FIXTURES, "ops_fns_io.npz"))
    model = K.models.load_model(os.path.join(FIXTURES, "ops_fns.keras"))
    y, idx = model.predict(data["x"], verbose=0)
    np.testing.assert_allclose(y, data["y"], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(idx, data["idx"])
    path = str(tmp_path / "m.keras")
    model.save(path)

    def operations(p):
        with zipfile.ZipFile(p) as z:
            layers = json.loads(z.read("config.json"))["config"]["layers"]
        return {e["name"]: e for e in layers if e["module"].startswith("keras.src.ops")}

    assert operations(path) == operations(os.path.join(FIXTURES, "ops_fns.keras"))
    y2, _ = K.models.load_model(path).predict(data["x"], verbose=0)
    np.testing.assert_allclose(y2, data["y"], rtol=1e-5, atol=1e-6)


def test_keras_ops_differentiate_and_trace():
    x = tf.Variable([[0.5, -1.0, 2.0]])

    @tf.function
    def f(v):
        return OPS.sum(OPS.softmax(v) * OPS.arange(3.0)) + OPS.mean(OPS.gelu(v))

    with tf.GradientTape() as tape:
        y = f(x)
    g = tape.gradient(y, x)
    with tf.GradientTape() as tape:
        y2 = OPS.sum(OPS.softmax(x) * OPS.arange(3.0)) + OPS.mean(OPS.gelu(x))
    np.testing.assert_allclose(y.numpy(), y2.numpy(), rtol=1e-6)
    np.testing.assert_allclose(g.numpy(), tape.gradient(y2, x).numpy(), rtol=1e-5)
    assert g.shape == (1, 3)


def test_missing_keras_ops_say_so_and_keras_tensors_point_to_keras_ops():
    missing = sorted(OPS._UNSUPPORTED)[0]  # (whichever is still missing)
    with pytest.raises(NotImplementedError, match=f"tf.keras.ops.{missing} is not implemented"):
        getattr(OPS, missing)
    assert not hasattr(OPS, "no_such_op")
    with pytest.raises(ValueError, match="from the namespaces `keras.layers` and `keras.ops`"):
        tf.reduce_sum(K.Input((2,)))
    assert {"nn", "numpy", "linalg"} <= set(dir(OPS)) and OPS.nn.relu is OPS.relu


def test_keras_top_level_classes():
    assert K.KerasTensor is type(K.Input((2,)))
    assert isinstance(K.losses.MeanSquaredError(), K.Loss) and isinstance(K.metrics.Mean(), K.Metric)
    assert isinstance(K.optimizers.Adam(), K.Optimizer)
    assert isinstance(K.initializers.Zeros(), K.Initializer) and isinstance(K.regularizers.L2(), K.Regularizer)


def test_top_k_gives_tfs_topkv2_namedtuple():
    # Keras 3.15.1's TF backend returns tf.math.top_k's result: it prints as TopKV2(values=..., indices=...)
    r = K.ops.top_k(K.ops.array([3.0, 1.0, 2.0]), k=2)
    assert type(r).__name__ == "TopKV2" and r.values.numpy().tolist() == [3.0, 2.0]
    assert repr(r).startswith("TopKV2(values=<tf.Tensor: shape=(2,), dtype=float32")
    assert r.indices.numpy().tolist() == [0, 2]
    i = K.Input((3,))
    v, ix = K.ops.top_k(i, k=2)
    out = K.Model(i, [v, ix]).predict(np.array([[1.0, 3.0, 2.0]]), verbose=0)
    assert out[0].tolist() == [[3.0, 2.0]] and out[1].tolist() == [[1, 2]]
