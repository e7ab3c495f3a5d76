"""``tf.keras.backend``: Keras 3's configuration functions and the legacy tf.keras backend helpers
(thin wrappers over the TF API, with Keras's defaults: ``floatx()`` dtypes, variables for ``zeros``/``ones``/
``eye``, ``axis=-1`` for ``argmax`` ...)."""

from __future__ import annotations

import builtins as _builtins
import math as _math
from typing import Any

import numpy as np

from tapeflow.framework import dtypes as _dtypes
from tapeflow.framework import namespaces as _namespaces
from tapeflow.keras.layers.base import KerasTensor as _KerasTensor
from tapeflow.keras.layers.base import _name_counts, clear_session

__all__ = [
    "clear_session", "epsilon", "floatx", "set_floatx", "set_epsilon", "image_data_format", "set_image_data_format",
    "backend", "get_uid", "is_keras_tensor", "standardize_dtype", "result_type", "is_float_dtype", "is_int_dtype",
    "int_shape", "ndim", "dtype", "count_params", "get_value", "set_value", "batch_get_value", "batch_set_value",
    "eval", "cast_to_floatx", "variable", "constant", "zeros", "ones", "eye", "zeros_like", "ones_like", "arange",
    "cast", "abs", "all", "any", "argmax", "argmin", "clip", "concatenate", "cos", "sin", "cumsum", "cumprod",
    "equal", "not_equal", "greater", "greater_equal", "less", "less_equal", "exp", "log", "expand_dims",
    "squeeze", "flatten", "batch_flatten", "gather", "max", "min", "maximum", "minimum", "mean", "sum", "prod",
    "std", "var", "permute_dimensions", "pow", "reshape", "round", "sign", "sqrt", "square", "stack", "tile",
    "transpose", "reverse", "stop_gradient", "shape", "sigmoid", "tanh", "softplus", "softsign", "softmax", "relu",
    "elu", "hard_sigmoid", "l2_normalize", "one_hot", "repeat", "repeat_elements", "dot", "update", "update_add",
    "update_sub", "name_scope", "random_normal", "random_uniform", "truncated_normal", "random_bernoulli",
    "is_sparse", "to_dense", "temporal_padding", "spatial_2d_padding", "bias_add", "in_top_k",
    "batch_dot", "batch_normalization", "binary_crossentropy", "binary_focal_crossentropy",
    "categorical_crossentropy", "categorical_focal_crossentropy", "sparse_categorical_crossentropy", "conv1d",
    "conv2d", "conv2d_transpose", "conv3d", "depthwise_conv2d", "separable_conv2d", "pool2d", "pool3d",
    "spatial_3d_padding", "resize_images", "resize_volumes", "dropout", "random_normal_variable",
    "random_uniform_variable", "moving_average_update", "gradients", "foldl", "foldr", "map_fn", "switch",
    "ctc_label_dense_to_sparse", "ctc_batch_cost", "ctc_decode", "rnn",
]

class _PublicTF:
    """The public ``tf`` namespace, looked up at call time (tapeflow.keras may not import the package root; its
    registered namespace carries tf.ragged's and tf.sparse's dispatching versions of the functions)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(_namespaces.get("tapeflow"), name)


_tf = _PublicTF()

_config = {"epsilon": 1e-7, "image_data_format": "channels_last"}
_FLOATX_CHOICES = {"bfloat16", "float16", "float32", "float64"}


# -- configuration ----------------------------------------------------------------------------------------
def epsilon() -> float:
    """The fuzz factor Keras's losses and metrics use (1e-7)."""
    return _config["epsilon"]


def set_epsilon(value: float) -> None:
    """Only Keras's default 1e-7 is supported: tapeflow's losses and metrics use it as a constant."""
    if float(value) != 1e-7:
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError(f"tf.keras.backend.set_epsilon({value}) is not implemented in tapeflow "
                                            f"(only the default 1e-7)")
    _config["epsilon"] = 1e-7


def floatx() -> str:
    """The default float type of layers' weights and computations (``"float32"`` unless ``set_floatx``)."""
    from tapeflow.keras import mixed_precision

    return mixed_precision._floatx[0]


def set_floatx(value: str) -> None:
    """Sets the dtype of layers created from now on (when no global mixed-precision policy is set)."""
    if value not in _FLOATX_CHOICES:
        raise ValueError(f"Unknown `floatx` value: {value}. Expected one of {_FLOATX_CHOICES}")
    from tapeflow.keras import mixed_precision

    mixed_precision._floatx[0] = str(value)


def image_data_format() -> str:
    return _config["image_data_format"]


def set_image_data_format(data_format: str) -> None:
    """Only ``"channels_last"`` is supported (tapeflow's layers default to it)."""
    data_format = str(data_format).lower()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError("The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
                         f"Received: data_format={data_format}")
    if data_format != "channels_last":
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError(
            "tf.keras.backend.set_image_data_format('channels_first') is not implemented in tapeflow; pass "
            "data_format='channels_first' to the layers instead")


def backend() -> str:
    """The backend's name: ``"tensorflow"``, as under TF's tf.keras."""
    return "tensorflow"


def get_uid(prefix: str = "") -> int:
    """1, 2, 3 ... per ``prefix``: the counter Keras's automatic layer names use (``dense``, ``dense_1``)."""
    _name_counts[prefix] = _name_counts.get(prefix, 0) + 1
    return _name_counts[prefix]


def is_keras_tensor(x: Any) -> bool:
    """True for the symbolic tensors of a functional model (``tf.keras.Input(...)`` and layer outputs)."""
    return isinstance(x, _KerasTensor)


def standardize_dtype(dtype: Any) -> str:
    """A dtype's Keras name (``tf.float32`` -> ``"float32"``); None is ``floatx()``."""
    if dtype is None:
        return floatx()
    if isinstance(dtype, str) and dtype == "int":
        return "int64"
    if isinstance(dtype, str) and dtype == "float":  # (tapeflow's DType equals "float": compare strings only)
        raise ValueError(f"Invalid dtype: {dtype}")
    if isinstance(dtype, str) and dtype == "bfloat16":  # a Keras name tapeflow has no DType for
        return dtype
    try:
        return _dtypes.as_dtype(getattr(dtype, "name", dtype)).name
    except (TypeError, ValueError) as e:
        raise ValueError(f"Invalid dtype: {dtype}") from e


