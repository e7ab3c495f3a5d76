"""Every OpSpec traced with unknown (None) dims.

Each spec's function runs inside ``tf.function`` whose ``input_signature``
gives its first non-scalar float input a None leading dim ("leading"), or
makes all its dims None ("all", for inputs of rank >= 2); the other inputs
keep their static shapes. The forward values and the first-order gradients
computed inside the traced graph must equal eager's. The per-shape fallback
(a retrace per concrete shape when a None-dim trace fails) is disabled, so a
rule that cannot trace unknown dims fails here instead of being hidden. The
fallback itself, and its one-time warning, are tested at the end.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.graph import function as function_mod
from tests.op_specs import all_specs

SPECS = all_specs()


_QR = (NotImplementedError, "QrGrad not implemented with dynamic shapes")
_SVD = (NotImplementedError, "SVD gradient has not been implemented for input with unknown inner matrix shape")

# TF 2.21 cannot either, and raises the same: its QrGrad and SvdGrad need the
# matrix dims (unknown batch dims are fine: Qr-deep, Svd-square in "leading");
# tf.unstack cannot infer `num` from an unknown dim.
_TF_RAISES = {
    ("leading", "Qr-square"): _QR, ("leading", "Qr-wide"): _QR, ("leading", "Qr-wide-full"): _QR,
    ("leading", "Svd-tall"): _SVD, ("leading", "Svd-wide"): _SVD, ("leading", "Svd-tall-full"): _SVD,
    ("all", "Qr-deep"): _QR, ("all", "Qr-square"): _QR, ("all", "Qr-wide"): _QR, ("all", "Qr-wide-full"): _QR,
    ("all", "Svd-square"): _SVD, ("all", "Svd-tall"): _SVD, ("all", "Svd-wide"): _SVD,
    ("all", "Svd-tall-full"): _SVD,
    ("all", "Unpack"): (ValueError, "Cannot infer argument `num` from shape"),
}

_SKIP = {
    ("all", "Cholesky"): "the spec adds a NumPy identity of the input's static size",
}

# Known gaps, each an explicit error (never a wrong value).
_XFAIL = {
    ("all", "GatherV2-repeat"): "tf.repeat with a vector of repeats along an axis of unknown size: "
                                "NotImplementedError (a scalar count works)",
    ("all", "MatrixDiagV3-k"): "tf.linalg.diag with explicit num_rows/num_cols of a diagonal of unknown length: "
                               "NotImplementedError",
    **{("all", k): "tf.signal.rfft* of an input whose inner dims are unknown while tracing: NotImplementedError"
       for k in ("RFFT", "RFFT-odd", "RFFT-padded", "RFFT-cropped", "RFFT2D", "RFFT2D-padded", "RFFT3D")},
}


@pytest.fixture(autouse=True)
def _no_per_shape_fallback(monkeypatch):
    monkeypatch.setattr(function_mod, "per_shape_fallback", False)


def _unknown_arg(spec, arrays):
    """Index of the input whose leading dim becomes None: the first float,
    differentiable, non-scalar one (scalars and integer index args stay static)."""
    for i, (a, arr) in enumerate(zip(spec.args, arrays)):
        if arr.ndim >= 1 and arr.dtype.kind == "f" and a.diff:
            return i
    return None


def _forward_and_grads(spec, diff_idx):
    def f(*xs):
        with tf.GradientTape() as tape:
            for i in diff_idx:
                tape.watch(xs[i])
            out = spec.fn(*xs)
        outs = out if isinstance(out, (list, tuple)) else [out]
        # The gradient of sum(o * o) / 2: each output is its own upstream
        # gradient (non-uniform, so a rule that mixes up positions is caught;
        # no reduction, so outputs of unknown rank are fine).
        ys = [o for o in outs if o is not None and o.dtype.is_floating]
        grads = tape.gradient(ys, [xs[i] for i in diff_idx], output_gradients=ys) if ys else [None] * len(diff_idx)
        grads = [tf.convert_to_tensor(g) if g is not None else tf.zeros_like(xs[i])
                 for g, i in zip(grads, diff_idx)]
        return [o for o in outs if o is not None], grads

    return f


def _cases():
    for mode in ("leading", "all"):
        for s in SPECS:
            key = (mode, s.id)
            # Strict, so a fix shows up.
            marks = [pytest.mark.xfail(reason=_XFAIL[key], strict=True)] if key in _XFAIL else []
            yield pytest.param(mode, s, marks=marks, id=f"{mode}-{s.id}")


@pytest.mark.parametrize("mode, spec", list(_cases()))
def test_traced_with_unknown_dims_matches_eager(mode, spec):
    if (mode, spec.id) in _SKIP:
        pytest.skip(_SKIP[mode, spec.id])
    rng = np.random.default_rng(0)
    arrays = [a.make(rng) for a in spec.args]
    k = _unknown_arg(spec, arrays)
    if k is None:
        pytest.skip("no non-scalar float input to give an unknown dim")
    if mode == "all" and arrays[k].ndim < 2:
        pytest.skip("rank 1: the same as 'leading'")
    diff_idx = [i for i, a in enumerate(spec.args) if a.diff and arrays[i].dtype.kind == "f"]
    tensors = [tf.constant(a) for a in arrays]
    f = _forward_and_grads(spec, diff_idx)
    want_outs, want_grads = f(*tensors)

    unknown = [None] * arrays[k].ndim if mode == "all" else [None] + list(arrays[k].shape[1:])
    sig = [tf.TensorSpec(unknown if i == k else list(arr.shape), tf.as_dtype(arr.dtype))
           for i, arr in enumerate(arrays)]
    traced = tf.function(f, input_signature=sig)
    if (mode, spec.id) in _TF_RAISES:
        error, message = _TF_RAISES[mode, spec.id]
        with pytest.raises(error, match=message):
            traced(*tensors)
        return
    got_outs, got_grads = traced(*tensors)

    assert len(got_outs) == len(want_outs)
    for g, w in zip(got_outs, want_outs):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-9, atol=1e-12, err_msg=f"forward of {spec.id}")
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-9, atol=1e-12, err_msg=f"gradient of {spec.id}")


# ----------------------------------------------------------------------------
# The per-shape fallback: correct results, one warning per function, opt-out
# ----------------------------------------------------------------------------

def _qr_grad(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.linalg.qr(x)[1] ** 2)
    return tape.gradient(y, x)


def _matrices():
    rng = np.random.default_rng(5)
    return [tf.constant(rng.standard_normal((n, 3)) + 3 * np.eye(n, 3)) for n in (3, 4, 4)]


def test_fallback_retraces_per_shape_and_warns_once(monkeypatch, caplog):
    monkeypatch.setattr(function_mod, "per_shape_fallback", True)
    f = tf.function(_qr_grad, input_signature=[tf.TensorSpec([None, 3], tf.float64)])
    with caplog.at_level(logging.WARNING, logger="tapeflow"):
        for x in _matrices():
            np.testing.assert_allclose(f(x).numpy(), _qr_grad(x).numpy(), rtol=1e-12, atol=1e-12)
    warnings = [r for r in caplog.records if "per_shape_fallback" in r.getMessage()]
    assert len(warnings) == 1, [r.getMessage() for r in caplog.records]
    msg = warnings[0].getMessage()
    assert "tf.function `_qr_grad`" in msg and "in the gradient of op Qr" in msg
    assert "NotImplementedError: QrGrad not implemented with dynamic shapes" in msg
    assert f.experimental_get_tracing_count() == 3  # the failed None-dim trace, then shapes (3, 3) and (4, 3)


def test_fallback_warning_names_the_function_where_no_op_ran(monkeypatch, caplog):
    monkeypatch.setattr(function_mod, "per_shape_fallback", True)

    def g(x):
        return tf.repeat(x, [1, 2], axis=0)  # a vector of repeats: tapeflow needs the axis's size static

    f = tf.function(g, input_signature=[tf.TensorSpec([None], tf.float64)])
    with caplog.at_level(logging.WARNING, logger="tapeflow"):
        out = f(tf.constant([1.0, 2.0], tf.float64))
    np.testing.assert_array_equal(out.numpy(), [1.0, 2.0, 2.0])
    (msg,) = [r.getMessage() for r in caplog.records if "per_shape_fallback" in r.getMessage()]
    assert "tf.function `g`" in msg and "in tapeflow.ops.indexing_ops.repeat" in msg


def test_fallback_off_raises_the_trace_error():
    # per_shape_fallback is False here (the autouse fixture).
    f = tf.function(_qr_grad, input_signature=[tf.TensorSpec([None, 3], tf.float64)])
    with pytest.raises(NotImplementedError, match="QrGrad not implemented with dynamic shapes"):
        f(_matrices()[0])


def test_fallback_with_reduce_retracing_warns_once(monkeypatch, caplog):
    monkeypatch.setattr(function_mod, "per_shape_fallback", True)
    f = tf.function(_qr_grad, reduce_retracing=True)
    with caplog.at_level(logging.WARNING, logger="tapeflow"):
        for x in _matrices():
            np.testing.assert_allclose(f(x).numpy(), _qr_grad(x).numpy(), rtol=1e-12, atol=1e-12)
    assert sum("per_shape_fallback" in r.getMessage() for r in caplog.records) == 1


# ----------------------------------------------------------------------------
# Keras functional models over unknown dims: static shapes as Keras 3.15's
# ----------------------------------------------------------------------------

def test_keras_functional_shapes_with_unknown_dims():
    layers = tf.keras.layers
    inp = tf.keras.Input(shape=(None, None, 3))
    c = layers.Conv2D(4, 3)(inp)
    p = layers.AveragePooling2D(2)(c)  # a 2x2 pool of the 1x1 dummy used to fail
    m = layers.MaxPooling2D(2, padding="same")(p)
    g = layers.GlobalAveragePooling2D()(m)
    f = layers.Flatten()(m)
    d = layers.Dense(5)(tf.keras.Input(shape=(None, 6)))
    fixed = layers.Conv2D(2, 3)(tf.keras.Input(shape=(8, 8, 1)))
    assert [tuple(x.shape) for x in (c, p, m, g, f, d, fixed)] == [
        (None, None, None, 4), (None, None, None, 4), (None, None, None, 4), (None, 4), (None, None),
        (None, None, 5), (None, 6, 6, 2)]
    model = tf.keras.Model(inp, layers.Dense(2)(g))
    assert model(np.zeros((2, 9, 11, 3), np.float32)).shape == (2, 2)
    flat = tf.function(layers.Flatten(), input_signature=[tf.TensorSpec([None, None, 2])])
    assert flat(tf.ones([3, 4, 2])).shape == (3, 8)
