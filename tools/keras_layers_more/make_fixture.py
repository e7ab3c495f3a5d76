"""Writes the fixtures of tests/test_keras_layers_more.py with real Keras 3.15 (TF backend):

    /opt/tfvenv/bin/python tools/keras_layers_more/make_fixture.py

For every case below: a small functional model around the layer, its weights set to fixed values
(``sin`` of their index), saved as tests/fixtures/keras/more/NAME.keras; its input batch and Keras's
predictions (inference, and ``training=True`` where the layer trains differently) in more/NAME_io.npz; and in
more/cases_keras315.json the layer's ``get_config()``, each model weight's path and shape, and each layer's
output shape (what ``summary()`` shows);
``weights`` as built, ``loaded_weights`` after Keras loads the file."""

import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
import numpy as np  # noqa: E402

L = keras.layers
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures", "keras", "more")


def fixed(shape, k=0.0):
    n = int(np.prod(shape)) if shape else 1
    return (np.sin(np.arange(n) * 0.37 + k) * 0.5).reshape(shape).astype("float32")


def sn_dense():
    inp = keras.Input((4,))
    return keras.Model(inp, L.SpectralNormalization(L.Dense(3, name="d"), power_iterations=2, name="sn")(inp)), \
        fixed((2, 4), 1), "sn"


def sn_conv():
    inp = keras.Input((5, 5, 2))
    return keras.Model(inp, L.SpectralNormalization(L.Conv2D(3, 2, name="c"), name="snc")(inp)), \
        fixed((2, 5, 5, 2), 2), "snc"


def sn_embedding():
    inp = keras.Input((3,), dtype="int32")
    return keras.Model(inp, L.SpectralNormalization(L.Embedding(6, 4, name="e"), name="sne")(inp)), \
        np.array([[1, 2, 5], [0, 3, 4]], "int32"), "sne"


def gqa_self():
    inp = keras.Input((5, 6))
    out = L.GroupQueryAttention(3, 4, 2, name="gqa")(inp, inp)
    return keras.Model(inp, L.Dense(2, name="head")(out)), fixed((2, 5, 6), 3), "gqa"


def gqa_gate_window_causal():
    q, v = keras.Input((5, 6)), keras.Input((5, 6))
    out = L.GroupQueryAttention(2, 6, 3, use_gate=True, sliding_window=2, name="gqa")(q, v, use_causal_mask=True)
    return keras.Model([q, v], out), [fixed((2, 5, 6), 4), fixed((2, 5, 6), 5)], "gqa"


def gqa_masked():
    inp = keras.Input((5,), dtype="int32")
    x = L.Embedding(7, 6, mask_zero=True, name="emb")(inp)
    out = L.GroupQueryAttention(3, 2, 1, name="gqa")(x, x)
    return keras.Model(inp, L.GlobalAveragePooling1D(name="pool")(out)), \
        np.array([[1, 2, 3, 0, 0], [4, 5, 6, 1, 0]], "int32"), "gqa"


def convlstm2d_stack():
    inp = keras.Input((3, 6, 6, 2))
    x = L.ConvLSTM2D(3, 3, padding="same", return_sequences=True, name="cl1")(inp)
    x = L.BatchNormalization(name="bn")(x)
    x = L.ConvLSTM2D(2, (2, 3), strides=(2, 1), go_backwards=True, name="cl2")(x)
    return keras.Model(inp, L.Dense(1, name="head")(L.GlobalAveragePooling2D(name="pool")(x))), \
        fixed((2, 3, 6, 6, 2), 6), "cl2"


def convlstm2d_state():
    inp = keras.Input((4, 5, 5, 1))
    out, h, c = L.ConvLSTM2D(2, 3, dilation_rate=2, padding="same", return_state=True, use_bias=False,
                             name="cl")(inp)
    return keras.Model(inp, L.Concatenate(name="cat")([out, h, c])), fixed((2, 4, 5, 5, 1), 7), "cl"


def convlstm1d():
    inp = keras.Input((4, 7, 3))
    x = L.ConvLSTM1D(2, 3, return_sequences=True, recurrent_activation="hard_sigmoid", name="cl")(inp)
    return keras.Model(inp, x), fixed((2, 4, 7, 3), 8), "cl"


def convlstm3d():
    inp = keras.Input((2, 4, 4, 4, 1))
    return keras.Model(inp, L.ConvLSTM3D(2, 2, padding="same", name="cl")(inp)), fixed((1, 2, 4, 4, 4, 1), 9), "cl"


