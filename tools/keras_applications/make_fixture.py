"""Writes tests/fixtures/keras/applications_keras315.npz (and, with ``more``, applications_more_keras315.npz:
the later families, without the input batches, which ``batch`` remakes) with real Keras 3:

    cd tools/keras_applications; F=../../tests/fixtures/keras
    /opt/tfvenv/bin/python make_fixture.py $F/applications_keras315.npz
    /opt/tfvenv/bin/python make_fixture.py $F/applications_more_keras315.npz more

Small configurations of each application model, every weight set to a deterministic pattern of its
shape (moving variances positive), with the layer names, weight shapes and the predictions on a fixed
batch, so a test can rebuild each model in tapeflow and compare (architecture, names, numbers)."""

import json
import sys

import numpy as np

CONFIGS = {
    "mobilenet_v2": ("MobileNetV2", dict(input_shape=(32, 32, 3), alpha=0.35, weights=None, classes=10)),
    "mobilenet_v2_notop": ("MobileNetV2", dict(input_shape=(48, 40, 3), include_top=False, weights=None,
                                               pooling="avg", alpha=0.5)),
    "vgg16": ("VGG16", dict(input_shape=(32, 32, 3), include_top=False, weights=None, pooling="avg")),
    "vgg19": ("VGG19", dict(input_shape=(32, 32, 3), include_top=False, weights=None, pooling="max")),
    "resnet50": ("ResNet50", dict(input_shape=(32, 32, 3), weights=None, classes=7, classifier_activation=None)),
    "inception_v3": ("InceptionV3", dict(input_shape=(75, 75, 3), weights=None, classes=5)),
    "xception": ("Xception", dict(input_shape=(71, 71, 3), include_top=False, weights=None, pooling="avg")),
    "resnet50v2": ("ResNet50V2", dict(input_shape=(32, 32, 3), weights=None, classes=6, classifier_activation=None)),
    "efficientnetb0": ("EfficientNetB0", dict(input_shape=(32, 32, 3), weights=None, classes=4)),
    "efficientnetb3_notop": ("EfficientNetB3", dict(input_shape=(32, 32, 3), include_top=False, weights=None,
                                                    pooling="avg")),
    "densenet121": ("DenseNet121", dict(input_shape=(32, 32, 3), include_top=False, weights=None, pooling="max")),
}
MORE_CONFIGS = {
    "mobilenet_v3_small": ("MobileNetV3Small", dict(input_shape=(32, 32, 3), alpha=0.75, weights=None, classes=10)),
    "mobilenet_v3_large_min": ("MobileNetV3Large", dict(input_shape=(40, 32, 3), minimalistic=True,
                                                        include_top=False, weights=None, pooling="avg")),
    "mobilenet_v3_large": ("MobileNetV3Large", dict(input_shape=(32, 32, 3), alpha=1.25, weights=None, classes=5,
                                                    include_preprocessing=False, dropout_rate=0.0,
                                                    classifier_activation=None)),
    "efficientnetv2b0": ("EfficientNetV2B0", dict(input_shape=(32, 32, 3), weights=None, classes=4)),
    "efficientnetv2b3_notop": ("EfficientNetV2B3", dict(input_shape=(32, 32, 3), include_top=False, weights=None,
                                                        pooling="max", include_preprocessing=False)),
    "efficientnetv2s_notop": ("EfficientNetV2S", dict(input_shape=(32, 32, 3), include_top=False, weights=None,
                                                      pooling="avg")),
    "convnext_tiny": ("ConvNeXtTiny", dict(input_shape=(32, 32, 3), weights=None, classes=3)),
    "inception_resnet_v2_notop": ("InceptionResNetV2", dict(input_shape=(75, 75, 3), include_top=False,
                                                            weights=None, pooling="avg")),
    "nasnet_mobile_notop": ("NASNetMobile", dict(input_shape=(32, 32, 3), include_top=False, weights=None,
                                                 pooling="max")),
}


def pattern(shape, i, name):
    size = int(np.prod(shape))
    v = np.sin(np.arange(size, dtype=np.float64) * 0.37 + i) / np.sqrt(max(1, shape[-2] if len(shape) > 1 else 1))
    if "moving_variance" in name or "variance" in name:
        v = np.abs(v) + 0.5
    return v.reshape(shape).astype("float32")


def fill(model):
    i = 0
    for layer in model.layers:
        values = []
        for w in layer.weights:
            values.append(pattern(tuple(w.shape), i, w.name))
            i += 1
        if values:
            layer.set_weights(values)


def batch(shape):
    n = int(np.prod(shape))
    return (np.cos(np.arange(2 * n, dtype=np.float32) * 0.11).reshape((2,) + tuple(shape)) * 127.5 + 127.5)


def main():
    import keras

    more = sys.argv[2:] == ["more"]
    out = {}
    meta = {}
    for key, (cls, kwargs) in (MORE_CONFIGS if more else CONFIGS).items():
        keras.backend.clear_session()
        model = getattr(keras.applications, cls)(**kwargs)
        fill(model)
        x = batch(kwargs["input_shape"])
        if not more:
            out[f"{key}_x"] = x
        out[f"{key}_y"] = model.predict(x, verbose=0)
        meta[key] = {"cls": cls, "kwargs": {k: v for k, v in kwargs.items()}, "name": model.name,
                     "layers": [[layer.name, [list(w.shape) for w in layer.weights]] for layer in model.layers],
                     "outputs": [list(layer.output.shape) for layer in model.layers],
                     "params": model.count_params()}
    out["meta"] = np.array(json.dumps(meta))
    np.savez_compressed(sys.argv[1], **out)


if __name__ == "__main__":
    main()
