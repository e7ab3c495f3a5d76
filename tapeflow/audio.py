"""``tf.audio``: 16-bit PCM WAV files (tapeflow/ops/audio_ops.py)."""

from tapeflow.ops.audio_ops import decode_wav, encode_wav

__all__ = ["decode_wav", "encode_wav"]
