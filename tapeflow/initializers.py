"""TF2's top-level initializers (``tf.zeros_initializer()``,
``tf.random_normal_initializer(...)``, ...): callables ``init(shape, dtype)``
returning a tensor, used with ``tf.Variable`` in ``tf.Module`` code.

Random ones draw through ``tf.random`` with TF's seed rules; the numbers are
NumPy's, not TF's bit streams (see tapeflow/ops/random_ops.py).
"""

from __future__ import annotations

from typing import Any

from tapeflow.framework import dtypes


class Initializer:
    """Base class: ``__call__(shape, dtype=tf.float32)`` returns a tensor."""

    def __call__(self, shape: Any, dtype: Any = dtypes.float32, **kwargs: Any):
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(shape, dtype)")

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> Initializer:
        return cls(**config)


def _float(dtype: Any, who: str) -> dtypes.DType:
    d = dtypes.as_dtype(dtype)
    if not d.is_floating:
        raise ValueError(f"{who}: expected a floating dtype, got {d.name}.")
    return d


class Zeros(Initializer):
    def __call__(self, shape: Any, dtype: Any = dtypes.float32, **kwargs: Any):
        from tapeflow.ops import array_ops

        return array_ops.zeros(shape, dtype=dtypes.as_dtype(dtype))


class Ones(Initializer):
    def __call__(self, shape: Any, dtype: Any = dtypes.float32, **kwargs: Any):
        from tapeflow.ops import array_ops

        return array_ops.ones(shape, dtype=dtypes.as_dtype(dtype))


class Constant(Initializer):
    def __init__(self, value: Any = 0) -> None:
        self.value = value

    def __call__(self, shape: Any, dtype: Any = dtypes.float32, **kwargs: Any):
        from tapeflow.framework.tensor import constant

        return constant(self.value, dtype=dtypes.as_dtype(dtype), shape=shape)

    def get_config(self) -> dict:
        return {"value": self.value}


class RandomNormal(Initializer):
    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: int | None = None) -> None:
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape: Any, dtype: Any = dtypes.float32, **kwargs: Any):
        from tapeflow import random

        return random.normal(shape, self.mean, self.stddev, dtype=_float(dtype, "RandomNormal"), seed=self.seed)

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class RandomUniform(Initializer):
    def __init__(self, minval: float = -0.05, maxval: float = 0.05, seed: int | None = None) -> None:
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape: Any, dtype: Any = dtypes.float32, **kwargs: Any):
        from tapeflow import random

        return random.uniform(shape, self.minval, self.maxval, dtype=dtypes.as_dtype(dtype), seed=self.seed)

    def get_config(self) -> dict:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_normal_initializer = RandomNormal
random_uniform_initializer = RandomUniform
