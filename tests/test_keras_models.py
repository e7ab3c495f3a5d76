"""Keras models: training numbers pinned against TF 2.21 / Keras 3.15 (the
custom GradientTape loop and compile/fit of the same Sequential model from
fixed initial weights), and the training API's behaviour."""

import os

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras import trainer

K = tf.keras
L = K.layers


def _data():
    rng = np.random.default_rng(0)
    return rng.random((100, 8, 8, 1)).astype("float32"), rng.integers(0, 10, 100)


def _cnn():
    m = K.Sequential([K.Input((8, 8, 1)), L.Conv2D(4, 3, activation="relu"), L.MaxPooling2D(), L.Flatten(),
                      L.Dense(16, activation="relu"), L.Dense(10)])
    r = np.random.default_rng(1)
    m.set_weights([r.normal(0, 0.3, w.shape).astype("float32") for w in m.get_weights()])
    return m


# The same programs run under TensorFlow 2.21.0 / Keras 3.15.1.
TF_LOOP_LOSSES = [2.5276074409484863, 2.3746142387390137, 2.269399881362915, 2.3397634029388428,
                  2.4090805053710938, 2.1977627277374268, 2.2647688388824463, 2.191155195236206]
TF_FIT_HISTORY = {"accuracy": [0.1, 0.15, 0.125], "loss": [2.421515, 2.294989, 2.260344],
                  "val_accuracy": [0.1, 0.1, 0.15], "val_loss": [2.268926, 2.319278, 2.361368]}
TF_EVALUATE = [2.272531747817993, 0.12999999523162842]
TF_BN_HISTORY = {"loss": [0.403363, 0.435044, 0.119452], "mae": [0.54187, 0.58853, 0.273613]}
TF_BN_MOVING_MEAN = [1.1082919, 0.14538355, -0.02935658]
TF_BN_MOVING_VAR = [0.94733846, 0.7954966, 0.75907844]
TF_BN_PREDICT = [0.26986802, 0.2779737, 0.27841172]


def test_custom_training_loop_matches_tf():
    x, y = _data()
    m = _cnn()
    opt = K.optimizers.Adam(0.01)
    loss_fn = K.losses.SparseCategoricalCrossentropy(from_logits=True)
    losses = []
    for _ in range(2):
        for i in range(0, 100, 32):
            with tf.GradientTape() as tape:
                loss = loss_fn(y[i:i + 32], m(x[i:i + 32], training=True))
            grads = tape.gradient(loss, m.trainable_variables)
            opt.apply_gradients(zip(grads, m.trainable_variables))
            losses.append(float(loss))
    np.testing.assert_allclose(losses, TF_LOOP_LOSSES, rtol=2e-6)


