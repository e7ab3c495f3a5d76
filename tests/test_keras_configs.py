"""Every tapeflow Keras class's ``get_config()`` is Keras 3.15's, key for key and form for form.

tests/fixtures/keras/configs_keras315.json holds, per constructor expression (``K`` is ``tf.keras``), what
real Keras 3.15.1 gave: ``get_config()`` (a tuple written ``{"__tuple__": [...]}``, so tuple and list stay
apart), the ``module``/``class_name``/``registered_name`` of ``serialize_keras_object`` (whose ``config`` is
the same config as JSON), and, where it differs, ``get_config()`` of the object rebuilt from that JSON.
It was made by running the same expressions under Keras (/opt/tfvenv) and tapeflow (tools/keras_configs:
specs.py lists them, make_fixture.py says how to re-pin); each entry also round-trips through ``from_config``
and ``deserialize_keras_object`` here.
"""

import json
import os

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras
HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "fixtures", "keras", "configs_keras315.json")) as f:
    SPECS = json.load(f)


def _canon(v):
    """Python config -> the fixture's form (tuples marked, NumPy scalars as Python numbers)."""
    if isinstance(v, dict):
        return {str(k): _canon(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_canon(x) for x in v]
    if isinstance(v, tuple):
        return {"__tuple__": [_canon(x) for x in v]}
    if isinstance(v, np.generic):
        return {"__np__": str(v.dtype), "v": v.item()}
    return v


def _plain(v):
    """The fixture's form -> its JSON (tuples as lists), as serialize_keras_object writes it."""
    if isinstance(v, dict):
        if set(v) == {"__tuple__"}:
            return [_plain(x) for x in v["__tuple__"]]
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def _diff(want, got):
    keys = list(dict.fromkeys([*want, *got]))
    return {k: (want.get(k, "<missing>"), got.get(k, "<missing>")) for k in keys if want.get(k) != got.get(k)}


@pytest.mark.parametrize("label", sorted(SPECS))
def test_config_is_keras(label):
    spec = SPECS[label]
    K.backend.clear_session()
    obj = eval(spec["expr"], {"K": K})
    got = _canon(obj.get_config())
    assert got == spec["config"], _diff(spec["config"], got)
    assert list(got) == list(spec["config"])  # the order Keras prints
    serialized = json.loads(json.dumps(K.saving.serialize_keras_object(obj)))
    assert serialized == {**spec["serialized"], "config": _plain(spec["config"])}
    K.backend.clear_session()
    again = _canon(type(obj).from_config(obj.get_config()).get_config())
    assert again == spec["config"], _diff(spec["config"], again)
    K.backend.clear_session()
    loaded = _canon(K.saving.deserialize_keras_object(serialized).get_config())
    want = spec.get("loaded_config", spec["config"])
    assert loaded == want, _diff(want, loaded)


# -- behaviour behind the configs (numbers from Keras 3.15.1) -------------------------------------------------------
_W = np.array([[0.5, -2.0, 1.0], [1.5, 0.25, -3.0]], "float32")


@pytest.mark.parametrize("constraint, want", [
    (K.constraints.MaxNorm(1.0), [[0.316228, -0.992278, 0.316228], [0.948683, 0.124035, -0.948683]]),
    (K.constraints.MaxNorm(2.0, axis=1), [[0.436436, -1.745743, 0.872872], [0.891953, 0.148659, -1.783906]]),
    (K.constraints.NonNeg(), [[0.5, 0.0, 1.0], [1.5, 0.25, 0.0]]),
    (K.constraints.UnitNorm(), [[0.316228, -0.992278, 0.316228], [0.948683, 0.124035, -0.948683]]),
    (K.constraints.MinMaxNorm(0.5, 1.5, rate=0.5, axis=1),
     [[0.413663, -1.654654, 0.827327], [1.084482, 0.180747, -2.168965]]),
])
def test_constraints_project_as_keras(constraint, want):
    np.testing.assert_allclose(constraint(tf.constant(_W)).numpy(), want, rtol=1e-5, atol=1e-6)


def test_activity_regularizer_loss_is_divided_by_the_batch_size():
    d = K.layers.Dense(2, activity_regularizer=K.regularizers.L2(0.1), kernel_initializer="ones")
    d(np.array([[1.0, 2.0], [3.0, -1.0]], "float32"))
    np.testing.assert_allclose([float(v) for v in d.losses], [1.3], rtol=1e-6)


def test_fit_with_activity_regularizer_and_constraint_matches_keras():
    x = np.array([[1.0, 2.0], [3.0, -1.0]], "float32")
    m = K.Sequential([K.Input((2,)), K.layers.Dense(1, kernel_initializer="ones", activity_regularizer="l1",
                                                    kernel_constraint=K.constraints.NonNeg())])
    m.compile(optimizer=K.optimizers.SGD(0.5), loss="mse")
    h = m.fit(x, np.array([[-5.0], [1.0]], "float32"), epochs=2, verbose=0, batch_size=2)
    np.testing.assert_allclose(h.history["loss"], [32.525002, 15.320076], rtol=1e-5)
    np.testing.assert_allclose(m.layers[0].kernel.numpy(), [[8.02], [0.0]], rtol=1e-5)


def test_sparse_categorical_crossentropy_metric_ignore_class():
    # Keras 3.15: ignored labels count as 0 in the mean, unless a sample_weight is given
    p = np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1], [0.3, 0.3, 0.4]], "float32")
    m = K.metrics.SparseCategoricalCrossentropy(ignore_class=2)
    m.update_state(np.array([0, 2, 1, 2]), p)
    np.testing.assert_allclose(float(m.result()), 0.703352689743042, rtol=1e-6)
    m.update_state(np.array([[1], [0], [2], [0]]), p, sample_weight=np.array([1.0, 2.0, 3.0, 0.5]))
    np.testing.assert_allclose(float(m.result()), 1.161828637123108, rtol=1e-6)


