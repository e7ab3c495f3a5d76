"""``tf.image.sample_distorted_bounding_box`` and ``stateless_sample_distorted_bounding_box`` (TF's
``SampleDistortedBoundingBoxV2`` / ``StatelessSampleDistortedBoundingBox``), and ``tf.image.extract_glimpse``
(``ExtractGlimpseV2``).

The box sampler is TF's kernel step by step: up to ``max_attempts`` times it draws an aspect ratio, a height
between the ones the area range allows and a position (``SimplePhilox``: ``RandFloat``, and ``Uniform``'s
rejection sampling, on float32 arithmetic as in C++), keeping the first crop that covers
``min_object_covered`` of some box; the words come from the op's TF Philox stream (the stateful op reserves
``4 * max_attempts`` words per call of its kernel, as ``GuardedPhiloxRandom``; the stateless one starts from its
seed's scrambled key), so seeded results are TF's. Not differentiable (integer outputs), as in TF.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import FailedPreconditionError, InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import philox
from tapeflow.ops.registry import NoGradientRegistered, NotDifferentiable, defop

__all__ = ["extract_glimpse", "sample_distorted_bounding_box", "stateless_sample_distorted_bounding_box"]

_F = np.float32


def _err(op: str, message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"{message} [Op:{op}]")


def _shape_str(a: np.ndarray) -> str:
    return "[" + ",".join(str(d) for d in np.shape(a)) + "]"


def _rand_float(words: Any) -> np.float32:
    """TF's ``Uint32ToFloat``: the low 23 bits as a float in [1, 2), minus one."""
    return (np.array([(words() & 0x7FFFFF) | 0x3F800000], np.uint32).view(np.float32)[0] - _F(1.0))


def _uniform(words: Any, n: int) -> int:
    """TF's ``ExactUniformInt<uint32>``: a power of two masks; otherwise words below ``2**32 % n`` are rejected."""
    n &= 0xFFFFFFFF
    if n == 0:
        words()
        return 0
    if n & (n - 1) == 0:
        return words() & (n - 1)
    rem = (0xFFFFFFFF % n) + 1
    while True:
        r = words()
        if r >= rem:
            return r % n


def _lrint(x: np.float32) -> int:
    return int(np.rint(x))


def _random_crop(width: int, height: int, min_rel: np.float32, max_rel: np.float32, aspect: np.float32,
                 words: Any) -> tuple | None:
    """TF's ``GenerateRandomCrop`` (float32 arithmetic as its C++): ``(x, y, w, h)`` or None."""
    if max_rel <= 0 or aspect <= 0 or width <= 0 or height <= 0 or min_rel > max_rel:
        return None
    min_area = _F(min_rel * _F(width)) * _F(height)
    max_area = _F(max_rel * _F(width)) * _F(height)
    h = _lrint(np.sqrt(_F(min_area / aspect)))
    max_h = _lrint(np.sqrt(_F(max_area / aspect)))
    if _lrint(_F(max_h) * aspect) > width:
        max_h = int((width + 0.5 - float(_F(1e-7))) / float(aspect))
        if _lrint(_F(max_h) * aspect) > width:
            max_h -= 1
    max_h = min(max_h, height)
    h = min(h, max_h)
    if h < max_h:
        h += _uniform(words, max_h - h + 1)
    w = _lrint(_F(h) * aspect)
    area = _F(w * h)
    if area < min_area:
        h += 1
        w = _lrint(_F(h) * aspect)
        area = _F(w * h)
    if area > max_area:
        h -= 1
        w = _lrint(_F(h) * aspect)
        area = _F(w * h)
    if area < min_area or area > max_area or w > width or h > height or w <= 0 or h <= 0:
        return None
    y = _uniform(words, height - h) if h < height else 0
    x = _uniform(words, width - w) if w < width else 0
    return x, y, w, h


def _area(r: tuple) -> np.float32:
    return _F((r[2] - r[0]) * (r[3] - r[1]))


def _intersect(a: tuple, b: tuple) -> tuple:
    lo_x, lo_y, hi_x, hi_y = max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])
    return (0, 0, 0, 0) if lo_x > hi_x or lo_y > hi_y else (lo_x, lo_y, hi_x, hi_y)


def _covers(crop: tuple, min_covered: np.float32, boxes: list) -> bool:
    if _area(crop) < 1:
        return False
    for box in boxes:
        area = _area(box)
        if area < 1:
            continue
        if _F(_area(_intersect(crop, box)) / area) >= min_covered:
            return True
    return False


