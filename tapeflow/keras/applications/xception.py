"""Xception (Chollet, 2017): depthwise separable convolutions with residual connections, layer for layer
as Keras 3 builds it (same names and order, so Keras's ImageNet weight files load)."""

from __future__ import annotations

from typing import Any

from tapeflow.keras import backend as _backend
from tapeflow.keras import layers
from tapeflow.keras.applications import _common, imagenet_utils

BASE_WEIGHTS_PATH = _common.WEIGHTS_BASE + "xception/"
WEIGHTS_HASHES = ("0a58e3b7378bc2990ea3b43d5981f1f6", "b0042744bf5b25fce3cb969f33bebb97")


def _sep_bn(x: Any, filters: int, name: str, axis: int) -> Any:
    x = layers.SeparableConv2D(filters, (3, 3), padding="same", use_bias=False, name=name)(x)
    return layers.BatchNormalization(axis=axis, name=f"{name}_bn")(x)


def _shortcut(x: Any, filters: int, axis: int) -> Any:
    x = layers.Conv2D(filters, (1, 1), strides=(2, 2), padding="same", use_bias=False)(x)
    return layers.BatchNormalization(axis=axis)(x)


def _down_block(x: Any, filters: tuple, block: int, axis: int, first_relu: bool = True) -> Any:
    """Two separable convolutions and a strided max pooling, plus a strided 1x1 convolution shortcut."""
    residual = _shortcut(x, filters[1], axis)
    if first_relu:
        x = layers.Activation("relu", name=f"block{block}_sepconv1_act")(x)
    x = _sep_bn(x, filters[0], f"block{block}_sepconv1", axis)
    x = layers.Activation("relu", name=f"block{block}_sepconv2_act")(x)
    x = _sep_bn(x, filters[1], f"block{block}_sepconv2", axis)
    x = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="same", name=f"block{block}_pool")(x)
    return layers.add([x, residual])


def Xception(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,  # noqa: N802
             input_shape: Any = None, pooling: Any = None, classes: int = 1000,
             classifier_activation: Any = "softmax", name: str = "xception") -> Any:
    """``keras.applications.Xception``: 299x299 inputs by default (at least 71x71), scaled to [-1, 1] by
    ``xception.preprocess_input``."""
    from tapeflow.keras.models import Model

    img_input = _common.model_input(weights, include_top, classes, input_tensor, input_shape, default_size=299,
                                    min_size=71, family="xception")
    axis = 1 if _backend.image_data_format() == "channels_first" else -1
    x = layers.Conv2D(32, (3, 3), strides=(2, 2), use_bias=False, name="block1_conv1")(img_input)
    x = layers.Activation("relu", name="block1_conv1_act")(layers.BatchNormalization(axis=axis,
                                                                                     name="block1_conv1_bn")(x))
    x = layers.Conv2D(64, (3, 3), use_bias=False, name="block1_conv2")(x)
    x = layers.Activation("relu", name="block1_conv2_act")(layers.BatchNormalization(axis=axis,
                                                                                     name="block1_conv2_bn")(x))
    # entry flow (block 2 starts without a ReLU: block1_conv2_act is it)
    for block, filters in ((2, 128), (3, 256), (4, 728)):
        x = _down_block(x, (filters, filters), block, axis, first_relu=block != 2)
    # middle flow: eight residual blocks of three separable convolutions
    for block in range(5, 13):
        residual = x
        for j in (1, 2, 3):
            x = layers.Activation("relu", name=f"block{block}_sepconv{j}_act")(x)
            x = _sep_bn(x, 728, f"block{block}_sepconv{j}", axis)
        x = layers.add([x, residual])
    x = _down_block(x, (728, 1024), 13, axis)
    # exit flow
    x = layers.Activation("relu", name="block14_sepconv1_act")(_sep_bn(x, 1536, "block14_sepconv1", axis))
    x = layers.Activation("relu", name="block14_sepconv2_act")(_sep_bn(x, 2048, "block14_sepconv2", axis))
    x = _common.head(x, include_top, pooling, classes, classifier_activation, weights, top_pool="avg_pool")
    model = Model(_common.model_inputs(input_tensor, img_input), x, name=name)
    file_name = f"xception_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return _common.load(model, weights, file_name, BASE_WEIGHTS_PATH + file_name,
                        WEIGHTS_HASHES[0 if include_top else 1])


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """RGB 0-255 images scaled to [-1, 1] (Keras's ``"tf"`` mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
