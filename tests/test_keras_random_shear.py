# ruff: noqa: E501 -- pinned Keras values, one case per line
"""Keras 3.15's RandomShear against values pinned from real Keras (TF backend): Keras's pixels for given shear
factors (fill modes, interpolations), Keras's draws for the same seeds, its configs and errors."""

import json

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers
IMG = (np.random.RandomState(0).rand(2, 5, 6, 3) * 255).astype("float32")
SHEAR = {"shear_factor": np.array([[0.25, -0.1], [-0.3, 0.2]], "float32")}

FIXED = [  # (arguments, first values, sum) of transform_images(IMG, SHEAR), from Keras 3.15.1
    ({'x_factor': 0.3}, [139.94700622558594, 182.3730010986328, 153.7050018310547, 138.94500732421875, 108.03199768066406], 22754.25),
    ({'y_factor': 0.4, 'fill_mode': 'constant', 'fill_value': 5.0}, [139.94700622558594, 182.3730010986328, 153.7050018310547, 125.5510025024414, 97.72899627685547], 19175.56),
    ({'x_factor': 0.2, 'y_factor': 0.5, 'interpolation': 'nearest', 'fill_mode': 'wrap'}, [139.94700622558594, 182.3730010986328, 153.7050018310547, 9.993000030517578, 72.11599731445312], 22697.47),
]


@pytest.mark.parametrize("kwargs, head, total", FIXED)
def test_shear_pixels_are_keras(kwargs, head, total):
    out = L.RandomShear(**kwargs).transform_images(IMG, SHEAR).numpy()
    assert out.shape == (2, 5, 6, 3)
    np.testing.assert_allclose(out.ravel()[:5], head, atol=2e-3)
    assert float(out.astype("float64").sum()) == pytest.approx(total, abs=0.05)


SEEDED = [  # sums of two batched calls and one on IMG[0], and the config, from Keras 3.15.1
    ('RandomShear(x_factor=0.3, seed=3)', 22866.3, 23246.0, 11090.1,
     '{"trainable": true, "data_format": "channels_last", "x_factor": [-0.3, 0.3], "y_factor": [-0.0, 0.0], "fill_mode": "reflect", "interpolation": "bilinear", "seed": 3, "fill_value": 0.0}'),
    ("RandomShear(x_factor=(0.1, 0.4), y_factor=0.2, fill_mode='nearest', seed=4)", 23288.4, 23406.5, 11673.2,
     '{"trainable": true, "data_format": "channels_last", "x_factor": [0.1, 0.4], "y_factor": [-0.2, 0.2], "fill_mode": "nearest", "interpolation": "bilinear", "seed": 4, "fill_value": 0.0}'),
]


@pytest.mark.parametrize("expr, first, second, single, config", SEEDED, ids=[s[0] for s in SEEDED])
def test_seeded_shears_and_configs_are_keras(expr, first, second, single, config):
    layer = eval("L." + expr)
    assert float(layer(IMG).numpy().sum()) == pytest.approx(first, abs=0.2)
    assert float(layer(IMG).numpy().sum()) == pytest.approx(second, abs=0.2)
    assert float(layer(IMG[0]).numpy().sum()) == pytest.approx(single, abs=0.2)
    np.testing.assert_array_equal(layer(IMG, training=False).numpy(), IMG)
    got = layer.get_config()
    got.pop("dtype")
    got.pop("name")
    assert json.loads(json.dumps(got)) == json.loads(config)
    with pytest.raises(ValueError, match="Received: input_number=-0."):  # as Keras 3.15: its config of a
        type(layer).from_config(layer.get_config())  # symmetric factor does not load back


def test_bad_arguments_raise_keras_errors():
    with pytest.raises(ValueError, match=r"in the range \[0, 1.0\]. Received: input_number=1.5"):
        L.RandomShear(x_factor=1.5)
    with pytest.raises(NotImplementedError, match="Unknown `fill_mode` foo"):
        L.RandomShear(fill_mode="foo")
    with pytest.raises(ValueError, match=r"Received: y_factor=\(0.1, 0.2, 0.3\)"):
        L.RandomShear(y_factor=(0.1, 0.2, 0.3))
