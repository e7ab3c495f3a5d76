"""Conv and pooling benchmark (issue 3), run by hand, never by CI.

    python benchmarks/bench_conv.py

1. conv2d forward + backward (dx and dw) of a small CNN layer: batch 32,
   28x28x32 input, 3x3x32->64 filter, SAME, float32.
2. max_pool2d 2x2 stride 2 forward + backward on the conv's output
   (32x28x28x64).

Each is timed in tapeflow eager (under a GradientTape), against the best
hand-written NumPy doing the same math in the same process (the floor:
im2col + one BLAS call per product, buffers reused, dx as a correlation with
the flipped filter; reshape-max pooling), and against TensorFlow eager when /opt/tfvenv/bin/python exists
(run as a subprocess, so TF's threads are not shared with ours).
Targets: within 1.5x of the NumPy floor, no slower than TF eager.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import tapeflow as tf  # noqa: E402

TF_PY = os.environ.get("TF_PYTHON", "/opt/tfvenv/bin/python")
N, H, W, CI, CO, K = 32, 28, 28, 32, 64, 3
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))


def best_of(fn, repeat=7):
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, H, W, CI)).astype(np.float32)
    w = (rng.standard_normal((K, K, CI, CO)) * 0.1).astype(np.float32)
    dy = rng.standard_normal((N, H, W, CO)).astype(np.float32)
    return x, w, dy


# -- the NumPy floor ------------------------------------------------------------

_BUF = {}


def _im2col(a, out):
    """Pads (SAME, 3x3) and copies the windows of NHWC ``a`` into ``out``."""
    n, h, w_, c = a.shape
    p = K // 2
    ap = np.zeros((n, h + 2 * p, w_ + 2 * p, c), a.dtype)
    ap[:, p:p + h, p:p + w_] = a
    s = ap.strides
    win = np.lib.stride_tricks.as_strided(ap, (n, h, w_, K, K, c), (s[0], s[1], s[2], s[1], s[2], s[3]))
    np.copyto(out.reshape(win.shape), win)
    return out


def np_conv_fwd_bwd(x, w, dy):
    """The floor: im2col once (into reused buffers) and one BLAS call per
    product; dx is the correlation of dy with the flipped filter."""
    if not _BUF:
        _BUF["x"] = np.empty((N * H * W, K * K * CI), np.float32)
        _BUF["dy"] = np.empty((N * H * W, K * K * CO), np.float32)
    cols = _im2col(x, _BUF["x"])
    y = cols @ w.reshape(K * K * CI, CO)
    dw = (cols.T @ dy.reshape(-1, CO)).reshape(w.shape)
    w_flip = np.ascontiguousarray(w[::-1, ::-1].transpose(0, 1, 3, 2)).reshape(K * K * CO, CI)
    dx = (_im2col(dy, _BUF["dy"]) @ w_flip).reshape(x.shape)
    return y, dx, dw


def np_pool_fwd_bwd(x, g):
    n, h, w_, c = x.shape
    r = x.reshape(n, h // 2, 2, w_ // 2, 2, c)
    y = r.max(axis=(2, 4))
    mask = r == y[:, :, None, :, None, :]
    dx = (mask * g[:, :, None, :, None, :]).reshape(x.shape)
    return y, dx


# -- tapeflow ---------------------------------------------------------------------

def tf_conv_fwd_bwd(x, w, dy):
    with tf.GradientTape() as tape:
        tape.watch([x, w])
        y = tf.nn.conv2d(x, w, 1, "SAME")
    return tape.gradient(y, [x, w], output_gradients=dy)


def tf_pool_fwd_bwd(x, g):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.max_pool2d(x, 2, 2, "VALID")
    return tape.gradient(y, x, output_gradients=g)


TF_SCRIPT = r"""
import json, time, numpy as np, tensorflow as tf
N, H, W, CI, CO, K = 32, 28, 28, 32, 64, 3
rng = np.random.default_rng(0)
x = tf.constant(rng.standard_normal((N, H, W, CI)).astype(np.float32))
w = tf.constant((rng.standard_normal((K, K, CI, CO)) * 0.1).astype(np.float32))
dy = tf.constant(rng.standard_normal((N, H, W, CO)).astype(np.float32))
def best(fn, repeat=35):
    fn()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
    return min(ts)
def conv():
    with tf.GradientTape() as t:
        t.watch([x, w]); y = tf.nn.conv2d(x, w, 1, "SAME")
    gx, gw = t.gradient(y, [x, w], output_gradients=dy)
    gx.numpy(); gw.numpy()
def pool():
    with tf.GradientTape() as t:
        t.watch(dy); y = tf.nn.max_pool2d(dy, 2, 2, "VALID")
    t.gradient(y, dy, output_gradients=tf.ones_like(y)).numpy()
threads = tf.config.threading.get_intra_op_parallelism_threads()
print(json.dumps({"conv": best(conv), "pool": best(pool), "threads": threads}))
"""


def tf_eager_times():
    if not os.path.exists(TF_PY):
        return None
    try:
        out = subprocess.run([TF_PY, "-c", TF_SCRIPT], capture_output=True, text=True, timeout=600,
                             env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
        return json.loads(out.stdout.strip().splitlines()[-1])
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"(TensorFlow run failed: {e})")
        return None


def main():
    x, w, dy = data()
    xt, wt, dyt = tf.constant(x), tf.constant(w), tf.constant(dy)

    # Same numbers first: tapeflow vs the floor.
    _, dx_np, dw_np = np_conv_fwd_bwd(x, w, dy)
    dx_tf, dw_tf = tf_conv_fwd_bwd(xt, wt, dyt)
    assert np.allclose(dx_np, dx_tf.numpy(), atol=1e-3) and np.allclose(dw_np, dw_tf.numpy(), rtol=1e-3, atol=1e-2)

    ones = np.ones((N, H // 2, W // 2, CO), np.float32)
    onest = tf.constant(ones)
    # Interleaved rounds, best of each: the machine may be shared.
    conv_np = conv_tf = pool_np = pool_tf = float("inf")
    for _ in range(ROUNDS):
        conv_np = min(conv_np, best_of(lambda: np_conv_fwd_bwd(x, w, dy), 3))
        conv_tf = min(conv_tf, best_of(lambda: tf_conv_fwd_bwd(xt, wt, dyt), 3))
        pool_np = min(pool_np, best_of(lambda: np_pool_fwd_bwd(dy, ones), 3))
        pool_tf = min(pool_tf, best_of(lambda: tf_pool_fwd_bwd(dyt, onest), 3))
    ref = tf_eager_times()

    rows = [("conv2d fwd+bwd 32x28x28x32 * 3x3x32x64 SAME", conv_tf, conv_np, ref and ref["conv"]),
            ("max_pool2d 2x2 fwd+bwd 32x28x28x64", pool_tf, pool_np, ref and ref["pool"])]
    print(f"numpy {np.__version__}, {os.cpu_count()} CPUs" + (f", TF intra-op threads {ref['threads']}" if ref else ""))
    print(f"{'benchmark':46s} {'tapeflow ms':>12s} {'numpy ms':>9s} {'x numpy':>8s} {'TF ms':>8s} {'x TF':>6s}")
    for name, ours, floor, tfe in rows:
        tf_cols = f"{tfe * 1e3:8.2f} {ours / tfe:6.2f}" if tfe else f"{'n/a':>8s} {'':>6s}"
        print(f"{name:46s} {ours * 1e3:12.2f} {floor * 1e3:9.2f} {ours / floor:8.2f} {tf_cols}")


if __name__ == "__main__":
    main()
