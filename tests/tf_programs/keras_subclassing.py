"""Making new layers and models via subclassing, on generated data: add_weight/build, non-trainable
weights, nested layers, add_loss, regularizers, training flag, BatchNormalization, get_config,
a Model with an overridden train_step/test_step, and a model used in a custom loop."""
import numpy as np

from _common import hist, r


def run(tf):
    tf.keras.backend.clear_session()  # fresh auto-names (dense, dense_1, ...) as in a new process
    out = {}

    class Linear(tf.keras.layers.Layer):
        def __init__(self, units=32, **kwargs):
            super().__init__(**kwargs)
            self.units = units

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="ones", trainable=True,
                                     name="w")
            self.b = self.add_weight(shape=(self.units,), initializer="zeros", trainable=True, name="b")

        def call(self, inputs):
            return tf.matmul(inputs, self.w) + self.b

        def get_config(self):
            config = super().get_config()
            config.update({"units": self.units})
            return config

    x = tf.ones((2, 2))
    linear_layer = Linear(4)
    y = linear_layer(x)
    out["linear_out"] = r(y)
    out["linear_weights"] = [len(linear_layer.weights), len(linear_layer.trainable_weights),
                             [w.name for w in linear_layer.weights], linear_layer.built]
    cfg = linear_layer.get_config()
    out["config_keys"] = sorted(cfg)
    out["config_units"] = cfg["units"]
    out["from_config_units"] = Linear.from_config(cfg).units

    class ComputeSum(tf.keras.layers.Layer):
        def __init__(self, input_dim):
            super().__init__()
            self.total = self.add_weight(initializer="zeros", shape=(input_dim,), trainable=False, name="total")

        def call(self, inputs):
            self.total.assign_add(tf.reduce_sum(inputs, axis=0))
            return self.total

    my_sum = ComputeSum(2)
    my_sum(x)
    out["compute_sum"] = r(my_sum(x))
    out["compute_sum_weights"] = [len(my_sum.weights), len(my_sum.non_trainable_weights), len(my_sum.trainable_weights)]

    class MLPBlock(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.linear_1 = Linear(8)
            self.linear_2 = Linear(4)
            self.linear_3 = Linear(1)

        def call(self, inputs):
            x = tf.nn.relu(self.linear_1(inputs))
            x = tf.nn.relu(self.linear_2(x))
            return self.linear_3(x)

    mlp = MLPBlock()
    y = mlp(tf.ones(shape=(3, 5)) * 0.1)
    out["mlp_out"] = r(y)
    out["mlp_weights"] = [len(mlp.weights), len(mlp.trainable_weights)]

    class ActivityRegularizationLayer(tf.keras.layers.Layer):
        def __init__(self, rate=1e-2):
            super().__init__()
            self.rate = rate

        def call(self, inputs):
            self.add_loss(self.rate * tf.reduce_mean(inputs))
            return inputs

    class OuterLayer(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.activity_reg = ActivityRegularizationLayer(1e-2)

        def call(self, inputs):
            return self.activity_reg(inputs)

    layer = OuterLayer()
    out["losses_before"] = len(layer.losses)
    _ = layer(tf.zeros((1, 1)))
    _ = layer(tf.ones((1, 1)) * 3)
    out["losses_after"] = [r(v) for v in layer.losses]

    class OuterLayerWithKernelRegularizer(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(2, kernel_regularizer=tf.keras.regularizers.l2(1e-3),
                                               kernel_initializer="ones")

        def call(self, inputs):
            return self.dense(inputs)

    layer = OuterLayerWithKernelRegularizer()
    _ = layer(tf.zeros((1, 3)))
    out["kernel_reg_loss"] = [r(v) for v in layer.losses]

    # a functional model with add_loss layers trains with the extra losses
    inputs = tf.keras.Input(shape=(3,))
    h = tf.keras.layers.Dense(4, kernel_initializer=tf.keras.initializers.Constant(0.2),
                              kernel_regularizer=tf.keras.regularizers.L1L2(l1=0.01, l2=0.01))(inputs)
    h = ActivityRegularizationLayer(0.1)(h)
    outputs = tf.keras.layers.Dense(1, kernel_initializer=tf.keras.initializers.Constant(-0.3))(h)
    model = tf.keras.Model(inputs, outputs)
    xs = np.linspace(0, 1, 24, dtype="float32").reshape(8, 3)
    ys = xs.sum(1, keepdims=True)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    out["add_loss_fit"] = hist(model.fit(xs, ys, epochs=3, batch_size=4, shuffle=False, verbose=0))
    out["add_loss_model_losses"] = len(model.losses)

    # training flag and BatchNormalization
    class CustomDropout(tf.keras.layers.Layer):
        def call(self, inputs, training=None):
            if training:
                return inputs * 0.0
            return inputs

    cd = CustomDropout()
    out["training_flag"] = [r(cd(tf.ones((1, 2)), training=True)), r(cd(tf.ones((1, 2))))]
    bn = tf.keras.layers.BatchNormalization(momentum=0.5)
    xb = tf.constant([[1.0, 2.0], [3.0, 6.0], [5.0, 1.0]])
    out["bn_train"] = r(bn(xb, training=True))
    out["bn_infer"] = r(bn(xb, training=False))
    out["bn_weights"] = [[w.name for w in bn.weights], [r(w) for w in bn.non_trainable_weights]]

    # overriding train_step / test_step (Keras 3 style)
    class CustomModel(tf.keras.Model):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.loss_tracker = tf.keras.metrics.Mean(name="loss")
            self.mae_metric = tf.keras.metrics.MeanAbsoluteError(name="mae")

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = tf.reduce_mean(tf.square(y - y_pred))
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
            self.loss_tracker.update_state(loss)
            self.mae_metric.update_state(y, y_pred)
            return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

        def test_step(self, data):
            x, y = data
            y_pred = self(x, training=False)
            self.loss_tracker.update_state(tf.reduce_mean(tf.square(y - y_pred)))
            self.mae_metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

        @property
        def metrics(self):
            return [self.loss_tracker, self.mae_metric]

    inputs = tf.keras.Input(shape=(3,))
    outputs = tf.keras.layers.Dense(1, kernel_initializer=tf.keras.initializers.Constant(0.1))(inputs)
    cm = CustomModel(inputs, outputs)
    cm.compile(optimizer=tf.keras.optimizers.Adam(0.05))
    out["custom_train_step"] = hist(cm.fit(xs, ys, epochs=3, batch_size=4, shuffle=False, verbose=0))
    out["custom_test_step"] = {k: r(v) for k, v in cm.evaluate(xs, ys, verbose=0, return_dict=True).items()}

    # custom loss with compute_loss override via compile(loss=...) default train_step
    class ScaledModel(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(1, kernel_initializer=tf.keras.initializers.Constant(0.3),
                                               bias_initializer=tf.keras.initializers.Constant(0.1))

        def call(self, inputs, training=False):
            return self.dense(inputs) * 2.0

    sm = ScaledModel()
    sm.compile(optimizer="sgd", loss=tf.keras.losses.Huber(delta=0.5), metrics=["mae", "mse"])
    out["subclassed_fit"] = hist(sm.fit(xs, ys, epochs=2, batch_size=8, shuffle=False, verbose=0))
    out["subclassed_weights"] = [r(w) for w in sm.get_weights()]
    out["subclassed_summary_layers"] = [type(layer).__name__ for layer in sm.layers]
    return out
