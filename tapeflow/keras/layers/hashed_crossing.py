"""Keras 3's ``HashedCrossing``: feature crosses of categorical inputs hashed into ``num_bins`` bins."""

from __future__ import annotations

from typing import Any

from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.keras.layers.base import Layer
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo

__all__ = ["HashedCrossing", "sparse_one_hot"]


def sparse_one_hot(ids: Tensor, depth: int, dtype: Any) -> Any:
    """Keras's TF-backend ``ops.one_hot(ids, depth, sparse=True)``: a ``SparseTensor`` with one entry per id
    (``1``, or an explicit ``0`` at class 0 for a negative id), the classes as a new last axis."""
    from tapeflow.ops import indexing_ops
    from tapeflow.ops.sparse import SparseTensor

    ids = mo.cast(ids, "int64")
    shape = list(ids._shape_tuple())
    if any(d is None for d in shape):
        shape = [ao.shape(ids, out_type="int64")[i] for i in range(len(shape))]
    values = mo.cast(ao.reshape(ids, [-1]) >= 0, dtype)
    grids = indexing_ops.meshgrid(*[ao.range_(0, d, 1, dtype="int64") for d in shape], indexing="ij")
    columns = [ao.reshape(g, [-1, 1]) for g in grids] + [ao.reshape(mo.maximum(ids, 0), [-1, 1])]
    return SparseTensor(ao.concat(columns, axis=1), values, ao.stack([mo.cast(d, "int64") for d in shape]
                                                                     + [mo.cast(depth, "int64")]))


class HashedCrossing(Layer):
    """Crosses two or more categorical features (int or string tensors of shape ``()``, ``(batch,)`` or
    ``(batch, 1)``, one value per example each) and hashes each cross into ``num_bins`` bins with TF's
    ``tf.sparse.cross_hashed`` (the same bins as Keras 3 with TensorFlow):

    >>> layer = tf.keras.layers.HashedCrossing(num_bins=5)
    >>> layer((np.array([1, 2, 3, 4]), np.array(["A", "B", "A", "C"]))).numpy()
    array([2, 3, 1, 0])

    ``output_mode="int"`` gives the bin ids (int64), ``"one_hot"`` their one-hot encoding (the layer's float
    dtype), a ``tf.SparseTensor`` with ``sparse=True``.
    """

    _allow_non_tensor_positional_args = True
    _keras_built_at_init = True
    _autocast = False

    def __init__(self, num_bins: int, output_mode: str = "int", sparse: bool = False, name: str | None = None,
                 dtype: Any = None, **kwargs: Any) -> None:
        if output_mode == "int" and dtype is None:
            dtype = "int64"
        super().__init__(name=name, dtype=dtype, **kwargs)
        if output_mode not in ("int", "one_hot"):
            raise ValueError("The `output_mode` argument of HashedCrossing should be one of 'int', 'one_hot'. "
                             f"Received: output_mode={output_mode}")
        self.num_bins, self.output_mode, self.sparse = num_bins, output_mode, sparse

    def _convert(self, x: Any) -> Any:
        return x  # as Keras (`_convert_input_args = False`): the inputs keep their dtypes

    def call(self, inputs: Any) -> Tensor:
        from tapeflow.framework import dtypes
        from tapeflow.ops.cross_ops import sparse_cross_hashed_dense

        if not isinstance(inputs, (list, tuple)):
            raise ValueError(f"`HashedCrossing` should be called on a list or tuple of inputs. Received: "
                             f"inputs={inputs}")
        if len(inputs) < 2:
            raise ValueError(f"`HashedCrossing` should be called on at least two inputs. Received: inputs={inputs}")
        ts = [x if isinstance(x, Tensor) else convert_to_tensor(x) for x in inputs]
        first = tuple(ts[0]._shape_tuple())
        rank = len(first)
        if rank > 2 or (rank == 2 and first[-1] != 1):
            raise ValueError("All `HashedCrossing` inputs should have shape `()`, `(batch_size)` or "
                             f"`(batch_size, 1)`. Received: inputs={ts}")
        if not all(tuple(t._shape_tuple()) == first for t in ts[1:]):
            raise ValueError(f"All `HashedCrossing` inputs should have equal shape. Received: inputs={ts}")
        ts = [t if t.dtype == dtypes.string else mo.cast(t, "int64") for t in ts]
        for _ in range(2 - rank):
            ts = [ao.expand_dims(t, -1) for t in ts]
        indices, values, shape = sparse_cross_hashed_dense(ts, self.num_bins)
        outputs = ao.reshape(values, [-1, 1])
        if rank == 1:
            outputs = ao.squeeze(outputs, [1])
        elif rank == 0:
            outputs = ao.reshape(outputs, [])
        if self.output_mode == "one_hot":
            from tapeflow.ops.indexing_ops import one_hot

            if rank == 0:  # Keras's encode_categorical_inputs upranks a scalar to one sample
                outputs = ao.reshape(outputs, [1])
            if rank == 2:  # ... and drops the last axis of 1
                outputs = ao.squeeze(outputs, [-1])
            if self.sparse:
                return sparse_one_hot(outputs, self.num_bins, self.compute_dtype)
            return one_hot(outputs, self.num_bins, dtype=self.compute_dtype)
        return mo.cast(outputs, self.dtype)

    def _symbolic_outputs(self, args: tuple, kwargs: dict) -> Any:
        if not (self.sparse and self.output_mode == "one_hot"):
            return super()._symbolic_outputs(args, kwargs)
        from tapeflow.keras.layers.base import KerasTensor

        self.built = True  # as Keras: the output spec of compute_output_shape (Keras marks it dense)
        shapes = tuple(tuple(x.shape) for x in args[0])
        return KerasTensor(self.compute_output_shape(shapes), self.compute_dtype)

    def compute_output_shape(self, input_shape: Any) -> Any:
        if (len(input_shape) != 2 or not isinstance(input_shape[0], tuple)
                or not isinstance(input_shape[1], tuple)):
            raise ValueError(f"Expected as input a list/tuple of 2 tensors. Received input_shape={input_shape}")
        if input_shape[0][-1] != input_shape[1][-1]:
            raise ValueError(f"Expected the two input tensors to have identical shapes. Received "
                             f"input_shape={input_shape}")
        if self.output_mode == "int":
            return tuple(input_shape[0])
        if input_shape[0] and input_shape[0][-1] != 1:
            return tuple(input_shape[0]) + (self.num_bins,)
        return tuple(input_shape[0])[:-1] + (self.num_bins,)

    def get_config(self) -> dict:
        return {"num_bins": self.num_bins, "output_mode": self.output_mode, "sparse": self.sparse,
                "name": self.name, "dtype": self.dtype}
