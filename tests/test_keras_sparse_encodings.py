"""HashedCrossing and Hashing with sparse=True (SparseTensor outputs), as Keras 3.15 with TF gives them; a scalar
cross one-hot encodes as one sample; ConvLSTM's unroll=True; a shape built as tf.reshape(n, [1]) in tf.function."""

import numpy as np
import pytest

import tapeflow as tf

L = tf.keras.layers


def _sparse(st):
    return tuple(int(d) for d in st.dense_shape.numpy()), st.indices.numpy().tolist(), st.values.numpy().tolist()


def test_hashed_crossing_sparse_one_hot_is_keras():
    layer = L.HashedCrossing(num_bins=5, output_mode="one_hot", sparse=True)
    out = layer((np.array([1, 2, 3, 4]), np.array(["A", "B", "A", "C"])))
    assert isinstance(out, tf.SparseTensor) and out.dtype == tf.float32
    assert _sparse(out) == ((4, 5), [[0, 2], [1, 3], [2, 1], [3, 0]], [1.0] * 4)
    assert _sparse(layer((np.array([[1], [2]]), np.array([["A"], ["B"]])))) == ((2, 5), [[0, 2], [1, 3]], [1.0, 1.0])
    assert _sparse(layer((np.array(3), np.array("A")))) == ((1, 5), [[0, 1]], [1.0])
    # Keras upranks a scalar to one sample, dense too
    assert L.HashedCrossing(num_bins=5, output_mode="one_hot")((np.array(3), np.array("A"))).shape == (1, 5)
    np.testing.assert_array_equal(L.HashedCrossing(5, sparse=True)((np.array([1, 2]), np.array(["A", "B"]))), [2, 3])
    assert layer.get_config()["sparse"] is True
    symbolic = layer([tf.keras.Input((1,), dtype="int64"), tf.keras.Input((1,), dtype="string")])
    assert symbolic.shape == (None, 5) and not symbolic.sparse  # Keras's output spec says dense
    fn = tf.function(lambda a, b: layer((a, b)), input_signature=[tf.TensorSpec([None], tf.int64),
                                                                  tf.TensorSpec([None], tf.string)])
    assert _sparse(fn(np.array([1, 2, 3, 4]), np.array(["A", "B", "A", "C"])))[1] == [[0, 2], [1, 3], [2, 1], [3, 0]]


@pytest.mark.parametrize("mode, x, expected", [
    ("one_hot", np.array(["a", "b", "c"]), ((3, 4), [[0, 3], [1, 2], [2, 0]])),
    ("one_hot", np.array([["a", "b"], ["c", "a"]]), ((2, 2, 4), [[0, 0, 3], [0, 1, 2], [1, 0, 0], [1, 1, 3]])),
    ("one_hot", np.array([[1], [2]]), ((2, 4), [[0, 1], [1, 3]])),
    ("multi_hot", np.array(["a", "b", "c"]), ((4,), [[0], [2], [3]])),
    ("multi_hot", np.array([["a", "b"], ["c", "a"]]), ((2, 4), [[0, 2], [0, 3], [1, 0], [1, 3]])),
    ("count", np.array([[1], [2]]), ((2, 4), [[0, 1], [1, 3]])),
])
def test_hashing_sparse_is_keras(mode, x, expected):
    out = L.Hashing(num_bins=4, output_mode=mode, sparse=True)(x)
    shape, indices, values = _sparse(out)
    assert (shape, indices) == expected and values == [1.0] * len(indices)


def test_conv_lstm_unroll_keeps_keras_config_and_values():
    x = np.random.RandomState(0).rand(1, 3, 5, 5, 1).astype("float32")
    unrolled = L.ConvLSTM2D(2, 3, unroll=True)
    out = unrolled(x)
    assert unrolled.get_config()["unroll"] is True
    looped = L.ConvLSTM2D(2, 3)
    looped.build(x.shape)
    looped.set_weights(unrolled.get_weights())
    np.testing.assert_array_equal(looped(x).numpy(), out.numpy())
    assert L.ConvLSTM2D.from_config(unrolled.get_config()).unroll is True


def test_random_shape_from_a_reshaped_scalar_in_tf_function():
    fn = tf.function(lambda: tf.random.stateless_uniform(tf.reshape(4, [1]), seed=[1, 2]))
    np.testing.assert_array_equal(fn().numpy(), tf.random.stateless_uniform([4], seed=[1, 2]).numpy())


def test_hashing_sparse_symbolic_spec_is_keras():
    out = L.Hashing(4, output_mode="one_hot", sparse=True)(tf.keras.Input((1,), dtype="string"))
    assert out.shape == (None, 4) and not out.sparse  # Keras 3.15's output spec
