"""``tf.function``: tracing, the cache of concrete functions, calling them.

``Function`` (what ``@tf.function`` returns) maps each call's *signature* —
tensor shapes and dtypes, Python values, variable identities — to a
``ConcreteFunction``, tracing the Python function once per new signature
(TF's rules: ``1``, ``1.0`` and ``True`` are equal keys, so they share one
trace). A ``ConcreteFunction`` holds a ``GraphFunction``: the traced graph,
its inputs and outputs, compiled on first use into one Python callable
(``compiler.py``), plus its backward function, built once on demand.

Calling a concrete function eagerly with no tape recording runs the
compiled callable directly on the NumPy values; under a tape it runs as one
``StatefulPartitionedCall`` op (``graph/functional_ops.py``) whose gradient
is the backward function; while another function is traced it adds that op
to the outer graph.
"""

from __future__ import annotations

import functools
import inspect
import logging
import re
import sys
import types
import weakref
from typing import Any
from collections.abc import Callable

import numpy as np

from tapeflow.framework import context as _context
from tapeflow.framework import dtypes, nest
from tapeflow.framework.composite_tensor import CompositeTensor, TypeSpec
from tapeflow.framework.context import state
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.sparse_tensor import SparseTensor, SparseTensorSpec
from tapeflow.framework.tensor import Tensor, _wrap, convert_to_tensor
from tapeflow.framework.tensor_shape import TensorShape
from tapeflow.framework.tensor_spec import TensorSpec
from tapeflow.framework.variables import Variable
from tapeflow.graph.graph import FuncGraph, SymbolicTensor, _spec_of, graph_scope

__all__ = ["function", "Function", "ConcreteFunction", "GraphFunction", "TensorSpec", "replay", "print_",
           "init_scope"]


# -----------------------------------------------------------------------------
# TensorSpec
# -----------------------------------------------------------------------------

# tf.summary.trace_on() sets this to collect the graphs of the functions called.
trace_hook = None


# -----------------------------------------------------------------------------
# GraphFunction: a graph with inputs and outputs, compiled, with a backward
# -----------------------------------------------------------------------------

class GraphFunction:
    """A traced graph as a function of its ``inputs`` (placeholders) giving
    its ``outputs``; see the module docstring. ``grad_mask`` (backward
    functions only) says which forward call inputs get a gradient."""

    def __init__(self, graph: FuncGraph, inputs: list, outputs: list, name: str) -> None:
        self.graph = graph
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.name = name
        self.num_inputs = len(self.inputs)
        self.num_outputs = len(self.outputs)
        seen: dict[int, Any] = {}
        for op in graph.operations:
            if op.type == "ReadVariableOp":
                seen.setdefault(id(op.attrs["variable"]), op.attrs["variable"])
        self.read_vars = list(seen.values())
        self.grad_mask: list[bool] | None = None
        self._compiled = None
        self._compiled_saved = None
        self._backward: GraphFunction | None = None
        self._saved: list | None = None
        self._full: dict[bool, GraphFunction] = {}
        self._jvps: dict[tuple, GraphFunction | None] = {}  # forward-mode functions (graph/functional_ops.py)

    # -- running -------------------------------------------------------------
    def compiled(self):
        if self._compiled is None:
            from tapeflow.graph.compiler import compile_graph

            self._compiled = compile_graph(self.graph, self.inputs, self.outputs, self.name)
        return self._compiled

    def run(self, arrays, saved: bool):
        if saved:
            if self._compiled_saved is None:
                from tapeflow.graph.compiler import compile_graph

                self._compiled_saved = compile_graph(self.graph, self.inputs, self.outputs + self.saved_tensors(),
                                                     self.name + "_with_saved")
            return self._compiled_saved(*arrays)
        return self.compiled()(*arrays)

    def output_specs(self, saved: bool) -> list:
        outs = self.outputs + (self.saved_tensors() if saved else [])
        return [_spec_of(t) for t in outs]

    def num_call_outputs(self, saved: bool) -> int:
        return self.num_outputs + (len(self.saved_tensors()) if saved else 0)

    # -- gradients -------------------------------------------------------------
    def saved_tensors(self) -> list:
        """Forward tensors the backward function reads (its captures)."""
        self.backward()
        return self._saved

    def _source_grads(self, graph: FuncGraph, inputs: list, initial: dict) -> list:
        from tapeflow.eager import backprop
        from tapeflow.graph.gradients import symbolic_backward

        reads: dict[int, list] = {id(v): [] for v in self.read_vars}
        for op in graph.operations:
            if op.type == "ReadVariableOp" and id(op.attrs["variable"]) in reads:
                reads[id(op.attrs["variable"])].append(op.outputs[0]._id)
        sources = {t._id for t in inputs if t._value.dtype.kind in "fc"}
        for ids in reads.values():
            sources.update(ids)
        found = symbolic_backward(graph, initial, sources)
        grads = []
        for t in inputs:
            grads.append(found.get(t._id) if t._value.dtype.kind in "fc" else None)
        for v in self.read_vars:
            gs = [found[i] for i in reads[id(v)] if i in found]
            grads.append(None if not gs else (gs[0] if len(gs) == 1 else backprop.aggregate(gs)))
        return [None if g is None else convert_to_tensor(g) for g in grads]

    def backward(self) -> GraphFunction:
        """The backward function: (output grads, saved intermediates) ->
        gradients of the connected inputs, built once."""
        if self._backward is None:
            fwd = self.graph
            bgraph = FuncGraph(self.name + "_backward")
            with graph_scope(bgraph):
                gphs = [bgraph.add_placeholder(*_spec_of(o)) for o in self.outputs]
                initial: dict[int, list] = {}
                for o, g in zip(self.outputs, gphs):
                    if isinstance(o, SymbolicTensor) and o._graph is fwd and o._value.dtype.kind in "fc":
                        initial.setdefault(o._id, []).append(g)
                grads = self._source_grads(fwd, self.inputs, initial)
            self._saved = [outer for outer, _ in bgraph.captures]
            bwd = GraphFunction(bgraph, gphs + [ph for _, ph in bgraph.captures],
                                [g for g in grads if g is not None], self.name + "_backward")
            bwd.grad_mask = [g is not None for g in grads]
            self._backward = bwd
        return self._backward

    def full_backward(self, with_saved: bool) -> GraphFunction:
        """A backward function that recomputes the forward from the inputs:
        (inputs, output grads[, saved grads]) -> input gradients. Used when
        the saved intermediates themselves carry gradients (higher orders)."""
        if with_saved not in self._full:
            saved = self.saved_tensors() if with_saved else []
            g = FuncGraph(self.name + "_full_backward")
            with graph_scope(g):
                phs = [g.add_placeholder(*_spec_of(t)) for t in self.inputs]
                mapping = replay(self.graph, {t._id: p for t, p in zip(self.inputs, phs)}, side_effects=False)
                gphs = [g.add_placeholder(*_spec_of(o)) for o in self.outputs]
                sphs = [g.add_placeholder(*_spec_of(s)) for s in saved]
                initial: dict[int, list] = {}
                for o, gp in list(zip(self.outputs, gphs)) + list(zip(saved, sphs)):
                    m = mapping.get(o._id) if isinstance(o, SymbolicTensor) else None
                    if m is not None and isinstance(m, SymbolicTensor) and m._value.dtype.kind in "fc":
                        initial.setdefault(m._id, []).append(gp)
                grads = self._source_grads(g, phs, initial)
            full = GraphFunction(g, phs + gphs + sphs, [x for x in grads if x is not None],
                                 self.name + "_full_backward")
            full.grad_mask = [x is not None for x in grads]
            self._full[with_saved] = full
        return self._full[with_saved]

    def forward_replayable(self, seen: set | None = None) -> bool:
        """Whether replaying the graph recomputes exactly what a call did:
        pure ops only (calls of such functions included)."""
        seen = set() if seen is None else seen
        if id(self) in seen:
            return True
        seen.add(id(self))
        g = self.graph
        if self.read_vars or g.captures or g.custom_gradients:
            return False
        for op in g.operations:
            if op.type == "Placeholder":
                continue
            if op.type == "StatefulPartitionedCall":
                if not op.attrs["f"].forward_replayable(seen):
                    return False
            elif op.opdef is None or op.stateful:
                return False
        return True

    def jvp_function(self, mask: tuple, saved: bool) -> GraphFunction | None:
        """The forward-mode function: (inputs, tangents of the inputs where
        ``mask`` is set) -> tangents of the call's outputs (and of the saved
        intermediates with ``saved``), traced once by running an accumulator
        over the graph; its ``grad_mask`` says which outputs get a tangent.
        None when the graph cannot be replayed exactly (see forward_replayable)."""
        key = (mask, saved)
        if key not in self._jvps:
            jf = None
            if self.forward_replayable():
                from tapeflow.eager.forwardprop import ForwardAccumulator

                g = FuncGraph(self.name + "_jvp")
                with graph_scope(g):
                    phs = [g.add_placeholder(*_spec_of(t)) for t in self.inputs]
                    tphs = [g.add_placeholder(*_spec_of(t)) for t, m in zip(self.inputs, mask) if m]
                    with ForwardAccumulator([p for p, m in zip(phs, mask) if m], tphs) as acc:
                        mapping = replay(self.graph, {t._id: p for t, p in zip(self.inputs, phs)}, side_effects=False)
                    wanted = self.outputs + (self.saved_tensors() if saved else [])
                    tans = [acc.jvp(mapping.get(o._id, o)) if isinstance(o, SymbolicTensor) else None for o in wanted]
                jf = GraphFunction(g, phs + tphs, [t for t in tans if t is not None], self.name + "_jvp")
                jf.grad_mask = [t is not None for t in tans]
            self._jvps[key] = jf
        return self._jvps[key]

    def as_text(self) -> str:
        from tapeflow.graph.printing import format_graph

        return format_graph(self.graph, self.inputs, self.outputs, self.name)


