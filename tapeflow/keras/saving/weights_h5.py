"""Keras 3's ``.weights.h5`` layout (also ``model.weights.h5`` inside a ``.keras`` archive), via h5py.

Each saveable object (layer, model, optimizer) owns one group ``<path>/vars`` with attribute
``name`` and datasets ``"0"``, ``"1"``, ... (its own variables: trainable first, then
non-trainable, in creation order; an optimizer's ``variables`` in Keras' order). Paths come from
Keras' walk: ``layers/<snake_case class name>[_N]`` for a model's layer list, attribute names
for attributes (``optimizer``, ``d1``), visited in sorted order with private names last; an
object reached twice is stored once, where first met. The root model's own group is ``vars``.
"""

from __future__ import annotations

import io
import os
import warnings
from typing import Any

import numpy as np

__all__ = ["save_weights_h5", "load_weights_h5", "h5py_module", "write_h5_bytes", "read_h5_into"]

_HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"


def h5py_module() -> Any:
    try:
        import h5py
    except ImportError:
        raise ImportError(
            "Keras' .weights.h5 and .keras files need the h5py package: "
            "pip install 'tapeflow[keras]' (or pip install h5py)."
        ) from None
    return h5py


def _is_layer(x: Any) -> bool:
    from tapeflow.keras.layers.base import Layer

    return isinstance(x, Layer)


def _is_optimizer(x: Any) -> bool:
    from tapeflow.keras.optimizers.optimizer import Optimizer

    return isinstance(x, Optimizer)


def _saveable(x: Any) -> bool:
    return _is_layer(x) or _is_optimizer(x)


def _holds_saveables(x: Any) -> bool:
    if isinstance(x, dict):
        x = list(x.values())
    return isinstance(x, (list, tuple)) and any(_saveable(v) or _holds_saveables(v) for v in x)


def _name_key(name: str) -> str:
    return f"~{name}" if name.startswith("_") else name


def _children(obj: Any) -> list[tuple[str, Any]]:
    """(attribute, child) in Keras' walk order (saving_lib._walk_saveable)."""
    if _is_optimizer(obj):
        return []
    from tapeflow.keras.layers.base import _UNTRACKED, Layer
    from tapeflow.keras.models import Model, Sequential

    out: list[tuple[str, Any]] = []
    is_graph = isinstance(obj, Sequential) or (isinstance(obj, Model) and obj._functional is not None)
    if is_graph:
        out.append(("layers", obj.layers))
    attrs: dict[str, Any] = {}
    for key, value in vars(obj).items():
        if key.startswith("__") or key in _UNTRACKED or key in ("_own_trainable", "_own_non_trainable"):
            continue
        if _saveable(value) or _holds_saveables(value):
            attrs[key] = value
    if isinstance(obj, Model) and not is_graph:
        attrs["layers"] = obj.layers
    attrs.update(_subclass_properties(obj, Model if isinstance(obj, Model) else Layer))
    out += sorted(attrs.items(), key=lambda kv: _name_key(kv[0]))
    return out


def _subclass_properties(obj: Any, base: type) -> dict[str, Any]:
    """Saveables that properties of ``obj``'s own classes return: Keras walks ``dir(obj)`` less its base
    class's attributes, so a public property (MultiHeadAttention's ``query_dense``) names the group before
    the private attribute behind it."""
    found: dict[str, Any] = {}
    skip = set(dir(base))
    for key in dir(type(obj)):
        if key.startswith("__") or key in skip or not isinstance(getattr(type(obj), key, None), property):
            continue
        try:
            value = getattr(obj, key)
        except Exception:  # noqa: BLE001 - as Keras: a property that cannot be read is not walked
            continue
        if _saveable(value) or _holds_saveables(value):
            found[key] = value
    return found


def _custom_store(obj: Any) -> bool:
    """Whether ``obj`` writes its own weights-file entries (Keras's ``save_own_variables``/
    ``load_own_variables``) instead of its variables in order."""
    return callable(getattr(obj, "save_own_variables", None)) and callable(getattr(obj, "load_own_variables", None))


