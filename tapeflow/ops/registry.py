"""The op registry: each op's kernel, shape rule and gradient rule, by TF name.

An op is declared once, in its family's module, as three faces side by side::

    SIN = defop("Sin", np.sin, shape=same_shape)          # kernel + shape rule

    @defgrad("Sin", inputs=True)                           # gradient rule
    def _sin_grad(op, dy):
        return dy * cos(op.inputs[0])

    def sin(x, name=None):                                 # public function
        return execute(SIN, (convert(x),))

The contract of a gradient rule ``rule(op, *output_grads)``:

* ``op`` is the recorded operation: ``op.type``, ``op.inputs`` and
  ``op.outputs`` (tensors; only those the rule declared it needs are kept, the
  others are ``None``), ``op.get_attr(name)``, ``op.input_shapes``,
  ``op.input_dtypes``.
* ``output_grads`` has one tensor per op output; an output that received no
  gradient is given zeros.
* it returns one gradient per input (a single value for one input): a Tensor,
  an ``IndexedSlices``, or ``None`` for "no gradient" (integer inputs, attrs
  passed as tensors). A gradient may have the broadcast shape of the op's
  output: the engine sums it back to the input's shape (unbroadcast is done
  once, there, not in rules).
* it is written with tapeflow ops, never raw NumPy, so an outer tape records
  it and higher derivatives come for free.

``defgrad(..., inputs=, outputs=)`` says what the rule reads, so a tape keeps
only those tensors alive. Ops declared with ``NotDifferentiable`` are never
recorded and their outputs have no gradient (``None`` downstream). Ops for which
TF registers no gradient at all are declared with ``NoGradientRegistered``: they
are recorded, and differentiating through one raises TF's ``LookupError``.
"""

from __future__ import annotations

import sys
from typing import Any
from collections.abc import Callable

__all__ = [
    "OpDef", "defop", "defgrad", "RegisterGradient", "NotDifferentiable", "no_gradient",
    "get_op", "get_gradient", "registered_ops", "is_differentiable", "NoGradientRegistered",
]


class OpDef:
    """An op: its name, NumPy kernel, shape rule and output count.

    ``kernel(*arrays, **attrs)`` returns an array (or a tuple of arrays when
    ``num_outputs != 1``). ``shape(*input_specs, **attrs)`` returns the output
    (shape, dtype) pairs for graph building; ``None`` means not yet written.
    ``num_outputs`` may be an int or a callable of the attrs (e.g. Unpack).
    """

    __slots__ = ("name", "kernel", "shape", "num_outputs", "defined_at", "jvp", "batch", "extra")

    def __init__(self, name: str, kernel: Callable, shape: Callable | None, num_outputs: Any, defined_at: str) -> None:
        self.name = name
        self.kernel = kernel
        self.shape = shape
        self.num_outputs = num_outputs
        self.defined_at = defined_at
        self.jvp = None  # optional forward-mode rule, see eager/forwardprop.py
        self.batch = None  # optional batching rule for vectorized jacobians
        self.extra: dict = {}

    def __repr__(self) -> str:
        return f"<OpDef {self.name}>"


class GradSpec:
    """A gradient rule and what it needs saved from the forward op."""

    __slots__ = ("fn", "save_inputs", "save_outputs", "defined_at")

    def __init__(self, fn: Callable | None, save_inputs: bool, save_outputs: bool, defined_at: str) -> None:
        self.fn = fn
        self.save_inputs = save_inputs
        self.save_outputs = save_outputs
        self.defined_at = defined_at


_OPS: dict[str, OpDef] = {}
_GRADS: dict[str, GradSpec] = {}


def _caller(depth: int = 2) -> str:
    f = sys._getframe(depth)
    return f"{f.f_code.co_filename}:{f.f_lineno}"


