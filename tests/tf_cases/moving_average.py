"""Cases of tf.train.ExponentialMovingAverage (shadow values after updates, num_updates, float64, names, inside
tf.function, TF's errors), each ``fn(tf)``; recorded from real TF by tools/tf_api/record.py, replayed by
tests/test_tf_cases.py."""

import numpy as np

from tests.tf_cases import raises as _err


def _steps(decay=0.9, num_updates=None, dtype="float32", steps=(2.0, -1.0, 0.5)):
    def case(tf):
        v = tf.Variable(np.array([1.0, 3.0], dtype), name="w")
        ema = tf.train.ExponentialMovingAverage(decay, num_updates=num_updates)
        out = [repr(ema.apply([v]))]
        for x in steps:
            v.assign(np.array([x, -x], dtype))
            ema.apply([v])
            out.append(tf.convert_to_tensor(ema.average(v)))
        # (the shadow's name: TF uniquifies it across the process, w/ExponentialMovingAverage_1 ...)
        return out + [repr((ema.name, ema.average_name(v).startswith("w/ExponentialMovingAverage"),
                            ema.average(v).trainable))]
    return case


def _in_function(tf):
    v = tf.Variable([1.0, 2.0])
    ema = tf.train.ExponentialMovingAverage(0.5)
    ema.apply([v])

    @tf.function
    def step(x):
        v.assign(x)
        ema.apply([v])
        return ema.average(v).read_value()

    return [step(tf.constant([3.0, 3.0])), step(tf.constant([0.0, 1.0]))]


CASES = {
    "decay_0_9": _steps(),
    "decay_0_99_float64": _steps(0.99, dtype="float64"),
    "num_updates": _steps(0.999, num_updates=3),
    "num_updates_tensor": lambda tf: _steps(0.999, num_updates=tf.constant(100))(tf),
    "average_before_apply": lambda tf: repr((tf.train.ExponentialMovingAverage(0.9).average(tf.Variable(1.0, name="u")),
                                             tf.train.ExponentialMovingAverage(0.9, name="ema").average_name(
                                                 tf.Variable(1.0, name="u")))),
    "in_function": _in_function,
    "tensor_input": _err(lambda tf: tf.train.ExponentialMovingAverage(0.9).apply([tf.constant(1.0)])),
    "int_variable": _err(lambda tf: tf.train.ExponentialMovingAverage(0.9).apply([tf.Variable(1, name="i")])),
}
