"""``tf.train.Checkpoint``, ``CheckpointManager`` and weight files, in TensorFlow's checkpoint format.

``ckpt.save("dir/ckpt")`` writes what TF writes: ``dir/ckpt-1.index`` and ``dir/ckpt-1.data-00000-of-00001``
(TF's tensor bundle, see ``tensor_bundle``) and the ``dir/checkpoint`` state file. Each variable is
stored under TF's key, its object path from the checkpoint's root plus ``/.ATTRIBUTES/VARIABLE_VALUE``
(``model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE``, ``save_counter/.ATTRIBUTES/VARIABLE_VALUE``), and the key
``_CHECKPOINTABLE_OBJECT_GRAPH`` holds TF's ``TrackableObjectGraph`` proto, so real TF restores these files
and tapeflow restores TF's. The path is found by walking the objects' children breadth first, as TF
(a variable reachable by several paths is stored under the shortest, the others stay in the object graph):

* a ``tf.Variable`` is a leaf (stored);
* an object with ``_trackable_children()`` (``tf.Module``, ``Checkpoint``) returns ``{name: child}``;
* Keras layers, models and optimizers are named as TF 2.21 with Keras 3 names them (``_functional/
  _operations/1/_kernel``, ``optimizer/_variables/3``), see ``_keras_children``;
* lists, tuples and dicts are walked by index / key; other values are skipped.

A node may also define ``_defer_restore(relative_path, value) -> bool``: restoring a saved value whose
variable does not exist yet (an optimizer slot before the first step, a layer not built yet) hands it to
the nearest such node above it, to apply when the variable is created (return False to decline: the
value is then reported as unused).

Safety: each file is written to a temporary file in the same folder, flushed to disk and renamed over the
target (``os.replace`` is atomic), data file first, so an interrupted save leaves the previous checkpoint
intact. A restore reads and checks the whole checkpoint (the table's and every tensor's CRC32C, every shape
and dtype) before it assigns anything, so a corrupt file or a model of another shape raises and changes
nothing.

Files tapeflow wrote before it wrote TF's format (one ``.safetensors`` file per checkpoint, with
tf.keras 2's names for Keras objects) still restore, and ``write("x.safetensors")`` still writes one
(that needs the optional ``safetensors`` package).
"""

from __future__ import annotations

import glob
import json
import os
import re
import sys
import tempfile
import warnings
import time
import zlib
from collections import deque
from typing import Any

import numpy as np

from tapeflow.framework import distribution_hooks as dist_hooks
from tapeflow.framework import errors
from tapeflow.framework.variables import Variable
from tapeflow.module import _attached, wrap_container
from tapeflow.train import tensor_bundle
from tapeflow.train._map_order import unordered_map_order

__all__ = [
    "Checkpoint", "CheckpointManager", "latest_checkpoint", "list_variables", "load_variable",
    "save_weights", "load_weights", "CheckpointLoadStatus", "CheckpointReader", "load_checkpoint",
]

_SUFFIX = ".safetensors"
_FORMAT = "tapeflow.checkpoint"
_STATE_FILE = "checkpoint"


def _safetensors():
    try:
        import safetensors.numpy as st
    except ImportError:
        raise ImportError(
            "tapeflow checkpoints are stored in the safetensors format, which needs the `safetensors` package: "
            "pip install safetensors"
        ) from None
    return st


# -- walking the object graph ------------------------------------------------
def _children(obj: Any) -> list[tuple[str, Any]] | None:
    if isinstance(obj, Variable):
        return None
    kids = getattr(obj, "_trackable_children", None)
    if callable(kids):
        return list(kids().items())
    if isinstance(obj, (list, tuple)):
        return [(str(i), x) for i, x in enumerate(obj)]
    if isinstance(obj, dict):
        return [(str(k), x) for k, x in obj.items()]
    return None


def _is_trackable(obj: Any) -> bool:
    return isinstance(obj, Variable) or _children(obj) is not None


def _walk(root: Any, aliases: dict[str, str] | None = None) -> tuple[dict[str, Variable], dict[str, Any]]:
    """``({path: variable}, {path: node})`` reachable from ``root``'s children. With ``aliases``, also fills
    it with ``{other path: first path}`` for every variable or node reached a second time (TF's object graph
    keeps those edges; restoring through either path works)."""
    variables: dict[str, Variable] = {}
    nodes: dict[str, Any] = {"": root}
    seen_vars: dict[int, str] = {}
    seen_nodes: dict[int, str] = {id(root): ""}
    # Depth first, children in order; an explicit stack (a recursive closure would be a reference cycle
    # keeping every walked object alive until the garbage collector runs).
    stack = [(iter(_children(root) or ()), "")]
    while stack:
        step = next(stack[-1][0], None)
        if step is None:
            stack.pop()
            continue
        name, child = step
        # TF's escaping of a local name in a key: "." -> "..", "/" -> ".S" (a dict key "scoped/c" is one name)
        path = stack[-1][1] + name.replace(".", "..").replace("/", ".S")
        if isinstance(child, Variable):
            first = seen_vars.get(id(child))
            if first is None:
                seen_vars[id(child)] = path
                variables[path] = child
            elif aliases is not None:
                aliases[path] = first
            continue
        kids = _children(child)
        if kids is None:
            continue
        first = seen_nodes.get(id(child))
        if first is None:
            seen_nodes[id(child)] = path
            nodes[path] = child
            stack.append((iter(kids), path + "/"))
        elif aliases is not None and first:
            aliases[path] = first
    return variables, nodes


# -- TF's object graph: names as TF 2.21 with Keras 3 gives them ----------------------------------------------
class _Node:
    """A node of TF's object graph that tapeflow keeps no object for (a Sequential's ``_functional``)."""

    def __init__(self, children: list[tuple[str, Any]]) -> None:
        self._kids = children

    def _trackable_children(self, *args: Any, **kwargs: Any) -> dict:
        return dict(self._kids)


# Keras 3 keeps these layers' variables in private attributes behind a property (for LoRA / quantization)
_PRIVATE_WEIGHTS = {"kernel": ("_kernel", frozenset({"Dense", "EinsumDense", "Conv1D", "Conv2D", "Conv3D"})),
                    "embeddings": ("_embeddings", frozenset({"Embedding"}))}


def _keras_classes() -> tuple[Any, Any]:
    # Keras objects exist only once tapeflow.keras is imported (train may not import keras: layering)
    base = sys.modules.get("tapeflow.keras.layers.base")
    opt = sys.modules.get("tapeflow.keras.optimizers.optimizer")
    return (base.Layer if base else None), (opt.Optimizer if opt else None)


def _weight_name(layer: Any, attr: str) -> str:
    private = _PRIVATE_WEIGHTS.get(attr)
    if private and any(c.__name__ in private[1] for c in type(layer).__mro__):
        return private[0]
    return attr


