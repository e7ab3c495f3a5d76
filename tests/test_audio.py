"""tf.audio.decode_wav / encode_wav: TF's 16-bit PCM conversions, channel and sample handling, errors
(pinned from TF 2.21)."""

import io
import wave

import numpy as np
import pytest

import tapeflow as tf

A = [[0.0, 0.5], [-1.0, 1.0], [0.25, -0.3], [2.0, -2.0]]
# tf.audio.encode_wav(A, 16000) in TF 2.21
WAV = (b"RIFF4\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x02\x00\x80>\x00\x00\x00\xfa\x00\x00\x04\x00\x10\x00"
       b"data\x10\x00\x00\x00\x00\x00\x00@\x00\x80\xff\x7f\x00 \x9a\xd9\xff\x7f\x00\x80")


def test_encode_wav_bytes_as_tf():
    w = tf.audio.encode_wav(tf.constant(A), 16000)
    assert w.dtype == tf.string and w.numpy() == WAV
    x = np.array([0.1, -0.123456, 0.99999, -0.99999, 1 / 32768, 0.5 / 32768, 1.5 / 32767, -0.5 / 32767], np.float32)
    pcm = np.frombuffer(tf.audio.encode_wav(x[:, None], tf.constant(100)).numpy()[44:], np.int16)
    assert pcm.tolist() == [3277, -4045, 32767, -32768, 1, 1, 2, -1]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"audio must be 2-dimensional\[4\]"):
        tf.audio.encode_wav(tf.constant(A)[:, 0], 16000)


def test_decode_wav_values_channels_samples():
    audio, rate = tf.audio.decode_wav(WAV)
    assert audio.dtype == tf.float32 and rate.dtype == tf.int32 and int(rate) == 16000
    np.testing.assert_array_equal(audio.numpy(), np.float32([[0, 0.5], [-1, 0.9999695], [0.25, -0.2999878],
                                                             [0.9999695, -1]]))
    d = tf.audio.decode_wav(WAV, desired_channels=1)
    assert d.audio.shape == (4, 1) and d.sample_rate.numpy() == 16000
    assert tf.audio.decode_wav(WAV, desired_channels=3).audio.numpy()[:, 2].tolist() == audio.numpy()[:, 1].tolist()
    padded = tf.audio.decode_wav(WAV, desired_samples=6).audio.numpy()
    assert padded.shape == (6, 2) and padded[4:].tolist() == [[0, 0], [0, 0]]
    assert tf.audio.decode_wav(WAV, desired_samples=2).audio.shape == (2, 2)
    mono = tf.audio.encode_wav(tf.constant(A)[:, :1], 8000)
    both = tf.audio.decode_wav(mono, desired_channels=2)
    assert int(both.sample_rate) == 8000 and both.audio.numpy()[:, 0].tolist() == both.audio.numpy()[:, 1].tolist()
    x = np.float32([0.100006103515625, -0.123443603515625, 0.999969482421875, -1.0, 3.0517578125e-05])
    np.testing.assert_array_equal(tf.audio.decode_wav(tf.audio.encode_wav(x[:, None], 100)).audio.numpy()[:, 0], x)


def test_decode_wav_errors_and_tracing():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Header mismatch: Expected RIFF but found garb"):
        tf.audio.decode_wav(tf.constant(b"garbage"))
    buf = io.BytesIO()
    with wave.open(buf, "wb") as f:
        f.setnchannels(1)
        f.setsampwidth(1)
        f.setframerate(8000)
        f.writeframes(bytes([0, 128, 255]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Can only read 16-bit WAV files, but received 8"):
        tf.audio.decode_wav(buf.getvalue())
    fn = tf.function(lambda c: tf.audio.decode_wav(c, desired_channels=1, desired_samples=16000))
    out = fn.get_concrete_function(tf.TensorSpec([], tf.string)).structured_outputs
    assert out.audio.shape.as_list() == [16000, 1] and out.sample_rate.shape.as_list() == []
    assert fn(tf.constant(WAV)).audio.shape == (16000, 1)


def test_audio_dataset_from_directory_as_keras(tmp_path, capsys):
    tf.random.set_seed(None)  # the shuffle order below is that of a fresh process (no global seed)
    r = np.random.default_rng(0)
    for c in ["no", "yes", "up"]:
        (tmp_path / c).mkdir()
        for i in range(5):
            x = (r.standard_normal(int(r.integers(800, 1600))) * 3000).astype(np.int16)
            with wave.open(str(tmp_path / c / f"f{i}.wav"), "wb") as f:
                f.setnchannels(1)
                f.setsampwidth(2)
                f.setframerate(16000)
                f.writeframes(x.tobytes())
    train, val = tf.keras.utils.audio_dataset_from_directory(tmp_path, batch_size=4, validation_split=0.2, seed=0,
                                                             output_sequence_length=1000, subset="both")
    assert capsys.readouterr().out.splitlines() == ["Found 15 files belonging to 3 classes.",
                                                    "Using 12 files for training.", "Using 3 files for validation."]
    assert train.class_names == ["no", "up", "yes"]
    assert train.element_spec[0].shape.as_list() == [None, 1000, None]
    audio, labels = next(iter(train))  # Keras 3.15: shape (4, 1000, 1), labels [0 1 2 0], sum -4.26763916015625
    assert audio.shape == (4, 1000, 1) and labels.numpy().tolist() == [0, 1, 2, 0]
    assert float(tf.reduce_sum(audio)) == -4.26763916015625
    ds = tf.keras.utils.audio_dataset_from_directory(tmp_path, batch_size=4, shuffle=False)
    shapes = [(a.shape, float(tf.reduce_sum(a))) for a, _ in ds.take(2)]  # padded to each batch's longest file
    assert shapes == [((4, 1480, 1), -1.579010009765625), ((4, 1492, 1), 0.504730224609375)]
    with pytest.raises(ValueError, match="Cannot set both `ragged` and `output_sequence_length`"):
        tf.keras.utils.audio_dataset_from_directory(tmp_path, ragged=True, output_sequence_length=10)
