"""Keras on the real Fashion-MNIST: tapeflow vs TensorFlow/Keras, quiet and
beside a CPU-bound neighbour the benchmark starts itself. Run by hand:

    python benchmarks/bench_fashion.py [--rounds 2] [--data DIR] [--skip-neighbour]

Two models, both frameworks running the same program (``import tapeflow as
tf`` or ``import tensorflow as tf``), alternately, round after round:

* tutorial: TF's basic classification tutorial, Flatten -> Dense(128, relu)
  -> Dense(10), Adam, SparseCategoricalCrossentropy(from_logits=True), batch
  32: the time of the second epoch over all 60,000 images (1,875 steps; the
  first epoch includes tracing), then ``evaluate``/``predict`` of the 10,000
  test images;
* cnn: Conv32-pool-Conv64-pool-Dense128-Dense10 (3x3 SAME convolutions,
  ReLU), batch 32, Adam: steps/s of the second epoch over the first 9,600
  images (300 steps), then ``evaluate``/``predict`` of the test images.

The neighbour is one ``while True: pass`` process. Every figure is the
min / median / max over rounds; ``*_cpu_s`` are the CPU seconds of all the
process's threads over the same span (on a shared machine they show the work
done, which the wall times mix with the share of the CPUs each got). The data are the IDX files
(``/usr/share/datasets/fashion-mnist`` by default), read with NumPy + gzip.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TF_PY = os.environ.get("TF_PYTHON", "/opt/tfvenv/bin/python")

PROGRAM = r"""
import json, os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
tf = __import__(sys.argv[1])
keras = tf.keras
d = np.load(sys.argv[2])
kind = sys.argv[3]
keras.utils.set_random_seed(0)
xtr, ytr, xte, yte = d["xtr"], d["ytr"], d["xte"], d["yte"]
if kind == "tutorial":
    model = keras.Sequential([keras.Input((28, 28)), keras.layers.Flatten(),
                              keras.layers.Dense(128, activation="relu"), keras.layers.Dense(10)])
else:
    xtr, ytr = xtr[:9600, :, :, None], ytr[:9600]
    xte = xte[:, :, :, None]
    model = keras.Sequential([
        keras.Input((28, 28, 1)),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"), keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(64, 3, padding="same", activation="relu"), keras.layers.MaxPooling2D(),
        keras.layers.Flatten(), keras.layers.Dense(128, activation="relu"), keras.layers.Dense(10)])
model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
times, cpus = [], []
class T(keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.t, self.c = time.perf_counter(), time.process_time()
    def on_epoch_end(self, epoch, logs=None):
        times.append(time.perf_counter() - self.t)
        cpus.append(time.process_time() - self.c)
model.fit(xtr, ytr, epochs=2, batch_size=32, verbose=0, callbacks=[T()])
t0, c0 = time.perf_counter(), time.process_time()
_, acc = model.evaluate(xte, yte, verbose=0)
t_eval, c_eval = time.perf_counter() - t0, time.process_time() - c0
t0, c0 = time.perf_counter(), time.process_time()
model.predict(xte, verbose=0)
t_pred, c_pred = time.perf_counter() - t0, time.process_time() - c0
steps = len(xtr) // 32
# *_cpu_s: CPU seconds of all the process's threads (what a busy machine can't inflate as much as wall time)
print(json.dumps({"epoch_s": times[1], "first_epoch_s": times[0], "steps_per_s": steps / times[1],
                  "eval_s": t_eval, "predict_s": t_pred, "test_acc": float(acc),
                  "epoch_cpu_s": cpus[1], "eval_cpu_s": c_eval, "predict_cpu_s": c_pred}))
"""


def load(folder: str) -> dict:
    def idx(name):
        with gzip.open(os.path.join(folder, name + ".gz")) as f:
            raw = f.read()
        ndim = raw[3]
        dims = [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
        return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)

    return {
        "xtr": idx("train-images-idx3-ubyte").astype(np.float32) / 255.0,
        "ytr": idx("train-labels-idx1-ubyte").astype(np.int64),
        "xte": idx("t10k-images-idx3-ubyte").astype(np.float32) / 255.0,
        "yte": idx("t10k-labels-idx1-ubyte").astype(np.int64),
    }


def frameworks() -> list:
    fws = [("tapeflow", sys.executable)]
    if os.path.exists(TF_PY):
        fws.append(("tensorflow", TF_PY))
    else:
        print(f"(TensorFlow not found at {TF_PY}: its column is skipped)")
    return fws


def run_one(module: str, python: str, data: str, kind: str) -> dict | None:
    env = dict(os.environ, PYTHONPATH=ROOT)
    for k in ("PYTHONDONTWRITEBYTECODE", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        env.pop(k, None)
    out = subprocess.run(
        [python, "-c", PROGRAM, module, data, kind], capture_output=True, text=True, env=env, timeout=1800, cwd=ROOT
    )
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        print(f"  {module} {kind} failed:\n{out.stderr[-2000:]}")
        return None


def stats(values: list) -> str:
    if not values:
        return "n/a"
    return f"{min(values):.3g} / {statistics.median(values):.3g} / {max(values):.3g}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--skip-neighbour", action="store_true")
    p.add_argument("--kinds", default="tutorial,cnn")
    args = p.parse_args(argv)
    if not os.path.exists(os.path.join(args.data, "train-images-idx3-ubyte.gz")):
        print(f"Fashion-MNIST IDX files not found in {args.data}: skipped")
        return 0
    fws = frameworks()
    start_load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "fashion.npz")
        np.savez(data, **load(args.data))
        conditions = ["quiet"] + ([] if args.skip_neighbour else ["neighbour"])
        results: dict = {}
        for cond in conditions:
            neighbour = None
            if cond == "neighbour":
                neighbour = subprocess.Popen([sys.executable, "-c", "while True: pass"])
                time.sleep(1.0)
            try:
                for r in range(args.rounds):
                    for kind in args.kinds.split(","):
                        for name, py in fws:
                            load_before = os.getloadavg()[0]
                            res = run_one("tapeflow" if name == "tapeflow" else "tensorflow", py, data, kind)
                            if res:
                                res["load"] = load_before
                                results.setdefault((cond, kind, name), []).append(res)
                                print(
                                    f"  round {r + 1} {cond:9s} {kind:8s} {name:10s} "
                                    + " ".join(f"{k}={v:.3g}" for k, v in res.items()),
                                    flush=True,
                                )
            finally:
                if neighbour is not None:
                    neighbour.kill()
                    neighbour.wait()
    print(
        f"\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load before each run "
        f"{stats([r['load'] for rs in results.values() for r in rs])} (1-min loadavg, {os.cpu_count()} CPUs); "
        f"1/5/15-min load at the start {' '.join(f'{v:.2f}' for v in start_load)}, "
        f"at the end {' '.join(f'{v:.2f}' for v in os.getloadavg())}"
    )
    print(
        f"{'condition':10s} {'model':9s} {'metric':14s} "
        + " ".join(f"{n:>26s}" for n, _ in fws)
        + "   (min / median / max)"
    )
    for cond in conditions:
        for kind in args.kinds.split(","):
            for metric in ("epoch_s", "steps_per_s", "eval_s", "predict_s", "epoch_cpu_s", "eval_cpu_s",
                           "predict_cpu_s", "test_acc"):
                cells = [stats([r[metric] for r in results.get((cond, kind, n), [])]) for n, _ in fws]
                print(f"{cond:10s} {kind:9s} {metric:14s} " + " ".join(f"{c:>26s}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
