"""Recurrent layers, with Keras 3's arguments, weight layout and semantics:
``SimpleRNNCell``/``LSTMCell``/``GRUCell``, ``StackedRNNCells``, ``RNN``, ``SimpleRNN``, ``LSTM``, ``GRU``,
``Bidirectional`` and ``TimeDistributed``.

Weights are Keras': ``kernel`` ``(in, G*units)``, ``recurrent_kernel`` ``(units, G*units)`` and ``bias``,
with the gates in Keras' order (LSTM: i, f, c, o; GRU: z, r, h; GRU's bias is ``(2, 3*units)`` — input
and recurrent biases — with ``reset_after=True``, the default).

The time loop runs in Python eagerly, and is one ``While`` op (with gradients) inside ``tf.function``
(``unroll=True`` unrolls it instead). The built-in cells project the whole input sequence with one
matmul before the loop, so each step costs only the recurrent matmul and the gate math.
"""

from __future__ import annotations

from typing import Any

from tapeflow import nn
from tapeflow.eager.backprop import GradientTape
from tapeflow.framework import nest
from tapeflow.framework.context import state as _state
from tapeflow.framework.tensor import Tensor
from tapeflow.keras import activations, constraints, initializers, regularizers
from tapeflow.keras.layers.base import Layer
from tapeflow.keras.layers.conv_nd import serialize
from tapeflow.keras.saving.serialization import base_config
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo
from tapeflow.ops.array_extras import ensure_shape
from tapeflow.ops.nn import rnn_ops
from tapeflow.ops.registry import defgrad

__all__ = [
    "SimpleRNNCell",
    "LSTMCell",
    "GRUCell",
    "StackedRNNCells",
    "RNN",
    "SimpleRNN",
    "LSTM",
    "GRU",
    "Bidirectional",
    "TimeDistributed",
]


