"""tf.keras.datasets cifar10/cifar100/imdb/reuters/boston_housing/california_housing and tf.keras.utils.get_file,
on small synthetic files in Keras's formats in a temporary Keras cache (never the network: the downloader is
monkeypatched). Expected values are real Keras 3.15's on the same files."""

import hashlib
import io
import json
import os
import pickle
import tarfile

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras.datasets import _fetch

D = tf.keras.datasets


def _objs(seqs):
    a = np.empty(len(seqs), dtype=object)
    a[:] = seqs
    return a


def _sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))

    def no_network(url, timeout=60.0):
        raise OSError(f"no network in tests ({url})")

    monkeypatch.setattr(_fetch, "urlopen", no_network)
    d = tmp_path / "datasets"
    d.mkdir()
    return d


def _put(monkeypatch, module, path, attr="FILE_HASH"):
    monkeypatch.setattr(module, attr, _sha256(path) if attr == "FILE_HASH" else hashlib.md5(
        open(path, "rb").read()).hexdigest())


def test_boston_housing_shuffle_split_and_hash(cache, monkeypatch):
    p = cache / "boston_housing.npz"
    np.savez(p, x=np.arange(20 * 13, dtype=np.float64).reshape(20, 13), y=np.arange(20, dtype=np.float64))
    _put(monkeypatch, D.boston_housing, p)
    (x_tr, y_tr), (x_te, y_te) = D.boston_housing.load_data()
    assert y_tr.tolist() == [14.0, 11.0, 19.0, 17.0, 1.0, 4.0, 8.0, 3.0, 13.0, 15.0, 16.0, 9.0, 0.0, 7.0, 6.0, 18.0]
    assert y_te.tolist() == [12.0, 10.0, 2.0, 5.0]
    assert x_tr.shape == (16, 13) and x_tr.dtype == np.float64 and x_tr[0, 0] == 14 * 13
    with pytest.raises(ValueError, match=r"Invalid `test_split` argument: 1.0. It must be between 0 and 1"):
        D.boston_housing.load_data(test_split=1.0)
    # a cached file with the wrong checksum is re-downloaded, as Keras does (here: no network -> Keras's error)
    monkeypatch.setattr(D.boston_housing, "FILE_HASH", "0" * 64)
    with pytest.raises(Exception, match="URL fetch failure on https://storage.googleapis.com/tensorflow/"
                                        "tf-keras-datasets/boston_housing.npz"):
        D.boston_housing.load_data()


def test_california_housing_versions(cache, monkeypatch):
    p = cache / "california_housing.npz"
    rng = np.random.RandomState(0)
    np.savez(p, x=rng.rand(700, 8).astype(np.float32), y=np.arange(700, dtype=np.float32))
    _put(monkeypatch, D.california_housing, p)
    (x_tr, y_tr), (x_te, y_te) = D.california_housing.load_data()
    assert x_tr.shape == (560, 8) and x_te.shape == (140, 8) and x_tr.dtype == np.float32
    (x_tr, y_tr), (x_te, y_te) = D.california_housing.load_data(version="small", test_split=0.1, seed=3)
    assert x_tr.shape == (540, 8) and sorted(y_tr.tolist() + y_te.tolist()) == list(range(600))
    with pytest.raises(ValueError, match="Argument `version` must be one of 'small', 'large'. Received: version=mid"):
        D.california_housing.load_data(version="mid")


