"""``tf.cond``, ``tf.switch_case`` and ``tf.while_loop``.

Eagerly they run plain Python. While tracing, each branch / loop body is
traced into its own ``FuncGraph`` (capturing the outer tensors it uses) and
the construct becomes one op with sub-graphs: ``If``/``Case`` run one
branch's compiled graph; ``While`` runs cond and body graphs until the
condition fails, and saves each iteration's loop values. Gradients:

* ``If``/``Case``: another ``If``/``Case`` over the branches' gradient
  graphs (each recomputes its branch forward, then runs its backward), so
  higher orders recurse.
* ``While``: ``WhileGrad`` replays the saved per-iteration values in reverse
  through the body's gradient graph, summing gradients of loop invariants.
"""

from __future__ import annotations

import threading
from typing import Any
from collections.abc import Callable

import numpy as np

from tapeflow.framework import dtypes, nest
from tapeflow.framework.context import state
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.framework.tensor_shape import TensorShape
from tapeflow.graph.graph import FuncGraph, SymbolicTensor, graph_scope
from tapeflow.graph.tensor_array import HISTORY_LENGTH, TensorArray  # HISTORY_LENGTH: a While's iteration count
from tapeflow.ops.registry import defgrad, defop

__all__ = ["cond", "switch_case", "while_loop"]


def _is_symbolic(x: Any) -> bool:
    return isinstance(x, SymbolicTensor)


def _stateful(fns) -> bool:
    return any(op.stateful and op.type != "ReadVariableOp" for f in fns for op in f.graph.operations)


def _merge_shape(a, b):
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


# -----------------------------------------------------------------------------
# Tracing branches
# -----------------------------------------------------------------------------

def _array_ops():
    from tapeflow.ops import array_ops  # (ops sit above the graph layer's modules: imported when used)

    return array_ops


def _trace_branch(fn: Callable, args: list, name: str):
    """Traces ``fn(*args_placeholders)`` into a branch graph; returns
    (graph, placeholders, structured result, flat output tensors)."""
    from tapeflow.graph import autograph

    outer = state.graph
    g = FuncGraph(name, outer=outer)
    g.is_branch = True
    with graph_scope(g):
        phs = [g.add_placeholder(a._value.shape if isinstance(a, SymbolicTensor) else np.shape(a._value),
                                 a._value.dtype) for a in args]
        result = autograph.convert_if_needed(fn)(*phs)
        flat = []
        for leaf in nest.flatten(result):
            if leaf is None:
                raise ValueError(f"{name}: a branch returned None; every output must be a tensor.")
            if isinstance(leaf, TensorArray):  # made a buffer tensor by _buffers_of_tensor_arrays
                flat.append(leaf)
                continue
            t = convert_to_tensor(leaf)
            flat.append(t if isinstance(t, SymbolicTensor) and t._graph is g else _array_ops().identity(t))
    return g, phs, result, flat


def _functions(graphs_phs_outs: list) -> tuple[list, list]:
    """GraphFunctions of several branch graphs over one shared input list
    (the union of what they capture); returns (functions, outer inputs)."""
    from tapeflow.graph.function import GraphFunction

    outer_inputs: list = []
    index: dict[int, int] = {}
    for g, _, _ in graphs_phs_outs:
        for outer, _ in g.captures:
            if outer._id not in index:
                index[outer._id] = len(outer_inputs)
                outer_inputs.append(outer)
    fns = []
    for g, lead, outs in graphs_phs_outs:
        by_outer = {outer._id: ph for outer, ph in g.captures}
        phs = list(lead)
        with graph_scope(g):
            for t in outer_inputs:
                ph = by_outer.get(t._id)
                phs.append(ph if ph is not None else g.add_placeholder(t._value.shape, t._value.dtype))
        fns.append(GraphFunction(g, phs, outs, g.name))
    return fns, outer_inputs


def _grad_graph(fn, float_in: list[bool], name: str):
    """Gradient function of ``fn``: (inputs..., output grads...) -> grads of
    the float inputs (zeros where unconnected). Recomputes the forward."""
    from tapeflow.graph.function import GraphFunction, _spec_of, replay
    from tapeflow.graph.gradients import symbolic_backward
    from tapeflow.ops import array_ops

    g = FuncGraph(name)
    with graph_scope(g):
        phs = [g.add_placeholder(*_spec_of(t)) for t in fn.inputs]
        mapping = replay(fn.graph, {t._id: p for t, p in zip(fn.inputs, phs)}, side_effects=False)
        gphs = [g.add_placeholder(*_spec_of(o)) for o in fn.outputs]
        initial: dict[int, list] = {}
        for o, gp in zip(fn.outputs, gphs):
            m = mapping.get(o._id, o) if isinstance(o, SymbolicTensor) else None
            if isinstance(m, SymbolicTensor) and m._value.dtype.kind in "fc":
                initial.setdefault(m._id, []).append(gp)
        srcs = {p._id for p, f in zip(phs, float_in) if f}
        found = symbolic_backward(g, initial, srcs)
        outs = []
        for p, f in zip(phs, float_in):
            if f:
                gr = found.get(p._id)
                outs.append(array_ops.zeros_like(p) if gr is None else convert_to_tensor(gr))
    return GraphFunction(g, phs + gphs, outs, name)


