"""Eager autodiff, tapeflow vs PyTorch eager vs TF eager, as ratios to
hand-written NumPy measured in the same process. Run by hand:

    python benchmarks/bench_eager.py [--rounds 3] [--only chain,mlp16,...]

Rows (each framework runs in its own interpreter; the frameworks take turns,
round after round; each figure is the min / median / max over rounds of the
best-of-several ratio):

* chain: 1000 float32 scalar ops (sin, *, tanh, +), forward + backward, vs
  the same NumPy ufuncs called on 0-d arrays (forward only, as in bench_core);
* mlp16/128/1024: a 784-512-256-10 ReLU MLP step (softmax cross-entropy,
  gradient, SGD), float32, vs the same step in NumPy;
* jac64/jac256: full Jacobian of tanh(Wx+b) (vectorized: ``tape.jacobian``,
  ``torch.func.jacrev``), float64, vs the analytic NumPy Jacobian;
* hess64: Hessian of sum(tanh(Wx)^2) (nested tapes + jacobian;
  ``torch.func.hessian``), vs analytic;
* hvp64: Hessian-vector product, best of forward-over-backward and
  backward-over-backward, vs analytic;
* d4: 4th derivative of tanh(x)exp(sin(x)) by four nested tapes (PyTorch:
  four nested ``torch.autograd.grad(create_graph=True)``), vs closed form.

Times are CPU times (``time.process_time``) with every framework and NumPy on
one thread (BLAS env vars, ``torch.set_num_threads(1)``, TF's intra/inter-op
threads = 1), so a machine shared with other work moves the ratios little;
``bench_fashion.py`` measures wall time and threading under load.

TensorFlow comes from /opt/tfvenv/bin/python ($TF_PYTHON), PyTorch from
/opt/torchvenv/bin/python ($TORCH_PYTHON); a missing one is skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TF_PY = os.environ.get("TF_PYTHON", "/opt/tfvenv/bin/python")
TORCH_PY = os.environ.get("TORCH_PYTHON", "/opt/torchvenv/bin/python")
ROWS = ["chain", "mlp16", "mlp128", "mlp1024", "jac64", "jac256", "hess64", "hvp64", "d4"]
TARGETS = {
    "chain": 6,
    "mlp16": 1.3,
    "mlp128": 1.1,
    "mlp1024": 1.05,
    "jac64": 10,
    "jac256": 5,
    "hess64": 20,
    "hvp64": 8,
    "d4": 40,
}

COMMON = r"""
import json, os, sys, time
import numpy as np
def best(fn, number, repeat=5):
    fn()
    ts = []
    for _ in range(repeat):
        t0 = time.process_time()
        for _ in range(number):
            fn()
        ts.append((time.process_time() - t0) / number)
    return min(ts)
