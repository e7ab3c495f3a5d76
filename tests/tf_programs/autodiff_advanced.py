"""Advanced autodiff: custom gradients, nested tapes, higher order, Jacobians, Hessians, forward mode."""
import numpy as np
import tensorflow as tf


def rnd(t, nd=5):
    return np.round(np.asarray(t), nd).tolist()


# custom_gradient: gradient clipping
@tf.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return tf.clip_by_norm(dy, 0.5)
    return y, backward


v = tf.Variable(2.0)
with tf.GradientTape() as t:
    output = clip_gradients(v * v)
print(t.gradient(output, v))


@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))
    return tf.math.log(1 + e), grad


x = tf.constant([0.0, 10.0, 100.0])
with tf.GradientTape() as tape:
    tape.watch(x)
    y = log1pexp(x)
print(tape.gradient(y, x))


# custom gradient with variables (grad_fn returns (input_grads, var_grads))
wv = tf.Variable(3.0)


@tf.custom_gradient
def scaled(x):
    out = x * wv

    def grad(dy, variables=None):
        return dy * wv * 2.0, [dy * x * 10.0]
    return out, grad


with tf.GradientTape(persistent=True) as tape:
    xx = tf.constant(2.0)
    tape.watch(xx)
    yy = scaled(xx)
print(tape.gradient(yy, xx), tape.gradient(yy, wv))
del tape


# custom gradient with two inputs
@tf.custom_gradient
def mul_sg(a, b):
    def grad(dy):
        return dy * b, tf.zeros_like(b)
    return a * b, grad


a = tf.Variable([1.0, 2.0])
b = tf.Variable([3.0, 4.0])
with tf.GradientTape() as tape:
    z = tf.reduce_sum(mul_sg(a, b))
ga, gb = tape.gradient(z, [a, b])
print(ga, gb)

# recompute_grad
def block(x):
    return tf.tanh(x) * 2.0


rg = tf.recompute_grad(block)
x = tf.constant([0.1, 0.2])
with tf.GradientTape() as tape:
    tape.watch(x)
    y = tf.reduce_sum(rg(x))
print(rnd(tape.gradient(y, x)))

# Multiple tapes
x0 = tf.constant(0.0)
x1 = tf.constant(0.0)
with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
    tape0.watch(x0)
    tape1.watch(x1)
    y0 = tf.math.sin(x0)
    y1 = tf.nn.sigmoid(x1)
    y = y0 + y1
    ys = tf.reduce_sum(y)
print(tape0.gradient(ys, x0).numpy())
print(tape1.gradient(ys, x1).numpy())

# Higher-order gradients
x = tf.Variable(1.0)
with tf.GradientTape() as t2:
    with tf.GradientTape() as t1:
        y = x * x * x
    dy_dx = t1.gradient(y, x)
d2y_dx2 = t2.gradient(dy_dx, x)
print("dy_dx:", dy_dx.numpy())
print("d2y_dx2:", d2y_dx2.numpy())

x = tf.constant(0.7)
with tf.GradientTape() as g3:
    g3.watch(x)
    with tf.GradientTape() as g2:
        g2.watch(x)
        with tf.GradientTape() as g1:
            g1.watch(x)
            y = tf.tanh(x) * tf.exp(tf.sin(x))
        d1 = g1.gradient(y, x)
    d2 = g2.gradient(d1, x)
d3 = g3.gradient(d2, x)
print(rnd([d1, d2, d3], 4))

# Input gradient regularization
x = tf.random.normal([7, 5], seed=1) * 0 + tf.reshape(tf.range(35, dtype=tf.float32), [7, 5]) / 35.0
layer = tf.keras.layers.Dense(10, activation=tf.nn.relu,
                              kernel_initializer=tf.keras.initializers.Constant(0.1))
_ = layer(x)
with tf.GradientTape() as t2:
    with tf.GradientTape() as t1:
        t1.watch(x)
        y = layer(x)
        out = tf.reduce_sum(layer(x) ** 2)
    g1 = t1.gradient(out, x)
    g1_mag = tf.norm(g1)
dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)
print([var.shape for var in dg1_mag])
print(rnd(tf.reduce_sum(dg1_mag[0]), 3), rnd(tf.reduce_sum(dg1_mag[1]), 3))

# Jacobians
x = tf.linspace(-2.0, 2.0, 5)
delta = tf.Variable(0.0)
with tf.GradientTape() as tape:
    y = tf.nn.sigmoid(x + delta)
dy_dx = tape.jacobian(y, delta)
print(y.shape, dy_dx.shape)
print(rnd(dy_dx))

