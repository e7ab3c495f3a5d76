"""Connectionist temporal classification (``tf.nn.ctc_loss``, ``ctc_greedy_decoder``, ``ctc_beam_search_decoder``,
``collapse_repeated``, ``ctc_unique_labels``).

Two loss ops, as TF computes them on a CPU:

- ``CTCLossDense`` (dense labels, blank 0): TF builds this one from small ops (``ctc_loss_dense``); here it is one
  kernel running the same steps in float32: the log transition matrix between the 2 (L + 1) label/blank states,
  the forward and backward scans normalised at each step, TF's finite log 0 (``log(1e-307)``) for unreachable final
  states (so an infeasible alignment gives a large finite loss, as in TF), and the gradient ``softmax - posterior``.
  Its gradient rule is TF's custom gradient: ``loss_grad * gradient`` (the saved second output).
- ``CTCLoss`` (sparse labels, blank = the last class): TF's fused kernel, with its ``preprocess_collapse_repeated``,
  ``ctc_merge_repeated`` and ``ignore_longer_outputs_than_inputs``; computed in float64 and rounded. Its gradient
  is TF's: the saved gradient output behind ``PreventGradient`` (a second derivative is TF's ``LookupError``).

The decoders are TF's CPU kernels (``CTCGreedyDecoder``; ``CTCBeamSearchDecoder`` after util/ctc/
ctc_beam_search.h with the default scorer), not differentiable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tapeflow.framework import dtypes
from tapeflow.framework.errors import FailedPreconditionError, InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.sparse_tensor import SparseTensor
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops.registry import NotDifferentiable, defgrad, defop

__all__ = ["ctc_loss", "ctc_greedy_decoder", "ctc_beam_search_decoder", "collapse_repeated", "ctc_unique_labels"]

_F = np.float32


def _err(op: str, message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"{message} [Op:{op}]")


def _logsumexp(x: np.ndarray, axis: int, keepdims: bool = False) -> np.ndarray:
    """TF's ``reduce_logsumexp`` in float32: the max (0 when not finite) taken out before the sum."""
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, _F(0)).astype(x.dtype)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True, dtype=x.dtype)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def _log_softmax(x: np.ndarray) -> np.ndarray:
    shifted = x - np.max(x, axis=-1, keepdims=True)
    return (shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True, dtype=x.dtype))).astype(x.dtype)


# --- CTCLossDense: TF's ctc_loss_dense, step by step ------------------------------------------------------------

def _state_transitions(labels: np.ndarray) -> np.ndarray:
    """TF's ``_ctc_state_trans``: [batch, to, from] over the states (0 start, 1..L labels, L+1..2L+1 blanks)."""
    batch, max_len = labels.shape
    n_label = max_len + 1
    n = 2 * n_label
    trans = np.eye(n, dtype=_F)
    trans[1, 0] += 1
    for k in range(1, n_label):
        trans[k, n_label + k - 1] += 1  # blank k-1 -> label k
    for k in range(n_label):
        trans[n_label + k, k] += 1  # label k -> blank k
    out = np.repeat(trans[None], batch, axis=0)
    for k in range(2, n_label):  # label k-1 -> label k, unless they repeat
        out[:, k, k - 1] += _F(1) - (labels[:, k - 2] == labels[:, k - 1]).astype(_F)
    return out


