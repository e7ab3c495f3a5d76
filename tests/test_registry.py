"""The op registry: TF's RegisterGradient/NotDifferentiable contract."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.framework.execute import execute
from tapeflow.ops import registry


@pytest.fixture
def scratch_ops():
    names = []
    yield names
    for n in names:  # keep the registry-wide gradient check clean
        registry._OPS.pop(n, None)
        registry._GRADS.pop(n, None)


def test_user_op_with_register_gradient(scratch_ops):
    scratch_ops.append("TestCube")
    cube = registry.defop("TestCube", lambda x: x**3)

    @tf.RegisterGradient("TestCube")
    def _cube_grad(op, grad):
        x = op.inputs[0]
        return grad * 3.0 * x * x

    x = tf.constant(2.0)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t:
            t.watch(x)
            y = execute(cube, (x,))
        g = t.gradient(y, x)
    assert float(y) == 8.0 and float(g) == 12.0
    assert float(t2.gradient(g, x)) == 12.0  # the rule is made of tapeflow ops: 2nd order works


def test_duplicate_registration_names_the_first(scratch_ops):
    with pytest.raises(KeyError, match="Registering two gradient with name 'Sin'.*math_ops.py"):
        tf.RegisterGradient("Sin")(lambda op, g: g)
    with pytest.raises(KeyError, match="Registering two ops with name 'Sin'"):
        registry.defop("Sin", np.sin)
    with pytest.raises(TypeError):
        tf.RegisterGradient(3)


def test_not_differentiable_ops_are_not_recorded(scratch_ops):
    scratch_ops.append("TestFloorish")
    op = registry.defop("TestFloorish", np.floor)
    tf.no_gradient("TestFloorish")
    x = tf.constant(2.5)
    with tf.GradientTape() as t:
        t.watch(x)
        y = execute(op, (x,))
    assert t.gradient(y, x) is None
    assert not t._tape.records if t._tape else True


def test_op_without_any_rule_gives_none(scratch_ops):
    scratch_ops.append("TestNoRule")
    op = registry.defop("TestNoRule", np.negative)
    x = tf.constant(2.5)
    with tf.GradientTape() as t:
        t.watch(x)
        y = execute(op, (x,))
    assert t.gradient(y, x) is None


def test_wrong_number_of_gradients_is_a_clear_error(scratch_ops):
    scratch_ops.append("TestTwoIn")
    op = registry.defop("TestTwoIn", np.add)
    tf.RegisterGradient("TestTwoIn")(lambda op, g: g)
    x = tf.constant(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = execute(op, (x, x))
    with pytest.raises(ValueError, match="'TestTwoIn' returned 1 gradients, but the op has 2 inputs"):
        t.gradient(y, x)


def test_gradient_check_helper_matches_tf_shape_convention():
    theo, num = tf.test.compute_gradient(lambda x: x * x, [tf.constant([1.0, 2.0])])
    assert theo[0].shape == (2, 2)
    np.testing.assert_allclose(theo[0], [[2, 0], [0, 4]])
    assert tf.test.max_error(theo, num) < 1e-2
    with pytest.raises(ValueError, match="must be a list or tuple"):
        tf.test.compute_gradient(lambda x: x, tf.constant(1.0))