def _cached_grad_graph(fn, float_in: list[bool]):
    # Built once per sub-graph function (and float-input mask).
    cache = fn.__dict__.setdefault("_grad_graphs", {})
    key = tuple(float_in)
    if key not in cache:
        cache[key] = _grad_graph(fn, float_in, fn.name + "_grad")
    return cache[key]


# -----------------------------------------------------------------------------
# If / Case
# -----------------------------------------------------------------------------

def _case_kernel(index, *args, branches, num_outputs):
    i = int(index)
    if not 0 <= i < len(branches):
        i = len(branches) - 1  # the default branch, as tf.switch_case
    return branches[i].run(args, False)


def _case_shape(specs, branches, num_outputs):
    out = None
    for b in branches:
        s = b.output_specs(False)
        if out is None:
            out = list(s)
            continue
        out = [(_merge_shape(a[0], c[0]), a[1]) for a, c in zip(out, s)]
    return out


def _case_num(attrs):
    return attrs["num_outputs"]


IF = defop("If", lambda pred, *args, branches, num_outputs: _case_kernel(bool(pred), *args, branches=branches,
                                                                        num_outputs=num_outputs),
           shape=_case_shape, num_outputs=_case_num)
CASE = defop("Case", _case_kernel, shape=_case_shape, num_outputs=_case_num)
IF.extra["stateful"] = CASE.extra["stateful"] = lambda attrs: _stateful(attrs["branches"])


def _case_grad(op, *grads):
    branches = op.get_attr("branches")
    args = list(op.inputs[1:])
    float_in = [a._value.dtype.kind in "fc" for a in args]
    if not any(float_in):
        return [None] * len(op.inputs)
    grad_fns = [_cached_grad_graph(b, float_in) for b in branches]
    opdef = IF if op.type == "If" else CASE
    res = execute(opdef, (op.inputs[0], *args, *grads),
                  {"branches": grad_fns, "num_outputs": sum(float_in)})
    it = iter(res if isinstance(res, list) else [res])
    return [None] + [next(it) if f else None for f in float_in]


defgrad("If", inputs=True)(_case_grad)
defgrad("Case", inputs=True)(_case_grad)


def _check_same_structure(results: list, names: list) -> None:
    first = results[0]
    for r, n in zip(results[1:], names[1:]):
        try:
            nest.assert_same_structure(first, r, check_types=False)
        except (ValueError, TypeError) as e:
            raise ValueError(f"{names[0]} and {n} must have the same nested structure of outputs: {e}") from None


def _build_case(opdef, index: Tensor, fns: list, names: list, op_name: str, order: list | None = None):
    # ``order``: the order the branches are traced in (their Python side effects run in it)
    traced: list = [None] * len(fns)
    for i in order or range(len(fns)):
        traced[i] = _trace_branch(fns[i], [], f"{op_name}_{names[i]}")
    _check_same_structure([t[2] for t in traced], names)
    templates = _buffers_of_tensor_arrays(traced)
    flat0 = traced[0][3]
    for (_, _, _, flat), n in zip(traced[1:], names[1:]):
        for a, b in zip(flat0, flat):
            if a._value.dtype != b._value.dtype:
                raise TypeError(
                    f"{op_name}: {names[0]} and {n} outputs must have the same dtypes, got "
                    f"{dtypes.from_numpy(a._value.dtype).name} and {dtypes.from_numpy(b._value.dtype).name}."
                )
    branch_fns, outer_inputs = _functions([(g, phs, flat) for g, phs, _, flat in traced])
    outs = execute(opdef, (index, *outer_inputs), {"branches": branch_fns, "num_outputs": len(flat0)})
    outs = outs if isinstance(outs, list) else [outs]
    # a TensorArray leaves a branch as its buffer and comes back as a TensorArray around the op's output
    outs = [templates[k]._with_buffer(o) if k in templates else o for k, o in enumerate(outs)]
    return nest.pack_sequence_as(traced[0][2], outs)


