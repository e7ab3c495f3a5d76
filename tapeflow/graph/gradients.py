"""Symbolic reverse mode over a traced graph; ``tf.gradients``, ``tf.hessians``.

The graph's ops become the same ``OpRecord``s an eager tape makes, and the
same reverse walk (``tapeflow.eager.tape.backward``) runs the same gradient
rules — but with a graph current, so each rule adds ops instead of computing
numbers. Reads of a variable are sources; a variable's gradient sums them.
"""

from __future__ import annotations

from typing import Any

from tapeflow.eager import backprop
from tapeflow.eager import tape as tape_lib
from tapeflow.eager.tape import OpRecord
from tapeflow.framework import nest
from tapeflow.framework.context import state
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.graph.graph import FuncGraph, SymbolicTensor
from tapeflow.ops import registry

__all__ = ["graph_records", "symbolic_backward", "gradients", "hessians"]


def _read_grad(op, g):
    return g


def graph_records(graph: FuncGraph) -> list:
    """One ``OpRecord`` per differentiable op of ``graph``, in program order."""
    records = []
    custom = list(graph.custom_gradients)
    # A custom gradient's outputs (identities of the function's results) are
    # differentiated by its grad_fn, never through the forward ops.
    skip = {o._id for c in custom for o in c[3]}
    for i, op in enumerate(graph.operations):
        while custom and custom[0][0] <= i:
            records.append(_custom_record(*custom.pop(0)[1:]))
        if op.opdef is None or (skip and op.outputs and op.outputs[0]._id in skip):
            continue
        spec = registry._GRADS.get(op.type)
        if spec is None or spec.fn is None:
            continue
        ins, outs = op.inputs, op.outputs
        records.append(OpRecord(
            op.type, op.attrs, tuple(x._id for x in ins), tuple(o._id for o in outs), ins, tuple(outs),
            tuple(_shape(x) for x in ins), tuple(x._value.dtype for x in ins),
            tuple(o._value.shape for o in outs), tuple(o._value.dtype for o in outs), spec.fn,
        ))
    records.extend(_custom_record(*c[1:]) for c in custom)
    return records


def _custom_record(name: str, inputs: tuple, outputs: tuple, grad_fn) -> OpRecord:
    return OpRecord(name, {}, tuple(x._id for x in inputs), tuple(o._id for o in outputs), inputs, outputs,
                    tuple(_shape(x) for x in inputs), tuple(x._value.dtype for x in inputs),
                    tuple(o._value.shape for o in outputs), tuple(o._value.dtype for o in outputs), grad_fn)


def _shape(x: Tensor):
    return x._value.shape if isinstance(x, SymbolicTensor) else tuple(x._shape_tuple())


def symbolic_backward(graph: FuncGraph, initial: dict, source_ids: set) -> dict:
    """Gradients (as tensors of the current graph) of ``source_ids`` given
    ``initial`` = {tensor id: [output gradient, ...]} over ``graph``'s ops."""
    return tape_lib.backward(graph_records(graph), initial, set(source_ids), backprop.op_gradients,
                             backprop.aggregate, False)


def _variable_reads(graph: FuncGraph, var) -> list:
    return [op.outputs[0] for op in graph.operations
            if op.type == "ReadVariableOp" and op.attrs["variable"] is var]


def gradients(ys: Any, xs: Any, grad_ys: Any = None, name: str = "gradients", gate_gradients: bool = False,
              aggregation_method: Any = None, stop_gradients: Any = None,
              unconnected_gradients: Any = backprop.UnconnectedGradients.NONE) -> list:
    """Symbolic derivatives of sum(``ys``) w.r.t. each of ``xs``, as ``tf.gradients``.

    Only valid inside ``tf.function`` (graph construction), as in TF2::

        @tf.function
        def f(x):
            return tf.gradients(x * x, x)[0]

    ``stop_gradients`` are treated as constants; unconnected ``xs`` give
    ``None`` (or zeros with ``unconnected_gradients='zero'``).
    """
    from tapeflow.framework.variables import Variable
    from tapeflow.ops import array_ops

    graph = state.graph
    if graph is None:
        raise RuntimeError("tf.gradients is not supported when eager execution is enabled. Use tf.GradientTape "
                           "instead.")
    unconnected = backprop._unconnected(unconnected_gradients)
    ys_list = nest.flatten(ys)
    xs_list = nest.flatten(xs)
    gy_list = [None] * len(ys_list) if grad_ys is None else nest.flatten(grad_ys)
    if len(gy_list) != len(ys_list):
        raise ValueError(f"Passed {len(gy_list)} grad_ys for {len(ys_list)} ys")
    initial: dict[int, list] = {}
    for y, gy in zip(ys_list, gy_list):
        y = convert_to_tensor(y)
        if gy is None:
            if y._value.dtype.kind not in "fc":
                continue
            gy = array_ops.ones_like(y)
        else:
            gy = convert_to_tensor(gy, dtype=y.dtype)
        initial.setdefault(y._id, []).append(gy)
    source_map: list[list[int]] = []
    for x in xs_list:
        if isinstance(x, Variable):
            source_map.append([r._id for r in _variable_reads(graph, x)])
        elif isinstance(x, Tensor):
            source_map.append([x._id])
        else:
            raise TypeError(f"tf.gradients xs must be tensors or variables, got {type(x).__name__}")
    stops = {convert_to_tensor(s)._id for s in nest.flatten(stop_gradients)} if stop_gradients is not None else set()
    source_ids = {i for ids in source_map for i in ids}
    records = [r for r in graph_records(graph) if not (set(r.output_ids) & stops)]
    found = tape_lib.backward(records, initial, source_ids, backprop.op_gradients, backprop.aggregate, False)
    result = []
    for x, ids in zip(xs_list, source_map):
        gs = [found[i] for i in ids if i in found]
        gs += [g for i in ids if i not in found and i in initial for g in initial[i]]
        g = None if not gs else (gs[0] if len(gs) == 1 else backprop.aggregate(gs))
        if g is None and unconnected is backprop.UnconnectedGradients.ZERO:
            g = array_ops.zeros_like(x)
        result.append(g)
    return result


def hessians(ys: Any, xs: Any, name: str = "hessians", colocate_gradients_with_ops: bool = False,
             gate_gradients: bool = False, aggregation_method: Any = None) -> list:
    """The Hessian of sum(``ys``) w.r.t. each of ``xs`` (shape ``x.shape + x.shape``), as ``tf.hessians``.

    Built from ``tf.gradients`` row by row of the flattened gradient; only
    valid inside ``tf.function``.
    """
    from tapeflow.ops import array_ops

    if state.graph is None:
        raise RuntimeError("tf.hessians is not supported when eager execution is enabled. Use tf.GradientTape "
                           "instead.")
    xs_list = nest.flatten(xs)
    out = []
    for x, g in zip(xs_list, gradients(ys, xs_list)):
        shape = tuple(x._shape_tuple())
        if g is None:
            out.append(None)
            continue
        if None in shape:
            raise NotImplementedError("tf.hessians needs x's shape fully known while tracing "
                                      "(unknown dimensions are not supported yet).")
        n = 1
        for d in shape:
            n *= d
        flat = array_ops.reshape(g, (n,))
        rows = []
        for i in range(n):
            (h,) = gradients(flat[i], [x], unconnected_gradients="zero")
            rows.append(h)
        out.append(array_ops.reshape(array_ops.stack(rows), shape + shape))
    return out
