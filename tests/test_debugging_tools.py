"""tf.debugging tools: tape statistics, growth warning, DOT/SVG/PNG pictures,
TF's assert_* checks (values pinned against TF 2.21)."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

import tapeflow as tf


@pytest.fixture(autouse=True)
def _debug_off():
    tf.debugging.set_source_tracking(False)  # even under TAPEFLOW_DEBUG=1
    yield
    tf.debugging.set_source_tracking(False)
    tf.debugging.disable_strict_gradients()
    tf.debugging.disable_check_numerics()


# -- tape statistics -----------------------------------------------------------------

def test_tape_stats_counts_records_saved_tensors_and_bytes():
    w = tf.Variable(np.ones((4, 3), dtype=np.float64))
    x = tf.constant(np.ones((2, 4)))
    with tf.GradientTape(persistent=True) as tape:
        h = tf.matmul(x, w)  # MatMul saves both inputs (x, and the read of w)
        y = tf.reduce_sum(tf.tanh(h))  # Tanh saves its output
    st = tf.debugging.tape_stats(tape)
    assert st.records == 4 and st.ops["ReadVariableOp"] == st.ops["Tanh"] == st.ops["Sum"] == 1
    assert st.saved_tensors >= 3
    assert st.saved_bytes >= 8 * (8 + 12 + 6)
    assert st.watched_variables == 1 and st.persistent
    assert "4 records" in str(st) and "persistent" in str(st)
    tape.gradient(y, w)
    assert tf.debugging.tape_stats(tape).records == 4


def test_tape_stats_of_consumed_tape_is_empty():
    x = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        y = x * x
    tape.gradient(y, x)
    st = tf.debugging.tape_stats(tape)
    assert (st.records, st.saved_tensors, st.saved_bytes) == (0, 0, 0)


def test_persistent_tape_growing_across_steps_warns_once():
    tf.debugging.set_source_tracking(True)
    w = tf.Variable(1.0)
    tape = tf.GradientTape(persistent=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(8):
            with tape:  # re-entered each step: records pile up
                loss = w * w
            tape.gradient(loss, w)
    grown = [c for c in caught if issubclass(c.category, tf.debugging.TapeGrowthWarning)]
    assert len(grown) == 1
    assert "tape.reset()" in str(grown[0].message) and "records" in str(grown[0].message)


def test_growth_warning_on_its_own_switch():
    tf.debugging.enable_tape_growth_warning(steps=3)
    try:
        w = tf.Variable(1.0)
        tape = tf.GradientTape(persistent=True)
        with pytest.warns(tf.debugging.TapeGrowthWarning, match="last 3 gradient"):
            for _ in range(4):
                with tape:
                    loss = w * w
                tape.gradient(loss, w)
    finally:
        tf.debugging.disable_tape_growth_warning()
    assert tf.GradientTape.gradient.__qualname__ == "GradientTape.gradient"  # unpatched again


def test_fresh_tape_per_step_does_not_warn():
    tf.debugging.set_source_tracking(True)
    w = tf.Variable(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", tf.debugging.TapeGrowthWarning)
        for _ in range(8):
            with tf.GradientTape(persistent=True) as tape:
                loss = w * w
            tape.gradient(loss, w)


# -- pictures ------------------------------------------------------------------------

def _model_tape():
    w = tf.Variable([[1.0], [2.0]])
    b = tf.Variable(0.5, trainable=False)
    x = tf.constant([[3.0, 4.0]])
    with tf.GradientTape(persistent=True) as tape:
        y = tf.reduce_sum(tf.tanh(tf.matmul(x, w)) + tf.stop_gradient(w) * b)
    return tape, y, w, b


def test_tape_to_dot_marks_ops_shapes_sources_and_target():
    tape, y, w, b = _model_tape()
    dot = tf.debugging.tape_to_dot(tape, y, [w, b])
    assert dot.startswith("digraph tape {") and dot.rstrip().endswith("}")
    assert "MatMul" in dot and '"Tanh\\nfloat32[1,1]"' in dot
    assert "fillcolor=palegreen" in dot and "source 0\\nfloat32[2,1]" in dot
    assert "fillcolor=lightblue" in dot and "target 0\\nfloat32[]" in dot
    # b is non-trainable: its broken path is drawn in red with the cause.
    assert "non_trainable_variable" in dot and "color=red" in dot


def test_tape_to_dot_draws_unrecorded_ops_with_tracking():
    tf.debugging.set_source_tracking(True)
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y = tf.stop_gradient(x * 2.0) * 3.0
    dot = tf.debugging.tape_to_dot(tape, y, x)
    assert "StopGradient" in dot and "[stop_gradient]" in dot and "style=\"rounded,dashed\"" in dot
    assert "test_debugging_tools.py:" in dot


def test_tape_to_dot_without_target_is_just_the_records():
    tape, y, w, b = _model_tape()
    dot = tf.debugging.tape_to_dot(tape)
    assert "palegreen" not in dot and dot.count("shape=box") == 6
    assert 'label="constant #' in dot  # x: an input the tape does not watch


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
def test_render_png_and_svg(tmp_path):
    tape, y, w, b = _model_tape()
    dot = tf.debugging.tape_to_dot(tape, y, [w, b])
    png = tf.debugging.render_dot(dot, str(tmp_path / "tape.png"))
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    svg = tf.debugging.render_dot(dot, str(tmp_path / "tape.svg"))
    with open(svg) as f:
        assert "<svg" in f.read()


def test_render_without_dot_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(FileNotFoundError, match="Graphviz"):
        tf.debugging.render_dot("digraph {}", str(tmp_path / "x.png"))


# -- TF's assert_* ----------------------------------------------------------------------

def test_assert_equal_passes_and_fails_like_tf():
    assert tf.debugging.assert_equal(tf.constant([1, 2, 3]), tf.constant([1, 2, 3])) is None
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.debugging.assert_equal(tf.constant([1, 2, 3]), tf.constant([1, 5, 3]))
    assert str(info.value).startswith(
        "Condition x == y did not hold.\nIndices of first 1 different values:\n[[1]]\n"
        "Corresponding x values:\n[2]\nCorresponding y values:\n[5]")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Incompatible shapes: \[3\] vs. \[2\]"):
        tf.debugging.assert_equal(tf.constant([1, 2, 3]), tf.constant([1, 2]))


def test_assert_comparisons_and_signs():
    tf.debugging.assert_less(tf.constant([1.0]), tf.constant([2.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Condition x < y did not hold"):
        tf.debugging.assert_less(tf.constant([1.0, 2.0]), tf.constant([1.0, 3.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Condition x != y did not hold"):
        tf.debugging.assert_none_equal(tf.constant([1, 2]), tf.constant([3, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Condition x > 0 did not hold element-wise"):
        tf.debugging.assert_positive(tf.constant([1.0, -2.0]))
    tf.debugging.assert_non_negative(tf.constant([0.0, 2.0]))


def test_assert_near_uses_tf_default_tolerance():
    tf.debugging.assert_near(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.000001]))  # within 10 eps (float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not equal to tolerance"):
        tf.debugging.assert_near(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.1]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        x64 = tf.constant([1.0, 2.0], dtype=tf.float64)
        tf.debugging.assert_near(x64, tf.constant([1.0, 2.0000001], dtype=tf.float64))



def _message(fn, *args, **kwargs) -> str:
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        fn(*args, **kwargs)
    return str(info.value)


def test_assertion_texts_are_tfs():
    # TF 2.21's eager texts: differing entries only for two equal non-scalar shapes; summarize 0 / < 0;
    # assert_near and Assert summarize as TF's Assert ("..." past summarize, the condition as given).
    eq = tf.debugging.assert_equal
    assert _message(eq, tf.constant(1), tf.constant(2), message="nope") == (
        "nope\nCondition x == y did not hold.\nFirst 1 elements of x:\n[1]\nFirst 1 elements of y:\n[2]")
    assert _message(eq, tf.constant([1, 2]), tf.constant(1)) == (
        "Condition x == y did not hold.\nFirst 2 elements of x:\n[1 2]\nFirst 1 elements of y:\n[1]")
    x, y = tf.constant([1, 2, 3, 4, 5]), tf.constant([0, 2, 0, 4, 0])
    assert _message(eq, x, y, summarize=0) == "Condition x == y did not hold."
    assert _message(eq, x, y, summarize=-1) == (
        "Condition x == y did not hold.\nIndices of first 3 different values:\n[[0]\n [2]\n [4]]\n"
        "Corresponding x values:\n[1 3 5]\nCorresponding y values:\n[0 0 0]\nFirst 5 elements of x:\n"
        "[1 2 3 4 5]\nFirst 5 elements of y:\n[0 2 0 4 0]")
    head = "Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: "
    assert _message(tf.debugging.assert_near, tf.constant([1.0, 2, 3, 4, 5]), tf.constant([1.0, 2, 3, 4, 6]),
                    message="mine") == (
        head + "b'mine.  '\nb'x and y not equal to tolerance rtol = tf.Tensor(1.1920929e-06, shape=(), "
        "dtype=float32), atol = tf.Tensor(1.1920929e-06, shape=(), dtype=float32)'\nb'x (shape=(5,) "
        "dtype=float32) = '\n1.0, 2.0, 3.0, ...\nb'y (shape=(5,) dtype=float32) = '\n1.0, 2.0, 3.0, ...")
    assert _message(tf.debugging.Assert, False, ["msg", tf.constant([0.1, 0.2, 0.3, 0.4])]) == (
        "Expected 'False' to be true. Summarized data: b'msg'\n0.1, 0.2, 0.3, ...")
    assert _message(tf.debugging.Assert, False, [tf.constant([1, 2]), "x"], summarize=0) == (
        "Expected 'False' to be true. Summarized data: ...\n")

def test_assert_rank_type_shapes_all_finite():
    with pytest.raises(ValueError, match="must have rank 2.  Received rank 1, shape \\(2,\\)"):
        tf.debugging.assert_rank(tf.constant([1.0, -2.0]), 2)
    with pytest.raises(TypeError, match="tensor must be of type tf.int32; got tf.float32"):
        tf.debugging.assert_type(tf.constant([1.0]), tf.int32)
    tf.debugging.assert_shapes([(tf.zeros((2, 3)), ("N", "D")), (tf.zeros((3,)), ("D",))])
    with pytest.raises(ValueError, match="dimension 0 must have size 3.  Received size 2, shape \\(2,\\)"):
        tf.debugging.assert_shapes([(tf.zeros((2, 3)), ("N", "D")), (tf.zeros((2,)), ("D",))])
    assert tf.debugging.assert_all_finite(tf.constant([1.0, 2.0]), "bad").numpy().tolist() == [1.0, 2.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="bad : Tensor had NaN values"):
        tf.debugging.assert_all_finite(tf.constant([1.0, np.nan]), "bad")
    assert tf.debugging.is_numeric_tensor(tf.constant([1, 2]))
    assert not tf.debugging.is_numeric_tensor(tf.constant([True]))


# -- tf.function graphs and retracing -----------------------------------------------------

def _traced():
    w = tf.Variable(2.0)

    @tf.function
    def f(x, n):
        return tf.reduce_sum(tf.tanh(x * w)) * n

    return f


def test_graph_to_dot_forward_and_backward():
    f = _traced()
    dot = tf.debugging.graph_to_dot(f, tf.constant([1.0, 2.0]), 2, backward=True)
    assert "cluster_f" in dot and 'label="forward: f"' in dot and "cluster_b" in dot
    assert '"Placeholder\\nx\\nfloat32[2]"' in dot and "fillcolor=palegreen" in dot
    assert "variable 'Variable" in dot and '"Tanh\\nfloat32[2]"' in dot
    assert dot.count("fillcolor=lightblue") >= 2  # the forward output and the gradient output


def test_graph_to_dot_rejects_plain_python_function():
    with pytest.raises(TypeError, match="tf.function"):
        tf.debugging.graph_to_dot(lambda x: x)


def test_retrace_logging_names_argument_and_change(caplog):
    f = _traced()
    tf.debugging.enable_retrace_logging()
    try:
        with caplog.at_level("WARNING", logger="tapeflow.debugging"):
            f(tf.constant([1.0, 2.0]), 2)
            f(tf.constant([3.0, 4.0]), 2)  # cached: no retrace
            f(tf.constant([1.0, 2.0]), 3)
            f(tf.constant([1.0, 2.0, 3.0]), 3)
            f(tf.constant([[1.0, 2.0]]), 3)
    finally:
        tf.debugging.disable_retrace_logging()
    msgs = [r.getMessage() for r in caplog.records if r.name == "tapeflow.debugging"]
    assert msgs == [
        "tf.function 'f' is retracing (trace #2): argument 'n': Python value 2 -> 3 (each new Python value "
        "traces again; pass a tensor instead)",
        "tf.function 'f' is retracing (trace #3): argument 'x': shape (2,) -> (3,)",
        "tf.function 'f' is retracing (trace #4): argument 'x': shape (2,) -> (1, 2)",
    ]
    assert f.experimental_get_tracing_count() == 4


def test_retrace_dtype_change_is_named():
    from tapeflow.debugging.graph_view import explain_retrace

    f = _traced()
    old = (tuple, (tuple, ("T", (2,), np.dtype("float32")), ("P", 2)), ("D",))
    new = (tuple, (tuple, ("T", (2,), np.dtype("float64")), ("P", 2)), ("D",))
    assert explain_retrace(f, new, [old]) == "argument 'x': dtype float32 -> float64"


def test_debug_modes_do_not_disturb_tracing_and_running_functions():
    tf.debugging.set_source_tracking(True)
    tf.debugging.enable_check_numerics()
    f = _traced()
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x, 2)
    expected = 2 * np.sum(np.tanh(np.array([2.0, 4.0], np.float32)))
    assert float(y) == pytest.approx(expected, rel=1e-6)
    g = tape.gradient(y, x).numpy()
    assert np.allclose(g, 2 * 2 * (1 - np.tanh([2.0, 4.0]) ** 2), rtol=1e-3)  # float32 1 - tanh^2


def test_assert_op_and_rank_dtype_checks_match_tf_messages():
    assert tf.debugging.Assert(tf.constant(True), [tf.constant([1.0, 2.0])]) is None
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.debugging.Assert(tf.constant(False), [tf.constant([1.0, 2.0]), "hello"])
    assert str(info.value) == ("Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: "
                               "1.0, 2.0\nb'hello'")
    with pytest.raises(ValueError, match=r"^Expected scalar shape, saw shape: \(1,\)\.$"):
        tf.debugging.assert_scalar(tf.constant([1.0]))
    tf.debugging.assert_scalar(tf.constant(1.0))
    with pytest.raises(TypeError, match="to be integer type.  Found: tensor of dtype <dtype: 'float32'>"):
        tf.debugging.assert_integer(tf.constant(1.0))
    tf.debugging.assert_integer(tf.constant(1))
    with pytest.raises(ValueError, match=r"must have rank at least 2.  Received rank 1, shape \(1,\)"):
        tf.debugging.assert_rank_at_least(tf.constant([1.0]), 2)
    with pytest.raises(ValueError, match=r"must have rank in \(0, 2\).  Received rank 1, shape \(1,\)"):
        tf.debugging.assert_rank_in(tf.constant([1.0]), [0, 2])
