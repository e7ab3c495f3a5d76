"""``tf.io``: file reading/writing, tensor (de)serialization and ``tf.io.gfile`` (local files)."""

from __future__ import annotations

import glob as _glob
import os as _os
import shutil as _shutil
from types import SimpleNamespace as _Namespace
from typing import Any

from tapeflow.framework.errors import NotFoundError as _NotFound
from tapeflow.ops.image_decode_ops import (
    decode_and_crop_jpeg, decode_bmp, decode_gif, decode_image, decode_jpeg, decode_png, extract_jpeg_shape,
)
from tapeflow.ops.image_encode_ops import encode_jpeg, encode_png
from tapeflow.ops.io_ops import (
    decode_base64, decode_compressed, decode_csv, decode_raw, encode_base64, is_jpeg, matching_files, parse_tensor,
    read_file, serialize_tensor, write_file,
)

__all__ = ["encode_jpeg", "encode_png",
           "decode_bmp", "decode_gif", "decode_image", "decode_jpeg", "decode_png", "decode_csv", "decode_raw",
           "read_file", "write_file", "serialize_tensor", "parse_tensor", "gfile",
           "TFRecordWriter", "TFRecordOptions", "FixedLenFeature", "VarLenFeature", "RaggedFeature", "parse_example",
           "parse_single_example", "decode_base64", "encode_base64", "decode_compressed", "is_jpeg",
           "decode_and_crop_jpeg", "extract_jpeg_shape",
           "matching_files"]


# -- TFRecord files and tf.train.Example parsing ---------------------------------------------
class TFRecordOptions:
    """Options of a TFRecord file: ``compression_type`` ``""``, ``"GZIP"`` or ``"ZLIB"``."""

    compression_type_map = {"": "", "GZIP": "GZIP", "ZLIB": "ZLIB"}

    def __init__(self, compression_type: str | None = None, flush_mode: Any = None, input_buffer_size: Any = None,
                 output_buffer_size: Any = None, window_bits: Any = None, compression_level: Any = None,
                 compression_method: Any = None, mem_level: Any = None, compression_strategy: Any = None) -> None:
        c = (compression_type or "").upper()
        if c not in self.compression_type_map:
            raise ValueError(f"Unsupported compression_type {compression_type!r} (expected '', 'GZIP' or 'ZLIB').")
        self.compression_type = c
        self.compression_level = compression_level


class TFRecordWriter:
    """Writes records (``bytes``, e.g. ``example.SerializeToString()``) to a TFRecord file, framed as TF
    frames them (length, masked CRC-32C of the length, data, masked CRC-32C of the data):

    >>> with tf.io.TFRecordWriter("data.tfrecord") as w:
    ...     w.write(example.SerializeToString())
    """

    def __init__(self, path: Any, options: Any = None) -> None:
        if isinstance(options, str):
            options = TFRecordOptions(options)
        self._compression = options.compression_type if options is not None else ""
        self._level = getattr(options, "compression_level", None)
        self._path = _p(path)
        self._f: Any = open(self._path, "wb")
        self._buf: list = []

    def write(self, record: Any) -> None:
        """Appends one record."""
        from tapeflow.ops.io_ops import _bytes, tfrecord_frame

        if self._f is None:
            raise ValueError("TFRecordWriter is closed.")
        data = _bytes(getattr(record, "_value", record))
        framed = tfrecord_frame(data)
        if self._compression:
            self._buf.append(framed)
        else:
            self._f.write(framed)

    def flush(self) -> None:
        if self._f is not None and not self._compression:
            self._f.flush()

    def close(self) -> None:
        """Writes what is buffered (compressed files are compressed as a whole) and closes the file."""
        import struct
        import zlib

        if self._f is None:
            return
        data = b"".join(self._buf)
        level = -1 if self._level is None else int(self._level)
        if self._compression == "GZIP":  # TF's header: no name, mtime 0, OS byte 3 (Unix)
            body = zlib.compressobj(level, zlib.DEFLATED, -15)
            deflated = body.compress(data) + body.flush()
            self._f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + deflated
                          + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF))
        elif self._compression == "ZLIB":
            self._f.write(zlib.compress(data, level))
        self._f.close()
        self._f = None

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class FixedLenFeature(tuple):
    """A dense feature of ``shape`` and ``dtype`` (``tf.string``, ``tf.float32`` or ``tf.int64``) for
    ``parse_example``; a missing key takes ``default_value`` (none: the feature is required)."""

    _tapeflow_kind = "fixed"
    __slots__ = ()

    def __new__(cls, shape: Any, dtype: Any, default_value: Any = None) -> FixedLenFeature:
        if not isinstance(shape, (list, tuple)):
            shape = shape.as_list() if hasattr(shape, "as_list") else [int(shape)]
        return tuple.__new__(cls, (shape, dtype, default_value))

    shape = property(lambda self: self[0])
    dtype = property(lambda self: self[1])
    default_value = property(lambda self: self[2])

    def __repr__(self) -> str:
        return f"FixedLenFeature(shape={self.shape}, dtype={self.dtype!r}, default_value={self.default_value!r})"


