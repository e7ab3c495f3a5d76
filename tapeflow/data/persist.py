"""Datasets on disk: ``cache(filename)``, ``Dataset.save``/``Dataset.load`` and ``snapshot``.

TF's semantics, tapeflow's own bytes (TF writes tensor bundles and snapshot protobufs; tapeflow cannot read
those, nor TF these):

- Elements are records framed as TFRecords (length, masked CRC-32C, data, masked CRC-32C; GZIP as
  TFRecordWriter writes it). A record is the element's components in ``nest.flatten`` order (a ragged
  component: ``flat_values`` then each ``row_splits``; a sparse one: ``indices``, ``values``,
  ``dense_shape``), each a TF ``TensorProto`` (``tf.io.serialize_tensor``'s bytes), length-prefixed.
- ``cache(filename)``: TF's file names. A pass writes ``{filename}_0.data-00000-of-00001.tempstate<n>``
  under the lock ``{filename}_0.lockfile`` (a second writer gets TF's ``AlreadyExistsError``); a complete
  pass becomes ``{filename}.data-00000-of-00001`` plus ``{filename}.index`` (JSON: the component dtypes
  and the element count). An iterator that finds the index reads the file instead of its input -- in
  this run and later ones, whatever the input is now, as TF. A pass stopped early discards what it wrote
  (TF's warning on stderr).
- ``save(path)``: ``path/dataset_spec.json`` (the element spec as JSON) and ``path/snapshot.metadata``,
  shards in ``path/<run id>/<shard:08d>.shard/00000000.snapshot`` (``shard_func`` picks the shard; by
  default one). ``load`` reads them through ``reader_func`` (default: TF's interleave of the shards,
  ``cycle_length`` = CPU cores).
- ``snapshot(path)``: the first complete pass writes ``path/<fingerprint>/``; later passes (and later
  runs of the same pipeline) read it. The fingerprint is a hash of the pipeline (dataset types, their
  arguments, arrays, user functions' code and captured values), not TF's graph hash.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tapeflow.data.dataset import Dataset, _flatten, _is_namedtuple, _pack
from tapeflow.framework import dtypes, errors, tensor_proto

_FORMAT = "tapeflow-dataset-1"


# -- element specs as JSON ----------------------------------------------------------

def _shape_json(shape: Any) -> Any:
    dims = shape.as_list() if shape.rank is not None else None
    return dims


def spec_to_json(spec: Any) -> Any:
    from tapeflow.data.nested import DatasetSpec
    from tapeflow.framework.sparse_tensor import SparseTensorSpec
    from tapeflow.framework.tensor_spec import TensorSpec
    from tapeflow.ops.ragged.ragged_tensor import RaggedTensorSpec

    if isinstance(spec, dict):
        return {"t": "dict", "k": [_key_json(k) for k in spec], "v": [spec_to_json(v) for v in spec.values()]}
    if _is_namedtuple(spec):
        return {"t": "namedtuple", "name": type(spec).__name__, "fields": list(spec._fields),
                "v": [spec_to_json(v) for v in spec]}
    if isinstance(spec, tuple):
        return {"t": "tuple", "v": [spec_to_json(v) for v in spec]}
    if isinstance(spec, RaggedTensorSpec):
        return {"t": "ragged", "shape": _shape_json(spec.shape), "dtype": spec.dtype.name,
                "ragged_rank": spec.ragged_rank, "row_splits_dtype": spec.row_splits_dtype.name}
    if isinstance(spec, SparseTensorSpec):
        return {"t": "sparse", "shape": _shape_json(spec.shape), "dtype": spec.dtype.name}
    if isinstance(spec, TensorSpec):
        return {"t": "tensor", "shape": _shape_json(spec.shape), "dtype": spec.dtype.name}
    if isinstance(spec, DatasetSpec):
        raise NotImplementedError("tf.data: saving or caching a dataset whose elements are datasets (a "
                                  "DatasetSpec component) is not supported in tapeflow.")
    raise TypeError(f"tf.data: cannot write an element with a {type(spec).__name__} component to disk.")


def _key_json(k: Any) -> Any:
    if isinstance(k, str):
        return k
    if isinstance(k, (int, np.integer)):
        return {"int": int(k)}
    raise TypeError(f"tf.data: a dict key of an element written to disk must be a str or an int, got {k!r}.")


def _key_from(k: Any) -> Any:
    return k["int"] if isinstance(k, dict) else k


def spec_from_json(j: Any) -> Any:
    import collections

    from tapeflow.framework.sparse_tensor import SparseTensorSpec
    from tapeflow.framework.tensor_spec import TensorSpec
    from tapeflow.ops.ragged.ragged_tensor import RaggedTensorSpec

    t = j["t"]
    if t == "dict":
        return {_key_from(k): spec_from_json(v) for k, v in zip(j["k"], j["v"])}
    if t == "namedtuple":
        return collections.namedtuple(j["name"], j["fields"])(*[spec_from_json(v) for v in j["v"]])
    if t == "tuple":
        return tuple(spec_from_json(v) for v in j["v"])
    if t == "ragged":
        return RaggedTensorSpec(j["shape"], dtypes.as_dtype(j["dtype"]), j["ragged_rank"],
                                dtypes.as_dtype(j["row_splits_dtype"]))
    if t == "sparse":
        return SparseTensorSpec(j["shape"], dtypes.as_dtype(j["dtype"]))
    return TensorSpec(j["shape"], dtypes.as_dtype(j["dtype"]))


def _spec_leaves(spec: Any) -> list:
    if isinstance(spec, dict):
        return [x for v in spec.values() for x in _spec_leaves(v)]
    if isinstance(spec, tuple):
        return [x for v in spec for x in _spec_leaves(v)]
    return [spec]


def _component_dtypes(spec: Any) -> list[str]:
    """The dtype of each component of an element, in record order."""
    from tapeflow.framework.sparse_tensor import SparseTensorSpec
    from tapeflow.ops.ragged.ragged_tensor import RaggedTensorSpec

    out = []
    for s in _spec_leaves(spec):
        if isinstance(s, RaggedTensorSpec):
            out += [s.dtype.name] + [s.row_splits_dtype.name] * s.ragged_rank
        elif isinstance(s, SparseTensorSpec):
            out += ["int64", s.dtype.name, "int64"]
        else:
            out.append(s.dtype.name)
    return out


# -- elements as records -------------------------------------------------------------

def _components(element: Any) -> list[np.ndarray]:
    from tapeflow.data.composite import CompositeLeaf
    from tapeflow.ops.ragged.ragged_tensor import RaggedTensor

    out: list = []
    for leaf in _flatten(element):
        if isinstance(leaf, CompositeLeaf):
            v = leaf.value
            if leaf.kind == "sparse":
                out += [np.asarray(v.indices._value), np.asarray(v.values._value), np.asarray(v.dense_shape._value)]
            elif isinstance(v, RaggedTensor):
                out += [np.asarray(v.flat_values._value)] + [np.asarray(s._value) for s in v.nested_row_splits]
            else:
                out.append(np.asarray(v._value))
        elif isinstance(leaf, Dataset):
            raise NotImplementedError("tf.data: saving or caching a dataset whose elements are datasets is not "
                                      "supported in tapeflow.")
        else:
            out.append(np.asarray(leaf))
    return out


def encode(element: Any) -> bytes:
    parts = [tensor_proto.serialize(a) for a in _components(element)]
    return struct.pack("<I", len(parts)) + b"".join(struct.pack("<Q", len(p)) + p for p in parts)


def decode(record: bytes, spec: Any, where: str) -> Any:
    from tapeflow.data.composite import CompositeLeaf
    from tapeflow.framework.sparse_tensor import SparseTensor, SparseTensorSpec
    from tapeflow.framework.tensor import Tensor
    from tapeflow.ops.ragged.ragged_tensor import RaggedTensor, RaggedTensorSpec

    want = _component_dtypes(spec)
    try:
        (n,) = struct.unpack_from("<I", record, 0)
        pos, comps = 4, []
        for _ in range(n):
            (ln,) = struct.unpack_from("<Q", record, pos)
            comps.append(record[pos + 8:pos + 8 + ln])
            pos += 8 + ln
    except struct.error:
        raise errors.DataLossError(f"tf.data: a corrupted element record in {where}.") from None
    if n != len(want):
        raise errors.InvalidArgumentError(
            f"Number of components does not match: expected {len(want)} but got {n} ({where} was written for "
            "another element structure).")
    arrays = []
    for i, (raw, dt) in enumerate(zip(comps, want)):
        try:
            value = tensor_proto.parse(raw)
        except (ValueError, IndexError, KeyError, struct.error):
            raise errors.DataLossError(f"tf.data: a corrupted element record in {where}.") from None
        got = dtypes.as_dtype(value.dtype).name
        if got != dt:
            raise errors.InvalidArgumentError(
                f"Data type mismatch at component {i}: expected {dtypes.type_string(dt)} but got "
                f"{dtypes.type_string(got)}.")
        arrays.append(value)
    it = iter(arrays)
    leaves = []
    for s in _spec_leaves(spec):
        if isinstance(s, RaggedTensorSpec):
            values = next(it)
            splits = [Tensor(next(it)) for _ in range(s.ragged_rank)]
            v = RaggedTensor.from_nested_row_splits(Tensor(values), splits) if splits else Tensor(values)
            leaves.append(CompositeLeaf(v, "ragged"))
        elif isinstance(s, SparseTensorSpec):
            idx, vals, shape = next(it), next(it), next(it)
            leaves.append(CompositeLeaf(SparseTensor(Tensor(idx), Tensor(vals), Tensor(shape)), "sparse"))
        else:
            leaves.append(next(it))
    return _pack(spec, iter(leaves))


def _write_records(path: str, records: Iterator[bytes], compression: str | None) -> int:
    from tapeflow.io import TFRecordOptions, TFRecordWriter

    n = 0
    with TFRecordWriter(path, TFRecordOptions(compression or "")) as w:
        for r in records:
            w.write(r)
            n += 1
    return n


def _read_records(path: str, compression: str | None) -> Iterator[bytes]:
    from tapeflow.data.readers import TFRecordDataset

    for r in TFRecordDataset(path, compression_type=compression or "")._elements():
        yield bytes(np.asarray(r)[()])


class _Stream(Dataset):
    def __init__(self, gen: Callable[[], Iterator], spec: Any, tf_name: str, cardinality: int = -2) -> None:
        self._gen, self._spec, self._tf_name, self._card = gen, spec, tf_name, cardinality

    def _elements(self) -> Iterator:
        return self._gen()

    def _cardinality(self) -> int:
        return self._card

    @property
    def element_spec(self) -> Any:
        return self._spec


# -- cache(filename) -------------------------------------------------------------------

_PARTIAL_WARNING = (
    "The calling iterator did not fully read the dataset being cached. In order to avoid unexpected truncation "
    "of the dataset, the partially cached contents of the dataset  will be discarded. This can happen if you "
    "have an input pipeline similar to `dataset.cache().take(k).repeat()`. You should use "
    "`dataset.take(k).cache().repeat()` instead.")


class _FileCache(Dataset):
    """``cache(filename)``: the first complete pass written to files that later iterators (and runs) read."""

    _tf_name = "CacheDataset"

    def __init__(self, parent: Dataset, filename: str) -> None:
        self._parent, self._prefix = parent, filename

    def _cardinality(self) -> int:
        return self._parent._cardinality()

    @property
    def element_spec(self) -> Any:
        return self._parent.element_spec

    def _template(self) -> Any:
        return self._parent._template()

    def _elements(self) -> Iterator:
        index = self._prefix + ".index"
        if os.path.exists(index):
            return self._read(index)
        return self._write(index)

    def _read(self, index: str) -> Iterator:
        with open(index) as f:
            meta = json.load(f)
        spec = self.element_spec
        want = _component_dtypes(spec)
        if meta.get("format") != _FORMAT:
            raise errors.DataLossError(f"{index} is not a tapeflow dataset cache (TF's tensor-bundle caches cannot "
                                       "be read by tapeflow; delete the cache files to rebuild them).")
        for i, (w, g) in enumerate(zip(want, meta["dtypes"])):
            if w != g:
                raise errors.InvalidArgumentError(
                    f"Data type mismatch at component {i}: expected {dtypes.type_string(w)} but got "
                    f"{dtypes.type_string(g)}.")
        data = self._prefix + ".data-00000-of-00001"
        for r in _read_records(data, None):
            yield decode(r, spec, data)

    def _write(self, index: str) -> Iterator:
        lock = self._prefix + "_0.lockfile"
        directory = os.path.dirname(self._prefix) or "."
        if not os.path.isdir(directory):
            raise errors.NotFoundError(f"{lock}; No such file or directory")
        if os.path.exists(lock):
            with open(lock) as f:
                contents = f.read()
            raise errors.AlreadyExistsError(
                f"There appears to be a concurrent caching iterator running - cache lockfile already exists "
                f"('{lock}'). If you are sure no other running TF computations are using this cache prefix, "
                f"delete the lockfile and re-initialize the iterator. Lockfile contents: {contents}")
        with open(lock, "w") as f:
            f.write(f"Created at: {int(time.time())}")
        temp = f"{self._prefix}_0.data-00000-of-00001.tempstate{int.from_bytes(os.urandom(8), 'little')}"
        spec = self.element_spec
        done = False
        try:
            from tapeflow.io import TFRecordWriter

            n = 0
            with TFRecordWriter(temp) as w:
                for e in self._parent._elements():
                    w.write(encode(e))
                    n += 1
                    yield e
            os.replace(temp, self._prefix + ".data-00000-of-00001")
            tmp_index = index + ".tmp"
            with open(tmp_index, "w") as f:
                json.dump({"format": _FORMAT, "elements": n, "dtypes": _component_dtypes(spec),
                           "element_spec": spec_to_json(spec)}, f)
            os.replace(tmp_index, index)
            done = True
        finally:
            if os.path.exists(temp):
                os.remove(temp)
            if os.path.exists(lock):
                os.remove(lock)
            if not done:
                print(_PARTIAL_WARNING, file=sys.stderr)


def cache_to_file(ds: Dataset, filename: Any) -> Dataset:
    name = filename.numpy() if hasattr(filename, "numpy") else filename
    if isinstance(name, bytes):
        name = name.decode()
    return _FileCache(ds, os.fspath(name))


# -- save / load ------------------------------------------------------------------------

def _check_compression(compression: Any, op: str) -> str | None:
    if compression in (None, "", "NONE"):
        return None
    if compression == "GZIP":
        return "GZIP"
    if compression in ("SNAPPY", "AUTO"):
        raise NotImplementedError(f"tf.data.Dataset.{op}: compression={compression!r} is not supported in tapeflow "
                                  "(use None or 'GZIP').")
    raise errors.InvalidArgumentError(f"Compression type {compression!r} is not supported (use None or 'GZIP'). "
                                      f"[Op:{op}]")


def _shard_file(run_dir: str, shard: int) -> str:
    d = os.path.join(run_dir, f"{shard:08d}.shard")
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, "00000000.snapshot")


def _write_shards(ds: Dataset, run_dir: str, compression: str | None, shard_func: Callable | None) -> int:
    """Writes ``ds``'s elements into shard files of ``run_dir``; returns the element count."""
    from tapeflow.data.dataset import _call, _to_tensors
    from tapeflow.io import TFRecordOptions, TFRecordWriter

    writers: dict = {}
    n = 0
    try:
        for e in ds._elements():
            k = 0
            if shard_func is not None:
                v = _call(shard_func, _to_tensors(e))
                a = np.asarray(getattr(v, "_value", v))
                if a.shape != () or a.dtype.kind not in "iu":
                    raise errors.InvalidArgumentError(
                        f"Invalid `shard_func`: it must return a scalar int64 tensor, got dtype {a.dtype} and shape "
                        f"{a.shape}. [Op:SaveDatasetV2]")
                k = int(a)
                if k < 0:
                    raise errors.InvalidArgumentError(f"Invalid `shard_func`: shard index {k} is negative. "
                                                      "[Op:SaveDatasetV2]")
            if k not in writers:
                writers[k] = TFRecordWriter(_shard_file(run_dir, k), TFRecordOptions(compression or ""))
            writers[k].write(encode(e))
            n += 1
    finally:
        for w in writers.values():
            w.close()
    return n


