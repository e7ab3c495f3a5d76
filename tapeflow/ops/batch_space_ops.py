"""``SpaceToBatchND`` and ``BatchToSpaceND`` (``tf.space_to_batch``, ``tf.space_to_batch_nd``,
``tf.batch_to_space``, ``tf.nn.space_to_batch``): blocks of the spatial dimensions moved into the batch and back.

Each is the other's adjoint, so each op's gradient is the other op (TF's rules), and higher orders follow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops.registry import defgrad, defop

__all__ = ["space_to_batch_nd", "space_to_batch", "batch_to_space_nd", "batch_to_space"]


def _err(op: str, message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"{message} [Op:{op}]")


def _dims(shape: Any) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _block_args(x: np.ndarray, block_shape: np.ndarray, pads: np.ndarray, op: str, what: str) -> tuple:
    block = np.asarray(block_shape).astype(np.int64)
    if block.ndim != 1:
        raise _err(op, f"block_shape must be one-dimensional, got shape {_dims(block.shape)}")
    m = block.shape[0]
    pads = np.asarray(pads).astype(np.int64)
    if pads.shape != (m, 2):
        raise _err(op, f"{what} should have shape [{m}, 2] instead of {_dims(pads.shape)}")
    if x.ndim < 1 + m:
        raise _err(op, f"input rank should be >= {1 + m} instead of {x.ndim}")
    if np.any(block < 1):
        raise _err(op, f"All values in block_shape must be positive, got value, {block.tolist()}")
    if np.any(pads < 0):
        raise _err(op, f"All values in {what} must be non-negative, got value, {pads.tolist()}")
    return block, pads, m


def _space_to_batch_kernel(x, block_shape, paddings):
    op = "SpaceToBatchND"
    block, pads, m = _block_args(x, block_shape, paddings, op, "paddings")
    padded = np.pad(x, [(0, 0)] + [tuple(p) for p in pads] + [(0, 0)] * (x.ndim - 1 - m))
    spatial = padded.shape[1:1 + m]
    for i in range(m):
        if spatial[i] % block[i]:
            raise _err(op, f"padded_shape[{i}]={spatial[i]} is not divisible by block_shape[{i}]={block[i]}")
    batch, rest = x.shape[0], padded.shape[1 + m:]
    split = [batch]
    for i in range(m):
        split += [spatial[i] // block[i], int(block[i])]
    y = padded.reshape(split + list(rest))
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + list(range(1 + 2 * m, y.ndim))
    y = y.transpose(perm)
    return np.ascontiguousarray(y.reshape([batch * int(np.prod(block))] + [s // b for s, b in zip(spatial, block)]
                                          + list(rest)))


def _batch_to_space_kernel(x, block_shape, crops):
    op = "BatchToSpaceND"
    block, crops, m = _block_args(x, block_shape, crops, op, "crops")
    prod = int(np.prod(block))
    if x.shape[0] % prod:
        raise _err(op, f"Input batch dimension ({x.shape[0]}) is not divisible by product of block sizes ({prod})")
    batch = x.shape[0] // prod
    spatial, rest = x.shape[1:1 + m], x.shape[1 + m:]
    y = x.reshape([int(b) for b in block] + [batch] + list(spatial) + list(rest))
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, y.ndim))
    y = y.transpose(perm).reshape([batch] + [s * int(b) for s, b in zip(spatial, block)] + list(rest))
    full = y.shape[1:1 + m]
    for i in range(m):
        if crops[i].sum() > full[i]:
            raise _err(op, f"Crops must be non-negative and their sum must not exceed the block size times the input "
                       f"size: crops[{i}]={crops[i].tolist()}, size {full[i]}")
    index = (slice(None),) + tuple(slice(int(c[0]), full[i] - int(c[1])) for i, c in enumerate(crops))
    return np.ascontiguousarray(y[index])


def _s2b_shape(specs, block=None, pads=None):
    s, dt = specs[0]
    if s is None or block is None:
        return [(None if s is None else (None,) * len(s), dt)]
    m = len(block)
    b0 = None if s[0] is None else s[0] * int(np.prod(block))
    spatial = tuple(None if s[1 + i] is None else (s[1 + i] + pads[i][0] + pads[i][1]) // block[i] for i in range(m))
    return [((b0,) + spatial + tuple(s[1 + m:]), dt)]


def _b2s_shape(specs, block=None, pads=None):
    s, dt = specs[0]
    if s is None or block is None:
        return [(None if s is None else (None,) * len(s), dt)]
    m = len(block)
    b0 = None if s[0] is None else s[0] // int(np.prod(block))
    spatial = tuple(None if s[1 + i] is None else s[1 + i] * block[i] - pads[i][0] - pads[i][1] for i in range(m))
    return [((b0,) + spatial + tuple(s[1 + m:]), dt)]


SPACE_TO_BATCH_ND = defop("SpaceToBatchND", lambda x, b, p, block=None, pads=None: _space_to_batch_kernel(x, b, p),
                          shape=_s2b_shape)
BATCH_TO_SPACE_ND = defop("BatchToSpaceND", lambda x, b, c, block=None, pads=None: _batch_to_space_kernel(x, b, c),
                          shape=_b2s_shape)


@defgrad("SpaceToBatchND", inputs=True)
def _space_to_batch_grad(op, grad):
    return [execute(BATCH_TO_SPACE_ND, (grad, op.inputs[1], op.inputs[2]),
                    {"block": op.get_attr("block"), "pads": op.get_attr("pads")}), None, None]


@defgrad("BatchToSpaceND", inputs=True)
def _batch_to_space_grad(op, grad):
    return [execute(SPACE_TO_BATCH_ND, (grad, op.inputs[1], op.inputs[2]),
                    {"block": op.get_attr("block"), "pads": op.get_attr("pads")}), None, None]


def _int_input(v: Any) -> Tensor:
    if isinstance(v, Tensor):
        return v
    arr = np.asarray(v)
    return convert_to_tensor(arr.astype(np.int32) if arr.dtype.kind in "iu" or arr.size == 0 else arr,
                             dtype=dtypes.int32 if arr.dtype.kind in "iu" or arr.size == 0 else None)


def _attrs(block_shape: Any, pads: Any) -> dict:
    """The block sizes and paddings when known in Python (static output shapes while tracing)."""
    def known(v: Any) -> Any:
        if isinstance(v, Tensor):
            try:
                return v.numpy()
            except AttributeError:  # a symbolic tensor
                return None
        return v

    block, p = known(block_shape), known(pads)
    if block is None or p is None:
        return {"block": None, "pads": None}
    try:
        return {"block": tuple(int(b) for b in np.asarray(block).reshape(-1)),
                "pads": tuple(tuple(int(v) for v in row) for row in np.asarray(p).reshape(-1, 2))}
    except (TypeError, ValueError):
        return {"block": None, "pads": None}


def _run(op: Any, x: Any, block_shape: Any, pads: Any) -> Tensor:
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    attrs = _attrs(block_shape, pads)
    return execute(op, (x, _int_input(block_shape), _int_input(pads)), attrs)


def space_to_batch_nd(input: Any, block_shape: Any, paddings: Any, name: Any = None) -> Tensor:  # noqa: A002
    """``tf.space_to_batch_nd``: zero-pads the ``M = len(block_shape)`` spatial dimensions after the batch by
    ``paddings`` (``[M, 2]``), then moves each ``block_shape`` block of them into the batch: ``[batch, *spatial,
    *rest]`` -> ``[batch * prod(block_shape), *(padded // block_shape), *rest]``.

    >>> tf.space_to_batch_nd(tf.reshape(tf.range(4), [1, 2, 2, 1]), [2, 2], [[0, 0], [0, 0]]).shape
    TensorShape([4, 1, 1, 1])
    """
    return _run(SPACE_TO_BATCH_ND, input, block_shape, paddings)


def space_to_batch(input: Any, block_shape: Any, paddings: Any, name: Any = None) -> Tensor:  # noqa: A002
    """``tf.space_to_batch`` (and ``tf.nn.space_to_batch``): TF 2's name for :func:`space_to_batch_nd`."""
    return space_to_batch_nd(input, block_shape, paddings)


def batch_to_space_nd(input: Any, block_shape: Any, crops: Any, name: Any = None) -> Tensor:  # noqa: A002
    """``tf.compat.v1.batch_to_space_nd``: the inverse of :func:`space_to_batch_nd`, the blocks moved back from
    the batch into the spatial dimensions, then ``crops`` (``[M, 2]``) cut off."""
    return _run(BATCH_TO_SPACE_ND, input, block_shape, crops)


def batch_to_space(input: Any, block_shape: Any, crops: Any, name: Any = None) -> Tensor:  # noqa: A002
    """``tf.batch_to_space``: TF 2's name for :func:`batch_to_space_nd`."""
    return batch_to_space_nd(input, block_shape, crops)
