"""A new user's first minutes: tf.keras.datasets loaders, Keras 3's progress lines, the Fashion-MNIST main job,
checkpoint papercuts, missing names, packaging. Tests never download (the downloader is monkeypatched)."""

import gzip
import hashlib
import io
import importlib.util
import os
import re
import struct
import warnings

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.keras.datasets import _fetch, fashion_mnist, mnist

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _idx(arr):
    arr = np.asarray(arr, np.uint8)
    return struct.pack(">BBBB", 0, 0, 0x08, arr.ndim) + b"".join(struct.pack(">I", d) for d in arr.shape) + \
        arr.tobytes()


def _fashion_bytes(n_train=6, n_test=4):
    rng = np.random.default_rng(0)
    arrays = {"train-images-idx3-ubyte.gz": rng.integers(0, 256, (n_train, 28, 28)),
              "train-labels-idx1-ubyte.gz": np.arange(n_train) % 10,
              "t10k-images-idx3-ubyte.gz": rng.integers(0, 256, (n_test, 28, 28)),
              "t10k-labels-idx1-ubyte.gz": (np.arange(n_test) + 3) % 10}
    return arrays, {k: gzip.compress(_idx(v)) for k, v in arrays.items()}


@pytest.fixture
def no_system(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    monkeypatch.setattr(fashion_mnist, "SYSTEM_DIRS", [str(tmp_path / "debian")])
    monkeypatch.setattr(mnist, "SYSTEM_DIRS", [str(tmp_path / "debian-mnist")])

    def offline(url, timeout=60.0):
        raise OSError(f"offline: {url}")
    monkeypatch.setattr(_fetch, "urlopen", offline)
    return tmp_path


def _check(loaded, arrays):
    (x_tr, y_tr), (x_te, y_te) = loaded
    for got, want in [(x_tr, "train-images-idx3-ubyte.gz"), (y_tr, "train-labels-idx1-ubyte.gz"),
                      (x_te, "t10k-images-idx3-ubyte.gz"), (y_te, "t10k-labels-idx1-ubyte.gz")]:
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got, arrays[want])


def test_fashion_mnist_reads_keras_cache_then_debian_folder(no_system):
    arrays, blobs = _fashion_bytes()
    debian = no_system / "debian"
    debian.mkdir()
    for k, b in blobs.items():
        (debian / k).write_bytes(b)
    _check(tf.keras.datasets.fashion_mnist.load_data(), arrays)
    # Keras's cache wins over the system folder
    cache = no_system / "keras" / "datasets" / "fashion-mnist"
    cache.mkdir(parents=True)
    arrays2, blobs2 = _fashion_bytes(n_train=3, n_test=2)
    for k, b in blobs2.items():
        (cache / k).write_bytes(b)
    _check(tf.keras.datasets.fashion_mnist.load_data(), arrays2)


def test_fashion_mnist_downloads_with_checksum_and_atomic_write(no_system, monkeypatch, capsys):
    arrays, blobs = _fashion_bytes()
    monkeypatch.setattr(fashion_mnist, "FILES", {k: hashlib.md5(b).hexdigest() for k, b in blobs.items()})
    urls = []

    class Resp(io.BytesIO):
        headers = {}

    def fake(url, timeout=60.0):
        urls.append(url)
        r = Resp(blobs[url.rsplit("/", 1)[1]])
        r.headers = {"Content-Length": str(len(r.getvalue()))}
        return r
    monkeypatch.setattr(_fetch, "urlopen", fake)
    _check(fashion_mnist.load_data(), arrays)
    assert "https://storage.googleapis.com/tensorflow/tf-keras-datasets/train-labels-idx1-ubyte.gz" in urls
    cache = no_system / "keras" / "datasets" / "fashion-mnist"
    assert sorted(os.listdir(cache)) == sorted(blobs)  # no partial files left
    assert "Downloading data from https://storage.googleapis.com/" in capsys.readouterr().out
    # a corrupt download: ValueError, and nothing appears in the cache
    for f in os.listdir(cache):
        os.remove(cache / f)
    monkeypatch.setattr(fashion_mnist, "FILES", dict.fromkeys(blobs, "0" * 32))
    with pytest.raises(ValueError, match="md5"):
        fashion_mnist.load_data()
    assert os.listdir(cache) == []


