"""Composite tensors: values made of dense component tensors plus a TypeSpec.

``tf.RaggedTensor`` and ``tf.SparseTensor`` are composites, as in TF: each one
is a few dense tensors (``flat_values`` and ``row_splits``; ``indices``,
``values`` and ``dense_shape``) and a :class:`TypeSpec` that knows how to take
the value apart (``_to_components``) and put it back (``_from_components``).
``tf.nest.flatten(x, expand_composites=True)`` yields the components, so
gradient tapes, ``tf.data`` and ``tf.function`` see only dense tensors.

Public ops (``tf.add``, ``tf.concat``, ``tf.reduce_sum``...) accept composites
through :func:`dispatch_for`: the dense op runs first, and only when it fails to
convert a composite argument does the registered composite version run, so
dense code pays nothing.
"""

from __future__ import annotations

import functools
from typing import Any
from collections.abc import Callable

from tapeflow.framework import namespaces
from tapeflow.framework import tensor as tensor_mod


class TypeSpec:
    """Describes a composite value: its type, dtype, shape and components."""

    value_type: type = type(None)

    def _to_components(self, value: Any) -> tuple:
        raise NotImplementedError(f"{type(self).__name__}._to_components")

    def _from_components(self, components: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}._from_components")

    @property
    def _component_specs(self) -> tuple:
        raise NotImplementedError(f"{type(self).__name__}._component_specs")

    def _serialize(self) -> tuple:
        raise NotImplementedError(f"{type(self).__name__}._serialize")

    def is_compatible_with(self, spec_or_value: Any) -> bool:
        other = spec_or_value if isinstance(spec_or_value, TypeSpec) else getattr(spec_or_value, "_type_spec", None)
        if type(other) is not type(self):
            return False
        a, b = self._serialize(), other._serialize()
        return all(_compatible(x, y) for x, y in zip(a, b))

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and self._serialize() == other._serialize()

    def __ne__(self, other: Any) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._serialize()))

    def __reduce__(self):
        return type(self), self._serialize()


def _compatible(x: Any, y: Any) -> bool:
    from tapeflow.framework.tensor_shape import TensorShape

    if isinstance(x, TensorShape) and isinstance(y, TensorShape):
        return x.is_compatible_with(y)
    return x == y


class CompositeTensor:
    """Base of values that are made of component tensors (see the module doc)."""

    __slots__ = ()
    # NumPy defers binary operators to ours (np.int32(2) * rt gives a composite).
    __array_priority__ = 200

    @property
    def _type_spec(self) -> TypeSpec:
        raise NotImplementedError(f"{type(self).__name__}._type_spec")

    def _components(self) -> tuple:
        return self._type_spec._to_components(self)

    # How tf.function passes a composite argument: the dynamic components become
    # placeholders (so a tape differentiates the call w.r.t. them); the static
    # part (row partitions, sparse indices) is part of the cache key.
    def _trace_split(self) -> tuple:
        """(static hashable key, [dynamic component tensors])."""
        raise NotImplementedError(f"passing a {type(self).__name__} to tf.function")

    def _trace_rebuild(self, dynamic: list) -> CompositeTensor:
        raise NotImplementedError(f"passing a {type(self).__name__} to tf.function")


def is_composite(x: Any) -> bool:
    return isinstance(x, CompositeTensor)



def replace_composites(cls: type, component: Callable, args: tuple, kwargs: dict) -> tuple:
    """``(found, args, kwargs)``: every ``cls`` instance in the (nested) arguments
    replaced by ``component(instance)``, and the instances found, in order
    (``tf.ragged.map_flat_values`` / ``tf.sparse.map_values``)."""
    found: list = []

    def sub(v: Any) -> Any:
        if isinstance(v, cls):
            found.append(v)
            return component(v)
        if isinstance(v, (list, tuple)):
            return type(v)(sub(c) for c in v)
        if isinstance(v, dict):
            return {k: sub(c) for k, c in v.items()}
        return v

    new_args = [sub(a) for a in args]
    new_kwargs = {k: sub(v) for k, v in kwargs.items()}
    return found, new_args, new_kwargs

class CompositeArgumentError(TypeError):
    """A composite reached a dense-only conversion; dispatchers catch it."""


def _refuse(value: CompositeTensor, dtype: Any = None):
    raise CompositeArgumentError(
        f"Failed to convert {type(value).__name__} to a dense Tensor: {value!r}. Use its to_tensor() "
        "(RaggedTensor) or tf.sparse.to_dense() (SparseTensor), or an op that accepts it."
    )


def register_composite(cls: type) -> type:
    """Makes ``convert_to_tensor(value_of_cls)`` raise :class:`CompositeArgumentError`."""
    tensor_mod.register_tensor_conversion_function(cls, _refuse)
    return cls


# -- dispatch ----------------------------------------------------------------

# The public function -> the composite implementations tried in order, each
# returning NotImplemented when it does not handle the arguments.
_DISPATCHERS: dict[Callable, list] = {}
_WRAPPERS: dict[Callable, Callable] = {}


def _has_composite(x: Any, depth: int = 0) -> bool:
    if isinstance(x, CompositeTensor):
        return True
    if depth < 3 and isinstance(x, (list, tuple)):
        return any(_has_composite(v, depth + 1) for v in x)
    if depth < 3 and isinstance(x, dict):
        return any(_has_composite(v, depth + 1) for v in x.values())
    return False


