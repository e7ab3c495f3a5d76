"""The single entry point every op goes through: ``execute(op, inputs, attrs)``.

Eager: run the NumPy kernel now, wrap the result, and let active tapes and
forward accumulators record it. Graph (inside ``tf.function`` tracing): hand
the op to the graph being built. The eager path with nothing recording is a
kernel call and one Tensor construction; everything else is behind one flag.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import errors
from tapeflow.framework.context import state
from tapeflow.framework.tensor import Tensor, _wrap

# Set by tapeflow.eager.backprop (the layer above) to record ops on tapes.
record_hook = None


_KERNEL_ERRORS = (ValueError, IndexError, TypeError, np.linalg.LinAlgError, ZeroDivisionError, OverflowError)


def execute(op, inputs: tuple, attrs: dict | None = None):
    """Runs ``op`` on ``inputs`` (Tensors) with ``attrs``; returns its output
    Tensor, or a list of Tensors for multi-output ops."""
    st = state
    plain = st.plain
    if not plain and st._graph is not None:
        return st._graph.add_op(op, inputs, attrs or {})
    try:
        if attrs:
            out = op.kernel(*[t._value for t in inputs], **attrs)
        else:
            out = op.kernel(*[t._value for t in inputs])
    except errors.OpError:
        raise
    except _KERNEL_ERRORS as e:
        raise kernel_error(op, inputs, attrs, e) from None
    # (Not plain and no graph: something records.)
    if op.num_outputs == 1:
        result = Tensor(out)
        if not plain:
            lane = st.lane
            if lane is not None and _lane_takes(lane, op, inputs, attrs, result):
                return result
            record_hook(op, inputs, attrs, (result,))
        return result
    outputs = tuple(_wrap(o) for o in out)
    if not plain:
        record_hook(op, inputs, attrs, outputs)
    return list(outputs)


def _lane_takes(lane, op, inputs: tuple, attrs, result) -> bool:
    """Hands a one-output op to the lazily following tape(s) of ``state.lane`` (what ``record_operation``
    does for them); False when they do not take it (it is then recorded as usual)."""
    ops = lane.lazy
    n = len(inputs)
    if not ops or op not in ops or not 0 < n <= 2:
        return False
    if attrs and result._value.dtype.kind not in "fc":
        return True  # (not recorded: no float output)
    a = inputs[0]._id
    b = inputs[1]._id if n == 2 else None
    peers = lane.peers
    entry = None
    for tp in (lane,) if peers is None else peers:
        w = tp.watched
        if a in w or b in w:
            if entry is None:
                oid = result._id
                entry = (op, inputs, result, attrs, (a, oid) if n == 1 else (a, b, oid))
            w.add(oid)
            tp.light.append(entry)
    return True


def execute1(op, x):
    """``execute`` for a one-input, one-output op without attrs (hot path)."""
    st = state
    if st.plain:
        try:
            return Tensor(op.kernel(x._value))
        except errors.OpError:
            raise
        except _KERNEL_ERRORS as e:
            raise kernel_error(op, (x,), None, e) from None
    lane = st.lane
    if lane is not None or st._graph is None:  # (eager, and recording)
        try:
            result = Tensor(op.kernel(x._value))
        except errors.OpError:
            raise
        except _KERNEL_ERRORS as e:
            raise kernel_error(op, (x,), None, e) from None
        if lane is not None:
            ops = lane.lazy
            if ops and op in ops:
                a = x._id
                peers = lane.peers
                if peers is None:
                    w = lane.watched
                    if a in w:
                        oid = result._id
                        w.add(oid)
                        lane.light.append((op, (x,), result, None, (a, oid)))
                    return result
                entry = None
                for tp in peers:  # (nested tapes, each following lazily: one entry for all that watch the input)
                    w = tp.watched
                    if a in w:
                        if entry is None:
                            oid = result._id
                            entry = (op, (x,), result, None, (a, oid))
                        w.add(oid)
                        tp.light.append(entry)
                return result
        record_hook(op, (x,), None, (result,))
        return result
    return execute(op, (x,))


def execute2(op, x, y):
    """``execute`` for a two-input, one-output op without attrs (hot path)."""
    st = state
    if st.plain:
        try:
            return Tensor(op.kernel(x._value, y._value))
        except errors.OpError:
            raise
        except _KERNEL_ERRORS as e:
            raise kernel_error(op, (x, y), None, e) from None
    lane = st.lane
    if lane is not None or st._graph is None:  # (eager, and recording)
        try:
            result = Tensor(op.kernel(x._value, y._value))
        except errors.OpError:
            raise
        except _KERNEL_ERRORS as e:
            raise kernel_error(op, (x, y), None, e) from None
        if lane is not None:
            ops = lane.lazy
            if ops and op in ops:
                a = x._id
                b = y._id
                peers = lane.peers
                if peers is None:
                    w = lane.watched
                    if a in w or b in w:
                        oid = result._id
                        w.add(oid)
                        lane.light.append((op, (x, y), result, None, (a, b, oid)))
                    return result
                entry = None
                for tp in peers:
                    w = tp.watched
                    if a in w or b in w:
                        if entry is None:
                            oid = result._id
                            entry = (op, (x, y), result, None, (a, b, oid))
                        w.add(oid)
                        tp.light.append(entry)
                return result
        record_hook(op, (x, y), None, (result,))
        return result
    return execute(op, (x, y))


def describe(t: Any) -> str:
    """``float32[2,3]``: how messages name a tensor."""
    try:
        shape = t._shape_tuple()
        dims = ",".join("?" if d is None else str(d) for d in shape)
        return f"{t.dtype.name}[{dims}]"
    except Exception:  # noqa: BLE001 - only for messages
        return type(t).__name__


def kernel_error(op, inputs, attrs, exc: Exception) -> errors.InvalidArgumentError:
    """Turns a NumPy failure inside a kernel into TF's error naming the op."""
    if "could not be broadcast" in str(exc) and len(inputs) >= 2:
        shapes = " vs. ".join("[" + ",".join(str(d) for d in t._shape_tuple()) + "]" for t in inputs)
        return errors.InvalidArgumentError(
            None, None, f"Incompatible shapes: {shapes} [Op:{op.name}]. Broadcasting needs each pair of trailing "
            "dimensions to be equal or 1; reshape or tf.expand_dims one input so they line up."
        )
    ins = ", ".join(describe(t) for t in inputs)
    attr_text = ""
    if attrs:
        attr_text = " with " + ", ".join(f"{k}={v!r}" for k, v in sorted(attrs.items()))
    return errors.InvalidArgumentError(
        None, None, f"{op.name} failed on inputs ({ins}){attr_text}: {exc} [Op:{op.name}]"
    )
