"""``tf.vectorized_map``: ``fn`` traced once on one row, then run on the whole batch at once, as TF's
``parallel_for/pfor.py``.

1. **Trace.** ``fn`` becomes a graph through ``tf.function`` (AutoGraph on, as TF's pfor) on
   ``TensorSpec``s of one row of each element. A ``GradientTape`` inside ``fn`` records into that graph,
   so per-example gradients are ordinary ops of it.
2. **Check.** A walk over the graph marks *stacked* every tensor that varies with the row: the rows
   themselves, the outputs of ops with a stacked input, and of stateful ops (random draws differ per row).
   Each op with a stacked output needs a batching rule, the per-op "pfor converters" the vectorized
   jacobian uses (``tapeflow/ops/batch_rules.py``: elementwise ops broadcast, ``MatMul`` becomes a batched
   ``MatMul``, reductions, reshapes, transposes, concats, gathers and slices shift their axes...). At the
   first op without one, ``fallback_to_while_loop=True`` logs TF's warning and runs the loop (``map_fn``)
   for the whole ``fn``; ``False`` raises TF's ``ValueError``.
3. **Run.** The graph's ops are replayed under the vectorizing interpreter (``eager/batching.py``) with
   the elements as batched values: an op with a stacked input runs once by its rule on the arrays with
   the batch axis in front, the others run once as they are. Outputs that do not vary are tiled. The ops
   run eagerly (or into an enclosing ``tf.function``), so an outer tape differentiates through them.
"""

from __future__ import annotations

import logging
from typing import Any
from collections.abc import Callable

from tapeflow.framework import nest
from tapeflow.framework.composite_tensor import CompositeTensor
from tapeflow.framework.context import state
from tapeflow.framework.tensor import convert_to_tensor
from tapeflow.framework.tensor_spec import TensorSpec
from tapeflow.graph.control_flow import _elems, _map
from tapeflow.graph.graph import SymbolicTensor

_log = logging.getLogger("tapeflow")

__all__ = ["vectorized_map"]

# Graph node types the replay handles itself (graph/functional_ops.py's _batch_inline).
_REPLAYED = frozenset({"Placeholder", "ReadVariableOp"})
# Stateful random ops of a static shape: as TF's pfor converters, one draw of shape ``(B,) + shape`` gives
# every row its own values (Generator ops, whose state is a variable, fall back to the loop as in TF).
_RANDOM = frozenset({"RandomStandardNormal", "RandomUniform", "TruncatedNormal", "RandomUniformInt"})


class _NoConverterError(Exception):
    """An op of ``fn``'s graph that cannot be vectorized: its type and why (TF's wording)."""

    def __init__(self, op_type: str, cause: str, op: Any = None) -> None:
        super().__init__(op_type, cause)
        self.op_type = op_type
        self.cause = cause
        self.op = op


def _unconvertible(graph: Any, stacked: set, top: bool = True) -> None:
    """Raises :class:`_NoConverterError` for the first op of ``graph`` that varies with the row (an input id
    in ``stacked``, or stateful) and has no batching rule; adds the ids of varying outputs to ``stacked``.
    ``top``: ``graph`` is ``fn``'s own (random draws are batched there only)."""
    from tapeflow.eager.batching import batch_rule_for

    for op in graph.operations:
        if op.type in _REPLAYED:
            continue
        if op.opdef is None:  # assignments, prints: side effects the replay cannot batch
            raise _NoConverterError(op.type, "there is no registered converter for this op.", op)
        varies = any(isinstance(t, SymbolicTensor) and t._id in stacked for t in op.inputs)
        if op.type in _RANDOM and top and not varies and not op.attrs.get("dynamic"):
            stacked.add(op.outputs[0]._id)
            continue
        if op.stateful and "batch_inline" not in op.opdef.extra:
            varies = True  # a random draw (or another side effect) per row
        if not varies:
            continue
        inline = op.opdef.extra.get("batch_inline")
        f = op.attrs.get("f") if inline is not None else None
        if f is not None and getattr(f, "graph", None) is not None:
            # A nested tf.function call is replayed op by op: its ops need rules.
            inner = {ph._id for ph, x in zip(f.inputs, op.inputs[: f.num_inputs])
                     if isinstance(x, SymbolicTensor) and x._id in stacked}
            _unconvertible(f.graph, inner, top=False)
            if len(op.outputs) > f.num_outputs:
                raise _NoConverterError(op.type, "there is no registered converter for this op.", op)
        elif op.opdef.batch is None and batch_rule_for(op.opdef, op.attrs, tuple(op.inputs)) is None:
            raise _NoConverterError(op.type, "there is no registered converter for this op.", op)
        for t in op.outputs:
            stacked.add(t._id)


def _describe(e: _NoConverterError) -> str:
    """The unconvertible op and its inputs, for the error (TF prints the node)."""
    if e.op is None:
        return f" cause: {e.cause}"
    ins = [t.name if isinstance(t, SymbolicTensor) else "<constant>" for t in e.op.inputs]
    return f"{e.op.node_def}\n inputs: {ins}."  # TF: no line break before "Consider"


