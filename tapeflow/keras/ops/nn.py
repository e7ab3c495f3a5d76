"""``keras.ops.nn`` (also flat in ``keras.ops``): activations, losses, pooling, convolutions and
normalizations, as Keras 3's TensorFlow backend computes them."""

from __future__ import annotations

from typing import Any

from tapeflow.keras import activations as _act
from tapeflow.keras import backend as _backend
from tapeflow.keras import losses as _losses
from tapeflow.keras.ops._base import convert, keras_op, tf
from tapeflow.keras.ops._base import result_type as _result_type


def _activation(name: str, cls: str, fn: Any, doc: str) -> Any:
    def impl(x: Any) -> Any:
        return fn(convert(x))

    impl.__name__ = name
    impl.__doc__ = f"``keras.ops.{name}``: {doc}"
    return keras_op(cls, "nn")(impl)


relu = _activation("relu", "Relu", _act.relu, "max(x, 0).")
relu6 = _activation("relu6", "Relu6", _act.relu6, "min(max(x, 0), 6).")
sigmoid = _activation("sigmoid", "Sigmoid", _act.sigmoid, "1 / (1 + exp(-x)).")
sparse_sigmoid = _activation("sparse_sigmoid", "SparseSigmoid", _act.sparse_sigmoid, "the piecewise-linear sigmoid.")
softplus = _activation("softplus", "Softplus", _act.softplus, "log(1 + exp(x)).")
softsign = _activation("softsign", "Softsign", _act.softsign, "x / (1 + |x|).")
sparse_plus = _activation("sparse_plus", "SparsePlus", _act.sparse_plus, "the piecewise-quadratic softplus.")
silu = _activation("silu", "Silu", _act.silu, "x * sigmoid(x).")
swish = silu
log_sigmoid = _activation("log_sigmoid", "LogSigmoid", _act.log_sigmoid, "log(sigmoid(x)).")
hard_sigmoid = _activation("hard_sigmoid", "HardSigmoid", _act.hard_sigmoid, "clip(x / 6 + 0.5, 0, 1).")
hard_silu = _activation("hard_silu", "HardSilu", _act.hard_silu, "x * hard_sigmoid(x).")
hard_swish = hard_silu
selu = _activation("selu", "Selu", _act.selu, "the scaled exponential linear unit.")
tanh_shrink = _activation("tanh_shrink", "TanhShrink", _act.tanh_shrink, "x - tanh(x).")
hard_tanh = _activation("hard_tanh", "HardTanh", _act.hard_tanh, "clip(x, -1, 1).")


@keras_op("SoftShrink", "nn")
def soft_shrink(x: Any, threshold: float = 0.5) -> Any:
    """``keras.ops.soft_shrink``: x - threshold above it, x + threshold below its negative, else 0."""
    return _act.soft_shrink(convert(x), threshold)


@keras_op("HardShrink", "nn")
def hard_shrink(x: Any, threshold: float = 0.5) -> Any:
    """``keras.ops.hard_shrink``: x where |x| > threshold, else 0."""
    return _act.hard_shrink(convert(x), threshold)


@keras_op("Squareplus", "nn")
def squareplus(x: Any, b: float = 4) -> Any:
    """``keras.ops.squareplus``: (x + sqrt(x**2 + b)) / 2."""
    return _act.squareplus(convert(x), b)


@keras_op("LeakyRelu", "nn")
def leaky_relu(x: Any, negative_slope: float = 0.2) -> Any:
    """``keras.ops.leaky_relu``: x, or negative_slope * x below 0."""
    return _act.leaky_relu(convert(x), negative_slope)


@keras_op("Elu", "nn")
def elu(x: Any, alpha: float = 1.0) -> Any:
    """``keras.ops.elu``: x, or alpha * (exp(x) - 1) below 0."""
    return _act.elu(convert(x), alpha)


@keras_op("Gelu", "nn")
def gelu(x: Any, approximate: bool = True) -> Any:
    """``keras.ops.gelu``: the Gaussian error linear unit; Keras's ops default to the tanh approximation."""
    return _act.gelu(convert(x), approximate)


