"""``tf.keras.utils.get_file``: Keras 3.15's download cache (``~/.keras/datasets`` or ``$KERAS_HOME``), its file
and extraction-folder names, hash checks and archive extraction. Downloads go through
``tapeflow.keras.datasets._fetch`` (progress bar, atomic write; tests monkeypatch its ``urlopen``)."""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.parse
import warnings
import zipfile
from typing import Any

from tapeflow.keras.io_utils import print_msg

__all__ = ["get_file", "hash_file", "validate_file"]


def _hasher(algorithm: str, file_hash: str | None = None) -> Any:
    if algorithm == "sha256" or (algorithm == "auto" and file_hash is not None and len(file_hash) == 64):
        return hashlib.sha256()
    return hashlib.md5()


def hash_file(fpath: str, algorithm: Any = "sha256", chunk_size: int = 65535) -> str:
    """The hex digest of ``fpath`` (``"sha256"``, ``"md5"`` or a hashlib object)."""
    hasher = _hasher(algorithm) if isinstance(algorithm, str) else algorithm
    with open(fpath, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            hasher.update(chunk)
    return hasher.hexdigest()


def validate_file(fpath: str, file_hash: str, algorithm: str = "auto", chunk_size: int = 65535) -> bool:
    """Whether ``fpath`` has ``file_hash`` (``"auto"``: sha256 for a 64-digit hash, else md5)."""
    return str(hash_file(fpath, _hasher(algorithm, file_hash), chunk_size)) == str(file_hash)


def _keras_home() -> str:
    return os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")


def _extract(file_path: str, path: str, archive_format: Any) -> bool:
    if archive_format is None:
        return False
    formats = ["tar", "zip"] if archive_format == "auto" else (
        [archive_format] if isinstance(archive_format, str) else list(archive_format))
    for kind in formats:
        if kind == "tar":
            is_match, opener = tarfile.is_tarfile, tarfile.open
        elif kind == "zip":
            is_match, opener = zipfile.is_zipfile, zipfile.ZipFile
        else:
            raise NotImplementedError(kind)
        if not is_match(file_path):
            continue
        with opener(file_path) as archive:
            try:
                if kind == "tar":
                    archive.extractall(path, filter="data")  # no absolute paths, links out or devices
                else:
                    _safe_zip_extract(archive, path)
            except (tarfile.TarError, RuntimeError, KeyboardInterrupt):
                if os.path.isfile(path):
                    os.remove(path)
                elif os.path.exists(path):
                    shutil.rmtree(path)
                raise
        return True
    return False


def _safe_zip_extract(archive: zipfile.ZipFile, path: str) -> None:
    base = os.path.realpath(path)
    for member in archive.namelist():
        target = os.path.realpath(os.path.join(path, member))
        if os.path.commonpath([base, target]) != base:
            raise RuntimeError(f"Refusing to extract {member!r}: it points outside {path}")
    archive.extractall(path)


def get_file(fname: str | None = None, origin: str | None = None, untar: bool = False, md5_hash: str | None = None,
             file_hash: str | None = None, cache_subdir: str = "datasets", hash_algorithm: str = "auto",
             extract: bool = False, archive_format: str = "auto", cache_dir: str | None = None,
             force_download: bool = False) -> str:
    """Downloads ``origin`` into Keras's cache unless a file with the right hash is already there, and returns
    its path; with ``extract=True`` the archive is extracted (each call, as Keras 3.15) and the extraction folder
    is returned: ``fname`` without a suffix names that folder (the archive is ``<fname>_archive``), ``fname`` with
    one names the archive (the folder is ``<stem>_extracted``)."""
    from tapeflow.keras.datasets import _fetch

    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to download).')
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    base = os.path.expanduser(cache_dir if cache_dir is not None else _keras_home())
    if not _writable_parent(base):  # (Keras creates ~/.keras on import; a read-only home falls back to /tmp)
        base = os.path.join("/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir(), ".keras")
    datadir = os.path.join(base, cache_subdir)
    os.makedirs(datadir, exist_ok=True)
    provided = fname
    fname = os.fspath(fname) if fname is not None else ""
    if not fname:
        fname = os.path.basename(urllib.parse.urlsplit(origin).path)
        if not fname:
            raise ValueError(f"Can't parse the file name from the origin provided: '{origin}'.Please specify the "
                             f"`fname` argument.")
    elif os.sep in fname:
        raise ValueError("Paths are no longer accepted as the `fname` argument. To specify the file's parent "
                         f"directory, use the `cache_dir` argument. Received: fname={fname}")
    if extract or untar:
        if provided and "." in fname:
            target = os.path.join(datadir, fname)
            extraction_dir = os.path.join(datadir, f"{fname[:fname.find('.')]}_extracted")
        else:
            extraction_dir = os.path.join(datadir, fname)
            target = os.path.join(datadir, f"{fname}_archive")
    else:
        target = os.path.join(datadir, fname)
    download = force_download or not os.path.exists(target)
    if not download and file_hash is not None and not validate_file(target, file_hash, algorithm=hash_algorithm):
        print_msg(f"A local file was found, but it seems to be incomplete or outdated because the {hash_algorithm} "
              f"file hash does not match the original value of {file_hash} so we will re-download the data.")
        download = True
    if download:
        try:
            _fetch.download(origin, target, None, "sha256")
        except OSError as e:
            raise Exception(f"URL fetch failure on {origin}: {getattr(e, 'errno', None)} -- "  # noqa: TRY002
                            f"{getattr(e, 'reason', e)}") from e
        if file_hash is not None and not validate_file(target, file_hash, algorithm=hash_algorithm):
            os.remove(target)  # (Keras leaves it; a corrupt file would only be re-checked next time)
            raise ValueError(f"Incomplete or corrupted file detected. The {hash_algorithm} file hash does not match "
                             f"the provided value of {file_hash}.")
    if extract or untar:
        if not _extract(target, extraction_dir, "tar" if untar else archive_format):
            warnings.warn("Could not extract archive.", stacklevel=2)
        return extraction_dir
    return target


def _writable_parent(path: str) -> bool:
    """Whether ``path`` exists writable or can be created."""
    while not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            return False
        path = parent
    return os.access(path, os.W_OK)
