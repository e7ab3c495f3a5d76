"""tf.debugging: explain_gradient (every None cause, made the way a user
would), strict mode, source tracking, check_numerics forward/backward."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.debugging import explain as ex
from tapeflow.framework.context import state

THIS = "test_debugging.py"


def _here() -> int:
    return sys._getframe(1).f_lineno


@pytest.fixture(autouse=True)
def _debug_off():
    tf.debugging.set_source_tracking(False)  # even under TAPEFLOW_DEBUG=1
    yield
    tf.debugging.set_source_tracking(False)
    tf.debugging.disable_strict_gradients()
    tf.debugging.disable_check_numerics()


@pytest.fixture
def tracking():
    tf.debugging.set_source_tracking(True)
    yield


def _one(report):
    assert len(report) == 1
    return report[0]


# -- switches ------------------------------------------------------------------

def test_everything_off_by_default_leaves_core_untouched():
    from tapeflow.eager import backprop
    from tapeflow.framework.tensor import Tensor

    assert state.debug_hook is None and not state.recording
    assert backprop.debug_op_gradients is None
    tf.debugging.set_source_tracking(True)
    assert state.debug_hook is not None and state.recording
    tf.debugging.set_source_tracking(False)
    assert state.debug_hook is None and not state.recording
    assert "numpy" in Tensor.__dict__ and Tensor.numpy.__qualname__ == "Tensor.numpy"
    assert tf.GradientTape.gradient.__qualname__ == "GradientTape.gradient"
    assert tf.constant.__module__ == "tapeflow.framework.tensor"


def test_source_tracking_stamps_tape_records(tracking):
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.sin(x)
        line = _here() - 1
    rec = tape._tape.records[-1]
    assert rec.type == "Sin"
    assert rec.source_info.endswith(f"{THIS}:{line} (in test_source_tracking_stamps_tape_records)")
    assert float(tape.gradient(y, x)) == pytest.approx(np.cos(2.0))


def test_source_tracking_context_manager_restores():
    with tf.debugging.source_tracking():
        assert tf.debugging.is_source_tracking_enabled()
    assert not tf.debugging.is_source_tracking_enabled()


def test_debug_mode_keeps_numbers_and_numpy_values(tracking):
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(x * x)
    assert tape.gradient(y, x).numpy().tolist() == [2.0, 4.0]
    a = tf.constant([1.0, 2.0]).numpy()
    assert isinstance(a, np.ndarray) and repr(a) == "array([1., 2.], dtype=float32)"
    assert float(tf.constant(3.0).numpy()) == 3.0


# -- explain_gradient: one test per cause ----------------------------------------

def test_never_watched_tensor_names_creation_line(tracking):
    x = tf.constant(3.0)
    line = _here() - 1
    with tf.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is None
    s = _one(tf.debugging.explain_gradient(tape, y, x))
    assert s.cause == ex.NOT_WATCHED and s.is_none
    assert f"{THIS}:{line}" in s.site and "tape.watch" in s.remedy


def test_never_watched_without_tracking_says_how_to_turn_it_on():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        y = x * x
    report = tf.debugging.explain_gradient(tape, y, x)
    assert report.causes == [ex.NOT_WATCHED] and not report.tracking
    assert "set_source_tracking(True)" in str(report) and "TAPEFLOW_DEBUG=1" in str(report)


def test_non_trainable_variable(tracking):
    v = tf.Variable(1.0, trainable=False)
    line = _here() - 1
    with tf.GradientTape() as tape:
        y = v * 3.0
    assert tape.gradient(y, v) is None
    s = _one(tf.debugging.explain_gradient(tape, y, v))
    assert s.cause == ex.NON_TRAINABLE_VARIABLE and f"{THIS}:{line}" in s.site
    assert "trainable=False" in s.summary


def test_integer_source():
    n = tf.constant(3)
    with tf.GradientTape() as tape:
        tape.watch(n)  # TF logs a warning and ignores it
        y = n * n
    assert tape.gradient(y, n) is None
    s = _one(tf.debugging.explain_gradient(tape, y, n))
    assert s.cause == ex.INTEGER_SOURCE and "int32" in s.summary


def test_integer_cast_names_the_cast_and_line(tracking):
    x = tf.Variable(2.5)
    with tf.GradientTape() as tape:
        i = tf.cast(x, tf.int32)
        line = _here() - 1
        y = tf.cast(i, tf.float32) * 2.0
    assert tape.gradient(y, x) is None
    s = _one(tf.debugging.explain_gradient(tape, y, x))
    assert s.cause == ex.INTEGER_CAST and s.op == "Cast" and f"{THIS}:{line}" in s.site
    assert "int32" in s.summary


def test_stop_gradient(tracking):
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = tf.stop_gradient(x * 2.0) * 3.0
        line = _here() - 1
    assert tape.gradient(y, x) is None
    s = _one(tf.debugging.explain_gradient(tape, y, x))
    assert s.cause == ex.STOP_GRADIENT and s.op == "StopGradient" and f"{THIS}:{line}" in s.site


def test_non_differentiable_op_is_named(tracking):
    x = tf.Variable([1.0, 3.0, 2.0])
    with tf.GradientTape() as tape:
        k = tf.argmax(x * 2.0)
        line = _here() - 1
        y = tf.cast(k, tf.float32)
    assert tape.gradient(y, x) is None
    s = _one(tf.debugging.explain_gradient(tape, y, x))
    assert s.cause == ex.NON_DIFFERENTIABLE_OP and s.op == "ArgMax" and f"{THIS}:{line}" in s.site


def test_stop_recording_region(tracking):
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        with tape.stop_recording():
            pause = _here() - 1
            y = x * 2.0
    assert tape.gradient(y, x) is None
    s = _one(tf.debugging.explain_gradient(tape, y, x))
    assert s.cause == ex.STOP_RECORDING and f"{THIS}:{pause}" in s.summary


def test_value_left_through_numpy_and_came_back(tracking):
    x = tf.Variable([0.5, 1.0])
    with tf.GradientTape() as tape:
        h = x * 2.0
        a = np.tanh(h.numpy())
        out_line = _here() - 1
        y = tf.reduce_sum(tf.constant(a) * 3.0)
        back_line = _here() - 1
    assert tape.gradient(y, x) is None
    s = _one(tf.debugging.explain_gradient(tape, y, x))
    assert s.cause == ex.LEFT_VIA_NUMPY
    assert f"{THIS}:{out_line}" in s.summary and f"{THIS}:{back_line}" in s.site


def test_numpy_array_passed_straight_to_an_op_is_caught(tracking):
    x = tf.Variable([0.5, 1.0])
    with tf.GradientTape() as tape:
        a = (x * 2.0).numpy() + 1.0
        y = tf.reduce_sum(tf.sin(a))
    s = _one(tf.debugging.explain_gradient(tape, y, x))
    assert s.cause == ex.LEFT_VIA_NUMPY


def test_variable_assigned_from_watched_value(tracking):
    x = tf.Variable(2.0)
    v = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        v.assign(x * 2.0)
        line = _here() - 1
        y = v * 3.0
    assert tape.gradient(y, x) is None
    s = _one(tf.debugging.explain_gradient(tape, y, x))
    assert s.cause == ex.VARIABLE_ASSIGN and f"{THIS}:{line}" in s.site and "Variable.assign" in s.op


def test_target_computed_after_block_exited(tracking):
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        h = x * 2.0
    exit_line = _here() - 2
    y = h * 3.0
    line = _here() - 1
    assert tape.gradient(y, x) is None
    s = _one(tf.debugging.explain_gradient(tape, y, x))
    assert s.cause == ex.AFTER_EXIT and f"{THIS}:{line}" in s.site and s.op == "Mul"
    assert f"{THIS}:{exit_line} " in s.summary and "block (at " in s.summary and "exited" in s.summary


def test_target_after_exit_without_tracking_is_still_suspected():
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        h = x * 2.0
    y = h * 3.0
    s = _one(tf.debugging.explain_gradient(tape, y, x))
    assert s.cause == ex.NOT_RECORDED
    assert any("target itself was not recorded" in d for d in s.details)


def test_tape_already_consumed():
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is not None
    with pytest.raises(RuntimeError):
        tape.gradient(y, x)
    s = _one(tf.debugging.explain_gradient(tape, y, x))
    assert s.cause == ex.TAPE_CONSUMED and "persistent=True" in s.remedy


def test_explaining_after_gradient_uses_the_snapshot(tracking):
    x = tf.constant(1.0)
    with tf.GradientTape() as tape:
        y = x * 2.0
    assert tape.gradient(y, x) is None  # consumes the tape
    report = tf.debugging.explain_gradient(tape, y, x)
    assert report.causes == [ex.NOT_WATCHED]
    assert "consumed by gradient()" in report.notes[0]


def test_connected_source_and_structure():
    a, b = tf.Variable(1.0), tf.Variable(2.0, trainable=False)
    with tf.GradientTape(persistent=True) as tape:
        y = a * b
    report = tf.debugging.explain_gradient(tape, y, {"a": a, "b": b})
    assert report.causes == [ex.CONNECTED, ex.NON_TRAINABLE_VARIABLE]
    text = str(report)
    assert text.startswith("Gradient explanation: 1 of 2 source(s) get None.")
    assert "sources[0]" in text and "sources[1]" in text


def test_unconnected_source(tracking):
    a, b = tf.Variable(1.0), tf.Variable(2.0)
    with tf.GradientTape() as tape:
        tape.watch(b)
        y = a * 3.0
    s = tf.debugging.explain_gradient(tape, y, [a, b])[1]
    assert s.cause in (ex.UNCONNECTED, ex.VARIABLE_NOT_READ)


def test_watch_accessed_variables_off():
    v = tf.Variable(1.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        y = v * 2.0
    assert _one(tf.debugging.explain_gradient(tape, y, v)).cause == ex.WATCH_ACCESSED_OFF


def test_integer_target():
    x = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        y = tf.cast(x, tf.int32)
    assert _one(tf.debugging.explain_gradient(tape, y, x)).cause == ex.TARGET_NOT_FLOAT


def test_explain_rejects_non_tape():
    with pytest.raises(TypeError, match="GradientTape"):
        tf.debugging.explain_gradient(object(), 1.0, 1.0)


# -- strict mode ------------------------------------------------------------------

def test_strict_mode_raises_with_explanation(tracking):
    tf.debugging.enable_strict_gradients()
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = tf.stop_gradient(x) * 2.0
    with pytest.raises(tf.debugging.NoneGradientError, match="stop_gradient") as info:
        tape.gradient(y, x)
    assert info.value.explanation.causes == [ex.STOP_GRADIENT]


def test_strict_mode_allows_connected_and_zero_requests():
    x, u = tf.Variable(2.0), tf.Variable(1.0)
    with tf.debugging.strict_gradients():
        with tf.GradientTape(persistent=True) as tape:
            y = x * x
        assert float(tape.gradient(y, x)) == 4.0
        g = tape.gradient(y, [x, u], unconnected_gradients=tf.UnconnectedGradients.ZERO)
        assert float(g[1]) == 0.0
        with pytest.raises(tf.debugging.NoneGradientError):
            tape.gradient(y, u)
    assert tape.gradient(y, u) is None  # off again: TF's None


# -- check_numerics ------------------------------------------------------------------

def test_check_numerics_op_messages_match_tf():
    assert tf.debugging.check_numerics(tf.constant([1.0]), "ok").numpy().tolist() == [1.0]
    cases = {"NaN": [1.0, np.nan], "Inf": [1.0, np.inf], "Inf and NaN": [np.nan, np.inf]}
    for kind, vals in cases.items():
        with pytest.raises(tf.errors.InvalidArgumentError, match=f"my msg : Tensor had {kind} values"):
            tf.debugging.check_numerics(tf.constant(vals), "my msg")
    with pytest.raises(tf.errors.InvalidArgumentError, match="not in the list of allowed values"):
        tf.debugging.check_numerics(tf.constant([1, 2]), "int")


def test_check_numerics_gradient_is_checked_identity():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.debugging.check_numerics(x, "m") * 3.0
    assert tape.gradient(y, x).numpy().tolist() == [3.0, 3.0]
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.debugging.check_numerics(x, "m")
    with pytest.raises(tf.errors.InvalidArgumentError, match="detected in gradient. m : Tensor had NaN"):
        tape.gradient(y, x, output_gradients=tf.constant([np.nan, 1.0], dtype=tf.float32))


def test_enable_check_numerics_names_creating_op_forward():
    tf.debugging.enable_check_numerics()
    x = tf.constant([0.0, 1.0])
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.math.log(x)
    line = _here() - 1
    msg = str(info.value)
    assert 'op "Log"' in msg and f"{THIS}:{line}" in msg
    assert "all inputs are finite" in msg and "min=0 max=1" in msg
    assert msg.endswith("Tensor had -Inf values [Op:CheckNumericsV2]")


def test_enable_check_numerics_does_not_blame_ops_passing_on():
    y = tf.math.log(tf.constant([0.0, 1.0]))  # -inf created before checking
    tf.debugging.enable_check_numerics()
    with pytest.raises(tf.errors.InvalidArgumentError, match="already held NaN/Inf"):
        y * 2.0
    z = tf.constant([1.0, 2.0]) * 2.0  # finite: fine
    assert z.numpy().tolist() == [2.0, 4.0]


def test_enable_check_numerics_is_silent_on_finite_training_step():
    tf.debugging.enable_check_numerics()
    w = tf.Variable([[0.5], [-0.25]])
    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(x @ w - 1.0))
    assert tape.gradient(loss, w).shape == (2, 1)


def test_check_numerics_backward_names_forward_op_and_where_trap(tracking):
    tf.debugging.enable_check_numerics()
    x = tf.constant([0.0, 4.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.where(x > 0, x ** 0.5, 0.0)
        fwd = _here() - 1
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tape.gradient(y, x)
    msg = str(info.value)
    assert 'GRADIENT of forward op "Pow"' in msg
    assert f"{THIS}:{fwd}" in msg
    assert "tf.where trap" in msg and "safe_x = tf.where" in msg


def test_where_trap_numbers_without_checking_match_tf():
    # TF 2.21: d/dx where(x > 0, x ** 0.5, 0) at [0, 4] is [nan, 0.25].
    x = tf.constant([0.0, 4.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.where(x > 0, x ** 0.5, 0.0)
    g = tape.gradient(y, x).numpy()
    assert np.isnan(g[0]) and g[1] == 0.25


def test_backward_nan_without_where_has_no_trap_message():
    tf.debugging.enable_check_numerics()
    x = tf.constant([0.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x ** 0.5
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tape.gradient(y, x)
    msg = str(info.value)
    assert 'forward op "Pow"' in msg and "tf.where trap" not in msg
    assert "set_source_tracking(True)" in msg  # no forward line without tracking


def test_disable_check_numerics_restores_silence():
    tf.debugging.enable_check_numerics()
    tf.debugging.disable_check_numerics()
    assert np.isinf(tf.math.log(tf.constant(0.0)).numpy())


def test_env_var_turns_debug_mode_on_at_import():
    import os
    import subprocess

    code = ("import tapeflow as tf\n"
            "from tapeflow.framework.context import state\n"
            "print(tf.debugging.is_source_tracking_enabled(), state.debug_hook is not None)\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, TAPEFLOW_DEBUG="1", PYTHONPATH=root)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["True", "True"], out.stderr
    env["TAPEFLOW_DEBUG"] = "0"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "False"], out.stderr


def test_zero_gradient_names_the_op_that_zeroed_it(tracking):
    w = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        h = tf.nn.relu(w * -1.0)  # every unit dead
        line = _here() - 1
        y = tf.reduce_sum(h)
    s = _one(tf.debugging.explain_gradient(tape, y, w))
    assert s.cause == ex.ZERO_GRADIENT and s.is_zero and not s.is_none
    assert s.op == "Relu" and f"{THIS}:{line}" in s.site
    # the trial pass did not consume the tape: gradient() still works, and is zero as explained
    assert tape.gradient(y, w).numpy().tolist() == [0.0, 0.0]


def test_nonzero_gradient_stays_connected():
    w = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.nn.relu(w))
    report = tf.debugging.explain_gradient(tape, y, w)
    assert report.causes == [ex.CONNECTED]
    assert tape.gradient(y, w).numpy().tolist() == [1.0, 1.0]


def test_custom_gradient_returning_none_is_named(tracking):
    @tf.custom_gradient
    def opaque(x):
        def grad(dy):
            return None

        return x * 1.0, grad

    w = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y = opaque(w) * 3.0
    assert tape.gradient(y, w) is None
    s = _one(tf.debugging.explain_gradient(tape, y, w))
    assert s.cause == ex.RULE_RETURNED_NONE and s.is_none
    assert "returned None" in s.summary


def test_stop_gradient_inside_tf_function_is_traced_to_the_call(tracking):
    @tf.function
    def f(x):
        return tf.stop_gradient(x) * 2.0

    w = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y = f(w)
    assert tape.gradient(y, w) is None
    s = _one(tf.debugging.explain_gradient(tape, y, w))
    assert s.cause == ex.RULE_RETURNED_NONE and "StopGradient" in s.details[0]


def test_consumed_tape_with_rule_returning_none_uses_what_gradient_returned(tracking):
    @tf.function
    def f(x):
        return tf.stop_gradient(x) * 2.0

    w = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = f(w)
    assert tape.gradient(y, w) is None  # consumes the tape
    s = _one(tf.debugging.explain_gradient(tape, y, w))
    assert s.cause == ex.RULE_RETURNED_NONE and "StopGradient" in s.details[0]


def test_check_numerics_finds_the_op_inside_a_tf_function():
    tf.debugging.enable_check_numerics()

    @tf.function
    def f(x):
        return tf.math.log(x) * 2.0

    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        f(tf.constant([0.0, 1.0]))
    line = _here() - 1
    msg = str(info.value)
    assert 'op "Log"' in msg and "inside tf.function 'f'" in msg and f"{THIS}:{line}" in msg
    assert f(tf.constant([1.0, 2.0])).numpy().tolist() == pytest.approx([0.0, 2 * np.log(2.0)])
