"""Smaller layers of the tutorials: ZeroPadding1D/3D, Cropping1D/3D, UpSampling1D/3D, ELU, PReLU (shared_axes),
Masking, the noise layers (GaussianNoise, GaussianDropout, SpatialDropout1D/2D: identity at inference; in
training, what stays fixed), their output shapes in a model, gradients, and configs."""

import numpy as np

from _common import r


def x_of(shape, k=0.37):
    return np.sin(np.arange(int(np.prod(shape))).reshape(shape) * k).astype("float32")


def run(tf):
    tf.keras.backend.clear_session()
    L = tf.keras.layers
    out = {}
    x3, x5 = x_of((2, 6, 3)), x_of((1, 3, 4, 3, 2))
    cases = [
        ("ZeroPadding1D()", x3),
        ("ZeroPadding1D((2, 1))", x3),
        ("ZeroPadding1D(3)", x3),
        ("ZeroPadding3D()", x5),
        ("ZeroPadding3D(((1, 0), (0, 2), (1, 1)))", x5),
        ("Cropping1D()", x3),
        ("Cropping1D((2, 0))", x3),
        ("Cropping1D(1)", x3),
        ("Cropping3D(((1, 0), (1, 1), (0, 1)))", x5),
        ("Cropping3D(1)", x_of((1, 4, 4, 4, 1))),
        ("UpSampling1D()", x3),
        ("UpSampling1D(3)", x3),
        ("UpSampling3D()", x5),
        ("UpSampling3D((1, 2, 3))", x5),
        ("ELU()", x3),
        ("ELU(alpha=0.5)", x3),
        ("GaussianNoise(0.5)", x3),
        ("GaussianDropout(0.3)", x3),
        ("SpatialDropout1D(0.4)", x3),
        ("SpatialDropout2D(0.4)", x_of((2, 3, 3, 4))),
    ]
    for code, x in cases:
        layer = eval("L." + code)
        y = layer(x)
        xv = tf.Variable(x)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(xv) ** 2)
        out[code] = {
            "shape": list(y.shape),
            "y": r(tf.reshape(y, [-1])[:40], 5),
            "sum": round(float(tf.reduce_sum(y)), 4),
            "g": round(float(tf.reduce_sum(tape.gradient(loss, xv))), 4),
            "config": {
                k: (np.asarray(v).tolist() if isinstance(v, tuple) else v)
                for k, v in layer.get_config().items()
                if k not in ("name", "dtype", "trainable")
            },
        }
    # PReLU: alpha's shape (shared_axes) and values
    for code, x in [
        ("PReLU()", x3),
        ("PReLU(shared_axes=[1])", x3),
        ("PReLU(shared_axes=[1, 2])", x_of((2, 3, 3, 4))),
        ("PReLU(alpha_initializer=tf.keras.initializers.Constant(0.25))", x3),
    ]:
        layer = eval("L." + code)
        layer.build((None,) + x.shape[1:])
        a = layer.weights[0]
        if "Constant" not in code:
            layer.set_weights(
                [(np.sin(np.arange(int(np.prod(a.shape)))) * 0.5).reshape(tuple(a.shape)).astype("float32")]
            )
        xv = tf.Variable(x)
        with tf.GradientTape() as tape:
            y = layer(xv)
            loss = tf.reduce_sum(y**2)
        ga, gx = tape.gradient(loss, [layer.alpha, xv])
        out[code] = {
            "alpha": [a.name, list(a.shape)],
            "y": r(y[0], 5),
            "ga": r(ga, 4),
            "gx": round(float(tf.reduce_sum(gx)), 4),
        }
    # Masking: zeroes the masked steps and makes the mask an LSTM reads
    xm = x_of((2, 4, 2))
    xm[0, 2:] = 0.0
    xm[1, 1] = 0.0
    mk = L.Masking()
    ym = mk(xm)
    out["masking"] = [r(ym, 5), r(ym._keras_mask)]
    model = tf.keras.Sequential([tf.keras.Input((4, 2)), L.Masking(), L.SimpleRNN(2, return_sequences=True)])
    model.set_weights([np.full(w.shape, 0.3, "float32") for w in model.get_weights()])
    out["masking_rnn"] = r(model(xm), 5)
    # training-mode noise: shapes and what must hold
    t = tf.ones((4, 5, 6))
    sd = L.SpatialDropout1D(0.5)(t, training=True).numpy()
    out["spatial_dropout_whole_channels"] = bool(np.all((sd == 0).all(axis=1) | (sd == 2.0).all(axis=1)))
    sd2 = L.SpatialDropout2D(0.5)(tf.ones((3, 4, 4, 5)), training=True).numpy()
    out["spatial_dropout2d_whole_maps"] = bool(np.all((sd2 == 0).all(axis=(1, 2)) | (sd2 == 2.0).all(axis=(1, 2))))
    gn = L.GaussianNoise(0.1)(tf.ones((40, 50, 60)), training=True)
    out["noise_training"] = [
        list(gn.shape),
        bool(np.any(gn.numpy() != 1.0)),
        bool(abs(float(tf.reduce_mean(gn)) - 1.0) < 0.01),
    ]
    gd = L.GaussianDropout(0.2)(tf.ones((40, 50, 60)), training=True)  # mean 1, std of the mean 0.0014
    out["gaussian_dropout_training"] = [list(gd.shape), bool(abs(float(tf.reduce_mean(gd)) - 1.0) < 0.02)]
    # shapes in a model summary-style walk
    m = tf.keras.Sequential(
        [
            tf.keras.Input((10, 3)),
            L.ZeroPadding1D(2),
            L.Conv1D(4, 3),
            L.Cropping1D((1, 2)),
            L.UpSampling1D(2),
            L.SpatialDropout1D(0.2),
            L.GaussianNoise(0.1),
            L.PReLU(),
            L.ELU(),
        ]
    )
    out["model_shapes"] = [list(layer.output.shape) for layer in m.layers]
    out["model_params"] = m.count_params()
    return out
