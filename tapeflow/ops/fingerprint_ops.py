"""``Fingerprint`` (``tf.fingerprint``): TF's farmhash64 fingerprint of each row of a tensor, 8 little-endian
bytes (uint8 ``[rows, 8]``). A numeric row is fingerprinted as its bytes; a row of strings as the concatenated
fingerprints of its strings (one string per row: that string's fingerprint). Not differentiable, as in TF."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops.farmhash import fingerprint64
from tapeflow.ops.registry import NotDifferentiable, defop

__all__ = ["fingerprint"]


def _fp(data: bytes) -> list:
    return list(fingerprint64(data).to_bytes(8, "little"))


def _fingerprint_kernel(data, method):
    method = method.decode() if isinstance(method, bytes) else str(method)
    if method != "farmhash64":
        raise InvalidArgumentError(None, None, f"Unsupported fingerprint method: {method} [Op:Fingerprint]")
    if data.ndim < 1:
        raise InvalidArgumentError(None, None, "`data` should have at least one dimension: [] [Op:Fingerprint]")
    rows = data.shape[0]
    flat = data.reshape(rows, -1) if rows else data.reshape(0, 0)
    out = np.zeros((rows, 8), np.uint8)
    for r in range(rows):
        if data.dtype.kind in "SOU":
            items = [x if isinstance(x, bytes) else str(x).encode() for x in flat[r].tolist()]
            out[r] = _fp(items[0]) if len(items) == 1 else _fp(b"".join(bytes(_fp(s)) for s in items))
        else:
            out[r] = _fp(np.ascontiguousarray(flat[r]).tobytes())
    return out


FINGERPRINT = defop("Fingerprint", lambda data, method: _fingerprint_kernel(data, method[()]),
                    shape=lambda specs: [(None if specs[0][0] is None else (specs[0][0][0], 8), np.dtype(np.uint8))])
NotDifferentiable("Fingerprint")


def fingerprint(data: Any, method: str = "farmhash64", name: Any = None) -> Tensor:
    """``tf.fingerprint``: a stable 8-byte fingerprint (uint8 ``[rows, 8]``) of each row of ``data``; the
    only ``method`` is ``"farmhash64"``, TF's, so fingerprints equal TF's.

    >>> tf.fingerprint(tf.constant(["hello"])).numpy()[0, :4]
    array([232,  12,  56,  49], dtype=uint8)
    """
    data = data if isinstance(data, Tensor) else convert_to_tensor(data)
    return execute(FINGERPRINT, (data, convert_to_tensor(method)))
