"""NASNetMobile and NASNetLarge (Zoph et al., 2018): the NASNet-A normal and reduction cells, layer for
layer as Keras 3 builds them (same names and order, so Keras's ImageNet weight files load); inputs
scaled to [-1, 1] by ``preprocess_input``. Only ``channels_last``, as Keras."""

from __future__ import annotations

from typing import Any

from tapeflow.keras import backend as _backend
from tapeflow.keras import layers
from tapeflow.keras.applications import _common, imagenet_utils

BASE_WEIGHTS_PATH = _common.WEIGHTS_BASE + "nasnet/"
NASNET_MOBILE_WEIGHT_PATH = f"{BASE_WEIGHTS_PATH}NASNet-mobile.h5"
NASNET_MOBILE_WEIGHT_PATH_NO_TOP = f"{BASE_WEIGHTS_PATH}NASNet-mobile-no-top.h5"
NASNET_LARGE_WEIGHT_PATH = f"{BASE_WEIGHTS_PATH}NASNet-large.h5"
NASNET_LARGE_WEIGHT_PATH_NO_TOP = f"{BASE_WEIGHTS_PATH}NASNet-large-no-top.h5"
# default size -> (top, notop) (file name, URL, hash)
_FILES = {
    224: (("nasnet_mobile.h5", NASNET_MOBILE_WEIGHT_PATH, "020fb642bf7360b370c678b08e0adf61"),
          ("nasnet_mobile_no_top.h5", NASNET_MOBILE_WEIGHT_PATH_NO_TOP, "1ed92395b5b598bdda52abe5c0dbfd63")),
    331: (("nasnet_large.h5", NASNET_LARGE_WEIGHT_PATH, "11577c9a518f0070763c2b964a382f17"),
          ("nasnet_large_no_top.h5", NASNET_LARGE_WEIGHT_PATH_NO_TOP, "d81d89dc07e6e56530c4e77faddd61b5")),
}


def _axis() -> int:
    return 1 if _backend.image_data_format() == "channels_first" else -1


def _bn(x: Any, name: str) -> Any:
    return layers.BatchNormalization(axis=_axis(), momentum=0.9997, epsilon=1e-3, name=name)(x)


def _conv1x1(x: Any, filters: int, name: str, strides: Any = (1, 1)) -> Any:
    return layers.Conv2D(filters, (1, 1), strides=strides, padding="same", use_bias=False, name=name,
                         kernel_initializer="he_normal")(x)


def _separable_conv_block(ip: Any, filters: int, kernel_size: Any = (3, 3), strides: Any = (1, 1),
                          block_id: str | None = None) -> Any:
    """ReLU, separable convolution, batch norm, twice (the first strided, padded as Keras pads)."""
    with _backend.name_scope(f"separable_conv_block_{block_id}"):
        x = layers.Activation("relu")(ip)
        if strides == (2, 2):
            x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size),
                                     name=f"separable_conv_1_pad_{block_id}")(x)
        x = layers.SeparableConv2D(filters, kernel_size, strides=strides, name=f"separable_conv_1_{block_id}",
                                   padding="valid" if strides == (2, 2) else "same", use_bias=False)(x)
        x = layers.Activation("relu")(_bn(x, f"separable_conv_1_bn_{block_id}"))
        x = layers.SeparableConv2D(filters, kernel_size, name=f"separable_conv_2_{block_id}", padding="same",
                                   use_bias=False)(x)
        return _bn(x, f"separable_conv_2_bn_{block_id}")


