"""tf.vectorized_map: fn traced once and batched by per-op rules (tapeflow/graph/pfor.py).

Values are checked against tf.map_fn / a Python loop; TF 2.21's own numbers, warnings and errors are
pinned as literals (run with /opt/tfvenv/bin/python)."""

import logging

import numpy as np
import pytest

import tapeflow as tf

X = np.arange(12, dtype=np.float32).reshape(3, 4)


def _loop(fn, *elems):
    return np.stack([np.asarray(fn(*(tf.constant(e[i]) for e in elems))) for i in range(len(elems[0]))])


def _no_fallback(caplog):
    assert not [r for r in caplog.records if "while_loop" in r.getMessage()]


@pytest.mark.parametrize("fn", [
    lambda r: tf.sin(r) * 2.0 + r,
    lambda r: tf.reduce_sum(r * r),
    lambda r: tf.reduce_max(r) * r - tf.reduce_mean(r, keepdims=True),
    lambda r: tf.reshape(r, (2, 2)),
    lambda r: tf.transpose(tf.reshape(r, (2, 2))),
    lambda r: tf.gather(r, [3, 0, 0]),
    lambda r: tf.concat([r[1:], r[:1]], 0),
    lambda r: tf.matmul(tf.reshape(r, (2, 2)), tf.constant([[1.0, 2.0], [3.0, 4.0]])),
    lambda r: tf.nn.softmax(r),
], ids=["elementwise", "sum", "max_mean", "reshape", "transpose", "gather", "slice_concat", "matmul", "softmax"])
def test_matches_loop(fn, caplog):
    with caplog.at_level(logging.DEBUG, logger="tapeflow"):
        got = tf.vectorized_map(fn, tf.constant(X))
    np.testing.assert_allclose(got.numpy(), _loop(fn, X), rtol=1e-6)
    np.testing.assert_allclose(got.numpy(), tf.map_fn(fn, tf.constant(X)).numpy(), rtol=1e-6)
    _no_fallback(caplog)


def test_nested_structures_and_captured_variable():
    w = tf.Variable(np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2))

    def fn(e):
        a, (b, c) = e["a"], e["bc"]
        return {"y": tf.matmul(a[None], w)[0] + b}, (tf.reduce_sum(c), c * 2)

    elems = {"a": tf.constant(X), "bc": (tf.constant([1.0, 2.0, 3.0]), tf.constant(X[:, :2]))}
    got = tf.vectorized_map(fn, elems)
    want = tf.map_fn(fn, elems, fn_output_signature=({"y": tf.float32}, (tf.float32, tf.float32)))
    for g, m in zip(tf.nest.flatten(got), tf.nest.flatten(want)):
        np.testing.assert_allclose(g.numpy(), m.numpy(), rtol=1e-5)
    assert got[0]["y"].shape == (3, 2)


def test_first_dimension_one_broadcasts_and_batch_of_one():
    got = tf.vectorized_map(lambda e: e[0] + e[1], (tf.constant(X), tf.ones((1, 4))))
    np.testing.assert_array_equal(got.numpy(), X + 1)  # TF: the same
    one = tf.vectorized_map(lambda r: r * 2.0, tf.constant(X[:1]))
    assert one.shape == (1, 4)
    np.testing.assert_array_equal(one.numpy(), X[:1] * 2)


def test_empty_batch():
    out = tf.vectorized_map(lambda r: r * 2.0, tf.zeros((0, 3)))
    assert out.shape == (0, 3) and out.dtype == tf.float32  # TF 2.21: shape=(0, 3)


def test_mismatched_leading_dims():
    # TF 2.21: InvalidArgumentError "indices[2] = 2 is not in [0, 2)" from its gather of row 2.
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[2\] = 2 is not in \[0, 2\)"):
        tf.vectorized_map(lambda e: e[0] + e[1][:4], (tf.constant(X), tf.zeros((2, 5))))


def test_outer_tape_gradient():
    x = tf.constant(X)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(tf.vectorized_map(lambda r: tf.sin(r) * tf.reduce_sum(r), x))
    # TF 2.21's values
    want = [[7.891888618469238, 5.133702278137207, -0.6049926280975342, -4.048066139221191],
            [-15.718315124511719, 4.902411937713623, 19.78558921813965, 15.24769401550293],
            [-5.671535968780518, -34.76548385620117, -32.027252197265625, 0.025641903281211853]]
    np.testing.assert_allclose(t.gradient(y, x).numpy(), want, rtol=1e-5, atol=1e-5)


def test_inside_tf_function():
    @tf.function
    def f(x):
        return tf.vectorized_map(lambda r: tf.reduce_max(r) * r, x)

    np.testing.assert_allclose(f(tf.constant(X)).numpy(), X.max(1, keepdims=True) * X)


