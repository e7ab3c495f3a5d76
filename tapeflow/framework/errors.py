"""TensorFlow's exception classes (``tf.errors``).

TF's ``OpError`` subclasses take ``(node_def, op, message)``; we accept that
form and the plain ``Exception(message)`` form so both TF code that raises
them and our own code read naturally.
"""

from __future__ import annotations


class OpError(Exception):
    """Base class of errors raised while running an op."""

    error_code = 2

    def __init__(self, *args) -> None:
        if len(args) == 3:
            node_def, op, message = args
        elif len(args) == 1:
            node_def, op, message = None, None, args[0]
        else:
            node_def, op, message = None, None, " ".join(str(a) for a in args)
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message

    def __str__(self) -> str:
        return str(self.message)


class CancelledError(OpError):
    error_code = 1


class UnknownError(OpError):
    error_code = 2


class InvalidArgumentError(OpError, ValueError):
    # TF's InvalidArgumentError is not a ValueError, but ops that TF checks in
    # Python (at graph build time) raise ValueError for the same mistakes; being
    # both lets either ``except`` clause catch our eager errors.
    error_code = 3


class DeadlineExceededError(OpError):
    error_code = 4


class NotFoundError(OpError):
    error_code = 5


class AlreadyExistsError(OpError):
    error_code = 6


class PermissionDeniedError(OpError):
    error_code = 7


class ResourceExhaustedError(OpError):
    error_code = 8


class FailedPreconditionError(OpError):
    error_code = 9


class AbortedError(OpError):
    error_code = 10


class OutOfRangeError(OpError):
    error_code = 11


class UnimplementedError(OpError):
    error_code = 12


class InternalError(OpError):
    error_code = 13


class UnavailableError(OpError):
    error_code = 14


class DataLossError(OpError):
    error_code = 15


class UnauthenticatedError(OpError):
    error_code = 16


OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


def from_py_func_exception(e: Exception, op: str) -> OpError:
    """A Python exception raised inside ``tf.py_function`` as TF's py_func kernel reports it: ``TypeError`` and
    ``ValueError`` become ``InvalidArgumentError``, ``StopIteration`` ``OutOfRangeError``, ``MemoryError``
    ``ResourceExhaustedError``, ``NotImplementedError`` ``UnimplementedError``, anything else (tf.errors too)
    ``UnknownError``; the message is ``"ExceptionType: message"`` and the Python traceback."""
    import traceback

    if isinstance(e, (TypeError, ValueError)):
        cls = InvalidArgumentError
    elif isinstance(e, StopIteration):
        cls = OutOfRangeError
    elif isinstance(e, MemoryError):
        cls = ResourceExhaustedError
    elif isinstance(e, NotImplementedError):
        cls = UnimplementedError
    else:
        cls = UnknownError
    tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    return cls(None, None, f"{type(e).__name__}: {e}\n{tb}\n [Op:{op}]")


class NotImplementedInTapeflowError(AttributeError, NotImplementedError):
    """A TensorFlow name tapeflow does not implement. Both a NotImplementedError
    (it says what is missing) and an AttributeError (so ``hasattr`` and
    ``getattr(module, name, default)`` keep working)."""


class OperatorNotAllowedInGraphError(TypeError):
    """``tf.errors.OperatorNotAllowedInGraphError``: Python-level use (``bool``, iteration) of a symbolic tensor
    inside ``tf.function`` (a ``TypeError``, as TF's)."""
