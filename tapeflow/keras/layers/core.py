"""Core layers: Dense, Flatten, Reshape, Dropout, Activation, ReLU, Softmax,
Embedding, Lambda."""

from __future__ import annotations

import math
from typing import Any
from collections.abc import Callable

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.keras import activations, constraints, initializers, regularizers
from tapeflow.keras.layers.base import KerasTensor, Layer
from tapeflow.keras.saving.serialization import base_config, serialize_keras_object
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo

__all__ = ["Dense", "Flatten", "Reshape", "Dropout", "Activation", "ReLU", "LeakyReLU", "Softmax", "Embedding",
           "Lambda"]


class Dense(Layer):
    """``activation(inputs @ kernel + bias)`` on the last axis.

    >>> layer = tf.keras.layers.Dense(3)
    >>> layer(tf.ones((2, 4))).shape
    TensorShape([2, 3])
    """

    _supports_masking = True

    def __init__(self, units: int, activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None, lora_rank: Any = None,
                 lora_alpha: Any = None, quantization_config: Any = None, **kwargs: Any) -> None:
        # Before the layer takes a name, as Keras 3; a Python int only (a NumPy integer is refused, as there)
        if not isinstance(units, int) or units <= 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive integer. "
                             f"Received: units={units}")
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if lora_rank or quantization_config is not None:
            raise NotImplementedError("Dense: LoRA (lora_rank) and quantization (quantization_config) are not "
                                      "implemented in tapeflow")
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)

    def _check_min_ndim(self, shape: Any) -> None:
        if len(shape) < 2:
            raise ValueError(f"Input 0 with name 'None' of layer '{self.name}'"
                             f" is incompatible with the layer: expected min_ndim=2, "
                             f"found ndim={len(shape)}. Full shape received: {tuple(shape)}")

    def build(self, input_shape: Any) -> None:
        self._check_min_ndim(tuple(input_shape))
        in_dim = input_shape[-1]
        if in_dim is None:
            raise ValueError(f"Dense layer '{self.name}': the last dimension of the inputs must be known, "
                             f"got input shape {input_shape}.")
        self.kernel = self.add_weight(name="kernel", shape=(in_dim, self.units), initializer=self.kernel_initializer,
                                      constraint=self.kernel_constraint, regularizer=self.kernel_regularizer)
        self.bias = self.add_weight(name="bias", shape=(self.units,), initializer=self.bias_initializer,
                                    constraint=self.bias_constraint,
                                    regularizer=self.bias_regularizer) if self.use_bias else None
        self.built = True

    def call(self, inputs: Tensor) -> Tensor:
        if not isinstance(inputs, Tensor) and hasattr(inputs, "indices"):  # a SparseTensor
            return self._call_sparse(inputs)
        self._check_min_ndim(inputs._shape_tuple())
        if inputs._shape_tuple()[-1] != self.kernel._shape_tuple()[0]:
            raise ValueError(
                f"Input 0 with name 'None' of layer '{self.name}'"
                f" is incompatible with the layer: expected axis -1 of input shape "
                f"to have value {self.kernel._shape_tuple()[0]}, but received input with shape {inputs.shape}"
            )
        if inputs.dtype.is_integer or inputs.dtype.is_bool:  # Keras promotes them (a multi_hot TextVectorization)
            inputs = mo.cast(inputs, self._compute)
        y = mo.matmul(inputs, self.kernel.value())
        if self.bias is not None:
            y = mo.add(y, self.bias.value())
        return self.activation(y)

    def _call_sparse(self, inputs: Any) -> Tensor:
        from tapeflow.ops import sparse

        kernel = self.kernel.value()
        if inputs.dtype != kernel.dtype:
            inputs = inputs.with_values(mo.cast(inputs.values, kernel.dtype))
        y = sparse.sparse_dense_matmul(inputs, kernel)
        if self.bias is not None:
            y = mo.add(y, self.bias.value())
        return self.activation(y)

    def get_config(self) -> dict:
        ser = serialize_keras_object
        return {**base_config(self), "units": self.units, "activation": activations.serialize(self.activation),
                "use_bias": self.use_bias, "kernel_initializer": ser(self.kernel_initializer),
                "bias_initializer": ser(self.bias_initializer), "kernel_regularizer": ser(self.kernel_regularizer),
                "bias_regularizer": ser(self.bias_regularizer), "kernel_constraint": ser(self.kernel_constraint),
                "bias_constraint": ser(self.bias_constraint), "quantization_config": None}


