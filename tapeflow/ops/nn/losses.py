"""Losses of ``tf.nn``: the fused softmax / sparse softmax cross-entropies (their backprop is an
output of the op), sigmoid and weighted cross-entropies, l2_loss, log_poisson_loss, the
distribution-aware average / regularization losses, and in_top_k."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tapeflow.framework import distribution_hooks as hooks
from tapeflow.framework.errors import InvalidArgumentError
from tapeflow.framework.execute import execute
from tapeflow.framework.tensor import Tensor, convert_to_tensor
from tapeflow.ops import array_ops, math_ops, shapes
from tapeflow.ops._helpers import normalize_axis, t
from tapeflow.ops.math_ops import add, cast, exp, log1p, multiply, negative, reduce_sum, subtract, where
from tapeflow.ops.nn._common import _dims, _err, _float_input, _zeros
from tapeflow.ops.nn.activations import _log_softmax_kernel, log_softmax, softmax
from tapeflow.ops.registry import NotDifferentiable, defgrad, defop


def _xent_kernel(logits, labels):
    dt = logits.dtype
    lsm = _log_softmax_kernel(logits, -1)
    # 0 * -inf would be nan: entries with zero labels contribute nothing.
    prod = np.where(labels == 0, dt.type(0), labels * lsm)
    loss = -prod.sum(axis=-1)  # (the method: np.sum's wrapper costs a microsecond)
    return loss.astype(dt, copy=False), (np.exp(lsm) - labels).astype(dt, copy=False)


def _xent_shape(specs, **attrs):
    (s, dt), _ = specs
    return [(None if s is None else tuple(s[:-1]), dt), (s, dt)]


XENT = defop("SoftmaxCrossEntropyWithLogits", _xent_kernel, shape=_xent_shape, num_outputs=2)


def _xent_logits_grad(op, grad_loss, grad_backprop):
    # d loss / d logits = softmax - labels, which the op already returned as its
    # second output. A second-order pass sends a gradient into that output;
    # its adjoint through softmax is (gg - <gg, s>) s.
    g = multiply(array_ops.expand_dims(grad_loss, -1), op.outputs[1])
    if 1 in (getattr(op, "zero_output_grads", None) or ()):
        return g  # first order: no gradient reached the backprop output
    logits = op.inputs[0]
    s = softmax(logits)
    gg = multiply(subtract(grad_backprop, reduce_sum(multiply(grad_backprop, s), axis=-1, keepdims=True)), s)
    return add(g, gg)


@defgrad("SoftmaxCrossEntropyWithLogits", inputs=True, outputs=True)
def _xent_grad(op, grad_loss, grad_backprop):
    # One fused op with its own rule because the composite -sum(labels *
    # log_softmax) would differentiate through exp/log of shifted logits;
    # the fused backprop (softmax - labels) is exact and never overflows.
    g_logits = _xent_logits_grad(op, grad_loss, grad_backprop)
    if 1 in (getattr(op, "skip_input_indices", None) or ()):
        return g_logits, None  # nobody asked for the labels' gradient
    lsm = log_softmax(op.inputs[0])
    # The labels get -log_softmax (as TF) and, at second order, -gg from the
    # "- labels" term of the backprop output (which TF's rule drops).
    g_labels = subtract(multiply(array_ops.expand_dims(grad_loss, -1), negative(lsm)), grad_backprop)
    return g_logits, g_labels


def _to_last_axis_2d(x: Tensor, axis: int):
    """Moves ``axis`` last and flattens the rest; returns (x2d, perm, shape)."""
    nd = len(x._shape_tuple())
    perm = None
    if axis != nd - 1:
        perm = [i for i in range(nd) if i != axis] + [axis]
        x = array_ops.transpose(x, perm)
    shape = x._shape_tuple()
    if nd != 2:
        if shape[-1] is None and None not in shape[:-1]:  # traced: only the class dim unknown
            return array_ops.reshape(x, (int(np.prod(shape[:-1], dtype=np.int64)), -1)), perm, shape
        if shape[-1] is None:  # traced with several unknown dims
            from tapeflow.ops import shape_ops

            last = array_ops.getitem(shape_ops.shape_of(x), -1)
            return shape_ops.dynamic_reshape(x, [-1, last], static=(None, None)), perm, shape
        x = array_ops.reshape(x, (-1, shape[-1] if shape[-1] is not None else -1))
    return x, perm, shape


def softmax_cross_entropy_with_logits(labels: Any, logits: Any, axis: int = -1, name: str | None = None) -> Tensor:
    """Cross-entropy between ``labels`` (a distribution along ``axis``) and
    softmax(``logits``); one loss per example. Gradients flow into both."""
    if type(logits) is Tensor and type(labels) is Tensor and type(axis) is int and (axis == -1 or axis == 1):
        # The common case, eager: two float matrices of one shape and dtype, classes last.
        lv, bv = logits._value, labels._value
        if type(lv) is np.ndarray and lv.ndim == 2 and lv.dtype.kind == "f" and lv.dtype is bv.dtype \
                and lv.shape == bv.shape:
            return execute(XENT, (logits, labels))[0]
    lg = _float_input(logits, "SoftmaxCrossEntropyWithLogits")
    lb = convert_to_tensor(labels, dtype_hint=lg.dtype)
    if lb._value.dtype != lg._value.dtype:
        lb = cast(lb, lg.dtype)  # TF casts the labels to the logits' dtype
    sl, sg = lb._shape_tuple(), lg._shape_tuple()
    if len(sg) == 0:
        raise _err("SoftmaxCrossEntropyWithLogits", "logits must have at least 1 dimension, got a scalar")
    try:
        full = shapes.broadcast_shape(sl, sg, "SoftmaxCrossEntropyWithLogits")
    except InvalidArgumentError:
        raise _err("SoftmaxCrossEntropyWithLogits",
                   f"logits and labels must be broadcastable: logits_size={list(sg)} labels_size={list(sl)}") from None
    if full != tuple(sg) and None not in full:
        lg = array_ops.broadcast_to(lg, full)
    if full != tuple(sl) and None not in full:
        lb = array_ops.broadcast_to(lb, full)
    nd = len(full)
    a = normalize_axis(axis, nd, "SoftmaxCrossEntropyWithLogits")
    lg2, _, moved_shape = _to_last_axis_2d(lg, a)
    lb2, _, _ = _to_last_axis_2d(lb, a)
    loss = execute(XENT, (lg2, lb2))[0]
    if nd != 2:
        if sum(d is None for d in moved_shape[:-1]) > 1:  # traced with several unknown dims
            from tapeflow.ops import shape_ops

            lead = array_ops.getitem(shape_ops.shape_of(lg if a == nd - 1 else array_ops.transpose(
                lg, [i for i in range(nd) if i != a] + [a])), slice(None, -1))
            return shape_ops.dynamic_reshape(loss, lead, static=moved_shape[:-1])
        loss = array_ops.reshape(loss, tuple(-1 if d is None else d for d in moved_shape[:-1]))
    return loss


def _sparse_xent_kernel(logits, labels):
    n_classes = logits.shape[-1]
    bad = (labels < 0) | (labels >= n_classes)
    if bad.any():
        raise InvalidArgumentError(
            None, None,
            f"Received a label value of {int(labels[bad][0])} which is outside the valid range of "
            f"[0, {n_classes}).  Label values: {' '.join(str(int(v)) for v in labels.reshape(-1))} "
            "[Op:SparseSoftmaxCrossEntropyWithLogits]")
    lsm = _log_softmax_kernel(logits, -1)
    rows = np.arange(logits.shape[0])
    loss = -lsm[rows, labels]
    backprop = np.exp(lsm)
    backprop[rows, labels] -= 1
    return loss.astype(logits.dtype, copy=False), backprop.astype(logits.dtype, copy=False)


SPARSE_XENT = defop("SparseSoftmaxCrossEntropyWithLogits", _sparse_xent_kernel, shape=_xent_shape, num_outputs=2)


@defgrad("SparseSoftmaxCrossEntropyWithLogits", inputs=True, outputs=True)
def _sparse_xent_grad(op, grad_loss, grad_backprop):
    # Fused for the same reason as the dense op; integer labels get None.
    return _xent_logits_grad(op, grad_loss, grad_backprop), None


def sparse_softmax_cross_entropy_with_logits(labels: Any, logits: Any, name: str | None = None) -> Tensor:
    """Cross-entropy of integer class ``labels`` (shape = logits.shape[:-1])
    against softmax(``logits``). A label outside [0, num_classes) is an
    InvalidArgumentError."""
    lg = _float_input(logits, "SparseSoftmaxCrossEntropyWithLogits")
    lb = convert_to_tensor(labels)
    if lb._value.dtype.kind not in "iu":
        raise _err("SparseSoftmaxCrossEntropyWithLogits",
                   f"Value for attr 'Tlabels' of {lb.dtype.name} is not in the list of allowed values: int32, int64. "
                   "Cast the labels with tf.cast(labels, tf.int32)")
    sl, sg = lb._shape_tuple(), lg._shape_tuple()
    if len(sg) == 0:
        raise ValueError(f"Logits cannot be scalars - received shape {list(sg)}.")
    if len(sl) != len(sg) - 1 or any(a is not None and b is not None and a != b for a, b in zip(sl, sg[:-1])):
        raise ValueError(f"`labels.shape` must equal `logits.shape` except for the last dimension. Received: "
                         f"labels.shape={tuple(sl)} and logits.shape={tuple(sg)}")
    if len(sg) == 2:
        return execute(SPARSE_XENT, (lg, lb))[0]
    if sg[-1] is None:  # an unknown class count: the logits' run-time last dim
        from tapeflow.ops import shape_ops

        lg2 = shape_ops.dynamic_reshape(lg, [-1, shape_ops.shape_of(lg)[-1]])
    else:
        lg2 = array_ops.reshape(lg, (-1, sg[-1]))
    lb2 = array_ops.reshape(lb, (-1,))
    loss = execute(SPARSE_XENT, (lg2, lb2))[0]
    if sum(d is None for d in sl) > 1:  # traced with several unknown dims: the labels' run-time shape
        from tapeflow.ops import shape_ops

        return shape_ops.dynamic_reshape(loss, shape_ops.shape_of(lb), static=sl)
    return array_ops.reshape(loss, tuple(-1 if d is None else d for d in sl))


def sigmoid_cross_entropy_with_logits(labels: Any = None, logits: Any = None, name: str | None = None) -> Tensor:
    """Elementwise logistic loss, in the overflow-free form
    max(x, 0) - x * z + log(1 + exp(-|x|))."""
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    x = _float_input(logits, "SigmoidCrossEntropyWithLogits")
    z = convert_to_tensor(labels, dtype_hint=x.dtype)
    if z._value.dtype != x._value.dtype:
        raise _err("SigmoidCrossEntropyWithLogits",
                   f"labels ({z.dtype.name}) and logits ({x.dtype.name}) must have the same dtype")
    sx, sz = x._shape_tuple(), z._shape_tuple()
    if len(sx) != len(sz) or any(a is not None and b is not None and a != b for a, b in zip(sx, sz)):
        raise ValueError(f"`logits` and `labels` must have the same shape, received ({tuple(sx)} vs {tuple(sz)}).")
    nonneg = math_ops.greater_equal(x, 0)
    zeros = _zeros(x)
    relu_logits = where(nonneg, x, zeros)
    neg_abs = where(nonneg, negative(x), x)
    return add(subtract(relu_logits, multiply(x, z)), log1p(exp(neg_abs)))


def _l2_loss_kernel(x):
    return (np.sum(np.square(x)) / 2).astype(x.dtype)


L2_LOSS = defop("L2Loss", _l2_loss_kernel, shape=lambda specs, **a: [((), specs[0][1])])


@defgrad("L2Loss", inputs=True)
def _l2_loss_grad(op, g):
    return multiply(op.inputs[0], g)


def l2_loss(t_: Any, name: str | None = None) -> Tensor:
    """sum(t ** 2) / 2."""
    return execute(L2_LOSS, (_float_input(t_, "L2Loss"),))


def weighted_cross_entropy_with_logits(labels: Any, logits: Any, pos_weight: Any, name: str | None = None) -> Tensor:
    """sigmoid_cross_entropy_with_logits with the positive term weighted by
    ``pos_weight``, in the same overflow-free form."""
    x = _float_input(logits, "WeightedCrossEntropyWithLogits")
    z = convert_to_tensor(labels, dtype_hint=x.dtype)
    sx, sz = x._shape_tuple(), z._shape_tuple()
    if len(sx) != len(sz) or any(a is not None and b is not None and a != b for a, b in zip(sx, sz)):
        raise ValueError(f"`logits` and `labels` must have the same shape, received ({tuple(sx)} vs {tuple(sz)}).")
    log_weight = add(multiply(subtract(convert_to_tensor(pos_weight, dtype_hint=x.dtype), 1.0), z), 1.0)
    softplus_neg = add(log1p(exp(negative(math_ops.abs(x)))), math_ops.relu(negative(x)))
    return add(multiply(subtract(1.0, z), x), multiply(log_weight, softplus_neg))


def log_poisson_loss(targets: Any, log_input: Any, compute_full_loss: bool = False, name: str | None = None) -> Tensor:
    """exp(log_input) - log_input * targets (+ Stirling's term for targets > 1
    when ``compute_full_loss``)."""
    li = _float_input(log_input, "LogPoissonLoss")
    z = convert_to_tensor(targets, dtype_hint=li.dtype)
    result = subtract(exp(li), multiply(li, z))
    if not compute_full_loss:
        return result
    # As TF: Stirling's term on the raw targets, dropped where 0 <= z <= 1 (a negative
    # target gives NaN, and the masked branch's NaN/inf still reach the targets' gradient).
    stirling = add(subtract(multiply(z, math_ops.log(z)), z), multiply(0.5, math_ops.log(multiply(2.0 * math.pi, z))))
    zeros = array_ops.zeros_like(z)
    cond = math_ops.logical_and(math_ops.greater_equal(z, zeros), math_ops.less_equal(z, array_ops.ones_like(z)))
    return add(result, where(cond, zeros, stirling))


def _replicas_in_sync(fn_name: str) -> int:
    """The current strategy's replica count (tf.distribute registers how it is found)."""
    count = hooks.replicas_in_sync
    return 1 if count is None else count(fn_name)


