"""Specs for the fused recurrent sequences (tapeflow/ops/nn/rnn_ops.py): the sequence ops, and their
backward ops (whose gradients are the second derivatives of the sequences)."""

import numpy as np

import tapeflow as tf
from tapeflow.framework.execute import execute
from tapeflow.keras.layers import rnn as _rnn_layers  # noqa: F401 - registers the *SequenceGrad gradients
from tapeflow.ops.nn import rnn_ops
from tests.op_specs import Arg, OpSpec

T, B, U = 3, 2, 2
_MASK = np.array([[[True], [True]], [[False], [True]], [[True], [False]]])


def _lstm(xp, h0, c0, rk, mask=None, zero=False):
    return list(rnn_ops.lstm_sequence(xp, h0, c0, rk, None if mask is None else tf.constant(mask), zero))


def _lstm_grad(xp, h0, c0, rk, dys, dlast, dh, dc, mask=None, zero=False):
    m = () if mask is None else (tf.constant(mask),)
    out = execute(rnn_ops.LSTM_SEQUENCE, (xp, h0, c0, rk, *m), {"zero_output_for_mask": zero})
    return execute(rnn_ops.LSTM_SEQUENCE_GRAD, (xp, h0, c0, rk, *m, *out[4:], dys, dlast, dh, dc),
                   {"zero_output_for_mask": zero})


def _gru(xp, h0, rk, rb, mask=None, zero=False):
    return list(rnn_ops.gru_sequence(xp, h0, rk, rb, None if mask is None else tf.constant(mask), zero))


def _gru_grad(xp, h0, rk, rb, dys, dlast, dh, mask=None, zero=False):
    m = () if mask is None else (tf.constant(mask),)
    out = execute(rnn_ops.GRU_SEQUENCE, (xp, h0, rk, rb, *m), {"zero_output_for_mask": zero})
    return execute(rnn_ops.GRU_SEQUENCE_GRAD, (xp, h0, rk, rb, *m, *out[3:], dys, dlast, dh),
                   {"zero_output_for_mask": zero})


def _rnn(xp, h0, rk, mask=None, zero=False):
    return list(rnn_ops.simple_rnn_sequence(xp, h0, rk, None if mask is None else tf.constant(mask), zero))


def _rnn_grad(xp, h0, rk, dys, dlast, dh, mask=None, zero=False):
    m = () if mask is None else (tf.constant(mask),)
    out = execute(rnn_ops.SIMPLE_RNN_SEQUENCE, (xp, h0, rk, *m), {"zero_output_for_mask": zero})
    return execute(rnn_ops.SIMPLE_RNN_SEQUENCE_GRAD, (xp, h0, rk, *m, *out[3:], dys, dlast, dh),
                   {"zero_output_for_mask": zero})


_LSTM_IN = [Arg((T, B, 4 * U)), Arg((B, U)), Arg((B, U)), Arg((U, 4 * U), low=-1, high=1)]
_GRU_IN = [Arg((T, B, 3 * U)), Arg((B, U)), Arg((U, 3 * U), low=-1, high=1), Arg((3 * U,))]
_RNN_IN = [Arg((T, B, U)), Arg((B, U)), Arg((U, U), low=-1, high=1)]
_COT = [Arg((T, B, U)), Arg((B, U)), Arg((B, U))]

SPECS = [
    OpSpec("LSTMSequence", _lstm, _LSTM_IN),
    OpSpec("LSTMSequence", lambda *a: _lstm(*a, mask=_MASK), _LSTM_IN, name="masked"),
    OpSpec("LSTMSequence", lambda *a: _lstm(*a, mask=_MASK, zero=True), _LSTM_IN, name="masked-zero-output"),
    OpSpec("LSTMSequenceGrad", _lstm_grad, _LSTM_IN + _COT + [Arg((B, U))]),
    OpSpec("LSTMSequenceGrad", lambda *a: _lstm_grad(*a, mask=_MASK), _LSTM_IN + _COT + [Arg((B, U))],
           name="masked"),
    OpSpec("GRUSequence", _gru, _GRU_IN),
    OpSpec("GRUSequence", lambda *a: _gru(*a, mask=_MASK), _GRU_IN, name="masked"),
    OpSpec("GRUSequence", lambda *a: _gru(*a, mask=_MASK, zero=True), _GRU_IN, name="masked-zero-output"),
    OpSpec("GRUSequenceGrad", _gru_grad, _GRU_IN + _COT),
    OpSpec("GRUSequenceGrad", lambda *a: _gru_grad(*a, mask=_MASK), _GRU_IN + _COT, name="masked"),
    OpSpec("SimpleRNNSequence", _rnn, _RNN_IN),
    OpSpec("SimpleRNNSequence", lambda *a: _rnn(*a, mask=_MASK), _RNN_IN, name="masked"),
    OpSpec("SimpleRNNSequence", lambda *a: _rnn(*a, mask=_MASK, zero=True), _RNN_IN, name="masked-zero-output"),
    OpSpec("SimpleRNNSequenceGrad", _rnn_grad, _RNN_IN + _COT),
    OpSpec("SimpleRNNSequenceGrad", lambda *a: _rnn_grad(*a, mask=_MASK), _RNN_IN + _COT, name="masked"),
]
