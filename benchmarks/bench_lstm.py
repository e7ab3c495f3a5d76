"""Keras recurrent layers, tapeflow vs TensorFlow, measured alternately in one run.

Cases (a 32x20x64 batch, 64 units): eager forward, eager forward+backward under a GradientTape, and one
``fit`` step (``model.fit`` runs a tf.function: the time loop with its gradient and the Adam update), for
``LSTM`` and ``GRU``. Each framework runs in its own worker process; the rounds alternate between them
so both see the same machine load. Prints the median milliseconds per call, and TF's when TF is there.

    python benchmarks/bench_lstm.py                                   # tapeflow only
    TF_PYTHON=/opt/tfvenv/bin/python python benchmarks/bench_lstm.py  # + a TensorFlow column
    python benchmarks/bench_lstm.py --rounds 5 --repeats 10
    python benchmarks/bench_lstm.py --tutorials   # + fit steps of the TF tutorials' recurrent models

``--tutorials`` adds one ``train_on_batch`` step of the models of TF's time-series tutorial (LSTM(32),
return_sequences, 32 windows of 24 hours x 19 features), text_classification_rnn (Embedding(1000, 64,
mask_zero=True) -> Bidirectional(LSTM(64)) -> Dense(64) -> Dense(1), 64 reviews of 200 tokens, random
tokens with zero padding) and text_generation (Embedding(66, 256) -> GRU(1024, return_sequences) ->
Dense(66), 64 sequences of 100 characters).
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
TUTORIALS = ["time_series LSTM fit", "text_classification_rnn fit", "text_generation GRU fit"]
TUTORIAL_REPEATS_DIVISOR = {TUTORIALS[1]: 2, TUTORIALS[2]: 10}  # the slow ones: fewer calls a round
BATCH, STEPS, FEATURES, UNITS = 32, 20, 64, 64


def _tutorial_models(tf, rng) -> dict:
    layers = tf.keras.layers
    fns = {}

    def fit(model, x, y, loss):
        model.compile(optimizer="adam", loss=loss)
        model.train_on_batch(x, y)
        return lambda: model.train_on_batch(x, y)

    ts = tf.keras.Sequential([tf.keras.Input((24, 19)), layers.LSTM(32, return_sequences=True), layers.Dense(1)])
    fns[TUTORIALS[0]] = fit(ts, rng.standard_normal((32, 24, 19)).astype("float32"),
                            rng.standard_normal((32, 24, 1)).astype("float32"), "mse")
    tokens = rng.integers(1, 1000, (64, 200))
    tokens[np.arange(200)[None, :] >= rng.integers(20, 201, (64, 1))] = 0  # padded reviews
    clf = tf.keras.Sequential([tf.keras.Input((None,), dtype="int64"), layers.Embedding(1000, 64, mask_zero=True),
                               layers.Bidirectional(layers.LSTM(64)), layers.Dense(64, activation="relu"),
                               layers.Dense(1)])
    fns[TUTORIALS[1]] = fit(clf, tokens, rng.integers(0, 2, (64, 1)).astype("float32"),
                            tf.keras.losses.BinaryCrossentropy(from_logits=True))
    gen = tf.keras.Sequential([tf.keras.Input((100,), dtype="int64"), layers.Embedding(66, 256),
                               layers.GRU(1024, return_sequences=True), layers.Dense(66)])
    fns[TUTORIALS[2]] = fit(gen, rng.integers(1, 66, (64, 100)), rng.integers(0, 66, (64, 100)),
                            tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return fns


def _worker(which: str, tutorials: bool) -> None:
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
    if tutorials:
        fns.update(_tutorial_models(tf, rng))
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


def _start(python: str, which: str, env: dict, tutorials: bool) -> subprocess.Popen:
    p = subprocess.Popen(
        [python, os.path.abspath(__file__), "--worker", which] + (["--tutorials"] if tutorials else []),
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
    ap.add_argument("--tutorials", action="store_true", help="also the TF tutorials' models (slow)")
    args = ap.parse_args()
    if args.worker:
        _worker(args.worker, args.tutorials)
        return
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    workers = {"tapeflow": _start(sys.executable, "tapeflow", env, args.tutorials)}
    tf_python = os.environ.get("TF_PYTHON")
    if tf_python:
        tf_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        workers["tf"] = _start(tf_python, "tf", tf_env, args.tutorials)
    cases = CASES + (TUTORIALS if args.tutorials else [])
    results: dict = {(c, w): [] for c in cases for w in workers}
    for _ in range(args.rounds):
        for case in cases:
            for which, p in workers.items():  # alternate: the same case on each framework, back to back
                reps = max(1, args.repeats // TUTORIAL_REPEATS_DIVISOR.get(case, 1))
                p.stdin.write(f"{case}\t{reps}\n")
                p.stdin.flush()
                results[case, which].append(json.loads(p.stdout.readline()))
    for p in workers.values():
        p.stdin.close()
        p.wait()
    head = f"{'case':28s} {'tapeflow ms':>12s}" + (f" {'TF ms':>9s} {'TF/tapeflow':>11s}" if "tf" in workers else "")
    print(f"{BATCH}x{STEPS}x{FEATURES} batch, {UNITS} units; median of {args.rounds} rounds x {args.repeats} calls")
    print(head)
    for case in cases:
        ours = statistics.median(results[case, "tapeflow"]) * 1e3
        row = f"{case:28s} {ours:12.2f}"
        if "tf" in workers:
            theirs = statistics.median(results[case, "tf"]) * 1e3
            row += f" {theirs:9.2f} {theirs / ours:11.2f}"
        print(row)


if __name__ == "__main__":
    main()