def _own_variables(obj: Any) -> list:
    if _is_optimizer(obj):
        return list(obj.variables)
    return list(obj._own_trainable) + list(obj._own_non_trainable)


def saveable_paths(root: Any) -> list[tuple[str, Any]]:
    """Every saveable object under ``root`` with its Keras path ("" for the root)."""
    found: list[tuple[str, Any]] = []
    visited: set[int] = set()

    def join(a: str, b: str) -> str:
        return f"{a}/{b}" if a else b

    def visit(obj: Any, path: str) -> None:
        if id(obj) in visited:
            return
        visited.add(id(obj))
        found.append((path, obj))
        for attr, child in _children(obj):
            if _saveable(child):
                visit(child, join(path, attr))
            elif isinstance(child, (list, tuple, dict)):
                container(child, join(path, attr), set())

    def container(items: Any, path: str, seen: set) -> None:
        if id(items) in seen:
            return
        seen.add(id(items))
        used: dict[str, int] = {}
        for item in list(items.values()) if isinstance(items, dict) else items:
            if _saveable(item):
                from tapeflow.keras.layers.base import to_snake_case

                visit(item, join(path, _unique(to_snake_case(type(item).__name__), used)))
            elif isinstance(item, (list, tuple, dict)):
                container(item, join(path, _unique("container", used)), seen)

    visit(root, "")
    return found


def _unique(name: str, used: dict[str, int]) -> str:
    if name not in used:
        used[name] = 0
        return name
    used[name] += 1
    return f"{name}_{used[name]}"


# -- writing -------------------------------------------------------------------------------
def write_h5(model: Any, f: Any) -> None:
    for path, obj in saveable_paths(model):
        group = f.create_group(f"{path}/vars" if path else "vars")
        group.attrs["name"] = obj.name
        if _custom_store(obj):  # Keras's save_own_variables (the lookup layers' idf_weights)
            store: dict = {}
            obj.save_own_variables(store)
            for key, value in store.items():
                group[key] = np.asarray(value)
            continue
        for i, v in enumerate(_own_variables(obj)):
            group[str(i)] = np.asarray(v.numpy())


def write_h5_bytes(model: Any) -> bytes:
    h5py = h5py_module()
    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        write_h5(model, f)
    return buf.getvalue()


def save_weights_h5(model: Any, filepath: str) -> None:
    """Writes ``model``'s weights (and its optimizer's variables) to ``filepath`` in Keras 3's layout, atomically."""
    h5py_module()
    data = write_h5_bytes(model)
    from tapeflow.train.checkpoint import _atomic_write

    _atomic_write(filepath, data)  # atomic; under several processes written by rank 0 only, then a barrier


# -- reading -------------------------------------------------------------------------------
def _open_h5(filepath: str) -> Any:
    h5py = h5py_module()
    with open(filepath, "rb") as fh:
        head = fh.read(16)
    if head[:8] != _HDF5_MAGIC:
        if len(head) >= 9 and head[8:9] == b"{":
            raise ValueError(
                f"{filepath} is not an HDF5 file: it holds a safetensors file (older tapeflow versions "
                f"wrote save_weights as safetensors under any name). Rename it to .safetensors to load "
                f"it, or save the weights again."
            )
        raise ValueError(
            f"{filepath} is not an HDF5 file (its first bytes are {head[:8]!r}, not HDF5's signature); "
            f"a .weights.h5 file must be written by model.save_weights (Keras 3 or tapeflow)."
        )
    return h5py.File(filepath, "r")


