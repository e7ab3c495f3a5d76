"""fit() traces its step with tf.function; a subclassed model's call() with
Python control flow on tensors is converted by AutoGraph, as in TF."""

import warnings

import numpy as np

import tapeflow as tf


class Branchy(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.d = tf.keras.layers.Dense(1, kernel_initializer="ones")

    def call(self, x):
        y = self.d(x)
        if tf.reduce_sum(y) > 0:
            y = y * 2.0
        else:
            y = y - 1.0
        return y


def test_fit_converts_tensor_if_in_subclassed_call():
    m = Branchy()
    m.compile(optimizer="sgd", loss="mse")
    x = np.ones((4, 3), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "falling back to eager" warning
        h = m.fit(x, np.ones((4, 1), np.float32), epochs=1, verbose=0, batch_size=4)
    # sum(y) = 12 > 0: y = 2 * 3 = 6, mse = 25
    np.testing.assert_allclose(h.history["loss"][0], 25.0, rtol=1e-6)
    y = -x @ m.d.kernel.numpy() + m.d.bias.numpy()
    expected = 2 * y if y.sum() > 0 else y - 1.0
    np.testing.assert_allclose(m.predict(-x, verbose=0), expected, rtol=1e-6)
