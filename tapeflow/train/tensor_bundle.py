"""TensorFlow's checkpoint file format (the "tensor bundle" of ``tensorflow/core/util/tensor_bundle``).

A checkpoint ``prefix`` is two files:

* ``prefix.index``: a LevelDB-style sorted table (SSTable). Its key ``""`` holds a ``BundleHeaderProto``
  (number of shards, endianness, version), every other key a ``BundleEntryProto`` describing one tensor
  (dtype, shape, shard, offset and size in the data file, CRC32C of its bytes);
* ``prefix.data-00000-of-00001``: the tensors' bytes, one after the other: little-endian for numbers, and
  for strings TF's layout (a varint64 length per element, a masked CRC32C of those lengths, the bytes).

Both are written and read here without TensorFlow or protobuf, byte for byte as TF's ``BundleWriter``
writes them, so TF reads what tapeflow writes and the other way round. The table is the one of
``tensorflow/core/lib/io/table_builder.cc``: data blocks of about 256 KiB whose keys share prefixes with
a restart point every 16 keys, each block followed by a compression byte and a masked CRC32C; an index
block (one key per data block), an empty metaindex block and a 48-byte footer ending in the magic number
``0xdb4775248b80fb57``. Snappy-compressed blocks (TF never writes them for checkpoints) raise
``NotImplementedError``; so do sharded bundles (``num_shards > 1``) and partitioned variables (slices).

CRC32C comes from ``google-crc32c`` or ``crc32c`` when one is installed (hardware speed); otherwise a
NumPy version runs it over thousands of lanes at once (about a hundred MB/s, see ``crc32c``).
"""

from __future__ import annotations

import functools
import os
import struct
from typing import Any
from collections.abc import Iterator

import numpy as np

from tapeflow.framework import errors
from tapeflow.framework.tensor_proto import ENUM, _varint, fields, read_varint

__all__ = ["crc32c", "write_bundle", "BundleReader", "index_file", "data_file"]

_BLOCK_SIZE = 262144  # TF's table::Options defaults
_RESTART_INTERVAL = 16
_MAGIC = 0xDB4775248B80FB57
_FOOTER_SIZE = 48
_MASK_DELTA = 0xA282EAD8
_BY_ENUM = {v: k for k, v in ENUM.items()}


def index_file(prefix: str) -> str:
    return f"{prefix}.index"


def data_file(prefix: str, shard: int = 0, num_shards: int = 1) -> str:
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


# -- CRC32C (Castagnoli) ------------------------------------------------------------------------------------
def _table() -> np.ndarray:
    t = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        t = np.where(t & 1, (t >> 1) ^ np.uint32(0x82F63B78), t >> 1).astype(np.uint32)
    return t


_T8 = _table()
_T8_LIST = [int(x) for x in _T8]


@functools.lru_cache(maxsize=1)
def _tables16() -> tuple[np.ndarray, np.ndarray]:
    """Two 65536-entry tables: the register after four bytes is ``lo[r & 0xffff] ^ hi[r >> 16]``."""
    t = [_T8]
    for _ in range(3):  # t[k][i]: byte i followed by k zero bytes
        t.append((t[-1] >> 8) ^ _T8[t[-1] & 0xFF])
    idx = np.arange(65536, dtype=np.uint32)
    lo = t[3][idx & 0xFF] ^ t[2][idx >> 8]
    hi = t[1][idx & 0xFF] ^ t[0][idx >> 8]
    return lo.astype(np.uint32), hi.astype(np.uint32)


def _gf2_times(mat: list[int], vec: int) -> int:
    out, i = 0, 0
    while vec:
        if vec & 1:
            out ^= mat[i]
        vec >>= 1
        i += 1
    return out


@functools.lru_cache(maxsize=64)
def _shift_tables(nbytes: int) -> tuple[np.ndarray, ...]:
    """Tables of the linear map "feed ``nbytes`` zero bytes" on the CRC register (as zlib's crc32_combine),
    one per register byte."""
    op = [0x82F63B78] + [1 << (i - 1) for i in range(1, 32)]  # one zero bit

    def square(m: list[int]) -> list[int]:
        return [_gf2_times(m, m[i]) for i in range(32)]

    for _ in range(3):
        op = square(op)  # one zero byte
    result = None
    n = nbytes
    while n:
        if n & 1:
            result = op if result is None else [_gf2_times(op, result[i]) for i in range(32)]
        n >>= 1
        if n:
            op = square(op)
    cols = np.array(result, dtype=np.uint32)
    tables = []
    v = np.arange(256, dtype=np.uint32)
    for byte in range(4):
        t = np.zeros(256, dtype=np.uint32)
        for bit in range(8):
            t ^= np.where((v >> bit) & 1 == 1, cols[8 * byte + bit], np.uint32(0)).astype(np.uint32)
        tables.append(t)
    return tuple(tables)


