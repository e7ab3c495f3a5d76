"""Training & evaluation with the built-in methods, on generated data: functional model,
validation_data/validation_split, callbacks, class and sample weights, custom losses and metrics,
multi-output models with loss weights."""
import numpy as np

from _common import hist, r


def det_weights(model, scale=0.3):
    model.set_weights([(np.sin(np.arange(w.size) * 0.53 + i) * scale).reshape(w.shape).astype(w.dtype)
                       for i, w in enumerate(model.get_weights())])


def run(tf):
    tf.keras.backend.clear_session()  # fresh auto-names (dense, dense_1, ...) as in a new process
    out = {}
    rng = np.random.RandomState(2)
    x = rng.randn(60, 5).astype("float32")
    y = (x[:, 0] + x[:, 1] > 0).astype("int32") + (x[:, 2] > 1).astype("int32")

    def get_model():
        inputs = tf.keras.Input(shape=(5,), name="digits")
        h = tf.keras.layers.Dense(8, activation="relu", name="dense_1")(inputs)
        h = tf.keras.layers.Dense(8, activation="relu", name="dense_2")(h)
        outputs = tf.keras.layers.Dense(3, activation="softmax", name="predictions")(h)
        model = tf.keras.Model(inputs=inputs, outputs=outputs)
        det_weights(model)
        return model

    model = get_model()
    out["io_shapes"] = [list(model.input_shape), list(model.output_shape)]
    out["layer_names"] = [layer.name for layer in model.layers]
    model.compile(optimizer=tf.keras.optimizers.RMSprop(learning_rate=0.01),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(),
                  metrics=[tf.keras.metrics.SparseCategoricalAccuracy()])
    h = model.fit(x[:40], y[:40], batch_size=10, epochs=3, validation_data=(x[40:], y[40:]),
                  shuffle=False, verbose=0)
    out["fit_validation_data"] = hist(h)
    out["history_params"] = {k: h.params[k] for k in ("epochs", "steps")}
    out["history_epoch"] = h.epoch
    out["evaluate"] = r(model.evaluate(x[40:], y[40:], batch_size=8, verbose=0))

    model = get_model()
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    h = model.fit(x, y, batch_size=16, epochs=2, validation_split=0.25, shuffle=False, verbose=0)
    out["fit_validation_split"] = hist(h)

    # custom loss function + custom metric class
    def custom_mse(y_true, y_pred):
        return tf.reduce_mean(tf.square(tf.one_hot(tf.cast(y_true[:, 0], "int32"), 3) - y_pred), axis=-1)

    class CategoricalTruePositives(tf.keras.metrics.Metric):
        def __init__(self, name="categorical_true_positives", **kwargs):
            super().__init__(name=name, **kwargs)
            self.true_positives = self.add_variable(shape=(), name="ctp", initializer="zeros")

        def update_state(self, y_true, y_pred, sample_weight=None):
            y_pred = tf.reshape(tf.argmax(y_pred, axis=1), shape=(-1, 1))
            values = tf.cast(tf.cast(y_true, "int64") == y_pred, "float32")
            if sample_weight is not None:
                values = tf.multiply(values, tf.cast(sample_weight, "float32"))
            self.true_positives.assign_add(tf.reduce_sum(values))

        def result(self):
            return self.true_positives

        def reset_state(self):
            self.true_positives.assign(0.0)

    model = get_model()
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss=custom_mse, metrics=[CategoricalTruePositives()])
    h = model.fit(x, y.reshape(-1, 1), batch_size=20, epochs=2, shuffle=False, verbose=0)
    out["custom_loss_metric"] = hist(h)

    # class weights and sample weights
    model = get_model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    h = model.fit(x, y, class_weight={0: 1.0, 1: 2.0, 2: 0.5}, batch_size=20, epochs=2, shuffle=False, verbose=0)
    out["class_weight"] = hist(h)
    model = get_model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    sw = np.where(y == 2, 3.0, 1.0).astype("float32")
    h = model.fit(x, y, sample_weight=sw, batch_size=20, epochs=2, shuffle=False, verbose=0)
    out["sample_weight"] = hist(h)
    out["evaluate_sample_weight"] = r(model.evaluate(x, y, sample_weight=sw, verbose=0))

    # callbacks: EarlyStopping, LearningRateScheduler, a custom Callback
    model = get_model()
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="sparse_categorical_crossentropy")
    events = []

    class Logger(tf.keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            events.append("train_begin")

        def on_epoch_end(self, epoch, logs=None):
            events.append(["epoch_end", epoch, sorted(logs)])

        def on_train_batch_end(self, batch, logs=None):
            if batch == 0:
                events.append(["batch_end", batch, sorted(logs)])

    def schedule(epoch, lr):
        return lr if epoch < 2 else lr * 0.5

    cbs = [tf.keras.callbacks.EarlyStopping(monitor="val_loss", min_delta=1e-2, patience=1, verbose=0),
           tf.keras.callbacks.LearningRateScheduler(schedule), Logger()]
    h = model.fit(x[:40], y[:40], epochs=20, batch_size=8, validation_data=(x[40:], y[40:]), callbacks=cbs,
                  shuffle=False, verbose=0)
    out["callbacks_history"] = hist(h)
    out["callbacks_events"] = events
    out["final_lr"] = r(model.optimizer.learning_rate)

    # multi-output model with loss dict and loss weights
    inp = tf.keras.Input(shape=(5,), name="features")
    shared = tf.keras.layers.Dense(6, activation="tanh")(inp)
    score = tf.keras.layers.Dense(1, name="score")(shared)
    cls = tf.keras.layers.Dense(3, name="cls")(shared)
    mo = tf.keras.Model(inp, [score, cls])
    det_weights(mo, 0.2)
    mo.compile(optimizer=tf.keras.optimizers.Adam(0.01),
               loss={"score": "mse", "cls": tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)},
               loss_weights={"score": 1.0, "cls": 0.5})
    target = x.sum(1, keepdims=True)
    h = mo.fit(x, {"score": target, "cls": y}, batch_size=20, epochs=2, shuffle=False, verbose=0)
    out["multi_output"] = hist(h)
    preds = mo.predict(x[:3], verbose=0)
    out["multi_output_predict"] = [type(preds).__name__, r(preds[0]), r(preds[1])]
    return out
