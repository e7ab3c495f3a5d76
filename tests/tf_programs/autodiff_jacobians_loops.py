"""Jacobians through tf.function loops and tf.cond, a Keras Hessian, gradients of map_fn/scan/foldl."""
import numpy as np
import tensorflow as tf

@tf.function
def iterate(x):
    for _ in tf.range(3):
        x = tf.sin(x) * 1.5
    return x

x = tf.constant([0.3, 0.6])
with tf.GradientTape(persistent=True) as t:
    t.watch(x)
    y = iterate(x)
    z = tf.cond(tf.reduce_sum(x) > 0, lambda: x ** 2, lambda: x)
print(np.round(t.jacobian(y, x).numpy(), 5).tolist())
print(np.round(t.jacobian(y, x, experimental_use_pfor=False).numpy(), 5).tolist())
print(t.jacobian(z, x))
del t

model = tf.keras.Sequential([tf.keras.Input((2,)),
                             tf.keras.layers.Dense(2, activation="tanh", kernel_initializer="ones"),
                             tf.keras.layers.Dense(1, kernel_initializer="ones")])
xb = tf.constant([[0.1, 0.2]])
with tf.GradientTape() as t2:
    with tf.GradientTape() as t1:
        loss = tf.reduce_sum(model(xb) ** 2)
    g = t1.gradient(loss, model.trainable_variables[0])
h = t2.jacobian(g, model.trainable_variables[0])
print(h.shape, np.round(tf.reshape(h, [4, 4]).numpy(), 4).tolist())

# gradient through tf.map_fn, tf.scan, tf.foldl
x = tf.constant([1.0, 2.0, 3.0])
with tf.GradientTape(persistent=True) as t:
    t.watch(x)
    m = tf.map_fn(lambda e: e ** 2, x)
    s = tf.scan(lambda a, e: a * e, x)
    f = tf.foldl(lambda a, e: a + e ** 3, x, initializer=0.0)
print(t.gradient(m, x), t.gradient(s, x), t.gradient(f, x))
del t
