"""Ops on RaggedTensors: ``tf.ragged.*`` and the ragged versions of ``tf.add``,
``tf.concat``, ``tf.reduce_sum``... (registered with ``dispatch_for``).

Values are computed with tapeflow ops (differentiable w.r.t. ``flat_values``);
row partitions, being integers, are computed with NumPy.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.composite_tensor import dispatch_for, replace_composites
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops.ragged.ragged_tensor import RaggedTensor, _np, _rowids, _values

_R = RaggedTensor


def is_ragged(x: Any) -> bool:
    return isinstance(x, RaggedTensor)


# -- tf.ragged.constant ---------------------------------------------------------


def _depth(x: Any) -> int | None:
    """Nesting depth of the scalars in ``x`` (None for an empty list); ValueError if mixed."""
    if not isinstance(x, (list, tuple)):
        return 0
    depths = {d for d in (_depth(c) for c in x) if d is not None}
    if len(depths) > 1:
        raise ValueError("all scalar values must have the same nesting depth")
    return (depths.pop() + 1) if depths else None


def _flatten_levels(pylist: Any, levels: int, splits: list) -> list:
    items = list(pylist)
    for level in range(levels):
        lens = [len(r) if isinstance(r, (list, tuple)) else 0 for r in items]
        splits[level] = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        items = [c for r in items for c in r]
    return items


def constant(
    pylist: Any,
    dtype: Any = None,
    ragged_rank: int | None = None,
    inner_shape: Any = None,
    name: Any = None,
    row_splits_dtype: Any = dtypes.int64,
) -> Any:
    """A RaggedTensor from a nested Python list, as ``tf.ragged.constant``."""
    if isinstance(pylist, (Tensor, RaggedTensor)):
        raise TypeError("pylist may not be a Tensor or RaggedTensor")
    depth = _depth(pylist)
    if depth is None:
        depth = 1
        d = pylist
        while isinstance(d, (list, tuple)) and d and all(isinstance(c, (list, tuple)) for c in d):
            depth += 1
            d = d[0]
    inner = () if inner_shape is None else tuple(inner_shape)
    if ragged_rank is None:
        ragged_rank = max(depth - 1 - len(inner), 0)
    if depth == 0:
        if ragged_rank:
            raise ValueError(f"Invalid pylist={pylist!r}: incompatible with ragged_rank={ragged_rank}")
        return convert_to_tensor(pylist, dtype=dtype)
    if ragged_rank >= depth:
        raise ValueError(f"Invalid pylist={pylist!r}: incompatible with ragged_rank={ragged_rank}")
    if ragged_rank == 0:
        return convert_to_tensor(pylist, dtype=dtype)
    splits: list = [None] * ragged_rank
    items = _flatten_levels(pylist, ragged_rank, splits)
    _check_types(items)
    if items:
        try:
            flat = convert_to_tensor(items, dtype=dtype)
        except ValueError as e:
            if "non-rectangular" in str(e):
                raise ValueError("inner values must have uniform shape; use a larger ragged_rank") from None
            raise
    else:
        inner_dims = inner if inner else (0,) * (depth - 1 - ragged_rank)
        flat = convert_to_tensor(np.zeros((0,) + tuple(inner_dims), (dtypes.as_dtype(dtype or dtypes.float32))._np))
    rs_np = dtypes.as_dtype(row_splits_dtype)._np
    result: Any = flat
    for s in reversed(splits):
        result = RaggedTensor(result, convert_to_tensor(np.asarray(s, rs_np)), internal=True)
    return result


def _check_types(items: list) -> None:
    kinds = set()
    stack = list(items)
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        else:
            kinds.add("s" if isinstance(x, (str, bytes)) else "n")
    if len(kinds) > 1:
        raise ValueError("Can't convert Python sequence with mixed types to Tensor.")


# -- row gathers and slicing ------------------------------------------------------


def _gather_rows(x: Any, idx: np.ndarray) -> Any:
    """Rows ``idx`` of a Tensor or RaggedTensor (gradients flow to the values)."""
    from tapeflow.ops import array_ops

    idx = np.asarray(idx, np.int64).reshape(-1)
    if isinstance(x, RaggedTensor):
        s = _np(x._row_splits)
        starts, limits = s[idx], s[idx + 1]
        lens = limits - starts
        new_splits = np.concatenate([[0], np.cumsum(lens)]).astype(s.dtype)
        value_idx = (
            np.concatenate([np.arange(a, b) for a, b in zip(starts, limits)]) if idx.size else np.zeros(0, np.int64)
        )
        return RaggedTensor(
            _gather_rows(x._values, value_idx),
            convert_to_tensor(new_splits),
            internal=True,
            uniform_row_length=x._uniform_row_length,
        )
    return array_ops.gather(x, convert_to_tensor(idx.astype(np.int64)))


def _row_range(n: int, key: slice) -> np.ndarray:
    return np.arange(n, dtype=np.int64)[key]


def _check_key(k: Any) -> Any:
    if k is Ellipsis or k is None:
        raise NotImplementedError("RaggedTensor indexing with Ellipsis or tf.newaxis in tapeflow")
    if isinstance(k, Tensor):
        k = k.numpy()
    if isinstance(k, (np.integer, np.ndarray)) and np.ndim(k) == 0:
        k = int(k)
    if not isinstance(k, (int, slice)):
        raise TypeError(f"RaggedTensor indices must be integers or slices, got {type(k).__name__}")
    return k


def getitem(rt: RaggedTensor, key: Any) -> Any:
    """``rt[key]``: integers and slices on any dimension, as TF."""
    keys = list(key) if isinstance(key, tuple) else [key]
    if not keys:
        return rt
    k = _check_key(keys[0])
    rest = keys[1:]
    n = rt.nrows_int()
    if isinstance(k, int):
        i = k + n if k < 0 else k
        if not 0 <= i < n:
            raise InvalidArgumentError(None, None, f"slice index {k} of dimension 0 out of bounds. [Op:StridedSlice]")
        s = _np(rt._row_splits)
        row = _slice_values(rt._values, int(s[i]), int(s[i + 1]))
        return _apply(row, rest)
    rows = _gather_rows(rt, _row_range(n, k)) if k != slice(None) else rt
    if not rest:
        return rows
    return _index_inner(rows, rest)


def _slice_values(values: Any, a: int, b: int) -> Any:
    if isinstance(values, RaggedTensor):
        return _gather_rows(values, np.arange(a, b))
    return values[a:b]


def _apply(x: Any, keys: list) -> Any:
    if not keys:
        return x
    return x[tuple(keys)]


def _index_inner(rt: RaggedTensor, keys: list) -> Any:
    """``rt[:, keys...]``: index dimension 1 of every row, then deeper."""
    k = _check_key(keys[0])
    rest = keys[1:]
    s = _np(rt._row_splits)
    lens = np.diff(s)
    if isinstance(k, int):
        pos = np.where(k < 0, lens + k, k)
        if np.any((pos < 0) | (pos >= lens)):
            raise InvalidArgumentError(
                None, None, f"slice index {k} of dimension 1 out of bounds: some rows are shorter [Op:GatherV2]"
            )
        picked = _gather_rows(rt._values, s[:-1] + pos)
        return _inner_rest(picked, rest)
    idx_parts, new_lens = [], []
    for a, length in zip(s[:-1], lens):
        r = np.arange(length, dtype=np.int64)[k]
        idx_parts.append(a + r)
        new_lens.append(len(r))
    idx = np.concatenate(idx_parts) if idx_parts else np.zeros(0, np.int64)
    picked = _gather_rows(rt._values, idx)
    picked = _inner_rest(picked, rest)
    splits = np.concatenate([[0], np.cumsum(new_lens)]).astype(s.dtype)
    return RaggedTensor(picked, convert_to_tensor(splits), internal=True)


def _inner_rest(values: Any, rest: list) -> Any:
    if not rest:
        return values
    if isinstance(values, RaggedTensor):
        return _index_inner(values, rest)
    return values[(slice(None),) + tuple(rest)]


# -- elementwise ops --------------------------------------------------------------


def _same_splits(x: RaggedTensor, y: RaggedTensor) -> bool:
    a, b = x.nested_row_splits, y.nested_row_splits
    return len(a) == len(b) and all(np.array_equal(_np(p), _np(q)) for p, q in zip(a, b))


def _splits_error(x: np.ndarray, y: np.ndarray) -> InvalidArgumentError:
    """TF's message when two row partitions of a broadcast differ (from its
    ``assert_equal`` on the row splits)."""
    x, y = np.asarray(x).reshape(-1), np.asarray(y).reshape(-1)
    if x.shape != y.shape:
        return InvalidArgumentError(
            None,
            None,
            f"Condition x == y did not hold. x has {x.size} row splits and y "
            f"has {y.size}: the ragged dimensions do not match.",
        )
    diff = np.nonzero(x != y)[0]
    k = min(3, diff.size)
    idx = diff[:k]
    msg = (
        f"Condition x == y did not hold.\nIndices of first {k} different values:\n{idx[:, None]}\n"
        f"Corresponding x values:\n{x[idx]}\nCorresponding y values:\n{y[idx]}\n"
        f"First 3 elements of x:\n{x[:3]}\nFirst 3 elements of y:\n{y[:3]}"
    )
    return InvalidArgumentError(None, None, msg)


def _uniform_splits(n: int, width: int) -> np.ndarray:
    return np.arange(n + 1, dtype=np.int64) * width


def _broadcast_dense_to(rt: RaggedTensor, y: Tensor) -> Tensor:
    """``y`` (dense) broadcast against ``rt``'s flat_values rows: a dimension of
    ``y`` lined up with a ragged one must be 1."""
    from tapeflow.ops import array_ops

    flat_rank = len(rt.flat_values._shape_tuple())
    yshape = y._shape_tuple()
    if len(yshape) <= flat_rank - 1:
        return y
    rank = rt.shape.rank
    if len(yshape) > rank:
        raise InvalidArgumentError(
            None, None, f"Incompatible shapes: dense operand of rank {len(yshape)} vs RaggedTensor of rank {rank}"
        )
    y = array_ops.reshape(y, (1,) * (rank - len(yshape)) + tuple(yshape))
    n = rt.nrows_int()
    d0 = y._shape_tuple()[0]
    if d0 == 1:
        y = array_ops.gather(y, convert_to_tensor(np.zeros(n, np.int64)))
    elif d0 != n:
        raise InvalidArgumentError(
            None, None, f"Incompatible shapes: dense operand dimension 0 is {d0} but the RaggedTensor has {n} rows"
        )
    for splits in rt.nested_row_splits:
        d = y._shape_tuple()[1]
        if d != 1:  # a uniform dimension against a ragged one: TF compares the two partitions
            raise _splits_error(_uniform_splits(y._shape_tuple()[0], d), _np(splits))
        y = array_ops.gather(y[:, 0], convert_to_tensor(_rowids(_np(splits))))
    return y


def binary(fn: Callable, x: Any, y: Any, **kwargs: Any) -> Any:
    """``fn(x, y)`` where one or both are ragged: applied to the flat values."""
    if isinstance(x, RaggedTensor) and isinstance(y, RaggedTensor):
        if not _same_splits(x, y):
            if x.ragged_rank == y.ragged_rank:
                for a, b in zip(x.nested_row_splits, y.nested_row_splits):
                    if not np.array_equal(_np(a), _np(b)):
                        raise _splits_error(_np(a), _np(b))
            if x.ragged_rank != y.ragged_rank:
                raise NotImplementedError("elementwise ops on RaggedTensors of different ragged_rank in tapeflow")
            raise InvalidArgumentError(
                None,
                None,
                "Condition x == y did not hold: the RaggedTensors' row "
                "splits differ (rows of different lengths cannot be combined elementwise)",
            )
        xs, ys = x.flat_values._shape_tuple(), y.flat_values._shape_tuple()
        if len(xs) == len(ys) == 2 and xs[1] != ys[1] and 1 not in (xs[1], ys[1]):
            # uniform inner dimensions that differ: TF reports them as partitions
            raise _splits_error(_uniform_splits(xs[0], xs[1]), _uniform_splits(ys[0], ys[1]))
        return x.with_flat_values(fn(x.flat_values, y.flat_values, **kwargs))
    if isinstance(x, RaggedTensor):
        yy = y if _is_py_scalar(y) else _broadcast_dense_to(x, _dense(y, x.dtype))
        return x.with_flat_values(fn(x.flat_values, yy, **kwargs))
    xx = x if _is_py_scalar(x) else _broadcast_dense_to(y, _dense(x, y.dtype))
    return y.with_flat_values(fn(xx, y.flat_values, **kwargs))


def _is_py_scalar(v: Any) -> bool:
    return isinstance(v, (int, float, bool, complex, str, bytes, np.generic))


def _dense(v: Any, dtype: Any) -> Tensor:
    if isinstance(v, Tensor):
        return v
    if hasattr(v, "value") and hasattr(v, "assign"):
        return v.value()
    return convert_to_tensor(v, dtype_hint=dtype)


def unary(fn: Callable, x: RaggedTensor, *args: Any, **kwargs: Any) -> RaggedTensor:
    return x.with_flat_values(fn(x.flat_values, *args, **kwargs))


def map_flat_values(op: Callable, *args: Any, **kwargs: Any) -> Any:
    """``op`` applied to the flat values of every ragged argument (all must share row partitions)."""
    found, new_args, new_kwargs = replace_composites(RaggedTensor, lambda v: v.flat_values, args, kwargs)
    if not found:
        return op(*args, **kwargs)
    first = found[0]
    for other in found[1:]:
        if not _same_splits(first, other):
            raise ValueError("Inputs must have identical ragged splits")
    out = op(*new_args, **new_kwargs)
    out_t = _values(out)
    n_in, n_out = first.flat_values._shape_tuple()[0], out_t._shape_tuple()[0] if out_t._shape_tuple() else None
    if n_out != n_in and None not in (n_in, n_out):  # (unknown while traced from a RaggedTensorSpec)
        raise ValueError(f"tf.ragged.map_flat_values: op must keep the number of values ({n_in}), got {n_out}")
    return first.with_flat_values(out_t)


def _nvals_flat(rt: RaggedTensor) -> int:
    return int(rt.flat_values._shape_tuple()[0])


# -- concat, stack, gather --------------------------------------------------------


def _to_ragged(x: Any, ragged_rank: int, dtype: Any) -> RaggedTensor:
    if isinstance(x, RaggedTensor):
        return x
    t = _dense(x, dtype)
    return RaggedTensor.from_tensor(t, ragged_rank=ragged_rank)


def _concat_rows(rts: list) -> Any:
    from tapeflow.ops import array_ops

    if not isinstance(rts[0], RaggedTensor):
        return array_ops.concat(rts, 0)
    parts, offset = [np.zeros(1, np.int64)], 0
    for r in rts:
        s = _np(r._row_splits).astype(np.int64)
        parts.append(s[1:] + offset)
        offset += int(s[-1])
    splits = np.concatenate(parts)
    return RaggedTensor(_concat_rows([r._values for r in rts]), convert_to_tensor(splits), internal=True)


def _prepare(values: list) -> tuple[list, int]:
    ragged = [v for v in values if isinstance(v, RaggedTensor)]
    rr = max(r.ragged_rank for r in ragged)
    dtype = ragged[0].dtype
    rts = [_to_ragged(v, rr, dtype) for v in values]
    if any(r.ragged_rank != rr for r in rts):
        raise NotImplementedError("tf.concat/tf.stack of RaggedTensors with different ragged_rank in tapeflow")
    rank = rts[0].shape.rank
    if any(r.shape.rank != rank for r in rts):
        raise ValueError("all inputs of tf.concat/tf.stack must have the same rank")
    return rts, rank


def concat(values: Any, axis: Any, name: Any = None) -> Any:
    if not isinstance(values, (list, tuple)) or not any(isinstance(v, RaggedTensor) for v in values):
        return NotImplemented
    rts, rank = _prepare(list(values))
    axis = int(axis) + (rank if int(axis) < 0 else 0)
    if axis == 0:
        return _concat_rows(rts)
    rr = rts[0].ragged_rank
    if axis == 1:
        n = rts[0].nrows_int()
        if any(r.nrows_int() != n for r in rts):
            raise InvalidArgumentError(
                None,
                None,
                "Input tensors at dimension 0 must have the same number of rows "
                "to concatenate along axis 1 [Op:RaggedConcat]",
            )
        splits = [_np(r._row_splits).astype(np.int64) for r in rts]
        offsets = np.cumsum([0] + [int(s[-1]) for s in splits])
        idx, lens = [], np.zeros(n, np.int64)
        for i in range(n):
            for k, s in enumerate(splits):
                idx.append(np.arange(s[i], s[i + 1]) + offsets[k])
                lens[i] += s[i + 1] - s[i]
        all_values = _concat_rows([r._values for r in rts])
        picked = _gather_rows(all_values, np.concatenate(idx) if idx else np.zeros(0, np.int64))
        return RaggedTensor.from_row_lengths(picked, lens, validate=False)
    if axis > rr:
        from tapeflow.ops import array_ops

        first = rts[0]
        if not all(_same_splits(first, r) for r in rts[1:]):
            raise InvalidArgumentError(
                None, None, "tf.concat of RaggedTensors along a uniform axis needs identical row splits"
            )
        return first.with_flat_values(array_ops.concat([r.flat_values for r in rts], axis - rr))
    raise NotImplementedError(f"tf.concat of RaggedTensors along ragged axis {axis} > 1 in tapeflow")


def stack(values: Any, axis: int = 0, name: Any = None) -> Any:
    if not isinstance(values, (list, tuple)) or not any(isinstance(v, RaggedTensor) for v in values):
        return NotImplemented
    rts, rank = _prepare(list(values))
    axis = int(axis) + (rank + 1 if int(axis) < 0 else 0)
    k = len(rts)
    if axis == 0:
        lens = [r.nrows_int() for r in rts]
        return RaggedTensor.from_row_lengths(_concat_rows(rts), lens, validate=False)
    if axis == 1:
        n = rts[0].nrows_int()
        if any(r.nrows_int() != n for r in rts):
            raise InvalidArgumentError(None, None, "tf.stack: inputs must have the same number of rows")
        combined = _concat_rows(rts)
        order = (np.arange(k)[None, :] * n + np.arange(n)[:, None]).reshape(-1)
        rows = _gather_rows(combined, order)
        return RaggedTensor.from_uniform_row_length(rows, k, nrows=n, validate=False)
    raise NotImplementedError(f"tf.stack of RaggedTensors along axis {axis} > 1 in tapeflow")


def gather(
    params: Any, indices: Any, validate_indices: Any = None, axis: Any = None, batch_dims: int = 0, name: Any = None
) -> Any:
    from tapeflow.ops import array_ops

    if (axis not in (None, 0)) or batch_dims:
        if isinstance(params, RaggedTensor) or isinstance(indices, RaggedTensor):
            raise NotImplementedError("tf.gather on RaggedTensors with axis != 0 or batch_dims in tapeflow")
    if isinstance(indices, RaggedTensor):
        return (
            indices.with_flat_values(gather(params, indices.flat_values))
            if isinstance(params, RaggedTensor)
            else indices.with_flat_values(array_ops.gather(params, indices.flat_values))
        )
    if isinstance(params, RaggedTensor):
        idx = _np(indices)
        if idx.dtype.kind not in "iu":
            raise TypeError(f"tf.gather indices must be integers, got {idx.dtype}")
        n = params.nrows_int()
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            bad = idx[(idx < 0) | (idx >= n)].reshape(-1)[0]
            raise InvalidArgumentError(None, None, f"indices = {bad} is not in [0, {n}) [Op:GatherV2]")
        if idx.ndim == 0:
            return params[int(idx)]
        out = _gather_rows(params, idx.reshape(-1))
        for d in reversed(idx.shape[1:]):
            out = RaggedTensor.from_uniform_row_length(out, d, validate=False)
        return out
    return NotImplemented


# -- reductions -------------------------------------------------------------------


def _segment(kind: str, data: Tensor, ids: np.ndarray, n: int) -> Tensor:
    from tapeflow.ops import math_ops, special_ops

    ids_t = convert_to_tensor(ids.astype(np.int64))
    if kind == "sum":
        return math_ops.unsorted_segment_sum(data, ids_t, n)
    if kind == "prod":
        return special_ops.unsorted_segment_prod(data, ids_t, n)
    if kind == "max":
        return special_ops.unsorted_segment_max(data, ids_t, n)
    if kind == "min":
        return special_ops.unsorted_segment_min(data, ids_t, n)
    if kind == "mean":
        total = math_ops.unsorted_segment_sum(data, ids_t, n)
        count = math_ops.unsorted_segment_sum(array_ones_like(data), ids_t, n)
        return math_ops.truediv(total, count)
    if kind in ("all", "any"):
        as_int = math_ops.cast(math_ops.logical_not(data) if kind == "all" else data, dtypes.int32)
        counts = math_ops.unsorted_segment_sum(as_int, ids_t, n)
        return math_ops.equal(counts, 0) if kind == "all" else math_ops.greater(counts, 0)
    if kind.startswith("join:"):  # tf.strings.reduce_join: each segment's strings in order, separated
        sep = kind[5:].encode("utf-8", "surrogateescape")
        flat = np.asarray(data._value, dtype=object)
        rows = flat.reshape(flat.shape[0], -1) if flat.ndim else flat.reshape(1, 1)
        parts: list = [[] for _ in range(n)]
        for i, row in zip(ids.tolist(), rows):
            parts[i].append(row)
        out = np.empty((n, rows.shape[1]), dtype=object)
        for i, p in enumerate(parts):
            for j in range(rows.shape[1]):
                out[i, j] = sep.join(bytes(r[j]) for r in p)
        return convert_to_tensor(out.reshape((n,) + flat.shape[1:]), dtype=dtypes.string)
    raise NotImplementedError(f"ragged reduction {kind!r}")


def array_ones_like(x: Tensor) -> Tensor:
    from tapeflow.ops import array_ops

    return array_ops.ones_like(x)


_DENSE_REDUCE = {}


def _dense_reduce(kind: str) -> Callable:
    from tapeflow.ops import math_ops

    if kind.startswith("join:"):
        from tapeflow.ops import string_ops

        return lambda x, axis=None: string_ops.reduce_join(x, axis=axis, separator=kind[5:])

    return {
        "sum": math_ops.reduce_sum,
        "mean": math_ops.reduce_mean,
        "max": math_ops.reduce_max,
        "min": math_ops.reduce_min,
        "prod": math_ops.reduce_prod,
        "all": math_ops.reduce_all,
        "any": math_ops.reduce_any,
    }[kind]


def _reduce_one(kind: str, rt: RaggedTensor, axis: int) -> Any:
    rr = rt.ragged_rank
    if axis > rr:
        return rt.with_flat_values(_dense_reduce(kind)(rt.flat_values, axis=axis - rr))
    if axis == rr:
        last = _np(rt.nested_row_splits[-1])
        seg = _segment(kind, rt.flat_values, _rowids(last), len(last) - 1)
        if rr == 1:
            return seg
        return RaggedTensor.from_nested_row_splits(seg, rt.nested_row_splits[:-1], validate=False)
    if axis == 0 and rr == 1:
        s = _np(rt._row_splits)
        ids = _rowids(s)
        pos = np.arange(s[-1], dtype=np.int64) - s[ids]
        width = int(np.diff(s).max()) if len(s) > 1 else 0
        return _segment(kind, rt.flat_values, pos, width)
    raise NotImplementedError(f"reducing RaggedTensor axis {axis} (ragged_rank {rr}) in tapeflow")


def _reducer(kind: str) -> Callable:
    def reduce(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: Any = None) -> Any:
        if not isinstance(input_tensor, RaggedTensor):
            return NotImplemented
        if keepdims:
            raise NotImplementedError("keepdims=True for reductions of RaggedTensors in tapeflow")
        if axis is None:
            if kind == "mean":
                from tapeflow.ops import math_ops

                flat = input_tensor.flat_values
                return math_ops.truediv(math_ops.reduce_sum(flat), math_ops.reduce_sum(array_ones_like(flat)))
            return _dense_reduce(kind)(input_tensor.flat_values)
        rank = input_tensor.shape.rank
        axes = sorted({int(a) + (rank if int(a) < 0 else 0) for a in np.asarray(_np(axis)).reshape(-1)}, reverse=True)
        out: Any = input_tensor
        for a in axes:
            if not 0 <= a < rank:
                raise ValueError(f"axis={a} out of bounds: expected {-rank} <= axis < {rank}")
            out = _reduce_one(kind, out, a) if isinstance(out, RaggedTensor) else _dense_reduce(kind)(out, axis=a)
        return out

    reduce.__name__ = f"reduce_{kind}"
    return reduce


def reduce_join(inputs: RaggedTensor, axis: Any, keepdims: bool, separator: str) -> Any:
    """``tf.strings.reduce_join`` of a RaggedTensor, as TF's ragged dispatch: rows joined in order."""
    sep = separator.decode("utf-8", "surrogateescape") if isinstance(separator, bytes) else str(separator)
    out = _reducer("join:" + sep)(inputs, axis=axis)
    if keepdims:
        if isinstance(out, RaggedTensor):
            raise NotImplementedError("tf.strings.reduce_join(keepdims=True) with a ragged result in tapeflow")
        from tapeflow.ops import array_ops

        rank = inputs.shape.rank
        axes = range(rank) if axis is None else sorted(
            int(a) + (rank if int(a) < 0 else 0) for a in np.asarray(_np(axis)).reshape(-1))
        for a in axes:
            out = array_ops.expand_dims(out, a)
    return out


