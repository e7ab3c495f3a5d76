"""What Keras's application models share: argument checks, the input tensor, the classifier head and
loading weights (ImageNet's through ``get_file``, from Keras's own URLs and file names)."""

from __future__ import annotations

from typing import Any

from tapeflow.keras import backend as _backend
from tapeflow.keras import layers
from tapeflow.keras.applications import imagenet_utils

WEIGHTS_BASE = "https://storage.googleapis.com/tensorflow/keras-applications/"


# Keras's two argument errors, word for word per family (each Keras module words them its own way)
_W = ("The `weights` argument should be either `None` (random initialization), {q}imagenet{q} (pre-training on "
      "ImageNet), or the path to the weights file to be loaded")
_ERRORS = {
    "mobilenet_v2": (_W + ".  Received `weights={weights}`",
                     'If using `weights="imagenet"` with `include_top` as true, `classes` should be 1000. '
                     "Received `classes={classes}`"),
    "resnet": (_W + ".  Received: weights={weights}",
               "If using `weights='imagenet'` with `include_top=True`, `classes` should be 1000.  "
               "Received classes={classes}"),
    "inception_v3": (_W + "; Received: weights={weights}",
                     'If using `weights="imagenet"` with `include_top=True`, `classes` should be 1000. '
                     "Received classes={classes}"),
    "xception": (_W + ".", "If using `weights='imagenet'` with `include_top=True`, `classes` should be 1000.  "
                           "Received classes={classes}"),
    "densenet": (_W + ".", 'If using `weights` as `"imagenet"` with `include_top` as true, `classes` should be 1000'),
    "efficientnet": (_W + ".", 'If using `weights="imagenet"` with `include_top` as true, `classes` should be 1000'),
    "mobilenet_v3": (_W + ".  Received weights={weights}",
                     'If using `weights="imagenet"` with `include_top` as true, `classes` should be 1000.  '
                     "Received classes={classes}"),
    "efficientnet_v2": (_W + ".Received: weights={weights}",
                        'If using `weights="imagenet"` with `include_top` as true, `classes` should be 1000'),
    "inception_resnet_v2": (_W + ".", 'If using `weights="imagenet"` with `include_top=True`, `classes` should be '
                                     "1000. Received classes={classes}"),
    "nasnet": (_W + ".", 'If using `weights` as `"imagenet"` with `include_top` as true, `classes` should be 1000'),
}
_ERRORS["convnext"] = _ERRORS["inception_resnet_v2"]
_QUOTE = {"resnet": "'", "xception": "'"}


def check_weights(weights: Any, include_top: bool, classes: int, family: str = "mobilenet_v2") -> None:
    """Keras's checks of ``weights`` and ``classes``, with the wording of ``family``'s module."""
    import os

    weights_error, classes_error = _ERRORS[family]
    if not (weights in {"imagenet", None} or os.path.exists(str(weights))):
        raise ValueError(weights_error.format(q=_QUOTE.get(family, "`"), weights=weights))
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError(classes_error.format(classes=classes))


def model_input(weights: Any, include_top: bool, classes: int, input_tensor: Any, input_shape: Any,
                default_size: int = 224, min_size: int = 32, family: str = "mobilenet_v2") -> Any:
    """The checks every model starts with, then its image input (``Input`` of the checked shape, or
    ``input_tensor``)."""
    check_weights(weights, include_top, classes, family)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size, min_size=min_size,
                                                    data_format=_backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    return image_input(input_tensor, input_shape)


def image_input(input_tensor: Any, input_shape: tuple) -> Any:
    if input_tensor is None:
        return layers.Input(shape=input_shape)
    if not _backend.is_keras_tensor(input_tensor):
        return layers.Input(tensor=input_tensor, shape=input_shape)
    return input_tensor


def head(x: Any, include_top: bool, pooling: Any, classes: int, classifier_activation: Any, weights: Any,
         pool_names: tuple = (None, None), top_pool: Any = ...) -> Any:
    """The classifier (global average pooling named ``top_pool``, by default as ``pooling="avg"``'s, then
    ``predictions``) or the pooling (``pool_names``: avg's, max's) of a feature extractor."""
    if include_top:
        x = layers.GlobalAveragePooling2D(name=pool_names[0] if top_pool is ... else top_pool)(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        return layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=pool_names[0])(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name=pool_names[1])(x)
    return x


def model_inputs(input_tensor: Any, img_input: Any) -> Any:
    if input_tensor is None:
        return img_input
    from tapeflow.keras.utils import get_source_inputs

    return get_source_inputs(input_tensor)


def load(model: Any, weights: Any, file_name: str, url: str, file_hash: str | None = None) -> Any:
    """Loads ``weights`` into ``model``: ImageNet's file (downloaded once into ``~/.keras/models``) or a path."""
    if weights == "imagenet":
        from tapeflow.keras.file_utils import get_file

        weights = get_file(file_name, url, cache_subdir="models", file_hash=file_hash)
    if weights is not None:
        model.load_weights(weights)
    return model
