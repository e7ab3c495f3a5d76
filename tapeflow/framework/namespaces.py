"""The public namespace modules (``tapeflow`` itself, ``tf.math``, ``tf.nn``) by name.

The package's top level (``tapeflow/__init__.py``) registers them as it builds them, so code in the
layers below that must reach a public name (tf.ragged and tf.sparse install their dispatching versions
of ``tf.add``, ``tf.math.*``; the debug mode wraps ``tf.constant``) gets it here instead of importing the
package from below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_MODULES: dict[str, Any] = {}
_ON_REGISTER: list = []


def register(name: str, module: Any) -> None:
    """Registers a public namespace module (called by tapeflow/__init__.py)."""
    _MODULES[name] = module
    for fn in _ON_REGISTER:
        fn(name, module)


def get(name: str) -> Any:
    """The registered namespace module ``name`` ("tapeflow", "math", "nn"); KeyError before registration."""
    return _MODULES[name]


def registered() -> dict[str, Any]:
    return dict(_MODULES)


def on_register(fn: Callable[[str, Any], None]) -> None:
    """Calls ``fn(name, module)`` for each namespace registered from now on."""
    _ON_REGISTER.append(fn)