def test_imdb_indexing_options_and_word_index(cache, monkeypatch):
    p = cache / "imdb.npz"
    np.savez(p, x_train=_objs([[1, 5, 9], [4, 4, 30, 2], [7], [12, 3, 8, 1, 6]]), y_train=np.array([0, 1, 1, 0]),
             x_test=_objs([[2, 2], [9, 11, 13]]), y_test=np.array([1, 0]))
    _put(monkeypatch, D.imdb, p)
    (x_tr, y_tr), (x_te, y_te) = D.imdb.load_data()
    assert x_tr.dtype == object and y_tr.dtype == np.int64
    assert x_tr.tolist() == [[1, 15, 6, 11, 4, 9], [1, 10], [1, 4, 8, 12], [1, 7, 7, 2, 5]]
    assert y_tr.tolist() == [0, 1, 0, 1] and x_te.tolist() == [[1, 12, 14, 16], [1, 5, 5]] and y_te.tolist() == [0, 1]
    (x_tr, y_tr), (x_te, y_te) = D.imdb.load_data(num_words=10, skip_top=4, maxlen=5)
    assert x_tr.tolist() == [[2, 2], [2, 4, 8, 2]] and y_tr.tolist() == [1, 0]
    assert x_te.tolist() == [[2, 2, 2, 2], [2, 5, 5]] and y_te.tolist() == [0, 1]
    with pytest.raises(ValueError, match="After filtering for sequences shorter than maxlen=2, no sequence was kept"):
        D.imdb.load_data(maxlen=2)
    wi = cache / "imdb_word_index.json"
    wi.write_text(json.dumps({"the": 1, "and": 2}))
    _put(monkeypatch, D.imdb, wi, attr="WORD_INDEX_HASH")
    assert D.imdb.get_word_index() == {"the": 1, "and": 2}


def test_reuters(cache, monkeypatch):
    p = cache / "reuters.npz"
    np.savez(p, x=_objs([[3, 1], [5, 6, 7, 8], [20, 2, 4], [9], [1, 1, 1]]), y=np.array([3, 0, 45, 3, 1]))
    _put(monkeypatch, D.reuters, p)
    (x_tr, y_tr), (x_te, y_te) = D.reuters.load_data()
    assert x_tr.tolist() == [[1, 8, 9, 10, 11], [1, 6, 4], [1, 12], [1, 2, 5, 7]] and y_tr.tolist() == [0, 3, 3, 45]
    assert x_te.tolist() == [[1, 4, 4, 4]] and y_te.tolist() == [1]
    (x_tr, y_tr), (x_te, y_te) = D.reuters.load_data(oov_char=None, num_words=9, test_split=0.4, seed=5)
    assert x_tr.tolist() == [[1, 4, 4, 4], [1, 6, 4], [1, 8]] and y_tr.tolist() == [1, 3, 0]
    assert x_te.tolist() == [[1, 5, 7], [1]] and y_te.tolist() == [45, 3]
    assert len(D.reuters.get_label_names()) == 46 and D.reuters.get_label_names()[3] == "earn"


def _tar(path, top, members):
    with tarfile.open(path, "w:gz") as t:
        for name, obj in members.items():
            b = pickle.dumps(obj, protocol=3)
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(b)
            t.addfile(info, io.BytesIO(b))


def test_cifar10_and_cifar100_archives(cache, monkeypatch):
    rng = np.random.RandomState(0)
    batches = {f"data_batch_{i}": {b"labels": [i, i + 1], b"data": rng.randint(0, 256, (2, 3072)).astype(np.uint8)}
               for i in range(1, 6)}
    batches["test_batch"] = {b"labels": [7], b"data": rng.randint(0, 256, (1, 3072)).astype(np.uint8)}
    arch = cache / "cifar-10-batches-py-target_archive"  # Keras 3.15's archive name; extracted next to it
    _tar(arch, "cifar-10-batches-py", batches)
    _put(monkeypatch, D.cifar10, arch)
    (x_tr, y_tr), (x_te, y_te) = D.cifar10.load_data()
    assert x_tr.shape == (10, 32, 32, 3) and x_tr.dtype == np.uint8 and y_tr.shape == (10, 1) and y_tr.dtype == np.uint8
    assert y_tr.ravel().tolist() == [1, 2, 2, 3, 3, 4, 4, 5, 5, 6] and y_te.tolist() == [[7]]
    first = batches["data_batch_1"][b"data"][0].reshape(3, 32, 32).transpose(1, 2, 0)
    assert np.array_equal(x_tr[0], first)
    assert (cache / "cifar-10-batches-py-target" / "cifar-10-batches-py" / "test_batch").is_file()

    train = {b"fine_labels": [5, 99], b"coarse_labels": [1, 19],
             b"data": rng.randint(0, 256, (2, 3072)).astype(np.uint8)}
    test = {b"fine_labels": [0], b"coarse_labels": [3], b"data": rng.randint(0, 256, (1, 3072)).astype(np.uint8)}
    arch = cache / "cifar-100-python-target_archive"
    _tar(arch, "cifar-100-python", {"train": train, "test": test})
    _put(monkeypatch, D.cifar100, arch)
    (x_tr, y_tr), (x_te, y_te) = D.cifar100.load_data()
    assert y_tr.tolist() == [[5], [99]] and y_tr.dtype == np.int64 and x_te.shape == (1, 32, 32, 3)
    assert D.cifar100.load_data(label_mode="coarse")[0][1].tolist() == [[1], [19]]
    with pytest.raises(ValueError, match='`label_mode` must be one of `"fine"`, `"coarse"`. Received: label_mode=x.'):
        D.cifar100.load_data(label_mode="x")


