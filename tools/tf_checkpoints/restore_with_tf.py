"""By hand, with real TF: restores what tools/tf_checkpoints/write_with_tapeflow.py wrote into the same objects
built in TF (assert_consumed), writes TF's own checkpoint of them and compares every key and value."""

import os
import sys
import numpy as np
import tensorflow as tf
import keras

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import Net

D = sys.argv[1] if len(sys.argv) > 1 else "/tmp/tf_interop"


def compare(tapeflow_prefix, ckpt, tag):
    p = ckpt.write(f"{D}/tf_{tag}/c")
    a, b = tf.train.load_checkpoint(tapeflow_prefix), tf.train.load_checkpoint(p)
    ka = set(a.get_variable_to_shape_map())
    kb = set(b.get_variable_to_shape_map())
    assert ka == kb, (tag, ka ^ kb)
    n = 0
    for k in ka - {"_CHECKPOINTABLE_OBJECT_GRAPH"}:
        x, y = a.get_tensor(k), b.get_tensor(k)
        assert np.array_equal(np.asarray(x), np.asarray(y)), (tag, k, x, y)
        n += 1
    print(tag, "OK:", n, "values equal, keys identical")


# 1. tf.Module
net = Net()
for v in net.variables:
    v.assign(tf.zeros_like(v) if v.dtype != tf.string else tf.fill(tf.shape(v), ""))
ck = tf.train.Checkpoint(net=net)
ck.restore(f"{D}/tapeflow_module/ckpt-1").assert_consumed()
print("module words:", net.words.numpy(), "w:", net.w.numpy().tolist())
compare(f"{D}/tapeflow_module/ckpt-1", ck, "module")
# 2. Keras Sequential + Adam after a step
model = keras.Sequential(
    [keras.Input((3,)), keras.layers.Dense(4), keras.layers.BatchNormalization(), keras.layers.Dense(2)]
)
opt = keras.optimizers.Adam(0.01)
opt.build(model.trainable_variables)
ck = tf.train.Checkpoint(model=model, optimizer=opt)
ck.restore(f"{D}/tapeflow_keras/ckpt-1").assert_consumed()
print("keras iterations:", int(opt.iterations.numpy()), "kernel[0]:", model.layers[0].kernel.numpy()[0].tolist())
compare(f"{D}/tapeflow_keras/ckpt-1", ck, "keras")
# the restored model predicts what tapeflow's did
x = np.linspace(-2, 2, 15, dtype=np.float32).reshape(5, 3)
want = np.load(f"{D}/tapeflow_keras/predict.npy")
print("keras predict max |diff|:", float(np.abs(model(x, training=False).numpy() - want).max()))
# 3. lists / dicts of variables
ck = tf.train.Checkpoint(
    vs=[tf.Variable(0.0), tf.Variable([0.0, 0.0])],
    d={"b": tf.Variable(np.int32(0)), "a": [tf.Variable(0.0)]},
    step=tf.Variable(np.int64(0)),
)
ck.read(f"{D}/tapeflow_containers/ckpt-1").assert_consumed()
print("containers:", ck.vs[1].numpy().tolist(), ck.d["a"][0].numpy(), int(ck.step.numpy()))
compare(f"{D}/tapeflow_containers/ckpt-1", ck, "containers")
# 4. deferred: TF restores into an unbuilt Sequential and an unbuilt optimizer, then builds them
model = keras.Sequential([keras.layers.Dense(4), keras.layers.BatchNormalization(), keras.layers.Dense(2)])
opt = keras.optimizers.Adam(0.01)
st = tf.train.Checkpoint(model=model, optimizer=opt).restore(f"{D}/tapeflow_keras/ckpt-1")
model(x)
opt.build(model.trainable_variables)
print(
    "deferred keras predict max |diff|:",
    float(np.abs(model(x, training=False).numpy() - want).max()),
    "iterations",
    int(opt.iterations.numpy()),
)
# 5. CheckpointManager directory: latest_checkpoint reads tapeflow's state file
print(
    "latest:",
    tf.train.latest_checkpoint(f"{D}/tapeflow_manager"),
    [k for k, _ in tf.train.list_variables(f"{D}/tapeflow_manager")],
)
# 6. many variables: a multi-block index
vs = [tf.Variable(0.0) for _ in range(6000)]
tf.train.Checkpoint(vs=vs).read(f"{D}/tapeflow_many/ckpt-1").assert_consumed()
assert [float(v.numpy()) for v in vs] == [float(i) for i in range(6000)]
print("many: 6000 variables restored")
