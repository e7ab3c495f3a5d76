"""The summary writer: TensorBoard's event-file writer plus TF's protos.

TensorBoard (the ``tensorboard`` package) is imported only when a writer is
created, so ``import tapeflow`` never pays for it.
"""

from __future__ import annotations

import contextlib
import os
import struct
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np

_MISSING = ("tf.summary needs the 'tensorboard' package to write event files: "
            "pip install \"tapeflow[tensorboard]\" (or pip install tensorboard)")


def _tb() -> Any:
    try:
        from tensorboard.compat.proto import event_pb2, summary_pb2
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
        from tensorboard.util import tensor_util
    except ImportError as e:  # pragma: no cover - exercised only without tensorboard
        raise ImportError(_MISSING) from e
    return event_pb2, summary_pb2, EventFileWriter, tensor_util


class SummaryWriter:
    """Writes summaries to one event file; ``tf.summary.create_file_writer`` makes it.

    ``with writer.as_default(step=...)`` makes it the default writer (and flushes
    on exit); ``flush()`` and ``close()`` as in TF.
    """

    def __init__(self, logdir: str | None, max_queue: int | None = None, flush_millis: int | None = None,
                 filename_suffix: str | None = None) -> None:
        self._noop = logdir is None
        self._closed = False
        self._events = None
        if self._noop:
            return
        event_pb2, summary_pb2, EventFileWriter, self._tensor_util = _tb()
        self._event_pb2, self._summary_pb2 = event_pb2, summary_pb2
        os.makedirs(logdir, exist_ok=True)
        self._events = EventFileWriter(
            logdir, max_queue_size=10 if max_queue is None else int(max_queue),
            flush_secs=120 if flush_millis is None else max(int(flush_millis) / 1000.0, 0.001),
            filename_suffix=".v2" if filename_suffix is None else filename_suffix)
        self.logdir = logdir

    # -- TF's public methods ---------------------------------------------------
    def as_default(self, step: Any = None) -> contextlib.AbstractContextManager:
        """Makes this the default writer inside the block (and ``step`` the default step)."""
        if self._closed:
            raise RuntimeError(f"SummaryWriter {self!r} is already closed")
        return self._default(step)

    @contextlib.contextmanager
    def _default(self, step: Any) -> Iterator[SummaryWriter]:
        from tapeflow import summary

        old = summary._set_default(self, step)
        try:
            yield self
        finally:
            summary._restore_default(old)
            self.flush()

    def set_as_default(self, step: Any = None) -> None:
        """Makes this the default writer until another is set (no block)."""
        from tapeflow import summary

        if self._closed:
            raise RuntimeError(f"SummaryWriter {self!r} is already closed")
        summary._set_default(self, step)

    def init(self) -> None:
        """No-op (the event file is created with the writer), as TF's eager writer."""

    def flush(self) -> None:
        """Writes buffered events to disk."""
        if self._events is not None and not self._closed:
            self._events.flush()

    def close(self) -> None:
        """Flushes and closes the event file; the writer can no longer be used."""
        if self._events is not None and not self._closed:
            self._events.close()
        self._closed = True

    # -- the write paths -----------------------------------------------------------
    def _add(self, step: int, **fields: Any) -> None:
        if self._closed or self._events is None:
            return
        import time

        self._events.add_event(self._event_pb2.Event(wall_time=time.time(), step=step, **fields))

    def _write_summary(self, tag: str, array: np.ndarray, step: int, metadata: Any) -> None:
        if self._closed or self._events is None:
            return
        tensor = self._tensor_util.make_tensor_proto(_proto_ready(array))
        if isinstance(metadata, (bytes, bytearray)):
            metadata = self._summary_pb2.SummaryMetadata.FromString(bytes(metadata))
        value = self._summary_pb2.Summary.Value(tag=tag, tensor=tensor)
        if metadata is not None:
            value.metadata.CopyFrom(metadata)
        self._add(step, summary=self._summary_pb2.Summary(value=[value]))

    def _write_graph(self, graph_data: Any) -> None:
        self._add(0, graph_def=graph_def(graph_data).SerializeToString())

    def _write_run_metadata(self, tag: str, graphs: list, step: int) -> None:
        # What TF's trace_export writes: a RunMetadata with each traced function's
        # graph, under the "graph_run_metadata_graph" plugin.
        from tensorboard.compat.proto import config_pb2

        run = config_pb2.RunMetadata()
        seen = set()
        for g in graphs:
            if id(g) in seen:
                continue
            seen.add(id(g))
            run.function_graphs.add().pre_optimization_graph.CopyFrom(graph_def(g))
        meta = self._summary_pb2.SummaryMetadata()
        meta.plugin_data.plugin_name = "graph_run_metadata_graph"
        meta.plugin_data.content = b"1"
        self._write_summary(tag, np.array(run.SerializeToString(), dtype=object), step, meta)

    def __repr__(self) -> str:
        kind = "NoopSummaryWriter" if self._noop else "SummaryWriter"
        return f"<tapeflow.summary.{kind} object at 0x{id(self):x}>"


def _proto_ready(array: np.ndarray) -> np.ndarray:
    array = np.asarray(array)
    if array.dtype.kind == "U":
        array = np.char.encode(array, "utf-8")
    if array.dtype.kind == "S":
        array = array.astype(object)
    return array


def create_file_writer(logdir: str, max_queue: int | None = None, flush_millis: int | None = None,
                       filename_suffix: str | None = None, name: str | None = None,
                       experimental_trackable: bool = False, experimental_mesh: Any = None) -> SummaryWriter:
    """A writer of TensorBoard event files in ``logdir`` (created if missing).

    Events are buffered (``max_queue``, default 10) and flushed every
    ``flush_millis`` (default 120,000), on ``flush()``, ``close()`` and at the end
    of ``as_default``.
    """
    if logdir is None:
        raise ValueError("logdir cannot be None")
    return SummaryWriter(os.fspath(logdir), max_queue, flush_millis, filename_suffix)


def create_noop_writer() -> SummaryWriter:
    """A writer that writes nothing (summaries under it return False)."""
    return SummaryWriter(None)


def flush(writer: SummaryWriter | None = None, name: str | None = None) -> None:
    """Flushes ``writer``, or the default writer."""
    from tapeflow import summary

    writer = writer if writer is not None else summary._state.writer
    if writer is not None:
        writer.flush()


def encode_png(image: np.ndarray) -> bytes:
    """PNG bytes of a uint8 ``[h, w, c]`` image (c = 1, 2, 3 or 4)."""
    h, w, c = image.shape
    color = {1: 0, 2: 4, 3: 2, 4: 6}[c]
    raw = b"".join(b"\x00" + image[y].tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def graph_def(graph_data: Any) -> Any:
    """A ``GraphDef`` proto of a traced function's graph (nodes: name, op, inputs, dtype)."""
    from tensorboard.compat.proto import graph_pb2

    g = getattr(graph_data, "graph", graph_data)
    if not hasattr(g, "get_operations"):
        raise TypeError(f"tf.summary.graph expects a tf.function graph or a concrete function, got "
                        f"{type(graph_data).__name__}")
    gd = graph_pb2.GraphDef()
    for op in g.get_operations():  # TF's nodes and names (x, mul/y, mul, Identity)
        gd.node.add(name=op.name, op=op.type, input=[g.input_name(op, i) for i in range(len(op.inputs))])
    return gd
