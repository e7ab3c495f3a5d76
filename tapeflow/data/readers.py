"""File readers of ``tf.data``: ``TextLineDataset``, ``TFRecordDataset``, ``experimental.CsvDataset``,
``experimental.make_csv_dataset`` (no pandas) and ``Dataset.list_files``.

Files are read lazily, one after the other, each time the dataset is iterated;
``compression_type`` ``"GZIP"`` and ``"ZLIB"`` are read with the standard
library. Elements are scalar string tensors (lines, records) or tuples of
scalars (CSV records), as in TF.
"""

from __future__ import annotations

import collections
import csv
import glob as _glob
import gzip
import io
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from tapeflow.data.dataset import Dataset, _Failed, _spec_of
from tapeflow.framework import dtypes, errors

_OBJ = np.dtype(object)


def _filenames(filenames: Any, what: str) -> list[str]:
    from tapeflow.framework.tensor import Tensor

    if isinstance(filenames, Dataset):
        return [_as_str(f) for f in filenames._elements()]
    if isinstance(filenames, Tensor):
        filenames = filenames._value
    arr = np.asarray(filenames, dtype=object) if not isinstance(filenames, np.ndarray) else filenames
    if arr.ndim > 1:
        raise errors.InvalidArgumentError(f"`filenames` must be a scalar or a vector of strings ({what}), got shape "
                                          f"{arr.shape}.")
    names = [_as_str(f) for f in arr.reshape(-1)]
    if not names and what != "list_files":
        raise errors.InvalidArgumentError(f"{what}: `filenames` is empty.")
    return names


def _as_str(f: Any) -> str:
    f = getattr(f, "_value", f)
    f = f[()] if isinstance(f, np.ndarray) else f
    if isinstance(f, bytes):
        return f.decode("utf-8")
    if isinstance(f, (str,)) or hasattr(f, "__fspath__"):
        return str(f)
    raise TypeError(f"`filenames` must be strings, got {type(f).__name__}.")


def _open(path: str, compression: str | None) -> Any:
    try:
        raw = open(path, "rb")
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory [Op:IteratorGetNext]") from None
    except IsADirectoryError:
        raise errors.FailedPreconditionError(None, None, f"{path}; Is a directory [Op:IteratorGetNext]") from None
    c = (compression or "").upper()
    if c == "":
        return raw
    if c == "GZIP":
        return gzip.GzipFile(fileobj=raw)
    if c == "ZLIB":
        with raw:
            return io.BytesIO(zlib.decompress(raw.read()))
    raw.close()
    raise ValueError(f"Received unknown `compression_type` {compression}. Expected: GZIP, ZLIB or \"\" (empty string).")


class _RecordFileDataset(Dataset):
    """Scalar-string records of files read one after another, or interleaved ``num_parallel_reads`` at a
    time as TF does; a subclass says how one opened file splits into records (``_records``)."""

    def __init__(self, filenames: Any, compression_type: str | None = None, buffer_size: int | None = None,
                 num_parallel_reads: int | None = None, name: str | None = None) -> None:
        cls = type(self)
        self._files = _filenames(filenames, cls.__name__)
        self._compression = compression_type
        self._inner: Dataset | None = None
        if num_parallel_reads is not None:  # TF interleaves the files then
            self._inner = Dataset.from_tensor_slices(self._files).interleave(
                lambda f: cls(f, compression_type), cycle_length=int(num_parallel_reads))

    def _records(self, f: Any, path: str) -> Iterator:
        raise NotImplementedError

    def _elements(self) -> Iterator:
        if self._inner is not None:
            yield from self._inner._elements()
            return
        for path in self._files:
            with _open(path, self._compression) as f:
                for record in self._records(f, path):
                    yield np.asarray(record, dtype=_OBJ)

    @property
    def element_spec(self) -> Any:
        from tapeflow.framework.tensor_spec import TensorSpec

        return TensorSpec([], dtypes.string)


