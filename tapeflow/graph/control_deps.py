"""``tf.control_dependencies``, ``tf.group``, ``tf.no_op``, ``tf.tuple`` and the small graph queries at
TF's top level (``inside_function``, ``is_symbolic_tensor``, ``get_static_value``, ``get_current_name_scope``,
``get_logger``).

Eagerly ops run in program order, so these do nothing but return what TF returns (None, the tensors).
Inside ``tf.function`` an op made under ``control_dependencies`` gets the given ops as control inputs, and
``group``/``no_op`` are ``NoOp`` operations: the compiler keeps what they depend on and runs it first.
"""

from __future__ import annotations

import logging

import numpy as np
from typing import Any

from tapeflow.framework.context import state
from tapeflow.framework.tensor import Tensor
from tapeflow.graph.graph import Operation, SymbolicTensor


def _as_op(x: Any) -> Operation | None:
    from tapeflow.framework.variables import Variable

    if isinstance(x, Operation):
        return x
    if isinstance(x, SymbolicTensor):
        return x.op
    if x is None or isinstance(x, (Tensor, Variable)):
        return None  # an eager value has already run
    if callable(x):
        x = x()
        return _as_op(x)
    raise TypeError(f"Can not convert a {type(x).__name__} into a Tensor or Operation.")


class control_dependencies:  # noqa: N801 - TF's name
    """``with tf.control_dependencies([a, b]):`` — ops made inside run after ``a`` and ``b``."""

    def __init__(self, control_inputs: Any) -> None:
        self._deps = None if control_inputs is None else list(control_inputs)
        self._graph = None

    def __enter__(self) -> None:
        g = state.graph
        if g is not None and self._deps is not None:
            deps = tuple(op for op in map(_as_op, self._deps) if op is not None)
            g.control_stack.append(deps)
            self._graph = g
        return None

    def __exit__(self, *exc: Any) -> None:
        if self._graph is not None:
            self._graph.control_stack.pop()
            self._graph = None


def group(*inputs: Any, name: str | None = None) -> Operation | None:
    """``tf.group``: one op that runs all of ``inputs`` (eagerly, None: they have run)."""
    g = state.graph
    if g is None:
        return None
    op = g._new_op(None, "NoOp", (), {}, [], name=name or "NoOp")
    op.control_inputs = op.control_inputs + tuple(o for o in map(_as_op, _flatten(inputs)) if o is not None)
    return op


def _flatten(inputs: Any) -> list:
    from tapeflow.framework import nest

    return nest.flatten(list(inputs))


def no_op(name: str | None = None) -> Operation | None:
    """``tf.no_op``: an op that does nothing (eagerly, None)."""
    return group(name=name)


def tuple_(tensors: Any, control_inputs: Any = None, name: str | None = None) -> list:
    """``tf.tuple``: the tensors, each available only once all of them (and ``control_inputs``) are."""
    from tapeflow.ops import array_ops

    tensors = list(tensors)
    if state.graph is None:
        return tensors
    gate = group(*[t for t in tensors if t is not None], *(control_inputs or []))
    with control_dependencies([gate]):
        return [None if t is None else array_ops.identity(t) for t in tensors]


def inside_function() -> bool:
    """``tf.inside_function``: whether a ``tf.function`` (or a TF 1 graph) is being built."""
    return state.graph is not None


def is_symbolic_tensor(tensor: Any) -> bool:
    """``tf.is_symbolic_tensor``: whether ``tensor`` is a graph tensor (not an eager one)."""
    return isinstance(tensor, SymbolicTensor)


def get_current_name_scope() -> str:
    """``tf.get_current_name_scope``: the enclosing ``tf.name_scope``s, joined by "/"."""
    from tapeflow.framework.variables import _name_scope_stack

    return "/".join(_name_scope_stack)


def get_logger() -> logging.Logger:
    """``tf.get_logger``: the logger tapeflow's warnings go to (``tapeflow``; TF's is ``tensorflow``)."""
    return logging.getLogger("tapeflow")


class AggregationMethod:
    """``tf.AggregationMethod``: accepted by ``tf.gradients``; tapeflow always adds gradients with add_n."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


def get_static_value(tensor: Any, partial: bool = False) -> Any:
    """``tf.get_static_value``: the NumPy value of ``tensor`` when it is known without running a graph
    (an eager tensor, a constant, a Python value), else None."""
    from tapeflow.framework.variables import Variable

    if isinstance(tensor, SymbolicTensor):
        return None
    if isinstance(tensor, Variable):
        return None  # TF: a variable's value is not static
    if isinstance(tensor, Tensor):
        return tensor.numpy()
    return np.asarray(tensor) if not isinstance(tensor, (int, float, bool)) else tensor
