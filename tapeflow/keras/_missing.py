"""Keras names tapeflow does not implement: looking one up raises an error that is both a
NotImplementedError (it says what is missing) and an AttributeError (so ``hasattr`` and
``getattr(module, name, default)`` keep working). Built by ``tapeflow.framework.missing``."""

from tapeflow.framework.missing import module_getattr  # noqa: F401 - the Keras namespaces import it from here
