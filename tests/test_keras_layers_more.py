"""Keras 3.15 layers against real Keras: each model of tools/keras_layers_more/make_fixture.py was saved by Keras
with fixed weights (tests/fixtures/keras/more/NAME.keras, with its input batch and Keras's predictions in
NAME_io.npz; the layer's config, the weights' paths and each layer's output shape in cases_keras315.json).
Here tapeflow loads each file and gives Keras's predictions (and, for layers that train differently, Keras's
training-call outputs and weight updates), the same config, weight paths and output shapes, and a file it
writes has Keras's layout and loads back (tests never import TF/Keras)."""

from __future__ import annotations

import io
import json
import os
import zipfile

import numpy as np
import pytest

import tapeflow as tf

h5py = pytest.importorskip("h5py")
K = tf.keras
L = tf.keras.layers
HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras", "more")
with open(os.path.join(HERE, "cases_keras315.json")) as f:
    CASES = json.load(f)


def _io(name):
    data = np.load(os.path.join(HERE, f"{name}_io.npz"))
    xs = [data[k] for k in sorted(data.files) if k.startswith("x")]
    return (xs if len(xs) > 1 else xs[0]), data


def _h5_tree(path):
    with zipfile.ZipFile(path) as z, h5py.File(io.BytesIO(z.read("model.weights.h5")), "r") as f:
        out = {}
        f.visititems(lambda name, obj: out.__setitem__(name, obj.shape) if isinstance(obj, h5py.Dataset) else None)
        return out


def _plain(v):
    return json.loads(json.dumps(v))


