"""The TF1-vs-TF2 migration guide's compat names, pinned against TF 2.21."""

import pytest

import tapeflow as tf


def test_dimension_and_tensor_shape_dims():
    dims = tf.TensorShape([None, 3]).dims
    assert repr(dims) == "[Dimension(None), Dimension(3)]"
    assert dims[0].is_compatible_with(16) and dims[1].value == 3 and str(dims[0]) == "?"
    assert tf.compat.v1.Dimension(None).is_compatible_with(16)
    assert not tf.compat.v1.Dimension(3).is_compatible_with(4)
    assert tf.TensorShape(dims).as_list() == [None, 3]
    assert tf.TensorShape(None).dims is None


def test_tensor_equality_can_be_disabled_and_enabled():
    x, y = tf.Variable(0.0), tf.Variable(0.0)
    try:
        tf.compat.v1.disable_tensor_equality()
        assert (x == y) is False and (x == x) is True
        assert len({x, y, tf.constant(1.0)}) == 3
    finally:
        tf.compat.v1.enable_tensor_equality()
    assert bool(x == y) and (x == y).dtype == tf.bool
    with pytest.raises(TypeError) as e:
        {x}
    assert str(e.value) == ("Variable is unhashable. Instead, use variable.ref() as the key. (Variable: "
                            "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=0.0>)")
    with pytest.raises(TypeError, match=r"^Tensor is unhashable. Instead, use tensor.ref\(\) as the key.$"):
        {tf.constant(1.0)}
    assert x.ref().deref() is x
