"""``tf.custom_gradient`` and ``tf.recompute_grad`` (eager mode).

``custom_gradient`` runs the decorated function normally (its ops are
recorded as usual), passes each output through an ``Identity``, and then
records *one more* op on every tape that watches one of its inputs: from the
inputs (and the variables the function read) to those identity outputs,
with the user's ``grad_fn`` as its gradient. The backward walk reaches that
newer record first, so the custom gradient replaces the recorded forward —
but only on tapes that watch an input, which is TF's rule. Forward-mode
accumulators derive a JVP from ``grad_fn`` (double VJP) for outputs that did
not already get a tangent from the forward ops, as TF does.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any
from collections.abc import Callable

from tapeflow.eager.tape import OpRecord
from tapeflow.framework import nest
from tapeflow.framework.context import state
from tapeflow.framework.tensor import convert_to_tensor

__all__ = ["custom_gradient", "grad_pass_through", "recompute_grad"]

_graph_warned: set[str] = set()


class _VariableWatcher:
    """Collects the trainable variables read while it is active. It sits in
    ``state.accumulators``, the list the engine notifies of variable reads."""

    def __init__(self) -> None:
        self.variables: dict[int, Any] = {}

    def _process(self, op, inputs, attrs, outputs) -> None:
        pass

    def _process_read(self, var, value) -> None:
        if var.trainable and (var.dtype.is_floating or var.dtype.is_complex):
            self.variables.setdefault(var._id, var)

    def __enter__(self) -> _VariableWatcher:
        state.accumulators.append(self)
        state.update_recording()
        return self

    def __exit__(self, *exc) -> None:
        accs = state.accumulators
        for i in range(len(accs) - 1, -1, -1):
            if accs[i] is self:
                del accs[i]
                break
        state.update_recording()


def _accepts_variables(fn: Callable) -> bool:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return True
    for p in sig.parameters.values():
        if p.name == "variables" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            return True
        if p.kind is p.VAR_KEYWORD:
            return True
    return False


def custom_gradient(f: Callable | None = None) -> Callable:
    """Decorator to define a function with a custom gradient, as ``tf.custom_gradient``.

    ``f(*args)`` returns ``(y, grad_fn)``; ``grad_fn(*dy)`` returns one
    gradient (or None) per argument of ``f``. If ``f`` reads trainable
    variables that are not arguments, ``grad_fn(*dy, variables=None)`` must
    return ``(input_grads, variable_grads)``.

    >>> @tf.custom_gradient
    ... def log1pexp(x):
    ...     e = tf.exp(x)
    ...     def grad(upstream):
    ...         return upstream * (1 - 1 / (1 + e))
    ...     return tf.math.log(1 + e), grad
    """
    if f is None:
        return custom_gradient
    return _CustomGradientFunction(f)


class _CustomGradientFunction:
    """The decorated function; as a method it binds ``self`` first, so the
    instance is not one of the differentiated arguments (as TF)."""

    def __init__(self, f: Callable, instance: Any = None) -> None:
        functools.update_wrapper(self, f)
        self._f = f
        self._instance = instance

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        f = self._f if self._instance is None else functools.partial(self._f, self._instance)
        return _eager_custom_gradient(f, args, kwargs, _name(self._f))

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        return _CustomGradientFunction(self._f, instance)


def _name(f: Callable) -> str:
    return getattr(f, "__name__", type(f).__name__)


def _eager_custom_gradient(f: Callable, args: tuple, kwargs: dict, name: str) -> Any:
    from tapeflow.framework.variables import Variable
    from tapeflow.ops import array_ops

    from tapeflow.eager.batching import BatchInterpreter

    graph = state.graph
    if isinstance(graph, BatchInterpreter):
        graph = None  # a vectorized backward pass is eager underneath
    if graph is not None and not hasattr(graph, "record_custom_gradient") and name not in _graph_warned:
        # Tapes inside the traced function record the custom op below; the
        # graph's own symbolic gradients would need a hook from the graph.
        _graph_warned.add(name)
        warnings.warn(
            f"@tf.custom_gradient function '{name}' traced by tf.function: GradientTapes inside the "
            "function use its custom gradient, but gradients through the function's call op (or "
            "tf.gradients) differentiate its forward ops, because this graph has no record_custom_gradient "
            "hook yet.", RuntimeWarning, stacklevel=3)
    with _VariableWatcher() as watcher:
        out = f(*args, **kwargs)
    if not isinstance(out, (tuple, list)) or len(out) != 2 or not callable(out[1]):
        raise TypeError(
            f"@tf.custom_gradient function '{name}' must return a pair (outputs, grad_fn), got {type(out).__name__}"
        )
    result, grad_fn = out
    flat_args = nest.flatten(args)
    all_inputs = flat_args + nest.flatten(kwargs)
    variables = [v for v in watcher.variables.values() if all(v is not i for i in all_inputs)]
    if variables and not _accepts_variables(grad_fn):
        raise TypeError(
            "@tf.custom_gradient grad_fn must accept keyword argument 'variables', since function uses "
            f"variables: {variables}"
        )
    flat_result = [array_ops.identity(r) for r in nest.flatten(result)]
    input_tensors = [a.value() if isinstance(a, Variable) else convert_to_tensor(a) for a in flat_args]
    input_tensors += [v.value() for v in variables]
    arg_count = len(flat_args)

    def actual_grad_fn(op: OpRecord, *result_grads: Any) -> list:
        if variables:
            pair = grad_fn(*result_grads, variables=variables)
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(
                    f"grad_fn of @tf.custom_gradient function '{name}' reads variables, so it must return a "
                    "pair (input_grads, variable_grads)."
                )
            input_grads, variable_grads = pair
            variable_grads = list(nest.flatten(variable_grads)) if variable_grads is not None else []
            if len(variable_grads) != len(variables):
                raise ValueError(
                    "Must return gradient for each variable from @custom_gradient grad_fn. "
                    f"('{name}' read {len(variables)} variables, grad_fn returned {len(variable_grads)} "
                    "variable gradients.)"
                )
        else:
            input_grads = grad_fn(*result_grads)
            variable_grads = []
        flat_grads = _flat_grads(input_grads)
        if len(flat_grads) != arg_count:
            raise ValueError(
                f"custom_gradient function expected to return {arg_count} gradients, but returned "
                f"{len(flat_grads)} instead (grad_fn of @tf.custom_gradient function '{name}': return one "
                "gradient, or None, per argument)."
            )
        return list(flat_grads) + list(variable_grads)

    _record(name, tuple(input_tensors), tuple(flat_result), actual_grad_fn)
    if graph is not None and hasattr(graph, "record_custom_gradient"):
        graph.record_custom_gradient(name, tuple(input_tensors), tuple(flat_result), actual_grad_fn)
    return nest.pack_sequence_as(result, flat_result)


def _flat_grads(grads: Any) -> list:
    if grads is None:
        return [None]
    if isinstance(grads, (list, tuple)):
        out = []
        for g in grads:
            out.extend([None] if g is None else nest.flatten(g))
        return out
    return nest.flatten(grads)


def _record(name: str, inputs: tuple, outputs: tuple, grad_fn: Callable) -> None:
    """Records the custom op on each tape that watches an input, and lets
    forward accumulators derive tangents from it."""
    st = state
    if not st.recording:
        return
    input_ids = tuple(t._id for t in inputs)
    out_ids = tuple(o._id for o in outputs if o._value.dtype.kind in "fc")

    def make(keep: bool) -> OpRecord:
        return OpRecord(
            name, {}, input_ids, tuple(o._id for o in outputs), inputs if keep else None,
            outputs if keep else None,
            tuple(t._shape_tuple() for t in inputs), tuple(t._value.dtype for t in inputs),
            tuple(o._shape_tuple() for o in outputs), tuple(o._value.dtype for o in outputs), grad_fn,
        )

    for tp in st.tapes:
        if out_ids and tp.should_record(input_ids):
            tp.watched.update(out_ids)
            tp.records.append(make(False))
    for acc in list(st.accumulators):
        process = getattr(acc, "_process_custom", None)
        if process is not None:
            process(make(True), inputs, outputs)


# -- recompute_grad ------------------------------------------------------------

class _StopRecording:
    """Pauses every tape and forward accumulator (variable watchers keep
    watching, so recompute_grad still finds the variables read)."""

    def __enter__(self) -> None:
        self.saved = (state.tapes, state.accumulators)
        state.tapes = []
        state.accumulators = [a for a in self.saved[1] if isinstance(a, _VariableWatcher)]
        state.update_recording()

    def __exit__(self, *exc) -> None:
        state.tapes, state.accumulators = self.saved
        state.update_recording()


def recompute_grad(f: Callable) -> Callable:
    """Wraps ``f`` so its forward pass keeps no intermediates on the tape;
    they are recomputed during the backward pass (trading compute for
    memory), as ``tf.recompute_grad``. Variables read by ``f`` get their
    gradients too."""
    from tapeflow.eager.backprop import GradientTape, UnconnectedGradients
    from tapeflow.ops import array_ops

    def inner(*args: Any, **kwargs: Any):
        with _StopRecording():
            result = f(*args, **kwargs)

        def grad_wrapper(*dresult: Any, variables: Any = None):
            @custom_gradient
            def inner_recompute_grad(*dresult: Any):
                with GradientTape() as t:
                    id_args = nest.map_structure(array_ops.identity, args)
                    t.watch(nest.flatten(id_args))
                    if variables is not None:
                        t.watch(variables)
                    recomputed = f(*id_args, **kwargs)
                kw_vars = list(variables) if variables is not None else []
                flat_id_args = nest.flatten(id_args)
                grads = t.gradient(nest.flatten(recomputed), flat_id_args + kw_vars, output_gradients=list(dresult),
                                   unconnected_gradients=UnconnectedGradients.ZERO)

                def transpose(*t_args: Any, **t_kwargs: Any):
                    raise NotImplementedError(
                        f"recompute_grad tried to transpose grad of {_name(f)}. Consider not using "
                        "recompute_grad in forward mode autodiff")

                return (grads[:len(flat_id_args)], grads[len(flat_id_args):]), transpose

            return inner_recompute_grad(*dresult)

        return result, grad_wrapper

    inner.__name__ = inner.__qualname__ = _name(f)  # errors and warnings name the user's function
    return functools.wraps(f)(custom_gradient(inner))


def grad_pass_through(f: Callable) -> Callable:
    """``tf.grad_pass_through``: ``f`` forwards, and the gradient passes through it unchanged (to its inputs;
    variables it reads get none), e.g. a straight-through estimator of ``tf.round``.

    >>> x = tf.Variable(2.0)
    >>> with tf.GradientTape() as tape:
    ...     y = tf.grad_pass_through(tf.round)(x * 1.7)
    >>> tape.gradient(y, x).numpy()
    1.7
    """

    @custom_gradient
    def _grad_pass_through_op(*args: Any, **kwargs: Any) -> Any:
        def grad(*dys: Any, variables: Any = None) -> Any:
            if variables is not None:
                return dys, [None] * len(variables)
            return dys

        return f(*args, **kwargs), grad

    return functools.wraps(f)(_grad_pass_through_op)
