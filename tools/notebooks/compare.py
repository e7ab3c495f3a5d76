"""Compare the per-cell JSON that ``run.py`` wrote for TensorFlow and for tapeflow.

    python tools/notebooks/compare.py TF.json TAPEFLOW.json [--tf-other-seed TF_SEED1.json] [-v]

What "match" means. A cell's text is its stdout, plus what it wrote to stderr that is neither a logging line
nor a Python warning (``tf.print`` writes there), plus the exception class if it raised. Both texts are
normalised: a line redrawn with carriage returns/backspaces keeps its last state (Keras's progress bar
redraws as often as time allows), memory addresses, module paths in ``<pkg.mod.Class object at 0x..>`` and in
TF's/tapeflow's/Keras's ``<class 'pkg.mod.Class'>``, temporary-directory names, Keras progress-bar timings (``3s``,
``12ms/step``, ``ETA``), runs of spaces and trailing spaces (a redrawn line's padding), and of the progress-bar
states drawn within one epoch only the last (how many Keras draws depends on timing). Then:

- exact: the texts are equal once every number in them is compared to 1e-4 relative (1e-6 absolute) and
  whitespace is dropped (NumPy pads the numbers of a printed array to the widest one's width);
- structure: the texts are equal once every number is replaced by ``#`` and whitespace is dropped (same
  shapes, dtypes, names, layout, exception class; values not compared).

A cell is *random* when TF's own output differs (not exact) between two seeds (``--tf-other-seed``, from
``run.py --seed 1``): random initialisation, sampling, timings. A deterministic cell matches when exact; a
random cell matches when structure. Without ``--tf-other-seed`` every cell must be exact.
"""

from __future__ import annotations

import argparse
import json
import re

NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_LOG = re.compile(r"^(?:[IWEF]\d{4} |WARNING: All log messages|WARNING:|INFO:|W0000|I0000|E0000|\s*warnings\.warn)")
_WARN = re.compile(r"^\S.*:\d+: \w*Warning: ")


def _stderr_text(err: str) -> str:
    keep, skip_indented = [], False
    for line in err.splitlines():
        if _WARN.match(line):
            skip_indented = True
            continue
        if skip_indented and line.startswith("  "):
            continue
        skip_indented = False
        if _LOG.match(line) or not line.strip():
            continue
        keep.append(line)
    return "\n".join(keep)


def normalise(cell: dict) -> str:
    text = cell["stdout"]
    err = _stderr_text(cell.get("stderr", ""))
    if err:
        text += "\n[stderr]\n" + err
    if cell.get("error"):
        text += f"\n[raised {cell['error']['type']}]"
    # a terminal's view: Keras's progress bar redraws its line (backspaces, \r) as often as time allows
    text = "\n".join(line.replace("\x08", "").rsplit("\r", 1)[-1] for line in text.split("\n"))
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    text = re.sub(r"0x[0-9a-fA-F]+", "0x", text)
    text = re.sub(r"<(?:(?:[A-Za-z_]\w*|<locals>)\.)+([A-Za-z_]\w*) object at 0x>", r"<\1 object at 0x>", text)
    text = re.sub(r"<class '(?:tensorflow|tapeflow|keras)\.(?:\w+\.)*(\w+)'>", r"<class '\1'>", text)
    text = re.sub(r"/tmp/tmp[\w]+", "/tmp/TMP", text)
    text = re.sub(r"\b\d+(?:\.\d+)?(?:s|ms|us)(?:/(?:step|epoch|sample))?\b", "<t>", text)
    text = re.sub(r"ETA: [\d:]+", "ETA", text)
    text = _last_progress_states(text)
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r" +\n", "\n", text)
    text = re.sub(r"\n+", "\n", text).strip()
    return text


_PROGRESS = re.compile(r"^\s*\d+/\d+ ━")


def _last_progress_states(text: str) -> str:
    """Of the progress-bar states drawn between two ``Epoch i/n`` headers only the last is kept: how many
    intermediate states Keras draws (and whether one lands before a callback's message) depends on timing."""
    lines = text.split("\n")
    keep, last = [True] * len(lines), None
    for i, line in enumerate(lines):
        if line.startswith("Epoch ") and "/" in line.split(":")[0]:
            last = None
        elif _PROGRESS.match(line):
            if last is not None:
                keep[last] = False
            last = i
    return "\n".join(line for line, k in zip(lines, keep) if k)


def _close(a: str, b: str, rtol: float = 1e-4, atol: float = 1e-6) -> bool:
    try:
        x, y = float(a), float(b)
    except ValueError:
        return a == b
    return abs(x - y) <= atol + rtol * max(abs(x), abs(y))


def exact(a: str, b: str) -> bool:
    if not structure(a, b):  # whitespace aside: NumPy pads a printed array to its widest number
        return False
    return all(_close(x, y) for x, y in zip(NUM.findall(a), NUM.findall(b)))


def structure(a: str, b: str) -> bool:
    """Equal up to the numbers and the spacing that their widths cause (``[ 0.1]`` vs ``[-0.1]``)."""
    return re.sub(r"\s+", "", NUM.sub("#", a)) == re.sub(r"\s+", "", NUM.sub("#", b))


def compare(tf_cells: list[dict], tp_cells: list[dict], tf_other: list[dict] | None = None) -> list[dict]:
    rows = []
    for i, (x, y) in enumerate(zip(tf_cells, tp_cells)):
        if x.get("meta"):
            continue
        a, b = normalise(x), normalise(y)
        random_cell = tf_other is not None and i < len(tf_other) and not exact(a, normalise(tf_other[i]))
        ok = structure(a, b) if random_cell else exact(a, b)
        rows.append({"cell": i, "match": ok, "random": random_cell, "tf_error": bool(x.get("error")),
                     "tf": a, "tapeflow": b, "src": x["src"]})
    return rows


def summary(rows: list[dict]) -> dict:
    return {"cells": len(rows), "match": sum(r["match"] for r in rows), "random": sum(r["random"] for r in rows),
            "tf_failing": sum(r["tf_error"] for r in rows)}


def load(path: str) -> list[dict]:
    with open(path) as f:
        return json.load(f)["cells"]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("tf")
    p.add_argument("tapeflow")
    p.add_argument("--tf-other-seed")
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args(argv)
    rows = compare(load(a.tf), load(a.tapeflow), load(a.tf_other_seed) if a.tf_other_seed else None)
    if a.verbose:
        for r in rows:
            if not r["match"]:
                print(f"--- cell {r['cell']} ({'random' if r['random'] else 'deterministic'})\n{r['src'][:800]}\n"
                      f"=== TF:\n{r['tf'][:1500]}\n=== tapeflow:\n{r['tapeflow'][:1500]}\n")
    s = summary(rows)
    print(f"{s['match']}/{s['cells']} match ({s['random']} random cells compared by structure, "
          f"{s['tf_failing']} fail in TF itself)")


if __name__ == "__main__":
    main()