def _trace(fn: Callable, elems: Any, flat: list) -> Any:
    """The concrete function of ``fn`` on one row of each element (flat positional arguments)."""
    from tapeflow.graph.function import Function

    def one_row(*rows):
        return fn(nest.pack_sequence_as(elems, list(rows)))

    specs = [TensorSpec(e._shape_tuple()[1:], e.dtype) for e in flat]
    return Function(one_row, name="loop_body").get_concrete_function(*specs)


def _run_batched(cf: Any, flat: list, n: int) -> Any:
    """``cf``'s graph replayed on the whole batch: the stacked results in ``fn``'s output structure."""
    from tapeflow.eager import batching
    from tapeflow.framework.execute import execute
    from tapeflow.graph.functional_ops import _batch_inline
    from tapeflow.ops import array_ops, batch_rules

    gf = cf._gf
    with batching.BatchInterpreter(n) as interp:
        def draw(gop, ins):  # one draw for all rows (the interpreter runs an op without batched inputs as is)
            attrs = dict(gop.attrs, shape=(n,) + tuple(gop.attrs["shape"]))
            return interp.wrap(execute(gop.opdef, ins, attrs))

        rows = [interp.wrap(e) if e._shape_tuple()[0] == n else array_ops.reshape(e, e._shape_tuple()[1:])
                for e in flat]  # a first dimension of 1 broadcasts, as TF's
        outs = _batch_inline(None, tuple(rows), {"f": gf, "saved": False}, dict.fromkeys(_RANDOM, draw))
    stacked = []
    for o in outs:
        if type(o) is batching.BatchedTensor and o._interp is interp:
            stacked.append(o._phys)
        else:
            stacked.append(batch_rules.materialize(convert_to_tensor(o), False, n))
    leaves = nest.flatten(cf._out_template)
    vals = [stacked[s] if s >= 0 else batch_rules.materialize(convert_to_tensor(leaf), False, n)
            for s, leaf in zip(cf._out_slots, leaves)]
    return nest.pack_sequence_as(cf._out_template, vals)


def vectorized_map(fn: Callable, elems: Any, fallback_to_while_loop: bool = True, warn: bool = True) -> Any:
    """``fn`` over the slices of ``elems`` along dimension 0, vectorized, as ``tf.vectorized_map``.

    >>> x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    >>> tf.vectorized_map(lambda row: tf.reduce_sum(row * row), x)
    <tf.Tensor: shape=(2,), dtype=float32, numpy=array([ 5., 25.], dtype=float32)>

    ``fn`` is traced once on one row and its graph run on all rows together by per-op batching rules
    (see the module docstring), so a ``GradientTape`` inside ``fn`` gives per-example gradients in a few
    batched ops. The results equal ``tf.map_fn``'s. Each element's first dimension is the batch size
    ``B`` or 1 (broadcast). An op with no batching rule makes the whole ``fn`` run as a loop, with TF's
    warning (``warn=False``: logged at debug level), or raises ``ValueError`` with
    ``fallback_to_while_loop=False``. As TF's pfor, a batch of one is ``fn`` on ``gather(elems, [0])``
    (its gradient is IndexedSlices).
    """
    flat, _ = _elems(elems)
    firsts = [e._shape_tuple()[0] for e in flat]
    if state.graph is None and firsts == [1] * len(flat):
        from tapeflow.ops import array_ops

        rows = [array_ops.reshape(array_ops.gather(e, [0]), e._shape_tuple()[1:]) for e in flat]
        out = fn(nest.pack_sequence_as(elems, rows))
        return nest.map_structure(lambda o: array_ops.expand_dims(convert_to_tensor(o), 0), out)
    n = max((d for d in firsts if d is not None), default=None)
    if n is not None and None not in firsts:
        short = [d for d in firsts if d not in (1, n)]
        if short:  # TF gathers row i of every element: the first missing row fails
            from tapeflow.framework.errors import InvalidArgumentError

            d = min(short)
            raise InvalidArgumentError(None, None, f"indices[{d}] = {d} is not in [0, {d}) [Op:GatherV2]")
    if n is None or None in firsts or n == 0 or any(d not in (1, n) for d in firsts) \
            or any(isinstance(e, CompositeTensor) for e in nest.flatten(elems)):
        return _map(fn, elems, None, keep_empty_shape=True)
    cf = _trace(fn, elems, flat)
    try:
        if any(isinstance(x, CompositeTensor) for x in nest.flatten(cf._out_template)):
            raise _NoConverterError("fn", "its results hold composite tensors (IndexedSlices, sparse, ragged).")
        _unconvertible(cf._gf.graph, {ph._id for ph, d in zip(cf._gf.inputs, firsts) if d == n})
    except _NoConverterError as e:
        if not fallback_to_while_loop:
            raise ValueError(f"No pfor vectorization defined for {e.op_type}\n{_describe(e)}Consider enabling the "
                             "fallback_to_while_loop option to pfor, which may run slower.") from None
        (_log.warning if warn else _log.debug)(f"Using a while_loop for converting {e.op_type} cause {e.cause}")
        if n != 1 and 1 in firsts:  # the loop takes rows of equal-length elements
            from tapeflow.ops import array_ops

            flat = [array_ops.broadcast_to(e, (n,) + tuple(e._shape_tuple()[1:])) for e in flat]
            elems = nest.pack_sequence_as(elems, flat)
        return _map(fn, elems, None, keep_empty_shape=True)
    return _run_batched(cf, flat, n)
