"""Ragged and sparse tensors inside ``tf.data`` pipelines.

The pipeline handles NumPy arrays; a ragged or sparse component travels as a
:class:`CompositeLeaf`, which knows how to take one row (``leaf[i]``), gather
a batch of rows (``leaf[idx]``) and stack elements back into a batch, as TF
does for a component whose spec is a ``RaggedTensorSpec``/``SparseTensorSpec``.
A ragged row of ragged rank 0 (a dense row of a ragged batch) stays a leaf, so
that batching it again gives a RaggedTensor.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework.tensor import Tensor, convert_to_tensor


class CompositeLeaf:
    """One ragged (``kind="ragged"``) or sparse (``kind="sparse"``) component."""

    __slots__ = ("value", "kind")

    def __init__(self, value: Any, kind: str) -> None:
        self.value = value
        self.kind = kind

    @classmethod
    def of(cls, value: Any) -> CompositeLeaf:
        from tapeflow.framework.sparse_tensor import SparseTensor

        return cls(value, "sparse" if isinstance(value, SparseTensor) else "ragged")

    # -- what the pipeline asks of a leaf ------------------------------------
    @property
    def shape(self) -> tuple:
        if self.kind == "sparse":
            return tuple(int(d) for d in np.asarray(self.value.dense_shape.numpy()))
        return tuple(self.value.shape.as_list())

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def dtype(self) -> np.dtype:
        return (
            self.value.dtype.as_numpy_dtype
            if hasattr(self.value.dtype, "as_numpy_dtype")
            else np.dtype(self.value.dtype._np)
        )

    def tensor(self) -> Any:
        """The value the user sees."""
        return self.value

    def __getitem__(self, i: Any) -> CompositeLeaf:
        if self.kind == "sparse":
            return CompositeLeaf(_sparse_rows(self.value, i), "sparse")
        from tapeflow.ops.ragged import ragged_ops
        from tapeflow.ops.ragged.ragged_tensor import RaggedTensor

        rt = self.value
        if not isinstance(rt, RaggedTensor):  # a dense row: index it as a tensor
            return CompositeLeaf(rt[i] if not isinstance(i, np.ndarray) else _gather(rt, i), "ragged")
        if isinstance(i, (np.ndarray, list)):
            return CompositeLeaf(ragged_ops._gather_rows(rt, np.asarray(i, np.int64)), "ragged")
        return CompositeLeaf(rt[int(i)], "ragged")

    def spec(self, batch_unknown: bool = False) -> Any:
        from tapeflow.framework.sparse_tensor import SparseTensorSpec
        from tapeflow.framework.tensor_shape import TensorShape
        from tapeflow.ops.ragged.ragged_tensor import RaggedTensor, RaggedTensorSpec

        dims = list(self.shape)
        if (batch_unknown or self.kind == "ragged") and dims:
            dims[0] = None  # (a ragged row's length is a ragged dimension)
        if self.kind == "sparse":
            return SparseTensorSpec(TensorShape(dims), self.value.dtype)
        rr = self.value.ragged_rank if isinstance(self.value, RaggedTensor) else 0
        return RaggedTensorSpec(TensorShape(dims), self.value.dtype, rr)


def _gather(t: Tensor, idx: np.ndarray) -> Tensor:
    from tapeflow.ops import array_ops

    return array_ops.gather(t, convert_to_tensor(np.asarray(idx, np.int64)))


def _sparse_rows(sp: Any, i: Any) -> Any:
    """Row ``i`` (rank - 1) or rows ``i`` (a batch) of a SparseTensor."""
    from tapeflow.framework.sparse_tensor import SparseTensor

    idx = np.asarray(sp.indices.numpy())
    vals = np.asarray(sp.values.numpy())
    shape = [int(d) for d in np.asarray(sp.dense_shape.numpy())]
    if isinstance(i, (np.ndarray, list)):
        rows = np.asarray(i, np.int64).reshape(-1)
        parts_i, parts_v = [], []
        for j, r in enumerate(rows):
            m = idx[:, 0] == r
            sub = idx[m].copy()
            sub[:, 0] = j
            parts_i.append(sub)
            parts_v.append(vals[m])
        new_idx = np.concatenate(parts_i) if parts_i else np.zeros((0, len(shape)), np.int64)
        new_vals = np.concatenate(parts_v) if parts_v else vals[:0]
        return SparseTensor(new_idx, convert_to_tensor(new_vals), [len(rows)] + shape[1:])
    m = idx[:, 0] == int(i)
    return SparseTensor(idx[m][:, 1:], convert_to_tensor(vals[m]), shape[1:])


def stack(leaves: list) -> CompositeLeaf:
    """A batch of ragged/sparse elements (``dataset.batch``)."""
    from tapeflow.framework.sparse_tensor import SparseTensor
    from tapeflow.ops import array_ops
    from tapeflow.ops.ragged import ragged_ops
    from tapeflow.ops.ragged.ragged_tensor import RaggedTensor

    values = [x.value if isinstance(x, CompositeLeaf) else x for x in leaves]
    if isinstance(values[0], SparseTensor):
        shapes = [[int(d) for d in np.asarray(v.dense_shape.numpy())] for v in values]
        out_shape = [len(values)] + [max(s[d] for s in shapes) for d in range(len(shapes[0]))]
        idx = [
            np.concatenate([np.full((len(v.indices.numpy()), 1), j), np.asarray(v.indices.numpy())], axis=1)
            for j, v in enumerate(values)
        ]
        vals = array_ops.concat([v.values for v in values], 0)
        return CompositeLeaf(SparseTensor(np.concatenate(idx).astype(np.int64), vals, out_shape), "sparse")
    if isinstance(values[0], RaggedTensor):
        return CompositeLeaf(ragged_ops.stack(values, axis=0), "ragged")
    ts = [v if isinstance(v, Tensor) else convert_to_tensor(v) for v in values]
    if any(not t._shape_tuple() for t in ts):
        raise ValueError("Cannot batch ragged scalars into a RaggedTensor")
    lens = [t._shape_tuple()[0] for t in ts]
    return CompositeLeaf(RaggedTensor.from_row_lengths(array_ops.concat(ts, 0), lens, validate=False), "ragged")


def to_ragged_row(a: Any) -> Any:
    """A dense component marked ragged (``ragged_batch``): batching stacks it ragged."""
    if isinstance(a, CompositeLeaf):
        return a
    return CompositeLeaf(convert_to_tensor(a), "ragged")
