"""``tf.compat.v1``: eager-mode no-ops and TF 2's errors for graph-mode TF 1 names."""

from __future__ import annotations

from typing import Any

from tapeflow.framework.context import executing_eagerly

__all__ = ["enable_eager_execution", "enable_v2_behavior", "disable_eager_execution", "disable_v2_behavior",
           "executing_eagerly", "placeholder", "Session"]


def enable_eager_execution(config: Any = None, device_policy: Any = None, execution_mode: Any = None) -> None:
    """No-op: tapeflow always executes eagerly (as TF 2)."""


def enable_v2_behavior() -> None:
    """No-op: tapeflow has TF 2's behaviour."""


def disable_eager_execution() -> None:
    raise NotImplementedError("tf.compat.v1.disable_eager_execution: tapeflow has no TF 1 graph mode; "
                              "use tf.function for graphs")


disable_v2_behavior = disable_eager_execution


def placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> Any:
    raise RuntimeError("tf.placeholder() is not compatible with eager execution.")


class Session:
    """TF 1 sessions do not exist in tapeflow (TF 2 code runs eagerly or in tf.function)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("tf.compat.v1.Session: tapeflow has no TF 1 graph mode; call functions "
                                  "eagerly or wrap them in tf.function")


def __getattr__(name: str):
    from tapeflow.framework.errors import NotImplementedInTapeflowError

    raise NotImplementedInTapeflowError(f"tf.compat.v1.{name} is not implemented in tapeflow")
