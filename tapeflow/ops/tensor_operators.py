"""Python operators on Tensor and Variable, as TF's (``+``, ``@``, ``[]``, iteration, ...), and the
behaviours of the framework's types that are ops (``-indexed_slices``, IndexedSlices to a dense tensor,
``tf.constant(tensor, dtype)``'s cast), installed here from the op layer."""

from __future__ import annotations

from typing import Any

from tapeflow.framework import nest
from tapeflow.framework import tensor as tensor_mod
from tapeflow.framework.context import state
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.indexed_slices import IndexedSlices
from tapeflow.framework.sparse_tensor import SparseTensor
from tapeflow.framework.tensor import Tensor, constant, convert_to_tensor
from tapeflow.framework.variables import Variable
from tapeflow.ops import array_ops, indexing_ops, math_ops


def _r(fn):
    return lambda self, other: fn(other, self)


def _r_var(fn):
    # ``1 / v``: read the variable first so the Python operand takes its dtype
    # (float32), as for a Tensor, instead of becoming int32.
    return lambda self, other: fn(other, self.value())


def _add(self, other):
    if type(other) is Tensor and type(self) is Tensor:  # the common case: straight to the op
        return math_ops.add_op(self, other)
    # TF's x + y converts a Python y with x's dtype only as a hint: on a string tensor a number stays int32/float32,
    # and the Add op then reports the dtype mismatch (InvalidArgumentError), as TF.
    if isinstance(other, (int, float)) and not isinstance(other, Tensor) and self.dtype.name == "string":
        other = constant(other)
    return math_ops.add_op(self, other)  # (self is a Tensor or Variable: tf.add's Python-left case cannot arise)


