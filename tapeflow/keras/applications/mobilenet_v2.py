"""MobileNetV2 (Sandler et al., 2018): inverted residual blocks, layer for layer as Keras 3 builds
them (same names, so Keras's ImageNet weight files load)."""

from __future__ import annotations

import warnings
from typing import Any

from tapeflow.keras import backend as _backend
from tapeflow.keras import layers
from tapeflow.keras.applications import _common, imagenet_utils

BASE_WEIGHT_PATH = _common.WEIGHTS_BASE + "mobilenet_v2/"
# (filters, stride, expansion) of the 17 inverted residual blocks
_BLOCKS = ((16, 1, 1), (24, 2, 6), (24, 1, 6), (32, 2, 6), (32, 1, 6), (32, 1, 6), (64, 2, 6), (64, 1, 6),
           (64, 1, 6), (64, 1, 6), (96, 1, 6), (96, 1, 6), (96, 1, 6), (160, 2, 6), (160, 1, 6), (160, 1, 6),
           (320, 1, 6))


def _make_divisible(v: float, divisor: int, min_value: int | None = None) -> int:
    min_value = divisor if min_value is None else min_value
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v  # never round down by more than 10%


def _bn(x: Any, axis: int, name: str) -> Any:
    return layers.BatchNormalization(axis=axis, epsilon=1e-3, momentum=0.999, name=name)(x)


def _inverted_res_block(inputs: Any, expansion: int, stride: int, alpha: float, filters: int, block_id: int) -> Any:
    axis = 1 if _backend.image_data_format() == "channels_first" else -1
    in_channels = inputs.shape[axis]
    pointwise_filters = _make_divisible(int(filters * alpha), 8)
    x = inputs
    prefix = f"block_{block_id}_"
    if block_id:  # expand with a pointwise 1x1 convolution
        x = layers.Conv2D(expansion * in_channels, kernel_size=1, padding="same", use_bias=False, activation=None,
                          name=f"{prefix}expand")(x)
        x = layers.ReLU(6.0, name=f"{prefix}expand_relu")(_bn(x, axis, f"{prefix}expand_BN"))
    else:
        prefix = "expanded_conv_"
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3), name=f"{prefix}pad")(x)
    x = layers.DepthwiseConv2D(kernel_size=3, strides=stride, activation=None, use_bias=False,
                               padding="same" if stride == 1 else "valid", name=f"{prefix}depthwise")(x)
    x = layers.ReLU(6.0, name=f"{prefix}depthwise_relu")(_bn(x, axis, f"{prefix}depthwise_BN"))
    x = layers.Conv2D(pointwise_filters, kernel_size=1, padding="same", use_bias=False, activation=None,
                      name=f"{prefix}project")(x)
    x = _bn(x, axis, f"{prefix}project_BN")
    if in_channels == pointwise_filters and stride == 1:
        return layers.Add(name=f"{prefix}add")([inputs, x])
    return x


def _default_size(shape: Any, first: bool) -> int:
    rows, cols = (shape[1], shape[2]) if first else (shape[0], shape[1])
    return rows if rows == cols and rows in (96, 128, 160, 192, 224) else 224


def MobileNetV2(input_shape: Any = None, alpha: float = 1.0, include_top: bool = True,  # noqa: N802
                weights: Any = "imagenet", input_tensor: Any = None, pooling: Any = None, classes: int = 1000,
                classifier_activation: Any = "softmax", name: str | None = None) -> Any:
    """``keras.applications.MobileNetV2``: width multiplier ``alpha``, inputs of at least 32x32 scaled to
    [-1, 1] by ``mobilenet_v2.preprocess_input``; ImageNet weights for alpha in {0.35, 0.5, 0.75, 1.0,
    1.3, 1.4} and square inputs of 96, 128, 160, 192 or 224 pixels."""
    from tapeflow.keras.models import Model

    _common.check_weights(weights, include_top, classes)
    first = _backend.image_data_format() == "channels_first"
    if input_shape is not None and input_tensor is not None and _backend.is_keras_tensor(input_tensor):
        axis = 1 if first else 2
        if input_tensor.shape[axis] != input_shape[1]:
            raise ValueError(f"input_tensor.shape[2] must equal input_shape[1]; Received `input_tensor.shape="
                             f"{input_tensor.shape}`, `input_shape={input_shape}`")
    if input_shape is None and input_tensor is not None and _backend.is_keras_tensor(input_tensor):
        size = _default_size(tuple(input_tensor.shape)[1:], first)
    elif input_shape is None:
        size = 224
    else:
        size = _default_size(input_shape, first)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=size, min_size=32,
                                                    data_format=_backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    rows, cols = (input_shape[1], input_shape[2]) if first else (input_shape[0], input_shape[1])
    if weights == "imagenet":
        if alpha not in (0.35, 0.50, 0.75, 1.0, 1.3, 1.4):
            raise ValueError("If imagenet weights are being loaded, alpha must be one of `0.35`, `0.50`, `0.75`, "
                             f"`1.0`, `1.3` or `1.4` only; Received `alpha={alpha}`")
        if rows != cols or rows not in (96, 128, 160, 192, 224):
            rows = 224
            warnings.warn("`input_shape` is undefined or non-square, or `rows` is not in [96, 128, 160, 192, 224]. "
                          "Weights for input shape (224, 224) will be loaded as the default.", stacklevel=2)
    img_input = _common.image_input(input_tensor, input_shape)
    axis = 1 if first else -1
    x = layers.Conv2D(_make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2), padding="same", use_bias=False,
                      name="Conv1")(img_input)
    x = layers.ReLU(6.0, name="Conv1_relu")(_bn(x, axis, "bn_Conv1"))
    for block_id, (filters, stride, expansion) in enumerate(_BLOCKS):
        x = _inverted_res_block(x, filters=filters, alpha=alpha, stride=stride, expansion=expansion,
                                block_id=block_id)
    last = _make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = layers.Conv2D(last, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = layers.ReLU(6.0, name="out_relu")(_bn(x, axis, "Conv_1_bn"))
    x = _common.head(x, include_top, pooling, classes, classifier_activation, weights)
    model = Model(_common.model_inputs(input_tensor, img_input), x,
                  name=name if name is not None else f"mobilenetv2_{alpha:0.2f}_{rows}")
    file_name = f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_{float(alpha)}_{rows}" \
                f"{'' if include_top else '_no_top'}.h5"
    return _common.load(model, weights, file_name, BASE_WEIGHT_PATH + file_name)


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """RGB 0-255 images scaled to [-1, 1] (Keras's ``"tf"`` mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
