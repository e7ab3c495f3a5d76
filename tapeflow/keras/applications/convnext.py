"""ConvNeXtTiny, Small, Base, Large and XLarge (Liu et al., 2022), layer for layer as Keras 3 builds them:
the stem and downsampling blocks as nested ``Sequential`` models, 7x7 depthwise convolutions, layer
normalization, ``LayerScale`` (same names and weight order, so Keras's ImageNet weight files load). The
models normalize their 0-255 inputs themselves (``include_preprocessing``): ``preprocess_input`` passes
through. Only ``channels_last``, as Keras."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.keras import backend as _backend
from tapeflow.keras import initializers, layers
from tapeflow.keras.applications import _common, imagenet_utils
from tapeflow.keras.layers import Layer

BASE_WEIGHTS_PATH = _common.WEIGHTS_BASE + "convnext/"
WEIGHTS_HASHES = {
    "convnext_tiny": ("8ae6e78ce2933352b1ef4008e6dd2f17bc40771563877d156bc6426c7cf503ff",
                      "d547c096cabd03329d7be5562c5e14798aa39ed24b474157cef5e85ab9e49ef1"),
    "convnext_small": ("ce1277d8f1ee5a0ef0e171469089c18f5233860ceaf9b168049cb9263fd7483c",
                       "6fc8009faa2f00c1c1dfce59feea9b0745eb260a7dd11bee65c8e20843da6eab"),
    "convnext_base": ("52cbb006d3dadd03f6e095a8ca1aca47aecdd75acb4bc74bce1f5c695d0086e6",
                      "40a20c5548a5e9202f69735ecc06c990e6b7c9d2de39f0361e27baeb24cb7c45"),
    "convnext_large": ("070c5ed9ed289581e477741d3b34beffa920db8cf590899d6d2c67fba2a198a6",
                       "96f02b6f0753d4f543261bc9d09bed650f24dd6bc02ddde3066135b63d23a1cd"),
    "convnext_xlarge": ("c1f5ccab661354fc3a79a10fa99af82f0fbf10ec65cb894a3ae0815f17a889ee",
                        "de3f8a54174130e0cecdc71583354753d557fcf1f4487331558e2a16ba0cfe05"),
}
MODEL_CONFIGS = {
    "tiny": {"depths": [3, 3, 9, 3], "projection_dims": [96, 192, 384, 768], "default_size": 224},
    "small": {"depths": [3, 3, 27, 3], "projection_dims": [96, 192, 384, 768], "default_size": 224},
    "base": {"depths": [3, 3, 27, 3], "projection_dims": [128, 256, 512, 1024], "default_size": 224},
    "large": {"depths": [3, 3, 27, 3], "projection_dims": [192, 384, 768, 1536], "default_size": 224},
    "xlarge": {"depths": [3, 3, 27, 3], "projection_dims": [256, 512, 1024, 2048], "default_size": 224},
}


class StochasticDepth(Layer):
    """Drops the whole residual branch per sample with probability ``drop_path_rate`` while training
    (scaling the kept ones by ``1 / (1 - drop_path_rate)``)."""

    def __init__(self, drop_path_rate: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.drop_path_rate = drop_path_rate

    def call(self, x: Any, training: Any = None) -> Any:
        if training:
            from tapeflow.keras import ops, random

            keep_prob = 1 - self.drop_path_rate
            shape = (ops.shape(x)[0],) + (1,) * (len(ops.shape(x)) - 1)
            return (x / keep_prob) * ops.floor(keep_prob + random.uniform(shape, 0, 1))
        return x

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"drop_path_rate": self.drop_path_rate})
        return config


class LayerScale(Layer):
    """Scales its input per channel by a learned ``gamma`` (``projection_dim`` values, ``init_values`` at
    first)."""

    def __init__(self, init_values: float, projection_dim: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.init_values = init_values
        self.projection_dim = projection_dim

    def build(self, _: Any) -> None:
        self.gamma = self.add_weight(shape=(self.projection_dim,),
                                     initializer=initializers.Constant(self.init_values), trainable=True)

    def call(self, x: Any) -> Any:
        return x * self.gamma

    def get_config(self) -> dict:
        config = super().get_config()
        config.update({"init_values": self.init_values, "projection_dim": self.projection_dim})
        return config


def ConvNeXtBlock(projection_dim: int, drop_path_rate: float = 0.0,  # noqa: N802
                  layer_scale_init_value: float | None = 1e-6, name: str = "prestem") -> Any:
    """One ConvNeXt block (depthwise 7x7, layer norm, two pointwise ``Dense``, ``LayerScale``, residual),
    as a function of its input."""

    def apply(inputs: Any) -> Any:
        x = layers.Conv2D(filters=projection_dim, kernel_size=7, padding="same", groups=projection_dim,
                          name=f"{name}_depthwise_conv")(inputs)
        x = layers.LayerNormalization(epsilon=1e-6, name=f"{name}_layernorm")(x)
        x = layers.Dense(4 * projection_dim, name=f"{name}_pointwise_conv_1")(x)
        x = layers.Activation("gelu", name=f"{name}_gelu")(x)
        x = layers.Dense(projection_dim, name=f"{name}_pointwise_conv_2")(x)
        if layer_scale_init_value is not None:
            x = LayerScale(layer_scale_init_value, projection_dim, name=f"{name}_layer_scale")(x)
        if drop_path_rate:
            layer = StochasticDepth(drop_path_rate, name=f"{name}_stochastic_depth")
        else:
            layer = layers.Activation("linear", name=f"{name}_identity")
        return inputs + layer(x)

    return apply


def PreStem(name: str = "prestem") -> Any:  # noqa: N802
    """ImageNet's mean and variance of 0-255 pixels taken out (a ``Normalization`` layer)."""

    def apply(x: Any) -> Any:
        return layers.Normalization(mean=[0.485 * 255, 0.456 * 255, 0.406 * 255],
                                    variance=[(0.229 * 255) ** 2, (0.224 * 255) ** 2, (0.225 * 255) ** 2],
                                    name=f"{name}_prestem_normalization")(x)

    return apply


