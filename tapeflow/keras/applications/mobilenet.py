"""MobileNet (Howard et al., 2017): depthwise separable convolutions, layer for layer as Keras 3 builds
them (same names, so Keras's ImageNet weight files load)."""

from __future__ import annotations

import warnings
from typing import Any

from tapeflow.keras import backend as _backend
from tapeflow.keras import layers
from tapeflow.keras.applications import _common, imagenet_utils

BASE_WEIGHT_PATH = _common.WEIGHTS_BASE + "mobilenet/"
# (pointwise filters, stride) of the 13 depthwise separable blocks
_BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1), (512, 1), (512, 1),
           (512, 1), (1024, 2), (1024, 1))


def _depthwise_conv_block(x: Any, filters: int, alpha: float, depth_multiplier: int, stride: int, block_id: int,
                          axis: int) -> Any:
    if stride != 1:
        x = layers.ZeroPadding2D(((0, 1), (0, 1)), name=f"conv_pad_{block_id}")(x)
    x = layers.DepthwiseConv2D((3, 3), padding="same" if stride == 1 else "valid", depth_multiplier=depth_multiplier,
                               strides=(stride, stride), use_bias=False, name=f"conv_dw_{block_id}")(x)
    x = layers.BatchNormalization(axis=axis, name=f"conv_dw_{block_id}_bn")(x)
    x = layers.ReLU(6.0, name=f"conv_dw_{block_id}_relu")(x)
    x = layers.Conv2D(int(filters * alpha), (1, 1), padding="same", use_bias=False, strides=(1, 1),
                      name=f"conv_pw_{block_id}")(x)
    x = layers.BatchNormalization(axis=axis, name=f"conv_pw_{block_id}_bn")(x)
    return layers.ReLU(6.0, name=f"conv_pw_{block_id}_relu")(x)


def MobileNet(input_shape: Any = None, alpha: float = 1.0, depth_multiplier: int = 1,  # noqa: N802
              dropout: float = 1e-3, include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
              pooling: Any = None, classes: int = 1000, classifier_activation: Any = "softmax",
              name: str | None = None) -> Any:
    """``keras.applications.MobileNet``: width multiplier ``alpha``, inputs of at least 32x32 scaled to
    [-1, 1] by ``mobilenet.preprocess_input``; ImageNet weights for alpha in {0.25, 0.5, 0.75, 1.0} and
    square inputs of 128, 160, 192 or 224 pixels."""
    from tapeflow.keras.models import Model

    _common.check_weights(weights, include_top, classes)
    first = _backend.image_data_format() == "channels_first"
    size = 224
    if input_shape is not None:
        rows, cols = (input_shape[1], input_shape[2]) if first else (input_shape[0], input_shape[1])
        size = rows if rows == cols and rows in (128, 160, 192, 224) else 224
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=size, min_size=32,
                                                    data_format=_backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    rows, cols = (input_shape[1], input_shape[2]) if first else (input_shape[0], input_shape[1])
    if weights == "imagenet":
        if depth_multiplier != 1:
            raise ValueError("If imagenet weights are being loaded, depth multiplier must be 1.  Received "
                             f"depth_multiplier={depth_multiplier}")
        if alpha not in (0.25, 0.50, 0.75, 1.0):
            raise ValueError("If imagenet weights are being loaded, alpha can be one of`0.25`, `0.50`, `0.75` or "
                             f"`1.0` only.  Received alpha={alpha}")
        if rows != cols or rows not in (128, 160, 192, 224):
            rows = 224
            warnings.warn("`input_shape` is undefined or non-square, or `rows` is not in [128, 160, 192, 224]. "
                          "Weights for input shape (224, 224) will be loaded as the default.", stacklevel=2)
    img_input = _common.image_input(input_tensor, input_shape)
    axis = 1 if first else -1
    x = layers.Conv2D(int(32 * alpha), (3, 3), padding="same", use_bias=False, strides=(2, 2), name="conv1")(img_input)
    x = layers.ReLU(6.0, name="conv1_relu")(layers.BatchNormalization(axis=axis, name="conv1_bn")(x))
    for block_id, (filters, stride) in enumerate(_BLOCKS, start=1):
        x = _depthwise_conv_block(x, filters, alpha, depth_multiplier, stride, block_id, axis)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Dropout(dropout, name="dropout")(x)
        x = layers.Conv2D(classes, (1, 1), padding="same", name="conv_preds")(x)
        x = layers.Reshape((classes,), name="reshape_2")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Activation(activation=classifier_activation, name="predictions")(x)
    elif pooling == "avg":
        x = layers.GlobalAveragePooling2D()(x)
    elif pooling == "max":
        x = layers.GlobalMaxPooling2D()(x)
    model = Model(_common.model_inputs(input_tensor, img_input), x,
                  name=name if name is not None else f"mobilenet_{alpha:0.2f}_{rows}")
    alpha_text = {1.0: "1_0", 0.75: "7_5", 0.5: "5_0"}.get(alpha, "2_5")
    file_name = f"mobilenet_{alpha_text}_{rows}_tf{'' if include_top else '_no_top'}.h5"
    return _common.load(model, weights, file_name, BASE_WEIGHT_PATH + file_name)


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """Scales pixels from [0, 255] to [-1, 1] (Keras's "tf" mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds: Any, top: int = 5) -> list:
    return imagenet_utils.decode_predictions(preds, top=top)
