# ruff: noqa: E501 -- pinned Keras values, one case per line
"""Keras 3.15's colour augmentation layers (RandomGrayscale, RandomInvert, Solarization, RandomPosterization,
AutoContrast, RandomColorDegeneration, RandomSharpness, RandomSaturation, RandomHue) against values pinned from
real Keras (TF backend): ``transform_images`` at fixed transformations gives Keras's pixels, and seeded layers
draw Keras's transformations (tests never import TF/Keras)."""

import json

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras
L = tf.keras.layers
RS = np.random.RandomState(0)
IMG = (RS.rand(2, 5, 6, 3) * 255).astype("float32")
IMG[1, :, :, 1] = 7.0  # a flat channel
IMG01 = IMG / 255.0
SEED_IMG = (np.random.RandomState(0).rand(4, 5, 6, 3) * 255).astype("float32")


def _check(out, shape, head, total):
    out = np.asarray(out)
    assert out.shape == shape and out.dtype == np.float32
    np.testing.assert_allclose(out.ravel()[:5], head, atol=2e-3)
    assert float(out.astype("float64").sum()) == pytest.approx(total, rel=2e-6, abs=0.02)


def _f32(*v):
    return np.array(v, "float32")


CASES = [  # (label, layer, images, transformation, shape, first values, sum) from Keras 3.15.1
    ("gray", lambda: L.RandomGrayscale(), lambda: IMG, lambda: np.array([True, False]).reshape(2, 1, 1, 1),
     (2, 5, 6, 3), [166.406005859375, 166.406005859375, 166.406005859375, 123.72200012207031, 123.72200012207031], 18918.44),
    ("invert", lambda: L.RandomInvert(), lambda: IMG, lambda: {"apply_inversion": np.array([False, True])},
     (2, 5, 6, 3), [139.94700622558594, 182.3730010986328, 153.7050018310547, 138.94500732421875, 108.03199768066406], 25753.08),
    ("invert01", lambda: L.RandomInvert(value_range=(0, 1)), lambda: IMG, lambda: {"apply_inversion": np.array([True, True])},
     (2, 5, 6, 3), [-138.94700622558594, -181.3730010986328, -152.7050018310547, -137.94500732421875, -107.03199768066406], -19218.46),
    ("solar", lambda: L.Solarization(), lambda: IMG, lambda: {"additions": _f32(10, 40).reshape(2, 1, 1, 1), "thresholds": _f32(128, 60).reshape(2, 1, 1, 1)},
     (2, 5, 6, 3), [105.0530014038086, 62.62699890136719, 91.29499816894531, 106.05500030517578, 118.03199768066406], 11301.31),
    ("solar01", lambda: L.Solarization(value_range=(0, 1)), lambda: IMG, lambda: {"additions": _f32(0, 20).reshape(2, 1, 1, 1), "thresholds": _f32(100, 200).reshape(2, 1, 1, 1)},
     (2, 5, 6, 3), [0.0, 0.0, 0.0, 0.0, 0.0], 0.0),
    ("poster", lambda: L.RandomPosterization(4), lambda: IMG, lambda: {"shift_factor": np.array([4, 6], "uint8")},
     (2, 5, 6, 3), [128.0, 176.0, 144.0, 128.0, 96.0], 16624.0),
    ("autoc", lambda: L.AutoContrast(), lambda: IMG, lambda: None,
     (2, 5, 6, 3), [138.60699462890625, 183.1529998779297, 149.39700317382812, 137.53799438476562, 106.47899627685547], 19336.63),
    ("degen", lambda: L.RandomColorDegeneration(0.5), lambda: IMG, lambda: {"factor": _f32(0.3, -0.4).reshape(2, 1, 1, 1)},
     (2, 5, 6, 3), [147.88499450683594, 177.58299255371094, 157.51499938964844, 134.3780059814453, 112.73899841308594], 20452.32),
    ("sharp", lambda: L.RandomSharpness(0.5), lambda: IMG, lambda: {"factor": _f32(0.1, 0.9)},
     (2, 5, 6, 3), [104.35199737548828, 120.13200378417969, 115.7750015258789, 112.62799835205078, 111.0], 18635.79),
    ("satur", lambda: L.RandomSaturation(0.5), lambda: IMG, lambda: {"factor": _f32(0.5, 2.0)},
     (2, 5, 6, 3), [161.16000366210938, 182.3730010986328, 168.03900146484375, 151.82400512695312, 136.3679962158203], 14898.32),
    ("hue", lambda: L.RandomHue(0.5), lambda: IMG, lambda: {"factor": _f32(0.2, -0.35)},
     (2, 5, 6, 3), [139.94700622558594, 160.13099670410156, 182.3730010986328, 164.7030029296875, 108.03199768066406], 19643.3),
    ("satur01", lambda: L.RandomSaturation(0.5, value_range=(0, 1)), lambda: IMG01, lambda: {"factor": _f32(0.25, 3.0)},
     (2, 5, 6, 3), [0.6740000247955322, 0.7149999737739563, 0.6869999766349792, 0.6209999918937683, 0.5899999737739563], 91.57),
    ("autoc01", lambda: L.AutoContrast(value_range=(0, 1)), lambda: IMG01, lambda: None,
     (2, 5, 6, 3), [0.5440000295639038, 0.7179999947547913, 0.5860000252723694, 0.5389999747276306, 0.4180000126361847], 75.83),
    ("hue01", lambda: L.RandomHue(0.5, value_range=(0, 1)), lambda: IMG01, lambda: {"factor": _f32(0.5, 0.1)},
     (2, 5, 6, 3), [0.7149999737739563, 0.5490000247955322, 0.6610000133514404, 0.5249999761581421, 0.6460000276565552], 76.82),
    ("sharp_cf", lambda: L.RandomSharpness(0.5, data_format="channels_first"), lambda: np.transpose(IMG, (0, 3, 1, 2)), lambda: {"factor": _f32(0.1, 0.9)},
     (2, 3, 5, 6), [104.35199737548828, 112.62799835205078, 100.43900299072266, 86.25299835205078, 108.81999969482422], 18635.79),
    ("hue_cf", lambda: L.RandomHue(0.5, data_format="channels_first"), lambda: np.transpose(IMG, (0, 3, 1, 2)), lambda: {"factor": _f32(0.2, -0.35)},
     (2, 3, 5, 6), [139.94700622558594, 164.7030029296875, 156.7469940185547, 97.77799987792969, 18.11400032043457], 19643.3),
]


