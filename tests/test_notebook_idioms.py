"""Idioms of TF docs notebooks (deepdream, actor_critic, ...): behaviour pinned against TF 2.21."""

import numpy as np
import pytest

import tapeflow as tf


def test_numpy_function_as_a_decorator_eagerly_and_in_a_function():
    # reinforcement_learning/actor_critic: @tf.numpy_function(Tout=[...]) over the environment's step
    @tf.numpy_function(Tout=[tf.float32, tf.int32])
    def f(a):
        return a.astype(np.float32) * 2, np.array(3, np.int32)

    for out in (f(tf.constant([1, 2])), tf.function(lambda x: f(x))(tf.constant([1, 2]))):
        assert [o.dtype for o in out] == [tf.float32, tf.int32]
        np.testing.assert_array_equal(out[0].numpy(), [2.0, 4.0])
        assert int(out[1]) == 3


@pytest.mark.parametrize("call, message", [
    (lambda: tf.numpy_function(lambda a: a, [1]),
     "Missing required argument: 'Tout'\n  If using tf.numpy_function as a decorator, set `Tout`\n  **by name** "
     "above the function:\n  `@tf.numpy_function(Tout=tout)`"),
    (lambda: tf.numpy_function(Tout=tf.int32, inp=[1]),
     "Don't set the `inp` argument when using tf.numpy_function as a decorator (`func=None`)."),
    (lambda: tf.py_function(lambda a: a, Tout=tf.int32),
     "Missing argument `inp`:\n  You must set the `inp` argument (the list of arguments to the\n  function), unless "
     "you use `tf.py_function` as a decorator(`func=None`)."),
    (lambda: tf.py_function(lambda a: a, [1]),
     "Missing required argument: 'Tout'\n  If using tf.py_function as a decorator, set `Tout`\n  **by name** above "
     "the function:\n  `@tf.py_function(Tout=tout)`"),
])
def test_script_op_argument_errors(call, message):  # TF 2.21's texts
    with pytest.raises(TypeError) as e:
        call()
    assert str(e.value) == message


def test_roll_by_a_shift_known_at_run_time_and_its_gradient():
    # generative/deepdream: tf.roll(img, shift=tf.random.uniform(...)) inside a tf.function
    x = tf.reshape(tf.range(12.0), (3, 4))

    @tf.function(input_signature=[tf.TensorSpec([None, None]), tf.TensorSpec([2], tf.int32)])
    def f(img, s):
        with tf.GradientTape() as tape:
            tape.watch(img)
            r = tf.roll(img, shift=s, axis=[0, 1])
            loss = tf.reduce_sum(r * tf.reshape(tf.range(12.0), (3, 4)))
        return r, tape.gradient(loss, img)

    r, g = f(x, tf.constant([1, -1]))
    np.testing.assert_array_equal(r.numpy(), [[9, 10, 11, 8], [1, 2, 3, 0], [5, 6, 7, 4]])
    np.testing.assert_array_equal(g.numpy(), [[7, 4, 5, 6], [11, 8, 9, 10], [3, 0, 1, 2]])

    @tf.function
    def h(img):
        s = tf.random.uniform([], 0, 3, dtype=tf.int32)
        return tf.roll(img, s * 0 + 2, axis=1)

    np.testing.assert_array_equal(h(x).numpy(), [[2, 3, 0, 1], [6, 7, 4, 5], [10, 11, 8, 9]])