# -- map_fn, range, boolean_mask ---------------------------------------------------


def _rows_to_ragged(outs: list) -> Any:
    from tapeflow.ops import array_ops

    if not outs:
        raise ValueError("tf.map_fn over a RaggedTensor with no rows needs fn_output_signature")
    if isinstance(outs[0], RaggedTensor):
        return stack(outs, axis=0)
    outs = [_values(o) for o in outs]
    if all(len(o._shape_tuple()) == 0 for o in outs):
        return array_ops.stack(outs)
    lens = [o._shape_tuple()[0] for o in outs]
    return RaggedTensor.from_row_lengths(array_ops.concat(outs, 0), lens, validate=False)


def map_fn(
    fn: Callable,
    elems: Any,
    dtype: Any = None,
    parallel_iterations: Any = None,
    back_prop: bool = True,
    swap_memory: bool = False,
    infer_shape: bool = True,
    name: Any = None,
    fn_output_signature: Any = None,
) -> Any:
    if not isinstance(elems, RaggedTensor):
        return NotImplemented
    from tapeflow.ops import array_ops

    sig = fn_output_signature if fn_output_signature is not None else dtype
    outs = [fn(elems[i]) for i in range(elems.nrows_int())]
    if sig is None or isinstance(sig, RaggedTensorSpec_()):
        return _rows_to_ragged(outs)
    return array_ops.stack([_values(o) for o in outs])