@pytest.mark.parametrize("label, layer, images, transformation, shape, head, total", CASES, ids=[c[0] for c in CASES])
def test_transform_images_is_keras(label, layer, images, transformation, shape, head, total):
    _check(layer().transform_images(images(), transformation(), training=True), shape, head, total)


def test_calls_training_and_inference():
    _check(L.RandomGrayscale(1.0)(IMG[0]), (5, 6, 3), [166.406005859375, 166.406005859375, 166.406005859375, 123.72200012207031, 123.72200012207031], 10620.76)
    _check(L.RandomGrayscale(0.0)(IMG), (2, 5, 6, 3), [139.94700622558594, 182.3730010986328, 153.7050018310547, 138.94500732421875, 108.03199768066406], 19398.46)
    _check(L.RandomInvert()(IMG, training=False), (2, 5, 6, 3), [139.94700622558594, 182.3730010986328, 153.7050018310547, 138.94500732421875, 108.03199768066406], 19398.46)
    _check(L.AutoContrast()(IMG, training=False), (2, 5, 6, 3), [138.60699462890625, 183.1529998779297, 149.39700317382812, 137.53799438476562, 106.47899627685547], 19336.63)
    _check(L.RandomInvert(factor=(1.0, 1.0))(IMG.astype("uint8")), (2, 5, 6, 3), [116.0, 73.0, 102.0, 117.0, 147.0], 26580.0)


