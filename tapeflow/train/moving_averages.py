"""``tf.train.ExponentialMovingAverage``: shadow variables that follow variables' exponential moving averages,
TF's update ``shadow -= (shadow - variable) * (1 - decay)`` with the decay in float32 (and, with ``num_updates``,
``min(decay, (1 + num_updates) / (10 + num_updates))``)."""

from __future__ import annotations

from typing import Any

from tapeflow.framework import dtypes
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.framework.variables import Variable
from tapeflow.ops import math_ops

__all__ = ["ExponentialMovingAverage"]


class ExponentialMovingAverage:
    """Maintains moving averages of variables: ``apply(var_list)`` creates a shadow variable per variable (first
    its value) and moves each toward it; ``average(var)`` is the shadow.

    >>> v = tf.Variable(1.0)
    >>> ema = tf.train.ExponentialMovingAverage(decay=0.9)
    >>> ema.apply([v])
    >>> v.assign(2.0)
    >>> ema.apply([v])
    >>> float(ema.average(v))
    1.1
    """

    def __init__(self, decay: Any, num_updates: Any = None, zero_debias: bool = False,
                 name: str = "ExponentialMovingAverage") -> None:
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict = {}

    @property
    def name(self) -> str:
        return self._name

    def apply(self, var_list: Any = None) -> None:
        """Creates the missing shadow variables and updates every shadow of ``var_list``."""
        if var_list is None:
            raise NotImplementedError("tf.train.ExponentialMovingAverage.apply() without var_list (TF 1's trainable "
                                      "variables collection) is not implemented in tapeflow; pass the variables")
        for v in var_list:
            if isinstance(v, Tensor):
                raise TypeError("tf.train.ExponentialMovingAverage does not support non-Variable tensors when eager "
                                "execution is enabled.")
        for v in var_list:
            if v.dtype not in (dtypes.float16, dtypes.float32, dtypes.float64):
                raise TypeError(f"The variables must be half, float, or double: {v.name}")
            if v.ref() not in self._averages:
                self._averages[v.ref()] = Variable(v.read_value(), trainable=False,
                                                   name=f"{v.name.split(':')[0]}/{self._name}")
        decay = convert_to_tensor(self._decay, dtype=dtypes.float32)
        if self._num_updates is not None:
            n = math_ops.cast(self._num_updates, dtypes.float32)
            decay = math_ops.minimum(decay, (1.0 + n) / (10.0 + n))
        for v in var_list:
            avg = self._averages[v.ref()]
            rate = math_ops.subtract(convert_to_tensor(1.0, dtype=dtypes.float32), decay)
            if rate.dtype != avg.dtype:
                rate = math_ops.cast(rate, avg.dtype)
            avg.assign_sub((avg - v) * rate)

    def average(self, var: Any) -> Variable | None:
        """The shadow variable of ``var`` (None before ``apply`` saw it)."""
        return self._averages.get(var.ref(), None)

    def average_name(self, var: Any) -> str:
        """The shadow variable's name (TF 1 savers restore by it)."""
        if var.ref() in self._averages:
            return self._averages[var.ref()].name.split(":")[0]
        return f"{var.name.split(':')[0]}/{self._name}"

    def variables_to_restore(self, moving_avg_variables: Any = None) -> dict:
        """``{average_name(v): v}`` for the averaged variables (TF 1's restore map)."""
        averaged = moving_avg_variables if moving_avg_variables is not None else [
            a for a in self._averages]
        out = {}
        for v in averaged:
            var = v.deref() if hasattr(v, "deref") else v
            out[self.average_name(var)] = var
        return out
