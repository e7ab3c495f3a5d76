"""``keras.applications.imagenet_utils``: ImageNet input preprocessing, prediction decoding and the
input-shape rules Keras's applications share."""

from __future__ import annotations

import json
import warnings
from typing import Any

import numpy as np

from tapeflow.keras import activations
from tapeflow.keras import backend as _backend
from tapeflow.keras import ops

CLASS_INDEX = None
CLASS_INDEX_PATH = "https://storage.googleapis.com/download.tensorflow.org/data/imagenet_class_index.json"
_CAFFE_MEAN = [103.939, 116.779, 123.68]  # BGR
_TORCH_MEAN, _TORCH_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def preprocess_input(x: Any, data_format: str | None = None, mode: str = "caffe") -> Any:
    """Scales a batch of RGB images (0-255) as a model's ImageNet weights expect: ``"caffe"`` (BGR,
    ImageNet means subtracted), ``"tf"`` (to [-1, 1]) or ``"torch"`` (to [0, 1], then normalized per
    channel). A NumPy float array is changed in place, as in Keras."""
    if mode not in {"caffe", "tf", "torch"}:
        raise ValueError(f"Expected mode to be one of `caffe`, `tf` or `torch`. Received: mode={mode}")
    if data_format is None:
        data_format = _backend.image_data_format()
    elif data_format not in {"channels_first", "channels_last"}:
        raise ValueError("Expected data_format to be one of `channels_first` or `channels_last`. "
                         f"Received: data_format={data_format}")
    if isinstance(x, np.ndarray):
        return _preprocess_numpy(x, data_format, mode)
    return _preprocess_tensor(x, data_format, mode)


def _channel_view(x: np.ndarray, data_format: str, c: int) -> Any:
    if data_format == "channels_first":
        return x[c] if x.ndim == 3 else x[:, c]
    return x[..., c]


def _preprocess_numpy(x: np.ndarray, data_format: str, mode: str) -> np.ndarray:
    if not issubclass(x.dtype.type, np.floating):
        x = x.astype(_backend.floatx(), copy=False)
    if mode == "tf":
        x /= 127.5
        x -= 1.0
        return x
    if mode == "torch":
        x /= 255.0
        mean, std = _TORCH_MEAN, _TORCH_STD
    else:
        if data_format == "channels_first":
            x = x[::-1, ...] if x.ndim == 3 else x[:, ::-1, ...]
        else:
            x = x[..., ::-1]
        mean, std = _CAFFE_MEAN, None
    for c in range(3):
        view = _channel_view(x, data_format, c)
        view -= mean[c]
        if std is not None:
            view /= std[c]
    return x


def _preprocess_tensor(x: Any, data_format: str, mode: str) -> Any:
    ndim = len(x.shape)
    if mode == "tf":
        x /= 127.5
        x -= 1.0
        return x
    if mode == "torch":
        x /= 255.0
        mean, std = _TORCH_MEAN, _TORCH_STD
    else:
        if data_format == "channels_first":
            x = ops.stack([x[i, ...] for i in (2, 1, 0)], axis=0) if ndim == 3 else \
                ops.stack([x[:, i, :] for i in (2, 1, 0)], axis=1)
        else:
            x = ops.stack([x[..., i] for i in (2, 1, 0)], axis=-1)
        mean, std = _CAFFE_MEAN, None
    mean_t = ops.convert_to_tensor(-np.array(mean), dtype=x.dtype)
    if data_format == "channels_first":
        mean_t = ops.reshape(mean_t, (3, 1, 1) if ndim == 3 else (1, 3) + (1,) * (ndim - 2))
    else:
        mean_t = ops.reshape(mean_t, (1,) * (ndim - 1) + (3,))
    x += mean_t
    if std is not None:
        std_t = ops.convert_to_tensor(np.array(std), dtype=x.dtype)
        if data_format == "channels_first":
            std_t = ops.reshape(std_t, (-1, 1, 1))
        x /= std_t
    return x


