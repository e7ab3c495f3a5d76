"""EfficientNetB0-B7 (Tan & Le, 2019): MBConv blocks with squeeze-and-excitation, scaled in width and
depth, layer for layer as Keras 3 builds them (same names and order, so Keras's ImageNet weight files
load). The models rescale and normalize their 0-255 inputs themselves: ``preprocess_input`` passes
through."""

from __future__ import annotations

import math
from typing import Any

from tapeflow.keras import backend as _backend
from tapeflow.keras import layers
from tapeflow.keras.applications import _common, imagenet_utils

BASE_WEIGHTS_PATH = "https://storage.googleapis.com/keras-applications/"
# (width, depth, default size, dropout) and the (top, notop) ImageNet file hashes per model
_CONFIGS = {
    "b0": ((1.0, 1.0, 224, 0.2), ("902e53a9f72be733fc0bcb005b3ebbac", "50bc09e76180e00e4465e1a485ddc09d")),
    "b1": ((1.0, 1.1, 240, 0.2), ("1d254153d4ab51201f1646940f018540", "74c4e6b3e1f6a1eea24c589628592432")),
    "b2": ((1.1, 1.2, 260, 0.3), ("b15cce36ff4dcbd00b6dd88e7857a6ad", "111f8e2ac8aa800a7a99e3239f7bfb39")),
    "b3": ((1.2, 1.4, 300, 0.3), ("ffd1fdc53d0ce67064dc6a9c7960ede0", "af6d107764bb5b1abb91932881670226")),
    "b4": ((1.4, 1.8, 380, 0.4), ("18c95ad55216b8f92d7e70b3a046e2fc", "ebc24e6d6c33eaebbd558eafbeedf1ba")),
    "b5": ((1.6, 2.2, 456, 0.4), ("ace28f2a6363774853a83a0b21b9421a", "38879255a25d3c92d5e44e04ae6cec6f")),
    "b6": ((1.8, 2.6, 528, 0.5), ("165f6e37dce68623721b423839de8be5", "9ecce42647a20130c1f39a5d4cb75743")),
    "b7": ((2.0, 3.1, 600, 0.5), ("8c03f828fec3ef71311cd463b6759d99", "cbcfe4450ddf6f3ad90b1b398090fe4a")),
}
# the seven MBConv stages: (kernel, repeats, filters in, filters out, expansion, stride); SE ratio 0.25
_STAGES = ((3, 1, 32, 16, 1, 1), (3, 2, 16, 24, 6, 2), (5, 2, 24, 40, 6, 2), (3, 3, 40, 80, 6, 2),
           (5, 3, 80, 112, 6, 1), (5, 4, 112, 192, 6, 2), (3, 1, 192, 320, 6, 1))
CONV_KERNEL_INITIALIZER = {"class_name": "VarianceScaling",
                           "config": {"scale": 2.0, "mode": "fan_out", "distribution": "truncated_normal"}}
DENSE_KERNEL_INITIALIZER = {"class_name": "VarianceScaling",
                            "config": {"scale": 1.0 / 3.0, "mode": "fan_out", "distribution": "uniform"}}
IMAGENET_STDDEV_RGB = (0.229, 0.224, 0.225)


def _bn_axis() -> int:
    return 3 if _backend.image_data_format() == "channels_last" else 1


def _conv(filters: int, name: str, **kwargs: Any) -> Any:
    return layers.Conv2D(filters, 1, padding="same", kernel_initializer=CONV_KERNEL_INITIALIZER, name=name, **kwargs)


def block(inputs: Any, activation: Any = "swish", drop_rate: float = 0.0, name: str = "", filters_in: int = 32,
          filters_out: int = 16, kernel_size: int = 3, strides: int = 1, expand_ratio: int = 1,
          se_ratio: float = 0.0, id_skip: bool = True) -> Any:
    """An inverted residual (MBConv) block: expand, depthwise, squeeze-and-excite, project (+ skip)."""
    axis = _bn_axis()
    filters = filters_in * expand_ratio
    x = inputs
    if expand_ratio != 1:
        x = layers.BatchNormalization(axis=axis, name=f"{name}expand_bn")(
            _conv(filters, f"{name}expand_conv", use_bias=False)(x))
        x = layers.Activation(activation, name=f"{name}expand_activation")(x)
    if strides == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size), name=f"{name}dwconv_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=strides, padding="valid" if strides == 2 else "same",
                               use_bias=False, depthwise_initializer=CONV_KERNEL_INITIALIZER, name=f"{name}dwconv")(x)
    x = layers.Activation(activation, name=f"{name}activation")(layers.BatchNormalization(axis=axis,
                                                                                         name=f"{name}bn")(x))
    if 0 < se_ratio <= 1:
        se = layers.GlobalAveragePooling2D(name=f"{name}se_squeeze")(x)
        se = layers.Reshape((filters, 1, 1) if axis == 1 else (1, 1, filters), name=f"{name}se_reshape")(se)
        se = _conv(max(1, int(filters_in * se_ratio)), f"{name}se_reduce", activation=activation)(se)
        se = _conv(filters, f"{name}se_expand", activation="sigmoid")(se)
        x = layers.multiply([x, se], name=f"{name}se_excite")
    x = layers.BatchNormalization(axis=axis, name=f"{name}project_bn")(
        _conv(filters_out, f"{name}project_conv", use_bias=False)(x))
    if id_skip and strides == 1 and filters_in == filters_out:
        if drop_rate > 0:  # stochastic depth: drop the whole residual branch per sample
            x = layers.Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=f"{name}drop")(x)
        x = layers.add([x, inputs], name=f"{name}add")
    return x