class _DropoutCell(Layer):
    """Shared part of the built-in cells: weights, config and the per-sequence dropout masks (one
    draw per sequence, reused at every step, as Keras' ``DropoutRNNCell``)."""

    gates = 1

    def __init__(
        self,
        units: int,
        activation: Any = "tanh",
        use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform",
        recurrent_initializer: Any = "orthogonal",
        bias_initializer: Any = "zeros",
        kernel_regularizer: Any = None,
        recurrent_regularizer: Any = None,
        bias_regularizer: Any = None,
        kernel_constraint: Any = None,
        recurrent_constraint: Any = None,
        bias_constraint: Any = None,
        dropout: float = 0.0,
        recurrent_dropout: float = 0.0,
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if not isinstance(units, int) or units <= 0:
            raise ValueError(
                f"Received an invalid value for argument `units`, expected a positive integer, got {units}."
            )
        self.units = units
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        # Keras 3's cells take a SeedGenerator(seed) (a Python-random seed when unseeded): SimpleRNNCell before
        # its initializers, LSTMCell/GRUCell after them; the same draws keep later layers' weights Keras's.
        if type(self).__name__ == "SimpleRNNCell" and seed is None:
            initializers._default_seed()
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        if type(self).__name__ != "SimpleRNNCell" and seed is None:
            initializers._default_seed()
        self.kernel_regularizer = regularizers.get(kernel_regularizer) if kernel_regularizer else None
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer) if recurrent_regularizer else None
        self.bias_regularizer = regularizers.get(bias_regularizer) if bias_regularizer else None
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
        self.seed = seed
        self._dropout_mask = self._recurrent_dropout_mask = None

    @property
    def state_size(self) -> Any:
        return self.units

    @property
    def output_size(self) -> int:
        return self.units

    def _build_weights(self, input_dim: int, bias_shape: tuple, bias_init: Any) -> None:
        g = self.gates * self.units
        self.kernel = self.add_weight(
            shape=(input_dim, g),
            name="kernel",
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, g),
            name="recurrent_kernel",
            initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint,
        )
        self.bias = (
            self.add_weight(
                shape=bias_shape,
                name="bias",
                initializer=bias_init,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
            if self.use_bias
            else None
        )
        self.built = True

    # -- dropout masks: drawn once per sequence by RNN, reused at each step ---------------
    def _config_dropout(self, x0: Tensor, h0: Tensor, training: Any) -> None:
        self._dropout_mask = self._recurrent_dropout_mask = None
        if training and 0.0 < self.dropout < 1.0:
            self._dropout_mask = nn.dropout(ao.ones_like(x0), rate=self.dropout, seed=self.seed)
        if training and 0.0 < self.recurrent_dropout < 1.0:
            self._recurrent_dropout_mask = nn.dropout(ao.ones_like(h0), rate=self.recurrent_dropout, seed=self.seed)

    def _reset_dropout(self) -> None:
        self._dropout_mask = self._recurrent_dropout_mask = None

    def _state_dropped(self, h: Tensor, training: Any) -> Tensor:
        if training and 0.0 < self.recurrent_dropout < 1.0:
            m = self._recurrent_dropout_mask
            if m is None:
                m = nn.dropout(ao.ones_like(h), rate=self.recurrent_dropout, seed=self.seed)
            h = h * m
        return h

    # -- the fast path: project all steps' inputs at once --------------------------------
    def project_inputs(self, x: Tensor, training: Any = None) -> Tensor:
        """``x @ kernel (+ input bias)`` for one step ``(batch, in)`` or all steps, time-major
        ``(time, batch, in)`` (the per-sequence dropout mask broadcasts over time)."""
        if training and 0.0 < self.dropout < 1.0:
            mask = self._dropout_mask
            if mask is None:  # a cell called on its own: a fresh mask for this step
                mask = nn.dropout(ao.ones_like(x), rate=self.dropout, seed=self.seed)
            x = x * mask
        y = mo.matmul(x, self.kernel.value()) if x.ndim == 2 else _seq_matmul(x, self.kernel.value())
        b = self._input_bias()
        return y if b is None else y + b

    def _input_bias(self) -> Tensor | None:
        return None if self.bias is None else self.bias.value()

    def call(self, inputs: Tensor, states: Any, training: Any = None) -> tuple:
        single = not isinstance(states, (list, tuple))
        out, new = self.step(self.project_inputs(inputs, training), [states] if single else list(states), training)
        return out, (new[0] if single and len(new) == 1 else new)

    def step(self, xp: Tensor, states: list, training: Any) -> tuple:  # pragma: no cover - abstract
        raise NotImplementedError

    def _fusable(self, training: Any) -> bool:
        """Whether RNN may run this cell's whole sequence as one fused op (``run_sequence``): Keras'
        default activations, float32/float64, no recurrent dropout this call, ``step`` not overridden."""
        return False

    def _fusable_base(self, training: Any) -> bool:
        return (
            self.activation is activations.tanh
            and getattr(self, "recurrent_activation", None) is activations.sigmoid
            and self.compute_dtype in ("float32", "float64")
            and not (training and 0.0 < self.recurrent_dropout < 1.0)
        )

    def get_initial_state(self, batch_size: Any = None) -> list:
        sizes = self.state_size if isinstance(self.state_size, (list, tuple)) else [self.state_size]
        return [ao.zeros((batch_size, d), dtype=self.compute_dtype) for d in sizes]

    def _base_config(self) -> dict:
        cfg = {**base_config(self), "units": self.units, "activation": activations.serialize(self.activation)}
        if hasattr(self, "recurrent_activation"):
            cfg["recurrent_activation"] = activations.serialize(self.recurrent_activation)
        return {**cfg, "use_bias": self.use_bias}

    def _init_config(self) -> dict:
        return {
            "kernel_initializer": serialize(self.kernel_initializer),
            "recurrent_initializer": serialize(self.recurrent_initializer),
            "bias_initializer": serialize(self.bias_initializer),
            "kernel_regularizer": serialize(self.kernel_regularizer),
            "recurrent_regularizer": serialize(self.recurrent_regularizer),
            "bias_regularizer": serialize(self.bias_regularizer),
            "kernel_constraint": serialize(self.kernel_constraint),
            "recurrent_constraint": serialize(self.recurrent_constraint),
            "bias_constraint": serialize(self.bias_constraint),
            "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
        }


def _seq_matmul(x: Tensor, w: Tensor) -> Tensor:
    """``(batch, time, in) @ (in, out)`` as one 2-D matmul."""
    shape = x._shape_tuple()
    flat = ao.reshape(x, (-1, shape[-1]))
    y = mo.matmul(flat, w)
    out = w._shape_tuple()[-1]
    if None in shape[:2]:
        from tapeflow.ops import shape_ops

        s = shape_ops.shape_of(x)
        return shape_ops.dynamic_reshape(y, ao.concat([s[:2], [out]], axis=0))
    return ao.reshape(y, (shape[0], shape[1], out))


class SimpleRNNCell(_DropoutCell):
    """``h = activation(x @ kernel + h_prev @ recurrent_kernel + bias)``."""

    def build(self, input_shape: Any) -> None:
        self._build_weights(input_shape[-1], (self.units,), self.bias_initializer)

    def step(self, xp: Tensor, states: list, training: Any) -> tuple:
        h = self._state_dropped(states[0], training)
        out = self.activation(xp + mo.matmul(h, self.recurrent_kernel.value()))
        return out, [out]

    def _fusable(self, training: Any) -> bool:
        return (
            type(self).step is SimpleRNNCell.step
            and self.activation is activations.tanh
            and self.compute_dtype in ("float32", "float64")
            and not (training and 0.0 < self.recurrent_dropout < 1.0)
        )

    def run_sequence(self, xs: Tensor, states: list, mask: Any, zero_output_for_mask: bool) -> tuple:
        """All steps over the time-major projections ``xs`` as one ``SimpleRNNSequence`` op."""
        ys, last, h = rnn_ops.simple_rnn_sequence(
            xs, states[0], self.recurrent_kernel.value(), mask, zero_output_for_mask
        )
        return ys, last, [h]

    def get_config(self) -> dict:
        return {**self._base_config(), **self._init_config(), "seed": self.seed}


class LSTMCell(_DropoutCell):
    """Long short-term memory: gates ``i, f, c, o`` in the kernel's columns (Keras' order); states
    ``[h, c]``; ``unit_forget_bias=True`` starts the forget gate's bias at 1."""

    gates = 4

    def __init__(
        self,
        units: int,
        activation: Any = "tanh",
        recurrent_activation: Any = "sigmoid",
        use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform",
        recurrent_initializer: Any = "orthogonal",
        bias_initializer: Any = "zeros",
        unit_forget_bias: bool = True,
        **kwargs: Any,
    ) -> None:
        kwargs.pop("implementation", None)  # Keras' speed knob; the math is the same
        super().__init__(
            units, activation, use_bias, kernel_initializer, recurrent_initializer, bias_initializer, **kwargs
        )
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)

    @property
    def state_size(self) -> Any:
        return [self.units, self.units]

    def build(self, input_shape: Any) -> None:
        init = self.bias_initializer
        if self.unit_forget_bias:
            u, base = self.units, self.bias_initializer

            class _ForgetBias(initializers.Initializer):
                def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Tensor:
                    return ao.concat(
                        [base((u,), dtype=dtype), ao.ones((u,), dtype=dtype or "float32"), base((2 * u,), dtype=dtype)],
                        axis=0,
                    )

            init = _ForgetBias()
        self._build_weights(input_shape[-1], (4 * self.units,), init)

    def step(self, xp: Tensor, states: list, training: Any) -> tuple:
        h, c = states[0], states[1]
        z = xp + mo.matmul(self._state_dropped(h, training), self.recurrent_kernel.value())
        zi, zf, zc, zo = ao.split(z, 4, axis=-1)
        ra = self.recurrent_activation
        c = ra(zf) * c + ra(zi) * self.activation(zc)
        h = ra(zo) * self.activation(c)
        return h, [h, c]

    def _fusable(self, training: Any) -> bool:
        return type(self).step is LSTMCell.step and self._fusable_base(training)

    def run_sequence(self, xs: Tensor, states: list, mask: Any, zero_output_for_mask: bool) -> tuple:
        """All steps over the time-major projections ``xs`` as one ``LSTMSequence`` op."""
        ys, last, h, c = rnn_ops.lstm_sequence(
            xs, states[0], states[1], self.recurrent_kernel.value(), mask, zero_output_for_mask
        )
        return ys, last, [h, c]

    def get_config(self) -> dict:
        return {**self._base_config(), "unit_forget_bias": self.unit_forget_bias, **self._init_config(),
                "seed": self.seed}


