"""TF's ``SparseCrossHashed`` for dense inputs: the hashed feature crosses behind Keras's ``HashedCrossing``.

Each row of the ``(batch, k_i)`` inputs is crossed with the same row of the others (every combination of one
value per input, in TF's order); a cross's id is FarmHash's ``FingerprintCat64`` fold, from TF's hash key
``0xDECAFCAFFE``, of each value's hash (``Fingerprint64`` of a string, the two's-complement bits of an int64),
modulo ``num_buckets``. The outputs are TF's sparse triple ``(indices, values, dense_shape)``. Not
differentiable (its outputs are integer ids).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops.registry import NotDifferentiable, defop

_MASK = (1 << 64) - 1
_MUL = 0xC6A4A7935BD1E995
HASH_KEY = 0xDECAFCAFFE  # TF's default hash_key of the hashed crosses


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def fingerprint_cat64(fp1: int, fp2: int) -> int:
    """TF's ``FingerprintCat64`` (tensorflow/core/platform/fingerprint.h) on unsigned 64-bit ints."""
    result = fp1 ^ _MUL
    result ^= (_shift_mix((fp2 * _MUL) & _MASK) * _MUL) & _MASK
    result = (result * _MUL) & _MASK
    result = (_shift_mix(result) * _MUL) & _MASK
    return _shift_mix(result)


def _feature_hash(value: Any) -> int:
    if isinstance(value, (bytes, str)):
        from tapeflow.ops.farmhash import fingerprint64

        return fingerprint64(value.encode() if isinstance(value, str) else value)
    return int(value) & _MASK


def _cross_kernel(*dense: np.ndarray, num_buckets: int, hash_key: int) -> tuple:
    batch = dense[0].shape[0] if dense else 0
    indices, values = [], []
    width = 0
    for b in range(batch):
        rows = [list(d[b]) for d in dense]
        for j, combo in enumerate(itertools.product(*rows)):
            h = hash_key
            for v in combo:
                h = fingerprint_cat64(h, _feature_hash(v))
            indices.append((b, j))
            values.append(h % num_buckets if num_buckets > 0 else h % ((1 << 63) - 1))
            width = max(width, j + 1)
    return (np.array(indices, np.int64).reshape(-1, 2), np.array(values, np.uint64).astype(np.int64),
            np.array([batch, width], np.int64))


def _cross_shape(specs: list, num_buckets: int, hash_key: int) -> list:
    return [((None, 2), np.dtype(np.int64)), ((None,), np.dtype(np.int64)), ((2,), np.dtype(np.int64))]


SPARSE_CROSS_HASHED = defop("SparseCrossHashed", _cross_kernel, shape=_cross_shape, num_outputs=3)
NotDifferentiable("SparseCrossHashed")


def sparse_cross_hashed_dense(inputs: list, num_buckets: int = 0, hash_key: int = HASH_KEY) -> tuple:
    """The hashed crosses of dense ``(batch, k)`` int64 or string tensors as TF's sparse triple
    ``(indices, values, dense_shape)`` (``tf.sparse.cross_hashed`` on dense inputs)."""
    ts = []
    for x in inputs:
        t = x if isinstance(x, Tensor) else convert_to_tensor(x)
        if t.dtype not in (dtypes.int64, dtypes.string):
            raise InvalidArgumentError(None, None, f"Input values must be int64 or string, got {t.dtype.name} "
                                       "[Op:SparseCrossHashed]")
        if len(t._shape_tuple()) != 2:
            raise InvalidArgumentError(None, None, "Dense inputs should be a matrix but received shape "
                                       f"{list(t._shape_tuple())} [Op:SparseCrossHashed]")
        ts.append(t)
    return execute(SPARSE_CROSS_HASHED, tuple(ts), {"num_buckets": int(num_buckets), "hash_key": int(hash_key)})