def _ctc_dense_kernel(logits, labels, label_length, logit_length):
    op = "CTCLossDense"
    if logits.ndim != 3:
        raise _err(op, f"logits must be 3-D [time, batch, classes], got shape {list(logits.shape)}")
    if labels.ndim != 2 or labels.shape[0] != logits.shape[1]:
        raise _err(op, f"labels must be [batch, max_label_length] with the logits' batch {logits.shape[1]}, got "
                   f"shape {list(labels.shape)}")
    steps, batch, classes = logits.shape
    max_len = labels.shape[1]
    n_label = max_len + 1
    n = 2 * n_label
    log_0 = _F(np.log(1e-307))
    x = logits.astype(_F)
    ilabel = _log_softmax(x)
    with np.errstate(divide="ignore"):
        neg_inf = _F(np.log(_F(0)))
        one_hot = np.eye(classes, dtype=_F)[np.clip(labels, 0, classes - 1)] * \
            ((labels >= 0) & (labels < classes))[..., None]  # (one_hot of an index out of range is all zeros)
        picked = np.sum(ilabel[:, :, None, :] * one_hot[None], axis=3, dtype=_F)
        blank = np.repeat(ilabel[:, :, :1], n_label, axis=2)
        observed = np.concatenate([np.full((steps, batch, 1), neg_inf, _F), picked, blank], axis=2)
        trans = np.log(_state_transitions(labels))
    back = np.transpose(trans, (0, 2, 1))
    initial = np.full((batch, n), log_0, _F)
    initial[:, 0] = 0
    final_mask = np.zeros((batch, n), _F)
    rows = np.arange(batch)
    ll = np.asarray(label_length).astype(np.int64)
    ok = (ll >= 0) & (ll < n_label)  # (TF's one_hot of an out-of-range length is all zeros)
    final_mask[rows[ok], ll[ok]] = 1
    final_mask[rows[ok], n_label + ll[ok]] = 1
    final = (_F(1) - final_mask) * log_0
    mask = (np.arange(steps)[:, None] < np.asarray(logit_length).reshape(1, -1)).astype(_F)  # [time, batch]

    fwd = [initial]
    state = initial
    for t in range(steps):
        s = _logsumexp(state[:, None, :] + trans, axis=-1) + observed[t]
        state = s - _logsumexp(s, axis=-1, keepdims=True)
        fwd.append(state)
    bwd = [None] * (steps + 1)
    bwd[steps] = final
    state, total = final, np.zeros((batch,), _F)
    for t in range(steps - 1, -1, -1):
        s = _logsumexp((state + observed[t])[:, None, :] + back, axis=-1)
        norm = _logsumexp(s, axis=-1, keepdims=True)
        s = s - norm
        total = total + norm[:, 0] * mask[t]
        state = s * mask[t][:, None] + final * (_F(1) - mask[t][:, None])
        bwd[t] = state
    loss = -(bwd[0][:, 0] + total)

    fb = np.stack(fwd[1:]) + np.stack(bwd[1:])  # [time, batch, states]
    fb = fb - _logsumexp(fb, axis=2, keepdims=True)
    with np.errstate(divide="ignore"):
        fb = fb + np.log(mask)[:, :, None]
        label_on = np.where(np.eye(classes - 1, dtype=bool)[np.clip(labels - 1, 0, classes - 2)] &
                            ((labels >= 1) & (labels < classes))[..., None], _F(0), neg_inf).astype(_F)
    label_states = fb[:, :, 1:n_label]
    olabel = _logsumexp(label_states[..., None] + label_on[None], axis=2)
    oblank = _logsumexp(fb[:, :, n_label:], axis=2, keepdims=True)
    posterior = np.concatenate([oblank, olabel], axis=-1)
    grad = (np.exp(ilabel) - np.exp(posterior)) * mask[:, :, None]
    return loss.astype(_F), grad.astype(_F)


def _ctc_dense_shape(specs):
    logits = specs[0][0]
    b = None if logits is None else logits[1]
    return [((b,), np.dtype(_F)), (logits, np.dtype(_F))]


# tapeflow's op for TF's ctc_loss_dense (which TF builds from small ops under a custom gradient)
CTC_LOSS_DENSE = defop("CTCLossDense", _ctc_dense_kernel, shape=_ctc_dense_shape, num_outputs=2)


@defgrad("CTCLossDense", inputs=False, outputs=True)
def _ctc_dense_grad(op, grad_loss, _):
    from tapeflow.ops import array_ops as ao

    return [ao.reshape(grad_loss, [1, -1, 1]) * op.outputs[1], None, None, None]


# --- CTCLoss: TF's fused kernel (sparse labels, blank last) -----------------------------------------------------

