"""Keras 3.15's ``keras.config.set_max_epochs`` / ``set_max_steps_per_epoch`` debugging caps, as fit, evaluate
and predict honour them; counts, warnings and losses pinned from real Keras (tests never import TF)."""

import warnings

import numpy as np
import pytest

import tapeflow as tf

keras = tf.keras


def test_fit_evaluate_predict_honour_the_caps_as_keras():
    x = np.arange(20, dtype="float32").reshape(10, 2) / 10
    y = x.sum(1, keepdims=True) * 1.5 - 0.2
    m = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, kernel_initializer="ones")])
    m.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    assert keras.config.max_epochs() is None and keras.config.max_steps_per_epoch() is None
    keras.config.set_max_epochs(2)
    keras.config.set_max_steps_per_epoch(3)
    try:
        assert keras.config.max_epochs() == 2 and keras.config.max_steps_per_epoch() == 3
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            h = m.fit(x, y, batch_size=2, epochs=5, verbose=0, shuffle=False, validation_data=(x, y))
        messages = {str(w.message) for w in caught}
        assert {"Limiting epochs to 2", "Limiting steps_per_epoch to 3"} <= messages
        # Keras: the capped steps run on over one pass of the 5 batches, which runs out in epoch 2
        assert any(msg.startswith("Your input ran out of data") for msg in messages)
        assert len(h.history["loss"]) == 2 and int(m.optimizer.iterations.numpy()) == 5
        np.testing.assert_allclose(h.history["loss"], [0.232468, 1.490418], rtol=1e-5)
        np.testing.assert_allclose(h.history["val_loss"], [0.203784, 0.107716], rtol=1e-5)
        with pytest.warns(UserWarning, match="Limiting steps_per_epoch to 3"):
            assert m.predict(x, batch_size=2, verbose=0).shape == (6, 1)
        assert m.evaluate(x, y, batch_size=2, verbose=0) == pytest.approx(0.107716, rel=1e-5)
        m.fit(x, y, batch_size=2, epochs=1, steps_per_epoch=2, verbose=0)  # a smaller steps_per_epoch stays
        assert int(m.optimizer.iterations.numpy()) == 7
    finally:
        keras.config.set_max_epochs(None)
        keras.config.set_max_steps_per_epoch(None)
    h = m.fit(x, y, batch_size=2, epochs=3, verbose=0)
    assert len(h.history["loss"]) == 3 and int(m.optimizer.iterations.numpy()) == 22
