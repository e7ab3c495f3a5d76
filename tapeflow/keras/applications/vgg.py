"""VGG16 and VGG19 (Simonyan & Zisserman, 2014), layer for layer as Keras 3 builds them (same names,
so Keras's ImageNet weight files load)."""

from __future__ import annotations

from typing import Any

from tapeflow.keras import layers
from tapeflow.keras.applications import _common, imagenet_utils

_HASHES = {"vgg16": ("64373286793e3c8b2b4e3219cbf3544b", "6d6bbae143d832006294945121d1f1fc"),
           "vgg19": ("cbe5617147190e668d6c5d5026f83318", "253f8cb515780f3b799900260a226db6")}


def _vgg(depth: int, include_top: bool, weights: Any, input_tensor: Any, input_shape: Any, pooling: Any,
         classes: int, classifier_activation: Any, name: str) -> Any:
    from tapeflow.keras.models import Model

    img_input = _common.model_input(weights, include_top, classes, input_tensor, input_shape,
                                     family="resnet")
    x = img_input
    convs = (2, 2, 3, 3, 3) if depth == 16 else (2, 2, 4, 4, 4)
    for block, (n, filters) in enumerate(zip(convs, (64, 128, 256, 512, 512)), start=1):
        for i in range(1, n + 1):
            x = layers.Conv2D(filters, (3, 3), activation="relu", padding="same", name=f"block{block}_conv{i}")(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
    if include_top:
        x = layers.Flatten(name="flatten")(x)
        x = layers.Dense(4096, activation="relu", name="fc1")(x)
        x = layers.Dense(4096, activation="relu", name="fc2")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = _common.head(x, False, pooling, classes, classifier_activation, weights)
    model = Model(_common.model_inputs(input_tensor, img_input), x, name=name)
    key = f"vgg{depth}"
    file_name = f"{key}_weights_tf_dim_ordering_tf_kernels{'' if include_top else '_notop'}.h5"
    return _common.load(model, weights, file_name, f"{_common.WEIGHTS_BASE}{key}/{file_name}",
                        _HASHES[key][0 if include_top else 1])


def VGG16(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,  # noqa: N802
          input_shape: Any = None, pooling: Any = None, classes: int = 1000, classifier_activation: Any = "softmax",
          name: str = "vgg16") -> Any:
    """``keras.applications.VGG16``: 13 3x3 convolutions in 5 blocks, then (``include_top``) two
    4096-unit layers and the classifier; inputs preprocessed by ``vgg16.preprocess_input`` (caffe)."""
    return _vgg(16, include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name)


def VGG19(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,  # noqa: N802
          input_shape: Any = None, pooling: Any = None, classes: int = 1000, classifier_activation: Any = "softmax",
          name: str = "vgg19") -> Any:
    """``keras.applications.VGG19``: 16 3x3 convolutions in 5 blocks, then the VGG16 top."""
    return _vgg(19, include_top, weights, input_tensor, input_shape, pooling, classes, classifier_activation, name)


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """RGB 0-255 images to BGR with ImageNet's channel means subtracted (Keras's ``"caffe"`` mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


decode_predictions = imagenet_utils.decode_predictions
