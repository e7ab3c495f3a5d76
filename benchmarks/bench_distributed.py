"""Multi-process benchmarks: collective latency/bandwidth and data-parallel ``fit`` scaling.

Run by hand (never by CI), with the ``distributed`` extra installed::

    python benchmarks/bench_distributed.py [--quick] [--ranks 1 2 4]

It launches ``mpirun`` itself (``--oversubscribe`` past the machine's cores; as root it sets
Open MPI's run-as-root variables), on one host through shared memory:

1. float32 SUM all-reduce between 2 processes at 4 KB, 1 MB and 64 MB. Raw mpi4py
   (``comm.Allreduce`` into a preallocated buffer) against tapeflow on the same buffer:
   ``strategy.reduce`` and ``ReplicaContext.all_reduce`` of one tensor (eager: a new result tensor each
   call) and one tensor as a compiled ``tf.function`` reduces it (the line the compiler emits for the
   traced ``CollectiveReduceV2``, with the node's own buffer). Then a step's gradients — the same bytes as
   8 arrays (4 kernels, 4 biases) — packed by hand with mpi4py (copied into the views of a preallocated
   buffer, one in-place ``Allreduce``) against tapeflow's fused gradient allreduce, eager
   (what an eager ``apply_gradients`` calls: the gradient arrays it has checked against their variables;
   and the strategy's tensor-level sum, for tensors in and out) and as a compiled train step (Keras ``fit``)
   runs it. Rounds
   of all of them are interleaved; each figure is the min and the median of its rounds on the slower rank.
2. ``model.fit`` on an MLP (784-512-512-10, float32, global batch 192: about 9 ms a step on one idle
   core) under ``MultiWorkerMirroredStrategy`` at each rank count: steps/s and the scaling efficiency
   ``steps/s(N) / (N * steps/s(1))`` (the global batch is fixed, so ideal is N times faster).
   Every rank uses one BLAS thread. Waiting ranks yield their core (tapeflow's default);
   ``--spin`` measures Open MPI's busy-waiting instead.
"""

from __future__ import annotations

import argparse
import functools
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
    from tapeflow.framework.tensor import Tensor

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    ctx = strategy.run(tf.distribute.get_replica_context)
    kernel = collective_ops.COLLECTIVE_REDUCE.kernel
    comm = MPI.COMM_WORLD
    results = {}
    for label, nbytes in SIZES.items():
        n = nbytes // 4
        x = np.random.default_rng(comm.rank).normal(size=n).astype(np.float32)
        out = np.empty_like(x)
        tx = tf.constant(x)
        # a step's gradients: 4 kernels and 4 biases of an MLP, the same bytes in all
        cut = np.cumsum([0] + [n // 4 - 64] * 4 + [64] * 3)
        arrays = [x[a:b] for a, b in zip(cut, list(cut[1:]) + [n])]
        arrays = [a.reshape(-1, 64) if i < 4 else a.copy() for i, a in enumerate(arrays)]
        parts = [tf.constant(a) for a in arrays]
        buf = np.empty(n, np.float32)
        views = [buf[a:b].reshape(v.shape) for a, b, v in zip(cut, list(cut[1:]) + [n], arrays)]
        rounds = (3 if quick else 9) if nbytes >= 16 << 20 else (50 if quick else 300)
        inner = 1 if nbytes >= 16 << 20 else (20 if nbytes < 64 << 10 else 5)

        def raw(x=x, out=out):
            comm.Allreduce(x, out, op=MPI.SUM)

        def raw_fused(arrays=arrays, buf=buf, views=views):  # by hand: pack, one in-place Allreduce, views
            for v, a in zip(views, arrays):  # (faster than np.concatenate(arrays, axis=None, out=buf))
                v[...] = a
            comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)
            return views

        # (ReduceOp.SUM looked up once, as raw looks up MPI.SUM: an Enum member's lookup alone is ~0.14 us)
        def reduce(tx=tx, SUM=tf.distribute.ReduceOp.SUM):
            strategy.reduce(SUM, tx, axis=None)

        def replica_all_reduce(tx=tx, SUM=tf.distribute.ReduceOp.SUM):
            ctx.all_reduce(SUM, tx)

        def raw_tensors(parts=parts, buf=buf, views=views, Tensor=Tensor):
            # raw_fused taking and giving tensors, with no checks: the least any eager library must do on top
            for v, p in zip(views, parts):
                v[...] = p._value
            comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)
            return list(map(Tensor, views))

        def fused_tensors(parts=parts):  # the strategy's tensor-level gradient sum (LossScaleOptimizer's)
            strategy._aggregate_gradients(parts)

        grad_vars = [tf.Variable(a) for a in arrays]

        # what an eager apply_gradients does with a step's dense gradients: the arrays it has checked against
        # their variables, summed in one fused allreduce (the one call it makes, bound as raw's arguments are)
        fused_eager = functools.partial(strategy._sum_gradient_arrays, arrays, grad_vars)

        plan8 = collective_ops.FusionPlan(tuple(a.shape for a in arrays), np.float32, "sum")
        plan1 = collective_ops.FusionPlan((x.shape,), np.float32, "sum")

        a = arrays

        # the same, as a compiled train step runs it: the line the compiler emits for the traced op (its node's
        # own buffer; the kernel only if that buffer is still held)
        def fused_graph(a0=a[0], a1=a[1], a2=a[2], a3=a[3], a4=a[4], a5=a[5], a6=a[6], a7=a[7], plan8=plan8):
            return plan8.step((a0, a1, a2, a3, a4, a5, a6, a7)) or kernel(a0, a1, a2, a3, a4, a5, a6, a7,
                                                                           reduction="sum", n=8, plan=plan8)

        def one_graph(x=x, plan1=plan1):  # strategy.reduce of one tensor inside tf.function (the same line)
            return plan1.step((x,)) or kernel(x, reduction="sum", n=1, plan=plan1)

        fns = {"raw": raw, "reduce": reduce, "replica": replica_all_reduce, "one_graph": one_graph,
               "raw_fused": raw_fused, "raw_tensors": raw_tensors, "fused_tensors": fused_tensors,
               "fused_eager": fused_eager, "fused_graph": fused_graph}
        np.testing.assert_allclose(strategy.reduce("SUM", tx, axis=None).numpy(), (raw(), out)[1], rtol=1e-6)
        np.testing.assert_allclose(kernel(x, reduction="sum", n=1, plan=plan1)[0], out, rtol=1e-6)
        assert plan1.fused is not None  # its own buffer from now on
        want = [v.copy() for v in raw_fused()]
        for got in (strategy._aggregate_gradients(parts), strategy._sum_gradient_arrays(arrays, grad_vars),
                    kernel(*arrays, reduction="sum", n=8, plan=plan8)):
            for g, v in zip(got, want):
                np.testing.assert_allclose(np.asarray(g), v, rtol=1e-6)
        assert plan8.fused is not None
        del got, g  # (a result still held would keep the node from reusing its buffer)
        times: dict = {k: [] for k in fns}
        for _ in range(rounds):
            for name, fn in fns.items():
                comm.Barrier()
                t0 = time.perf_counter()
                for _ in range(inner):
                    fn()
                times[name].append((time.perf_counter() - t0) / inner)
        stats = {k: (float(np.min(v)), float(np.median(v))) for k, v in times.items()}
        # the slower rank's min and median
        results[label] = {k: [float(np.max(c)) for c in zip(*comm.allgather(v))] for k, v in stats.items()}
    if comm.rank == 0:
        print(json.dumps(results))