def _keras_children(obj: Any, layer_cls: Any, optimizer_cls: Any) -> list[tuple[str, Any]] | None:
    """TF's children of a Keras object (``None``: not one): as Keras 3 tracks them under TF, by attribute.
    A Sequential holds ``_functional`` with its ``_operations`` (an ``InputLayer`` first), a functional
    model its ``_operations``, a layer its variables and sub-layers by attribute (``_kernel`` where Keras 3
    keeps it), an optimizer ``_variables``, ``_trainable_variables``, ``_iterations``, ``_learning_rate``
    and its slot lists. Unlike Keras 3, lists and dicts of layers or variables on a layer are kept too
    (TF ignores them when it restores)."""
    if optimizer_cls is not None and isinstance(obj, optimizer_cls):
        kids: list[tuple[str, Any]] = [("_variables", obj._trackable_children()["variables"]),
                                       ("_trainable_variables", list(obj._trainable_variables)),
                                       ("_iterations", obj._iterations)]
        if isinstance(obj._learning_rate, Variable):
            kids.append(("_learning_rate", obj._learning_rate))
        for key, value in vars(obj).items():
            if (key not in ("_variables", "_trainable_variables") and isinstance(value, list) and value
                    and all(isinstance(v, Variable) for v in value)):
                kids.append((key, list(value)))
        return kids
    if layer_cls is None or not isinstance(obj, layer_cls):
        return None
    untracked = sys.modules["tapeflow.keras.layers.base"]._UNTRACKED
    weights = list(getattr(obj, "_own_trainable", ())) + list(getattr(obj, "_own_non_trainable", ()))
    own = {id(v) for v in weights}
    kids = []
    seen: set[int] = set()
    for key, value in vars(obj).items():
        if key in untracked or key.startswith("__"):
            continue
        if isinstance(value, Variable):
            if key.startswith("_") and id(value) not in own:
                continue  # tapeflow's bookkeeping (a dropout's seed state: Keras 3 keeps it out of TF's graph)
            kids.append((_weight_name(obj, key), value))
        elif isinstance(value, layer_cls) or (optimizer_cls is not None and isinstance(value, optimizer_cls)):
            kids.append((key, value))
        elif (not key.startswith("_") and isinstance(value, (list, tuple, dict))
              and any(isinstance(x, (Variable, layer_cls)) for x in _flat(value))):
            kids.append((key, value))
        else:
            continue
        seen.add(id(value))
    for v in weights:
        if id(v) not in seen:  # a weight no attribute holds: under its Keras name (Keras 3 would drop it)
            kids.append((getattr(v, "_keras_name", v.name.split(":")[0]), v))
    functional = obj.__dict__.get("_functional")
    if type(obj).__name__ == "Sequential" or any(c.__name__ == "Sequential" for c in type(obj).__mro__):
        first = obj.__dict__.get("_input_layer_obj") or _Node([])
        kids.append(("_functional", _Node([("_operations", [first] + list(obj.layers))])))
    elif functional is not None:
        kids.append(("_operations", list(obj.layers)))
    return kids


def _flat(value: Any) -> list:
    if isinstance(value, dict):
        return [y for x in value.values() for y in _flat(x)]
    if isinstance(value, (list, tuple)):
        return [y for x in value for y in _flat(x)]
    return [value]


def _tf_kids(obj: Any) -> list[tuple[str, Any]] | None:
    """``obj``'s children in TF's object graph, in TF's order, before dropping values that are not trackable
    (``None``: ``obj`` has no children, it is a variable or a plain value)."""
    if isinstance(obj, Variable):
        return None
    if isinstance(obj, Checkpoint):  # TF: the root's own children, the keyword objects sorted, save_counter
        kids = (_tf_kids(obj._root) or []) if obj._root is not None else []
        named = {n for n, _ in kids}
        kids += [(k, v) for k, v in obj._kwargs.items() if k not in named]
        if obj._save_counter is not None:
            kids.append(("save_counter", obj._save_counter))
        return kids
    layer_cls, optimizer_cls = _keras_classes()
    kids = _keras_children(obj, layer_cls, optimizer_cls)
    return _children(obj) if kids is None else kids


def _tf_children(obj: Any) -> list[tuple[str, Any]] | None:
    """``obj``'s trackable children in TF's object graph (variables, and objects with children of their own;
    looked at one level down only, so a cycle of objects is no trouble)."""
    kids = _tf_kids(obj)
    if kids is None:
        return None
    return [(n, c) for n, c in kids if isinstance(c, Variable) or _tf_kids(c) is not None]


def _escape(name: str) -> str:
    # TF's escaping of a local name in a key: "." -> "..", "/" -> ".S" (a dict key "scoped/c" is one name)
    return name.replace(".", "..").replace("/", ".S")


def _walk_tf(root: Any) -> tuple[dict[str, Variable], dict[str, Any], list]:
    """TF's walk: breadth first from ``root``, each object named by the first (shortest) path reaching it.
    ``({path: variable}, {path: node}, [(object, [(child index, local name)])] in object-graph order)``."""
    variables: dict[str, Variable] = {}
    nodes: dict[str, Any] = {"": root}
    ids = {id(root): 0}
    order: list[Any] = [root]
    refs: list[list[tuple[int, str]]] = []
    queue = deque([("", root)])
    keep = []  # the _Node objects made on the way stay alive (their ids stay unique)
    while queue:
        path, node = queue.popleft()
        mine = []
        for name, child in _tf_children(node) or []:
            keep.append(child)
            cid = ids.get(id(child))
            if cid is None:
                cid = ids[id(child)] = len(order)
                order.append(child)
                sub = f"{path}/{_escape(name)}" if path else _escape(name)
                if isinstance(child, Variable):
                    variables[sub] = child
                    queue.append((sub, child))
                else:
                    nodes[sub] = child
                    queue.append((sub, child))
            mine.append((cid, name))
        refs.append(mine)
    return variables, nodes, list(zip(order, refs))


def _tf_object_graph(graph: list, variables: dict[str, Variable]) -> bytes:
    """TF's ``TrackableObjectGraph`` proto of a ``_walk_tf`` graph: each object's children (node id, local
    name), a variable's ``VARIABLE_VALUE`` attribute (its name and checkpoint key) and
    ``has_checkpoint_values`` where values lie below."""
    keys = {id(v): p for p, v in variables.items()}
    has = [isinstance(n, Variable) for n, _ in graph]
    changed = True
    while changed:  # a node has values when one of its children has (aliases can point back: a fixpoint)
        changed = False
        for i, (_, mine) in enumerate(graph):
            if not has[i] and any(has[c] for c, _ in mine):
                has[i] = changed = True
    out = []
    for i, (node, mine) in enumerate(graph):
        body = b"".join(_pb(1, _pb(1, c) + _pb(2, name.encode())) for c, name in mine)
        if isinstance(node, Variable):
            full = getattr(node, "path", None)
            full = full if isinstance(full, str) else node.name.split(":")[0]
            key = _tf_name(keys[id(node)]).encode()
            body += _pb(2, _pb(1, b"VARIABLE_VALUE") + _pb(2, full.encode()) + _pb(3, key))
        if has[i]:
            body += _pb(5, _pb(1, 1))
        out.append(_pb(1, body))
    return b"".join(out)