def _ctc_sequence(log_y: np.ndarray, target: list, blank: int, merge: bool) -> tuple[float, np.ndarray]:
    """Negative log likelihood of ``target`` under ``log_y`` [time, classes] (float64) and its gradient with
    respect to the logits: ``softmax - posterior``. Without ``merge``, a label may not extend over steps."""
    steps, classes = log_y.shape
    ext = [blank]
    for c in target:
        ext += [c, blank]
    s = len(ext)
    ninf = -np.inf
    alpha = np.full((steps, s), ninf)
    beta = np.full((steps, s), ninf)
    alpha[0, 0] = log_y[0, blank]
    if s > 1:
        alpha[0, 1] = log_y[0, ext[1]]
    for t in range(1, steps):
        for u in range(s):
            terms = [alpha[t - 1, u]] if (merge or ext[u] == blank) else []
            if u >= 1:
                terms.append(alpha[t - 1, u - 1])
            if u >= 2 and ext[u] != blank and ext[u] != ext[u - 2]:
                terms.append(alpha[t - 1, u - 2])
            alpha[t, u] = np.logaddexp.reduce(terms) + log_y[t, ext[u]] if terms else ninf
    beta[steps - 1, s - 1] = log_y[steps - 1, blank]
    if s > 1:
        beta[steps - 1, s - 2] = log_y[steps - 1, ext[s - 2]]
    for t in range(steps - 2, -1, -1):
        for u in range(s):
            terms = [beta[t + 1, u]] if (merge or ext[u] == blank) else []
            if u + 1 < s:
                terms.append(beta[t + 1, u + 1])
            if u + 2 < s and ext[u] != blank and ext[u] != ext[u + 2]:
                terms.append(beta[t + 1, u + 2])
            beta[t, u] = np.logaddexp.reduce(terms) + log_y[t, ext[u]] if terms else ninf
    ends = [alpha[steps - 1, s - 1]] + ([alpha[steps - 1, s - 2]] if s > 1 else [])
    log_p = np.logaddexp.reduce(ends)
    ab = alpha + beta  # counts y at each step twice
    post = np.full((steps, classes), ninf)
    for u, c in enumerate(ext):
        post[:, c] = np.logaddexp(post[:, c], ab[:, u])
    with np.errstate(invalid="ignore"):
        grad = np.exp(log_y) - np.exp(post - log_y - log_p)
    return -log_p, grad


def _ctc_loss_kernel(inputs, labels_indices, labels_values, sequence_length, preprocess_collapse_repeated=False,
                     ctc_merge_repeated=True, ignore_longer_outputs_than_inputs=False):
    op = "CTCLoss"
    if inputs.ndim != 3:
        raise _err(op, "inputs is not a 3-Tensor")
    steps, batch, classes = inputs.shape
    seq = np.asarray(sequence_length).reshape(-1)
    if seq.shape[0] != batch:
        raise _err(op, f"len(sequence_length) != batch_size.  len(sequence_length):  {seq.shape[0]} batch_size: "
                   f"{batch}")
    if labels_indices.ndim != 2 or labels_indices.shape[0] != labels_values.shape[0]:
        raise _err(op, "labels_indices and labels_values must contain the same number of rows, but saw shapes: "
                   f"{list(labels_indices.shape)} vs. {list(labels_values.shape)}")
    if np.any(seq > steps):
        b = int(np.argmax(seq > steps))
        raise _err(op, f"sequence_length({b}) <= {steps}")
    targets: list = [[] for _ in range(batch)]
    for (b, _), v in zip(labels_indices.tolist(), labels_values.tolist()):
        if not 0 <= b < batch:
            raise _err(op, f"labels batch index must be between 0 and {batch - 1} but saw: {b}")
        targets[b].append(int(v))
    blank = classes - 1
    log_y_all = _log_softmax(inputs.astype(np.float64))
    loss = np.zeros((batch,), np.float64)
    grad = np.zeros(inputs.shape, np.float64)
    for b in range(batch):
        target = targets[b]
        if preprocess_collapse_repeated:
            target = [v for k, v in enumerate(target) if k == 0 or v != target[k - 1]]
        if any(not 0 <= v < classes for v in target):
            raise _err(op, f"Labels must be in the range [0, {classes}) (num_classes), saw {target} in batch {b}")
        required = len(target)  # (as TF's check: repeats that need a blank between them give an infinite loss)
        t_b = int(seq[b])
        if required > t_b:
            if ignore_longer_outputs_than_inputs:
                continue
            raise _err(op, f"Not enough time for target transition sequence (required: {required}, available: "
                       f"{t_b}){b}You can turn this error into a warning by using the flag "
                       "ignore_longer_outputs_than_inputs")
        if t_b == 0:
            continue
        loss[b], g = _ctc_sequence(log_y_all[:t_b, b], target, blank, ctc_merge_repeated)
        grad[:t_b, b] = g
    return loss.astype(inputs.dtype), grad.astype(inputs.dtype)


