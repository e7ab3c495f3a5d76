"""``Dataset.as_numpy_iterator()`` returns TF's ``NumpyIterator`` (pinned from TF 2.21): ``next()`` works (the
transfer-learning tutorial calls ``test_dataset.as_numpy_iterator().next()``), arrays are read-only, 0-d values
are NumPy scalars, ragged rows are arrays, and it is eager-only."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf


def test_numpy_iterator_next_and_values():
    it = tf.data.Dataset.range(3).as_numpy_iterator()
    assert type(it).__name__ == "NumpyIterator" and iter(it) is it
    assert repr(it).startswith("NumpyIterator(iterator=<")
    assert it.next() == 0 and next(it) == 1 and list(it) == [2]
    row = next(tf.data.Dataset.from_tensor_slices([[1, 2]]).as_numpy_iterator())
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        row[0] = 5
    got = list(tf.data.Dataset.from_tensor_slices({"a": [b"x", b"y"], "b": [1.0, 2.0]}).as_numpy_iterator())
    assert got == [{"a": b"x", "b": np.float32(1.0)}, {"a": b"y", "b": np.float32(2.0)}]
    assert type(got[0]["b"]) is np.float32
    ragged = list(tf.data.Dataset.from_tensor_slices(tf.ragged.constant([[1, 2], [3]])).as_numpy_iterator())
    assert [r.tolist() for r in ragged] == [[1, 2], [3]] and ragged[0].dtype == np.int32


def test_numpy_iterator_is_eager_only():
    ds = tf.data.Dataset.range(2)

    @tf.function
    def f():
        return ds.as_numpy_iterator()

    with pytest.raises(RuntimeError, match=r"`tf.data.Dataset.as_numpy_iterator\(\)` is only supported in eager mode"):
        f()
