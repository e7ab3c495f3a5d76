"""Python operators on Tensor and Variable, as TF's (``+``, ``@``, ``[]``, ...)."""

from __future__ import annotations

from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.tensor import Tensor, constant
from tapeflow.framework.variables import Variable
from tapeflow.ops import array_ops, math_ops


def _r(fn):
    return lambda self, other: fn(other, self)


def _r_var(fn):
    # ``1 / v``: read the variable first so the Python operand takes its dtype
    # (float32), as for a Tensor, instead of becoming int32.
    return lambda self, other: fn(other, self.value())


def _add(self, other):
    # TF's x + y converts a Python y with x's dtype only as a hint: on a string tensor a number stays int32/float32,
    # and the Add op then reports the dtype mismatch (InvalidArgumentError), as TF.
    if self.dtype.name == "string" and isinstance(other, (int, float)) and not isinstance(other, Tensor):
        other = constant(other)
    return math_ops.add(self, other)


_OPERATORS = {
    "__add__": _add,
    "__radd__": _r(math_ops.add),
    "__sub__": math_ops.subtract,
    "__rsub__": _r(math_ops.subtract),
    "__mul__": math_ops.operator_mul,
    "__rmul__": _r(math_ops.multiply),
    "__truediv__": math_ops.truediv,
    "__rtruediv__": _r(math_ops.truediv),
    "__floordiv__": math_ops.floordiv,
    "__rfloordiv__": _r(math_ops.floordiv),
    "__mod__": math_ops.floormod,
    "__rmod__": _r(math_ops.floormod),
    "__pow__": math_ops.pow,
    "__rpow__": _r(math_ops.pow),
    "__matmul__": math_ops.matmul,
    "__rmatmul__": _r(math_ops.matmul),
    "__lt__": math_ops.less,
    "__le__": math_ops.less_equal,
    "__gt__": math_ops.greater,
    "__ge__": math_ops.greater_equal,
    "__and__": math_ops.operator_and,
    "__rand__": _r(math_ops.operator_and),
    "__or__": math_ops.operator_or,
    "__ror__": _r(math_ops.operator_or),
    "__xor__": math_ops.operator_xor,
    "__rxor__": _r(math_ops.operator_xor),
    "__getitem__": array_ops.getitem,
}


def _neg(self):
    return math_ops.negative(self)


def _abs(self):
    return math_ops.abs(self)


def _invert(self):
    if self.dtype.is_integer:
        return math_ops.invert(self)
    return math_ops.logical_not(self)


def _pos(self):
    return self


def _eq(self, other):
    # TF2: elementwise; incompatible shapes give a scalar False
    # (incompatible_shape_error=False); a value that does not convert to the
    # tensor's dtype raises, as TF (int_tensor == 0.5: TypeError).
    if other is None:
        return False
    try:
        return math_ops.equal(self, other)
    except InvalidArgumentError as e:
        if "Incompatible shapes" in str(e):
            return constant(False)
        raise


def _ne(self, other):
    if other is None:
        return True
    try:
        return math_ops.not_equal(self, other)
    except InvalidArgumentError as e:
        if "Incompatible shapes" in str(e):
            return constant(True)
        raise


def install() -> None:
    for cls in (Tensor, Variable):
        for name, fn in _OPERATORS.items():
            if cls is Variable and name.startswith("__r"):
                fn = _r_var(_OPERATORS[name[:2] + name[3:]])
            setattr(cls, name, fn)
        cls.__neg__ = _neg
        cls.__abs__ = _abs
        cls.__invert__ = _invert
        cls.__pos__ = _pos
        cls.__eq__ = _eq
        cls.__ne__ = _ne
    # __eq__ assignment resets __hash__ to None on the class; keep TF's message.
    Tensor.__hash__ = _unhashable("Tensor", "tensor")
    Variable.__hash__ = _unhashable("Variable", "variable")


def _unhashable(kind, var):
    def __hash__(self):  # noqa: N807
        raise TypeError(f"{kind} is unhashable. Instead, use {var}.ref() as the key.")

    return __hash__


install()
