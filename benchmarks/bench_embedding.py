"""Embedding gradient + sparse SGD step: cost independent of the table size.

Run by hand (never by CI)::

    python benchmarks/bench_embedding.py [--quick]

One training step on a float32 embedding table of R rows x 64 columns with a
batch of 1024 random row ids:

    with tf.GradientTape() as tape:
        emb = tf.gather(table, ids)            # [1024, 64]
        loss = tf.reduce_sum(emb * emb)
    g = tape.gradient(loss, table)             # tf.IndexedSlices: 1024 rows
    table.scatter_sub(tf.IndexedSlices(lr * g.values, g.indices, g.dense_shape))

measured at R = 100k and R = 1M rows. Reported per step: time (best of
several repeats), peak memory allocated during the step (tracemalloc, which
sees NumPy's allocations), and the ratio to the hand-written NumPy floor
(``emb = table[ids]; np.subtract.at(table, ids, lr * 2 * emb)``). For
contrast, the dense alternative (densifying the gradient, then a full-table
``assign_sub``) is timed too: it grows with R, the sparse step does not.
The tapeflow result is checked against the NumPy one before timing.
"""

from __future__ import annotations

import argparse
import timeit
import tracemalloc

import numpy as np

import tapeflow as tf

COLS, BATCH, LR = 64, 1024, 0.1


def best(fn, number: int, repeat: int) -> float:
    """Best time per call, in seconds."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def peak_bytes(fn) -> int:
    """Peak bytes allocated while ``fn`` runs (after one warm-up call)."""
    fn()
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    fn()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak


def make_steps(rows: int, rng: np.random.Generator):
    init = rng.standard_normal((rows, COLS)).astype(np.float32)
    ids_np = rng.integers(0, rows, BATCH).astype(np.int32)
    table = tf.Variable(init.copy())
    ids = tf.constant(ids_np)
    ref = init.copy()

    def tapeflow_step():
        with tf.GradientTape() as tape:
            emb = tf.gather(table, ids)
            loss = tf.reduce_sum(emb * emb)
        g = tape.gradient(loss, table)
        table.scatter_sub(tf.IndexedSlices(g.values * LR, g.indices, g.dense_shape))

    def numpy_step():
        emb = ref[ids_np]
        np.subtract.at(ref, ids_np, LR * 2.0 * emb)

    def dense_step():
        with tf.GradientTape() as tape:
            emb = tf.gather(table, ids)
            loss = tf.reduce_sum(emb * emb)
        g = tf.convert_to_tensor(tape.gradient(loss, table))
        table.assign_sub(g * LR)

    return table, ref, tapeflow_step, numpy_step, dense_step


def check(rows: int) -> None:
    table, ref, step, numpy_step, _ = make_steps(rows, np.random.default_rng(1))
    for _ in range(3):
        step()
        numpy_step()
    np.testing.assert_allclose(table.numpy(), ref, rtol=1e-5, atol=1e-5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    args = parser.parse_args()
    number, repeat = (5, 3) if args.quick else (20, 7)

    check(1000)
    print(f"embedding {COLS} cols, batch {BATCH}, float32; best of {repeat} x {number} steps")
    print(f"{'rows':>9} | {'tapeflow step':>13} | {'numpy floor':>11} | {'ratio':>5} | {'peak mem':>9} | "
          f"{'numpy mem':>9} | {'dense step':>10}")
    for rows in (100_000, 1_000_000):
        rng = np.random.default_rng(0)
        _, _, step, numpy_step, dense_step = make_steps(rows, rng)
        # Interleave the repeats so background load hits both sides alike.
        t_tf = t_np = float("inf")
        for _ in range(repeat):
            t_tf = min(t_tf, best(step, number, 1))
            t_np = min(t_np, best(numpy_step, number, 1))
        t_dense = best(dense_step, max(1, number // 5), max(2, repeat // 2))
        mem_tf, mem_np = peak_bytes(step), peak_bytes(numpy_step)
        print(f"{rows:>9} | {t_tf * 1e3:>10.3f} ms | {t_np * 1e3:>8.3f} ms | {t_tf / t_np:>5.2f} | "
              f"{mem_tf / 2**20:>6.2f} MB | {mem_np / 2**20:>6.2f} MB | {t_dense * 1e3:>7.1f} ms")


if __name__ == "__main__":
    main()