def _check_attrs(op: str, aspect_ratio_range, area_range, max_attempts):
    if len(aspect_ratio_range) != 2:
        raise _err(op, "Aspect ratio range field must specify 2 dimensions")
    if not (aspect_ratio_range[0] > 0 and aspect_ratio_range[1] > 0):
        raise _err(op, f"Aspect ratio range must be non-negative: [{_g(aspect_ratio_range[0])}, "
                   f"{_g(aspect_ratio_range[1])}]")
    if len(area_range) != 2:
        raise _err(op, "Area range field must specify 2 dimensions")
    if not (area_range[0] > 0 and area_range[1] > 0):
        raise _err(op, f"Area range must be non-negative: [{_g(area_range[0])}, {_g(area_range[1])}]")
    if not (area_range[0] <= 1 and area_range[1] <= 1):
        raise _err(op, f"Area range must be less then or equal to 1.0: [{_g(area_range[0])}, {_g(area_range[1])}]")
    if max_attempts <= 0:
        raise _err(op, f"Max attempts must be non-negative: {max_attempts}")


def _g(v: float) -> str:
    """A float as C++'s ``operator<<`` prints it (6 significant digits)."""
    return f"{float(_F(v)):g}"


def _sample(op, image_size, boxes, min_object_covered, words, aspect_ratio_range, area_range, max_attempts,
            use_image_if_no_bounding_boxes):
    if image_size.ndim != 1:
        raise _err(op, f"image_size must be 1-dimensional{_shape_str(image_size)}")
    if image_size.shape[0] != 3:
        raise _err(op, f"image_size must contain 3 elements{_shape_str(image_size)}")
    height, width = int(image_size[0]), int(image_size[1])
    if boxes.ndim != 3:
        raise _err(op, f"input boxes must be 3-dimensional [batch, num_boxes, coords]: {_shape_str(boxes)}")
    if boxes.shape[-1] != 4:
        raise _err(op, f"bounding boxes must have shape [4] or [*, 4], got {_shape_str(boxes)}")
    if np.ndim(min_object_covered) != 0:
        raise _err(op, f"min_object_covered must be 0-D, got shape {_shape_str(min_object_covered)}")
    covered = _F(min_object_covered)
    if not covered >= 0:
        raise _err(op, f"Min object covered must be non-negative: {_g(covered)}")
    rects = []
    for b in np.asarray(boxes, np.float32).reshape(-1, 4):
        for v in b:
            if not (0.0 <= v <= 1.0):
                raise _err(op, f"All bounding box coordinates must be in [0.0, 1.0]: {_g(v)}")
        rects.append((int(_F(b[1] * _F(width))), int(_F(b[0] * _F(height))), int(_F(b[3] * _F(width))),
                      int(_F(b[2] * _F(height)))))
    image = (0, 0, width, height)
    if not rects:
        if not use_image_if_no_bounding_boxes:
            raise _err(op, "No bounding boxes provided as input. One must enable use_image_if_no_bounding_boxes if "
                       "you wish to not provide any bounding boxes.")
        rects.append(image)
    lo_area, hi_area = _F(area_range[0]), _F(area_range[1])
    lo_ratio, hi_ratio = _F(aspect_ratio_range[0]), _F(aspect_ratio_range[1])
    crop = None
    for _ in range(max_attempts):
        ratio = _F(_F(_rand_float(words) * _F(hi_ratio - lo_ratio)) + lo_ratio)
        found = _random_crop(width, height, lo_area, hi_area, ratio, words)
        if found is not None:
            x, y, w, h = found
            rect = (x, y, x + w, y + h)
            if _covers(rect, covered, rects):
                crop = rect
                break
    if crop is None:
        crop = image
    tw, th = crop[2] - crop[0], crop[3] - crop[1]
    if width < tw + crop[0]:
        raise FailedPreconditionError(None, None, f"width must be > target_width + offset_width: {width}vs {tw} + "
                                      f"{crop[0]} [Op:{op}]")
    dt = image_size.dtype
    begin = np.array([crop[1], crop[0], 0], dt)
    size = np.array([th, tw, -1], dt)
    bbox = np.array([[[_F(crop[1]) / _F(height), _F(crop[0]) / _F(width), _F(crop[3]) / _F(height),
                       _F(crop[2]) / _F(width)]]], np.float32)
    return begin, size, bbox


