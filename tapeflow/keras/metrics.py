"""``tf.keras.metrics``: streaming metrics (``update_state``, ``result``,
``reset_state``) with Keras 3's formulas.

State is kept as float32 NumPy accumulators (Keras keeps float32 variables),
updated from the values of the tensors passed in; ``result()`` returns a
float32 scalar tensor. Metrics are never differentiated.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework.tensor import Tensor, constant
from tapeflow.framework.variables import Variable

__all__ = ["Metric", "Mean", "Sum", "MeanMetricWrapper", "Accuracy", "BinaryAccuracy", "CategoricalAccuracy",
           "SparseCategoricalAccuracy", "AUC", "Precision", "Recall", "MeanSquaredError", "MeanAbsoluteError",
           "get"]

_F = np.float32


def _np(x: Any) -> np.ndarray:
    if isinstance(x, (Tensor, Variable)):
        return np.asarray(x.numpy())
    return np.asarray(x)


class Metric:
    """Base class of metrics."""

    def __init__(self, name: str | None = None, dtype: Any = None) -> None:
        from tapeflow.keras.layers.base import to_snake_case

        self.name = name or to_snake_case(type(self).__name__)
        self.dtype = dtype or "float32"
        self.reset_state()

    def reset_state(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def update_state(self, *args: Any, **kwargs: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__}.update_state must be implemented")

    def result(self) -> Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def reset_states(self) -> None:
        self.reset_state()

    def __call__(self, *args: Any, **kwargs: Any) -> Tensor:
        self.update_state(*args, **kwargs)
        return self.result()

    @property
    def variables(self) -> list:
        return []

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name}>"


def _weights_like(values: np.ndarray, sample_weight: Any) -> np.ndarray | None:
    if sample_weight is None:
        return None
    sw = _np(sample_weight).astype(_F)
    if sw.ndim == values.ndim + 1 and sw.shape[-1] == 1:
        sw = sw[..., 0]
    while sw.ndim < values.ndim:
        sw = sw[..., None]
    return np.broadcast_to(sw, values.shape)


class Mean(Metric):
    """The (weighted) mean of the values seen: ``total / count``."""

    def reset_state(self) -> None:
        self.total = _F(0.0)
        self.count = _F(0.0)

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        v = _np(values).astype(_F)
        sw = _weights_like(v, sample_weight)
        if sw is None:
            self.total = _F(self.total + v.sum(dtype=_F))
            self.count = _F(self.count + _F(v.size))
        else:
            self.total = _F(self.total + (v * sw).sum(dtype=_F))
            self.count = _F(self.count + sw.sum(dtype=_F))

    def result(self) -> Tensor:
        return constant(_F(self.total / self.count) if self.count else _F(0.0))


class Sum(Metric):
    def reset_state(self) -> None:
        self.total = _F(0.0)

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        v = _np(values).astype(_F)
        sw = _weights_like(v, sample_weight)
        self.total = _F(self.total + (v if sw is None else v * sw).sum(dtype=_F))

    def result(self) -> Tensor:
        return constant(self.total)


class MeanMetricWrapper(Mean):
    """Mean of ``fn(y_true, y_pred)`` over all samples seen."""

    def __init__(self, fn: Any, name: str | None = None, dtype: Any = None, **kwargs: Any) -> None:
        self._fn, self._fn_kwargs = fn, kwargs
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        super().update_state(self._fn(_np(y_true), _np(y_pred), **self._fn_kwargs), sample_weight)


def _squeeze_like(y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    if y_true.ndim == y_pred.ndim + 1 and y_true.shape[-1] == 1:
        return y_true[..., 0]
    return y_true


def accuracy(y_true: Any, y_pred: Any) -> np.ndarray:
    y_true, y_pred = _np(y_true), _np(y_pred)
    y_true = _squeeze_like(y_true, y_pred)
    return (y_true == y_pred.astype(y_true.dtype) if y_true.dtype != y_pred.dtype else y_true == y_pred).astype(_F)


def binary_accuracy(y_true: Any, y_pred: Any, threshold: float = 0.5) -> np.ndarray:
    y_true, y_pred = _np(y_true), _np(y_pred)
    y_true = _squeeze_like(y_true, y_pred)
    pred = (y_pred > threshold).astype(y_true.dtype if y_true.dtype.kind == "f" else _F)
    return np.mean((y_true.astype(pred.dtype) == pred).astype(_F), axis=-1)


def categorical_accuracy(y_true: Any, y_pred: Any) -> np.ndarray:
    y_true, y_pred = _np(y_true), _np(y_pred)
    return (np.argmax(y_true, -1) == np.argmax(y_pred, -1)).astype(_F)


def sparse_categorical_accuracy(y_true: Any, y_pred: Any) -> np.ndarray:
    y_true, y_pred = _np(y_true), _np(y_pred)
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = y_true[..., 0]
    return (y_true.astype(_F) == np.argmax(y_pred, -1).astype(_F)).astype(_F)


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
    y_true = _squeeze_like(y_true, y_pred)
    return np.mean(np.square(y_true.astype(_F) - y_pred.astype(_F)), axis=-1)


def _mae(y_true, y_pred):
    y_true = _squeeze_like(y_true, y_pred)
    return np.mean(np.abs(y_true.astype(_F) - y_pred.astype(_F)), axis=-1)


class MeanSquaredError(MeanMetricWrapper):
    def __init__(self, name: str = "mean_squared_error", dtype: Any = None) -> None:
        super().__init__(_mse, name=name, dtype=dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    def __init__(self, name: str = "mean_absolute_error", dtype: Any = None) -> None:
        super().__init__(_mae, name=name, dtype=dtype)


# ----------------------------------------------------------------------------
# Confusion-matrix metrics
# ----------------------------------------------------------------------------

def _confusion(y_true: np.ndarray, y_pred: np.ndarray, thresholds: np.ndarray, sample_weight: Any) -> tuple:
    """tp, fp, tn, fn per threshold (prediction > threshold is positive)."""
    y_true = _squeeze_like(y_true, y_pred).astype(bool) if y_true.dtype == bool else \
        (_squeeze_like(y_true, y_pred).astype(_F) > 0.5)
    y_true = np.broadcast_to(y_true, y_pred.shape).reshape(-1)
    pred = y_pred.astype(_F).reshape(-1)
    w = np.ones_like(pred) if sample_weight is None else \
        np.broadcast_to(_weights_like(y_pred.astype(_F), sample_weight), y_pred.shape).reshape(-1)
    above = pred[None, :] > thresholds[:, None]
    pos, neg = w * y_true, w * ~y_true
    tp = (above * pos).sum(1, dtype=_F)
    fp = (above * neg).sum(1, dtype=_F)
    fn = (~above * pos).sum(1, dtype=_F)
    tn = (~above * neg).sum(1, dtype=_F)
    return tp, fp, tn, fn


def _div(a: Any, b: Any) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1), 0).astype(_F)


class _Thresholded(Metric):
    def __init__(self, thresholds: Any = None, top_k: int | None = None, class_id: int | None = None,
                 name: str | None = None, dtype: Any = None) -> None:
        if top_k is not None:
            raise NotImplementedError(f"{type(self).__name__}(top_k=...) is not implemented in tapeflow")
        t = [0.5] if thresholds is None else ([thresholds] if np.ndim(thresholds) == 0 else list(thresholds))
        self.thresholds = np.asarray(t, _F)
        self._scalar = thresholds is None or np.ndim(thresholds) == 0
        self.class_id = class_id
        super().__init__(name=name, dtype=dtype)

    def reset_state(self) -> None:
        n = len(self.thresholds)
        self.true_positives = np.zeros(n, _F)
        self.false_positives = np.zeros(n, _F)
        self.false_negatives = np.zeros(n, _F)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_true, y_pred = _np(y_true), _np(y_pred)
        if self.class_id is not None:
            y_true, y_pred = y_true[..., self.class_id], y_pred[..., self.class_id]
        tp, fp, _, fn = _confusion(y_true, y_pred, self.thresholds, sample_weight)
        self.true_positives += tp
        self.false_positives += fp
        self.false_negatives += fn

    def _out(self, r: np.ndarray) -> Tensor:
        return constant(_F(r[0]) if self._scalar else r.astype(_F))


class Precision(_Thresholded):
    """tp / (tp + fp), with ``y_pred > thresholds`` (default 0.5) as positive."""

    def result(self) -> Tensor:
        return self._out(_div(self.true_positives, self.true_positives + self.false_positives))


class Recall(_Thresholded):
    """tp / (tp + fn), with ``y_pred > thresholds`` (default 0.5) as positive."""

    def result(self) -> Tensor:
        return self._out(_div(self.true_positives, self.true_positives + self.false_negatives))


class AUC(Metric):
    """Area under the ROC (or PR) curve from ``num_thresholds`` confusion
    matrices, with Keras' thresholds and Riemann summation."""

    def __init__(self, num_thresholds: int = 200, curve: str = "ROC", summation_method: str = "interpolation",
                 name: str | None = None, dtype: Any = None, thresholds: Any = None, multi_label: bool = False,
                 num_labels: int | None = None, label_weights: Any = None, from_logits: bool = False) -> None:
        if multi_label or label_weights is not None:
            raise NotImplementedError("AUC(multi_label=True / label_weights) is not implemented in tapeflow")
        self.curve = curve.upper()
        if self.curve not in ("ROC", "PR"):
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected values are ["ROC", "PR"]')
        self.summation_method = summation_method
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f"Invalid AUC summation method value: {summation_method!r}")
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
        super().__init__(name=name or "auc", dtype=dtype)

    def reset_state(self) -> None:
        n = self.num_thresholds
        self.true_positives = np.zeros(n, _F)
        self.false_positives = np.zeros(n, _F)
        self.true_negatives = np.zeros(n, _F)
        self.false_negatives = np.zeros(n, _F)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_pred = _np(y_pred).astype(_F)
        if self.from_logits:
            y_pred = (1.0 / (1.0 + np.exp(-y_pred))).astype(_F)
        tp, fp, tn, fn = _confusion(_np(y_true), y_pred, self.thresholds, sample_weight)
        self.true_positives += tp
        self.false_positives += fp
        self.true_negatives += tn
        self.false_negatives += fn

    def result(self) -> Tensor:
        tp, fp, tn, fn = self.true_positives, self.false_positives, self.true_negatives, self.false_negatives
        n = self.num_thresholds
        if self.curve == "PR" and self.summation_method == "interpolation":
            return constant(_F(self._pr_interpolation()))
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
        return constant(_F(np.sum((x[: n - 1] - x[1:]) * heights, dtype=_F)))

    def _pr_interpolation(self) -> float:
        # Davis & Goadrich interpolation between consecutive thresholds (Keras' PR "interpolation").
        tp, fp, fn = self.true_positives, self.false_positives, self.false_negatives
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
        pr_auc_inc = _div(prec_slope * (dtp + intercept * log_ratio), np.maximum(tp[1:] + fn[1:], 0))
        return float(np.sum(pr_auc_inc, dtype=_F))


_BY_NAME = {
    "accuracy": Accuracy, "acc": Accuracy, "binary_accuracy": BinaryAccuracy,
    "categorical_accuracy": CategoricalAccuracy, "sparse_categorical_accuracy": SparseCategoricalAccuracy,
    "auc": AUC, "AUC": AUC, "precision": Precision, "recall": Recall, "mse": MeanSquaredError,
    "mean_squared_error": MeanSquaredError, "mae": MeanAbsoluteError, "mean_absolute_error": MeanAbsoluteError,
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
        return MeanMetricWrapper(lambda yt, yp: _np(identifier(constant(yt), constant(yp))),
                                 name=getattr(identifier, "__name__", "metric"))
    raise ValueError(f"Could not interpret metric identifier: {identifier!r}")
