"""cache(filename), Dataset.save/load and snapshot: TF's semantics (file names, when the input is read
again, partially written caches discarded, lock and type errors, shard orders), tapeflow's own bytes.
Behaviours recorded from TensorFlow 2.21."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tapeflow as tf

D = tf.data.Dataset


def _counting(calls, n=5):
    def gen():
        for i in range(n):
            calls.append(i)
            yield i

    return D.from_generator(gen, output_signature=tf.TensorSpec([], tf.int64))


def _ints(ds):
    return [int(x) for x in ds]


def test_cache_file_is_written_once_and_read_by_later_iterators(tmp_path):
    calls = []
    prefix = str(tmp_path / "c1")
    ds = _counting(calls).cache(prefix)
    assert repr(ds) == "<CacheDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    assert _ints(ds) == [0, 1, 2, 3, 4] and calls == [0, 1, 2, 3, 4]
    assert sorted(os.listdir(tmp_path)) == ["c1.data-00000-of-00001", "c1.index"]
    calls.clear()
    assert _ints(ds) == [0, 1, 2, 3, 4] and calls == []
    # another pipeline with the same file reads the cache, whatever its input now is (as TF)
    assert _ints(D.range(100).cache(prefix)) == [0, 1, 2, 3, 4]
    assert _ints(D.range(4).cache(str(tmp_path / "c6")).repeat(2)) == [0, 1, 2, 3] * 2


def test_cache_file_persists_across_runs(tmp_path):
    prefix = str(tmp_path / "run")
    code = textwrap.dedent(f"""
        import tapeflow as tf
        calls = []
        def gen():
            for i in range(3):
                calls.append(i)
                yield i
        ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec([], tf.int64)).cache({prefix!r})
        print([int(x) for x in ds], calls)
    """)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(tf.__file__)))
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
            for _ in range(2)]
    assert runs == ["[0, 1, 2] [0, 1, 2]\n", "[0, 1, 2] []\n"]


def test_partially_read_cache_is_discarded_with_tf_warning(tmp_path, capsys):
    calls = []
    ds = _counting(calls).cache(str(tmp_path / "c2"))
    assert _ints(ds.take(2)) == [0, 1] and calls == [0, 1]
    assert os.listdir(tmp_path) == []
    assert "did not fully read the dataset being cached" in capsys.readouterr().err
    calls.clear()
    assert _ints(ds) == [0, 1, 2, 3, 4] and calls == [0, 1, 2, 3, 4]
    assert sorted(os.listdir(tmp_path)) == ["c2.data-00000-of-00001", "c2.index"]


def test_concurrent_cache_writer_and_missing_directory(tmp_path):
    ds = D.range(3).cache(str(tmp_path / "c3"))
    it1 = iter(ds)
    assert int(next(it1)) == 0
    names = sorted(os.listdir(tmp_path))
    assert names[1] == "c3_0.lockfile" and names[0].startswith("c3_0.data-00000-of-00001.tempstate")
    it2 = iter(ds)
    with pytest.raises(tf.errors.AlreadyExistsError, match=r"concurrent caching iterator running - cache lockfile "
                       r"already exists \('.*c3_0.lockfile'\).*Lockfile contents: Created at: \d+"):
        next(it2)
    del it1, it2
    assert _ints(ds) == [0, 1, 2]
    with pytest.raises(tf.errors.NotFoundError, match=r"nodir/c_0.lockfile; No such file or directory"):
        _ints(D.range(3).cache(str(tmp_path / "nodir" / "c")))


def test_cache_file_structures_and_type_mismatch(tmp_path):
    ds = D.from_tensor_slices({"a": [[1., 2.], [3., 4.]], "s": ["x", "yy"]}).cache(str(tmp_path / "c4"))
    first = list(ds.as_numpy_iterator())
    again = list(ds.as_numpy_iterator())
    for got in (first, again):
        assert [sorted(e) for e in got] == [["a", "s"]] * 2 and [e["s"] for e in got] == [b"x", b"yy"]
        np.testing.assert_array_equal(got[1]["a"], np.float32([3, 4]))
        assert got[1]["a"].dtype == np.float32
    rt = D.from_tensor_slices(tf.ragged.constant([[1, 2], [3]])).cache(str(tmp_path / "c5"))
    assert [x.numpy().tolist() for x in rt] == [[1, 2], [3]] == [x.numpy().tolist() for x in rt]
    sp = D.from_tensors(tf.sparse.from_dense([[0, 2], [3, 0]])).cache(str(tmp_path / "c7"))
    for _ in range(2):
        (x,) = list(sp)
        assert isinstance(x, tf.SparseTensor) and tf.sparse.to_dense(x).numpy().tolist() == [[0, 2], [3, 0]]
    _ints(D.range(3).cache(str(tmp_path / "c8")))
    floats = D.range(3).map(lambda x: tf.cast(x, tf.float32)).cache(str(tmp_path / "c8"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Data type mismatch at component 0: expected float "
                       "but got int64."):
        list(floats)


def test_save_and_load_with_tf_shard_orders(tmp_path):
    ds = D.range(20)
    ds.save(str(tmp_path / "a"))
    assert sorted(os.listdir(tmp_path / "a"))[1:] == ["dataset_spec.json", "snapshot.metadata"]
    (run,) = [d for d in os.listdir(tmp_path / "a") if d.isdigit()]
    assert os.listdir(tmp_path / "a" / run) == ["00000000.shard"]
    loaded = D.load(str(tmp_path / "a"))
    assert repr(loaded) == "<_LoadDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    assert int(loaded.cardinality()) == 20 and _ints(loaded) == list(range(20))
    ds.save(str(tmp_path / "b"), shard_func=lambda x: x % 3)
    by_cycle = {1: list(range(0, 20, 3)) + list(range(1, 20, 3)) + list(range(2, 20, 3)),
                2: [0, 1, 3, 4, 6, 7, 9, 10, 12, 13, 15, 16, 18, 19, 2, 5, 8, 11, 14, 17]}
    if os.cpu_count() in by_cycle:  # TF's default reader interleaves the shards, cycle_length = CPU cores
        assert _ints(D.load(str(tmp_path / "b"))) == by_cycle[os.cpu_count()]
    assert _ints(D.load(str(tmp_path / "b"), reader_func=lambda dss: dss.flat_map(lambda d: d))) == by_cycle[1]
    assert _ints(D.load(str(tmp_path / "b"), reader_func=lambda dss: dss.interleave(lambda d: d, cycle_length=2))
                 ) == by_cycle[2]


def test_save_compression_structures_and_errors(tmp_path):
    D.range(5).save(str(tmp_path / "c"), compression="GZIP")
    assert _ints(D.load(str(tmp_path / "c"), compression="GZIP")) == [0, 1, 2, 3, 4]
    with pytest.raises(tf.errors.DataLossError, match="corrupted record at 0"):
        D.load(str(tmp_path / "c"))
    with pytest.raises(tf.errors.NotFoundError, match="tf.data snapshot element_spec file not found: .*zzz"):
        D.load(str(tmp_path / "zzz"))
    d = D.from_tensor_slices({"a": [[1., 2.], [3., 4.]], "s": ["x", "yy"]})
    d.save(str(tmp_path / "d"))
    d.save(str(tmp_path / "d"))  # saving again replaces the data
    loaded = D.load(str(tmp_path / "d"))
    assert loaded.element_spec == d.element_spec
    assert [e["s"] for e in loaded.as_numpy_iterator()] == [b"x", b"yy"]
    assert len([n for n in os.listdir(tmp_path / "d") if n.isdigit()]) == 1
    nt = D.from_tensor_slices((tf.ragged.constant([[1], [2, 3]]), [1.5, 2.5]))
    nt.save(str(tmp_path / "r"))
    back = D.load(str(tmp_path / "r"))
    assert repr(back.element_spec) == repr(nt.element_spec)
    assert [(r.numpy().tolist(), float(f)) for r, f in back] == [([1], 1.5), ([2, 3], 2.5)]
    with pytest.raises(NotImplementedError, match="checkpoint_args"):
        D.range(2).save(str(tmp_path / "e"), checkpoint_args={"directory": str(tmp_path)})


def test_snapshot_written_by_a_complete_pass_then_read(tmp_path):
    calls = []
    ds = _counting(calls).map(lambda x: x * 2).snapshot(str(tmp_path / "s"))
    assert repr(ds) == "<_MapDataset element_spec=TensorSpec(shape=(), dtype=tf.int64, name=None)>"
    assert _ints(ds) == [0, 2, 4, 6, 8] and calls == [0, 1, 2, 3, 4]
    calls.clear()
    assert _ints(ds) == [0, 2, 4, 6, 8] and calls == []
    assert _ints(D.range(10).snapshot(str(tmp_path / "s"))) == list(range(10))  # another pipeline: its own run
    assert len(os.listdir(tmp_path / "s")) == 2
    sharded = D.range(6).snapshot(str(tmp_path / "t"), shard_func=lambda x: x % 2,
                                  reader_func=lambda dss: dss.flat_map(lambda d: d))
    assert _ints(sharded) == [0, 1, 2, 3, 4, 5] and _ints(sharded) == [0, 2, 4, 1, 3, 5]
