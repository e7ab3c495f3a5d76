"""TF's remaining top-level array ops: ``tf.searchsorted``, ``unique_with_counts``, ``unravel_index``,
``reverse_sequence``, ``dynamic_partition``, ``dynamic_stitch``, ``histogram_fixed_width(_bins)``,
``truncatediv``/``truncatemod``, ``ensure_shape``, ``identity_n``, ``broadcast_static_shape`` /
``broadcast_dynamic_shape`` and ``timestamp``.

Where TF composes an op from others (``dynamic_partition`` of a mask, ``histogram_fixed_width``) it is
composed here too, so gradients come from the parts; the others are kernels next to their gradient rule
(or ``NotDifferentiable`` / no registered gradient, as in TF).
"""

from __future__ import annotations

import collections
import time
from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.framework.tensor_shape import TensorShape
from tapeflow.ops import array_ops, indexing_ops, math_ops, shapes
from tapeflow.ops._helpers import t
from tapeflow.ops.nn._common import _dims, _err  # TF's message helpers
from tapeflow.ops.registry import NoGradientRegistered, NotDifferentiable, defgrad, defop


# -- searchsorted -----------------------------------------------------------------------------------

def _searchsorted_kernel(seq, values, side, out_type):
    rows = seq.reshape(-1, seq.shape[-1])
    vals = values.reshape(-1, values.shape[-1])
    out = np.stack([np.searchsorted(r, v, side=side) for r, v in zip(rows, vals)]) if len(rows) else vals
    return out.astype(out_type).reshape(values.shape)


SEARCHSORTED = defop("SearchSorted", _searchsorted_kernel,
                     shape=lambda specs, side, out_type: [(specs[1][0], np.dtype(out_type))])
NotDifferentiable("SearchSorted")


def searchsorted(sorted_sequence: Any, values: Any, side: str = "left", out_type: Any = dtypes.int32,
                 name: str | None = None) -> Tensor:
    """``tf.searchsorted``: for each row of ``values``, where its entries go in the same row of the sorted
    innermost dimension of ``sorted_sequence`` (``side="left"`` or ``"right"``)."""
    seq, vals = t(sorted_sequence), t(values)
    if side not in ("left", "right"):
        raise ValueError(f"Argument `side` must be either 'right' or 'left'. Received: `side` = '{side}'.")
    s, v = seq._shape_tuple(), vals._shape_tuple()
    if not len(s) or not len(v):  # TF slices the last dimension of a scalar
        raise _err("StridedSlice", "slice index -1 of dimension 0 out of bounds.")
    if s[:-1] != v[:-1] and None not in s[:-1] + v[:-1]:
        raise _err("LowerBound" if side == "left" else "UpperBound",
                   f"Leading dim_size of both tensors must match. {_dims(s)} vs {_dims(v)}")
    return execute(SEARCHSORTED, (seq, vals), {"side": side, "out_type": dtypes.as_dtype(out_type)._np})


# -- unique_with_counts, unravel_index --------------------------------------------------------------

UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])


def unique_with_counts(x: Any, out_idx: Any = dtypes.int32, name: str | None = None) -> UniqueWithCounts:
    """``tf.unique_with_counts``: ``tf.unique``'s values (first-seen order) and indices, and how often
    each value occurs."""
    y, idx = indexing_ops.unique(x, out_idx)
    count = math_ops.unsorted_segment_sum(array_ops.ones_like(idx), idx, array_ops.size_(y, out_type=idx.dtype))
    return UniqueWithCounts(y, idx, count)


def _unravel_kernel(indices, dims):
    if np.any(indices < 0) or np.any(indices >= np.prod(dims)):
        raise _err("UnravelIndex", "index is out of bound as with dims")
    return np.stack(np.unravel_index(indices, dims)).astype(indices.dtype)


UNRAVEL_INDEX = defop("UnravelIndex", _unravel_kernel, shape=lambda specs: [(
    None if specs[1][0] is None or specs[0][0] is None else tuple(specs[1][0]) + tuple(specs[0][0]), specs[0][1])])
NotDifferentiable("UnravelIndex")


