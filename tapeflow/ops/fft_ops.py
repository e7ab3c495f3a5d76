"""Fast Fourier transforms (``tf.signal.fft`` ... ``irfft3d``): kernel, shape rule and gradient of each op.

The ops transform the innermost 1, 2 or 3 axes, as TF's FFT/IFFT/RFFT/IRFFT(2D, 3D) ops, with NumPy's
pocketfft in the input's precision (float32 -> complex64, float64 -> complex128). ``fft_length`` is an attr
(static ints): the public functions pad (tf.pad) or crop (tf.slice) the input first, as TF's Python
wrappers do, so each op sees exactly the sizes it transforms and the Pad/Slice gradients do the rest.

Gradients (TF's convention: dL/dre + i dL/dim):
* FFT: ``ifft(g) * N``, IFFT: ``fft(g) / N`` (N: the number of points transformed);
* RFFT: ``N * irfft(g * m)``, m = 1 at the DC and Nyquist bins and 1/2 elsewhere (the bins Hermitian
  symmetry dropped are counted once instead of twice: TF's extra terms, in one product);
* IRFFT: ``rfft(g) * c / N``, c = 1 at the DC and Nyquist bins and 2 elsewhere (as TF).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute1, execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import array_ops, math_ops
from tapeflow.ops.registry import defgrad, defop

__all__ = ["fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "rfft", "irfft", "rfft2d", "irfft2d", "rfft3d",
           "irfft3d", "fftnd", "ifftnd", "rfftnd", "irfftnd"]

_RANK_NAME = {1: "", 2: "2D", 3: "3D"}
_COMPLEX_OF = {np.dtype(np.float32): dtypes.complex64, np.dtype(np.float64): dtypes.complex128}


def _err(op: str, msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"{msg} [Op:{op}]")


def _inner_size(shape: tuple, rank: int) -> Any:
    """The number of points in the innermost ``rank`` dims (None if one is unknown)."""
    n = 1
    for d in shape[len(shape) - rank:]:
        if d is None:
            return None
        n *= d
    return n


# ----------------------------------------------------------------------------
# FFT / IFFT (complex -> complex)
# ----------------------------------------------------------------------------

def _fft_kernel(rank: int, inverse: bool):
    axes = tuple(range(-rank, 0))
    fn = np.fft.ifftn if inverse else np.fft.fftn

    def kernel(x):
        if x.size == 0:
            return x.copy()
        return fn(x, axes=axes).astype(x.dtype, copy=False)

    return kernel


def _fft_shape(specs, **attrs):
    return [specs[0]]


FFT_OPS = {}
for _rank in (1, 2, 3):
    for _inverse in (False, True):
        _name = ("IFFT" if _inverse else "FFT") + _RANK_NAME[_rank]
        FFT_OPS[_name] = defop(_name, _fft_kernel(_rank, _inverse), shape=_fft_shape)


def _points(g: Tensor, rank: int) -> Tensor:
    """N of a gradient ``g`` as a scalar of g's real dtype (from the run-time shape if a dim is unknown)."""
    real = g.dtype.real_dtype
    n = _inner_size(g._shape_tuple(), rank) if g._shape_tuple() is not None else None
    if n is not None:
        return convert_to_tensor(float(n), dtype=real)
    from tapeflow.ops import shape_ops

    return math_ops.cast(math_ops.reduce_prod(shape_ops.shape_of(g)[-rank:]), real)


def _scale(g: Tensor, s: Tensor) -> Tensor:
    return math_ops.multiply(g, math_ops.complex(s, math_ops.zeros_like_(s)))


def _fft_grad(rank: int, inverse: bool):
    def rule(op, g):
        if inverse:  # IFFT: fft(g) / N
            return _scale(_run_fft(g, rank, False), math_ops.reciprocal(_points(g, rank)))
        return _scale(_run_fft(g, rank, True), _points(g, rank))

    return rule


for _rank in (1, 2, 3):
    for _inverse in (False, True):
        defgrad(("IFFT" if _inverse else "FFT") + _RANK_NAME[_rank], inputs=False)(_fft_grad(_rank, _inverse))