def test_flatten_channels_first_moves_channels_last_first():
    x = np.arange(12, dtype="float32").reshape(1, 2, 3, 2)
    out = K.layers.Flatten(data_format="channels_first")(x).numpy()
    assert out.tolist() == [[0.0, 6.0, 1.0, 7.0, 2.0, 8.0, 3.0, 9.0, 4.0, 10.0, 5.0, 11.0]]


def test_regularizer_factors_and_errors_as_keras():
    assert K.regularizers.L1(0.1).get_config() == {"l1": 0.10000000149011612}  # Keras keeps l1 as float32
    np.testing.assert_allclose(K.regularizers.L1(0.3)(np.array([1.0, -2.0])).numpy(), 0.9000000357627869)
    with pytest.raises(ValueError, match=r"expected a non-negative float.Received: l2=-1"):
        K.regularizers.L2(-1)


def test_unsupported_options_say_so():
    with pytest.raises(NotImplementedError, match="renorm"):
        K.layers.BatchNormalization(renorm=True)
    with pytest.raises(TypeError, match="pool_size"):
        K.layers.AveragePooling2D()  # no default pool_size in Keras 3


_POLICY = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name": None}


def test_user_layer_auto_config_as_keras():
    class WithInit(K.layers.Layer):
        def __init__(self, units=3, **kwargs):
            super().__init__(**kwargs)

    class NoInit(K.layers.Layer):
        def call(self, x):
            return x

    class NoKwargs(K.layers.Layer):
        def __init__(self, units, act="relu"):
            super().__init__()

    class Overrides(K.layers.Layer):
        def get_config(self):
            return {**super().get_config(), "units": 2}

    K.backend.clear_session()
    assert WithInit(units=5, name="a").get_config() == {"name": "a", "units": 5, "trainable": True, "dtype": _POLICY}
    assert list(WithInit().get_config()) == ["name", "units", "trainable", "dtype"]
    assert NoInit(trainable=False).get_config() == {"name": "no_init", "activity_regularizer": None,
                                                     "trainable": False, "dtype": _POLICY, "autocast": True}
    assert NoKwargs(4).get_config() == {"units": 4, "act": "relu", "trainable": True, "dtype": _POLICY}
    assert Overrides().get_config() == {"name": "overrides", "trainable": True, "dtype": _POLICY, "units": 2}
    assert K.layers.Layer(activity_regularizer="l2").get_config()["activity_regularizer"] == {
        "module": "keras.regularizers", "class_name": "L2", "config": {"l2": 0.01}, "registered_name": None}


