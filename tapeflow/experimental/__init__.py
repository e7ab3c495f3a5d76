"""``tf.experimental``: the parts tapeflow has (``RowPartition``, ``DynamicRaggedShape``, ``Optional``,
``numpy``); any other name raises ``NotImplementedError`` naming it."""

from __future__ import annotations

from tapeflow.experimental.optional import Optional
from tapeflow.framework import errors
from tapeflow.ops import ragged as _ragged  # noqa: F401 - registers tf.reshape/zeros/ones/fill for these shapes
from tapeflow.ops.ragged.dynamic_ragged_shape import DynamicRaggedShape, RowPartition

__all__ = ["DynamicRaggedShape", "Optional", "RowPartition"]


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    if name == "numpy":  # tf.experimental.numpy loads on first use
        import importlib

        mod = importlib.import_module("tapeflow.experimental.numpy")
        globals()[name] = mod
        return mod
    raise errors.NotImplementedInTapeflowError(f"tf.experimental.{name} is not implemented in tapeflow")
