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


_UNSUPPORTED = ("adaptive_average_pool", "adaptive_max_pool", "conv_transpose", "ctc_loss", "ctc_decode",
                "fold", "unfold")


# ---- transposed convolutions, adaptive pooling, fold / unfold and CTC (kops11, issue 11), as Keras 3.15's
# TensorFlow backend computes them


def _per_dim(value: Any, n: int) -> tuple:
    return (value,) * n if isinstance(value, int) else tuple(value)


def _conv_transpose_length(size: int, k: int, stride: int, padding: str, output_padding: Any, dilation: int) -> int:
    # Keras's compute_conv_transpose_output_shape, one spatial dimension
    k = (k - 1) * dilation + 1
    if padding == "valid":
        return (size - 1) * stride + k + (max(k, stride) - k if output_padding is None else output_padding)
    return size * stride if output_padding is None else (size - 1) * stride + k % 2 + output_padding


@keras_op("ConvTranspose", "nn", tensors=2)
def conv_transpose(inputs: Any, kernel: Any, strides: Any = 1, padding: str = "valid", output_padding: Any = None,
                   data_format: Any = None, dilation_rate: Any = 1) -> Any:
    """``keras.ops.conv_transpose``: the transpose of ``conv`` (1-D, 2-D or 3-D), kernel
    ``spatial + (out_channels, in_channels)``; the output size follows Keras's rule from ``padding``
    and ``output_padding``."""
    from tapeflow.framework.execute import execute
    from tapeflow.ops.nn import conv as nn_conv

    x, first = _channels_last(convert(inputs), data_format)
    w = convert(kernel)
    shape, kshape = tuple(x.shape), tuple(w.shape)
    n = len(shape) - 2
    if n not in (1, 2, 3) or len(kshape) != n + 2:
        raise ValueError(f"conv_transpose takes 3-D, 4-D or 5-D inputs and a kernel of the same rank. Received: "
                         f"inputs.shape={tuple(convert(inputs).shape)}, kernel.shape={kshape}")
    if shape[-1] is not None and kshape[-1] != shape[-1]:
        raise ValueError(f"The number of input channels must match the kernel's input channels. Received: input "
                         f"channels={shape[-1]}, kernel input channels={kshape[-1]}, "
                         f"data_format='{_backend.standardize_data_format(data_format)}'.")
    padding = padding.lower()
    if padding not in ("valid", "same"):
        raise ValueError(f"The `padding` argument must be one of 'valid', 'same'. Received: padding={padding}")
    st, dl = _per_dim(strides, n), _per_dim(dilation_rate, n)
    op = (None,) * n if output_padding is None else _per_dim(output_padding, n)
    if None in shape[1:-1]:
        raise NotImplementedError(f"keras.ops.conv_transpose: inputs of unknown spatial size {shape} are not "
                                  "supported in tapeflow (only the batch may be unknown)")
    out_sp = tuple(_conv_transpose_length(s, k, a, padding, p, d)
                   for s, k, a, p, d in zip(shape[1:-1], kshape[:n], st, op, dl))
    if n == 1:  # as a 2-D transposed convolution of height 1
        x, w = tf().expand_dims(x, 1), tf().expand_dims(w, 0)
        st, dl, out_sp = (1,) + st, (1,) + dl, (1,) + out_sp
    y = execute(nn_conv.CONV2D_BACKPROP_INPUT if len(out_sp) == 2 else nn_conv.CONV3D_BACKPROP_INPUT, (w, x),
                {"input_sizes": (-1,) + out_sp + (kshape[-2],), "strides": st, "dilations": dl,
                 "padding": padding.upper()})
    if n == 1:
        y = tf().squeeze(y, [1])
    return _back(y, first)


