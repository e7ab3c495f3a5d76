"""Bounding-box ops of ``tf.image``: non-max suppression (``NonMaxSuppressionV3``/``V5``,
``NonMaxSuppressionWithOverlaps``, ``CombinedNonMaxSuppression`` and the tiled ``non_max_suppression_padded``),
``CropAndResize`` with its two gradient ops, and ``DrawBoundingBoxesV2``.

The kernels follow TF's CPU kernels: NMS visits candidates by descending score (ties: the lower index first),
compares a box with the boxes already selected by intersection over union in float32 (boxes of zero area overlap
nothing) and drops it above the threshold; Soft-NMS scales scores by ``exp(-0.5 * iou**2 / sigma)``.
``CropAndResize`` samples in float32 as TF's kernel does (``in_y = y1 * (H - 1) + y * scale``).

Gradients are TF's: none of the NMS ops has a registered gradient (a gradient through ``selected_scores`` or
``nmsed_scores`` is TF's ``LookupError``; index outputs are integers), ``CropAndResize`` is differentiated by
``CropAndResizeGradImage`` and ``CropAndResizeGradBoxes`` (themselves without a registered gradient, as in TF),
and ``DrawBoundingBoxesV2`` is not differentiable.
"""

from __future__ import annotations

import heapq
from typing import Any, NamedTuple

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError, OutOfRangeError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.framework.variables import Variable
from tapeflow.ops.registry import NoGradientRegistered, NotDifferentiable, defgrad, defop

__all__ = ["non_max_suppression", "non_max_suppression_with_scores", "non_max_suppression_overlaps",
           "non_max_suppression_padded", "combined_non_max_suppression", "crop_and_resize",
           "draw_bounding_boxes"]

_F = np.float32


def _err(op: str, message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"{message} [Op:{op}]")


def _input(x: Any, dtype: Any, op: str, index: int) -> Tensor:
    """An op input of fixed dtype, as TF's generated wrappers convert it: Python values and arrays are
    converted to ``dtype``; a tensor of another dtype is TF's InvalidArgumentError."""
    dtype = dtypes.as_dtype(dtype)
    if isinstance(x, Variable):
        x = x.value()
    if isinstance(x, Tensor):
        if x.dtype != dtype:
            raise _err(op, f"cannot compute {op} as input #{index}(zero-based) was expected to be a "
                       f"{dtypes.type_string(dtype)} tensor but is a {dtypes.type_string(x.dtype)} tensor")
        return x
    return convert_to_tensor(x, dtype=dtype)


def _typed(x: Any, allowed: tuple, op: str, attr: str = "T", like: Tensor | None = None, index: int = 0,
           default: Any = None) -> Tensor:
    """An input of the op's type attr ``attr``: a tensor of one of ``allowed`` (TF's type names), or of
    ``like``'s dtype when an earlier input set the attr. A non-tensor is converted to ``default`` when the attr
    has one (TF's wrappers convert NumPy float64 boxes to float32), else by its own dtype."""
    if like is not None:
        return _input(x, like.dtype, op, index)
    if isinstance(x, Variable):
        x = x.value()
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x, dtype=default) if default is not None else convert_to_tensor(x)
    if dtypes.type_string(x.dtype) not in allowed:
        raise _err(op, f"Value for attr '{attr}' of {dtypes.type_string(x.dtype)} is not in the list of allowed "
                   f"values: {', '.join(allowed)}")
    return x


def _dims(shape: Any) -> str:
    """A shape as TF's ``TensorShape::DebugString`` writes it: ``[2,3]``."""
    return "[" + ",".join(str(d) for d in shape) + "]"


def _scalar(value: np.ndarray, what: str, op: str) -> Any:
    if np.ndim(value) != 0:
        raise _err(op, f"{what} must be 0-D, got shape {list(np.shape(value))} (Shape must be rank 0 but is rank "
                   f"{np.ndim(value)})")
    return value[()]


# --- greedy non-max suppression ---------------------------------------------------------------------------------

def _iou_with(boxes: np.ndarray, i: int, others: np.ndarray) -> np.ndarray:
    """TF's ``IOU`` (non_max_suppression_op.cc) of box ``i`` with ``others`` (indices), in float32."""
    b = boxes.astype(_F, copy=False)
    ymin, xmin = np.minimum(b[:, 0], b[:, 2]), np.minimum(b[:, 1], b[:, 3])
    ymax, xmax = np.maximum(b[:, 0], b[:, 2]), np.maximum(b[:, 1], b[:, 3])
    area_i = (ymax[i] - ymin[i]) * (xmax[i] - xmin[i])
    o = others
    area_o = (ymax[o] - ymin[o]) * (xmax[o] - xmin[o])
    ih = np.maximum(np.minimum(ymax[i], ymax[o]) - np.maximum(ymin[i], ymin[o]), _F(0))
    iw = np.maximum(np.minimum(xmax[i], xmax[o]) - np.maximum(xmin[i], xmin[o]), _F(0))
    inter = ih * iw
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (area_i + area_o - inter)
    return np.where((area_i <= 0) | (area_o <= 0), _F(0), iou).astype(_F)


def _greedy_nms(similarity: Any, scores: np.ndarray, max_output: int, threshold: Any, score_threshold: Any,
                soft_sigma: float = 0.0) -> tuple[list, list]:
    """TF's ``DoNonMaxSuppressionOp``: ``similarity(i, selected)`` gives box ``i``'s overlaps with the selected
    boxes (an array in their order). Returns the selected indices and their (possibly soft-suppressed) scores."""
    st = scores.dtype.type
    score_threshold = st(score_threshold)
    threshold = _F(threshold)
    soft = soft_sigma > 0
    scale = _F(-0.5) / _F(soft_sigma) if soft else _F(0)
    # (−score, index, suppress_begin_index): heapq pops the highest score, then the lowest index
    heap = [(-scores[i], i, 0) for i in range(scores.shape[0]) if scores[i] > score_threshold]
    heapq.heapify(heap)
    selected: list = []
    selected_scores: list = []
    while len(selected) < max_output and heap:
        neg, i, begin = heapq.heappop(heap)
        score = original = -neg
        sims = similarity(i, np.asarray(selected[begin:], np.int64)) if len(selected) > begin else ()
        hard = False
        for j in range(len(sims) - 1, -1, -1):  # the latest selections first, as TF
            sim = _F(sims[j])
            if soft:
                score = st(score * st(np.exp(np.float64(scale * sim * sim))))  # (rounds as TF's exp)
            elif sim > threshold:
                hard = True
                break
            if score <= score_threshold:
                break
        if hard:
            continue
        if score == original:
            selected.append(i)
            selected_scores.append(score)
        elif score > score_threshold:
            heapq.heappush(heap, (-score, i, len(selected)))
    return selected, selected_scores