def replay(graph: FuncGraph, mapping: dict, side_effects: bool = True, variables: dict | None = None) -> dict:
    """Re-executes ``graph``'s ops in the current context with its
    placeholders replaced per ``mapping`` (id -> tensor); returns the
    extended mapping. Used to inline a function and to recompute a forward."""
    from tapeflow.framework.execute import execute

    m = dict(mapping)
    for outer, ph in graph.captures:
        m.setdefault(ph._id, outer)
    # @tf.custom_gradient calls of the graph are recorded again in the
    # current graph, their grad_fn seeing the replayed tensors (aliases).
    target = state.graph if isinstance(state.graph, FuncGraph) else None
    pending = list(graph.custom_gradients) if target is not None else []

    def mapped(x):
        if isinstance(x, SymbolicTensor) and x._graph is not graph:  # an outer tensor: via its capture
            ph = graph._capture_ids.get(x._id)
            if ph is not None:
                return m.get(ph._id, x)
        return m.get(x._id, x)

    def record(c):
        pos, cname, ins_, outs_, fn = c
        target.record_custom_gradient(cname, tuple(mapped(x) for x in ins_), tuple(mapped(o) for o in outs_), fn)

    for idx, op in enumerate(graph.operations):
        while pending and pending[0][0] <= idx:
            record(pending.pop(0))
        if op.type == "Placeholder":
            continue
        ins = tuple(m.get(x._id, x) if isinstance(x, SymbolicTensor) else x for x in op.inputs)
        if op.opdef is not None:
            outs = execute(op.opdef, ins, op.attrs)
            outs = outs if isinstance(outs, list) else [outs]
        elif op.type == "ReadVariableOp":
            var = op.attrs["variable"]
            outs = [(variables.get(id(var), var) if variables else var).value()]
        elif op.type in ("AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"):
            if side_effects:
                var = op.attrs["variable"]
                var = variables.get(id(var), var) if variables else var
                getattr(var, {"AssignVariableOp": "assign", "AssignAddVariableOp": "assign_add",
                              "AssignSubVariableOp": "assign_sub"}[op.type])(ins[0], read_value=False)
            outs = []
        elif op.type == "PrintV2":
            if side_effects and state.graph is None:
                op.attrs["print_fn"](*[np.asarray(x._value) for x in ins])
            elif side_effects:
                g = state.graph
                g._new_op(None, "PrintV2", tuple(g._own(x) for x in ins), op.attrs, [])
            outs = []
        else:
            raise NotImplementedError(f"Cannot replay graph node type {op.type!r}.")
        for o, n in zip(op.outputs, outs):
            m[o._id] = n
    for c in pending:
        record(c)
    if target is not None and graph.custom_gradients:
        target.aliases.update((k, v) for k, v in m.items() if isinstance(v, SymbolicTensor) and v._graph is target)
    return m


# -----------------------------------------------------------------------------
# ConcreteFunction
# -----------------------------------------------------------------------------


def _type_str(v: Any, unnamed: bool = False) -> str:
    """TF's type text of a signature part: TensorSpecs, ``Literal[...]`` Python values, containers."""
    if isinstance(v, TensorSpec):
        return repr(TensorSpec(v.shape, v.dtype)) if unnamed else repr(v)
    if isinstance(v, Tensor):
        return repr(TensorSpec(v.shape, v.dtype))
    if isinstance(v, tuple) and not hasattr(v, "_fields"):
        return "Tuple[" + ", ".join(_type_str(x, unnamed) for x in v) + "]"
    if isinstance(v, list):
        return "List[" + ", ".join(_type_str(x, unnamed) for x in v) + "]"
    if isinstance(v, dict):
        return "Dict[" + ", ".join(f"[{k!r}, {_type_str(x, unnamed)}]" for k, x in v.items()) + "]"
    return f"Literal[{v!r}]"


class FunctionType:
    """A concrete function's signature as TF prints it (``cf.function_type``)."""

    def __init__(self, parameters: list, output: str, captures: list) -> None:
        self.parameters = parameters  # (name, kind, type text)
        self.output = output
        self.captures = captures  # (id, type text)

    def block(self) -> str:
        lines = ["Input Parameters:"]
        lines += [f"  {n} ({k}): {t}" for n, k, t in self.parameters]
        lines += ["Output Type:", f"  {self.output}", "Captures:"]
        lines += [f"  {i}: {t}" for i, t in self.captures] or ["  None"]
        return "\n".join(lines)

    def __str__(self) -> str:
        return "(" + ", ".join(f"{n}: {t}" for n, _, t in self.parameters) + f") -> {self.output}"

    __repr__ = __str__


class AtomicFunction:
    """A concrete function's graph called with its flat tensor inputs, as TF's ``inference_fn``."""

    def __init__(self, cf: ConcreteFunction) -> None:
        self._cf = cf

    @property
    def name(self) -> str:
        return self._cf.name

    def __call__(self, *args: Any) -> Any:
        flat = [a if isinstance(a, Tensor) else convert_to_tensor(a) for a in args]
        if len(flat) != len(self._cf._input_specs):
            raise TypeError(f"{self.name} expects {len(self._cf._input_specs)} tensors, got {len(flat)}.")
        return self._cf._call_flat(flat)


