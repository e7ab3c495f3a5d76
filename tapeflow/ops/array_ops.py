"""Shape manipulation, slicing, gathering, creation (``tf`` array ops)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework import tensor as _tensor_mod
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.indexed_slices import IndexedSlices
from tapeflow.framework.tensor import Tensor, _wrap, constant, convert_to_tensor
from tapeflow.framework.tensor_shape import TensorShape
from tapeflow.ops import math_ops, shapes
from tapeflow.ops._helpers import as_int_tuple, normalize_axis, scalar_axis, scalar_int, t
from tapeflow.ops.registry import NotDifferentiable, defgrad, defop


def _err(op: str, msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"{msg} [Op:{op}]")


# ----------------------------------------------------------------------------
# Identity and stop_gradient
# ----------------------------------------------------------------------------

IDENTITY = defop("Identity", lambda x: x, shape=shapes.same)


@defgrad("Identity", inputs=False)
def _identity_grad(op, g):
    return g


def identity(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    return execute(IDENTITY, (t(input),))


STOP_GRADIENT = defop("StopGradient", lambda x: x, shape=shapes.same)
NotDifferentiable("StopGradient")


def stop_gradient(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Passes the value through but blocks gradients (None upstream of it)."""
    return execute(STOP_GRADIENT, (t(input),))


# ----------------------------------------------------------------------------
# Reshaping
# ----------------------------------------------------------------------------

def _reshape_kernel(x, shape):
    if type(x) is np.ndarray or isinstance(x, np.generic):
        return x.reshape(shape)  # (np.reshape's dispatch costs more than the reshape; the same method)
    return np.reshape(x, shape)


def _reshape_shape(specs, shape):
    in_shape, dt = specs[0]
    if -1 in shape and in_shape is not None and None not in in_shape:
        shape = _infer_minus_one(tuple(in_shape), tuple(shape))
    return [(tuple(None if d == -1 else d for d in shape), dt)]


RESHAPE = defop("Reshape", _reshape_kernel, shape=_reshape_shape)


@defgrad("Reshape", inputs=False)
def _reshape_grad(op, g):
    s = op.input_shapes[0]
    if s is None or None in s:  # traced with unknown dims: the input's run-time shape
        return _dyn().dynamic_reshape(g, _dyn().shape_of(op.inputs[0]), static=s)
    return reshape(g, s)


def _dyn():
    # Dynamic-shape ops (tensors as shapes); only reached when a dim is unknown.
    from tapeflow.ops import shape_ops

    return shape_ops


def _symbolic_dims(v: Any) -> bool:
    """A shape argument holding graph tensors (known only at run time)."""
    sv = _dyn()
    if isinstance(v, Tensor):
        return sv.is_symbolic(v)
    return isinstance(v, (list, tuple)) and any(sv.is_symbolic(d) for d in v)


def reshape(tensor: Any, shape: Any, name: str | None = None) -> Tensor:
    """Reshapes; one dim may be -1 (inferred)."""
    x = t(tensor)
    try:
        shape = as_int_tuple(shape, "shape")
    except (AttributeError, NotImplementedError, TypeError):
        if _symbolic_dims(shape):
            return _dyn().dynamic_reshape(x, shape)
        raise
    in_shape = x._shape_tuple()
    if shape.count(-1) > 1:
        raise _err("Reshape", f"only one input size may be -1, not both in shape {list(shape)}")
    if in_shape is not None and None not in in_shape:  # (None: a graph tensor of unknown rank)
        total = int(np.prod(in_shape, dtype=np.int64))
        if -1 in shape:
            shape = _infer_minus_one(in_shape, shape)
        known = int(np.prod(shape, dtype=np.int64))
        if known != total:
            raise _err(
                "Reshape",
                f"Input to reshape is a tensor with {total} values (shape {list(in_shape)}), but the requested "
                f"shape {list(shape)} has {known}; the number of elements must stay the same",
            )
        if shape == in_shape:
            return execute(RESHAPE, (x,), {"shape": shape}) if _recording() else x
    return execute(RESHAPE, (x,), {"shape": shape})


def _infer_minus_one(in_shape: tuple, shape: tuple) -> tuple:
    """The -1 of ``shape`` filled in by TF's rule: when ``shape`` has a 0, the
    input's 0 dims are left out of both counts (``[0, 3] -> [-1, 0]`` is
    ``[3, 0]``, ``[0] -> [0, -1]`` is ``[0, 1]``)."""
    zero = 0 in shape
    product = int(np.prod([d for d in shape if d not in (-1, 0)], dtype=np.int64))
    n_in = int(np.prod([d for d in in_shape if d > 0 or not zero], dtype=np.int64))
    has_zero = zero and 0 in in_shape
    missing = n_in // product if product else 0
    if not has_zero and product * missing != n_in:
        raise _err("Reshape", f"Input to reshape is a tensor with {n_in} values (shape {list(in_shape)}), but the "
                   f"requested shape {list(shape)} requires a multiple of {product}")
    return tuple(missing if d == -1 else d for d in shape)


def _recording() -> bool:
    from tapeflow.framework.context import state

    return state.recording or state.graph is not None


def _transpose_kernel(x, perm):
    return np.transpose(x, perm)


def _transpose_shape(specs, perm):
    s, dt = specs[0]
    return [(None if s is None else tuple(s[p] for p in perm), dt)]


TRANSPOSE = defop("Transpose", _transpose_kernel, shape=_transpose_shape)


@defgrad("Transpose", inputs=False)
def _transpose_grad(op, g):
    perm = op.get_attr("perm")
    return transpose(g, tuple(int(i) for i in np.argsort(perm)))


def transpose(a: Any, perm: Any = None, conjugate: bool = False, name: str | None = None) -> Tensor:
    """Permutes axes (reverses them when ``perm`` is None)."""
    x = t(a)
    nd = len(x._shape_tuple())
    if perm is None:
        perm = tuple(range(nd - 1, -1, -1))
    else:
        perm = as_int_tuple(perm, "perm")
        if sorted(p % nd if nd else p for p in perm) != list(range(nd)) or len(perm) != nd:
            raise _err("Transpose", f"transpose expects a permutation of 0..{nd - 1} for an input of shape "
                       f"{list(x._shape_tuple())}, got perm {list(perm)}")
        perm = tuple(p % nd for p in perm)
    out = execute(TRANSPOSE, (x,), {"perm": perm})
    if conjugate and x.dtype.is_complex:
        from tapeflow.ops.math_ops import conj

        out = conj(out)
    return out