@pytest.mark.parametrize("use_function", [True, False], ids=["tf.function", "eager"])
def test_compile_fit_matches_tf(monkeypatch, use_function):
    monkeypatch.setattr(trainer, "USE_TF_FUNCTION", use_function)
    x, y = _data()
    m = _cnn()
    m.compile(optimizer=K.optimizers.Adam(0.01), loss=K.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    h = m.fit(x, y, batch_size=32, epochs=3, shuffle=False, verbose=0, validation_split=0.2)
    assert list(h.history) == list(TF_FIT_HISTORY)
    for k, v in TF_FIT_HISTORY.items():
        np.testing.assert_allclose(h.history[k], v, rtol=2e-6, atol=1e-6, err_msg=k)
    np.testing.assert_allclose(m.evaluate(x, y, verbose=0), TF_EVALUATE, rtol=2e-6)


def test_batchnorm_layernorm_model_with_sgd_momentum_matches_tf():
    m = K.Sequential([K.Input((4,)), L.Dense(8), L.BatchNormalization(), L.Activation("tanh"),
                      L.LayerNormalization(), L.Dense(1)])
    r = np.random.default_rng(2)
    m.set_weights([np.abs(r.normal(1, 0.1, w.shape)).astype("float32") if i == 5 else
                   r.normal(0, 0.5, w.shape).astype("float32") for i, w in enumerate(m.get_weights())])
    x = r.random((50, 4)).astype("float32")
    y = r.random((50, 1)).astype("float32")
    m.compile(optimizer=K.optimizers.SGD(0.1, momentum=0.9), loss="mse", metrics=["mae"])
    h = m.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
    for k, v in TF_BN_HISTORY.items():
        np.testing.assert_allclose(h.history[k], v, rtol=2e-6, atol=1e-6, err_msg=k)
    bn = m.layers[1]
    np.testing.assert_allclose(bn.moving_mean.numpy()[:3], TF_BN_MOVING_MEAN, rtol=1e-5)
    np.testing.assert_allclose(bn.moving_variance.numpy()[:3], TF_BN_MOVING_VAR, rtol=1e-5)
    np.testing.assert_allclose(m.predict(x[:3], verbose=0).ravel(), TF_BN_PREDICT, rtol=1e-5)


# ----------------------------------------------------------------------------
# The training API
# ----------------------------------------------------------------------------

def _tiny(seed=0):
    m = K.Sequential([L.Dense(8, activation="relu", kernel_initializer=K.initializers.GlorotUniform(seed)),
                      L.Dense(1, kernel_initializer=K.initializers.GlorotUniform(seed + 1))])
    m.compile(optimizer=K.optimizers.SGD(0.05), loss="mse")
    return m


def _linear_data(n=64):
    rng = np.random.default_rng(3)
    x = rng.random((n, 3)).astype("float32")
    return x, (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype("float32")


def test_fit_returns_history_and_reduces_the_loss():
    x, y = _linear_data()
    m = _tiny()
    h = m.fit(x, y, epochs=5, batch_size=16, verbose=0)
    assert isinstance(h, K.callbacks.History) and h.epoch == [0, 1, 2, 3, 4]
    assert h.history["loss"][-1] < h.history["loss"][0]
    assert m.history is h
    assert list(h.params.items()) == [("verbose", 0), ("epochs", 5), ("steps", 4)]  # Keras's CallbackList order


def test_fit_function_and_eager_steps_agree(monkeypatch):
    x, y = _linear_data()
    results = []
    for use in (True, False):
        monkeypatch.setattr(trainer, "USE_TF_FUNCTION", use)
        m = _tiny()
        results.append(m.fit(x, y, epochs=2, batch_size=10, shuffle=False, verbose=0).history["loss"])
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


def test_run_eagerly_keeps_python_side_effects_per_step():
    calls = []

    class Spy(L.Layer):
        def call(self, x):
            calls.append(1)
            return x

    x, y = _linear_data(20)
    m = K.Sequential([Spy(), L.Dense(1)])
    m.compile(optimizer="sgd", loss="mse", run_eagerly=True)
    m.fit(x, y, batch_size=10, epochs=1, verbose=0)
    assert len(calls) == 2


def test_evaluate_predict_and_batch_methods():
    x, y = _linear_data()
    m = _tiny()
    m.compile(optimizer="adam", loss="mse", metrics=["mae"])
    loss, mae = m.evaluate(x, y, batch_size=16, verbose=0)
    d = m.evaluate(x, y, verbose=0, return_dict=True)
    assert d == pytest.approx({"loss": loss, "mae": mae})
    pred = m.predict(x, batch_size=7, verbose=0)
    assert isinstance(pred, np.ndarray) and pred.shape == (64, 1)
    np.testing.assert_allclose(pred, m(x).numpy(), rtol=1e-6)
    np.testing.assert_allclose(loss, np.mean((pred - y) ** 2), rtol=1e-5)
    m.train_on_batch(x[:8], y[:8])
    np.testing.assert_allclose(m.predict_on_batch(x[:2]), m(x[:2]).numpy())


def test_fit_needs_compile():
    with pytest.raises(ValueError, match="compile"):  # Keras 3: ValueError
        K.Sequential([L.Dense(1)]).fit(np.ones((2, 1)), np.ones((2, 1)), verbose=0)


def test_validation_split_uses_the_last_samples():
    x, y = _linear_data(50)
    m = _tiny()
    h = m.fit(x, y, epochs=1, validation_split=0.2, shuffle=False, verbose=0)
    m2 = _tiny()
    h2 = m2.fit(x[:40], y[:40], epochs=1, validation_data=(x[40:], y[40:]), shuffle=False, verbose=0)
    assert h.history.keys() == h2.history.keys()
    for k in h.history:  # pytest.approx does not take nested dicts
        assert h.history[k] == pytest.approx(h2.history[k])


def test_fit_accepts_a_tf_data_dataset():
    x, y = _linear_data(40)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(10)
    m1, m2 = _tiny(), _tiny()
    h1 = m1.fit(ds, epochs=2, verbose=0)
    h2 = m2.fit(x, y, batch_size=10, epochs=2, shuffle=False, verbose=0)
    np.testing.assert_allclose(h1.history["loss"], h2.history["loss"], rtol=1e-6)
    assert m1.evaluate(ds, verbose=0) == pytest.approx(m2.evaluate(x, y, verbose=0), rel=1e-6)


def test_sample_weight_scales_the_loss():
    x, y = _linear_data(8)
    m = _tiny()
    base = m.evaluate(x, y, verbose=0)
    zero_half = np.array([1, 1, 1, 1, 0, 0, 0, 0], np.float32)
    weighted = m.evaluate(x, y, sample_weight=zero_half, verbose=0)
    first = m.evaluate(x[:4], y[:4], verbose=0)
    assert weighted == pytest.approx(first / 2, rel=1e-5) and base != weighted


def test_early_stopping_stops_and_restores_best_weights():
    x, y = _linear_data()

    class Worse(K.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs["val_loss"] = [1.0, 0.5, 0.7, 0.8, 0.9, 0.95][epoch]
            if epoch == 1:
                self.best = self.model.get_weights()

    worse = Worse()
    stop = K.callbacks.EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True)
    m = _tiny()
    h = m.fit(x, y, epochs=6, verbose=0, callbacks=[worse, stop])
    assert len(h.epoch) == 4 and stop.stopped_epoch == 3 and stop.best_epoch == 1
    for a, b in zip(m.get_weights(), worse.best):
        np.testing.assert_array_equal(a, b)


def test_learning_rate_scheduler_sets_the_rate_each_epoch():
    x, y = _linear_data()
    seen = []

    class Spy(K.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            seen.append(float(np.asarray(self.model.optimizer.learning_rate)))

    m = _tiny()
    sched = K.callbacks.LearningRateScheduler(lambda epoch, lr: 0.1 / (epoch + 1))
    h = m.fit(x, y, epochs=3, verbose=0, callbacks=[sched, Spy()])
    assert seen == pytest.approx([0.1, 0.05, 0.1 / 3])
    assert h.history["learning_rate"] == pytest.approx([0.1, 0.05, 0.1 / 3])


def test_model_checkpoint_saves_best_only(tmp_path):
    x, y = _linear_data()
    path = str(tmp_path / "best.weights.h5")
    ck = K.callbacks.ModelCheckpoint(path, monitor="loss", save_best_only=True, save_weights_only=True)
    m = _tiny()
    m.fit(x, y, epochs=3, verbose=0, callbacks=[ck])
    assert os.path.exists(path) and ck.best == pytest.approx(m.history.history["loss"][-1])
    fresh = _tiny(seed=7)
    fresh(x[:1])
    fresh.load_weights(path)
    for a, b in zip(fresh.get_weights(), m.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_load_weights_into_a_different_model_raises_and_changes_nothing(tmp_path):
    x, _ = _linear_data()
    m = _tiny()
    m(x[:1])
    path = str(tmp_path / "w.weights.h5")
    m.save_weights(path)
    other = K.Sequential([L.Dense(5), L.Dense(1)])
    other(x[:1])
    before = other.get_weights()
    with pytest.raises(ValueError, match="shape"):
        other.load_weights(path)
    for a, b in zip(before, other.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_progress_bar_prints_loss_and_metrics(capsys, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_tqdm(name, *a, **k):
        if name.startswith("tqdm"):
            raise ImportError(name)
        return real_import(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    x, y = _linear_data(32)
    m = _tiny()
    m.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    m.fit(x, y, epochs=2, batch_size=8, verbose=1)
    out = capsys.readouterr().out
    assert "Epoch 1/2" in out and "Epoch 2/2" in out and "4/4" in out
    assert "loss:" in out and "mae:" in out and "/step" in out and "━" in out
    m.fit(x, y, epochs=1, batch_size=8, verbose=2)
    assert "loss:" in capsys.readouterr().out


def test_subclassed_model_tracks_layers_in_assignment_order():
    class Net(K.Model):
        def __init__(self):
            super().__init__()
            self.second = L.Dense(2)
            self.first = L.Dense(3)

        def call(self, x, training=None):
            return self.second(self.first(x))

    net = Net()
    net(np.ones((1, 4), np.float32))
    assert [tuple(v.shape.as_list()) for v in net.trainable_variables] == [(3, 2), (2,), (4, 3), (3,)]
    net.compile(optimizer="adam", loss="mse")
    net.fit(np.ones((4, 4), np.float32), np.zeros((4, 2), np.float32), epochs=1, verbose=0)


def test_summary_lists_layers_and_parameter_counts(capsys):
    m = K.Sequential([K.Input((8, 8, 1)), L.Conv2D(4, 3), L.Flatten(), L.Dense(2)])
    m.summary()
    out = capsys.readouterr().out
    assert 'Model: "' in out and "(None, 6, 6, 4)" in out and "Total params: 330" in out
    assert "Trainable params: 330" in out and "Non-trainable params: 0" in out


def test_sequential_add_pop_and_errors():
    m = K.Sequential()
    m.add(K.Input((3,)))
    m.add(L.Dense(2))
    assert m.outputs[0].shape == (None, 2)
    m.add(L.Dense(1))
    m.pop()
    assert len(m.layers) == 1
    with pytest.raises(TypeError, match="keras.Layer"):
        m.add("dense")
    with pytest.raises(ValueError, match="no layers"):
        K.Sequential()(np.ones((1, 2)))


def test_checkpoint_of_model_and_optimizer_round_trips(tmp_path):
    x, y = _linear_data()
    m = _tiny()
    m.compile(optimizer="adam", loss="mse")
    m.fit(x, y, epochs=1, verbose=0)
    ckpt = tf.train.Checkpoint(model=m, optimizer=m.optimizer)
    path = ckpt.save(str(tmp_path / "ck"))
    saved = m.get_weights()
    m.fit(x, y, epochs=1, verbose=0)
    ckpt.restore(path)
    for a, b in zip(m.get_weights(), saved):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("loss, y, units, kind", [
    ("mse", np.ones((4, 1), np.float32), 1, "BinaryAccuracy"),
    ("sparse_categorical_crossentropy", np.array([0, 1, 2, 1]), 3, "SparseCategoricalAccuracy"),
    ("categorical_crossentropy", np.eye(3, dtype=np.float32)[[0, 1, 2, 1]], 3, "CategoricalAccuracy"),
])
def test_accuracy_string_resolves_from_shapes_as_keras_3(loss, y, units, kind):
    m = K.Sequential([L.Dense(units, activation="softmax" if units > 1 else "sigmoid")])
    m.compile(optimizer="sgd", loss=loss, metrics=["accuracy"])
    h = m.fit(np.ones((4, 2), np.float32), y, epochs=1, verbose=0)
    assert "accuracy" in h.history
    assert type(m.compiled_metrics[0]._inner).__name__ == kind


def test_custom_layer_with_keras_3_add_weight():
    class Scale(L.Layer):
        def build(self, input_shape):
            self.w = self.add_weight((input_shape[-1],), initializer="ones", name="w")
            self.c = self.add_weight(shape=(), initializer=K.initializers.Constant(2.0), trainable=False)

        def call(self, x):
            return x * self.w * self.c

    layer = Scale()
    np.testing.assert_allclose(layer(np.ones((1, 3), np.float32)).numpy(), [[2.0, 2.0, 2.0]])
    assert [w.name for w in layer.trainable_weights] == ["w"] and len(layer.non_trainable_weights) == 1


def test_fit_rejects_mismatched_or_missing_labels():
    m = _tiny()
    with pytest.raises(ValueError, match="cardinality"):
        m.fit(np.ones((4, 3), np.float32), np.ones((5, 1), np.float32), verbose=0)
    with pytest.raises(ValueError):  # Keras 3 passes x alone: the built-in loss gets y=None
        m.fit(np.ones((4, 3), np.float32), verbose=0)


def test_early_stopping_restores_best_weights_even_without_stopping():
    x, y = _linear_data()

    class Loss(K.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs["val_loss"] = [1.0, 0.5, 0.7][epoch]
            if epoch == 1:
                self.best = self.model.get_weights()

    spy = Loss()
    m = _tiny()
    h = m.fit(x, y, epochs=3, verbose=0, callbacks=[spy, K.callbacks.EarlyStopping(patience=5,
                                                                                  restore_best_weights=True)])
    assert len(h.epoch) == 3
    for a, b in zip(m.get_weights(), spy.best):
        np.testing.assert_array_equal(a, b)


def test_model_save_rejects_a_suffix_keras_does_not_know(tmp_path):
    with pytest.raises(ValueError, match="Invalid filepath extension for saving"):
        _tiny().save(str(tmp_path / "model.bin"))


def test_custom_train_step_override_drives_fit():
    class Custom(K.Model):
        def __init__(self):
            super().__init__()
            self.dense = L.Dense(1, kernel_initializer="zeros")
            self.steps_seen = 0

        def call(self, x):
            return self.dense(x)

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply(grads, self.trainable_variables)
            logs = self.compute_metrics(x, y, y_pred)
            return {"loss": loss, "mae": logs["mae"], "double": loss * 2.0}

    x, y = _linear_data(16)
    m = Custom()
    m.compile(optimizer=K.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    h = m.fit(x, y, batch_size=16, epochs=2, verbose=0)
    assert set(h.history) == {"loss", "mae", "double"}
    assert h.history["double"] == pytest.approx([2 * v for v in h.history["loss"]])
    assert h.history["loss"][1] < h.history["loss"][0]


def test_weight_regularizers_enter_the_loss_as_in_tf():
    r = np.random.default_rng(0)
    x = r.random((40, 5)).astype("float32")
    y = r.random((40, 1)).astype("float32")
    m = K.Sequential([K.Input((5,)), L.Dense(4, activation="tanh", kernel_regularizer=K.regularizers.L2(0.05),
                                             bias_regularizer="l1"),
                      L.Dense(1, kernel_regularizer=K.regularizers.L1L2(l1=0.01, l2=0.02))])
    rr = np.random.default_rng(1)
    m.set_weights([rr.normal(0, 0.5, w.shape).astype("float32") for w in m.get_weights()])
    # TF 2.21 / Keras 3.15 on the same program:
    np.testing.assert_allclose([float(v) for v in m.losses], [0.083632, 0.012923, 0.081624], atol=1e-6)
    m.compile(optimizer=K.optimizers.SGD(0.1), loss="mse")
    h = m.fit(x, y, batch_size=10, epochs=3, shuffle=False, verbose=0)
    np.testing.assert_allclose(h.history["loss"], [0.541748, 0.248929, 0.230894], atol=1e-6)
    assert m.evaluate(x, y, verbose=0) == pytest.approx(0.221551, abs=1e-6)


def test_add_loss_values_belong_to_one_forward_pass():
    class Penalized(L.Layer):
        def call(self, x):
            self.add_loss(tf.reduce_sum(x))
            return x

    m = K.Sequential([Penalized(), L.Dense(1)])
    m(np.ones((1, 2), np.float32))
    m(np.ones((1, 2), np.float32))
    assert len(m.losses) == 1 and float(m.losses[0]) == 2.0


def test_class_weight_weights_the_loss_not_the_metrics_as_in_tf():
    r = np.random.default_rng(0)
    x = r.random((30, 4)).astype("float32")
    y = r.integers(0, 3, 30)
    m = K.Sequential([K.Input((4,)), L.Dense(3)])
    m.set_weights([np.random.default_rng(1).normal(0, 0.5, w.shape).astype("float32") for w in m.get_weights()])
    m.compile(optimizer=K.optimizers.SGD(0.1), loss=K.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
    h = m.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0, class_weight={0: 1.0, 1: 3.0, 2: 0.5},
              validation_data=tf.data.Dataset.from_tensor_slices((x, y)).batch(8))
    want = {"accuracy": [0.266667, 0.266667], "loss": [1.514634, 1.429015], "val_accuracy": [0.266667, 0.266667],
            "val_loss": [1.308795, 1.291581]}  # TF 2.21 / Keras 3.15
    for k, v in want.items():
        np.testing.assert_allclose(h.history[k], v, atol=1e-6, err_msg=k)
    with pytest.raises(ValueError, match="You cannot `class_weight` and `sample_weight` at the same time."):
        m.fit(x, y, verbose=0, class_weight={0: 1.0}, sample_weight=np.ones(30))


def _cw_model(loss):
    K.utils.set_random_seed(0)
    m = K.Sequential([K.Input((2,)), L.Dense(3)])
    m.set_weights([np.random.default_rng(1).normal(0, 0.5, w.shape).astype("float32") for w in m.get_weights()])
    m.compile(optimizer="sgd", loss=loss)
    return m


def test_class_weight_as_keras_3_on_arrays_and_datasets():
    x = np.linspace(-1, 1, 24).reshape(12, 2).astype("float32")
    y = np.array([0, 1, 2] * 4)
    sparse = K.losses.SparseCategoricalCrossentropy(from_logits=True)
    # a class without a weight weighs 1.0 (Keras 3; Keras 2 raised)
    arrays = _cw_model(sparse).fit(x, y, batch_size=4, class_weight={0: 2.0, 1: 0.5}, verbose=0,
                                   shuffle=False).history["loss"]
    full = _cw_model(sparse).fit(x, y, batch_size=4, class_weight={0: 2.0, 1: 0.5, 2: 1.0}, verbose=0, shuffle=False)
    np.testing.assert_allclose(arrays, full.history["loss"], rtol=1e-6)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)
    on_ds = _cw_model(sparse).fit(ds, class_weight={0: 2.0, 1: 0.5, 2: 1.0}, verbose=0).history["loss"]
    np.testing.assert_allclose(on_ds, full.history["loss"], rtol=1e-6)
    onehot = tf.data.Dataset.from_tensor_slices((x, tf.one_hot(y, 3))).batch(4)
    m = _cw_model(K.losses.CategoricalCrossentropy(from_logits=True))
    np.testing.assert_allclose(m.fit(onehot, class_weight={0: 2.0, 1: 0.5, 2: 1.0}, verbose=0).history["loss"],
                               on_ds, rtol=1e-6)
    with pytest.raises(ValueError, match="You cannot `class_weight` and `sample_weight` at the same time."):
        _cw_model(sparse).fit(tf.data.Dataset.from_tensor_slices((x, y, np.ones(12))).batch(4),
                              class_weight={0: 1.0}, verbose=0)
    with pytest.raises(tf.errors.InvalidArgumentError):  # label 2 past the table, as TF's gather
        _cw_model(sparse).fit(ds, class_weight={0: 1.0, 1: 1.0}, verbose=0)
    with pytest.raises(ValueError, match="Arguments `sample_weight` and `class_weight` cannot be specified"):
        _cw_model(sparse).train_on_batch(x, y, sample_weight=np.ones(12), class_weight={0: 1.0})


def test_class_weight_of_a_dataset_of_masks_weighs_each_pixel():
    xi = np.random.RandomState(0).rand(8, 4, 4, 1).astype("float32")
    yi = (xi > 0.5).astype("int64")
    K.utils.set_random_seed(0)
    s = K.Sequential([K.Input((4, 4, 1)), L.Conv2D(2, 1)])
    s.compile(optimizer="sgd", loss=K.losses.SparseCategoricalCrossentropy(from_logits=True))
    w = s.get_weights()
    got = s.fit(tf.data.Dataset.from_tensor_slices((xi, yi)).batch(4), class_weight={0: 3.0, 1: 1.0}, verbose=0)
    s.set_weights(w)
    s.compile(optimizer="sgd", loss=K.losses.SparseCategoricalCrossentropy(from_logits=True))
    sw = np.where(yi[..., 0] == 0, 3.0, 1.0).astype("float32")
    want = s.fit(tf.data.Dataset.from_tensor_slices((xi, yi, sw)).batch(4), verbose=0)
    np.testing.assert_allclose(got.history["loss"], want.history["loss"], rtol=1e-6)


def test_weighted_metrics_see_the_class_weights():
    r = np.random.default_rng(0)
    x = r.random((30, 4)).astype("float32")
    y = r.integers(0, 3, 30)
    m = K.Sequential([K.Input((4,)), L.Dense(3)])
    m.set_weights([np.random.default_rng(1).normal(0, 0.5, w.shape).astype("float32") for w in m.get_weights()])
    m.compile(optimizer=K.optimizers.SGD(0.1), loss=K.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"], weighted_metrics=["accuracy"])
    h = m.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0, class_weight={0: 1.0, 1: 3.0, 2: 0.5},
              validation_data=(x, y))
    assert list(h.history) == ["accuracy", "loss", "val_accuracy", "val_loss", "val_weighted_accuracy",
                               "weighted_accuracy"]  # as TF 2.21 / Keras 3.15
    np.testing.assert_allclose(h.history["weighted_accuracy"], [0.578313, 0.578313], atol=1e-6)
    np.testing.assert_allclose(h.history["accuracy"], [0.266667, 0.266667], atol=1e-6)


def _two_output_model():
    a = K.Input((4,))
    h = L.Dense(5, activation="relu")(a)
    m = K.Model(a, [L.Dense(1, name="reg")(h), L.Dense(3, name="cls")(h)])
    m.set_weights([np.random.default_rng(1).normal(0, 0.5, w.shape).astype("float32") for w in m.get_weights()])
    return m


def test_multi_output_model_losses_weights_and_metrics_match_tf():
    r = np.random.default_rng(0)
    x = r.random((32, 4)).astype("float32")
    y1 = r.random((32, 1)).astype("float32")
    y2 = r.integers(0, 3, 32)
    m = _two_output_model()
    m.compile(optimizer=K.optimizers.SGD(0.1), loss=["mse", K.losses.SparseCategoricalCrossentropy(from_logits=True)],
              loss_weights=[1.0, 0.5], metrics=[["mae"], ["accuracy"]])
    h = m.fit(x, [y1, y2], batch_size=8, epochs=2, shuffle=False, verbose=0)
    want = {"cls_accuracy": [0.375, 0.375], "cls_loss": [1.175186, 1.153736], "loss": [0.716517, 0.670583],
            "reg_loss": [0.128924, 0.093715], "reg_mae": [0.312175, 0.267689]}  # TF 2.21 / Keras 3.15
    assert list(h.history) == list(want)
    for k, v in want.items():
        np.testing.assert_allclose(h.history[k], v, atol=1e-6, err_msg=k)
    np.testing.assert_allclose(m.evaluate(x, [y1, y2], verbose=0),
                               [0.6578415036201477, 0.09073092043399811, 1.1342211961746216, 0.375,
                                0.26469892263412476], rtol=2e-6)
    m.compile(optimizer=K.optimizers.SGD(0.1),
              loss={"reg": "mse", "cls": K.losses.SparseCategoricalCrossentropy(from_logits=True)})
    h = m.fit(x, {"reg": y1, "cls": y2}, batch_size=8, epochs=1, shuffle=False, verbose=0)
    np.testing.assert_allclose([h.history[k][0] for k in ("cls_loss", "loss", "reg_loss")],
                               [1.146166, 1.238865, 0.0927], atol=1e-6)
    preds = m.predict(x[:3], verbose=0)
    assert [p.shape for p in preds] == [(3, 1), (3, 3)]


def test_multi_output_compile_errors_name_the_outputs():
    m = _two_output_model()
    with pytest.raises(ValueError, match="unknown output name"):
        m.compile(loss={"nope": "mse"})
    with pytest.raises(ValueError, match="2 outputs"):
        m.compile(loss=["mse"])


def test_summary_shows_the_shapes_of_the_last_sequential_build(capsys):
    # Keras 3: a Sequential's first call builds its graph at that call's shape (batch included); summary()
    # shows each layer's last node, also for a layer called on its own before (the regression tutorial)
    x = np.random.default_rng(0).random((20, 9)).astype(np.float32)
    norm = tf.keras.layers.Normalization(axis=-1)
    norm.adapt(x)
    norm(x[:1])
    lin = tf.keras.Sequential([norm, tf.keras.layers.Dense(1)])
    lin.predict(x[:10], verbose=0)
    tf.keras.Sequential([norm, tf.keras.layers.Dense(4)]).summary()
    d = tf.keras.layers.Dense(3)
    d(x[:2])
    s = tf.keras.Sequential([d])
    s(x[:7])
    s.summary()
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("│")]
    assert [r.split("│")[2].strip() for r in rows] == ["(10, 9)", "?", "(7, 3)"]


def test_layer_init_is_keyword_only_as_keras():
    # Keras 3's Layer.__init__(self, *, ...): TF's effective_tf2 guide calls `super().__init__(self)` in a Model
    # subclass and gets this TypeError (pinned from Keras 3.15)
    class DynamicRNN(tf.keras.Model):
        def __init__(self, cell):
            super().__init__(self)
            self.cell = cell

    with pytest.raises(TypeError, match=r"^Layer\.__init__\(\) takes 1 positional argument but 2 were given$"):
        DynamicRNN(tf.keras.layers.LSTMCell(3))


def test_per_output_losses_weigh_batches_as_keras_traced_step():
    # Keras weights each output's loss by the batch dimension of the data's spec: with a partial last batch (or a
    # dataset of unknown batch size) each batch counts once in `<output>_loss`; the total loss is weighted by size.
    # Literals from TF 2.21 / Keras 3.15.
    inp = tf.keras.Input((3,))
    m = tf.keras.Model(inp, [tf.keras.layers.Dense(1, name="r")(inp), tf.keras.layers.Dense(2, name="c")(inp)])
    assert m.output_names == ["r", "c"]
    m.set_weights([np.array([[0.1], [-0.2], [0.3]], "float32"), np.array([0.05], "float32"),
                   np.array([[0.2, -0.1], [0.0, 0.3], [-0.4, 0.1]], "float32"), np.array([0.0, 0.1], "float32")])
    m.compile("sgd", loss=["mse", "mse"])
    x = np.linspace(-1, 1, 30, dtype="float32").reshape(10, 3)
    y1 = np.linspace(0, 1, 10, dtype="float32").reshape(10, 1)
    y2 = np.cos(np.arange(20, dtype="float32")).reshape(10, 2)
    ds = tf.data.Dataset.from_tensor_slices((x, (y1, y2)))
    got = {"eval4": m.evaluate(x, [y1, y2], batch_size=4, verbose=0),
           "eval5": m.evaluate(x, [y1, y2], batch_size=5, verbose=0),
           "eval_ds": m.evaluate(ds.batch(4), verbose=0),
           "eval_ds_drop": m.evaluate(ds.batch(4, drop_remainder=True), verbose=0)}
    h = m.fit(x, [y1, y2], batch_size=4, epochs=1, shuffle=False, verbose=0)
    got["fit4"] = [h.history[k][0] for k in sorted(h.history)]
    want = {"eval4": [0.759477, 0.277432, 0.528642], "eval5": [0.759477, 0.230392, 0.529084],
            "eval_ds": [0.759477, 0.277432, 0.528642], "eval_ds_drop": [0.68958, 0.159832, 0.529747],
            "fit4": [0.528938, 0.754513, 0.269549]}
    for k, w in want.items():
        np.testing.assert_allclose(got[k], w, rtol=2e-5, err_msg=k)


def test_rnn_states_are_tuples_and_dataset_shuffle_warns_as_keras():
    i = tf.keras.Input((5, 3))
    out = tf.keras.layers.GRU(4, return_state=True, return_sequences=True)(i)
    assert isinstance(out, tuple) and len(out) == 2
    bi = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(2, return_state=True), merge_mode=None)(i)
    assert isinstance(bi, tuple) and len(bi) == 6
    lines = []
    tf.keras.Model(i, out).summary(print_fn=lines.append)
    assert "[(None, 5, 4), (None," in "\n".join(lines)  # a called layer's shapes: its node's listed outputs
    m = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    m.compile("sgd", "mse")
    ds = tf.data.Dataset.from_tensor_slices((np.ones((4, 2), "float32"), np.ones((4, 1), "float32"))).batch(2)
    with pytest.warns(UserWarning, match="`shuffle=True` was passed, but will be ignored since the data `x` was "
                                         "provided as a tf.data.Dataset"):
        m.fit(ds, epochs=1, verbose=0)


def test_summary_expand_nested_and_on_batch_steps_as_keras():
    inner2 = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, name="deep")], name="inner2")
    inner = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(4, name="d1"), inner2], name="inner")
    outer = tf.keras.Sequential([tf.keras.Input((3,)), inner, tf.keras.layers.Dense(2, name="d2")], name="outer")
    lines: list = []
    outer.summary(expand_nested=True, print_fn=lines.append)
    text = "\n".join(lines)
    assert "│    └ d1 (Dense)                 │ (None, 4)" in text and "│       └ deep (Dense)" in text
    lines.clear()
    outer.summary(print_fn=lines.append)
    assert "d1" not in "\n".join(lines)

    class C(tf.keras.Model):
        def test_step(self, data):
            seen.append((len(data), data[2] is None))
            return super().test_step(data)

    seen: list = []
    i = tf.keras.Input((2,))
    c = C(i, tf.keras.layers.Dense(2, kernel_initializer="ones")(i))
    c.compile("sgd", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    x, y = np.array([[1., 2.], [0., -1.], [3., 1.]], "float32"), np.array([0, 1, 1])
    assert np.allclose(c.train_on_batch(x, y), [0.6931471824645996, 0.3333333432674408])  # TF 2.21
    logs = c.train_on_batch(x, y, class_weight={0: 2.0, 1: 0.5}, return_dict=True)
    assert np.isclose(logs["loss"], 0.6898226737976074, rtol=1e-6) and logs["accuracy"] == 1.0
    assert np.allclose(c.test_on_batch(x, y), [0.6849003434181213, 0.6666666865348816])
    assert seen[-1] == (3, True)  # the step gets (x, y, None), as Keras's test_on_batch passes it


def test_fit_without_targets_hands_the_step_x_itself():
    seen = []

    class Auto(K.Model):
        def __init__(self):
            super().__init__()
            self.d = L.Dense(2)

        def call(self, x):
            return self.d(x)

        def train_step(self, data):
            seen.append((type(data).__name__, tuple(data.shape) if hasattr(data, "shape") else len(data)))
            return {"loss": tf.reduce_mean(self(tf.nest.flatten(data)[0]))}

    m = Auto()
    m.compile(optimizer="sgd")
    m.fit(np.ones((8, 2), "float32"), batch_size=4, epochs=1, verbose=0)
    m.fit((np.ones((8, 2), "float32"),), batch_size=8, epochs=1, verbose=0)  # a tuple x comes as (x,): Keras's packing
    assert seen[0][1] == (4, 2) and seen[-1] == ("tuple", 1)
    plain = K.Sequential([K.Input((3,)), L.Dense(1)])
    plain.compile(loss="mse", optimizer="sgd")
    with pytest.raises(ValueError):  # the built-in step's loss gets y=None (TF: "None values not supported.")
        plain.fit(np.ones((4, 3)), verbose=0)


_SUMMARY_SEQ_TRAINABLE = """Model: "seq"
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━┓
┃ Layer (type)                ┃ Output Shape          ┃    Param # ┃ Trai… ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━┩
│ d1 (Dense)                  │ (None, 3)             │         15 │   N   │
├─────────────────────────────┼───────────────────────┼────────────┼───────┤
│ drop (Dropout)              │ (None, 3)             │          0 │   -   │
├─────────────────────────────┼───────────────────────┼────────────┼───────┤
│ d2 (Dense)                  │ (None, 2)             │          8 │   Y   │
└─────────────────────────────┴───────────────────────┴────────────┴───────┘
 Total params: 23 (92.00 B)
 Trainable params: 8 (32.00 B)
 Non-trainable params: 15 (60.00 B)
"""

_SUMMARY_FUN_RANGE = """Model: "fun"
┏━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┓
┃ Layer (type)        ┃ Output Shape      ┃    Param # ┃ Connected to      ┃
┡━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━┩
│ a (Dense)           │ (None, 3)         │         15 │ inp[0][0]         │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ b (Dense)           │ (None, 3)         │         15 │ inp[0][0]         │
├─────────────────────┼───────────────────┼────────────┼───────────────────┤
│ add (Add)           │ (None, 3)         │          0 │ a[0][0], b[0][0]  │
└─────────────────────┴───────────────────┴────────────┴───────────────────┘
 Total params: 30 (120.00 B)
 Trainable params: 15 (60.00 B)
 Non-trainable params: 15 (60.00 B)
"""


def test_summary_show_trainable_and_layer_range_as_keras():
    m = K.Sequential([K.Input((4,)), L.Dense(3, name="d1"), L.Dropout(0.1, name="drop"), L.Dense(2, name="d2")],
                     name="seq")
    m.layers[0].trainable = False
    out = []
    m.summary(show_trainable=True, print_fn=out.append)
    assert out[0] == _SUMMARY_SEQ_TRAINABLE  # Keras 3.15, an 80-column console
    i = K.Input((4,), name="inp")
    f = K.Model(i, L.Add(name="add")([L.Dense(3, name="a")(i), L.Dense(3, name="b")(i)]), name="fun")
    f.get_layer("b").trainable = False
    out = []
    f.summary(layer_range=["a", "add"], print_fn=out.append)
    assert out[0] == _SUMMARY_FUN_RANGE
    with pytest.raises(ValueError, match=r"Passed layer_names do not match the layer names in the model. "
                                         r"Received: \['x', 'd2'\]"):
        m.summary(layer_range=["x", "d2"])
    with pytest.raises(ValueError, match="layer_range must be a list or tuple of length 2"):
        m.summary(layer_range=["d1"])
    with pytest.raises(ValueError, match="layer_range should contain string type only"):
        m.summary(layer_range=[1, 2])


def test_split_dataset_as_keras():
    x = np.arange(20, dtype="float32").reshape(10, 2)
    y = np.arange(10)
    a, b = K.utils.split_dataset((x, y), left_size=0.8)
    assert int(a.cardinality()) == 8 and [int(e[1]) for e in b] == [8, 9]
    a, b = K.utils.split_dataset(x, right_size=3, shuffle=True, seed=1)
    assert [e.numpy().tolist() for e in b] == [[8.0, 9.0], [2.0, 3.0], [4.0, 5.0]]  # TF 2.21 / Keras 3.15
    ds = tf.data.Dataset.from_tensor_slices({"f": x, "l": y}).batch(4)
    a, b = K.utils.split_dataset(ds, left_size=6, shuffle=True, seed=3)
    assert [e["l"].numpy().tolist() for e in a] == [[1, 5, 6, 0], [9, 4]]
    assert [e["l"].numpy().tolist() for e in b] == [[7, 2, 8, 3]]
    with pytest.raises(ValueError, match="At least one of the `left_size` or `right_size` must be specified"):
        K.utils.split_dataset((x, y))
    with pytest.raises(ValueError, match="The sum of `left_size` and `right_size` is greater than 1"):
        K.utils.split_dataset((x, y), left_size=0.5, right_size=0.7)
    with pytest.raises(TypeError, match="Unsupported dataset type"):
        K.utils.split_dataset(5, left_size=2)