def save(ds: Dataset, path: Any, compression: Any = None, shard_func: Callable | None = None,
         checkpoint_args: Any = None) -> None:
    if checkpoint_args:
        raise NotImplementedError("tf.data.Dataset.save: checkpoint_args (resumable saving) is not supported in "
                                  "tapeflow; save without it.")
    import shutil

    path = os.fspath(path.numpy().decode() if hasattr(path, "numpy") else path)
    comp = _check_compression(compression, "SaveDatasetV2")
    spec = ds.element_spec
    spec_json = spec_to_json(spec)
    os.makedirs(path, exist_ok=True)
    run = str(int.from_bytes(os.urandom(8), "little") >> 1)
    run_dir = os.path.join(path, run)
    n = _write_shards(ds, run_dir, comp, shard_func)
    old = _read_metadata(path, strict=False)
    _write_json(os.path.join(path, "dataset_spec.json"), spec_json)
    _write_json(os.path.join(path, "snapshot.metadata"), {"format": _FORMAT, "run_id": run, "compression": comp,
                                                           "elements": n, "finalized": True})
    if old and old.get("run_id") and old["run_id"] != run:  # a previous save at this path: replaced
        shutil.rmtree(os.path.join(path, old["run_id"]), ignore_errors=True)


def _write_json(path: str, obj: Any) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def _read_metadata(path: str, strict: bool = True) -> dict | None:
    meta = os.path.join(path, "snapshot.metadata")
    try:
        with open(meta) as f:
            m = json.load(f)
    except (OSError, ValueError):
        if strict:
            raise errors.NotFoundError(f"tf.data snapshot metadata file not found or invalid: {meta}.") from None
        return None
    if m.get("format") != _FORMAT:
        if strict:
            raise errors.DataLossError(f"{meta} was not written by tapeflow's Dataset.save (TF's snapshot "
                                       "protobufs cannot be read by tapeflow).")
        return None
    return m