def expand_dims(input: Any, axis: Any, name: str | None = None) -> Tensor:  # noqa: A002
    x = t(input)
    s = x._shape_tuple()
    a = int(axis)
    if not -len(s) - 1 <= a <= len(s):
        raise _err("ExpandDims", f"Tried to expand dim index {a} for tensor with {len(s)} dimensions; "
                   f"axis must be in [{-len(s) - 1}, {len(s)}]")
    a = a % (len(s) + 1)
    if None in s:
        return _dyn().reshape_keeping(x, s[:a] + (1,) + s[a:])
    return execute(RESHAPE, (x,), {"shape": s[:a] + (1,) + s[a:]})  # (a valid shape: no checks needed)


def _reshape_any(x, shape):
    return execute(RESHAPE, (x,), {"shape": tuple(-1 if d is None else d for d in shape)})


def squeeze(input: Any, axis: Any = None, name: str | None = None) -> Tensor:  # noqa: A002
    """Removes dims of size 1 (those in ``axis``, or all). In a graph traced
    with unknown dims and no ``axis``, only dims known to be 1 are removed
    (TF would also drop unknown dims that are 1 at run time, with an
    unknown static rank): pass ``axis`` to be exact."""
    x = t(input)
    s = x._shape_tuple()
    if axis is None or (isinstance(axis, (list, tuple)) and not axis):  # TF: axis=[] squeezes every 1
        new = tuple(d for d in s if d != 1)
    else:
        axes = [normalize_axis(a, len(s), "Squeeze") for a in (axis if isinstance(axis, (list, tuple)) else [axis])]
        for a in axes:
            if s[a] != 1 and s[a] is not None:
                raise _err("Squeeze", f"Can not squeeze dim[{a}], expected a dimension of 1, got {s[a]} "
                           f"(input shape {list(s)})")
        new = tuple(d for i, d in enumerate(s) if i not in axes)
    if None in s:
        return _dyn().reshape_keeping(x, new)
    if new == s and not _recording():
        return x  # (as reshape to the same shape)
    return execute(RESHAPE, (x,), {"shape": new})


# ----------------------------------------------------------------------------
# Concatenation and splitting
# ----------------------------------------------------------------------------

def _concat_kernel(*xs, axis):
    return np.concatenate(xs, axis=axis)


def _concat_shape(specs, axis):
    first, dt = specs[0]
    if any(s is None for s, _ in specs):
        return [(None, dt)]
    out = list(first)
    sizes = [s[axis] for s, _ in specs]
    out[axis] = None if None in sizes else sum(sizes)
    return [(tuple(out), dt)]


CONCAT = defop("ConcatV2", _concat_kernel, shape=_concat_shape)


@defgrad("ConcatV2", inputs=False)
def _concat_grad(op, g):
    axis = op.get_attr("axis")
    sizes = [s[axis] for s in op.input_shapes]
    if None in sizes:  # traced with unknown sizes along the axis: read them at run time
        sv = _dyn()
        run_sizes = [d if d is not None else getitem(sv.shape_of(x), axis) for d, x in zip(sizes, op.inputs)]
        return sv.dynamic_split(g, run_sizes, axis, len(sizes))
    return split(g, sizes, axis=axis)


def concat(values: Any, axis: Any, name: str | None = "concat") -> Tensor:
    """Joins tensors along an existing axis."""
    if isinstance(values, Tensor) or not isinstance(values, (list, tuple)):
        values = [values]
    xs = [t(v) for v in values]
    if len(xs) == 1:
        if type(axis) is not int:
            scalar_axis(axis, "ConcatV2")  # TF checks the axis even for one input
        return identity(xs[0])
    nd = len(xs[0]._shape_tuple())
    if nd == 0:
        raise _err("ConcatV2", "Can't concatenate scalars (use tf.stack instead)")
    a = normalize_axis(axis, nd, "ConcatV2")
    for i, x in enumerate(xs):
        s = x._shape_tuple()
        if x.dtype is not xs[0].dtype:
            raise _err("ConcatV2", f"concat: input {i} has dtype {x.dtype.name} but input 0 has "
                       f"{xs[0].dtype.name}; cast them to one dtype")
        if len(s) != nd or any(p != q and None not in (p, q)
                               for j, (p, q) in enumerate(zip(s, xs[0]._shape_tuple())) if j != a):
            raise _err("ConcatV2", f"ConcatOp : Dimension mismatch: input 0 has shape {list(xs[0]._shape_tuple())}"
                       f" and input {i} has shape {list(s)}; all dims but axis {a} must match")
    return execute(CONCAT, tuple(xs), {"axis": a})


def _pack_kernel(*xs, axis):
    return np.stack(xs, axis=axis)


def _pack_shape(specs, axis):
    s, dt = specs[0]
    if s is None:
        return [(None, dt)]
    out = list(s)
    out.insert(axis, len(specs))
    return [(tuple(out), dt)]


PACK = defop("Pack", _pack_kernel, shape=_pack_shape)


@defgrad("Pack", inputs=False)
def _pack_grad(op, g):
    return unstack(g, num=len(op.input_ids), axis=op.get_attr("axis"))


def stack(values: Any, axis: int = 0, name: str = "stack") -> Tensor:
    """Stacks same-shaped tensors along a new axis."""
    if values is None:
        raise TypeError("tf.stack: values must be a list of tensors, got None")
    xs = [t(v) for v in values]
    if not xs:
        raise ValueError("stack needs at least one tensor")
    s0 = xs[0]._shape_tuple()
    for i, x in enumerate(xs):
        if x._shape_tuple() != s0 and None not in s0 + x._shape_tuple():
            raise _err("Pack", f"Shapes of all inputs must match: values[0].shape = {list(s0)} != "
                       f"values[{i}].shape = {list(x._shape_tuple())}")
        if x.dtype is not xs[0].dtype:
            raise _err("Pack", f"stack: values[{i}] has dtype {x.dtype.name} but values[0] has {xs[0].dtype.name}")
    a = normalize_axis(axis, len(s0) + 1, "Pack")
    return execute(PACK, tuple(xs), {"axis": a})



def _auto_pack(value: Any, dtype: Any) -> Tensor:
    """``convert_to_tensor`` of a nested list holding tensors: Pack ops (TF's
    auto-packing), Python numbers taking the tensors' dtype."""
    def first_dtype(v: Any) -> Any:
        for item in v:
            if isinstance(item, (list, tuple)):
                d = first_dtype(item)
                if d is not None:
                    return d
            elif not isinstance(item, (int, float, complex, bool, np.generic, str, bytes)):
                return convert_to_tensor(item).dtype
        return None

    dt = dtype if dtype is not None else first_dtype(value)

    def pack(v: Any) -> Tensor:
        if isinstance(v, (list, tuple)):
            return stack([pack(item) for item in v])
        return convert_to_tensor(v, dtype=dt)

    return pack(value)


