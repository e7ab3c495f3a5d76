"""tape.jacobian / tape.batch_jacobian: vectorized path vs loop path vs
finite differences, TF's shapes, structures and errors (pinned from TF 2.21)."""

import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.eager import batching
from tapeflow.ops import registry

rng = np.random.default_rng(0)


def _fd_jacobian(f, x, eps=1e-6):
    """Central finite differences of f (NumPy in, NumPy out) at x."""
    y0 = np.asarray(f(x))
    jac = np.zeros(y0.shape + x.shape)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = eps
        jac[(...,) + idx] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps)
    return jac


def _both(fn, x, **kw):
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = fn(x)
    return t.jacobian(y, x, **kw), t.jacobian(y, x, experimental_use_pfor=False, **kw)


W = tf.constant(rng.standard_normal((5, 4)))
B = tf.constant(rng.standard_normal(5))

FUNCTIONS = {
    "mlp": lambda x: tf.tanh(tf.matmul(x, W, transpose_b=True) + B),
    "reduce_axis": lambda x: tf.reduce_sum(tf.sin(x) * x, axis=1, keepdims=True) + tf.reduce_mean(x ** 3),
    "reshape_slice": lambda x: tf.reshape(tf.exp(x), (12,))[2:9:2],
    "transpose_concat": lambda x: tf.concat([tf.transpose(x), tf.square(tf.transpose(x))], axis=1),
    "stack_unstack": lambda x: tf.stack(tf.unstack(x, axis=1)[::-1], axis=0) * 2.0,
    "split_tile": lambda x: tf.tile(tf.split(x, 2, axis=1)[1], [2, 1]),
    "gather": lambda x: tf.gather(x, [2, 0, 2], axis=1) + tf.gather(x, [1, 1, 0])[:, :3],
    "max_prod": lambda x: tf.reduce_max(x, axis=0) * tf.reduce_prod(x + 3.0, axis=1)[0],
    "where_relu": lambda x: tf.where(x > 0.1, tf.nn.relu(x), tf.sigmoid(x)),
    "matmul_both": lambda x: tf.matmul(x, x, transpose_a=True),
    "broadcast": lambda x: tf.broadcast_to(tf.reduce_sum(x, axis=0), (2, 4)) / (x[0:1] ** 2 + 1.0),
    "cumsum": lambda x: tf.cumsum(x * x, axis=1, reverse=True),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_vectorized_matches_loop_and_finite_differences(name):
    fn = FUNCTIONS[name]
    xv = rng.standard_normal((3, 4)) + 0.05
    x = tf.constant(xv)
    jv, jl = _both(fn, x)
    y_shape = tuple(fn(x).shape)
    assert jv.shape == y_shape + (3, 4)
    np.testing.assert_allclose(jv.numpy(), jl.numpy(), rtol=1e-12, atol=1e-12)
    fd = _fd_jacobian(lambda a: fn(tf.constant(a)).numpy(), xv)
    np.testing.assert_allclose(jv.numpy(), fd, rtol=1e-6, atol=1e-6)


def test_vectorized_path_is_one_backward_pass():
    # The gradient rule of Tanh runs once (batched), not once per element.
    calls = []
    spec = registry.get_gradient("Tanh")
    orig = spec.fn

    def counting(op, g):
        calls.append(1)
        return orig(op, g)

    x = tf.constant(rng.standard_normal(6))
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = tf.tanh(x * 2.0)
    for rec in t._tape.records:
        if rec.type == "Tanh":
            rec.grad_fn = counting
    t.jacobian(y, x)
    assert len(calls) == 1
    t.jacobian(y, x, experimental_use_pfor=False)
    assert len(calls) == 1 + 6


def test_structures_and_values_pinned_from_tf():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    j = t.jacobian(y, {"a": x})
    assert set(j) == {"a"} and j["a"].shape == (2, 2, 2, 2)
    assert j["a"].dtype == tf.float32
    np.testing.assert_array_equal(j["a"].numpy().reshape(4, 4), np.diag([2.0, 4.0, 6.0, 8.0]))
    assert [a.shape for a in t.jacobian(y, [x])] == [(2, 2, 2, 2)]
    assert t.jacobian(x, x).shape == (2, 2, 2, 2)
    np.testing.assert_array_equal(t.jacobian(x, x).numpy().reshape(4, 4), np.eye(4))


def test_unconnected_and_integer_targets():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    z = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, z])
        y = x * x
        yi = tf.cast(tf.round(z), tf.int32)
    assert t.jacobian(y, z) is None
    zero = t.jacobian(y, z, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert zero.shape == (2, 2, 2) and not zero.numpy().any()
    assert t.jacobian(y, z, unconnected_gradients="zero").shape == (2, 2, 2)
    assert t.jacobian(yi, z) is None
    # batch_jacobian gives zeros, never None, for an unconnected source (TF).
    bj = t.batch_jacobian(y, tf.ones((2, 3)))
    assert bj.shape == (2, 2, 3) and not bj.numpy().any()


def test_variable_source():
    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as t:
        y = v * v
    np.testing.assert_array_equal(t.jacobian(y, v).numpy(), [[2.0, 0.0], [0.0, 4.0]])


def test_non_persistent_rules():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    with pytest.raises(RuntimeError, match="persistent=True to compute the jacobian"):
        t.jacobian(y, x, experimental_use_pfor=False)
    assert t.jacobian(y, x).shape == (2, 2)
    with pytest.raises(RuntimeError, match="non-persistent GradientTape"):
        t.jacobian(y, x)


def test_batch_jacobian_values_and_errors():
    xv = rng.standard_normal((4, 3))
    x = tf.constant(xv)
    w = tf.constant(rng.standard_normal((3, 2)))
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = tf.tanh(x @ w)
    bj = t.batch_jacobian(y, x)
    bl = t.batch_jacobian(y, x, experimental_use_pfor=False)
    assert bj.shape == (4, 2, 3)
    full = t.jacobian(y, x).numpy()
    expected = np.stack([full[i, :, i, :] for i in range(4)])
    np.testing.assert_allclose(bj.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(bl.numpy(), expected, rtol=1e-12)
    with pytest.raises(ValueError, match=r"must have rank at least 2"):
        t.batch_jacobian(tf.reduce_sum(y, 1), x)
    with pytest.raises(ValueError, match=r"Need first dimension of target shape \(\(4, 2\)\) and source shape "
                                         r"\(\(3, 3\)\) to match."):
        t.batch_jacobian(y, tf.ones((3, 3)))


def test_hessian_by_nested_tapes_and_jacobian_of_jacobian():
    n = 5
    wv = rng.standard_normal((n, n))
    xv = rng.standard_normal(n)
    w = tf.constant(wv)
    x = tf.constant(xv)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = tf.reduce_sum(tf.square(tf.tanh(tf.linalg.matvec(w, x))))
        g = t1.gradient(y, x)
    h = t2.jacobian(g, x).numpy()
    u = np.tanh(wv @ xv)
    expected = wv.T @ np.diag(2 * (1 - u ** 2) * (1 - 3 * u ** 2)) @ wv
    np.testing.assert_allclose(h, expected, rtol=1e-10, atol=1e-12)
    # Jacobian inside an outer tape: the vectorized computation is recorded.
    with tf.GradientTape(persistent=True) as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = tf.reduce_sum(tf.square(tf.tanh(tf.linalg.matvec(w, x))))
        g = t1.gradient(y, x)
        with tf.GradientTape() as t0:
            t0.watch(x)
            f = tf.tanh(tf.linalg.matvec(w, x))
        jf = t0.jacobian(f, x)
    np.testing.assert_allclose(t2.jacobian(g, x).numpy(), expected, rtol=1e-10, atol=1e-12)
    # d/dx sum(J) vs finite differences of sum(J)
    dsum = t2.gradient(jf, x).numpy()
    fd = _fd_jacobian(lambda a: ((1 - np.tanh(wv @ a) ** 2)[:, None] * wv).sum(), xv)
    np.testing.assert_allclose(dsum, fd, rtol=1e-6, atol=1e-6)


def test_op_without_batching_rule_warns_once_and_loops():
    op = registry.get_op("Cumsum")
    saved = op.batch
    op.batch = None
    batching._warned.discard("Cumsum")
    try:
        x = tf.constant(rng.standard_normal((2, 3)) + 2.0)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            jv, jl = _both(lambda a: tf.cumsum(a, axis=1) * 1.5, x)
            _both(lambda a: tf.cumsum(a, axis=1), x)
        msgs = [str(m.message) for m in w if "batching rule" in str(m.message)]
        assert len(msgs) == 1 and "'Cumsum'" in msgs[0]
        np.testing.assert_allclose(jv.numpy(), jl.numpy(), rtol=1e-12)
    finally:
        op.batch = saved


def test_sparse_gradient_through_gather_axis0():
    params = tf.constant(rng.standard_normal((4, 2)))
    with tf.GradientTape(persistent=True) as t:
        t.watch(params)
        y = tf.gather(params, [3, 1, 3]) * 2.0
    jv = t.jacobian(y, params).numpy()
    jl = t.jacobian(y, params, experimental_use_pfor=False).numpy()
    np.testing.assert_allclose(jv, jl)
    assert jv.shape == (3, 2, 4, 2) and jv[0, 1, 3, 1] == 2.0


# -- registry-wide: the vectorized path agrees with the loop for every op -------

def _spec_params():
    from tests.op_specs import all_specs

    return [pytest.param(s, id=s.id) for s in all_specs()]


def _float_outputs(out):
    outs = out if isinstance(out, (list, tuple)) else [out]
    return [o for o in outs if o is not None and o.dtype.is_floating]


@pytest.mark.parametrize("spec", _spec_params())
def test_every_op_vectorizes_like_the_loop(spec):
    # Jacobian of every float output, and Jacobian of the gradient (so the
    # ops inside gradient rules are batched too), vectorized vs per-row.
    r = np.random.default_rng(7)
    arrays = [a.make(r) for a in spec.args]
    tensors = [tf.constant(a) for a in arrays]
    sources = [t for t, a in zip(tensors, spec.args) if a.diff and t.dtype.is_floating]
    if not sources:
        pytest.skip("no differentiable input")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with tf.GradientTape(persistent=True) as outer:
            outer.watch(sources)
            with tf.GradientTape() as inner:
                inner.watch(sources)
                outs = _float_outputs(spec.fn(*tensors))
                if not outs:
                    pytest.skip("no float output")
                total = tf.add_n([tf.reduce_sum(o * o) for o in outs])
            grads = inner.gradient(total, sources)
        # (a first-order spec's op has no second derivative, e.g. TF's CTCLoss and CropAndResize raise LookupError)
        for y in outs + ([g for g in grads if g is not None] if spec.order > 1 else []):
            jv = outer.jacobian(y, sources, experimental_use_pfor=True)
            jl = outer.jacobian(y, sources, experimental_use_pfor=False)
            for a, b in zip(jv, jl):
                assert (a is None) == (b is None)
                if a is not None:
                    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-12, err_msg=spec.id)


def test_unvectorizable_gradient_rule_falls_back_to_loop_with_warning():
    @tf.custom_gradient
    def f(x):
        def grad(dy):
            # .numpy() on the upstream gradient cannot run on a batch of them.
            return tf.constant(dy.numpy() * 3.0)

        return x * 3.0, grad

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:  # non-persistent: the fallback still works
        t.watch(x)
        y = f(x)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        j = t.jacobian(y, x)
    assert any("vectorized jacobian failed" in str(m.message) for m in w)
    np.testing.assert_array_equal(j.numpy(), 3.0 * np.eye(2))


def test_tf_function_calls_are_vectorized_inline():
    w = tf.constant(rng.standard_normal((4, 4)))
    v = tf.Variable(rng.standard_normal(4))

    @tf.function
    def g(x):
        return tf.tanh(tf.linalg.matvec(w, x)) * v

    x = tf.constant(rng.standard_normal(4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tf.GradientTape(persistent=True) as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                s = tf.reduce_sum(g(x) ** 2)
            grad = t1.gradient(s, x)
        h = t2.jacobian(grad, x)
        jx, jv = t2.jacobian(g(x), [x, v])  # g(x) outside the tape: unconnected
    assert not [m for m in caught if "batching rule" in str(m.message)]
    assert jx is None and jv is None
    np.testing.assert_allclose(h.numpy(), t2.jacobian(grad, x, experimental_use_pfor=False).numpy(), rtol=1e-12)