def RaggedTensorSpec_():  # noqa: N802 - the class, imported late
    from tapeflow.ops.ragged.ragged_tensor import RaggedTensorSpec

    return RaggedTensorSpec


def range_(
    starts: Any,
    limits: Any = None,
    deltas: Any = 1,
    dtype: Any = None,
    name: Any = None,
    row_splits_dtype: Any = dtypes.int64,
) -> RaggedTensor:
    """Row ``i`` is ``tf.range(starts[i], limits[i], deltas[i])``, as ``tf.ragged.range``."""
    if limits is None:
        starts, limits = 0, starts
    ts = [x if isinstance(x, Tensor) else convert_to_tensor(x, dtype=dtype) for x in (starts, limits, deltas)]
    want = (
        dtypes.as_dtype(dtype)
        if dtype is not None
        else next((t.dtype for t in ts if t._value.dtype.kind == "f"), max((t.dtype for t in ts), key=lambda d: d.size))
    )
    s, lim, d = (np.asarray(t.numpy()).astype(want._np) for t in ts)
    s, lim, d = np.broadcast_arrays(s, lim, d)
    if s.ndim > 1:
        raise InvalidArgumentError(None, None, "starts, limits and deltas must be scalars or vectors [Op:RaggedRange]")
    if np.any(d == 0):
        raise InvalidArgumentError(None, None, "Requires delta != 0 [Op:RaggedRange]")
    rows = [np.arange(a, b, c, dtype=want._np) for a, b, c in zip(s.reshape(-1), lim.reshape(-1), d.reshape(-1))]
    flat = np.concatenate(rows) if rows else np.zeros(0, want._np)
    lens = [len(r) for r in rows]
    splits = np.concatenate([[0], np.cumsum(lens)]).astype(dtypes.as_dtype(row_splits_dtype)._np)
    return RaggedTensor(convert_to_tensor(flat), convert_to_tensor(splits), internal=True)


