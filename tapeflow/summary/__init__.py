"""``tf.summary``: TensorBoard event files, as TF 2 writes them.

>>> writer = tf.summary.create_file_writer("logs/train")
>>> with writer.as_default(step=0):
...     tf.summary.scalar("loss", 0.25)

Writes real ``events.out.tfevents.*.v2`` files through the ``tensorboard``
package's event writer (``pip install "tapeflow[tensorboard]"``), with the
protos and plugin metadata TF writes, so ``tensorboard --logdir logs`` shows
them. Inside ``tf.function`` a summary is an ordered op that writes when the
function runs; the writer, the step and ``record_if`` are taken at trace time
as in TF (a ``tf.Variable`` step is read at run time).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from tapeflow.summary._writer import (
    SummaryWriter, create_file_writer, create_noop_writer, encode_png, flush,
)

__all__ = [
    "SummaryWriter", "create_file_writer", "create_noop_writer", "flush", "scalar", "histogram", "image",
    "text", "write", "graph", "record_if", "should_record_summaries", "trace_on", "trace_off",
    "trace_export", "experimental",
]


class _SummaryState(threading.local):
    def __init__(self) -> None:
        self.writer: SummaryWriter | None = None
        self.step: Any = None
        self.record_if: Any = True


_state = _SummaryState()


# ---------------------------------------------------------------- context


def _set_default(writer: SummaryWriter | None, step: Any) -> tuple:
    old = (_state.writer, _state.step)
    _state.writer = writer
    if step is not None:
        _state.step = step
    return old


def _restore_default(old: tuple) -> None:
    _state.writer, _state.step = old


@contextlib.contextmanager
def record_if(condition: Any) -> Iterator[None]:
    """Records summaries only while ``condition`` holds: a bool, a boolean
    tensor, or a callable returning one (called each time a summary is made)."""
    old = _state.record_if
    _state.record_if = condition
    try:
        yield
    finally:
        _state.record_if = old


def _condition_value(cond: Any) -> Any:
    if callable(cond):
        cond = cond()
    return cond


def _truth(cond: Any) -> bool:
    """An eager record_if condition (bool or tensor) as a Python bool."""
    return bool(np.asarray(getattr(cond, "_value", cond)))


def should_record_summaries() -> Any:
    """A boolean tensor: True when a default writer is set and ``record_if`` allows it."""
    from tapeflow.framework.tensor import constant

    if _state.writer is None or _state.writer._noop:
        return constant(False)
    cond = _condition_value(_state.record_if)
    if isinstance(cond, (bool, np.bool_)):
        return constant(bool(cond))
    from tapeflow.ops.math_ops import cast

    return cast(cond, "bool")


class _Experimental:
    """``tf.summary.experimental``: the default step and ``summary_scope``."""

    @staticmethod
    def set_step(step: Any) -> None:
        """Sets the default step for summaries (an int, a tensor or a ``tf.Variable``)."""
        _state.step = step

    @staticmethod
    def get_step() -> Any:
        """The default step set by ``set_step`` or ``as_default(step=...)``, or None."""
        return _state.step

    @staticmethod
    @contextlib.contextmanager
    def summary_scope(name: str, default_name: str | None = None, values: Any = None) -> Iterator[tuple]:
        """Yields ``(tag, scope)``: the summary tag under the current ``tf.name_scope``."""
        tag = _tag(name or default_name or "summary")
        yield tag, tag + "/"

    @staticmethod
    def write_raw_pb(tensor: Any, step: Any = None, name: str | None = None) -> Any:
        raise NotImplementedError("tf.summary.experimental.write_raw_pb is not implemented in tapeflow")


experimental = _Experimental()


def _tag(name: str) -> str:
    from tapeflow.framework.variables import _name_scope_stack

    if not isinstance(name, str):
        raise TypeError(f"summary name must be a string, got {type(name).__name__}: {name!r}")
    scope = "/".join(_name_scope_stack)
    return f"{scope}/{name}" if scope else name


# ---------------------------------------------------------------- writing


def _default_step(step: Any) -> Any:
    """``step``, or the default one; a writer with no step at all is TF's ValueError."""
    if step is None:
        step = _state.step
        if step is None:
            raise ValueError("No step set. Please specify one either through the `step` argument or through "
                             "tf.summary.experimental.set_step()")
    return step


