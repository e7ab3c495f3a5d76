"""``keras.ops.core`` (also flat in ``keras.ops``): casts, conversion, shapes, control flow and
scatters, as Keras 3's TensorFlow backend does them."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from tapeflow.framework import nest
from tapeflow.keras import backend as _backend
from tapeflow.keras.layers import base as _layers
from tapeflow.keras.ops._base import convert, keras_op, tf

_std = _backend.standardize_dtype


@keras_op("Cast", "core")
def cast(x: Any, dtype: Any) -> Any:
    """``keras.ops.cast``: ``x`` as ``dtype`` (a Keras dtype name or any TF dtype)."""
    return tf().cast(convert(x), _std(dtype))


@keras_op("SaturateCast", "core")
def saturate_cast(x: Any, dtype: Any) -> Any:
    """``keras.ops.saturate_cast``: a cast that clips to ``dtype``'s range first (no wrap-around)."""
    return tf().dtypes.saturate_cast(convert(x), _std(dtype))


@keras_op("ConvertToTensor", "core")
def convert_to_tensor(x: Any, dtype: Any = None, sparse: Any = None, ragged: Any = None) -> Any:
    """``keras.ops.convert_to_tensor``: a float list becomes ``floatx()``, an int list int32."""
    if isinstance(x, _layers.KerasTensor):
        return x
    return convert(x, dtype)


def convert_to_numpy(x: Any) -> np.ndarray:
    """``keras.ops.convert_to_numpy``: a NumPy array of ``x``."""
    if isinstance(x, _layers.KerasTensor):
        raise ValueError("A symbolic tensor (usually the result of applying an operation to a keras.Input), cannot "
                         "be converted to a numpy array. This happens when you try to call `np.array` on a "
                         "KerasTensor. Use keras.ops functions on symbolic tensors instead.")
    return np.array(x.numpy() if hasattr(x, "numpy") else x)


def is_tensor(x: Any) -> bool:
    """``keras.ops.is_tensor``: whether ``x`` is a backend (TF) tensor."""
    return tf().is_tensor(x)


def shape(x: Any) -> tuple:
    """``keras.ops.shape``: a tuple of ints, with scalar tensors for dimensions unknown until run time."""
    if isinstance(x, _layers.KerasTensor):
        return tuple(x.shape)
    x = convert(x)
    static = tuple(x.shape)
    if None not in static:
        return static
    dynamic = tf().shape(x)
    return tuple(dynamic[i] if d is None else d for i, d in enumerate(static))


def dtype(x: Any) -> str:
    """``keras.ops.dtype``: the Keras name of ``x``'s dtype (``"float32"``)."""
    return _std(x.dtype if hasattr(x, "dtype") else convert(x).dtype)


@keras_op("StopGradient", "core")
def stop_gradient(variable: Any) -> Any:
    """``keras.ops.stop_gradient``: the value, with no gradient flowing back."""
    return tf().stop_gradient(variable)


@keras_op("Unstack", "core")
def unstack(x: Any, num: int | None = None, axis: int = 0) -> Any:
    """``keras.ops.unstack``: the list of slices along ``axis``."""
    return tf().unstack(convert(x), num, axis=axis)


@keras_op("Scatter", "core", tensors=2)
def scatter(indices: Any, values: Any, shape: Any) -> Any:
    """``keras.ops.scatter``: a zero tensor of ``shape`` with ``values`` added at ``indices``."""
    return tf().scatter_nd(convert(indices), convert(values), shape)


@keras_op("ScatterUpdate", "core", tensors=3)
def scatter_update(inputs: Any, indices: Any, updates: Any, reduction: str | None = None) -> Any:
    """``keras.ops.scatter_update``: ``inputs`` with ``updates`` written (or, with ``reduction``
    ``"add"``/``"max"``/``"min"``/``"mul"``, combined) at ``indices``."""
    t = tf()
    x, idx, upd = convert(inputs), convert(indices), convert(updates)
    if reduction is None:
        return t.tensor_scatter_nd_update(x, idx, upd)
    if reduction == "add":
        return t.tensor_scatter_nd_add(x, idx, upd)
    if reduction == "max":
        return t.tensor_scatter_nd_max(x, idx, upd)
    if reduction == "min":
        return t.tensor_scatter_nd_min(x, idx, upd)
    if reduction == "mul":
        # no tensor_scatter_nd_mul in TF: multiply each indexed slice in turn (repeated indices compound)
        out = x
        for i in range(int(idx.shape[0])):
            at = idx[i:i + 1]
            out = t.tensor_scatter_nd_update(out, at, t.gather_nd(out, at) * upd[i])
        return out
    raise ValueError(f"Unsupported reduction: {reduction}. Supported reductions are None, 'add', 'mul', 'max', "
                     "and 'min'.")


