"""The main job (python -m tapeflow.examples.digits) end to end, shortened."""

import gzip
import os

import numpy as np
import pytest

from tapeflow.examples import digits


def test_digits_example_trains_saves_a_checkpoint_and_a_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = digits.main(["--epochs", "2", "--out", str(tmp_path)])
    assert 0.8 < out["loop_accuracy"] <= 1 and 0.8 < out["fit_accuracy"] <= 1
    # same seeded weights and batches: the loop and fit are the same computation
    assert out["loop_accuracy"] == pytest.approx(out["fit_accuracy"], abs=1e-6)
    assert os.path.exists(out["plot"]) and os.path.getsize(out["plot"]) > 1000
    assert any(name.startswith("digits-cnn-1") for name in os.listdir(tmp_path))
    text = capsys.readouterr().out
    assert "test accuracy" in text and "checkpoint" in text


def _write_idx(path, array):
    dtype_code = {np.uint8: 0x08}[array.dtype.type]
    header = bytes([0, 0, dtype_code, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + array.tobytes())


def test_fashion_mnist_option_reads_idx_files(tmp_path):
    rng = np.random.default_rng(0)
    for prefix, n in (("train", 64), ("t10k", 32)):
        labels = rng.integers(0, 10, n).astype(np.uint8)
        images = (rng.random((n, 28, 28)) * 40 + labels[:, None, None] * 20).astype(np.uint8)
        _write_idx(tmp_path / f"{prefix}-images-idx3-ubyte.gz", images)
        _write_idx(tmp_path / f"{prefix}-labels-idx1-ubyte.gz", labels)
    out = digits.main(["--fashion-mnist", str(tmp_path), "--epochs", "1", "--out", str(tmp_path / "o"),
                       "--no-plot"])
    assert 0 <= out["fit_accuracy"] <= 1 and out["plot"] is None
    assert any(name.startswith("fashion-mnist-cnn") for name in os.listdir(tmp_path / "o"))


def test_fashion_mnist_missing_files_error_names_them(tmp_path):
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte"):
        digits.main(["--fashion-mnist", str(tmp_path), "--out", str(tmp_path / "o")])
