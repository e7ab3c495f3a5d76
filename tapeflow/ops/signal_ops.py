"""``tf.signal``'s functions built from other ops, so their gradients come from those ops: fftshift,
frame / overlap_and_add, windows, STFTs, mel filterbanks, DCTs and MFCCs. Each follows TF's
tensorflow/python/ops/signal/*.py step by step (same ops in the same order, hence TF's numbers)."""

from __future__ import annotations

import math
from typing import Any
from collections.abc import Callable

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import array_ops, fft_ops, indexing_ops, math_ops

__all__ = ["fftshift", "ifftshift", "frame", "overlap_and_add", "hann_window", "hamming_window", "vorbis_window",
           "mdct", "inverse_mdct", "kaiser_window", "kaiser_bessel_derived_window", "stft",
           "inverse_stft", "inverse_stft_window_fn", "linear_to_mel_weight_matrix",
           "mfccs_from_log_mel_spectrograms", "dct", "idct"]


def _static_int(v: Any, what: str) -> int:
    """A scalar int argument (Python int, NumPy or eager tensor); a traced one is not supported."""
    if isinstance(v, Tensor):
        from tapeflow.ops import shape_ops

        if shape_ops.is_symbolic(v):
            raise NotImplementedError(f"tf.signal: a `{what}` computed inside a tf.function is not implemented "
                                      "in tapeflow: pass a Python int")
        v = v.numpy()
    arr = np.asarray(v)
    if arr.ndim != 0:
        raise ValueError(f"Shape {arr.shape} must have rank 0 ({what})")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"{what} must be an integer. Got {arr.dtype}")
    return int(arr)


def _reshape_outer(x: Tensor, k: int, middle: list, tail: int = 0) -> Tensor:
    """Reshapes ``x`` to its first ``k`` dims, then ``middle``, then its last ``tail`` dims (run-time dims where
    tracing has None)."""
    shape = x._shape_tuple()
    n = len(shape)
    outer, inner = list(shape[:k]), list(shape[n - tail:]) if tail else []
    if None not in outer and None not in inner:
        return array_ops.reshape(x, outer + list(middle) + inner)
    from tapeflow.ops import shape_ops

    sx = shape_ops.shape_of(x)
    items = [d if d is not None else array_ops.getitem(sx, i) for i, d in enumerate(outer)] + list(middle)
    items += [d if d is not None else array_ops.getitem(sx, n - tail + i) for i, d in enumerate(inner)]
    return shape_ops.dynamic_reshape(x, items, static=tuple(outer) + tuple(middle) + tuple(inner))


# ----------------------------------------------------------------------------
# fftshift / ifftshift
# ----------------------------------------------------------------------------