def _buffers_of_tensor_arrays(traced: list) -> dict:
    """Each branch's TensorArray outputs as their buffer tensors, in the branch's graph. A branch that never
    wrote to its array (its element shape unknown) takes the element shape another branch's writes gave.
    Returns {output index: a TensorArray to wrap the op's output in}."""
    templates = {}
    for k in range(len(traced[0][3])):
        tas = [t[3][k] for t in traced if isinstance(t[3][k], TensorArray)]
        if not tas:
            continue
        shape = next((ta._elem_shape() for ta in tas if ta._elem_shape() is not None), None)
        if shape is None:
            shape = next((tuple(x._shape_tuple()) for ta in tas for x in ta._items or () if x is not None), None)
        for g, _, _, flat in traced:
            ta = flat[k]
            if not isinstance(ta, TensorArray):
                raise ValueError(f"{g.name}: a tf.TensorArray in one branch is a {type(ta).__name__} in another.")
            if ta._elem_shape() is None and shape is not None:
                ta = ta._copy()
                ta._element_shape = TensorShape(shape)
            with graph_scope(g):
                t = ta._as_buffer()
                flat[k] = t if isinstance(t, SymbolicTensor) and t._graph is g else _array_ops().identity(t)
            templates[k] = ta
    return templates


def cond(pred: Any, true_fn: Callable | None = None, false_fn: Callable | None = None, name: str | None = None):
    """``true_fn()`` if ``pred`` else ``false_fn()``, as ``tf.cond``.

    Eagerly (or with a Python/constant predicate) only one branch runs; inside
    ``tf.function`` with a symbolic predicate both branches are traced into an
    ``If`` op and the outputs must match in structure and dtype.
    """
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("true_fn and false_fn must be callable.")
    if not _is_symbolic(pred):
        return true_fn() if bool(pred) else false_fn()
    if pred._value.dtype != np.bool_ or (pred._value.shape not in ((), None)):
        raise TypeError(f"pred must be a scalar bool tensor, got {pred!r}.")
    # (traced true branch first, as TF)
    return _build_case(IF, pred, [false_fn, true_fn], ["false_fn", "true_fn"], name or "cond", order=[1, 0])


def switch_case(branch_index: Any, branch_fns: Any, default: Callable | None = None, name: str = "switch_case"):
    """Runs ``branch_fns[branch_index]()`` (``default`` when out of range), as ``tf.switch_case``.

    ``branch_fns`` is a list of callables, or a dict / list of (int, callable).
    """
    if isinstance(branch_fns, dict):
        items = sorted(branch_fns.items())
    elif branch_fns and isinstance(branch_fns[0], (list, tuple)):
        items = sorted(branch_fns)
    else:
        items = list(enumerate(branch_fns))
    keys = [k for k, _ in items]
    if keys != list(range(len(keys))):
        raise ValueError(f"branch_fns keys must be the integers 0..{len(keys) - 1}, got {keys}")
    fns = [f for _, f in items]
    if not fns:
        raise ValueError("branch_fns must not be empty.")
    if not _is_symbolic(branch_index):
        i = int(convert_to_tensor(branch_index).numpy())
        if 0 <= i < len(fns):
            return fns[i]()
        return (default or fns[-1])()
    if branch_index._value.dtype.kind not in "iu":
        raise TypeError(f"branch_index must be an int32 or int64 scalar tensor, got {branch_index!r}.")
    fns = fns + ([default] if default is not None else [])
    return _build_case(CASE, branch_index, fns, [f"branch_{i}" for i in range(len(fns))], name)


# -----------------------------------------------------------------------------
# While
# -----------------------------------------------------------------------------

def _while_kernel(*arrays, cond_fn, body_fn, n_vars, max_iter, write_only=(), keep_history=True):
    vals = tuple(arrays[:n_vars])
    caps = tuple(arrays[n_vars:])
    steps = []
    i = 0
    while (max_iter is None or i < max_iter) and cond_fn.run(vals + caps, False)[0]:
        # a write-only buffer's values are never read back (see _write_only_vars): keep its shape, not a copy
        if keep_history:
            steps.append(tuple(np.shape(v) if j in write_only else v for j, v in enumerate(vals)))
        vals = tuple(body_fn.run(vals + caps, False))
        i += 1
    if not keep_history:  # (the compiled graph reads no history output: see compiler.compile_graph)
        return vals + tuple(np.zeros((0,) + np.shape(a), np.asarray(a).dtype) for a in arrays[:n_vars])
    # Each loop variable's value at the start of every iteration, stacked:
    # the backward pass replays them in reverse.
    history = []
    for j in range(n_vars):
        if steps and j in write_only:
            zero = np.zeros((), np.asarray(arrays[j]).dtype)
            shapes = {s[j] for s in steps}
            if len(shapes) == 1:  # zero-stride: the right shape for the gradient's zeros_like, no memory
                history.append(np.broadcast_to(zero, (len(steps),) + steps[0][j]))
            else:
                rows = np.empty(len(steps), object)
                for k, s in enumerate(steps):
                    rows[k] = np.broadcast_to(zero, s[j])
                history.append(rows)
        elif steps:
            try:
                history.append(np.stack([np.asarray(s[j]) for s in steps]))
            except ValueError:  # the shape changed across iterations (a growing TensorArray): one array a step
                rows = np.empty(len(steps), object)
                for k, s in enumerate(steps):
                    rows[k] = np.asarray(s[j])
                history.append(rows)
        else:
            history.append(np.zeros((0,) + np.shape(arrays[j]), np.asarray(arrays[j]).dtype))
    return vals + tuple(history)


