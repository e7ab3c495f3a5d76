"""``tf.sparse``: ops on :class:`SparseTensor`, eager and inside ``tf.function``.

Index bookkeeping (sorting, matching positions, the boxes of a slice) is done by small integer-output ops with
NumPy kernels (``SparseReorderPermutation``, ``SparseReshape``, ``SparseUnion``, ...; not differentiable, like
their outputs), so it runs when the graph runs, on the tensors it is given; every value is then computed with
tapeflow ops (gather, segment sums, scatters), so gradients w.r.t. ``values`` and dense operands follow TF's
(e.g. ``sparse_dense_matmul``: ``d values = (g @ b^T)[rows, cols]``, ``d b = a^T @ g``) to any order.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework import sparse_tensor as _sparse_tensor_module
from tapeflow.framework.composite_tensor import dispatch_for, replace_composites
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.indexed_slices import IndexedSlices
from tapeflow.framework.sparse_tensor import SparseTensor, SparseTensorSpec
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.framework.tensor_shape import TensorShape
from tapeflow.ops.registry import NoGradientRegistered, NotDifferentiable, defgrad, defop

__all__ = [
    "SparseTensor",
    "SparseTensorSpec",
    "add",
    "bincount",
    "concat",
    "cross",
    "cross_hashed",
    "expand_dims",
    "eye",
    "fill_empty_rows",
    "from_dense",
    "map_values",
    "mask",
    "maximum",
    "minimum",
    "reduce_max",
    "reduce_sum",
    "reorder",
    "reset_shape",
    "reshape",
    "sampled_addmm",
    "retain",
    "segment_mean",
    "segment_sqrt_n",
    "segment_sum",
    "slice",
    "softmax",
    "sparse_dense_matmul",
    "split",
    "to_dense",
    "to_indicator",
    "transpose",
]

_I64 = np.dtype(np.int64)


def _err(op: str, message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"{message} [Op:{op}]")


def _fmt(v: Any) -> str:
    return "[" + ",".join(str(int(d)) for d in np.asarray(v).reshape(-1)) + "]"


def _check(sp: Any, op: str) -> SparseTensor:
    if not isinstance(sp, SparseTensor):
        raise TypeError(f"tf.sparse.{op} expects a SparseTensor, got {type(sp).__name__}")
    return sp


def _dense(x: Any, dtype: Any = None) -> Tensor:
    if isinstance(x, Tensor):
        return x
    if hasattr(x, "value") and hasattr(x, "assign"):
        return x.value()
    return convert_to_tensor(x, dtype_hint=dtype)


def _is_symbolic(*xs: Any) -> bool:
    from tapeflow.ops.shape_ops import is_symbolic

    return any(is_symbolic(x) for x in xs)


def _partial_shape(dense_shape: Tensor) -> TensorShape:
    """What tracing knows of a symbolic ``dense_shape``'s value (TF's ``constant_value_as_shape``)."""
    from tapeflow.ops.shape_ops import partial_value

    known = partial_value(dense_shape)
    if isinstance(known, tuple):
        return TensorShape([None if d is None or d < 0 else d for d in known])
    n = dense_shape._shape_tuple()
    return TensorShape(None if n is None or n[0] is None else [None] * n[0])


# SparseTensor.shape of a traced dense_shape asks the op layer what tracing knows of it.
_sparse_tensor_module._partial_shape = _partial_shape


def _static(sp: SparseTensor) -> list | None:
    """The dense shape as Python ints when every dimension is known, else None."""
    s = sp.shape
    return None if s.rank is None or None in s.as_list() else s.as_list()


def _rank(sp: SparseTensor, op: str) -> int:
    n = sp.dense_shape._shape_tuple()
    if n is None or n[0] is None:
        raise NotImplementedError(f"tf.sparse.{op}: a SparseTensor of unknown rank in tapeflow graphs; give the "
                                  "function an input_signature with a known rank")
    return int(n[0])


def _int_attr(v: Any, what: str, op: str) -> Any:
    """A Python int (or tuple of ints) from an int, a list, or a tensor whose value tracing knows."""
    from tapeflow.ops.shape_ops import partial_value

    if isinstance(v, Tensor):
        known = partial_value(v)
        if known is None or (isinstance(known, tuple) and None in known):
            raise NotImplementedError(f"tf.sparse.{op}: {what} must be known when the function is traced in "
                                      "tapeflow (a Python value or a constant)")
        return known
    a = np.asarray(v)
    return int(a) if a.ndim == 0 else tuple(int(x) for x in a.reshape(-1))


def _i64(x: Any) -> Tensor:
    from tapeflow.ops import math_ops

    t = _dense(x, dtypes.int64)
    return t if t.dtype == dtypes.int64 else math_ops.cast(t, dtypes.int64)


def _const(a: Any) -> Tensor:
    return convert_to_tensor(np.asarray(a, np.int64))


def _make(indices: Tensor, values: Tensor, dense_shape: Tensor, static: Any = None) -> SparseTensor:
    sp = SparseTensor(indices, values, dense_shape)
    if static is not None:
        sp._static_shape = TensorShape(static)
    return sp


def _gather(x: Tensor, positions: Tensor) -> Tensor:
    from tapeflow.ops import array_ops

    return array_ops.gather(x, positions)


def _plan(name: str, kernel: Callable, shape: Callable, num_outputs: Any = 1) -> Any:
    op = defop(name, kernel, shape=shape, num_outputs=num_outputs)
    NotDifferentiable(name)
    return op


def _linear(idx: np.ndarray, shape: Any) -> np.ndarray:
    shape = [int(d) for d in np.asarray(shape).reshape(-1)]
    if idx.shape[0] == 0 or not shape:
        return np.zeros(idx.shape[0], np.int64)
    return np.ravel_multi_index(tuple(idx.T), shape).astype(np.int64)


def _unravel(lin: np.ndarray, shape: list) -> np.ndarray:
    if lin.size == 0 or not shape:
        return np.zeros((lin.size, len(shape)), np.int64)
    return np.stack(np.unravel_index(lin, shape), axis=1).astype(np.int64)


def _vec(n: Any = None) -> tuple:
    return ((n,), _I64)


def _mat(cols: Any) -> tuple:
    return ((None, cols), _I64)


def _cols(spec: tuple) -> Any:
    return None if spec[0] is None else spec[0][1]


def _len(spec: tuple) -> Any:
    return None if spec[0] is None else spec[0][0]


# -- the bookkeeping ops --------------------------------------------------------------


def _check_kernel(indices, shape, validate=True, op="SparseToDense"):
    """TF's SparseToDense checks: each index in bounds; with ``validate``, in row-major order and not repeated."""
    n = indices.shape[0]
    if n == 0:
        return indices
    oob = np.any((indices < 0) | (indices >= shape[None, :]), axis=1)
    if not validate:
        if oob.any():
            raise _err(op, f"Indices are not valid (out of bounds).  Shape: {_fmt(shape)}")
        return indices
    first_oob = int(np.argmax(oob)) if oob.any() else n
    lin = _linear(np.clip(indices, 0, np.maximum(shape - 1, 0)), shape)
    steps = np.nonzero(np.diff(lin) <= 0)[0]
    first_order = int(steps[0]) + 1 if steps.size else n
    if first_oob < n and first_oob <= first_order:
        raise _err(op, f"indices[{first_oob}] = {_fmt(indices[first_oob])} is out of bounds: need 0 <= index < "
                   f"{_fmt(shape)}")
    if first_order < n:
        i = first_order
        if lin[i] == lin[i - 1]:
            raise _err(op, f"indices[{i}] = {_fmt(indices[i])} is repeated")
        raise _err(op, f"indices[{i}] = {_fmt(indices[i])} is out of order. Many sparse ops require sorted indices.\n"
                   "    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n")
    return indices


