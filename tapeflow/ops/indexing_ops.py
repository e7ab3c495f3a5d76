"""Extra array and indexing ops: pad, gather_nd, scatter_nd and the
tensor_scatter_nd family, boolean_mask, one_hot, reverse, roll, repeat,
meshgrid, einsum, tensordot, unique, sequence_mask.

Each op: ``defop`` (kernel + shape rule), ``defgrad`` (rule written with
tapeflow ops), public function. Composites (boolean_mask, repeat, meshgrid,
tensordot, sequence_mask) are built from ops that already have gradients.
"""

from __future__ import annotations

import collections
import string
from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.indexed_slices import IndexedSlices
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import array_ops, math_ops, shape_ops, shapes
from tapeflow.ops._helpers import as_int_tuple, normalize_axis, scalar_int, t
from tapeflow.ops.registry import NotDifferentiable, defgrad, defop


def _err(op: str, msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"{msg} [Op:{op}]")


def _int_indices(indices: Any, op: str) -> Tensor:
    idx = t(indices)
    if idx._value.dtype.kind not in "iu":
        raise InvalidArgumentError(None, None, f"Value for attr 'Tindices' of {idx.dtype.name} is not in the list "
                                   f"of allowed values: int16, int32, int64 [Op:{op}]. Cast the indices with "
                                   "tf.cast(indices, tf.int32).")
    return idx


# ----------------------------------------------------------------------------
# pad: CONSTANT (PadV2), REFLECT and SYMMETRIC (MirrorPad)
# ----------------------------------------------------------------------------

def _pad_shape(specs, paddings, **attrs):
    s, dt = specs[0]
    if s is None:
        return [(None, dt)]
    return [(tuple(None if d is None else d + a + b for d, (a, b) in zip(s, paddings)), dt)]


def _padv2_kernel(x, constant_values, paddings):
    return np.pad(x, paddings, mode="constant", constant_values=constant_values)


PADV2 = defop("PadV2", _padv2_kernel, shape=_pad_shape)


def _unpad(g: Tensor, paddings: tuple, in_shape: tuple) -> Tensor:
    if in_shape is None or None in in_shape:  # unknown dims: cut the padding off whatever the run-time size
        return g[tuple(slice(a, -b or None) for a, b in paddings)]
    return array_ops.slice_(g, [a for a, _ in paddings], list(in_shape))


@defgrad("PadV2", inputs=False)
def _padv2_grad(op, g):
    return _unpad(g, op.get_attr("paddings"), op.input_shapes[0]), None


def _mirror_pad_kernel(x, paddings, mode):
    return np.pad(x, paddings, mode="reflect" if mode == "REFLECT" else "symmetric")


MIRROR_PAD = defop("MirrorPad", _mirror_pad_kernel, shape=_pad_shape)


@defgrad("MirrorPad", inputs=False)
def _mirror_pad_grad(op, g):
    return execute(MIRROR_PAD_GRAD, (g,), {"paddings": op.get_attr("paddings"), "mode": op.get_attr("mode")})


def _mirror_pad_grad_kernel(g, paddings, mode):
    # Fold each padded border back onto the input positions it copied.
    for d, (a, b) in zip(g.shape, paddings):
        if not a + b < d:  # TF's check: the input dim must not be empty
            raise _err("MirrorPadGrad", f"Total paddings must be less than the input dimension size: {a + b} was not "
                       f"less than {d}")
    off = 1 if mode == "REFLECT" else 0
    out = g
    for axis, (before, after) in enumerate(paddings):
        n = out.shape[axis] - before - after
        moved = np.moveaxis(out, axis, 0)
        center = np.array(moved[before:before + n])
        if before:
            center[off:off + before] += moved[:before][::-1]
        if after:
            center[n - off - after:n - off] += moved[before + n:][::-1]
        out = np.moveaxis(center, 0, axis)
    return np.ascontiguousarray(out)


def _mirror_pad_grad_shape(specs, paddings, mode):
    s, dt = specs[0]
    if s is None:
        return [(None, dt)]
    return [(tuple(None if d is None else d - a - b for d, (a, b) in zip(s, paddings)), dt)]


MIRROR_PAD_GRAD = defop("MirrorPadGrad", _mirror_pad_grad_kernel, shape=_mirror_pad_grad_shape)


@defgrad("MirrorPadGrad", inputs=False)
def _mirror_pad_grad_grad(op, g):
    return execute(MIRROR_PAD, (g,), {"paddings": op.get_attr("paddings"), "mode": op.get_attr("mode")})


