"""tf.signal: FFTs (dtypes, fft_length, errors, gradients) and the functions built on them.
Values pinned from TF 2.21."""

import numpy as np
import pytest

import tapeflow as tf

X = [[1.0, 2.0, -1.0, 0.5, 3.0]]


def test_rfft_dtypes_lengths_and_values():
    x = tf.constant(X)
    y = tf.signal.rfft(x)
    assert y.dtype == tf.complex64 and y.shape == (1, 3)
    np.testing.assert_allclose(y.numpy(), [[5.5, 2.9495935 + 1.8327343j, -3.1995935 - 0.8387996j]], rtol=1e-6)
    np.testing.assert_allclose(  # padded to 8
        tf.signal.rfft(x, fft_length=[8]).numpy(),
        [[5.5, -0.9393399 - 0.76776695j, 5 - 1.5j, -3.0606601 - 2.767767j, 0.5]], rtol=1e-6)
    cropped = tf.signal.rfft(x, fft_length=[3])  # of [1, 2, -1]
    np.testing.assert_allclose(cropped.numpy(), [[2, 0.5 - 2.598076j]], rtol=1e-6)
    assert tf.signal.rfft(tf.constant(X, tf.float64)).dtype == tf.complex128
    back = tf.signal.irfft(y)  # default length 2 * (3 - 1)
    assert back.dtype == tf.float32
    np.testing.assert_allclose(back.numpy(), [[2.0498984, 1.2585312, -0.89969516, 3.0912657]], rtol=1e-6)
    np.testing.assert_allclose(tf.signal.irfft(y, fft_length=[5]).numpy(), X, rtol=1e-6)
    np.testing.assert_allclose(tf.signal.irfft(tf.constant([1 + 1j, 2, 3 - 1j]), fft_length=[5]).numpy(),
                               [2.2, -0.2884927, -0.45681581, 0.3040294, -0.7587209], rtol=1e-6)


def test_fft_ifft_values_and_dtypes():
    x = tf.constant(X)
    z = tf.complex(x, tf.reverse(x, [1]))
    np.testing.assert_allclose(tf.signal.fft(z).numpy(), [[5.5 + 5.5j, 0.71070957 + 4.4872427j, -0.6403165 + 1.2566918j,
                                                          -5.7588706 + 2.9342909j, 5.1884775 + 0.82177424j]], rtol=1e-6)
    np.testing.assert_allclose(tf.signal.ifft(z).numpy(), [[1.1 + 1.1j, 1.0376955 + 0.16435485j,
                                                           -1.1517742 + 0.5868582j, -0.1280633 + 0.25133836j,
                                                           0.14214192 + 0.89744854j]], rtol=1e-6)
    assert tf.signal.fft(z).dtype == tf.complex64
    assert tf.signal.fft([1.0, 2.0]).numpy().tolist() == [3 + 0j, -1 + 0j]  # a list becomes complex64
    m = tf.reshape(tf.range(12.0), (3, 4))
    np.testing.assert_allclose(tf.signal.rfft2d(m).numpy(), [[66, -6 + 6j, -6], [-24 + 13.856406j, 0, 0],
                                                             [-24 - 13.856406j, 0, 0]], atol=1e-5)
    np.testing.assert_allclose(tf.signal.irfft2d(tf.signal.rfft2d(m)).numpy(), m.numpy(), atol=1e-5)
    c3 = tf.complex(tf.reshape(tf.range(8.0), (2, 2, 2)), 0.0)
    np.testing.assert_allclose(tf.signal.ifft3d(tf.signal.fft3d(c3)).numpy(), c3.numpy(), atol=1e-5)