SEEDED = [  # the sums of two successive calls of a seeded layer on SEED_IMG, from Keras 3.15.1
    ("RandomInvert(0.5, seed=3)", 45001.5, 43831.0),
    ("RandomGrayscale(0.5, seed=4)", 44745.3, 44525.4),
    ("Solarization(0.3, 0.6, seed=5)", 22685.7, 22823.7),
    ("RandomPosterization((2, 7), seed=6)", 42780.0, 41172.0),
    ("RandomColorDegeneration(0.7, seed=7)", 44825.8, 45412.9),
    ("RandomSharpness(0.6, seed=8)", 41468.7, 40781.4),
    ("RandomSaturation(0.6, seed=9)", 64236.1, 53658.2),
    ("RandomHue(0.6, seed=10)", 45645.1, 45931.0),
]


@pytest.mark.parametrize("expr, first, second", SEEDED, ids=[s[0] for s in SEEDED])
def test_seeded_draws_are_keras(expr, first, second):
    layer = eval("L." + expr)
    assert float(np.asarray(layer(SEED_IMG)).sum()) == pytest.approx(first, abs=0.2)
    assert float(np.asarray(layer(SEED_IMG)).sum()) == pytest.approx(second, abs=0.2)


@pytest.mark.parametrize("expr, message", [
    ("L.RandomGrayscale(1.5)", "`factor` should be between 0 and 1. Received: factor=1.5"),
    ("L.RandomInvert(2)", "The `factor` argument should be a number (or a list of two numbers) in the range [0, 1]. "
                          "Received: factor=2"),
    ("L.Solarization(addition_factor=2)", "The `addition_factor` and `threshold_factor` arguments should be a number "
                                          "(or a list of two numbers) in the range [0, 1]. Received: input_number=2"),
    ("L.RandomPosterization(9)", "The `factor` argument should be a number (or a list of two numbers) in the range "
                                 "[1, 8]. Received: factor=9"),
    ("L.AutoContrast(value_range=3)", "The `value_range` argument should be a list of two numbers. Received: "
                                      "value_range=3"),
    ("L.RandomHue(1.5)", "The `factor` argument should be a number (or a list of two numbers) in the range [0, 1]. "
                         "Received: factor=1.5"),
])
def test_bad_arguments_raise_keras_errors(expr, message):
    with pytest.raises(ValueError) as e:
        eval(expr)
    assert str(e.value) == message


