"""InceptionV3 (Szegedy et al., 2015), layer for layer as Keras 3 builds it (same names and order, so
Keras's ImageNet weight files load); the DeepDream tutorial's model."""

from __future__ import annotations

from typing import Any

from tapeflow.keras import backend as _backend
from tapeflow.keras import layers
from tapeflow.keras.applications import _common, imagenet_utils

BASE_WEIGHTS_PATH = _common.WEIGHTS_BASE + "inception_v3/"
WEIGHTS_HASHES = ("9a0d58056eeedaa3f26cb7ebd46da564", "bcbd6486424b2319ff4ef7d526e38f63")


def _axis() -> int:
    return 1 if _backend.image_data_format() == "channels_first" else 3


def conv2d_bn(x: Any, filters: int, num_row: int, num_col: int, padding: str = "same", strides: Any = (1, 1),
              name: str | None = None) -> Any:
    """Conv2D (no bias) + BatchNormalization (no scale) + ReLU; ``name`` gives ``name_conv`` / ``name_bn``."""
    x = layers.Conv2D(filters, (num_row, num_col), strides=strides, padding=padding, use_bias=False,
                      name=None if name is None else f"{name}_conv")(x)
    x = layers.BatchNormalization(axis=_axis(), scale=False, name=None if name is None else f"{name}_bn")(x)
    return layers.Activation("relu", name=name)(x)


def _avg_branch(x: Any, filters: int) -> Any:
    return conv2d_bn(layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same")(x), filters, 1, 1)


def _block_35(x: Any, pool_filters: int, name: str) -> Any:
    """mixed0-2: 1x1, 5x5, double 3x3 and pooled branches."""
    b1 = conv2d_bn(x, 64, 1, 1)
    b5 = conv2d_bn(conv2d_bn(x, 48, 1, 1), 64, 5, 5)
    b3 = conv2d_bn(conv2d_bn(conv2d_bn(x, 64, 1, 1), 96, 3, 3), 96, 3, 3)
    return layers.concatenate([b1, b5, b3, _avg_branch(x, pool_filters)], axis=_axis(), name=name)


def _block_17(x: Any, mid: int, name: str) -> Any:
    """mixed4-7: factorized 7x7 branches of ``mid`` channels."""
    b1 = conv2d_bn(x, 192, 1, 1)
    b7 = conv2d_bn(conv2d_bn(conv2d_bn(x, mid, 1, 1), mid, 1, 7), 192, 7, 1)
    b7d = conv2d_bn(x, mid, 1, 1)
    for filters, (r, c) in ((mid, (7, 1)), (mid, (1, 7)), (mid, (7, 1)), (192, (1, 7))):
        b7d = conv2d_bn(b7d, filters, r, c)
    return layers.concatenate([b1, b7, b7d, _avg_branch(x, 192)], axis=_axis(), name=name)


def _block_8(x: Any, i: int) -> Any:
    """mixed9-10: expanded 3x3 branches."""
    b1 = conv2d_bn(x, 320, 1, 1)
    b3 = conv2d_bn(x, 384, 1, 1)
    b3 = layers.concatenate([conv2d_bn(b3, 384, 1, 3), conv2d_bn(b3, 384, 3, 1)], axis=_axis(),
                            name=f"mixed9_{i}")
    b3d = conv2d_bn(conv2d_bn(x, 448, 1, 1), 384, 3, 3)
    b3d = layers.concatenate([conv2d_bn(b3d, 384, 1, 3), conv2d_bn(b3d, 384, 3, 1)], axis=_axis())
    return layers.concatenate([b1, b3, b3d, _avg_branch(x, 192)], axis=_axis(), name=f"mixed{9 + i}")


def InceptionV3(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,  # noqa: N802
                input_shape: Any = None, pooling: Any = None, classes: int = 1000,
                classifier_activation: Any = "softmax", name: str = "inception_v3") -> Any:
    """``keras.applications.InceptionV3``: 299x299 inputs by default (at least 75x75), scaled to [-1, 1] by
    ``inception_v3.preprocess_input``."""
    from tapeflow.keras.models import Model

    img_input = _common.model_input(weights, include_top, classes, input_tensor, input_shape, default_size=299,
                                    min_size=75, family="inception_v3")
    x = conv2d_bn(img_input, 32, 3, 3, strides=(2, 2), padding="valid")
    x = conv2d_bn(x, 32, 3, 3, padding="valid")
    x = conv2d_bn(x, 64, 3, 3)
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = conv2d_bn(x, 80, 1, 1, padding="valid")
    x = conv2d_bn(x, 192, 3, 3, padding="valid")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    for i, pool_filters in enumerate((32, 64, 64)):
        x = _block_35(x, pool_filters, f"mixed{i}")
    # mixed3: reduction to 17x17
    b3 = conv2d_bn(x, 384, 3, 3, strides=(2, 2), padding="valid")
    b3d = conv2d_bn(conv2d_bn(conv2d_bn(x, 64, 1, 1), 96, 3, 3), 96, 3, 3, strides=(2, 2), padding="valid")
    x = layers.concatenate([b3, b3d, layers.MaxPooling2D((3, 3), strides=(2, 2))(x)], axis=_axis(), name="mixed3")
    for i, mid in enumerate((128, 160, 160, 192)):
        x = _block_17(x, mid, f"mixed{4 + i}")
    # mixed8: reduction to 8x8
    b3 = conv2d_bn(conv2d_bn(x, 192, 1, 1), 320, 3, 3, strides=(2, 2), padding="valid")
    b7 = conv2d_bn(conv2d_bn(conv2d_bn(x, 192, 1, 1), 192, 1, 7), 192, 7, 1)
    b7 = conv2d_bn(b7, 192, 3, 3, strides=(2, 2), padding="valid")
    x = layers.concatenate([b3, b7, layers.MaxPooling2D((3, 3), strides=(2, 2))(x)], axis=_axis(), name="mixed8")
    for i in range(2):
        x = _block_8(x, i)
    x = _common.head(x, include_top, pooling, classes, classifier_activation, weights, top_pool="avg_pool")
    model = Model(_common.model_inputs(input_tensor, img_input), x, name=name)
    file_name = f"inception_v3_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return _common.load(model, weights, file_name, BASE_WEIGHTS_PATH + file_name,
                        WEIGHTS_HASHES[0 if include_top else 1])


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """RGB 0-255 images scaled to [-1, 1] (Keras's ``"tf"`` mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