def Head(num_classes: int = 1000, classifier_activation: Any = None, name: str = "head") -> Any:  # noqa: N802
    """The classifier: global average pooling, layer norm, ``Dense``."""

    def apply(x: Any) -> Any:
        x = layers.GlobalAveragePooling2D(name=f"{name}_head_gap")(x)
        x = layers.LayerNormalization(epsilon=1e-6, name=f"{name}_head_layernorm")(x)
        return layers.Dense(num_classes, activation=classifier_activation, name=f"{name}_head_dense")(x)

    return apply


def ConvNeXt(depths: list, projection_dims: list, drop_path_rate: float = 0.0,  # noqa: N802
             layer_scale_init_value: float = 1e-6, default_size: int = 224, name: str = "convnext",
             include_preprocessing: bool = True, include_top: bool = True, weights: Any = None,
             input_tensor: Any = None, input_shape: Any = None, pooling: Any = None, classes: int = 1000,
             classifier_activation: Any = "softmax", weights_name: str | None = None) -> Any:
    """A ConvNeXt of the given stage ``depths`` and widths (``projection_dims``), as Keras's ``ConvNeXt``."""
    from tapeflow.keras.models import Model, Sequential
    from tapeflow.keras.utils import get_source_inputs

    if _backend.image_data_format() == "channels_first":
        raise ValueError("ConvNeXt does not support the `channels_first` image data format. Switch to "
                         "`channels_last` by editing your local config file at ~/.keras/keras.json")
    _common.check_weights(weights, include_top, classes, "convnext")
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size, min_size=32,
                                                    data_format=_backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    img_input = _common.image_input(input_tensor, input_shape)
    if input_tensor is not None:
        inputs, x = get_source_inputs(input_tensor)[0], input_tensor
    else:
        inputs = x = img_input
    if include_preprocessing and input_shape[2] == 3:
        x = PreStem(name=name)(x)
    downsample_layers = [Sequential([
        layers.Conv2D(projection_dims[0], kernel_size=4, strides=4, name=f"{name}_stem_conv"),
        layers.LayerNormalization(epsilon=1e-6, name=f"{name}_stem_layernorm")], name=f"{name}_stem")]
    for i in range(3):
        downsample_layers.append(Sequential([
            layers.LayerNormalization(epsilon=1e-6, name=f"{name}_downsampling_layernorm_{i}"),
            layers.Conv2D(projection_dims[i + 1], kernel_size=2, strides=2, name=f"{name}_downsampling_conv_{i}")],
            name=f"{name}_downsampling_block_{i}"))
    depth_drop_rates = [float(r) for r in np.linspace(0.0, drop_path_rate, sum(depths))]  # stochastic depth
    cur = 0
    for i in range(4):
        x = downsample_layers[i](x)
        for j in range(depths[i]):
            x = ConvNeXtBlock(projection_dim=projection_dims[i], drop_path_rate=depth_drop_rates[cur + j],
                              layer_scale_init_value=layer_scale_init_value, name=name + f"_stage_{i}_block_{j}")(x)
        cur += depths[i]
    if include_top:
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = Head(num_classes=classes, classifier_activation=classifier_activation, name=name)(x)
    else:
        if pooling == "avg":
            x = layers.GlobalAveragePooling2D()(x)
        elif pooling == "max":
            x = layers.GlobalMaxPooling2D()(x)
        x = layers.LayerNormalization(epsilon=1e-6)(x)
    model = Model(inputs=inputs, outputs=x, name=name)
    if weights == "imagenet":
        expected = MODEL_CONFIGS[weights_name.split("convnext_")[-1]]
        if depths != expected["depths"] or projection_dims != expected["projection_dims"]:
            raise ValueError(f"Architecture configuration does not match {weights_name} variant. When using "
                             "pre-trained weights, the model architecture must match the pre-trained configuration "
                             f"exactly. Expected depths: {expected['depths']}, got: {depths}. Expected "
                             f"projection_dims: {expected['projection_dims']}, got: {projection_dims}.")
        if weights_name not in name:
            raise ValueError(f'Model name "{name}" does not match weights variant "{weights_name}". When using '
                             'imagenet weights, model name must contain the weights variant (e.g., "convnext_'
                             f'{weights_name.split("convnext_")[-1]}").')
        file_name = name + (".h5" if include_top else "_notop.h5")
        return _common.load(model, weights, file_name, BASE_WEIGHTS_PATH + file_name,
                            WEIGHTS_HASHES[weights_name][0 if include_top else 1])
    return _common.load(model, weights, "", "")


