"""Function-call op: a traced graph called as one op, with its gradient.

``StatefulPartitionedCall(*inputs, f=GraphFunction, saved=bool)`` runs the
compiled graph of ``f``. Its inputs are the function's tensor arguments
followed by one read of each variable the function reads (they link the
variables to tapes; the kernel ignores them — the graph reads variables
itself, at run time). With ``saved=True`` the op also outputs the forward
intermediates ``f``'s backward function needs.

The gradient is another call: of ``f``'s backward function, built once from
the forward graph with the same gradient registry, fed the saved
intermediates. If an intermediate itself received a gradient (higher orders
through nested tapes), the rule calls ``f``'s *full* backward instead, which
recomputes the forward from the inputs so that it is a pure function of them.
Either way the backward is itself a function, so higher orders recurse.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import execute as execute_mod
from tapeflow.framework.context import state
from tapeflow.framework.errors import from_py_func_exception
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, _wrap
from tapeflow.graph.graph import SymbolicTensor
from tapeflow.ops.registry import NotDifferentiable, defgrad, defop


def _call_kernel(*arrays, f, saved):
    return f.run(arrays[: f.num_inputs], saved)


def _call_shape(specs, f, saved):
    return f.output_specs(saved)


CALL = defop("StatefulPartitionedCall", _call_kernel, shape=_call_shape,
             num_outputs=lambda attrs: attrs["f"].num_call_outputs(attrs["saved"]))
CALL.extra["stateful"] = True


def call_function(f, inputs: list, saved: bool | None = None) -> list:
    """Calls GraphFunction ``f`` on tensors ``inputs`` as one op; returns
    its user outputs (the saved intermediates stay on the op)."""
    st = state
    if saved is None:
        saved = st.recording
    if st._graph is None and not f.read_vars:
        # Eagerly, with no variables: what ``execute`` does for this op, less its generic dispatch.
        attrs = {"f": f, "saved": bool(saved)}
        outputs = tuple([_wrap(o) for o in f.run([x._value for x in inputs], attrs["saved"])])
        if st.recording:
            execute_mod.record_hook(CALL, tuple(inputs), attrs, outputs)
        return list(outputs[: f.num_outputs])
    reads = [v.value() for v in f.read_vars] if (st.recording or st.graph is not None) else []
    outs = execute(CALL, tuple(inputs) + tuple(reads), {"f": f, "saved": bool(saved)})
    if not isinstance(outs, list):
        outs = [outs]
    return outs[: f.num_outputs]


# A call with a batched input (tape.jacobian's vectorizing interpreter) runs the graph's ops one by one.
_INLINE_TYPES = frozenset({"Placeholder", "ReadVariableOp"})


def _batch_inline(op, inputs: tuple, attrs: dict, special: dict | None = None):
    """The vectorizing interpreter (eager/batching.py) on a call with a batched input: run its graph's ops one
    by one (through the interpreter, so each is batched by its own rule)
    instead of looping over rows. None if the graph holds ops that cannot
    be replayed so (assignments, prints): the caller then falls back. ``special``: op type ->
    ``run(graph_op, inputs)`` for ops replayed otherwise (``vectorized_map``'s random draws, one per row)."""
    f = attrs.get("f")
    graph = getattr(f, "graph", None)
    if graph is None:
        return None
    for gop in graph.operations:
        if gop.opdef is None and gop.type not in _INLINE_TYPES:
            return None
    env: dict[int, Any] = {}
    for ph, x in zip(f.inputs, inputs[: f.num_inputs]):
        env[ph._id] = x
    for outer, ph in graph.captures:
        if ph._id in env:
            continue  # fed by the call (e.g. a backward function's saved tensors)
        if isinstance(outer, SymbolicTensor):
            return None
        env[ph._id] = outer
    for gop in graph.operations:
        if gop.type == "Placeholder":
            if gop.outputs[0]._id not in env:
                return None
            continue
        if gop.type == "ReadVariableOp":
            env[gop.outputs[0]._id] = gop.attrs["variable"].value()
            continue
        ins = tuple(env.get(t._id, t) if isinstance(t, SymbolicTensor) else t for t in gop.inputs)
        if any(isinstance(t, SymbolicTensor) and t._id not in env for t in gop.inputs):
            return None
        run = special.get(gop.type) if special else None
        out = execute(gop.opdef, ins, gop.attrs) if run is None else run(gop, ins)
        outs = out if isinstance(out, list) else [out]
        for sym, val in zip(gop.outputs, outs):
            env[sym._id] = val
    wanted = list(f.outputs) + (list(f.saved_tensors()) if attrs.get("saved") else [])
    return [env.get(t._id, t) if isinstance(t, SymbolicTensor) else t for t in wanted]


CALL.extra["batch_inline"] = _batch_inline


def _all_zero(grads) -> bool:
    for g in grads:
        if isinstance(g, SymbolicTensor):
            return False
        if np.any(g._value):
            return False
    return True


@defgrad("StatefulPartitionedCall", inputs=True, outputs=True)
def _call_grad(op, *grads):
    f = op.get_attr("f")
    n_in, n_out = f.num_inputs, f.num_outputs
    args = list(op.inputs[:n_in])
    out_grads, saved_grads = list(grads[:n_out]), list(grads[n_out:])
    if op.get_attr("saved") and _all_zero(saved_grads):
        bwd = f.backward()
        result = call_function(bwd, out_grads + list(op.outputs[n_out:]))
    else:
        with_saved = bool(op.get_attr("saved"))
        bwd = f.full_backward(with_saved)
        result = call_function(bwd, args + out_grads + (saved_grads if with_saved else []))
    # Map the backward's outputs back to (args..., variable reads...).
    it = iter(result)
    full = [next(it) if connected else None for connected in bwd.grad_mask]
    return full


# -- forward mode (tf.autodiff.ForwardAccumulator) -----------------------------------

def _call_jvp(op, inputs: tuple, attrs: dict, outputs: tuple, tangents: list):
    """The tangents of a call's outputs: a call of ``f``'s JVP function,
    (inputs, tangents of some inputs) -> tangents of the outputs, traced once
    per pattern of inputs with tangents by running an accumulator over ``f``'s
    graph. Functions the trace cannot replay exactly (variables, custom
    gradients, stateful ops) take the double-VJP route of any op."""
    f = attrs["f"]
    n = f.num_inputs
    mask = tuple(t is not None for t in tangents[:n])
    jf = f.jvp_function(mask, bool(attrs["saved"])) if any(mask) else None
    if jf is None:
        from tapeflow.eager import forwardprop

        rec = forwardprop._record_for(op.name, attrs, inputs, outputs, _call_grad)
        return forwardprop._jvp_by_double_vjp(rec, inputs, outputs, tangents)
    outs = call_function(jf, list(inputs[:n]) + [t for t in tangents[:n] if t is not None], saved=False)
    it = iter(outs)
    return [next(it) if connected else None for connected in jf.grad_mask]


CALL.jvp = _call_jvp


# -- run-time checks ------------------------------------------------------------

def _assert_kernel(*arrays, check):
    check(*arrays)
    return ()


# ``Assert``: runs ``check(*arrays)`` (a Python callable that raises TF's error)
# when the op runs — at once eagerly, at every call inside tf.function.
ASSERT = defop("Assert", _assert_kernel, shape=lambda specs, check: [], num_outputs=0)
ASSERT.extra["stateful"] = True
NotDifferentiable("Assert")


def run_check(check, tensors: list) -> None:
    """Runs ``check(*numpy_values)`` now (eager) or each time the traced
    function runs (inside ``tf.function``): how value checks such as
    ``tf.debugging.assert_positive`` work in graphs."""
    if state.graph is None:
        check(*[np.asarray(t._value) for t in tensors])
        return
    execute(ASSERT, tuple(tensors), {"check": check})


# -- tf.numpy_function / tf.py_function ---------------------------------------------

def _tout_list(Tout):  # noqa: N803 - TF's argument name
    from tapeflow.framework import dtypes

    single = not isinstance(Tout, (list, tuple))
    return [dtypes.as_dtype(t) for t in ([Tout] if single else Tout)], single


def _as_outputs(result, touts, what):
    if not touts and result is None:  # Tout=() / []: the function is run for its side effects (as TF)
        return ()
    res = list(result) if isinstance(result, (list, tuple)) else [result]
    if len(res) != len(touts):
        from tapeflow.framework.errors import InvalidArgumentError

        raise InvalidArgumentError(None, None, f"{what} returned {len(res)} values but Tout has {len(touts)}.")
    return tuple(np.asarray(getattr(r, "_value", r), dtype=t._np) for r, t in zip(res, touts))


def _numpy_fn_kernel(*arrays, func, touts):
    return _as_outputs(func(*arrays), touts, "tf.numpy_function")


NUMPY_FUNC = defop("PyFunc", _numpy_fn_kernel, shape=lambda specs, func, touts: [(None, t._np) for t in touts],
                   num_outputs=lambda attrs: len(attrs["touts"]))
NUMPY_FUNC.extra["stateful"] = True
NotDifferentiable("PyFunc")


def _decorator_or_none(op, op_name: str, func, inp, Tout, **kwargs):  # noqa: N803 - TF's argument name
    """As TF's script ops: ``Tout`` is required; with no ``func`` (and no ``inp``) the op is a decorator,
    ``@tf.numpy_function(Tout=...)``; otherwise ``inp`` is required. None when the op runs at once."""
    if Tout is None:
        raise TypeError(f"Missing required argument: 'Tout'\n  If using {op_name} as a decorator, set `Tout`\n"
                        f"  **by name** above the function:\n  `@{op_name}(Tout=tout)`")
    if func is None:
        if inp is not None:
            raise TypeError(f"Don't set the `inp` argument when using {op_name} as a decorator (`func=None`).")

        def decorate(fun):
            import functools

            @functools.wraps(fun)
            def wrapper(*args):
                return op(fun, inp=args, Tout=Tout, **kwargs)

            return wrapper

        return decorate
    if inp is None:
        raise TypeError("Missing argument `inp`:\n  You must set the `inp` argument (the list of arguments to the\n"
                        f"  function), unless you use `{op_name}` as a decorator(`func=None`).")
    return None


def numpy_function(func=None, inp=None, Tout=None, stateful: bool = True, name=None):  # noqa: N803 - TF's name
    """Calls ``func`` on NumPy arrays (at run time inside ``tf.function``), as
    ``tf.numpy_function``; not differentiable, outputs of unknown shape in graphs. With no ``func`` it is a
    decorator: ``@tf.numpy_function(Tout=tf.float32)``."""
    from tapeflow.framework.tensor import convert_to_tensor

    decorator = _decorator_or_none(numpy_function, "tf.numpy_function", func, inp, Tout, stateful=stateful,
                                   name=name)
    if decorator is not None:
        return decorator
    touts, single = _tout_list(Tout)
    outs = execute(NUMPY_FUNC, tuple(convert_to_tensor(x) for x in inp), {"func": func, "touts": touts})
    return outs[0] if single else outs


def _eager_py_kernel(*arrays, func, touts):
    from tapeflow.framework.tensor import _wrap

    with _eager():
        try:
            result = func(*[_wrap(a) for a in arrays])
        except Exception as e:  # as TF's kernel: a tf.errors class by the exception's type
            raise from_py_func_exception(e, "EagerPyFunc") from e
        return _as_outputs(result, touts, "tf.py_function")


def _eager():
    from tapeflow.graph.graph import graph_scope

    return graph_scope(None)


EAGER_PY_FUNC = defop("EagerPyFunc", _eager_py_kernel,
                      shape=lambda specs, func, touts: [(None, t._np) for t in touts],
                      num_outputs=lambda attrs: len(attrs["touts"]))
EAGER_PY_FUNC.extra["stateful"] = True


def _vjp_func(func, n_in: int):
    """The vector-Jacobian product of ``func`` as a Python function of
    (inputs..., output grads...), run eagerly under a tape."""
    def vjp(*args):
        from tapeflow.eager.backprop import GradientTape
        from tapeflow.ops import array_ops

        xs, gs = list(args[:n_in]), list(args[n_in:])
        with GradientTape() as tape:
            for x in xs:
                if x.dtype.is_floating or x.dtype.is_complex:
                    tape.watch(x)
            ys = func(*xs)
        ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
        grads = tape.gradient(ys, xs, output_gradients=gs[: len(ys)])
        return [array_ops.zeros_like(x) if g is None else g for x, g in zip(xs, grads)]

    return vjp


@defgrad("EagerPyFunc", inputs=True)
def _eager_py_func_grad(op, *grads):
    # The gradient is another EagerPyFunc (of func's VJP): higher orders recurse.
    xs = list(op.inputs)
    outs = execute(EAGER_PY_FUNC, (*xs, *grads), {"func": _vjp_func(op.get_attr("func"), len(xs)),
                                                 "touts": [x.dtype for x in xs]})
    outs = outs if isinstance(outs, list) else [outs]
    return [g if x._value.dtype.kind in "fc" else None for x, g in zip(xs, outs)]


def py_function(func=None, inp=None, Tout=None, name=None):  # noqa: N803 - TF's argument name
    """Calls ``func`` eagerly on tensors (at run time inside ``tf.function``),
    as ``tf.py_function``; differentiable (first order in graphs). With no
    ``func`` it is a decorator: ``@tf.py_function(Tout=tf.float32)``."""
    from tapeflow.framework.tensor import convert_to_tensor

    decorator = _decorator_or_none(py_function, "tf.py_function", func, inp, Tout, name=name)
    if decorator is not None:
        return decorator
    touts, single = _tout_list(Tout)
    if state.graph is None:
        # eagerly: just Python on tensors (as TF, the inputs are converted first), recorded op by op on tapes
        args = [x if isinstance(x, Tensor) else convert_to_tensor(x) for x in inp]
        try:
            out = func(*args)
        except Exception as e:  # as TF's kernel: a tf.errors class by the exception's type
            raise from_py_func_exception(e, "EagerPyFunc") from e
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        outs = [convert_to_tensor(o, dtype=t) for o, t in zip(outs, touts)]
        return outs[0] if single else outs
    outs = execute(EAGER_PY_FUNC, tuple(convert_to_tensor(x) for x in inp), {"func": func, "touts": touts})
    return outs[0] if single else outs