class ConcreteFunction:
    """One trace of a ``tf.function``: callable with tensors of its signature.

    ``graph`` is the traced ``FuncGraph``; ``structured_outputs`` the Python
    structure returned while tracing; ``as_text()`` prints the graph, one
    equation per line; ``backward_function()`` is its gradient function.
    """

    def __init__(self, gf: GraphFunction, arg_template: Any, out_template: Any, out_slots: list,
                 input_specs: list) -> None:
        self._gf = gf
        self._arg_template = arg_template
        self._out_template = out_template
        self._out_slots = out_slots  # per flat output leaf: index into gf outputs, or -1 (Python value)
        self._input_specs = input_specs
        self._captured = [outer for outer, _ in gf.graph.captures]
        self._var_args: list = []  # the tf.Variable arguments traced with (see _for_variables)
        self._rebound: dict = {}

    @property
    def graph(self) -> FuncGraph:
        return self._gf.graph

    @property
    def inputs(self) -> list:
        return list(self._gf.inputs)

    @property
    def outputs(self) -> list:
        """The flat outputs as TF shows them: each the output of its ``Identity`` node (``Identity:0``)."""
        return list(self._output_views())

    @property
    def structured_outputs(self) -> Any:
        """What the function returned while tracing, its tensors as the graph's ``Identity`` outputs (TF's)."""
        views = self._output_views()
        if views is self._gf.outputs:
            return self._out_template
        leaves = nest.flatten(self._out_template, expand_composites=True)
        if len(leaves) != len(self._out_slots) or any(isinstance(x, CompositeTensor) for x in nest.flatten(
                self._out_template)):
            return self._out_template
        return nest.pack_sequence_as(self._out_template, [
            views[s] if s >= 0 else leaf for s, leaf in zip(self._out_slots, leaves)], expand_composites=True)

    def _output_views(self) -> list:
        # TF copies each output through an Identity node; tapeflow's graph returns the tensors themselves and
        # shows the Identity nodes as views (FuncGraph.get_operations), so these are views too.
        views = self.__dict__.get("_views")
        if views is None:
            g, outs = self._gf.graph, self._gf.outputs
            views = outs
            if outs and len(g.output_names) == len(outs) == len(g.outputs) and all(
                    a is b for a, b in zip(outs, g.outputs)):
                views = [g._view_op("Identity", n, (t,), None).outputs[0] if isinstance(t, Tensor) else t
                         for n, t in zip(g.output_names, outs)]
            self.__dict__["_views"] = views
        return views

    @property
    def structured_input_signature(self) -> Any:
        """``(args, kwargs)`` with each tensor argument as a named TensorSpec, as TF."""
        if self._arg_template is None:
            return self._input_specs
        specs = iter(TensorSpec(s, dtypes.from_numpy(np.dtype(d)), ph.name.rsplit(":", 1)[0])
                     for (s, d), ph in zip(self._input_specs, self._gf.inputs))
        args, kwargs = _rebuild(self._arg_template, specs)
        return tuple(args), kwargs

    @property
    def output_dtypes(self) -> Any:
        return nest.map_structure(lambda t: t.dtype if isinstance(t, Tensor) else None, self._out_template)

    @property
    def output_shapes(self) -> Any:
        return nest.map_structure(lambda t: t.shape if isinstance(t, Tensor) else None, self._out_template)

    @property
    def variables(self) -> tuple:
        return tuple(self._gf.read_vars)

    @property
    def trainable_variables(self) -> tuple:
        return tuple(v for v in self._gf.read_vars if v.trainable)

    @property
    def name(self) -> str:
        return self._gf.name

    def as_text(self) -> str:
        """The graph, one equation per line (shapes, dtypes, sorted attrs)."""
        return self._gf.as_text()

    @property
    def inference_fn(self) -> AtomicFunction:
        """The traced graph as a function of its flat tensor inputs (TF's ``AtomicFunction``)."""
        return AtomicFunction(self)

    def backward_function(self) -> ConcreteFunction:
        """The gradient function: (output grads..., saved intermediates...)."""
        bwd = self._gf.backward()
        return ConcreteFunction(bwd, None, list(bwd.outputs), list(range(len(bwd.outputs))),
                                [_spec_of(t) for t in bwd.inputs])

    def __getstate__(self) -> dict:
        # the Python function (for parameter names) is not part of a saved function
        state_ = dict(self.__dict__)
        state_.pop("_python_function", None)
        state_.pop("_views", None)
        return state_

    @property
    def function_type(self) -> FunctionType:
        """The traced signature: parameters (TensorSpecs or ``Literal`` Python values) and output type."""
        params = []
        fn = getattr(self, "_python_function", None)
        if fn is not None and self._arg_template is not None:
            args, kwargs = self.structured_input_signature
            try:
                sig = inspect.signature(fn)
                bound = sig.bind(*args, **kwargs)
                bound.apply_defaults()
                for name, value in bound.arguments.items():
                    kind = sig.parameters[name].kind
                    if kind is inspect.Parameter.VAR_POSITIONAL:
                        params += [(f"{name}_{i}", "POSITIONAL_ONLY", _type_str(v, unnamed=True))
                                   for i, v in enumerate(value)]
                    elif kind is inspect.Parameter.VAR_KEYWORD:
                        params += [(k, "KEYWORD_ONLY", _type_str(v, unnamed=True)) for k, v in value.items()]
                    else:
                        params.append((name, kind.name, _type_str(value, unnamed=True)))
            except (TypeError, ValueError):
                params = []
        if not params:
            params = [(f"arg_{i}", "POSITIONAL_ONLY", _type_str(TensorSpec(sh, dtypes.from_numpy(np.dtype(d)))))
                      for i, (sh, d) in enumerate(self._input_specs)]
        output = _type_str(nest.map_structure(
            lambda t: TensorSpec(t.shape, t.dtype) if isinstance(t, Tensor) else t, self._out_template))
        captures = [(id(v), "TensorSpec(shape=(), dtype=tf.resource, name=None)") for v in self._gf.read_vars]
        captures += [(id(t), _type_str(TensorSpec(t.shape, t.dtype))) for t in self._captured]
        return FunctionType(params, output, captures)

    def pretty_printed_signature(self, verbose: bool = True) -> str:
        """TF's "Input Parameters / Output Type / Captures" block (``verbose=False``: one line)."""
        ft = self.function_type
        return ft.block() if verbose else str(ft)

    def pretty_printed_concrete_signature(self) -> str:
        return self.pretty_printed_signature()

    def __str__(self) -> str:
        return f"ConcreteFunction {self.pretty_printed_signature()}"

    def __repr__(self) -> str:
        return f"<ConcreteFunction {self.function_type} at 0x{id(self):X}>"

    def _check_literals(self, args: tuple, kwargs: dict) -> None:
        """As TF: a Python value given for a parameter traced with another Python value is a TypeError."""
        fn = self.__dict__.get("_python_function")
        if fn is None or self._arg_template is None:
            return
        try:
            sig = inspect.signature(fn)
            call = sig.bind_partial(*args, **kwargs).arguments
            traced = sig.bind(*self._arg_template[0], **self._arg_template[1]).arguments
        except TypeError as e:
            raise TypeError(f"Binding inputs to tf.function failed due to `{e}`. Received args: {args} and kwargs: "
                            f"{kwargs} for signature: {self.function_type}.") from None
        except ValueError:
            return
        for name, value in call.items():
            if name not in traced:
                continue
            inner: list = []
            want = _key(traced[name], inner)
            if inner:  # a tensor (or a structure holding tensors): checked against its spec below
                continue
            if _key(value, []) != want:
                raise TypeError(f"Binding inputs to tf.function `{self.name}` failed due to `Can not cast {value!r} "
                                f"to {_type_str(traced[name])}`. Received args: {args} and kwargs: {kwargs}.")

    def _bind_error(self, args: tuple, kwargs: dict) -> None:
        """TF's TypeError for arguments that do not bind to the traced parameters (too many, missing, unknown)."""
        fn = self.__dict__.get("_python_function")
        if fn is None or self._arg_template is None:
            return
        try:
            inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"Binding inputs to tf.function failed due to `{e}`. Received args: {args} and kwargs: "
                            f"{kwargs} for signature: {self.function_type}.") from None
        except ValueError:
            return

    def __call__(self, *args, **kwargs):
        if kwargs:
            self._check_literals(args, kwargs)
        tensors: list = []
        _key((args, kwargs), tensors, self.__dict__.get("_from_specs", False))
        if len(tensors) != len(self._input_specs):
            self._bind_error(args, kwargs)
        if len(tensors) != len(self._input_specs):
            # As TF: Python numbers in tensor positions are converted to the traced dtype.
            flat_args = nest.flatten((args, kwargs))
            if len(flat_args) == len(self._input_specs):
                tensors = flat_args
        if len(tensors) != len(self._input_specs):
            raise TypeError(
                f"ConcreteFunction {self.name} expects {len(self._input_specs)} tensor arguments, got "
                f"{len(tensors)}."
            )
        flat = []
        for t, (shape, dtype) in zip(tensors, self._input_specs):
            t = convert_to_tensor(t, dtype=dtypes.from_numpy(np.dtype(dtype))) if not isinstance(t, Tensor) else t
            if t._value.dtype != np.dtype(dtype):
                raise InvalidArgumentError(
                    None, None,
                    f"cannot compute {self.name} as input #{len(flat)}(zero-based) was expected to be a "
                    f"{dtypes.type_string(dtypes.from_numpy(np.dtype(dtype)))} tensor but is a "
                    f"{dtypes.type_string(t.dtype)} tensor [Op:{self.name}]")
            if not TensorShape(shape).is_compatible_with(
                    TensorShape(t._shape_tuple())):
                raise TypeError(
                    f"ConcreteFunction {self.name}: argument {t!r} does not match its traced spec "
                    f"{TensorShape(shape)} {np.dtype(dtype).name}."
                )
            flat.append(t)
        return self._call_flat(flat)

    def _for_variables(self, now: list) -> ConcreteFunction:
        """This trace for other ``tf.Variable`` arguments of the same specs (TF's VariableSpec): the graph
        replayed with the variables substituted, once per set of variables; the Python function is not traced
        again. A graph whose nested functions (loop bodies, branches) use the variables is traced instead."""
        traced = self._var_args
        if all(a is b for a, b in zip(traced, now)):
            return self
        key = tuple(id(v) for v in now)
        hit = self._rebound.get(key)
        if hit is not None and all(r() is v for r, v in zip(hit[0], now)):
            return hit[1]
        cf = self._rebind(dict(zip((id(v) for v in traced), now)))
        if cf is not None:
            self._rebound[key] = ([weakref.ref(v) for v in now], cf)
        return cf

    def _rebind(self, var_map: dict) -> ConcreteFunction | None:
        graph = self._gf.graph
        for op in graph.operations:  # variables used inside nested graphs: not substituted by a replay
            for a in op.attrs.values():
                for f in a if isinstance(a, (list, tuple)) else [a]:
                    if isinstance(f, GraphFunction) and any(id(v) in var_map for v in f.read_vars) or (
                            isinstance(f, GraphFunction) and any(
                            id(o.attrs.get("variable")) in var_map for o in f.graph.operations)):
                        return None
        n_args = len(self._input_specs)
        g = FuncGraph(graph.name, outer=state.graph)
        with graph_scope(g):
            phs = [g.add_placeholder(*_spec_of(t), t.name.rsplit(":", 1)[0]) for t in self._gf.inputs[:n_args]]
            m = replay(graph, {t._id: p for t, p in zip(self._gf.inputs, phs)}, variables=var_map)
            outs = []
            for o in self._gf.outputs:
                r = m.get(o._id, o) if isinstance(o, SymbolicTensor) else o
                outs.append(g.capture(r) if isinstance(r, SymbolicTensor) and r._graph is not g else r)
        g.outputs = outs
        gf = GraphFunction(g, phs + [ph for _, ph in g.captures], outs, self._gf.name)
        cf = ConcreteFunction(gf, self._arg_template, self._out_template, self._out_slots, self._input_specs)
        cf.__dict__["_python_function"] = self.__dict__.get("_python_function")
        return cf

    def _call_flat(self, flat: list):
        gf = self._gf
        st = state
        if trace_hook is not None:
            trace_hook(gf.graph)
        if st.graph is None and not st.recording and not self._captured:
            res = gf.compiled()(*[t._value for t in flat])
            outs = [_wrap(r) for r in res]
        else:
            from tapeflow.graph.functional_ops import call_function

            outs = call_function(gf, list(flat) + self._captured)
        return self._pack(outs)

    def _pack(self, outs: list):
        composites = self.__dict__.get("_out_composites")
        if composites is None:  # (computed once: whether outputs hold ragged/sparse tensors)
            composites = self._out_composites = any(
                isinstance(x, CompositeTensor) for x in nest.flatten(self._out_template))
        leaves = nest.flatten(self._out_template, expand_composites=composites)
        if not leaves and self._out_template is None:
            return None
        vals = [outs[s] if s >= 0 else leaf for s, leaf in zip(self._out_slots, leaves)]
        return nest.pack_sequence_as(self._out_template, vals, expand_composites=composites)