_tensor_mod._pack_hook = _auto_pack

def _unpack_kernel(x, num, axis):
    return tuple(np.take(x, i, axis=axis) for i in range(num))


def _unpack_shape(specs, num, axis):
    s, dt = specs[0]
    out = None if s is None else tuple(d for i, d in enumerate(s) if i != axis)
    return [(out, dt)] * num


UNPACK = defop("Unpack", _unpack_kernel, shape=_unpack_shape, num_outputs=lambda attrs: attrs["num"])


@defgrad("Unpack", inputs=False)
def _unpack_grad(op, *grads):
    return stack(list(grads), axis=op.get_attr("axis"))


def unstack(value: Any, num: int | None = None, axis: int = 0, name: str = "unstack") -> list:
    x = t(value)
    s = x._shape_tuple()
    if not s:
        raise ValueError("Input shape must have rank at least 1 to unstack, got a scalar.")
    a = normalize_axis(axis, len(s), "Unpack")
    if num is None:
        num = s[a]
        if num is None:
            raise ValueError(f"Cannot infer argument `num` from shape {list(s)}")
    elif s[a] is not None and num != s[a]:
        raise _err("Unpack", f"Input shape axis {a} must equal {num}, got {s[a]}")
    if num == 0:
        return []
    return execute(UNPACK, (x,), {"num": int(num), "axis": a})


def _split_kernel(x, sizes, axis):
    idx = np.cumsum(sizes)[:-1]
    return tuple(np.split(x, idx, axis=axis))


def _split_shape(specs, sizes, axis):
    s, dt = specs[0]
    outs = []
    for n in sizes:
        if s is None:
            outs.append((None, dt))
        else:
            o = list(s)
            o[axis] = n
            outs.append((tuple(o), dt))
    return outs


SPLIT = defop("SplitV", _split_kernel, shape=_split_shape, num_outputs=lambda attrs: len(attrs["sizes"]))


@defgrad("SplitV", inputs=False)
def _split_grad(op, *grads):
    return concat(list(grads), axis=op.get_attr("axis"))


