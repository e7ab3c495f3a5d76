"""Compiled graphs let an elementwise op write into a temporary that dies at it (as NumPy's temporary
elision does for hand-written code); nothing anyone else can see is ever overwritten."""

import numpy as np

import tapeflow as tf
from tapeflow.ops import math_ops

SPEC = tf.TensorSpec([64, 64], tf.float32)  # (16 KiB: from this size on a temporary is reused)


def _compiled(fn, spec=SPEC):
    return tf.function(fn).get_concrete_function(spec, spec)._gf.compiled()


def _kernels(c) -> str:
    return repr([c.fn.__globals__[k] for k in c.fn.__globals__ if k.startswith("k_")])


def test_a_dying_temporary_is_written_in_place_and_inputs_never_are():
    a = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 100 - 5
    b = np.full((64, 64), 0.5, np.float32)
    a0, b0 = a.copy(), b.copy()
    c = _compiled(lambda x, y: tf.nn.relu(x * 2.0) * y)
    assert "_binary_inplace" in _kernels(c)
    (out,) = c(a, b)
    np.testing.assert_array_equal(out, np.maximum(a0 * 2, 0) * b0)
    np.testing.assert_array_equal(a, a0)  # graph inputs are the caller's
    np.testing.assert_array_equal(b, b0)
    o1, o2 = _compiled(lambda x, y: ((x * 2.0) * y, x * 2.0))(a, b)  # a temporary that is an output too
    np.testing.assert_array_equal(o2, a0 * 2)
    np.testing.assert_array_equal(o1, a0 * 2 * b0)


def test_small_temporaries_take_the_plain_kernels():
    # Below INPLACE_MIN_BYTES the in-place kernel's checks cost more than a new buffer; shapes unknown
    # until the call keep the in-place kernel (it checks the array it gets).
    from tapeflow.graph import compiler

    small = tf.TensorSpec([3, 4], tf.float32)
    c = _compiled(lambda x, y: tf.nn.relu(x * 2.0) * y, small)
    assert "_binary_inplace" not in _kernels(c)
    a, b = np.arange(12, dtype=np.float32).reshape(3, 4) - 5, np.full((3, 4), 0.5, np.float32)
    np.testing.assert_array_equal(c(a, b)[0], np.maximum(a * 2, 0) * b)
    assert compiler.INPLACE_MIN_BYTES == 1 << 14
    c = _compiled(lambda x, y: tf.nn.relu(x * 2.0) * y, tf.TensorSpec([None, 4], tf.float32))
    assert "_binary_inplace" in _kernels(c)
    np.testing.assert_array_equal(c(a, b)[0], np.maximum(a * 2, 0) * b)


def test_inplace_kernels_leave_arrays_others_hold():
    dy = np.ones((2, 3), np.float32)
    y = np.array([[1, -1, 0], [2, 3, -4]], np.float32)
    keep = dy  # another holder: the plain kernel runs
    out = math_ops.RELU_GRAD.extra["inplace"](dy, y)
    assert out is not keep and keep.min() == 1
    view = np.ones((2, 6), np.float32)[:, :3]  # a view of another array: never written
    out = math_ops.MUL.extra["inplace"](view, y)
    assert out is not view and view.min() == 1


def test_keras_sgd_updates_a_variable_in_place_unless_its_array_is_held():
    v = tf.Variable(np.ones((3, 4), np.float32))
    g = tf.constant(np.full((3, 4), 2.0, np.float32))
    opt = tf.keras.optimizers.SGD(0.5)
    opt.apply_gradients([(g, v)])
    buf = id(v._value)
    opt.apply_gradients([(g, v)])
    assert id(v._value) == buf  # no new buffer per step, as v.assign_sub(lr * g)
    np.testing.assert_array_equal(v.numpy(), np.full((3, 4), -1.0, np.float32))
    held = v.value()  # a read still alive: its value must not change under it
    opt.apply_gradients([(g, v)])
    np.testing.assert_array_equal(held.numpy(), np.full((3, 4), -1.0, np.float32))
    np.testing.assert_array_equal(v.numpy(), np.full((3, 4), -2.0, np.float32))


def test_assign_sub_of_a_tensor_is_in_place_only_when_nothing_holds_the_array():
    v = tf.Variable(np.ones(4, np.float32))
    v.assign_sub(tf.constant(np.zeros(4, np.float32)))  # (the first: the initial value still holds the array)
    buf = id(v._value)
    assert v.assign_sub(tf.constant(np.full(4, 0.25, np.float32))).name == "UnreadVariable"
    assert id(v._value) == buf
    held = v.value()
    v.assign_sub(tf.constant(np.full(4, 0.25, np.float32)), read_value=False)
    np.testing.assert_array_equal(held.numpy(), np.full(4, 0.75, np.float32))
    np.testing.assert_array_equal(v.numpy(), np.full(4, 0.5, np.float32))
