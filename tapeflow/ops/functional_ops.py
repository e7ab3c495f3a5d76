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

import numpy as np

from tapeflow.framework.context import state
from tapeflow.framework.execute import execute
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
    reads = [v.value() for v in f.read_vars] if (st.recording or st.graph is not None) else []
    outs = execute(CALL, tuple(inputs) + tuple(reads), {"f": f, "saved": bool(saved)})
    if not isinstance(outs, list):
        outs = [outs]
    return outs[: f.num_outputs]


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
