"""Resampling ops: ResizeBilinear/ResizeNearestNeighbor and their gradient ops (each the other's adjoint), and
ImageProjectiveTransformV3, whose TF gradient (the inverse transform applied to the gradient) is exact for a
permutation: a one-pixel wrap-around shift."""

import numpy as np

import tapeflow as tf
from tapeflow.framework.execute import execute
from tapeflow.ops import image_transform_ops as it
from tests.op_specs import Arg, OpSpec

SHIFT = np.array([[1, 0, 1, 0, 1, -1, 0, 0]], np.float32)  # x - 1, y + 1: wrapped one pixel


def _bilinear_grad(g):
    return execute(it.RESIZE_BILINEAR_GRAD, (g * g, tf.zeros((1, 3, 4, 2), tf.float64)),
                   {"align_corners": False, "half_pixel_centers": True})


def _nearest_grad(g):
    return execute(it.RESIZE_NEAREST_GRAD, (g * g, tf.constant([3, 4])),
                   {"align_corners": False, "half_pixel_centers": True})


# float64 images resample in float32 (as TF's kernels): the ops are linear, so wide steps are exact up to that
# rounding
F32 = {"eps": 1e-2, "rtol": 1e-4, "atol": 1e-4}

SPECS = [
    OpSpec("ResizeBilinear", lambda x: tf.cast(it.resize(x * x, (5, 7)), tf.float64), [Arg((1, 3, 4, 2))], **F32),
    OpSpec("ResizeBilinearGrad", _bilinear_grad, [Arg((1, 5, 7, 2))], **F32),
    OpSpec("ResizeNearestNeighbor", lambda x: it.resize(x * x, (5, 3), method="nearest"), [Arg((2, 3, 4, 1))]),
    OpSpec("ResizeNearestNeighborGrad", _nearest_grad, [Arg((1, 5, 7, 2))]),
    OpSpec("ImageProjectiveTransformV3",
           lambda x: it.image_projective_transform_v3(x * x, SHIFT, [3, 4], 0.0, "NEAREST", "WRAP"),
           [Arg((2, 3, 4, 1))], **F32),
    OpSpec("ImageProjectiveTransformV3",
           lambda x: it.image_projective_transform_v3(x * x, SHIFT, [3, 4], 0.0, "BILINEAR", "WRAP"),
           [Arg((1, 3, 4, 2))], name="bilinear", **F32),
]
