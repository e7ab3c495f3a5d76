"""``tf.linalg``."""

from tapeflow.ops.math_ops import matmul  # noqa: F401
