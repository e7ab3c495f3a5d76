"""The C math library, for kernels that must call the same ``logf``/``sincosf``/``log1pf`` as TF's.

Loaded on first use: ``ctypes.util.find_library`` runs ``ldconfig`` in a subprocess (tens of
milliseconds), so the usual name is tried first and nothing is loaded at import.
"""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def libm() -> Any:
    """The C math library (a ``ctypes.CDLL``), or None where there is none to load."""
    import ctypes

    for name in ("libm.so.6", None):
        try:
            if name is None:
                import ctypes.util

                name = ctypes.util.find_library("m")
                if name is None:
                    return None
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None
