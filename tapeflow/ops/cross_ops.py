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


def _feature_rows(arrays: tuple, kinds: Any, op: str) -> list:
    """Each input's values row by row, as TF's SparseCross kernels take them: the sparse inputs (``indices,
    values, dense_shape``) first, then the dense ``(batch, k)`` ones, each group in the given order."""
    kinds = "d" * len(arrays) if kinds is None else kinds
    it = iter(arrays)
    sparse, dense = [], []
    for k in kinds:
        if k == "s":
            idx, vals, shape = next(it), next(it), next(it)
            rows: list = [[] for _ in range(int(np.asarray(shape).reshape(-1)[0]))]
            for r, v in zip(np.asarray(idx)[:, 0].tolist(), list(vals)):
                rows[r].append(v)
            sparse.append(rows)
        else:
            d = next(it)
            dense.append([list(row) for row in d])
    feats = sparse + dense
    for i, f in enumerate(feats[1:], 1):
        if len(f) != len(feats[0]):
            where = f"dense tensor {i - len(sparse)}" if i >= len(sparse) else f"sparse tensor {i}"
            raise InvalidArgumentError(None, None, f"Expected batch size {len(feats[0])} got {len(f)} at {where} "
                                       f"[Op:{op}]")
    return feats


def _crosses(feats: list) -> tuple:
    """(indices, crosses): every combination of one value per input, row by row, the first input slowest."""
    indices, combos = [], []
    width = 0
    batch = len(feats[0]) if feats else 0
    for b in range(batch):
        for j, combo in enumerate(itertools.product(*[f[b] for f in feats])):
            indices.append((b, j))
            combos.append(combo)
            width = max(width, j + 1)
    return np.array(indices, np.int64).reshape(-1, 2), combos, np.array([batch, width], np.int64)


def _cross_kernel(*arrays: np.ndarray, num_buckets: int, hash_key: int, kinds: Any = None) -> tuple:
    indices, combos, shape = _crosses(_feature_rows(arrays, kinds, "SparseCrossHashed"))
    values = []
    for combo in combos:
        h = hash_key
        for v in combo:
            h = fingerprint_cat64(h, _feature_hash(v))
        values.append(h % num_buckets if num_buckets > 0 else h % ((1 << 63) - 1))
    return indices, np.array(values, np.uint64).astype(np.int64), shape


def _cross_shape(specs: list, num_buckets: int = 0, hash_key: int = 0, kinds: Any = None,
                 separator: Any = None) -> list:
    return [((None, 2), np.dtype(np.int64)), ((None,), specs[0][1] if separator is None else np.dtype(object)),
            ((2,), np.dtype(np.int64))]


def _as_bytes(v: Any) -> bytes:
    return v if isinstance(v, bytes) else (v.encode() if isinstance(v, str) else str(int(v)).encode())


def _cross_strings_kernel(*arrays: np.ndarray, kinds: Any, separator: str) -> tuple:
    indices, combos, shape = _crosses(_feature_rows(arrays, kinds, "SparseCrossV2"))
    sep = separator.encode()
    values = np.empty(len(combos), dtype=object)
    for i, combo in enumerate(combos):
        values[i] = sep.join(_as_bytes(v) for v in combo)
    return indices, values, shape


SPARSE_CROSS_V2 = defop("SparseCrossV2", _cross_strings_kernel, shape=_cross_shape, num_outputs=3)
NotDifferentiable("SparseCrossV2")


SPARSE_CROSS_HASHED = defop("SparseCrossHashed", _cross_kernel, shape=lambda specs, **attrs: [
    ((None, 2), np.dtype(np.int64)), ((None,), np.dtype(np.int64)), ((2,), np.dtype(np.int64))], num_outputs=3)
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


def _cross_inputs(inputs: Any, op: str) -> tuple:
    """The flat component tensors of ``tf.sparse.cross``'s inputs and their kinds ("s" sparse, "d" dense); an
    integer input is int64 (as TF casts it), a dense one a matrix."""
    from tapeflow.framework.sparse_tensor import SparseTensor
    from tapeflow.ops import math_ops

    if not isinstance(inputs, (list, tuple)):
        raise TypeError("Inputs must be a list")
    flat, kinds = [], ""
    for x in inputs:
        if isinstance(x, SparseTensor):
            v = x.values if x.dtype in (dtypes.int64, dtypes.string) else math_ops.cast(x.values, dtypes.int64)
            flat += [x.indices, v, x.dense_shape]
            kinds += "s"
            continue
        t = x if isinstance(x, Tensor) else convert_to_tensor(x)
        if t.dtype not in (dtypes.int64, dtypes.string):
            t = math_ops.cast(t, dtypes.int64)
        if len(t._shape_tuple()) != 2:
            raise InvalidArgumentError(None, None, "Dense inputs should be a matrix but received shape "
                                       f"{list(t._shape_tuple())} [Op:{op}]")
        flat.append(t)
        kinds += "d"
    return tuple(flat), kinds


def sparse_cross(inputs: Any, separator: str | None = None) -> tuple:
    """``tf.sparse.cross``'s triple ``(indices, values, dense_shape)``: the crosses of string / int inputs joined
    by ``separator`` (``"_X_"``)."""
    flat, kinds = _cross_inputs(inputs, "SparseCrossV2")
    return execute(SPARSE_CROSS_V2, flat, {"kinds": kinds, "separator": "_X_" if separator is None else separator})


def sparse_cross_hashed(inputs: Any, num_buckets: int = 0, hash_key: int | None = None) -> tuple:
    """``tf.sparse.cross_hashed``'s triple: each cross's FarmHash fold, modulo ``num_buckets``."""
    flat, kinds = _cross_inputs(inputs, "SparseCrossHashed")
    return execute(SPARSE_CROSS_HASHED, flat, {"num_buckets": int(num_buckets),
                                               "hash_key": HASH_KEY if hash_key is None else int(hash_key),
                                               "kinds": kinds})
