"""keras.config.disable_interactive_logging: Keras 3 sends its progress bars, summary() and callback messages to
the log instead of stdout (and back with enable_interactive_logging)."""

import logging

import numpy as np
import pytest

import tapeflow as tf


@pytest.fixture
def quiet():
    tf.keras.config.disable_interactive_logging()
    yield
    tf.keras.config.enable_interactive_logging()


def _model():
    m = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    m.compile(optimizer="sgd", loss="mse")
    return m


def test_the_flag_and_its_aliases():
    assert tf.keras.config.is_interactive_logging_enabled() is True
    assert tf.keras.utils.is_interactive_logging_enabled is tf.keras.config.is_interactive_logging_enabled
    tf.keras.utils.disable_interactive_logging()
    try:
        assert tf.keras.config.is_interactive_logging_enabled() is False
    finally:
        tf.keras.config.enable_interactive_logging()
    assert tf.keras.config.is_interactive_logging_enabled() is True


def test_fit_summary_and_callbacks_print_nothing_when_disabled(quiet, capsys, caplog):
    m = _model()
    x, y = np.ones((8, 3), np.float32), np.zeros((8, 2), np.float32)
    with caplog.at_level(logging.INFO, logger="tapeflow"):
        m.fit(x, y, epochs=2, verbose=1, callbacks=[tf.keras.callbacks.EarlyStopping("loss", patience=0,
                                                                                     verbose=1)])
        m.fit(x, y, epochs=1, verbose=2)
        m.summary()
    assert capsys.readouterr().out == ""
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "Epoch 1/2" in logged and "1/1" in logged and "Trainable params: 8" in logged


def test_enabled_prints_to_stdout(capsys):
    m = _model()
    m.fit(np.ones((4, 3), np.float32), np.zeros((4, 2), np.float32), epochs=2, verbose=2)
    out = capsys.readouterr().out
    assert out.startswith("Epoch 1/2\n1/1 - ") and "Epoch 2/2" in out
