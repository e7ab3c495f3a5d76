"""tf.keras's legacy layers as Keras 3.15 keeps them: ThresholdedReLU, and the module their .keras configs name
(``keras._legacy.layers``, which real Keras needs to load them)."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras.saving.serialization import serialize_keras_object


def test_thresholded_relu_as_keras():
    layer = tf.keras.layers.ThresholdedReLU(theta=0.5)
    assert layer(tf.constant([0.2, 0.5, 0.7, -1.0])).numpy().tolist() == [0.0, 0.0, 0.699999988079071, -0.0]
    assert layer.get_config() == {"name": "thresholded_re_lu", "trainable": True, "theta": 0.5,
                                  "dtype": {"module": "keras", "class_name": "DTypePolicy",
                                            "config": {"name": "float32"}, "registered_name": None}}
    assert layer.supports_masking
    x = tf.Variable([0.05, 0.7])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(layer(x) * 2)
    assert tape.gradient(y, x).numpy().tolist() == [0.0, 2.0]
    with pytest.raises(ValueError, match="Theta of a Thresholded ReLU layer cannot be None, expecting a float. "
                                         "Received: None"):
        tf.keras.layers.ThresholdedReLU(None)
    with pytest.raises(ValueError, match="The theta value of a Thresholded ReLU layer should be >=0. Received: -1"):
        tf.keras.layers.ThresholdedReLU(-1)


def test_legacy_layers_serialize_under_keras_legacy_module(tmp_path):
    for layer in (tf.keras.layers.AlphaDropout(0.1), tf.keras.layers.RandomHeight(0.1),
                  tf.keras.layers.RandomWidth(0.1), tf.keras.layers.ThresholdedReLU()):
        assert serialize_keras_object(layer)["module"] == "keras._legacy.layers"
    assert serialize_keras_object(tf.keras.layers.Dense(2))["module"] == "keras.layers"
    m = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.AlphaDropout(0.1),
                             tf.keras.layers.ThresholdedReLU(0.2), tf.keras.layers.Dense(2)])
    m.save(tmp_path / "m.keras")
    m2 = tf.keras.models.load_model(tmp_path / "m.keras")
    x = np.arange(8, dtype="float32").reshape(2, 4) / 8
    assert [type(la).__name__ for la in m2.layers] == ["AlphaDropout", "ThresholdedReLU", "Dense"]
    np.testing.assert_array_equal(m2.predict(x, verbose=0), m.predict(x, verbose=0))
