"""The ``.keras`` archive (Keras 3's format): a zip of ``metadata.json``, ``config.json`` (the model's
serialized config, with ``compile_config``) and ``model.weights.h5`` (see ``weights_h5``)."""

from __future__ import annotations

import datetime
import io
import json
import os
import zipfile
from typing import Any

from tapeflow.keras.saving import weights_h5
from tapeflow.keras.saving.serialization import (
    CustomObjectScope,
    deserialize_keras_object,
    serialize_keras_object,
)

__all__ = ["save_model", "load_model"]

KERAS_VERSION = "3.15.1"  # the Keras version whose format this writes


def save_model(model: Any, filepath: Any, overwrite: bool = True, zipped: bool | None = None, **kwargs: Any) -> None:
    """Saves architecture, weights and optimizer state to a ``.keras`` file (Keras 3's ``model.save``)."""
    include_optimizer = kwargs.pop("include_optimizer", True)  # as Keras 3: only its legacy .h5 writer reads it
    save_format = kwargs.pop("save_format", False)
    filepath = os.fspath(filepath)
    if save_format:
        if filepath.endswith((".h5", ".hdf5", ".keras")):
            raise ValueError(
                "The `save_format` argument is deprecated in Keras 3. We recommend removing this "
                "argument as it can be inferred from the file path. "
                f"Received: save_format={save_format}"
            )
        raise ValueError(
            "The `save_format` argument is deprecated in Keras 3. Please remove this argument and pass "
            f"a file path with either `.keras` or `.h5` extension.Received: save_format={save_format}"
        )
    if kwargs:
        raise ValueError(f"The following argument(s) are not supported: {list(kwargs.keys())}")
    if filepath.endswith((".h5", ".hdf5")):
        if os.path.exists(filepath) and not overwrite:
            raise FileExistsError(f"{filepath} exists and overwrite=False")
        import sys

        from tapeflow.keras.saving import legacy_h5

        print("WARNING:absl:You are saving your model as an HDF5 file via `model.save()` or "  # Keras's warning
              "`keras.saving.save_model(model)`. This file format is considered legacy. We recommend using "
              "instead the native Keras format, e.g. `model.save('my_model.keras')` or "
              "`keras.saving.save_model(model, 'my_model.keras')`. ", file=sys.stderr)
        legacy_h5.save_model_to_hdf5(model, filepath, include_optimizer=include_optimizer)
        return
    if not filepath.endswith(".keras"):
        raise ValueError(
            "Invalid filepath extension for saving. Please add either a `.keras` extension for the "
            "native Keras format (recommended) or a `.h5` extension. Use `model.export(filepath)` if "
            "you want to export a SavedModel for use with TFLite/TFServing/etc. "
            f"Received: filepath={filepath}."
        )
    if os.path.exists(filepath) and not overwrite:
        raise FileExistsError(f"{filepath} exists and overwrite=False")
    weights_h5.h5py_module()
    config = serialize_keras_object(model)
    if hasattr(model, "compile"):
        config.setdefault("compile_config", {})  # Keras 3 writes {} for an uncompiled model
    metadata = {"keras_version": KERAS_VERSION, "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    weights = weights_h5.write_h5_bytes(model)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("metadata.json", json.dumps(metadata))
        z.writestr("config.json", json.dumps(config))
        z.writestr("model.weights.h5", weights)
        _write_assets(model, z)
    from tapeflow.train.checkpoint import _atomic_write

    _atomic_write(filepath, buf.getvalue())  # atomic; under several processes written by rank 0 only, then a barrier


def load_model(
    filepath: Any,
    custom_objects: dict | None = None,
    compile: bool = True,  # noqa: A002
    safe_mode: bool = True,
) -> Any:
    """Loads a ``.keras`` file written by ``model.save`` (tapeflow's or real Keras 3's)."""
    filepath = os.fspath(filepath)
    if filepath.endswith(".keras") and os.path.isfile(filepath) and zipfile.is_zipfile(filepath):
        with zipfile.ZipFile(filepath) as z:
            names = set(z.namelist())
            if "config.json" not in names:
                raise ValueError(
                    f"{filepath} is a zip file but not a Keras archive: it has no config.json "
                    f"(entries: {sorted(names)})."
                )
            config = json.loads(z.read("config.json"))
            weights = z.read("model.weights.h5") if "model.weights.h5" in names else None
            from tapeflow.keras.saving.serialization import SafeModeScope

            with SafeModeScope(safe_mode):
                model = _model_from_archive(config, weights, filepath, custom_objects, compile)
            _read_assets(model, z)
        return model
    if filepath.endswith((".h5", ".hdf5")):
        from tapeflow.keras.saving import legacy_h5

        return legacy_h5.load_model_from_hdf5(filepath, custom_objects, compile)
    if filepath.endswith(".keras"):
        if os.path.isfile(filepath):
            raise ValueError(
                f"{filepath} is not a zip file, so not a `.keras` archive (corrupt, truncated, or "
                f"another format under this name)."
            )
        raise ValueError(
            f"File not found: filepath={filepath}. Please ensure the file is an accessible `.keras` zip file."
        )
    raise ValueError(
        f"File format not supported: filepath={filepath}. Keras 3 only supports V3 `.keras` files, legacy H5 "
        f"format files (`.h5` extension). Note that the legacy SavedModel format is not supported by `load_model()` "
        f"in Keras 3. In order to reload a TensorFlow SavedModel as an inference-only layer in Keras 3, use "
        f"`keras.layers.TFSMLayer({filepath}, call_endpoint='serving_default')` (note that your `call_endpoint` "
        f"might have a different name)."
    )


def _model_from_archive(
    config: dict, weights: bytes | None, source: str, custom_objects: dict | None, compile: bool
) -> Any:  # noqa: A002
    compile_config = config.get("compile_config")
    inner = {k: v for k, v in config.items() if k != "compile_config"}
    with CustomObjectScope(custom_objects or {}):
        model = deserialize_keras_object(inner, custom_objects)
        if compile and compile_config:
            compile_from_config(model, compile_config, custom_objects)
    if weights is not None:
        h5py = weights_h5.h5py_module()
        with h5py.File(io.BytesIO(weights), "r") as f:
            weights_h5.read_h5_into(model, f, source)
    return model


def compile_from_config(model: Any, config: dict, custom_objects: dict | None = None) -> None:
    """``model.compile`` from a ``compile_config`` (as Keras 3's ``Model.compile_from_config``)."""

    def get(value: Any) -> Any:
        return deserialize_keras_object(value, custom_objects) if isinstance(value, (dict, list)) else value

    kwargs = {
        "optimizer": get(config.get("optimizer")),
        "loss": get(config.get("loss")),
        "metrics": get(config.get("metrics")),
        "weighted_metrics": get(config.get("weighted_metrics")),
        "run_eagerly": bool(config.get("run_eagerly", False)),
        "steps_per_execution": config.get("steps_per_execution", 1),
    }
    if config.get("loss_weights") is not None:
        kwargs["loss_weights"] = get(config["loss_weights"])
    model.compile(**kwargs)


def _write_assets(model: Any, z: zipfile.ZipFile) -> None:
    """Each layer's ``save_assets(dir)`` files (a lookup layer's ``vocabulary.txt``) go to
    ``assets/<its path>/`` in the archive, as Keras 3 writes them."""
    import tempfile

    for path, obj in weights_h5.saveable_paths(model):
        save_assets = getattr(obj, "save_assets", None)
        if not callable(save_assets):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            save_assets(tmp)
            for root, _, files in os.walk(tmp):
                for name in sorted(files):
                    rel = os.path.relpath(os.path.join(root, name), tmp).replace(os.sep, "/")
                    z.write(os.path.join(root, name), "/".join(p for p in ("assets", path, rel) if p))


def _read_assets(model: Any, z: zipfile.ZipFile) -> None:
    """Hands each layer with ``load_assets`` its ``assets/<path>/`` folder of the archive (after the weights)."""
    import tempfile

    names = z.namelist()
    for path, obj in weights_h5.saveable_paths(model):
        load_assets = getattr(obj, "load_assets", None)
        prefix = "/".join(p for p in ("assets", path) if p) + "/"
        mine = [n for n in names if n.startswith(prefix) and not n.endswith("/")
                and "/" not in n[len(prefix):]]
        if not callable(load_assets) or not mine:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            for n in mine:
                with open(os.path.join(tmp, n[len(prefix):]), "wb") as f:
                    f.write(z.read(n))
            load_assets(tmp)
