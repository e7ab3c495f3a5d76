"""``tf.keras.applications``' later families (MobileNetV3, EfficientNetV2, ...) against Keras 3.15.1: in
small configurations each model has Keras's layer names, weight shapes, parameter count and output
shapes (what loading Keras's ImageNet weight files relies on) and, with every weight set to the same
pattern, Keras's predictions (fixture: tools/keras_applications/make_fixture.py ... more)."""

from __future__ import annotations

import importlib.util
import json
import os

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = np.load(os.path.join(ROOT, "tests", "fixtures", "keras", "applications_more_keras315.npz"))
META = json.loads(str(DATA["meta"]))
_spec = importlib.util.spec_from_file_location("apps_fixture", os.path.join(ROOT, "tools", "keras_applications",
                                                                            "make_fixture.py"))
FIXTURE = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(FIXTURE)


@pytest.mark.parametrize("key", sorted(META))
def test_later_application_models_match_keras(key, monkeypatch):
    meta = META[key]
    if key.startswith("efficientnetv2") and key != "efficientnetv2b0":
        # every weight is overwritten below: skip TF's exact truncated-normal draws, the bulk of building time
        monkeypatch.setattr(K.applications.efficientnet_v2, "CONV_KERNEL_INITIALIZER", "zeros")
    K.backend.clear_session()
    kwargs = dict(meta["kwargs"])
    kwargs["input_shape"] = tuple(kwargs["input_shape"])
    model = getattr(K.applications, meta["cls"])(**kwargs)
    assert model.name == meta["name"]
    assert [[layer.name, [list(w.shape) for w in layer.weights]] for layer in model.layers] == meta["layers"]
    assert model.count_params() == meta["params"]
    assert [list(layer.output.shape) for layer in model.layers] == meta["outputs"]  # summary()'s shapes
    FIXTURE.fill(model)
    y = model.predict(FIXTURE.batch(kwargs["input_shape"]), verbose=0)
    want = DATA[f"{key}_y"]
    np.testing.assert_allclose(y, want, rtol=2e-4, atol=2e-4 * float(np.abs(want).max()))


def test_argument_errors_word_for_word_as_keras():
    A = K.applications
    with pytest.raises(ValueError, match=r"^The `weights` argument .* `imagenet` .* to be loaded.  "
                                         r"Received weights=WW$"):
        A.MobileNetV3Small(weights="WW")
    with pytest.raises(ValueError, match=r"^If using `weights=\"imagenet\"` with `include_top` as true, `classes` "
                                         r"should be 1000.  Received classes=10$"):
        A.MobileNetV3Small(classes=10)
    with pytest.raises(ValueError, match=r"^Input size must be at least 32x32; Received `input_shape=\(16, 40, 3\)`$"):
        A.MobileNetV3Large(weights=None, input_shape=(16, 40, 3))
    for kwargs in (dict(alpha=0.5, include_top=False), dict(alpha=0.75, minimalistic=True)):
        with pytest.raises(ValueError, match=r"^If imagenet weights are being loaded, alpha can be one of `0.75`, "
                                             r"`1.0` for non minimalistic or `1.0` for minimalistic only.$"):
            A.MobileNetV3Large(**kwargs)
    with pytest.raises(ValueError, match=r"to be loaded.Received: weights=WW$"):
        A.EfficientNetV2B0(weights="WW")
    with pytest.raises(ValueError, match=r"^If using `weights=\"imagenet\"` with `include_top` as true, `classes` "
                                         r"should be 1000$"):
        A.EfficientNetV2S(classes=10)
    with pytest.raises(ValueError, match=r"^Input size must be at least 32x32; Received: input_shape=\(16, 16, 3\)$"):
        A.EfficientNetV2M(weights=None, input_shape=(16, 16, 3), include_top=False)
    with pytest.raises(ValueError, match=r"^If `include_top` is True, you should specify a static `input_shape`. "
                                         r"Received: input_shape=\(None, None, 3\)$"):
        A.EfficientNetV2B1(weights=None, input_shape=(None, None, 3))
    x = np.array([[[[0.0, 127.5, 255.0]]]], "float32")
    for mod in (A.mobilenet_v3, A.efficientnet_v2):
        assert mod.preprocess_input(x) is x  # the models rescale their inputs themselves


