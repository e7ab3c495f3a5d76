"""Documented differences from TensorFlow that the fuzzer finds on purpose.

Each entry: (function glob, text in the mismatch message or "", reason). Every
one is listed in the README's "Known differences from TensorFlow".
"""

KNOWN: list = [
    ("nn.moments", "g2[", "second derivatives of moments are correct here; TF's rule drops a term"),
    ("saturate_cast", "], tf.int64), ", "TF 2.21's saturate_cast of int64 gives wrong numbers (every value -2**63)"),
    ("saturate_cast", "inf], tf.float64), tf.int64", "TF 2.21 casts inf past int64's range (undefined behaviour)"),
]
