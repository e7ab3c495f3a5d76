"""Keras 3's ``GroupQueryAttention`` (grouped-query attention, Ainslie et al. 2023)."""

from __future__ import annotations

import math
from typing import Any

from tapeflow.framework.tensor import Tensor
from tapeflow.keras import constraints, initializers, regularizers
from tapeflow.keras.layers import masking as _masking
from tapeflow.keras.layers.attention import _causal_mask, _dim, _einsum, _masked_softmax
from tapeflow.keras.layers.base import Layer
from tapeflow.keras.layers.conv_nd import serialize
from tapeflow.keras.layers.einsum_dense import EinsumDense
from tapeflow.keras.saving.serialization import base_config
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo

__all__ = ["GroupQueryAttention", "GroupedQueryAttention"]


class GroupedQueryAttention(Layer):
    """Attention with ``num_query_heads`` query heads sharing ``num_key_value_heads`` key/value heads
    (each key/value head serves ``num_query_heads // num_key_value_heads`` query heads), as Keras 3:
    ``layer(query, value, key=None, query_mask=None, value_mask=None, key_mask=None, attention_mask=None,
    return_attention_scores=False, training=None, use_causal_mask=False)`` on ``(batch, T, dim)`` queries and
    ``(batch, S, dim)`` values; the output has the query's shape.

    Its weights are Keras's: ``query``/``key``/``value`` EinsumDense kernels ``(dim, heads, head_dim)`` with
    biases ``(heads, head_dim)``, an optional sigmoid ``gate`` on the query (``use_gate``) and
    ``attention_output`` ``(num_query_heads, head_dim, dim)``. ``sliding_window=w`` lets each position attend
    to keys less than ``w`` steps away; Keras masks on the inputs (``Embedding(mask_zero=True)``) mask the
    scores. ``flash_attention`` is not available (Keras's TensorFlow backend has none either).
    """

    _supports_masking = True
    _keras_class_name = "GroupQueryAttention"  # Keras's class is GroupedQueryAttention (its default names)

    def __init__(self, head_dim: int, num_query_heads: int, num_key_value_heads: int, dropout: float = 0.0,
                 use_bias: bool = True, sliding_window: int | None = None, flash_attention: Any = None,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None, use_gate: bool = False,
                 seed: Any = None, **kwargs: Any) -> None:
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.head_dim, self.num_query_heads, self.num_key_value_heads = head_dim, num_query_heads, num_key_value_heads
        if num_query_heads % num_key_value_heads != 0:
            raise ValueError("`num_query_heads` must be divisible by `num_key_value_heads`.")
        self.num_repeats = num_query_heads // num_key_value_heads
        self.dropout, self.use_bias, self.use_gate = dropout, use_bias, use_gate
        if sliding_window is not None and (not isinstance(sliding_window, int) or sliding_window <= 0):
            raise ValueError("`sliding_window` must be `None` or a positive integer. "
                             f"Received: sliding_window={sliding_window}")
        self.sliding_window = sliding_window
        if flash_attention:
            raise ValueError("Flash attention is not supported in tensorflow backend.")
        self._flash_attention = False
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.seed = seed
        self._inverse_sqrt_head_dim = 1.0 / math.sqrt(float(head_dim))

    def _dense(self, eq: str, output_shape: tuple, bias_axes: str, name: str, activation: Any = None) -> EinsumDense:
        # fresh clones of the initializers per projection, in Keras's order (unseeded ones draw their own seeds)
        clone = lambda init: init.__class__.from_config(init.get_config())  # noqa: E731
        return EinsumDense(eq, output_shape=output_shape, bias_axes=bias_axes if self.use_bias else None,
                           activation=activation, kernel_regularizer=self.kernel_regularizer,
                           bias_regularizer=self.bias_regularizer, activity_regularizer=self.activity_regularizer,
                           kernel_constraint=self.kernel_constraint, bias_constraint=self.bias_constraint,
                           dtype=self.dtype_policy, kernel_initializer=clone(self.kernel_initializer),
                           bias_initializer=clone(self.bias_initializer), name=name)

    def build(self, query_shape: Any, value_shape: Any = None, key_shape: Any = None) -> None:
        query_shape = tuple(query_shape)
        value_shape = query_shape if value_shape is None else tuple(value_shape)
        key_shape = value_shape if key_shape is None else tuple(key_shape)
        self.feature_dim = query_shape[-1]
        hq, hkv, d = self.num_query_heads, self.num_key_value_heads, self.head_dim

        def built(layer: EinsumDense, shape: tuple) -> EinsumDense:
            with layer.name_scope:
                layer.build(shape)
            return layer

        self._query_dense = built(self._dense("bqm,muh->bquh", (None, hq, d), "uh", "query"), query_shape)
        self._key_dense = built(self._dense("bkm,mvh->bkvh", (None, hkv, d), "vh", "key"), key_shape)
        if self.use_gate:
            self._gate_dense = built(self._dense("bqm,muh->bquh", (None, hq, d), "uh", "gate", "sigmoid"),
                                     query_shape)
        self._value_dense = built(self._dense("bkm,mvh->bkvh", (None, hkv, d), "vh", "value"), value_shape)
        from tapeflow.keras.layers.core import Dropout, Softmax

        # Keras's Softmax and Dropout sublayers (no weights; their names and seed generator as Keras's)
        object.__setattr__(self, "_softmax", Softmax(axis=-1, dtype=self.dtype_policy))
        object.__setattr__(self, "_dropout_layer", Dropout(rate=self.dropout, dtype=self.dtype_policy,
                                                           seed=self.seed))
        self._output_dense = built(self._dense("bquh,uhm->bqm", (None, self.feature_dim), "m", "attention_output"),
                                   (None, None, hq, d))
        self.built = True

    def __call__(self, query: Any, value: Any = None, key: Any = None, **kwargs: Any) -> Any:
        if value is None:
            raise TypeError("GroupedQueryAttention.__call__() missing 1 required positional argument: 'value'")
        if not self.built:
            shape = lambda t: tuple(t.shape) if not hasattr(t, "_shape_tuple") else tuple(t._shape_tuple())  # noqa: E731
            self.build(shape(query), shape(value), None if key is None else shape(key))
        if key is not None:
            kwargs["key"] = key
        return super().__call__(query, value, **kwargs)

    def _maybe_build(self, inputs: Any) -> None:
        if not self.built:
            self.build(tuple(inputs._shape_tuple()))

    def call(self, query: Tensor, value: Tensor, key: Any = None, query_mask: Any = None, value_mask: Any = None,
             key_mask: Any = None, attention_mask: Any = None, return_attention_scores: bool = False,
             training: Any = None, use_causal_mask: bool = False) -> Any:
        from tapeflow.keras import ops

        value = self._convert(value)
        key_given = key is not None
        key = value if key is None else self._convert(key)
        query_mask = _masking.get_mask(query) if query_mask is None else query_mask
        value_mask = _masking.get_mask(value) if value_mask is None else value_mask
        if key_given and key_mask is None and key is not value:
            key_mask = _masking.get_mask(key)
        for t in (query, value, key):
            _masking.set_mask(t, None)
        mask = None
        if query_mask is not None:
            mask = ao.expand_dims(mo.cast(query_mask, "bool"), -1)
        for m in (value_mask, key_mask):
            if m is not None:
                m = ao.expand_dims(mo.cast(m, "bool"), -2)
                mask = m if mask is None else mo.logical_and(mask, m)
        if use_causal_mask:
            c = _causal_mask(_dim(query, 1), _dim(value, 1))
            mask = c if mask is None else mo.logical_and(mask, c)
        if self.sliding_window is not None:
            rows = ao.reshape(ops.arange(_dim(query, 1), dtype="int32"), [1, -1, 1])
            cols = ao.reshape(ops.arange(_dim(value, 1), dtype="int32"), [1, 1, -1])
            band = mo.less(mo.abs(mo.subtract(rows, cols)), self.sliding_window)
            mask = band if mask is None else mo.logical_and(mask, band)
        if attention_mask is not None and mask is not None:
            mask = mo.logical_and(mo.cast(attention_mask, "bool"), mask)
        elif attention_mask is not None:
            mask = attention_mask
        gate = self._gate_dense(query) if self.use_gate else None
        q = self._query_dense(query)
        k = ops.repeat(self._key_dense(key), self.num_repeats, axis=2)
        v = ops.repeat(self._value_dense(value), self.num_repeats, axis=2)
        scores = None
        if not (self.dropout > 0.0 or return_attention_scores):
            if mask is not None:  # Keras: dot_product_attention, masked logits at a large negative number
                while len(mask.shape) < 4:
                    mask = ao.expand_dims(mask, -3)
                mask = mo.cast(mask, "bool")
            out = ops.dot_product_attention(q, k, v, mask=mask, scale=self._inverse_sqrt_head_dim)
        else:
            q = mo.multiply(q, mo.cast(self._inverse_sqrt_head_dim, q.dtype))
            scores = _einsum("bquh,bkuh->buqk", q, k)
            if mask is not None:
                while len(mask.shape) < 4:
                    mask = ao.expand_dims(mask, -3)
            scores = _masked_softmax(scores, mask)
            dropped = self._dropout_layer(scores, training=training) if self.dropout > 0.0 else scores
            out = _einsum("buqk,bkuh->bquh", dropped, v)
        out = self._output_dense(mo.multiply(out, gate) if self.use_gate else out)
        if query_mask is not None:
            _masking.set_mask(out, query_mask)
        if return_attention_scores:
            return out, scores
        return out

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return None  # call() puts the query's mask on the output itself

    def compute_output_shape(self, query_shape: Any, value_shape: Any = None, key_shape: Any = None) -> Any:
        value_shape = query_shape if value_shape is None else value_shape
        key_shape = value_shape if key_shape is None else key_shape
        if query_shape[-1] != value_shape[-1]:
            raise ValueError("The last dimension of `query_shape` and `value_shape` must be equal, but are "
                             f"{query_shape[-1]}, {value_shape[-1]}. Received: query_shape={query_shape}, "
                             f"value_shape={value_shape}")
        if tuple(value_shape[1:-1]) != tuple(key_shape[1:-1]):
            raise ValueError("All dimensions of `value` and `key`, except the last one, must be equal. Received: "
                             f"value_shape={value_shape} and key_shape={key_shape}")
        return query_shape

    def get_config(self) -> dict:
        return {**base_config(self), "head_dim": self.head_dim, "num_query_heads": self.num_query_heads,
                "num_key_value_heads": self.num_key_value_heads, "use_bias": self.use_bias,
                "use_gate": self.use_gate, "sliding_window": self.sliding_window, "dropout": self.dropout,
                "kernel_initializer": serialize(self.kernel_initializer),
                "bias_initializer": serialize(self.bias_initializer),
                "kernel_regularizer": serialize(self.kernel_regularizer),
                "bias_regularizer": serialize(self.bias_regularizer),
                "activity_regularizer": serialize(self.activity_regularizer),
                "kernel_constraint": serialize(self.kernel_constraint),
                "bias_constraint": serialize(self.bias_constraint), "seed": self.seed}


GroupQueryAttention = GroupedQueryAttention  # the name Keras exports it under