@keras_op("Slice", "core", tensors=2)
def slice(inputs: Any, start_indices: Any, shape: Any) -> Any:  # noqa: A001 - Keras's name
    """``keras.ops.slice``: the block of ``shape`` starting at ``start_indices``."""
    return tf().slice(convert(inputs), start_indices, shape)


@keras_op("SliceUpdate", "core", tensors=3)
def slice_update(inputs: Any, start_indices: Any, updates: Any) -> Any:
    """``keras.ops.slice_update``: ``inputs`` with the block at ``start_indices`` replaced by ``updates``."""
    t = tf()
    x, upd = convert(inputs), convert(updates)
    start = [int(s) for s in (start_indices.numpy() if hasattr(start_indices, "numpy") else start_indices)]
    grids = np.meshgrid(*(np.arange(s, s + n) for s, n in zip(start, tuple(upd.shape))), indexing="ij")
    idx = np.stack(grids, axis=-1).astype(np.int64)
    return t.tensor_scatter_nd_update(x, idx, t.cast(upd, x.dtype))


def cond(pred: Any, true_fn: Callable, false_fn: Callable) -> Any:
    """``keras.ops.cond``: ``true_fn()`` if ``pred`` else ``false_fn()`` (``tf.cond``)."""
    return tf().cond(pred, true_fn, false_fn)


def switch(index: Any, branches: list, *operands: Any) -> Any:
    """``keras.ops.switch``: ``branches[index](*operands)``, the index clipped to the branches."""
    t = tf()
    index = t.clip_by_value(convert(index, "int32"), 0, len(branches) - 1)
    return t.switch_case(index, [(lambda b=b: b(*operands)) for b in branches])


def while_loop(cond: Callable, body: Callable, loop_vars: Any, maximum_iterations: int | None = None) -> Any:
    """``keras.ops.while_loop``: ``body`` while ``cond``; a tuple/list of ``loop_vars`` is unpacked
    into both, a single value passed as it is."""
    is_tuple = isinstance(loop_vars, (tuple, list))
    loop_vars = tuple(loop_vars) if is_tuple else (loop_vars,)

    def _body(*args: Any) -> tuple:
        out = body(*args)
        return tuple(out) if is_tuple else (out,)

    out = tf().while_loop(cond, _body, loop_vars, maximum_iterations=maximum_iterations)
    return out if is_tuple else out[0]


def fori_loop(lower: Any, upper: Any, body_fun: Callable, init_val: Any) -> Any:
    """``keras.ops.fori_loop``: ``val = body_fun(i, val)`` for ``i`` from ``lower`` to ``upper``."""
    return tf().while_loop(lambda i, val: i < upper, lambda i, val: (i + 1, body_fun(i, val)),
                           (lower, init_val))[1]


def map(f: Callable, xs: Any) -> Any:  # noqa: A001 - Keras's name
    """``keras.ops.map``: ``f`` over the leading axis of ``xs`` (a nest of tensors), results stacked."""
    return tf().map_fn(f, nest.map_structure(convert, xs))


def scan(f: Callable, init: Any, xs: Any = None, length: int | None = None, reverse: bool = False,
         unroll: Any = 1) -> tuple:
    """``keras.ops.scan`` (``jax.lax.scan``'s contract): ``carry, y = f(carry, x)`` over the leading
    axis of ``xs``; returns the final carry and the stacked ``y``s."""
    if not callable(f):
        raise TypeError(f"`f` should be a callable. Received: f={f}")
    if not isinstance(unroll, bool) and (not isinstance(unroll, int) or unroll < 1):
        raise ValueError(f"`unroll` must be an positive integer or boolean. Received: unroll={unroll}")
    if xs is None and length is None:
        raise ValueError("Got no `xs` to scan over and `length` not provided.")
    t = tf()
    xs_flat = [] if xs is None else [convert(x) for x in nest.flatten(xs)]
    n = length if length is not None else xs_flat[0].shape[0]
    if n is None:
        raise NotImplementedError("keras.ops.scan over a leading dimension unknown until run time is not "
                                  "implemented in tapeflow (it unrolls the scan); give `length=`")
    n = int(n)
    carry = nest.map_structure(convert, init)
    ys = []
    order = range(n - 1, -1, -1) if reverse else range(n)
    for i in order:  # the loop runs eagerly, or unrolls into an enclosing tf.function
        x = None if xs is None else nest.pack_sequence_as(xs, [e[i] for e in xs_flat])
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()
    if not ys or ys[0] is None:
        return carry, None
    stacked = [t.stack(parts) for parts in zip(*(nest.flatten(y) for y in ys))]
    return carry, nest.pack_sequence_as(ys[0], stacked)


