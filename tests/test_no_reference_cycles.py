"""Hot paths must not create reference cycles: a cycle keeps tensors (e.g. a
step's gradients) alive until the garbage collector runs, which costs memory
and, through fresh allocations, time (it once made an MLP step 2x slower)."""

import gc

import numpy as np
import pytest

import tapeflow as tf


def _garbage_after(fn):
    fn()  # warm up: first calls may build caches
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        fn()
        gc.collect()
        found = [o for o in gc.garbage if isinstance(o, (tf.Tensor, np.ndarray))]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return found


def _mlp():
    rng = np.random.default_rng(0)
    ws = {"w1": tf.Variable(rng.standard_normal((8, 16)).astype(np.float32)),
          "b1": tf.Variable(np.zeros(16, np.float32)),
          "w2": tf.Variable(rng.standard_normal((16, 3)).astype(np.float32))}
    x = tf.constant(rng.standard_normal((4, 8)).astype(np.float32))
    y = tf.constant([0, 2, 1, 1])
    return ws, x, y


def _loss(ws, x, y):
    h = tf.nn.relu(x @ ws["w1"] + ws["b1"])
    logits = h @ ws["w2"]
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))


def test_eager_training_step_makes_no_cycles():
    ws, x, y = _mlp()
    opt = tf.keras.optimizers.Adam(0.01)

    def step():
        with tf.GradientTape() as tape:
            loss = _loss(ws, x, y)
        grads = tape.gradient(loss, ws)
        opt.apply_gradients(zip(grads.values(), ws.values()))
        with tf.GradientTape(persistent=True) as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                z = tf.reduce_sum(tf.tanh(x) ** 2)
            g = t1.gradient(z, x)
        t2.gradient(g, x)
        del t2

    assert _garbage_after(step) == []


def test_function_step_makes_no_cycles():
    ws, x, y = _mlp()

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = _loss(ws, x, y)
        grads = tape.gradient(loss, list(ws.values()))
        for v, g in zip(ws.values(), grads):
            v.assign_sub(0.1 * g)
        return loss

    assert _garbage_after(lambda: step(x, y)) == []


@pytest.mark.parametrize("fit", [False, True])
def test_keras_steps_make_no_cycles(fit):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((32, 4)).astype(np.float32)
    ys = rng.integers(0, 3, 32)
    model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(3)])
    model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    if fit:
        assert _garbage_after(lambda: model.fit(xs, ys, epochs=1, batch_size=16, verbose=0)) == []
    else:
        assert _garbage_after(lambda: model.train_on_batch(xs, ys)) == []