def _write_only_vars(graph: Any, phs: list, outs: list) -> tuple:
    """The loop variables that are TensorArray buffers the body only writes (``TensorListSetItem`` on it, the
    result on to the next iteration): their gradients never read their values, so the While op need not keep
    a copy per iteration (an RNN's output buffer of ``(time, batch, units)`` kept at every step is quadratic)."""
    found = []
    for j, ph in enumerate(phs):
        tracked = {id(ph)}
        ok = True
        for op in graph.operations:
            for pos, x in enumerate(op.inputs):
                if id(x) not in tracked:
                    continue
                if (op.type == "TensorListSetItem" and pos == 0) or op.type == "Identity":
                    tracked.add(id(op.outputs[0]))
                else:
                    ok = False
        if ok and id(outs[j]) in tracked:
            found.append(j)
    return tuple(found)


def _while_shape(specs, cond_fn, body_fn, n_vars, max_iter, write_only=()):
    out = [(p._value.shape, p._value.dtype) for p in body_fn.inputs[:n_vars]]
    hist = [(None if s is None else (None,) + tuple(s), d) for s, d in out]
    return out + hist


WHILE = defop("While", _while_kernel, shape=_while_shape, num_outputs=lambda attrs: 2 * attrs["n_vars"])
WHILE.extra["stateful"] = lambda attrs: _stateful([attrs["cond_fn"], attrs["body_fn"]])




def _row_shape(specs):
    shape, dtype = specs[0]
    return [(None if shape is None else tuple(shape[1:]), dtype)]


# Row k of a history (and its gradient, a history of zeros but row k): dense
# and shape-agnostic, so they work with the unknown iteration count.
HISTORY_GET = defop("WhileHistoryGet", lambda h, k: h[int(k)], shape=_row_shape)


def _put_kernel(h, k, g):
    out = np.zeros_like(h)
    out[int(k)] = g
    return out


HISTORY_PUT = defop("WhileHistoryPut", _put_kernel, shape=lambda specs: [specs[0]])


@defgrad("WhileHistoryGet", inputs=True)
def _history_get_grad(op, g):
    h, k = op.inputs
    return execute(HISTORY_PUT, (h, k, g)), None


@defgrad("WhileHistoryPut", inputs=True)
def _history_put_grad(op, g):
    _, k, _ = op.inputs
    return None, None, execute(HISTORY_GET, (g, k))


@defgrad("While", inputs=True, outputs=True)
def _while_grad(op, *grads):
    """Replays the saved iterations in reverse with another while loop over
    the body's gradient function; higher orders recurse through it."""
    from tapeflow.ops import array_ops, math_ops
    from tapeflow.graph.functional_ops import call_function

    n = op.get_attr("n_vars")
    body = op.get_attr("body_fn")
    caps = list(op.inputs[n:])
    hists = list(op.outputs[n:2 * n])
    float_vars = [x._value.dtype.kind in "fc" for x in op.inputs[:n]]
    float_caps = [x._value.dtype.kind in "fc" for x in caps]
    fv = [j for j, f in enumerate(float_vars) if f]
    fc = [j for j, f in enumerate(float_caps) if f]
    if not fv and not fc:
        return [None] * len(op.inputs)
    grad_fn = _cached_grad_graph(body, float_vars + float_caps)
    g_final = [convert_to_tensor(g) for g in grads[:n]]
    g_hist = [convert_to_tensor(g) for g in grads[n:2 * n]]
    steps = execute(HISTORY_LENGTH, (hists[0],))
    if any(x._value.ndim is not None and x._value.ndim and x._shape_tuple()[1:] != v._shape_tuple()
           for x, v in zip(hists, op.inputs[:n]) if None not in (x._shape_tuple() or (None,))[1:]):
        raise NotImplementedError("Gradients of tf.while_loop loop variables whose shape changes across "
                                  "iterations are not supported yet.")

    def loop_cond(k, *state):
        return math_ops.greater_equal(k, 0)

    def loop_body(k, *state):
        g = list(state[:n])
        gc = list(state[n:])
        vals = [execute(HISTORY_GET, (h, k)) for h in hists]
        out = call_function(grad_fn, vals + caps + g)
        new_g = list(g)
        for idx, j in enumerate(fv):
            gh = g_hist[j]
            new_g[j] = out[idx] if _zeros_of(gh) else math_ops.add(out[idx], execute(HISTORY_GET, (gh, k)))
        new_gc = [math_ops.add(a, b) for a, b in zip(gc, out[len(fv):])]
        return (math_ops.subtract(k, 1), *new_g, *new_gc)

    init = (math_ops.subtract(steps, 1), *g_final, *[array_ops.zeros_like(caps[j]) for j in fc])
    res = while_loop(loop_cond, loop_body, init)
    res = list(res)
    out = [res[1 + j] if f else None for j, f in enumerate(float_vars)]
    it = iter(res[1 + n:])
    out += [next(it) if f else None for f in float_caps]
    return out


