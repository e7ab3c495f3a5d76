"""``keras.ops.math`` (also flat in ``keras.ops``): segment reductions, top-k, log-sum-exp and the
special functions, as Keras 3's TensorFlow backend computes them."""

from __future__ import annotations

from typing import Any

from tapeflow.keras import backend as _backend
from tapeflow.keras.ops._base import convert, keras_op, tf


def _segment(kind: str, data: Any, segment_ids: Any, num_segments: Any, sorted: bool) -> Any:  # noqa: A002
    t = tf()
    data, segment_ids = convert(data), convert(segment_ids)
    if sorted:
        if num_segments is not None:
            raise ValueError("Argument `num_segments` cannot be set when sorted is True when using the tensorflow "
                             f"backend.Received: num_segments={num_segments}, sorted={sorted}.")
        return getattr(t.math, f"segment_{kind}")(data, segment_ids)
    if num_segments is None:
        num_segments = t.shape(t.unique(segment_ids)[0])[0]
    return getattr(t.math, f"unsorted_segment_{kind}")(data, segment_ids, num_segments)


@keras_op("SegmentSum", "math", tensors=2)
def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None, sorted: bool = False) -> Any:  # noqa: A002
    """``keras.ops.segment_sum``: sums of ``data``'s rows sharing a segment id."""
    return _segment("sum", data, segment_ids, num_segments, sorted)


@keras_op("SegmentMax", "math", tensors=2)
def segment_max(data: Any, segment_ids: Any, num_segments: int | None = None, sorted: bool = False) -> Any:  # noqa: A002
    """``keras.ops.segment_max``: maxima of ``data``'s rows sharing a segment id."""
    return _segment("max", data, segment_ids, num_segments, sorted)


@keras_op("SegmentMin", "math", tensors=2)
def segment_min(data: Any, segment_ids: Any, num_segments: int | None = None, sorted: bool = False) -> Any:  # noqa: A002
    """``keras.ops.segment_min``: minima of ``data``'s rows sharing a segment id."""
    return _segment("min", data, segment_ids, num_segments, sorted)


@keras_op("SegmentProd", "math", tensors=2)
def segment_prod(data: Any, segment_ids: Any, num_segments: int | None = None, sorted: bool = False) -> Any:  # noqa: A002
    """``keras.ops.segment_prod``: products of ``data``'s rows sharing a segment id."""
    return _segment("prod", data, segment_ids, num_segments, sorted)


@keras_op("TopK", "math")
def top_k(x: Any, k: int, sorted: bool = True) -> Any:  # noqa: A002
    """``keras.ops.top_k``: (values, indices) of the ``k`` largest along the last axis."""
    return tuple(tf().math.top_k(convert(x), k, sorted=sorted))


@keras_op("InTopK", "math", tensors=2)
def in_top_k(targets: Any, predictions: Any, k: int) -> Any:
    """``keras.ops.in_top_k``: whether each target is among its row's ``k`` largest predictions."""
    return tf().math.in_top_k(convert(targets), convert(predictions), k)


@keras_op("Logsumexp", "math")
def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``keras.ops.logsumexp``: log(sum(exp(x))) over ``axis``, computed stably."""
    return tf().math.reduce_logsumexp(convert(x), axis=axis, keepdims=keepdims)


@keras_op("Rsqrt", "math")
def rsqrt(x: Any) -> Any:
    """``keras.ops.rsqrt``: 1 / sqrt(x)."""
    return tf().math.rsqrt(convert(x))


@keras_op("Erf", "math")
def erf(x: Any) -> Any:
    """``keras.ops.erf``: the error function."""
    return tf().math.erf(convert(x))


@keras_op("Erfc", "math")
def erfc(x: Any) -> Any:
    """``keras.ops.erfc``: 1 - erf(x)."""
    return tf().math.erfc(convert(x))


@keras_op("Erfinv", "math")
def erfinv(x: Any) -> Any:
    """``keras.ops.erfinv``: the inverse error function (float16 computes in float32, as Keras)."""
    x = convert(x)
    dtype = _backend.standardize_dtype(x.dtype)
    if dtype in ("float16", "bfloat16"):
        return tf().cast(tf().math.erfinv(tf().cast(x, "float32")), dtype)
    return tf().math.erfinv(x)


@keras_op("Logdet", "math")
def logdet(x: Any) -> Any:
    """``keras.ops.logdet``: log(det(x)) of Hermitian positive-definite matrices."""
    return tf().linalg.logdet(convert(x))


@keras_op("CDist", "math", tensors=2)
def cdist(x: Any, y: Any) -> Any:
    """``keras.ops.cdist``: Euclidean distances between the rows of ``x`` and of ``y``."""
    t = tf()
    x, y = convert(x), convert(y)
    if len(x.shape) < 2 or len(y.shape) < 2:
        raise ValueError("`cdist` inputs must have rank >= 2")
    if x.shape[-1] != y.shape[-1]:
        raise ValueError("Last dimension of inputs to `cdist` must match")
    diff = t.expand_dims(x, -2) - t.expand_dims(y, -3)
    return t.sqrt(t.reduce_sum(t.square(diff), axis=-1))


_UNSUPPORTED = ("extract_sequences", "fft", "fft2", "ifft2", "rfft", "irfft", "stft", "istft", "view_as_complex",
                "view_as_real")