def _adjust_block(p: Any, ip: Any, filters: int, block_id: str | None = None) -> Any:
    """The previous cell's output ``p`` brought to ``ip``'s size (factorized reduction) or width (1x1)."""
    axis = _axis()
    img_dim = 2 if _backend.image_data_format() == "channels_first" else -2
    with _backend.name_scope("adjust_block"):
        if p is None:
            return ip
        if p.shape[img_dim] != ip.shape[img_dim]:
            with _backend.name_scope(f"adjust_reduction_block_{block_id}"):
                p = layers.Activation("relu", name=f"adjust_relu_1_{block_id}")(p)
                p1 = layers.AveragePooling2D((1, 1), strides=(2, 2), padding="valid",
                                             name=f"adjust_avg_pool_1_{block_id}")(p)
                p1 = _conv1x1(p1, filters // 2, f"adjust_conv_1_{block_id}")
                p2 = layers.Cropping2D(cropping=((1, 0), (1, 0)))(layers.ZeroPadding2D(padding=((0, 1), (0, 1)))(p))
                p2 = layers.AveragePooling2D((1, 1), strides=(2, 2), padding="valid",
                                             name=f"adjust_avg_pool_2_{block_id}")(p2)
                p2 = _conv1x1(p2, filters // 2, f"adjust_conv_2_{block_id}")
                p = _bn(layers.concatenate([p1, p2], axis=axis), f"adjust_bn_{block_id}")
        elif p.shape[axis] != filters:
            with _backend.name_scope(f"adjust_projection_block_{block_id}"):
                p = _conv1x1(layers.Activation("relu")(p), filters, f"adjust_conv_projection_{block_id}")
                p = _bn(p, f"adjust_bn_{block_id}")
    return p


def _avg3(x: Any, name: str, strides: Any = (1, 1), padding: str = "same") -> Any:
    return layers.AveragePooling2D((3, 3), strides=strides, padding=padding, name=name)(x)


def _normal_a_cell(ip: Any, p: Any, filters: int, block_id: str | None = None) -> tuple:
    """The NASNet-A normal cell: (its output, ``ip`` as the next cell's previous input)."""
    with _backend.name_scope(f"normal_A_block_{block_id}"):
        p = _adjust_block(p, ip, filters, block_id)
        h = _bn(_conv1x1(layers.Activation("relu")(ip), filters, f"normal_conv_1_{block_id}"),
                f"normal_bn_1_{block_id}")
        with _backend.name_scope("block_1"):
            x1_1 = _separable_conv_block(h, filters, kernel_size=(5, 5), block_id=f"normal_left1_{block_id}")
            x1_2 = _separable_conv_block(p, filters, block_id=f"normal_right1_{block_id}")
            x1 = layers.add([x1_1, x1_2], name=f"normal_add_1_{block_id}")
        with _backend.name_scope("block_2"):
            x2_1 = _separable_conv_block(p, filters, (5, 5), block_id=f"normal_left2_{block_id}")
            x2_2 = _separable_conv_block(p, filters, (3, 3), block_id=f"normal_right2_{block_id}")
            x2 = layers.add([x2_1, x2_2], name=f"normal_add_2_{block_id}")
        with _backend.name_scope("block_3"):
            x3 = layers.add([_avg3(h, f"normal_left3_{block_id}"), p], name=f"normal_add_3_{block_id}")
        with _backend.name_scope("block_4"):
            x4 = layers.add([_avg3(p, f"normal_left4_{block_id}"), _avg3(p, f"normal_right4_{block_id}")],
                            name=f"normal_add_4_{block_id}")
        with _backend.name_scope("block_5"):
            x5 = _separable_conv_block(h, filters, block_id=f"normal_left5_{block_id}")
            x5 = layers.add([x5, h], name=f"normal_add_5_{block_id}")
        x = layers.concatenate([p, x1, x2, x3, x4, x5], axis=_axis(), name=f"normal_concat_{block_id}")
    return x, ip


def _reduction_a_cell(ip: Any, p: Any, filters: int, block_id: str | None = None) -> tuple:
    """The NASNet-A reduction cell (halves the spatial size): (its output, ``ip``)."""
    with _backend.name_scope(f"reduction_A_block_{block_id}"):
        p = _adjust_block(p, ip, filters, block_id)
        h = _bn(_conv1x1(layers.Activation("relu")(ip), filters, f"reduction_conv_1_{block_id}"),
                f"reduction_bn_1_{block_id}")
        h3 = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(h, 3), name=f"reduction_pad_1_{block_id}")(h)
        with _backend.name_scope("block_1"):
            x1_1 = _separable_conv_block(h, filters, (5, 5), strides=(2, 2), block_id=f"reduction_left1_{block_id}")
            x1_2 = _separable_conv_block(p, filters, (7, 7), strides=(2, 2), block_id=f"reduction_right1_{block_id}")
            x1 = layers.add([x1_1, x1_2], name=f"reduction_add_1_{block_id}")
        with _backend.name_scope("block_2"):
            x2_1 = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="valid", name=f"reduction_left2_{block_id}")(h3)
            x2_2 = _separable_conv_block(p, filters, (7, 7), strides=(2, 2), block_id=f"reduction_right2_{block_id}")
            x2 = layers.add([x2_1, x2_2], name=f"reduction_add_2_{block_id}")
        with _backend.name_scope("block_3"):
            x3_1 = _avg3(h3, f"reduction_left3_{block_id}", strides=(2, 2), padding="valid")
            x3_2 = _separable_conv_block(p, filters, (5, 5), strides=(2, 2), block_id=f"reduction_right3_{block_id}")
            x3 = layers.add([x3_1, x3_2], name=f"reduction_add3_{block_id}")
        with _backend.name_scope("block_4"):
            x4 = layers.add([x2, _avg3(x1, f"reduction_left4_{block_id}")])
        with _backend.name_scope("block_5"):
            x5_1 = _separable_conv_block(x1, filters, (3, 3), block_id=f"reduction_left4_{block_id}")
            x5_2 = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="valid",
                                       name=f"reduction_right5_{block_id}")(h3)
            x5 = layers.add([x5_1, x5_2], name=f"reduction_add4_{block_id}")
        x = layers.concatenate([x2, x3, x4, x5], axis=_axis(), name=f"reduction_concat_{block_id}")
        return x, ip