def pad(tensor: Any, paddings: Any, mode: str = "CONSTANT", constant_values: Any = 0,
        name: str | None = None) -> Tensor:
    """Pads ``tensor``; ``paddings[d] = [before, after]`` for each axis d.

    ``mode`` is CONSTANT (fill with ``constant_values``), REFLECT (mirror
    without the edge) or SYMMETRIC (mirror with the edge), case-insensitive.
    """
    x = t(tensor)
    mode_u = str(mode).upper()
    if mode_u not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        raise ValueError(f'Value of argument `mode` expected to be one of "CONSTANT", "REFLECT", or "SYMMETRIC". '
                         f"Received `mode` = {mode}")
    s = x._shape_tuple()
    try:
        flat = as_int_tuple(paddings, "paddings")
    except (TypeError, NotImplementedError):
        if mode_u == "CONSTANT" and array_ops._symbolic_dims(paddings if isinstance(paddings, Tensor) else
                                                           [d for row in paddings for d in row]):
            return shape_ops.dynamic_pad(x, paddings, constant_values)  # paddings known when the graph runs
        raise
    op_name = "PadV2" if mode_u == "CONSTANT" else "MirrorPad"
    if len(flat) != 2 * len(s):
        raise _err(op_name, f"The first dimension of paddings must be the rank of inputs {len(s)}, paddings "
                   f"has {len(flat) // 2} rows (paddings must have shape [{len(s)}, 2], input shape {list(s)})")
    pads = tuple((flat[2 * i], flat[2 * i + 1]) for i in range(len(s)))
    if any(a < 0 or b < 0 for a, b in pads):
        raise _err(op_name, f"Paddings must be non-negative: {[list(p) for p in pads]}")
    if mode_u == "CONSTANT":
        if type(constant_values) is int and constant_values == 0 and x._value.dtype.kind == "b":
            constant_values = False  # the default pads bools with False, as TF
        cv = convert_to_tensor(constant_values, dtype_hint=x.dtype)
        if cv._value.dtype != x._value.dtype:
            raise _err("PadV2", f"constant_values ({cv.dtype.name}) must have the dtype of the input "
                       f"({x.dtype.name})")
        if cv._shape_tuple() != ():
            raise _err("PadV2", f"constant_values must be a scalar, got shape {list(cv._shape_tuple())}")
        return execute(PADV2, (x, cv), {"paddings": pads})
    off = 1 if mode_u == "REFLECT" else 0
    for i, ((a, b), d) in enumerate(zip(pads, s)):
        if d is not None and (a > d - off or b > d - off):
            if off:
                raise _err("MirrorPad", f"paddings must be less than the dimension size: {a}, {b} not less than {d} "
                           f"(REFLECT mode, dimension {i} of input shape {list(s)})")
            raise _err("MirrorPad", f"paddings must be no greater than the dimension size: {a}, {b} greater than "
                       f"{d} (SYMMETRIC mode, dimension {i} of input shape {list(s)})")
    return execute(MIRROR_PAD, (x,), {"paddings": pads, "mode": mode_u})


# ----------------------------------------------------------------------------
# gather_nd, scatter_nd, tensor_scatter_nd_*
# ----------------------------------------------------------------------------

def _check_nd_indices(idx: np.ndarray, shape: tuple, op: str) -> tuple:
    depth = idx.shape[-1]
    if depth > len(shape):
        raise _err(op, f"index innermost dimension length must be <= params rank; saw: {depth} vs. {len(shape)}")
    flat = idx.reshape(-1, depth)
    bounds = np.asarray(shape[:depth])
    bad = np.nonzero(((flat < 0) | (flat >= bounds)).any(axis=1))[0]
    if bad.size:
        i = int(bad[0])
        raise _err(op, f"indices[{i}] = {flat[i].tolist()} does not index into param shape {list(shape)}")
    return tuple(np.moveaxis(idx, -1, 0))


def _gather_nd_kernel(params, indices):
    idx = np.asarray(indices)
    if params.size == 0 and idx.size:  # TF refuses even in-range tuples into an empty params
        raise _err("GatherNd", f"Requested more than 0 entries, but params is empty.  Params shape: "
                   f"{list(params.shape)}")
    return np.array(params[_check_nd_indices(idx, params.shape, "GatherNd")])


def _gather_nd_shape(specs):
    (sp, dt), (si, _) = specs
    if sp is None or si is None or si[-1] is None:
        return [(None, dt)]
    return [(tuple(si[:-1]) + tuple(sp[si[-1]:]), dt)]


GATHER_ND = defop("GatherNd", _gather_nd_kernel, shape=_gather_nd_shape)


@defgrad("GatherNd", inputs=True)
def _gather_nd_grad(op, g):
    indices = op.inputs[1]
    ref_shape = op.input_shapes[0]
    idx_shape = op.input_shapes[1]
    if ref_shape is None or None in ref_shape:
        # Unknown dims: a dense gradient of the params' run-time shape (as GatherV2's).
        return tensor_scatter_nd_add(array_ops.zeros_like(op.inputs[0]), indices, g), None
    if len(idx_shape) == 2 and idx_shape[-1] == 1:
        # Row gather: the gradient is sparse, as for tf.gather (TF does the same).
        return IndexedSlices(g, array_ops.reshape(indices, (idx_shape[0],)),
                             convert_to_tensor(np.asarray(ref_shape, dtype=indices._value.dtype))), None
    return scatter_nd(indices, g, ref_shape), None


def gather_nd(params: Any, indices: Any, batch_dims: int = 0, name: str | None = None) -> Tensor:
    """Gathers slices of ``params`` at the index tuples in the last axis of
    ``indices`` (the first ``batch_dims`` axes are batch axes)."""
    from tapeflow.framework.variables import Variable

    p = params.value() if isinstance(params, Variable) else t(params)
    idx = _int_indices(indices, "GatherNd")
    si, sp = idx._shape_tuple(), p._shape_tuple()
    if len(si) == 0:
        raise _err("GatherNd", "indices must be at least a vector (the last axis holds the index tuples)")
    bd = int(batch_dims)
    if bd < 0:
        raise _err("GatherNd", f"batch_dims must be non-negative, got {bd}")
    if bd:
        if bd >= len(si) or bd > len(sp):
            raise _err("GatherNd", f"batch_dims ({bd}) must be less than the rank of indices ({len(si)}) and at "
                       f"most the rank of params ({len(sp)})")
        if sum(d is None for d in sp[:bd]) == 1 and None not in si[:bd] and all(
                d is None or d == e for d, e in zip(sp[:bd], si[:bd])):
            # An unknown batch dim of params: take indices' (the reshape checks at run time that they agree).
            if None not in sp[bd:]:
                p = array_ops._reshape_any(p, tuple(si[:bd]) + tuple(sp[bd:]))
            else:
                p_shape = shape_ops.shape_of(p)
                p = shape_ops.dynamic_reshape(p, list(si[:bd]) + [
                    p_shape[j] if sp[j] is None else sp[j] for j in range(bd, len(sp))])
            sp = p._shape_tuple()
        if None in sp[:bd] or tuple(sp[:bd]) != tuple(si[:bd]):
            raise _err("GatherNd", f"the first batch_dims={bd} dimensions of params {list(sp)} and indices "
                       f"{list(si)} must be equal")
        # Prepend each element's batch coordinates, then gather with batch_dims=0.
        grids = np.meshgrid(*[np.arange(d) for d in sp[:bd]], indexing="ij")
        coords = np.stack(grids, axis=-1).astype(idx._value.dtype)  # batch + (bd,)
        coords = coords.reshape(tuple(sp[:bd]) + (1,) * (len(si) - bd - 1) + (bd,))
        coords = np.broadcast_to(coords, tuple(si[:-1]) + (bd,))
        idx = array_ops.concat([convert_to_tensor(np.ascontiguousarray(coords)), idx], axis=-1)
    return execute(GATHER_ND, (p, idx))


