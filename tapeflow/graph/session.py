"""TF 1 graph mode on tapeflow's graphs: ``tf.Graph().as_default()``, placeholders and ``Session.run``.

A ``Graph`` is a ``FuncGraph`` that is built by hand instead of by tracing a function: ops go into it
while it is the default graph, ``tf.compat.v1.placeholder`` adds its inputs, and ``Session.run`` compiles
the part of it that the fetches need from the fed placeholders (the same compiler as ``tf.function``,
pruned to the fetches) once per fetch/feed signature. Variables made in it hold their values in the
variable (there is one session's state: tapeflow's variables are the process's); ``v.assign(x)`` is an
assign node, run by fetching its result, and ``global_variables_initializer`` / ``v.initializer``
re-assign the initial values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes, errors, nest
from tapeflow.framework.context import state
from tapeflow.framework.tensor import Tensor
from tapeflow.framework.tensor_shape import TensorShape
from tapeflow.framework.variables import Variable
from tapeflow.graph.graph import FuncGraph, GraphScope, Operation, SymbolicTensor


class Graph(FuncGraph):
    """``tf.Graph``: a TF 1 graph built op by op while it is the default (``with g.as_default():``)."""

    hashable_tensors = True  # as TF's outside tf.function: its tensors are dict keys (feed_dict)

    def __init__(self) -> None:
        super().__init__("Graph")
        self.initial_values: dict[int, Any] = {}  # variable id -> the value its initializer assigns
        self._initializers: dict[int, Operation] = {}
        self.var_store: dict[str, Variable] = {}  # tf.compat.v1.get_variable's variables, by name

    def as_default(self) -> GraphScope:
        """Makes this the graph ops are added to (``with tf.Graph().as_default() as g:``)."""
        return GraphScope(self)

    def on_variable_created(self, var: Variable) -> None:
        self.variables.append(var)

    def assign_variable(self, var: Variable, value: Any, kind: str, read_value: bool) -> Any:
        """An assign node; the result is the variable's value read after it (TF 1's ``assign`` tensor),
        or with ``read_value=False`` the assign op itself."""
        super().assign_variable(var, value, kind, False)
        op = self.operations[-1]
        if not read_value:
            return op
        out = self.read_variable(var)
        out.op.control_inputs = (op,)
        return out

    def initializer(self, var: Variable) -> Operation:
        """``var.initializer``: the op that assigns the initial value (or the one ``init_from_checkpoint`` set)."""
        op = self._initializers.get(var._id)
        if op is None:
            value = self.initial_values.get(var._id, var._initial_value)
            op = self.assign_variable(var, Tensor(np.asarray(value._value if isinstance(value, Tensor) else value)),
                                      "assign", False)
            op.name = self._unique(f"{var.name.split(':')[0]}/Assign")
            self._initializers[var._id] = op
        return op

    def set_initial_value(self, var: Variable, value: Tensor) -> None:
        """What ``var``'s initializer assigns from now on (``init_from_checkpoint``)."""
        self.initial_values[var._id] = value
        self._initializers.pop(var._id, None)

    def group(self, ops: list, name: str = "NoOp") -> Operation:
        """A ``NoOp`` that runs ``ops`` (``tf.group``, ``global_variables_initializer``)."""
        op = self._new_op(None, "NoOp", (), {}, [], name=name)
        op.control_inputs = tuple(ops)
        return op

    def get_tensor_by_name(self, name: str) -> SymbolicTensor:
        op_name, _, index = name.partition(":")
        if not index:
            raise ValueError(f"The name '{name}' looks like an (invalid) Operation name, not a Tensor. Tensor names "
                             "must be of the form \"<op_name>:<output_index>\".")
        op = self.get_operation_by_name(op_name)
        try:
            return op.outputs[int(index)]
        except (IndexError, ValueError):
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist. The operation, "
                           f"'{op_name}', exists but only has {len(op.outputs)} outputs.") from None

    def __repr__(self) -> str:
        return f"<tensorflow.python.framework.ops.Graph object at 0x{id(self):x}>"


def default_graph() -> Graph | None:
    """The TF 1 graph being built, or None (eager, or tracing a tf.function)."""
    g = state.graph
    return g if isinstance(g, Graph) else None


