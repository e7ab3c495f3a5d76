"""tf.data windows, flat_map, interleave, group_by_window, buckets, scan, sampling: orders, specs and
printed text pinned against TF 2.21."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf

D = tf.data.Dataset


def _np(ds):
    return [x.tolist() if hasattr(x, "tolist") else x for x in ds.as_numpy_iterator()]


def _windows(ds):
    return [_np(w) for w in ds]


def test_window_shift_stride_drop_remainder_and_cardinality():
    assert _windows(D.range(7).window(3, shift=2)) == [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]]
    assert _windows(D.range(7).window(3, shift=2, drop_remainder=True)) == [[0, 1, 2], [2, 3, 4], [4, 5, 6]]
    assert _windows(D.range(10).window(3, shift=1, stride=2)) == [
        [0, 2, 4], [1, 3, 5], [2, 4, 6], [3, 5, 7], [4, 6, 8], [5, 7, 9], [6, 8], [7, 9], [8], [9]]
    assert int(D.range(7).window(3, shift=2, drop_remainder=True).cardinality()) == 3
    assert int(D.range(7).window(3, shift=2).cardinality()) == 4


def test_window_specs_and_printing_as_tf():
    w = D.range(7).window(3)
    assert repr(w) == ("<_WindowDataset element_spec=DatasetSpec(TensorSpec(shape=(), dtype=tf.int64, name=None), "
                       "TensorShape([]))>")
    assert w.element_spec.value_type is D
    sub = next(iter(w))
    assert repr(sub) == "<_VariantDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    wt = D.from_tensor_slices(([1, 2, 3], [4.0, 5, 6])).window(2)
    assert repr(wt.element_spec) == (
        "(DatasetSpec(TensorSpec(shape=(), dtype=tf.int32, name=None), TensorShape([])), "
        "DatasetSpec(TensorSpec(shape=(), dtype=tf.float32, name=None), TensorShape([])))")
    a, b = next(iter(wt))
    assert _np(a) == [1, 2] and _np(b) == [4.0, 5.0]
    assert list(D.from_tensor_slices({"a": [1, 2, 3]}).window(2).element_spec) == ["a"]


def test_window_flat_map_batch_idiom():
    windows = D.range(100000).window(5, shift=1)
    assert [int(x) for x in windows.flat_map(lambda x: x).take(12)] == [0, 1, 2, 3, 4, 1, 2, 3, 4, 5, 2, 3]
    batched = windows.flat_map(lambda sub: sub.batch(5, drop_remainder=True))
    assert _np(batched.take(2)) == [[0, 1, 2, 3, 4], [1, 2, 3, 4, 5]]
    strided = D.range(100).window(10, shift=5, stride=3).flat_map(lambda s: s.batch(10, drop_remainder=True))
    assert _np(strided.take(2)) == [[0, 3, 6, 9, 12, 15, 18, 21, 24, 27], [5, 8, 11, 14, 17, 20, 23, 26, 29, 32]]
    assert repr(D.range(3).window(2).flat_map(lambda w: w.batch(2))) == (
        "<_FlatMapDataset element_spec=TensorSpec(shape=(None,), dtype=tf.int64, name=None)>")


def test_flat_map_and_its_errors():
    ds = D.range(3).flat_map(lambda x: D.range(x))
    assert _np(ds) == [0, 0, 1]
    assert repr(ds) == "<_FlatMapDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    with pytest.raises(TypeError, match="must return a `Dataset`"):
        list(D.range(2).flat_map(lambda x: x))


def test_interleave_order_as_tf():
    rep = lambda n: (lambda x: D.from_tensors(x).repeat(x + n))  # noqa: E731
    assert _np(D.range(1, 4).interleave(rep(1), cycle_length=2, block_length=2)) == [1, 1, 2, 2, 2, 3, 3, 3, 3]
    assert _np(D.range(1, 6).interleave(rep(0), cycle_length=2)) == [1, 2, 2, 3, 3, 4, 3, 4, 4, 5, 4, 5, 5, 5, 5]
    par = D.range(1, 6).interleave(rep(0), cycle_length=3, block_length=2, num_parallel_calls=2)
    assert _np(par) == [1, 2, 2, 3, 3, 4, 4, 3, 4, 4, 5, 5, 5, 5, 5]
    assert repr(par).startswith("<_ParallelInterleaveDataset element_spec=TensorSpec(shape=(), dtype=tf.int64")
    assert repr(D.range(3).interleave(rep(0), cycle_length=1)).startswith("<_InterleaveDataset")


def test_scan_counter_take_while_unique_single_element():
    ds = D.range(5).scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s * 2))
    assert _np(ds) == [0, 0, 2, 6, 12]
    assert repr(ds) == "<_ScanDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    assert _np(tf.data.experimental.Counter(3, 2).take(3)) == [3, 5, 7]
    assert repr(D.counter()) == "<_ScanDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    assert _np(D.range(5).take_while(lambda x: x < 2)) == [0, 1]
    assert _np(D.from_tensor_slices([1, 2, 1, 3, 2]).unique()) == [1, 2, 3]
    assert int(D.from_tensors(3).get_single_element()) == 3
    with pytest.raises(tf.errors.InvalidArgumentError):
        D.range(2).get_single_element()
    with pytest.raises(TypeError, match="new state must match"):
        list(D.range(2).scan(tf.constant(0, tf.int32), lambda s, x: (x, x)))


def test_group_by_window_and_bucket_by_sequence_length():
    g = D.range(10).group_by_window(key_func=lambda x: x % 2, reduce_func=lambda k, ds: ds.batch(3), window_size=3)
    assert _np(g) == [[0, 2, 4], [1, 3, 5], [6, 8], [7, 9]]
    assert repr(g) == "<_GroupByWindowDataset element_spec=TensorSpec(shape=(None,), dtype=tf.int64, name=None)>"
    gen = D.from_generator(lambda: ([1] * n for n in [1, 3, 5, 2, 7, 4, 1]),
                           output_signature=tf.TensorSpec([None], tf.int32))
    b = gen.bucket_by_sequence_length(lambda x: tf.shape(x)[0], [3, 5], [2, 2, 2])
    assert _np(b) == [[[1, 0], [1, 1]], [[1, 1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1, 1]], [[1, 1, 1, 0], [1, 1, 1, 1]],
                      [[1]]]
    assert repr(b.element_spec) == "TensorSpec(shape=(None, None), dtype=tf.int32, name=None)"
    with pytest.raises(ValueError, match="window_size"):
        D.range(3).group_by_window(lambda x: x, lambda k, d: d)


def test_choose_and_sample_from_datasets():
    ch = D.choose_from_datasets([D.range(3), D.range(10, 13)], D.from_tensor_slices(tf.constant([0, 1, 1, 0, 0, 0],
                                                                                              tf.int64)))
    assert _np(ch) == [0, 10, 11, 1, 2]
    assert repr(ch).startswith("<_DirectedInterleaveDataset element_spec=TensorSpec(shape=(), dtype=tf.int64")
    s = D.sample_from_datasets([D.range(3), D.range(10, 13)], [0.5, 0.5], seed=1)
    out = _np(s)
    assert sorted(out) == [0, 1, 2, 10, 11, 12] and _np(s) == out or sorted(_np(s)) == sorted(out)
    assert [x for x in out if x < 10] == [0, 1, 2]  # each input keeps its order
    only = D.sample_from_datasets([D.range(3), D.range(10, 13)], [1.0, 0.0])
    assert _np(only) == [0, 1, 2]


def test_rejection_resample_balances_classes():
    labels = np.array([0] * 90 + [1] * 10, np.int32)
    ds = D.from_tensor_slices(labels).shuffle(100, seed=0).repeat()
    res = ds.rejection_resample(lambda x: x, target_dist=[0.5, 0.5], initial_dist=[0.9, 0.1], seed=3)
    assert repr(res.element_spec) == ("(TensorSpec(shape=(), dtype=tf.int32, name=None), "
                                      "TensorSpec(shape=(), dtype=tf.int32, name=None))")
    pairs = [(int(c), int(x)) for c, x in res.take(2000)]
    assert all(c == x for c, x in pairs)
    frac = np.mean([c for c, _ in pairs])
    assert 0.42 < frac < 0.58
    same = D.range(10).rejection_resample(lambda x: tf.cast(x % 2, tf.int32), [0.5, 0.5], initial_dist=[0.5, 0.5])
    assert repr(same).startswith("<_MapDataset") and [int(c) for c, _ in same] == [0, 1] * 5


def test_from_generator_keeps_none_dims_and_checks_shapes():
    def gen():
        for n in (2, 5):
            yield n, np.ones(n)

    ds = D.from_generator(gen, output_types=(tf.int32, tf.float32), output_shapes=((), (None,)))
    assert repr(ds) == ("<_FlatMapDataset element_spec=(TensorSpec(shape=(), dtype=tf.int32, name=None), "
                        "TensorSpec(shape=(None,), dtype=tf.float32, name=None))>")
    assert repr(D.from_generator(gen, output_types=(tf.int32, tf.float32)).element_spec[1]) == (
        "TensorSpec(shape=<unknown>, dtype=tf.float32, name=None)")
    ids, seqs = next(iter(ds.padded_batch(2)))
    assert seqs.shape == (2, 5) and ids.numpy().tolist() == [2, 5]
    bad = D.from_generator(gen, output_signature=(tf.TensorSpec([], tf.int32), tf.TensorSpec([2], tf.float32)))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape \(5,\) where an element of shape \(2,\)"):
        list(bad)
    with pytest.raises(TypeError):
        D.from_generator(gen)


def test_specs_follow_the_parent_not_the_first_element():
    ds = D.range(100).map(lambda x: tf.fill([tf.cast(x, tf.int32)], x))
    assert repr(ds.element_spec) == "TensorSpec(shape=(None,), dtype=tf.int64, name=None)"
    assert repr(ds.padded_batch(4, padded_shapes=(None,)).element_spec) == (
        "TensorSpec(shape=(None, None), dtype=tf.int64, name=None)")
    assert repr(D.range(3).padded_batch(2)) == (
        "<_PaddedBatchDataset element_spec=TensorSpec(shape=(None,), dtype=tf.int64, name=None)>")
    pairs = D.range(20).batch(10, drop_remainder=True).map(lambda b: (b[:-1], b[1:]))
    assert repr(pairs.element_spec) == ("(TensorSpec(shape=(9,), dtype=tf.int64, name=None), "
                                        "TensorSpec(shape=(9,), dtype=tf.int64, name=None))")
    assert repr(D.range(6).batch(4).unbatch()) == (
        "<_UnbatchDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>")
    sp = D.from_tensors(tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4]))
    assert repr(sp.element_spec) == "SparseTensorSpec(TensorShape([3, 4]), tf.int32)"


def test_map_is_traced_once_and_reduce_passes_the_element():
    calls = []

    def f(x):
        calls.append(1)
        return x * 2

    ds = D.range(5).map(f)
    assert _np(ds) == [0, 2, 4, 6, 8] and _np(ds) == [0, 2, 4, 6, 8] and len(calls) == 1
    total = D.from_tensor_slices(([1, 2], [3, 4])).reduce(0, lambda s, x: s + x[0] * x[1])
    assert int(total) == 11
    # an element of another shape than the traced one gets one relaxed trace
    gen = D.from_generator(lambda: iter([np.ones(2), np.ones(3)]), output_types=tf.float64)
    assert [x.tolist() for x in gen.map(lambda v: v + 1).as_numpy_iterator()] == [[2.0, 2.0], [2.0, 2.0, 2.0]]


def test_py_function_side_effect_runs_per_element_in_a_traced_map_and_generator_strings_are_bytes():
    calls = []

    def mapped(s):
        tf.py_function(lambda: calls.append(1), [], ())  # Tout=(): run for its side effect, as TF
        return s

    assert _np(D.range(4).map(mapped)) == [0, 1, 2, 3] and len(calls) == 4
    gen = D.from_generator(lambda: iter([("Open",), ("Read",)]), output_signature=tf.TensorSpec((1,), tf.string))
    assert [x.tolist() for x in gen.as_numpy_iterator()] == [[b"Open"], [b"Read"]]


def test_zip_of_nested_datasets():
    # data_augmentation's Dataset.zip((train, (counter, counter))): any nesting of tuples and dicts (as TF 2)
    a, c = tf.data.Dataset.range(3), tf.data.experimental.Counter()
    z = tf.data.Dataset.zip((a, (c, c)))
    spec = tf.TensorSpec((), tf.int64)
    assert z.element_spec == (spec, (spec, spec))
    assert list(z.as_numpy_iterator()) == [(0, (0, 0)), (1, (1, 1)), (2, (2, 2))]
    z2 = tf.data.Dataset.zip({"x": a, "y": (a, {"q": c})})
    assert list(z2.take(1).as_numpy_iterator()) == [{"x": 0, "y": (0, {"q": 0})}]
    assert int(z2.cardinality()) == 3
    with pytest.raises(TypeError, match="Python `list` is not supported and you should use `tuple` instead"):
        tf.data.Dataset.zip([a, a])