def test_old_config_forms_still_load():
    # Keras 3 reads a dtype given as a string and initializers given as names
    layer = K.layers.Dense.from_config({"units": 2, "dtype": "float64", "kernel_initializer": "ones",
                                        "kernel_regularizer": "l2", "name": "d"})
    assert layer.dtype == "float64" and layer.get_config()["kernel_initializer"]["class_name"] == "Ones"
    assert layer.get_config()["kernel_regularizer"]["config"] == {"l2": 0.01}


def test_bidirectional_zeroes_masked_steps_of_sequences_as_keras():
    # Keras forces zero_output_for_mask=return_sequences on both inner layers (and writes it in their configs)
    K.backend.clear_session()
    inp = K.Input((4,), dtype="int32")
    x = K.layers.Embedding(5, 3, mask_zero=True, embeddings_initializer=K.initializers.RandomNormal(seed=1))(inp)
    rnn = K.layers.SimpleRNN(2, return_sequences=True, kernel_initializer="ones", recurrent_initializer="identity")
    bi = K.layers.Bidirectional(rnn)
    out = K.Model(inp, bi(x)).predict(np.array([[1, 2, 0, 0], [3, 0, 4, 1]]), verbose=0)
    a, b, c, d, e, f = -0.08864, -0.25492, -0.25631, -0.17179, -0.11804, -0.12587
    want = [[[a, a, b, b], [c, c, d, d], [0, 0, 0, 0], [0, 0, 0, 0]],
            [[e, e, f, f], [0, 0, 0, 0], [-0.03733, -0.03733, -0.00795, -0.00795], [-0.12554, -0.12554, a, a]]]
    np.testing.assert_allclose(out, want, atol=1e-5)
    assert bi.get_config()["layer"]["config"]["zero_output_for_mask"] is True
    assert bi.get_config()["layer"]["config"]["name"] == "forward_simple_rnn"
    again = K.layers.Bidirectional.from_config(bi.get_config())
    assert (again.forward_layer.name, again.backward_layer.name) == ("forward_simple_rnn", "backward_simple_rnn")


def test_dot_layer_is_keras_batch_dot():
    r = np.random.default_rng(0)
    a, b = r.standard_normal((2, 3)).astype("float32"), r.standard_normal((2, 3)).astype("float32")
    c, d = r.standard_normal((2, 4, 3)).astype("float32"), r.standard_normal((2, 5, 3)).astype("float32")
    e = r.standard_normal((2, 3, 5)).astype("float32")
    np.testing.assert_allclose(K.layers.Dot(axes=1)([a, b]).numpy(), [[-0.41185], [0.21607]], atol=1e-5)
    out = K.layers.Dot(axes=2)([c, d]).numpy()
    assert out.shape == (2, 4, 5)
    np.testing.assert_allclose(out[0, 0], [0.57177, -5.08301, -3.62963, -2.03143, -4.92185], atol=1e-5)
    out = K.layers.Dot(axes=(1, 2))([a, d]).numpy()
    np.testing.assert_allclose(out[1], [0.11301, -0.19137, 0.46804, 1.20979, -0.32174], atol=1e-5)
    out = K.layers.Dot(axes=(2, 1), normalize=True)([c, e]).numpy()
    np.testing.assert_allclose(out[0, 1], [-0.74132, -0.98386, -0.1671, -0.0034, 0.48172], atol=1e-5)
    np.testing.assert_allclose(K.layers.dot([a, b], axes=-1, normalize=True).numpy(), [[-0.3517], [0.23385]],
                               atol=1e-5)
    i1, i2 = K.Input((4, 3)), K.Input((5, 3))
    assert K.Model([i1, i2], K.layers.Dot(axes=-1)([i1, i2])).output_shape == (None, 4, 5)
    with pytest.raises(ValueError, match=r"axis values 4 \(at axis 1\) != 3 \(at axis 1\)"):
        K.layers.Dot(axes=1)([c, e])
    x = tf.Variable(c)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(K.layers.Dot(axes=2)([x, d]))
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), np.broadcast_to(d.sum(1, keepdims=True), c.shape),
                               rtol=1e-5)


