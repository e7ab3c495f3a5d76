"""Keras 3's model.export() and keras.export.ExportArchive (TF backend), reloaded with tf.saved_model.load: the
values, endpoints, signatures and errors of TF 2.21 (tapeflow's SavedModel format, not TF's protobuf)."""

import numpy as np
import pytest

import tapeflow as tf

X = np.arange(6, dtype="float32").reshape(2, 3)


def _model():
    return tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2, kernel_initializer="ones",
                                                                            bias_initializer="ones")])


def test_model_export_reloads_without_the_model(tmp_path, capsys):
    _model().export(tmp_path / "m")
    printed = capsys.readouterr().out
    assert printed.startswith(f"Saved artifact at '{tmp_path / 'm'}'. The following endpoints are available:\n\n"
                              "* Endpoint 'serve'\n  args_0 (POSITIONAL_ONLY): TensorSpec(shape=(None, 3), "
                              "dtype=tf.float32")
    assert "Output Type:\n  TensorSpec(shape=(None, 2), dtype=tf.float32, name=None)\nCaptures:" in printed
    r = tf.saved_model.load(str(tmp_path / "m"))
    assert r.serve(X).numpy().tolist() == [[4.0, 4.0], [13.0, 13.0]]  # TF 2.21's
    assert list(r.signatures) == ["serve", "serving_default"]
    out = r.signatures["serving_default"](tf.constant(X))
    assert list(out) == ["output_0"] and out["output_0"].numpy().tolist() == [[4.0, 4.0], [13.0, 13.0]]
    assert [v.shape.as_list() for v in r.variables] == [[3, 2], [2]]


def test_functional_signature_keys_by_input_name(tmp_path):
    inp = tf.keras.Input((3,), name="feat")
    tf.keras.Model(inp, tf.keras.layers.Dense(1)(inp)).export(tmp_path / "f", verbose=False)
    sig = tf.saved_model.load(str(tmp_path / "f")).signatures["serving_default"]
    args, kwargs = sig.structured_input_signature
    assert args == () and list(kwargs) == ["feat"] and kwargs["feat"].shape.as_list() == [None, 3]
    assert kwargs["feat"].name == "feat"
    assert list(sig.structured_outputs) == ["output_0"]


def test_export_archive_endpoints_and_variable_collections(tmp_path):
    m = _model()
    archive = tf.keras.export.ExportArchive()
    archive.track(m)
    archive.add_endpoint("predict", lambda t: m(t) * 2, input_signature=[tf.TensorSpec((None, 3), tf.float32)])
    archive.add_variable_collection("my_vars", m.trainable_variables)
    archive.write_out(tmp_path / "a", verbose=False)
    r = tf.saved_model.load(str(tmp_path / "a"))
    assert r.predict(X).numpy().tolist() == [[8.0, 8.0], [26.0, 26.0]]
    assert len(r.my_vars) == 2 and list(r.signatures) == ["predict", "serving_default"]
    with pytest.raises(ValueError, match="Endpoint name 'predict' is already taken."):
        archive.add_endpoint("predict", lambda t: t, input_signature=[tf.TensorSpec((None, 3))])
    with pytest.raises(ValueError, match="If the `fn` argument provided is not a `tf.function`, you must provide "
                                         "an `input_signature`"):
        archive.add_endpoint("e2", lambda t: t)
    with pytest.raises(ValueError, match="No endpoints have been set yet. Call add_endpoint()."):
        tf.keras.export.ExportArchive().write_out(tmp_path / "x")
    with pytest.raises(ValueError, match="The layer provided has not yet been built"):
        tf.keras.export.ExportArchive().track(tf.keras.layers.Dense(2))
    with pytest.raises(NotImplementedError, match="format='onnx'"):
        m.export(tmp_path / "o", format="onnx")


def test_tfsm_layer_calls_an_exported_model(tmp_path):
    _model().export(tmp_path / "m", verbose=False)
    layer = tf.keras.layers.TFSMLayer(str(tmp_path / "m"))
    assert layer(X).numpy().tolist() == [[4.0, 4.0], [13.0, 13.0]]
    assert len(layer.weights) == len(layer.trainable_weights) == 2
    assert sorted(layer.get_config()) == ["call_endpoint", "call_training_endpoint", "dtype", "filepath", "name",
                                          "trainable"]
    assert list(tf.keras.layers.TFSMLayer(str(tmp_path / "m"), call_endpoint="serving_default")(X)) == ["output_0"]
    inp = tf.keras.Input((3,))
    model = tf.keras.Model(inp, tf.keras.layers.Dense(1)(layer(inp)))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(X))
    grads = tape.gradient(loss, layer.trainable_weights)
    assert all(g is not None for g in grads)
    with pytest.raises(ValueError, match=r"The endpoint 'nope' is neither an attribute of the reloaded SavedModel, "
                                         r"nor an entry in the `signatures` field .* Available endpoints for this "
                                         r"SavedModel: \['serve', 'serving_default'\]"):
        tf.keras.layers.TFSMLayer(str(tmp_path / "m"), call_endpoint="nope")


def test_a_built_subclassed_model_exports_for_any_batch_size(tmp_path):
    class M(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.d = tf.keras.layers.Dense(2)

        def call(self, x):
            return self.d(x)

    m = M()
    m(np.ones((1, 3), "float32"))
    m.export(tmp_path / "s", verbose=False)
    r = tf.saved_model.load(str(tmp_path / "s"))
    assert r.serve(np.ones((4, 3), "float32")).shape == (4, 2)
    args, kwargs = r.signatures["serving_default"].structured_input_signature
    assert args == () and list(kwargs) == ["args_0"] and kwargs["args_0"].shape.as_list() == [None, 3]  # as TF
    with pytest.raises(ValueError, match="has not yet been built"):
        M().export(tmp_path / "u")
