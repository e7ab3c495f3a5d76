"""``tf.sparse``: ops on :class:`SparseTensor`.

Index bookkeeping (sorting, matching positions) is integer NumPy; every value
is computed with tapeflow ops (gather, segment sums, scatters), so gradients
w.r.t. ``values`` and dense operands follow TF's (e.g. ``sparse_dense_matmul``:
``d values = (g @ b^T)[rows, cols]``, ``d b = a^T @ g``).
"""

from __future__ import annotations

from typing import Any
from collections.abc import Callable

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.composite_tensor import dispatch_for, replace_composites
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.sparse_tensor import SparseTensor, SparseTensorSpec
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops.registry import NotDifferentiable, defgrad, defop

__all__ = [
    "SparseTensor",
    "SparseTensorSpec",
    "add",
    "bincount",
    "concat",
    "fill_empty_rows",
    "from_dense",
    "map_values",
    "reduce_max",
    "reduce_sum",
    "reorder",
    "reshape",
    "retain",
    "slice",
    "sparse_dense_matmul",
    "to_dense",
    "transpose",
    "expand_dims",
    "to_indicator",
    "maximum",
    "minimum",
    "reset_shape",
    "eye",
    "softmax",
]


def _np(x: Any) -> np.ndarray:
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


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


def _shape(sp: SparseTensor) -> list:
    return [int(d) for d in _np(sp.dense_shape).reshape(-1)]


def _linear(idx: np.ndarray, shape: list) -> np.ndarray:
    if idx.size == 0:
        return np.zeros(idx.shape[0], np.int64)
    return np.ravel_multi_index(tuple(idx.T), shape).astype(np.int64) if shape else np.zeros(len(idx), np.int64)


def _take(values: Tensor, order: np.ndarray) -> Tensor:
    from tapeflow.ops import array_ops

    return array_ops.gather(values, convert_to_tensor(np.asarray(order, np.int64)))


def _new(idx: np.ndarray, values: Tensor, shape: list) -> SparseTensor:
    idx = np.asarray(idx, np.int64).reshape(-1, len(shape))
    return SparseTensor(convert_to_tensor(idx), values, convert_to_tensor(np.asarray(shape, np.int64)))


# -- conversions ---------------------------------------------------------------------


def from_dense(tensor: Any, name: Any = None) -> SparseTensor:
    """The non-zero (non-empty-string) elements of a dense tensor."""
    from tapeflow.ops import indexing_ops

    t = _dense(tensor)
    arr = np.asarray(t._value)
    zero = b"" if arr.dtype.kind == "O" else 0
    idx = np.argwhere(arr != zero).astype(np.int64)
    values = indexing_ops.gather_nd(t, convert_to_tensor(idx)) if arr.ndim else t
    return _new(idx, values if arr.ndim else values, list(arr.shape))


def to_dense(sp_input: Any, default_value: Any = None, validate_indices: bool = True, name: Any = None) -> Tensor:
    """A dense tensor, ``default_value`` (zero) where no value is given."""
    from tapeflow.ops import array_ops, indexing_ops

    sp = _check(sp_input, "to_dense")
    shape = _shape(sp)
    idx = _np(sp.indices)
    if validate_indices and idx.size:
        if np.any(idx < 0) or np.any(idx >= np.asarray(shape)[None, :]):
            raise InvalidArgumentError(
                None, None, f"indices is out of bounds for dense_shape {shape} [Op:SparseToDense]"
            )
        lin = _linear(idx, shape)
        if np.any(np.diff(lin) <= 0):
            bad = int(np.nonzero(np.diff(lin) <= 0)[0][0]) + 1
            kind = "repeated" if lin[bad] == lin[bad - 1] else "out of order"
            raise InvalidArgumentError(
                None,
                None,
                f"indices[{bad}] = {idx[bad].tolist()} is {kind}. Many sparse "
                "ops require sorted indices; use tf.sparse.reorder to create a correctly "
                "ordered copy. [Op:SparseToDense]",
            )
    if default_value is None:
        default_value = b"" if sp.values._value.dtype.kind == "O" else 0
    elif isinstance(default_value, str):
        default_value = default_value.encode()
    base = array_ops.fill(shape, convert_to_tensor(default_value, dtype=sp.dtype))
    if not idx.size:
        return base
    return indexing_ops.tensor_scatter_nd_update(base, sp.indices, sp.values)


def reorder(sp_input: Any, name: Any = None) -> SparseTensor:
    """The same SparseTensor with indices in row-major order."""
    sp = _check(sp_input, "reorder")
    shape = _shape(sp)
    idx = _np(sp.indices)
    order = np.argsort(_linear(idx, shape), kind="stable")
    return _new(idx[order], _take(sp.values, order), shape)


