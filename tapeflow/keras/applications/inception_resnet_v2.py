"""InceptionResNetV2 (Szegedy et al., 2016), layer for layer as Keras 3 builds it (same names and order,
so Keras's ImageNet weight files load); inputs scaled to [-1, 1] by ``preprocess_input``."""

from __future__ import annotations

from typing import Any

from tapeflow.keras import backend as _backend
from tapeflow.keras import layers
from tapeflow.keras.applications import _common, imagenet_utils
from tapeflow.keras.layers import Layer

BASE_WEIGHT_URL = _common.WEIGHTS_BASE + "inception_resnet_v2/"
WEIGHTS_HASHES = ("e693bd0210a403b3192acc6073ad2e96", "d19885ff4a710c122648d3b5c3b684e4")


def _axis() -> int:
    return 1 if _backend.image_data_format() == "channels_first" else 3


def conv2d_bn(x: Any, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "same",
              activation: Any = "relu", use_bias: bool = False, name: str | None = None) -> Any:
    """Conv2D, then (without a bias) BatchNormalization without scale, then ``activation``; ``name`` gives
    ``name``, ``name_bn`` and ``name_ac``."""
    x = layers.Conv2D(filters, kernel_size, strides=strides, padding=padding, use_bias=use_bias, name=name)(x)
    if not use_bias:
        x = layers.BatchNormalization(axis=_axis(), scale=False, name=None if name is None else f"{name}_bn")(x)
    if activation is not None:
        x = layers.Activation(activation, name=None if name is None else f"{name}_ac")(x)
    return x


class CustomScaleLayer(Layer):
    """``inputs[0] + inputs[1] * scale``: the scaled residual of an Inception-ResNet block."""

    def __init__(self, scale: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scale = scale

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"scale": self.scale})
        return config

    def call(self, inputs: Any) -> Any:
        return inputs[0] + inputs[1] * self.scale


def inception_resnet_block(x: Any, scale: float, block_type: str, block_idx: int, activation: Any = "relu") -> Any:
    """An Inception-ResNet block (``block35``, ``block17`` or ``block8``) with its scaled residual."""
    if block_type == "block35":
        branches = [conv2d_bn(x, 32, 1), conv2d_bn(conv2d_bn(x, 32, 1), 32, 3),
                    conv2d_bn(conv2d_bn(conv2d_bn(x, 32, 1), 48, 3), 64, 3)]
    elif block_type == "block17":
        branches = [conv2d_bn(x, 192, 1), conv2d_bn(conv2d_bn(conv2d_bn(x, 128, 1), 160, [1, 7]), 192, [7, 1])]
    elif block_type == "block8":
        branches = [conv2d_bn(x, 192, 1), conv2d_bn(conv2d_bn(conv2d_bn(x, 192, 1), 224, [1, 3]), 256, [3, 1])]
    else:
        raise ValueError('Unknown Inception-ResNet block type. Expects "block35", "block17" or "block8", '
                         f"but got: {block_type}")
    block_name = f"{block_type}_{block_idx}"
    mixed = layers.Concatenate(axis=_axis(), name=f"{block_name}_mixed")(branches)
    up = conv2d_bn(mixed, x.shape[_axis()], 1, activation=None, use_bias=True, name=f"{block_name}_conv")
    x = CustomScaleLayer(scale)([x, up])
    if activation is not None:
        x = layers.Activation(activation, name=f"{block_name}_ac")(x)
    return x


def InceptionResNetV2(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,  # noqa: N802
                      input_shape: Any = None, pooling: Any = None, classes: int = 1000,
                      classifier_activation: Any = "softmax", name: str = "inception_resnet_v2") -> Any:
    """``keras.applications.InceptionResNetV2``: 299x299 inputs by default (at least 75x75), scaled to
    [-1, 1] by ``inception_resnet_v2.preprocess_input``."""
    from tapeflow.keras.models import Model

    img_input = _common.model_input(weights, include_top, classes, input_tensor, input_shape, default_size=299,
                                    min_size=75, family="inception_resnet_v2")
    axis = _axis()
    x = conv2d_bn(img_input, 32, 3, strides=2, padding="valid")
    x = conv2d_bn(x, 32, 3, padding="valid")
    x = conv2d_bn(x, 64, 3)
    x = layers.MaxPooling2D(3, strides=2)(x)
    x = conv2d_bn(x, 80, 1, padding="valid")
    x = conv2d_bn(x, 192, 3, padding="valid")
    x = layers.MaxPooling2D(3, strides=2)(x)
    # mixed 5b (Inception-A)
    branches = [conv2d_bn(x, 96, 1), conv2d_bn(conv2d_bn(x, 48, 1), 64, 5),
                conv2d_bn(conv2d_bn(conv2d_bn(x, 64, 1), 96, 3), 96, 3),
                conv2d_bn(layers.AveragePooling2D(3, strides=1, padding="same")(x), 64, 1)]
    x = layers.Concatenate(axis=axis, name="mixed_5b")(branches)
    for block_idx in range(1, 11):  # 10x block35 (Inception-ResNet-A)
        x = inception_resnet_block(x, scale=0.17, block_type="block35", block_idx=block_idx)
    # mixed 6a (Reduction-A)
    branches = [conv2d_bn(x, 384, 3, strides=2, padding="valid"),
                conv2d_bn(conv2d_bn(conv2d_bn(x, 256, 1), 256, 3), 384, 3, strides=2, padding="valid"),
                layers.MaxPooling2D(3, strides=2, padding="valid")(x)]
    x = layers.Concatenate(axis=axis, name="mixed_6a")(branches)
    for block_idx in range(1, 21):  # 20x block17 (Inception-ResNet-B)
        x = inception_resnet_block(x, scale=0.1, block_type="block17", block_idx=block_idx)
    # mixed 7a (Reduction-B)
    branches = [conv2d_bn(conv2d_bn(x, 256, 1), 384, 3, strides=2, padding="valid"),
                conv2d_bn(conv2d_bn(x, 256, 1), 288, 3, strides=2, padding="valid"),
                conv2d_bn(conv2d_bn(conv2d_bn(x, 256, 1), 288, 3), 320, 3, strides=2, padding="valid"),
                layers.MaxPooling2D(3, strides=2, padding="valid")(x)]
    x = layers.Concatenate(axis=axis, name="mixed_7a")(branches)
    for block_idx in range(1, 10):  # 10x block8 (Inception-ResNet-C), the last without activation
        x = inception_resnet_block(x, scale=0.2, block_type="block8", block_idx=block_idx)
    x = inception_resnet_block(x, scale=1.0, activation=None, block_type="block8", block_idx=10)
    x = conv2d_bn(x, 1536, 1, name="conv_7b")
    x = _common.head(x, include_top, pooling, classes, classifier_activation, weights, top_pool="avg_pool")
    model = Model(_common.model_inputs(input_tensor, img_input), x, name=name)
    fname = f"inception_resnet_v2_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return _common.load(model, weights, fname, BASE_WEIGHT_URL + fname, WEIGHTS_HASHES[0 if include_top else 1])


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """RGB 0-255 images scaled to [-1, 1] (Keras's ``"tf"`` mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
