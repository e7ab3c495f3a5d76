"""The order in which TF's checkpoint reader lists a checkpoint's keys.

``CheckpointReader.get_variable_to_shape_map()`` (and ``..._dtype_map``) in TF are a C++
``std::unordered_map<string, ...>`` filled in the bundle's (sorted) key order and handed to Python as a
dict in the map's iteration order: libstdc++'s ``std::hash<string>`` (``_Hash_bytes``, seed 0xc70f6907),
its prime bucket counts, and its rule that a node goes first in its bucket, a node of an empty bucket first
in the whole list. Programs print these dicts (TF's checkpoint migration guide), so tapeflow lists them in
the same order.
"""

from __future__ import annotations

import bisect

_M64 = (1 << 64) - 1
_MUL = (0xC6A4A793 << 32) + 0x5BD1E995
# libstdc++'s __fast_bkt and the start of its __prime_list (enough for ~2500 keys; beyond, the last prime)
_FAST = (2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13)
_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 103, 109,
           113, 127, 137, 139, 149, 157, 167, 179, 193, 199, 211, 227, 241, 257, 277, 293, 313, 337, 359, 383, 409,
           439, 467, 503, 541, 577, 619, 661, 709, 761, 823, 887, 953, 1031, 1109, 1193, 1289, 1381, 1493, 1613,
           1741, 1879, 2029, 2179, 2357, 2549, 2753, 2971, 3209, 3469, 3739, 4027, 4349, 4703, 5087, 5503, 5953,
           6427, 6949, 7517, 8123, 8783, 9497, 10273, 11113, 12011, 12983, 14033, 15173, 16411, 17749, 19183,
           20753, 22447, 24281, 26267, 28411, 30727, 33223, 35933, 38873, 42043, 45481, 49201, 53201, 57557,
           62233, 67307, 72817, 78779, 85229, 92203, 99733, 107897, 116731, 126271, 136607, 147793, 159871)


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def _hash(key: str) -> int:
    """libstdc++'s ``std::hash<std::string>`` on a 64-bit machine (``_Hash_bytes``)."""
    b = key.encode()
    n, aligned = len(b), len(b) & ~7
    h = (0xC70F6907 ^ (n * _MUL)) & _M64
    for i in range(0, aligned, 8):
        h = ((h ^ (_shift_mix(int.from_bytes(b[i:i + 8], "little") * _MUL & _M64) * _MUL & _M64)) * _MUL) & _M64
    if n & 7:
        h = ((h ^ int.from_bytes(b[aligned:], "little")) * _MUL) & _M64
    return _shift_mix(_shift_mix(h) * _MUL & _M64)


def _next_bucket_count(n: int) -> int:
    if n < len(_FAST):
        return 1 if n == 0 else _FAST[n]
    return _PRIMES[min(bisect.bisect_left(_PRIMES, n, 6), len(_PRIMES) - 1)]


def unordered_map_order(keys: list[str]) -> list[str]:
    """``keys`` in the iteration order of a ``std::unordered_map`` they were inserted into one by one."""
    hashes = {k: _hash(k) for k in keys}
    n_buckets, next_resize = 1, 0
    groups: list[list[str]] = []  # the nodes of each bucket, in the order the list reaches them (built reversed)
    where: dict[int, list[str]] = {}

    def insert(key: str) -> None:
        b = hashes[key] % n_buckets
        group = where.get(b)
        if group is None:  # an empty bucket: the node goes first in the whole list
            group = where[b] = []
            groups.append(group)
        group.append(key)  # first in its bucket

    def order() -> list[str]:
        return [k for g in reversed(groups) for k in reversed(g)]

    count = 0
    for key in keys:
        if count + 1 > next_resize:  # libstdc++'s _Prime_rehash_policy::_M_need_rehash (max load factor 1)
            min_buckets = max(count + 1, 0 if next_resize else 11)
            if min_buckets >= n_buckets:
                n_buckets = _next_bucket_count(max(min_buckets + 1, n_buckets * 2))
                next_resize = n_buckets
                old = order()
                groups, where = [], {}
                for k in old:
                    insert(k)
            else:
                next_resize = n_buckets
        insert(key)
        count += 1
    return order()
