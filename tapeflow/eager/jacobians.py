"""``GradientTape.jacobian`` and ``GradientTape.batch_jacobian``.

The default (``experimental_use_pfor=True``) path is vectorized: the tape is
walked backwards *once*, with the stack of all one-hot cotangents of the
target as the output gradient. The stack travels through every gradient rule
as a :class:`~tapeflow.eager.batching.BatchedTensor` (leading batch axis,
per-op batching rules in ``batching.py``). ``experimental_use_pfor=False``
runs one backward pass per target element, as TF's ``while_loop`` path does,
and needs a persistent tape.
"""

from __future__ import annotations

import logging
import math
import warnings
from typing import Any

import numpy as np

from tapeflow.eager import backprop, batching
from tapeflow.eager import tape as tape_lib
from tapeflow.eager.backprop import (
    UnconnectedGradients, _gradient, _source_id, _unconnected, aggregate, op_gradients,
)
from tapeflow.framework import nest
from tapeflow.framework.context import state
from tapeflow.framework.indexed_slices import IndexedSlices
from tapeflow.framework import variables as variables_mod
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import array_ops

__all__ = ["jacobian", "batch_jacobian"]

_log = logging.getLogger("tapeflow")

_NON_PERSISTENT = (
    "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians). "
    "Create the tape with persistent=True to call gradient()/jacobian() more than once."
)
_LOOP_NEEDS_PERSISTENT = (
    "GradientTape must be created with persistent=True to compute the jacobian with eager execution "
    "enabled and with  experimental_use_pfor set to False."
)


def _target_tensor(target: Any) -> Tensor:
    if type(target) is Tensor:
        return target
    if isinstance(target, variables_mod.Variable):
        return target._snapshot()
    if isinstance(target, (Tensor, IndexedSlices)):
        return convert_to_tensor(target)
    raise TypeError(
        f"jacobian() target must be a single tf.Tensor (got {type(target).__name__}); stack or concat several "
        "targets into one tensor first."
    )


def _begin(gt) -> Any:
    """Checks the tape is usable and stops a non-persistent one recording."""
    if gt._tape is None:
        raise RuntimeError(_NON_PERSISTENT)
    if gt._recording and not gt._persistent:
        gt._pop_tape()
    return gt._tape


def _end(gt) -> None:
    if not gt._persistent:
        if gt._tape is not None:
            gt._tape.records = []  # a non-persistent tape frees its records now
        gt._tape = None
        gt._used = True


def _vectorized_grads(tp, tid: int, cot_phys: Tensor | None, flat_sources: list, release: bool,
                      diag: Tensor | None = None) -> list:
    """One backward pass with a batch of cotangents ``cot_phys`` (batch axis
    first) for tensor id ``tid``. Returns, per source, the batched gradient's
    physical tensor (batch axis first), or None if unconnected."""
    size = cot_phys._shape_tuple()[0] if diag is None else math.prod(diag._shape_tuple())
    source_ids = [_source_id(s) for s in flat_sources]
    watched = tp.watched
    sid_set = {sid for sid in source_ids if sid in watched}
    found = _replayed(tp, tid, cot_phys, diag, size, sid_set)
    if found is not None:
        if release:
            tp.records = []
        return [found.get(sid) for sid in source_ids]
    with batching.BatchInterpreter(size) as interp:
        cot = interp.wrap(cot_phys) if diag is None else interp.diagonal(diag)
        found = tape_lib.backward(tp.records, {tid: [cot]}, sid_set, op_gradients, aggregate, release)
        out = []
        for sid in source_ids:
            g = found.get(sid)
            if g is None and sid == tid and sid in watched:
                g = cot
            if isinstance(g, IndexedSlices):
                g = convert_to_tensor(g)
            out.append(g)
    if release:
        tp.records = []
    result = []
    for g in out:
        if g is None:
            result.append(None)
        elif type(g) is batching.BatchedTensor and g._interp is interp:
            result.append(g._phys)
        else:
            # A gradient that does not depend on the cotangent (e.g. a
            # constant rule): the same for every row.
            shape = tuple(g._shape_tuple())
            result.append(array_ops.broadcast_to(batching._reshape(g, (1,) + shape), (size,) + shape))
    return result


def _replayed(tp, tid: int, cot_phys, diag, size: int, sid_set: set) -> dict | None:
    """The batched gradients by the compiled replay of this structure's
    vectorized walk (graph/tape_replay.py), or None: walk it here."""
    rp = backprop.replay
    st = state
    if rp is None or not rp.enabled or st._graph is not None or st.accumulators or st._debug_hook is not None \
            or backprop.debug_op_gradients is not None:
        return None
    return rp.jacobian(tp, tid, cot_phys if diag is None else diag, diag is not None, size, sid_set, st.plain)


def jacobian(gt, target, sources, unconnected_gradients=UnconnectedGradients.NONE, parallel_iterations=None,
             experimental_use_pfor: bool = True) -> Any:
    """The Jacobian of ``target`` w.r.t. each of ``sources``: for a source of
    shape S, a tensor of shape ``target.shape + S`` (None if unconnected,
    zeros with ``unconnected_gradients=ZERO``), in the structure of
    ``sources``."""
    unconnected = _unconnected(unconnected_gradients)
    if not experimental_use_pfor and not gt._persistent:
        raise RuntimeError(_LOOP_NEEDS_PERSISTENT)
    tp = _begin(gt)
    try:
        y = _target_tensor(target)
        flat_sources = nest.flatten(sources)
        tshape = tuple(y._shape_tuple())
        n = math.prod(tshape)
        if y._value.dtype.kind not in "fc":
            grads = [None] * len(flat_sources)
        elif experimental_use_pfor:
            # The one-hot cotangents, kept symbolic (diagonal) as long as possible.
            ones = Tensor(np.ones(tshape, dtype=y._value.dtype))
            grads = _vectorized_or_loop(
                lambda: _vectorized_grads(tp, y._id, None, flat_sources, release=False, diag=ones),
                lambda: _loop_grads(gt, y, n, tshape, flat_sources))
        else:
            grads = _loop_grads(gt, y, n, tshape, flat_sources)
        out = []
        for s, g in zip(flat_sources, grads):
            sshape = tuple(s._shape_tuple())
            if g is None:
                if unconnected is UnconnectedGradients.ZERO:
                    g = array_ops.zeros(tshape + sshape, dtype=s.dtype)
            elif tuple(g._shape_tuple()) != tshape + sshape:
                g = batching._reshape(g, tshape + sshape)
            out.append(g)
    finally:
        _end(gt)
    return nest.pack_sequence_as(sources, out)