@keras_op("Celu", "nn")
def celu(x: Any, alpha: float = 1.0) -> Any:
    """``keras.ops.celu``: max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    return _act.celu(convert(x), alpha)


@keras_op("Glu", "nn")
def glu(x: Any, axis: int = -1) -> Any:
    """``keras.ops.glu``: a * sigmoid(b) of the two halves of ``axis``."""
    return _act.glu(convert(x), axis)


@keras_op("Threshold", "nn")
def threshold(x: Any, threshold: float, default_value: float) -> Any:
    """``keras.ops.threshold``: x where x > threshold, else default_value."""
    return _act.threshold(convert(x), threshold, default_value)


def _over_axis(fn: Any, x: Any, axis: Any) -> Any:
    # axis=None: over every element (TF's softmax would take the last axis)
    if axis is None:
        return tf().reshape(fn(tf().reshape(x, [-1]), -1), tf().shape(x))
    return fn(x, axis)


@keras_op("Softmax", "nn")
def softmax(x: Any, axis: int | None = -1) -> Any:
    """``keras.ops.softmax`` over ``axis`` (``None``: all elements)."""
    return _over_axis(lambda v, a: tf().nn.softmax(v, axis=a), convert(x), axis)


@keras_op("LogSoftmax", "nn")
def log_softmax(x: Any, axis: int | None = -1) -> Any:
    """``keras.ops.log_softmax`` over ``axis`` (``None``: all elements)."""
    return _over_axis(lambda v, a: tf().nn.log_softmax(v, axis=a), convert(x), axis)


@keras_op("Sparsemax", "nn")
def sparsemax(x: Any, axis: int = -1) -> Any:
    """``keras.ops.sparsemax``: the Euclidean projection onto the simplex along ``axis``."""
    return _act.sparsemax(convert(x), axis)


# ---- encodings and losses


@keras_op("OneHot", "nn", floatx_dtype=True)
def one_hot(x: Any, num_classes: int, axis: int = -1, dtype: Any = None, sparse: bool = False) -> Any:
    """``keras.ops.one_hot``: float32 unless ``dtype`` is given; negative or out-of-range indices give
    all-zero rows."""
    if sparse:
        raise NotImplementedError("keras.ops.one_hot(sparse=True) is not implemented in tapeflow")
    x = convert(x, "int64")
    return tf().one_hot(x, num_classes, axis=axis, dtype=_backend.standardize_dtype(dtype or "float32"))


@keras_op("MultiHot", "nn", floatx_dtype=True)
def multi_hot(inputs: Any, num_classes: int | None = None, axis: int = -1, dtype: Any = None,
              sparse: bool = False) -> Any:
    """``keras.ops.multi_hot``: 1 at every index a row holds (a 1-D input is one row)."""
    if sparse:
        raise NotImplementedError("keras.ops.multi_hot(sparse=True) is not implemented in tapeflow")
    if num_classes is None:
        raise ValueError("Argument `num_classes` must be specified.")
    x = convert(inputs)
    reduction_axis = 1 if len(x.shape) > 1 else 0
    hot = tf().one_hot(tf().cast(x, "int32"), num_classes, axis=axis,
                       dtype=_backend.standardize_dtype(dtype or "float32"))
    return tf().reduce_max(hot, axis=reduction_axis)


def _same_shape(target: Any, output: Any) -> None:
    ts, os_ = tuple(target.shape), tuple(output.shape)
    if len(ts) != len(os_) or any(a is not None and b is not None and a != b for a, b in zip(ts, os_)):
        raise ValueError("Arguments `target` and `output` must have the same shape. "
                         f"Received: target.shape={ts}, output.shape={os_}")


@keras_op("BinaryCrossentropy", "nn", tensors=2)
def binary_crossentropy(target: Any, output: Any, from_logits: bool = False) -> Any:
    """``keras.ops.binary_crossentropy``: elementwise (no mean), probabilities clipped to
    [epsilon, 1 - epsilon]."""
    target, output = convert(target), convert(output)
    _same_shape(target, output)
    return _losses._bce_elementwise(tf().cast(target, output.dtype), output, from_logits)


@keras_op("CategoricalCrossentropy", "nn", tensors=2)
def categorical_crossentropy(target: Any, output: Any, from_logits: bool = False, axis: int = -1) -> Any:
    """``keras.ops.categorical_crossentropy``: per example, over ``axis``."""
    return _losses.categorical_crossentropy(target, output, from_logits=from_logits, axis=axis)


@keras_op("SparseCategoricalCrossentropy", "nn", tensors=2)
def sparse_categorical_crossentropy(target: Any, output: Any, from_logits: bool = False, axis: int = -1) -> Any:
    """``keras.ops.sparse_categorical_crossentropy``: per example, integer targets."""
    return _losses.sparse_categorical_crossentropy(target, output, from_logits=from_logits, axis=axis)


# ---- statistics and normalization


@keras_op("Moments", "nn")
def moments(x: Any, axes: Any, keepdims: bool = False, synchronized: bool = False) -> Any:
    """``keras.ops.moments``: (mean, variance) over ``axes``; float16 computes in float32, as Keras."""
    x = convert(x)
    dtype = _backend.standardize_dtype(x.dtype)
    if dtype in ("float16", "bfloat16"):
        x = tf().cast(x, "float32")
    mean, variance = tf().nn.moments(x, list(axes) if isinstance(axes, tuple) else axes, keepdims=keepdims)
    if dtype in ("float16", "bfloat16"):
        big = 65504.0
        mean = tf().cast(tf().clip_by_value(mean, -big, big), dtype)
        variance = tf().cast(tf().clip_by_value(variance, -big, big), dtype)
    return mean, variance


@keras_op("BatchNorm", "nn", tensors=("x", "mean", "variance", "offset", "scale"))
def batch_normalization(x: Any, mean: Any, variance: Any, axis: int, offset: Any = None, scale: Any = None,
                        epsilon: float = 1e-3) -> Any:
    """``keras.ops.batch_normalization``: (x - mean) / sqrt(variance + epsilon) * scale + offset,
    the statistics along ``axis``."""
    x, mean, variance = convert(x), convert(mean), convert(variance)
    if axis != -1:
        shape = [1] * len(x.shape)
        shape[axis] = mean.shape[0]
        mean, variance = tf().reshape(mean, shape), tf().reshape(variance, shape)
        offset = None if offset is None else tf().reshape(convert(offset), shape)
        scale = None if scale is None else tf().reshape(convert(scale), shape)
    return tf().nn.batch_normalization(x, mean, variance, offset, scale, epsilon)


@keras_op("Normalize", "nn")
def normalize(x: Any, axis: int = -1, order: int = 2, epsilon: float | None = None) -> Any:
    """``keras.ops.normalize``: x / max(norm(x), epsilon) along ``axis``."""
    if not isinstance(order, int) or order < 1:
        raise ValueError(f"Argument `order` must be an int >= 1. Received: order={order}")
    x = convert(x)
    if len(x.shape) == 0:
        x = tf().expand_dims(x, 0)
    epsilon = _backend.epsilon() if epsilon is None else epsilon
    if order == 2:
        inv = tf().math.rsqrt(tf().reduce_sum(tf().square(x), axis=axis, keepdims=True))
        return x * tf().minimum(inv, tf().cast(1.0 / epsilon, x.dtype))
    norm = tf().norm(x, ord=order, axis=axis, keepdims=True)
    return x / tf().maximum(norm, tf().cast(epsilon, x.dtype))


@keras_op("LayerNorm", "nn", tensors=3)
def layer_normalization(x: Any, gamma: Any = None, beta: Any = None, axis: Any = -1, epsilon: float | None = None,
                        rms_scaling: bool = False) -> Any:
    """``keras.ops.layer_normalization`` over ``axis`` (an int or a list), computed in at least float32
    as Keras does (``x * inv + (beta - mean * inv)``); ``rms_scaling=True`` is Keras's deprecated RMS form."""
    t = tf()
    x = convert(x)
    dtype = _backend.standardize_dtype(x.dtype)
    epsilon = _backend.epsilon() if epsilon is None else epsilon
    x = t.cast(x, _result_type(dtype, "float32"))
    ndims = len(x.shape)
    axes = sorted(a % ndims for a in ([axis] if isinstance(axis, int) else axis))
    bshape = [x.shape[d] if d in axes else 1 for d in range(ndims)]

    def bcast(v: Any) -> Any:
        if v is None:
            return None
        v = t.cast(convert(v), x.dtype)
        return t.reshape(v, bshape) if len(v.shape) != ndims and axes != [ndims - 1] else v

    if rms_scaling:
        _, variance = t.nn.moments(x, axes, keepdims=True)
        out = x * t.math.rsqrt(variance + epsilon)
        if gamma is not None:
            out = out * bcast(gamma)
        return t.cast(out, dtype)
    mean, variance = t.nn.moments(x, axes, keepdims=True)
    inv = t.math.rsqrt(variance + epsilon)
    if gamma is not None:
        inv = inv * bcast(gamma)
    res = -mean * inv
    if beta is not None:
        res = res + bcast(beta)
    return t.cast(x * inv + res, dtype)


