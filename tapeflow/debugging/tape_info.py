"""What a tape holds (``tape_stats``), growth warnings, and Graphviz pictures."""

from __future__ import annotations

import collections
import dataclasses
import shutil
import subprocess
import warnings
from typing import Any

import numpy as np

from tapeflow.debugging import _instrument
from tapeflow.debugging._instrument import REGISTRY
from tapeflow.framework import nest


@dataclasses.dataclass
class TapeStats:
    """Size of a tape: op records, the tensors kept alive for gradient rules
    and their bytes, watched ids, and records per op type."""

    records: int
    saved_tensors: int
    saved_bytes: int
    watched: int
    watched_variables: int
    persistent: bool
    ops: dict

    def __str__(self) -> str:
        top = ", ".join(f"{k}×{v}" for k, v in sorted(self.ops.items(), key=lambda kv: -kv[1])[:8])
        kind = "persistent" if self.persistent else "non-persistent"
        return (f"GradientTape ({kind}): {self.records} records, {self.saved_tensors} saved tensors "
                f"({_fmt_bytes(self.saved_bytes)}), {self.watched} watched ids "
                f"({self.watched_variables} variables)" + (f"; ops: {top}" if top else ""))


def _fmt_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def tape_stats(tape: Any) -> TapeStats:
    """Counts what ``tape`` holds now: records, saved tensors (unique, with
    their bytes), watched ids and variables, records per op type.

    >>> with tf.GradientTape(persistent=True) as tape:
    ...     ...
    >>> print(tf.debugging.tape_stats(tape))  # doctest: +SKIP
    GradientTape (persistent): 12 records, 9 saved tensors (1.2 MiB), ...
    """
    from tapeflow.eager.backprop import GradientTape

    if not isinstance(tape, GradientTape):
        raise TypeError(f"tape_stats() needs a tf.GradientTape, got {type(tape).__name__}.")
    tp = tape._tape
    if tp is None:
        return TapeStats(0, 0, 0, 0, 0, tape._persistent, {})
    seen: dict[int, int] = {}
    ops: collections.Counter = collections.Counter()
    for rec in tp.records:
        ops[rec.type] += 1
        for group in (rec.inputs, rec.outputs):
            if group:
                for t in group:
                    if t is not None and t._id not in seen:
                        seen[t._id] = int(np.asarray(t._value).nbytes)
    return TapeStats(len(tp.records), len(seen), sum(seen.values()), len(tp.watched), len(tp.variables),
                     tp.persistent, dict(ops))


class TapeGrowthWarning(ResourceWarning):
    """A persistent tape kept growing across many gradient() calls."""


def check_growth(reg, gtape, n_records: int) -> None:
    """Debug mode: warn once when a persistent tape has grown at each of the
    last ``reg.growth_steps`` gradient() calls (a tape reused across training
    steps keeps every step's records and saved tensors alive)."""
    hist = reg.growth.get(gtape)
    if hist is None:
        hist = reg.growth[gtape] = []
    if hist and hist[-1] is None:  # already warned about this tape
        return
    hist.append(n_records)
    k = reg.growth_steps
    del hist[:-(k + 1)]
    if len(hist) == k + 1 and all(b > a for a, b in zip(hist, hist[1:])):
        stats = tape_stats(gtape)
        hist.append(None)
        warnings.warn(
            f"A persistent GradientTape has grown at each of its last {k} gradient() calls and now holds {stats}. "
            "A persistent tape reused across training steps keeps every step's records alive: create the tape "
            "inside the step (`with tf.GradientTape() as tape:` per step), or call tape.reset() after each step.",
            TapeGrowthWarning, stacklevel=4)


# -- Graphviz -------------------------------------------------------------------

def _q(s: str) -> str:
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _spec_text(shape, dt) -> str:
    from tapeflow.framework import dtypes

    try:
        name = dtypes.from_numpy(dt).name
    except Exception:  # noqa: BLE001 - only for labels
        name = str(dt)
    dims = ",".join("?" if d is None else str(d) for d in shape) if shape is not None else "?"
    return f"{name}[{dims}]"