SPARSE_INDEX_CHECK = _plan("SparseIndexCheck", _check_kernel, lambda specs, **a: [specs[0]])


def _reorder_kernel(indices, shape):
    if indices.shape[0] == 0 or indices.shape[1] == 0:
        return np.arange(indices.shape[0], dtype=np.int64)
    return np.lexsort(indices.T[::-1]).astype(np.int64)


SPARSE_REORDER_PERMUTATION = _plan("SparseReorderPermutation", _reorder_kernel,
                                   lambda specs: [_vec(_len(specs[0]))])


def _reshape_kernel(indices, shape, new_shape):
    new = [int(d) for d in new_shape.reshape(-1)]
    total = int(np.prod(shape, dtype=np.int64))
    unknown = [i for i, d in enumerate(new) if d == -1]
    if len(unknown) > 1:
        raise _err("SparseReshape", f"only one output dimension may be -1, not both {unknown[0]} and {unknown[1]}")
    known = int(np.prod([d for d in new if d != -1], dtype=np.int64))
    if unknown:
        new[unknown[0]] = total // known if known else 0
        if known == 0 or total % known:
            raise _err("SparseReshape", f"Input to reshape is a SparseTensor with {total} dense values, but the "
                       f"requested shape requires a multiple of {known}. input_shape={_fmt(shape)} "
                       f"output_shape={_fmt(new)}")
    elif known != total:
        raise _err("SparseReshape", f"Input to reshape is a tensor with {total} dense values, but the requested "
                   f"shape has {known}. input_shape={_fmt(shape)} output_shape={_fmt(new)}")
    return _unravel(_linear(indices, shape), new), np.asarray(new, np.int64)


SPARSE_RESHAPE = _plan("SparseReshape", _reshape_kernel,
                       lambda specs: [_mat(_len(specs[2])), _vec(_len(specs[2]))], num_outputs=2)


def _same_shapes(a_shape, b_shape, op):
    if a_shape.shape != b_shape.shape:
        raise _err(op, f"Operands do not have the same ranks; got shapes: {_fmt(a_shape)} and {_fmt(b_shape)}")
    for d, (x, y) in enumerate(zip(a_shape.tolist(), b_shape.tolist())):
        if x != y:
            raise _err(op, f"Operands' shapes do not match: got {x} and {y} for dimension {d}")


def _grouping(keys: np.ndarray) -> tuple:
    """(distinct sorted keys, the permutation sorting the entries by key, each sorted entry's group, each
    entry's group): what a sorted segment reduction over the groups of equal keys needs."""
    groups, inv = np.unique(keys, return_inverse=True)
    inv = inv.reshape(-1).astype(np.int64)
    perm = np.argsort(inv, kind="stable").astype(np.int64)
    return groups.astype(np.int64), perm, inv[perm], inv


def _union_kernel(a_indices, b_indices, a_shape, b_shape, op="SparseAdd"):
    _same_shapes(a_shape, b_shape, op)
    groups, perm, sorted_ids, _ = _grouping(_linear(np.concatenate([a_indices, b_indices]), a_shape))
    return _unravel(groups, a_shape.tolist()), perm, sorted_ids


SPARSE_UNION = _plan("SparseUnion", _union_kernel, lambda specs, op="SparseAdd": [
    _mat(_cols(specs[0])), _vec(), _vec()], num_outputs=3)


def _concat_kernel(*args, axis, n, expand):
    indices, shapes = args[:n], [np.asarray(s).reshape(-1) for s in args[n:]]
    rank = shapes[0].shape[0]
    for i, s in enumerate(shapes[1:], 1):
        if s.shape[0] != rank:
            raise _err("SparseConcat", f"Ranks of all input tensors must match: expected {rank} but got "
                       f"{s.shape[0]} at position {i}")
    ax = axis + rank if axis < 0 else axis
    if expand:
        out = np.max(np.stack(shapes), axis=0)
    else:
        for i, s in enumerate(shapes[1:], 1):
            for d in range(rank):
                if d != ax and s[d] != shapes[0][d]:
                    raise _err("SparseConcat", f"Input shapes must match: expected {shapes[0][d]} for dimension "
                               f"{d} but got {s[d]} at position {i}")
        out = shapes[0].copy()
    out[ax] = sum(int(s[ax]) for s in shapes)
    parts, offset = [], 0
    for idx, s in zip(indices, shapes):
        idx = np.array(idx, np.int64).reshape(-1, rank)
        idx[:, ax] += offset
        offset += int(s[ax])
        parts.append(idx)
    idx = np.concatenate(parts)
    order = np.argsort(_linear(idx, out), kind="stable")
    return idx[order], order.astype(np.int64), out.astype(np.int64)


SPARSE_CONCAT_PLAN = _plan("SparseConcatPermutation", _concat_kernel, lambda specs, axis, n, expand: [
    _mat(_cols(specs[0])), _vec(), _vec(_len(specs[n]))], num_outputs=3)


def _reduce_kernel(indices, shape, axes, keepdims):
    rank = shape.shape[0]
    axes = tuple(range(rank)) if axes is None else axes
    keep = [d for d in range(rank) if d not in axes]
    kept_shape = [int(shape[d]) for d in keep]
    seg = _linear(indices[:, keep], kept_shape) if keep else np.zeros(indices.shape[0], np.int64)
    num = int(np.prod(kept_shape, dtype=np.int64)) if keep else 1
    final = [1 if d in axes else int(shape[d]) for d in range(rank)] if keepdims else kept_shape
    groups, perm, sorted_ids, entry_group = _grouping(seg)
    group_idx = _unravel(groups, kept_shape)
    if keepdims:
        full = np.zeros((len(groups), rank), np.int64)
        full[:, keep] = group_idx
        group_idx = full
    return perm, sorted_ids, entry_group, groups, group_idx, np.asarray(num, np.int64), np.asarray(final, np.int64)