def test_defaults_and_input_tensor_as_keras():
    # pinned from Keras 3.15.1: MobileNetV3 takes any input size by default (no static shape needed)
    K.backend.clear_session()
    m = K.applications.MobileNetV3Small(weights=None)
    assert (m.name, m.count_params(), len(m.layers), m.input_shape, m.output_shape) == (
        "MobileNetV3Small", 2554968, 164, (None, None, None, 3), (None, 1000))
    m = K.applications.MobileNetV3Small(weights=None, input_tensor=K.Input((64, 48, 3)), include_top=False)
    assert (m.input_shape, m.output_shape) == ((None, 64, 48, 3), (None, 2, 2, 576))


def test_imagenet_weight_files_are_keras_own(monkeypatch, tmp_path):
    # weights="imagenet" asks get_file for Keras's file names, URLs, hashes and cache folder
    asked = []

    def get_file(fname, origin, cache_subdir, file_hash):
        asked.append((fname, origin, cache_subdir, file_hash))
        raise OSError("no network in tests")

    import tapeflow.keras.file_utils as file_utils

    monkeypatch.setattr(file_utils, "get_file", get_file)
    with pytest.raises(OSError), pytest.warns(UserWarning, match=r"or `rows` is not 224. Weights for input shape "
                                                                  r"\(224, 224\) will be loaded as the default."):
        K.applications.MobileNetV3Small(input_shape=(32, 32, 3), alpha=0.75, include_top=False)
    with pytest.raises(OSError):
        K.applications.MobileNetV3Large(input_shape=(224, 224, 3), minimalistic=True)
    with pytest.raises(OSError):
        K.applications.EfficientNetV2B0(input_shape=(32, 32, 3), include_top=False)
    base = "https://storage.googleapis.com/tensorflow/keras-applications/"
    assert asked == [
        ("weights_mobilenet_v3_small_224_0.75_float_no_top_v2.h5",
         base + "mobilenet_v3/weights_mobilenet_v3_small_224_0.75_float_no_top_v2.h5", "models",
         "ebdb5cc8e0b497cd13a7c275d475c819"),
        ("weights_mobilenet_v3_large_minimalistic_224_1.0_float.h5",
         base + "mobilenet_v3/weights_mobilenet_v3_large_minimalistic_224_1.0_float.h5", "models",
         "675e7b876c45c57e9e63e6d90a36599c"),
        ("efficientnetv2-b0_notop.h5", base + "efficientnet_v2/efficientnetv2-b0_notop.h5", "models",
         "893217f2bb855e2983157299931e43ff")]


def test_convnext_inception_resnet_nasnet_errors_as_keras():
    A = K.applications
    loaded = r"^The `weights` argument should be either `None` \(random initialization\), `imagenet` " \
             r"\(pre-training on ImageNet\), or the path to the weights file to be loaded.$"
    for build in (A.ConvNeXtTiny, A.InceptionResNetV2, A.NASNetMobile):
        with pytest.raises(ValueError, match=loaded):
            build(weights="WW")
    for build in (A.ConvNeXtTiny, A.InceptionResNetV2):
        with pytest.raises(ValueError, match=r"^If using `weights=\"imagenet\"` with `include_top=True`, `classes` "
                                             r"should be 1000. Received classes=10$"):
            build(classes=10)
    with pytest.raises(ValueError, match=r"^If using `weights` as `\"imagenet\"` with `include_top` as true, "
                                         r"`classes` should be 1000$"):
        A.NASNetMobile(classes=10)
    with pytest.raises(ValueError, match=r"^Model name \"mine\" does not match weights variant \"convnext_small\". "
                                         r"When using imagenet weights, model name must contain the weights variant "
                                         r"\(e.g., \"convnext_small\"\).$"):
        A.ConvNeXtSmall(name="mine", include_top=False, input_shape=(32, 32, 3))
    with pytest.raises(ValueError, match=r"^Input size must be at least 75x75; Received: input_shape=\(74, 74, 3\)$"):
        A.InceptionResNetV2(weights=None, include_top=False, input_shape=(74, 74, 3))
    with pytest.raises(ValueError, match=r"^When specifying the input shape of a NASNet and loading `ImageNet` "
                                         r"weights, the input_shape argument must be static \(no None entries\). "
                                         r"Got: `input_shape=\(None, None, 3\)`.$"):
        A.NASNetLarge(input_shape=(None, None, 3), include_top=False)
    with pytest.raises(ValueError, match=r"the `penultimate_filters` must be a multiple of 24 \* "
                                         r"\(`filter_multiplier` \*\* 2\). Current value: 100$"):
        A.nasnet.NASNet(penultimate_filters=100, weights=None)
    x = np.array([[[[0.0, 127.5, 255.0]]]], "float32")
    for mod in (A.inception_resnet_v2, A.nasnet):
        np.testing.assert_allclose(mod.preprocess_input(x.copy()), [[[[-1.0, 0.0, 1.0]]]])
    assert A.convnext.preprocess_input(x) is x


