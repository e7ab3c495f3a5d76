"""tf.data.Dataset: sources, transformations, cardinality and specs pinned against TF 2.21."""

from __future__ import annotations

import collections
import time

import numpy as np
import pytest

import tapeflow as tf

D = tf.data.Dataset


def _np(ds):
    return list(ds.as_numpy_iterator())


def test_from_tensor_slices_tuple_yields_tensors():
    ds = D.from_tensor_slices(([1, 2, 3], [0.5, 1.5, 2.5]))
    items = list(ds)
    assert len(items) == 3 and isinstance(items[0], tuple)
    x, y = items[1]
    assert isinstance(x, tf.Tensor) and x.dtype == tf.int32 and int(x) == 2
    assert y.dtype == tf.float32 and float(y) == 1.5


def test_from_tensor_slices_dict_list_and_numpy_dtypes():
    ds = D.from_tensor_slices({"a": np.arange(4.0), "b": [[1, 2], [3, 4], [5, 6], [7, 8]]})
    first = next(iter(ds))
    assert set(first) == {"a", "b"} and first["a"].dtype == tf.float64
    assert first["b"].numpy().tolist() == [1, 2]
    assert D.from_tensor_slices([1.0, 2.0]).element_spec == tf.TensorSpec([], tf.float32)
    Point = collections.namedtuple("Point", "x y")
    p = next(iter(D.from_tensor_slices(Point([1, 2], [3, 4]))))
    assert isinstance(p, Point) and int(p.y) == 3


def test_from_tensors_and_range():
    assert [a.tolist() for a in _np(D.from_tensors([1, 2]))] == [[1, 2]]
    assert _np(D.range(2, 10, 3)) == [2, 5, 8]
    assert next(iter(D.range(3))).dtype == tf.int64
    assert _np(D.range(5, 0, -2)) == [5, 3, 1]


def test_batch_and_drop_remainder():
    ds = D.from_tensor_slices((np.arange(5), np.arange(5) * 10))
    batches = _np(ds.batch(2))
    assert [b[0].tolist() for b in batches] == [[0, 1], [2, 3], [4]]
    assert [b[1].tolist() for b in _np(ds.batch(2, drop_remainder=True))] == [[0, 10], [20, 30]]
    assert D.range(10).batch(3).element_spec == tf.TensorSpec([None], tf.int64)
    assert D.range(10).batch(3, drop_remainder=True).element_spec == tf.TensorSpec([3], tf.int64)
    # batching elements one by one (no gather plan) gives the same
    assert [b.tolist() for b in _np(D.range(5).map(lambda x: x).batch(2))] == [[0, 1], [2, 3], [4]]


def test_shuffle_is_a_permutation_reproducible_with_seed_and_reshuffles():
    ds = D.range(20).shuffle(20, seed=7)
    a, b = _np(ds), _np(ds)
    assert sorted(a) == list(range(20)) and a != list(range(20))
    assert a != b  # reshuffle_each_iteration=True
    assert _np(D.range(20).shuffle(20, seed=7)) == a  # same seed, same first epoch
    fixed = D.range(20).shuffle(5, seed=3, reshuffle_each_iteration=False)
    assert _np(fixed) == _np(fixed)
    small = _np(D.range(50).shuffle(4, seed=1))
    assert sorted(small) == list(range(50))
    # a small buffer only moves elements locally: the first output is among the first 4
    assert small[0] < 4


def test_shuffle_without_plan_and_global_seed():
    tf.random.set_seed(1)
    a = _np(D.range(10).map(lambda x: x + 1).shuffle(3))
    tf.random.set_seed(1)
    b = _np(D.range(10).map(lambda x: x + 1).shuffle(3))
    tf.random.set_seed(None)
    assert a == b and sorted(a) == list(range(1, 11))


def test_map_unpacks_tuples_and_filter():
    ds = D.from_tensor_slices(([1.0, 2.0, 3.0], [1, 0, 1])).map(lambda x, y: (x * 2.0, y))
    assert [(float(x), int(y)) for x, y in ds] == [(2.0, 1), (4.0, 0), (6.0, 1)]
    kept = ds.filter(lambda x, y: tf.equal(y, 1))
    assert [float(x) for x, _ in kept] == [2.0, 6.0]
    assert _np(D.range(3).map(lambda x: [x, x + 1])) == [(0, 1), (1, 2), (2, 3)]
    with pytest.raises(ValueError, match="must return a `tf.bool` scalar tensor"):
        list(D.range(3).filter(lambda x: x))