@keras_op("RMSNorm", "nn", kw=("scale",))
def rms_normalization(x: Any, scale: Any = None, axis: int = -1, epsilon: float | None = None) -> Any:
    """``keras.ops.rms_normalization``: x / sqrt(mean(x**2) + epsilon) * scale along ``axis``."""
    x = convert(x)
    epsilon = _backend.epsilon() if epsilon is None else epsilon
    rrms = tf().math.rsqrt(tf().reduce_mean(tf().square(x), axis=axis, keepdims=True) + tf().cast(epsilon, x.dtype))
    out = x * rrms
    return out if scale is None else out * tf().cast(convert(scale), x.dtype)


@keras_op("PSNR", "nn", tensors=2)
def psnr(x1: Any, x2: Any, max_val: float) -> Any:
    """``keras.ops.psnr``: 20 log10(max_val) - 10 log10(mean squared error)."""
    x1, x2 = convert(x1), convert(x2)
    if tuple(x1.shape) != tuple(x2.shape):
        raise ValueError(f"Input shapes {tuple(x1.shape)} and {tuple(x2.shape)} must match for PSNR calculation.")
    mse = tf().reduce_mean(tf().square(x1 - x2))
    log10 = tf().math.log(tf().constant(10.0, x1.dtype))
    return 20.0 * tf().math.log(tf().cast(max_val, x1.dtype)) / log10 - 10.0 * tf().math.log(mse) / log10


