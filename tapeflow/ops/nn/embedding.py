"""``tf.nn.embedding_lookup``."""

from __future__ import annotations

from typing import Any


from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import array_ops, math_ops
from tapeflow.ops._helpers import t
from tapeflow.ops.math_ops import greater, multiply, reduce_sum, square, where


# ============================================================================
# Embeddings
# ============================================================================

def embedding_lookup(params: Any, ids: Any, max_norm: Any = None, name: str | None = None) -> Tensor:
    """Rows of ``params`` (a tensor or Variable) at ``ids``; the gradient with
    respect to ``params`` is a ``tf.IndexedSlices`` touching only those rows.

    >>> table = tf.Variable(tf.reshape(tf.range(6.0), [3, 2]))
    >>> with tf.GradientTape() as tape:
    ...     rows = tf.nn.embedding_lookup(table, [2, 0, 2])
    >>> grad = tape.gradient(rows, table)
    >>> type(grad).__name__, grad.indices.numpy().tolist()
    ('IndexedSlices', [2, 0, 2])
    """
    if isinstance(params, (list, tuple)):
        if not params:
            raise ValueError("Need at least one param")
        if len(params) == 1:
            params = params[0]
        else:
            # TF2's "div" partition strategy: shard i holds a contiguous block of
            # ids, so the shards in order are the concatenated table. (The
            # per-shard gradients are then dense slices, not IndexedSlices.)
            params = array_ops.concat([_read(p) for p in params], axis=0)
    rows = array_ops.gather(params, ids)
    if max_norm is None:
        return rows
    # Rows longer than max_norm are scaled down to it (clip_by_norm per row).
    nd_ids = len(t(ids)._shape_tuple()) if not isinstance(ids, Tensor) else len(ids._shape_tuple())
    nd = len(rows._shape_tuple())
    axes = list(range(nd_ids, nd))
    l2sum = reduce_sum(square(rows), axis=axes, keepdims=True)
    positive = greater(l2sum, 0)
    l2norm = where(positive, math_ops.sqrt(where(positive, l2sum, array_ops.ones_like(l2sum))), l2sum)
    clip = convert_to_tensor(max_norm, dtype=rows.dtype)
    return math_ops.divide_(multiply(rows, clip), math_ops.maximum(l2norm, clip))


def _read(p: Any) -> Tensor:
    from tapeflow.framework.variables import Variable

    return p.value() if isinstance(p, Variable) else t(p)


def _sparse_segment(combiner: str, data: Tensor, ids: Tensor, segment_ids: Tensor) -> Tensor:
    from tapeflow.ops import sparse

    fn = {"sum": sparse.segment_sum, "mean": sparse.segment_mean, "sqrtn": sparse.segment_sqrt_n}[combiner]
    return fn(data, ids, segment_ids)


def embedding_lookup_sparse(params: Any, sp_ids: Any, sp_weights: Any, combiner: str | None = None,
                            max_norm: Any = None, name: str | None = None, allow_fast_lookup: bool = False) -> Tensor:
    """``tf.nn.embedding_lookup_sparse``: per row ``r`` of the ``SparseTensor`` ``sp_ids`` (ids in its values,
    rows by the first index), the rows of ``params`` at its ids combined by ``combiner``: ``"mean"`` (default),
    ``"sqrtn"`` or ``"sum"``, weighted by ``sp_weights``' values when given (``None``: weights 1). As TF, the
    result has ``max(row) + 1`` rows; gradients reach ``params`` (and the weights) as TF's.

    >>> table = tf.reshape(tf.range(8.0), [4, 2])
    >>> ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([1, 3, 2], tf.int64), [2, 2])
    >>> tf.nn.embedding_lookup_sparse(table, ids, None).numpy()
    array([[4., 5.],
           [4., 5.]], dtype=float32)
    """
    from tapeflow.framework.sparse_tensor import SparseTensor
    from tapeflow.ops import array_ops as ao
    from tapeflow.ops import indexing_ops, special_ops
    from tapeflow.ops import math_ops as mo

    combiner = "mean" if combiner is None else combiner
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner}")
    if hasattr(sp_ids, "to_sparse") and not isinstance(sp_ids, SparseTensor):  # a RaggedTensor
        sp_ids = sp_ids.to_sparse()
        if sp_weights is not None and hasattr(sp_weights, "to_sparse"):
            sp_weights = sp_weights.to_sparse()
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError(f"sp_ids must be SparseTensor, got {type(sp_ids)}")
    if sp_weights is not None and not isinstance(sp_weights, SparseTensor):
        raise TypeError(f"sp_weights must be either None or SparseTensor,got {type(sp_weights)}")
    tables = list(params) if isinstance(params, (list, tuple)) else [params]
    segment_ids = ao.gather(sp_ids.indices, 0, axis=1)
    ids = sp_ids.values
    if sp_weights is None:
        if len(tables) == 1 and max_norm is None:  # TF's fast path: a sparse segment reduction of the table
            return _sparse_segment(combiner, _read(tables[0]), ids, mo.cast(segment_ids, "int32"))
        uniq, idx = indexing_ops.unique(ids)
        rows = embedding_lookup(tables, uniq, max_norm=max_norm)
        return _sparse_segment(combiner, rows, idx, mo.cast(segment_ids, "int32"))
    uniq, idx = indexing_ops.unique(ids)
    rows = ao.gather(embedding_lookup(tables, uniq, max_norm=max_norm), idx)
    weights = sp_weights.values
    if weights.dtype != rows.dtype:
        weights = mo.cast(weights, rows.dtype)
    weights = ao.reshape(weights, [-1] + [1] * (len(rows._shape_tuple()) - 1))
    seg = mo.cast(segment_ids, "int32")
    total = special_ops.segment_sum(mo.multiply(rows, weights), seg)
    if combiner == "sum":
        return total
    norm = weights if combiner == "mean" else mo.pow(weights, 2)
    weight_sum = special_ops.segment_sum(norm, seg)
    return special_ops.divide_no_nan(total, weight_sum if combiner == "mean" else mo.sqrt(weight_sum))


