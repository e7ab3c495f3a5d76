"""``tf.compat.v1``: eager-mode no-ops and TF 2's errors for graph-mode TF 1 names."""

from __future__ import annotations

from typing import Any

from tapeflow.framework.context import executing_eagerly

from tapeflow.framework.tensor_shape import Dimension

__all__ = ["enable_eager_execution", "enable_v2_behavior", "disable_eager_execution", "disable_v2_behavior",
           "executing_eagerly", "placeholder", "Session", "Dimension", "enable_tensor_equality",
           "disable_tensor_equality"]

_EQUALITY_OFF: dict | None = None  # the original operators while tensor equality is disabled


def disable_tensor_equality() -> None:
    """TF 1 semantics: ``==``/``!=`` on tensors and variables compare identity (Python bools) and they hash
    by id, as ``tf.compat.v1.disable_tensor_equality``. ``enable_tensor_equality`` restores TF 2's."""
    global _EQUALITY_OFF
    if _EQUALITY_OFF is not None:
        return
    from tapeflow.framework.tensor import Tensor
    from tapeflow.framework.variables import Variable

    _EQUALITY_OFF = {cls: {k: cls.__dict__[k] for k in ("__eq__", "__ne__", "__hash__") if k in cls.__dict__}
                     for cls in (Tensor, Variable)}
    for cls in (Tensor, Variable):
        cls.__eq__ = lambda self, other: self is other
        cls.__ne__ = lambda self, other: self is not other
        cls.__hash__ = lambda self: id(self)


def enable_tensor_equality() -> None:
    """TF 2 semantics (the default): ``==`` on tensors is elementwise, tensors and variables are unhashable."""
    global _EQUALITY_OFF
    if _EQUALITY_OFF is None:
        return
    for cls, saved in _EQUALITY_OFF.items():
        for k in ("__eq__", "__ne__", "__hash__"):
            if k in saved:
                setattr(cls, k, saved[k])
            elif k in cls.__dict__:
                delattr(cls, k)
    _EQUALITY_OFF = None


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

    if name == "keras":  # in TF 2.21 tf.compat.v1.keras is Keras 3, as tf.keras
        import tapeflow.keras

        return tapeflow.keras
    if name == "estimator":  # TF 2.16 removed it: TF 2.21 raises this AttributeError too
        raise AttributeError("module 'tensorflow.compat.v1' has no attribute 'estimator' (TensorFlow 2.16 "
                             "removed tf.estimator; use tf.keras)")
    raise NotImplementedInTapeflowError(f"tf.compat.v1.{name} is not implemented in tapeflow")