CONFIGS = [  # get_config() less dtype, as JSON, from Keras 3.15.1
    ('RandomGrayscale()',
     '{"name": "random_grayscale", "trainable": true, "data_format": "channels_last", "factor": 0.5}'),
    ('RandomGrayscale(0.3, seed=1)',
     '{"name": "random_grayscale_1", "trainable": true, "data_format": "channels_last", "factor": 0.3}'),
    ('RandomInvert()',
     '{"name": "random_invert", "trainable": true, "data_format": "channels_last", "factor": [0, 1.0], "value_range": [0, 255], "seed": null}'),
    ('RandomInvert(0.5, value_range=(0, 1), seed=2)',
     '{"name": "random_invert_1", "trainable": true, "data_format": "channels_last", "factor": [0, 0.5], "value_range": [0, 1], "seed": 2}'),
    ('Solarization()',
     '{"name": "solarization", "trainable": true, "data_format": "channels_last", "value_range": [0, 255], "addition_factor": [0, 0.0], "threshold_factor": [0, 0.0], "seed": null}'),
    ('Solarization(addition_factor=0.2, threshold_factor=(0.1, 0.5), value_range=[0, 1])',
     '{"name": "solarization_1", "trainable": true, "data_format": "channels_last", "value_range": [0, 1], "addition_factor": [0, 0.2], "threshold_factor": [0.1, 0.5], "seed": null}'),
    ('RandomPosterization(4)',
     '{"name": "random_posterization", "trainable": true, "data_format": "channels_last", "factor": [1, 4], "value_range": [0, 255], "seed": null}'),
    ('RandomPosterization((2, 6), value_range=(0, 1))',
     '{"name": "random_posterization_1", "trainable": true, "data_format": "channels_last", "factor": [2, 6], "value_range": [0, 1], "seed": null}'),
    ('AutoContrast()',
     '{"name": "auto_contrast", "trainable": true, "data_format": "channels_last", "value_range": [0, 255]}'),
    ('AutoContrast(value_range=(1, 0))',
     '{"name": "auto_contrast_1", "trainable": true, "data_format": "channels_last", "value_range": [0, 1]}'),
    ('RandomColorDegeneration(0.5)',
     '{"name": "random_color_degeneration", "trainable": true, "data_format": "channels_last", "factor": [-0.5, 0.5], "value_range": [0, 255], "seed": null}'),
    ('RandomColorDegeneration((0.2, 0.7))',
     '{"name": "random_color_degeneration_1", "trainable": true, "data_format": "channels_last", "factor": [0.2, 0.7], "value_range": [0, 255], "seed": null}'),
    ('RandomSharpness(0.5)',
     '{"name": "random_sharpness", "trainable": true, "data_format": "channels_last", "factor": [0, 0.5], "value_range": [0, 255], "seed": null}'),
    ('RandomSaturation(0.5)',
     '{"name": "random_saturation", "trainable": true, "data_format": "channels_last", "factor": [-0.5, 0.5], "value_range": [0, 255], "seed": null}'),
    ('RandomSaturation((0.2, 0.8))',
     '{"name": "random_saturation_1", "trainable": true, "data_format": "channels_last", "factor": [0.2, 0.8], "value_range": [0, 255], "seed": null}'),
    ('RandomHue(0.5)',
     '{"name": "random_hue", "trainable": true, "data_format": "channels_last", "factor": [0, 0.5], "value_range": [0, 255], "seed": null}'),
    ('RandomHue((0.1, 0.4), value_range=(0, 1))',
     '{"name": "random_hue_1", "trainable": true, "data_format": "channels_last", "factor": [0.1, 0.4], "value_range": [0, 1], "seed": null}'),
]


@pytest.mark.parametrize("expr, config", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_configs_are_keras(expr, config):
    K.backend.clear_session()
    layer = eval("L." + expr)
    got = layer.get_config()
    got.pop("dtype")
    want = json.loads(config)
    want.pop("name")
    got.pop("name")
    assert json.loads(json.dumps(got)) == want
    again = type(layer).from_config(layer.get_config()).get_config()
    assert again == layer.get_config()


def test_in_a_model_saved_and_loaded(tmp_path):
    K.backend.clear_session()
    model = K.Sequential([K.Input((5, 6, 3)), L.RandomGrayscale(0.5, seed=1), L.RandomHue(0.2, seed=2),
                          L.RandomSaturation(0.3, seed=3), L.AutoContrast(), L.Conv2D(2, 3)])
    assert model.output_shape == (None, 3, 4, 2)
    path = str(tmp_path / "aug.keras")
    model.save(path)
    loaded = K.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(IMG, verbose=0), model.predict(IMG, verbose=0), rtol=1e-5)
    assert [type(layer).__name__ for layer in loaded.layers] == ["RandomGrayscale", "RandomHue", "RandomSaturation",
                                                                 "AutoContrast", "Conv2D"]
    invert = L.RandomInvert(seed=1)
    ds = tf.data.Dataset.from_tensor_slices(IMG).batch(2).map(lambda x: invert(x))
    assert next(iter(ds)).shape == (2, 5, 6, 3)


