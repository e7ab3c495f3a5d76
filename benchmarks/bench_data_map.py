"""tf.data map throughput: a per-element map then batch, traced once (as TF) vs run eagerly per element.

    PYTHONPATH=. python benchmarks/bench_data_map.py            # tapeflow, both ways
    python benchmarks/bench_data_map.py --tf                    # the same pipeline under TensorFlow
"""

from __future__ import annotations

import sys
import time

N = 20000


def pipeline(tf):
    return tf.data.Dataset.range(N).map(lambda x: tf.cast(x, tf.float32) * 2.0 + tf.sqrt(tf.cast(x, tf.float32)))


def timed(ds) -> float:
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in ds.batch(100):
            pass
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    if "--tf" in sys.argv:
        import tensorflow as tf

        print(f"TensorFlow: {N / timed(pipeline(tf)) / 1e3:.0f}k elements/s")
        return
    import tapeflow as tf

    traced = pipeline(tf)
    eager = pipeline(tf)
    eager._traced = None  # the per-element eager path (what map did before it was traced)
    t_traced, t_eager = timed(traced), timed(eager)
    print(f"tapeflow traced: {N / t_traced / 1e3:.0f}k elements/s; eager per element: {N / t_eager / 1e3:.0f}k "
          f"elements/s ({t_eager / t_traced:.1f}x slower)")


if __name__ == "__main__":
    main()