# -----------------------------------------------------------------------------
# Function (tf.function)
# -----------------------------------------------------------------------------

def _key(v: Any, tensors: list, components: bool = False):
    """The cache key of one argument; appends its tensors to ``tensors``. With ``components`` (a concrete
    function traced from a RaggedTensorSpec) a ragged value gives all its component tensors."""
    if isinstance(v, Tensor):
        tensors.append(v)
        return ("T", v._shape_tuple(), v._value.dtype)
    if isinstance(v, TensorSpec):
        tensors.append(v)
        return ("T", v._dims(), np.dtype(v.dtype._np))
    if isinstance(v, (np.ndarray, np.generic)) and not isinstance(v, np.bool_):
        t = convert_to_tensor(v)
        tensors.append(t)
        return ("T", t._shape_tuple(), t._value.dtype)
    if isinstance(v, list):
        return ("L",) + tuple(_key(x, tensors, components) for x in v)
    if isinstance(v, tuple):
        return (type(v),) + tuple(_key(x, tensors, components) for x in v)
    if isinstance(v, dict):
        return ("D",) + tuple(("K", k, _key(v[k], tensors, components)) for k in sorted(v, key=repr))
    if isinstance(v, Variable):  # keyed by its spec, as TF's VariableSpec: another variable reuses the trace
        return ("V", tuple(v._value.shape), v._value.dtype.name, v.trainable)
    if isinstance(v, (SparseTensor, SparseTensorSpec)):
        # As TF: a SparseTensor argument is traced by its spec (dense shape, dtype); its indices, values and
        # dense_shape are inputs, so other entries of the same spec reuse the trace.
        spec = v if isinstance(v, TypeSpec) else v._type_spec
        comps = spec._component_specs
        tensors.extend(comps if v is spec else spec._to_components(v))
        shape = spec.shape
        return ("SP", ("P", None if shape.rank is None else tuple(shape.as_list())), ("P", spec.dtype.name)) + \
            tuple(("T", c._dims(), np.dtype(c.dtype._np)) for c in comps)
    if isinstance(v, TypeSpec) or (components and isinstance(v, CompositeTensor)):
        # A RaggedTensorSpec is traced as TF does: every component (flat values, row splits) a placeholder.
        spec = v if isinstance(v, TypeSpec) else v._type_spec
        comps = _spec_components(spec)
        tensors.extend(comps if v is spec else spec._to_components(v))
        return ("CS", type(spec).__name__) + tuple(("T", c._dims(), np.dtype(c.dtype._np)) for c in comps)
    if isinstance(v, CompositeTensor):  # ragged/sparse: static partition in the key, values as inputs
        static, dynamic = v._trace_split()
        tensors.extend(dynamic)
        return ("C", static) + tuple(("T", t._shape_tuple(), t._value.dtype) for t in dynamic)
    tracing_type = getattr(v, "__tf_tracing_type__", None)
    if tracing_type is not None:  # a custom tf.types.experimental.TraceType: equal types share a trace
        return ("TT", tracing_type(None))
    try:
        hash(v)
    except TypeError:
        return ("O", id(v))
    return ("P", v)


def _spec_components(spec: TypeSpec) -> tuple:
    comps = getattr(spec, "_component_specs", None) if hasattr(spec, "_from_components") else None
    if type(spec).__name__ != "RaggedTensorSpec" or comps is None:
        raise NotImplementedError(
            f"tf.function: tracing a {type(spec).__name__} without a value (TF traces the spec itself); call the "
            "function, or get_concrete_function, with a value instead.")
    return comps