def _check_boxes_scores(boxes: np.ndarray, scores: np.ndarray, op: str) -> None:
    if boxes.ndim != 2:
        raise _err(op, f"boxes must be 2-D{_dims(boxes.shape)} (Shape must be rank 2 but is rank {boxes.ndim})")
    if boxes.shape[1] != 4:
        raise _err(op, f"boxes must have 4 columns (Dimension must be 4 but is {boxes.shape[1]})")
    if scores.ndim != 1:
        raise _err(op, f"scores must be 1-D{_dims(scores.shape)} (Shape must be rank 1 but is rank {scores.ndim})")
    if scores.shape[0] != boxes.shape[0]:
        raise _err(op, f"scores has incompatible shape (Dimensions must be equal, but are {boxes.shape[0]} and "
                   f"{scores.shape[0]})")


def _output_size(max_output_size: np.ndarray, op: str) -> int:
    n = int(_scalar(max_output_size, "max_output_size", op))
    if n < 0:
        raise _err(op, "output size must be non-negative")
    return n


def _iou_threshold(iou_threshold: np.ndarray, op: str) -> Any:
    v = _scalar(iou_threshold, "iou_threshold", op)
    if not 0 <= v <= 1:
        raise _err(op, "iou_threshold must be in [0, 1]")
    return v


def _nms_v3_kernel(boxes, scores, max_output_size, iou_threshold, score_threshold):
    op = "NonMaxSuppressionV3"
    _check_boxes_scores(boxes, scores, op)
    n = _output_size(max_output_size, op)
    thr = _iou_threshold(iou_threshold, op)
    sel, _ = _greedy_nms(lambda i, s: _iou_with(boxes, i, s), scores, n, thr,
                         _scalar(score_threshold, "score_threshold", op))
    return np.asarray(sel, np.int32)


def _nms_v5_kernel(boxes, scores, max_output_size, iou_threshold, score_threshold, soft_nms_sigma,
                   pad_to_max_output_size=False):
    op = "NonMaxSuppressionV5"
    _check_boxes_scores(boxes, scores, op)
    n = _output_size(max_output_size, op)
    thr = _iou_threshold(iou_threshold, op)
    sigma = _scalar(soft_nms_sigma, "soft_nms_sigma", op)
    if sigma < 0:
        raise _err(op, "soft_nms_sigma_val must be >= 0")
    sel, sc = _greedy_nms(lambda i, s: _iou_with(boxes, i, s), scores, n, thr,
                          _scalar(score_threshold, "score_threshold", op), float(sigma))
    valid = len(sel)
    if pad_to_max_output_size:
        sel = sel + [0] * (n - valid)
        sc = sc + [0] * (n - valid)
    return np.asarray(sel, np.int32), np.asarray(sc, scores.dtype), np.int32(valid)


def _nms_overlaps_kernel(overlaps, scores, max_output_size, overlap_threshold, score_threshold):
    op = "NonMaxSuppressionWithOverlaps"
    if overlaps.ndim != 2:
        raise _err(op, f"overlaps must be 2-D{_dims(overlaps.shape)}")
    if overlaps.shape[0] != overlaps.shape[1]:
        raise _err(op, f"overlaps must be square{_dims(overlaps.shape)}")
    if scores.ndim != 1 or scores.shape[0] != overlaps.shape[0]:
        raise _err(op, f"scores has incompatible shape{_dims(scores.shape)}")
    n = _output_size(max_output_size, op)
    sel, _ = _greedy_nms(lambda i, s: overlaps[i, s], scores, n,
                         _scalar(overlap_threshold, "overlap_threshold", op),
                         _scalar(score_threshold, "score_threshold", op))
    return np.asarray(sel, np.int32)


def _nms_shape(specs, **attrs):
    return [((None,), np.dtype(np.int32))]


def _nms_v5_shape(specs, pad_to_max_output_size=False):
    return [((None,), np.dtype(np.int32)), ((None,), specs[1][1]), ((), np.dtype(np.int32))]


NMS_V3 = defop("NonMaxSuppressionV3", _nms_v3_kernel, shape=_nms_shape)
NMS_V5 = defop("NonMaxSuppressionV5", _nms_v5_kernel, shape=_nms_v5_shape, num_outputs=3)
NMS_OVERLAPS = defop("NonMaxSuppressionWithOverlaps", _nms_overlaps_kernel, shape=_nms_shape)
NoGradientRegistered("NonMaxSuppressionV3")  # as TF: no gradient, none declared (outputs are indices)
NoGradientRegistered("NonMaxSuppressionV5")  # tape.gradient of selected_scores: TF's LookupError
NotDifferentiable("NonMaxSuppressionWithOverlaps")

_NMS_T = ("half", "float")


def _nms_inputs(boxes: Any, scores: Any, max_output_size: Any, op: str) -> tuple:
    if not isinstance(boxes, (Tensor, Variable)) and isinstance(scores, (Tensor, Variable)):
        scores = _typed(scores, _NMS_T, op)  # TF infers the type attr from the tensors given first
        boxes = _input(boxes, scores.dtype, op, 0)
    else:
        boxes = _typed(boxes, _NMS_T, op, default=dtypes.float32)
        scores = _typed(scores, _NMS_T, op, like=boxes, index=1)
    return boxes, scores, _input(max_output_size, dtypes.int32, op, 2)


