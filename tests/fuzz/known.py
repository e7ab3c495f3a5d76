"""Documented differences from TensorFlow that the fuzzer finds on purpose.

Each entry: (function glob, text in the mismatch message or "", reason). Every
one is listed in the README's "Known differences from TensorFlow".
"""

KNOWN: list = [
    ("math.count_nonzero", "e-41", "denormals are kept (TF flushes them to zero)"),
    ("op.abs", "e-41", "denormals are kept (TF flushes them to zero)"),
    ("op.mod", "e-41", "denormals are kept (TF flushes them to zero)"),
    ("nn.conv2d", "out[0] shape [", "TF's oneDNN conv returns its input when the VALID output is empty"),
    (
        "nn.max_pool2d",
        "tf.float32), 3, 1, 'VALID')",
        "TF's second order on an empty max_pool output is uninitialized memory",
    ),
    ("nn.softmax_cross_entropy_with_logits", "g2[", "second derivatives w.r.t. the labels are correct here"),
    ("math.zeta", "tf.float16)", "TF has no float16 kernel; tapeflow computes"),
    ("math.polygamma", "tf.float16)", "TF has no float16 kernel; tapeflow computes"),
    ("math.nextafter", "tf.float16)", "TF has no float16 kernel; tapeflow computes"),
    (
        "nn.max_pool3d",
        "raised nothing () vs TF InvalidArgumentError (Value for attr 'T' of double",
        "TF has no float64 kernel",
    ),
    ("nn.moments", "g2[", "second derivatives of moments are correct here; TF's rule drops a term"),
    ("saturate_cast", "], tf.int64), ", "TF 2.21's saturate_cast of int64 gives wrong numbers (every value -2**63)"),
    ("saturate_cast", "inf], tf.float64), tf.int64", "TF 2.21 casts inf past int64's range (undefined behaviour)"),
]