def _ctc_loss_shape(specs, **attrs):
    s, dt = specs[0]
    return [((None if s is None else s[1],), dt), (s, dt)]


CTC_LOSS = defop("CTCLoss", _ctc_loss_kernel, shape=_ctc_loss_shape, num_outputs=2)

_NO_SECOND = ("Currently there is no way to take the second  derivative of ctc_loss due to the fused "
              "implementation's interaction  with tf.gradients()")


def _prevented(x: Tensor) -> Tensor:
    """TF's ``prevent_gradient``: ``x``, whose gradient raises TF's LookupError."""
    return execute(PREVENT_GRADIENT, (x,), {"message": _NO_SECOND})


def _prevent_kernel(x, message=""):
    return x


PREVENT_GRADIENT = defop("PreventGradient", _prevent_kernel, shape=lambda specs, message="": [specs[0]])


@defgrad("PreventGradient", inputs=False)
def _prevent_gradient_grad(op, grad):
    raise LookupError(f'Gradient explicitly disabled. Reason: b"{op.get_attr("message")}"')


_prevent_gradient_grad.no_gradient_registered = True  # (the registry's mark: differentiating through it raises)


@defgrad("CTCLoss", inputs=False, outputs=True)
def _ctc_loss_grad(op, grad_loss, _):
    from tapeflow.ops import array_ops as ao

    return [ao.reshape(grad_loss, [1, -1, 1]) * _prevented(op.outputs[1]), None, None, None]


# --- the public loss --------------------------------------------------------------------------------------------

def _to_int32(x: Any) -> Tensor:
    from tapeflow.ops.math_ops import cast

    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    return x if x.dtype == dtypes.int32 else cast(x, dtypes.int32)


def _move_blank_first(logits: Tensor, blank: int) -> Tensor:
    from tapeflow.ops import array_ops as ao

    return ao.concat([logits[:, :, blank:blank + 1], logits[:, :, :blank], logits[:, :, blank + 1:]], axis=2)


