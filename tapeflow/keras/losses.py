"""``tf.keras.losses``: loss classes and functions with Keras 3's semantics.

Functions return one loss per sample (the mean over the last axis where Keras
does so); classes add ``sample_weight`` and a reduction: ``"sum_over_batch_size"``
(default: sum of weighted losses / number of losses), ``"sum"``, ``"mean"``,
``"mean_with_sample_weight"`` (divide by the sum of weights) or ``None``/``"none"``.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

import numpy as np

from tapeflow.framework import distribution_hooks as dist_hooks
from tapeflow.framework import dtypes
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.framework.variables import Variable
from tapeflow import nn
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo

__all__ = [
    "Loss", "LossFunctionWrapper", "MeanSquaredError", "MeanAbsoluteError", "Huber", "BinaryCrossentropy",
    "CategoricalCrossentropy", "SparseCategoricalCrossentropy", "mean_squared_error", "mean_absolute_error", "huber",
    "binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy", "get",
    "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError", "KLDivergence", "Poisson", "LogCosh", "Hinge",
    "SquaredHinge", "CategoricalHinge", "CosineSimilarity", "mean_absolute_percentage_error",
    "mean_squared_logarithmic_error", "kl_divergence", "poisson", "log_cosh", "hinge", "squared_hinge",
    "categorical_hinge", "cosine_similarity", "Reduction", "BinaryFocalCrossentropy", "CategoricalFocalCrossentropy",
    "Dice", "Tversky", "CategoricalGeneralizedCrossEntropy", "binary_focal_crossentropy",
    "categorical_focal_crossentropy", "dice", "tversky", "categorical_generalized_cross_entropy", "serialize",
    "deserialize",
]

EPSILON = 1e-7  # keras.backend.epsilon()
_REDUCTIONS = ("sum", "sum_over_batch_size", "mean", "mean_with_sample_weight", "none", None)


class Reduction:
    """Keras 3's legacy ``tf.keras.losses.Reduction`` names (strings a loss's ``reduction=`` takes; ``AUTO``
    is listed, as there, but a loss refuses it, as Keras 3 does)."""

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls) -> tuple:
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key: str) -> None:
        if key not in cls.all():
            raise ValueError(f'Invalid Reduction Key: {key}. Expected keys are "{cls.all()}"')


def _t(x: Any, dtype: Any = None) -> Tensor:
    if isinstance(x, Variable):
        x = x.value()
    if not isinstance(x, Tensor):
        if isinstance(x, (list, tuple)):
            arr = np.asarray(x)
            # a Python list of floats is float32, as TF's convert_to_tensor makes it
            x = arr.astype(np.float32) if arr.dtype == np.float64 and _plain_floats(x) else arr
        x = convert_to_tensor(x)
    if dtype is not None and x.dtype != dtype:
        x = mo.cast(x, dtype)
    return x


def _plain_floats(x: Any) -> bool:
    if isinstance(x, (list, tuple)):
        return all(_plain_floats(e) for e in x)
    return isinstance(x, (float, int))


def _prepare(y_true: Any, y_pred: Any) -> tuple[Tensor, Tensor]:
    y_pred = _t(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = mo.cast(y_pred, dtypes.float32)
    return _t(y_true, y_pred.dtype), y_pred


def _match_rank(y_true: Tensor, y_pred: Tensor) -> Tensor:
    # Keras squeezes or expands the label's last axis to match predictions.
    rt, rp = len(y_true._shape_tuple()), len(y_pred._shape_tuple())
    if rt == rp + 1 and y_true._shape_tuple()[-1] == 1:
        return ao.squeeze(y_true, [-1])
    if rp == rt + 1 and y_pred._shape_tuple()[-1] == 1:
        return ao.expand_dims(y_true, -1)
    return y_true


def _check_shapes(name: str, y_true: Tensor, y_pred: Tensor) -> None:
    a, b = y_true._shape_tuple(), y_pred._shape_tuple()
    if len(a) == len(b) and any(x is not None and y is not None and x != y and 1 not in (x, y)
                                for x, y in zip(a, b)):
        raise ValueError(f"{name}: `y_true` and `y_pred` must have compatible shapes, got "
                         f"y_true.shape={a} and y_pred.shape={b}.")


# ----------------------------------------------------------------------------
# Per-sample loss functions
# ----------------------------------------------------------------------------

def mean_squared_error(y_true: Any, y_pred: Any) -> Tensor:
    """mean((y_true - y_pred)**2, axis=-1)."""
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true = _match_rank(y_true, y_pred)
    _check_shapes("mean_squared_error", y_true, y_pred)
    return mo.reduce_mean(mo.squared_difference(y_true, y_pred), axis=-1)


def mean_absolute_error(y_true: Any, y_pred: Any) -> Tensor:
    """mean(|y_true - y_pred|, axis=-1)."""
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true = _match_rank(y_true, y_pred)
    _check_shapes("mean_absolute_error", y_true, y_pred)
    return mo.reduce_mean(mo.abs(y_true - y_pred), axis=-1)


def huber(y_true: Any, y_pred: Any, delta: float = 1.0) -> Tensor:
    """0.5*e**2 for |e| <= delta, else delta*|e| - 0.5*delta**2; mean over the last axis."""
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true = _match_rank(y_true, y_pred)
    _check_shapes("huber", y_true, y_pred)
    err = y_pred - y_true
    abs_err = mo.abs(err)
    quad = 0.5 * err * err
    lin = delta * abs_err - 0.5 * delta * delta
    return mo.reduce_mean(mo.where(mo.less_equal(abs_err, delta), quad, lin), axis=-1)


def _bce_elementwise(target: Tensor, output: Tensor, from_logits: bool) -> Tensor:
    if from_logits:
        # max(x, 0) - x*z + log(1 + exp(-|x|)): TF's stable sigmoid cross-entropy
        return mo.relu(output) - output * target + mo.log1p(mo.exp(-mo.abs(output)))
    output = mo.clip_by_value(output, EPSILON, 1.0 - EPSILON)
    return -(target * mo.log(output) + (1.0 - target) * mo.log(1.0 - output))


def binary_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False, label_smoothing: float = 0.0,
                        axis: int = -1) -> Tensor:
    """Binary cross-entropy, mean over ``axis``."""
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true = _match_rank(y_true, y_pred)
    _check_shapes("binary_crossentropy", y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return mo.reduce_mean(_bce_elementwise(y_true, y_pred, from_logits), axis=axis)


def categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False, label_smoothing: float = 0.0,
                             axis: int = -1) -> Tensor:
    """Cross-entropy between one-hot (or soft) labels and predictions."""
    y_true, y_pred = _prepare(y_true, y_pred)
    if y_true._shape_tuple() != y_pred._shape_tuple() and None not in y_true._shape_tuple() + y_pred._shape_tuple():
        raise ValueError(
            f"Arguments `target` and `output` must have the same shape. Received: target.shape="
            f"{y_true._shape_tuple()}, output.shape={y_pred._shape_tuple()}. For integer labels use "
            f"sparse_categorical_crossentropy."
        )
    if label_smoothing:
        n = y_pred._shape_tuple()[axis]
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / n
    if from_logits:
        return nn.softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred, axis=axis)
    out = y_pred / mo.reduce_sum(y_pred, axis=axis, keepdims=True)
    out = mo.clip_by_value(out, EPSILON, 1.0 - EPSILON)
    return -mo.reduce_sum(y_true * mo.log(out), axis=axis)


def sparse_categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False, ignore_class: Any = None,
                                    axis: int = -1) -> Tensor:
    """Cross-entropy with integer class labels."""
    y_pred = _t(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = mo.cast(y_pred, dtypes.float32)
    y_true = _t(y_true)
    if axis not in (-1, len(y_pred._shape_tuple()) - 1):
        raise NotImplementedError("sparse_categorical_crossentropy: only axis=-1 is supported")
    pshape, tshape = y_pred._shape_tuple(), y_true._shape_tuple()
    if len(tshape) == len(pshape) and tshape[-1] == 1:
        y_true = ao.squeeze(y_true, [-1])
        tshape = tshape[:-1]
    if len(tshape) != len(pshape) - 1:
        raise ValueError(
            f"Argument `output` must have rank (ndim) `target.ndim - 1`. Received: target.shape={tshape}, "
            f"output.shape={pshape}"
        )
    labels = mo.cast(y_true, dtypes.int32) if y_true.dtype != dtypes.int32 else y_true
    depth = pshape[-1]
    if ignore_class is not None:
        valid = mo.not_equal(labels, ignore_class)
        labels = mo.where(valid, labels, mo.zeros_like_(labels))
    del depth
    # Keras feeds log(clip(p)) to the softmax cross-entropy when given probabilities
    logits = y_pred if from_logits else mo.log(mo.clip_by_value(y_pred, EPSILON, 1.0 - EPSILON))
    loss = nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    if ignore_class is not None:
        loss = loss * mo.cast(valid, loss.dtype)
    return loss


def _pair(name: str, y_true: Any, y_pred: Any) -> tuple[Tensor, Tensor]:
    y_true, y_pred = _prepare(y_true, y_pred)
    y_true = _match_rank(y_true, y_pred)
    _check_shapes(name, y_true, y_pred)
    return y_true, y_pred


def mean_absolute_percentage_error(y_true: Any, y_pred: Any) -> Tensor:
    """100 * mean(|(y_true - y_pred) / max(|y_true|, 1e-7)|, axis=-1)."""
    y_true, y_pred = _pair("mean_absolute_percentage_error", y_true, y_pred)
    return 100.0 * mo.reduce_mean(mo.abs((y_true - y_pred) / mo.maximum(mo.abs(y_true), EPSILON)), axis=-1)


def mean_squared_logarithmic_error(y_true: Any, y_pred: Any) -> Tensor:
    """mean((log(max(y_pred, 1e-7) + 1) - log(max(y_true, 1e-7) + 1))**2, axis=-1)."""
    y_true, y_pred = _pair("mean_squared_logarithmic_error", y_true, y_pred)
    first = mo.log(mo.maximum(y_pred, EPSILON) + 1.0)
    second = mo.log(mo.maximum(y_true, EPSILON) + 1.0)
    return mo.reduce_mean(mo.square(first - second), axis=-1)


def kl_divergence(y_true: Any, y_pred: Any) -> Tensor:
    """sum(y_true * log(y_true / y_pred), axis=-1), both clipped to [1e-7, 1]."""
    y_true, y_pred = _pair("kl_divergence", y_true, y_pred)
    y_true = mo.clip_by_value(y_true, EPSILON, 1.0)
    y_pred = mo.clip_by_value(y_pred, EPSILON, 1.0)
    return mo.reduce_sum(y_true * mo.log(y_true / y_pred), axis=-1)


def poisson(y_true: Any, y_pred: Any) -> Tensor:
    """mean(y_pred - y_true * log(y_pred + 1e-7), axis=-1)."""
    y_true, y_pred = _pair("poisson", y_true, y_pred)
    return mo.reduce_mean(y_pred - y_true * mo.log(y_pred + EPSILON), axis=-1)


def log_cosh(y_true: Any, y_pred: Any) -> Tensor:
    """mean(log(cosh(y_pred - y_true)), axis=-1), computed as x + softplus(-2x) - log(2)."""
    y_true, y_pred = _pair("log_cosh", y_true, y_pred)
    x = y_pred - y_true
    return mo.reduce_mean(x + nn.softplus(x * -2.0) - float(np.log(2.0)), axis=-1)


def _hinge_labels(y_true: Tensor) -> Tensor:
    # {0, 1} labels become {-1, 1} (Keras' convert_binary_labels_to_hinge); others are kept
    is_binary = mo.reduce_all(mo.logical_or(mo.equal(y_true, 0.0), mo.equal(y_true, 1.0)))
    return mo.where(is_binary, 2.0 * y_true - 1.0, y_true)  # graph-safe (a tensor condition)


def hinge(y_true: Any, y_pred: Any) -> Tensor:
    """mean(max(1 - y_true * y_pred, 0), axis=-1); {0, 1} labels are mapped to {-1, 1}."""
    y_true, y_pred = _pair("hinge", y_true, y_pred)
    return mo.reduce_mean(mo.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0), axis=-1)


def squared_hinge(y_true: Any, y_pred: Any) -> Tensor:
    """mean(max(1 - y_true * y_pred, 0)**2, axis=-1); {0, 1} labels are mapped to {-1, 1}."""
    y_true, y_pred = _pair("squared_hinge", y_true, y_pred)
    return mo.reduce_mean(mo.square(mo.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0)), axis=-1)


def categorical_hinge(y_true: Any, y_pred: Any) -> Tensor:
    """max(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0) over the last axis."""
    y_true, y_pred = _pair("categorical_hinge", y_true, y_pred)
    pos = mo.reduce_sum(y_true * y_pred, axis=-1)
    neg = mo.reduce_max((1.0 - y_true) * y_pred, axis=-1)
    return mo.maximum(neg - pos + 1.0, 0.0)


def _l2_normalize(x: Tensor, axis: int) -> Tensor:
    inv = mo.rsqrt(mo.reduce_sum(mo.square(x), axis=axis, keepdims=True))
    return x * mo.minimum(inv, 1.0 / EPSILON)


def cosine_similarity(y_true: Any, y_pred: Any, axis: int = -1) -> Tensor:
    """-sum(l2_normalize(y_true) * l2_normalize(y_pred), axis)."""
    y_true, y_pred = _pair("cosine_similarity", y_true, y_pred)
    return -mo.reduce_sum(_l2_normalize(y_true, axis) * _l2_normalize(y_pred, axis), axis=axis)


def binary_focal_crossentropy(y_true: Any, y_pred: Any, apply_class_balancing: bool = False, alpha: float = 0.25,
                              gamma: float = 2.0, from_logits: bool = False, label_smoothing: float = 0.0,
                              axis: int = -1) -> Tensor:
    """Binary cross-entropy times the focal factor ``(1 - p_t) ** gamma`` (Lin et al. 2018), optionally
    weighted by ``alpha`` for class 1 and ``1 - alpha`` for class 0; mean over ``axis``."""
    y_true, y_pred = _prepare(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        y_pred = mo.sigmoid(y_pred)
    bce = _bce_elementwise(y_true, y_pred, False)
    p_t = y_true * y_pred + (1.0 - y_true) * (1.0 - y_pred)
    focal = mo.pow(1.0 - p_t, gamma) * bce
    if apply_class_balancing:
        focal = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * focal
    return mo.reduce_mean(focal, axis=axis)


def categorical_focal_crossentropy(y_true: Any, y_pred: Any, alpha: float = 0.25, gamma: float = 2.0,
                                   from_logits: bool = False, label_smoothing: float = 0.0,
                                   axis: int = -1) -> Tensor:
    """Categorical cross-entropy with each class's term scaled by ``alpha * (1 - p) ** gamma``."""
    if isinstance(axis, bool):
        raise ValueError(f"`axis` must be of type `int`. Received: axis={axis} of type {type(axis)}")
    y_true, y_pred = _prepare(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_true._shape_tuple()[-1]
    if from_logits:
        y_pred = nn.softmax(y_pred, axis=axis)
    out = y_pred / mo.reduce_sum(y_pred, axis=axis, keepdims=True)
    out = mo.clip_by_value(out, EPSILON, 1.0 - EPSILON)
    return mo.reduce_sum(mo.pow(1.0 - out, gamma) * alpha * (-y_true * mo.log(out)), axis=axis)


def dice(y_true: Any, y_pred: Any, axis: Any = None) -> Tensor:
    """1 - 2 * sum(y_true * y_pred) / (sum(y_true) + sum(y_pred) + 1e-7), the sums over ``axis`` (all by default)."""
    y_true, y_pred = _prepare(y_true, y_pred)
    inter = mo.reduce_sum(y_true * y_pred, axis=axis)
    return 1.0 - 2.0 * inter / (mo.reduce_sum(y_true, axis=axis) + mo.reduce_sum(y_pred, axis=axis) + EPSILON)


def tversky(y_true: Any, y_pred: Any, alpha: float = 0.5, beta: float = 0.5, axis: Any = None) -> Tensor:
    """1 - tp / (tp + alpha * fp + beta * fn + 1e-7), with Keras' soft counts over ``axis`` (all by default)."""
    y_true, y_pred = _prepare(y_true, y_pred)
    inter = mo.reduce_sum(y_true * y_pred, axis=axis)
    fp = mo.reduce_sum((1.0 - y_pred) * y_true, axis=axis)  # Keras' own naming: y_true outside the prediction
    fn = mo.reduce_sum(y_pred * (1.0 - y_true), axis=axis)
    return 1.0 - inter / (inter + fp * alpha + fn * beta + EPSILON)


def categorical_generalized_cross_entropy(y_true: Any, y_pred: Any, q: float) -> Tensor:
    """(1 - p ** q) / q, ``p`` the predicted probability of the integer label (Zhang & Sabuncu 2018)."""
    y_pred = _t(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = mo.cast(y_pred, dtypes.float32)
    labels = mo.cast(_t(y_true), dtypes.int32)
    from tapeflow.ops import indexing_ops

    onehot = indexing_ops.one_hot(labels, y_pred._shape_tuple()[-1], dtype=y_pred.dtype)
    p = mo.reduce_sum(y_pred * onehot, axis=-1)
    return (1.0 - mo.pow(p, q)) / q


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh


# ----------------------------------------------------------------------------
# Loss classes
# ----------------------------------------------------------------------------

def reduce_weighted_values(values: Tensor, sample_weight: Any, reduction: Any) -> Tensor:
    """Weights per-sample losses and reduces them as Keras 3 does."""
    if sample_weight is not None:
        sw = _t(sample_weight, values.dtype)
        rv, rw = len(values._shape_tuple()), len(sw._shape_tuple())
        if rw == rv + 1 and sw._shape_tuple()[-1] == 1:
            sw = ao.squeeze(sw, [-1])
        while 0 < len(sw._shape_tuple()) < rv:
            sw = ao.expand_dims(sw, -1)
        sw = sw * mo.ones_like_(values)  # broadcast, so a weight sum counts every loss
        values = values * sw
    if reduction is None or reduction == "none":
        return values
    total = mo.reduce_sum(values)
    if reduction == "sum":
        return total
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        divisor = mo.reduce_sum(sw)
    else:
        n = values._shape_tuple()
        divisor = float(np.prod(n)) if None not in n else mo.cast(ao.size_(values), values.dtype)
    if isinstance(divisor, float):
        loss = total / divisor if divisor else total * 0.0
    else:
        loss = mo.where(mo.equal(divisor, 0.0), mo.zeros_like_(total), total / divisor)
    if dist_hooks.strategy is not None:
        loss = scale_loss_for_distribution(loss)
    return loss


def scale_loss_for_distribution(value: Tensor) -> Tensor:
    """Under a multi-process strategy (inside its scope or ``run``): ``value`` times this replica's share
    of the global batch, so that the gradients summed over replicas are the global batch's (Keras 3
    scales by ``1 / num_replicas_in_sync``; the share is exact for uneven batches too). Else ``value``."""
    strategy = dist_hooks.strategy
    if strategy is None:
        return value
    from tapeflow.distribute.strategies import get_strategy

    if get_strategy() is not strategy:
        return value
    return value * mo.cast(strategy._share.value(), value.dtype)


def unscale_loss_for_distribution(value: Tensor) -> Tensor:
    """The inverse of ``scale_loss_for_distribution`` (0 where this replica holds no examples)."""
    strategy = dist_hooks.strategy
    if strategy is None:
        return value
    from tapeflow.distribute.strategies import get_strategy

    if get_strategy() is not strategy:
        return value
    share = mo.cast(strategy._share.value(), value.dtype)
    return mo.where(mo.equal(share, 0.0), mo.zeros_like_(value), value / share)


class Loss:
    """Base class: ``loss(y_true, y_pred, sample_weight=None)`` reduces ``call``."""

    def __init__(self, name: str | None = None, reduction: Any = "sum_over_batch_size", dtype: Any = None) -> None:
        if reduction not in _REDUCTIONS:
            raise ValueError(f"Invalid value for argument `reduction`. Expected one of {_REDUCTIONS}. "
                             f"Received: reduction={reduction}")
        self.name = name or _snake(type(self).__name__)
        self.reduction = reduction
        self.dtype = dtype

    def call(self, y_true: Any, y_pred: Any) -> Tensor:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__}.call(y_true, y_pred) must be implemented")

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Tensor:
        # Keras 3 converts both to the loss's dtype (floatx, float32, unless given): float64 arrays and
        # Python lists give a float32 loss
        dtype = dtypes.as_dtype(getattr(self.dtype, "compute_dtype", self.dtype) or "float32")
        y_true, y_pred = _to_dtype(y_true, dtype), _to_dtype(y_pred, dtype)
        losses = self.call(y_true, y_pred)
        return reduce_weighted_values(losses, sample_weight, self.reduction)

    def get_config(self) -> dict:
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config: dict) -> Loss:
        return cls(**config)


