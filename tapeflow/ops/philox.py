"""TF's Philox-4x32-10 counter-based generator and its distributions, bit-equal to TF's CPU kernels.

A stream is a 64-bit ``key`` and a 128-bit ``counter``. One Philox call maps
(counter, key) to four uint32 words; TF's kernels fill an output in groups,
group ``i`` using ``counter + i`` (distributions with a fixed sample count:
uniform, normal, integers) or ``counter + 256 * i`` (truncated normal, which
may reject samples and reads its words one at a time). Every draw then
advances the stream's counter by ``256 * num_elements``, as TF's ops do.

The float transforms follow TF's ``random_distributions.h``: a uint32 becomes
a float in [1, 2) from its low 23 bits, minus one; a normal pair comes from
Box-Muller on two such floats. TF calls the C library's ``logf``/``sincosf``
(``log``/``sin``/``cos`` for doubles), which are not always correctly rounded;
draws of up to ``EXACT_MAX`` numbers call the same C functions (through
ctypes), so they are bit-equal to TF on the same platform; larger draws use
NumPy's float64 functions rounded to float32, which differ from the C
library in the last bit of about 1% of float32 normals.
"""

from __future__ import annotations

import ctypes
import functools
import math

import numpy as np

from tapeflow.ops import _libm

EXACT_MAX = 1024  # Box-Muller draws up to this many numbers use the C library's functions, as TF


@functools.cache
def _libm_fns():
    """The C library's ``logf`` and ``sincosf`` (ctypes), or None."""
    lib = _libm.libm()
    try:
        logf, sincosf = lib.logf, lib.sincosf
    except AttributeError:  # no C math library with these names: NumPy's functions only
        return None
    logf.restype, logf.argtypes = ctypes.c_float, [ctypes.c_float]
    ptr = ctypes.POINTER(ctypes.c_float)
    sincosf.restype, sincosf.argtypes = None, [ctypes.c_float, ptr, ptr]
    return logf, sincosf


def _log_sincos_f32(u1: np.ndarray, v1: np.ndarray) -> tuple:
    """float32 ``logf(u1)``, ``sinf(v1)``, ``cosf(v1)``: the C library's for small draws, else NumPy's."""
    fns = _libm_fns() if u1.size * 2 <= EXACT_MAX else None
    if fns is not None:
        logf, sincosf = fns
        s, c = ctypes.c_float(), ctypes.c_float()
        ps, pc = ctypes.byref(s), ctypes.byref(c)
        lg = np.empty(u1.size, np.float32)
        sn = np.empty(u1.size, np.float32)
        cs = np.empty(u1.size, np.float32)
        for i, (a, b) in enumerate(zip(u1.tolist(), v1.tolist())):
            lg[i] = logf(a)
            sincosf(b, ps, pc)
            sn[i], cs[i] = s.value, c.value
        return lg, sn, cs
    v = v1.astype(np.float64)
    return (np.log(u1.astype(np.float64)).astype(np.float32), np.sin(v).astype(np.float32),
            np.cos(v).astype(np.float32))

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_LOW = np.uint64(0xFFFFFFFF)
_MASK64 = (1 << 64) - 1
_MASK128 = (1 << 128) - 1


_BLOCK_GROUPS = 16384  # Philox calls per block: a round's six uint64 arrays (768 KiB) stay in cache
_S32 = np.uint64(32)


def _round_keys(key: int) -> list:
    k0, k1 = key & 0xFFFFFFFF, (key >> 32) & 0xFFFFFFFF
    keys = []
    for _ in range(10):
        keys.append((np.uint64(k0), np.uint64(k1)))
        k0, k1 = (k0 + _W0) & 0xFFFFFFFF, (k1 + _W1) & 0xFFFFFFFF
    return keys


