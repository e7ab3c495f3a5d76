"""Record fuzz cases from real TensorFlow into a fixture file.

    python -m tests.fuzz.record [--seed 0] [--out tests/fuzz/fixture_seed0.json.gz]

Run it with TensorFlow 2.21 installed (never needed by the tests). The file
holds every case (inputs, attributes) and TF's result (outputs, gradients to
second order, exception classes), so the replay needs neither TF nor the
generator. A fresh ``--seed`` gives unseen cases; replay them with
``python -m tests.fuzz.replay FILE``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    import numpy as np
    import tensorflow as tf

    tf.config.run_functions_eagerly(False)
    from tests.fuzz.cases import generate
    from tests.fuzz.harness import run_case

    cases = generate(a.seed)
    t0 = time.time()
    np.seterr(all="ignore")
    for i, c in enumerate(cases):
        c["tf"] = run_case(tf, c)
        if i % 500 == 0:
            print(f"{i}/{len(cases)} {time.time() - t0:.0f}s", file=sys.stderr)
    out = a.out or f"tests/fuzz/fixture_seed{a.seed}.json.gz"
    meta = {"tf_version": tf.__version__, "seed": a.seed, "n": len(cases)}
    with gzip.open(out, "wt", compresslevel=9) as f:
        json.dump({"meta": meta, "cases": cases}, f, separators=(",", ":"))
    print(f"wrote {out}: {len(cases)} cases in {time.time() - t0:.0f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
