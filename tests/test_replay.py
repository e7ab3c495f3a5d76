"""Compiled replay of a repeated tape's backward (tapeflow/graph/tape_replay.py):
the same gradients as the op-by-op walk, at every nesting order, with the
tape's semantics (persistence, sources, output gradients, memory release)."""

import gc
import weakref

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.graph import tape_replay as replay


@pytest.fixture
def fresh():
    replay.clear()
    yield
    replay.enabled = True
    replay.clear()


def _both(fn, calls=4):
    """fn's results with replay off, then over ``calls`` calls with it on
    (the later calls replay)."""
    replay.enabled = False
    want = fn()
    replay.enabled = True
    got = [fn() for _ in range(calls)]
    return want, got


def _close(a, b, rtol=1e-12):
    for x, y in zip(tf.nest.flatten(a), tf.nest.flatten(b)):
        if x is None or y is None:
            assert x is None and y is None
            continue
        assert type(x) is type(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=1e-14)


def test_mlp_step_with_variables_replays(fresh):
    rng = np.random.default_rng(0)
    w1 = tf.Variable(rng.standard_normal((5, 7)).astype(np.float32))
    b1 = tf.Variable(np.zeros(7, np.float32))
    w2 = tf.Variable(rng.standard_normal((7, 3)).astype(np.float32))
    x = tf.constant(rng.standard_normal((4, 5)).astype(np.float32))
    y = tf.constant(np.eye(3, dtype=np.float32)[[0, 2, 1, 1]])

    def step():
        with tf.GradientTape() as t:
            h = tf.nn.relu(tf.matmul(x, w1) + b1)
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, tf.matmul(h, w2)))
        return t.gradient(loss, [w1, b1, w2])

    want, got = _both(step)
    for g in got:
        _close(want, g, rtol=1e-6)
    assert any(e is not None for e in replay._CACHE.values())


def test_fourth_derivative_by_nested_tapes(fresh):
    x = tf.constant(0.7, tf.float64)

    def d4():
        with tf.GradientTape() as t4:
            t4.watch(x)
            with tf.GradientTape() as t3:
                t3.watch(x)
                with tf.GradientTape() as t2:
                    t2.watch(x)
                    with tf.GradientTape() as t1:
                        t1.watch(x)
                        y = tf.tanh(x) * tf.exp(tf.sin(x))
                    d1 = t1.gradient(y, x)
                d2 = t2.gradient(d1, x)
            d3 = t3.gradient(d2, x)
        return d1, d2, d3, t4.gradient(d3, x)

    want, got = _both(d4, calls=7)
    for g in got:
        _close(want, g)
    # Closed form of the 4th derivative at 0.7 (as bench_eager checks it).
    np.testing.assert_allclose(float(got[-1][3]), -4.89722111762892, rtol=1e-12)
    assert len(replay._CACHE) >= 4  # one compiled replay per nesting level
    # Each level's compiled backward (AddN included) runs on Python floats.
    fns = [e.fn.compiled() for e in replay._CACHE.values() if e is not None]
    assert len(fns) >= 4 and all(f.source.startswith("def scalar_fn") for f in fns)


def test_float64_scalar_graphs_with_add_n_match_numpy_bit_for_bit():
    from tapeflow.graph.compiler import compile_graph

    @tf.function
    def f(a, b, c):
        return tf.add_n([a * b, tf.sin(c), b, a / c])

    args = [tf.constant(v, tf.float64) for v in (0.1, 0.7, 1.3)]
    gf = f.get_concrete_function(*args)._gf
    scalar = compile_graph(gf.graph, gf.inputs, gf.outputs)
    assert scalar.source.startswith("def scalar_fn") and "+" in scalar.source
    vals = [a.numpy() for a in args]
    want = np.add(np.add(np.add(vals[0] * vals[1], np.sin(vals[2])), vals[1]), vals[0] / vals[2])
    assert scalar(*vals)[0] == want and type(scalar(*vals)[0]) is np.float64


def test_hessian_vector_product_and_hessian(fresh):
    rng = np.random.default_rng(1)
    w = tf.constant(rng.standard_normal((6, 6)) / 3)
    x = tf.constant(rng.standard_normal(6))
    v = tf.constant(rng.standard_normal(6))

    def inner():
        with tf.GradientTape() as t:
            t.watch(x)
            yv = tf.reduce_sum(tf.square(tf.tanh(tf.linalg.matvec(w, x))))
        return t.gradient(yv, x)

    def hvp():
        with tf.GradientTape() as outer:
            outer.watch(x)
            g = inner()
        return outer.gradient(g, x, output_gradients=v)

    def hess():
        with tf.GradientTape() as outer:
            outer.watch(x)
            g = inner()
        return outer.jacobian(g, x)

    for fn in (hvp, hess):
        want, got = _both(fn)
        for g in got:
            _close(want, g)


def test_persistent_tape_sources_targets_and_unconnected(fresh):
    x = tf.constant([1.0, 2.0, 3.0])
    z = tf.constant(2.0)

    def grads():
        with tf.GradientTape(persistent=True) as t:
            t.watch([x, z])
            y = tf.reduce_sum(x * x) + tf.sin(x[0] * 0.0 + 1.0)
            u = y * 3.0
        out = (
            t.gradient(u, [x, z]),
            t.gradient([u, y], x),
            t.gradient(y, y),
            t.gradient(u, z, unconnected_gradients="zero"),
            t.gradient(u, x, output_gradients=tf.constant(2.0)),
        )
        del t
        return out

    want, got = _both(grads)
    for g in got:
        _close(want, g)
    assert got[-1][0][1] is None  # z is watched but unconnected


def test_memory_is_freed_after_a_replayed_gradient(fresh):
    x = tf.constant(np.ones((50, 50)))

    def run():
        with tf.GradientTape() as t:
            t.watch(x)
            h = tf.tanh(x * 2.0)
            y = tf.reduce_sum(h * h)
        ref = weakref.ref(h)
        del h
        g = t.gradient(y, x)
        return ref, g

    for _ in range(4):
        ref, g = run()
        gc.collect()
        assert ref() is None  # the tanh output the record saved is released
    assert any(e is not None for e in replay._CACHE.values())