class Session:
    """``tf.compat.v1.Session``: runs parts of a ``Graph`` (``sess.run(fetches, feed_dict)``)."""

    def __init__(self, target: str = "", graph: Graph | None = None, config: Any = None) -> None:
        self.graph = graph or default_graph() or Graph()
        self._compiled: dict = {}
        self._reads: dict[int, SymbolicTensor] = {}
        self._scope: GraphScope | None = None
        self._closed = False

    def __enter__(self) -> Session:
        if state.graph is not self.graph:  # as TF: the session's graph is the default inside
            self._scope = GraphScope(self.graph)
            self._scope.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._scope is not None:
            self._scope.__exit__(*exc)
            self._scope = None
        self.close()

    def as_default(self) -> Session:
        return self

    def close(self) -> None:
        self._closed = True

    def _fetch(self, x: Any) -> Any:
        g = self.graph
        if isinstance(x, str):
            x = g.get_tensor_by_name(x) if ":" in x else g.get_operation_by_name(x)
        if isinstance(x, Variable):
            var = x
            t = self._reads.get(var._id)
            if t is None:
                with GraphScope(g):
                    t = self._reads[var._id] = g.read_variable(var)
            return t
        if isinstance(x, Operation):
            if x.graph is not g:
                raise ValueError(f"Fetch argument {x!r} cannot be interpreted as a Tensor. (Operation name: "
                                 f"\"{x.name}\"\nop: \"{x.type}\" is not an element of this graph.)")
            return x
        if isinstance(x, SymbolicTensor):
            if x.graph is not g:
                raise ValueError(f"Fetch argument {x!r} cannot be interpreted as a Tensor. (Tensor {x!r} is not an "
                                 "element of this graph.)")
            return x
        if isinstance(x, Tensor):
            return x
        raise TypeError(f"Fetch argument {x!r} has invalid type {type(x)}, must be a string or Tensor. (Can not "
                        f"convert a {type(x).__name__} into a Tensor or Operation.)")

    def run(self, fetches: Any, feed_dict: dict | None = None, options: Any = None, run_metadata: Any = None) -> Any:
        """The values of ``fetches`` (a tensor, op, variable or name, or a nested structure of them) with
        ``feed_dict``'s values for its placeholders; a fetched op gives None."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        from tapeflow.graph.compiler import compile_graph

        leaves = nest.flatten(fetches)
        targets = [self._fetch(x) for x in leaves]
        phs, values = [], []
        for key, value in (feed_dict or {}).items():
            t = self._fetch(key)
            if not isinstance(t, SymbolicTensor) or t.op.type != "Placeholder":
                raise NotImplementedError(f"Session.run: feeding {t!r}; tapeflow feeds placeholders only")
            arr = np.asarray(value._value if isinstance(value, Tensor) else value,
                             dtype=np.dtype(dtypes.as_dtype(t.dtype)._np))
            if not TensorShape(t.shape).is_compatible_with(arr.shape):
                raise ValueError(f"Cannot feed value of shape {arr.shape} for Tensor {t.name}, which has shape "
                                 f"{TensorShape(t.shape)}")
            phs.append(t)
            values.append(arr)
        outputs = [t for t in targets if isinstance(t, Tensor)]
        ops = tuple(t for t in targets if isinstance(t, Operation))
        key = (tuple(t._id for t in outputs), tuple(id(o) for o in ops), tuple(p._id for p in phs),
               len(self.graph.operations))
        fn = self._compiled.get(key)
        if fn is None:
            try:
                fn = compile_graph(self.graph, phs, outputs, name="Session.run", side_effects=False, targets=ops)
            except ValueError:
                fed = {p._id for p in phs}
                missing = [op.outputs[0].name for op in self.graph.operations
                           if op.type == "Placeholder" and op.outputs[0]._id not in fed]
                raise errors.InvalidArgumentError(
                    None, None, f"You must feed a value for placeholder tensor '{missing[0].split(':')[0]}' with "
                    f"dtype {dtypes.as_dtype(self.graph.get_tensor_by_name(missing[0]).dtype).name}"
                    if missing else "Session.run: a fetch depends on a value that was not fed") from None
            self._compiled[key] = fn
        results = iter(fn(*values))
        out = []
        for t in targets:
            if isinstance(t, Operation):
                out.append(None)
            else:
                arr = np.asarray(next(results))
                out.append(arr[()] if arr.ndim == 0 else arr)
        return nest.pack_sequence_as(fetches, out)