def test_repeat_take_skip_enumerate_zip_concatenate_unbatch():
    assert _np(D.range(3).repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert _np(D.range(3).repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert _np(D.range(5).skip(2)) == [2, 3, 4]
    assert _np(D.range(5).skip(-1)) == []
    assert _np(D.range(3).enumerate(5)) == [(5, 0), (6, 1), (7, 2)]
    assert _np(D.zip((D.range(3), D.range(10, 20)))) == [(0, 10), (1, 11), (2, 12)]
    z = _np(D.zip({"a": D.range(2), "b": D.range(5, 7)}))
    assert z == [{"a": 0, "b": 5}, {"a": 1, "b": 6}]
    assert _np(D.range(2).concatenate(D.range(5, 6))) == [0, 1, 5]
    assert _np(D.range(5).batch(2).unbatch()) == [0, 1, 2, 3, 4]
    assert _np(D.range(4).prefetch(tf.data.AUTOTUNE)) == [0, 1, 2, 3]


def test_cardinality_as_tf():
    r = D.range(10)
    got = [int(x) for x in [
        r.filter(lambda x: x > 2).cardinality(), r.repeat().cardinality(), r.repeat().take(3).cardinality(),
        r.repeat(2).cardinality(), r.batch(3).cardinality(), r.batch(3, drop_remainder=True).cardinality(),
        r.skip(4).cardinality(), r.take(20).cardinality(), r.filter(lambda x: True).repeat().cardinality(),
        r.repeat().filter(lambda x: True).cardinality(), D.zip((r, r.repeat())).cardinality(),
        r.concatenate(r).cardinality(), r.skip(-1).cardinality(), r.take(-1).cardinality(),
        D.range(0).repeat().cardinality()]]
    assert got == [-2, -1, 3, 20, 4, 3, 6, 10, -1, -2, 10, 20, 0, 10, 0]
    assert r.cardinality().dtype == tf.int64
    assert len(r.batch(4)) == 3
    with pytest.raises(TypeError, match="The dataset is infinite."):
        len(r.repeat())
    with pytest.raises(TypeError, match="The dataset length is unknown."):
        len(r.filter(lambda x: True))
    assert tf.data.experimental.INFINITE_CARDINALITY == -1 and tf.data.experimental.UNKNOWN_CARDINALITY == -2


def test_bad_inputs_raise_tf_errors():
    with pytest.raises(ValueError, match="Dimensions 3 and 2 are not compatible"):
        D.from_tensor_slices(([1, 2, 3], [1, 2]))
    with pytest.raises(ValueError, match="Unbatching a tensor is only supported for rank >= 1"):
        D.from_tensor_slices(3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Batch size must be greater than zero"):
        D.range(3).batch(0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="different shapes"):
        list(D.from_generator(lambda: iter([np.zeros(2), np.zeros(3)]),
                              output_signature=tf.TensorSpec([None], tf.float64)).batch(2))


def test_from_generator_reduce_cache():
    ds = D.from_generator(lambda: ((i, float(i)) for i in range(3)),
                          output_signature=(tf.TensorSpec([], tf.int32), tf.TensorSpec([], tf.float32)))
    assert _np(ds) == [(0, 0.0), (1, 1.0), (2, 2.0)]
    assert next(iter(ds))[1].dtype == tf.float32
    assert int(D.range(5).reduce(np.int64(0), lambda s, x: s + x)) == 10
    calls = []
    cached = D.range(3).map(lambda x: calls.append(1) or x).cache()
    assert _np(cached) == _np(cached) == [0, 1, 2] and len(calls) == 1  # traced once, as TF


def test_epoch_over_60k_rows_is_fast():
    x = np.zeros((60000, 28, 28), np.uint8)
    y = np.zeros(60000, np.uint8)
    ds = D.from_tensor_slices((x, y)).shuffle(10000, seed=0).batch(128)
    t0 = time.perf_counter()
    n = sum(int(b[0].shape[0]) for b in ds)
    assert n == 60000
    assert time.perf_counter() - t0 < 2.0


def test_source_arrays_are_snapshotted():
    x = np.arange(4.0)
    ds = D.from_tensor_slices(x)
    x[0] = 100.0
    assert _np(ds)[0] == 0.0


def test_iterating_inside_tf_function_runs_the_loop_in_the_graph():
    ds = D.range(3)

    @tf.function
    def f():
        total = tf.constant(0, tf.int64)
        for x in ds:
            total += x
        return total

    assert int(f()) == 3 and int(f()) == 3


def test_padded_batch_as_tf():
    ds = D.range(1, 6).map(lambda x: tf.fill([x], x))
    assert [b.tolist() for b in _np(ds.padded_batch(2))] == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]],
                                                            [[5, 5, 5, 5, 5]]]
    padded = _np(ds.padded_batch(2, padded_shapes=[6], padding_values=tf.constant(-1, tf.int64)))
    assert padded[2].tolist() == [[5, 5, 5, 5, 5, -1]]
    pairs = _np(D.range(1, 4).map(lambda x: (tf.fill([x], x), x * 10)).padded_batch(2, drop_remainder=True))
    assert [(a.tolist(), b.tolist()) for a, b in pairs] == [([[1, 0], [2, 2]], [10, 20])]
    assert int(ds.padded_batch(2).cardinality()) == 3
    with pytest.raises(tf.errors.DataLossError, match="smaller size"):
        list(ds.padded_batch(2, padded_shapes=[2]))


def test_ragged_batch_keeps_fully_defined_components_dense_as_tf():
    # TF's dense_to_ragged: scalars and fixed shapes batch densely; an unknown dimension makes a RaggedTensor
    ds = tf.data.Dataset.range(5)
    got = list(ds.apply(tf.data.experimental.dense_to_ragged_batch(2)))
    assert [g.numpy().tolist() for g in got] == [[0, 1], [2, 3], [4]] and isinstance(got[0], tf.Tensor)
    rows = tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4], [5, 6]]).ragged_batch(2)
    assert rows.element_spec == tf.TensorSpec([None, 2], tf.int32)
    assert [r.numpy().tolist() for r in rows] == [[[1, 2], [3, 4]], [[5, 6]]]
    mixed = tf.data.Dataset.range(4).map(lambda x: (x, tf.range(x))).ragged_batch(2, drop_remainder=True)
    assert mixed.element_spec == (tf.TensorSpec([2], tf.int64), tf.RaggedTensorSpec([2, None], tf.int64, 1))
    nested = tf.data.Dataset.range(4).map(lambda x: tf.range(x)).ragged_batch(2).batch(2)
    assert nested.element_spec == tf.RaggedTensorSpec([None, None, None], tf.int64, 2)
    assert next(iter(nested)).to_list() == [[[], [0]], [[0, 1], [0, 1, 2]]]
