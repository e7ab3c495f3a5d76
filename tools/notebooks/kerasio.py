"""Turn a keras.io guide or example (github.com/keras-team/keras-io ``guides/*.py``, ``examples/**/*.py``: Python
with ``\"\"\"`` markdown blocks) into a notebook that ``run.py`` runs cell by cell under TF and under tapeflow.

    python tools/notebooks/kerasio.py GUIDE.py OUT.ipynb [--sub 'OLD=>NEW' ...]

Each run of code between two module-level string statements (the markdown and ``\"\"\"shell`` blocks) is one
code cell; the blocks themselves are dropped. ``--sub`` replaces literal source text in every cell before
splitting (smaller data, fewer epochs: give both backends the same). Then, e.g.:

    python tools/notebooks/run.py OUT.ipynb --backend tensorflow --seed 0 --out g.tf.json   (and --seed 1)
    python tools/notebooks/run.py OUT.ipynb --backend tapeflow --out g.tp.json
    python tools/notebooks/compare.py g.tf.json g.tp.json --tf-other-seed g.tf1.json -v
"""

from __future__ import annotations

import argparse
import ast
import json


def split_cells(source: str) -> list[str]:
    """The code between the module's top-level string statements, one cell per run of code."""
    lines = source.splitlines(True)
    cuts = [(node.lineno - 1, node.end_lineno) for node in ast.parse(source).body
            if isinstance(node, ast.Expr) and isinstance(getattr(node.value, "value", None), str)]
    cells, start = [], 0
    for begin, end in cuts + [(len(lines), len(lines))]:
        code = "".join(lines[start:begin])
        if code.strip():
            cells.append(code.strip("\n") + "\n")
        start = end
    return cells


def to_notebook(cells: list[str]) -> dict:
    return {"cells": [{"cell_type": "code", "source": c, "metadata": {}, "outputs": [], "execution_count": None}
                      for c in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("guide")
    ap.add_argument("out")
    ap.add_argument("--sub", action="append", default=[], help="literal replacement OLD=>NEW (repeatable)")
    args = ap.parse_args()
    with open(args.guide, encoding="utf-8") as f:
        source = f.read()
    for sub in args.sub:
        old, sep, new = sub.partition("=>")
        if not sep or old not in source:
            raise SystemExit(f"--sub {sub!r}: expected OLD=>NEW with OLD in the guide")
        source = source.replace(old, new)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(to_notebook(split_cells(source)), f, indent=1)


if __name__ == "__main__":
    main()
