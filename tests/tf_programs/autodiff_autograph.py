"""tf.function + AutoGraph: if/for/while on tensors, break/continue, TensorArray, tf.cond/while_loop,
gradients through control flow, debugging helpers."""
import sys

import numpy as np
import tensorflow as tf

out = sys.stdout


@tf.function
def simple_relu(x):
    if tf.greater(x, 0):
        return x
    else:
        return 0


print(simple_relu(tf.constant(1)).numpy(), simple_relu(tf.constant(-1)).numpy())


@tf.function
def fizzbuzz(n):
    for i in tf.range(1, n + 1):
        if i % 15 == 0:
            tf.print("FizzBuzz", output_stream=out)
        elif i % 3 == 0:
            tf.print("Fizz", output_stream=out)
        elif i % 5 == 0:
            tf.print("Buzz", output_stream=out)
        else:
            tf.print(i, output_stream=out)


fizzbuzz(tf.constant(15))


@tf.function
def sum_even(items):
    s = 0
    for c in items:
        if c % 2 > 0:
            continue
        s += c
    return s


print(sum_even(tf.constant([10, 12, 15, 20])))


@tf.function
def first_above(x, thresh):
    idx = tf.constant(-1)
    for i in tf.range(tf.shape(x)[0]):
        if x[i] > thresh:
            idx = i
            break
    return idx


print(first_above(tf.constant([0.1, 0.5, 0.9, 2.0]), 0.7).numpy())


@tf.function
def collatz_steps(n):
    steps = 0
    while n > 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


print(collatz_steps(tf.constant(27)).numpy())


@tf.function
def while_float(x):
    while tf.reduce_sum(x) > 1:
        x = tf.tanh(x)
    return x


print(np.round(while_float(tf.constant([5.0, 5.0])).numpy(), 5))


# Python loop over Python range is unrolled; over tf.range is a while_loop
@tf.function
def unrolled(x):
    for _ in range(3):
        x = x * 2
    return x


print(unrolled(tf.constant(1.5)))


# TensorArray accumulation
@tf.function
def cumulative(x):
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    total = tf.constant(0.0)
    for i in tf.range(tf.shape(x)[0]):
        total += x[i]
        ta = ta.write(i, total)
    return ta.stack()


print(cumulative(tf.constant([1.0, 2.0, 3.0, 4.0])))


# RNN-like loop with TensorArray and gradients
w = tf.Variable([[0.5, -0.2], [0.1, 0.3]])


@tf.function
def rnn(inputs, state):
    outputs = tf.TensorArray(tf.float32, size=inputs.shape[0])
    for t in tf.range(inputs.shape[0]):
        state = tf.tanh(tf.linalg.matvec(w, state) + inputs[t])
        outputs = outputs.write(t, state)
    return outputs.stack(), state


seq = tf.constant([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
with tf.GradientTape() as tape:
    outs, last = rnn(seq, tf.zeros([2]))
    loss = tf.reduce_sum(outs ** 2)
print(outs.shape, np.round(last.numpy(), 5))
print(np.round(tape.gradient(loss, w).numpy(), 5))

# TensorArray eagerly
ta = tf.TensorArray(tf.int32, size=3)
ta = ta.write(0, 10).write(1, 20).write(2, 30)
print(ta.stack(), ta.read(1), ta.size())
ta2 = tf.TensorArray(tf.float32, size=2, element_shape=[2])
ta2 = ta2.unstack(tf.constant([[1.0, 2.0], [3.0, 4.0]]))
print(ta2.stack(), ta2.read(1))

# tf.cond and tf.while_loop directly, with gradients
x = tf.Variable(2.0)
with tf.GradientTape() as tape:
    y = tf.cond(x > 1.0, lambda: x ** 3, lambda: x ** 2)
print(y, tape.gradient(y, x))

i0 = tf.constant(0)
v0 = tf.constant(1.0)
with tf.GradientTape() as tape:
    tape.watch(v0)
    _, vn = tf.while_loop(lambda i, v: i < 4, lambda i, v: (i + 1, v * 1.5), [i0, v0])
print(vn, tape.gradient(vn, v0))

res = tf.while_loop(lambda i: i < 10, lambda i: (i + 3,), [tf.constant(0)])
print(res)
res = tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + tf.cast(i, tf.float32)), (0, 0.0))
print(res)

# switch_case
def branch(k):
    return lambda: tf.constant(k * 10)


print(tf.switch_case(tf.constant(1), [branch(0), branch(1), branch(2)]))
print(tf.switch_case(tf.constant(7), [branch(0), branch(1)], default=lambda: tf.constant(-1)))


# Gradient through an AutoGraph while loop inside tf.function
@tf.function
def power_loop(x, n):
    r = tf.ones_like(x)
    for _ in tf.range(n):
        r = r * x
    return r


x = tf.constant(1.5)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = power_loop(x, tf.constant(4))
print(y, tape.gradient(y, x))


# Data-dependent conditional on tensor inside tf.function with tape inside
@tf.function
def grad_of_piecewise(x):
    with tf.GradientTape() as t:
        t.watch(x)
        if tf.reduce_sum(x) > 0:
            y = tf.reduce_sum(x ** 2)
        else:
            y = tf.reduce_sum(-x)
    return t.gradient(y, x)


