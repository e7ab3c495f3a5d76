"""Writes the fixtures of tests/test_keras_augment_mix.py with real Keras 3.15 (TF backend):

    /opt/tfvenv/bin/python tools/keras_augment_mix/make_fixture.py

For every case (MixUp, CutMix, RandAugment, AugMix, RandomElasticTransform): the layer's serialized config
(``get_config`` as Keras saves it), and in mix/NAME.npz its input
images (and labels), then the outputs of two training calls in a row (the seed stream moves on) and of one
``training=False`` call, all after ``keras.utils.set_random_seed(1)`` before the layer is made."""

import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
import numpy as np  # noqa: E402

L = keras.layers
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures", "keras", "mix")


def images(shape, k=0, scale=255):
    return (np.random.RandomState(k).rand(*shape) * scale).astype("float32")


def labels(batch, classes, k=0):
    return np.eye(classes, dtype="float32")[np.random.RandomState(k).randint(0, classes, batch)]


# name: (layer factory, images, labels or None)
CASES = {
    "mixup": (lambda: L.MixUp(alpha=0.4, seed=3), images((4, 5, 6, 3)), labels(4, 3)),
    "mixup_default": (lambda: L.MixUp(), images((3, 4, 4, 2), 1), labels(3, 2, 1)),
    "mixup_single": (lambda: L.MixUp(alpha=0.3, seed=5), images((5, 6, 3), 2), None),
    "mixup_cf": (lambda: L.MixUp(seed=6, data_format="channels_first"), images((3, 2, 4, 5), 3), labels(3, 4, 3)),
    "cutmix": (lambda: L.CutMix(seed=4), images((4, 6, 7, 3), 4), labels(4, 3, 4)),
    "cutmix_factor": (lambda: L.CutMix(factor=(0.2, 0.6), seed=7), images((5, 8, 8, 1), 5), labels(5, 2, 5)),
    "cutmix_cf": (lambda: L.CutMix(0.5, seed=8, data_format="channels_first"), images((3, 2, 6, 5), 6),
                  labels(3, 3, 6)),
    "cutmix_default": (lambda: L.CutMix(), images((3, 5, 5, 3), 7), None),
    "randaugment": (lambda: L.RandAugment(seed=3), images((3, 8, 8, 3), 10), None),
    "randaugment_custom": (lambda: L.RandAugment(value_range=(0, 1), num_ops=3, factor=0.3, interpolation="nearest",
                                                 seed=4), images((2, 7, 9, 3), 11, 1), None),
    "randaugment_default": (lambda: L.RandAugment(), images((2, 6, 6, 3), 12), None),
    "augmix": (lambda: L.AugMix(seed=5), images((2, 8, 8, 3), 13), None),
    "augmix_custom": (lambda: L.AugMix(value_range=(0, 1), num_chains=2, chain_depth=2, factor=0.5, alpha=0.5,
                                       all_ops=False, seed=6), images((3, 6, 7, 3), 14, 1), None),
    "augmix_default": (lambda: L.AugMix(), images((2, 6, 6, 3), 15), None),
    "elastic": (lambda: L.RandomElasticTransform(seed=9), images((2, 12, 10, 3), 16), None),
    "elastic_custom": (lambda: L.RandomElasticTransform(factor=(0.5, 1.0), scale=(0.5, 0.9), interpolation="nearest",
                                                        fill_mode="constant", fill_value=3.0, value_range=(0, 1),
                                                        seed=10), images((3, 9, 11, 2), 17, 1), None),
    "elastic_cf": (lambda: L.RandomElasticTransform(scale=0.7, fill_mode="wrap", seed=11,
                                                    data_format="channels_first"), images((2, 3, 10, 10), 18), None),
    "elastic_single": (lambda: L.RandomElasticTransform(fill_mode="nearest", seed=12), images((10, 10, 1), 19),
                       None),
    "elastic_default": (lambda: L.RandomElasticTransform(), images((2, 8, 8, 3), 20), None),
}


def run(layer, x, y, training):
    data = {"images": x, "labels": y} if y is not None else x
    out = layer(data, training=training)
    if isinstance(out, dict):
        return np.asarray(out["images"]), np.asarray(out["labels"])
    return np.asarray(out), None


def main():
    os.makedirs(OUT, exist_ok=True)
    meta = {}
    for name, (make, x, y) in CASES.items():
        keras.backend.clear_session()
        keras.utils.set_random_seed(1)
        layer = make()
        io = {"x": x} if y is None else {"x": x, "y": y}
        for i, training in enumerate((True, True, False)):
            img, lab = run(layer, x.copy(), None if y is None else y.copy(), training)
            io[f"images_{i}"] = img
            if lab is not None:
                io[f"labels_{i}"] = lab
        np.savez(os.path.join(OUT, f"{name}.npz"), **io)
        meta[name] = json.loads(json.dumps(keras.saving.serialize_keras_object(layer)))
    with open(os.path.join(OUT, "cases_keras315.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
