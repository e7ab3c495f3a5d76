"""str.format / f-strings of tensors format the NumPy value, as TF's EagerTensor.__format__."""
# ruff: noqa: UP032 - the test is about str.format itself

import pytest

import tapeflow as tf


def test_format_uses_the_numpy_value():
    assert "[{}]".format(tf.constant([[1.5, 2.0], [3, 4]])) == "[[[1.5 2. ]\n [3.  4. ]]]"
    assert "{:.2f}".format(tf.constant(3.14159)) == "3.14"
    assert f"{tf.constant(3)}" == "3"
    assert "{}".format(tf.constant(["a"])) == "[b'a']"
    assert "{!r}".format(tf.constant([1])) == repr(tf.constant([1]))
    with pytest.raises(TypeError, match="unsupported format string"):
        "{:>30}".format(tf.constant([1.5, 2.0]))