def test_cifar_batches_refuse_arbitrary_pickles(cache, monkeypatch):
    class Evil:
        def __reduce__(self):
            return (os.system, ("true",))

    arch = cache / "cifar-10-batches-py-target_archive"
    _tar(arch, "cifar-10-batches-py", {f"data_batch_{i}": {b"labels": Evil()} for i in range(1, 6)})
    _put(monkeypatch, D.cifar10, arch)
    with pytest.raises(pickle.UnpicklingError, match="Refusing to deserialize `posix.system`"):
        D.cifar10.load_data()


class _Resp(io.BytesIO):
    headers = {}


def test_get_file_downloads_checks_and_names_like_keras(cache, monkeypatch, capsys):
    payload = b"abc" * 100
    monkeypatch.setattr(_fetch, "urlopen", lambda url, timeout=60.0: _Resp(payload))
    good = hashlib.sha256(payload).hexdigest()
    path = tf.keras.utils.get_file("data.bin", origin="https://example.invalid/x/data.bin", file_hash=good)
    assert path == str(cache / "data.bin") and open(path, "rb").read() == payload
    assert "Downloading data from https://example.invalid/x/data.bin" in capsys.readouterr().out
    # the name defaults to the origin's; md5_hash is still accepted
    path = tf.keras.utils.get_file(origin="https://example.invalid/y/other.txt",
                                   md5_hash=hashlib.md5(payload).hexdigest())
    assert os.path.basename(path) == "other.txt"
    with pytest.raises(ValueError, match="Incomplete or corrupted file detected. The auto file hash does not match"):
        tf.keras.utils.get_file("bad.bin", origin="https://example.invalid/bad.bin", file_hash="1" * 64)
    assert not (cache / "bad.bin").exists()
    with pytest.raises(ValueError, match="Paths are no longer accepted as the `fname` argument"):
        tf.keras.utils.get_file(os.path.join("a", "b"), origin="https://example.invalid/b")
    with pytest.raises(ValueError, match='Please specify the "origin" argument'):
        tf.keras.utils.get_file("x")


def test_get_file_extract_folder_names(cache, monkeypatch):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        info = tarfile.TarInfo("top/a.txt")
        info.size = 2
        t.addfile(info, io.BytesIO(b"hi"))
    monkeypatch.setattr(_fetch, "urlopen", lambda url, timeout=60.0: _Resp(buf.getvalue()))
    out = tf.keras.utils.get_file("bundle", origin="https://example.invalid/bundle.tar.gz", extract=True)
    assert out == str(cache / "bundle") and (cache / "bundle_archive").is_file()
    assert open(os.path.join(out, "top", "a.txt")).read() == "hi"
    out = tf.keras.utils.get_file("pack.tar.gz", origin="https://example.invalid/pack.tar.gz", extract=True,
                                  cache_subdir="sub")
    assert out == str(cache.parent / "sub" / "pack_extracted") and (cache.parent / "sub" / "pack.tar.gz").is_file()
