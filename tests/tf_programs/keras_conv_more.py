"""Convolutions of the DCGAN / CVAE / autoencoder tutorials: Conv1D/2D/3DTranspose (padding, strides,
output_padding, dilation), DepthwiseConv1D/2D, SeparableConv1D/2D, Conv2D(groups=2), Conv3D, on pinned
weights; their weight shapes, output shapes in a functional model, gradients and a DCGAN-style generator."""

import numpy as np

from _common import r


def set_det(layer_or_model, scale=0.3):
    """Pinned weights: sines, positive for BatchNormalization's variances."""
    values = []
    for i, w in enumerate(layer_or_model.weights):
        v = (np.sin(np.arange(int(np.prod(w.shape))) * 0.61 + i) * scale).reshape(tuple(w.shape))
        values.append((np.abs(v) + 0.5 if "variance" in w.name else v).astype("float32"))
    layer_or_model.set_weights(values)


def x_of(shape):
    return np.sin(np.arange(int(np.prod(shape))).reshape(shape) * 0.37).astype("float32")


CASES = [
    ("Conv1DTranspose(3, 3, strides=2)", (2, 5, 2)),
    ("Conv1DTranspose(2, 4, strides=2, padding='same')", (2, 5, 2)),
    ("Conv1DTranspose(2, 3, strides=3, padding='valid', output_padding=1)", (1, 4, 2)),
    ("Conv2DTranspose(3, 3)", (2, 4, 4, 2)),
    ("Conv2DTranspose(3, 3, strides=2, padding='same')", (2, 4, 4, 2)),
    ("Conv2DTranspose(3, (3, 3), strides=(2, 1), padding='same', output_padding=(1, 0))", (1, 3, 4, 2)),
    ("Conv2DTranspose(2, 5, strides=2, padding='same', use_bias=False, activation='tanh')", (1, 4, 4, 3)),
    ("Conv2DTranspose(2, 4, strides=3, padding='valid')", (1, 3, 3, 2)),
    ("Conv3DTranspose(2, 2, strides=2)", (1, 2, 3, 2, 2)),
    ("Conv3DTranspose(2, 3, strides=2, padding='same')", (1, 2, 2, 2, 3)),
    ("DepthwiseConv2D(3)", (2, 5, 5, 3)),
    ("DepthwiseConv2D(3, strides=2, padding='same', depth_multiplier=2)", (1, 5, 5, 2)),
    ("DepthwiseConv2D(2, dilation_rate=2, activation='relu')", (1, 5, 5, 2)),
    ("DepthwiseConv1D(3, depth_multiplier=2)", (2, 6, 3)),
    ("SeparableConv2D(4, 3)", (2, 5, 5, 3)),
    ("SeparableConv2D(4, 3, strides=2, padding='same', depth_multiplier=2)", (1, 6, 6, 2)),
    ("SeparableConv1D(4, 3, padding='same')", (2, 6, 3)),
    ("Conv2D(4, 3, groups=2)", (2, 5, 5, 4)),
    ("Conv2D(6, 2, groups=3, padding='same', strides=2)", (1, 4, 4, 3)),
    ("Conv1D(4, 2, groups=2)", (2, 5, 4)),
    ("Conv3D(3, 2)", (1, 3, 4, 3, 2)),
    ("Conv3D(2, 3, strides=2, padding='same')", (1, 4, 4, 4, 1)),
]


def run(tf):
    tf.keras.backend.clear_session()
    L = tf.keras.layers
    out = {}
    for code, shape in CASES:
        layer = eval("L." + code)
        layer.build((None,) + shape[1:])
        set_det(layer)
        x = x_of(shape)
        y = layer(x)
        xv = tf.Variable(x)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(xv) ** 2)
        gx, *gw = tape.gradient(loss, [xv] + layer.trainable_weights)
        out[code] = {
            "weights": [[w.name, list(w.shape)] for w in layer.weights],
            "shape": list(y.shape),
            "y": r(y[0]),
            "sum": round(float(tf.reduce_sum(y)), 5),
            "gx": r(tf.reduce_sum(gx, axis=0)),
            "gw": [round(float(tf.reduce_sum(g * g)), 4) for g in gw],
        }
    cfg = L.Conv2DTranspose(3, 3, strides=2, padding="same", output_padding=1).get_config()
    out["config"] = {
        k: list(v) if isinstance(v, tuple) else v
        for k, v in cfg.items()
        if k
        in ("filters", "kernel_size", "strides", "padding", "output_padding", "dilation_rate", "activation", "use_bias")
    }
    out["config_keys"] = sorted(cfg)
    # the DCGAN tutorial's generator, shapes only + a pinned forward pass
    gen = tf.keras.Sequential(
        [
            tf.keras.Input((8,)),
            L.Dense(7 * 7 * 4, use_bias=False),
            L.BatchNormalization(),
            L.LeakyReLU(),
            L.Reshape((7, 7, 4)),
            L.Conv2DTranspose(4, (5, 5), strides=(1, 1), padding="same", use_bias=False),
            L.BatchNormalization(),
            L.LeakyReLU(),
            L.Conv2DTranspose(2, (5, 5), strides=(2, 2), padding="same", use_bias=False),
            L.BatchNormalization(),
            L.LeakyReLU(),
            L.Conv2DTranspose(1, (5, 5), strides=(2, 2), padding="same", use_bias=False, activation="tanh"),
        ]
    )
    set_det(gen, 0.2)
    z = x_of((2, 8))
    img = gen(z, training=False)
    out["dcgan"] = {
        "shapes": [list(layer.output.shape) for layer in gen.layers],
        "params": gen.count_params(),
        "img_shape": list(img.shape),
        "img_sum": round(float(tf.reduce_sum(img)), 4),
        "img": r(img[1, 10:14, 10:14, 0], 5),
    }
    # a CVAE-style decoder in the functional API
    inp = tf.keras.Input((4,))
    h = L.Dense(7 * 7 * 8, activation="relu")(inp)
    h = L.Reshape((7, 7, 8))(h)
    h = L.Conv2DTranspose(4, 3, strides=2, padding="same", activation="relu")(h)
    h = L.Conv2DTranspose(2, 3, strides=2, padding="same", activation="relu")(h)
    h = L.Conv2DTranspose(1, 3, strides=1, padding="same")(h)
    dec = tf.keras.Model(inp, h)
    out["cvae_decoder"] = [list(h.shape), dec.count_params()]
    return out