@pytest.mark.parametrize("name", sorted(CASES))
def test_keras_file_loads_with_keras_predictions(name):
    case = CASES[name]
    K.backend.clear_session()
    x, data = _io(name)
    model = K.models.load_model(os.path.join(HERE, f"{name}.keras"))
    np.testing.assert_allclose(model.predict(x, verbose=0), data["y"], rtol=2e-5, atol=2e-6)
    assert [[w.path, list(w.shape), bool(w.trainable)] for w in model.weights] == case["loaded_weights"]
    layer = model.get_layer(case["layer"])
    assert _plain(K.saving.serialize_keras_object(layer)) == case["config"]
    assert list(layer.get_config()) == case["config_keys"]
    for other, config in case.get("more_configs", {}).items():  # the augmentation layers of "augment"
        assert _plain(K.saving.serialize_keras_object(model.get_layer(other))) == config, other
    shapes = {lay.name: _plain(tf.nest.map_structure(lambda t: t.shape, lay.output)) for lay in model.layers
              if not isinstance(lay, L.InputLayer)}
    assert shapes == case["output_shapes"]
    if "y_train" in data.files:  # a training call: Keras's outputs and weight updates
        np.testing.assert_allclose(model(x, training=True).numpy(), data["y_train"], rtol=2e-5, atol=2e-6)
        for i, w in enumerate(model.weights):
            np.testing.assert_allclose(w.numpy(), data[f"w_after_{i}"], rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_file_written_by_tapeflow_has_keras_layout(name, tmp_path):
    K.backend.clear_session()
    x, data = _io(name)
    src = os.path.join(HERE, f"{name}.keras")
    model = K.models.load_model(src)
    path = str(tmp_path / f"{name}.keras")
    model.save(path)
    assert _h5_tree(path) == _h5_tree(src)
    K.backend.clear_session()
    again = K.models.load_model(path)
    np.testing.assert_allclose(again.predict(x, verbose=0), data["y"], rtol=2e-5, atol=2e-6)
    layer = again.get_layer(CASES[name]["layer"])
    assert _plain(K.saving.serialize_keras_object(layer)) == CASES[name]["config"]


def test_spectral_normalization_built_fresh_has_keras_weights():
    K.backend.clear_session()
    inp = K.Input((4,))
    model = K.Model(inp, L.SpectralNormalization(L.Dense(3, name="d"), power_iterations=2, name="sn")(inp))
    assert [[w.path, list(w.shape), bool(w.trainable)] for w in model.weights] == CASES["sn_dense"]["weights"]
    x, data = _io("sn_dense")
    loaded = K.models.load_model(os.path.join(HERE, "sn_dense.keras"))
    model.set_weights(loaded.get_weights())
    np.testing.assert_allclose(model(x).numpy(), data["y"], rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(model(x, training=True).numpy(), data["y_train"], rtol=2e-5, atol=2e-6)
    sn = model.get_layer("sn")
    assert [w.path for w in sn.trainable_weights] == ["sn/d/kernel", "sn/d/bias"]
    assert [w.path for w in sn.non_trainable_weights] == ["sn/vector_u"]
    with pytest.raises(ValueError, match=r"`power_iterations` should be greater than zero. Received: "
                                         r"`power_iterations=0`"):
        L.SpectralNormalization(L.Dense(2), power_iterations=0)
    with pytest.raises(ValueError, match="ReLU object has no attribute 'kernel' nor 'embeddings'"):
        L.SpectralNormalization(L.ReLU())(x)


def test_spectral_normalization_trains_in_fit_and_leaves_zero_kernels():
    K.backend.clear_session()
    sn = L.SpectralNormalization(L.Dense(2, kernel_initializer="zeros"))
    model = K.Sequential([K.Input((3,)), sn])
    model.compile("sgd", "mse")
    x, y = np.ones((4, 3), "float32"), np.ones((4, 2), "float32")
    before = sn.vector_u.numpy().copy()
    sn(x, training=True)  # an all-zero kernel is left as it is
    np.testing.assert_array_equal(sn.vector_u.numpy(), before)
    model.fit(x, y, epochs=1, verbose=0)
    kernel = sn.layer.kernel.numpy()
    assert np.abs(kernel).sum() > 0
    model.fit(x, y, epochs=1, verbose=0)  # the next training call divides the kernel by its top singular value
    sn(x, training=True)
    assert np.linalg.svd(sn.layer.kernel.numpy(), compute_uv=False)[0] == pytest.approx(1.0, rel=1e-3)


def test_group_query_attention_checks_and_shapes():
    K.backend.clear_session()
    with pytest.raises(ValueError, match="`num_query_heads` must be divisible by `num_key_value_heads`."):
        L.GroupQueryAttention(2, 3, 2)
    with pytest.raises(ValueError, match="`sliding_window` must be `None` or a positive integer"):
        L.GroupQueryAttention(2, 4, 2, sliding_window=0)
    layer = L.GroupQueryAttention(2, 4, 2)
    assert layer.name.startswith("grouped_query_attention")
    q, v = np.ones((2, 5, 6), "float32"), np.ones((2, 3, 6), "float32")
    out, scores = layer(q, v, return_attention_scores=True)
    assert out.shape == (2, 5, 6) and scores.shape == (2, 4, 5, 3)
    assert layer.compute_output_shape((None, 5, 6), (None, 3, 6)) == (None, 5, 6)
    with pytest.raises(ValueError, match="The last dimension of `query_shape` and `value_shape` must be equal"):
        layer.compute_output_shape((None, 5, 6), (None, 3, 4))
    inp = K.Input((5, 6))
    assert L.GroupQueryAttention(2, 4, 2)(inp, inp).shape == (None, 5, 6)


def test_conv_lstm_values_and_config_match_keras():
    # ConvLSTM2D(2, (3, 2), padding="same", return_sequences=True, return_state=True) on (2, 3, 5, 5, 2) inputs,
    # weights sin(0.37 i + k) / 2, from Keras 3.15.1
    K.backend.clear_session()

    def fixed(shape, k):
        return (np.sin(np.arange(int(np.prod(shape))) * 0.37 + k) * 0.5).reshape(shape).astype("float32")

    layer = L.ConvLSTM2D(filters=2, kernel_size=(3, 2), padding="same", return_sequences=True, return_state=True,
                         name="cl")
    x = fixed((2, 3, 5, 5, 2), 1)
    layer(x)
    assert [(w.path, tuple(w.shape)) for w in layer.weights] == [
        ("cl/conv_lstm_cell/kernel", (3, 2, 2, 8)), ("cl/conv_lstm_cell/recurrent_kernel", (3, 2, 2, 8)),
        ("cl/conv_lstm_cell/bias", (8,))]
    np.testing.assert_array_equal(layer.weights[2].numpy(), [0, 0, 1, 1, 0, 0, 0, 0])  # unit_forget_bias
    layer.set_weights([fixed(w.shape, i) for i, w in enumerate(layer.weights)])
    seq, h, c = layer(x)
    assert seq.shape == (2, 3, 5, 5, 2) and h.shape == c.shape == (2, 5, 5, 2)
    np.testing.assert_allclose(seq.numpy().ravel()[:4], [-0.03411, -0.07252, -0.01297, -0.05566], atol=2e-5)
    assert float(tf.reduce_sum(seq)) == pytest.approx(-20.11284065246582, rel=1e-5)
    assert float(tf.reduce_sum(h)) == pytest.approx(-7.585484981536865, rel=1e-5)
    assert layer.compute_output_shape((2, 3, 5, 5, 2)) == ((2, 3, 5, 5, 2), (2, 5, 5, 2), (2, 5, 5, 2))
    mask = np.array([[True, False, True], [True, True, False]])
    assert float(tf.reduce_sum(layer(x, mask=mask)[0])) == pytest.approx(-18.91667938232422, rel=1e-5)
    cfg = layer.get_config()
    assert list(cfg)[:9] == ["name", "trainable", "dtype", "return_sequences", "return_state", "go_backwards",
                             "stateful", "unroll", "zero_output_for_mask"]
    assert (cfg["kernel_size"], cfg["strides"], cfg["dilation_rate"]) == ((3, 2), (1, 1), (1, 1))
    assert L.ConvLSTM2D.from_config(cfg).get_config() == cfg
    with pytest.raises(ValueError, match="Specifying `strides > 1` is not compatible with `dilation_rate > 1`"):
        L.ConvLSTM2D(2, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="expected ndim=5, found ndim=4"):
        L.ConvLSTM2D(2, 3)(np.zeros((1, 2, 3, 3), "float32"))


def test_conv_lstm_trains_in_fit_and_under_tf_function():
    K.backend.clear_session()
    tf.keras.utils.set_random_seed(0)
    model = K.Sequential([K.Input((3, 4, 4, 1)), L.ConvLSTM2D(2, 3, padding="same", dropout=0.2,
                                                             recurrent_dropout=0.2, return_sequences=True),
                          L.ConvLSTM2D(1, 3, padding="same"), L.Flatten(), L.Dense(1)])
    model.compile("adam", "mse")
    x = np.random.RandomState(0).rand(4, 3, 4, 4, 1).astype("float32")
    y = np.ones((4, 1), "float32")
    first = model.evaluate(x, y, verbose=0)
    model.fit(x, y, epochs=3, verbose=0)
    assert model.evaluate(x, y, verbose=0) < first
    layer = model.layers[0]
    f = tf.function(lambda t: layer(t), input_signature=[tf.TensorSpec((None, None, 4, 4, 1), tf.float32)])
    np.testing.assert_allclose(f(x).numpy(), layer(x).numpy(), rtol=1e-6)
    stateful = L.ConvLSTM1D(2, 2, stateful=True)
    s = np.ones((2, 3, 5, 1), "float32")
    a = stateful(s).numpy()
    b = stateful(s).numpy()
    assert not np.allclose(a, b)
    stateful.reset_states()
    np.testing.assert_allclose(stateful(s).numpy(), a, rtol=1e-6)
