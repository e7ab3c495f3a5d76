"""TF2 tutorial-style programs (tests/tf_programs/keras_*.py) run on tapeflow and compared with
real TensorFlow 2.21 / Keras 3.15's outputs, pinned in tests/tf_programs/expected/<name>.json.

To re-pin after changing a program (needs TensorFlow, never imported here):
    cd tests/tf_programs && /opt/tfvenv/bin/python _run.py keras_quickstart tf > expected/keras_quickstart.json
"""
import importlib
import json
import math
import os
import sys

import pytest

import tapeflow as tf

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_programs")
PROGRAMS = sorted(f[:-5] for f in os.listdir(os.path.join(HERE, "expected")) if f.startswith("keras_"))


def _diffs(want, got, path=""):
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(want) != set(got):
            return [f"{path}: keys {sorted(want) if isinstance(want, dict) else want} != "
                    f"{sorted(got) if isinstance(got, dict) else got}"]
        return [d for k in want for d in _diffs(want[k], got[k], f"{path}/{k}")]
    if isinstance(want, list):
        if not isinstance(got, list) or len(want) != len(got):
            return [f"{path}: {want!r} != {got!r}"]
        return [d for i, (a, b) in enumerate(zip(want, got)) for d in _diffs(a, b, f"{path}[{i}]")]
    if isinstance(want, float) and isinstance(got, (int, float)) and not isinstance(got, bool):
        ok = math.isclose(want, got, rel_tol=2e-4, abs_tol=2e-4) or (math.isnan(want) and math.isnan(got))
        return [] if ok else [f"{path}: TF {want!r} != tapeflow {got!r}"]
    return [] if want == got else [f"{path}: TF {want!r} != tapeflow {got!r}"]


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_matches_tensorflow(name):
    sys.path.insert(0, HERE)
    try:
        prog = importlib.import_module(name)
    finally:
        sys.path.remove(HERE)
    with open(os.path.join(HERE, "expected", name + ".json")) as f:
        want = json.load(f)
    got = json.loads(json.dumps(prog.run(tf)))
    diffs = _diffs(want, got)
    assert not diffs, "\n".join(diffs[:20])
