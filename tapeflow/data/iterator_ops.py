"""Iterating a ``tf.data.Dataset`` inside ``tf.function``: two stateful ops and the loop AutoGraph builds.

``for x in dataset:`` in a traced function becomes, as in TF, a ``While`` loop
that pulls elements at run time (never unrolled, never baked in as constants):

    handle = AnonymousIterator()                        # a fresh pass at every call
    has, *x = IteratorGetNextAsOptional(handle)         # first element (or zeros, has=False)
    while has: body(x); has, *x = IteratorGetNextAsOptional(handle)

The element's components have the dataset's ``element_spec`` shapes (``None``
dims stay unknown, so a short last batch fits the loop). Both ops are stateful
(kept in program order, never folded) and not differentiable: the elements are
data. As in TF, a tape started inside the loop body differentiates what the body
computes (a training step per batch); a tape around the whole loop does not see
it (TF's loop is a dataset reduction), so its gradients through the loop are None.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from tapeflow.framework.execute import execute
from tapeflow.ops.registry import NotDifferentiable, defop

_LIVE: dict[int, Any] = {}  # handle -> the running iterator of one pass
_NEXT_ID = itertools.count(1)
_MAX_LIVE = 256  # passes left by a `break` are dropped, oldest first


def _iterator_kernel(*, dataset):
    if len(_LIVE) >= _MAX_LIVE:
        del _LIVE[next(iter(_LIVE))]
    h = next(_NEXT_ID)
    _LIVE[h] = iter(dataset._elements())
    return np.asarray(h, np.int64)


ANONYMOUS_ITERATOR = defop("AnonymousIterator", _iterator_kernel, shape=lambda specs, dataset: [((), np.int64)])
ANONYMOUS_ITERATOR.extra["stateful"] = True
NotDifferentiable("AnonymousIterator")


def _np_dtype(spec: Any) -> np.dtype:
    return np.dtype(object) if spec.dtype.name == "string" else np.dtype(spec.dtype.as_numpy_dtype)


def _get_next_kernel(*handle, specs, flatten, source=None):
    element = None
    if handle:  # a pass started by AnonymousIterator
        h = int(handle[0])
        it = _LIVE.get(h)
        if it is not None:
            try:
                element = next(it)
            except StopIteration:
                del _LIVE[h]
    else:  # an eager iterator passed into the function (get_next_as_optional)
        try:
            element = source._next_raw()
        except StopIteration:
            element = None
    if element is None:
        zeros = [np.zeros([d or 0 for d in (s.shape.as_list() if s.shape.rank is not None else [])], _np_dtype(s))
                 for s in specs]
        return (np.asarray(False),) + tuple(zeros)
    leaves = flatten(element)
    return (np.asarray(True),) + tuple(np.asarray(a, dtype=_np_dtype(s)) for a, s in zip(leaves, specs))


def _get_next_shape(in_specs, specs, flatten, source=None):
    out = [((), np.dtype(bool))]
    for s in specs:
        out.append((None if s.shape.rank is None else tuple(s.shape.as_list()), _np_dtype(s)))
    return out


ITERATOR_GET_NEXT = defop("IteratorGetNextAsOptional", _get_next_kernel, shape=_get_next_shape,
                          num_outputs=lambda attrs: 1 + len(attrs["specs"]))
ITERATOR_GET_NEXT.extra["stateful"] = True
NotDifferentiable("IteratorGetNextAsOptional")


def _next_element(source: Any) -> Any:
    """The next raw element of ``source`` (an eager ``OwnedIterator`` or a pass handle); OutOfRangeError at the
    end, as TF's IteratorGetNext."""
    from tapeflow.framework import errors

    try:
        if isinstance(source, (int, np.integer)) or getattr(source, "ndim", None) == 0:
            it = _LIVE.get(int(source))
            if it is None:
                raise StopIteration
            return next(it)
        return source._next_raw()
    except StopIteration:
        raise errors.OutOfRangeError("End of sequence [Op:IteratorGetNext]") from None


def _iterator_get_next_kernel(*handle, source, specs, flatten):
    element = _next_element(handle[0] if handle else source)
    leaves = flatten(element)
    return tuple(np.asarray(a, dtype=_np_dtype(s)) for a, s in zip(leaves, specs))


def _iterator_get_next_shape(in_specs, source, specs, flatten):
    return [(None if s.shape.rank is None else tuple(s.shape.as_list()), _np_dtype(s)) for s in specs]


ITERATOR_GET_NEXT_OP = defop("IteratorGetNext", _iterator_get_next_kernel, shape=_iterator_get_next_shape,
                             num_outputs=lambda attrs: len(attrs["specs"]))
ITERATOR_GET_NEXT_OP.extra["stateful"] = True
NotDifferentiable("IteratorGetNext")


def _dense_specs(spec: Any) -> list:
    from tapeflow.data.dataset import _flatten
    from tapeflow.framework.tensor_spec import TensorSpec

    specs = _flatten(spec)
    if not all(type(s) is TensorSpec for s in specs):
        raise NotImplementedError(
            "next() on a tf.data iterator inside tf.function supports elements of dense tensors; this element_spec "
            f"is {spec}. Iterate it outside the function and pass each element in.")
    return specs


