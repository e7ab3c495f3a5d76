"""Helpers shared by the keras_* programs: JSON-able results from tensors/arrays."""
import numpy as np


def r(x, nd=6):
    """A tensor, array or number as nested lists of floats rounded to nd significant-ish digits."""
    a = np.asarray(x.numpy() if hasattr(x, "numpy") else x)
    if a.dtype.kind in "iub":
        return a.tolist()
    return np.round(a.astype(np.float64), nd).tolist()


def hist(h, nd=6):
    return {k: [round(float(v), nd) for v in vs] for k, vs in sorted(h.history.items())}


def exc(fn):
    """The exception type name fn() raises, or 'no error'."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__
    return "no error"
