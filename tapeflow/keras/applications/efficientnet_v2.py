"""EfficientNetV2B0-B3, S, M and L (Tan & Le, 2021): fused and plain MBConv blocks, layer for layer as
Keras 3 builds them (same names and order, so Keras's ImageNet weight files load). The models rescale
their 0-255 inputs themselves (``include_preprocessing``): ``preprocess_input`` passes through."""

from __future__ import annotations

import math
from typing import Any

from tapeflow.keras import backend as _backend
from tapeflow.keras import layers
from tapeflow.keras.applications import _common, imagenet_utils

BASE_WEIGHTS_PATH = _common.WEIGHTS_BASE + "efficientnet_v2/"
WEIGHTS_HASHES = {
    "b0": ("21ecbf6da12460d5c40bb2f29ceb2188", "893217f2bb855e2983157299931e43ff"),
    "b1": ("069f0534ff22adf035c89e2d9547a9dc", "0e80663031ca32d657f9caa404b6ec37"),
    "b2": ("424e49f28180edbde1e94797771950a7", "1dfe2e7a5d45b6632553a8961ea609eb"),
    "b3": ("1f1fc43bd98a6e4fd8fdfd551e02c7a0", "f6abf7b5849ac99a89b50dd3fd532856"),
    "-s": ("e1d88a8495beba45748fedd0cecbe016", "af0682fb74e8c54910f2d4393339c070"),
    "-m": ("a3bf6aa3276309f4fc6a34aa114c95cd", "1b8dc055df72dde80d614482840fe342"),
    "-l": ("27e6d408b53c7ebc868fefa357689935", "b0b66b5c863aef5b46e8608fe1711615"),
}
# the stages: (kernel, repeats, filters in, filters out, expansion, squeeze-excite ratio, stride, fused)
_B = ((3, 1, 32, 16, 1, 0, 1, 1), (3, 2, 16, 32, 4, 0, 2, 1), (3, 2, 32, 48, 4, 0, 2, 1),
      (3, 3, 48, 96, 4, 0.25, 2, 0), (3, 5, 96, 112, 6, 0.25, 1, 0), (3, 8, 112, 192, 6, 0.25, 2, 0))
DEFAULT_BLOCKS_ARGS = {
    "efficientnetv2-s": ((3, 2, 24, 24, 1, 0, 1, 1), (3, 4, 24, 48, 4, 0, 2, 1), (3, 4, 48, 64, 4, 0, 2, 1),
                         (3, 6, 64, 128, 4, 0.25, 2, 0), (3, 9, 128, 160, 6, 0.25, 1, 0),
                         (3, 15, 160, 256, 6, 0.25, 2, 0)),
    "efficientnetv2-m": ((3, 3, 24, 24, 1, 0, 1, 1), (3, 5, 24, 48, 4, 0, 2, 1), (3, 5, 48, 80, 4, 0, 2, 1),
                         (3, 7, 80, 160, 4, 0.25, 2, 0), (3, 14, 160, 176, 6, 0.25, 1, 0),
                         (3, 18, 176, 304, 6, 0.25, 2, 0), (3, 5, 304, 512, 6, 0.25, 1, 0)),
    "efficientnetv2-l": ((3, 4, 32, 32, 1, 0, 1, 1), (3, 7, 32, 64, 4, 0, 2, 1), (3, 7, 64, 96, 4, 0, 2, 1),
                         (3, 10, 96, 192, 4, 0.25, 2, 0), (3, 19, 192, 224, 6, 0.25, 1, 0),
                         (3, 25, 224, 384, 6, 0.25, 2, 0), (3, 7, 384, 640, 6, 0.25, 1, 0)),
    "efficientnetv2-b0": _B, "efficientnetv2-b1": _B, "efficientnetv2-b2": _B, "efficientnetv2-b3": _B,
}
# (width, depth, default size) per model
_CONFIGS = {"b0": (1.0, 1.0, 224), "b1": (1.0, 1.1, 240), "b2": (1.1, 1.2, 260), "b3": (1.2, 1.4, 300),
            "-s": (1.0, 1.0, 384), "-m": (1.0, 1.0, 480), "-l": (1.0, 1.0, 480)}
CONV_KERNEL_INITIALIZER = {"class_name": "VarianceScaling",
                           "config": {"scale": 2.0, "mode": "fan_out", "distribution": "truncated_normal"}}
DENSE_KERNEL_INITIALIZER = {"class_name": "VarianceScaling",
                            "config": {"scale": 1.0 / 3.0, "mode": "fan_out", "distribution": "uniform"}}