def _stateful_kernel(image_size, boxes, min_object_covered, *, seed, seed2, instance, aspect_ratio_range, area_range,
                     max_attempts, use_image_if_no_bounding_boxes):
    from tapeflow.ops.random_ops import _philox_take

    op = "SampleDistortedBoundingBoxV2"
    _check_attrs(op, aspect_ratio_range, area_range, max_attempts)
    kernel = (op, image_size.dtype.name, aspect_ratio_range, area_range, max_attempts, use_image_if_no_bounding_boxes)
    counter, key = _philox_take(kernel, seed, seed2, instance, 0, steps=(4 * max_attempts + 3) // 4)
    return _sample(op, image_size, boxes, min_object_covered, philox.WordStream.at(counter, key), aspect_ratio_range,
                   area_range, max_attempts, use_image_if_no_bounding_boxes)


def _stateless_kernel(image_size, boxes, min_object_covered, seed, *, aspect_ratio_range, area_range, max_attempts,
                      use_image_if_no_bounding_boxes):
    op = "StatelessSampleDistortedBoundingBox"
    _check_attrs(op, aspect_ratio_range, area_range, max_attempts)
    if np.ndim(seed) != 1 or np.shape(seed)[0] != 2:
        raise _err(op, f"seed must have shape [2], not {_shape_str(seed)}")
    key, counter = philox.stateless_key_counter(int(seed[0]), int(seed[1]))
    return _sample(op, image_size, boxes, min_object_covered, philox.WordStream.at(counter, key), aspect_ratio_range,
                   area_range, max_attempts, use_image_if_no_bounding_boxes)


def _sdbb_shape(specs, **attrs):
    dt = specs[0][1]
    return [((3,), dt), ((3,), dt), ((1, 1, 4), np.dtype(np.float32))]


SAMPLE_BOX = defop("SampleDistortedBoundingBoxV2", _stateful_kernel, shape=_sdbb_shape, num_outputs=3)
SAMPLE_BOX.extra["stateful"] = True
NotDifferentiable("SampleDistortedBoundingBoxV2")
STATELESS_SAMPLE_BOX = defop("StatelessSampleDistortedBoundingBox", _stateless_kernel, shape=_sdbb_shape,
                             num_outputs=3)
NotDifferentiable("StatelessSampleDistortedBoundingBox")

_INT_SIZES = ("uint8", "int8", "int16", "int32", "int64")


def _box_inputs(op: str, image_size: Any, bounding_boxes: Any, min_object_covered: Any, aspect_ratio_range: Any,
                area_range: Any, max_attempts: Any, use_image_if_no_bounding_boxes: Any) -> tuple:
    size = image_size if isinstance(image_size, Tensor) else convert_to_tensor(image_size)
    if size.dtype.name not in _INT_SIZES:
        raise TypeError(f"Value passed to parameter 'image_size' has DataType {size.dtype.name} not in list of "
                        f"allowed values: {', '.join(_INT_SIZES)}")
    boxes = bounding_boxes if isinstance(bounding_boxes, Tensor) else convert_to_tensor(bounding_boxes,
                                                                                       dtype=dtypes.float32)
    covered = min_object_covered if isinstance(min_object_covered, Tensor) else convert_to_tensor(
        min_object_covered, dtype=dtypes.float32)
    for name, v in (("aspect_ratio_range", aspect_ratio_range), ("area_range", area_range)):
        if not isinstance(v, (list, tuple)):
            raise TypeError(f"Expected list for '{name}' argument to '{op}' Op, not {v!r}.")
    attrs = {
        "aspect_ratio_range": tuple(float(v) for v in aspect_ratio_range),
        "area_range": tuple(float(v) for v in area_range),
        "max_attempts": int(max_attempts),
        "use_image_if_no_bounding_boxes": bool(use_image_if_no_bounding_boxes),
    }
    return (size, boxes, covered), attrs


def sample_distorted_bounding_box(image_size: Any, bounding_boxes: Any, seed: int = 0, min_object_covered: Any = 0.1,
                                  aspect_ratio_range: Any = None, area_range: Any = None, max_attempts: Any = None,
                                  use_image_if_no_bounding_boxes: Any = None, name: Any = None) -> tuple:
    """``tf.image.sample_distorted_bounding_box``: a random crop ``(begin, size, bboxes)`` of an image of
    ``image_size`` (``[height, width, channels]``) covering at least ``min_object_covered`` of one of the
    ``bounding_boxes`` (``[batch, N, 4]`` of ``[y_min, x_min, y_max, x_max]`` in [0, 1]); ``begin`` and ``size``
    feed ``tf.slice``, ``bboxes`` (``[1, 1, 4]``) ``tf.image.draw_bounding_boxes``. A non-zero ``seed`` gives TF's
    boxes (each call continues the op's stream, as TF's eager kernel); ``seed=0`` draws fresh ones.

    >>> begin, size, box = tf.image.sample_distorted_bounding_box(
    ...     [100, 200, 3], tf.constant([[[0.1, 0.2, 0.5, 0.9]]]), seed=7, min_object_covered=0.5)
    """
    from tapeflow.ops import random_ops

    inputs, attrs = _box_inputs("SampleDistortedBoundingBoxV2", image_size, bounding_boxes, min_object_covered,
                                [0.75, 1.33] if aspect_ratio_range is None else aspect_ratio_range,
                                [0.05, 1] if area_range is None else area_range,
                                100 if max_attempts is None else max_attempts, bool(use_image_if_no_bounding_boxes))
    seeds = random_ops.seed_attrs(seed) if seed else {"seed": None, "seed2": None,
                                                      "instance": random_ops.seed_attrs(None)["instance"]}
    if seed and seeds["seed"] == 0 and seeds["seed2"] == 0:
        seeds = {**seeds, "seed": None, "seed2": None}
    return tuple(execute(SAMPLE_BOX, inputs, {**seeds, **attrs}))


def stateless_sample_distorted_bounding_box(image_size: Any, bounding_boxes: Any, seed: Any,
                                            min_object_covered: Any = 0.1, aspect_ratio_range: Any = None,
                                            area_range: Any = None, max_attempts: Any = None,
                                            use_image_if_no_bounding_boxes: Any = None, name: Any = None) -> tuple:
    """``tf.image.stateless_sample_distorted_bounding_box``: as :func:`sample_distorted_bounding_box`, the same
    box for the same ``seed`` (a shape ``[2]`` int32/int64 tensor), TF's box."""
    inputs, attrs = _box_inputs("StatelessSampleDistortedBoundingBox", image_size, bounding_boxes,
                                min_object_covered, [0.75, 1.33] if aspect_ratio_range is None else aspect_ratio_range,
                                [0.05, 1] if area_range is None else area_range,
                                100 if max_attempts is None else max_attempts, bool(use_image_if_no_bounding_boxes))
    s = seed if isinstance(seed, Tensor) else convert_to_tensor(seed)
    if s.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"Value passed to parameter 'seed' has DataType {s.dtype.name} not in list of allowed "
                        "values: int32, int64")
    return tuple(execute(STATELESS_SAMPLE_BOX, inputs + (s,), attrs))


