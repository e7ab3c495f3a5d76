"""Keras 3's Layer.__call__ checks (pinned from Keras 3.15): only tensors/arrays positionally, Keras layers
are not tf.Modules (no ``submodules``)."""

import numpy as np
import pytest

import tapeflow as tf


def test_python_values_passed_positionally_are_a_value_error():
    d = tf.keras.layers.Dense(2)
    with pytest.raises(ValueError, match=r"^Only input tensors may be passed as positional arguments. The following "
                                         r"argument value should be passed as a keyword argument: 2.0 \(of type "
                                         r"<class 'float'>\)$"):
        d([[2.0, 2.0]])
    assert d(np.ones((1, 2))).shape == (1, 2)
    with pytest.raises(ValueError, match=r"keyword argument: 3 \(of type <class 'int'>\)"):
        d(tf.ones((1, 2)), 3)
    # preprocessing layers (Keras's TFDataLayer) take Python lists
    np.testing.assert_array_equal(tf.keras.layers.Rescaling(2.0)([1.0, 2.0]).numpy(), [2.0, 4.0])


def test_keras_models_have_no_submodules():
    with pytest.raises(AttributeError, match="'Sequential' object has no attribute 'submodules'"):
        tf.keras.Sequential([tf.keras.layers.Dense(2)]).submodules


def test_variable_assign_shape_mismatch_message_is_tf_s():
    v = tf.Variable([2.0, 3.0])
    with pytest.raises(ValueError) as info:
        v.assign([1.0, 2.0, 3.0])
    assert str(info.value) == ("Cannot assign value to variable ' Variable:0': Shape mismatch.The variable shape (2,), "
                               "and the assigned value shape (3,) are incompatible.")
