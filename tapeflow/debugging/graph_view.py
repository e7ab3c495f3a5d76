"""Pictures of traced ``tf.function`` graphs, and retracing explanations."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from tapeflow.debugging.tape_info import _q, _spec_text

_log = logging.getLogger("tapeflow.debugging")


def _graph_of(fn: Any, args: tuple, kwargs: dict):
    from tapeflow.graph.function import ConcreteFunction, Function
    from tapeflow.graph.graph import FuncGraph

    if isinstance(fn, FuncGraph):
        return fn, None
    if isinstance(fn, Function):
        fn = fn.get_concrete_function(*args, **kwargs)
    if isinstance(fn, ConcreteFunction):
        return fn.graph, fn
    raise TypeError(
        f"graph_to_dot() needs a tf.function, a ConcreteFunction or a FuncGraph, got {type(fn).__name__}. "
        "Wrap the Python function with tf.function first.")


def _graph_lines(graph, prefix: str, title: str, outputs: list | None = None) -> list:
    from tapeflow.graph.graph import SymbolicTensor

    lines = [f"  subgraph cluster_{prefix} {{", f"    label={_q(title)};", "    color=gray60;"]
    node_of: dict[int, str] = {}
    outputs = {t._id for t in (graph.outputs if outputs is None else outputs) if isinstance(t, SymbolicTensor)}
    consts = 0
    for op in graph.operations:
        nid = f"{prefix}{op.index}"
        node_of[id(op)] = nid
        outs = ", ".join(_spec_text(o._value.shape, np.dtype(o._value.dtype)) for o in op.outputs)
        label = op.type if op.name == op.type else f"{op.type}\n{op.name}"
        label += f"\n{outs}" if outs else ""
        if op.type == "Placeholder":
            style = "shape=ellipse, style=filled, fillcolor=palegreen"
        elif op.type == "ReadVariableOp":
            var = op.attrs.get("variable")
            if var is not None:
                label += f"\nvariable '{var.name}'"
            style = "shape=box, style=\"rounded,filled\", fillcolor=lightyellow"
        elif any(o._id in outputs for o in op.outputs):
            style = "shape=box, style=\"rounded,filled\", fillcolor=lightblue, penwidth=2"
        else:
            style = "shape=box, style=rounded"
        lines.append(f"    {nid} [{style}, label={_q(label)}];")
        for x in op.inputs:
            if isinstance(x, SymbolicTensor) and id(x.op) in node_of:
                src = node_of[id(x.op)]
                lines.append(f"    {src} -> {nid}" + (f" [label={_q(str(x._index))}];" if x._index else ";"))
            else:
                cid = f"{prefix}c{consts}"
                consts += 1
                v = np.asarray(x._value)
                text = np.array2string(v, precision=4, threshold=4) if v.size <= 4 else _spec_text(v.shape, v.dtype)
                lines.append(f"    {cid} [shape=plaintext, fontcolor=gray30, label={_q('const ' + text)}];")
                lines.append(f"    {cid} -> {nid};")
    lines.append("  }")
    return lines


def graph_to_dot(fn: Any, *args: Any, backward: bool = False, **kwargs: Any) -> str:
    """Graphviz DOT of a traced function's graph.

    ``fn`` is a ``tf.function`` (traced for ``args``/``kwargs`` if needed), a
    ``ConcreteFunction`` or a ``FuncGraph``. Inputs (placeholders) are green,
    variable reads yellow, ops producing outputs blue. With ``backward=True``
    the gradient function's graph is drawn too, in its own box.
    """
    graph, cf = _graph_of(fn, args, kwargs)
    lines = ["digraph function {", "  rankdir=TB;", '  node [fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9];']
    lines += _graph_lines(graph, "f", f"forward: {graph.name}", cf.graph.outputs if cf is not None else None)
    if backward:
        if cf is None:
            raise ValueError("backward=True needs a tf.function or ConcreteFunction (a FuncGraph has no gradient "
                             "function attached).")
        bwd = cf.backward_function()
        lines += _graph_lines(bwd.graph, "b", f"backward: {bwd.graph.name}", bwd.outputs)
    lines.append("}")
    return "\n".join(lines) + "\n"


# -- retracing --------------------------------------------------------------------

def _param_names(function) -> list:
    sig = getattr(function, "_signature", None)
    return list(sig.parameters) if sig is not None else []


def _describe_key(k) -> str:
    if isinstance(k, tuple) and k and k[0] == "T":
        return f"Tensor {_spec_text(k[1], k[2])}"
    if isinstance(k, tuple) and k and k[0] == "P":
        return f"Python value {k[1]!r}"
    if isinstance(k, tuple) and k and k[0] == "V":
        return "a different tf.Variable object"
    if isinstance(k, tuple) and k and k[0] == "O":
        return "a different (unhashable) Python object"
    return "a different structure"


def _diff(a, b, path: str, out: list) -> None:
    if a == b:
        return
    if (isinstance(a, tuple) and isinstance(b, tuple) and a and b and a[0] == b[0] == "T"):
        what = []
        if a[2] != b[2]:
            what.append(f"dtype {_spec_text(a[1], a[2]).split('[')[0]} -> {_spec_text(b[1], b[2]).split('[')[0]}")
        if a[1] != b[1]:
            shp = lambda s: "None" if s is None else "(" + ", ".join("None" if d is None else str(d) for d in s) + \
                (",)" if len(s) == 1 else ")")
            what.append(f"shape {shp(a[1])} -> {shp(b[1])}")
        out.append(f"{path}: {' and '.join(what)}")
        return
    if (isinstance(a, tuple) and isinstance(b, tuple) and a and b and a[0] == b[0] == "P"):
        out.append(f"{path}: Python value {a[1]!r} -> {b[1]!r} (each new Python value traces again; pass a "
                   "tensor instead)")
        return
    if (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and a and b and a[0] == b[0]
            and a[0] not in ("T", "P", "V", "O")):
        for i, (x, y) in enumerate(zip(a[1:], b[1:])):
            if isinstance(x, tuple) and x and x[0] == "K" and isinstance(y, tuple) and y and y[0] == "K":
                _diff(x[2], y[2], f"{path}[{x[1]!r}]", out)
            else:
                _diff(x, y, f"{path}[{i}]", out)
        return
    out.append(f"{path}: {_describe_key(a)} -> {_describe_key(b)}")


def explain_retrace(function, new_key, old_keys: list) -> str | None:
    """One line per changed argument between ``new_key`` and the closest
    previously traced key of ``function`` (None for a first trace)."""
    if not old_keys:
        return None
    names = _param_names(function)
    best = None
    for old in old_keys:
        out: list = []
        _diff(old, new_key, "args", out)
        if best is None or len(out) < len(best):
            best = out
    if not best:
        return None
    pretty = []
    for line in best:
        # "args[1][0]..." -> the parameter's name: key = ((args...), {kwargs})
        if line.startswith("args[0]["):
            rest = line[len("args[0]["):]
            idx, _, tail = rest.partition("]")
            try:
                name = names[int(idx)]
            except (ValueError, IndexError):
                name = f"argument {idx}"
            line = f"argument '{name}'{tail}"
        elif line.startswith("args[1]["):
            line = "keyword argument " + line[len("args[1]"):]
        pretty.append(line)
    return "; ".join(pretty)


def log_retrace(function, new_key) -> None:
    old = [k for k in function._cache if k != "signature" and k != new_key]
    text = explain_retrace(function, new_key, old)
    if text is None:
        return
    n = function._tracing_count + 1
    _log.warning("tf.function '%s' is retracing (trace #%d): %s", function._name, n, text)