# -- ExtractGlimpseV2 -----------------------------------------------------------------

_NOISES = ("uniform", "gaussian", "zero")


def _glimpse_kernel(images, size, offsets, *, centered, normalized, noise):
    op = "ExtractGlimpseV2"
    if images.ndim != 4:
        raise _err(op, f"input must be 4-dimensional (batch_size, height, width, depth){_shape_str(images)}")
    if size.ndim != 1 or size.shape[0] != 2:
        raise _err(op, f"input must be a vector of size 2 (height, width){_shape_str(size)}")
    batch, in_h, in_w, channels = images.shape
    if offsets.ndim != 2:
        raise _err(op, f"input must be a matrix{_shape_str(offsets)}")
    if offsets.shape[0] != batch:
        raise _err(op, f"first dimension should be batch{_shape_str(offsets)}")
    if offsets.shape[1] != 2:
        raise _err(op, f"second dimension should be of size 2 (y,x){_shape_str(offsets)}")
    if noise not in _NOISES:
        raise _err(op, f"The noise could only be uniform, gaussian, or zero, got{noise}")
    out_h, out_w = int(size[0]), int(size[1])
    out = np.zeros((batch, out_h, out_w, channels), np.float32)
    for i in range(batch):
        y, x = _F(offsets[i, 0]), _F(offsets[i, 1])
        # Eigen's ExtractGlimpses (version 2) in float32: un-normalize, un-center, then truncate
        if normalized:
            x, y = _F(x * _F(in_w)), _F(y * _F(in_h))
            if centered:
                x, y = _F(x / _F(2)), _F(y / _F(2))
                x, y = _F(x + _F(in_w / 2)), _F(y + _F(in_h / 2))
                x, y = _F(x - _F(out_w / 2)), _F(y - _F(out_h / 2))
        elif centered:
            x, y = _F(x + _F(in_w / 2)), _F(y + _F(in_h / 2))
        ox, oy = int(x), int(y)  # C's cast: toward zero
        img = images[i]
        if 0 <= ox and ox + out_w < in_w and 0 <= oy and oy + out_h < in_h:
            out[i] = img[oy:oy + out_h, ox:ox + out_w]
            continue
        if noise == "uniform":
            lo, hi = _F(img.min()), _F(img.max())
            out[i] = lo + _random_state().random((out_h, out_w, channels), np.float32) * (hi - lo)
        elif noise == "gaussian":
            flat = img.reshape(-1, channels).astype(np.float32)
            mean, sigma = flat.mean(0), np.sqrt(((flat - flat.mean(0)) ** 2).mean(0))
            draw = mean + _random_state().standard_normal((out_h, out_w, channels), np.float32) * sigma
            out[i] = np.clip(draw, flat.min(0), flat.max(0))
        # the part of the window over the image
        src_x, dst_x = max(ox, 0), max(-ox, 0)
        src_y, dst_y = max(oy, 0), max(-oy, 0)
        w = max(0, min(out_w - dst_x, in_w - src_x))
        h = max(0, min(out_h - dst_y, in_h - src_y))
        if w and h:
            out[i, dst_y:dst_y + h, dst_x:dst_x + w] = img[src_y:src_y + h, src_x:src_x + w]
    return out


