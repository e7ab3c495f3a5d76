"""``tf.keras.metrics``: streaming metrics (``update_state``, ``result``,
``reset_state``) with Keras 3's formulas.

State lives in non-trainable float32 ``tf.Variable``s (as Keras keeps it) and
updates are tapeflow ops, so a metric works eagerly and inside
``tf.function`` alike (``train_loss(loss)`` in a compiled train step).
``result()`` returns a float32 scalar tensor. Metrics are never differentiated.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import distribution_hooks as dist_hooks
from tapeflow.framework import dtypes
from tapeflow.framework.context import state
from tapeflow.framework.tensor import Tensor, constant, convert_to_tensor
from tapeflow.framework.variables import Variable
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo

__all__ = ["Metric", "Mean", "Sum", "MeanMetricWrapper", "Accuracy", "BinaryAccuracy", "CategoricalAccuracy",
           "SparseCategoricalAccuracy", "AUC", "Precision", "Recall", "MeanSquaredError", "MeanAbsoluteError",
           "RootMeanSquaredError", "BinaryCrossentropy", "CategoricalCrossentropy", "SparseCategoricalCrossentropy",
           "TopKCategoricalAccuracy", "SparseTopKCategoricalAccuracy", "MeanAbsolutePercentageError",
           "MeanSquaredLogarithmicError", "KLDivergence", "Poisson", "LogCoshError", "Hinge", "SquaredHinge",
           "CategoricalHinge", "CosineSimilarity", "TruePositives", "FalsePositives", "TrueNegatives",
           "FalseNegatives", "get", "serialize", "deserialize", "FBetaScore", "F1Score", "R2Score", "IoU", "BinaryIoU",
           "MeanIoU", "OneHotIoU", "OneHotMeanIoU", "PearsonCorrelation", "ConcordanceCorrelation",
           "pearson_correlation", "concordance_correlation", "SensitivityAtSpecificity", "SpecificityAtSensitivity",
           "PrecisionAtRecall", "RecallAtPrecision"]

_F = np.float32
_F32 = dtypes.float32


def _t(x: Any) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if isinstance(x, Variable):
        return x.value()
    return convert_to_tensor(np.asarray(x) if isinstance(x, (list, tuple)) else x)


def _f32(x: Any) -> Tensor:
    return mo.cast(_t(x), _F32)


def _rank(x: Tensor) -> int:
    return len(x._shape_tuple())


def _div_no_nan(a: Tensor, b: Tensor) -> Tensor:
    safe = mo.where(mo.equal(b, 0.0), mo.ones_like_(b), b)
    return mo.where(mo.equal(b, 0.0), mo.zeros_like_(a), a / safe)


class Metric:
    """Base class of metrics: state in ``add_variable`` variables."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "result" in cls.__dict__:
            cls.result = _synced_result(cls.__dict__["result"])

    def __init__(self, name: str | None = None, dtype: Any = None) -> None:
        from tapeflow.keras.layers.base import to_snake_case

        # Keras 3's auto_name: an unnamed metric takes a unique name (precision, precision_1, ...)
        self.name = name or _unique_name(to_snake_case(type(self).__name__))
        self.dtype = dtype or "float32"
        if dist_hooks.on_variable_created is not None:  # made under a multi-process strategy's scope
            self._sync_replicas = True
        self._variables: list[Variable] = []
        self._build_state()

    def _build_state(self) -> None:  # subclasses create their variables here
        pass

    def add_variable(self, shape: Any = (), initializer: Any = "zeros", dtype: Any = None, aggregation: str = "sum",
                     name: str | None = None) -> Variable:
        """A state variable (not trainable), as Keras's ``Metric.add_variable``: ``initializer`` a name,
        an initializer or a value."""
        dtype = dtypes.as_dtype(dtype or "float32")
        if initializer is None or initializer == "zeros":
            init = np.zeros(shape, dtype.as_numpy_dtype)
        elif isinstance(initializer, (str, dict)) or callable(initializer):
            from tapeflow.keras import initializers

            init = initializers.get(initializer)(tuple(shape), dtype=dtype)
        else:
            init = np.full(shape, initializer, dtype.as_numpy_dtype)
        v = Variable(init, trainable=False, name=f"{self.name}/{name or 'variable'}:0", dtype=dtype)
        v._keras_name = v._name = name or "variable"  # Keras 3 names it "total"; the full path is .path
        v.path = f"{self.name}/{v._keras_name}"
        self._variables.append(v)
        return v

    def add_weight(self, shape: Any = (), initializer: Any = None, dtype: Any = None,
                   name: str | None = None) -> Variable:
        """Keras 3's alias of ``add_variable`` (Keras 2 metrics call it)."""
        return self.add_variable(shape=shape, initializer=initializer, dtype=dtype, name=name)

    def reset_state(self) -> None:
        """Zeroes every state variable."""
        for v in self._variables:
            v.assign(np.zeros(v.shape.as_list(), v.dtype.as_numpy_dtype))

    def update_state(self, *args: Any, **kwargs: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__}.update_state must be implemented")

    def result(self) -> Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def __call__(self, *args: Any, **kwargs: Any) -> Tensor:
        self.update_state(*args, **kwargs)
        return self.result()

    @property
    def variables(self) -> list:
        return list(self._variables)

    def _trackable_children(self) -> dict:
        return {f"variables/{i}": v for i, v in enumerate(self._variables)}

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config: dict) -> Metric:
        """Keras 3's ``Metric.from_config``: ``cls(**config)`` (a ``.keras`` file's compiled metrics)."""
        return cls(**config)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name}>"


def _synced_result(result):
    """``result`` that, for a metric created under a multi-process strategy's scope (or compiled into a
    model that fits under it), read outside ``strategy.run``, first sums every state variable over all
    replicas (TF's SUM-aggregated sync-on-read metric variables)."""

    def synced(self):
        if dist_hooks.strategy is None or state.graph is not None or getattr(self, "_syncing", False) \
                or not getattr(self, "_sync_replicas", False):
            return result(self)
        return dist_hooks.strategy._synced_metric_result(self, result)

    synced.__doc__ = result.__doc__
    synced.__wrapped__ = result
    return synced


def _same_rank_keras(x1: Tensor, x2: Tensor, expand_rank_1: bool = True) -> tuple[Tensor, Tensor]:
    """Keras 3's ``squeeze_or_expand_to_same_rank``: where the ranks differ by one and the longer one ends in
    a size-1 axis, a rank-1 other side gains that axis (``expand_rank_1``), else the size-1 axis goes."""
    r1, r2 = _rank(x1), _rank(x2)
    if r1 == r2 + 1 and x1._shape_tuple()[-1] == 1:
        if r2 == 1 and expand_rank_1:
            x2 = ao.expand_dims(x2, -1)
        else:
            x1 = ao.squeeze(x1, [-1])
    if r2 == r1 + 1 and x2._shape_tuple()[-1] == 1:
        if r1 == 1 and expand_rank_1:
            x1 = ao.expand_dims(x1, -1)
        else:
            x2 = ao.squeeze(x2, [-1])
    return x1, x2


def _broadcast_like(x: Tensor, like: Tensor) -> Tensor:
    """``broadcast_to(x, shape(like))`` (an error where Keras's is one: ``x`` of a higher rank, say)."""
    target = like._shape_tuple()
    if x._shape_tuple() == target and None not in target:
        return x
    return ao.broadcast_to(x, target if None not in target else ao.shape(like))