def _fit_worker(quick: bool) -> None:
    import tapeflow as tf

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    rng = np.random.default_rng(0)
    global_batch = 192
    steps = 30 if quick else 100
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
    ap.add_argument("--only", choices=["allreduce", "fit"], help="run one of the two parts")
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
    print("\nfloat32 SUM allreduce, 2 processes, per call on the slower rank: min / median over the rounds")
    print("(in brackets: the ratio to raw mpi4py on the same buffers, min / median)")
    cols = [("raw", "raw mpi4py", None), ("reduce", "strategy.reduce", "raw"), ("replica", "replica all_reduce", "raw"),
            ("one_graph", "1 tensor, compiled", "raw"), ("raw_fused", "raw, 8 packed", None),
            ("raw_tensors", "raw, 8 packed tensors", "raw_fused"),
            ("fused_tensors", "8 fused tensors, eager", "raw_fused"), ("fused_eager", "8 fused, eager", "raw_fused"),
            ("fused_graph", "8 fused, compiled", "raw_fused")]
    res = _launch(2, "--worker", "allreduce", *q) if args.only != "fit" else {}
    for label in res:
        r = res[label]
        unit, scale = ("us", 1e6) if r["raw"][1] < 1e-3 else ("ms", 1e3)
        print(f"\n{label}:")
        for key, name, base in cols:
            mn, md = r[key]
            ratio = f"  ({mn / r[base][0]:.2f}x / {md / r[base][1]:.2f}x)" if base else ""
            print(f"  {name:>22}: {mn * scale:8.2f} / {md * scale:8.2f} {unit}{ratio}")
    print("\n(the fused rows' ratios are to 'raw, 8 packed': the same 8 arrays packed by hand with mpi4py;")
    print(" 'raw, 8 packed tensors' is that from and to tensors, unchecked: the floor of an eager fused reduce)")
    print(f"# load average {os.getloadavg()[0]:.2f}")
    print("\nfit, MLP 784-512-512-10 float32, global batch 192, one BLAS thread per rank:")
    base = None
    for n in args.ranks if args.only != "allreduce" else ():
        r = _launch(n, "--worker", "fit", *q)
        base = base or (r["steps_per_s"] if n == 1 else None)
        eff = f"{r['steps_per_s'] / (n * base):6.0%}" if base else "   n/a"
        print(
            f"{n} rank(s): {r['steps_per_s']:7.1f} steps/s ({1e3 / r['steps_per_s']:6.1f} ms/step)  "
            f"scaling efficiency {eff}  (load average {os.getloadavg()[0]:.2f})"
        )
    print(f"# load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
