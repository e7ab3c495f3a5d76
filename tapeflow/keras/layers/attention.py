"""Attention layers with Keras 3's weights and masking: ``MultiHeadAttention`` (``query``/``key``/
``value``/``attention_output`` projections, kernels ``(dim, heads, key_dim)`` and
``(heads, value_dim, out)``), ``Attention`` (Luong dot / concat scores) and ``AdditiveAttention``
(Bahdanau). Keras masks on the inputs (``Embedding(mask_zero=True)``) mask the scores as in Keras."""

from __future__ import annotations

import math
from typing import Any

from tapeflow import nn
from tapeflow.framework.tensor import Tensor
from tapeflow.keras import constraints, initializers, regularizers
from tapeflow.keras.layers import masking as _masking
from tapeflow.keras.layers.base import Layer
from tapeflow.keras.saving.serialization import base_config
from tapeflow.keras.layers.conv_nd import serialize
from tapeflow.keras.layers.einsum_dense import EinsumDense
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo
from tapeflow.ops import indexing_ops

__all__ = ["MultiHeadAttention", "Attention", "AdditiveAttention"]

_NEG = -1e9  # Keras' large negative number for float32 scores


def _einsum(eq: str, *xs: Tensor) -> Tensor:
    return indexing_ops.einsum(eq, *xs)


def _masked_softmax(scores: Tensor, mask: Any) -> Tensor:
    """Keras' ``Softmax(axis=-1)(scores, mask)``: masked scores set to -1e9, fully masked rows to 0."""
    if mask is None:
        return nn.softmax(scores, axis=-1)
    mask = mo.cast(mask, "bool")
    probs = nn.softmax(mo.where(mask, scores, ao.ones_like(scores) * _NEG), axis=-1)
    return mo.where(mask, probs, ao.zeros_like(probs))


def _dropout(x: Tensor, rate: float, training: Any, seed: Any) -> Tensor:
    if training and rate > 0:
        return nn.dropout(x, rate=rate, seed=seed)
    return x


def _causal_mask(tq: Any, tv: Any) -> Tensor:
    """``(1, Tq, Tv)``: position i attends to positions j <= i."""
    rows = mo.cumsum(ao.ones([1, tq, tv], dtype="int32"), axis=-2)
    cols = mo.cumsum(ao.ones([1, tq, tv], dtype="int32"), axis=-1)
    return mo.greater_equal(rows, cols)


def _dim(x: Tensor, axis: int) -> Any:
    d = x._shape_tuple()[axis]
    if d is None:
        from tapeflow.ops import shape_ops

        return shape_ops.shape_of(x)[axis]
    return d