class TextLineDataset(_RecordFileDataset):
    """The lines of one or more text files (without their ``\\n`` / ``\\r\\n``), as scalar strings.

    >>> for line in tf.data.TextLineDataset(["a.txt", "b.txt"]).take(2):
    ...     print(line.numpy())
    """

    _tf_name = "TextLineDatasetV2"

    def _records(self, f: Any, path: str) -> Iterator:
        for line in f:
            if line.endswith(b"\n"):
                line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
            yield line


class TFRecordDataset(_RecordFileDataset):
    """The records of TFRecord files (``tf.io.TFRecordWriter``'s format, checksums verified) as scalar
    strings; parse ``tf.train.Example`` records with ``tf.io.parse_example``."""

    _tf_name = "TFRecordDatasetV2"

    def _records(self, f: Any, path: str) -> Iterator:
        from tapeflow.ops.io_ops import read_tfrecords

        return read_tfrecords(f, path)


class FixedLengthRecordDataset(_RecordFileDataset):
    """The fixed-length records of binary files as scalar strings (``record_bytes`` each, after
    ``header_bytes`` and before ``footer_bytes`` of each file), e.g. the CIFAR-10 binary batches; decode them with
    ``tf.io.decode_raw``. A file whose body is not a whole number of records raises TF's error when reached."""

    _tf_name = "FixedLengthRecordDatasetV2"

    def __init__(self, filenames: Any, record_bytes: int, header_bytes: int | None = None,
                 footer_bytes: int | None = None, buffer_size: int | None = None, compression_type: str | None = None,
                 num_parallel_reads: int | None = None, name: str | None = None) -> None:
        self._record_bytes = int(record_bytes)
        self._header = int(header_bytes or 0)
        self._footer = int(footer_bytes or 0)
        super().__init__(filenames, compression_type, buffer_size, None, name)
        if num_parallel_reads is not None:  # TF interleaves the files then
            sizes = (self._record_bytes, self._header, self._footer)
            self._inner = Dataset.from_tensor_slices(self._files).interleave(
                lambda f: FixedLengthRecordDataset(f, *sizes, compression_type=compression_type),
                cycle_length=int(num_parallel_reads))

    def _records(self, f: Any, path: str) -> Iterator:
        size = self._record_bytes
        if size <= 0:
            raise errors.InvalidArgumentError(None, None, "`record_bytes` must be > 0 [Op:IteratorGetNext]")
        data = f.read()
        body = len(data) - self._header - self._footer
        if body < 0 or body % size:
            kind = errors.DataLossError if self._compression else errors.InvalidArgumentError
            raise kind(None, None, f"Excluding the header ({self._header} bytes) and footer ({self._footer} bytes), "
                       f"input file \"{path}\" has body length {max(body, 0)} bytes, which is not an exact multiple "
                       f"of the record length ({size} bytes). [Op:IteratorGetNext]")
        for start in range(self._header, self._header + body, size):
            yield data[start:start + size]


# -- CSV ---------------------------------------------------------------------------
_CSV_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)


def _record_defaults(record_defaults: Any) -> list:
    """Each default as a 0- or 1-element array of its dtype (a bare dtype: a required column)."""
    from tapeflow.framework.tensor import Tensor, convert_to_tensor

    out = []
    for d in record_defaults:
        if isinstance(d, dtypes.DType) or (isinstance(d, type) and d in (float, int, str)):
            dt = dtypes.as_dtype(d) if isinstance(d, dtypes.DType) else \
                {float: dtypes.float32, int: dtypes.int32, str: dtypes.string}[d]
            out.append(np.zeros((0,), dtype=_OBJ if dt == dtypes.string else dt.as_numpy_dtype))
            continue
        t = d if isinstance(d, Tensor) else convert_to_tensor(d)
        if t.dtype not in _CSV_TYPES:
            raise TypeError(f"CsvDataset: record_defaults of dtype {t.dtype.name} are not supported "
                            "(float32, float64, int32, int64, string).")
        a = np.asarray(t._value).reshape(-1)
        if a.size > 1:
            raise ValueError(f"CsvDataset: a record default must be a scalar or have one element, got {a.size}.")
        out.append(a)
    return out