def _shard_paths(run_dir: str) -> list[str]:
    if not os.path.isdir(run_dir):
        return []
    names = sorted(d for d in os.listdir(run_dir) if d.endswith(".shard"))
    return [os.path.join(run_dir, d, "00000000.snapshot") for d in names]


def _default_reader(datasets: Dataset) -> Dataset:
    import multiprocessing

    return datasets.interleave(lambda x: x, cycle_length=multiprocessing.cpu_count())


def _reader_dataset(run_dir: str, spec: Any, compression: str | None, reader_func: Callable | None,
                    cardinality: int = -2) -> Dataset:
    from tapeflow.data.nested import DatasetSpec

    def shard(p: str) -> Dataset:
        return _Stream(lambda: (decode(r, spec, p) for r in _read_records(p, compression)), spec,
                       "_SnapshotChunkDataset")

    shards = _Stream(lambda: iter([shard(p) for p in _shard_paths(run_dir)]), DatasetSpec(spec),
                     "_ListSnapshotChunksDataset")
    out = (reader_func or _default_reader)(shards)
    if not isinstance(out, Dataset):
        raise TypeError(f"`reader_func` must return a `tf.data.Dataset`, got {type(out).__name__}.")
    return out


def load(path: Any, element_spec: Any = None, compression: Any = None, reader_func: Callable | None = None,
         wait: bool = False) -> Dataset:
    path = os.fspath(path.numpy().decode() if hasattr(path, "numpy") else path)
    comp = _check_compression(compression, "LoadDataset")
    spec_file = os.path.join(path, "dataset_spec.json")
    if element_spec is None:
        try:
            with open(spec_file) as f:
                element_spec = spec_from_json(json.load(f))
        except OSError:
            raise errors.NotFoundError(f"tf.data snapshot element_spec file not found: {spec_file}.") from None
    meta = _read_metadata(path)
    if (meta.get("compression") or None) != comp:
        raise errors.DataLossError(
            f"corrupted record at 0 (the dataset at {path} was saved with compression={meta.get('compression')!r}, "
            f"not {comp!r})")
    run_dir = os.path.join(path, meta["run_id"])
    out = _reader_dataset(run_dir, element_spec, comp, reader_func)
    return _Loaded(out, element_spec, int(meta.get("elements", -2)) if reader_func is None else -2)


