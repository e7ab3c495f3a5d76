"""MobileNetV3Small and MobileNetV3Large (Howard et al., 2019): inverted residual blocks with
squeeze-and-excite and hard-swish (or, ``minimalistic``, plain 3x3 ReLU blocks), layer for layer as
Keras 3 builds them (same names, so Keras's ImageNet weight files load). The models rescale their 0-255
inputs themselves (``include_preprocessing``): ``preprocess_input`` passes through."""

from __future__ import annotations

import warnings
from typing import Any

from tapeflow.keras import backend as _backend
from tapeflow.keras import layers
from tapeflow.keras.applications import _common, imagenet_utils

BASE_WEIGHT_PATH = _common.WEIGHTS_BASE + "mobilenet_v3/"
WEIGHTS_HASHES = {
    "large_224_0.75_float": ("765b44a33ad4005b3ac83185abf1d0eb", "40af19a13ebea4e2ee0c676887f69a2e"),
    "large_224_1.0_float": ("59e551e166be033d707958cf9e29a6a7", "07fb09a5933dd0c8eaafa16978110389"),
    "large_minimalistic_224_1.0_float": ("675e7b876c45c57e9e63e6d90a36599c", "ec5221f64a2f6d1ef965a614bdae7973"),
    "small_224_0.75_float": ("cb65d4e5be93758266aa0a7f2c6708b7", "ebdb5cc8e0b497cd13a7c275d475c819"),
    "small_224_1.0_float": ("8768d4c2e7dee89b9d02b2d03d65d862", "d3e8ec802a04aa4fc771ee12a9a9b836"),
    "small_minimalistic_224_1.0_float": ("99cd97fb2fcdad2bf028eb838de69e37", "cde8136e733e811080d9fcd8a252f7e4"),
}
# the blocks: (expansion, filters, kernel (None: the model's, 5 or 3 if minimalistic), stride, squeeze-and-excite,
# activation ("relu", or None: the model's, hard-swish or relu if minimalistic))
_SMALL = ((1, 16, 3, 2, True, "relu"), (72.0 / 16, 24, 3, 2, False, "relu"), (88.0 / 24, 24, 3, 1, False, "relu"),
          (4, 40, None, 2, True, None), (6, 40, None, 1, True, None), (6, 40, None, 1, True, None),
          (3, 48, None, 1, True, None), (3, 48, None, 1, True, None), (6, 96, None, 2, True, None),
          (6, 96, None, 1, True, None), (6, 96, None, 1, True, None))
_LARGE = ((1, 16, 3, 1, False, "relu"), (4, 24, 3, 2, False, "relu"), (3, 24, 3, 1, False, "relu"),
          (3, 40, None, 2, True, "relu"), (3, 40, None, 1, True, "relu"), (3, 40, None, 1, True, "relu"),
          (6, 80, 3, 2, False, None), (2.5, 80, 3, 1, False, None), (2.3, 80, 3, 1, False, None),
          (2.3, 80, 3, 1, False, None), (6, 112, 3, 1, True, None), (6, 112, 3, 1, True, None),
          (6, 160, None, 2, True, None), (6, 160, None, 1, True, None), (6, 160, None, 1, True, None))


def relu(x: Any) -> Any:
    return layers.ReLU()(x)


def hard_sigmoid(x: Any) -> Any:
    return layers.ReLU(6.0)(x + 3.0) * (1.0 / 6.0)


def hard_swish(x: Any) -> Any:
    return layers.Activation("hard_swish")(x)


def _depth(v: float, divisor: int = 8, min_value: int | None = None) -> int:
    min_value = divisor if min_value is None else min_value
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v  # never round down by more than 10%


def _bn(x: Any, axis: int, name: str) -> Any:
    return layers.BatchNormalization(axis=axis, epsilon=1e-3, momentum=0.999, name=name)(x)


def _se_block(inputs: Any, filters: int, se_ratio: float, prefix: str) -> Any:
    x = layers.GlobalAveragePooling2D(keepdims=True, name=f"{prefix}squeeze_excite_avg_pool")(inputs)
    x = layers.Conv2D(_depth(filters * se_ratio), kernel_size=1, padding="same",
                      name=f"{prefix}squeeze_excite_conv")(x)
    x = layers.ReLU(name=f"{prefix}squeeze_excite_relu")(x)
    x = layers.Conv2D(filters, kernel_size=1, padding="same", name=f"{prefix}squeeze_excite_conv_1")(x)
    return layers.Multiply(name=f"{prefix}squeeze_excite_mul")([inputs, hard_sigmoid(x)])