def test_custom_gradient_and_sparse_gradients_walk_as_before(fresh):
    @tf.custom_gradient
    def clip(x):
        return tf.identity(x), lambda dy: tf.clip_by_value(dy, -0.5, 0.5)

    x = tf.constant([1.0, 2.0])
    emb = tf.Variable(np.arange(12.0, dtype=np.float32).reshape(4, 3))

    def run():
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(clip(x * 3.0))
        with tf.GradientTape() as t2:
            e = tf.reduce_sum(tf.gather(emb, [0, 2, 2]) * 2.0)
        return t.gradient(y, x), t2.gradient(e, emb)

    for _ in range(3):
        gx, ge = run()
        np.testing.assert_array_equal(gx.numpy(), [1.5, 1.5])  # clipped to 0.5, times 3
        assert isinstance(ge, tf.IndexedSlices)
        np.testing.assert_array_equal(tf.convert_to_tensor(ge).numpy()[2], [4.0, 4.0, 4.0])


def test_replay_disabled_and_changed_shapes_are_separate_structures(fresh):
    def run(n):
        x = tf.constant(np.arange(n, dtype=np.float32))
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(tf.exp(x * 0.1))
        return t.gradient(y, x)

    for n in (3, 3, 3, 4, 4, 4):
        np.testing.assert_allclose(run(n).numpy(), 0.1 * np.exp(0.1 * np.arange(n)), rtol=1e-6)
    assert sum(e is not None for e in replay._CACHE.values()) == 2


def _jacobian_entries() -> int:
    return sum(e is not None and e.fn.name == "tape_jacobian" for e in replay._CACHE.values())


def test_vectorized_jacobians_replay_compiled_and_match_the_walk(fresh):
    rng = np.random.default_rng(2)
    w = tf.constant(rng.standard_normal((5, 4)))
    b = tf.constant(rng.standard_normal(5))
    x = tf.constant(rng.standard_normal(4))
    xb = tf.constant(rng.standard_normal((3, 4)))

    def jac():
        with tf.GradientTape() as t:
            t.watch([x, b])
            y = tf.tanh(tf.linalg.matvec(w, x) + b)
        return t.jacobian(y, [x, b, w])  # w is unwatched: None

    def jac_matrix_target():
        with tf.GradientTape() as t:
            t.watch(xb)
            y = tf.sin(tf.matmul(xb, w, transpose_b=True)) * 2.0
        return t.jacobian(y, xb)

    def batch_jac():
        with tf.GradientTape() as t:
            t.watch(xb)
            y = tf.exp(tf.matmul(xb, w, transpose_b=True) * 0.1)
        return t.batch_jacobian(y, xb)

    for fn in (jac, jac_matrix_target, batch_jac):
        want, got = _both(fn)
        for g in got:
            _close(want, g)
    assert _jacobian_entries() == 3
    assert jac()[2] is None


def test_compiled_jacobian_is_used_and_falls_back_when_the_structure_changes(fresh, monkeypatch):
    calls = []
    real = replay.GraphFunction.compiled

    def counting(self):
        if self.name == "tape_jacobian":
            calls.append(self)
        return real(self)

    monkeypatch.setattr(replay.GraphFunction, "compiled", counting)

    def jac(n, op=tf.tanh):
        x = tf.constant(np.linspace(0.1, 1.0, n))
        with tf.GradientTape() as t:
            t.watch(x)
            y = op(x * x)
        return t.jacobian(y, x)

    u = np.linspace(0.1, 1.0, 3)
    for _ in range(2):
        np.testing.assert_allclose(jac(3).numpy(), np.diag(2 * u / np.cosh(u * u) ** 2))
    built = len(calls)
    assert built >= 1  # the second sighting traced and compiled it (and ran it)
    jac(3)
    assert len(calls) == built + 1  # the third ran the compiled function
    got = jac(4, tf.sin)  # another structure: walked by the interpreter, no compiled call
    assert len(calls) == built + 1
    u = np.linspace(0.1, 1.0, 4)
    np.testing.assert_allclose(got.numpy(), np.diag(2 * u * np.cos(u * u)))


def test_hessian_by_a_compiled_jacobian_of_a_replayed_gradient_and_memory(fresh):
    rng = np.random.default_rng(3)
    w = tf.constant(rng.standard_normal((6, 6)) / 3)
    x = tf.constant(rng.standard_normal(6))

    def hess():
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                h = tf.tanh(tf.linalg.matvec(w, x))
                y = tf.reduce_sum(tf.square(h))
            g = inner.gradient(y, x)
        ref = weakref.ref(h)
        del h
        return outer.jacobian(g, x), ref

    replay.enabled = False
    want = hess()[0]
    replay.enabled = True
    for _ in range(4):
        got, ref = hess()
        _close(want, got)
        gc.collect()
        assert ref() is None
    assert _jacobian_entries() == 1


def test_jacobian_of_a_compiled_jacobian_under_an_outer_tape(fresh):
    x = tf.constant([0.3, -0.2, 0.5])

    def third():
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as t:
                t.watch(x)
                y = tf.sin(x) * x
            j = t.jacobian(y, x)  # recorded on the outer tape (a function call when compiled)
            s = tf.reduce_sum(j * j)
        return j, outer.gradient(s, x)

    want, got = _both(third)
    for g in got:
        _close(want, g)
    assert _jacobian_entries() == 1


def _jvp_functions(fn) -> list:
    return [jf for jf in fn._jvps.values() if jf is not None]


def test_forward_over_backward_hvp_replays_with_a_compiled_jvp(fresh):
    rng = np.random.default_rng(4)
    w = tf.constant(rng.standard_normal((5, 5)) / 2)
    x = tf.constant(rng.standard_normal(5))
    v = tf.constant(rng.standard_normal(5))

    def fob():
        with tf.autodiff.ForwardAccumulator(x, v) as acc:
            with tf.GradientTape() as t:
                t.watch(x)
                y = tf.reduce_sum(tf.square(tf.tanh(tf.linalg.matvec(w, x))))
            g = t.gradient(y, x)
        return g, acc.jvp(g)

    def bofob():  # backward over forward over backward: the JVP call is recorded on the outer tape
        with tf.GradientTape() as outer:
            outer.watch(x)
            hv = fob()[1]
            s = tf.reduce_sum(hv * hv)
        return outer.gradient(s, x)

    for fn in (fob, bofob):
        want, got = _both(fn)
        for g in got:
            _close(want, g)
    entries = [e for e in replay._CACHE.values() if e is not None and e.fn.name == "tape_backward"]
    assert entries and any(_jvp_functions(e.fn) for e in entries)


