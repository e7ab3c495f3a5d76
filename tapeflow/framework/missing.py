"""Names tapeflow does not implement: a module's ``__getattr__`` built here raises an error that is both a
NotImplementedError (it says what is missing) and an AttributeError (so ``hasattr`` and
``getattr(module, name, default)`` keep working). Used by ``tf.train`` and the Keras namespaces."""

from __future__ import annotations

from collections.abc import Callable

from tapeflow.framework.errors import NotImplementedInTapeflowError


def module_getattr(module: str, missing: frozenset) -> Callable:
    """A module-level ``__getattr__`` for ``module`` that names each of ``missing`` as not implemented."""
    def module_getattr_(name: str):
        if name in missing:
            raise NotImplementedInTapeflowError(f"{module}.{name} is not implemented in tapeflow")
        raise AttributeError(f"module '{module}' has no attribute '{name}'")

    return module_getattr_


class NotBuilt:
    """A class attribute that raises the same error: a name of a TF namespace class (``tf.random.experimental``,
    ``tf.config.experimental``) that tapeflow does not build."""

    def __init__(self, qualname: str) -> None:
        self._qualname = qualname

    def __get__(self, obj: object, owner: type) -> None:
        raise NotImplementedInTapeflowError(f"{self._qualname} is not implemented in tapeflow")