def _zeros_of(g: Any) -> bool:
    """Whether ``g`` is the zeros a backward pass gives an output nobody differentiated (a history, mostly):
    nothing to add, and a growing TensorArray's history (one array a step) has no zeros_like."""
    op = getattr(g, "op", None) if isinstance(g, SymbolicTensor) else None
    return op is not None and op.type == "ZerosLike"


def _shape_ok(invariant, shape) -> bool:
    if invariant is None:
        return True
    if shape is None or len(invariant) != len(shape):
        return False
    return all(a is None or a == b for a, b in zip(invariant, shape))


class _Relax(threading.local):
    on = False  # the next tf.while_loop traced is a loop over a dataset (its state's shapes may relax)


_RELAX = _Relax()


def relaxed_loop_shapes(fn: Callable, *args: Any) -> Any:
    """``fn(*args)`` with the ``tf.while_loop``s it traces relaxing their variables' shapes as needed (a
    ``for`` over a dataset is a reduction in TF, whose state may change shape), instead of raising."""
    saved, _RELAX.on = _RELAX.on, True
    try:
        return fn(*args)
    finally:
        _RELAX.on = saved


def while_loop(cond: Callable, body: Callable, loop_vars: Any, shape_invariants: Any = None,
               parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
               maximum_iterations: Any = None, name: str | None = None):
    """Repeats ``body`` while ``cond`` is true, as ``tf.while_loop``.

    ``loop_vars`` is a (nested) structure; ``cond(*loop_vars)`` and
    ``body(*loop_vars)`` take its elements as arguments (a single non-list
    value is passed as is); the result has the structure of ``loop_vars``.
    Inside ``tf.function`` this is a ``While`` op whose gradient replays the
    saved iterations in reverse; ``shape_invariants`` let shapes vary.
    """
    if not callable(cond) or not callable(body):
        raise TypeError("cond and body must be callable.")
    single = not isinstance(loop_vars, (list, tuple))
    as_args = (lambda v: [v]) if single else (lambda v: list(v))
    max_iter = maximum_iterations
    if max_iter is not None and not _is_symbolic(max_iter):
        max_iter = int(convert_to_tensor(max_iter).numpy())
    flat_vars = nest.flatten(loop_vars)
    if state.graph is None:
        # As TF: Python numbers start as tensors, and the result has the body's structure.
        loop_vars = nest.map_structure(
            lambda v: convert_to_tensor(v) if isinstance(v, (bool, int, float, np.generic, np.ndarray)) else v,
            loop_vars)
        vals = loop_vars
        i = 0
        while (max_iter is None or i < max_iter) and bool(cond(*as_args(vals))):
            new = body(*as_args(vals))
            if not single and not isinstance(new, (list, tuple)):
                new = [new]
            try:
                nest.assert_same_structure(vals, new, check_types=False)
            except (ValueError, TypeError) as e:
                raise ValueError(f"body of tf.while_loop must return the structure of loop_vars: {e}") from None
            vals = new
            i += 1
        return vals
    if _is_symbolic(max_iter):
        raise NotImplementedError("tf.while_loop: a symbolic maximum_iterations is not supported yet; pass a "
                                  "Python int or a constant tensor.")
    from tapeflow.graph.tensor_array import TensorArray

    tas = {i: v for i, v in enumerate(flat_vars) if isinstance(v, TensorArray)}
    relax, _RELAX.on = _RELAX.on and not tas, False  # (this loop's; not the loops its body traces)
    if tas:
        # TensorArrays travel through the loop as their buffer tensors.
        flat_vars = _tensor_array_buffers(flat_vars, tas, body, as_args, loop_vars)
    tensors = [convert_to_tensor(v) for v in flat_vars]
    invariants = None
    if shape_invariants is not None:
        inv_flat = nest.flatten(shape_invariants)
        invariants = [None if TensorShape(s).rank is None else tuple(TensorShape(s).as_list()) for s in inv_flat]
    if tas:
        invariants = list(invariants or [t._shape_tuple() for t in tensors])
        for i, ta in tas.items():
            shape = tensors[i]._shape_tuple()
            if ta._lazy:
                invariants[i] = None
            else:
                invariants[i] = (None,) + tuple(shape[1:]) if ta.dynamic_size else shape

    def wrap(flat: list) -> list:
        return [tas[i]._with_buffer(x) if i in tas else x for i, x in enumerate(flat)]
        for t, inv in zip(tensors, invariants):
            if not _shape_ok(inv, t._shape_tuple()):
                raise ValueError(f"The shape invariant {TensorShape(inv)} is not compatible with the initial shape "
                                 f"{t.shape} of loop variable {t!r}.")
    specs = [(inv if invariants is not None else t._shape_tuple(), t._value.dtype)
             for t, inv in zip(tensors, invariants or [None] * len(tensors))]

    def trace(fn, label, local_reads=frozenset()):
        from tapeflow.graph import autograph

        g = FuncGraph(f"{name or 'while'}_{label}", outer=state.graph)
        g.is_branch = True
        g.local_reads = set(local_reads)
        with graph_scope(g):
            phs = [g.add_placeholder(s, d) for s, d in specs]
            res = autograph.convert_if_needed(fn)(*as_args(nest.pack_sequence_as(loop_vars, wrap(phs))))
        conflict = set(g.captured_reads) & set(g.assigned_variables)
        if conflict and not local_reads:
            # The body assigns a variable it read before: read it inside, each iteration.
            return trace(fn, label, conflict)
        return g, phs, res

    cg, cphs, cres = trace(cond, "cond")
    with graph_scope(cg):
        c = convert_to_tensor(cres)
        if c._value.dtype != np.bool_:
            raise TypeError(f"tf.while_loop cond must return a boolean scalar, got {c!r}.")
        if not isinstance(c, SymbolicTensor) or c._graph is not cg:
            from tapeflow.ops import array_ops

            c = array_ops.identity(c)
    bg, bphs, bres = trace(body, "body")
    if not single and not isinstance(bres, (list, tuple)):
        bres = [bres]
    try:
        nest.assert_same_structure(loop_vars if not single else loop_vars, bres, check_types=False)
    except (ValueError, TypeError) as e:
        raise ValueError(f"body of tf.while_loop must return the structure of loop_vars: {e}") from None
    with graph_scope(bg):
        bflat = []
        for t, (s, d), leaf in zip(tensors, specs, nest.flatten(bres)):
            if isinstance(leaf, TensorArray):
                leaf = leaf._as_buffer()
            o = convert_to_tensor(leaf)
            if o._value.dtype != d:
                raise TypeError(
                    f"Loop variable {t!r} enters the loop with dtype {np.dtype(d).name} but has dtype "
                    f"{o._value.dtype.name} after one iteration."
                )
            if not _shape_ok(s, o._shape_tuple()) and relax:
                relax = "retrace"
            elif not _shape_ok(s, o._shape_tuple()):
                raise ValueError(
                    f"Input tensor `{t.name if isinstance(t, SymbolicTensor) else 'loop_var'}` enters the loop "
                    f"with shape {TensorShape(s)}, but has shape {o.shape} after one iteration. To allow the "
                    "shape to vary across iterations, use the `shape_invariants` argument of tf.while_loop "
                    "to specify a less-specific shape."
                )
            if not isinstance(o, SymbolicTensor) or o._graph is not bg:
                from tapeflow.ops import array_ops

                o = array_ops.identity(o)
            bflat.append(o)
    if relax == "retrace":
        # As TF's Dataset.reduce: the loop state takes the most specific shape of what enters and what one
        # iteration gives, and the loop is traced again (until the shapes settle).
        inv = [TensorShape(None if a is None or b is None or len(a) != len(b) else
                           [x if x == y else None for x, y in zip(a, b)])
               for (a, _), b in zip(specs, (o._shape_tuple() for o in bflat))]
        return relaxed_loop_shapes(while_loop, cond, body, loop_vars, inv, parallel_iterations, back_prop,
                                   swap_memory, maximum_iterations, name)
    (cfn, bfn), caps = _functions([(cg, cphs, [c]), (bg, bphs, bflat)])
    # (only the buffers of TensorArrays: a plain variable passed through is read back by nobody either, but its
    # history is cheap and tests look at it)
    write_only = tuple(j for j in _write_only_vars(bg, bphs, bflat) if j in tas)
    outs = execute(WHILE, (*tensors, *caps), {"cond_fn": cfn, "body_fn": bfn, "n_vars": len(tensors),
                                               "max_iter": max_iter, "write_only": write_only})
    return nest.pack_sequence_as(loop_vars, wrap(list(outs[: len(tensors)])))