AUGMENT = ("grayscale", "hue", "saturation", "autocontrast", "shear", "erasing", "blur", "solarization",
           "posterization", "invert", "degeneration", "sharpness", "jitter", "pipeline")


def augment():
    # RandomGrayscale's config has no seed in Keras 3.15 (a loaded one draws unseeded): factor 0 keeps it fixed
    inp = keras.Input((5, 6, 3))
    x = inp
    for layer in (L.RandomGrayscale(0.0, name="grayscale"), L.RandomHue(0.3, seed=2, name="hue"),
                  L.RandomSaturation((0.2, 0.8), seed=3, name="saturation"), L.AutoContrast(name="autocontrast"),
                  L.RandomShear(x_factor=(0.1, 0.2), y_factor=(0.0, 0.1), fill_mode="nearest", seed=4, name="shear"),
                  L.RandomErasing(0.5, scale=(0.1, 0.3), fill_value=7.0, seed=5, name="erasing"),
                  L.RandomGaussianBlur(0.5, kernel_size=5, sigma=(0.2, 0.9), seed=6, name="blur"),
                  L.Solarization(0.2, (0.3, 0.6), seed=7, name="solarization"),
                  L.RandomPosterization((3, 6), seed=8, name="posterization"),
                  L.RandomInvert(0.3, seed=9, name="invert"),
                  L.RandomColorDegeneration(0.5, seed=10, name="degeneration"),
                  L.RandomSharpness(0.4, seed=11, name="sharpness"),
                  L.RandomColorJitter(brightness_factor=0.1, contrast_factor=0.2, saturation_factor=(0.4, 0.6),
                                      hue_factor=0.1, seed=12, name="jitter"),
                  L.Pipeline([L.RandomFlip(seed=13), L.Rescaling(1 / 255.0)], name="pipeline")):
        x = layer(x)
    out = L.Conv2D(2, 3, name="conv")(x)
    return keras.Model(inp, out), (np.random.RandomState(0).rand(2, 5, 6, 3) * 255).astype("float32"), "conv"


CASES = {"sn_dense": (sn_dense, True), "sn_conv": (sn_conv, True), "sn_embedding": (sn_embedding, True),
         "gqa_self": (gqa_self, False), "gqa_gate_window_causal": (gqa_gate_window_causal, False),
         "gqa_masked": (gqa_masked, False), "convlstm2d_stack": (convlstm2d_stack, False),
         "convlstm2d_state": (convlstm2d_state, False), "convlstm1d": (convlstm1d, False),
         "convlstm3d": (convlstm3d, False), "augment": (augment, True)}


def main():
    os.makedirs(OUT, exist_ok=True)
    meta = {}
    for name, (build, train) in CASES.items():
        keras.backend.clear_session()
        keras.utils.set_random_seed(1)
        model, x, layer_name = build()
        model.set_weights([fixed(tuple(w.shape), i) for i, w in enumerate(model.weights)])
        path = os.path.join(OUT, f"{name}.keras")
        model.save(path)
        fresh = [[w.path, list(w.shape), bool(w.trainable)] for w in model.weights]
        keras.backend.clear_session()
        model = keras.models.load_model(path)  # the predictions of the model as loaded
        io = {"y": np.asarray(model.predict(x, verbose=0))}
        xs = x if isinstance(x, list) else [x]
        for i, xi in enumerate(xs):
            io[f"x{i}"] = xi
        if train:
            io["y_train"] = np.asarray(model(x, training=True))
            for i, w in enumerate(model.weights):
                io[f"w_after_{i}"] = np.asarray(w)
        np.savez(os.path.join(OUT, f"{name}_io.npz"), **io)
        layer = model.get_layer(layer_name)
        keras.backend.clear_session()
        loaded = keras.models.load_model(path)
        meta[name] = {
            "layer": layer_name,
            "config": json.loads(json.dumps(keras.saving.serialize_keras_object(layer))),
            "more_configs": {n: json.loads(json.dumps(keras.saving.serialize_keras_object(model.get_layer(n))))
                             for n in (AUGMENT if name == "augment" else ())},
            "config_keys": list(layer.get_config()),
            "weights": fresh,
            "loaded_weights": [[w.path, list(w.shape), bool(w.trainable)] for w in loaded.weights],
            "output_shapes": {lay.name: json.loads(json.dumps(keras.tree.map_structure(lambda t: t.shape, lay.output)))
                              for lay in model.layers
                              if not isinstance(lay, keras.layers.InputLayer)},
        }
    with open(os.path.join(OUT, "cases_keras315.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