class _Loaded(Dataset):
    _tf_name = "_LoadDataset"

    def __init__(self, inner: Dataset, spec: Any, cardinality: int) -> None:
        self._inner, self._spec, self._card = inner, spec, cardinality

    def _elements(self) -> Iterator:
        return self._inner._elements()

    def _cardinality(self) -> int:
        return self._card

    @property
    def element_spec(self) -> Any:
        return self._spec


# -- snapshot -----------------------------------------------------------------------------

def _fingerprint(obj: Any, h: Any, seen: set, depth: int = 0) -> None:
    """Feeds a structural description of a pipeline into ``h`` (what TF's graph hash covers: ops, their
    arguments and functions)."""
    import types

    if depth > 40:
        h.update(b"<deep>")
        return
    if obj is None or isinstance(obj, (bool, int, float, str, bytes, np.generic)):
        h.update(repr((type(obj).__name__, obj)).encode())
        return
    if isinstance(obj, np.ndarray):
        h.update(repr((obj.dtype.str, obj.shape)).encode())
        h.update(obj.tobytes() if obj.dtype != object else repr(obj.tolist()).encode())
        return
    if id(obj) in seen:
        h.update(b"<seen>")
        return
    seen.add(id(obj))
    if isinstance(obj, (list, tuple)):
        h.update(f"{type(obj).__name__}[{len(obj)}]".encode())
        for v in obj:
            _fingerprint(v, h, seen, depth + 1)
        return
    if isinstance(obj, dict):
        h.update(f"dict[{len(obj)}]".encode())
        for k, v in obj.items():
            _fingerprint(k, h, seen, depth + 1)
            _fingerprint(v, h, seen, depth + 1)
        return
    if isinstance(obj, types.CodeType):
        h.update(obj.co_code)
        h.update(repr(obj.co_names).encode())
        for c in obj.co_consts:
            _fingerprint(c, h, seen, depth + 1)
        return
    if isinstance(obj, types.FunctionType):
        _fingerprint(obj.__code__, h, seen, depth + 1)
        _fingerprint(obj.__defaults__, h, seen, depth + 1)
        for cell in obj.__closure__ or ():
            try:
                _fingerprint(cell.cell_contents, h, seen, depth + 1)
            except ValueError:  # an empty cell
                h.update(b"<empty>")
        return
    if isinstance(obj, types.MethodType):
        _fingerprint(obj.__func__, h, seen, depth + 1)
        return
    if isinstance(obj, (types.ModuleType, type, types.BuiltinFunctionType)):
        h.update(repr(getattr(obj, "__qualname__", getattr(obj, "__name__", "?"))).encode())
        return
    value = getattr(obj, "_value", None)
    if isinstance(value, np.ndarray):  # a tensor or variable: its value
        _fingerprint(value, h, seen, depth + 1)
        return
    h.update(type(obj).__qualname__.encode())
    if isinstance(obj, Dataset) or hasattr(obj, "__dict__"):
        state = {k: v for k, v in vars(obj).items() if not k.startswith("_traced") and k not in ("_cfs", "_cf")}
        for k in sorted(state):
            h.update(k.encode())
            _fingerprint(state[k], h, seen, depth + 1)


