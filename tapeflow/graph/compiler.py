"""Compiles a traced graph into one fast Python callable.

The graph is simplified first — constant folding, common-subexpression
elimination, dead-code elimination — then emitted as straight-line Python
source over the ops' NumPy kernels::

    def graph_fn(a0, a1):
        t2 = k_MatMul(a0, V0._value, transpose_a=A0, transpose_b=A1)
        ...
        return (t7,)

so a call costs one Python function call per remaining op: no Tensor
wrapping, dispatch or tape bookkeeping. Side-effecting nodes (variable reads
and assignments, prints) stay in program order. A kernel failure is
reported as ``InvalidArgumentError`` naming the op (found from the failing
line of the generated source).
"""

from __future__ import annotations

import re
import sys
from typing import Any

import numpy as np

from tapeflow.framework import context, errors
from tapeflow.framework.tensor import Tensor, _wrap
from tapeflow.graph.graph import FuncGraph, Operation, SymbolicTensor
from tapeflow.ops import threads

__all__ = ["compile_graph", "CompiledGraph", "evaluate_now"]

# Never folded: their value must change from call to call (collectives are also stateful: kept in order).
_NO_FOLD = re.compile(r"Collective|Random|Multinomial|Shuffle|Dropout|Uniform|Normal|Gamma|Poisson|Categorical")
# Removable if unused, but ordered (never merged) when kept.
_ORDERED_PURE = frozenset({"ReadVariableOp"})
_MAX_FOLD_ELEMENTS = 1 << 20


# Writing into a dying temporary saves a new buffer (and its trip through the caches); below this many
# bytes the in-place kernel's checks cost more than a new buffer does, so a result known to be smaller
# takes the plain kernel (under callgrind, one back-over-back Hessian-vector product of 64 elements
# went from ~610 to ~580 thousand instructions).
INPLACE_MIN_BYTES = 1 << 14


def _worth_inplace(o) -> bool:
    v = o._value
    shape = getattr(v, "shape", None)
    if shape is None or None in shape:
        return True  # (unknown until it runs: the kernel checks)
    try:
        itemsize = np.dtype(v.dtype).itemsize
    except TypeError:
        return True
    n = itemsize
    for d in shape:
        n *= d
    return n >= INPLACE_MIN_BYTES


def _attr_key(attrs: dict):
    try:
        key = tuple(sorted((k, _hashable(v)) for k, v in attrs.items()))
        hash(key)
        return key
    except TypeError:
        return None


