"""Per-thread execution state: active tapes, forward accumulators, the graph
being traced. ``execute`` reads it on every op, so it is one thread-local
object with plain attributes, and ``recording`` is kept as a single flag."""

from __future__ import annotations

import threading


class _State(threading.local):
    def __init__(self) -> None:
        self.tapes: list = []  # recording low-level tapes, innermost last
        self.accumulators: list = []  # active forward-mode accumulators
        self.recording = False  # tapes or accumulators is non-empty, or debug_hook is set
        self.graph = None  # the FuncGraph being traced, or None (eager)
        self.debug_hook = None  # tapeflow.debugging: called per op when set

    def update_recording(self) -> None:
        # tapeflow.debugging's hook must see ops even with no tape; this runs
        # only on tape push/pop, so the per-op path stays one flag test.
        self.recording = bool(self.tapes or self.accumulators or self.debug_hook is not None)


state = _State()


def executing_eagerly() -> bool:
    """True outside of ``tf.function`` tracing, as ``tf.executing_eagerly``."""
    return state.graph is None
