"""Specs for complex numbers (tapeflow/ops/math_ops.py) and tf.signal (fft_ops.py, signal_ops.py).

The gradient check differentiates real inputs to a real output, so each spec builds its complex input
with tf.complex and reads the result back with tf.math.real / imag: a rule that breaks TF's convention
(dL/dre + i dL/dim) fails the finite differences.
"""

import tapeflow as tf
from tests.op_specs import Arg, OpSpec

A = (3, 4)


def _parts(z):
    """A real function of every part of z (weights differ, so re and im cannot be mixed up)."""
    return [tf.math.real(z), tf.math.imag(z) * 0.7]


def _c(x, y):
    return tf.complex(x, y)


SPECS = [
    OpSpec("Complex", lambda x, y: _parts(_c(x, y) * _c(y, x)), [Arg(A), Arg(A)]),
    OpSpec("Complex", lambda x, y: _parts(_c(x, y) * _c(y, x)), [Arg(A), Arg((4,))], name="broadcast"),
    OpSpec("Real", lambda x, y: tf.math.real(tf.exp(_c(x, y))), [Arg(A), Arg(A)]),
    OpSpec("Imag", lambda x, y: tf.math.imag(tf.sin(_c(x, y))), [Arg(A), Arg(A)]),
    OpSpec("Conj", lambda x, y: _parts(tf.math.conj(_c(x, y)) * _c(x, y * y)), [Arg(A), Arg(A)]),
    OpSpec("Angle", lambda x, y: tf.math.angle(_c(x, y)), [Arg(A, low=0.5), Arg(A)]),
    OpSpec("ComplexAbs", lambda x, y: tf.abs(_c(x, y)), [Arg(A, low=0.5), Arg(A)]),
    OpSpec("Mul", lambda x, y: _parts(_c(x, y) * _c(y, x)), [Arg(A), Arg(A)], name="complex"),
    OpSpec("RealDiv", lambda x, y: _parts(_c(x, y) / _c(y + 3.0, x)), [Arg(A), Arg(A)], name="complex"),
    OpSpec("BatchMatMulV2", lambda x, y: _parts(tf.matmul(_c(x, y), _c(y, x), transpose_b=True)),
           [Arg(A), Arg(A)], name="complex"),
    OpSpec("Square", lambda x, y: _parts(tf.square(_c(x, y))), [Arg(A), Arg(A)], name="complex"),
    OpSpec("Sqrt", lambda x, y: _parts(tf.sqrt(_c(x, y))), [Arg(A, low=0.5), Arg(A)], name="complex"),
    OpSpec("Log", lambda x, y: _parts(tf.math.log(_c(x, y))), [Arg(A, low=0.5), Arg(A)], name="complex"),
    OpSpec("Tanh", lambda x, y: _parts(tf.tanh(_c(x, y) * 0.3)), [Arg(A), Arg(A)], name="complex"),
    OpSpec("Sigmoid", lambda x, y: _parts(tf.sigmoid(_c(x, y) * 0.3)), [Arg(A), Arg(A)], name="complex"),
    OpSpec("Pow", lambda x, y: _parts(tf.pow(_c(x, y), _c(y, x) * 0.3)), [Arg(A, low=0.5), Arg(A)], name="complex"),
    OpSpec("Reciprocal", lambda x, y: _parts(tf.math.reciprocal(_c(x, y))), [Arg(A, low=0.5), Arg(A)],
           name="complex"),
    OpSpec("Prod", lambda x, y: _parts(tf.reduce_prod(_c(x, y), axis=1)), [Arg(A), Arg(A)], name="complex"),
    OpSpec("Cast", lambda x, y: tf.cast(_c(x, y) * _c(y, x), tf.float64), [Arg(A), Arg(A)], name="complex"),
    # FFTs
    OpSpec("FFT", lambda x, y: _parts(tf.signal.fft(_c(x, y))), [Arg(A), Arg(A)]),
    OpSpec("IFFT", lambda x, y: _parts(tf.signal.ifft(_c(x, y))), [Arg(A), Arg(A)]),
    OpSpec("FFT2D", lambda x, y: _parts(tf.signal.fft2d(_c(x, y))), [Arg(A), Arg(A)]),
    OpSpec("IFFT2D", lambda x, y: _parts(tf.signal.ifft2d(_c(x, y))), [Arg(A), Arg(A)]),
    OpSpec("FFT3D", lambda x, y: _parts(tf.signal.fft3d(_c(x, y))), [Arg((2, 2, 3)), Arg((2, 2, 3))]),
    OpSpec("IFFT3D", lambda x, y: _parts(tf.signal.ifft3d(_c(x, y))), [Arg((2, 2, 3)), Arg((2, 2, 3))]),
    OpSpec("RFFT", lambda x: _parts(tf.signal.rfft(x)), [Arg(A)]),
    OpSpec("RFFT", lambda x: _parts(tf.signal.rfft(x)), [Arg((2, 5))], name="odd"),
    OpSpec("RFFT", lambda x: _parts(tf.signal.rfft(x, fft_length=[6])), [Arg(A)], name="padded"),
    OpSpec("RFFT", lambda x: _parts(tf.signal.rfft(x, fft_length=[3])), [Arg(A)], name="cropped"),
    OpSpec("IRFFT", lambda x, y: tf.signal.irfft(_c(x, y)), [Arg(A), Arg(A)]),
    OpSpec("IRFFT", lambda x, y: tf.signal.irfft(_c(x, y), fft_length=[7]), [Arg(A), Arg(A)], name="odd"),
    OpSpec("IRFFT", lambda x, y: tf.signal.irfft(_c(x, y), fft_length=[4]), [Arg(A), Arg(A)], name="cropped"),
    OpSpec("IRFFT", lambda x, y: tf.signal.irfft(_c(x, y), fft_length=[10]), [Arg(A), Arg(A)], name="padded"),
    OpSpec("RFFT2D", lambda x: _parts(tf.signal.rfft2d(x)), [Arg((2, 3, 4))]),
    OpSpec("RFFT2D", lambda x: _parts(tf.signal.rfft2d(x, fft_length=[4, 3])), [Arg((2, 3, 4))], name="padded"),
    OpSpec("IRFFT2D", lambda x, y: tf.signal.irfft2d(_c(x, y)), [Arg(A), Arg(A)]),
    OpSpec("IRFFT2D", lambda x, y: tf.signal.irfft2d(_c(x, y), fft_length=[2, 5]), [Arg(A), Arg(A)], name="odd"),
    OpSpec("RFFT3D", lambda x: _parts(tf.signal.rfft3d(x)), [Arg((2, 2, 2, 3))]),
    OpSpec("IRFFT3D", lambda x, y: tf.signal.irfft3d(_c(x, y)), [Arg((2, 2, 3)), Arg((2, 2, 3))]),
]

# tf.math's inverse and hyperbolic functions of complex input (their rules conjugate, as TF's)
SPECS += [
    OpSpec(op, lambda x, y, f=f: _parts(f(_c(x, y) * 0.4)), [Arg(A), Arg(A)], name="complex")
    for op, f in [("Sinh", tf.math.sinh), ("Cosh", tf.math.cosh), ("Asinh", tf.math.asinh),
                  ("Acosh", tf.math.acosh), ("Atanh", tf.math.atanh), ("Atan", tf.math.atan),
                  ("Asin", tf.math.asin), ("Acos", tf.math.acos), ("Exp", tf.exp), ("Sin", tf.sin),
                  ("Cos", tf.cos), ("Tan", tf.tan), ("Expm1", tf.math.expm1), ("Log1p", tf.math.log1p),
                  ("Rsqrt", tf.math.rsqrt)]
]