def test_forward_mode_through_tf_function_calls(fresh):
    w = tf.Variable([[0.5, -1.0], [2.0, 0.25]], dtype=tf.float64)
    c = tf.constant([[1.0, 2.0], [-0.5, 0.3]], tf.float64)

    @tf.function
    def pure(x):
        return tf.sin(tf.linalg.matvec(c, x)) * x

    @tf.function
    def reads(x):  # a variable read: the double-VJP route
        return tf.sin(tf.linalg.matvec(w, x)) * x

    x = tf.constant([0.3, -0.7], tf.float64)
    v1 = tf.constant([1.0, 0.5], tf.float64)
    v2 = tf.constant([-0.2, 2.0], tf.float64)

    def second(fn):  # forward over forward: the inner JVP call is itself differentiated forward
        with tf.autodiff.ForwardAccumulator(x, v2) as a2:
            with tf.autodiff.ForwardAccumulator(x, v1) as a1:
                y = fn(x)
            j = a1.jvp(y)
        return j, a2.jvp(j)

    def analytic(m):
        m, xv, t1, t2 = m.numpy(), x.numpy(), v1.numpy(), v2.numpy()
        u = m @ xv
        j = np.cos(u) * (m @ t1) * xv + np.sin(u) * t1
        h = -np.sin(u) * (m @ t2) * (m @ t1) * xv + np.cos(u) * (m @ t1) * t2 + np.cos(u) * (m @ t2) * t1
        return j, h

    for fn, m in ((pure, c), (reads, w)):
        j, h = second(fn)
        wj, wh = analytic(m)
        np.testing.assert_allclose(j.numpy(), wj, rtol=1e-12)
        np.testing.assert_allclose(h.numpy(), wh, rtol=1e-12)
    assert _jvp_functions(pure._concrete_functions()[0]._gf)
    assert not _jvp_functions(reads._concrete_functions()[0]._gf)  # (it reads a variable)


def test_compiler_folds_reshape_chains_and_reshapes_to_the_same_shape():
    from tapeflow.graph.compiler import compile_graph

    @tf.function
    def f(x):
        y = tf.reshape(tf.reshape(tf.reshape(x, [6]), [3, 2]), [1, 6])  # one Reshape of x
        z = tf.reshape(tf.reshape(x, [6]), [2, 3])  # back to x's shape: x itself
        return y * 2.0, z + 1.0

    x = tf.constant(np.arange(6.0).reshape(2, 3))
    gf = f.get_concrete_function(x)._gf
    cg = compile_graph(gf.graph, gf.inputs, gf.outputs)
    assert cg.num_ops == 3  # Reshape, Mul, AddV2
    y, z = cg(x.numpy())
    np.testing.assert_array_equal(y, np.arange(6.0).reshape(1, 6) * 2.0)
    np.testing.assert_array_equal(z, np.arange(6.0).reshape(2, 3) + 1.0)


def test_compiler_shares_products_and_sums_whatever_their_operand_order_but_not_string_joins():
    from tapeflow.graph.compiler import compile_graph

    @tf.function
    def f(x, y):
        return x * y + y * x, (y + x) * (x + y)  # one Mul, one AddV2 for the first; one AddV2, one Mul after

    @tf.function
    def g(a, b):
        return a + b, b + a  # (string joins do not commute)

    x, y = tf.constant([1.5, -2.0]), tf.constant([0.25, 3.0])
    gf = f.get_concrete_function(x, y)._gf
    cg = compile_graph(gf.graph, gf.inputs, gf.outputs)
    assert cg.num_ops == 4
    p, q = cg(x.numpy(), y.numpy())
    np.testing.assert_array_equal(p, x.numpy() * y.numpy() * 2)
    np.testing.assert_array_equal(q, (x.numpy() + y.numpy()) ** 2)
    ab, ba = g(tf.constant("a"), tf.constant("b"))
    assert (ab.numpy(), ba.numpy()) == (b"ab", b"ba")


def test_attr_keys_tell_apart_what_a_trace_bakes_in():
    # Values that compare equal in Python but trace differently get different keys;
    # objects are named by identity (and kept alive), small arrays by content.
    keep: list = []
    k = replay._attr_key

    def keys(*vs):
        return [k({"a": v, "b": False}, keep) for v in vs]

    values = [1, True, 1.0, np.float32(1), 0.0, -0.0, None, "1", (1,), [1], (True,), np.dtype("float32")]
    distinct = keys(*values, np.array([1, 2]), np.array([1.0, 2.0]), slice(1, None))
    assert len(set(distinct)) == len(distinct)
    assert keys(np.array([1, 2]))[0] == keys(np.array([1, 2]))[0]
    big = np.zeros(100)

    class Fn:
        pass

    f, g = Fn(), Fn()
    for _ in range(2):  # (the second time through the learnt identity types)
        assert keys(f) == keys(f) and keys(f) != keys(g)
        assert keys(big)[0] != keys(np.zeros(100))[0]
    assert any(x is f for x in keep) and any(x is big for x in keep)
    assert np.ndarray not in replay._ID_TYPES and Fn in replay._ID_TYPES
    for v in [(1, 64), (), None, True, (1, True), (1.0,), f]:  # an attrs dict's fast paths key values as alone
        assert k({"a": v}, keep) == (dict, "a", k(v, keep))