def non_max_suppression(boxes: Any, scores: Any, max_output_size: Any, iou_threshold: Any = 0.5,
                        score_threshold: Any = float("-inf"), name: Any = None) -> Tensor:
    """``tf.image.non_max_suppression``: the indices (int32, at most ``max_output_size``) of the boxes kept by
    greedy non-max suppression, in descending order of score. ``boxes`` is ``[num_boxes, 4]`` (``[y1, x1, y2,
    x2]``, any diagonal pair of corners), ``scores`` ``[num_boxes]``; a box is dropped when its IoU with a kept
    box exceeds ``iou_threshold``, or its score is not above ``score_threshold``.

    >>> tf.image.non_max_suppression([[0., 0, 1, 1], [0, .1, 1, 1.1], [0, 2, 1, 3]], [.9, .8, .7], 3)
    <tf.Tensor: shape=(2,), dtype=int32, numpy=array([0, 2], dtype=int32)>
    """
    op = "NonMaxSuppressionV3"
    boxes, scores, mos = _nms_inputs(boxes, scores, max_output_size, op)
    iou = _typed(iou_threshold, _NMS_T, op, "T_threshold", default=dtypes.float32)
    return execute(NMS_V3, (boxes, scores, mos, iou, _typed(score_threshold, _NMS_T, op, like=iou, index=4)))


def non_max_suppression_with_scores(boxes: Any, scores: Any, max_output_size: Any, iou_threshold: Any = 0.5,
                                    score_threshold: Any = float("-inf"), soft_nms_sigma: Any = 0.0,
                                    name: Any = None) -> tuple[Tensor, Tensor]:
    """``tf.image.non_max_suppression_with_scores``: ``(selected_indices, selected_scores)``. With
    ``soft_nms_sigma > 0`` it is Soft-NMS (Bodla et al.): overlapping boxes have their scores scaled by
    ``exp(-0.5 * iou**2 / soft_nms_sigma)`` instead of being dropped (``iou_threshold`` is then unused), and the
    scores returned are the scaled ones."""
    op = "NonMaxSuppressionV5"
    boxes, scores, mos = _nms_inputs(boxes, scores, max_output_size, op)
    # TF's wrapper makes float32 tensors of the three thresholds first (so float16 boxes need float16 ones)
    idx, sc, _ = execute(NMS_V5, (boxes, scores, mos, _input(convert_to_tensor(iou_threshold), scores.dtype, op, 3),
                                  _input(convert_to_tensor(score_threshold), scores.dtype, op, 4),
                                  _input(convert_to_tensor(soft_nms_sigma), scores.dtype, op, 5)),
                         {"pad_to_max_output_size": False})
    return idx, sc


def non_max_suppression_overlaps(overlaps: Any, scores: Any, max_output_size: Any, overlap_threshold: Any = 0.5,
                                 score_threshold: Any = float("-inf"), name: Any = None) -> Tensor:
    """``tf.image.non_max_suppression_overlaps``: greedy non-max suppression on a given ``[n, n]`` overlap
    matrix (a box is dropped when its overlap with a kept box exceeds ``overlap_threshold``)."""
    op = "NonMaxSuppressionWithOverlaps"
    return execute(NMS_OVERLAPS, (_input(overlaps, dtypes.float32, op, 0), _input(scores, dtypes.float32, op, 1),
                                  _input(max_output_size, dtypes.int32, op, 2),
                                  _input(overlap_threshold, dtypes.float32, op, 3),
                                  _input(score_threshold, dtypes.float32, op, 4)))


# --- CombinedNonMaxSuppression ----------------------------------------------------------------------------------

def _combined_kernel(boxes, scores, max_output_size_per_class, max_total_size, iou_threshold, score_threshold,
                     pad_per_class=False, clip_boxes=True):
    op = "CombinedNonMaxSuppression"
    if boxes.ndim and scores.ndim and boxes.shape[0] != scores.shape[0]:
        raise _err(op, "boxes and scores must have same batch size")
    if boxes.ndim != 4:
        raise _err(op, f"boxes must be 4-D{_dims(boxes.shape)}")
    if scores.ndim != 3:
        raise _err(op, f"scores must be 3-D{_dims(scores.shape)}")
    batch, num_boxes, q, four = boxes.shape
    num_classes = scores.shape[2]
    if scores.shape[1] != num_boxes:
        raise _err(op, "boxes and scores must have same number of boxes")
    if q != 1 and q != num_classes:
        raise _err(op, "third dimension of boxes must be either 1 or num classes")
    if four != 4:
        raise _err(op, "fourth dimension of boxes must be 4")
    per_class = int(_scalar(max_output_size_per_class, "max_output_size_per_class", op))
    if per_class <= 0:
        raise _err(op, "max_size_per_class must be positive")
    total = int(_scalar(max_total_size, "max_total_size", op))
    if total <= 0:
        raise _err(op, "max_total_size must be > 0")
    thr = _iou_threshold(iou_threshold, op)
    score_thr = _scalar(score_threshold, "score_threshold", op)
    per_batch = min(per_class * num_classes, total) if pad_per_class else total
    size_per_class = min(per_class, num_boxes)
    out_boxes = np.zeros((batch, per_batch, 4), _F)
    out_scores = np.zeros((batch, per_batch), _F)
    out_classes = np.zeros((batch, per_batch), _F)
    valid = np.zeros((batch,), np.int32)
    b32, s32 = boxes.astype(_F), scores.astype(_F)
    for b in range(batch):
        found = []  # (score, class, box coords), class by class in selection order
        for c in range(num_classes):
            cb = b32[b, :, c if q > 1 else 0]
            sel, sc = _greedy_nms(lambda i, s, cb=cb: _iou_with(cb, i, s), s32[b, :, c], size_per_class, thr,
                                  score_thr)
            found.extend((sc[k], c, cb[i]) for k, i in enumerate(sel))
        found.sort(key=lambda e: -e[0])  # stable: equal scores keep class order
        count = min(len(found), per_batch)
        valid[b] = count
        for k, (s, c, coords) in enumerate(found[:count]):
            out_boxes[b, k] = np.clip(coords, _F(0), _F(1)) if clip_boxes else coords
            out_scores[b, k], out_classes[b, k] = s, c
    return out_boxes, out_scores, out_classes, valid


