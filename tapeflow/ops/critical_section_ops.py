"""``tf.CriticalSection``: runs functions one at a time (a re-entrant-safe lock per section, held while ``fn``
runs), as TF's ``critical_section_ops``. tapeflow runs a traced function's ops in order on one thread, so inside
``tf.function`` the section serialises the Python calls that build it, as TF's ``ExecuteInCriticalSection``
serialises their runs."""

from __future__ import annotations

import threading
from typing import Any
from collections.abc import Callable

from tapeflow.framework import nest
from tapeflow.framework.context import executing_eagerly
from tapeflow.framework.tensor import Tensor, convert_to_tensor

__all__ = ["CriticalSection"]


class CriticalSection:
    """Critical section: ``execute(fn)`` runs ``fn`` while no other ``execute`` of this section runs, and returns
    its result with Python values made tensors.

    >>> cs = tf.CriticalSection()
    >>> v = tf.Variable(0)
    >>> cs.execute(lambda: v.assign_add(1)).numpy()
    1
    """

    def __init__(self, name: str | None = None, shared_name: str | None = None, critical_section_def: Any = None,
                 import_scope: Any = None) -> None:
        if critical_section_def is not None:
            raise NotImplementedError("tf.CriticalSection(critical_section_def=...) (a TF 1 graph's "
                                      "CriticalSectionDef) is not implemented in tapeflow")
        self._name = name or "CriticalSection"
        self._shared_name = shared_name or ""
        self._lock = threading.Lock()
        self._owner: int | None = None  # the thread running in the section

    @property
    def name(self) -> str:
        if executing_eagerly():  # TF's name is its handle's op name: undefined eagerly
            raise AttributeError("Tensor.op is undefined when eager execution is enabled.")
        return self._name

    def execute(self, fn: Callable, exclusive_resource_access: bool = True, name: str | None = None) -> Any:
        """Runs ``fn()`` inside the section and returns its result (nested structures kept, leaves as tensors).
        Calling ``execute`` of the same section from inside ``fn`` raises TF's ``ValueError`` (a deadlock)."""
        if self._owner == threading.get_ident():
            raise ValueError(f"Attempting to lock a CriticalSection (signature=('{self._shared_name}', {id(self)}, "
                             "'/job:localhost/replica:0/task:0/device:CPU:0')) in which we are already running. "
                             "This is illegal and may cause deadlocks.")
        with self._lock:
            self._owner = threading.get_ident()
            try:
                result = fn()
            finally:
                self._owner = None
        return nest.map_structure(lambda x: x if x is None or isinstance(x, Tensor) or hasattr(x, "_type_spec")
                                  else convert_to_tensor(x), result)
