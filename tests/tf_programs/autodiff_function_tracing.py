"""tf.function: tracing rules, retracing, input_signature, side effects, tf.print, variables."""
import sys

import numpy as np
import tensorflow as tf


def dense_layer(x, w, b):
    return tf.add(tf.matmul(x, w), b)


fast = tf.function(dense_layer)
x1 = tf.constant([[1.0, 2.0]])
y1 = tf.constant([[2.0], [3.0]])
b1 = tf.constant(4.0)
print(dense_layer(x1, y1, b1).numpy(), fast(x1, y1, b1).numpy())


def inner(x, y, b):
    x = tf.matmul(x, y)
    return x + b


@tf.function
def outer(x):
    y = tf.constant([[2.0], [3.0]])
    b = tf.constant(4.0)
    return inner(x, y, b)


print(outer(tf.constant([[1.0, 2.0]])).numpy())


# Tracing counts
@tf.function
def double(a):
    print("Tracing with", a)
    return a + a


print(double(tf.constant(1)))
print(double(tf.constant(1.1)))
print(double(tf.constant(2)))
print(double(tf.constant([1, 2])))
print(double(3))
print(double(3))
print(double(4))
print("tracing count", double.experimental_get_tracing_count())

conc = double.get_concrete_function(tf.constant(5))
print(conc(tf.constant(7)))
print(conc.structured_outputs.dtype, conc.structured_outputs.shape)
try:
    conc(tf.constant(1.5))
except Exception as e:
    print("concrete wrong dtype:", type(e).__name__)
sig = double.get_concrete_function(tf.TensorSpec(shape=None, dtype=tf.float32))
print(sig(tf.constant([[1.0, 2.0]])))


# input_signature
@tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
def next_collatz(x):
    print("Tracing with", x)
    return tf.where(x % 2 == 0, x // 2, 3 * x + 1)


print(next_collatz(tf.constant([1, 2])))
print(next_collatz(tf.constant([3, 4, 5])))
try:
    next_collatz(tf.constant([[1, 2], [3, 4]]))
except (TypeError, ValueError) as e:
    print("bad shape:", type(e).__name__)
try:
    next_collatz(tf.constant([1.0, 2.0]))
except (TypeError, ValueError) as e:
    print("bad dtype:", type(e).__name__)
print("collatz traces", next_collatz.experimental_get_tracing_count())


# reduce_retracing
@tf.function(reduce_retracing=True)
def g(x):
    print("Tracing g", x.shape)
    return x * 2


print(g(tf.constant([1])).numpy())
print(g(tf.constant([1, 2])).numpy())
print(g(tf.constant([1, 2, 3])).numpy())
print("g traces", g.experimental_get_tracing_count())


# Python side effects: print vs tf.print
@tf.function
def f(x):
    print("Traced with", x)
    tf.print("Executed with", x, output_stream=sys.stdout)


f(1)
f(1)
f(2)
f(tf.constant([1.5, 2.5]))
out = sys.stdout
tf.print("list", [1, 2], tf.constant([[1, 2], [3, 4]]), "end", sep="|", output_stream=out)
tf.print(tf.constant(3.25), tf.constant(True), tf.constant([0.5, 1e-7]), output_stream=out)
tf.print({"a": tf.constant(1)}, summarize=2, output_stream=out)
tf.print(tf.range(10), summarize=3, output_stream=out)
tf.print(tf.reshape(tf.range(24), [2, 3, 4]), summarize=1, output_stream=out)
tf.print("a", "b", end="!\n", output_stream=out)

# Python list append inside tf.function (happens only at trace)
external_list = []


@tf.function
def side_effect(x):
    external_list.append(x)
    return x + 1


side_effect(tf.constant(1))
side_effect(tf.constant(2))
print("external list len", len(external_list))


# Variables in tf.function
class Model(tf.Module):
    def __init__(self):
        super().__init__()
        self.v = tf.Variable(0.0)
        self.counter = 0

    @tf.function
    def __call__(self):
        if self.counter == 0:
            self.counter += 1
            self.v.assign_add(1.0)
        return self.v


m = Model()
for n in range(3):
    print(m().numpy())

v = tf.Variable(1.0)


@tf.function
def add_to_v(x):
    v.assign_add(x)
    return v.read_value()


print(add_to_v(tf.constant(2.0)).numpy(), add_to_v(tf.constant(3.0)).numpy(), v.numpy())


# creating variables on first call only
class Counter(tf.Module):
    def __init__(self):
        super().__init__()
        self.count = None

    @tf.function
    def __call__(self):
        if self.count is None:
            self.count = tf.Variable(0)
        return self.count.assign_add(1)


c = Counter()
print(c().numpy(), c().numpy(), c().numpy())


@tf.function
def make_var_each_call():
    w = tf.Variable(1.0)
    return w + 1.0


try:
    make_var_each_call()
    make_var_each_call()
    print("no error")
except ValueError as e:
    print("variable creation:", type(e).__name__)


# Python scalars vs tensors and hashing of objects
@tf.function
def power(a, n):
    return a ** n


print(power(tf.constant(2.0), 2), power(tf.constant(2.0), 3))
print("power traces", power.experimental_get_tracing_count())


@tf.function
def kw(x, scale=2.0, *, shift=tf.constant(1.0)):
    return x * scale + shift


print(kw(tf.constant(1.0)), kw(tf.constant(1.0), 3.0), kw(tf.constant(1.0), shift=tf.constant(5.0)))


# Structures in and out
@tf.function
def structured(d):
    return {"sum": d["a"] + d["b"], "pair": (d["a"], d["b"] * 2)}


out = structured({"a": tf.constant(1.0), "b": tf.constant(2.0)})
print(sorted(out.keys()), out["sum"], out["pair"][1])


# Gradients through tf.function
w = tf.Variable([[1.0, 2.0], [3.0, 4.0]])


@tf.function
def loss_fn(x):
    return tf.reduce_sum(tf.nn.relu(x @ w - 4.0) ** 2)


with tf.GradientTape() as tape:
    loss = loss_fn(tf.constant([[1.0, 1.0]]))
print(loss, tape.gradient(loss, w))


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(x @ w))
    g = tape.gradient(loss, w)
    w.assign_sub(0.01 * g)
    return loss


print(train_step(tf.constant([[1.0, 0.5]])).numpy(), train_step(tf.constant([[1.0, 0.5]])).numpy())
print(np.round(w.numpy(), 4))

# run_functions_eagerly
tf.config.run_functions_eagerly(True)


@tf.function
def eager_print(x):
    print("eager body", x.numpy())
    return x


eager_print(tf.constant(9))
tf.config.run_functions_eagerly(False)
print(tf.config.functions_run_eagerly())

# numpy() inside graph is an error
@tf.function
def bad(x):
    return x.numpy()


try:
    bad(tf.constant(1))
except (AttributeError, NotImplementedError) as e:
    print("numpy in graph:", type(e).__name__)

# Python function called on tensors in a graph: pretty_printed concrete function inputs
cf = loss_fn.get_concrete_function(tf.TensorSpec([None, 2], tf.float32))
print(cf.structured_input_signature)
print([s.shape for s in cf.inputs][:1], cf.output_dtypes if hasattr(cf, "output_dtypes") else None)
print(cf(tf.constant([[2.0, 2.0], [0.0, 1.0]])))
