"""Graphs as text: one equation per line, with shapes, dtypes and sorted attrs.

    def f(%0: float32[3], %1: float32[]) {
      %2: float32[3] = Mul(%0, %1)
      %3: float32[] = Sum(%2) {axis=None, keepdims=False}
      return (%3)
    }

Small constants print inline as ``float32[](2.0)``; larger ones by shape.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.graph.graph import FuncGraph, SymbolicTensor

__all__ = ["format_graph"]


def _type(shape, dtype) -> str:
    dims = "?" if shape is None else ",".join("?" if d is None else str(d) for d in shape)
    return f"{np.dtype(dtype).name}[{dims}]"


def _attr(v: Any) -> str:
    if hasattr(v, "graph") and hasattr(v, "num_inputs"):  # a GraphFunction
        return v.name
    if hasattr(v, "_trainable") and hasattr(v, "name"):  # a Variable
        return repr(v.name)
    if isinstance(v, np.dtype):
        return v.name
    if callable(v) and hasattr(v, "__name__"):
        return v.__name__
    if isinstance(v, (list, tuple)):
        inner = ", ".join(_attr(x) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' if len(v) == 1 else ''})"
    if hasattr(v, "name") and hasattr(v, "_np"):  # a DType
        return v.name
    return repr(v)


def format_graph(graph: FuncGraph, inputs: list, outputs: list, name: str) -> str:
    names: dict[int, str] = {}

    def new(t) -> str:
        n = f"%{len(names)}"
        names[t._id] = n
        return n

    def ref(x) -> str:
        if isinstance(x, SymbolicTensor):
            n = names.get(x._id)
            return n if n is not None else f"<{x.name}>"
        v = np.asarray(x._value)
        if v.size <= 4:
            body = np.array2string(v, separator=", ") if v.ndim else repr(v[()].item() if v.dtype.kind != "O"
                                                                            else v[()])
            return f"{_type(v.shape, v.dtype)}({body})"
        return f"const {_type(v.shape, v.dtype)}"

    params = ", ".join(f"{new(t)}: {_type(t._value.shape, t._value.dtype)}" for t in inputs)
    lines = [f"def {name}({params}) {{"]
    for op in graph.operations:
        if op.type == "Placeholder":
            if op.outputs[0]._id not in names:
                lines.append(f"  {new(op.outputs[0])}: {_type(op.outputs[0]._value.shape, op.outputs[0]._value.dtype)}"
                             " = Placeholder()")
            continue
        args = ", ".join(ref(x) for x in op.inputs)
        outs = ", ".join(f"{new(o)}: {_type(o._value.shape, o._value.dtype)}" for o in op.outputs)
        attrs = {k: v for k, v in op.attrs.items() if k != "print_fn"}
        attr_text = (" {" + ", ".join(f"{k}={_attr(attrs[k])}" for k in sorted(attrs)) + "}") if attrs else ""
        lhs = f"{outs} = " if outs else ""
        lines.append(f"  {lhs}{op.type}({args}){attr_text}")
    lines.append(f"  return ({', '.join(ref(t) for t in outputs)})")
    lines.append("}")
    # Sub-graphs (cond branches, loop bodies, called functions) follow, once each.
    subs = []
    for op in graph.operations:
        for v in op.attrs.values():
            for f in (v if isinstance(v, (list, tuple)) else [v]):
                if hasattr(f, "graph") and hasattr(f, "num_inputs") and f not in subs:
                    subs.append(f)
    for f in subs:
        lines.append("")
        lines.append(format_graph(f.graph, f.inputs, f.outputs, f.name))
    return "\n".join(lines)