@pytest.fixture(params=["checked", "lazy"])
def followed(fresh, monkeypatch, request):
    """Counts gradients served by a tape that recorded along its template (checking each op as it came, or,
    with the lazy lane taking templates of any length, checking them all at gradient time)."""
    if request.param == "lazy":
        monkeypatch.setattr(replay.backprop, "LAZY_MIN_OPS", 1)
    calls = []
    orig = replay._followed

    def counting(*a):
        r = orig(*a)
        calls.append(r is not None)
        return r

    monkeypatch.setattr(replay, "_followed", counting)
    orig_one = replay.template_gradient

    def counting_one(*a):  # (one target and one source: served without _followed; when it declines, _followed runs)
        r = orig_one(*a)
        if r is not replay.backprop._NOT_FOUND:
            calls.append(True)
        return r

    monkeypatch.setattr(replay, "template_gradient", counting_one)
    orig_list = replay.template_gradients

    def counting_list(*a):  # (one target and a list of sources: the same)
        r = orig_list(*a)
        if r is not replay.backprop._NOT_FOUND:
            calls.append(True)
        return r

    monkeypatch.setattr(replay, "template_gradients", counting_list)
    return calls


def test_tapes_record_along_a_template_and_depart_from_it_correctly(followed):
    # Once a structure is compiled, new tapes record along it (no OpRecords, no key); any
    # departure (op, shape, attr, connectivity, which tensors repeat) falls back to records.
    x = tf.constant([0.3, -0.2, 0.5])
    c1, c2 = tf.constant([1.5, 2.0, -1.0]), tf.constant([0.5, 0.25, 2.0])

    def f(x, a, b, c, axis=0, last=tf.tanh):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.sin(x) * a + tf.sin(x) * b
            _ = tf.argmax(y)  # (an int output: not recorded, the template goes on)
            z = tf.reduce_sum(last(y) * c, axis=axis)
        return t.gradient(z, x)

    def want(x, a, b, c, dlast=lambda y: 1 - np.tanh(y) ** 2):
        xv, av, bv, cv = x.numpy(), a.numpy(), b.numpy(), c.numpy()
        return dlast(np.sin(xv) * av + np.sin(xv) * bv) * cv * np.cos(xv) * (av + bv)

    for _ in range(4):
        np.testing.assert_allclose(f(x, c1, c2, c1).numpy(), want(x, c1, c2, c1), rtol=1e-6)
    assert followed[-2:] == [True, True]

    def dsig(y):
        s = 1 / (1 + np.exp(-y))
        return s * (1 - s)

    short = tf.constant([0.1, 0.2])
    cases = [
        ((x, c1, c2, c2), {}, want(x, c1, c2, c2)),  # the last factor was a's tensor: now b's
        ((x, c1, c1, c1), {}, want(x, c1, c1, c1)),  # a and b were two tensors: now one
        ((x, c1, c2, c1), {"axis": -1}, want(x, c1, c2, c1)),  # an attr
        ((x, c1, c2, c1), {"last": tf.sigmoid}, want(x, c1, c2, c1, dsig)),  # an op
        ((short, c1[:2], c2[:2], c1[:2]), {}, want(short, c1[:2], c2[:2], c1[:2])),  # shapes
        ((x, c1, c2, tf.constant(2.0)), {}, want(x, c1, c2, tf.constant(2.0))),  # a new input's shape
        ((x, c1, c2, c1), {}, want(x, c1, c2, c1)),
    ]
    for args, kw, w in cases:
        for _ in range(3):
            np.testing.assert_allclose(f(*args, **kw).numpy(), w, rtol=1e-6)
    assert followed.count(True) > 6


def test_a_followed_tape_is_an_ordinary_tape_to_everything_else(followed):
    x = tf.constant([0.3, -0.2])
    w = tf.Variable([[1.0, 2.0], [0.5, -1.0]])

    def step(mid=None):
        with tf.GradientTape() as t:
            t.watch(x)
            h = tf.tanh(tf.linalg.matvec(w, x))
            if mid is not None:
                mid(t, h)
            loss = tf.reduce_sum(h * h)
        return t.gradient(loss, [x, w])

    want = [g.numpy() for g in step()]
    for _ in range(3):
        got = step()
    assert followed[-1] is True
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-6)

    def nested(t, h):  # another tape joins mid-way: both see ordinary records
        with tf.GradientTape() as inner:
            inner.watch(h)
            u = tf.exp(h)
        np.testing.assert_allclose(inner.gradient(u, h).numpy(), np.exp(h.numpy()), rtol=1e-6)

    def stats(t, h):
        assert tf.debugging.tape_stats(t).records > 0

    def stop(t, h):
        with t.stop_recording():
            tf.exp(h)

    for mid in (nested, stats, stop, None):
        for _ in range(2):
            got = step(mid)
            for a, b in zip(got, want):
                np.testing.assert_allclose(a.numpy(), b, rtol=1e-6)
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0])) as acc:
        got = step()
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-6)
    assert acc is not None


def test_a_followed_tape_frees_its_saved_tensors_after_gradient(followed):
    x = tf.constant(np.linspace(0.0, 1.0, 1000))

    def run():
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.tanh(tf.sin(x))
            ref = weakref.ref(y)
            loss = tf.reduce_sum(y)
        del y
        g = t.gradient(loss, x)
        gc.collect()
        return g, ref

    for _ in range(4):
        g, ref = run()
    assert followed[-1] is True and ref() is None
    np.testing.assert_allclose(g.numpy(), np.cos(x.numpy()) / np.cosh(np.sin(x.numpy())) ** 2, rtol=1e-12)


def test_a_template_is_followed_only_with_the_same_attrs_and_input_shapes(followed):
    w = tf.constant([[0.3, -0.2], [0.5, 0.1]])
    m = tf.constant([[1.0, 2.0], [-0.5, 0.25]])

    def f(c, transpose_a=False):
        with tf.GradientTape() as t:
            t.watch([w, c])
            z = tf.reduce_sum(tf.tanh(tf.matmul(w, m, transpose_a=transpose_a)) * c)
        return t.gradient(z, [w, c])

    def want(c, transpose_a=False):
        wv, mv, cv = w.numpy(), m.numpy(), c.numpy()
        p = (wv.T if transpose_a else wv) @ mv
        gp = (1 - np.tanh(p) ** 2) * cv
        gw = mv @ gp.T if transpose_a else gp @ mv.T
        return gw, np.broadcast_to(np.tanh(p), gp.shape).sum(axis=tuple(range(gp.ndim - cv.ndim))).reshape(cv.shape)

    full, row = tf.constant([[1.0, -2.0], [0.5, 3.0]]), tf.constant([1.0, -2.0])
    for args in [(full,)] * 4 + [(full, True)] * 3 + [(row,)] * 3 + [(full,)] * 2:
        got = f(*args)
        for a, b in zip(got, want(*args)):
            assert a.shape == b.shape
            np.testing.assert_allclose(a.numpy(), b, rtol=1e-6)
    assert followed.count(True) >= 3