def _shift(reg: np.ndarray, nbytes: int) -> np.ndarray:
    t0, t1, t2, t3 = _shift_tables(nbytes)
    return t0[reg & 0xFF] ^ t1[(reg >> 8) & 0xFF] ^ t2[(reg >> 16) & 0xFF] ^ t3[reg >> 24]


def _register_py(reg: int, data: bytes | memoryview) -> int:
    t = _T8_LIST
    for b in bytes(data):
        reg = t[(reg ^ b) & 0xFF] ^ (reg >> 8)
    return reg


def _register_np(reg: int, data: np.ndarray) -> int:
    """The CRC register after ``data`` (uint8, at least 4 KiB), starting from ``reg``: ``lanes`` runs of
    ``lane`` bytes each (both powers of two, so the fold tables are reused) run side by side four bytes a
    step, their registers are folded pairwise (the left one shifted over the right one's length), and the
    rest of the data follows."""
    n = data.size
    lane = 256 if n < 1 << 20 else 1024 if n < 1 << 26 else 4096
    lanes = 1 << (min(32768, n // lane).bit_length() - 1)
    covered = lanes * lane
    lo, hi = _tables16()
    words = data[:covered].view("<u4").reshape(lanes, lane // 4).T.copy()
    acc = np.zeros(lanes, dtype=np.uint32)
    acc[0] = reg
    for row in words:
        acc ^= row
        acc = lo[acc & 0xFFFF] ^ hi[acc >> 16]
    length = lane
    while acc.size > 1:
        acc = _shift(acc[0::2], length) ^ acc[1::2]
        length *= 2
    reg = int(acc[0])
    rest = data[covered:]
    if rest.size >= 4096:
        return _register_np(reg, rest)
    return _register_py(reg, rest.tobytes())


def _crc32c_builtin(data: Any, crc: int = 0) -> int:
    """CRC32C of ``data`` continuing ``crc`` (TF's ``crc32c::Extend``; ``crc32c(data)`` is ``Value``)."""
    buf = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
    reg = crc ^ 0xFFFFFFFF
    reg = _register_py(reg, buf.tobytes()) if buf.size < 4096 else _register_np(reg, buf)
    return reg ^ 0xFFFFFFFF


def _pick_crc32c() -> Any:
    try:
        import google_crc32c

        if google_crc32c.implementation == "c":
            return lambda data, crc=0: google_crc32c.extend(crc, bytes(memoryview(data).cast("B")))
    except ImportError:
        pass
    try:
        import crc32c as _crc32c_pkg

        return lambda data, crc=0: _crc32c_pkg.crc32c(memoryview(data).cast("B"), crc)
    except ImportError:
        pass
    return _crc32c_builtin


crc32c = _pick_crc32c()
crc32c.__doc__ = _crc32c_builtin.__doc__


def mask(crc: int) -> int:
    """TF's ``crc32c::Mask`` (stored CRCs are masked so a CRC of data holding CRCs stays strong)."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def unmask(masked: int) -> int:
    rot = (masked - _MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


# -- the sorted table ---------------------------------------------------------------------------------------
class _BlockBuilder:
    """One table block: entries whose keys share a prefix with the key before (a full key, a restart point,
    every ``restart_interval`` entries), then the restart offsets and their count (all fixed32)."""

    def __init__(self, restart_interval: int) -> None:
        self.interval = restart_interval
        self.buf = bytearray()
        self.restarts = [0]
        self.count = 0
        self.last = b""

    def add(self, key: bytes, value: bytes) -> None:
        shared = 0
        if self.count == self.interval:
            self.restarts.append(len(self.buf))
            self.count = 0
        else:
            limit = min(len(self.last), len(key))
            while shared < limit and self.last[shared] == key[shared]:
                shared += 1
        self.buf += _varint(shared) + _varint(len(key) - shared) + _varint(len(value)) + key[shared:] + value
        self.last = key
        self.count += 1

    def size_estimate(self) -> int:
        return len(self.buf) + 4 * len(self.restarts) + 4

    def empty(self) -> bool:
        return not self.buf

    def finish(self) -> bytes:
        return bytes(self.buf) + struct.pack(f"<{len(self.restarts)}I", *self.restarts) + struct.pack(
            "<I", len(self.restarts))


def _separator(start: bytes, limit: bytes) -> bytes:
    """LevelDB's bytewise ``FindShortestSeparator``: a short key in ``[start, limit)``."""
    n = min(len(start), len(limit))
    i = 0
    while i < n and start[i] == limit[i]:
        i += 1
    if i < n and start[i] < 0xFF and start[i] + 1 < limit[i]:
        return start[:i] + bytes([start[i] + 1])
    return start


def _successor(key: bytes) -> bytes:
    """LevelDB's bytewise ``FindShortSuccessor``: a short key ``>= key``."""
    for i, b in enumerate(key):
        if b != 0xFF:
            return key[:i] + bytes([b + 1])
    return key


def _handle(offset: int, size: int) -> bytes:
    return _varint(offset) + _varint(size)


def build_table(items: Any, block_size: int = _BLOCK_SIZE) -> bytes:
    """The SSTable of ``items`` (``(key, value)`` pairs sorted by key, unique), as TF's
    ``table::TableBuilder`` writes it (no compression)."""
    out = bytearray()

    def write_block(block: _BlockBuilder) -> bytes:
        contents = block.finish()
        offset = len(out)
        out.extend(contents)
        trailer = b"\x00"  # kNoCompression
        out.extend(trailer + struct.pack("<I", mask(crc32c(trailer, crc32c(contents)))))
        return _handle(offset, len(contents))

    index = _BlockBuilder(1)
    data = _BlockBuilder(_RESTART_INTERVAL)
    pending_handle = None
    last = b""
    for key, value in items:
        if pending_handle is not None:  # the index entry of the block just written: a key between the two
            index.add(_separator(last, key), pending_handle)
            pending_handle = None
        data.add(key, value)
        last = key
        if data.size_estimate() >= block_size:
            pending_handle = write_block(data)
            data = _BlockBuilder(_RESTART_INTERVAL)
    if not data.empty():
        pending_handle = write_block(data)
    if pending_handle is not None:
        index.add(_successor(last), pending_handle)
    meta_handle = write_block(_BlockBuilder(_RESTART_INTERVAL))
    index_handle = write_block(index)
    footer = meta_handle + index_handle
    out.extend(footer + b"\x00" * (40 - len(footer)) + struct.pack("<Q", _MAGIC))
    return bytes(out)


def _read_block(data: bytes, offset: int, size: int, where: str) -> bytes:
    end = offset + size
    if end + 5 > len(data):
        raise errors.DataLossError(f"{where}: a block runs past the end of the file (truncated?)")
    contents = data[offset:end]
    kind = data[end]
    stored = struct.unpack("<I", data[end + 1:end + 5])[0]
    if unmask(stored) != crc32c(data[end:end + 1], crc32c(contents)):
        raise errors.DataLossError(f"{where}: block checksum mismatch (the file is corrupt)")
    if kind == 1:
        raise NotImplementedError(f"{where}: Snappy-compressed table blocks are not implemented in tapeflow")
    if kind != 0:
        raise errors.DataLossError(f"{where}: bad block type {kind}")
    return contents


def _block_entries(block: bytes, where: str) -> Iterator[tuple[bytes, bytes]]:
    if len(block) < 4:
        raise errors.DataLossError(f"{where}: bad block contents")
    num_restarts = struct.unpack("<I", block[-4:])[0]
    limit = len(block) - 4 - 4 * num_restarts
    if limit < 0:
        raise errors.DataLossError(f"{where}: bad block contents")
    pos, key = 0, b""
    while pos < limit:
        shared, pos = read_varint(block, pos)
        unshared, pos = read_varint(block, pos)
        vlen, pos = read_varint(block, pos)
        if shared > len(key) or pos + unshared + vlen > limit:
            raise errors.DataLossError(f"{where}: bad entry in block")
        key = key[:shared] + block[pos:pos + unshared]
        pos += unshared
        yield key, block[pos:pos + vlen]
        pos += vlen


def read_table(data: bytes, where: str = "table") -> Iterator[tuple[bytes, bytes]]:
    """Every ``(key, value)`` of an SSTable, in key order."""
    if len(data) < _FOOTER_SIZE or struct.unpack("<Q", data[-8:])[0] != _MAGIC:
        raise errors.DataLossError(f"{where}: not an sstable (bad magic number)")
    footer = data[-_FOOTER_SIZE:-8]
    _, pos = read_varint(footer, 0)
    _, pos = read_varint(footer, pos)  # the metaindex handle (TF's is empty)
    index_off, pos = read_varint(footer, pos)
    index_size, _ = read_varint(footer, pos)
    index = _read_block(data, index_off, index_size, where)
    for _, handle in _block_entries(index, where):
        off, p = read_varint(handle, 0)
        size, _ = read_varint(handle, p)
        yield from _block_entries(_read_block(data, off, size, where), where)


# -- the bundle ---------------------------------------------------------------------------------------------
def _shape_proto(shape: tuple) -> bytes:
    return b"".join(_pb(2, _pb(1, int(d)) if d else b"") for d in shape)


def _pb(field: int, payload: bytes | int) -> bytes:
    if isinstance(payload, int):
        return _varint(field << 3) + _varint(payload)
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _length_bytes(lengths: list[int]) -> bytes:
    # what TF's checksum of the lengths covers: each as a little-endian uint32 (uint64 from 4 GiB up)
    return b"".join(struct.pack("<I", n) if n <= 0xFFFFFFFF else struct.pack("<Q", n) for n in lengths)


def _string_bytes(a: np.ndarray) -> tuple[bytes, int]:
    """TF's layout of a string tensor and its CRC32C: every length as a varint64, the masked CRC32C of the
    lengths (each length as four little-endian bytes), then the bytes."""
    items = [x.encode("utf-8") if isinstance(x, str) else bytes(x) for x in a.reshape(-1)]
    lengths = b"".join(_varint(len(x)) for x in items)
    crc = crc32c(_length_bytes([len(x) for x in items]))
    checksum = struct.pack("<I", mask(crc))
    crc = crc32c(checksum, crc)
    body = b"".join(items)
    return lengths + checksum + body, crc32c(body, crc)


def write_bundle(prefix: str, tensors: dict[str, np.ndarray], write: Any) -> None:
    """Writes ``tensors`` (``{key: array}``) as the bundle ``prefix`` (its ``.index`` and one data shard):
    the bytes in the dict's order (TF's saver writes its objects breadth first, the object graph last),
    the index sorted by key; ``write(path, data)`` writes one file (atomically). Data first, as TF's
    ``BundleWriter``: a reader that finds the index finds the data."""
    chunks = []
    size = 0
    entries = {}
    for key, a in tensors.items():
        if a.dtype == np.dtype(object) or a.dtype.kind in "SU":
            raw, crc = _string_bytes(np.asarray(a, dtype=object))
            enum = ENUM["string"]
        else:
            name = a.dtype.name
            if name not in ENUM:
                raise TypeError(f"Cannot write tensor '{key}' of dtype {a.dtype} to a TF checkpoint: TF has no "
                                "such DataType.")
            enum = ENUM[name]
            raw = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
            crc = crc32c(raw)
        entry = _pb(1, enum) + _pb(2, _shape_proto(a.shape))
        if size:
            entry += _pb(4, size)
        if raw:
            entry += _pb(5, len(raw))
        entries[key.encode("utf-8")] = entry + _varint(6 << 3 | 5) + struct.pack("<I", mask(crc))
        chunks.append(raw)
        size += len(raw)
    header = _pb(1, 1) + _pb(3, _pb(1, 1))  # BundleHeaderProto: num_shards 1, LITTLE endian, producer 1
    write(data_file(prefix), b"".join(chunks))
    write(index_file(prefix), build_table([(b"", header)] + sorted(entries.items())))


class _Entry:
    __slots__ = ("dtype", "shape", "shard", "offset", "size", "crc", "sliced")

    def __init__(self, raw: bytes) -> None:
        self.dtype, self.shape, self.shard, self.offset, self.size, self.crc = 0, [], 0, 0, 0, None
        self.sliced = False
        for num, wire, v in fields(raw):
            if num == 1:
                self.dtype = v
            elif num == 2:
                for dnum, _, dim in fields(v):
                    if dnum == 2:
                        self.shape.append(next((s for n, _, s in fields(dim) if n == 1), 0))
            elif num == 3:
                self.shard = v
            elif num == 4:
                self.offset = v
            elif num == 5:
                self.size = v
            elif num == 6 and wire == 5:
                self.crc = struct.unpack("<I", v)[0]
            elif num == 7:
                self.sliced = True


class BundleReader:
    """Reads a TF checkpoint bundle: ``keys()``, ``shape(key)``, ``dtype(key)`` and ``get(key)`` (a NumPy
    array, its CRC32C checked; strings come back as an object array of ``bytes``, as TF's reader)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        path = index_file(prefix)
        try:
            with open(path, "rb") as f:
                table = f.read()
        except FileNotFoundError:
            raise errors.NotFoundError(f"Checkpoint index file not found: {path}") from None
        self._entries: dict[str, _Entry] = {}
        header = None
        for key, value in read_table(table, path):
            if key == b"":
                header = value
            else:
                self._entries[key.decode("utf-8", "surrogateescape")] = _Entry(value)
        num_shards = 1
        for num, _, v in fields(header or b""):
            if num == 1:
                num_shards = v
            elif num == 2 and v == 1:
                raise NotImplementedError(f"{path}: big-endian TF checkpoints are not implemented in tapeflow")
        self._num_shards = num_shards
        self._data: dict[int, Any] = {}

    def keys(self) -> list[str]:
        return list(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def shape(self, key: str) -> list[int]:
        return list(self._entries[key].shape)

    def dtype_name(self, key: str) -> str:
        return _BY_ENUM.get(self._entries[key].dtype, f"DataType {self._entries[key].dtype}")

    def _shard(self, shard: int) -> Any:
        data = self._data.get(shard)
        if data is None:
            path = data_file(self.prefix, shard, self._num_shards)
            try:
                with open(path, "rb") as f:
                    data = self._data[shard] = f.read()
            except FileNotFoundError:
                raise errors.NotFoundError(f"Checkpoint data file not found: {path}") from None
        return data

    def get(self, key: str) -> np.ndarray:
        e = self._entries[key]
        where = f"checkpoint {self.prefix}, tensor '{key}'"
        if e.sliced:
            raise NotImplementedError(f"{where}: partitioned (sliced) variables are not implemented in tapeflow")
        name = _BY_ENUM.get(e.dtype)
        if name is None:
            raise NotImplementedError(f"{where}: DataType {e.dtype} is not implemented in tapeflow")
        data = self._shard(e.shard)
        raw = data[e.offset:e.offset + e.size]
        if len(raw) != e.size:
            raise errors.DataLossError(f"{where}: the data file is truncated. Restore from an earlier checkpoint.")
        shape = tuple(e.shape)
        if name == "string":
            return self._strings(raw, shape, e, where)
        if e.crc is not None and crc32c(raw) != unmask(e.crc):
            raise errors.DataLossError(f"{where}: checksum mismatch (the data file is corrupt). Restore from an "
                                       "earlier checkpoint.")
        dt = np.dtype(name).newbyteorder("<")
        count = int(np.prod(shape, dtype=np.int64))
        if count * dt.itemsize != e.size:
            raise errors.DataLossError(f"{where}: {e.size} bytes do not hold shape {list(shape)} of {name}")
        return np.frombuffer(raw, dtype=dt).astype(dt.newbyteorder("="), copy=True).reshape(shape)

    @staticmethod
    def _strings(raw: bytes, shape: tuple, e: _Entry, where: str) -> np.ndarray:
        count = int(np.prod(shape, dtype=np.int64))
        lengths, pos = [], 0
        try:
            for _ in range(count):
                n, pos = read_varint(raw, pos)
                lengths.append(n)
        except IndexError:
            raise errors.DataLossError(f"{where}: truncated string tensor") from None
        crc = crc32c(_length_bytes(lengths))
        checksum = raw[pos:pos + 4]
        if len(checksum) != 4 or unmask(struct.unpack("<I", checksum)[0]) != crc:
            raise errors.DataLossError(f"{where}: string lengths checksum mismatch (the data file is corrupt)")
        crc = crc32c(checksum, crc)
        pos += 4
        body = raw[pos:]
        if len(body) != sum(lengths) or (e.crc is not None and crc32c(body, crc) != unmask(e.crc)):
            raise errors.DataLossError(f"{where}: checksum mismatch (the data file is corrupt). Restore from an "
                                       "earlier checkpoint.")
        out = np.empty(count, dtype=object)
        p = 0
        for i, n in enumerate(lengths):
            out[i] = body[p:p + n]
            p += n
        return out.reshape(shape)


def is_bundle(prefix: str) -> bool:
    return os.path.isfile(index_file(prefix))
