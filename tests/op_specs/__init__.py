"""Gradient-check specs, one module per op family.

Each module defines ``SPECS``: a list of ``OpSpec``. The registry-wide test
(tests/test_op_gradients.py) requires every differentiable registered op to
be exercised by at least one spec, and checks each spec's gradients against
central finite differences, first and (unless ``order=1``) second order.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Any
from collections.abc import Callable

import numpy as np


@dataclasses.dataclass
class Arg:
    """One input: a random float64 array of ``shape`` in [low, high), or a
    fixed ``value`` (integer indices, attrs passed as tensors)."""

    shape: tuple = ()
    low: float = -2.0
    high: float = 2.0
    value: Any = None
    diff: bool = True  # differentiate w.r.t. it (float inputs only)
    dtype: Any = np.float64

    def make(self, rng: np.random.Generator) -> np.ndarray:
        if self.value is not None:
            return np.array(self.value, dtype=np.asarray(self.value).dtype if self.dtype is None else None)
        return rng.uniform(self.low, self.high, size=self.shape).astype(self.dtype)


@dataclasses.dataclass
class OpSpec:
    op: str  # the registered op name this spec must exercise
    fn: Callable  # fn(*tensors) -> Tensor or list of Tensors
    args: list
    order: int = 2
    rtol: float = 1e-5
    atol: float = 1e-6
    eps: float = 1e-6
    name: str = ""

    @property
    def id(self) -> str:
        return f"{self.op}-{self.name}" if self.name else self.op


def all_specs() -> list:
    specs = []
    for mod in pkgutil.iter_modules(__path__):
        m = importlib.import_module(f"{__name__}.{mod.name}")
        specs.extend(getattr(m, "SPECS", []))
    return specs
