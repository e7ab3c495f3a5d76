"""AutoGraph: Python control flow on tensors inside tf.function."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf


@tf.function
def _if_else(x):
    if x > 0:
        y = x * 2.0
    else:
        y = -x
    return y


def test_if_else_on_tensor_condition():
    assert _if_else(tf.constant(3.0)).numpy() == 6.0
    assert _if_else(tf.constant(-1.0)).numpy() == 1.0
    assert _if_else.experimental_get_tracing_count() == 1


def test_elif_and_early_returns():
    @tf.function
    def g(x):
        if x > 10.0:
            return x
        elif x > 0.0:
            return x * 10.0
        return -x

    assert [g(tf.constant(v)).numpy() for v in (11.0, 2.0, -3.0)] == [11.0, 20.0, 3.0]


def test_python_conditions_stay_python():
    @tf.function
    def f(x, flag):
        if flag:
            return x + 1
        return x - 1

    assert f(tf.constant(1), True).numpy() == 2 and f(tf.constant(1), False).numpy() == 0
    assert f.experimental_get_tracing_count() == 2
    text = f.get_concrete_function(tf.constant(1), True).as_text()
    assert "If(" not in text


def test_while_on_tensor():
    @tf.function
    def w(n):
        i = 0
        s = 0.0
        while i < n:
            s += tf.cast(i, tf.float32)
            i += 1
        return s

    assert w(tf.constant(5)).numpy() == 10.0
    assert w(tf.constant(3)).numpy() == 3.0


def test_for_over_tensor_with_break_and_continue():
    @tf.function
    def f(xs):
        total = tf.constant(0.0)
        for x in xs:
            if x < 0:
                continue
            if x > 100:
                break
            total += x
        return total

    assert f(tf.constant([1.0, -2.0, 3.0, 200.0, 5.0])).numpy() == 4.0


def test_for_over_tf_range_with_tensor_bound():
    @tf.function
    def f(n):
        acc = tf.constant(1)
        for _ in tf.range(n):
            acc = acc * 2
        return acc

    assert f(tf.constant(10)).numpy() == 1024
    assert f(tf.constant(3)).numpy() == 8
    assert f.experimental_get_tracing_count() == 1


def test_for_over_python_range_unrolls():
    @tf.function
    def f(x):
        for i in range(3):
            x = x + i
        return x

    assert f(tf.constant(1)).numpy() == 4


def test_gradient_through_autograph_loop():
    @tf.function
    def f(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = x
            i = 0
            while i < 3:
                y = y * x
                i += 1
        return t.gradient(y, x)

    assert f(tf.constant(2.0)).numpy() == 32.0


def test_autograph_false_with_tensor_condition_raises():
    @tf.function(autograph=False)
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(TypeError, match="Python `bool` is not allowed"):
        f(tf.constant(1.0))


def test_errors_point_at_the_users_line():
    @tf.function
    def f(x):
        if x > 0:
            y = tf.matmul(x, x)  # rank-0 matmul fails here
        else:
            y = x
        return y

    with pytest.raises(Exception) as info:
        f(tf.constant(1.0))
    frames = [tb for tb in info.traceback if tb.path == __file__ or str(tb.path) == __file__]
    assert any("tf.matmul(x, x)" in str(tb.statement) for tb in frames)


def test_variable_set_in_one_branch_only_is_not_an_output():
    @tf.function
    def f(x):
        if x > 0:
            tmp = x * 2.0
            y = tmp + 1.0
        else:
            y = x
        return y

    assert f(tf.constant(1.0)).numpy() == 3.0


def test_tf_autograph_to_graph():
    def f(x):
        if x > 0:
            return x
        return -x

    converted = tf.autograph.to_graph(f)
    assert converted(3) == 3 and converted(-3) == 3  # Python values: plain Python
    np.testing.assert_array_equal(tf.function(f)(tf.constant(-2.0)).numpy(), 2.0)


def test_loop_body_reads_variable_it_assigns_each_iteration():
    v = tf.Variable(0.0)

    @tf.function
    def f():
        s = tf.constant(0.0)
        i = tf.constant(0)
        while i < 3:
            s += v
            v.assign_add(1.0)
            i += 1
        return s

    assert f().numpy() == 3.0 and v.numpy() == 3.0


class _Base(tf.Module):
    def f(self, x):
        return x * 2.0


class _Sub(_Base):
    @tf.function
    def f(self, x):
        if x > 0:
            y = super().f(x)
        else:
            y = -x
        return y


def test_super_inside_converted_branches():
    s = _Sub()
    assert s.f(tf.constant(3.0)).numpy() == 6.0 and s.f(tf.constant(-3.0)).numpy() == 3.0


def test_and_or_not_on_tensor_conditions():
    @tf.function
    def f(x, y):
        if x > 0 and not y > 0:
            r = x - y
        elif x > 0 or y > 0:
            r = x + y
        else:
            r = x * y
        return r

    c = tf.constant
    assert [f(c(1.0), c(-2.0)).numpy(), f(c(1.0), c(2.0)).numpy(), f(c(-1.0), c(-2.0)).numpy()] == [3.0, 3.0, 2.0]


def _helper_if(x):
    if x > 0:
        return x * 2.0
    return -x


def _helper_while(n):
    s = tf.constant(0.0)
    i = 0
    while i < n:
        s += 1.0
        i += 1
    return s


def test_called_user_functions_are_converted_recursively():
    @tf.function
    def f(x, n):
        return _helper_if(x) + _helper_while(n)

    assert f(tf.constant(3.0), tf.constant(4)).numpy() == 10.0
    assert f(tf.constant(-3.0), tf.constant(2)).numpy() == 5.0


def test_variable_set_on_one_path_then_used_names_it():
    @tf.function
    def f(x):
        if x > 0:
            y = x * 2.0
        return y + 1.0

    with pytest.raises(UnboundLocalError, match="'y' is used, but it is assigned only on some paths"):
        f(tf.constant(1.0))
