"""``tnp.random``: NumPy's random functions drawn with TF's stateful ops (``tf.random.normal``/``uniform`` and
the global seed ``tnp.random.seed`` sets), as TF NumPy draws them."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework.tensor import Tensor
from tapeflow.ops import random_ops

__all__ = ["rand", "randint", "randn", "random", "seed", "standard_normal", "uniform"]


def seed(s: Any) -> None:
    """Sets TF's global seed (``tf.random.set_seed``)."""
    try:
        s = int(s)
    except TypeError:
        raise ValueError(f"Argument `s` got an invalid value {s}. Only integers are supported.") from None
    random_ops.set_seed(s)


def _float_type() -> Any:
    from tapeflow.experimental.numpy._core import result_type

    return result_type(float)


def standard_normal(size: Any = None) -> Tensor:
    if size is None:
        size = ()
    elif np.ndim(size) == 0:
        size = (size,)
    return random_ops.normal(tuple(int(s) for s in size), dtype=_float_type())


def randn(*args: int) -> Tensor:
    """Normal samples of shape ``args`` (float64 by NumPy's rule)."""
    return standard_normal(size=args)


def uniform(low: Any = 0.0, high: Any = 1.0, size: Any = None) -> Tensor:
    from tapeflow.experimental.numpy._core import asarray

    dtype = _float_type()
    low, high = asarray(low, dtype=dtype), asarray(high, dtype=dtype)
    if size is None:
        size = np.broadcast_shapes(tuple(low._shape_tuple()), tuple(high._shape_tuple()))
    elif np.ndim(size) == 0:
        raise ValueError("tnp.random.uniform: `size` must be a shape (TF raises for a scalar size)")
    return random_ops.uniform(tuple(size), minval=low, maxval=high, dtype=dtype)


def random(size: Any = None) -> Tensor:
    return uniform(0.0, 1.0, size)


def rand(*size: int) -> Tensor:
    return uniform(0.0, 1.0, size)


def randint(low: int, high: int | None = None, size: Any = None, dtype: Any = np.int64) -> Tensor:
    from tapeflow.experimental.numpy._core import result_type

    low = int(low)
    if high is None:
        high, low = low, 0
    if size is None:
        size = ()
    elif isinstance(size, int):
        size = (size,)
    dtype_orig = dtype
    dtype = result_type(dtype)
    if dtype._np not in (np.int32, np.int64):
        raise ValueError(
            f"Argument `dtype` got an invalid value {dtype_orig}. Only those convertible to "
            f"{(np.int32, np.int64)} are supported."
        )
    return random_ops.uniform(tuple(size), minval=low, maxval=high, dtype=dtype)
