"""``tf.dtypes``: the DType class, the dtypes and the casts."""

from __future__ import annotations

from tapeflow.framework.dtypes import (  # noqa: F401
    DType, as_dtype, bool, complex64, complex128, double, float16, float32, float64, half, int8, int16, int32,
    int64, string, uint8, uint16, uint32, uint64,
)
from tapeflow.ops.math_ops import cast, saturate_cast  # noqa: F401
