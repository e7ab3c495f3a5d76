"""Per-thread execution state: active tapes, forward accumulators, the graph
being traced. ``execute`` reads it on every op, so it is one thread-local
object with plain attributes, and ``recording`` is kept as a single flag."""

from __future__ import annotations

import threading


class _State(threading.local):
    def __init__(self) -> None:
        self.tapes: list = []  # recording low-level tapes, innermost last
        self.accumulators: list = []  # active forward-mode accumulators
        self.recording = False  # tapes or accumulators is non-empty
        self.graph = None  # the FuncGraph being traced, or None (eager)
        self.debug_hook = None  # tapeflow.debugging: called per op when set

    def update_recording(self) -> None:
        self.recording = bool(self.tapes or self.accumulators)


state = _State()


def executing_eagerly() -> bool:
    """True outside of ``tf.function`` tracing, as ``tf.executing_eagerly``."""
    return state.graph is None