def dispatch_for(*api: Callable) -> Callable:
    """Registers ``impl`` as the composite version of the public functions ``api``."""

    def register(impl: Callable) -> Callable:
        for fn in api:
            fn = getattr(fn, "__wrapped__", fn)
            _DISPATCHERS.setdefault(fn, []).append(impl)
        return impl

    return register


def dispatching(fn: Callable) -> Callable:
    """``fn`` with a fallback to its composite implementations (one wrapper per function)."""
    fn = getattr(fn, "__wrapped__", fn)
    w = _WRAPPERS.get(fn)
    if w is not None:
        return w

    def fallback(args: tuple, kwargs: dict, error: BaseException):
        if not (_has_composite(args) or _has_composite(kwargs)):
            raise error
        for impl in _DISPATCHERS.get(fn, ()):
            r = impl(*args, **kwargs)
            if r is not NotImplemented:
                return r
        raise TypeError(f"{fn.__name__} does not support composite (ragged or sparse) arguments in tapeflow")

    wrapper = _exact_wrapper(fn, fallback)
    functools.update_wrapper(wrapper, fn)
    _WRAPPERS[fn] = wrapper
    return wrapper


_FALLBACK_ERRORS = (TypeError, ValueError, AttributeError, NotImplementedError)


def _exact_wrapper(fn: Callable, fallback: Callable) -> Callable:
    """A wrapper with ``fn``'s own parameter list (no ``*args`` packing on the
    normal path, which stays one extra call)."""
    import inspect

    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    params = list(sig.parameters.values()) if sig is not None else []
    simple = sig is not None and all(p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params)
    if not simple:

        def wrapper(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except _FALLBACK_ERRORS as e:
                return fallback(args, kwargs, e)

        return wrapper
    defaults = {}
    decl, call, kw = [], [], False
    for p in params:
        if p.kind is p.KEYWORD_ONLY and not kw:
            decl.append("*")
            kw = True
        if p.default is p.empty:
            decl.append(p.name)
        else:
            defaults[f"_d_{p.name}"] = p.default
            decl.append(f"{p.name}=_d_{p.name}")
        call.append(f"{p.name}={p.name}" if p.kind is p.KEYWORD_ONLY else p.name)
    pos_text = "".join(p.name + ", " for p in params if p.kind is not p.KEYWORD_ONLY)
    kw_text = ", ".join(f"{p.name!r}: {p.name}" for p in params if p.kind is p.KEYWORD_ONLY)
    src = (
        f"def wrapper({', '.join(decl)}):\n"
        f"    try:\n        return _fn({', '.join(call)})\n"
        f"    except _errors as e:\n"
        f"        return _fallback(({pos_text}), {{{kw_text}}}, e)\n"
    )
    namespace = {"_fn": fn, "_fallback": fallback, "_errors": _FALLBACK_ERRORS, **defaults}
    # (compiled under this file's name, so source tracking skips its frames as library code)
    exec(compile(src, __file__, "exec"), namespace)  # noqa: S102 - generated from fn's own signature
    return namespace["wrapper"]


def install_dispatch(*modules: Any) -> None:
    """Replaces, in each namespace module, every public function that has
    composite implementations by its dispatching wrapper."""
    for mod in modules:
        for name, value in list(vars(mod).items()):
            if callable(value) and getattr(value, "__wrapped__", value) in _DISPATCHERS:
                setattr(mod, name, dispatching(value))


# tf.ragged / tf.sparse install their dispatching wrappers in the public namespaces (tapeflow, tf.math,
# tf.nn) registered in tapeflow.framework.namespaces by the package's top level.
_WANTED: set = set()


def install_dispatch_into(*names: str) -> None:
    """``install_dispatch`` on the public namespaces ``names`` (now, and when one registers later)."""
    _WANTED.update(names)
    mods = namespaces.registered()
    install_dispatch(*(mods[n] for n in names if n in mods))


def _on_namespace(name: str, module: Any) -> None:
    if name in _WANTED:  # a composite family loaded before this namespace was registered
        install_dispatch(module)


namespaces.on_register(_on_namespace)


def type_spec_from_value(value: Any) -> TypeSpec:
    """``tf.type_spec_from_value``: a tensor's (or a NumPy / Python value's) ``TensorSpec``, a composite's spec
    (``RaggedTensorSpec``, ``SparseTensorSpec`` ...)."""
    from tapeflow.framework.tensor import Tensor, convert_to_tensor
    from tapeflow.framework.tensor_spec import TensorSpec

    if isinstance(value, CompositeTensor):
        return value._type_spec
    if value is None:
        raise NotImplementedError("tf.type_spec_from_value(None) (TF's NoneTensorSpec) is not implemented in "
                                  "tapeflow")
    if hasattr(value, "assign") and hasattr(value, "read_value"):
        raise NotImplementedError("tf.type_spec_from_value of a tf.Variable (TF's VariableSpec) is not implemented "
                                  "in tapeflow")
    if not isinstance(value, Tensor):
        try:
            value = convert_to_tensor(value)
        except (TypeError, ValueError) as e:
            raise TypeError(f"Could not build a TypeSpec for {value!r} of unsupported type {type(value)}.") from e
    return TensorSpec(value.shape, value.dtype)