def _rounds(c0, c1, c2, c3, keys: list, out: np.ndarray) -> None:
    """The ten rounds on one block (uint64 arrays holding 32-bit words, updated in place) into ``out``."""
    p0, p1 = np.empty_like(c0), np.empty_like(c0)
    for k0, k1 in keys:
        np.multiply(c0, _M0, out=p0)
        np.multiply(c2, _M1, out=p1)
        np.right_shift(p1, _S32, out=c0)  # c0's old value is spent (in p0)
        c0 ^= c1
        c0 ^= k0
        np.bitwise_and(p1, _LOW, out=c1)
        np.right_shift(p0, _S32, out=c2)
        c2 ^= c3
        c2 ^= k1
        np.bitwise_and(p0, _LOW, out=c3)
    out[:, 0], out[:, 1], out[:, 2], out[:, 3] = c0, c1, c2, c3


def philox(counters: np.ndarray, key: int) -> np.ndarray:
    """Philox-4x32-10 of ``counters`` (uint32 [n, 4], word 0 lowest) under the 64-bit ``key``: uint32 [n, 4]."""
    keys, n = _round_keys(key), counters.shape[0]
    out = np.empty((n, 4), np.uint32)
    for a in range(0, n, _BLOCK_GROUPS):
        blk = counters[a:a + _BLOCK_GROUPS]
        _rounds(*(blk[:, i].astype(np.uint64) for i in range(4)), keys, out[a:a + _BLOCK_GROUPS])
    return out


def _counter_words(counter: int, n: int, stride: int) -> tuple:
    """The four uint64-held 32-bit words (lowest first) of the 128-bit ``counter + stride * i``, i < n."""
    lo, hi = counter & _MASK64, counter >> 64
    i = np.arange(n, dtype=np.uint64) * np.uint64(stride)
    low = np.uint64(lo) + i  # wraps mod 2**64
    high = (low < i).astype(np.uint64)  # (lo + i overflowed)
    high += np.uint64(hi & _MASK64)
    return low & _LOW, low >> _S32, high & _LOW, high >> _S32


def _counters(counter: int, n: int, stride: int = 1) -> np.ndarray:
    """uint32 [n, 4]: the 128-bit ``counter + stride * i`` for i < n, as words (lowest first)."""
    return np.stack(_counter_words(counter, n, stride), axis=1).astype(np.uint32)


def words(counter: int, key: int, groups: int, stride: int = 1) -> np.ndarray:
    """The uint32 [groups, 4] words of ``groups`` Philox calls from ``counter`` (step ``stride``)."""
    keys = _round_keys(key)
    out = np.empty((groups, 4), np.uint32)
    for a in range(0, groups, _BLOCK_GROUPS):
        b = min(groups, a + _BLOCK_GROUPS)
        start = (counter + stride * a) & _MASK128
        _rounds(*_counter_words(start, b - a, stride), keys, out[a:b])
    return out


