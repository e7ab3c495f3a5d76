"""``tf.debugging``: TF's checks plus tapeflow's gradient diagnostics.

TF's names: ``check_numerics``, ``enable_check_numerics``,
``disable_check_numerics``, ``assert_equal``, ``assert_near`` and friends.

tapeflow's additions:

* ``explain_gradient(tape, target, sources)`` says, per source, why a
  gradient is None (never watched, non-trainable, integer dtype or cast,
  ``stop_gradient``/non-differentiable op, ``stop_recording``, a value that
  left through ``.numpy()``, ``Variable.assign``, math after the block, tape
  already consumed), naming the op and the user's line;
* ``set_source_tracking(True)`` (or ``TAPEFLOW_DEBUG=1`` in the environment)
  turns on debug mode: every op's file:line and an op log the explanations
  use. Off by default: the normal path pays nothing for it;
* ``enable_strict_gradients()``: ``gradient`` raises ``NoneGradientError``
  carrying the explanation instead of returning None;
* ``tape_stats(tape)``, ``tape_to_dot(tape, target, sources)``,
  ``graph_to_dot(tf_function, *args, backward=True)``,
  ``render_dot(dot, "tape.svg")``;
* ``diagnose_training_step(model, loss_fn, optimizer, x, y, var_list=None)``
  runs one training step and reports why the model may not learn (None,
  zero, NaN, exploding or vanishing gradients, var_list mistakes, a zero
  learning rate, a disconnected or summed loss, a wrong custom gradient);
  ``tf.keras.callbacks.TrainingDoctor()`` runs it from ``fit``;
* ``enable_retrace_logging()``: each ``tf.function`` retrace logs which
  argument changed and how (shape, dtype, Python value).

The per-op hook lives in the calling thread's execution state, like tapes:
switch debug mode on in the thread that runs the model. The few method
wrappers and the op log are process-wide.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from tapeflow.debugging import numerics as _numerics  # noqa: F401 - plugs its checks into the registry
from tapeflow.debugging._instrument import REGISTRY as _REG
from tapeflow.ops.check_ops import (
    Assert, assert_all_finite, assert_equal, assert_greater, assert_greater_equal, assert_integer, assert_less,
    assert_less_equal, assert_near, assert_negative, assert_non_negative, assert_non_positive, assert_none_equal,
    assert_positive, assert_rank, assert_rank_at_least, assert_rank_in, assert_scalar, assert_shapes, assert_type,
    is_numeric_tensor,
)
from tapeflow.debugging.explain import (
    GradientExplanation, NoneGradientError, SourceExplanation, explain_gradient,
)
from tapeflow.debugging.graph_view import graph_to_dot
from tapeflow.debugging.tape_info import TapeGrowthWarning, TapeStats, render_dot, tape_stats, tape_to_dot
from tapeflow.ops.debug_ops import check_numerics

__all__ = [
    "Assert", "GradientExplanation", "NoneGradientError", "SourceExplanation", "TapeGrowthWarning", "TapeStats",
    "assert_all_finite", "assert_equal", "assert_greater", "assert_greater_equal", "assert_integer", "assert_less",
    "assert_less_equal", "assert_near", "assert_negative", "assert_non_negative", "assert_non_positive",
    "assert_none_equal", "assert_positive", "assert_rank", "assert_rank_at_least", "assert_rank_in",
    "assert_scalar", "assert_shapes", "assert_type", "check_numerics", "diagnose_training_step",
    "disable_check_numerics", "disable_retrace_logging", "disable_strict_gradients", "disable_tape_growth_warning",
    "enable_check_numerics",
    "enable_retrace_logging", "enable_strict_gradients", "enable_tape_growth_warning", "explain_gradient",
    "graph_to_dot", "is_numeric_tensor", "is_source_tracking_enabled", "render_dot", "set_log_device_placement",
    "set_source_tracking", "assert_same_float_dtype", "assert_proper_iterable", "enable_traceback_filtering",
    "disable_traceback_filtering", "is_traceback_filtering_enabled", "get_log_device_placement",
    "source_tracking", "strict_gradients", "tape_stats", "tape_to_dot",
]


def set_source_tracking(enabled: bool = True) -> None:
    """Turns debug mode on or off.

    On: every op records the user's file:line (also on tape records, as
    ``source_info``) and an op log keeps every op, recorded on a tape or not,
    so ``explain_gradient`` can name the op and line that broke a gradient.
    It costs a stack walk per op, so it is off by default; set the
    environment variable ``TAPEFLOW_DEBUG=1`` to start with it on. Turning it
    off clears the log.
    """
    _REG.tracking = bool(enabled)
    if not enabled:
        _REG.clear()
    _REG.refresh()


def is_source_tracking_enabled() -> bool:
    return _REG.tracking


@contextlib.contextmanager
def source_tracking(enabled: bool = True):
    """``with tf.debugging.source_tracking():`` debug mode for a block."""
    prev = _REG.tracking
    set_source_tracking(enabled)
    try:
        yield
    finally:
        if prev != enabled:
            set_source_tracking(prev)


def enable_strict_gradients() -> None:
    """From now on ``GradientTape.gradient`` raises ``NoneGradientError``
    (with the ``explain_gradient`` report) instead of returning None for a
    requested source. ``unconnected_gradients=tf.UnconnectedGradients.ZERO``
    still returns zeros. For the op and line in the report, also turn on
    ``set_source_tracking(True)``."""
    _REG.strict = True
    _REG.refresh()


def disable_strict_gradients() -> None:
    """Restores TF's behaviour: None for unconnected sources."""
    _REG.strict = False
    _REG.refresh()


