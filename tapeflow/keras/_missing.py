"""Keras names tapeflow does not implement: looking one up raises an error that is both a
NotImplementedError (it says what is missing) and an AttributeError (so ``hasattr`` and
``getattr(module, name, default)`` keep working)."""

from __future__ import annotations

from collections.abc import Callable


from tapeflow.framework.errors import NotImplementedInTapeflowError  # noqa: E402 - shared with tf.*


def module_getattr(module: str, missing: frozenset) -> Callable:
    def module_getattr_(name: str):
        if name in missing:
            raise NotImplementedInTapeflowError(f"{module}.{name} is not implemented in tapeflow")
        raise AttributeError(f"module '{module}' has no attribute '{name}'")

    return module_getattr_