def test_gradients_and_jacobians_of_one_structure_share_its_template(followed):
    w = tf.constant([[0.3, -0.2, 0.1], [0.5, 0.1, -0.4]])
    b = tf.constant([0.1, -0.3])
    x = tf.constant([0.2, -0.1, 0.4])

    def tape():
        t = tf.GradientTape()
        with t:
            t.watch(x)
            y = tf.tanh(tf.linalg.matvec(w, x) + b)
        return t, y

    u = np.tanh(w.numpy() @ x.numpy() + b.numpy())
    jac = (1 - u**2)[:, None] * w.numpy()
    for _ in range(4):
        t, y = tape()
        np.testing.assert_allclose(t.jacobian(y, x).numpy(), jac, rtol=1e-6)
        t, y = tape()
        np.testing.assert_allclose(t.gradient(y, x).numpy(), jac.sum(0), rtol=1e-6)
    assert followed[-2:] == [True, True]
    (tpl,) = {id(v): v for v in replay.backprop._TEMPLATES.values()}.values()
    assert {u[0] for u in tpl.uses} == {"gradient", "jacobian"}


def test_nested_tapes_each_follow_their_own_template(followed):
    # Nested tapes share their first ops; where a tape sits on the stack picks its template.
    x = tf.constant(0.7, tf.float64)

    def d3(f):
        with tf.GradientTape() as t3:
            t3.watch(x)
            with tf.GradientTape() as t2:
                t2.watch(x)
                with tf.GradientTape() as t1:
                    t1.watch(x)
                    y = f(x)
                d1 = t1.gradient(y, x)
            d2 = t2.gradient(d1, x)
        return [float(d) for d in (d1, d2, t3.gradient(d2, x))]

    xv = 0.7
    t = np.tanh(xv)
    tanh_d = [1 - t**2, -2 * t * (1 - t**2), (6 * t**2 - 2) * (1 - t**2)]
    sin_d = [np.cos(xv), -np.sin(xv), -np.cos(xv)]
    for f, want in [(tf.tanh, tanh_d)] * 4 + [(tf.sin, sin_d)] * 4 + [(tf.tanh, tanh_d)] * 2:
        np.testing.assert_allclose(d3(f), want, rtol=1e-12)
    assert followed[-3:] == [True, True, True]


def test_a_tape_under_an_accumulator_follows_its_template(followed):
    # Forward-over-backward: the accumulator still sees every op a following tape skips recording.
    w = tf.constant([[0.5, -0.3], [0.2, 0.8]], tf.float64)
    x, v = tf.constant([0.3, -0.7], tf.float64), tf.constant([1.0, 0.5], tf.float64)

    def hvp():
        with tf.autodiff.ForwardAccumulator(x, v) as acc:
            with tf.GradientTape() as t:
                t.watch(x)
                y = tf.reduce_sum(tf.tanh(tf.linalg.matvec(w, x)) ** 2)
            g = t.gradient(y, x)
        return acc.jvp(g).numpy()

    u = np.tanh(w.numpy() @ x.numpy())
    want = w.numpy().T @ (2 * (1 - u**2) * (1 - 3 * u**2) * (w.numpy() @ v.numpy()))
    for _ in range(5):
        np.testing.assert_allclose(hvp(), want, rtol=1e-12)
    assert followed[-2:] == [True, True]


def _lazy(t) -> bool:
    return bool(t._tape is not None and t._tape.lazy)


@pytest.mark.parametrize("dict_ids", [0, 1 << 20])  # (how records connect: checked with arrays, or a dict)
def test_a_lazily_followed_tape_departing_only_at_gradient_time_gets_ordinary_gradients(
    followed, monkeypatch, dict_ids
):
    # A tape following a small template lazily checks its ops only when gradient() comes: a departure at
    # one op (an input's shape, an attr, a dtype, which tensors repeat, an extra or a missing recorded op, an
    # output shape an input's value decides) must fall back to ordinary records and give the walk's gradients.
    from tapeflow.eager import tape as tape_lib

    monkeypatch.setattr(replay.backprop, "LAZY_MIN_OPS", 1)  # (short templates are checked op by op)
    monkeypatch.setattr(replay.backprop, "LAZY_DICT_IDS", dict_ids)

    def f(x, c, d, alpha=0.2, shape=(6, 1), watch_c=False, square=False, d_is_s=False, wide=False):
        with tf.GradientTape() as t:
            t.watch([x, d])  # (d is watched, not a source: its ops are recorded, the gradient is x's)
            if watch_c:
                t.watch(c)
            u = c * c
            s = tf.sin(x)
            y = s * u
            y = y * (s if d_is_s else d)
            y = tf.nn.leaky_relu(y, alpha)
            y = tf.cast(y, tf.float64 if wide else tf.float32)
            if shape is not None:
                y = tf.reshape(y, tf.constant(shape))
            y = y + tf.zeros(6, y.dtype)
            z = tf.reduce_sum(tf.tanh(y * y if square else y))
            lazy = _lazy(t)
        return [t.gradient(z, x)], lazy

    def walk(*args, **kw):
        tape_lib.templates = False
        replay.enabled = False
        try:
            return f(*args, **kw)[0]
        finally:
            tape_lib.templates = True
            replay.enabled = True

    x = tf.constant(np.linspace(-1.0, 1.0, 6), tf.float32)
    c, d = tf.constant(np.linspace(0.5, 1.5, 6), tf.float32), tf.constant(np.linspace(2.0, 1.0, 6), tf.float32)
    for _ in range(4):
        first, lazy = f(x, c, d)
    assert lazy and followed[-1] is True
    cases = [
        ((x, c, tf.constant([0.5])), {}),  # a new input's shape
        ((x, c, d), {"alpha": 0.3}),  # an attr
        ((x, c, d), {"wide": True}),  # a dtype (and an attr)
        ((x, c, d), {"shape": (1, 6)}),  # an output shape an input's value decides
        ((x, c, d), {"d_is_s": True}),  # d was a tensor of its own: now sin(x)
        ((x, c, c), {}),  # two tensors are one
        ((x, c, d), {"square": True}),  # an extra op (y * y)
        ((x, c, d), {"watch_c": True}),  # c * c is recorded now
        ((x, c, d), {"shape": None}),  # one op fewer
    ]
    departed_late = 0
    for args, kw in cases:
        want = walk(*args, **kw)
        for i in range(3):
            got, lazy = f(*args, **kw)
            departed_late += i == 0 and lazy  # (recorded along the first template: checked at gradient time)
            for a, b in zip(got, want):
                assert (a is None) == (b is None)
                if b is not None:
                    assert a.dtype == b.dtype and a.shape == b.shape
                    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
        f(x, c, d)
        f(x, c, d)  # (the first structure's template again)
    assert departed_late >= 7
    got, lazy = f(x, c, d)
    assert lazy and followed[-1] is True
    for a, b in zip(got, first):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_a_lazily_followed_tape_read_mid_way_or_watching_more_is_an_ordinary_tape(followed, monkeypatch):
    monkeypatch.setattr(replay.backprop, "LAZY_MIN_OPS", 1)
    x = tf.constant([0.3, -0.2, 0.5])
    c = tf.constant([1.5, 2.0, -1.0])
    v = tf.Variable([0.5, 0.25, 2.0])

    def f(mid=None):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.sin(x) * c
            if mid is not None:
                mid(t, y)
            z = tf.reduce_sum(tf.tanh(y) * c)
        return t.gradient(z, x)

    for _ in range(4):
        want = f()
    assert followed[-1] is True

    def records(t, y):
        assert _lazy(t)
        assert [r.type for r in t._tape.records] == ["Sin", "Mul"]
        assert not _lazy(t)

    def watch(t, y):
        t.watch(c)
        assert not _lazy(t)

    def read(t, y):
        assert _lazy(t)
        v.read_value()

    for mid in (records, watch, read):
        np.testing.assert_array_equal(f(mid).numpy(), want.numpy())
    np.testing.assert_array_equal(f().numpy(), want.numpy())
    assert followed[-1] is True