def compute_average_loss(per_example_loss: Any, sample_weight: Any = None, global_batch_size: Any = None) -> Tensor:
    """``sum(per_example_loss * sample_weight) / global_batch_size``; the global batch size defaults to
    this replica's batch size times ``num_replicas_in_sync``. Summed over replicas (``strategy.reduce``
    or the optimizer's gradient allreduce) this is the mean over the global batch."""
    num_replicas = _replicas_in_sync("compute_average_loss")
    loss = t(per_example_loss)
    if sample_weight is not None:
        loss = multiply(loss, convert_to_tensor(sample_weight, dtype_hint=loss.dtype))
    # (TF's div_no_nan: a replica holding no example of a short last batch adds 0, not NaN)
    from tapeflow.ops.special_ops import divide_no_nan

    if global_batch_size is None:
        shape = loss._shape_tuple()
        n = shape[0] if shape else 1
        if n is None:
            n = math_ops.cast(array_ops.shape(loss)[0], loss.dtype)
            return divide_no_nan(reduce_sum(loss), n * float(num_replicas))
        global_batch_size = n * num_replicas
    size = convert_to_tensor(global_batch_size)
    if not size.dtype.is_integer:
        raise TypeError("global_batch_size must be an integer..  Expected \"x\" to be integer type.  Found: tensor "
                        f"of dtype <dtype: '{size.dtype.name}'>")
    if size._shape_tuple() != ():
        raise ValueError(f"global_batch_size must be scalar..  Tensor {size!r} must be scalar: its shape is "
                         f"{list(size._shape_tuple() or [])}")
    value = getattr(size, "_value", None)
    if isinstance(value, (np.ndarray, np.generic)) and int(value) < 0:
        raise InvalidArgumentError(None, None, "global_batch_size must be non-negative..  \nCondition x >= 0 did not "
                                   f"hold element-wise:\nx (shape=() dtype={size.dtype.name}) = \n{int(value)}")
    return divide_no_nan(reduce_sum(loss), cast(size, loss.dtype))


