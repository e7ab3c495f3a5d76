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
