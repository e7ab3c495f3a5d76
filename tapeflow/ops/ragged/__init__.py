"""``tf.ragged``: ragged tensors (see ``ragged_tensor.py``) and their ops."""

from __future__ import annotations

from typing import Any

from tapeflow.ops.ragged.ragged_tensor import RaggedTensor, RaggedTensorSpec
from tapeflow.ops.ragged import ragged_ops
from tapeflow.ops.ragged.ragged_ops import (  # noqa: F401
    boolean_mask,
    constant,
    is_ragged,
    map_flat_values,
    range_ as range,
    row_splits_to_segment_ids,
    segment_ids_to_row_splits,
)

__all__ = [
    "RaggedTensor",
    "RaggedTensorSpec",
    "boolean_mask",
    "constant",
    "is_ragged",
    "map_flat_values",
    "range",
    "row_splits_to_segment_ids",
    "segment_ids_to_row_splits",
    "stack",
]


def stack(values: Any, axis: int = 0, name: Any = None) -> RaggedTensor:
    """Stacks tensors or ragged tensors into a RaggedTensor (rank + 1), as ``tf.ragged.stack``."""
    vals = list(values)
    if not any(isinstance(v, RaggedTensor) for v in vals):
        from tapeflow.framework.tensor import convert_to_tensor

        vals = [RaggedTensor.from_tensor(convert_to_tensor(v)) if convert_to_tensor(v).ndim > 1 else v for v in vals]
        if not any(isinstance(v, RaggedTensor) for v in vals):
            from tapeflow.ops import array_ops

            dense = array_ops.stack(vals, axis=axis)
            return RaggedTensor.from_tensor(dense)
    return ragged_ops.stack(vals, axis=axis)


def _install_operators() -> None:
    from tapeflow.ops import math_ops

    def op(fn):
        return lambda self, other: ragged_ops.binary(fn, self, other)

    def rop(fn):
        return lambda self, other: ragged_ops.binary(fn, other, self)

    table = {
        "add": math_ops.add,
        "sub": math_ops.subtract,
        "mul": math_ops.multiply,
        "truediv": math_ops.truediv,
        "floordiv": math_ops.floordiv,
        "mod": math_ops.floormod,
        "pow": math_ops.pow,
        "and": math_ops.logical_and,
        "or": math_ops.logical_or,
        "xor": math_ops.logical_xor,
    }
    for name, fn in table.items():
        setattr(RaggedTensor, f"__{name}__", op(fn))
        setattr(RaggedTensor, f"__r{name}__", rop(fn))
    for name, fn in {
        "lt": math_ops.less,
        "le": math_ops.less_equal,
        "gt": math_ops.greater,
        "ge": math_ops.greater_equal,
    }.items():
        setattr(RaggedTensor, f"__{name}__", op(fn))
    RaggedTensor.__neg__ = lambda self: ragged_ops.unary(math_ops.negative, self)
    RaggedTensor.__abs__ = lambda self: ragged_ops.unary(math_ops.abs, self)
    RaggedTensor.__invert__ = lambda self: ragged_ops.unary(math_ops.logical_not, self)


def _setup() -> None:
    from tapeflow.framework.composite_tensor import install_dispatch_into

    _install_operators()
    ragged_ops.register()
    install_dispatch_into("tapeflow", "math", "nn")


_setup()


# TF's tf.ragged names tapeflow does not build: looking one up says so.
_NOT_BUILT = frozenset({"constant_value", "cross", "cross_hashed", "stack_dynamic_partitions", "RaggedTensorValue"})


def __getattr__(name: str) -> Any:
    if name in _NOT_BUILT:
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError(f"tf.ragged.{name} is not implemented in tapeflow")
    raise AttributeError(f"module 'tapeflow.ragged' has no attribute '{name}'")