def safe_embedding_lookup_sparse(embedding_weights: Any, sparse_ids: Any, sparse_weights: Any = None,
                                 combiner: str = "mean", default_id: Any = None, max_norm: Any = None,
                                 name: str | None = None, allow_fast_lookup: bool = False) -> Tensor:
    """``tf.nn.safe_embedding_lookup_sparse``: :func:`embedding_lookup_sparse` of ids of any rank (the result has
    ``sparse_ids``' leading dimensions), invalid ids (< 0) and, unless ``combiner="sum"``, non-positive weights
    dropped, and an empty row giving zeros (or the embedding of ``default_id``)."""
    from tapeflow.framework.sparse_tensor import SparseTensor
    from tapeflow.ops import array_ops as ao
    from tapeflow.ops import math_ops as mo
    from tapeflow.ops import sparse

    if embedding_weights is None:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    if not isinstance(sparse_ids, SparseTensor):
        raise TypeError(f"sparse_ids must be SparseTensor, got {type(sparse_ids)}")
    if sparse_weights is not None and not isinstance(sparse_weights, SparseTensor):
        raise TypeError(f"sparse_weights must be either None or SparseTensor, got {type(sparse_weights)}")
    tables = list(embedding_weights) if isinstance(embedding_weights, (list, tuple)) else [embedding_weights]
    if not tables:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    shape = sparse_ids.dense_shape
    rank = shape._shape_tuple()[0]
    if rank is None:
        raise NotImplementedError("tf.nn.safe_embedding_lookup_sparse of ids of unknown rank in tapeflow")
    sparse_ids = sparse.reshape(sparse_ids, ao.stack([mo.reduce_prod(shape[:rank - 1]), shape[rank - 1]]))
    if sparse_weights is not None:
        sparse_weights = SparseTensor(sparse_ids.indices, sparse_weights.values, sparse_ids.dense_shape)
    keep = mo.greater_equal(sparse_ids.values, 0)
    if sparse_weights is not None and combiner != "sum":
        keep = mo.logical_and(keep, mo.greater(sparse_weights.values, 0))
    sparse_ids = sparse.retain(sparse_ids, keep)
    if sparse_weights is not None:
        sparse_weights = sparse.retain(sparse_weights, keep)
    sparse_ids, is_row_empty = sparse.fill_empty_rows(sparse_ids, default_id or 0)
    if sparse_weights is not None:
        sparse_weights, _ = sparse.fill_empty_rows(sparse_weights, 1.0)
    result = embedding_lookup_sparse(tables, sparse_ids, sparse_weights, combiner=combiner, max_norm=max_norm)
    if default_id is None:
        empty = ao.reshape(is_row_empty, [-1] + [1] * (len(result._shape_tuple()) - 1))
        result = mo.where(empty, ao.zeros_like(result), result)
    lead = mo.cast(shape[:rank - 1], "int32")
    return ao.reshape(result, ao.concat([lead, ao.shape(result)[1:]], 0))