# ---- pooling and convolution (channels_last; channels_first through transposes, as Keras's TF backend)


def _channels_last(x: Any, data_format: Any) -> tuple[Any, bool]:
    first = _backend.standardize_data_format(data_format) == "channels_first"
    if first:
        n = len(x.shape)
        x = tf().transpose(x, [0] + list(range(2, n)) + [1])
    return x, first


def _back(x: Any, first: bool) -> Any:
    if not first:
        return x
    n = len(x.shape)
    return tf().transpose(x, [0, n - 1] + list(range(1, n - 1)))


def _pool(kind: str, inputs: Any, pool_size: Any, strides: Any, padding: str, data_format: Any) -> Any:
    x, first = _channels_last(convert(inputs), data_format)
    strides = pool_size if strides is None else strides
    fn = tf().nn.max_pool if kind == "max" else tf().nn.avg_pool
    return _back(fn(x, pool_size, strides, padding.upper()), first)


@keras_op("MaxPool", "nn")
def max_pool(inputs: Any, pool_size: Any, strides: Any = None, padding: str = "valid", data_format: Any = None) -> Any:
    """``keras.ops.max_pool`` over the spatial dimensions (strides default to ``pool_size``)."""
    return _pool("max", inputs, pool_size, strides, padding, data_format)


@keras_op("AveragePool", "nn")
def average_pool(inputs: Any, pool_size: Any, strides: Any = None, padding: str = "valid",
                 data_format: Any = None) -> Any:
    """``keras.ops.average_pool`` over the spatial dimensions (strides default to ``pool_size``)."""
    return _pool("avg", inputs, pool_size, strides, padding, data_format)


@keras_op("Conv", "nn", tensors=2)
def conv(inputs: Any, kernel: Any, strides: Any = 1, padding: str = "valid", data_format: Any = None,
         dilation_rate: Any = 1) -> Any:
    """``keras.ops.conv``: an N-D convolution, kernel ``spatial + (in_channels, out_channels)``."""
    x, first = _channels_last(convert(inputs), data_format)
    out = tf().nn.convolution(x, convert(kernel), strides, padding.upper(), dilations=dilation_rate)
    if 0 in tuple(out.shape) and 0 not in tuple(x.shape):
        raise ValueError(
            f"The convolution operation resulted in an empty output. Output shape: {tuple(out.shape)}. This can "
            "happen if the input is too small for the given kernel size, strides, dilation rate, and padding mode. "
            "Please check the input shape and convolution parameters.")
    return _back(out, first)


