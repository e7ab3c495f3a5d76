"""tf.function: tracing, caching/retracing, input signatures, variables,
side effects, tf.print, graph text, compiled execution, gradients through
calls, tf.gradients/tf.hessians. Expected values pinned from TF 2.21."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.graph.graph import OperatorNotAllowedInGraphError, SymbolicTensor


# -- tracing and results -------------------------------------------------------

def test_function_gives_eager_results():
    @tf.function
    def f(x, y):
        return tf.reduce_sum(x * y + 1.0)

    x, y = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    out = f(x, y)
    assert out.dtype == tf.float32 and out.numpy() == 13.0


def test_inside_trace_tensors_are_symbolic():
    seen = []

    @tf.function
    def f(x):
        seen.append(x)
        assert not tf.executing_eagerly()
        return x + 1

    f(tf.constant([1, 2]))
    assert isinstance(seen[0], SymbolicTensor)
    assert seen[0].shape.as_list() == [2] and seen[0].dtype == tf.int32
    assert tf.executing_eagerly()


def test_numpy_and_bool_of_symbolic_tensor_raise():
    @tf.function
    def num(x):
        return x.numpy()

    with pytest.raises(AttributeError, match="'SymbolicTensor' object has no attribute 'numpy'"):
        num(tf.constant(1.0))

    @tf.function(autograph=False)
    def cond(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(OperatorNotAllowedInGraphError, match="as a Python `bool` is not allowed"):
        cond(tf.constant(1.0))
    assert issubclass(OperatorNotAllowedInGraphError, TypeError)


def test_shape_errors_surface_at_trace_time():
    @tf.function
    def f(a, b):
        return tf.matmul(a, b)

    with pytest.raises(tf.errors.InvalidArgumentError, match="MatMul"):
        f(tf.ones((2, 3)), tf.ones((2, 3)))


# -- caching and retracing -----------------------------------------------------

def test_python_scalars_1_1p0_true_share_one_trace():
    @tf.function
    def f(x):
        return x

    f(1)
    f(1.0)
    f(True)
    assert f.experimental_get_tracing_count() == 1
    f(2)
    assert f.experimental_get_tracing_count() == 2


def test_retrace_per_shape_and_dtype():
    @tf.function
    def f(x):
        return x * 2

    f(tf.ones([2]))
    f(tf.ones([2]))
    assert f.experimental_get_tracing_count() == 1
    f(tf.ones([3]))
    f(tf.ones([3], dtype=tf.float64))
    assert f.experimental_get_tracing_count() == 3


def test_reduce_retracing_generalizes_shapes():
    @tf.function(reduce_retracing=True)
    def f(x):
        return x * 2

    f(tf.ones([1]))
    f(tf.ones([2]))
    out = f(tf.ones([3]))
    assert f.experimental_get_tracing_count() == 2  # as TF
    np.testing.assert_array_equal(out.numpy(), [2, 2, 2])


def test_python_side_effects_only_while_tracing():
    log = []

    @tf.function
    def f(x):
        log.append("traced")
        return x + 1

    for _ in range(3):
        f(tf.constant(1.0))
    assert log == ["traced"]


def test_kwargs_and_defaults_canonicalize():
    @tf.function
    def f(x, scale=2.0):
        return x * scale

    assert f(tf.constant(3.0)).numpy() == 6.0
    assert f(x=tf.constant(3.0)).numpy() == 6.0
    assert f(tf.constant(3.0), scale=3.0).numpy() == 9.0
    assert f.experimental_get_tracing_count() == 2


def test_nested_structures_in_and_out():
    @tf.function
    def f(d):
        return {"sum": d["a"] + d["b"][0], "n": 3}

    out = f({"a": tf.constant(1.0), "b": [tf.constant(2.0)]})
    assert out["sum"].numpy() == 3.0 and out["n"] == 3


# -- input_signature and concrete functions --------------------------------------

def test_input_signature_accepts_compatible_and_rejects_others():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x):
        return x * 2

    np.testing.assert_array_equal(f(tf.constant([1.0])).numpy(), [2.0])
    np.testing.assert_array_equal(f([1.0, 2.0]).numpy(), [2.0, 4.0])
    assert f.experimental_get_tracing_count() == 1
    with pytest.raises(TypeError, match="Binding inputs to tf.function"):
        f(tf.constant([1, 2]))
    with pytest.raises(TypeError, match="Can not cast TensorSpec"):
        f(tf.constant([[1.0]]))


def test_tensor_spec_repr_and_compat():
    spec = tf.TensorSpec(shape=[None, 3], dtype=tf.float32)
    assert repr(spec) == "TensorSpec(shape=(None, 3), dtype=tf.float32, name=None)"
    assert spec.is_compatible_with(tf.ones((5, 3)))
    assert not spec.is_compatible_with(tf.ones((5, 4)))


def test_get_concrete_function_with_specs_and_call():
    @tf.function
    def f(x):
        return x + 1.0

    cf = f.get_concrete_function(tf.TensorSpec([None], tf.float32))
    np.testing.assert_array_equal(cf(tf.constant([1.0, 2.0])).numpy(), [2.0, 3.0])
    assert f.experimental_get_tracing_count() == 1
    f(tf.constant([5.0, 6.0, 7.0]))  # compatible with the traced (None,) signature
    assert f.experimental_get_tracing_count() == 1
    with pytest.raises(tf.errors.InvalidArgumentError):  # as TF 2.21
        cf(tf.constant([1, 2]))


# -- variables ----------------------------------------------------------------

def test_captured_variables_are_read_at_run_time():
    v = tf.Variable(1.0)

    @tf.function
    def f(x):
        return v * x

    assert f(tf.constant(2.0)).numpy() == 2.0
    v.assign(5.0)
    assert f(tf.constant(2.0)).numpy() == 10.0
    assert f.experimental_get_tracing_count() == 1


def test_variable_reads_and_assigns_in_program_order():
    v = tf.Variable(1.0)

    @tf.function
    def f():
        a = v.read_value()
        v.assign_add(10.0)
        b = v.read_value()
        v.assign(b * 2.0)
        return a, b, v.read_value()

    a, b, c = f()
    assert (a.numpy(), b.numpy(), c.numpy()) == (1.0, 11.0, 22.0)
    assert v.numpy() == 22.0


def test_variable_created_only_on_first_call():
    class Model(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = None

        @tf.function
        def __call__(self, x):
            if self.v is None:
                self.v = tf.Variable(tf.ones_like(x) * 2.0)
            return self.v * x

    m = Model()
    np.testing.assert_array_equal(m(tf.constant([1.0, 2.0])).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(m(tf.constant([3.0, 4.0])).numpy(), [6.0, 8.0])


def test_variable_created_on_every_trace_raises():
    @tf.function
    def f(x):
        v = tf.Variable(1.0)
        return v + x

    with pytest.raises(ValueError, match="only supports singleton tf.Variables created on the first call"):
        f(tf.constant(1.0))


def test_module_method_training_step():
    class Linear(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable([[1.0], [2.0]])
            self.b = tf.Variable([0.5])

        @tf.function
        def step(self, x, y, lr):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(tf.matmul(x, self.w) + self.b - y))
            gw, gb = tape.gradient(loss, [self.w, self.b])
            self.w.assign_sub(lr * gw)
            self.b.assign_sub(lr * gb)
            return loss

    m = Linear()
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    y = tf.constant([[1.0], [2.0]])
    losses = [float(m.step(x, y, 0.01)) for _ in range(3)]
    # Same step written eagerly.
    w, b = np.array([[1.0], [2.0]], np.float32), np.array([0.5], np.float32)
    xn, yn = x.numpy(), y.numpy()
    for expect in losses:
        r = xn @ w + b - yn
        assert abs(np.mean(r ** 2) - expect) < 1e-4
        w, b = w - 0.01 * (2 * xn.T @ r / 2), b - 0.01 * np.mean(2 * r, axis=0)
    np.testing.assert_allclose(m.w.numpy(), w, rtol=1e-5)
    assert m.step.experimental_get_tracing_count() == 1


# -- tf.print -----------------------------------------------------------------

def test_tf_print_prints_at_run_time(capsys):
    @tf.function
    def f(x):
        tf.print("x is", x, [1, 2])
        return x

    f(tf.constant([1, 2, 3, 4, 5]))
    f(tf.constant([1, 2, 3, 4, 6]))
    err = capsys.readouterr().err
    assert err == "x is [1 2 3 4 5] [1, 2]\nx is [1 2 3 4 6] [1, 2]\n"


def test_tf_print_formats_as_tf(capsys):
    tf.print(tf.constant(1.5), tf.constant([[1, 2], [3, 4]]), output_stream=sys.stdout)
    assert capsys.readouterr().out == "1.5 [[1 2]\n [3 4]]\n"


# -- printable graphs (golden text) -------------------------------------------------

def test_graph_text_forward():
    @tf.function
    def f(x, y):
        return tf.reduce_sum(tf.sin(x) * y, axis=0)

    cf = f.get_concrete_function(tf.TensorSpec([2, 3], tf.float32), tf.TensorSpec([3], tf.float32))
    assert cf.as_text() == (
        "def f(%0: float32[2,3], %1: float32[3]) {\n"
        "  %2: float32[2,3] = Sin(%0)\n"
        "  %3: float32[2,3] = Mul(%2, %1)\n"
        "  %4: float32[3] = Sum(%3) {axis=(0,), keepdims=False}\n"
        "  return (%4)\n"
        "}"
    )


def test_graph_text_backward():
    @tf.function
    def f(x):
        return tf.sin(x) * 2.0

    cf = f.get_concrete_function(tf.TensorSpec([3], tf.float32))
    assert cf.backward_function().as_text() == (
        "def f_backward(%0: float32[3], %1: float32[3]) {\n"
        "  %2: float32[3] = Mul(%0, float32[](2.0))\n"
        "  %3: float32[3] = Cos(%1)\n"
        "  %4: float32[3] = Mul(%2, %3)\n"
        "  return (%4)\n"
        "}"
    )


def test_graph_text_variables_and_unknown_dims():
    v = tf.Variable(tf.ones((3,)), name="w")

    @tf.function
    def f(x):
        v.assign_add(x[0])
        return v * 2.0

    text = f.get_concrete_function(tf.TensorSpec([None, 3], tf.float32)).as_text()
    assert "def f(%0: float32[?,3]) {" in text
    assert "AssignAddVariableOp(%1) {variable='w:0'}" in text
    assert "ReadVariableOp() {variable='w:0'}" in text


# -- compiled execution -----------------------------------------------------------

def test_compiler_folds_constants_merges_and_drops_dead_code():
    @tf.function
    def f(x):
        c = tf.constant(2.0) * tf.constant(3.0)  # folded
        a = tf.sin(x)
        b = tf.sin(x)  # merged with a
        _ = tf.exp(x)  # dead
        return a * b * c

    cf = f.get_concrete_function(tf.TensorSpec([], tf.float32))
    compiled = cf._gf.compiled()
    assert compiled.num_ops == 3  # sin, mul, mul
    assert "exp" not in compiled.source.lower()
    np.testing.assert_allclose(f(tf.constant(0.5)).numpy(), np.sin(0.5) ** 2 * 6, rtol=1e-6)


def test_run_time_kernel_error_names_the_op():
    @tf.function
    def f(x, i):
        return tf.gather(x, i)

    with pytest.raises(tf.errors.InvalidArgumentError):
        f(tf.constant([1.0, 2.0]), tf.constant(5))


# -- gradients through function calls ------------------------------------------------

def test_call_under_tape_records_one_op():
    @tf.function
    def f(x):
        return tf.sin(x) * x

    x = tf.constant(1.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert [r.type for r in tape._tape.records] == ["StatefulPartitionedCall"]
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.cos(1.0) + np.sin(1.0), rtol=1e-6)


def test_gradient_through_call_to_captured_variable():
    v = tf.Variable([1.0, 2.0])

    @tf.function
    def f(x):
        return tf.reduce_sum(v * v * x)

    with tf.GradientTape() as tape:
        y = f(tf.constant(3.0))
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [6.0, 12.0])


def test_second_and_third_order_through_calls():
    @tf.function
    def f(x):
        return x * x * x

    x = tf.constant(2.0)
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = f(x)
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    assert (d1.numpy(), d2.numpy(), d3.numpy()) == (12.0, 12.0, 6.0)


def test_backward_function_built_once():
    @tf.function
    def f(x):
        return tf.exp(x)

    cf = f.get_concrete_function(tf.TensorSpec([], tf.float32))
    for _ in range(3):
        x = tf.constant(0.5)
        with tf.GradientTape() as t:
            t.watch(x)
            y = f(x)
        t.gradient(y, x)
    assert cf._gf.backward() is cf._gf.backward()


def test_tape_inside_function_and_nested_function_calls():
    @tf.function
    def inner(x):
        return x * x

    @tf.function
    def outer(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = inner(x) + x
        return t.gradient(y, x)

    assert outer(tf.constant(3.0)).numpy() == 7.0


# -- tf.gradients / tf.hessians ------------------------------------------------------

def test_tf_gradients_in_function():
    @tf.function
    def f(x, y):
        z = x * y + tf.sin(x)
        return tf.gradients(z, [x, y])

    gx, gy = f(tf.constant(1.0), tf.constant(2.0))
    np.testing.assert_allclose([gx.numpy(), gy.numpy()], [2.0 + np.cos(1.0), 1.0], rtol=1e-6)


def test_tf_gradients_options():
    @tf.function
    def f(x, y):
        a = x * 2.0
        z = a * x
        g_stop = tf.gradients(z, x, stop_gradients=[a])[0]
        g_gy = tf.gradients(z, x, grad_ys=tf.constant(3.0))[0]
        none = tf.gradients(z, y)[0]
        zero = tf.gradients(z, y, unconnected_gradients="zero")[0]
        return g_stop, g_gy, none is None, zero

    g_stop, g_gy, none_is_none, zero = f(tf.constant(2.0), tf.constant(1.0))
    assert (g_stop.numpy(), g_gy.numpy(), none_is_none, zero.numpy()) == (4.0, 24.0, True, 0.0)


def test_tf_gradients_and_hessians_raise_eagerly():
    with pytest.raises(RuntimeError, match="tf.gradients is not supported when eager execution is enabled"):
        tf.gradients(tf.constant(1.0), tf.constant(1.0))
    with pytest.raises(RuntimeError):
        tf.hessians(tf.constant(1.0), tf.constant(1.0))


def test_tf_hessians_in_function():
    @tf.function
    def h(x):
        return tf.hessians(tf.reduce_sum(x ** 3), x)

    (out,) = h(tf.constant([1.0, 2.0]))
    np.testing.assert_array_equal(out.numpy(), [[6.0, 0.0], [0.0, 12.0]])


def test_tf_gradients_wrt_variable():
    v = tf.Variable(3.0)

    @tf.function
    def f():
        return tf.gradients(v * v, v)[0]

    assert f().numpy() == 6.0


# -- unknown dimensions and training steps ---------------------------------------------

def _linear_step(w, b):
    def step(x, y):
        with tf.GradientTape() as t:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        gw, gb = t.gradient(loss, [w, b])
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)
        return loss

    return step


def test_training_step_with_unknown_batch_dim_in_signature():
    w, b = tf.Variable(tf.ones((3, 2))), tf.Variable(tf.zeros((2,)))
    step = tf.function(_linear_step(w, b), input_signature=[tf.TensorSpec([None, 3]), tf.TensorSpec([None, 2])])
    assert step(tf.ones((4, 3)), tf.zeros((4, 2))).numpy() == 9.0
    np.testing.assert_allclose(w.numpy(), np.full((3, 2), 0.7), rtol=1e-6)
    step(tf.ones((5, 3)), tf.zeros((5, 2)))
    with pytest.raises(TypeError):
        step(tf.ones((5, 4)), tf.zeros((5, 2)))


def test_reduce_retracing_training_step_with_partial_batch():
    w, b = tf.Variable(tf.ones((3, 2))), tf.Variable(tf.zeros((2,)))
    step = tf.function(_linear_step(w, b), reduce_retracing=True)
    for n in (8, 8, 3, 8):
        loss = step(tf.ones((n, 3)), tf.zeros((n, 2)))
    assert np.isfinite(loss.numpy())


def test_keras_style_adam_step_matches_eager():
    opt_cls = pytest.importorskip("tapeflow.keras.optimizers").Adam
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((16, 4)).astype(np.float32))
    y = tf.constant(rng.standard_normal((16, 1)).astype(np.float32))
    results = []
    for use_function in (False, True):
        w = tf.Variable(tf.zeros((4, 1)))
        opt = opt_cls(learning_rate=0.05)

        def step():
            with tf.GradientTape() as t:
                loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
            opt.apply_gradients([(t.gradient(loss, w), w)])
            return loss

        fn = tf.function(step) if use_function else step
        results.append([float(fn()) for _ in range(5)] + [w.numpy().copy()])
    np.testing.assert_allclose(results[0][:5], results[1][:5], rtol=1e-6)
    np.testing.assert_allclose(results[0][5], results[1][5], rtol=1e-6)


def test_run_time_checks_run_at_every_call():
    from tapeflow.graph.functional_ops import run_check

    def positive(x):
        if not np.all(x > 0):
            raise tf.errors.InvalidArgumentError(None, None, "x must be positive")

    @tf.function
    def f(x):
        run_check(positive, [x])
        return x * 2.0

    assert f(tf.constant([1.0])).numpy()[0] == 2.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="x must be positive"):
        f(tf.constant([-1.0]))
    assert f.experimental_get_tracing_count() == 1


def test_scalar_float64_graphs_run_on_python_floats_with_numpy_fallback():
    @tf.function
    def f(x, y):
        return tf.sin(x) / y * 2.0

    x, y = tf.constant(np.float64(0.5)), tf.constant(np.float64(4.0))
    cf = f.get_concrete_function(x, y)
    assert "_m.sin(a0)" in cf._gf.compiled().source
    out = f(x, y)
    assert out.dtype == tf.float64 and out.numpy() == np.sin(0.5) / 4.0 * 2.0
    assert f(x, tf.constant(np.float64(0.0))).numpy() == np.inf  # x / 0: NumPy's (TF's) inf, not an exception


def test_compiled_source_frees_temporaries():
    @tf.function
    def f(x):
        return tf.exp(tf.sin(x) * 2.0) + 1.0

    src = f.get_concrete_function(tf.TensorSpec([3], tf.float32))._gf.compiled().source
    assert "del t0" in src


def test_first_trace_that_creates_variables_is_traced_twice_as_tf():
    class M(tf.Module):
        def __init__(self):
            super().__init__()
            self.v = None

        @tf.function
        def __call__(self, x):
            if self.v is None:
                self.v = tf.Variable(2.0)
            return self.v * x

    m = M()
    m(tf.constant(1.0))
    m(tf.constant(2.0))
    assert m.__call__.experimental_get_tracing_count() == 2  # TF 2.21 gives 2


def test_unknown_rank_concrete_function_serves_later_calls():
    @tf.function
    def f(x):
        return x

    f.get_concrete_function(tf.TensorSpec(None, tf.float32))
    f(tf.constant([[1.0]]))
    f(tf.constant(1.0))
    assert f.experimental_get_tracing_count() == 1


def test_init_scope_runs_eagerly_inside_a_trace():
    seen = []

    @tf.function
    def f(x):
        with tf.init_scope():
            seen.append(tf.executing_eagerly())
            c = tf.constant(2.0) * 3.0
        return x * c

    assert f(tf.constant(1.0)).numpy() == 6.0 and seen == [True]


def test_numpy_function_and_py_function_run_at_call_time():
    calls = []

    def rev(a):
        calls.append(1)
        return np.sort(a)[::-1].copy()

    @tf.function
    def f(x):
        return tf.numpy_function(rev, [x], tf.float32), tf.py_function(lambda a: tf.sin(a) * a, [x], tf.float32)

    y, z = f(tf.constant([3.0, 1.0, 2.0]))
    f(tf.constant([3.0, 1.0, 2.0]))
    np.testing.assert_array_equal(y.numpy(), [3.0, 2.0, 1.0])
    np.testing.assert_allclose(z.numpy(), np.sin([3.0, 1.0, 2.0]) * [3.0, 1.0, 2.0], rtol=1e-6)
    assert len(calls) == 2  # once per call, never while tracing


def test_py_function_gradients_first_and_second_order():
    @tf.function
    def g(x):
        with tf.GradientTape() as t:
            t.watch(x)
            z = tf.py_function(lambda a: tf.sin(a) * a, [x], tf.float32)
        return t.gradient(z, x)

    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t2:
        t2.watch(x)
        d = g(x)
    xs = np.array([1.0, 2.0])
    np.testing.assert_allclose(d.numpy(), np.cos(xs) * xs + np.sin(xs), rtol=1e-6)
    np.testing.assert_allclose(t2.gradient(d, x).numpy(), -np.sin(xs) * xs + 2 * np.cos(xs), rtol=1e-5)


def test_returning_a_tensorshape_raises_at_once_without_a_per_shape_retrace(capsys):
    # TF 2.21: the TypeError comes from the one trace at the signature's shape; the function body runs once
    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def shapes(x):
        print("traced", x.shape)
        return tf.reshape(x, [-1]).shape

    with pytest.raises(TypeError, match="found return value of type TensorShape"):
        shapes(tf.ones((2, 3)))
    assert capsys.readouterr().out == "traced (None, 3)\n"