def _scatter_nd_kernel(indices, updates, shape):
    out = np.zeros(shape, dtype=updates.dtype)
    if out.size == 0 and np.size(indices):
        raise _err("ScatterNd", f"Indices and updates specified for empty output shape {list(shape)}")
    np.add.at(out, _check_nd_indices(np.asarray(indices), shape, "ScatterNd"), updates)
    return out


SCATTER_ND = defop("ScatterNd", _scatter_nd_kernel, shape=lambda specs, shape: [(shape, specs[1][1])])


@defgrad("ScatterNd", inputs=True)
def _scatter_nd_grad(op, g):
    return None, gather_nd(g, op.inputs[0])


def _check_updates(idx: Tensor, updates: Tensor, shape: tuple, op: str) -> None:
    si, su = idx._shape_tuple(), updates._shape_tuple()
    depth = si[-1] if si else None
    if depth is None or None in si or None in su:
        return
    if depth > len(shape):
        raise _err(op, f"indices.shape[-1] = {depth} must be <= the rank of the output shape {list(shape)}")
    want = tuple(si[:-1]) + tuple(shape[depth:])
    if tuple(su) != want:
        raise _err(op, f"updates must have shape indices.shape[:-1] + shape[indices.shape[-1]:] = {list(want)}, "
                   f"got updates shape {list(su)} (indices shape {list(si)}, shape {list(shape)})")


def scatter_nd(indices: Any, updates: Any, shape: Any, name: str | None = None) -> Tensor:
    """A zero tensor of ``shape`` with ``updates`` added at ``indices``
    (duplicates add up)."""
    idx = _int_indices(indices, "ScatterNd")
    u = t(updates)
    shp = as_int_tuple(shape, "shape")
    _check_updates(idx, u, shp, "ScatterNd")
    return execute(SCATTER_ND, (idx, u), {"shape": shp})


def _tensor_scatter_kernel(kind):
    def kernel(tensor, indices, updates):
        out = np.array(tensor, copy=True)
        if out.size == 0 and np.size(indices):
            raise _err(f"TensorScatter{kind}", f"Indices and updates specified for empty output shape "
                       f"{list(out.shape)}")
        key = _check_nd_indices(np.asarray(indices), tensor.shape, f"TensorScatter{kind}")
        if kind == "Update":
            out[key] = updates
        elif kind == "Add":
            np.add.at(out, key, updates)
        elif kind == "Sub":
            np.subtract.at(out, key, updates)
        else:  # Max/Min: a NaN update never wins (TF compares with < / >)
            if updates.dtype.kind == "f":
                updates = np.where(np.isnan(updates), -np.inf if kind == "Max" else np.inf, updates)
            (np.maximum if kind == "Max" else np.minimum).at(out, key, updates.astype(out.dtype, copy=False))
        return out

    return kernel


_TS_OPS = {k: defop(f"TensorScatter{k}", _tensor_scatter_kernel(k), shape=shapes.same)
           for k in ("Update", "Add", "Sub", "Max", "Min")}


@defgrad("TensorScatterAdd", inputs=True)
def _ts_add_grad(op, g):
    return g, None, gather_nd(g, op.inputs[1])


@defgrad("TensorScatterSub", inputs=True)
def _ts_sub_grad(op, g):
    return g, None, math_ops.negative(gather_nd(g, op.inputs[1]))


@defgrad("TensorScatterUpdate", inputs=True)
def _ts_update_grad(op, g):
    indices, updates = op.inputs[1], op.inputs[2]
    return tensor_scatter_nd_update(g, indices, array_ops.zeros_like(updates)), None, gather_nd(g, indices)


def _ts_min_max_grad(op, g):
    # Split the gradient evenly between the tensor entry and the updates that tie for the result.
    x, indices, y = op.inputs
    out = op.outputs[0]
    x_ind = math_ops.cast(math_ops.equal(x, out), g.dtype)
    y_ind = math_ops.cast(math_ops.equal(y, gather_nd(out, indices)), g.dtype)
    x_shape = op.input_shapes[0]
    if x_shape is None or None in x_shape:  # unknown dims: scatter into zeros of x's run-time shape
        count = math_ops.add(x_ind, tensor_scatter_nd_add(array_ops.zeros_like(x), indices, y_ind))
    else:
        count = math_ops.add(x_ind, scatter_nd(indices, y_ind, x_shape))
    share = math_ops.divide_(g, count)
    return math_ops.multiply(share, x_ind), None, math_ops.multiply(gather_nd(share, indices), y_ind)


defgrad("TensorScatterMax", inputs=True, outputs=True)(_ts_min_max_grad)
defgrad("TensorScatterMin", inputs=True, outputs=True)(_ts_min_max_grad)


