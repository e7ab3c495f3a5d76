"""Where Keras's messages go: stdout while interactive logging is on (the default), else the ``logging`` module.

Keras 3 prints its progress bars, ``summary()``, callback messages and "Found N files." through one function;
``keras.config.disable_interactive_logging()`` sends them to ``absl.logging.info`` instead, which shows nothing
unless its verbosity is raised. Here they go to ``logging.getLogger("tapeflow").info`` (silent unless that
logger's level is INFO or lower)."""

from __future__ import annotations

import logging
import sys
from typing import Any

__all__ = ["disable_interactive_logging", "enable_interactive_logging", "is_interactive_logging_enabled",
           "print_msg"]

_interactive = [True]


def enable_interactive_logging() -> None:
    """Keras's messages (progress bars, ``summary()``, callbacks) go to stdout: the default."""
    _interactive[0] = True


def disable_interactive_logging() -> None:
    """Keras's messages go to the ``logging`` module (at INFO) instead of stdout, for jobs run on a server."""
    _interactive[0] = False


def is_interactive_logging_enabled() -> bool:
    """True while Keras's messages go to stdout (see ``disable_interactive_logging``)."""
    return _interactive[0]


def print_msg(message: Any, line_break: bool = True) -> None:
    """Keras's ``io_utils.print_msg``: ``message`` to stdout (flushed), or to the log when interactive logging is
    off."""
    message = str(message)
    if _interactive[0]:
        sys.stdout.write(message + "\n" if line_break else message)
        sys.stdout.flush()
    else:
        logging.getLogger("tapeflow").info(message)