class MultiHeadAttention(Layer):
    """Multi-head attention (Vaswani et al. 2017) over ``(batch, T, dim)`` queries and
    ``(batch, S, dim)`` values/keys; ``layer(query, value, key=None, attention_mask=None,
    return_attention_scores=False, use_causal_mask=False)``."""

    def __init__(
        self,
        num_heads: int,
        key_dim: int,
        value_dim: int | None = None,
        dropout: float = 0.0,
        use_bias: bool = True,
        output_shape: Any = None,
        attention_axes: Any = None,
        flash_attention: Any = None,
        kernel_initializer: Any = "glorot_uniform",
        bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None,
        bias_regularizer: Any = None,
        activity_regularizer: Any = None,
        kernel_constraint: Any = None,
        bias_constraint: Any = None,
        use_gate: bool = False,
        sliding_window: Any = None,
        seed: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if use_gate:
            raise NotImplementedError("MultiHeadAttention(use_gate=True) is not implemented in tapeflow")
        if sliding_window is not None:
            raise NotImplementedError("MultiHeadAttention(sliding_window=...) is not implemented in tapeflow")
        if attention_axes is not None and tuple(
            [attention_axes] if isinstance(attention_axes, int) else attention_axes
        ) not in ((1,), (-2,)):
            raise NotImplementedError(
                f"MultiHeadAttention(attention_axes={attention_axes!r}): tapeflow attends "
                f"over axis 1 of rank-3 inputs only"
            )
        self._attention_axes = attention_axes
        self.num_heads, self.key_dim = int(num_heads), int(key_dim)
        self.value_dim = int(value_dim) if value_dim else self.key_dim
        self.dropout, self.use_bias, self.seed = float(dropout), bool(use_bias), seed
        if output_shape is not None and not isinstance(output_shape, int):
            output_shape = tuple(output_shape)
            if len(output_shape) != 1:
                raise NotImplementedError(
                    "MultiHeadAttention: a multi-dimensional output_shape is not implemented in tapeflow"
                )
        self._output_shape = output_shape
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer) if kernel_regularizer else None
        self.bias_regularizer = regularizers.get(bias_regularizer) if bias_regularizer else None
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

    def _proj(self, eq: str, output_shape: tuple, bias_axes: str, name: str) -> EinsumDense:
        # Keras 3 gives each projection fresh clones of the initializers (an unseeded clone takes its own
        # Python-random seed, so query, key and value start from different kernels), in this order.
        clone = lambda init: init.__class__.from_config(init.get_config())
        return EinsumDense(
            eq,
            output_shape=output_shape,
            bias_axes=bias_axes if self.use_bias else None,
            kernel_initializer=clone(self.kernel_initializer),
            bias_initializer=clone(self.bias_initializer),
            kernel_regularizer=self.kernel_regularizer,
            bias_regularizer=self.bias_regularizer,
            kernel_constraint=self.kernel_constraint,
            bias_constraint=self.bias_constraint,
            name=name,
            dtype=self.dtype,
        )

    def build(self, query_shape: Any, value_shape: Any = None, key_shape: Any = None) -> None:
        query_shape = tuple(query_shape)
        value_shape = query_shape if value_shape is None else tuple(value_shape)
        key_shape = value_shape if key_shape is None else tuple(key_shape)
        if len(query_shape) != 3:
            raise NotImplementedError(
                f"MultiHeadAttention: tapeflow supports rank-3 (batch, steps, dim) inputs "
                f"only, got query shape {query_shape}"
            )
        h, kd, vd = self.num_heads, self.key_dim, self.value_dim
        out = self._output_shape
        out = query_shape[-1] if out is None else (out if isinstance(out, int) else out[0])
        def built(layer: EinsumDense, shape: tuple) -> EinsumDense:
            with layer.name_scope:
                layer.build(shape)
            return layer

        self._query_dense = built(self._proj("abc,cde->abde", (None, h, kd), "de", "query"), query_shape)
        self._key_dense = built(self._proj("abc,cde->abde", (None, h, kd), "de", "key"), key_shape)
        self._value_dense = built(self._proj("abc,cde->abde", (None, h, vd), "de", "value"), value_shape)
        # Keras 3's _build_attention: a Softmax and a Dropout layer (their auto-names, the Dropout's seed generator
        # and masks, and their empty groups in a weights file); kept off the tracked sublayers (no weights)
        from tapeflow.keras.layers.core import Dropout, Softmax

        object.__setattr__(self, "_softmax", Softmax(axis=-1, dtype=self.dtype_policy))
        object.__setattr__(self, "_dropout_layer", Dropout(rate=self.dropout, seed=self.seed, dtype=self.dtype_policy))
        self._output_dense = built(self._proj("abcd,cde->abe", (None, out), "e", "attention_output"),
                                   (*query_shape[:-1], h, vd))
        self.built = True

    @property
    def query_dense(self) -> EinsumDense:
        return self._query_dense

    @property
    def key_dense(self) -> EinsumDense:
        return self._key_dense

    @property
    def value_dense(self) -> EinsumDense:
        return self._value_dense

    @property
    def output_dense(self) -> EinsumDense:
        return self._output_dense

    def _maybe_build(self, inputs: Any) -> None:
        if not self.built:
            self.build(tuple(inputs._shape_tuple()))

    def __call__(self, query: Any, value: Any = None, key: Any = None, **kwargs: Any) -> Any:
        if value is None:
            raise TypeError("MultiHeadAttention.__call__() missing 1 required positional argument: 'value'")
        if not self.built:
            shape = lambda t: tuple(t.shape) if not hasattr(t, "_shape_tuple") else tuple(t._shape_tuple())
            self.build(shape(query), shape(value), None if key is None else shape(key))
        if key is not None:
            kwargs["key"] = key
        return super().__call__(query, value, **kwargs)

    def call(
        self,
        query: Tensor,
        value: Tensor,
        key: Any = None,
        query_mask: Any = None,
        value_mask: Any = None,
        key_mask: Any = None,
        attention_mask: Any = None,
        return_attention_scores: bool = False,
        training: Any = None,
        use_causal_mask: bool = False,
    ) -> Any:
        value = self._convert(value)
        key_given = key is not None
        key = value if key is None else self._convert(key)
        query_mask = _masking.get_mask(query) if query_mask is None else query_mask
        value_mask = _masking.get_mask(value) if value_mask is None else value_mask
        if key_given and key_mask is None and key is not value:
            key_mask = _masking.get_mask(key)
        # Keras 3.15 deletes the masks riding on its inputs ("handled at the level of the layer"): a later call on
        # the same tensors sees none (a custom layer built by its first call attends unmasked, as in TF)
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
        if attention_mask is not None:
            am = mo.cast(attention_mask, "bool")
            mask = am if mask is None else mo.logical_and(am, mask)
        q = self._query_dense(query)
        k = self._key_dense(key)
        v = self._value_dense(value)
        q = q * (1.0 / math.sqrt(float(self.key_dim)))
        scores = _einsum("aecd,abcd->acbe", k, q)  # (batch, heads, T, S)
        probs = _masked_softmax(scores, None if mask is None else ao.expand_dims(mask, 1))
        out = _einsum("acbe,aecd->abcd", self._dropout_layer(probs, training=training), v)
        out = self._output_dense(out)
        if query_mask is not None:
            _masking.set_mask(out, query_mask)
        if return_attention_scores:
            return out, probs
        return out

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return None  # call() puts the query's mask on the output itself

    def get_config(self) -> dict:
        return {
            **base_config(self),
            "num_heads": self.num_heads,
            "key_dim": self.key_dim,
            "value_dim": self.value_dim,
            "dropout": self.dropout,
            "use_bias": self.use_bias,
            "use_gate": False,
            "output_shape": self._output_shape,
            "attention_axes": (1,) if self.built else self._attention_axes,
            "sliding_window": None,
            "kernel_initializer": serialize(self.kernel_initializer),
            "bias_initializer": serialize(self.bias_initializer),
            "kernel_regularizer": serialize(self.kernel_regularizer),
            "bias_regularizer": serialize(self.bias_regularizer),
            "activity_regularizer": serialize(self.activity_regularizer),
            "kernel_constraint": serialize(self.kernel_constraint),
            "bias_constraint": serialize(self.bias_constraint),
            "seed": self.seed,
        }