def _variant(size: str) -> Any:
    def build(include_top: bool = True, include_preprocessing: bool = True, weights: Any = "imagenet",
              input_tensor: Any = None, input_shape: Any = None, pooling: Any = None, classes: int = 1000,
              classifier_activation: Any = "softmax", name: str = f"convnext_{size}") -> Any:
        config = MODEL_CONFIGS[size]
        return ConvNeXt(weights_name=f"convnext_{size}", depths=config["depths"],
                        projection_dims=config["projection_dims"], drop_path_rate=0.0, layer_scale_init_value=1e-6,
                        default_size=config["default_size"], name=name, include_top=include_top,
                        include_preprocessing=include_preprocessing, weights=weights, input_tensor=input_tensor,
                        input_shape=input_shape, pooling=pooling, classes=classes,
                        classifier_activation=classifier_activation)

    title = "XLarge" if size == "xlarge" else size.capitalize()
    build.__name__ = build.__qualname__ = f"ConvNeXt{title}"
    build.__doc__ = (f"``keras.applications.ConvNeXt{title}``: 224x224 inputs by default, pixels in [0, 255] (the "
                     "model normalizes them; ``include_preprocessing=False`` leaves that to you).")
    return build


ConvNeXtTiny = _variant("tiny")
ConvNeXtSmall = _variant("small")
ConvNeXtBase = _variant("base")
ConvNeXtLarge = _variant("large")
ConvNeXtXLarge = _variant("xlarge")


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """A pass-through, as Keras's: ConvNeXt models take 0-255 pixels and normalize them themselves."""
    return x


decode_predictions = imagenet_utils.decode_predictions
