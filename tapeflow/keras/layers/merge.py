"""Merging layers for functional models: Add, Subtract, Multiply, Average,
Maximum, Minimum, Concatenate, Dot (each takes a list of tensors)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework.tensor import Tensor
from tapeflow.keras.layers.base import Layer
from tapeflow.keras.saving.serialization import base_config
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo

__all__ = ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate", "Dot", "dot"]


def _ops() -> Any:
    # keras.ops, whose functions promote mixed dtypes as Keras's merge layers do (int64 and float32 give
    # float32); imported on first use, as keras.ops builds on this package
    from tapeflow.keras import ops

    return ops


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
            out = _ops().add(out, x)
        return out


class Subtract(_Merge):
    def _merge(self, xs):
        if len(xs) != 2:
            raise ValueError(f"A `Subtract` layer should be called on exactly 2 inputs. Received {len(xs)}")
        return _ops().subtract(xs[0], xs[1])


class Multiply(_Merge):
    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = _ops().multiply(out, x)
        return out


class Average(_Merge):
    def _merge(self, xs):
        return Add._merge(self, xs) / float(len(xs))


class Maximum(_Merge):
    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = _ops().maximum(out, x)
        return out


class Minimum(_Merge):
    def _merge(self, xs):
        out = xs[0]
        for x in xs[1:]:
            out = _ops().minimum(out, x)
        return out


class Concatenate(_Merge):
    def __init__(self, axis: int = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = axis

    def _merge(self, xs):
        return _ops().concatenate(xs, axis=self.axis)


class Dot(_Merge):
    """Keras 3's ``batch_dot`` of two tensors over ``axes`` (an int, or one axis per input; never the batch
    axis): the output has the first input's other axes, then the second's (``(b, n), (b, n) -> (b, 1)``;
    ``(b, n, d), (b, m, d)`` with ``axes=2`` -> ``(b, n, m)``). ``normalize=True`` L2-normalizes both along
    ``axes`` first (the dot product is then the cosine similarity)."""

    _supports_masking = True

    def __init__(self, axes: Any, normalize: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(axes, int):
            if not isinstance(axes, (list, tuple)):
                raise TypeError(f"Invalid type for argument `axes`: it should be a list or an int. "
                                f"Received: axes={axes}")
            if len(axes) != 2:
                raise ValueError(f"Invalid format for argument `axes`: it should contain two elements. "
                                 f"Received: axes={axes}")
            if not isinstance(axes[0], int) or not isinstance(axes[1], int):
                raise ValueError(f"Invalid format for argument `axes`: list elements should be integers. "
                                 f"Received: axes={axes}")
        self.axes, self.normalize = axes, normalize

    def get_config(self) -> dict:
        return {**base_config(self), "axes": self.axes, "normalize": self.normalize}

    def _merge(self, xs: list) -> Tensor:
        if len(xs) != 2:
            raise ValueError(f"A `Dot` layer should be called on exactly 2 inputs. Received: inputs={xs}")
        x, y = xs
        xs_, ys_ = x._shape_tuple(), y._shape_tuple()
        if len(xs_) < 2 or len(ys_) < 2:
            raise ValueError(f"Cannot do batch_dot on inputs with rank < 2. Received inputs with shapes "
                             f"{xs_} and {ys_}.")
        given = [self.axes, self.axes] if isinstance(self.axes, int) else list(self.axes)
        a0, a1 = given[0] % len(xs_), given[1] % len(ys_)
        if 0 in (a0, a1):
            raise ValueError("Cannot perform batch_dot over axis 0. If your inputs are not batched, add a dummy "
                             "batch dimension to your inputs using keras.ops.expand_dims(x, 0)")
        if None not in (xs_[a0], ys_[a1]) and xs_[a0] != ys_[a1]:
            raise ValueError(f"Incompatible input shapes: axis values {xs_[a0]} (at axis {a0}) != {ys_[a1]} "
                             f"(at axis {a1}). Full input shapes: {xs_}, {ys_}")
        if self.normalize:
            from tapeflow import nn

            x, y = nn.l2_normalize(x, axis=a0), nn.l2_normalize(y, axis=a1)
        # (b, x-rest..., k) @ (b, k, y-rest...) as one batched matmul
        x_rest = [i for i in range(1, len(xs_)) if i != a0]
        y_rest = [i for i in range(1, len(ys_)) if i != a1]
        xt = ao.transpose(x, [0, *x_rest, a0])
        yt = ao.transpose(y, [0, a1, *y_rest])
        dims_x, dims_y = [xs_[i] for i in x_rest], [ys_[i] for i in y_rest]
        if None in dims_x + dims_y:
            raise NotImplementedError("Dot: inputs with unknown non-batch dimensions are not supported in tapeflow")
        k = xs_[a0] if xs_[a0] is not None else ys_[a1]
        nx, ny = int(np.prod(dims_x, dtype=np.int64)), int(np.prod(dims_y, dtype=np.int64))
        out = mo.matmul(ao.reshape(xt, (-1, nx, k)), ao.reshape(yt, (-1, k, ny)))
        shape = dims_x + dims_y
        return ao.reshape(out, (-1, *shape) if shape else (-1, 1))  # rank 1 becomes (batch, 1), as Keras


def dot(inputs: Any, axes: Any = -1, **kwargs: Any) -> Any:
    """``layers.Dot(axes, **kwargs)(inputs)``."""
    return Dot(axes=axes, **kwargs)(inputs)


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