def read_h5_into(model: Any, f: Any, source: str, skip_mismatch: bool = False) -> None:
    """Assigns the weights stored in the open h5py file ``f`` to ``model``; checks everything first."""
    if "layer_names" in f.attrs or "model_weights" in f:  # a legacy file: model.save("m.h5"), Keras 2's weights
        from tapeflow.keras.saving import legacy_h5

        if skip_mismatch:
            raise NotImplementedError("load_weights(skip_mismatch=True) of a legacy HDF5 file")
        return legacy_h5.load_weights_from_hdf5(f["model_weights"] if "model_weights" in f else f, model)
    if "vars" not in f and "layers" not in f and not any(k for k in f.keys()):
        raise ValueError(f"{source} is an HDF5 file but holds no Keras weights (no 'vars'/'layers' groups).")
    plan: list[tuple[Any, np.ndarray]] = []
    loaded: list[Any] = []
    custom: list[tuple[Any, dict]] = []
    for path, obj in saveable_paths(model):
        variables = _own_variables(obj)
        key = f"{path}/vars" if path else "vars"
        group = f[key] if key in f else None
        if _custom_store(obj):
            custom.append((obj, {} if group is None else {k: group[k][()] for k in group.keys()}))
            continue
        if group is None and "_layer_checkpoint_dependencies" in f:  # files of Keras 2.13
            alt = key.replace("layers", "_layer_checkpoint_dependencies")
            group = f[alt] if alt in f else None
        stored = [] if group is None else sorted(group.keys(), key=lambda k: int(k) if k.isdigit() else k)
        if _is_optimizer(obj):
            if not stored:
                continue
            if not getattr(obj, "built", False) and len(stored) > len(variables):
                trainable = model.trainable_variables
                if trainable:
                    obj.build(trainable)
                variables = _own_variables(obj)
            if len(stored) != len(variables):
                warnings.warn(
                    f"Skipping variable loading for optimizer '{obj.name}', because it has "
                    f"{len(variables)} variables whereas the saved optimizer has {len(stored)} variables. ",
                    stacklevel=3,
                )
                continue
        elif len(stored) != len(variables):
            if skip_mismatch:
                warnings.warn(
                    f"Skipping loading of weights for layer '{obj.name}' (path '{path}'): it has "
                    f"{len(variables)} variables, the file {len(stored)}.",
                    stacklevel=3,
                )
                continue
            raise ValueError(
                f"Layer '{obj.name}' expected {len(variables)} variables, but received {len(stored)} "
                f"variables during loading. Expected: {[v.name for v in variables]} "
                f"(file {source}, group '{key}')"
            )
        checked = []
        for i, v in enumerate(variables):
            arr = np.asarray(group[str(i)][()] if str(i) in group else group[stored[i]][()])
            want = tuple(v.shape.as_list())
            if tuple(arr.shape) != want:
                if skip_mismatch:
                    checked = None
                    break
                raise ValueError(
                    f"The shape of the target variable and the shape of the target value in "
                    f"`variable.assign(value)` must match. variable.shape={want}, Received: "
                    f"value.shape={tuple(arr.shape)}. Target variable: {v.name} of '{obj.name}' "
                    f"(file {source}, dataset '{key}/{i}')"
                )
            checked.append((v, arr.astype(v.dtype.as_numpy_dtype, copy=False)))
        plan += checked or []
        if checked:
            loaded.append(obj)
    for v, arr in plan:
        v.assign(arr)
    for obj, store in custom:
        obj.load_own_variables(store)
    for obj in loaded:  # as Keras's Normalization.load_own_variables: derived state from the loaded variables
        finalize = getattr(obj, "finalize_state", None)
        if callable(finalize):
            finalize()


def load_weights_h5(model: Any, filepath: str, skip_mismatch: bool = False) -> None:
    """Loads a Keras 3 ``.weights.h5`` (or the weights of a ``.keras`` archive) into ``model``."""
    filepath = os.fspath(filepath)
    if not os.path.exists(filepath):
        raise FileNotFoundError(f"No such file: '{filepath}'")
    if filepath.endswith(".keras"):
        import zipfile

        with zipfile.ZipFile(filepath) as z, z.open("model.weights.h5") as fh:
            h5py = h5py_module()
            with h5py.File(io.BytesIO(fh.read()), "r") as f:
                return read_h5_into(model, f, filepath, skip_mismatch)
    with _open_h5(filepath) as f:
        read_h5_into(model, f, filepath, skip_mismatch)
