"""Reshaping layers in a small functional image model: ZeroPadding2D, Cropping2D, UpSampling2D,
Permute, RepeatVector, Identity, ActivityRegularization; shapes, values, losses and a fit."""
import numpy as np

from _common import hist, r


def run(tf):
    tf.keras.backend.clear_session()  # fresh auto-names (dense, dense_1, ...) as in a new process
    L = tf.keras.layers
    out = {}
    img = np.arange(2 * 3 * 4 * 2, dtype="float32").reshape(2, 3, 4, 2) / 10
    out["zero_pad"] = [list(L.ZeroPadding2D()(img).shape), list(L.ZeroPadding2D(((1, 0), (2, 1)))(img).shape),
                       r(L.ZeroPadding2D((1, 2))(img)[0, :, :, 0])]
    out["crop"] = [list(L.Cropping2D(1)(img).shape), r(L.Cropping2D(((1, 0), (1, 2)))(img)[1, :, :, 1])]
    out["upsample"] = [list(L.UpSampling2D()(img).shape), r(L.UpSampling2D((2, 1))(img)[0, :, :, 0])]
    out["permute"] = [list(L.Permute((2, 1))(np.ones((2, 3, 5), "float32")).shape),
                      r(L.Permute((3, 1, 2))(img)[0, 1])]
    out["repeat"] = r(L.RepeatVector(3)(np.array([[1.0, 2.0]], "float32")))
    out["identity"] = r(L.Identity()(img[:1, :1, :1]))
    ar = L.ActivityRegularization(l1=0.1, l2=0.01)
    ar(img)
    out["activity_reg"] = [r(v) for v in ar.losses]

    inp = tf.keras.Input((3, 4, 2))
    x = L.ZeroPadding2D(1)(inp)
    x = L.Conv2D(3, 3, kernel_initializer=tf.keras.initializers.Constant(0.05))(x)
    x = L.UpSampling2D()(x)
    x = L.Cropping2D(((1, 1), (2, 2)))(x)
    x = L.ActivityRegularization(l2=0.001)(x)
    x = L.Flatten()(x)
    x = L.RepeatVector(2)(x)
    x = L.Permute((2, 1))(x)
    x = L.Flatten()(x)
    o = L.Dense(1, kernel_initializer=tf.keras.initializers.Constant(0.01))(x)
    m = tf.keras.Model(inp, o)
    out["shapes"] = [list(layer.output.shape) for layer in m.layers[1:]]
    m.compile(optimizer="sgd", loss="mse")
    out["fit"] = hist(m.fit(img, np.array([[1.0], [2.0]], "float32"), epochs=3, verbose=0))
    return out