def ctc_loss(labels: Any, logits: Any, label_length: Any, logit_length: Any, logits_time_major: bool = True,
             unique: Any = None, blank_index: Any = None, name: Any = None) -> Tensor:
    """``tf.nn.ctc_loss``: the CTC negative log likelihood ``[batch]`` of ``labels`` under ``logits``
    (``[time, batch, classes]``, or ``[batch, time, classes]`` with ``logits_time_major=False``).

    Dense ``labels`` (``[batch, max_label_length]`` with ``label_length``) take the blank ``blank_index``
    (default 0; negative counts from the end); a ``tf.SparseTensor`` of labels needs ``blank_index`` and
    ignores ``label_length``. Differentiable with respect to ``logits`` (first order, as in TF).

    >>> logits = tf.zeros([4, 1, 3])
    >>> float(tf.nn.ctc_loss([[1, 2]], logits, [2], [4])[0])  # doctest: +ELLIPSIS
    2.1...
    """
    from tapeflow.ops import array_ops as ao
    from tapeflow.ops import math_ops as mo

    logits = logits if isinstance(logits, Tensor) else convert_to_tensor(logits)
    if isinstance(labels, SparseTensor):
        if blank_index is None:
            raise ValueError("Argument `blank_index` must be provided when `labels` is a `SparseTensor`.")
        classes = logits.shape[2]
        if blank_index < 0:
            if classes is None:
                raise NotImplementedError("tf.nn.ctc_loss with sparse labels, a negative blank_index and logits of "
                                          "unknown class count is not implemented in tapeflow")
            blank_index += classes
        if not logits_time_major:
            logits = ao.transpose(logits, [1, 0, 2])
        values = labels.values
        if classes is None or blank_index != classes - 1:  # TF's kernel takes the blank last
            logits = ao.concat([logits[:, :, :blank_index], logits[:, :, blank_index + 1:],
                                logits[:, :, blank_index:blank_index + 1]], axis=2)
            values = mo.where(values < blank_index, values, values - 1)
        orig = logits.dtype
        if orig == dtypes.float16:
            logits = mo.cast(logits, dtypes.float32)
        loss, _ = execute(CTC_LOSS, (logits, labels.indices, _to_int32(values), _to_int32(logit_length)),
                          {"preprocess_collapse_repeated": False, "ctc_merge_repeated": True,
                           "ignore_longer_outputs_than_inputs": False})
        return mo.cast(loss, orig) if orig != logits.dtype else loss
    if unique is not None:
        # TF's faster path for TPUs sums the states' posteriors by the unique labels instead of by label: the same
        # loss and gradient (up to rounding), which tapeflow's kernel computes by label.
        unique_y, unique_idx = unique
    blank_index = 0 if blank_index is None else blank_index
    labels = _to_int32(labels)
    orig = logits.dtype
    if orig == dtypes.float16:
        logits = mo.cast(logits, dtypes.float32)
    elif orig != dtypes.float32:  # TF's float32 log 0 meets the logits in a Mul
        raise InvalidArgumentError(None, None, "cannot compute Mul as input #1(zero-based) was expected to be a "
                                   f"{dtypes.type_string(orig)} tensor but is a float tensor [Op:Mul]. "
                                   "tf.nn.ctc_loss with dense labels computes in float32: cast the logits.")
    if not logits_time_major:
        logits = ao.transpose(logits, [1, 0, 2])
    if blank_index != 0:
        if blank_index < 0:
            if logits.shape[2] is None:
                raise NotImplementedError("tf.nn.ctc_loss with a negative blank_index and logits of unknown class "
                                          "count is not implemented in tapeflow")
            blank_index += logits.shape[2]
        logits = _move_blank_first(logits, blank_index)
        labels = mo.where(labels < blank_index, labels + 1, labels)
    loss, _ = execute(CTC_LOSS_DENSE, (logits, labels, _to_int32(label_length), _to_int32(logit_length)))
    return mo.cast(loss, orig) if orig != dtypes.float32 else loss


# --- decoders ---------------------------------------------------------------------------------------------------

def _check_decoder_inputs(inputs: np.ndarray, sequence_length: np.ndarray, op: str) -> np.ndarray:
    if inputs.ndim != 3:
        raise _err(op, "inputs is not a 3-Tensor")
    steps, batch, _ = inputs.shape
    seq = np.asarray(sequence_length).reshape(-1)
    if np.ndim(sequence_length) != 1:
        raise _err(op, "sequence_length is not a vector")
    if seq.shape[0] != batch:
        raise _err(op, f"len(sequence_length) != batch_size.  len(sequence_length):  {seq.shape[0]} batch_size: "
                   f"{batch}")
    for b in range(batch):
        if seq[b] > steps:
            raise FailedPreconditionError(None, None, f"sequence_length({b}) <= {steps} [Op:{op}]")
    return seq


def _sparse_paths(paths: list) -> tuple:
    indices = [[b, k] for b, p in enumerate(paths) for k in range(len(p))]
    values = [v for p in paths for v in p]
    shape = [len(paths), max((len(p) for p in paths), default=0)]
    return (np.asarray(indices, np.int64).reshape(-1, 2), np.asarray(values, np.int64),
            np.asarray(shape, np.int64))