def test_long_chains_of_small_tensors_follow_lazily_and_large_tensors_do_not(followed):
    def chain(x0, c, n=12):
        with tf.GradientTape() as t:
            t.watch(x0)
            x = x0
            for _ in range(n):
                x = tf.tanh(tf.sin(x) * c + c)
            lazy = _lazy(t)
        return t.gradient(x, x0), lazy

    def want(x0, c, n=12):
        x, g = x0.numpy(), np.ones_like(x0.numpy())
        for _ in range(n):
            s = np.sin(x)
            u = np.tanh(s * c.numpy() + c.numpy())
            g = g * (1 - u * u) * c.numpy() * np.cos(x)
            x = u
        return g

    for x0 in (tf.constant(0.3, tf.float64), tf.constant(np.linspace(0.0, 1.0, 20000))):
        c = tf.constant(0.9, tf.float64)
        lazies = []
        for _ in range(4):
            g, lazy = chain(x0, c)
            lazies.append(lazy)
            np.testing.assert_allclose(g.numpy(), want(x0, c), rtol=1e-12)
        assert followed[-1] is True
        assert lazies[-1] == (x0.shape == ())  # (a lazy tape keeps every op's tensors: small ones only)


def test_nested_tapes_following_templates_depart_one_at_a_time(followed):
    # Nested tapes check each op against their own templates in one pass; a tape that departs (an op only it
    # sees, an input only it watches, a changed shape) records as usual while the others go on following.
    x = tf.constant([0.3, -0.5], tf.float64)
    a = tf.constant([1.5, 0.5], tf.float64)

    def run(extra=False, outer_watches_a=False, xs=x):
        with tf.GradientTape() as outer:
            outer.watch(xs)
            if outer_watches_a:
                outer.watch(a)
            with tf.GradientTape() as inner:
                inner.watch(xs)
                y = tf.reduce_sum(tf.sin(xs) * a)
            g = inner.gradient(y, xs)
            if extra:
                g = g * 2.0
        return g, outer.gradient(g, [xs, a])

    def want(extra=False, outer_watches_a=False, xs=x):
        xv, av = xs.numpy(), a.numpy()
        k = 2.0 if extra else 1.0
        g = k * np.cos(xv) * av
        return g, [-k * np.sin(xv) * av, k * np.cos(xv) if outer_watches_a else None]

    x12 = tf.constant([[0.3, -0.5]], tf.float64)
    cases = [{}] * 4 + [{"extra": True}, {}, {"outer_watches_a": True}, {}, {"xs": x12}, {}, {"extra": True}] * 2
    for kw in cases:
        g, (gx, ga) = run(**kw)
        wg, (wx, wa) = want(**kw)
        np.testing.assert_allclose(g.numpy(), wg, rtol=1e-12)
        np.testing.assert_allclose(gx.numpy(), wx, rtol=1e-12)
        if wa is None:
            assert ga is None
        else:
            np.testing.assert_allclose(ga.numpy(), wa, rtol=1e-12)
    assert followed.count(True) >= 6


def test_a_followed_tape_asked_otherwise_gets_what_the_general_path_gives(followed):
    # One target and one source take a short way to the compiled replay; whatever it does not serve (output
    # gradients of another shape or dtype, unwatched or unconnected sources, the target itself, ZERO) is
    # answered as by an ordinary tape.
    x = tf.constant([0.3, -0.5], tf.float64)
    c = tf.constant([2.0, 1.0], tf.float64)

    def tape():
        t = tf.GradientTape()
        with t:
            t.watch(x)
            y = tf.tanh(x) * c
        return t, y

    want = (1 - np.tanh(x.numpy()) ** 2) * c.numpy()
    for _ in range(4):
        t, y = tape()
        np.testing.assert_allclose(t.gradient(y, x).numpy(), want, rtol=1e-12)
    assert followed[-1] is True
    t, y = tape()
    np.testing.assert_allclose(t.gradient(y, x, output_gradients=c).numpy(), want * c.numpy(), rtol=1e-12)
    t, y = tape()
    with pytest.raises(ValueError, match="output_gradients shape"):
        t.gradient(y, x, output_gradients=tf.constant([1.0, 2.0, 3.0], tf.float64))
    t, y = tape()
    with pytest.raises(ValueError, match="requested dtype float64"):
        t.gradient(y, x, output_gradients=tf.constant([1.0, 2.0], tf.float32))
    t, y = tape()
    assert t.gradient(y, c) is None  # (read, not watched)
    t, y = tape()
    np.testing.assert_array_equal(t.gradient(y, y).numpy(), [1.0, 1.0])
    t, y = tape()
    z = tf.constant([5.0, 6.0], tf.float64)
    np.testing.assert_array_equal(t.gradient(y, z, unconnected_gradients="zero").numpy(), [0.0, 0.0])
    t, y = tape()
    with pytest.raises(RuntimeError):
        t.gradient(y, x)
        t.gradient(y, x)
    t, y = tape()
    np.testing.assert_allclose(t.gradient(y, x).numpy(), want, rtol=1e-12)