def decode_predictions(preds: Any, top: int = 5) -> list:
    """The ``top`` classes of each row of ImageNet predictions, as ``(class_name, description, score)``
    tuples (the class index is downloaded once, as Keras does)."""
    global CLASS_INDEX
    if len(preds.shape) != 2 or preds.shape[1] != 1000:
        raise ValueError("`decode_predictions` expects a batch of predictions (i.e. a 2D array of shape (samples, "
                         f"1000)). Received array with shape: {tuple(preds.shape)}")
    if CLASS_INDEX is None:
        from tapeflow.keras.file_utils import get_file

        path = get_file("imagenet_class_index.json", CLASS_INDEX_PATH, cache_subdir="models",
                        file_hash="c2c37ea517e94d9795004a39431a14cb")
        with open(path) as f:
            CLASS_INDEX = json.load(f)
    results = []
    for pred in ops.convert_to_numpy(preds):
        top_indices = pred.argsort()[-top:][::-1]
        result = [tuple(CLASS_INDEX[str(i)]) + (pred[i],) for i in top_indices]
        result.sort(key=lambda r: r[2], reverse=True)
        results.append(result)
    return results


def obtain_input_shape(input_shape: Any, default_size: int, min_size: int, data_format: str, require_flatten: bool,
                       weights: Any = None) -> tuple:
    """A model's input shape: the default, or ``input_shape`` checked (3 channels for ImageNet weights,
    at least ``min_size`` pixels, static when the classifier top is included)."""
    first = data_format == "channels_first"
    if weights != "imagenet" and input_shape and len(input_shape) == 3:
        channels = input_shape[0] if first else input_shape[-1]
        if channels not in {1, 3}:
            warnings.warn("This model usually expects 1 or 3 input channels. However, it was passed an input_shape "
                          f"with {channels} input channels.", stacklevel=3)
        default_shape = (channels, default_size, default_size) if first else (default_size, default_size, channels)
    else:
        default_shape = (3, default_size, default_size) if first else (default_size, default_size, 3)
    if weights == "imagenet" and require_flatten:
        if input_shape is not None and tuple(input_shape) != default_shape:
            raise ValueError("When setting `include_top=True` and loading `imagenet` weights, `input_shape` should be "
                             f"{default_shape}.  Received: input_shape={input_shape}")
        return default_shape
    if input_shape:
        if len(input_shape) != 3:
            raise ValueError("`input_shape` must be a tuple of three integers.")
        channels, spatial = (input_shape[0], input_shape[1:]) if first else (input_shape[-1], input_shape[:2])
        if channels != 3 and weights == "imagenet":
            raise ValueError(f"The input must have 3 channels; Received `input_shape={input_shape}`")
        if any(d is not None and d < min_size for d in spatial):
            raise ValueError(f"Input size must be at least {min_size}x{min_size}; Received: input_shape={input_shape}")
    elif require_flatten:
        input_shape = default_shape
    else:
        input_shape = (3, None, None) if first else (None, None, 3)
    if require_flatten and None in tuple(input_shape):
        raise ValueError("If `include_top` is True, you should specify a static `input_shape`. "
                         f"Received: input_shape={input_shape}")
    return tuple(input_shape)


def correct_pad(inputs: Any, kernel_size: Any) -> tuple:
    """The zero padding before a strided 2-D convolution that centres its windows as Keras's models do."""
    img_dim = 2 if _backend.image_data_format() == "channels_first" else 1
    size = tuple(inputs.shape)[img_dim:img_dim + 2]
    kernel_size = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    adjust = (1, 1) if size[0] is None else (1 - size[0] % 2, 1 - size[1] % 2)
    correct = (kernel_size[0] // 2, kernel_size[1] // 2)
    return (correct[0] - adjust[0], correct[0]), (correct[1] - adjust[1], correct[1])


def validate_activation(classifier_activation: Any, weights: Any) -> None:
    """Pretrained weights allow only ``None`` or ``"softmax"`` on the classifier."""
    if weights is None:
        return
    fn = activations.get(classifier_activation)
    if fn not in {activations.get("softmax"), activations.get(None)}:
        raise ValueError("Only `None` and `softmax` activations are allowed for the `classifier_activation` argument "
                         "when using pretrained weights, with `include_top=True`; Received: "
                         f"classifier_activation={classifier_activation}")
