"""``tf.compat``: the few ``tf.compat.v1`` calls TF 2 programs still make.

Graph-mode TF 1 (placeholders, sessions) is not part of tapeflow: those names
raise the error TF 2 raises in eager mode, or ``NotImplementedError``.
"""

from __future__ import annotations

from tapeflow.compat import v1

__all__ = ["v1", "v2"]


def __getattr__(name: str):
    if name == "v2":
        import tapeflow

        return tapeflow
    from tapeflow.framework.errors import NotImplementedInTapeflowError

    raise NotImplementedInTapeflowError(f"tf.compat.{name} is not implemented in tapeflow")