def boolean_mask(data: Any, mask: Any, name: Any = None) -> Any:
    """Keeps ``data``'s items where ``mask`` is True, row by row (a ragged result)."""
    from tapeflow.ops import indexing_ops

    mask_rank = mask.shape.rank if isinstance(mask, RaggedTensor) else np.ndim(_np(mask))
    if mask_rank == 1:
        m = _np(mask).astype(bool)
        if isinstance(data, RaggedTensor):
            return _gather_rows(data, np.nonzero(m)[0])
        return indexing_ops.boolean_mask(_values(data), convert_to_tensor(m))
    if not isinstance(mask, RaggedTensor):
        mask = RaggedTensor.from_tensor(_dense(mask, dtypes.bool), ragged_rank=mask_rank - 1)
    if not isinstance(data, RaggedTensor):
        data = RaggedTensor.from_tensor(_values(data), ragged_rank=mask.ragged_rank)
    if data.ragged_rank != mask.ragged_rank or mask.shape.rank != mask.ragged_rank + 1:
        raise NotImplementedError(
            "tf.ragged.boolean_mask where the mask does not end at the innermost ragged dimension of data, in tapeflow"
        )
    if not _same_splits(data, mask):
        raise InvalidArgumentError(None, None, "tf.ragged.boolean_mask: data and mask must have the same row lengths")
    m = _np(mask.flat_values).astype(bool)
    kept = indexing_ops.boolean_mask(data.flat_values, convert_to_tensor(m))
    last = _np(data.nested_row_splits[-1])
    counts = np.bincount(_rowids(last)[m], minlength=len(last) - 1) if m.any() else np.zeros(len(last) - 1, int)
    new_last = np.concatenate([[0], np.cumsum(counts)]).astype(last.dtype)
    return RaggedTensor.from_nested_row_splits(kept, list(data.nested_row_splits[:-1]) + [new_last], validate=False)


