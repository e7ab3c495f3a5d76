"""Core eager benchmarks, run by hand: ratios to hand-written NumPy.

    python benchmarks/bench_core.py            # all
    python benchmarks/bench_core.py chain mlp  # some

1. chain: 1000 elementwise ops on a float32 scalar — forward with no tape,
   forward under a tape, forward + backward — vs the same NumPy 0-d ops.
2. mlp: one training step (forward, softmax cross-entropy, tape.gradient, SGD)
   of a 784-512-256-10 ReLU MLP, float32, batch 16/128/1024, vs NumPy.
3. memory: peak bytes of forward + backward of a 16-layer 1024-wide ReLU MLP
   at batch 256, as a multiple of the activation bytes a backward must keep.
4. import: `import tapeflow` vs `import numpy` in fresh processes.
TensorFlow columns are added when /opt/tfvenv/bin/python (or an importable
tensorflow) exists; skipped cleanly otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import tapeflow as tf  # noqa: E402

TF_PY = os.environ.get("TF_PYTHON", "/opt/tfvenv/bin/python")


def best_of(fn, repeat=7, number=1):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return min(times)


# -- 1. the scalar chain ------------------------------------------------------
N_CHAIN = 1000


def np_chain(x, c1, c2):
    for _ in range(N_CHAIN // 4):
        x = np.sin(x)
        x = x * c1
        x = np.tanh(x)
        x = x + c2
    return x


def tf_chain(x, c1, c2):
    for _ in range(N_CHAIN // 4):
        x = tf.sin(x)
        x = x * c1
        x = tf.tanh(x)
        x = x + c2
    return x


def np0d_ops(x, c1, c2):
    # The same ufuncs, each called on 0-d arrays: the cost of a raw NumPy 0-d
    # op (a chain would turn the arrays into NumPy scalars after one op).
    for _ in range(N_CHAIN // 4):
        np.sin(x)
        np.multiply(x, c1)
        np.tanh(x)
        np.add(x, c2)


def bench_chain():
    c1, c2 = np.float32(0.9), np.float32(0.1)
    t_np = best_of(lambda: np_chain(np.asarray(0.3, np.float32), c1, c2))
    a1, a2 = np.asarray(0.9, np.float32), np.asarray(0.1, np.float32)
    a0 = np.asarray(0.3, np.float32)
    t_0d = best_of(lambda: np0d_ops(a0, a1, a2))
    tx, tc1, tc2 = tf.constant(0.3), tf.constant(0.9), tf.constant(0.1)
    t_fwd = best_of(lambda: tf_chain(tx, tc1, tc2))

    def under_tape():
        with tf.GradientTape() as g:
            g.watch(tx)
            tf_chain(tx, tc1, tc2)

    def fwd_bwd():
        with tf.GradientTape() as g:
            g.watch(tx)
            y = tf_chain(tx, tc1, tc2)
        return g.gradient(y, tx)

    t_tape = best_of(under_tape)
    t_fb = best_of(fwd_bwd)
    row = {"numpy_0d_us_per_op": t_0d / N_CHAIN * 1e6, "numpy_scalar_us_per_op": t_np / N_CHAIN * 1e6,
           "fwd_no_tape": t_fwd / t_0d, "fwd_tape": t_tape / t_0d, "fwd_bwd": t_fb / t_0d}
    tfr = _tf_subprocess("chain")
    print(f"chain of {N_CHAIN} float32 scalar ops (sin, *, tanh, +): NumPy ufuncs on 0-d arrays "
          f"{row['numpy_0d_us_per_op']:.3f} us/op, NumPy scalars {row['numpy_scalar_us_per_op']:.3f} us/op")
    print("  ratios to NumPy 0-d array ops (and to NumPy scalar ops):")
    print(f"  forward, no tape     {t_fwd / t_0d:6.2f}x  ({t_fwd / t_np:6.2f}x)   target <= 3x")
    print(f"  forward under tape   {t_tape / t_0d:6.2f}x  ({t_tape / t_np:6.2f}x)")
    print(f"  forward + backward   {t_fb / t_0d:6.2f}x  ({t_fb / t_np:6.2f}x)   target <= 10x"
          + (f"   [TF eager {tfr['fwd_bwd']:.1f}x NumPy scalar ops]" if tfr else ""))
    print(f"  per op: forward {t_fwd / N_CHAIN * 1e6:.2f} us, forward+backward {t_fb / N_CHAIN * 1e6:.2f} us")
    return row


# -- 2. MLP training step -----------------------------------------------------
SIZES = (784, 512, 256, 10)


def init_params(seed=0):
    rng = np.random.default_rng(seed)
    ps = []
    for a, b in zip(SIZES[:-1], SIZES[1:]):
        ps.append((rng.standard_normal((a, b)).astype(np.float32) * np.float32(np.sqrt(2 / a)),
                   np.zeros(b, np.float32)))
    return ps


def np_step(params, x, y_onehot, lr=np.float32(0.01)):
    acts = [x]
    h = x
    for i, (w, b) in enumerate(params):
        z = h @ w + b
        h = np.maximum(z, 0) if i < len(params) - 1 else z
        acts.append(h)
    logits = h
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    p = e / e.sum(axis=1, keepdims=True)
    loss = -np.mean(np.sum(y_onehot * np.log(p), axis=1))
    g = (p - y_onehot) / np.float32(x.shape[0])
    for i in range(len(params) - 1, -1, -1):
        w, b = params[i]
        a = acts[i]
        gw = a.T @ g
        gb = g.sum(axis=0)
        if i:
            g = (g @ w.T) * (acts[i] > 0)
        w -= lr * gw
        b -= lr * gb
    return loss


def tf_loss(vars_, x, y_onehot):
    h = x
    for i, (w, b) in enumerate(vars_):
        h = tf.matmul(h, w) + b
        if i < len(vars_) - 1:
            h = tf.nn.relu(h)
    # TF's fused softmax cross-entropy op (one op with its own stable rule).
    return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y_onehot, h))


def tf_step(vars_, flat, x, y_onehot, lr=0.01):
    with tf.GradientTape() as tape:
        loss = tf_loss(vars_, x, y_onehot)
    grads = tape.gradient(loss, flat)
    for v, g in zip(flat, grads):
        v.assign_sub(lr * g)
    return loss


def bench_mlp():
    rows = {}
    tfr = _tf_subprocess("mlp")
    print("MLP 784-512-256-10 training step (float32):")
    for batch in (16, 128, 1024):
        rng = np.random.default_rng(1)
        x = rng.standard_normal((batch, 784)).astype(np.float32)
        y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
        params = init_params()
        vars_ = [(tf.Variable(w), tf.Variable(b)) for w, b in init_params()]
        flat = [v for pair in vars_ for v in pair]
        tx, ty = tf.constant(x), tf.constant(y)
        number = 20 if batch <= 128 else 4
        t_np = best_of(lambda p=params, a=x, b=y: np_step(p, a, b), repeat=5, number=number)
        t_tf = best_of(lambda v=vars_, f=flat, a=tx, b=ty: tf_step(v, f, a, b), repeat=5, number=number)
        rows[batch] = t_tf / t_np
        extra = f"   [TF eager {tfr[str(batch)]:.2f}x]" if tfr else ""
        print(f"  batch {batch:5d}: numpy {t_np * 1e3:7.3f} ms   tapeflow {t_tf * 1e3:7.3f} ms   "
              f"ratio {t_tf / t_np:5.2f}x{extra}")
    return rows


# -- 3. peak memory -------------------------------------------------------------
def _peak(fn):
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    out = fn()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    del out
    return peak


def bench_memory(layers=16, width=1024, batch=256):
    """Peak bytes of forward + backward (weight gradients included, as they are
    part of any backward), over the bytes of the activations a backward must
    keep (one batch x width float32 array per layer)."""
    rng = np.random.default_rng(0)
    w_np = [rng.standard_normal((width, width)).astype(np.float32) * np.float32(0.03) for _ in range(layers)]
    x_np = rng.standard_normal((batch, width)).astype(np.float32)
    ws = [tf.Variable(w) for w in w_np]
    x = tf.constant(x_np)
    act_bytes = layers * batch * width * 4

    def tapeflow_run():
        with tf.GradientTape() as tape:
            h = x
            for w in ws:
                h = tf.nn.relu(tf.matmul(h, w))
            loss = tf.reduce_sum(h)
        return tape.gradient(loss, ws)

    def numpy_run():
        acts = [x_np]
        h = x_np
        for w in w_np:
            h = np.maximum(h @ w, 0)
            acts.append(h)
        g = np.ones_like(h)
        grads = []
        for i in range(layers - 1, -1, -1):
            g = g * (acts[i + 1] > 0)
            grads.append(acts[i].T @ g)
            g = g @ w_np[i].T
            acts[i + 1] = None
        return grads

    p_tf, p_np = _peak(tapeflow_run), _peak(numpy_run)
    print(f"peak memory of forward+backward, {layers}x{width} ReLU MLP, batch {batch} "
          f"(activations {act_bytes / 2**20:.0f} MiB, weight gradients {layers * width * width * 4 / 2**20:.0f} MiB):")
    print(f"  tapeflow {p_tf / 2**20:6.1f} MiB = {p_tf / act_bytes:.2f}x activations   (target <= 6x)")
    print(f"  numpy    {p_np / 2**20:6.1f} MiB = {p_np / act_bytes:.2f}x activations")
    return p_tf / act_bytes


# -- 4. import time -------------------------------------------------------------
def bench_import(runs=7):
    # Measured as a user sees it: with bytecode cached (the first run writes
    # it; PYTHONDONTWRITEBYTECODE, set on some machines, would recompile every
    # module on every import).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    root = os.path.join(os.path.dirname(__file__), "..")
    subprocess.run([sys.executable, "-c", "import tapeflow"], env=env, cwd=root, check=True)

    def t(stmt):
        best = 1e9
        for _ in range(runs):
            out = subprocess.run([sys.executable, "-c",
                                  f"import time; t=time.perf_counter(); {stmt}; print(time.perf_counter()-t)"],
                                 capture_output=True, text=True, cwd=root, env=env)
            best = min(best, float(out.stdout.strip().splitlines()[-1]))
        return best

    t_np = t("import numpy")
    t_tp = t("import tapeflow")
    print(f"import: numpy {t_np * 1e3:.0f} ms, tapeflow (numpy included) {t_tp * 1e3:.0f} ms -> "
          f"{t_tp / t_np:.2f}x (target <= 1.5x)")
    return t_tp / t_np


# -- TensorFlow, in its own interpreter -------------------------------------------
_TF_SCRIPT = r'''
import os, sys, time, json
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np, tensorflow as tf
def best(fn, repeat=5, number=1):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number): fn()
        ts.append((time.perf_counter() - t0) / number)
    return min(ts)
what = sys.argv[1]
res = {}
if what == "chain":
    x0 = np.asarray(0.3, np.float32); c1, c2 = np.float32(0.9), np.float32(0.1)
    def npc():
        x = x0
        for _ in range(250):
            x = np.sin(x); x = x * c1; x = np.tanh(x); x = x + c2
    t_np = best(npc)
    tx, tc1, tc2 = tf.constant(0.3), tf.constant(0.9), tf.constant(0.1)
    def fb():
        with tf.GradientTape() as g:
            g.watch(tx); x = tx
            for _ in range(250):
                x = tf.sin(x); x = x * tc1; x = tf.tanh(x); x = x + tc2
        g.gradient(x, tx)
    res["fwd_bwd"] = best(fb, repeat=3) / t_np
else:
    for batch in (16, 128, 1024):
        rng = np.random.default_rng(1)
        x = tf.constant(rng.standard_normal((batch, 784)).astype(np.float32))
        y = tf.constant(np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)])
        sizes = (784, 512, 256, 10)
        vs = [(tf.Variable(rng.standard_normal((a, b)).astype(np.float32) * 0.05), tf.Variable(np.zeros(b, np.float32)))
              for a, b in zip(sizes[:-1], sizes[1:])]
        flat = [v for p in vs for v in p]
        xn, yn = x.numpy(), y.numpy()
        def step():
            with tf.GradientTape() as t:
                h = x
                for i, (w, b) in enumerate(vs):
                    h = tf.matmul(h, w) + b
                    if i < 2: h = tf.nn.relu(h)
                loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, h))
            for v, g in zip(flat, t.gradient(loss, flat)): v.assign_sub(0.01 * g)
        ws = [(v[0].numpy(), v[1].numpy()) for v in vs]
        def npstep():
            acts = [xn]; h = xn
            for i, (w, b) in enumerate(ws):
                z = h @ w + b; h = np.maximum(z, 0) if i < 2 else z; acts.append(h)
            m = h.max(1, keepdims=True); e = np.exp(h - m); p = e / e.sum(1, keepdims=True)
            g = (p - yn) / np.float32(batch)
            for i in range(2, -1, -1):
                w, b = ws[i]; a = acts[i]; gw = a.T @ g; gb = g.sum(0)
                if i: g = (g @ w.T) * (acts[i] > 0)
                w -= 0.01 * gw; b -= 0.01 * gb
        n = 20 if batch <= 128 else 4
        step()
        res[str(batch)] = best(step, number=n) / best(npstep, number=n)
print(json.dumps(res))
'''


def _tf_subprocess(what):
    if not os.path.exists(TF_PY):
        return None
    try:
        out = subprocess.run([TF_PY, "-c", _TF_SCRIPT, what], capture_output=True, text=True, timeout=600)
        return json.loads(out.stdout.strip().splitlines()[-1])
    except Exception:  # noqa: BLE001 - TF column is optional
        return None


if __name__ == "__main__":
    which = sys.argv[1:] or ["chain", "mlp", "memory", "import"]
    print(f"tapeflow {tf.__version__}, numpy {np.__version__}, {time.strftime('%Y-%m-%d')}")
    if "chain" in which:
        bench_chain()
    if "mlp" in which:
        bench_mlp()
    if "memory" in which:
        bench_memory()
    if "import" in which:
        bench_import()
