"""tf.RaggedTensor and tf.ragged: values pinned from TensorFlow 2.21."""

import numpy as np
import pytest

import tapeflow as tf


def _digits():
    return tf.ragged.constant([[3, 1, 4, 1], [], [5, 9, 2], [6], []])


def test_constant_prints_as_tf():
    rt = _digits()
    assert repr(rt) == "<tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9, 2], [6], []]>"
    assert str(tf.ragged.constant([[1.0, 2.0], []]) * 2.0) == "<tf.RaggedTensor [[2.0, 4.0], []]>"
    words = tf.ragged.constant([["Hi"], ["How", "are", "you"]])
    assert str(words) == "<tf.RaggedTensor [[b'Hi'], [b'How', b'are', b'you']]>"
    x = tf.ragged.constant([[[1, 2], [3, 4], [5, 6]], [[7, 8]]], ragged_rank=1)
    assert str(x + tf.constant([[10]])) == ("<tf.RaggedTensor [[[11, 12],\n  [13, 14],\n  [15, 16]], [[17, 18]]]>")


def test_constant_errors():
    with pytest.raises(ValueError, match="mixed types"):
        tf.ragged.constant([["one", "two"], [3, 4]])
    with pytest.raises(ValueError, match="same nesting depth"):
        tf.ragged.constant(["A", ["B", "C"]])


def test_properties():
    rt = tf.ragged.constant([[1, 2], [3, 4, 5], [6], [], [7]])
    assert rt.shape.as_list() == [5, None]
    assert rt.dtype == tf.int32 and rt.ragged_rank == 1
    assert rt.values.numpy().tolist() == [1, 2, 3, 4, 5, 6, 7]
    assert rt.row_splits.numpy().tolist() == [0, 2, 5, 6, 6, 7]
    assert rt.row_splits.dtype == tf.int64
    assert rt.row_lengths().numpy().tolist() == [2, 3, 1, 0, 1]
    assert rt.value_rowids().numpy().tolist() == [0, 0, 1, 1, 1, 2, 4]
    assert int(rt.nrows()) == 5
    assert rt.bounding_shape().numpy().tolist() == [5, 3]
    assert rt.to_list() == [[1, 2], [3, 4, 5], [6], [], [7]]
    conv = tf.ragged.constant([[[["I", "like"]], [["Oh"], ["What", "can"]]], [[["I"]]]])
    assert conv.shape.as_list() == [2, None, None, None] and conv.ragged_rank == 3
    assert len(conv.nested_row_splits) == 3
    assert conv.flat_values.numpy().tolist() == [b"I", b"like", b"Oh", b"What", b"can", b"I"]


def test_factories():
    want = [[3, 1, 4, 1], [], [5, 9], [2]]
    vals = [3, 1, 4, 1, 5, 9, 2]
    assert tf.RaggedTensor.from_value_rowids(vals, [0, 0, 0, 0, 2, 2, 3]).to_list() == want
    assert tf.RaggedTensor.from_row_lengths(vals, [4, 0, 2, 1]).to_list() == want
    assert tf.RaggedTensor.from_row_splits(vals, [0, 4, 4, 6, 7]).to_list() == want
    assert tf.RaggedTensor.from_row_starts([1, 2, 3], [0, 1, 1]).to_list() == [[1], [], [2, 3]]
    assert tf.RaggedTensor.from_row_limits([1, 2, 3], [1, 1, 3]).to_list() == [[1], [], [2, 3]]
    nested = tf.RaggedTensor.from_nested_row_splits(list(range(10, 20)), ([0, 1, 1, 5], [0, 3, 3, 5, 9, 10]))
    assert str(nested) == "<tf.RaggedTensor [[[10, 11, 12]], [], [[], [13, 14], [15, 16, 17, 18], [19]]]>"
    assert tuple(nested.shape.as_list()) == (3, None, None) and nested.ragged_rank == 2
    padded = [[1, 3, -1, -1], [2, -1, -1, -1], [4, 5, 8, 9]]
    assert tf.RaggedTensor.from_tensor(padded, padding=-1).to_list() == [[1, 3], [2], [4, 5, 8, 9]]
    st = tf.SparseTensor(indices=[[0, 0], [2, 0], [2, 1]], values=["a", "b", "c"], dense_shape=[3, 3])
    assert str(tf.RaggedTensor.from_sparse(st)) == "<tf.RaggedTensor [[b'a'], [], [b'b', b'c']]>"
    uni = tf.RaggedTensor.from_uniform_row_length(
        tf.RaggedTensor.from_row_splits(list(range(10, 20)), [0, 3, 5, 9, 10]), 2
    )
    assert str(uni.shape) == "(2, 2, None)"
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.RaggedTensor.from_row_splits([1, 2], [0, 3])
    with pytest.raises(ValueError, match="private"):
        tf.RaggedTensor([1], [0, 1])


