"""TF's ``TensorProto`` (``tensorflow/core/framework/tensor.proto``): its wire format, and the message class.

``serialize(array)`` gives the bytes of ``tf.io.serialize_tensor`` (TF's ``AsProtoTensorContent``: the
dtype, the shape, then ``tensor_content`` in little-endian order, or ``string_val`` for strings), and
``parse(raw)`` reads any TensorProto (``tensor_content`` or the typed ``*_val`` fields, a single value
filling the whole shape as in TF), in plain Python and NumPy. ``message_class()`` builds the protobuf
message ``tensorflow.TensorProto`` (with ``TensorShapeProto`` and the ``DataType`` enum) from a descriptor
written here, for ``tf.make_tensor_proto``; it needs the optional ``protobuf`` package.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from tapeflow.framework import dtypes

_OBJ = np.dtype(object)
# DataType enum values (types.proto) of the dtypes tapeflow has, and back
ENUM = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6, "string": 7, "complex64": 8,
        "int64": 9, "bool": 10, "uint16": 17, "complex128": 18, "float16": 19, "uint32": 22, "uint64": 23}
_BY_ENUM = {v: k for k, v in ENUM.items()}
# the repeated *_val field of each dtype: (field number, element format for struct, how many per value)
_VAL_FIELDS = {"float32": (5, "f"), "float64": (6, "d"), "int32": (7, "varint"), "uint8": (7, "varint"),
               "int16": (7, "varint"), "int8": (7, "varint"), "string": (8, None), "complex64": (9, "f"),
               "int64": (10, "varint"), "bool": (11, "varint"), "complex128": (12, "d"), "float16": (13, "varint"),
               "uint16": (7, "varint"), "uint32": (16, "varint"), "uint64": (17, "varint")}

_FIELD_NAMES = {5: "float_val", 6: "double_val", 7: "int_val", 8: "string_val", 9: "scomplex_val", 10: "int64_val",
                11: "bool_val", 12: "dcomplex_val", 13: "half_val", 16: "uint32_val", 17: "uint64_val"}


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative ints are ten-byte two's complement, as protobuf writes int32/int64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _shape(shape: tuple) -> bytes:
    return b"".join(_field(2, _varint(8) + _varint(d) if d else b"") for d in shape)


def serialize(a: Any) -> bytes:
    """``tf.io.serialize_tensor``'s bytes of the array ``a`` (TF's, byte for byte)."""
    a = np.asarray(a)
    name = dtypes.as_dtype(a.dtype).name
    out = _varint(8) + _varint(ENUM[name]) + _field(2, _shape(a.shape))
    if a.dtype == _OBJ:
        for x in a.reshape(-1):
            out += _field(8, x.encode("utf-8") if isinstance(x, str) else bytes(x))
    elif a.size:
        out += _field(4, np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False).tobytes())
    return out


def read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def fields(buf: bytes):
    """(field number, value) pairs: ints for varints, bytes for the rest."""
    pos = 0
    while pos < len(buf):
        key, pos = read_varint(buf, pos)
        wire = key & 7
        if wire == 0:
            v, pos = read_varint(buf, pos)
        elif wire == 2:
            n, pos = read_varint(buf, pos)
            v, pos = buf[pos:pos + n], pos + n
            if pos > len(buf):
                raise ValueError("truncated")
        elif wire in (1, 5):
            n = 8 if wire == 1 else 4
            v, pos = buf[pos:pos + n], pos + n
        else:
            raise ValueError(f"wire type {wire}")
        yield key >> 3, wire, v


def _varints(body: bytes) -> list:
    out, pos = [], 0
    while pos < len(body):
        v, pos = read_varint(body, pos)
        out.append(v)
    return out


def parse(raw: bytes) -> np.ndarray:
    """The array a serialized TensorProto holds (raises ValueError if the bytes are not one)."""
    enum, shape, content, vals = 0, [], None, []
    for num, wire, v in fields(raw):
        if num == 1 and wire == 0:
            enum = v
        elif num == 2 and wire == 2:
            for dnum, _, dim in fields(v):
                if dnum == 2:
                    shape.append(next((s for n, _, s in fields(dim) if n == 1), 0))
        elif num == 4 and wire == 2:
            content = v
        elif num >= 5:
            vals.append((num, wire, v))
    if enum not in _BY_ENUM:
        raise ValueError(f"unsupported DataType {enum}")
    name = _BY_ENUM[enum]
    dt = dtypes.as_dtype(name)._np
    count = int(np.prod(shape, dtype=np.int64))
    if name == "string":
        items = np.empty(sum(n == 8 for n, _, _ in vals), _OBJ)
        items[:] = [v for n, _, v in vals if n == 8]  # (np.array of bytes would make a fixed-width array)
        return _fill(items, shape, count, _OBJ)
    if content is not None:
        return np.frombuffer(content, dtype=np.dtype(dt).newbyteorder("<")).astype(dt).reshape(shape)
    number, fmt = _VAL_FIELDS[name]
    flat: list = []
    for n, wire, v in vals:
        if n != number:
            continue
        if fmt == "varint":
            flat += _varints(v) if wire == 2 else [v]
        else:
            flat += list(struct.unpack(f"<{len(v) // struct.calcsize(fmt)}{fmt}", v))
    if name == "float16":
        values = np.array(flat, dtype=np.uint16).view(np.float16)
    elif name.startswith("complex"):
        values = np.array(flat, dtype=dt.type(0).real.dtype).view(dt)
    elif fmt == "varint":
        values = np.array([x - (1 << 64) if x >= 1 << 63 and name not in ("uint64",) else x for x in flat]
                          ).astype(dt) if flat else np.zeros(0, dt)
    else:
        values = np.array(flat, dtype=dt)
    return _fill(values, shape, count, dt)


def _fill(values: np.ndarray, shape: list, count: int, dt: Any) -> np.ndarray:
    # TF: fewer values than the shape holds repeat the last one (a single value fills the tensor)
    if values.size == count:
        return values.reshape(shape)
    if values.size == 0:
        return np.zeros(shape, dt) if dt != _OBJ else np.full(shape, b"", dtype=_OBJ)
    if values.size > count:
        raise ValueError(f"{values.size} values for a tensor of {count}")
    out = np.empty(count, dt)
    out[:values.size] = values
    out[values.size:] = values[-1]
    return out.reshape(shape)


_CLASS: list = []


def message_class() -> Any:
    """The protobuf message class ``tensorflow.TensorProto`` (built on first use; needs ``protobuf``)."""
    if _CLASS:
        return _CLASS[0]
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    except ImportError:
        raise NotImplementedError("tf.make_tensor_proto / tf.make_ndarray need the protobuf package: pip install "
                                  "protobuf (tf.io.serialize_tensor and parse_tensor work without it).") from None
    f = descriptor_pb2.FieldDescriptorProto
    fd = descriptor_pb2.FileDescriptorProto(name="tensorflow/core/framework/tensor.proto", package="tensorflow",
                                            syntax="proto3")
    enum = fd.enum_type.add(name="DataType")
    enum.value.add(name="DT_INVALID", number=0)
    names = {"float32": "FLOAT", "float64": "DOUBLE", "float16": "HALF"}
    for k, v in sorted(ENUM.items(), key=lambda kv: kv[1]):
        enum.value.add(name="DT_" + names.get(k, k.upper()), number=v)
    shape = fd.message_type.add(name="TensorShapeProto")
    dim = shape.nested_type.add(name="Dim")
    dim.field.add(name="size", number=1, label=f.LABEL_OPTIONAL, type=f.TYPE_INT64, json_name="size")
    dim.field.add(name="name", number=2, label=f.LABEL_OPTIONAL, type=f.TYPE_STRING, json_name="name")
    shape.field.add(name="dim", number=2, label=f.LABEL_REPEATED, type=f.TYPE_MESSAGE,
                    type_name=".tensorflow.TensorShapeProto.Dim", json_name="dim")
    shape.field.add(name="unknown_rank", number=3, label=f.LABEL_OPTIONAL, type=f.TYPE_BOOL, json_name="unknownRank")
    t = fd.message_type.add(name="TensorProto")
    t.field.add(name="dtype", number=1, label=f.LABEL_OPTIONAL, type=f.TYPE_ENUM, type_name=".tensorflow.DataType",
                json_name="dtype")
    t.field.add(name="tensor_shape", number=2, label=f.LABEL_OPTIONAL, type=f.TYPE_MESSAGE,
                type_name=".tensorflow.TensorShapeProto", json_name="tensorShape")
    t.field.add(name="version_number", number=3, label=f.LABEL_OPTIONAL, type=f.TYPE_INT32, json_name="versionNumber")
    t.field.add(name="tensor_content", number=4, label=f.LABEL_OPTIONAL, type=f.TYPE_BYTES, json_name="tensorContent")
    types = {"half_val": f.TYPE_INT32, "float_val": f.TYPE_FLOAT, "double_val": f.TYPE_DOUBLE,
             "int_val": f.TYPE_INT32, "string_val": f.TYPE_BYTES, "scomplex_val": f.TYPE_FLOAT,
             "int64_val": f.TYPE_INT64, "bool_val": f.TYPE_BOOL, "dcomplex_val": f.TYPE_DOUBLE,
             "uint32_val": f.TYPE_UINT32, "uint64_val": f.TYPE_UINT64}
    for number, name in sorted(_FIELD_NAMES.items(), key=lambda kv: kv[0] != 13):  # (half_val first, as TF)
        typ = types[name]
        fld = t.field.add(name=name, number=number, label=f.LABEL_REPEATED, type=typ,
                          json_name="".join(p if i == 0 else p.title() for i, p in enumerate(name.split("_"))))
        if typ != f.TYPE_BYTES:
            fld.options.packed = True
    pool = descriptor_pool.DescriptorPool()  # private: never clashes with another copy of these names
    pool.Add(fd)
    _CLASS.append(message_factory.GetMessageClass(pool.FindMessageTypeByName("tensorflow.TensorProto")))
    return _CLASS[0]


def make_tensor_proto(values: Any, dtype: Any = None, shape: Any = None, verify_shape: bool = False,
                      allow_broadcast: bool = False) -> Any:
    """``tf.make_tensor_proto``: a ``TensorProto`` message holding ``values`` as TF builds it (more than one
    element of a numeric dtype in ``tensor_content``, else the typed ``*_val`` field; with ``shape``, a single
    value stands for the whole tensor)."""
    from tapeflow.framework.tensor import Tensor

    if isinstance(values, Tensor):
        values = values.numpy()
    want = None if dtype is None else dtypes.as_dtype(dtype)
    if isinstance(values, np.ndarray) and want is None:
        arr = values
    else:
        arr = np.asarray(values, dtype=None if want is None or want.name == "string" else want._np)
        if want is None and arr.dtype.kind == "f" and not isinstance(values, np.generic):
            arr = arr.astype(np.float32)  # Python floats are float32, as in TF
        elif want is None and arr.dtype.kind == "i" and not isinstance(values, np.generic):
            arr = arr.astype(np.int32) if np.all(np.abs(arr) < 2**31) else arr.astype(np.int64)
    if arr.dtype.kind in "USO":
        arr = np.array([x.encode("utf-8") if isinstance(x, str) else x for x in arr.reshape(-1)],
                       dtype=_OBJ).reshape(arr.shape)
    name = dtypes.as_dtype(arr.dtype).name
    dims = arr.shape if shape is None else tuple(int(d) for d in shape)
    count = int(np.prod(dims, dtype=np.int64))
    if shape is not None and arr.size not in (count, 1) and not (allow_broadcast and arr.size <= count):
        raise ValueError(f"Too many elements provided. Takes at most {count:d}, but got {arr.size:d}"
                         if arr.size > count else
                         f"Expected Tensor's shape: {dims}, but got {arr.shape}." if verify_shape else
                         f"Eager execution of tf.constant with unsupported shape. Tensor has shape {arr.shape}, "
                         f"but expected shape {dims}.")
    proto = message_class()(dtype=ENUM[name])
    proto.tensor_shape.SetInParent()
    for d in dims:
        proto.tensor_shape.dim.add(size=d)
    flat = arr.reshape(-1)
    if name != "string" and arr.size == count and count > 1:
        proto.tensor_content = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
    else:
        values = flat.view(np.uint16) if name == "float16" else flat.view(flat.real.dtype) \
            if name.startswith("complex") else flat  # half_val holds the bits; complex values as pairs
        getattr(proto, _FIELD_NAMES[_VAL_FIELDS[name][0]]).extend(values.tolist())
    return proto


def make_ndarray(tensor: Any) -> np.ndarray:
    """``tf.make_ndarray``: the NumPy array a ``TensorProto`` (tapeflow's, TF's or TensorBoard's) holds."""
    return parse(tensor.SerializeToString())