def test_convnext_blocks_are_keras_own_layers():
    # the stem and downsampling blocks are nested Sequential models; LayerScale's weight is "variable", as Keras's
    K.backend.clear_session()
    m = K.applications.ConvNeXtTiny(weights=None, include_top=False, input_shape=(32, 32, 3), pooling="avg")
    stem, scale = m.get_layer("convnext_tiny_stem"), m.get_layer("convnext_tiny_stage_0_block_0_layer_scale")
    assert isinstance(stem, K.Sequential) and [w.path for w in stem.weights] == [
        "convnext_tiny_stem/convnext_tiny_stem_conv/kernel", "convnext_tiny_stem/convnext_tiny_stem_conv/bias",
        "convnext_tiny_stem/convnext_tiny_stem_layernorm/gamma", "convnext_tiny_stem/convnext_tiny_stem_layernorm/beta"]
    assert [w.path for w in scale.weights] == ["convnext_tiny_stage_0_block_0_layer_scale/variable"]
    np.testing.assert_allclose(scale.weights[0].numpy(), np.full(96, 1e-6, np.float32))
    assert scale.get_config()["init_values"] == 1e-6 and [x.name for x in m.layers[-2:]] == [
        "global_average_pooling2d", "layer_normalization"]


def test_keras2_weight_files_with_nested_models_load(tmp_path):
    # Keras's ImageNet files are Keras 2 weight files; a nested Sequential (ConvNeXt's stem) is one group whose
    # weight_names are its variables' paths, as real Keras 3.15 writes them (legacy_h5_format)
    h5py = pytest.importorskip("h5py")

    def small(weights):
        K.backend.clear_session()
        return K.applications.convnext.ConvNeXt(depths=[1, 1, 1, 1], projection_dims=[8, 16, 24, 32], weights=weights,
                                                include_top=False, input_shape=(32, 32, 3), name="convnext_small")

    model = small(None)
    FIXTURE.fill(model)
    path = str(tmp_path / "convnext_small_notop.h5")
    with h5py.File(path, "w") as f:
        f.attrs["layer_names"] = np.array([layer.name.encode() for layer in model.layers])
        f.attrs["backend"], f.attrs["keras_version"] = b"tensorflow", b"3.15.1"
        for layer in model.layers:
            g = f.create_group(layer.name)
            g.attrs["weight_names"] = np.array([w.path.encode() for w in layer.weights])
            for w in layer.weights:
                g.create_dataset(w.path, data=w.numpy())
    assert [n.decode() for n in h5py.File(path)["convnext_small_stem"].attrs["weight_names"]][:2] == [
        "convnext_small_stem/convnext_small_stem_conv/kernel", "convnext_small_stem/convnext_small_stem_conv/bias"]
    x = FIXTURE.batch((32, 32, 3))
    np.testing.assert_array_equal(small(path).predict(x, verbose=0), model.predict(x, verbose=0))


@pytest.mark.parametrize("cls, kwargs, name, layers, params, out", [
    # pinned from Keras 3.15.1 (the fixture's configurations cover the smallest of each family)
    ("NASNetMobile", {}, "nasnet_mobile", 771, 5326716, (None, 1000)),
    ("MobileNetV3Small", dict(input_shape=(48, 48, 3), minimalistic=True, alpha=1.5), "MobileNetV3Small", 110,
     3843696, (None, 1000)),
])
def test_other_variants_match_keras(cls, kwargs, name, layers, params, out):
    K.backend.clear_session()
    model = getattr(K.applications, cls)(weights=None, **kwargs)
    assert (model.name, len(model.layers), model.count_params(), model.output_shape) == (name, layers, params, out)