def test_to_tensor_and_sparse():
    rt = tf.ragged.constant([["Hi"], ["Welcome", "to", "the", "fair"], ["Have", "fun"]])
    dense = rt.to_tensor(default_value="", shape=[None, 10])
    assert dense.shape.as_list() == [3, 10] and dense.numpy()[1, 3] == b"fair" and dense.numpy()[1, 4] == b""
    st = tf.ragged.constant([[1, 2], [3], [4, 5, 6]]).to_sparse()
    assert st.indices.numpy().tolist() == [[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 2]]
    assert st.dense_shape.numpy().tolist() == [3, 3]
    assert _digits().to_tensor().numpy()[2].tolist() == [5, 9, 2, 0]


def test_numpy_is_object_array_of_rows():
    out = tf.ragged.constant([[1, 2], [3, 4, 5]]).numpy()
    assert out.dtype == object and out[1].tolist() == [3, 4, 5] and out[1].dtype == np.int32


def test_indexing():
    digits = _digits()
    assert digits[0].numpy().tolist() == [3, 1, 4, 1]
    assert digits[:, :2].to_list() == [[3, 1], [], [5, 9], [6], []]
    assert digits[:, -2:].to_list() == [[4, 1], [], [9, 2], [6], []]
    assert digits[1:3].to_list() == [[], [5, 9, 2]]
    rt = tf.ragged.constant([[[1, 2, 3], [4]], [[5], [], [6]], [[7]], [[8, 9], [10]]])
    assert rt[1].to_list() == [[5], [], [6]]
    assert rt[3, 0].numpy().tolist() == [8, 9]
    assert rt[:, 1:3].to_list() == [[[4]], [[], [6]], [], [[10]]]
    q = tf.ragged.constant([["Who", "is"], ["What", "is", "the"]])
    assert q[1, 2].numpy() == b"the"


def test_elementwise_and_broadcasting():
    digits = _digits()
    assert tf.add(digits, 3).to_list() == [[6, 4, 7, 4], [], [8, 12, 5], [9], []]
    assert (digits + digits).to_list() == [[6, 2, 8, 2], [], [10, 18, 4], [12], []]
    x = tf.ragged.constant([[10, 87, 12], [19, 53], [12, 32]])
    assert (x + [[1000], [2000], [3000]]).to_list() == [[1010, 1087, 1012], [2019, 2053], [3012, 3032]]
    x4 = tf.ragged.constant([[[[1], [2]], [], [[3]], [[4]]], [[[5], [6]], [[7]]]], ragged_rank=2)
    assert (x4 + tf.constant([10, 20, 30])).to_list()[1][1] == [[17, 27, 37]]
    assert tf.math.square(digits).to_list()[0] == [9, 1, 16, 1]
    assert tf.ragged.map_flat_values(lambda v: v * 2 + 1, digits).to_list()[2] == [11, 19, 5]
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.ragged.constant([[1, 2, 3], [4], [5, 6]]) + tf.ragged.constant([[10, 20], [30, 40], [50]])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.ragged.constant([[1, 2], [3, 4, 5, 6], [7]]) + tf.constant([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]])