def _samplewise(values: Any, sample_weight: Any, reduce_fn: Any) -> tuple[Tensor, Tensor | None]:
    """Keras 3's ``reduce_to_samplewise_values``: the values reduced (``reduce_fn``) to one per sample, times
    ``sample_weight`` (squeezed or expanded to the values' rank, the values first reduced to its rank, then
    broadcast to them), and the weights reduced to one per sample."""
    values = _f32(values)
    sw = None
    if sample_weight is not None:
        values, sw = _same_rank_keras(values, _f32(sample_weight))
        wn, vn = _rank(sw), _rank(values)
        if vn > wn:
            values = reduce_fn(values, axis=list(range(wn, vn)))
        sw = _broadcast_like(sw, values)
        values = values * sw
        if wn > 1:
            sw = reduce_fn(sw, axis=list(range(1, wn)))
    if _rank(values) > 1:
        values = reduce_fn(values, axis=list(range(1, _rank(values))))
    return values, sw


class Mean(Metric):
    """The (weighted) mean of the values seen: ``total / count``."""

    def __init__(self, name: str | None = "mean", dtype: Any = None) -> None:  # Keras: a fixed default name
        super().__init__(name=name, dtype=dtype)

    def _build_state(self) -> None:
        self.total = self.add_variable(name="total")
        self.count = self.add_variable(name="count")

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        v, sw = _samplewise(values, sample_weight, mo.reduce_mean)
        self.total.assign_add(mo.reduce_sum(v))
        if sw is not None:
            self.count.assign_add(mo.reduce_sum(sw))
        else:  # one per sample
            n = v._shape_tuple()
            self.count.assign_add(1.0 if not n else float(n[0]) if n[0] is not None
                                  else mo.cast(ao.shape(v)[0], _F32))

    def result(self) -> Tensor:
        return _div_no_nan(self.total.value(), self.count.value())


class Sum(Metric):
    def __init__(self, name: str | None = "sum", dtype: Any = None) -> None:
        super().__init__(name=name, dtype=dtype)

    def _build_state(self) -> None:
        self.total = self.add_variable(name="total")

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        self.total.assign_add(mo.reduce_sum(_samplewise(values, sample_weight, mo.reduce_sum)[0]))

    def result(self) -> Tensor:
        return self.total.value()


class MeanMetricWrapper(Mean):
    """Mean of ``fn(y_true, y_pred)`` over all samples seen."""

    def __init__(self, fn: Any, name: str | None = None, dtype: Any = None, **kwargs: Any) -> None:
        self._fn, self._fn_kwargs = fn, kwargs
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        super().update_state(self._fn(_t(y_true), _t(y_pred), **self._fn_kwargs), sample_weight)

    def get_config(self) -> dict:
        return {**super().get_config(), **self._fn_kwargs}  # e.g. BinaryAccuracy's threshold


def accuracy(y_true: Any, y_pred: Any) -> Tensor:
    """1.0 where ``y_pred == y_true`` exactly."""
    y_true, y_pred = _same_rank_keras(_t(y_true), _t(y_pred))
    if y_true.dtype != y_pred.dtype:
        y_true, y_pred = _f32(y_true), _f32(y_pred)
    return mo.cast(mo.equal(y_true, y_pred), _F32)


def binary_accuracy(y_true: Any, y_pred: Any, threshold: float = 0.5) -> Tensor:
    """1.0 where ``(y_pred > threshold) == y_true``, elementwise (Keras 3 no longer averages the last axis)."""
    y_true, y_pred = _same_rank_keras(_f32(y_true), _f32(y_pred))
    pred = mo.cast(mo.greater(y_pred, threshold), _F32)
    return mo.cast(mo.equal(y_true, pred), _F32)


def categorical_accuracy(y_true: Any, y_pred: Any) -> Tensor:
    """1.0 where ``argmax(y_pred) == argmax(y_true)``."""
    return mo.cast(mo.equal(ao.argmax(_t(y_true), -1), ao.argmax(_t(y_pred), -1)), _F32)


def sparse_categorical_accuracy(y_true: Any, y_pred: Any) -> Tensor:
    """1.0 where ``argmax(y_pred)`` equals the integer label."""
    y_true, y_pred = _t(y_true), _t(y_pred)
    if _rank(y_true) == _rank(y_pred) and y_true._shape_tuple()[-1] == 1:
        y_true = ao.squeeze(y_true, [-1])
    return mo.cast(mo.equal(_f32(y_true), mo.cast(ao.argmax(y_pred, -1), _F32)), _F32)


class Accuracy(MeanMetricWrapper):
    """How often predictions equal labels exactly."""

    def __init__(self, name: str = "accuracy", dtype: Any = None) -> None:
        super().__init__(accuracy, name=name, dtype=dtype)


class BinaryAccuracy(MeanMetricWrapper):
    """How often ``y_pred > threshold`` equals the binary label."""

    def __init__(self, name: str = "binary_accuracy", dtype: Any = None, threshold: float = 0.5) -> None:
        super().__init__(binary_accuracy, name=name, dtype=dtype, threshold=threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    """How often ``argmax(y_pred)`` equals ``argmax(y_true)`` (one-hot labels)."""

    def __init__(self, name: str = "categorical_accuracy", dtype: Any = None) -> None:
        super().__init__(categorical_accuracy, name=name, dtype=dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often ``argmax(y_pred)`` equals the integer label."""

    def __init__(self, name: str = "sparse_categorical_accuracy", dtype: Any = None) -> None:
        super().__init__(sparse_categorical_accuracy, name=name, dtype=dtype)


def _mse(y_true, y_pred):
    y_true, y_pred = _same_rank_keras(_f32(y_true), _f32(y_pred))
    return mo.reduce_mean(mo.square(y_true - y_pred), axis=-1)


def _mae(y_true, y_pred):
    y_true, y_pred = _same_rank_keras(_f32(y_true), _f32(y_pred))
    return mo.reduce_mean(mo.abs(y_true - y_pred), axis=-1)


class MeanSquaredError(MeanMetricWrapper):
    def __init__(self, name: str = "mean_squared_error", dtype: Any = None) -> None:
        super().__init__(_mse, name=name, dtype=dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    def __init__(self, name: str = "mean_absolute_error", dtype: Any = None) -> None:
        super().__init__(_mae, name=name, dtype=dtype)


class RootMeanSquaredError(Mean):
    """``sqrt`` of the mean squared error over every element seen (Keras 3)."""

    def __init__(self, name: str = "root_mean_squared_error", dtype: Any = None) -> None:
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_true, y_pred = _same_rank_keras(_f32(y_true), _f32(y_pred))
        super().update_state(mo.square(y_pred - y_true), sample_weight)

    def result(self) -> Tensor:
        return mo.sqrt(super().result())


def _unique_name(base: str) -> str:
    """Keras 3's auto_name: ``auc``, ``auc_1`` ... (the counter layers use; clear_session resets it)."""
    from tapeflow.keras.layers.base import unique_name

    return unique_name(base)


def _losses():
    from tapeflow.keras import losses

    return losses


def binary_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False, label_smoothing: float = 0.0,
                        axis: int = -1) -> Tensor:
    return _losses().binary_crossentropy(y_true, y_pred, from_logits=from_logits, label_smoothing=label_smoothing,
                                         axis=axis)


def categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False, label_smoothing: float = 0.0,
                             axis: int = -1) -> Tensor:
    return _losses().categorical_crossentropy(y_true, y_pred, from_logits=from_logits,
                                              label_smoothing=label_smoothing, axis=axis)


def sparse_categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False, ignore_class: Any = None,
                                    axis: int = -1) -> Tensor:
    return _losses().sparse_categorical_crossentropy(y_true, y_pred, from_logits=from_logits,
                                                     ignore_class=ignore_class, axis=axis)


class BinaryCrossentropy(MeanMetricWrapper):
    def __init__(self, name: str = "binary_crossentropy", dtype: Any = None, from_logits: bool = False,
                 label_smoothing: float = 0.0) -> None:
        super().__init__(binary_crossentropy, name=name, dtype=dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing)


class CategoricalCrossentropy(MeanMetricWrapper):
    def __init__(self, name: str = "categorical_crossentropy", dtype: Any = None, from_logits: bool = False,
                 label_smoothing: float = 0.0, axis: int = -1) -> None:
        super().__init__(categorical_crossentropy, name=name, dtype=dtype, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)


