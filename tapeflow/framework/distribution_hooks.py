"""Slots that ``tf.distribute`` fills in when a multi-process strategy exists.

Each is ``None`` in a single process, so the layers that consult them
(variables, losses, metrics, optimizers, the Keras trainer, checkpoints)
pay one attribute read and nothing else. ``tapeflow.distribute`` sets them
when a ``MultiWorkerMirroredStrategy`` spans more than one process.
"""

from __future__ import annotations

from typing import Any

# The multi-process strategy (``MultiWorkerMirroredStrategy`` with more than one replica), or None.
strategy: Any = None
# Under that strategy's scope: ``fn(np.ndarray) -> np.ndarray`` (rank 0's value), applied to every new variable.
on_variable_created: Any = None
# Set once ``tapeflow.distribute`` is imported (any strategy, one process or many): ``fn(caller_name) -> int``,
# the current strategy's replica count (a cross-replica call under a strategy's scope raises TF's RuntimeError).
# None: no strategy can exist yet, so one replica.
replicas_in_sync: Any = None
# Set once ``tapeflow.distribute`` is imported: ``fn() -> (strategy, replica id)``: inside ``strategy.run`` of a
# strategy with several local replicas (MirroredStrategy over logical CPUs), that strategy and the running
# replica's id; else the strategy whose scope is entered if it has several local replicas (id None), else
# ``(None, None)``. tf.random.Generator reads it.
local_replicas: Any = None
