"""Merging layers for functional models: Add, Subtract, Multiply, Average,
Maximum, Minimum, Concatenate (each takes a list of tensors)."""

from __future__ import annotations

from typing import Any

from tapeflow.framework.tensor import Tensor
from tapeflow.keras.layers.base import Layer
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo

__all__ = ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate"]


class _Merge(Layer):
    _min_inputs = 2

    def _check(self, inputs: Any) -> list:
        if not isinstance(inputs, (list, tuple)) or len(inputs) < self._min_inputs:
            raise ValueError(f"A `{type(self).__name__}` layer should be called on a list of at least "
                             f"{self._min_inputs} inputs. Received: inputs={inputs!r}")
        return list(inputs)

    def _merge(self, xs: list) -> Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def call(self, inputs: Any) -> Tensor:
        return self._merge(self._check(inputs))


class Add(_Merge):
    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = mo.add(out, x)
        return out


class Subtract(_Merge):
    def _merge(self, xs):
        if len(xs) != 2:
            raise ValueError(f"A `Subtract` layer should be called on exactly 2 inputs. Received {len(xs)}")
        return mo.subtract(xs[0], xs[1])


class Multiply(_Merge):
    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = mo.multiply(out, x)
        return out


class Average(_Merge):
    def _merge(self, xs):
        return Add._merge(self, xs) / float(len(xs))


class Maximum(_Merge):
    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = mo.maximum(out, x)
        return out


class Minimum(_Merge):
    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = mo.minimum(out, x)
        return out


class Concatenate(_Merge):
    def __init__(self, axis: int = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = axis

    def _merge(self, xs):
        return ao.concat(xs, axis=self.axis)


# Keras' functional forms: ``layers.concatenate([a, b])`` is ``layers.Concatenate()([a, b])``
def add(inputs: Any, **kwargs: Any) -> Any:
    return Add(**kwargs)(inputs)


def subtract(inputs: Any, **kwargs: Any) -> Any:
    return Subtract(**kwargs)(inputs)


def multiply(inputs: Any, **kwargs: Any) -> Any:
    return Multiply(**kwargs)(inputs)


def average(inputs: Any, **kwargs: Any) -> Any:
    return Average(**kwargs)(inputs)


def maximum(inputs: Any, **kwargs: Any) -> Any:
    return Maximum(**kwargs)(inputs)


def minimum(inputs: Any, **kwargs: Any) -> Any:
    return Minimum(**kwargs)(inputs)


def concatenate(inputs: Any, axis: int = -1, **kwargs: Any) -> Any:
    return Concatenate(axis=axis, **kwargs)(inputs)
