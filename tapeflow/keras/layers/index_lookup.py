"""Vocabulary lookup layers (Keras 3.15's ``IndexLookup`` family): ``StringLookup`` and ``IntegerLookup``.

A vocabulary is given (``vocabulary=``, ``set_vocabulary``) or learned by ``adapt``: tokens are
counted, sorted by count and ties broken by the tokens themselves, both descending (Keras's
``np.lexsort((tokens, counts))[::-1]``), and cut to ``max_tokens``. Index 0 is the mask token (when
there is one and ``output_mode="int"``), then ``num_oov_indices`` OOV indices, then the vocabulary.
Lookups are a ``LookupTableFindV2`` op on an immutable table (``tapeflow.ops.lookup_ops``), so the
layers run eagerly, inside ``tf.function``/``fit`` and in ``Dataset.map``. A ``.keras`` file keeps an
adapted vocabulary in ``assets/<layer path>/vocabulary.txt`` and TF-IDF weights as ``idf_weights``,
as Keras does.
"""

from __future__ import annotations

import collections
import os
from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.keras.layers.base import KerasTensor, Layer
from tapeflow.keras.saving.serialization import base_config
from tapeflow.ops import lookup_ops

__all__ = ["IndexLookup", "StringLookup", "IntegerLookup"]

_INT64_MAX = np.iinfo(np.int64).max


def _validate_string_arg(
    value: Any, allowable: tuple, caller: str, arg: str, allow_none: bool = False, allow_callables: bool = False
) -> None:
    """Keras's ``argument_validation.validate_string_arg``."""
    if allow_none and value is None:
        return
    if allow_callables and callable(value):
        return
    if isinstance(value, str) and value in allowable:
        return
    raise ValueError(
        f"Unknown value for `{arg}` argument of {caller}. Allowed values are: {allowable}. Received: {arg}={value}"
    )


def _listify(x: Any) -> Any:
    """Keras's ``listify_tensors``: tensors and arrays as lists, for configs."""
    if isinstance(x, Tensor):
        x = x.numpy()
    if isinstance(x, np.ndarray):
        x = x.tolist()
        if x and isinstance(x[0], bytes):
            x = [v.decode("utf-8") for v in x]
    return x


def _numpy(x: Any) -> np.ndarray:
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


