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
done, which the wall times mix with the share of the CPUs each got). On Linux
the second epoch's scheduler statistics come too (``/proc/self/task/*/schedstat``):
``busiest_thread_s``, the CPU seconds of the thread that ran most (the critical
path when the CPUs are shared), and ``epoch_wait_s``, the seconds the process's
threads spent runnable but waiting for a CPU. The data are the IDX files
(``/usr/share/datasets/fashion-mnist`` by default), read with NumPy + gzip.

``--profile`` instead times every kernel call of tapeflow's compiled fit step
(one intra-op thread, inter-op off, a thread clock around each call, the second epoch):
where a step's CPU time goes, per kernel and input shape.
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
kind, profiling = sys.argv[3].removesuffix("-profile"), sys.argv[3].endswith("-profile")
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
def sched():  # {thread: (ns run, ns runnable but waiting)} (Linux; {} elsewhere)
    out = {}
    for tid in (os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else ()):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                run, wait = f.read().split()[:2]
            out[tid] = (int(run), int(wait))
        except (OSError, ValueError):
            pass
    return out
profile, on = {}, [False]
if profiling:  # time each kernel call of the compiled graphs (tapeflow only)
    from tapeflow.graph import compiler
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)  # (every kernel on this thread: its clock times them)
    init = compiler.CompiledGraph.__init__
    def timed(name, k):
        def call(*a, **kw):
            if not on[0]:
                return k(*a, **kw)
            t0 = time.thread_time()
            r = k(*a, **kw)
            key = f"{name} {tuple(getattr(a[0], 'shape', ()))}"
            n, s = profile.get(key, (0, 0.0))
            profile[key] = (n + 1, s + time.thread_time() - t0)
            return r
        return call
    def patched(self, fn, *a, **kw):
        for key, v in list(fn.__globals__.items()):
            if key.startswith("k_") and callable(v):  # the generated source's kernels
                fn.__globals__[key] = timed(getattr(v, "__name__", key), v)
        init(self, fn, *a, **kw)
    compiler.CompiledGraph.__init__ = patched
times, cpus, scheds = [], [], []
class T(keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.t, self.c, self.s = time.perf_counter(), time.process_time(), sched()
        on[0] = epoch == 1  # (the profile's epoch: the second)
    def on_epoch_end(self, epoch, logs=None):
        times.append(time.perf_counter() - self.t)
        cpus.append(time.process_time() - self.c)
        on[0] = False
        s0, s1 = self.s, sched()
        d = [(r - s0.get(t, (0, 0))[0], w - s0.get(t, (0, 0))[1]) for t, (r, w) in s1.items()]
        scheds.append((max((r for r, _ in d), default=0) / 1e9, sum(w for _, w in d) / 1e9))
model.fit(xtr, ytr, epochs=2, batch_size=32, verbose=0, callbacks=[T()])
t0, c0 = time.perf_counter(), time.process_time()
_, acc = model.evaluate(xte, yte, verbose=0)
t_eval, c_eval = time.perf_counter() - t0, time.process_time() - c0
t0, c0 = time.perf_counter(), time.process_time()
model.predict(xte, verbose=0)
t_pred, c_pred = time.perf_counter() - t0, time.process_time() - c0
steps = len(xtr) // 32
# *_cpu_s: CPU seconds of all the process's threads (what a busy machine can't inflate as much as wall time)
res = {"epoch_s": times[1], "first_epoch_s": times[0], "steps_per_s": steps / times[1],
       "eval_s": t_eval, "predict_s": t_pred, "test_acc": float(acc),
       "epoch_cpu_s": cpus[1], "eval_cpu_s": c_eval, "predict_cpu_s": c_pred}
if scheds and scheds[1][0]:
    res.update(busiest_thread_s=scheds[1][0], epoch_wait_s=scheds[1][1])
if profile:
    res["profile"] = sorted(((s / steps * 1e3, n / steps, k) for k, (n, s) in profile.items()), reverse=True)
print(json.dumps(res))
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
    p.add_argument("--profile", action="store_true", help="tapeflow's kernel times a fit step instead")
    args = p.parse_args(argv)
    if not os.path.exists(os.path.join(args.data, "train-images-idx3-ubyte.gz")):
        print(f"Fashion-MNIST IDX files not found in {args.data}: skipped")
        return 0
    if args.profile:
        return profile(args)
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
                                    + " ".join(f"{k}={v:.3g}" for k, v in res.items() if k != "profile"),
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
                           "predict_cpu_s", "busiest_thread_s", "epoch_wait_s", "test_acc"):
                cells = [stats([r[metric] for r in results.get((cond, kind, n), []) if metric in r]) for n, _ in fws]
                print(f"{cond:10s} {kind:9s} {metric:14s} " + " ".join(f"{c:>26s}" for c in cells))
    return 0


def profile(args) -> int:
    """Per-kernel CPU milliseconds of tapeflow's compiled fit step, one row per kernel and input shape."""
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "fashion.npz")
        np.savez(data, **load(args.data))
        for kind in args.kinds.split(","):
            for r in range(args.rounds):
                load_before = os.getloadavg()[0]
                res = run_one("tapeflow", sys.executable, data, kind + "-profile")
                if not res:
                    continue
                steps = res["steps_per_s"] * res["epoch_s"]
                rows = res["profile"]
                print(f"\n{kind}, round {r + 1} (load {load_before:.2f}, one intra-op thread): "
                      f"{res['epoch_cpu_s'] / steps * 1e3:.2f} ms of CPU a step, "
                      f"{sum(ms for ms, _, _ in rows):.2f} in kernels")
                for ms, calls, name in rows:
                    if ms >= 0.02:
                        print(f"  {ms:7.3f} ms  {calls:4.1f} calls  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
