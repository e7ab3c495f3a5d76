"""``tf.keras.tree``: Keras 3's nested-structure utilities (its ``optree`` rules, rebuilt in Python).

A structure's nodes are lists, tuples, namedtuples, dicts (``OrderedDict``, ``defaultdict``), ``deque``\\ s and
tapeflow's tracked ``ListWrapper``/``DictWrapper``; everything else (tensors, strings, ``None``) is a leaf. A
dict's children go in sorted key order (an ``OrderedDict``'s in its own order) and a rebuilt dict keeps the
key order it had:

>>> tf.keras.tree.flatten({"b": 1, "a": [2, (3, None)]})
[2, 3, None, 1]
>>> tf.keras.tree.map_structure(lambda x: x * 2, {"b": 1, "a": 2})
{'b': 2, 'a': 4}
"""

from __future__ import annotations

import collections
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["MAP_TO_NONE", "assert_same_paths", "assert_same_structure", "flatten", "flatten_with_path", "is_nested",
           "lists_to_tuples", "map_shape_structure", "map_structure", "map_structure_up_to", "pack_sequence_as",
           "traverse"]


class MAP_TO_NONE:  # noqa: N801 - Keras's name
    """Special value for use with `traverse()`: a sub-tree replaced by ``None``."""


def _wrappers() -> tuple:
    from tapeflow.module import ListWrapper, _DictWrapper

    return ListWrapper, _DictWrapper


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _kind(x: Any) -> str | None:
    """The node kind of ``x`` (``None`` for a leaf), as optree decides it: exact container types only."""
    t = type(x)
    if t is list:
        return "list"
    if t is tuple:
        return "tuple"
    if t is dict:
        return "dict"
    if t is collections.OrderedDict:
        return "OrderedDict"
    if t is collections.defaultdict:
        return "defaultdict"
    if t is collections.deque:
        return "deque"
    if _is_namedtuple(x):
        return "namedtuple"
    list_wrapper, dict_wrapper = _wrappers()
    if t is list_wrapper:
        return "ListWrapper"
    if t is dict_wrapper:
        return "DictWrapper"
    return None


def _sorted_keys(d: dict) -> list:
    try:
        return sorted(d)
    except TypeError:  # optree: keys that do not sort keep their insertion order
        return list(d)


def _keys(x: Any, kind: str) -> list:
    """The children's keys (paths) in traversal order."""
    if kind in ("dict", "defaultdict", "DictWrapper"):
        return _sorted_keys(x)
    if kind == "OrderedDict":
        return list(x)
    return list(range(len(x)))


def _children(x: Any, kind: str) -> list:
    if kind in ("dict", "defaultdict", "DictWrapper", "OrderedDict"):
        return [x[k] for k in _keys(x, kind)]
    return list(x)


def _rebuild(x: Any, kind: str, children: list) -> Any:
    """A node like ``x`` holding ``children`` (in traversal order); a dict keeps ``x``'s key order."""
    if kind in ("dict", "defaultdict", "DictWrapper", "OrderedDict"):
        by_key = dict(zip(_keys(x, kind), children))
        items = [(k, by_key[k]) for k in x]
        if kind == "defaultdict":
            return collections.defaultdict(x.default_factory, items)
        if kind == "OrderedDict":
            return collections.OrderedDict(items)
        return _wrappers()[1](items) if kind == "DictWrapper" else dict(items)
    if kind == "list":
        return list(children)
    if kind == "tuple":
        return tuple(children)
    if kind == "namedtuple":
        return type(x)(*children)
    if kind == "deque":
        return collections.deque(children, maxlen=x.maxlen)
    return _wrappers()[0](list(children))


def _describe(kind: str) -> str:
    return {"namedtuple": "collections.namedtuple", "OrderedDict": "collections.OrderedDict",
            "defaultdict": "collections.defaultdict", "deque": "collections.deque"}.get(kind, kind)


def _check_node(expected: Any, kind: str, got: Any) -> None:
    """optree's checks that ``got`` is a node like ``expected`` (ValueError with optree's messages)."""
    got_kind = _kind(got)
    dicts = ("dict", "defaultdict", "OrderedDict", "DictWrapper")
    if kind in dicts and got_kind in dicts:
        want, have = _sorted_keys(expected), _sorted_keys(got)
        if set(want) != set(have):
            missing = [k for k in want if k not in got]
            extra = [k for k in have if k not in expected]
            raise ValueError(f"dictionary key mismatch; expected key(s): {want}, got key(s): {have}, "
                             f"missing key(s): {missing}, extra key(s): {extra}; dict: {got!r}.")
        return
    if got_kind != kind:
        raise ValueError(f"Expected an instance of {_describe(kind)}, got {got!r}.")
    if kind == "namedtuple" and type(got) is not type(expected):
        raise ValueError(f"namedtuple type mismatch; expected type: {type(expected)!r}, got type: "
                         f"{type(got)!r}; tuple: {got!r}.")
    if len(got) != len(expected):
        raise ValueError(f"{_describe(kind)} arity mismatch; expected: {len(expected)}, got: {len(got)}; "
                         f"{kind}: {got!r}.")


