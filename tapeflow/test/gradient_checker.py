"""``tf.test.compute_gradient``: theoretical vs numerical Jacobians (as TF's
gradient_checker_v2)."""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

import numpy as np

from tapeflow.eager.backprop import GradientTape
from tapeflow.framework.indexed_slices import IndexedSlices
from tapeflow.framework.tensor import Tensor, convert_to_tensor


def _to_numpy(x: Any) -> np.ndarray:
    if isinstance(x, IndexedSlices):
        x = convert_to_tensor(x)
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _theoretical(f: Callable, xs: list, param: int, y_shape: tuple, y_dtype) -> np.ndarray:
    x = xs[param]
    x_size = int(np.prod(x.shape, dtype=np.int64))
    y_size = int(np.prod(y_shape, dtype=np.int64))
    jac = np.zeros((y_size, x_size), dtype=x.dtype)
    dy = np.zeros(y_shape, dtype=y_dtype)
    flat = dy.reshape(-1)
    for row in range(y_size):
        flat[row] = 1
        xt = [convert_to_tensor(v) for v in xs]
        with GradientTape() as tape:
            tape.watch(xt[param])
            y = convert_to_tensor(f(*xt))
        g = tape.gradient(y, xt[param], output_gradients=convert_to_tensor(dy))
        if g is not None:
            jac[row, :] = _to_numpy(g).reshape(-1)
        flat[row] = 0
    return jac


def _numerical(f: Callable, xs: list, param: int, y_size: int, delta: float) -> np.ndarray:
    x = xs[param]
    x_size = int(np.prod(x.shape, dtype=np.int64))
    jac = np.zeros((y_size, x_size), dtype=x.dtype)
    base = x.reshape(-1)
    for col in range(x_size):
        orig = base[col]
        base[col] = orig + delta
        y_pos = _to_numpy(f(*[convert_to_tensor(v) for v in xs])).astype(np.float64)
        base[col] = orig - delta
        y_neg = _to_numpy(f(*[convert_to_tensor(v) for v in xs])).astype(np.float64)
        base[col] = orig
        jac[:, col] = ((y_pos - y_neg) / (2 * delta)).reshape(-1)
    return jac


def compute_gradient(f: Callable, x: Any, delta: float | None = None) -> tuple:
    """Theoretical and numerical Jacobians of ``f`` w.r.t. each of ``x``.

    Returns ``(theoretical, numerical)``: tuples with one 2-D array per
    argument, of shape ``(y_size, x_size)``.

    >>> t, n = tf.test.compute_gradient(lambda x: x * x, [tf.constant(3.0)])
    """
    if not isinstance(x, (list, tuple)):
        raise ValueError(
            f"`x` must be a list or tuple of values convertible to a Tensor (arguments to `f`), not a {type(x)}"
        )
    if delta is None:
        delta = 1.0 / 1024
    xs = [np.array(_to_numpy(convert_to_tensor(v)), copy=True) for v in x]
    for i, v in enumerate(xs):
        if v.dtype.kind not in "fc":
            raise TypeError(f"Cannot compute gradient for unsupported type {v.dtype} of argument {i}")
    y = f(*[convert_to_tensor(v) for v in xs])
    y = convert_to_tensor(y) if not isinstance(y, Tensor) else y
    y_shape, y_dtype = tuple(y.shape.as_list()), y._value.dtype
    y_size = int(np.prod(y_shape, dtype=np.int64))
    theo = tuple(_theoretical(f, xs, i, y_shape, y_dtype) for i in range(len(xs)))
    num = tuple(_numerical(f, xs, i, y_size, delta) for i in range(len(xs)))
    return theo, num


def max_error(grad1: Any, grad2: Any) -> float:
    """The largest elementwise difference between two lists of Jacobians."""
    err = 0.0
    for a, b in zip(grad1, grad2):
        if np.asarray(a).size:
            err = max(err, float(np.max(np.abs(np.asarray(a) - np.asarray(b)))))
    return err
