"""Finding or downloading the files of ``tf.keras.datasets`` (Keras's cache, Debian's folder, Keras's origin)."""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time
import urllib.request

from tapeflow.keras.io_utils import print_msg

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"


def keras_cache_dir() -> str:
    """Keras's dataset cache: ``$KERAS_HOME/datasets`` or ``~/.keras/datasets``."""
    home = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    return os.path.join(home, "datasets")


def _hash(path: str, algorithm: str) -> str:
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _progress(done: int, total: int, t0: float, out=None) -> None:
    out = out or sys.stdout
    if not out.isatty():
        return
    dt = max(time.perf_counter() - t0, 1e-9)
    if total > 0:
        filled = int(20 * done / total)
        out.write(f"\r{done // 1024}/{total // 1024} kB {'━' * filled}{' ' * (20 - filled)} "
                  f"{done / dt / 1e6:.1f} MB/s")
    else:
        out.write(f"\r{done // 1024} kB {done / dt / 1e6:.1f} MB/s")
    out.flush()


def urlopen(url: str, timeout: float = 60.0):
    """Opens ``url`` (tests monkeypatch this: they never download)."""
    return urllib.request.urlopen(url, timeout=timeout)  # noqa: S310 - a fixed https origin


def download(url: str, dest: str, file_hash: str | None, algorithm: str) -> str:
    """Downloads ``url`` to ``dest`` with a progress bar, checks its ``algorithm`` hash (unless ``file_hash`` is
    None), and moves it into place atomically (a partial or corrupt download never appears under ``dest``)."""
    folder = os.path.dirname(dest)
    os.makedirs(folder, exist_ok=True)
    print_msg(f"Downloading data from {url}")
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=os.path.basename(dest) + ".", suffix=".part")
    try:
        h = hashlib.new(algorithm)
        t0 = time.perf_counter()
        with os.fdopen(fd, "wb") as f, urlopen(url) as resp:
            total = int(resp.headers.get("Content-Length") or 0) if getattr(resp, "headers", None) else 0
            done = 0
            while True:
                chunk = resp.read(1 << 16)
                if not chunk:
                    break
                f.write(chunk)
                h.update(chunk)
                done += len(chunk)
                _progress(done, total, t0)
            f.flush()
            os.fsync(f.fileno())
        if sys.stdout.isatty():
            sys.stdout.write("\n")
        if file_hash is not None and h.hexdigest() != file_hash:
            raise ValueError(f"Downloaded {url} has {algorithm} {h.hexdigest()}, expected {file_hash}: the download "
                             "is corrupt or the file changed; nothing was written, try again.")
        os.replace(tmp, dest)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return dest


def find_or_fetch(name: str, files: dict, cache_subdir: str, system_dirs: list, algorithm: str,
                  apt_package: str) -> dict:
    """``{file name: path}`` for every file of ``files`` (name -> hash): Keras's cache, then the first of
    ``system_dirs`` holding them all, then a download into the cache."""
    cache = os.path.join(keras_cache_dir(), cache_subdir) if cache_subdir else keras_cache_dir()
    for folder in [cache, *system_dirs]:
        paths = {f: os.path.join(folder, f) for f in files}
        if all(os.path.isfile(p) for p in paths.values()):
            return paths
    paths = {}
    try:
        for f, file_hash in files.items():
            p = os.path.join(cache, f)
            paths[f] = p if os.path.isfile(p) else download(ORIGIN + f, p, file_hash, algorithm)
    except OSError as e:
        raise OSError(
            f"{name}: the data is not on this machine and could not be downloaded ({e}). Get it one of three ways: "
            f"(1) put Keras's files ({', '.join(files)}) in {cache}; (2) on Debian/Ubuntu, "
            f"`apt-get install {apt_package}` (installs them in {system_dirs[0]}); (3) connect to the internet so "
            f"load_data() can download them from {ORIGIN}.") from e
    return paths