def test_reductions():
    digits = _digits()
    mean = tf.reduce_mean(digits, axis=1)
    assert mean.dtype == tf.float64
    np.testing.assert_allclose(mean.numpy(), [2.25, np.nan, 5.333333333333333, 6.0, np.nan])
    x = tf.ragged.constant([[1, 2], [3], [4, 5, 6]])
    assert tf.reduce_sum(x, axis=0).numpy().tolist() == [8, 7, 6]
    assert tf.reduce_max(x, axis=0).numpy().tolist() == [4, 5, 6]
    assert int(tf.reduce_min(x)) == 1
    assert tf.reduce_prod(x, axis=1).numpy().tolist() == [2, 3, 120]
    assert tf.math.reduce_max(x, axis=-1).numpy().tolist() == [2, 3, 6]
    assert tf.reduce_max(tf.ragged.constant([[1, 2], []]), axis=1).numpy().tolist() == [2, -2147483648]


def test_concat_stack_gather():
    x = tf.ragged.constant([[1, 2], [3], [4, 5, 6]])
    assert tf.concat([_digits(), [[5, 3]]], axis=0).to_list()[-1] == [5, 3]
    assert tf.concat([x, x], axis=1).to_list() == [[1, 2, 1, 2], [3, 3], [4, 5, 6, 4, 5, 6]]
    assert str(tf.stack([x, x], axis=1)) == (
        "<tf.RaggedTensor [[[1, 2], [1, 2]],\n [[3], [3]],\n [[4, 5, 6], [4, 5, 6]]]>"
    )
    assert tf.stack([x, x], axis=0).shape.as_list() == [2, None, None]
    assert tf.gather(x, [2, 0]).to_list() == [[4, 5, 6], [1, 2]]
    assert tf.gather([10, 20, 30, 40, 50, 60, 70], x).to_list() == [[20, 30], [40], [50, 60, 70]]


def test_map_fn_boolean_mask_range():
    digits = _digits()
    assert tf.map_fn(tf.math.square, digits).to_list() == [[9, 1, 16, 1], [], [25, 81, 4], [36], []]
    x = tf.ragged.constant([[1, 2], [3], [4, 5, 6]])
    assert tf.ragged.boolean_mask(x, x > 2).to_list() == [[], [3], [4, 5, 6]]
    assert tf.ragged.boolean_mask([[1, 2], [3, 4]], [[True, False], [True, True]]).to_list() == [[1], [3, 4]]
    assert tf.ragged.range([3, 0, 2]).to_list() == [[0, 1, 2], [], [0, 1]]
    r = tf.ragged.range([1.0, 2.0], [3.0, 3.0], 0.5)
    assert r.dtype == tf.float32 and r.to_list() == [[1.0, 1.5, 2.0, 2.5], [2.0, 2.5]]


def test_type_spec_and_nest():
    spec = tf.RaggedTensorSpec(shape=[None, None], dtype=tf.int32)
    assert repr(spec) == "RaggedTensorSpec(TensorShape([None, None]), tf.int32, 1, tf.int64)"
    x = tf.ragged.constant([[1, 2], [3], [4, 5, 6]])
    assert repr(x._type_spec) == "RaggedTensorSpec(TensorShape([3, None]), tf.int32, 1, tf.int64)"
    assert spec.is_compatible_with(x)
    flat = tf.nest.flatten({"a": x, "b": 1}, expand_composites=True)
    assert [f.numpy().tolist() if hasattr(f, "numpy") else f for f in flat] == [[1, 2, 3, 4, 5, 6], [0, 2, 3, 6], 1]
    back = tf.nest.pack_sequence_as({"a": x, "b": 1}, flat, expand_composites=True)
    assert back["a"].to_list() == x.to_list() and back["b"] == 1
    assert len(tf.nest.flatten(x)) == 1


