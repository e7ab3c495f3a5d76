"""``tf.nn``."""

from tapeflow.ops.math_ops import relu, sigmoid, softplus, tanh  # noqa: F401
