"""TF-format checkpoint I/O: CRC32C throughput and a 64 MiB save / restore.

Run by hand (never by CI)::

    python benchmarks/bench_checkpoint.py

Prints the CRC32C rate of the NumPy fallback and of the one tapeflow picked (``google-crc32c`` or ``crc32c``
when installed), over 64 MiB (best of three), then the time of ``Checkpoint.write`` and of ``read`` (which
checks every CRC32C) for four 2048x2048 float32 variables, and the machine's load.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time

import numpy as np

import tapeflow as tf
from tapeflow.train import tensor_bundle as tb


def best(fn, rounds: int = 3) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(0)
    data = rng.integers(0, 256, 64 << 20, dtype=np.uint8).tobytes()
    picked = "NumPy lanes" if tb.crc32c is tb._crc32c_builtin else "package"
    for name, fn in [("NumPy lanes", tb._crc32c_builtin), (f"picked ({picked})", tb.crc32c)]:
        t = best(lambda fn=fn: fn(data))
        print(f"crc32c {name}: {len(data) / t / 1e6:.0f} MB/s")
    ckpt = tf.train.Checkpoint(vs=[tf.Variable(rng.standard_normal((2048, 2048)).astype(np.float32))
                                   for _ in range(4)])
    folder = tempfile.mkdtemp()
    try:
        prefix = os.path.join(folder, "c")
        tw = best(lambda: ckpt.write(prefix))
        tr = best(lambda: ckpt.read(prefix).assert_consumed())
        print(f"64 MiB checkpoint: write {tw * 1e3:.0f} ms, read + check {tr * 1e3:.0f} ms")
    finally:
        shutil.rmtree(folder)
    print("load average:", " ".join(f"{x:.1f}" for x in os.getloadavg()), f"on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
