"""Behaviour the keras.io developer guides rely on, pinned from TF 2.21 / Keras 3.15 (the guides' programs run
unchanged under tapeflow: guides/functional_api.py, ...)."""

from __future__ import annotations

import numpy as np

import tapeflow as tf

K = tf.keras
layers = K.layers


def test_to_categorical_numpy_gives_float64_tensor_gives_float32():
    out = K.utils.to_categorical(np.array([[8], [9]]), 10)  # cifar10 labels (n, 1)
    assert out.dtype == np.float64 and out.shape == (2, 10) and out[1, 9] == 1.0
    t = K.utils.to_categorical(tf.constant([[1], [2]]), 3)
    assert t.dtype == tf.float32 and t.numpy().tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


def test_input_layer_output_is_the_input_tensor():
    # functional_api: [layer.output for layer in vgg19.layers] starts with the InputLayer's
    x = K.Input((3,))
    layer = x._keras_history[0]
    assert layer.output is x and layer.input == []


class _CustomDense(layers.Layer):  # its get_config() has no name: the rebuilt layer gets a new one
    def __init__(self, units=32):
        super().__init__()
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal")

    def call(self, inputs):
        return tf.matmul(inputs, self.w)

    def get_config(self):
        return {"units": self.units}


def test_custom_layer_config_and_from_config_without_name():
    inputs = K.Input((4,))
    model = K.Model(inputs, _CustomDense(10)(inputs))
    entry = model.get_config()["layers"][1]
    assert (entry["module"], entry["class_name"], entry["registered_name"]) == (
        "tests.test_keras_io_guides", "_CustomDense", "_CustomDense")
    assert model.get_config()["layers"][0]["registered_name"] is None  # Keras's own classes: None
    new = K.Model.from_config(model.get_config(), custom_objects={"_CustomDense": _CustomDense})
    assert [type(la).__name__ for la in new.layers] == ["InputLayer", "_CustomDense"]
    assert new.output_shape == (None, 10)


def test_keras_random_draws_keras3_numbers():
    # making_new_layers_and_models_via_subclassing: the VAE's Sampling layer draws keras.random.normal
    K.utils.set_random_seed(3)
    g = K.random.SeedGenerator(42)
    np.testing.assert_allclose(K.random.normal((2,), seed=g).numpy(), [0.015817075967788696, -1.5900869369506836],
                               rtol=1e-6)
    np.testing.assert_allclose(K.random.uniform((2,), seed=g).numpy(), [0.5280030965805054, 0.24338412284851074],
                               rtol=1e-6)
    assert g.state.numpy().tolist() == [42, 2] and g.state.path.endswith("/seed_generator_state")
    # unseeded: the global SeedGenerator, seeded from Python's random after set_random_seed
    np.testing.assert_allclose(K.random.normal((2,)).numpy(), [0.11797960102558136, 1.1750175952911377], rtol=1e-6)
    np.testing.assert_allclose(K.random.normal((2,)).numpy(), [-0.7138811945915222, 1.0599169731140137], rtol=1e-6)
    assert K.random.randint((4,), 0, 10, seed=1).numpy().tolist() == [9, 4, 0, 6]
    assert K.random.shuffle(tf.range(6), seed=3).numpy().tolist() == [5, 4, 0, 2, 3, 1]
    assert K.random.categorical(tf.math.log([[0.1, 0.9]]), 5, seed=1).numpy().tolist() == [[0, 1, 0, 1, 1]]
    f = tf.function(lambda: K.random.normal((2,), seed=g))
    assert not np.array_equal(f().numpy(), f().numpy())  # the state advances inside a function too


def test_dtype_enum_values_and_unnamed_weights():
    assert tf.zeros(1, 1).dtype == tf.float32  # the guide's tf.zeros(1, 1): dtype=1 is DT_FLOAT
    assert tf.as_dtype(9) == tf.int64

    class Linear(layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], 2))
            self.b = self.add_weight(shape=(2,), initializer="zeros")

    K.backend.clear_session()
    la = Linear()
    la(tf.ones((1, 3)))
    assert [w.path for w in la.weights] == ["linear/variable", "linear/variable_1"]  # Keras's auto-names


