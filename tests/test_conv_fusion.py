"""Compiled graphs run Relu(AddV2(Conv2D(x, w), b)) as one fused kernel call (graph/compiler.py)."""

import numpy as np

import tapeflow as tf
from tapeflow.graph.compiler import compile_graph

rng = np.random.default_rng(0)
X = rng.standard_normal((5, 9, 9, 3)).astype(np.float32)
X2 = rng.standard_normal((5, 9, 9, 8)).astype(np.float32)
W = rng.standard_normal((3, 3, 3, 8)).astype(np.float32)
W2 = rng.standard_normal((3, 3, 8, 6)).astype(np.float32)
B = rng.standard_normal(8).astype(np.float32)


def compiled(fn, *args):
    gf = tf.function(fn).get_concrete_function(*[tf.constant(a) for a in args])._gf
    return compile_graph(gf.graph, gf.inputs, gf.outputs)


def layer(x, w, b):
    return tf.nn.relu(tf.nn.conv2d(x, w, 1, "SAME") + b)


def test_conv_bias_relu_is_one_call_with_the_same_values_and_gradients():
    cg = compiled(layer, X, W, B)
    assert "_FusedConv2D" in {op.type for op in cg.line_ops.values()} and cg.num_ops == 1
    want = layer(tf.constant(X), tf.constant(W), tf.constant(B)).numpy()
    np.testing.assert_array_equal(cg(X, W, B)[0], want)
    np.testing.assert_array_equal(
        compiled(layer, X2, W2, B[:6])(X2, W2, B[:6])[0],
        layer(tf.constant(X2), tf.constant(W2), tf.constant(B[:6])).numpy(),
    )

    def grads(x, w, b):
        with tf.GradientTape() as tape:
            tape.watch([x, w, b])
            loss = tf.reduce_sum(tf.nn.max_pool2d(layer(x, w, b), 2, 2, "VALID") ** 2)
        return tape.gradient(loss, [x, w, b])

    eager = [g.numpy() for g in grads(*[tf.constant(a) for a in (X, W, B)])]
    cg = compiled(grads, X, W, B)
    assert "_FusedConv2D" in {op.type for op in cg.line_ops.values()}
    for got, want in zip(cg(X, W, B), eager):
        np.testing.assert_array_equal(got, want)


def test_no_fusion_when_an_intermediate_is_used_or_the_bias_is_not_per_channel():
    def both(x, w, b):
        y = tf.nn.conv2d(x, w, 1, "SAME")
        return tf.nn.relu(y + b), y

    def scalar_bias(x, w):
        return tf.nn.relu(tf.nn.conv2d(x, w, 1, "SAME") + 0.5)

    for fn, args in (
        (both, (X, W, B)),
        (scalar_bias, (X, W)),
        (layer, (X.astype(np.float16), W.astype(np.float16), B.astype(np.float16))),
    ):
        cg = compiled(fn, *args)
        types = [op.type for op in cg.line_ops.values()]
        assert "_FusedConv2D" not in types and "Conv2D" in types and "Relu" in types
        want = fn(*[tf.constant(a) for a in args])
        for got, w in zip(cg(*args), tf.nest.flatten(want)):
            np.testing.assert_array_equal(got, w.numpy())


def test_conv_bias_relu_max_pool_of_a_forward_only_graph_is_one_call_with_the_same_values():
    def pooled(x, w, b):
        return tf.nn.max_pool2d(layer(x, w, b), 2, 2, "VALID")

    cg = compiled(pooled, X, W, B)
    assert cg.num_ops == 1 and "pool_ksize" in next(iter(cg.line_ops.values())).attrs
    np.testing.assert_array_equal(cg(X, W, B)[0], pooled(tf.constant(X), tf.constant(W), tf.constant(B)).numpy())
    # max pooling's own rules for NaN windows (the lowest float, then the ReLU's 0 here) keep the ops' order
    x = X.copy()
    x[0, :4, :4, :] = np.nan
    for b in (B, np.where(np.arange(8) == 3, np.inf, B).astype(np.float32)):
        want = pooled(tf.constant(x), tf.constant(W), tf.constant(b)).numpy()
        np.testing.assert_array_equal(cg(x, W, b)[0], want)