def _inverted_res_block(x: Any, expansion: float, filters: int, kernel_size: int, stride: int, se_ratio: Any,
                        activation: Any, block_id: int) -> Any:
    axis = 1 if _backend.image_data_format() == "channels_first" else -1
    shortcut = x
    prefix = "expanded_conv_"
    infilters = x.shape[axis]
    if block_id:
        prefix = f"expanded_conv_{block_id}_"
        x = layers.Conv2D(_depth(infilters * expansion), kernel_size=1, padding="same", use_bias=False,
                          name=f"{prefix}expand")(x)
        x = activation(_bn(x, axis, f"{prefix}expand_bn"))
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size), name=f"{prefix}depthwise_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=stride, padding="same" if stride == 1 else "valid",
                               use_bias=False, name=f"{prefix}depthwise")(x)
    x = activation(_bn(x, axis, f"{prefix}depthwise_bn"))
    if se_ratio:
        x = _se_block(x, _depth(infilters * expansion), se_ratio, prefix)
    x = layers.Conv2D(filters, kernel_size=1, padding="same", use_bias=False, name=f"{prefix}project")(x)
    x = _bn(x, axis, f"{prefix}project_bn")
    if stride == 1 and infilters == filters:
        x = layers.Add(name=f"{prefix}add")([shortcut, x])
    return x


def _check_input(input_shape: Any, input_tensor: Any) -> Any:
    """Keras's own input handling: ``input_shape`` against a Keras ``input_tensor``, else the tensor's
    shape (rows and columns swapped, as Keras writes it), else ``(None, None, 3)``."""
    first = _backend.image_data_format() == "channels_first"
    if input_shape is not None and input_tensor is not None:
        if not _backend.is_keras_tensor(input_tensor):
            raise ValueError("input_tensor specified: ", input_tensor, "is not a keras tensor")
        if first and input_tensor.shape[1] != input_shape[1]:
            raise ValueError("When backend.image_data_format()=channels_first, input_shape[1] must equal "
                             f"input_tensor.shape[1].  Received input_shape={input_shape}, "
                             f"input_tensor.shape={input_tensor.shape}")
        if not first and input_tensor.shape[2] != input_shape[1]:
            raise ValueError(f"input_shape[1] must equal input_tensor.shape[2].  Received input_shape={input_shape}, "
                             f"input_tensor.shape={input_tensor.shape}")
    if input_shape is None and input_tensor is not None and _backend.is_keras_tensor(input_tensor):
        if first:
            input_shape = (3, input_tensor.shape[3], input_tensor.shape[2])
        else:
            input_shape = (input_tensor.shape[2], input_tensor.shape[1], 3)
    if input_shape is None:
        input_shape = (3, None, None) if first else (None, None, 3)
    return input_shape