class Attention(Layer):
    """Dot-product (Luong) attention: ``layer([query, value])`` or ``[query, value, key]``;
    ``score_mode="concat"`` scores with ``tanh(q + k)`` instead; ``use_scale`` learns a scalar."""

    _supports_masking = True

    def __init__(
        self, use_scale: bool = False, score_mode: str = "dot", dropout: float = 0.0, seed: Any = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        if score_mode not in ("dot", "concat"):
            raise ValueError(
                f"Invalid value for argument score_mode. Expected one of {{'dot', 'concat'}}. "
                f"Received: score_mode={score_mode}"
            )
        self.use_scale, self.score_mode, self.dropout, self.seed = bool(use_scale), score_mode, float(dropout), seed
        self.scale = self.concat_score_weight = None
        if self.dropout > 0 and seed is None:  # Keras 3's SeedGenerator takes a Python-random seed here
            from tapeflow.keras import initializers

            initializers._default_seed()

    def build(self, input_shape: Any = None) -> None:
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(), initializer="ones")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(name="concat_score_weight", shape=(), initializer="ones")
        self.built = True

    def _scores(self, q: Tensor, k: Tensor) -> Tensor:
        if self.score_mode == "dot":
            s = mo.matmul(q, k, transpose_b=True)
            return s * self.scale.value() if self.scale is not None else s
        qk = ao.expand_dims(q, -2) + ao.expand_dims(k, -3)
        if self.scale is not None:
            return self.concat_score_weight.value() * mo.reduce_sum(mo.tanh(self.scale.value() * qk), axis=-1)
        return self.concat_score_weight.value() * mo.reduce_sum(mo.tanh(qk), axis=-1)

    def _validate(self, inputs: Any, mask: Any) -> None:
        name = type(self).__name__
        if not isinstance(inputs, (list, tuple)) or len(inputs) not in (2, 3):
            raise ValueError(
                f"{name} layer must be called on a list of inputs, namely [query, value] or "
                f"[query, value, key]. Received: inputs={inputs}."
            )
        if mask is not None and (not isinstance(mask, (list, tuple)) or len(mask) not in (2, 3)):
            raise ValueError(
                f"{name} layer mask must be a list of length 2, namely [query_mask, value_mask]. Received: mask={mask}."
            )

    def call(
        self,
        inputs: Any,
        mask: Any = None,
        training: Any = None,
        return_attention_scores: bool = False,
        use_causal_mask: bool = False,
    ) -> Any:
        self._validate(inputs, mask)
        q, v = inputs[0], inputs[1]
        k = inputs[2] if len(inputs) > 2 else v
        q_mask = mask[0] if mask else None
        v_mask = mask[1] if mask else None
        scores = self._scores(q, k)
        smask = None
        if v_mask is not None:
            smask = ao.expand_dims(mo.cast(v_mask, "bool"), -2)
        if use_causal_mask:
            c = _causal_mask(_dim(scores, 1), _dim(scores, 2))
            smask = c if smask is None else mo.logical_and(smask, c)
        if smask is not None:
            scores = scores - 1e9 * mo.cast(mo.logical_not(smask), scores.dtype)
        weights = nn.softmax(scores, axis=-1)
        result = mo.matmul(_dropout(weights, self.dropout, training, self.seed), v)
        if q_mask is not None:
            result = result * ao.expand_dims(mo.cast(q_mask, result.dtype), -1)
        if return_attention_scores:
            return result, weights
        return result

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        if mask is None or mask[0] is None:
            return None
        return mask[0]

    def get_config(self) -> dict:
        return {
            **base_config(self),
            "use_scale": self.use_scale,
            "score_mode": self.score_mode,
            "dropout": self.dropout,
            "seed": self.seed,
        }


class AdditiveAttention(Attention):
    """Additive (Bahdanau) attention: scores ``sum(scale * tanh(q + k))``; ``scale`` is a learned
    vector of the feature size when ``use_scale`` (the default)."""

    def __init__(self, use_scale: bool = True, dropout: float = 0.0, **kwargs: Any) -> None:
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape: Any = None) -> None:
        dim = (
            input_shape[1][-1]
            if isinstance(input_shape, (list, tuple)) and input_shape and isinstance(input_shape[0], (list, tuple))
            else None
        )
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(dim,), initializer="glorot_uniform")
        self.built = True

    def _scores(self, q: Tensor, k: Tensor) -> Tensor:
        t = mo.tanh(ao.expand_dims(q, -2) + ao.expand_dims(k, -3))
        if self.scale is not None:
            t = self.scale.value() * t
        return mo.reduce_sum(t, axis=-1)

    def get_config(self) -> dict:
        cfg = super().get_config()
        del cfg["score_mode"]
        return cfg
