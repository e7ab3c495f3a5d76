"""``tf.keras.layers``."""

from tapeflow.keras.layers.base import Input, InputLayer, InputSpec, KerasTensor, Layer
from tapeflow.keras.layers.conv import (
    AveragePooling1D, AveragePooling2D, AvgPool2D, Conv1D, Conv2D, GlobalAveragePooling1D, GlobalAveragePooling2D,
    GlobalMaxPooling1D, GlobalMaxPooling2D, MaxPool2D, MaxPooling1D, MaxPooling2D,
)
from tapeflow.keras.layers.conv_nd import (
    Conv1DTranspose, Conv2DTranspose, Conv3D, Conv3DTranspose, DepthwiseConv1D, DepthwiseConv2D, SeparableConv1D,
    SeparableConv2D,
)
from tapeflow.keras.layers.core import (
    Activation, Dense, Dropout, Embedding, Flatten, Lambda, LeakyReLU, ReLU, Reshape, Softmax,
)
from tapeflow.keras.layers.preprocessing import Normalization, Rescaling, Resizing
from tapeflow.keras.layers.index_lookup import IntegerLookup, StringLookup
from tapeflow.keras.layers.text_vectorization import TextVectorization
from tapeflow.keras.layers.categorical import CategoryEncoding, Discretization, Hashing
from tapeflow.keras.layers.reshaping import (
    ActivityRegularization, Cropping2D, Identity, Permute, RepeatVector, UpSampling2D, ZeroPadding2D,
)
from tapeflow.keras.layers.merge import (
    Add, Average, Concatenate, Dot, Maximum, Minimum, Multiply, Subtract, add, average, concatenate, dot, maximum,
    minimum, multiply, subtract,
)
from tapeflow.keras.layers.normalization import BatchNormalization, LayerNormalization
from tapeflow.keras.layers.normalization_more import (
    AlphaDropout, AveragePooling3D, CenterCrop, GlobalAveragePooling3D, GlobalMaxPooling3D, GroupNormalization,
    MaxPooling3D, RMSNormalization, ThresholdedReLU,
)
from tapeflow.keras.layers.rnn import (
    GRU, LSTM, RNN, Bidirectional, GRUCell, LSTMCell, SimpleRNN, SimpleRNNCell, StackedRNNCells, TimeDistributed,
)
from tapeflow.keras.layers.extra import (
    ELU, Cropping1D, Cropping3D, GaussianDropout, GaussianNoise, Masking, PReLU, SpatialDropout1D, SpatialDropout2D,
    SpatialDropout3D, UpSampling1D, UpSampling3D, ZeroPadding1D, ZeroPadding3D,
)
from tapeflow.keras.layers.attention import AdditiveAttention, Attention, MultiHeadAttention
from tapeflow.keras.layers.einsum_dense import EinsumDense
from tapeflow.keras.layers.adaptive import (
    AdaptiveAveragePooling1D, AdaptiveAveragePooling2D, AdaptiveAveragePooling3D, AdaptiveMaxPooling1D,
    AdaptiveMaxPooling2D, AdaptiveMaxPooling3D, UnitNormalization, Wrapper,
)
from tapeflow.keras.layers.spectral import SpectralNormalization
from tapeflow.keras.layers.grouped_query_attention import GroupQueryAttention
from tapeflow.keras.layers.conv_lstm import ConvLSTM1D, ConvLSTM2D, ConvLSTM3D
from tapeflow.keras.layers.augmentation_more import (
    AutoContrast, RandomColorDegeneration, RandomColorJitter, RandomGrayscale, RandomHue, RandomInvert,
    RandomPosterization, RandomSaturation, RandomSharpness, Solarization,
)
from tapeflow.keras.layers.pipeline import Pipeline
from tapeflow.keras.layers.augmentation_regions import RandomErasing, RandomGaussianBlur
from tapeflow.keras.layers.augmentation_shear import RandomShear
from tapeflow.keras.layers.augmentation_perspective import RandomPerspective
from tapeflow.keras.layers.augmentation_equalization import Equalization
from tapeflow.keras.layers.augmentation_mix import CutMix, MixUp
from tapeflow.keras.layers.augmentation_policies import AugMix, RandAugment
from tapeflow.keras.layers.augmentation_elastic import RandomElasticTransform
from tapeflow.keras.layers.hashed_crossing import HashedCrossing
from tapeflow.keras.layers.image_augmentation import (
    RandomBrightness, RandomContrast, RandomCrop, RandomFlip, RandomHeight, RandomRotation, RandomTranslation,
    RandomWidth, RandomZoom,
)

Convolution2D = Conv2D
GlobalAvgPool2D, GlobalMaxPool2D = GlobalAveragePooling2D, GlobalMaxPooling2D
GlobalAvgPool3D, GlobalMaxPool3D = GlobalAveragePooling3D, GlobalMaxPooling3D
MaxPool3D, AvgPool3D = MaxPooling3D, AveragePooling3D
GlobalAvgPool1D, GlobalMaxPool1D = GlobalAveragePooling1D, GlobalMaxPooling1D
Convolution1D, MaxPool1D, AvgPool1D = Conv1D, MaxPooling1D, AveragePooling1D
Convolution3D = Conv3D
Convolution1DTranspose, Convolution2DTranspose, Convolution3DTranspose = (
    Conv1DTranspose, Conv2DTranspose, Conv3DTranspose)