def _efficientnet(key: str, include_top: bool, weights: Any, input_tensor: Any, input_shape: Any, pooling: Any,
                  classes: int, classifier_activation: Any, name: str, drop_connect_rate: float = 0.2,
                  depth_divisor: int = 8, activation: Any = "swish") -> Any:
    from tapeflow.keras.models import Model

    (width, depth, default_size, dropout_rate), hashes = _CONFIGS[key]
    img_input = _common.model_input(weights, include_top, classes, input_tensor, input_shape,
                                    default_size=default_size, family="efficientnet")
    axis = _bn_axis()

    def round_filters(filters: int) -> int:
        filters *= width
        new = max(depth_divisor, int(filters + depth_divisor / 2) // depth_divisor * depth_divisor)
        return int(new + depth_divisor if new < 0.9 * filters else new)

    def round_repeats(repeats: int) -> int:
        return int(math.ceil(depth * repeats))

    x = layers.Rescaling(1.0 / 255.0)(img_input)
    x = layers.Normalization(axis=axis)(x)
    if weights == "imagenet":  # Keras's files hold the variance where the std belongs: undo it
        x = layers.Rescaling([1.0 / math.sqrt(s) for s in IMAGENET_STDDEV_RGB])(x)
    x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3), name="stem_conv_pad")(x)
    x = layers.Conv2D(round_filters(32), 3, strides=2, padding="valid", use_bias=False,
                      kernel_initializer=CONV_KERNEL_INITIALIZER, name="stem_conv")(x)
    x = layers.Activation(activation, name="stem_activation")(layers.BatchNormalization(axis=axis,
                                                                                       name="stem_bn")(x))
    total = float(sum(round_repeats(stage[1]) for stage in _STAGES))
    b = 0
    for i, (kernel, repeats, f_in, f_out, expand, stride) in enumerate(_STAGES):
        f_in, f_out = round_filters(f_in), round_filters(f_out)
        for j in range(round_repeats(repeats)):
            x = block(x, activation, drop_connect_rate * b / total, name=f"block{i + 1}{chr(j + 97)}_",
                      filters_in=f_in if j == 0 else f_out, filters_out=f_out, kernel_size=kernel,
                      strides=stride if j == 0 else 1, expand_ratio=expand, se_ratio=0.25)
            b += 1
    x = layers.BatchNormalization(axis=axis, name="top_bn")(_conv(round_filters(1280), "top_conv", use_bias=False)(x))
    x = layers.Activation(activation, name="top_activation")(x)
    if include_top:
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate, name="top_dropout")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, kernel_initializer=DENSE_KERNEL_INITIALIZER,
                         name="predictions")(x)
    else:
        x = _common.head(x, False, pooling, classes, classifier_activation, weights,
                         pool_names=("avg_pool", "max_pool"))
    model = Model(_common.model_inputs(input_tensor, img_input), x, name=name)
    file_name = name + (".h5" if include_top else "_notop.h5")
    return _common.load(model, weights, file_name, BASE_WEIGHTS_PATH + file_name, hashes[0 if include_top else 1])


def _variant(key: str) -> Any:
    def build(include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None,
              input_shape: Any = None, pooling: Any = None, classes: int = 1000,
              classifier_activation: Any = "softmax", name: str = f"efficientnet{key}") -> Any:
        return _efficientnet(key, include_top, weights, input_tensor, input_shape, pooling, classes,
                             classifier_activation, name)

    build.__name__ = build.__qualname__ = f"EfficientNet{key.upper()}"
    build.__doc__ = (f"``keras.applications.EfficientNet{key.upper()}``: {_CONFIGS[key][0][2]}x"
                     f"{_CONFIGS[key][0][2]} inputs by default, pixels in [0, 255] (the model rescales them).")
    return build


EfficientNetB0 = _variant("b0")
EfficientNetB1 = _variant("b1")
EfficientNetB2 = _variant("b2")
EfficientNetB3 = _variant("b3")
EfficientNetB4 = _variant("b4")
EfficientNetB5 = _variant("b5")
EfficientNetB6 = _variant("b6")
EfficientNetB7 = _variant("b7")


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """A pass-through, as Keras's: EfficientNet models take 0-255 pixels and rescale them themselves."""
    return x


decode_predictions = imagenet_utils.decode_predictions