def NASNet(input_shape: Any = None, penultimate_filters: int = 4032, num_blocks: int = 6,  # noqa: N802
           stem_block_filters: int = 96, skip_reduction: bool = True, filter_multiplier: int = 2,
           include_top: bool = True, weights: Any = "imagenet", input_tensor: Any = None, pooling: Any = None,
           classes: int = 1000, default_size: int | None = None, classifier_activation: Any = "softmax",
           name: str = "NASNet") -> Any:
    """A NASNet-A model of the given widths and depth, as Keras's ``NASNet``."""
    from tapeflow.keras.models import Model

    if _backend.image_data_format() == "channels_first":
        raise ValueError("NASNet does not support the `channels_first` image data format. Switch to "
                         "`channels_last` by editing your local config file at ~/.keras/keras.json")
    _common.check_weights(weights, include_top, classes, "nasnet")
    if isinstance(input_shape, tuple) and None in input_shape and weights == "imagenet":
        raise ValueError("When specifying the input shape of a NASNet and loading `ImageNet` weights, the "
                         f"input_shape argument must be static (no None entries). Got: `input_shape={input_shape}`.")
    default_size = 331 if default_size is None else default_size
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size, min_size=32,
                                                    data_format=_backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    img_input = _common.image_input(input_tensor, input_shape)
    if penultimate_filters % (24 * (filter_multiplier**2)) != 0:
        raise ValueError("For NASNet-A models, the `penultimate_filters` must be a multiple of 24 * "
                         f"(`filter_multiplier` ** 2). Current value: {penultimate_filters}")
    filters = penultimate_filters // 24
    x = layers.Conv2D(stem_block_filters, (3, 3), strides=(2, 2), padding="valid", use_bias=False,
                      name="stem_conv1", kernel_initializer="he_normal")(img_input)
    x = _bn(x, "stem_bn1")
    x, p = _reduction_a_cell(x, None, filters // (filter_multiplier**2), block_id="stem_1")
    x, p = _reduction_a_cell(x, p, filters // filter_multiplier, block_id="stem_2")
    for i in range(num_blocks):
        x, p = _normal_a_cell(x, p, filters, block_id=f"{i}")
    x, p0 = _reduction_a_cell(x, p, filters * filter_multiplier, block_id=f"reduce_{num_blocks}")
    p = p0 if not skip_reduction else p
    for i in range(num_blocks):
        x, p = _normal_a_cell(x, p, filters * filter_multiplier, block_id=f"{num_blocks + i + 1}")
    x, p0 = _reduction_a_cell(x, p, filters * filter_multiplier**2, block_id=f"reduce_{2 * num_blocks}")
    p = p0 if not skip_reduction else p
    for i in range(num_blocks):
        x, p = _normal_a_cell(x, p, filters * filter_multiplier**2, block_id=f"{2 * num_blocks + i + 1}")
    x = layers.Activation("relu")(x)
    x = _common.head(x, include_top, pooling, classes, classifier_activation, weights, top_pool=None)
    model = Model(_common.model_inputs(input_tensor, img_input), x, name=name)
    if weights == "imagenet":
        if default_size not in _FILES:
            raise ValueError("ImageNet weights can only be loaded with NASNetLarge or NASNetMobile")
        fname, url, file_hash = _FILES[default_size][0 if include_top else 1]
        return _common.load(model, weights, fname, url, file_hash)
    return _common.load(model, weights, "", "")


def NASNetMobile(input_shape: Any = None, include_top: bool = True, weights: Any = "imagenet",  # noqa: N802
                 input_tensor: Any = None, pooling: Any = None, classes: int = 1000,
                 classifier_activation: Any = "softmax", name: str = "nasnet_mobile") -> Any:
    """``keras.applications.NASNetMobile``: 224x224 inputs (the default also without the top), scaled to
    [-1, 1] by ``nasnet.preprocess_input``."""
    if not include_top and input_shape is None:
        input_shape = (224, 224, 3)
    return NASNet(input_shape, penultimate_filters=1056, num_blocks=4, stem_block_filters=32, skip_reduction=False,
                  filter_multiplier=2, include_top=include_top, weights=weights, input_tensor=input_tensor,
                  pooling=pooling, classes=classes, default_size=224, classifier_activation=classifier_activation,
                  name=name)


def NASNetLarge(input_shape: Any = None, include_top: bool = True, weights: Any = "imagenet",  # noqa: N802
                input_tensor: Any = None, pooling: Any = None, classes: int = 1000,
                classifier_activation: Any = "softmax", name: str = "nasnet_large") -> Any:
    """``keras.applications.NASNetLarge``: 331x331 inputs by default, scaled to [-1, 1] by
    ``nasnet.preprocess_input``."""
    return NASNet(input_shape, penultimate_filters=4032, num_blocks=6, stem_block_filters=96, skip_reduction=True,
                  filter_multiplier=2, include_top=include_top, weights=weights, input_tensor=input_tensor,
                  pooling=pooling, classes=classes, default_size=331, classifier_activation=classifier_activation,
                  name=name)


def preprocess_input(x: Any, data_format: str | None = None) -> Any:
    """RGB 0-255 images scaled to [-1, 1] (Keras's ``"tf"`` mode)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


decode_predictions = imagenet_utils.decode_predictions
