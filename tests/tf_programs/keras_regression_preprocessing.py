"""Basic regression / preprocessing, on generated data: Normalization.adapt (array, Dataset,
axis=None), mean/variance given, invert; Rescaling on uint8 images; LeakyReLU; a DNN regressor
with a normalizer inside, fit with validation_split, evaluate, predict."""
import numpy as np

from _common import exc, hist, r


def run(tf):
    tf.keras.backend.clear_session()  # fresh auto-names (dense, dense_1, ...) as in a new process
    out = {}
    rng = np.random.RandomState(7)
    feats = (rng.rand(64, 3) * np.array([10.0, 200.0, 1.0]) + np.array([0.0, 1000.0, -5.0])).astype("float32")
    target = (feats[:, :1] * 0.5 - (feats[:, 1:2] - 1100) * 0.02 + feats[:, 2:] * 3.0).astype("float32")

    normalizer = tf.keras.layers.Normalization(axis=-1)
    normalizer.adapt(feats)
    out["adapt_mean"] = r(normalizer.mean)
    out["adapt_variance"] = r(normalizer.variance)
    out["normalized_first"] = r(normalizer(feats[:2]))
    out["weights"] = [[w.name for w in normalizer.weights],
                      [str(getattr(w.dtype, "name", w.dtype)) for w in normalizer.weights],
                      len(normalizer.trainable_weights)]
    ds_norm = tf.keras.layers.Normalization()
    ds_norm.adapt(tf.data.Dataset.from_tensor_slices(feats).batch(10))
    out["adapt_dataset_mean"] = r(ds_norm.mean)
    out["adapt_dataset_variance"] = r(ds_norm.variance, 3)
    one = tf.keras.layers.Normalization(input_shape=[1], axis=None)
    one.adapt(feats[:, 0])
    out["axis_none"] = [r(one.mean), r(one.variance), r(one(feats[:3, 0]))]
    given = tf.keras.layers.Normalization(mean=[1.0, 2.0], variance=[4.0, 0.0])
    out["given"] = r(given(np.array([[3.0, 2.5]], "float32")))
    inv = tf.keras.layers.Normalization(mean=2.0, variance=9.0, invert=True)
    out["invert"] = r(inv(np.array([[0.0, 1.0]], "float32")))
    out["mismatch_error"] = exc(lambda: tf.keras.layers.Normalization(mean=1.0))

    imgs = (np.arange(2 * 4 * 4 * 1) * 7 % 256).astype("uint8").reshape(2, 4, 4, 1)
    resc = tf.keras.layers.Rescaling(1.0 / 127.5, offset=-1)
    out["rescaling"] = [r(resc(imgs)[0, 0]), str(resc(imgs).dtype)]
    out["leaky"] = [r(tf.keras.layers.LeakyReLU()(np.array([-2.0, 3.0], "float32"))),
                    r(tf.keras.layers.LeakyReLU(negative_slope=0.1)(np.array([-2.0], "float32")))]

    model = tf.keras.Sequential([
        normalizer,
        tf.keras.layers.Dense(8, activation="relu"),
        tf.keras.layers.Dense(8),
        tf.keras.layers.LeakyReLU(0.2),
        tf.keras.layers.Dense(1),
    ])
    model.build((None, 3))
    ws = model.get_weights()
    out["model_weight_shapes"] = [list(w.shape) for w in ws]
    new = [w if i < 3 else (np.cos(np.arange(w.size) * 0.9 + i) * 0.4).reshape(w.shape).astype(w.dtype)
           for i, w in enumerate(ws)]
    model.set_weights(new)
    model.compile(loss="mean_absolute_error", optimizer=tf.keras.optimizers.Adam(0.05))
    h = model.fit(feats, target, validation_split=0.2, epochs=5, batch_size=16, shuffle=False, verbose=0)
    out["fit"] = hist(h)
    out["evaluate"] = r(model.evaluate(feats[:16], target[:16], verbose=0))
    out["predict"] = r(model.predict(feats[:4], verbose=0))
    out["normalizer_untouched"] = r(normalizer.mean)
    out["n_trainable"] = [len(model.trainable_weights), len(model.non_trainable_weights)]
    return out
