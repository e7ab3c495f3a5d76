"""Keras 3's object configs: ``serialize_keras_object`` / ``deserialize_keras_object`` and the
registry of custom classes (``register_keras_serializable``).

A serialized object is Keras 3's dict, ``{"module", "class_name", "config", "registered_name"}``
(layers add ``build_config``): the same JSON real Keras writes into ``config.json``, so either side
reads the other's files. Built-in classes are found by name in tapeflow's namespace that mirrors
the Keras module (``"keras.layers"`` -> ``tf.keras.layers``), so any layer class with a
``get_config`` round-trips without code of its own; user classes are found through
``register_keras_serializable`` or ``custom_objects``.

A layer's default ``get_config`` is generated from the arguments its constructor received (as
Keras 3's auto-config): every named parameter of ``__init__`` with its value or default, plus
``name``/``trainable``/``dtype``.
"""

from __future__ import annotations

import importlib
import inspect
import random
import threading
from typing import Any

import numpy as np

__all__ = [
    "register_keras_serializable",
    "get_registered_name",
    "get_registered_object",
    "get_custom_objects",
    "custom_object_scope",
    "CustomObjectScope",
    "serialize_keras_object",
    "deserialize_keras_object",
    "SafeModeScope",
]

_GLOBAL_CUSTOM_OBJECTS: dict[str, Any] = {}  # "Package>Name" -> class or function
_GLOBAL_CUSTOM_NAMES: dict[Any, str] = {}

# -- Python lambdas: Keras writes their bytecode and reads it back only outside safe mode -----------------
_safe_modes: list = []  # the SafeModeScope stack
_unsafe = [False]  # keras.config.enable_unsafe_deserialization()
_LAMBDA_UNSAFE = ("This carries a potential risk of arbitrary code execution and thus it is disallowed by default. "
                  "If you trust the source of the artifact, you can override this error by passing "
                  "`safe_mode=False` to the loading function, or calling "
                  "`keras.config.enable_unsafe_deserialization().")


class SafeModeScope:
    """Keras's safe-mode scope: inside ``SafeModeScope(True)`` serialized lambdas are refused."""

    def __init__(self, safe_mode: bool = True) -> None:
        self.safe_mode = safe_mode

    def __enter__(self) -> SafeModeScope:
        _safe_modes.append(self.safe_mode)
        return self

    def __exit__(self, *exc: Any) -> None:
        _safe_modes.pop()


def in_safe_mode() -> bool | None:
    """False after ``enable_unsafe_deserialization()``; else the innermost scope's mode (None outside any)."""
    if _unsafe[0]:
        return False
    return _safe_modes[-1] if _safe_modes else None


def enable_unsafe_deserialization() -> None:
    _unsafe[0] = True


def func_dump(fn: Any) -> tuple:
    """Keras's ``(code, defaults, closure)`` of a function: its marshalled bytecode in base64."""
    import base64
    import marshal

    code = base64.encodebytes(marshal.dumps(fn.__code__)).decode("ascii")
    closure = tuple(c.cell_contents for c in fn.__closure__) if fn.__closure__ else None
    return code, fn.__defaults__, closure


def func_load(code: Any, defaults: Any = None, closure: Any = None) -> Any:
    """The function ``func_dump`` wrote (the same Python version's bytecode only)."""
    import base64
    import builtins
    import marshal
    import types

    if isinstance(code, (tuple, list)):
        code, defaults, closure = code
    try:
        fn_code = marshal.loads(base64.decodebytes(code.encode("ascii")))
    except (ValueError, EOFError, TypeError) as e:
        raise ValueError(f"Cannot load a serialized Python lambda ({e}): it was written by another Python version "
                         "or is corrupt; define a named function and register it instead.") from None
    cells = None
    if closure is not None:
        cells = tuple(types.CellType(v) for v in closure)
    from tapeflow.framework import namespaces

    tf = namespaces.get("tapeflow")
    globs = {"__builtins__": builtins, "tf": tf, "keras": tf.keras, "np": np}  # names lambdas commonly use
    return types.FunctionType(fn_code, globs, fn_code.co_name, tuple(defaults) if defaults else None, cells)


def load_lambda(config: dict, what: str = "a Python lambda") -> Any:
    """A ``{"class_name": "__lambda__"}`` entry's function, refused in safe mode (Keras's default)."""
    if in_safe_mode() is not False:
        raise ValueError(f"Requested the deserialization of {what}. {_LAMBDA_UNSAFE}")
    inner = config["config"]
    if "value" in inner:
        return func_load(inner["value"])
    return func_load(inner["code"], inner.get("defaults"), inner.get("closure"))


