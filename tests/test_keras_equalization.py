# ruff: noqa: E501 -- pinned Keras values, one case per line
"""Keras 3.15's Equalization against values pinned from real Keras (TF backend)."""

import json

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers
IMG = (np.random.RandomState(0).rand(2, 5, 6, 3) * 200 + 20).astype("float32")
IMG[:, :, :, 2] = 9.0  # a channel with one occupied bin stays as it is


@pytest.mark.parametrize("call, shape, head, total", [  # from Keras 3.15.1
    ('L.Equalization()(IMG)', (2, 5, 6, 3), [117.0, 203.0, 9.0, 112.0, 108.0, 9.0], 15907.0),
    ('L.Equalization(bins=32)(IMG)', (2, 5, 6, 3), [114.0, 200.0, 9.0, 114.0, 105.0, 9.0], 15905.0),
    ('L.Equalization(value_range=(0, 1))(IMG / 255)', (2, 5, 6, 3), [0.45899999141693115, 0.7960000038146973, 0.03500000014901161, 0.4390000104904175, 0.42399999499320984, 0.03500000014901161], 62.38),
    ('L.Equalization()(IMG[0])', (5, 6, 3), [149.0, 193.0, 9.0, 141.0, 123.0, 9.0], 7964.0),
    ('L.Equalization()(IMG, training=False)', (2, 5, 6, 3), [129.76300048828125, 163.03799438476562, 9.0, 128.9770050048828, 104.73100280761719, 9.0], 14730.54),
    ('L.Equalization(data_format="channels_first")(np.transpose(IMG, (0, 3, 1, 2)))', (2, 3, 5, 6), [117.0, 112.0, 108.0, 95.0, 130.0, 22.0], 15907.0),
])
def test_equalization_is_keras(call, shape, head, total):
    out = eval(call).numpy()
    assert out.shape == shape
    np.testing.assert_allclose(out.ravel()[:6], head, atol=1e-3)
    assert float(out.astype("float64").sum()) == pytest.approx(total, abs=0.02)


def test_config_is_keras():
    config = L.Equalization(bins=64, name="e").get_config()
    config.pop("dtype")
    assert json.loads(json.dumps(config)) == {"name": "e", "trainable": True, "data_format": "channels_last", "bins": 64, "value_range": [0, 255]}
    assert L.Equalization.from_config(L.Equalization(bins=64).get_config()).bins == 64
