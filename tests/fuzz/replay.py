"""Replay recorded fuzz cases under tapeflow and compare with TF's records.

    python -m tests.fuzz.replay [FILE ...] [-v]

prints one line per mismatch (the case id, a reproducer and the first
difference) and the mismatch rate; documented differences are counted apart.
"""

from __future__ import annotations

import fnmatch
import gzip
import json
import sys
import warnings

import numpy as np

from tests.fuzz.harness import compare, dec, enc, reproducer, run_case
from tests.fuzz.known import KNOWN


def load(path: str) -> list:
    with gzip.open(path, "rt") as f:
        return json.load(f)["cases"]


def known_reason(case: dict, msg: str) -> str | None:
    """The documented difference covering this mismatch, if any.

    ``text`` is a substring of the message or the reproducer, or a predicate
    ``(case, msg) -> bool``.
    """
    for fn_glob, text, reason in KNOWN:
        if not fnmatch.fnmatchcase(case["fn"], fn_glob):
            continue
        if callable(text) and text(case, msg):
            return reason
        if not callable(text) and (not text or text in msg or text in reproducer(case)):
            return reason
    return None


def _flush(v, to_zero: bool):
    """``v`` with float denormals replaced by signed zeros (TF's CPU kernels flush
    them), or by the smallest denormal (what TF's vectorized float32 log sees:
    ``tf.math.log(1e-40)`` is log(1.4e-45))."""
    if isinstance(v, dict) and "t" in v:
        a = dec(v)
        if a.dtype.kind == "f":
            info = np.finfo(a.dtype)
            sub = (a != 0) & (np.abs(a) < info.tiny)
            if sub.any():
                new = np.zeros_like(a) if to_zero else np.full_like(a, info.smallest_subnormal)
                a = np.where(sub, np.copysign(new, a), a)
                return enc(a), True
        return v, False
    if isinstance(v, dict) and "tuple" in v:
        items = [_flush(x, to_zero) for x in v["tuple"]]
        return {"tuple": [x for x, _ in items]}, any(f for _, f in items)
    if isinstance(v, list):
        items = [_flush(x, to_zero) for x in v]
        return [x for x, _ in items], any(f for _, f in items)
    return v, False


def denormal_only(case: dict, tf) -> bool:
    """True when the case agrees with TF once its denormal inputs are flushed to
    zero (or pinned to the smallest denormal)."""
    for to_zero in (True, False):
        args, changed = _flush(case.get("args", []), to_zero)
        kw = {}
        for k, v in case.get("kw", {}).items():
            kw[k], f = _flush(v, to_zero)
            changed = changed or f
        if not changed:
            return False
        try:
            got = run_case(tf, dict(case, args=args, kw=kw))
        except Exception:  # noqa: BLE001
            continue
        if compare(case["tf"], got) is None:
            return True
    return False


DENORMAL = "denormals are kept (TF flushes them to zero): agrees once the denormal inputs are flushed"


def replay(cases: list):
    """(mismatches, known): lists of (case, message)."""
    import tapeflow as tf

    bad, known = [], []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for c in cases:
            try:
                got = run_case(tf, c)
            except Exception as e:  # noqa: BLE001 - the harness itself broke
                got = {"err": "Harness" + type(e).__name__, "msg": str(e)}
            msg = compare(c["tf"], got)
            if msg is None:
                continue
            if known_reason(c, msg) or denormal_only(c, tf):
                known.append((c, msg))
            else:
                bad.append((c, msg))
    return bad, known


def line(case: dict, msg: str) -> str:
    return f"{case['id']}: {reproducer(case)}  ->  {msg}"


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = "-v" in argv
    paths = [a for a in argv if a != "-v"] or ["tests/fuzz/fixture_seed0.json.gz"]
    total = 0
    nbad = 0
    for p in paths:
        cases = load(p)
        bad, known = replay(cases)
        for c, m in bad:
            print(line(c, m))
        if verbose:
            for c, m in known:
                print("known:", line(c, m))
        total += len(cases)
        nbad += len(bad)
        fns = len({c["fn"] for c in cases})
        print(
            f"{p}: {len(cases)} cases over {fns} functions: {len(bad)} mismatches "
            f"({100 * len(bad) / len(cases):.2f}%), {len(known)} documented differences"
        )
    return 1 if nbad else 0


if __name__ == "__main__":
    sys.exit(main())