def test_gradients_wrt_flat_values():
    fv = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(fv)
        rt = tf.RaggedTensor.from_row_splits(fv, [0, 2, 2, 5])
        y = tf.reduce_sum(tf.reduce_max(rt, axis=1) * tf.constant([1.0, 2.0, 3.0]))
        z = tf.reduce_sum(rt.to_tensor(default_value=7.0) * tf.reshape(tf.range(1.0, 10.0), [3, 3]))
        w = tf.reduce_sum(tf.reduce_mean(rt * rt, axis=1)[::2])
        q = tf.reduce_sum((rt[:, 1:] * 3.0).flat_values)
    np.testing.assert_allclose(tape.gradient(y, fv).numpy(), [0, 1, 0, 0, 3])
    np.testing.assert_allclose(tf.convert_to_tensor(tape.gradient(z, fv)).numpy(), [1, 2, 7, 8, 9])
    np.testing.assert_allclose(tape.gradient(w, fv).numpy(), [1, 2, 2, 2.6666667, 3.3333335], rtol=1e-6)
    np.testing.assert_allclose(tf.convert_to_tensor(tape.gradient(q, fv)).numpy(), [0, 3, 0, 3, 3])


def test_unsupported_is_named():
    with pytest.raises(TypeError, match="to_tensor"):
        tf.convert_to_tensor(tf.ragged.constant([[1], [2, 3]]))


def test_tf_function_with_ragged_argument():
    @tf.function
    def make_palindrome(x, axis):
        return tf.concat([x, tf.reverse(x, [axis])], axis)

    out = make_palindrome(tf.ragged.constant([[1, 2], [3], [4, 5, 6]]), axis=1)
    assert str(out) == "<tf.RaggedTensor [[1, 2, 2, 1], [3, 3], [4, 5, 6, 6, 5, 4]]>"

    @tf.function(input_signature=[tf.RaggedTensorSpec(shape=[None, None], dtype=tf.int32)])
    def max_and_min(rt):
        return (tf.math.reduce_max(rt, axis=-1), tf.math.reduce_min(rt, axis=-1))

    hi, lo = max_and_min(tf.ragged.constant([[1, 2], [3], [4, 5, 6]]))
    assert hi.numpy().tolist() == [2, 3, 6] and lo.numpy().tolist() == [1, 3, 4]
    with pytest.raises(TypeError, match="compatible"):
        max_and_min(tf.ragged.constant([[1.0], [2.0]]))

    @tf.function
    def increment(x):
        return x + 1

    rt = tf.ragged.constant([[1, 2], [3], [4, 5, 6]])
    cf = increment.get_concrete_function(rt)
    assert str(cf(rt)) == "<tf.RaggedTensor [[2, 3], [4], [5, 6, 7]]>"


def test_tf_function_gradient_through_flat_values():
    fv = tf.Variable([1.0, 2.0, 3.0])

    @tf.function
    def f(r):
        return tf.reduce_sum(r * r)

    with tf.GradientTape() as tape:
        y = f(tf.RaggedTensor.from_row_splits(fv * 1.0, [0, 1, 3]))
    assert tape.gradient(y, fv).numpy().tolist() == [2.0, 4.0, 6.0]


