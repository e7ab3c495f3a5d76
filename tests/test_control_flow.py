"""tf.cond, tf.switch_case, tf.while_loop: eager Python, graph ops, gradients."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf


def test_cond_eager_runs_one_branch():
    calls = []

    def t():
        calls.append("t")
        return tf.constant(1.0)

    def f():
        calls.append("f")
        return tf.constant(2.0)

    assert tf.cond(tf.constant(True), t, f).numpy() == 1.0
    assert calls == ["t"]


def test_cond_in_function_is_an_if_op_with_both_branches():
    @tf.function
    def f(x):
        return tf.cond(x > 0, lambda: x * x, lambda: -x)

    assert f(tf.constant(3.0)).numpy() == 9.0
    assert f(tf.constant(-2.0)).numpy() == 2.0
    assert f.experimental_get_tracing_count() == 1
    text = f.get_concrete_function(tf.TensorSpec([], tf.float32)).as_text()
    assert "= If(" in text


def test_cond_nested_structures():
    @tf.function
    def f(x):
        return tf.cond(x > 0, lambda: {"a": x, "b": (x, 1.0)}, lambda: {"a": -x, "b": (x * 2, 2.0)})

    out = f(tf.constant(-1.0))
    assert out["a"].numpy() == 1.0 and out["b"][0].numpy() == -2.0 and out["b"][1].numpy() == 2.0


def test_cond_branch_dtype_mismatch_raises():
    @tf.function
    def f(x):
        return tf.cond(x > 0, lambda: x, lambda: tf.cast(x, tf.int32))

    with pytest.raises(TypeError, match="same dtypes"):
        f(tf.constant(1.0))


def test_cond_gradients_both_ways():
    @tf.function
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.cond(x > 0, lambda: x * x * x, lambda: -x)
        return t.gradient(y, x)

    assert g(tf.constant(2.0)).numpy() == 12.0
    assert g(tf.constant(-2.0)).numpy() == -1.0

    @tf.function
    def f(x):
        return tf.cond(x > 0, lambda: x * x * x, lambda: -x)

    x = tf.constant(2.0)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = f(x)
        d1 = t1.gradient(y, x)
    assert d1.numpy() == 12.0 and t2.gradient(d1, x).numpy() == 12.0


def test_cond_variable_gradient_and_assign_in_branch():
    v = tf.Variable(3.0)
    counter = tf.Variable(0)

    @tf.function
    def f(x):
        with tf.GradientTape() as t:
            y = tf.cond(x > 0, lambda: v * x, lambda: v * v)
        tf.cond(x > 0, lambda: counter.assign_add(1), lambda: counter.assign_add(10))
        return t.gradient(y, v)

    assert f(tf.constant(2.0)).numpy() == 2.0
    assert f(tf.constant(-2.0)).numpy() == 6.0
    assert counter.numpy() == 11


def test_switch_case_eager_and_graph():
    fns = [lambda: tf.constant(10), lambda: tf.constant(20), lambda: tf.constant(30)]
    assert tf.switch_case(tf.constant(1), fns).numpy() == 20
    assert tf.switch_case(tf.constant(9), fns).numpy() == 30  # out of range: last branch

    @tf.function
    def f(i, x):
        return tf.switch_case(i, [lambda: x, lambda: x * 2.0], default=lambda: x * 3.0)

    assert f(tf.constant(1), tf.constant(5.0)).numpy() == 10.0
    assert f(tf.constant(-1), tf.constant(5.0)).numpy() == 15.0


def test_while_loop_eager():
    i, acc = tf.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, a * 2.0), [tf.constant(0), tf.constant(1.0)])
    assert (i.numpy(), acc.numpy()) == (4, 16.0)
    out = tf.while_loop(lambda i: i < 5, lambda i: i + 2, [tf.constant(0)])
    assert isinstance(out, list) and out[0].numpy() == 6


def test_while_loop_graph_maximum_iterations_and_structures():
    @tf.function
    def f(n):
        def body(i, state):
            return i + 1, {"s": state["s"] + tf.cast(i, tf.float32), "p": state["p"] * 2.0}

        return tf.while_loop(lambda i, s: i < n, body, (tf.constant(0), {"s": tf.constant(0.0), "p": tf.constant(1.0)}),
                             maximum_iterations=3)

    i, st = f(tf.constant(10))
    assert (i.numpy(), st["s"].numpy(), st["p"].numpy()) == (3, 3.0, 8.0)
    i, st = f(tf.constant(2))
    assert (i.numpy(), st["s"].numpy()) == (2, 1.0)


def test_while_loop_shape_invariants():
    @tf.function
    def grow(x):
        return tf.while_loop(lambda a: tf.reduce_sum(tf.ones_like(a)) < 4.0, lambda a: tf.concat([a, a], 0), [x])

    with pytest.raises(ValueError, match="shape_invariants"):
        grow(tf.constant([1.0]))

    @tf.function
    def grow2(x):
        return tf.while_loop(lambda a: tf.reduce_sum(tf.ones_like(a)) < 4.0, lambda a: tf.concat([a, a], 0), [x],
                             shape_invariants=[tf.TensorShape([None])])

    np.testing.assert_array_equal(grow2(tf.constant([1.0]))[0].numpy(), [1.0, 1.0, 1.0, 1.0])


def test_while_loop_gradients_first_second_and_variables():
    @tf.function
    def wg(x):
        with tf.GradientTape() as t:
            t.watch(x)
            _, y = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x), [tf.constant(0), tf.constant(1.0)])
        return y, t.gradient(y, x)

    y, dy = wg(tf.constant(2.0))
    assert (y.numpy(), dy.numpy()) == (8.0, 12.0)
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        d = wg(x)[1]
    assert t.gradient(d, x).numpy() == 12.0  # d/dx 3x^2

    v = tf.Variable(2.0)

    @tf.function
    def wv():
        with tf.GradientTape() as t:
            _, y = tf.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, a * v), [0, tf.constant(1.0)])
        return t.gradient(y, v)

    assert wv().numpy() == 32.0  # 4 v^3


def test_while_loop_gradient_matches_unrolled():
    @tf.function
    def f(x):
        with tf.GradientTape() as t:
            t.watch(x)
            _, y = tf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, tf.sin(a) * x + 0.1),
                                 [tf.constant(0), x])
            loss = tf.reduce_sum(y)
        return t.gradient(loss, x)

    x0 = tf.constant(np.array([0.3, -0.7, 1.1]))
    with tf.GradientTape() as t:
        t.watch(x0)
        a = x0
        for _ in range(5):
            a = tf.sin(a) * x0 + 0.1
        loss = tf.reduce_sum(a)
    np.testing.assert_allclose(f(x0).numpy(), t.gradient(loss, x0).numpy(), rtol=1e-12)


def test_cond_graph_text_shows_branches():
    @tf.function
    def f(x):
        return tf.cond(x > 0, lambda: x * x, lambda: -x)

    assert f.get_concrete_function(tf.TensorSpec([], tf.float32)).as_text() == (
        "def f(%0: float32[]) {\n"
        "  %1: bool[] = Greater(%0, float32[](0.0))\n"
        "  %2: float32[] = If(%1, %0) {branches=[cond_false_fn, cond_true_fn], num_outputs=1}\n"
        "  return (%2)\n"
        "}\n"
        "\n"
        "def cond_false_fn(%0: float32[]) {\n"
        "  %1: float32[] = Neg(%0)\n"
        "  return (%1)\n"
        "}\n"
        "\n"
        "def cond_true_fn(%0: float32[]) {\n"
        "  %1: float32[] = Mul(%0, %0)\n"
        "  return (%1)\n"
        "}"
    )


def test_nested_function_cond_in_while_gradients_match_eager():
    v = tf.Variable(1.5)

    @tf.function
    def inner(x):
        return tf.sin(x * v)

    @tf.function
    def outer(x):
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)

            def body(i, a):
                return i + 1, tf.cond(a > 0.5, lambda: inner(a) * 2.0, lambda: a + v)

            _, y = tf.while_loop(lambda i, a: i < 4, body, [0, x])
        return y, t.gradient(y, x), t.gradient(y, v)

    def eager(x):
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            a = x
            for _ in range(4):
                a = tf.sin(a * v) * 2.0 if float(a) > 0.5 else a + v
        return a, t.gradient(a, x), t.gradient(a, v)

    for x0 in (0.3, 0.9, -1.0):
        got, want = outer(tf.constant(x0)), eager(tf.constant(x0))
        np.testing.assert_array_equal([g.numpy() for g in got], [w.numpy() for w in want])


def test_hessians_through_cond():
    @tf.function
    def h(x):
        y = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.reduce_sum(x ** 3), lambda: tf.reduce_sum(x ** 2))
        return tf.hessians(y, x)[0]

    np.testing.assert_array_equal(h(tf.constant([1.0, 2.0])).numpy(), [[6.0, 0.0], [0.0, 12.0]])
    np.testing.assert_array_equal(h(tf.constant([-1.0, -2.0])).numpy(), [[2.0, 0.0], [0.0, 2.0]])


# -- tf.TensorArray ------------------------------------------------------------

def test_tensor_array_eager_and_errors():
    ta = tf.TensorArray(tf.float32, size=3)
    for i in range(3):
        ta = ta.write(i, tf.constant(float(i)))
    np.testing.assert_array_equal(ta.stack().numpy(), [0.0, 1.0, 2.0])
    assert ta.read(1).numpy() == 1.0 and ta.size().numpy() == 3
    with pytest.raises(tf.errors.InvalidArgumentError):
        ta.write(5, 1.0)
    np.testing.assert_array_equal(tf.TensorArray(tf.float32, size=2).unstack([[1.0], [2.0]]).read(1).numpy(), [2.0])


def test_tensor_array_in_autograph_loop_with_gradient():
    @tf.function
    def rnn(xs, h0, w):
        with tf.GradientTape() as t:
            t.watch(w)
            ta = tf.TensorArray(tf.float32, size=xs.shape[0])
            h = h0
            for i in tf.range(xs.shape[0]):
                h = tf.tanh(w * h + tf.gather(xs, i))
                ta = ta.write(i, h)
            out = tf.reduce_sum(ta.stack())
        return out, t.gradient(out, w)

    xs, h0, w = tf.constant([0.1, 0.2, -0.3, 0.4]), tf.constant(0.5), tf.constant(0.7)
    with tf.GradientTape() as t:
        t.watch(w)
        h, hs = h0, []
        for i in range(4):
            h = tf.tanh(w * h + xs[i])
            hs.append(h)
        out = tf.reduce_sum(tf.stack(hs))
    got = rnn(xs, h0, w)
    np.testing.assert_allclose([got[0].numpy(), got[1].numpy()], [out.numpy(), t.gradient(out, w).numpy()],
                               rtol=1e-6)


def test_tensor_array_dynamic_size_in_while():
    @tf.function
    def squares(n):
        ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
        i = tf.constant(0)
        while i < n:
            ta = ta.write(i, i * i)
            i += 1
        return ta.stack()

    np.testing.assert_array_equal(squares(tf.constant(5)).numpy(), [0, 1, 4, 9, 16])
    np.testing.assert_array_equal(squares(tf.constant(2)).numpy(), [0, 1])



@pytest.mark.parametrize("signature", [None, [tf.TensorSpec([None], tf.float32)]])
def test_gradient_through_a_growing_tensor_array_and_a_growing_loop_variable(signature):
    # The buffer of a dynamic_size TensorArray changes shape every iteration, so the loop's saved history
    # is one array a step; the gradient replays it (this raised IndexError). Values from TF 2.21.
    @tf.function(input_signature=signature)
    def cumul(x):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        s = tf.constant(0.0)
        for i in tf.range(tf.shape(x)[0]):
            s += x[i] * x[i]
            ta = ta.write(i, s)
        return ta.stack()

    x = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as outer:
        with tf.GradientTape() as t:
            y = tf.reduce_sum(cumul(x) ** 2)
        g = t.gradient(y, x)
    np.testing.assert_allclose(g.numpy(), [80.0, 152.0, 168.0])
    assert outer.gradient(tf.reduce_sum(g), x) is None  # TF: the TensorArray's ops end the second order

    @tf.function
    def grow(x):
        acc = tf.zeros([0])
        for i in tf.range(3):
            tf.autograph.experimental.set_loop_options(shape_invariants=[(acc, tf.TensorShape([None]))])
            acc = tf.concat([acc, x * tf.cast(i + 1, tf.float32)], 0)
        return tf.reduce_sum(acc**2)

    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as t:
        y = grow(v)
    np.testing.assert_allclose([y.numpy(), *t.gradient(y, v).numpy()], [70.0, 28.0, 56.0])

def test_tensor_array_written_in_one_branch_of_an_if():
    # A TensorArray leaves each branch of a traced `if` as its buffer (this raised "unsupported type
    # TensorArray"); a branch that never writes takes the element shape of the other's. Values from TF 2.21.
    @tf.function
    def pick(x, c):
        ta = tf.TensorArray(tf.float32, size=2)
        if c:
            ta = ta.write(0, x)
        else:
            ta = ta.write(1, x * 2)
        return ta.stack()

    @tf.function
    def squares_above_one(x):
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        n = 0
        for v in x:
            if v > 1.0:
                ta = ta.write(n, v * v)
                n += 1
        return ta.stack()

    x = tf.Variable([1.0, 2.0, 3.0])
    for c, value, grad in [(True, [2.0, 0.0], [0.0, 3.0, 0.0]), (False, [0.0, 4.0], [0.0, 10.0, 0.0])]:
        with tf.GradientTape() as t:
            y = pick(x[1], tf.constant(c))
            loss = tf.reduce_sum(y * [3.0, 5.0])
        np.testing.assert_allclose(y.numpy(), value)
        np.testing.assert_allclose(t.gradient(loss, x).numpy(), grad)
    with tf.GradientTape() as t:
        y = squares_above_one(x)
        loss = tf.reduce_sum(y)
    np.testing.assert_allclose(y.numpy(), [4.0, 9.0])
    np.testing.assert_allclose(t.gradient(loss, x).numpy(), [0.0, 4.0, 6.0])


# -- map_fn / scan / foldl / foldr / case ------------------------------------------

_X = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]


def _hof(x):
    return (tf.map_fn(lambda r: tf.reduce_sum(r * r), x), tf.scan(lambda a, v: a + v, x),
            tf.scan(lambda a, v: a + v, x[:, 0], reverse=True), tf.foldl(lambda a, v: a * v, x[:, 1]),
            tf.foldr(lambda a, v: a - v, x[:, 0]), tf.scan(lambda a, v: a * v, x[:, 0], initializer=tf.constant(2.0)))


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_map_fn_scan_folds(mode):
    fn = tf.function(_hof) if mode == "function" else _hof
    m, s, r, fl, fr, si = fn(tf.constant(_X))
    np.testing.assert_array_equal(m.numpy(), [5.0, 25.0, 61.0])
    np.testing.assert_array_equal(s.numpy(), [[1.0, 2.0], [4.0, 6.0], [9.0, 12.0]])
    np.testing.assert_array_equal(r.numpy(), [9.0, 8.0, 5.0])
    assert (fl.numpy(), fr.numpy()) == (48.0, 1.0)
    np.testing.assert_array_equal(si.numpy(), [2.0, 6.0, 30.0])


def test_map_fn_structures_and_gradient():
    out = tf.map_fn(lambda t: (t[0] * 2.0, t[1] + 1), (tf.constant([1.0, 2.0]), tf.constant([1, 2])))
    np.testing.assert_array_equal(out[0].numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(out[1].numpy(), [2, 3])

    @tf.function
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(tf.map_fn(lambda r: tf.reduce_sum(tf.sin(r)), x))
        return t.gradient(y, x)

    np.testing.assert_allclose(g(tf.constant(_X)).numpy(), np.cos(np.array(_X, np.float32)), rtol=1e-6)


def test_case_first_true_predicate():
    @tf.function
    def f(x):
        return tf.case([(x < 0, lambda: -x), (x < 10, lambda: x * 2.0)], default=lambda: x)

    assert [f(tf.constant(v)).numpy() for v in (-1.0, 3.0, 30.0)] == [1.0, 6.0, 30.0]
    assert tf.case([(tf.constant(False), lambda: 1), (tf.constant(True), lambda: 2)], default=lambda: 3) == 2
