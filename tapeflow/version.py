"""``tf.version``: the TensorFlow API version tapeflow follows (programs branch on it)."""

VERSION = "2.21.0"  # the TF release whose behaviour tapeflow reproduces; also ``tf.__version__``, as in TF
TAPEFLOW_VERSION = "0.1.0"  # tapeflow's own release (``importlib.metadata.version("tapeflow")``)
GIT_VERSION = "tapeflow"
COMPILER_VERSION = "NumPy"
GRAPH_DEF_VERSION = 0
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0
