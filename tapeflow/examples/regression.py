"""Fits a linear model y = 3x + 2 with a GradientTape training loop.

Run: ``python -m tapeflow.examples.regression``
"""

from __future__ import annotations

import numpy as np

import tapeflow as tf


def main(steps: int = 200) -> float:
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, size=(256, 1)).astype(np.float32)
    y = 3.0 * x + 2.0 + 0.05 * rng.standard_normal((256, 1)).astype(np.float32)
    w = tf.Variable(tf.zeros([1, 1]), name="w")
    b = tf.Variable(tf.zeros([1]), name="b")
    lr = 0.1
    loss = None
    for step in range(steps):
        with tf.GradientTape() as tape:
            pred = tf.matmul(x, w) + b
            loss = tf.reduce_mean(tf.square(pred - y))
        dw, db = tape.gradient(loss, [w, b])
        w.assign_sub(lr * dw)
        b.assign_sub(lr * db)
        if step % 50 == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {float(loss):.5f}  w {float(w[0, 0]):.3f}  b {float(b[0]):.3f}")
    print(f"fitted y = {float(w[0, 0]):.3f} x + {float(b[0]):.3f}  (true: 3x + 2)")
    return float(loss)


if __name__ == "__main__":
    main()
