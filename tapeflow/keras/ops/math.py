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
    return tf().math.top_k(convert(x), k, sorted=sorted)  # TF's TopKV2 namedtuple, as Keras's TF backend


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


# -- FFTs, STFTs and complex views (sig11): Keras passes complex numbers as (real, imag) tuples ----------

def _complex_from_tuple(x: Any) -> Any:
    """Keras's ``_get_complex_tensor_from_tuple``: ``tf.complex`` of a (real, imag) pair of float tensors."""
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise ValueError(f"Input `x` should be a tuple of two tensors - real and imaginary.Received: x={x}")
    real, imag = convert(x[0]), convert(x[1])
    if real.shape != imag.shape:
        raise ValueError("Input `x` should be a tuple of two tensors - real and imaginary.Both the real and "
                         "imaginary parts should have the same shape. "
                         f"Received: x[0].shape = {real.shape}, x[1].shape = {imag.shape}")
    if not real.dtype.is_floating or not imag.dtype.is_floating:
        raise ValueError(f"At least one tensor in input `x` is not of type float.Received: x={x}.")
    return tf().complex(real, imag)


def _parts(z: Any) -> tuple:
    return tf().math.real(z), tf().math.imag(z)


@keras_op("ExtractSequences", "math", kw=())
def extract_sequences(x: Any, sequence_length: int, sequence_stride: int) -> Any:
    """``keras.ops.extract_sequences``: frames of ``sequence_length`` every ``sequence_stride`` along the last
    axis (``tf.signal.frame``)."""
    return tf().signal.frame(convert(x), frame_length=sequence_length, frame_step=sequence_stride, axis=-1,
                             pad_end=False)


@keras_op("FFT", "math")
def fft(x: Any) -> Any:
    """``keras.ops.fft``: the FFT over the last axis of a (real, imag) pair; returns a (real, imag) pair."""
    return _parts(tf().signal.fft(_complex_from_tuple(x)))


@keras_op("FFT2", "math")
def fft2(x: Any) -> Any:
    """``keras.ops.fft2``: the 2-D FFT over the last two axes of a (real, imag) pair."""
    return _parts(tf().signal.fft2d(_complex_from_tuple(x)))


@keras_op("IFFT2", "math")
def ifft2(x: Any) -> Any:
    """``keras.ops.ifft2``: the inverse 2-D FFT of a (real, imag) pair (as Keras: a conjugated ``fft2``)."""
    t = tf()
    real, imag = convert(x[0]), convert(x[1])
    h = t.cast(t.shape(real)[-2], real.dtype)
    w = t.cast(t.shape(real)[-1], real.dtype)
    fft_real, fft_imag = fft2((real, -imag))
    return fft_real / (h * w), -fft_imag / (h * w)


@keras_op("RFFT", "math")
def rfft(x: Any, fft_length: int | None = None) -> Any:
    """``keras.ops.rfft``: the real-input FFT over the last axis, as a (real, imag) pair."""
    return _parts(tf().signal.rfft(x, fft_length=None if fft_length is None else [fft_length]))


@keras_op("IRFFT", "math")
def irfft(x: Any, fft_length: int | None = None) -> Any:
    """``keras.ops.irfft``: the inverse of ``rfft`` for a (real, imag) pair."""
    return tf().signal.irfft(_complex_from_tuple(x), None if fft_length is None else [fft_length])


def _stft_window(window: Any, sequence_length: int, l_pad: int, r_pad: int, dtype: Any) -> Any:
    t = tf()
    if isinstance(window, str):
        fn = t.signal.hann_window if window == "hann" else t.signal.hamming_window
        win = fn(sequence_length, periodic=True, dtype=dtype)
    else:
        win = convert(window, dtype=dtype)
    if len(win.shape) != 1 or win.shape[-1] != sequence_length:
        raise ValueError(f"The shape of `window` must be equal to [sequence_length].Received: window shape={win.shape}")
    return t.pad(win, [[l_pad, r_pad]])