def _step_value(step: Any) -> int:
    from tapeflow.framework.variables import Variable

    if isinstance(step, Variable):
        step = step.numpy()
    elif hasattr(step, "numpy"):
        step = step.numpy()
    arr = np.asarray(step)
    if arr.shape != () or not (np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_):
        if arr.shape == () and np.issubdtype(arr.dtype, np.floating) and float(arr) == int(arr):
            return int(arr)
        raise TypeError(f"Cannot convert {step!r} to EagerTensor of dtype int64")
    return int(arr)


def write(tag: str, tensor: Any, step: Any = None, metadata: Any = None, name: str | None = None) -> Any:
    """Writes ``tensor`` (or a callable making it, called only when written) under
    ``tag`` with ``metadata`` (a ``SummaryMetadata`` proto or its bytes); returns a
    boolean tensor: True when written, False when no default writer or ``record_if``
    is off. Raises ValueError when a writer is set but no step is known."""
    return _write(tag, lambda: _as_array(tensor() if callable(tensor) else tensor), step, metadata)


def _as_array(x: Any) -> np.ndarray:
    from tapeflow.framework.variables import Variable

    if isinstance(x, Variable):
        x = x.value()
    if hasattr(x, "_value"):
        x = x._value
    if isinstance(x, str):
        return np.array(x.encode())
    arr = np.asarray(x)
    if arr.dtype.kind == "U":
        arr = np.char.encode(arr, "utf-8")
    return arr


def _write(tag: str, make_array: Callable[[], np.ndarray], step: Any, metadata: Any,
           inputs: tuple = ()) -> Any:
    """Common path of every summary: checks state, then writes now (eager) or
    adds an ordered op that writes when the traced function runs."""
    from tapeflow.framework.context import state
    from tapeflow.framework.tensor import constant

    writer = _state.writer
    if writer is None or writer._noop:
        return constant(False)
    step = _default_step(step)
    cond = _condition_value(_state.record_if)
    if state.graph is not None:
        return _graph_write(writer, tag, make_array, step, metadata, cond, inputs)
    if not _truth(cond):
        return constant(False)
    writer._write_summary(tag, make_array(), _step_value(step), metadata)
    return constant(True)


def _graph_write(writer: SummaryWriter, tag: str, make_array: Callable, step: Any, metadata: Any, cond: Any,
                 inputs: tuple) -> Any:
    # One stateful PyFunc op (kept in program order, never folded): its inputs are
    # the summary's tensors, the step (a variable is read at run time) and the condition.
    from tapeflow.framework.tensor import convert_to_tensor
    from tapeflow.framework.variables import Variable
    from tapeflow.graph.functional_ops import numpy_function

    n = len(inputs)
    step_t = step.value() if isinstance(step, Variable) else convert_to_tensor(step)
    cond_t = convert_to_tensor(bool(cond) if isinstance(cond, (bool, np.bool_)) else cond)

    def run(*arrays: np.ndarray) -> np.ndarray:
        if not bool(arrays[n + 1]):
            return np.array(False)
        writer._write_summary(tag, make_array(*arrays[:n]), _step_value(arrays[n]), metadata)
        return np.array(True)

    return numpy_function(run, list(inputs) + [step_t, cond_t], Tout="bool")


def _plugin_metadata(plugin: str, description: str | None) -> Any:
    # TensorBoard's own metadata builders, as TF's summary ops use them.
    if plugin == "scalars":
        from tensorboard.plugins.scalar import metadata as m
    elif plugin == "histograms":
        from tensorboard.plugins.histogram import metadata as m
    elif plugin == "images":
        from tensorboard.plugins.image import metadata as m
    else:
        from tensorboard.plugins.text import metadata as m
    return m.create_summary_metadata(display_name=None, description=description)


