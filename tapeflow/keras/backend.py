"""``tf.keras.backend``: the few helpers TF2 code still calls."""

from __future__ import annotations

from tapeflow.keras.layers.base import clear_session

__all__ = ["clear_session", "epsilon", "floatx"]


def epsilon() -> float:
    return 1e-7


def floatx() -> str:
    return "float32"