class VarLenFeature(tuple):
    """A variable-length feature: ``parse_example`` returns it as a ``tf.SparseTensor``."""

    _tapeflow_kind = "var"
    __slots__ = ()

    def __new__(cls, dtype: Any) -> VarLenFeature:
        return tuple.__new__(cls, (dtype,))

    dtype = property(lambda self: self[0])

    def __repr__(self) -> str:
        return f"VarLenFeature(dtype={self.dtype!r})"


class RaggedFeature(tuple):
    """A feature parsed as a ``tf.RaggedTensor`` (``[batch, None]``; one record: a dense vector). Nested
    ``partitions`` are not implemented."""

    _tapeflow_kind = "ragged"
    __slots__ = ()

    def __new__(cls, dtype: Any, value_key: str | None = None, partitions: Any = (), row_splits_dtype: Any = None,
                validate: bool = False) -> RaggedFeature:
        from tapeflow.framework import dtypes

        if partitions:
            raise NotImplementedError("tf.io.RaggedFeature with partitions (RowSplits, RowLengths, UniformRowLength "
                                      "...) is not implemented in tapeflow; only flat ragged features are")
        rs = dtypes.int32 if row_splits_dtype is None else dtypes.as_dtype(row_splits_dtype)
        return tuple.__new__(cls, (dtypes.as_dtype(dtype), value_key, tuple(partitions), rs, bool(validate)))

    dtype = property(lambda self: self[0])
    value_key = property(lambda self: self[1])
    partitions = property(lambda self: self[2])
    row_splits_dtype = property(lambda self: self[3])
    validate = property(lambda self: self[4])

    def __repr__(self) -> str:
        return (f"RaggedFeature(dtype={self.dtype!r}, value_key={self.value_key!r}, partitions={self.partitions!r}, "
                f"row_splits_dtype={self.row_splits_dtype!r}, validate={self.validate!r})")


def parse_example(serialized: Any, features: dict, example_names: Any = None, name: Any = None) -> dict:
    """Parses a vector of serialized ``tf.train.Example`` records into a dict (keys sorted, as TF) of
    dense tensors (``FixedLenFeature``, batch first) and ``tf.SparseTensor`` (``VarLenFeature``)."""
    from tapeflow.ops.io_ops import parse_example_op

    return parse_example_op(serialized, features, single=False)


def parse_single_example(serialized: Any, features: dict, example_names: Any = None, name: Any = None) -> dict:
    """``parse_example`` of one scalar serialized record (no batch dimension)."""
    from tapeflow.ops.io_ops import parse_example_op

    return parse_example_op(serialized, features, single=True)


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


def _gfile_join(path: Any, *paths: Any) -> str:
    """``tf.io.gfile.join``: ``os.path.join`` for local paths."""
    return _os.path.join(path, *paths)


def _registered_schemes() -> list:
    """The filesystem URL schemes tapeflow reads: local files only (``""`` and ``file``)."""
    return ["file", ""]


gfile = _Namespace(GFile=GFile, Open=GFile, join=_gfile_join, get_registered_schemes=_registered_schemes,
            exists=exists, isdir=isdir, makedirs=makedirs, mkdir=mkdir, listdir=listdir,
            glob=glob, remove=remove, rmtree=rmtree, rename=rename, copy=copy, stat=stat, walk=walk)
gfile.__doc__ = "``tf.io.gfile``: local-filesystem file functions with TF's names and errors."


def __getattr__(name: str):
    if name in ("FixedLenSequenceFeature", "SparseFeature", "parse_sequence_example",
                "parse_single_sequence_example", "decode_json_example", "decode_jxl",
                "decode_proto", "decode_webp", "deserialize_many_sparse", "encode_proto",
                "match_filenames_once", "serialize_many_sparse", "serialize_sparse", "write_graph"):
        raise NotImplementedError(f"tf.io.{name} is not implemented in tapeflow")
    raise AttributeError(f"module 'tapeflow.io' has no attribute '{name}'")