def _mobilenet_v3(blocks: tuple, last_point_ch: int, input_shape: Any, alpha: float, model_type: str,
                  minimalistic: bool, include_top: bool, weights: Any, input_tensor: Any, classes: int, pooling: Any,
                  dropout_rate: float, classifier_activation: Any, include_preprocessing: bool, name: Any) -> Any:
    from tapeflow.keras.models import Model

    _common.check_weights(weights, include_top, classes, "mobilenet_v3")
    input_shape = _check_input(input_shape, input_tensor)
    first = _backend.image_data_format() == "channels_first"
    rows, cols = (input_shape[1], input_shape[2]) if first else (input_shape[0], input_shape[1])
    if rows and cols and (rows < 32 or cols < 32):
        raise ValueError(f"Input size must be at least 32x32; Received `input_shape={input_shape}`")
    if weights == "imagenet":
        if (not minimalistic and alpha not in [0.75, 1.0]) or (minimalistic and alpha != 1.0):
            raise ValueError("If imagenet weights are being loaded, alpha can be one of `0.75`, `1.0` for non "
                             "minimalistic or `1.0` for minimalistic only.")
        if rows != cols or rows != 224:
            warnings.warn("`input_shape` is undefined or non-square, or `rows` is not 224. Weights for input shape "
                          "(224, 224) will be loaded as the default.", stacklevel=3)
    img_input = _common.image_input(input_tensor, input_shape)
    axis = 1 if first else -1
    kernel, activation, se_ratio = (3, relu, None) if minimalistic else (5, hard_swish, 0.25)
    x = img_input
    if include_preprocessing:
        x = layers.Rescaling(scale=1.0 / 127.5, offset=-1.0)(x)
    x = layers.Conv2D(16, kernel_size=3, strides=(2, 2), padding="same", use_bias=False, name="conv")(x)
    x = activation(_bn(x, axis, "conv_bn"))
    for block_id, (expansion, filters, k, stride, se, act) in enumerate(blocks):
        x = _inverted_res_block(x, expansion, _depth(filters * alpha), kernel if k is None else k, stride,
                                se_ratio if se else None, relu if act == "relu" else activation, block_id)
    last_conv_ch = _depth(x.shape[axis] * 6)
    if alpha > 1.0:  # wider models widen the last layer too
        last_point_ch = _depth(last_point_ch * alpha)
    x = layers.Conv2D(last_conv_ch, kernel_size=1, padding="same", use_bias=False, name="conv_1")(x)
    x = activation(_bn(x, axis, "conv_1_bn"))
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = activation(layers.Conv2D(last_point_ch, kernel_size=1, padding="same", use_bias=True, name="conv_2")(x))
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate)(x)
        x = layers.Flatten()(layers.Conv2D(classes, kernel_size=1, padding="same", name="logits")(x))
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Activation(activation=classifier_activation, name="predictions")(x)
    else:
        x = _common.head(x, False, pooling, classes, classifier_activation, weights,
                         pool_names=("avg_pool", "max_pool"))
    model = Model(_common.model_inputs(input_tensor, img_input), x, name=name)
    if weights == "imagenet":
        model_name = f"{model_type}{'_minimalistic' if minimalistic else ''}_224_{alpha}_float"
        file_name = f"weights_mobilenet_v3_{model_name}{'.h5' if include_top else '_no_top_v2.h5'}"
        return _common.load(model, weights, file_name, BASE_WEIGHT_PATH + file_name,
                            WEIGHTS_HASHES[model_name][0 if include_top else 1])
    return _common.load(model, weights, "", "")


def MobileNetV3Small(input_shape: Any = None, alpha: float = 1.0, minimalistic: bool = False,  # noqa: N802
                     include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
                     classes: int = 1000, pooling: Any = None, dropout_rate: float = 0.2,
                     classifier_activation: Any = "softmax", include_preprocessing: bool = True,
                     name: str = "MobileNetV3Small") -> Any:
    """``keras.applications.MobileNetV3Small``: pixels in [0, 255] (``include_preprocessing=False``: in
    [-1, 1]), inputs of at least 32x32; ImageNet weights for alpha 0.75 or 1.0 (1.0 if ``minimalistic``)."""
    return _mobilenet_v3(_SMALL, 1024, input_shape, alpha, "small", minimalistic, include_top, weights,
                         input_tensor, classes, pooling, dropout_rate, classifier_activation, include_preprocessing,
                         name)


def MobileNetV3Large(input_shape: Any = None, alpha: float = 1.0, minimalistic: bool = False,  # noqa: N802
                     include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
                     classes: int = 1000, pooling: Any = None, dropout_rate: float = 0.2,
                     classifier_activation: Any = "softmax", include_preprocessing: bool = True,
                     name: str = "MobileNetV3Large") -> Any:
    """``keras.applications.MobileNetV3Large``: pixels in [0, 255] (``include_preprocessing=False``: in
    [-1, 1]), inputs of at least 32x32; ImageNet weights for alpha 0.75 or 1.0 (1.0 if ``minimalistic``)."""
    return _mobilenet_v3(_LARGE, 1280, input_shape, alpha, "large", minimalistic, include_top, weights,
                         input_tensor, classes, pooling, dropout_rate, classifier_activation, include_preprocessing,
                         name)


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """A pass-through, as Keras's: MobileNetV3 models take 0-255 pixels and rescale them themselves."""
    return x


decode_predictions = imagenet_utils.decode_predictions