def traced_next(source: Any, spec: Any) -> Any:
    """``next(iterator)`` while tracing: an ``IteratorGetNext`` op that pulls the element when the function
    runs (each call takes the next one, as TF), packed as the dataset's ``element_spec``."""
    from tapeflow.data.dataset import _flatten, _pack

    specs = _dense_specs(spec)
    inputs = (source,) if not hasattr(source, "_next_raw") else ()
    outs = execute(ITERATOR_GET_NEXT_OP, inputs, {"source": None if inputs else source, "specs": specs,
                                                  "flatten": _flatten})
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    return _pack(spec, iter(outs))


def get_next_as_optional(source: Any, spec: Any) -> Any:
    """``iterator.get_next_as_optional()``: a ``tf.experimental.Optional`` of the next element. ``source``: an
    eager iterator (``_next_raw``) or, inside tf.function, a pass handle; traced, an ``IteratorGetNextAsOptional``
    op that pulls the element when the function runs (``has_value()`` False at the end)."""
    from tapeflow.data.dataset import _flatten, _pack, _to_tensors
    from tapeflow.experimental.optional import Optional
    from tapeflow.framework.context import state
    from tapeflow.framework.tensor import constant

    if state.graph is None and hasattr(source, "_next_raw"):
        try:
            return Optional(constant(True), _to_tensors(source._next_raw()), spec)
        except StopIteration:
            return Optional(constant(False), None, spec)
    specs = _dense_specs(spec)
    inputs = () if hasattr(source, "_next_raw") else (source,)
    attrs = {"specs": specs, "flatten": _flatten}
    if not inputs:
        attrs["source"] = source
    outs = execute(ITERATOR_GET_NEXT, inputs, attrs)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    return Optional(outs[0], _pack(spec, iter(outs[1:])), spec)


class GraphIterator:
    """``iter(dataset)`` inside a traced function: a fresh pass each time the function runs (an
    ``AnonymousIterator`` op); ``next()`` is an ``IteratorGetNext`` op."""

    def __init__(self, dataset: Any) -> None:
        self._spec = dataset.element_spec
        _dense_specs(self._spec)
        self._handle = execute(ANONYMOUS_ITERATOR, (), {"dataset": dataset})

    @property
    def element_spec(self) -> Any:
        return self._spec

    def __iter__(self) -> GraphIterator:
        return self

    def __next__(self) -> Any:
        return traced_next(self._handle, self._spec)

    def get_next(self) -> Any:
        return next(self)

    def get_next_as_optional(self) -> Any:
        return get_next_as_optional(self._handle, self._spec)


def dataset_for_stmt(dataset: Any, body_fn: Callable, state: tuple, names: tuple, brk_index: int,
                     while_stmt: Callable, as_bool: Callable) -> tuple:
    """AutoGraph's ``for x in dataset`` inside a traced function (see the module docstring)."""
    from tapeflow.data.dataset import _flatten, _pack
    from tapeflow.framework.tensor_spec import TensorSpec
    from tapeflow.ops import math_ops

    spec = dataset.element_spec
    specs = _flatten(spec)
    if not all(type(s) is TensorSpec for s in specs):
        raise NotImplementedError(
            "Iterating a tf.data.Dataset inside tf.function supports elements of dense tensors; this dataset's "
            f"element_spec is {spec}. Iterate it outside the function and pass each element in.")
    attrs = {"specs": specs, "flatten": _flatten}
    handle = execute(ANONYMOUS_ITERATOR, (), {"dataset": dataset})

    def get_next() -> list:
        outs = execute(ITERATOR_GET_NEXT, (handle,), attrs)
        return list(outs) if isinstance(outs, (list, tuple)) else [outs]

    n = len(specs)

    def test_fn(has, *vals):
        if brk_index >= 0:
            return math_ops.logical_and(has, math_ops.logical_not(as_bool(vals[n + brk_index])))
        return has

    def body(has, *vals):
        element = _pack(spec, iter(vals[:n]))
        out = body_fn(element, *vals[n:])
        return tuple(get_next()) + tuple(out)

    first = get_next()
    from tapeflow.framework.context import state as ctx

    # As TF (whose loop is a non-differentiable dataset reduction): tapes around the loop do not record it, so
    # their gradients through the loop are None; tapes started inside the body work as usual.
    outer_tapes = list(ctx.tapes)
    ctx.tapes.clear()
    ctx.update_recording()
    try:
        from tapeflow.graph.control_flow import relaxed_loop_shapes

        # A reduction in TF: the loop state may change shape (a sum of unknown-shape elements)
        res = relaxed_loop_shapes(while_stmt, test_fn, body, tuple(first) + tuple(state),
                                  ("<has_value>",) + ("<element>",) * n + tuple(names))
    finally:
        ctx.tapes[:] = outer_tapes
        ctx.update_recording()
    return tuple(res[1 + n:])