def tape_to_dot(tape: Any, target: Any = None, sources: Any = None, explanation: Any = None,
                show_sites: bool = True) -> str:
    """Renders a tape's records as Graphviz DOT text.

    Ops are boxes labelled with their TF name, output shapes/dtypes and (in
    debug mode) the user's line; ``sources`` are green, ``target`` blue. When
    both are given, the gradient is explained (or ``explanation`` is used) and
    the path that broke a gradient is drawn in red, including the ops the tape
    did not record (known only with source tracking on).
    """
    from tapeflow.debugging import explain as explain_mod
    from tapeflow.eager.backprop import GradientTape

    if not isinstance(tape, GradientTape):
        raise TypeError(f"tape_to_dot() needs a tf.GradientTape, got {type(tape).__name__}.")
    tp = tape._tape
    records = tp.records if tp is not None else []
    if tp is None:
        snap = REGISTRY.snapshots.get(tape)
        if snap is not None:
            tp, records = snap.tape, snap.records
    flat_sources = [s for s in nest.flatten(sources)] if sources is not None else []
    flat_targets = [t for t in nest.flatten(target) if t is not None] if target is not None else []
    if explanation is None and flat_sources and flat_targets:
        explanation = explain_mod.explain_gradient(tape, target, sources)
    lines = ["digraph tape {", "  rankdir=TB;", '  node [fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9];']
    producer: dict[int, str] = {}
    for n, rec in enumerate(records):
        outs = ", ".join(_spec_text(s, d) for s, d in zip(rec.output_shapes, rec.output_dtypes))
        label = f"{rec.type}\n{outs}"
        if show_sites and rec.source_info:
            label += f"\n{rec.source_info}"
        lines.append(f"  r{n} [shape=box, style=rounded, label={_q(label)}];")
        for oid in rec.output_ids:
            producer[oid] = f"r{n}"
    source_ids = {s._id: i for i, s in enumerate(flat_sources)}
    for i, s in enumerate(flat_sources):
        shape = s._shape_tuple()
        lab = f"source {i}\n{_spec_text(shape, np.dtype(s.dtype.as_numpy_dtype))}"
        lines.append(f"  s{i} [shape=ellipse, style=filled, fillcolor=palegreen, label={_q(lab)}];")
    for j, t in enumerate(flat_targets):
        lab = f"target {j}\n{_spec_text(t._shape_tuple(), np.dtype(t.dtype.as_numpy_dtype))}"
        lines.append(f"  t{j} [shape=doubleoctagon, style=filled, fillcolor=lightblue, label={_q(lab)}];")
    # The broken paths first: their unrecorded ops become (red) producers too,
    # so the record edges below connect to them.
    red: set = set()
    if explanation is not None:
        lines += _broken_paths(explanation, producer, source_ids, flat_targets, show_sites, red)
    edges: list = []
    other: dict[int, str] = {}
    for n, rec in enumerate(records):
        for k, iid in enumerate(rec.input_ids):
            if iid in source_ids:
                src = f"s{source_ids[iid]}"
            elif iid in producer and producer[iid] != f"r{n}":
                src = producer[iid]
            else:
                if iid not in other:
                    other[iid] = f"w{len(other)}"
                    shape, dt = rec.input_shapes[k], rec.input_dtypes[k]
                    what = ("variable" if rec.type == "ReadVariableOp" else
                            "watched" if iid in tp.watched else "constant")
                    lines.append(f"  {other[iid]} [shape=ellipse, color=gray40, "
                                 f"label={_q(f'{what} #{iid}' + chr(10) + _spec_text(shape, dt))}];")
                src = other[iid]
            edges.append((src, f"r{n}"))
    for j, t in enumerate(flat_targets):
        if t._id in producer:
            edges.append((producer[t._id], f"t{j}"))
        elif t._id in source_ids:
            edges.append((f"s{source_ids[t._id]}", f"t{j}"))
    seen = set()
    for e in edges + sorted(red - set(edges)):
        if e in seen:
            continue
        seen.add(e)
        attr = " [color=red, penwidth=2]" if e in red else ""
        lines.append(f"  {e[0]} -> {e[1]}{attr};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _broken_paths(explanation, producer, source_ids, flat_targets, show_sites, red: set) -> list:
    """Nodes for the unrecorded ops on each broken path (red, dashed); the
    path's edges go into ``red``."""
    out = []
    tgt_ids = {t._id: j for j, t in enumerate(flat_targets)}
    for se in explanation.sources:
        if not se.is_none:
            continue
        si = se.index
        if not se.path:
            cut_label = se.cause + (f"\n{se.op}" if se.op else "") + (
                f" at {se.site}" if se.site and show_sites else "")
            out.append(f"  x{si} [shape=note, color=red, fontcolor=red, label={_q(cut_label)}];")
            out.append(f"  s{si} -> x{si} [color=red, style=dashed];")
            continue
        prev = f"s{si}"
        for n, e in enumerate(se.path):
            node = next((producer[oid] for oid in e.output_ids if oid in producer), None)
            if node is None:
                node = f"p{si}_{n}"
                outs = ", ".join(_spec_text(sh, d) for sh, d in e.out_specs)
                label = f"{e.type}\n{outs}" if outs else e.type
                if show_sites and e.site:
                    label += f"\n{e.site}"
                if e is se.cut:
                    label += f"\n[{se.cause}]"
                out.append(f"  {node} [shape=box, style=\"rounded,dashed\", color=red, fontcolor=red, "
                           f"label={_q(label)}];")
                for oid in e.output_ids:
                    producer.setdefault(oid, node)
            if prev != node:
                red.add((prev, node))
            prev = node
        for oid in se.path[-1].output_ids:
            if oid in tgt_ids:
                red.add((prev, f"t{tgt_ids[oid]}"))
    return out


def render_dot(dot: str, path: str, format: str | None = None) -> str:  # noqa: A002 - Graphviz's word
    """Renders DOT text to ``path`` (SVG, PNG, PDF ... from its extension or
    ``format``) with the Graphviz ``dot`` program; returns ``path``."""
    exe = shutil.which("dot")
    if exe is None:
        raise FileNotFoundError(
            "render_dot() needs the Graphviz `dot` program, which is not on PATH. Install Graphviz "
            "(e.g. `apt-get install graphviz` or `brew install graphviz`), or save the DOT text and render it "
            "elsewhere.")
    fmt = format or (path.rsplit(".", 1)[-1] if "." in path else "svg")
    proc = subprocess.run([exe, f"-T{fmt}", "-o", path], input=dot.encode(), capture_output=True, timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"Graphviz `dot -T{fmt}` failed: {proc.stderr.decode(errors='replace').strip()}")
    return path


_instrument.EXT.check_growth = check_growth  # plugged into the debug registry (_instrument)
