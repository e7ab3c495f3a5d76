"""Graphs built by tracing: ``FuncGraph``, ``Operation`` and ``SymbolicTensor``.

While ``tf.function`` traces a Python function, ``state.graph`` is a
``FuncGraph`` and ``execute`` hands every op to ``FuncGraph.add_op`` instead
of running its kernel. The op's shape rule gives each output's (possibly
partly unknown) shape and dtype, so shape errors surface at trace time.

A ``SymbolicTensor`` is a ``Tensor`` whose ``_value`` is an ``AbstractValue``
(``.shape``, ``.dtype``, ``.ndim`` only): the eager engine's code that reads
``t._value.dtype`` or ``t._shape_tuple()`` works on it unchanged, so a
``GradientTape`` inside a traced function records symbolic ops and runs the
same gradient rules symbolically.

A tensor of another graph used as an op input is *captured*: the graph gets a
placeholder for it and remembers the pair (``captures``); the caller feeds the
outer value. Eager tensors used as inputs are constants of the graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework.tensor import AbstractValue  # noqa: F401 - re-exported (graph.AbstractValue)
from tapeflow.framework import dtypes
from tapeflow.framework.context import state
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.tensor import Tensor, new_id
from tapeflow.framework.tensor_shape import TensorShape

__all__ = [
    "AbstractValue", "SymbolicTensor", "Operation", "FuncGraph", "OperatorNotAllowedInGraphError",
    "graph_scope", "STATEFUL_TYPES", "shape_fallback_ops",
]


from tapeflow.framework.errors import OperatorNotAllowedInGraphError  # noqa: E402 - raised here, TF's tf.errors one


class SymbolicTensor(Tensor):
    """A tensor of a traced graph: the output ``index`` of operation ``op``."""

    __slots__ = ("_graph", "_op", "_index")

    def __init__(self, graph: FuncGraph, op: Operation, index: int, shape: tuple | None, dtype: Any) -> None:
        self._value = AbstractValue(shape, dtype)
        self._id = new_id()
        self._graph = graph
        self._op = op
        self._index = index

    # -- what TF's graph tensors have ----------------------------------------
    @property
    def graph(self) -> FuncGraph:
        return self._graph

    @property
    def op(self) -> Operation:
        return self._op

    @property
    def name(self) -> str:
        return f"{self._op.name}:{self._index}"

    @property
    def value_index(self) -> int:
        return self._index

    @property
    def shape(self) -> TensorShape:
        return TensorShape(self._value.shape)

    def _shape_tuple(self):
        return self._value.shape

    @property
    def ndim(self):
        return self._value.ndim

    def set_shape(self, shape: Any) -> None:
        new = TensorShape(shape)
        if not self.shape.is_compatible_with(new):
            raise ValueError(f"Tensor's shape {self.shape} is not compatible with supplied shape {new}.")
        if self._value.shape is None:
            self._value = AbstractValue(None if new.rank is None else tuple(new.as_list()), self._value.dtype)
        elif new.rank is not None:
            dims = tuple(a if a is not None else b for a, b in zip(self._value.shape, new.as_list()))
            self._value = AbstractValue(dims, self._value.dtype)

    # -- no values in a graph -------------------------------------------------
    def numpy(self):
        # TF's text exactly (a symbolic tensor has no value while tf.function traces: use tf ops or tf.print)
        raise AttributeError("'SymbolicTensor' object has no attribute 'numpy'")

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(
            f"Cannot convert a symbolic tf.Tensor ({self.name}) to a numpy array. This error may indicate "
            "that you're trying to pass a Tensor to a NumPy call, which is not supported inside tf.function."
        )

    def __hash__(self) -> int:
        # TF hashes graph tensors by identity only outside TF 2 functions: in a TF 1 graph (feed_dict keys)
        if getattr(self._graph, "hashable_tensors", False):
            return id(self)
        return Tensor.__hash__(self)

    def __bool__(self) -> bool:
        raise OperatorNotAllowedInGraphError(
            "Using a symbolic `tf.Tensor` as a Python `bool` is not allowed. You can attempt the following "
            "resolutions to the problem: If you are running in Graph mode, use Eager execution mode or "
            "decorate this function with @tf.function (with autograph=True) so that Python control flow on "
            "tensors becomes tf.cond / tf.while_loop."
        )

    def __float__(self) -> float:
        raise TypeError(f"float() argument must be a real number, not a symbolic tf.Tensor ({self.name}).")

    def __int__(self) -> int:
        raise TypeError(f"int() argument must be a real number, not a symbolic tf.Tensor ({self.name}).")

    def __index__(self) -> int:
        raise TypeError(f"A symbolic tf.Tensor ({self.name}) cannot be used as a Python index.")

    def __len__(self) -> int:
        shape = self._value.shape
        if shape is None or not shape or shape[0] is None:
            raise TypeError(
                f"len is not well defined for a symbolic Tensor ({self.name}) of shape {self.shape}. "
                "Please call `x.shape` rather than `len(x)` for shape information."
            )
        return shape[0]

    def __iter__(self):
        shape = self._value.shape
        if shape is None or not shape or shape[0] is None:
            raise OperatorNotAllowedInGraphError(
                f"Iterating over a symbolic `tf.Tensor` ({self.name}) of shape {self.shape} is not allowed: "
                "its length is unknown. Use tf.range / tf.while_loop (AutoGraph converts `for` over tensors)."
            )
        from tapeflow.ops import array_ops

        return iter(array_ops.unstack(self))

    def __repr__(self) -> str:
        return f"<tf.Tensor '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    def __str__(self) -> str:
        # TF: Tensor("x:0", shape=(None, 2), dtype=float32); no shape when the rank is unknown.
        shape = self.shape
        shape = f", shape={shape}" if shape.rank is not None else ""
        return f'Tensor("{self.name}"{shape}, dtype={self.dtype.name})'

    def __reduce__(self):
        raise TypeError(f"Cannot pickle a symbolic tf.Tensor ({self.name}).")


# Op types with side effects: never removed, merged or reordered.
STATEFUL_TYPES = frozenset({
    "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp", "PrintV2", "ReadVariableOp",
})

# Ops that needed the generic shape fallback while tracing (no shape rule).
shape_fallback_ops: set[str] = set()


class Operation:
    """A node of a graph: an op type, its inputs, attrs and outputs.

    ``opdef`` is the registered ``OpDef`` (``None`` for the graph's own
    node types: Placeholder, ReadVariableOp, Assign*VariableOp, PrintV2).
    ``inputs`` are tensors of this graph, or eager tensors (constants).
    """

    __slots__ = ("graph", "opdef", "type", "name", "inputs", "attrs", "outputs", "stateful", "index",
                 "control_inputs")

    def __init__(self, graph: FuncGraph, opdef: Any, type: str, name: str, inputs: tuple, attrs: dict,
                 stateful: bool = False) -> None:
        self.graph = graph
        self.opdef = opdef
        self.type = type
        self.name = name
        self.inputs = inputs
        self.attrs = attrs
        self.outputs: list[SymbolicTensor] = []
        self.stateful = stateful or type in STATEFUL_TYPES
        self.index = len(graph.operations)
        self.control_inputs: tuple = ()  # ops that must run first when this one runs (TF 1 graphs' assigns)

    def get_attr(self, name: str) -> Any:
        try:
            return self.attrs[name]
        except KeyError:
            raise ValueError(f"Operation '{self.name}' has no attr named '{name}'.") from None

    @property
    def node_def(self) -> str:
        return f"{self.name} = {self.type}"

    def __repr__(self) -> str:
        return f"<tf.Operation '{self.name}' type={self.type}>"


class FuncGraph:
    """The graph a traced Python function builds.

    Every op added goes into ``operations`` in program order; placeholders
    of the function's tensor arguments are ``inputs``; ``captures`` pairs
    each captured outer tensor with its placeholder; ``variables`` lists
    variables created while tracing; ``outputs`` is set when tracing ends.
    """

    def __init__(self, name: str, outer: FuncGraph | None = None) -> None:
        self.name = name
        self.outer = outer  # the graph that was current when this one started
        self.operations: list[Operation] = []
        self.inputs: list[SymbolicTensor] = []
        self.outputs: list = []
        self.captures: list[tuple[Tensor, SymbolicTensor]] = []  # (outer tensor, placeholder)
        self._capture_ids: dict[int, SymbolicTensor] = {}
        self.variables: list = []
        self.allow_variable_creation = True
        self.seen_variables: dict[int, Any] = {}  # id -> Variable read or assigned here
        self.assigned_variables: set[int] = set()
        self.is_branch = False  # a cond branch / loop body: variable reads are captured
        self.control_stack: list = []  # tf.control_dependencies: ops made inside depend on these
        # @tf.custom_gradient calls traced here: (op position, name, inputs, outputs, grad_fn)
        self.custom_gradients: list[tuple] = []
        self.aliases: dict[int, SymbolicTensor] = {}  # id of a replayed graph's tensor -> its replay here
        self.captured_reads: dict[int, Any] = {}  # variables read through a capture
        self.local_reads: set[int] = set()  # variables read inside (a loop body that assigns them)
        # Node names as TF gives them (see unique_name): names in use (lower case), the current name scope,
        # the scope of the Python-level wrapper being run (op_scope), and the eager constants used as op
        # inputs, which TF's graph holds as Const nodes: tf.constant's (shared by every op using it),
        # id -> [name or None, tensor, position, scope, name]; the Python values ops converted (one node
        # per use), (op index, input index) -> name; and the Const nodes: ((position, sequence), name, tensor).
        self._names_in_use: dict[str, int] = {}
        self._name_stack = ""
        self._wrapper_scope: str | None = None
        self._consts: dict[int, list] = {}
        self._input_consts: dict[tuple[int, int], str] = {}
        self._const_nodes: list[tuple[tuple[int, int], str, Tensor]] = []
        self.output_names: list[str] = []  # TF's Identity node per output, named when tracing ends

    # -- naming (TF's Graph.unique_name / name_scope) ----------------------------
    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """``name`` under the current name scope, made unique as TF does: case-insensitively, with
        ``_1``, ``_2`` ... appended (``add``, ``add_1``; ``tf.add`` after ``+`` is ``Add_1``)."""
        if self._name_stack:
            name = f"{self._name_stack}/{name}"
        return self._unique(name, mark_as_used)

    def _unique(self, name: str, mark_as_used: bool = True) -> str:
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base = key
            while key in self._names_in_use:
                key = f"{base}_{i}"
                i += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{i - 1}"
        return name

    def name_scope(self, name: str) -> NameScope:
        """``with graph.name_scope("blk") as scope:`` (``tf.name_scope`` while tracing): ops created inside
        are named ``blk/...``; a name already used becomes ``blk_1``; ``"blk/"`` re-enters exactly."""
        return NameScope(self, name)

    def op_scope(self, name: str, fn: Any, *args: Any) -> Any:
        """Runs ``fn(*args)``, a Python-level TF wrapper (``x + y`` is ``with name_scope(None, "add")``),
        as TF names it: the op that makes the result is named ``name`` (``add``, ``add_1``) and the
        Python values it converts are ``add/y``; other ops it makes are ``add/...``."""
        if self._wrapper_scope is not None and self._wrapper_scope == self._name_stack:
            return fn(*args)  # a wrapper called by another (``@`` runs tf.matmul): the outer one names it
        scope = self.unique_name(name)
        saved = self._name_stack, self._wrapper_scope
        self._name_stack = self._wrapper_scope = scope
        try:
            out = fn(*args)
        finally:
            self._name_stack, self._wrapper_scope = saved
        if isinstance(out, SymbolicTensor) and out._graph is self:
            op = out._op
            if op.name.startswith(scope + "/") and "/" not in op.name[len(scope) + 1 :]:
                op.name = scope
        return out

    def note_constant(self, t: Tensor, name: str = "Const") -> None:
        """``tf.constant`` called while tracing: a ``Const`` node here, in program order (named when
        an op first uses it, so constants no op uses leave no node)."""
        if t._id not in self._consts:
            self._consts[t._id] = [None, t, (len(self.operations), new_id()), self._name_stack, name]

    def _name_constants(self, op: Operation) -> None:
        # Eager tensors an op takes are its Const inputs: ``Greater/y`` (the OpDef's argument name under
        # the op's own scope, or under the wrapper's: ``add/y``), ``Const`` for a tf.constant.
        arg_names = None
        for i, x in enumerate(op.inputs):
            if isinstance(x, SymbolicTensor) or not isinstance(x, Tensor):
                continue
            entry = self._consts.get(x._id)
            if entry is not None and entry[0] is not None:
                continue
            if entry is not None:  # a tf.constant: "Const" in the scope it was made in
                entry[0] = self._unique(f"{entry[3]}/{entry[4]}" if entry[3] else entry[4])
                self._const_nodes.append((entry[2], entry[0], x))
                continue
            if arg_names is None:
                from tapeflow.graph.op_arg_names import input_names

                arg_names = input_names(op.type, len(op.inputs))
            scope = self._wrapper_scope if self._wrapper_scope == self._name_stack and self._wrapper_scope else op.name
            name = self._input_consts[op.index, i] = self._unique(f"{scope}/{arg_names[i]}")
            self._const_nodes.append(((op.index, new_id()), name, x))

    def name_outputs(self, outputs: list) -> None:
        """When tracing ends: TF's ``Identity`` node per output (``Identity``, ``Identity_1``, ...)."""
        for t in outputs:
            if not isinstance(t, SymbolicTensor) and isinstance(t, Tensor):
                entry = self._consts.setdefault(t._id, [None, t, (len(self.operations), new_id()), "", "Const"])
                if entry[0] is None:
                    entry[0] = self._unique(entry[4])
                    self._const_nodes.append((entry[2], entry[0], t))
        self.output_names = [self._unique("Identity") for _ in outputs]

    # -- building --------------------------------------------------------------
    def _new_op(
        self, opdef, type_: str, inputs: tuple, attrs: dict, out_specs, stateful: bool = False, name: str | None = None
    ):
        op = Operation(self, opdef, type_, self.unique_name(name or type_), inputs, attrs, stateful)
        op.outputs = [SymbolicTensor(self, op, i, s, d) for i, (s, d) in enumerate(out_specs)]
        if self.control_stack:
            op.control_inputs = op.control_inputs + tuple(d for deps in self.control_stack for d in deps)
        self.operations.append(op)
        if inputs:
            self._name_constants(op)
        return op

    def add_placeholder(self, shape: tuple | None, dtype: Any, name: str = "Placeholder") -> SymbolicTensor:
        op = self._new_op(
            None,
            "Placeholder",
            (),
            {"dtype": dtypes.as_dtype(dtype).name, "shape": shape},
            [(shape, np.dtype(dtypes.as_dtype(dtype)._np))],
            name=name,
        )
        return op.outputs[0]

    def record_custom_gradient(self, name: str, inputs: tuple, outputs: tuple, grad_fn: Any) -> None:
        """A ``@tf.custom_gradient`` call traced into this graph: symbolic
        gradients (a function's call op, ``tf.gradients``) use ``grad_fn`` for
        ``outputs`` instead of differentiating the forward ops."""
        self.custom_gradients.append((len(self.operations), name, inputs, outputs, grad_fn))

    def capture(self, t: SymbolicTensor) -> SymbolicTensor:
        """The placeholder standing for ``t`` (a tensor of an enclosing graph)."""
        ph = self._capture_ids.get(t._id)
        if ph is None:
            src = t._graph
            if getattr(src, "traced_function_done", False) and getattr(self.root(), "tracing_function", False):
                g = self.outer
                while isinstance(g, FuncGraph) and g is not src:
                    g = g.outer
                if g is not src:  # a tensor leaked out of another, finished tf.function trace
                    err = TypeError(
                        f"{t!r} is out of scope and cannot be used here. Use return values, explicit Python locals "
                        "or TensorFlow collections to access it.\nPlease see https://www.tensorflow.org/guide/"
                        "function#all_outputs_of_a_tffunction_must_be_return_values for more information.\n\n"
                        f"The tensor {t!r} cannot be accessed from here, because it was defined in "
                        f"FuncGraph(name={src.name}, id={id(src)}), which is out of scope.")
                    err.ag_pass_through = True  # TF finds it after tracing: not an "in user code" error
                    raise err
            ph = self.add_placeholder(t._value.shape, t._value.dtype)
            self._capture_ids[t._id] = ph
            self.captures.append((t, ph))
            if state.recording:
                # As TF's captures: a tape started in a loop body or branch (that watched ``t`` outside it) sees
                # the placeholder as an identity of ``t``, so gradients reach ``t`` through the body's ops.
                from tapeflow.framework import execute as execute_mod
                from tapeflow.ops.array_ops import IDENTITY

                execute_mod.record_hook(IDENTITY, (t,), {}, (ph,))
        return ph

    def _own(self, x: Any) -> Tensor:
        if isinstance(x, SymbolicTensor):
            if x._graph is not self:
                a = self.aliases.get(x._id)
                return a if a is not None else self.capture(x)
            return x
        if isinstance(x, Tensor):
            return x
        raise TypeError(f"Graph op inputs must be tensors, got {type(x).__name__}: {x!r}")

    def add_op(self, opdef, inputs: tuple, attrs: dict):
        """``execute``'s graph path: adds ``opdef`` and returns its output(s)."""
        inputs = tuple(self._own(x) for x in inputs)
        specs = [(x._value.shape if isinstance(x, SymbolicTensor) else np.shape(x._value), x._value.dtype)
                 for x in inputs]
        out_specs = infer_shapes(opdef, specs, inputs, attrs)
        stateful = getattr(opdef, "extra", {}).get("stateful", False)
        if callable(stateful):  # e.g. control flow: stateful if a branch is
            stateful = stateful(attrs)
        op = self._new_op(opdef, opdef.name, inputs, attrs, out_specs, stateful)
        outputs = op.outputs
        st = state
        if st.recording:
            from tapeflow.framework import execute as execute_mod

            execute_mod.record_hook(opdef, inputs, attrs, tuple(outputs))
        if opdef.num_outputs == 1:
            return outputs[0]
        return list(outputs)

    # -- variables (hooks called by tapeflow.framework.variables) -------------
    def on_variable_created(self, var) -> None:
        root = self.root()
        if not root.allow_variable_creation:
            raise ValueError(
                "tf.function only supports singleton tf.Variables created on the first call. Make sure the "
                "tf.Variable is only created once or created outside tf.function. See "
                "https://www.tensorflow.org/guide/function#creating_tfvariables for more information."
            )
        root.variables.append(var)

    def root(self) -> FuncGraph:
        g = self
        while isinstance(g.outer, FuncGraph) and getattr(g, "is_branch", False):
            g = g.outer
        return g

    def read_variable(self, var) -> SymbolicTensor:
        if self.is_branch and var._id not in self.assigned_variables and var._id not in self.local_reads:
            # A control-flow branch/body reads a variable once, in the outer
            # graph, and captures it: tapes then link the variable to the op.
            self.captured_reads[var._id] = var
            captured = self.capture(_outer_read(self.outer, var))
            if state.recording:
                # A tape started inside the branch/body (a training step in a loop) sees the read here.
                from tapeflow.eager.backprop import record_variable_read

                record_variable_read(var, captured)
            return captured
        self.seen_variables[var._id] = var
        shape = tuple(var._value.shape)
        op = self._new_op(None, "ReadVariableOp", (), {"variable": var}, [(shape, var._value.dtype)])
        out = op.outputs[0]
        if state.recording:
            from tapeflow.eager.backprop import record_variable_read

            record_variable_read(var, out)
        return out

    def assign_variable(self, var, value: Any, kind: str, read_value: bool):
        self.seen_variables[var._id] = var
        self.assigned_variables.add(var._id)
        if not isinstance(value, Tensor):
            value = Tensor(np.asarray(value, dtype=var._value.dtype))
        value = self._own(value)
        vshape, wshape = tuple(var._value.shape), value._value.shape
        if wshape is not None and (len(vshape) != len(wshape) or any(
                a is not None and a != b for a, b in zip(wshape, vshape))):
            if kind == "assign" or shapes_broadcast_fail(vshape, wshape):
                raise ValueError(
                    f"Cannot {kind} value to variable '{var.name}': Shape mismatch. The variable shape "
                    f"{TensorShape(vshape)}, and the assigned value shape {TensorShape(wshape)} are incompatible."
                )
        type_ = {"assign": "AssignVariableOp", "assign_add": "AssignAddVariableOp",
                 "assign_sub": "AssignSubVariableOp"}[kind]
        self._new_op(None, type_, (value,), {"variable": var}, [])
        return var if read_value else None

    def evaluate_initial_value(self, t: Tensor) -> Tensor:
        """Runs the part of the graph that computes ``t`` now (variable
        initial values built from ops while tracing)."""
        from tapeflow.graph.compiler import evaluate_now

        return evaluate_now(self, t)

    def __repr__(self) -> str:
        return f"<FuncGraph '{self.name}' ops={len(self.operations)}>"

    # -- introspection (TF's Graph API) -------------------------------------------
    def get_operations(self) -> list:
        """The graph's operations in program order, as ``tf.Graph.get_operations``: with TF's ``Const``
        node for each constant an op takes and an ``Identity`` node per output of a traced function."""
        consts: dict[int, list] = {}
        for (pos, _), name, t in sorted(self._const_nodes, key=lambda c: c[0]):  # in creation order
            consts.setdefault(pos, []).append(self._view_op("Const", name, (), t))
        ops = []
        for i, op in enumerate(self.operations):
            ops.extend(consts.pop(i, ()))
            ops.append(op)
        for rest in consts.values():
            ops.extend(rest)
        ops.extend(self._view_op("Identity", name, (t,), None) for name, t in zip(self.output_names, self.outputs))
        return ops

    def _view_op(self, type_: str, name: str, inputs: tuple, value: Any) -> Operation:
        # A node of TF's graph that tapeflow's does not need (constants are inlined, outputs are not copied).
        op = Operation(self, None, type_, name, inputs, {} if value is None else {"value": value._value})
        op.outputs = [SymbolicTensor(self, op, 0, *_spec_of(inputs[0] if inputs else value))]
        if value is not None:
            op.attrs["dtype"] = value.dtype
        return op

    def get_operation_by_name(self, name: str) -> Operation:
        for op in self.get_operations():
            if op.name == name:
                return op
        raise KeyError(f"The name '{name}' refers to an Operation not in the graph.")

    def input_name(self, op: Operation, i: int) -> str:
        """How a NodeDef names input ``i`` of ``op``: ``"op"`` for output 0, ``"op:i"`` otherwise."""
        x = op.inputs[i]
        if isinstance(x, SymbolicTensor):
            return x._op.name if x._index == 0 else f"{x._op.name}:{x._index}"
        name = self._input_consts.get((op.index, i)) if op.graph is self and op.opdef is not None else None
        entry = self._consts.get(x._id) if name is None else None
        return name or (entry[0] if entry is not None and entry[0] else "Const")

    def as_graph_def(self) -> GraphDef:
        """A GraphDef-shaped view: ``.node`` is a list of NodeDefs with ``name``, ``op``,
        ``input`` (``"op"`` or ``"op:i"``) and ``attr`` (the op's attributes; a constant's
        ``value`` is its NumPy value), as TF names them (``x``, ``add/y``, ``add``, ``Identity``)."""
        nodes = []
        for op in self.get_operations():
            attrs = {k: v for k, v in op.attrs.items() if not callable(v)}
            nodes.append(NodeDef(op.name, op.type, [self.input_name(op, i) for i in range(len(op.inputs))], attrs))
        return GraphDef(nodes)


