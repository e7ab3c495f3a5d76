"""``tf.nest``: flatten and rebuild nested lists, tuples, namedtuples and dicts.

Dicts flatten in sorted key order, as in TF; everything else is a leaf.
"""

from __future__ import annotations

import collections
import collections.abc as cabc
from typing import Any
from collections.abc import Callable


# Exact types answered without the (slow) Mapping ABC check; framework types
# that are always leaves (Tensor, Variable) add themselves.
_NESTED_TYPES = frozenset({list, tuple, dict})
LEAF_TYPES: set = {int, float, bool, complex, str, bytes, type(None)}


def is_nested(structure: Any) -> bool:
    t = type(structure)
    if t in _NESTED_TYPES:
        return True
    if t in LEAF_TYPES:
        return False
    return isinstance(structure, (list, tuple, dict, cabc.Mapping)) and not _is_leaf_type(structure)


is_sequence = is_nested


def _is_leaf_type(x: Any) -> bool:
    return isinstance(x, (str, bytes))


def _sorted_keys(d: Any) -> list:
    try:
        return sorted(d)
    except TypeError:
        return list(d)


def _children(x: Any) -> list:
    t = type(x)
    if t is list or t is tuple:
        return list(x)
    if isinstance(x, cabc.Mapping):
        return [x[k] for k in _sorted_keys(x)]
    return list(x)


def flatten(structure: Any, expand_composites: bool = False) -> list:
    """The leaves of ``structure`` in TF's order; with ``expand_composites``,
    a RaggedTensor or SparseTensor (or its TypeSpec) gives its components."""
    if expand_composites:
        out = []
        _flatten_composites(structure, out)
        return out
    if not is_nested(structure):
        return [structure]
    out: list = []
    _flatten_into(structure, out)
    return out


def _flatten_into(x: Any, out: list) -> None:
    if is_nested(x):
        for c in _children(x):
            _flatten_into(c, out)
    else:
        out.append(x)


def _composite_parts(x: Any):
    """(spec, components) of a composite or a TypeSpec; None for anything else."""
    from tapeflow.framework.composite_tensor import CompositeTensor, TypeSpec

    if isinstance(x, CompositeTensor):
        spec = x._type_spec
        return spec, list(spec._to_components(x))
    if isinstance(x, TypeSpec):
        return None, list(x._component_specs)
    return None


def _flatten_composites(x: Any, out: list) -> None:
    if is_nested(x):
        for c in _children(x):
            _flatten_composites(c, out)
        return
    parts = _composite_parts(x)
    if parts is None:
        out.append(x)
    else:
        for c in parts[1]:
            _flatten_composites(c, out)


def _build_composites(t: Any, leaves: Any) -> Any:
    if is_nested(t):
        return _rebuild(t, [_build_composites(c, leaves) for c in _children(t)])
    parts = _composite_parts(t)
    if parts is None:
        return next(leaves)
    comps = [_build_composites(c, leaves) for c in parts[1]]
    spec = parts[0] if parts[0] is not None else t  # (a TypeSpec template is its own spec)
    return spec._from_components(comps)


def _rebuild(template: Any, children: list) -> Any:
    t = type(template)
    if t is list:
        return list(children)
    if t is tuple:
        return tuple(children)
    if isinstance(template, cabc.Mapping):
        keys = _sorted_keys(template)
        by_key = dict(zip(keys, children))
        if isinstance(template, collections.defaultdict):
            result = collections.defaultdict(template.default_factory)
            for k in template:
                result[k] = by_key[k]
            return result
        try:
            return type(template)((k, by_key[k]) for k in template)
        except TypeError:
            return {k: by_key[k] for k in template}
    if isinstance(template, tuple) and hasattr(template, "_fields"):
        return type(template)(*children)
    if isinstance(template, tuple):
        return tuple(children)
    if isinstance(template, list):
        return list(children)
    return type(template)(children)


def pack_sequence_as(structure: Any, flat_sequence: Any, expand_composites: bool = False) -> Any:
    """Rebuilds ``structure``'s shape with the leaves of ``flat_sequence``."""
    flat_sequence = list(flat_sequence)
    if expand_composites:
        n = len(flatten(structure, expand_composites=True))
        if n != len(flat_sequence):
            raise ValueError(
                f"Could not pack sequence. Structure had {n} atoms, but flat_sequence had "
                f"{len(flat_sequence)} items."
            )
        return _build_composites(structure, iter(flat_sequence))
    if not is_nested(structure):
        if len(flat_sequence) != 1:
            raise ValueError(
                f"Structure is a scalar but len(flat_sequence) == {len(flat_sequence)} > 1"
            )
        return flat_sequence[0]
    n = len(flatten(structure))
    if n != len(flat_sequence):
        raise ValueError(
            f"Could not pack sequence. Structure had {n} atoms, but flat_sequence had "
            f"{len(flat_sequence)} items."
        )
    return _build(structure, iter(flat_sequence))


def _build(t: Any, leaves: Any) -> Any:
    # A module-level function, not a recursive closure: a closure that refers
    # to itself is a reference cycle, which kept every packed value (e.g. all
    # of a step's gradients) alive until the garbage collector ran.
    if is_nested(t):
        return _rebuild(t, [_build(c, leaves) for c in _children(t)])
    return next(leaves)


def assert_same_structure(nest1: Any, nest2: Any, check_types: bool = True, expand_composites: bool = False) -> None:
    _check_same(nest1, nest2, nest1, nest2, check_types)


def _check_same(a: Any, b: Any, nest1: Any, nest2: Any, check_types: bool) -> None:
    # Module-level recursion (no self-referencing closure, hence no cycle).
    if is_nested(a) != is_nested(b):
        raise ValueError(
            f"The two structures don't have the same nested structure.\n\nFirst structure: {nest1}\n\n"
            f"Second structure: {nest2}"
        )
    if not is_nested(a):
        return
    if check_types and type(a) is not type(b) and not (isinstance(a, cabc.Mapping) and isinstance(b, cabc.Mapping)):
        raise TypeError(
            f"The two structures don't have the same sequence type. Input structure has type "
            f"{type(a)}, while shallow structure has type {type(b)}."
        )
    if isinstance(a, cabc.Mapping) and set(a) != set(b):
        raise ValueError(f"The two dictionaries don't have the same set of keys: {list(a)} vs {list(b)}")
    ca, cb = _children(a), _children(b)
    if len(ca) != len(cb):
        raise ValueError(
            f"The two structures don't have the same number of elements.\n\nFirst structure: {nest1}\n\n"
            f"Second structure: {nest2}"
        )
    for x, y in zip(ca, cb):
        _check_same(x, y, nest1, nest2, check_types)


def map_structure(func: Callable, *structure: Any, check_types: bool = True, expand_composites: bool = False) -> Any:
    if not structure:
        raise ValueError("Must provide at least one structure")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    flats = [flatten(s, expand_composites=expand_composites) for s in structure]
    return pack_sequence_as(structure[0], [func(*xs) for xs in zip(*flats)], expand_composites=expand_composites)


def flatten_with_joined_string_paths(structure: Any, separator: str = "/") -> list:
    out: list = []
    _walk_paths(structure, (), separator, out)
    return out


def _walk_paths(x: Any, path: tuple, separator: str, out: list) -> None:
    if is_nested(x):
        keys = _sorted_keys(x) if isinstance(x, cabc.Mapping) else range(len(x))
        for k, c in zip(keys, _children(x)):
            _walk_paths(c, path + (str(k),), separator, out)
    else:
        out.append((separator.join(path), x))
