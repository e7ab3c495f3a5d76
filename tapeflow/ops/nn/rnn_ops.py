"""Fused recurrent sequences: the whole time loop of a Keras ``LSTM`` or ``GRU`` as one op, and its
backward pass through time as one op (what cuDNN's RNN kernels are to TF on a GPU).

``LSTMSequence(xp, h0, c0, recurrent_kernel[, mask])`` runs ``T`` steps of Keras' LSTM cell
(gates i, f, c, o; sigmoid and tanh) over the input projections ``xp = x @ kernel + bias``, time-major
``(T, B, 4U)``; ``GRUSequence(xp, h0, recurrent_kernel, recurrent_bias[, mask])`` runs Keras' GRU with
``reset_after=True`` (gates z, r, h); ``SimpleRNNSequence(xp, h0, recurrent_kernel[, mask])`` runs
``h = tanh(xp + h @ recurrent_kernel)``. A ``mask`` ``(T, B, 1)`` (bool) carries states and the previous
output over masked steps (``zero_output_for_mask`` makes those outputs zero), as Keras' RNN.

The outputs are the step outputs ``ys (T, B, U)``, the last output, the final states, then what the
backward op reads (gate activations, tanh of the cell, the states after each step). Per step the kernel
costs one ``(B, U) @ (U, G)`` matmul and the gate math in NumPy; the backward op accumulates the
recurrent kernel's gradient as one ``(U, T*B) @ (T*B, G)`` product after the loop.

The gradient of ``*SequenceGrad`` (second order) is registered with the Keras recurrent layers
(tapeflow.keras.layers.rnn): it differentiates :func:`lstm_sequence_composite` /
:func:`gru_sequence_composite` twice with tapes, which the op layer cannot import.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor
from tapeflow.ops import array_ops as ao
from tapeflow.ops import math_ops as mo
from tapeflow.ops.math_ops import _sigmoid_kernel as _sigmoid
from tapeflow.ops.math_ops import _tanh_kernel as _tanh
from tapeflow.ops.registry import defgrad, defop

__all__ = [
    "lstm_sequence", "gru_sequence", "simple_rnn_sequence", "lstm_sequence_composite", "gru_sequence_composite",
    "simple_rnn_sequence_composite", "static_loop",
]


def _mm(a, b, transpose_a=False, transpose_b=False):
    # the registered matmul kernel: tapeflow.ops.threads picks its BLAS threads or row blocks by size
    return mo.MATMUL.kernel(a, b, transpose_a, transpose_b)


def _time_major(specs: list, n_state: int, gates: int) -> tuple:
    (sx, dt) = specs[0]
    t = b = u = None
    if sx is not None:
        t, b = sx[0], sx[1]
        u = None if sx[2] is None else sx[2] // gates
    for s, _ in specs[1 : 1 + n_state]:
        if s is not None:
            b = s[0] if b is None else b
            u = s[1] if u is None else u
    return t, b, u, dt


# ----------------------------------------------------------------------------
# LSTM
# ----------------------------------------------------------------------------

def _lstm_kernel(xp, h0, c0, rk, *mask, zero_output_for_mask=False):
    steps, batch, g4 = xp.shape
    u = g4 // 4
    dt = xp.dtype
    gates = np.empty((steps, batch, g4), dt)
    tcs = np.empty((steps, batch, u), dt)
    ys = np.empty((steps, batch, u), dt)
    m_all = mask[0] if mask else None
    hs = np.empty((steps, batch, u), dt) if mask else ys
    cs = np.empty((steps, batch, u), dt)
    h, c = h0, c0
    out = np.zeros((batch, u), dt)
    for t in range(steps):
        z = _mm(h, rk)
        z += xp[t]  # xp + h @ rk, as the cell adds them
        a = gates[t]
        a[...] = _sigmoid(z)
        a[:, 2 * u : 3 * u] = _tanh(z[:, 2 * u : 3 * u])
        i, f, g, o = a[:, :u], a[:, u : 2 * u], a[:, 2 * u : 3 * u], a[:, 3 * u :]
        c_new = f * c + i * g
        tc = _tanh(c_new)
        tcs[t] = tc
        h_new = o * tc
        if m_all is None:
            h, c = h_new, c_new
            ys[t] = h
        else:
            m = m_all[t]
            out = np.where(m, h_new, 0 if zero_output_for_mask else out).astype(dt, copy=False)
            h = np.where(m, h_new, h)
            c = np.where(m, c_new, c)
            ys[t] = out
            hs[t] = h
        cs[t] = c
    last = ys[steps - 1].copy() if steps else np.zeros((batch, u), dt)
    return ys, last, np.array(h, dt, copy=True), np.array(c, dt, copy=True), gates, tcs, hs, cs


def _lstm_grad_kernel(xp, h0, c0, rk, *rest, zero_output_for_mask=False):
    mask = rest[0] if len(rest) == 9 else None
    gates, tcs, hs, cs, dys, dlast, dh, dc = rest[-8:]
    steps, batch, g4 = gates.shape
    u = g4 // 4
    dt = gates.dtype
    dz_all = np.empty((steps, batch, g4), dt)
    dh = np.array(dh, dt, copy=True)
    dc = np.array(dc, dt, copy=True)
    dprev = np.asarray(dlast, dt)  # the gradient reaching the last processed step's output
    for t in range(steps - 1, -1, -1):
        dout = dys[t] + dprev
        if mask is None:
            dh_new, dc_new = dout + dh, dc
            dh_keep = dc_keep = None
            dprev = np.zeros((), dt)
        else:
            m = mask[t]
            dh_new = np.where(m, dout + dh, 0).astype(dt, copy=False)
            dc_new = np.where(m, dc, 0).astype(dt, copy=False)
            dh_keep = np.where(m, 0, dh).astype(dt, copy=False)
            dc_keep = np.where(m, 0, dc).astype(dt, copy=False)
            dprev = np.zeros((), dt) if zero_output_for_mask else np.where(m, 0, dout).astype(dt, copy=False)
        a = gates[t]
        i, f, g, o = a[:, :u], a[:, u : 2 * u], a[:, 2 * u : 3 * u], a[:, 3 * u :]
        tc = tcs[t]
        c_prev = cs[t - 1] if t else c0
        dct = dc_new + dh_new * o * (1 - tc * tc)
        dz = dz_all[t]
        dz[:, :u] = dct * g * i * (1 - i)
        dz[:, u : 2 * u] = dct * c_prev * f * (1 - f)
        dz[:, 2 * u : 3 * u] = dct * i * (1 - g * g)
        dz[:, 3 * u :] = dh_new * tc * o * (1 - o)
        dh = _mm(dz, rk, False, True)
        dc = dct * f
        if dh_keep is not None:
            dh += dh_keep
            dc += dc_keep
    h_prev = np.concatenate([h0[None], hs[:-1]], axis=0) if steps else np.zeros((0, batch, u), dt)
    drk = _mm(h_prev.reshape(-1, u), dz_all.reshape(-1, g4), True, False)
    return dz_all, dh, dc, drk


def _lstm_shape(specs, zero_output_for_mask=False):
    t, b, u, dt = _time_major(specs, 2, 4)
    seq, step = (t, b, u), (b, u)
    return [(seq, dt), (step, dt), (step, dt), (step, dt), ((t, b, None if u is None else 4 * u), dt), (seq, dt),
            (seq, dt), (seq, dt)]


def _lstm_grad_shape(specs, zero_output_for_mask=False):
    (sx, dt), (sh, _), (sc, _), (sr, _) = specs[:4]
    return [(sx, dt), (sh, dt), (sc, dt), (sr, dt)]


LSTM_SEQUENCE = defop("LSTMSequence", _lstm_kernel, shape=_lstm_shape, num_outputs=8)
LSTM_SEQUENCE_GRAD = defop("LSTMSequenceGrad", _lstm_grad_kernel, shape=_lstm_grad_shape, num_outputs=4)


@defgrad("LSTMSequence", inputs=True, outputs=True)
def _lstm_sequence_grad(op, dys, dlast, dh, dc, *_internal):
    # the internal outputs (gates, tanh(c), states) feed only the backward op; their gradients are
    # taken into account through the primal inputs by LSTMSequenceGrad's own gradient
    xp, h0, c0, rk, *mask = op.inputs
    attrs = {"zero_output_for_mask": op.get_attr("zero_output_for_mask")}
    grads = execute(LSTM_SEQUENCE_GRAD, (xp, h0, c0, rk, *mask, *op.outputs[4:], dys, dlast, dh, dc), attrs)
    return (*grads, *(None for _ in mask))


def lstm_sequence(xp: Tensor, h0: Tensor, c0: Tensor, recurrent_kernel: Tensor, mask: Tensor | None = None,
                  zero_output_for_mask: bool = False) -> tuple:
    """Keras' LSTM over time-major input projections ``xp (T, B, 4U)``: ``(ys, last, h, c)``."""
    inputs = (xp, h0, c0, recurrent_kernel) + (() if mask is None else (mask,))
    out = execute(LSTM_SEQUENCE, inputs, {"zero_output_for_mask": bool(zero_output_for_mask)})
    return tuple(out[:4])


