"""``tf.signal``: FFTs (tapeflow/ops/fft_ops.py) and the spectral functions built on them
(tapeflow/ops/signal_ops.py)."""

from tapeflow.ops.fft_ops import (
    fft, fft2d, fft3d, fftnd, ifft, ifft2d, ifft3d, ifftnd, irfft, irfft2d, irfft3d, irfftnd, rfft, rfft2d, rfft3d,
    rfftnd,
)
from tapeflow.ops.signal_ops import (
    dct, fftshift, frame, hamming_window, hann_window, idct, ifftshift, inverse_mdct, inverse_stft,
    inverse_stft_window_fn, kaiser_bessel_derived_window, kaiser_window, linear_to_mel_weight_matrix, mdct,
    mfccs_from_log_mel_spectrograms, overlap_and_add, stft, vorbis_window,
)

__all__ = ["fft", "fft2d", "fft3d", "ifft", "ifft2d", "ifft3d", "irfft", "irfft2d", "irfft3d", "rfft", "rfft2d",
           "rfft3d", "dct", "fftshift", "frame", "hamming_window", "hann_window", "idct", "ifftshift",
           "inverse_stft", "inverse_stft_window_fn", "linear_to_mel_weight_matrix", "mfccs_from_log_mel_spectrograms",
           "overlap_and_add", "stft", "vorbis_window", "mdct", "inverse_mdct", "fftnd", "ifftnd", "rfftnd", "irfftnd",
           "kaiser_window", "kaiser_bessel_derived_window"]
