"""Writes tests/fixtures/keras/ops_fns.keras and ops_fns_io.npz with real Keras 3:

    /opt/tfvenv/bin/python tools/keras_ops/make_model_fixture.py tests/fixtures/keras

a functional model whose graph applies keras.ops functions (numpy, nn, core, math and linalg ones),
with an input batch and Keras's predictions for it."""

import os
import sys

import numpy as np


def build(keras):
    ops, layers = keras.ops, keras.layers
    inp = keras.Input((6,))
    x = layers.Dense(6)(inp)
    idx = ops.argmax(x, axis=-1)
    parts = [
        ops.relu(x), ops.softmax(x, axis=-1), ops.cumsum(x, axis=1), ops.sum(ops.square(x), axis=-1, keepdims=True),
        ops.clip(x, -0.5, 0.5), ops.gelu(x), ops.normalize(x), ops.where(ops.greater(x, 0), x, 0.1 * x),
        ops.expand_dims(ops.mean(x, axis=1), -1), ops.reshape(ops.transpose(ops.reshape(x, (-1, 2, 3)), (0, 2, 1)),
                                                             (-1, 6)),
        ops.leaky_relu(x, negative_slope=0.3), ops.log_softmax(x), ops.logsumexp(x, axis=-1, keepdims=True),
        ops.norm(x, axis=-1, keepdims=True), ops.cast(ops.greater(x, 0.2), "float32"), ops.stop_gradient(x),
        ops.take(x, [0, 5], axis=1), ops.flip(x, axis=1), ops.roll(x, 2, axis=1), ops.tanh(ops.abs(x) + 1.0),
        ops.one_hot(idx, 6), ops.matmul(x, ops.ones((6, 2))), ops.stack([x, -x], axis=1)[:, 1, :],
    ]
    out = ops.concatenate(parts, axis=-1)
    return keras.Model(inp, [out, idx])


def main() -> None:
    import keras

    out_dir = sys.argv[1]
    keras.utils.set_random_seed(5)
    model = build(keras)
    x = np.random.default_rng(0).normal(size=(5, 6)).astype("float32")
    y, idx = model.predict(x, verbose=0)
    model.save(os.path.join(out_dir, "ops_fns.keras"))
    np.savez(os.path.join(out_dir, "ops_fns_io.npz"), x=x, y=y, idx=idx)


if __name__ == "__main__":
    main()