def split(value: Any, num_or_size_splits: Any, axis: int = 0, num: int | None = None, name: str = "split") -> list:
    """Splits into ``num_or_size_splits`` equal parts or parts of the given sizes."""
    x = t(value)
    s = x._shape_tuple()
    a = normalize_axis(axis, len(s), "Split")
    dim = s[a]
    if isinstance(num_or_size_splits, (int, np.integer)) or (
            isinstance(num_or_size_splits, Tensor) and num_or_size_splits.ndim == 0):
        n = int(num_or_size_splits)
        if dim is None and n > 0:
            return _dyn().dynamic_split(x, None, a, n)
        if n <= 0 or (dim is not None and dim % n):
            raise _err("Split", f"Number of ways to split should evenly divide the split dimension, but got "
                       f"split_dim {a} (size = {dim}) and num_split {n}")
        sizes = (dim // n,) * n
    else:
        sizes = list(as_int_tuple(num_or_size_splits, "num_or_size_splits"))
        if sizes.count(-1) > 1:
            raise _err("SplitV", "Only one size may be -1 in size_splits")
        if -1 in sizes:
            if dim is None:
                return _dyn().dynamic_split(x, sizes, a, len(sizes))
            sizes[sizes.index(-1)] = dim - (sum(sizes) + 1)
        if dim is not None and sum(sizes) != dim:
            raise _err("SplitV", f"Determined shape must either match input shape along split_dim exactly if "
                       f"fully specified, or be less than the size of the input along split_dim if not fully "
                       f"specified.  Got: {sum(sizes)} for sizes {sizes} and dimension {dim}")
        sizes = tuple(sizes)
    return execute(SPLIT, (x,), {"sizes": sizes, "axis": a})


def _tile_kernel(x, multiples):
    return np.tile(x, multiples)


def _tile_shape(specs, multiples):
    s, dt = specs[0]
    return [(None if s is None else tuple(None if d is None else d * m for d, m in zip(s, multiples)), dt)]


TILE = defop("Tile", _tile_kernel, shape=_tile_shape)


@defgrad("Tile", inputs=False)
def _tile_grad(op, g):
    in_shape = op.input_shapes[0]
    multiples = op.get_attr("multiples")
    split_shape = []
    for m, d in zip(multiples, in_shape):
        split_shape += [m, d]
    if None in in_shape:  # traced with unknown dims: [m0, d0, m1, d1, ...] at run time
        sv = _dyn()
        pairs = stack([constant(np.asarray(multiples, np.int32)), sv.shape_of(op.inputs[0])], axis=1)
        g = sv.dynamic_reshape(g, reshape(pairs, (2 * len(in_shape),)), static=tuple(split_shape))
        return math_ops.reduce_sum(g, axis=list(range(0, 2 * len(in_shape), 2)))
    g = reshape(g, split_shape)
    return math_ops.reduce_sum(g, axis=list(range(0, 2 * len(in_shape), 2)))


def tile(input: Any, multiples: Any, name: str | None = None) -> Tensor:  # noqa: A002
    x = t(input)
    try:
        m = as_int_tuple(multiples, "multiples")
    except (AttributeError, NotImplementedError, TypeError):
        if _symbolic_dims(multiples):
            return _dyn().dynamic_tile(x, multiples)
        raise
    if len(m) != len(x._shape_tuple()):
        raise _err("Tile", f"Expected multiples argument to be a vector of length {len(x._shape_tuple())} but got "
                   f"length {len(m)}")
    if any(v < 0 for v in m):
        raise _err("Tile", f"Expected multiples[i] >= 0, got {list(m)}")
    return execute(TILE, (x,), {"multiples": m})


def _broadcast_to_kernel(x, shape):
    if type(x) is np.ndarray or isinstance(x, np.generic):
        out = np.empty(shape, x.dtype)
        try:
            out[...] = x  # (the copy of np.broadcast_to's view, without its Python-level checks)
            return out
        except ValueError:
            pass  # not broadcastable: np.broadcast_to's own error
    return np.broadcast_to(x, shape).copy()


BROADCAST_TO = defop("BroadcastTo", _broadcast_to_kernel, shape=lambda specs, shape: [(shape, specs[0][1])])


@defgrad("BroadcastTo", inputs=False)
def _broadcast_to_grad(op, g):
    return g  # the engine sums it back to the input's shape


def broadcast_to(input: Any, shape: Any, name: str | None = None) -> Tensor:  # noqa: A002
    x = t(input)
    try:
        shape = as_int_tuple(shape, "shape")
    except (AttributeError, NotImplementedError, TypeError):
        if _symbolic_dims(shape):
            return _dyn().dynamic_broadcast_to(x, shape)
        raise
    s = x._shape_tuple()
    if s == shape:
        return x if not _recording() else identity(x)
    try:
        np.broadcast_shapes(tuple(1 if d is None else d for d in s), shape)
        if len(s) > len(shape) or any(a != 1 and a != b and a is not None
                                      for a, b in zip(s[::-1], shape[::-1])):
            raise ValueError
    except ValueError:
        raise _err("BroadcastTo", f"Unable to broadcast tensor of shape {list(s)} to tensor of shape "
                   f"{list(shape)}") from None
    return execute(BROADCAST_TO, (x,), {"shape": shape})


# ----------------------------------------------------------------------------
# Gather and slicing
# ----------------------------------------------------------------------------

def _gather_kernel(params, indices, axis, batch_dims):
    n = params.shape[axis]
    idx = np.asarray(indices)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        # TF's eager text: the first bad entry (row-major), with its index
        at = int(np.flatnonzero((idx < 0) | (idx >= n))[0])
        where = ",".join(str(int(i)) for i in np.unravel_index(at, idx.shape))
        raise InvalidArgumentError(
            None, None, "{{function_node __wrapped__GatherV2_device_/job:localhost/replica:0/task:0/device:CPU:0}} "
            f"indices[{where}] = {int(idx.reshape(-1)[at])} is not in [0, {n}) [Op:GatherV2]")
    if batch_dims == 0:
        return np.take(params, idx, axis=axis)
    # Batched: gather within each of the leading batch_dims entries.
    bshape = params.shape[:batch_dims]
    p = params.reshape((-1,) + params.shape[batch_dims:])
    ix = idx.reshape((-1,) + idx.shape[batch_dims:])
    out = np.stack([np.take(p[b], ix[b], axis=axis - batch_dims) for b in range(p.shape[0])])
    return out.reshape(bshape + out.shape[1:])


def _gather_shape(specs, axis, batch_dims):
    (sp, dt), (si, _) = specs
    if sp is None or si is None:
        return [(None, dt)]
    return [(tuple(sp[:axis]) + tuple(si[batch_dims:]) + tuple(sp[axis + 1:]), dt)]


GATHER = defop("GatherV2", _gather_kernel, shape=_gather_shape)


@defgrad("GatherV2", inputs=True)
def _gather_grad(op, g):
    params_shape = op.input_shapes[0]
    indices = op.inputs[1]
    axis, batch_dims = op.get_attr("axis"), op.get_attr("batch_dims")
    idx_shape = op.input_shapes[1]
    if None in idx_shape or None in params_shape:  # traced with unknown dims
        sv = _dyn()
        if None not in params_shape and axis == 0 and batch_dims == 0:
            # e.g. an embedding table and a batch of ids: still sparse rows.
            rows = sv.reshape_keeping(g, (None,) + tuple(params_shape[1:]))
            return IndexedSlices(rows, reshape(indices, (-1,)), constant(params_shape, dtype=dtypes.int32)), None
        return sv.gather_grad(g, indices, op.inputs[0], axis, batch_dims), None
    if axis == 0 and batch_dims == 0:
        # Sparse: only the gathered rows (what makes big embedding tables cheap).
        n = int(np.prod(idx_shape, dtype=np.int64))
        values = reshape(g, (n,) + tuple(params_shape[1:]))
        return IndexedSlices(values, reshape(indices, (n,)), constant(params_shape, dtype=dtypes.int32)), None
    if batch_dims == 0:
        # Move the gathered axis first, segment-sum, move it back.
        nd_idx = len(op.input_shapes[1])
        g_nd = len(g._shape_tuple())
        perm = list(range(axis, axis + nd_idx)) + list(range(axis)) + list(range(axis + nd_idx, g_nd))
        gt = transpose(g, perm)
        summed = math_ops.unsorted_segment_sum(gt, indices, params_shape[axis])
        inv = list(range(1, axis + 1)) + [0] + list(range(axis + 1, len(params_shape)))
        return transpose(summed, inv), None
    # batch_dims > 0: bring the index dims next to the batch dims, flatten both,
    # offset each batch's indices by batch * N and segment-sum into [B * N, ...].
    b, m = batch_dims, axis - batch_dims
    k = len(op.input_shapes[1]) - b
    r = len(params_shape) - axis - 1
    batch = tuple(params_shape[:b])
    n_rows = params_shape[axis]
    nb = int(np.prod(batch, dtype=np.int64))
    nk = int(np.prod(op.input_shapes[1][b:], dtype=np.int64))
    inner = tuple(params_shape[b:axis]) + tuple(params_shape[axis + 1:])
    perm = (list(range(b)) + list(range(b + m, b + m + k)) + list(range(b, b + m))
            + list(range(b + m + k, b + m + k + r)))
    g2 = reshape(transpose(g, perm), (nb * nk,) + inner)
    offsets = constant((np.arange(nb, dtype=np.int64) * n_rows).reshape(batch + (1,) * k))
    flat_ids = reshape(math_ops.add(math_ops.cast(indices, dtypes.int64), offsets), (nb * nk,))
    summed = reshape(math_ops.unsorted_segment_sum(g2, flat_ids, nb * n_rows), batch + (n_rows,) + inner)
    back = list(range(b)) + list(range(b + 1, b + 1 + m)) + [b] + list(range(b + 1 + m, b + 1 + m + r))
    return transpose(summed, back), None


def gather(params: Any, indices: Any, validate_indices: Any = None, axis: Any = None, batch_dims: int = 0,
           name: str | None = None) -> Tensor:
    """Gathers slices along ``axis`` (default 0) at ``indices``."""
    from tapeflow.framework.variables import Variable

    p = params.value() if isinstance(params, Variable) else t(params)
    idx = convert_to_tensor(indices)
    if idx.dtype not in (dtypes.int32, dtypes.int64):
        raise _err("GatherV2", f"Value for attr 'Tindices' of {dtypes.type_string(idx.dtype)} is not in the list "
                   "of allowed values: int16, int32, int64. Cast the indices with tf.cast(indices, tf.int32)")
    nd = len(p._shape_tuple())
    if nd == 0:
        raise _err("GatherV2", "params must be at least 1 dimensional")
    a = normalize_axis(0 if axis is None else axis, nd, "GatherV2")
    bd = int(batch_dims)
    if bd < 0:
        bd += len(idx._shape_tuple())
    if bd > a:
        raise _err("GatherV2", f"batch_dims ({bd}) must be less than or equal to axis ({a})")
    return execute(GATHER, (p, idx), {"axis": a, "batch_dims": bd})


def _slice_key(spec):
    key = []
    for kind, *rest in spec:
        if kind == "i":
            key.append(rest[0])
        elif kind == "s":
            key.append(slice(*rest))
        elif kind == "n":
            key.append(None)
        else:
            key.append(Ellipsis)
    return tuple(key)


def _strided_slice_kernel(x, spec):
    return np.array(np.asarray(x)[_slice_key(spec)])


def _strided_slice_shape(specs, spec):
    s, dt = specs[0]
    if s is None:
        return [(None, dt)]
    if None not in s:
        dummy = np.broadcast_to(np.empty((), dtype=np.bool_), s)  # no memory, only the shape
        return [(dummy[_slice_key(spec)].shape, dt)]
    # Unknown dims: follow the spec dim by dim; a slice of an unknown dim is unknown.
    n_real = sum(1 for kind, *_ in spec if kind in "is")
    out, dim = [], 0
    for kind, *rest in spec:
        if kind == "n":
            out.append(1)
        elif kind == "e":
            out.extend(s[dim:dim + len(s) - n_real])
            dim += len(s) - n_real
        elif kind == "i":
            dim += 1
        else:
            d = s[dim]
            out.append(None if d is None else len(range(*slice(*rest).indices(d))))
            dim += 1
    if not any(kind == "e" for kind, *_ in spec):
        out.extend(s[dim:])
    return [(tuple(out), dt)]


STRIDED_SLICE = defop("StridedSlice", _strided_slice_kernel, shape=_strided_slice_shape)


@defgrad("StridedSlice", inputs=False)
def _strided_slice_grad(op, g):
    s = op.input_shapes[0]
    if s is None or None in s:  # traced with unknown dims: zeros of the input's run-time shape
        return _dyn().strided_slice_grad(g, op.inputs[0], s, op.get_attr("spec"))
    return strided_slice_grad(g, s, op.get_attr("spec"))


def _strided_slice_grad_kernel(dy, shape, spec):
    out = np.zeros(shape, dtype=dy.dtype)
    out[_slice_key(spec)] = dy
    return out


SLICE_GRAD = defop("StridedSliceGrad", _strided_slice_grad_kernel,
                   shape=lambda specs, shape, spec: [(shape, specs[0][1])])


@defgrad("StridedSliceGrad", inputs=False)
def _strided_slice_grad_grad(op, g):
    return execute(STRIDED_SLICE, (g,), {"spec": op.get_attr("spec")})


def strided_slice_grad(dy: Tensor, shape: tuple, spec: tuple) -> Tensor:
    return execute(SLICE_GRAD, (dy,), {"shape": tuple(shape), "spec": spec})


def _to_index(v: Any, dim: Any, axis: int, shape: tuple) -> int:
    if isinstance(v, Tensor):
        if v.dtype not in (dtypes.int32, dtypes.int64) or v.ndim != 0:
            raise TypeError(
                "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar tf.int32/tf.int64 "
                f"tensors are valid indices, got {v!r}")
        v = int(v)
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"Only integers, slices, ellipsis, tf.newaxis (None) and scalar int tensors are valid "
                        f"indices, got {v!r}")
    return int(v)


