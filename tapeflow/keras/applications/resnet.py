"""ResNet50, ResNet101 and ResNet152 (He et al., 2015; v1 bottleneck blocks), layer for layer as
Keras 3 builds them (same names, so Keras's ImageNet weight files load)."""

from __future__ import annotations

from typing import Any

from tapeflow.keras import backend as _backend
from tapeflow.keras import layers
from tapeflow.keras.applications import _common, imagenet_utils

BASE_WEIGHTS_PATH = _common.WEIGHTS_BASE + "resnet/"
WEIGHTS_HASHES = {
    "resnet50": ("2cb95161c43110f7111970584f804107", "4d473c1dd8becc155b73f8504c6f6626"),
    "resnet101": ("f1aeb4b969a6efcfb50fad2f0c20cfc5", "88cf7a10940856eca736dc7b7e228a21"),
    "resnet152": ("100835be76be38e30d865e96f2aaae62", "ee4c566cf9a93f14d82f913c2dc6dd0c"),
    "resnet50v2": ("3ef43a0b657b3be2300d5770ece849e0", "fac2f116257151a9d068a22e544a4917"),
    "resnet101v2": ("6343647c601c52e1368623803854d971", "c0ed64b8031c3730f411d2eb4eea35b5"),
    "resnet152v2": ("a49b44d1979771252814e80f8ec446f9", "ed17cf2e0169df9d443503ef94b23b33"),
}
_DEPTHS = {"resnet50": (3, 4, 6, 3), "resnet101": (3, 4, 23, 3), "resnet152": (3, 8, 36, 3),
           "resnet50v2": (3, 4, 6, 3), "resnet101v2": (3, 4, 23, 3), "resnet152v2": (3, 8, 36, 3)}


def _bn_axis() -> int:
    return 3 if _backend.image_data_format() == "channels_last" else 1


def _bn(x: Any, name: str) -> Any:
    return layers.BatchNormalization(axis=_bn_axis(), epsilon=1.001e-5, name=name)(x)


def residual_block_v1(x: Any, filters: int, kernel_size: int = 3, stride: int = 1, conv_shortcut: bool = True,
                      name: str | None = None) -> Any:
    """A bottleneck block: 1x1, ``kernel_size``, 1x1 (4x ``filters``) convolutions plus the shortcut."""
    if conv_shortcut:
        shortcut = _bn(layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(x), f"{name}_0_bn")
    else:
        shortcut = x
    x = _bn(layers.Conv2D(filters, 1, strides=stride, name=f"{name}_1_conv")(x), f"{name}_1_bn")
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = _bn(layers.Conv2D(filters, kernel_size, padding="SAME", name=f"{name}_2_conv")(x), f"{name}_2_bn")
    x = layers.Activation("relu", name=f"{name}_2_relu")(x)
    x = _bn(layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x), f"{name}_3_bn")
    x = layers.Add(name=f"{name}_add")([shortcut, x])
    return layers.Activation("relu", name=f"{name}_out")(x)


