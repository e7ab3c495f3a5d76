"""The op layer: every op's kernel, shape rule and gradient (see registry.py)."""

from tapeflow.ops import array_ops, math_ops, tensor_operators  # noqa: F401 - registers ops and operators