def scale_regularization_loss(regularization_loss: Any) -> Tensor:
    """The summed regularization loss divided by ``num_replicas_in_sync`` (added once over all replicas)."""
    num_replicas = _replicas_in_sync("scale_regularization_loss")
    if isinstance(regularization_loss, (list, tuple)):
        regularization_loss = math_ops.add_n(list(regularization_loss))
    total = reduce_sum(t(regularization_loss))
    if num_replicas == 1:
        return total
    return math_ops.divide_(total, convert_to_tensor(float(num_replicas), dtype=total.dtype))


def _in_top_k_kernel(predictions, targets, k):
    n, classes = predictions.shape
    if targets.size and (targets.min() < 0 or targets.max() >= classes):
        bad = targets[(targets < 0) | (targets >= classes)][0]
        raise InvalidArgumentError(None, None, f"targets[...] = {int(bad)} is out of range [0, {classes}) "
                                   "[Op:InTopKV2]")
    target_vals = predictions[np.arange(n), targets]
    larger = (predictions > target_vals[:, None]).sum(axis=1)
    return np.isfinite(target_vals) & (larger < k)


IN_TOP_K = defop("InTopKV2", _in_top_k_kernel, shape=lambda specs, k: [(specs[1][0], np.dtype(bool))])
NotDifferentiable("InTopKV2")


def in_top_k(targets: Any, predictions: Any, k: int, name: str | None = None) -> Tensor:
    """Whether each target class is among the ``k`` largest predictions (ties
    count as in the top k)."""
    p = _float_input(predictions, "InTopKV2")
    tg = convert_to_tensor(targets)
    if tg._value.dtype.kind not in "iu":
        raise TypeError(f"targets must be int32 or int64, got {tg.dtype.name}")
    if len(p._shape_tuple()) != 2 or len(tg._shape_tuple()) != 1:
        raise _err("InTopKV2", f"predictions must be 2-D and targets 1-D, got {_dims(p._shape_tuple())} and "
                   f"{_dims(tg._shape_tuple())}")
    n_pred, n_tg = p._shape_tuple()[0], tg._shape_tuple()[0]
    if n_pred is not None and n_tg is not None and n_pred != n_tg:
        raise _err("InTopKV2", f"First dimension of predictions {n_pred} must match length of targets {n_tg}")
    return execute(IN_TOP_K, (p, tg), {"k": int(k)})
