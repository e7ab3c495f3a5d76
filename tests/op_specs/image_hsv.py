"""RGBToHSV: TF's gradient rule (the partial derivatives on each branch of largest / smallest channel),
checked on distinct channels away from ties (where the branches, and the hue's derivative, jump); second order
through the rule's own ops. HSVToRGB is NotDifferentiable, as in TF."""

import tapeflow as tf
from tests.op_specs import Arg, OpSpec

SPECS = [
    OpSpec("RGBToHSV", tf.image.rgb_to_hsv, [Arg((2, 5, 3), 0.1, 0.9)]),
]
