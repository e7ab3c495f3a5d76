"""Behaviour the keras.io developer guides rely on, pinned from TF 2.21 / Keras 3.15 (the guides' programs run
unchanged under tapeflow: guides/functional_api.py, ...)."""

from __future__ import annotations

import numpy as np

import tapeflow as tf

K = tf.keras
layers = K.layers


def test_to_categorical_numpy_gives_float64_tensor_gives_float32():
    out = K.utils.to_categorical(np.array([[8], [9]]), 10)  # cifar10 labels (n, 1)
    assert out.dtype == np.float64 and out.shape == (2, 10) and out[1, 9] == 1.0
    t = K.utils.to_categorical(tf.constant([[1], [2]]), 3)
    assert t.dtype == tf.float32 and t.numpy().tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


def test_input_layer_output_is_the_input_tensor():
    # functional_api: [layer.output for layer in vgg19.layers] starts with the InputLayer's
    x = K.Input((3,))
    layer = x._keras_history[0]
    assert layer.output is x and layer.input == []


class _CustomDense(layers.Layer):  # its get_config() has no name: the rebuilt layer gets a new one
    def __init__(self, units=32):
        super().__init__()
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal")

    def call(self, inputs):
        return tf.matmul(inputs, self.w)

    def get_config(self):
        return {"units": self.units}


def test_custom_layer_config_and_from_config_without_name():
    inputs = K.Input((4,))
    model = K.Model(inputs, _CustomDense(10)(inputs))
    entry = model.get_config()["layers"][1]
    assert (entry["module"], entry["class_name"], entry["registered_name"]) == (
        "tests.test_keras_io_guides", "_CustomDense", "_CustomDense")
    assert model.get_config()["layers"][0]["registered_name"] is None  # Keras's own classes: None
    new = K.Model.from_config(model.get_config(), custom_objects={"_CustomDense": _CustomDense})
    assert [type(la).__name__ for la in new.layers] == ["InputLayer", "_CustomDense"]
    assert new.output_shape == (None, 10)