def result_type(*dtypes: Any) -> str:
    """Keras's promotion of ``dtypes``: integers with floats give the float type, floats promote among
    themselves (``bfloat16`` with ``float16`` is ``float32``), integers and bools as NumPy; none is ``floatx()``."""
    names = [standardize_dtype(d) for d in dtypes]
    if not names:
        return floatx()
    floats = sorted({n for n in names if is_float_dtype(n)})
    if floats == ["bfloat16"]:
        return "bfloat16"
    if floats:
        return np.result_type(*[np.float32 if n == "bfloat16" else np.dtype(n) for n in floats]).name
    return np.result_type(*[np.dtype(n) for n in names]).name


def is_float_dtype(dtype: Any) -> bool:
    return standardize_dtype(dtype).startswith(("float", "bfloat"))


def is_int_dtype(dtype: Any) -> bool:
    return standardize_dtype(dtype).startswith(("int", "uint"))


# -- tensors and variables ---------------------------------------------------------------------------------
def int_shape(x: Any) -> tuple | None:
    """The static shape as a tuple of ints (None for unknown sizes)."""
    try:
        shape = x.shape
        return shape if isinstance(shape, tuple) else tuple(shape.as_list())
    except ValueError:
        return None


def ndim(x: Any) -> int | None:
    shape = x.shape
    return len(shape) if isinstance(shape, tuple) else shape.rank


def dtype(x: Any) -> str:
    return _dtypes.as_dtype(x.dtype).name


def count_params(x: Any) -> int:
    return _math.prod(int_shape(x))


def get_value(x: Any) -> Any:
    return x.numpy() if _tf.is_tensor(x) or isinstance(x, _tf.Variable) else x


def eval(x: Any) -> Any:  # noqa: A001 - Keras's name
    return get_value(x)


def batch_get_value(tensors: list) -> list:
    return [x.numpy() for x in tensors]


def set_value(x: Any, value: Any) -> None:
    x.assign(np.asarray(value, dtype=x.dtype.name))


def batch_set_value(tuples: list) -> None:
    for x, value in tuples:
        set_value(x, value)


def cast_to_floatx(x: Any) -> Any:
    if _tf.is_tensor(x) or isinstance(x, _tf.Variable):
        return _tf.cast(x, floatx())
    return np.asarray(x, dtype=floatx())


def variable(value: Any, dtype: Any = None, name: str | None = None, constraint: Any = None) -> Any:
    return _tf.Variable(value, dtype=dtype or floatx(), name=name, constraint=constraint)


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str | None = None) -> Any:
    return _tf.constant(value, dtype=dtype or floatx(), shape=shape, name=name)


def _filled(fn: Any, shape: Any, dtype: Any, name: str | None) -> Any:
    v = fn(shape, dtype=dtype or floatx())
    if all(v.shape.as_list()):  # Keras returns a variable unless a dimension is 0
        return variable(v, dtype=dtype or floatx(), name=name)
    return v


def zeros(shape: Any, dtype: Any = None, name: str | None = None) -> Any:
    return _filled(_tf.zeros, shape, dtype, name)


def ones(shape: Any, dtype: Any = None, name: str | None = None) -> Any:
    return _filled(_tf.ones, shape, dtype, name)


def eye(size: int, dtype: Any = None, name: str | None = None) -> Any:
    return variable(_tf.eye(size, dtype=dtype or floatx()), dtype or floatx(), name)


def zeros_like(x: Any, dtype: Any = None, name: str | None = None) -> Any:
    return _tf.zeros_like(x, dtype=dtype, name=name)


def ones_like(x: Any, dtype: Any = None, name: str | None = None) -> Any:
    return _tf.ones_like(x, dtype=dtype, name=name)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: str = "int32") -> Any:
    if stop is None and start < 0:
        start = 0
    result = _tf.range(start, limit=stop, delta=step, name="arange")
    return result if dtype == "int32" else _tf.cast(result, dtype)


def cast(x: Any, dtype: Any) -> Any:
    return _tf.cast(x, dtype)


# -- math -------------------------------------------------------------------------------------------------
def abs(x: Any) -> Any:  # noqa: A001
    return _tf.abs(x)