def row_splits_to_segment_ids(splits: Any, name: Any = None, out_type: Any = None) -> Tensor:
    s = _np(splits)
    return convert_to_tensor(_rowids(s).astype(dtypes.as_dtype(out_type)._np if out_type else s.dtype))


def segment_ids_to_row_splits(
    segment_ids: Any, num_segments: Any = None, out_type: Any = None, name: Any = None
) -> Tensor:
    ids = _np(segment_ids).astype(np.int64)
    n = int(_np(num_segments)) if num_segments is not None else (int(ids.max()) + 1 if ids.size else 0)
    splits = np.concatenate([[0], np.cumsum(np.bincount(ids, minlength=n)[:n])])
    return convert_to_tensor(splits.astype(dtypes.as_dtype(out_type)._np if out_type else np.int64))


def _ones_or_zeros(kind: str) -> Callable:
    def like(input: Any, dtype: Any = None, name: Any = None) -> Any:  # noqa: A002
        if not isinstance(input, RaggedTensor):
            return NotImplemented
        from tapeflow.ops import array_ops

        fn = array_ops.ones_like if kind == "ones" else array_ops.zeros_like
        return input.with_flat_values(fn(input.flat_values, dtype=dtype))

    return like


# -- registration with the public API ----------------------------------------------

_UNARY = (
    "abs",
    "ceil",
    "cos",
    "exp",
    "expm1",
    "floor",
    "log",
    "log1p",
    "logical_not",
    "negative",
    "reciprocal",
    "round",
    "rsqrt",
    "sigmoid",
    "sign",
    "sin",
    "softplus",
    "sqrt",
    "square",
    "tan",
    "tanh",
    "is_finite",
    "is_inf",
    "is_nan",
    "cast",
    "saturate_cast",
    "identity",
    "stop_gradient",
    "acos",
    "asin",
    "atan",
    "cosh",
    "sinh",
    "erf",
    "relu",
    "relu6",
    "elu",
    "selu",
    "leaky_relu",
    "gelu",
    "silu",
    "softsign",
    "log_sigmoid",
)
_BINARY = (
    "add",
    "subtract",
    "multiply",
    "divide",
    "truediv",
    "realdiv",
    "floordiv",
    "floor_div",
    "floormod",
    "mod",
    "pow",
    "maximum",
    "minimum",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "squared_difference",
    "atan2",
    "divide_no_nan",
    "xdivy",
    "xlogy",
)