def lstm_step(xp_t: Tensor, h: Tensor, c: Tensor, rk: Tensor) -> list:
    """One LSTM step with core ops: the new ``[h, c]``."""
    z = xp_t + mo.matmul(h, rk)
    zi, zf, zc, zo = ao.split(z, 4, axis=-1)
    c_new = mo.sigmoid(zf) * c + mo.sigmoid(zi) * mo.tanh(zc)
    return [mo.sigmoid(zo) * mo.tanh(c_new), c_new]


def static_loop(step: Any, xp: Tensor, states: list, mask: Tensor | None, zero_output_for_mask: bool) -> tuple:
    """Runs ``step(xp[t], *states) -> new states`` (the output is the first state) over a static number
    of steps with core ops, masked as Keras' RNN: ``(ys, last, *states)``."""
    steps = xp._shape_tuple()[0]
    if steps is None:
        raise NotImplementedError(
            "a fused recurrent sequence's second-order gradient needs a static number of time steps outside "
            f"tf.function; got inputs of shape {xp._shape_tuple()}"
        )
    out = ao.zeros_like(states[0])
    ys = []
    for t in range(steps):
        new = step(xp[t], *states)
        if mask is None:
            out = new[0]
        else:
            m = mask[t]
            out = mo.where(m, new[0], ao.zeros_like(out) if zero_output_for_mask else out)
            new = [mo.where(m, a, b) for a, b in zip(new, states)]
        states = new
        ys.append(out)
    return (ao.stack(ys), out, *states)


