"""
# What TF says when things go wrong (common StackOverflow questions), and shape handling
"""
import numpy as np
import tensorflow as tf


def show(fn):
    try:
        r = fn()
        print("ok", r)
    except Exception as e:  # noqa: BLE001
        print(type(e).__name__)


show(lambda: tf.constant([1, 2]) + tf.constant([1.0, 2.0]))
show(lambda: tf.matmul(tf.ones((2, 3)), tf.ones((2, 3))))
show(lambda: tf.reshape(tf.range(6), (4, -1)))
show(lambda: tf.constant([1.0]) + np.array([1.0]))
show(lambda: tf.Variable(1.0).assign(tf.constant([1.0, 2.0])))
show(lambda: tf.concat([tf.ones((2, 2)), tf.ones((3, 3))], axis=0))
show(lambda: tf.gather(tf.range(3), 5))
show(lambda: tf.cast("1", tf.float32))
show(lambda: tf.strings.to_number("abc"))
show(lambda: tf.constant([[1, 2], [3]]))
show(lambda: tf.squeeze(tf.ones((2, 3)), axis=0))
show(lambda: tf.one_hot([1, 2], 3, dtype=tf.float32) * tf.ones((3, 3)))
"""
Keras errors.
"""
m = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
show(lambda: m(tf.ones((3, 5))))
show(lambda: m.fit(np.ones((4, 4)), np.ones((4, 2)), verbose=0))
m.compile("adam", "mse")
show(lambda: m.fit(np.ones((4, 4)), np.ones((5, 2)), verbose=0))
show(lambda: m.fit(np.ones((4, 4)), np.ones((4, 3)), verbose=0))
show(lambda: tf.keras.layers.Dense(2)(tf.ones((3,))))
show(lambda: tf.keras.losses.get("nope"))
show(lambda: tf.keras.activations.get("nope"))
show(lambda: tf.keras.optimizers.get("nope"))
show(lambda: tf.keras.Sequential([tf.keras.layers.Dense(2)]).summary())
show(lambda: m.evaluate(np.ones((4, 4)), np.ones((4, 2)), verbose=0))
show(lambda: tf.keras.layers.Conv2D(3, 3)(tf.ones((1, 5, 5))))
"""
tf.function errors and retracing.
"""
@tf.function
def f(x):
    if x > 0:
        return x
    return -x


print(f(tf.constant(2.0)).numpy(), f(tf.constant(-3.0)).numpy())
print(f.experimental_get_tracing_count())


@tf.function
def g(x):
    return x * 2


for i in range(3):
    g(i)
print(g.experimental_get_tracing_count())
g(tf.constant(1))
g(tf.constant(2))
g(tf.constant(1.0))
print(g.experimental_get_tracing_count())
cf = g.get_concrete_function(tf.TensorSpec([None], tf.float32))
print(cf.structured_input_signature)
print(cf.structured_outputs)
show(lambda: cf(tf.constant([1, 2])))


@tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
def h(x):
    return tf.reduce_sum(x)


show(lambda: h(tf.constant([1.0, 2.0, 3.0])))
show(lambda: h(tf.constant([1.0, 2.0])).numpy())
v_holder = []


@tf.function
def make_var():
    v_holder.append(tf.Variable(1.0))
    return v_holder[-1].read_value()


show(lambda: (make_var(), make_var())[0].numpy())
"""
Shapes: dynamic and static.
"""
@tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
def shapes(x):
    print("static", x.shape, x.shape[0], x.shape.as_list())
    tf.print("dynamic", tf.shape(x))
    return tf.reshape(x, [-1])


print(shapes(tf.ones((2, 3))))


@tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
def returns_shape(x):
    print("traced", x.shape)
    return tf.reshape(x, [-1]).shape


show(lambda: returns_shape(tf.ones((2, 3))))
print(tf.TensorShape([None, 3]).is_compatible_with([5, 3]), tf.TensorShape([1, 2]).merge_with([None, 2]))
print(tf.ones((2, 1, 3)).shape.rank, tf.rank(tf.ones((2, 1, 3))).numpy(), tf.size(tf.ones((2, 3))).numpy())
print(tf.expand_dims(tf.ones((2,)), -1).shape, tf.squeeze(tf.ones((1, 2, 1))).shape)
print(tf.broadcast_to(tf.constant([1, 2]), (2, 2)).numpy().tolist(), tf.broadcast_static_shape(
    tf.TensorShape([1, 3]), tf.TensorShape([2, 1])))
show(lambda: tf.TensorShape([1, 2]).merge_with([3, 2]))
print(tf.TensorShape(None).rank, tf.TensorShape([None]).as_list())
show(lambda: tf.TensorShape(None).as_list())
"""
Gradient edge cases.
"""
x = tf.Variable(2.0)
with tf.GradientTape() as tape:
    y = tf.cast(x, tf.int32) * 2
print(tape.gradient(y, x))
with tf.GradientTape() as tape:
    y = x * 3
print(tape.gradient(y, x).numpy())
show(lambda: tape.gradient(y, x))
with tf.GradientTape() as tape:
    z = tf.constant(3.0) ** 2
print(tape.gradient(z, tf.constant(3.0)))
with tf.GradientTape() as tape:
    a = tf.Variable([1.0, 2.0])
    b = a * a
print(tape.gradient(b, a))
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.gather(a, [0, 0, 1]))
gr = tape.gradient(loss, a)
print(type(gr).__name__, tf.convert_to_tensor(gr).numpy())
with tf.GradientTape() as tape:
    s = tf.sqrt(tf.Variable(0.0))
show(lambda: tape.gradient(s, tape.watched_variables()[0]).numpy())
