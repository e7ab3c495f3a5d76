"""``tf.keras.ops``: Keras 3's backend-agnostic functions (NumPy-style, neural-network, core, math and
linear algebra), with Keras's dtype rules. On tensors they compute; on the ``KerasTensor``s of a
functional model they record an operation node, saved and loaded as Keras saves it.

>>> x = tf.keras.Input((4,))
>>> y = tf.keras.ops.sum(tf.keras.ops.square(x), axis=-1)
>>> model = tf.keras.Model(x, y)
"""

from __future__ import annotations

from typing import Any

from tapeflow.keras.ops import core, linalg, math, nn, numpy
from tapeflow.keras.ops import image  # noqa: F401 - keras.ops.image, a namespace of its own

_MODULES = (numpy, nn, core, math, linalg)

for _mod in _MODULES:
    for _name, _value in vars(_mod).items():
        if not _name.startswith("_") and callable(_value) and getattr(_value, "__module__", "") == _mod.__name__:
            globals()[_name] = _value
del _mod, _name, _value
# names whose defining module's __module__ is elsewhere (aliases kept by Keras under both names)
swish, hard_swish = nn.swish, nn.hard_swish

# Keras 3.15's keras.ops names tapeflow does not implement: NotImplementedError naming them
_UNSUPPORTED = frozenset(
    ("argpartition", "bartlett", "blackman", "corrcoef", "diagflat", "fmax", "fmin", "fmod", "gcd",
     "geomspace", "hamming", "hanning", "histogram", "i0", "kaiser", "lcm", "ldexp", "logaddexp2", "nanargmax",
     "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmedian", "nanmin", "nanpercentile", "nanprod",
     "nanquantile", "nanstd", "nansum", "nanvar", "nextafter", "slogdet", "trapezoid", "unravel_index", "vander",
     "vectorize", "view", "rearrange")
    + nn._UNSUPPORTED + core._UNSUPPORTED + math._UNSUPPORTED + linalg._UNSUPPORTED
) - frozenset(globals())


def __getattr__(name: str) -> Any:
    if name in _UNSUPPORTED:
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError(f"tf.keras.ops.{name} is not implemented in tapeflow")
    raise AttributeError(f"module 'tapeflow.keras.ops' has no attribute '{name}'")


__all__ = sorted(n for n in globals() if not n.startswith("_") and n not in ("annotations", "Any", "core", "math"))
