"""``for x in dataset`` in a tf.function is a reduction in TF: its state may change shape (the tf.function
guide's ``loss += tf.abs(y - x)`` over a generator with unknown element shapes), unlike a tf.while_loop."""

import pytest

import tapeflow as tf


def test_dataset_loop_state_relaxes_its_shape():
    @tf.function
    def train(dataset):
        loss = tf.constant(0)
        for x, y in dataset:
            loss += tf.abs(y - x)
        return loss

    data = [(1, 3), (5, 1), (2, 2)]
    ds = tf.data.Dataset.from_generator(lambda: data, (tf.int32, tf.int32))
    assert repr(ds) == (  # TF 2.21's
        "<_FlatMapDataset element_spec=(TensorSpec(shape=<unknown>, dtype=tf.int32, name=None), "
        "TensorSpec(shape=<unknown>, dtype=tf.int32, name=None))>")
    out = train(ds)
    assert int(out) == 6
    assert train.get_concrete_function(ds).structured_outputs.shape.rank is None  # TF: shape <unknown>


def test_while_loop_still_checks_shapes():
    @tf.function
    def f(x):
        return tf.while_loop(lambda v: tf.reduce_sum(v) < 10.0, lambda v: tf.concat([v, v], 0), [x])

    with pytest.raises(ValueError) as e:
        f(tf.constant([1.0]))
    assert str(e.value).endswith(  # TF 2.21's message
        "    ValueError: Input tensor `x:0` enters the loop with shape (1,), but has shape (2,) after one "
        "iteration. To allow the shape to vary across iterations, use the `shape_invariants` argument of "
        "tf.while_loop to specify a less-specific shape.\n")
