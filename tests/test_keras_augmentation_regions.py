# ruff: noqa: E501 -- pinned Keras values, one case per line
"""Keras 3.15's RandomGaussianBlur and RandomErasing against values pinned from real Keras (TF backend):
``transform_images`` at fixed transformations gives Keras's pixels, seeded layers draw Keras's transformations
(batched and single images), and configs and errors are Keras's (tests never import TF/Keras)."""

import json

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers
IMG = (np.random.RandomState(0).rand(2, 5, 6, 3) * 255).astype("float32")
MASK = np.zeros((2, 5, 6, 3), bool)
MASK[0, 1:3, 2:5] = True
MASK[1, 0:2, 0:2] = True


def _check(out, shape, head, total):
    out = np.asarray(out)
    assert out.shape == shape and out.dtype == np.float32
    np.testing.assert_allclose(out.ravel()[:5], head, atol=2e-3)
    assert float(out.astype("float64").sum()) == pytest.approx(total, rel=2e-6, abs=0.02)


def test_transform_images_is_keras():
    _check(L.RandomGaussianBlur().transform_images(IMG, {"should_apply_blur": np.array([True, False]), "blur_factor": np.array([0.7, 1.3], "float32")}),
           (2, 5, 6, 3), [91.62899780273438, 97.61299896240234, 105.59500122070312, 103.35800170898438, 104.2959976196289], 21027.55)
    _check(L.RandomGaussianBlur(kernel_size=5).transform_images(IMG, {"should_apply_blur": np.array([True, True]), "blur_factor": np.array([0.5, 0.5], "float32")}),
           (2, 5, 6, 3), [117.2040023803711, 141.875, 132.14199829101562, 126.75199890136719, 115.43499755859375], 21367.53)
    _check(L.RandomGaussianBlur(data_format="channels_first").transform_images(np.transpose(IMG, (0, 3, 1, 2)), {"should_apply_blur": np.array([True, True]), "blur_factor": np.array([1.0, 2.0], "float32")}),
           (2, 3, 5, 6), [83.08599853515625, 97.02400207519531, 84.9469985961914, 84.6780014038086, 79.0459976196289], 18374.92)
    _check(L.RandomErasing().transform_images(IMG, {"apply_erasing": np.array([True, True]), "batch_masks": MASK, "fill_value": np.full((2, 5, 6, 3), 9.0, "float32")}),
           (2, 5, 6, 3), [139.94700622558594, 182.3730010986328, 153.7050018310547, 138.94500732421875, 108.03199768066406], 19928.73)


SEEDED = [  # sums of two batched calls and one call on IMG[0] of a seeded layer, and its config, from Keras 3.15.1
    ('RandomGaussianBlur(seed=3)', 22024.2, 23138.7, 11100.8,
     '{"trainable": true, "data_format": "channels_last", "factor": [0, 1.0], "kernel_size": [3, 3], "sigma": [0, 1.0], "value_range": [0, 255], "seed": 3}'),
    ('RandomGaussianBlur(0.5, kernel_size=(3, 5), sigma=(0.2, 0.9), seed=4)', 22035.1, 23161.0, 11100.8,
     '{"trainable": true, "data_format": "channels_last", "factor": [0, 0.5], "kernel_size": [3, 5], "sigma": [0.2, 0.9], "value_range": [0, 255], "seed": 4}'),
    ('RandomErasing(seed=5, fill_value=0)', 21724.0, 21130.8, 10134.8,
     '{"trainable": true, "data_format": "channels_last", "factor": [0, 1.0], "scale": [0.02, 0.33], "fill_value": 0, "value_range": [0, 255], "seed": 5}'),
    ('RandomErasing(0.6, scale=(0.1, 0.5), fill_value=(10, 20, 30), seed=6)', 23161.0, 21136.0, 8853.4,
     '{"trainable": true, "data_format": "channels_last", "factor": [0, 0.6], "scale": [0.1, 0.5], "fill_value": [10, 20, 30], "value_range": [0, 255], "seed": 6}'),
    ('RandomErasing(seed=7)', 22352.9, 23161.0, 10969.9,
     '{"trainable": true, "data_format": "channels_last", "factor": [0, 1.0], "scale": [0.02, 0.33], "fill_value": null, "value_range": [0, 255], "seed": 7}'),
]


@pytest.mark.parametrize("expr, first, second, single, config", SEEDED, ids=[s[0] for s in SEEDED])
def test_seeded_draws_and_configs_are_keras(expr, first, second, single, config):
    layer = eval("L." + expr)
    assert float(np.asarray(layer(IMG)).sum()) == pytest.approx(first, abs=0.2)
    assert float(np.asarray(layer(IMG)).sum()) == pytest.approx(second, abs=0.2)
    assert float(np.asarray(layer(IMG[0])).sum()) == pytest.approx(single, abs=0.2)
    np.testing.assert_array_equal(np.asarray(layer(IMG, training=False)), IMG)
    got = layer.get_config()
    got.pop("dtype")
    got.pop("name")
    assert json.loads(json.dumps(got)) == json.loads(config)
    assert type(layer).from_config(layer.get_config()).get_config() == layer.get_config()


@pytest.mark.parametrize("expr, message", [
    ("L.RandomGaussianBlur(kernel_size=4)", "kernel_size must be an odd number. Received: kernel_size=4"),
    ("L.RandomGaussianBlur(sigma=2)", "The `sigma` argument should be a number (or a list of two numbers) in the range [0, 1]. Received: factor=2"),
    ("L.RandomErasing(scale=(0.1, 2, 3))", "The `scale` argument should be a number (or a list of two numbers) in the range [0, 1]. Received: factor=(0.1, 2, 3)"),
])
def test_bad_arguments_raise_keras_errors(expr, message):
    with pytest.raises(ValueError) as e:
        eval(expr)
    assert str(e.value) == message