def _tensor_array_buffers(flat_vars: list, tas: dict, body: Callable, as_args: Callable, loop_vars: Any) -> list:
    """Each TensorArray loop variable as a buffer tensor; an element shape
    not known yet is found by tracing the body once on a scratch graph."""
    unknown = [i for i, ta in tas.items() if ta._items is not None and ta._elem_shape() is None
               and all(x is None for x in ta._items)]
    if unknown:
        g = FuncGraph("tensor_array_probe", outer=state.graph)
        g.is_branch = True
        with graph_scope(g):
            args = [v._copy() if i in tas else g.add_placeholder(*_probe_spec(v)) for i, v in enumerate(flat_vars)]
            res = nest.flatten(body(*as_args(nest.pack_sequence_as(loop_vars, args))))
        for i in unknown:
            found = res[i].element_shape if i < len(res) and hasattr(res[i], "element_shape") else None
            tas[i] = tas[i]._copy()
            if found is None or found.rank is None or None in found.as_list():
                tas[i]._lazy = True  # rows of a shape known at run time only (TF's TensorList allows it too)
            else:
                tas[i]._element_shape = found
    out = list(flat_vars)
    for i, ta in tas.items():
        out[i] = ta._as_buffer()
    return out


def _probe_spec(v: Any) -> tuple:
    t = convert_to_tensor(v)
    return (t._shape_tuple(), t._value.dtype)


