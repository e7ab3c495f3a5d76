"""Candidate samplers (``tf.random.log_uniform_candidate_sampler``, ``uniform_candidate_sampler``), as TF's
CPU kernels: bit-equal samples from the op's Philox stream.

A kernel owns a ``GuardedPhiloxRandom(seed, seed2)``; each call reserves ``2048 * num_sampled`` 32-bit words of
it (the counter moves on ``512 * num_sampled`` steps, as TF's eager kernel cache keeps one kernel per op and
attrs) and reads them one at a time: a sample takes two words as a double ``u`` in [0, 1). The log-uniform
(Zipfian) sampler's value is ``floor(exp(u * log(range_max + 1))) - 1``, the uniform one's the two words as a
uint64 mod ``range_max``. With ``unique=True`` repeated values are drawn again; the expected counts are then
``1 - (1 - p)^num_tries`` (in float32), else ``p * num_sampled``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import _libm, philox
from tapeflow.ops.random_ops import _philox_take, _stateful, seed_attrs

_SAMPLERS = {"LogUniformCandidateSampler": "log_uniform", "UniformCandidateSampler": "uniform"}


def _sample_fn(kind: str, range_max: int):
    if kind == "log_uniform":
        log_range = math.log1p(range_max)

        def sample(rnd) -> int:
            man = ((rnd() & 0xFFFFF) << 32) | rnd()  # TF's Uint64ToDouble: 52 mantissa bits
            return (int(math.exp(man * 2.0 ** -52 * log_range)) - 1) % range_max

        def prob(v: int) -> np.float32:
            return np.float32(math.log((v + 2.0) / (v + 1.0)) / log_range)
    else:
        def sample(rnd) -> int:
            lo = rnd()
            return (lo | (rnd() << 32)) % range_max

        def prob(v: int) -> np.float32:
            return np.float32(1.0 / range_max)
    return sample, prob


@functools.cache
def _float_fns():
    """The C library's ``log1pf``/``expm1f`` (TF's kernel calls them; NumPy's float32 ones differ in the last bit
    now and then), else NumPy's."""
    import ctypes

    try:
        lib = _libm.libm()
        log1pf, expm1f = lib.log1pf, lib.expm1f
    except AttributeError:
        return lambda x: np.log1p(np.float32(x)), lambda x: np.expm1(np.float32(x))
    for fn in (log1pf, expm1f):
        fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return log1pf, expm1f


def _expected(p: np.float32, batch: int, tries: int) -> np.float32:
    if tries == batch:
        return np.float32(p * np.float32(batch))
    log1pf, expm1f = _float_fns()
    return np.float32(-expm1f(float(np.float32(tries) * np.float32(log1pf(-float(p))))))  # float32 throughout


def _kernel(name: str):
    def kernel(true_classes, seed, seed2, instance, num_true, num_sampled, unique, range_max):
        if true_classes.ndim != 2:
            raise InvalidArgumentError(None, None, f"true_classes must be a matrix [Op:{name}]")
        if true_classes.shape[1] != num_true:
            raise InvalidArgumentError(None, None, f"true_classes must have num_true columns, expected: "
                                       f"{true_classes.shape[1]} was: {num_true} [Op:{name}]")
        if unique and num_sampled > range_max:
            raise InvalidArgumentError(None, None, f"Sampler's range is too small. [Op:{name}]")
        counter, key = _philox_take((name, num_true, num_sampled, unique, range_max), seed, seed2, instance, 0,
                                    steps=(2048 * num_sampled + 3) // 4)
        rnd = philox.WordStream.at(counter, key)
        sample, prob = _sample_fn(_SAMPLERS[name], range_max)
        picked: list[int] = []
        if unique:
            used: set[int] = set()
            tries = 0
            while len(picked) < num_sampled:
                tries += 1
                v = sample(rnd)
                if v not in used:
                    used.add(v)
                    picked.append(v)
        else:
            picked = [sample(rnd) for _ in range(num_sampled)]
            tries = num_sampled
        sampled_count = np.array([_expected(prob(v), num_sampled, tries) for v in picked], np.float32)
        true_count = np.array([_expected(prob(int(v)), num_sampled, tries) for v in true_classes.reshape(-1)],
                              np.float32).reshape(true_classes.shape)
        return np.asarray(picked, np.int64), true_count, sampled_count

    return kernel


def _shape(specs, num_true, num_sampled, **attrs):
    s = specs[0][0]
    return [((num_sampled,), np.dtype(np.int64)), ((None if s is None else s[0], num_true), np.dtype(np.float32)),
            ((num_sampled,), np.dtype(np.float32))]


def _defop(name: str):
    from tapeflow.ops.registry import defop

    op = defop(name, _kernel(name), shape=_shape, num_outputs=3)
    _stateful(op)
    return op


LOG_UNIFORM_CANDIDATE_SAMPLER = _defop("LogUniformCandidateSampler")
UNIFORM_CANDIDATE_SAMPLER = _defop("UniformCandidateSampler")


def _run(op, true_classes: Any, num_true: int, num_sampled: int, unique: bool, range_max: int, seed: Any) -> tuple:
    x = true_classes if isinstance(true_classes, Tensor) else convert_to_tensor(true_classes, dtype=dtypes.int64)
    if x.dtype != dtypes.int64:
        raise InvalidArgumentError(None, None, f"cannot compute {op.name} as input #0(zero-based) was expected to be "
                                   f"a int64 tensor but is a {x.dtype.name} tensor [Op:{op.name}]")
    for what, v, least in (("num_true", num_true, 1), ("num_sampled", num_sampled, 1), ("range_max", range_max, 1)):
        if int(v) < least:
            raise InvalidArgumentError(None, None, f"Value for attr '{what}' of {int(v)} must be at least minimum "
                                       f"{least} [Op:{op.name}]")
    return tuple(execute(op, (x,), {"num_true": int(num_true), "num_sampled": int(num_sampled),
                                    "unique": bool(unique), "range_max": int(range_max), **seed_attrs(seed)}))


def log_uniform_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool,
                                  range_max: int, seed: Any = None, name: Any = None) -> tuple:
    """``tf.random.log_uniform_candidate_sampler``: ``num_sampled`` classes in ``[0, range_max)`` drawn with
    P(class) = log((class + 2) / (class + 1)) / log(range_max + 1) (classes sorted by decreasing frequency).

    Returns ``(sampled_candidates, true_expected_count, sampled_expected_count)``: int64 ``[num_sampled]``,
    float32 ``[batch_size, num_true]`` and float32 ``[num_sampled]``. ``true_classes`` is int64
    ``[batch_size, num_true]``.
    """
    return _run(LOG_UNIFORM_CANDIDATE_SAMPLER, true_classes, num_true, num_sampled, unique, range_max, seed)


def uniform_candidate_sampler(true_classes: Any, num_true: int, num_sampled: int, unique: bool, range_max: int,
                              seed: Any = None, name: Any = None) -> tuple:
    """``tf.random.uniform_candidate_sampler``: as ``log_uniform_candidate_sampler`` with uniform classes."""
    return _run(UNIFORM_CANDIDATE_SAMPLER, true_classes, num_true, num_sampled, unique, range_max, seed)