def _random_state() -> np.random.Generator:
    from tapeflow.ops.random_ops import stream

    return stream(None, None)  # Eigen's noise generators are seeded from the clock: fresh numbers


def _glimpse_shape(specs, **attrs):
    s = specs[0][0]
    return [(None if s is None else (s[0], None, None, s[3]), np.dtype(np.float32))]


EXTRACT_GLIMPSE = defop("ExtractGlimpseV2", _glimpse_kernel, shape=_glimpse_shape)
EXTRACT_GLIMPSE.extra["stateful"] = True
NoGradientRegistered("ExtractGlimpseV2")  # TF registers none for V2: differentiating it is TF's LookupError


def extract_glimpse(input: Any, size: Any, offsets: Any, centered: bool = True, normalized: bool = True,  # noqa: A002
                    noise: str = "uniform", name: Any = None) -> Tensor:
    """``tf.image.extract_glimpse``: a ``size`` (``[height, width]``) window of each image of the batch at
    ``offsets`` (``[batch, 2]`` of ``(y, x)``: normalized to [-1, 1] around the centre by default, or pixels with
    ``normalized=False``; ``centered=False`` counts from the top-left corner), the part outside the image filled
    with ``noise``: ``"uniform"`` (between the image's min and max), ``"gaussian"`` (its channels' mean and
    deviation) or ``"zero"``. float32, as TF.

    >>> x = [[[[0.0], [1.0], [2.0]], [[3.0], [4.0], [5.0]], [[6.0], [7.0], [8.0]]]]
    >>> tf.image.extract_glimpse(x, size=(2, 2), offsets=[[1, 1]], centered=False, normalized=False)[0, :, :, 0]
    <tf.Tensor: shape=(2, 2), dtype=float32, numpy=
    array([[4., 5.],
           [7., 8.]], dtype=float32)>
    """
    from tapeflow.ops import math_ops

    images = input if isinstance(input, Tensor) else convert_to_tensor(input, dtype=dtypes.float32)
    if images.dtype != dtypes.float32:
        images = math_ops.cast(images, dtypes.float32)
    s = size if isinstance(size, Tensor) else convert_to_tensor(size, dtype=dtypes.int32)
    off = offsets if isinstance(offsets, Tensor) else convert_to_tensor(offsets, dtype=dtypes.float32)
    if off.dtype != dtypes.float32:
        off = math_ops.cast(off, dtypes.float32)
    return execute(EXTRACT_GLIMPSE, (images, s, off), {"centered": bool(centered), "normalized": bool(normalized),
                                                       "noise": str(noise)})