def lstm_sequence_composite(xp: Tensor, h0: Tensor, c0: Tensor, rk: Tensor, mask: Tensor | None = None,
                            zero_output_for_mask: bool = False, loop: Any = static_loop) -> tuple:
    """:func:`lstm_sequence` written with core ops, one step at a time (``loop``: :func:`static_loop`, or
    one that builds a while loop): the reference of the fused kernels and where their second derivatives
    come from."""
    return loop(lambda x, h, c: lstm_step(x, h, c, rk), xp, [h0, c0], mask, zero_output_for_mask)


# ----------------------------------------------------------------------------
# GRU (reset_after=True)
# ----------------------------------------------------------------------------

def _gru_kernel(xp, h0, rk, rb, *mask, zero_output_for_mask=False):
    steps, batch, g3 = xp.shape
    u = g3 // 3
    dt = xp.dtype
    gates = np.empty((steps, batch, g3), dt)  # z, r, hh
    rhs = np.empty((steps, batch, u), dt)  # the recurrent part of the candidate, before the reset gate
    ys = np.empty((steps, batch, u), dt)
    m_all = mask[0] if mask else None
    hs = np.empty((steps, batch, u), dt) if mask else ys
    h = h0
    out = np.zeros((batch, u), dt)
    one = dt.type(1)
    for t in range(steps):
        inner = _mm(h, rk)
        inner += rb
        x = xp[t]
        a = gates[t]
        a[:, : 2 * u] = _sigmoid(x[:, : 2 * u] + inner[:, : 2 * u])
        z, r = a[:, :u], a[:, u : 2 * u]
        rh = inner[:, 2 * u :]
        rhs[t] = rh
        hh = _tanh(x[:, 2 * u :] + r * rh)
        a[:, 2 * u :] = hh
        h_new = z * h + (one - z) * hh
        if m_all is None:
            h = h_new
            ys[t] = h
        else:
            m = m_all[t]
            out = np.where(m, h_new, 0 if zero_output_for_mask else out).astype(dt, copy=False)
            h = np.where(m, h_new, h)
            ys[t] = out
            hs[t] = h
    last = ys[steps - 1].copy() if steps else np.zeros((batch, u), dt)
    return ys, last, np.array(h, dt, copy=True), gates, rhs, hs


