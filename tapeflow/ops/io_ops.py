"""File and serialization ops (``tf.io``): ReadFile, WriteFile, SerializeTensor, ParseTensor, DecodeCSV.

``serialize_tensor`` writes tapeflow's own compact format (not TF's TensorProto):
``b"TFLT"``, the dtype name, the rank and dims, then the raw little-endian data
(strings: int64 lengths then the bytes). ``parse_tensor`` restores dtype and
shape exactly. All four ops are ``NotDifferentiable``; the file ops are
stateful, so they run at every call of a ``tf.function``.
"""

from __future__ import annotations

import csv
import os
import re
import struct
from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError, NotFoundError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops.registry import NotDifferentiable, defop

_OBJ = np.dtype(object)
_MAGIC = b"TFLT"


def _bytes(a: Any) -> bytes:
    v = np.asarray(a)[()]
    return v.encode("utf-8") if isinstance(v, str) else bytes(v)


def _path(a: Any) -> str:
    return _bytes(a).decode("utf-8")


def _read_kernel(filename):
    path = _path(filename)
    try:
        with open(path, "rb") as f:
            return np.asarray(f.read(), dtype=_OBJ)
    except FileNotFoundError:
        raise NotFoundError(None, None, f"{path}; No such file or directory [Op:ReadFile]") from None
    except IsADirectoryError:
        raise InvalidArgumentError(None, None, f"{path} is a directory [Op:ReadFile]") from None


def _write_kernel(filename, contents):
    path = _path(filename)
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)  # TF creates missing parent directories
    with open(path, "wb") as f:
        f.write(_bytes(contents))
    return ()


READ_FILE = defop("ReadFile", _read_kernel, shape=lambda specs: [((), _OBJ)])
READ_FILE.extra["stateful"] = True
NotDifferentiable("ReadFile")
WRITE_FILE = defop("WriteFile", _write_kernel, shape=lambda specs: [], num_outputs=0)
WRITE_FILE.extra["stateful"] = True
NotDifferentiable("WriteFile")


def read_file(filename: Any, name: Any = None) -> Tensor:
    """``tf.io.read_file``: a file's bytes as a scalar string tensor (``NotFoundError`` if missing)."""
    return execute(READ_FILE, (convert_to_tensor(filename, dtype=dtypes.string),))


def write_file(filename: Any, contents: Any, name: Any = None) -> None:
    """``tf.io.write_file``: writes a scalar string to ``filename`` (creating parent directories)."""
    execute(WRITE_FILE, (convert_to_tensor(filename, dtype=dtypes.string),
                         convert_to_tensor(contents, dtype=dtypes.string)))


def _serialize_kernel(a):
    a = np.asarray(a)
    name = dtypes.as_dtype(a.dtype).name.encode()
    head = _MAGIC + struct.pack("<B", len(name)) + name + struct.pack(f"<B{a.ndim}q", a.ndim, *a.shape)
    if a.dtype == _OBJ:
        items = [x.encode("utf-8") if isinstance(x, str) else bytes(x) for x in a.reshape(-1)]
        body = np.asarray([len(x) for x in items], dtype="<i8").tobytes() + b"".join(items)
    else:
        body = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
    return np.asarray(head + body, dtype=_OBJ)


def _parse_kernel(data, out_type):
    raw = _bytes(data)
    try:
        if raw[:4] != _MAGIC:
            raise ValueError
        n = raw[4]
        dt = dtypes.as_dtype(raw[5:5 + n].decode())
        pos = 5 + n
        rank = raw[pos]
        shape = struct.unpack_from(f"<{rank}q", raw, pos + 1)
        pos += 1 + 8 * rank
    except (ValueError, IndexError, TypeError, struct.error):
        raise InvalidArgumentError(None, None, "Could not parse `serialized` as TensorProto: the bytes were not "
                                   "written by tf.io.serialize_tensor [Op:ParseTensor]") from None
    if dt != out_type:
        tf_name = {"float32": "float", "float64": "double"}  # TF's DataTypeString
        raise InvalidArgumentError(None, None, f"Type mismatch between parsed tensor ({tf_name.get(dt.name, dt.name)}) "
                                   f"and dtype ({out_type.name}) [Op:ParseTensor]")
    count = int(np.prod(shape, dtype=np.int64))
    if dt == dtypes.string:
        lens = np.frombuffer(raw, dtype="<i8", count=count, offset=pos)
        pos += 8 * count
        out = np.empty(count, dtype=_OBJ)
        for i, ln in enumerate(lens):
            out[i] = raw[pos:pos + int(ln)]
            pos += int(ln)
        return out.reshape(shape)
    np_dt = np.dtype(dt._np)
    return np.frombuffer(raw, dtype=np_dt.newbyteorder("<"), count=count, offset=pos).astype(np_dt).reshape(shape)


SERIALIZE_TENSOR = defop("SerializeTensor", _serialize_kernel, shape=lambda specs: [((), _OBJ)])
NotDifferentiable("SerializeTensor")
PARSE_TENSOR = defop("ParseTensor", _parse_kernel, shape=lambda specs, out_type: [(None, np.dtype(out_type._np))])
NotDifferentiable("ParseTensor")


