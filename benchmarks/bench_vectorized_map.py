"""tf.vectorized_map: per-example gradients of a small MLP (20-64-10, sparse softmax cross-entropy), batch
32 and 256: tapeflow's vectorized run vs a Python loop over the rows (eager, one tape per row) vs TF 2.21's
vectorized_map called eagerly (TF traces a new tf.function on every call) and inside a tf.function (traced
once, the way TF programs usually call it); tapeflow's likewise.

    PYTHONPATH=. python benchmarks/bench_vectorized_map.py          # tapeflow, then TF in a subprocess
    python benchmarks/bench_vectorized_map.py --tf                  # TensorFlow only (any python with TF)

Best of several rounds, milliseconds per call; the ratios compare runs of one invocation.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np

TF_PY = os.environ.get("TF_PYTHON", "/opt/tfvenv/bin/python")
BATCHES = (32, 256)


def workloads(tf) -> dict:
    rng = np.random.default_rng(0)
    w1 = tf.Variable(rng.normal(size=(20, 64)).astype(np.float32) * 0.2)
    b1 = tf.Variable(np.zeros(64, np.float32))
    w2 = tf.Variable(rng.normal(size=(64, 10)).astype(np.float32) * 0.2)
    b2 = tf.Variable(np.zeros(10, np.float32))

    def per_example_grad(args):
        xi, yi = args
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.matmul(xi[None, :], w1) + b1)
            logits = tf.matmul(h, w2) + b2
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=yi[None], logits=logits))
        return tape.gradient(loss, [w1, b1, w2, b2])

    out = {}
    for b in BATCHES:
        x = tf.constant(rng.normal(size=(b, 20)).astype(np.float32))
        y = tf.constant(rng.integers(0, 10, size=(b,)).astype(np.int32))
        out[f"per-example grads MLP, batch {b}"] = (per_example_grad, (x, y))
    return out


def timed(call, rounds: int = 5, inner: int = 3) -> float:
    call()
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(inner):
            call()
        best = min(best, (time.perf_counter() - t) / inner)
    return best * 1e3


def python_loop(tf, fn, elems):
    x, y = elems
    rows = [fn((x[i], y[i])) for i in range(x.shape[0])]
    return [tf.stack(list(g)) for g in zip(*rows)]


def run_tf() -> dict:
    import tensorflow as tf

    out = {}
    for name, (fn, elems) in workloads(tf).items():
        compiled = tf.function(lambda e, fn=fn: tf.vectorized_map(fn, e))  # traced once: the usual way to call it
        out[name] = (timed(lambda fn=fn, elems=elems: tf.vectorized_map(fn, elems)),
                     timed(lambda compiled=compiled, elems=elems: compiled(elems)))
    return out


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
    print(f"{'workload':34s} {'vectorized':>10s} {'vec tf.fn':>9s} {'py loop':>9s} {'TF eager':>9s} {'TF tf.fn':>9s} "
          f"{'loop/vec':>9s} {'TFe/vec':>8s} {'TFf/vecf':>8s}  (ms)")
    for name, (fn, elems) in workloads(tf).items():
        vec = tf.vectorized_map(fn, elems)
        for a, b in zip(vec, python_loop(tf, fn, elems)):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
        t_vec = timed(lambda fn=fn, elems=elems: tf.vectorized_map(fn, elems))
        compiled = tf.function(lambda e, fn=fn: tf.vectorized_map(fn, e))
        t_vecf = timed(lambda compiled=compiled, elems=elems: compiled(elems))
        t_loop = timed(lambda fn=fn, elems=elems: python_loop(tf, fn, elems), rounds=3, inner=1)
        t_tf, t_tff = tf_ms.get(name, (float("nan"), float("nan")))
        print(f"{name:34s} {t_vec:10.2f} {t_vecf:9.2f} {t_loop:9.2f} {t_tf:9.2f} {t_tff:9.2f} "
              f"{t_loop / t_vec:9.1f} {t_tf / t_vec:8.2f} {t_tff / t_vecf:8.2f}")


if __name__ == "__main__":
    main()