class NameScope:
    """``FuncGraph.name_scope``: TF's graph name scope (entering gives ``"scope/"``)."""

    def __init__(self, graph: FuncGraph, name: str) -> None:
        self.graph, self.name = graph, name

    def __enter__(self) -> str:
        g = self.graph
        self._saved = g._name_stack, g._wrapper_scope
        name = self.name
        if not name:
            g._name_stack = ""
        elif name.endswith("/"):
            g._name_stack = name[:-1]
        else:
            g._name_stack = g.unique_name(name)
        g._wrapper_scope = None
        return g._name_stack + "/" if g._name_stack else ""

    def __exit__(self, *exc: Any) -> None:
        self.graph._name_stack, self.graph._wrapper_scope = self._saved


class NodeDef:
    """One node of ``FuncGraph.as_graph_def()``."""

    __slots__ = ("name", "op", "input", "attr")

    def __init__(self, name: str, op: str, inputs: list, attr: dict) -> None:
        self.name, self.op, self.input, self.attr = name, op, inputs, attr

    def __repr__(self) -> str:
        return f"NodeDef(name={self.name!r}, op={self.op!r}, input={self.input!r})"


class GraphDef:
    """A traced function's graph as data (TF's GraphDef fields: ``node``)."""

    def __init__(self, nodes: list) -> None:
        self.node = nodes

    def __repr__(self) -> str:
        return "\n".join(
            f'node {{ name: "{n.name}" op: "{n.op}"' + "".join(f' input: "{i}"' for i in n.input) + " }"
            for n in self.node
        )


