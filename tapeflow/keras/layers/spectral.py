"""Keras 3's ``SpectralNormalization`` wrapper."""

from __future__ import annotations

from typing import Any

from tapeflow.framework.tensor import Tensor
from tapeflow.keras import initializers
from tapeflow.keras.layers.adaptive import Wrapper

__all__ = ["SpectralNormalization"]


class SpectralNormalization(Wrapper):
    """Divides the wrapped layer's ``kernel`` (or an ``Embedding``'s ``embeddings``) by its largest singular
    value, estimated by ``power_iterations`` steps of the power method from a persistent ``vector_u``
    (Miyato et al., 2018), as Keras 3.

    The normalization happens in training calls only (``fit``, or ``training=True``): the kernel variable is
    overwritten by ``kernel / sigma`` and ``vector_u`` by its new estimate, then the wrapped layer runs;
    in inference the wrapped layer runs on the kernel as it is. An all-zero kernel is left alone.

    >>> sn = tf.keras.layers.SpectralNormalization(tf.keras.layers.Dense(10))
    >>> sn(np.ones((2, 4), "float32"), training=True).shape
    TensorShape([2, 10])
    """

    def __init__(self, layer: Any, power_iterations: int = 1, **kwargs: Any) -> None:
        super().__init__(layer, **kwargs)
        if power_iterations <= 0:
            raise ValueError("`power_iterations` should be greater than zero. Received: "
                             f"`power_iterations={power_iterations}`")
        self.power_iterations = power_iterations

    def build(self, input_shape: Any = None) -> None:
        if not self.layer.built:  # the wrapped layer's build_config, as Keras records it
            self.layer._build_input_shape = tuple(input_shape)
        super().build(input_shape)
        from tapeflow.keras.layers.base import InputSpec

        self.input_spec = InputSpec(min_ndim=1, axes={-1: input_shape[-1]})
        kernel = getattr(self.layer, "kernel", None)
        if kernel is None:
            kernel = getattr(self.layer, "embeddings", None)
        if kernel is None:
            raise ValueError(f"{type(self.layer).__name__} object has no attribute 'kernel' nor 'embeddings'")
        self.kernel = kernel  # tracked as this layer's own variable too, as Keras (its file holds it under both)
        self.kernel_shape = tuple(kernel.shape.as_list())
        self.vector_u = self.add_weight(shape=(1, self.kernel_shape[-1]),
                                        initializer=initializers.TruncatedNormal(stddev=0.02), trainable=False,
                                        name="vector_u", dtype=kernel.dtype)

    def call(self, inputs: Any, training: Any = False) -> Tensor:
        from tapeflow.keras import ops

        if training:
            new_u, new_kernel = ops.cond(ops.all(ops.equal(self.kernel.value(), 0)),
                                         lambda: (self.vector_u.value(), self.kernel.value()),
                                         self.normalized_weights)
            self.vector_u.assign(new_u)
            self.kernel.assign(new_kernel)
        output = self.layer(inputs)
        return ops.cast(output, inputs.dtype)

    def normalized_weights(self) -> tuple:
        """The power method's new ``vector_u`` and ``kernel / sigma`` (what a training call assigns)."""
        from tapeflow.keras import ops

        weights = ops.reshape(self.kernel.value(), [-1, self.kernel_shape[-1]])
        vector_u = self.vector_u.value()
        vector_v = None
        for _ in range(self.power_iterations):
            vector_v = ops.normalize(ops.matmul(vector_u, ops.transpose(weights)), axis=None)
            vector_u = ops.normalize(ops.matmul(vector_v, weights), axis=None)
        vector_u, vector_v = ops.stop_gradient(vector_u), ops.stop_gradient(vector_v)
        sigma = ops.matmul(ops.matmul(vector_v, weights), ops.transpose(vector_u))
        kernel = ops.reshape(ops.divide(self.kernel.value(), sigma), self.kernel_shape)
        return ops.cast(vector_u, self.vector_u.dtype), ops.cast(kernel, self.kernel.dtype)

    def compute_output_shape(self, input_shape: Any) -> Any:
        return self.layer.compute_output_shape(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "power_iterations": self.power_iterations}
