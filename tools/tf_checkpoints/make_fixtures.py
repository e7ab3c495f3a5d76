"""Writes the TF-format checkpoint fixtures of tests/test_tf_checkpoint_format.py with real TensorFlow.

Run with TF's interpreter (TF 2.21 / Keras 3.15 made the committed files):

    /opt/tfvenv/bin/python tools/tf_checkpoints/make_fixtures.py

Each fixture is a folder under tests/fixtures/tf_checkpoints/ holding what ``tf.train.Checkpoint.save`` wrote
(``checkpoint``, ``ckpt-1.index``, ``ckpt-1.data-00000-of-00001``) and ``values.npz``: every stored tensor by
its checkpoint key (``/`` written as ``|``), read back with ``tf.train.load_checkpoint``, so the tests need no TF.
"""

import os
import shutil

import numpy as np
import tensorflow as tf
import keras

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures", "tf_checkpoints")


def dump_values(prefix: str, folder: str) -> None:
    reader = tf.train.load_checkpoint(prefix)
    values = {}
    for key in reader.get_variable_to_shape_map():
        value = reader.get_tensor(key)
        if key == "_CHECKPOINTABLE_OBJECT_GRAPH":
            value = np.frombuffer(value, np.uint8)
        value = np.asarray(value)
        if value.dtype == object:  # strings: as a fixed-width bytes array (no pickles in the fixture)
            value = value.astype(bytes)
        values[key.replace("/", "|")] = value
    np.savez_compressed(os.path.join(folder, "values.npz"), **values)


def fresh(name: str) -> str:
    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    return folder


class Net(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[1.5, -2.0, 3.25], [4.0, 5.5, -6.0]], name="w")
        self.b = tf.Variable([0.5, -0.5, 0.0], name="bias")
        self.steps = tf.Variable(np.int64(7))
        self.flags = tf.Variable([True, False, True])
        self.small = tf.Variable(np.array([-3, 0, 9], np.int8))
        self.half = tf.Variable(np.array([0.5, 1.25], np.float16))
        self.wide = tf.Variable(np.array([1e-300, 2.5], np.float64))
        self.z = tf.Variable(np.array([1 + 2j, -3j], np.complex64))
        self.words = tf.Variable(["hello", "", "checkpoint ✓"])
        self.layers = [tf.Variable(np.arange(4, dtype=np.int32)), tf.Variable(2.0)]
        self.table = {"alpha": tf.Variable(np.ones((2, 2), np.float32)), "scope/b.c": tf.Variable(-1.0)}


def module_fixture() -> None:
    folder = fresh("module")
    net = Net()
    ckpt = tf.train.Checkpoint(net=net)
    path = ckpt.save(os.path.join(folder, "ckpt"))
    dump_values(path, folder)


def keras_fixture() -> None:
    folder = fresh("keras_adam")
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), keras.layers.BatchNormalization(),
                              keras.layers.Dense(2)])
    model.set_weights([np.linspace(-1, 1, w.size, dtype=np.float32).reshape(w.shape) + i
                       for i, w in enumerate(model.get_weights())])
    opt = keras.optimizers.Adam(0.01)
    x = np.linspace(-2, 2, 15, dtype=np.float32).reshape(5, 3)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x, training=True) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
    path = ckpt.save(os.path.join(folder, "ckpt"))
    dump_values(path, folder)


def containers_fixture() -> None:
    folder = fresh("containers")
    ckpt = tf.train.Checkpoint(
        vs=[tf.Variable(1.0), tf.Variable([2.0, 3.0])],
        d={"b": tf.Variable(np.int32(4)), "a": [tf.Variable(5.0)]},
        step=tf.Variable(np.int64(3)))
    path = ckpt.write(os.path.join(folder, "ckpt-1"))
    dump_values(path, folder)


if __name__ == "__main__":
    module_fixture()
    keras_fixture()
    containers_fixture()
    print("written under", os.path.abspath(OUT))
