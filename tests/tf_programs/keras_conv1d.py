"""A 1-D CNN for sequences (time-series / text style), on generated data: Embedding, Conv1D with
valid/same/causal padding, strides and dilation, Max/AveragePooling1D, GlobalMaxPooling1D, fit."""
import numpy as np

from _common import hist, r


def set_det(layer_or_model, scale=0.3):
    layer_or_model.set_weights([(np.sin(np.arange(w.size) * 0.61 + i) * scale).reshape(w.shape).astype("float32")
                                for i, w in enumerate(layer_or_model.get_weights())])


def run(tf):
    tf.keras.backend.clear_session()  # fresh auto-names (dense, dense_1, ...) as in a new process
    L = tf.keras.layers
    out = {}
    x = np.sin(np.arange(2 * 9 * 3).reshape(2, 9, 3) * 0.3).astype("float32")
    for name, kw in [("valid", {}), ("same", {"padding": "same"}), ("causal", {"padding": "causal"}),
                     ("strided", {"strides": 2}), ("dilated", {"dilation_rate": 2, "padding": "causal"})]:
        c = L.Conv1D(4, 3, **kw)
        c.build((None, 9, 3))
        set_det(c)
        y = c(x)
        out["conv_" + name] = [list(y.shape), r(y[0, :3])]
    c = L.Conv1D(2, 5, activation="relu")
    c(x)
    out["kernel_shape"] = [list(w.shape) for w in c.weights]
    out["pools"] = [r(L.MaxPooling1D()(x)[0, :2]), list(L.MaxPooling1D(3, strides=2, padding="same")(x).shape),
                    r(L.AveragePooling1D(2, padding="same")(x)[1, -2:]), r(L.GlobalMaxPooling1D()(x))]

    tokens = (np.arange(6 * 10).reshape(6, 10) * 7 % 13).astype("int32")
    labels = (tokens.sum(1) % 2).astype("float32")
    model = tf.keras.Sequential([
        tf.keras.Input((10,), dtype="int32"),
        L.Embedding(13, 4),
        L.Conv1D(5, 3, padding="same", activation="relu"),
        L.MaxPooling1D(2),
        L.Conv1D(3, 2, padding="causal"),
        L.GlobalAveragePooling1D(),
        L.Dense(1, activation="sigmoid"),
    ])
    set_det(model, 0.4)
    # (SGD: Embedding rows repeat in a batch; see keras_sequential_functional.py on Adam there)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.2, momentum=0.5), loss="binary_crossentropy",
                  metrics=["accuracy"])
    out["output_shapes"] = [list(layer.output.shape) for layer in model.layers]
    out["fit"] = hist(model.fit(tokens, labels, epochs=3, batch_size=3, shuffle=False, verbose=0))
    out["predict"] = r(model.predict(tokens[:2], verbose=0))
    return out
