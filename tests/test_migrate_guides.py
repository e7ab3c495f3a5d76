"""What TF's migration and tf.data guides rely on (values and exception types pinned from TF 2.21 / Keras 3.15)."""

import numpy as np
import pytest

import tapeflow as tf
import tapeflow.compat.v1 as tf1


def test_estimator_is_missing_as_in_tf_2_21():
    # TF 2.16 removed tf.estimator: TF 2.21 raises AttributeError for tf.estimator and tf.compat.v1.estimator
    with pytest.raises(AttributeError, match="module 'tensorflow' has no attribute 'estimator'"):
        tf.estimator  # noqa: B018
    with pytest.raises(AttributeError, match="module 'tensorflow.compat.v1' has no attribute 'estimator'"):
        tf1.estimator  # noqa: B018
    assert not hasattr(tf, "estimator")


def test_compat_v1_keras_is_keras():
    assert tf1.keras is tf.keras
    with pytest.raises(AttributeError):  # as Keras 3: keras.utils has no DeterministicRandomTestTool
        tf1.keras.utils.DeterministicRandomTestTool  # noqa: B018


def test_saved_model_signature_and_tag_constants():
    assert tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY == "serving_default"
    assert (tf.saved_model.SERVING, tf.saved_model.TRAINING) == ("serve", "train")
    assert tf.saved_model.PREDICT_METHOD_NAME == "tensorflow/serving/predict"


class _NoDefaults(tf.keras.callbacks.Callback):
    """Hooks without a default for ``logs`` (TF's early-stopping guide): Keras always passes it."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def on_train_begin(self, logs):
        self.seen.append(("train_begin", logs))

    def on_epoch_begin(self, epoch, logs):
        self.seen.append(("epoch_begin", epoch, logs))

    def on_train_batch_begin(self, batch, logs):
        self.seen.append(("batch_begin", batch, logs))

    def on_test_begin(self, logs):
        self.seen.append(("test_begin", logs))

    def on_predict_begin(self, logs):
        self.seen.append(("predict_begin", logs))

    def on_predict_end(self, logs):
        self.seen.append(("predict_end", logs))


def test_callback_hooks_always_get_logs():
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    cb = _NoDefaults()
    x, y = np.ones((4, 2), np.float32), np.ones((4, 1), np.float32)
    model.fit(x, y, batch_size=4, epochs=1, verbose=0, callbacks=[cb])
    model.evaluate(x, y, verbose=0, callbacks=[cb])
    model.predict(x, verbose=0, callbacks=[cb])
    assert cb.seen == [("train_begin", {}), ("epoch_begin", 0, {}), ("batch_begin", 0, {}), ("test_begin", {}),
                       ("predict_begin", {}), ("predict_end", {})]


def test_tf_print_in_a_layer_prints_nothing_while_the_functional_model_is_built(capfd):
    class PrintLayer(tf.keras.layers.Layer):
        def call(self, inputs):
            tf.print(inputs)
            return inputs

    inputs = tf.keras.layers.Input(shape=(1,))
    model = tf.keras.Model(inputs=inputs, outputs=PrintLayer()(inputs))
    assert capfd.readouterr().err == ""  # Keras traces the symbolic call in a scratch graph: nothing runs
    model(tf.constant([[2.0]]))
    assert capfd.readouterr().err == "[[2]]\n"