def unravel_index(indices: Any, dims: Any, name: str | None = None) -> Tensor:
    """``tf.unravel_index``: flat ``indices`` as coordinates in an array of shape ``dims`` (one row per
    dimension)."""
    idx = t(indices)
    return execute(UNRAVEL_INDEX, (idx, convert_to_tensor(dims, dtype=idx.dtype)))


# -- reverse_sequence ------------------------------------------------------------------------------

def _reverse_sequence_kernel(x, lengths, seq_axis, batch_axis):
    out = np.array(x, copy=True)
    if np.any(lengths < 0) or np.any(lengths > x.shape[seq_axis]):
        bad = int(lengths[np.argmax((lengths < 0) | (lengths > x.shape[seq_axis]))])
        raise _err("ReverseSequence", f"seq_lens(0) > input.dims({seq_axis}) ({bad} vs. {x.shape[seq_axis]})")
    for b, n in enumerate(lengths.tolist()):
        src = [slice(None)] * x.ndim
        src[batch_axis], src[seq_axis] = b, slice(None, n)
        dst = list(src)
        dst[seq_axis] = slice(n - 1, None, -1) if n else slice(0, 0)
        out[tuple(dst)] = x[tuple(src)]
    return out


REVERSE_SEQUENCE = defop("ReverseSequence", _reverse_sequence_kernel, shape=shapes.same)


@defgrad("ReverseSequence", inputs=True)
def _reverse_sequence_grad(op, g):
    lengths = op.inputs[1]
    return execute(REVERSE_SEQUENCE, (g, lengths), dict(op.attrs)), None


def reverse_sequence(input: Any, seq_lengths: Any, seq_axis: int | None = None, batch_axis: int | None = None,  # noqa: A002
                     name: str | None = None) -> Tensor:
    """``tf.reverse_sequence``: in each slice along ``batch_axis``, reverses the first ``seq_lengths[i]``
    entries along ``seq_axis``."""
    x, lengths = t(input), t(seq_lengths)
    nd = len(x._shape_tuple())
    seq_axis = 0 if seq_axis is None else int(seq_axis) % max(nd, 1)
    batch_axis = 0 if batch_axis is None else int(batch_axis) % max(nd, 1)
    if seq_axis == batch_axis:
        raise _err("ReverseSequence", f"seq_dim must not equal batch_dim ({seq_axis})")
    return execute(REVERSE_SEQUENCE, (x, lengths), {"seq_axis": seq_axis, "batch_axis": batch_axis})


# -- dynamic_partition / dynamic_stitch --------------------------------------------------------------

def dynamic_partition(data: Any, partitions: Any, num_partitions: int, name: str | None = None) -> list:
    """``tf.dynamic_partition``: ``data`` split into ``num_partitions`` tensors by the partition index of
    each of its leading entries (``partitions`` has the shape of ``data``'s leading dimensions)."""
    x, parts = t(data), t(partitions)
    if parts._value.dtype != np.int32:
        raise TypeError(f"Value passed to parameter 'partitions' has DataType {parts.dtype.name} not in list of "
                        "allowed values: int32")
    if not isinstance(parts._value, np.ndarray) or np.all((parts._value >= 0) & (parts._value < num_partitions)):
        return [indexing_ops.boolean_mask(x, math_ops.equal(parts, i)) for i in range(int(num_partitions))]
    bad = parts._value[(parts._value < 0) | (parts._value >= num_partitions)].reshape(-1)[0]
    raise _err("DynamicPartition", f"partitions[0] = {bad} is not in [0, {num_partitions})")


def _stitch_kernel(*arrays, n):
    indices, data = arrays[:n], arrays[n:]
    rows = int(max((i.max() for i in indices if i.size), default=-1)) + 1
    rest = data[0].shape[indices[0].ndim:]
    out = np.zeros((rows,) + rest, dtype=data[0].dtype)
    for i, d in zip(indices, data):  # in order: a later write to a row wins, as TF
        out[i.reshape(-1)] = d.reshape((-1,) + rest)
    return out


def _stitch_shape(specs, n):
    s, dtype = specs[n]
    rest = None if s is None or specs[0][0] is None else tuple(s[len(specs[0][0]):])
    return [(None if rest is None else (None,) + rest, dtype)]


DYNAMIC_STITCH = defop("DynamicStitch", _stitch_kernel, shape=_stitch_shape)