def _spec_of(t: Tensor) -> tuple:
    """(shape, dtype) of a symbolic or eager tensor: what a placeholder for it takes."""
    if isinstance(t, SymbolicTensor):
        return (t._value.shape, t._value.dtype)
    return (tuple(np.shape(t._value)), np.asarray(t._value).dtype)


def _outer_read(graph, var) -> Tensor:
    # Read in the enclosing context, with its tapes active (GraphScope saved them).
    st = state
    inner = (st.graph, st.tapes, st.accumulators)
    outer_state = getattr(graph, "_scope_saved_inner", None)
    tapes, accs = outer_state if outer_state is not None else (st.tapes, st.accumulators)
    st.graph, st.tapes, st.accumulators = graph, tapes, accs
    st.update_recording()
    try:
        return var.value()
    finally:
        st.graph, st.tapes, st.accumulators = inner
        st.update_recording()


def shapes_broadcast_fail(vshape: tuple, wshape: tuple) -> bool:
    from tapeflow.ops.shapes import broadcast_shape

    try:
        out = broadcast_shape(vshape, wshape)
    except InvalidArgumentError:
        return True
    return out is not None and tuple(out) != tuple(vshape) and None not in out


def infer_shapes(opdef, specs: list, inputs: tuple, attrs: dict) -> list:
    """The op's shape rule, or a generic fallback: run the kernel on dummy
    inputs of the known shapes (unknown dims become 1, then unknown again)."""
    rule = opdef.shape
    if rule is not None:
        try:
            out = rule(specs, **attrs)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(None, None, _with_op(str(e), opdef.name)) from None
        except (ValueError, TypeError, IndexError) as e:
            if any(s is None or None in s for s, _ in specs):
                return _fallback(opdef, specs, inputs, attrs)
            raise InvalidArgumentError(
                None, None, f"{opdef.name}: shape inference failed on inputs "
                f"({', '.join(_spec_text(s) for s in specs)}): {e} [Op:{opdef.name}]"
            ) from None
        return [(None if s is None else tuple(s), np.dtype(d)) for s, d in out]
    return _fallback(opdef, specs, inputs, attrs)


