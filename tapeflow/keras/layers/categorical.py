"""Keras 3.15's categorical preprocessing layers: ``CategoryEncoding``, ``Hashing``, ``Discretization``.

``CategoryEncoding`` one-/multi-hot encodes or counts integer ids; ``Hashing`` buckets strings (or
numbers, as their decimal strings) with TF's FarmHash64 (``salt``: SipHash-2-4) as
``tf.strings.to_hash_bucket_fast``/``_strong``; ``Discretization`` buckets floats by boundaries,
given or learned by ``adapt`` with Keras's quantile summaries (the same NumPy steps, so the same
boundaries).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.keras.layers.base import KerasTensor, Layer
from tapeflow.keras.saving.serialization import base_config
from tapeflow.keras.layers.index_lookup import _validate_string_arg, adapt_batches, encode_categorical

__all__ = ["CategoryEncoding", "Hashing", "Discretization"]


def _tensor(x: Any) -> Any:
    if isinstance(x, Tensor) or hasattr(x, "flat_values"):
        return x
    return convert_to_tensor(x)


class CategoryEncoding(Layer):
    """Encodes integer ids in ``[0, num_tokens)``: ``"one_hot"`` per id, ``"multi_hot"`` or ``"count"``
    (weighted by ``count_weights``) per sample, in the layer's dtype (float32)."""

    _data_layer = True  # Keras 3 DataLayer: in a TF graph, inputs in the compute dtype first
    _allow_non_tensor_positional_args = True
    _autocast = False

    def __init__(
        self, num_tokens: int | None = None, output_mode: str = "multi_hot", sparse: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode not in ("count", "one_hot", "multi_hot"):
            raise ValueError(f"Unknown arg for output_mode: {output_mode}")
        if num_tokens is None:
            raise ValueError(
                "num_tokens must be set to use this layer. If the number of tokens is not known "
                "beforehand, use the IntegerLookup layer instead."
            )
        if num_tokens < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        self.num_tokens = num_tokens
        self.output_mode = output_mode
        self.sparse = sparse

    def compute_output_shape(self, input_shape: Any) -> tuple:
        input_shape = tuple(input_shape)
        if len(input_shape) == 0:
            return (self.num_tokens,)
        if self.output_mode == "one_hot":
            if input_shape[-1] != 1 or len(input_shape) == 1:
                return input_shape + (self.num_tokens,)
            return input_shape[:-1] + (self.num_tokens,)
        return input_shape[:-1] + (self.num_tokens,)

    def _symbolic_outputs(self, args: tuple, kwargs: dict) -> Any:
        self.built = True
        out = KerasTensor(self.compute_output_shape(args[0].shape), self.compute_dtype)
        out.sparse = bool(self.sparse)
        return out

    def call(self, inputs: Any, count_weights: Any = None) -> Tensor:
        from tapeflow.ops import math_ops, special_ops

        inputs = _tensor(inputs)
        if self.sparse:
            return self._sparse_call(inputs, count_weights)
        if count_weights is not None:
            if self.output_mode != "count":
                raise ValueError(
                    "`count_weights` is not used when `output_mode` is not `'count'`. "
                    f"Received `count_weights={count_weights}`."
                )
            weights = math_ops.cast(_tensor(count_weights), self.compute_dtype)
            if inputs.shape.rank in (1, 2):  # Keras's bincount fast path, weighted
                return math_ops.cast(
                    special_ops.bincount(
                        inputs,
                        weights=weights,
                        minlength=self.num_tokens,
                        maxlength=self.num_tokens,
                        dtype=self.compute_dtype,
                        axis=-1,
                    ),
                    self.compute_dtype,
                )
            raise NotImplementedError("CategoryEncoding count_weights for inputs of rank > 2 in tapeflow")
        return math_ops.cast(
            encode_categorical(inputs, self.output_mode, self.num_tokens, self.compute_dtype), self.compute_dtype
        )

    def _sparse_call(self, inputs: Tensor, count_weights: Any) -> Any:
        """``sparse=True``: a ``SparseTensor`` (Keras's TF path: ``tf.sparse.bincount`` with ``num_tokens`` as
        the depth for ``multi_hot``/``count``, a sparse one-hot per id for ``one_hot``)."""
        from tapeflow.ops import array_ops, math_ops
        from tapeflow.ops import sparse as sparse_ops

        if count_weights is not None and self.output_mode != "count":
            raise ValueError(
                "`count_weights` is not used when `output_mode` is not `'count'`. "
                f"Received `count_weights={count_weights}`."
            )
        rank = inputs.shape.rank
        if rank == 0:
            inputs, rank = array_ops.reshape(inputs, [1]), 1
        if self.output_mode == "one_hot":
            if rank > 1 and inputs.shape[-1] == 1:
                inputs = array_ops.squeeze(inputs, -1)
            return sparse_ops.from_dense(encode_categorical(inputs, "one_hot", self.num_tokens, self.compute_dtype))
        if rank > 2:
            raise NotImplementedError("CategoryEncoding(sparse=True) of inputs of rank > 2 in tapeflow")
        weights = None if count_weights is None else math_ops.cast(_tensor(count_weights), self.compute_dtype)
        counts = sparse_ops.bincount(inputs, weights=weights, minlength=self.num_tokens, maxlength=self.num_tokens,
                                     axis=-1, binary_output=self.output_mode == "multi_hot")
        return sparse_ops.SparseTensor(counts.indices, math_ops.cast(counts.values, self.compute_dtype),
                                       counts.dense_shape)  # min = max length: [rows, num_tokens]

    def get_config(self) -> dict:
        return {
            **base_config(self),
            "num_tokens": self.num_tokens,
            "output_mode": self.output_mode,
        }


class Hashing(Layer):
    """Hashes strings (or integers/floats, through their decimal strings) into ``num_bins`` bins with
    TF's FarmHash64 (SipHash-2-4 keyed by ``salt``); ``mask_value`` gets bin 0 and the others ``1..``."""

    _allow_non_tensor_positional_args = True
    _autocast = False

    def __init__(
        self,
        num_bins: int,
        mask_value: Any = None,
        salt: Any = None,
        output_mode: str = "int",
        sparse: bool = False,
        **kwargs: Any,
    ) -> None:
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else "float32"
        super().__init__(**kwargs)
        if num_bins is None or num_bins <= 0:
            raise ValueError(
                f"The `num_bins` for `Hashing` cannot be `None` or non-positive values. Received: num_bins={num_bins}."
            )
        if output_mode == "int" and self.dtype_policy.name not in ("int32", "int64"):
            raise ValueError(
                "When `output_mode=\"int\"`, `dtype` should be an integer type, 'int32' or 'in64'. "
                f"Received: dtype={kwargs['dtype']}"
            )
        accepted = ("int", "one_hot", "multi_hot", "count")
        if output_mode not in accepted:
            raise ValueError(
                f"Invalid value for argument `output_mode`. Expected one of {accepted}. "
                f"Received: output_mode={output_mode}"
            )
        if sparse and output_mode == "int":
            raise ValueError(
                '`sparse` may only be true if `output_mode` is `"one_hot"`, `"multi_hot"`, or `"count"`. '
                f"Received: sparse={sparse} and output_mode={output_mode}"
            )
        self.num_bins = num_bins
        self.mask_value = mask_value
        self.strong_hash = salt is not None
        self.output_mode = output_mode
        self.sparse = sparse
        self.salt = None
        if salt is not None:
            if isinstance(salt, (tuple, list)) and len(salt) == 2:
                self.salt = list(salt)
            elif isinstance(salt, int):
                self.salt = [salt, salt]
            else:
                raise ValueError(
                    "The `salt` argument for `Hashing` can only be a tuple of size 2 integers, or a "
                    f"single integer. Received: salt={salt}."
                )

    def compute_output_shape(self, input_shape: Any) -> tuple:
        if self.output_mode == "int":
            return tuple(input_shape)
        if len(input_shape) == 0:
            return (self.num_bins,)
        return tuple(input_shape)[:-1] + (self.num_bins,)

    def _symbolic_outputs(self, args: tuple, kwargs: dict) -> Any:
        self.built = True
        out = KerasTensor(self.compute_output_shape(args[0].shape), self.compute_dtype)
        out.sparse = False  # as Keras 3.15: Hashing's output spec says dense even with sparse=True
        return out

    def _hash_values_to_bins(self, values: Tensor) -> Tensor:
        from tapeflow.framework import dtypes
        from tapeflow.ops import math_ops, string_ops

        hash_bins = self.num_bins
        mask = None
        if self.mask_value is not None and hash_bins > 1:
            hash_bins -= 1
            mask = math_ops.equal(values, convert_to_tensor(self.mask_value, dtype=values.dtype))
        if values.dtype.is_floating:
            values = math_ops.cast(values, "int64")
        if values.dtype != dtypes.string:
            values = string_ops.as_string(values)
        if self.strong_hash:
            values = string_ops.to_hash_bucket_strong(values, hash_bins, key=self.salt)
        else:
            values = string_ops.to_hash_bucket_fast(values, hash_bins)
        if mask is not None:
            values = math_ops.where(mask, np.int64(0), values + np.int64(1))
        return values

    def call(self, inputs: Any) -> Tensor:
        from tapeflow.ops import array_ops, math_ops

        inputs = _tensor(inputs)
        if self.output_mode == "one_hot" and inputs.shape.rank and inputs.shape[-1] == 1:
            inputs = array_ops.squeeze(inputs, axis=-1)
        if hasattr(inputs, "flat_values"):
            indices = inputs.with_flat_values(self._hash_values_to_bins(inputs.flat_values))
        else:
            indices = self._hash_values_to_bins(inputs)
        if self.sparse and not hasattr(indices, "flat_values"):
            return self._sparse_encode(indices)
        out = encode_categorical(indices, self.output_mode, self.num_bins, self.compute_dtype)
        return out if hasattr(out, "flat_values") else math_ops.cast(out, self.compute_dtype)

    def _sparse_encode(self, ids: Tensor) -> Any:
        """``sparse=True``, as Keras's TF path: a sparse one-hot per id, or ``tf.sparse.bincount`` over the last
        axis (``num_bins`` wide) for ``multi_hot``/``count``; a scalar is one sample."""
        from tapeflow.keras.layers.hashed_crossing import sparse_one_hot
        from tapeflow.ops import array_ops, math_ops
        from tapeflow.ops import sparse as sparse_ops

        if ids.shape.rank == 0:
            ids = array_ops.reshape(ids, [1])
        if self.output_mode == "one_hot":
            return sparse_one_hot(ids, self.num_bins, self.compute_dtype)
        if ids.shape.rank > 2:
            raise NotImplementedError("Hashing(sparse=True) of inputs of rank > 2 in tapeflow")
        counts = sparse_ops.bincount(ids, minlength=self.num_bins, maxlength=self.num_bins, axis=-1,
                                     binary_output=self.output_mode == "multi_hot")
        return sparse_ops.SparseTensor(counts.indices, math_ops.cast(counts.values, self.compute_dtype),
                                       counts.dense_shape)

    def get_config(self) -> dict:
        return {
            **base_config(self),
            "num_bins": self.num_bins,
            "salt": self.salt,
            "mask_value": self.mask_value,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
        }


class Discretization(Layer):
    """Buckets floats: ``bin_boundaries`` ``[b0, b1, ...]`` give bin ``i`` for ``b(i-1) <= x < b(i)`` (int32),
    or ``num_bins`` learned by ``adapt`` as approximate quantiles (Keras's summaries, ``epsilon``);
    ``output_mode`` ``"one_hot"``/``"multi_hot"``/``"count"`` encodes the bins (float32)."""

    _data_layer = True  # Keras 3 DataLayer: in a TF graph, inputs in the compute dtype first
    _allow_non_tensor_positional_args = True
    _autocast = False

    def __init__(
        self,
        bin_boundaries: Any = None,
        num_bins: int | None = None,
        epsilon: float = 0.01,
        output_mode: str = "int",
        sparse: bool = False,
        dtype: Any = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs.pop("trainable", None)
        super().__init__(name=name, dtype=dtype, **kwargs)
        if sparse and output_mode == "int":
            raise ValueError(
                "`sparse=True` may only be used if `output_mode` is `'one_hot'`, `'multi_hot'`, or "
                f"`'count'`. Received: sparse={sparse} and output_mode={output_mode}"
            )
        if sparse:
            raise NotImplementedError("Discretization(sparse=True) (SparseTensor outputs) in tapeflow")
        _validate_string_arg(output_mode, ("int", "one_hot", "multi_hot", "count"), "Discretization", "output_mode")
        if num_bins is not None and num_bins < 0:
            raise ValueError(f"`num_bins` must be greater than or equal to 0. Received: `num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError(
                "Both `num_bins` and `bin_boundaries` should not be set. Received: "
                f"`num_bins={num_bins}` and `bin_boundaries={bin_boundaries}`"
            )
        if num_bins is None and bin_boundaries is None:
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        self.bin_boundaries = bin_boundaries
        self.num_bins = num_bins
        self.epsilon = epsilon
        self.output_mode = output_mode
        self.sparse = sparse
        self.summary = None if bin_boundaries else np.array([[], []], dtype="float32")

    @property
    def output_dtype(self) -> str:
        return self.compute_dtype if self.output_mode != "int" else "int32"

    def adapt(self, data: Any, steps: int | None = None) -> None:
        """Learns ``num_bins`` boundaries from ``data`` (an array, tensor, a batched ``tf.data.Dataset`` or any
        iterable of batches) as Keras's approximate quantiles."""
        if self.num_bins is None:
            raise ValueError(
                "Cannot adapt a Discretization layer that has been initialized with `bin_boundaries`, "
                "use `num_bins` instead."
            )
        self.reset_state()
        for batch in adapt_batches(data, steps, lambda x: x, lists_are_batches=True):
            self.update_state(batch)
        self.finalize_state()

    def update_state(self, data: Any) -> None:
        data = np.array(data.numpy() if hasattr(data, "numpy") else data).astype("float32")
        self.summary = _merge_summaries(_summarize(data, self.epsilon), self.summary, self.epsilon)

    def finalize_state(self) -> None:
        if self.num_bins is None:
            return
        self.bin_boundaries = _compress_summary(self.summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def reset_state(self) -> None:
        if self.num_bins is None:
            return
        self.summary = np.array([[], []], dtype="float32")

    def compute_output_shape(self, input_shape: Any) -> tuple:
        input_shape = tuple(input_shape)
        if self.output_mode == "int":
            return input_shape
        depth = len(self.bin_boundaries) + 1 if self.bin_boundaries is not None else self.num_bins
        if self.output_mode == "one_hot":
            if input_shape and input_shape[-1] == 1 and len(input_shape) > 1:
                return input_shape[:-1] + (depth,)
            return input_shape + (depth,)
        if input_shape and len(input_shape) >= 2:
            return (input_shape[0],) + input_shape[2:] + (depth,)
        return (depth,)

    def _symbolic_outputs(self, args: tuple, kwargs: dict) -> Any:
        self.built = True
        return KerasTensor(self.compute_output_shape(args[0].shape), self.output_dtype)

    def call(self, inputs: Any) -> Tensor:
        from tapeflow.ops import lookup_ops, math_ops

        if self.bin_boundaries is None:
            raise ValueError(
                "You need to either pass the `bin_boundaries` argument at construction time or call "
                "`adapt(dataset)` before you can start using the `Discretization` layer."
            )
        indices = lookup_ops.bucketize(_tensor(inputs), self.bin_boundaries)
        out = encode_categorical(indices, self.output_mode, len(self.bin_boundaries) + 1, self.output_dtype)
        return math_ops.cast(out, self.output_dtype)

    def get_config(self) -> dict:
        return {
            "bin_boundaries": self.bin_boundaries,
            "num_bins": self.num_bins,
            "epsilon": self.epsilon,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
            "name": self.name,
            "dtype": self.dtype_policy.name,
        }

    @classmethod
    def from_config(cls, config: dict) -> Discretization:
        config = dict(config)
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = config["dtype"].get("config", {}).get("name")
        if config.get("bin_boundaries") is not None and config.get("num_bins") is not None:
            bin_boundaries = config.pop("bin_boundaries")
            layer = cls(**config)
            layer.bin_boundaries = bin_boundaries
            return layer
        return cls(**config)

    def load_own_variables(self, store: Any) -> None:
        if len(store) == 1:
            self.summary = store["0"]

    def save_own_variables(self, store: dict) -> None:
        pass  # Keras 3.15 writes no weights for Discretization


# -- Keras's quantile summaries (discretization.py), the same NumPy steps -------------------------


def _summarize(values: np.ndarray, epsilon: float) -> np.ndarray:
    values = np.sort(np.reshape(values, [-1]))
    step = max(np.size(values) / (1.0 / epsilon), 1)
    boundaries = values[int(step - 1) :: int(step)]
    return np.stack([boundaries, np.ones_like(boundaries) * step])


def _merge_summaries(prev_summary: np.ndarray, next_summary: np.ndarray, epsilon: float) -> np.ndarray:
    merged = np.concatenate((prev_summary, next_summary), axis=1)
    merged = np.take(merged, np.argsort(merged[0]), axis=1)
    return _compress_summary(merged, epsilon)


def _compress_summary(summary: np.ndarray, epsilon: float) -> np.ndarray:
    if summary.shape[1] * epsilon < 1:
        return summary
    percents = epsilon + np.arange(0.0, 1.0, epsilon)
    cum_weights = summary[1].cumsum()
    cum_weight_percents = cum_weights / cum_weights[-1]
    new_bins = np.interp(percents, cum_weight_percents, summary[0])
    cum_weights = np.interp(percents, cum_weight_percents, cum_weights)
    new_weights = cum_weights - np.concatenate((np.array([0]), cum_weights[:-1]))
    return np.stack((new_bins, new_weights)).astype("float32")
