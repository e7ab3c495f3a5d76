"""``tf.keras.layers.EinsumDense``: a dense layer whose product is an einsum, as Keras 3."""

from __future__ import annotations

import copy
import re
from typing import Any

from tapeflow.framework.tensor import Tensor
from tapeflow.keras import activations, constraints, initializers, regularizers
from tapeflow.keras.layers.base import KerasTensor, Layer
from tapeflow.keras.saving.serialization import base_config
from tapeflow.keras.layers.conv_nd import serialize
from tapeflow.ops import indexing_ops
from tapeflow.ops import math_ops as mo

__all__ = ["EinsumDense"]


class EinsumDense(Layer):
    """``activation(einsum(equation, inputs, kernel) + bias)``.

    ``equation`` is ``"ab,bc->ac"``, ``"...ab,bc->...ac"`` or ``"ab...,bc->ac..."``; ``output_shape`` is the
    output's shape without the batch axis and the elided axes (``None`` where the input gives it);
    ``bias_axes`` names the output axes that get a bias.

    >>> layer = tf.keras.layers.EinsumDense("abc,cd->abd", output_shape=(None, 64), bias_axes="d")
    >>> layer(tf.ones((2, 32, 128))).shape
    TensorShape([2, 32, 64])
    """

    def __init__(self, equation: str, output_shape: Any, activation: Any = None, bias_axes: str | None = None,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, lora_rank: Any = None, lora_alpha: Any = None,
                 gptq_unpacked_column_size: Any = None, quantization_config: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if lora_rank is not None or quantization_config is not None or gptq_unpacked_column_size is not None:
            raise NotImplementedError("EinsumDense: LoRA and quantization are not implemented in tapeflow")
        self.equation = equation
        self.partial_output_shape = (output_shape,) if isinstance(output_shape, int) else tuple(output_shape)
        self.bias_axes = bias_axes
        self.activation = activations.get(activation)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer) if kernel_regularizer else None
        self.bias_regularizer = regularizers.get(bias_regularizer) if bias_regularizer else None
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.lora_rank = self.lora_alpha = None
        self.lora_enabled = False

    def build(self, input_shape: Any) -> None:
        input_shape = tuple(input_shape)
        kernel_shape, bias_shape, _, in_axes, out_axes = _analyze(self.equation, self.bias_axes, input_shape,
                                                                  self.partial_output_shape)
        init = self.kernel_initializer
        if isinstance(init, initializers.VarianceScaling) and (init.input_axes is None or init.output_axes is None):
            # Keras clones the initializer with the same concrete seed and the fans of the einsum's axes
            init = copy.copy(init)
            init.input_axes, init.output_axes = in_axes, out_axes
        for d in kernel_shape:
            if d is None:
                raise ValueError(f"Shapes used to initialize variables must be fully-defined (no `None` "
                                 f"dimensions). Received: shape={tuple(kernel_shape)} for variable "
                                 f"path='{self.name}/kernel'")
        self.kernel = self.add_weight(name="kernel", shape=tuple(kernel_shape), initializer=init,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.bias = None
        if bias_shape is not None:
            if None in bias_shape:
                raise ValueError(f"Shapes used to initialize variables must be fully-defined (no `None` "
                                 f"dimensions). Received: shape={tuple(bias_shape)} for variable "
                                 f"path='{self.name}/bias'")
            self.bias = self.add_weight(name="bias", shape=tuple(bias_shape), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def compute_output_shape(self, input_shape: Any) -> tuple:
        return tuple(_analyze(self.equation, self.bias_axes, tuple(input_shape), self.partial_output_shape)[2])

    def _symbolic_outputs(self, args: tuple, kwargs: dict) -> Any:
        # Keras takes a symbolic output's shape from compute_output_shape: an output_shape None stays None
        out = super()._symbolic_outputs(args, kwargs)
        if args and isinstance(out, KerasTensor) and isinstance(args[0], KerasTensor):
            out = KerasTensor(self.compute_output_shape(tuple(args[0].shape)), out.dtype)
        return out

    def call(self, inputs: Tensor) -> Tensor:
        y = indexing_ops.einsum(self.equation, inputs, self.kernel.value())
        if self.bias is not None:
            y = mo.add(y, self.bias.value())
        return self.activation(y)

    def get_config(self) -> dict:
        return {**base_config(self),
                "output_shape": self.partial_output_shape, "equation": self.equation,
                "activation": activations.serialize(self.activation), "bias_axes": self.bias_axes,
                "kernel_initializer": serialize(self.kernel_initializer),
                "bias_initializer": serialize(self.bias_initializer),
                "kernel_regularizer": _serialize_regularizer(self.kernel_regularizer),
                "bias_regularizer": _serialize_regularizer(self.bias_regularizer),
                "activity_regularizer": _serialize_regularizer(self.activity_regularizer),
                "kernel_constraint": serialize(self.kernel_constraint),
                "bias_constraint": serialize(self.bias_constraint), "quantization_config": None}


def _serialize_regularizer(reg: Any) -> Any:
    if isinstance(reg, regularizers.Regularizer):
        return {"module": "keras.regularizers", "class_name": type(reg).__name__, "config": reg.get_config(),
                "registered_name": None}
    return serialize(reg)


_BAD_EQUATION = ("Invalid einsum equation '{}'. Equations must be in the form [X],[Y]->[Z], ...[X],[Y]->...[Z], "
                 "or [X]...,[Y]->[Z]....")


def _analyze(equation: str, bias_axes: str | None, input_shape: tuple, output_shape: tuple) -> tuple:
    """Keras 3's ``_analyze_einsum_string``: (kernel shape, bias shape or None, full output shape, the kernel's
    input axes, its output axes)."""
    eq = re.sub(r"\.\.\.", "0", equation)
    for pattern, left in (("([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)", False),
                          ("0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)", True),
                          ("([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0", False)):
        m = re.match(pattern, eq)
        if m:
            return _analyze_split(m.group(1), m.group(2), m.group(3), bias_axes, input_shape, output_shape, left)
    raise ValueError(_BAD_EQUATION.format(equation))


def _analyze_split(input_spec: str, weight_spec: str, output_spec: str, bias_axes: str | None, input_shape: tuple,
                   output_shape: tuple, left_elided: bool) -> tuple:
    elided = len(input_shape) - len(input_spec)
    out = [input_shape[0], *output_shape]
    if elided > 0 and left_elided:
        for i in range(1, elided):
            out.insert(1, input_shape[i])
    elif elided > 0:
        out.extend(input_shape[len(input_shape) - elided:])
    if left_elided:
        input_map = {d: (i + elided) - len(input_shape) for i, d in enumerate(input_spec)}
        output_map = {d: i + elided for i, d in enumerate(output_spec)}
    else:
        input_map = {d: i for i, d in enumerate(input_spec)}
        output_map = {d: i for i, d in enumerate(output_spec)}
    for d in input_spec:
        if d in output_map and out[output_map[d]] is not None and out[output_map[d]] != input_shape[input_map[d]]:
            raise ValueError(f"Input shape and output shape do not match at shared dimension '{d}'. Input shape is "
                             f"{input_shape[input_map[d]]}, and output shape is {out[output_map[d]]}.")
    for d in output_spec:
        if d not in input_spec and d not in weight_spec:
            raise ValueError(f"Dimension '{d}' was specified in the output '{output_spec}' but has no corresponding "
                             f"dim in the input spec '{input_spec}' or weight spec '{output_spec}'")
    kernel_shape: list = []
    in_axes: list = []
    out_axes: list = []
    for i, d in enumerate(weight_spec):
        if d in output_map:
            kernel_shape.append(out[output_map[d]])
            out_axes.append(i)
        elif d in input_map:
            kernel_shape.append(input_shape[input_map[d]])
            in_axes.append(i)
        else:
            raise ValueError(f"Weight dimension '{d}' did not have a match in either the input spec '{input_spec}' "
                             f"or the output spec '{output_spec}'. For this layer, the weight must be fully specified.")
    bias_shape = None
    if bias_axes is not None:
        shift = elided if left_elided else 0
        sizes = {c: out[i + shift] for i, c in enumerate(output_spec)}
        for c in bias_axes:
            if c not in output_spec:
                raise ValueError(f"Bias dimension '{c}' was requested, but is not part of the output spec "
                                 f"'{output_spec}'")
        first = min(output_spec.find(c) for c in bias_axes)
        bias_shape = [sizes[c] if c in bias_axes else 1 for c in output_spec[first:]]
        if not left_elided:
            bias_shape.extend([1] * max(elided, 0))
    return kernel_shape, bias_shape, out, in_axes, out_axes
