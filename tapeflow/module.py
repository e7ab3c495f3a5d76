"""``tf.Module`` and ``tf.name_scope``.

A Module is a named container of variables and other modules. Its
``variables``, ``trainable_variables`` and ``submodules`` are found by walking
the attributes in TF's order: the module's own attributes sorted by name
(each value flattened like ``tf.nest``: lists and tuples in order, dicts by
sorted key), then, depth first, the modules found there.

>>> class Dense(tf.Module):
...     def __init__(self, n_in, n_out, name=None):
...         super().__init__(name=name)
...         with self.name_scope:
...             self.w = tf.Variable(tf.ones([n_in, n_out]), name="w")
...     def __call__(self, x):
...         return x @ self.w
>>> Dense(2, 3, name="d").w.name
'd/w:0'
"""

from __future__ import annotations

import functools
import re
from typing import Any
from collections.abc import Callable, Iterator

from tapeflow.framework import nest
from tapeflow.framework.context import state
from tapeflow.framework.variables import Variable, _name_scope_stack

__all__ = ["Module", "name_scope"]

_VALID_SCOPE = re.compile(r"^[A-Za-z0-9_.\\/>-]*$")


class name_scope:  # noqa: N801 - TF's name
    """``with tf.name_scope("block"):`` prefixes names of variables created
    inside (``block/w:0``). Entering yields the scope string (``"block/"``)."""

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"name_scope name must be a string, got {type(name).__name__}: {name!r}")
        if name and not _VALID_SCOPE.match(name):
            raise ValueError(f"'{name}' is not a valid scope name. A scope name has to match the "
                             f"pattern: ^[A-Za-z0-9_.\\\\/>-]*$")
        self._name = name
        self._pushed: list[str] = []
        self._saved: list[str] | None = None
        self._graph_scope: Any = None

    @property
    def name(self) -> str:
        return self._name

    def __enter__(self) -> str:
        name = self._name
        graph = state.graph
        self._graph_scope = graph.name_scope(name) if hasattr(graph, "name_scope") else None
        traced = None
        if self._graph_scope is not None:  # traced: the graph's scope names its ops (blk/add, blk_1/add)
            traced = self._graph_scope.__enter__()
        if name.endswith("/"):  # an absolute scope (as returned by a previous `with`) replaces the stack
            self._saved = list(_name_scope_stack)
            _name_scope_stack[:] = [p for p in name.rstrip("/").split("/") if p]
        elif name:
            _name_scope_stack.append(name)
            self._pushed.append(name)
        scope = "/".join(_name_scope_stack)
        if traced is not None:
            return traced
        return scope + "/" if scope else ""

    def __exit__(self, *exc: Any) -> None:
        if self._graph_scope is not None:
            self._graph_scope.__exit__(*exc)
            self._graph_scope = None
        if self._saved is not None:
            _name_scope_stack[:] = self._saved
            self._saved = None
        elif self._name:
            _name_scope_stack.pop()
            self._pushed.pop()


def _camel_to_snake(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


def _is_variable(x: Any) -> bool:
    return isinstance(x, Variable)


def _is_trainable_variable(x: Any) -> bool:
    return isinstance(x, Variable) and x.trainable


def _is_module(x: Any) -> bool:
    return isinstance(x, Module)


# Attributes a module never walks (its own bookkeeping).
_IGNORED = frozenset(("_self_unconditional_checkpoint_dependencies", "_self_unconditional_dependency_names"))


# -- TF's tracked containers ------------------------------------------------------
def _attached(parent: Any, name: str, child: Any) -> None:
    """``child`` was just stored under ``name`` in ``parent``: a restore that is still waiting for values below
    this path (TF's deferred restoration; see tapeflow.train.checkpoint) hands them over now."""
    pending = parent.__dict__.get("_tf_pending_restore")
    if pending is not None:
        pending.attach(parent, name, child)


class ListWrapper(list):
    """TF's tracked list: a ``list`` stored on a ``tf.Module`` or ``tf.train.Checkpoint``. It is a list in
    every way; items appended after ``restore`` receive their saved values, as in TF."""

    _tf_waits_for_attachments = True

    def __repr__(self) -> str:
        return f"ListWrapper({list.__repr__(self)})"

    def append(self, value: Any) -> None:
        list.append(self, value)
        _attached(self, str(len(self) - 1), value)

    def extend(self, values: Any) -> None:
        start = len(self)
        list.extend(self, values)
        for i in range(start, len(self)):
            _attached(self, str(i), self[i])

    def __iadd__(self, values: Any) -> ListWrapper:
        self.extend(values)
        return self

    def __setitem__(self, index: Any, value: Any) -> None:
        list.__setitem__(self, index, value)
        if isinstance(index, int):
            _attached(self, str(index % len(self)), value)


class _DictWrapper(dict):
    """TF's tracked dict (printed ``DictWrapper({...})``); values stored after ``restore`` receive their saved
    values, as in TF."""

    _tf_waits_for_attachments = True

    def __repr__(self) -> str:
        return f"DictWrapper({dict.__repr__(self)})"

    def __setitem__(self, key: Any, value: Any) -> None:
        dict.__setitem__(self, key, value)
        _attached(self, str(key), value)

    def update(self, *args: Any, **kwargs: Any) -> None:
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]