def _shift_axes(x: Tensor, axes: Any, sign: int) -> tuple:
    shape = x._shape_tuple()
    if axes is None:
        axes = tuple(range(len(shape)))
    elif isinstance(axes, (int, np.integer)):
        axes = (int(axes),)
    else:
        axes = tuple(int(a) for a in np.asarray(axes).reshape(-1))
    shifts = []
    for a in axes:
        d = shape[a]
        if d is None:
            raise NotImplementedError("tf.signal.fftshift over an axis of unknown size is not implemented in tapeflow")
        shifts.append(sign * (d // 2))
    return shifts, axes


def fftshift(x: Any, axes: Any = None, name: str | None = None) -> Tensor:
    """``tf.signal.fftshift``: rolls the zero-frequency component to the middle (NumPy's ``fftshift``)."""
    x = convert_to_tensor(x)
    shifts, axes = _shift_axes(x, axes, 1)
    return indexing_ops.roll(x, shifts, axes) if axes else x


def ifftshift(x: Any, axes: Any = None, name: str | None = None) -> Tensor:
    """``tf.signal.ifftshift``: the inverse of ``fftshift`` (they differ by one for odd lengths)."""
    x = convert_to_tensor(x)
    shifts, axes = _shift_axes(x, axes, -1)
    return indexing_ops.roll(x, shifts, axes) if axes else x


# ----------------------------------------------------------------------------
# frame / overlap_and_add
# ----------------------------------------------------------------------------

def frame(signal: Any, frame_length: Any, frame_step: Any, pad_end: bool = False, pad_value: Any = 0,
          axis: int = -1, name: str | None = None) -> Tensor:
    """``tf.signal.frame``: frames of ``frame_length`` samples every ``frame_step`` samples along ``axis``,
    which becomes two axes ``[num_frames, frame_length]``. With ``pad_end`` the end is padded with
    ``pad_value`` so that every sample is in a frame (``num_frames = ceil(length / frame_step)``)."""
    x = convert_to_tensor(signal)
    shape = x._shape_tuple()
    if shape is None or len(shape) < 1:
        raise ValueError(f"Shape {tuple(shape or ())} must have rank at least 1")
    length_ = _static_int(frame_length, "frame_length")
    step = _static_int(frame_step, "frame_step")
    ax = _static_int(axis, "axis")
    if not -len(shape) <= ax < len(shape):
        raise InvalidArgumentError(None, None, f"axis {ax} is out of range for a signal of rank {len(shape)} "
                                   "[Op:frame]")
    ax %= len(shape)
    n = shape[ax]
    if n is None:
        raise NotImplementedError("tf.signal.frame along an axis of unknown size (while tracing) is not implemented "
                                  "in tapeflow: give the tf.function a static signal length")
    if pad_end:
        num_frames = -(-n // step)
        pad_samples = max(0, length_ + step * (num_frames - 1) - n)
        if pad_samples:
            paddings = [[0, 0]] * len(shape)
            paddings[ax] = [0, pad_samples]
            x = indexing_ops.pad(x, paddings, constant_values=convert_to_tensor(pad_value, dtype=x.dtype))
    else:
        num_frames = max(0, 1 + (n - length_) // step)
    n = x._shape_tuple()[ax]
    # TF's way: cut the signal into subframes of gcd(frame_length, frame_step) samples and gather those
    # (the reshapes around the gather also make the gradient dense, as TF's)
    sub = math.gcd(length_, step)
    per_frame, per_hop, num_sub = length_ // sub, step // sub, n // sub
    tail = len(shape) - ax - 1
    if num_sub * sub != n:
        x = array_ops.getitem(x, (slice(None),) * ax + (slice(0, num_sub * sub),))
    subframes = _reshape_outer(x, ax, [num_sub, sub], tail)
    selector = (np.arange(num_frames)[:, None] * per_hop + np.arange(per_frame)[None, :]).astype(np.int32)
    frames = array_ops.gather(subframes, selector, axis=ax)
    return _reshape_outer(frames, ax, [num_frames, length_], tail)


def overlap_and_add(signal: Any, frame_step: Any, name: str | None = None) -> Tensor:
    """``tf.signal.overlap_and_add``: sums frames ``[..., frames, frame_length]`` placed every
    ``frame_step`` samples, giving ``[..., frame_length + frame_step * (frames - 1)]``."""
    x = convert_to_tensor(signal)
    shape = x._shape_tuple()
    if shape is None or len(shape) < 2:
        raise ValueError(f"Shape {tuple(shape or ())} must have rank at least 2")
    step = _static_int(frame_step, "frame_step")
    frames, frame_length = shape[-2], shape[-1]
    if frames is None or frame_length is None:
        raise NotImplementedError("tf.signal.overlap_and_add of frames of unknown size (while tracing) is not "
                                  "implemented in tapeflow")
    k = len(shape) - 2
    output_length = frame_length + step * (frames - 1)
    if step == frame_length:  # TF's fast path
        return _reshape_outer(x, k, [output_length])
    segments = -(-frame_length // step)
    x = indexing_ops.pad(x, [[0, 0]] * k + [[0, segments], [0, segments * step - frame_length]])
    x = _reshape_outer(x, k, [frames + segments, segments, step])
    x = array_ops.transpose(x, list(range(k)) + [k + 1, k, k + 2])
    x = _reshape_outer(x, k, [(frames + segments) * segments, step])
    x = array_ops.getitem(x, (Ellipsis, slice(None, (frames + segments - 1) * segments), slice(None)))
    x = _reshape_outer(x, k, [segments, frames + segments - 1, step])
    x = math_ops.reduce_sum(x, -3)
    x = _reshape_outer(x, k, [(frames + segments - 1) * step])
    return array_ops.getitem(x, (Ellipsis, slice(None, output_length)))


# ----------------------------------------------------------------------------
# Windows
# ----------------------------------------------------------------------------

def _raised_cosine_window(window_length: Any, periodic: Any, dtype: Any, a: float, b: float) -> Tensor:
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype!r}")
    n_ = _static_int(window_length, "window_length")
    if n_ == 1:
        return array_ops.ones([1], dtype=dtype)
    periodic = bool(periodic.numpy() if isinstance(periodic, Tensor) else periodic)
    even = 1 - n_ % 2
    n = convert_to_tensor(float(n_ + int(periodic) * even - 1), dtype=dtype)
    count = math_ops.cast(array_ops.range_(n_), dtype)
    cos_arg = math_ops.divide_(math_ops.multiply(convert_to_tensor(2 * np.pi, dtype=dtype), count), n)
    return math_ops.subtract(a, math_ops.multiply(b, math_ops.cos(cos_arg)))


def hann_window(window_length: Any, periodic: Any = True, dtype: Any = dtypes.float32,
                name: str | None = None) -> Tensor:
    """``tf.signal.hann_window``: ``0.5 - 0.5 cos(2 pi n / N)``; ``periodic`` (the default, for spectral
    analysis) takes N = window_length, otherwise window_length - 1."""
    return _raised_cosine_window(window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(window_length: Any, periodic: Any = True, dtype: Any = dtypes.float32,
                   name: str | None = None) -> Tensor:
    """``tf.signal.hamming_window``: ``0.54 - 0.46 cos(2 pi n / N)``, N as in ``hann_window``."""
    return _raised_cosine_window(window_length, periodic, dtype, 0.54, 0.46)


def vorbis_window(window_length: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """``tf.signal.vorbis_window``: ``sin(pi / 2 * sin(pi (n + 1/2) / N)^2)``, the power-complementary window
    of ``mdct``."""
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype!r}")
    n = _static_int(window_length, "window_length")
    arg = math_ops.cast(array_ops.range_(n), dtype)
    inner = math_ops.sin(math_ops.multiply(math_ops.divide_(np.pi, convert_to_tensor(float(n), dtype=dtype)),
                                           math_ops.add(arg, 0.5)))
    return math_ops.sin(math_ops.multiply(np.pi / 2.0, math_ops.pow(inner, 2.0)))


def kaiser_window(window_length: Any, beta: Any = 12.0, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """``tf.signal.kaiser_window``: ``I0(beta sqrt(1 - (2n / (N - 1) - 1)^2)) / I0(beta)``. Computed in float64
    with NumPy's ``i0`` and cast (TF computes in ``dtype`` with Eigen's ``bessel_i0e``: the last bits can differ);
    a constant, so not differentiable w.r.t. ``beta``."""
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype!r}")
    n = _static_int(window_length, "window_length")
    if n == 1:
        return array_ops.ones([1], dtype=dtype)
    b = float(beta.numpy() if isinstance(beta, Tensor) else beta)
    half = np.float32(n - 1.0) / np.float32(2.0)
    arg = np.arange(-half, half + np.float32(0.1), dtype=np.float32).astype(np.float64)  # TF's float32 range
    num = b * np.sqrt(np.maximum(0.0, 1.0 - np.square(arg / float(half))))
    with np.errstate(over="ignore", invalid="ignore"):
        window = np.i0(num) / np.i0(b)
    return convert_to_tensor(window.astype(dtype._np))


def kaiser_bessel_derived_window(window_length: Any, beta: Any = 12.0, dtype: Any = dtypes.float32,
                                 name: str | None = None) -> Tensor:
    """``tf.signal.kaiser_bessel_derived_window``: the square root of the normalised cumulative sum of a
    ``window_length // 2 + 1`` Kaiser window, mirrored (for ``mdct``)."""
    n = _static_int(window_length, "window_length")
    kaiserw = kaiser_window(n // 2 + 1, beta, dtype=dtype)
    csum = math_ops.cumsum(kaiserw)
    halfw = math_ops.sqrt(math_ops.divide_(csum[:-1], csum[-1]))
    return array_ops.concat((halfw, halfw[::-1]), axis=0)


# ----------------------------------------------------------------------------
# STFT
# ----------------------------------------------------------------------------

def _enclosing_power_of_two(value: int) -> int:
    return int(2 ** np.ceil(np.log(value) / np.log(2.0)))


def stft(signals: Any, frame_length: Any, frame_step: Any, fft_length: Any = None,
         window_fn: Callable | None = hann_window, pad_end: bool = False, name: str | None = None) -> Tensor:
    """``tf.signal.stft``: ``rfft(frame(signals) * window, [fft_length])`` over the last axis, giving
    ``[..., frames, fft_length // 2 + 1]`` (complex64 of float32). ``fft_length`` defaults to the
    smallest power of 2 enclosing ``frame_length``."""
    x = convert_to_tensor(signals)
    if x._shape_tuple() is None or len(x._shape_tuple()) < 1:
        raise ValueError(f"Shape {tuple(x._shape_tuple() or ())} must have rank at least 1")
    frame_length = _static_int(frame_length, "frame_length")
    frame_step = _static_int(frame_step, "frame_step")
    fft_length = _enclosing_power_of_two(frame_length) if fft_length is None else _static_int(fft_length,
                                                                                              "fft_length")
    framed = frame(x, frame_length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        framed = math_ops.multiply(framed, window_fn(frame_length, dtype=framed.dtype))
    return fft_ops.rfft(framed, [fft_length])


def inverse_stft_window_fn(frame_step: Any, forward_window_fn: Callable = hann_window,
                           name: str | None = None) -> Callable:
    """``tf.signal.inverse_stft_window_fn``: the window that makes ``inverse_stft`` invert ``stft`` made
    with ``forward_window_fn`` (Griffin and Lim's equation 7)."""

    def inverse_stft_window_fn_inner(frame_length: Any, dtype: Any) -> Tensor:
        step = _static_int(frame_step, "frame_step")
        length = _static_int(frame_length, "frame_length")
        forward_window = forward_window_fn(length, dtype=dtype)
        denom = math_ops.square(forward_window)
        overlaps = -(-length // step)
        denom = indexing_ops.pad(denom, [(0, overlaps * step - length)])
        denom = array_ops.reshape(denom, [overlaps, step])
        denom = math_ops.reduce_sum(denom, 0, keepdims=True)
        denom = array_ops.tile(denom, [overlaps, 1])
        denom = array_ops.reshape(denom, [overlaps * step])
        return math_ops.divide_(forward_window, denom[:length])

    return inverse_stft_window_fn_inner


def inverse_stft(stfts: Any, frame_length: Any, frame_step: Any, fft_length: Any = None,
                 window_fn: Callable | None = hann_window, name: str | None = None) -> Tensor:
    """``tf.signal.inverse_stft``: ``overlap_and_add(irfft(stfts) * window)``; pass
    ``window_fn=tf.signal.inverse_stft_window_fn(frame_step)`` to invert ``stft``."""
    z = convert_to_tensor(stfts)
    if z._shape_tuple() is None or len(z._shape_tuple()) < 2:
        raise ValueError(f"Shape {tuple(z._shape_tuple() or ())} must have rank at least 2")
    frame_length = _static_int(frame_length, "frame_length")
    frame_step = _static_int(frame_step, "frame_step")
    fft_length = _enclosing_power_of_two(frame_length) if fft_length is None else _static_int(fft_length,
                                                                                              "fft_length")
    real_frames = fft_ops.irfft(z, [fft_length])
    inner = real_frames._shape_tuple()[-1]
    if inner > frame_length:
        real_frames = array_ops.getitem(real_frames, (Ellipsis, slice(None, frame_length)))
    elif inner < frame_length:
        rank = len(real_frames._shape_tuple())
        real_frames = indexing_ops.pad(real_frames, [[0, 0]] * (rank - 1) + [[0, frame_length - inner]])
    if window_fn is not None:
        real_frames = math_ops.multiply(real_frames, window_fn(frame_length, dtype=z.dtype.real_dtype))
    return overlap_and_add(real_frames, frame_step)


def mdct(signals: Any, frame_length: Any, window_fn: Callable | None = vorbis_window, pad_end: bool = False,
         norm: Any = None, name: str | None = None) -> Tensor:
    """``tf.signal.mdct``: the modified DCT of frames of ``frame_length`` (a multiple of 4) every
    ``frame_length // 2`` samples: ``[..., frames, frame_length // 2]``."""
    x = convert_to_tensor(signals)
    if x._shape_tuple() is None or len(x._shape_tuple()) < 1:
        raise ValueError(f"Shape {tuple(x._shape_tuple() or ())} must have rank at least 1")
    length = _static_int(frame_length, "frame_length")
    if length % 4 != 0:
        raise ValueError("The frame length must be a multiple of 4.")
    framed = frame(x, length, length // 2, pad_end=pad_end)
    if window_fn is not None:
        framed = math_ops.multiply(framed, window_fn(length, dtype=framed.dtype))
    else:
        framed = math_ops.multiply(framed, 1.0 / np.sqrt(2))
    q = array_ops.split(framed, 4, axis=-1)
    first = math_ops.subtract(math_ops.negative(indexing_ops.reverse(q[2], [-1])), q[3])
    second = math_ops.subtract(q[0], indexing_ops.reverse(q[1], [-1]))
    return dct(array_ops.concat((first, second), axis=-1), type=4, norm=norm)


def inverse_mdct(mdcts: Any, window_fn: Callable | None = vorbis_window, norm: Any = None,
                 name: str | None = None) -> Tensor:
    """``tf.signal.inverse_mdct``: the signal whose ``mdct`` is ``mdcts`` (with the same window and norm)."""
    z = convert_to_tensor(mdcts)
    if z._shape_tuple() is None or len(z._shape_tuple()) < 2:
        raise ValueError(f"Shape {tuple(z._shape_tuple() or ())} must have rank at least 2")
    half_len = z._shape_tuple()[-1]
    if norm is None:
        result = math_ops.multiply(math_ops.divide_(0.5, convert_to_tensor(float(half_len), dtype=z.dtype)),
                                   dct(z, type=4))
    elif norm == "ortho":
        result = dct(z, type=4, norm="ortho")
    else:
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")
    a, b = array_ops.split(result, 2, axis=-1)
    real_frames = array_ops.concat((b, math_ops.negative(indexing_ops.reverse(b, [-1])),
                                    math_ops.negative(indexing_ops.reverse(a, [-1])), math_ops.negative(a)), axis=-1)
    if window_fn is not None:
        real_frames = math_ops.multiply(real_frames, window_fn(2 * half_len, dtype=z.dtype))
    else:
        real_frames = math_ops.multiply(real_frames, 1.0 / np.sqrt(2))
    return overlap_and_add(real_frames, half_len)


# ----------------------------------------------------------------------------
# Mel filterbank, DCT, MFCCs
# ----------------------------------------------------------------------------

_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def _hertz_to_mel(frequencies_hertz: Tensor) -> Tensor:
    return math_ops.multiply(_MEL_HIGH_FREQUENCY_Q, math_ops.log(
        math_ops.add(1.0, math_ops.divide_(frequencies_hertz, _MEL_BREAK_FREQUENCY_HERTZ))))


def linear_to_mel_weight_matrix(num_mel_bins: int = 20, num_spectrogram_bins: int = 129, sample_rate: Any = 8000,
                                lower_edge_hertz: float = 125.0, upper_edge_hertz: float = 3800.0,
                                dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """``tf.signal.linear_to_mel_weight_matrix``: a ``[num_spectrogram_bins, num_mel_bins]`` matrix of
    triangular mel filters (HTK's mel scale), for ``tf.tensordot(spectrogram, matrix, 1)``."""
    dtype = dtypes.as_dtype(dtype)
    if isinstance(sample_rate, Tensor):
        sample_rate = sample_rate.numpy()
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if lower_edge_hertz < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}")
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError(f"lower_edge_hertz {lower_edge_hertz:.1f} >= upper_edge_hertz {upper_edge_hertz:.1f}")
    if sample_rate <= 0.0:
        raise ValueError(f"sample_rate must be positive. Got: {sample_rate}")
    if upper_edge_hertz > sample_rate / 2:
        raise ValueError("upper_edge_hertz must not be larger than the Nyquist frequency (sample_rate / 2). "
                         f"Got {upper_edge_hertz} for sample_rate: {sample_rate}")
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Got: {dtype!r}")
    sample_rate = math_ops.cast(convert_to_tensor(sample_rate), dtype)
    lower = convert_to_tensor(lower_edge_hertz, dtype=dtype)
    upper = convert_to_tensor(upper_edge_hertz, dtype=dtype)
    zero = convert_to_tensor(0.0, dtype=dtype)
    nyquist_hertz = math_ops.divide_(sample_rate, 2.0)
    linear_frequencies = array_ops.linspace(zero, nyquist_hertz, num_spectrogram_bins)[1:]
    spectrogram_bins_mel = array_ops.expand_dims(_hertz_to_mel(linear_frequencies), 1)
    band_edges_mel = frame(array_ops.linspace(_hertz_to_mel(lower), _hertz_to_mel(upper), num_mel_bins + 2),
                           frame_length=3, frame_step=1)
    lower_edge_mel, center_mel, upper_edge_mel = (
        array_ops.reshape(p, [1, num_mel_bins]) for p in array_ops.split(band_edges_mel, 3, axis=1))
    lower_slopes = math_ops.divide_(math_ops.subtract(spectrogram_bins_mel, lower_edge_mel),
                                    math_ops.subtract(center_mel, lower_edge_mel))
    upper_slopes = math_ops.divide_(math_ops.subtract(upper_edge_mel, spectrogram_bins_mel),
                                    math_ops.subtract(upper_edge_mel, center_mel))
    mel_weights_matrix = math_ops.maximum(zero, math_ops.minimum(lower_slopes, upper_slopes))
    return indexing_ops.pad(mel_weights_matrix, [[1, 0], [0, 0]])


def _validate_dct_arguments(x: Tensor, dct_type: int, n: Any, axis: int, norm: Any) -> None:
    if axis != -1:
        raise NotImplementedError(f"axis must be -1. Got: {axis}")
    if n is not None and n < 1:
        raise ValueError("n should be a positive integer or None")
    if dct_type not in (1, 2, 3, 4):
        raise ValueError("Types I, II, III and IV (I)DCT are supported.")
    if dct_type == 1:
        if norm == "ortho":
            raise ValueError("Normalization is not supported for the Type-I DCT.")
        if x._shape_tuple()[-1] is not None and x._shape_tuple()[-1] < 2:
            raise ValueError("Type-I DCT requires the dimension to be greater than one.")
    if norm not in (None, "ortho"):
        raise ValueError(f"Unknown normalization. Expected None or 'ortho', got: {norm}")


def _ortho_weights(first: Tensor, rest: Tensor, n: int) -> Tensor:
    return indexing_ops.pad(array_ops.expand_dims(first, 0), [[0, n - 1]], constant_values=rest)


def _dct_internal(x: Tensor, dct_type: int, n: Any, norm: Any) -> Tensor:
    zero = convert_to_tensor(0.0, dtype=x.dtype)
    seq_len = x._shape_tuple()[-1]
    if seq_len is None:
        raise NotImplementedError("tf.signal.dct of an inner dim of unknown size (while tracing) is not "
                                  "implemented in tapeflow")
    if n is not None:
        if n <= seq_len:
            x = array_ops.getitem(x, (Ellipsis, slice(0, n)))
        else:
            x = indexing_ops.pad(x, [[0, 0]] * (len(x._shape_tuple()) - 1) + [[0, n - seq_len]])
    axis_dim = x._shape_tuple()[-1]
    axis_dim_float = convert_to_tensor(float(axis_dim), dtype=x.dtype)
    if dct_type == 1:
        dct1_input = array_ops.concat([x, array_ops.getitem(x, (Ellipsis, slice(-2, 0, -1)))], axis=-1)
        return math_ops.real(fft_ops.rfft(dct1_input))
    if dct_type == 2:
        arg = math_ops.divide_(math_ops.multiply(math_ops.multiply(
            math_ops.negative(array_ops.range_(axis_dim_float)), math.pi), 0.5), axis_dim_float)
        scale = math_ops.multiply(2.0, math_ops.exp(math_ops.complex(zero, arg)))
        spectrum = array_ops.getitem(fft_ops.rfft(x, fft_length=[2 * axis_dim]), (Ellipsis, slice(None, axis_dim)))
        dct2 = math_ops.real(math_ops.multiply(spectrum, scale))
        if norm == "ortho":
            n1 = math_ops.multiply(0.5, math_ops.rsqrt(axis_dim_float))
            n2 = math_ops.multiply(n1, math.sqrt(2.0))
            dct2 = math_ops.multiply(dct2, _ortho_weights(n1, n2, axis_dim))
        return dct2
    if dct_type == 3:
        if norm == "ortho":
            n1 = math_ops.sqrt(axis_dim_float)
            n2 = math_ops.multiply(n1, math.sqrt(0.5))
            x = math_ops.multiply(x, _ortho_weights(n1, n2, axis_dim))
        else:
            x = math_ops.multiply(x, axis_dim_float)
        arg = math_ops.divide_(math_ops.multiply(math_ops.multiply(array_ops.range_(axis_dim_float), math.pi), 0.5),
                               axis_dim_float)
        scale = math_ops.multiply(2.0, math_ops.exp(math_ops.complex(zero, arg)))
        spectrum = math_ops.multiply(scale, math_ops.complex(x, zero))
        return array_ops.getitem(math_ops.real(fft_ops.irfft(spectrum, fft_length=[2 * axis_dim])),
                                 (Ellipsis, slice(None, axis_dim)))
    dct2 = _dct_internal(x, 2, 2 * axis_dim, None)
    dct4 = array_ops.getitem(dct2, (Ellipsis, slice(1, None, 2)))
    if norm == "ortho":
        dct4 = math_ops.multiply(dct4, math_ops.multiply(math.sqrt(0.5), math_ops.rsqrt(axis_dim_float)))
    return dct4


def dct(input: Any, type: int = 2, n: Any = None, axis: int = -1, norm: Any = None,  # noqa: A002 - TF's names
        name: str | None = None) -> Tensor:
    """``tf.signal.dct``: the discrete cosine transform of types I-IV over the last axis (via ``rfft``, as
    TF); ``norm="ortho"`` for an orthonormal type II/III/IV; ``n`` crops or zero-pads first."""
    x = convert_to_tensor(input)
    _validate_dct_arguments(x, type, n, axis, norm)
    return _dct_internal(x, type, n, norm)


def idct(input: Any, type: int = 2, n: Any = None, axis: int = -1, norm: Any = None,  # noqa: A002 - TF's names
         name: str | None = None) -> Tensor:
    """``tf.signal.idct``: the inverse of ``dct`` of the same type (type II <-> III); exact with
    ``norm="ortho"``, scaled by ``2 * N`` without it (as TF)."""
    x = convert_to_tensor(input)
    _validate_dct_arguments(x, type, n, axis, norm)
    return _dct_internal(x, {1: 1, 2: 3, 3: 2, 4: 4}[type], n, norm)


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms: Any, name: str | None = None) -> Tensor:
    """``tf.signal.mfccs_from_log_mel_spectrograms``: the type II DCT of log mel spectrograms, scaled by
    ``1 / sqrt(2 * num_mel_bins)`` (HTK's MFCCs, as TF)."""
    x = convert_to_tensor(log_mel_spectrograms)
    num_mel_bins = x._shape_tuple()[-1] if x._shape_tuple() else None
    if num_mel_bins == 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {x!r}")
    if num_mel_bins is None:
        raise NotImplementedError("tf.signal.mfccs_from_log_mel_spectrograms with an unknown number of mel bins "
                                  "(while tracing) is not implemented in tapeflow")
    dct2 = dct(x, type=2)
    return math_ops.multiply(dct2, math_ops.rsqrt(math_ops.multiply(
        convert_to_tensor(float(num_mel_bins), dtype=dct2.dtype), 2.0)))
