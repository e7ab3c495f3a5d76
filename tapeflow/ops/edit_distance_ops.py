"""``EditDistance`` (``tf.edit_distance``): the Levenshtein distance between the sequences of two sparse tensors,
TF's kernel: sequences are grouped by all but the last index and ordered by it; with ``normalize`` the distance
is divided by the truth's length (a distance to an empty truth is ``inf``). Not differentiable, as in TF."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.sparse_tensor import SparseTensor
from tapeflow.framework.tensor import Tensor
from tapeflow.ops.registry import NotDifferentiable, defop

__all__ = ["edit_distance"]


def _err(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"{message} [Op:EditDistance]")


def _levenshtein(a: list, b: list) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y))
        prev = cur
    return prev[-1]


def _groups(indices: np.ndarray, values: np.ndarray) -> dict:
    out: dict = {}
    for row, v in zip(indices.tolist(), values.tolist()):
        out.setdefault(tuple(row[:-1]), []).append((row[-1], v))
    return {k: [v for _, v in sorted(g, key=lambda e: e[0])] for k, g in out.items()}


def _edit_distance_kernel(hyp_indices, hyp_values, hyp_shape, truth_indices, truth_values, truth_shape,
                          normalize=True):
    hs, ts = np.asarray(hyp_shape).reshape(-1), np.asarray(truth_shape).reshape(-1)
    if hs.shape[0] != ts.shape[0]:
        raise _err(f"Expected truth and hypothesis to have matching ranks, but their shapes are: "
                   f"[{ts.shape[0]}] and [{hs.shape[0]}]")
    if hyp_indices.ndim != 2 or hyp_indices.shape[1] != hs.shape[0]:
        raise _err(f"hypothesis_indices should be a matrix [N, {hs.shape[0]}], got shape {list(hyp_indices.shape)}")
    if truth_indices.ndim != 2 or truth_indices.shape[1] != ts.shape[0]:
        raise _err(f"truth_indices should be a matrix [N, {ts.shape[0]}], got shape {list(truth_indices.shape)}")
    out_shape = tuple(int(v) for v in np.maximum(hs, ts)[:-1])
    out = np.zeros(out_shape, np.float32)
    hyp, truth = _groups(hyp_indices, hyp_values), _groups(truth_indices, truth_values)
    for loc in set(hyp) | set(truth):
        h, t = hyp.get(loc, []), truth.get(loc, [])
        d = np.float32(_levenshtein(h, t))
        if normalize:
            with np.errstate(divide="ignore", invalid="ignore"):
                d = d / np.float32(len(t))
        out[loc] = d
    return out


def _edit_distance_shape(specs, normalize=True):
    hs = specs[2][0]
    rank = None if hs is None or hs[0] is None else hs[0] - 1
    return [(None if rank is None else (None,) * rank, np.dtype(np.float32))]


EDIT_DISTANCE = defop("EditDistance", _edit_distance_kernel, shape=_edit_distance_shape)
NotDifferentiable("EditDistance")


def edit_distance(hypothesis: Any, truth: Any, normalize: bool = True, name: str = "edit_distance") -> Tensor:
    """``tf.edit_distance``: the Levenshtein distance between the sequences of ``hypothesis`` and ``truth``
    (``tf.SparseTensor``s of the same rank R: the last index orders a sequence, the others name it); a float32
    tensor of rank R - 1. With ``normalize``, divided by the truth sequence's length.

    >>> h = tf.SparseTensor([[0, 0], [0, 1]], ["a", "b"], [1, 2])
    >>> t = tf.SparseTensor([[0, 0]], ["a"], [1, 1])
    >>> tf.edit_distance(h, t).numpy()
    array([1.], dtype=float32)
    """
    if not isinstance(hypothesis, SparseTensor):
        raise TypeError("Hypothesis must be a SparseTensor.")
    if not isinstance(truth, SparseTensor):
        raise TypeError("Truth must be a SparseTensor.")
    hv, tv = hypothesis.values, truth.values
    if hv.dtype != tv.dtype:
        raise _err(f"cannot compute EditDistance as input #4(zero-based) was expected to be a "
                   f"{dtypes.type_string(hv.dtype)} tensor but is a {dtypes.type_string(tv.dtype)} tensor")
    return execute(EDIT_DISTANCE, (hypothesis.indices, hv, hypothesis.dense_shape, truth.indices, tv,
                                   truth.dense_shape), {"normalize": bool(normalize)})