def _graph_paths(proto: bytes, where: str) -> dict[str, str]:
    """``{object path: checkpoint key}`` for every path from the root to a variable in a saved
    ``TrackableObjectGraph`` (a variable reached by several paths restores through each)."""
    from tapeflow.framework.tensor_proto import fields

    children: list[list[tuple[int, str]]] = []
    values: list[str | None] = []
    try:
        for num, _, node in fields(proto):
            if num != 1:
                continue
            kids, value = [], None
            for fnum, _, v in fields(node):
                if fnum == 1:
                    ref = dict((n, x) for n, _, x in fields(v))
                    kids.append((int(ref.get(1, 0)), bytes(ref.get(2, b"")).decode("utf-8", "replace")))
                elif fnum == 2:
                    attr = dict((n, x) for n, _, x in fields(v))
                    if bytes(attr.get(1, b"")) == b"VARIABLE_VALUE":
                        value = bytes(attr.get(3, b"")).decode("utf-8", "replace")
            children.append(kids)
            values.append(value)
    except (ValueError, IndexError):
        raise errors.DataLossError(f"Checkpoint {where}: its object graph is corrupt. Restore from an earlier "
                                   "checkpoint.") from None
    out: dict[str, str] = {}
    stack = [(0, "", (0,))]
    budget = 1_000_000  # paths walked at most (a graph with many shared objects has many paths)
    while stack and budget:
        budget -= 1
        nid, path, on_path = stack.pop()
        if path and values[nid] is not None:
            out.setdefault(path, values[nid])
        for cid, name in reversed(children[nid]):
            if cid < len(children) and cid not in on_path:
                stack.append((cid, f"{path}/{_escape(name)}" if path else _escape(name), on_path + (cid,)))
    return out


def _to_array(v: Variable, strings: bool = False) -> np.ndarray:
    arr = np.asarray(v._value)
    if not arr.flags.c_contiguous:  # (np.ascontiguousarray would make scalars 1-d)
        arr = arr.copy(order="C")
    if strings and arr.dtype.kind in "OSU":
        return arr
    if arr.dtype.kind not in "biufc":
        raise TypeError(
            f"Cannot checkpoint variable '{v.name}' of dtype {arr.dtype}: the safetensors format stores only "
            "bool, integer and floating point tensors."
        )
    return arr


# -- the file format -------------------------------------------------------------
def _write_file(path: str, arrays: dict[str, np.ndarray], extra_meta: dict[str, str] | None = None) -> None:
    st = _safetensors()
    checksums = {k: zlib.crc32(a.tobytes()) for k, a in arrays.items()}
    meta = {"format": _FORMAT, "version": "1", "crc32": json.dumps(checksums, sort_keys=True)}
    meta.update(extra_meta or {})
    data = st.save(arrays, metadata=meta)
    _atomic_write(path, data)


def _atomic_write(path: str, data: bytes) -> None:
    _atomic_write_files([(path, data)])


def _atomic_write_files(files: list[tuple[str, bytes]]) -> None:
    """Writes each ``(path, data)`` to a temporary file, then renames them all into place (in order), so an
    interrupted save leaves the previous files."""
    strategy = dist_hooks.strategy
    if strategy is None:
        return _atomic_write_here(files)
    # Several processes (tf.distribute under MPI): a file that every rank names is written once, by rank 0; a
    # rank that names a path of its own (TF's tutorials give each non-chief worker a temporary directory, which
    # they remove afterwards) writes it, as TF's workers do. Then every rank waits, so the files are there.
    comm = strategy._comm
    paths = comm.allgather_object(os.path.abspath(files[0][0]))
    try:
        if comm.rank == 0 or paths[comm.rank] != paths[0]:
            _atomic_write_here(files)
            if comm.rank != 0:
                _written_here.update(os.path.abspath(p) for p, _ in files)
    finally:
        comm.barrier()


# Files a non-chief rank wrote under its own path (see _atomic_write): its checkpoint manager may remove them.
_written_here: set = set()


def writes_files() -> bool:
    """Whether this process writes the files (one process: yes; under a multi-process strategy: rank 0 only)."""
    return dist_hooks.strategy is None or dist_hooks.strategy._comm.rank == 0