def _adaptive_pool(kind: str, inputs: Any, output_size: Any, data_format: Any) -> Any:
    # Keras's "two-pool gather": per spatial axis, pool with the small and the big window (stride 1) and
    # gather, for each output position, the pool whose window starts where PyTorch's adaptive window does
    x = convert(inputs)
    n = len(x.shape) - 2
    if n not in (1, 2, 3):
        raise ValueError(f"adaptive_{'average' if kind == 'AVG' else 'max'}_pool supports 1D, 2D, or 3D inputs only.")
    x, first = _channels_last(x, data_format)
    out = _per_dim(output_size, n)
    spatial = tuple(x.shape)[1:-1]
    if None in spatial:
        raise ValueError("Input spatial dimensions must be statically known for adaptive pooling")
    import math

    import numpy as np

    for axis, (size, o) in enumerate(zip(spatial, out), 1):
        small = math.ceil(size / o)
        big = small + 1
        pos = np.arange(o, dtype=np.float32)
        starts = np.floor(pos * np.float32(size) / np.float32(o)).astype(np.int32)
        ends = np.ceil((pos + 1) * np.float32(size) / np.float32(o)).astype(np.int32)
        ends, starts = np.minimum(ends, size), np.minimum(starts, size - 1)
        index = np.where(ends - starts == big, starts + max(1, size - small + 1), starts).astype(np.int32)
        pools = []
        for window in (small, big):
            shape = [1] * n
            shape[axis - 1] = window
            pools.append(tf().nn.pool(x, shape, kind, strides=[1] * n, padding="VALID"))
        x = tf().gather(tf().concat(pools, axis=axis), index, axis=axis)
    return _back(x, first)


@keras_op("AdaptiveAveragePool", "nn")
def adaptive_average_pool(inputs: Any, output_size: Any, data_format: Any = None) -> Any:
    """``keras.ops.adaptive_average_pool``: average pooling to a fixed ``output_size`` (1-D, 2-D, 3-D)."""
    return _adaptive_pool("AVG", inputs, output_size, data_format)


@keras_op("AdaptiveMaxPool", "nn")
def adaptive_max_pool(inputs: Any, output_size: Any, data_format: Any = None) -> Any:
    """``keras.ops.adaptive_max_pool``: max pooling to a fixed ``output_size`` (1-D, 2-D, 3-D)."""
    return _adaptive_pool("MAX", inputs, output_size, data_format)


def _fold_geometry(size: tuple, k: tuple, d: tuple, p: tuple, s: tuple) -> tuple:
    return tuple((size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2))


