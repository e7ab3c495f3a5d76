"""Shape rules: ``rule(specs, **attrs) -> [(shape, np.dtype), ...]``.

A spec is ``(shape, dtype)`` with ``shape`` a tuple whose dims may be
``None`` (unknown), or ``None`` for unknown rank. Used when tracing graphs.
"""

from __future__ import annotations

import numpy as np

from tapeflow.framework.errors import InvalidArgumentError


def broadcast_shape(a, b, op_name: str = "op"):
    if a is None or b is None:
        return None
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None:
            out.append(y)
        elif y is None or x == y:
            out.append(x)
        else:
            raise InvalidArgumentError(
                None, None, f"Incompatible shapes: {list(a)} vs. {list(b)} [Op:{op_name}]"
            )
    return tuple(out)


def same(specs, **attrs):
    """Elementwise unary: output like the first input."""
    return [specs[0]]


def broadcast(specs, **attrs):
    """Elementwise binary (or n-ary): broadcast shape, dtype of the first."""
    shape = specs[0][0]
    for s, _ in specs[1:]:
        shape = broadcast_shape(shape, s)
    return [(shape, specs[0][1])]


def broadcast_bool(specs, **attrs):
    return [(broadcast(specs)[0][0], np.dtype(bool))]