def _with_op(msg: str, name: str) -> str:
    return msg if f"[Op:{name}]" in msg else f"{msg} [Op:{name}]"


def _spec_text(spec) -> str:
    shape, dtype = spec
    dims = "?" if shape is None else ",".join("?" if d is None else str(d) for d in shape)
    return f"{np.dtype(dtype).name}[{dims}]"


def _fallback(opdef, specs, inputs, attrs) -> list:
    shape_fallback_ops.add(opdef.name)
    unknown = any(s is None or None in s for s, _ in specs)
    arrays = []
    for (shape, dtype), x in zip(specs, inputs):
        if not isinstance(x, SymbolicTensor):
            arrays.append(x._value)
            continue
        if shape is None:
            raise NotImplementedError(f"Op {opdef.name} has no shape rule and an input of unknown rank.")
        dummy_shape = tuple(1 if d is None else d for d in shape)
        arrays.append(np.ones(dummy_shape, dtype=dtype))
    try:
        out = opdef.kernel(*arrays, **attrs)
    except Exception as e:  # noqa: BLE001 - reported as TF's error below
        raise InvalidArgumentError(
            None, None, f"{opdef.name} failed at trace time on inputs "
            f"({', '.join(_spec_text(s) for s in specs)}): {e} [Op:{opdef.name}]"
        ) from None
    outs = [out] if opdef.num_outputs == 1 else list(out)
    result = []
    for o in outs:
        o = np.asarray(o)
        result.append(((None,) * o.ndim if unknown else o.shape, o.dtype))
    return result


class GraphScope:
    """``with GraphScope(g):`` makes ``g`` the graph ops are added to; the
    tapes and accumulators active outside are hidden while inside."""

    def __init__(self, graph: FuncGraph | None) -> None:
        self.graph = graph

    def __enter__(self):
        st = state
        self._saved = (st.graph, st.tapes, st.accumulators)
        if self.graph is not None and isinstance(st.graph, FuncGraph):
            # What the enclosing graph's context was recording (see _outer_read).
            st.graph._scope_saved_inner = (st.tapes, st.accumulators)
        st.graph = self.graph
        st.tapes = []
        st.accumulators = []
        st.update_recording()
        return self.graph

    def __exit__(self, *exc) -> None:
        st = state
        st.graph, st.tapes, st.accumulators = self._saved
        st.update_recording()


graph_scope = GraphScope
