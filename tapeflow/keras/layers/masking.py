"""Keras mask propagation: a layer's output carries a boolean mask (``(batch, steps)``) that the next
layer receives as ``call(..., mask=)`` — ``Embedding(mask_zero=True)`` and ``Masking`` make one, RNNs,
attention and pooling layers read it, elementwise layers pass it on.

As in Keras the mask rides on the tensor (``tensor._keras_mask``); tapeflow keeps it in a side table
keyed by the tensor's id (weakly, so it goes with the tensor), which costs nothing when no layer makes
masks.
"""

from __future__ import annotations

import weakref
from typing import Any

from tapeflow.framework import nest
from tapeflow.framework.tensor import Tensor

_MASKS: dict[int, tuple] = {}  # tensor id -> (weakref to the tensor, mask)


def get_mask(t: Any) -> Any:
    """The Keras mask riding on ``t`` (None if none)."""
    if not _MASKS or not isinstance(t, Tensor):
        return None
    entry = _MASKS.get(t._id)
    return entry[1] if entry is not None and entry[0]() is t else None


def set_mask(t: Any, mask: Any) -> None:
    """Attaches ``mask`` to ``t`` (None removes it)."""
    if not isinstance(t, Tensor):
        return
    key = t._id
    if mask is None:
        _MASKS.pop(key, None)
        return
    _MASKS[key] = (weakref.ref(t, lambda _r, key=key: _MASKS.pop(key, None)), mask)


def _mask_property_get(self: Tensor) -> Any:
    return get_mask(self)


# ``tensor._keras_mask`` reads/writes the side table, as Keras users and guides do.
Tensor._keras_mask = property(_mask_property_get, set_mask)


def input_masks(inputs: Any) -> Any:
    """The mask(s) of a layer's inputs: one mask, a list of masks, or None when none has one."""
    if not _MASKS:
        return None
    if isinstance(inputs, (list, tuple)):
        masks = [get_mask(x) for x in inputs]
        return None if all(m is None for m in masks) else masks
    return get_mask(inputs)


def attach_output_masks(outputs: Any, masks: Any) -> None:
    if masks is None:
        return
    flat_out = nest.flatten(outputs)
    if isinstance(masks, (list, tuple)) and len(flat_out) > 1:
        for o, m in zip(flat_out, masks):
            set_mask(o, m)
    elif isinstance(masks, (list, tuple)):
        set_mask(flat_out[0], masks[0])
    else:
        set_mask(flat_out[0], masks)
