"""Dataset.rejection_resample: TF's pipeline and random streams, so a seeded run accepts TF's elements in TF's
order (sequences recorded from TensorFlow 2.21 with the same data and seeds)."""

import numpy as np
import pytest

import tapeflow as tf

D = tf.data.Dataset
DATA = np.array([0, 0, 1, 0, 2, 0, 0, 1, 0, 0, 2, 1, 0, 0, 0, 1, 0, 0, 2, 0] * 5, np.int64)
TARGET = [0.4, 0.3, 0.3]
INITIAL = [0.65, 0.2, 0.15]
WARNING = ("Proportion of examples rejected by sampler is high: [0.722222209][0.65 0.2 0.15]"
           "[0 0.638888836 1]")

TF_MIXED_SEED42 = [4, 7, 0, 10, 1, 11, 2, 3, 4, 5, 6, 18, 7, 8, 9, 22, 24, 27, 10, 11, 30, 12, 31, 13, 35, 14, 38,
    42, 44, 50, 15, 51, 55, 58, 64, 67, 70, 78, 16, 17, 82, 18, 19, 84, 20, 87, 21, 22, 90, 91, 23, 24, 98, 25]
TF_ESTIMATED_SEED7 = [0, 1, 2, 2, 3, 4, 5, 4, 6, 7, 8, 10, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
    23, 24, 25, 26, 27, 28, 29, 30, 11, 31, 32, 33, 15, 34, 35, 36, 37, 38, 39, 40, 41, 18, 42, 43, 44, 45, 46, 47,
    48, 49, 50, 24, 51, 52, 53, 54, 55, 30, 56, 57, 58, 59, 31, 38, 42, 60, 44, 50, 51, 61, 62, 63, 64, 65, 66, 67,
    68, 55, 69, 70, 71, 58, 72, 73, 74, 62, 75, 76, 77, 78, 64, 79, 80, 81, 82, 83, 84, 67, 85, 86, 87, 88, 89, 90,
    91, 92, 70, 71, 78, 93, 94, 84, 87, 95, 96, 97, 98, 99, 90, 98]
TF_FILTER_ONLY_SEED3 = [2, 6, 7, 8, 9, 11, 12, 15, 20, 22, 23, 27, 31, 35, 37, 39, 40, 41, 42, 47, 48, 51, 55, 56,
    57, 62, 65, 67, 68, 69, 71, 73, 74, 75, 77, 79, 82, 83, 85, 87, 88, 91, 94, 95]
TF_CLASSES_SEED11 = [0, 0, 1, 0, 2, 0, 0, 1, 0, 0, 2, 0, 1, 0, 0, 0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 2, 0, 0, 1, 0, 0,
    2, 1, 0, 0, 0, 1, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 1, 0, 0, 2, 1, 0, 0, 0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 2,
    2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 2, 1, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 0, 2,
    1, 0, 0, 0, 1, 0, 0, 2, 0]
TF_GLOBAL5_SEED9 = [0, 2, 1, 2, 3, 4, 4, 5, 7, 6, 7, 10, 8, 9, 11, 10, 11, 12, 13, 18, 14, 15, 16, 24, 17, 27, 18,
    19, 20, 21, 30, 22, 23, 31, 24, 25, 26, 38, 27, 28]


def _pairs():
    return D.zip((D.from_tensor_slices(DATA), D.range(100)))


def _cls(c, i):
    return tf.cast(c, tf.int32)


def _indices(ds):
    return [int(i) for _, (_, i) in ds]


def test_mixed_original_and_filtered_streams_in_tf_order(capsys):
    ds = _pairs().rejection_resample(_cls, TARGET, initial_dist=INITIAL, seed=42)
    assert repr(ds).startswith("<_DirectedInterleaveDataset")
    got = [(int(c), int(x), int(i)) for c, (x, i) in ds.take(60)]
    assert [i for _, _, i in got] == TF_MIXED_SEED42  # stops when the filtered side runs out, as TF
    assert all(c == x for c, x, _ in got)
    assert _indices(ds.take(60)) == TF_MIXED_SEED42  # each iterator restarts both random streams
    # TF's tf.Print warning, the first 10 times per iterator, on stderr
    assert capsys.readouterr().err.splitlines() == [WARNING] * 20


def test_estimated_initial_distribution_in_tf_order():
    ds = _pairs().rejection_resample(_cls, TARGET, seed=7)
    assert _indices(ds) == TF_ESTIMATED_SEED7
    classes = D.from_tensor_slices(DATA).rejection_resample(lambda x: tf.cast(x, tf.int32), [0.5, 0.25, 0.25],
                                                            seed=11)
    assert [int(c) for c, _ in classes] == TF_CLASSES_SEED11


def test_static_shortcuts_as_tf():
    only_filtered = _pairs().rejection_resample(_cls, [0.5, 0.5, 0.0], initial_dist=INITIAL, seed=3)
    assert repr(only_filtered).startswith("<_PrefetchDataset")
    assert _indices(only_filtered) == TF_FILTER_ONLY_SEED3
    original = _pairs().rejection_resample(_cls, INITIAL, initial_dist=INITIAL, seed=3)
    assert repr(original) == ("<_MapDataset element_spec=(TensorSpec(shape=(), dtype=tf.int32, name=None), "
                              "(TensorSpec(shape=(), dtype=tf.int64, name=None), "
                              "TensorSpec(shape=(), dtype=tf.int64, name=None)))>")
    assert _indices(original.take(10)) == list(range(10))


def test_global_seed_and_op_seed():
    tf.random.set_seed(5)
    try:
        ds = _pairs().rejection_resample(_cls, TARGET, initial_dist=INITIAL, seed=9)
        assert _indices(ds.take(40)) == TF_GLOBAL5_SEED9
    finally:
        tf.random.set_seed(None)


def test_class_out_of_range_and_shape_mismatch():
    with pytest.raises(ValueError, match="initial_dist has 2 classes but target_dist has 3"):
        _pairs().rejection_resample(_cls, TARGET, initial_dist=[0.5, 0.5])
    ds = D.range(5).rejection_resample(lambda x: tf.cast(x, tf.int32), [0.5, 0.5], seed=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="class 2 returned by `class_func` is not in"):
        list(ds)