def _greedy_kernel(inputs, sequence_length, merge_repeated=True, blank_index=-1):
    op = "CTCGreedyDecoder"
    seq = _check_decoder_inputs(inputs, sequence_length, op)
    steps, batch, classes = inputs.shape
    blank = classes - 1 if blank_index < 0 else blank_index
    paths: list = [[] for _ in range(batch)]
    log_prob = np.zeros((batch, 1), inputs.dtype)
    for b in range(batch):
        prev = -1
        for t in range(int(seq[b])):
            row = inputs[t, b]
            k = int(np.argmax(row))
            log_prob[b, 0] -= row[k]
            if k != blank and not (merge_repeated and k == prev):
                paths[b].append(k)
            prev = k
    return (*_sparse_paths(paths), log_prob)


def _decoder_shape(specs, **attrs):
    s, dt = specs[0]
    b = None if s is None else s[1]
    paths = attrs.get("top_paths", 1)
    i64 = np.dtype(np.int64)
    return ([((None, 2), i64)] * paths + [((None,), i64)] * paths + [((2,), i64)] * paths
            + [((b, paths), dt)])


CTC_GREEDY = defop("CTCGreedyDecoder", _greedy_kernel, shape=_decoder_shape, num_outputs=4)
NotDifferentiable("CTCGreedyDecoder")


def _log_add(a: Any, b: Any) -> Any:
    """TF's ctc ``LogSumExp`` in float32 (a log 0 operand is skipped)."""
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    hi, lo = (a, b) if a > b else (b, a)
    return _F(hi + np.log1p(np.exp(_F(lo - hi))))


class _Beam:
    """A prefix of TF's beam search tree and its log probabilities, at the previous step (``old``) and this one
    (``new``): ``[total, ending in a blank, ending in its label]``."""

    __slots__ = ("parent", "label", "children", "new", "old")

    def __init__(self, parent: Any, label: int) -> None:
        self.parent, self.label, self.children = parent, label, {}
        self.new = [_F(-np.inf)] * 3
        self.old = list(self.new)

    def active(self) -> bool:
        return self.new[0] != -np.inf

    def labels(self, merge_repeated: bool = False) -> list:
        """The prefix's labels from the root; with ``merge_repeated`` (TF's ``LabelSeq``) repeats merged."""
        out, node = [], self
        while node.parent is not None:
            out.append(node.label)
            node = node.parent
        out.reverse()
        if merge_repeated:
            out = [v for k, v in enumerate(out) if k == 0 or v != out[k - 1]]
        return out


def _worst(leaves: list) -> Any:
    return min(leaves, key=lambda e: e.new[0])


def _is_candidate(p: Any, leaves: list, width: int) -> bool:
    return p > -np.inf and (len(leaves) < width or p > _worst(leaves).new[0])


def _beam_search(log_y: np.ndarray, width: int, top_paths: int, merge_repeated: bool) -> tuple[list, list]:
    """TF's ``CTCBeamSearchDecoder`` on one sequence's log softmax ``[time, classes]`` (blank last)."""
    ninf = _F(-np.inf)
    classes = log_y.shape[1]
    blank = classes - 1
    root = _Beam(None, -1)
    root.new = [_F(0), _F(0), ninf]
    leaves = [root]
    for x in log_y:
        branches = sorted(leaves, key=lambda e: -e.new[0])
        for e in branches:
            e.old = list(e.new)
        leaves = []
        for e in branches:
            if e.parent is not None:
                if e.parent.active():
                    same = e.label == e.parent.label
                    prev = e.parent.old[1] if same else e.parent.old[0]
                    e.new[2] = _log_add(e.new[2], prev)
                e.new[2] = _F(e.new[2] + x[e.label])
            e.new[1] = _F(e.old[0] + x[blank])
            e.new[0] = _log_add(e.new[1], e.new[2])
            leaves.append(e)
        for e in branches:
            if not _is_candidate(e.old[0], leaves, width):
                continue
            for label in range(classes - 1):
                c = e.children.get(label)
                if c is None:
                    c = e.children[label] = _Beam(e, label)
                if c.active():
                    continue
                prev = e.old[1] if c.label == e.label else e.old[0]
                c.new = [ninf, ninf, _F(x[label] + prev)]
                c.new[0] = c.new[2]
                if _is_candidate(c.new[0], leaves, width):
                    if len(leaves) == width:
                        low = _worst(leaves)
                        low.new = [ninf] * 3
                        leaves.remove(low)
                    leaves.append(c)
                else:
                    c.old, c.new = [ninf] * 3, [ninf] * 3
    if top_paths > len(leaves):
        raise _err("CTCBeamSearchDecoder", "Less leaves in the beam search than requested.")
    best = sorted(leaves, key=lambda e: -e.new[0])[:top_paths]
    return [e.labels(merge_repeated) for e in best], [e.new[0] for e in best]


