"""tf.data file readers: TextLineDataset, CsvDataset, make_csv_dataset, list_files, pinned against TF 2.21."""

from __future__ import annotations

import collections
import gzip

import numpy as np
import pytest

import tapeflow as tf

D = tf.data.Dataset


def _np(ds):
    return list(ds.as_numpy_iterator())


def test_text_line_dataset_lines_gzip_and_printing(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"l1\r\nl2\n\nl4")
    a = str(tmp_path / "a.txt")
    assert _np(tf.data.TextLineDataset(a)) == [b"l1", b"l2", b"", b"l4"]
    assert repr(tf.data.TextLineDataset([a, a])) == (
        "<TextLineDatasetV2 element_spec=TensorSpec(shape=(), dtype=tf.string, name=None)>")
    assert len(_np(tf.data.TextLineDataset([a, a]))) == 8
    with gzip.open(tmp_path / "g.txt.gz", "wb") as f:
        f.write(b"g1\ng2\n")
    assert _np(tf.data.TextLineDataset(str(tmp_path / "g.txt.gz"), compression_type="GZIP")) == [b"g1", b"g2"]
    assert int(tf.data.TextLineDataset(a).cardinality()) == -2
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        list(tf.data.TextLineDataset(str(tmp_path / "nope.txt")))
    survivors = tf.data.TextLineDataset(a).filter(lambda line: tf.not_equal(tf.strings.substr(line, 0, 1), "l"))
    assert _np(survivors) == [b""]


def test_interleave_text_files_as_the_data_guide(tmp_path):
    paths = []
    for name in ("x", "y", "z"):
        p = tmp_path / f"{name}.txt"
        p.write_text("".join(f"{name}{i}\n" for i in range(3)))
        paths.append(str(p))
    lines = D.from_tensor_slices(paths).interleave(tf.data.TextLineDataset, cycle_length=3)
    assert _np(lines.take(6)) == [b"x0", b"y0", b"z0", b"x1", b"y1", b"z1"]


