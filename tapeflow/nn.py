"""``tf.nn``: activations, softmax and cross-entropies, convolutions,
pooling, normalization, dropout and embeddings (see tapeflow/ops/nn/)."""

from tapeflow.ops.math_ops import relu, sigmoid, softplus, tanh  # noqa: F401
from tapeflow.ops.nn import (  # noqa: F401
    atrous_conv2d,
    avg_pool,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    batch_norm_with_global_normalization,
    batch_normalization,
    bias_add,
    compute_average_loss,
    conv1d,
    conv1d_transpose,
    conv2d,
    conv2d_transpose,
    conv3d,
    conv3d_transpose,
    conv_transpose,
    convolution,
    crelu,
    depth_to_space,
    depthwise_conv2d,
    dropout,
    elu,
    embedding_lookup,
    embedding_lookup_sparse,
    gelu,
    in_top_k,
    l2_loss,
    l2_normalize,
    leaky_relu,
    local_response_normalization,
    log_poisson_loss,
    log_sigmoid,
    log_softmax,
    lrn,
    max_pool,
    max_pool1d,
    max_pool2d,
    max_pool3d,
    max_pool_with_argmax,
    moments,
    normalize_moments,
    pool,
    relu6,
    safe_embedding_lookup_sparse,
    scale_regularization_loss,
    selu,
    separable_conv2d,
    sigmoid_cross_entropy_with_logits,
    silu,
    softmax,
    softmax_cross_entropy_with_logits,
    softsign,
    space_to_depth,
    sparse_softmax_cross_entropy_with_logits,
    sufficient_statistics,
    swish,
    weighted_cross_entropy_with_logits,
    weighted_moments,
    zero_fraction,
)

from tapeflow.ops.nn import stateless_dropout as _stateless_dropout  # noqa: E402
from tapeflow.ops.batch_space_ops import space_to_batch  # noqa: E402, F401
from tapeflow.ops.nn.sampled_losses import compute_accidental_hits, nce_loss, sampled_softmax_loss  # noqa: E402, F401
from tapeflow.ops.nn.ctc_ops import (  # noqa: E402, F401
    collapse_repeated, ctc_beam_search_decoder, ctc_greedy_decoder, ctc_loss, ctc_unique_labels,
)


class experimental:  # noqa: N801 - TF's namespace name
    """``tf.nn.experimental``: ``stateless_dropout``."""

    stateless_dropout = staticmethod(_stateless_dropout)


try:  # tf.nn.top_k is tf.math.top_k (tapeflow/ops/special_ops.py)
    from tapeflow.ops.special_ops import top_k  # noqa: F401
except ImportError:  # pragma: no cover - the math family is optional here
    pass


# TF's tf.nn names tapeflow does not build: looking one up says so.
_NOT_BUILT = frozenset({
    "RNNCellDeviceWrapper", "RNNCellDropoutWrapper", "RNNCellResidualWrapper", "all_candidate_sampler",
    "approx_max_k", "approx_min_k", "atrous_conv2d_transpose", "depthwise_conv2d_backprop_filter",
    "depthwise_conv2d_backprop_input", "dilation2d", "erosion2d", "fixed_unigram_candidate_sampler",
    "fractional_avg_pool", "fractional_max_pool", "isotonic_regression", "learned_unigram_candidate_sampler",
    "with_space_to_batch",
})


def __getattr__(name: str):
    if name in _NOT_BUILT:
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError(f"tf.nn.{name} is not implemented in tapeflow")
    raise AttributeError(f"module 'tapeflow.nn' has no attribute '{name}'")