def test_compile_without_loss_keeps_the_earlier_loss_and_metrics():
    class AddLoss(layers.Layer):
        def call(self, inputs):
            self.add_loss(1e-2 * tf.reduce_mean(inputs))
            return inputs

    inputs = K.Input(shape=(3,))
    model = K.Model(inputs, AddLoss()(inputs))
    x, y = np.full((2, 3), 0.5), np.zeros((2, 3))
    model.compile(optimizer="adam")  # only add_loss(): that is the loss
    assert model.fit(x, y, verbose=0).history["loss"] == [np.float32(0.005).item()]
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    model.compile(optimizer="sgd")  # TF 2.21: still mse, still mae
    assert model.fit(x, y, verbose=0).history == {"loss": [0.2549999952316284], "mae": [0.5]}


def test_recompiling_a_multi_output_model_without_metrics_keeps_its_per_output_metrics():
    # training_with_built_in_methods: compile(metrics={...}), then compile(loss=[...]) alone: TF still logs them
    K.utils.set_random_seed(0)
    a = K.Input(shape=(4,), name="a")
    model = K.Model(a, [layers.Dense(1, name="score_output")(a), layers.Dense(3, name="class_output")(a)])
    model.compile(optimizer="sgd", loss={"score_output": "mse", "class_output": "categorical_crossentropy"},
                  metrics={"score_output": ["mae"], "class_output": [K.metrics.CategoricalAccuracy()]})
    model.compile(optimizer="sgd", loss=[None, K.losses.CategoricalCrossentropy()])
    model.compile(optimizer="sgd", loss=["mse", "categorical_crossentropy"])
    x = np.linspace(0, 1, 32).reshape(8, 4).astype("float32")
    y = [np.linspace(0, 1, 8).reshape(8, 1).astype("float32"), np.eye(3)[np.arange(8) % 3].astype("float32")]
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert sorted(logs) == ["class_output_categorical_accuracy", "class_output_loss", "loss", "score_output_loss",
                            "score_output_mae"]


def test_summary_shows_question_mark_for_user_layers_without_output_shape(capsys):
    class Block(layers.Layer):
        def __init__(self):
            super().__init__()
            self.dense = layers.Dense(4)

        def call(self, x):
            return self.dense(x)

    class Net(K.Model):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.out = layers.Dense(2)

        def call(self, x):
            return self.out(self.block(x))

    K.backend.clear_session()
    net = Net()
    net(np.zeros((5, 3), "float32"))
    net.summary()
    rows = [r.split("│")[1:3] for r in capsys.readouterr().out.splitlines() if r.startswith("│")]
    assert [c.strip() for c in rows[0]] == ["block (Block)", "?"]
    assert [c.strip() for c in rows[1]] == ["dense_1 (Dense)", "(5, 2)"]