def test_upsampling2d_bilinear_is_keras_resize():
    x = np.arange(12, dtype="float32").reshape(2, 2, 3, 1)
    y = K.layers.UpSampling2D((2, 3), interpolation="bilinear")(x).numpy()
    assert y.shape == (2, 4, 9, 1)
    np.testing.assert_allclose(y[1, :, :, 0], [
        [6.0, 6.0, 6.33333, 6.66667, 7.0, 7.33333, 7.66667, 8.0, 8.0],
        [6.75, 6.75, 7.08333, 7.41667, 7.75, 8.08333, 8.41667, 8.75, 8.75],
        [8.25, 8.25, 8.58333, 8.91667, 9.25, 9.58333, 9.91667, 10.25, 10.25],
        [9.0, 9.0, 9.33333, 9.66667, 10.0, 10.33333, 10.66667, 11.0, 11.0]], atol=1e-5)
    m = K.Sequential([K.Input((None, None, 1)), K.layers.UpSampling2D(interpolation="bilinear")])
    assert m.predict(x, verbose=0).shape == (2, 4, 6, 1)
    up = K.layers.UpSampling2D(interpolation="bicubic")(np.arange(8, dtype="float32").reshape(1, 2, 2, 2))
    np.testing.assert_allclose(up.numpy()[0, 0, :, 0], [-0.5294, 0.0613, 1.2328, 1.8235], atol=1e-4)  # TF's
    with pytest.raises(ValueError, match="Invalid value for argument `interpolation`"):
        K.layers.UpSampling2D(interpolation="foo")(np.ones((1, 2, 2, 1), "float32"))


def test_unnamed_metrics_take_unique_names_as_keras():
    K.backend.clear_session()
    assert [K.metrics.Precision().name, K.metrics.Precision().name, K.metrics.AUC().name, K.metrics.AUC().name,
            K.metrics.TruePositives().name, K.metrics.TruePositives().name] == [
        "precision", "precision_1", "auc", "auc_1", "true_positives", "true_positives_1"]
    assert [K.metrics.Mean().name, K.metrics.Mean().name, K.metrics.Accuracy().name, K.metrics.Accuracy().name,
            K.metrics.Sum().name] == ["mean", "mean", "accuracy", "accuracy", "sum"]


def test_precision_recall_top_k_as_keras():
    K.backend.clear_session()
    yt = np.array([[0, 0, 1, 1], [1, 0, 1, 0]], "float32")
    yp = np.array([[0.1, 0.6, 0.3, 0.9], [0.8, 0.7, 0.2, 0.1]], "float32")
    cases = [(K.metrics.Precision(top_k=2), 0.285714), (K.metrics.Recall(top_k=1), 0.285714),
             (K.metrics.Precision(top_k=2, thresholds=0.5), 0.285714), (K.metrics.Recall(top_k=2, class_id=2), 0.0),
             (K.metrics.Precision(top_k=3, thresholds=[0.2, 0.75]), [0.444444, 0.571429])]
    for m, want in cases:
        m.update_state(yt, yp)
        m.update_state(yt[::-1], yp, sample_weight=np.array([1.0, 0.5]))
        np.testing.assert_allclose(m.result().numpy(), want, atol=1e-6)
    assert cases[0][0].get_config() == {"name": "precision", "dtype": "float32", "thresholds": None, "top_k": 2,
                                        "class_id": None}


def test_orthogonal_regularizer_as_keras():
    w = np.array([[0.5, -2.0, 1.0], [1.5, 0.25, -3.0], [0.3, 0.2, 0.1], [1.0, 1.0, 1.0]], "float32")
    np.testing.assert_allclose(float(K.regularizers.OrthogonalRegularizer()(w)), 0.003261842066422105, rtol=1e-6)
    np.testing.assert_allclose(float(K.regularizers.OrthogonalRegularizer(0.3, mode="columns")(w)),
                               0.08048562705516815, rtol=1e-6)
    assert K.regularizers.OrthogonalRegularizer(0.1).get_config() == {"factor": 0.10000000149011612, "mode": "rows"}
    assert K.saving.serialize_keras_object(K.regularizers.get("orthogonal_regularizer")) == {
        "module": "keras.regularizers", "class_name": "OrthogonalRegularizer",
        "config": {"factor": 0.009999999776482582, "mode": "rows"}, "registered_name": None}
    layer = K.layers.Dense.from_config({"units": 2, "kernel_regularizer": {
        "module": "keras.regularizers", "class_name": "OrthogonalRegularizer",
        "config": {"factor": 0.5, "mode": "columns"}, "registered_name": None}})
    assert isinstance(layer.kernel_regularizer, K.regularizers.OrthogonalRegularizer)
