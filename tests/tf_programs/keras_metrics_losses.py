"""Keras losses and metrics as a TF user calls them: standalone (update_state/result/reset_state,
sample weights, reductions), as strings and objects in compile, and their names in fit's history."""
import numpy as np

from _common import exc, hist, r


def run(tf):
    tf.keras.backend.clear_session()  # fresh auto-names (dense, dense_1, ...) as in a new process
    out = {}
    y_true = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], "float32")
    y_prob = np.array([[0.1, 0.7, 0.2], [0.3, 0.3, 0.4], [0.5, 0.1, 0.4], [0.6, 0.3, 0.1]], "float32")
    labels = np.argmax(y_true, 1)
    sw = np.array([1.0, 2.0, 0.5, 0.0], "float32")
    metric_classes = [
        ("CategoricalAccuracy", {}, "cat"), ("SparseCategoricalAccuracy", {}, "sparse"),
        ("CategoricalCrossentropy", {}, "cat"), ("SparseCategoricalCrossentropy", {}, "sparse"),
        ("TopKCategoricalAccuracy", {"k": 2}, "cat"), ("SparseTopKCategoricalAccuracy", {"k": 1}, "sparse"),
        ("BinaryCrossentropy", {}, "cat"), ("BinaryAccuracy", {}, "cat"), ("MeanSquaredError", {}, "cat"),
        ("MeanAbsoluteError", {}, "cat"), ("RootMeanSquaredError", {}, "cat"), ("AUC", {}, "cat"),
        ("Precision", {}, "cat"), ("Recall", {}, "cat"), ("Accuracy", {}, "sparse_int"),
    ]
    res = {}
    for name, kw, kind in metric_classes:
        m = getattr(tf.keras.metrics, name)(**kw)
        yt = y_true if kind == "cat" else labels
        yp = y_prob if kind != "sparse_int" else np.argmax(y_prob, 1)
        m.update_state(yt, yp)
        first = float(m.result())
        m.update_state(yt[:2], yp[:2], sample_weight=sw[:2])
        second = float(m.result())
        m.reset_state()
        res[name] = [m.name, round(first, 6), round(second, 6), float(m.result())]
    out["metrics"] = res
    mean = tf.keras.metrics.Mean()
    mean.update_state([1, 3, 5, 7])
    mean.update_state([2.0], sample_weight=[4.0])
    out["mean"] = [r(mean.result()), len(mean.variables), [v.name for v in mean.variables]]
    s = tf.keras.metrics.Sum()
    s.update_state([1, 2, 3])
    out["sum"] = r(s.result())
    # losses: functions, classes, reductions, sample weights
    losses = {}
    for name, kw, kind in [("CategoricalCrossentropy", {}, "cat"),
                           ("CategoricalCrossentropy", {"label_smoothing": 0.1}, "cat"),
                           ("SparseCategoricalCrossentropy", {}, "sparse"), ("BinaryCrossentropy", {}, "cat"),
                           ("MeanSquaredError", {}, "cat"), ("MeanAbsoluteError", {}, "cat"),
                           ("Huber", {"delta": 0.2}, "cat")]:
        yt = y_true if kind == "cat" else labels
        per = []
        for red in ("sum_over_batch_size", "sum", "none"):
            fn = getattr(tf.keras.losses, name)(reduction=red, **kw)
            per.append(r(fn(yt, y_prob)))
            per.append(r(fn(yt, y_prob, sample_weight=sw)))
        losses[name + str(sorted(kw.items()))] = [fn.name] + per
    out["losses"] = losses
    out["loss_fns"] = [r(tf.keras.losses.categorical_crossentropy(y_true, y_prob)),
                       r(tf.keras.losses.sparse_categorical_crossentropy(labels, y_prob)),
                       r(tf.keras.losses.binary_crossentropy(y_true, y_prob)),
                       r(tf.keras.losses.mse(y_true, y_prob)),
                       r(tf.keras.losses.MSE(y_true, y_prob))]
    out["loss_get_callable"] = callable(tf.keras.losses.get("mse"))
    out["bad_reduction"] = exc(lambda: tf.keras.losses.MeanSquaredError(reduction="average"))
    out["cce_shape_error"] = exc(lambda: tf.keras.losses.categorical_crossentropy(y_true, y_prob[:, :2]))

    # compile with metric strings and objects; names in history
    x = np.linspace(-1, 1, 40, dtype="float32").reshape(10, 4)
    yl = (np.arange(10) % 3).astype("int32")
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="softmax")])
    model.set_weights([np.sin(np.arange(12)).reshape(4, 3).astype("float32"), np.zeros(3, "float32")])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.5), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy", "sparse_categorical_crossentropy",
                           tf.keras.metrics.SparseTopKCategoricalAccuracy(k=2, name="top2")])
    out["compile_fit"] = hist(model.fit(x, yl, epochs=2, batch_size=5, shuffle=False, verbose=0))
    # (Keras 3.15 reports ["loss", "compile_metrics"] here; tapeflow lists each metric)
    out["n_metrics_names"] = len(model.metrics_names) >= 2
    yc = np.eye(3, dtype="float32")[yl]
    model.compile(optimizer=tf.keras.optimizers.SGD(0.5), loss=tf.keras.losses.CategoricalCrossentropy(),
                  metrics=[tf.keras.metrics.CategoricalAccuracy(), "mse", tf.keras.metrics.AUC(name="auc"),
                           tf.keras.metrics.RootMeanSquaredError()], weighted_metrics=["accuracy"])
    out["compile_fit_cat"] = hist(model.fit(x, yc, sample_weight=np.linspace(0.5, 1.5, 10).astype("float32"),
                                            epochs=2, batch_size=5, shuffle=False, verbose=0))
    out["evaluate_dict"] = {k: r(v) for k, v in model.evaluate(x, yc, verbose=0, return_dict=True).items()}
    return out