def _gru_grad_kernel(xp, h0, rk, rb, *rest, zero_output_for_mask=False):
    mask = rest[0] if len(rest) == 7 else None
    gates, rhs, hs, dys, dlast, dh = rest[-6:]
    steps, batch, g3 = gates.shape
    u = g3 // 3
    dt = gates.dtype
    dx_all = np.empty((steps, batch, g3), dt)
    di_all = np.empty((steps, batch, g3), dt)  # gradients of h @ rk + rb
    dh = np.array(dh, dt, copy=True)
    dprev = np.asarray(dlast, dt)
    for t in range(steps - 1, -1, -1):
        dout = dys[t] + dprev
        h_prev = hs[t - 1] if t else h0
        if mask is None:
            dh_new = dout + dh
            dh_keep = None
            dprev = np.zeros((), dt)
        else:
            m = mask[t]
            dh_new = np.where(m, dout + dh, 0).astype(dt, copy=False)
            dh_keep = np.where(m, 0, dh).astype(dt, copy=False)
            dprev = np.zeros((), dt) if zero_output_for_mask else np.where(m, 0, dout).astype(dt, copy=False)
        a = gates[t]
        z, r, hh = a[:, :u], a[:, u : 2 * u], a[:, 2 * u :]
        rh = rhs[t]
        dhh = dh_new * (1 - z) * (1 - hh * hh)
        dx = dx_all[t]
        di = di_all[t]
        dx[:, :u] = dh_new * (h_prev - hh) * z * (1 - z)
        dx[:, u : 2 * u] = dhh * rh * r * (1 - r)
        dx[:, 2 * u :] = dhh
        di[:, : 2 * u] = dx[:, : 2 * u]
        di[:, 2 * u :] = dhh * r
        dh = _mm(di, rk, False, True)
        dh += dh_new * z
        if dh_keep is not None:
            dh += dh_keep
    h_prev = np.concatenate([h0[None], hs[:-1]], axis=0) if steps else np.zeros((0, batch, u), dt)
    flat = di_all.reshape(-1, g3)
    drk = _mm(h_prev.reshape(-1, u), flat, True, False)
    drb = flat.sum(axis=0)
    return dx_all, dh, drk, drb


def _gru_shape(specs, zero_output_for_mask=False):
    t, b, u, dt = _time_major(specs, 1, 3)
    seq, step = (t, b, u), (b, u)
    return [(seq, dt), (step, dt), (step, dt), ((t, b, None if u is None else 3 * u), dt), (seq, dt), (seq, dt)]


def _gru_grad_shape(specs, zero_output_for_mask=False):
    return [(s, specs[0][1]) for s, _ in specs[:4]]


GRU_SEQUENCE = defop("GRUSequence", _gru_kernel, shape=_gru_shape, num_outputs=6)
GRU_SEQUENCE_GRAD = defop("GRUSequenceGrad", _gru_grad_kernel, shape=_gru_grad_shape, num_outputs=4)


@defgrad("GRUSequence", inputs=True, outputs=True)
def _gru_sequence_grad(op, dys, dlast, dh, *_internal):
    xp, h0, rk, rb, *mask = op.inputs
    attrs = {"zero_output_for_mask": op.get_attr("zero_output_for_mask")}
    grads = execute(GRU_SEQUENCE_GRAD, (xp, h0, rk, rb, *mask, *op.outputs[3:], dys, dlast, dh), attrs)
    return (*grads, *(None for _ in mask))


def gru_sequence(xp: Tensor, h0: Tensor, recurrent_kernel: Tensor, recurrent_bias: Tensor,
                 mask: Tensor | None = None, zero_output_for_mask: bool = False) -> tuple:
    """Keras' GRU (``reset_after=True``) over time-major input projections ``xp (T, B, 3U)``:
    ``(ys, last, h)``."""
    inputs = (xp, h0, recurrent_kernel, recurrent_bias) + (() if mask is None else (mask,))
    out = execute(GRU_SEQUENCE, inputs, {"zero_output_for_mask": bool(zero_output_for_mask)})
    return tuple(out[:3])


def gru_step(xp_t: Tensor, h: Tensor, rk: Tensor, rb: Tensor) -> list:
    """One GRU step (``reset_after=True``) with core ops: the new ``[h]``."""
    x_z, x_r, x_h = ao.split(xp_t, 3, axis=-1)
    r_z, r_r, r_h = ao.split(mo.matmul(h, rk) + rb, 3, axis=-1)
    z, r = mo.sigmoid(x_z + r_z), mo.sigmoid(x_r + r_r)
    hh = mo.tanh(x_h + r * r_h)
    return [z * h + (1.0 - z) * hh]


def gru_sequence_composite(xp: Tensor, h0: Tensor, rk: Tensor, rb: Tensor, mask: Tensor | None = None,
                           zero_output_for_mask: bool = False, loop: Any = static_loop) -> tuple:
    """:func:`gru_sequence` written with core ops, one step at a time (see :func:`lstm_sequence_composite`)."""
    return loop(lambda x, h: gru_step(x, h, rk, rb), xp, [h0], mask, zero_output_for_mask)


# ----------------------------------------------------------------------------
# SimpleRNN (tanh)
# ----------------------------------------------------------------------------