class Flatten(Layer):
    """Flattens all axes but the batch axis."""

    def __init__(self, data_format: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last", "channels_first"):
            raise ValueError(f"The `data_format` argument must be one of {{'channels_first', 'channels_last'}}. "
                             f"Received: data_format={data_format}")
        self.data_format = data_format or "channels_last"

    def get_config(self) -> dict:
        return {**base_config(self), "data_format": self.data_format}

    def call(self, inputs: Tensor) -> Tensor:
        shape = inputs._shape_tuple()
        if self.data_format == "channels_first" and len(shape) > 2:
            # Keras: the channels axis goes last first, so the flat order is channels_last's
            inputs = ao.transpose(inputs, (0, *range(2, len(shape)), 1))
            shape = inputs._shape_tuple()
        rest = shape[1:]
        if None in rest:
            if shape[0] is None:  # batch and other dims unknown: the run-time batch size
                from tapeflow.ops import shape_ops

                return shape_ops.dynamic_reshape(inputs, [shape_ops.shape_of(inputs)[0], -1])
            return ao.reshape(inputs, (shape[0], -1))
        return ao.reshape(inputs, (-1, int(math.prod(rest))))


class Reshape(Layer):
    """Reshapes the non-batch axes to ``target_shape`` (one entry may be -1)."""

    _keras_built_at_init = True  # Keras writes no build_config for it

    def __init__(self, target_shape: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)

    def get_config(self) -> dict:
        return {**base_config(self), "target_shape": self.target_shape}

    def call(self, inputs: Tensor) -> Tensor:
        n = inputs._shape_tuple()[0]
        return ao.reshape(inputs, (-1 if n is None else n,) + self.target_shape)


class Dropout(Layer):
    """Zeroes a fraction ``rate`` of the inputs and scales the rest by
    1/(1-rate), only when called with ``training=True``."""

    _keras_built_at_init = True  # Keras writes no build_config for it
    _supports_masking = True

    def __init__(self, rate: float, noise_shape: Any = None, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
                             f"Received: rate={rate}")
        self.rate, self.seed = float(rate), seed
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        if self.rate > 0:
            # Keras 3's SeedGenerator(seed): state [seed, 0] (an unseeded layer takes a Python-random seed now,
            # as Keras's make_default_seed); each training call draws TF's stateless dropout of [seed, counter]
            # and advances the counter, so masks are Keras's, eagerly and inside tf.function.
            from tapeflow.framework.variables import Variable

            start = initializers._default_seed() if seed is None else int(seed)
            object.__setattr__(self, "_seed_state", Variable(np.array([start, 0], np.int64), trainable=False,
                                                             name="seed_generator_state"))

    def call(self, inputs: Tensor, training: Any = None) -> Tensor:
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            return ao.zeros_like(inputs)
        from tapeflow.ops.nn import stateless_dropout

        state_var = self._seed_state
        seed = state_var.value()
        state_var.assign_add(np.array([0, 1], np.int64))
        seed = mo.cast(mo.floormod(seed, np.int64(2**31 - 2)), "int32")  # Keras's _cast_seed
        noise_shape = None
        if self.noise_shape is not None:
            full = ao.shape(inputs)
            noise_shape = ao.stack([full[i] if n is None else n for i, n in enumerate(self.noise_shape)])
        from tapeflow.framework import distribution_hooks

        strategy = distribution_hooks.strategy
        if strategy is not None and (self.noise_shape is None or self.noise_shape[0] is None):
            return _dropout_rows_of_global_batch(inputs, self.rate, seed, noise_shape, strategy._rows.value())
        return stateless_dropout(inputs, self.rate, seed=seed, noise_shape=noise_shape)

    def get_config(self) -> dict:
        return {**base_config(self), "rate": self.rate, "seed": self.seed, "noise_shape": self.noise_shape}


def _dropout_rows_of_global_batch(inputs: Tensor, rate: float, seed: Tensor, noise_shape: Any, rows: Tensor) -> Tensor:
    """Dropout of this process's rows of a global batch split over processes (``rows``: its ``[start, stop)`` of
    the global batch of ``rows[2]``): the global batch's mask is drawn and this process's rows kept, so training
    gets the single-process masks. Inputs of another batch size (a dataset the program shards itself) get
    their own mask."""
    from tapeflow.ops import random_ops

    full = ao.shape(inputs, out_type="int64")
    local = full[0]
    ours = mo.equal(rows[1] - rows[0], local)
    total, start = mo.where(ours, rows[2], local), mo.where(ours, rows[0], ao.zeros_like(local))
    shape = full if noise_shape is None else mo.cast(noise_shape, "int64")
    global_shape = ao.concat([ao.reshape(total, [1]), shape[1:]], 0)
    rnd = random_ops.stateless_uniform(global_shape, seed=seed, dtype=inputs.dtype, alg="auto_select")
    begin = ao.concat([ao.reshape(start, [1]), ao.zeros_like(shape[1:])], 0)
    size = ao.concat([ao.reshape(local, [1]), -ao.ones_like(shape[1:])], 0)
    keep = mo.greater_equal(ao.slice_(rnd, begin, size), mo.cast(rate, inputs.dtype))
    scaled = mo.multiply(inputs, convert_to_tensor(1 / (1 - float(rate)), dtype=inputs.dtype))
    return mo.where(keep, scaled, ao.zeros_like(inputs))


class Activation(Layer):
    _keras_built_at_init = True  # Keras writes no build_config for it
    _supports_masking = True

    def __init__(self, activation: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs: Tensor) -> Tensor:
        return self.activation(inputs)


class ReLU(Layer):
    _keras_built_at_init = True  # Keras writes no build_config for it
    _supports_masking = True

    def __init__(self, max_value: float | None = None, negative_slope: float = 0.0, threshold: float = 0.0,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_value, self.negative_slope, self.threshold = max_value, negative_slope, threshold

    def call(self, inputs: Tensor) -> Tensor:
        return activations.relu(inputs, self.negative_slope, self.max_value, self.threshold)


class LeakyReLU(Layer):
    """``x`` where positive, ``negative_slope * x`` elsewhere (Keras 3's default slope: 0.3)."""

    _keras_built_at_init = True  # Keras writes no build_config for it
    _supports_masking = True

    def __init__(self, negative_slope: float = 0.3, **kwargs: Any) -> None:
        if "alpha" in kwargs:  # Keras 3 still accepts the old name
            negative_slope = kwargs.pop("alpha")
        super().__init__(**kwargs)
        if negative_slope is None or negative_slope < 0:
            raise ValueError("The negative_slope value of a Leaky ReLU layer cannot be None or negative value. "
                             f"Expected a float. Received: negative_slope={negative_slope}")
        self.negative_slope = negative_slope

    def call(self, inputs: Tensor) -> Tensor:
        return activations.relu(inputs, self.negative_slope)


class Softmax(Layer):
    _keras_built_at_init = True  # Keras writes no build_config for it
    _supports_masking = True

    def __init__(self, axis: int = -1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs: Tensor, mask: Any = None) -> Tensor:
        if mask is None:
            return activations.softmax(inputs, axis=self.axis)
        # Keras 3: masked positions get -1e9 before, and 0 after (a fully masked row is all zeros)
        mask = convert_to_tensor(mask)
        keep = mask if mask.dtype == dtypes.bool else mo.greater(mask, mo.cast(0.5, mask.dtype))
        y = activations.softmax(mo.where(keep, inputs, ao.ones_like(inputs) * -1e9), axis=self.axis)
        return mo.where(keep, y, ao.zeros_like(y))


class Embedding(Layer):
    """Looks rows of an ``(input_dim, output_dim)`` table up by integer id."""

    _autocast = False

    def __init__(self, input_dim: int, output_dim: int, embeddings_initializer: Any = "uniform",
                 embeddings_regularizer: Any = None, embeddings_constraint: Any = None, mask_zero: bool = False,
                 **kwargs: Any) -> None:
        kwargs.pop("input_length", None)
        super().__init__(**kwargs)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        for what, v in (("input_dim", input_dim), ("output_dim", output_dim)):
            if not isinstance(v, (int, np.integer)) or v <= 0:
                raise ValueError(f"`{what}` must be a positive integer. Received: {what}={v} (of type "
                                 f"{type(v).__name__}).")
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.mask_zero = mask_zero
        self.supports_masking = mask_zero  # as Keras: a mask_zero Embedding makes (and so "supports") a mask

    def get_config(self) -> dict:
        ser = serialize_keras_object
        return {**base_config(self), "input_dim": self.input_dim, "output_dim": self.output_dim,
                "embeddings_initializer": ser(self.embeddings_initializer),
                "embeddings_regularizer": ser(self.embeddings_regularizer),
                "activity_regularizer": ser(self.activity_regularizer),
                "embeddings_constraint": ser(self.embeddings_constraint), "mask_zero": self.mask_zero,
                "quantization_config": None}

    def build(self, input_shape: Any = None) -> None:
        self.embeddings = self.add_weight(name="embeddings", shape=(self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer,
                                          constraint=self.embeddings_constraint,
                                          regularizer=self.embeddings_regularizer)
        self.built = True

    def call(self, inputs: Tensor) -> Tensor:
        if not isinstance(inputs, Tensor) and hasattr(inputs, "with_flat_values"):  # a RaggedTensor
            return inputs.with_flat_values(self.call(inputs.flat_values))
        if inputs._value.dtype.kind not in "iu":
            inputs = mo.cast(inputs, "int32")
        return ao.gather(self.embeddings, inputs)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        if not self.mask_zero:
            return None
        if isinstance(inputs, KerasTensor):  # Keras's ops.not_equal: in a functional model, a NotEqual node
            from tapeflow.keras import ops

            return ops.not_equal(inputs, 0)
        return mo.not_equal(inputs, 0)


def _parameters(fn: Any) -> tuple:
    import inspect

    try:
        return tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return ()


class Lambda(Layer):
    """Wraps a function of tensors as a layer (``Lambda(lambda t: t * 2)``)."""

    def __init__(self, function: Callable, output_shape: Any = None, mask: Any = None, arguments: dict | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.function, self.arguments = function, arguments or {}
        self._output_shape, self.mask = output_shape, mask

    def get_config(self) -> dict:
        # Keras's keys: output_shape and mask only when given; a Python lambda as its bytecode
        def ser(fn: Any) -> Any:
            if callable(fn) and getattr(fn, "__name__", None) == "<lambda>":
                from tapeflow.keras.saving.serialization import func_dump

                code, defaults, closure = func_dump(fn)
                return {"class_name": "__lambda__", "config": {"code": code, "defaults": defaults, "closure": closure}}
            return serialize_keras_object(fn)

        config: dict = {"function": ser(self.function)}
        if self._output_shape is not None:
            config["output_shape"] = ser(self._output_shape)
        if self.mask is not None:
            config["mask"] = ser(self.mask)
        return {**base_config(self), **config, "arguments": serialize_keras_object(self.arguments)}

    @classmethod
    def from_config(cls, config: dict, custom_objects: dict | None = None, safe_mode: bool | None = None) -> Lambda:
        from tapeflow.keras.saving import serialization

        config = dict(config)
        mode = safe_mode if safe_mode is not None else serialization.in_safe_mode()
        for key in ("function", "output_shape", "mask"):
            entry = config.get(key)
            if isinstance(entry, dict) and entry.get("class_name") == "__lambda__":
                if mode is not False:  # unset counts as safe, as Keras (fails closed)
                    raise ValueError("Requested the deserialization of a `Lambda` layer whose `function` is a "
                                     f"Python lambda. {serialization._LAMBDA_UNSAFE}")
                config[key] = serialization.func_load(entry["config"]["code"], entry["config"].get("defaults"),
                                                      entry["config"].get("closure"))
            elif entry is not None:
                value = serialization.deserialize_keras_object(entry, custom_objects)
                if key == "output_shape" and isinstance(value, list) and all(
                        isinstance(e, (int, type(None))) for e in value):
                    value = tuple(value)
                config[key] = value
        if "arguments" in config:
            config["arguments"] = serialization.deserialize_keras_object(config["arguments"], custom_objects)
        return cls(**config)

    def call(self, inputs: Any, mask: Any = None, training: Any = None) -> Any:
        kwargs = dict(self.arguments)
        params = _parameters(self.function)  # Keras passes mask / training to a function that names them
        if "mask" in params:
            kwargs["mask"] = mask
        if "training" in params:
            kwargs["training"] = training
        return self.function(inputs, **kwargs)


from tapeflow.keras.layers import base as _base  # noqa: E402

_base._GRAPH_MASKS.add(Embedding.compute_mask)