class SparseCategoricalCrossentropy(MeanMetricWrapper):
    def __init__(self, name: str = "sparse_categorical_crossentropy", dtype: Any = None, from_logits: bool = False,
                 ignore_class: Any = None, axis: int = -1) -> None:
        super().__init__(sparse_categorical_crossentropy, name=name, dtype=dtype, from_logits=from_logits,
                         ignore_class=ignore_class, axis=axis)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        ignore = self._fn_kwargs["ignore_class"]
        # Keras 3.15: the ignored labels count as 0 in the mean, unless a sample_weight is given: then the loss's
        # mask multiplies it and they are left out
        if ignore is not None and sample_weight is not None:
            labels = _t(y_true)
            if _rank(labels) == _rank(_t(y_pred)):
                labels = ao.squeeze(labels, [-1])
            valid = mo.cast(mo.not_equal(mo.cast(labels, dtypes.int32), ignore), dtypes.float32)
            sample_weight = valid * mo.cast(_t(sample_weight), dtypes.float32)
        super().update_state(y_true, y_pred, sample_weight)


def _loss_metric(loss_fn_name: str, default_name: str, sign: float = 1.0) -> type:
    """A MeanMetricWrapper class over ``tf.keras.losses.<loss_fn_name>`` (Keras 3's metric twins)."""

    def fn(y_true: Any, y_pred: Any, **kwargs: Any) -> Tensor:
        v = getattr(_losses(), loss_fn_name)(y_true, y_pred, **kwargs)
        return -v if sign < 0 else v

    class _M(MeanMetricWrapper):
        def __init__(self, name: str = default_name, dtype: Any = None, **kwargs: Any) -> None:
            super().__init__(fn, name=name, dtype=dtype, **kwargs)

    return _M


MeanAbsolutePercentageError = _loss_metric("mean_absolute_percentage_error", "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = _loss_metric("mean_squared_logarithmic_error", "mean_squared_logarithmic_error")
KLDivergence = _loss_metric("kl_divergence", "kl_divergence")
Poisson = _loss_metric("poisson", "poisson")
LogCoshError = _loss_metric("log_cosh", "logcosh")
Hinge = _loss_metric("hinge", "hinge")
SquaredHinge = _loss_metric("squared_hinge", "squared_hinge")
CategoricalHinge = _loss_metric("categorical_hinge", "categorical_hinge")
CosineSimilarity = _loss_metric("cosine_similarity", "cosine_similarity", sign=-1.0)  # the similarity, not its loss
CosineSimilarity.get_config = Metric.get_config  # Keras 3.15 writes no axis (from_config gives axis=-1)
for _cls, _name in ((MeanAbsolutePercentageError, "MeanAbsolutePercentageError"),
                    (MeanSquaredLogarithmicError, "MeanSquaredLogarithmicError"), (KLDivergence, "KLDivergence"),
                    (Poisson, "Poisson"), (LogCoshError, "LogCoshError"), (Hinge, "Hinge"),
                    (SquaredHinge, "SquaredHinge"), (CategoricalHinge, "CategoricalHinge"),
                    (CosineSimilarity, "CosineSimilarity")):
    _cls.__name__ = _cls.__qualname__ = _name


def sparse_top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5) -> Tensor:
    """1.0 where the integer label is among the ``k`` largest predictions (ties count, as TF's in_top_k)."""
    from tapeflow.ops.nn import losses as nn_losses

    y_true, y_pred = _t(y_true), _f32(y_pred)
    if _rank(y_true) == _rank(y_pred) and y_true._shape_tuple()[-1] == 1:
        y_true = ao.squeeze(y_true, [-1])
    return mo.cast(nn_losses.in_top_k(mo.cast(y_true, dtypes.int32), y_pred, k), _F32)


def top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5) -> Tensor:
    """1.0 where ``argmax(y_true)`` is among the ``k`` largest predictions."""
    return sparse_top_k_categorical_accuracy(ao.argmax(_t(y_true), -1), y_pred, k=k)


class TopKCategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, k: int = 5, name: str = "top_k_categorical_accuracy", dtype: Any = None) -> None:
        super().__init__(top_k_categorical_accuracy, name=name, dtype=dtype, k=k)


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, k: int = 5, name: str = "sparse_top_k_categorical_accuracy", dtype: Any = None) -> None:
        super().__init__(sparse_top_k_categorical_accuracy, name=name, dtype=dtype, k=k)


# ----------------------------------------------------------------------------
# Confusion-matrix metrics
# ----------------------------------------------------------------------------

def _evenly_spaced(thresholds: Any) -> bool:
    """Keras's ``is_evenly_distributed_thresholds``: 3 or more thresholds at ``i / (n - 1)``."""
    n = len(thresholds)
    return n >= 3 and bool(np.allclose(thresholds, np.arange(n, dtype=_F) / (n - 1), atol=_EPS))


def _confusion(y_true: Any, y_pred: Any, thresholds: np.ndarray, sample_weight: Any, top_k: int | None = None,
               class_id: int | None = None, evenly: bool = False, multi_label: bool = False,
               label_weights: Any = None) -> tuple:
    """tp, fp, tn, fn per threshold (``y_pred > threshold`` is positive; a nonzero label is positive), as
    tapeflow ops, with Keras 3.15's ``update_confusion_matrix_variables``' shapes: labels and predictions
    squeezed or expanded to one rank, ``sample_weight`` expanded by a trailing axis, squeezed or expanded to
    the labels' rank and broadcast to the predictions (after ``top_k`` and ``class_id``). ``evenly``
    (thresholds at ``i / (n - 1)``) is Keras's bucketed path: predictions clipped to [0, 1], bucket
    ``ceil(p * (n - 1)) - 1`` (at least 0 where the end thresholds lie outside [0, 1]). ``multi_label``: one
    column of counts per label (the last axis), shape (thresholds, labels); ``label_weights`` (not with
    ``multi_label``) weighs each label's entries."""
    y_pred, y_true = _same_rank_keras(_f32(y_pred), _f32(y_true))
    sw = None
    if sample_weight is not None:
        sw = ao.expand_dims(_f32(sample_weight), -1)
        _, sw = _same_rank_keras(y_true, sw, expand_rank_1=False)
    if top_k is not None:  # Keras's _filter_top_k: all but the top_k predictions become NEG_INF
        from tapeflow.ops import indexing_ops, special_ops

        _, idx = special_ops.top_k(y_pred, top_k)
        keep = mo.reduce_sum(indexing_ops.one_hot(idx, y_pred._shape_tuple()[-1], dtype=y_pred.dtype), axis=-2)
        y_pred = y_pred * keep + _NEG_INF * (1 - keep)
    if class_id is not None:
        if _rank(y_pred) == 1:
            raise ValueError("When class_id is provided, y_pred must be a 2D array with shape (num_samples, "
                             f"num_classes), found shape: {tuple(y_pred._shape_tuple())}")
        y_true = y_true[..., class_id:class_id + 1]  # Keras keeps the axis, to line up with sample_weight
        y_pred = y_pred[..., class_id:class_id + 1]
    w = None if sw is None else _broadcast_like(sw, y_pred)
    if label_weights is not None:
        lw = _broadcast_like(ao.expand_dims(_f32(label_weights), 0), y_pred)
        w = lw if w is None else w * lw
    def flat(x: Tensor) -> Tensor:  # (1, samples), or with multi_label (1, batch, labels)
        return ao.expand_dims(x, 0) if multi_label else ao.reshape(x, (1, -1))

    w = None if w is None else flat(w)
    pos = flat(mo.cast(mo.not_equal(y_true, 0.0), _F32))
    pred = flat(y_pred)
    n = len(thresholds)
    column = (-1, 1) if not multi_label else (-1, 1, 1)
    if evenly:
        bucket = mo.ceil(mo.clip_by_value(pred, 0.0, 1.0) * _F(n - 1)) - 1.0
        if thresholds[0] < 0.0 or thresholds[-1] > 1.0:  # AUC's -eps and 1 + eps: [0, 1] lies within
            bucket = mo.maximum(bucket, 0.0)
        above = mo.cast(mo.greater_equal(bucket, constant(np.arange(n, dtype=_F).reshape(column))), _F32)
    else:
        above = mo.cast(mo.greater(pred, constant(thresholds.reshape(column))), _F32)  # (thresholds, samples)
    wp = pos if w is None else w * pos
    wn = 1.0 - pos if w is None else w * (1.0 - pos)
    tp, fp = mo.reduce_sum(above * wp, axis=1), mo.reduce_sum(above * wn, axis=1)
    if evenly:  # Keras: fn and tn as the totals less tp and fp
        totals = 1 if multi_label else None  # (per label: the batch axis)
        return tp, fp, mo.reduce_sum(wn, axis=totals) - fp, mo.reduce_sum(wp, axis=totals) - tp
    below = 1.0 - above
    return tp, fp, mo.reduce_sum(below * wn, axis=1), mo.reduce_sum(below * wp, axis=1)


