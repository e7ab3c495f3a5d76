"""``tf.dtypes``: the DType class, the dtypes and the casts."""

from __future__ import annotations

from tapeflow.framework.dtypes import (  # noqa: F401
    DType, as_dtype, bool, complex64, complex128, double, float16, float32, float64, half, int8, int16, int32,
    int64, string, uint8, uint16, uint32, uint64,
)
from tapeflow.ops.math_ops import cast, saturate_cast  # noqa: F401
from tapeflow.ops.math_ops import complex  # noqa: E402, F401, A004 - tf.dtypes.complex is tf.complex

from tapeflow.framework.missing import module_getattr as _module_getattr  # noqa: E402

# bfloat16, the quantized dtypes and the resource/variant handles are not tapeflow dtypes
__getattr__ = _module_getattr("tf.dtypes", frozenset({"QUANTIZED_DTYPES", "bfloat16", "experimental", "qint16",
                                                      "qint32", "qint8", "quint16", "quint8", "resource", "variant"}))