class GRUCell(_DropoutCell):
    """Gated recurrent unit: gates ``z, r, h`` in the kernel's columns (Keras' order). With
    ``reset_after=True`` (Keras 3's default, cuDNN's variant) the reset gate multiplies
    ``h_prev @ recurrent_kernel + recurrent_bias`` and ``bias`` is ``(2, 3*units)``."""

    gates = 3

    def __init__(
        self,
        units: int,
        activation: Any = "tanh",
        recurrent_activation: Any = "sigmoid",
        use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform",
        recurrent_initializer: Any = "orthogonal",
        bias_initializer: Any = "zeros",
        reset_after: bool = True,
        **kwargs: Any,
    ) -> None:
        kwargs.pop("implementation", None)
        super().__init__(
            units, activation, use_bias, kernel_initializer, recurrent_initializer, bias_initializer, **kwargs
        )
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = bool(reset_after)

    def build(self, input_shape: Any) -> None:
        shape = (2, 3 * self.units) if self.reset_after else (3 * self.units,)
        self._build_weights(input_shape[-1], shape, self.bias_initializer)

    def _input_bias(self) -> Tensor | None:
        if self.bias is None:
            return None
        return self.bias.value()[0] if self.reset_after else self.bias.value()

    def step(self, xp: Tensor, states: list, training: Any) -> tuple:
        h_prev = states[0]
        h = self._state_dropped(h_prev, training)
        u = self.units
        x_z, x_r, x_h = ao.split(xp, 3, axis=-1)
        rk = self.recurrent_kernel.value()
        ra = self.recurrent_activation
        if self.reset_after:
            inner = mo.matmul(h, rk)
            if self.bias is not None:
                inner = inner + self.bias.value()[1]
            r_z, r_r, r_h = ao.split(inner, 3, axis=-1)
            z, r = ra(x_z + r_z), ra(x_r + r_r)
            hh = self.activation(x_h + r * r_h)
        else:
            r_z, r_r = ao.split(mo.matmul(h, rk[:, : 2 * u]), 2, axis=-1)
            z, r = ra(x_z + r_z), ra(x_r + r_r)
            hh = self.activation(x_h + mo.matmul(r * h, rk[:, 2 * u :]))
        out = z * h_prev + (1.0 - z) * hh
        return out, [out]

    def _fusable(self, training: Any) -> bool:
        return type(self).step is GRUCell.step and self.reset_after and self._fusable_base(training)

    def run_sequence(self, xs: Tensor, states: list, mask: Any, zero_output_for_mask: bool) -> tuple:
        """All steps over the time-major projections ``xs`` as one ``GRUSequence`` op."""
        rk = self.recurrent_kernel.value()
        rb = self.bias.value()[1] if self.bias is not None else ao.zeros((3 * self.units,), dtype=rk.dtype)
        ys, last, h = rnn_ops.gru_sequence(xs, states[0], rk, rb, mask, zero_output_for_mask)
        return ys, last, [h]

    def get_config(self) -> dict:
        return {**self._base_config(), **self._init_config(), "reset_after": self.reset_after, "seed": self.seed}