def fingerprint(ds: Dataset) -> str:
    h = hashlib.sha256()
    _fingerprint(ds, h, set())
    _fingerprint(spec_to_json(ds.element_spec), h, set())
    return str(int.from_bytes(h.digest()[:8], "little") >> 1)


class _Snapshot(Dataset):
    """``snapshot(path)``: a complete pass is written to ``path/<fingerprint>``; later passes read it."""

    _tf_name = "_SnapshotDataset"

    def __init__(self, parent: Dataset, path: str, compression: str | None, reader_func: Callable | None,
                 shard_func: Callable | None) -> None:
        self._parent, self._path, self._comp = parent, path, compression
        self._reader, self._shard = reader_func, shard_func
        self._dir = os.path.join(path, fingerprint(parent))
        if shard_func is None:  # TF enumerates, shards by index and maps the index away
            self._tf_name = "_MapDataset"

    def _cardinality(self) -> int:
        return self._parent._cardinality()

    @property
    def element_spec(self) -> Any:
        return self._parent.element_spec

    def _template(self) -> Any:
        return self._parent._template()

    def _elements(self) -> Iterator:
        meta = _read_metadata(self._dir, strict=False)
        if meta is not None and meta.get("finalized"):
            return _reader_dataset(os.path.join(self._dir, meta["run_id"]), self.element_spec, meta.get("compression"),
                                   self._reader)._elements()
        return self._write()

    def _write(self) -> Iterator:
        import shutil

        from tapeflow.data.dataset import _call, _to_tensors
        from tapeflow.io import TFRecordOptions, TFRecordWriter

        import multiprocessing

        cpus = multiprocessing.cpu_count()
        run = str(int.from_bytes(os.urandom(8), "little") >> 1)
        run_dir = os.path.join(self._dir, run)
        writers: dict = {}
        n, done = 0, False
        try:
            for e in self._parent._elements():
                if self._shard is None:  # TF's default: the element's index modulo the CPU cores
                    k = n % cpus
                else:
                    v = _call(self._shard, _to_tensors(e))
                    k = int(np.asarray(getattr(v, "_value", v)))
                if k not in writers:
                    writers[k] = TFRecordWriter(_shard_file(run_dir, k), TFRecordOptions(self._comp or ""))
                writers[k].write(encode(e))
                n += 1
                yield e
            for w in writers.values():
                w.close()
            os.makedirs(self._dir, exist_ok=True)
            _write_json(os.path.join(self._dir, "dataset_spec.json"), spec_to_json(self.element_spec))
            _write_json(os.path.join(self._dir, "snapshot.metadata"),
                        {"format": _FORMAT, "run_id": run, "compression": self._comp, "elements": n,
                         "finalized": True})
            done = True
        finally:
            for w in writers.values():
                w.close()
            if not done:  # an unfinished snapshot is not used; the next pass writes a new one
                shutil.rmtree(run_dir, ignore_errors=True)


def snapshot(ds: Dataset, path: Any, compression: Any = "AUTO", reader_func: Callable | None = None,
             shard_func: Callable | None = None) -> Dataset:
    path = os.fspath(path.numpy().decode() if hasattr(path, "numpy") else path)
    comp = None if compression == "AUTO" else _check_compression(compression, "SnapshotDatasetV2")
    return _Snapshot(ds, path, comp, reader_func, shard_func)
