"""Helpers shared by the tf.nn op families: TF-style error messages and input checks."""

from __future__ import annotations

from typing import Any


from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.tensor import Tensor
from tapeflow.ops import array_ops
from tapeflow.ops._helpers import check_float, t


def _err(op: str, msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"{msg} [Op:{op}]")


def _dims(shape) -> str:
    """TF's way of printing a shape in messages: [2,3]."""
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _zeros(x: Tensor) -> Tensor:
    return array_ops.zeros_like(x)


def _float_input(x: Any, op: str) -> Tensor:
    x = t(x)
    check_float(x, op)
    return x
