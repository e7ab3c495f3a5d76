"""Replay the recorded TensorFlow fuzz fixture (tests/fuzz/fixture_seed0.json.gz).

Every case must agree with TF (values, dtypes, shapes, NaN/inf patterns,
gradient presence and values to second order, exception classes), except the
documented differences in tests/fuzz/known.py and the cases still listed in
tests/fuzz/pending.txt (known open mismatches; a listed case that now agrees
must be removed from the list). Re-record with ``python -m tests.fuzz.record``
under TensorFlow.
"""

from __future__ import annotations

import pathlib

from tests.fuzz.replay import line, load, replay

HERE = pathlib.Path(__file__).parent


def _pending() -> set:
    text = (HERE / "pending.txt").read_text()
    return {ln.split()[0] for ln in text.splitlines() if ln.strip() and not ln.startswith("#")}


def test_replay_matches_tensorflow():
    cases = load(str(HERE / "fixture_seed0.json.gz"))
    assert len(cases) > 2000
    bad, _known = replay(cases)
    pending = _pending()
    new = [line(c, m) for c, m in bad if c["id"] not in pending]
    fixed = pending - {c["id"] for c, _ in bad}
    assert not new, f"{len(new)} of {len(cases)} fuzz cases disagree with TF:\n" + "\n".join(new)
    assert not fixed, f"these pending cases now agree with TF; remove them from tests/fuzz/pending.txt: {sorted(fixed)}"
