"""MixUp, CutMix, RandAugment, AugMix and RandomElasticTransform as Keras 3.15 (TF backend): the same seed
draws the same permutations, weights, layer choices and fields, so the pixels and labels of two training calls in
a row (and of a ``training=False`` call) equal Keras's, pinned in tests/fixtures/keras/mix/ by
tools/keras_augment_mix/make_fixture.py; configs as Keras serializes them. RandAugment and AugMix pass through
RandomRotation, whose float32 rounding differs from TF's in the last bits (NumPy's sin/cos): their pixels are
compared to 1e-6 of the value range."""

import json
import os

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers
HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras", "mix")
with open(os.path.join(HERE, "cases_keras315.json")) as _f:
    META = json.load(_f)

# the factories of make_fixture.py's CASES, here with tapeflow's layers
CASES = {
    "mixup": lambda: L.MixUp(alpha=0.4, seed=3),
    "mixup_default": lambda: L.MixUp(),
    "mixup_single": lambda: L.MixUp(alpha=0.3, seed=5),
    "mixup_cf": lambda: L.MixUp(seed=6, data_format="channels_first"),
    "cutmix": lambda: L.CutMix(seed=4),
    "cutmix_factor": lambda: L.CutMix(factor=(0.2, 0.6), seed=7),
    "cutmix_cf": lambda: L.CutMix(0.5, seed=8, data_format="channels_first"),
    "cutmix_default": lambda: L.CutMix(),
    "randaugment": lambda: L.RandAugment(seed=3),
    "randaugment_custom": lambda: L.RandAugment(value_range=(0, 1), num_ops=3, factor=0.3, interpolation="nearest",
                                                seed=4),
    "randaugment_default": lambda: L.RandAugment(),
    "augmix": lambda: L.AugMix(seed=5),
    "augmix_custom": lambda: L.AugMix(value_range=(0, 1), num_chains=2, chain_depth=2, factor=0.5, alpha=0.5,
                                      all_ops=False, seed=6),
    "augmix_default": lambda: L.AugMix(),
    "elastic": lambda: L.RandomElasticTransform(seed=9),
    "elastic_custom": lambda: L.RandomElasticTransform(factor=(0.5, 1.0), scale=(0.5, 0.9), interpolation="nearest",
                                                       fill_mode="constant", fill_value=3.0, value_range=(0, 1),
                                                       seed=10),
    "elastic_cf": lambda: L.RandomElasticTransform(scale=0.7, fill_mode="wrap", seed=11,
                                                   data_format="channels_first"),
    "elastic_single": lambda: L.RandomElasticTransform(fill_mode="nearest", seed=12),
    "elastic_default": lambda: L.RandomElasticTransform(),
}
ROUNDED = ("randaugment", "augmix")  # through RandomRotation: last-bit float32 differences


