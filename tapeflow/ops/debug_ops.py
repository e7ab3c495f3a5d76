"""Debugging ops: ``CheckNumerics`` (``tf.debugging.check_numerics``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor
from tapeflow.ops import shapes
from tapeflow.ops._helpers import t
from tapeflow.ops.registry import defgrad, defop


def _non_finite_kinds(x: np.ndarray) -> str | None:
    """TF's wording: 'NaN', 'Inf' or 'Inf and NaN', or None if all finite."""
    has_nan = bool(np.isnan(x).any())
    has_inf = bool(np.isinf(x).any())
    if has_nan and has_inf:
        return "Inf and NaN"
    if has_nan:
        return "NaN"
    if has_inf:
        return "Inf"
    return None


def _check_numerics_kernel(x, message):
    kinds = _non_finite_kinds(x)
    if kinds is not None:
        raise InvalidArgumentError(None, None, f"{message} : Tensor had {kinds} values [Op:CheckNumerics]")
    return x


CHECK_NUMERICS = defop("CheckNumerics", _check_numerics_kernel, shape=shapes.same)
CHECK_NUMERICS.extra["stateful"] = True  # as TF's op: kept in a tf.function even when its output is unused


@defgrad("CheckNumerics", inputs=False)
def _check_numerics_grad(op, g):
    # As TF: the gradient is checked too, with a message saying so.
    return check_numerics(
        g, "Not a number (NaN) or infinity (Inf) values detected in gradient. " + op.get_attr("message"))


def check_numerics(tensor: Any, message: str, name: str | None = None) -> Tensor:
    """Returns ``tensor`` unchanged, or raises ``InvalidArgumentError``
    (``"<message> : Tensor had NaN values"``) if it holds NaN or Inf, as
    ``tf.debugging.check_numerics``. Its gradient is checked the same way."""
    x = t(tensor)
    if x._value.dtype.kind != "f":
        raise InvalidArgumentError(
            None, None,
            f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed values: bfloat16, half, float, "
            "double [Op:CheckNumerics]. check_numerics only checks floating-point tensors; integers cannot "
            "hold NaN or Inf.")
    return execute(CHECK_NUMERICS, (x,), {"message": str(message)})