def test_fft_errors_as_tf():
    with pytest.raises(tf.errors.InvalidArgumentError, match="attr 'Tcomplex' of float is not in the list"):
        tf.signal.fft(tf.constant([1.0, 2.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"rank of at least 1 but got: \[\]"):
        tf.signal.fft(tf.constant(1 + 0j))
    with pytest.raises(ValueError, match="RFFT requires tf.float32 or tf.float64 inputs"):
        tf.signal.rfft(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="IRFFT requires tf.complex64 or tf.complex128 inputs"):
        tf.signal.irfft(tf.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"Shape \(12,\) must have rank at least 2"):
        tf.signal.rfft2d(tf.range(12.0))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"fft_length must have shape \[1\]"):
        tf.signal.rfft(tf.constant([1.0, 2.0, 3.0]), fft_length=[2, 3])


def test_fft_gradients_pinned_from_tf():
    x = tf.constant(np.random.default_rng(0).standard_normal((2, 5)))
    for n, want in [(None, [0.9, -1.338639, 1.070029, -0.770029, 1.638639]),
                    ([8], [1.5, -3.379899, 1.7, -0.579899, 0.3])]:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.signal.rfft(x, fft_length=n)
            loss = tf.reduce_sum(tf.math.real(y) * 0.3 + tf.math.imag(y) * 0.7 * tf.cast(tf.range(y.shape[-1]),
                                                                                          tf.float64))
        np.testing.assert_allclose(tape.gradient(loss, x).numpy(), [want, want], atol=1e-6)
    g = tf.constant(np.random.default_rng(1).standard_normal((2, 5)))
    yc = tf.complex(x[:, :4], g[:, :4])
    for n, want in [(None, [2.5, -1 + 1.732051j, -1 + 0.57735j, -0.5]),
                    ([8], [3.5, -1 + 2.414214j, -1 + 1j, -1 + 0.414214j])]:
        with tf.GradientTape() as tape:
            tape.watch(yc)
            y = tf.signal.irfft(yc, fft_length=n)
            loss = tf.reduce_sum(y * tf.cast(tf.range(y.shape[-1]), tf.float64))
        np.testing.assert_allclose(tape.gradient(loss, yc).numpy(), [want, want], atol=1e-6)
    m = tf.constant(np.arange(12.0).reshape(3, 4))
    with tf.GradientTape() as tape:
        tape.watch(m)
        y = tf.signal.rfft2d(m)
        loss = tf.reduce_sum(tf.math.real(y) * tf.cast(tf.range(3), tf.float64)) + tf.reduce_sum(tf.math.imag(y))
    np.testing.assert_allclose(tape.gradient(loss, m).numpy(), [[9, -9, 3, -3], [0] * 4, [0] * 4], atol=1e-12)
    zc = tf.complex(m, m * 0.5)
    with tf.GradientTape() as tape:
        tape.watch(zc)
        y = tf.signal.fft2d(zc)
        loss = tf.reduce_sum(tf.math.real(y) * m) + tf.reduce_sum(tf.math.imag(y))
    np.testing.assert_allclose(tape.gradient(loss, zc).numpy(), [[66 + 12j, -6 - 6j, -6, -6 + 6j],
                                                                 [-24 - 13.856406460551018j, 0, 0, 0],
                                                                 [-24 + 13.856406460551018j, 0, 0, 0]], atol=1e-12)
    with tf.GradientTape() as tape:
        tape.watch(zc)
        y = tf.signal.irfft2d(zc)
        loss = tf.reduce_sum(y * tf.cast(tf.range(6), tf.float64))
    assert y.shape == (3, 6)
    np.testing.assert_allclose(tape.gradient(loss, zc).numpy(), [[2.5, -1 + 1.7320508075688772j,
                                                                  -1 + 0.5773502691896257j, -0.5], [0] * 4, [0] * 4],
                               atol=1e-12)


def test_fftshift_ifftshift_as_tf():
    assert tf.signal.fftshift([0.0, 1.0, 2.0, 3.0, 4.0, -5.0, -4.0, -3.0, -2.0, -1.0]).numpy().tolist() == \
        [-5.0, -4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0]
    assert tf.signal.ifftshift([[0.0, 1.0, 2.0], [3.0, 4.0, -4.0], [-3.0, -2.0, -1.0]]).numpy().tolist() == \
        [[4.0, -4.0, 3.0], [-2.0, -1.0, -3.0], [1.0, 2.0, 0.0]]
    assert tf.signal.fftshift(tf.reshape(tf.range(6), (2, 3)), axes=1).numpy().tolist() == [[2, 0, 1], [5, 3, 4]]


def test_rfft_in_tf_function_with_unknown_batch():
    f = tf.function(lambda x: tf.abs(tf.signal.rfft(x)), input_signature=[tf.TensorSpec([None, 5])])
    np.testing.assert_allclose(f(tf.constant(X)).numpy(), np.abs(np.fft.rfft(X)), rtol=1e-6)
    # unknown inner dims: tapeflow retraces per concrete shape (with a warning), still TF's numbers
    g = tf.function(lambda x: tf.signal.rfft(x), input_signature=[tf.TensorSpec([None, None])])
    np.testing.assert_allclose(g(tf.constant(X)).numpy(), np.fft.rfft(X), rtol=1e-6)


_SIG = np.sin(np.arange(40) * 0.3).astype(np.float32)


def test_windows_pinned_from_tf():
    np.testing.assert_allclose(tf.signal.hann_window(8).numpy(), [0.0, 0.14644664525985718, 0.5, 0.8535533547401428,
                                                                 1.0, 0.8535533547401428, 0.5, 0.14644646644592285],
                               atol=1e-7)
    np.testing.assert_allclose(tf.signal.hann_window(7, periodic=False).numpy(),
                               [0.0, 0.25, 0.75, 1.0, 0.7499999403953552, 0.24999982118606567, 0.0], atol=1e-7)
    np.testing.assert_array_equal(tf.signal.hamming_window(5, periodic=False).numpy(),
                                  np.float32([0.08000001311302185, 0.5400000214576721, 1.0, 0.5400000214576721,
                                              0.08000001311302185]))
    assert tf.signal.hann_window(1).numpy().tolist() == [1.0]
    assert tf.signal.hamming_window(6, dtype=tf.float64).dtype == tf.float64
    with pytest.raises(ValueError, match="dtype must be a floating point type"):
        tf.signal.hann_window(4, dtype=tf.int32)


def test_frame_and_overlap_and_add():
    x = tf.constant(_SIG)
    f = tf.signal.frame(x, 8, 4)
    assert f.shape == (9, 8) and f.numpy()[1].tolist() == _SIG[4:12].tolist()
    p = tf.signal.frame(x, 8, 5, pad_end=True, pad_value=2.0)
    assert p.shape == (8, 8) and p.numpy()[-1].tolist() == _SIG[35:].tolist() + [2.0] * 3
    assert tf.signal.frame(tf.reshape(x, (10, 4)), 3, 2, axis=0).shape == (4, 3, 4)
    assert tf.signal.overlap_and_add(tf.reshape(tf.range(12.0), (3, 4)), 2).numpy().tolist() == \
        [0, 1, 6, 8, 14, 16, 10, 11]
    assert tf.signal.overlap_and_add(tf.reshape(tf.range(24.0), (2, 3, 4)), 3).shape == (2, 10)
    v = tf.Variable(x)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.signal.frame(v, 8, 3) * tf.cast(tf.range(8), tf.float32))
    g = tf.convert_to_tensor(tape.gradient(loss, v)).numpy()
    assert g[:8].tolist() == [0, 1, 2, 3 + 0, 4 + 1, 5 + 2, 6 + 3 + 0, 7 + 4 + 1]


