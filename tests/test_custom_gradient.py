"""tf.custom_gradient and tf.recompute_grad (values and errors pinned from TF 2.21)."""

import numpy as np
import pytest

import tapeflow as tf


def _x_y():
    return tf.constant(2.0), tf.constant(3.0)


def test_basic_and_numerically_stable_example():
    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))

        return tf.math.log(1 + e), grad

    x = tf.constant(100.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = log1pexp(x)
    assert t.gradient(y, x).numpy() == 1.0
    assert log1pexp.__name__ == "log1pexp"


def test_wrong_gradient_count_names_the_function():
    @tf.custom_gradient
    def f(x, y):
        def grad(dz):
            return dz * y

        return x * y, grad

    x, y = _x_y()
    with tf.GradientTape() as t:
        t.watch([x, y])
        z = f(x, y)
    with pytest.raises(ValueError, match=r"custom_gradient function expected to return 2 gradients, but returned 1 "
                                         r"instead.*'f'"):
        t.gradient(z, [x, y])


def test_variables_rules():
    x, _ = _x_y()
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def g(x):
        def grad(dz):
            return dz * v

        return x * v, grad

    with pytest.raises(TypeError, match="grad_fn must accept keyword argument 'variables', since function uses "
                                        "variables"):
        with tf.GradientTape() as t:
            t.watch(x)
            g(x)

    @tf.custom_gradient
    def h(x):
        def grad(dz, variables=None):
            return dz * v * 10, [dz * x * 10]

        return x * v, grad

    with tf.GradientTape() as t:
        t.watch(x)
        z = h(x)
    gx, gv = t.gradient(z, [x, v])
    assert (gx.numpy(), gv.numpy()) == (20.0, 20.0)

    @tf.custom_gradient
    def bad(x):
        def grad(dz, variables=None):
            return dz * v, []

        return x * v, grad

    with tf.GradientTape() as t:
        t.watch(x)
        z = bad(x)
    with pytest.raises(ValueError, match="Must return gradient for each variable from @custom_gradient grad_fn."):
        t.gradient(z, [x, v])


def test_replaces_forward_only_when_an_input_is_watched():
    x, _ = _x_y()

    @tf.custom_gradient
    def k(a):
        def grad(dz):
            return dz * 100.0

        return a * x, grad

    with tf.GradientTape() as t:
        t.watch(x)
        z = k(tf.constant(5.0))  # input not watched: the recorded forward is used
    assert t.gradient(z, x).numpy() == 5.0
    with tf.GradientTape() as t:
        t.watch(x)
        z = k(x)
    assert t.gradient(z, x).numpy() == 100.0


def test_multiple_outputs_and_none_gradients():
    @tf.custom_gradient
    def two(x, y):
        def grad(da, db):
            return da + db, None

        return (x * y, x + y), grad

    x, y = _x_y()
    with tf.GradientTape() as t:
        t.watch([x, y])
        a, b = two(x, y)
        s = a + 2 * b
    gx, gy = t.gradient(s, [x, y])
    assert gx.numpy() == 3.0 and gy is None
    with tf.GradientTape() as t:
        t.watch([x, y])
        a, b = two(x, y)
    gx, gy = t.gradient(a, [x, y])  # the unused output's upstream is zeros
    assert gx.numpy() == 1.0 and gy is None

    @tf.custom_gradient
    def lst(x):
        def grad(dy):
            return [dy * 2]

        return x * 1.0, grad

    with tf.GradientTape() as t:
        t.watch(x)
        z = lst(x)
    assert t.gradient(z, x).numpy() == 2.0


def test_higher_order_and_custom_of_custom():
    x, _ = _x_y()

    @tf.custom_gradient
    def cube(x):
        def grad(dy):
            return dy * 3 * x * x

        return x ** 3, grad

    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = cube(x)
        g = t1.gradient(y, x)
    assert (g.numpy(), t2.gradient(g, x).numpy()) == (12.0, 12.0)

    @tf.custom_gradient
    def outer(x):
        @tf.custom_gradient
        def inner_grad(dy):
            def gg(ddy):
                return ddy * 7.0

            return dy * 5.0, gg

        def grad(dy):
            return inner_grad(dy)

        return x * 1.0, grad

    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = outer(x)
        g = t1.gradient(y, x)
    assert g.numpy() == 5.0 and t2.gradient(g, x) is None
    # The inner custom gradient is used when its input is watched.
    dy = tf.constant(1.0)
    with tf.GradientTape() as t:
        t.watch(dy)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = outer(x)
        g = t1.gradient(y, x, output_gradients=dy)
    assert t.gradient(g, dy).numpy() == 7.0


def test_forward_mode():
    x = tf.constant(3.0)

    @tf.custom_gradient
    def k(a):
        def grad(dz):
            return dz * 100.0

        return a * a, grad

    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        z = k(x)
    assert acc.jvp(z).numpy() == 6.0  # TF: the forward ops already gave a tangent

    @tf.custom_gradient
    def k2(a):
        def grad(dz):
            return dz * 100.0

        return tf.stop_gradient(a * a), grad

    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        z = k2(x)
    assert acc.jvp(z).numpy() == 100.0  # JVP derived from grad_fn


def test_jacobian_through_custom_gradient():
    @tf.custom_gradient
    def sq(x):
        def grad(dy):
            return dy * 2.0 * x

        return tf.stop_gradient(x * x), grad

    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = sq(x)
    np.testing.assert_array_equal(t.jacobian(y, x).numpy(), np.diag([2.0, 4.0, 6.0]))
    np.testing.assert_array_equal(t.jacobian(y, x, experimental_use_pfor=False).numpy(), np.diag([2.0, 4.0, 6.0]))


def _saved_bytes(tape):
    total = 0
    for rec in tape._tape.records:
        for group in (rec.inputs or (), rec.outputs or ()):
            total += sum(t._value.nbytes for t in group if t is not None)
    return total


def test_recompute_grad_values_variables_and_memory():
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])

    def blk(h):
        return tf.tanh(h @ w)

    rb = tf.recompute_grad(blk)
    h0 = tf.constant([[0.1, 0.2]])
    with tf.GradientTape() as t:
        t.watch(h0)
        y = tf.reduce_sum(rb(h0))
    gh, gw = t.gradient(y, [h0, w])
    np.testing.assert_allclose(gh.numpy(), [[1.4746883, 3.5841162]], rtol=1e-6)
    np.testing.assert_allclose(gw.numpy(), [[0.06347396, 0.04199743], [0.12694792, 0.08399487]], rtol=1e-6)

    rng = np.random.default_rng(0)
    wd = tf.Variable(rng.standard_normal((64, 64)))

    def deep(h):
        for _ in range(6):
            h = tf.tanh(h @ wd)
        return h

    x = tf.constant(rng.standard_normal((32, 64)))
    grads, saved = {}, {}
    for name, fn in (("plain", deep), ("recompute", tf.recompute_grad(deep))):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(fn(x))
        saved[name] = (_saved_bytes(t), len(t._tape.records))
        grads[name] = t.gradient(y, [x, wd])
    assert saved["plain"][0] >= 6 * 32 * 64 * 8  # every tanh output and matmul input is kept
    assert saved["recompute"][0] == 0 and saved["recompute"][1] <= 3
    for a, b in zip(grads["plain"], grads["recompute"]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


def test_recompute_grad_in_forward_mode_raises_as_tf():
    rb = tf.recompute_grad(lambda h: tf.tanh(h) * 2.0)
    h0 = tf.constant([[0.1, 0.2]])
    with pytest.raises(NotImplementedError, match="recompute_grad tried to transpose grad of"):
        with tf.autodiff.ForwardAccumulator(h0, tf.constant([[1.0, 1.0]])):
            rb(h0)


def test_inside_tf_function_tapes_use_the_custom_gradient():
    @tf.custom_gradient
    def k(a):
        def grad(dz):
            return dz * 100.0

        return a * a, grad

    @tf.function
    def h(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(k(x))
        return t.gradient(y, x)

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = h(tf.constant([1.0, 2.0]))
    np.testing.assert_array_equal(out.numpy(), [100.0, 100.0])


def test_decorated_method_binds_self():
    class Layer:
        scale = 3.0

        @tf.custom_gradient
        def call(self, x):
            def grad(dy):
                return dy * self.scale * 10.0

            return x * self.scale, grad

    layer = Layer()
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = layer.call(x)
    assert y.numpy() == 6.0 and t.gradient(y, x).numpy() == 30.0
    assert Layer.call.__name__ == "call"
