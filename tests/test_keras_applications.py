"""``tf.keras.applications`` against Keras 3.15.1: each model (small configurations) has Keras's layer
names, weight shapes and parameter count — what loading Keras's weight files relies on — and, with
every weight set to the same pattern, Keras's predictions (fixture: tools/keras_applications/)."""

from __future__ import annotations

import importlib.util
import json
import os

import numpy as np
import pytest

import tapeflow as tf

K = tf.keras
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = np.load(os.path.join(ROOT, "tests", "fixtures", "keras", "applications_keras315.npz"))
META = json.loads(str(DATA["meta"]))
_spec = importlib.util.spec_from_file_location("apps_fixture", os.path.join(ROOT, "tools", "keras_applications",
                                                                            "make_fixture.py"))
FIXTURE = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(FIXTURE)


@pytest.mark.parametrize("key", sorted(META))
def test_application_models_match_keras(key):
    meta = META[key]
    K.backend.clear_session()
    kwargs = dict(meta["kwargs"])
    kwargs["input_shape"] = tuple(kwargs["input_shape"])
    model = getattr(K.applications, meta["cls"])(**kwargs)
    assert model.name == meta["name"]
    assert [[layer.name, [list(w.shape) for w in layer.weights]] for layer in model.layers] == meta["layers"]
    assert model.count_params() == meta["params"]
    assert [list(layer.output.shape) for layer in model.layers] == meta["outputs"]  # summary()'s shapes
    FIXTURE.fill(model)
    y = model.predict(DATA[f"{key}_x"], verbose=0)
    want = DATA[f"{key}_y"]
    np.testing.assert_allclose(y, want, rtol=2e-4, atol=2e-4 * float(np.abs(want).max()))


def test_weights_files_load_by_keras_names(tmp_path):
    K.backend.clear_session()
    model = K.applications.VGG16(include_top=False, weights=None, input_shape=(32, 32, 3), pooling="avg")
    FIXTURE.fill(model)
    path = str(tmp_path / "vgg.weights.h5")
    model.save_weights(path)
    again = K.applications.VGG16(include_top=False, weights=path, input_shape=(32, 32, 3), pooling="avg")
    x = DATA["vgg16_x"]
    np.testing.assert_array_equal(again.predict(x, verbose=0), model.predict(x, verbose=0))


def test_preprocess_input_modes():
    x = np.array([[[[0.0, 127.5, 255.0]]]], "float32")
    np.testing.assert_allclose(K.applications.mobilenet_v2.preprocess_input(x.copy()), [[[[-1.0, 0.0, 1.0]]]])
    # caffe: RGB -> BGR, ImageNet means subtracted; the same on tensors
    want = [[[[255.0 - 103.939, 127.5 - 116.779, 0.0 - 123.68]]]]
    np.testing.assert_allclose(K.applications.vgg16.preprocess_input(x.copy()), want, rtol=1e-6)
    np.testing.assert_allclose(K.applications.resnet50.preprocess_input(tf.constant(x)).numpy(), want, rtol=1e-6)
    torch = K.applications.imagenet_utils.preprocess_input(x.copy(), mode="torch")
    np.testing.assert_allclose(torch, [[[[-0.485 / 0.229, (0.5 - 0.456) / 0.224, (1 - 0.406) / 0.225]]]], rtol=1e-5)
    u8 = np.full((1, 1, 1, 3), 255, np.uint8)  # integer images become floatx first
    assert K.applications.mobilenet_v2.preprocess_input(u8).dtype == np.float32
    with pytest.raises(ValueError, match="Expected mode to be one of `caffe`, `tf` or `torch`"):
        K.applications.imagenet_utils.preprocess_input(x, mode="bgr")


def test_argument_checks_and_missing_models_say_so():
    with pytest.raises(ValueError, match="`classes` should be 1000"):
        K.applications.ResNet50(weights="imagenet", classes=10)
    with pytest.raises(ValueError, match="you should specify a static `input_shape`"):
        K.applications.VGG16(weights=None, input_shape=(None, None, 3))
    with pytest.raises(ValueError, match="Input size must be at least 32x32"):
        K.applications.MobileNetV2(weights=None, include_top=False, input_shape=(16, 16, 3))
    with pytest.raises(ValueError, match="should be either `None`"):
        K.applications.VGG19(weights="no/such/file.h5")
    with pytest.raises(ValueError, match="decode_predictions` expects a batch of predictions"):
        K.applications.mobilenet_v2.decode_predictions(np.zeros((2, 10)))