def test_per_example_gradients_advanced_autodiff():
    # guide/advanced_autodiff: per-example gradients with a GradientTape inside fn.
    w = tf.Variable(np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2))

    def grad(r):
        with tf.GradientTape() as t:
            y = tf.reduce_sum(tf.tanh(tf.matmul(r[None], w)) ** 2)
        return t.gradient(y, w)

    got = tf.vectorized_map(grad, tf.constant(X / 10))
    np.testing.assert_allclose(got.numpy(), _loop(grad, X / 10), rtol=1e-5, atol=1e-7)


def test_dp_sgd_per_example_gradients_keras(caplog):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    y = np.array([0, 1, 1, 0])
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(5, activation="tanh"),
                                 tf.keras.layers.Dense(2)])
    model.set_weights([np.linspace(-1, 1, 15, dtype=np.float32).reshape(3, 5), np.linspace(0, .4, 5, dtype=np.float32),
                       np.linspace(-.5, .5, 10, dtype=np.float32).reshape(5, 2), np.array([.1, -.1], np.float32)])
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def per_example(xy):
        xi, yi = xy
        with tf.GradientTape() as tape:
            loss = loss_fn(yi[None], model(xi[None]))
        return tape.gradient(loss, model.trainable_variables)

    with caplog.at_level(logging.DEBUG, logger="tapeflow"):
        g = tf.vectorized_map(per_example, (tf.constant(x), tf.constant(y)))
    _no_fallback(caplog)
    assert [tuple(v.shape) for v in g] == [(4, 3, 5), (4, 5), (4, 5, 2), (4, 2)]
    # TF 2.21's values
    np.testing.assert_allclose(g[1].numpy(), [
        [0.055567, 0.050061, 0.042347, 0.033959, 0.026088], [-0.053317, -0.051032, -0.048122, -0.044744, -0.041063],
        [-0.00652, -0.011894, -0.020962, -0.034773, -0.052225], [0.012068, 0.016106, 0.021195, 0.027386, 0.034556]],
        atol=2e-6)
    np.testing.assert_allclose(g[3].numpy(), [[-0.517698, 0.517698], [0.499924, -0.499924], [0.654916, -0.654916],
                                              [-0.560445, 0.560445]], atol=2e-6)
    for i in range(4):
        loop = per_example((tf.constant(x[i]), tf.constant(y[i])))
        for a, b in zip(g, loop):
            np.testing.assert_allclose(a.numpy()[i], b.numpy(), rtol=1e-5, atol=1e-6)


def test_random_ops_draw_per_row(caplog):
    # TF 2.21 vectorizes stateful random ops (no fallback): every row gets its own draw.
    tf.random.set_seed(0)
    with caplog.at_level(logging.DEBUG, logger="tapeflow"):
        u = tf.vectorized_map(lambda r: r + tf.random.uniform(()), tf.constant(X)).numpy() - X
        n = tf.vectorized_map(lambda r: tf.random.normal((2,)), tf.constant(X)).numpy()
    _no_fallback(caplog)
    assert n.shape == (3, 2) and len(np.unique(n)) == 6
    np.testing.assert_allclose(u, u[:, :1] * np.ones((1, 4)), atol=1e-6)  # one draw per row, broadcast over it
    assert len(np.unique(np.round(u[:, 0], 6))) == 3 and ((u >= 0) & (u < 1)).all()


def test_generator_falls_back_to_loop(caplog):
    # TF 2.21 has no converter for a tf.random.Generator's ops: it warns and loops (each row its own draw).
    g = tf.random.Generator.from_seed(1)
    with caplog.at_level(logging.WARNING, logger="tapeflow"):
        out = tf.vectorized_map(lambda r: r + g.normal(()), tf.constant(X)).numpy() - X
    assert any(r.getMessage().startswith("Using a while_loop for converting") for r in caplog.records)
    assert len(np.unique(np.round(out[:, 0], 5))) == 3


def _strings_fn(r):
    return tf.strings.length(tf.strings.as_string(r))


def test_fallback_to_while_loop_warns_as_tf(caplog):
    with caplog.at_level(logging.WARNING, logger="tapeflow"):
        out = tf.vectorized_map(_strings_fn, tf.constant(X))
    np.testing.assert_array_equal(out.numpy(), [[8, 8, 8, 8], [8, 8, 8, 8], [8, 8, 9, 9]])  # TF 2.21's values
    # TF 2.21 logs: "Using a while_loop for converting AsString cause there is no registered converter for this op."
    assert "Using a while_loop for converting AsString cause there is no registered converter for this op." in [
        r.getMessage() for r in caplog.records]


def test_no_fallback_raises_tf_value_error():
    with pytest.raises(ValueError, match="No pfor vectorization defined for AsString") as e:
        tf.vectorized_map(_strings_fn, tf.constant(X), fallback_to_while_loop=False)
    assert str(e.value).endswith("Consider enabling the fallback_to_while_loop option to pfor, which may run slower.")