def test_offline_error_names_the_three_ways(no_system):
    with pytest.raises(OSError) as e:
        tf.keras.datasets.fashion_mnist.load_data()
    msg = str(e.value)
    assert "apt-get install dataset-fashion-mnist" in msg and str(no_system / "keras" / "datasets") in msg
    assert "download them from https://storage.googleapis.com/tensorflow/tf-keras-datasets/" in msg
    with pytest.raises(OSError, match="mnist.npz"):
        tf.keras.datasets.mnist.load_data()


def test_mnist_reads_keras_npz_and_idx_folder(no_system):
    rng = np.random.default_rng(1)
    x_tr, y_tr = rng.integers(0, 256, (5, 28, 28), dtype=np.uint8), np.arange(5, dtype=np.uint8)
    x_te, y_te = rng.integers(0, 256, (2, 28, 28), dtype=np.uint8), np.arange(2, dtype=np.uint8)
    folder = no_system / "debian-mnist"
    folder.mkdir()
    for name, a in [("train-images-idx3-ubyte", x_tr), ("train-labels-idx1-ubyte", y_tr),
                    ("t10k-images-idx3-ubyte", x_te), ("t10k-labels-idx1-ubyte", y_te)]:
        (folder / name).write_bytes(_idx(a))
    (a, b), (c, d) = mnist.load_data()
    np.testing.assert_array_equal(a, x_tr)
    np.testing.assert_array_equal(d, y_te)
    cache = no_system / "keras" / "datasets"
    cache.mkdir(parents=True)
    np.savez(cache / "mnist.npz", x_train=x_tr[:1], y_train=y_tr[:1], x_test=x_te[:1], y_test=y_te[:1])
    (a, b), (c, d) = mnist.load_data()
    assert a.shape == (1, 28, 28) and a.dtype == np.uint8


# -- progress lines: Keras 3's, on stdout --------------------------------------------
def _model():
    m = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
    m.compile(optimizer="adam", loss="mse", metrics=["mae"])
    return m


def _xy(n=64):
    rng = np.random.default_rng(0)
    return rng.random((n, 4), dtype=np.float32), rng.random((n, 2), dtype=np.float32)


BAR = re.compile(r"^4/4 ━{20} \d+s \d+(us|ms|s)/step - loss: \d\.\d{4} - mae: \d\.\d{4}$")
LINE2 = re.compile(r"^4/4 - \d+s - \d+(us|ms|s)/step - loss: \d\.\d{4} - mae: \d\.\d{4}$")


def test_progress_lines_match_keras_when_piped(capsys):
    x, y = _xy()
    m = _model()
    m.fit(x, y, epochs=2, batch_size=16, verbose=1)
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2" and len(lines) == 4 and err == ""
    assert BAR.match(lines[1]) and BAR.match(lines[3]), lines
    m.fit(x, y, epochs=1, batch_size=16, verbose=2)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and LINE2.match(lines[0]), lines  # one epoch: no "Epoch 1/1", as Keras
    m.evaluate(x, y, batch_size=16, verbose=1)
    assert BAR.match(capsys.readouterr().out.strip())
    m.evaluate(x, y, batch_size=16, verbose=2)
    assert LINE2.match(capsys.readouterr().out.strip())
    m.predict(x, batch_size=16, verbose=1)
    assert re.match(r"^4/4 ━{20} \d+s \d+(us|ms|s)/step\n$", capsys.readouterr().out)
    m.evaluate(x, y, verbose=0)
    m.predict(x, verbose=0)
    assert capsys.readouterr().out == ""


