"""Gradient edge cases a TF user meets: ties, kinks, NaNs through tf.where, norms at zero,
integer and bool inputs, dtype rules, tf.gradients/hessians in graphs, reprs of results."""
import numpy as np
import tensorflow as tf


def grad(f, *xs):
    xs = [tf.convert_to_tensor(x) for x in xs]
    with tf.GradientTape() as t:
        for x in xs:
            t.watch(x)
        y = f(*xs)
    return t.gradient(y, xs if len(xs) > 1 else xs[0])


def show(name, g):
    if isinstance(g, list):
        print(name, [None if e is None else (e.dtype.name, np.round(e.numpy(), 5).tolist()) for e in g])
    elif g is None:
        print(name, None)
    else:
        print(name, g.dtype.name, g.shape, np.round(g.numpy(), 5).tolist())


show("relu@0", grad(tf.nn.relu, [-1.0, 0.0, 1.0]))
show("abs@0", grad(tf.abs, [-2.0, 0.0, 2.0]))
show("sqrt@0", grad(tf.sqrt, [0.0, 4.0]))
show("maximum tie", grad(lambda a, b: tf.maximum(a, b), [1.0, 2.0, 3.0], [1.0, 1.0, 4.0]))
show("minimum tie", grad(lambda a, b: tf.minimum(a, b), [1.0, 2.0, 3.0], [1.0, 1.0, 4.0]))
show("reduce_max tie", grad(tf.reduce_max, [1.0, 3.0, 3.0]))
show("reduce_min tie", grad(lambda x: tf.reduce_min(x, axis=1), [[2.0, 2.0], [1.0, 5.0]]))
show("clip", grad(lambda x: tf.clip_by_value(x, 0.0, 1.0), [-1.0, 0.0, 0.5, 1.0, 2.0]))
show("norm@0", grad(tf.norm, [0.0, 0.0]))
show("norm", grad(tf.norm, [3.0, 4.0]))
show("l2_normalize", grad(lambda x: tf.reduce_sum(tf.math.l2_normalize(x) * [1.0, 0.0]), [3.0, 4.0]))
show("where nan", grad(lambda x: tf.where(x > 0, tf.sqrt(x), 0.0), [-1.0, 4.0]))
show("where safe", grad(lambda x: tf.where(x > 0, tf.sqrt(tf.where(x > 0, x, 1.0)), 0.0), [-1.0, 4.0]))
show("log@0", grad(tf.math.log, [0.0, 1.0]))
show("xlogy", grad(lambda x: tf.math.xlogy(x, x), [0.0, 1.0]))
show("divide_no_nan", grad(lambda a, b: tf.math.divide_no_nan(a, b), [1.0, 2.0], [0.0, 4.0]))
show("pow 0^0", grad(lambda x: x ** 0.0, [0.0, 2.0]))
show("pow x^2 at 0", grad(lambda x: tf.pow(x, 2.0), [0.0, -3.0]))
show("softmax", grad(lambda x: tf.nn.softmax(x)[0], [1.0, 2.0, 3.0]))
show("log_softmax", grad(lambda x: tf.nn.log_softmax(x)[1], [1.0, 2.0, 3.0]))
show("logsumexp", grad(tf.reduce_logsumexp, [1.0, 1.0]))
show("sigmoid_ce", grad(lambda z: tf.reduce_sum(tf.nn.sigmoid_cross_entropy_with_logits(labels=[1.0, 0.0], logits=z)),
                         [0.5, -0.5]))
show("sparse_ce", grad(
    lambda z: tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[2, 0], logits=z)),
    [[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]]))
show("matmul", grad(lambda a, b: tf.matmul(a, b), [[1.0, 2.0]], [[3.0], [4.0]]))
show("reduce_prod 0", grad(tf.reduce_prod, [0.0, 2.0, 3.0]))
show("cumsum", grad(lambda x: tf.cumsum(x, reverse=True) * [1.0, 2.0, 3.0], [1.0, 1.0, 1.0]))
show("concat/split", grad(lambda x: tf.split(tf.concat([x, x * 2], 0), 2)[1], [1.0, 2.0]))
print("gather_nd", tf.convert_to_tensor(grad(lambda x: tf.gather_nd(x, [[0, 1], [1, 0]]), [[1.0, 2.0], [3.0, 4.0]])))
show("tile", grad(lambda x: tf.tile(x, [3]), [1.0, 2.0]))
show("broadcast_to", grad(lambda x: tf.broadcast_to(x, [3, 2]), [1.0, 2.0]))
show("reshape/transpose", grad(lambda x: tf.transpose(tf.reshape(x, [2, 3])) * tf.range(6.0)[:, None][:3],
                                tf.range(6.0)))
