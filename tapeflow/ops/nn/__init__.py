"""The ``tf.nn`` op families, one module each:

- ``activations``: relu6, leaky_relu, elu, selu, softsign, gelu, silu, log_sigmoid, softmax, log_softmax, crelu;
- ``losses``: the softmax / sparse softmax / sigmoid / weighted cross-entropies, l2_loss, log_poisson_loss,
  compute_average_loss, scale_regularization_loss, in_top_k;
- ``normalization``: l2_normalize, moments, batch_normalization, local_response_normalization;
- ``conv``: bias_add and the 1-D / 2-D / depthwise / 3-D / transposed convolutions;
- ``pooling``: max / average pooling in 1-3 D, max_pool_with_argmax, pool;
- ``dropout`` and ``embedding``;
- ``_geometry`` (window geometry and argument parsing shared by conv and pooling) and ``_common``.

Each op's kernel, shape rule and gradient rule sit side by side in its family's module."""

from tapeflow.ops.nn.activations import (
    crelu, elu, gelu, leaky_relu, log_sigmoid, log_softmax, relu6, selu, silu, softmax, softsign, swish, zero_fraction,
)
from tapeflow.ops.nn.losses import (
    compute_average_loss, in_top_k, l2_loss, log_poisson_loss, scale_regularization_loss,
    sigmoid_cross_entropy_with_logits, softmax_cross_entropy_with_logits, sparse_softmax_cross_entropy_with_logits,
    weighted_cross_entropy_with_logits,
)
from tapeflow.ops.nn.normalization import (
    batch_norm_with_global_normalization, batch_normalization, l2_normalize, local_response_normalization, lrn,
    moments, normalize_moments,
    sufficient_statistics, weighted_moments,
)
from tapeflow.ops.nn.conv import (
    atrous_conv2d, bias_add, conv1d, conv1d_transpose, conv2d, conv2d_transpose, conv3d, conv3d_transpose,
    conv_transpose, convolution,
    depthwise_conv2d, separable_conv2d,
)
from tapeflow.ops.nn.pooling import (
    avg_pool, avg_pool1d, avg_pool2d, avg_pool3d, max_pool, max_pool1d, max_pool2d, max_pool3d, max_pool_with_argmax,
    pool,
)
from tapeflow.ops.nn.dropout import dropout, stateless_dropout
from tapeflow.ops.nn.embedding import embedding_lookup, embedding_lookup_sparse, safe_embedding_lookup_sparse
from tapeflow.ops.nn.space_depth import depth_to_space, space_to_depth
from tapeflow.ops.nn import ctc_ops  # noqa: F401 - registers the CTC ops (tf.nn.ctc_loss and the decoders)
from tapeflow.ops.nn import sampled_losses  # noqa: F401 - registers ComputeAccidentalHits

__all__ = [
    "relu6", "leaky_relu", "elu", "selu", "softsign", "gelu", "silu", "swish", "log_sigmoid", "softmax", "log_softmax",
    "softmax_cross_entropy_with_logits", "sparse_softmax_cross_entropy_with_logits",
    "sigmoid_cross_entropy_with_logits", "l2_loss", "l2_normalize", "moments", "batch_normalization",
    "batch_norm_with_global_normalization", "bias_add",
    "conv1d", "conv2d", "conv2d_transpose", "depthwise_conv2d", "max_pool", "avg_pool", "max_pool1d", "avg_pool1d",
    "max_pool2d", "avg_pool2d", "dropout", "stateless_dropout", "embedding_lookup",
    "embedding_lookup_sparse", "safe_embedding_lookup_sparse", "convolution", "atrous_conv2d",
    "separable_conv2d",
    "pool", "crelu", "weighted_cross_entropy_with_logits", "log_poisson_loss", "sufficient_statistics",
    "normalize_moments", "weighted_moments", "zero_fraction", "compute_average_loss", "scale_regularization_loss",
    "in_top_k", "conv3d", "conv3d_transpose",
    "max_pool3d", "avg_pool3d", "max_pool_with_argmax", "local_response_normalization", "lrn",
    "conv1d_transpose", "conv_transpose", "depth_to_space", "space_to_depth",
]