@keras_op("DepthwiseConv", "nn", tensors=2)
def depthwise_conv(inputs: Any, kernel: Any, strides: Any = 1, padding: str = "valid", data_format: Any = None,
                   dilation_rate: Any = 1) -> Any:
    """``keras.ops.depthwise_conv`` (2-D; kernel ``(kh, kw, in_channels, multiplier)``)."""
    x, first = _channels_last(convert(inputs), data_format)
    if len(x.shape) != 4:
        raise NotImplementedError("keras.ops.depthwise_conv: tapeflow implements 2-D inputs only")
    s = (strides, strides) if isinstance(strides, int) else tuple(strides)
    d = (dilation_rate, dilation_rate) if isinstance(dilation_rate, int) else tuple(dilation_rate)
    out = tf().nn.depthwise_conv2d(x, convert(kernel), (1,) + s + (1,), padding.upper(), dilations=d)
    return _back(out, first)


@keras_op("SeparableConv", "nn", tensors=3)
def separable_conv(inputs: Any, depthwise_kernel: Any, pointwise_kernel: Any, strides: Any = 1,
                   padding: str = "valid", data_format: Any = None, dilation_rate: Any = 1) -> Any:
    """``keras.ops.separable_conv``: a depthwise convolution, then a 1x1 one (2-D)."""
    depth = depthwise_conv(inputs, depthwise_kernel, strides, padding, data_format, dilation_rate)
    return conv(depth, pointwise_kernel, 1, "valid", data_format)


@keras_op("DepthToSpace", "nn")
def depth_to_space(x: Any, block_size: int, data_format: str = "channels_last") -> Any:
    """``keras.ops.depth_to_space`` (4-D)."""
    x, first = _channels_last(convert(x), data_format)
    return _back(tf().nn.depth_to_space(x, block_size), first)


@keras_op("SpaceToDepth", "nn")
def space_to_depth(x: Any, block_size: int, data_format: str = "channels_last") -> Any:
    """``keras.ops.space_to_depth`` (4-D)."""
    x, first = _channels_last(convert(x), data_format)
    return _back(tf().nn.space_to_depth(x, block_size), first)


@keras_op("DotProductAttention", "nn", tensors=3, kw=("bias", "mask", "scale"))
def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None, scale: Any = None,
                          is_causal: bool = False, flash_attention: Any = None,
                          attn_logits_soft_cap: Any = None) -> Any:
    """``keras.ops.dot_product_attention``: softmax(q k^T * scale + bias, masked) v over
    ``(batch, seq, heads, dim)`` inputs (key/value heads may divide the query's, grouped attention)."""
    if flash_attention:
        raise ValueError("Flash attention is not supported in tensorflow backend.")
    t = tf()
    q, k, v = convert(query), convert(key), convert(value)
    if len(q.shape) != 4:
        raise ValueError(f"`dot_product_attention` only supports 4D inputs. Received: query.shape={tuple(q.shape)}")
    heads, kv_heads = q.shape[2], k.shape[2]
    if heads != kv_heads:
        rep = heads // kv_heads
        k, v = t.repeat(k, rep, axis=2), t.repeat(v, rep, axis=2)
    dim = q.shape[-1]
    scale = 1.0 / float(dim) ** 0.5 if scale is None else scale
    logits = t.einsum("BTNH,BSNH->BNTS", q, k) * t.cast(scale, q.dtype)
    if attn_logits_soft_cap is not None:
        cap = t.cast(attn_logits_soft_cap, q.dtype)
        logits = t.tanh(logits / cap) * cap
    if bias is not None:
        logits = logits + t.cast(convert(bias), logits.dtype)
    keep = None
    if mask is not None:
        keep = t.cast(convert(mask), "bool")
    if is_causal:
        tq, ts = q.shape[1], k.shape[1]
        causal = t.cast(t.linalg.band_part(t.ones((tq, ts), "int32"), -1, 0), "bool")
        keep = causal if keep is None else t.logical_and(keep, causal)
    if keep is not None:
        big = 65500.0 if logits.dtype == "float16" else 3.38953e38  # Keras's large negative: -0.7 of these
        logits = t.where(keep, logits, t.constant(-0.7 * big, logits.dtype))
    probs = t.nn.softmax(logits, axis=-1)
    return t.einsum("BNTS,BSNH->BTNH", probs, v)


_UNSUPPORTED = ("polar", "adaptive_average_pool", "adaptive_max_pool", "conv_transpose", "ctc_loss", "ctc_decode",
                "fold", "unfold")
