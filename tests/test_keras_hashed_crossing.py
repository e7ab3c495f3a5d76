"""tf.keras.layers.HashedCrossing and the SparseCrossHashed kernel behind it, against bins pinned from Keras 3.15
with TensorFlow 2.21 (tests never import TF/Keras)."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.ops.cross_ops import sparse_cross_hashed_dense

L = tf.keras.layers


def test_crosses_hash_into_keras_bins():
    h = L.HashedCrossing(num_bins=5)
    out = h((np.array([1, 2, 3, 4]), np.array(["A", "B", "A", "C"])))
    assert out.dtype == tf.int64 and out.numpy().tolist() == [2, 3, 1, 0]
    out = h((np.array([[1], [2]]), np.array([[5], [7]])))
    assert out.shape == (2, 1) and out.numpy().tolist() == [[3], [2]]
    features = (np.array(["a", "b", "c"]), np.array(["x", "y", "z"]), np.array([3, 4, 5]))
    three = L.HashedCrossing(num_bins=1000)(features)
    assert three.numpy().tolist() == [894, 441, 592]
    scalar = L.HashedCrossing(num_bins=100)((np.int64(3), "q"))
    assert scalar.shape == () and int(scalar) == 43
    negative = L.HashedCrossing(num_bins=7)((np.array([-1, -2], "int32"), np.array([3, 4], "int32")))
    assert negative.numpy().tolist() == [0, 5]


def test_one_hot_output():
    for a, b in [(np.array([1, 2]), np.array([3, 4])), (np.array([[1], [2]]), np.array([[3], [4]]))]:
        out = L.HashedCrossing(num_bins=4, output_mode="one_hot")((a, b))
        assert out.dtype == tf.float32
        np.testing.assert_array_equal(out.numpy(), [[0, 0, 0, 1], [0, 0, 0, 1]])


def test_unbucketed_cross_is_tfs():
    # tf.sparse.cross_hashed([[[1], [2]] int64, [["a"], ["b"]]], num_buckets=0).values in TF 2.21
    indices, values, shape = sparse_cross_hashed_dense([np.array([[1], [2]], np.int64), np.array([["a"], ["b"]])], 0)
    assert values.numpy().tolist() == [6586076667385110638, 4367275301703982342]
    assert indices.numpy().tolist() == [[0, 0], [1, 0]] and shape.numpy().tolist() == [2, 1]
    _, values, shape = sparse_cross_hashed_dense([np.array([[1, 2]], np.int64), np.array([["a", "b"]])], 10)
    assert shape.numpy().tolist() == [1, 4]  # every combination of one value per input, per row
    with pytest.raises(tf.errors.InvalidArgumentError, match="int64 or string"):
        sparse_cross_hashed_dense([np.array([[1.0]]), np.array([[2.0]])], 3)


def test_graphs_models_and_config():
    h = L.HashedCrossing(num_bins=5)
    ds = tf.data.Dataset.from_tensor_slices((np.array([1, 2, 3, 4]), np.array(["A", "B", "A", "C"]))).batch(2)
    assert [x.numpy().tolist() for x in ds.map(lambda a, b: h((a, b)))] == [[2, 3], [1, 0]]
    f = tf.function(lambda a, b: h((a, b)), input_signature=[tf.TensorSpec([None], tf.int64),
                                                               tf.TensorSpec([None], tf.string)])
    assert f(np.array([1, 2, 3, 4]), np.array(["A", "B", "A", "C"])).numpy().tolist() == [2, 3, 1, 0]
    a, b = tf.keras.Input((1,), dtype="int64"), tf.keras.Input((1,), dtype="string")
    model = tf.keras.Model([a, b], L.HashedCrossing(num_bins=5, output_mode="one_hot")((a, b)))
    assert model.output_shape == (None, 5)
    assert L.HashedCrossing(num_bins=5, name="hc").get_config() == {
        "num_bins": 5, "output_mode": "int", "sparse": False, "name": "hc", "dtype": "int64"}
    cfg = L.HashedCrossing(num_bins=5, output_mode="one_hot", name="hc2").get_config()
    assert cfg == {"num_bins": 5, "output_mode": "one_hot", "sparse": False, "name": "hc2", "dtype": "float32"}
    assert L.HashedCrossing.from_config(cfg).get_config() == cfg
    assert h.compute_output_shape(((None, 1), (None, 1))) == (None, 1)
    assert L.HashedCrossing(3, output_mode="one_hot").compute_output_shape(((None, 1), (None, 1))) == (None, 3)


@pytest.mark.parametrize("inputs, message", [
    (np.array([1, 2]), "`HashedCrossing` should be called on a list or tuple of inputs."),
    ([np.array([1, 2])], "`HashedCrossing` should be called on at least two inputs."),
    ([np.array([[1, 2]]), np.array([[1, 2]])],
     r"All `HashedCrossing` inputs should have shape `\(\)`, `\(batch_size\)` or"),
    ([np.array([1, 2]), np.array([1, 2, 3])], "All `HashedCrossing` inputs should have equal shape."),
])
def test_bad_inputs_raise_keras_errors(inputs, message):
    with pytest.raises(ValueError, match=message):
        L.HashedCrossing(num_bins=5)(inputs)
    with pytest.raises(ValueError, match="`output_mode` argument"):
        L.HashedCrossing(num_bins=5, output_mode="count")
