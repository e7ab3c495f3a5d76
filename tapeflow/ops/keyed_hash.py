"""The hashes of ``tf.strings.to_hash_bucket`` and ``to_hash_bucket_strong``.

``hash64`` is TF's legacy ``Hash64`` (tensorflow/core/platform/hash.cc: a MurmurHash64A variant with seed
``0xDECAFCAFFE``); ``siphash24`` is SipHash-2-4 keyed by two 64-bit words (highwayhash's ``SipHash``, which
TF's ``StrongKeyedHash`` calls). Both are fixed functions of the bytes over little-endian 64-bit words, so
the buckets equal TF's on every platform.
"""

from __future__ import annotations

import struct

_M = (1 << 64) - 1
_MUR = 0xC6A4A7935BD1E995
HASH64_SEED = 0xDECAFCAFFE


def hash64(data: bytes, seed: int = HASH64_SEED) -> int:
    """TF's ``Hash64(data, n, seed)``."""
    n = len(data)
    h = (seed ^ (n * _MUR)) & _M
    full = n - n % 8
    for (k,) in struct.iter_unpack("<Q", data[:full]):
        k = (k * _MUR) & _M
        k ^= k >> 47
        k = (k * _MUR) & _M
        h ^= k
        h = (h * _MUR) & _M
    tail = data[full:]
    if tail:
        for i in range(len(tail) - 1, -1, -1):
            h ^= tail[i] << (8 * i)
        h = (h * _MUR) & _M
    h ^= h >> 47
    h = (h * _MUR) & _M
    h ^= h >> 47
    return h


def _rotl(v: int, r: int) -> int:
    return ((v << r) | (v >> (64 - r))) & _M


def _sipround(v0: int, v1: int, v2: int, v3: int) -> tuple[int, int, int, int]:
    v0 = (v0 + v1) & _M
    v1 = _rotl(v1, 13) ^ v0
    v0 = _rotl(v0, 32)
    v2 = (v2 + v3) & _M
    v3 = _rotl(v3, 16) ^ v2
    v0 = (v0 + v3) & _M
    v3 = _rotl(v3, 21) ^ v0
    v2 = (v2 + v1) & _M
    v1 = _rotl(v1, 17) ^ v2
    v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


def siphash24(k0: int, k1: int, data: bytes) -> int:
    """SipHash-2-4 of ``data`` under the key ``(k0, k1)`` (each taken modulo 2**64)."""
    k0 &= _M
    k1 &= _M
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573
    n = len(data)
    full = n - n % 8
    for (m,) in struct.iter_unpack("<Q", data[:full]):
        v3 ^= m
        v0, v1, v2, v3 = _sipround(*_sipround(v0, v1, v2, v3))
        v0 ^= m
    last = ((n & 0xFF) << 56) | int.from_bytes(data[full:], "little")
    v3 ^= last
    v0, v1, v2, v3 = _sipround(*_sipround(v0, v1, v2, v3))
    v0 ^= last
    v2 ^= 0xFF
    for _ in range(4):
        v0, v1, v2, v3 = _sipround(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3
