"""``TextVectorization`` (Keras 3.15): standardize, split, n-grams, then a ``StringLookup``.

The steps are Keras's: ``lower_and_strip_punctuation`` is ``tf.strings.lower`` then a
``regex_replace`` of ASCII punctuation; ``whitespace`` splitting is ``tf.strings.split`` (a ragged
batch), ``character`` is ``tf.strings.unicode_split``; callables get the string tensor. The
vocabulary lives in an inner ``StringLookup`` (``_lookup_layer``) with ``""`` as its mask token, so
index 0 pads and index 1 is ``[UNK]``. Each step is a tapeflow op, so the layer runs eagerly, in
``fit`` and in ``Dataset.map``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.keras.layers.base import KerasTensor, Layer
from tapeflow.keras.saving.serialization import base_config
from tapeflow.keras.layers.index_lookup import (
    StringLookup,
    _as_documents,
    _listify,
    _validate_string_arg,
    adapt_batches,
)

__all__ = ["TextVectorization"]

_PUNCTUATION = r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']'  # Keras's DEFAULT_STRIP_REGEX


class TextVectorization(Layer):
    """Turns strings into token indices (``output_mode="int"``) or per-sample token counts
    (``"multi_hot"``, ``"count"``, ``"tf_idf"``) with a vocabulary learned by ``adapt``.

    >>> vectorize = tf.keras.layers.TextVectorization(max_tokens=1000, output_sequence_length=4)
    >>> vectorize.adapt(["the cat sat", "the dog"])
    >>> vectorize(["the cat"])  # [[2, 3, 0, 0]]
    """

    _allow_non_tensor_positional_args = True
    _autocast = False

    def __init__(
        self,
        max_tokens: int | None = None,
        standardize: Any = "lower_and_strip_punctuation",
        split: Any = "whitespace",
        ngrams: Any = None,
        output_mode: str = "int",
        output_sequence_length: int | None = None,
        pad_to_max_tokens: bool = False,
        vocabulary: Any = None,
        idf_weights: Any = None,
        sparse: bool = False,
        ragged: bool = False,
        encoding: str = "utf-8",
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        _validate_string_arg(
            standardize,
            ("lower_and_strip_punctuation", "lower", "strip_punctuation"),
            "TextVectorization",
            "standardize",
            allow_none=True,
            allow_callables=True,
        )
        _validate_string_arg(
            split, ("whitespace", "character"), "TextVectorization", "split", allow_none=True, allow_callables=True
        )
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode == "tf-idf":
            output_mode = "tf_idf"
        _validate_string_arg(
            output_mode, ("int", "one_hot", "multi_hot", "count", "tf_idf"), "TextVectorization", "output_mode"
        )
        if not (
            ngrams is None
            or isinstance(ngrams, int)
            or isinstance(ngrams, tuple)
            and all(isinstance(item, int) for item in ngrams)
        ):
            raise ValueError(f"`ngrams` must be None, an integer, or a tuple of integers. Received: ngrams={ngrams}")
        if output_mode == "int" and not (isinstance(output_sequence_length, int) or output_sequence_length is None):
            raise ValueError(
                "`output_sequence_length` must be either None or an integer when `output_mode` is "
                f"'int'. Received: output_sequence_length={output_sequence_length}"
            )
        if output_mode != "int" and output_sequence_length is not None:
            raise ValueError(
                "`output_sequence_length` must not be set if `output_mode` is not 'int'. "
                f"Received output_sequence_length={output_sequence_length}."
            )
        if ragged and output_mode != "int":
            raise ValueError(
                f"`ragged` must not be true if `output_mode` is `'int'`. Received: ragged={ragged} and "
                f"output_mode={output_mode}"
            )
        self._max_tokens = max_tokens
        self._standardize = standardize
        self._split = split
        self._ngrams_arg = ngrams
        self._ngrams = tuple(range(1, ngrams + 1)) if isinstance(ngrams, int) else ngrams
        self._ragged = ragged
        self._output_mode = output_mode
        self._output_sequence_length = output_sequence_length
        self._encoding = encoding
        has_input_vocabulary = kwargs.pop("has_input_vocabulary", vocabulary is not None)
        vocabulary_size = kwargs.pop("vocabulary_size", None)
        super().__init__(name=name, **kwargs)
        self._lookup_layer = StringLookup(
            max_tokens=max_tokens,
            vocabulary=vocabulary,
            idf_weights=idf_weights,
            pad_to_max_tokens=pad_to_max_tokens,
            mask_token="",
            output_mode=output_mode,
            sparse=sparse,
            has_input_vocabulary=has_input_vocabulary,
            encoding=encoding,
            vocabulary_size=vocabulary_size,
        )

    @property
    def compute_dtype(self) -> str:
        return "string"

    @property
    def variable_dtype(self) -> str:
        return "string"

    def build(self, input_shape: Any = None) -> None:
        self.built = True

    def compute_output_shape(self, input_shape: Any) -> tuple:
        if self._output_mode == "int":
            return (tuple(input_shape)[0], self._output_sequence_length)
        if self._split is None:
            if len(input_shape) <= 1:
                input_shape = tuple(input_shape) + (1,)
        else:
            input_shape = tuple(input_shape) + (None,)
        return self._lookup_layer.compute_output_shape(input_shape)

    def _symbolic_outputs(self, args: tuple, kwargs: dict) -> Any:
        self.built = True  # as Keras: a symbolic call builds
        dtype = "int64" if self._output_mode == "int" else "float32"
        return KerasTensor(self.compute_output_shape(args[0].shape), dtype)

    # -- vocabulary ------------------------------------------------------------------------
    def adapt(self, data: Any, batch_size: int | None = None, steps: int | None = None) -> None:
        """Learns the vocabulary from ``data`` (strings: an array, list, tensor, a batched ``tf.data.Dataset``
        or any iterable of batches), sorted by frequency, ties by the tokens (both descending)."""
        self.reset_state()
        for batch in adapt_batches(data, steps, lambda x: _as_documents(StringLookup._ensure_tensor(x, "string"))):
            self.update_state(batch)
        self.finalize_state()

    def update_state(self, data: Any) -> None:
        self._lookup_layer.update_state(self._preprocess(data))

    def finalize_state(self) -> None:
        self._lookup_layer.finalize_state()

    def reset_state(self) -> None:
        self._lookup_layer.reset_state()

    def get_vocabulary(self, include_special_tokens: bool = True) -> list:
        """The vocabulary, index by index (``""`` and ``"[UNK]"`` first unless ``include_special_tokens=False``)."""
        return self._lookup_layer.get_vocabulary(include_special_tokens)

    def vocabulary_size(self) -> int:
        return self._lookup_layer.vocabulary_size()

    def set_vocabulary(self, vocabulary: Any, idf_weights: Any = None) -> None:
        """Sets the vocabulary (and TF-IDF weights) directly instead of by ``adapt``."""
        self._lookup_layer.set_vocabulary(vocabulary, idf_weights=idf_weights)

    # -- call --------------------------------------------------------------------------------
    def _preprocess(self, inputs: Any) -> Any:
        from tapeflow.ops import array_ops, string_ops

        inputs = StringLookup._ensure_tensor(inputs, "string")
        if self._standardize in ("lower", "lower_and_strip_punctuation"):
            inputs = string_ops.lower(inputs)
        if self._standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
            inputs = string_ops.regex_replace(inputs, _PUNCTUATION, "")
        if callable(self._standardize):
            inputs = self._standardize(inputs)
        if self._split is not None:
            if inputs.shape.rank > 1:
                if inputs.shape[-1] != 1:
                    raise ValueError(
                        "When using `TextVectorization` to tokenize strings, the input rank must be 1 or the last "
                        f"shape dimension must be 1. Received: inputs.shape={inputs.shape} with "
                        f"rank={inputs.shape.rank}"
                    )
                inputs = array_ops.squeeze(inputs, axis=-1)
            if self._split == "whitespace":
                inputs = string_ops.split(inputs)
            elif self._split == "character":
                inputs = string_ops.unicode_split(inputs, "UTF-8")
            elif callable(self._split):
                inputs = self._split(inputs)
        if self._ngrams is not None:
            inputs = string_ops.ngrams(inputs, ngram_width=self._ngrams, separator=" ")
        return inputs

    def call(self, inputs: Any) -> Any:
        from tapeflow.ops import lookup_ops

        inputs = self._preprocess(inputs)
        lookup_data = self._lookup_layer.call(inputs)
        if self._output_mode != "int":
            return lookup_data
        if hasattr(lookup_data, "flat_values"):
            if self._ragged:
                if self._output_sequence_length is not None:
                    raise NotImplementedError("TextVectorization(ragged=True, output_sequence_length=...) in tapeflow")
                return lookup_data
            if lookup_data.ragged_rank != 1:
                raise NotImplementedError("TextVectorization of inputs that split into several ragged dimensions")
            return lookup_ops.ragged_to_dense(lookup_data, 0, self._output_sequence_length)
        if self._output_sequence_length is not None:
            return _pad_or_cut(lookup_data, self._output_sequence_length)
        return lookup_data

    # -- config and saving -------------------------------------------------------------------
    def get_config(self) -> dict:
        from tapeflow.keras.saving.serialization import serialize_keras_object

        def fn(x: Any) -> Any:
            return x if x is None or isinstance(x, str) else serialize_keras_object(x)

        config = {
            "max_tokens": self._lookup_layer.max_tokens,
            "standardize": fn(self._standardize),
            "split": fn(self._split),
            "ngrams": self._ngrams_arg,
            "output_mode": self._output_mode,
            "output_sequence_length": self._output_sequence_length,
            "pad_to_max_tokens": self._lookup_layer.pad_to_max_tokens,
            "sparse": self._lookup_layer.sparse,
            "ragged": self._ragged,
            "vocabulary": _listify(self._lookup_layer.input_vocabulary),
            "idf_weights": _listify(self._lookup_layer.input_idf_weights),
            "encoding": self._encoding,
            "vocabulary_size": self.vocabulary_size(),
        }
        return {**base_config(self), **config}

    @classmethod
    def from_config(cls, config: dict) -> TextVectorization:
        from tapeflow.keras.saving.serialization import deserialize_keras_object

        config = dict(config)
        for key in ("standardize", "split"):
            if config.get(key) is not None and not isinstance(config[key], str):
                config[key] = deserialize_keras_object(config[key])
        if isinstance(config.get("ngrams"), list):
            config["ngrams"] = tuple(config["ngrams"])
        if isinstance(config.get("dtype"), dict):
            config.pop("dtype")
        return cls(**config)

    def build_from_config(self, config: dict) -> None:
        self.built = True

    def save_own_variables(self, store: dict) -> None:
        self._lookup_layer.save_own_variables(store)

    def load_own_variables(self, store: Any) -> None:
        self._lookup_layer.load_own_variables(store)

    def save_assets(self, dir_path: str) -> None:
        self._lookup_layer.save_assets(dir_path)

    def load_assets(self, dir_path: str) -> None:
        self._lookup_layer.load_assets(dir_path)


def _pad_or_cut(x: Tensor, length: int) -> Tensor:
    """``x[..., :length]`` padded with zeros to ``length`` along the last axis (Keras's dense path), as rows
    padded by ``RaggedTensorToTensor`` so that unknown lengths work in traced functions too."""
    from tapeflow.framework import dtypes
    from tapeflow.ops import array_ops, lookup_ops, math_ops, shape_ops

    shape = x._shape_tuple()
    n = shape_ops.size(x, out_type=dtypes.int64)
    if len(shape) == 1:  # one row of unknown length (a scalar string split into tokens)
        splits = array_ops.stack([convert_to_tensor(np.int64(0)), n])
        return array_ops.reshape(lookup_ops.rows_to_dense(x, splits, 0, length), [length])
    width = shape[-1]
    lead = list(shape[:-1])
    if width is None or lead.count(None) > 1:
        raise NotImplementedError(
            "TextVectorization(output_sequence_length=...) of an input whose last dimension "
            "is unknown after splitting (with split=None) in tapeflow"
        )
    rows = math_ops.floordiv(n, np.int64(max(width, 1)))
    splits = math_ops.multiply(array_ops.range_(rows + 1, dtype=dtypes.int64), np.int64(width))
    dense = lookup_ops.rows_to_dense(array_ops.reshape(x, [-1]), splits, 0, length)
    return array_ops.reshape(dense, [-1 if d is None else d for d in lead] + [length])