def on_chief(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` once: here in one process; under several processes on rank 0 only, then every rank waits
    for it (a barrier), so the files it wrote or removed are there (or gone) for all when this returns."""
    strategy = dist_hooks.strategy
    if strategy is None:
        return fn(*args)
    try:
        if strategy._comm.rank == 0:
            return fn(*args)
        return None
    finally:
        strategy._comm.barrier()


def _remove(path: str) -> None:
    """Removes a file of this process's (under several processes: rank 0's, or one this rank wrote itself)."""
    if dist_hooks.strategy is not None and dist_hooks.strategy._comm.rank != 0:
        full = os.path.abspath(path)
        if full not in _written_here:
            return
        _written_here.discard(full)
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def _atomic_write_here(files: list[tuple[str, bytes]]) -> None:
    written: list[tuple[str, str]] = []
    try:
        for path, data in files:
            folder = os.path.dirname(os.path.abspath(path))
            os.makedirs(folder, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
            written.append((tmp, path))
            with os.fdopen(fd, "wb") as f:
                _write_bytes(f, data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual mode
        while written:
            tmp, path = written[0]
            os.replace(tmp, path)
            written.pop(0)
    except BaseException:
        # Whatever stopped us, the previous files are untouched (or, stopped between two renames, a new data
        # file under an old index: the checksums tell).
        for tmp, _ in written:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise


def _write_bytes(f: Any, data: bytes) -> None:
    f.write(data)


def _read_file(path: str) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    st = _safetensors()
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(f"Checkpoint file not found: {path}") from None
    try:
        arrays = st.load(data)
        meta = _read_metadata(data)
    except Exception as e:  # noqa: BLE001 - safetensors raises its own error types
        raise errors.DataLossError(
            f"Unable to read checkpoint {path}: the file is corrupt or truncated ({e}). Restore from an earlier "
            "checkpoint."
        ) from None
    crc = meta.get("crc32")
    if crc is not None:
        try:
            expected = json.loads(crc)
        except ValueError:
            raise errors.DataLossError(f"Checkpoint {path}: its checksum table is corrupt.") from None
        for k, a in arrays.items():
            if k in expected and zlib.crc32(a.tobytes()) != expected[k]:
                raise errors.DataLossError(
                    f"Checkpoint {path}: tensor '{k}' fails its CRC32 check (the file is corrupt). Restore from an "
                    "earlier checkpoint."
                )
    return arrays, meta


def _read_metadata(data: bytes) -> dict[str, str]:
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    return dict(header.get("__metadata__", {}) or {})


def _bundle_prefix(path: str) -> str | None:
    """The prefix of a TF-format checkpoint at ``path`` (``prefix`` or ``prefix.index``), else None."""
    path = os.fspath(path)
    if os.path.isfile(tensor_bundle.index_file(path)):
        return path
    if path.endswith(".index") and os.path.isfile(path):
        return path[:-len(".index")]
    return None


def _exists(prefix: str) -> bool:
    return _bundle_prefix(prefix) is not None or os.path.isfile(_file_for(prefix)) or os.path.isfile(prefix)


def _remove_checkpoint(prefix: str) -> None:
    """Removes a checkpoint's files (TF's ``.index`` and data shards, or an older ``.safetensors`` file)."""
    files = [tensor_bundle.index_file(prefix), _file_for(prefix)]
    files += glob.glob(glob.escape(prefix) + ".data-?????-of-?????")
    for f in files:
        if os.path.isfile(f):
            _remove(f)


def _resolve(path: str) -> str:
    """The file behind a checkpoint path: a TF-format checkpoint's prefix, or an older checkpoint's file
    (``prefix-3`` -> ``prefix-3.safetensors``)."""
    path = os.fspath(path)
    bundle = _bundle_prefix(path)
    if bundle is not None:
        return bundle
    if os.path.isfile(path):
        return path
    if os.path.isfile(path + _SUFFIX):
        return path + _SUFFIX
    raise errors.NotFoundError(
        f"Error when restoring from checkpoint at {path}: Failed to find any matching files for {path}. Please "
        "double-check that the path is correct. You may be missing the checkpoint suffix (e.g. the '-1' in "
        "'path/to/ckpt-1')."
    )


def _file_for(prefix: str) -> str:
    prefix = os.fspath(prefix)
    return prefix if prefix.endswith(_SUFFIX) else prefix + _SUFFIX


# -- saving and restoring an object graph -----------------------------------------
def _save_object(root: Any, path: str, extra_meta: dict[str, str] | None = None) -> None:
    aliases: dict[str, str] = {}
    variables, _ = _walk(root, aliases)
    arrays = {k: _to_array(v) for k, v in variables.items()}
    meta = dict(extra_meta or {})
    meta[_OBJECT_GRAPH_META] = _object_graph_proto(root, variables).hex()
    if aliases:
        meta["aliases"] = json.dumps(aliases, sort_keys=True)
    _write_file(path, arrays, meta)


def _save_tf(root: Any, prefix: str) -> None:
    """Writes ``root``'s variables and object graph as TF's checkpoint ``prefix`` (``.index`` + ``.data``)."""
    variables, _, graph = _walk_tf(root)
    tensors = {_tf_name(p): _to_array(v, strings=True) for p, v in variables.items()}
    proto = np.empty((), dtype=object)
    proto[()] = _tf_object_graph(graph, variables)
    tensors[_OBJECT_GRAPH] = proto  # last, as TF's saver
    _save_name_based(prefix, tensors)


def _save_name_based(prefix: str, arrays: dict[str, np.ndarray]) -> None:
    """Writes ``{key: array}`` as TF's checkpoint ``prefix``, data shard then index, each atomically (a
    TF 1 ``Saver`` checkpoint as it is: keys are the variables' names, no object graph)."""
    files: list[tuple[str, bytes]] = []
    tensor_bundle.write_bundle(prefix, arrays, lambda path, data: files.append((path, data)))
    _atomic_write_files(files)


def _load_saved(path: str) -> tuple[str, dict[str, np.ndarray], dict[str, str] | None, bool]:
    """Reads a checkpoint whole (every checksum checked): ``(its path, {stored key: value}, {object path:
    stored key} or None for a TF 1 name-based checkpoint, whether the paths are TF's)``."""
    prefix = _bundle_prefix(path)
    if prefix is None:
        file = _resolve(path)
        arrays, meta = _read_file(file)
        if meta.get(NAME_BASED) == "1":
            return file, arrays, None, False
        return file, arrays, _saved_entries(arrays, meta), False
    reader = tensor_bundle.BundleReader(prefix)
    arrays = {}
    for key in reader.keys():
        try:
            arrays[key] = reader.get(key)
        except NotImplementedError:  # (a dtype tapeflow lacks: the value stays unused, as unmatched)
            continue
    proto = arrays.pop(_OBJECT_GRAPH, None)
    if proto is None:
        return prefix, arrays, None, True
    return prefix, arrays, _graph_paths(bytes(proto.reshape(-1)[0]), prefix), True


def _check_compatible(key: str, var: Variable, arr: np.ndarray) -> None:
    want = tuple(var._value.shape)
    if not var.shape.is_compatible_with(arr.shape) or want != tuple(arr.shape):
        raise ValueError(
            f"Received incompatible tensor with shape {tuple(arr.shape)} when attempting to restore variable with "
            f"shape {want} and name {var.name} (checkpoint key '{key}'). The model's structure differs from the "
            "one saved; build it with the same shapes before restoring."
        )
    if np.dtype(var._value.dtype) != arr.dtype:
        raise errors.InvalidArgumentError(
            f"tensor_name = {key}; expected dtype {np.dtype(var._value.dtype).name} does not equal original dtype "
            f"{arr.dtype.name} (variable '{var.name}'). Create the variable with the saved dtype, or cast after "
            "restoring."
        )


def _deferring_ancestor(nodes: dict, key: str) -> tuple[Any, str] | None:
    """The nearest existing node above ``key`` that defines
    ``_defer_restore``, with ``key`` relative to it (e.g. a model not built
    yet receives ``layer_with_weights-0/kernel``)."""
    parts = key.split("/")
    for cut in range(len(parts) - 1, -1, -1):
        node = nodes.get("/".join(parts[:cut]))
        if node is not None and callable(getattr(node, "_defer_restore", None)):
            return node, "/".join(parts[cut:])
    return None


def _saved_entries(arrays: dict[str, np.ndarray], meta: dict[str, str]) -> dict[str, str]:
    """``{path: stored key}`` for every path the saved object graph had: the stored keys, plus each path
    that reached a stored variable through an alias (a variable, or a node above it, saved under two names)."""
    entries = {k: k for k in arrays}
    try:
        aliases = json.loads(meta.get("aliases", "{}"))
    except ValueError:
        aliases = {}
    for _ in range(8):  # an alias of an alias resolves in the next round
        added = False
        for alias, first in aliases.items():
            for path, key in list(entries.items()):
                if path == first or path.startswith(first + "/"):
                    new = alias + path[len(first):]
                    if new not in entries:
                        entries[new] = key
                        added = True
        if not added:
            break
    return entries


def _restore_object(root: Any, path: str, strict: bool = False) -> CheckpointLoadStatus:
    file, arrays, entries, tf_names = _load_saved(path)
    if tf_names:
        variables, nodes, _ = _walk_tf(root)
    else:
        variables, nodes = _walk(root)
    if entries is None:  # a TF 1 checkpoint: TF 2 restores it by the variables' names
        entries = {p: v.name.split(":")[0] for p, v in variables.items() if v.name.split(":")[0] in arrays}
    entries = {p: k for p, k in entries.items() if k in arrays}
    if strict:
        missing = [k for k in variables if k not in entries]
        if missing:
            raise ValueError(
                f"The file {path} has no values for {len(missing)} variable(s) of {type(root).__name__}, e.g. "
                f"{missing[:5]}; its keys are e.g. {sorted(arrays)[:5]}. The structure differs from the one saved "
                "(pass skip_mismatch=True to load what matches)."
            )
    status = CheckpointLoadStatus(file, [v for k, v in variables.items() if k not in entries], arrays)
    try:
        _restore_into(root, variables, nodes, {p: (k, arrays[k]) for p, k in entries.items()}, status, tf_names)
    except BaseException:
        status._silenced = True  # the restore raised (and changed nothing): no warning about unused values
        raise
    return status


def _restore_into(root: Any, variables: dict, nodes: dict, entries: dict[str, tuple[str, np.ndarray]],
                  status: CheckpointLoadStatus, tf_names: bool = False) -> None:
    """Restores ``entries`` (``{path below root: (stored key, value)}``) into ``root``'s graph: a value whose
    variable exists is assigned; one whose variable does not exist yet goes to the nearest node above it that
    can wait for it (``_defer_restore``, or a tracking container, which applies it when the object is attached
    later, as TF's deferred restoration). Every value is checked before any is assigned."""
    matched: list[tuple[Variable, str, np.ndarray]] = []
    for p, var in variables.items():
        if p in entries:
            key, arr = entries[p]
            _check_compatible(key, var, arr)
            matched.append((var, key, arr))
    deferred: list[tuple[Any, str, str, np.ndarray]] = []
    waiting: dict[int, tuple[Any, dict]] = {}
    for p, (key, arr) in entries.items():
        if p in variables:
            continue
        node = _deferring_ancestor(nodes, p)
        if node is not None:
            obj, rel = node
            if tf_names:  # a Keras layer waits under its own (tf.keras 2) names: "kernel" for Keras 3's "_kernel"
                head, _, leaf = rel.rpartition("/")
                leaf = next((k for k, (v, _) in _PRIVATE_WEIGHTS.items() if v == leaf), leaf)
                rel = f"{head}/{leaf}" if head else leaf
            deferred.append((obj, rel, key, arr))
            continue
        holder = _waiting_ancestor(nodes, p)
        if holder is not None:
            obj, rel = holder
            waiting.setdefault(id(obj), (obj, {}))[1][rel] = (key, arr)
    # Everything checked: now assign (nothing above changed any state).
    for var, key, arr in matched:
        var._value = np.array(arr, copy=True)
        status._unused.discard(key)
    for node, name, key, arr in deferred:
        if node._defer_restore(name, np.array(arr, copy=True)):
            status._unused.discard(key)
    for obj, pending in waiting.values():
        current = obj.__dict__.get("_tf_pending_restore")
        if current is None:
            obj.__dict__["_tf_pending_restore"] = current = _PendingRestore()
        current.add(pending, status, tf_names)


def _waiting_ancestor(nodes: dict, key: str) -> tuple[Any, str] | None:
    """The deepest existing node above ``key`` if it can hold values until their objects are attached (a
    ``tf.train.Checkpoint``, ``tf.Module`` or tracked list/dict: TF's AutoTrackable), ``key`` relative to it."""
    parts = key.split("/")
    for cut in range(len(parts) - 1, -1, -1):
        node = nodes.get("/".join(parts[:cut]))
        if node is not None:
            if getattr(type(node), "_tf_waits_for_attachments", False):
                return node, "/".join(parts[cut:])
            return None  # a node of another kind (a Keras layer, an optimizer) takes no late attachments
    return None


class _PendingRestore:
    """Saved values below a node whose objects do not exist yet (``{relative path: (stored key, value,
    load status)}``); applied when an object is attached at that path."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[str, np.ndarray, CheckpointLoadStatus, bool]] = {}

    def add(self, entries: dict[str, tuple[str, np.ndarray]], status: CheckpointLoadStatus,
            tf_names: bool = False) -> None:
        for rel, (key, arr) in entries.items():
            self.entries[rel] = (key, arr, status, tf_names)

    def attach(self, parent: Any, name: str, child: Any) -> None:
        prefix = name + "/"
        take = {rel: e for rel, e in self.entries.items() if rel == name or rel.startswith(prefix)}
        if not take:
            return
        for rel in take:
            del self.entries[rel]
        if not self.entries:
            del parent.__dict__["_tf_pending_restore"]
        if isinstance(child, Variable):
            if name in take:
                key, arr, status, _ = take[name]
                _check_compatible(key, child, arr)
                child._value = np.array(arr, copy=True)
                status._unused.discard(key)
            return
        if _children(child) is None:
            return
        walks: dict[bool, tuple] = {}
        by_status: dict[tuple, tuple[CheckpointLoadStatus, dict]] = {}
        for rel, (key, arr, status, tf_names) in take.items():
            if rel != name:
                by_status.setdefault((id(status), tf_names), (status, {}))[1][rel[len(prefix):]] = (key, arr)
        for (_, tf_names), (status, sub) in by_status.items():
            if tf_names not in walks:
                walks[tf_names] = _walk_tf(child)[:2] if tf_names else _walk(child)
            _restore_into(child, *walks[tf_names], sub, status, tf_names)


class CheckpointLoadStatus:
    """What a restore matched, as TF's load status object."""

    def __init__(self, path: str, unmatched_objects: list, unused_keys: Any) -> None:
        self.save_path = path
        self._unmatched = unmatched_objects
        self._unused = set(unused_keys)  # stored keys not restored yet (a deferred restore removes its own)
        self._silenced = False

    def __del__(self) -> None:
        # TF logs these when the restored object goes away with values of the checkpoint left unused.
        if getattr(self, "_unused", None) and not self._silenced:
            warnings.warn(
                "Detecting that an object or model or tf.train.Checkpoint is being deleted with unrestored values. "
                "See the following logs for the specific values in question. To silence these warnings, use "
                "`status.expect_partial()`. See https://www.tensorflow.org/api_docs/python/tf/train/Checkpoint#restore"
                " for details about the status object returned by the restore function.\n"
                + "\n".join("Value in checkpoint could not be found in the restored object: (root)."
                            + _tf_key(k).replace("/", ".") for k in sorted(self._unused)), UserWarning, stacklevel=2)

    def assert_consumed(self) -> CheckpointLoadStatus:
        """Raises unless every saved value was used and every variable restored."""
        self.assert_existing_objects_matched()
        self._silenced = True  # it raises instead of warning
        if self._unused:
            raise AssertionError(
                f"Unresolved values in checkpoint {self.save_path}: {sorted(self._unused)[:10]}. The checkpoint "
                "holds objects the program does not (use expect_partial() to allow it)."
            )
        return self

    def assert_existing_objects_matched(self) -> CheckpointLoadStatus:
        """Raises if a variable of the program had no value in the checkpoint."""
        if self._unmatched:
            raise AssertionError(
                f"Found {len(self._unmatched)} Python objects that were not bound to checkpointed values, likely "
                f"due to changes in the Python program. Showing {min(len(self._unmatched), 10)} of "
                f"{len(self._unmatched)} unmatched objects: {self._unmatched[:10]}"
            )
        return self

    def assert_nontrivial_match(self) -> CheckpointLoadStatus:
        return self

    def expect_partial(self) -> CheckpointLoadStatus:
        """Silences the warning about checkpoint values the program did not use."""
        self._silenced = True
        return self

    def run_restore_ops(self, session: Any = None) -> None:
        return None

    def initialize_or_restore(self, session: Any = None) -> None:
        return None


class InitializationOnlyStatus(CheckpointLoadStatus):
    """``restore(None)``: nothing to load."""

    def __init__(self) -> None:
        super().__init__("", [], [])


# -- tf.train.Checkpoint -----------------------------------------------------------
class Checkpoint:
    """Groups trackable objects to save and restore together.

    >>> ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
    >>> path = ckpt.save("/tmp/run/ckpt")        # "/tmp/run/ckpt-1"
    >>> ckpt.restore(tf.train.latest_checkpoint("/tmp/run"))
    """

    def __init__(self, root: Any = None, **kwargs: Any) -> None:
        objects: dict[str, Any] = {}
        if root is not None:
            if not _is_trackable(root):
                raise ValueError(f"`Checkpoint` was expecting root to be a trackable object (an object derived "
                                 f"from `Trackable`), got {root}.")
            objects.update(_children(root) or [])
        for name, obj in kwargs.items():
            if not _is_trackable(obj):
                raise ValueError(
                    f"`Checkpoint` was expecting {name} to be a trackable object (an object derived from "
                    f"`Trackable`), got {obj}. Pass variables, tf.Module / Keras objects or optimizers."
                )
            objects[name] = obj
        self._objects = objects
        # TF's object graph: the root's children, the keyword objects sorted, then ones assigned later
        self._kwargs = dict(sorted(kwargs.items(), key=lambda kv: kv[0]))
        self._root = root
        self._save_counter: Variable | None = None
        for name, obj in kwargs.items():
            if not hasattr(type(self), name):
                setattr(self, name, obj)  # ckpt.model, as TF

    _tf_waits_for_attachments = True  # see _PendingRestore

    def __setattr__(self, name: str, value: Any) -> None:
        # `ckpt.step = tf.Variable(0)` after construction is tracked too, as TF (a list or dict as TF's
        # tracked wrapper); a restore still waiting for values at that name applies them now.
        if not name.startswith("_") and "_objects" in self.__dict__:
            value = wrap_container(value)
            if _is_trackable(value):
                self._objects[name] = value
                self._kwargs[name] = value
        object.__setattr__(self, name, value)
        if "_tf_pending_restore" in self.__dict__:
            _attached(self, name, value)

    @property
    def save_counter(self) -> Variable:
        """How many times ``save`` ran (saved with the checkpoint)."""
        if self._save_counter is None:
            self._save_counter = Variable(np.int64(0), trainable=False, name="save_counter")
            if "_tf_pending_restore" in self.__dict__:  # read() before: the saved count lands now, as in TF
                _attached(self, "save_counter", self._save_counter)
        return self._save_counter

    def _trackable_children(self, save_type: str = "checkpoint", **kwargs: Any) -> dict:
        kids = dict(self._objects)
        if self._save_counter is not None:  # as TF: made by the first save()/restore(), so write() alone omits it
            kids["save_counter"] = self._save_counter
        return kids

    def write(self, file_prefix: str, options: Any = None) -> str:
        """Writes the checkpoint to ``file_prefix`` in TF's format (``file_prefix.index`` and
        ``file_prefix.data-00000-of-00001``; a prefix ending in ``.safetensors`` writes that one file,
        tapeflow's earlier format); returns ``file_prefix``. No counter, no state file."""
        prefix = os.fspath(file_prefix)
        if prefix.endswith(_SUFFIX):
            _save_object(self, prefix)
        else:
            _save_tf(self, prefix)
        return prefix

    def save(self, file_prefix: str, options: Any = None) -> str:
        """Saves to ``f"{file_prefix}-{save_counter}"`` and records it in the
        folder's ``checkpoint`` state file; returns that path."""
        counter = self.save_counter
        counter._value = np.asarray(counter._value + 1, dtype=np.int64)
        path = f"{os.fspath(file_prefix)}-{int(counter._value)}"
        try:
            self.write(path)
        except BaseException:
            counter._value = np.asarray(counter._value - 1, dtype=np.int64)
            raise
        folder = os.path.dirname(path) or "."
        state = _read_state(folder)
        paths = [p for p in (state["all"] if state else []) if p != path] + [path]
        _write_state(folder, path, paths, [])
        return path

    def read(self, save_path: str, options: Any = None) -> CheckpointLoadStatus:
        """Restores from ``save_path`` (as written by ``write``, by tapeflow or TF). As TF's, it makes no
        ``save_counter``: a saved one waits for ``save()`` (or ``restore``) to create it."""
        return _restore_object(self, save_path)

    def restore(self, save_path: str | None, options: Any = None) -> CheckpointLoadStatus:
        """Restores from ``save_path`` (``None``: nothing, as TF). Every value
        is checked before any is assigned."""
        if save_path is None:
            return InitializationOnlyStatus()
        self.save_counter  # noqa: B018 -- created so that a saved counter is restored
        return _restore_object(self, save_path)


# -- the state file and CheckpointManager -----------------------------------------
def _read_state(folder: str, latest_filename: str | None = None) -> dict | None:
    path = os.path.join(folder, latest_filename or _STATE_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    latest = None
    paths: list[str] = []
    stamps: list[float] = []
    preserved = None
    for line in text.splitlines():
        m = re.match(r'\s*(\w+)\s*:\s*"?(.*?)"?\s*$', line)
        if not m:
            continue
        key, value = m.groups()
        full = value if os.path.isabs(value) else os.path.join(folder, value)
        if key == "model_checkpoint_path":
            latest = full
        elif key == "all_model_checkpoint_paths":
            paths.append(full)
        elif key == "all_model_checkpoint_timestamps":
            stamps.append(float(value))
        elif key == "last_preserved_timestamp":
            preserved = float(value)
    return {"latest": latest, "all": paths, "timestamps": stamps, "preserved": preserved}


def _write_state(folder: str, latest: str, paths: list[str], stamps: list[float],
                 preserved: float | None = None) -> None:
    def rel(p: str) -> str:
        return os.path.basename(p) if os.path.dirname(os.path.abspath(p)) == os.path.abspath(folder) else p

    lines = [f'model_checkpoint_path: "{rel(latest)}"']
    lines += [f'all_model_checkpoint_paths: "{rel(p)}"' for p in paths]
    lines += [f"all_model_checkpoint_timestamps: {t}" for t in stamps]
    if preserved is not None:
        lines.append(f"last_preserved_timestamp: {preserved}")
    _atomic_write(os.path.join(folder, _STATE_FILE), ("\n".join(lines) + "\n").encode())


def latest_checkpoint(checkpoint_dir: str, latest_filename: str | None = None) -> str | None:
    """The newest checkpoint recorded in ``checkpoint_dir`` (None if none)."""
    state = _read_state(os.fspath(checkpoint_dir), latest_filename)
    if not state or not state["latest"]:
        return None
    latest = state["latest"]
    return latest if _exists(latest) else None


class CheckpointState:
    """What ``tf.train.get_checkpoint_state`` returns (TF's ``CheckpointState`` proto's fields)."""

    def __init__(self, model_checkpoint_path: str, all_model_checkpoint_paths: list[str],
                 all_model_checkpoint_timestamps: list[float], last_preserved_timestamp: float) -> None:
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = all_model_checkpoint_paths
        self.all_model_checkpoint_timestamps = all_model_checkpoint_timestamps
        self.last_preserved_timestamp = last_preserved_timestamp

    def __repr__(self) -> str:
        lines = [f'model_checkpoint_path: "{self.model_checkpoint_path}"']
        lines += [f'all_model_checkpoint_paths: "{p}"' for p in self.all_model_checkpoint_paths]
        return "\n".join(lines) + "\n"


def get_checkpoint_state(checkpoint_dir: str, latest_filename: str | None = None) -> CheckpointState | None:
    """The ``checkpoint`` state file of ``checkpoint_dir`` (None when there is none), as TF."""
    state = _read_state(os.fspath(checkpoint_dir), latest_filename)
    if not state or not state["latest"]:
        return None
    return CheckpointState(state["latest"], state["all"], state["timestamps"], state["preserved"] or 0.0)


class CheckpointManager:
    """Saves numbered checkpoints in a folder and keeps the newest
    ``max_to_keep`` (``None``: all), as ``tf.train.CheckpointManager``."""

    def __init__(self, checkpoint: Checkpoint, directory: str, max_to_keep: int | None,
                 keep_checkpoint_every_n_hours: float | None = None, checkpoint_name: str = "ckpt",
                 step_counter: Any = None, checkpoint_interval: int | None = None, init_fn: Any = None) -> None:
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"CheckpointManager expects a tf.train.Checkpoint, got {type(checkpoint).__name__}.")
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, got {max_to_keep}.")
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("`step_counter` should be passed if `checkpoint_interval` is not None.")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._keep_every_s = keep_checkpoint_every_n_hours * 3600.0 if keep_checkpoint_every_n_hours else None
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter = step_counter
        self._interval = checkpoint_interval
        self._init_fn = init_fn
        self._last_step: int | None = None
        state = _read_state(self._directory)
        now = time.time()
        self._maybe_delete: list[tuple[str, float]] = []
        self._last_preserved = now
        self._latest: str | None = None
        if state:
            stamps = state["timestamps"] if len(state["timestamps"]) == len(state["all"]) else [now] * len(state["all"])
            self._maybe_delete = [(p, t) for p, t in zip(state["all"], stamps) if _exists(p)]
            self._latest = state["latest"] if state["latest"] and _exists(state["latest"]) else None
            if state["preserved"] is not None:
                self._last_preserved = state["preserved"]

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def checkpoint(self) -> Checkpoint:
        return self._checkpoint

    @property
    def checkpoints(self) -> list[str]:
        """Paths of the kept checkpoints, oldest first."""
        return [p for p, _ in self._maybe_delete]

    @property
    def latest_checkpoint(self) -> str | None:
        return self._latest

    @property
    def checkpoint_interval(self) -> int | None:
        return self._interval

    def save(self, checkpoint_number: int | None = None, check_interval: bool = True,
             options: Any = None) -> str | None:
        """Writes ``{directory}/{checkpoint_name}-{N}``; deletes the oldest
        beyond ``max_to_keep``; returns the path (None if the interval says
        it is too early)."""
        if self._interval is not None and check_interval:
            step = int(np.asarray(self._step_counter))
            if self._last_step is not None and step - self._last_step < self._interval:
                return None
            self._last_step = step
        counter = self._checkpoint.save_counter
        counter._value = np.asarray(counter._value + 1, dtype=np.int64)
        number = int(counter._value) if checkpoint_number is None else int(np.asarray(checkpoint_number))
        path = f"{self._prefix}-{number}"
        self._remove_stale_tmp()
        self._checkpoint.write(path)
        now = time.time()
        self._maybe_delete = [(p, t) for p, t in self._maybe_delete if p != path] + [(path, now)]
        self._latest = path
        self._sweep()
        _write_state(self._directory, path, self.checkpoints, [t for _, t in self._maybe_delete],
                     self._last_preserved)
        return path

    def _sweep(self) -> None:
        if self._max_to_keep is None:
            return
        while len(self._maybe_delete) > self._max_to_keep:
            path, stamp = self._maybe_delete.pop(0)
            if self._keep_every_s is not None and stamp - self._last_preserved >= self._keep_every_s:
                self._last_preserved = stamp  # kept forever, no longer managed
                continue
            _remove_checkpoint(path)

    def _remove_stale_tmp(self, min_age_s: float = 10.0) -> None:
        """Removes the temporary files a save killed mid-write left behind (``.<name>-N....tmp`` and
        ``.checkpoint....tmp``), when older than ``min_age_s`` (a save running elsewhere keeps its own)."""
        name = os.path.basename(self._prefix)
        try:
            entries = os.listdir(self._directory)
        except OSError:
            return
        now = time.time()
        for e in entries:
            if e.endswith(".tmp") and (e.startswith(f".{name}-") or e.startswith(f".{_STATE_FILE}.")):
                p = os.path.join(self._directory, e)
                try:
                    if now - os.path.getmtime(p) >= min_age_s:
                        os.remove(p)
                except OSError:
                    pass

    def restore_or_initialize(self) -> str | None:
        """Restores the latest checkpoint if any (returns its path), else runs
        ``init_fn`` (returns None)."""
        self._remove_stale_tmp()
        if self._latest is not None:
            self._checkpoint.restore(self._latest)
            return self._latest
        if self._init_fn is not None:
            self._init_fn()
        return None


# -- reading checkpoints without objects -------------------------------------------
_OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"
NAME_BASED = "name_based"  # metadata flag of a TF 1 checkpoint: keys are variable names (no object graph)


def _tf_name(key: str) -> str:
    """TF's name of a stored key: ``model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE`` (an iterator's state
    ``it/.ATTRIBUTES/ITERATOR_STATE``)."""
    if key.endswith("/_iterator_state") or key == "_iterator_state":
        return key[:-len("_iterator_state")] + ".ATTRIBUTES/ITERATOR_STATE"
    return key + "/.ATTRIBUTES/VARIABLE_VALUE"


_OBJECT_GRAPH_META = "object_graph"  # the file's TrackableObjectGraph proto, in hex


def _object_graph(arrays: dict, meta: dict) -> bytes:
    # TF stores its TrackableObjectGraph proto under this key: saved with the file (a file written before
    # tapeflow did gives the stored paths as a JSON list)
    proto = meta.get(_OBJECT_GRAPH_META)
    return bytes.fromhex(proto) if proto is not None else json.dumps(sorted(arrays)).encode()


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | 0x80 if n else low)
        if not n:
            return bytes(out)


def _pb(field: int, payload: bytes | int) -> bytes:
    """One protobuf field: a varint (int) or length-delimited (bytes) value."""
    if isinstance(payload, int):
        return _varint(field << 3) + _varint(payload)
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _proto_children(node: Any) -> list[tuple[str, Any]]:
    kids = _children(node) or []
    if isinstance(node, Checkpoint):  # TF tracks a Checkpoint's keyword objects sorted, save_counter after
        kids = sorted((k for k in kids if k[0] != "save_counter"), key=lambda k: k[0]) + [
            k for k in kids if k[0] == "save_counter"]
    return [(name, child) for name, child in kids if _is_trackable(child)]


def _object_graph_proto(root: Any, variables: dict[str, Variable]) -> bytes:
    """TF's ``TrackableObjectGraph`` proto of ``root``: the objects in breadth-first order (root first), each
    with its children (node id, local name), a variable's ``VARIABLE_VALUE`` attribute (its name and
    checkpoint key) and ``has_checkpoint_values`` where values lie below. Optimizer slot variables are
    stored as the plain variables tapeflow tracks (TF links them to their variables as ``slot_variables``)."""
    keys = {}
    for path, v in variables.items():
        keys.setdefault(id(v), path)
    ids, order, refs = {id(root): 0}, [root], []
    for node in order:  # grows while walked: breadth first
        mine = []
        if not isinstance(node, Variable):
            for name, child in _proto_children(node):
                cid = ids.get(id(child))
                if cid is None:
                    cid = ids[id(child)] = len(order)
                    order.append(child)
                mine.append((cid, name))
        refs.append(mine)
    has = [isinstance(n, Variable) and id(n) in keys for n in order]
    changed = True
    while changed:  # a node has values when one of its children has (aliases can point back: a fixpoint)
        changed = False
        for i, mine in enumerate(refs):
            if not has[i] and any(has[c] for c, _ in mine):
                has[i] = changed = True
    out = []
    for i, node in enumerate(order):
        body = b"".join(_pb(1, _pb(1, c) + _pb(2, name.encode())) for c, name in refs[i])
        if isinstance(node, Variable) and id(node) in keys:
            body += _pb(2, _pb(1, b"VARIABLE_VALUE") + _pb(2, node.name.split(":")[0].encode())
                        + _pb(3, _tf_name(keys[id(node)]).encode()))
        if has[i]:
            body += _pb(5, _pb(1, 1))
        out.append(_pb(1, body))
    return b"".join(out)


def list_variables(ckpt_dir_or_file: str) -> list[tuple[str, list[int]]]:
    """``[(name, shape), ...]`` stored in a checkpoint, sorted, with TF's names
    (``model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE``, and ``_CHECKPOINTABLE_OBJECT_GRAPH``)."""
    return sorted(load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file: str, name: str) -> Any:
    """The stored value of ``name`` (a key from ``list_variables``; the short object path
    ``model/kernel`` of ``model/kernel/.ATTRIBUTES/VARIABLE_VALUE`` is accepted too)."""
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def _tf_key(name: str) -> str:
    if name.endswith("/.ATTRIBUTES/VARIABLE_VALUE"):
        return name[:-len("/.ATTRIBUTES/VARIABLE_VALUE")]
    if name.endswith(".ATTRIBUTES/ITERATOR_STATE"):
        return name[:-len(".ATTRIBUTES/ITERATOR_STATE")] + "_iterator_state"
    return name


class CheckpointReader:
    """Reads a checkpoint's stored values by key (``tf.train.load_checkpoint``'s result).
    Names are TF's (``model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE``, as ``list_variables`` shows them);
    the short object path (``model/dense/kernel``) is accepted too. Reads TF-format checkpoints (TF's or
    tapeflow's, tensors read when asked for) and tapeflow's older ``.safetensors`` files."""

    def __init__(self, path: str) -> None:
        self._path = path
        prefix = _bundle_prefix(path)
        self._bundle = tensor_bundle.BundleReader(prefix) if prefix is not None else None
        if self._bundle is not None:
            self._path = prefix
            self._names = _OBJECT_GRAPH not in self._bundle
            return
        self._arrays, meta = _read_file(path)
        self._meta = meta
        # a TF 1 name-based checkpoint (tf.compat.v1.train.Saver): keys are variable names, no object graph
        self._names = meta.get(NAME_BASED) == "1"

    def _key(self, name: str) -> str:
        stored = self._bundle if self._bundle is not None else self._arrays
        if name in stored:
            return name
        key = _tf_name(name) if self._bundle is not None else _tf_key(name)
        if key in stored and not self._names:
            return key
        keys = self._bundle.keys() if self._bundle is not None else self._arrays
        raise errors.NotFoundError(f"Key {name} not found in checkpoint {self._path}; keys: {sorted(keys)[:10]}")

    def has_tensor(self, name: str) -> bool:
        if self._bundle is not None:
            try:
                self._key(name)
                return True
            except errors.NotFoundError:
                return False
        if self._names:
            return name in self._arrays
        return name == _OBJECT_GRAPH or name in self._arrays or _tf_key(name) in self._arrays

    def get_tensor(self, name: str) -> Any:
        """The stored value: a NumPy array (a NumPy scalar for a scalar of a TF-format file, ``bytes`` for
        a scalar string such as ``_CHECKPOINTABLE_OBJECT_GRAPH``, as TF's reader)."""
        if self._bundle is not None:
            value = self._bundle.get(self._key(name))
            return value[()] if value.ndim == 0 else value
        if name == _OBJECT_GRAPH and not self._names:
            return _object_graph(self._arrays, self._meta)
        return np.array(self._arrays[self._key(name)], copy=True)

    def _tf_order(self, values: dict) -> dict:
        # TF's reader hands over a C++ unordered_map: its keys come in that map's order, which programs print
        return {k: values[k] for k in unordered_map_order(sorted(values))}

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        """TF's names (see ``list_variables``) -> shapes, in the order TF's reader lists them."""
        if self._bundle is not None:
            return self._tf_order({k: self._bundle.shape(k) for k in self._bundle.keys()})
        if self._names:
            return self._tf_order({k: list(a.shape) for k, a in self._arrays.items()})
        return self._tf_order({_OBJECT_GRAPH: [], **{_tf_name(k): list(a.shape) for k, a in self._arrays.items()}})

    def get_variable_to_dtype_map(self) -> dict[str, Any]:
        """TF's names -> dtypes, in the order TF's reader lists them."""
        from tapeflow.framework import dtypes

        if self._bundle is not None:
            return self._tf_order({k: dtypes.as_dtype(self._bundle.dtype_name(k)) for k in self._bundle.keys()})
        if self._names:
            return self._tf_order({k: dtypes.as_dtype(a.dtype) for k, a in self._arrays.items()})
        return self._tf_order({_OBJECT_GRAPH: dtypes.string,
                               **{_tf_name(k): dtypes.as_dtype(a.dtype) for k, a in self._arrays.items()}})

    def debug_string(self) -> bytes:
        if self._bundle is not None:
            return "".join(f"{k} ({self._bundle.dtype_name(k)}) {self._bundle.shape(k)}\n"
                           for k in sorted(self._bundle.keys())).encode()
        return "".join(f"{k} ({self._arrays[k].dtype}) {list(self._arrays[k].shape)}\n"
                       for k in sorted(self._arrays)).encode()


def load_checkpoint(ckpt_dir_or_file: str) -> CheckpointReader:
    """A ``CheckpointReader`` for a checkpoint file, prefix or directory (its latest checkpoint)."""
    return CheckpointReader(_resolve_any(ckpt_dir_or_file))


def _resolve_any(path: str) -> str:
    path = os.fspath(path)
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise errors.NotFoundError(f"No checkpoint recorded in directory {path}.")
        path = latest
    return _resolve(path)


# -- model.save_weights / load_weights -----------------------------------------------
def save_weights(obj: Any, path: str) -> None:
    """Writes every variable reachable from ``obj`` (keys: paths from ``obj``)
    to ``path`` exactly, atomically (for ``Model.save_weights``)."""
    if not _is_trackable(obj):
        raise ValueError(f"save_weights: {type(obj).__name__} has no variables to save (it is not trackable).")
    _save_object(obj, os.fspath(path))


def load_weights(obj: Any, path: str, skip_mismatch: bool = False) -> CheckpointLoadStatus:
    """Restores ``obj`` from a file written by ``save_weights`` (or
    ``Checkpoint.write`` of it). Every key, shape and dtype is checked before
    anything is assigned; a variable of ``obj`` missing from the file raises
    ``ValueError`` (unless ``skip_mismatch``, which loads what matches)."""
    return _restore_object(obj, os.fspath(path), strict=not skip_mismatch)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