def test_keras2_weight_files_like_the_imagenet_downloads_load(tmp_path):
    # Keras's ImageNet files are Keras 2 weight files: root attribute layer_names (every layer), one group per
    # layer whose weight_names attribute lists 'layer/kernel:0'-style datasets, loaded layer by layer in order
    h5py = pytest.importorskip("h5py")
    K.backend.clear_session()
    model = K.applications.MobileNetV2(input_shape=(32, 32, 3), alpha=0.35, include_top=False, weights=None)
    FIXTURE.fill(model)
    path = str(tmp_path / "mobilenet_v2_weights_tf_dim_ordering_tf_kernels_0.35_96_no_top.h5")
    with h5py.File(path, "w") as f:
        f.attrs["layer_names"] = np.array([layer.name.encode() for layer in model.layers])
        f.attrs["backend"], f.attrs["keras_version"] = b"tensorflow", b"2.2.4"
        for layer in model.layers:
            g = f.create_group(layer.name)
            names = [f"{layer.name}/{w.name}:0".encode() for w in layer.weights]
            g.attrs["weight_names"] = np.array(names)
            for n, w in zip(names, layer.weights):
                g.create_dataset(n.decode(), data=w.numpy())
    again = K.applications.MobileNetV2(input_shape=(32, 32, 3), alpha=0.35, include_top=False, weights=path)
    x = DATA["mobilenet_v2_x"]
    np.testing.assert_array_equal(again.predict(x, verbose=0), model.predict(x, verbose=0))


def test_transfer_learning_assembly_as_tfs_tutorial():
    # TF's transfer_learning tutorial's model (checked against TF 2.21 + Keras 3.15 at 96x96): a frozen base,
    # an augmentation Sequential without an Input (its summary row keeps the batch None), preprocess_input on
    # a Keras tensor (true_divide and subtract nodes), then fine-tuning from layer 100
    K.backend.clear_session()
    augment = K.Sequential([K.layers.RandomFlip("horizontal"), K.layers.RandomRotation(0.2)])
    base = K.applications.MobileNetV2(input_shape=(32, 32, 3), alpha=0.35, include_top=False, weights=None)
    base.trainable = False
    inputs = K.Input(shape=(32, 32, 3))
    x = base(K.applications.mobilenet_v2.preprocess_input(augment(inputs)), training=False)
    x = K.layers.Dropout(0.2)(K.layers.GlobalAveragePooling2D()(x))
    model = K.Model(inputs, K.layers.Dense(1, activation="sigmoid")(x))
    assert augment.output_shape == (None, 32, 32, 3)
    assert [layer.name for layer in model._summary_layers()][1:4] == ["sequential", "true_divide", "subtract"]
    assert len(model.trainable_variables) == 2
    base.trainable = True
    for layer in base.layers[:100]:
        layer.trainable = False
    assert len(base.layers) == 154 and len(model.trainable_variables) == 56


@pytest.mark.parametrize("cls, shape, name, layers, params, out", [
    # pinned from Keras 3.15.1, include_top=False (the fixture's configurations cover the smallest of each family)
    ("ResNet101V2", (32, 32, 3), "resnet101v2", 377, 42626560, (None, 1, 1, 2048)),
    ("DenseNet169", (32, 32, 3), "densenet169", 595, 12642880, (None, 1, 1, 1664)),
    ("InceptionV3", (75, 75, 3), "inception_v3", 311, 21802784, (None, 1, 1, 2048)),
])
def test_deeper_variants_match_keras(cls, shape, name, layers, params, out):
    K.backend.clear_session()
    model = getattr(K.applications, cls)(weights=None, include_top=False, input_shape=shape)
    assert (model.name, len(model.layers), model.count_params(), model.output.shape) == (name, layers, params, out)


def test_argument_errors_word_for_word_as_keras():
    A = K.applications
    with pytest.raises(ValueError, match=r"^The `weights` argument .* to be loaded; Received: weights=WW$"):
        A.InceptionV3(weights="WW")
    with pytest.raises(ValueError, match=r"^If using `weights=\"imagenet\"` with `include_top=True`, `classes` "
                                         r"should be 1000. Received classes=10$"):
        A.InceptionV3(classes=10)
    with pytest.raises(ValueError, match=r"^The `weights` argument .*'imagenet' .* to be loaded.$"):
        A.Xception(weights="WW")
    with pytest.raises(ValueError, match=r"loaded.  Received: weights=WW$"):
        A.ResNet50V2(weights="WW")
    with pytest.raises(ValueError, match=r"^If using `weights` as `\"imagenet\"` with `include_top` as true, "
                                         r"`classes` should be 1000$"):
        A.DenseNet121(classes=10)
    with pytest.raises(ValueError, match=r"^Input size must be at least 75x75; Received: input_shape=\(74, 74, 3\)$"):
        A.InceptionV3(weights=None, include_top=False, input_shape=(74, 74, 3))
    x = np.array([[[[0.0, 127.5, 255.0]]]], "float32")
    for mod in (A.inception_v3, A.xception, A.resnet_v2):
        np.testing.assert_allclose(mod.preprocess_input(x.copy()), [[[[-1.0, 0.0, 1.0]]]])
    np.testing.assert_allclose(A.densenet.preprocess_input(x.copy()),
                               A.imagenet_utils.preprocess_input(x.copy(), mode="torch"))