class _Scope(threading.local):
    def __init__(self) -> None:
        self.stack: list[dict] = []


_scope = _Scope()


def register_keras_serializable(package: str = "Custom", name: str | None = None) -> Any:
    """Registers a class or function under ``"package>name"`` so saved models find it again.

    >>> @tf.keras.saving.register_keras_serializable(package="MyLayers")
    ... class Scale(tf.keras.layers.Layer): ...
    """

    def decorator(arg: Any) -> Any:
        class_name = name if name is not None else arg.__name__
        key = f"{package}>{class_name}"
        if inspect.isclass(arg) and not hasattr(arg, "get_config"):
            raise ValueError("Cannot register a class that does not have a get_config() method.")
        _GLOBAL_CUSTOM_OBJECTS[key] = arg
        _GLOBAL_CUSTOM_NAMES[arg] = key
        return arg

    return decorator


def get_registered_name(obj: Any) -> str:
    """``"package>name"`` of a registered class or function, else its ``__name__``."""
    return _GLOBAL_CUSTOM_NAMES.get(obj, getattr(obj, "__name__", str(obj)))


def get_custom_objects() -> dict:
    """The global dict of registered custom objects (mutable, as Keras')."""
    return _GLOBAL_CUSTOM_OBJECTS


def get_registered_object(name: str, custom_objects: dict | None = None, module_objects: dict | None = None) -> Any:
    """The class or function registered (or in a ``custom_object_scope``, or in ``custom_objects``) as ``name``."""
    for scope in reversed(_scope.stack):
        if name in scope:
            return scope[name]
    if name in _GLOBAL_CUSTOM_OBJECTS:
        return _GLOBAL_CUSTOM_OBJECTS[name]
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if module_objects and name in module_objects:
        return module_objects[name]
    return None


class CustomObjectScope:
    """``with custom_object_scope({"MyLayer": MyLayer}):`` makes the names visible to loading."""

    def __init__(self, *custom_objects: dict) -> None:
        self.custom_objects: dict = {}
        for objects in custom_objects:
            self.custom_objects.update(objects or {})

    def __enter__(self) -> CustomObjectScope:
        _scope.stack.append(self.custom_objects)
        return self

    def __exit__(self, *exc: Any) -> None:
        _scope.stack.pop()


custom_object_scope = CustomObjectScope


# -- where Keras classes live ------------------------------------------------------------
# Keras module of a serialized object -> tapeflow namespace holding the class of that name
_NAMESPACES = {
    "keras.layers": "tapeflow.keras.layers",
    "keras.initializers": "tapeflow.keras.initializers",
    "keras.regularizers": "tapeflow.keras.regularizers",
    "keras.losses": "tapeflow.keras.losses",
    "keras.metrics": "tapeflow.keras.metrics",
    "keras.optimizers": "tapeflow.keras.optimizers",
    "keras.optimizers.schedules": "tapeflow.keras.optimizers.schedules",
    "keras": "tapeflow.keras",
    "keras.models": "tapeflow.keras.models",
    "keras.src.models.functional": "tapeflow.keras.models",
    "keras.src.models.sequential": "tapeflow.keras.models",
    "keras.constraints": "tapeflow.keras.constraints",
    "keras.activations": "tapeflow.keras.activations",
    "keras.utils": "tapeflow.keras.utils",
    "keras.src.layers.preprocessing.feature_space": "tapeflow.keras.layers.feature_space",
}


def _keras_module(cls: type) -> str | None:
    """The Keras module real Keras writes for a tapeflow class (``keras.layers`` for a layer)."""
    mod = cls.__module__
    if "_keras_module_name" in cls.__dict__:  # a class Keras saves under its source module (FeatureSpace's parts)
        return cls.__dict__["_keras_module_name"]
    if not mod.startswith("tapeflow."):
        return None if mod == "__main__" else mod
    if getattr(cls, "_keras_module", None):  # (Keras's legacy layers live in keras._legacy.layers)
        return cls._keras_module
    if cls.__name__ == "Functional":
        return "keras.src.models.functional"
    if cls.__name__ in ("Sequential", "Model") or (cls.__name__ == "Layer" and mod == "tapeflow.keras.layers.base"):
        return "keras"
    for part in ("layers", "initializers", "regularizers", "losses", "metrics", "constraints"):
        if mod.startswith(f"tapeflow.keras.{part}"):
            return f"keras.{part}"
    if mod.startswith("tapeflow.keras.optimizers.schedules"):
        return "keras.optimizers.schedules"
    if mod.startswith("tapeflow.keras.optimizers"):
        return "keras.optimizers"
    return "keras"