def test_progbar_redraws_one_line_on_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr(tf.keras.utils.Progbar, "_dynamic", staticmethod(lambda: True))
    bar = tf.keras.utils.Progbar(2, interval=0.0)
    bar.update(1, [("loss", 1.0)])
    bar.update(2, [("loss", 0.5)])
    out = capsys.readouterr().out
    assert out.startswith("\r\x1b[1m1/2\x1b[0m \x1b[32m" + "━" * 10 + "\x1b[0m\x1b[37m" + "━" * 10 + "\x1b[0m")
    assert out.endswith(" - loss: 0.5000\n") and out.count("\n") == 1 and "\b" in out


def test_fit_on_zero_samples_warns_and_returns():
    m = _model()
    with pytest.warns(UserWarning, match="Your input ran out of data; interrupting training"):
        h = m.fit(np.zeros((0, 4), np.float32), np.zeros((0, 2), np.float32), epochs=2, verbose=0)
    assert h.history == {}


def test_terminate_on_nan_message_then_the_bar(capsys):
    x, y = _xy()
    y[20] = np.nan
    m = _model()
    m.fit(x, y, epochs=2, batch_size=16, verbose=1, shuffle=False, callbacks=[tf.keras.callbacks.TerminateOnNaN()])
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["Epoch 1/2", "Batch 1: Invalid loss, terminating training"]
    assert lines[2].startswith("4/4 ━") and lines[2].endswith("loss: nan - mae: nan") and len(lines) == 3


# -- checkpoints ---------------------------------------------------------------------
def test_checkpoint_manager_removes_stale_tmp_files(tmp_path):
    v = tf.Variable([1.0, 2.0])
    mgr = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), str(tmp_path), max_to_keep=2)
    stale = [tmp_path / ".ckpt-1.index.abc123.tmp", tmp_path / ".checkpoint.xyz.tmp"]
    fresh = tmp_path / ".ckpt-9.data-00000-of-00001.live.tmp"
    other = tmp_path / "notes.tmp"
    for p in stale + [fresh, other]:
        p.write_bytes(b"x" * 100)
    for p in stale + [other]:
        os.utime(p, (0, 0))
    mgr.save()
    assert not any(p.exists() for p in stale) and fresh.exists() and other.exists()
    os.utime(fresh, (0, 0))
    mgr.restore_or_initialize()
    assert not fresh.exists()


def test_unrestored_values_warn_as_tf_and_assert_consumed_is_strict(tmp_path):
    path = tf.train.Checkpoint(a=tf.Variable(1.0), b=tf.Variable(2.0)).save(str(tmp_path / "c"))
    a = tf.Variable(0.0)
    with pytest.warns(UserWarning, match=r"Value in checkpoint could not be found in the restored object: \(root\)\.b"):
        tf.train.Checkpoint(a=a).restore(path)
    assert float(a) == 1.0
    status = tf.train.Checkpoint(a=tf.Variable(0.0)).restore(path)
    with pytest.raises(AssertionError, match="Unresolved values"):
        status.assert_consumed()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tf.train.Checkpoint(a=tf.Variable(0.0)).restore(path).expect_partial()
        del status


def test_get_checkpoint_state(tmp_path):
    assert tf.train.get_checkpoint_state(str(tmp_path)) is None
    mgr = tf.train.CheckpointManager(tf.train.Checkpoint(v=tf.Variable(1.0)), str(tmp_path), max_to_keep=3)
    mgr.save()
    p2 = mgr.save()
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == p2 == tf.train.latest_checkpoint(str(tmp_path))
    assert state.all_model_checkpoint_paths == [str(tmp_path / "ckpt-1"), p2]


