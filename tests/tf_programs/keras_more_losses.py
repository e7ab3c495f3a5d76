"""The rest of Keras' regression/probabilistic/hinge losses, as functions, as classes with
reductions and sample weights, and in compile/fit (also under tf.function)."""
import numpy as np

from _common import hist, r


def run(tf):
    tf.keras.backend.clear_session()  # fresh auto-names (dense, dense_1, ...) as in a new process
    out = {}
    y_true = np.array([[0.0, 1.0, 0.5], [2.0, 0.0, 1.0], [1.0, 1.0, 0.0]], "float32")
    y_pred = np.array([[0.2, 0.7, 0.4], [1.5, 0.1, 0.9], [0.9, 1.2, 0.3]], "float32")
    y_bin = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]], "float32")
    y_pm = 2 * y_bin - 1
    sw = np.array([1.0, 0.5, 2.0], "float32")
    res = {}
    for cls, fn, yt in [("MeanAbsolutePercentageError", "mape", y_true),
                        ("MeanSquaredLogarithmicError", "msle", y_true),
                        ("KLDivergence", "kld", y_true / 2), ("Poisson", "poisson", y_true),
                        ("LogCosh", "logcosh", y_true), ("Hinge", "hinge", y_bin), ("Hinge", "hinge", y_pm),
                        ("SquaredHinge", "squared_hinge", y_bin), ("CategoricalHinge", "categorical_hinge", y_bin),
                        ("CosineSimilarity", "cosine_similarity", y_true)]:
        obj = getattr(tf.keras.losses, cls)()
        summed = getattr(tf.keras.losses, cls)(reduction="sum")
        res[cls + ("_pm" if yt is y_pm else "")] = [
            obj.name, r(getattr(tf.keras.losses, fn)(yt, y_pred)), r(obj(yt, y_pred)),
            r(obj(yt, y_pred, sample_weight=sw)), r(summed(yt, y_pred))]
    out["losses"] = res
    out["cosine_axis0"] = r(tf.keras.losses.CosineSimilarity(axis=0)(y_true, y_pred))
    out["cosine_zero"] = r(tf.keras.losses.cosine_similarity(np.zeros((1, 3), "float32"), y_pred[:1]))

    x = np.linspace(0.1, 1, 30, dtype="float32").reshape(10, 3)
    yc = np.exp(x @ np.array([[0.3], [0.2], [-0.1]], "float32"))
    for loss in ("poisson", "msle", "log_cosh", "mape", "kl_divergence", "hinge"):
        m = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1, activation="softplus",
                                                                              kernel_initializer="ones")])
        m.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss=loss)
        out["fit_" + loss] = hist(m.fit(x, yc, epochs=2, batch_size=5, shuffle=False, verbose=0))
    out["metrics"] = metrics(tf)
    return out


def metrics(tf):
    y_true = np.array([[0.0, 1.0, 0.5], [2.0, 0.0, 1.0], [1.0, 1.0, 0.0]], "float32")
    y_pred = np.array([[0.2, 0.7, 0.4], [1.5, 0.1, 0.9], [0.9, 1.2, 0.3]], "float32")
    out = {}
    for name in ("MeanAbsolutePercentageError", "MeanSquaredLogarithmicError", "KLDivergence", "Poisson",
                 "LogCoshError", "Hinge", "SquaredHinge", "CategoricalHinge", "CosineSimilarity"):
        m = getattr(tf.keras.metrics, name)()
        m.update_state(y_true / 2, y_pred)
        m.update_state(y_true[:1], y_pred[:1], sample_weight=[3.0])
        out[name] = [m.name, r(m.result())]
    yb = np.array([1, 0, 1, 1, 0], "float32")
    pb = np.array([0.9, 0.6, 0.4, 0.7, 0.2], "float32")
    for name in ("TruePositives", "FalsePositives", "TrueNegatives", "FalseNegatives"):
        m = getattr(tf.keras.metrics, name)()
        m.update_state(yb, pb)
        m.update_state(yb, pb, sample_weight=[1.0, 2.0, 3.0, 0.5, 1.0])
        multi = getattr(tf.keras.metrics, name)(thresholds=[0.3, 0.65])
        multi.update_state(yb, pb)
        out[name] = [m.name, r(m.result()), r(multi.result()), [v.name for v in m.variables]]
    return out
