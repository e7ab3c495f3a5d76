"""Multi-process benchmarks: collective latency/bandwidth and data-parallel ``fit`` scaling.

Run by hand (never by CI), with the ``distributed`` extra installed::

    python benchmarks/bench_distributed.py [--quick] [--ranks 1 2 4]

It launches ``mpirun`` itself (``--oversubscribe`` past the machine's cores; as root it sets
Open MPI's run-as-root variables), on one host through shared memory:

1. float32 SUM all-reduce between 2 processes at 4 KB, 1 MB and 64 MB: raw mpi4py
   (``comm.Allreduce`` into a preallocated buffer) against tapeflow's ``strategy.reduce`` /
   ``ReplicaContext.all_reduce`` path (the ``CollectiveReduceV2`` op, eager) on one tensor, and the
   fused path the optimizer takes for a step's gradients (the same bytes as 8 tensors, packed into
   one buffer, one allreduce, unpacked).
   Rounds of raw and tapeflow are interleaved; each figure is the median of its rounds.
2. ``model.fit`` on an MLP (784-512-512-10, float32, global batch 128: ~10 ms a step on one core)
   under ``MultiWorkerMirroredStrategy`` at each rank count: steps/s and the scaling efficiency
   ``steps/s(N) / (N * steps/s(1))`` (the global batch is fixed, so ideal is N times faster).
   Every rank uses one BLAS thread. Waiting ranks yield their core (tapeflow's default);
   ``--spin`` measures Open MPI's busy-waiting instead.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

SIZES = {"4 KB": 4 << 10, "1 MB": 1 << 20, "64 MB": 64 << 20}


def _env() -> dict:
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    env.update(
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMPI_MCA_btl="self,sm",
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
    )
    for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "PYTHONDONTWRITEBYTECODE"):
        env.pop(k, None)
    return env


def _mpirun() -> str:
    here = os.path.join(os.path.dirname(sys.executable), "mpirun")
    return here if os.path.exists(here) else "mpirun"


def _launch(n: int, *args: str) -> dict:
    cmd = [_mpirun(), "-n", str(n)] + (["--oversubscribe"] if n > 2 else [])
    cmd += [sys.executable, os.path.abspath(__file__), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=1200)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- run inside mpirun ------------------------------------------------------------------------
def _allreduce_worker(quick: bool) -> None:
    from mpi4py import MPI

    import tapeflow as tf
    from tapeflow.distribute import collective_ops

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    comm = MPI.COMM_WORLD
    results = {}
    for label, nbytes in SIZES.items():
        n = nbytes // 4
        x = np.random.default_rng(comm.rank).normal(size=n).astype(np.float32)
        out = np.empty_like(x)
        tx = tf.constant(x)
        parts = [tf.constant(p) for p in np.array_split(x, 8)]
        rounds = (3 if quick else 7) if nbytes >= 16 << 20 else (50 if quick else 300)
        inner = 1 if nbytes >= 16 << 20 else (20 if nbytes < 64 << 10 else 5)

        def raw(x=x, out=out):
            comm.Allreduce(x, out, op=MPI.SUM)

        def tapeflow_one(tx=tx):
            strategy.reduce("SUM", tx, axis=None)

        def tapeflow_fused(parts=parts):
            collective_ops.all_reduce(parts, "sum")  # what the optimizer does with a step's dense gradients

        times = {"raw": [], "tapeflow": [], "fused": []}
        np.testing.assert_allclose(strategy.reduce("SUM", tx, axis=None).numpy(), (raw(), out)[1], rtol=1e-6)
        for _ in range(rounds):
            for name, fn in (("raw", raw), ("tapeflow", tapeflow_one), ("fused", tapeflow_fused)):
                comm.Barrier()
                t0 = time.perf_counter()
                for _ in range(inner):
                    fn()
                times[name].append((time.perf_counter() - t0) / inner)
        med = {k: float(np.median(v)) for k, v in times.items()}
        med = {k: float(np.max(comm.allgather(v))) for k, v in med.items()}  # the slowest rank's median
        results[label] = med
    if comm.rank == 0:
        print(json.dumps(results))


def _fit_worker(quick: bool) -> None:
    import tapeflow as tf

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    rng = np.random.default_rng(0)
    global_batch = 128
    steps = 30 if quick else 120
    x = rng.normal(size=(global_batch * steps, 784)).astype(np.float32)
    y = rng.integers(0, 10, size=len(x))
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.Input((784,)),
                tf.keras.layers.Dense(512, activation="relu"),
                tf.keras.layers.Dense(512, activation="relu"),
                tf.keras.layers.Dense(10),
            ]
        )
        model.compile(
            optimizer=tf.keras.optimizers.SGD(0.01),
            loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        )
    model.fit(x[: global_batch * 5], y[: global_batch * 5], batch_size=global_batch, epochs=1, verbose=0)  # trace
    best = 0.0
    for _ in range(2 if quick else 3):
        t0 = time.perf_counter()
        model.fit(x, y, batch_size=global_batch, epochs=1, verbose=0, shuffle=False)
        best = max(best, steps / (time.perf_counter() - t0))
    if strategy.cluster_resolver.task_id in (0, None):
        print(json.dumps({"steps_per_s": best, "replicas": strategy.num_replicas_in_sync}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--worker", choices=["allreduce", "fit"])
    ap.add_argument(
        "--spin",
        action="store_true",
        help="Open MPI's default busy-waiting (mpi_yield_when_idle=0) instead of tapeflow's yielding default",
    )
    args = ap.parse_args()
    q = ["--quick"] if args.quick else []
    if args.spin:
        os.environ["OMPI_MCA_mpi_yield_when_idle"] = "0"
    if args.worker == "allreduce":
        return _allreduce_worker(args.quick)
    if args.worker == "fit":
        return _fit_worker(args.quick)
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f} / {os.getloadavg()[1]:.2f} (1 / 5 min)"
        + (", mpi_yield_when_idle=0 (spinning)" if args.spin else "")
    )
    print("\nfloat32 SUM allreduce, 2 processes (median per call; the slower rank):")
    print(f"{'size':>6}  {'raw mpi4py':>11}  {'tapeflow':>11}  {'ratio':>6}  {'fused 8x':>11}  {'ratio':>6}  bandwidth")
    res = _launch(2, "--worker", "allreduce", *q)
    for label, nbytes in SIZES.items():
        r = res[label]
        fmt = (lambda s: f"{s * 1e6:8.1f} us") if r["raw"] < 1e-3 else (lambda s: f"{s * 1e3:8.2f} ms")
        print(
            f"{label:>6}  {fmt(r['raw']):>11}  {fmt(r['tapeflow']):>11}  {r['tapeflow'] / r['raw']:5.2f}x  "
            f"{fmt(r['fused']):>11}  {r['fused'] / r['raw']:5.2f}x  {nbytes / r['raw'] / 1e9:6.2f} GB/s"
        )
    print("\nfit, MLP 784-512-512-10 float32, global batch 128, one BLAS thread per rank:")
    base = None
    for n in args.ranks:
        r = _launch(n, "--worker", "fit", *q)
        base = base or (r["steps_per_s"] if n == 1 else None)
        eff = f"{r['steps_per_s'] / (n * base):6.0%}" if base else "   n/a"
        print(
            f"{n} rank(s): {r['steps_per_s']:7.1f} steps/s ({1e3 / r['steps_per_s']:6.1f} ms/step)  "
            f"scaling efficiency {eff}"
        )
    print(f"# load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
