"""What every ``keras.ops`` function shares: Keras 3's dtype promotion, conversion, and the switch
between running on tensors and recording an operation node on KerasTensors (functional models)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from tapeflow.framework import dtypes as _dtypes
from tapeflow.framework import namespaces, nest
from tapeflow.framework.tensor import Tensor
from tapeflow.keras import backend as _backend
from tapeflow.keras.layers import base as _layers

# Keras 3's type-promotion lattice (its own, adapted from JAX's): each dtype and the ones just above it.
# "int" and "float" are the weak types of Python scalars.
_LATTICE = {
    "bool": ["int"], "uint8": ["int16", "uint16"], "uint16": ["int32", "uint32"], "uint32": ["int64", "uint64"],
    "uint64": ["float"], "int": ["uint8", "int8", "complex64"], "int8": ["int16"], "int16": ["int32"],
    "int32": ["int64"], "int64": ["float"], "float": ["bfloat16", "float16"], "bfloat16": ["float32"],
    "float16": ["float32"], "float32": ["float64", "complex64"], "float64": ["complex128"],
    "complex64": ["complex128"], "complex128": [],
}


def _upper_bounds() -> dict[str, frozenset]:
    out = {}
    for node in _LATTICE:
        seen, todo = {node}, [node]
        while todo:
            for up in _LATTICE[todo.pop()]:
                if up not in seen:
                    seen.add(up)
                    todo.append(up)
        out[node] = frozenset(seen)
    return out


_UB = _upper_bounds()


@functools.lru_cache(512)
def _join(nodes: frozenset) -> str:
    common = frozenset.intersection(*(_UB[n] for n in nodes))
    least = (common & nodes) or {c for c in common if common <= _UB[c]}
    if len(least) != 1:
        raise ValueError(f"Input dtypes {tuple(sorted(nodes))} have no available implicit dtype promotion path. "
                         "Try explicitly casting inputs to the desired output type.")
    return next(iter(least))


def _name(d: Any) -> tuple[str, bool]:
    """(dtype name, weak): ``int``/``float`` (Python scalars' types) are weak."""
    if d is int or d is float:
        return ("int64" if d is int else "float32"), True
    if d is bool:
        return "bool", False
    if d is complex:
        return "complex128", True
    return _backend.standardize_dtype(d), False


@functools.lru_cache(1024)
def _result_type_cached(args: tuple, floatx: str) -> str:
    names, weak = zip(*(_name(a) for a in args))
    for n in names:
        if n not in _LATTICE:
            raise ValueError(f"dtype='{n}' is not a valid dtype for Keras type promotion.")
    if len(names) == 1:
        out, out_weak = names[0], weak[0]
    elif len(set(names)) == 1 and not all(weak):
        out, out_weak = names[0], False
    elif all(weak):
        out, out_weak = _join(frozenset(names)), True
    else:
        nodes = frozenset(("float" if "float" in n else "int" if "int" in n else "complex128" if "complex" in n
                           else n) if w and n != "bool" else n for n, w in zip(names, weak))
        out = _join(nodes)
        out_weak = out in ("int", "float")
    if out_weak and out != "bool":
        bits = floatx[-2:]
        out = {"b": "bool", "i": f"int{bits}", "u": f"uint{bits}"}.get(out[:1], f"float{bits}")
    # Keras's TensorFlow backend narrows these two 64-bit types (it keeps int64 and float64)
    return {"uint64": "uint32", "complex128": "complex64"}.get(out, out)


def result_type(*args: Any) -> str:
    """Keras 3's ``keras.backend.result_type``: dtypes (or ``int``/``float`` for Python scalars, weak)
    joined on Keras's promotion lattice; no argument gives ``floatx()``."""
    if not args:
        return _backend.floatx()
    return _result_type_cached(tuple(_backend.floatx() if a is None else a for a in args), _backend.floatx())


def tf() -> Any:
    """The public ``tf`` namespace (tapeflow.keras may not import the package root)."""
    return namespaces.get("tapeflow")


def dtype_of(x: Any) -> Any:
    """A value's dtype for promotion: a tensor's dtype name, or ``int``/``float`` for Python scalars."""
    if isinstance(x, bool):
        return bool
    if isinstance(x, (int, float, complex)):
        return type(x)
    d = getattr(x, "dtype", None)
    if d is not None:
        return _backend.standardize_dtype(d)
    return _backend.standardize_dtype(np.asarray(x).dtype) if not isinstance(x, (list, tuple)) else \
        _backend.standardize_dtype(convert(x).dtype)


def convert(x: Any, dtype: Any = None) -> Tensor:
    """``keras.ops.convert_to_tensor``: Python floats and float64 NumPy arrays stay as they are typed
    (a float list becomes ``floatx()``), then cast to ``dtype`` when one is given."""
    t = tf()
    if isinstance(x, Tensor) or hasattr(x, "_as_graph_tensor") or type(x).__name__ in ("Variable", "SymbolicTensor"):
        out = t.convert_to_tensor(x)
    elif isinstance(x, (bool, int, float, complex)) or isinstance(x, (list, tuple)):
        d = None
        if dtype is None:
            flat = nest.flatten(x) if isinstance(x, (list, tuple)) else [x]
            if any(isinstance(v, float) for v in flat) and all(isinstance(v, (int, float)) for v in flat):
                d = _backend.floatx()
            elif any(isinstance(v, bool) for v in flat) and all(isinstance(v, bool) for v in flat):
                d = "bool"
            elif flat and all(isinstance(v, int) for v in flat):
                d = "int32"
        out = t.convert_to_tensor(x, dtype=d) if d is not None else t.convert_to_tensor(x)
    else:
        out = t.convert_to_tensor(x)
    if dtype is not None and _backend.standardize_dtype(out.dtype) != _backend.standardize_dtype(dtype):
        out = t.cast(out, _backend.standardize_dtype(dtype))
    return out


def float_of(x: Tensor) -> str:
    """The dtype a float-valued function computes in: int64 gives floatx(), others join ``float``."""
    name = _backend.standardize_dtype(x.dtype)
    return _backend.floatx() if name == "int64" else result_type(name, float)


def _recorded(config: dict, floatx_dtype: bool) -> dict:
    # the configuration as Keras's functions pass it to their operations: standard names for dtypes
    # and data formats (``floatx_dtype``: a missing dtype is floatx(), as one_hot's)
    if "dtype" in config and (config["dtype"] is not None or floatx_dtype):
        config["dtype"] = _backend.standardize_dtype(config["dtype"] or _backend.floatx())
    if "data_format" in config:
        config["data_format"] = _backend.standardize_data_format(config["data_format"])
    return config


def keras_op(cls_name: str, module: str = "numpy", tensors: int | tuple = 1, kw: tuple = (),
             floatx_dtype: bool = False) -> Callable:
    """Registers a ``keras.ops`` function as the Keras operation ``keras.src.ops.<module>.<cls_name>``.
    ``tensors`` names the operation's positional call arguments (the count of leading parameters, or
    their names; a ``*args`` parameter among them takes the rest), ``kw`` those Keras passes to the call
    by keyword; the other parameters are its configuration. On KerasTensors the function records a
    node; on anything else it runs."""

    def wrap(impl: Callable) -> Callable:
        op = "ops." + impl.__name__.rstrip("_")
        sig = inspect.signature(impl)
        params = list(sig.parameters.values())
        call_names = [p.name for p in params[:tensors]] if isinstance(tensors, int) else list(tensors)
        star = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), None)
        positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD] if star else []

        def run(*call: Any, **config: Any) -> Any:
            # the call arguments as recorded (a *args one: all that remain), then the configuration
            named = dict(zip(call_names, call if star not in call_names else call[:call_names.index(star)]))
            if star in call_names:
                named[star] = call[call_names.index(star):]
            named.update(config)
            if not star:
                return impl(**named)
            return impl(*(named.pop(n) for n in positional if n in named), *named.pop(star, ()), **named)

        _layers._OPS[op] = (cls_name, len(call_names), run)
        operator = _layers._BY_CLASS.setdefault(cls_name, op)
        if operator != op:  # a Python operator on KerasTensors (x + y) is this function, as in Keras
            _layers._OPS[operator] = (cls_name, _layers._OPS[operator][1], run)
        if module != "numpy":
            _layers._OP_MODULES[op] = f"keras.src.ops.{module}"

        @functools.wraps(impl)
        def fn(*args: Any, **kwargs: Any) -> Any:
            if any(isinstance(a, _layers.KerasTensor) for a in nest.flatten((args, kwargs))):
                bound = sig.bind(*args, **kwargs)
                bound.apply_defaults()
                values = bound.arguments
                call = tuple(v for n in call_names for v in (values[n] if n == star else (values[n],)))
                config = {p.name: values[p.name] for p in params if p.name not in call_names and p.name not in kw}
                kwargs = {}
                for n in kw:  # a **kwargs parameter among them: its entries, as Keras records them
                    kwargs.update(values[n] if sig.parameters[n].kind is inspect.Parameter.VAR_KEYWORD
                                  else {n: values[n]})
                return _layers._OpLayer(op, call, config=_recorded(config, floatx_dtype), kwargs=kwargs)()
            return impl(*args, **kwargs)

        fn.__name__ = fn.__qualname__ = impl.__name__.rstrip("_")
        return fn

    return wrap


def as_dtype(d: Any) -> Any:
    return _dtypes.as_dtype(_backend.standardize_dtype(d))
