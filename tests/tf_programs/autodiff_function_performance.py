"""'Better performance with tf.function': retracing on Python objects and methods, relaxed shapes,
signatures with nested specs, training loops in tf.function, Keras layers with tapes."""
import sys

import numpy as np
import tensorflow as tf

out = sys.stdout


# Retracing with Python objects: hashed by value (ints) and by identity (objects)
@tf.function
def scale(x, factor):
    print("tracing scale", factor)
    return x * factor


for f in [2.0, 2.0, 3.0]:
    print(scale(tf.constant(1.0), f).numpy())
print("scale traces", scale.experimental_get_tracing_count())


class Config:
    def __init__(self, k):
        self.k = k


c1, c2 = Config(1.0), Config(1.0)


@tf.function
def use_cfg(x, cfg):
    return x + cfg.k


one = tf.constant(1.0)
print(use_cfg(one, c1).numpy(), use_cfg(one, c1).numpy(), use_cfg(one, c2).numpy())
print("use_cfg traces", use_cfg.experimental_get_tracing_count())


# Methods: one Function per class, traced per instance
class Scaler(tf.Module):
    def __init__(self, s):
        super().__init__()
        self.s = tf.Variable(s)

    @tf.function
    def __call__(self, x):
        return x * self.s


a, b = Scaler(2.0), Scaler(5.0)
print(a(tf.constant(3.0)).numpy(), b(tf.constant(3.0)).numpy())
a.s.assign(4.0)
print(a(tf.constant(3.0)).numpy())

# Shapes: retrace on new shape, then relaxed (None) shapes
@tf.function
def total(x):
    print("tracing total", x.shape)
    return tf.reduce_sum(x)


total(tf.ones([2]))
total(tf.ones([3]))
total(tf.ones([4]))
total(tf.ones([2, 2]))
print("total traces", total.experimental_get_tracing_count())


# Nested input_signature
@tf.function(input_signature=[{"a": tf.TensorSpec([None], tf.float32), "b": tf.TensorSpec([], tf.int32)}])
def nested(d):
    return tf.reduce_sum(d["a"]) * tf.cast(d["b"], tf.float32)


print(nested({"a": tf.constant([1.0, 2.0]), "b": tf.constant(3)}).numpy())
print(nested({"a": tf.constant([1.0]), "b": tf.constant(2)}).numpy())
print("nested traces", nested.experimental_get_tracing_count())

# Python float args in an input_signature'd function are converted
print(nested({"a": [1.0, 1.0], "b": 4}).numpy())


# A full training loop in tf.function with a Keras model and optimizer
tf.random.set_seed(0)
xs = np.linspace(-1, 1, 32).astype("float32").reshape(-1, 1)
ys = 3.0 * xs - 0.5
model = tf.keras.Sequential([tf.keras.layers.Dense(1, kernel_initializer="zeros", bias_initializer="zeros")])
opt = tf.keras.optimizers.SGD(learning_rate=0.5)
loss_fn = tf.keras.losses.MeanSquaredError()


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        pred = model(x, training=True)
        loss = loss_fn(y, pred)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss


losses = [float(train_step(xs, ys)) for _ in range(20)]
print([round(v, 5) for v in losses[:3]], round(losses[-1], 6))
print(np.round(model.layers[0].kernel.numpy(), 4).tolist(), np.round(model.layers[0].bias.numpy(), 4).tolist())
print("train_step traces", train_step.experimental_get_tracing_count())
print(int(opt.iterations.numpy()))


# Loop inside tf.function over a tensor of batches
@tf.function
def epoch(xb, yb):
    total_loss = tf.constant(0.0)
    for i in tf.range(tf.shape(xb)[0]):
        total_loss += train_step(xb[i], yb[i])
    return total_loss / tf.cast(tf.shape(xb)[0], tf.float32)


print(round(float(epoch(tf.reshape(xs, [4, 8, 1]), tf.reshape(ys, [4, 8, 1]))), 6))
print(int(opt.iterations.numpy()))


# Gradients of a Keras layer's outputs wrt inputs and weights
layer = tf.keras.layers.Dense(2, activation="tanh", kernel_initializer=tf.keras.initializers.Constant(0.3),
                              bias_initializer=tf.keras.initializers.Constant(-0.1))
x = tf.constant([[1.0, 2.0, 3.0]])
with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    y = layer(x)
    loss = tf.reduce_mean(y ** 2)
print([v.name for v in layer.trainable_variables])
gk, gb = tape.gradient(loss, layer.trainable_variables)
print(gk.shape, np.round(gk.numpy(), 5).tolist(), np.round(gb.numpy(), 5).tolist())
print(np.round(tape.gradient(loss, x).numpy(), 5).tolist())
del tape


# tf.Module with tf.function and trainable_variables ordering
class MLP(tf.Module):
    def __init__(self):
        super().__init__(name="mlp")
        self.w1 = tf.Variable(tf.ones([2, 3]) * 0.1, name="w1")
        self.b1 = tf.Variable(tf.zeros([3]), name="b1")
        self.w2 = tf.Variable(tf.ones([3, 1]) * 0.2, name="w2")
        self.frozen = tf.Variable(1.0, trainable=False, name="frozen")

    @tf.function(input_signature=[tf.TensorSpec([None, 2])])
    def __call__(self, x):
        return tf.nn.relu(x @ self.w1 + self.b1) @ self.w2 * self.frozen


mlp = MLP()
print([v.name for v in mlp.trainable_variables], [v.name for v in mlp.variables])
with tf.GradientTape() as tape:
    o = tf.reduce_sum(mlp(tf.constant([[1.0, 2.0], [3.0, -4.0]])))
gs = tape.gradient(o, mlp.trainable_variables)
print([np.round(g.numpy(), 4).tolist() for g in gs])
cf = mlp.__call__.get_concrete_function()
print(cf.structured_input_signature[0][0].shape, len(cf.variables) if hasattr(cf, "variables") else None)

# tf.function with a Python loop building a list and tf.stack
@tf.function
def powers(x):
    outs = []
    for k in range(4):
        outs.append(x ** k)
    return tf.stack(outs)


print(powers(tf.constant(2.0)))


# jit_compile and reduce_retracing flags accepted
@tf.function(jit_compile=True)
def jit_fn(x):
    return tf.reduce_sum(tf.sin(x) ** 2 + tf.cos(x) ** 2)


print(jit_fn(tf.constant([0.1, 0.2, 0.3])).numpy().round(5))


# Function retraces when a captured Python global changes? No: captured at trace time
g_scale = 2.0


@tf.function
def uses_global(x):
    return x * g_scale


print(uses_global(tf.constant(1.0)).numpy())
g_scale = 10.0
print(uses_global(tf.constant(1.0)).numpy())
print(uses_global(tf.constant([1.0])).numpy())  # new trace sees the new value

# Variables captured in closures keep working after assign
v = tf.Variable(1.0)


@tf.function
def read_v():
    return v * 1.0


print(read_v().numpy())
v.assign(7.0)
print(read_v().numpy())
tf.print("done", output_stream=out)
