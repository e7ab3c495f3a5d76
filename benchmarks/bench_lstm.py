"""Keras recurrent layers, tapeflow vs TensorFlow, measured alternately in one run.

Cases (a 32x20x64 batch, 64 units): eager forward, eager forward+backward under a GradientTape, and one
``fit`` step (``model.fit`` runs a tf.function: the time loop with its gradient and the Adam update), for
``LSTM`` and ``GRU``. Each framework runs in its own worker process; the rounds alternate between them
so both see the same machine load. Prints the median milliseconds per call, and TF's when TF is there.

    python benchmarks/bench_lstm.py                                   # tapeflow only
    TF_PYTHON=/opt/tfvenv/bin/python python benchmarks/bench_lstm.py  # + a TensorFlow column
    python benchmarks/bench_lstm.py --rounds 5 --repeats 10
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

CASES = [f"{layer} {mode}" for layer in ("LSTM", "GRU") for mode in ("eager forward", "eager fwd+bwd", "fit step")]
BATCH, STEPS, FEATURES, UNITS = 32, 20, 64, 64


def _worker(which: str) -> None:
    """Builds every case, then answers each line ``CASE<TAB>REPEATS`` with the median seconds."""
    if which == "tf":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf
    else:
        import tapeflow as tf
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((BATCH, STEPS, FEATURES)).astype("float32")
    y_np = rng.standard_normal((BATCH, 1)).astype("float32")
    x = tf.constant(x_np)
    fns = {}
    for name in ("LSTM", "GRU"):
        layer = getattr(tf.keras.layers, name)(UNITS)
        layer(x)

        def fwd(layer=layer):
            return layer(x)

        def fwd_bwd(layer=layer):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(layer(x))
            return tape.gradient(loss, layer.trainable_weights)

        model = tf.keras.Sequential(
            [tf.keras.Input((STEPS, FEATURES)), getattr(tf.keras.layers, name)(UNITS), tf.keras.layers.Dense(1)]
        )
        model.compile(optimizer="adam", loss="mse")
        model.train_on_batch(x_np, y_np)

        def fit_step(model=model):
            return model.train_on_batch(x_np, y_np)

        fns[f"{name} eager forward"], fns[f"{name} eager fwd+bwd"], fns[f"{name} fit step"] = fwd, fwd_bwd, fit_step
    for fn in fns.values():
        fn()
    print("ready", flush=True)
    for line in sys.stdin:
        case, repeats = line.rstrip("\n").split("\t")
        fn = fns[case]
        fn()
        times = []
        for _ in range(int(repeats)):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        print(json.dumps(statistics.median(times)), flush=True)


def _start(python: str, which: str, env: dict) -> subprocess.Popen:
    p = subprocess.Popen(
        [python, os.path.abspath(__file__), "--worker", which],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
    )
    line = p.stdout.readline()
    if line.strip() != "ready":
        raise RuntimeError(f"the {which} worker did not start (it printed {line!r})")
    return p


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", choices=["tf", "tapeflow"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    if args.worker:
        _worker(args.worker)
        return
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    workers = {"tapeflow": _start(sys.executable, "tapeflow", env)}
    tf_python = os.environ.get("TF_PYTHON")
    if tf_python:
        tf_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        workers["tf"] = _start(tf_python, "tf", tf_env)
    results: dict = {(c, w): [] for c in CASES for w in workers}
    for _ in range(args.rounds):
        for case in CASES:
            for which, p in workers.items():  # alternate: the same case on each framework, back to back
                p.stdin.write(f"{case}\t{args.repeats}\n")
                p.stdin.flush()
                results[case, which].append(json.loads(p.stdout.readline()))
    for p in workers.values():
        p.stdin.close()
        p.wait()
    head = f"{'case':22s} {'tapeflow ms':>12s}" + (f" {'TF ms':>9s} {'TF/tapeflow':>11s}" if "tf" in workers else "")
    print(f"{BATCH}x{STEPS}x{FEATURES} batch, {UNITS} units; median of {args.rounds} rounds x {args.repeats} calls")
    print(head)
    for case in CASES:
        ours = statistics.median(results[case, "tapeflow"]) * 1e3
        row = f"{case:22s} {ours:12.2f}"
        if "tf" in workers:
            theirs = statistics.median(results[case, "tf"]) * 1e3
            row += f" {theirs:9.2f} {theirs / ours:11.2f}"
        print(row)


if __name__ == "__main__":
    main()