class StackedRNNCells(Layer):
    """Several cells run as one: each step feeds a cell's output to the next; the state is the list
    of the cells' states."""

    def __init__(self, cells: list, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for cell in cells:
            if "call" not in dir(cell) or "state_size" not in dir(cell):
                raise ValueError(
                    f"All cells must have a `call` method and a `state_size` attribute. Received cells={cells}"
                )
        self.cells = list(cells)

    @property
    def state_size(self) -> list:
        return [c.state_size for c in self.cells]

    @property
    def output_size(self) -> int:
        last = self.cells[-1]
        if getattr(last, "output_size", None) is not None:
            return last.output_size
        return last.state_size[0] if isinstance(last.state_size, (list, tuple)) else last.state_size

    def build(self, input_shape: Any) -> None:
        shape = tuple(input_shape)
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                with cell.name_scope:
                    cell.build(shape)
                cell.built = True
            out = getattr(cell, "output_size", None)
            if out is None:
                out = cell.state_size[0] if isinstance(cell.state_size, (list, tuple)) else cell.state_size
            shape = shape[:-1] + (out,)
        self.built = True

    def get_initial_state(self, batch_size: Any = None) -> list:
        out = []
        for cell in self.cells:
            fn = getattr(cell, "get_initial_state", None)
            if fn is not None:
                s = fn(batch_size=batch_size)
                out.append(s[0] if isinstance(s, list) and not isinstance(cell.state_size, (list, tuple)) else s)
            elif isinstance(cell.state_size, int):
                out.append(ao.zeros((batch_size, cell.state_size), dtype=self.compute_dtype))
            else:
                out.append([ao.zeros((batch_size, d), dtype=self.compute_dtype) for d in cell.state_size])
        return out

    def call(self, inputs: Tensor, states: Any, training: Any = None) -> tuple:
        new_states = []
        for cell, s in zip(self.cells, states):
            is_list = isinstance(s, (list, tuple))
            args = list(s) if is_list else [s]
            inputs, s = _call_cell(cell, inputs, args, training)
            if not isinstance(s, (list, tuple)):
                s = [s]
            new_states.append(s[0] if len(s) == 1 and not is_list else list(s))
        return inputs, new_states

    def get_config(self) -> dict:
        return {**super().get_config(), "cells": [_layer_config(c) for c in self.cells]}

    @classmethod
    def from_config(cls, config: dict) -> StackedRNNCells:
        config = dict(config)
        config["cells"] = [deserialize_layer(c) for c in config["cells"]]
        return cls(**config)


def _call_cell(cell: Any, inputs: Tensor, states: list, training: Any) -> tuple:
    if isinstance(cell, Layer):
        from tapeflow.keras.layers.base import _call_flags

        if _call_flags(cell)[0]:
            return cell(inputs, states, training=training)
        return cell(inputs, states)
    return cell.call(inputs, states)


def _layer_config(layer: Layer) -> dict:
    """A wrapped layer as Keras writes it: serialized, with its own ``build_config``."""
    from tapeflow.keras.saving.serialization import serialize_keras_object

    return serialize_keras_object(layer)


def deserialize_layer(config: Any) -> Layer:
    """A layer from ``{"class_name": ..., "config": ...}`` (a layer instance passes through)."""
    if isinstance(config, Layer):
        return config
    from tapeflow.keras import layers as _layers

    cls = getattr(_layers, config["class_name"])
    return cls.from_config(config["config"])


def _builtin_cells(cell: Any) -> list | None:
    """The built-in cells a fast (projected-inputs) loop can drive, or None."""
    if isinstance(cell, _DropoutCell):
        return [cell]
    return None


class RNN(Layer):
    """Runs a cell over the time axis of ``(batch, time, features)`` inputs (Keras 3's ``RNN``).

    ``return_sequences`` returns every step's output, ``return_state`` adds the final states,
    ``go_backwards`` runs the sequence in reverse (and returns the outputs in that order),
    ``stateful`` keeps the final states for the next call (``reset_states()`` clears them),
    ``unroll`` unrolls the loop inside ``tf.function``; a ``mask`` ``(batch, time)`` (from
    ``Embedding(mask_zero=True)`` or ``Masking``) skips steps, carrying output and states over.
    """

    _supports_masking = True

    def __init__(
        self,
        cell: Any,
        return_sequences: bool = False,
        return_state: bool = False,
        go_backwards: bool = False,
        stateful: bool = False,
        unroll: bool = False,
        zero_output_for_mask: bool = False,
        **kwargs: Any,
    ) -> None:
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if "call" not in dir(cell):
            raise ValueError(f"Argument `cell` should have a `call` method. Received: cell={cell}")
        if "state_size" not in dir(cell):
            raise ValueError(
                "The RNN cell should have a `state_size` attribute (single integer or list of "
                f"integers, one integer per RNN state). Received: cell={cell}"
            )
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.stateful, self.unroll = bool(go_backwards), bool(stateful), bool(unroll)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.states = None
        ss = cell.state_size
        if not isinstance(ss, (list, tuple, int)):
            raise ValueError("state_size must be an integer, or a list/tuple of integers (one for each state tensor).")
        self.state_size = [ss] if isinstance(ss, int) else list(ss)
        self.single_state = isinstance(ss, int)

    # -- build ------------------------------------------------------------------
    def build(self, sequences_shape: Any, initial_state_shape: Any = None) -> None:
        if isinstance(sequences_shape, list) and sequences_shape and isinstance(sequences_shape[0], (tuple, list)):
            sequences_shape = sequences_shape[0]
        sequences_shape = tuple(sequences_shape)
        if len(sequences_shape) < 3:
            raise ValueError(
                f"Input 0 with name 'None' of layer '{self.name}' is incompatible with the layer: expected ndim=3, "
                f"found ndim={len(sequences_shape)}. Full shape received: {sequences_shape}"
            )
        step_shape = (sequences_shape[0],) + sequences_shape[2:]
        if isinstance(self.cell, Layer) and not self.cell.built:
            with self.cell.name_scope:
                self.cell.build(step_shape)
            self.cell.built = True
        if self.stateful:
            if sequences_shape[0] is None:
                raise ValueError(
                    "When using `stateful=True` in a RNN, the batch size must be static. Found "
                    f"dynamic batch size: sequence.shape={sequences_shape}"
                )
            self._create_state_variables(sequences_shape[0])
        self.built = True

    def _create_state_variables(self, batch_size: int) -> None:
        from tapeflow.framework.variables import Variable

        init = self.get_initial_state(batch_size)
        self.states = nest.map_structure(lambda v: Variable(v, trainable=False, name=f"{self.name}/rnn_state"), init)

    def reset_state(self) -> None:
        """Zeroes the kept states of a ``stateful`` RNN."""
        if self.states is not None:
            for v in nest.flatten(self.states):
                v.assign(ao.zeros_like(v.value()))

    reset_states = reset_state

    def get_initial_state(self, batch_size: Any) -> list:
        fn = getattr(self.cell, "get_initial_state", None)
        if fn is not None:
            init = fn(batch_size=batch_size)
        else:
            return [ao.zeros((batch_size, d), dtype=self.compute_dtype) for d in self.state_size]
        return list(init) if isinstance(init, (list, tuple)) else [init]

    # -- call -------------------------------------------------------------------
    def call(self, sequences: Any, initial_state: Any = None, mask: Any = None, training: Any = None) -> Any:
        if isinstance(sequences, (list, tuple)):  # RNN()([x, h0, c0]) as Keras 2 allowed
            sequences, initial_state = sequences[0], list(sequences[1:]) or initial_state
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        shape = sequences._shape_tuple()
        if len(shape) != 3:
            raise ValueError(
                f"Input 0 with name 'None' of layer '{self.name}' is incompatible with the layer: expected ndim=3, "
                f"found ndim={len(shape)}. Full shape received: {tuple(shape)}"
            )
        steps = shape[1]
        if self.unroll and steps is None:
            raise ValueError(
                "Cannot unroll a RNN if the time dimension is undefined. \n- If using a Sequential "
                "model, specify the time dimension by passing an `Input()` as your first layer.\n"
                "- If using the functional API, specify the time dimension by passing a `shape` or "
                "`batch_shape` argument to your `Input()`."
            )
        if initial_state is None:
            if self.stateful:
                initial_state = nest.map_structure(lambda v: v.value(), self.states)
            else:
                batch = shape[0]
                if batch is None:
                    from tapeflow.ops import shape_ops

                    batch = shape_ops.shape_of(sequences)[0]
                initial_state = self.get_initial_state(batch)
        if self.stateful and shape[0] is not None and self.states is not None:
            expected = nest.flatten(self.states)[0]._shape_tuple()[0]
            if shape[0] != expected:
                raise ValueError(
                    f"If an RNN is stateful, the batch size of the input sequences must be the same "
                    f"as the batch size of the initial state. \n- Expected batch size: {expected}\n"
                    f"- Received batch size: {shape[0]}"
                )
        if not isinstance(initial_state, (list, tuple)):
            initial_state = [initial_state]
        initial_state = nest.map_structure(
            lambda s: mo.cast(s, self.compute_dtype) if isinstance(s, Tensor) else self._convert(s), list(initial_state)
        )
        last, outputs, states = self._loop(sequences, initial_state, mask, training)
        if self.stateful:
            for v, s in zip(nest.flatten(self.states), nest.flatten(states)):
                v.assign(s)
        output = outputs if self.return_sequences else last
        if self.return_state:
            return (output, *states)  # a tuple, as Keras 3
        return output

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        out_mask = mask if self.return_sequences else None
        if self.return_state:
            return [out_mask] + [None for _ in self.state_size]
        return out_mask

    def _loop(self, x: Tensor, init: list, mask: Any, training: Any) -> tuple:
        cells = _builtin_cells(self.cell)
        flat_init = nest.flatten(init)
        x_tm = ao.transpose(x, (1, 0, 2))  # time-major
        if cells is not None:
            cell = cells[0]
            cell._config_dropout(x_tm[0], flat_init[0], training)
        m_tm = None
        if mask is not None:
            m_tm = ao.transpose(ao.expand_dims(mo.cast(mask, "bool"), -1), (1, 0, 2))  # (time, batch, 1)
        try:
            if cells is not None:
                xs = cell.project_inputs(x_tm, training)  # all steps' input projections in one matmul
            else:
                xs = x_tm

            def cell_step(x_t, states):
                if cells is not None:
                    out, new = cell.step(x_t, list(states), training)
                    return out, new
                packed = nest.pack_sequence_as(init, states)
                out, new = _call_cell(self.cell, x_t, packed, training)
                if not isinstance(new, (list, tuple)):
                    new = [new]
                return out, nest.flatten(new)

            graph = _state.graph is not None and not self.unroll
            steps = x._shape_tuple()[1]
            if cells is not None and cell._fusable(training):
                if steps == 0:
                    raise ValueError(f"Layer '{self.name}': the input sequence has 0 time steps ({x.shape}).")
                from tapeflow.ops import indexing_ops

                if self.go_backwards:  # processing order; the outputs stay in it, as Keras
                    xs = indexing_ops.reverse(xs, [0])
                    m_tm = None if m_tm is None else indexing_ops.reverse(m_tm, [0])
                ys, last, states = cell.run_sequence(xs, list(flat_init), m_tm, self.zero_output_for_mask)
                seq = ao.transpose(ys, (1, 0, 2)) if self.return_sequences else None
                return last, seq, nest.pack_sequence_as(init, states)
            if not graph:
                rows = ao.unstack(xs, num=steps) if steps else []
                mrows = ao.unstack(m_tm, num=steps) if (m_tm is not None and steps) else None
                order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
                states = list(flat_init)
                prev = None
                outs = []
                for t in order:
                    out, new = cell_step(rows[t], states)
                    if mrows is not None:
                        m = mrows[t]
                        if prev is None:
                            prev = ao.zeros_like(out)
                        out = mo.where(m, out, ao.zeros_like(out) if self.zero_output_for_mask else prev)
                        new = [mo.where(m, a, b) for a, b in zip(new, states)]
                    prev = out
                    states = list(new)
                    if self.return_sequences:
                        outs.append(out)
                if steps == 0:
                    raise ValueError(f"Layer '{self.name}': the input sequence has 0 time steps ({x.shape}).")
                seq = ao.transpose(ao.stack(outs), (1, 0, 2)) if self.return_sequences else None
                return out, seq, nest.pack_sequence_as(init, states)
            # inside tf.function: one While op over the time steps
            from tapeflow.graph.control_flow import while_loop
            from tapeflow.graph.tensor_array import TensorArray
            from tapeflow.ops import shape_ops

            n = steps if steps is not None else shape_ops.shape_of(x)[1]
            out_size = getattr(self.cell, "output_size", None) or self.state_size[0]
            zero_out = ao.tile(ao.zeros_like(flat_init[0][:, :1]), [1, out_size])
            nc = 1 + len(flat_init)

            def body(i, *loop_vars):
                prev_out, states = loop_vars[0], list(loop_vars[1:nc])
                t = (n - 1 - i) if self.go_backwards else i
                out, new = cell_step(ao.gather(xs, t), states)
                if m_tm is not None:
                    m = ao.gather(m_tm, t)
                    out = mo.where(m, out, zero_out if self.zero_output_for_mask else prev_out)
                    new = [mo.where(m, a, b) for a, b in zip(new, states)]
                arrays = [ta.write(i, out) for ta in loop_vars[nc:]]
                return (i + 1, out, *new, *arrays)

            arrays = []
            if self.return_sequences:  # outputs in a buffer shaped (time, batch, units) from the start
                batch = (
                    shape_ops.shape_of(zero_out)[0]
                    if zero_out._shape_tuple()[0] is None
                    else zero_out._shape_tuple()[0]
                )
                buffer = ao.zeros([n, batch, out_size], dtype=zero_out.dtype)
                arrays = [TensorArray(zero_out.dtype, size=n)._with_buffer(buffer)]
            res = while_loop(lambda i, *_: mo.less(i, n), body, (0, zero_out, *flat_init, *arrays))
            seq = ao.transpose(res[nc + 1].stack(), (1, 0, 2)) if self.return_sequences else None
            return res[1], seq, nest.pack_sequence_as(init, list(res[2 : nc + 1]))
        finally:
            if cells is not None:
                cell._reset_dropout()

    def get_config(self) -> dict:
        cfg = {
            **base_config(self),
            "return_sequences": self.return_sequences,
            "return_state": self.return_state,
            "go_backwards": self.go_backwards,
            "stateful": self.stateful,
            "unroll": self.unroll,
            "zero_output_for_mask": self.zero_output_for_mask,
        }
        if type(self) is RNN:
            cfg["cell"] = _layer_config(self.cell)
        return cfg

    @classmethod
    def from_config(cls, config: dict) -> RNN:
        config = dict(config)
        if "cell" in config:
            config["cell"] = deserialize_layer(config["cell"])
        return cls(**config)


_RNN_ARGS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll", "zero_output_for_mask")


class _RNNWithCell(RNN):
    """SimpleRNN / LSTM / GRU: an RNN over its own cell, with the cell's arguments."""

    cell_class: type = SimpleRNNCell

    def __init__(self, units: int, **kwargs: Any) -> None:
        rnn_kwargs = {k: kwargs.pop(k) for k in _RNN_ARGS if k in kwargs}
        layer_kwargs = {
            k: kwargs.pop(k)
            for k in ("name", "trainable", "dtype", "input_shape", "batch_size", "input_dim", "batch_input_shape",
                      "activity_regularizer")
            if k in kwargs
        }
        kwargs.pop("time_major", None)
        cell = self.cell_class(
            units,
            name=_cell_name(self.cell_class),
            dtype=layer_kwargs.get("dtype"),
            trainable=layer_kwargs.get("trainable", True),
            **kwargs,
        )
        super().__init__(cell, **rnn_kwargs, **layer_kwargs)

    def __getattr__(self, name: str) -> Any:
        # units, activation, dropout ... read through to the cell, as Keras' properties do
        if name.startswith("_") or name in ("cell",):
            raise AttributeError(name)
        cell = self.__dict__.get("cell")
        if cell is not None and hasattr(cell, name):
            return getattr(cell, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def call(self, sequences: Any, initial_state: Any = None, mask: Any = None, training: Any = None) -> Any:
        return super().call(sequences, initial_state=initial_state, mask=mask, training=training)

    def get_config(self) -> dict:
        cfg = super().get_config()
        cell_cfg = self.cell.get_config()
        for k in ("name", "trainable", "dtype") + (("seed",) if self.cell_class is SimpleRNNCell else ()):
            cell_cfg.pop(k, None)  # Keras's SimpleRNN (not its cell, nor LSTM/GRU) lists no seed
        for k, v in cell_cfg.items():  # the cell's keys in Keras's order for the layer
            if k == "unit_forget_bias":
                continue
            cfg[k] = v
            if k == "bias_initializer" and "unit_forget_bias" in cell_cfg:
                cfg["unit_forget_bias"] = cell_cfg["unit_forget_bias"]
            if k == "bias_regularizer":
                cfg["activity_regularizer"] = serialize(self.activity_regularizer)
        return cfg

    @classmethod
    def from_config(cls, config: dict) -> Layer:
        return cls(**config)


def _cell_name(cls: type) -> str:
    from tapeflow.keras.layers.base import to_snake_case

    return to_snake_case(cls.__name__)


class SimpleRNN(_RNNWithCell):
    """A fully connected RNN: ``h_t = tanh(x_t @ kernel + h_{t-1} @ recurrent_kernel + bias)``."""

    cell_class = SimpleRNNCell

    def __init__(self, units: int, activation: Any = "tanh", use_bias: bool = True, **kwargs: Any) -> None:
        super().__init__(units, activation=activation, use_bias=use_bias, **kwargs)


class LSTM(_RNNWithCell):
    """Long short-term memory layer (Hochreiter 1997), Keras 3's weights and gate order (i, f, c, o).

    >>> lstm = tf.keras.layers.LSTM(4, return_sequences=True, return_state=True)
    >>> seq, h, c = lstm(tf.zeros((2, 5, 3)))
    >>> seq.shape, h.shape, c.shape
    (TensorShape([2, 5, 4]), TensorShape([2, 4]), TensorShape([2, 4]))
    """

    cell_class = LSTMCell

    def __init__(
        self,
        units: int,
        activation: Any = "tanh",
        recurrent_activation: Any = "sigmoid",
        use_bias: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            units, activation=activation, recurrent_activation=recurrent_activation, use_bias=use_bias, **kwargs
        )


class GRU(_RNNWithCell):
    """Gated recurrent unit layer, Keras 3's ``reset_after=True`` by default (bias ``(2, 3*units)``)."""

    cell_class = GRUCell

    def __init__(
        self,
        units: int,
        activation: Any = "tanh",
        recurrent_activation: Any = "sigmoid",
        use_bias: bool = True,
        reset_after: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            units,
            activation=activation,
            recurrent_activation=recurrent_activation,
            use_bias=use_bias,
            reset_after=reset_after,
            **kwargs,
        )


def _clone_layer(layer: Layer, **overrides: Any) -> Layer:
    cfg = {**layer.get_config(), **overrides}
    return type(layer).from_config(cfg)


class Bidirectional(Layer):
    """Runs an RNN layer forwards and a copy of it backwards and merges the two outputs
    (``merge_mode``: "concat" (default), "sum", "mul", "ave" or None for a list)."""

    _supports_masking = True

    def __init__(
        self,
        layer: Layer,
        merge_mode: str | None = "concat",
        weights: Any = None,
        backward_layer: Layer | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(layer, Layer):
            raise ValueError(
                f"Please initialize `Bidirectional` layer with a `keras.layers.Layer` instance. Received: {layer}"
            )
        if merge_mode not in ("sum", "mul", "ave", "concat", None):
            raise ValueError(
                f"Invalid merge mode. Received: {merge_mode}. Merge mode should be one of "
                '{"sum", "mul", "ave", "concat", None}'
            )
        super().__init__(**kwargs)
        # Keras 3 strips a prefix already there, so a layer from a saved config keeps its name
        self.forward_layer = _clone_layer(layer, name="forward_" + layer.name.removeprefix("forward_"))
        if backward_layer is None:
            backward_layer = _clone_layer(layer, name="backward_" + layer.name.removeprefix("backward_"),
                                          go_backwards=not layer.go_backwards)
        self.backward_layer = backward_layer
        for inner in (self.forward_layer, self.backward_layer):  # Keras: masked steps of a sequence output are 0
            if getattr(inner, "zero_output_for_mask", None) is not None:
                inner.zero_output_for_mask = inner.return_sequences
        self.merge_mode = merge_mode
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        if weights is not None:
            raise NotImplementedError("Bidirectional(weights=...) is not supported; call set_weights() after building")

    def build(self, sequences_shape: Any, initial_state_shape: Any = None) -> None:
        for layer in (self.forward_layer, self.backward_layer):
            if not layer.built:
                with layer.name_scope:
                    layer.build(sequences_shape)
                layer.built = True
                layer._build_input_shape = (None,) + tuple(sequences_shape)[1:]  # Keras: inner build_config
        self.built = True

    def call(self, sequences: Tensor, initial_state: Any = None, mask: Any = None, training: Any = None) -> Any:
        kw: dict = {"training": training}
        if mask is not None:
            kw["mask"] = mask[0] if isinstance(mask, (list, tuple)) else mask
        fw_state = bw_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            fw_state, bw_state = initial_state[:half], initial_state[half:]
        y = self.forward_layer(sequences, initial_state=fw_state, **kw)
        y_rev = self.backward_layer(sequences, initial_state=bw_state, **kw)
        states: list = []
        if self.return_state:
            states = list(y[1:]) + list(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = _reverse_time(y_rev)
        if self.merge_mode == "concat":
            out = ao.concat([y, y_rev], axis=-1)
        elif self.merge_mode == "sum":
            out = y + y_rev
        elif self.merge_mode == "ave":
            out = (y + y_rev) / 2.0
        elif self.merge_mode == "mul":
            out = y * y_rev
        else:
            out = (y, y_rev)
        if self.return_state:
            return (out if isinstance(out, tuple) else (out,)) + tuple(states)  # tuples, as Keras 3
        return out

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        out_mask = mask if self.return_sequences else None
        if self.return_state:
            n = len(self.forward_layer.state_size) * 2
            return ([out_mask, out_mask] if self.merge_mode is None else [out_mask]) + [None] * n
        return [out_mask, out_mask] if self.merge_mode is None else out_mask

    def reset_state(self) -> None:
        self.forward_layer.reset_state()
        self.backward_layer.reset_state()

    reset_states = reset_state

    def get_config(self) -> dict:
        return {
            **base_config(self),
            "merge_mode": self.merge_mode,
            "layer": _layer_config(self.forward_layer),
            "backward_layer": _layer_config(self.backward_layer),
        }

    @classmethod
    def from_config(cls, config: dict) -> Bidirectional:
        config = dict(config)
        config["layer"] = deserialize_layer(config["layer"])
        if config.get("backward_layer") is not None:
            config["backward_layer"] = deserialize_layer(config["backward_layer"])
        return cls(**config)


def _reverse_time(x: Tensor) -> Tensor:
    from tapeflow.ops import indexing_ops

    return indexing_ops.reverse(x, [1])


class TimeDistributed(Layer):
    """Applies ``layer`` to every time step of ``(batch, time, ...)`` inputs (one call on the
    batch-and-time-flattened inputs)."""

    _supports_masking = True

    def __init__(self, layer: Layer, **kwargs: Any) -> None:
        if not isinstance(layer, Layer):
            raise ValueError(
                f"Please initialize `TimeDistributed` layer with a `keras.layers.Layer` instance. Received: {layer}"
            )
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape: Any) -> None:
        input_shape = tuple(input_shape)
        if len(input_shape) < 3:
            raise ValueError(
                f"`TimeDistributed` Layer should be passed an `input_shape` with at least 3 "
                f"dimensions, received: {input_shape}"
            )
        if not self.layer.built:
            with self.layer.name_scope:
                self.layer.build((None,) + input_shape[2:])
            self.layer.built = True
        self.built = True

    def call(self, inputs: Tensor, training: Any = None, mask: Any = None) -> Tensor:
        shape = inputs._shape_tuple()
        b, t = shape[0], shape[1]
        from tapeflow.ops import shape_ops

        if b is None or t is None:
            s = shape_ops.shape_of(inputs)
            flat = shape_ops.dynamic_reshape(inputs, ao.concat([[-1], s[2:]], axis=0))
        else:
            flat = ao.reshape(inputs, (b * t,) + tuple(shape[2:]))
        y = self.layer(flat, training=training)
        ys = y._shape_tuple()
        if b is None or t is None:
            s = shape_ops.shape_of(inputs)
            out = shape_ops.dynamic_reshape(y, ao.concat([s[:2], shape_ops.shape_of(y)[1:]], axis=0))
        else:
            out = ao.reshape(y, (b, t) + tuple(ys[1:]))
        return out

    def get_config(self) -> dict:
        return {**super().get_config(), "layer": _layer_config(self.layer)}

    @classmethod
    def from_config(cls, config: dict) -> TimeDistributed:
        config = dict(config)
        config["layer"] = deserialize_layer(config["layer"])
        return cls(**config)


# -- second derivatives of the fused sequences ------------------------------------------------------
# LSTMSequenceGrad / GRUSequenceGrad are backward passes through time written in NumPy; their own
# gradient (needed only for second-order derivatives) differentiates the step-by-step composite twice
# with tapes, which is why it is registered here and not in the op layer (tapeflow.ops.nn.rnn_ops).

def _while_steps(step: Any, xp: Tensor, states: list, mask: Any, zero_output_for_mask: bool) -> tuple:
    """rnn_ops.static_loop for a number of steps known only when the graph runs: one While op."""
    from tapeflow.graph.control_flow import while_loop
    from tapeflow.graph.tensor_array import TensorArray
    from tapeflow.ops import shape_ops

    n = shape_ops.shape_of(xp)[0]
    k = len(states)
    s0 = shape_ops.shape_of(states[0])
    buffer = ao.zeros(ao.concat([[n], s0], axis=0), dtype=xp.dtype)  # the outputs, (time, batch, units)

    def body(i, out, *rest):
        old, ta = list(rest[:k]), rest[k]
        new = step(ao.gather(xp, i), *old)
        if mask is None:
            out = new[0]
        else:
            m = ao.gather(mask, i)
            out = mo.where(m, new[0], ao.zeros_like(out) if zero_output_for_mask else out)
            new = [mo.where(m, a, b) for a, b in zip(new, old)]
        return (i + 1, out, *new, ta.write(i, out))

    res = while_loop(lambda i, *_: mo.less(i, n), body,
                     (0, ao.zeros_like(states[0]), *states, TensorArray(xp.dtype, size=n)._with_buffer(buffer)))
    return (res[k + 2].stack(), res[1], *res[2 : k + 2])


def _sequence_grad_grad(composite: Any, n_primal: int, n_saved: int, n_cot: int) -> Any:
    def rule(op: Any, *grads: Any) -> tuple:
        ins = list(op.inputs)
        masked = len(ins) == n_primal + 1 + n_saved + n_cot
        primals, cots = ins[:n_primal], ins[len(ins) - n_cot :]
        mask = ins[n_primal] if masked else None
        zero_out = op.get_attr("zero_output_for_mask")
        with GradientTape(persistent=True) as outer:
            outer.watch(primals + cots)
            with GradientTape() as inner:
                inner.watch(primals)
                xp, steps = primals[0], primals[0]._shape_tuple()[0]
                if steps is None:  # the step count may be static on the cotangent of the outputs
                    steps = cots[0]._shape_tuple()[0]
                    if steps is not None:
                        xp = ensure_shape(xp, (steps, None, None))
                loop = rnn_ops.static_loop if steps is not None else _while_steps
                outs = composite(xp, *primals[1:], mask, zero_out, loop=loop)
            firsts = inner.gradient(list(outs), primals, output_gradients=cots)
        pairs = [(f, g) for f, g in zip(firsts, grads) if f is not None]
        res = outer.gradient([f for f, _ in pairs], primals + cots, output_gradients=[g for _, g in pairs])
        return (*res[:n_primal], *([None] if masked else []), *([None] * n_saved), *res[n_primal:])

    return rule


defgrad("LSTMSequenceGrad", inputs=True)(_sequence_grad_grad(rnn_ops.lstm_sequence_composite, 4, 4, 4))
defgrad("GRUSequenceGrad", inputs=True)(_sequence_grad_grad(rnn_ops.gru_sequence_composite, 4, 3, 3))
defgrad("SimpleRNNSequenceGrad", inputs=True)(_sequence_grad_grad(rnn_ops.simple_rnn_sequence_composite, 3, 2, 3))


from tapeflow.keras.layers import base as _base  # noqa: E402

_base._GRAPH_MASKS.update((RNN.compute_mask, Bidirectional.compute_mask))  # they pass the mask object on