SeparableConvolution1D, SeparableConvolution2D = SeparableConv1D, SeparableConv2D

__all__ = [
    "AlphaDropout", "ThresholdedReLU", "CenterCrop", "MaxPooling3D", "AveragePooling3D", "MaxPool3D", "AvgPool3D",
    "GroupNormalization", "RMSNormalization", "GlobalAveragePooling3D",
    "GlobalMaxPooling3D", "GlobalAvgPool3D",
    "GlobalMaxPool3D", "GlobalMaxPool2D",
    "Input", "InputLayer", "InputSpec", "KerasTensor", "Layer", "Dense", "Conv2D", "Convolution2D", "MaxPooling2D",
    "MaxPool2D", "AveragePooling2D", "AvgPool2D", "GlobalAveragePooling2D", "GlobalAvgPool2D", "GlobalMaxPooling2D",
    "GlobalAveragePooling1D", "GlobalAvgPool1D", "GlobalMaxPooling1D", "GlobalMaxPool1D", "Flatten", "Reshape",
    "Dropout", "BatchNormalization", "LayerNormalization", "Embedding", "Activation", "ReLU",
    "Softmax", "Lambda", "Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate", "Dot", "dot",
    "add", "subtract", "multiply", "average", "maximum", "minimum", "concatenate", "LeakyReLU", "Normalization",
    "Rescaling", "Resizing", "Permute", "RepeatVector", "ZeroPadding2D", "UpSampling2D", "Cropping2D", "Identity",
    "ActivityRegularization", "Conv1D", "Convolution1D", "MaxPooling1D", "MaxPool1D", "AveragePooling1D",
    "AvgPool1D", "Conv3D", "Convolution3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose",
    "Convolution1DTranspose", "Convolution2DTranspose", "Convolution3DTranspose", "DepthwiseConv1D",
    "DepthwiseConv2D", "SeparableConv1D", "SeparableConv2D", "SeparableConvolution1D", "SeparableConvolution2D",
    "GRU", "LSTM", "RNN", "Bidirectional", "GRUCell", "LSTMCell", "SimpleRNN", "SimpleRNNCell", "StackedRNNCells",
    "TimeDistributed", "Masking", "AdditiveAttention", "Attention", "MultiHeadAttention", "EinsumDense", "RandomFlip",
    "RandomContrast", "RandomBrightness", "RandomCrop", "RandomHeight", "RandomRotation", "RandomTranslation",
    "RandomWidth", "RandomZoom", "ELU", "Cropping1D", "Cropping3D", "GaussianDropout", "GaussianNoise", "PReLU",
    "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "UpSampling1D", "UpSampling3D", "ZeroPadding1D",
    "ZeroPadding3D", "IntegerLookup", "StringLookup", "TextVectorization",
    "CategoryEncoding", "Discretization", "Hashing",
    "Wrapper", "UnitNormalization", "AdaptiveAveragePooling1D", "AdaptiveAveragePooling2D", "AdaptiveAveragePooling3D",
    "AdaptiveMaxPooling1D", "AdaptiveMaxPooling2D", "AdaptiveMaxPooling3D",
    "SpectralNormalization", "GroupQueryAttention", "ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D",
    "AutoContrast", "RandomColorDegeneration", "RandomGrayscale", "RandomHue", "RandomInvert", "RandomPosterization",
    "RandomSaturation", "RandomSharpness", "Solarization", "RandomColorJitter", "Pipeline",
    "RandomErasing", "RandomGaussianBlur", "RandomShear", "HashedCrossing", "RandomPerspective", "Equalization",
    "MixUp", "CutMix", "RandAugment", "AugMix", "RandomElasticTransform",
]



def serialize(layer: Layer) -> dict:
    """``tf.keras.layers.serialize``: Keras 3's config dict of a layer."""
    from tapeflow.keras.saving.serialization import serialize_keras_object

    return serialize_keras_object(layer)


def deserialize(config: dict, custom_objects: dict | None = None) -> Layer:
    """``tf.keras.layers.deserialize``: the layer a ``serialize`` dict describes."""
    from tapeflow.keras.saving.serialization import deserialize_keras_object

    obj = deserialize_keras_object(config, custom_objects=custom_objects)
    if not isinstance(obj, Layer):
        raise ValueError("`keras.layers.deserialize` was passed a `config` object that is not a "
                         f"`keras.layers.Layer`. Received: {config}")
    return obj


__all__ += ["serialize", "deserialize"]

# Keras names tapeflow lacks: NotImplementedError (also an AttributeError, for hasattr)
from tapeflow.keras._missing import module_getattr as _module_getattr  # noqa: E402

_missing_getattr = _module_getattr("tf.keras.layers", frozenset((
    "Flatten3D "
).split()))


def __getattr__(name: str):
    if name == "TFSMLayer":  # (with the export archive, on first use)
        from tapeflow.keras.export import TFSMLayer

        return TFSMLayer
    return _missing_getattr(name)