def test_nested_tapes_in_step_part_when_one_records_alone(followed):
    # Tapes that picked their templates at the same op share each op's check while they record the same
    # ops; one recording an op alone (under stop_recording, an accumulator's tangents only outer tapes see,
    # an input only it watches) parts from the others, and every tape's gradients stay its own.
    x = tf.constant([0.3, -0.5], tf.float64)
    v = tf.constant([1.0, 2.0], tf.float64)
    a = tf.constant([0.7, 1.1], tf.float64)
    in_step = []

    def paused():
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.sin(x)
                in_step.append(outer._tape.sync is not None and outer._tape.sync is inner._tape.sync)
                with inner.stop_recording():
                    z = y * 3.0  # (outer only)
                assert outer._tape.sync is None  # (recorded alone: out of step)
                w = tf.tanh(y) * z
            g = inner.gradient(w, x)
        return g, outer.gradient(g, x)

    def tangents():
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.autodiff.ForwardAccumulator(x, v) as acc:
                with tf.GradientTape() as inner:
                    inner.watch(x)
                    y = tf.reduce_sum(tf.tanh(tf.sin(x) * a))
                g = inner.gradient(y, x)
            jvp = acc.jvp(g)
        return g, jvp, outer.gradient(jvp, x)

    def watching_other():
        with tf.GradientTape() as outer:
            outer.watch(a)
            with tf.GradientTape() as inner:
                inner.watch(x)
                inner.watch(a)
                s = tf.sin(x)  # (inner only)
                y = tf.reduce_sum(tf.tanh(s * a))
            g = inner.gradient(y, [x, a])
        return g, outer.gradient(g, a)

    for fn in (paused, tangents, watching_other):
        want, got = _both(fn, calls=5)
        for g in got:
            _close(want, g)
    assert followed.count(True) >= 6
    assert in_step[-1] or replay.backprop.LAZY_MIN_OPS == 1  # (tapes following lazily check on their own)


def test_nested_tapes_in_step_on_two_threads_at_once(fresh):
    # Each thread has its own tape stack: tapes in step on one thread never take another thread's checks,
    # though both follow the same templates.
    import threading

    def d3(x):
        with tf.GradientTape() as t3:
            t3.watch(x)
            with tf.GradientTape() as t2:
                t2.watch(x)
                with tf.GradientTape() as t1:
                    t1.watch(x)
                    y = tf.tanh(x) * tf.sin(x)
                d1 = t1.gradient(y, x)
            d2 = t2.gradient(d1, x)
        return t3.gradient(d2, x)

    def want(v):  # d³/dx³ of tanh(x)·sin(x), by finite differences of the closed-form 2nd derivative
        def f2(u):
            t, s, c = np.tanh(u), np.sin(u), np.cos(u)
            sech2 = 1 - t * t
            return -2 * t * sech2 * s + 2 * sech2 * c - t * s
        h = 1e-5
        return (f2(v + h) - f2(v - h)) / (2 * h)

    errors = []

    def work(v):
        x = tf.constant(v, tf.float64)
        try:
            for _ in range(30):
                np.testing.assert_allclose(float(d3(x)), want(v), rtol=1e-6)
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(v,)) for v in (0.3, -1.1)]
    for th in threads:
        th.start()
    work(0.8)
    for th in threads:
        th.join()
    assert not errors