def defop(name: str, kernel: Callable, *, shape: Callable | None = None, num_outputs: Any = 1) -> OpDef:
    """Registers an op kernel under TF's op name; a duplicate name is an error."""
    if name in _OPS:
        raise KeyError(
            f"Registering two ops with name '{name}'! (Previous registration was in {_OPS[name].defined_at})"
        )
    op = OpDef(name, kernel, shape, num_outputs, _caller())
    _OPS[name] = op
    return op


def defgrad(name: str, *, inputs: bool = True, outputs: bool = False, override: bool = False) -> Callable:
    """Decorator registering the gradient rule of op ``name``.

    ``inputs``/``outputs`` say whether the rule reads ``op.inputs`` /
    ``op.outputs``; the tape saves only what is needed.
    """

    def register(fn: Callable) -> Callable:
        if name in _GRADS and not override:
            raise KeyError(
                f"Registering two gradient with name '{name}'! "
                f"(Previous registration was in {_GRADS[name].defined_at})"
            )
        _GRADS[name] = GradSpec(fn, inputs, outputs, _caller())
        return fn

    return register


class RegisterGradient:
    """``@tf.RegisterGradient("OpName")``: the gradient rule of an op type.

    The rule gets ``(op, *grads)`` and returns one gradient per input (see
    this module's docstring). A name already registered raises ``KeyError``
    naming the first registration, as in TF; pass ``override=True`` (a
    tapeflow extension) to replace a rule deliberately.
    """

    def __init__(self, op_type: str, override: bool = False) -> None:
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type
        self._override = override

    def __call__(self, fn: Callable) -> Callable:
        return defgrad(self._op_type, inputs=True, outputs=True, override=self._override)(fn)


def NotDifferentiable(op_type: str) -> None:  # noqa: N802 - TF's name
    """Declares ``op_type`` has no gradient: it is never recorded on a tape."""
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
    if op_type in _GRADS and _GRADS[op_type].fn is not None:
        raise KeyError(
            f"Registering two gradient with name '{op_type}'! "
            f"(Previous registration was in {_GRADS[op_type].defined_at})"
        )
    _GRADS[op_type] = GradSpec(None, False, False, _caller())


no_gradient = NotDifferentiable


def NoGradientRegistered(op_type: str) -> None:  # noqa: N802 - as NotDifferentiable
    """Declares that TF registers no gradient for ``op_type`` (neither a rule nor ``NotDifferentiable``):
    the op is recorded, and a gradient that flows into it raises TF's
    ``LookupError: gradient registry has no entry for: <op_type>``."""

    def rule(op, *grads):
        raise LookupError(f"gradient registry has no entry for: {op_type}")

    rule.no_gradient_registered = True
    _GRADS[op_type] = GradSpec(rule, False, False, _caller())


def GradientNotImplemented(op_type: str, what: str) -> None:  # noqa: N802 - as NotDifferentiable
    """Declares that TF has a gradient for ``op_type`` that tapeflow does not build: the op is recorded, and a
    gradient that flows into it raises ``NotImplementedError`` naming ``what``."""

    def rule(op, *grads):
        raise NotImplementedError(f"{what} is not implemented in tapeflow")

    rule.gradient_not_implemented = True
    _GRADS[op_type] = GradSpec(rule, False, False, _caller())


def get_op(name: str) -> OpDef:
    try:
        return _OPS[name]
    except KeyError:
        raise LookupError(f"No op named '{name}' is registered.") from None


def get_gradient(name: str) -> GradSpec | None:
    """The GradSpec of ``name`` (``spec.fn is None`` if NotDifferentiable),
    or ``None`` if no rule was ever registered."""
    return _GRADS.get(name)


def is_differentiable(name: str) -> bool:
    spec = _GRADS.get(name)
    return (spec is not None and spec.fn is not None and not getattr(spec.fn, "no_gradient_registered", False)
            and not getattr(spec.fn, "gradient_not_implemented", False))


def registered_ops() -> dict[str, OpDef]:
    """Every registered op, by name (a copy)."""
    return dict(_OPS)