def _combined_shape(specs, pad_per_class=False, clip_boxes=True):
    s = specs[0][0]
    b = None if s is None else s[0]
    f = np.dtype(_F)
    return [((b, None, 4), f), ((b, None), f), ((b, None), f), ((b,), np.dtype(np.int32))]


COMBINED_NMS = defop("CombinedNonMaxSuppression", _combined_kernel, shape=_combined_shape, num_outputs=4)
NoGradientRegistered("CombinedNonMaxSuppression")


class CombinedNonMaxSuppression(NamedTuple):
    """The result of ``tf.image.combined_non_max_suppression`` (TF's namedtuple fields)."""

    nmsed_boxes: Tensor
    nmsed_scores: Tensor
    nmsed_classes: Tensor
    valid_detections: Tensor


def combined_non_max_suppression(boxes: Any, scores: Any, max_output_size_per_class: Any, max_total_size: Any,
                                 iou_threshold: Any = 0.5, score_threshold: Any = float("-inf"),
                                 pad_per_class: bool = False, clip_boxes: bool = True,
                                 name: Any = None) -> CombinedNonMaxSuppression:
    """``tf.image.combined_non_max_suppression``: per image and per class greedy NMS (at most
    ``max_output_size_per_class`` boxes a class), then the best ``max_total_size`` over all classes by score.

    ``boxes`` is ``[batch, num_boxes, q, 4]`` (``q`` 1: boxes shared by all classes, or ``num_classes``),
    ``scores`` ``[batch, num_boxes, num_classes]``. Returns ``(nmsed_boxes, nmsed_scores, nmsed_classes,
    valid_detections)``, zero-padded to ``max_total_size`` detections (or, with ``pad_per_class``, to
    ``min(max_total_size, max_output_size_per_class * num_classes)``); boxes clipped to [0, 1] with
    ``clip_boxes``."""
    op = "CombinedNonMaxSuppression"
    out = execute(COMBINED_NMS, (_input(boxes, dtypes.float32, op, 0), _input(scores, dtypes.float32, op, 1),
                                 _input(max_output_size_per_class, dtypes.int32, op, 2),
                                 _input(max_total_size, dtypes.int32, op, 3),
                                 _input(iou_threshold, dtypes.float32, op, 4),
                                 _input(score_threshold, dtypes.float32, op, 5)),
                  {"pad_per_class": bool(pad_per_class), "clip_boxes": bool(clip_boxes)})
    return CombinedNonMaxSuppression(*out)


# --- non_max_suppression_padded (TF's tiled algorithm) ----------------------------------------------------------

def _bbox_overlap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """TF's ``_bbox_overlap``: IoU of every box of ``a`` [B, n, 4] with every box of ``b`` [B, m, 4], with its
    1e-8 added to the union, in float32."""
    ay0, ax0, ay1, ax1 = (a[..., k:k + 1] for k in range(4))
    by0, bx0, by1, bx1 = (b[..., k][:, None, :] for k in range(4))
    inter = np.maximum(np.minimum(ax1, bx1) - np.maximum(ax0, bx0), _F(0)) * \
        np.maximum(np.minimum(ay1, by1) - np.maximum(ay0, by0), _F(0))
    union = (ay1 - ay0) * (ax1 - ax0) + (by1 - by0) * (bx1 - bx0) - inter + _F(1e-8)
    return (inter / union).astype(_F)


def _nms_padded_kernel(boxes, scores, max_output_size, iou_threshold, score_threshold, sorted_input=False,
                       canonicalized_coordinates=False, tile_size=512):
    """TF's ``non_max_suppression_padded_v2``, step by step: boxes sorted by score, processed ``tile_size`` at a
    time (suppressed by the kept boxes of earlier tiles, then within the tile until nothing changes); a box
    counts as kept when one of its coordinates is above 0, as there."""
    op = "NonMaxSuppressionPadded"
    if boxes.ndim < 2 or boxes.shape[-1] != 4:
        raise _err(op, f"boxes must be [..., num_boxes, 4], got shape {_dims(boxes.shape)}")
    batch_dims, num_boxes = boxes.shape[:-2], boxes.shape[-2]
    if tuple(scores.shape) != tuple(boxes.shape[:-1]):
        raise _err(op, f"scores must have shape {list(boxes.shape[:-1])} (boxes without the 4), got "
                   f"{_dims(scores.shape)}")
    mos = int(_scalar(max_output_size, "max_output_size", op))
    thr = _F(_scalar(iou_threshold, "iou_threshold", op))
    b = boxes.reshape(-1, num_boxes, 4).copy()
    s = scores.reshape(-1, num_boxes).copy()
    batch = b.shape[0]
    st = float(_scalar(score_threshold, "score_threshold", op))
    if st != float("-inf"):
        mask = (s > s.dtype.type(st)).astype(s.dtype)
        s = s * mask
        b = b * mask[..., None].astype(b.dtype)
    if not canonicalized_coordinates and b.size:
        y0, x0, y1, x1 = (b[..., k:k + 1] for k in range(4))
        if not y0[0, 0, 0] <= y1[0, 0, 0]:
            y0, y1 = y1, y0
        if not x0[0, 0, 0] <= x1[0, 0, 0]:
            x0, x1 = x1, x0
        b = np.concatenate([y0, x0, y1, x1], axis=2)
    if not sorted_input:
        order = np.argsort(-s, axis=1, kind="stable").astype(np.int32)
        s = np.take_along_axis(s, order, 1)
        b = np.take_along_axis(b, order[..., None], 1)
    else:
        order = np.zeros_like(s, np.int32)
    padded = int(np.ceil(_F(max(num_boxes, mos)) / _F(tile_size))) * tile_size
    b = np.pad(b.astype(_F), [[0, 0], [0, padded - num_boxes], [0, 0]])
    tiles = padded // tile_size
    out_size = np.zeros((batch,), np.int32)
    idx = 0
    upper = np.arange(tile_size)[None, :] > np.arange(tile_size)[:, None]
    while (out_size.min() if batch else mos) < mos and idx < tiles:
        tile = b[:, idx * tile_size:(idx + 1) * tile_size].copy()
        for inner in range(idx):
            iou = _bbox_overlap(b[:, inner * tile_size:(inner + 1) * tile_size], tile)
            tile = np.all(iou < thr, axis=1).astype(_F)[..., None] * tile
        iou = _bbox_overlap(tile, tile)
        iou = iou * (upper[None] & (iou >= thr)).astype(_F)
        total = iou.sum(axis=(1, 2), dtype=_F)
        while True:
            can = (iou.max(axis=1) < thr).astype(_F)[..., None]
            iou = (np.max(can * iou, axis=1) < thr).astype(_F)[..., None] * iou
            new_total = iou.sum(axis=(1, 2), dtype=_F)
            changed = np.any(total - new_total > thr)
            total = new_total
            if not changed:
                break
        tile = tile * (1 - (iou.sum(axis=1) > 0).astype(_F))[..., None]
        b[:, idx * tile_size:(idx + 1) * tile_size] = tile
        out_size += np.any(tile > 0, axis=2).sum(axis=1).astype(np.int32)
        idx += 1
    valid = np.minimum(out_size, mos).astype(np.int32)
    kept = np.any(b > 0, axis=2).astype(np.int32) * np.arange(padded, 0, -1, dtype=np.int32)[None]
    top = -np.sort(-kept, axis=1)[:, :mos] if mos else np.zeros((batch, 0), np.int32)
    sel = np.minimum(padded - top, num_boxes - 1).astype(np.int32)
    if not sorted_input:
        sel = np.take_along_axis(order, np.clip(sel, 0, None), 1) if num_boxes else sel
    sel = np.where(np.arange(mos)[None] < valid[:, None], sel, 0).astype(np.int32)
    return sel.reshape(batch_dims + (mos,)), valid.reshape(batch_dims)