def _traced_from_specs(v: Any) -> bool:
    """Whether an argument structure holds a TypeSpec (its concrete function takes composites' components)."""
    if isinstance(v, TypeSpec):
        return True
    if isinstance(v, (list, tuple)):
        return any(_traced_from_specs(x) for x in v)
    if isinstance(v, dict):
        return any(_traced_from_specs(x) for x in v.values())
    return False


def _variables_in(v: Any) -> list:
    """The ``tf.Variable`` leaves of a call's arguments, in ``_key`` order."""
    if isinstance(v, Variable):
        return [v]
    if isinstance(v, (list, tuple)):
        return [x for e in v for x in _variables_in(e)]
    if isinstance(v, dict):
        return [x for k in sorted(v, key=repr) for x in _variables_in(v[k])]
    return []


def _rebuild(v: Any, it) -> Any:
    """``v`` with its tensor leaves replaced by the next items of ``it``."""
    if isinstance(v, (Tensor, TensorSpec)) or (isinstance(v, (np.ndarray, np.generic)) and not isinstance(v, np.bool_)):
        return next(it)
    if isinstance(v, (SparseTensor, SparseTensorSpec)):
        comps = [next(it) for _ in range(3)]
        if any(isinstance(c, TensorSpec) for c in comps):
            return v
        sp = SparseTensor(*comps)
        sp._static_shape = v.shape
        return sp
    if isinstance(v, CompositeTensor):
        return v._trace_rebuild([next(it) for _ in v._trace_split()[1]])
    if isinstance(v, TypeSpec):
        comps = [next(it) for _ in _spec_components(v)]
        return v if any(isinstance(c, TensorSpec) for c in comps) else v._from_components(comps)
    if isinstance(v, list):
        return [_rebuild(x, it) for x in v]
    if isinstance(v, tuple):
        items = [_rebuild(x, it) for x in v]
        return type(v)(*items) if hasattr(v, "_fields") else tuple(items)
    if isinstance(v, dict):
        keys = sorted(v, key=repr)
        new = {k: _rebuild(v[k], it) for k in keys}
        return type(v)((k, new[k]) for k in v) if type(v) is not dict else {k: new[k] for k in v}
    tracing_type = getattr(v, "__tf_tracing_type__", None)
    if tracing_type is not None:
        return tracing_type(None).placeholder_value(None)
    return v


