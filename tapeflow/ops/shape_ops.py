"""Shapes as tensors: ``tf.shape``/``tf.size``/``tf.rank`` and ops whose
shape argument is a tensor, for graphs traced with unknown (None) dims.

Eagerly every shape is known, so the public functions elsewhere take Python
shapes (attrs) and never come here. When ``tf.function`` traces with an
``input_signature`` like ``[tf.TensorSpec([None, 3])]``, a shape is only
known when the graph runs: ``tf.shape(x)`` is then a symbolic ``Shape`` op,
and reshapes, broadcasts, fills, tiles and splits take the shape as an int
tensor input (the ``Dynamic*`` ops below). Gradient rules use the same ops
to put a gradient back into its input's run-time shape, e.g.
``sum_to_shape(g, shape_of(x))`` is the engine's unbroadcast when dims are
unknown.

Each ``Dynamic*`` op also carries a ``static`` attr: the output shape as far
as tracing knows it (ints and None), which its shape rule reports; kernels
ignore it. ``partial_value`` follows shape tensors back through Shape,
slicing, Pack and ConcatV2, so ``tf.zeros(tf.shape(x))`` of an ``x`` of
shape (None, 3) has the static shape (None, 3), as in TF. Fully known shapes
are constant-folded: ``tf.shape`` of a tensor of known shape is a constant,
even in a graph.

The ops: ``Shape``, ``Size``, ``Rank``, ``Range`` (not differentiable);
``DynamicReshape``, ``DynamicBroadcastTo``, ``DynamicFill``, ``DynamicTile``,
``DynamicSplitV``, ``SumToShape``, ``DynamicStridedSliceGrad``,
``DynamicGatherGrad``, ``Slice`` (TF's, begin and size as inputs), ``SliceGrad``
and ``DynamicPadV2`` (each with a gradient rule and an OpSpec in
tests/op_specs/shape.py; all but the last three with a batching rule at the
end of this module; those three run once per row in a vectorized jacobian).

>>> f = tf.function(lambda x: tf.reshape(x, [tf.shape(x)[0], -1]),
...                 input_signature=[tf.TensorSpec([None, 2, 2])])
>>> f(tf.ones([3, 2, 2])).shape
TensorShape([3, 4])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, _wrap
from tapeflow.ops import array_ops, math_ops
from tapeflow.ops._helpers import normalize_axis, t
from tapeflow.ops.registry import NotDifferentiable, defgrad, defop

__all__ = [
    "shape", "shape_n", "size", "rank", "shape_of", "dynamic_reshape", "dynamic_broadcast_to", "dynamic_fill",
    "dynamic_tile", "dynamic_split", "sum_to_shape", "strided_slice_grad", "shape_vector", "is_symbolic",
    "reshape_keeping", "range_dynamic", "partial_value", "gather_grad",
    "eye_dynamic", "dynamic_slice", "dynamic_pad",
]

_INT_NP = (np.dtype(np.int32), np.dtype(np.int64))


def _err(op: str, msg: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"{msg} [Op:{op}]")


def is_symbolic(x: Any) -> bool:
    """True for a tensor of a traced graph (its ``_value`` has no data)."""
    return isinstance(x, Tensor) and not isinstance(x._value, (np.ndarray, np.generic))


def _known(s: tuple | None) -> bool:
    return s is not None and None not in s


def _int_type(out_type: Any) -> np.dtype:
    d = np.dtype(dtypes.as_dtype(out_type)._np)
    if d not in _INT_NP:
        raise _err("Shape", f"Value for attr 'out_type' of {dtypes.as_dtype(out_type).name} is not in the list of "
                   "allowed values: int32, int64")
    return d


def _rank_of(x: Tensor, what: str) -> int:
    s = x._shape_tuple()
    if s is None:
        raise NotImplementedError(f"{what}: tensors of unknown rank are not supported in tapeflow graphs; give the "
                                  "input_signature a TensorSpec with a known rank (dims may be None).")
    return len(s)


# ----------------------------------------------------------------------------
# Shape, Size, Rank
# ----------------------------------------------------------------------------

def _shape_rule(specs, out_type):
    s = specs[0][0]
    return [((None,) if s is None else (len(s),), out_type)]


SHAPE = defop("Shape", lambda x, out_type: np.asarray(np.shape(x), dtype=out_type), shape=_shape_rule)
NotDifferentiable("Shape")

SIZE = defop("Size", lambda x, out_type: np.asarray(np.size(x), dtype=out_type),
             shape=lambda specs, out_type: [((), out_type)])
NotDifferentiable("Size")

RANK = defop("Rank", lambda x: np.asarray(np.ndim(x), dtype=np.int32),
             shape=lambda specs: [((), np.dtype(np.int32))])
NotDifferentiable("Rank")


def _source(input: Any) -> Tensor:  # noqa: A002 - TF's name
    from tapeflow.framework.variables import Variable

    if isinstance(input, Variable):
        return input.value()
    return t(input)


def shape(input: Any, out_type: Any = dtypes.int32, name: str | None = None) -> Tensor:  # noqa: A002
    """``tf.shape``: the shape as a 1-D int tensor.

    A constant when the shape is fully known (also in a graph); a symbolic
    ``Shape`` op when tracing with unknown dims, e.g.
    ``tf.reshape(x, [tf.shape(x)[0], -1])``.
    """
    x = _source(input)
    dt = _int_type(out_type)
    s = x._shape_tuple()
    if _known(s):
        return _wrap(np.asarray(s, dtype=dt))
    return execute(SHAPE, (x,), {"out_type": dt})


def shape_n(input: Any, out_type: Any = dtypes.int32, name: str | None = None) -> list:  # noqa: A002
    """``tf.shape_n``: the shapes of a list of tensors."""
    return [shape(x, out_type) for x in input]


def size(input: Any, out_type: Any = dtypes.int32, name: str | None = None) -> Tensor:  # noqa: A002
    """``tf.size``: the number of elements, as a scalar int tensor."""
    x = _source(input)
    dt = _int_type(out_type)
    s = x._shape_tuple()
    if _known(s):
        return _wrap(np.asarray(int(np.prod(s, dtype=np.int64)), dtype=dt))
    return execute(SIZE, (x,), {"out_type": dt})


def rank(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """``tf.rank``: the number of dimensions, as a scalar int32 tensor."""
    x = _source(input)
    s = x._shape_tuple()
    if s is not None:
        return _wrap(np.int32(len(s)))
    return execute(RANK, (x,))


def shape_of(x: Tensor) -> Tensor:
    """int32 shape of ``x``: a constant when known, else a ``Shape`` op."""
    s = x._shape_tuple()
    if _known(s):
        return _wrap(np.asarray(s, dtype=np.int32))
    return execute(SHAPE, (x,), {"out_type": np.dtype(np.int32)})


def shape_vector(dims: Any, what: str = "shape") -> tuple[Tensor, tuple | None]:
    """``dims`` (an int tensor, or a list of ints and scalar int tensors) as
    one int32 vector tensor, plus what tracing knows of its values (None for
    values known only at run time; -1 stays -1)."""
    if isinstance(dims, Tensor):
        if dims._value.dtype not in _INT_NP:
            raise TypeError(f"{what} must be an int32 or int64 tensor, got {dims.dtype.name}")
        ds = dims._shape_tuple()
        if ds is not None and len(ds) != 1:
            raise _err("Reshape", f"{what} must be a vector, got a tensor of shape {list(ds)}")
        if not is_symbolic(dims):
            vals = tuple(int(v) for v in dims._value.reshape(-1))
            return _wrap(np.asarray(vals, dtype=np.int32)), vals
        if dims._value.dtype != np.int32:
            dims = math_ops.cast(dims, dtypes.int32)
        known = partial_value(dims)
        if known is None and ds is not None and ds[0] is not None:
            known = (None,) * ds[0]
        return dims, known
    if hasattr(dims, "as_list"):  # TensorShape
        dims = dims.as_list()
    items, static = [], []
    for d in dims:
        if isinstance(d, Tensor):
            if d._value.dtype not in _INT_NP or d._shape_tuple() not in ((), (1,)):
                raise TypeError(f"{what} entries must be integers or scalar int tensors, got {d!r}")
            if not is_symbolic(d):
                v = int(np.asarray(d._value).reshape(-1)[0])
                items.append(v)
                static.append(v)
                continue
            v = partial_value(d)
            d = array_ops.reshape(math_ops.cast(d, dtypes.int32) if d._value.dtype != np.int32 else d, ())
            items.append(d)
            static.append(v if isinstance(v, int) else None)
        elif isinstance(d, (int, np.integer)) and not isinstance(d, bool):
            items.append(int(d))
            static.append(int(d))
        else:
            raise TypeError(f"{what} must be a list of integers or scalar int tensors, got {d!r} in {dims!r}")
    if not items:
        return _wrap(np.zeros((0,), np.int32)), ()
    tensors = [x if isinstance(x, Tensor) else _wrap(np.int32(x)) for x in items]
    return array_ops.stack(tensors), tuple(static)


def partial_value(x: Tensor, depth: int = 0) -> Any:
    """What tracing knows of an int tensor's value: an int (scalar), a tuple
    of ints and Nones (vector), or None. Follows the ops shapes are built
    with (Shape, slicing, Pack, ConcatV2, Cast, Reshape), as TF's
    constant-value shape inference does, so ``tf.zeros(tf.shape(x))`` of an
    ``x`` of shape (None, 3) has the static shape (None, 3)."""
    if not is_symbolic(x):
        v = np.asarray(x._value)
        if v.dtype.kind not in "iu" or v.ndim > 1:
            return None
        return int(v) if v.ndim == 0 else tuple(int(a) for a in v)
    op = getattr(x, "op", None)
    if op is None or depth > 8:
        return None
    kind = op.type
    if kind == "Shape":
        s = op.inputs[0]._shape_tuple()
        return None if s is None else tuple(s)
    if kind in ("Cast", "Identity") or (kind == "Reshape" and x._shape_tuple() in ((), (1,))):
        v = partial_value(op.inputs[0], depth + 1)
        if kind == "Reshape" and isinstance(v, tuple):
            return v[0] if x._shape_tuple() == () and len(v) == 1 else v
        if kind == "Reshape" and isinstance(v, int) and x._shape_tuple() == (1,):
            return (v,)  # a scalar reshaped to [1] (tf.reshape(n, [1]) as a shape)
        return v
    if kind == "StridedSlice":
        v = partial_value(op.inputs[0], depth + 1)
        if not isinstance(v, tuple):
            return None
        try:
            out = np.array(v + (0,), dtype=object)[:-1][array_ops._slice_key(op.get_attr("spec"))]
        except (IndexError, ValueError, TypeError):
            return None
        return out if not isinstance(out, np.ndarray) else (tuple(out) if out.ndim == 1 else None)
    if kind == "Pack" and op.get_attr("axis") == 0:
        vals = [partial_value(i, depth + 1) for i in op.inputs]
        return tuple(v if isinstance(v, int) else None for v in vals)
    if kind == "ConcatV2":
        parts = [partial_value(i, depth + 1) for i in op.inputs]
        if all(isinstance(p, tuple) for p in parts):
            return sum(parts, ())
    return None


def _static_out(static: tuple | None) -> tuple | None:
    return None if static is None else tuple(None if d is None or d < 0 else int(d) for d in static)


def _int_vec(v: np.ndarray, op: str, what: str) -> tuple:
    a = np.asarray(v)
    if a.ndim != 1:
        raise _err(op, f"{what} must be a vector, got shape {list(a.shape)}")
    return tuple(int(d) for d in a)


# ----------------------------------------------------------------------------
# DynamicReshape: Reshape with the shape as a tensor input
# ----------------------------------------------------------------------------

def _dyn_reshape_kernel(x, shape, static):
    dims = _int_vec(shape, "Reshape", "shape")
    known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
    if dims.count(-1) > 1 or any(d < -1 for d in dims):
        raise _err("Reshape", f"only one input size may be -1, and none below it; got shape {list(dims)}")
    if (-1 in dims and (known == 0 or x.size % known)) or (-1 not in dims and known != x.size):
        need = f"requires a multiple of {known}" if -1 in dims else f"has {known}"
        raise _err("Reshape", f"Input to reshape is a tensor with {x.size} values, but the requested shape {need} "
                   f"(input shape {list(x.shape)}, requested {list(dims)}); the number of elements must stay the same")
    return np.reshape(x, dims)


def _dyn_reshape_shape(specs, static):
    (s, dt), (vs, _) = specs
    if static is None:
        return [((None,) * vs[0] if vs is not None and vs[0] is not None else None, dt)]
    out = _static_out(static)
    if _known(s) and out.count(None) == 1 and -1 in static:
        known = int(np.prod([d for d in out if d is not None], dtype=np.int64))
        total = int(np.prod(s, dtype=np.int64))
        if known and total % known == 0:
            out = tuple(total // known if d is None else d for d in out)
    return [(out, dt)]


DYNAMIC_RESHAPE = defop("DynamicReshape", _dyn_reshape_kernel, shape=_dyn_reshape_shape)


@defgrad("DynamicReshape", inputs=True)
def _dyn_reshape_grad(op, g):
    x = op.inputs[0]
    return dynamic_reshape(g, shape_of(x), static=op.input_shapes[0]), None


def dynamic_reshape(x: Any, shape: Any, static: tuple | None = None) -> Tensor:
    """Reshapes ``x`` to ``shape`` (an int tensor, or a list of ints and
    scalar int tensors); ``static`` is what tracing knows of the result."""
    x = t(x)
    vec, known = shape_vector(shape)
    if static is None:
        static = known
    if known is not None and known.count(-1) > 1:
        raise _err("Reshape", f"only one input size may be -1, not both in shape {list(known)}")
    return execute(DYNAMIC_RESHAPE, (x, vec), {"static": None if static is None else tuple(static)})


def reshape_keeping(x: Tensor, dims: tuple) -> Tensor:
    """Reshapes ``x`` to ``dims``, where a None entry is "x's own dim
    here": ``dims`` lists x's dims in order with some 1s added or removed
    (expand_dims, squeeze, keepdims). Static when possible."""
    nones = sum(1 for d in dims if d is None)
    if nones == 0:
        return array_ops.reshape(x, dims)
    if nones == 1:
        return array_ops._reshape_any(x, dims)
    # Several unknown dims: they are x's unknown dims, in order.
    s = x._shape_tuple()
    unknown = [i for i, d in enumerate(s) if d is None]
    if len(unknown) != nones:
        raise NotImplementedError(f"reshape_keeping: cannot match target {dims} to the dims of {s}")
    sx = shape_of(x)
    items, k = [], 0
    for d in dims:
        if d is None:
            items.append(array_ops.getitem(sx, unknown[k]))
            k += 1
        else:
            items.append(int(d))
    return dynamic_reshape(x, items, static=tuple(dims))


# ----------------------------------------------------------------------------
# DynamicBroadcastTo, DynamicFill, DynamicTile
# ----------------------------------------------------------------------------

def _dyn_broadcast_kernel(x, shape, static):
    dims = _int_vec(shape, "BroadcastTo", "shape")
    try:
        return np.broadcast_to(x, dims).copy()
    except ValueError:
        raise _err("BroadcastTo", f"Unable to broadcast tensor of shape {list(x.shape)} to tensor of shape "
                   f"{list(dims)}") from None


def _dyn_broadcast_shape(specs, static):
    (s, dt), (vs, _) = specs
    if static is None:
        return [((None,) * vs[0] if vs is not None and vs[0] is not None else None, dt)]
    out = list(_static_out(static))
    if s is not None:  # an unknown target dim must equal x's dim there unless that is 1
        for i in range(1, min(len(s), len(out)) + 1):
            if out[-i] is None and s[-i] is not None and s[-i] != 1:
                out[-i] = s[-i]
    return [(tuple(out), dt)]


DYNAMIC_BROADCAST_TO = defop("DynamicBroadcastTo", _dyn_broadcast_kernel, shape=_dyn_broadcast_shape)


@defgrad("DynamicBroadcastTo", inputs=True)
def _dyn_broadcast_grad(op, g):
    return g, None  # the engine sums it back to x's (run-time) shape


def dynamic_broadcast_to(x: Any, shape: Any, static: tuple | None = None) -> Tensor:
    """Broadcasts ``x`` to ``shape`` (an int tensor or list with tensors)."""
    x = t(x)
    vec, known = shape_vector(shape)
    return execute(DYNAMIC_BROADCAST_TO, (x, vec), {"static": known if static is None else tuple(static)})


def _dyn_fill_kernel(dims, value, static):
    d = _int_vec(dims, "Fill", "dims")
    if any(v < 0 for v in d):
        raise _err("Fill", f"dims must be non-negative, got {list(d)}")
    return np.full(d, value, dtype=value.dtype)


def _dyn_fill_shape(specs, static):
    (vs, _), (_, dt) = specs
    if static is None:
        return [((None,) * vs[0] if vs is not None and vs[0] is not None else None, dt)]
    return [(_static_out(static), dt)]


DYNAMIC_FILL = defop("DynamicFill", _dyn_fill_kernel, shape=_dyn_fill_shape)


@defgrad("DynamicFill", inputs=False)
def _dyn_fill_grad(op, g):
    return None, math_ops.reduce_sum(g)


def dynamic_fill(dims: Any, value: Any, static: tuple | None = None) -> Tensor:
    """``tf.fill`` with ``dims`` given as an int tensor (or list with tensors)."""
    v = t(value)
    if v._shape_tuple() != ():
        raise _err("Fill", f"value must be a scalar, got shape {list(v._shape_tuple())}")
    vec, known = shape_vector(dims, "dims")
    return execute(DYNAMIC_FILL, (vec, v), {"static": known if static is None else tuple(static)})


def _dyn_tile_kernel(x, multiples, static):
    m = _int_vec(multiples, "Tile", "multiples")
    if len(m) != x.ndim:
        raise _err("Tile", f"Expected multiples argument to be a vector of length {x.ndim} but got length {len(m)}")
    if any(v < 0 for v in m):
        raise _err("Tile", f"Expected multiples[i] >= 0, got {list(m)}")
    return np.tile(x, m)


def _dyn_tile_shape(specs, static):
    (s, dt), _ = specs
    if s is None:
        return [(None, dt)]
    return [(tuple(None if d is None or m is None else d * m for d, m in zip(s, static)), dt)]


DYNAMIC_TILE = defop("DynamicTile", _dyn_tile_kernel, shape=_dyn_tile_shape)


@defgrad("DynamicTile", inputs=True)
def _dyn_tile_grad(op, g):
    # Reshape to [m0, d0, m1, d1, ...] and sum the multiple axes.
    x, m = op.inputs
    r = _rank_of(x, "Tile gradient")
    pairs = array_ops.stack([math_ops.cast(m, dtypes.int32), shape_of(x)], axis=1)
    split = dynamic_reshape(g, array_ops.reshape(pairs, (2 * r,)), static=(None,) * (2 * r))
    return math_ops.reduce_sum(split, axis=list(range(0, 2 * r, 2))), None


def dynamic_tile(x: Any, multiples: Any) -> Tensor:
    """``tf.tile`` with ``multiples`` as an int tensor (or list with tensors)."""
    x = t(x)
    vec, known = shape_vector(multiples, "multiples")
    r = _rank_of(x, "Tile")
    if known is None or len(known) != r:
        raise _err("Tile", f"Expected multiples argument to be a vector of length {r} but got "
                   f"{'unknown length' if known is None else f'length {len(known)}'}")
    return execute(DYNAMIC_TILE, (x, vec), {"static": known})


# ----------------------------------------------------------------------------
# DynamicSplitV: split sizes known only at run time
# ----------------------------------------------------------------------------

def _dyn_split_kernel(x, sizes, axis, num):
    n = x.shape[axis]
    if sizes.ndim == 0:  # num equal parts
        if n % num:
            raise _err("Split", f"Number of ways to split should evenly divide the split dimension, but got "
                       f"split_dim {axis} (size = {n}) and num_split {num}")
        return tuple(np.split(x, num, axis=axis))
    s = list(_int_vec(sizes, "SplitV", "size_splits"))
    if s.count(-1) == 1:
        s[s.index(-1)] = n - (sum(s) + 1)
    if sum(s) != n or any(v < 0 for v in s):
        raise _err("SplitV", f"Determined shape must either match input shape along split_dim exactly if fully "
                   f"specified, or be less than the size of the input along split_dim if not fully specified.  "
                   f"Got: {sum(s)} for sizes {s} and dimension {n}")
    return tuple(np.split(x, np.cumsum(s)[:-1], axis=axis))


def _dyn_split_shape(specs, axis, num):
    (s, dt), _ = specs
    if s is None:
        return [(None, dt)] * num
    out = tuple(None if i == axis else d for i, d in enumerate(s))
    return [(out, dt)] * num


DYNAMIC_SPLIT = defop("DynamicSplitV", _dyn_split_kernel, shape=_dyn_split_shape,
                      num_outputs=lambda attrs: attrs["num"])


@defgrad("DynamicSplitV", inputs=False)
def _dyn_split_grad(op, *grads):
    return array_ops.concat(list(grads), axis=op.get_attr("axis")), None


def dynamic_split(x: Any, sizes: Any, axis: int, num: int) -> list:
    """Splits ``x`` along ``axis`` into ``num`` parts: equal ones when
    ``sizes`` is a scalar (unused), else the sizes of the int vector."""
    x = t(x)
    a = normalize_axis(axis, _rank_of(x, "Split"), "Split")
    if sizes is None:
        vec = _wrap(np.int32(num))
    else:
        vec, _ = shape_vector(sizes, "size_splits")
    return execute(DYNAMIC_SPLIT, (x, vec), {"axis": a, "num": int(num)})


# ----------------------------------------------------------------------------
# SumToShape: the engine's unbroadcast when shapes are known only at run time
# ----------------------------------------------------------------------------

def _sum_to_kernel(g, shape, static):
    dims = _int_vec(shape, "SumToShape", "shape")
    if g.shape == dims:
        return g
    lead = g.ndim - len(dims)
    if lead < 0 or any(a != b and b != 1 for a, b in zip(g.shape[lead:], dims)):
        try:  # a rule returned something smaller (e.g. a scalar): broadcast it up
            return np.broadcast_to(g, dims).copy()
        except ValueError:
            raise _err("SumToShape", f"Incompatible shapes: a gradient of shape {list(g.shape)} cannot be summed "
                       f"back to its input's shape {list(dims)}") from None
    out = np.sum(g, axis=tuple(range(lead)), dtype=g.dtype) if lead else g
    ones = tuple(i for i, d in enumerate(dims) if d == 1 and out.shape[i] != 1)
    if ones:
        out = np.sum(out, axis=ones, keepdims=True, dtype=g.dtype)
    return np.asarray(out)


SUM_TO_SHAPE = defop("SumToShape", _sum_to_kernel, shape=lambda specs, static: [(static, specs[0][1])])


@defgrad("SumToShape", inputs=True)
def _sum_to_grad(op, g):
    return dynamic_broadcast_to(g, shape_of(op.inputs[0]), static=op.input_shapes[0]), None


def sum_to_shape(grad: Tensor, shape_t: Tensor, static: tuple | None = None) -> Tensor:
    """Sums ``grad`` over broadcast axes down to the int vector ``shape_t``."""
    if static is None:
        n = shape_t._shape_tuple()
        static = None if n is None or n[0] is None else (None,) * n[0]
    return execute(SUM_TO_SHAPE, (grad, shape_t), {"static": None if static is None else tuple(static)})


# ----------------------------------------------------------------------------
# DynamicStridedSliceGrad: StridedSlice's gradient into a run-time shape
# ----------------------------------------------------------------------------

def _dyn_slice_grad_kernel(dy, shape, spec, static):
    return array_ops._strided_slice_grad_kernel(dy, _int_vec(shape, "StridedSliceGrad", "shape"), spec)


DYNAMIC_SLICE_GRAD = defop("DynamicStridedSliceGrad", _dyn_slice_grad_kernel,
                           shape=lambda specs, spec, static: [(static, specs[0][1])])


@defgrad("DynamicStridedSliceGrad", inputs=False)
def _dyn_slice_grad_grad(op, g):
    return execute(array_ops.STRIDED_SLICE, (g,), {"spec": op.get_attr("spec")}), None


def strided_slice_grad(dy: Tensor, x: Tensor, static: tuple, spec: tuple) -> Tensor:
    """Scatters ``dy`` into zeros shaped like ``x`` (at run time) at ``spec``."""
    return execute(DYNAMIC_SLICE_GRAD, (dy, shape_of(x)), {"spec": spec, "static": tuple(static)})


# ----------------------------------------------------------------------------
# DynamicGatherGrad: GatherV2's gradient into params of a run-time shape
# ----------------------------------------------------------------------------

def _gather_grad_kernel(g, indices, shape, axis, batch_dims, static):
    dims = _int_vec(shape, "GatherV2", "params shape")
    out = np.zeros(dims, dtype=g.dtype)
    idx = np.asarray(indices)
    b, k = batch_dims, idx.ndim - batch_dims
    nb = int(np.prod(dims[:b], dtype=np.int64))
    # out as (nb, n, *before, *after) and g as (nb, *idx, *before, *after):
    # then out[batch, idx] += g in one scatter-add.
    o = np.moveaxis(out.reshape((nb,) + dims[b:]), axis - b + 1, 1)
    gg = g.reshape((nb,) + g.shape[b:])
    gg = np.moveaxis(gg, list(range(axis - b + 1, axis - b + 1 + k)), list(range(1, 1 + k)))
    ii = idx.reshape((nb,) + idx.shape[b:])
    bi = np.arange(nb).reshape((nb,) + (1,) * k)
    np.add.at(o, (bi, ii), gg)
    return out


DYNAMIC_GATHER_GRAD = defop("DynamicGatherGrad", _gather_grad_kernel,
                            shape=lambda specs, axis, batch_dims, static: [(static, specs[0][1])])


@defgrad("DynamicGatherGrad", inputs=True)
def _gather_grad_grad(op, g):
    attrs = {"axis": op.get_attr("axis"), "batch_dims": op.get_attr("batch_dims")}
    return execute(array_ops.GATHER, (g, op.inputs[1]), attrs), None, None


def gather_grad(g: Tensor, indices: Tensor, params: Tensor, axis: int, batch_dims: int) -> Tensor:
    """The dense gradient of ``gather(params, indices, axis, batch_dims)``:
    ``g`` scatter-added into zeros shaped like ``params`` at run time."""
    return execute(DYNAMIC_GATHER_GRAD, (g, indices, shape_of(params)),
                   {"axis": int(axis), "batch_dims": int(batch_dims), "static": params._shape_tuple()})


# ----------------------------------------------------------------------------
# Range with bounds known only at run time
# ----------------------------------------------------------------------------

def _range_kernel(start, limit, delta, size):
    if delta == 0:
        raise _err("Range", "Requires delta != 0")
    if (delta > 0 and start > limit) or (delta < 0 and start < limit):
        raise _err("Range", f"Requires start <= limit when delta > 0: {start}/{limit}" if delta > 0 else
                   f"Requires start >= limit when delta < 0: {start}/{limit}")
    return np.arange(start, limit, delta).astype(np.result_type(start, limit, delta), copy=False)


RANGE = defop("Range", _range_kernel, shape=lambda specs, size: [((size,), specs[0][1])])
NotDifferentiable("Range")


def range_dynamic(start: Any, limit: Any, delta: Any, dtype: Any = None) -> Tensor:
    """``tf.range`` with a bound that is a graph tensor (e.g. ``tf.shape(x)[0]``)."""
    tensors = [v for v in (start, limit, delta) if isinstance(v, Tensor)]
    if dtype is not None:
        dt = dtypes.as_dtype(dtype)
    elif any(v.dtype.is_floating for v in tensors) or any(isinstance(v, float) for v in (start, limit, delta)):
        dt = next((v.dtype for v in tensors if v.dtype.is_floating), dtypes.float32)
    else:
        dt = max((v.dtype for v in tensors), key=lambda d: d.size)
    args = []
    for v in (start, limit, delta):
        v = v if isinstance(v, Tensor) else _wrap(np.asarray(v, dtype=dt._np))
        if v._shape_tuple() != ():
            raise _err("Range", f"start, limit and delta must be scalars, got shape {list(v._shape_tuple())}")
        args.append(v if v.dtype is dt else math_ops.cast(v, dt))
    # The length, when tracing knows every bound (the shape rule reports it).
    known = [partial_value(v) if isinstance(v, Tensor) else v for v in (start, limit, delta)]
    size = None
    if all(isinstance(k, (int, float)) for k in known) and known[2] != 0:
        size = len(np.arange(known[0], known[1], known[2]))
    return execute(RANGE, tuple(args), {"size": size})


def eye_dynamic(num_rows: Any, num_columns: Any, batch_shape: Any, dtype: dtypes.DType) -> Tensor:
    """``tf.eye`` with sizes known only at run time: row index == column index."""
    cols = num_rows if num_columns is None else num_columns
    r = range_dynamic(0, num_rows, 1, dtypes.int32)
    c = range_dynamic(0, cols, 1, dtypes.int32)
    m = math_ops.cast(math_ops.equal(array_ops.expand_dims(r, 1), array_ops.expand_dims(c, 0)), dtype)
    rows_known, cols_known = partial_value(t(num_rows)), partial_value(t(cols))
    static = (rows_known if isinstance(rows_known, int) else None, cols_known if isinstance(cols_known, int) else None)
    if batch_shape is None:
        return m
    vec, known = shape_vector(batch_shape, "batch_shape")
    full = array_ops.concat([vec, shape_of(m)], 0)
    return dynamic_broadcast_to(m, full, static=None if known is None else tuple(known) + static)


# ----------------------------------------------------------------------------
# Batching rules (vectorized jacobians, tapeflow/eager/batching.py): the data
# input carries a leading batch axis; shape vectors must not (else the per-row
# loop runs). Each rule prepends the batch size to the shape it passes on.
# ----------------------------------------------------------------------------

def _batched_vec(size: int, vec: Tensor) -> Tensor:
    return array_ops.concat([_wrap(np.asarray([size], np.int32)), vec], 0)


def _logical_static(attrs: dict, size: int) -> tuple | None:
    s = attrs.get("static")
    return None if s is None else (size,) + tuple(s)


def _loop(op_name: str, size, args, batched, attrs):
    from tapeflow.ops import batch_rules as batching
    from tapeflow.ops.registry import get_op

    return batching._loop_rule(get_op(op_name), size, args, batched, attrs)


def _batch_shape_rule(size, args, batched, attrs):
    from tapeflow.ops.batch_rules import materialize

    return materialize(execute(SHAPE, (args[0],), attrs)[1:], False, size)


def _batch_size_rule(size, args, batched, attrs):
    from tapeflow.ops.batch_rules import materialize

    per_row = math_ops.reduce_prod(execute(SHAPE, (args[0],), {"out_type": attrs["out_type"]})[1:])
    return materialize(per_row, False, size)


def _batch_rank_rule(size, args, batched, attrs):
    from tapeflow.ops.batch_rules import materialize

    return materialize(_wrap(np.int32(len(args[0]._shape_tuple()) - 1)), False, size)


def _batch_data_rule(op, name: str):
    # DynamicReshape / DynamicBroadcastTo / DynamicTile / DynamicStridedSliceGrad.
    def rule(size, args, batched, attrs):
        if batched[1]:
            return _loop(name, size, args, batched, attrs)
        x, vec = args
        a = dict(attrs)
        if "static" in a:
            a["static"] = _logical_static(attrs, size)
        if name == "DynamicTile":
            return execute(op, (x, array_ops.concat([_wrap(np.ones(1, np.int32)), vec], 0)), a)
        if name == "DynamicStridedSliceGrad":
            a["spec"] = (("s", None, None, None),) + tuple(attrs["spec"])
        if name == "DynamicBroadcastTo":
            n = vec._shape_tuple()[0]
            r = len(x._shape_tuple()) - 1
            if n is None or n < r:
                return _loop(name, size, args, batched, attrs)
            x = array_ops.reshape(x, (size,) + (1,) * (n - r) + tuple(x._shape_tuple()[1:])) if n > r else x
        return execute(op, (x, _batched_vec(size, vec)), a)

    return rule


def _batch_fill_rule(size, args, batched, attrs):
    vec, value = args
    if batched[0]:
        return _loop("DynamicFill", size, args, batched, attrs)
    n = vec._shape_tuple()[0]
    if n is None:
        return _loop("DynamicFill", size, args, batched, attrs)
    v = array_ops.reshape(value, (size,) + (1,) * n)
    return execute(DYNAMIC_BROADCAST_TO, (v, _batched_vec(size, vec)), {"static": _logical_static(attrs, size)})


def _batch_split_rule(size, args, batched, attrs):
    if batched[1]:
        return _loop("DynamicSplitV", size, args, batched, attrs)
    return execute(DYNAMIC_SPLIT, tuple(args), {"axis": attrs["axis"] + 1, "num": attrs["num"]})


def _batch_sum_to_rule(size, args, batched, attrs):
    if batched[1]:
        return _loop("SumToShape", size, args, batched, attrs)
    g, vec = args
    n = vec._shape_tuple()[0]
    lead = len(g._shape_tuple()) - 1 - (n if n is not None else 0)
    if n is None or lead < 0:
        return _loop("SumToShape", size, args, batched, attrs)
    if lead:  # the logical leading axes, never the batch axis
        g = math_ops.reduce_sum(g, axis=list(range(1, lead + 1)))
    return execute(SUM_TO_SHAPE, (g, _batched_vec(size, vec)), {"static": _logical_static(attrs, size)})


SHAPE.batch = _batch_shape_rule
SIZE.batch = _batch_size_rule
RANK.batch = _batch_rank_rule
DYNAMIC_RESHAPE.batch = _batch_data_rule(DYNAMIC_RESHAPE, "DynamicReshape")
DYNAMIC_BROADCAST_TO.batch = _batch_data_rule(DYNAMIC_BROADCAST_TO, "DynamicBroadcastTo")
DYNAMIC_TILE.batch = _batch_data_rule(DYNAMIC_TILE, "DynamicTile")
DYNAMIC_SLICE_GRAD.batch = _batch_data_rule(DYNAMIC_SLICE_GRAD, "DynamicStridedSliceGrad")
DYNAMIC_FILL.batch = _batch_fill_rule
DYNAMIC_SPLIT.batch = _batch_split_rule
SUM_TO_SHAPE.batch = _batch_sum_to_rule


def _batch_gather_grad_rule(size, args, batched, attrs):
    # The batch axis becomes one more batch dim of the scatter.
    from tapeflow.ops.batch_rules import materialize

    g, indices, shape_vec = args
    if batched[2] or not batched[0]:
        return _loop("DynamicGatherGrad", size, args, batched, attrs)
    idx = materialize(indices, batched[1], size)
    static = attrs["static"]
    return execute(DYNAMIC_GATHER_GRAD, (g, idx, _batched_vec(size, shape_vec)), {
        "axis": attrs["axis"] + 1, "batch_dims": attrs["batch_dims"] + 1,
        "static": None if static is None else (size,) + tuple(static)})


DYNAMIC_GATHER_GRAD.batch = _batch_gather_grad_rule


# ----------------------------------------------------------------------------
# Slice and DynamicPadV2: begin/size and paddings known only at run time
# (a random crop's offsets, a crop or pad computed from tf.shape)
# ----------------------------------------------------------------------------

def _slice_kernel(x, begin, size, static):
    b, s = _int_vec(begin, "Slice", "begin"), _int_vec(size, "Slice", "size")
    if len(b) != x.ndim or len(s) != x.ndim:
        raise _err("Slice", f"Expected begin and size arguments to be 1-D tensors of size {x.ndim}, but got shapes "
                   f"[{len(b)}] and [{len(s)}] instead.")
    key = []
    for i, (bi, si) in enumerate(zip(b, s)):
        end = x.shape[i] if si == -1 else bi + si
        if bi < 0 or si < -1 or end > x.shape[i]:
            raise _err("Slice", f"Expected size[{i}] in [0, {x.shape[i] - bi}], but got {si}")
        key.append(slice(bi, end))
    return x[tuple(key)]


SLICE = defop("Slice", _slice_kernel, shape=lambda specs, static: [(static, specs[0][1])])


def _slice_grad_kernel(dy, shape, begin, static):
    out = np.zeros(_int_vec(shape, "Slice", "shape"), dtype=dy.dtype)
    b = _int_vec(begin, "Slice", "begin")
    out[tuple(slice(bi, bi + n) for bi, n in zip(b, dy.shape))] = dy
    return out


SLICE_GRAD = defop("SliceGrad", _slice_grad_kernel, shape=lambda specs, static: [(static, specs[0][1])])


@defgrad("Slice", inputs=True)
def _slice_grad(op, g):
    x, begin, _ = op.inputs
    return execute(SLICE_GRAD, (g, shape_of(x), begin), {"static": x._shape_tuple()}), None, None


@defgrad("SliceGrad", inputs=True)
def _slice_grad_grad(op, g):
    dy, _, begin = op.inputs
    return execute(SLICE, (g, begin, shape_of(dy)), {"static": dy._shape_tuple()}), None, None


def dynamic_slice(x: Any, begin: Any, size: Any) -> Tensor:
    """``tf.slice`` with ``begin``/``size`` as int tensors (or lists holding scalar tensors); ``size`` -1: to
    the end."""
    x = t(x)
    r = _rank_of(x, "Slice")
    bvec, bknown = shape_vector(begin, "begin")
    svec, sknown = shape_vector(size, "size")
    s = x._shape_tuple()
    static = []
    for i in range(r):
        n = None if sknown is None or i >= len(sknown) else sknown[i]
        if n == -1:  # to the end: known when the dim and begin are
            bi = None if bknown is None or i >= len(bknown) else bknown[i]
            n = None if s is None or s[i] is None or bi is None else s[i] - bi
        static.append(n)
    return execute(SLICE, (x, bvec, svec), {"static": tuple(static)})


def _dyn_pad_kernel(x, paddings, constant_values, static):
    p = np.asarray(paddings)
    if p.shape != (x.ndim, 2):
        raise _err("PadV2", f"The first dimension of paddings must be the rank of inputs{list(p.shape)}, "
                   f"{list(x.shape)}")
    if (p < 0).any():
        raise _err("PadV2", f"Paddings must be non-negative: {p.tolist()}")
    return np.pad(x, [(int(a), int(b)) for a, b in p], mode="constant", constant_values=constant_values)


DYNAMIC_PAD = defop("DynamicPadV2", _dyn_pad_kernel, shape=lambda specs, static: [(static, specs[0][1])])


@defgrad("DynamicPadV2", inputs=True)
def _dyn_pad_grad(op, g):
    x, paddings, _ = op.inputs
    begin = array_ops.reshape(array_ops.slice_(math_ops.cast(paddings, dtypes.int32), [0, 0], [-1, 1]), (-1,))
    return execute(SLICE, (g, begin, shape_of(x)), {"static": x._shape_tuple()}), None, None


def dynamic_pad(x: Any, paddings: Any, constant_values: Any = 0) -> Tensor:
    """``tf.pad`` (``CONSTANT``) with ``paddings`` an int tensor of shape ``[rank, 2]``."""
    x = t(x)
    r = _rank_of(x, "PadV2")
    if isinstance(paddings, Tensor):
        p, known = paddings, [(None, None)] * r
    else:
        rows = [shape_vector(row, "paddings") for row in paddings]
        p, known = array_ops.stack([v for v, _ in rows]), [k or (None, None) for _, k in rows]
    s = x._shape_tuple()
    static = tuple(None if s[i] is None or None in known[i] else s[i] + known[i][0] + known[i][1] for i in range(r))
    v = constant_values if isinstance(constant_values, Tensor) else _wrap(np.asarray(constant_values,
                                                                                     x._value.dtype))
    return execute(DYNAMIC_PAD, (x, p, math_ops.cast(v, x.dtype)), {"static": static})
