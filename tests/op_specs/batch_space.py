"""SpaceToBatchND and BatchToSpaceND: each op's gradient is the other (linear adjoints), padded and cropped
blocks included; second order through the pair."""

import tapeflow as tf
from tests.op_specs import Arg, OpSpec

SPECS = [
    OpSpec("SpaceToBatchND", lambda x: tf.space_to_batch(x * x, [2, 3], [[0, 2], [1, 2]]), [Arg((2, 4, 6, 2))]),
    OpSpec("SpaceToBatchND", lambda x: tf.space_to_batch_nd(x * x, [2], [[1, 1]]), [Arg((2, 4, 3))],
           name="one_block_dim"),
    OpSpec("BatchToSpaceND", lambda x: tf.batch_to_space(x * x, [2, 3], [[1, 1], [0, 2]]), [Arg((12, 2, 2, 3))]),
]
