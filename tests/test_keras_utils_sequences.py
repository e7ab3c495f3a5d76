"""tf.keras.utils pad_sequences, normalize, timeseries_dataset_from_array, pack/unpack_x_y_sample_weight,
get_source_inputs: outputs pinned from real Keras 3.15 (tests never import TF)."""

import numpy as np
import pytest

import tapeflow as tf

U = tf.keras.utils
SEQS = [[1, 2, 3], [4, 5], [], [6, 7, 8, 9, 10]]


def test_pad_sequences():
    assert U.pad_sequences(SEQS).tolist() == [[0, 0, 1, 2, 3], [0, 0, 0, 4, 5], [0, 0, 0, 0, 0], [6, 7, 8, 9, 10]]
    assert U.pad_sequences(SEQS).dtype == np.int32
    assert U.pad_sequences(SEQS, maxlen=3, padding="post", truncating="post", value=-1).tolist() == [
        [1, 2, 3], [4, 5, -1], [-1, -1, -1], [6, 7, 8]]
    assert U.pad_sequences([[1.5, 2.5], [3.0]], dtype="float32", maxlen=4).tolist() == [
        [0.0, 0.0, 1.5, 2.5], [0.0, 0.0, 0.0, 3.0]]
    assert U.pad_sequences([["a", "b"], ["c"]], dtype=object, value="x").tolist() == [["a", "b"], ["x", "c"]]
    assert U.pad_sequences([[[1, 2], [3, 4]], [[5, 6]]]).tolist() == [[[1, 2], [3, 4]], [[0, 0], [5, 6]]]
    with pytest.raises(ValueError, match='Padding type "mid" not understood'):
        U.pad_sequences(SEQS, padding="mid")
    with pytest.raises(ValueError, match="`sequences` must be a list of iterables. Found non-iterable: 1"):
        U.pad_sequences([1, 2])
    with pytest.raises(ValueError, match="`dtype` int32 is not compatible with `value`'s type"):
        U.pad_sequences([["a"]], value="x")


def test_normalize_arrays_and_tensors():
    x = np.array([[3.0, 4.0], [0.0, 0.0], [1.0, 2.0]])
    np.testing.assert_allclose(U.normalize(x), [[0.6, 0.8], [0.0, 0.0], [0.4472136, 0.8944272]], rtol=1e-6)
    t = U.normalize(tf.constant(x, dtype=tf.float32), order=1)
    np.testing.assert_allclose(t.numpy(), [[0.42857143, 0.5714286], [0.0, 0.0], [0.33333334, 0.6666667]], rtol=1e-6)
    np.testing.assert_allclose(U.normalize(tf.constant(x, dtype=tf.float32)).numpy()[0], [0.6, 0.8], rtol=1e-6)


def test_timeseries_dataset_from_array():
    data = np.arange(20, dtype=np.float32).reshape(10, 2)
    ds = U.timeseries_dataset_from_array(data, np.arange(10), sequence_length=3, sequence_stride=2, batch_size=2)
    got = [[b[0].numpy().tolist(), b[1].numpy().tolist()] for b in ds]
    assert got == [[[[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], [[4.0, 5.0], [6.0, 7.0], [8.0, 9.0]]], [0, 2]],
                   [[[[8.0, 9.0], [10.0, 11.0], [12.0, 13.0]], [[12.0, 13.0], [14.0, 15.0], [16.0, 17.0]]], [4, 6]]]
    ds = U.timeseries_dataset_from_array(data, None, sequence_length=2, sampling_rate=2, batch_size=None,
                                         start_index=1, end_index=9)
    assert [b.numpy()[:, 0].tolist() for b in ds] == [[2.0, 6.0], [4.0, 8.0], [6.0, 10.0], [8.0, 12.0],
                                                      [10.0, 14.0], [12.0, 16.0]]
    # shuffled: Keras's NumPy draw of the start positions, then the dataset shuffle with the same seed (whose
    # order also depends on the global seed, as TF's: none here)
    tf.random.set_seed(None)
    ds = U.timeseries_dataset_from_array(data, np.arange(10), sequence_length=3, batch_size=3, shuffle=True, seed=7)
    batches = list(ds)  # (a second pass reshuffles, as TF's shuffle does each iteration)
    assert [b[1].numpy().tolist() for b in batches] == [[3, 1, 0], [6, 5, 4], [2, 7]]
    x, y = batches[0]
    assert x.dtype == tf.float32 and y.dtype == tf.int64 and x.numpy()[0, :, 0].tolist() == [6.0, 8.0, 10.0]
    with pytest.raises(ValueError, match="`sequence_stride` must be lower than the length of the data"):
        U.timeseries_dataset_from_array(data, None, sequence_length=2, sequence_stride=10)


def test_pack_unpack_and_source_inputs():
    assert U.pack_x_y_sample_weight(1) == 1 and U.pack_x_y_sample_weight((1, 2)) == ((1, 2),)
    assert U.pack_x_y_sample_weight(1, 2) == (1, 2) and U.pack_x_y_sample_weight(1, 2, 3) == (1, 2, 3)
    assert U.unpack_x_y_sample_weight(1) == (1, None, None) and U.unpack_x_y_sample_weight([1, 2]) == (1, 2, None)
    assert U.unpack_x_y_sample_weight((1, 2, 3)) == (1, 2, 3)
    with pytest.raises(ValueError, match="Data is expected to be in format `x`, `\\(x,\\)`, `\\(x, y\\)`"):
        U.unpack_x_y_sample_weight((1, 2, 3, 4))
    a, b = tf.keras.Input((3,), name="a"), tf.keras.Input((3,), name="b")
    d = tf.keras.layers.Dense(2)(tf.keras.layers.Add()([tf.keras.layers.Dense(3)(a), b]))
    src = U.get_source_inputs(d)
    assert len(src) == 2 and src[0] is a and src[1] is b and U.get_source_inputs(a)[0] is a
    assert U.is_keras_tensor(d) and not U.is_keras_tensor(np.ones(2))
    assert U.clear_session is tf.keras.backend.clear_session
