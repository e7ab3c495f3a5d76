"""Record fuzz cases from real TensorFlow into a fixture file.

    python -m tests.fuzz.record [--seed 0] [--out tests/fuzz/fixture_seed0.json.gz]

Run it with TensorFlow 2.21 installed (never needed by the tests). The file
holds every case (inputs, attributes) and TF's result (outputs, gradients to
second order, exception classes), so the replay needs neither TF nor the
generator. A fresh ``--seed`` gives unseen cases; replay them with
``python -m tests.fuzz.replay FILE``.

The cases run in a worker process; a case that crashes TF itself (a segfault
in one of its kernels) is recorded as ``{"err": "TFCrash"}`` and the worker
restarts after it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")


def _worker(seed: int, start: int) -> int:
    """Print one JSON line per case from ``start`` on: [index, TF's result]."""
    import numpy as np
    import tensorflow as tf

    tf.config.run_functions_eagerly(False)
    from tests.fuzz.cases import generate
    from tests.fuzz.harness import run_case

    np.seterr(all="ignore")
    cases = generate(seed)
    print(json.dumps(["version", tf.__version__]), flush=True)
    for i in range(start, len(cases)):
        print(json.dumps([i, cases[i]["id"], run_case(tf, cases[i])], separators=(",", ":")), flush=True)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None)
    p.add_argument("--worker-from", type=int, default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.worker_from is not None:
        return _worker(a.seed, a.worker_from)
    from tests.fuzz.cases import generate

    cases = generate(a.seed)
    t0 = time.time()
    version = None
    i = 0
    while i < len(cases):
        cmd = [sys.executable, "-m", "tests.fuzz.record", "--seed", str(a.seed), "--worker-from", str(i)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for ln in proc.stdout:
            j, *rest = json.loads(ln)
            if j == "version":
                version = rest[0]
                continue
            cid, res = rest
            if cid != cases[j]["id"]:
                raise RuntimeError(f"the worker generated other cases ({cid} != {cases[j]['id']}): cases.py must "
                                   "be deterministic")
            cases[j]["tf"] = res
            i = j + 1
            if i % 500 == 0:
                print(f"{i}/{len(cases)} {time.time() - t0:.0f}s", file=sys.stderr)
        proc.wait()
        if i < len(cases):  # the worker died on case i: TF crashed
            print(f"TF crashed on {cases[i]['id']} (exit {proc.returncode}); recorded as TFCrash", file=sys.stderr)
            cases[i]["tf"] = {"err": "TFCrash", "msg": f"TensorFlow's process died (exit {proc.returncode})"}
            i += 1
    out = a.out or f"tests/fuzz/fixture_seed{a.seed}.json.gz"
    meta = {"tf_version": version, "seed": a.seed, "n": len(cases)}
    with gzip.open(out, "wt", compresslevel=9) as f:
        json.dump({"meta": meta, "cases": cases}, f, separators=(",", ":"))
    print(f"wrote {out}: {len(cases)} cases in {time.time() - t0:.0f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