def wrap_container(value: Any) -> Any:
    """What TF stores for an attribute of a tracking object: a plain list or dict becomes its tracked
    wrapper (anything else, subclasses included, is kept)."""
    t = type(value)
    if t is list:
        return ListWrapper(value)
    if t is dict:
        return _DictWrapper(value)
    return value


class Module:
    """Base class for containers of variables and sub-modules (``tf.Module``)."""

    # Subclasses (keras layers) may list attributes that the walk skips.
    _TF_MODULE_IGNORED_PROPERTIES: frozenset = _IGNORED
    # A restore may leave values here for attributes set later (TF's deferred restoration).
    _tf_waits_for_attachments = True

    def __init__(self, name: str | None = None) -> None:
        if name is None:
            name = _camel_to_snake(type(self).__name__)
        elif not isinstance(name, str) or not name.isidentifier():
            raise ValueError(
                f"{name!r} is not a valid module name. Module names must be valid Python identifiers "
                f"(e.g. a valid class name)."
            )
        self._name = name
        with name_scope(name) as scope:
            self._scope_name = scope

    def __setattr__(self, name: str, value: Any) -> None:
        # As TF's AutoTrackable: lists and dicts are stored as tracked wrappers, and a restore still waiting
        # for this attribute's values applies them now.
        value = wrap_container(value)
        object.__setattr__(self, name, value)
        if "_tf_pending_restore" in self.__dict__:
            _attached(self, name, value)

    @property
    def name(self) -> str:
        """The module's name (``snake_case`` of the class name by default)."""
        return self._name

    @property
    def name_scope(self) -> name_scope:
        """A ``name_scope`` for this module: ``with self.name_scope: ...``."""
        return name_scope(self._scope_name)

    @property
    def variables(self) -> tuple:
        """Every ``tf.Variable`` of this module and its submodules, in TF's order."""
        return tuple(self._flatten(predicate=_is_variable))

    @property
    def trainable_variables(self) -> tuple:
        """The trainable variables of this module and its submodules."""
        return tuple(self._flatten(predicate=_is_trainable_variable))

    @property
    def non_trainable_variables(self) -> tuple:
        return tuple(self._flatten(predicate=lambda v: isinstance(v, Variable) and not v.trainable))

    @property
    def submodules(self) -> tuple:
        """Every module reachable from this one (not itself), depth first."""
        return tuple(self._flatten(predicate=_is_module))

    def _flatten(self, recursive: bool = True, predicate: Callable | None = None,
                 attribute_traversal_key: Callable | None = None, with_path: bool = False,
                 expand_composites: bool = False) -> Iterator:
        """Yields the leaves (or ``(path, leaf)``) of the attribute walk that
        match ``predicate``; ``recursive`` descends into submodules."""
        if predicate is None:
            predicate = lambda _: True  # noqa: E731
        return _walk(self, recursive, predicate, attribute_traversal_key, self._TF_MODULE_IGNORED_PROPERTIES,
                     with_path, (), {id(self)}, [])

    def _trackable_children(self) -> dict:
        """Checkpoint protocol: the named children (variables, trackables,
        lists/dicts of them) saved under this object's key path."""
        out = {}
        for key, value in vars(self).items():
            if key in self._TF_MODULE_IGNORED_PROPERTIES or key.startswith("__"):
                continue
            if _holds_trackable(value):
                out[key] = value
        return out

    @classmethod
    def with_name_scope(cls, method: Callable) -> Callable:
        """Decorator: runs ``method`` inside the module's name scope."""

        @functools.wraps(method)
        def wrapped(self, *args: Any, **kwargs: Any) -> Any:
            with self.name_scope:
                return method(self, *args, **kwargs)

        return wrapped

    def __repr__(self) -> str:
        return f"<{type(self).__module__}.{type(self).__name__} object at {hex(id(self))}>"


def _holds_trackable(value: Any) -> bool:
    if isinstance(value, (Variable, Module)) or hasattr(value, "_trackable_children"):
        return True
    if isinstance(value, (list, tuple, dict)):
        return any(_holds_trackable(v) for v in nest.flatten(value))
    return False


def _flatten_with_paths(value: Any, path: tuple) -> Iterator:
    if isinstance(value, dict):
        for k in sorted(value, key=lambda k: (str(type(k)), k) if not isinstance(k, str) else ("", k)):
            yield from _flatten_with_paths(value[k], path + (k,))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _flatten_with_paths(v, path + (i,))
    else:
        yield path, value


def _walk(module: Module, recursive: bool, predicate: Callable, key: Callable | None, ignored: frozenset,
          with_path: bool, module_path: tuple, seen: set, stack: list) -> Iterator:
    if id(module) in stack:  # a cycle: do not recurse again
        recursive = False
    module_dict = vars(module)
    submodules = []
    for name in sorted(module_dict, key=key):
        if name in ignored:
            continue
        for leaf_path, leaf in _flatten_with_paths(module_dict[name], (name,)):
            if not with_path:
                if id(leaf) in seen:
                    continue
                seen.add(id(leaf))
            if predicate(leaf):
                yield (module_path + leaf_path, leaf) if with_path else leaf
            if recursive and isinstance(leaf, Module):
                submodules.append((module_path + leaf_path, leaf))
    stack.append(id(module))
    for sub_path, sub in submodules:
        yield from _walk(sub, recursive, predicate, key, ignored, with_path, sub_path, seen, stack)
    stack.pop()
