"""Gradient tape basics: watching, variables, structures, persistence, None/ZERO grads."""
import numpy as np
import tensorflow as tf


def show(name, v):
    print(name, v)


x = tf.Variable(3.0)
with tf.GradientTape() as tape:
    y = x**2
show("dy/dx", tape.gradient(y, x))

w = tf.Variable(tf.ones((3, 2)), name="w")
b = tf.Variable(tf.zeros(2, dtype=tf.float32), name="b")
xin = [[1.0, 2.0, 3.0]]
with tf.GradientTape(persistent=True) as tape:
    y = xin @ w + b
    loss = tf.reduce_mean(y**2)
[dl_dw, dl_db] = tape.gradient(loss, [w, b])
show("dl_dw", dl_dw)
show("dl_db", dl_db)
grads = tape.gradient(loss, {"w": w, "b": b})
show("dict keys", sorted(grads.keys()))
show("dict b", grads["b"])
show("tuple", type(tape.gradient(loss, (w, b))).__name__)
del tape

# Watching: constants need watch, non-trainable vars never.
x0 = tf.Variable(3.0, name="x0")
x1 = tf.Variable(3.0, name="x1", trainable=False)
x2 = tf.Variable(2.0, name="x2") + 1.0
x3 = tf.constant(3.0, name="x3")
with tf.GradientTape() as tape:
    y = (x0**2) + (x1**2) + (x2**2)
print([var.name for var in tape.watched_variables()])
grad = tape.gradient(y, [x0, x1, x2, x3])
for g in grad:
    print(g)

x = tf.constant(3.0)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = x**2
show("watched const", tape.gradient(y, x))

# watch_accessed_variables=False
x0 = tf.Variable(0.0)
x1 = tf.Variable(10.0)
with tf.GradientTape(watch_accessed_variables=False) as tape:
    tape.watch(x1)
    y0 = tf.math.sin(x0)
    y1 = tf.nn.softplus(x1)
    y = y0 + y1
    ys = tf.reduce_sum(y)
grad = tape.gradient(ys, {"x0": x0, "x1": x1})
print("dy/dx0:", grad["x0"])
print("dy/dx1:", grad["x1"].numpy())

# Intermediate results with persistent tape
x = tf.constant(3.0)
with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    y = x * x
    z = y * y
print(tape.gradient(z, y).numpy())
print(tape.gradient(z, x).numpy())
print(tape.gradient(y, x).numpy())
x = tf.constant([1, 3.0])
with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    y = x * x
    z = y * y
print(tape.gradient(z, x).numpy())
print(tape.gradient(y, x).numpy())
del tape

# Non-persistent tape second call
x = tf.constant(2.0)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = x * x
tape.gradient(y, x)
try:
    tape.gradient(y, x)
except Exception as e:
    print("second call:", type(e).__name__)

# Non-scalar targets
x = tf.Variable(2.0)
with tf.GradientTape(persistent=True) as tape:
    y0 = x**2
    y1 = 1 / x
print(tape.gradient(y0, x).numpy())
print(tape.gradient(y1, x).numpy())
print(tape.gradient({"y0": y0, "y1": y1}, x).numpy())
with tf.GradientTape() as tape:
    y = x * [3.0, 4.0]
print(tape.gradient(y, x).numpy())

x = tf.linspace(-5.0, 5.0, 9)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = tf.nn.sigmoid(x)
dy_dx = tape.gradient(y, x)
print(dy_dx.shape, dy_dx.dtype, np.round(dy_dx.numpy(), 6))

# Control flow
x = tf.constant(1.0)
v0 = tf.Variable(2.0)
v1 = tf.Variable(2.0)
with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    if x > 0.0:
        result = v0
    else:
        result = v1**2
dv0, dv1 = tape.gradient(result, [v0, v1])
print(dv0)
print(dv1)
dx = tape.gradient(result, x)
print(dx)

# None gradients: various causes
x = tf.Variable(2.0)
y = tf.Variable(3.0)
with tf.GradientTape() as tape:
    z = y * y
