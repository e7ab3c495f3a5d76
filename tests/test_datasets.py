"""tapeflow.datasets: the bundled digits, train/test split, IDX and MNIST loaders."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from tapeflow import datasets


def test_digits_match_scikit_learn_shape_and_values():
    x, y = datasets.load_digits()
    assert x.shape == (1797, 8, 8) and x.dtype == np.float32 and y.dtype == np.int64
    assert x.min() == 0.0 and x.max() == 16.0
    assert np.bincount(y).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    # sklearn's first image (a zero), pinned
    assert x[0, 0].tolist() == [0, 0, 5, 13, 9, 1, 0, 0] and y[:5].tolist() == [0, 1, 2, 3, 4]
    xn, _ = datasets.load_digits(normalize=True)
    assert xn.max() == 1.0 and np.allclose(xn * 16, x)


def test_digits_split_is_stratified_and_reproducible():
    (xtr, ytr), (xte, yte) = datasets.load_digits_split(test_size=0.2, seed=0)
    assert xtr.shape == (1437, 8, 8) and xte.shape == (360, 8, 8)
    assert np.abs(np.bincount(yte) - 36).max() <= 1
    (xtr2, _), _ = datasets.load_digits_split(test_size=0.2, seed=0)
    np.testing.assert_array_equal(xtr, xtr2)
    # no sample in both parts
    all_rows = {r.tobytes() for r in np.concatenate([xtr, xte]).reshape(1797, -1)}
    assert len(all_rows) == len({r.tobytes() for r in datasets.load_digits()[0].reshape(1797, -1)})


def test_train_test_split_like_sklearn():
    a, b = np.arange(10), np.arange(10) * 2
    a_tr, a_te, b_tr, b_te = datasets.train_test_split(a, b, test_size=3, shuffle=False)
    assert a_tr.tolist() == list(range(7)) and a_te.tolist() == [7, 8, 9] and b_te.tolist() == [14, 16, 18]
    a_tr, a_te = datasets.train_test_split(a, test_size=0.25, seed=1)
    assert len(a_te) == 3 and sorted(np.concatenate([a_tr, a_te]).tolist()) == list(range(10))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        datasets.train_test_split(a, np.arange(3))


def _write_idx(path, array, compress=False):
    codes = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C, np.float32: 0x0D, np.float64: 0x0E}
    code = codes[array.dtype.type]
    header = bytes([0, 0, code, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    data = header + array.astype(array.dtype.newbyteorder(">")).tobytes()
    with open(path, "wb") as f:
        f.write(gzip.compress(data) if compress else data)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.float32, np.float64])
@pytest.mark.parametrize("compress", [False, True])
def test_load_idx_round_trip(tmp_path, dtype, compress):
    arr = (np.arange(24).reshape(2, 3, 4) * 3).astype(dtype)
    p = tmp_path / ("a.idx.gz" if compress else "a.idx")
    _write_idx(p, arr, compress)
    got = datasets.load_idx(str(p))
    assert got.dtype == np.dtype(dtype) and got.dtype.isnative
    np.testing.assert_array_equal(got, arr)


def test_load_idx_rejects_bad_files(tmp_path):
    p = tmp_path / "bad"
    p.write_bytes(b"\x12\x34\x56\x78")
    with pytest.raises(ValueError, match="not an IDX file"):
        datasets.load_idx(str(p))
    _write_idx(p, np.zeros((4, 5), np.uint8))
    p.write_bytes(p.read_bytes()[:-3])
    with pytest.raises(ValueError, match="truncated or corrupt"):
        datasets.load_idx(str(p))


def _write_mnist(folder, n_train=6, n_test=4, gz=False):
    rng = np.random.default_rng(0)
    arrays = {
        "train-images-idx3-ubyte": rng.integers(0, 256, (n_train, 28, 28)).astype(np.uint8),
        "train-labels-idx1-ubyte": rng.integers(0, 10, n_train).astype(np.uint8),
        "t10k-images-idx3-ubyte": rng.integers(0, 256, (n_test, 28, 28)).astype(np.uint8),
        "t10k-labels-idx1-ubyte": rng.integers(0, 10, n_test).astype(np.uint8),
    }
    for name, a in arrays.items():
        _write_idx(folder / (name + (".gz" if gz else "")), a, gz)
    return arrays


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("loader", [datasets.load_mnist, datasets.load_fashion_mnist])
def test_mnist_loaders(tmp_path, gz, loader):
    arrays = _write_mnist(tmp_path, gz=gz)
    (xtr, ytr), (xte, yte) = loader(str(tmp_path))
    assert xtr.shape == (6, 28, 28) and xtr.dtype == np.uint8 and yte.shape == (4,)
    np.testing.assert_array_equal(xtr, arrays["train-images-idx3-ubyte"])
    np.testing.assert_array_equal(yte, arrays["t10k-labels-idx1-ubyte"])


def test_mnist_missing_files_named(tmp_path):
    _write_mnist(tmp_path)
    (tmp_path / "t10k-labels-idx1-ubyte").unlink()
    with pytest.raises(FileNotFoundError, match=r"missing t10k-labels-idx1-ubyte\[\.gz\].*fashion-mnist"):
        datasets.load_fashion_mnist(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte.*cvdf-datasets/mnist"):
        datasets.load_mnist(str(tmp_path / "empty"))


def test_mnist_mismatched_counts(tmp_path):
    _write_mnist(tmp_path)
    _write_idx(tmp_path / "train-labels-idx1-ubyte", np.zeros(5, np.uint8))
    with pytest.raises(ValueError, match="do not match"):
        datasets.load_mnist(str(tmp_path))
