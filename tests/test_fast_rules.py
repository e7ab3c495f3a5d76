"""The backward walk on NumPy values (nothing records it) gives bitwise the
numbers of the walk on Tensors, for every array-level twin of a rule."""

import numpy as np
import pytest

import tapeflow as tf
from tapeflow.eager import backprop, fast_rules
from tapeflow.ops import registry


def _both(fn, *args):
    """Gradients of sum(fn(*args)) w.r.t. args, by both walks."""
    out = []
    for raw in (True, False):
        backprop.raw_walk = raw
        try:
            xs = [tf.constant(a) for a in args]
            with tf.GradientTape() as tape:
                for x in xs:
                    tape.watch(x)
                y = fn(*xs)
            out.append(tape.gradient(y, xs))
        finally:
            backprop.raw_walk = True
    return out


def _same(a, b):
    assert (a is None) == (b is None)
    if a is None:
        return
    a, b = tf.convert_to_tensor(a).numpy(), tf.convert_to_tensor(b).numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4)).astype(np.float32)
B = rng.standard_normal((4,)).astype(np.float32)
P = rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
M = rng.standard_normal((2, 3, 4))
N_ = rng.standard_normal((4, 5))

CASES = {
    "sin_cos": (lambda x: tf.cos(tf.sin(x)), (A,)),
    "tanh_sigmoid_exp": (lambda x: tf.exp(tf.sigmoid(tf.tanh(x))), (A,)),
    "log_square_neg": (lambda x: -tf.square(tf.math.log(x)), (P,)),
    "relu": (lambda x: tf.nn.relu(x), (A,)),
    "mul_broadcast": (lambda x, y: x * y, (A, B)),
    "add_sub_broadcast": (lambda x, y: (x + y) - y[None, :1], (A, B)),
    "div": (lambda x, y: x / y, (A, P)),
    "div_broadcast": (lambda x, y: x / y, (P, B[:1] + 3)),
    "identity_reused": (lambda x: tf.identity(x) * x + tf.sin(x) * x, (A,)),
    "scalar_chain": (lambda x: tf.tanh(tf.sin(x) * 0.9 + 0.1), (np.float32(0.3),)),
    "float16": (lambda x: tf.tanh(x) * x, (A.astype(np.float16),)),
    "float64": (lambda x: tf.sigmoid(x) / (x * x + 1.0), (M,)),
    "matmul_batch": (lambda x, y: tf.matmul(x, y), (M, N_)),
    "matmul_ta": (lambda x, y: tf.matmul(x, y, transpose_a=True), (N_.T.copy(), N_.T.copy())),
    "matmul_tb": (lambda x, y: tf.matmul(x, y, transpose_b=True), (N_, N_)),
    "matmul_tatb": (lambda x, y: tf.matmul(x, y, transpose_a=True, transpose_b=True), (N_, N_.T.copy())),
    "sum_mean": (lambda x: tf.reduce_sum(x, axis=1) + tf.reduce_mean(x, axis=[0, 2], keepdims=True)[0, 0], (M,)),
    "mean_all": (lambda x: tf.reduce_mean(x) * tf.reduce_sum(x), (A,)),
    "xent": (
        lambda x, y: tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(tf.stop_gradient(y), x)),
        (A, tf.nn.softmax(P).numpy()),
    ),
    "xent_labels": (
        lambda x, y: tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, x)),
        (A, tf.nn.softmax(P).numpy()),
    ),
    "gather_mixed": (lambda x: tf.reduce_sum(tf.gather(x, [0, 2, 0])) + tf.reduce_sum(x * x), (A,)),
    "gather_only": (lambda x: tf.gather(x, [1, 1]) * 2.0, (A,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_raw_walk_matches_tensor_walk(name):
    fn, args = CASES[name]
    raw, ref = _both(fn, *args)
    for a, b in zip(raw, ref):
        _same(a, b)


def test_every_twin_is_registered():
    names = [
        "AddV2",
        "Sub",
        "Mul",
        "RealDiv",
        "Neg",
        "Identity",
        "Sin",
        "Cos",
        "Tanh",
        "Sigmoid",
        "Exp",
        "Log",
        "Square",
        "Relu",
        "BatchMatMulV2",
        "Sum",
        "Mean",
        "SoftmaxCrossEntropyWithLogits",
    ]
    for n in names:
        assert registry.get_gradient(n).fn in fast_rules.RAW, n


def test_overridden_rule_loses_its_twin():
    spec = registry._GRADS["Sin"]
    try:

        @tf.RegisterGradient("Sin", override=True)
        def _g(op, dy):
            return dy * 3.0

        x = tf.constant(0.5)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.sin(x)
        assert tape.gradient(y, x).numpy() == np.float32(3.0)
    finally:
        registry._GRADS["Sin"] = spec


def test_persistent_and_nested_tapes_use_tensor_walk():
    x = tf.constant(0.7)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.sin(x) * x
        g = inner.gradient(y, x)  # recorded by outer: must be Tensors on its tape
    gg = outer.gradient(g, x)
    xv = np.float32(0.7)
    np.testing.assert_allclose(gg.numpy(), -xv * np.sin(xv) + 2 * np.cos(xv), rtol=1e-6)