def _leaves(structure: Any, out: list) -> list:
    kind = _kind(structure)
    if kind is None:
        out.append(structure)
    else:
        for child in _children(structure, kind):
            _leaves(child, out)
    return out


def is_nested(structure: Any) -> bool:
    """Whether ``structure`` is a list, tuple, namedtuple, dict or deque (not a leaf).

    >>> tf.keras.tree.is_nested({"foo": 42})
    True
    """
    return _kind(structure) is not None


def traverse(func: Callable, structure: Any, top_down: bool = True) -> Any:
    """Applies ``func`` to every sub-structure, depth first; a non-``None`` result replaces that sub-tree
    (``MAP_TO_NONE`` replaces it with ``None``). Top-down, a replaced sub-tree is not entered; bottom-up,
    ``func`` sees the already traversed children."""
    if not callable(func):
        raise TypeError(f"'{type(func).__name__}' object is not callable")

    def children_done(s: Any) -> Any:
        kind = _kind(s)
        if kind is None:
            return s
        return _rebuild(s, kind, [traverse(func, c, top_down=top_down) for c in _children(s, kind)])

    if top_down:
        ret = func(structure)
        if ret is None:
            return children_done(structure)
    else:
        done = children_done(structure)
        ret = func(done)
        if ret is None:
            return done
    return None if ret is MAP_TO_NONE else ret


def flatten(structure: Any) -> list:
    """The leaves of ``structure`` as a list (dicts by sorted key, ``OrderedDict``\\ s in order).

    >>> tf.keras.tree.flatten([[1, 2, 3], [4, [5], [[6]]]])
    [1, 2, 3, 4, 5, 6]
    >>> tf.keras.tree.flatten(None)
    [None]
    """
    return _leaves(structure, [])


def flatten_with_path(structure: Any) -> list:
    """``(path, leaf)`` pairs, a path being the tuple of indices and keys that leads to the leaf.

    >>> tf.keras.tree.flatten_with_path([{"foo": 42}])
    [((0, 'foo'), 42)]
    """
    out: list = []

    def walk(s: Any, path: tuple) -> None:
        kind = _kind(s)
        if kind is None:
            out.append((path, s))
            return
        for key, child in zip(_keys(s, kind), _children(s, kind)):
            walk(child, path + (key,))

    walk(structure, ())
    return out


def _map(func: Callable, structures: tuple, is_leaf: Callable, mismatch_at_leaf: bool) -> Any:
    first = structures[0]
    if is_leaf(first):
        if mismatch_at_leaf and any(not is_leaf(s) for s in structures[1:]):
            raise ValueError("Structures don't have the same nested structure.")
        return func(*structures)
    kind = _kind(first)
    for other in structures[1:]:
        _check_node(first, kind, other)
    dicts = ("dict", "defaultdict", "OrderedDict", "DictWrapper")
    keys = _keys(first, kind)
    columns = [[s[k] for k in keys] if kind in dicts else list(s) for s in structures]
    return _rebuild(first, kind, [_map(func, args, is_leaf, mismatch_at_leaf) for args in zip(*columns)])


def map_structure(func: Callable, *structures: Any, none_is_leaf: bool = True) -> Any:
    """``func`` applied leaf by leaf to structures of the same layout, in a structure like the first.

    With ``none_is_leaf=False``, ``None`` values are kept as they are instead of passed to ``func``.

    >>> tf.keras.tree.map_structure(lambda x, y: x * y, [[1], [2], [3]], [[1], [2], [3]])
    [[1], [4], [9]]
    """
    if not structures:
        raise ValueError("Must provide at least one structure")
    if not callable(func):
        raise TypeError(f"'{type(func).__name__}' object is not callable")
    if none_is_leaf:
        return _map(func, structures, lambda s: _kind(s) is None, True)
    return _map(lambda *a: None if a[0] is None else func(*a), structures,
                lambda s: _kind(s) is None, True)