def _tensor_scatter(kind: str, tensor: Any, indices: Any, updates: Any) -> Tensor:
    x = t(tensor)
    op = _TS_OPS[kind]
    idx = _int_indices(indices, op.name)
    u = convert_to_tensor(updates, dtype_hint=x.dtype)
    if u._value.dtype != x._value.dtype:
        raise _err(op.name, f"updates ({u.dtype.name}) must have the dtype of tensor ({x.dtype.name})")
    if None not in x._shape_tuple():
        _check_updates(idx, u, x._shape_tuple(), op.name)
    return execute(op, (x, idx, u))


def tensor_scatter_nd_update(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    """A copy of ``tensor`` with ``updates`` written at ``indices``."""
    return _tensor_scatter("Update", tensor, indices, updates)


def tensor_scatter_nd_add(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    return _tensor_scatter("Add", tensor, indices, updates)


def tensor_scatter_nd_sub(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    return _tensor_scatter("Sub", tensor, indices, updates)


def tensor_scatter_nd_max(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    return _tensor_scatter("Max", tensor, indices, updates)


def tensor_scatter_nd_min(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    return _tensor_scatter("Min", tensor, indices, updates)


# ----------------------------------------------------------------------------
# boolean_mask, one_hot, reverse, roll, repeat, meshgrid
# ----------------------------------------------------------------------------

def boolean_mask(tensor: Any, mask: Any, axis: Any = None, name: str = "boolean_mask") -> Tensor:
    """The entries of ``tensor`` where ``mask`` is True (mask covers the axes
    ``axis .. axis + mask.ndim``, flattened into one)."""
    x = t(tensor)
    mk = convert_to_tensor(mask, dtype_hint=dtypes.bool)
    if mk._value.dtype != np.bool_:
        raise TypeError(f"boolean_mask: mask must be a bool tensor, got {mk.dtype.name}")
    sx, sm = x._shape_tuple(), mk._shape_tuple()
    if len(sm) == 0:
        raise ValueError("mask cannot be scalar.")
    a = 0 if axis is None else int(axis)
    if a < 0:
        a += len(sx)
    if a + len(sm) > len(sx):
        raise ValueError(f"Number of mask dimensions ({len(sm)}) plus axis ({a}) must not exceed the tensor rank "
                         f"({len(sx)}); tensor shape {list(sx)}, mask shape {list(sm)}")
    part = sx[a:a + len(sm)]
    if any(p is not None and q is not None and p != q for p, q in zip(part, sm)):
        raise ValueError(f"Shapes {tuple(part)} and {tuple(sm)} are incompatible (boolean_mask: the masked "
                         f"dimensions of the tensor, shape {list(sx)}, must equal the mask's shape)")
    if None in part:  # masked dims of unknown size: flatten them at run time, as TF does
        n = len(sm)
        x_shape = shape_ops.shape_of(x)
        dims = [x_shape[j] if sx[j] is None else sx[j] for j in range(len(sx))]
        flat = shape_ops.dynamic_reshape(x, dims[:a] + [-1] + dims[a + n:])
        idx = array_ops.reshape(array_ops.where_indices(array_ops._reshape_any(mk, (-1,))), (-1,))
        return array_ops.gather(flat, idx, axis=a)
    leading = int(np.prod(part, dtype=np.int64))
    flat = array_ops.reshape(x, tuple(sx[:a]) + (leading,) + tuple(sx[a + len(sm):])) if None not in sx \
        else array_ops._reshape_any(x, tuple(sx[:a]) + (leading,) + tuple(sx[a + len(sm):]))
    idx = array_ops.reshape(array_ops.where_indices(array_ops.reshape(mk, (leading,))), (-1,))
    return array_ops.gather(flat, idx, axis=a)


def _one_hot_kernel(indices, on, off, depth, axis):
    idx = np.asarray(indices)
    hot = idx[..., None] == np.arange(depth)
    out = np.where(hot, on, off).astype(on.dtype, copy=False)
    if axis != -1 and axis != idx.ndim:
        out = np.moveaxis(out, -1, axis)
    return np.ascontiguousarray(out)


def _one_hot_shape(specs, depth, axis):
    s, _ = specs[0]
    dt = specs[1][1]
    if s is None:
        return [(None, dt)]
    out = list(s)
    out.insert(len(s) if axis == -1 else axis, depth)
    return [(tuple(out), dt)]


ONE_HOT = defop("OneHot", _one_hot_kernel, shape=_one_hot_shape)
NotDifferentiable("OneHot")


def one_hot(indices: Any, depth: Any, on_value: Any = None, off_value: Any = None, axis: Any = None,
            dtype: Any = None, name: str | None = None) -> Tensor:
    """One-hot rows: ``on_value`` at each index, ``off_value`` elsewhere;
    indices outside [0, depth) give all-off rows."""
    idx = _int_indices(indices, "OneHot")
    d = scalar_int(depth, "depth", "OneHot")
    if d < 0:
        raise _err("OneHot", f"depth must be non-negative, got: {d}")
    given = [v for v in (on_value, off_value) if v is not None]
    if dtype is not None:
        dt = dtypes.as_dtype(dtype)
    elif given:
        dt = convert_to_tensor(given[0]).dtype
    else:
        dt = dtypes.float32
    on = convert_to_tensor(1 if on_value is None else on_value, dtype_hint=dt)
    off = convert_to_tensor(0 if off_value is None else off_value, dtype_hint=dt)
    for what, v in (("on_value", on), ("off_value", off)):
        if v.dtype is not dt:
            raise TypeError(f"dtype {v.dtype!r} of {what} does not match dtype parameter {dt!r}")
    nd = len(idx._shape_tuple())
    a = -1 if axis is None else int(axis)
    if a < -1 or a > nd:
        raise _err("OneHot", f"Expected axis to be -1 or between [0, {nd}).  But received: {a}")
    return execute(ONE_HOT, (idx, on, off), {"depth": d, "axis": a})


REVERSE = defop("ReverseV2", lambda x, axis: np.ascontiguousarray(np.flip(x, axis)), shape=shapes.same)


@defgrad("ReverseV2", inputs=False)
def _reverse_grad(op, g):
    return execute(REVERSE, (g,), {"axis": op.get_attr("axis")})


def reverse(tensor: Any, axis: Any, name: str | None = None) -> Tensor:
    """Reverses the given axes."""
    x = t(tensor)
    nd = len(x._shape_tuple())
    axes = tuple(sorted({normalize_axis(a, nd, "ReverseV2") for a in as_int_tuple(axis, "axis")}))
    if len(axes) != len(as_int_tuple(axis, "axis")):
        raise _err("ReverseV2", f"axis {list(as_int_tuple(axis, 'axis'))} specified more than once")
    return execute(REVERSE, (x,), {"axis": axes})


ROLL = defop("Roll", lambda x, shift, axis: np.roll(x, shift, axis), shape=shapes.same)


@defgrad("Roll", inputs=False)
def _roll_grad(op, g):
    return execute(ROLL, (g,), {"shift": tuple(-s for s in op.get_attr("shift")), "axis": op.get_attr("axis")})


def _dyn_roll_kernel(x, shift, axis):
    sh = tuple(int(v) for v in np.asarray(shift).reshape(-1))
    if len(sh) != len(axis):
        raise _err("Roll", f"shift and axis must have the same size, got shift {list(sh)} and axis {list(axis)}")
    return np.roll(x, sh, axis)


# Roll whose shift is known only at run time (a graph tensor: tf.random.uniform's inside a tf.function)
DYNAMIC_ROLL = defop("DynamicRoll", _dyn_roll_kernel, shape=lambda specs, axis: [specs[0]])


@defgrad("DynamicRoll", inputs=True)
def _dyn_roll_grad(op, g):
    x, shift = op.inputs
    return execute(DYNAMIC_ROLL, (g, math_ops.negative(shift)), {"axis": op.get_attr("axis")}), None


def roll(input: Any, shift: Any, axis: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Rolls elements along ``axis`` by ``shift`` (shifts on a repeated axis add up); ``shift`` may be a graph
    tensor (known at run time)."""
    x = t(input)
    ax = as_int_tuple(axis, "axis")
    if shape_ops.is_symbolic(shift) or (isinstance(shift, (list, tuple)) and any(map(shape_ops.is_symbolic, shift))):
        sh = array_ops.stack(shift) if isinstance(shift, (list, tuple)) else t(shift)
        if sh._value.dtype.kind not in "iu":
            raise TypeError(f"shift must be a list of integers, got {shift!r}")
        n = sh._shape_tuple()
        if len(n) > 1 or (n and n[0] is not None and n[0] != len(ax)) or (not n and len(ax) != 1):
            raise _err("Roll", f"shift and axis must have the same size, got shift of shape {list(n)} and axis "
                       f"{list(ax)}")
        nd = len(x._shape_tuple())
        return execute(DYNAMIC_ROLL, (x, sh), {"axis": tuple(normalize_axis(a, nd, "Roll") for a in ax)})
    sh = as_int_tuple(shift, "shift")
    if len(sh) != len(ax):
        raise _err("Roll", f"shift and axis must have the same size, got shift {list(sh)} and axis {list(ax)}")
    nd = len(x._shape_tuple())
    ax = tuple(normalize_axis(a, nd, "Roll") for a in ax)
    return execute(ROLL, (x,), {"shift": sh, "axis": ax})


def repeat(input: Any, repeats: Any, axis: Any = None, name: str | None = None) -> Tensor:  # noqa: A002
    """Repeats each element (or slice along ``axis``) ``repeats`` times;
    with ``axis=None`` the input is flattened first."""
    x = t(input)
    if axis is None:
        x = array_ops.reshape(x, (-1,))
        axis = 0
    s = x._shape_tuple()
    a = normalize_axis(axis, len(s), "Repeat")
    if np.ndim(repeats.numpy() if isinstance(repeats, Tensor) else repeats) > 1:
        raise ValueError(f"Shape {np.shape(repeats)} must have rank at most 1 (tf.repeat: repeats must be a scalar "
                         "or a 1-D list)")
    reps = np.asarray(as_int_tuple(repeats, "repeats"), dtype=np.int64)
    n = s[a]
    if n is None:
        if reps.size != 1:
            raise NotImplementedError("tf.repeat with a vector of repeats along an axis of unknown size is not "
                                      "implemented in tapeflow (a scalar repeats is).")
        return _repeat_dynamic(x, int(reps.reshape(-1)[0]), a)
    if reps.size == 1:
        if int(reps.reshape(-1)[0]) < 0:  # TF: a scalar count goes through Tile, which rejects it
            raise _err("Tile", f"Expected multiples[{a + 1}] >= 0, but got {int(reps.reshape(-1)[0])} "
                       "(tf.repeat: a scalar repeats must be non-negative)")
        reps = np.full(n, int(reps.reshape(-1)[0]))
    if reps.size != n:
        raise ValueError(f"Dimensions {n} and {reps.size} are not compatible (tf.repeat: repeats must be a scalar or "
                         f"have the length of axis {a} of the input, shape {list(s)})")
    reps = np.maximum(reps, 0)  # TF treats negative repeats as 0
    idx = convert_to_tensor(np.repeat(np.arange(n, dtype=np.int32), reps))
    if None not in s:
        # A recorded Reshape densifies the gather's sparse gradient: TF's repeat gives a dense one.
        x = array_ops.reshape(x, s)
    return array_ops.gather(x, idx, axis=a)


def _repeat_dynamic(x: Tensor, r: int, a: int) -> Tensor:
    """repeat with a scalar count along an axis of unknown size: each slice
    tiled r times on a new axis after ``a``, then the two axes merged."""
    if r < 0:
        raise _err("Tile", f"Expected multiples[{a + 1}] >= 0, but got {r} (tf.repeat: a scalar repeats must be "
                   "non-negative)")
    s = x._shape_tuple()
    multiples = [1] * (len(s) + 1)
    multiples[a + 1] = r
    y = array_ops.tile(array_ops.expand_dims(x, a + 1), multiples)
    x_shape = shape_ops.shape_of(x)
    dims = [x_shape[j] if d is None else d for j, d in enumerate(s)]
    return shape_ops.dynamic_reshape(y, dims[:a] + [math_ops.multiply(dims[a], r)] + dims[a + 1:])


def meshgrid(*args: Any, **kwargs: Any) -> list:
    """Coordinate grids: ``indexing='xy'`` (default, Cartesian) or ``'ij'``."""
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Invalid keyword arguments: {list(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Argument `indexing` parameter must be either 'xy' or 'ij', got '{indexing}'")
    xs = [array_ops.reshape(t(a), (-1,)) for a in args]
    if not xs:
        return []
    sizes = [x._shape_tuple()[0] for x in xs]
    nd = len(xs)
    dynamic = None in sizes  # unknown sizes: broadcast to a run-time shape
    out_shape = [shape_ops.shape_of(x)[0] if d is None else d for x, d in zip(xs, sizes)] if dynamic else list(sizes)
    if indexing == "xy" and nd > 1:
        out_shape[0], out_shape[1] = out_shape[1], out_shape[0]
    outs = []
    for i, x in enumerate(xs):
        pos = i
        if indexing == "xy" and nd > 1 and i < 2:
            pos = 1 - i
        shape = [1] * nd
        shape[pos] = -1 if sizes[i] is None else sizes[i]
        r = array_ops.reshape(x, shape)
        outs.append(shape_ops.dynamic_broadcast_to(r, out_shape) if dynamic else array_ops.broadcast_to(r, out_shape))
    return outs


# ----------------------------------------------------------------------------
# einsum and tensordot
# ----------------------------------------------------------------------------

_LETTERS = string.ascii_letters


def _einsum_kernel(*xs, equation):
    # NumPy's path optimizer (BLAS via tensordot) pays off for 3+ operands or
    # big contractions; for small ones its ~20us planning cost dominates.
    if len(xs) == 2:
        sizes = {}
        for subs, x in zip(equation.split("->")[0].split(","), xs):
            sizes.update(zip(subs, x.shape))
        work = 1
        for d in sizes.values():
            work *= d
        return np.einsum(equation, *xs, optimize=work >= 1 << 16)
    return np.einsum(equation, *xs, optimize=len(xs) > 2)


def _einsum_shape(specs, equation):
    ins, out = equation.split("->")
    sizes: dict = {}
    unknown: set = set()
    for subs, (s, _) in zip(ins.split(","), specs):
        if s is None:
            unknown.update(subs)
            continue
        for c, d in zip(subs, s):
            if d is None:
                unknown.add(c)
            elif sizes.get(c) in (None, 1):
                sizes[c] = d
    # A letter of size 1 in one operand and unknown in another may broadcast to
    # any size: it is unknown, not 1 (a 1 here made gradients silently wrong).
    dims = tuple(None if (c in unknown and sizes.get(c) in (None, 1)) else sizes.get(c) for c in out)
    return [(dims, specs[0][1])]


EINSUM = defop("Einsum", _einsum_kernel, shape=_einsum_shape)


@defgrad("Einsum", inputs=True)
def _einsum_grad(op, g):
    ins, out = op.get_attr("equation").split("->")
    subs = ins.split(",")
    used = set(op.get_attr("equation"))
    fresh = [c for c in _LETTERS if c not in used]
    sizes: dict = {}
    for s, shp in zip(subs, op.input_shapes):
        for c, d in zip(s, shp):
            if sizes.get(c) in (None, 1):  # a size-1 (broadcast) dim never hides the real size
                sizes[c] = d
    grads = []
    for i, s_i in enumerate(subs):
        sz = sizes
        if None in sizes.values():  # unknown dims: a letter's size from operand i's run-time shape
            x_shape, sz = shape_ops.shape_of(op.inputs[i]), dict(sizes)
            for k, c in enumerate(s_i):
                if sz[c] is None:
                    sz[c] = x_shape[k]
        if op.input_dtypes[i].kind not in "fc":
            grads.append(None)
            continue
        others = [s for j, s in enumerate(subs) if j != i]
        other_ops = [math_ops._c(x) for j, x in enumerate(op.inputs) if j != i]  # complex: conjugates, as TF
        available = set(out).union(*others) if others else set(out)
        unique = "".join(dict.fromkeys(s_i))
        keep = "".join(c for c in unique if c in available)
        # Explicit equations without ellipsis: run the op directly (NumPy's einsum
        # broadcasts size-1 dims; the engine sums the gradient back).
        gi = execute(EINSUM, (g, *other_ops), {"equation": f"{','.join([out] + others)}->{keep}"})
        if keep != unique and any(isinstance(sz[c], Tensor) for c in unique):
            for k, c in enumerate(unique):
                if c not in keep:
                    gi = array_ops.expand_dims(gi, k)
            gi = shape_ops.dynamic_broadcast_to(gi, [sz[c] for c in unique])
        elif keep != unique:
            # Letters summed only inside operand i: their gradient is broadcast.
            gi = array_ops.reshape(gi, [sizes[c] if c in keep else 1 for c in unique])
            gi = array_ops.broadcast_to(gi, [sizes[c] for c in unique])
        if unique != s_i:
            # Repeated letters (a diagonal): put the gradient back on the diagonal with identities.
            target, eyes, eye_subs = [], [], []
            seen = set()
            for c in s_i:
                if c in seen:
                    if not fresh:
                        raise NotImplementedError("einsum gradient: ran out of letters for repeated subscripts")
                    f = fresh.pop()
                    target.append(f)
                    eye_subs.append(c + f)
                    dt = dtypes.from_numpy(op.input_dtypes[i])
                    eyes.append(shape_ops.eye_dynamic(sz[c], sz[c], None, dt) if isinstance(sz[c], Tensor)
                                else array_ops.eye(sizes[c], dtype=dt))
                else:
                    seen.add(c)
                    target.append(c)
            gi = execute(EINSUM, (gi, *eyes), {"equation": f"{','.join([unique] + eye_subs)}->{''.join(target)}"})
        grads.append(gi)
    return grads


def _parse_einsum(equation: str, shapes_: list) -> tuple[str, list]:
    """Explicit equation without ellipsis, and the shape each operand must be
    broadcast to (None when it already fits)."""
    def bad(msg: str) -> ValueError:
        return ValueError(f"Invalid einsum equation '{equation}': {msg}")

    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        raise bad("more than one '->'")
    lhs, arrow, rhs = eq.partition("->")
    subs = lhs.split(",")
    if len(subs) != len(shapes_):
        raise ValueError(f'Got {len(shapes_)} inputs for equation "{equation}", expecting {len(subs)}')
    for s in subs + ([rhs] if arrow else []):
        body = s.replace("...", "")
        if "." in body or any(c not in _LETTERS for c in body):
            raise bad(f"subscript '{s}' may only hold letters and one '...'")
        if s.count("...") > 1:
            raise bad(f"subscript '{s}' has more than one ellipsis")
    used = set(eq) & set(_LETTERS)
    fresh = [c for c in _LETTERS if c not in used]
    ell_ranks = []
    for s, shp in zip(subs, shapes_):
        n = len(s.replace("...", ""))
        if "..." in s:
            if len(shp) < n:
                raise bad(f"operand of rank {len(shp)} has more subscripts than dimensions in '{s}'")
            ell_ranks.append(len(shp) - n)
        else:
            if len(shp) != n:
                raise bad(f"operand of shape {list(shp)} has rank {len(shp)} but subscript '{s}' has {n} letters")
            ell_ranks.append(0)
    ell_n = max(ell_ranks) if ell_ranks else 0
    if ell_n > len(fresh):
        raise NotImplementedError("einsum: too many broadcast dimensions for the letters left")
    ell = "".join(fresh[:ell_n])
    new_subs = [s.replace("...", ell[ell_n - k:]) for s, k in zip(subs, ell_ranks)]
    # Letter sizes; ellipsis letters may broadcast from 1.
    sizes: dict = {}
    for s, shp in zip(new_subs, shapes_):
        for c, d in zip(s, shp):
            if d is None:
                continue
            prev = sizes.get(c)
            if prev is None or prev == 1 and c in ell:
                sizes[c] = d
            elif prev != d and not (c in ell and d == 1):
                raise _err("Einsum", f"Expected dimension {prev} for label '{c}' of equation '{equation}' but got "
                           f"dimension {d} (operand shapes {[list(x) for x in shapes_]})")
    if ell_n and "..." not in rhs:
        # TF (unlike NumPy) never adds or sums broadcast dimensions implicitly.
        raise _err("Einsum", f"Output contains {ell_n} broadcasting dimension(s) but no ellipsis (...) was found "
                   f"in the output subscripts of '{equation}'")
    if arrow:
        out = rhs.replace("...", ell)
        for c in out:
            if not any(c in s for s in new_subs):
                raise ValueError(f"Output subscripts contain the label {c} not present in the input subscripts.")
        if len(set(out)) != len(out):
            raise bad("output subscripts must not repeat")
    else:
        counts: dict = {}
        for s in new_subs:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = "".join(sorted(c for c, k in counts.items() if k == 1))
    targets = []
    for s, shp in zip(new_subs, shapes_):
        # Only size-1 broadcast dimensions need an explicit broadcast_to.
        want = tuple(sizes[c] if d == 1 and sizes.get(c) not in (None, 1) else d for c, d in zip(s, shp))
        targets.append(want if want != tuple(shp) else None)
    return ",".join(new_subs) + "->" + out, targets


def einsum(equation: str, *inputs: Any, **kwargs: Any) -> Tensor:
    """Einstein summation, as ``tf.einsum``: explicit (``'ij,jk->ik'``) or
    implicit (``'ij,jk'``) output, ``...`` broadcasting, diagonals
    (``'ii->i'``); differentiable to any order (each operand's gradient is
    another einsum)."""
    kwargs.pop("name", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError(f"Invalid keyword arguments to einsum: {list(kwargs)}")
    if not isinstance(equation, str):
        raise TypeError(f"einsum: equation must be a string, got {equation!r}")
    if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])
    xs = [t(x) for x in inputs]
    if not xs:
        raise ValueError("einsum needs at least one operand")
    for i, x in enumerate(xs[1:], start=1):
        if x._value.dtype != xs[0]._value.dtype:
            raise _err("Einsum", f"einsum: operand {i} has dtype {x.dtype.name} but operand 0 has "
                       f"{xs[0].dtype.name}; cast them to one dtype")
    eq, targets = _parse_einsum(equation, [x._shape_tuple() for x in xs])
    # Size-1 broadcast dims: broadcast explicitly when shapes are known (the
    # BroadcastTo gradient then sums back); with unknown dims NumPy's einsum
    # broadcasts and the engine unbroadcasts the gradient.
    xs = [x if tg is None or None in tg else array_ops.broadcast_to(x, tg) for x, tg in zip(xs, targets)]
    return execute(EINSUM, tuple(xs), {"equation": eq})


def tensordot(a: Any, b: Any, axes: Any, name: str | None = None) -> Tensor:
    """Sums products over ``axes``: an int n (last n of a with first n of b)
    or a pair of axis lists."""
    a, b = t(a), t(b)
    sa, sb = a._shape_tuple(), b._shape_tuple()
    if isinstance(axes, Tensor):
        axes = axes.numpy().tolist()
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > len(sa) or n > len(sb):
            raise ValueError(f"'axes' must be at most the rank of a ({len(sa)}) and of b ({len(sb)}) and "
                             f"non-negative, got {n}")
        ax_a, ax_b = list(range(len(sa) - n, len(sa))), list(range(n))
    else:
        if len(axes) != 2:
            raise ValueError(f"'axes' must be an integer or have length 2, got {axes!r}")
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
        if len(ax_a) != len(ax_b):
            raise ValueError(f"Different number of contraction axes 'a' and 'b', {len(ax_a)} != {len(ax_b)}.")
        ax_a = [normalize_axis(x, len(sa), "Tensordot") for x in ax_a]
        ax_b = [normalize_axis(x, len(sb), "Tensordot") for x in ax_b]
    if len(sa) + len(sb) > len(_LETTERS):
        raise NotImplementedError("tensordot of inputs with more than 52 dimensions in total")
    la = list(_LETTERS[:len(sa)])
    lb = list(_LETTERS[len(sa):len(sa) + len(sb)])
    for i, j in zip(ax_a, ax_b):
        if sa[i] is not None and sb[j] is not None and sa[i] != sb[j]:
            raise _err("MatMul", f"Matrix size-incompatible: tensordot contracts axis {i} of a (shape {list(sa)}, "
                       f"size {sa[i]}) with axis {j} of b (shape {list(sb)}, size {sb[j]})")
        lb[j] = la[i]
    out = [c for k, c in enumerate(la) if k not in ax_a] + [c for k, c in enumerate(lb) if k not in ax_b]
    return einsum(f"{''.join(la)},{''.join(lb)}->{''.join(out)}", a, b)


# ----------------------------------------------------------------------------
# unique, sequence_mask
# ----------------------------------------------------------------------------

def _unique_kernel(x, out_idx):
    _, first, inverse = np.unique(x, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # first-occurrence order, as TF
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return x[np.sort(first)], rank[inverse.reshape(-1)].astype(out_idx)


UNIQUE = defop("Unique", _unique_kernel, num_outputs=2,
               shape=lambda specs, out_idx: [((None,), specs[0][1]), (specs[0][0], out_idx)])
NotDifferentiable("Unique")


UniqueResult = collections.namedtuple("Unique", ["y", "idx"])


def unique(x: Any, out_idx: Any = dtypes.int32, name: str | None = None) -> UniqueResult:
    """The distinct values of the 1-D ``x`` in first-seen order, and for each
    element the index of its value in them."""
    x = t(x)
    if len(x._shape_tuple()) != 1:
        raise _err("Unique", f"unique expects a 1D vector, got shape {list(x._shape_tuple())}")
    y, idx = execute(UNIQUE, (x,), {"out_idx": dtypes.as_dtype(out_idx)._np})
    return UniqueResult(y, idx)


def sequence_mask(lengths: Any, maxlen: Any = None, dtype: Any = dtypes.bool, name: str | None = None) -> Tensor:
    """``mask[i..., j] = j < lengths[i...]`` for j in [0, maxlen)."""
    lengths = t(lengths)
    if lengths._value.dtype.kind not in "iu":
        raise TypeError(f"sequence_mask: lengths must be integers, got {lengths.dtype.name}")
    from tapeflow.framework.context import state

    if state.graph is not None:  # tracing: the mask's width may be known only at run time
        limit = math_ops.reduce_max(lengths) if maxlen is None else t(maxlen)
        if limit.shape.rank not in (None, 0):
            raise ValueError(f"Argument `maxlen` must be scalar for sequence_mask, received `maxlen` = {limit} "
                             f"with shape '{tuple(limit.shape.as_list())}' instead")
        row = array_ops.range_(0, limit, 1, dtype=limit.dtype)
        mask = math_ops.less(row, math_ops.cast(array_ops.expand_dims(lengths, -1), limit.dtype))
        dt = dtypes.as_dtype(dtype)
        return mask if dt is dtypes.bool else math_ops.cast(mask, dt)
    if maxlen is None:
        if len(lengths._shape_tuple()) and 0 in lengths._shape_tuple():
            n = 0
        else:
            n = int(math_ops.reduce_max(lengths).numpy()) if lengths._shape_tuple() != () else int(lengths.numpy())
        n = max(n, 0)
    else:
        m = maxlen.numpy() if isinstance(maxlen, Tensor) else maxlen
        if np.ndim(m) != 0:
            raise ValueError(f"Argument `maxlen` must be scalar for sequence_mask, received `maxlen` = {m} "
                             f"with shape '{np.shape(m)}' instead")
        n = int(m)
        if n < 0:
            raise _err("Range", f"maxlen must be non-negative, got {n}")
    row = convert_to_tensor(np.arange(n, dtype=lengths._value.dtype))
    mask = math_ops.less(row, array_ops.reshape(lengths, tuple(lengths._shape_tuple()) + (1,)))
    dt = dtypes.as_dtype(dtype)
    return mask if dt is dtypes.bool else math_ops.cast(mask, dt)