print(tape.gradient(z, x))

x = tf.Variable(2.0)
for epoch in range(2):
    with tf.GradientTape() as tape:
        y = x + 1
    print(isinstance(x, tf.Variable), isinstance(x, tf.Tensor))
    print(tape.gradient(y, x))
    x = x + 1

x = tf.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=tf.float32)
with tf.GradientTape() as tape:
    x2 = x**2
    y = np.mean(x2, axis=0)
    y = tf.reduce_mean(y, axis=0)
print(tape.gradient(y, x))

x = tf.constant(10)
with tf.GradientTape() as g:
    g.watch(x)
    y = x * x
print(g.gradient(y, x))

x0 = tf.Variable(3.0)
x1 = tf.Variable(0.0)
with tf.GradientTape() as tape:
    x1.assign_add(x0)
    y = x1**2
print(tape.gradient(y, x0))

x = tf.Variable([2.0, 2.0])
y = tf.Variable(3.0)
with tf.GradientTape() as tape:
    z = y**2
print(tape.gradient(z, x, unconnected_gradients=tf.UnconnectedGradients.ZERO))
with tf.GradientTape() as tape:
    z = y**2
print(tape.gradient(z, [x, y], unconnected_gradients="zero"))
print(tf.UnconnectedGradients.NONE, tf.UnconnectedGradients.ZERO.value)

# int / round / argmax / cast give None
x = tf.Variable([1.5, 2.5, -0.5])
with tf.GradientTape(persistent=True) as tape:
    r = tf.round(x)
    a = tf.cast(tf.argmax(x), tf.float32)
    c = tf.cast(x, tf.int32)
    f = tf.floor(x)
    s = tf.reduce_sum(r) + a
print(tape.gradient(r, x))
print(tape.gradient(s, x))
print(tape.gradient(c, x))
print(tape.gradient(f, x))
del tape

# stop_gradient and stop_recording, reset
x = tf.Variable(2.0)
y = tf.Variable(3.0)
with tf.GradientTape() as t:
    x_sq = x * x
    with t.stop_recording():
        y_sq = y * y
    z = x_sq + y_sq
grad = t.gradient(z, {"x": x, "y": y})
print("dz/dx:", grad["x"])
print("dz/dy:", grad["y"])

reset = True
with tf.GradientTape() as t:
    y_sq = y * y
    if reset:
        t.reset()
    z = x * x + y_sq
grad = t.gradient(z, {"x": x, "y": y})
print("dz/dx:", grad["x"])
print("dz/dy:", grad["y"])

with tf.GradientTape() as t:
    y_sq = y**2
    z = x**2 + tf.stop_gradient(y_sq)
grad = t.gradient(z, {"x": x, "y": y})
print("dz/dx:", grad["x"])
print("dz/dy:", grad["y"])

# output_gradients
x = tf.constant([1.0, 2.0, 3.0])
with tf.GradientTape() as t:
    t.watch(x)
    y = x**3
print(t.gradient(y, x, output_gradients=tf.constant([1.0, 0.5, 0.0])))

# float64 and dtype checks
x = tf.Variable(np.array([0.5, 1.5]))
with tf.GradientTape() as t:
    y = tf.reduce_prod(tf.exp(x) * tf.sin(x))
g = t.gradient(y, x)
print(g.dtype, np.round(g.numpy(), 6))

# Gradient of variable read inside tf.Module
class Lin(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[1.0, -1.0]], name="kern")
        self.b = tf.Variable([0.5], name="bias")

    def __call__(self, x):
        return tf.matmul(x, self.w, transpose_b=True) + self.b


m = Lin()
with tf.GradientTape() as tape:
    out = tf.reduce_sum(tf.square(m(tf.constant([[2.0, 1.0], [0.0, 3.0]]))))
gs = tape.gradient(out, m.trainable_variables)
print([v.name for v in m.trainable_variables])
for g in gs:
    print(g)