# -- names, errors -------------------------------------------------------------------
@pytest.mark.parametrize("name", ["keras.utils.model_to_dot", "keras.ops.vectorize", "train.Saver"])
def test_missing_names_raise_not_implemented(name):
    obj = tf
    *path, last = name.split(".")
    for p in path:
        obj = getattr(obj, p)
    with pytest.raises(NotImplementedError, match=re.escape(f"tf.{name} is not implemented in tapeflow")):
        getattr(obj, last)
    assert not hasattr(obj, last)


def test_string_plus_number_gives_tf_errors():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"input #1\(zero-based\) was expected to be a string tensor but is a int32 tensor"):
        tf.constant("a") + 1
    with pytest.raises(TypeError, match="Cannot convert 1 to EagerTensor of dtype string"):
        1 + tf.constant("a")
    with pytest.raises(TypeError, match="Cannot convert 2 to EagerTensor of dtype string"):
        tf.constant("a") * 2
    assert (tf.constant("a") + "b").numpy() == b"ab"


# -- the main job --------------------------------------------------------------------
def test_fashion_mnist_example_runs_both_trainings(tmp_path, monkeypatch, capsys):
    from tapeflow.examples import fashion_mnist as job

    rng = np.random.default_rng(0)
    y_tr, y_te = np.arange(96, dtype=np.uint8) % 10, np.arange(32, dtype=np.uint8) % 10
    x_tr = (rng.random((96, 28, 28)) * 60 + y_tr[:, None, None] * 19).astype(np.uint8)
    x_te = (rng.random((32, 28, 28)) * 60 + y_te[:, None, None] * 19).astype(np.uint8)
    monkeypatch.setattr(tf.keras.datasets.fashion_mnist, "load_data", lambda: ((x_tr, y_tr), (x_te, y_te)))
    res = job.main(["--epochs", "2", "--batch-size", "32", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert out.startswith("sanity check: d(x*x)/dx at x=3 is 6 (expected 6)\n")
    assert "custom training loop" in out and "Keras compile/fit" in out and "Epoch 2/2" in out
    assert res["data"] == "fashion-mnist" and len(res["loop_history"]["loss"]) == 2
    assert os.path.isfile(res["checkpoint"] + ".index") and os.path.isfile(res["plot"])
    if importlib.util.find_spec("tensorboard") is not None:  # fit's TensorBoard logs for `tensorboard --logdir`
        assert os.listdir(tmp_path / "logs" / "train") and os.listdir(tmp_path / "logs" / "validation")
        assert f"tensorboard --logdir {tmp_path / 'logs'}" in out


def test_fashion_mnist_example_falls_back_to_digits(tmp_path, monkeypatch, capsys):
    from tapeflow.examples import fashion_mnist as job

    def unavailable():
        raise OSError("fashion_mnist.load_data(): the data is not on this machine. Get it one of three ways")
    monkeypatch.setattr(tf.keras.datasets.fashion_mnist, "load_data", unavailable)
    name, x_tr, *_ = job.load_data()
    assert name == "digits" and x_tr.shape[1:] == (8, 8, 1)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and "training on the bundled digits instead" in lines[0]


# -- packaging -----------------------------------------------------------------------
def test_packaging_metadata():
    text = open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8").read()
    assert 'license = "Apache-2.0"' in text and 'license-files = ["LICENSE"]' in text and "[project.urls]" in text
    assert "classifiers" in text and '"safetensors>=' in text.split("dependencies = ")[1].split("\n")[0]
    assert "Apache License" in open(os.path.join(ROOT, "LICENSE"), encoding="utf-8").read(300)
    assert os.path.isfile(os.path.join(ROOT, "tapeflow", "py.typed"))


def test_ci_runs_exactly_the_readme_test_command():
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, re.S)
    test_cmd = next(b for b in blocks if "pytest" in b and "venv" in b)
    ci = open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8").read().splitlines()
    assert test_cmd in ci
    assert any("tapeflow.examples.fashion_mnist" in b and b.startswith("python3 -m venv .venv") for b in blocks)