def _div(a: Any, b: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1), 0).astype(_F)


_NEG_INF = -1e10  # Keras's metrics_utils.NEG_INF


class _Thresholded(Metric):
    def __init__(self, thresholds: Any = None, top_k: int | None = None, class_id: int | None = None,
                 name: str | None = None, dtype: Any = None) -> None:
        # Keras: with top_k, the default threshold is NEG_INF (every top-k prediction counts as positive)
        default = 0.5 if top_k is None else _NEG_INF
        t = [default] if thresholds is None else ([thresholds] if np.ndim(thresholds) == 0 else list(thresholds))
        self.thresholds = np.asarray(t, _F)
        self.init_thresholds = thresholds
        self._scalar = thresholds is None or np.ndim(thresholds) == 0
        self.top_k, self.class_id = top_k, class_id
        super().__init__(name=name, dtype=dtype)

    def get_config(self) -> dict:
        return {**super().get_config(), "thresholds": self.init_thresholds, "top_k": self.top_k,
                "class_id": self.class_id}

    def _build_state(self) -> None:
        n = len(self.thresholds)
        self.true_positives = self.add_variable((n,), name="true_positives")
        self.false_positives = self.add_variable((n,), name="false_positives")
        self.false_negatives = self.add_variable((n,), name="false_negatives")

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        tp, fp, _, fn = _confusion(y_true, y_pred, self.thresholds, sample_weight, self.top_k, self.class_id,
                                   _evenly_spaced(self.thresholds))
        self.true_positives.assign_add(tp)
        self.false_positives.assign_add(fp)
        self.false_negatives.assign_add(fn)

    def _ratio(self, num: Variable, other: Variable) -> Tensor:
        tp = num.value()
        r = _div_no_nan(tp, tp + other.value())
        return r[0] if self._scalar else r


class Precision(_Thresholded):
    """tp / (tp + fp), with ``y_pred > thresholds`` (default 0.5) as positive."""

    def result(self) -> Tensor:
        return self._ratio(self.true_positives, self.false_positives)


class Recall(_Thresholded):
    """tp / (tp + fn), with ``y_pred > thresholds`` (default 0.5) as positive."""

    def result(self) -> Tensor:
        return self._ratio(self.true_positives, self.false_negatives)


class _ConfusionCount(Metric):
    """Weighted count of one confusion-matrix cell at ``thresholds`` (default 0.5), as Keras 3."""

    _cell = 0  # index into _confusion's (tp, fp, tn, fn)
    _default_name = ""

    def __init__(self, thresholds: Any = None, name: str | None = None, dtype: Any = None) -> None:
        t = [0.5] if thresholds is None else ([thresholds] if np.ndim(thresholds) == 0 else list(thresholds))
        self.thresholds = np.asarray(t, _F)
        self.init_thresholds = thresholds
        self._scalar = thresholds is None or np.ndim(thresholds) == 0
        super().__init__(name=name or _unique_name(self._default_name), dtype=dtype)

    def get_config(self) -> dict:
        return {**super().get_config(), "thresholds": self.init_thresholds}

    def _build_state(self) -> None:
        self.accumulator = self.add_variable((len(self.thresholds),), name="accumulator")

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        self.accumulator.assign_add(_confusion(y_true, y_pred, self.thresholds, sample_weight,
                                               evenly=_evenly_spaced(self.thresholds))[self._cell])

    def result(self) -> Tensor:
        v = self.accumulator.value()
        return v[0] if self._scalar else v


class TruePositives(_ConfusionCount):
    _cell, _default_name = 0, "true_positives"


class FalsePositives(_ConfusionCount):
    _cell, _default_name = 1, "false_positives"


class TrueNegatives(_ConfusionCount):
    _cell, _default_name = 2, "true_negatives"


class FalseNegatives(_ConfusionCount):
    _cell, _default_name = 3, "false_negatives"