def _fixture(name):
    return np.load(os.path.join(HERE, f"{name}.npz"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_pixels_labels_and_config_equal_keras(name):
    f = _fixture(name)
    tf.keras.backend.clear_session()
    tf.keras.utils.set_random_seed(1)
    layer = CASES[name]()
    for i, training in enumerate((True, True, False)):
        data = {"images": f["x"].copy(), "labels": f["y"].copy()} if "y" in f else f["x"].copy()
        out = layer(data, training=training)
        if "y" in f:
            assert out is data  # Keras transforms the dict's entries in place
            np.testing.assert_array_equal(out["labels"].numpy(), f[f"labels_{i}"])
            out = out["images"]
        if name.startswith(ROUNDED):
            scale = float(np.max(f["x"]))
            np.testing.assert_allclose(out.numpy(), f[f"images_{i}"], rtol=0, atol=1e-6 * 255 * scale)
        else:
            np.testing.assert_array_equal(out.numpy(), f[f"images_{i}"])
    config = json.loads(json.dumps(tf.keras.saving.serialize_keras_object(layer)))
    assert config["config"] == META[name]["config"]
    assert config["build_config"] == META[name]["build_config"]
    again = type(layer).from_config(layer.get_config())
    assert again.get_config() == layer.get_config()


def test_mixup_in_tf_data_map_and_in_a_saved_model(tmp_path):
    f = _fixture("mixup")
    tf.keras.utils.set_random_seed(1)
    layer = L.MixUp(alpha=0.4, seed=3)
    ds = tf.data.Dataset.from_tensor_slices((f["x"], f["y"])).batch(4)
    out = next(iter(ds.map(lambda x, y: layer({"images": x, "labels": y}))))
    np.testing.assert_array_equal(out["images"].numpy(), f["images_0"])
    np.testing.assert_array_equal(out["labels"].numpy(), f["labels_0"])
    inp = tf.keras.Input((5, 6, 3))
    model = tf.keras.Model(inp, L.MixUp(alpha=0.4, seed=3, name="mix")(inp))
    np.testing.assert_array_equal(model(f["x"], training=True).numpy(), f["images_0"])
    np.testing.assert_array_equal(model.predict(f["x"], verbose=0), f["x"])  # inference: unchanged
    path = os.path.join(tmp_path, "mix.keras")
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    assert loaded.get_layer("mix").get_config() == model.get_layer("mix").get_config()


def test_cutmix_in_tf_function_with_unknown_batch_and_gradients():
    f = _fixture("cutmix")
    tf.keras.utils.set_random_seed(1)
    layer = L.CutMix(seed=4)
    fn = tf.function(lambda x, y: layer({"images": x, "labels": y}, training=True),
                     input_signature=[tf.TensorSpec([None, 6, 7, 3]), tf.TensorSpec([None, 3])])
    out = fn(f["x"], f["y"])
    np.testing.assert_array_equal(out["images"].numpy(), f["images_0"])
    np.testing.assert_array_equal(out["labels"].numpy(), f["labels_0"])
    x = tf.constant(f["x"])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(L.MixUp(seed=1)(x, training=True))
    # each output is w * x_i + (1 - w) * x_perm(i): the weights of every image sum to one per pixel
    np.testing.assert_allclose(tape.gradient(y, x).numpy().sum(), x.shape.num_elements(), rtol=1e-5)
    assert L.CutMix(seed=4)(f["x"][0], training=True).shape == (6, 7, 3)  # one image: unchanged
    with pytest.raises(NotImplementedError, match="bounding_boxes"):
        L.MixUp()({"images": f["x"], "bounding_boxes": {}})
    with pytest.raises(ValueError, match=r"The `factor` argument should be a number \(or a list of two numbers\) "
                                         r"in the range \[0, 1\]. Received: factor=2"):
        L.CutMix(2)


@pytest.mark.parametrize("name, make", [("elastic", lambda: L.RandomElasticTransform(seed=9)),
                                        ("randaugment", lambda: L.RandAugment(seed=3)),
                                        ("augmix", lambda: L.AugMix(seed=5))])
def test_policies_and_elastic_in_tf_data_and_saved_models(tmp_path, name, make):
    f = _fixture(name)
    tf.keras.backend.clear_session()
    tf.keras.utils.set_random_seed(1)
    layer = make()
    out = next(iter(tf.data.Dataset.from_tensor_slices(f["x"]).batch(len(f["x"])).map(lambda x: layer(x))))
    np.testing.assert_allclose(out.numpy(), f["images_0"], rtol=0, atol=1e-4)
    inp = tf.keras.Input(f["x"].shape[1:])
    model = tf.keras.Model(inp, make()(inp))
    np.testing.assert_array_equal(model.predict(f["x"], verbose=0), f["x"])  # inference: unchanged
    path = os.path.join(tmp_path, f"{name}.keras")
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    assert type(loaded.layers[1]) is type(model.layers[1])
    assert json.dumps(loaded.layers[1].get_config()) == json.dumps(
        json.loads(json.dumps(model.layers[1].get_config())))


def test_elastic_gradients_sub_layers_and_errors():
    x = tf.constant(_fixture("elastic")["x"])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(L.RandomElasticTransform(seed=9, value_range=(0, 1000))(x, training=True))
    # bilinear resampling: each output pixel's weights sum to one, so the gradient sums to the pixel count
    np.testing.assert_allclose(float(tf.reduce_sum(tape.gradient(y, x))), x.shape.num_elements(), rtol=1e-5)
    aug = L.AugMix(seed=1, all_ops=False)
    assert [type(getattr(aug, n)).__name__ for n in aug._names] == [
        "RandomShear", "RandomTranslation", "RandomRotation", "RandomPosterization", "Solarization", "AutoContrast",
        "Equalization"]
    assert tuple(aug.random_posterization.get_config()["factor"]) == (1, 2)  # factor=max(1, int(8 * 0.3))
    with pytest.raises(NotImplementedError, match=r"Unknown `fill_mode` bad. Expected of one"):
        L.RandomElasticTransform(fill_mode="bad")
    with pytest.raises(ValueError, match=r"The `scale` argument should be a number \(or a list of two numbers\) in "
                                         r"the range \[0, 1\]. Received: factor=2"):
        L.RandomElasticTransform(scale=2)
