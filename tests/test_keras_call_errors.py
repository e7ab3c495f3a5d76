"""How an exception raised inside a Keras layer reaches the user, pinned from Keras 3.15.1: the
layer's ``call`` and its arguments around the message (the innermost layer only), input-spec errors
unchanged, and the wording of those checks."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras


class Bad(K.layers.Layer):
    def call(self, x, scale=2.0):
        raise ValueError("boom")


class Outer(K.Model):
    def __init__(self):
        super().__init__()
        self.b = Bad()

    def call(self, x):
        return self.b(x)


class Flex(K.layers.Layer):
    def build(self, shape):
        self.w = self.add_weight(shape=(3, 3))

    def call(self, inputs, training=None):
        return tf.matmul(inputs, self.w)


def _message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


def test_an_error_in_call_names_the_layer_and_its_arguments():
    kind, text = _message(lambda: Bad()(tf.ones((2,)), scale=3))
    assert kind is ValueError
    assert text == ("Exception encountered when calling Bad.call().\n\n\x1b[1mboom\x1b[0m\n\nArguments received by "
                    "Bad.call():\n  \u2022 x=tf.Tensor(shape=(2,), dtype=float32)\n  \u2022 scale=3")
    # NumPy inputs are shown converted; defaults are shown for arguments not passed
    _, text = _message(lambda: Bad()(np.ones((2, 2), "float32")))
    assert text.endswith("x=tf.Tensor(shape=(2, 2), dtype=float32)\n  \u2022 scale=2.0")
    # only the innermost failing layer is named
    _, text = _message(lambda: Outer()(tf.ones((1, 2))))
    assert text.startswith("Exception encountered when calling Bad.call().") and text.count("Exception") == 1


def test_an_op_error_in_call_keeps_its_type():
    layer = Flex()
    layer(tf.ones((1, 3)))
    kind, text = _message(lambda: layer(tf.ones((1, 4))))
    assert kind is tf.errors.InvalidArgumentError
    assert text.startswith("Exception encountered when calling Flex.call().\n\n\x1b[1mMatrix size-incompatible")
    assert text.endswith("Arguments received by Flex.call():\n  \u2022 inputs=tf.Tensor(shape=(1, 4), dtype=float32)"
                         "\n  \u2022 training=None")
    K.config.disable_traceback_filtering()
    try:
        assert not K.config.is_traceback_filtering_enabled()
        _, text = _message(lambda: layer(tf.ones((1, 4))))
        assert text.startswith("Matrix size-incompatible")
    finally:
        K.config.enable_traceback_filtering()


def test_a_symbolic_call_that_fails_says_the_output_could_not_be_inferred():
    kind, text = _message(lambda: Bad()(K.Input((3,), name="x")))
    assert kind is ValueError
    assert text.startswith("Exception encountered when calling Bad.call().\n\n\x1b[1mCould not automatically infer the "
                           "output shape / dtype of 'bad")
    assert "(of type Bad). Either the `Bad.call()` method is incorrect, or you need to implement the `Bad.compute_" \
           "output_spec() / compute_output_shape()` method. Error encountered:\n\nboom\x1b[0m" in text
    assert text.endswith("\n  \u2022 args=('<KerasTensor shape=(None, 3), dtype=float32, sparse=False, ragged=False, "
                         "name=x>',)\n  \u2022 kwargs=<class 'inspect._empty'>")


def test_input_spec_errors_pass_unchanged_with_keras_wording():
    dense = K.layers.Dense(2, name="dense")
    dense(tf.ones((1, 3)))
    _, text = _message(lambda: dense(tf.ones((1, 4))))
    assert text == ("Input 0 with name 'None' of layer 'dense' is incompatible with the layer: expected axis -1 of "
                    "input shape to have value 3, but received input with shape (1, 4)")
    _, text = _message(lambda: K.layers.Conv2D(2, 3, name="conv2d")(K.Input((3,))))
    assert text == ("Input 0 with name 'None' of layer 'conv2d' is incompatible with the layer: expected min_ndim=4, "
                    "found ndim=2. Full shape received: (None, 3)")


def test_a_sequential_names_itself_around_an_inner_layers_input_spec_error():
    # Keras raises the input-spec error before Dense's call, inside Sequential.call (TF's time_series tutorial)
    model = K.Sequential([K.layers.Flatten(), K.layers.Dense(3, name="dense"), K.layers.Dense(1, name="out")])
    model(np.zeros((2, 3, 4), "float32"))
    kind, text = _message(lambda: model(np.zeros((2, 5, 4), "float32")))
    assert kind is ValueError
    assert text == ("Exception encountered when calling Sequential.call().\n\n\x1b[1mInput 0 with name 'None' of layer "
                    "'dense' is incompatible with the layer: expected axis -1 of input shape to have value 12, but "
                    "received input with shape (2, 20)\x1b[0m\n\nArguments received by Sequential.call():\n"
                    "  \u2022 inputs=tf.Tensor(shape=(2, 5, 4), dtype=float32)\n  \u2022 training=None\n"
                    "  \u2022 mask=None\n  \u2022 kwargs=<class 'inspect._empty'>")


def test_a_functional_model_checks_its_inputs_shapes_first():
    # a Sequential built on its first call makes an InputLayer and a Functional, which take Keras's auto-names
    K.backend.clear_session()
    K.Sequential([K.layers.Dense(2)])(np.zeros((1, 3), "float32"))
    x = K.Input((4,))
    model = K.Model(x, K.layers.Dense(2)(x))
    kind, text = _message(lambda: model(np.zeros((2, 5), "float32")))
    assert kind is ValueError
    assert text == ("Input 0 with name 'input_layer_1' of layer 'functional_1' is incompatible with the layer: "
                    "expected shape=(None, 4), found shape=(2, 5)")
    assert model(np.zeros((2, 4, 1), "float32")).shape == (2, 2)  # a trailing axis of 1 is squeezed


def test_keras_config():
    assert K.config.floatx() == "float32" and K.config.image_data_format() == "channels_last"
    assert K.config.dtype_policy().name == "float32"
    with pytest.raises(NotImplementedError, match="tf.keras.config.enable_flash_attention"):
        K.config.enable_flash_attention


def test_merge_layers_promote_mixed_dtypes_as_keras():
    # Keras 3.15: floating inputs are autocast to the layer's float32 first, then keras.ops promotes
    for d1, d2, want in (("int64", "float64", "float32"), ("int64", "float32", "float32"),
                         ("int32", "float16", "float32"), ("bool", "int32", "int32")):
        a, b = tf.ones((1, 1), d1), tf.ones((1, 2), d2)
        assert K.layers.Concatenate(axis=1)([a, b]).dtype == want, (d1, d2)
    assert K.layers.Add()([tf.ones((1, 2), "int64"), tf.ones((1, 2))]).dtype == "float32"
    with pytest.raises(ValueError, match="dtype='string' is not a valid dtype for Keras type promotion"):
        K.layers.Concatenate()([tf.constant([["a"]]), tf.ones((1, 1))])


def test_plot_model_checks_as_keras():
    # TF's tutorials call it: without pydot Keras 3.15 raises ImportError (an unbuilt model: ValueError first)
    with pytest.raises(ValueError, match="This model has not yet been built"):
        K.utils.plot_model(K.Sequential([K.layers.Dense(1)]))
    try:
        import pydot  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match=r"You must install pydot \(`pip install pydot`\) for `plot_model`"):
            K.utils.plot_model(K.Sequential([K.Input((2,)), K.layers.Dense(1)]), show_shapes=True)