def _unary_impl(fn: Callable) -> Callable:
    def impl(x: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(x, RaggedTensor):
            return NotImplemented
        kwargs.pop("name", None)
        return unary(fn, x, *args, **kwargs)

    return impl


def _binary_impl(fn: Callable) -> Callable:
    def impl(x: Any, y: Any, name: Any = None) -> Any:
        if not (isinstance(x, RaggedTensor) or isinstance(y, RaggedTensor)):
            return NotImplemented
        return binary(fn, x, y)

    return impl


def _ragged_where(condition: Any, x: Any = None, y: Any = None, name: Any = None) -> Any:
    from tapeflow.ops import math_ops

    if x is None or not isinstance(condition, RaggedTensor):
        return NotImplemented
    cond = condition
    xs = binary(lambda a, b: b, cond, x) if not isinstance(x, RaggedTensor) else x
    ys = binary(lambda a, b: b, cond, y) if not isinstance(y, RaggedTensor) else y
    if not (_same_splits(cond, xs) and _same_splits(cond, ys)):
        raise InvalidArgumentError(None, None, "tf.where: condition, x and y must have the same row splits")
    return cond.with_flat_values(math_ops.where(cond.flat_values, xs.flat_values, ys.flat_values))


def _embedding_lookup(params: Any, ids: Any, max_norm: Any = None, name: Any = None) -> Any:
    from tapeflow.ops.nn import embedding

    if not isinstance(ids, RaggedTensor):
        return NotImplemented
    return ids.with_flat_values(embedding.embedding_lookup(params, ids.flat_values, max_norm=max_norm))


def _shape_fn(input: Any, out_type: Any = None, name: Any = None) -> Any:  # noqa: A002
    if isinstance(input, RaggedTensor):
        from tapeflow.ops.ragged.dynamic_ragged_shape import DynamicRaggedShape

        return DynamicRaggedShape.from_tensor(input, dtypes.int32 if out_type is None else out_type)
    return NotImplemented


def _reverse(tensor: Any, axis: Any, name: Any = None) -> Any:
    if not isinstance(tensor, RaggedTensor):
        return NotImplemented
    rank = tensor.shape.rank
    out = tensor
    for a in sorted({int(a) % rank for a in np.asarray(_np(axis)).reshape(-1)}):
        if a == 0:
            out = _gather_rows(out, np.arange(out.nrows_int())[::-1])
        elif a == 1:
            s = _np(out._row_splits)
            idx = np.concatenate([np.arange(s[i + 1] - 1, s[i] - 1, -1) for i in range(len(s) - 1)] or [[]])
            out = RaggedTensor(_gather_rows(out._values, idx.astype(np.int64)), out._row_splits, internal=True)
        elif a > out.ragged_rank:
            from tapeflow.ops import indexing_ops

            out = out.with_flat_values(indexing_ops.reverse(out.flat_values, [a - out.ragged_rank]))
        else:
            raise NotImplementedError(f"tf.reverse of a RaggedTensor along ragged axis {a} > 1 in tapeflow")
    return out


def _tile(input: Any, multiples: Any, name: Any = None) -> Any:  # noqa: A002
    """``tf.tile`` of a 2-D RaggedTensor: rows repeated ``multiples[0]`` times,
    each row's values ``multiples[1]`` times."""
    if not isinstance(input, RaggedTensor):
        return NotImplemented
    m = [int(v) for v in np.asarray(_np(multiples)).reshape(-1)]
    if len(m) != input.shape.rank:
        raise InvalidArgumentError(
            None,
            None,
            f"Expected multiples argument to be a vector of length "
            f"{input.shape.rank} but got length {len(m)} [Op:Tile]",
        )
    if input.ragged_rank != 1 or len(m) != 2:
        raise NotImplementedError("tf.tile of a RaggedTensor with ragged_rank > 1 or uniform inner dims in tapeflow")
    s = _np(input._row_splits)
    idx, lens = [], []
    for _ in range(m[0]):
        for i in range(len(s) - 1):
            row = np.arange(s[i], s[i + 1])
            idx.append(np.tile(row, m[1]))
            lens.append(len(row) * m[1])
    flat = np.concatenate(idx).astype(np.int64) if idx else np.zeros(0, np.int64)
    return RaggedTensor.from_row_lengths(_gather_rows(input._values, flat), lens, validate=False)


def register() -> None:
    """Registers the ragged implementations for the public functions (once)."""
    from tapeflow.framework import namespaces
    from tapeflow.ops import array_ops, math_ops, nn, special_ops

    mods = (math_ops, special_ops, array_ops, nn)  # the op modules behind tf, tf.math and tf.nn

    def find(name: str) -> Callable | None:
        for m in mods:
            f = getattr(m, name, None)
            if callable(f):
                return f
        return None

    for name in _UNARY:
        f = find(name)
        if f is not None:
            dispatch_for(f)(_unary_impl(getattr(f, "__wrapped__", f)))
    for name in _BINARY:
        f = find(name)
        if f is not None:
            dispatch_for(f)(_binary_impl(getattr(f, "__wrapped__", f)))
    for kind in ("sum", "mean", "max", "min", "prod", "all", "any"):
        dispatch_for(getattr(math_ops, f"reduce_{kind}"))(_reducer(kind))
    dispatch_for(array_ops.concat)(concat)
    dispatch_for(array_ops.stack)(stack)
    dispatch_for(array_ops.gather)(gather)
    tf_map_fn = namespaces.get("tapeflow").map_fn  # tf.map_fn (graph/control_flow.py)
    dispatch_for(getattr(tf_map_fn, "__wrapped__", tf_map_fn))(map_fn)
    dispatch_for(array_ops.ones_like)(_ones_or_zeros("ones"))
    dispatch_for(array_ops.zeros_like)(_ones_or_zeros("zeros"))
    dispatch_for(math_ops.where)(_ragged_where)
    dispatch_for(nn.embedding_lookup)(_embedding_lookup)
    dispatch_for(array_ops.shape)(_shape_fn)
    from tapeflow.ops.ragged import dynamic_ragged_shape as drs

    dispatch_for(array_ops.reshape)(drs.reshape)
    dispatch_for(array_ops.zeros)(drs.zeros)
    dispatch_for(array_ops.ones)(drs.ones)
    dispatch_for(array_ops.fill)(drs.fill)
    from tapeflow.ops import indexing_ops

    dispatch_for(indexing_ops.reverse)(_reverse)
    dispatch_for(array_ops.tile)(_tile)