def _uint32_to_float(x: np.ndarray) -> np.ndarray:
    return ((x & np.uint32(0x7FFFFF)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1.0)


def _uint64_to_double(x0: np.ndarray, x1: np.ndarray) -> np.ndarray:
    man = ((x0.astype(np.uint64) & np.uint64(0xFFFFF)) << np.uint64(32)) | x1.astype(np.uint64)
    return (man | (np.uint64(1023) << np.uint64(52))).view(np.float64) - 1.0


def _box_muller_float(x0: np.ndarray, x1: np.ndarray) -> tuple:
    u1 = np.maximum(_uint32_to_float(x0), np.float32(1.0e-7))
    v1 = (2.0 * np.pi * _uint32_to_float(x1).astype(np.float64)).astype(np.float32)
    lg, sn, cs = _log_sincos_f32(u1, v1)
    u2 = np.sqrt(np.float32(-2.0) * lg)
    return sn * u2, cs * u2


def _box_muller_double(x0, x1, x2, x3) -> tuple:
    u1 = np.maximum(_uint64_to_double(x0, x1), 1.0e-34)
    v1 = 2.0 * np.pi * _uint64_to_double(x2, x3)
    if u1.size * 2 <= EXACT_MAX:  # Python's math module calls the C library's log/sin/cos, as TF
        u2 = np.sqrt(-2.0 * np.asarray([math.log(x) for x in u1.tolist()]))
        return np.asarray([math.sin(x) for x in v1.tolist()]) * u2, np.asarray([math.cos(x) for x in v1.tolist()]) * u2
    u2 = np.sqrt(-2.0 * np.log(u1))
    return np.sin(v1) * u2, np.cos(v1) * u2


def _take(flat: np.ndarray, n: int, shape: tuple, dtype) -> np.ndarray:
    return flat[:n].astype(dtype, copy=False).reshape(shape)


def uniform(counter: int, key: int, shape: tuple, dtype) -> np.ndarray:
    """Floats in [0, 1) (TF's ``UniformDistribution``); float16/bfloat16 are float32 draws rounded."""
    n = int(np.prod(shape, dtype=np.int64))
    if np.dtype(dtype) == np.float64:
        w = words(counter, key, (n + 1) // 2)
        out = np.stack([_uint64_to_double(w[:, 0], w[:, 1]), _uint64_to_double(w[:, 2], w[:, 3])], axis=1)
        return _take(out.reshape(-1), n, shape, dtype)
    w = words(counter, key, (n + 3) // 4)  # our own buffer: turned into floats in place
    w &= np.uint32(0x7FFFFF)
    w |= np.uint32(0x3F800000)
    f = w.view(np.float32)
    f -= np.float32(1.0)
    return _take(f.reshape(-1), n, shape, dtype)


def normal(counter: int, key: int, shape: tuple, dtype) -> np.ndarray:
    """Standard normal samples (TF's ``NormalDistribution``, Box-Muller)."""
    n = int(np.prod(shape, dtype=np.int64))
    if np.dtype(dtype) == np.float64:
        w = words(counter, key, (n + 1) // 2)
        out = np.stack(_box_muller_double(w[:, 0], w[:, 1], w[:, 2], w[:, 3]), axis=1)
        return _take(out.reshape(-1), n, shape, dtype)
    w = words(counter, key, (n + 3) // 4)
    a = _box_muller_float(w[:, 0], w[:, 1])
    b = _box_muller_float(w[:, 2], w[:, 3])
    return _take(np.stack([a[0], a[1], b[0], b[1]], axis=1).reshape(-1), n, shape, dtype)


def truncated_normal(counter: int, key: int, shape: tuple, dtype) -> np.ndarray:
    """Standard normal samples with |x| < 2 (TF's ``TruncatedNormalDistribution``): each group of
    outputs (4 floats, 2 doubles) reads words from its own stream ``counter + 256 * group`` and keeps
    the Box-Muller samples inside the bounds."""
    n = int(np.prod(shape, dtype=np.int64))
    double = np.dtype(dtype) == np.float64
    per = 2 if double else 4
    groups = (n + per - 1) // per
    out = np.empty((groups, per), np.float64 if double else np.float32)
    filled = np.zeros(groups, np.int64)
    block = 0
    todo = np.arange(groups)
    while todo.size:
        base = _counters(counter, groups, 256)[todo].astype(np.uint64)
        # block ``block`` of each pending group's stream: its counter plus ``block``
        low = (base[:, 0] | (base[:, 1] << np.uint64(32))) + np.uint64(block)
        carry = (low < np.uint64(block)).astype(np.uint64)
        high = (base[:, 2] | (base[:, 3] << np.uint64(32))) + carry
        ctr = np.stack([low & _LOW, low >> np.uint64(32), high & _LOW, high >> np.uint64(32)], 1).astype(np.uint32)
        w = philox(ctr, key)
        if double:
            samples = np.stack(_box_muller_double(w[:, 0], w[:, 1], w[:, 2], w[:, 3]), axis=1)
        else:
            a, b = _box_muller_float(w[:, 0], w[:, 1]), _box_muller_float(w[:, 2], w[:, 3])
            samples = np.stack([a[0], a[1], b[0], b[1]], axis=1)
        for j in range(samples.shape[1]):
            ok = (np.abs(samples[:, j]) < 2.0) & (filled[todo] < per)
            rows = todo[ok]
            out[rows, filled[rows]] = samples[ok, j]
            filled[rows] += 1
        todo = todo[filled[todo] < per]
        block += 1
    return _take(out.reshape(-1), n, shape, dtype)


def uniform_int(counter: int, key: int, shape: tuple, lo: int, hi: int, dtype) -> np.ndarray:
    """Integers in [lo, hi): ``lo + word % (hi - lo)`` (one uint32 word each for 32-bit types, two for 64-bit)."""
    n = int(np.prod(shape, dtype=np.int64))
    span = (int(hi) - int(lo)) & _MASK64
    if np.dtype(dtype).itemsize == 8:
        w = words(counter, key, (n + 1) // 2).reshape(-1, 2).astype(np.uint64)
        bits = w[:, 0] | (w[:, 1] << np.uint64(32))
        r = bits % np.uint64(span)
        out = (r + np.uint64(int(lo) & _MASK64)).view(np.int64)
        return _take(out, n, shape, dtype) if np.dtype(dtype).kind == "i" else _take(out.view(np.uint64), n, shape,
                                                                                      dtype)
    w = words(counter, key, (n + 3) // 4).reshape(-1)
    r = w % np.uint32(span & 0xFFFFFFFF)
    out = (r + np.uint32(int(lo) & 0xFFFFFFFF)).view(np.int32)
    return _take(out if np.dtype(dtype).kind == "i" else out.view(np.uint32), n, shape, dtype)


def uniform_full_int(counter: int, key: int, shape: tuple, dtype) -> np.ndarray:
    """Integers over the whole range of ``dtype`` (the raw words; two per 64-bit value)."""
    n = int(np.prod(shape, dtype=np.int64))
    if np.dtype(dtype).itemsize == 8:
        w = words(counter, key, (n + 1) // 2).reshape(-1, 2).astype(np.uint64)
        return _take((w[:, 0] | (w[:, 1] << np.uint64(32))).view(np.dtype(dtype)), n, shape, dtype)
    w = words(counter, key, (n + 3) // 4).reshape(-1)
    return _take(w.view(np.dtype(dtype)), n, shape, dtype)


def stateless_key_counter(seed0: int, seed1: int) -> tuple[int, int]:
    """TF's scramble of a stateless seed pair into a Philox (key, counter)."""
    s0, s1 = int(seed0) & _MASK64, int(seed1) & _MASK64
    ctr = np.array([[s0 & 0xFFFFFFFF, s0 >> 32, s1 & 0xFFFFFFFF, s1 >> 32]], dtype=np.uint32)
    mix = philox(ctr, 0x02461E29_3EC8F720)[0].astype(np.uint64)
    key = int(mix[0]) | (int(mix[1]) << 32)
    counter = (int(mix[2]) | (int(mix[3]) << 32)) << 64
    return key, counter


def advance(counter: int, n: int) -> int:
    """``counter`` after a draw of ``n`` elements (TF skips 256 Philox calls per element)."""
    return (counter + 256 * int(n)) & _MASK128


def categorical(counter: int, key: int, logits: np.ndarray, num_samples: int, dtype) -> np.ndarray:
    """Class indices per row of ``logits`` (TF's CPU ``Multinomial`` kernel): each sample takes two words
    as a double ``u`` in [0, 1) and is the first class whose running (unnormalized) probability exceeds
    ``u`` times the row's total; non-finite logits add no probability. The words run on across rows
    (TF's kernel in one shard, which is what it does for small batches)."""
    x = np.asarray(logits)
    batch, _ = x.shape
    finite = np.isfinite(x)
    low = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.finfo(np.float64).min
    mx = np.where(finite, x, low).max(axis=1, keepdims=True).astype(np.float64)
    cdf = np.cumsum(np.where(finite, np.exp(x.astype(np.float64) - mx), 0.0), axis=1)
    total = cdf[:, -1:]
    n = batch * num_samples
    w = words(counter, key, (2 * n + 3) // 4).reshape(-1)[: 2 * n]
    u = _uint64_to_double(w[0::2], w[1::2]).reshape(batch, num_samples) * total
    out = np.empty((batch, num_samples), dtype=np.int64)
    for b in range(batch):
        out[b] = np.searchsorted(cdf[b], u[b], side="right")
    return out.astype(dtype)


def categorical_elements(batch: int, num_samples: int) -> int:
    """The element count a Multinomial draw reserves (its stream advances by 256 per element): two words per
    sample, samples per row rounded up to 4, as TF's kernel."""
    return 2 * batch * ((num_samples + 3) // 4 * 4)


def permutation(counter: int, key: int, n: int) -> np.ndarray:
    """TF's RandomShuffle order of ``n`` rows: a forward Fisher-Yates, row i swapped with i + word % (n - i)."""
    w = words(counter, key, (n + 2) // 4).reshape(-1).tolist()
    order = list(range(n))
    for i in range(n - 1):
        j = i + w[i] % (n - i)
        order[i], order[j] = order[j], order[i]
    return np.asarray(order, dtype=np.int64)


class WordStream:
    """TF's ``SingleSampleAdapter<PhiloxRandom>(seed, seed2)``: uint32 words one at a time, four per Philox call,
    from key ``seed`` and counter ``seed2 << 64`` (the generator tf.data's shuffle, random and seed-generator
    kernels read)."""

    _BLOCK = 64  # Philox calls computed at once

    def __init__(self, seed: int, seed2: int) -> None:
        self._key = int(seed) & _MASK64
        self._counter = (int(seed2) & _MASK64) << 64
        self._words: list = []
        self._pos = 0

    @classmethod
    def at(cls, counter: int, key: int) -> WordStream:
        """The words from a given 128-bit ``counter`` and ``key`` (a kernel's reserved stretch of its stream)."""
        out = cls(0, 0)
        out._key, out._counter = int(key) & _MASK64, int(counter) & _MASK128
        return out

    def __call__(self) -> int:
        if self._pos == len(self._words):
            self._words = words(self._counter, self._key, self._BLOCK).reshape(-1).tolist()
            self._counter = (self._counter + self._BLOCK) & _MASK128
            self._pos = 0
        self._pos += 1
        return self._words[self._pos - 1]


def seed_pairs(seed: int, seed2: int):
    """TF's ``RandomSeedGenerator``: each new iterator's ``(seed, seed2)`` is the next two words of one stream."""
    stream = WordStream(seed, seed2)
    while True:
        yield stream(), stream()


def _c_math(fn, x: np.ndarray) -> np.ndarray:
    """``fn`` (a ``math`` function: the C library's, as TF's kernels call) on each element; a pole or domain
    error gives C's ``-inf``/``nan``."""
    out = []
    for v in x.tolist():
        try:
            out.append(fn(v))
        except (ValueError, OverflowError):
            out.append(-math.inf if v == 0 or (fn is math.log1p and v == -1) else math.nan)
    return np.asarray(out, np.float64)


class _ElementStreams:
    """Per output element, the Philox stream TF's rejection samplers (gamma, binomial) read: element ``i``
    starts at ``counter + skip * i`` and each refill of a sample buffer takes its next Philox call. A buffer
    (TF's ``SampleBuffer`` / the binomial kernel's ``UNIFORM``) holds the two doubles of one call and hands
    out the last first."""

    def __init__(self, counter: int, key: int, index: np.ndarray, skip: int, buffers: tuple) -> None:
        self.key = key
        self.base = [(counter + skip * int(i)) & _MASK128 for i in index.tolist()]
        self.calls = np.zeros(index.size, np.int64)
        self.buf = {name: (np.zeros(index.size, np.int64), np.zeros((index.size, 2))) for name in buffers}

    def _words(self, ids: np.ndarray) -> np.ndarray:
        rows = []
        for i, c in zip(ids.tolist(), self.calls[ids].tolist()):
            v = (self.base[i] + c) & _MASK128
            rows.append([v & 0xFFFFFFFF, (v >> 32) & 0xFFFFFFFF, (v >> 64) & 0xFFFFFFFF, v >> 96])
        self.calls[ids] += 1
        return philox(np.asarray(rows, np.uint32).reshape(-1, 4), self.key)

    def draw(self, name: str, ids: np.ndarray) -> np.ndarray:
        """The next double of buffer ``name`` ("uniform" or "normal") of each element in ``ids``."""
        remaining, values = self.buf[name]
        empty = ids[remaining[ids] == 0]
        if empty.size:
            w = self._words(empty)
            if name == "normal":
                values[empty, 0], values[empty, 1] = _box_muller_double(w[:, 0], w[:, 1], w[:, 2], w[:, 3])
            else:
                values[empty, 0], values[empty, 1] = _uint64_to_double(w[:, 0], w[:, 1]), _uint64_to_double(w[:, 2],
                                                                                                           w[:, 3])
            remaining[empty] = 2
        remaining[ids] -= 1
        return values[ids, remaining[ids]]


def gamma(counter: int, key: int, alpha: np.ndarray, samples_per_alpha: int) -> np.ndarray:
    """TF's CPU ``StatelessRandomGammaV2/V3`` kernel in float64 (the caller rounds to the output dtype): output
    ``i`` (alpha ``i // samples_per_alpha``) reads its own stream from ``counter + 256 * i``; alpha 1 is an
    exponential ``-log1p(-u)``, else Marsaglia-Tsang's rejection from a normal and a uniform (with an extra
    uniform ``** (1 / alpha)`` for alpha below 1). The result is laid out ``[samples_per_alpha, num_alphas]``."""
    a_flat = np.asarray(alpha, np.float64).reshape(-1)
    num = a_flat.size
    n = num * samples_per_alpha
    index = np.arange(n, dtype=np.int64)
    a = a_flat[index // samples_per_alpha] if n else a_flat[:0]
    res = np.empty(n, np.float64)
    streams = _ElementStreams(counter, key, index, 256, ("normal", "uniform"))
    ones = np.flatnonzero(a == 1.0)
    if ones.size:
        w = streams._words(ones)
        res[ones] = -_c_math(math.log1p, -_uint64_to_double(w[:, 2], w[:, 3]))
    rest = np.flatnonzero(a != 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        below = a < 1
        d = a + np.where(below, 2.0 / 3, -1.0 / 3)
        c = 1.0 / 3 / np.sqrt(d)
    bad = rest[~(c[rest] > 0) | ~np.isfinite(c[rest])]  # alpha <= -2/3 or nan: TF's loop never accepts
    res[bad] = np.nan
    active = np.setdiff1d(rest, bad)
    while active.size:
        x = streams.draw("normal", active)
        v = 1 + c[active] * x
        positive = v > 0
        ids, x, v = active[positive], x[positive], v[positive]
        v = v * v * v
        u = streams.draw("uniform", ids)
        accept = u < 1 - 0.0331 * (x * x) * (x * x)
        tail = np.flatnonzero(~accept)
        if tail.size:
            t_ids = ids[tail]
            accept[tail] = _c_math(math.log, u[tail]) < 0.5 * x[tail] * x[tail] + d[t_ids] * (
                1 - v[tail] + _c_math(math.log, v[tail]))
        done, value = ids[accept], d[ids[accept]] * v[accept]
        small = np.flatnonzero(below[done])
        if small.size:
            b = streams.draw("uniform", done[small])
            value[small] *= np.asarray([math.pow(bb, 1 / aa) for bb, aa in zip(b.tolist(), a[done[small]].tolist())])
        res[done] = value
        active = np.setdiff1d(active, done)
    out = np.empty(n, np.float64)
    out[(index % samples_per_alpha) * num + index // samples_per_alpha] = res
    return out


def _stirling_tail(k: np.ndarray) -> np.ndarray:
    table = np.array([0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                      0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                      0.00925546218271273, 0.00833056343336287])
    kp1sq = (k + 1) * (k + 1)
    big = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return np.where(k <= 9, table[np.clip(k, 0, 9).astype(np.int64)], big)


def _binomial_inversion(streams: _ElementStreams, ids: np.ndarray, count: np.ndarray, prob: np.ndarray):
    out = np.zeros(ids.size)
    geom_sum = np.zeros(ids.size)
    log_q = _c_math(math.log1p, -prob)
    todo = np.arange(ids.size)
    while todo.size:
        u = streams.draw("uniform", ids[todo])
        geom_sum[todo] += np.ceil(_c_math(math.log, u) / log_q[todo])
        over = geom_sum[todo] > count[todo]
        out[todo[~over]] += 1
        todo = todo[~over]
    return out


def _btrs(streams: _ElementStreams, ids: np.ndarray, count: np.ndarray, prob: np.ndarray):
    stddev = np.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = np.floor((count + 1) * prob)
    out = np.zeros(ids.size)
    todo = np.arange(ids.size)
    log = functools.partial(_c_math, math.log)
    while todo.size:
        u = streams.draw("uniform", ids[todo]) - 0.5
        v = streams.draw("uniform", ids[todo])
        us = 0.5 - np.abs(u)
        k = np.floor((2 * a[todo] / us + b[todo]) * u + c[todo])
        accept = (us >= 0.07) & (v <= v_r[todo])
        check = np.flatnonzero(~accept & (k >= 0) & (k <= count[todo]))
        if check.size:
            j = todo[check]
            kk, n_, mm, rr = k[check], count[j], m[j], r[j]
            lv = log(v[check] * alpha[j] / (a[j] / (us[check] * us[check]) + b[j]))
            upper = ((mm + 0.5) * log((mm + 1) / (rr * (n_ - mm + 1))) + (n_ + 1) * log((n_ - mm + 1) / (n_ - kk + 1))
                     + (kk + 0.5) * log(rr * (n_ - kk + 1) / (kk + 1)) + _stirling_tail(mm) + _stirling_tail(n_ - mm)
                     - _stirling_tail(kk) - _stirling_tail(n_ - kk))
            accept[check] = lv <= upper
        out[todo[accept]] = k[accept]
        todo = todo[~accept]
    return out


def binomial(counter: int, key: int, counts: np.ndarray, probs: np.ndarray, samples_per_batch: int) -> np.ndarray:
    """TF's CPU ``StatelessRandomBinomial`` kernel in float64: ``counts`` and ``probs`` (broadcast, flat, of
    their dtype ``T``) per batch member; output ``i`` reads its own stream (from ``counter + 42 * i`` for
    binomial inversion, where ``count * p < 10``, else ``counter + 256 * i`` for Hormann's BTRS), with
    ``p = min(prob, 1 - prob)`` as TF. Laid out ``[samples_per_batch, num_batches]``."""
    t = counts.dtype.type
    num = counts.size
    n = num * samples_per_batch
    index = np.arange(n, dtype=np.int64)
    count_t, prob_t = counts.reshape(-1)[index // samples_per_batch], probs.reshape(-1)[index // samples_per_batch]
    dcount = count_t.astype(np.float64)
    res = np.full(n, np.nan)
    zero = (dcount <= 0.0) | (prob_t <= t(0))
    res[zero] = 0.0
    full = ~zero & (prob_t >= t(1))
    res[full] = dcount[full]
    low = ~zero & ~full & (prob_t <= t(0.5))
    high = ~zero & ~full & (prob_t > t(0.5))
    q_t = np.where(high, t(1) - prob_t, prob_t).astype(counts.dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        big = (count_t * q_t) >= t(10)
    for mask, skip in ((~big, 42), (big, 256)):
        for side in (low, high):
            ids = np.flatnonzero(side & mask)
            if not ids.size:
                continue
            streams = _ElementStreams(counter, key, ids, skip, ("uniform",))
            local = np.arange(ids.size)
            dq = q_t[ids].astype(np.float64)
            draw = (_btrs if skip == 256 else _binomial_inversion)(streams, local, dcount[ids], dq)
            res[ids] = draw if side is low else dcount[ids] - draw
    out = np.empty(n, np.float64)
    out[(index % samples_per_batch) * num + index // samples_per_batch] = res
    return out


@functools.lru_cache(maxsize=1)
def _libm_f64() -> dict:
    """The C library's double ``exp``/``log``/``lgamma`` (TF's Poisson kernel calls them; Python's ``lgamma`` is
    its own), or {} without one."""
    from tapeflow.ops._libm import libm

    lib = libm()
    if lib is None:
        return {}
    fns = {}
    for name in ("exp", "log", "lgamma"):
        f = getattr(lib, name, None)
        if f is not None:
            f.restype, f.argtypes = ctypes.c_double, [ctypes.c_double]
            fns[name] = f
    return fns


def poisson(counter: int, key: int, rate: np.ndarray, samples_per_rate: int) -> np.ndarray:
    """TF's CPU ``RandomPoissonV2`` kernel (in double, its compute type): output ``i`` (rate
    ``i // samples_per_rate``) reads its own stream from ``counter + 256 * i``, two uniform doubles per Philox call
    taken last first; Knuth's product of uniforms below a rate of 10, else Hormann's transformed rejection. The
    result is laid out ``[samples_per_rate, num_rates]``."""
    libm = _libm_f64()
    exp = libm.get("exp", math.exp)
    log = libm.get("log", math.log)
    lgamma = libm.get("lgamma", math.lgamma)
    rates = np.asarray(rate, np.float64).reshape(-1).tolist()
    num = len(rates)
    n = num * samples_per_rate
    out = np.empty(n, np.float64)
    for i in range(n):
        r = rates[i // samples_per_rate]
        ctr = (counter + 256 * i) & _MASK128
        batch: list = []

        def uniform() -> float:
            nonlocal ctr, batch
            if not batch:
                w = words(ctr, key, 1)[0]
                ctr = (ctr + 1) & _MASK128
                batch = _uint64_to_double(w[[0, 2]], w[[1, 3]]).tolist()
            return batch.pop()

        if r < 10:
            exp_neg = exp(-r)
            prod, x = 1.0, 0.0
            while True:
                prod *= uniform()
                if prod <= exp_neg:
                    break
                x += 1
            value = x
        else:
            log_rate = log(r)
            b = 0.931 + 2.53 * math.sqrt(r)
            a = -0.059 + 0.02483 * b
            inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
            while True:
                u = uniform() - 0.5
                v = uniform()
                us = 0.5 - abs(u)
                k = math.floor((2 * a / us + b) * u + r + 0.43)
                if us >= 0.07 and v <= 0.9277 - 3.6224 / (b - 2):
                    value = k
                    break
                if k < 0 or (us < 0.013 and v > us):
                    continue
                s = log(v * inv_alpha / (a / (us * us) + b))
                t = -r + k * log_rate - lgamma(k + 1)
                if s <= t:
                    value = k
                    break
        out[(i % samples_per_rate) * num + i // samples_per_rate] = value
    return out
