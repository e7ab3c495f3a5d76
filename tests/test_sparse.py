"""tf.SparseTensor and tf.sparse: values pinned from TensorFlow 2.21."""

import numpy as np
import pytest

import tapeflow as tf


def test_prints_as_tf():
    st = tf.sparse.SparseTensor(indices=[[0, 3], [2, 4]], values=[10, 20], dense_shape=[3, 10])
    assert str(st) == (
        "SparseTensor(indices=tf.Tensor(\n[[0 3]\n [2 4]], shape=(2, 2), dtype=int64), values=tf.Tensor([10 20], "
        "shape=(2,), dtype=int32), dense_shape=tf.Tensor([ 3 10], shape=(2,), dtype=int64))"
    )
    assert repr(tf.SparseTensorSpec([None, 4], tf.float32)) == "SparseTensorSpec(TensorShape([None, 4]), tf.float32)"
    assert st.shape.as_list() == [3, 10] and st.dtype == tf.int32


def test_from_dense_to_dense():
    st = tf.sparse.from_dense([[1, 0, 0, 8], [0, 0, 0, 0], [0, 0, 3, 0]])
    assert st.indices.numpy().tolist() == [[0, 0], [0, 3], [2, 2]]
    assert st.values.numpy().tolist() == [1, 8, 3]
    assert tf.sparse.to_dense(st).numpy().tolist() == [[1, 0, 0, 8], [0, 0, 0, 0], [0, 0, 3, 0]]
    words = tf.SparseTensor([[0, 1]], ["x"], [1, 2])
    assert tf.sparse.to_dense(words, "").numpy().tolist() == [[b"", b"x"]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of order"):
        tf.sparse.to_dense(tf.SparseTensor([[1, 0], [0, 1]], [1, 2], [2, 2]))


def test_reorder_reshape_retain_transpose():
    st = tf.sparse.reorder(tf.SparseTensor([[1, 0], [0, 1]], [1, 2], [2, 2]))
    assert st.indices.numpy().tolist() == [[0, 1], [1, 0]] and st.values.numpy().tolist() == [2, 1]
    r = tf.sparse.reshape(st, [4])
    assert r.indices.numpy().tolist() == [[1], [2]] and r.dense_shape.numpy().tolist() == [4]
    assert tf.sparse.retain(st, [True, False]).indices.numpy().tolist() == [[0, 1]]
    t = tf.sparse.transpose(tf.SparseTensor([[0, 1], [1, 0], [1, 2]], [1, 2, 3], [2, 3]))
    assert t.indices.numpy().tolist() == [[0, 1], [1, 0], [2, 1]] and t.values.numpy().tolist() == [2, 1, 3]


def test_add_concat_slice():
    a = tf.SparseTensor([[0, 2], [3, 4]], [31, 2], [4, 10])
    b = tf.SparseTensor([[0, 2], [3, 0]], [56, 38], [4, 10])
    s = tf.sparse.add(a, b)
    assert s.indices.numpy().tolist() == [[0, 2], [3, 0], [3, 4]] and s.values.numpy().tolist() == [87, 38, 2]
    dense = tf.sparse.add(tf.SparseTensor([[0, 0]], [1.0], [2, 2]), tf.ones([2, 2]))
    assert dense.numpy().tolist() == [[2.0, 1.0], [1.0, 1.0]]
    pa = tf.SparseTensor([[2, 4], [3, 3]], [1, 1], [8, 5])
    pb = tf.SparseTensor([[0, 2], [1, 1]], [1, 1], [8, 6])
    c = tf.sparse.concat(axis=1, sp_inputs=[pa, pb])
    assert c.dense_shape.numpy().tolist() == [8, 11]
    assert c.indices.numpy().tolist() == [[0, 7], [1, 6], [2, 4], [3, 3]]
    sl = tf.sparse.slice(pb, start=[0, 5], size=[8, 6])
    assert sl.dense_shape.numpy().tolist() == [8, 1] and sl.indices.numpy().shape == (0, 2)


def test_reductions_map_values_fill_empty_rows():
    st = tf.SparseTensor([[0, 0], [1, 2], [1, 0]], [1, 2, 3], [2, 3])
    assert tf.sparse.reduce_sum(st, axis=1).numpy().tolist() == [1, 5]
    assert tf.sparse.reduce_sum(st, axis=0, keepdims=True).numpy().tolist() == [[4, 0, 2]]
    assert int(tf.sparse.reduce_max(tf.sparse.from_dense([-5, 0, -3]))) == -3
    m = tf.sparse.reduce_max(tf.SparseTensor([[0, 1], [1, 0]], [-1.0, -2.0], [3, 3]), axis=1)
    assert m.numpy().tolist() == [-1.0, -2.0, 0.0]
    st2 = tf.sparse.from_dense([[1, 0, 0, 8], [0, 0, 0, 0], [0, 0, 3, 0]])
    assert tf.sparse.to_dense(tf.sparse.map_values(tf.add, st2, 5)).numpy().tolist()[0] == [6, 0, 0, 13]
    filled, empty = tf.sparse.fill_empty_rows(tf.SparseTensor([[0, 1]], [1.0], [2, 3]), 5.0)
    assert filled.indices.numpy().tolist() == [[0, 1], [1, 0]] and filled.values.numpy().tolist() == [1.0, 5.0]
    assert empty.numpy().tolist() == [False, True]
    assert (st2 * 2).values.numpy().tolist() == [2, 16, 6]
    assert tf.abs(tf.SparseTensor([[0, 0]], [-2.0], [1, 1])).values.numpy().tolist() == [2.0]


def test_sparse_dense_matmul_and_gradients():
    st_c = tf.SparseTensor(indices=([0, 1], [1, 0], [1, 1]), values=[13, 15, 17], dense_shape=(2, 2))
    assert tf.sparse.sparse_dense_matmul(st_c, tf.constant([[4], [6]])).numpy().tolist() == [[78], [162]]
    vals = tf.constant([1.0, 2.0, 3.0])
    b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([vals, b])
        st = tf.SparseTensor([[0, 0], [1, 2], [2, 1]], vals, [3, 3])
        out = tf.sparse.sparse_dense_matmul(st, b)
        loss = tf.reduce_sum(out * tf.constant([[1.0, -1.0], [2.0, 0.5], [3.0, 1.0]]))
        out2 = tf.sparse.sparse_dense_matmul(st, b, adjoint_a=True)
        loss2 = tf.reduce_sum(out2 * out2)
    assert out.numpy().tolist() == [[1, 2], [10, 12], [9, 12]]
    np.testing.assert_allclose(tape.gradient(loss, vals).numpy(), [-1, 13, 13])
    np.testing.assert_allclose(tape.gradient(loss, b).numpy(), [[1, -1], [9, 3], [4, 1]])
    assert out2.numpy().tolist() == [[1, 2], [15, 18], [6, 8]]
    np.testing.assert_allclose(tape.gradient(loss2, vals).numpy(), [10, 100, 366])
    np.testing.assert_allclose(tape.gradient(loss2, b).numpy(), [[2, 4], [24, 32], [90, 108]])
    with tf.GradientTape() as tape:
        tape.watch(vals)
        st = tf.SparseTensor([[0, 0], [1, 2], [2, 1]], vals, [3, 3])
        total = tf.reduce_sum(tf.sparse.to_dense(st) * tf.reshape(tf.range(9, dtype=tf.float32), [3, 3]))
        total += tf.sparse.reduce_sum(st) * 2.0
    np.testing.assert_allclose(tape.gradient(total, vals).numpy(), [2, 7, 9])
    with pytest.raises(tf.errors.InvalidArgumentError, match="inner dimension"):
        tf.sparse.sparse_dense_matmul(st_c, tf.ones([3, 1], tf.int32))


def test_nest_and_spec():
    st = tf.SparseTensor([[0, 1]], [1.0], [2, 3])
    flat = tf.nest.flatten([st], expand_composites=True)
    assert [f.numpy().tolist() for f in flat] == [[[0, 1]], [1.0], [2, 3]]
    back = tf.nest.pack_sequence_as([st], flat, expand_composites=True)[0]
    assert isinstance(back, tf.SparseTensor) and back.dense_shape.numpy().tolist() == [2, 3]
    assert st._type_spec == tf.SparseTensorSpec([2, 3], tf.float32)
    assert tf.SparseTensorSpec([None, 3], tf.float32).is_compatible_with(st)


def test_unsupported_is_named():
    with pytest.raises(NotImplementedError, match="sparse_dense_matmul"):
        tf.matmul(tf.SparseTensor([[0, 1]], [1.0], [2, 3]), tf.ones([3, 2]))


def _entries(st):
    return st.dense_shape.numpy().tolist(), st.indices.numpy().tolist(), st.values.numpy().tolist()


def test_dataset_of_sparse():
    data = tf.sparse.SparseTensor(
        indices=[(0, 0), (0, 1), (0, 2), (4, 3), (5, 0), (5, 1)], values=[1] * 6, dense_shape=(6, 4)
    )
    ds = tf.data.Dataset.from_tensor_slices(data)
    elems = [_entries(e) for e in ds]
    assert elems[0] == ([4], [[0], [1], [2]], [1, 1, 1]) and elems[1] == ([4], [], [])
    assert elems[5] == ([4], [[0], [1]], [1, 1])
    assert repr(ds.element_spec) == "SparseTensorSpec(TensorShape([4]), tf.int32)"
    batches = [_entries(e) for e in ds.batch(2)]
    assert batches[2] == ([2, 4], [[0, 3], [1, 0], [1, 1]], [1, 1, 1])
    assert [_entries(e) for e in ds.batch(2).unbatch()] == elems
    assert _entries(next(iter(ds.map(lambda x: x * 2)))) == ([4], [[0], [1], [2]], [2, 2, 2])


def test_tf_function_with_sparse_argument():
    @tf.function
    def f(x, y):
        return tf.sparse.sparse_dense_matmul(x, y)

    a = tf.sparse.SparseTensor(indices=[[0, 3], [2, 4]], values=[15, 25], dense_shape=[3, 10])
    b = tf.sparse.to_dense(tf.sparse.transpose(a))
    assert f(a, b).numpy().tolist() == [[225, 0, 0], [0, 0, 0], [0, 0, 625]]


def test_keras_dense_on_sparse_input():
    x = tf.keras.Input(shape=(4,), sparse=True)
    assert repr(x).startswith("<KerasTensor shape=(None, 4), dtype=float32, sparse=True, ragged=False, name=")
    model = tf.keras.Model(x, tf.keras.layers.Dense(4)(x))
    data = tf.SparseTensor(indices=[(0, 0), (0, 1), (4, 3)], values=[1, 1, 1], dense_shape=(6, 4))
    out = model(data)
    dense = model(tf.sparse.to_dense(tf.sparse.map_values(tf.cast, data, tf.float32)))
    np.testing.assert_allclose(out.numpy(), dense.numpy(), rtol=1e-6)
    layer = tf.keras.layers.Dense(2, kernel_initializer="ones")
    assert layer(tf.SparseTensor([[0, 1]], [2.0], [2, 4])).numpy().tolist() == [[2.0, 2.0], [0.0, 0.0]]


def test_namespaces_name_what_is_not_built():
    with pytest.raises(NotImplementedError, match="tf.ragged.cross"):
        tf.ragged.cross
    assert not hasattr(tf.sparse, "no_such_op")


def test_keras_predict_and_fit_on_a_sparse_tensor():
    # Keras batches a SparseTensor input by rows (values recorded from TensorFlow 2.21 / Keras 3)
    import numpy as np

    x = tf.keras.Input(shape=(4,), sparse=True)
    model = tf.keras.Model(x, tf.keras.layers.Dense(4, kernel_initializer="ones")(x))
    sp = tf.sparse.SparseTensor(indices=[(0, 0), (0, 1), (0, 2), (4, 3), (5, 0), (5, 1)], values=[1.0] * 6,
                                dense_shape=(6, 4))
    want = np.repeat([[3.0], [0], [0], [0], [1], [2]], 4, axis=1)
    np.testing.assert_array_equal(model.predict(sp, verbose=0), want)
    np.testing.assert_array_equal(model.predict(sp, batch_size=4, verbose=0), want)
    model.compile(loss="mse", optimizer="sgd")
    h = model.fit(sp, np.ones((6, 4)), batch_size=4, epochs=1, verbose=0, shuffle=False)
    assert round(h.history["loss"][0], 4) == 1.3321
    h = model.fit(sp, np.ones((6, 4)), batch_size=4, epochs=1, verbose=0)  # shuffled rows of a SparseTensor
    assert np.isfinite(h.history["loss"][0])


def _triple(s):
    return s.indices.numpy().tolist(), s.values.numpy().tolist(), s.values.dtype.name, s.dense_shape.numpy().tolist()


def test_sparse_bincount_as_tf():
    # TF 2.21's tf.sparse.bincount (DenseCountSparseOutput): an occurring value has an entry even when its weights
    # sum to 0; the depth is max(max + 1, minlength), capped by maxlength; an empty input has depth 1
    x = tf.constant([[5, 11, 5, 17, 17], [1, 1, 0, 2, 3]])
    w = tf.constant([[0.5, 1.5, 0.7, 1.8, 0.2], [1., 1., 1., 1., 0.]])
    idx = [[0, 5], [0, 11], [0, 17], [1, 0], [1, 1], [1, 2], [1, 3]]
    assert _triple(tf.sparse.bincount(x, axis=-1)) == (idx, [2, 1, 2, 1, 2, 1, 1], "int32", [2, 18])
    i, v, d, s = _triple(tf.sparse.bincount(x, weights=w, axis=-1, minlength=20, maxlength=20))
    assert (i, d, s) == (idx, "float32", [2, 20])
    np.testing.assert_allclose(v, [1.2, 1.5, 2.0, 1.0, 2.0, 1.0, 0.0], rtol=1e-6)
    assert _triple(tf.sparse.bincount(x, axis=-1, binary_output=True, maxlength=6)) == (
        [[0, 5], [1, 0], [1, 1], [1, 2], [1, 3]], [1, 1, 1, 1, 1], "int32", [2, 6])
    assert _triple(tf.sparse.bincount(x, minlength=30)) == (
        [[0], [1], [2], [3], [5], [11], [17]], [1, 2, 1, 1, 2, 1, 2], "int32", [30])
    assert _triple(tf.sparse.bincount(tf.constant([3, 1, 3], tf.int64), weights=tf.constant([1., 2., 3.], tf.float64),
                                      maxlength=3)) == ([[1]], [2.0], "float64", [3])
    assert _triple(tf.sparse.bincount(tf.constant([1, 2], tf.int64)))[2] == "int64"
    assert _triple(tf.sparse.bincount(tf.constant([[]], tf.int32), axis=-1)) == ([], [], "int32", [1, 1])
    assert _triple(tf.sparse.bincount(tf.constant([[[1, 2]]]))) == ([[1], [2]], [1, 1], "int32", [3])
    sp = tf.sparse.SparseTensor([[0, 0], [0, 2], [1, 1]], [4, 4, 2], [2, 3])
    assert _triple(tf.sparse.bincount(sp, axis=-1)) == ([[0, 4], [1, 2]], [2, 1], "int32", [2, 5])
    assert _triple(tf.sparse.bincount(tf.ragged.constant([[1, 1], [2]]), axis=-1)) == (
        [[0, 1], [1, 2]], [2, 1], "int32", [2, 3])
    with pytest.raises(ValueError, match="Only 0 and -1 are currently supported"):
        tf.sparse.bincount(x, axis=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input values must all be non-negative"):
        tf.sparse.bincount(tf.constant([-1, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"must be a 1 or 2-dimensional tensor. Got: \[1,1,1\]"):
        tf.sparse.bincount(tf.constant([[[1]]]), axis=-1)

    @tf.function
    def f(a):
        return tf.sparse.bincount(a, axis=-1, minlength=6, maxlength=6)

    assert _triple(f(x)) == ([[0, 5], [1, 0], [1, 1], [1, 2], [1, 3]], [2, 1, 2, 1, 1], "int32", [2, 6])
    out = f.get_concrete_function(tf.TensorSpec([None, None], tf.int32)).structured_outputs
    assert (out.indices.shape.as_list(), out.values.shape.as_list(), out.dense_shape.shape.as_list()) == (
        [None, 2], [None], [2])


def test_category_encoding_sparse_outputs_as_keras():
    # Keras 3.15.1 with TF: SparseTensors of the layer's dtype, [rows, num_tokens]
    x = tf.constant([[5, 11, 5, 17, 17], [1, 1, 0, 2, 3]])
    w = tf.constant([[0.5, 1.5, 0.7, 1.8, 0.2], [1., 1., 1., 1., 0.]])
    count = tf.keras.layers.CategoryEncoding(num_tokens=20, output_mode="count", sparse=True)
    out = count(x, count_weights=w)
    assert isinstance(out, tf.sparse.SparseTensor) and _triple(out)[2:] == ("float32", [2, 20])
    np.testing.assert_allclose(tf.sparse.to_dense(out).numpy()[0, [5, 11, 17]], [1.2, 1.5, 2.0], rtol=1e-6)
    L = tf.keras.layers
    assert _triple(L.CategoryEncoding(num_tokens=6, output_mode="one_hot", sparse=True)(tf.constant([[1], [3]]))) == (
        [[0, 1], [1, 3]], [1.0, 1.0], "float32", [2, 6])
    assert _triple(L.CategoryEncoding(num_tokens=6, output_mode="multi_hot", sparse=True)(x % 6)) == (
        [[0, 5], [1, 0], [1, 1], [1, 2], [1, 3]], [1.0] * 5, "float32", [2, 6])
    assert _triple(L.CategoryEncoding(num_tokens=6, output_mode="one_hot", sparse=True)(tf.constant([1, 3, 3]))) == (
        [[0, 1], [1, 3], [2, 3]], [1.0] * 3, "float32", [3, 6])
    assert _triple(L.CategoryEncoding(num_tokens=6, output_mode="count", sparse=True)(tf.constant([1, 3, 3]))) == (
        [[1], [3]], [1.0, 2.0], "float32", [6])
    i = tf.keras.Input((5,), dtype="int32")
    kt = L.CategoryEncoding(num_tokens=20, output_mode="count", sparse=True)(i)
    assert repr(kt).startswith("<KerasTensor shape=(None, 20), dtype=float32, sparse=True, ragged=False")
    m = tf.keras.Model(i, L.Dense(2, kernel_initializer="ones")(kt))
    assert m(x).numpy().tolist() == [[5.0, 5.0], [5.0, 5.0]]
    assert "sparse" not in L.CategoryEncoding(num_tokens=20, sparse=True).get_config()  # Keras leaves it out