SLOW = sys.argv[1] == "tensorflow"  # TF eager: 100-10,000x slower on these, fewer calls
def ratio(ref, fn, number, repeat=5):
    # interleaved: reference and framework share the same moments of load
    r = f = float("inf")
    for _ in range(repeat):
        r = min(r, best(ref, number, 1))
        f = min(f, best(fn, max(1, number // 20) if SLOW else number, 1))
    return f / r
N = 1000
x0 = np.asarray(0.3, np.float32); c1 = np.asarray(0.9, np.float32); c2 = np.asarray(0.1, np.float32)
def np0d():
    for _ in range(N // 4):
        np.sin(x0); np.multiply(x0, c1); np.tanh(x0); np.add(x0, c2)
def mlp_np(batch):
    rng = np.random.default_rng(1)
    xn = rng.standard_normal((batch, 784)).astype(np.float32)
    yn = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
    sizes = (784, 512, 256, 10)
    ws = [(rng.standard_normal((a, b)).astype(np.float32) * np.float32(0.05), np.zeros(b, np.float32))
          for a, b in zip(sizes[:-1], sizes[1:])]
    def step():
        acts = [xn]; h = xn
        for i, (w, b) in enumerate(ws):
            z = h @ w + b; h = np.maximum(z, 0) if i < 2 else z; acts.append(h)
        m = h.max(1, keepdims=True); e = np.exp(h - m); p = e / e.sum(1, keepdims=True)
        g = (p - yn) / np.float32(batch)
        for i in range(2, -1, -1):
            w, b = ws[i]; a = acts[i]; gw = a.T @ g; gb = g.sum(0)
            if i: g = (g @ w.T) * (acts[i] > 0)
            w -= np.float32(0.01) * gw; b -= np.float32(0.01) * gb
    return xn, yn, [(w.copy(), b.copy()) for w, b in ws], step
rng = np.random.default_rng(0)
def jac_np(n):
    wn, bn, xn = rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n), rng.standard_normal(n)
    def ref():
        y = np.tanh(wn @ xn + bn)
        return (1.0 - y * y)[:, None] * wn
    return wn, bn, xn, ref
def hess_np(n):
    wn, xn, vn = rng.standard_normal((n, n)) / np.sqrt(n), rng.standard_normal(n), rng.standard_normal(n)
    def hess():
        u = np.tanh(wn @ xn); d = 2.0 * (1.0 - u * u) * (1.0 - 3.0 * u * u)
        return wn.T @ (d[:, None] * wn)
    def hvp():
        u = np.tanh(wn @ xn); d = 2.0 * (1.0 - u * u) * (1.0 - 3.0 * u * u)
        return wn.T @ (d * (wn @ vn))
    return wn, xn, vn, hess, hvp
def d4_np():
    xn = np.float64(0.7)
    def ref():
        t = np.tanh(xn); s, c = np.sin(xn), np.cos(xn); e = np.exp(s); sech2 = 1.0 - t * t
        a = (t, sech2, -2.0 * t * sech2, (6.0 * t * t - 2.0) * sech2, (16.0 * t - 24.0 * t ** 3) * sech2)
        cc = c * c
        b = (e, c * e, (cc - s) * e, (cc * c - 3.0 * c * s - c) * e,
             (cc * cc - 6.0 * cc * s - 4.0 * cc + 3.0 * s * s + s) * e)
        return a[0] * b[4] + 4.0 * a[1] * b[3] + 6.0 * a[2] * b[2] + 4.0 * a[3] * b[1] + a[4] * b[0]
    return xn, ref
only = sys.argv[2].split(",")
res = {}
"""

TF_PROGRAM = (
    COMMON
    + r"""
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = __import__(sys.argv[1])
tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)
if "chain" in only:
    tx, tc1, tc2 = tf.constant(0.3), tf.constant(0.9), tf.constant(0.1)
    def fb():
        with tf.GradientTape() as g:
            g.watch(tx); x = tx
            for _ in range(N // 4):
                x = tf.sin(x); x = x * tc1; x = tf.tanh(x); x = x + tc2
        return g.gradient(x, tx)
    res["chain"] = ratio(np0d, fb, 8, 5) if sys.argv[1] == "tapeflow" else ratio(np0d, fb, 1, 3)
for batch in (16, 128, 1024):
    if f"mlp{batch}" not in only:
        continue
    xn, yn, ws, npstep = mlp_np(batch)
    x, y = tf.constant(xn), tf.constant(yn)
    vs = [(tf.Variable(w), tf.Variable(b)) for w, b in ws]
    flat = [v for p in vs for v in p]
    def step():
        with tf.GradientTape() as t:
            h = x
            for i, (w, b) in enumerate(vs):
                h = tf.matmul(h, w) + b
                if i < 2: h = tf.nn.relu(h)
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, h))
        for v, g in zip(flat, t.gradient(loss, flat)): v.assign_sub(0.01 * g)
    res[f"mlp{batch}"] = ratio(npstep, step, 40 if batch <= 128 else 8)
for n in (64, 256):
    if f"jac{n}" not in only:
        continue
    wn, bn, xn, ref = jac_np(n)
    w, b, xt = tf.constant(wn), tf.constant(bn), tf.constant(xn)
    def jac():
        with tf.GradientTape() as tape:
            tape.watch(xt)
            yv = tf.tanh(tf.linalg.matvec(w, xt) + b)
        return tape.jacobian(yv, xt)
    np.testing.assert_allclose(np.asarray(jac()), ref(), rtol=1e-9, atol=1e-12)
    res[f"jac{n}"] = ratio(ref, jac, 200 if n == 64 else 40)
if "hess64" in only or "hvp64" in only:
    wn, xn, vn, hess_ref, hvp_ref = hess_np(64)
    w, xt, v = tf.constant(wn), tf.constant(xn), tf.constant(vn)
    def g_(x):
        return tf.reduce_sum(tf.square(tf.tanh(tf.linalg.matvec(w, x))))
    def hess():
        with tf.GradientTape() as outer:
            outer.watch(xt)
            with tf.GradientTape() as inner:
                inner.watch(xt)
                yv = g_(xt)
            gr = inner.gradient(yv, xt)
        return outer.jacobian(gr, xt)
    def fob():
        with tf.autodiff.ForwardAccumulator(xt, v) as acc:
            with tf.GradientTape() as tape:
                tape.watch(xt)
                yv = g_(xt)
            gr = tape.gradient(yv, xt)
        return acc.jvp(gr)
    def bob():
        with tf.GradientTape() as outer:
            outer.watch(xt)
            with tf.GradientTape() as inner:
                inner.watch(xt)
                yv = g_(xt)
            gr = inner.gradient(yv, xt)
        return outer.gradient(gr, xt, output_gradients=v)
    if "hess64" in only:
        np.testing.assert_allclose(np.asarray(hess()), hess_ref(), rtol=1e-8, atol=1e-12)
        res["hess64"] = ratio(hess_ref, hess, 100)
    if "hvp64" in only:
        for f in (fob, bob):
            np.testing.assert_allclose(np.asarray(f()), hvp_ref(), rtol=1e-8, atol=1e-12)
        res["hvp64"] = min(ratio(hvp_ref, fob, 200), ratio(hvp_ref, bob, 200))
if "d4" in only:
    xn, ref = d4_np()
    xt = tf.constant(xn)
    def d4():
        with tf.GradientTape() as t4:
            t4.watch(xt)
            with tf.GradientTape() as t3:
                t3.watch(xt)
                with tf.GradientTape() as t2:
                    t2.watch(xt)
                    with tf.GradientTape() as t1:
                        t1.watch(xt)
                        yv = tf.tanh(xt) * tf.exp(tf.sin(xt))
                    d1 = t1.gradient(yv, xt)
                d2 = t2.gradient(d1, xt)
            d3 = t3.gradient(d2, xt)
        return t4.gradient(d3, xt)
    np.testing.assert_allclose(float(d4()), ref(), rtol=1e-9)
    res["d4"] = ratio(ref, d4, 50)
print(json.dumps(res))
"""
)

TORCH_PROGRAM = (
    COMMON
    + r"""
import torch
torch.set_num_threads(1)
torch.set_num_interop_threads(1)
if "chain" in only:
    tc1, tc2 = torch.tensor(0.9), torch.tensor(0.1)
    def fb():
        tx = torch.tensor(0.3, requires_grad=True); x = tx
        for _ in range(N // 4):
            x = torch.sin(x); x = x * tc1; x = torch.tanh(x); x = x + tc2
        return torch.autograd.grad(x, tx)
    res["chain"] = ratio(np0d, fb, 8)
for batch in (16, 128, 1024):
    if f"mlp{batch}" not in only:
        continue
    xn, yn, ws, npstep = mlp_np(batch)
    x, y = torch.from_numpy(xn), torch.from_numpy(yn)
    ps = [(torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)) for w, b in ws]
    flat = [p for pair in ps for p in pair]
    def step():
        h = x
        for i, (w, b) in enumerate(ps):
            h = h @ w + b
            if i < 2: h = torch.relu(h)
        loss = torch.nn.functional.cross_entropy(h, y)
        grads = torch.autograd.grad(loss, flat)
        with torch.no_grad():
            for p, g in zip(flat, grads): p.sub_(0.01 * g)
    res[f"mlp{batch}"] = ratio(npstep, step, 40 if batch <= 128 else 8)
for n in (64, 256):
    if f"jac{n}" not in only:
        continue
    wn, bn, xn, ref = jac_np(n)
    w, b, xt = torch.from_numpy(wn), torch.from_numpy(bn), torch.from_numpy(xn)
    f = lambda x: torch.tanh(w @ x + b)
    jac = lambda: torch.func.jacrev(f)(xt)
    np.testing.assert_allclose(jac().numpy(), ref(), rtol=1e-9, atol=1e-12)
    res[f"jac{n}"] = ratio(ref, jac, 200 if n == 64 else 40)
if "hess64" in only or "hvp64" in only:
    wn, xn, vn, hess_ref, hvp_ref = hess_np(64)
    w, xt, v = torch.from_numpy(wn), torch.from_numpy(xn), torch.from_numpy(vn)
    g_ = lambda x: torch.sum(torch.tanh(w @ x) ** 2)
    if "hess64" in only:
        hess = lambda: torch.func.hessian(g_)(xt)
        np.testing.assert_allclose(hess().numpy(), hess_ref(), rtol=1e-8, atol=1e-12)
        res["hess64"] = ratio(hess_ref, hess, 100)
    if "hvp64" in only:
        def bob():
            x = xt.clone().requires_grad_(True)
            (gr,) = torch.autograd.grad(g_(x), x, create_graph=True)
            return torch.autograd.grad(gr, x, grad_outputs=v)[0]
        fob = lambda: torch.func.jvp(torch.func.grad(g_), (xt,), (v,))[1]
        for f in (fob, bob):
            np.testing.assert_allclose(f().detach().numpy(), hvp_ref(), rtol=1e-8, atol=1e-12)
        res["hvp64"] = min(ratio(hvp_ref, fob, 200), ratio(hvp_ref, bob, 200))
if "d4" in only:
    xn, ref = d4_np()
    def d4():
        x = torch.tensor(xn, requires_grad=True)
        y = torch.tanh(x) * torch.exp(torch.sin(x))
        for k in range(4):
            (y,) = torch.autograd.grad(y, x, create_graph=k < 3)
        return y
    np.testing.assert_allclose(float(d4()), ref(), rtol=1e-9)
    res["d4"] = ratio(ref, d4, 50)
print(json.dumps(res))
"""
)


def _env() -> dict:
    # One thread everywhere: these rows measure per-op overhead, and CPU time
    # (process_time) of a single-threaded process does not count the moments
    # a loaded machine gives to others.
    env = dict(os.environ, PYTHONPATH=ROOT, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    for k in ("PYTHONDONTWRITEBYTECODE", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        env.pop(k, None)
    return env


def frameworks() -> list:
    fws = [("tapeflow", sys.executable, TF_PROGRAM, "tapeflow")]
    if (
        os.path.exists(TORCH_PY)
        and subprocess.run([TORCH_PY, "-c", "import torch"], capture_output=True).returncode == 0
    ):
        fws.append(("PyTorch", TORCH_PY, TORCH_PROGRAM, "torch"))
    else:
        print(f"(PyTorch not importable from {TORCH_PY}: its column is skipped)")
    if os.path.exists(TF_PY):
        fws.append(("TF eager", TF_PY, TF_PROGRAM, "tensorflow"))
    else:
        print(f"(TensorFlow not found at {TF_PY}: its column is skipped)")
    return fws


def run(python: str, program: str, module: str, rows: list) -> dict:
    out = subprocess.run(
        [python, "-c", program, module, ",".join(rows)],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=ROOT,
        timeout=1800,
    )
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        print(f"  {module} failed:\n{out.stderr[-2000:]}")
        return {}


def fmt(values: list) -> str:
    if not values:
        return "n/a"
    return f"{min(values):.3g} / {statistics.median(values):.3g} / {max(values):.3g}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", default=",".join(ROWS))
    args = p.parse_args(argv)
    rows = args.only.split(",")
    fws = frameworks()
    results: dict = {}
    loads = []
    for r in range(args.rounds):
        for name, py, prog, module in fws:
            loads.append(os.getloadavg()[0])
            res = run(py, prog, module, rows)
            for k, v in res.items():
                results.setdefault((name, k), []).append(v)
            print(f"  round {r + 1} {name:9s} " + " ".join(f"{k}={v:.3g}" for k, v in res.items()), flush=True)
    print(
        f"\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, 1-min load before each run "
        f"{fmt(loads)} ({os.cpu_count()} CPUs); ratios to NumPy, min / median / max over {args.rounds} rounds"
    )
    print(f"{'row':8s} {'target':>7s} " + " ".join(f"{n:>24s}" for n, *_ in fws) + "  met (median)")
    for row in rows:
        cells = [fmt(results.get((n, row), [])) for n, *_ in fws]
        tv = results.get((fws[0][0], row), [])
        met = "yes" if tv and statistics.median(tv) <= TARGETS[row] else "no"
        print(f"{row:8s} {TARGETS[row]:>6g}x " + " ".join(f"{c:>24s}" for c in cells) + f"  {met}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