@contextlib.contextmanager
def strict_gradients():
    """``with tf.debugging.strict_gradients():`` strict mode for a block."""
    prev = _REG.strict
    enable_strict_gradients()
    try:
        yield
    finally:
        if not prev:
            disable_strict_gradients()


def enable_check_numerics(stack_height_limit: int = 30, path_length_limit: int = 50) -> None:
    """Raises ``InvalidArgumentError`` at the first eager op that *creates* a
    NaN or Inf (not the ops that pass one on), as TF's function of that name.

    The message names the op, the user's line and each input's statistics.
    In the backward pass it names the forward op whose gradient rule created
    the value (and its line, with source tracking on), and recognises the
    ``tf.where`` trap, showing the double-where fix. The limits are accepted
    for TF compatibility.
    """
    _REG.numerics = True
    _REG.refresh()


def disable_check_numerics() -> None:
    """Turns ``enable_check_numerics`` off."""
    _REG.numerics = False
    _REG.reported.clear()
    _REG.refresh()


def enable_tape_growth_warning(steps: int = 5) -> None:
    """Warns (``TapeGrowthWarning``, once per tape) when a persistent tape
    has grown at each of its last ``steps`` ``gradient()`` calls, the sign of
    one tape reused across training steps. Costs one check per gradient()
    call, nothing per op; also on in every other debug mode."""
    if steps < 1:
        raise ValueError(f"steps must be a positive number of gradient() calls, got {steps}.")
    _REG.growth_steps = int(steps)
    _REG.growth_check = True
    _REG.refresh()


def disable_tape_growth_warning() -> None:
    """Turns ``enable_tape_growth_warning`` off (back to 5 steps in debug mode)."""
    _REG.growth_check = False
    _REG.growth_steps = 5
    _REG.refresh()


_RETRACE_SAVED: dict = {}


def enable_retrace_logging() -> None:
    """Logs (logger ``tapeflow.debugging``, WARNING) a line each time a
    ``tf.function`` traces again, saying which argument changed and how:
    ``tf.function 'step' is retracing (trace #2): argument 'x': shape (2,) -> (3,)``."""
    from tapeflow.debugging import graph_view
    from tapeflow.graph.function import Function

    if _RETRACE_SAVED:
        return
    orig = Function.__dict__["_trace"]

    def _trace(self, args, kwargs, key, *rest, **kw):
        graph_view.log_retrace(self, key)
        return orig(self, args, kwargs, key, *rest, **kw)

    _RETRACE_SAVED["_trace"] = orig
    Function._trace = _trace


