"""tf.keras.mixed_precision: policies, autocast, LossScaleOptimizer; numbers pinned against Keras 3.15 / TF 2.21."""

import numpy as np
import pytest

import tapeflow as tf

keras = tf.keras
mp = keras.mixed_precision


@pytest.fixture(autouse=True)
def _reset_policy():
    yield
    mp.set_global_policy("float32")


def test_policy_properties_and_errors():
    p = mp.Policy("mixed_float16")
    assert (repr(p), p.name, p.compute_dtype, p.variable_dtype) == (
        '<DTypePolicy "mixed_float16">', "mixed_float16", "float16", "float32")
    assert mp.Policy("float64").compute_dtype == "float64"
    assert repr(mp.global_policy()) == '<DTypePolicy "float32">'
    with pytest.raises(ValueError, match="Cannot convert 'mixed_foo' to a mixed precision DTypePolicy"):
        mp.Policy("mixed_foo")
    with pytest.raises(NotImplementedError, match="bfloat16"):
        mp.set_global_policy("mixed_bfloat16")
    mp.set_global_policy("mixed_float16")
    assert mp.global_policy() == p and mp.dtype_policy() == p


def test_layer_dtypes_under_mixed_policy():
    mp.set_global_policy("mixed_float16")
    d = keras.layers.Dense(3)
    assert (d.dtype, d.compute_dtype, d.variable_dtype) == ("float32", "float16", "float32")
    assert repr(d.dtype_policy) == '<DTypePolicy "mixed_float16">' and d.get_config()["dtype"] == {
        "module": "keras", "class_name": "DTypePolicy", "config": {"name": "mixed_float16"}, "registered_name": None}
    x = keras.Input((4,))
    y = d(x)
    assert y.dtype == tf.float16 and d.kernel.dtype == tf.float32
    a = keras.layers.Activation("softmax", dtype="float32")
    assert a(y).dtype == tf.float32 and repr(a.dtype_policy) == '<DTypePolicy "float32">'
    out = d(np.ones((2, 4), "float32"))
    assert out.dtype == tf.float16
    m = keras.Model(x, y)
    m.compile("sgd", "mse")
    assert type(m.optimizer).__name__ == "LossScaleOptimizer" and m.optimizer.name == "loss_scale_optimizer"
    assert m.optimizer.initial_scale == 32768.0
    m.compile(keras.optimizers.SGD(0.1), "mse", auto_scale_loss=False)
    assert type(m.optimizer).__name__ == "SGD"


def test_gradients_reach_float32_variables():
    mp.set_global_policy("mixed_float16")
    d = keras.layers.Dense(2, kernel_initializer="ones")
    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape() as tape:
        y = d(x)
        loss = tf.reduce_sum(tf.cast(y, tf.float32))
    gk, gb = tape.gradient(loss, [d.kernel, d.bias])
    assert y.dtype == tf.float16 and gk.dtype == tf.float32 and gb.dtype == tf.float32
    np.testing.assert_array_equal(gk.numpy(), [[1.0, 1.0], [2.0, 2.0]])
    v = tf.Variable(1.0)  # plain tf.Variables are never autocast
    assert (d(x) * 0 + 1).dtype == tf.float16 and v.value().dtype == tf.float32