def stack_residual_blocks_v1(x: Any, filters: int, blocks: int, stride1: int = 2, name: str | None = None) -> Any:
    x = residual_block_v1(x, filters, stride=stride1, name=f"{name}_block1")
    for i in range(2, blocks + 1):
        x = residual_block_v1(x, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def residual_block_v2(x: Any, filters: int, kernel_size: int = 3, stride: int = 1, conv_shortcut: bool = False,
                      name: str | None = None) -> Any:
    """A pre-activation bottleneck block (He et al., 2016): BN-ReLU first, the stride on the 3x3 convolution."""
    preact = layers.Activation("relu", name=f"{name}_preact_relu")(_bn(x, f"{name}_preact_bn"))
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=f"{name}_0_conv")(preact)
    else:
        shortcut = layers.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = _bn(layers.Conv2D(filters, 1, strides=1, use_bias=False, name=f"{name}_1_conv")(preact), f"{name}_1_bn")
    x = layers.Activation("relu", name=f"{name}_1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name=f"{name}_2_pad")(x)
    x = layers.Conv2D(filters, kernel_size, strides=stride, use_bias=False, name=f"{name}_2_conv")(x)
    x = layers.Activation("relu", name=f"{name}_2_relu")(_bn(x, f"{name}_2_bn"))
    x = layers.Conv2D(4 * filters, 1, name=f"{name}_3_conv")(x)
    return layers.Add(name=f"{name}_out")([shortcut, x])


def stack_residual_blocks_v2(x: Any, filters: int, blocks: int, stride1: int = 2, name: str | None = None) -> Any:
    x = residual_block_v2(x, filters, conv_shortcut=True, name=f"{name}_block1")
    for i in range(2, blocks):
        x = residual_block_v2(x, filters, name=f"{name}_block{i}")
    return residual_block_v2(x, filters, stride=stride1, name=f"{name}_block{blocks}")


def _resnet(key: str, include_top: bool, weights: Any, input_tensor: Any, input_shape: Any, pooling: Any,
            classes: int, classifier_activation: Any, name: str) -> Any:
    from tapeflow.keras.models import Model

    img_input = _common.model_input(weights, include_top, classes, input_tensor, input_shape,
                                     family="resnet")
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=True, name="conv1_conv")(x)
    v2 = key.endswith("v2")
    if not v2:
        x = layers.Activation("relu", name="conv1_relu")(_bn(x, "conv1_bn"))
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    for i, (filters, blocks) in enumerate(zip((64, 128, 256, 512), _DEPTHS[key])):
        if v2:  # v2 downsamples at the end of each stack, so the last stack keeps its size
            x = stack_residual_blocks_v2(x, filters, blocks, stride1=1 if i == 3 else 2, name=f"conv{i + 2}")
        else:
            x = stack_residual_blocks_v1(x, filters, blocks, stride1=1 if i == 0 else 2, name=f"conv{i + 2}")
    if v2:
        x = layers.Activation("relu", name="post_relu")(_bn(x, "post_bn"))
    x = _common.head(x, include_top, pooling, classes, classifier_activation, weights,
                     pool_names=("avg_pool", "max_pool"))
    model = Model(_common.model_inputs(input_tensor, img_input), x, name=name)
    file_name = f"{key}_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return _common.load(model, weights, file_name, BASE_WEIGHTS_PATH + file_name,
                        WEIGHTS_HASHES[key][0 if include_top else 1])


def ResNet50(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,  # noqa: N802
             input_shape: Any = None, pooling: Any = None, classes: int = 1000,
             classifier_activation: Any = "softmax", name: str = "resnet50") -> Any:
    """``keras.applications.ResNet50``; inputs preprocessed by ``resnet50.preprocess_input`` (caffe)."""
    return _resnet("resnet50", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def ResNet101(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,  # noqa: N802
              input_shape: Any = None, pooling: Any = None, classes: int = 1000,
              classifier_activation: Any = "softmax", name: str = "resnet101") -> Any:
    """``keras.applications.ResNet101``."""
    return _resnet("resnet101", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def ResNet152(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,  # noqa: N802
              input_shape: Any = None, pooling: Any = None, classes: int = 1000,
              classifier_activation: Any = "softmax", name: str = "resnet152") -> Any:
    """``keras.applications.ResNet152``."""
    return _resnet("resnet152", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def ResNet50V2(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,  # noqa: N802
               input_shape: Any = None, pooling: Any = None, classes: int = 1000,
               classifier_activation: Any = "softmax", name: str = "resnet50v2") -> Any:
    """``keras.applications.ResNet50V2`` (pre-activation blocks); inputs scaled to [-1, 1] by
    ``resnet_v2.preprocess_input``."""
    return _resnet("resnet50v2", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def ResNet101V2(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,  # noqa: N802
                input_shape: Any = None, pooling: Any = None, classes: int = 1000,
                classifier_activation: Any = "softmax", name: str = "resnet101v2") -> Any:
    """``keras.applications.ResNet101V2``."""
    return _resnet("resnet101v2", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def ResNet152V2(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,  # noqa: N802
                input_shape: Any = None, pooling: Any = None, classes: int = 1000,
                classifier_activation: Any = "softmax", name: str = "resnet152v2") -> Any:
    """``keras.applications.ResNet152V2``."""
    return _resnet("resnet152v2", include_top, weights, input_tensor, input_shape, pooling, classes,
                   classifier_activation, name)


def preprocess_input_v2(x: Any, data_format: str | None = None) -> Any:
    """``resnet_v2.preprocess_input``: RGB 0-255 images scaled to [-1, 1] (Keras's ``"tf"`` mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """RGB 0-255 images to BGR with ImageNet's channel means subtracted (Keras's ``"caffe"`` mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


decode_predictions = imagenet_utils.decode_predictions
