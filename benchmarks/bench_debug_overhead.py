"""Does tf.debugging cost anything when it is off?  Per-op time, before vs after.

"Before" is the current tree with the two hot-path lines of the debugging
issue undone (first added in commit a6f5924: ``update_recording`` also looks
at ``debug_hook``, so the hook sees ops with no tape; ``_gradient`` picks the
``op_gradients`` wrapper once per call); "after" is the current tree. Both
are the working tree as it is (a copy of ``tapeflow/`` in a temporary folder
for "before"), so nothing but those two lines differs. Both run in fresh subprocesses, alternately, several rounds;
each workload reports its best time per op. The same script also shows what
debug mode costs when it is on.

    python benchmarks/bench_debug_overhead.py            # off: before vs after
    python benchmarks/bench_debug_overhead.py --rounds 7 --debug-modes

Nothing in the working tree is touched.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import timeit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _workloads(tf, np):
    a = tf.constant(np.ones((8, 8), np.float32))
    b = tf.constant(np.ones((8, 8), np.float32))
    s = tf.constant(1.5)
    v = tf.Variable(np.ones((8, 8), np.float32))

    def eager_add():  # one op, nothing recording: the hot path
        return a + b

    def eager_scalar_mul():
        return s * s

    def variable_read():
        return v.value()

    def taped_chain():  # 20 ops recorded on a tape
        with tf.GradientTape() as tape:
            tape.watch(s)
            y = s
            for _ in range(20):
                y = y * 1.01
        return tape

    def backward_chain():  # 20 ops forward + 20 gradient rules
        with tf.GradientTape() as tape:
            tape.watch(s)
            y = s
            for _ in range(20):
                y = y * 1.01
        return tape.gradient(y, s)

    return {
        "eager_add_8x8": (eager_add, 1),
        "eager_scalar_mul": (eager_scalar_mul, 1),
        "variable_read": (variable_read, 1),
        "taped_chain_20": (taped_chain, 20),
        "forward+backward_20": (backward_chain, 40),
    }


def worker(mode: str, number: int, repeat: int) -> dict:
    import numpy as np

    import tapeflow as tf

    if mode == "tracking":
        tf.debugging.set_source_tracking(True)
    elif mode == "numerics":
        tf.debugging.enable_check_numerics()
    out = {}
    for name, (fn, ops) in _workloads(tf, np).items():
        fn()
        best = min(timeit.repeat(fn, number=number, repeat=repeat))
        out[name] = best / number / ops * 1e9  # ns per op
    return out


def _run(root: str, mode: str, number: int, repeat: int) -> dict:
    env = dict(os.environ, PYTHONPATH=root)
    env.pop("TAPEFLOW_DEBUG", None)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", mode, "--number", str(number),
           "--repeat", str(repeat)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=root, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


# The lines the debugging issue added to the hot path, and what they were.
_REVERT = {
    "tapeflow/framework/context.py": (
        "bool(self.tapes or self.accumulators or self._debug_hook is not None)",
        "bool(self.tapes or self.accumulators)",
    ),
    "tapeflow/eager/backprop.py": (
        "op_grads = op_gradients if debug_op_gradients is None else debug_op_gradients",
        "op_grads = op_gradients",
    ),
}


def _make_before(tmp: str) -> str:
    """A copy of the working tree's package with the hook lines undone."""
    path = os.path.join(tmp, "before")
    shutil.copytree(os.path.join(ROOT, "tapeflow"), os.path.join(path, "tapeflow"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    for rel, (new, old) in _REVERT.items():
        with open(os.path.join(path, rel)) as f:
            text = f.read()
        if new not in text:
            raise SystemExit(f"{rel} no longer contains the hook line {new!r}: update _REVERT.")
        with open(os.path.join(path, rel), "w") as f:
            f.write(text.replace(new, old))
    return path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--worker", default=None)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--number", type=int, default=2000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--debug-modes", action="store_true", help="also time debug mode on")
    args = p.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.number, args.repeat)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        before = _make_before(tmp)
        best: dict = {"before": {}, "after": {}}
        for _ in range(args.rounds):  # alternate to share the machine's noise fairly
            for label, root in (("before", before), ("after", ROOT)):
                for k, t in _run(root, "off", args.number, args.repeat).items():
                    best[label][k] = min(best[label].get(k, t), t)
    print(f"debugging OFF, ns per op (best of {args.rounds} rounds x {args.repeat} repeats)")
    print(f"{'workload':24s} {'before':>9s} {'after':>9s} {'change':>8s}")
    for k in best["before"]:
        b, a = best["before"][k], best["after"][k]
        print(f"{k:24s} {b:9.0f} {a:9.0f} {100 * (a / b - 1):+7.1f}%")
    if args.debug_modes:
        print("\ndebug mode ON (after), ns per op, and slowdown vs off")
        for mode in ("tracking", "numerics"):
            res = _run(ROOT, mode, max(args.number // 4, 50), args.repeat)
            for k, t in res.items():
                print(f"{mode:9s} {k:24s} {t:9.0f}  x{t / best['after'][k]:.1f}")

if __name__ == "__main__":
    main()
