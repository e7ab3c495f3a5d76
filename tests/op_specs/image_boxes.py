"""CropAndResize, differentiated with respect to the image (CropAndResizeGradImage, exact: the op is linear in
it) and the boxes (CropAndResizeGradBoxes: the slope of the bilinear sample, away from its kinks at whole pixel
coordinates, which the boxes here avoid). TF registers no gradient for either gradient op, so first order only.
The NMS ops have no gradient (NoGradientRegistered / NotDifferentiable)."""

import tapeflow as tf
from tests.op_specs import Arg, OpSpec

# sampling coordinates in_y = y1 * 3 + k * (y2 - y1) * 3 / 2 stay >= 0.05 from whole pixels
BOXES = [[0.12, 0.21, 0.83, 0.9], [0.05, 0.02, 0.62, 0.72]]


def _crop(image, boxes, method="bilinear", size=(3, 4)):
    out = tf.image.crop_and_resize(image * image, tf.cast(boxes, tf.float32), [0, 1], size, method=method)
    return tf.cast(out, tf.float64)


# float64 images sample in float32 (as TF's kernel): wide steps, the op being piecewise linear
F32 = {"eps": 1e-3, "rtol": 2e-3, "atol": 2e-3, "order": 1}

SPECS = [
    OpSpec("CropAndResize", _crop, [Arg((2, 4, 5, 2), 0.5, 2.0), Arg(value=BOXES)], **F32),
    OpSpec("CropAndResize", lambda x, b: _crop(x, b, "nearest"), [Arg((2, 4, 5, 2), 0.5, 2.0),
                                                                  Arg(value=BOXES, diff=False)],
           name="nearest", **F32),
    OpSpec("CropAndResize", lambda x, b: _crop(x, b, size=(1, 1)), [Arg((2, 4, 5, 2), 0.5, 2.0), Arg(value=BOXES)],
           name="one_pixel", **F32),
]