show("einsum", grad(lambda a, b: tf.einsum("ij,jk->ik", a, b), [[1.0, 2.0]], [[1.0, 0.0], [0.0, 1.0]]))
show("atan2", grad(lambda y, x: tf.math.atan2(y, x), [1.0], [1.0]))
show("erf", grad(tf.math.erf, [0.0, 1.0]))
show("floor/round/sign", grad(lambda x: tf.floor(x) + tf.round(x) + tf.sign(x), [1.5]))
show("cast int", grad(lambda x: tf.cast(tf.cast(x, tf.int32), tf.float32) * x, [1.5]))
show("cast f64", grad(lambda x: tf.cast(x, tf.float64) ** 2, [1.5]))
show("float64", grad(lambda x: tf.reduce_sum(tf.sin(x) * tf.exp(x)), np.array([0.1, 0.2])))
show("int source", grad(lambda x: x * 2, tf.constant([1, 2])))
show("bool", grad(lambda x: tf.cast(x, tf.float32), tf.constant([True, False])))

# dtype rules
try:
    tf.constant(1.0) + tf.constant(1.0, tf.float64)
except tf.errors.InvalidArgumentError as e:
    print("mixed dtypes:", type(e).__name__)
try:
    tf.constant([1, 2]) * 0.5
except (TypeError, ValueError) as e:
    print("int * 0.5:", type(e).__name__)
print((tf.constant([1, 2]) / 2).dtype, (tf.constant([1.0]) * 2).dtype, tf.constant(2) ** 2)
v64 = tf.Variable(np.float64(1.5))
print(v64.dtype, (v64 * 2).dtype, (2.0 * v64).numpy())

# Gradient wrt a variable used twice, and through assign
v = tf.Variable([1.0, 2.0])
with tf.GradientTape() as tape:
    y = tf.reduce_sum(v * v) + tf.reduce_sum(v)
print(tape.gradient(y, v))

# Target is a variable itself / source equals target
with tf.GradientTape() as tape:
    tape.watch(v)
print(tape.gradient(v, v))
x = tf.constant(3.0)
with tf.GradientTape() as tape:
    tape.watch(x)
print(tape.gradient(x, x))

# Non-float target
with tf.GradientTape() as tape:
    tape.watch(x)
    n = tf.cast(x, tf.int32)
print(tape.gradient(n, x))

# tf.gradients and tf.hessians inside tf.function
@tf.function
def sym_grads(x):
    y = tf.reduce_sum(x ** 3)
    g = tf.gradients(y, x)[0]
    h = tf.hessians(y, x)[0]
    return g, h


g, h = sym_grads(tf.constant([1.0, 2.0]))
print(g, h)


@tf.function
def grads_stop(x):
    a = x * 2
    b = a * 3
    return tf.gradients(b, x, stop_gradients=[a]), tf.gradients(b, [x, a])


print(grads_stop(tf.constant(1.0)))


@tf.function
def unconnected(x, z):
    return tf.gradients(x * 2, z), tf.gradients(x * 2, z, unconnected_gradients="zero")


print(unconnected(tf.constant(1.0), tf.constant(2.0)))

# Gradient reprs
gr = grad(lambda x: x * x, 3.0)
print(repr(gr))
print(repr(tf.Variable([[1.0, 2.0]], name="kernel")))
print(repr(tf.Variable(1, name="step", trainable=False)))
print(tf.Variable(2.5).trainable, tf.Variable(2.5, trainable=False).trainable)

# jacobian of scalar, jacobian with int source, batch_jacobian errors
x = tf.constant([1.0, 2.0])
with tf.GradientTape(persistent=True) as t:
    t.watch(x)
    s = tf.reduce_sum(x ** 2)
    y = tf.stack([x * 2, x * 3])  # shape (2, 2)
print(t.jacobian(s, x))
print(t.jacobian(y, x).shape)
print(t.batch_jacobian(y, tf.stack([x, x]) if False else x[None, :] * tf.ones([2, 1])) if False else "skip")
del t

# ForwardAccumulator with multiple primals and nested structures
a = tf.constant(2.0)
b = tf.constant([1.0, 3.0])
with tf.autodiff.ForwardAccumulator(primals=[a, b], tangents=[tf.constant(1.0), tf.constant([0.0, 1.0])]) as acc:
    out = {"p": a * b, "s": tf.reduce_sum(b ** 2) + a}
print(acc.jvp(out))

# forward mode through tf.function
@tf.function
def fwd_fn(x):
    return tf.sin(x) * x


x = tf.constant([0.5, 1.0])
with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
    y = fwd_fn(x)
print(np.round(acc.jvp(y).numpy(), 5))

# Nested persistent tapes, gradient of gradient of a vector function
x = tf.Variable([0.5, -0.5])
with tf.GradientTape(persistent=True) as outer:
    with tf.GradientTape() as inner:
        y = tf.reduce_sum(tf.sin(x) * tf.cos(x))
    g = inner.gradient(y, x)
    gsum = tf.reduce_sum(g)
print(np.round(outer.gradient(gsum, x).numpy(), 5))
print(np.round(outer.jacobian(g, x).numpy(), 5))
del outer