def test_variable_reads_along_a_template_and_their_departures(followed):
    # A training step's reads follow the template inline; a read that departs (another variable in the
    # same place, the same variable twice, a non-trainable or unwatched one, another shape) gets the
    # ordinary records and the gradients of the walk.
    x = tf.constant([[0.3, -0.2], [0.5, 0.1]])
    w1 = tf.Variable([[1.0, 2.0], [0.5, -1.0]])
    w2 = tf.Variable([[0.25, -0.5], [1.5, 0.75]])
    w3 = tf.Variable([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
    frozen = tf.Variable([[2.0, 0.0], [0.0, 3.0]], trainable=False)

    def f(a, b, watch_accessed=True):
        with tf.GradientTape(watch_accessed_variables=watch_accessed) as t:
            if not watch_accessed:
                t.watch(a)
            y = tf.reduce_sum(tf.tanh(tf.matmul(tf.matmul(x, a), b)))
        return t.gradient(y, [a, b])

    def want(a, b, da=True, db=True):
        av, bv = np.asarray(a.numpy(), np.float64), np.asarray(b.numpy(), np.float64)
        xa = x.numpy() @ av
        g = 1 - np.tanh(xa @ bv) ** 2
        ga = x.numpy().T @ (g @ bv.T)
        gb = xa.T @ g
        if a is b:
            return [ga + gb, ga + gb]
        return [ga if da else None, gb if db else None]

    def check(got, w):
        assert len(got) == len(w)
        for g, e in zip(got, w):
            if e is None:
                assert g is None
            else:
                np.testing.assert_allclose(g.numpy(), e, rtol=1e-5)

    for _ in range(4):
        check(f(w1, w2), want(w1, w2))
    assert followed[-2:] == [True, True]
    cases = [
        ((w2, w1), want(w2, w1)),  # the two reads' variables swapped (same shapes, same template)
        ((w1, w1), want(w1, w1)),  # one variable read twice: the positions repeat
        ((w1, frozen), want(w1, frozen, db=False)),  # a non-trainable variable: not watched, not recorded
        ((w1, w3), None),  # another shape
    ]
    for args, w in cases:
        for _ in range(3):
            got = f(*args)
            if w is None:
                assert got[1].shape == (2, 3)
                av, bv = w1.numpy(), w3.numpy()
                g = 1 - np.tanh(x.numpy() @ av @ bv) ** 2
                np.testing.assert_allclose(got[1].numpy(), (x.numpy() @ av).T @ g, rtol=1e-5)
            else:
                check(got, w)
        for _ in range(3):
            check(f(w1, w2), want(w1, w2))
    for _ in range(3):  # watch_accessed_variables=False: only the watched variable
        check(f(w1, w2, watch_accessed=False), want(w1, w2, db=False))
        check(f(w1, w2), want(w1, w2))


def test_a_followed_tape_asked_for_a_list_of_sources_gets_the_general_paths_answers(followed):
    # gradient(tensor, [variables and tensors]) on a followed tape calls its compiled replay at once; the
    # same list asked otherwise (an unwatched or unused source, one twice, the target itself, a structure
    # change mid-loop) gives what the general path gives.
    x = tf.constant([[0.3, -0.2], [0.5, 0.1]])
    w = tf.Variable([[1.0, 2.0], [0.5, -1.0]])
    b = tf.Variable([0.25, -0.5])
    unused = tf.Variable([1.0, 2.0])
    c = tf.constant([2.0, 3.0])

    def f(sources, scale=1.0, extra=False):
        with tf.GradientTape() as t:
            t.watch(x)
            h = tf.tanh(tf.matmul(x, w) + b)
            if extra:
                h = h * 2.0
            y = tf.reduce_sum(h * c) * scale
        srcs = [y if isinstance(s, str) else s for s in sources(x)]
        return t.gradient(y, srcs)

    def want(extra=False, scale=1.0):
        xv, wv, bv, cv = x.numpy(), w.numpy(), b.numpy(), c.numpy()
        g = (1 - np.tanh(xv @ wv + bv) ** 2) * cv * (2.0 if extra else 1.0) * scale
        return {"w": xv.T @ g, "b": g.sum(0), "x": g @ wv.T}

    def check(got, names, **kw):
        exp = want(**kw)
        assert len(got) == len(names)
        for g, n in zip(got, names):
            if n is None:
                assert g is None
            elif n == "one":
                np.testing.assert_allclose(g.numpy(), 1.0)
            else:
                np.testing.assert_allclose(g.numpy(), exp[n], rtol=1e-5)

    for _ in range(4):
        check(f(lambda x: [w, b]), ["w", "b"])
    assert followed[-2:] == [True, True]
    for _ in range(3):
        check(f(lambda x: [w, b]), ["w", "b"])
        check(f(lambda x: [b, w, x]), ["b", "w", "x"])  # another use of the same structure
        check(f(lambda x: [w, unused, c, b]), ["w", None, None, "b"])  # unused and unwatched sources
        check(f(lambda x: [w, w, b]), ["w", "w", "b"])  # one source twice
        check(f(lambda x: [w, "y"]), ["w", "one"])  # the target itself
        check(f(lambda x: [w, b], extra=True), ["w", "b"], extra=True)  # another structure
        check(f(lambda x: [w, b], scale=3.0), ["w", "b"], scale=3.0)


def test_nested_tapes_in_step_record_together_and_depart_together(followed):
    # Nested tapes in step take each op with one check; their saved tensors, a departure of the op (its
    # shape, an attr) or of one tape (an input only the inner tape watches) give the walk's derivatives.
    rng = np.random.default_rng(3)
    wn = rng.standard_normal((5, 5)) / 3
    w = tf.constant(wn)

    def hvp(x, v, extra=None, axis=None):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                u = tf.tanh(tf.linalg.matvec(w, x))
                if extra is not None:
                    inner.watch(extra)
                    u = u * extra
                y = tf.reduce_sum(tf.square(u) * tf.sin(x), axis=axis)
            g = inner.gradient(y, x)
        return outer.gradient(g, x, output_gradients=v)

    def want(x, v, e=1.0):
        xv, vv = x.numpy(), v.numpy()
        eps = 1e-6

        def grad(z):
            t = np.tanh(wn @ z)
            u = t * e
            return wn.T @ (2 * u * e * (1 - t * t) * np.sin(z)) + u * u * np.cos(z)

        return (grad(xv + eps * vv) - grad(xv - eps * vv)) / (2 * eps)

    x, v = tf.constant(rng.standard_normal(5)), tf.constant(rng.standard_normal(5))
    for _ in range(4):
        np.testing.assert_allclose(hvp(x, v).numpy(), want(x, v), rtol=1e-6, atol=1e-8)
    assert followed[-1] is True
    x2 = tf.constant(rng.standard_normal(5))
    e = tf.constant(np.full(5, 0.5))
    for _ in range(3):
        np.testing.assert_allclose(hvp(x2, v).numpy(), want(x2, v), rtol=1e-6, atol=1e-8)  # new values
        np.testing.assert_allclose(hvp(x, v, extra=e).numpy(), want(x, v, 0.5), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(hvp(x, v, axis=0).numpy(), want(x, v), rtol=1e-6, atol=1e-8)  # an attr
        np.testing.assert_allclose(hvp(x, v).numpy(), want(x, v), rtol=1e-6, atol=1e-8)
    x3, v3 = tf.constant(rng.standard_normal((5,))[:4]), tf.constant(rng.standard_normal(4))
    w4 = tf.constant(wn[:, :4])

    def hvp4(x, v):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.reduce_sum(tf.square(tf.tanh(tf.linalg.matvec(w4, x))))
            g = inner.gradient(y, x)
        return outer.gradient(g, x, output_gradients=v)

    for _ in range(3):  # another shape
        t = np.tanh(wn[:, :4] @ x3.numpy())
        d = 2 * (1 - t * t) * (1 - 3 * t * t)
        np.testing.assert_allclose(hvp4(x3, v3).numpy(), wn[:, :4].T @ (d * (wn[:, :4] @ v3.numpy())), rtol=1e-6)