def _reduce_shape(specs, axes, keepdims):
    rank = _len(specs[1])
    out_rank = None if rank is None else (rank if keepdims else rank - len(range(rank) if axes is None else axes))
    n = _len(specs[0])
    return [_vec(n), _vec(n), _vec(n), _vec(), _mat(out_rank), ((), _I64), _vec(out_rank)]


SPARSE_REDUCE_PLAN = _plan("SparseReduceSegments", _reduce_kernel, _reduce_shape, num_outputs=7)


def _slice_kernel(indices, shape, start, size):
    start, size = start.reshape(-1).astype(np.int64), size.reshape(-1).astype(np.int64)
    end = np.minimum(start + size, shape)
    keep = np.all((indices >= start[None, :]) & (indices < end[None, :]), axis=1)
    positions = np.nonzero(keep)[0].astype(np.int64)
    return indices[positions] - start[None, :], positions, np.maximum(end - start, 0).astype(np.int64)


SPARSE_SLICE_PLAN = _plan("SparseSlicePositions", _slice_kernel, lambda specs: [
    _mat(_cols(specs[0])), _vec(), _vec(_len(specs[1]))], num_outputs=3)


def _split_kernel(indices, shape, num_split, axis):
    rank = shape.shape[0]
    ax = axis + rank if axis < 0 else axis
    dim = int(shape[ax])
    if num_split > dim:
        raise _err("SparseSplit", f"Input num_split should be less than or equal to the split dimension "
                   f"size: got {num_split} > {dim}")
    out, begin = [], 0
    for i in range(num_split):
        size = dim // num_split + (1 if i < dim % num_split else 0)
        keep = (indices[:, ax] >= begin) & (indices[:, ax] < begin + size)
        positions = np.nonzero(keep)[0].astype(np.int64)
        idx = indices[positions].copy()
        idx[:, ax] -= begin
        piece = shape.copy()
        piece[ax] = size
        out += [idx, positions, piece.astype(np.int64)]
        begin += size
    return tuple(out)


def _split_shape(specs, num_split, axis):
    return [_mat(_cols(specs[0])), _vec(), _vec(_len(specs[1]))] * num_split


SPARSE_SPLIT_PLAN = _plan("SparseSplitPositions", _split_kernel, _split_shape,
                          num_outputs=lambda attrs: 3 * attrs["num_split"])


def _fill_rows_kernel(indices, shape):
    rows = int(shape[0])
    present = np.zeros(rows, bool)
    present[indices[:, 0]] = True
    empty = np.nonzero(~present)[0]
    extra = np.zeros((len(empty), shape.shape[0]), np.int64)
    extra[:, 0] = empty
    idx = np.concatenate([indices, extra])
    order = np.argsort(idx[:, 0], kind="stable").astype(np.int64)  # by row; a row keeps its entries' order
    return idx[order], order, np.asarray(len(empty), np.int64), ~present


SPARSE_FILL_ROWS_PLAN = _plan("SparseFillEmptyRowsPositions", _fill_rows_kernel, lambda specs: [
    _mat(_cols(specs[0])), _vec(), ((), _I64), ((None,), np.dtype(np.bool_))], num_outputs=4)


# -- conversions ---------------------------------------------------------------------


def from_dense(tensor: Any, name: Any = None) -> SparseTensor:
    """The non-zero (non-empty-string) elements of a dense tensor, in row-major order."""
    from tapeflow.ops import array_ops, indexing_ops, math_ops, shape_ops

    t = _dense(tensor)
    zero = b"" if t.dtype == dtypes.string else 0
    idx = array_ops.where_indices(math_ops.not_equal(t, convert_to_tensor(zero, dtype=t.dtype)))
    shape = shape_ops.shape(t, out_type=dtypes.int64)
    return _make(idx, indexing_ops.gather_nd(t, idx), shape, t._shape_tuple())


def to_dense(sp_input: Any, default_value: Any = None, validate_indices: bool = True, name: Any = None) -> Tensor:
    """A dense tensor, ``default_value`` (zero) where no value is given. With ``validate_indices`` (the default)
    the indices must be in bounds, in row-major order and not repeated (``tf.sparse.reorder`` sorts them)."""
    from tapeflow.ops import array_ops, indexing_ops

    sp = _check(sp_input, "to_dense")
    if default_value is None:
        default_value = b"" if sp.dtype == dtypes.string else 0
    elif isinstance(default_value, str):
        default_value = default_value.encode()
    default = _dense(default_value, sp.dtype)
    if default.dtype != sp.dtype:
        default = convert_to_tensor(default_value, dtype=sp.dtype)
    idx = execute(SPARSE_INDEX_CHECK, (sp.indices, sp.dense_shape), {"validate": bool(validate_indices)})
    static = _static(sp)
    base = array_ops.fill(static if static is not None else sp.dense_shape, default)
    out = indexing_ops.tensor_scatter_nd_update(base, idx, sp.values)
    return out


def reorder(sp_input: Any, name: Any = None) -> SparseTensor:
    """The same SparseTensor with its entries in row-major (canonical) order."""
    sp = _check(sp_input, "reorder")
    perm = execute(SPARSE_REORDER_PERMUTATION, (sp.indices, sp.dense_shape))
    return _make(_gather(sp.indices, perm), _gather(sp.values, perm), sp.dense_shape, sp.shape)