def _nms_padded_shape(specs, **attrs):
    s = specs[0][0]
    lead = None if s is None else tuple(s[:-2])
    return [(None if lead is None else lead + (None,), np.dtype(np.int32)), (lead, np.dtype(np.int32))]


# tapeflow's name for TF's function-built algorithm (TF runs it as a tf.function of many small ops)
NMS_PADDED = defop("NonMaxSuppressionPadded", _nms_padded_kernel, shape=_nms_padded_shape, num_outputs=2)
NotDifferentiable("NonMaxSuppressionPadded")  # its outputs are indices and counts


def non_max_suppression_padded(boxes: Any, scores: Any, max_output_size: Any, iou_threshold: Any = 0.5,
                               score_threshold: Any = float("-inf"), pad_to_max_output_size: bool = False,
                               name: Any = None, sorted_input: bool = False, canonicalized_coordinates: bool = False,
                               tile_size: int = 512) -> tuple[Tensor, Tensor]:
    """``tf.image.non_max_suppression_padded``: ``(selected_indices, num_valid)`` of TF's tiled (batched) NMS.
    ``boxes`` is ``[..., num_boxes, 4]``; with ``pad_to_max_output_size`` the indices are ``[...,
    max_output_size]``, zero-padded past ``num_valid`` (required for batched boxes), else the first
    ``num_valid``. As TF's, it keeps boxes whose IoU with a kept box is below ``iou_threshold`` and treats a box
    with no coordinate above 0 as empty."""
    op = "NonMaxSuppressionPadded"
    boxes = _typed(boxes, ("half", "float", "double"), op, default=dtypes.float32)
    if not pad_to_max_output_size and len(boxes.shape) > 2:
        raise ValueError(f"'pad_to_max_output_size' (value {pad_to_max_output_size}) must be True for batched "
                         "input")
    scores = _typed(scores, _NMS_T, op, like=boxes, index=1)
    idx, valid = execute(NMS_PADDED, (boxes, scores, _input(max_output_size, dtypes.int32, op, 2),
                                      convert_to_tensor(iou_threshold, dtype_hint=dtypes.float32),
                                      convert_to_tensor(score_threshold, dtype_hint=dtypes.float32)),
                         {"sorted_input": bool(sorted_input),
                          "canonicalized_coordinates": bool(canonicalized_coordinates),
                          "tile_size": int(tile_size)})
    if not pad_to_max_output_size:
        idx = idx[:valid]
    return idx, valid


# --- CropAndResize ----------------------------------------------------------------------------------------------

_CROP_T = ("uint8", "uint16", "int8", "int16", "int32", "int64", "half", "float", "double")


def _check_crop(image_shape: tuple, boxes: np.ndarray, box_index: np.ndarray, op: str) -> int:
    if boxes.size == 0 and box_index.size == 0:
        return 0
    if boxes.ndim != 2:
        raise _err(op, f"boxes must be 2-D, got: {_dims(boxes.shape)}")
    if boxes.shape[1] != 4:
        raise _err(op, "boxes must have 4 columns")
    if box_index.ndim != 1:
        raise _err(op, f"box_index must be 1-D{_dims(box_index.shape)}")
    if box_index.shape[0] != boxes.shape[0]:
        raise _err(op, "box_index has incompatible shape")
    if np.any((box_index < 0) | (box_index >= image_shape[0])):
        raise OutOfRangeError(None, None, f"box_index has values outside [0, batch_size) [Op:{op}]")
    return boxes.shape[0]


def _sample_grid(boxes: np.ndarray, size: int, extent: int, lo: int) -> tuple[np.ndarray, np.ndarray]:
    """TF's sampling coordinates along one axis (``lo`` 0 for y, 1 for x): ``in`` [n, size] and whether each
    lies inside ``[0, extent - 1]``."""
    a, b = boxes[:, lo].astype(_F), boxes[:, lo + 2].astype(_F)
    e1 = _F(extent - 1)
    if size > 1:
        scale = (b - a) * e1 / _F(size - 1)
        coord = a[:, None] * e1 + np.arange(size, dtype=_F)[None, :] * scale[:, None]
    else:
        coord = np.broadcast_to((_F(0.5) * (a + b) * e1)[:, None], (a.shape[0], 1))
    return coord.astype(_F), (coord >= 0) & (coord <= e1)