def _np_key(key: tuple, idx: tuple = ()) -> tuple:
    def item(k):
        if k[0] == "s":
            return slice(*k[1:])
        if k[0] == "i":
            return k[1]
        if k[0] == "t":  # an index known at run time: the op's input 1 + k[1]
            return int(idx[k[1]])
        return Ellipsis if k[0] == "e" else None

    return tuple(item(k) for k in key)


def _rank_free_slice_kernel(x, *idx, key):
    if len([k for k in key if k[0] in "sit"]) > np.ndim(x):
        raise InvalidArgumentError(None, None, f"Index out of range using input dim {np.ndim(x)} "
                                   f"[Op:StridedSlice]")
    return np.array(x[_np_key(key, idx)])


def _rank_free_slice_grad_kernel(g, x, *idx, key):
    z = np.zeros_like(x)
    z[_np_key(key, idx)] = g
    return z


# x[key] of a tensor whose rank is known only at run time (ints, also graph scalars, static slices, ..., None)
RANK_FREE_SLICE = defop("RankFreeStridedSlice", _rank_free_slice_kernel,
                        shape=lambda specs, key: [(None, specs[0][1])])
RANK_FREE_SLICE_GRAD = defop("RankFreeStridedSliceGrad", _rank_free_slice_grad_kernel,
                             shape=lambda specs, key: [specs[1]])


@defgrad("RankFreeStridedSlice", inputs=True)
def _rank_free_slice_grad(op, g):
    x, *idx = op.inputs
    return [execute(RANK_FREE_SLICE_GRAD, (g, x, *idx), {"key": op.get_attr("key")})] + [None] * len(idx)


@defgrad("RankFreeStridedSliceGrad", inputs=True)
def _rank_free_slice_grad_grad(op, gg):
    _, _, *idx = op.inputs
    return [execute(RANK_FREE_SLICE, (gg, *idx), {"key": op.get_attr("key")}), None] + [None] * len(idx)


def _rank_free_key(key: tuple) -> tuple[tuple, list] | None:
    """``key`` as RankFreeStridedSlice's attribute and its run-time index inputs, or None if a slice has
    bounds known only at run time."""
    out, idx = [], []
    for k in key:
        if k is None:
            out.append(("n",))
        elif k is Ellipsis:
            out.append(("e",))
        elif isinstance(k, slice):
            if any(isinstance(v, Tensor) and _dyn().is_symbolic(v) for v in (k.start, k.stop, k.step)):
                return None
            out.append(("s",) + tuple(None if v is None else _to_index(v, None, 0, ()) for v in
                                      (k.start, k.stop, k.step)))
        elif isinstance(k, Tensor) and _dyn().is_symbolic(k):
            if k.dtype not in (dtypes.int32, dtypes.int64) or k.ndim != 0:
                raise TypeError(
                    "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
                    f"tf.int32/tf.int64 tensors are valid indices, got {k!r}")
            out.append(("t", len(idx)))
            idx.append(k)
        else:
            out.append(("i", _to_index(k, None, 0, ())))
    return tuple(out), idx