def disable_retrace_logging() -> None:
    """Turns ``enable_retrace_logging`` off."""
    from tapeflow.graph.function import Function

    orig = _RETRACE_SAVED.pop("_trace", None)
    if orig is not None:
        Function._trace = orig


_DOCTOR_NAMES = frozenset({"diagnose_training_step", "TrainingReport", "Finding"})


def set_log_device_placement(enabled: bool) -> None:
    """As TF's switch for logging where ops run. tapeflow runs every op on
    ``/job:localhost/replica:0/task:0/device:CPU:0``; turning it on logs that once (an INFO record of the
    ``tapeflow`` logger), not a line per op as TF's runtime writes to stderr."""
    import logging

    from tapeflow.framework import context

    if not isinstance(enabled, bool):
        raise TypeError("set_log_device_placement() expects a bool, got " + repr(enabled))
    if enabled and not context.log_device_placement:
        logging.getLogger("tapeflow").info("Device placement: every op runs on "
                                           "/job:localhost/replica:0/task:0/device:CPU:0")
    context.log_device_placement = enabled


def __getattr__(name: str):
    # The training doctor is loaded on first use (keeps `import tapeflow` fast).
    if name in _DOCTOR_NAMES:
        from tapeflow.debugging import doctor

        return getattr(doctor, name)
    if name == "experimental":  # TF's enable_dump_debug_info / disable_dump_debug_info
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError("tf.debugging.experimental (the debugger V2 dumps) is not implemented in "
                                            "tapeflow")
    raise AttributeError(f"module 'tapeflow.debugging' has no attribute '{name}'")


if os.environ.get("TAPEFLOW_DEBUG", "").strip().lower() not in ("", "0", "false", "no", "off"):
    set_source_tracking(True)


def assert_same_float_dtype(tensors: Any = None, dtype: Any = None) -> Any:
    """``tf.debugging.assert_same_float_dtype``: the floating dtype all ``tensors`` (and ``dtype``) share; float32
    when there are none; TF's ``ValueError`` otherwise."""
    from tapeflow.framework import dtypes

    expected = None if dtype is None else dtypes.as_dtype(dtype)
    if tensors:
        original, first = expected, None
        for item in tensors:
            if item is None:
                continue
            item_type = dtypes.as_dtype(item.dtype)
            if expected is None:
                expected, first = item_type, str(item)
            elif expected != item_type:
                raise ValueError(f"{item!s}, type=<dtype: '{item_type.name}'>, must be of the same type (<dtype: "
                                 f"'{expected.name}'>){f' as {first}' if original is None and first else ''}.")
    if expected is None:
        return dtypes.float32
    if not expected.is_floating:
        raise ValueError(f"Expected floating point type, got <dtype: '{expected.name}'>.")
    return expected


def assert_proper_iterable(values: Any) -> None:
    """``tf.debugging.assert_proper_iterable``: a ``TypeError`` for a tensor, ``SparseTensor``, NumPy array,
    string or bytes (iterable, but not meant as a sequence of values) or a non-iterable."""
    import numpy as np

    from tapeflow.framework.sparse_tensor import SparseTensor
    from tapeflow.framework.tensor import Tensor

    if isinstance(values, (Tensor, SparseTensor, np.ndarray, bytes, str)):
        raise TypeError(f'Expected argument "values" to be a "proper" iterable.  Found: {type(values)}')
    if not hasattr(values, "__iter__"):
        raise TypeError(f'Expected argument "values" to be iterable.  Found: {type(values)}')


_TRACEBACK_FILTERING = [True]


def enable_traceback_filtering() -> None:
    """``tf.debugging.enable_traceback_filtering`` (the default): kept as a flag; tapeflow's tracebacks are its
    own frames either way."""
    _TRACEBACK_FILTERING[0] = True


def disable_traceback_filtering() -> None:
    """``tf.debugging.disable_traceback_filtering``: see :func:`enable_traceback_filtering`."""
    _TRACEBACK_FILTERING[0] = False


def is_traceback_filtering_enabled() -> bool:
    return _TRACEBACK_FILTERING[0]


def get_log_device_placement() -> bool:
    """Whether :func:`set_log_device_placement` turned device-placement logging on."""
    from tapeflow.framework import context

    return bool(context.log_device_placement)
