"""``tf.keras.applications``: Keras 3's ImageNet models, built layer for layer as Keras builds them so
that Keras's pretrained weight files load (``weights="imagenet"`` downloads them once, as Keras does):
MobileNet, MobileNetV2, VGG16, VGG19, ResNet50/101/152, ResNet50V2/101V2/152V2, InceptionV3,
Xception, DenseNet121/169/201, EfficientNetB0-B7, MobileNetV3Small/Large, EfficientNetV2B0-B3/S/M/L,
ConvNeXtTiny/Small/Base/Large/XLarge, InceptionResNetV2, NASNetMobile/Large,
with their ``preprocess_input`` / ``decode_predictions``.

>>> base = tf.keras.applications.MobileNetV2(input_shape=(160, 160, 3), include_top=False, weights=None)
"""

from __future__ import annotations

import types
from typing import Any

from tapeflow.keras.applications import (convnext, densenet, efficientnet, efficientnet_v2, imagenet_utils,
                                         inception_resnet_v2, inception_v3, mobilenet, mobilenet_v2, mobilenet_v3,
                                         nasnet, resnet, vgg, xception)
from tapeflow.keras.applications.convnext import (ConvNeXtBase, ConvNeXtLarge, ConvNeXtSmall, ConvNeXtTiny,
                                                 ConvNeXtXLarge)
from tapeflow.keras.applications.densenet import DenseNet121, DenseNet169, DenseNet201
from tapeflow.keras.applications.efficientnet import (EfficientNetB0, EfficientNetB1, EfficientNetB2,
                                                     EfficientNetB3, EfficientNetB4, EfficientNetB5,
                                                     EfficientNetB6, EfficientNetB7)
from tapeflow.keras.applications.efficientnet_v2 import (EfficientNetV2B0, EfficientNetV2B1, EfficientNetV2B2,
                                                        EfficientNetV2B3, EfficientNetV2L, EfficientNetV2M,
                                                        EfficientNetV2S)
from tapeflow.keras.applications.inception_resnet_v2 import InceptionResNetV2
from tapeflow.keras.applications.inception_v3 import InceptionV3
from tapeflow.keras.applications.mobilenet import MobileNet
from tapeflow.keras.applications.mobilenet_v2 import MobileNetV2
from tapeflow.keras.applications.mobilenet_v3 import MobileNetV3Large, MobileNetV3Small
from tapeflow.keras.applications.nasnet import NASNetLarge, NASNetMobile
from tapeflow.keras.applications.resnet import (ResNet50, ResNet50V2, ResNet101, ResNet101V2, ResNet152,
                                               ResNet152V2)
from tapeflow.keras.applications.vgg import VGG16, VGG19
from tapeflow.keras.applications.xception import Xception


def _module(name: str, doc: str, **members: Any) -> types.ModuleType:
    mod = types.ModuleType(f"tapeflow.keras.applications.{name}", doc)
    mod.__dict__.update(members)
    return mod


# Keras's per-family namespaces (keras.applications.vgg16.preprocess_input, ...)
vgg16 = _module("vgg16", "VGG16.", VGG16=VGG16, preprocess_input=vgg.preprocess_input,
                decode_predictions=vgg.decode_predictions)
vgg19 = _module("vgg19", "VGG19.", VGG19=VGG19, preprocess_input=vgg.preprocess_input,
                decode_predictions=vgg.decode_predictions)
resnet50 = _module("resnet50", "ResNet50.", ResNet50=ResNet50, preprocess_input=resnet.preprocess_input,
                   decode_predictions=resnet.decode_predictions)
resnet_v2 = _module("resnet_v2", "ResNet50V2, ResNet101V2 and ResNet152V2.", ResNet50V2=ResNet50V2,
                    ResNet101V2=ResNet101V2, ResNet152V2=ResNet152V2, preprocess_input=resnet.preprocess_input_v2,
                    decode_predictions=resnet.decode_predictions)

__all__ = ["MobileNet", "MobileNetV2", "ResNet50", "ResNet101", "ResNet152", "VGG16", "VGG19", "InceptionV3",
           "Xception", "ResNet50V2", "ResNet101V2", "ResNet152V2", "DenseNet121", "DenseNet169", "DenseNet201",
           "EfficientNetB0", "EfficientNetB1", "EfficientNetB2", "EfficientNetB3", "EfficientNetB4", "EfficientNetB5",
           "EfficientNetB6", "EfficientNetB7", "MobileNetV3Small", "MobileNetV3Large", "EfficientNetV2B0",
           "EfficientNetV2B1", "EfficientNetV2B2", "EfficientNetV2B3", "EfficientNetV2S", "EfficientNetV2M",
           "EfficientNetV2L", "ConvNeXtTiny", "ConvNeXtSmall", "ConvNeXtBase", "ConvNeXtLarge", "ConvNeXtXLarge",
           "InceptionResNetV2", "NASNetMobile", "NASNetLarge", "convnext", "densenet", "efficientnet",
           "efficientnet_v2", "imagenet_utils", "inception_resnet_v2", "inception_v3", "mobilenet", "mobilenet_v2",
           "mobilenet_v3", "nasnet", "resnet", "resnet50",
           "resnet_v2", "vgg16", "vgg19", "xception"]