def test_stft_inverse_stft_pinned_from_tf():
    x = tf.constant(_SIG)
    s = tf.signal.stft(x, 16, 4)
    assert s.shape == (7, 9) and s.dtype == tf.complex64
    np.testing.assert_allclose(s.numpy()[:2, :4], [
        [3.6525187492370605, -2.7620201110839844 - 2.6749520301818848j, 0.8588303327560425 + 1.0063056945800781j,
         0.053351402282714844 + 0.08326518535614014j],
        [-2.392897129058838, 1.8094995021820068 - 3.2530593872070312j, -0.5626510381698608 + 1.2237868309020996j,
         -0.034952521324157715 + 0.10126042366027832j]], atol=2e-6)
    assert tf.signal.stft(x, 10, 3, fft_length=16, pad_end=True).shape == (14, 9)
    back = tf.signal.inverse_stft(s, 16, 4, window_fn=tf.signal.inverse_stft_window_fn(4))
    np.testing.assert_allclose(back.numpy()[12:28], _SIG[12:28], atol=1e-6)  # perfect reconstruction inside
    plain = tf.signal.inverse_stft(s, 12, 4)
    assert plain.shape == (36,)
    np.testing.assert_allclose(plain.numpy()[:6], [0.0, 0.0007534397882409394, 0.02067248895764351,
                                                   0.12089014053344727, 0.3495146632194519, 0.6459579467773438],
                               atol=1e-6)
    v = tf.Variable(x)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.abs(tf.signal.stft(v, 16, 4)) * tf.cast(tf.range(9), tf.float32))
    np.testing.assert_allclose(tape.gradient(loss, v).numpy()[:8], [
        0.0, -1.159047245979309, 2.311340093612671, -3.626488208770752, 5.139870643615723, -4.548707962036133,
        7.721951484680176, -2.619931221008301], atol=5e-4)  # float32 (in float64 they agree to 1e-14)


