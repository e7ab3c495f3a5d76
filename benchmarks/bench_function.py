"""tf.function benchmarks: ratios to hand-written NumPy in the same run.

Times are the best of 40 interleaved rounds; ratios are the median over
rounds of the side-by-side ratio (robust on a loaded, shared machine).

Run by hand: ``python benchmarks/bench_function.py``. Measures

* the MLP 784-512-256-10 training step (softmax cross-entropy, SGD) under
  ``tf.function`` at batch 16/128/1024, vs the same step in NumPy and in
  tapeflow eager;
* the 1000-op scalar chain, forward + backward under ``tf.function``, vs the
  raw NumPy forward;
* trace + first call of the MLP step.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tapeflow as tf  # noqa: E402

LR = 0.01


def best_time(fn, repeat: int = 7, min_time: float = 0.2) -> float:
    """Best per-call time over ``repeat`` rounds of enough calls to last ``min_time``."""
    return best_times([fn], repeat, min_time)[0]


def best_times(fns, repeat: int = 40, min_time: float = 0.03) -> list:
    """Best per-call time of each of ``fns``, measured in interleaved rounds
    (so a noisy, shared machine slows all of them alike)."""
    return [min(r) for r in round_times(fns, repeat, min_time)]


def round_times(fns, repeat: int = 40, min_time: float = 0.03) -> list:
    """Per-round per-call times of each of ``fns`` (interleaved rounds)."""
    counts = []
    for fn in fns:
        fn()
        t0 = time.perf_counter()
        fn()
        one = time.perf_counter() - t0
        counts.append(max(1, int(min_time / max(one, 1e-7))))
    rounds: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for i, (fn, n) in enumerate(zip(fns, counts)):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            rounds[i].append((time.perf_counter() - t0) / n)
    return rounds


def median_ratio(num: list, den: list) -> float:
    """Median over rounds of num/den measured side by side: robust to bursts of load."""
    return float(np.median(np.array(num) / np.array(den)))


def init_params(rng):
    sizes = [784, 512, 256, 10]
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        params.append((rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(np.float32))
        params.append(np.zeros(b, np.float32))
    return params


def numpy_step(params, x, y):
    w1, b1, w2, b2, w3, b3 = params
    z1 = x @ w1 + b1
    h1 = np.maximum(z1, 0)
    z2 = h1 @ w2 + b2
    h2 = np.maximum(z2, 0)
    logits = h2 @ w3 + b3
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    s = e.sum(axis=1, keepdims=True)
    p = e / s
    loss = np.mean(-(y * (logits - m - np.log(s))).sum(axis=1))
    n = x.shape[0]
    dlogits = (p - y) / n
    gw3 = h2.T @ dlogits
    gb3 = dlogits.sum(0)
    dh2 = dlogits @ w3.T
    dz2 = dh2 * (z2 > 0)
    gw2 = h1.T @ dz2
    gb2 = dz2.sum(0)
    dh1 = dz2 @ w2.T
    dz1 = dh1 * (z1 > 0)
    gw1 = x.T @ dz1
    gb1 = dz1.sum(0)
    grads = (gw1, gb1, gw2, gb2, gw3, gb3)
    for i, g in enumerate(grads):
        params[i] = params[i] - LR * g
    return loss


def make_tf_step(variables):
    def step(x, y):
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.matmul(x, variables[0]) + variables[1])
            h = tf.nn.relu(tf.matmul(h, variables[2]) + variables[3])
            logits = tf.matmul(h, variables[4]) + variables[5]
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tape.gradient(loss, variables)
        for v, g in zip(variables, grads):
            v.assign_sub(LR * g)
        return loss

    return step


def bench_mlp(batch: int) -> dict:
    rng = np.random.default_rng(0)
    params = init_params(rng)
    x = rng.standard_normal((batch, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
    np_params = list(params)
    variables = [tf.Variable(p) for p in params]
    step = make_tf_step(variables)
    xt, yt = tf.constant(x), tf.constant(y)
    fvars = [tf.Variable(p) for p in params]
    fstep = tf.function(make_tf_step(fvars))
    t0 = time.perf_counter()
    fstep(xt, yt)
    t_first = time.perf_counter() - t0
    r_np, r_fn, r_eager = round_times([lambda: numpy_step(np_params, x, y), lambda: fstep(xt, yt),
                                       lambda: step(xt, yt)])
    t_np, t_fn, t_eager = min(r_np), min(r_fn), min(r_eager)
    # Same numbers as NumPy?
    check = [tf.Variable(p) for p in params]
    cstep = tf.function(make_tf_step(check))
    ref = list(params)
    l_np = numpy_step(ref, x, y)
    l_tf = float(cstep(xt, yt))
    err = max(float(np.max(np.abs(v.numpy() - r))) for v, r in zip(check, ref))
    return dict(batch=batch, numpy_ms=t_np * 1e3, eager_ms=t_eager * 1e3, function_ms=t_fn * 1e3,
                ratio_fn=median_ratio(r_fn, r_np), ratio_eager=median_ratio(r_eager, r_np),
                first_call_ms=t_first * 1e3,
                loss_diff=abs(l_np - l_tf), param_diff=err)


def chain_numpy(x, n=1000):
    for _ in range(n // 2):
        x = np.sin(x)
        x = x * np.float64(1.01)
    return x


def bench_chain(n: int = 1000) -> dict:
    x0 = np.float64(0.5)

    @tf.function
    def fwd_bwd(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(n // 2):
                y = tf.sin(y)
                y = y * 1.01
        return y, tape.gradient(y, x)

    xt = tf.constant(x0)
    t0 = time.perf_counter()
    fwd_bwd(xt)
    t_first = time.perf_counter() - t0
    r_np, r_fn = round_times([lambda: chain_numpy(x0, n), lambda: fwd_bwd(xt)])
    t_np, t_fn = min(r_np), min(r_fn)
    return dict(numpy_fwd_us=t_np * 1e6, function_fwd_bwd_us=t_fn * 1e6, ratio=median_ratio(r_fn, r_np),
                trace_ms=t_first * 1e3)


def main() -> None:
    print(f"numpy {np.__version__}, python {sys.version.split()[0]}")
    for batch in (16, 128, 1024):
        r = bench_mlp(batch)
        print(f"MLP batch {batch:5d}: numpy {r['numpy_ms']:.3f} ms | tf.function {r['function_ms']:.3f} ms "
              f"({r['ratio_fn']:.2f}x) | eager {r['eager_ms']:.3f} ms ({r['ratio_eager']:.2f}x) | "
              f"trace+first call {r['first_call_ms']:.1f} ms | max |param diff| {r['param_diff']:.1e}")
    r = bench_chain()
    print(f"scalar chain 1000 ops: numpy fwd {r['numpy_fwd_us']:.1f} us | tf.function fwd+bwd "
          f"{r['function_fwd_bwd_us']:.1f} us ({r['ratio']:.2f}x) | trace+first call {r['trace_ms']:.1f} ms")


if __name__ == "__main__":
    main()
