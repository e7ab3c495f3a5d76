"""``tf.version``: the TensorFlow API version tapeflow follows (programs branch on it)."""

VERSION = "2.21.0"  # the TF release whose behaviour tapeflow reproduces
GIT_VERSION = "tapeflow"
COMPILER_VERSION = "NumPy"
GRAPH_DEF_VERSION = 0
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0
