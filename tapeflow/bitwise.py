"""``tf.bitwise``: bitwise operations on integer tensors."""

from tapeflow.ops.math_ops import bitwise_and, bitwise_or, bitwise_xor, invert, left_shift, right_shift

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]
