"""DenseNet121, DenseNet169 and DenseNet201 (Huang et al., 2017), layer for layer as Keras 3 builds them
(same names and order, so Keras's ImageNet weight files load)."""

from __future__ import annotations

from typing import Any

from tapeflow.keras import backend as _backend
from tapeflow.keras import layers
from tapeflow.keras.applications import _common, imagenet_utils

BASE_WEIGHTS_PATH = _common.WEIGHTS_BASE + "densenet/"
# blocks per dense block, and the (top, notop) ImageNet file hashes
_CONFIGS = {
    "densenet121": ((6, 12, 24, 16), ("9d60b8095a5708f2dcce2bca79d332c7", "30ee3e1110167f948a6b9946edeeb738")),
    "densenet169": ((6, 12, 32, 32), ("d699b8f76981ab1b30698df4c175e90b", "b8c4d4c20dd625c148057b9ff1c1176b")),
    "densenet201": ((6, 12, 48, 32), ("1ceb130c1ea1b78c3bf6114dbdfd8807", "c13680b51ded0fb44dff2d8f86ac8bb1")),
}
_AXIS = 3  # DenseNet is channels_last only, as Keras's


def _bn_relu(x: Any, name: str, relu_name: str) -> Any:
    x = layers.BatchNormalization(axis=_AXIS, epsilon=1.001e-5, name=name)(x)
    return layers.Activation("relu", name=relu_name)(x)


def conv_block(x: Any, growth_rate: int, name: str) -> Any:
    """BN-ReLU-1x1 (4x growth) then BN-ReLU-3x3 (growth), concatenated to the input."""
    x1 = _bn_relu(x, f"{name}_0_bn", f"{name}_0_relu")
    x1 = layers.Conv2D(4 * growth_rate, 1, use_bias=False, name=f"{name}_1_conv")(x1)
    x1 = _bn_relu(x1, f"{name}_1_bn", f"{name}_1_relu")
    x1 = layers.Conv2D(growth_rate, 3, padding="same", use_bias=False, name=f"{name}_2_conv")(x1)
    return layers.Concatenate(axis=_AXIS, name=f"{name}_concat")([x, x1])


def dense_block(x: Any, blocks: int, name: str) -> Any:
    for i in range(blocks):
        x = conv_block(x, 32, name=f"{name}_block{i + 1}")
    return x


def transition_block(x: Any, reduction: float, name: str) -> Any:
    x = _bn_relu(x, f"{name}_bn", f"{name}_relu")
    x = layers.Conv2D(int(x.shape[_AXIS] * reduction), 1, use_bias=False, name=f"{name}_conv")(x)
    return layers.AveragePooling2D(2, strides=2, name=f"{name}_pool")(x)


def _densenet(key: str, include_top: bool, weights: Any, input_tensor: Any, input_shape: Any, pooling: Any,
              classes: int, classifier_activation: Any, name: str) -> Any:
    from tapeflow.keras.models import Model

    if _backend.image_data_format() == "channels_first":
        raise ValueError("DenseNet does not support the `channels_first` image data format. Switch to "
                         "`channels_last` by editing your local config file at ~/.keras/keras.json")
    blocks, hashes = _CONFIGS[key]
    img_input = _common.model_input(weights, include_top, classes, input_tensor, input_shape, family="densenet")
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)))(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=False, name="conv1_conv")(x)
    x = _bn_relu(x, "conv1_bn", "conv1_relu")
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)))(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1")(x)
    for i, n in enumerate(blocks):
        x = dense_block(x, n, name=f"conv{i + 2}")
        if i < 3:
            x = transition_block(x, 0.5, name=f"pool{i + 2}")
    x = _bn_relu(x, "bn", "relu")
    x = _common.head(x, include_top, pooling, classes, classifier_activation, weights,
                     pool_names=("avg_pool", "max_pool"))
    model = Model(_common.model_inputs(input_tensor, img_input), x, name=name)
    file_name = f"{key}_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return _common.load(model, weights, file_name, BASE_WEIGHTS_PATH + file_name, hashes[0 if include_top else 1])


def DenseNet121(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,  # noqa: N802
                input_shape: Any = None, pooling: Any = None, classes: int = 1000,
                classifier_activation: Any = "softmax", name: str = "densenet121") -> Any:
    """``keras.applications.DenseNet121``; inputs preprocessed by ``densenet.preprocess_input`` (torch)."""
    return _densenet("densenet121", include_top, weights, input_tensor, input_shape, pooling, classes,
                     classifier_activation, name)


def DenseNet169(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,  # noqa: N802
                input_shape: Any = None, pooling: Any = None, classes: int = 1000,
                classifier_activation: Any = "softmax", name: str = "densenet169") -> Any:
    """``keras.applications.DenseNet169``."""
    return _densenet("densenet169", include_top, weights, input_tensor, input_shape, pooling, classes,
                     classifier_activation, name)


def DenseNet201(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,  # noqa: N802
                input_shape: Any = None, pooling: Any = None, classes: int = 1000,
                classifier_activation: Any = "softmax", name: str = "densenet201") -> Any:
    """``keras.applications.DenseNet201``."""
    return _densenet("densenet201", include_top, weights, input_tensor, input_shape, pooling, classes,
                     classifier_activation, name)


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """RGB 0-255 images scaled to [0, 1], then normalized by ImageNet's mean and std (Keras's ``"torch"``)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="torch")


decode_predictions = imagenet_utils.decode_predictions