@keras_op("Unfold", "nn")
def unfold(x: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Any:
    """``keras.ops.unfold`` (PyTorch's, im2col): the sliding ``kernel_size`` blocks of an ``(N, C, H, W)``
    image as ``(N, C * kH * kW, L)``."""
    x = convert(x)
    if len(x.shape) != 4:
        raise ValueError(f"Input must be a 4D tensor. Received: input.shape={tuple(x.shape)}")
    k, d, p, s = (_per_dim(v, 2) for v in (kernel_size, dilation, padding, stride))
    n, c, h, w = tuple(x.shape)
    if p[0] > 0 or p[1] > 0:
        x = tf().pad(x, [[0, 0], [0, 0], [p[0], p[0]], [p[1], p[1]]])
    nh, nw = _fold_geometry((h, w), k, d, p, s)
    blocks = [x[:, :, i * d[0]: i * d[0] + (nh - 1) * s[0] + 1: s[0], j * d[1]: j * d[1] + (nw - 1) * s[1] + 1: s[1]]
              for i in range(k[0]) for j in range(k[1])]
    out = tf().stack(blocks, axis=2)  # (N, C, kH * kW, nH, nW)
    return tf().reshape(out, [-1 if n is None else n, c * k[0] * k[1], nh * nw])


@keras_op("Fold", "nn")
def fold(x: Any, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Any:
    """``keras.ops.fold`` (PyTorch's, col2im): the inverse arrangement of ``unfold``, overlapping blocks
    summed, ``(N, C * kH * kW, L)`` to ``(N, C, oH, oW)``."""
    import numpy as np

    x = convert(x)
    if len(x.shape) != 3:
        raise ValueError(f"Input must be a 3D tensor. Received: input.shape={tuple(x.shape)}")
    k, o, d, p, s = (_per_dim(v, 2) for v in (kernel_size, output_size, dilation, padding, stride))
    from tapeflow.framework.errors import InvalidArgumentError

    ckk = x.shape[1]
    if ckk % (k[0] * k[1]) != 0:  # Keras's TensorFlow backend fails in its reshape here: the same error type
        raise InvalidArgumentError(None, None, f"fold: the second dimension of the input ({ckk}) must be divisible "
                                   f"by kernel_size product ({k[0] * k[1]}).")
    c = ckk // (k[0] * k[1])
    nh, nw = _fold_geometry(o, k, d, p, s)
    if nh * nw != x.shape[2]:
        raise InvalidArgumentError(None, None, f"fold: the input's last dimension ({x.shape[2]}) must be the number "
                                   f"of blocks {nh} * {nw} that output_size={o}, kernel_size={k}, dilation={d}, "
                                   f"padding={p} and stride={s} give.")
    n = tf().shape(x)[0]
    # (N, C, kH, kW, nH, nW) -> (kH, kW, nH, nW, N, C), scattered (and summed) into the padded output's rows/cols
    blocks = tf().transpose(tf().reshape(x, [n, c, k[0], k[1], nh, nw]), [2, 3, 4, 5, 0, 1])
    i, j, a, b = np.meshgrid(np.arange(k[0]), np.arange(k[1]), np.arange(nh), np.arange(nw), indexing="ij")
    index = np.stack([(i * d[0] + a * s[0]).ravel(), (j * d[1] + b * s[1]).ravel()], axis=1).astype(np.int32)
    padded = tf().scatter_nd(index, tf().reshape(blocks, [-1, n, c]),
                             tf().stack([o[0] + 2 * p[0], o[1] + 2 * p[1], n, c]))
    out = tf().transpose(padded, [2, 3, 0, 1])
    return out[:, :, p[0]: p[0] + o[0], p[1]: p[1] + o[1]]


def _ctc_transitions(labels: Any, max_label: int) -> Any:
    """TF's ``_ctc_state_trans``: the log transition matrix [batch, to, from] between the CTC states
    (label states 0..L, 0 the start; blank states L+1..2L+1), label to next label only between differing labels."""
    import numpy as np

    t = tf()
    n_label = max_label + 1
    n = 2 * n_label
    trans = np.eye(n, dtype=np.float32)
    trans[1, 0] = 1.0  # start -> first label
    for k in range(1, n_label):
        trans[k, n_label + k - 1] = 1.0  # blank k-1 -> label k
    for k in range(n_label):
        trans[n_label + k, k] = 1.0  # label k -> blank k
    out = t.expand_dims(t.constant(trans), 0)
    if max_label > 1:
        skips = np.zeros((max_label - 1, n, n), np.float32)
        for k in range(2, n_label):
            skips[k - 2, k, k - 1] = 1.0  # label k-1 -> label k
        differ = 1.0 - t.cast(t.equal(labels[:, :-1], labels[:, 1:]), "float32")
        out = out + t.tensordot(differ, t.constant(skips), axes=1)
    return t.math.log(out)


def _ctc_neg_log_likelihood(labels: Any, logits: Any, label_length: Any, logit_length: Any) -> Any:
    """TF's ``ctc_loss_dense`` loss (blank 0, logits [time, batch, classes], float32): the backward pass of its
    batched forward-backward algorithm in the log domain, with its finite log(0) (log 1e-307), step by step."""
    import numpy as np

    t = tf()
    steps, classes, max_label = logits.shape[0], logits.shape[2], labels.shape[1]
    if steps is None:
        raise NotImplementedError("keras.ops.ctc_loss: outputs of unknown length are not supported in tapeflow")
    log_0 = float(np.float32(np.log(1e-307)))
    n_label = max_label + 1
    log_probs = t.nn.log_softmax(logits)
    # each state's observation log probability: label states by their label, blank states by the blank
    picked = t.reduce_sum(t.expand_dims(log_probs, 2) * t.expand_dims(t.one_hot(labels, classes), 0), axis=3)
    blank = t.tile(log_probs[:, :, :1], [1, 1, n_label])
    observed = t.pad(t.concat([picked, blank], axis=2), [[0, 0], [0, 0], [1, 0]], constant_values=-np.inf)
    backward_trans = t.transpose(_ctc_transitions(labels, max_label), [0, 2, 1])
    final_mask = t.one_hot(label_length, n_label, dtype="float32")
    final = (1.0 - t.concat([final_mask, final_mask], axis=1)) * log_0
    mask = t.sequence_mask(logit_length, steps, "float32")
    state, total = final, t.zeros_like(final[:, 0])
    for step in range(steps - 1, -1, -1):
        s = t.expand_dims(state + observed[step], 1) + backward_trans
        s = t.math.reduce_logsumexp(s, axis=-1)
        norm = t.math.reduce_logsumexp(s, axis=-1, keepdims=True)
        m = mask[:, step]
        total = total + norm[:, 0] * m
        state = (s - norm) * m[:, None] + final * (1.0 - m[:, None])
    return -(state[:, 0] + total)


@keras_op("CTCLoss", "nn", tensors=4)
def ctc_loss(target: Any, output: Any, target_length: Any, output_length: Any, mask_index: int = 0) -> Any:
    """``keras.ops.ctc_loss``: the CTC loss of ``output`` logits ``(batch, time, classes)`` against the
    dense ``target`` labels ``(batch, max_length)`` (lengths given), blank ``mask_index``; as TF's
    ``tf.nn.ctc_loss`` with dense labels computes it (float32; float64 in and out, computed in float32)."""
    t = tf()
    target = t.cast(convert(target), "int32")
    output = convert(output)
    result = _result_type(_backend.standardize_dtype(output.dtype), "float32")
    logits = t.transpose(t.cast(output, "float32"), [1, 0, 2])
    if len(target.shape) != 2 or len(logits.shape) != 3:
        raise ValueError(f"ctc_loss takes target of shape (batch, max_length) and output of shape (batch, time, "
                         f"classes). Received: target.shape={tuple(target.shape)}, output.shape={tuple(output.shape)}")
    blank = mask_index + logits.shape[2] if mask_index < 0 else mask_index
    if blank != 0:  # TF moves the blank class to the front and renumbers the labels below it
        logits = t.concat([logits[:, :, blank:blank + 1], logits[:, :, :blank], logits[:, :, blank + 1:]], axis=2)
        target = t.where(target < blank, target + 1, target)
    loss = _ctc_neg_log_likelihood(target, logits, t.cast(convert(target_length), "int32"),
                                   t.cast(convert(output_length), "int32"))
    return t.cast(loss, result)


def _ctc_greedy(logits: Any, lengths: Any, merge_repeated: bool, blank: int) -> tuple:
    """TF's CTCGreedyDecoder kernel: per step the first best class; blanks dropped, repeats merged (NumPy)."""
    import numpy as np

    batch, steps, _ = logits.shape
    paths = [[] for _ in range(batch)]
    scores = np.zeros((batch, 1), np.float32)
    for b in range(batch):
        prev = -1
        for step in range(int(lengths[b])):
            k = int(np.argmax(logits[b, step]))
            scores[b, 0] -= logits[b, step, k]
            if k != blank and not (merge_repeated and k == prev):
                paths[b].append(k)
            prev = k
    return [paths], scores


def _ctc_beam_search(logits: Any, lengths: Any, beam_width: int, top_paths: int) -> tuple:
    """TF's CTCBeamSearchDecoder (the default scorer, blank = the last class, no merging of repeats) on
    batch-major ``logits``: tf.nn.ctc_beam_search_decoder's search, per sequence."""
    import numpy as np

    from tapeflow.framework.errors import InvalidArgumentError
    from tapeflow.ops.nn import ctc_ops

    if top_paths > beam_width:
        raise InvalidArgumentError(None, None, "requested more paths than the beam width. [Op:CTCBeamSearchDecoder]")
    paths = [[] for _ in range(top_paths)]
    scores = np.zeros((logits.shape[0], top_paths), np.float32)
    for b in range(logits.shape[0]):
        log_y = ctc_ops._log_softmax(logits[b, :int(lengths[b])].astype(np.float32))
        found, best = ctc_ops._beam_search(log_y, beam_width, top_paths, merge_repeated=False)
        for i in range(top_paths):
            paths[i].append(found[i])
            scores[b, i] = best[i]
    return paths, scores


@keras_op("CTCDecode", "nn", tensors=2)
def ctc_decode(inputs: Any, sequence_lengths: Any, strategy: str = "greedy", beam_width: int = 100,
               top_paths: int = 1, merge_repeated: bool = True, mask_index: int = 0) -> tuple:
    """``keras.ops.ctc_decode``: the best label sequences of ``inputs`` ``(batch, time, classes)``, greedy
    or by beam search, as ``(decoded (paths, batch, time) int32 padded with -1, scores)``: the greedy
    scores are minus the sum of the best logits (``(batch, 1)``), the beam search's the paths' log
    probabilities (``(batch, top_paths)``), as TF's ``ctc_greedy_decoder`` / ``ctc_beam_search_decoder``."""
    import numpy as np

    t = tf()
    x = convert(inputs)
    dtype = _result_type(_backend.standardize_dtype(x.dtype), "float32")
    if strategy not in ("greedy", "beam_search"):
        raise ValueError(f"Invalid strategy {strategy}. Supported values are 'greedy' and 'beam_search'.")
    if len(x.shape) != 3:
        raise ValueError(f"ctc_decode takes inputs of shape (batch, time, classes). Received: {tuple(x.shape)}")

    def decode(logits: Any, lengths: Any) -> tuple:
        logits, lengths = np.asarray(logits), np.asarray(lengths).reshape(-1)
        batch, steps, classes = logits.shape
        if strategy == "greedy":
            paths, scores = _ctc_greedy(logits, lengths, merge_repeated,
                                        classes - 1 if mask_index is None else mask_index % classes)
        else:
            if mask_index is not None:  # TF's beam search takes the blank last
                mask = mask_index % classes
                logits = np.concatenate([logits[..., :mask], logits[..., mask + 1:], logits[..., mask:mask + 1]], -1)
            paths, scores = _ctc_beam_search(logits, lengths, beam_width, top_paths)
            if mask_index is not None:
                paths = [[[v + 1 if v >= mask else v for v in p] for p in beams] for beams in paths]
        dense = np.full((len(paths), batch, steps), -1, np.int32)
        for i, beams in enumerate(paths):
            for b, p in enumerate(beams):
                dense[i, b, :len(p)] = p
        return dense, scores.astype(dtype)

    # the search runs in NumPy, at run time inside tf.function (TF's decoders are CPU kernels too)
    decoded, scores = t.numpy_function(decode, [t.cast(x, dtype), t.cast(convert(sequence_lengths), "int32")],
                                       ["int32", dtype])
    paths = 1 if strategy == "greedy" else top_paths
    decoded.set_shape((paths,) + tuple(x.shape[:2]))
    scores.set_shape((x.shape[0], paths))
    return decoded, scores


@keras_op("Polar", "nn", tensors=2)
def polar(abs_: Any, angle: Any) -> Any:
    """``keras.ops.polar``: the complex numbers ``abs_ * (cos(angle) + i sin(angle))`` (sig11)."""
    from tapeflow.keras.ops.math import _complex_from_tuple

    abs_, angle = convert(abs_), convert(angle)
    return _complex_from_tuple((abs_ * tf().cos(angle), abs_ * tf().sin(angle)))
