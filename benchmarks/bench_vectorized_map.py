"""tf.vectorized_map: tapeflow's vectorized run vs the per-row loop (map_fn, what vectorized_map was before)
vs TensorFlow eager, on three workloads: per-example gradients of a small MLP (batch 64), per-example
Jacobians, an elementwise/matmul fn.

    PYTHONPATH=. python benchmarks/bench_vectorized_map.py          # tapeflow, then TF in a subprocess
    python benchmarks/bench_vectorized_map.py --tf                  # TensorFlow only (any python with TF)

Best of several rounds, milliseconds per call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np

TF_PY = os.environ.get("TF_PYTHON", "/opt/tfvenv/bin/python")
B = 64


def workloads(tf) -> dict:
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(B, 20)).astype(np.float32))
    y = tf.constant(rng.integers(0, 10, size=(B,)).astype(np.int32))
    w1 = tf.Variable(rng.normal(size=(20, 64)).astype(np.float32) * 0.2)
    b1 = tf.Variable(np.zeros(64, np.float32))
    w2 = tf.Variable(rng.normal(size=(64, 10)).astype(np.float32) * 0.2)
    b2 = tf.Variable(np.zeros(10, np.float32))
    wj = tf.constant(rng.normal(size=(8, 8)).astype(np.float32) * 0.3)
    xj = tf.constant(rng.normal(size=(B, 8)).astype(np.float32))
    we = tf.constant(rng.normal(size=(32, 32)).astype(np.float32) * 0.2)
    xe = tf.constant(rng.normal(size=(B, 32)).astype(np.float32))

    def per_example_grad(args):
        xi, yi = args
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.matmul(xi[None, :], w1) + b1)
            logits = tf.matmul(h, w2) + b2
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=yi[None], logits=logits))
        return tape.gradient(loss, [w1, b1, w2, b2])

    def jacobian(v):
        with tf.GradientTape() as tape:
            tape.watch(v)
            out = tf.tanh(tf.linalg.matvec(wj, v))
        return tape.jacobian(out, v)

    def elementwise(v):
        h = tf.matmul(v[None, :], we)[0]
        return tf.tanh(h) * tf.sigmoid(v) + tf.reduce_sum(v * v)

    return {"per-example grads (MLP 20-64-10)": (per_example_grad, (x, y)),
            "per-example jacobian (8x8 tanh)": (jacobian, xj),
            "elementwise + matmul (32)": (elementwise, xe)}


def timed(call, rounds: int = 5, inner: int = 5) -> float:
    call()
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(inner):
            call()
        best = min(best, (time.perf_counter() - t) / inner)
    return best * 1e3


def run_tf() -> dict:
    import tensorflow as tf

    return {name: timed(lambda: tf.vectorized_map(fn, elems)) for name, (fn, elems) in workloads(tf).items()}


def main() -> None:
    if "--tf" in sys.argv:
        print(json.dumps(run_tf()))
        return
    import tapeflow as tf

    tf_ms: dict = {}
    if os.path.exists(TF_PY):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH="")
        out = subprocess.run([TF_PY, __file__, "--tf"], capture_output=True, text=True, timeout=900, env=env)
        lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
        tf_ms = json.loads(lines[-1]) if lines else {}
    print(f"{'workload':36s} {'vectorized':>11s} {'loop':>9s} {'TF':>9s}   (ms per call, batch {B})")
    for name, (fn, elems) in workloads(tf).items():
        vec = tf.vectorized_map(fn, elems)
        loop = tf.map_fn(fn, elems, fn_output_signature=tf.nest.map_structure(
            lambda t: tf.TensorSpec(t.shape[1:], t.dtype), vec))
        for a, b in zip(tf.nest.flatten(vec), tf.nest.flatten(loop)):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
        t_vec = timed(lambda: tf.vectorized_map(fn, elems))
        t_loop = timed(lambda: tf.map_fn(fn, elems, fn_output_signature=tf.nest.map_structure(
            lambda t: tf.TensorSpec(t.shape[1:], t.dtype), vec)), rounds=3, inner=1)
        t_tf = tf_ms.get(name)
        print(f"{name:36s} {t_vec:11.2f} {t_loop:9.2f} {t_tf if t_tf is not None else float('nan'):9.2f}")


if __name__ == "__main__":
    main()
