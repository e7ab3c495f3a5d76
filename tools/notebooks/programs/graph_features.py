"""
# tf.function and AutoGraph: loops, TensorArray, while_loop, cond, custom gradients, tf.Module and SavedModel
"""
import tensorflow as tf


@tf.function
def collatz(n):
    steps = tf.constant(0)
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


print(collatz(tf.constant(27)).numpy(), collatz(tf.constant(1)).numpy())


@tf.function
def running_sums(x):
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    total = 0.0
    for i in tf.range(tf.shape(x)[0]):
        total += x[i]
        ta = ta.write(i, total)
    return ta.stack()


print(running_sums(tf.constant([1.0, 2.0, 3.0, 4.0])).numpy())
i, acc = tf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * 2), (tf.constant(0), tf.constant(1)))
print(i.numpy(), acc.numpy())
print(tf.cond(tf.constant(True), lambda: tf.constant("yes"), lambda: tf.constant("no")).numpy())
print(repr(tf.case([(tf.constant(False), lambda: 1), (tf.constant(True), lambda: 2)], default=lambda: 3)))
print(repr(tf.switch_case(tf.constant(1), [lambda: 10, lambda: 20, lambda: 30])))
print(repr(tf.cond(tf.constant(True), lambda: 1, lambda: 2)))
print(tf.map_fn(lambda v: v * v, tf.constant([1, 2, 3])).numpy())
print(tf.foldl(lambda a, v: a + v, tf.constant([1, 2, 3])).numpy())
print(tf.scan(lambda a, v: a + v, tf.constant([1, 2, 3, 4])).numpy())
"""
Python side effects and tracing.
"""
trace_log = []


@tf.function
def traced(x, scale=2):
    trace_log.append(x.shape.as_list() if hasattr(x, "shape") else x)
    tf.print("running with", x)
    return x * scale


traced(tf.constant([1.0]))
traced(tf.constant([2.0]))
traced(tf.constant([1.0, 2.0]))
traced(tf.constant([1.0]), scale=3)
print(trace_log, traced.experimental_get_tracing_count())
relaxed = tf.function(lambda x: x + 1, reduce_retracing=True)
for n in range(1, 5):
    relaxed(tf.ones((n,)))
print(relaxed.experimental_get_tracing_count())
print(tf.autograph.experimental.do_not_convert(lambda x: x)(3))
"""
Custom gradients.
"""
@tf.custom_gradient
def clip_grad(x):
    def grad(dy):
        return tf.clip_by_value(dy, -0.5, 0.5)
    return tf.identity(x), grad


@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))
    return tf.math.log(1 + e), grad


x = tf.Variable([1.0, -3.0, 100.0])
with tf.GradientTape(persistent=True) as tape:
    y1 = tf.reduce_sum(clip_grad(x) * 3.0)
    y2 = tf.reduce_sum(log1pexp(x))
print(tape.gradient(y1, x).numpy(), tape.gradient(y2, x).numpy())
with tf.GradientTape() as t2:
    with tf.GradientTape() as t1:
        z = x * x * x
    g = t1.gradient(z, x)
print(g.numpy(), t2.gradient(g, x).numpy())
print(tf.stop_gradient(x).numpy(), tf.gradients is not None)
acc = tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0, 0.0]))
with acc:
    w = tf.reduce_sum(x ** 2)
print(acc.jvp(w).numpy())
"""
tf.Module, variables, checkpoint and SavedModel with a signature.
"""
class Scaler(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(tf.ones((3, 2)), name="w")
        self.b = tf.Variable(tf.zeros((2,)), name="b")
        self.count = tf.Variable(0, trainable=False)

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def __call__(self, x):
        self.count.assign_add(1)
        return tf.matmul(x, self.w) + self.b


s = Scaler(name="scaler")
print(s(tf.ones((2, 3))).numpy().tolist(), int(s.count))
print([v.name for v in s.trainable_variables], [v.name for v in s.variables])
print(s.name, s.name_scope.name, len(s.submodules))
tf.saved_model.save(s, "scaler_model")
loaded = tf.saved_model.load("scaler_model")
print(loaded(tf.ones((1, 3))).numpy().tolist())
print(list(loaded.signatures.keys()))
sig = loaded.signatures["serving_default"]
print(sig.structured_outputs)
print({k: v.numpy().tolist() for k, v in sig(x=tf.ones((1, 3))).items()})
print(int(loaded.count))
ck = tf.train.Checkpoint(model=s)
p = ck.write("scaler_ckpt")
s.w.assign(tf.zeros((3, 2)))
ck.read(p).assert_consumed()
print(s.w.numpy().sum())
"""
Variables: assign, scatter, aggregation, dtype rules.
"""
v = tf.Variable([[1, 2], [3, 4]], dtype=tf.float32)
v.assign_add(tf.ones((2, 2)))
v[0, 1].assign(9.0)
print(v.numpy().tolist())
v.scatter_nd_update([[1, 0]], [7.0])
print(v.numpy().tolist(), v.shape, v.dtype, v.trainable)
print(tf.Variable(1).dtype, tf.Variable(1.0, dtype=tf.float64).dtype, tf.Variable([True]).dtype)
sv = tf.Variable(tf.zeros((2,)), shape=tf.TensorShape(None))
sv.assign([1.0, 2.0, 3.0])
print(sv.shape, sv.numpy())
try:
    tf.Variable(tf.zeros((2,))).assign([1.0, 2.0, 3.0])
except Exception as e:  # noqa: BLE001
    print(type(e).__name__)
print(repr(tf.Variable([1.5, 2.0], name="rv")))