def getitem(tensor: Any, key: Any) -> Tensor:
    """``tensor[key]`` for ints, slices (with steps), ``...`` and ``None``; a whole
    key that is a boolean array or tensor is ``tf.boolean_mask`` (as TF)."""
    if (isinstance(key, np.ndarray) and key.dtype == np.bool_) or \
            (isinstance(key, Tensor) and key.dtype is dtypes.bool):
        from tapeflow.ops.indexing_ops import boolean_mask

        return boolean_mask(tensor, key)
    x = t(tensor)
    if not isinstance(key, tuple):
        key = (key,)
    shape = x._shape_tuple()
    if shape is None:  # a graph tensor of unknown rank (a tf.numpy_function's output, stacked)
        rk = _rank_free_key(key)
        if rk is None:
            raise NotImplementedError("tapeflow graphs slice a tensor of unknown rank only with static bounds; "
                                      "give it a known rank (tf.ensure_shape)")
        return execute(RANK_FREE_SLICE, (x, *rk[1]), {"key": rk[0]})
    spec = []
    dim = 0  # the input axis the next key item refers to
    out = 0  # the output axis it becomes
    dynamic = []  # (output axis, index tensor, input axis) of indices known only at run time
    ranges = []  # (output axis, start, stop, input axis) of slices with bounds known only at run time
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > len(shape):
        raise _err("StridedSlice", f"Index out of range using input dim {len(shape)}; input has only "
                   f"{len(shape)} dims (shape {list(shape)}), got {n_real} indices")
    for k in key:
        if k is None:
            spec.append(("n",))
            out += 1
        elif k is Ellipsis:
            spec.append(("e",))
            dim += len(shape) - n_real
            out += len(shape) - n_real
        elif isinstance(k, Tensor) and _dyn().is_symbolic(k):
            # x[i] with i a graph tensor (a tf.range loop variable): take the axis whole, gather below.
            if k.dtype not in (dtypes.int32, dtypes.int64) or k.ndim != 0:
                raise TypeError(
                    "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
                    f"tf.int32/tf.int64 tensors are valid indices, got {k!r}")
            dynamic.append((out, k, dim))
            spec.append(("s", None, None, None))
            dim += 1
            out += 1
        elif isinstance(k, slice) and any(isinstance(v, Tensor) and _dyn().is_symbolic(v) for v in (k.start, k.stop)):
            # x[a:b] with a or b graph tensors (tf.shape(x)[1] // 2): take the axis whole, Slice it below.
            if k.step not in (None, 1):
                raise NotImplementedError("tapeflow graphs slice with run-time bounds only with step 1 (x[a:b])")
            ranges.append((out, k.start, k.stop, dim))
            spec.append(("s", None, None, None))
            dim += 1
            out += 1
        elif isinstance(k, slice):
            parts = []
            for v in (k.start, k.stop, k.step):
                parts.append(None if v is None else _to_index(v, None, dim, shape))
            if parts[2] == 0:
                raise _err("StridedSlice", "slice step must be non-zero")
            spec.append(("s", *parts))
            dim += 1
            out += 1
        elif isinstance(k, (int, np.integer, Tensor)) and not isinstance(k, (bool, np.bool_)):
            i = _to_index(k, None, dim, shape)
            n = shape[dim]
            if n is not None and not -n <= i < n:
                raise _err("StridedSlice", f"slice index {i} of dimension {dim} out of bounds (shape {list(shape)})")
            spec.append(("i", i))
            dim += 1
        elif isinstance(k, (list, np.ndarray)):
            raise InvalidArgumentError(None, None,
                "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar tf.int32/tf.int64 "
                f"tensors are valid indices, got {k!r}. Use tf.gather or tf.boolean_mask for fancy indexing "
                "[Op:StridedSlice]")
        else:
            raise TypeError(
                "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar tf.int32/tf.int64 "
                f"tensors are valid indices, got {k!r}")
    y = execute(STRIDED_SLICE, (x,), {"spec": tuple(spec)})
    if ranges:
        y = _slice_ranges(y, x, ranges, shape)
    for axis, k, d in reversed(dynamic):
        n = shape[d] if shape[d] is not None else math_ops.cast(_dyn().shape_of(x)[d], k.dtype)
        k = math_ops.where(math_ops.less(k, 0), math_ops.add(k, n), k)  # negative indices count from the end
        y = gather(y, k, axis=axis)
    return y


def _slice_ranges(y: Tensor, x: Tensor, ranges: list, shape: tuple) -> Tensor:
    """``y`` cut to Python's ``[start:stop]`` on each of ``ranges``' axes (negative bounds count from the end,
    both clipped to the axis), with one ``Slice`` op."""
    rank = len(y._shape_tuple())
    begin, size = [0] * rank, [-1] * rank
    for axis, start, stop, d in ranges:
        n = shape[d] if shape[d] is not None else _dyn().shape_of(x)[d]

        def bound(v, default, n=n):
            if v is None:
                return default
            v = math_ops.cast(v, dtypes.int32)
            v = math_ops.where(math_ops.less(v, 0), math_ops.add(v, n), v)
            return math_ops.minimum(math_ops.maximum(v, 0), n)

        b, e = bound(start, 0), bound(stop, n)
        begin[axis], size[axis] = b, math_ops.maximum(math_ops.subtract(e, b), 0)
    return _dyn().dynamic_slice(y, begin, size)


def slice_(input_: Any, begin: Any, size: Any, name: str | None = None) -> Tensor:
    x = t(input_)
    if _symbolic_dims(begin) or _symbolic_dims(size):  # known only when the graph runs: TF's Slice op
        return _dyn().dynamic_slice(x, begin, size)
    b = as_int_tuple(begin, "begin")
    sz = as_int_tuple(size, "size")
    shape = x._shape_tuple()
    spec = []
    for i, (bi, si) in enumerate(zip(b, sz)):
        end = shape[i] if si == -1 else bi + si
        if bi < 0 or (shape[i] is not None and end > shape[i]):
            raise _err("Slice", f"Expected begin[{i}] + size[{i}] <= input shape {list(shape)}, got begin {list(b)} "
                       f"and size {list(sz)}")
        spec.append(("s", bi, end, None))
    return execute(STRIDED_SLICE, (x,), {"spec": tuple(spec)})


def strided_slice(input_: Any, begin: Any, end: Any, strides: Any = None, **kwargs) -> Tensor:
    b = as_int_tuple(begin, "begin")
    e = as_int_tuple(end, "end")
    s = as_int_tuple(strides, "strides") if strides is not None else (1,) * len(b)
    masks = {k: int(kwargs.get(k) or 0) for k in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                                                  "shrink_axis_mask")}
    if any(masks.values()):
        # The masks mean what tensor[...] does (that is how TF builds them): spell the key out.
        if len(e) != len(b) or len(s) != len(b):
            raise _err("StridedSlice", f"begin, end and strides must have one length, got {len(b)}, {len(e)}, "
                       f"{len(s)}")
        key: list = []
        for i in range(len(b)):
            bit = 1 << i
            if masks["ellipsis_mask"] & bit and Ellipsis not in key:
                key.append(Ellipsis)
            elif masks["new_axis_mask"] & bit:
                key.append(None)
            elif masks["shrink_axis_mask"] & bit:
                if s[i] <= 0:
                    raise _err("StridedSlice", f"only stride 1 allowed on non-range indexing (shrink_axis_mask "
                               f"bit {i} with strides[{i}] = {s[i]})")
                key.append(b[i])
            else:
                if s[i] == 0:
                    raise _err("StridedSlice", f"strides[{i}] must be non-zero")
                key.append(slice(None if masks["begin_mask"] & bit else b[i],
                                 None if masks["end_mask"] & bit else e[i], s[i]))
        return t(input_)[tuple(key)]
    return execute(STRIDED_SLICE, (t(input_),), {"spec": tuple(("s", x, y, z) for x, y, z in zip(b, e, s))})