w = tf.Variable(tf.reshape(tf.range(6, dtype=tf.float32) / 10.0, [3, 2]))
xb = tf.constant([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
with tf.GradientTape(persistent=True) as tape:
    tape.watch(xb)
    y = tf.tanh(xb @ w)
j = tape.jacobian(y, w)
print(j.shape)
print(rnd(tf.reduce_sum(j, axis=[2, 3])))
jb = tape.jacobian(y, xb)
print(jb.shape)
jx = tape.jacobian(y, [w, xb])
print([t.shape for t in jx])
bj = tape.batch_jacobian(y, xb)
print(bj.shape)
print(rnd(bj, 4))
jnp = tape.jacobian(y, xb, experimental_use_pfor=False)
print(rnd(tf.reduce_max(tf.abs(jnp - jb))))
del tape

# unconnected jacobian
x = tf.constant([1.0, 2.0])
z = tf.constant([3.0])
with tf.GradientTape(persistent=True) as tape:
    tape.watch([x, z])
    y = x * 2.0
print(tape.jacobian(y, z))
print(tape.jacobian(y, z, unconnected_gradients=tf.UnconnectedGradients.ZERO))
del tape

# batch_jacobian on a dense layer
xb = tf.reshape(tf.range(12, dtype=tf.float32) / 12.0, [3, 4])
dense = tf.keras.layers.Dense(2, kernel_initializer=tf.keras.initializers.Constant(0.5),
                              bias_initializer="zeros", activation="tanh")
with tf.GradientTape() as tape:
    tape.watch(xb)
    yb = dense(xb)
bj = tape.batch_jacobian(yb, xb)
print(bj.shape, rnd(bj[1], 4))

# Hessian via nested jacobians
x = tf.constant([[1.0, 2.0]])
w1 = tf.Variable([[0.5, -0.3, 0.2], [0.1, 0.4, -0.6]])
w2 = tf.Variable([[1.0], [-1.0], [0.5]])
with tf.GradientTape() as t2:
    with tf.GradientTape() as t1:
        h = tf.nn.tanh(x @ w1)
        loss = tf.reduce_sum((h @ w2) ** 2)
    g = t1.gradient(loss, w1)
h1 = t2.jacobian(g, w1)
print(g.shape, h1.shape)
n = tf.reduce_prod(w1.shape)
h_mat = tf.reshape(h1, [n, n])
print(rnd(h_mat, 4))
eye_eps = tf.eye(h_mat.shape[0]) * 1e-3
update = tf.linalg.solve(h_mat + eye_eps, tf.reshape(g, [n, 1]))
print(update.shape)

# hessians
xs = tf.constant([1.0, 2.0, 3.0])
with tf.GradientTape() as t2:
    t2.watch(xs)
    with tf.GradientTape() as t1:
        t1.watch(xs)
        f = tf.reduce_sum(xs ** 3) + xs[0] * xs[1]
    gg = t1.gradient(f, xs)
print(t2.jacobian(gg, xs))

# Forward mode
x = tf.constant([1.0, 2.0, 3.0])
tangent = tf.constant([1.0, 0.0, 0.0])
with tf.autodiff.ForwardAccumulator(x, tangent) as acc:
    y = tf.reduce_sum(tf.sin(x) * x)
    z = x * x
print(rnd(acc.jvp(y)), acc.jvp(z))
print(acc.jvp(tf.constant(1.0)))
print(acc.jvp(tf.constant(1.0), unconnected_gradients=tf.UnconnectedGradients.ZERO))

v = tf.Variable([2.0, 3.0])
with tf.autodiff.ForwardAccumulator(v, tf.constant([1.0, 1.0])) as acc:
    out = tf.reduce_sum(v ** 2)
print(acc.jvp(out))

# forward-over-backward HVP
def f_hvp(w):
    return tf.reduce_sum(tf.tanh(w) ** 2)


w = tf.constant([0.2, -0.4, 0.6])
vec = tf.constant([1.0, 0.5, -1.0])
with tf.autodiff.ForwardAccumulator(w, vec) as acc:
    with tf.GradientTape() as tape:
        tape.watch(w)
        loss = f_hvp(w)
    grads = tape.gradient(loss, w)
print(rnd(acc.jvp(grads), 4))

# backward-over-forward
with tf.GradientTape() as tape:
    tape.watch(w)
    with tf.autodiff.ForwardAccumulator(w, vec) as acc:
        loss = f_hvp(w)
    jvp = acc.jvp(loss)
print(rnd(tape.gradient(jvp, w), 4))

# tf.gradients style test compute_gradient
theo, num = tf.test.compute_gradient(lambda t: tf.reduce_sum(t * t), [tf.constant([1.0, 2.0])])
print(rnd(theo[0]), np.allclose(theo[0], num[0], atol=1e-2))

# stop_gradient inside function, identity, IndexedSlices from gather
params = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
with tf.GradientTape() as tape:
    g = tf.gather(params, [0, 2, 0])
    s = tf.reduce_sum(g * tf.stop_gradient(g))
gr = tape.gradient(s, params)
print(type(gr).__name__, tf.convert_to_tensor(gr))
print(gr.indices, gr.values.shape, gr.dense_shape)