class IndexLookup(Layer):
    """Maps values from a vocabulary to integer indices (the base of ``StringLookup``/``IntegerLookup``)."""

    _allow_non_tensor_positional_args = True  # Keras: lists of strings or ints are fine
    _autocast = False

    def __init__(
        self,
        max_tokens: int | None,
        num_oov_indices: int,
        mask_token: Any,
        oov_token: Any,
        vocabulary_dtype: Any,
        vocabulary: Any = None,
        idf_weights: Any = None,
        invert: bool = False,
        output_mode: str = "int",
        sparse: bool = False,
        pad_to_max_tokens: bool = False,
        oov_method: str = "floormod",
        name: str | None = None,
        salt: Any = None,
        **kwargs: Any,
    ) -> None:
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"If set, `max_tokens` must be greater than 1. Received: max_tokens={max_tokens}")
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError(f"If pad_to_max_tokens is True, must set `max_tokens`. Received: max_tokens={max_tokens}")
        if num_oov_indices < 0:
            raise ValueError(
                f"`num_oov_indices` must be greater than or equal to 0. Received: num_oov_indices={num_oov_indices}"
            )
        _validate_string_arg(oov_method, ("floormod", "farmhash"), type(self).__name__, "oov_method")
        if salt is not None:
            if dtypes.as_dtype(vocabulary_dtype).is_integer and oov_method != "farmhash":
                raise ValueError(
                    f"`salt` can only be used when `oov_method='farmhash'`. Received: oov_method={oov_method}"
                )
            if isinstance(salt, (tuple, list)) and len(salt) == 2:
                salt = list(salt)
            elif isinstance(salt, int):
                salt = [salt, salt]
            else:
                raise ValueError(
                    "The `salt` argument for `IndexLookup` can only be a tuple of 2 integers, or "
                    f"a single integer. Received: salt={salt}."
                )
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode == "tf-idf":
            output_mode = "tf_idf"
        _validate_string_arg(
            output_mode, ("int", "one_hot", "multi_hot", "count", "tf_idf"), type(self).__name__, "output_mode"
        )
        if invert and output_mode != "int":
            raise ValueError(
                f"`output_mode` must be `'int'` when `invert` is true. Received: output_mode={output_mode}"
            )
        if sparse and output_mode == "int":
            raise ValueError(
                "`sparse` may only be true if `output_mode` is `'one_hot'`, `'multi_hot'`, `'count'` "
                f"or `'tf_idf'`. Received: sparse={sparse} and output_mode={output_mode}"
            )
        if sparse:
            raise NotImplementedError(f"{type(self).__name__}(sparse=True) (SparseTensor outputs) in tapeflow")
        if idf_weights is not None and output_mode != "tf_idf":
            raise ValueError(
                "`idf_weights` should only be set if `output_mode` is `'tf_idf'`. Received: "
                f"idf_weights={idf_weights} and output_mode={output_mode}"
            )
        frozen_vocab_size = kwargs.pop("vocabulary_size", None)
        has_input_vocabulary = kwargs.pop("has_input_vocabulary", vocabulary is not None)
        kwargs.pop("trainable", None)
        kwargs.pop("dtype", None)
        if kwargs:
            raise ValueError(f"Unrecognized keyword argument(s): {kwargs}")
        super().__init__(name=name)
        self.invert = invert
        self.max_tokens = max_tokens
        self.num_oov_indices = num_oov_indices
        self.mask_token = mask_token
        self.oov_token = oov_token
        self.output_mode = output_mode
        self.sparse = sparse
        self.pad_to_max_tokens = pad_to_max_tokens
        self.vocabulary_dtype = dtypes.as_dtype(vocabulary_dtype).name
        self.oov_method = oov_method
        self.salt = salt
        self._frozen_vocab_size = frozen_vocab_size
        # a file path is not kept in the config: the vocabulary goes to the assets instead (as Keras)
        self.input_vocabulary = vocabulary if not isinstance(vocabulary, str) else None
        self.input_idf_weights = idf_weights
        self._has_input_vocabulary = has_input_vocabulary
        if invert:
            self._key_dtype, self._value_dtype = "int64", self.vocabulary_dtype
            mask_key, mask_value = 0, mask_token
            self._default_value = oov_token
        else:
            self._key_dtype, self._value_dtype = self.vocabulary_dtype, "int64"
            mask_key = mask_token
            # masks map to 0 for int output and are dropped otherwise (bincount ignores the int64 max)
            mask_value = 0 if output_mode == "int" else _INT64_MAX
            self._default_value = self._oov_start_index() if num_oov_indices == 1 else -1
        if mask_token is not None:
            self._mask_key = convert_to_tensor(self._as_key(mask_key, self._key_dtype), dtype=self._key_dtype)
            self._mask_value = convert_to_tensor(self._as_key(mask_value, self._value_dtype), dtype=self._value_dtype)
        self.idf_weights_const = None
        if output_mode == "tf_idf":
            if self._has_input_vocabulary and idf_weights is None:
                raise ValueError(
                    "When specifying the `vocabulary` argument, in TF-IDF output mode, the "
                    "`idf_weights` argument must also be provided."
                )
            if idf_weights is not None:
                self.idf_weights_const = convert_to_tensor(np.asarray(_numpy(idf_weights), np.float32))
        self.lookup_table = self._table([])
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)
        self._token_counts: collections.Counter = collections.Counter()
        self._token_document_counts: collections.Counter = collections.Counter()
        self._num_documents = 0

    # -- keys and tables ------------------------------------------------------------------
    @staticmethod
    def _as_key(x: Any, dtype: str) -> Any:
        if dtype == "string":
            return x.encode("utf-8") if isinstance(x, str) else x
        return None if x is None else int(x)

    def _table(self, tokens: Any) -> lookup_ops.StaticHashTable:
        start = self._token_start_index()
        tokens = np.asarray(tokens, dtype=object if self.vocabulary_dtype == "string" else np.int64).reshape(-1)
        indices = np.arange(start, start + tokens.size, dtype=np.int64)
        keys, values = (indices, tokens) if self.invert else (tokens, indices)
        default = self._default_value
        if self.invert and self.vocabulary_dtype == "string":
            default = self._as_key(default, "string")
        return lookup_ops.StaticHashTable(keys, values, default, self._key_dtype, self._value_dtype)

    def _oov_start_index(self) -> int:
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def _token_start_index(self) -> int:
        return self._oov_start_index() + self.num_oov_indices

    def _tensor_vocab_to_numpy(self, vocabulary: np.ndarray) -> np.ndarray:
        return vocabulary

    # -- vocabulary ------------------------------------------------------------------------
    def get_vocabulary(self, include_special_tokens: bool = True) -> list:
        """The vocabulary, index by index (with the mask and OOV tokens unless ``include_special_tokens=False``)."""
        if self.lookup_table.size() == 0:
            vocab, indices = [], []
        else:
            keys, values = self.lookup_table.export()
            vocab, indices = (values, keys) if self.invert else (keys, values)
            vocab = self._tensor_vocab_to_numpy(vocab)
        lookup = collections.defaultdict(lambda: self.oov_token, zip(indices, vocab))
        vocab = [lookup[x] for x in range(self.vocabulary_size())]
        if self.mask_token is not None and self.output_mode == "int":
            vocab[0] = self.mask_token
        if not include_special_tokens:
            vocab = vocab[self._token_start_index() :]
        if self.vocabulary_dtype == "string":
            return [i.decode("utf-8") if isinstance(i, bytes) else i for i in vocab]
        return vocab

    def vocabulary_size(self) -> int:
        """The size of the vocabulary, mask and OOV indices included."""
        return self.lookup_table.size() + self._token_start_index()

    def set_vocabulary(self, vocabulary: Any, idf_weights: Any = None) -> None:
        """Sets the vocabulary (a list, array, 1-D tensor or the path of a one-token-per-line file) and, for
        ``output_mode="tf_idf"``, the IDF weights, replacing any vocabulary the layer had."""
        if self.output_mode == "tf_idf":
            if idf_weights is None:
                raise ValueError("`idf_weights` must be set if output_mode is 'tf_idf'.")
        elif idf_weights is not None:
            raise ValueError(
                "`idf_weights` should only be set if output_mode is `'tf_idf'`. Received: "
                f"output_mode={self.output_mode} and idf_weights={idf_weights}"
            )
        if isinstance(vocabulary, str):
            if not os.path.exists(vocabulary):
                raise ValueError(f"Vocabulary file {vocabulary} does not exist.")
            if self.output_mode == "tf_idf":
                raise ValueError("output_mode `'tf_idf'` does not support loading a vocabulary from file.")
            with open(vocabulary, encoding="utf-8") as f:
                lines = f.read().splitlines()
            self.lookup_table = self._table(lines if self.vocabulary_dtype == "string" else [int(x) for x in lines])
            self._record_vocabulary_size()
            return
        if isinstance(vocabulary, Tensor):
            vocabulary = vocabulary.numpy()
            if vocabulary.dtype == object:
                vocabulary = np.array([v.decode("utf-8") if isinstance(v, bytes) else v for v in vocabulary])
        elif isinstance(vocabulary, (list, tuple)):
            vocabulary = np.array(vocabulary)
        if isinstance(idf_weights, Tensor):
            idf_weights = idf_weights.numpy()
        elif isinstance(idf_weights, (list, tuple)):
            idf_weights = np.array(idf_weights)
        if vocabulary.size == 0:
            raise ValueError(f"Cannot set an empty vocabulary. Received: vocabulary={vocabulary}")
        oov_start = self._oov_start_index()
        token_start = self._token_start_index()
        special_tokens = [self.mask_token] * oov_start + [self.oov_token] * self.num_oov_indices
        found_special_tokens = np.array_equal(special_tokens, vocabulary[:token_start])
        tokens = vocabulary[token_start:] if found_special_tokens else vocabulary
        repeated = self._find_repeated_tokens(tokens)
        if repeated:
            raise ValueError(
                "The passed vocabulary has at least one repeated term. Please uniquify your dataset. "
                f"The repeated terms are: {repeated}"
            )
        if self.mask_token is not None and self.mask_token in tokens:
            mask_index = np.argwhere(vocabulary == self.mask_token)[-1]
            raise ValueError(
                "Found reserved mask token at unexpected location in `vocabulary`. Note that passed `vocabulary` "
                "does not need to include the OOV and mask tokens. Either remove all mask and OOV tokens, or "
                f"include them only at the start of the vocabulary in precisely this order: {special_tokens}. "
                f"Received: mask_token={self.mask_token} at vocabulary index {mask_index}"
            )
        if self.oov_token is not None and self.invert and self.oov_token in tokens:
            oov_index = np.argwhere(vocabulary == self.oov_token)[-1]
            raise ValueError(
                "Found reserved OOV token at unexpected location in `vocabulary`. Note that passed `vocabulary` "
                "does not need to include the OOV and mask tokens. Either remove all mask and OOV tokens, or "
                f"include them only at the start of the vocabulary in precisely this order: {special_tokens}. "
                f"Received: oov_token={self.oov_token} at vocabulary index {oov_index}"
            )
        new_vocab_size = token_start + len(tokens)
        if self.max_tokens is not None and new_vocab_size > self.max_tokens:
            raise ValueError(
                "Attempted to set a vocabulary larger than the maximum vocab size. Received vocabulary "
                f"size is {new_vocab_size}; `max_tokens` is {self.max_tokens}."
            )
        if self.vocabulary_dtype == "string":
            tokens = [t.encode("utf-8") if isinstance(t, str) else bytes(t) for t in tokens.tolist()]
        self.lookup_table = self._table(tokens)
        self._record_vocabulary_size()
        if self.output_mode == "tf_idf" and idf_weights is not None:
            if len(vocabulary) != len(idf_weights):
                raise ValueError(
                    "`idf_weights` must be the same length as vocabulary. len(idf_weights) is "
                    f"{len(idf_weights)}; len(vocabulary) is {len(vocabulary)}"
                )
            idf_weights = np.asarray(idf_weights)
            if idf_weights.ndim != 1:
                raise ValueError(
                    f"TF-IDF data must be a 1-index array. Received: type(idf_weights)={type(idf_weights)}"
                )
            # no document frequencies for the OOV/mask slots: their weight is the average one (as Keras)
            front, front_value = (0, 0) if found_special_tokens else (token_start, np.average(idf_weights))
            back = self.max_tokens - front - len(idf_weights) if self.pad_to_max_tokens and self.max_tokens else 0
            weights = np.pad(idf_weights, (front, back), "constant", constant_values=(front_value, 0))
            self.idf_weights_const = convert_to_tensor(weights.astype(np.float32))

    def _find_repeated_tokens(self, vocabulary: Any) -> list:
        vocabulary = list(vocabulary)
        if len(vocabulary) != len(set(vocabulary)):
            return [item for item, count in collections.Counter(vocabulary).items() if count > 1]
        return []

    def _record_vocabulary_size(self) -> None:
        self._ensure_vocab_size_unchanged()
        self._frozen_vocab_size = self.vocabulary_size()

    def _ensure_known_vocab_size(self) -> None:
        if self.output_mode == "int" or self.pad_to_max_tokens:
            return
        if self._frozen_vocab_size is None:
            raise RuntimeError(
                f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, you must set the layer's "
                "vocabulary before calling it. Either pass a `vocabulary` argument to the layer, or call `adapt` with "
                "some sample data."
            )

    def _ensure_vocab_size_unchanged(self) -> None:
        if self.output_mode == "int" or self.pad_to_max_tokens:
            return
        new_vocab_size = self.vocabulary_size()
        if self._frozen_vocab_size is not None and new_vocab_size != self._frozen_vocab_size:
            raise RuntimeError(
                f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, the vocabulary size "
                f"cannot be changed after the layer is called. Old vocab size is {self._frozen_vocab_size}, new "
                f"vocab size is {new_vocab_size}"
            )

    # -- adapt ------------------------------------------------------------------------------
    def adapt(self, data: Any, steps: int | None = None) -> None:
        """Learns the vocabulary (and TF-IDF weights) from ``data``: an array, list, tensor, a batched
        ``tf.data.Dataset`` or any iterable of batches (``steps`` of them at most)."""
        self.reset_state()
        for batch in adapt_batches(data, steps, lambda x: _as_documents(self._ensure_tensor(x, self.vocabulary_dtype))):
            self.update_state(batch)
        self.finalize_state()

    @staticmethod
    def _ensure_tensor(x: Any, dtype: str) -> Any:
        """Keras's ``tf_utils.ensure_tensor``: tensors (ragged kept) of ``dtype``."""
        if hasattr(x, "flat_values"):
            if x.flat_values.dtype.name != dtype:
                from tapeflow.ops import math_ops

                return x.with_flat_values(math_ops.cast(x.flat_values, dtype))
            return x
        if not isinstance(x, Tensor):
            x = convert_to_tensor(x, dtype=dtype) if dtype == "string" else convert_to_tensor(x)
        if x.dtype.name != dtype:
            from tapeflow.ops import math_ops

            x = math_ops.cast(x, dtype)
        return x

    def _key_list(self, values: np.ndarray) -> list:
        return values.reshape(-1).tolist()

    def update_state(self, data: Any) -> None:
        """Counts the tokens of one batch (see ``adapt``)."""
        if self._has_input_vocabulary:
            raise ValueError(
                f"Cannot adapt layer '{self.name}' after setting a static vocabulary via `vocabulary` "
                "argument or `set_vocabulary()` method."
            )
        data = self._ensure_tensor(data, self.vocabulary_dtype)
        if hasattr(data, "flat_values"):
            flat = _numpy(data.flat_values)
            splits = _numpy(data.row_splits)
            rows = [flat[splits[i] : splits[i + 1]] for i in range(splits.size - 1)] if data.ragged_rank == 1 else None
        else:
            arr = _numpy(data)
            if arr.ndim == 0:
                arr = arr[None]
            if arr.ndim == 1:  # one document
                arr = arr[None]
            flat, rows = arr, list(arr)
        self._token_counts.update(self._key_list(flat))
        if self.output_mode == "tf_idf":
            if rows is None:
                raise NotImplementedError("TF-IDF adapt() of ragged tensors with several ragged dimensions")
            for row in rows:
                self._token_document_counts.update(set(self._key_list(np.asarray(row))))
            self._num_documents += len(rows)

    def reset_state(self) -> None:
        if self._has_input_vocabulary:
            return
        self._token_counts.clear()
        self._token_document_counts.clear()
        self._num_documents = 0

    def finalize_state(self) -> None:
        if self._has_input_vocabulary or not self._token_counts:
            self._record_vocabulary_size()
            return
        for special in (self.mask_token, self.oov_token):
            if special is not None:
                self._token_counts.pop(self._as_key(special, self.vocabulary_dtype), None)
        if self.vocabulary_dtype == "string":
            tokens = np.empty(len(self._token_counts), object)
            tokens[:] = list(self._token_counts.keys())
        else:
            tokens = np.fromiter(self._token_counts.keys(), np.int64, count=len(self._token_counts))
        counts = np.fromiter(self._token_counts.values(), np.int64, count=len(self._token_counts))
        # deterministic vocabularies, as Keras: by count, ties by the token itself, both descending
        sorted_indices = np.lexsort((tokens, counts))[::-1]
        if self.max_tokens:
            sorted_indices = sorted_indices[: self.max_tokens - self._token_start_index()]
        tokens = tokens[sorted_indices]
        self.lookup_table = self._table(tokens)
        if self.output_mode == "tf_idf":
            doc_counts = np.array([self._token_document_counts.get(t, 0) for t in tokens.tolist()], np.int64)
            idf = np.log(1 + self._num_documents / (1 + doc_counts)).astype(np.float32)
            idf = np.pad(idf, (self._token_start_index(), 0), constant_values=np.mean(idf, dtype=np.float32))
            if self.pad_to_max_tokens and self.max_tokens is not None:
                idf = np.pad(idf, (0, self.max_tokens - idf.size), constant_values=0)
            self.idf_weights_const = convert_to_tensor(idf.astype(np.float32))
        self.reset_state()
        self._record_vocabulary_size()

    # -- call --------------------------------------------------------------------------------
    def _lookup_dense(self, inputs: Tensor) -> Tensor:
        from tapeflow.ops import math_ops

        lookups = lookup_ops.lookup(self.lookup_table, inputs)
        if self.mask_token is not None:
            lookups = math_ops.where(math_ops.equal(inputs, self._mask_key), self._mask_value, lookups)
        if self.invert:
            return lookups
        if self.num_oov_indices == 0:
            self._check_no_oov(inputs, lookups)
        elif self.num_oov_indices > 1:
            from tapeflow.ops import string_ops

            if dtypes.as_dtype(self._key_dtype).is_integer and self.oov_method != "farmhash":
                oov_indices = math_ops.floormod(inputs, np.int64(self.num_oov_indices))
            else:
                hash_inputs = string_ops.as_string(inputs) if dtypes.as_dtype(self._key_dtype).is_integer else inputs
                if self.salt is not None:
                    oov_indices = string_ops.to_hash_bucket_strong(hash_inputs, self.num_oov_indices, self.salt)
                else:
                    oov_indices = string_ops.to_hash_bucket_fast(hash_inputs, self.num_oov_indices)
            oov_indices = oov_indices + np.int64(self._oov_start_index())
            lookups = math_ops.where(math_ops.equal(lookups, np.int64(self._default_value)), oov_indices, lookups)
        return lookups

    def _check_no_oov(self, inputs: Tensor, lookups: Tensor) -> None:
        """``num_oov_indices=0``: an input outside the vocabulary is an error (Keras's ``tf.Assert``), now or
        each time a traced function runs."""
        from tapeflow.graph.functional_ops import run_check
        from tapeflow.ops.string_ops import summarize

        def check(keys: np.ndarray, found: np.ndarray) -> None:
            oov = found == -1
            if oov.any():
                msg = (
                    "When `num_oov_indices=0` all inputs should be in vocabulary, found OOV values "
                    f"{summarize(np.asarray(keys)[oov], 3)}, consider setting `num_oov_indices=1`."
                )
                raise InvalidArgumentError(
                    None,
                    None,
                    f"Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. Summarized data: {msg.encode()!r}",
                )

        run_check(check, [inputs, lookups])

    def call(self, inputs: Any) -> Any:
        from tapeflow.ops import array_ops

        self._ensure_known_vocab_size()
        inputs = self._ensure_tensor(inputs, self._key_dtype)
        ragged = hasattr(inputs, "flat_values")
        if ragged:
            lookups = inputs.with_flat_values(self._lookup_dense(inputs.flat_values))
        else:
            scalar = inputs.shape.rank == 0
            if scalar:
                inputs = array_ops.expand_dims(inputs, -1)
            lookups = self._lookup_dense(inputs)
        if self.output_mode == "int":
            if not ragged and scalar:
                lookups = array_ops.squeeze(lookups, -1)
            return lookups
        depth = self.max_tokens if self.pad_to_max_tokens else self._frozen_vocab_size
        output = encode_categorical(
            lookups, "count" if self.output_mode == "tf_idf" else self.output_mode, depth, self._value_dtype
        )
        if self.output_mode == "tf_idf":
            if self.idf_weights_const is None:
                raise ValueError("When `output_mode` is `'tf_idf'`, `idf_weights` must be provided.")
            from tapeflow.ops import math_ops

            output = math_ops.multiply(math_ops.cast(output, "float32"), self.idf_weights_const)
        return output

    def compute_output_shape(self, input_shape: Any) -> tuple:
        if self.output_mode == "int":
            return tuple(input_shape)
        depth = self.max_tokens if self.pad_to_max_tokens else self._frozen_vocab_size
        input_shape = tuple(input_shape)
        if self.output_mode == "one_hot":
            if len(input_shape) > 1 and input_shape[-1] == 1:
                return input_shape[:-1] + (depth,)
            return input_shape + (depth,)
        return input_shape[:-1] + (depth,)

    def _symbolic_outputs(self, args: tuple, kwargs: dict) -> Any:
        # Keras's compute_output_spec: a lookup is never run on the placeholder
        self.built = True  # as Keras: a symbolic call builds
        x = args[0]
        dtype = "int64" if self.output_mode == "int" else "float32"
        if self.invert:
            dtype = self.vocabulary_dtype
        return KerasTensor(self.compute_output_shape(x.shape), dtype)

    # -- config and saving -------------------------------------------------------------------
    def _base_config(self) -> dict:
        return base_config(self)

    def get_config(self) -> dict:
        config = {
            "invert": self.invert,
            "max_tokens": self.max_tokens,
            "num_oov_indices": self.num_oov_indices,
            "oov_token": self.oov_token,
            "mask_token": self.mask_token,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
            "pad_to_max_tokens": self.pad_to_max_tokens,
            "vocabulary_dtype": self.vocabulary_dtype,
            "idf_weights": _listify(self.input_idf_weights),
            "vocabulary": _listify(self.input_vocabulary),
            "vocabulary_size": self._frozen_vocab_size,
            "oov_method": self.oov_method,
            "salt": self.salt,
        }
        return {**self._base_config(), **config}

    @classmethod
    def from_config(cls, config: dict) -> IndexLookup:
        config = dict(config)
        if isinstance(config.get("dtype"), dict):
            config.pop("dtype")
        return cls(**config)

    def get_build_config(self) -> dict:
        return {}

    def build_from_config(self, config: dict) -> None:
        self.built = True

    def save_own_variables(self, store: dict) -> None:
        """Keras's weights-file entries: the TF-IDF weights, as ``idf_weights``."""
        if self.output_mode == "tf_idf":
            store["idf_weights"] = _numpy(self.idf_weights_const)

    def load_own_variables(self, store: Any) -> None:
        if self.output_mode == "tf_idf":
            self.idf_weights_const = convert_to_tensor(np.asarray(store["idf_weights"], np.float32))

    def save_assets(self, dir_path: str) -> None:
        """Writes an adapted vocabulary to ``dir_path/vocabulary.txt`` (one token a line, as Keras)."""
        if self.input_vocabulary is not None:
            return  # in the config
        vocabulary = self.get_vocabulary(include_special_tokens=True)
        with open(os.path.join(dir_path, "vocabulary.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join([str(w) for w in vocabulary]))

    def load_assets(self, dir_path: str) -> None:
        if self.input_vocabulary is not None:
            return
        with open(os.path.join(dir_path, "vocabulary.txt"), encoding="utf-8") as f:
            lines = f.read().splitlines()
        while lines and lines[-1] == "":
            lines.pop()
        values = [str(line) for line in lines] if self.vocabulary_dtype == "string" else [int(x) for x in lines]
        if self.output_mode == "tf_idf":
            self.set_vocabulary(values, idf_weights=_numpy(self.idf_weights_const))
        else:
            self.set_vocabulary(values)


def adapt_batches(data: Any, steps: int | None, whole: Any, lists_are_batches: bool = False) -> Any:
    """The batches ``adapt(data, steps)`` learns from, as Keras: a ``tf.data.Dataset``'s elements (``steps`` of
    them), any other iterable's items, or ``whole(data)`` for one array, list or tensor (a list is an iterable of
    batches instead with ``lists_are_batches``, as Keras's ``Discretization``)."""
    from tapeflow.data.dataset import Dataset

    single = (np.ndarray, Tensor) if lists_are_batches else (list, tuple, np.ndarray, Tensor)
    if isinstance(data, Dataset):
        yield from data.take(steps) if steps is not None else data
    elif hasattr(data, "__iter__") and not isinstance(data, single) and not hasattr(data, "flat_values"):
        for i, batch in enumerate(data):
            if steps is not None and i >= steps:
                break
            yield batch
    else:
        yield whole(data)


def _as_documents(data: Any) -> Any:
    """A 1-D tensor given to ``adapt`` whole is one token per document (Keras expands it to ``(n, 1)``)."""
    if not hasattr(data, "flat_values") and data.shape.rank == 1:
        from tapeflow.ops import array_ops

        return array_ops.expand_dims(data, -1)
    return data


def encode_categorical(inputs: Any, output_mode: str, depth: int, dtype: Any) -> Tensor:
    """Keras's ``encode_categorical_inputs`` for integer ``inputs`` (a tensor or a ragged tensor):
    ``one_hot`` per element, ``multi_hot``/``count`` per sample (the last axis); values outside
    ``[0, depth)`` are dropped."""
    from tapeflow.ops import array_ops, indexing_ops, math_ops, special_ops

    if output_mode == "int":
        return math_ops.cast(inputs, dtype)
    if isinstance(inputs, Tensor) and inputs.dtype.is_floating:  # Keras's int64 ids (CategoryEncoding in a graph)
        inputs = math_ops.cast(inputs, "int64")
    if hasattr(inputs, "flat_values"):
        if inputs.ragged_rank != 1 or output_mode == "one_hot":
            raise NotImplementedError(
                f"output_mode={output_mode!r} of a ragged tensor with ragged_rank {inputs.ragged_rank} in tapeflow"
            )
        return lookup_ops.ragged_bincount(
            inputs.flat_values, inputs.row_splits, depth, output_mode == "multi_hot", dtype
        )
    rank = inputs.shape.rank
    if rank == 0:
        inputs = array_ops.expand_dims(inputs, -1)
        rank = 1
    if output_mode in ("multi_hot", "count") and rank <= 2:
        return special_ops.bincount(
            inputs, minlength=depth, maxlength=depth, dtype=dtype, axis=-1, binary_output=output_mode == "multi_hot"
        )
    if output_mode == "one_hot":
        shape = inputs._shape_tuple()
        if len(shape) > 1 and shape[-1] == 1:
            inputs = array_ops.squeeze(inputs, -1)
        return indexing_ops.one_hot(inputs, depth, dtype=dtype)
    one_hot = indexing_ops.one_hot(inputs, depth, dtype=dtype)
    if output_mode == "multi_hot":  # Keras reduces axis 1 (a rank-3 input's second axis, not its last)
        return math_ops.reduce_max(one_hot, axis=1)
    return math_ops.reduce_sum(one_hot, axis=1)


class StringLookup(IndexLookup):
    """Maps strings to integer indices of a vocabulary given or learned by ``adapt`` (Keras 3's
    ``StringLookup``); ``invert=True`` maps indices back to strings.

    >>> layer = tf.keras.layers.StringLookup(vocabulary=["a", "b", "c", "d"])
    >>> layer([["a", "c", "d"], ["d", "z", "b"]])  # [[1, 3, 4], [4, 0, 2]], 0 is the OOV index
    """

    def __init__(
        self,
        max_tokens: int | None = None,
        num_oov_indices: int = 1,
        mask_token: Any = None,
        oov_token: str = "[UNK]",
        vocabulary: Any = None,
        idf_weights: Any = None,
        invert: bool = False,
        output_mode: str = "int",
        pad_to_max_tokens: bool = False,
        sparse: bool = False,
        encoding: str = "utf-8",
        name: str | None = None,
        salt: Any = None,
        **kwargs: Any,
    ) -> None:
        self.encoding = encoding
        kwargs.pop("vocabulary_dtype", None)
        super().__init__(
            max_tokens=max_tokens,
            num_oov_indices=num_oov_indices,
            mask_token=mask_token,
            oov_token=oov_token,
            vocabulary=vocabulary,
            idf_weights=idf_weights,
            invert=invert,
            output_mode=output_mode,
            pad_to_max_tokens=pad_to_max_tokens,
            sparse=sparse,
            name=name,
            salt=salt,
            vocabulary_dtype="string",
            **kwargs,
        )

    def _tensor_vocab_to_numpy(self, vocabulary: np.ndarray) -> np.ndarray:
        return np.array([x.decode(self.encoding) if isinstance(x, bytes) else x for x in vocabulary.tolist()])

    def get_config(self) -> dict:
        config = super().get_config()
        del config["vocabulary_dtype"]
        return {**config, "encoding": self.encoding}


class IntegerLookup(IndexLookup):
    """Maps integers to indices of a vocabulary given or learned by ``adapt`` (Keras 3's
    ``IntegerLookup``, int64 vocabularies); ``invert=True`` maps indices back to the integers."""

    _keras_compute_dtype = "int64"  # Keras's compute dtype: the input dtype of a Sequential it starts

    def __init__(
        self,
        max_tokens: int | None = None,
        num_oov_indices: int = 1,
        mask_token: Any = None,
        oov_token: int = -1,
        vocabulary: Any = None,
        vocabulary_dtype: str = "int64",
        idf_weights: Any = None,
        invert: bool = False,
        output_mode: str = "int",
        sparse: bool = False,
        pad_to_max_tokens: bool = False,
        oov_method: str = "floormod",
        salt: Any = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(
                "If `max_tokens` is set for `IntegerLookup`, it must be greater than 1. "
                f"Received: max_tokens={max_tokens}"
            )
        if num_oov_indices < 0:
            raise ValueError(
                "The value of `num_oov_indices` argument for `IntegerLookup` must >= 0. "
                f"Received: num_oov_indices={num_oov_indices}"
            )
        if vocabulary_dtype != "int64":
            raise ValueError(
                "Only `vocabulary_dtype='int64'` is supported at this time. Received: "
                f"vocabulary_dtype={vocabulary_dtype}"
            )
        super().__init__(
            max_tokens=max_tokens,
            num_oov_indices=num_oov_indices,
            mask_token=mask_token,
            oov_token=oov_token,
            vocabulary=vocabulary,
            vocabulary_dtype=vocabulary_dtype,
            idf_weights=idf_weights,
            invert=invert,
            output_mode=output_mode,
            sparse=sparse,
            pad_to_max_tokens=pad_to_max_tokens,
            oov_method=oov_method,
            salt=salt,
            name=name,
            **kwargs,
        )

    def get_config(self) -> dict:
        config = super().get_config()
        for key in ("oov_token", "mask_token"):
            if config[key] is not None:
                config[key] = int(config[key])
        if config["vocabulary"] is not None:
            config["vocabulary"] = [int(v) for v in config["vocabulary"]]
        return config