def vectorized_map(function: Callable, elements: Any) -> Any:
    """``keras.ops.vectorized_map``: ``function`` over the leading axis of ``elements`` (``tf.vectorized_map``)."""
    return tf().vectorized_map(function, elements)


def custom_gradient(f: Callable) -> Callable:
    """``keras.ops.custom_gradient``: ``f`` returns ``(value, grad_fn)``, as ``tf.custom_gradient``."""
    return tf().custom_gradient(f)


_UNSUPPORTED = ("associative_scan",)


def associative_scan(f: Callable, elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """``keras.ops.associative_scan``: the inclusive scan of ``elems`` (a nest of tensors) along
    ``axis`` under the associative ``f(a, b)``, by the parallel odd/even recursion of Keras's
    TensorFlow backend (so its floating-point rounding is Keras's)."""
    if not callable(f):
        raise TypeError(f"`f` should be a callable. Received: f={f}")
    t = tf()
    flat = [convert(e) for e in nest.flatten(elems)]
    if reverse:
        flat = [t.reverse(e, [axis]) for e in flat]
    lengths = [e.shape[axis] for e in flat]
    if len(set(lengths)) != 1:
        raise ValueError("Array inputs to associative_scan must have the same first dimension. "
                         f"(saw: {[tuple(e.shape) for e in flat]})")
    if lengths[0] is None:
        raise NotImplementedError("keras.ops.associative_scan along an axis of unknown length is not implemented "
                                  "in tapeflow")

    def sl(x: Any, start: int = 0, stop: Any = None, step: int = 1) -> Any:
        key = [builtins.slice(None)] * len(x.shape)
        key[axis] = builtins.slice(start, stop, step)
        return x[tuple(key)]

    def combine(a: list, b: list) -> list:
        return nest.flatten(f(nest.pack_sequence_as(elems, a), nest.pack_sequence_as(elems, b)))

    def interleave(a: Any, b: Any) -> Any:
        ax = axis % len(a.shape)
        n_a, n_b = a.shape[ax], b.shape[ax]
        head = sl(a, 0, n_a - 1) if n_a == n_b + 1 else a
        shape = list(head.shape)
        shape[ax] = 2 * n_b
        out = t.reshape(t.concat([t.expand_dims(head, ax + 1), t.expand_dims(b, ax + 1)], axis=ax + 1), shape)
        return t.concat([out, sl(a, n_a - 1, n_a)], axis=ax) if n_a == n_b + 1 else out

    def scan(level: list) -> list:
        n = level[0].shape[axis]
        if n < 2:
            return level
        reduced = combine([sl(e, 0, -1, 2) for e in level], [sl(e, 1, None, 2) for e in level])
        if n == 2:
            return [t.concat([sl(e, 0, 1), r], axis=axis) for e, r in zip(level, reduced)]
        if n == 3:
            twice = combine(reduced, [sl(e, 2, 3) for e in level])
            return [t.concat([sl(e, 0, 1), r, r2], axis=axis) for e, r, r2 in zip(level, reduced, twice)]
        odd = scan(reduced)
        evens = combine([sl(o, 0, -1) for o in odd] if n % 2 == 0 else odd, [sl(e, 2, None, 2) for e in level])
        return [interleave(t.concat([sl(e, 0, 1), r], axis=axis), o) for e, r, o in zip(level, evens, odd)]

    out = scan(flat)
    if reverse:
        out = [t.reverse(e, [axis]) for e in out]
    return nest.pack_sequence_as(elems, out)