def _to_dtype(x: Any, dtype: Any) -> Any:
    """``x`` converted to ``dtype`` where it is one tensor-like (structures of several are left to ``call``)."""
    if isinstance(x, dict) or isinstance(x, (list, tuple)) and any(isinstance(e, (Tensor, Variable, dict))
                                                                    for e in x):
        return x
    if isinstance(x, (list, tuple)) and np.asarray(x).dtype == object:
        return x
    return _t(x, dtype)


class LossFunctionWrapper(Loss):
    def __init__(self, fn: Callable, reduction: Any = "sum_over_batch_size", name: str | None = None,
                 dtype: Any = None, **kwargs: Any) -> None:
        super().__init__(name=name, reduction=reduction, dtype=dtype)
        self.fn, self._fn_kwargs = fn, kwargs

    def call(self, y_true: Any, y_pred: Any) -> Tensor:
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self) -> dict:
        return {**super().get_config(), **self._fn_kwargs}


class MeanSquaredError(LossFunctionWrapper):
    def __init__(self, reduction: Any = "sum_over_batch_size", name: str = "mean_squared_error",
                 dtype: Any = None) -> None:
        super().__init__(mean_squared_error, reduction=reduction, name=name, dtype=dtype)


class MeanAbsoluteError(LossFunctionWrapper):
    def __init__(self, reduction: Any = "sum_over_batch_size", name: str = "mean_absolute_error",
                 dtype: Any = None) -> None:
        super().__init__(mean_absolute_error, reduction=reduction, name=name, dtype=dtype)


