"""Per-thread execution state: active tapes, forward accumulators, the graph
being traced, the debug hook.

``execute`` reads it on every op, so the common case is one flag: ``plain``
is True when nothing records, traces or debugs, and the op can just run.
``recording`` is True when tapes/accumulators/the debug hook must see ops.
Whoever mutates ``tapes``/``accumulators`` in place calls
``update_recording()``; assigning ``graph``/``debug_hook`` updates the flags.
"""

from __future__ import annotations

import threading


class _State(threading.local):
    def __init__(self) -> None:
        self.tapes: list = []  # recording low-level tapes, innermost last
        self.accumulators: list = []  # active forward-mode accumulators
        self._graph = None  # the graph being traced (or another op interceptor), or None
        self._debug_hook = None  # tapeflow.debugging: called per op when set
        self.recording = False  # tapes or accumulators is non-empty, or debug_hook is set
        self.plain = True  # not recording and no graph: the fast eager path
        # The one recorder that takes ops straight from ``execute1``/``execute2``, when nothing else records
        # or traces: a tape following a template lazily (eager/backprop.py; ``lazy``: the ops it takes, or
        # falsy once it stopped; ``watched``: ids; ``light``: its list). Any change of what records clears it.
        self.lane = None
        # > 0 while Keras runs a layer on stand-in values only to learn its output shapes (a functional model's
        # symbolic call): output-only side effects (tf.print) are skipped, as in Keras's scratch graph
        self.dry_run = 0
        # the outermost dry run's [first id of the variables its builds create, {id: (variable, value before)}]:
        # what its calls assigned to older variables is undone when it ends, as Keras's StatelessScope discards it
        self.dry_run_journal = None

    @property
    def graph(self):
        return self._graph

    @graph.setter
    def graph(self, value) -> None:
        self._graph = value
        self.update_recording()

    @property
    def debug_hook(self):
        return self._debug_hook

    @debug_hook.setter
    def debug_hook(self, value) -> None:
        self._debug_hook = value
        self.update_recording()

    def update_recording(self) -> None:
        # tapeflow.debugging's hook must see ops even with no tape; this runs
        # only on tape push/pop, so the per-op path stays one flag test.
        self.recording = bool(self.tapes or self.accumulators or self._debug_hook is not None)
        self.plain = not self.recording and self._graph is None
        self.lane = None


state = _State()

# tf.config.run_functions_eagerly: process-wide (not per thread), as TF's; read by every tf.function call.
run_functions_eagerly = False

# tf.config.optimizer.set_experimental_options (process-wide, as TF's context): Grappler's option names; tapeflow's
# graph compiler reads "debug_stripper" (the others name passes it does not have)
optimizer_options: dict = {}
# tf.config.set_soft_device_placement (None: TF's default, soft) and tf.debugging.set_log_device_placement
soft_device_placement: bool | None = None
log_device_placement = False


def executing_eagerly() -> bool:
    """True outside of ``tf.function`` tracing, as ``tf.executing_eagerly``."""
    return state.graph is None