# -----------------------------------------------------------------------------
# Higher-order functions: map_fn, scan, foldl, foldr; tf.case
# -----------------------------------------------------------------------------

def _elems(elems: Any) -> tuple[list, int | None]:
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise ValueError("elems must be a tensor or a (possibly nested) sequence of tensors, got no tensors.")
    shapes = [e._shape_tuple() for e in flat]
    if any(s is None or not s for s in shapes):
        raise ValueError("Elements in elems must be 1+ dimensional (they are unpacked along dimension 0).")
    return flat, shapes[0][0]


def _probe_fn(fn: Callable, specs: list) -> Any:
    """``fn``'s result on placeholders of ``specs`` ((shape, dtype) pairs),
    traced on a scratch graph: its structure, dtypes and shapes."""
    g = FuncGraph("probe", outer=state.graph)
    g.is_branch = state.graph is not None  # eagerly, variables are read in the probe (no graph to capture from)
    with graph_scope(g):
        return fn([g.add_placeholder(shape, dtype) for shape, dtype in specs])


def _row(t: Tensor, i: Any) -> Tensor:
    if isinstance(i, int):
        from tapeflow.ops import array_ops

        return array_ops.getitem(t, i)  # a slice: a dense gradient, as TF's TensorArray unstack (not gather's)
    from tapeflow.graph.tensor_array import GET_ITEM

    return execute(GET_ITEM, (t, i))


def _loop_over(n: Any, step: Callable, carry: list, outputs_like: list | None, reverse: bool = False):
    """Runs ``step(i, carry) -> (carry, outputs)`` for i over range(n) (or
    reversed): a Python loop eagerly, a while loop in graphs. Returns the final
    carry and, if ``outputs_like`` (tensors shaped like one step's outputs) is
    given, the outputs stacked along a new first dimension."""
    from tapeflow.graph.tensor_array import TensorArray
    from tapeflow.ops import array_ops

    if state.graph is None:
        n = int(n)
        outs = []
        order = range(n - 1, -1, -1) if reverse else range(n)
        for i in order:
            carry, out = step(i, carry)
            outs.append(out)
        if reverse:
            outs.reverse()
        stacked = None
        if outputs_like is not None:
            stacked = [array_ops.stack([o[k] for o in outs]) if outs else
                       array_ops.zeros((0,) + tuple(outputs_like[k]._shape_tuple()), dtype=outputs_like[k].dtype)
                       for k in range(len(outputs_like))]
        return carry, stacked
    tas = [TensorArray(o.dtype, size=n, element_shape=o._shape_tuple()) for o in outputs_like or []]
    nc = len(carry)

    def cond(i, *state_):
        return math_ops_less(i, n) if not reverse else math_ops_ge0(i)

    def body(i, *state_):
        c = list(state_[:nc])
        arrays = list(state_[nc:])
        c, out = step(i, c)
        arrays = [ta.write(i, o) for ta, o in zip(arrays, out or [])]
        nxt = i - 1 if reverse else i + 1
        return (nxt, *c, *arrays)

    start = convert_to_tensor(n - 1) if reverse else convert_to_tensor(0)
    res = while_loop(cond, body, (start, *carry, *tas))
    carry = list(res[1:1 + nc])
    stacked = [ta.stack() for ta in res[1 + nc:]] if outputs_like is not None else None
    return carry, stacked


def math_ops_less(i, n):
    from tapeflow.ops import math_ops

    return math_ops.less(i, n)


def math_ops_ge0(i):
    from tapeflow.ops import math_ops

    return math_ops.greater_equal(i, 0)


def map_fn(fn: Callable, elems: Any, dtype: Any = None, parallel_iterations: Any = None, back_prop: bool = True,
           swap_memory: bool = False, infer_shape: bool = True, name: Any = None,
           fn_output_signature: Any = None):
    """``fn`` applied to each slice of ``elems`` along dimension 0, results
    stacked, as ``tf.map_fn``. Inside ``tf.function`` it is a while loop."""
    return _map(fn, elems, fn_output_signature, keep_empty_shape=False)


