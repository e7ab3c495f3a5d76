"""File and serialization ops (``tf.io``): ReadFile, WriteFile, SerializeTensor, ParseTensor, DecodeCSV.

``serialize_tensor`` writes TF's ``TensorProto`` bytes (``framework/tensor_proto.py``), which
``parse_tensor`` (and TF's) reads back with dtype and shape exact. All four ops are
``NotDifferentiable``; the file ops are stateful, so they run at every call of a ``tf.function``.
"""

from __future__ import annotations

import base64
import csv
import os
import re
import struct
from typing import Any

import numpy as np

from tapeflow.framework import dtypes, tensor_proto
from tapeflow.framework.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops.registry import NotDifferentiable, defop

_OBJ = np.dtype(object)


def _bytes(a: Any) -> bytes:
    v = a if isinstance(a, (bytes, str)) else np.asarray(a)[()]  # (np.asarray(bytes) would drop trailing NULs)
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
        raise FailedPreconditionError(None, None, f"{path}; Is a directory [Op:ReadFile]") from None


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
    return np.asarray(tensor_proto.serialize(a), dtype=_OBJ)


def _parse_kernel(data, out_type):
    raw = _bytes(data)
    try:
        value = tensor_proto.parse(raw)
    except (ValueError, IndexError, KeyError, struct.error):
        raise InvalidArgumentError(None, None, "Could not parse `serialized` as TensorProto, base64: "
                                   f"{base64.b64encode(raw).decode()} [Op:ParseTensor]") from None
    dt = dtypes.as_dtype(value.dtype)
    if dt != out_type:
        raise InvalidArgumentError(None, None, f"Type mismatch between parsed tensor ({dtypes.type_string(dt)}) "
                                   f"and dtype ({dtypes.type_string(out_type)}) [Op:ParseTensor]")
    return value


SERIALIZE_TENSOR = defop("SerializeTensor", _serialize_kernel, shape=lambda specs: [((), _OBJ)])
NotDifferentiable("SerializeTensor")
PARSE_TENSOR = defop("ParseTensor", _parse_kernel, shape=lambda specs, out_type: [(None, np.dtype(out_type._np))])
NotDifferentiable("ParseTensor")


def serialize_tensor(tensor: Any, name: Any = None) -> Tensor:
    """``tf.io.serialize_tensor``: a scalar string holding the tensor as TF's ``TensorProto`` bytes."""
    return execute(SERIALIZE_TENSOR, (convert_to_tensor(tensor),))


def parse_tensor(serialized: Any, out_type: Any, name: Any = None) -> Tensor:
    """``tf.io.parse_tensor``: the tensor ``serialize_tensor`` wrote; ``out_type`` must be its dtype."""
    return execute(PARSE_TENSOR, (convert_to_tensor(serialized, dtype=dtypes.string),),
                   {"out_type": dtypes.as_dtype(out_type)})


# -- decode_csv --------------------------------------------------------------------

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
                                   f"{dtypes.type_string(dt)}: {txt} [Op:DecodeCSV]") from None


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


# -- DecodeRaw / DecodePaddedRaw ---------------------------------------------------------

_RAW_TYPES = ("float16", "float32", "float64", "int32", "uint16", "uint8", "int16", "int8", "int64", "complex64",
              "complex128", "bool", "bfloat16")


def _raw_dtype(out_type: Any, little_endian: bool) -> np.dtype:
    dt = np.dtype(out_type._np)
    return dt.newbyteorder("<" if little_endian else ">") if dt.itemsize > 1 and dt.kind != "V" else dt