def _dtype_policy(name: str) -> dict:
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": name}, "registered_name": None}


# -- serialize ----------------------------------------------------------------------------
def serialize_keras_object(obj: Any) -> Any:
    """Keras 3's JSON-ready form of ``obj`` (a layer, model, optimizer, loss, initializer,
    regularizer, function, or plain data)."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (list, tuple)):  # a tuple stays a tuple, as in Keras (JSON writes both as lists)
        out = [serialize_keras_object(x) for x in obj]
        return tuple(out) if isinstance(obj, tuple) else out
    if isinstance(obj, dict):
        return {k: serialize_keras_object(v) for k, v in obj.items()}
    from tapeflow.framework.dtypes import DType
    from tapeflow.framework.tensor_shape import TensorShape

    if isinstance(obj, DType):
        return obj.name
    if isinstance(obj, TensorShape):
        return obj.as_list() if obj.rank is not None else None
    if hasattr(obj, "numpy") and hasattr(obj, "dtype") and not inspect.isclass(obj):  # a tensor or variable
        return np.asarray(obj.numpy()).tolist()
    if inspect.isfunction(obj) or inspect.isbuiltin(obj) or (callable(obj) and not hasattr(obj, "get_config")):
        return _serialize_function(obj)
    if not hasattr(obj, "get_config"):
        raise TypeError(f"Cannot serialize {obj!r} of type {type(obj).__name__}: it has no get_config().")
    cls = type(obj)
    registered = _GLOBAL_CUSTOM_NAMES.get(cls) or cls.__dict__.get("_keras_registered_name")
    if registered is None and not cls.__module__.startswith(("tapeflow.", "builtins")):
        registered = cls.__name__  # Keras names a class it does not export (a user's) by its __name__
    out = {
        "module": _keras_module(cls),
        # a class Keras exports under another name (GroupedQueryAttention as GroupQueryAttention) says so
        "class_name": cls.__dict__.get("_keras_class_name", cls.__name__),
        "config": _serialize_config(obj, obj.get_config()),
        "registered_name": registered,
    }
    if cls.__name__ == "Functional" and cls.__module__.startswith("tapeflow."):
        out["registered_name"] = "Functional"
    from tapeflow.keras.layers.base import Layer

    if isinstance(obj, Layer):
        build = obj.get_build_config()  # a class's own (IndexLookup's {}) or the generic one
        if build is not None:
            out["build_config"] = build
        compile_config = _compile_config(obj)
        if compile_config is not None:
            out["compile_config"] = compile_config
    return out


def _serialize_function(fn: Any) -> Any:
    from tapeflow.keras import activations

    name = getattr(fn, "__name__", None)
    if name is not None and activations._BY_NAME.get(name) is fn:
        return name
    registered = _GLOBAL_CUSTOM_NAMES.get(fn)
    if registered is None and getattr(fn, "__module__", "").startswith("tapeflow."):
        return name
    if name == "<lambda>":
        import warnings

        try:
            source = inspect.getsource(fn)
        except (OSError, TypeError):
            source = "<source unavailable>"
        warnings.warn("The object being serialized includes a `lambda`. This is unsafe. In order to reload the "
                      "object, you will have to pass `safe_mode=False` to the loading function. Please avoid using "
                      "`lambda` in the future, and use named Python functions instead. This is the `lambda` being "
                      f"serialized: {source}", stacklevel=3)
        return {"class_name": "__lambda__", "config": {"value": func_dump(fn)}}
    return {
        "module": "builtins",  # Keras 3 writes the class of a plain function (builtins.function)
        "class_name": "function",
        "config": registered or name,
        "registered_name": "function",
    }


def _serialize_config(obj: Any, config: dict) -> dict:
    """Keras's ``serialize_dict``: each value as it is serialized (tapeflow's classes give their configs in
    Keras's forms already; a user's ``get_config`` is written as it returns it, as Keras writes it)."""
    return {key: serialize_keras_object(value) for key, value in config.items()}


def _shape_list(shape: Any) -> Any:
    if shape is None:
        return None
    if isinstance(shape, dict):  # a layer called on a dict (an augmentation layer's images and labels)
        return {k: _shape_list(v) for k, v in shape.items()}
    if isinstance(shape, (list, tuple)) and shape and isinstance(shape[0], (list, tuple)):
        return [_shape_list(s) for s in shape]
    return tuple(None if d is None else int(d) for d in shape)  # Keras's shapes are tuples (JSON: lists)


def _shapes_dict(layer: Any) -> dict | None:
    """Keras 3's ``shapes_dict`` build config, for a layer whose ``build`` takes one shape per call argument
    (``MultiHeadAttention.build(query_shape, value_shape, key_shape)``): ``{"query_shape": [...], ...}`` of the
    first call's tensors; None where Keras writes ``input_shape`` (one shape)."""
    build = [n for n in inspect.signature(type(layer).build).parameters if n != "self"]
    if not build or build[0] == "input_shape" or not all(n.endswith("_shape") for n in build):
        return None
    node = layer._inbound_nodes[0]
    call = [n for n in inspect.signature(type(layer).call).parameters if n != "self"]
    given = {**dict(zip(call, node.args)), **node.kwargs}
    shapes = {f"{n}_shape": _shape_list(tuple(v.shape.as_list()) if hasattr(v.shape, "as_list") else tuple(v.shape))
              for n, v in given.items() if f"{n}_shape" in build and hasattr(v, "shape")}
    return shapes if len(shapes) > 1 else None  # one shape: Keras writes it as input_shape