def _simple_rnn_kernel(xp, h0, rk, *mask, zero_output_for_mask=False):
    steps, batch, u = xp.shape
    dt = xp.dtype
    ys = np.empty((steps, batch, u), dt)
    m_all = mask[0] if mask else None
    hn = np.empty((steps, batch, u), dt) if mask else ys  # tanh's outputs, before the mask
    hs = np.empty((steps, batch, u), dt) if mask else ys
    h = h0
    out = np.zeros((batch, u), dt)
    for t in range(steps):
        a = _mm(h, rk)
        a += xp[t]
        h_new = _tanh(a)
        if m_all is None:
            h = h_new
            ys[t] = h
        else:
            m = m_all[t]
            hn[t] = h_new
            out = np.where(m, h_new, 0 if zero_output_for_mask else out).astype(dt, copy=False)
            h = np.where(m, h_new, h)
            ys[t] = out
            hs[t] = h
    last = ys[steps - 1].copy() if steps else np.zeros((batch, u), dt)
    return ys, last, np.array(h, dt, copy=True), hn, hs


def _simple_rnn_grad_kernel(xp, h0, rk, *rest, zero_output_for_mask=False):
    mask = rest[0] if len(rest) == 6 else None
    hn, hs, dys, dlast, dh = rest[-5:]
    steps, batch, u = hn.shape
    dt = hn.dtype
    da_all = np.empty((steps, batch, u), dt)
    dh = np.array(dh, dt, copy=True)
    dprev = np.asarray(dlast, dt)
    for t in range(steps - 1, -1, -1):
        dout = dys[t] + dprev
        if mask is None:
            dh_new = dout + dh
            dh_keep = None
            dprev = np.zeros((), dt)
        else:
            m = mask[t]
            dh_new = np.where(m, dout + dh, 0).astype(dt, copy=False)
            dh_keep = np.where(m, 0, dh).astype(dt, copy=False)
            dprev = np.zeros((), dt) if zero_output_for_mask else np.where(m, 0, dout).astype(dt, copy=False)
        y = hn[t]
        da = da_all[t]
        np.multiply(dh_new, 1 - y * y, out=da)
        dh = _mm(da, rk, False, True)
        if dh_keep is not None:
            dh += dh_keep
    h_prev = np.concatenate([h0[None], hs[:-1]], axis=0) if steps else np.zeros((0, batch, u), dt)
    drk = _mm(h_prev.reshape(-1, u), da_all.reshape(-1, u), True, False)
    return da_all, dh, drk


def _simple_rnn_shape(specs, zero_output_for_mask=False):
    t, b, u, dt = _time_major(specs, 1, 1)
    seq, step = (t, b, u), (b, u)
    return [(seq, dt), (step, dt), (step, dt), (seq, dt), (seq, dt)]


def _simple_rnn_grad_shape(specs, zero_output_for_mask=False):
    return [(s, specs[0][1]) for s, _ in specs[:3]]


SIMPLE_RNN_SEQUENCE = defop("SimpleRNNSequence", _simple_rnn_kernel, shape=_simple_rnn_shape, num_outputs=5)
SIMPLE_RNN_SEQUENCE_GRAD = defop("SimpleRNNSequenceGrad", _simple_rnn_grad_kernel, shape=_simple_rnn_grad_shape,
                                 num_outputs=3)


@defgrad("SimpleRNNSequence", inputs=True, outputs=True)
def _simple_rnn_sequence_grad(op, dys, dlast, dh, *_internal):
    xp, h0, rk, *mask = op.inputs
    attrs = {"zero_output_for_mask": op.get_attr("zero_output_for_mask")}
    grads = execute(SIMPLE_RNN_SEQUENCE_GRAD, (xp, h0, rk, *mask, *op.outputs[3:], dys, dlast, dh), attrs)
    return (*grads, *(None for _ in mask))


def simple_rnn_sequence(xp: Tensor, h0: Tensor, recurrent_kernel: Tensor, mask: Tensor | None = None,
                        zero_output_for_mask: bool = False) -> tuple:
    """Keras' SimpleRNN (tanh) over time-major input projections ``xp (T, B, U)``: ``(ys, last, h)``."""
    inputs = (xp, h0, recurrent_kernel) + (() if mask is None else (mask,))
    out = execute(SIMPLE_RNN_SEQUENCE, inputs, {"zero_output_for_mask": bool(zero_output_for_mask)})
    return tuple(out[:3])


def simple_rnn_sequence_composite(xp: Tensor, h0: Tensor, rk: Tensor, mask: Tensor | None = None,
                                  zero_output_for_mask: bool = False, loop: Any = static_loop) -> tuple:
    """:func:`simple_rnn_sequence` written with core ops, one step at a time."""
    return loop(lambda x, h: [mo.tanh(x + mo.matmul(h, rk))], xp, [h0], mask, zero_output_for_mask)
