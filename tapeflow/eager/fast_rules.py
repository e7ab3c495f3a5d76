"""Array-level twins of the hottest gradient rules, for the backward walk
when nothing records it.

A gradient rule is written with tapeflow ops so an outer tape (or a graph
being traced) records it; when nothing does, those ops only cost Python
(conversion checks, Tensor wrappers). ``tape.backward_raw`` then calls the
twin registered here instead: it takes and returns NumPy values and calls the
*same kernels* in the same order as the rule, so the numbers are bitwise the
rule's (tests/test_fast_rules.py checks each twin against its rule).

A twin is keyed by the rule function it mirrors: a rule replaced with
``RegisterGradient(..., override=True)`` loses its twin automatically.
A twin may return ``NotImplemented`` to hand a case to the rule.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tapeflow.ops import registry

# rule function -> array-level twin(rec, *dys) -> per-input arrays (or None)
RAW: dict[Callable, Callable] = {}


def _k(name: str) -> Callable:
    return registry._OPS[name].kernel


def _twin(name: str) -> Callable:
    def register(fn: Callable) -> Callable:
        spec = registry._GRADS.get(name)
        if spec is not None and spec.fn is not None:
            RAW[spec.fn] = fn
        return fn

    return register


_CONSTS: dict = {}


def _const(value: float, dtype) -> np.ndarray:
    """A 0-d constant of ``dtype`` (what the rule's Python number converts to), made once."""
    c = _CONSTS.get((value, dtype))
    if c is None:
        c = _CONSTS[(value, dtype)] = np.asarray(value, dtype)
        c.flags.writeable = False
    return c


def _one(dtype) -> np.ndarray:
    return _const(1.0, dtype)


_MUL, _ADD, _SUB, _NEG = _k("Mul"), _k("AddV2"), _k("Sub"), _k("Neg")
_SIN, _COS, _RECIP, _DIV = _k("Sin"), _k("Cos"), _k("Reciprocal"), _k("RealDiv")
_RELU_GRAD, _MATMUL = _k("ReluGrad"), _k("BatchMatMulV2")
_RESHAPE, _BROADCAST_TO, _EXPAND_DIMS = _k("Reshape"), _k("BroadcastTo"), np.expand_dims


@_twin("AddV2")
def _add(rec, g):
    return g, g


@_twin("Sub")
def _sub(rec, g):
    return g, _NEG(g)


@_twin("Mul")
def _mul(rec, g):
    if g.dtype.kind == "c":  # the rule conjugates
        return NotImplemented
    x, y = rec.inputs
    skip = rec.skip_input_indices
    return (None if 0 in skip else _MUL(g, y._value)), (None if 1 in skip else _MUL(x._value, g))


@_twin("RealDiv")
def _realdiv(rec, g):
    x, y = rec.inputs
    if x._value.dtype.kind != "f":
        return NotImplemented
    skip = rec.skip_input_indices
    yv = y._value
    return (None if 0 in skip else _DIV(g, yv)), (None if 1 in skip else _MUL(g, _DIV(_DIV(_NEG(x._value), yv), yv)))


@_twin("Neg")
def _neg(rec, g):
    return _NEG(g)


@_twin("Identity")
def _identity(rec, g):
    return g


@_twin("Sin")
def _sin(rec, g):
    if g.dtype.kind == "c":
        return NotImplemented
    return _MUL(g, _COS(rec.inputs[0]._value))


@_twin("Cos")
def _cos(rec, g):
    if g.dtype.kind == "c":
        return NotImplemented
    return _NEG(_MUL(g, _SIN(rec.inputs[0]._value)))


@_twin("Tanh")
def _tanh(rec, g):
    if g.dtype.kind == "c":
        return NotImplemented
    y = rec.outputs[0]._value
    return _MUL(g, _SUB(_one(y.dtype), _MUL(y, y)))


@_twin("Sigmoid")
def _sigmoid(rec, g):
    if g.dtype.kind == "c":
        return NotImplemented
    y = rec.outputs[0]._value
    return _MUL(g, _MUL(y, _SUB(_one(y.dtype), y)))


@_twin("Exp")
def _exp(rec, g):
    if g.dtype.kind == "c":
        return NotImplemented
    return _MUL(g, rec.outputs[0]._value)


@_twin("Log")
def _log(rec, g):
    if g.dtype.kind == "c":
        return NotImplemented
    return _MUL(g, _RECIP(rec.inputs[0]._value))


@_twin("Square")
def _square(rec, g):
    x = rec.inputs[0]._value
    if x.dtype.kind != "f":
        return NotImplemented
    return _MUL(g, _MUL(x, _const(2.0, x.dtype)))


@_twin("Relu")
def _relu(rec, g):
    return _RELU_GRAD(g, rec.outputs[0]._value)


@_twin("BatchMatMulV2")
def _matmul(rec, g):
    if g.dtype.kind == "c":
        return NotImplemented
    a, b = rec.inputs
    a, b = a._value, b._value
    attrs = rec.attrs
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    skip = rec.skip_input_indices
    if not ta and not tb:
        ga = (g, b, False, True)
        gb = (a, g, True, False)
    elif ta and not tb:
        ga = (b, g, False, True)
        gb = (a, g, False, False)
    elif not ta and tb:
        ga = (g, b, False, False)
        gb = (g, a, True, False)
    else:
        ga = (b, g, True, True)
        gb = (g, a, True, True)
    return (None if 0 in skip else _MATMUL(*ga)), (None if 1 in skip else _MATMUL(*gb))


def _keepdims_shape(in_shape: tuple, axis) -> tuple:
    if axis is None:
        return (1,) * len(in_shape)
    return tuple(1 if i in axis else d for i, d in enumerate(in_shape))


def _broadcast_back(rec, g):
    in_shape = rec.input_shapes[0]
    attrs = rec.attrs
    if not attrs["keepdims"]:
        g = _RESHAPE(g, _keepdims_shape(in_shape, attrs["axis"]))
    return _BROADCAST_TO(g, in_shape)


@_twin("Sum")
def _sum(rec, g):
    return _broadcast_back(rec, g)


@_twin("Mean")
def _mean(rec, g):
    in_shape = rec.input_shapes[0]
    axis = rec.attrs["axis"]
    count = 1
    for i, d in enumerate(in_shape):
        if axis is None or i in axis:
            count *= d
    bb = _broadcast_back(rec, g)
    return _DIV(bb, np.asarray(max(count, 1), bb.dtype))


@_twin("SoftmaxCrossEntropyWithLogits")
def _xent(rec, grad_loss, grad_backprop):
    # First order with the labels' gradient unasked (a training step): the
    # rule's first line, g = expand_dims(grad_loss, -1) * backprop.
    if grad_backprop is not None or grad_loss is None or 1 not in rec.skip_input_indices:
        return NotImplemented
    return _MUL(_EXPAND_DIMS(grad_loss, -1), rec.outputs[1]._value), None
