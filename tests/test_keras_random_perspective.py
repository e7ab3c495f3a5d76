# ruff: noqa: E501 -- pinned Keras values, one case per line
"""Keras 3.15's RandomPerspective against values pinned from real Keras (TF backend): Keras's pixels for given
corner moves (its homography, TF's projective-transform kernel), Keras's draws for the same seeds, its configs
and errors."""

import json

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers
IMG = (np.random.RandomState(0).rand(2, 5, 6, 3) * 255).astype("float32")
START = np.tile(np.array([[[0, 0], [5, 0], [0, 4], [5, 4]]], "float32"), (2, 1, 1))
MOVE = np.array([[[0.1, -0.2], [0.05, 0.1], [-0.1, 0.2], [0.2, -0.05]], [[-0.3, 0.1], [0.0, 0.0], [0.1, -0.1], [0.05, 0.2]]], "float32")
T = {"apply_perspective": np.array([True, True]), "start_points": START, "end_points": START + START * MOVE}


@pytest.mark.parametrize("kwargs, head, total", [
    ({}, [139.94700622558594, 182.3730010986328, 153.7050018310547, 139.13900756835938, 122.39600372314453], 23117.98),
    ({"interpolation": "nearest", "fill_value": 3.0}, [139.94700622558594, 182.3730010986328, 153.7050018310547, 138.94500732421875, 108.03199768066406], 22346.55),
])
def test_perspective_pixels_are_keras(kwargs, head, total):
    out = L.RandomPerspective(**kwargs).transform_images(IMG, T).numpy()
    np.testing.assert_allclose(out.ravel()[:5], head, atol=2e-3)
    assert float(out.astype("float64").sum()) == pytest.approx(total, abs=0.05)


@pytest.mark.parametrize("expr, first, second, single, config", [  # from Keras 3.15.1
    ('RandomPerspective(seed=3)', 23270.4, 22289.1, 11100.8,
     '{"trainable": true, "data_format": "channels_last", "factor": [0, 1.0], "scale": 1.0, "interpolation": "bilinear", "fill_value": 0.0, "seed": 3}'),
    ('RandomPerspective(0.5, scale=0.4, seed=4)', 22886.1, 23161.0, 11100.8,
     '{"trainable": true, "data_format": "channels_last", "factor": [0, 0.5], "scale": 0.4, "interpolation": "bilinear", "fill_value": 0.0, "seed": 4}'),
])
def test_seeded_perspectives_and_configs_are_keras(expr, first, second, single, config):
    layer = eval("L." + expr)
    assert float(layer(IMG).numpy().sum()) == pytest.approx(first, abs=0.2)
    assert float(layer(IMG).numpy().sum()) == pytest.approx(second, abs=0.2)
    assert float(layer(IMG[0]).numpy().sum()) == pytest.approx(single, abs=0.2)
    np.testing.assert_array_equal(layer(IMG, training=False).numpy(), IMG)
    got = layer.get_config()
    got.pop("dtype")
    got.pop("name")
    assert json.loads(json.dumps(got)) == json.loads(config)
    assert type(layer).from_config(layer.get_config()).get_config() == layer.get_config()


def test_bad_arguments_raise_keras_errors():
    with pytest.raises(ValueError, match=r"The `scale` argument should be a number in the range \[0,1\]. Received: scale=2"):
        L.RandomPerspective(scale=2)
    with pytest.raises(NotImplementedError, match="Unknown `interpolation` cubic"):
        L.RandomPerspective(interpolation="cubic")
