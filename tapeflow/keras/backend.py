"""``tf.keras.backend``: Keras 3's configuration functions and the legacy tf.keras backend helpers
(thin wrappers over the TF API, with Keras's defaults: ``floatx()`` dtypes, variables for ``zeros``/``ones``/
``eye``, ``axis=-1`` for ``argmax`` ...)."""

from __future__ import annotations

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