def _eager_or_symbolic(data: Any) -> tuple:
    """(inputs for a graph op, a function of their arrays) for ``data``."""
    from tapeflow.framework.context import state
    from tapeflow.framework.tensor import convert_to_tensor
    from tapeflow.framework.variables import Variable

    if isinstance(data, Variable):
        data = data.value()
    if state.graph is not None and not isinstance(data, (str, bytes)):
        t = convert_to_tensor(data)
        return (t,), lambda a: a
    arr = _as_array(data)
    return (), lambda *a: arr


def _check_numeric(inputs: tuple, get: Callable, target: str, remedy: str) -> None:
    # eager string data: TF's Cast error (a graph tensor's dtype is checked by the cast itself)
    if not inputs and get().dtype.kind in "SUO":
        from tapeflow.framework.errors import UnimplementedError

        raise UnimplementedError(None, None, f"Cast string to {target} is not supported [Op:Cast] ({remedy})")


def scalar(name: str, data: Any, step: Any = None, description: str | None = None) -> Any:
    """Writes a scalar (cast to float32) to the default writer; see ``tf.summary.scalar``."""
    inputs, get = _eager_or_symbolic(data)
    shape = inputs[0].shape if inputs else np.shape(get())
    if tuple(shape) != () and None not in tuple(shape):
        raise ValueError(f"Expected scalar shape, saw shape: {tuple(shape)}.")
    _check_numeric(inputs, get, "float", "tf.summary.scalar takes a number")

    def make(*a: np.ndarray) -> np.ndarray:
        arr = np.asarray(get(*a))
        if arr.shape != ():
            raise ValueError(f"Expected scalar shape, saw shape: {arr.shape}.")
        return arr.astype(np.float32)

    return _write(_tag(name), make, step, _plugin_metadata("scalars", description), inputs)


def _buckets(data: np.ndarray, bucket_count: int) -> np.ndarray:
    # TensorBoard's histogram layout: [k, 3] rows of (left edge, right edge, count).
    data = np.asarray(data, dtype=np.float64).ravel()
    if bucket_count <= 0:
        return np.zeros((0, 3))
    if data.size == 0:
        return np.zeros((bucket_count, 3))
    lo, hi = data.min(), data.max()
    if lo == hi:
        counts = np.zeros(bucket_count)
        counts[-1] = data.size
        return np.stack([np.full(bucket_count, lo), np.full(bucket_count, lo), counts], axis=1)
    idx = np.minimum(np.floor((data - lo) / ((hi - lo) / bucket_count)).astype(np.int64), bucket_count - 1)
    counts = np.bincount(idx, minlength=bucket_count).astype(np.float64)
    edges = np.linspace(lo, hi, bucket_count + 1)
    edges[-1] = hi
    return np.stack([edges[:-1], edges[1:], counts], axis=1)


def histogram(name: str, data: Any, step: Any = None, buckets: int | None = None,
              description: str | None = None) -> Any:
    """Writes a histogram of every element of ``data`` (30 buckets by default)."""
    inputs, get = _eager_or_symbolic(data)
    _check_numeric(inputs, get, "double", "tf.summary.histogram takes numbers")
    count = 30 if buckets is None else int(buckets)
    return _write(_tag(name), lambda *a: _buckets(get(*a), count), step,
                  _plugin_metadata("histograms", description), inputs)


def _image_tensor(images: np.ndarray, max_outputs: int) -> np.ndarray:
    from tapeflow.framework.errors import InvalidArgumentError

    if images.ndim != 4:
        raise ValueError(f"Tensor  must have rank 4.  Received rank {images.ndim}, shape {images.shape}")
    if images.shape[-1] not in (1, 2, 3, 4):
        raise InvalidArgumentError(None, None, f"image must have 1, 2, 3, or 4 channels, got {images.shape[-1]} "
                                               "[Op:EncodePng] (tf.summary.image takes [k, h, w, c] images)")
    if images.dtype.kind == "f":
        # tf.image.convert_image_dtype(..., uint8, saturate=True): scale by 255.5, truncate.
        images = (np.clip(images.astype(np.float64), 0.0, 1.0) * 255.5).astype(np.uint8)
    elif images.dtype != np.uint8:
        images = np.clip(images, 0, 255).astype(np.uint8)
    pngs = [encode_png(img) for img in images[:max_outputs]]
    return np.array([str(images.shape[2]).encode(), str(images.shape[1]).encode()] + pngs, dtype=object)