def map_structure_up_to(shallow_structure: Any, func: Callable, *structures: Any) -> Any:
    """``func`` applied to the sub-structures of ``structures`` found at the leaves of
    ``shallow_structure`` (the structures may go deeper there, never shallower).

    >>> tf.keras.tree.map_structure_up_to([0, 0], len, [[1, 1], [2, 2]])
    [2, 2]

    As in Keras 3.15, a ``None`` leaf in ``shallow_structure`` raises ``ValueError``.
    """
    if not structures:
        raise ValueError("Must provide at least one structure")

    dicts = ("dict", "defaultdict", "OrderedDict", "DictWrapper")

    def run(shallow: Any, args: tuple, check_only: bool) -> Any:
        kind = _kind(shallow)
        if kind is None:
            if check_only:
                return None
            if shallow is None:  # as Keras 3.15 (optree's default there counts None as an empty node)
                raise ValueError("Structures don't have the same nested structure.")
            return func(*args)
        for other in args:
            _check_node(shallow, kind, other)
        keys = _keys(shallow, kind)
        columns = [[a[k] for k in keys] if kind in dicts else list(a) for a in args]
        return _rebuild(shallow, kind, [run(child, tuple(col[i] for col in columns), check_only)
                                        for i, child in enumerate(_children(shallow, kind))])

    run(shallow_structure, structures, True)  # the whole layout is checked before func runs
    return run(shallow_structure, structures, False)


def assert_same_structure(a: Any, b: Any, check_types: Any = None) -> None:
    """Raises ``ValueError`` unless ``a`` and ``b`` nest the same way (same container types, lengths and
    dict keys; any dict kind matches any other). ``check_types`` is deprecated and has no effect."""
    if check_types is not None:
        warnings.warn("The `check_types` argument is deprecated and no longer has any effect, please remove."
                      if check_types else
                      "The `check_types` argument is deprecated and no longer has any effect. For a looser check, "
                      "use `keras.tree.assert_same_paths()`, which considers `list`, `tuple`, `namedtuple` and "
                      "`deque` as matching", DeprecationWarning, stacklevel=2)
    _map(lambda x, y: None, (a, b), lambda s: _kind(s) is None, True)


def assert_same_paths(a: Any, b: Any) -> None:
    """Raises ``ValueError`` unless ``a`` and ``b`` have the same leaf paths (container types may differ)."""
    a_paths = {p for p, _ in flatten_with_path(a)}
    b_paths = {p for p, _ in flatten_with_path(b)}
    if a_paths != b_paths:
        msg = "`a` and `b` don't have the same paths."
        if a_paths - b_paths:
            msg += f"\nPaths in `a` missing in `b`:\n{a_paths - b_paths}"
        if b_paths - a_paths:
            msg += f"\nPaths in `b` missing in `a`:\n{b_paths - a_paths}"
        raise ValueError(msg)


def pack_sequence_as(structure: Any, flat_sequence: Any) -> Any:
    """``flat_sequence`` (an iterable of leaves, in ``flatten`` order) in the layout of ``structure``.

    >>> tf.keras.tree.pack_sequence_as({"key3": "", "key1": "", "key2": ""}, ["v1", "v2", "v3"])
    {'key3': 'v3', 'key1': 'v1', 'key2': 'v2'}
    """
    try:
        leaves = list(flat_sequence)
    except TypeError:
        raise TypeError(f"`flat_sequence` must be an iterable of leaves. Received: {flat_sequence!r}") from None
    expected = len(flatten(structure))
    if len(leaves) < expected:
        raise ValueError(f"Too few leaves for PyTreeSpec; expected: {expected}, got: {len(leaves)}.")
    if len(leaves) > expected:
        raise ValueError(f"Too many leaves for PyTreeSpec; expected: {expected}.")
    it = iter(leaves)

    def build(s: Any) -> Any:
        kind = _kind(s)
        if kind is None:
            return next(it)
        return _rebuild(s, kind, [build(c) for c in _children(s, kind)])

    return build(structure)


def lists_to_tuples(structure: Any) -> Any:
    """``structure`` with every list made a tuple."""
    return traverse(lambda s: tuple(s) if isinstance(s, list) else None, structure, top_down=False)


def map_shape_structure(func: Callable, structure: Any) -> Any:
    """``map_structure`` where a list or tuple of ints and ``None``\\ s counts as one leaf (a shape)."""
    def is_shape(x: Any) -> bool:
        return isinstance(x, (list, tuple)) and all(isinstance(e, (int, type(None))) for e in x)

    return _map(func, (structure,), lambda s: is_shape(s) or _kind(s) is None, False)
