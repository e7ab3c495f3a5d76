"""Keras 3 surface the TF tutorials touch (pinned from Keras 3.15): only tensors/arrays positionally, Keras layers
are not tf.Modules (no ``submodules``)."""

import numpy as np
import pytest

import tapeflow as tf


@pytest.fixture(autouse=True)
def _fresh_names():
    tf.keras.backend.clear_session()


def test_python_values_passed_positionally_are_a_value_error():
    d = tf.keras.layers.Dense(2)
    with pytest.raises(ValueError, match=r"^Only input tensors may be passed as positional arguments. The following "
                                         r"argument value should be passed as a keyword argument: 2.0 \(of type "
                                         r"<class 'float'>\)$"):
        d([[2.0, 2.0]])
    assert d(np.ones((1, 2))).shape == (1, 2)
    with pytest.raises(ValueError, match=r"keyword argument: 3 \(of type <class 'int'>\)"):
        d(tf.ones((1, 2)), 3)
    # preprocessing layers (Keras's TFDataLayer) take Python lists
    np.testing.assert_array_equal(tf.keras.layers.Rescaling(2.0)([1.0, 2.0]).numpy(), [2.0, 4.0])


def test_keras_models_have_no_submodules():
    with pytest.raises(AttributeError, match="'Sequential' object has no attribute 'submodules'"):
        tf.keras.Sequential([tf.keras.layers.Dense(2)]).submodules


def test_variable_assign_shape_mismatch_message_is_tf_s():
    v = tf.Variable([2.0, 3.0])
    with pytest.raises(ValueError) as info:
        v.assign([1.0, 2.0, 3.0])
    assert str(info.value) == ("Cannot assign value to variable ' Variable:0': Shape mismatch.The variable shape (2,), "
                               "and the assigned value shape (3,) are incompatible.")


def test_keras_tensors_as_keras_3():
    a, b, c = tf.keras.Input((3,)), tf.keras.Input((3,), dtype="int32"), tf.keras.Input((3,), name="x")
    assert a.dtype == "float32" and isinstance(a.dtype, str) and a.dtype == tf.float32
    assert [a.name, b.name, c.name] == ["keras_tensor", "keras_tensor_1", "x"]
    d = tf.keras.layers.Dense(2)(a)
    assert repr(d) == "<KerasTensor shape=(None, 2), dtype=float32, sparse=False, ragged=False, name=keras_tensor_2>"
    with pytest.raises(AttributeError):
        b.dtype.name  # noqa: B018 - a str, as Keras 3 (the mixed-precision guide's cell raises there too)


def test_loss_reduction_names_and_no_metric_reset_states():
    """The distributed custom-training tutorial: Reduction.NONE works; Keras 3 metrics lack reset_states."""
    r = tf.keras.losses.Reduction
    assert r.all() == ("auto", "none", "sum", "sum_over_batch_size") and r.validate("none") is None
    with pytest.raises(ValueError, match="Invalid Reduction Key: bad"):
        r.validate("bad")
    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=r.NONE)
    assert loss(tf.constant([0, 1]), tf.constant([[1.0, 2.0], [3.0, 1.0]])).shape == (2,)
    assert not hasattr(tf.keras.metrics.Mean(), "reset_states")


def test_sequential_built_by_its_first_call_numbers_keras_tensors_as_keras_3():
    # Keras 3 builds an InputLayer and a Functional on a Sequential's first call (fit on arrays here), taking an
    # auto-name for the input and for each layer's output: names of KerasTensors made later follow TF 2.21's
    tf.keras.backend.clear_session()
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu"), tf.keras.layers.Dense(1)])
    model.compile(loss="mse", optimizer="sgd")
    model.fit(np.ones((4, 3), "float32"), np.ones(4), epochs=1, verbose=0)
    assert tf.keras.Input(shape=()).name == "keras_tensor_3"
    model.predict(np.ones((4, 3), "float32"), verbose=0)
    assert tf.keras.Input(shape=()).name == "keras_tensor_4"


def test_functional_from_config_numbers_keras_tensors_as_keras_3():
    # Keras deserializes each node's KerasTensor argument into a new KerasTensor before calling the layer
    i = tf.keras.Input((4,))
    m = tf.keras.Model(i, tf.keras.layers.Dense(3)(tf.keras.layers.Dense(5)(i)))
    assert tf.keras.Input(shape=()).name == "keras_tensor_3"
    tf.keras.Model.from_config(m.get_config())
    assert tf.keras.Input(shape=()).name == "keras_tensor_8"  # TF 2.21 / Keras 3.15


