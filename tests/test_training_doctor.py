"""tf.debugging.diagnose_training_step and tf.keras.callbacks.TrainingDoctor."""

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers
diagnose = tf.debugging.diagnose_training_step
RS = np.random.default_rng(0)
X = RS.normal(size=(32, 8)).astype("float32")
Y_INT = RS.integers(0, 3, size=(32,))
Y_REG = RS.normal(size=(32, 1)).astype("float32")
SCCE = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
MSE = tf.keras.losses.MeanSquaredError()


@pytest.fixture(autouse=True)
def _seeded():
    tf.keras.utils.set_random_seed(1)  # the same initial weights (and Dropout masks) every run


def classifier(*extra):
    return tf.keras.Sequential([tf.keras.Input((8,)), L.Dense(16, activation="relu"), *extra, L.Dense(3)])


def state_of(model, opt):
    return [v.numpy().copy() for v in model.variables] + [v.numpy().copy() for v in opt.variables]


def assert_unchanged(before, model, opt):
    after = state_of(model, opt)
    assert len(before) == len(after)
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)


def only(report, kind):
    found = [f for f in report.findings if f.kind == kind]
    assert found, f"expected a {kind} finding:\n{report}"
    return found[0]


# -- healthy setups report nothing ----------------------------------------------------------------------------------


def test_healthy_sequential_with_batchnorm_and_dropout_is_clean_and_unchanged():
    model = classifier(L.BatchNormalization(), L.Dropout(0.5))
    opt = tf.keras.optimizers.Adam(1e-3)
    # a real step first, so the optimizer has slot variables and iterations = 1
    with tf.GradientTape() as tape:
        loss = SCCE(Y_INT, model(X, training=True))
    opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    assert len(opt.variables) > 2 and int(opt.iterations.numpy()) == 1
    before = state_of(model, opt)
    report = diagnose(model, SCCE, opt, X, Y_INT)
    assert report.findings == [] and report.ok, str(report)
    assert "no problems found" in str(report)
    assert_unchanged(before, model, opt)


def test_healthy_functional_float64_and_schedule():
    inp = tf.keras.Input((8,), dtype="float64")
    h = L.Dense(16, activation="tanh", dtype="float64")(inp)
    out = L.Dense(1, dtype="float64")(h)
    model = tf.keras.Model(inp, out)
    sched = tf.keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    report = diagnose(model, MSE, tf.keras.optimizers.SGD(sched), X.astype("float64"), Y_REG.astype("float64"))
    assert report.findings == [], str(report)