def _beam_kernel(inputs, sequence_length, beam_width=100, top_paths=1, merge_repeated=True):
    op = "CTCBeamSearchDecoder"
    seq = _check_decoder_inputs(inputs, sequence_length, op)
    if top_paths > beam_width:
        raise _err(op, "requested more paths than the beam width.")
    steps, batch, classes = inputs.shape
    paths: list = [[] for _ in range(top_paths)]
    log_prob = np.zeros((batch, top_paths), inputs.dtype)
    for b in range(batch):
        log_y = _log_softmax(inputs[:int(seq[b]), b].astype(_F))
        found, scores = _beam_search(log_y, beam_width, top_paths, merge_repeated)
        for i in range(top_paths):
            paths[i].append(found[i])
            log_prob[b, i] = scores[i]
    outs = [_sparse_paths(p) for p in paths]
    return (*[o[0] for o in outs], *[o[1] for o in outs], *[o[2] for o in outs], log_prob)


CTC_BEAM = defop("CTCBeamSearchDecoder", _beam_kernel, shape=_decoder_shape,
                 num_outputs=lambda attrs: 3 * attrs.get("top_paths", 1) + 1)
NotDifferentiable("CTCBeamSearchDecoder")


def _decoder_inputs(inputs: Any, sequence_length: Any) -> tuple[Tensor, Tensor]:
    inputs = inputs if isinstance(inputs, Tensor) else convert_to_tensor(inputs, dtype_hint=dtypes.float32)
    if inputs.dtype not in (dtypes.float32, dtypes.float64):
        raise InvalidArgumentError(None, None, f"Value for attr 'T' of {dtypes.type_string(inputs.dtype)} is not "
                                   "in the list of allowed values: float, double")
    return inputs, convert_to_tensor(sequence_length, dtype=dtypes.int32)


def ctc_greedy_decoder(inputs: Any, sequence_length: Any, merge_repeated: bool = True,
                       blank_index: Any = None) -> tuple[list, Tensor]:
    """``tf.nn.ctc_greedy_decoder``: per step the best class of ``inputs`` (``[time, batch, classes]``) up to
    ``sequence_length``, blanks (``blank_index``, default the last class) dropped and, with ``merge_repeated``,
    repeats merged. Returns ``([decoded SparseTensor], neg_sum_logits [batch, 1])``."""
    inputs, seq = _decoder_inputs(inputs, sequence_length)
    attrs = {"merge_repeated": bool(merge_repeated), "blank_index": -1 if blank_index is None else int(blank_index)}
    ix, vals, shape, log_prob = execute(CTC_GREEDY, (inputs, seq), attrs)
    return [SparseTensor(ix, vals, shape)], log_prob