_OPERATORS = {
    "__add__": _add,
    "__radd__": _r(math_ops.add_op),
    "__sub__": math_ops.subtract,
    "__rsub__": _r(math_ops.subtract),
    "__mul__": math_ops.operator_mul,
    "__rmul__": _r(math_ops.multiply),
    "__truediv__": math_ops.truediv,
    "__rtruediv__": _r(math_ops.divide),
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


def _iter(self):
    if self._value.ndim == 0:
        raise TypeError("Cannot iterate over a scalar tensor.")
    return iter(array_ops.unstack(self)) if self._value.shape[0] else iter(())


def _neg_slices(self: IndexedSlices) -> IndexedSlices:
    return IndexedSlices(math_ops.negative(self._values), self._indices, self._dense_shape)


def indexed_slices_to_dense(s: IndexedSlices) -> Tensor:
    """Densifies with a differentiable segment sum (repeated rows add)."""
    if s.dense_shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices without dense_shape: {s!r}")
    n = s._shape_tuple()[0]
    return math_ops.unsorted_segment_sum(s.values, s.indices, n)


def _convert_slices(value: IndexedSlices, dtype=None) -> Tensor:
    return indexed_slices_to_dense(value)


# SparseTensor's operators: with a dense operand, the values meet the operand's entries at the indices.
def _sparse_dense_operand(self: SparseTensor, other: Any) -> Any:
    other = other.value() if hasattr(other, "assign") else other
    o = other if isinstance(other, Tensor) else convert_to_tensor(other, dtype_hint=self.dtype)
    if len(o._shape_tuple()) == 0:
        return o
    static = self.shape
    shape = static.as_list() if static.rank is not None and None not in static.as_list() else self._dense_shape
    full = array_ops.broadcast_to(o, shape)
    return indexing_ops.gather_nd(full, self._indices)


def _sparse_mul(self: SparseTensor, other: Any) -> SparseTensor:
    return self.with_values(math_ops.multiply(self._values, _sparse_dense_operand(self, other)))


def _sparse_truediv(self: SparseTensor, other: Any) -> SparseTensor:
    return self.with_values(math_ops.truediv(self._values, _sparse_dense_operand(self, other)))


def _sparse_neg(self: SparseTensor) -> SparseTensor:
    return self.with_values(math_ops.negative(self._values))


def _sparse_add(self: SparseTensor, other: Any) -> Any:
    from tapeflow.ops import sparse as sparse_ops  # tf.sparse.add (its package loads on first use)

    return sparse_ops.add(self, other)


# ``v[key].assign(value)``, as TF's sliced variables (ResourceStridedSliceAssign): a slice of a variable is a
# tensor with an ``assign`` method. Tensors have fixed slots, so the slice's class becomes a same-layout subclass
# of its own class with the method, and the variable and key are kept by the slice's id while it lives.
_SLICE_OF: dict = {}
_SLICE_CLASSES: dict = {}


class _SliceAssign:
    __slots__ = ()

    def assign(self, value: Any, use_locking: Any = None, name: Any = None, read_value: bool = True) -> Any:
        """Writes ``value`` (broadcast to the slice's shape) into the variable's slice; returns the variable."""
        var, key = _SLICE_OF[self._id]
        shape = array_ops.shape(var)
        positions = array_ops.getitem(array_ops.reshape(array_ops.range_(array_ops.size_(var)), shape), key)
        try:
            value = array_ops.broadcast_to(convert_to_tensor(value, dtype=var.dtype), array_ops.shape(positions))
        except InvalidArgumentError:
            raise InvalidArgumentError(None, None, f"Cannot broadcast input shape {list(_shape_of(value))} into "
                                       f"final shape {positions.shape.as_list()} [Op:ResourceStridedSliceAssign]"
                                       ) from None
        flat = indexing_ops.tensor_scatter_nd_update(array_ops.reshape(var.value(), [-1]),
                                                     array_ops.reshape(positions, [-1, 1]),
                                                     array_ops.reshape(value, [-1]))
        return var.assign(array_ops.reshape(flat, shape), read_value=read_value)


def _shape_of(value: Any) -> tuple:
    import numpy as np

    return value._shape_tuple() if isinstance(value, Tensor) else np.shape(value)


def _forget_slice(tid: int) -> None:
    _SLICE_OF.pop(tid, None)


def _var_getitem(self: Variable, key: Any) -> Any:
    import weakref

    out = array_ops.getitem(self, key)
    base = type(out)
    if isinstance(out, Tensor) and out._id not in _SLICE_OF:
        cls = _SLICE_CLASSES.get(base)
        if cls is None:
            cls = _SLICE_CLASSES[base] = type(base.__name__, (_SliceAssign, base), {"__slots__": ()})
            cls.__qualname__, cls.__module__ = base.__qualname__, base.__module__
        out.__class__ = cls
        _SLICE_OF[out._id] = (self, key)
        weakref.finalize(out, _forget_slice, out._id)
    return out


# Variable.scatter_nd_*, as TF's ResourceScatterNd* ops: a tensor_scatter_nd_* of the value, assigned
# back (so bad indices or shapes raise the op's error and change nothing).
def _scatter_nd_update(self, indices: Any, updates: Any, use_locking: bool = True, name: Any = None):
    return self.assign(indexing_ops.tensor_scatter_nd_update(self.value(), indices, updates))


def _scatter_nd_add(self, indices: Any, updates: Any, use_locking: bool = False, name: Any = None):
    return self.assign(indexing_ops.tensor_scatter_nd_add(self.value(), indices, updates))


def _scatter_nd_sub(self, indices: Any, updates: Any, use_locking: bool = False, name: Any = None):
    return self.assign(indexing_ops.tensor_scatter_nd_sub(self.value(), indices, updates))


def _scatter_nd_max(self, indices: Any, updates: Any, use_locking: bool = False, name: Any = None):
    return self.assign(indexing_ops.tensor_scatter_nd_max(self.value(), indices, updates))


def _scatter_nd_min(self, indices: Any, updates: Any, use_locking: bool = False, name: Any = None):
    return self.assign(indexing_ops.tensor_scatter_nd_min(self.value(), indices, updates))


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


# The name scope TF's Python operator opens (``x + y`` is ``with name_scope(None, "add")``): while
# tracing, the op it makes is named so (``add``, ``add_1``; ``x[0]`` is ``strided_slice``).
_SCOPES = {
    "__add__": "add", "__radd__": "add", "__sub__": "sub", "__rsub__": "sub", "__mul__": "mul", "__rmul__": "mul",
    "__truediv__": "truediv", "__rtruediv__": "truediv", "__floordiv__": "floordiv", "__rfloordiv__": "floordiv",
    "__mod__": "mod", "__rmod__": "mod", "__pow__": "pow", "__rpow__": "pow", "__matmul__": "matmul",
    "__rmatmul__": "matmul", "__and__": "and", "__rand__": "and", "__or__": "or", "__ror__": "or", "__xor__": "xor",
    "__rxor__": "xor", "__getitem__": "strided_slice",
}


def _scoped(scope: str, fn):
    def operator(self, other):
        if state.plain or state._graph is None:  # eager: one flag test
            return fn(self, other)
        op_scope = getattr(state._graph, "op_scope", None)
        return fn(self, other) if op_scope is None else op_scope(scope, fn, self, other)

    operator.__name__ = getattr(fn, "__name__", scope)
    return operator


# Reversed operators whose forward function converts a Python left operand on its own
# (tf.add(3.0, t), tf.math.truediv(3.0, t)): ``3.0 + v`` gives it v's dtype instead.
_R_BASE = {"__radd__": math_ops.add_op, "__rtruediv__": math_ops.divide}


def install() -> None:
    for cls in (Tensor, Variable):
        for name, fn in _OPERATORS.items():
            if cls is Variable and name.startswith("__r"):
                fn = _r_var(_R_BASE.get(name) or _OPERATORS[name[:2] + name[3:]])
            setattr(cls, name, _scoped(_SCOPES[name], fn) if name in _SCOPES else fn)
        cls.__neg__ = _neg
        cls.__abs__ = _abs
        cls.__invert__ = _invert
        cls.__pos__ = _pos
        cls.__eq__ = _eq
        cls.__ne__ = _ne
    # __eq__ assignment resets __hash__ to None on the class; keep TF's message.
    Tensor.__hash__ = _unhashable("Tensor", "tensor")
    Variable.__hash__ = _unhashable("Variable", "variable")
    Tensor.__iter__ = _iter
    nest.LEAF_TYPES.update((Tensor, Variable))  # (tf.nest tells these leaves apart without ABC checks)
    IndexedSlices.__neg__ = _neg_slices
    tensor_mod.register_tensor_conversion_function(IndexedSlices, _convert_slices)
    tensor_mod._cast_hook = math_ops.cast
    SparseTensor.__mul__ = SparseTensor.__rmul__ = _sparse_mul
    SparseTensor.__truediv__ = _sparse_truediv
    SparseTensor.__neg__ = _sparse_neg
    SparseTensor.__add__ = SparseTensor.__radd__ = _sparse_add
    Variable.__getitem__ = _scoped(_SCOPES["__getitem__"], _var_getitem)
    Variable.scatter_nd_update = _scatter_nd_update
    Variable.scatter_nd_add = _scatter_nd_add
    Variable.scatter_nd_sub = _scatter_nd_sub
    Variable.scatter_nd_max = _scatter_nd_max
    Variable.scatter_nd_min = _scatter_nd_min


def _unhashable(kind, var):
    def __hash__(self):  # noqa: N807
        suffix = f" ({kind}: {self!r})" if kind == "Variable" else ""  # as TF's text
        raise TypeError(f"{kind} is unhashable. Instead, use {var}.ref() as the key.{suffix}")

    return __hash__


install()
