"""Sampled losses for large output vocabularies: ``tf.nn.nce_loss`` and ``tf.nn.sampled_softmax_loss``, built as
TF builds them (``_compute_sampled_logits``): the true and ``num_sampled`` sampled classes' logits from an
embedding lookup of ``weights``/``biases``, minus the log of their expected counts, then a sigmoid (NCE) or
softmax cross-entropy. The classes come from ``tf.random.log_uniform_candidate_sampler`` (TF's Philox stream,
so a seed gives TF's samples) unless ``sampled_values`` is given. Gradients flow to ``weights``, ``biases`` and
``inputs`` through the ops they are built from.

``ComputeAccidentalHits`` (``tf.nn.compute_accidental_hits``) is TF's kernel: the (row, sample) positions where
a sampled class is one of the row's true classes, with weight ``-FLT_MAX``; not differentiable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops.registry import NotDifferentiable, defop

__all__ = ["compute_accidental_hits", "nce_loss", "sampled_softmax_loss"]


def _hits_kernel(true_classes, sampled_candidates, num_true=1, seed=0, seed2=0):
    op = "ComputeAccidentalHits"
    if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
        raise InvalidArgumentError(None, None, f"true_classes must be a matrix [batch, num_true={num_true}], got "
                                   f"shape {list(true_classes.shape)} [Op:{op}]")
    if sampled_candidates.ndim != 1:
        raise InvalidArgumentError(None, None, "sampled_candidates must be a vector, got shape "
                                   f"{list(sampled_candidates.shape)} [Op:{op}]")
    position = {int(c): k for k, c in enumerate(sampled_candidates.tolist())}  # (the last position of a repeat)
    rows, ids = [], []
    for i, row in enumerate(true_classes.tolist()):
        for c in row:
            k = position.get(int(c))
            if k is not None:
                rows.append(i)
                ids.append(k)
    weights = np.full(len(rows), -np.finfo(np.float32).max, np.float32)
    return np.asarray(rows, np.int32), np.asarray(ids, np.int64), weights


COMPUTE_ACCIDENTAL_HITS = defop(
    "ComputeAccidentalHits", _hits_kernel, num_outputs=3,
    shape=lambda specs, **attrs: [((None,), np.dtype(np.int32)), ((None,), np.dtype(np.int64)),
                                  ((None,), np.dtype(np.float32))])
NotDifferentiable("ComputeAccidentalHits")


def compute_accidental_hits(true_classes: Any, sampled_candidates: Any, num_true: int, seed: Any = None,
                            name: Any = None) -> tuple[Tensor, Tensor, Tensor]:
    """``tf.nn.compute_accidental_hits``: ``(indices, ids, weights)`` of the sampled candidates that are true
    classes of a row: row ``indices[k]``, sample position ``ids[k]``, ``weights[k] = -FLT_MAX`` (to add to those
    logits)."""
    return execute(COMPUTE_ACCIDENTAL_HITS, (convert_to_tensor(true_classes, dtype=dtypes.int64),
                                             convert_to_tensor(sampled_candidates, dtype=dtypes.int64)),
                   {"num_true": int(num_true)})


def _sum_rows(x: Tensor) -> Tensor:
    """TF's ``_sum_rows``: a matmul with a column of ones (TF's summation order)."""
    from tapeflow.ops import array_ops as ao
    from tapeflow.ops import math_ops as mo

    return ao.reshape(mo.matmul(x, ao.ones(ao.stack([ao.shape(x)[1], 1]), x.dtype)), [-1])


def _sampled_logits(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int, num_classes: int,
                    num_true: int, sampled_values: Any, remove_accidental_hits: bool, seed: Any) -> tuple:
    from tapeflow.ops import array_ops as ao
    from tapeflow.ops import math_ops as mo
    from tapeflow.ops.candidate_sampling_ops import log_uniform_candidate_sampler
    from tapeflow.ops.indexing_ops import tensor_scatter_nd_update
    from tapeflow.ops.nn.embedding import embedding_lookup

    if isinstance(weights, (list, tuple)):
        if len(weights) != 1:
            raise NotImplementedError("sampled losses over partitioned weights (a list of shards) are not "
                                      "implemented in tapeflow")
        weights = weights[0]
    inputs = inputs if isinstance(inputs, Tensor) else convert_to_tensor(inputs)
    labels = labels if isinstance(labels, Tensor) else convert_to_tensor(labels)
    if labels.dtype != dtypes.int64:
        labels = mo.cast(labels, dtypes.int64)
    labels_flat = ao.reshape(labels, [-1])
    if sampled_values is None:
        sampled_values = log_uniform_candidate_sampler(labels, num_true, num_sampled, True, num_classes, seed=seed)
    sampled, true_expected, sampled_expected = (ao.stop_gradient(s) for s in sampled_values)
    sampled = mo.cast(sampled, dtypes.int64)
    n_true = ao.shape(labels_flat)[0]
    all_ids = ao.concat([labels_flat, sampled], 0)
    all_w = embedding_lookup(weights, all_ids)
    if all_w.dtype != inputs.dtype:
        all_w = mo.cast(all_w, inputs.dtype)
    true_w, sampled_w = all_w[:n_true], all_w[n_true:]
    sampled_logits = mo.matmul(inputs, sampled_w, transpose_b=True)
    all_b = embedding_lookup(biases, all_ids)
    if all_b.dtype != inputs.dtype:
        all_b = mo.cast(all_b, inputs.dtype)
    true_b, sampled_b = all_b[:n_true], all_b[n_true:]
    dim = ao.shape(true_w)[1:2]
    dots = ao.expand_dims(inputs, 1) * ao.reshape(true_w, ao.concat([[-1, num_true], dim], 0))
    true_logits = ao.reshape(_sum_rows(ao.reshape(dots, ao.concat([[-1], dim], 0))), [-1, num_true])
    true_logits = true_logits + ao.reshape(true_b, [-1, num_true])
    sampled_logits = sampled_logits + sampled_b
    if remove_accidental_hits:
        rows, ids, hit_weights = compute_accidental_hits(labels, sampled, num_true=num_true)
        index = ao.stack([rows, mo.cast(ids, dtypes.int32)], axis=1)
        hits = tensor_scatter_nd_update(ao.zeros_like(sampled_logits), index,
                                        mo.cast(hit_weights, sampled_logits.dtype))
        sampled_logits = sampled_logits + hits
    true_logits = true_logits - mo.log(true_expected)
    sampled_logits = sampled_logits - mo.log(sampled_expected)
    logits = ao.concat([true_logits, sampled_logits], 1)
    out_labels = ao.concat([ao.ones_like(true_logits) / num_true, ao.zeros_like(sampled_logits)], 1)
    return logits, out_labels


def nce_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int, num_classes: int,
             num_true: int = 1, sampled_values: Any = None, remove_accidental_hits: bool = False,
             name: str = "nce_loss") -> Tensor:
    """``tf.nn.nce_loss``: the noise-contrastive estimation loss ``[batch]`` of ``inputs`` ``[batch, dim]``
    against ``labels`` ``[batch, num_true]`` (int64 classes), with class embeddings ``weights`` ``[num_classes,
    dim]`` and ``biases`` ``[num_classes]`` and ``num_sampled`` negative classes per batch."""
    from tapeflow.ops.nn.losses import sigmoid_cross_entropy_with_logits

    logits, labels = _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                                     sampled_values, remove_accidental_hits, None)
    return _sum_rows(sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))


def sampled_softmax_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int,
                         num_classes: int, num_true: int = 1, sampled_values: Any = None,
                         remove_accidental_hits: bool = True, seed: Any = None,
                         name: str = "sampled_softmax_loss") -> Tensor:
    """``tf.nn.sampled_softmax_loss``: the softmax cross-entropy ``[batch]`` over each row's true classes and
    ``num_sampled`` sampled ones (an estimate of the full softmax loss over ``num_classes``), sampled classes that
    are true classes removed (``remove_accidental_hits``)."""
    from tapeflow.ops import array_ops as ao
    from tapeflow.ops.nn.losses import softmax_cross_entropy_with_logits

    logits, labels = _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                                     sampled_values, remove_accidental_hits, seed)
    return softmax_cross_entropy_with_logits(labels=ao.stop_gradient(labels), logits=logits)