def test_dataset_of_ragged():
    ds = tf.data.Dataset.from_tensor_slices({"a": tf.ragged.constant([[1, 2], [3], [4, 5, 6]])})
    rows = [e["a"].numpy().tolist() for e in ds]
    assert rows == [[1, 2], [3], [4, 5, 6]]
    assert repr(ds.element_spec["a"]) == "RaggedTensorSpec(TensorShape([None]), tf.int32, 0, tf.int64)"
    batches = [str(e["a"]) for e in ds.batch(2)]
    assert batches == ["<tf.RaggedTensor [[1, 2], [3]]>", "<tf.RaggedTensor [[4, 5, 6]]>"]
    assert [e["a"].numpy().tolist() for e in ds.batch(2).unbatch()] == rows
    ragged = tf.data.Dataset.from_tensor_slices([1, 5, 3, 2, 8]).map(tf.range)
    out = [str(e) for e in ragged.apply(tf.data.experimental.dense_to_ragged_batch(2))]
    assert out == [
        "<tf.RaggedTensor [[0], [0, 1, 2, 3, 4]]>",
        "<tf.RaggedTensor [[0, 1, 2], [0, 1]]>",
        "<tf.RaggedTensor [[0, 1, 2, 3, 4, 5, 6, 7]]>",
    ]
    assert [e.to_list() for e in ragged.ragged_batch(5)] == [[[0], [0, 1, 2, 3, 4], [0, 1, 2], [0, 1], list(range(8))]]


def test_gradient_wrt_ragged_source():
    rt = tf.RaggedTensor.from_row_splits(tf.constant([1.0, 2.0, 3.0]), [0, 1, 3])
    with tf.GradientTape() as tape:
        tape.watch(rt)
        y = tf.reduce_sum(rt * rt)
    g = tape.gradient(y, rt)
    assert isinstance(g, tf.RaggedTensor) and str(g) == "<tf.RaggedTensor [[2.0], [4.0, 6.0]]>"


def test_keras_embedding_on_ragged_input():
    layer = tf.keras.layers.Embedding(10, 3)
    out = layer(tf.ragged.constant([[1, 2], [3]]))
    assert isinstance(out, tf.RaggedTensor) and out.shape.as_list() == [2, None, 3]
    np.testing.assert_allclose(out.flat_values.numpy(), layer.embeddings.numpy()[[1, 2, 3]])
    x = tf.keras.Input(shape=(None,), ragged=True, dtype="int32")
    assert ", sparse=False, ragged=True, name=" in repr(x)


def test_tile_ragged():
    d = tf.ragged.constant([[3, 1, 4, 1], [], [5, 9, 2], [6], []])
    assert tf.tile(d, [1, 2]).to_list() == [[3, 1, 4, 1, 3, 1, 4, 1], [], [5, 9, 2, 5, 9, 2], [6, 6], []]
    assert tf.tile(tf.ragged.constant([[1], [2, 3]]), [2, 1]).to_list() == [[1], [2, 3], [1], [2, 3]]


def test_partition_mismatch_message_as_tf():
    x = tf.ragged.constant([[1, 2, 3], [4], [5, 6]])
    with pytest.raises(tf.errors.InvalidArgumentError) as e:
        x + tf.ragged.constant([[10, 20], [30, 40], [50]])
    assert str(e.value) == (
        "Condition x == y did not hold.\nIndices of first 2 different values:\n[[1]\n [3]]\n"
        "Corresponding x values:\n[3 6]\nCorresponding y values:\n[2 5]\n"
        "First 3 elements of x:\n[0 3 4]\nFirst 3 elements of y:\n[0 2 4]"
    )
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Corresponding x values:\n\[ 4  8 12\]"):
        tf.ragged.constant([[1, 2], [3, 4, 5, 6], [7]]) + tf.constant([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]])


def test_nest_flattens_specs_to_component_specs():
    flat = tf.nest.flatten(tf.RaggedTensorSpec([None, None], tf.float32), expand_composites=True)
    assert [repr(s) for s in flat] == [
        "TensorSpec(shape=(None,), dtype=tf.float32, name=None)",
        "TensorSpec(shape=(None,), dtype=tf.int64, name=None)",
    ]
    rt = tf.ragged.constant([[1.0, 2.0], [3.0]])
    doubled = tf.nest.map_structure(lambda t: t * 2 if t.dtype == tf.float32 else t, rt, expand_composites=True)
    assert doubled.to_list() == [[2.0, 4.0], [6.0]]