class AUC(Metric):
    """Area under the ROC (or PR) curve from ``num_thresholds`` confusion
    matrices, with Keras' thresholds and Riemann summation."""

    def __init__(self, num_thresholds: int = 200, curve: str = "ROC", summation_method: str = "interpolation",
                 name: str | None = None, dtype: Any = None, thresholds: Any = None, multi_label: bool = False,
                 num_labels: int | None = None, label_weights: Any = None, from_logits: bool = False) -> None:
        self.curve = curve.upper()
        if self.curve not in ("ROC", "PR"):
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected values are ["ROC", "PR"]')
        self.summation_method = summation_method
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f"Invalid AUC summation method value: {summation_method!r}")
        self._given_thresholds = None if thresholds is None else list(thresholds)  # Keras writes them as given
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
            self.num_thresholds = len(inner) + 2
        else:
            if num_thresholds <= 1:
                raise ValueError(f"Argument `num_thresholds` must be an integer > 1. Received: num_thresholds="
                                 f"{num_thresholds}")
            self.num_thresholds = num_thresholds
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        eps = 1e-7
        self.thresholds = np.asarray([0.0 - eps] + inner + [1.0 + eps], _F)
        self.from_logits = from_logits
        if num_labels and not multi_label:
            raise ValueError("`num_labels` is needed only when `multi_label` is True.")
        self.multi_label, self.num_labels = bool(multi_label), num_labels
        self.label_weights = None if label_weights is None else constant(np.asarray(label_weights, _F))
        self._init_from_thresholds = thresholds is not None
        self._num_labels = num_labels if multi_label and num_labels else None
        super().__init__(name=name or _unique_name("auc"), dtype=dtype)

    def get_config(self) -> dict:
        config = {"num_thresholds": self.num_thresholds, "curve": self.curve,
                  "summation_method": self.summation_method, "multi_label": self.multi_label,
                  "num_labels": self.num_labels, "label_weights": self.label_weights, "from_logits": self.from_logits}
        if self._init_from_thresholds:  # Keras writes the given thresholds, without the two end points
            config["thresholds"] = self._given_thresholds
        return {**super().get_config(), **config}

    def _build_state(self) -> None:
        # multi_label: (thresholds, labels) matrices, built now with num_labels, else at the first update
        if self.multi_label and self._num_labels is None:
            self._built = False
            return
        n = self.num_thresholds
        shape = (n, self._num_labels) if self.multi_label else (n,)
        self.true_positives = self.add_variable(shape, name="true_positives")
        self.false_positives = self.add_variable(shape, name="false_positives")
        self.true_negatives = self.add_variable(shape, name="true_negatives")
        self.false_negatives = self.add_variable(shape, name="false_negatives")
        self._built = True

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_pred = _f32(y_pred)
        if not self._built:
            shape = tuple(y_pred._shape_tuple())
            if len(shape) != 2:
                raise ValueError(f"`y_pred` must have rank 2 when `multi_label=True`. Found rank {len(shape)}. "
                                 f"Full shape received for `y_pred`: {shape}")
            self._num_labels = shape[1]
            self._build_state()
        if self.from_logits:
            y_pred = mo.sigmoid(y_pred)
        # Keras buckets evenly spaced thresholds (the default ones, or given ones that are evenly spaced)
        evenly = not self._init_from_thresholds or _evenly_spaced(np.r_[0.0, self.thresholds[1:-1], 1.0])
        tp, fp, tn, fn = _confusion(y_true, y_pred, self.thresholds, sample_weight, evenly=evenly,
                                    multi_label=self.multi_label,
                                    label_weights=None if self.multi_label else self.label_weights)
        self.true_positives.assign_add(tp)
        self.false_positives.assign_add(fp)
        self.true_negatives.assign_add(tn)
        self.false_negatives.assign_add(fn)

    def result(self) -> Tensor:
        states = [self.true_positives, self.false_positives, self.true_negatives, self.false_negatives]
        if self.multi_label and self.label_weights is not None:
            states.append(self.label_weights)
        if state.graph is not None:  # inside a traced step: the same NumPy, on the states' values at run time
            from tapeflow.graph.functional_ops import numpy_function

            return ao.reshape(numpy_function(self._area, states, Tout=dtypes.float32, stateful=False), ())
        return constant(self._area(*(np.asarray(v.numpy()) for v in states)))

    def _area(self, tp: np.ndarray, fp: np.ndarray, tn: np.ndarray, fn: np.ndarray,
              label_weights: np.ndarray | None = None) -> np.float32:
        n = self.num_thresholds
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._by_label(self._pr_interpolation(tp, fp, fn), label_weights)
        recall = _div(tp, tp + fn)
        if self.curve == "ROC":
            x, y = _div(fp, fp + tn), recall
        else:
            x, y = recall, _div(tp, tp + fp)
        if self.summation_method == "interpolation":
            heights = (y[: n - 1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = np.minimum(y[: n - 1], y[1:])
        else:
            heights = np.maximum(y[: n - 1], y[1:])
        return self._by_label((x[: n - 1] - x[1:]) * heights, label_weights)

    def _by_label(self, terms: np.ndarray, label_weights: np.ndarray | None) -> np.float32:
        """The sum of the area's terms; with multi_label, each label's area, then their mean (weighted by
        ``label_weights``, as Keras)."""
        if not self.multi_label:
            return _F(np.sum(terms, dtype=_F))
        by_label = np.sum(terms, axis=0, dtype=_F)
        if label_weights is None:
            return _F(np.mean(by_label, dtype=_F))
        w = np.asarray(label_weights, _F)
        return _F(_div(np.sum(by_label * w, dtype=_F), np.sum(w, dtype=_F)))

    def _pr_interpolation(self, tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
        # Davis & Goadrich interpolation between consecutive thresholds (Keras' PR "interpolation").
        n = self.num_thresholds
        dtp = tp[: n - 1] - tp[1:]
        p = tp + fp
        dp = p[: n - 1] - p[1:]
        prec_slope = _div(dtp, np.maximum(dp, 0))
        intercept = tp[1:] - prec_slope * p[1:]
        safe_p_ratio = np.where((p[: n - 1] > 0) & (p[1:] > 0), _div(p[: n - 1], np.maximum(p[1:], 0)),
                                np.ones_like(p[1:]))
        with np.errstate(divide="ignore", invalid="ignore"):
            log_ratio = np.log(np.where(safe_p_ratio > 0, safe_p_ratio, 1.0))
        return _div(prec_slope * (dtp + intercept * log_ratio), np.maximum(tp[1:] + fn[1:], 0))


# ----------------------------------------------------------------------------
# F-scores, R2, IoU and correlations (Keras 3.15's formulas; state built on the first update, as Keras)
# ----------------------------------------------------------------------------

_EPS = 1e-7  # keras.backend.epsilon()


def _reduce_std(x: Tensor, axis: int) -> Tensor:
    centered = x - mo.reduce_mean(x, axis=axis, keepdims=True)
    return mo.sqrt(mo.reduce_mean(mo.square(centered), axis=axis, keepdims=True))


def _reduce_var(x: Tensor, axis: int) -> Tensor:
    centered = x - mo.reduce_mean(x, axis=axis, keepdims=True)
    return mo.reduce_mean(mo.square(centered), axis=axis, keepdims=True)


def _same_rank(y_true: Tensor, y_pred: Tensor) -> tuple[Tensor, Tensor]:
    """Keras's squeeze_or_expand_to_same_rank: drops or adds a trailing size-1 axis."""
    rt, rp = _rank(y_true), _rank(y_pred)
    if rt == rp + 1 and y_true._shape_tuple()[-1] == 1:
        y_true = ao.squeeze(y_true, [-1])
    elif rp == rt + 1 and y_pred._shape_tuple()[-1] == 1:
        y_pred = ao.squeeze(y_pred, [-1])
    return y_true, y_pred


class FBetaScore(Metric):
    """F-beta = (1 + beta**2) * precision * recall / (beta**2 * precision + recall), per class of 2-D
    (batch, classes) inputs; ``threshold=None`` takes each row's largest prediction as its positive class.
    ``average``: None (one score per class), "micro", "macro" or "weighted" (by support)."""

    def __init__(self, average: str | None = None, beta: float = 1.0, threshold: float | None = None,
                 name: str = "fbeta_score", dtype: Any = None) -> None:
        if average not in (None, "micro", "macro", "weighted"):
            raise ValueError("Invalid `average` argument value. Expected one of: {None, 'micro', 'macro', "
                             f"'weighted'}}. Received: average={average}")
        if not isinstance(beta, float):
            raise ValueError(f"Invalid `beta` argument value. It should be a Python float. Received: beta={beta} "
                             f"of type '{type(beta)}'")
        if beta <= 0.0:
            raise ValueError(f"Invalid `beta` argument value. It should be > 0. Received: beta={beta}")
        if threshold is not None:
            if not isinstance(threshold, float):
                raise ValueError(f"Invalid `threshold` argument value. It should be a Python float. Received: "
                                 f"threshold={threshold} of type '{type(threshold)}'")
            if threshold > 1.0 or threshold <= 0.0:
                raise ValueError(f"Invalid `threshold` argument value. It should verify 0 < threshold <= 1. "
                                 f"Received: threshold={threshold}")
        self.average, self.beta, self.threshold = average, beta, threshold
        self.axis = None if average == "micro" else 0
        self._built = False
        super().__init__(name=name, dtype=dtype)

    def _build(self, true_shape: tuple, pred_shape: tuple) -> None:
        kind = "FBetaScore"  # Keras's message names the base class, for F1Score too
        if len(pred_shape) != 2 or len(true_shape) != 2:
            raise ValueError(f"{kind} expects 2D inputs with shape (batch_size, output_dim). Received input "
                             f"shapes: y_pred.shape={pred_shape} and y_true.shape={true_shape}.")
        if pred_shape[-1] is None or true_shape[-1] is None:
            raise ValueError(f"{kind} expects 2D inputs with shape (batch_size, output_dim), with output_dim "
                             f"fully defined (not None). Received input shapes: y_pred.shape={pred_shape} and "
                             f"y_true.shape={true_shape}.")
        shape = () if self.average == "micro" else (pred_shape[-1],)
        self.true_positives = self.add_variable(shape, name="true_positives")
        self.false_positives = self.add_variable(shape, name="false_positives")
        self.false_negatives = self.add_variable(shape, name="false_negatives")
        self.intermediate_weights = self.add_variable(shape, name="intermediate_weights")
        self._built = True

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_true, y_pred = _f32(y_true), _f32(y_pred)
        if not self._built:
            self._build(y_true._shape_tuple(), y_pred._shape_tuple())
        if self.threshold is None:
            top = mo.reduce_max(y_pred, axis=-1, keepdims=True)
            pred = mo.logical_and(mo.greater_equal(y_pred, top), mo.greater(mo.abs(y_pred), 1e-9))
        else:
            pred = mo.greater(y_pred, self.threshold)
        pred = mo.cast(pred, _F32)
        sw = None if sample_weight is None else ao.expand_dims(_f32(sample_weight), 1)

        def wsum(v: Tensor) -> Tensor:
            return mo.reduce_sum(v if sw is None else v * sw, axis=self.axis)

        self.true_positives.assign_add(wsum(pred * y_true))
        self.false_positives.assign_add(wsum(pred * (1.0 - y_true)))
        self.false_negatives.assign_add(wsum((1.0 - pred) * y_true))
        self.intermediate_weights.assign_add(wsum(y_true))

    def result(self) -> Tensor:
        if not self._built:
            raise ValueError(f"{type(self).__name__}.result() called before any update_state()")
        tp = self.true_positives.value()
        precision = tp / (tp + self.false_positives.value() + _EPS)
        recall = tp / (tp + self.false_negatives.value() + _EPS)
        b2 = self.beta ** 2
        score = precision * recall / (b2 * precision + recall + _EPS) * (1.0 + b2)
        if self.average == "weighted":
            w = self.intermediate_weights.value()
            return mo.reduce_sum(score * (w / (mo.reduce_sum(w) + _EPS)))
        if self.average is not None:
            return mo.reduce_mean(score)
        return score

    def reset_state(self) -> None:
        for v in self._variables:
            v.assign(np.zeros(v.shape.as_list(), np.float32))

    def get_config(self) -> dict:
        return {**super().get_config(), "average": self.average, "beta": self.beta, "threshold": self.threshold}


class F1Score(FBetaScore):
    """FBetaScore with beta = 1: the harmonic mean of precision and recall."""

    def __init__(self, average: str | None = None, threshold: float | None = None, name: str = "f1_score",
                 dtype: Any = None) -> None:
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)

    def get_config(self) -> dict:
        config = super().get_config()
        del config["beta"]
        return config


class R2Score(Metric):
    """The coefficient of determination, 1 - SS_res / SS_tot, per output of (batch, outputs) inputs,
    aggregated by ``class_aggregation`` ("uniform_average", "variance_weighted_average" or None);
    ``num_regressors`` > 0 gives the adjusted R2."""

    def __init__(self, class_aggregation: str | None = "uniform_average", num_regressors: int = 0,
                 name: str = "r2_score", dtype: Any = None) -> None:
        valid = (None, "uniform_average", "variance_weighted_average")
        if class_aggregation not in valid:
            raise ValueError(f"Invalid value for argument `class_aggregation`. Expected one of {valid}. Received: "
                             f"class_aggregation={class_aggregation}")
        if num_regressors < 0:
            raise ValueError(f"Invalid value for argument `num_regressors`. Expected a value >= 0. Received: "
                             f"num_regressors={num_regressors}")
        self.class_aggregation, self.num_regressors = class_aggregation, num_regressors
        self._built = False
        super().__init__(name=name, dtype=dtype)

    def _build_state(self) -> None:
        self.num_samples = self.add_variable(name="num_samples")

    def _build(self, true_shape: tuple, pred_shape: tuple) -> None:
        if len(pred_shape) != 2 or len(true_shape) != 2:
            raise ValueError(f"R2Score expects 2D inputs with shape (batch_size, output_dim). Received input "
                             f"shapes: y_pred.shape={pred_shape} and y_true.shape={true_shape}.")
        if pred_shape[-1] is None or true_shape[-1] is None:
            raise ValueError(f"R2Score expects 2D inputs with shape (batch_size, output_dim), with output_dim fully "
                             f"defined (not None). Received input shapes: y_pred.shape={pred_shape} and "
                             f"y_true.shape={true_shape}.")
        n = pred_shape[-1]
        self.squared_sum = self.add_variable((n,), name="squared_sum")
        self.sum = self.add_variable((n,), name="sum")
        self.total_mse = self.add_variable((n,), name="residual")
        self.count = self.add_variable((n,), name="count")
        self._built = True

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_true, y_pred = _same_rank(_f32(y_true), _f32(y_pred))
        if not self._built:
            self._build(y_true._shape_tuple(), y_pred._shape_tuple())
        sw = constant(np.float32(1.0)) if sample_weight is None else _f32(sample_weight)
        if _rank(sw) == 1:
            sw = ao.expand_dims(sw, 1)
        sw = sw * mo.ones_like_(y_true)
        weighted = y_true * sw
        self.sum.assign_add(mo.reduce_sum(weighted, axis=0))
        self.squared_sum.assign_add(mo.reduce_sum(y_true * weighted, axis=0))
        self.total_mse.assign_add(mo.reduce_sum(mo.square(y_true - y_pred) * sw, axis=0))
        self.count.assign_add(mo.reduce_sum(sw, axis=0))
        self.num_samples.assign_add(mo.cast(ao.size_(y_true), _F32))

    def result(self) -> Tensor:
        if not self._built:
            raise ValueError("R2Score.result() called before any update_state()")
        s = self.sum.value()
        mean = s / self.count.value()
        total = self.squared_sum.value() - s * mean
        raw = 1.0 - self.total_mse.value() / total
        raw = mo.where(mo.is_inf(raw), mo.zeros_like_(raw), raw)
        if self.class_aggregation == "uniform_average":
            r2 = mo.reduce_mean(raw)
        elif self.class_aggregation == "variance_weighted_average":
            r2 = mo.reduce_sum(total * raw) / mo.reduce_sum(total)
        else:
            r2 = raw
        if self.num_regressors != 0:
            import warnings

            n = float(self.num_samples.numpy())
            if self.num_regressors > n - 1:
                warnings.warn("More independent predictors than datapoints in adjusted R2 score. Falling back to "
                              "standard R2 score.", stacklevel=2)
            elif self.num_regressors == n - 1:
                warnings.warn("Division by zero in Adjusted R2 score. Falling back to standard R2 score.",
                              stacklevel=2)
            else:
                r2 = 1.0 - (1.0 - r2) * (n - 1.0) / (n - float(self.num_regressors) - 1.0)
        return r2

    def reset_state(self) -> None:
        for v in self._variables:
            v.assign(np.zeros(v.shape.as_list(), np.float32))

    def get_config(self) -> dict:
        return {**super().get_config(), "class_aggregation": self.class_aggregation,
                "num_regressors": self.num_regressors}


class IoU(Metric):
    """Intersection-over-union tp / (tp + fp + fn) from a (num_classes, num_classes) confusion matrix,
    averaged over ``target_class_ids`` (classes absent from both labels and predictions are left out).
    As Keras, the matrix counts in integers: float sample weights are truncated."""

    def __init__(self, num_classes: int, target_class_ids: Any, name: str | None = None, dtype: Any = None,
                 ignore_class: int | None = None, sparse_y_true: bool = True, sparse_y_pred: bool = True,
                 axis: int = -1) -> None:
        if max(target_class_ids) >= num_classes:
            raise ValueError(f"Target class id {max(target_class_ids)} is out of range, which is [0, "
                             f"{num_classes}).")
        self.num_classes, self.ignore_class = num_classes, ignore_class
        self.sparse_y_true, self.sparse_y_pred, self.axis = sparse_y_true, sparse_y_pred, axis
        self.target_class_ids = list(target_class_ids)
        super().__init__(name=name, dtype=dtype or "int64")

    def _build_state(self) -> None:
        n = self.num_classes
        self.total_cm = self.add_variable((n, n), name="total_confusion_matrix")

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_true, y_pred = _t(y_true), _t(y_pred)
        if not self.sparse_y_true:
            y_true = ao.argmax(y_true, self.axis)
        if not self.sparse_y_pred:
            y_pred = ao.argmax(y_pred, self.axis)
        # Keras converts labels and predictions to the (integer) dtype: truncation toward zero
        y_true = ao.reshape(mo.cast(y_true, dtypes.int64), [-1])
        y_pred = ao.reshape(mo.cast(y_pred, dtypes.int64), [-1])
        if sample_weight is None:
            sw = mo.ones_like_(y_true)
        else:
            sw = ao.reshape(mo.cast(_t(sample_weight), dtypes.int64), [-1]) * mo.ones_like_(y_true)
        n = self.num_classes
        ok = mo.logical_and(mo.logical_and(mo.greater_equal(y_true, 0), mo.less(y_true, n)),
                            mo.logical_and(mo.greater_equal(y_pred, 0), mo.less(y_pred, n)))
        if self.ignore_class is not None:
            ok = mo.logical_and(ok, mo.not_equal(y_true, self.ignore_class))
        zero = mo.zeros_like_(y_true)
        y_true, y_pred, sw = mo.where(ok, y_true, zero), mo.where(ok, y_pred, zero), mo.where(ok, sw, zero)
        cells = mo.unsorted_segment_sum(mo.cast(sw, _F32), mo.cast(y_true * n + y_pred, dtypes.int32), n * n)
        self.total_cm.assign_add(ao.reshape(cells, (n, n)))

    def result(self) -> Tensor:
        cm = self.total_cm.value()
        n = self.num_classes
        rows, cols = mo.reduce_sum(cm, axis=0), mo.reduce_sum(cm, axis=1)
        tp = ao.gather(ao.reshape(cm, [-1]), constant(np.arange(n, dtype=np.int32) * (n + 1)))
        denom = rows + cols - tp
        ids = constant(np.asarray(self.target_class_ids, np.int32))
        tp, denom = ao.gather(tp, ids), ao.gather(denom, ids)
        valid = mo.greater(denom, 1e-9)
        iou = mo.where(valid, tp / (denom + _EPS), mo.zeros_like_(tp))
        return mo.reduce_sum(iou, axis=self.axis) / (mo.reduce_sum(mo.cast(valid, _F32)) + _EPS)

    def reset_state(self) -> None:
        self.total_cm.assign(np.zeros((self.num_classes, self.num_classes), np.float32))

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype, "num_classes": self.num_classes,
                "target_class_ids": self.target_class_ids, "ignore_class": self.ignore_class,
                "sparse_y_true": self.sparse_y_true, "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


class BinaryIoU(IoU):
    """IoU of the two classes of ``y_pred >= threshold`` against binary labels."""

    def __init__(self, target_class_ids: Any = (0, 1), threshold: float = 0.5, name: str | None = None,
                 dtype: Any = None) -> None:
        super().__init__(num_classes=2, target_class_ids=target_class_ids, name=name, dtype=dtype)
        self.threshold = threshold

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        pred = mo.cast(mo.greater_equal(_f32(y_pred), self.threshold), dtypes.int64)
        super().update_state(y_true, pred, sample_weight)

    def get_config(self) -> dict:
        return {"target_class_ids": self.target_class_ids, "threshold": self.threshold, "name": self.name,
                "dtype": self.dtype}


class MeanIoU(IoU):
    """IoU averaged over all ``num_classes`` classes."""

    def __init__(self, num_classes: int, name: str | None = None, dtype: Any = None, ignore_class: int | None = None,
                 sparse_y_true: bool = True, sparse_y_pred: bool = True, axis: int = -1) -> None:
        super().__init__(num_classes=num_classes, target_class_ids=list(range(num_classes)), name=name, dtype=dtype,
                         ignore_class=ignore_class, sparse_y_true=sparse_y_true, sparse_y_pred=sparse_y_pred,
                         axis=axis)

    def get_config(self) -> dict:
        return {"num_classes": self.num_classes, "name": self.name, "dtype": self.dtype,
                "ignore_class": self.ignore_class, "sparse_y_true": self.sparse_y_true,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


class OneHotIoU(IoU):
    """IoU with one-hot labels (and, unless ``sparse_y_pred``, per-class prediction scores)."""

    def __init__(self, num_classes: int, target_class_ids: Any, name: str | None = None, dtype: Any = None,
                 ignore_class: int | None = None, sparse_y_pred: bool = False, axis: int = -1) -> None:
        super().__init__(num_classes=num_classes, target_class_ids=target_class_ids, name=name, dtype=dtype,
                         ignore_class=ignore_class, sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self) -> dict:
        return {"num_classes": self.num_classes, "target_class_ids": self.target_class_ids, "name": self.name,
                "dtype": self.dtype, "ignore_class": self.ignore_class, "sparse_y_pred": self.sparse_y_pred,
                "axis": self.axis}


class OneHotMeanIoU(MeanIoU):
    """MeanIoU with one-hot labels (and, unless ``sparse_y_pred``, per-class prediction scores)."""

    def __init__(self, num_classes: int, name: str | None = None, dtype: Any = None, ignore_class: int | None = None,
                 sparse_y_pred: bool = False, axis: int = -1) -> None:
        super().__init__(num_classes=num_classes, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self) -> dict:
        return {"num_classes": self.num_classes, "name": self.name, "dtype": self.dtype,
                "ignore_class": self.ignore_class, "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


def pearson_correlation(y_true: Any, y_pred: Any, axis: int = -1) -> Tensor:
    """Pearson's r between ``y_true`` and ``y_pred`` along ``axis``."""
    y_pred = _t(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = _f32(y_pred)
    y_true, y_pred = _same_rank(mo.cast(_t(y_true), y_pred.dtype), y_pred)
    t = y_true - mo.reduce_mean(y_true, axis=axis, keepdims=True)
    p = y_pred - mo.reduce_mean(y_pred, axis=axis, keepdims=True)
    return mo.reduce_mean(t / _reduce_std(t, axis) * (p / _reduce_std(p, axis)), axis=axis)


def concordance_correlation(y_true: Any, y_pred: Any, axis: int = -1) -> Tensor:
    """Lin's concordance correlation along ``axis``, with Keras 3.15's covariance term
    ``(y_true - mean(y_pred)) * (y_pred - mean(y_pred))``."""
    y_pred = _t(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = _f32(y_pred)
    y_true, y_pred = _same_rank(mo.cast(_t(y_true), y_pred.dtype), y_pred)
    tm = mo.reduce_mean(y_true, axis=axis, keepdims=True)
    pm = mo.reduce_mean(y_pred, axis=axis, keepdims=True)
    norm = _reduce_var(y_true - tm, axis) + _reduce_var(y_pred - pm, axis) + mo.square(tm - pm)
    return mo.reduce_mean(2.0 * (y_true - pm) * (y_pred - pm) / (norm + _EPS), axis=axis)


class PearsonCorrelation(MeanMetricWrapper):
    def __init__(self, name: str = "pearson_correlation", dtype: Any = None, axis: int = -1) -> None:
        super().__init__(pearson_correlation, name=name, dtype=dtype, axis=axis)
        self.axis = axis


class ConcordanceCorrelation(MeanMetricWrapper):
    def __init__(self, name: str = "concordance_correlation", dtype: Any = None, axis: int = -1) -> None:
        super().__init__(concordance_correlation, name=name, dtype=dtype, axis=axis)
        self.axis = axis


class _SensitivitySpecificityBase(Metric):
    """tp/fp/tn/fn at ``num_thresholds`` evenly spaced thresholds in [0, 1] (``y_pred > threshold`` is positive);
    ``result`` is the best ``dependent`` rate among the thresholds whose ``constrained`` rate reaches ``value``."""

    _value_name = ""

    def __init__(self, value: float, num_thresholds: int = 200, class_id: int | None = None, name: str | None = None,
                 dtype: Any = None) -> None:
        if value < 0 or value > 1:
            raise ValueError(f"Argument `{self._value_name}` must be in the range [0, 1]. Received: "
                             f"{self._value_name}={value}")
        if num_thresholds <= 0:
            raise ValueError(f"Argument `num_thresholds` must be an integer > 0. Received: "
                             f"num_thresholds={num_thresholds}")
        self.value, self.num_thresholds, self.class_id = value, num_thresholds, class_id
        setattr(self, self._value_name, value)
        if num_thresholds == 1:
            t = [0.5]
        else:
            t = [0.0] + [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)] + [1.0]
        self.thresholds = np.asarray(t, _F)
        super().__init__(name=name, dtype=dtype)

    def _build_state(self) -> None:
        n = len(self.thresholds)
        self.true_positives = self.add_variable((n,), name="true_positives")
        self.false_positives = self.add_variable((n,), name="false_positives")
        self.true_negatives = self.add_variable((n,), name="true_negatives")
        self.false_negatives = self.add_variable((n,), name="false_negatives")

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        tp, fp, tn, fn = _confusion(y_true, y_pred, self.thresholds, sample_weight, class_id=self.class_id,
                                    evenly=self.num_thresholds > 1)
        self.true_positives.assign_add(tp)
        self.false_positives.assign_add(fp)
        self.true_negatives.assign_add(tn)
        self.false_negatives.assign_add(fn)

    def _rates(self) -> tuple[Tensor, Tensor, Tensor]:
        tp, fp = self.true_positives.value(), self.false_positives.value()
        tn, fn = self.true_negatives.value(), self.false_negatives.value()
        return _div_no_nan(tp, tp + fn), _div_no_nan(tn, tn + fp), _div_no_nan(tp, tp + fp)

    def _best(self, constrained: Tensor, dependent: Tensor) -> Tensor:
        feasible = mo.greater_equal(constrained, self.value)
        return mo.maximum(mo.reduce_max(mo.where(feasible, dependent, mo.zeros_like_(dependent))), 0.0)

    def get_config(self) -> dict:
        return {**super().get_config(), "class_id": self.class_id, "num_thresholds": self.num_thresholds,
                self._value_name: self.value}


class SensitivityAtSpecificity(_SensitivitySpecificityBase):
    """The best sensitivity (recall) among the thresholds whose specificity is >= ``specificity``."""

    _value_name = "specificity"

    def __init__(self, specificity: float, num_thresholds: int = 200, class_id: int | None = None,
                 name: str | None = None, dtype: Any = None) -> None:
        super().__init__(specificity, num_thresholds, class_id, name, dtype)

    def result(self) -> Tensor:
        sens, spec, _ = self._rates()
        return self._best(spec, sens)


class SpecificityAtSensitivity(_SensitivitySpecificityBase):
    """The best specificity among the thresholds whose sensitivity (recall) is >= ``sensitivity``."""

    _value_name = "sensitivity"

    def __init__(self, sensitivity: float, num_thresholds: int = 200, class_id: int | None = None,
                 name: str | None = None, dtype: Any = None) -> None:
        super().__init__(sensitivity, num_thresholds, class_id, name, dtype)

    def result(self) -> Tensor:
        sens, spec, _ = self._rates()
        return self._best(sens, spec)


class PrecisionAtRecall(_SensitivitySpecificityBase):
    """The best precision among the thresholds whose recall is >= ``recall``."""

    _value_name = "recall"

    def __init__(self, recall: float, num_thresholds: int = 200, class_id: int | None = None,
                 name: str | None = None, dtype: Any = None) -> None:
        super().__init__(recall, num_thresholds, class_id, name, dtype)

    def result(self) -> Tensor:
        rec, _, prec = self._rates()
        return self._best(rec, prec)


class RecallAtPrecision(_SensitivitySpecificityBase):
    """The best recall among the thresholds whose precision is >= ``precision``."""

    _value_name = "precision"

    def __init__(self, precision: float, num_thresholds: int = 200, class_id: int | None = None,
                 name: str | None = None, dtype: Any = None) -> None:
        super().__init__(precision, num_thresholds, class_id, name, dtype)

    def result(self) -> Tensor:
        rec, _, prec = self._rates()
        return self._best(prec, rec)


_BY_NAME = {
    "accuracy": Accuracy, "acc": Accuracy, "binary_accuracy": BinaryAccuracy,
    "categorical_accuracy": CategoricalAccuracy, "sparse_categorical_accuracy": SparseCategoricalAccuracy,
    "auc": AUC, "AUC": AUC, "precision": Precision, "recall": Recall, "mse": MeanSquaredError,
    "mean_squared_error": MeanSquaredError, "mae": MeanAbsoluteError, "mean_absolute_error": MeanAbsoluteError,
    "binary_crossentropy": BinaryCrossentropy, "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "top_k_categorical_accuracy": TopKCategoricalAccuracy,
    "sparse_top_k_categorical_accuracy": SparseTopKCategoricalAccuracy,
}


def get(identifier: Any) -> Metric:
    """A metric from a name, class or instance (``"accuracy"`` resolves in ``compile``)."""
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier)
        if cls is None:
            raise ValueError(f"Could not interpret metric identifier: {identifier!r}. Known: "
                             f"{', '.join(sorted(_BY_NAME))}")
        return cls()
    if callable(identifier):
        return MeanMetricWrapper(identifier, name=getattr(identifier, "__name__", "metric"))
    raise ValueError(f"Could not interpret metric identifier: {identifier!r}")


def serialize(metric: Any) -> Any:
    """Keras 3's ``{"module": "keras.metrics", "class_name", "config", "registered_name"}`` of a metric."""
    from tapeflow.keras.saving.serialization import serialize_keras_object

    return serialize_keras_object(metric)


def deserialize(config: Any, custom_objects: dict | None = None) -> Any:
    """The metric a name (a new instance, as Keras 3) or a ``serialize`` dict describes."""
    if isinstance(config, str):
        found = (custom_objects or {}).get(config)
        return found if found is not None else get(config)
    from tapeflow.keras.saving.serialization import deserialize_keras_object

    return deserialize_keras_object(config, custom_objects)


# Keras 3's tf.keras.metrics also exports these loss functions (the very same objects)

_LOSS_FUNCTIONS = {
    "MSE": "mean_squared_error", "mse": "mean_squared_error", "mean_squared_error": "mean_squared_error",
    "MAE": "mean_absolute_error", "mae": "mean_absolute_error", "mean_absolute_error": "mean_absolute_error",
    "MAPE": "mean_absolute_percentage_error", "mape": "mean_absolute_percentage_error",
    "mean_absolute_percentage_error": "mean_absolute_percentage_error",
    "MSLE": "mean_squared_logarithmic_error", "msle": "mean_squared_logarithmic_error",
    "mean_squared_logarithmic_error": "mean_squared_logarithmic_error",
    "KLD": "kl_divergence", "kld": "kl_divergence", "kullback_leibler_divergence": "kl_divergence",
    "kl_divergence": "kl_divergence", "logcosh": "log_cosh", "log_cosh": "log_cosh", "hinge": "hinge",
    "squared_hinge": "squared_hinge", "categorical_hinge": "categorical_hinge", "huber": "huber",
    "poisson": "poisson", "binary_focal_crossentropy": "binary_focal_crossentropy",
    "categorical_focal_crossentropy": "categorical_focal_crossentropy",
}

# Keras names tapeflow lacks: NotImplementedError (also an AttributeError, for hasattr)
from tapeflow.keras._missing import module_getattr as _module_getattr  # noqa: E402

_missing_getattr = _module_getattr("tf.keras.metrics", frozenset((
    "MeanRelativeError MeanTensor"
).split()))


def __getattr__(name: str) -> Any:
    # the loss functions load tf.keras.losses lazily (it imports this module's neighbours)
    if name in _LOSS_FUNCTIONS:
        return getattr(_losses(), _LOSS_FUNCTIONS[name])
    return _missing_getattr(name)


def __dir__() -> list:
    return sorted(set(globals()) | set(_LOSS_FUNCTIONS))