def _leaf_names(fn: Any, args: tuple, kwargs: dict) -> list:
    """TF's names for the input placeholders, one per tensor leaf in ``_rebuild``
    order: the parameter's name (``x:0``; ``args_2:0`` for the third ``*args``
    item; ``d_1:0`` for a second leaf inside ``d``), or a TensorSpec's own name."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names: list = []

    def walk(v: Any, base: str) -> None:
        if isinstance(v, TensorSpec) and v.name:
            names.append(v.name)
        elif isinstance(v, (Tensor, TensorSpec)) or (
                isinstance(v, (np.ndarray, np.generic)) and not isinstance(v, np.bool_)):
            names.append(base)
        elif isinstance(v, (SparseTensor, SparseTensorSpec)):
            names.extend([base] * 3)
        elif isinstance(v, CompositeTensor):
            names.extend([base] * len(v._trace_split()[1]))
        elif isinstance(v, TypeSpec):
            names.extend([base] * len(_spec_components(v)))
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x, base)
        elif isinstance(v, dict):
            for k in sorted(v, key=repr):
                walk(v[k], base)

    for i, a in enumerate(args):
        walk(a, positional[i] if i < len(positional) else f"args_{i - len(positional)}")
    for k in sorted(kwargs, key=repr):
        walk(kwargs[k], k)
    return names


def _shapes_of(key) -> list:
    """The ("T", shape, dtype) entries of a key, in order."""
    out = []

    def walk(k):
        if isinstance(k, tuple) and k:
            if k[0] == "T":
                out.append(k)
            elif k[0] not in ("P", "O", "V", "TT"):
                for x in k[1:]:
                    walk(x)

    walk(key)
    return out


def _replace_shapes(key, shapes: list):
    it = iter(shapes)

    def walk(k):
        if isinstance(k, tuple) and k:
            if k[0] == "T":
                return ("T", next(it), k[2])
            if k[0] not in ("P", "O", "V", "TT"):
                return (k[0],) + tuple(walk(x) for x in k[1:])
        return k

    return walk(key)


def _flatten_up_to(structure: Any, value: Any, name: str) -> list:
    """``value``'s leaves at the positions of the TensorSpecs in ``structure``."""
    if isinstance(structure, TensorSpec):
        return [value]
    if isinstance(structure, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(structure):
            raise TypeError(
                f"Binding inputs to tf.function `{name}` failed: the inputs do not match the structure of the "
                f"input_signature {structure}; got {value!r}."
            )
        return [x for s, v in zip(structure, value) for x in _flatten_up_to(s, v, name)]
    if isinstance(structure, dict):
        if not isinstance(value, dict) or set(value) != set(structure):
            raise TypeError(f"Binding inputs to tf.function `{name}` failed: expected a dict with keys "
                            f"{sorted(structure)}, got {value!r}.")
        return [x for k in sorted(structure) for x in _flatten_up_to(structure[k], value[k], name)]
    raise TypeError(f"input_signature must contain TensorSpecs, got {structure!r}")


def _where(fn: Any) -> str:
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    return f'"{code.co_filename}", line {code.co_firstlineno}' if code is not None else '"<unknown>"'


def _compatible(exact: tuple | None, general: tuple | None) -> bool:
    if general is None:
        return True
    if exact is None or len(exact) != len(general):
        return False
    return all(g is None or g == e for e, g in zip(exact, general))


def _generalize(a: tuple | None, b: tuple | None) -> tuple | None:
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


# Errors a trace with unknown dimensions may hit in shape-static gradient rules.
_SHAPE_ERRORS = (TypeError, ValueError, NotImplementedError, InvalidArgumentError)

# When a trace with unknown (None) dims fails (some rule needs static shapes),
# tf.function traces once per concrete input shape instead: correct results,
# but a retrace for every new shape. It logs a warning, once per function,
# naming the failing op; set this to False to get the error raised instead.
per_shape_fallback = True

_log = logging.getLogger("tapeflow")


def _where_failed(e: BaseException) -> str | None:
    """Where a failed trace stopped: the innermost traceback frame with an
    ``op`` local (a gradient rule's record, or the op being executed), else
    the op named in the message, else the first tapeflow function the
    traced code called."""
    found, first, tb = None, None, e.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        op = frame.f_locals.get("op")
        name = getattr(op, "type", None) or getattr(op, "name", None)
        if isinstance(name, str):
            found = f"in the gradient of op {name}" if hasattr(op, "grad_fn") else f"in op {name}"
        module = frame.f_globals.get("__name__", "")
        if first is None and module.startswith("tapeflow.") and not module.startswith("tapeflow.graph."):
            first = f"in {module}.{frame.f_code.co_name}"
        tb = tb.tb_next
    if found is None:
        m = re.search(r"\[Op:(\w+)\]", str(e))
        found = f"in op {m.group(1)}" if m else first
    return found


class InaccessibleTensorError(ValueError):
    """A tensor of a finished inner graph (a loop body, a branch) used outside it, as TF's."""


def _check_accessible(t: SymbolicTensor, graph: FuncGraph) -> None:
    g = graph.outer
    while isinstance(g, FuncGraph):
        if g is t._graph:
            return
        g = g.outer
    raise InaccessibleTensorError(
        f"The tensor {t.name} cannot be accessed from tf.function `{graph.name}`, because it was defined in "
        f"another function or code block ({t._graph.name}), e.g. appended to a Python list inside a tf.range "
        "loop or a tensor `if`. Return it from that block instead (use tf.TensorArray to collect loop values).")


class Function:
    """What ``tf.function`` returns: a polymorphic, traced-and-cached callable."""

    def __init__(self, python_function: Callable, name: str | None = None, input_signature: Any = None,
                 autograph: bool = True, jit_compile: Any = None, reduce_retracing: bool = False,
                 experimental_autograph_options: Any = None, experimental_implements: Any = None,
                 experimental_attributes: Any = None, experimental_relax_shapes: Any = None) -> None:
        if not callable(python_function):
            raise TypeError(f"tf.function expects a callable, got {python_function!r}")
        self._python_function = python_function
        self._name = name or getattr(python_function, "__name__", "function")
        self._autograph = autograph
        self._reduce_retracing = bool(reduce_retracing or experimental_relax_shapes)
        self._jit_compile = jit_compile
        self._input_signature = None if input_signature is None else list(nest.flatten(input_signature))
        self._input_signature_struct = input_signature
        self._composite_signature = None
        if self._input_signature is not None and any(isinstance(s, TypeSpec) for s in self._input_signature):
            # A RaggedTensorSpec/SparseTensorSpec: arguments are checked against
            # the signature, then traced as without one (per row partition).
            self._composite_signature = self._input_signature
            self._input_signature = None
        if self._input_signature is not None:
            for s in self._input_signature:
                if not isinstance(s, TensorSpec):
                    raise TypeError(f"input_signature must be a possibly nested sequence of TensorSpec objects, "
                                    f"got {s!r}")
        self._cache: dict = {}
        self._specialize = False  # input_signature traced per concrete shape (see _lookup_signature)
        self._warned_fallback = False
        self._tracing_count = 0
        self._instances: weakref.WeakKeyDictionary | dict = weakref.WeakKeyDictionary()
        try:
            self._signature = inspect.signature(python_function)
        except (TypeError, ValueError):
            self._signature = None
        params = list(self._signature.parameters.values()) if self._signature else []
        self._n_simple = len(params) if params and all(
            p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty for p in params) else (
            0 if self._signature is not None and not params else -1)
        functools.update_wrapper(self, python_function)

    @property
    def python_function(self) -> Callable:
        return self._python_function

    @property
    def input_signature(self):
        return self._input_signature_struct

    def experimental_get_tracing_count(self) -> int:
        """How many times the Python function was traced."""
        return self._tracing_count

    def _concrete_functions(self) -> list:
        seen: dict = {}
        for cf in self._cache.values():
            if isinstance(cf, ConcreteFunction):
                seen.setdefault(id(cf), cf)
        return list(seen.values())

    def pretty_printed_concrete_signatures(self, verbose: bool = True) -> str:
        """Every traced signature, in trace order, as TF prints them."""
        return "\n\n".join(cf.pretty_printed_signature(verbose) for cf in self._concrete_functions())

    # -- methods ---------------------------------------------------------------
    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        try:
            bound = self._instances.get(instance)
        except TypeError:
            self._instances = dict(self._instances) if not isinstance(self._instances, dict) else self._instances
            bound = self._instances.get(id(instance))
        if bound is None:
            bound = Function(types.MethodType(self._python_function, instance), self._name,
                             self._input_signature_struct, self._autograph, self._jit_compile,
                             self._reduce_retracing)
            try:
                self._instances[instance] = bound
            except TypeError:
                if isinstance(self._instances, weakref.WeakKeyDictionary):
                    self._instances = {}
                self._instances[id(instance)] = bound
        return bound

    # -- calling ---------------------------------------------------------------
    def _canonical(self, args: tuple, kwargs: dict) -> tuple:
        if not kwargs and len(args) == self._n_simple:
            return args, {}
        if self._signature is None:
            return args, kwargs
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"Binding inputs to tf.function failed due to `{e}`. Received args: {args} and kwargs: "
                            f"{kwargs} for signature: {self._signature}.") from None
        bound.apply_defaults()
        return bound.args, bound.kwargs

    def __call__(self, *args, **kwargs):
        if _context.run_functions_eagerly:
            return self._python_function(*args, **kwargs)  # tf.config.run_functions_eagerly(True)
        cf, tensors = self._lookup(args, kwargs)
        return cf._call_flat(tensors)

    def get_concrete_function(self, *args, **kwargs) -> ConcreteFunction:
        """The concrete function for these arguments (tensors or TensorSpecs), tracing if needed."""
        if self._input_signature is not None and not args and not kwargs:
            args = tuple(nest.pack_sequence_as(self._input_signature_struct, self._input_signature))
        if self._composite_signature is not None and not args and not kwargs:
            args = tuple(nest.pack_sequence_as(self._input_signature_struct, self._composite_signature))
        return self._lookup(args, kwargs, specs_ok=True)[0]

    def _lookup(self, args: tuple, kwargs: dict, specs_ok: bool = False):
        if self._input_signature is not None:
            return self._lookup_signature(args, kwargs)
        args, kwargs = self._canonical(args, kwargs)
        if self._composite_signature is not None:
            args = self._check_composite_signature(args, kwargs)
            kwargs = {}
        tensors: list = []
        key = _key((args, kwargs), tensors)
        cf = self._cache.get(key)
        if cf is None:
            cf = self._find_compatible(key)
            if cf is None:
                trace_key = key
                if self._reduce_retracing:
                    trace_key = self._relaxed(key)
                try:
                    cf = self._trace_checked(args, kwargs, trace_key, tensors)
                except _SHAPE_ERRORS as e:
                    if trace_key == key or not per_shape_fallback or getattr(e, "_no_shape_fallback", False):
                        raise
                    self._warn_fallback(e)
                    # Some gradient rules need static shapes: trace this call's exact shapes instead.
                    trace_key = key
                    cf = self._trace_checked(args, kwargs, trace_key, tensors)
                self._cache[trace_key] = cf
            self._cache[key] = cf
        if cf._var_args:
            now = _variables_in((args, kwargs))
            bound = cf._for_variables(now)
            if bound is None:  # cannot substitute them: a trace of its own (counted), keyed by identity
                ikey = (key, tuple(id(v) for v in now))
                bound = self._cache.get(ikey)
                if bound is None or not all(a is b for a, b in zip(bound._var_args, now)):
                    bound = self._cache[ikey] = self._trace_checked(args, kwargs, key, tensors)
            cf = bound
        if any(isinstance(t, TensorSpec) for t in tensors):
            if not specs_ok:
                raise TypeError("TensorSpec arguments are only valid in get_concrete_function.")
            return cf, []
        return cf, [t if isinstance(t, Tensor) else convert_to_tensor(t) for t in tensors]

    def _check_composite_signature(self, args: tuple, kwargs: dict) -> tuple:
        args = tuple(args) + tuple(kwargs.values())
        specs = self._composite_signature
        flat = nest.flatten(list(args))
        if len(flat) != len(specs):
            raise TypeError(f"Binding inputs to tf.function `{self._name}` failed: the input_signature has "
                            f"{len(specs)} specs but {len(flat)} inputs were given.")
        out = []
        for a, spec in zip(flat, specs):
            if isinstance(spec, TypeSpec):
                if isinstance(a, TypeSpec) and spec.is_compatible_with(a):
                    out.append(spec)  # get_concrete_function(): traced from the spec itself, as TF
                    continue
                if isinstance(a, TypeSpec) or not isinstance(a, CompositeTensor):
                    raise NotImplementedError(
                        f"tf.function `{self._name}`: tracing a {type(spec).__name__} without a value (TF traces "
                        "the spec itself); call the function, or get_concrete_function, with a value instead.")
                if not spec.is_compatible_with(a):
                    raise TypeError(f"Binding inputs to tf.function `{self._name}` failed: {a._type_spec} is not "
                                    f"compatible with the input_signature {spec}.")
                out.append(a)
            else:
                t = a if isinstance(a, Tensor) else convert_to_tensor(a, dtype=spec.dtype)
                if not spec.is_compatible_with(t):
                    raise TypeError(f"Binding inputs to tf.function `{self._name}` failed: {t.shape} {t.dtype.name} "
                                    f"is not compatible with the input_signature {spec}.")
                out.append(t)
        return tuple(nest.pack_sequence_as(list(args), out))

    def _find_compatible(self, key):
        shapes = _shapes_of(key)
        for k, cf in self._cache.items():
            gshapes = _shapes_of(k)
            if len(gshapes) != len(shapes):
                continue
            if _replace_shapes(k, [None] * len(gshapes)) != _replace_shapes(key, [None] * len(shapes)):
                continue
            if all(_compatible(s[1], g[1]) for s, g in zip(shapes, gshapes)):
                return cf
        return None

    def _relaxed(self, key):
        shapes = _shapes_of(key)
        skeleton = _replace_shapes(key, [None] * len(shapes))
        for k in list(self._cache):
            gshapes = _shapes_of(k)
            if len(gshapes) == len(shapes) and _replace_shapes(k, [None] * len(gshapes)) == skeleton:
                return _replace_shapes(key, [_generalize(s[1], g[1]) for s, g in zip(shapes, gshapes)])
        return key

    def _signature_text(self) -> str:
        """TF's text of an input_signature: ``(x: TensorSpec(...), y: TensorSpec(...))`` with the parameters'
        names (the bare specs when the signature is nested or the names are unknown)."""
        import inspect

        struct = tuple(self._input_signature_struct)
        try:
            params = [p.name for p in inspect.signature(self._python_function).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            params = []
        if len(params) < len(struct) or not all(isinstance(x, TensorSpec) for x in struct):
            return str(struct)
        return "(" + ", ".join(f"{n}: {x}" for n, x in zip(params, struct)) + ")"

    def _lookup_signature(self, args: tuple, kwargs: dict):
        args, kwargs = self._canonical(args, kwargs)
        if kwargs:
            args = tuple(args) + tuple(kwargs.values())
        specs = self._input_signature
        flat_args = _flatten_up_to(list(self._input_signature_struct), list(args), self._name)
        if len(flat_args) != len(specs):
            raise TypeError(
                f"Binding inputs to tf.function `{self._name}` failed: the input_signature has {len(specs)} "
                f"TensorSpecs but {len(flat_args)} inputs were given."
            )
        tensors = []
        for a, spec in zip(flat_args, specs):
            if isinstance(a, TensorSpec):
                if not spec.is_compatible_with(a):
                    raise TypeError(f"Binding inputs to tf.function `{self._name}` failed: {a} is not "
                                    f"compatible with the input_signature {spec}.")
                tensors.append(a)
                continue
            try:
                t = a if isinstance(a, Tensor) else convert_to_tensor(a, dtype=spec.dtype)
            except (TypeError, ValueError) as e:
                raise TypeError(f"Binding inputs to tf.function `{self._name}` failed: could not convert "
                                f"{a!r} to {spec}: {e}") from None
            if t.dtype is not spec.dtype or not spec.shape.is_compatible_with(TensorShape(t._shape_tuple())):
                raise TypeError(
                    f"Binding inputs to tf.function failed due to `Can not cast "
                    f"{TensorSpec(t.shape, t.dtype)} to {spec}`. Received args: {args} and kwargs: {kwargs} "
                    f"for signature: {self._signature_text()}."
                )
            tensors.append(t)
        cf = self._cache.get("signature")
        if cf is None and not self._specialize:
            try:
                cf = self._trace_specs(specs, tensors)
            except _SHAPE_ERRORS as e:
                if (all(s._dims() is not None and None not in s._dims() for s in specs) or not per_shape_fallback
                        or getattr(e, "_no_shape_fallback", False)):
                    raise
                self._warn_fallback(e)
                # Unknown dims some gradient rule cannot handle: one trace per
                # concrete shape of the signature (checked above) instead.
                self._specialize = True
            else:
                self._cache["signature"] = cf
        if self._specialize:
            if any(isinstance(t, TensorSpec) for t in tensors):
                raise NotImplementedError(
                    f"tf.function `{self._name}`: its input_signature has unknown dimensions that a gradient rule "
                    "cannot trace yet; call it with tensors (one trace per concrete shape) instead of asking for "
                    "the signature's concrete function."
                )
            exact = [TensorSpec(t.shape, spec.dtype) for t, spec in zip(tensors, specs)]
            key = ("signature",) + tuple((s._dims(), s.dtype.name) for s in exact)
            cf = self._cache.get(key)
            if cf is None:
                cf = self._trace_specs(exact, tensors)
                self._cache[key] = cf
        if any(isinstance(t, TensorSpec) for t in tensors):
            return cf, []
        return cf, tensors

    def _warn_fallback(self, e: BaseException) -> None:
        if self._warned_fallback:
            return
        self._warned_fallback = True
        op = _where_failed(e)
        _log.warning(
            "tf.function `%s`: tracing with unknown (None) dimensions failed%s: %s: %s. Falling back to one trace "
            "per concrete input shape (correct, but it retraces for every new shape). Set "
            "tapeflow.graph.function.per_shape_fallback = False to raise this error instead.",
            self._name, f" {op}" if op else "", type(e).__name__, e)

    def _trace_specs(self, specs: list, values: list) -> ConcreteFunction:
        sig_args = tuple(nest.pack_sequence_as(self._input_signature_struct, specs))
        if not isinstance(self._input_signature_struct, (list, tuple)):
            sig_args = (sig_args,)
        vals = [v for v in values if isinstance(v, Tensor)] or None
        return self._trace_checked(sig_args, {}, _key((sig_args, {}), []), vals)

    def _trace_checked(self, args: tuple, kwargs: dict, key, values: list | None) -> ConcreteFunction:
        cf = self._trace(args, kwargs, key, values)
        if cf.graph.variables and self._tracing_count == 1:
            # As TF: a first trace that created variables is traced again;
            # creating variables again then is an error (not a singleton).
            cf = self._trace(args, kwargs, key, values)  # counted, as TF counts it
        return cf

    def _trace(self, args: tuple, kwargs: dict, key, values: list | None = None) -> ConcreteFunction:
        specs = [(s[1], s[2]) for s in _shapes_of(key)]
        outer = state.graph
        graph = FuncGraph(self._name, outer=outer)
        graph.allow_variable_creation = self._tracing_count == 0
        graph.tracing_function = True  # (capturing a tensor of another finished trace is TF's TypeError)
        graph.autograph = self._autograph
        fn = self._python_function
        if self._autograph:
            from tapeflow.graph import autograph

            autograph.mark_user_code(fn)
            fn = autograph.convert_if_needed(fn)
        self._tracing_count += 1
        with graph_scope(graph):
            names = _leaf_names(self._python_function, args, kwargs)
            if len(names) != len(specs):
                names = ["Placeholder"] * len(specs)
            phs = [graph.add_placeholder(shape, dtype, name) for (shape, dtype), name in zip(specs, names)]
            if values is not None:
                graph.feed = {p._id: v._value for p, v in zip(phs, values) if isinstance(v, Tensor)}
            it = iter(phs)
            a, kw = _rebuild((args, kwargs), it)
            try:
                result = fn(*a, **kw)
            except RecursionError as e:  # e.g. a tf.function calling itself on a tensor: TF's StagingError
                from tapeflow.graph.autograph import StagingError

                raise StagingError(f"in user code:\n\n    File {_where(self._python_function)}, in {self._name}\n\n"
                                   f"    RecursionError: {e}") from None
            except Exception as e:
                if not self._autograph:
                    raise
                from tapeflow.graph.autograph import in_user_code

                err = in_user_code(e)  # TF's "in user code:" message, same exception type
                if err is None:
                    raise
                raise err from None
            out_leaves = nest.flatten(result, expand_composites=True)
            for leaf in out_leaves:
                if type(leaf).__name__ == "Undefined" and type(leaf).__module__ == "tapeflow.graph.autograph":
                    raise ValueError(f"'{leaf.name}' must also be initialized in the else branch: it is set on "
                                     "only some paths of an `if`/loop on a tensor condition and returned.")
            outputs, slots = [], []
            for leaf in out_leaves:
                if isinstance(leaf, Variable):
                    leaf = leaf.value()
                elif isinstance(leaf, (bool, int, float, str, bytes, np.ndarray, np.generic)):
                    leaf = convert_to_tensor(leaf)  # as TF: Python/NumPy outputs come back as tensors
                if isinstance(leaf, Tensor):
                    if isinstance(leaf, SymbolicTensor) and leaf._graph is not graph:
                        _check_accessible(leaf, graph)
                    slots.append(len(outputs))
                    outputs.append(leaf if not isinstance(leaf, SymbolicTensor) or leaf._graph is graph
                                   else graph.capture(leaf))
                else:
                    if isinstance(leaf, (TensorShape, dtypes.DType)):
                        err = TypeError(
                            "To be compatible with tf.function, Python functions must return zero or more Tensors "
                            f"or ExtensionTypes or None values; in compilation of {self._name}, found return value "
                            f"of type {type(leaf).__name__}, which is not a Tensor or ExtensionType.")
                        err._no_shape_fallback = True  # the program's error at any shape: no per-shape retrace
                        raise err
                    slots.append(-1)
            template = nest.pack_sequence_as(result, [
                outputs[s] if s >= 0 else leaf for s, leaf in zip(slots, out_leaves)],
                expand_composites=True) if out_leaves else result
        graph.outputs = outputs
        graph.name_outputs(outputs)
        graph.tracing_function, graph.traced_function_done = False, True
        gf = GraphFunction(graph, phs + [ph for _, ph in graph.captures], outputs, self._name)
        cf = ConcreteFunction(gf, (args, kwargs), template, slots, specs)
        cf._python_function = self._python_function
        cf._var_args = _variables_in((args, kwargs))
        if _traced_from_specs((args, kwargs)):
            cf._from_specs = True
        return cf

    def __repr__(self) -> str:
        return f"<tapeflow.function {self._name} at 0x{id(self):X}>"


def function(func: Callable | None = None, input_signature: Any = None, autograph: bool = True,
             jit_compile: Any = None, reduce_retracing: bool = False, experimental_implements: Any = None,
             experimental_autograph_options: Any = None, experimental_attributes: Any = None,
             experimental_relax_shapes: Any = None, experimental_compile: Any = None,
             experimental_follow_type_hints: Any = None, name: str | None = None) -> Any:
    """Compiles a Python function into a callable graph, as ``tf.function``.

    >>> @tf.function
    ... def f(x):
    ...     return x * x + 1.0
    >>> f(tf.constant(2.0))
    <tf.Tensor: shape=(), dtype=float32, numpy=5.0>

    The function is traced once per input signature (tensor shapes and
    dtypes, Python values); Python side effects run only while tracing.
    Used bare (``@tf.function``) or with arguments (``@tf.function(...)``).
    """
    def decorate(f: Callable) -> Function:
        return Function(f, name=name, input_signature=input_signature, autograph=autograph,
                        jit_compile=jit_compile, reduce_retracing=reduce_retracing,
                        experimental_relax_shapes=experimental_relax_shapes)

    if func is not None:
        return decorate(func)
    return decorate


def init_scope():
    """``with tf.init_scope():`` runs eagerly even while a function is traced,
    with gradient tapes paused, as TF's (for one-time initialisation)."""
    return graph_scope(None)


# -----------------------------------------------------------------------------
# tf.print
# -----------------------------------------------------------------------------

# TF formats each element on its own, without NumPy's alignment: floats as
# TF's FloatToBuffer/DoubleToBuffer (%.6g / %.15g, or %.9g / %.17g when that
# does not round-trip), bools as 1/0, strings quoted.
_FLOAT_DIGITS = {"float64": 15}


def _format_elem(x: Any, kind: str, digits: int) -> str:
    if kind == "f":
        s = f"{x:.{digits}g}"
        if digits == 15:
            return s if float(s) == x or x != x else f"{x:.17g}"
        return s if np.float32(float(s)) == np.float32(x) or x != x else f"{x:.9g}"
    if kind == "b":
        return "1" if x else "0"
    if kind in "iu":
        return str(int(x))
    if kind in "SUO":
        return '"' + (x.decode() if isinstance(x, bytes) else str(x)) + '"'
    return "?"


def _format_value(v: Any, summarize: int | None) -> str:
    arr = np.asarray(v)
    kind = arr.dtype.kind
    digits = _FLOAT_DIGITS.get(arr.dtype.name, 6)
    if arr.ndim == 0:
        return _format_elem(arr[()], kind, digits)
    edge = 3 if summarize is None else (sys.maxsize if summarize < 0 else summarize)

    def fmt(a: np.ndarray, depth: int) -> str:
        n = a.shape[0]
        cut = n > 2 * edge
        head = range(min(edge, n)) if cut else range(n)
        tail = range(n - edge, n) if cut else range(0)
        if a.ndim == 1:
            s = " ".join(_format_elem(a[i], kind, digits) for i in head)
            if cut:
                s += " ..." + ("".join(" " + _format_elem(a[i], kind, digits) for i in tail))
            return "[" + s + "]"
        rows = [fmt(a[i], depth + 1) for i in head] + (["..."] if cut else []) + [fmt(a[i], depth + 1) for i in tail]
        return "[" + ("\n" * (a.ndim - 1) + " " * (depth + 1)).join(rows) + "]"

    return fmt(arr, 0)


class _Formatted:
    """A tensor's printed text standing in its place inside a printed structure."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _format_struct(x: Any, top: bool = False) -> str:
    if isinstance(x, _Formatted):
        return x.text
    if isinstance(x, list):
        return "[" + ", ".join(_format_struct(v) for v in x) + "]"
    if isinstance(x, tuple):
        inner = ", ".join(_format_struct(v) for v in x)
        return "(" + inner + ("," if len(x) == 1 else "") + ")"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {_format_struct(x[k])}" for k in sorted(x, key=repr)) + "}"
    return str(x) if top else repr(x)


def print_(*inputs: Any, output_stream: Any = None, summarize: int = 3, sep: str = " ", end: str = "\n",
           name: str | None = None) -> None:
    """Prints tensors (at run time inside ``tf.function``), as ``tf.print``.

    Default stream is ``sys.stderr``, as in TF; pass ``output_stream=sys.stdout``
    to print to standard output. Tensors may sit inside lists, tuples and dicts.
    """
    from tapeflow.framework.variables import Variable

    tensors = []

    def take(x: Any) -> Any:
        if isinstance(x, Variable):
            x = x.value()
        if isinstance(x, Tensor):
            tensors.append(x)
            return _Formatted  # a slot, filled at print time
        if isinstance(x, list):
            return [take(v) for v in x]
        if isinstance(x, tuple) and not hasattr(x, "_fields"):
            return tuple(take(v) for v in x)
        if isinstance(x, dict):
            return {k: take(v) for k, v in x.items()}
        return x

    template = [take(x) for x in inputs]

    def print_fn(*arrays):
        it = iter(arrays)

        def fill(x: Any) -> Any:
            if x is _Formatted:
                return _Formatted(_format_value(next(it), summarize))
            if isinstance(x, list):
                return [fill(v) for v in x]
            if isinstance(x, tuple):
                return tuple(fill(v) for v in x)
            if isinstance(x, dict):
                return {k: fill(v) for k, v in x.items()}
            return x

        parts = [_format_struct(fill(t), top=True) for t in template]
        stream = output_stream if output_stream is not None else sys.stderr
        if isinstance(stream, str):
            stream = sys.stdout if stream.endswith("stdout") else sys.stderr
        print(sep.join(parts), end=end, file=stream)

    g = state.graph
    if g is None:
        if not state.dry_run:
            print_fn(*[np.asarray(t._value) for t in tensors])
        return None
    g._new_op(None, "PrintV2", tuple(g._own(t) for t in tensors), {"print_fn": print_fn}, [])
    return None
