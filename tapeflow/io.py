"""``tf.io``: file reading/writing, tensor (de)serialization and ``tf.io.gfile`` (local files)."""

from __future__ import annotations

import glob as _glob
import os as _os
import shutil as _shutil
from types import SimpleNamespace as _Namespace
from typing import Any

from tapeflow.framework.errors import NotFoundError as _NotFound
from tapeflow.ops.io_ops import decode_csv, parse_tensor, read_file, serialize_tensor, write_file

__all__ = ["decode_csv", "read_file", "write_file", "serialize_tensor", "parse_tensor", "gfile"]


def _p(path: Any) -> str:
    if isinstance(path, bytes):
        return path.decode("utf-8")
    return _os.fspath(path)


def _missing(path: str) -> _NotFound:
    return _NotFound(None, None, f"{path}; No such file or directory")


class GFile:
    """``tf.io.gfile.GFile``: a file object (text for modes without ``b``), raising ``NotFoundError`` if missing."""

    def __init__(self, name: Any, mode: str = "r") -> None:
        self.name = _p(name)
        self.mode = mode
        try:
            self._f = open(self.name, mode if "b" in mode else mode, **({} if "b" in mode else {"encoding": "utf-8"}))
        except FileNotFoundError:
            raise _missing(self.name) from None

    def read(self, n: int = -1) -> Any:
        return self._f.read(n)

    def readline(self) -> Any:
        return self._f.readline()

    def readlines(self) -> list:
        return self._f.readlines()

    def write(self, data: Any) -> None:
        if "b" not in self.mode and isinstance(data, bytes):
            data = data.decode("utf-8")
        elif "b" in self.mode and isinstance(data, str):
            data = data.encode("utf-8")
        self._f.write(data)

    def flush(self) -> None:
        self._f.flush()

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        return self._f.tell()

    def size(self) -> int:
        return _os.path.getsize(self.name)

    def close(self) -> None:
        self._f.close()

    def __iter__(self):
        return iter(self._f)

    def __enter__(self) -> GFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def exists(path: Any) -> bool:
    """Whether ``path`` exists."""
    return _os.path.exists(_p(path))


def isdir(path: Any) -> bool:
    """Whether ``path`` is a directory."""
    return _os.path.isdir(_p(path))


def makedirs(path: Any) -> None:
    """Creates ``path`` and its missing parents (no error if it exists)."""
    _os.makedirs(_p(path), exist_ok=True)


def mkdir(path: Any) -> None:
    """Creates one directory."""
    _os.mkdir(_p(path))


def listdir(path: Any) -> list[str]:
    """The entries of directory ``path`` (``NotFoundError`` if it is not a directory)."""
    path = _p(path)
    if not _os.path.isdir(path):
        raise _NotFound(None, None, f"Could not find directory {path}")
    return _os.listdir(path)


def glob(pattern: Any) -> list[str]:
    """The paths matching ``pattern`` (sorted)."""
    return sorted(_glob.glob(_p(pattern)))


def remove(path: Any) -> None:
    """Deletes a file (``NotFoundError`` if missing)."""
    path = _p(path)
    try:
        _os.remove(path)
    except FileNotFoundError:
        raise _missing(path) from None


def rmtree(path: Any) -> None:
    """Deletes a directory and everything under it."""
    path = _p(path)
    if not _os.path.exists(path):
        raise _missing(path)
    _shutil.rmtree(path)


def rename(src: Any, dst: Any, overwrite: bool = False) -> None:
    """Renames ``src`` to ``dst`` (``overwrite=False`` refuses an existing ``dst``)."""
    from tapeflow.framework.errors import AlreadyExistsError

    if not overwrite and _os.path.exists(_p(dst)):
        raise AlreadyExistsError(None, None, f"file already exists: {_p(dst)}")
    _os.replace(_p(src), _p(dst))


def copy(src: Any, dst: Any, overwrite: bool = False) -> None:
    """Copies a file."""
    from tapeflow.framework.errors import AlreadyExistsError

    if not overwrite and _os.path.exists(_p(dst)):
        raise AlreadyExistsError(None, None, f"file already exists: {_p(dst)}")
    _shutil.copyfile(_p(src), _p(dst))


def stat(path: Any) -> Any:
    """``length``, ``mtime_nsec`` and ``is_directory`` of ``path``."""
    path = _p(path)
    try:
        st = _os.stat(path)
    except FileNotFoundError:
        raise _missing(path) from None
    return _Namespace(length=st.st_size, mtime_nsec=st.st_mtime_ns, is_directory=_os.path.isdir(path))


def walk(top: Any, topdown: bool = True, onerror: Any = None):
    """Yields ``(dirname, subdirs, files)`` as ``os.walk``."""
    yield from _os.walk(_p(top), topdown=topdown, onerror=onerror)


gfile = _Namespace(GFile=GFile, Open=GFile, exists=exists, isdir=isdir, makedirs=makedirs, mkdir=mkdir, listdir=listdir,
            glob=glob, remove=remove, rmtree=rmtree, rename=rename, copy=copy, stat=stat, walk=walk)
gfile.__doc__ = "``tf.io.gfile``: local-filesystem file functions with TF's names and errors."


def __getattr__(name: str):
    if name in ("TFRecordWriter", "parse_single_example", "parse_example", "FixedLenFeature",
                "VarLenFeature", "decode_raw", "decode_json_example", "encode_base64", "decode_base64"):
        raise NotImplementedError(f"tf.io.{name} is not implemented in tapeflow")
    raise AttributeError(f"module 'tapeflow.io' has no attribute '{name}'")
