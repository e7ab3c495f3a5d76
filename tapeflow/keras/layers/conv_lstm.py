"""Keras 3's convolutional LSTMs: ``ConvLSTM1D``, ``ConvLSTM2D``, ``ConvLSTM3D`` (Shi et al., 2015).

An LSTM whose input and recurrent transformations are convolutions: over ``(batch, time, *spatial, channels)``
sequences (``channels_first``: ``(batch, time, channels, *spatial)``) the cell's state ``h``/``c`` has the
shape of one convolution output. Weights are Keras's: ``kernel`` ``kernel_size + (channels, 4 * filters)``,
``recurrent_kernel`` ``kernel_size + (filters, 4 * filters)`` and ``bias`` ``(4 * filters,)``, gates in the order
i, f, c, o, in a sub-layer ``conv_lstm_cell``.
"""

from __future__ import annotations

from typing import Any

from tapeflow.framework import nest
from tapeflow.framework.tensor import Tensor
from tapeflow.keras import activations, constraints, initializers, regularizers
from tapeflow.keras import backend as _backend
from tapeflow.keras.layers.base import Layer
from tapeflow.keras.layers.conv_nd import ntuple, serialize
from tapeflow.keras.saving.serialization import base_config
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo

__all__ = ["ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D"]


def _conv_length(size: int | None, k: int, stride: int, padding: str, dilation: int) -> int | None:
    if size is None:
        return None
    k = (k - 1) * dilation + 1
    return (size + stride - 1) // stride if padding == "same" else (size - k) // stride + 1


