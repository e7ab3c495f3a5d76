"""Nested tapes that all follow their templates lazily take their ops together, straight from ``execute``
(``backprop._Peers``): the same gradients as the op-by-op walk, and any change of one of them (a watch, a
pause, a departure) leaves each with exactly what it would have recorded alone."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.eager import backprop
from tapeflow.framework.context import state
from tapeflow.graph import tape_replay as replay


@pytest.fixture(autouse=True)
def fresh():
    replay.clear()
    yield
    replay.enabled = True
    replay.clear()


C1, C2 = tf.constant(0.9, tf.float64), tf.constant(0.1, tf.float64)


def _chain(z, n=10):
    for _ in range(n):
        z = tf.sin(z)
        z = z * C1
        z = tf.tanh(z)
        z = z + C2
    return z


def _second(x, between=None):
    lanes = []
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            z = _chain(x, 5)
            lanes.append(type(state.lane).__name__)
            if between is not None:
                z = between(outer, inner, z)
            z = _chain(z, 5)
        g = inner.gradient(z, x)
    return outer.gradient(g, x), g, lanes


def _want(x, between=None):
    replay.enabled = False
    try:
        return _second(x, between)
    finally:
        replay.enabled = True


@pytest.mark.parametrize("between", ["none", "watch_outer", "pause_inner", "departure"])
def test_nested_lazy_tapes_give_the_walks_derivatives(between):
    x = tf.constant(0.3, tf.float64)
    y = tf.constant(0.2, tf.float64)

    def watch_outer(outer, inner, z):
        outer.watch(y)  # (the outer tape alone: it stops following lazily, the inner one goes on)
        return z + y

    def pause_inner(outer, inner, z):
        with inner.stop_recording():
            w = tf.sin(z)  # (recorded on the outer tape only)
        return z + w

    def departure(outer, inner, z):
        return tf.reduce_sum(tf.stack([z, z]))  # (an op the templates' lanes do not take)

    fn = {"none": None, "watch_outer": watch_outer, "pause_inner": pause_inner, "departure": departure}[between]
    want_h, want_g, _ = _want(x, fn)
    for _ in range(4):
        h, g, lanes = _second(x, fn)
        np.testing.assert_allclose(g.numpy(), want_g.numpy(), rtol=1e-12)
        np.testing.assert_allclose(h.numpy(), want_h.numpy(), rtol=1e-12)
    assert lanes == ["_Peers"]  # (by the last calls both tapes follow their templates lazily, together)


def test_the_peers_lane_ends_with_the_tape_stack():
    x = tf.constant(0.3, tf.float64)
    for _ in range(4):
        _second(x)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            z = _chain(x, 5)
            assert isinstance(state.lane, backprop._Peers)
            with tf.GradientTape() as third:  # (a new tape: the lane is gone, each tape records as usual)
                assert state.lane is None
                z = _chain(z, 5)
            assert not isinstance(state.lane, backprop._Peers) or third._tape not in state.lane.peers
        g = inner.gradient(z, x)
    h = outer.gradient(g, x)
    want_h, want_g, _ = _want(x)
    np.testing.assert_allclose(g.numpy(), want_g.numpy(), rtol=1e-12)
    np.testing.assert_allclose(h.numpy(), want_h.numpy(), rtol=1e-12)
