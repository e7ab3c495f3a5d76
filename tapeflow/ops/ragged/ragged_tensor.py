"""``tf.RaggedTensor``: a tensor whose rows have different lengths.

A RaggedTensor is ``values`` (a Tensor, or another RaggedTensor for several
ragged dimensions) partitioned into rows by ``row_splits`` (int64, row ``i``
is ``values[row_splits[i]:row_splits[i + 1]]``). Its components are the dense
``flat_values`` and every level's ``row_splits``; everything computed on the
values goes through tapeflow ops, so gradients w.r.t. ``flat_values`` flow as
for any tensor. The partitions are integers and never differentiated.

>>> rt = tf.ragged.constant([[1, 2], [3]])
>>> rt
<tf.RaggedTensor [[1, 2], [3]]>
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.composite_tensor import CompositeTensor, TypeSpec, register_composite
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.framework.tensor_shape import TensorShape


def _np(x: Any) -> np.ndarray:
    if isinstance(x, Tensor) and not isinstance(x._value, np.ndarray | np.generic):
        raise _symbolic_partition()
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _symbolic_partition() -> NotImplementedError:
    # tapeflow's ragged ops compute on row partitions they know; a RaggedTensorSpec's are placeholders.
    return NotImplementedError(
        "tapeflow's ragged ops need the row partition's values: in a tf.function traced from a RaggedTensorSpec "
        "only ops that keep the partition (elementwise math, tf.ragged.map_flat_values) and the row queries "
        "(nrows, row_lengths, row_starts, row_limits) are implemented. Call "
        "the function with a RaggedTensor (it is traced per row partition) instead.")


def _splits_tensor(x: Any, dtype: Any = None) -> Tensor:
    if isinstance(x, Tensor):
        if x._value.dtype.kind not in "iu":
            raise ValueError(f"row partition tensors must be integers, got {x.dtype.name}")
        return x
    arr = np.asarray(x.numpy() if hasattr(x, "numpy") else x)
    if arr.size and arr.dtype.kind not in "iu":
        raise ValueError(f"row partition tensors must be integers, got {arr.dtype}")
    return convert_to_tensor(arr.astype(np.int64) if dtype is None else arr.astype(dtypes.as_dtype(dtype)._np))


def _values(x: Any) -> Any:
    if isinstance(x, (Tensor, RaggedTensor)):
        return x
    if hasattr(x, "value") and hasattr(x, "assign"):  # a Variable: read it (watched by tapes)
        return x.value()
    return convert_to_tensor(x)


def _nvals(values: Any) -> int:
    if isinstance(values, RaggedTensor):
        return values.nrows_int()
    return int(values._shape_tuple()[0]) if values._shape_tuple() else 0


class RaggedTensor(CompositeTensor):
    """Rows of different lengths over dense ``values`` (see the module doc)."""

    __slots__ = ("_values", "_row_splits", "_uniform_row_length")

    def __init__(self, values: Any, row_splits: Any, internal: bool = False, uniform_row_length: Any = None) -> None:
        if not internal:
            raise ValueError(
                "RaggedTensor constructor is private; please use one of the factory methods instead "
                "(e.g., RaggedTensor.from_row_lengths())"
            )
        self._values = values
        self._row_splits = row_splits
        self._uniform_row_length = uniform_row_length

    # -- factories --------------------------------------------------------
    @classmethod
    def from_row_splits(cls, values: Any, row_splits: Any, name: Any = None, validate: bool = True) -> RaggedTensor:
        """Row ``i`` is ``values[row_splits[i]:row_splits[i+1]]``."""
        values = _values(values)
        splits = _splits_tensor(row_splits)
        if validate:
            s = _np(splits)
            if s.ndim != 1 or s.size == 0:
                raise ValueError(f"row_splits must be a non-empty vector, got shape {list(s.shape)}")
            if s[0] != 0:
                raise InvalidArgumentError(
                    None,
                    None,
                    "Arguments to from_row_splits do not form a valid "
                    f"RaggedTensor: zero: first row split must be 0, got {s[0]}",
                )
            if np.any(np.diff(s) < 0):
                raise InvalidArgumentError(
                    None,
                    None,
                    "Arguments to from_row_splits do not form a valid "
                    "RaggedTensor: monotonic: row_splits must be sorted in ascending order",
                )
            if s[-1] != _nvals(values):
                raise InvalidArgumentError(
                    None,
                    None,
                    "Arguments to from_row_splits do not form a valid "
                    f"RaggedTensor: nvals: last row split ({s[-1]}) must equal the number "
                    f"of values ({_nvals(values)})",
                )
        return cls(values, splits, internal=True)

    @classmethod
    def from_row_lengths(cls, values: Any, row_lengths: Any, name: Any = None, validate: bool = True) -> RaggedTensor:
        lengths = _np(row_lengths).astype(np.int64).reshape(-1)
        if validate and np.any(lengths < 0):
            raise InvalidArgumentError(
                None,
                None,
                "Arguments to from_row_lengths do not form a valid RaggedTensor: row_lengths must be non-negative",
            )
        return cls.from_row_splits(
            values, np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), validate=validate
        )

    @classmethod
    def from_row_starts(cls, values: Any, row_starts: Any, name: Any = None, validate: bool = True) -> RaggedTensor:
        values = _values(values)
        starts = _np(row_starts).astype(np.int64).reshape(-1)
        return cls.from_row_splits(
            values, np.concatenate([starts, [_nvals(values)]]).astype(np.int64), validate=validate
        )

    @classmethod
    def from_row_limits(cls, values: Any, row_limits: Any, name: Any = None, validate: bool = True) -> RaggedTensor:
        limits = _np(row_limits).astype(np.int64).reshape(-1)
        return cls.from_row_splits(values, np.concatenate([[0], limits]).astype(np.int64), validate=validate)

    @classmethod
    def from_value_rowids(
        cls, values: Any, value_rowids: Any, nrows: Any = None, name: Any = None, validate: bool = True
    ) -> RaggedTensor:
        """``values[j]`` belongs to row ``value_rowids[j]`` (sorted); ``nrows``
        defaults to ``value_rowids[-1] + 1``."""
        ids = _np(value_rowids).astype(np.int64).reshape(-1)
        if validate and np.any(np.diff(ids) < 0):
            raise InvalidArgumentError(
                None,
                None,
                "Arguments to from_value_rowids do not form a valid "
                "RaggedTensor: value_rowids must be sorted in ascending order",
            )
        n = int(_np(nrows)) if nrows is not None else (int(ids[-1]) + 1 if ids.size else 0)
        lengths = np.bincount(ids, minlength=n)[:n] if ids.size else np.zeros(n, np.int64)
        return cls.from_row_lengths(values, lengths, validate=validate)

    @classmethod
    def from_uniform_row_length(
        cls, values: Any, uniform_row_length: Any, nrows: Any = None, validate: bool = True, name: Any = None
    ) -> RaggedTensor:
        values = _values(values)
        k = int(_np(uniform_row_length))
        nv = _nvals(values)
        n = int(_np(nrows)) if nrows is not None else (nv // k if k else 0)
        if validate and k and nv != n * k:
            raise InvalidArgumentError(
                None, None, f"from_uniform_row_length: {nv} values do not split into rows of length {k}"
            )
        rt = cls.from_row_splits(values, np.arange(n + 1, dtype=np.int64) * k, validate=False)
        rt._uniform_row_length = k
        return rt

    @classmethod
    def from_nested_row_splits(
        cls, flat_values: Any, nested_row_splits: Any, name: Any = None, validate: bool = True
    ) -> RaggedTensor:
        if isinstance(nested_row_splits, Tensor):
            raise TypeError("nested_row_splits must be a list of Tensors")
        result = _values(flat_values)
        for splits in reversed(list(nested_row_splits)):
            result = cls.from_row_splits(result, splits, validate=validate)
        return result

    @classmethod
    def from_nested_row_lengths(
        cls, flat_values: Any, nested_row_lengths: Any, name: Any = None, validate: bool = True
    ) -> RaggedTensor:
        result = _values(flat_values)
        for lengths in reversed(list(nested_row_lengths)):
            result = cls.from_row_lengths(result, lengths, validate=validate)
        return result

    @classmethod
    def from_nested_value_rowids(
        cls,
        flat_values: Any,
        nested_value_rowids: Any,
        nested_nrows: Any = None,
        name: Any = None,
        validate: bool = True,
    ) -> RaggedTensor:
        ids = list(nested_value_rowids)
        nrows = list(nested_nrows) if nested_nrows is not None else [None] * len(ids)
        result = _values(flat_values)
        for rowids, n in reversed(list(zip(ids, nrows))):
            result = cls.from_value_rowids(result, rowids, n, validate=validate)
        return result

    @classmethod
    def from_tensor(
        cls,
        tensor: Any,
        lengths: Any = None,
        padding: Any = None,
        ragged_rank: int = 1,
        name: Any = None,
        row_splits_dtype: Any = dtypes.int64,
    ) -> RaggedTensor:
        """Rows of a dense tensor, trimmed to ``lengths`` or by trailing ``padding``."""
        from tapeflow.ops import array_ops, indexing_ops

        t = _values(tensor)
        if not isinstance(t, Tensor):
            raise TypeError(f"from_tensor expects a dense tensor, got {type(t).__name__}")
        shape = t._shape_tuple()
        if ragged_rank < 1 or ragged_rank >= len(shape):
            raise ValueError(
                f"ragged_rank must be between 1 and rank(tensor) - 1 = {len(shape) - 1}, got {ragged_rank}"
            )
        if lengths is not None and padding is not None:
            raise ValueError("Specify argument `lengths` or `padding`, but not both.")
        if lengths is None and padding is None:
            flat = array_ops.reshape(t, (-1,) + tuple(shape[ragged_rank + 1 :]))
            rt = flat
            for level in reversed(range(ragged_rank)):
                n = int(np.prod(shape[: level + 1]))
                rt = cls.from_row_splits(rt, np.arange(n + 1, dtype=np.int64) * shape[level + 1], validate=False)
            return rt
        if ragged_rank != 1:
            raise NotImplementedError("RaggedTensor.from_tensor with lengths or padding and ragged_rank > 1")
        arr = _np(t)
        if padding is not None:
            pad = _np(padding)
            is_pad = arr == pad
            if is_pad.ndim > 2:
                is_pad = is_pad.reshape(is_pad.shape[:2] + (-1,)).all(axis=-1)
            keep = ~is_pad
            width = shape[1]
            # Length = one past the last non-padding element of each row.
            last = np.where(keep.any(axis=1), width - np.argmax(keep[:, ::-1], axis=1), 0)
            lens = last.astype(np.int64)
        else:
            lens = _np(lengths).astype(np.int64).reshape(-1)
        mask = np.arange(shape[1])[None, :] < lens[:, None]
        values = indexing_ops.boolean_mask(t, convert_to_tensor(mask))
        return cls.from_row_lengths(values, lens, validate=False)

    @classmethod
    def from_sparse(cls, st_input: Any, name: Any = None, row_splits_dtype: Any = dtypes.int64) -> RaggedTensor:
        """A 2-D SparseTensor whose indices are in row-major order, as ragged rows."""
        ds = _np(st_input.dense_shape)
        if ds.size != 2:
            raise ValueError(f"rank(st_input) must be 2, got {ds.size}")
        rowids = _np(st_input.indices)[:, 0]
        return cls.from_value_rowids(st_input.values, rowids, int(ds[0]))

    # -- properties -------------------------------------------------------
    @property
    def values(self) -> Any:
        return self._values

    @property
    def row_splits(self) -> Tensor:
        return self._row_splits

    @property
    def flat_values(self) -> Tensor:
        v = self._values
        while isinstance(v, RaggedTensor):
            v = v._values
        return v

    @property
    def nested_row_splits(self) -> tuple:
        out = [self._row_splits]
        v = self._values
        while isinstance(v, RaggedTensor):
            out.append(v._row_splits)
            v = v._values
        return tuple(out)

    @property
    def ragged_rank(self) -> int:
        return len(self.nested_row_splits)

    @property
    def dtype(self) -> dtypes.DType:
        return self.flat_values.dtype

    @property
    def row_splits_dtype(self) -> dtypes.DType:
        return self._row_splits.dtype

    @property
    def uniform_row_length(self) -> Any:
        k = self._uniform_row_length
        return None if k is None else convert_to_tensor(np.int64(k))

    @property
    def shape(self) -> TensorShape:
        """The static shape: ragged dimensions are ``None``."""
        nrows = self._row_splits._shape_tuple()[0]
        dims = [None if nrows is None else nrows - 1]
        v: Any = self
        while isinstance(v, RaggedTensor):
            if v is not self:
                dims.append(v._uniform_row_length)
            else:
                dims.append(self._uniform_row_length)
            v = v._values
        inner = v._shape_tuple()[1:]
        # dims holds nrows, then one entry per ragged level (its uniform length or None).
        return TensorShape(dims + list(inner))

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def ndim(self) -> int:
        return self.shape.rank

    @property
    def device(self) -> str:
        return self.flat_values.device

    @property
    def _type_spec(self) -> RaggedTensorSpec:
        return RaggedTensorSpec(self.shape, self.dtype, self.ragged_rank, self.row_splits_dtype, flat_values_spec=None)

    def _trace_split(self) -> tuple:
        static = tuple((_np(sp).tobytes(), sp._value.dtype.str) for sp in self.nested_row_splits)
        return ("RaggedTensor", static, self._uniform_row_length), [self.flat_values]

    def _trace_rebuild(self, dynamic: list) -> RaggedTensor:
        if isinstance(self._values, RaggedTensor):
            values = self._values._trace_rebuild(dynamic)
        else:
            values = dynamic[0]
        return RaggedTensor(values, self._row_splits, internal=True, uniform_row_length=self._uniform_row_length)

    # -- row partition queries -------------------------------------------
    def nrows_int(self) -> int:
        n = self._row_splits._shape_tuple()[0]
        if n is None:
            raise _symbolic_partition()
        return int(n) - 1

    def _traced_partition(self) -> bool:
        # Row splits that are placeholders (a tf.function traced from a RaggedTensorSpec): answered with ops.
        return not isinstance(self._row_splits._value, np.ndarray | np.generic)

    def nrows(self, out_type: Any = None, name: Any = None) -> Tensor:
        dtype = dtypes.as_dtype(out_type) if out_type else self.row_splits_dtype
        if self._traced_partition():
            from tapeflow.ops import shape_ops

            return shape_ops.shape(self._row_splits, out_type=dtype)[0] - 1
        return convert_to_tensor(np.asarray(self.nrows_int(), dtype=dtype._np))

    def row_starts(self, name: Any = None) -> Tensor:
        if self._traced_partition():
            return self._row_splits[:-1]
        return convert_to_tensor(_np(self._row_splits)[:-1])

    def row_limits(self, name: Any = None) -> Tensor:
        if self._traced_partition():
            return self._row_splits[1:]
        return convert_to_tensor(_np(self._row_splits)[1:])

    def value_rowids(self, name: Any = None) -> Tensor:
        return convert_to_tensor(_rowids(_np(self._row_splits)))

    def nested_value_rowids(self, name: Any = None) -> tuple:
        return tuple(convert_to_tensor(_rowids(_np(s))) for s in self.nested_row_splits)

    def row_lengths(self, axis: int = 1, name: Any = None) -> Any:
        """Lengths of the rows of dimension ``axis`` (ragged for ``axis > 1``)."""
        if axis == 0:
            return self.nrows()
        if axis < 0:
            axis += self.shape.rank
        if axis == 1:
            if self._traced_partition():
                return self._row_splits[1:] - self._row_splits[:-1]
            return convert_to_tensor(np.diff(_np(self._row_splits)))
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.row_lengths(axis - 1))
        # A uniform (dense) dimension of flat_values.
        inner = self._values._shape_tuple()[axis - 1]
        lens = np.full(_nvals(self._values), inner, np.int64)
        return self.with_values(convert_to_tensor(lens))

    def nested_row_lengths(self, name: Any = None) -> tuple:
        return tuple(convert_to_tensor(np.diff(_np(s))) for s in self.nested_row_splits)

    def bounding_shape(self, axis: Any = None, name: Any = None, out_type: Any = None) -> Tensor:
        """The smallest dense shape holding every row (int64, or the row splits' dtype)."""
        dims = [self.nrows_int()]
        v: Any = self
        while isinstance(v, RaggedTensor):
            lens = np.diff(_np(v._row_splits))
            dims.append(int(lens.max()) if lens.size else 0)
            v = v._values
        dims.extend(v._shape_tuple()[1:])
        out = np.asarray(dims, dtype=(dtypes.as_dtype(out_type) if out_type else self.row_splits_dtype)._np)
        if axis is not None:
            out = out[axis]
        return convert_to_tensor(out)

    # -- rebuilding -------------------------------------------------------
    def with_values(self, new_values: Any) -> RaggedTensor:
        return RaggedTensor(
            _values(new_values), self._row_splits, internal=True, uniform_row_length=self._uniform_row_length
        )

    def with_flat_values(self, new_values: Any) -> RaggedTensor:
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    def with_row_splits_dtype(self, dtype: Any) -> RaggedTensor:
        dtype = dtypes.as_dtype(dtype)
        splits = convert_to_tensor(_np(self._row_splits).astype(dtype._np))
        values = self._values.with_row_splits_dtype(dtype) if isinstance(self._values, RaggedTensor) else self._values
        return RaggedTensor(values, splits, internal=True, uniform_row_length=self._uniform_row_length)

    def merge_dims(self, outer_axis: int, inner_axis: int) -> Any:
        if (outer_axis, inner_axis) == (0, 1) or (
            outer_axis == 0 and inner_axis == -1 and self.ragged_rank == 1 and self.shape.rank == 2
        ):
            return self._values
        if outer_axis == 0 and inner_axis in (-1, self.shape.rank - 1) and self.ragged_rank + 1 == self.shape.rank:
            return self.flat_values
        raise NotImplementedError(
            f"RaggedTensor.merge_dims({outer_axis}, {inner_axis}) in tapeflow (only merging the outermost dimensions)"
        )

    # -- conversion -------------------------------------------------------
    def to_tensor(self, default_value: Any = None, name: Any = None, shape: Any = None) -> Tensor:
        """A dense tensor padded with ``default_value`` (zero / empty string by default)."""
        from tapeflow.ops import array_ops, indexing_ops

        flat = self.flat_values
        if self._traced_partition() and shape is None and self.shape.rank == 2:
            # the partition is known when the graph runs (a ragged tensor made inside a tf.function): one op
            from tapeflow.ops.lookup_ops import rows_to_dense

            if flat._value.dtype.kind in "fc":  # (that op has no gradient)
                raise NotImplementedError("RaggedTensor.to_tensor of float values whose row partition is made "
                                          "inside a tf.function (no gradient for it in tapeflow yet)")
            default = (b"" if flat._value.dtype.kind == "O" else 0) if default_value is None else default_value
            return rows_to_dense(flat, self._row_splits, default)
        idx = _value_indices(self)
        bshape = [int(d) for d in _np(self.bounding_shape())]
        if shape is not None:
            want = TensorShape(shape)
            if want.rank is not None:
                if want.rank != len(bshape):
                    raise ValueError(f"shape {want} does not match the rank of the ragged tensor ({len(bshape)})")
                bshape = [b if d is None else d for b, d in zip(bshape, want.as_list())]
        nidx = idx.shape[1]
        keep = np.all(idx < np.asarray(bshape[:nidx])[None, :], axis=1) if idx.size else np.ones(0, bool)
        if shape is not None and not keep.all():
            flat = array_ops.gather(flat, convert_to_tensor(np.nonzero(keep)[0]))
            idx = idx[keep]
        if bshape[nidx:] != list(flat._shape_tuple()[1:]):
            raise NotImplementedError("RaggedTensor.to_tensor with a shape that changes the uniform inner dims")
        if default_value is None:
            default = b"" if flat._value.dtype.kind == "O" else 0
        else:
            default = default_value.encode() if isinstance(default_value, str) else default_value
        base = array_ops.fill(bshape, convert_to_tensor(default, dtype=flat.dtype))
        if not idx.size:
            return base
        return indexing_ops.tensor_scatter_nd_update(base, convert_to_tensor(idx), flat)

    def to_sparse(self, name: Any = None) -> Any:
        from tapeflow.framework.sparse_tensor import SparseTensor

        flat = self.flat_values
        if len(flat._shape_tuple()) != 1:
            raise NotImplementedError("RaggedTensor.to_sparse with uniform inner dimensions in tapeflow")
        return SparseTensor(
            convert_to_tensor(_value_indices(self)),
            flat,
            convert_to_tensor(_np(self.bounding_shape()).astype(np.int64)),
        )

    def to_list(self) -> list:
        """The rows as nested Python lists."""
        values = self._values.to_list() if isinstance(self._values, RaggedTensor) else _np(self._values).tolist()
        s = _np(self._row_splits).tolist()
        return [values[s[i] : s[i + 1]] for i in range(len(s) - 1)]

    def numpy(self) -> np.ndarray:
        """As TF: a NumPy array of rows (``dtype=object`` when their lengths differ)."""
        values = self._values.numpy()
        splits = _np(self._row_splits)
        rows = [values[splits[i] : splits[i + 1]] for i in range(len(splits) - 1)]
        if not rows:
            return np.zeros((0, 0) + values.shape[1:], dtype=values.dtype)
        if any(len(r) != len(rows[0]) for r in rows):
            out = np.empty(len(rows), dtype=object)
            for i, r in enumerate(rows):
                out[i] = r
            return out
        return np.array(rows)

    def _is_eager(self) -> bool:
        from tapeflow.framework.tensor import AbstractValue  # a traced graph's tensors hold AbstractValues

        return not isinstance(getattr(self.flat_values, "_value", None), AbstractValue)

    def __repr__(self) -> str:
        if not self._is_eager():
            return f"tf.RaggedTensor(values={self._values!s}, row_splits={self._row_splits!s})"
        with np.printoptions(formatter={"all": _formatter}):
            text = _formatter(self.numpy())
        return f"<tf.RaggedTensor {text}>"

    __str__ = __repr__

    def __bool__(self) -> bool:
        raise TypeError("RaggedTensor may not be used as a boolean.")

    def __hash__(self):
        raise TypeError("RaggedTensor is unhashable. Instead, use tensor.ref() as the key.")

    def ref(self) -> Any:
        from tapeflow.framework.tensor import Reference

        return Reference(self)

    def __getitem__(self, key: Any) -> Any:
        from tapeflow.ops.ragged import ragged_ops

        return ragged_ops.getitem(self, key)

    def __iter__(self):
        return iter([self[i] for i in range(self.nrows_int())])

    def consumers(self):
        raise NotImplementedError("RaggedTensor.consumers() (graph mode only in TF)")


def _formatter(x: Any) -> str:
    """Separates NumPy array elements with commas, as TF prints ragged rows."""
    if isinstance(x, np.ndarray):
        if x.size != 0:
            return np.array2string(x, separator=", ")
        return repr(x.tolist())
    return str(x)


def _rowids(splits: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(len(splits) - 1, dtype=np.int64), np.diff(splits))


def _value_indices(rt: RaggedTensor) -> np.ndarray:
    """For each of ``rt.flat_values``'s rows, its index in ``rt.to_tensor()``'s
    leading ``ragged_rank + 1`` dimensions."""
    idx = np.arange(rt.nrows_int(), dtype=np.int64)[:, None]
    for s in rt.nested_row_splits:
        s = _np(s)
        rowids = _rowids(s)
        pos = np.arange(s[-1], dtype=np.int64) - s[rowids]
        idx = np.concatenate([idx[rowids], pos[:, None]], axis=1)
    return idx


register_composite(RaggedTensor)


class RaggedTensorSpec(TypeSpec):
    """The type of a RaggedTensor: shape (ragged dims ``None``), dtype and ragged rank."""

    value_type = RaggedTensor

    def __init__(
        self,
        shape: Any = None,
        dtype: Any = dtypes.float32,
        ragged_rank: int | None = None,
        row_splits_dtype: Any = dtypes.int64,
        flat_values_spec: Any = None,
    ) -> None:
        self._shape = TensorShape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._row_splits_dtype = dtypes.as_dtype(row_splits_dtype)
        rank = self._shape.rank
        if ragged_rank is None:
            if rank is None:
                raise ValueError("Must specify ragged_rank or a shape with a known rank.")
            ragged_rank = rank - 1
        if rank is not None and not 0 <= ragged_rank < max(rank, 1):
            raise ValueError(f"ragged_rank must be non-negative and less than rank {rank}, got {ragged_rank}")
        self._ragged_rank = ragged_rank
        self._flat_values_spec = flat_values_spec

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def ragged_rank(self) -> int:
        return self._ragged_rank

    @property
    def row_splits_dtype(self) -> dtypes.DType:
        return self._row_splits_dtype

    @property
    def flat_values_spec(self) -> Any:
        return self._flat_values_spec

    def _serialize(self) -> tuple:
        return (self._shape, self._dtype, self._ragged_rank, self._row_splits_dtype)

    def __reduce__(self):
        return RaggedTensorSpec, self._serialize()

    @property
    def _component_specs(self) -> tuple:
        from tapeflow.framework.tensor_spec import TensorSpec

        dims = None if self._shape.rank is None else self._shape.as_list()
        inner = None if dims is None else [None] + dims[self._ragged_rank + 1 :]
        specs = [TensorSpec(inner, self._dtype)]
        specs += [TensorSpec([None], self._row_splits_dtype) for _ in range(self._ragged_rank)]
        return tuple(specs)

    def _to_components(self, value: Any) -> tuple:
        if isinstance(value, RaggedTensor):
            return (value.flat_values,) + value.nested_row_splits
        return (value,)

    def _from_components(self, components: Any) -> Any:
        components = list(components)
        if self._ragged_rank == 0:
            return components[0]
        result = components[0]
        for splits in reversed(components[1:]):
            result = RaggedTensor(result, splits, internal=True)
        return result

    def is_compatible_with(self, spec_or_value: Any) -> bool:
        other = spec_or_value if isinstance(spec_or_value, TypeSpec) else getattr(spec_or_value, "_type_spec", None)
        if not isinstance(other, RaggedTensorSpec):
            return False
        return (
            self._dtype == other._dtype
            and self._ragged_rank == other._ragged_rank
            and self._row_splits_dtype == other._row_splits_dtype
            and self._shape.is_compatible_with(other._shape)
        )

    def most_specific_compatible_type(self, other: Any) -> RaggedTensorSpec:
        if not self.is_compatible_with(other):
            raise ValueError(f"No TypeSpec is compatible with both {self} and {other}")
        return RaggedTensorSpec(
            self._shape.most_specific_compatible_shape(other._shape),
            self._dtype,
            self._ragged_rank,
            self._row_splits_dtype,
        )

    @classmethod
    def from_value(cls, value: RaggedTensor) -> RaggedTensorSpec:
        return value._type_spec

    def __repr__(self) -> str:
        return f"RaggedTensorSpec({self._shape!r}, {self._dtype!r}, {self._ragged_rank}, {self._row_splits_dtype!r})"
