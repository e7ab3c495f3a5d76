"""
# A custom layer, a custom loss, a custom metric, model.fit, serialization
"""
import numpy as np
import tensorflow as tf
import keras


@keras.saving.register_keras_serializable(package="demo")
class Affine(keras.layers.Layer):
    def __init__(self, units, l2=0.0, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.l2 = l2

    def build(self, input_shape):
        self.w = self.add_weight(name="w", shape=(input_shape[-1], self.units),
                                 initializer=keras.initializers.Constant(0.1), trainable=True)
        self.b = self.add_weight(name="b", shape=(self.units,), initializer="zeros")
        self.calls = self.add_weight(name="calls", shape=(), initializer="zeros", trainable=False)

    def call(self, inputs, training=None):
        if self.l2:
            self.add_loss(self.l2 * tf.reduce_sum(tf.square(self.w)))
        if training:
            self.calls.assign_add(1.0)
        return tf.matmul(inputs, self.w) + self.b

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units, "l2": self.l2})
        return config


layer = Affine(3, l2=0.01, name="affine")
out = layer(tf.ones((2, 4)))
print(out)
print([w.name for w in layer.weights], [w.shape for w in layer.trainable_weights], layer.non_trainable_weights[0].name)
print(layer.losses)
print(layer.get_config())
"""
A custom loss (function and class) and a custom metric.
"""
@keras.saving.register_keras_serializable(package="demo")
def huberish(y_true, y_pred):
    err = y_true - y_pred
    return tf.reduce_mean(tf.where(tf.abs(err) < 1.0, 0.5 * tf.square(err), tf.abs(err) - 0.5), axis=-1)


@keras.saving.register_keras_serializable(package="demo")
class ScaledMSE(keras.losses.Loss):
    def __init__(self, scale=2.0, name="scaled_mse", **kwargs):
        super().__init__(name=name, **kwargs)
        self.scale = scale

    def call(self, y_true, y_pred):
        return self.scale * tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)

    def get_config(self):
        return {**super().get_config(), "scale": self.scale}


@keras.saving.register_keras_serializable(package="demo")
class WithinTolerance(keras.metrics.Metric):
    def __init__(self, tol=0.5, name="within_tol", **kwargs):
        super().__init__(name=name, **kwargs)
        self.tol = tol
        self.hits = self.add_weight(name="hits", initializer="zeros")
        self.count = self.add_weight(name="count", initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        ok = tf.cast(tf.abs(y_true - y_pred) < self.tol, self.dtype)
        if sample_weight is not None:
            ok = ok * tf.cast(tf.reshape(sample_weight, (-1, 1)), self.dtype)
        self.hits.assign_add(tf.reduce_sum(ok))
        self.count.assign_add(tf.cast(tf.size(ok), self.dtype))

    def result(self):
        return tf.math.divide_no_nan(self.hits, self.count)

    def reset_state(self):
        self.hits.assign(0.0)
        self.count.assign(0.0)

    def get_config(self):
        return {**super().get_config(), "tol": self.tol}


yt = tf.constant([[0.0, 1.0], [2.0, -3.0]])
yp = tf.constant([[0.5, 1.0], [0.0, 0.0]])
print(huberish(yt, yp))
print(ScaledMSE()(yt, yp), ScaledMSE(reduction="sum")(yt, yp), ScaledMSE(scale=1.0)(yt, yp, sample_weight=[1.0, 0.0]))
m = WithinTolerance()
m.update_state(yt, yp)
print(m.result(), [v.name for v in m.variables])
m.update_state(yt, yp, sample_weight=[0.0, 1.0])
print(float(m.result()))
m.reset_state()
print(m.result().numpy())
"""
Put together in a subclassed model and fit.
"""
@keras.saving.register_keras_serializable(package="demo")
class Net(keras.Model):
    def __init__(self, hidden=8, **kwargs):
        super().__init__(**kwargs)
        self.hidden = hidden
        self.a1 = Affine(hidden, l2=0.001)
        self.a2 = Affine(2)

    def call(self, x, training=False):
        return self.a2(tf.nn.relu(self.a1(x, training=training)))

    def get_config(self):
        return {"hidden": self.hidden}


rng = np.random.RandomState(3)
x = rng.uniform(-1, 1, size=(256, 4)).astype("float32")
y = np.stack([x.sum(1), x[:, 0] * x[:, 1]], axis=1).astype("float32")
net = Net()
net.compile(optimizer=keras.optimizers.Adam(0.01), loss=ScaledMSE(), metrics=[WithinTolerance(0.2), "mae"])
hist = net.fit(x, y, batch_size=32, epochs=3, shuffle=False, verbose=0, validation_data=(x[:64], y[:64]))
print({k: np.round(v, 4).tolist() for k, v in hist.history.items()})
print(float(net.a1.calls.numpy()), len(net.losses))
print([m.name for m in net.metrics])
print(np.round(net.evaluate(x, y, verbose=0, batch_size=64), 4))
net.summary()
"""
Train a model using the function loss, then save and load with custom objects.
"""
net2 = Net(hidden=4)
net2.compile(optimizer="sgd", loss=huberish, metrics=[WithinTolerance()])
net2.fit(x, y, epochs=1, batch_size=64, shuffle=False, verbose=0)
print(np.round(net2.predict(x[:3], verbose=0), 4))
net2.save("net2.keras")
back = keras.models.load_model("net2.keras")
print(type(back).__name__, back.hidden, np.allclose(back.predict(x[:3], verbose=0), net2.predict(x[:3], verbose=0)))
print(back.loss if not callable(back.loss) else back.loss.__name__)
print(keras.saving.get_registered_name(Affine), keras.saving.get_registered_object("demo>ScaledMSE"))
"""
A custom train_step.
"""
class MyModel(keras.Model):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.dense = keras.layers.Dense(1, kernel_initializer="zeros")
        self.tracker = keras.metrics.Mean(name="loss")

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            pred = self(x, training=True)
            loss = tf.reduce_mean(tf.square(y - pred))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.tracker.update_state(loss)
        return {"loss": self.tracker.result(), "w0": self.dense.kernel[0, 0]}

    @property
    def metrics(self):
        return [self.tracker]


mm = MyModel()
mm.compile(optimizer=keras.optimizers.SGD(0.1))
h = mm.fit(x, y[:, :1], epochs=3, batch_size=64, shuffle=False, verbose=0)
print({k: np.round(v, 4).tolist() for k, v in h.history.items()})
