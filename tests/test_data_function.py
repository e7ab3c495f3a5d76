"""`for x in dataset:` inside tf.function (AutoGraph's While over the dataset), pinned against TF 2.21."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf


def _ds():
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    return tf.data.Dataset.from_tensor_slices((x, np.arange(5, dtype=np.float32))).batch(2)


def test_training_loop_over_a_dataset_inside_tf_function():
    w = tf.Variable([[1.0], [2.0]])
    opt = tf.keras.optimizers.SGD(0.01)

    @tf.function
    def train(ds):
        total = tf.constant(0.0)
        n = 0
        for x, y in ds:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((tf.squeeze(x @ w, 1) - y) ** 2)
            opt.apply_gradients([(tape.gradient(loss, w), w)])
            total += loss
            n += 1
        return total, n

    ds = _ds()
    total, n = train(ds)
    assert float(total) == pytest.approx(213.00088500976562, rel=1e-6) and int(n) == 3
    total, n = train(ds)  # a fresh pass at every call, one trace
    assert float(total) == pytest.approx(45.97246551513672, rel=1e-6)
    np.testing.assert_allclose(w.numpy(), [[0.171062], [0.8295988]], rtol=1e-5)
    assert train.experimental_get_tracing_count() == 1
    ops = {op.type for op in train.get_concrete_function(ds).graph.get_operations()}
    assert {"AnonymousIterator", "IteratorGetNextAsOptional", "While"} <= ops


def test_break_strings_and_tape_around_the_loop():
    @tf.function
    def summed(ds):
        s = tf.constant(0, tf.int64)
        for x in ds:
            if x > 5:
                break
            s += x
        return s

    assert int(summed(tf.data.Dataset.range(10))) == 15

    @tf.function
    def lengths(ds):
        out = tf.constant(0)
        for line in ds:
            out += tf.strings.length(line)
        return out

    assert int(lengths(tf.data.Dataset.from_tensor_slices(["ab", "cde"]))) == 5
    w = tf.Variable([[1.0], [2.0]])

    @tf.function
    def around(ds):
        with tf.GradientTape() as tape:
            acc = tf.constant(0.0)
            for x, _ in ds:
                acc += tf.reduce_sum(x @ w)
        return tape.gradient(acc, w)

    assert around(_ds()) is None  # as TF: the loop is a dataset reduction, not differentiable


def test_iter_next_inside_tf_function_pull_at_run_time():
    @tf.function
    def f(ds):
        it = iter(ds)  # a fresh pass each call
        return next(it) + next(it)

    assert int(f(tf.data.Dataset.range(3, 10))) == 7 and int(f(tf.data.Dataset.range(3, 10))) == 7

    @tf.function
    def consume(iterator):  # the guide's good_consume_next: each call takes the next element
        return next(iterator)

    it = iter(tf.data.Dataset.from_tensor_slices([1, 2, 3]))
    assert [int(consume(it)) for _ in range(3)] == [1, 2, 3]
    with pytest.raises(tf.errors.OutOfRangeError):
        consume(it)

    @tf.function
    def pair(iterator):
        x, y = next(iterator)
        return x * y

    it = iter(tf.data.Dataset.from_tensor_slices(([1.0, 2.0], [3.0, 4.0])))
    assert float(pair(it)) == 3.0 and float(pair(it)) == 8.0
    assert next(it, "end") == "end"
