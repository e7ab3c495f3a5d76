"""``tf.types``: the public base types programs name in annotations and ``isinstance`` checks.

``tf.types.experimental.TraceType`` is the protocol of custom trace types: an argument whose class defines
``__tf_tracing_type__(context)`` is keyed by the returned ``TraceType`` (equal types share a trace) and is
passed to the traced function as ``trace_type.placeholder_value(context)``, as TF 2.21.
"""

from __future__ import annotations

import abc
from typing import Any, Protocol, Union

import numpy as np

__all__ = ["experimental"]


class _TraceType(abc.ABC):
    """``tf.types.experimental.TraceType``: how ``tf.function`` compares and stands in for an argument."""

    @abc.abstractmethod
    def is_subtype_of(self, other: Any) -> bool: ...

    @abc.abstractmethod
    def most_specific_common_supertype(self, others: Any) -> Any: ...

    def placeholder_value(self, placeholder_context: Any = None) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.placeholder_value")

    @abc.abstractmethod
    def __eq__(self, other: Any) -> bool: ...

    @abc.abstractmethod
    def __hash__(self) -> int: ...


class _SupportsTracingProtocol(Protocol):
    def __tf_tracing_type__(self, context: Any) -> _TraceType: ...


class _TracingContext:
    """``tf.types.experimental.TracingContext``: passed to ``__tf_tracing_type__`` (tapeflow passes None)."""


def _tensor_like():
    from tapeflow.framework.tensor import Tensor
    from tapeflow.framework.variables import Variable

    return Union[Tensor, Variable, np.ndarray, np.generic, int, float, bool, str, bytes, complex, tuple, list]


class experimental:  # noqa: N801 - TF's namespace name
    """``tf.types.experimental``."""

    TraceType = _TraceType
    SupportsTracingProtocol = _SupportsTracingProtocol
    TracingContext = _TracingContext


def _install() -> None:
    from tapeflow.graph import function as fn

    experimental.ConcreteFunction = fn.ConcreteFunction
    experimental.GenericFunction = fn.Function
    experimental.PolymorphicFunction = fn.Function
    experimental.FunctionType = fn.FunctionType
    experimental.Callable = object
    experimental.TensorLike = _tensor_like()


_install()