def test_array_batch_size_follows_steps_when_not_given():
    # guide/migrate/fault_tolerance: fit(x_train, steps_per_epoch=100) with no batch_size takes batches of
    # ceil(60000 / 100) (Keras 3's ArrayDataAdapter), and so do evaluate(steps=) and predict(steps=)
    seen = []

    class Rec(tf.keras.layers.Layer):
        def call(self, x):
            seen.append(x.shape[0])
            return x

    model = tf.keras.Sequential([tf.keras.Input((2,)), Rec(), tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse", run_eagerly=True)
    x, y = np.ones((60, 2), np.float32), np.ones((60, 1), np.float32)

    def batches(run):
        seen.clear()
        run()
        return [s for s in seen if s not in (None, 1)]  # (a build call's batch)

    fit = batches(lambda: model.fit(x, y, steps_per_epoch=4, epochs=2, verbose=0, validation_data=(x, y),
                                    validation_steps=3))
    assert fit == [15, 15, 15, 15, 20, 20, 20] * 2  # real Keras 3.15
    assert batches(lambda: model.evaluate(x, y, steps=7, verbose=0)) == [9] * 6 + [6]
    assert batches(lambda: model.predict(x, steps=2, verbose=0)) == [30, 30]
    assert batches(lambda: model.fit(x, y, steps_per_epoch=4, batch_size=10, verbose=0)) == [10] * 4


def test_session_run_hook_protocol_types():
    # guide/migrate/fault_tolerance, sessionrunhook_callback: hooks subclass tf.compat.v1.train.SessionRunHook
    tr = tf.compat.v1.train
    a = tr.SessionRunArgs("x")
    assert repr(a) == "SessionRunArgs(fetches='x', feed_dict=None, options=None)"
    v = tr.SessionRunValues(results=1, options=None, run_metadata=None)
    assert repr(v) == "SessionRunValues(results=1, options=None, run_metadata=None)"
    c = tr.SessionRunContext(a, None)
    assert (c.original_args, c.session, c.stop_requested) == (a, None, False)
    c.request_stop()
    assert c.stop_requested
    h = tr.SessionRunHook()
    calls = [h.begin(), h.before_run(c), h.after_run(c, v), h.end(None), h.after_create_session(None, None)]
    assert calls == [None] * 5
    assert not hasattr(tf.train, "SessionRunHook")  # TF 2's tf.train has none of them


@pytest.fixture
def optimizer_options():
    from tapeflow.framework import context

    saved, soft = dict(context.optimizer_options), context.soft_device_placement
    yield tf.config.optimizer
    context.optimizer_options.clear()
    context.optimizer_options.update(saved)
    context.soft_device_placement = soft


def test_optimizer_experimental_options_as_tf_lists_them(optimizer_options):
    # guide/graph_optimization; the dicts are TF 2.21's
    o = optimizer_options
    assert o.get_experimental_options() == {"disable_model_pruning": False, "disable_meta_optimizer": False}
    o.set_experimental_options({"constant_folding": False})
    o.set_experimental_options({"debug_stripper": True, "layout_optimizer": True, "bogus": 1})
    got = o.get_experimental_options()
    assert list(got.items()) == [("layout_optimizer", True), ("constant_folding", False), ("debug_stripper", True),
                                 ("disable_model_pruning", False), ("disable_meta_optimizer", False)]


def test_check_numerics_runs_in_a_function_unless_debug_stripper(optimizer_options):
    @tf.function
    def f(x):
        tf.debugging.check_numerics(x, "Bad!")  # output unused: still run (a stateful op, as TF's)
        return x

    with pytest.raises(tf.errors.InvalidArgumentError, match="Bad! : Tensor had Inf values"):
        f(tf.constant(float("inf")))
    optimizer_options.set_experimental_options({"debug_stripper": True})

    @tf.function
    def g(x):
        tf.debugging.check_numerics(x, "Bad!")
        tf.debugging.Assert(x < 0, [x])
        tf.debugging.assert_less(x, 0.0)
        return tf.debugging.check_numerics(x, "Bad2") + 1

    assert float(g(tf.constant(float("inf")))) == float("inf")  # TF: every check stripped


def test_soft_device_placement(optimizer_options):
    assert tf.config.get_soft_device_placement() is True
    with tf.device("/GPU:0"):
        assert float(tf.constant(1.0) + 1) == 2.0
    tf.config.set_soft_device_placement(False)
    assert tf.config.get_soft_device_placement() is False
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        with tf.device("/device:GPU:2"):
            tf.constant(1.0)
    assert str(e.value) == ("Could not satisfy device specification '/job:localhost/replica:0/task:0/device:GPU:2'. "
                            "enable_soft_placement=0. Supported device types [CPU]. All available devices "
                            "[/job:localhost/replica:0/task:0/device:CPU:0].")
    with tf.device("/job:localhost/replica:0/task:0/device:CPU:0"):
        tf.constant(1.0)
    tf.debugging.set_log_device_placement(True)
    tf.debugging.set_log_device_placement(False)


def test_autograph_len_of_a_tensor_in_a_function():
    # generative/deepdream: `if not tf.cast(len(xs), bool)` on a slice of unknown length
    @tf.function(input_signature=[tf.TensorSpec([None], tf.int32)])
    def f(v):
        xs = v[:-1]
        if not tf.cast(len(xs), bool):
            xs = tf.constant([0])
        return xs, len(tf.zeros([3, 2])), len(v) + 1

    xs, n, m = f(tf.constant([5]))
    assert (xs.numpy().tolist(), n, int(m)) == ([0], 3, 2)  # n: the static size, a Python int in the graph
    xs, n, m = f(tf.constant([5, 6, 7]))
    assert (xs.numpy().tolist(), int(m)) == ([5, 6], 4)

    @tf.function
    def h():
        return len(tf.TensorArray(tf.float32, size=3))

    assert int(h()) == 3

    @tf.function
    def k(v):
        return len(v)

    with pytest.raises(ValueError, match="len requires a non-scalar tensor"):
        k(tf.constant(1))


def test_tape_in_a_loop_body_differentiates_a_tensor_watched_from_outside():
    # generative/deepdream's TiledGradients: a tape per tile in a `for` over a tensor, watching the rolled image
    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
    def f(img):
        g = tf.zeros_like(img)
        for x in tf.range(0, tf.shape(img)[1], 2):
            with tf.GradientTape() as tape:
                tape.watch(img)
                tile = img[:, x:x + 2]
                loss = tf.reduce_sum(tile * tile)
            g = g + tape.gradient(loss, img)
        return g

    x = tf.reshape(tf.range(12.0), (3, 4))
    np.testing.assert_array_equal(f(x).numpy(), 2 * x.numpy())  # TF 2.21's

    @tf.function
    def h(v):
        out = tf.constant(0.0)
        if v > 0:
            with tf.GradientTape() as tape:
                tape.watch(v)
                y = v * v * 3.0
            out = tape.gradient(y, v)
        return out

    assert float(h(tf.constant(2.0))) == 12.0


def test_tensor_array_in_a_loop_of_elements_shaped_at_run_time():
    # reinforcement_learning/actor_critic: rewards of a tf.numpy_function (unknown shape) written per step
    @tf.numpy_function(Tout=[tf.float32, tf.int32])
    def step(a):
        return np.full(2, a, np.float32), np.array(int(a) % 3, np.int32)

    @tf.function
    def run(n):
        rewards = tf.TensorArray(dtype=tf.int32, size=0, dynamic_size=True)
        states = tf.TensorArray(dtype=tf.float32, size=0, dynamic_size=True)
        for t in tf.range(n):
            s, r = step(t)
            rewards = rewards.write(t, r)
            states = states.write(t, s)
            if r == 2:
                break
        return rewards.stack(), states.stack(), tf.reduce_sum(rewards.stack())

    r, s, total = run(tf.constant(5))  # TF 2.21's values
    assert r.numpy().tolist() == [0, 1, 2] and s.numpy().tolist() == [[0, 0], [1, 1], [2, 2]] and int(total) == 3
    r, s, total = run(tf.constant(1))
    assert r.numpy().tolist() == [0] and s.numpy().tolist() == [[0, 0]] and int(total) == 0


def test_feature_column_numeric_column_as_tf():
    # the guide/migrate notebooks describe their input with tf1.feature_column.numeric_column (TF 2.21's reprs)
    c = tf.compat.v1.feature_column.numeric_column("x", shape=[28, 28])
    assert repr(c) == "NumericColumn(key='x', shape=(28, 28), default_value=None, dtype=tf.float32, normalizer_fn=None)"
    assert (c.name, c.shape, c.dtype) == ("x", (28, 28), tf.float32)
    assert tf.feature_column.numeric_column is tf.compat.v1.feature_column.numeric_column
    assert repr(tf.feature_column.numeric_column("a", shape=(2, 1), default_value=3, dtype=tf.int32)) == \
        "NumericColumn(key='a', shape=(2, 1), default_value=((3,), (3,)), dtype=tf.int32, normalizer_fn=None)"
    assert tf.feature_column.numeric_column("a", shape=3, default_value=0.0).default_value == (0.0, 0.0, 0.0)
    assert repr(c.parse_example_spec) == "{'x': FixedLenFeature(shape=(28, 28), dtype=tf.float32, default_value=None)}"
    for kwargs, exc, msg in [
            ({"key": 1}, ValueError, "key must be a string. Got: type <class 'int'>. Given key: 1."),
            ({"key": "a", "shape": [0]}, ValueError, "shape dimensions must be greater than 0. shape: (0,), key: a"),
            ({"key": "a", "dtype": tf.string}, ValueError,
             "dtype must be convertible to float. dtype: <dtype: 'string'>, key: a"),
            ({"key": "a", "normalizer_fn": 3}, TypeError, "normalizer_fn must be a callable. Given: 3"),
            ({"key": "a", "shape": [2], "default_value": [1, 2, 3]}, ValueError,
             "The shape of default_value must be equal to given shape. default_value: [1, 2, 3], shape: (2,), key: a")]:
        with pytest.raises(exc) as e:
            tf.feature_column.numeric_column(**kwargs)
        assert str(e.value) == msg
    with pytest.raises(NotImplementedError, match="tf.feature_column.sequence_numeric_column"):
        tf.feature_column.sequence_numeric_column  # noqa: B018


@pytest.mark.parametrize("make", [lambda: tf.keras.Input(shape=20), lambda: tf.keras.layers.InputLayer(shape=20),
                                  lambda: tf.keras.Input(batch_shape=20)])
def test_input_of_an_int_shape_raises_as_keras_3(make):
    # guide/migrate/model_mapping's tf.keras.Input(shape=(20)): Keras 3 takes no int for a shape
    with pytest.raises(ValueError) as e:
        make()
    assert str(e.value) == "Cannot convert '20' to a shape."


def test_slicing_a_tensor_of_rank_known_at_run_time_only():
    # reinforcement_learning/actor_critic: rewards[::-1] of a TensorArray stacked from tf.numpy_function outputs
    @tf.function
    def f(n):
        r = tf.numpy_function(lambda k: np.arange(int(k), dtype=np.float32), [n], tf.float32)
        return r[::-1], r[0], r[1:3] * 2, r[..., None][:, 0], r[n - 2]

    out = [o.numpy().tolist() for o in f(tf.constant(4))]
    assert out == [[3, 2, 1, 0], 0, [2, 4], [0, 1, 2, 3], 2]  # TF 2.21's