def _hashable(v: Any):
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, np.ndarray):
        return ("nd", v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    if isinstance(v, (int, float, str, bool, type(None), np.dtype, np.generic, slice)):
        return (type(v).__name__, repr(v))
    return ("obj", id(v))


class CompiledGraph:
    """A compiled graph: ``fn(*arrays) -> tuple of arrays``; ``source`` is
    the generated Python; ``num_ops`` the op count after simplification."""

    def __init__(self, fn, source: str, line_ops: dict, num_ops: int, name: str) -> None:
        self.fn = fn
        self.source = source
        self.line_ops = line_ops
        self.num_ops = num_ops
        self.name = name

    def __call__(self, *arrays):
        try:
            return self.fn(*arrays)
        except errors.OpError:
            raise
        except (ValueError, IndexError, TypeError, ArithmeticError, np.linalg.LinAlgError) as e:
            raise self._error(e) from None

    def _error(self, exc: Exception) -> Exception:
        tb = sys.exc_info()[2]
        op = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == f"<tf.function {self.name}>":
                op = self.line_ops.get(tb.tb_lineno)
            tb = tb.tb_next
        where = f" in op '{op.name}' ({op.type})" if op is not None else ""
        return errors.InvalidArgumentError(
            None, None, f"{type(exc).__name__} while running tf.function '{self.name}'{where}: {exc}"
            + (f" [Op:{op.type}]" if op is not None else "")
        )


_ZERO_RULES = frozenset({"Mul", "AddV2", "Sub"})
# dropped by debug_stripper: tf.print and the assert_* checks (PrintV2 nodes), Assert, CheckNumerics
_DEBUG_OPS = frozenset({"PrintV2", "Assert", "CheckNumerics"})
_COMMUTATIVE = frozenset({"Mul", "AddV2"})  # (numbers only: AddV2 of strings concatenates)


def _shape_of(x: Tensor):
    return x._value.shape if isinstance(x, SymbolicTensor) else np.shape(x._value)


def _is_zero(x: Tensor, const: dict, cache: dict) -> bool:
    key = x._id
    hit = cache.get(key)
    if hit is None:
        v = const.get(key) if isinstance(x, SymbolicTensor) else x._value
        hit = v is not None and getattr(v, "dtype", np.dtype(object)).kind in "fciub" and not np.any(v)
        cache[key] = hit
    return hit


def _simplify(graph: FuncGraph, inputs: list, outputs: list, fold: bool = True, side_effects: bool = True,
              targets: tuple = ()):
    """Constant folding + CSE in program order, then DCE from the outputs
    and (unless ``side_effects`` is false: only what the outputs need) side effects.
    Returns (ops to emit, value map)."""
    input_ids = {t._id for t in inputs}
    const: dict[int, Any] = {}  # symbolic id -> folded NumPy value
    zero_cache: dict[int, bool] = {}
    alias: dict[int, Tensor] = {}  # symbolic id -> tensor it equals (CSE)
    seen: dict = {}
    kept: list[Operation] = []
    reshaped: dict[int, Tensor] = {}  # id of a Reshape's output -> the tensor it reshapes (chains collapsed)

    def resolve(x: Tensor) -> Tensor:
        while isinstance(x, SymbolicTensor) and x._id in alias:
            x = alias[x._id]
        return x

    strip = bool(context.optimizer_options.get("debug_stripper"))  # tf.config.optimizer's, as TF's Grappler pass
    for op in graph.operations:
        if op.type == "Placeholder":
            continue
        ins = tuple(resolve(x) for x in op.inputs)
        op_inputs = ins
        if strip and op.type in _DEBUG_OPS:
            if op.type == "CheckNumerics":  # the check goes, its input passes through
                if isinstance(ins[0], SymbolicTensor):
                    alias[op.outputs[0]._id] = ins[0]
                else:
                    const[op.outputs[0]._id] = ins[0]._value
            continue
        if fold and op.type in ("OnesLike", "ZerosLike") and len(op.outputs) == 1:
            out = op.outputs[0]
            oshape = out._value.shape
            if oshape is not None and None not in oshape and int(np.prod(oshape)) <= _MAX_FOLD_ELEMENTS:
                # Depends only on the (known) shape: a constant.
                fill = np.ones if op.type == "OnesLike" else np.zeros
                const[out._id] = fill(oshape, out._value.dtype)[()] if oshape == () else fill(oshape, out._value.dtype)
                continue
        if fold and op.type == "Reshape" and isinstance(ins[0], SymbolicTensor):
            # A reshape to the input's own shape is the input; a reshape of a reshape reshapes the original.
            x, out = ins[0], op.outputs[0]
            oshape = out._value.shape
            if oshape is not None and None not in oshape:
                base = reshaped.get(x._id)
                if base is not None:
                    x = base
                    ins = op_inputs = (x,)
                if isinstance(x, SymbolicTensor) and x._value.shape == oshape and x._value.dtype == out._value.dtype:
                    alias[out._id] = x
                    continue
                reshaped[out._id] = x
        if fold and op.type in _ZERO_RULES and not op.stateful:
            # Zero gradients filled in for outputs that got none: x * 0 -> 0,
            # x + 0 -> x (as TF's rules skip such terms).
            z = [_is_zero(x, const, zero_cache) for x in ins]
            out = op.outputs[0]
            oshape = out._value.shape
            if op.type == "Mul" and any(z) and oshape is not None and None not in oshape:
                const[out._id] = np.zeros(oshape, out._value.dtype)
                continue
            keep_idx = {"AddV2": (0, 1), "Sub": (0,)}.get(op.type, ())
            done = False
            for i in keep_idx:
                j = 1 - i
                if z[j] and _shape_of(ins[i]) == oshape and ins[i]._value.dtype == out._value.dtype:
                    if isinstance(ins[i], SymbolicTensor):
                        alias[out._id] = ins[i]
                    else:  # an eager constant: the output is that constant
                        const[out._id] = ins[i]._value
                    done = True
                    break
            if done:
                continue
        if op.opdef is not None and not op.stateful and fold and not _NO_FOLD.search(op.type):
            vals = []
            for x in ins:
                if isinstance(x, SymbolicTensor):
                    if x._id in const:
                        vals.append(const[x._id])
                    else:
                        break
                else:
                    vals.append(x._value)
            else:
                if all(np.size(v) <= _MAX_FOLD_ELEMENTS for v in vals):
                    try:
                        out = op.opdef.kernel(*vals, **op.attrs)
                    except Exception:  # noqa: BLE001 - left to fail at run time, with the op named
                        out = None
                    if out is not None:
                        outs = [out] if op.opdef.num_outputs == 1 else list(out)
                        for o, v in zip(op.outputs, outs):
                            const[o._id] = v
                        continue
        if op.opdef is not None and not op.stateful:
            akey = _attr_key(op.attrs)
            if akey is not None:
                in_keys = tuple(("s", x._id) if isinstance(x, SymbolicTensor) else ("c", id(x)) for x in ins)
                if op.type in _COMMUTATIVE and len(in_keys) == 2 and in_keys[1] < in_keys[0]:
                    # x * y and y * x are the same numbers (IEEE products and sums commute exactly): one key.
                    dt = op.outputs[0]._value.dtype if len(op.outputs) == 1 else None
                    if dt is not None and dt.kind in "fciub":
                        in_keys = (in_keys[1], in_keys[0])
                key = (op.type, in_keys, akey)
                prev = seen.get(key)
                if prev is not None:
                    for o, p in zip(op.outputs, prev.outputs):
                        alias[o._id] = p
                    continue
                seen[key] = op
        kept.append((op, op_inputs))
    # DCE: walk backwards keeping what outputs and side effects need.
    needed = {resolve(t)._id for t in outputs if isinstance(t, SymbolicTensor)}
    needed_ops = {id(op) for op in targets}  # ops run for their effect (a TF 1 session's fetched ops)
    live = []
    for op, ins in reversed(kept):
        side_effect = side_effects and op.stateful and op.type not in _ORDERED_PURE
        if side_effect or id(op) in needed_ops or any(o._id in needed for o in op.outputs):
            live.append((op, ins))
            needed_ops.update(id(c) for c in op.control_inputs)
            for x in ins:
                if isinstance(x, SymbolicTensor):
                    needed.add(x._id)
    live.reverse()
    for t in inputs:
        needed.discard(t._id)
    produced = {o._id for op, _ in live for o in op.outputs}
    missing = [i for i in needed if i not in const and i not in input_ids and i not in produced]
    return live, const, resolve, missing


def compile_graph(graph: FuncGraph, inputs: list, outputs: list, name: str | None = None,
                  fold: bool = True, side_effects: bool = True, targets: tuple = ()) -> CompiledGraph:
    """Compiles the part of ``graph`` that computes ``outputs`` from
    ``inputs`` (placeholders) into a ``CompiledGraph``; with ``side_effects=False`` only
    the ops the outputs depend on (no other stateful op runs), and the ``targets`` ops with what they need
    (their inputs and control inputs)."""
    name = name or graph.name
    live, const, resolve, missing = _simplify(graph, inputs, outputs, fold, side_effects, targets)
    if missing:
        raise ValueError(
            f"tf.function '{name}': an output depends on a graph input that was not fed (a tensor of another "
            "graph, or a placeholder that is not an argument). Pass it as an argument."
        )
    live = _fuse_bias_relu(live, outputs, resolve)
    live, spawned = _schedule(live, outputs, resolve)
    env: dict[str, Any] = {"__name__": "tapeflow.graph.generated", "np": np, "_assign_value": _assign_value,
                           "_same_kind": _same_kind, "_spawn": threads.spawn}
    names: dict[int, str] = {}
    consts_by_obj: dict[int, str] = {}
    kernels: dict[int, str] = {}

    def const_name(value: Any) -> str:
        key = id(value)
        n = consts_by_obj.get(key)
        if n is None:
            n = f"c{len(consts_by_obj)}"
            consts_by_obj[key] = n
            env[n] = value
        return n

    def ref(x: Tensor) -> str:
        x = resolve(x)
        if isinstance(x, SymbolicTensor):
            n = names.get(x._id)
            if n is not None:
                return n
            if x._id in const:
                return const_name(const[x._id])
            raise ValueError(f"tf.function '{name}': tensor {x.name} is used before it is computed.")
        return const_name(x._value)

    def global_obj(prefix: str, obj: Any) -> str:
        n = f"{prefix}{len(env)}"
        env[n] = obj
        return n

    for i, t in enumerate(inputs):
        names[t._id] = f"a{i}"
    lines = [f"def graph_fn({', '.join(f'a{i}' for i in range(len(inputs)))}):"]
    line_ops: dict[int, Operation] = {}
    tmp = 0
    # Free each temporary right after its last use, as hand-written NumPy
    # would: big arrays then get reused by the allocator while still hot.
    last_use: dict[int, int] = {}
    for k, (_op, ins) in enumerate(live):
        for x in ins:
            x = resolve(x)
            if isinstance(x, SymbolicTensor):
                last_use[x._id] = k
    keep = {resolve(t)._id for t in outputs if isinstance(t, Tensor)}
    dying: dict[int, list] = {}
    for k, (op, _) in enumerate(live):
        for o in op.outputs:
            if o._id not in keep:
                dying.setdefault(last_use.get(o._id, k), []).append(o._id)
    pending: dict[str, tuple] = {}  # a spawned op's output name -> (its task's name, its outputs, the op)

    def join(ns) -> None:
        for task, outs, op in {pending[x][0]: pending[x] for x in ns if x in pending}.values():
            line_ops[len(lines) + 1] = op
            lines.append(f"    {', '.join(outs)} = {task}.result()")
            for x in outs:
                del pending[x]

    for k, (op, ins) in enumerate(live):
        if k:
            dead = [names[i] for i in dying.get(k - 1, ()) if i in names]
            for x in [x for x in dead if x in pending]:  # only a spawned op took it (from the task): never bound
                dead.remove(x)
                del pending[x]
            if dead:
                lines.append(f"    del {', '.join(dead)}")
        args = [ref(x) for x in ins]
        spawn = id(op) in spawned
        if pending:
            if op.stateful and op.type not in _VAR_SPECIALS:
                join(list(pending))  # (no stateful op runs beside a spawned one)
            else:  # a spawned op takes a spawned one-output op's task (the inter-op thread runs them in order)
                join([a for a in args if not (spawn and a in pending and len(pending[a][1]) == 1)])
        outs = []
        for o in op.outputs:
            n = f"t{tmp}"
            tmp += 1
            names[o._id] = n
            outs.append(n)
        lineno = len(lines) + 1
        line_ops[lineno] = op
        if op.opdef is None:
            lines.append("    " + _special(op, args, outs, global_obj))
            continue
        kernel = op.opdef.kernel
        inplace = op.opdef.extra.get("inplace")
        if inplace is not None and not spawn and args and args[0].startswith("t") and args[0] not in args[1:]:
            x = resolve(ins[0])  # a temporary of this function that dies here: the op may write into it
            if x._id not in keep and x._id in dying.get(k, ()) and _worth_inplace(op.outputs[0]):
                kernel = inplace
        kname = kernels.get(id(kernel))
        if kname is None:
            kname = global_obj("k_", kernel)
            kernels[id(kernel)] = kname
        kw = ", ".join(f"{k}={global_obj('A', v)}" for k, v in op.attrs.items())
        if op.type == "While" and not any(o._id in last_use or o._id in keep for o in op.outputs[op.attrs["n_vars"]:]):
            kw += ", keep_history=False"  # no gradient reads its iterations back (a backward loop, mostly)
        if spawn:
            task = f"F{len(lines)}"
            targs = [pending[a][0] if a in pending else a for a in args]
            lines.append(f"    {task} = _spawn({kname}{''.join(', ' + a for a in targs)}{', ' if kw else ''}{kw})")
            for x in outs:
                pending[x] = (task, outs, op)
            continue
        call = f"{kname}({', '.join(args)}{', ' if args and kw else ''}{kw})"
        if "plan" in op.attrs and op.opdef.extra.get("plan_step"):  # a collective with its own buffer: its step
            call = f"({global_obj('P', op.attrs['plan'])}.step(({', '.join(args)},)) or {call})"  # or the kernel
        if op.opdef.num_outputs == 1:
            lines.append(f"    {outs[0]} = {call}")
        elif outs:
            lines.append(f"    {', '.join(outs)}{',' if len(outs) == 1 else ''} = {call}")
        else:
            lines.append(f"    {call}")
    join(list(pending))
    out_refs = [ref(t) if isinstance(t, Tensor) else const_name(t) for t in outputs]
    lines.append(f"    return ({', '.join(out_refs)}{',' if len(out_refs) == 1 else ''})")
    source = "\n".join(lines) + "\n"
    code = compile(source, f"<tf.function {name}>", "exec")
    exec(code, env)  # noqa: S102 - our own generated source
    fn = env["graph_fn"]
    scalar = _scalar_version(live, inputs, outputs, resolve, const, fn, len(inputs))
    if scalar is not None:
        fn, source = scalar
    return CompiledGraph(fn, source, line_ops, len(live), name)


class _FusedOp:
    """A compiled-graph node standing for several ops run by one kernel (see _fuse_bias_relu)."""

    class _Def:
        __slots__ = ("kernel", "num_outputs", "extra")

        def __init__(self, kernel: Any) -> None:
            self.kernel, self.num_outputs, self.extra = kernel, 1, {}

    _defs: dict = {}

    def __init__(self, first: Operation, last: Operation, kernel: Any) -> None:
        d = self._defs.get(id(kernel))
        if d is None:
            d = self._defs[id(kernel)] = self._Def(kernel)
        self.opdef, self.attrs, self.outputs = d, first.attrs, last.outputs
        self.type, self.name, self.stateful = f"_Fused{first.type}", f"{first.name}+{last.name}", False


def _fuse_bias_relu(live: list, outputs: list, resolve) -> list:
    """``Relu(AddV2(op(x, w), b))`` as one call of ``op.opdef.extra["bias_relu"](x, w, b, **attrs)`` (a
    conv layer; TF's grappler fuses the same into _FusedConv2D) where the op's and the add's outputs have
    no other use, ``b`` is 1-D over the last axis and all are float32 or float64: the kernel adds the bias
    and applies the ReLU to each block of its product while it is in cache, with the same values."""
    if not any(op.opdef is not None and "bias_relu" in op.opdef.extra for op, _ in live):
        return live
    uses: dict[int, list] = {}
    for k, (_op, ins) in enumerate(live):
        for x in ins:
            x = resolve(x)
            if isinstance(x, SymbolicTensor):
                uses.setdefault(x._id, []).append(k)
    kept = {resolve(t)._id for t in outputs if isinstance(t, Tensor)}

    def only_use(t: Tensor) -> int | None:
        u = uses.get(t._id, ())
        return u[0] if len(u) == 1 and t._id not in kept else None

    fused: dict[int, tuple] = {}
    drop: set = set()
    for k, (op, ins) in enumerate(live):
        fn = op.opdef.extra.get("bias_relu") if op.opdef is not None else None
        if fn is None or len(op.outputs) != 1:
            continue
        y = op.outputs[0]
        ka = only_use(y)
        if ka is None or live[ka][0].type != "AddV2":
            continue
        add, add_ins = live[ka]
        a0, b = (resolve(t) for t in add_ins)
        kr = only_use(add.outputs[0])
        if a0 is not y or b is y or kr is None or live[kr][0].type != "Relu":
            continue
        dt, sb, sy = y._value.dtype, _shape_of(b), _shape_of(y)
        if dt not in (np.float32, np.float64) or b._value.dtype != dt or live[kr][0].outputs[0]._value.dtype != dt:
            continue
        if sy is None or None in sy or sb is None or len(sb) != 1 or sb[0] != sy[-1]:
            continue
        relu = live[kr][0]
        kp = only_use(relu.outputs[0])
        pool_fn = op.opdef.extra.get("bias_relu_pool")
        if pool_fn is not None and kp is not None and live[kp][0].type == "MaxPool" and len(sy) == 4:
            pool = live[kp][0]  # ... and the pooling of a forward-only graph (the ReLU output has no other use)
            node = _FusedOp(op, pool, pool_fn)
            node.attrs = {**op.attrs, **{f"pool_{a}": pool.attrs[a] for a in ("ksize", "strides", "padding")}}
            fused[kp] = (node, tuple(ins) + (b,))
            drop.update((k, ka, kr))
            continue
        fused[kr] = (_FusedOp(op, relu, fn), tuple(ins) + (b,))
        drop.update((k, ka))
    return [fused.get(k, entry) for k, entry in enumerate(live) if k not in drop]


# -- inter-op scheduling ---------------------------------------------------------------------
#
# A heavy pure op whose result is needed only several ops later (a conv layer's filter gradient, which
# only the optimizer reads, while the input gradient runs on down the backward pass; a Dense kernel's
# gradient and its Adam update) is emitted as ``F = _spawn(kernel, args)`` where its inputs are ready and
# ``t = F.result()`` where its value is first needed: tapeflow.ops.threads runs it on the inter-op thread
# meanwhile (or at once, when inter-op parallelism is off). Which ops go there is chosen here, once, from
# estimated costs: an op is handed over when the calling thread has about as much other work to do before
# the result is needed, so neither waits long for the other. A pure op may be moved earlier (with the
# cheap pure ops and variable reads it needs) past pure ops and past the reads and assignments of other
# variables (assignments replace a variable's array, never write into it); never past another stateful op,
# and every spawned op's result is taken before one runs.

_VAR_SPECIALS = frozenset({"ReadVariableOp", "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"})
_MIN_SPAWN_S = 2.5e-4  # an op estimated below this is never handed over (a hand-over costs ~10-50 us)
_MAC_S, _ELEMENT_S = 1 / 30e9, 1e-9  # rough one-thread seconds per multiply-add and per element touched


def _static_shape(x) -> tuple | None:
    s = x._value.shape if isinstance(x, SymbolicTensor) else np.shape(x._value)
    return None if s is None or None in s else tuple(s)


def _op_cost(op, ins) -> float:
    """One-thread seconds an op's kernel takes, roughly (0 when a shape is unknown)."""
    shapes = [_static_shape(x) for x in ins] + [_static_shape(o) for o in op.outputs]
    if any(s is None for s in shapes):
        return 0.0
    elements = sum(int(np.prod(s)) for s in shapes)
    macs = 0.0
    t = op.type.removeprefix("_Fused")
    s_in, s_out = shapes[:len(ins)], shapes[len(ins):]
    if t == "BatchMatMulV2" and len(s_in) >= 2 and len(s_in[1]) >= 2 and s_out:
        macs = float(np.prod(s_out[0])) * (s_in[0][-2] if op.attrs.get("transpose_a") else s_in[0][-1])
    elif t == "Conv2D" and len(s_in) >= 2 and len(s_in[1]) == 4 and s_out:
        macs = float(np.prod(s_out[0])) * np.prod(s_in[1][:3])
    elif t in ("Conv2DBackpropInput", "Conv2DBackpropFilter") and len(s_in) == 2:
        w = s_in[0] if t == "Conv2DBackpropInput" else s_out[0]
        if len(w) == 4:
            macs = float(np.prod(s_in[1])) * np.prod(w[:3])
    return macs * _MAC_S + elements * _ELEMENT_S


def _schedule(live: list, outputs: list, resolve) -> tuple:
    """(new order of ``live``, ids of the ops to spawn); see above."""
    n = len(live)
    if n < 3:
        return live, set()
    pos_of = {id(op): k for k, (op, _) in enumerate(live)}
    producer: dict[int, int] = {}
    for k, (op, _) in enumerate(live):
        for o in op.outputs:
            producer[o._id] = k
    deps: list = []
    consumers: list = [[] for _ in range(n)]
    for k, (op, ins) in enumerate(live):
        d = {producer[x._id] for x in map(resolve, ins) if isinstance(x, SymbolicTensor) and x._id in producer}
        d.update(pos_of[id(c)] for c in getattr(op, "control_inputs", ()) if id(c) in pos_of)
        deps.append(d)
        for j in d:
            consumers[j].append(k)
    kept = {resolve(t)._id for t in outputs if isinstance(t, Tensor)}

    def var(op):
        return id(op.attrs.get("variable"))

    pure = [op.opdef is not None and not op.stateful for op, _ in live]
    barrier = [not pure[k] and live[k][0].type not in _VAR_SPECIALS for k in range(n)]
    is_read = [live[k][0].type == "ReadVariableOp" for k in range(n)]
    cost = [_op_cost(op, ins) if pure[k] else 0.0 for k, (op, ins) in enumerate(live)]
    last_barrier, lb = [], -1
    for k in range(n):
        last_barrier.append(lb)
        if barrier[k]:
            lb = k
    writes: dict[int, list] = {}
    for k, (op, _) in enumerate(live):
        if op.type in _VAR_SPECIALS and not is_read[k]:
            writes.setdefault(var(op), []).append(k)

    def lowest(k: int) -> int:
        """The original position op k may follow at the earliest, before its inputs are considered."""
        lo = last_barrier[k]
        if is_read[k]:
            lo = max([lo] + [w for w in writes.get(var(live[k][0]), ()) if w < k])
        return lo

    spawned: set = set()
    slot: dict[int, int] = {}  # moved op -> the original position it now follows

    def place(k: int, moving: dict) -> int:
        """The position op k (and the cheap ancestors it pulls along, into ``moving``) can follow."""
        lo = lowest(k)
        for d in deps[k]:
            at = slot.get(d, moving.get(d, d))
            if at == d and (pure[d] and cost[d] < _MIN_SPAWN_S or is_read[d]) and d not in spawned \
                    and not deps[d] & spawned:  # (moved up, it would wait for that spawned op's result there)
                at = place(d, moving)
                if at < d:
                    moving[d] = at
                else:
                    at = d
            lo = max(lo, at)
        return lo

    def makespan(chosen: dict) -> float:
        """The step's estimated time with the ops of ``chosen`` (op -> the position it follows) spawned."""
        at: dict[int, list] = {}
        for k, s in chosen.items():
            at.setdefault(s, []).append(k)
        main = worker = 0.0
        done: dict[int, float] = {}

        def enqueue(p: int) -> None:
            nonlocal worker
            for k in sorted(at.get(p, ())):
                worker = max(worker, main) + cost[k]
                done[k] = worker

        enqueue(-1)
        for k in range(n):
            if k not in chosen:
                if barrier[k]:
                    main = max([main] + list(done.values()))
                main = max([main] + [done[d] for d in deps[k] if d in done]) + cost[k]
            enqueue(k)
        return max([main] + list(done.values()))

    chosen: dict[int, int] = {}
    best = makespan(chosen)
    for k in sorted(range(n), key=lambda k: -cost[k]):
        op = live[k][0]
        if not pure[k] or cost[k] < _MIN_SPAWN_S or op.type == "While" or not consumers[k]:
            continue
        read = {resolve(x)._id for c in consumers[k] for x in live[c][1] if isinstance(resolve(x), SymbolicTensor)}
        if any(o._id in kept or o._id not in read for o in op.outputs):
            continue  # (every output must be read by a later op: its name is bound where that op takes it)
        moving: dict = {}
        s = place(k, moving)
        trial = {**chosen, k: s}
        span = makespan(trial)
        if span < best - 0.05 * cost[k]:
            best, chosen = span, trial
            spawned.add(k)
            slot.update(moving)
            if s < k:
                slot[k] = s
    if not spawned:
        return live, set()
    after: dict[int, list] = {}
    for k, s in slot.items():
        after.setdefault(s, []).append(k)
    order = [live[k] for k in sorted(after.get(-1, ()))]
    for k in range(n):
        if k not in slot:
            order.append(live[k])
        order.extend(live[j] for j in sorted(after.get(k, ())))
    return order, {id(live[k][0]) for k in spawned}


# Rank-0 float64 graphs run on Python floats (IEEE doubles, like float64) —
# several times faster than NumPy scalars. Any float exception (x/0, log(0),
# overflow) falls back to the NumPy version, which gives TF's inf/nan.
_SCALAR_EXPR = {
    "AddV2": "{0} + {1}", "Sub": "{0} - {1}", "Mul": "{0} * {1}", "RealDiv": "{0} / {1}", "Neg": "-{0}",
    "Square": "{0} * {0}", "Identity": "{0}", "StopGradient": "{0}", "Sin": "_m.sin({0})", "Cos": "_m.cos({0})",
    "Exp": "_m.exp({0})", "Log": "_m.log({0})", "Tanh": "_m.tanh({0})", "Sqrt": "_m.sqrt({0})",
    "OnesLike": "1.0", "ZerosLike": "0.0", "Reciprocal": "1.0 / {0}", "Abs": "abs({0})",
    "AddN": None,  # any number of inputs, summed left to right as its kernel does
}


def _is_f64_scalar(x) -> bool:
    v = x._value
    if isinstance(x, SymbolicTensor):
        return v.shape == () and v.dtype == np.float64
    return np.shape(v) == () and getattr(v, "dtype", None) == np.float64


def _scalar_version(live, inputs, outputs, resolve, const, numpy_fn, n_inputs):
    if not live or not all(_is_f64_scalar(t) for t in inputs):
        return None
    if not all(isinstance(t, Tensor) and _is_f64_scalar(resolve(t)) for t in outputs):
        return None
    for op, ins in live:
        if op.opdef is None or op.type not in _SCALAR_EXPR:
            return None
        if not all(_is_f64_scalar(x) for x in ins) or not all(_is_f64_scalar(o) for o in op.outputs):
            return None
    import math

    names: dict[int, str] = {t._id: f"a{i}" for i, t in enumerate(inputs)}

    def ref(x) -> str:
        x = resolve(x)
        if isinstance(x, SymbolicTensor):
            if x._id in names:
                return names[x._id]
            return repr(float(const[x._id]))
        return repr(float(x._value))

    args = ", ".join(f"a{i}" for i in range(n_inputs))
    lines = [f"def scalar_fn({args}):"]
    lines += [f"    a{i} = float(a{i})" for i in range(n_inputs)]
    for k, (op, ins) in enumerate(live):
        out = f"t{k}"
        names[op.outputs[0]._id] = out
        args = [ref(x) for x in ins]
        expr = " + ".join(args) if op.type == "AddN" else _SCALAR_EXPR[op.type].format(*args)
        lines.append(f"    {out} = {expr}")
    rets = ", ".join(f"_f64({ref(t)})" for t in outputs)
    lines.append(f"    return ({rets}{',' if len(outputs) == 1 else ''})")
    source = "\n".join(lines) + "\n"
    env = {"__name__": "tapeflow.graph.generated", "_m": math, "_f64": np.float64}
    exec(compile(source, "<tf.function scalar>", "exec"), env)  # noqa: S102 - our own generated source
    scalar_fn = env["scalar_fn"]

    def run(*arrays):
        try:
            return scalar_fn(*arrays)
        except (ArithmeticError, ValueError):
            return numpy_fn(*arrays)

    return run, source



def _special(op: Operation, args: list, outs: list, global_obj) -> str:
    t = op.type
    if t == "ReadVariableOp":
        return f"{outs[0]} = {global_obj('V', op.attrs['variable'])}._value"
    if t == "AssignVariableOp":
        v = global_obj("V", op.attrs["variable"])
        return f"{v}._value = _assign_value({v}, {args[0]})"
    if t in ("AssignAddVariableOp", "AssignSubVariableOp"):
        v = global_obj("V", op.attrs["variable"])
        sign = "+" if t == "AssignAddVariableOp" else "-"
        return f"{v}._value = _same_kind({v}._value {sign} {args[0]}, {v}._value)"
    if t == "NoOp":  # a group of control inputs (tf.compat.v1.global_variables_initializer)
        return "pass"
    if t == "PrintV2":
        fn = global_obj("P", op.attrs["print_fn"])
        return f"{fn}({', '.join(args)})"
    raise NotImplementedError(f"The compiler has no code for graph node type {t!r}.")


def _assign_value(var, value):
    # Assigning a Python-scalar-shaped value keeps the variable's dtype.
    if getattr(value, "dtype", None) != var._value.dtype:
        return np.asarray(value, dtype=var._value.dtype)
    return value


def _same_kind(new, old):
    if getattr(new, "dtype", None) != old.dtype:
        return np.asarray(new).astype(old.dtype)
    return new


def evaluate_now(graph: FuncGraph, t: Tensor) -> Tensor:
    """The value of symbolic ``t`` computed now, for variable initial values
    while tracing: placeholders are fed the values of the call being traced
    (``graph.feed``); without them (a TensorSpec trace) it is an error."""
    if not isinstance(t, SymbolicTensor):
        return t
    feed = getattr(graph, "feed", None) or {}
    phs = [op.outputs[0] for op in graph.operations if op.type == "Placeholder" and op.outputs[0]._id in feed]
    try:
        # Only what the initial value depends on, as TF lifts the initializer out of the function: other
        # stateful ops traced so far (random ops of other variables' initializers) do not run (nor draw) here.
        cg = compile_graph(graph, phs, [t], name=f"{graph.name}_init", side_effects=False)
    except ValueError:
        raise ValueError(
            "A tf.Variable created inside tf.function has an initial value that depends on a value not known "
            "while tracing (e.g. a TensorSpec argument); create it from a constant or outside the function."
        ) from None
    return _wrap(np.asarray(cg(*[feed[p._id] for p in phs])[0]))
