"""TF2 quickstart for beginners, on generated data: Sequential + compile/fit/evaluate/predict."""
import numpy as np

from _common import exc, hist, r


def data():
    rng = np.random.RandomState(0)
    x = rng.rand(96, 4, 4).astype("float32")
    y = (x.reshape(96, -1).sum(1) > 8).astype("int64") + (x[:, 0, 0] > 0.5)
    return x, y, x[:32], y[:32]


def set_weights(model):
    ws = []
    for i, w in enumerate(model.get_weights()):
        ws.append((np.sin(np.arange(w.size) * 0.37 + i) * 0.3).reshape(w.shape).astype(w.dtype))
    model.set_weights(ws)


def run(tf):
    tf.keras.backend.clear_session()  # fresh auto-names (dense, dense_1, ...) as in a new process
    out = {}
    x, y, xt, yt = data()
    model = tf.keras.models.Sequential([
        tf.keras.Input(shape=(4, 4)),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(16, activation="relu"),
        tf.keras.layers.Dropout(0.0),
        tf.keras.layers.Dense(3),
    ])
    set_weights(model)
    out["n_params"] = model.count_params()
    out["weight_shapes"] = [list(w.shape) for w in model.get_weights()]
    out["weight_names"] = [w.name for w in model.weights]
    out["layer_names"] = [type(layer).__name__ for layer in model.layers]
    out["output_shape"] = list(model.output_shape)
    out["input_shape"] = list(model.input_shape)
    out["output_error"] = exc(lambda: model.output)
    pred0 = model(x[:1]).numpy()
    out["logits0"] = r(pred0)
    out["softmax0"] = r(tf.nn.softmax(pred0))
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    out["initial_loss"] = r(loss_fn(y[:1], pred0))
    model.compile(optimizer="adam", loss=loss_fn, metrics=["accuracy"])
    h = model.fit(x, y, epochs=3, batch_size=16, shuffle=False, verbose=0)
    out["history"] = hist(h)
    ev = model.evaluate(xt, yt, verbose=0)
    out["evaluate"] = r(ev)
    out["evaluate_dict"] = {k: r(v) for k, v in model.evaluate(xt, yt, verbose=0, return_dict=True).items()}
    p = model.predict(xt[:5], verbose=0)
    out["predict"] = r(p)
    out["predict_type"] = type(p).__name__
    out["predict_dtype"] = str(p.dtype)
    prob = tf.keras.Sequential([model, tf.keras.layers.Softmax()])
    out["prob"] = r(prob(xt[:2]))
    out["argmax"] = r(tf.argmax(prob(xt[:5]), axis=1))
    return out
