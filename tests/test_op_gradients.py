"""The registry-wide gradient check: every differentiable op, first and
second order, against central finite differences in float64."""

from __future__ import annotations

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.ops import registry
from tests.op_specs import all_specs

SPECS = all_specs()


def _all_ops():
    # tapeflow.ops imports every *_ops.py family; keras may register a few more.
    try:
        import tapeflow.keras  # noqa: F401
    except ImportError:
        pass

    return registry.registered_ops()


def test_every_op_declares_a_gradient_or_none():
    missing = [name for name in _all_ops() if registry.get_gradient(name) is None]
    assert not missing, (
        f"ops with neither a gradient rule nor NotDifferentiable: {missing}. "
        "Add @defgrad(...) or NotDifferentiable(...) next to the op."
    )


def test_every_differentiable_op_has_a_gradient_check():
    covered = {s.op for s in SPECS}
    missing = [name for name in _all_ops() if registry.is_differentiable(name) and name not in covered]
    assert not missing, f"differentiable ops without an OpSpec in tests/op_specs: {missing}"


def _scalarize(out, weights):
    outs = out if isinstance(out, (list, tuple)) else [out]
    total = None
    for o, w in zip(outs, weights):
        if o is None or not o.dtype.is_floating:
            continue
        term = tf.reduce_sum(o * tf.constant(w))
        total = term if total is None else total + term
    return total


def _weights(spec, tensors, rng):
    out = spec.fn(*tensors)
    outs = out if isinstance(out, (list, tuple)) else [out]
    return [rng.uniform(0.5, 1.5, size=tuple(o.shape.as_list())) if o.dtype.is_floating else None for o in outs]


def _value(spec, arrays, weights):
    return float(_scalarize(spec.fn(*[tf.constant(a) for a in arrays]), weights).numpy())


@pytest.mark.parametrize("spec", SPECS, ids=[s.id for s in SPECS])
def test_gradient(spec):
    rng = np.random.default_rng(0)
    arrays = [a.make(rng) for a in spec.args]
    diff_idx = [i for i, a in enumerate(spec.args) if a.diff and arrays[i].dtype.kind == "f"]
    tensors = [tf.constant(a) for a in arrays]
    weights = _weights(spec, tensors, rng)

    # The spec must really run its op while recording.
    with tf.GradientTape(persistent=True) as outer:
        for i in diff_idx:
            outer.watch(tensors[i])
        with tf.GradientTape() as inner:
            for i in diff_idx:
                inner.watch(tensors[i])
            y = _scalarize(spec.fn(*tensors), weights)
        recorded = {r.type for r in inner._tape.records}
        assert spec.op in recorded, f"spec for {spec.op} recorded only {sorted(recorded)}"
        grads = inner.gradient(y, [tensors[i] for i in diff_idx])
        grads = [tf.convert_to_tensor(g) if g is not None else tf.zeros_like(tensors[i])
                 for g, i in zip(grads, diff_idx)]
        dirs2 = [rng.standard_normal(arrays[i].shape) for i in diff_idx]
        s = tf.add_n([tf.reduce_sum(g * tf.constant(d)) for g, d in zip(grads, dirs2)])

    # First order: <grad, v> vs the central difference along v.
    direction = [rng.standard_normal(arrays[i].shape) for i in diff_idx]
    analytic = sum(float(np.sum(g.numpy() * d)) for g, d in zip(grads, direction))

    def shifted(h, dirs):
        moved = list(arrays)
        for i, d in zip(diff_idx, dirs):
            moved[i] = arrays[i] + h * d
        return moved

    numeric = (_value(spec, shifted(spec.eps, direction), weights)
               - _value(spec, shifted(-spec.eps, direction), weights)) / (2 * spec.eps)
    np.testing.assert_allclose(analytic, numeric, rtol=spec.rtol, atol=spec.atol,
                               err_msg=f"first-order gradient of {spec.op}")

    if spec.order < 2:
        return
    # Second order: the gradient of s = <grad f, d2> along v, vs the difference
    # of first-order gradients computed at shifted points.
    hgrads = outer.gradient(s, [tensors[i] for i in diff_idx])
    analytic2 = sum(float(np.sum(tf.convert_to_tensor(g).numpy() * d)) for g, d in zip(hgrads, direction)
                    if g is not None)

    def first_order_dot(arrs):
        ts = [tf.constant(a) for a in arrs]
        with tf.GradientTape() as t2:
            for i in diff_idx:
                t2.watch(ts[i])
            yy = _scalarize(spec.fn(*ts), weights)
        gg = t2.gradient(yy, [ts[i] for i in diff_idx])
        return sum(float(np.sum(tf.convert_to_tensor(g).numpy() * d)) for g, d in zip(gg, dirs2) if g is not None)

    numeric2 = (first_order_dot(shifted(spec.eps, direction))
                - first_order_dot(shifted(-spec.eps, direction))) / (2 * spec.eps)
    np.testing.assert_allclose(analytic2, numeric2, rtol=spec.rtol * 10, atol=spec.atol * 10,
                               err_msg=f"second-order gradient of {spec.op}")