def serialize_tensor(tensor: Any, name: Any = None) -> Tensor:
    """``tf.io.serialize_tensor``: a scalar string holding the tensor (tapeflow's format, see the module doc)."""
    return execute(SERIALIZE_TENSOR, (convert_to_tensor(tensor),))


def parse_tensor(serialized: Any, out_type: Any, name: Any = None) -> Tensor:
    """``tf.io.parse_tensor``: the tensor ``serialize_tensor`` wrote; ``out_type`` must be its dtype."""
    return execute(PARSE_TENSOR, (convert_to_tensor(serialized, dtype=dtypes.string),),
                   {"out_type": dtypes.as_dtype(out_type)})


# -- decode_csv --------------------------------------------------------------------

_TF_TYPE_NAMES = {"float32": "float", "float64": "double"}


def _csv_field(txt: str, dt: Any, col: int, rec: int) -> Any:
    if dt == dtypes.string:
        return txt.encode("utf-8")
    try:
        if dt.is_integer:
            if not re.fullmatch(r"\s*[+-]?\d+\s*", txt):
                raise ValueError
            v = int(txt)
            info = np.iinfo(dt._np)
            if not info.min <= v <= info.max:
                raise ValueError
            return v
        t = txt.strip()
        if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|infinity|nan)", t, re.IGNORECASE):
            raise ValueError
        return float(t)
    except ValueError:
        raise InvalidArgumentError(None, None, f"Field {col} in record {rec} is not a valid "
                                   f"{_TF_TYPE_NAMES.get(dt.name, dt.name)}: {txt} [Op:DecodeCSV]") from None


def _decode_csv_kernel(records, *defaults, out_types, field_delim, use_quote_delim, na_value, select_cols):
    records = np.asarray(records)
    flat = records.reshape(-1)
    cols = [np.empty(flat.size, dtype=_OBJ if t == dtypes.string else t._np) for t in out_types]
    opts = {"delimiter": field_delim, "quotechar": '"', "doublequote": True, "strict": False}
    if not use_quote_delim:
        opts = {"delimiter": field_delim, "quoting": csv.QUOTE_NONE}
    for r, rec in enumerate(flat):
        line = rec.decode("utf-8") if isinstance(rec, bytes) else str(rec)
        fields = next(csv.reader([line], **opts), [""])
        if select_cols is None:
            if len(fields) != len(out_types):
                raise InvalidArgumentError(None, None, f"Expect {len(out_types)} fields but have {len(fields)} in "
                                           f"record {r} [Op:DecodeCSV]")
            picked = fields
        else:
            if len(fields) <= max(select_cols):
                raise InvalidArgumentError(None, None, f"Expect {max(select_cols) + 1} fields but have {len(fields)} "
                                           f"in record {r} [Op:DecodeCSV]")
            picked = [fields[c] for c in select_cols]
        for i, (txt, dt, dflt) in enumerate(zip(picked, out_types, defaults)):
            if txt == "" or (na_value and txt == na_value):
                d = np.asarray(dflt).reshape(-1)
                if d.size == 0:
                    raise InvalidArgumentError(None, None, f"Field {i} is required but missing in record {r}! "
                                               "[Op:DecodeCSV]")
                cols[i][r] = d[0]
            else:
                cols[i][r] = _csv_field(txt, dt, i, r)
    return tuple(c.reshape(records.shape) for c in cols)


DECODE_CSV = defop("DecodeCSV", _decode_csv_kernel, shape=lambda specs, out_types, **attrs: [
    (specs[0][0], _OBJ if t == dtypes.string else np.dtype(t._np)) for t in out_types],
    num_outputs=lambda attrs: len(attrs["out_types"]))
NotDifferentiable("DecodeCSV")


def decode_csv(records: Any, record_defaults: Any, field_delim: str = ",", use_quote_delim: bool = True,
               na_value: str = "", select_cols: Any = None, name: Any = None) -> list:
    """``tf.io.decode_csv``: one tensor per column, typed by ``record_defaults`` (``[]`` marks a required column)."""
    recs = convert_to_tensor(records, dtype=dtypes.string)
    defaults = []
    for d in record_defaults:
        t = d if isinstance(d, Tensor) else convert_to_tensor(d)
        if isinstance(d, (list, tuple)) and len(d) == 0:
            raise ValueError("tf.io.decode_csv: an empty record default needs a dtype, e.g. tf.constant([], tf.int32)")
        if t.dtype not in (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string):
            raise TypeError(f"tf.io.decode_csv: record_defaults of dtype {t.dtype.name} are not supported "
                            "(float32, float64, int32, int64, string)")
        defaults.append(t)
    if select_cols is not None:
        select_cols = [int(c) for c in select_cols]
        if select_cols != sorted(set(select_cols)):
            raise ValueError("select_cols is not strictly increasing.")
        if len(select_cols) != len(defaults):
            raise ValueError("Length of select_cols and record_defaults do not match.")
    if len(field_delim) != 1:
        raise InvalidArgumentError(None, None, "field_delim should be only 1 char [Op:DecodeCSV]")
    out = execute(DECODE_CSV, (recs, *defaults), {
        "out_types": [t.dtype for t in defaults], "field_delim": field_delim, "use_quote_delim": bool(use_quote_delim),
        "na_value": na_value, "select_cols": select_cols})
    return out if isinstance(out, list) else [out]
