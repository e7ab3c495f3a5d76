"""``tf.nn.depth_to_space`` / ``space_to_depth``: channel blocks moved into (or out of) the spatial
dimensions of NHWC images. Each is a reshape, a transpose and a reshape, so their gradients are those
ops' gradients."""

from __future__ import annotations

from typing import Any

from tapeflow.framework.errors import NotFoundError
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import array_ops
from tapeflow.ops.nn._common import _err


def _check(op: str, x: Tensor, block_size: int, data_format: str) -> tuple:
    if data_format != "NHWC":
        raise NotFoundError(None, None, f"Could not find device for node: {{{{node {op}}}}} = {op}[data_format="
                                        f"\"{data_format}\"]: the CPU kernel takes NHWC only [Op:{op}]")
    if int(block_size) < 2:
        raise _err(op, f"Value for attr 'block_size' of {block_size} must be at least minimum 2")
    shape = x._shape_tuple()
    if len(shape) != 4:
        raise _err(op, f"Input rank should be: 4 instead of: {len(shape)}")
    return shape


def depth_to_space(input: Any, block_size: int, data_format: str = "NHWC", name: str | None = None) -> Tensor:  # noqa: A002
    """Moves blocks of ``block_size**2`` channels into ``block_size x block_size`` spatial tiles."""
    x = convert_to_tensor(input)
    n, h, w, c = _check("DepthToSpace", x, block_size, data_format)
    b = int(block_size)
    if c is not None and c % (b * b):
        raise _err("DepthToSpace", f"Input depth dimension {c} should be divisible by: {b * b}")
    dyn = array_ops.shape(x)
    n, h, w, c = (dyn[i] if d is None else d for i, d in enumerate((n, h, w, c)))
    y = array_ops.reshape(x, array_ops.stack([n, h, w, b, b, c // (b * b)]))
    y = array_ops.transpose(y, (0, 1, 3, 2, 4, 5))
    return array_ops.reshape(y, array_ops.stack([n, h * b, w * b, c // (b * b)]))


def space_to_depth(input: Any, block_size: int, data_format: str = "NHWC", name: str | None = None) -> Tensor:  # noqa: A002
    """Moves ``block_size x block_size`` spatial tiles into blocks of channels."""
    x = convert_to_tensor(input)
    n, h, w, c = _check("SpaceToDepth", x, block_size, data_format)
    b = int(block_size)
    if (h is not None and h % b) or (w is not None and w % b):
        raise _err("SpaceToDepth", f"Image width {w} and height {h} should be divisible by block_size: {b}")
    dyn = array_ops.shape(x)
    n, h, w, c = (dyn[i] if d is None else d for i, d in enumerate((n, h, w, c)))
    y = array_ops.reshape(x, array_ops.stack([n, h // b, b, w // b, b, c]))
    y = array_ops.transpose(y, (0, 1, 3, 2, 4, 5))
    return array_ops.reshape(y, array_ops.stack([n, h // b, w // b, b * b * c]))