def ctc_beam_search_decoder(inputs: Any, sequence_length: Any, beam_width: int = 100,
                            top_paths: int = 1) -> tuple[list, Tensor]:
    """``tf.nn.ctc_beam_search_decoder``: the ``top_paths`` most likely label sequences by beam search over
    ``inputs`` (``[time, batch, classes]`` logits, the blank last), ``beam_width`` prefixes kept per step.
    Returns ``(decoded: list of SparseTensor, log_probabilities [batch, top_paths])``."""
    inputs, seq = _decoder_inputs(inputs, sequence_length)
    top_paths = int(top_paths)
    out = execute(CTC_BEAM, (inputs, seq), {"beam_width": int(beam_width), "top_paths": top_paths,
                                            "merge_repeated": False})
    k = top_paths
    decoded = [SparseTensor(out[i], out[k + i], out[2 * k + i]) for i in range(k)]
    return decoded, out[3 * k]


# --- label helpers (TF builds them from small ops; here one kernel each, without a gradient: integer outputs) ----

def _labels_matrix(labels: np.ndarray, op: str) -> None:
    if labels.ndim != 2 or labels.dtype.kind not in "iu":
        raise _err(op, f"labels must be an integer matrix [batch, max_length], got {labels.dtype.name} of shape "
                   f"{list(labels.shape)}")


def _collapse_kernel(labels, seq_length):
    op = "CTCCollapseRepeated"
    _labels_matrix(labels, op)
    lengths = np.asarray(seq_length).reshape(-1) if np.ndim(seq_length) == 1 else None
    if lengths is None or lengths.shape[0] != labels.shape[0] or lengths.dtype.kind not in "iu":
        raise _err(op, f"seq_length must be an integer vector of the batch size {labels.shape[0]}, got shape "
                   f"{list(np.shape(seq_length))}")
    keep = np.concatenate([np.ones_like(labels[:, :1], bool), labels[:, 1:] != labels[:, :-1]], axis=1)
    keep &= np.arange(labels.shape[1])[None, :] < lengths[:, None]
    new_len = keep.sum(axis=1)
    out = np.zeros((labels.shape[0], int(new_len.max()) if new_len.size else 0), labels.dtype)
    for b in range(labels.shape[0]):
        out[b, :new_len[b]] = labels[b][keep[b]]
    return out, new_len.astype(lengths.dtype)


def _unique_kernel(labels):
    _labels_matrix(labels, "CTCUniqueLabels")
    ys = np.zeros(labels.shape, np.int64)
    idx = np.zeros(labels.shape, np.int32)
    for b, row in enumerate(labels):
        seen: dict = {}
        for k, v in enumerate(row.tolist()):
            idx[b, k] = seen.setdefault(v, len(seen))
        ys[b, :len(seen)] = list(seen)
    return ys, idx


CTC_COLLAPSE = defop("CTCCollapseRepeated", _collapse_kernel, num_outputs=2, shape=lambda specs: [
    (None if specs[0][0] is None else (specs[0][0][0], None), specs[0][1]), specs[1]])
CTC_UNIQUE = defop("CTCUniqueLabels", _unique_kernel, num_outputs=2, shape=lambda specs: [
    (specs[0][0], np.dtype(np.int64)), (specs[0][0], np.dtype(np.int32))])
NotDifferentiable("CTCCollapseRepeated")
NotDifferentiable("CTCUniqueLabels")


def collapse_repeated(labels: Any, seq_length: Any, name: Any = None) -> tuple[Tensor, Tensor]:
    """``tf.nn.collapse_repeated``: merges repeated labels of ``labels`` ``[batch, max_len]`` (within
    ``seq_length``); returns the zero-padded ``[batch, new_max_len]`` labels and their new lengths."""
    labels = labels if isinstance(labels, Tensor) else convert_to_tensor(labels)
    seq_length = seq_length if isinstance(seq_length, Tensor) else convert_to_tensor(seq_length)
    out, lengths = execute(CTC_COLLAPSE, (labels, seq_length))
    return out, lengths


def ctc_unique_labels(labels: Any, name: Any = None) -> tuple[Tensor, Tensor]:
    """``tf.nn.ctc_unique_labels``: per row of ``labels``, its unique labels in order of first appearance
    (int64, zero-padded to the row length) and each label's index into them (int32)."""
    labels = labels if isinstance(labels, Tensor) else convert_to_tensor(labels)
    ys, idx = execute(CTC_UNIQUE, (labels,))
    return ys, idx
