"""WAV files (``tf.audio.decode_wav`` / ``encode_wav``): the ``DecodeWav`` and ``EncodeWav`` ops, not
differentiable.

As TF's wav_io: 16-bit PCM only; a sample ``s`` decodes to ``s / 32768`` (float32 in [-1, 1)) and encodes
as ``roundf(x * 32768)`` clamped to [-32768, 32767]. Chunks other than ``fmt `` and ``data`` are skipped.
"""

from __future__ import annotations

import collections
import struct
from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops.registry import NotDifferentiable, defop

__all__ = ["decode_wav", "encode_wav"]

_OBJ = np.dtype(object)
DecodeWav = collections.namedtuple("DecodeWav", ["audio", "sample_rate"])


def _err(op: str, msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"{msg} [Op:{op}]")


def _as_bytes(a: Any) -> bytes:
    v = np.asarray(a, dtype=object)[()]
    return v.encode("utf-8") if isinstance(v, str) else bytes(v)


def _parse_wav(data: bytes) -> tuple[np.ndarray, int]:
    """The int16 samples ``[frames, channels]`` and the sample rate of a 16-bit PCM WAV file."""
    op = "DecodeWav"

    def expect(offset: int, tag: bytes) -> None:
        found = data[offset:offset + 4]
        if found != tag:
            raise _err(op, f"Header mismatch: Expected {tag.decode()} but found {found.decode('latin-1')}")

    expect(0, b"RIFF")
    if len(data) < 12:
        raise _err(op, f"Data too short when trying to read string ({len(data)} bytes, need a 44-byte header)")
    expect(8, b"WAVE")
    pos, fmt = 12, None
    while pos + 8 <= len(data):
        tag, size = data[pos:pos + 4], struct.unpack_from("<I", data, pos + 4)[0]
        body = pos + 8
        if tag == b"fmt ":
            if size < 16 or body + 16 > len(data):
                raise _err(op, f"Bad fmt chunk size {size}")
            fmt = struct.unpack_from("<HHIIHH", data, body)
        elif tag == b"data":
            if fmt is None:
                raise _err(op, "Could not find a fmt chunk before the data chunk")
            audio_format, channels, rate, _, block_align, bits = fmt
            if audio_format not in (1, 0xFFFE):
                raise _err(op, f"Bad audio format value of {audio_format}; only PCM (1) is supported")
            if bits != 16:
                raise _err(op, f"Can only read 16-bit WAV files, but received {bits}")
            if channels < 1:
                raise _err(op, "Bad number of channels: 0")
            end = min(body + size, len(data))
            frames = (end - body) // (2 * channels)
            samples = np.frombuffer(data, dtype="<i2", count=frames * channels, offset=body)
            return samples.reshape(frames, channels), int(rate)
        pos = body + size + (size & 1)  # chunks are padded to even sizes
    raise _err(op, "Could not find a data chunk")


def _decode_wav_kernel(contents, desired_channels, desired_samples):
    samples, rate = _parse_wav(_as_bytes(contents))
    audio = samples.astype(np.float32) * np.float32(1.0 / 32768.0)
    if desired_channels > 0 and desired_channels != audio.shape[1]:
        # TF: extra output channels repeat the file's last channel; fewer keep the first ones
        audio = audio[:, np.minimum(np.arange(desired_channels), audio.shape[1] - 1)]
    if desired_samples > 0 and desired_samples != audio.shape[0]:
        if desired_samples < audio.shape[0]:
            audio = audio[:desired_samples]
        else:
            audio = np.concatenate([audio, np.zeros((desired_samples - audio.shape[0], audio.shape[1]),
                                                    np.float32)])
    return np.ascontiguousarray(audio), np.asarray(rate, np.int32)


def _decode_wav_shape(specs, desired_channels, desired_samples):
    return [((desired_samples if desired_samples > 0 else None, desired_channels if desired_channels > 0 else None),
             np.dtype(np.float32)), ((), np.dtype(np.int32))]


DECODE_WAV = defop("DecodeWav", _decode_wav_kernel, shape=_decode_wav_shape, num_outputs=2)
NotDifferentiable("DecodeWav")


def _encode_wav_kernel(audio, sample_rate):
    if audio.ndim != 2:
        raise _err("EncodeWav", f"audio must be 2-dimensional{list(audio.shape)}")
    if np.asarray(sample_rate).ndim != 0:
        raise _err("EncodeWav", f"Input sample_rate should be a scalar tensor, got {list(np.shape(sample_rate))}")
    frames, channels = audio.shape
    scaled = audio.astype(np.float32) * np.float32(32768.0)
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5))  # roundf: halves away from zero
    pcm = np.clip(rounded, -32768, 32767).astype("<i2").tobytes()
    rate = int(sample_rate)
    fmt = struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * channels * 2, channels * 2, 16)
    header = b"RIFF" + struct.pack("<I", 36 + len(pcm)) + b"WAVE"
    header += b"fmt " + fmt + b"data" + struct.pack("<I", len(pcm))
    return np.asarray(header + pcm, dtype=_OBJ)


ENCODE_WAV = defop("EncodeWav", _encode_wav_kernel, shape=lambda specs: [((), _OBJ)])
NotDifferentiable("EncodeWav")


def decode_wav(contents: Any, desired_channels: int = -1, desired_samples: int = -1,
               name: str | None = None) -> tuple:
    """``tf.audio.decode_wav``: a 16-bit PCM WAV file's bytes as ``(audio, sample_rate)``: float32
    ``[samples, channels]`` in [-1, 1) and an int32 scalar. ``desired_channels`` keeps the first channels or
    repeats the last one; ``desired_samples`` crops or pads with zeros."""
    c = contents if isinstance(contents, Tensor) else convert_to_tensor(contents, dtype=dtypes.string)
    if c.dtype != dtypes.string:
        raise InvalidArgumentError(None, None, "cannot compute DecodeWav as input #0(zero-based) was expected to "
                                   f"be a string tensor but is a {c.dtype.name} tensor [Op:DecodeWav]")
    audio, rate = execute(DECODE_WAV, (c,), {"desired_channels": int(desired_channels),
                                              "desired_samples": int(desired_samples)})
    return DecodeWav(audio, rate)


def encode_wav(audio: Any, sample_rate: Any, name: str | None = None) -> Tensor:
    """``tf.audio.encode_wav``: float32 ``audio`` ``[samples, channels]`` as 16-bit PCM WAV bytes (values are
    clipped to [-1, 1])."""
    a = audio if isinstance(audio, Tensor) else convert_to_tensor(audio, dtype=dtypes.float32)
    if a.dtype != dtypes.float32:
        raise InvalidArgumentError(None, None, "cannot compute EncodeWav as input #0(zero-based) was expected to "
                                   f"be a float tensor but is a {a.dtype.name} tensor [Op:EncodeWav]")
    r = convert_to_tensor(sample_rate, dtype=dtypes.int32)
    return execute(ENCODE_WAV, (a, r))