@defgrad("DynamicStitch", inputs=True)
def _stitch_grad(op, g):
    # TF's rule: every data entry gets the gradient of the row it was written to, overwritten or not
    n = op.get_attr("n")
    indices = op.inputs[:n]
    return [None] * n + [array_ops.gather(g, i) for i in indices]


def dynamic_stitch(indices: Any, data: Any, name: str | None = None) -> Tensor:
    """``tf.dynamic_stitch``: ``result[indices[m][i]] = data[m][i]``, the later of two writes to one row
    winning; the result has ``max(indices) + 1`` rows."""
    idx = [t(i) for i in indices]
    vals = [t(d) for d in data]
    if len(idx) != len(vals):
        raise ValueError(f"List argument 'indices' to 'DynamicStitch' Op with length {len(idx)} must match "
                         f"length {len(vals)} of argument 'data'.")
    return execute(DYNAMIC_STITCH, (*idx, *vals), {"n": len(idx)})


# -- histograms -------------------------------------------------------------------------------------

def histogram_fixed_width_bins(values: Any, value_range: Any, nbins: int = 100, dtype: Any = dtypes.int32,
                               name: str | None = None) -> Tensor:
    """``tf.histogram_fixed_width_bins``: the bin (of ``nbins`` equal bins over ``value_range``, values
    outside going to the end bins) of each value."""
    v = t(values)
    rng = convert_to_tensor(value_range, dtype=v.dtype)
    lo, hi = rng[0], rng[1]
    scaled = math_ops.truediv(math_ops.subtract(v, lo), math_ops.subtract(hi, lo))
    bins = math_ops.cast(math_ops.floor(math_ops.multiply(scaled, math_ops.cast(nbins, v.dtype))), dtypes.int32)
    return math_ops.cast(math_ops.clip_by_value(bins, 0, int(nbins) - 1), dtype)


def histogram_fixed_width(values: Any, value_range: Any, nbins: int = 100, dtype: Any = dtypes.int32,
                          name: str | None = None) -> Tensor:
    """``tf.histogram_fixed_width``: how many values fall in each of ``nbins`` equal bins over
    ``value_range`` (values outside count in the end bins)."""
    bins = array_ops.reshape(histogram_fixed_width_bins(values, value_range, nbins), [-1])
    counts = math_ops.unsorted_segment_sum(array_ops.ones_like(bins), bins, int(nbins))
    return math_ops.cast(counts, dtype)


# -- truncated division -----------------------------------------------------------------------------

def _truncatediv_kernel(x, y):
    if x.dtype.kind in "iu":
        if np.any(y == 0):
            raise _err("TruncateDiv", "Integer division by zero")
        q = np.abs(x) // np.abs(y)
        return np.where((x < 0) != (y < 0), -q, q).astype(x.dtype)
    return np.trunc(x / y).astype(x.dtype)


def _truncatemod_kernel(x, y):
    if x.dtype.kind in "iu" and np.any(y == 0):
        raise _err("TruncateMod", "Integer division by zero")
    return np.fmod(x, y).astype(x.dtype)


TRUNCATE_DIV = defop("TruncateDiv", _truncatediv_kernel, shape=shapes.broadcast)
TRUNCATE_MOD = defop("TruncateMod", _truncatemod_kernel, shape=shapes.broadcast)
NotDifferentiable("TruncateDiv")  # TF: None gradients
NoGradientRegistered("TruncateMod")  # TF: LookupError


def _binary(op: Any, x: Any, y: Any) -> Tensor:
    a = t(x)
    b = convert_to_tensor(y, dtype_hint=a.dtype)
    if a.dtype is not b.dtype:
        from tapeflow.ops._helpers import dtype_mismatch

        raise dtype_mismatch(op.name, a, b)
    return execute(op, (a, b))


