"""TF2 programs in the style of TensorFlow's autodiff and tf.function guides
(tests/tf_programs/autodiff_*.py, written as ``import tensorflow as tf``), run
under tapeflow; their printed output must equal real TensorFlow 2.21's, which is
pinned next to each program (``<program>.tf_expected.txt``, produced with
``/opt/tfvenv/bin/python tests/tf_programs/_autodiff_run.py <program>.py tf``).
TensorFlow itself is never imported here."""

import os
import subprocess
import sys

import pytest

import tapeflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "tf_programs")
ROOT = os.path.dirname(HERE)
NAMES = sorted(f[:-3] for f in os.listdir(PROGRAMS) if f.startswith("autodiff_") and f.endswith(".py"))


def _run(name: str) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, os.path.join(PROGRAMS, "_autodiff_run.py"), os.path.join(PROGRAMS, name + ".py"), "tapeflow"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


@pytest.mark.parametrize("name", NAMES)
def test_program_output_matches_tensorflow(name):
    with open(os.path.join(PROGRAMS, name + ".tf_expected.txt")) as f:
        expected = f.read()
    got = _run(name)
    if got != expected:
        import difflib

        diff = "".join(difflib.unified_diff(expected.splitlines(True), got.splitlines(True), "tensorflow", "tapeflow"))
        pytest.fail("output differs from TensorFlow's:\n" + diff)


# -- cases these programs found (TF 2.21 values pinned) --

def test_watched_variables_after_gradient():
    x0 = tf.Variable(3.0, name="x0")
    with tf.GradientTape() as tape:
        y = x0 ** 2
    tape.gradient(y, x0)
    assert [v.name for v in tape.watched_variables()] == ["x0:0"]


def test_string_add():
    a = tf.constant("a")
    assert str(a + a) == "tf.Tensor(b'aa', shape=(), dtype=string)"


def test_custom_gradient_inside_function_seen_by_outer_tape():
    @tf.custom_gradient
    def clip_grad(t):
        def grad(dy):
            return tf.clip_by_value(dy, -0.5, 0.5)
        return t, grad

    @tf.function
    def clipped_loss(x):
        return tf.reduce_sum(clip_grad(x) * [1.0, -3.0, 0.2])

    x = tf.Variable([1.0, 1.0, 1.0])
    with tf.GradientTape() as tape:
        y = clipped_loss(x)
    g = tape.gradient(y, x)
    assert g.numpy().tolist() == [0.5, -0.5, 0.20000000298023224]  # TF 2.21

    w = tf.Variable(2.0)

    @tf.custom_gradient
    def lin(x):
        def grad(dy, variables):
            return dy * w, [dy * x * 100.0]
        return w * x, grad

    @tf.function
    def f2(x):
        return lin(x) * 3.0

    xx = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(xx)
        y = f2(xx)
    assert [t.numpy() for t in tape.gradient(y, [xx, w])] == [6.0, 900.0]  # TF 2.21

    @tf.function
    def sym(x):
        return tf.gradients(clip_grad(x) * 4.0, x)[0]

    assert sym(tf.constant([1.0, 2.0])).numpy().tolist() == [0.5, 0.5]  # TF 2.21


def test_custom_gradient_in_cond_branch_and_nested_function():
    @tf.custom_gradient
    def clip_grad(t):
        def grad(dy):
            return tf.clip_by_value(dy, -0.5, 0.5)
        return t, grad

    @tf.function
    def in_cond(x):
        if tf.reduce_sum(x) > 0:
            y = clip_grad(x) * 4.0
        else:
            y = x
        return tf.reduce_sum(y)

    @tf.function
    def inner(x):
        return clip_grad(x) * 4.0

    @tf.function
    def outer(x):
        return tf.reduce_sum(inner(x))

    @tf.function
    def loop(x):
        for _ in tf.range(3):
            x = clip_grad(x) * 2.0
        return tf.reduce_sum(x)

    x = tf.constant([1.0, 2.0])
    for fn in (in_cond, outer, loop):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        assert tape.gradient(y, x).numpy().tolist() == [0.5, 0.5]  # TF 2.21


def test_equality_operators_raise_as_tf():
    c = tf.constant([1, 2])
    with pytest.raises(TypeError, match="Cannot convert 0.5 to EagerTensor of dtype int32"):
        c == 0.5  # noqa: B015
    with pytest.raises(TypeError):
        c != 0.5  # noqa: B015
    with pytest.raises(tf.errors.InvalidArgumentError):
        c == tf.constant(1.0)  # noqa: B015
    with pytest.raises(ValueError):
        c == object()  # noqa: B015
    assert (c == [1, 2, 3]).numpy().tolist() is False  # incompatible shapes: a scalar False (TF 2.21)
    assert (c != [1, 2, 3]).numpy().tolist() is True
    assert (c == None) is False  # noqa: E711
    assert (c == 1).numpy().tolist() == [True, False]
    with pytest.raises(TypeError):
        c * 0.5  # noqa: B018
    with pytest.raises(tf.errors.InvalidArgumentError):
        c + 0.5  # noqa: B018