def reshape(sp_input: Any, shape: Any, name: Any = None) -> SparseTensor:
    sp = _check(sp_input, "reshape")
    old = _shape(sp)
    new = [int(d) for d in _np(shape).reshape(-1)]
    total = int(np.prod(old))
    if new.count(-1) > 1:
        raise InvalidArgumentError(None, None, "only one output dimension may be -1 [Op:SparseReshape]")
    if -1 in new:
        known = int(np.prod([d for d in new if d != -1]))
        new[new.index(-1)] = total // known if known else 0
    if int(np.prod(new)) != total:
        raise InvalidArgumentError(
            None,
            None,
            f"Input to reshape is a SparseTensor with {total} dense values, but "
            f"the requested shape has {int(np.prod(new))} [Op:SparseReshape]",
        )
    lin = _linear(_np(sp.indices), old)
    idx = np.stack(np.unravel_index(lin, new), axis=1) if lin.size else np.zeros((0, len(new)), np.int64)
    return _new(idx, sp.values, new)


def transpose(sp_input: Any, perm: Any = None, name: Any = None) -> SparseTensor:
    sp = _check(sp_input, "transpose")
    shape = _shape(sp)
    perm = list(range(len(shape)))[::-1] if perm is None else [int(p) for p in _np(perm).reshape(-1)]
    idx = _np(sp.indices)[:, perm]
    return reorder(_new(idx, sp.values, [shape[p] for p in perm]))


def expand_dims(sp_input: Any, axis: Any = None, name: Any = None) -> SparseTensor:
    sp = _check(sp_input, "expand_dims")
    shape = _shape(sp)
    a = int(_np(axis)) if axis is not None else -1
    a = a + len(shape) + 1 if a < 0 else a
    idx = _np(sp.indices)
    idx = np.insert(idx, a, 0, axis=1)
    return _new(idx, sp.values, shape[:a] + [1] + shape[a:])


def reset_shape(sp_input: Any, new_shape: Any = None) -> SparseTensor:
    sp = _check(sp_input, "reset_shape")
    idx = _np(sp.indices)
    if new_shape is None:
        shape = (idx.max(axis=0) + 1).tolist() if idx.size else [0] * idx.shape[1]
    else:
        shape = [int(d) for d in _np(new_shape).reshape(-1)]
    return _new(idx, sp.values, shape)


# -- arithmetic ---------------------------------------------------------------------


def add(a: Any, b: Any, threshold: Any = 0) -> Any:
    """SparseTensor + SparseTensor (sparse result, values summed where both
    have one) or SparseTensor + dense (dense result)."""
    from tapeflow.ops import array_ops, indexing_ops, math_ops

    if not isinstance(a, SparseTensor):
        a, b = b, a
    if not isinstance(a, SparseTensor):
        raise TypeError("tf.sparse.add needs at least one SparseTensor")
    if not isinstance(b, SparseTensor):
        d = _dense(b, a.dtype)
        return indexing_ops.tensor_scatter_nd_add(d, a.indices, a.values)
    shape = _shape(a)
    if _shape(b) != shape:
        raise InvalidArgumentError(None, None, f"Operands' shapes do not match: {shape} vs. {_shape(b)} [Op:SparseAdd]")
    idx = np.concatenate([_np(a.indices), _np(b.indices)])
    lin = _linear(idx, shape)
    uniq, inv = np.unique(lin, return_inverse=True)
    values = math_ops.unsorted_segment_sum(
        array_ops.concat([a.values, b.values], 0), convert_to_tensor(inv.astype(np.int64)), len(uniq)
    )
    new_idx = np.stack(np.unravel_index(uniq, shape), axis=1) if uniq.size else np.zeros((0, len(shape)), np.int64)
    thresh = float(_np(threshold))
    if thresh > 0:
        keep = np.abs(np.asarray(values.numpy())) >= thresh
        values = _take(values, np.nonzero(keep)[0])
        new_idx = new_idx[keep]
    return _new(new_idx, values, shape)