def test_mel_matrix_dct_mfcc_pinned_from_tf():
    mel = tf.signal.linear_to_mel_weight_matrix(4, 9, 8000, 100.0, 3000.0)
    np.testing.assert_allclose(mel.numpy()[1:6], [
        [0.6762279868125916, 0.32377201318740845, 0.0, 0.0], [0.0, 0.5390681028366089, 0.4609318673610687, 0.0],
        [0.0, 0.0, 0.6973017454147339, 0.3026982545852661], [0.0, 0.0, 0.02868412435054779, 0.971315860748291],
        [0.0, 0.0, 0.0, 0.47399407625198364]], atol=1e-7)
    assert mel.numpy()[0].tolist() == [0] * 4 and tf.signal.linear_to_mel_weight_matrix().shape == (129, 20)
    with pytest.raises(ValueError, match="upper_edge_hertz must not be larger than the Nyquist"):
        tf.signal.linear_to_mel_weight_matrix(upper_edge_hertz=5000.0)
    x = tf.constant(_SIG[:6])
    for kw, want in [({}, [7.146047592163086, -2.940385341644287, -0.6070394515991211, -0.2012309432029724,
                           -0.10965412855148315, -0.038633882999420166]),
                     ({"norm": "ortho"}, [1.4586807489395142, -0.8488160967826843, -0.17523719370365143,
                                          -0.058090370148420334, -0.031654421240091324, -0.011152640916407108]),
                     ({"type": 3}, [4.105062484741211, -3.9646120071411133, 0.9262430667877197, -1.0181440114974976,
                                    0.23645567893981934, -0.2850055694580078]),
                     ({"type": 1}, [6.148552417755127, -2.1625585556030273, -0.42489194869995117,
                                    -0.25026583671569824, -0.15564680099487305, -0.16182613372802734]),
                     ({"type": 4, "norm": "ortho"}, [0.972673773765564, -1.1948292255401611, 0.4002082645893097,
                                                     -0.4146195352077484, 0.2966192066669464, -0.29946157336235046])]:
        np.testing.assert_allclose(tf.signal.dct(x, **kw).numpy(), want, atol=3e-7, err_msg=str(kw))
    np.testing.assert_allclose(tf.signal.idct(tf.signal.dct(x, norm="ortho"), norm="ortho").numpy(), _SIG[:6],
                               atol=1e-6)
    with pytest.raises(NotImplementedError, match="axis must be -1"):
        tf.signal.dct(x, axis=0)
    m = tf.signal.mfccs_from_log_mel_spectrograms(tf.reshape(tf.constant(_SIG[:8]), (2, 4)))
    np.testing.assert_allclose(m.numpy(), [[1.1621226072311401, -0.5845569968223572, -0.038417864590883255,
                                            -0.0361541248857975], [2.663382053375244, 0.051364026963710785,
                                                                   -0.0880470797419548, 0.0031768607441335917]],
                               atol=2e-7)


