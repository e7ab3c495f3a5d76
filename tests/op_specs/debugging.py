"""Specs for tapeflow/ops/debug_ops.py."""

import tapeflow as tf
from tests.op_specs import Arg, OpSpec

SPECS = [
    OpSpec("CheckNumerics", lambda x: tf.debugging.check_numerics(x, "spec"), [Arg((3, 4))]),
]