def _round_half_away(v: np.ndarray) -> np.ndarray:
    return (np.sign(v) * np.floor(np.abs(v) + _F(0.5))).astype(np.int64)


def _crop_and_resize_kernel(image, boxes, box_ind, crop_size, method="bilinear", extrapolation_value=0.0,
                            static_crop=None):
    op = "CropAndResize"
    if image.ndim != 4:
        raise _err(op, f"input image must be 4-D{_dims(image.shape)}")
    _, h, w, c = image.shape
    if h <= 0 or w <= 0:
        raise _err(op, "image dimensions must be positive")
    n = _check_crop(image.shape, boxes, box_ind, op)
    crop_size = np.asarray(crop_size)
    if crop_size.ndim != 1:
        raise _err(op, f"crop_size must be 1-D{_dims(crop_size.shape)}")
    if crop_size.shape[0] != 2:
        raise _err(op, f"crop_size must have two elements{_dims(crop_size.shape)}")
    ch, cw = int(crop_size[0]), int(crop_size[1])
    if ch <= 0 or cw <= 0:
        raise _err(op, "crop dimensions must be positive")
    if n == 0:
        return np.zeros((0, ch, cw, c), _F)
    in_y, ok_y = _sample_grid(boxes, ch, h, 0)
    in_x, ok_x = _sample_grid(boxes, cw, w, 1)
    bi = box_ind.astype(np.int64)[:, None, None]
    with np.errstate(invalid="ignore"):
        if method == "bilinear":
            ty = np.clip(np.floor(in_y), 0, h - 1).astype(np.int64)
            by = np.clip(np.ceil(in_y), 0, h - 1).astype(np.int64)
            ly = (in_y - np.floor(in_y)).astype(_F)
            lx_ = np.clip(np.floor(in_x), 0, w - 1).astype(np.int64)
            rx = np.clip(np.ceil(in_x), 0, w - 1).astype(np.int64)
            lx = (in_x - np.floor(in_x)).astype(_F)

            def px(yy, xx):
                return image[bi, yy[:, :, None], xx[:, None, :]].astype(_F)

            tl, tr, bl, br = px(ty, lx_), px(ty, rx), px(by, lx_), px(by, rx)
            wx = lx[:, None, :, None]
            top = tl + (tr - tl) * wx
            bottom = bl + (br - bl) * wx
            out = top + (bottom - top) * ly[:, :, None, None]
        else:
            yy = np.clip(_round_half_away(in_y), 0, h - 1)
            xx = np.clip(_round_half_away(in_x), 0, w - 1)
            out = image[bi, yy[:, :, None], xx[:, None, :]].astype(_F)
    inside = (ok_y[:, :, None] & ok_x[:, None, :])[..., None]
    return np.where(inside, out, _F(extrapolation_value)).astype(_F)


def _crop_shape(specs, method="bilinear", extrapolation_value=0.0, static_crop=None):
    img, boxes = specs[0][0], specs[1][0]
    n = None if boxes is None else boxes[0]
    c = None if img is None else img[3]
    ch, cw = static_crop if static_crop is not None else (None, None)
    return [((n, ch, cw, c), np.dtype(_F))]


def _crop_grad_image_kernel(grads, boxes, box_ind, image_size, T="float32", method="bilinear", static=None):
    op = "CropAndResizeGradImage"
    if grads.ndim != 4:
        raise _err(op, f"grads image must be 4-D{_dims(grads.shape)}")
    n, ch, cw, depth = grads.shape
    size = [int(v) for v in np.asarray(image_size).reshape(-1)]
    if len(size) != 4:
        raise _err(op, f"image_size must have 4 elements{_dims(np.shape(image_size))}")
    b, h, w, c = size
    if c != depth:
        raise _err(op, "image_size and grads are incompatible")
    _check_crop((b, h, w, c), boxes, box_ind, op)
    out = np.zeros((b, h, w, c), _F)
    if n == 0:
        return out.astype(T)
    in_y, ok_y = _sample_grid(boxes, ch, h, 0)
    in_x, ok_x = _sample_grid(boxes, cw, w, 1)
    g = grads.astype(_F) * (ok_y[:, :, None] & ok_x[:, None, :])[..., None]
    bi = np.broadcast_to(box_ind.astype(np.int64)[:, None, None], (n, ch, cw))
    with np.errstate(invalid="ignore"):
        if method == "bilinear":
            ty = np.clip(np.floor(in_y), 0, h - 1).astype(np.int64)
            by = np.clip(np.ceil(in_y), 0, h - 1).astype(np.int64)
            ly = (in_y - np.floor(in_y)).astype(_F)[:, :, None, None]
            lx_ = np.clip(np.floor(in_x), 0, w - 1).astype(np.int64)
            rx = np.clip(np.ceil(in_x), 0, w - 1).astype(np.int64)
            lx = (in_x - np.floor(in_x)).astype(_F)[:, None, :, None]
            dtop, dbottom = (_F(1) - ly) * g, ly * g
            for yy, dy in ((ty, dtop), (by, dbottom)):
                for xx, wx in ((lx_, _F(1) - lx), (rx, lx)):
                    np.add.at(out, (bi, np.broadcast_to(yy[:, :, None], (n, ch, cw)),
                                    np.broadcast_to(xx[:, None, :], (n, ch, cw))), wx * dy)
        else:
            yy = np.clip(_round_half_away(in_y), 0, h - 1)
            xx = np.clip(_round_half_away(in_x), 0, w - 1)
            np.add.at(out, (bi, np.broadcast_to(yy[:, :, None], (n, ch, cw)),
                            np.broadcast_to(xx[:, None, :], (n, ch, cw))), g)
    return out.astype(T)