def test_healthy_subclassed_model_with_embedding_indexed_slices():
    class Bag(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.emb = L.Embedding(50, 4)
            self.out = L.Dense(3)

        def call(self, ids):
            return self.out(tf.reduce_mean(self.emb(ids), axis=1))

    ids = RS.integers(0, 50, size=(16, 5))
    report = diagnose(Bag(), SCCE, tf.keras.optimizers.Adam(), ids, Y_INT[:16])
    assert report.findings == [], str(report)


def test_healthy_tf_module_and_float16_layer():
    class Linear(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(RS.normal(size=(8, 1)).astype("float32"), name="w")
            self.b = tf.Variable(np.zeros(1, "float32"), name="b")

        def __call__(self, x):
            return tf.matmul(x, self.w) + self.b

    mod = Linear()
    report = diagnose(mod, MSE, tf.keras.optimizers.SGD(0.01), X, Y_REG)
    assert report.findings == [], str(report)
    half = tf.keras.Sequential(
        [tf.keras.Input((8,), dtype="float16"), L.Dense(4, dtype="float16"), L.Dense(1, dtype="float16")]
    )
    report = diagnose(
        half,
        lambda yt, yp: tf.reduce_mean(tf.square(yt - yp)),
        tf.keras.optimizers.SGD(0.01),
        X.astype("float16"),
        Y_REG.astype("float16"),
    )
    assert report.ok and report.kinds == [], str(report)
    assert any("float16" in n for n in report.notes)


def test_healthy_mixed_precision_skips_the_finite_difference():
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = tf.keras.Sequential(
            [tf.keras.Input((8,)), L.Dense(16, activation="relu"), L.Dense(3), L.Activation("linear", dtype="float32")]
        )
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")
    report = diagnose(model, SCCE, tf.keras.optimizers.Adam(), X, Y_INT)
    assert report.findings == [], str(report)
    assert any("half-precision" in n for n in report.notes)


# -- one broken setup per kind --------------------------------------------------------------------------------------


def test_none_gradient_from_numpy_round_trip_in_call():
    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.a = L.Dense(16)
            self.b = L.Dense(3)

        def call(self, x):
            h = self.a(x)
            h = tf.constant(np.tanh(h.numpy()))  # "just a quick NumPy activation"
            return self.b(h)

    model = Net()
    report = diagnose(model, SCCE, tf.keras.optimizers.Adam(), X, Y_INT)
    f = only(report, "none_gradient")
    assert not report.ok
    assert sorted(f.variables) == sorted(v.path for v in model.a.trainable_variables)
    assert "left_via_numpy" in f.message and "test_training_doctor.py" in f.message
    assert "NumPy" in f.fix


def test_none_gradient_from_stop_gradient():
    class Frozen(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.enc = L.Dense(8)
            self.head = L.Dense(3)

        def call(self, x):
            return self.head(tf.stop_gradient(self.enc(x)))

    model = Frozen()
    f = only(diagnose(model, SCCE, tf.keras.optimizers.Adam(), X, Y_INT), "none_gradient")
    assert set(f.variables) == {v.path for v in model.enc.trainable_variables}
    assert "stop_gradient" in f.message and f.op == "StopGradient"


def test_zero_gradient_from_dead_relu_layer():
    model = tf.keras.Sequential(
        [
            tf.keras.Input((8,)),
            L.Dense(16, activation="relu", bias_initializer=tf.keras.initializers.Constant(-50.0)),
            L.Dense(3),
        ]
    )
    report = diagnose(model, SCCE, tf.keras.optimizers.Adam(), X, Y_INT)
    f = only(report, "zero_gradient")
    first = model.layers[0]
    assert first.kernel.path in f.variables and first.bias.path in f.variables
    assert any(g.op == "Relu" for g in report.findings if g.kind == "zero_gradient")
    assert model.layers[1].bias.path not in sum((g.variables for g in report.findings), [])


def test_nonfinite_gradient_names_the_op_log_of_relu_output():
    model = tf.keras.Sequential([tf.keras.Input((8,)), L.Dense(3, activation="relu")])

    def my_cross_entropy(y_true, y_pred):  # log of a ReLU output that is exactly 0 somewhere
        return -tf.reduce_mean(tf.math.log(y_pred + 0.0))

    report = diagnose(model, my_cross_entropy, tf.keras.optimizers.Adam(), X, Y_INT)
    f = only(report, "nonfinite_gradient")
    assert f.op == "Log" and "inf" in f.message.lower()
    assert "log" in f.fix


def test_nonfinite_gradient_only_in_backward_pass_sqrt_at_zero():
    model = tf.keras.Sequential([tf.keras.Input((8,)), L.Dense(2, kernel_initializer="zeros")])

    def euclidean(y_true, y_pred):  # distance is exactly 0 for rows already right: d sqrt(0) = inf
        return tf.reduce_mean(tf.sqrt(tf.reduce_sum(tf.square(y_true - y_pred), axis=-1)))

    report = diagnose(model, euclidean, tf.keras.optimizers.SGD(0.1), X, np.zeros((32, 2), "float32"))
    f = only(report, "nonfinite_gradient")
    assert "gradient" in f.message and f.variables
    assert f.op == "Sqrt"


def test_exploding_gradient_from_unscaled_regression_targets():
    price = (RS.uniform(1e5, 1e6, size=(32, 1))).astype("float32")  # house prices in dollars
    model = tf.keras.Sequential([tf.keras.Input((8,)), L.Dense(16, activation="relu"), L.Dense(1)])
    f = only(diagnose(model, MSE, tf.keras.optimizers.SGD(0.01), X * 1000, price), "exploding_gradient")
    assert "1000" in f.message and "normalize" in f.fix


def test_vanishing_gradient_in_deep_sigmoid_stack():
    model = tf.keras.Sequential(
        [tf.keras.Input((8,))] + [L.Dense(8, activation="sigmoid") for _ in range(30)] + [L.Dense(3)]
    )
    report = diagnose(model, SCCE, tf.keras.optimizers.SGD(0.01), X, Y_INT, finite_difference_entries=0)
    f = only(report, "vanishing_gradient")
    assert model.layers[0].kernel.path in f.variables and model.layers[-1].kernel.path not in f.variables
    assert f.severity == "warning" and "1e-10" in f.message


def test_not_in_var_list_for_a_head_the_loop_forgot():
    encoder = L.Dense(16, activation="relu")
    head = L.Dense(3)
    model = tf.keras.Sequential([tf.keras.Input((8,)), encoder, head])
    report = diagnose(model, SCCE, tf.keras.optimizers.Adam(), X, Y_INT, var_list=encoder.trainable_variables)
    f = only(report, "not_in_var_list")
    assert set(f.variables) == {head.kernel.path, head.bias.path} and not report.ok


def test_not_in_var_list_for_a_layer_in_an_untracked_dict():
    _HEADS = {}  # a cache the model cannot see

    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.body = L.Dense(16, activation="relu")

        def call(self, x):
            if "cls" not in _HEADS:
                _HEADS["cls"] = L.Dense(3)
            return _HEADS["cls"](self.body(x))

    model = Net()
    report = diagnose(model, SCCE, tf.keras.optimizers.Adam(), X, Y_INT)
    f = only(report, "not_in_var_list")
    assert set(f.variables) == {_HEADS["cls"].kernel.path, _HEADS["cls"].bias.path}
    assert "does not track" in f.message and "attribute" in f.fix


def test_foreign_variable_input_batch_in_var_list():
    model = classifier()
    images = tf.Variable(X)  # "so the tape can watch it"
    report = diagnose(
        model, SCCE, tf.keras.optimizers.Adam(), images, Y_INT, var_list=model.trainable_variables + [images]
    )
    f = only(report, "foreign_variable")
    assert f.severity == "error" and len(f.variables) == 1 and "pixels" in f.message
    assert "none_gradient" not in report.kinds


def test_zero_learning_rate_from_a_finished_cosine_schedule():
    model = classifier()
    opt = tf.keras.optimizers.SGD(tf.keras.optimizers.schedules.CosineDecay(0.1, decay_steps=100))
    opt.iterations.assign(500)  # resumed training past decay_steps
    report = diagnose(model, SCCE, opt, X, Y_INT)
    f = only(report, "zero_learning_rate")
    assert "CosineDecay at step 500" in f.message and "alpha" in f.fix
    assert int(opt.iterations.numpy()) == 500


def test_loss_not_connected_when_minimising_one_minus_accuracy():
    model = classifier()

    def error_rate(y_true, y_pred):
        hits = tf.equal(tf.argmax(y_pred, axis=1), tf.cast(y_true, tf.int64))
        return 1.0 - tf.reduce_mean(tf.cast(hits, tf.float32))

    report = diagnose(model, error_rate, tf.keras.optimizers.Adam(), X, Y_INT)
    assert report.kinds == ["loss_not_connected"], str(report)
    f = report.findings[0]
    assert "ArgMax" in f.message or "Equal" in f.message


def test_sum_reduction_of_keras_loss_and_reduce_sum():
    model = classifier()
    summed = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum")
    f = only(diagnose(model, summed, tf.keras.optimizers.Adam(), X, Y_INT), "sum_reduction")
    assert "2 times" in f.message and "reduce_mean" in f.fix
    r = diagnose(model, lambda yt, yp: tf.reduce_sum(tf.square(yt - yp)), tf.keras.optimizers.Adam(), X, Y_REG)
    assert "sum_reduction" in r.kinds


def test_gradient_mismatch_from_a_wrong_custom_gradient():
    @tf.custom_gradient
    def swish(x):
        s = tf.sigmoid(x)

        def grad(dy):
            return dy * s  # forgot the x * s * (1 - s) term

        return x * s, grad

    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.a = L.Dense(16)
            self.b = L.Dense(3)

        def call(self, x, training=False):
            return self.b(swish(self.a(x)))

    model = Net()
    report = diagnose(model, SCCE, tf.keras.optimizers.Adam(), X, Y_INT)
    f = only(report, "gradient_mismatch")
    assert set(f.variables) <= {v.path for v in model.a.trainable_variables} and f.variables
    assert "autodiff" in f.details[0] and "custom_gradient" in f.message


def test_gradient_mismatch_from_a_normalization_done_in_numpy():
    class Net(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = L.Dense(16, activation="relu")
            self.out = L.Dense(3)

        def call(self, x, training=False):
            h = self.hidden(x)
            return self.out(h / np.linalg.norm(h.numpy(), axis=1, keepdims=True))  # the norm is a constant to the tape

    model = Net()
    report = diagnose(model, SCCE, tf.keras.optimizers.Adam(), X, Y_INT)
    f = only(report, "gradient_mismatch")
    assert set(f.variables) <= {v.path for v in model.hidden.trainable_variables} and f.variables
    assert "np.linalg.norm" in f.message and "l2_normalize" in f.fix
    assert "none_gradient" not in report.kinds  # the gradient exists: it is just wrong


def test_dropout_in_training_mode_gives_no_false_mismatch():
    model = classifier(L.Dropout(0.5), L.Dense(8, activation="relu"), L.Dropout(0.3))
    report = diagnose(model, SCCE, tf.keras.optimizers.Adam(), X, Y_INT, finite_difference_entries=20)
    assert report.findings == [], str(report)
    # the same masks in every pass, so the central differences are reliable (a fresh mask per pass is noise)
    compared, _, picked, _ = report.stats["finite_difference_entries"].split()
    assert int(compared) >= int(picked) // 2 and int(picked) >= 6  # (without it: 0 compared)
    before = [v.numpy().copy() for v in model.variables]
    assert model(X, training=True).numpy().tolist() != model(X, training=True).numpy().tolist()  # still random
    np.testing.assert_array_equal(before[0], model.variables[0].numpy())


# -- bad input --------------------------------------------------------------------------------------------------


def test_bad_input_errors_are_clear():
    model = classifier()
    with pytest.raises(ValueError, match=r"calling the model on x \(float32\[32, 5\]\) failed"):
        diagnose(model, SCCE, tf.keras.optimizers.Adam(), X[:, :5], Y_INT)
    with pytest.raises(ValueError, match="scalar loss"):
        diagnose(model, lambda yt, yp: tf.square(yp), tf.keras.optimizers.Adam(), X, Y_INT)
    with pytest.raises(TypeError, match="loss_fn must be a callable"):
        diagnose(model, "mse", tf.keras.optimizers.Adam(), X, Y_INT)
    with pytest.raises(TypeError, match="optimizer must be"):
        diagnose(model, SCCE, "adam", X, Y_INT)
    with pytest.raises(TypeError, match=r"var_list\[0\] is a ndarray"):
        diagnose(model, SCCE, tf.keras.optimizers.Adam(), X, Y_INT, var_list=[np.ones(3)])
    with pytest.raises(ValueError, match="var_list is empty"):
        diagnose(model, SCCE, tf.keras.optimizers.Adam(), X, Y_INT, var_list=[])


# -- the Keras callback --------------------------------------------------------------------------------------


def test_training_doctor_callback_first_batch_and_nonfinite():
    model = classifier()
    model.compile(optimizer=tf.keras.optimizers.SGD(0.0), loss=SCCE)
    printed = []
    doc = tf.keras.callbacks.TrainingDoctor(print_fn=printed.append)
    model.fit(X, Y_INT, batch_size=16, epochs=1, verbose=0, callbacks=[doc])
    assert len(doc.reports) == 1 and doc.reports[0].kinds == ["zero_learning_rate"]
    assert printed[0].startswith("TrainingDoctor (first batch)")

    blowup = tf.keras.Sequential([tf.keras.Input((8,)), L.Dense(1)])
    blowup.compile(optimizer=tf.keras.optimizers.SGD(1e3), loss="mse")
    printed.clear()
    doc = tf.keras.callbacks.TrainingDoctor(print_fn=printed.append)
    history = blowup.fit(X * 100, Y_REG * 1e4, batch_size=4, epochs=1, verbose=0, callbacks=[doc], shuffle=False)
    assert not np.isfinite(history.history["loss"][0])
    assert len(doc.reports) == 2, printed  # the first batch, then the batch where the loss became NaN/Inf
    assert "exploding_gradient" in doc.reports[0].kinds
    assert "the loss became" in printed[1]
    # the second report diagnosed the weights from before the bad step, and fit's weights are kept
    assert doc.reports[1].kinds and not np.isfinite(blowup.layers[0].kernel.numpy()).all()