def _build_config(layer: Any) -> dict | None:
    if type(layer).__name__ == "InputLayer" or not getattr(layer, "built", False):
        return None
    if type(layer).builds_at_init():  # Keras builds these weightless layers in __init__ (build() never runs)
        return None
    loaded = layer.__dict__.get("_loaded_build_config")
    if loaded is not None:
        return loaded
    if type(layer).__name__ == "Functional":
        return {"input_shape": None}
    if hasattr(layer, "_input_layer_obj"):  # a Sequential
        shape = (
            layer._input_layer_obj.batch_shape
            if layer._input_layer_obj is not None
            else getattr(layer, "_called_input_shape", None)
        )
        return None if shape is None else {"input_shape": _shape_list(shape)}
    shape = None
    if layer._inbound_nodes and (shapes := _shapes_dict(layer)) is not None:
        return {"shapes_dict": shapes}
    if layer._inbound_nodes:
        from tapeflow.framework import nest

        args = layer._inbound_nodes[0].args
        first = args[0] if len(args) == 1 else list(args)
        shape = nest.map_structure(
            lambda k: tuple(k.shape.as_list()) if hasattr(k.shape, "as_list") else tuple(k.shape), first
        )
    if shape is None:
        shape = getattr(layer, "_build_input_shape", None) or getattr(layer, "_called_input_shape", None)
    if shape is None:
        return None
    return {"input_shape": _shape_list(shape)}


def _compile_config(model: Any) -> dict | None:
    args = getattr(model, "_compile_args", None)
    if args is None or not getattr(model, "_compiled", False):
        return {} if hasattr(model, "compile") else None  # Keras writes {} for a model never compiled
    return {
        "optimizer": serialize_keras_object(model.optimizer),
        "loss": serialize_keras_object(args["loss"]),
        "loss_weights": serialize_keras_object(args["loss_weights"]),
        "metrics": serialize_keras_object(args["metrics"]),
        "weighted_metrics": serialize_keras_object(args["weighted_metrics"]),
        "run_eagerly": bool(args["run_eagerly"]),
        "steps_per_execution": args["steps_per_execution"],
        "jit_compile": False,
    }


# -- deserialize --------------------------------------------------------------------------
def _is_serialized(value: Any) -> bool:
    return isinstance(value, dict) and "class_name" in value and "config" in value