def _run_fft(x: Tensor, rank: int, inverse: bool) -> Tensor:
    return execute1(FFT_OPS[("IFFT" if inverse else "FFT") + _RANK_NAME[rank]], x)


def _fft_public(rank: int, inverse: bool):
    op_name = ("IFFT" if inverse else "FFT") + _RANK_NAME[rank]

    def fn(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
        x = convert_to_tensor(input, dtype_hint=dtypes.complex64)
        if not x.dtype.is_complex:
            raise _err(op_name, f"Value for attr 'Tcomplex' of {_tf_type(x)} is not in the list of allowed values: "
                       "complex64, complex128")
        shape = x._shape_tuple()
        if shape is not None and len(shape) < rank:
            raise _err(op_name, f"Input must have rank of at least {rank} but got: {list(shape)}")
        return _run_fft(x, rank, inverse)

    fn.__name__ = fn.__qualname__ = op_name.lower()
    what = "inverse " if inverse else ""
    axes = {1: "inner-most dimension", 2: "inner-most 2 dimensions", 3: "inner-most 3 dimensions"}[rank]
    fn.__doc__ = f"``tf.signal.{fn.__name__}``: the {what}discrete Fourier transform over the {axes} (complex)."
    return fn


def _tf_type(x: Tensor) -> str:
    return dtypes.type_string(x.dtype)


fft = _fft_public(1, False)
ifft = _fft_public(1, True)
fft2d = _fft_public(2, False)
ifft2d = _fft_public(2, True)
fft3d = _fft_public(3, False)
ifft3d = _fft_public(3, True)


# ----------------------------------------------------------------------------
# RFFT / IRFFT (real <-> the non-negative frequency half)
# ----------------------------------------------------------------------------

def _rfft_kernel(rank: int):
    axes = tuple(range(-rank, 0))

    def kernel(x, fft_length, Tcomplex):
        if x.size == 0 or 0 in fft_length:
            return np.zeros(x.shape[:-1] + (0 if x.size == 0 else fft_length[-1] // 2 + 1,), Tcomplex)
        return np.fft.rfftn(x, s=fft_length, axes=axes).astype(Tcomplex, copy=False)

    return kernel


def _irfft_kernel(rank: int):
    axes = tuple(range(-rank, 0))

    def kernel(x, fft_length, Treal):
        if x.size == 0 or 0 in fft_length:
            return np.zeros(x.shape[:len(x.shape) - rank] + tuple(fft_length), Treal)
        return np.fft.irfftn(x, s=fft_length, axes=axes).astype(Treal, copy=False)

    return kernel


def _rfft_shape(rank: int):
    def rule(specs, fft_length, Tcomplex):
        shape = specs[0][0]
        if shape is None:
            return [(None, Tcomplex)]
        return [(tuple(shape[:len(shape) - rank]) + tuple(fft_length[:-1]) + (fft_length[-1] // 2 + 1,), Tcomplex)]

    return rule


def _irfft_shape(rank: int):
    def rule(specs, fft_length, Treal):
        shape = specs[0][0]
        if shape is None:
            return [(None, Treal)]
        return [(tuple(shape[:len(shape) - rank]) + tuple(fft_length), Treal)]

    return rule


RFFT_OPS, IRFFT_OPS = {}, {}
for _rank in (1, 2, 3):
    RFFT_OPS[_rank] = defop("RFFT" + _RANK_NAME[_rank], _rfft_kernel(_rank), shape=_rfft_shape(_rank))
    IRFFT_OPS[_rank] = defop("IRFFT" + _RANK_NAME[_rank], _irfft_kernel(_rank), shape=_irfft_shape(_rank))


def _bin_weights(n: int, low: float, mid: float, dtype: dtypes.DType) -> Tensor:
    """Weights of the n // 2 + 1 bins of a length-n real transform: ``low`` at DC (and Nyquist if n is
    even), ``mid`` elsewhere."""
    w = np.full(n // 2 + 1, mid)
    w[0] = low
    if n % 2 == 0:
        w[-1] = low
    return convert_to_tensor(w.astype(dtype._np))


def _rfft_grad(rank: int):
    def rule(op, g):
        fft_length = op.get_attr("fft_length")
        n = int(np.prod(fft_length))
        m = _bin_weights(fft_length[-1], 1.0, 0.5, g.dtype)
        x = _run_irfft(math_ops.multiply(g, m), rank, fft_length)
        return math_ops.multiply(x, float(n))

    return rule


def _irfft_grad(rank: int):
    def rule(op, g):
        fft_length = op.get_attr("fft_length")
        n = int(np.prod(fft_length))
        c = _bin_weights(fft_length[-1], 1.0 / n, 2.0 / n, _COMPLEX_OF[g._value.dtype])
        return math_ops.multiply(_run_rfft(g, rank, fft_length), c)

    return rule


for _rank in (1, 2, 3):
    defgrad("RFFT" + _RANK_NAME[_rank], inputs=False)(_rfft_grad(_rank))
    defgrad("IRFFT" + _RANK_NAME[_rank], inputs=False)(_irfft_grad(_rank))


def _run_rfft(x: Tensor, rank: int, fft_length: tuple) -> Tensor:
    return execute(RFFT_OPS[rank], (x,), {"fft_length": tuple(fft_length), "Tcomplex": _COMPLEX_OF[x._value.dtype]._np})


def _run_irfft(x: Tensor, rank: int, fft_length: tuple) -> Tensor:
    return execute(IRFFT_OPS[rank], (x,), {"fft_length": tuple(fft_length), "Treal": x.dtype.real_dtype._np})


def _fft_length(fft_length: Any, rank: int, op_name: str) -> tuple | None:
    if fft_length is None:
        return None
    if isinstance(fft_length, Tensor):
        from tapeflow.ops import shape_ops

        if shape_ops.is_symbolic(fft_length):
            raise NotImplementedError(f"tf.signal.{op_name.lower()} with an fft_length computed inside a "
                                      "tf.function is not implemented in tapeflow: pass Python ints")
        fft_length = fft_length.numpy()
    arr = np.asarray(fft_length)
    if arr.ndim == 0:
        raise TypeError(f"'{type(arr.item()).__name__}' object is not iterable")
    if arr.shape != (rank,):
        raise _err(op_name, f"fft_length must have shape [{rank}]")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"fft_length must be integers, got {arr.dtype}")
    if (arr < 0).any():
        raise _err(op_name, f"fft_length must be non-negative, got {arr.tolist()}")
    return tuple(int(v) for v in arr)


def _fit_inner(x: Tensor, sizes: tuple, op_name: str) -> Tensor:
    """Pads (zeros at the end) or crops the innermost ``len(sizes)`` dims of ``x`` to ``sizes``."""
    shape = x._shape_tuple()
    rank = len(sizes)
    inner = shape[len(shape) - rank:]
    if None in inner:
        raise NotImplementedError(
            f"tf.signal.{op_name.lower()} of an input whose inner dims are unknown while tracing ({list(shape)}) "
            "is not implemented in tapeflow: give the tf.function an input_signature with static inner dims")
    if 0 in shape:  # TF skips padding empty tensors
        return x
    if any(d > s for d, s in zip(inner, sizes)):
        begin = [0] * len(shape)
        size = [-1] * (len(shape) - rank) + [min(d, s) for d, s in zip(inner, sizes)]
        x = array_ops.slice_(x, begin, size)
    if any(d < s for d, s in zip(inner, sizes)):
        from tapeflow.ops.indexing_ops import pad

        x = pad(x, [[0, 0]] * (len(shape) - rank) + [[0, max(s - d, 0)] for d, s in zip(inner, sizes)])
    return x


def _rfft_public(rank: int):
    op_name = "RFFT" + _RANK_NAME[rank]

    def fn(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
        x = convert_to_tensor(input_tensor, dtype_hint=dtypes.float32)
        if x._value.dtype not in _COMPLEX_OF:
            raise ValueError(f"RFFT requires tf.float32 or tf.float64 inputs, got: {x!r}")
        shape = x._shape_tuple()
        if shape is not None and len(shape) < rank:
            raise ValueError(f"Shape {_shape_str(shape)} must have rank at least {rank}")
        n = _fft_length(fft_length, rank, op_name)
        if n is None:
            n = tuple(shape[len(shape) - rank:])
            if None in n:
                raise NotImplementedError(
                    f"tf.signal.{op_name.lower()} of an input whose inner dims are unknown while tracing "
                    f"({list(shape)}) is not implemented in tapeflow: pass fft_length")
        return _run_rfft(_fit_inner(x, n, op_name), rank, n)

    fn.__name__ = fn.__qualname__ = op_name.lower()
    fn.__doc__ = (f"``tf.signal.{fn.__name__}``: the real-input FFT over the inner {rank} dim(s). ``fft_length`` pads "
                  "(with zeros) or crops each; the innermost output dim is ``fft_length[-1] // 2 + 1``; float32 "
                  "gives complex64, float64 complex128.")
    return fn


def _irfft_public(rank: int):
    op_name = "IRFFT" + _RANK_NAME[rank]

    def fn(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
        x = convert_to_tensor(input_tensor, dtype_hint=dtypes.complex64)
        shape = x._shape_tuple()
        if shape is not None and len(shape) < rank:
            raise ValueError(f"Shape {_shape_str(shape)} must have rank at least {rank}")
        if not x.dtype.is_complex:
            raise ValueError(f"IRFFT requires tf.complex64 or tf.complex128 inputs, got: {x!r}")
        n = _fft_length(fft_length, rank, op_name)
        if n is None:
            n = tuple(shape[len(shape) - rank:])
            if None in n:
                raise NotImplementedError(
                    f"tf.signal.{op_name.lower()} of an input whose inner dims are unknown while tracing "
                    f"({list(shape)}) is not implemented in tapeflow: pass fft_length")
            n = n[:-1] + (max(0, 2 * (n[-1] - 1)),)
        return _run_irfft(_fit_inner(x, n[:-1] + (n[-1] // 2 + 1,), op_name), rank, n)

    fn.__name__ = fn.__qualname__ = op_name.lower()
    fn.__doc__ = (f"``tf.signal.{fn.__name__}``: the inverse of ``rfft{_RANK_NAME[rank].lower()}``; the innermost "
                  "output dim is ``fft_length[-1]`` (default ``2 * (bins - 1)``); complex64 gives float32.")
    return fn


def _shape_str(shape: tuple) -> str:
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


rfft = _rfft_public(1)
irfft = _irfft_public(1)
rfft2d = _rfft_public(2)
irfft2d = _irfft_public(2)
rfft3d = _rfft_public(3)
irfft3d = _irfft_public(3)


# ----------------------------------------------------------------------------
# fftnd / ifftnd / rfftnd / irfftnd: TF 2.21's CPU build registers no kernel for them (GPU only), so there
# they raise NotFoundError; so do they here.
# ----------------------------------------------------------------------------

def _nd_public(op_name: str, real_input: bool):
    def fn(input_tensor: Any, fft_length: Any = None, axes: Any = None, norm: Any = None,
           name: str | None = None) -> Tensor:
        from tapeflow.framework.errors import NotFoundError

        x = convert_to_tensor(input_tensor, dtype_hint=dtypes.float32 if real_input else dtypes.complex64)
        if real_input and x._value.dtype not in _COMPLEX_OF:
            raise ValueError(f"RFFT requires tf.float32 or tf.float64 inputs, got: {x!r}")
        if not real_input and op_name != "IRFFTND" and not x.dtype.is_complex:
            raise _err(op_name, f"Value for attr 'Tcomplex' of {_tf_type(x)} is not in the list of allowed values: "
                       "complex64, complex128")
        raise NotFoundError(None, None, f"Could not find device for node: {{{{node {op_name}}}}} = {op_name}: All "
                            f"kernels registered for op {op_name}: <no registered kernels> (TF 2.21 has {op_name} "
                            f"on GPUs only; use tf.signal.{op_name[:-2].lower()}2d/3d or transpose the axes inner) "
                            f"[Op:{op_name}]")

    fn.__name__ = fn.__qualname__ = op_name.lower()
    fn.__doc__ = (f"``tf.signal.{fn.__name__}``: raises NotFoundError, as TF 2.21 on a CPU (its {op_name} kernel is "
                  "GPU-only).")
    return fn


fftnd = _nd_public("FFTND", False)
ifftnd = _nd_public("IFFTND", False)
rfftnd = _nd_public("RFFTND", True)
irfftnd = _nd_public("IRFFTND", False)