JITTER = [  # (arguments, first values of the first call, sums of two calls) on SEED_IMG (value_range=(0, 1): / 255)
    ({'brightness_factor': (0.1, 0.1)}, [165.44700622558594, 207.8730010986328, 179.2050018310547, 164.44500732421875], 53698.9, 53698.9),
    ({'contrast_factor': (0.0, 0.0), 'brightness_factor': (-0.2, -0.2)}, [88.9469985961914, 131.3730010986328, 102.70500183105469, 87.94499969482422], 28585.91, 28585.91),
    ({'saturation_factor': (0.7, 0.7)}, [83.37999725341797, 182.3730010986328, 115.4800033569336, 104.60099792480469], 13973.54, 13973.54),
    ({'brightness_factor': (0.1, 0.1), 'saturation_factor': (0.3, 0.3)}, [189.6909942626953, 207.8730010986328, 195.58700561523438, 179.16400146484375], 66501.73, 66501.73),
    ({'brightness_factor': 0.2, 'contrast_factor': 0.3, 'saturation_factor': (0.4, 0.6), 'hue_factor': 0.1, 'seed': 3}, [95.19599914550781, 159.8209991455078, 107.27200317382812, 95.69000244140625], 49354.98, 39301.57),
    ({'hue_factor': 0.3, 'seed': 4, 'value_range': (0, 1)}, [0.5490000247955322, 0.7149999737739563, 0.5529999732971191, 0.4790000021457672], 178.23, 179.93),
]


@pytest.mark.parametrize("kwargs, head, first, second", JITTER)
def test_color_jitter_is_keras(kwargs, head, first, second):
    layer = L.RandomColorJitter(**kwargs)
    x = SEED_IMG if "value_range" not in kwargs else SEED_IMG / 255
    a = np.asarray(layer(x))
    np.testing.assert_allclose(a.ravel()[:4], head, atol=2e-3)
    assert float(a.sum()) == pytest.approx(first, abs=0.05)
    assert float(np.asarray(layer(x)).sum()) == pytest.approx(second, abs=0.05)
    np.testing.assert_array_equal(np.asarray(layer(x, training=False)), x)


def test_pipeline_applies_its_layers_and_saves_as_keras(tmp_path):
    K.backend.clear_session()
    pipe = L.Pipeline([L.Rescaling(0.5), L.Dense(2, name="d")], name="pipe")
    model = K.Sequential([K.Input((3,)), pipe])
    assert pipe.layers[1].name == "d" and model.output_shape == (None, 2)
    assert [w.path for w in model.weights] == ["sequential/pipe/d/kernel", "sequential/pipe/d/bias"]
    config = pipe.get_config()
    assert list(config) == ["layers", "name"] and config["name"] == "pipe"
    assert [c["class_name"] for c in config["layers"]] == ["Rescaling", "Dense"]
    x = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_allclose(pipe(x).numpy(), pipe.layers[1](x * 0.5).numpy(), rtol=1e-6)
    path = str(tmp_path / "pipe.keras")
    model.save(path)
    import io
    import zipfile

    h5py = pytest.importorskip("h5py")
    with zipfile.ZipFile(path) as z, h5py.File(io.BytesIO(z.read("model.weights.h5")), "r") as f:
        names = []
        f.visititems(lambda name, obj: names.append(name))
    # Keras 3.15 writes the pipeline's layers under its `layers` property
    assert "layers/pipeline/layers/dense/vars/0" in names and "layers/pipeline/layers/rescaling/vars" in names
    loaded = K.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    with pytest.raises(ValueError, match="`Pipeline` config must contain a `layers` key"):
        L.Pipeline.from_config({"name": "p"})
    augment = L.Pipeline([L.RandomInvert(factor=(1.0, 1.0)), L.RandomGrayscale(0.0)])
    np.testing.assert_allclose(augment(SEED_IMG).numpy(), 255 - SEED_IMG, rtol=1e-6)
    np.testing.assert_array_equal(augment(SEED_IMG, training=False).numpy(), SEED_IMG)