def _box_slopes(grads_shape: tuple, image: np.ndarray, boxes: np.ndarray, box_ind: np.ndarray, op: str) -> tuple:
    """The bilinear sample's slopes along y and x (``[n, ch, cw, depth]``, zero outside the image) and the
    derivatives of the sampling rows / columns with respect to ``(y1, y2)`` / ``(x1, x2)``: TF's
    CropAndResizeGradBoxes terms."""
    if image.ndim != 4:
        raise _err(op, f"input image must be 4-D{_dims(image.shape)}")
    n, ch, cw = grads_shape[:3]
    _, h, w, _ = image.shape
    _check_crop(image.shape, boxes, box_ind, op)
    in_y, ok_y = _sample_grid(boxes, ch, h, 0)
    in_x, ok_x = _sample_grid(boxes, cw, w, 1)
    bi = box_ind.astype(np.int64)[:, None, None]
    with np.errstate(invalid="ignore"):
        ty = np.clip(np.floor(in_y), 0, h - 1).astype(np.int64)
        by = np.clip(np.ceil(in_y), 0, h - 1).astype(np.int64)
        ly = (in_y - np.floor(in_y)).astype(_F)[:, :, None, None]
        lx_ = np.clip(np.floor(in_x), 0, w - 1).astype(np.int64)
        rx = np.clip(np.ceil(in_x), 0, w - 1).astype(np.int64)
        lx = (in_x - np.floor(in_x)).astype(_F)[:, None, :, None]

    def px(yy, xx):
        return image[bi, yy[:, :, None], xx[:, None, :]].astype(_F)

    tl, tr, bl, br = px(ty, lx_), px(ty, rx), px(by, lx_), px(by, rx)
    inside = (ok_y[:, :, None] & ok_x[:, None, :])[..., None]
    slope_y = np.where(inside, (_F(1) - lx) * (bl - tl) + lx * (br - tr), _F(0))
    slope_x = np.where(inside, (_F(1) - ly) * (tr - tl) + ly * (br - bl), _F(0))
    coef = []
    for size, extent in ((ch, h), (cw, w)):
        if size > 1:
            pos = np.arange(size, dtype=_F) * (_F(extent - 1) / _F(size - 1))
            coef.append((_F(extent - 1) - pos, pos))  # d in / d lo, d in / d hi
        else:
            half = np.full((1,), _F(0.5) * _F(extent - 1), _F)
            coef.append((half, half))
    return slope_y, slope_x, coef


def _crop_grad_boxes_kernel(grads, image, boxes, box_ind, method="bilinear"):
    op = "CropAndResizeGradBoxes"
    if grads.shape[0] == 0:
        return np.zeros((0, 4), _F)
    slope_y, slope_x, ((cy0, cy1), (cx0, cx1)) = _box_slopes(grads.shape, image, boxes, box_ind, op)
    g = grads.astype(_F)
    dy_row = (slope_y * g).sum(axis=(2, 3), dtype=_F)  # [n, ch]
    dx_col = (slope_x * g).sum(axis=(1, 3), dtype=_F)  # [n, cw]
    out = np.zeros((grads.shape[0], 4), _F)
    out[:, 0], out[:, 2] = (dy_row * cy0).sum(axis=1, dtype=_F), (dy_row * cy1).sum(axis=1, dtype=_F)
    out[:, 1], out[:, 3] = (dx_col * cx0).sum(axis=1, dtype=_F), (dx_col * cx1).sum(axis=1, dtype=_F)
    return out


def _crop_boxes_jvp_kernel(image, boxes, box_ind, tangent, crop_size):
    """The crops' tangent for a tangent of the boxes: the bilinear slopes times the sampling points' motion."""
    ch, cw = (int(v) for v in np.asarray(crop_size).reshape(-1))
    n = boxes.shape[0]
    if n == 0:
        return np.zeros((0, ch, cw, image.shape[3]), _F)
    slope_y, slope_x, ((cy0, cy1), (cx0, cx1)) = _box_slopes((n, ch, cw), image, boxes, box_ind,
                                                             "CropAndResize")
    t = tangent.astype(_F)
    move_y = t[:, 0:1] * cy0[None] + t[:, 2:3] * cy1[None]  # [n, ch]
    move_x = t[:, 1:2] * cx0[None] + t[:, 3:4] * cx1[None]  # [n, cw]
    return (slope_y * move_y[:, :, None, None] + slope_x * move_x[:, None, :, None]).astype(_F)


CROP_AND_RESIZE = defop("CropAndResize", _crop_and_resize_kernel, shape=_crop_shape)
CROP_AND_RESIZE_GRAD_IMAGE = defop(
    "CropAndResizeGradImage", _crop_grad_image_kernel,
    shape=lambda specs, T="float32", method="bilinear", static=None: [(static, np.dtype(T))])
CROP_AND_RESIZE_GRAD_BOXES = defop(
    "CropAndResizeGradBoxes", _crop_grad_boxes_kernel,
    shape=lambda specs, method="bilinear": [(None if specs[2][0] is None else specs[2][0], np.dtype(_F))])
NoGradientRegistered("CropAndResizeGradImage")  # as TF: second derivatives through crop_and_resize are a LookupError
NoGradientRegistered("CropAndResizeGradBoxes")
# forward mode (tf.autodiff.ForwardAccumulator) gets its own rule: TF's double-VJP would need the gradient ops'
# gradients, which TF does not register
CROP_AND_RESIZE_BOXES_JVP = defop(
    "CropAndResizeBoxesJvp", _crop_boxes_jvp_kernel,
    shape=lambda specs: [(None if specs[1][0] is None else (specs[1][0][0], None, None, None), np.dtype(_F))])
NotDifferentiable("CropAndResizeBoxesJvp")


def _crop_and_resize_jvp(op, inputs, attrs, outputs, tin):
    image, boxes, box_ind, crop = inputs
    out = None
    if tin[0] is not None and image.dtype.name in ("float16", "float32", "float64"):
        out = execute(CROP_AND_RESIZE, (tin[0], boxes, box_ind, crop), attrs or None)  # linear in the image
    if tin[1] is not None:
        moved = execute(CROP_AND_RESIZE_BOXES_JVP, (image, boxes, box_ind, tin[1], crop))
        out = moved if out is None else out + moved
    return out