def _csv(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text('a,b,c\n1,2.5,x\n3,,"y,z"\n')
    return str(p)


def test_csv_dataset_types_defaults_select_exclude(tmp_path):
    c = _csv(tmp_path)
    ds = tf.data.experimental.CsvDataset(c, [tf.int32, 0.0, tf.string], header=True)
    assert repr(ds) == ("<CsvDatasetV2 element_spec=(TensorSpec(shape=(), dtype=tf.int32, name=None), "
                        "TensorSpec(shape=(), dtype=tf.float32, name=None), TensorSpec(shape=(), dtype=tf.string, "
                        "name=None))>")
    assert _np(ds) == [(1, np.float32(2.5), b"x"), (3, np.float32(0.0), b"y,z")]
    assert _np(tf.data.experimental.CsvDataset(c, [0, "q"], header=True, select_cols=[0, 2])) == [(1, b"x"),
                                                                                                 (3, b"y,z")]
    assert _np(tf.data.experimental.CsvDataset(c, [0, "q"], header=True, exclude_cols=[1])) == [(1, b"x"), (3, b"y,z")]
    with pytest.raises(tf.errors.InvalidArgumentError, match="Field 0 in record is not a valid int32: a"):
        list(tf.data.experimental.CsvDataset(c, [0, 0, "q"]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Field 1 is required but missing in record!"):
        list(tf.data.experimental.CsvDataset(c, [0, tf.float32, "q"], header=True))


def test_csv_dataset_missing_values_as_the_data_guide(tmp_path):
    p = tmp_path / "missing.csv"
    p.write_text("1,2,3,4\n,2,3,4\n1,,3,4\n1,2,,4\n1,2,3,\n,,,\n")
    ds = tf.data.experimental.CsvDataset(str(p), [999, 999, 999, 999]).map(lambda *items: tf.stack(items))
    assert repr(ds) == "<_MapDataset element_spec=TensorSpec(shape=(4,), dtype=tf.int32, name=None)>"
    assert [x.tolist() for x in _np(ds)] == [[1, 2, 3, 4], [999, 2, 3, 4], [1, 999, 3, 4], [1, 2, 999, 4],
                                             [1, 2, 3, 999], [999, 999, 999, 999]]
    sel = tf.data.experimental.CsvDataset(str(p), [999, 999], select_cols=[1, 3]).map(lambda *i: tf.stack(i))
    assert [x.tolist() for x in _np(sel)] == [[2, 4], [2, 4], [999, 4], [2, 4], [2, 999], [999, 999]]


def test_make_csv_dataset_ordered_dict_inference_label_select(tmp_path):
    c = _csv(tmp_path)
    m = tf.data.experimental.make_csv_dataset(c, batch_size=2, shuffle=False, num_epochs=1)
    assert repr(m) == ("<_PrefetchDataset element_spec=OrderedDict([('a', TensorSpec(shape=(None,), dtype=tf.int32, "
                       "name=None)), ('b', TensorSpec(shape=(None,), dtype=tf.float32, name=None)), ('c', "
                       "TensorSpec(shape=(None,), dtype=tf.string, name=None))])>")
    first = next(iter(m))
    assert isinstance(first, collections.OrderedDict) and list(first) == ["a", "b", "c"]
    assert first["b"].numpy().tolist() == [2.5, 0.0] and first["c"].numpy().tolist() == [b"x", b"y,z"]
    lab = tf.data.experimental.make_csv_dataset(c, batch_size=2, label_name="a")
    assert repr(lab) == ("<_PrefetchDataset element_spec=(OrderedDict([('b', TensorSpec(shape=(2,), dtype=tf.float32, "
                         "name=None)), ('c', TensorSpec(shape=(2,), dtype=tf.string, name=None))]), "
                         "TensorSpec(shape=(2,), dtype=tf.int32, name=None))>")
    feats, labels = next(iter(lab))
    assert sorted(labels.numpy().tolist()) in ([1, 3], [1, 1], [3, 3])
    sel = tf.data.experimental.make_csv_dataset(c, batch_size=1, label_name="a", select_columns=["c", "a"],
                                                num_epochs=1, shuffle=False)
    assert [(list(f), f["c"].numpy().tolist(), y.numpy().tolist()) for f, y in sel] == [
        (["c"], [b"x"], [1]), (["c"], [b"y,z"], [3])]
    with pytest.raises(ValueError, match="`label_name` provided must be one of the columns"):
        tf.data.experimental.make_csv_dataset(c, batch_size=2, label_name="nope")


def test_make_csv_dataset_int64_inference_and_column_defaults(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("i,f,s,big\n1,2,x,5000000000\n2,3.5,y,1\n")
    m = tf.data.experimental.make_csv_dataset(str(p), batch_size=3, shuffle=False, num_epochs=1)
    assert [s.dtype.name for s in m.element_spec.values()] == ["int32", "float32", "string", "int64"]
    row = next(iter(m))
    assert row["big"].numpy().tolist() == [5000000000, 1] and row["f"].numpy().tolist() == [2.0, 3.5]
    typed = tf.data.experimental.make_csv_dataset(str(p), batch_size=2, column_defaults=[0.0, 0.0, "", 0],
                                                  num_epochs=1, shuffle=False)
    assert [s.dtype.name for s in typed.element_spec.values()] == ["float32", "float32", "string", "int32"]


def test_list_files_shuffles_by_default_and_sorts_without(tmp_path):
    for n in ("b", "a", "c"):
        (tmp_path / f"{n}.txt").write_text(n)
    pattern = str(tmp_path / "*.txt")
    assert repr(D.list_files(pattern)) == (
        "<_ShuffleDataset element_spec=TensorSpec(shape=(), dtype=tf.string, name=None)>")
    want = [str(tmp_path / f"{n}.txt").encode() for n in "abc"]
    assert _np(D.list_files(pattern, shuffle=False)) == want
    assert sorted(_np(D.list_files(pattern))) == want
    with pytest.raises(tf.errors.InvalidArgumentError, match="No files matched pattern"):
        D.list_files(str(tmp_path / "*.nope"))


# -- ignore_errors (TF 2.21's results pinned) ----------------------------------------------------------------------


def _failing_map():
    ds = tf.data.Dataset.from_tensor_slices([1.0, 2.0, 0.0, 4.0])
    return ds.map(lambda x: tf.debugging.check_numerics(1.0 / x, "error"))


def test_ignore_errors_drops_failed_elements_and_goes_on_where_tf_does():
    ds = _failing_map()
    assert [float(v) for v in ds.ignore_errors()] == [1.0, 0.5, 0.25]
    assert [float(v) for v in ds.shuffle(1).ignore_errors()] == [1.0, 0.5, 0.25]
    assert [float(v) for v in ds.take(3).ignore_errors()] == [1.0, 0.5, 0.25]  # an error does not count
    assert [v.tolist() for v in ds.ignore_errors().batch(2).as_numpy_iterator()] == [[1.0, 0.5], [0.25]]
    # a batch holding a failed element fails, and TF's batch ends there
    assert [v.tolist() for v in ds.batch(2).ignore_errors().as_numpy_iterator()] == [[1.0, 0.5]]
    assert ds.ignore_errors().cardinality().numpy() == tf.data.UNKNOWN_CARDINALITY
    assert ds.apply(tf.data.experimental.ignore_errors()).element_spec == tf.TensorSpec((), tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError):
        list(ds)


def test_ignore_errors_of_a_generator_ends_with_it(capsys):
    def gen():
        yield 1
        yield 2
        raise ValueError("x")

    g = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec((), tf.int32))
    assert [int(v) for v in g.ignore_errors(log_warning=True)] == [1, 2]
    assert "Error raised with error message" in capsys.readouterr().err


def test_ignore_errors_skips_bad_csv_records(tmp_path):
    path = str(tmp_path / "bad.csv")
    with open(path, "w") as f:
        f.write("a,b\n1,2\n3\nx,4\n5,6\n")
    rows = tf.data.experimental.CsvDataset(path, [tf.int32, tf.int32], header=True)
    assert [tuple(int(v) for v in r) for r in rows.ignore_errors()] == [(1, 2), (5, 6)]
    both = tf.data.Dataset.from_tensor_slices([path, path]).interleave(
        lambda f: tf.data.experimental.CsvDataset(f, [tf.int32, tf.int32], header=True), cycle_length=2)
    assert [tuple(int(v) for v in r) for r in both.ignore_errors()] == [(1, 2), (1, 2), (5, 6), (5, 6)]
    m = tf.data.experimental.make_csv_dataset(path, 2, column_defaults=[tf.int32, tf.int32], num_epochs=1,
                                              shuffle=False, ignore_errors=True)
    (batch,) = list(m)
    assert batch["a"].numpy().tolist() == [1, 5] and batch["b"].numpy().tolist() == [2, 6]
    with pytest.raises(tf.errors.InvalidArgumentError):
        list(rows)