def _decode_raw_kernel(data, out_type, little_endian):
    dt = _raw_dtype(out_type, little_endian)
    flat = [_bytes(b) for b in np.asarray(data, dtype=_OBJ).reshape(-1)]
    width = len(flat[0]) if flat else 0
    for i, b in enumerate(flat):
        if len(b) != width:
            raise InvalidArgumentError(None, None, "DecodeRaw requires input strings to all be the same size, but "
                                       f"element {i} has size {width} != {len(b)} [Op:DecodeRaw]")
    if width % dt.itemsize:
        raise InvalidArgumentError(None, None, f"Input to DecodeRaw has length {width} that is not a multiple of "
                                   f"{dt.itemsize}, the size of {dtypes.type_string(out_type)} "
                                   "[Op:DecodeRaw]")
    out = np.frombuffer(b"".join(flat), dtype=dt).astype(np.dtype(out_type._np))
    return out.reshape(np.shape(data) + (width // dt.itemsize,))


def _decode_padded_raw_kernel(data, fixed_length, out_type, little_endian):
    dt = _raw_dtype(out_type, little_endian)
    n = int(np.asarray(fixed_length))
    if n % dt.itemsize:
        raise InvalidArgumentError(None, None, f"fixed_length ({n}) must be a multiple of the size of out_type "
                                   f"({dt.itemsize}) [Op:DecodePaddedRaw]")
    flat = [_bytes(b)[:n].ljust(n, b"\0") for b in np.asarray(data, dtype=_OBJ).reshape(-1)]
    out = np.frombuffer(b"".join(flat), dtype=dt).astype(np.dtype(out_type._np))
    return out.reshape(np.shape(data) + (n // dt.itemsize,))


def _decode_raw_shape(specs, out_type, little_endian, fixed_length=None):
    shape, _ = specs[0]
    last = None if fixed_length is None else fixed_length // np.dtype(out_type._np).itemsize
    return [(None if shape is None else tuple(shape) + (last,), np.dtype(out_type._np))]


DECODE_RAW = defop("DecodeRaw", _decode_raw_kernel, shape=_decode_raw_shape)
NotDifferentiable("DecodeRaw")
DECODE_PADDED_RAW = defop(
    "DecodePaddedRaw", _decode_padded_raw_kernel,
    shape=lambda specs, out_type, little_endian: _decode_raw_shape(specs, out_type, little_endian, None))
NotDifferentiable("DecodePaddedRaw")


def decode_raw(input_bytes: Any, out_type: Any, little_endian: bool = True, fixed_length: Any = None,
               name: Any = None) -> Tensor:
    """``tf.io.decode_raw``: the bytes of each string reinterpreted as ``out_type`` numbers (a new last axis).

    Every string must have the same length unless ``fixed_length`` is given (then each is cut or zero-padded
    to that many bytes, as TF's ``DecodePaddedRaw``).
    """
    out_type = dtypes.as_dtype(out_type)
    if out_type.name not in _RAW_TYPES:
        allowed = ", ".join(dtypes.type_string(t) for t in _RAW_TYPES)
        raise InvalidArgumentError(None, None, f"Value for attr 'out_type' of {out_type.name} is not in the list of "
                                   f"allowed values: {allowed} [Op:DecodeRaw]")
    t = input_bytes if isinstance(input_bytes, Tensor) else convert_to_tensor(input_bytes, dtype=dtypes.string)
    if t.dtype != dtypes.string:
        op = "DecodeRaw" if fixed_length is None else "DecodePaddedRaw"
        raise InvalidArgumentError(None, None, f"cannot compute {op} as input #0(zero-based) was expected to be a "
                                   f"string tensor but is a {dtypes.type_string(t.dtype)} tensor "
                                   f"[Op:{op}]")
    attrs = {"out_type": out_type, "little_endian": bool(little_endian)}
    if fixed_length is None:
        return execute(DECODE_RAW, (t,), attrs)
    return execute(DECODE_PADDED_RAW, (t, convert_to_tensor(fixed_length, dtype=dtypes.int32)), attrs)


# -- TFRecord framing ----------------------------------------------------------------
# A record is: uint64 length, uint32 masked crc32c(length), data, uint32 masked crc32c(data) (little-endian).

def _crc32c_table() -> list:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), as TFRecord files use."""
    c = 0xFFFFFFFF
    t = _CRC_TABLE
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord_frame(record: bytes) -> bytes:
    """One record framed as in a TFRecord file."""
    head = struct.pack("<Q", len(record))
    return head + struct.pack("<I", masked_crc32c(head)) + record + struct.pack("<I", masked_crc32c(record))


def read_tfrecords(f: Any, path: str, check_data_crc: bool = True) -> Any:
    """The records of an open TFRecord file (``DataLossError`` on a truncated or corrupted one)."""
    from tapeflow.framework.errors import DataLossError

    while True:
        head = f.read(12)
        if not head:
            return
        if len(head) < 12:
            raise DataLossError(None, None, f"truncated record at the end of {path} [Op:IteratorGetNext]")
        (n,), (crc,) = struct.unpack("<Q", head[:8]), struct.unpack("<I", head[8:])
        if masked_crc32c(head[:8]) != crc:
            raise DataLossError(None, None, f"corrupted record at the start of a record in {path} "
                                "[Op:IteratorGetNext]")
        data = f.read(n)
        tail = f.read(4)
        if len(data) < n or len(tail) < 4:
            raise DataLossError(None, None, f"truncated record in {path} [Op:IteratorGetNext]")
        if check_data_crc and masked_crc32c(data) != struct.unpack("<I", tail)[0]:
            raise DataLossError(None, None, f"corrupted record (data checksum) in {path} [Op:IteratorGetNext]")
        yield data


# -- tf.train.Example wire format (read without the protobuf package) ---------------------

# the protobuf wire readers are TensorProto's (framework/tensor_proto.py)
_varint, _fields = tensor_proto.read_varint, tensor_proto.fields


def _feature_values(buf: bytes) -> tuple:
    """A Feature's kind ('bytes', 'float', 'int64' or None) and its values."""
    kind, values = None, []
    for num, _, body in _fields(buf):
        kind = {1: "bytes", 2: "float", 3: "int64"}.get(num, kind)
        values = []
        for n, wt, v in _fields(body):
            if n != 1:
                continue
            if kind == "bytes":
                values.append(bytes(v))
            elif kind == "float":
                values.extend(struct.unpack(f"<{len(v) // 4}f", v) if wt == 2 else struct.unpack("<f", v))
            elif wt == 2:
                p = 0
                while p < len(v):
                    x, p = _varint(v, p)
                    values.append(x - (1 << 64) if x >= 1 << 63 else x)
            else:
                values.append(v - (1 << 64) if v >= 1 << 63 else v)
    return kind, values


def parse_example_features(serialized: bytes) -> dict:
    """``{key: (kind, values)}`` of a serialized ``tf.train.Example``."""
    out: dict = {}
    for num, _, features in _fields(serialized):
        if num != 1:
            continue
        for n, _, entry in _fields(features):
            if n != 1:
                continue
            key, value = "", b""
            for k, _, v in _fields(entry):
                if k == 1:
                    key = bytes(v).decode("utf-8")
                elif k == 2:
                    value = v
            out[key] = _feature_values(value)  # (a repeated key: the last wins, as protobuf maps)
    return out


_KIND = {"string": "bytes", "float32": "float", "int64": "int64"}
_TF_KIND = {"bytes": "string", "float": "float", "int64": "int64"}


def _parse_example_kernel(serialized, *defaults, keys, kinds, dtypes_, shapes, single):
    records = np.asarray(serialized).reshape(-1)
    parsed = []
    for r in records:
        try:
            parsed.append(parse_example_features(_bytes(r)))
        except (ValueError, IndexError, struct.error):
            raise InvalidArgumentError(None, None, "Could not parse example input, value: "
                                       f"'{_bytes(r)[:40]!r}' [Op:ParseExampleV2]") from None
    outs: list = []
    for key, kind, dt, shape, default in zip(keys, kinds, dtypes_, shapes, defaults):
        np_dt = _OBJ if dt == dtypes.string else np.dtype(dt._np)
        want = _KIND[dt.name]
        if kind in ("var", "ragged"):
            idx, vals = [], []
            longest = 0
            for b, feats in enumerate(parsed):
                got = feats.get(key)
                if got is None or got[0] is None:
                    continue
                if got[0] != want:
                    raise InvalidArgumentError(None, None, f"Key: {key}.  Data types don't match. Data type: "
                                               f"{_TF_KIND[got[0]]} but expected type: {dt.name} [Op:ParseExampleV2]")
                longest = max(longest, len(got[1]))
                idx.extend([b, j] for j in range(len(got[1])))
                vals.extend(got[1])
            ind = np.asarray(idx, np.int64).reshape(-1, 2)
            v = np.asarray(vals, dtype=np_dt) if vals else np.zeros((0,), np_dt)
            if kind == "ragged":
                counts = np.bincount(ind[:, 0], minlength=len(parsed)) if len(ind) else np.zeros(len(parsed), int)
                outs.extend([v] if single else [v, np.concatenate([[0], np.cumsum(counts)]).astype(shape)])
                continue
            dense_shape = np.asarray([len(parsed), longest], np.int64)
            if single:
                ind, dense_shape = ind[:, 1:], dense_shape[1:]
            outs.extend([ind, v, dense_shape])
            continue
        count = int(np.prod(shape, dtype=np.int64))
        rows = []
        for feats in parsed:
            got = feats.get(key)
            if got is None or (got[0] is None and count):
                d = np.asarray(default)
                if d.size == 0:
                    raise InvalidArgumentError(None, None, f"Feature: {key} (data type: {dt.name}) is required but "
                                               "could not be found. [Op:ParseExampleV2]")
                rows.append(np.broadcast_to(d.astype(np_dt), shape))
                continue
            if got[0] is not None and got[0] != want:
                raise InvalidArgumentError(None, None, f"Key: {key}.  Data types don't match. Data type: "
                                           f"{_TF_KIND[got[0]]} but expected type: {dt.name} [Op:ParseExampleV2]")
            if len(got[1]) != count:
                raise InvalidArgumentError(None, None, f"Key: {key}.  Can't parse serialized Example: Some "
                                           f"{got[0]}_list slice was not parsed. [Op:ParseExampleV2]")
            rows.append(np.asarray(got[1], dtype=np_dt).reshape(shape))
        out = np.stack(rows) if rows else np.zeros((0, *shape), np_dt)
        outs.append(out[0] if single else out)
    return tuple(outs)


def _parse_example_shape(specs, keys, kinds, dtypes_, shapes, single):
    in_shape = specs[0][0]
    batch = () if single else ((in_shape[0] if in_shape else None),)
    out = []
    for kind, dt, shape in zip(kinds, dtypes_, shapes):
        np_dt = _OBJ if dt == dtypes.string else np.dtype(dt._np)
        rank = 1 if single else 2
        if kind == "var":
            out += [((None, rank), np.dtype(np.int64)), ((None,), np_dt), ((rank,), np.dtype(np.int64))]
        elif kind == "ragged":
            out.append(((None,), np_dt))
            if not single:
                out.append((((batch[0] + 1) if batch[0] is not None else None,), np.dtype(shape)))
        else:
            out.append((tuple(batch) + tuple(shape), np_dt))
    return out


PARSE_EXAMPLE = defop("ParseExampleV2", _parse_example_kernel, shape=_parse_example_shape,
                      num_outputs=lambda attrs: sum(3 if k == "var" else 1 if k == "fixed" or attrs["single"] else 2
                                                    for k in attrs["kinds"]))
NotDifferentiable("ParseExampleV2")


def parse_example_op(serialized: Any, features: dict, single: bool) -> dict:
    """``tf.io.parse_example`` / ``parse_single_example`` over ``FixedLenFeature``/``VarLenFeature`` specs."""
    from tapeflow.framework.sparse_tensor import SparseTensor

    from tapeflow.framework.context import state

    if state.graph is None and not isinstance(serialized, (str, bytes)):  # eager: TF converts, then checks dtype
        t = serialized if isinstance(serialized, Tensor) else convert_to_tensor(serialized)
        if t.dtype != dtypes.string:
            raise ValueError(f"Tensor conversion requested dtype string for Tensor with dtype {t.dtype.name}: {t!r}")
    if isinstance(serialized, Tensor) and serialized.dtype != dtypes.string:
        raise TypeError(f"Input 'serialized' of 'ParseExampleV2' Op has type {serialized.dtype.name} that does not "
                        "match expected type of string.")
    ser = convert_to_tensor(serialized, dtype=dtypes.string)
    rank = len(ser._shape_tuple()) if ser._shape_tuple() is not None else None
    if single and rank not in (0, None):
        raise ValueError(f"parse_single_example: `serialized` must be a scalar string, got shape {ser.shape}.")
    if not single and rank not in (1, None):
        raise ValueError(f"parse_example: `serialized` must be a vector of strings, got shape {ser.shape}; use "
                         "tf.io.parse_single_example for one record.")
    keys = sorted(features)
    kinds, dts, shapes, defaults = [], [], [], []
    names = []  # the Example key each output reads (a RaggedFeature's value_key)
    for k in keys:
        spec = features[k]
        names.append(getattr(spec, "value_key", None) or k)
        kind = getattr(spec, "_tapeflow_kind", None)
        if kind is None:
            raise NotImplementedError(f"tf.io.parse_example: feature spec {type(spec).__name__} for key {k!r} is not "
                                      "supported (FixedLenFeature, VarLenFeature and RaggedFeature are).")
        dt = dtypes.as_dtype(spec.dtype)
        if dt.name not in _KIND:
            raise ValueError(f"Unsupported dtype {dt.name} for feature {k!r}: tf.train.Example holds only "
                             "tf.string, tf.float32 and tf.int64.")
        kinds.append(kind)
        dts.append(dt)
        shape = tuple(int(d) for d in (spec.shape if kind == "fixed" else ()))
        shapes.append(spec.row_splits_dtype.name if kind == "ragged" else shape)  # a ragged output's splits dtype
        d = getattr(spec, "default_value", None)
        np_dt = _OBJ if dt == dtypes.string else np.dtype(dt._np)
        defaults.append(convert_to_tensor(np.zeros((0,), np_dt) if d is None else np.asarray(
            d.encode() if isinstance(d, str) else d, dtype=np_dt)))
    outs = execute(PARSE_EXAMPLE, (ser, *defaults), {"keys": names, "kinds": kinds, "dtypes_": dts,
                                                     "shapes": shapes, "single": bool(single)})
    outs = iter(outs if isinstance(outs, (list, tuple)) else [outs])
    result = {}
    for k, kind in zip(keys, kinds):
        if kind == "var":
            ind, vals, shape = next(outs), next(outs), next(outs)
            result[k] = SparseTensor(ind, vals, shape)
        elif kind == "ragged":
            from tapeflow.ops.ragged.ragged_tensor import RaggedTensor

            vals = next(outs)
            result[k] = vals if single else RaggedTensor.from_row_splits(vals, next(outs), validate=False)
        else:
            result[k] = next(outs)
    return result


# -- base64, DecodeCompressed, IsJpeg, MatchingFiles -----------------------------------------------------------

_B64 = re.compile(rb"^[A-Za-z0-9_-]*={0,2}$")


def _b64_encode_kernel(a, pad):
    out = np.empty(np.shape(a), dtype=_OBJ)
    for i, v in np.ndenumerate(np.asarray(a, dtype=_OBJ)):
        e = base64.urlsafe_b64encode(v if isinstance(v, bytes) else str(v).encode())
        out[i] = e if pad else e.rstrip(b"=")
    return out


def _b64_decode_kernel(a):
    out = np.empty(np.shape(a), dtype=_OBJ)
    for i, v in np.ndenumerate(np.asarray(a, dtype=_OBJ)):
        v = v if isinstance(v, bytes) else str(v).encode()
        if not _B64.match(v) or (b"=" in v and len(v) % 4):
            raise InvalidArgumentError(None, None, "Invalid character found in base64. [Op:DecodeBase64]")
        body = v.rstrip(b"=")
        if len(body) % 4 == 1:
            raise InvalidArgumentError(None, None, "Base64 string length cannot be 1 modulo 4. [Op:DecodeBase64]")
        out[i] = base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4))
    return out


ENCODE_BASE64 = defop("EncodeBase64", _b64_encode_kernel, shape=lambda specs, pad: [(specs[0][0], _OBJ)])
NotDifferentiable("EncodeBase64")
DECODE_BASE64 = defop("DecodeBase64", _b64_decode_kernel, shape=lambda specs: [(specs[0][0], _OBJ)])
NotDifferentiable("DecodeBase64")


def encode_base64(input: Any, pad: bool = False, name: Any = None) -> Tensor:  # noqa: A002 - TF's name
    """``tf.io.encode_base64``: web-safe base64 (``-`` and ``_`` for ``+`` and ``/``), padded with ``=`` only
    with ``pad=True``."""
    return execute(ENCODE_BASE64, (convert_to_tensor(input, dtype=dtypes.string),), {"pad": bool(pad)})


def decode_base64(input: Any, name: Any = None) -> Tensor:  # noqa: A002
    """``tf.io.decode_base64``: the bytes of web-safe base64 strings (padded or not)."""
    return execute(DECODE_BASE64, (convert_to_tensor(input, dtype=dtypes.string),))


def _decompress_kernel(a, compression_type):
    import gzip
    import zlib

    kind = compression_type.upper()
    if kind not in ("", "ZLIB", "GZIP"):
        raise InvalidArgumentError(None, None, "Only ZLIB, ZSTD, GZIP or NONE are supported compressions "
                                   "[Op:DecodeCompressed]")
    out = np.empty(np.shape(a), dtype=_OBJ)
    for i, v in np.ndenumerate(np.asarray(a, dtype=_OBJ)):
        v = v if isinstance(v, bytes) else str(v).encode()
        try:
            out[i] = v if kind == "" else (zlib.decompress(v) if kind == "ZLIB" else gzip.decompress(v))
        except (zlib.error, OSError, EOFError) as e:
            from tapeflow.framework.errors import DataLossError

            m = re.match(r"Error (-?\d+) while decompressing data: (.*)", str(e))
            text = f"inflate() failed with error {m.group(1)}: {m.group(2)}" if m else f"inflate() failed: {e}"
            raise DataLossError(None, None, f"{text} [Op:DecodeCompressed]") from None
    return out


DECODE_COMPRESSED = defop("DecodeCompressed", _decompress_kernel,
                          shape=lambda specs, compression_type: [(specs[0][0], _OBJ)])
NotDifferentiable("DecodeCompressed")


def decode_compressed(bytes: Any, compression_type: str = "", name: Any = None) -> Tensor:  # noqa: A002
    """``tf.io.decode_compressed``: each string decompressed (``"ZLIB"``, ``"GZIP"``, or ``""`` for none)."""
    return execute(DECODE_COMPRESSED, (convert_to_tensor(bytes, dtype=dtypes.string),),
                   {"compression_type": str(compression_type)})


def _is_jpeg_kernel(a):
    v = np.asarray(a, dtype=_OBJ)[()]
    v = v if isinstance(v, bytes) else str(v).encode()
    return np.asarray(v[:3] == b"\xff\xd8\xff")


IS_JPEG = defop("IsJpeg", _is_jpeg_kernel, shape=lambda specs: [((), np.dtype(np.bool_))])
NotDifferentiable("IsJpeg")


def is_jpeg(contents: Any, name: Any = None) -> Tensor:
    """``tf.io.is_jpeg`` / ``tf.image.is_jpeg``: whether the scalar string starts like a JPEG file."""
    return execute(IS_JPEG, (convert_to_tensor(contents, dtype=dtypes.string),))


def _matching_kernel(patterns):
    import glob

    found = []
    for p in np.asarray(patterns, dtype=_OBJ).reshape(-1):
        found.extend(sorted(glob.glob(p.decode() if isinstance(p, bytes) else str(p))))
    return np.asarray([f.encode() for f in found], dtype=_OBJ).reshape(-1)


MATCHING_FILES = defop("MatchingFiles", _matching_kernel, shape=lambda specs: [((None,), _OBJ)])
MATCHING_FILES.extra["stateful"] = True
NotDifferentiable("MatchingFiles")


def matching_files(pattern: Any, name: Any = None) -> Tensor:
    """``tf.io.matching_files``: the sorted paths matching a glob pattern (or each of a list), as a 1-D string
    tensor (empty when none match)."""
    return execute(MATCHING_FILES, (convert_to_tensor(pattern, dtype=dtypes.string),))
