"""Small data sets that work offline, and loaders for MNIST-style IDX files.

``load_digits`` returns the handwritten digits that scikit-learn ships
(``sklearn.datasets.load_digits``: 1,797 8x8 images, values 0..16, ten
classes). They come from the UCI ML "Optical Recognition of Handwritten
Digits" data set (E. Alpaydin, C. Kaynak, 1998) and are distributed with
scikit-learn under its BSD 3-clause license; a compressed copy
(``digits.npz``, 45 kB) is bundled in this package, so no download and no
scikit-learn are needed.

``load_mnist(folder)`` and ``load_fashion_mnist(folder)`` read the standard
IDX files (``train-images-idx3-ubyte`` etc., gzipped or not) from a local
folder; ``load_idx(path)`` reads any single IDX file.

>>> (x_train, y_train), (x_test, y_test) = tf.datasets.load_digits_split()
>>> x_train.shape, x_train.dtype
((1437, 8, 8), dtype('float32'))
"""

from __future__ import annotations

import gzip
import os
from typing import Any

import numpy as np

__all__ = [
    "load_digits", "load_digits_split", "train_test_split", "load_idx", "load_mnist", "load_fashion_mnist",
]

_HERE = os.path.dirname(os.path.abspath(__file__))


# -- digits ------------------------------------------------------------------------
def load_digits(normalize: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(images, labels)``: float32 images of shape (1797, 8, 8) with
    scikit-learn's values 0..16 (``normalize=True``: divided by 16, in
    [0, 1]) and int64 labels 0..9, in scikit-learn's order."""
    with np.load(os.path.join(_HERE, "digits.npz")) as data:
        images = data["images"].astype(np.float32)
        labels = data["labels"].astype(np.int64)
    if normalize:
        images /= np.float32(16.0)
    return images, labels


def train_test_split(*arrays: Any, test_size: float | int = 0.2, seed: int | None = 0, shuffle: bool = True,
                     stratify: Any = None) -> list[np.ndarray]:
    """Splits arrays (same first dimension) into train and test parts, as
    ``sklearn.model_selection.train_test_split``: returns ``[a_train, a_test,
    b_train, b_test, ...]``. ``test_size`` is a fraction or a count;
    ``stratify`` (labels) keeps each class's share in both parts."""
    if not arrays:
        raise ValueError("train_test_split needs at least one array.")
    arrays = tuple(np.asarray(a) for a in arrays)
    n = arrays[0].shape[0]
    for a in arrays[1:]:
        if a.shape[0] != n:
            raise ValueError(f"Found input variables with inconsistent numbers of samples: "
                             f"{[int(x.shape[0]) for x in arrays]}")
    n_test = int(np.ceil(test_size * n)) if isinstance(test_size, float) else int(test_size)
    if not 0 < n_test < n:
        raise ValueError(f"test_size={test_size} gives {n_test} test samples out of {n}; it must leave at least "
                         "one sample in each part.")
    rng = np.random.default_rng(seed)
    if stratify is not None:
        if not shuffle:
            raise ValueError("Stratified train/test split is not implemented for shuffle=False")
        labels = np.asarray(stratify)
        classes, y = np.unique(labels, return_inverse=True)
        test_idx = []
        # Each class contributes its proportional share (largest remainders).
        counts = np.bincount(y, minlength=len(classes))
        exact = counts * n_test / n
        take = np.floor(exact).astype(int)
        for c in np.argsort(-(exact - take), kind="stable")[: n_test - take.sum()]:
            take[c] += 1
        for c in range(len(classes)):
            members = rng.permutation(np.nonzero(y == c)[0])
            test_idx.append(members[: take[c]])
        test = rng.permutation(np.concatenate(test_idx))
        mask = np.ones(n, bool)
        mask[test] = False
        train = rng.permutation(np.nonzero(mask)[0])
    else:
        order = rng.permutation(n) if shuffle else np.arange(n)
        train, test = order[: n - n_test], order[n - n_test:]
    out = []
    for a in arrays:
        out += [a[train], a[test]]
    return out