class CsvDataset(Dataset):
    """The records of CSV files as tuples of scalars, typed by ``record_defaults`` (a value is the default of
    a missing field; a dtype marks a required column), as ``tf.data.experimental.CsvDataset``."""

    _tf_name = "CsvDatasetV2"

    def __init__(self, filenames: Any, record_defaults: Any, compression_type: str | None = None,
                 buffer_size: int | None = None, header: bool = False, field_delim: str = ",",
                 use_quote_delim: bool = True, na_value: str = "", select_cols: Any = None,
                 exclude_cols: Any = None, name: str | None = None) -> None:
        self._files = _filenames(filenames, "CsvDataset")
        self._defaults = _record_defaults(record_defaults)
        self._compression, self._header = compression_type, bool(header)
        if len(field_delim) != 1:
            raise errors.InvalidArgumentError("field_delim should be only 1 char [Op:CSVDatasetV2]")
        self._delim, self._quote, self._na = field_delim, bool(use_quote_delim), na_value
        if select_cols is not None and exclude_cols is not None:
            raise ValueError("Either select_cols or exclude_cols should be empty")
        self._select = None if select_cols is None else [int(c) for c in select_cols]
        self._exclude = None if exclude_cols is None else [int(c) for c in exclude_cols]
        for cols, what in ((self._select, "select_cols"), (self._exclude, "exclude_cols")):
            if cols is not None and (cols != sorted(set(cols)) or any(c < 0 for c in cols)):
                raise errors.InvalidArgumentError(f"{what} should be increasing and non-negative "
                                                  "[Op:CSVDatasetV2]")
        if self._select is not None and len(self._select) != len(self._defaults):
            raise errors.InvalidArgumentError("Expected len(select_cols) == len(record_defaults) [Op:CSVDatasetV2]")

    def _rows(self) -> Iterator:
        opts: dict = {"delimiter": self._delim, "quotechar": '"', "doublequote": True, "strict": False}
        if not self._quote:
            opts = {"delimiter": self._delim, "quoting": csv.QUOTE_NONE}
        for path in self._files:
            with _open(path, self._compression) as f:
                text = io.TextIOWrapper(f, encoding="utf-8", newline="")
                reader = csv.reader(text, **opts)
                first = True
                for fields in reader:
                    if first and self._header:
                        first = False
                        continue
                    first = False
                    yield fields if fields else [""]

    def _record(self, fields: list) -> tuple:
        n = len(self._defaults)
        if self._select is not None:
            if len(fields) <= self._select[-1]:
                raise errors.InvalidArgumentError(
                    f"Expect {n} fields but have {len(fields)} in record [Op:IteratorGetNext]")
            fields = [fields[c] for c in self._select]
        elif self._exclude is not None:
            fields = [v for c, v in enumerate(fields) if c not in self._exclude]
        if len(fields) != n:
            raise errors.InvalidArgumentError(
                f"Expect {n} fields but have {len(fields)} in record [Op:IteratorGetNext]")
        return tuple(self._field(i, txt) for i, txt in enumerate(fields))

    def _elements(self) -> Iterator:
        return map(self._record, self._rows())

    def _elements_or_errors(self) -> Iterator:
        for fields in self._rows():  # a bad record fails alone, as TF's reader goes on to the next line
            try:
                yield self._record(fields)
            except errors.InvalidArgumentError as e:
                yield _Failed(e)

    def _field(self, i: int, txt: str) -> np.ndarray:
        from tapeflow.ops.io_ops import _csv_field

        d = self._defaults[i]
        if txt == "" or (self._na and txt == self._na):
            if d.size == 0:
                raise errors.InvalidArgumentError(f"Field {i} is required but missing in record! "
                                                  "[Op:IteratorGetNext]")
            return np.asarray(d[0], dtype=d.dtype)
        dt = dtypes.string if d.dtype == _OBJ else dtypes.as_dtype(d.dtype)
        try:
            return np.asarray(_csv_field(txt, dt, i, 0), dtype=d.dtype)
        except errors.InvalidArgumentError:
            raise errors.InvalidArgumentError(f"Field {i} in record is not a valid {dtypes.type_string(dt)}: {txt} "
                                              "[Op:IteratorGetNext]") from None

    def _template(self) -> Any:
        return tuple(np.zeros((), d.dtype) if d.dtype != _OBJ else np.asarray(b"", _OBJ) for d in self._defaults)

    @property
    def element_spec(self) -> Any:
        return _spec_of(self._template())