def concat(
    axis: Any, sp_inputs: Any, expand_nonconcat_dims: bool = False, name: Any = None, concat_dim: Any = None
) -> SparseTensor:
    """Concatenates SparseTensors along ``axis`` (output in row-major order)."""
    from tapeflow.ops import array_ops

    if concat_dim is not None:
        axis = concat_dim
    if isinstance(axis, (list, tuple)) and not isinstance(sp_inputs, (list, tuple)):
        axis, sp_inputs = sp_inputs, axis
    sps = [_check(s, "concat") for s in sp_inputs]
    shapes = [_shape(s) for s in sps]
    rank = len(shapes[0])
    ax = int(_np(axis))
    ax = ax + rank if ax < 0 else ax
    if expand_nonconcat_dims:
        out_shape = [max(s[d] for s in shapes) for d in range(rank)]
    else:
        for s in shapes[1:]:
            if len(s) != rank or any(s[d] != shapes[0][d] for d in range(rank) if d != ax):
                raise InvalidArgumentError(
                    None,
                    None,
                    f"Input shapes must match: expected {shapes[0]} for non-concat dims, got {s} [Op:SparseConcat]",
                )
        out_shape = list(shapes[0])
    out_shape[ax] = sum(s[ax] for s in shapes)
    parts, offset = [], 0
    for s, shp in zip(sps, shapes):
        idx = _np(s.indices).copy()
        idx[:, ax] += offset
        offset += shp[ax]
        parts.append(idx)
    idx = np.concatenate(parts)
    values = array_ops.concat([s.values for s in sps], 0)
    order = np.argsort(_linear(idx, out_shape), kind="stable")
    return _new(idx[order], _take(values, order), out_shape)


def _reduce(kind: str, sp: SparseTensor, axis: Any, keepdims: bool) -> Tensor:
    from tapeflow.ops import math_ops, special_ops

    shape = _shape(sp)
    if axis is None:
        axes = list(range(len(shape)))
    else:
        axes = sorted({int(a) % len(shape) for a in _np(axis).reshape(-1)})
    keep = [d for d in range(len(shape)) if d not in axes]
    out_shape = [shape[d] for d in keep]
    idx = _np(sp.indices)
    seg = _linear(idx[:, keep], out_shape) if keep else np.zeros(len(idx), np.int64)
    n = int(np.prod(out_shape)) if keep else 1
    ids = convert_to_tensor(seg)
    if kind == "sum":
        out = math_ops.unsorted_segment_sum(sp.values, ids, n)
    else:
        out = special_ops.unsorted_segment_max(sp.values, ids, n)
        present = np.zeros(n, bool)
        present[seg] = True
        if not present.all():  # TF: an output with no values is 0
            out = math_ops.where(convert_to_tensor(present), out, math_ops.cast(convert_to_tensor(0), sp.dtype))
    from tapeflow.ops import array_ops

    final = [1 if (d in axes) else shape[d] for d in range(len(shape))] if keepdims else out_shape
    return array_ops.reshape(out, final)


def reduce_sum(
    sp_input: Any, axis: Any = None, keepdims: Any = None, output_is_sparse: bool = False, name: Any = None
) -> Tensor:
    """Sums the values over ``axis`` (all by default); the missing elements count as zero."""
    if output_is_sparse:
        raise NotImplementedError("tf.sparse.reduce_sum(output_is_sparse=True) in tapeflow")
    return _reduce("sum", _check(sp_input, "reduce_sum"), axis, bool(keepdims))


def reduce_max(
    sp_input: Any, axis: Any = None, keepdims: Any = None, output_is_sparse: bool = False, name: Any = None
) -> Tensor:
    """The maximum over the *given* values along ``axis`` (as TF: implicit zeros
    do not take part; an output with no values is 0)."""
    if output_is_sparse:
        raise NotImplementedError("tf.sparse.reduce_max(output_is_sparse=True) in tapeflow")
    return _reduce("max", _check(sp_input, "reduce_max"), axis, bool(keepdims))


def _spmm_kernel(indices, values, a_shape, b, adjoint_a=False, adjoint_b=False):
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
    shape = _shape(sp)
    dshape = dense._shape_tuple()
    if len(shape) != 2 or len(dshape) != 2:
        raise InvalidArgumentError(
            None,
            None,
            f"Tensor 'a' and 'b' must be matrices, got sparse shape {shape} and "
            f"dense shape {list(dshape)} [Op:SparseTensorDenseMatMul]",
        )
    k = shape[0] if adjoint_a else shape[1]
    kb = dshape[1] if adjoint_b else dshape[0]
    if k != kb:
        raise InvalidArgumentError(
            None,
            None,
            f"Cannot multiply A and B because inner dimension does not match: "
            f"{k} vs. {kb}.  Did you forget a transpose?  Dimensions of A: [{shape[0]}, "
            f"{shape[1]}).  Dimensions of B: {list(dshape)} [Op:SparseTensorDenseMatMul]",
        )
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
        if not (
            np.array_equal(_np(first.indices), _np(other.indices))
            and np.array_equal(_np(first.dense_shape), _np(other.dense_shape))
        ):
            raise InvalidArgumentError(
                None, None, "tf.sparse.map_values: SparseTensors' indices and dense shapes must match"
            )
    return first.with_values(_dense(op(*new_args, **new_kwargs)))