class Huber(LossFunctionWrapper):
    def __init__(self, delta: float = 1.0, reduction: Any = "sum_over_batch_size", name: str = "huber_loss",
                 dtype: Any = None) -> None:
        super().__init__(huber, reduction=reduction, name=name, dtype=dtype, delta=delta)

    def get_config(self) -> dict:
        return Loss.get_config(self)  # Keras 3.15 writes no delta (from_config gives delta=1.0)


class BinaryCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1,
                 reduction: Any = "sum_over_batch_size", name: str = "binary_crossentropy",
                 dtype: Any = None) -> None:
        super().__init__(binary_crossentropy, reduction=reduction, name=name, dtype=dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)
        self.from_logits, self.label_smoothing = from_logits, label_smoothing


class CategoricalCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1,
                 reduction: Any = "sum_over_batch_size", name: str = "categorical_crossentropy",
                 dtype: Any = None) -> None:
        super().__init__(categorical_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits, self.label_smoothing = from_logits, label_smoothing


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    def __init__(self, from_logits: bool = False, ignore_class: Any = None, reduction: Any = "sum_over_batch_size",
                 name: str = "sparse_categorical_crossentropy", dtype: Any = None, axis: int = -1) -> None:
        super().__init__(sparse_categorical_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         from_logits=from_logits, ignore_class=ignore_class, axis=axis)
        self.from_logits = from_logits

    def get_config(self) -> dict:  # Keras 3.15 writes no axis
        return {k: v for k, v in super().get_config().items() if k != "axis"}


def _wrapper(fn: Callable, default_name: str) -> type:
    def init(self, reduction: Any = "sum_over_batch_size", name: str = default_name, dtype: Any = None) -> None:
        LossFunctionWrapper.__init__(self, fn, reduction=reduction, name=name, dtype=dtype)

    return init


class MeanAbsolutePercentageError(LossFunctionWrapper):
    __init__ = _wrapper(mean_absolute_percentage_error, "mean_absolute_percentage_error")


class MeanSquaredLogarithmicError(LossFunctionWrapper):
    __init__ = _wrapper(mean_squared_logarithmic_error, "mean_squared_logarithmic_error")


class KLDivergence(LossFunctionWrapper):
    __init__ = _wrapper(kl_divergence, "kl_divergence")


class Poisson(LossFunctionWrapper):
    __init__ = _wrapper(poisson, "poisson")


class LogCosh(LossFunctionWrapper):
    __init__ = _wrapper(log_cosh, "log_cosh")


class Hinge(LossFunctionWrapper):
    __init__ = _wrapper(hinge, "hinge")


class SquaredHinge(LossFunctionWrapper):
    __init__ = _wrapper(squared_hinge, "squared_hinge")


class CategoricalHinge(LossFunctionWrapper):
    __init__ = _wrapper(categorical_hinge, "categorical_hinge")


class CosineSimilarity(LossFunctionWrapper):
    def __init__(self, axis: int = -1, reduction: Any = "sum_over_batch_size", name: str = "cosine_similarity",
                 dtype: Any = None) -> None:
        super().__init__(cosine_similarity, reduction=reduction, name=name, dtype=dtype, axis=axis)

    def get_config(self) -> dict:
        return Loss.get_config(self)  # Keras 3.15 writes no axis (from_config gives axis=-1)


class BinaryFocalCrossentropy(LossFunctionWrapper):
    def __init__(self, apply_class_balancing: bool = False, alpha: float = 0.25, gamma: float = 2.0,
                 from_logits: bool = False, label_smoothing: float = 0.0, axis: int = -1,
                 reduction: Any = "sum_over_batch_size", name: str = "binary_focal_crossentropy",
                 dtype: Any = None) -> None:
        super().__init__(binary_focal_crossentropy, reduction=reduction, name=name, dtype=dtype,
                         apply_class_balancing=apply_class_balancing, alpha=alpha, gamma=gamma,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.apply_class_balancing, self.alpha, self.gamma = apply_class_balancing, alpha, gamma
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis

    def get_config(self) -> dict:
        return {**Loss.get_config(self), "from_logits": self.from_logits, "label_smoothing": self.label_smoothing,
                "axis": self.axis, "apply_class_balancing": self.apply_class_balancing, "alpha": self.alpha,
                "gamma": self.gamma}


class CategoricalFocalCrossentropy(LossFunctionWrapper):
    def __init__(self, alpha: float = 0.25, gamma: float = 2.0, from_logits: bool = False,
                 label_smoothing: float = 0.0, axis: int = -1, reduction: Any = "sum_over_batch_size",
                 name: str = "categorical_focal_crossentropy", dtype: Any = None) -> None:
        super().__init__(categorical_focal_crossentropy, reduction=reduction, name=name, dtype=dtype, alpha=alpha,
                         gamma=gamma, from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.alpha, self.gamma = alpha, gamma
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis

    def get_config(self) -> dict:
        return {**Loss.get_config(self), "from_logits": self.from_logits, "label_smoothing": self.label_smoothing,
                "axis": self.axis, "alpha": self.alpha, "gamma": self.gamma}


class Dice(LossFunctionWrapper):
    def __init__(self, reduction: Any = "sum_over_batch_size", name: str = "dice", axis: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(dice, reduction=reduction, name=name, dtype=dtype, axis=axis)
        self.axis = axis


class Tversky(LossFunctionWrapper):
    def __init__(self, alpha: float = 0.5, beta: float = 0.5, reduction: Any = "sum_over_batch_size",
                 name: str = "tversky", axis: Any = None, dtype: Any = None) -> None:
        super().__init__(tversky, reduction=reduction, name=name, dtype=dtype, alpha=alpha, beta=beta, axis=axis)
        self.alpha, self.beta, self.axis = alpha, beta, axis


class CategoricalGeneralizedCrossEntropy(LossFunctionWrapper):
    def __init__(self, q: float = 0.5, reduction: Any = "sum_over_batch_size",
                 name: str = "categorical_generalized_cross_entropy", dtype: Any = None) -> None:
        if not 0 < q < 1:
            raise ValueError("q must be in the interval (0, 1)")
        super().__init__(categorical_generalized_cross_entropy, reduction=reduction, name=name, dtype=dtype, q=q)
        self.q = q


_BY_NAME = {
    "mean_absolute_percentage_error": MeanAbsolutePercentageError, "mape": MeanAbsolutePercentageError,
    "mean_squared_logarithmic_error": MeanSquaredLogarithmicError, "msle": MeanSquaredLogarithmicError,
    "kl_divergence": KLDivergence, "kld": KLDivergence, "poisson": Poisson, "log_cosh": LogCosh,
    "hinge": Hinge, "squared_hinge": SquaredHinge, "categorical_hinge": CategoricalHinge,
    "cosine_similarity": CosineSimilarity,
    "mean_squared_error": MeanSquaredError, "mse": MeanSquaredError, "MeanSquaredError": MeanSquaredError,
    "mean_absolute_error": MeanAbsoluteError, "mae": MeanAbsoluteError, "MeanAbsoluteError": MeanAbsoluteError,
    "huber": Huber, "huber_loss": Huber, "Huber": Huber,
    "binary_crossentropy": BinaryCrossentropy, "BinaryCrossentropy": BinaryCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy, "CategoricalCrossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "SparseCategoricalCrossentropy": SparseCategoricalCrossentropy,
    "binary_focal_crossentropy": BinaryFocalCrossentropy, "BinaryFocalCrossentropy": BinaryFocalCrossentropy,
    "categorical_focal_crossentropy": CategoricalFocalCrossentropy,
    "CategoricalFocalCrossentropy": CategoricalFocalCrossentropy, "dice": Dice, "Dice": Dice,
    "tversky": Tversky, "Tversky": Tversky,
    "categorical_generalized_cross_entropy": CategoricalGeneralizedCrossEntropy,
    "CategoricalGeneralizedCrossEntropy": CategoricalGeneralizedCrossEntropy,
}


def get(identifier: Any) -> Any:
    """A loss from a name, an instance or a callable, as Keras's ``losses.get``: a function's name
    (``"mse"``, ``"sparse_categorical_crossentropy"``) gives the function, a class name an instance."""
    if isinstance(identifier, str):
        fn = globals().get(identifier)
        if callable(fn) and not isinstance(fn, type) and identifier in _BY_NAME:
            return fn
    return _loss_object(identifier)


def _loss_object(identifier: Any) -> Any:
    """A ``Loss`` for a name or class (what ``compile(loss=...)`` holds); instances and callables as given."""
    if identifier is None or isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier)
        if cls is None:
            raise ValueError(f"Could not interpret loss identifier: {identifier!r}. "
                             f"Known: {', '.join(sorted(_BY_NAME))}")
        return cls()
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret loss identifier: {identifier!r}")


def serialize(loss: Any) -> Any:
    """Keras 3's ``{"module": "keras.losses", "class_name", "config", "registered_name"}`` of a loss."""
    from tapeflow.keras.saving.serialization import serialize_keras_object

    return serialize_keras_object(loss)


def deserialize(name: Any, custom_objects: dict | None = None) -> Any:
    """The loss a name or a ``serialize`` dict describes."""
    if isinstance(name, str):
        found = (custom_objects or {}).get(name)
        return found if found is not None else get(name)
    from tapeflow.keras.saving.serialization import deserialize_keras_object

    return deserialize_keras_object(name, custom_objects)


def _snake(name: str) -> str:
    import re

    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


# Keras names tapeflow lacks: NotImplementedError (also an AttributeError, for hasattr)
from tapeflow.keras._missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr("tf.keras.losses", frozenset((
    "Circle circle"
).split()))


def ctc(y_true: Any, y_pred: Any) -> Tensor:
    """Keras's ``ctc`` loss: ``keras.ops.ctc_loss`` of the logits ``y_pred`` (batch, time, classes) for the
    integer labels ``y_true`` (batch, max_length), 0 the blank and padding, every output step used."""
    from tapeflow.keras import ops  # keras.ops uses the losses module itself: imported when first called

    y_true, y_pred = ops.convert_to_tensor(y_true), ops.convert_to_tensor(y_pred)
    if len(y_true.shape) != 2:
        raise ValueError("Targets `y_true` are expected to be a tensor of shape `(batch_size, max_length)` in "
                         f"integer format. Received: y_true.shape={tuple(y_true.shape)}")
    if len(y_pred.shape) != 3:
        raise ValueError("Logits `y_pred` are expected to be a tensor of shape `(batch_size, max_length, "
                         f"num_classes)`. Received: y_pred.shape={tuple(y_pred.shape)}")
    batch = ops.shape(y_pred)[0]
    input_length = ops.shape(y_pred)[1] * ops.ones((batch,), dtype="int32")
    label_length = ops.cast(ops.sum(ops.not_equal(y_true, 0), axis=-1), dtype="int32")
    return ops.ctc_loss(y_true, y_pred, label_length, input_length, mask_index=0)


class CTC(LossFunctionWrapper):
    """Keras's CTC loss (``ctc``), averaged over the batch by default."""

    __init__ = _wrapper(ctc, "ctc")


__all__ += ["CTC", "ctc"]
_BY_NAME.update({"ctc": CTC, "CTC": CTC})