def round_filters(filters: float, width_coefficient: float, min_depth: int, depth_divisor: int) -> int:
    """The number of filters scaled by ``width_coefficient``, rounded to a multiple of ``depth_divisor``."""
    filters *= width_coefficient
    return int(max(min_depth or depth_divisor, int(filters + depth_divisor / 2) // depth_divisor * depth_divisor))


def round_repeats(repeats: int, depth_coefficient: float) -> int:
    return int(math.ceil(depth_coefficient * repeats))


def _bn_axis() -> int:
    return 3 if _backend.image_data_format() == "channels_last" else 1


def _conv(filters: int, kernel: int, name: str, strides: int = 1, **kwargs: Any) -> Any:
    return layers.Conv2D(filters, kernel, strides=strides, kernel_initializer=CONV_KERNEL_INITIALIZER,
                         padding="same", name=name, **kwargs)


def _squeeze_excite(x: Any, filters: int, input_filters: int, se_ratio: float, activation: Any, name: str) -> Any:
    se = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
    se = layers.Reshape((filters, 1, 1) if _bn_axis() == 1 else (1, 1, filters), name=f"{name}se_reshape")(se)
    se = _conv(max(1, int(input_filters * se_ratio)), 1, f"{name}se_reduce", activation=activation)(se)
    se = _conv(filters, 1, f"{name}se_expand", activation="sigmoid")(se)
    return layers.multiply([x, se], name=f"{name}se_excite")


def _residual(x: Any, inputs: Any, strides: int, input_filters: int, output_filters: int,
              survival_probability: float, name: str) -> Any:
    if strides == 1 and input_filters == output_filters:
        if survival_probability:  # stochastic depth (Keras's rate is the block's drop-connect rate)
            x = layers.Dropout(survival_probability, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


def MBConvBlock(input_filters: int, output_filters: int, expand_ratio: int = 1, kernel_size: int = 3,  # noqa: N802
                strides: int = 1, se_ratio: float = 0.0, bn_momentum: float = 0.9, activation: Any = "swish",
                survival_probability: float = 0.8, name: str = "block0") -> Any:
    """The MBConv block (expand 1x1, depthwise, squeeze-and-excite, project), as a function of its input."""
    axis = _bn_axis()

    def apply(inputs: Any) -> Any:
        filters = input_filters * expand_ratio
        x = inputs
        if expand_ratio != 1:
            x = _conv(filters, 1, f"{name}expand_conv", use_bias=False)(x)
            x = layers.BatchNormalization(axis=axis, momentum=bn_momentum, name=f"{name}expand_bn")(x)
            x = layers.Activation(activation, name=f"{name}expand_activation")(x)
        x = layers.DepthwiseConv2D(kernel_size=kernel_size, strides=strides, padding="same", use_bias=False,
                                   depthwise_initializer=CONV_KERNEL_INITIALIZER, name=f"{name}dwconv2")(x)
        x = layers.BatchNormalization(axis=axis, momentum=bn_momentum, name=f"{name}bn")(x)
        x = layers.Activation(activation, name=f"{name}activation")(x)
        if 0 < se_ratio <= 1:
            x = _squeeze_excite(x, filters, input_filters, se_ratio, activation, name)
        x = _conv(output_filters, 1, f"{name}project_conv", use_bias=False)(x)
        x = layers.BatchNormalization(axis=axis, momentum=bn_momentum, name=f"{name}project_bn")(x)
        return _residual(x, inputs, strides, input_filters, output_filters, survival_probability, name)

    return apply


def FusedMBConvBlock(input_filters: int, output_filters: int, expand_ratio: int = 1,  # noqa: N802
                     kernel_size: int = 3, strides: int = 1, se_ratio: float = 0.0, bn_momentum: float = 0.9,
                     activation: Any = "swish", survival_probability: float = 0.8, name: str = "block0") -> Any:
    """The fused MBConv block (one full convolution in place of expand + depthwise), as a function of its
    input."""
    axis = _bn_axis()

    def apply(inputs: Any) -> Any:
        filters = input_filters * expand_ratio
        x = inputs
        if expand_ratio != 1:
            x = _conv(filters, kernel_size, f"{name}expand_conv", strides=strides, use_bias=False)(x)
            x = layers.BatchNormalization(axis=axis, momentum=bn_momentum, name=f"{name}expand_bn")(x)
            x = layers.Activation(activation=activation, name=f"{name}expand_activation")(x)
        if 0 < se_ratio <= 1:
            x = _squeeze_excite(x, filters, input_filters, se_ratio, activation, name)
        x = _conv(output_filters, 1 if expand_ratio != 1 else kernel_size, f"{name}project_conv",
                  strides=1 if expand_ratio != 1 else strides, use_bias=False)(x)
        x = layers.BatchNormalization(axis=axis, momentum=bn_momentum, name=f"{name}project_bn")(x)
        if expand_ratio == 1:
            x = layers.Activation(activation=activation, name=f"{name}project_activation")(x)
        return _residual(x, inputs, strides, input_filters, output_filters, survival_probability, name)

    return apply


def _efficientnet_v2(key: str, include_top: bool, weights: Any, input_tensor: Any, input_shape: Any, pooling: Any,
                     classes: int, classifier_activation: Any, include_preprocessing: bool, name: str,
                     dropout_rate: float = 0.2, drop_connect_rate: float = 0.2, depth_divisor: int = 8,
                     min_depth: int = 8, bn_momentum: float = 0.9, activation: Any = "swish") -> Any:
    from tapeflow.keras.models import Model

    width, depth, default_size = _CONFIGS[key]
    blocks_args = DEFAULT_BLOCKS_ARGS["efficientnetv2" + (key if key.startswith("-") else "-" + key)]
    _common.check_weights(weights, include_top, classes, "efficientnet_v2")
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size, min_size=32,
                                                    data_format=_backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    img_input = _common.image_input(input_tensor, input_shape)
    axis = _bn_axis()
    x = img_input
    if include_preprocessing:
        if key.startswith("b") and input_shape[axis - 1] == 3:  # the Bx models normalize as EfficientNet (V1)
            x = layers.Rescaling(scale=1.0 / 255)(x)
            x = layers.Normalization(mean=[0.485, 0.456, 0.406], variance=[0.229**2, 0.224**2, 0.225**2],
                                     axis=axis)(x)
        else:
            x = layers.Rescaling(scale=1.0 / 128.0, offset=-1)(x)

    def filters_of(n: int) -> int:
        return round_filters(n, width, min_depth, depth_divisor)

    x = _conv(filters_of(blocks_args[0][2]), 3, "stem_conv", strides=2, use_bias=False)(x)
    x = layers.BatchNormalization(axis=axis, momentum=bn_momentum, name="stem_bn")(x)
    x = layers.Activation(activation, name="stem_activation")(x)
    b = 0
    total = float(sum(stage[1] for stage in blocks_args))
    for i, (kernel, repeats, f_in, f_out, expand, se_ratio, stride, fused) in enumerate(blocks_args):
        f_in, f_out = filters_of(f_in), filters_of(f_out)
        block = FusedMBConvBlock if fused else MBConvBlock
        for j in range(round_repeats(repeats, depth)):
            x = block(input_filters=f_in if j == 0 else f_out, output_filters=f_out, expand_ratio=expand,
                      kernel_size=kernel, strides=stride if j == 0 else 1, se_ratio=se_ratio,
                      bn_momentum=bn_momentum, activation=activation,
                      survival_probability=drop_connect_rate * b / total, name=f"block{i + 1}{chr(j + 97)}_")(x)
            b += 1
    x = _conv(filters_of(1280), 1, "top_conv", use_bias=False)(x)
    x = layers.BatchNormalization(axis=axis, momentum=bn_momentum, name="top_bn")(x)
    x = layers.Activation(activation=activation, name="top_activation")(x)
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate, name="top_dropout")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, kernel_initializer=DENSE_KERNEL_INITIALIZER,
                         bias_initializer="zeros", name="predictions")(x)
    else:
        x = _common.head(x, False, pooling, classes, classifier_activation, weights,
                         pool_names=("avg_pool", "max_pool"))
    model = Model(_common.model_inputs(input_tensor, img_input), x, name=name)
    file_name = name + (".h5" if include_top else "_notop.h5")
    return _common.load(model, weights, file_name, BASE_WEIGHTS_PATH + file_name,
                        WEIGHTS_HASHES[key][0 if include_top else 1])


def _variant(key: str, title: str) -> Any:
    def build(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
              input_shape: Any = None, pooling: Any = None, classes: int = 1000,
              classifier_activation: Any = "softmax", include_preprocessing: bool = True,
              name: str = f"efficientnetv2{key if key.startswith('-') else '-' + key}") -> Any:
        return _efficientnet_v2(key, include_top, weights, input_tensor, input_shape, pooling, classes,
                                classifier_activation, include_preprocessing, name)

    build.__name__ = build.__qualname__ = f"EfficientNetV2{title}"
    size = _CONFIGS[key][2]
    build.__doc__ = (f"``keras.applications.EfficientNetV2{title}``: {size}x{size} inputs by default, pixels in "
                     "[0, 255] (the model rescales them; ``include_preprocessing=False`` leaves that to you).")
    return build


EfficientNetV2B0 = _variant("b0", "B0")
EfficientNetV2B1 = _variant("b1", "B1")
EfficientNetV2B2 = _variant("b2", "B2")
EfficientNetV2B3 = _variant("b3", "B3")
EfficientNetV2S = _variant("-s", "S")
EfficientNetV2M = _variant("-m", "M")
EfficientNetV2L = _variant("-l", "L")


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """A pass-through, as Keras's: EfficientNetV2 models take 0-255 pixels and rescale them themselves."""
    return x


decode_predictions = imagenet_utils.decode_predictions