def truncatediv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``tf.truncatediv``: ``x / y`` rounded toward zero (C's integer division): ``-7 / 5 = -1``."""
    return _binary(TRUNCATE_DIV, x, y)


def truncatemod(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``tf.truncatemod``: the remainder of ``truncatediv`` (C's ``%``, ``fmod`` for floats)."""
    return _binary(TRUNCATE_MOD, x, y)


# -- shapes -----------------------------------------------------------------------------------------

def _compatible(shape: tuple | None, want: TensorShape) -> bool:
    return TensorShape(shape).is_compatible_with(want)


def _ensure_kernel(x, shape):
    if not _compatible(x.shape, TensorShape(shape)):
        raise _err("EnsureShape", f"Shape of tensor input {_dims(x.shape)} is not compatible with expected shape "
                   f"{_dims(shape)}.")
    return x


def _ensure_shape_rule(specs, shape):
    (s, dtype), = specs
    if s is None:
        return [(tuple(shape), dtype)]
    if not _compatible(s, TensorShape(shape)):
        bad = next(i for i, (a, b) in enumerate(zip(s, shape)) if None not in (a, b) and a != b) \
            if len(s) == len(shape) else None
        detail = (f"Dimension {bad} in both shapes must be equal, but are {shape[bad]} and {s[bad]}" if bad is not None
                  else f"Shapes must be equal rank, but are {len(shape)} and {len(s)}")
        raise ValueError(f"{detail}. Shapes are {_dims(shape)} and {_dims(s)}.")
    return [(tuple(a if a is not None else b for a, b in zip(s, shape)), dtype)]


ENSURE_SHAPE = defop("EnsureShape", _ensure_kernel, shape=_ensure_shape_rule)


@defgrad("EnsureShape", inputs=False)
def _ensure_shape_grad(op, g):
    return g


def ensure_shape(x: Any, shape: Any, name: str | None = None) -> Tensor:
    """``tf.ensure_shape``: ``x``, checked to have a shape compatible with ``shape`` (``None`` entries
    match anything); inside ``tf.function`` the result also has that static shape."""
    v = t(x)
    want = TensorShape(shape)
    if want.rank is None:
        return v
    return execute(ENSURE_SHAPE, (v,), {"shape": tuple(want.as_list())})


def identity_n(input: Any, name: str | None = None) -> list:  # noqa: A002
    """``tf.identity_n``: an identity of each tensor of the list."""
    return [array_ops.identity(x) for x in input]


def broadcast_static_shape(shape_x: TensorShape, shape_y: TensorShape) -> TensorShape:
    """``tf.broadcast_static_shape``: the static shape two shapes broadcast to."""
    a, b = TensorShape(shape_x), TensorShape(shape_y)
    if a.rank is None or b.rank is None:
        return TensorShape(None)
    n = max(a.rank, b.rank)
    xa, xb = [1] * (n - a.rank) + a.as_list(), [1] * (n - b.rank) + b.as_list()
    return TensorShape([_broadcast_dim(da, db, a, b) for da, db in zip(xa, xb)])


def _broadcast_dim(da: Any, db: Any, a: TensorShape, b: TensorShape) -> Any:
    if da is None or db is None:
        other = db if da is None else da
        return None if other in (None, 1) else other
    if da == db or db == 1:
        return da
    if da == 1:
        return db
    raise ValueError("Incompatible shapes for broadcasting. Two shapes are compatible if for each dimension pair "
                     f"they are either equal or one of them is 1. Received: {tuple(a.as_list())} and "
                     f"{tuple(b.as_list())}.")


def _broadcast_args_kernel(sx, sy):
    try:
        return np.asarray(np.broadcast_shapes(tuple(sx.tolist()), tuple(sy.tolist())), dtype=sx.dtype)
    except ValueError:
        raise _err("BroadcastArgs", f"Incompatible shapes: {_dims(sx.tolist())} vs. {_dims(sy.tolist())}") from None


BROADCAST_ARGS = defop("BroadcastArgs", _broadcast_args_kernel, shape=lambda specs: [((None,), specs[0][1])])
NotDifferentiable("BroadcastArgs")


def broadcast_dynamic_shape(shape_x: Any, shape_y: Any) -> Tensor:
    """``tf.broadcast_dynamic_shape``: the shape (a 1-D int tensor) two shapes broadcast to."""
    sx = convert_to_tensor(shape_x, dtype_hint=dtypes.int32)
    return execute(BROADCAST_ARGS, (sx, convert_to_tensor(shape_y, dtype=sx.dtype)))


def timestamp(name: str | None = None) -> Tensor:
    """``tf.timestamp``: seconds since the epoch, a float64 scalar (taken when the op runs)."""
    return execute(TIMESTAMP, ())


TIMESTAMP = defop("Timestamp", lambda: np.float64(time.time()), shape=lambda specs: [((), np.dtype(np.float64))])
TIMESTAMP.extra["stateful"] = True
NotDifferentiable("Timestamp")


# -- Bitcast, GuaranteeConst, parallel_stack -------------------------------------------------------------------

_BITCAST_TYPES = ("bfloat16", "float16", "float32", "float64", "int64", "int32", "uint8", "uint16", "uint32",
                  "uint64", "int8", "int16", "complex64", "complex128")
_BITCAST_NAMES = ("bfloat16, half, float, double, int64, int32, uint8, uint16, uint32, uint64, int8, int16, "
                  "complex64, complex128, qint8, quint8, qint16, quint16, qint32")


def _dtype_enum(d: dtypes.DType) -> int:
    return {v: k for k, v in dtypes._ENUM_NAMES.items()}[d.name]


def _bitcast_kernel(x, type):  # noqa: A002 - TF's attr name
    out = np.dtype(type)
    a = np.require(x, requirements="C")
    src, dst = a.dtype.itemsize, out.itemsize
    if src == dst:
        return a.view(out).reshape(a.shape)
    if src > dst:
        return a.reshape(a.shape + (1,)).view(out).reshape(a.shape + (src // dst,))
    if a.ndim == 0 or a.shape[-1] != dst // src:
        raise _err("Bitcast", f"Cannot bitcast from {_dtype_enum(dtypes.as_dtype(a.dtype))} to "
                   f"{_dtype_enum(dtypes.as_dtype(out))}")
    return a.view(out).reshape(a.shape[:-1])


def _bitcast_shape(specs, type):  # noqa: A002
    s, d = specs[0]
    out = np.dtype(type)
    if s is None:
        return [(None, out)]
    if d.itemsize > out.itemsize:
        return [(tuple(s) + (d.itemsize // out.itemsize,), out)]
    if d.itemsize < out.itemsize:
        return [(tuple(s[:-1]), out)]
    return [(tuple(s), out)]


BITCAST = defop("Bitcast", _bitcast_kernel, shape=_bitcast_shape)
NoGradientRegistered("Bitcast")  # TF: LookupError


def bitcast(input: Any, type: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's names
    """``tf.bitcast``: the same bytes read as ``type``: a wider type eats the last dimension (which must be the
    width ratio), a narrower one adds it; no copy of the values, no gradient (TF's ``LookupError``)."""
    x = t(input)
    out = dtypes.as_dtype(type)
    for d, attr in ((x.dtype, "T"), (out, "type")):
        if d.name not in _BITCAST_TYPES:
            raise InvalidArgumentError(None, None, f"Value for attr '{attr}' of {d.name} is not in the list of "
                                       f"allowed values: {_BITCAST_NAMES}\n\t; NodeDef: {{{{node Bitcast}}}} "
                                       "[Op:Bitcast]")
    s = x._shape_tuple()
    if out.size > x.dtype.size and s is not None and (not s or (s[-1] is not None
                                                                  and s[-1] != out.size // x.dtype.size)):
        raise InvalidArgumentError(None, None, f"Cannot bitcast from {_dtype_enum(x.dtype)} to {_dtype_enum(out)} "
                                   "[Op:Bitcast]")
    return execute(BITCAST, (x,), {"type": np.dtype(out._np)})


GUARANTEE_CONST = defop("GuaranteeConst", lambda x: np.array(x, copy=True), shape=lambda specs: [specs[0]])
NoGradientRegistered("GuaranteeConst")  # TF: LookupError


def guarantee_const(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """``tf.guarantee_const`` (deprecated in TF, "not for public use"): ``input``, promised constant; no
    gradient (TF's ``LookupError``)."""
    return execute(GUARANTEE_CONST, (t(input),))


def parallel_stack(values: Any, name: str = "parallel_stack") -> Tensor:
    """``tf.parallel_stack``: ``tf.stack(values)`` inside ``tf.function`` (TF copies the inputs in parallel);
    eagerly TF's ``RuntimeError``."""
    from tapeflow.framework.context import executing_eagerly

    if executing_eagerly():
        raise RuntimeError("tf.parallel_stack() is not compatible with eager execution.")
    return array_ops.stack([t(v) for v in values])