def _infer_type(txt: str, na_value: str, prev: Any) -> Any:
    """TF's make_csv_dataset inference: the least permissive of int32, int64, float32, float64, string."""
    if txt in ("", na_value):
        return prev
    order = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64, dtypes.string]

    def ok(i: int) -> bool:
        try:
            if i == 0:
                return np.int32(txt) == np.int64(txt)
            if i == 1:
                np.int64(txt)
                return True
            if i in (2, 3):
                return bool((np.float32 if i == 2 else np.float64)(txt) < np.inf)
        except (ValueError, OverflowError):
            return False
        return True

    for i, t in enumerate(order):
        if ok(i) and (prev is None or prev in order[:i + 1]):
            return t
    return dtypes.string


def make_csv_dataset(file_pattern: Any, batch_size: int, column_names: list | None = None,
                     column_defaults: list | None = None, label_name: str | None = None,
                     select_columns: list | None = None, field_delim: str = ",", use_quote_delim: bool = True,
                     na_value: str = "", header: bool = True, num_epochs: int | None = None, shuffle: bool = True,
                     shuffle_buffer_size: int = 10000, shuffle_seed: int | None = None,
                     prefetch_buffer_size: int | None = None, num_parallel_reads: int | None = None,
                     sloppy: bool = False, num_rows_for_inference: int = 100, compression_type: str | None = None,
                     ignore_errors: bool = False, encoding: str = "utf-8") -> Dataset:
    """Batches of ``(OrderedDict of columns, label)`` (or just the dict without ``label_name``) read from CSV
    files, column names from the header and types inferred from the first rows unless given, as
    ``tf.data.experimental.make_csv_dataset``; repeats forever unless ``num_epochs`` (then the last batch may
    be short)."""
    if isinstance(file_pattern, (str, bytes)) or not isinstance(file_pattern, (list, tuple)):
        patterns = [_as_str(file_pattern)]
    else:
        patterns = [_as_str(p) for p in file_pattern]
    files: list[str] = []
    for p in patterns:
        hits = sorted(_glob.glob(p))
        if not hits:
            raise ValueError(f"No files match `file_pattern` {p}.")
        files.extend(hits)

    def rows(path: str) -> Iterator:
        with _open(path, compression_type) as f:
            text = io.TextIOWrapper(f, encoding=encoding, newline="")
            yield from csv.reader(text, delimiter=field_delim,
                                  quoting=csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE)

    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header` arguments. Neither is provided.")
        column_names = next(rows(files[0]), None)
        if column_names is None:
            raise ValueError(f"Failed when reading the header line of {files[0]}. Is it an empty file?")
        for other in files[1:]:
            if next(rows(other), None) != column_names:
                raise ValueError("All input CSV files should have the same column names in the header row. File "
                                 f"{other} has different column names.")
    column_names = list(column_names)
    if len(column_names) != len(set(column_names)):
        dup = {a for a, b in zip(sorted(column_names)[:-1], sorted(column_names)[1:]) if a == b}
        raise ValueError(f"Either `column_names` argument or CSV header row contains duplicate column names: {dup}.")
    select = None
    if select_columns is not None:
        index = {n: i for i, n in enumerate(column_names)}
        select = []
        for v in select_columns:
            if isinstance(v, int):
                if not 0 <= v < len(column_names):
                    raise ValueError(f"Column index {v} specified in `select_columns` should be > 0  and <= "
                                     f"{len(column_names)}, which is the number of columns.")
                select.append(v)
            elif v not in index:
                raise ValueError(f"Column {v} specified in `select_columns` must be of one of the columns: "
                                 f"{index.keys()}.")
            else:
                select.append(index[v])
        select = sorted(set(select))
        if len(select) != len(select_columns):
            raise ValueError("The `select_columns` argument contains duplicate columns.")
    if column_defaults is not None:
        defaults = [d if isinstance(d, dtypes.DType) or not _is_type(d) else dtypes.as_dtype(d)
                    for d in column_defaults]
    else:
        cols = select if select is not None else list(range(len(column_names)))
        inferred: list = [None] * len(cols)
        seen = 0
        for path in files:
            it = rows(path)
            if header:
                next(it, None)
            for r, row in enumerate(it, start=2 if header else 1):
                if num_rows_for_inference is not None and seen >= num_rows_for_inference:
                    break
                if len(row) != len(column_names):
                    raise ValueError(f"Problem inferring types: CSV row {r} has {len(row)} number of fields. "
                                     f"Expected: {len(column_names)}.")
                for j, c in enumerate(cols):
                    inferred[j] = _infer_type(row[c], na_value, inferred[j])
                seen += 1
        defaults = [np.asarray([b"" if (t or dtypes.string) == dtypes.string else 0],
                               dtype=_OBJ if (t or dtypes.string) == dtypes.string else t.as_numpy_dtype)
                    for t in inferred]
    if select is not None and len(defaults) != len(select):
        raise ValueError("If specified, `column_defaults` and `select_columns` must have the same length: "
                         f"`column_defaults` has length {len(defaults)}, `select_columns` has length {len(select)}.")
    if select is not None and len(column_names) > len(select):
        column_names = [column_names[i] for i in select]
    if label_name is not None and label_name not in column_names:
        raise ValueError(f"`label_name` provided must be one of the columns: {column_names}. Received: {label_name}.")

    ds = Dataset.from_tensor_slices(files)
    if shuffle:
        ds = ds.shuffle(len(files), shuffle_seed)
    ds = ds.interleave(lambda f: CsvDataset(f, defaults, compression_type=compression_type, header=header,
                                            field_delim=field_delim, use_quote_delim=use_quote_delim,
                                            na_value=na_value, select_cols=select),
                       cycle_length=1 if num_parallel_reads is None else int(num_parallel_reads))
    if ignore_errors:
        ds = ds.ignore_errors()
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    ds = ds.batch(batch_size, drop_remainder=num_epochs is None)

    def to_features(*columns: Any) -> Any:
        features = collections.OrderedDict(zip(column_names, columns))
        if label_name is not None:
            label = features.pop(label_name)
            return features, label
        return features

    return ds.map(to_features).prefetch(-1)


def _is_type(d: Any) -> bool:
    return isinstance(d, type) and d in (float, int, str)


def list_files(file_pattern: Any, shuffle: bool | None = None, seed: int | None = None) -> Dataset:
    patterns = _filenames(file_pattern, "list_files")
    matches = sorted({m for p in patterns for m in _glob.glob(p)})
    if not matches:
        raise errors.InvalidArgumentError(
            "Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: "
            f"b'No files matched pattern: {', '.join(patterns)}'")
    ds = Dataset.from_tensor_slices(np.asarray([m.encode() for m in matches], dtype=_OBJ))
    if shuffle is None or shuffle:
        ds = ds.shuffle(len(matches), seed=seed)
    return ds