print(grad_of_piecewise(tf.constant([1.0, 2.0])), grad_of_piecewise(tf.constant([-1.0, -2.0])))


# Python-side control flow on Python values at trace time
@tf.function
def py_branch(x, training):
    if training:
        return x * 0.5
    return x


print(py_branch(tf.constant(4.0), True), py_branch(tf.constant(4.0), False))
print("py_branch traces", py_branch.experimental_get_tracing_count())


# Variables updated in a loop
counter = tf.Variable(0)


@tf.function
def count_to(n):
    for i in tf.range(n):
        counter.assign_add(i)
    return counter.read_value()


print(count_to(tf.constant(5)).numpy(), counter.numpy())

# tf.autograph.to_code exists, do_not_convert
print(callable(tf.autograph.experimental.do_not_convert))


# Undefined variable in one branch -> error
@tf.function
def bad_branch(x):
    if x > 0:
        y = x
    return y


try:
    bad_branch(tf.constant(1.0))
except Exception as e:
    print("undefined in branch:", type(e).__name__)


# Iterating a dataset-like python list of tensors in a function
@tf.function
def stack_sum(xs):
    acc = tf.zeros([2])
    for t in xs:
        acc += t
    return acc


print(stack_sum([tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])]))


# tf.range in a for loop with len of tensor
@tf.function
def reverse(x):
    n = tf.shape(x)[0]
    ta = tf.TensorArray(x.dtype, size=n)
    for i in tf.range(n):
        ta = ta.write(n - 1 - i, x[i])
    return ta.stack()


print(reverse(tf.constant([1, 2, 3, 4])))

# tf.debugging inside functions
@tf.function
def checked(x):
    tf.debugging.assert_positive(x, message="must be positive")
    return tf.sqrt(x)


print(checked(tf.constant([4.0, 9.0])))
try:
    checked(tf.constant([-1.0]))
except tf.errors.InvalidArgumentError as e:
    print("assert_positive:", type(e).__name__)
try:
    tf.debugging.check_numerics(tf.constant([1.0, np.nan]), "found nan")
except tf.errors.InvalidArgumentError as e:
    print("check_numerics:", type(e).__name__)


# -- trace-time Python semantics --------------------------------------------
@tf.function
def list_in_loop(n):
    acc = []
    for i in tf.range(n):
        acc.append(i)
    return acc


try:
    list_in_loop(tf.constant(3))
except Exception as e:
    print("python list append in tf loop:", type(e).__name__)

it = iter([1, 2, 3])


@tf.function
def buggy_next(x):
    return x + next(it)


print(buggy_next(tf.constant(0)).numpy(), buggy_next(tf.constant(0)).numpy())


class Lazy(tf.Module):
    def __init__(self):
        super().__init__()
        self.v = None

    @tf.function
    def __call__(self, x):
        if self.v is None:
            self.v = tf.Variable(tf.ones_like(x))
        return self.v * x


lz = Lazy()
print(lz(tf.constant([1.0, 2.0])).numpy(), lz(tf.constant([3.0, 4.0])).numpy(), len(lz.trainable_variables))

v = tf.Variable(1.0)


@tf.function
def order():
    a = v.read_value()
    v.assign(5.0)
    b = v.read_value()
    v.assign_add(1.0)
    return a, b, v.read_value()


print([t.numpy() for t in order()])


@tf.function
def early_return(x):
    if x > 0:
        return x * 2
    return x * -1


print(early_return(tf.constant(3.0)).numpy(), early_return(tf.constant(-3.0)).numpy())


@tf.function
def nested_loops(n):
    total = 0
    for i in tf.range(n):
        for j in tf.range(i):
            total += j
    return total


print(nested_loops(tf.constant(5)).numpy())


@tf.function
def while_break(n):
    i = 0
    while i < n:
        i += 1
        if i > 100:
            break
    return i


print(while_break(tf.constant(7)).numpy())


@tf.function
def for_over_tensor_rows(m):
    s = tf.zeros([2])
    for row in m:
        s += row
    return s


print(for_over_tensor_rows(tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).numpy())


@tf.function
def ternary(x):
    return x * 2 if x > 0 else x * 3


print(ternary(tf.constant(2)).numpy(), ternary(tf.constant(-2)).numpy())


@tf.function
def enumerate_zip(a, b):
    s = 0
    for i, (p, q) in enumerate(zip([1, 2], [3, 4])):
        s += i * p * q
    return a + s


print(enumerate_zip(tf.constant(1), None).numpy())


# None before a tensor loop, set in the body (the loop must run at least once)
@tf.function
def none_to_tensor(n):
    y = None
    for i in tf.range(n):
        y = tf.cast(i, tf.float32) * tf.ones([2])
    return y


print(none_to_tensor(tf.constant(3)))
try:
    none_to_tensor(tf.constant(0))
except tf.errors.InvalidArgumentError as e:
    print("zero iterations:", type(e).__name__, "loop must iterate at least once" in str(e))


@tf.function
def loop_options(x):
    for _ in tf.range(3):
        tf.autograph.experimental.set_loop_options(shape_invariants=[(x, tf.TensorShape([None]))])
        x = tf.concat([x, x], 0)
    return x


print(loop_options(tf.constant([1.0])))
