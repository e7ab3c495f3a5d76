"""Custom gradients in depth: structures, None grads, variables, higher order, inside tf.function,
tf.RegisterGradient-free patterns, stop_gradient tricks, straight-through estimators, gradient clipping."""
import numpy as np
import tensorflow as tf


def r(t, nd=5):
    return None if t is None else np.round(np.asarray(t), nd).tolist()


# Straight-through estimator
@tf.custom_gradient
def ste_round(x):
    def grad(dy):
        return dy
    return tf.round(x), grad


x = tf.Variable([0.2, 0.7, 1.5])
with tf.GradientTape() as tape:
    y = tf.reduce_sum(ste_round(x) * [1.0, 2.0, 3.0])
print(y.numpy(), r(tape.gradient(y, x)))

# Same via stop_gradient trick
with tf.GradientTape() as tape:
    q = x + tf.stop_gradient(tf.round(x) - x)
    y = tf.reduce_sum(q * [1.0, 2.0, 3.0])
print(y.numpy(), r(tape.gradient(y, x)))


# Gradient reversal layer
@tf.custom_gradient
def grad_reverse(x, scale=1.0):
    def grad(dy):
        return -dy * scale
    return tf.identity(x), grad


with tf.GradientTape() as tape:
    y = tf.reduce_sum(grad_reverse(x) ** 2)
print(r(tape.gradient(y, x)))


# Custom gradient returning None for one input
@tf.custom_gradient
def f_none(a, b):
    def grad(dy):
        return dy * 2.0, None
    return a * 2.0 + b, grad


a = tf.constant(1.0)
b = tf.constant(2.0)
with tf.GradientTape(persistent=True) as tape:
    tape.watch([a, b])
    y = f_none(a, b)
print(tape.gradient(y, a), tape.gradient(y, b))
del tape


# Custom gradient with a non-scalar output and upstream gradient
@tf.custom_gradient
def outer_prod(u, v):
    out = tf.tensordot(u, v, axes=0)

    def grad(dy):
        return tf.linalg.matvec(dy, v), tf.linalg.matvec(dy, u, transpose_a=True)
    return out, grad


u = tf.constant([1.0, 2.0])
vv = tf.constant([3.0, 4.0, 5.0])
with tf.GradientTape() as tape:
    tape.watch([u, vv])
    o = outer_prod(u, vv)
    loss = tf.reduce_sum(o * tf.reshape(tf.range(6.0), [2, 3]))
gu, gv = tape.gradient(loss, [u, vv])
print(r(gu), r(gv))


# Higher-order: the custom gradient's own gradient (written with TF ops)
@tf.custom_gradient
def my_softplus(x):
    def grad(dy):
        return dy * tf.sigmoid(x)
    return tf.math.log1p(tf.exp(x)), grad


x = tf.constant([0.0, 1.0])
with tf.GradientTape() as t2:
    t2.watch(x)
    with tf.GradientTape() as t1:
        t1.watch(x)
        y = tf.reduce_sum(my_softplus(x))
    g = t1.gradient(y, x)
print(r(g), r(t2.gradient(g, x)))


# Custom gradient with variables used inside
w = tf.Variable(2.0)


@tf.custom_gradient
def lin(x):
    y = w * x

    def grad(dy, variables):
        assert len(variables) == 1
        return dy * w, [dy * x * 100.0]
    return y, grad


with tf.GradientTape() as tape:
    xx = tf.constant(3.0)
    tape.watch(xx)
    y = lin(xx)
gx, gw = tape.gradient(y, [xx, w])
print(gx.numpy(), gw.numpy())


# grad_fn without `variables` while variables are used -> TypeError
@tf.custom_gradient
def lin_bad(x):
    y = w * x

    def grad(dy):
        return dy * w
    return y, grad


try:
    with tf.GradientTape() as tape:
        y = lin_bad(tf.constant(3.0))
    tape.gradient(y, w)
    print("no error")
except TypeError as e:
    print("missing variables kwarg:", type(e).__name__)


# custom_gradient used by a tape inside tf.function
@tf.custom_gradient
def clip_grad(t):
    def grad(dy):
        return tf.clip_by_value(dy, -0.5, 0.5)
    return t, grad


@tf.function
def clipped_grads(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(clip_grad(x) * [1.0, -3.0, 0.2])
    return y, tape.gradient(y, x)


y, gx = clipped_grads(tf.constant([1.0, 1.0, 1.0]))
print(y.numpy(), r(gx))


# custom gradient with multiple outputs
@tf.custom_gradient
def two_out(x):
    def grad(dy1, dy2):
        return dy1 * 10.0 + dy2 * 100.0
    return (x * 2.0, x * 3.0), grad


x = tf.constant(1.0)
with tf.GradientTape() as tape:
    tape.watch(x)
    p, q = two_out(x)
    y = p + q
print(tape.gradient(y, x).numpy())
with tf.GradientTape() as tape:
    tape.watch(x)
    p, q = two_out(x)
print(tape.gradient(p, x).numpy())

# Numerically stable norm with custom gradient (TF guide style)
@tf.custom_gradient
def safe_norm(x):
    n = tf.norm(x)

    def grad(dy):
        return dy * tf.where(n > 0, x / tf.maximum(n, 1e-12), tf.zeros_like(x))
    return n, grad


for vec in ([0.0, 0.0], [3.0, 4.0]):
    xx = tf.constant(vec)
    with tf.GradientTape() as tape:
        tape.watch(xx)
        y = safe_norm(xx)
    print(y.numpy(), r(tape.gradient(y, xx)))


# recompute_grad with a Keras layer's variables
dense = tf.keras.layers.Dense(3, kernel_initializer=tf.keras.initializers.Constant(0.25), use_bias=False)
dense.build((None, 2))
block = tf.recompute_grad(lambda t: tf.nn.relu(dense(t)))
x = tf.constant([[1.0, -2.0], [3.0, 1.0]])
with tf.GradientTape() as tape:
    tape.watch(x)
    y = tf.reduce_sum(block(x))
gx, gk = tape.gradient(y, [x, dense.kernel])
print(r(gx), r(gk))

# Forward mode through a custom gradient (uses the custom backward via double backprop)
x = tf.constant([0.0, 1.0])
with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 1.0])) as acc:
    y = my_softplus(x)
print(r(acc.jvp(y)))

# tf.test.compute_gradient on a custom gradient function
theo, num = tf.test.compute_gradient(my_softplus, [tf.constant([0.5, -0.5])])
print(r(theo[0], 4), bool(np.allclose(theo[0], num[0], atol=1e-3)))