def _find_class(config: dict, custom_objects: dict | None) -> Any:
    class_name, module, registered = config["class_name"], config.get("module"), config.get("registered_name")
    for key in (registered, class_name):
        if key:
            found = get_registered_object(key, custom_objects)
            if found is not None:
                return found
    if module in _NAMESPACES:
        if class_name == "DTypePolicy":
            return None
        namespace = importlib.import_module(_NAMESPACES[module])
        if class_name == "Functional":
            from tapeflow.keras.models import Functional

            return Functional
        try:
            return getattr(namespace, class_name)  # a missing Keras class raises NotImplementedError naming it
        except AttributeError:
            pass
    elif module and module.startswith("keras."):
        # keras.src.* paths of built-in classes: look the name up in the layer namespace
        from tapeflow.keras import layers

        try:
            return getattr(layers, class_name)
        except AttributeError:
            pass
    raise TypeError(
        f"Could not locate class '{class_name}'. Make sure custom classes and functions are decorated with "
        f"`@keras.saving.register_keras_serializable()`. If they are already decorated, make sure they are all "
        f"imported so that the decorator is run before trying to load them. Full object config: {config}"
    )


def deserialize_keras_object(config: Any, custom_objects: dict | None = None, safe_mode: bool = True,
                             **kwargs: Any) -> Any:
    """Rebuilds the object a ``serialize_keras_object`` dict (or Keras' own config.json entry) describes."""
    if not _safe_modes and isinstance(config, dict):  # the outermost call: its safe_mode holds for what it reads
        with SafeModeScope(safe_mode):
            return deserialize_keras_object(config, custom_objects, **kwargs)
    if config is None or isinstance(config, (bool, int, float)):
        return config
    if isinstance(config, str):
        found = get_registered_object(config, custom_objects)
        return found if found is not None else config
    if isinstance(config, list):
        return [deserialize_keras_object(x, custom_objects) for x in config]
    if not isinstance(config, dict):
        return config
    if not _is_serialized(config):
        return {k: deserialize_keras_object(v, custom_objects) for k, v in config.items()}
    class_name, inner = config["class_name"], config["config"]
    if class_name == "__lambda__":
        return load_lambda(config)
    if class_name == "__keras_tensor__":
        raise ValueError("A KerasTensor config can only be deserialized inside a functional model's config.")
    if class_name == "DTypePolicy":
        from tapeflow.keras.mixed_precision import DTypePolicy

        return DTypePolicy(**inner) if isinstance(inner, dict) else DTypePolicy(inner)
    if class_name == "DTypePolicyMap":
        return inner.get("name", "float32") if isinstance(inner, dict) else inner
    if class_name == "function":
        name = inner
        found = get_registered_object(
            config.get("registered_name") if config.get("registered_name") != "function" else name, custom_objects
        ) or get_registered_object(name, custom_objects)
        if found is None:
            from tapeflow.keras import activations

            found = activations._BY_NAME.get(name)
        if found is None:
            raise TypeError(
                f"Could not locate function '{name}'. Make sure custom functions are decorated with "
                f"`@keras.saving.register_keras_serializable()`. Full object config: {config}"
            )
        return found
    cls = _find_class(config, custom_objects)
    if cls is None:
        return inner
    if not hasattr(cls, "from_config"):
        raise TypeError(
            f"Unable to reconstruct an instance of '{class_name}' because the class is missing a "
            f"`from_config()` method. Full object config: {config}"
        )
    from tapeflow.keras.layers.base import Layer

    if (
        isinstance(inner, dict)
        and inspect.isclass(cls)
        and cls.__module__.startswith("tapeflow.")
        and not issubclass(cls, Layer)
    ):
        inner = _drop_inert_unknown(cls, inner)
    with CustomObjectScope(custom_objects or {}):
        if _takes_custom_objects(cls.from_config):
            obj = cls.from_config(inner, custom_objects=custom_objects)
        else:
            obj = cls.from_config(inner)
        build = config.get("build_config")
        if build is not None and hasattr(obj, "build_from_config"):
            obj.build_from_config(build)
        elif build is not None and build.get("input_shape") is not None and not getattr(obj, "built", True):
            obj.build(_as_shape(build["input_shape"]))
            obj.built = True
    return obj


def _drop_inert_unknown(cls: type, config: dict) -> dict:
    """Drops the Keras arguments a tapeflow class lacks when they hold their "off" value (None/False)."""
    try:
        params = inspect.signature(cls.__init__).parameters
    except (TypeError, ValueError):
        return config
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return config
    return {
        k: v
        for k, v in config.items()
        if k in params or not any(v == inert and type(v) is type(inert) for inert in _INERT)
    }


def _as_shape(shape: Any) -> Any:
    if isinstance(shape, (list, tuple)) and shape and isinstance(shape[0], (list, tuple)):
        return [tuple(s) for s in shape]
    return tuple(shape)


