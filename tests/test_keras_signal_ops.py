"""tf.keras.ops' FFT/STFT family and complex helpers (fft, fft2, ifft2, rfft, irfft, stft, istft,
extract_sequences, view_as_complex, view_as_real, angle, polar): Keras 3.15's (real, imag) tuples and
values, pinned from Keras 3.15 with the TensorFlow backend."""

import numpy as np
import pytest

import tapeflow as tf

ops = tf.keras.ops
A = np.float32([[1, 2, -1, 0.5], [0, 3, 1, -2]])
B = np.float32([[0.5, -1, 2, 1], [1, 1, 0, -1]])
SIG = np.sin(np.arange(24, dtype=np.float32) * 0.7)


def _close(got, want, atol=1e-5):
    got = [np.asarray(g) for g in got] if isinstance(got, tuple) else np.asarray(got)
    np.testing.assert_allclose(got, want, atol=atol)


def test_fft_family_as_keras():
    _close(ops.fft((A, B)), [[[2.5, 0.0, -2.5, 4.0], [2.0, 1.0, 0.0, -3.0]],
                             [[2.5, -3.0, 2.5, 0.0], [1.0, -4.0, 1.0, 6.0]]])
    _close(ops.fft2((A, B)), [[[4.5, 1.0, -2.5, 1.0], [0.5, -1.0, -2.5, 7.0]],
                              [[3.5, -7.0, 3.5, 6.0], [1.5, 1.0, 1.5, -6.0]]])
    _close(ops.ifft2((A, B)), [[[0.5625, 0.125, -0.3125, 0.125], [0.0625, 0.875, -0.3125, -0.125]],
                               [[0.4375, 0.75, 0.4375, -0.875], [0.1875, -0.75, 0.1875, 0.125]]])
    _close(ops.rfft(A, fft_length=6), [[[2.5, 2.0, 1.0, -2.5], [2.0, 3.0, -4.0, 0.0]],
                                       [[0.0, -0.866025, -2.598076, 0.0], [0.0, -3.464102, -1.732051, 0.0]]])
    _close(ops.irfft((A[:, :3], B[:, :3]), fft_length=5), [[0.6, 0.681015, 0.425139, -1.56678, 0.860626],
                                                           [1.6, -0.333209, -1.082328, -0.6121, 0.427636]])
    re, im = ops.fft((A, B))
    assert re.dtype == tf.float32 and im.dtype == tf.float32
    with pytest.raises(ValueError, match="should be a tuple of two tensors"):
        ops.fft(A)
    with pytest.raises(ValueError, match="same shape"):
        ops.fft((A, B[:, :2]))


def test_stft_istft_as_keras():
    re, im = ops.stft(SIG, 8, 4, 8)
    assert re.shape == (7, 5)
    _close((re[:2, :3], im[:2, :3]), [[[2.338026, -0.598863, -0.98545], [0.779775, -0.67929, 0.278051]],
                                      [[0.0, 0.0, 0.0], [0.0, -1.829669, 0.797987]]])
    ham = ops.stft(SIG, 6, 3, 8, window="hamming", center=False)
    _close((ham[0][:2, :3], ham[1][:2, :3]), [[[0.816395, -0.577548, 0.299687], [-2.216373, 1.819658, -0.878922]],
                                              [[0.0, -1.273106, 0.883237], [0.0, 0.225847, -0.211837]]])
    _close(ops.istft((re, im), 8, 4, 8)[:6], [0.0, 0.644218, 0.98545, 0.863209, 0.334988, -0.350783])
    assert ops.istft((re, im), 8, 4, 8, length=20).shape == (20,)
    with pytest.raises(ValueError, match="`fft_length` must equal or larger than `sequence_length`"):
        ops.stft(SIG, 16, 4, 8)
    with pytest.raises(ValueError, match='must be one of `"hann"`, `"hamming"`'):
        ops.stft(SIG, 8, 4, 8, window="blackman")
    with pytest.raises(TypeError, match="Expected `float32` or `float64`"):
        ops.stft(np.arange(24), 8, 4, 8)


def test_extract_sequences_views_angle_polar():
    assert ops.extract_sequences(SIG, 10, 7).shape == (3, 10)
    z = ops.view_as_complex(np.stack([A, B], -1).astype(np.float64))
    assert z.dtype == tf.complex64 and z.numpy()[0, 0] == 1 + 0.5j  # always complex64, as Keras
    np.testing.assert_array_equal(ops.view_as_real(np.array([1 + 2j, 3 - 4j], np.complex64)).numpy(),
                                  [[1, 2], [3, -4]])
    _close(ops.angle(np.array([1 + 2j, -3 - 4j], np.complex64)), [1.107149, -2.214298])
    assert ops.angle(np.array([1, -2], np.int32)).dtype == tf.float32
    _close(ops.polar(np.float32([1, 2]), np.float32([0.5, -1.0])), [0.877583 + 0.479426j, 1.080604 - 1.682942j])


def test_stft_in_a_functional_model():
    x = tf.keras.Input((64,))
    re, im = ops.stft(x, 16, 8, 32)
    assert re.shape == (None, 9, 17)
    model = tf.keras.Model(x, ops.sqrt(re * re + im * im))
    out = model(np.ones((2, 64), np.float32))
    assert out.shape == (2, 9, 17)
