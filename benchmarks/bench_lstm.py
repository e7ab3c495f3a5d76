"""Eager LSTM steps, tapeflow vs TensorFlow: a Keras LSTM(64) on a 32x20x64 batch, forward only and
forward+backward under a GradientTape (median of repeats, milliseconds).

    python benchmarks/bench_lstm.py tapeflow
    python benchmarks/bench_lstm.py tf        # with TensorFlow installed
"""

import os
import statistics
import sys
import time

import numpy as np


def main(which: str) -> None:
    if which == "tf":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf
    else:
        import tapeflow as tf
    x = tf.constant(np.random.default_rng(0).standard_normal((32, 20, 64)).astype("float32"))
    layer = tf.keras.layers.LSTM(64)
    layer(x)

    def fwd():
        return layer(x)

    def fwd_bwd():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(layer(x))
        return tape.gradient(loss, layer.trainable_weights)

    for name, fn in (("forward", fwd), ("forward+backward", fwd_bwd)):
        for _ in range(3):
            fn()
        times = []
        for _ in range(15):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        print(f"{which:9s} {name:17s} {statistics.median(times) * 1e3:8.2f} ms")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tapeflow")