def _takes_custom_objects(fn: Any) -> bool:
    try:
        return "custom_objects" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


# -- the generic layer config (Keras 3's auto-config) ---------------------------------------
_BASE_ONLY = ("input_shape", "input_dim", "batch_size", "batch_input_shape")
# Layer.__init__ arguments Keras never writes into a layer's config (name/trainable/dtype come first)
_LAYER_ONLY = ("name", "trainable", "dtype", "autocast") + _BASE_ONLY
# Keras arguments whose "off" value tapeflow's layers need not accept
_INERT = (None, False, "channels_last", (), [], {})


def base_config(layer: Any) -> dict:
    """Keras 3's ``Layer.get_config`` keys: ``name``, ``trainable`` and ``dtype`` as a serialized
    ``DTypePolicy`` (``{"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, ...}``),
    and ``activity_regularizer`` when the layer has one."""
    config = {"name": layer.name, "trainable": layer.trainable, "dtype": _dtype_policy(layer.dtype_policy.name)}
    if getattr(layer, "activity_regularizer", None) is not None:
        config["activity_regularizer"] = serialize_keras_object(layer.activity_regularizer)
    return config


def config_value(layer: Any, key: str, value: Any) -> Any:
    """Keras's form of one config entry: an initializer, regularizer or constraint as its serialized dict
    (the layer's own object when it holds one, so no new initializer draws a seed), an activation as its
    name, ``data_format=None`` as ``"channels_last"`` (Keras standardizes it); anything else unchanged."""
    if key.endswith(("_initializer", "_regularizer", "_constraint")) and value is not None:
        from tapeflow.keras import constraints, initializers, regularizers

        own = getattr(layer, key, None)
        if own is not None and not isinstance(own, (str, dict)) and hasattr(own, "get_config"):
            return serialize_keras_object(own)
        if isinstance(value, (str, dict)):
            module = (initializers if key.endswith("_initializer")
                      else regularizers if key.endswith("_regularizer") else constraints)
            state = random.getstate()  # a throw-away initializer must not take a Python-random seed
            try:
                return serialize_keras_object(module.get(value))
            finally:
                random.setstate(state)
        return serialize_keras_object(value)
    if key == "activation" or key.endswith("_activation"):
        from tapeflow.keras import activations

        return serialize_keras_object(activations.get(value)) if value is not None else "linear"
    if key == "data_format" and value is None:
        return "channels_last"
    return value


def _init_chain(cls: type) -> list:
    """The ``__init__`` signatures a layer's constructor arguments pass through: the class's own, then,
    while one forwards ``**kwargs`` to ``super().__init__``, the next base class's (up to ``Layer``)."""
    from tapeflow.keras.layers.base import Layer

    chain = []
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or not (isinstance(klass, type) and issubclass(klass, Layer)) or klass is Layer:
            continue
        try:
            sig = inspect.signature(init)
        except (TypeError, ValueError):
            break
        chain.append(sig)
        if not any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
            break
    return chain


def auto_config(layer: Any) -> dict:
    """The constructor's arguments (given or default) as a config in Keras's forms, after
    name/trainable/dtype: the class's own parameters, then those of the base classes it passes
    ``**kwargs`` to (Conv1D's ``activation`` ... of Conv2D), then other keyword arguments given.
    A user's class (not tapeflow's) gets Keras 3's auto-config instead (``_user_auto_config``)."""
    from tapeflow.keras.layers.base import Layer

    mro = type(layer).__mro__
    if not any(k.__module__.startswith("tapeflow.") for k in mro[:mro.index(Layer)]):
        return _user_auto_config(layer)
    config = base_config(layer)
    init_args = getattr(layer, "_init_args", None)
    chain = _init_chain(type(layer))
    if init_args is None or not chain:
        return config
    args, kwargs = init_args
    try:
        bound = chain[0].bind(layer, *args, **kwargs)
    except (TypeError, ValueError):
        return config
    bound.apply_defaults()
    rest: dict = {}
    values: dict = {}
    for i, (pname, param) in enumerate(chain[0].parameters.items()):
        if i == 0 or param.kind is param.VAR_POSITIONAL:
            continue
        if param.kind is param.VAR_KEYWORD:
            rest = dict(bound.arguments.get(pname) or {})
        elif pname not in ("name", "trainable", "dtype"):
            values[pname] = bound.arguments.get(pname)
    for sig in chain[1:]:
        for pname, param in sig.parameters.items():
            if pname in values or pname in ("self", "name", "trainable", "dtype") or param.kind in (
                    param.VAR_KEYWORD, param.VAR_POSITIONAL):
                continue
            if pname in rest:
                values[pname] = rest.pop(pname)
            elif param.default is not param.empty:
                values[pname] = param.default
    values.update({k: v for k, v in rest.items() if k not in _LAYER_ONLY})
    if values.get("activity_regularizer", 0) is None:
        del values["activity_regularizer"]  # as Keras's Layer.get_config: listed only when set
    config.update({k: config_value(layer, k, v) for k, v in values.items() if k not in config})
    return config