def reshape(sp_input: Any, shape: Any, name: Any = None) -> SparseTensor:
    """The same entries in a dense shape of as many elements (one dimension may be -1)."""
    sp = _check(sp_input, "reshape")
    new = _i64(shape)
    idx, out_shape = execute(SPARSE_RESHAPE, (sp.indices, sp.dense_shape, new))
    static = None
    try:
        new_static = [int(d) for d in np.asarray(new.numpy()).reshape(-1)]
        old = _static(sp)
        if -1 not in new_static:
            static = new_static
        elif old is not None and new_static.count(-1) == 1:
            known = int(np.prod([d for d in new_static if d != -1]))
            static = [int(np.prod(old)) // known if d == -1 and known else d for d in new_static]
    except Exception:  # noqa: BLE001 - a traced shape: what the kernel finds at run time
        static = None
    return _make(idx, sp.values, out_shape, static)


def transpose(sp_input: Any, perm: Any = None, name: Any = None) -> SparseTensor:
    """The SparseTensor with its dimensions permuted (reversed by default), entries in row-major order."""
    from tapeflow.ops import array_ops

    sp = _check(sp_input, "transpose")
    rank = _rank(sp, "transpose")
    perm = list(range(rank))[::-1] if perm is None else list(np.atleast_1d(_int_attr(perm, "perm", "transpose")))
    p = _const(perm)
    old = sp.shape
    static = None if old.rank is None else [old.as_list()[i] for i in perm]
    moved = _make(array_ops.gather(sp.indices, p, axis=1), sp.values, array_ops.gather(sp.dense_shape, p), static)
    return reorder(moved)


def expand_dims(sp_input: Any, axis: Any = None, name: Any = None) -> SparseTensor:
    """A size-1 dimension inserted at ``axis`` (default -1, the end)."""
    from tapeflow.ops import array_ops

    sp = _check(sp_input, "expand_dims")
    rank = _rank(sp, "expand_dims")
    a = -1 if axis is None else _int_attr(axis, "axis", "expand_dims")
    a = a + rank + 1 if a < 0 else a
    idx = sp.indices
    zeros = array_ops.zeros_like(idx[:, :1])
    new_idx = array_ops.concat([idx[:, :a], zeros, idx[:, a:]], 1)
    new_shape = array_ops.concat([sp.dense_shape[:a], _const([1]), sp.dense_shape[a:]], 0)
    old = sp.shape
    static = None if old.rank is None else old.as_list()[:a] + [1] + old.as_list()[a:]
    return _make(new_idx, sp.values, new_shape, static)


def reset_shape(sp_input: Any, new_shape: Any = None) -> SparseTensor:
    """The same entries with the tightest dense shape (``new_shape`` None), or a given one no smaller."""
    from tapeflow.ops import array_ops, math_ops

    sp = _check(sp_input, "reset_shape")
    if new_shape is None:
        rank = _rank(sp, "reset_shape")
        # TF: max(0, max index + 1); an empty SparseTensor gets all-zero dimensions
        padded = array_ops.concat([sp.indices, array_ops.fill([1, rank], _const(-1))], 0)
        shape = math_ops.add(math_ops.reduce_max(padded, axis=0), _const(1))
        return _make(sp.indices, sp.values, shape)
    shape = _i64(new_shape)
    if not _is_symbolic(shape, sp.dense_shape):
        old, new = np.asarray(sp.dense_shape.numpy()), np.asarray(shape.numpy()).reshape(-1)
        if old.shape != new.shape:
            raise ValueError(f"Shapes {list(new.shape)} and {list(old.shape)} are incompatible")
        if np.any(new < old):
            # TF's message names the two shapes the other way round
            raise ValueError(f"Requested new_shape should have dimension sizes >= sp_input.shape.  Found new_shape "
                             f"({old}), sp_input.shape ({new}).")
    return _make(sp.indices, sp.values, shape)


# -- arithmetic ---------------------------------------------------------------------


def add(a: Any, b: Any, threshold: Any = 0) -> Any:
    """SparseTensor + SparseTensor (a sparse result, values summed where both have one; with ``threshold`` > 0
    the sums of magnitude below it are dropped), or SparseTensor + dense (a dense result)."""
    from tapeflow.ops import array_ops, indexing_ops, math_ops, special_ops

    if not isinstance(a, SparseTensor):
        a, b = b, a
    if not isinstance(a, SparseTensor):
        raise TypeError("tf.sparse.add needs at least one SparseTensor")
    if not isinstance(b, SparseTensor):
        d = _dense(b, a.dtype)
        return indexing_ops.tensor_scatter_nd_add(d, a.indices, a.values)
    idx, perm, ids = execute(SPARSE_UNION, (a.indices, b.indices, a.dense_shape, b.dense_shape), {"op": "SparseAdd"})
    values = special_ops.segment_sum(_gather(array_ops.concat([a.values, b.values], 0), perm), ids)
    if not (isinstance(threshold, (int, float)) and threshold == 0):
        thresh = math_ops.cast(_dense(threshold), dtypes.as_dtype(values.dtype).real_dtype
                               if values.dtype.is_complex else values.dtype)
        keep = array_ops.reshape(array_ops.where_indices(math_ops.greater_equal(math_ops.abs(values), thresh)), [-1])
        idx, values = _gather(idx, keep), _gather(values, keep)
    return _make(idx, values, a.dense_shape, a.shape)


def concat(
    axis: Any, sp_inputs: Any, expand_nonconcat_dims: bool = False, name: Any = None, concat_dim: Any = None
) -> SparseTensor:
    """Concatenates SparseTensors along ``axis`` (the result in row-major order)."""
    from tapeflow.ops import array_ops

    if concat_dim is not None:
        axis = concat_dim
    if isinstance(axis, (list, tuple)) and not isinstance(sp_inputs, (list, tuple)):
        axis, sp_inputs = sp_inputs, axis
    sps = [_check(s, "concat") for s in sp_inputs]
    ax = _int_attr(axis, "axis", "concat")
    n = len(sps)
    idx, order, shape = execute(SPARSE_CONCAT_PLAN, tuple(s.indices for s in sps) + tuple(s.dense_shape for s in sps),
                                {"axis": ax, "n": n, "expand": bool(expand_nonconcat_dims)})
    # TF declares SparseConcat not differentiable: no gradient reaches the inputs' values
    values = array_ops.stop_gradient(_gather(array_ops.concat([s.values for s in sps], 0), order))
    statics = [_static(s) for s in sps]
    static = None
    if all(s is not None for s in statics) and len({len(s) for s in statics}) == 1:
        a = ax + len(statics[0]) if ax < 0 else ax
        static = [max(s[d] for s in statics) for d in range(len(statics[0]))] if expand_nonconcat_dims \
            else list(statics[0])
        static[a] = sum(s[a] for s in statics)
    return _make(idx, values, shape, static)


def _max_kernel(x):
    return np.array(x, copy=True)


# TF registers no gradient for SparseReduceMax(Sparse): differentiating tf.sparse.reduce_max is TF's LookupError
SPARSE_REDUCE_MAX = defop("SparseReduceMax", _max_kernel, shape=lambda specs: [specs[0]])
SPARSE_REDUCE_MAX_SPARSE = defop("SparseReduceMaxSparse", _max_kernel, shape=lambda specs: [specs[0]])
NoGradientRegistered("SparseReduceMax")
NoGradientRegistered("SparseReduceMaxSparse")


def _reduce(kind: str, sp: SparseTensor, axis: Any, keepdims: bool, output_is_sparse: bool) -> Any:
    from tapeflow.ops import array_ops, indexing_ops, special_ops

    rank = _rank(sp, f"reduce_{kind}")
    axes = None
    if axis is not None:
        ax = _int_attr(axis, "axis", f"reduce_{kind}")
        axes = tuple(sorted({int(a) % rank for a in np.atleast_1d(ax)})) if rank else ()
    perm, ids, _, groups, group_idx, num, out_shape = execute(
        SPARSE_REDUCE_PLAN, (sp.indices, sp.dense_shape), {"axes": axes, "keepdims": bool(keepdims)})
    segment = special_ops.segment_sum if kind == "sum" else special_ops.segment_max
    per_group = segment(_gather(sp.values, perm), ids)
    if kind == "max":
        per_group = execute(SPARSE_REDUCE_MAX_SPARSE if output_is_sparse else SPARSE_REDUCE_MAX, (per_group,))
    if output_is_sparse:
        return _make(group_idx, per_group, out_shape)
    # the groups with no values are 0 (for a max too, as TF)
    flat = indexing_ops.tensor_scatter_nd_update(
        array_ops.fill([num], convert_to_tensor(0, dtype=sp.dtype)), array_ops.expand_dims(groups, 1), per_group)
    old = sp.shape
    static = None
    if old.rank is not None and None not in old.as_list():
        dims = old.as_list()
        red = range(rank) if axes is None else axes
        static = [1 if d in red else dims[d] for d in range(rank)] if keepdims else \
            [dims[d] for d in range(rank) if d not in red]
    return array_ops.reshape(flat, static if static is not None else out_shape)


def reduce_sum(
    sp_input: Any, axis: Any = None, keepdims: Any = None, output_is_sparse: bool = False, name: Any = None
) -> Any:
    """Sums the values over ``axis`` (all by default); the missing elements count as zero. With
    ``output_is_sparse`` a SparseTensor of the sums of the groups that have values."""
    return _reduce("sum", _check(sp_input, "reduce_sum"), axis, bool(keepdims), bool(output_is_sparse))


def reduce_max(
    sp_input: Any, axis: Any = None, keepdims: Any = None, output_is_sparse: bool = False, name: Any = None
) -> Any:
    """The maximum over the *given* values along ``axis`` (as TF: implicit zeros do not take part; a dense
    output with no values is 0)."""
    return _reduce("max", _check(sp_input, "reduce_max"), axis, bool(keepdims), bool(output_is_sparse))


def _spmm_kernel(indices, values, a_shape, b, adjoint_a=False, adjoint_b=False):
    k = int(a_shape[0] if adjoint_a else a_shape[1])
    kb = b.shape[1] if adjoint_b else b.shape[0]
    if k != kb:
        raise _err("SparseTensorDenseMatMul", f"Cannot multiply A and B because inner dimension does not match: "
                   f"{k} vs. {kb}.  Did you forget a transpose?  Dimensions of A: [{int(a_shape[0])}, "
                   f"{int(a_shape[1])}).  Dimensions of B: {_fmt(b.shape)}")
    rows, cols = (indices[:, 1], indices[:, 0]) if adjoint_a else (indices[:, 0], indices[:, 1])
    m = int(a_shape[1] if adjoint_a else a_shape[0])
    dense = b.conj().T if adjoint_b else b
    vals = values.conj() if adjoint_a else values
    out = np.zeros((m, dense.shape[1]), dtype=np.result_type(values.dtype, b.dtype))
    np.add.at(out, rows, vals[:, None] * dense[cols])
    return out


def _spmm_shape(specs, adjoint_a=False, adjoint_b=False):
    b_shape = specs[3][0]
    n = None if b_shape is None else b_shape[0 if adjoint_b else 1]
    return [((None, n), specs[1][1])]


SPARSE_DENSE_MATMUL = defop("SparseTensorDenseMatMul", _spmm_kernel, shape=_spmm_shape)


@defgrad("SparseTensorDenseMatMul", inputs=True)
def _spmm_grad(op, g):
    """TF's rule: d values[k] = <g[row k], b[col k]>, d b = a^T @ g (no gradient
    for the indices and shape)."""
    from tapeflow.ops import array_ops, math_ops

    indices, values, a_shape, b = op.inputs
    adjoint_a, adjoint_b = op.get_attr("adjoint_a"), op.get_attr("adjoint_b")
    # d b: the same sparse matrix, adjoint flipped, times g
    b_grad = execute(
        SPARSE_DENSE_MATMUL, (indices, values, a_shape, g), {"adjoint_a": not adjoint_a, "adjoint_b": False}
    )
    if adjoint_b:
        b_grad = array_ops.transpose(b_grad)
    rows = array_ops.gather(indices, 1 if adjoint_a else 0, axis=1)
    cols = array_ops.gather(indices, 0 if adjoint_a else 1, axis=1)
    dense = array_ops.transpose(b) if adjoint_b else b
    v_grad = math_ops.reduce_sum(math_ops.multiply(array_ops.gather(g, rows), array_ops.gather(dense, cols)), axis=1)
    return None, v_grad, None, b_grad


def sparse_dense_matmul(
    sp_a: Any, b: Any, adjoint_a: bool = False, adjoint_b: bool = False, name: Any = None
) -> Tensor:
    """``sp_a @ b`` for a 2-D SparseTensor and a dense matrix (or dense @ sparse)."""
    from tapeflow.ops import array_ops

    if not isinstance(sp_a, SparseTensor) and isinstance(b, SparseTensor):
        # dense a @ sparse b = (b^T @ a^T)^T
        a = _dense(sp_a, b.dtype)
        out = sparse_dense_matmul(b, array_ops.transpose(a), adjoint_a=not adjoint_b, adjoint_b=adjoint_a)
        return array_ops.transpose(out)
    sp = _check(sp_a, "sparse_dense_matmul")
    dense = _dense(b, sp.dtype)
    shape = sp.shape
    dshape = dense._shape_tuple()
    if shape.rank not in (None, 2) or len(dshape) != 2:
        raise InvalidArgumentError(
            None,
            None,
            f"Tensor 'a' and 'b' must be matrices, got sparse shape {shape.as_list() if shape.rank else shape} and "
            f"dense shape {list(dshape)} [Op:SparseTensorDenseMatMul]",
        )
    static = _static(sp)
    if static is not None and None not in dshape:
        k = static[0] if adjoint_a else static[1]
        kb = dshape[1] if adjoint_b else dshape[0]
        if k != kb:
            raise _err("SparseTensorDenseMatMul", f"Cannot multiply A and B because inner dimension does not "
                       f"match: {k} vs. {kb}.  Did you forget a transpose?  Dimensions of A: [{static[0]}, "
                       f"{static[1]}).  Dimensions of B: {_fmt(dshape)}")
    if sp.values._value.dtype != dense._value.dtype:
        raise InvalidArgumentError(
            None,
            None,
            f"cannot compute SparseTensorDenseMatMul as input #3(zero-based) was "
            f"expected to be a {sp.dtype.name} tensor but is a {dense.dtype.name} tensor "
            "[Op:SparseTensorDenseMatMul]. Cast one operand so the dtypes match.",
        )
    return execute(
        SPARSE_DENSE_MATMUL,
        (sp.indices, sp.values, sp.dense_shape, dense),
        {"adjoint_a": bool(adjoint_a), "adjoint_b": bool(adjoint_b)},
    )


def map_values(op: Callable, *args: Any, **kwargs: Any) -> SparseTensor:
    """``op`` applied to the values of the SparseTensor arguments (same indices)."""
    found, new_args, new_kwargs = replace_composites(SparseTensor, lambda v: v.values, args, kwargs)
    if not found:
        raise ValueError("No SparseTensor in argument list of map_values")
    first = found[0]
    for other in found[1:]:
        if other is first or _is_symbolic(first.indices, other.indices, first.dense_shape, other.dense_shape):
            continue
        if not (np.array_equal(first.indices.numpy(), other.indices.numpy())
                and np.array_equal(first.dense_shape.numpy(), other.dense_shape.numpy())):
            raise InvalidArgumentError(
                None, None, "tf.sparse.map_values: SparseTensors' indices and dense shapes must match"
            )
    return first.with_values(_dense(op(*new_args, **new_kwargs)))


def slice(sp_input: Any, start: Any, size: Any, name: Any = None) -> SparseTensor:  # noqa: A001
    """The entries inside the box ``[start, start + size)``, re-indexed from ``start`` (in their order)."""
    sp = _check(sp_input, "slice")
    idx, positions, shape = execute(SPARSE_SLICE_PLAN, (sp.indices, sp.dense_shape, _i64(start), _i64(size)))
    return _make(idx, _gather(sp.values, positions), shape)


def split(sp_input: Any = None, num_split: Any = None, axis: Any = None, name: Any = None,
          split_dim: Any = None) -> list:
    """``num_split`` SparseTensors cut along ``axis``; the first ``size % num_split`` are one larger (TF's
    ``SparseSplit``; each keeps its entries' order)."""
    if split_dim is not None:
        axis = split_dim
    sp = _check(sp_input, "split")
    if num_split is None or axis is None:
        raise ValueError("tf.sparse.split needs num_split and axis")
    n = int(_int_attr(num_split, "num_split", "split"))
    ax = int(_int_attr(axis, "axis", "split"))
    outs = execute(SPARSE_SPLIT_PLAN, (sp.indices, sp.dense_shape), {"num_split": n, "axis": ax})
    return [_make(outs[3 * i], execute(SPARSE_SPLIT_VALUES, (_gather(sp.values, outs[3 * i + 1]),)), outs[3 * i + 2])
            for i in range(n)]


# TF registers no gradient for SparseSplit: differentiating through tf.sparse.split is TF's LookupError
SPARSE_SPLIT_VALUES = defop("SparseSplit", _max_kernel, shape=lambda specs: [specs[0]])
NoGradientRegistered("SparseSplit")


def retain(sp_input: Any, to_retain: Any) -> SparseTensor:
    """Keeps the entries where the boolean vector ``to_retain`` is True."""
    from tapeflow.ops import array_ops

    sp = _check(sp_input, "retain")
    keep = _dense(to_retain, dtypes.bool)
    n, k = sp.indices._shape_tuple()[0], keep._shape_tuple()
    if len(k) != 1:
        raise ValueError(f"Shape must be rank 1 but is rank {len(k)}")
    if n is not None and k[0] is not None and n != k[0]:
        raise ValueError(f"Dimensions {n} and {k[0]} are not compatible")
    positions = array_ops.reshape(array_ops.where_indices(keep), [-1])
    return _make(_gather(sp.indices, positions), _gather(sp.values, positions), sp.dense_shape, sp.shape)


def fill_empty_rows(sp_input: Any, default_value: Any, name: Any = None) -> tuple:
    """Adds ``default_value`` at ``[row, 0, ...]`` of every empty row; returns ``(filled, empty_row_indicator)``.
    The entries come by row, each row's in their given order."""
    from tapeflow.ops import array_ops

    sp = _check(sp_input, "fill_empty_rows")
    idx, order, num_empty, empty = execute(SPARSE_FILL_ROWS_PLAN, (sp.indices, sp.dense_shape))
    default = convert_to_tensor(default_value, dtype=sp.dtype) if not isinstance(default_value, Tensor) \
        else default_value
    values = _gather(array_ops.concat([sp.values, array_ops.fill([num_empty], default)], 0), order)
    return _make(idx, values, sp.dense_shape, sp.shape), empty


def _elementwise(kind: str) -> Callable:
    op_name = "SparseSparseMaximum" if kind == "maximum" else "SparseSparseMinimum"

    def fn(sp_a: Any, sp_b: Any, name: Any = None) -> SparseTensor:
        from tapeflow.ops import indexing_ops, math_ops

        a, b = _check(sp_a, kind), _check(sp_b, kind)
        idx, _, _ = execute(SPARSE_UNION, (a.indices, b.indices, a.dense_shape, b.dense_shape), {"op": op_name})
        da, db = to_dense(reorder(a)), to_dense(reorder(b))
        out = (math_ops.maximum if kind == "maximum" else math_ops.minimum)(da, db)
        return _make(idx, indexing_ops.gather_nd(out, idx), a.dense_shape, a.shape)

    fn.__name__ = kind
    fn.__doc__ = f"The element-wise {kind} of two SparseTensors (a missing entry counts as zero), on the union of " \
                 "their indices."
    return fn


maximum = _elementwise("maximum")
minimum = _elementwise("minimum")


def eye(num_rows: Any, num_columns: Any = None, dtype: Any = dtypes.float32, name: Any = None) -> SparseTensor:
    """A sparse identity matrix ``[num_rows, num_columns]``."""
    n = int(_int_attr(num_rows, "num_rows", "eye"))
    m = n if num_columns is None else int(_int_attr(num_columns, "num_columns", "eye"))
    k = min(n, m)
    idx = np.stack([np.arange(k), np.arange(k)], axis=1)
    return _make(_const(idx.reshape(-1, 2)), convert_to_tensor(np.ones(k, dtypes.as_dtype(dtype)._np)),
                 _const([n, m]), [n, m])


def to_indicator(sp_input: Any, vocab_size: Any, name: Any = None) -> Tensor:
    """A bool tensor one dimension larger in the last place, ``vocab_size`` wide: ``True`` at ``[..., v]`` for each
    id ``v`` among the values of the row ``[...]`` (TF's ``sparse_to_indicator``)."""
    from tapeflow.ops import array_ops, math_ops

    sp = _check(sp_input, "to_indicator")
    if not sp.dtype.is_integer:
        raise TypeError(f"Value passed to parameter 'sp_values' has DataType {sp.dtype.name} not in list of allowed "
                        "values: int32, int64")
    ids = array_ops.expand_dims(math_ops.cast(sp.values, dtypes.int64), 1)
    idx = array_ops.concat([sp.indices[:, :-1], ids], 1)
    shape = array_ops.concat([sp.dense_shape[:-1], array_ops.reshape(_i64(vocab_size), [1])], 0)
    static = sp.shape
    static = None if static.rank is None or isinstance(vocab_size, Tensor) else \
        static.as_list()[:-1] + [int(vocab_size)]
    merged = reorder(_make(idx, array_ops.ones_like(sp.values, dtype=dtypes.bool), shape, static))
    # repeated ids in a row are allowed: no order check, only bounds
    return to_dense(merged, default_value=False, validate_indices=False)


def softmax(sp_input: Any, name: Any = None) -> SparseTensor:
    """The softmax over the last dimension of the given entries of each row (implicit zeros do not take part)."""
    from tapeflow.ops import math_ops, special_ops

    sp = _check(sp_input, "softmax")
    rank = _rank(sp, "softmax")
    if rank < 2:
        shape = sp.dense_shape
        shown = shape.numpy().reshape(-1).tolist() if not _is_symbolic(shape) else "?"
        raise _err("SparseSoftmax", f"Input should have rank >= 2, but received shape: {shown[0] if shown else ''}")
    perm, ids, group, _, _, _, _ = execute(SPARSE_REDUCE_PLAN, (sp.indices, sp.dense_shape),
                                           {"axes": (rank - 1,), "keepdims": False})
    v = sp.values
    shifted = math_ops.subtract(v, _gather(special_ops.segment_max(_gather(v, perm), ids), group))
    e = math_ops.exp(shifted)
    out = math_ops.truediv(e, _gather(special_ops.segment_sum(_gather(e, perm), ids), group))
    return _make(sp.indices, out, sp.dense_shape, sp.shape)


# -- segment reductions over selected rows ---------------------------------------------


def _sparse_segment(kind: str, data: Any, indices: Any, segment_ids: Any, num_segments: Any) -> Tensor:
    from tapeflow.ops import array_ops, math_ops, special_ops

    op = {"sum": "SparseSegmentSum", "mean": "SparseSegmentMean", "sqrt_n": "SparseSegmentSqrtN"}[kind]
    op = op + "WithNumSegments" if num_segments is not None else op
    data, idx, ids = _dense(data), _dense(indices, dtypes.int32), _dense(segment_ids, dtypes.int32)
    if not _is_symbolic(idx, ids, data):
        rows = data._shape_tuple()[0]
        iv, sv = np.asarray(idx.numpy()).reshape(-1), np.asarray(ids.numpy()).reshape(-1)
        bad = np.nonzero((iv < 0) | (iv >= rows))[0]
        if bad.size:
            raise _err(op, f"Bad: indices[{bad[0]}] == {iv[bad[0]]} out of range [0, {rows})")
        if num_segments is None and np.any(np.diff(sv) < 0):
            raise _err(op, "segment ids are not increasing")
    rows = array_ops.gather(data, idx)
    if num_segments is None:
        total = special_ops.segment_sum(rows, ids)
        n = None
    else:
        n = _dense(num_segments, dtypes.int32)
        total = math_ops.unsorted_segment_sum(rows, ids, n)
    if kind == "sum":
        return total
    ones = array_ops.ones_like(ids, dtype=data.dtype)
    count = special_ops.segment_sum(ones, ids) if n is None else math_ops.unsorted_segment_sum(ones, ids, n)
    scale = math_ops.maximum(count, array_ops.ones_like(count))
    if kind == "sqrt_n":
        scale = math_ops.sqrt(scale)
    rank = len(data._shape_tuple())
    return math_ops.truediv(total, array_ops.reshape(scale, [-1] + [1] * (rank - 1)))


def segment_sum(data: Any, indices: Any, segment_ids: Any, num_segments: Any = None, name: Any = None,
                sparse_gradient: bool = False) -> Tensor:
    """Sums the rows ``data[indices]`` by sorted ``segment_ids`` (or into ``num_segments`` rows)."""
    return _sparse_segment("sum", data, indices, segment_ids, num_segments)


def segment_mean(data: Any, indices: Any, segment_ids: Any, num_segments: Any = None, name: Any = None,
                 sparse_gradient: bool = False) -> Tensor:
    """The mean of the rows ``data[indices]`` of each segment (0 for an empty one)."""
    return _sparse_segment("mean", data, indices, segment_ids, num_segments)


def segment_sqrt_n(data: Any, indices: Any, segment_ids: Any, num_segments: Any = None, name: Any = None,
                   sparse_gradient: bool = False) -> Tensor:
    """The sum of the rows ``data[indices]`` of each segment divided by the square root of its size."""
    return _sparse_segment("sqrt_n", data, indices, segment_ids, num_segments)


def mask(a: Any, mask_indices: Any, name: Any = None) -> IndexedSlices:
    """The rows of an ``IndexedSlices`` whose index is not among ``mask_indices`` (in their order)."""
    from tapeflow.ops import array_ops, math_ops

    ai, av = _dense(a.indices, dtypes.int32), _dense(a.values)
    m = _dense(mask_indices, ai.dtype)
    if m.dtype != ai.dtype:
        m = math_ops.cast(m, ai.dtype)
    differs = math_ops.not_equal(array_ops.expand_dims(ai, 1), array_ops.reshape(m, [1, -1]))
    keep = array_ops.reshape(array_ops.where_indices(math_ops.reduce_all(differs, axis=1)), [-1])
    return IndexedSlices(_gather(av, keep), _gather(ai, keep), a.dense_shape)


def sampled_addmm(indices: Any, values: Any, dense_shape: Any, mat1: Any, mat2: Any, beta: Any = 1.0,
                  alpha: Any = 1.0, output_type: Any = dtypes.float32) -> tuple:
    """``alpha * (mat1 @ mat2)`` at ``indices`` plus ``beta * values``: the triple ``(indices, values,
    dense_shape)`` of the sampled product (batched when the matrices are)."""
    from tapeflow.ops import indexing_ops, math_ops

    def int32(x: Any, what: str) -> Tensor:
        t = _dense(x, dtypes.int32)
        if t.dtype != dtypes.int32:
            raise ValueError(f"Tensor conversion requested dtype int32 for Tensor with dtype {t.dtype.name}: {t!r}")
        return t

    indices, dense_shape = int32(indices, "indices"), int32(dense_shape, "dense_shape")
    out = dtypes.as_dtype(output_type)
    m1, m2, v = _dense(mat1, out), _dense(mat2, out), _dense(values, out)
    batch = len(m1._shape_tuple()) - 2
    sampled = indexing_ops.gather_nd(math_ops.matmul(m1, m2), indices, batch_dims=batch)
    b, a = convert_to_tensor(beta, dtype=out), convert_to_tensor(alpha, dtype=out)
    return indices, math_ops.add(math_ops.multiply(a, sampled), math_ops.multiply(b, v)), dense_shape


def _count_sparse_kernel(values, rows, weights, nrows, minlength, maxlength, binary_output, per_row):
    v = np.asarray(values).astype(np.int64).reshape(-1)
    if v.size and v.min() < 0:
        raise InvalidArgumentError(None, None, "Input values must all be non-negative [Op:DenseCountSparseOutput]")
    depth = max(int(v.max()) + 1 if v.size else 1, minlength)  # an empty input has depth 1, as TF's kernel
    if maxlength >= 0:
        depth = min(depth, maxlength)
    w = np.asarray(weights).reshape(-1)
    r = np.asarray(rows, np.int64).reshape(-1) if per_row else np.zeros(v.shape, np.int64)
    keep = v < depth
    v, r = v[keep], r[keep]
    w = w[keep] if w.size else np.ones(v.shape, w.dtype)
    keys = r * depth + v
    uniq, first = np.unique(keys, return_inverse=True)
    counts = np.zeros(uniq.shape, np.float64 if w.dtype.kind == "f" else np.int64)
    np.add.at(counts, first, w)
    if binary_output:
        counts = np.ones_like(counts)
    out_rows, out_cols = np.divmod(uniq, depth)
    indices = np.stack([out_rows, out_cols], axis=1) if per_row else out_cols.reshape(-1, 1)
    shape = np.array([int(nrows), depth] if per_row else [depth], np.int64)
    return indices.astype(np.int64), counts.astype(w.dtype), shape


def _count_sparse_shape(specs, minlength, maxlength, binary_output, per_row, **_):
    rank = 2 if per_row else 1
    return [((None, rank), np.int64), ((None,), specs[2][1]), ((rank,), np.int64)]


COUNT_SPARSE = defop("DenseCountSparseOutput", _count_sparse_kernel, shape=_count_sparse_shape, num_outputs=3)
NotDifferentiable("DenseCountSparseOutput")


def bincount(values: Any, weights: Any = None, axis: int | None = 0, minlength: int | None = None,
             maxlength: int | None = None, binary_output: bool = False, name: Any = None) -> SparseTensor:
    """Counts of each value of the non-negative integer ``values`` (a tensor, ``SparseTensor`` or
    ``RaggedTensor``) as a ``SparseTensor``, as ``tf.sparse.bincount``: ``axis=0`` counts over all values
    (``[depth]``), ``axis=-1`` per row of a 2-D input (``[rows, depth]``); ``weights`` sums weights instead,
    ``binary_output`` marks presence with 1. A value that occurs has an entry even when its weights sum to 0.
    ``depth`` is ``max(max value + 1, minlength)``, at most ``maxlength`` (larger values are dropped)."""
    from tapeflow.ops import array_ops

    if axis is None:
        axis = 0
    if axis not in (0, -1):
        raise ValueError(f"Unsupported value for argument axis={axis}. Only 0 and -1 are currently supported.")
    if binary_output and weights is not None:
        raise ValueError("Arguments `binary_output` and `weights` are mutually exclusive. Please specify only one.")
    if isinstance(values, SparseTensor):
        flat, rows, nrows, rank = values.values, values.indices[:, 0], values.dense_shape[0], 2
        w = weights.values if isinstance(weights, SparseTensor) else weights
    elif hasattr(values, "flat_values"):  # RaggedTensor
        flat, rows, nrows, rank = values.flat_values, values.value_rowids(), values.nrows(), 2
        w = weights.flat_values if hasattr(weights, "flat_values") else weights
    else:
        v = _dense(values)
        rank = v.shape.rank
        if axis == -1 and rank is not None and rank > 2:
            raise InvalidArgumentError(None, None, f"Input must be a 1 or 2-dimensional tensor. Got: "
                                       f"[{','.join(str(d) for d in v.shape.as_list())}] [Op:DenseCountSparseOutput]")
        flat, rows, nrows = array_ops.reshape(v, [-1]), None, 0
        if rank == 2:
            shape = array_ops.shape(v, out_type=dtypes.int64)
            nrows = shape[0]
            rows = array_ops.reshape(array_ops.broadcast_to(array_ops.reshape(array_ops.range_(
                shape[0]), [-1, 1]), shape), [-1])
        w = None if weights is None else array_ops.reshape(_dense(weights), [-1])
    if flat.dtype not in (dtypes.int32, dtypes.int64):
        raise InvalidArgumentError(None, None, f"Value for attr 'T' of {flat.dtype.name} is not in the list of "
                                   "allowed values: int32, int64 [Op:DenseCountSparseOutput]")
    per_row = axis == -1 and rank == 2
    out_dtype = flat.dtype if w is None else _dense(w).dtype
    w = convert_to_tensor(np.zeros((0,), out_dtype._np)) if w is None else _dense(w)
    rows = rows if per_row else convert_to_tensor(np.zeros((0,), np.int64))
    indices, counts, shape = execute(COUNT_SPARSE, (flat, rows, w, _dense(nrows if per_row else 0, dtypes.int64)), {
        "minlength": -1 if minlength is None else int(minlength), "maxlength": -1 if maxlength is None else
        int(maxlength), "binary_output": bool(binary_output), "per_row": per_row})
    return SparseTensor(indices, counts, shape)


def cross(inputs: Any, name: Any = None, separator: Any = None) -> SparseTensor:
    """The crosses of the rows of string / integer inputs (dense matrices or SparseTensors) as strings joined by
    ``separator`` (``"_X_"``): every combination of one value per input, the sparse inputs first (as TF)."""
    from tapeflow.ops.cross_ops import sparse_cross

    return _make(*sparse_cross(inputs, separator))


def cross_hashed(inputs: Any, num_buckets: int = 0, hash_key: Any = None, name: Any = None) -> SparseTensor:
    """As :func:`cross`, each cross a FarmHash fold of its values' hashes modulo ``num_buckets`` (TF's ids)."""
    from tapeflow.ops.cross_ops import sparse_cross_hashed

    return _make(*sparse_cross_hashed(inputs, num_buckets, hash_key))


def _sparse_matmul_dispatch(a: Any, b: Any, *args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError("tf.matmul with a SparseTensor operand in tapeflow; use tf.sparse.sparse_dense_matmul")


def _sparse_unary(fn: Callable) -> Callable:
    def impl(x: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(x, SparseTensor):
            return NotImplemented
        kwargs.pop("name", None)
        return x.with_values(fn(x.values, *args, **kwargs))

    return impl


def _register() -> None:
    from tapeflow.framework.composite_tensor import install_dispatch_into
    from tapeflow.ops import math_ops, special_ops

    # TF dispatches zero-preserving unary ops on SparseTensors to the values.
    for name in (
        "abs",
        "negative",
        "sign",
        "square",
        "sqrt",
        "sin",
        "tan",
        "tanh",
        "floor",
        "ceil",
        "round",
        "cast",
        "expm1",
        "log1p",
    ):
        f = getattr(math_ops, name, None) or getattr(special_ops, name, None)
        if f is not None:
            dispatch_for(f)(_sparse_unary(getattr(f, "__wrapped__", f)))
    dispatch_for(math_ops.matmul)(_sparse_matmul_dispatch)
    install_dispatch_into("tapeflow", "math")


_register()