@keras_op("STFT", "math")
def stft(x: Any, sequence_length: int, sequence_stride: int, fft_length: int, window: Any = "hann",
         center: bool = True) -> Any:
    """``keras.ops.stft``: the short-time Fourier transform of a float signal, as a (real, imag) pair
    (``center`` reflect-pads ``fft_length // 2`` on both sides, as Keras)."""
    t = tf()
    if _backend.standardize_dtype(getattr(x, "dtype", "float32")) not in ("float32", "float64"):
        raise TypeError(f"Invalid input type. Expected `float32` or `float64`. Received: input type={x.dtype}")
    if fft_length < sequence_length:
        raise ValueError("`fft_length` must equal or larger than `sequence_length`. "
                         f"Received: sequence_length={sequence_length}, fft_length={fft_length}")
    if isinstance(window, str) and window not in ("hann", "hamming"):
        raise ValueError(f'If a string is passed to `window`, it must be one of `"hann"`, `"hamming"`. '
                         f"Received: window={window}")
    x = convert(x)
    if center:
        pad_width = [(0, 0)] * len(x.shape)
        pad_width[-1] = (fft_length // 2, fft_length // 2)
        x = t.pad(x, pad_width, mode="REFLECT")
    l_pad = (fft_length - sequence_length) // 2
    r_pad = fft_length - sequence_length - l_pad
    win = None
    if window is not None:
        win_array = _stft_window(window, sequence_length, l_pad, r_pad, x.dtype)
        win = lambda frame_step, dtype: win_array  # noqa: E731
    out = t.signal.stft(x, frame_length=sequence_length + l_pad + r_pad, frame_step=sequence_stride,
                        fft_length=fft_length, window_fn=win)
    return _parts(out)


@keras_op("ISTFT", "math")
def istft(x: Any, sequence_length: int, sequence_stride: int, fft_length: int, length: int | None = None,
          window: Any = "hann", center: bool = True) -> Any:
    """``keras.ops.istft``: the inverse of ``stft`` for a (real, imag) pair (``length`` crops the output)."""
    t = tf()
    z = _complex_from_tuple(x)
    dtype = t.math.real(z).dtype
    expected_output_len = fft_length + sequence_stride * (z.shape[-2] - 1)
    l_pad = (fft_length - sequence_length) // 2
    r_pad = fft_length - sequence_length - l_pad
    win = None
    if window is not None:
        win_array = _stft_window(window, sequence_length, l_pad, r_pad, dtype)
        win = t.signal.inverse_stft_window_fn(sequence_stride, lambda frame_step, dtype: win_array)
    out = t.signal.inverse_stft(z, frame_length=sequence_length + l_pad + r_pad, frame_step=sequence_stride,
                                fft_length=fft_length, window_fn=win)
    start = 0 if center is False else fft_length // 2
    if length is not None:
        end = start + length
    elif center is True:
        end = -(fft_length // 2)
    else:
        end = expected_output_len
    return out[..., start:end]


@keras_op("ViewAsComplex", "math")
def view_as_complex(x: Any) -> Any:
    """``keras.ops.view_as_complex``: ``(..., 2)`` real and imaginary parts as a complex64 ``(...)`` tensor."""
    t = tf()
    x = convert(x)
    if len(x.shape) < 1 or x.shape[-1] != 2:
        raise ValueError(f"Last dimension of input must be size 2 (real and imaginary). Received shape: {x.shape}")
    return t.complex(t.cast(x[..., 0], "float32"), t.cast(x[..., 1], "float32"))


@keras_op("ViewAsReal", "math")
def view_as_real(x: Any) -> Any:
    """``keras.ops.view_as_real``: a complex tensor as ``(..., 2)`` real and imaginary parts."""
    t = tf()
    x = convert(x)
    return t.stack((t.math.real(x), t.math.imag(x)), axis=-1)


_UNSUPPORTED = ()