# ----------------------------------------------------------------------------
# Creation
# ----------------------------------------------------------------------------

def _dt(dtype: Any, default: dtypes.DType = dtypes.float32) -> dtypes.DType:
    return default if dtype is None else dtypes.as_dtype(dtype)


def _check_dims_vector(dims: Any) -> None:
    """TF's Fill: a shape of rank 2 or more is an error, never flattened."""
    value = dims.numpy() if isinstance(dims, Tensor) else dims
    rank = np.ndim(value)
    if rank > 1:
        raise _err("Fill", f"dims must represent a vector, got shape [{','.join(map(str, np.shape(value)))}]")


def _creation_dims(shape: Any) -> tuple | None:
    """A Python shape as ints; None when it holds graph tensors."""
    if isinstance(shape, TensorShape):
        return tuple(shape.as_list())
    try:
        dims = as_int_tuple(shape, "shape")
    except (AttributeError, NotImplementedError, TypeError):
        if _symbolic_dims(shape):
            return None
        raise
    _check_dims_vector(shape)
    return dims


def zeros(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    dims = _creation_dims(shape)
    if dims is None:  # run-time shape (graph tensors)
        return _dyn().dynamic_fill(shape, _wrap(np.zeros((), dtype=_dt(dtype)._np)))  # (bool too: False)
    return _wrap(np.zeros(dims, dtype=_dt(dtype)._np))


def ones(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    dims = _creation_dims(shape)
    if dims is None:
        return _dyn().dynamic_fill(shape, _wrap(np.ones((), dtype=_dt(dtype)._np)))
    return _wrap(np.ones(dims, dtype=_dt(dtype)._np))


def _zeros_like_kernel(x):
    if x.dtype.kind == "O":  # string tensors: TF's zero is the empty string
        return np.full(x.shape, b"", dtype=object)
    return np.zeros_like(x)


ZEROS_LIKE = defop("ZerosLike", _zeros_like_kernel, shape=shapes.same)
ONES_LIKE = defop("OnesLike", lambda x: np.ones_like(x), shape=shapes.same)
NotDifferentiable("ZerosLike")
NotDifferentiable("OnesLike")


def _like(op, input, dtype):
    from tapeflow.framework.variables import Variable

    x = input._snapshot() if isinstance(input, Variable) else t(input)
    if dtype is not None:
        d = dtypes.as_dtype(dtype)
        if d is not x.dtype:
            return math_ops.cast(execute(op, (x,)), d)
    return execute(op, (x,))


def zeros_like(input: Any, dtype: Any = None, name: str | None = None) -> Tensor:  # noqa: A002
    return _like(ZEROS_LIKE, input, dtype)


def ones_like(input: Any, dtype: Any = None, name: str | None = None) -> Tensor:  # noqa: A002
    x = input if isinstance(input, Tensor) else None
    if x is not None and x.dtype is dtypes.string and (dtype is None or dtypes.as_dtype(dtype) is dtypes.string):
        raise _err("OnesLike", "Value for attr 'T' of string is not in the list of allowed values: a numeric or "
                   "bool dtype is required")
    return _like(ONES_LIKE, input, dtype)


def _fill_kernel(value, shape):
    return np.full(shape, value, dtype=value.dtype)


FILL = defop("Fill", _fill_kernel, shape=lambda specs, shape: [(shape, specs[0][1])])


@defgrad("Fill", inputs=False)
def _fill_grad(op, g):
    return math_ops.reduce_sum(g)


def fill(dims: Any, value: Any, name: str | None = None) -> Tensor:
    v = t(value)
    if v._shape_tuple() == (1,):  # TF takes a one-element vector as the scalar
        v = reshape(v, ())
    if v.ndim != 0:
        raise _err("Fill", f"value must represent a scalar, got shape {list(v._shape_tuple())}")
    try:
        shape = as_int_tuple(dims, "dims")
    except (AttributeError, NotImplementedError, TypeError):
        if _symbolic_dims(dims):
            return _dyn().dynamic_fill(dims, v)
        raise
    _check_dims_vector(dims)
    return execute(FILL, (v,), {"shape": shape})


def eye(num_rows: int, num_columns: int | None = None, batch_shape: Any = None, dtype: Any = dtypes.float32,
        name: str | None = None) -> Tensor:
    if _symbolic_dims([num_rows] if num_columns is None else [num_rows, num_columns]) or (
            batch_shape is not None and _symbolic_dims(batch_shape)):
        return _dyn().eye_dynamic(num_rows, num_columns, batch_shape, _dt(dtype))
    for d in (num_rows, num_columns):
        if d is not None and int(d) < 0:
            raise _err("Fill", f"Dimension {int(d)} must be >= 0 (tf.eye: num_rows and num_columns must be "
                       "non-negative)")
    m = np.eye(int(num_rows), int(num_columns) if num_columns is not None else None, dtype=_dt(dtype)._np)
    if batch_shape is not None:
        bs = as_int_tuple(batch_shape, "batch_shape")
        m = np.broadcast_to(m, bs + m.shape).copy()
    return _wrap(m)


def range_(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None, name: str = "range") -> Tensor:
    """As ``tf.range``: ints give int32, floats float32 (unless ``dtype``)."""
    if limit is None:
        start, limit = 0, start
    if start is None or limit is None or delta is None:
        raise ValueError("Attempt to convert a value (None) with an unsupported type (<class 'NoneType'>) to a "
                         "Tensor. (tf.range: start, limit and delta must be numbers)")
    try:
        vals = [v.numpy() if isinstance(v, Tensor) else v for v in (start, limit, delta)]
    except AttributeError:
        if _symbolic_dims((start, limit, delta)):  # bounds known only at run time (graph)
            return _dyn().range_dynamic(start, limit, delta, dtype)
        raise
    for v in vals:
        if np.asarray(v).dtype.kind not in "iufb":
            raise TypeError(f"tf.range: start, limit and delta must be numbers, got {v!r}")
    if dtype is None:
        # Python numbers follow TF's defaults; NumPy values and tensors keep theirs.
        kinds = [np.asarray(v).dtype if isinstance(v, (np.ndarray, np.generic))
                 else np.dtype(np.float32 if isinstance(v, float) else np.int32) for v in vals]
        floats = [k for k in kinds if k.kind == "f"]
        # No promotion between int and float as NumPy would: the float wins.
        dt = max(floats, key=lambda k: k.itemsize) if floats else max(kinds, key=lambda k: k.itemsize)
    else:
        dt = dtypes.as_dtype(dtype)._np
    if dt.kind in "iu":
        for v in vals:
            if isinstance(v, float) or (np.asarray(v).dtype.kind == "f" and dtype is not None):
                raise TypeError(f"Cannot convert {v!r} to EagerTensor of dtype {dt.name}")
    # As TF's kernel: everything in the output dtype (float32 bounds give
    # ceil(|(limit - start) / delta|) values computed in float32).
    start_, limit_, delta_ = (np.asarray(v).astype(dt).reshape(()) for v in vals)
    if delta_ == 0:
        raise _err("Range", "Requires delta != 0")
    if (delta_ > 0 and start_ > limit_) or (delta_ < 0 and start_ < limit_):
        raise _err("Range", f"Requires start {'<=' if delta_ > 0 else '>='} limit when delta "
                   f"{'>' if delta_ > 0 else '<'} 0: {start_}/{limit_}")
    with np.errstate(all="ignore"):
        if dt.kind in "iu":
            n = (abs(int(limit_) - int(start_)) + abs(int(delta_)) - 1) // abs(int(delta_))
        else:
            n = int(np.ceil(np.abs((limit_ - start_) / delta_)))
        out = (start_ + np.arange(n).astype(dt) * delta_).astype(dt)
    return _wrap(out)


def linspace(start: Any, stop: Any, num: Any, name: str | None = None, axis: int = 0) -> Tensor:
    s = t(start)
    e = convert_to_tensor(stop, dtype_hint=s.dtype)
    dt = s._value.dtype if s._value.dtype.kind == "f" else np.dtype(np.float64)  # ints give float64, as TF
    n = scalar_int(num, "num", "LinSpace")
    if n < 0:
        raise _err("LinSpace", f"Requires num >= 0, got {n}")
    if s._value.dtype != dt:
        s, e = math_ops.cast(s, dtypes.from_numpy(dt)), math_ops.cast(e, dtypes.from_numpy(dt))
    if e._value.dtype != dt:
        e = math_ops.cast(e, dtypes.from_numpy(dt))
    # Built from ops, as TF's linspace_nd, so start and stop get gradients:
    # [start, start + k * (stop - start) / (num - 1) for 0 < k < num - 1, stop].
    zero = math_ops.multiply(math_ops.add(s, e), 0)  # broadcast start/stop to one shape
    s, e = math_ops.add(s, zero), math_ops.add(e, zero)
    rank = len(s._shape_tuple())
    ax = axis if axis >= 0 else axis + rank + 1
    if not 0 <= ax <= rank:
        raise _err("LinSpace", f"axis {axis} is out of range for start/stop of rank {rank}")
    first, last = expand_dims(s, ax), expand_dims(e, ax)
    if n <= 1:
        return first if n == 1 else _slice_along(first, ax, 0)
    steps = [1] * (rank + 1)
    steps[ax] = n - 2
    k = reshape(_wrap(np.arange(1, n - 1, dtype=dt)), steps)
    delta = math_ops.divide_(math_ops.subtract(last, first), _wrap(np.asarray(n - 1, dtype=dt)))
    inner = math_ops.add(first, math_ops.multiply(k, delta))
    return concat([first, inner, last], axis=ax)


def _slice_along(x: Tensor, axis: int, size: int) -> Tensor:
    begin = [0] * len(x._shape_tuple())
    sizes = list(x._shape_tuple())
    sizes[axis] = size
    return slice_(x, begin, sizes)


def shape(input: Any, out_type: Any = dtypes.int32, name: str | None = None) -> Tensor:  # noqa: A002
    """``tf.shape``: a constant when the shape is known, else a ``Shape`` op."""
    return _dyn().shape(input, out_type)


def size_(input: Any, out_type: Any = dtypes.int32, name: str | None = None) -> Tensor:  # noqa: A002
    """``tf.size``: a constant when the shape is known, else a ``Size`` op."""
    return _dyn().size(input, out_type)


def rank(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """``tf.rank``: a constant when the rank is known, else a ``Rank`` op."""
    return _dyn().rank(input)


# ----------------------------------------------------------------------------
# Arg reductions and where(condition)
# ----------------------------------------------------------------------------

def _skip_nan(x, fill):
    # TF's arg reductions compare with > / <, so a NaN never wins over a number.
    return np.where(np.isnan(x), fill, x) if x.dtype.kind == "f" else x


ARGMAX = defop("ArgMax", lambda x, axis, output_type: np.argmax(_skip_nan(x, -np.inf), axis=axis).astype(output_type),
               shape=lambda specs, axis, output_type: [
                   (None if specs[0][0] is None else tuple(d for i, d in enumerate(specs[0][0]) if i != axis),
                    output_type)])
ARGMIN = defop("ArgMin", lambda x, axis, output_type: np.argmin(_skip_nan(x, np.inf), axis=axis).astype(output_type),
               shape=ARGMAX.shape)
NotDifferentiable("ArgMax")
NotDifferentiable("ArgMin")


def _arg(op, input, axis, output_type):
    x = t(input)
    nd = len(x._shape_tuple())
    a = normalize_axis(0 if axis is None else axis, max(nd, 1), op.name)
    if nd == 0:
        raise _err(op.name, "Expected a tensor of rank >= 1 for argmax/argmin")
    return execute(op, (x,), {"axis": a, "output_type": dtypes.as_dtype(output_type)._np})


def argmax(input: Any, axis: Any = None, output_type: Any = dtypes.int64, name: str | None = None) -> Tensor:  # noqa: A002
    return _arg(ARGMAX, input, axis, output_type)


def argmin(input: Any, axis: Any = None, output_type: Any = dtypes.int64, name: str | None = None) -> Tensor:  # noqa: A002
    return _arg(ARGMIN, input, axis, output_type)


WHERE_INDICES = defop("Where", lambda c: np.argwhere(c).astype(np.int64),
                      shape=lambda specs: [((None, None if specs[0][0] is None else len(specs[0][0])),
                                            np.dtype(np.int64))])
NotDifferentiable("Where")


def where_indices(condition: Tensor) -> Tensor:
    c = condition
    if c._value.dtype != np.bool_:
        c = math_ops.not_equal(c, 0)
    return execute(WHERE_INDICES, (c,))