def _guide_model():
    # TF's mixed precision guide, smaller; weights pinned
    inputs = keras.Input(shape=(8,), name="digits")
    x = keras.layers.Dense(16, activation="relu", name="dense_1")(inputs)
    x = keras.layers.Dense(16, activation="relu", name="dense_2")(x)
    x = keras.layers.Dense(10, name="dense_logits")(x)
    outputs = keras.layers.Activation("softmax", dtype="float32", name="predictions")(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    rs = np.random.RandomState(0)
    model.set_weights([rs.randn(*w.shape).astype("float32") * 0.3 for w in model.get_weights()])
    return model, rs


def test_guide_fit_and_custom_loop_match_keras():
    mp.set_global_policy("mixed_float16")
    model, rs = _guide_model()
    model.compile(loss="sparse_categorical_crossentropy", optimizer=keras.optimizers.RMSprop(), metrics=["accuracy"])
    xt = rs.rand(64, 8).astype("float32")
    yt = rs.randint(0, 10, 64)
    p = model.predict(xt[:3], verbose=0)
    assert p.dtype == np.float32
    np.testing.assert_allclose(p[0], [0.1171, 0.0863, 0.088, 0.1858, 0.0483, 0.0444, 0.0629, 0.1595, 0.161, 0.0468],
                               atol=1e-4)
    h = model.fit(xt, yt, batch_size=16, epochs=3, verbose=0, shuffle=False)
    np.testing.assert_allclose(h.history["loss"], [2.3434, 2.3163, 2.3008], atol=2e-4)  # Keras 3.15's
    assert float(model.optimizer.dynamic_scale.numpy()) == 32768.0 and int(model.optimizer.iterations.numpy()) == 12
    np.testing.assert_allclose(model.get_weights()[0][:2, :4], [[0.5309, 0.1127, 0.2936, 0.664],
                                                                [0.4545, -0.0667, 0.0939, -0.2748]], atol=2e-4)
    optimizer = mp.LossScaleOptimizer(keras.optimizers.SGD(0.1))
    loss_object = keras.losses.SparseCategoricalCrossentropy()

    @tf.function
    def train_step(x, y):  # the guide's loop (TF-Keras 2's get_scaled_loss / get_unscaled_gradients)
        with tf.GradientTape() as tape:
            loss = loss_object(y, model(x))
            scaled_loss = optimizer.get_scaled_loss(loss)
        gradients = optimizer.get_unscaled_gradients(tape.gradient(scaled_loss, model.trainable_variables))
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    losses = [float(train_step(xt[:16], yt[:16])) for _ in range(3)]
    # Keras 3's scale_loss + apply gives the same numbers
    np.testing.assert_allclose(losses, [2.5009264945983887, 2.4440770149230957, 2.400629997253418], atol=2e-4)
    assert (float(optimizer.dynamic_scale.numpy()), int(optimizer.iterations.numpy())) == (32768.0, 3)
    np.testing.assert_allclose(model.get_weights()[0][:2, :4], [[0.529, 0.1119, 0.2936, 0.6263],
                                                                [0.4538, -0.0682, 0.0939, -0.2864]], atol=2e-4)


def test_dynamic_loss_scale_skips_and_grows_as_keras():
    mp.set_global_policy("mixed_float16")
    rs = np.random.RandomState(1)
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="tanh"),
                          keras.layers.Dense(1, dtype="float32")])
    m.set_weights([rs.randn(*w.shape).astype("float32") for w in m.get_weights()])
    x = rs.rand(8, 3).astype("float32")
    y = rs.rand(8, 1).astype("float32")
    opt = mp.LossScaleOptimizer(keras.optimizers.Adam(0.01), initial_scale=2.0**40, dynamic_growth_steps=2)

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(m(x) - y))
            scaled = opt.scale_loss(loss)
        opt.apply(tape.gradient(scaled, m.trainable_variables), m.trainable_variables)
        return loss

    fstep = tf.function(step)
    got = []
    for i in range(30):
        loss = step() if i < 15 else fstep()
        got.append((round(float(loss), 5), float(opt.dynamic_scale.numpy()), int(opt.iterations.numpy()),
                    int(opt.step_counter.numpy())))
    # Keras 3.15 / TF 2.21: 23 skipped steps halve the scale (float16 gradients overflow), then it
    # grows every 2 finite steps and halves again when they overflow
    expected = [(1.96453, 2.0 ** (39 - i), 0, 0) for i in range(23)] + [
        (1.96453, 131072.0, 1, 1), (1.82735, 262144.0, 2, 0), (1.69613, 131072.0, 2, 0),
        (1.69613, 131072.0, 3, 1), (1.57036, 262144.0, 4, 0), (1.45018, 131072.0, 4, 0),
        (1.45018, 131072.0, 5, 1)]
    assert got == expected
    np.testing.assert_allclose(m.get_weights()[0][0], [1.57477, -0.66144, -0.47798, -1.02309], atol=2e-5)
    assert len(opt.variables) == 14 and float(opt.learning_rate.numpy()) == pytest.approx(0.01)


def test_loss_scale_optimizer_argument_errors():
    with pytest.raises(ValueError, match="LossScaleOptimizer does not support `clipnorm`"):
        mp.LossScaleOptimizer(keras.optimizers.SGD(), clipnorm=1.0)
    with pytest.raises(ValueError, match="dynamic=False"):
        mp.LossScaleOptimizer(keras.optimizers.SGD(), dynamic=False)


def test_fit_scales_the_loss_with_loss_scale_factor():
    # Keras's train_step scales the loss and the optimizer unscales: same weights as without it
    def run(factor):
        m = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, kernel_initializer="ones")])
        m.compile(keras.optimizers.SGD(0.1, loss_scale_factor=factor), "mse")
        m.fit(np.ones((4, 2), "float32"), np.zeros((4, 1), "float32"), batch_size=2, epochs=1, verbose=0)
        return m.get_weights()[0]

    np.testing.assert_allclose(run(8.0), run(None), rtol=1e-6)