CROP_AND_RESIZE.jvp = _crop_and_resize_jvp


@defgrad("CropAndResize", inputs=True)
def _crop_and_resize_grad(op, grad):
    from tapeflow.ops import array_ops as ao

    image, boxes, box_ind = op.inputs[0], op.inputs[1], op.inputs[2]
    static = op.input_shapes[0]
    known = static is not None and None not in static
    size = convert_to_tensor(np.asarray(static, np.int32)) if known else ao.shape(image)
    g_image = None
    if image.dtype.name in ("float16", "float32", "float64"):
        g_image = execute(CROP_AND_RESIZE_GRAD_IMAGE, (grad, boxes, box_ind, size),
                          {"T": image.dtype.name, "method": op.get_attr("method"),
                           "static": tuple(static) if known else None})
    # TF's approximation: the boxes' gradient of bilinear sampling, also for "nearest"
    g_boxes = execute(CROP_AND_RESIZE_GRAD_BOXES, (grad, image, boxes, box_ind), {"method": "bilinear"})
    return [g_image, g_boxes, None, None]


def crop_and_resize(image: Any, boxes: Any, box_indices: Any, crop_size: Any, method: str = "bilinear",
                    extrapolation_value: Any = 0.0, name: Any = None) -> Tensor:
    """``tf.image.crop_and_resize``: crops ``boxes`` (``[num_boxes, 4]`` normalized ``[y1, x1, y2, x2]``) out
    of the images ``box_indices`` selects and resamples each to ``crop_size`` (``[crop_height, crop_width]``)
    with ``method`` ``"bilinear"`` or ``"nearest"``. Samples outside the image take ``extrapolation_value``.
    Returns float32 ``[num_boxes, crop_height, crop_width, depth]``; differentiable with respect to the image
    (float images) and the boxes."""
    op = "CropAndResize"
    if method not in ("bilinear", "nearest"):
        raise InvalidArgumentError(None, None, f"Value for attr 'method' of \"{method}\" is not in the list of "
                                   f"allowed values: \"bilinear\", \"nearest\" [Op:{op}]")
    image = _typed(image, _CROP_T, op)
    crop = convert_to_tensor(crop_size, dtype=dtypes.int32)
    attrs = {"method": method, "extrapolation_value": float(extrapolation_value)}
    if not isinstance(crop_size, Tensor):
        dims = tuple(int(v) for v in np.asarray(crop_size).reshape(-1))
        attrs["static_crop"] = dims if len(dims) == 2 else None
    return execute(CROP_AND_RESIZE, (image, convert_to_tensor(boxes, dtype=dtypes.float32),
                                     convert_to_tensor(box_indices, dtype=dtypes.int32), crop), attrs)


# --- DrawBoundingBoxesV2 ----------------------------------------------------------------------------------------

_DEFAULT_COLORS = np.array([[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1],
                            [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1], [1, 0, 1, 1]], _F)


def _draw_kernel(images, boxes, colors):
    op = "DrawBoundingBoxesV2"
    if images.ndim != 4:
        raise _err(op, "The rank of the images should be 4")
    if boxes.ndim != 3:
        raise _err(op, f"The rank of the boxes should be 3, got shape {_dims(boxes.shape)}")
    if boxes.shape[2] != 4:
        raise _err(op, f"The size of the third dimension of the box must be 4. Received: {boxes.shape[2]}")
    batch, h, w, depth = images.shape
    if depth not in (1, 2, 3, 4):
        raise _err(op, "Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)")
    if boxes.shape[0] != batch:
        raise _err(op, f"The batch size of the boxes ({boxes.shape[0]}) must equal the images' ({batch})")
    table = np.asarray(colors, _F).reshape(-1, colors.shape[-1]) if np.size(colors) else _DEFAULT_COLORS
    if table.shape[1] < depth:
        raise _err(op, f"Color has {table.shape[1]} channels, the image has {depth}")
    canvas = images.copy()
    for b in range(batch):
        for k in range(boxes.shape[1]):
            color = table[k % table.shape[0], :depth].astype(images.dtype)
            y0, x0, y1, x1 = (int(np.trunc(_F(boxes[b, k, i]) * _F(n - 1)))
                              for i, n in ((0, h), (1, w), (2, h), (3, w)))
            if y0 > y1 or x0 > x1 or y0 >= h or y1 < 0 or x0 >= w or x1 < 0:
                continue  # inverted or entirely outside: TF logs a warning and skips it
            ry0, ry1, rx0, rx1 = max(y0, 0), min(y1, h - 1), max(x0, 0), min(x1, w - 1)
            if y0 >= 0:
                canvas[b, y0, rx0:rx1 + 1] = color
            if y1 < h:
                canvas[b, y1, rx0:rx1 + 1] = color
            if x0 >= 0:
                canvas[b, ry0:ry1 + 1, x0] = color
            if x1 < w:
                canvas[b, ry0:ry1 + 1, x1] = color
    return canvas


DRAW_BOUNDING_BOXES = defop("DrawBoundingBoxesV2", _draw_kernel, shape=lambda specs: [specs[0]])
NotDifferentiable("DrawBoundingBoxesV2")


def draw_bounding_boxes(images: Any, boxes: Any, colors: Any, name: Any = None) -> Tensor:
    """``tf.image.draw_bounding_boxes``: ``images`` (``[batch, h, w, depth]``, float) with the outline of each
    box of ``boxes`` (``[batch, num_boxes, 4]`` normalized ``[y_min, x_min, y_max, x_max]``) drawn in
    ``colors[k % len(colors)]`` (RGBA rows; ``None``: TF's default table)."""
    op = "DrawBoundingBoxesV2"
    images = _typed(images, ("float", "half"), op, default=dtypes.float32)
    colors = np.zeros((0, 4), _F) if colors is None else colors
    return execute(DRAW_BOUNDING_BOXES, (images, _input(boxes, dtypes.float32, op, 1),
                                         _input(colors, dtypes.float32, op, 2)))