def image(name: str, data: Any, step: Any = None, max_outputs: int = 3, description: str | None = None) -> Any:
    """Writes up to ``max_outputs`` PNG images from ``data`` of shape ``[k, h, w, c]``
    (floats in [0, 1] or uint8)."""
    inputs, get = _eager_or_symbolic(data)
    if inputs:
        rank = inputs[0].shape.rank
        if rank is not None and rank != 4:
            raise ValueError(f"Tensor  must have rank 4.  Received rank {rank}, shape {inputs[0].shape}")
    else:
        arr = get()
        if arr.ndim != 4:
            raise ValueError(f"Tensor  must have rank 4.  Received rank {arr.ndim}, shape {arr.shape}")
    return _write(_tag(name), lambda *a: _image_tensor(np.asarray(get(*a)), int(max_outputs)), step,
                  _plugin_metadata("images", description), inputs)


def text(name: str, data: Any, step: Any = None, description: str | None = None) -> Any:
    """Writes a string tensor (Markdown) to the default writer."""
    from tapeflow.framework.tensor import convert_to_tensor

    t = convert_to_tensor(data)
    if t.dtype.name != "string":
        raise TypeError(f"tensor must be of type tf.string; got tf.{t.dtype.name}")
    arr = _as_array(t)
    return _write(_tag(name), lambda: arr, step, _plugin_metadata("text", description))


def graph(graph_data: Any) -> Any:
    """Writes a traced function's graph (a ``tf.function`` graph or a concrete
    function) to the default writer as a GraphDef, for TensorBoard's graph tab."""
    from tapeflow.framework.tensor import constant

    writer = _state.writer
    if writer is None or writer._noop:
        return constant(False)
    if not _truth(_condition_value(_state.record_if)):
        return constant(False)
    writer._write_graph(graph_data)
    return constant(True)


# ---------------------------------------------------------------- tracing

_trace: dict = {"on": False, "graphs": []}


def trace_on(graph: bool = True, profiler: bool = False, profiler_outdir: str | None = None) -> None:
    """Starts collecting the graphs of the ``tf.function`` calls that follow
    (exported by ``trace_export``). The profiler is not available in tapeflow."""
    if profiler:
        raise NotImplementedError("tf.summary.trace_on(profiler=True): tapeflow has no profiler; "
                                  "use profiler=False (graphs only)")
    from tapeflow.graph import function as function_mod

    _trace["on"] = bool(graph)
    _trace["graphs"] = []
    function_mod.trace_hook = _trace["graphs"].append if graph else None


def trace_off() -> None:
    """Stops collecting graphs and drops what was collected."""
    from tapeflow.graph import function as function_mod

    _trace["on"] = False
    _trace["graphs"] = []
    function_mod.trace_hook = None


def trace_export(name: str, step: Any = None, profiler_outdir: str | None = None) -> None:
    """Writes the graphs collected since ``trace_on`` under ``name`` and stops tracing."""
    writer = _state.writer
    graphs = list(_trace["graphs"])
    trace_off()
    if writer is None or writer._noop:
        return
    writer._write_run_metadata(_tag(name), graphs, _step_value(_default_step(step)))


def __getattr__(name: str):
    if name == "audio":
        from tapeflow.framework.errors import NotImplementedInTapeflowError

        raise NotImplementedInTapeflowError("tf.summary.audio is not implemented in tapeflow")
    raise AttributeError(f"module 'tapeflow.summary' has no attribute '{name}'")