def all(x: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    return _tf.reduce_all(_tf.cast(x, _tf.bool), axis, keepdims)


def any(x: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    return _tf.reduce_any(_tf.cast(x, _tf.bool), axis, keepdims)


def argmax(x: Any, axis: int = -1) -> Any:
    return _tf.argmax(x, axis)


def argmin(x: Any, axis: int = -1) -> Any:
    return _tf.argmin(x, axis)


def clip(x: Any, min_value: Any, max_value: Any) -> Any:
    if isinstance(min_value, (int, float)) and isinstance(max_value, (int, float)) and max_value < min_value:
        max_value = min_value
    return _tf.clip_by_value(x, -np.inf if min_value is None else min_value,
                             np.inf if max_value is None else max_value)


def concatenate(tensors: list, axis: int = -1) -> Any:
    if axis < 0:
        rank = ndim(tensors[0])
        axis = axis % rank if rank else 0
    return _tf.concat(list(tensors), axis)


def cos(x: Any) -> Any:
    return _tf.cos(x)


def sin(x: Any) -> Any:
    return _tf.sin(x)


def cumsum(x: Any, axis: int = 0) -> Any:
    return _tf.cumsum(x, axis=axis)


def cumprod(x: Any, axis: int = 0) -> Any:
    return _tf.math.cumprod(x, axis=axis)


def equal(x: Any, y: Any) -> Any:
    return _tf.equal(x, y)


def not_equal(x: Any, y: Any) -> Any:
    return _tf.not_equal(x, y)


def greater(x: Any, y: Any) -> Any:
    return _tf.greater(x, y)


def greater_equal(x: Any, y: Any) -> Any:
    return _tf.greater_equal(x, y)


def less(x: Any, y: Any) -> Any:
    return _tf.less(x, y)


def less_equal(x: Any, y: Any) -> Any:
    return _tf.less_equal(x, y)


def exp(x: Any) -> Any:
    return _tf.exp(x)


def log(x: Any) -> Any:
    return _tf.math.log(x)


def expand_dims(x: Any, axis: int = -1) -> Any:
    return _tf.expand_dims(x, axis)


def squeeze(x: Any, axis: int) -> Any:
    return _tf.squeeze(x, [axis])


def flatten(x: Any) -> Any:
    return _tf.reshape(x, [-1])


def batch_flatten(x: Any) -> Any:
    return _tf.reshape(x, _tf.stack([-1, _tf.reduce_prod(_tf.shape(x)[1:])]))


def gather(reference: Any, indices: Any) -> Any:
    return _tf.gather(reference, indices)


def _floatx_if_bool(x: Any) -> Any:
    x = _tf.convert_to_tensor(x)
    return _tf.cast(x, floatx()) if x.dtype == _tf.bool else x


def max(x: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    return _tf.reduce_max(x, axis, keepdims)


def min(x: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    return _tf.reduce_min(x, axis, keepdims)


def maximum(x: Any, y: Any) -> Any:
    return _tf.maximum(x, y)


def minimum(x: Any, y: Any) -> Any:
    return _tf.minimum(x, y)


def mean(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _tf.reduce_mean(_floatx_if_bool(x), axis, keepdims)


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A001
    return _tf.reduce_sum(x, axis, keepdims)


def prod(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _tf.reduce_prod(x, axis, keepdims)


def std(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _tf.math.reduce_std(_floatx_if_bool(x), axis=axis, keepdims=keepdims)


def var(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _tf.math.reduce_variance(_floatx_if_bool(x), axis=axis, keepdims=keepdims)


def permute_dimensions(x: Any, pattern: Any) -> Any:
    return _tf.transpose(x, perm=pattern)


def pow(x: Any, a: Any) -> Any:  # noqa: A001
    return _tf.pow(x, a)


def reshape(x: Any, shape: Any) -> Any:
    return _tf.reshape(x, shape)


def round(x: Any) -> Any:  # noqa: A001
    return _tf.round(x)


def sign(x: Any) -> Any:
    return _tf.sign(x)


def sqrt(x: Any) -> Any:
    """sqrt(max(x, 0)): Keras's legacy backend clamps negatives to 0."""
    x = _tf.convert_to_tensor(x)
    return _tf.sqrt(_tf.maximum(x, _tf.constant(0.0, x.dtype)))


def square(x: Any) -> Any:
    return _tf.square(x)


def stack(x: list, axis: int = 0) -> Any:
    return _tf.stack(x, axis=axis)


def tile(x: Any, n: Any) -> Any:
    return _tf.tile(x, [n] if isinstance(n, int) else n)


def transpose(x: Any) -> Any:
    return _tf.transpose(x)


def reverse(x: Any, axes: Any) -> Any:
    return _tf.reverse(x, [axes] if isinstance(axes, int) else axes)


def stop_gradient(variables: Any) -> Any:
    if isinstance(variables, (list, tuple)):
        return map(_tf.stop_gradient, variables)
    return _tf.stop_gradient(variables)


def shape(x: Any) -> Any:
    return _tf.shape(x)


# -- activations ------------------------------------------------------------------------------------------
def sigmoid(x: Any) -> Any:
    return _tf.sigmoid(x)


def tanh(x: Any) -> Any:
    return _tf.tanh(x)


def softplus(x: Any) -> Any:
    return _tf.math.softplus(x)


def softsign(x: Any) -> Any:
    return _tf.math.softsign(x)


def softmax(x: Any, axis: int = -1) -> Any:
    x = _tf.convert_to_tensor(x)
    if x.shape.rank <= 1:
        raise ValueError(f"Cannot apply softmax to a tensor that is 1D. Received input: {x}")
    if isinstance(axis, int):
        return _tf.nn.softmax(x, axis=axis)
    e = _tf.exp(x - _tf.reduce_max(x, axis=axis, keepdims=True))
    return e / _tf.reduce_sum(e, axis=axis, keepdims=True)


def relu(x: Any, alpha: float = 0.0, max_value: Any = None, threshold: float = 0.0) -> Any:
    """The legacy backend's relu: ``alpha`` leak below ``threshold``, capped at ``max_value``."""
    x = _tf.convert_to_tensor(x)
    if alpha != 0.0:
        if max_value is None and threshold == 0:
            return _tf.nn.leaky_relu(x, alpha=alpha)
        negative_part = _tf.nn.relu(-x + threshold) if threshold != 0 else _tf.nn.relu(-x)
    y = x * _tf.cast(_tf.greater(x, threshold), x.dtype) if threshold != 0 else _tf.nn.relu(x)
    if max_value is not None:
        y = _tf.clip_by_value(y, _tf.constant(0, y.dtype), _tf.constant(max_value, y.dtype))
    if alpha != 0.0:
        y = y - _tf.constant(alpha, y.dtype) * negative_part
    return y


def elu(x: Any, alpha: float = 1.0) -> Any:
    res = _tf.nn.elu(x)
    return res if alpha == 1 else _tf.where(_tf.greater(x, 0), res, alpha * res)


def hard_sigmoid(x: Any) -> Any:
    """The legacy backend's clip(0.2 x + 0.5, 0, 1) (not Keras 3's activations.hard_sigmoid)."""
    x = _tf.convert_to_tensor(x)
    return _tf.clip_by_value(x * _tf.constant(0.2, x.dtype) + _tf.constant(0.5, x.dtype), 0.0, 1.0)


def l2_normalize(x: Any, axis: Any = None) -> Any:
    return _tf.linalg.l2_normalize(x, axis=axis)


def one_hot(indices: Any, num_classes: int) -> Any:
    return _tf.one_hot(indices, depth=num_classes, axis=-1)


def in_top_k(predictions: Any, targets: Any, k: int) -> Any:
    return _tf.math.in_top_k(targets, predictions, k)


def repeat(x: Any, n: int) -> Any:
    """(batch, d) -> (batch, n, d)."""
    if ndim(x) != 2:
        raise ValueError(f"Expected input `x` to have rank 2. Received: rank(x)={ndim(x)}")
    return _tf.tile(_tf.expand_dims(x, 1), [1, n, 1])


def repeat_elements(x: Any, rep: int, axis: int) -> Any:
    """Each slice along ``axis`` repeated ``rep`` times (``np.repeat``)."""
    return _tf.repeat(x, rep, axis=axis)


def dot(x: Any, y: Any) -> Any:
    """Keras's legacy dot: matmul, and for rank > 2 a tensordot of x's last axis with y's second-to-last."""
    x, y = _tf.convert_to_tensor(x), _tf.convert_to_tensor(y)
    if x.shape.rank > 2 or y.shape.rank > 2:
        return _tf.tensordot(x, y, [[x.shape.rank - 1], [y.shape.rank - 2]])
    return _tf.matmul(x, y)


def bias_add(x: Any, bias: Any, data_format: str | None = None) -> Any:
    data_format = data_format or image_data_format()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError(f"Unknown data_format: {data_format}")
    bias = _tf.convert_to_tensor(bias)
    bias_shape = tuple(bias.shape.as_list())
    if len(bias_shape) != 1 and len(bias_shape) != ndim(x) - 1:
        raise ValueError(f"Unexpected bias dimensions {len(bias_shape)}. Expected it to be 1 or {ndim(x) - 1} "
                         f"dimensions")
    if len(bias_shape) == 1:
        return _tf.nn.bias_add(x, bias, data_format="NCHW" if data_format == "channels_first" else "NHWC")
    if data_format == "channels_first":
        return x + _tf.reshape(bias, (1, bias_shape[-1]) + bias_shape[:-1])
    return x + _tf.reshape(bias, (1,) + bias_shape)


def temporal_padding(x: Any, padding: tuple = (1, 1)) -> Any:
    if len(padding) != 2:
        raise ValueError(f"Expected `padding` to be a tuple of 2 integers. Received: padding={padding}")
    return _tf.pad(x, [[0, 0], [padding[0], padding[1]], [0, 0]])


def spatial_2d_padding(x: Any, padding: tuple = ((1, 1), (1, 1)), data_format: str | None = None) -> Any:
    if len(padding) != 2 or len(padding[0]) != 2 or len(padding[1]) != 2:
        raise ValueError(f"Expected `padding` to be a tuple of 2 tuples of 2 integers. Received: padding={padding}")
    data_format = data_format or image_data_format()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError(f"Unknown data_format: {data_format}")
    if data_format == "channels_first":
        return _tf.pad(x, [[0, 0], [0, 0], list(padding[0]), list(padding[1])])
    return _tf.pad(x, [[0, 0], list(padding[0]), list(padding[1]), [0, 0]])


def is_sparse(tensor: Any) -> bool:
    return isinstance(tensor, _tf.SparseTensor)


def to_dense(tensor: Any) -> Any:
    return _tf.sparse.to_dense(tensor) if is_sparse(tensor) else tensor


# -- state ------------------------------------------------------------------------------------------------
def update(x: Any, new_x: Any) -> Any:
    return x.assign(new_x)


def update_add(x: Any, increment: Any) -> Any:
    return x.assign_add(increment)


def update_sub(x: Any, decrement: Any) -> Any:
    return x.assign_sub(decrement)


def name_scope(name: str) -> Any:
    return _tf.name_scope(name)


# -- random -----------------------------------------------------------------------------------------------
def _seed(seed: Any) -> int:
    return int(np.random.randint(10000000.0)) if seed is None else seed


def random_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None, seed: Any = None) -> Any:
    return _tf.random.normal(shape, mean=mean, stddev=stddev, dtype=dtype or floatx(), seed=_seed(seed))


def random_uniform(shape: Any, minval: float = 0.0, maxval: float = 1.0, dtype: Any = None, seed: Any = None) -> Any:
    return _tf.random.uniform(shape, minval=minval, maxval=maxval, dtype=dtype or floatx(), seed=_seed(seed))


def truncated_normal(shape: Any, mean: float = 0.0, stddev: float = 1.0, dtype: Any = None,
                     seed: Any = None) -> Any:
    return _tf.random.truncated_normal(shape, mean, stddev, dtype=dtype or floatx(), seed=_seed(seed))


def random_bernoulli(shape: Any, p: float = 0.0, dtype: Any = None, seed: Any = None) -> Any:
    dtype = dtype or floatx()
    u = _tf.random.uniform(shape, dtype=dtype, seed=_seed(seed))
    return _tf.where(u <= p, _tf.ones(shape, dtype=dtype), _tf.zeros(shape, dtype=dtype))


def standardize_data_format(data_format: str | None) -> str:
    """``data_format`` checked and lower-cased; None is ``image_data_format()`` (Keras's helper)."""
    if data_format is None:
        return image_data_format()
    data_format = str(data_format).lower()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError("The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
                         f"Received: data_format={data_format}")
    return data_format


# -- the rest of the legacy tf.keras backend (Keras 3's keras.src.legacy.backend) -----------------------
def _data_format(data_format: str | None) -> str:
    data_format = data_format or image_data_format()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError(f"Unknown data_format: {data_format}")
    return data_format


def _padding_name(padding: str) -> str:
    if padding not in ("same", "valid"):
        raise ValueError(f"Invalid padding: {padding}")
    return padding.upper()


def batch_dot(x: Any, y: Any, axes: Any = None) -> Any:
    """Batchwise dot product: for each sample ``i``, the contraction of ``x[i]`` and ``y[i]`` over ``axes``
    (default: x's last axis with y's last (rank-2 y) or second-to-last)."""
    x, y = _tf.convert_to_tensor(x), _tf.convert_to_tensor(y)
    xs, ys = x.shape, y.shape
    xn, yn = xs.rank, ys.rank
    if xn < 2 or yn < 2:
        raise ValueError(f"Cannot do batch_dot on inputs with rank < 2. Received inputs with tf.shapes {xs} and {ys}.")
    if xs[0] is not None and ys[0] is not None and xs[0] != ys[0]:
        raise ValueError(f"Cannot do batch_dot on inputs with different batch sizes. Received inputs with tf.shapes "
                         f"{xs} and {ys}.")
    if isinstance(axes, int):
        axes = [axes, axes]
    if axes is None:
        axes = [xn - 1, yn - 1] if yn == 2 else [xn - 1, yn - 2]
    if _builtins.any(isinstance(a, (list, tuple)) for a in axes):
        raise ValueError(f"Multiple target dimensions are not supported. Expected: None, int, (int, int), "
                         f"Provided: {axes}")
    a0, a1 = axes[0] % xn if axes[0] < 0 else axes[0], axes[1] % yn if axes[1] < 0 else axes[1]
    if 0 in (a0, a1):
        raise ValueError("Cannot perform batch_dot over axis 0. If your inputs are not batched, add a dummy batch "
                         "dimension to your inputs using K.expand_dims(x, 0)")
    d1, d2 = xs[a0], ys[a1]
    if d1 is not None and d2 is not None and d1 != d2:
        raise ValueError(f"Cannot do batch_dot on inputs with tf.shapes {xs} and {ys} with axes={[a0, a1]}. "
                         f"x.shape[{a0}] != y.shape[{a1}] ({d1} != {d2}).")
    # contract x's axis a0 with y's a1; the result keeps x's other axes, then y's
    xl = "".join(chr(ord("a") + i) for i in range(xn))
    yl = "a" + "".join(chr(ord("a") + xn + i) for i in range(1, yn))
    yl = yl[:a1] + xl[a0] + yl[a1 + 1:]
    out = xl[:a0] + xl[a0 + 1:] + yl[1:a1] + yl[a1 + 1:]
    result = _tf.einsum(f"{xl},{yl}->{out}", x, y)
    return _tf.expand_dims(result, 1) if xn == 2 and yn == 2 else result


def batch_normalization(x: Any, mean: Any, var: Any, beta: Any, gamma: Any, axis: int = -1,
                        epsilon: float = 1e-3) -> Any:
    return _tf.nn.batch_normalization(x, mean, var, beta, gamma, epsilon)


def binary_crossentropy(target: Any, output: Any, from_logits: bool = False) -> Any:
    """Elementwise binary cross-entropy (the legacy backend's: probabilities clipped to [eps, 1 - eps], plus eps
    inside the logs)."""
    target, output = _tf.convert_to_tensor(target), _tf.convert_to_tensor(output)
    if from_logits:
        return _tf.nn.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    eps = _tf.constant(epsilon(), output.dtype)
    output = _tf.clip_by_value(output, eps, 1.0 - eps)
    bce = target * _tf.math.log(output + epsilon())
    bce += (1 - target) * _tf.math.log(1 - output + epsilon())
    return -bce


def binary_focal_crossentropy(target: Any, output: Any, apply_class_balancing: bool = False, alpha: float = 0.25,
                              gamma: float = 2.0, from_logits: bool = False) -> Any:
    target, output = _tf.convert_to_tensor(target), _tf.convert_to_tensor(output)
    p = _tf.sigmoid(output) if from_logits else output
    p_t = target * p + (1 - target) * (1 - p)
    focal = _tf.pow(1.0 - p_t, gamma) * binary_crossentropy(target, output, from_logits=from_logits)
    if apply_class_balancing:
        focal = (target * alpha + (1 - target) * (1 - alpha)) * focal
    return focal


def _probabilities(target: Any, output: Any, axis: int) -> tuple:
    target, output = _tf.convert_to_tensor(target), _tf.convert_to_tensor(output)
    target.shape.assert_is_compatible_with(output.shape)
    return target, output


def categorical_crossentropy(target: Any, output: Any, from_logits: bool = False, axis: int = -1) -> Any:
    target, output = _probabilities(target, output, axis)
    if from_logits:
        return _tf.nn.softmax_cross_entropy_with_logits(labels=target, logits=output, axis=axis)
    output = output / _tf.reduce_sum(output, axis, True)
    eps = _tf.constant(epsilon(), output.dtype)
    output = _tf.clip_by_value(output, eps, 1.0 - eps)
    return -_tf.reduce_sum(target * _tf.math.log(output), axis)


def categorical_focal_crossentropy(target: Any, output: Any, alpha: float = 0.25, gamma: float = 2.0,
                                   from_logits: bool = False, axis: int = -1) -> Any:
    target, output = _probabilities(target, output, axis)
    if from_logits:
        output = _tf.nn.softmax(output, axis=axis)
    output = output / _tf.reduce_sum(output, axis=axis, keepdims=True)
    eps = _tf.constant(epsilon(), output.dtype)
    output = _tf.clip_by_value(output, eps, 1.0 - eps)
    cce = -target * _tf.math.log(output)
    return _tf.reduce_sum(_tf.pow(1.0 - output, gamma) * alpha * cce, axis=axis)


def sparse_categorical_crossentropy(target: Any, output: Any, from_logits: bool = False, axis: int = -1,
                                    ignore_class: int | None = None) -> Any:
    target = _tf.cast(_tf.convert_to_tensor(target), "int64")
    output = _tf.convert_to_tensor(output)
    if not from_logits:
        eps = _tf.constant(epsilon(), output.dtype)
        output = _tf.math.log(_tf.clip_by_value(output, eps, 1 - eps))
    rank = output.shape.rank
    if rank is not None:
        axis %= rank
        if axis != rank - 1:
            output = _tf.transpose(output, [*range(axis), *range(axis + 1, rank), axis])
    elif axis != -1:
        raise ValueError(f"Cannot compute sparse categorical crossentropy with `axis={axis}` on an output tensor "
                         "with unknown rank")
    out_shape = _tf.shape(output)
    reshaped = target.shape.rank is not None and rank is not None and target.shape.rank != rank - 1
    if reshaped:
        target = _tf.reshape(target, [-1])
        output = _tf.reshape(output, [-1, out_shape[-1]])
    if ignore_class is not None:
        valid = _tf.not_equal(target, _tf.cast(ignore_class, target.dtype))
        res = _tf.nn.sparse_softmax_cross_entropy_with_logits(labels=target[valid], logits=output[valid])
        res_shape = _tf.cast(out_shape[:-1], "int64")
        valid = _tf.reshape(valid, res_shape)
        res = _tf.scatter_nd(_tf.where(valid), res, res_shape)
        res._keras_mask = valid
        return res
    res = _tf.nn.sparse_softmax_cross_entropy_with_logits(labels=target, logits=output)
    if reshaped and rank >= 3:
        res = _tf.reshape(res, out_shape[:-1])
    return res


def _tf_format(data_format: str, rank: int) -> str:
    """TF's name of the layout ``data_format`` means for a tensor of ``rank`` (the kernels take either)."""
    return {3: ("NWC", "NCW"), 4: ("NHWC", "NCHW"), 5: ("NDHWC", "NCDHW")}[rank][data_format == "channels_first"]


def conv1d(x: Any, kernel: Any, strides: int = 1, padding: str = "valid", data_format: str | None = None,
           dilation_rate: int = 1) -> Any:
    data_format = _data_format(data_format)
    kernel = _tf.convert_to_tensor(kernel)
    if padding == "causal":
        x = temporal_padding(x, (dilation_rate * (kernel.shape[0] - 1), 0))
        padding = "valid"
    return _tf.nn.convolution(x, kernel, strides=strides, padding=_padding_name(padding),
                              data_format=_tf_format(data_format, 3), dilations=dilation_rate)


def conv2d(x: Any, kernel: Any, strides: tuple = (1, 1), padding: str = "valid", data_format: str | None = None,
           dilation_rate: tuple = (1, 1)) -> Any:
    data_format = _data_format(data_format)
    return _tf.nn.convolution(x, kernel, strides=strides, padding=_padding_name(padding),
                              data_format=_tf_format(data_format, 4), dilations=dilation_rate)


def conv3d(x: Any, kernel: Any, strides: tuple = (1, 1, 1), padding: str = "valid", data_format: str | None = None,
           dilation_rate: tuple = (1, 1, 1)) -> Any:
    data_format = _data_format(data_format)
    return _tf.nn.convolution(x, kernel, strides=strides, padding=_padding_name(padding),
                              data_format=_tf_format(data_format, 5), dilations=dilation_rate)


def conv2d_transpose(x: Any, kernel: Any, output_shape: Any, strides: tuple = (1, 1), padding: str = "valid",
                     data_format: str | None = None, dilation_rate: tuple = (1, 1)) -> Any:
    data_format = _data_format(data_format)
    x = _tf.convert_to_tensor(x)
    output_shape = list(output_shape) if isinstance(output_shape, (tuple, list)) else output_shape
    if isinstance(output_shape, list) and output_shape[0] is None:
        output_shape = [_tf.shape(x)[0]] + output_shape[1:]
    if isinstance(output_shape, list):
        output_shape = _tf.stack(output_shape)
    padding = _padding_name(padding)
    if tuple(dilation_rate) == (1, 1):
        fmt = _tf_format(data_format, 4)
        full = (1,) + tuple(strides) + (1,) if fmt == "NHWC" else (1, 1) + tuple(strides)
        return _tf.nn.conv2d_transpose(x, kernel, output_shape, full, padding=padding, data_format=fmt)
    if dilation_rate[0] != dilation_rate[1]:
        raise ValueError(f"Expected the 2 dimensions of the `dilation_rate` argument to be equal to each other. "
                         f"Received: dilation_rate={dilation_rate}")
    if data_format == "channels_first":  # the atrous transpose is NHWC only
        x = _tf.transpose(x, (0, 2, 3, 1))
        output_shape = _tf.gather(output_shape, [0, 2, 3, 1])
    y = _tf.nn.conv2d_transpose(x, kernel, output_shape, 1, padding=padding, dilations=dilation_rate[0])
    return _tf.transpose(y, (0, 3, 1, 2)) if data_format == "channels_first" else y


def depthwise_conv2d(x: Any, depthwise_kernel: Any, strides: tuple = (1, 1), padding: str = "valid",
                     data_format: str | None = None, dilation_rate: tuple = (1, 1)) -> Any:
    data_format = _data_format(data_format)
    fmt = _tf_format(data_format, 4)
    full = (1,) + tuple(strides) + (1,) if fmt == "NHWC" else (1, 1) + tuple(strides)
    return _tf.nn.depthwise_conv2d(x, depthwise_kernel, strides=full, padding=_padding_name(padding),
                                   dilations=dilation_rate, data_format=fmt)


def separable_conv2d(x: Any, depthwise_kernel: Any, pointwise_kernel: Any, strides: tuple = (1, 1),
                     padding: str = "valid", data_format: str | None = None, dilation_rate: tuple = (1, 1)) -> Any:
    data_format = _data_format(data_format)
    if len(strides) != 2:
        raise ValueError("`strides` must be a tuple of 2 integers.")
    fmt = _tf_format(data_format, 4)
    full = (1,) + tuple(strides) + (1,) if fmt == "NHWC" else (1, 1) + tuple(strides)
    return _tf.nn.separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=full,
                                   padding=_padding_name(padding), dilations=dilation_rate, data_format=fmt)


def _pool(x: Any, pool_size: tuple, strides: tuple, padding: str, data_format: str | None, pool_mode: str,
          rank: int) -> Any:
    data_format = _data_format(data_format)
    fmt = _tf_format(data_format, rank)
    if fmt.endswith("C"):
        window, step = (1,) + tuple(pool_size) + (1,), (1,) + tuple(strides) + (1,)
    else:
        window, step = (1, 1) + tuple(pool_size), (1, 1) + tuple(strides)
    if pool_mode == "max":
        fn = _tf.nn.max_pool2d if rank == 4 else _tf.nn.max_pool3d
    elif pool_mode == "avg":
        fn = _tf.nn.avg_pool2d if rank == 4 else _tf.nn.avg_pool3d
    else:
        raise ValueError("Invalid pooling mode: " + str(pool_mode))
    return fn(x, window, step, padding=_padding_name(padding), data_format=fmt)


def pool2d(x: Any, pool_size: tuple, strides: tuple = (1, 1), padding: str = "valid", data_format: str | None = None,
           pool_mode: str = "max") -> Any:
    if len(pool_size) != 2:
        raise ValueError("`pool_size` must be a tuple of 2 integers.")
    if len(strides) != 2:
        raise ValueError("`strides` must be a tuple of 2 integers.")
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 4)


def pool3d(x: Any, pool_size: tuple, strides: tuple = (1, 1, 1), padding: str = "valid",
           data_format: str | None = None, pool_mode: str = "max") -> Any:
    return _pool(x, pool_size, strides, padding, data_format, pool_mode, 5)


def spatial_3d_padding(x: Any, padding: tuple = ((1, 1), (1, 1), (1, 1)), data_format: str | None = None) -> Any:
    if len(padding) != 3 or _builtins.any(len(p) != 2 for p in padding):
        raise ValueError(f"Expected `padding` to be a tuple of 3 tuples of 2 integers. Received: padding={padding}")
    data_format = _data_format(data_format)
    pads = [list(p) for p in padding]
    return _tf.pad(x, [[0, 0], [0, 0], *pads] if data_format == "channels_first" else [[0, 0], *pads, [0, 0]])


_RESIZE_METHODS = ("area", "bicubic", "bilinear", "gaussian", "lanczos3", "lanczos5", "mitchellcubic", "nearest")


def resize_images(x: Any, height_factor: int, width_factor: int, data_format: str,
                  interpolation: str = "nearest") -> Any:
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Invalid `data_format` argument: {data_format}")
    if interpolation not in _RESIZE_METHODS:
        names = '"' + '", "'.join(_RESIZE_METHODS) + '"'
        raise ValueError(f'`interpolation` argument should be one of: {names}. Received: "{interpolation}".')
    x = _tf.convert_to_tensor(x)
    rows = 2 if data_format == "channels_first" else 1
    hw = x.shape[rows:rows + 2]
    size = (_tf.constant(hw.as_list(), "int32") if hw.is_fully_defined() else _tf.shape(x)[rows:rows + 2])
    size = size * _tf.constant(np.array([height_factor, width_factor], dtype="int32"))
    if data_format == "channels_first":
        x = _tf.transpose(x, [0, 2, 3, 1])
    y = _tf.image.resize(x, size, method=interpolation)
    return _tf.transpose(y, [0, 3, 1, 2]) if data_format == "channels_first" else y


def resize_volumes(x: Any, depth_factor: int, height_factor: int, width_factor: int, data_format: str) -> Any:
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Invalid data_format: {data_format}")
    first = 2 if data_format == "channels_first" else 1
    for i, factor in enumerate((depth_factor, height_factor, width_factor)):
        x = repeat_elements(x, factor, axis=first + i)
    return x


def dropout(x: Any, level: float, noise_shape: Any = None, seed: Any = None) -> Any:
    return _tf.nn.dropout(x, rate=level, noise_shape=noise_shape, seed=_seed(seed))


def _random_variable(init: Any, shape: Any, dtype: Any, name: str | None) -> Any:
    return variable(init(shape, dtype=_dtypes.as_dtype(dtype or floatx())), dtype=dtype, name=name)


def random_normal_variable(shape: Any, mean: float, scale: float, dtype: Any = None, name: str | None = None,
                           seed: Any = None) -> Any:
    seed = int(np.random.randint(10e8)) if seed is None else seed
    return _random_variable(_tf.random_normal_initializer(mean, scale, seed=seed), shape, dtype, name)


def random_uniform_variable(shape: Any, low: float, high: float, dtype: Any = None, name: str | None = None,
                            seed: Any = None) -> Any:
    seed = int(np.random.randint(10e8)) if seed is None else seed
    return _random_variable(_tf.random_uniform_initializer(low, high, seed=seed), shape, dtype, name)


def moving_average_update(x: Any, value: Any, momentum: float) -> Any:
    momentum = _tf.cast(momentum, x.dtype)
    value = _tf.cast(value, x.dtype)
    return x.assign_sub((x - value) * (1 - momentum))


def gradients(loss: Any, variables: Any) -> Any:
    """``tf.gradients`` (graph mode only, as in Keras: eager programs use a GradientTape)."""
    return _tf.gradients(loss, variables)


def foldl(fn: Any, elems: Any, initializer: Any = None, name: str | None = None) -> Any:
    return _tf.foldl(fn, elems, initializer=initializer, name=name)


def foldr(fn: Any, elems: Any, initializer: Any = None, name: str | None = None) -> Any:
    return _tf.foldr(fn, elems, initializer=initializer, name=name)


def map_fn(fn: Any, elems: Any, name: str | None = None, dtype: Any = None) -> Any:
    return _tf.map_fn(fn, elems, name=name, fn_output_signature=dtype)


def switch(condition: Any, then_expression: Any, else_expression: Any) -> Any:
    """``then_expression`` where ``condition`` holds, else ``else_expression``: a ``cond`` for a scalar condition
    (callables are called in their branch), else an elementwise ``where`` broadcasting the condition."""
    condition = _tf.convert_to_tensor(condition)
    if condition.dtype != _dtypes.bool:
        condition = _tf.cast(condition, "bool")
    cond_ndim = ndim(condition)
    if not cond_ndim:
        then_fn = then_expression if callable(then_expression) else (lambda: then_expression)
        else_fn = else_expression if callable(else_expression) else (lambda: else_expression)
        return _tf.cond(condition, then_fn, else_fn)
    then_expression = then_expression() if callable(then_expression) else then_expression
    else_expression = else_expression() if callable(else_expression) else else_expression
    expr_ndim = ndim(_tf.convert_to_tensor(then_expression))
    if cond_ndim > expr_ndim:
        raise ValueError(f"Rank of `condition` should be less than or equal to rank of `then_expression` and "
                         f"`else_expression`. ndim(condition)={cond_ndim}, ndim(then_expression)={expr_ndim}")
    if cond_ndim > 1:
        cond_shape = _tf.concat([_tf.shape(condition), [1] * (expr_ndim - cond_ndim)], axis=0)
        condition = _tf.reshape(condition, cond_shape)
        expr_shape = _tf.shape(then_expression)
        condition = _tf.tile(condition, _tf.where(expr_shape - cond_shape > 0, expr_shape, _tf.ones_like(expr_shape)))
    return _tf.where(condition, then_expression, else_expression)


# -- CTC ----------------------------------------------------------------------------------------------------
def ctc_label_dense_to_sparse(labels: Any, label_lengths: Any) -> Any:
    """The first ``label_lengths[i]`` labels of each row of the dense ``labels`` as a SparseTensor."""
    labels = _tf.convert_to_tensor(labels)
    shape = _tf.shape(labels)
    mask = _tf.sequence_mask(label_lengths, shape[1])
    indices = _tf.where(mask)
    return _tf.SparseTensor(indices, _tf.gather_nd(labels, indices), _tf.cast(shape, "int64"))


def ctc_batch_cost(y_true: Any, y_pred: Any, input_length: Any, label_length: Any) -> Any:
    """Per-sample CTC loss, shape (batch, 1), of softmax outputs ``y_pred`` (batch, time, classes; the blank is
    the last class) against dense labels ``y_true``; lengths have shape (batch, 1)."""
    label_length = _tf.cast(_tf.squeeze(label_length, axis=-1), "int32")
    input_length = _tf.cast(_tf.squeeze(input_length, axis=-1), "int32")
    sparse = ctc_label_dense_to_sparse(y_true, label_length)
    sparse = _tf.SparseTensor(sparse.indices, _tf.cast(sparse.values, "int32"), sparse.dense_shape)
    logits = _tf.math.log(_tf.transpose(y_pred, perm=[1, 0, 2]) + epsilon())
    loss = _tf.nn.ctc_loss(labels=sparse, logits=logits, label_length=None, logit_length=input_length,
                           logits_time_major=True, blank_index=-1)
    return _tf.expand_dims(loss, 1)


def ctc_decode(y_pred: Any, input_length: Any, greedy: bool = True, beam_width: int = 100, top_paths: int = 1) -> Any:
    """Decoded label sequences (dense, -1 padded, shape (batch, time)) and their log probabilities."""
    y_pred = _tf.convert_to_tensor(y_pred)
    shape = _tf.shape(y_pred)
    logits = _tf.math.log(_tf.transpose(y_pred, perm=[1, 0, 2]) + epsilon())
    input_length = _tf.cast(input_length, "int32")
    if greedy:
        decoded, log_prob = _tf.nn.ctc_greedy_decoder(inputs=logits, sequence_length=input_length)
    else:
        decoded, log_prob = _tf.nn.ctc_beam_search_decoder(inputs=logits, sequence_length=input_length,
                                                           beam_width=beam_width, top_paths=top_paths)
    dense_shape = _tf.cast(_tf.stack([shape[0], shape[1]]), "int64")
    dense = [_tf.sparse.to_dense(_tf.SparseTensor(st.indices, st.values, dense_shape), default_value=-1)
             for st in decoded]
    return dense, log_prob


# -- rnn ------------------------------------------------------------------------------------------------------
def rnn(step_function: Any, inputs: Any, initial_states: Any, go_backwards: bool = False, mask: Any = None,
        constants: Any = None, unroll: bool = False, input_length: Any = None, time_major: bool = False,
        zero_output_for_mask: bool = False, return_all_outputs: bool = True) -> tuple:
    """Iterates ``step_function(inputs_t, states + constants) -> (output_t, new_states)`` over the time axis of
    ``inputs`` (axis 1, or 0 when ``time_major``): returns ``(last_output, outputs, new_states)``. Where ``mask``
    (batch, time) is False a step keeps the previous output (zeros with ``zero_output_for_mask``) and states.
    The loop runs step by step in Python, in eager code and while tracing alike (the same numbers as Keras's
    while_loop); the number of time steps must be known."""
    nest = _tf.nest

    def swap(t: Any) -> Any:
        perm = list(range(t.shape.rank))
        perm[0], perm[1] = 1, 0
        return _tf.transpose(t, perm)

    inputs = nest.map_structure(_tf.convert_to_tensor, inputs)
    if not time_major:
        inputs = nest.map_structure(swap, inputs)
    flat = nest.flatten(inputs)
    for t in flat:
        t.shape.with_rank_at_least(3)
    steps = flat[0].shape[0]
    if steps is None:
        raise NotImplementedError("tf.keras.backend.rnn over an unknown number of time steps is not implemented "
                                  "in tapeflow: give the inputs a static time dimension")
    if mask is not None:
        mask = _tf.convert_to_tensor(mask)
        if mask.dtype != _dtypes.bool:
            mask = _tf.cast(mask, "bool")
        if mask.shape.rank == 2:
            mask = _tf.expand_dims(mask, -1)
        if not time_major:
            mask = swap(mask)
        masks = _tf.unstack(mask)
    elif not unroll and isinstance(input_length, _tf.Tensor):  # Keras's while_loop masks by the lengths
        lengths = input_length
        if go_backwards:
            rev = _tf.reduce_max(lengths, axis=0) - 1 - lengths
            masks = [_tf.less(rev, t) for t in range(steps)]
        else:
            masks = [_tf.greater(lengths, t) for t in range(steps)]
    else:
        masks = None
    order = range(steps - 1, -1, -1) if go_backwards else range(steps)
    slices = [_tf.unstack(t) for t in flat]
    constants = tuple(constants or ())

    def where(m: Any, new: Any, old: Any) -> Any:
        m = _tf.convert_to_tensor(m)
        for _ in range(new.shape.rank - m.shape.rank):
            m = _tf.expand_dims(m, -1)
        return _tf.where(_tf.broadcast_to(m, _tf.shape(new)), new, old)

    states = tuple(initial_states)
    outputs: list = []
    prev = None
    for k, t in enumerate(order):
        step_in = nest.pack_sequence_as(inputs, [s[t] for s in slices])
        output, new_states = step_function(step_in, states + constants)
        flat_out = nest.flatten(output)
        if masks is not None:
            m = masks[t] if mask is not None else masks[k]  # (Keras's length masks count iterations)
            if prev is None or zero_output_for_mask:
                base = [_tf.zeros_like(o) for o in flat_out]
            else:
                base = prev
            flat_out = [where(m, o, b) for o, b in zip(flat_out, base)]
            flat_new = [where(m, s, ps) for s, ps in zip(nest.flatten(new_states), nest.flatten(states))]
            new_states = nest.pack_sequence_as(states, flat_new)
        prev = flat_out
        if return_all_outputs or k == steps - 1:
            outputs.append(flat_out)
        states = tuple(new_states) if isinstance(new_states, (list, tuple)) else (new_states,)
    stacked = [_tf.stack(list(col)) for col in zip(*outputs)]
    last = [s[-1] for s in stacked]
    if not time_major:
        stacked = [swap(s) for s in stacked]
    template = output
    return nest.pack_sequence_as(template, last), nest.pack_sequence_as(template, stacked), states