def _user_auto_config(layer: Any) -> dict:
    """Keras 3's auto-config of a user's layer class without ``get_config``: ``name`` (dropped when
    ``__init__`` takes neither ``name`` nor ``**kwargs``), the arguments ``__init__`` received with its
    defaults, as given, then ``trainable`` and ``dtype``; a class without its own ``__init__`` lists
    Keras's ``Layer.__init__`` arguments (``activity_regularizer``, ``autocast``)."""
    config: dict = {"name": layer.name}
    init = type(layer).__init__
    init_args = getattr(layer, "_init_args", None) or ((), {})
    from tapeflow.keras.layers.base import Layer

    if init is Layer.__init__:
        given = dict(init_args[1])
        config.update({"activity_regularizer": given.get("activity_regularizer"), "trainable": layer.trainable,
                       "dtype": None, "autocast": given.get("autocast", True)})
    else:
        try:
            sig = inspect.signature(init)
            bound = sig.bind(layer, *init_args[0], **init_args[1])
        except (TypeError, ValueError):
            return base_config(layer)
        bound.apply_defaults()
        for i, (pname, param) in enumerate(sig.parameters.items()):
            if i == 0 or pname == "name" or param.kind is param.VAR_POSITIONAL:
                continue
            if param.kind is param.VAR_KEYWORD:
                config.update({k: v for k, v in (bound.arguments.get(pname) or {}).items() if k != "name"})
            else:
                config[pname] = bound.arguments.get(pname)
        if "name" not in sig.parameters and "kwargs" not in sig.parameters:
            config.pop("name")  # cls(**config) could not take it back
    config.update({k: v for k, v in base_config(layer).items() if k != "name"})
    return config


def accepted_arguments(cls: type) -> tuple[set, bool]:
    """Named ``__init__`` parameters along the MRO (while they pass ``**kwargs`` up), and whether the
    chain ends in a catch-all ``**kwargs`` that accepts anything."""
    from tapeflow.keras.layers.base import Layer

    names: set = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if not (isinstance(klass, type) and issubclass(klass, Layer)):
            continue
        if init is None:
            continue
        try:
            params = inspect.signature(init).parameters
        except (TypeError, ValueError):
            return names, True
        names.update(p for p, v in params.items() if v.kind not in (v.VAR_KEYWORD, v.VAR_POSITIONAL))
        if not any(v.kind is v.VAR_KEYWORD for v in params.values()):
            return names, False
        if klass.__module__.startswith("tapeflow.keras.layers.base") and klass.__name__ == "Layer":
            return names, False
    return names, True


def layer_from_config(cls: type, config: dict) -> Any:
    """``cls(**config)`` after rebuilding nested objects; a Keras argument tapeflow's class lacks is
    dropped when it holds Keras' "off" value, otherwise NotImplementedError names it."""
    config = dict(config)
    accepted, open_kwargs = accepted_arguments(cls)
    kwargs: dict = {}
    for key, value in config.items():
        if key == "dtype" and isinstance(value, dict):
            value = deserialize_keras_object(value)
        elif _is_serialized(value) or isinstance(value, list) and any(_is_serialized(v) for v in value):
            value = deserialize_keras_object(value)
        if key in accepted or open_kwargs:
            kwargs[key] = value
        elif (
            any(value == inert and type(value) is type(inert) for inert in _INERT)
            or (key == "groups" and value == 1)
            or (key == "renorm_momentum")
            or (key == "renorm_clipping")
        ):
            continue
        else:
            raise NotImplementedError(
                f"{cls.__name__}({key}={value!r}) (from a saved Keras config) is not "
                f"supported by tapeflow's {cls.__name__}."
            )
    return cls(**kwargs)