def test_mask_keras_tensors_are_named_and_passed_on_as_keras_3():
    class PassMask(tf.keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.supports_masking = True

        def call(self, inputs):
            return tf.keras.ops.relu(inputs)

    seq = tf.keras.Sequential([tf.keras.layers.Embedding(50, 16, mask_zero=True), tf.keras.layers.LSTM(4)])
    seq(np.array([[1, 2, 0], [3, 0, 0]]))  # built by its first call: input, embedding, its mask, LSTM
    assert tf.keras.Input(shape=()).name == "keras_tensor_4"
    inputs = tf.keras.Input(shape=(None,), dtype="int32")
    x = tf.keras.layers.Embedding(50, 16, mask_zero=True)(inputs)
    mask = x._keras_mask
    y = PassMask()(x)
    assert y._keras_mask is mask and mask.name == "keras_tensor_7"  # TF 2.21: the same mask KerasTensor
    assert tf.keras.Input(shape=()).name == "keras_tensor_9"


_MASKED_SUMMARY = """\
Model: "functional"
┏━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┓
┃ Layer (type)        ┃ Output Shape      ┃    Param # ┃ Connected to      ┃
┡━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━┩
│ input_layer         │ (None, None)      │          0 │ -                 │
│ (InputLayer)        │                   │            │                   │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ embedding           │ (None, None, 4)   │         80 │ input_layer[0][0] │
│ (Embedding)         │                   │            │                   │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ not_equal           │ (None, None)      │          0 │ input_layer[0][0] │
│ (NotEqual)          │                   │            │                   │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ lstm (LSTM)         │ (None, 3)         │         96 │ embedding[0][0],  │
│                     │                   │            │ not_equal[0][0]   │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ dense (Dense)       │ (None, 1)         │          4 │ lstm[0][0]        │
└─────────────────────┴───────────────────┴────────────┴───────────────────┘
 Total params: 180 (720.00 B)
 Trainable params: 180 (720.00 B)
 Non-trainable params: 0 (0.00 B)
"""


def test_a_mask_zero_embeddings_mask_is_a_not_equal_node_passed_as_mask(capsys, tmp_path):
    # Keras 3.15.1: Embedding.compute_mask's ops.not_equal on the KerasTensor is a node of the model, and the LSTM's
    # node gets it as mask= (summary's "Connected to", the config's inbound_nodes); the model runs as before
    tf.keras.backend.clear_session()
    inp = tf.keras.Input((None,), dtype="int32")
    x = tf.keras.layers.Embedding(20, 4, mask_zero=True)(inp)
    m = tf.keras.Model(inp, tf.keras.layers.Dense(1)(tf.keras.layers.LSTM(3)(x)))
    m.summary()
    assert capsys.readouterr().out == _MASKED_SUMMARY
    assert [layer.name for layer in m.layers] == ["input_layer", "embedding", "lstm", "dense"]
    c = m.get_config()
    assert [entry["name"] for entry in c["layers"]][2] == "not_equal"
    mask_ref = c["layers"][3]["inbound_nodes"][0]["kwargs"]["mask"]
    assert mask_ref["config"]["keras_history"] == ["not_equal", 0, 0] and mask_ref["config"]["dtype"] == "bool"
    x = np.array([[1, 2, 0, 0], [3, 0, 0, 0]])
    m.save(str(tmp_path / "m.keras"))
    np.testing.assert_allclose(tf.keras.models.load_model(str(tmp_path / "m.keras")).predict(x, verbose=0),
                               m.predict(x, verbose=0), rtol=1e-6)


def test_masks_of_masking_and_of_rnns_are_graph_nodes_as_keras(capsys):
    # Keras 3.15.1: Masking's compute_mask (ops.any of ops.not_equal) adds NotEqual and Any nodes; RNNs with
    # return_sequences and Bidirectional pass the mask node on, so each next RNN's node takes it as mask=
    tf.keras.backend.clear_session()
    inp = tf.keras.Input((5, 2))
    x = tf.keras.layers.Masking(mask_value=0.0)(inp)
    m = tf.keras.Model(inp, tf.keras.layers.GRU(3, kernel_initializer="ones", recurrent_initializer="zeros")(x))
    assert [entry["name"] for entry in m.get_config()["layers"]] == ["input_layer", "not_equal", "masking", "any",
                                                                      "gru"]
    out = m.predict(np.array([[[1., 1.], [0., 0.], [2., 0.], [0., 0.], [0., 0.]]]), verbose=0)
    np.testing.assert_allclose(out, [[0.2161, 0.2161, 0.2161]], atol=1e-4)
    tf.keras.backend.clear_session()
    inp = tf.keras.Input((None,), dtype="int32")
    x = tf.keras.layers.Embedding(30, 4, mask_zero=True)(inp)
    x = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(3, return_sequences=True))(x)
    x = tf.keras.layers.GRU(2, return_sequences=True)(x)
    x = tf.keras.layers.LSTM(2)(x)
    m = tf.keras.Model(inp, tf.keras.layers.Dense(1)(x))
    inbound = {e["name"]: e["inbound_nodes"] for e in m.get_config()["layers"]}
    for name in ("bidirectional", "gru", "lstm_1"):
        assert inbound[name][0]["kwargs"]["mask"]["config"]["keras_history"] == ["not_equal", 0, 0]
    assert "mask" not in inbound["dense"][0]["kwargs"]
    m.summary()
    assert "│ lstm_1 (LSTM)       │ (None, 2)         │         40 │ gru[0][0],        │" in capsys.readouterr().out