class ConvLSTMCell(Layer):
    """One step of a convolutional LSTM (Keras 3's ``ConvLSTMCell``): ``cell(x_t, [h, c]) -> (h, [h, c])``."""

    def __init__(self, rank: int, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: str | None = None, dilation_rate: Any = 1, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", recurrent_initializer: Any = "orthogonal",
                 bias_initializer: Any = "zeros", unit_forget_bias: bool = True, kernel_regularizer: Any = None,
                 recurrent_regularizer: Any = None, bias_regularizer: Any = None, kernel_constraint: Any = None,
                 recurrent_constraint: Any = None, bias_constraint: Any = None, dropout: float = 0.0,
                 recurrent_dropout: float = 0.0, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        from tapeflow.keras.random import SeedGenerator

        self.seed = seed
        self.seed_generator = SeedGenerator(seed=seed)
        self.rank = rank
        if rank > 3:
            raise ValueError(f"Rank {rank} convolutions are not currently implemented. Received: rank={rank}")
        self.filters = filters
        self.kernel_size = ntuple(kernel_size, rank, "kernel_size")
        self.strides = ntuple(strides, rank, "strides", allow_zero=True)
        padding = str(padding).lower()
        if padding not in ("valid", "same", "causal"):
            raise ValueError("The `padding` argument must be one of 'valid', 'same', or 'causal'. "
                             f"Received: padding={padding}")
        self.padding = padding
        self.data_format = _backend.image_data_format() if data_format is None else data_format
        if self.data_format not in ("channels_first", "channels_last"):
            raise ValueError("The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
                             f"Received: data_format={data_format}")
        self.dilation_rate = ntuple(dilation_rate, rank, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("Specifying `strides > 1` is not compatible with `dilation_rate > 1`. Please provide "
                             f"`strides=1` or `dilation_rate=1`. Received: strides={self.strides} and "
                             f"dilation_rate={self.dilation_rate}")
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.unit_forget_bias = unit_forget_bias
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.dropout = min(1.0, max(0.0, dropout))
        self.recurrent_dropout = min(1.0, max(0.0, recurrent_dropout))
        self.state_size = -1
        self._dropout_mask = self._recurrent_dropout_mask = None

    def build(self, inputs_shape: Any, states_shape: Any = None) -> None:
        inputs_shape = tuple(inputs_shape)
        if self.data_format == "channels_first":
            channel_axis, self.spatial_dims = 1, inputs_shape[2:]
        else:
            channel_axis, self.spatial_dims = -1, inputs_shape[1:-1]
        if None in self.spatial_dims:
            raise ValueError("ConvLSTM layers only support static input shapes for the spatial dimension. "
                             f"Received invalid input shape: input_shape={inputs_shape}")
        if inputs_shape[channel_axis] is None:
            raise ValueError("The channel dimension of the inputs (last axis) should be defined. Found None. Full "
                             f"input shape received: input_shape={inputs_shape}")
        self.input_dim = input_dim = inputs_shape[channel_axis]
        self.kernel_shape = self.kernel_size + (input_dim, self.filters * 4)
        self.kernel = self.add_weight(shape=self.kernel_shape, initializer=self.kernel_initializer, name="kernel",
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            shape=self.kernel_size + (self.filters, self.filters * 4), initializer=self.recurrent_initializer,
            name="recurrent_kernel", regularizer=self.recurrent_regularizer, constraint=self.recurrent_constraint)
        if self.use_bias:
            init = self.bias_initializer
            if self.unit_forget_bias:
                n, base = self.filters, self.bias_initializer

                class _ForgetBias(initializers.Initializer):
                    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Tensor:
                        return ao.concat([base((n,), dtype=dtype), ao.ones((n,), dtype=dtype or "float32"),
                                          base((2 * n,), dtype=dtype)], axis=0)

                init = _ForgetBias()
            self.bias = self.add_weight(shape=(self.filters * 4,), name="bias", initializer=init,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        else:
            self.bias = None
        self.built = True

    def _masks(self, x: Tensor, rate: float, attr: str) -> list:
        """Keras's DropoutRNNCell: four masks (one per gate) drawn at a sequence's first step, then reused."""
        masks = getattr(self, attr)
        if masks is None:
            from tapeflow.keras import random

            ones = ao.ones_like(x)
            masks = [random.dropout(ones, rate=rate, seed=self.seed_generator) for _ in range(4)]
            object.__setattr__(self, attr, masks)
        return masks

    def reset_dropout_mask(self) -> None:
        object.__setattr__(self, "_dropout_mask", None)

    def reset_recurrent_dropout_mask(self) -> None:
        object.__setattr__(self, "_recurrent_dropout_mask", None)

    def call(self, inputs: Tensor, states: Any, training: Any = False) -> tuple:
        h_tm1, c_tm1 = states[0], states[1]
        if training and 0.0 < self.dropout < 1.0:
            xs = [inputs * m for m in self._masks(inputs, self.dropout, "_dropout_mask")]
        else:
            xs = [inputs] * 4
        if training and 0.0 < self.recurrent_dropout < 1.0:
            hs = [h_tm1 * m for m in self._masks(h_tm1, self.recurrent_dropout, "_recurrent_dropout_mask")]
        else:
            hs = [h_tm1] * 4
        kernels = ao.split(self.kernel.value(), 4, axis=self.rank + 1)
        recurrent = ao.split(self.recurrent_kernel.value(), 4, axis=self.rank + 1)
        biases = ao.split(self.bias.value(), 4) if self.use_bias else [None] * 4
        x_i, x_f, x_c, x_o = (self.input_conv(x, k, b, padding=self.padding) for x, k, b in zip(xs, kernels, biases))
        h_i, h_f, h_c, h_o = (self.recurrent_conv(h, k) for h, k in zip(hs, recurrent))
        i = self.recurrent_activation(x_i + h_i)
        f = self.recurrent_activation(x_f + h_f)
        c = f * c_tm1 + i * self.activation(x_c + h_c)
        o = self.recurrent_activation(x_o + h_o)
        h = o * self.activation(c)
        return h, [h, c]

    def input_conv(self, x: Tensor, w: Tensor, b: Tensor | None = None, padding: str = "valid") -> Tensor:
        from tapeflow.keras import ops

        out = ops.conv(x, w, strides=self.strides, padding=padding, data_format=self.data_format,
                       dilation_rate=self.dilation_rate)
        if b is not None:
            shape = ((1,) * (self.rank + 1) + (self.filters,) if self.data_format == "channels_last"
                     else (1, self.filters) + (1,) * self.rank)
            out = out + ao.reshape(b, shape)
        return out

    def recurrent_conv(self, x: Tensor, w: Tensor) -> Tensor:
        from tapeflow.keras import ops

        return ops.conv(x, w, strides=(1,) * self.rank, padding="same", data_format=self.data_format)

    def compute_output_shape(self, inputs_shape: Any, states_shape: Any = None) -> tuple:
        inputs_shape = tuple(inputs_shape)
        spatial = inputs_shape[2:] if self.data_format == "channels_first" else inputs_shape[1:-1]
        out = tuple(_conv_length(s, k, st, self.padding, d)
                    for s, k, st, d in zip(spatial, self.kernel_size, self.strides, self.dilation_rate))
        shape = ((inputs_shape[0], self.filters) + out if self.data_format == "channels_first"
                 else (inputs_shape[0],) + out + (self.filters,))
        return shape, [shape, shape]

    def get_initial_state(self, batch_size: Any = None) -> list:
        if self.data_format == "channels_last":
            input_shape = (1,) + tuple(self.spatial_dims) + (self.input_dim,)
        else:
            input_shape = (1, self.input_dim) + tuple(self.spatial_dims)
        state = list(self.compute_output_shape(input_shape)[0])
        state[0] = batch_size
        shape = ao.stack([mo.cast(d, "int32") for d in state]) if isinstance(batch_size, Tensor) else state
        return [ao.zeros(shape, dtype=self.compute_dtype), ao.zeros(shape, dtype=self.compute_dtype)]

    def get_config(self) -> dict:
        return {**base_config(self), "filters": self.filters, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate, "activation": activations.serialize(self.activation),
                "recurrent_activation": activations.serialize(self.recurrent_activation),
                "use_bias": self.use_bias, "kernel_initializer": serialize(self.kernel_initializer),
                "recurrent_initializer": serialize(self.recurrent_initializer),
                "bias_initializer": serialize(self.bias_initializer), "unit_forget_bias": self.unit_forget_bias,
                "kernel_regularizer": serialize(self.kernel_regularizer),
                "recurrent_regularizer": serialize(self.recurrent_regularizer),
                "bias_regularizer": serialize(self.bias_regularizer),
                "kernel_constraint": serialize(self.kernel_constraint),
                "recurrent_constraint": serialize(self.recurrent_constraint),
                "bias_constraint": serialize(self.bias_constraint), "dropout": self.dropout,
                "recurrent_dropout": self.recurrent_dropout, "seed": self.seed}


_CELL_ARGS = ("filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate", "activation",
              "recurrent_activation", "use_bias", "kernel_initializer", "recurrent_initializer", "bias_initializer",
              "unit_forget_bias", "kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
              "kernel_constraint", "recurrent_constraint", "bias_constraint", "dropout", "recurrent_dropout")


class _ConvLSTM(Layer):
    """The recurrent layer over a ``ConvLSTMCell`` (Keras 3's ``ConvLSTM``, an ``RNN``): ``return_sequences``,
    ``return_state``, ``go_backwards``, ``stateful`` and Keras masks ``(batch, time)`` (masked steps carry the
    previous output and states over), as Keras's RNN."""

    _supports_masking = True
    rank = 2

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: str | None = None, dilation_rate: Any = 1, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", recurrent_initializer: Any = "orthogonal",
                 bias_initializer: Any = "zeros", unit_forget_bias: bool = True, kernel_regularizer: Any = None,
                 recurrent_regularizer: Any = None, bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, recurrent_constraint: Any = None, bias_constraint: Any = None,
                 dropout: float = 0.0, recurrent_dropout: float = 0.0, seed: int | None = None,
                 return_sequences: bool = False, return_state: bool = False, go_backwards: bool = False,
                 stateful: bool = False, unroll: bool = False, zero_output_for_mask: bool = False,
                 **kwargs: Any) -> None:
        cell = ConvLSTMCell(rank=self.rank, filters=filters, kernel_size=kernel_size, strides=strides,
                            padding=padding, data_format=data_format, dilation_rate=dilation_rate,
                            activation=activation, recurrent_activation=recurrent_activation, use_bias=use_bias,
                            kernel_initializer=kernel_initializer, recurrent_initializer=recurrent_initializer,
                            bias_initializer=bias_initializer, unit_forget_bias=unit_forget_bias,
                            kernel_regularizer=kernel_regularizer, recurrent_regularizer=recurrent_regularizer,
                            bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
                            recurrent_constraint=recurrent_constraint, bias_constraint=bias_constraint,
                            dropout=dropout, recurrent_dropout=recurrent_dropout, seed=seed,
                            name="conv_lstm_cell", dtype=kwargs.get("dtype"))
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.cell = cell
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.stateful = bool(go_backwards), bool(stateful)
        # unroll: kept in the config as Keras; the steps run the same either way (one op per step eagerly)
        self.unroll, self.zero_output_for_mask = bool(unroll), bool(zero_output_for_mask)
        self.states = None

    def __getattr__(self, name: str) -> Any:
        if name in _CELL_ARGS:  # Keras's read-only properties forwarding to the cell
            return getattr(self.__dict__["cell"], name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def build(self, sequences_shape: Any, initial_state_shape: Any = None) -> None:
        sequences_shape = tuple(sequences_shape)
        if len(sequences_shape) != self.rank + 3:
            raise ValueError(f"Input 0 with name 'None' of layer '{self.name}' is incompatible with the layer: "
                             f"expected ndim={self.rank + 3}, found ndim={len(sequences_shape)}. Full shape "
                             f"received: {sequences_shape}")
        step_shape = (sequences_shape[0],) + sequences_shape[2:]
        if not self.cell.built:
            with self.cell.name_scope:
                self.cell.build(step_shape)
            self.cell.built = True
        if self.stateful:
            if sequences_shape[0] is None:
                raise ValueError("When using `stateful=True` in a RNN, the batch size must be static. Found dynamic "
                                 f"batch size: sequence.shape={sequences_shape}")
            from tapeflow.framework.variables import Variable

            init = self.cell.get_initial_state(sequences_shape[0])
            self.states = [Variable(v, trainable=False, name=f"{self.name}/rnn_state") for v in init]
        self.built = True

    def reset_state(self) -> None:
        """Zeroes the kept states of a ``stateful`` layer."""
        if self.states is not None:
            for v in self.states:
                v.assign(ao.zeros_like(v.value()))

    reset_states = reset_state

    def get_initial_state(self, batch_size: Any) -> list:
        return self.cell.get_initial_state(batch_size=batch_size)

    def call(self, sequences: Tensor, initial_state: Any = None, mask: Any = None, training: Any = False) -> Any:
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        shape = sequences._shape_tuple()
        if initial_state is None:
            if self.stateful:
                initial_state = [v.value() for v in self.states]
            else:
                batch = shape[0] if shape[0] is not None else ao.shape(sequences)[0]
                initial_state = self.get_initial_state(batch)
        initial_state = [mo.cast(self._convert(s), self.compute_dtype) for s in nest.flatten(initial_state)]
        try:
            last, outputs, states = self._loop(sequences, initial_state, mask, training)
        finally:
            self.cell.reset_dropout_mask()
            self.cell.reset_recurrent_dropout_mask()
        if self.stateful:
            for v, s in zip(self.states, states):
                v.assign(s)
        output = outputs if self.return_sequences else last
        if self.return_state:
            return (output, *states)
        return output

    def _loop(self, x: Tensor, init: list, mask: Any, training: Any) -> tuple:
        from tapeflow.framework.context import state as _state

        rank = len(x._shape_tuple())
        perm = (1, 0) + tuple(range(2, rank))
        x_tm = ao.transpose(x, perm)
        m_tm = None
        if mask is not None:  # (time, batch, 1, ..., 1)
            m_tm = ao.transpose(mo.cast(mask, "bool"), (1, 0))
            for _ in range(rank - 2):
                m_tm = ao.expand_dims(m_tm, -1)
        steps = x._shape_tuple()[1]
        graph = _state.graph is not None
        if steps is None and not graph:
            steps = int(ao.shape(x).numpy()[1])
        if steps is not None:
            rows = ao.unstack(x_tm, num=steps)
            mrows = ao.unstack(m_tm, num=steps) if m_tm is not None else None
            order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
            states, prev, outs = list(init), None, []
            out = None
            for t in order:
                out, new = self.cell(rows[t], states, training=training)
                if mrows is not None:
                    if prev is None:
                        prev = ao.zeros_like(out)
                    out = mo.where(mrows[t], out, ao.zeros_like(out) if self.zero_output_for_mask else prev)
                    new = [mo.where(mrows[t], a, b) for a, b in zip(new, states)]
                prev, states = out, list(new)
                if self.return_sequences:
                    outs.append(out)
            if steps == 0:
                raise ValueError(f"Layer '{self.name}': the input sequence has 0 time steps ({x.shape}).")
            seq = ao.transpose(ao.stack(outs), perm) if self.return_sequences else None
            return out, seq, states
        # inside tf.function with an unknown number of steps: one While op over them
        from tapeflow.graph.control_flow import while_loop
        from tapeflow.graph.tensor_array import TensorArray

        n = ao.shape(x)[1]
        zero_out = ao.zeros_like(init[0])

        def body(i: Any, *loop_vars: Any) -> tuple:
            prev_out, states = loop_vars[0], list(loop_vars[1:3])
            t = (n - 1 - i) if self.go_backwards else i
            out, new = self.cell(ao.gather(x_tm, t), states, training=training)
            if m_tm is not None:
                m = ao.gather(m_tm, t)
                out = mo.where(m, out, zero_out if self.zero_output_for_mask else prev_out)
                new = [mo.where(m, a, b) for a, b in zip(new, states)]
            arrays = [ta.write(i, out) for ta in loop_vars[3:]]
            return (i + 1, out, *new, *arrays)

        arrays = [TensorArray(zero_out.dtype, size=n)] if self.return_sequences else []
        res = while_loop(lambda i, *_: mo.less(i, n), body, (0, zero_out, *init, *arrays))
        seq = ao.transpose(res[4].stack(), perm) if self.return_sequences else None
        return res[1], seq, list(res[2:4])

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        out_mask = mask if self.return_sequences else None
        return [out_mask, None, None] if self.return_state else out_mask

    def compute_output_shape(self, sequences_shape: Any, initial_state_shape: Any = None) -> Any:
        sequences_shape = tuple(sequences_shape)
        batch, steps = sequences_shape[0], sequences_shape[1]
        state = self.cell.compute_output_shape((batch,) + sequences_shape[2:])[0][1:]
        out = (batch, steps) + state if self.return_sequences else (batch,) + state
        if self.return_state:
            return out, (batch,) + state, (batch,) + state
        return out

    def get_config(self) -> dict:
        c = self.cell
        return {**base_config(self), "return_sequences": self.return_sequences, "return_state": self.return_state,
                "go_backwards": self.go_backwards, "stateful": self.stateful, "unroll": self.unroll,
                "zero_output_for_mask": self.zero_output_for_mask, "filters": c.filters,
                "kernel_size": c.kernel_size, "strides": c.strides, "padding": c.padding,
                "data_format": c.data_format, "dilation_rate": c.dilation_rate,
                "activation": activations.serialize(c.activation),
                "recurrent_activation": activations.serialize(c.recurrent_activation), "use_bias": c.use_bias,
                "kernel_initializer": serialize(c.kernel_initializer),
                "recurrent_initializer": serialize(c.recurrent_initializer),
                "bias_initializer": serialize(c.bias_initializer), "unit_forget_bias": c.unit_forget_bias,
                "kernel_regularizer": serialize(c.kernel_regularizer),
                "recurrent_regularizer": serialize(c.recurrent_regularizer),
                "bias_regularizer": serialize(c.bias_regularizer),
                "activity_regularizer": serialize(self.activity_regularizer),
                "kernel_constraint": serialize(c.kernel_constraint),
                "recurrent_constraint": serialize(c.recurrent_constraint),
                "bias_constraint": serialize(c.bias_constraint), "dropout": c.dropout,
                "recurrent_dropout": c.recurrent_dropout, "seed": c.seed}

    @classmethod
    def from_config(cls, config: dict) -> _ConvLSTM:
        return cls(**config)


class ConvLSTM1D(_ConvLSTM):
    """A convolutional LSTM over sequences of 1-D signals ``(batch, time, length, channels)``; ``filters``
    ``kernel_size`` (an int or a 1-tuple) and the LSTM's gates as Keras 3's ``ConvLSTM1D``."""

    rank = 1


class ConvLSTM2D(_ConvLSTM):
    """A convolutional LSTM over sequences of images ``(batch, time, rows, cols, channels)``, as Keras 3's
    ``ConvLSTM2D``:

    >>> layer = tf.keras.layers.ConvLSTM2D(8, 3, padding="same", return_sequences=True)
    >>> layer(np.zeros((2, 5, 16, 16, 1), "float32")).shape
    TensorShape([2, 5, 16, 16, 8])
    """

    rank = 2


class ConvLSTM3D(_ConvLSTM):
    """A convolutional LSTM over sequences of volumes ``(batch, time, d1, d2, d3, channels)``, as Keras 3's
    ``ConvLSTM3D``."""

    rank = 3