def slice(sp_input: Any, start: Any, size: Any, name: Any = None) -> SparseTensor:  # noqa: A001
    """The entries inside the box ``[start, start + size)``, re-indexed from ``start``."""
    sp = _check(sp_input, "slice")
    shape = _shape(sp)
    start = np.asarray([int(d) for d in _np(start).reshape(-1)], np.int64)
    size = np.asarray([int(d) for d in _np(size).reshape(-1)], np.int64)
    end = np.minimum(start + size, shape)
    idx = _np(sp.indices)
    keep = np.all((idx >= start[None, :]) & (idx < end[None, :]), axis=1) if idx.size else np.zeros(0, bool)
    out_shape = np.maximum(end - start, 0).tolist()
    return _new(idx[keep] - start[None, :], _take(sp.values, np.nonzero(keep)[0]), out_shape)


def retain(sp_input: Any, to_retain: Any) -> SparseTensor:
    """Keeps the entries where the boolean vector ``to_retain`` is True."""
    sp = _check(sp_input, "retain")
    keep = _np(to_retain).astype(bool).reshape(-1)
    n = _np(sp.indices).shape[0]
    if keep.size != n:
        raise ValueError(f"to_retain has {keep.size} elements but sp_input has {n} values")
    return _new(_np(sp.indices)[keep], _take(sp.values, np.nonzero(keep)[0]), _shape(sp))


def fill_empty_rows(sp_input: Any, default_value: Any, name: Any = None) -> tuple:
    """Adds ``default_value`` at ``[row, 0, ...]`` of every empty row; returns
    ``(filled, empty_row_indicator)``."""
    from tapeflow.ops import array_ops

    sp = _check(sp_input, "fill_empty_rows")
    shape = _shape(sp)
    idx = _np(sp.indices)
    present = np.zeros(shape[0], bool)
    present[idx[:, 0]] = True
    empty = np.nonzero(~present)[0]
    new_idx = np.zeros((len(empty), len(shape)), np.int64)
    new_idx[:, 0] = empty
    fill = array_ops.fill([len(empty)], convert_to_tensor(default_value, dtype=sp.dtype))
    all_idx = np.concatenate([idx, new_idx])
    values = array_ops.concat([sp.values, fill], 0)
    order = np.argsort(_linear(all_idx, shape), kind="stable")
    return _new(all_idx[order], _take(values, order), shape), convert_to_tensor(~present)


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


def _elementwise(kind: str) -> Callable:
    def fn(sp_a: Any, sp_b: Any, name: Any = None) -> SparseTensor:
        from tapeflow.ops import math_ops

        a, b = _check(sp_a, kind), _check(sp_b, kind)
        shape = _shape(a)
        da, db = to_dense(reorder(a)), to_dense(reorder(b))
        both = np.unique(np.concatenate([_linear(_np(a.indices), shape), _linear(_np(b.indices), shape)]))
        idx = np.stack(np.unravel_index(both, shape), axis=1) if both.size else np.zeros((0, len(shape)), np.int64)
        from tapeflow.ops import indexing_ops

        out = (math_ops.maximum if kind == "maximum" else math_ops.minimum)(da, db)
        return _new(idx, indexing_ops.gather_nd(out, convert_to_tensor(idx)), shape)

    fn.__name__ = kind
    return fn


maximum = _elementwise("maximum")
minimum = _elementwise("minimum")


def eye(num_rows: int, num_columns: Any = None, dtype: Any = dtypes.float32, name: Any = None) -> SparseTensor:
    n = int(num_rows)
    m = n if num_columns is None else int(num_columns)
    k = min(n, m)
    idx = np.stack([np.arange(k), np.arange(k)], axis=1)
    return _new(idx, convert_to_tensor(np.ones(k, dtypes.as_dtype(dtype)._np)), [n, m])


def to_indicator(sp_input: Any, vocab_size: int, name: Any = None) -> Tensor:
    raise NotImplementedError("tf.sparse.to_indicator in tapeflow")


def softmax(sp_input: Any, name: Any = None) -> SparseTensor:
    raise NotImplementedError("tf.sparse.softmax in tapeflow")


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


# TF's tf.sparse names tapeflow does not build: looking one up says so.
_NOT_BUILT = frozenset(
    {"cross", "cross_hashed", "mask", "segment_mean", "segment_sqrt_n", "segment_sum", "split"}
)


def __getattr__(name: str) -> Any:
    if name in _NOT_BUILT:
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError(f"tf.sparse.{name} is not implemented in tapeflow")
    raise AttributeError(f"module 'tapeflow.sparse' has no attribute '{name}'")