def _loop_grads(gt, y: Tensor, n: int, tshape: tuple, flat_sources: list) -> list:
    """One backward pass per target element (``experimental_use_pfor=False``)."""
    rows = []
    eye = np.eye(n, dtype=y._value.dtype)
    for i in range(n):
        og = Tensor(eye[i].reshape(tshape))
        rows.append(_gradient(gt._tape, y, flat_sources, og, UnconnectedGradients.NONE, release=False))
    out = []
    for k, s in enumerate(flat_sources):
        col = [r[k] for r in rows]
        if n == 0 or all(c is None for c in col):
            out.append(None if n else _empty_rows(s))
            continue
        col = [array_ops.zeros_like(s) if c is None else convert_to_tensor(c) for c in col]
        out.append(array_ops.stack(col, axis=0))
    return out


def _batch_loop(gt, y: Tensor, source, m: int, batch: int, tshape: tuple):
    rows = []
    eye = np.eye(m, dtype=y._value.dtype)
    for j in range(m):
        og = Tensor(np.ascontiguousarray(np.broadcast_to(eye[j], (batch, m))).reshape(tshape))
        rows.append(_gradient(gt._tape, y, source, og, UnconnectedGradients.NONE, release=False))
    if all(r is None for r in rows):
        return None
    return array_ops.stack([array_ops.zeros_like(source) if r is None else convert_to_tensor(r) for r in rows],
                           axis=1)


_fallback_warned: set[str] = set()


def _vectorized_or_loop(vectorized, loop):
    """The vectorized result; if some gradient rule cannot run batched (e.g.
    it builds a control-flow graph), says so once and runs the loop."""
    try:
        return vectorized()
    except Exception as e:  # noqa: BLE001 - any failure is re-raised by the loop if it is real
        key = f"{type(e).__name__}: {e}"[:300]
        if key not in _fallback_warned:
            _fallback_warned.add(key)
            msg = (f"The vectorized jacobian failed ({key}); computing it with one backward pass per "
                   "row instead. Pass experimental_use_pfor=False to choose that path explicitly.")
            _log.warning(msg)
            warnings.warn(msg, RuntimeWarning, stacklevel=4)
        return loop()


def _empty_rows(s) -> Tensor:
    return array_ops.zeros((0,) + tuple(s._shape_tuple()), dtype=s.dtype)


def batch_jacobian(gt, target, source, unconnected_gradients=UnconnectedGradients.NONE, parallel_iterations=None,
                   experimental_use_pfor: bool = True) -> Tensor:
    """Per-example Jacobians: ``target[i]`` w.r.t. ``source[i]``, assuming
    example ``i`` of the target depends only on example ``i`` of the source.
    The result has shape ``target.shape + source.shape[1:]`` (zeros, never
    None, for an unconnected source, as TF)."""
    _unconnected(unconnected_gradients)
    if not experimental_use_pfor and not gt._persistent:
        raise RuntimeError(_LOOP_NEEDS_PERSISTENT)
    y = _target_tensor(target)
    tshape = tuple(y._shape_tuple())
    sshape = tuple(source._shape_tuple()) if isinstance(source, Tensor) else tuple(source.shape.as_list())
    for shp in (tshape, sshape):
        if len(shp) < 2:
            raise ValueError(f"Shape {shp} must have rank at least 2")
    if tshape[0] != sshape[0] and None not in (tshape[0], sshape[0]):
        raise ValueError(
            f"Need first dimension of target shape ({tshape}) and source shape ({sshape}) to match."
        )
    tp = _begin(gt)
    try:
        batch = tshape[0]
        m = int(np.prod(tshape[1:], dtype=np.int64))
        result_shape = (batch,) + tshape[1:] + sshape[1:]
        if y._value.dtype.kind not in "fc" or batch == 0 or m == 0:
            g = None
        elif experimental_use_pfor:
            # Cotangent j is one-hot at element j of *every* example's row.
            eye = np.eye(m, dtype=y._value.dtype).reshape((m, 1, m))
            cot = Tensor(np.ascontiguousarray(np.broadcast_to(eye, (m, batch, m))).reshape((m,) + tshape))

            def vectorized():
                g = _vectorized_grads(tp, y._id, cot, [source], release=False)[0]
                if g is not None:
                    # (m, batch, *S1) -> (batch, m, *S1)
                    nd = len(g._shape_tuple())
                    g = array_ops.transpose(g, (1, 0) + tuple(range(2, nd)))
                return g

            g = _vectorized_or_loop(vectorized, lambda: _batch_loop(gt, y, source, m, batch, tshape))
        else:
            g = _batch_loop(gt, y, source, m, batch, tshape)
        if g is None:
            return array_ops.zeros(result_shape, dtype=y.dtype)
        return batching._reshape(g, result_shape)
    finally:
        _end(gt)