def load_digits_split(test_size: float | int = 0.2, seed: int | None = 0, normalize: bool = True,
                      stratify: bool = True) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``((x_train, y_train), (x_test, y_test))`` of the digits, like Keras's
    ``load_data()``: images in [0, 1] (float32), a stratified split."""
    x, y = load_digits(normalize=normalize)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=test_size, seed=seed,
                                              stratify=y if stratify else None)
    return (x_tr, y_tr), (x_te, y_te)


# -- IDX files -----------------------------------------------------------------------
_IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def load_idx(path: str) -> np.ndarray:
    """Reads one IDX file (gzipped or not, detected from its content) into a
    NumPy array of its shape and native-endian dtype."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise ValueError(f"{path}: corrupt gzip data ({e}); download the file again.") from None
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_TYPES:
        raise ValueError(f"{path} is not an IDX file (bad magic number {raw[:4].hex() or 'empty'}); expected "
                         "0x0000 then a type byte (0x08 uint8 ... 0x0E float64) and the number of dimensions.")
    dtype = np.dtype(_IDX_TYPES[raw[2]])
    ndim = raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ValueError(f"{path}: truncated IDX header ({len(raw)} bytes for {ndim} dimensions).")
    shape = tuple(int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    need = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    have = len(raw) - header
    if have != need:
        raise ValueError(f"{path}: IDX data has {have} bytes but shape {shape} of {dtype.name} needs {need}; the "
                         "file is truncated or corrupt, download it again.")
    return np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


_MNIST_FILES = {
    "x_train": "train-images-idx3-ubyte",
    "y_train": "train-labels-idx1-ubyte",
    "x_test": "t10k-images-idx3-ubyte",
    "y_test": "t10k-labels-idx1-ubyte",
}


def _find(folder: str, base: str) -> str | None:
    # Accept the plain name, .gz, and the dotted variant (train-images.idx3-ubyte).
    dotted = base.replace("-idx", ".idx")
    for name in (base, base + ".gz", dotted, dotted + ".gz"):
        p = os.path.join(folder, name)
        if os.path.isfile(p):
            return p
    return None


def _load_mnist_like(folder: str, what: str, where: str):
    folder = os.fspath(folder)
    found = {k: _find(folder, v) for k, v in _MNIST_FILES.items()}
    missing = [_MNIST_FILES[k] for k, p in found.items() if p is None]
    if missing:
        raise FileNotFoundError(
            f"{what}: missing {', '.join(m + '[.gz]' for m in missing)} in {os.path.abspath(folder)}. Download the "
            f"four IDX files from {where} into that folder (gzipped or not)."
        )
    arrays = {k: load_idx(p) for k, p in found.items()}
    for part in ("train", "test"):
        x, y = arrays[f"x_{part}"], arrays[f"y_{part}"]
        if x.ndim != 3 or y.ndim != 1 or x.shape[0] != y.shape[0]:
            raise ValueError(f"{what}: {part} images {x.shape} and labels {y.shape} do not match (expected "
                             "(n, rows, cols) images and (n,) labels).")
    return (arrays["x_train"], arrays["y_train"]), (arrays["x_test"], arrays["y_test"])


def load_mnist(folder: str):
    """``((x_train, y_train), (x_test, y_test))`` as uint8 arrays from the
    four MNIST IDX files in ``folder`` (like ``tf.keras.datasets.mnist``)."""
    return _load_mnist_like(folder, "MNIST", "https://storage.googleapis.com/cvdf-datasets/mnist/")


def load_fashion_mnist(folder: str):
    """Fashion-MNIST from its four IDX files in ``folder`` (same layout and
    return value as ``load_mnist``)."""
    return _load_mnist_like(folder, "Fashion-MNIST",
                            "https://github.com/zalandoresearch/fashion-mnist (folder data/fashion)")
