"""tf.autodiff.ForwardAccumulator: JVPs vs reverse mode, nesting in all
orders, variables, stop_gradient, errors (pinned from TF 2.21)."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.ops import registry

rng = np.random.default_rng(1)


def test_basic_jvp_pinned_from_tf():
    x = tf.constant([1.0, 2.0])
    acc = tf.autodiff.ForwardAccumulator(x, tf.constant([3.0, 4.0]))
    with acc:
        y = x * x
        with pytest.raises(ValueError, match="Accumulator is already recording."):
            with acc:
                pass
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [6.0, 16.0])
    assert acc.jvp(y).dtype == tf.float32
    np.testing.assert_array_equal(acc.jvp(x).numpy(), [3.0, 4.0])
    assert acc.jvp(tf.constant(1.0)) is None
    assert acc.jvp(tf.constant(1.0), unconnected_gradients="zero").numpy() == 0.0
    out = acc.jvp([y, {"a": y}])
    np.testing.assert_array_equal(out[1]["a"].numpy(), [6.0, 16.0])


def test_structure_and_dtype_errors():
    x = tf.constant([1.0, 2.0])
    with pytest.raises(ValueError, match="same nested structure|same number of elements|structure"):
        tf.autodiff.ForwardAccumulator([x], [x, x])
    with pytest.raises(ValueError, match="Tensor conversion requested dtype float32 for Tensor with dtype int32"):
        tf.autodiff.ForwardAccumulator(x, tf.constant([1, 2]))
    xi = tf.constant([1, 2])
    with tf.autodiff.ForwardAccumulator(xi, tf.constant([1, 2])) as acc:
        z = xi * 2
    assert acc.jvp(z) is None


def test_only_ops_inside_context_and_stop_gradient():
    x = tf.constant([1.0, 2.0])
    acc = tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 1.0]))
    before = x * 3.0
    with acc:
        inside = x * 3.0
        stopped = tf.stop_gradient(x) * 3.0
    after = x * 3.0
    assert acc.jvp(before) is None and acc.jvp(after) is None and acc.jvp(stopped) is None
    np.testing.assert_array_equal(acc.jvp(inside).numpy(), [3.0, 3.0])


def _ops_cases():
    a = tf.constant(rng.standard_normal((3, 4)))
    b = tf.constant(rng.standard_normal((4, 2)))
    c = tf.constant(rng.uniform(0.5, 2.0, (3, 4)))
    return {
        "mlp": lambda x: tf.reduce_sum(tf.tanh(x @ b) * tf.sigmoid(x @ b), axis=0),
        "div_log": lambda x: tf.math.log(c + x * x) / (c + 1.0) - tf.sqrt(c + x * x),
        "trig": lambda x: tf.sin(x) * tf.cos(a) + tf.exp(-x),
        "shape_ops": lambda x: tf.concat([tf.reshape(x, (4, 3)), tf.transpose(x)[:, :3] * 2.0], axis=0),
        "pow_max": lambda x: tf.pow(c + x * x, 1.5) + tf.maximum(x, a),  # double-VJP path
        "reduce": lambda x: tf.reduce_mean(x, axis=1) + tf.reduce_max(x * a, axis=1),
        "gather_select": lambda x: tf.where(x[:2] > 0, tf.gather(x, [2, 0]), 0.5 * tf.gather(x, [1, 1])),
    }


@pytest.mark.parametrize("name", sorted(_ops_cases()))
def test_jvp_matches_reverse_mode_jacobian(name):
    fn = _ops_cases()[name]
    x = tf.constant(rng.standard_normal((3, 4)))
    v = tf.constant(rng.standard_normal((3, 4)))
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        y = fn(x)
    with tf.GradientTape() as t:
        t.watch(x)
        y2 = fn(x)
    jac = t.jacobian(y2, x).numpy()
    expected = np.tensordot(jac, v.numpy(), axes=2)
    np.testing.assert_allclose(acc.jvp(y).numpy(), expected, rtol=1e-10, atol=1e-12)


def test_double_vjp_fallback_for_op_without_jvp_rule():
    op = registry.get_op("Tanh")
    saved, op.jvp = op.jvp, None
    try:
        x = tf.constant([0.3, -1.2])
        with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 2.0])) as acc:
            y = tf.tanh(x)
        expected = (1 - np.tanh(x.numpy()) ** 2) * [1.0, 2.0]
        np.testing.assert_allclose(acc.jvp(y).numpy(), expected, rtol=1e-6)
    finally:
        op.jvp = saved


def test_variables_as_primals():
    v = tf.Variable([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(v, tf.constant([1.0, 0.5])) as acc:
        y = tf.reduce_sum(v * v)
    assert acc.jvp(y).numpy() == pytest.approx(2 * 1.0 + 4 * 0.5)


W = rng.standard_normal((4, 4))


def _g(x):
    return tf.reduce_sum(tf.square(tf.tanh(tf.linalg.matvec(tf.constant(W), x))))


def _hessian(xv):
    u = np.tanh(W @ xv)
    return W.T @ np.diag(2 * (1 - u ** 2) * (1 - 3 * u ** 2)) @ W


def test_hvp_forward_over_backward_and_backward_over_forward():
    xv, vv = rng.standard_normal(4), rng.standard_normal(4)
    x, v = tf.constant(xv), tf.constant(vv)
    expected = _hessian(xv) @ vv
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        with tf.GradientTape() as t:
            t.watch(x)
            y = _g(x)
        grad = t.gradient(y, x)
    np.testing.assert_allclose(acc.jvp(grad).numpy(), expected, rtol=1e-10)
    with tf.GradientTape() as t:
        t.watch(x)
        with tf.autodiff.ForwardAccumulator(x, v) as acc:
            y = _g(x)
        jvp = acc.jvp(y)
    np.testing.assert_allclose(t.gradient(jvp, x).numpy(), expected, rtol=1e-10)


def test_forward_over_forward():
    xv, uv, vv = rng.standard_normal(4), rng.standard_normal(4), rng.standard_normal(4)
    x = tf.constant(xv)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(uv)) as outer:
        with tf.autodiff.ForwardAccumulator(x, tf.constant(vv)) as inner:
            y = _g(x)
        jv = inner.jvp(y)
    np.testing.assert_allclose(outer.jvp(jv).numpy(), uv @ _hessian(xv) @ vv, rtol=1e-10)


def test_third_order_mixed():
    # d3/dx3 sin(x) = -cos(x): forward over backward over forward.
    x = tf.constant(0.7)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as a1:
        with tf.GradientTape() as t:
            t.watch(x)
            with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as a2:
                y = tf.sin(x)
            d1 = a2.jvp(y)
        d2 = t.gradient(d1, x)
    assert a1.jvp(d2).numpy() == pytest.approx(-np.cos(0.7))


def test_forward_over_vectorized_jacobian():
    xv, vv = np.array([0.3, -0.7, 1.1]), np.array([1.0, 0.5, -2.0])
    x, v = tf.constant(xv), tf.constant(vv)
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.sin(x) * tf.reduce_sum(x * x)
        jac = t.jacobian(y, x)

    def analytic(a):
        return np.diag(np.cos(a)) * (a * a).sum() + np.outer(np.sin(a), 2 * a)

    eps = 1e-6
    fd = (analytic(xv + eps * vv) - analytic(xv - eps * vv)) / (2 * eps)
    np.testing.assert_allclose(acc.jvp(jac).numpy(), fd, rtol=1e-7, atol=1e-8)


def test_tangents_of_dead_intermediates_are_freed():
    x = tf.constant(np.ones(4))
    with tf.autodiff.ForwardAccumulator(x, tf.constant(np.ones(4))) as acc:
        y = x
        for _ in range(3000):
            y = tf.sin(y) + 1.0  # two ops per step; only the last y stays alive
    assert len(acc._tangents) < 2100
    expected = np.ones(4)
    z = np.ones(4)
    for _ in range(3000):
        expected = np.cos(z) * expected
        z = np.sin(z) + 1.0
    np.testing.assert_allclose(acc.jvp(y).numpy(), expected)


# -- registry-wide: every op's JVP (rule or double VJP) matches J @ v --------------

def _spec_params():
    from tests.op_specs import all_specs

    return [pytest.param(s, id=s.id) for s in all_specs()]


@pytest.mark.parametrize("spec", _spec_params())
def test_every_op_jvp_matches_reverse_mode(spec):
    import warnings

    r = np.random.default_rng(11)
    arrays = [a.make(r) for a in spec.args]
    tensors = [tf.constant(a) for a in arrays]
    sources = [t for t, a in zip(tensors, spec.args) if a.diff and t.dtype.is_floating]
    if not sources:
        pytest.skip("no differentiable input")
    tangents = [tf.constant(r.standard_normal(tuple(s.shape.as_list()))) for s in sources]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with tf.autodiff.ForwardAccumulator(sources, tangents) as acc:
            out = spec.fn(*tensors)
        with tf.GradientTape(persistent=True) as t:
            t.watch(sources)
            out2 = spec.fn(*tensors)
        outs = out if isinstance(out, (list, tuple)) else [out]
        outs2 = out2 if isinstance(out2, (list, tuple)) else [out2]
        for o, o2 in zip(outs, outs2):
            if o is None or not o.dtype.is_floating:
                continue
            jacs = t.jacobian(o2, sources)
            expected = np.zeros(tuple(o.shape.as_list()))
            for j, v in zip(jacs, tangents):
                if j is not None:
                    nv = len(v.shape)
                    expected = expected + np.tensordot(j.numpy(), v.numpy(), axes=nv) if nv else \
                        expected + j.numpy() * v.numpy()
            got = acc.jvp(o, unconnected_gradients="zero").numpy()
            np.testing.assert_allclose(got, expected, rtol=min(spec.rtol, 1e-8) if spec.rtol < 1e-4 else spec.rtol,
                                       atol=1e-10 if spec.atol < 1e-4 else spec.atol, err_msg=spec.id)


def test_hvp_forward_over_backward_through_tf_function():
    w = tf.constant(W)

    @tf.function
    def g(x):
        return tf.reduce_sum(tf.square(tf.tanh(tf.linalg.matvec(w, x))))

    xv, vv = rng.standard_normal(4), rng.standard_normal(4)
    x, v = tf.constant(xv), tf.constant(vv)
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        with tf.GradientTape() as t:
            t.watch(x)
            y = g(x)
        grad = t.gradient(y, x)
    np.testing.assert_allclose(acc.jvp(grad).numpy(), _hessian(xv) @ vv, rtol=1e-10)


def test_tangent_computations_are_recorded_only_by_tapes_entered_before_the_accumulator():
    # TF 2.21: a tape inside the accumulator records the primal ops, not their tangents.
    x, v = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        with tf.GradientTape(persistent=True) as inner:
            inner.watch(x)
            z = tf.sin(x * x)
        jv = acc.jvp(z)
    assert inner.gradient(jv, x) is None
    np.testing.assert_allclose(inner.gradient(z, x).numpy(), [1.0806046, -2.6145744], rtol=1e-6)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.autodiff.ForwardAccumulator(x, v) as acc:
            z = tf.sin(x * x)
        jv = acc.jvp(z)
    np.testing.assert_allclose(outer.gradient(jv, x).numpy(), [-6.855838, 43.20621], rtol=1e-6)