def test_custom_train_step_updates_compile_metrics_and_flattens_logs():
    # custom_train_step_in_tensorflow: `for metric in self.metrics: metric.update_state(y, y_pred)` and
    # `return {m.name: m.result() for m in self.metrics}` (compile_metrics' result is a dict)
    class CustomModel(K.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            self.optimizer.apply(tape.gradient(loss, self.trainable_variables), self.trainable_variables)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    inputs = K.Input(shape=(2,))
    model = CustomModel(inputs, layers.Dense(1, kernel_initializer="ones")(inputs))
    model.compile(optimizer=K.optimizers.SGD(0.0), loss="mse", metrics=["mae"])
    x, y = np.ones((4, 2), "float32"), np.zeros((4, 1), "float32")
    history = model.fit(x, y, epochs=1, batch_size=2, verbose=0).history
    assert history == {"loss": [4.0], "mae": [2.0]}  # TF 2.21: flat, sorted ('loss', 'mae')
    assert [m.name for m in model.metrics] == ["loss", "compile_metrics"]


def test_first_call_runs_call_symbolically_when_sublayers_are_unbuilt(capsys):
    # Keras 3's _maybe_build: a layer without build() whose sub-layers are unbuilt runs call() once in a scratch
    # graph first; the call's training default (False here) reaches the sub-layers.
    class Block(layers.Layer):
        def __init__(self):
            super().__init__()
            self.dense = layers.Dense(3)

        def call(self, x, training=None):
            print("block", tuple(x.shape), training)
            self.add_loss(tf.reduce_sum(x))
            return self.dense(x)

    class Net(K.Model):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def call(self, x, training=False):
            print("net", tuple(x.shape))
            return self.block(x, training=training)

    net = Net()
    net(tf.ones((2, 4)), training=True)
    assert len(net.losses) == 1 and float(net.losses[0]) == 8.0  # the scratch run's add_loss is dropped
    net(tf.ones((2, 4)))
    assert capsys.readouterr().out.splitlines() == [  # TF 2.21
        "net (2, 4)", "block (2, 4) True", "block (2, 4) True", "net (2, 4)", "block (2, 4) True",
        "net (2, 4)", "block (2, 4) False"]


def test_callbacks_guide_train_end_logs_and_no_lr_alias():
    # writing_your_own_callbacks: on_train_end gets the last epoch's logs, validation included; Keras 3's
    # optimizers have no `lr` (the guide's `hasattr(optimizer, "lr")` check raises its ValueError under TF 2.21)
    seen = {}

    class Keys(K.callbacks.Callback):
        def on_train_end(self, logs=None):
            seen["end"] = sorted(logs)

    model = K.Sequential([K.Input((2,)), layers.Dense(1)])
    model.compile(optimizer=K.optimizers.RMSprop(0.1), loss="mse", metrics=["mean_absolute_error"])
    model.fit(np.ones((8, 2)), np.ones((8, 1)), epochs=1, verbose=0, validation_split=0.5, callbacks=[Keys()])
    assert seen["end"] == ["loss", "mean_absolute_error", "val_loss", "val_mean_absolute_error"]
    assert not hasattr(model.optimizer, "lr")


def test_symbolic_masks_reach_the_functional_build():
    # understanding_masking_and_padding: the symbolic output of Embedding(mask_zero=True) carries a KerasTensor
    # mask, and a mask-consuming layer gets `mask` while the functional model is built
    inputs = K.Input(shape=(None,), dtype="int32")
    x = layers.Embedding(input_dim=10, output_dim=4, mask_zero=True)(inputs)
    assert x._keras_mask.shape == (None, None) and x._keras_mask.dtype == "bool"
    seen = []

    class TemporalSoftmax(layers.Layer):
        def call(self, inputs, mask=None):
            seen.append(mask is not None)
            m = tf.expand_dims(tf.cast(mask, "float32"), -1)
            return tf.exp(inputs) * m / tf.reduce_sum(inputs * m, axis=1, keepdims=True)

    model = K.Model(inputs, TemporalSoftmax()(layers.Dense(1)(x)))
    assert seen and all(seen)
    y = model(np.array([[1, 2, 0]]))
    assert y.shape == (1, 3, 1) and float(y[0, 2, 0]) == 0.0  # the padded step is masked out


def test_to_json_keeps_build_and_compile_config():
    # serialization_and_saving: TF 2.21's to_json() of an uncompiled Sequential ends with both
    import json

    text = K.Sequential([K.Input((32,)), layers.Dense(1)]).to_json()
    config = json.loads(text)
    assert list(config)[-2:] == ["build_config", "compile_config"]
    assert config["build_config"] == {"input_shape": [None, 32]} and config["compile_config"] == {}
    assert text.endswith('"build_config": {"input_shape": [null, 32]}, "compile_config": {}}')
    K.models.model_from_json(text)


class LoadedNet(K.Model):
    def __init__(self, units=2):
        super().__init__()
        self.units = units
        self.dense = layers.Dense(units)

    def call(self, x):
        return self.dense(x)

    def get_config(self):
        return {"units": self.units}


def test_loaded_subclassed_model_is_built_by_running_call_outside_its_scope(tmp_path):
    # serialization_and_saving: TF 2.21 loads a subclassed model (no build()) by running call() symbolically,
    # outside the model's name scope: its weights are dense_N/kernel, and they hold the saved values
    K.backend.clear_session()
    net = LoadedNet()
    x = np.ones((1, 3), "float32")
    y = net(x).numpy()
    assert [w.path for w in net.weights] == ["loaded_net/dense/kernel", "loaded_net/dense/bias"]
    net.save(tmp_path / "m.keras")
    loaded = K.models.load_model(tmp_path / "m.keras", custom_objects={"LoadedNet": LoadedNet})
    assert [w.path for w in loaded.weights] == ["dense_1/kernel", "dense_1/bias"]
    np.testing.assert_allclose(loaded(x).numpy(), y)


def test_data_layers_take_the_compute_dtype_in_a_graph_only():
    # transfer_learning: train_ds.map(lambda x, y: (Resizing(150, 150)(x), y)) of uint8 images gives float32
    # (Keras 3's DataLayer converts inputs in a TF graph); called eagerly, integer images keep their dtype
    x = np.arange(2 * 4 * 4 * 3).reshape(2, 4, 4, 3).astype("uint8")
    resize = layers.Resizing(2, 2)
    assert resize(x).dtype == tf.uint8
    ds = tf.data.Dataset.from_tensor_slices(x).map(resize)
    assert ds.element_spec == tf.TensorSpec((2, 2, 3), tf.float32)
    assert tf.function(layers.CenterCrop(2, 2))(tf.constant(x)).dtype == tf.float32
    # CategoryEncoding then sees float ids; Keras's int64 cast keeps them ids
    enc = tf.function(layers.CategoryEncoding(10, output_mode="multi_hot"))
    assert enc(tf.constant([[1, 2], [3, 3]])).numpy().sum(axis=1).tolist() == [2.0, 1.0]


def test_category_encoding_multi_hot_of_rank_3_reduces_axis_1():
    out = layers.CategoryEncoding(5, output_mode="multi_hot")(tf.constant(np.arange(24).reshape(2, 4, 3) % 5))
    assert out.shape == (2, 3, 5)  # TF 2.21: axis 1 is reduced, not the last input axis
    assert out.numpy()[0].tolist() == [[1, 1, 0, 1, 1], [1, 1, 1, 0, 1], [1, 1, 1, 1, 0]]


def test_legacy_h5_model_gets_the_loss_function_and_compiled_flag(tmp_path):
    # timeseries_classification_from_scratch: ModelCheckpoint("best_model.h5"), then load_model: TF 2.21's
    # model.loss is the function, its optimizer holds only iterations and learning_rate
    model = K.Sequential([K.Input((3,)), layers.Dense(2, activation="softmax")])
    assert model.compiled is False
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    assert model.compiled is True
    model.fit(np.ones((4, 3)), np.array([0, 1, 0, 1]), verbose=0)
    model.save(str(tmp_path / "m.h5"))
    loaded = K.models.load_model(str(tmp_path / "m.h5"))
    assert loaded.loss is K.losses.sparse_categorical_crossentropy and loaded.compiled
    assert len(loaded.optimizer.variables) == 2 and int(loaded.optimizer.iterations.numpy()) == 1


def test_variable_repr_in_a_tf_function_has_no_value():
    v = tf.Variable([1.0, 2.0])
    d = layers.Dense(1, name="dense")
    d.build((None, 2))
    seen = []

    @tf.function
    def f():
        seen.extend([repr(v), repr(d.kernel)])
        return v + 1

    f()
    assert seen == ["<tf.Variable 'Variable:0' shape=(2,) dtype=float32>",
                    "<Variable path=dense/kernel, shape=(2, 1), dtype=float32>"]