def _map(fn: Callable, elems: Any, fn_output_signature: Any, keep_empty_shape: bool):
    flat, n = _elems(elems)
    if n is None:
        from tapeflow.ops import array_ops

        n = array_ops.shape(flat[0])[0]

    def call(xs):
        return fn(nest.pack_sequence_as(elems, xs))

    proto = _probe_fn(call, [(tuple(e._shape_tuple()[1:]), e._value.dtype) for e in flat])
    proto_flat = [convert_to_tensor(p) for p in nest.flatten(proto)]

    def step(i, carry):
        out = call([_row(e, i) for e in flat])
        return carry, [convert_to_tensor(o) for o in nest.flatten(out)]

    _, stacked = _loop_over(n, step, [], proto_flat)
    if state.graph is None and int(n) == 0 and fn_output_signature is None and not keep_empty_shape:
        # As TF: the results' element shape comes from the first step, so none gives shape [0]
        from tapeflow.ops import array_ops

        stacked = [array_ops.zeros((0,), dtype=s.dtype) for s in stacked]
    return nest.pack_sequence_as(proto, stacked)


def scan(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: Any = None,
         back_prop: bool = True, swap_memory: bool = False, infer_shape: bool = True, reverse: bool = False,
         name: Any = None):
    """Cumulative ``acc = fn(acc, x)`` over ``elems`` along dimension 0,
    returning every ``acc`` stacked, as ``tf.scan``."""
    flat, n = _elems(elems)
    if initializer is None:
        if n == 0:
            from tapeflow.framework.errors import OutOfRangeError

            raise OutOfRangeError(None, None, "Tried to read from index 0 but array size is: 0 (tf.scan of empty "
                                  "elems needs an initializer)")
        init_struct = nest.pack_sequence_as(elems, [_row(e, (n - 1) if reverse else 0) for e in flat])
        first = 1
    else:
        init_struct = initializer
        first = 0
    init = [convert_to_tensor(a) for a in nest.flatten(init_struct)]
    if n is None:
        raise NotImplementedError("tf.scan needs the length of elems known while tracing.")
    count = n - first

    def step(i, carry):
        idx = i if reverse else i + first
        x = nest.pack_sequence_as(elems, [_row(e, idx) for e in flat])
        acc = fn(nest.pack_sequence_as(init_struct, carry), x)
        acc_flat = [convert_to_tensor(a) for a in nest.flatten(acc)]
        return acc_flat, acc_flat

    _, stacked = _loop_over(count, step, init, init, reverse=reverse)
    if first:
        from tapeflow.ops import array_ops

        stacked = [array_ops.concat([array_ops.expand_dims(a, 0), s] if not reverse else
                                    [s, array_ops.expand_dims(a, 0)], axis=0) for a, s in zip(init, stacked)]
    return nest.pack_sequence_as(init_struct, stacked)


def _fold(fn, elems, initializer, reverse):
    flat, n = _elems(elems)
    if n is None:
        raise NotImplementedError("tf.foldl/foldr need the length of elems known while tracing.")
    if initializer is None:
        init_struct = nest.pack_sequence_as(elems, [_row(e, (n - 1) if reverse else 0) for e in flat])
        first = 1
    else:
        init_struct, first = initializer, 0
    init = [convert_to_tensor(a) for a in nest.flatten(init_struct)]

    def step(i, carry):
        idx = i if reverse else i + first
        x = nest.pack_sequence_as(elems, [_row(e, idx) for e in flat])
        acc = fn(nest.pack_sequence_as(init_struct, carry), x)
        return [convert_to_tensor(a) for a in nest.flatten(acc)], None

    carry, _ = _loop_over(n - first, step, init, None, reverse=reverse)
    return nest.pack_sequence_as(init_struct, carry)


def foldl(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: Any = None,
          back_prop: bool = True, swap_memory: bool = False, name: Any = None):
    """``acc = fn(acc, x)`` over ``elems`` from the first element, as ``tf.foldl``."""
    return _fold(fn, elems, initializer, reverse=False)


def foldr(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: Any = None,
          back_prop: bool = True, swap_memory: bool = False, name: Any = None):
    """``acc = fn(acc, x)`` over ``elems`` from the last element, as ``tf.foldr``."""
    return _fold(fn, elems, initializer, reverse=True)


def case(pred_fn_pairs: Any, default: Callable | None = None, exclusive: bool = False, strict: bool = False,
         name: str = "case"):
    """The function of the first true predicate (else ``default``), as ``tf.case``.

    Built as nested ``tf.cond``s; with ``exclusive=True`` more than one true
    predicate is an error when it runs eagerly.
    """
    pairs = list(pred_fn_pairs.items()) if isinstance(pred_fn_pairs, dict) else list(pred_fn_pairs)
    if not pairs and default is None:
        raise ValueError("tf.case needs at least one (pred, fn) pair or a default.")
    if exclusive and state.graph is None:
        true_count = sum(bool(p) for p, _ in pairs)
        if true_count > 1:
            from tapeflow.framework.errors import InvalidArgumentError

            raise InvalidArgumentError(None, None, f"{name}: more than one condition evaluated as True but "
                                       "exclusive=True.")
    if default is None:
        *pairs, (_, default) = pairs

    def build(k: int):
        if k == len(pairs):
            return default()
        pred, fn = pairs[k]
        return cond(pred, fn, lambda: build(k + 1))

    return build(0)
