"""Errors raised by a from_generator generator reach the caller as TF's PyFunc kernel reports them
(TensorFlow 2.21): ValueError/TypeError as InvalidArgumentError, anything else as UnknownError, the message
starting with the Python exception and carrying its traceback."""

import pytest

import tapeflow as tf


def _gen_ds(g):
    return tf.data.Dataset.from_generator(g, output_types=tf.int32, output_shapes=())


def test_errors_inside_the_generator():
    def bad_value():
        yield 1
        raise ValueError("bad value")

    def bad_key():
        yield 1
        raise KeyError("k")

    with pytest.raises(tf.errors.InvalidArgumentError, match=r"^ValueError: bad value\nTraceback") as e:
        list(_gen_ds(bad_value))
    assert isinstance(e.value.__cause__, ValueError)
    with pytest.raises(tf.errors.UnknownError, match=r"^KeyError: 'k'\nTraceback"):
        list(_gen_ds(bad_key))


def test_errors_creating_the_generator_and_converting_its_values():
    # the data guide's `lambda: img_gen.flow_from_directory(flowers)` with `flowers` undefined
    with pytest.raises(tf.errors.UnknownError, match="^NameError: name 'undefined_thing' is not defined"):
        list(_gen_ds(lambda: undefined_thing.foo()))  # noqa: F821
    with pytest.raises(tf.errors.InvalidArgumentError, match=(
            "^TypeError: `generator` yielded an element that could not be converted to the expected type. The "
            "expected type was int32, but the yielded element was a.")):
        list(_gen_ds(lambda: [1, "a"]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="where an element of shape"):
        list(tf.data.Dataset.from_generator(lambda: [[1, 2]], output_types=tf.int32, output_shapes=()))