def test_spectrogram_in_tf_function_with_unknown_batch():
    # the audio tutorial's get_spectrogram, traced over batches of any size
    @tf.function(input_signature=[tf.TensorSpec([None, 64])])
    def spectrogram(w):
        return tf.abs(tf.signal.stft(w, frame_length=16, frame_step=8))[..., tf.newaxis]

    s = spectrogram(tf.constant(np.stack([_SIG[:32].tolist() * 2] * 3), tf.float32))
    assert s.shape == (3, 7, 9, 1)
    np.testing.assert_allclose(s.numpy()[1], np.abs(tf.signal.stft(tf.constant(_SIG[:32].tolist() * 2), 16, 8)
                                                    .numpy())[..., None], rtol=1e-6)


def test_vorbis_window_and_mdct_pinned_from_tf():
    np.testing.assert_allclose(tf.signal.vorbis_window(8).numpy(), [
        0.05974927544593811, 0.46606624126434326, 0.8847498893737793, 0.9982134103775024, 0.9982134103775024,
        0.8847497701644897, 0.4660661518573761, 0.059749264270067215], atol=1e-7)
    x = tf.constant(np.sin(np.arange(32) * 0.37).astype(np.float32))
    m = tf.signal.mdct(x, 8)
    assert m.shape == (7, 4)
    np.testing.assert_allclose(m.numpy()[:2], [[-5.262209892272949, 0.5978654026985168, -0.4067687690258026,
                                                0.01547667384147644], [-0.026099249720573425, 1.932552695274353,
                                                                       0.11045056581497192, 0.04083355516195297]],
                               atol=1e-6)
    back = tf.signal.inverse_mdct(tf.signal.mdct(x, 8, norm="ortho"), norm="ortho")
    np.testing.assert_allclose(back.numpy()[4:28], x.numpy()[4:28], atol=1e-6)  # perfect reconstruction inside
    with pytest.raises(ValueError, match="multiple of 4"):
        tf.signal.mdct(x, 6)


def test_kaiser_windows_pinned_from_tf():
    np.testing.assert_allclose(tf.signal.kaiser_window(8).numpy(), [
        5.2773448260268196e-05, 0.032768286764621735, 0.3308985233306885, 0.888868510723114, 0.888868510723114,
        0.3308985233306885, 0.032768286764621735, 5.2773448260268196e-05], rtol=3e-6)
    np.testing.assert_allclose(tf.signal.kaiser_bessel_derived_window(8).numpy(), [
        0.00607182877138257, 0.3882061839103699, 0.9215725660324097, 0.9999815225601196, 0.9999815225601196,
        0.9215725660324097, 0.3882061839103699, 0.00607182877138257], rtol=1e-6)
    assert tf.signal.kaiser_window(9, dtype=tf.float64).dtype == tf.float64
    assert tf.signal.kaiser_window(1).numpy().tolist() == [1.0]


def test_fftnd_family_raises_as_tf_on_cpu():
    z = tf.complex(tf.reshape(tf.range(12.0), (3, 4)), 1.0)
    for fn in (tf.signal.fftnd, tf.signal.ifftnd, tf.signal.irfftnd):
        with pytest.raises(tf.errors.NotFoundError, match="no registered kernels"):
            fn(z)
    with pytest.raises(tf.errors.NotFoundError, match="RFFTND"):
        tf.signal.rfftnd(tf.ones((2, 2)))
    with pytest.raises(tf.errors.InvalidArgumentError, match="attr 'Tcomplex' of float"):
        tf.signal.fftnd(tf.ones((2, 2)))
