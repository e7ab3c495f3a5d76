"""``model.save_weights`` / ``load_weights`` in the safetensors format.

Keys follow Keras 3's weight-file layout: ``layers/<name>/vars/<i>``, where a
sub-layer's name is its class name in snake case, numbered per class within
its parent (``dense``, ``dense_1``), so a freshly built model of the same
architecture loads the file whatever its auto-generated layer names. Writes
are atomic (temporary file, then rename); a load checks every key and shape
before assigning anything, so a failed load leaves the model unchanged.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

import numpy as np

from tapeflow.keras.layers.base import Layer, to_snake_case

__all__ = ["weight_dict", "save_weights", "load_weights"]


def weight_dict(layer: Layer, prefix: str = "") -> dict:
    """Maps each weight of ``layer`` (and its sub-layers) to its file key."""
    out: dict = {}
    own = list(layer._own_trainable) + list(layer._own_non_trainable)
    for i, v in enumerate(own):
        out[f"{prefix}vars/{i}"] = v
    counts: dict[str, int] = {}
    for sub in layer._sublayers():
        base = to_snake_case(type(sub).__name__)
        n = counts.get(base, 0)
        counts[base] = n + 1
        name = base if n == 0 else f"{base}_{n}"
        out.update(weight_dict(sub, f"{prefix}layers/{name}/"))
    return out


def save_weights(layer: Layer, filepath: str) -> None:
    from safetensors.numpy import save_file

    filepath = os.fspath(filepath)
    tensors = {k: np.ascontiguousarray(v.numpy()) for k, v in weight_dict(layer).items()}
    tensors = {k: (a.reshape(1) if a.ndim == 0 else a) for k, a in tensors.items()}
    shapes = {k: list(v.shape.as_list()) for k, v in weight_dict(layer).items()}
    folder = os.path.dirname(os.path.abspath(filepath))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".safetensors", dir=folder)
    os.close(fd)
    try:
        save_file(tensors, tmp, metadata={"format": "tapeflow-keras-weights", "shapes": json.dumps(shapes)})
        os.replace(tmp, filepath)  # atomic: a crash never leaves a half-written file at filepath
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_weights(layer: Layer, filepath: str, skip_mismatch: bool = False) -> None:
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    filepath = os.fspath(filepath)
    if not os.path.exists(filepath):
        raise FileNotFoundError(f"load_weights: no weights file at {filepath!r}")
    try:
        stored = load_file(filepath)
        from safetensors import safe_open

        with safe_open(filepath, framework="numpy") as f:
            meta = f.metadata() or {}
    except (SafetensorError, OSError, ValueError) as e:
        raise ValueError(f"load_weights: {filepath!r} is not a readable safetensors weights file "
                         f"(corrupt or truncated?): {e}") from None
    shapes = json.loads(meta.get("shapes", "{}"))
    targets = weight_dict(layer)
    if not layer.built or not targets:
        raise ValueError(f"load_weights: model '{layer.name}' has no weights yet; build it first (call it on a "
                         f"batch or pass an input shape) so the weights exist.")
    plan = []
    missing = [k for k in targets if k not in stored]
    extra = [k for k in stored if k not in targets]
    if (missing or extra) and not skip_mismatch:
        raise ValueError(
            f"load_weights: the file {filepath!r} does not match model '{layer.name}': "
            f"{len(missing)} weight(s) missing from the file {missing[:5]}, {len(extra)} unexpected {extra[:5]}."
        )
    for key, var in targets.items():
        if key not in stored:
            continue
        arr = stored[key]
        if key in shapes:
            arr = arr.reshape(shapes[key])
        want = tuple(var.shape.as_list())
        if arr.shape != want:
            if skip_mismatch:
                continue
            raise ValueError(f"load_weights: weight {key} has shape {arr.shape} in {filepath!r} but "
                             f"{want} in model '{layer.name}'.")
        plan.append((var, arr.astype(var.dtype.as_numpy_dtype)))
    for var, arr in plan:  # assign only after every check passed
        var.assign(arr)


def _is_file_like(x: Any) -> bool:
    return hasattr(x, "write")
